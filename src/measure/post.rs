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
//! `bridge` labels its regions by union-find over the FLOOR runs of each row (one pass over
//! the rows; a region's size, key and random cell come from its runs), not by the flood fills
//! the other post-steps use: a NetHack map after its passes is many small regions, where one
//! flood each costs more than the runs (see `bridge_runs`).
//!
//! RNG use (part of the seed's stream, so it must stay stable): one `next_u32` per kept region,
//! drawn in row-major discovery order (the order the regions are labelled in), before sorting.

use std::fmt;
use std::str::FromStr;

use crate::grid::Grid;

use crate::simd::{Isa, Task};

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
    /// `bridge`'s FLOOR runs in row-major order, their union-find parents, their region labels
    /// and the regions.
    runs: Vec<Run>,
    parent: Vec<u32>,
    label: Vec<u32>,
    rregions: Vec<RunRegion>,
}

/// One FLOOR run of `bridge`'s labelling: row `y`, columns `x0..=x1`.
#[derive(Debug, Clone, Copy)]
struct Run {
    y: u32,
    x0: u32,
    x1: u32,
}

/// A region of `bridge`'s labelling: its size, its column-major discovery key (`(x, y)` of its
/// first cell in a column-major scan) and, while its cell is being picked, the rank left.
#[derive(Debug, Clone, Copy)]
struct RunRegion {
    size: u32,
    key: (u32, u32),
    rank: u32,
}

/// Append the FLOOR runs of row `y` of `g` (FLOOR = 0 bits) to `runs`, left to right; a run may
/// cross word boundaries.
#[inline(always)]
fn row_runs(g: &Grid, y: usize, runs: &mut Vec<Run>) {
    let row = g.row(y);
    let last = row.len() - 1;
    let mask = g.last_word_mask();
    // Start of the run still open at the end of the previous word.
    let mut open: Option<u32> = None;
    for (i, &w) in row.iter().enumerate() {
        let mut f = !w;
        if i == last {
            f &= mask;
        }
        let base = 64 * i as u32;
        let mut at = 0u32; // bits below `at` are done
        loop {
            if let Some(x0) = open {
                // The open run goes on through the low FLOOR bits from `at`.
                let len = (!(f >> at)).trailing_zeros().min(64 - at);
                if at + len == 64 {
                    break; // still open at the word's end
                }
                runs.push(Run {
                    y: y as u32,
                    x0,
                    x1: base + at + len - 1,
                });
                open = None;
                at += len;
            }
            let rest = if at >= 64 { 0 } else { f >> at << at };
            if rest == 0 {
                break;
            }
            let s = rest.trailing_zeros();
            open = Some(base + s);
            at = s;
        }
    }
    if let Some(x0) = open {
        runs.push(Run {
            y: y as u32,
            x0,
            x1: g.cols() as u32 - 1,
        });
    }
}

#[inline(always)]
fn find(parent: &mut [u32], mut a: u32) -> u32 {
    while parent[a as usize] != a {
        let p = parent[a as usize];
        parent[a as usize] = parent[p as usize];
        a = p;
    }
    a
}

/// `bridge` by run-based union-find: label every 8-connected FLOOR region in one pass over the
/// rows (each run joined to the runs of the row above it touches, the root of a region being its
/// first run in row-major order), then erase the regions of 1..3 cells, draw one `next_u32` per
/// kept region in row-major order of their first cells (the labelling order of the floods this
/// replaces, as documented), pick each kept region's cell and dig the corridors.
#[inline(always)]
fn bridge_runs<R: rand_core::Rng + ?Sized>(scratch: &mut PostScratch, g: &mut Grid, rng: &mut R) {
    let PostScratch {
        runs,
        parent,
        label,
        rregions,
        regions,
        ..
    } = scratch;
    runs.clear();
    parent.clear();
    let mut prev = 0..0;
    for y in 0..g.rows() {
        let start = runs.len();
        row_runs(g, y, runs);
        let cur = start..runs.len();
        parent.extend(cur.start as u32..cur.end as u32);
        // Join each run with the runs of the row above within one column of it.
        let (mut i, mut j) = (prev.start, cur.start);
        while i < prev.end && j < cur.end {
            let (a, b) = (runs[i], runs[j]);
            if a.x0 <= b.x1 + 1 && b.x0 <= a.x1 + 1 {
                let (ra, rb) = (find(parent, i as u32), find(parent, j as u32));
                // The smaller index (the earlier run in row-major order) stays the root.
                let (lo, hi) = (ra.min(rb), ra.max(rb));
                parent[hi as usize] = lo;
            }
            if a.x1 < b.x1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        prev = cur;
    }
    // Regions in row-major order of their first runs (their roots): sizes and keys.
    label.clear();
    rregions.clear();
    for (k, r) in runs.iter().enumerate() {
        let root = find(parent, k as u32) as usize;
        let id = if root == k {
            rregions.push(RunRegion {
                size: 0,
                key: (u32::MAX, u32::MAX),
                rank: u32::MAX,
            });
            rregions.len() as u32 - 1
        } else {
            label[root]
        };
        label.push(id);
        let reg = &mut rregions[id as usize];
        reg.size += r.x1 - r.x0 + 1;
        reg.key = reg.key.min((r.x0, r.y));
    }
    // One draw per kept region, in labelling order.
    for reg in rregions.iter_mut() {
        if reg.size >= 4 {
            reg.rank = ((rng.next_u32() as u64 * reg.size as u64) >> 32) as u32;
        }
    }
    // Erase the small regions, pick each kept region's cell (its rank-th in row-major order).
    regions.clear();
    for (r, &id) in runs.iter().zip(label.iter()) {
        let reg = &mut rregions[id as usize];
        let len = r.x1 - r.x0 + 1;
        if reg.size < 4 {
            for x in r.x0..=r.x1 {
                g.set(r.y as usize, x as usize, true);
            }
        } else if reg.rank != u32::MAX {
            if reg.rank < len {
                regions.push(Region {
                    key: (reg.key.0 as usize, reg.key.1 as usize),
                    cell: (r.y as usize, (r.x0 + reg.rank) as usize),
                });
                reg.rank = u32::MAX;
            } else {
                reg.rank -= len;
            }
        }
    }
    regions.sort_by_key(|r| r.key);
    for pair in regions.windows(2) {
        dig(g, pair[0].cell, pair[1].cell);
    }
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
    simd.run(Apply {
        flood,
        scratch,
        g,
        step,
        conn,
        rng,
    });
}

/// [`apply`] in a SIMD clone: the whole post-step (floods, the per-component bookkeeping with
/// its popcounts, write-back and digging) is compiled with the clone's instructions.
struct Apply<'a, R: ?Sized> {
    flood: &'a mut Flood,
    scratch: &'a mut PostScratch,
    g: &'a mut Grid,
    step: PostStep,
    conn: Connectivity,
    rng: &'a mut R,
}

impl<R: rand_core::Rng + ?Sized> Task for Apply<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run<I: Isa>(self) {
        let Apply {
            flood,
            scratch,
            g,
            step,
            conn,
            rng,
        } = self;
        apply_on::<I, R>(flood, scratch, g, step, conn, rng);
    }
}

#[inline(always)]
fn apply_on<I: Isa, R: rand_core::Rng + ?Sized>(
    flood: &mut Flood,
    scratch: &mut PostScratch,
    g: &mut Grid,
    step: PostStep,
    conn: Connectivity,
    rng: &mut R,
) {
    let min = match step {
        PostStep::Bridge => return bridge_runs(scratch, g, rng),
        PostStep::KeepLargest => {
            flood.load_on::<I>(g);
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
    };
    // One labelling pass: right after each component's flood, its cells are the claimed cells
    // that were not claimed before (`prev`), in its rows `lo..=hi`. Kept components go into
    // `keep`.
    flood.load_on::<I>(g);
    let lay = flood.lay;
    for v in [&mut scratch.keep, &mut scratch.prev] {
        v.clear();
        v.resize(lay.len(), 0);
    }
    let mut cursor = (0, 0);
    while let Some(cell) = flood.next_unclaimed(&mut cursor) {
        let filled = flood.flood_from_on::<I>(cell.0, cell.1, conn);
        let kept = filled.size >= min;
        for y in filled.lo..=filled.hi {
            let o = lay.off(y as isize);
            for i in 0..lay.wpr {
                let new = flood.s[o + i] & !scratch.prev[o + i];
                scratch.prev[o + i] |= new;
                if kept {
                    scratch.keep[o + i] |= new;
                }
            }
        }
    }
    let keep = std::mem::take(&mut scratch.keep);
    write_back(flood, &keep, g);
    scratch.keep = keep;
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
