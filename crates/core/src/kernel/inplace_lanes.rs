//! The in-place column-major pass (NetHack's pass 1) on a batch of caves in lanes.
//!
//! Why: on one grid the pass is a dependency chain through the 77 transposed rows (each row's
//! new value feeds the next), so it runs at the chain's latency, ~30 cycles a row, not at the
//! CPU's throughput: 0.9 us of a 7 us NetHack cave, plus 0.4 us for the two transposes. With one
//! cave per lane the same chain carries 8 caves (AVX-512), and the transposes are the same
//! block swaps on vectors.
//!
//! The arithmetic is [`super::inplace`]'s, generic over the lane type: the batch is transposed
//! into `cols` vectors (one word per transposed row, so caves at most 64 rows high), scanned
//! row-major in place with the left neighbour's chain solved per word (`chain`; the prefix
//! XOR by six shift-XOR rounds, as vector `pclmulqdq` is not in every clone), and transposed
//! back. Walls are counted on the transposed rows (a transpose keeps them).
//!
//! Ops per transposed row (8 caves with AVX-512): ~45 for the neighbour count, the rule pair
//! and the chain, 12 of them the shift-XOR prefix, plus a popcount and an add. The transposes:
//! one 64x64 block each way when the cave is at most 32 rows high and 128 wide (two halves
//! share a block, as in [`super::inplace::transpose`]), 6 rounds x 32 pairs x 6 ops.

use super::batch::LaneGrid;
use super::inplace::{narrow_scan, transpose64};
use crate::rule::{Border, Outside, Pass, Rule, Update};
use crate::simd::Lane;

/// How [`step_colmajor`] runs a pass: the rule, whether outside reads as WALL (else FLOOR),
/// whether the border is forced to WALL after the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColMajor {
    /// Birth mask of the Moore rule: bit `k` set = a FLOOR cell with `k` WALL neighbours
    /// becomes WALL (as in [`Rule::Moore`]).
    pub birth: u16,
    /// Survival mask of the Moore rule: bit `k` set = a WALL cell with `k` WALL neighbours
    /// stays WALL.
    pub survive: u16,
    /// Cells outside the grid read as WALL (`true`, [`Outside::Wall`]) or FLOOR (`false`).
    pub wall: bool,
    /// The outer ring is forced to WALL after the step ([`Border::Solid`]).
    pub solid: bool,
}

/// [`step_colmajor`]'s form of `pass` if it runs it on caves `rows` high: a Moore rule applied
/// in place in column-major order, outside WALL or FLOOR, at most 64 rows.
pub fn colmajor_fits(pass: &Pass, rows: usize) -> Option<ColMajor> {
    match (pass.rule, pass.update, pass.outside) {
        (
            Rule::Moore { birth, survive },
            Update::InPlaceColMajor,
            Outside::Wall | Outside::Floor,
        ) if rows <= 64 => Some(ColMajor {
            birth,
            survive,
            wall: pass.outside == Outside::Wall,
            solid: pass.border == Border::Solid,
        }),
        _ => None,
    }
}

/// Prefix XOR of every lane's word: bit `j` becomes the XOR of bits `0..=j`.
#[inline(always)]
pub(super) fn prefix_xor<V: Lane>(mut x: V) -> V {
    for k in [1, 2, 4, 8, 16, 32] {
        x ^= x.shl(k);
    }
    x
}

/// One in-place column-major step of `pass` ([`colmajor_fits`]) on every cave of `g`, the
/// border forced to WALL afterwards if `pass.solid`. `t` is scratch of `cols` vectors.
/// Leaves `g`'s guards and padding zero; returns the walls of each lane's cave.
#[inline(always)]
pub fn step_colmajor<V: Lane>(g: &mut LaneGrid<'_, V>, t: &mut [V], pass: ColMajor) -> V {
    // NetHack's pass 1 with the rule constant-folded (~12 ops for the rule pair instead of ~75).
    const B678: u16 = 0b1_1100_0000;
    const S45678: u16 = 0b1_1111_0000;
    let ColMajor { wall, solid, .. } = pass;
    match (pass.birth, pass.survive) {
        (B678, S45678) => scan(g, t, B678, S45678, wall, solid),
        (birth, survive) => scan(g, t, birth, survive, wall, solid),
    }
}

#[inline(always)]
fn scan<V: Lane>(
    g: &mut LaneGrid<'_, V>,
    t: &mut [V],
    birth: u16,
    survive: u16,
    wall: bool,
    solid: bool,
) -> V {
    let (rows, cols) = (g.rows(), g.cols());
    assert!(rows <= 64 && t.len() == cols);
    to_columns(g, t);
    // The row-major in-place scan of the transposed caves (rows of `rows` cells), rows in
    // registers, the outside OR-ed in as constants ([`super::inplace`]'s narrow kernel).
    let mask = V::splat(if rows == 64 { !0 } else { (1u64 << rows) - 1 });
    // The border in the transposed frame: the first and last transposed rows whole, and the
    // first and last bit of every other. Stored, counted, but not fed to the scan: the
    // one-grid kernels force it after the whole step.
    let ring = V::splat(if solid { 1 | (1u64 << (rows - 1)) } else { 0 });
    let mut count = V::ZERO;
    narrow_scan(
        t,
        (0, 1, cols),
        (birth, survive, wall),
        mask,
        prefix_xor::<V>,
        |y, new| {
            let kept = if solid && (y == 0 || y + 1 == cols) {
                mask
            } else {
                new | ring
            };
            count = count.add(kept.popcnt());
            kept
        },
    );
    from_columns(t, g);
    count
}

/// `t[x]` = column `x` of every cave (bit `y` = cell `(y, x)`).
#[inline(always)]
fn to_columns<V: Lane>(g: &mut LaneGrid<'_, V>, t: &mut [V]) {
    if g.rows() <= 32 {
        to_columns_per::<V, 2>(g, t)
    } else {
        to_columns_per::<V, 1>(g, t)
    }
}

/// [`to_columns`] with `PER` word columns of a row per 64x64 transpose block: two when the
/// caves are at most 32 rows high (word `bx` in the block's low 32 words, `bx + 1` in its high
/// 32, so each transposed word holds column `64 bx + j` in its low half and `64 (bx + 1) + j`
/// in its high half), else one. A constant, so the block loops unroll.
#[inline(always)]
fn to_columns_per<V: Lane, const PER: usize>(g: &mut LaneGrid<'_, V>, t: &mut [V]) {
    let (rows, cols) = (g.rows(), g.cols());
    let (wpr, per) = (cols.div_ceil(64), PER);
    let half = V::splat(if per == 2 { 0xFFFF_FFFF } else { !0 });
    let (o0, stride) = (g.row_offset(0), g.row_offset(1) - g.row_offset(0));
    let raw = g.raw_mut();
    let mut blk = [V::ZERO; 64];
    for bx in (0..wpr).step_by(per) {
        blk.fill(V::ZERO);
        for h in 0..per.min(wpr - bx) {
            for r in 0..rows {
                blk[32 * h + r] = raw[o0 + r * stride + bx + h];
            }
        }
        transpose64(&mut blk, false);
        for h in 0..per.min(wpr - bx) {
            let x0 = 64 * (bx + h);
            for (j, &w) in blk.iter().enumerate().take((cols - x0).min(64)) {
                t[x0 + j] = w.shr(32 * h as u32) & half;
            }
        }
    }
}

/// The inverse of [`to_columns`]: rows of `g` from the columns `t` (whose bits past `rows`
/// are zero, so `g`'s padding stays zero).
#[inline(always)]
fn from_columns<V: Lane>(t: &[V], g: &mut LaneGrid<'_, V>) {
    if g.rows() <= 32 {
        from_columns_per::<V, 2>(t, g)
    } else {
        from_columns_per::<V, 1>(t, g)
    }
}

/// [`from_columns`] with `PER` word columns per block (see [`to_columns_per`]).
#[inline(always)]
fn from_columns_per<V: Lane, const PER: usize>(t: &[V], g: &mut LaneGrid<'_, V>) {
    let (rows, cols) = (g.rows(), g.cols());
    let (wpr, per) = (cols.div_ceil(64), PER);
    let col = |x: usize| if x < cols { t[x] } else { V::ZERO };
    let (o0, stride) = (g.row_offset(0), g.row_offset(1) - g.row_offset(0));
    let raw = g.raw_mut();
    let mut blk = [V::ZERO; 64];
    for bx in (0..wpr).step_by(per) {
        for (j, w) in blk.iter_mut().enumerate() {
            *w = (0..per).fold(V::ZERO, |a, h| {
                a | col(64 * (bx + h) + j).shl(32 * h as u32)
            });
        }
        transpose64(&mut blk, false);
        for h in 0..per.min(wpr - bx) {
            for r in 0..rows {
                raw[o0 + r * stride + bx + h] = blk[32 * h + r];
            }
        }
    }
}
