//! Post-steps that repair connectivity after the smoothing passes: `keep-largest`,
//! `remove-small N` and NetHack's `bridge` (join).
//!
//! `bridge` follows the design of NetHack's `join_map` (see `docs/variants.md`):
//! 8-connected FLOOR regions; regions of 1..3 cells become WALL; the remaining regions, ordered by
//! discovery in a column-major scan (x outer, y inner: the order of each region's first cell in
//! that scan), are joined pairwise, region i with region i + 1, by a 4-connected corridor dug
//! between a random cell of each. NetHack's own corridor digger and RNG are out of scope; ours
//! digs an L-shaped corridor (along the first cell's row, then along the second cell's column),
//! which is a shortest 4-connected path and stays inside the grid's bounding box of the two cells.
//!
//! RNG use (part of the seed's stream, so it must stay stable): one `next_u32` per kept region,
//! drawn in row-major discovery order (the order the regions are labelled in), before sorting.

use std::fmt;
use std::str::FromStr;

use crate::grid::Grid;

use crate::simd::Isa;

use super::components::Flood;
use super::{Connectivity, MeasureError};

/// A connectivity repair applied after the passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PostStep {
    /// Every FLOOR component but the largest becomes WALL (ties: the first in row-major order).
    KeepLargest,
    /// FLOOR components with fewer than N cells become WALL.
    RemoveSmall(u32),
    /// NetHack's join: drop 8-connected regions of 1..3 cells, dig corridors between the rest.
    Bridge,
}

impl fmt::Display for PostStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostStep::KeepLargest => f.write_str("keep-largest"),
            PostStep::RemoveSmall(n) => write!(f, "remove-small {n}"),
            PostStep::Bridge => f.write_str("bridge"),
        }
    }
}

impl FromStr for PostStep {
    type Err = MeasureError;
    /// `keep-largest`, `remove-small N`, `remove-small:N`, `bridge`.
    fn from_str(s: &str) -> Result<PostStep, MeasureError> {
        let t = s.trim();
        match t {
            "keep-largest" => return Ok(PostStep::KeepLargest),
            "bridge" => return Ok(PostStep::Bridge),
            _ => {}
        }
        if let Some(rest) = t.strip_prefix("remove-small")
            && let Some(arg) = rest
                .strip_prefix(':')
                .or_else(|| rest.starts_with(char::is_whitespace).then_some(rest))
        {
            let arg = arg.trim();
            return arg.parse::<u32>().map(PostStep::RemoveSmall).map_err(|_| {
                MeasureError::BadPostStepCount {
                    step: t.to_string(),
                    value: arg.to_string(),
                }
            });
        }
        Err(MeasureError::BadPostStep(t.to_string()))
    }
}

/// A kept region of `bridge`: its column-major discovery key and the random cell chosen in it.
#[derive(Debug, Clone, Copy)]
struct Region {
    key: (usize, usize),
    cell: (usize, usize),
}

/// Scratch reused across post-steps.
#[derive(Debug, Default, Clone)]
pub(crate) struct PostScratch {
    /// Seed cell and size of each component, in labelling order.
    comps: Vec<((usize, usize), u32)>,
    /// Cells to keep as FLOOR.
    keep: Vec<u64>,
    /// Cells claimed by the components labelled so far.
    prev: Vec<u64>,
    regions: Vec<Region>,
}

/// Label all components of the loaded grid, recording each one's first cell and size.
#[inline(always)]
fn label<I: Isa>(flood: &mut Flood, scratch: &mut PostScratch, conn: Connectivity) {
    scratch.comps.clear();
    let mut cursor = (0, 0);
    while let Some(cell) = flood.next_unclaimed(&mut cursor) {
        let n = flood.flood_from_on::<I>(cell.0, cell.1, conn).size;
        scratch.comps.push((cell, n));
    }
}

/// Write `keep` (a plane of FLOOR cells) back into `g`: every other cell becomes WALL.
#[inline(always)]
fn write_back(flood: &Flood, keep: &[u64], g: &mut Grid) {
    let lay = flood.lay;
    let mask = lay.last_mask();
    for y in 0..lay.rows {
        let o = lay.off(y as isize);
        let row = g.row_mut(y);
        for (i, w) in row.iter_mut().enumerate() {
            *w = !keep[o + i];
        }
        row[lay.wpr - 1] &= mask;
    }
}

pub(crate) fn apply<R: rand_core::Rng + ?Sized>(
    flood: &mut Flood,
    scratch: &mut PostScratch,
    g: &mut Grid,
    step: PostStep,
    conn: Connectivity,
    rng: &mut R,
) {
    let simd = flood.simd;
    // The whole post-step (floods, the per-component bookkeeping with its popcounts,
    // write-back and digging) is compiled with the clone's instructions.
    crate::simd_run!(simd, <I> [R: rand_core::Rng + ?Sized] (
        flood: &'a mut Flood = flood,
        scratch: &'a mut PostScratch = scratch,
        g: &'a mut Grid = g,
        step: PostStep = step,
        conn: Connectivity = conn,
        rng: &'a mut R = rng,
    ) -> () {
        apply_on::<I, R>(flood, scratch, g, step, conn, rng)
    });
}

/// [`apply`] in a SIMD clone.
#[inline(always)]
fn apply_on<I: Isa, R: rand_core::Rng + ?Sized>(
    flood: &mut Flood,
    scratch: &mut PostScratch,
    g: &mut Grid,
    step: PostStep,
    conn: Connectivity,
    rng: &mut R,
) {
    let conn = match step {
        PostStep::Bridge => Connectivity::Eight,
        _ => conn,
    };
    flood.load_on::<I>(g);
    let min = match step {
        PostStep::KeepLargest => {
            label::<I>(flood, scratch, conn);
            // First largest in labelling order.
            let mut best: Option<((usize, usize), u32)> = None;
            for &c in &scratch.comps {
                if best.is_none_or(|b| c.1 > b.1) {
                    best = Some(c);
                }
            }
            flood.clear_claims();
            if let Some((cell, _)) = best {
                flood.flood_from_on::<I>(cell.0, cell.1, conn);
            }
            let keep = std::mem::take(&mut flood.s);
            write_back(flood, &keep, g);
            flood.s = keep;
            return;
        }
        PostStep::RemoveSmall(n) => n,
        PostStep::Bridge => 4,
    };
    // One labelling pass: right after each component's flood, its cells are the claimed cells
    // that were not claimed before (`prev`), in its rows `lo..=hi`. Kept components go into
    // `keep` (and for `bridge` give their region's key and random cell); the RNG is drawn once
    // per kept region in labelling order, as documented.
    let lay = flood.lay;
    for v in [&mut scratch.keep, &mut scratch.prev] {
        v.clear();
        v.resize(lay.len(), 0);
    }
    scratch.regions.clear();
    let mut cursor = (0, 0);
    while let Some(cell) = flood.next_unclaimed(&mut cursor) {
        let filled = flood.flood_from_on::<I>(cell.0, cell.1, conn);
        let size = filled.size;
        let kept = size >= min;
        let mut key = (usize::MAX, usize::MAX);
        let pick = if kept && step == PostStep::Bridge {
            ((rng.next_u32() as u64 * size as u64) >> 32) as u32
        } else {
            u32::MAX
        };
        let mut rank = pick;
        let mut chosen = cell;
        for y in filled.lo..=filled.hi {
            let o = lay.off(y as isize);
            for i in 0..lay.wpr {
                let new = flood.s[o + i] & !scratch.prev[o + i];
                if new == 0 {
                    continue;
                }
                scratch.prev[o + i] |= new;
                if !kept {
                    continue;
                }
                scratch.keep[o + i] |= new;
                if step != PostStep::Bridge {
                    continue;
                }
                key = key.min((i * 64 + new.trailing_zeros() as usize, y));
                let pc = new.count_ones();
                if rank < pc {
                    chosen = (y, i * 64 + select(new, rank) as usize);
                    rank = u32::MAX;
                } else if rank != u32::MAX {
                    rank -= pc;
                }
            }
        }
        if kept && step == PostStep::Bridge {
            scratch.regions.push(Region { key, cell: chosen });
        }
    }
    let keep = std::mem::take(&mut scratch.keep);
    write_back(flood, &keep, g);
    scratch.keep = keep;
    if step == PostStep::Bridge {
        scratch.regions.sort_by_key(|r| r.key);
        for pair in scratch.regions.windows(2) {
            dig(g, pair[0].cell, pair[1].cell);
        }
    }
}

/// Position of the `rank`-th (0-based) set bit of `w` (`rank < w.count_ones()`): halving by
/// popcounts (six steps, no `pdep`, which some CPUs microcode; a bit-clearing loop cost up to
/// 63 dependent steps per kept region).
#[inline(always)]
fn select(w: u64, rank: u32) -> u32 {
    let (mut pos, mut r, mut w) = (0u32, rank, w);
    for half in [32u32, 16, 8, 4, 2, 1] {
        let low = w & ((1u64 << half) - 1);
        let c = low.count_ones();
        if r >= c {
            r -= c;
            pos += half;
            w >>= half;
        }
    }
    pos
}

/// Dig a 4-connected corridor from `a` to `b`: along `a`'s row to `b`'s column, then along that
/// column to `b`. Both ends are inside the grid, so every dug cell is. The row segment is
/// cleared a word at a time.
#[inline(always)]
fn dig(g: &mut Grid, a: (usize, usize), b: (usize, usize)) {
    let (y0, x0) = a;
    let (y1, x1) = b;
    let (lo, hi) = (x0.min(x1), x0.max(x1));
    let row = g.row_mut(y0);
    for (i, w) in row.iter_mut().enumerate().take(hi / 64 + 1).skip(lo / 64) {
        let from = lo.max(64 * i) - 64 * i;
        let to = hi.min(64 * i + 63) - 64 * i; // inclusive
        let span = (u64::MAX >> (63 - to)) & (u64::MAX << from);
        *w &= !span;
    }
    for y in y0.min(y1)..=y0.max(y1) {
        g.set(y, x1, false);
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn select_finds_the_rank_th_set_bit() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..500 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = x & x.rotate_left(11); // sparser words too
            for r in 0..w.count_ones() {
                let mut v = w;
                for _ in 0..r {
                    v &= v - 1;
                }
                assert_eq!(select(w, r), v.trailing_zeros(), "{w:x} rank {r}");
            }
        }
        assert_eq!(select(1 << 63, 0), 63);
        assert_eq!(select(!0, 63), 63);
    }

    #[test]
    fn dig_clears_an_l_shaped_corridor() {
        for (a, b) in [
            ((1, 3), (5, 130)),
            ((4, 150), (0, 2)),
            ((2, 64), (2, 63)),
            ((0, 0), (0, 0)),
        ] {
            let mut g = Grid::new(6, 160).unwrap();
            g.fill(true);
            dig(&mut g, a, b);
            let mut want = Grid::new(6, 160).unwrap();
            want.fill(true);
            for x in a.1.min(b.1)..=a.1.max(b.1) {
                want.set(a.0, x, false);
            }
            for y in a.0.min(b.0)..=a.0.max(b.0) {
                want.set(y, b.1, false);
            }
            assert_eq!(g, want, "{a:?} -> {b:?}");
        }
    }
}
