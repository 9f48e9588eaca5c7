//! In-place (Gauss-Seidel) step kernels: each cell is written immediately and later cells in the
//! scan read the new value. This is NetHack's pass 1 (column-major) and its row-major sibling.
//!
//! Design (row-major, on the bit-packed rows):
//!
//! * When row `y` is processed, row `y-1` already holds new values and row `y+1` old ones, so the
//!   7 neighbours of a cell other than its left one are known for a whole 64-cell word at once.
//!   They are counted word-parallel into 3 bit planes with a carry-save adder tree.
//! * The only sequential dependency left is the new value `L` of the left neighbour. The rule is
//!   evaluated twice (`L = 0` and `L = 1`), giving per cell an affine map `new = p ^ (t & L)`
//!   (`p` = result for `L = 0`, `t` = whether `L` matters): one of const0, const1, id, not.
//! * The chain `new[j] = p[j] ^ (t[j] & new[j-1])` is solved without a 64-step loop: between two
//!   "reset" cells (`t = 0`) the value is a prefix XOR of `p` (one carry-less multiply), and the
//!   value at a reset is broadcast forward to the next reset with one integer addition (the carry
//!   chain of an adder is exactly a segmented forward fill). The last bit carries into the next
//!   word. This replaces a 6-level Kogge-Stone composition (~30 ops) with ~11 ops.
//!
//! Column-major = transpose, row-major, transpose back: the Moore neighbourhood and the outside
//! modes are symmetric under transposition, and a column-major scan of the grid is a row-major scan
//! of its transpose.
//!
//! Scalar paths (documented, tested against the oracle like everything else):
//! * `Rule::TwoRadius` in place: rare, and its 5x5 window would need two in-flight rows of chain
//!   state; it reads the bit grid as it is now, exactly like the oracle.
//! * Wrap (torus) with `rows == 1` or `cols <= 2`: cells there are their own neighbours (or the
//!   same neighbour twice, once old and once new), which the word kernel's "above is new, below is
//!   old" model does not describe.
//!
//! Ops per 64-cell word (row-major, NetHack's `B678/S45678` specialised): 15 shifts/ors to form
//! the 7 neighbour words, 20 for the 7->3 carry-save count, ~12 for the rule pair (p, t) after
//! constant folding (~75 for a rule only known at run time), 11 for the chain (1 `pclmulqdq`),
//! plus ~6 loads/stores: about 65 ops, i.e. ~1 op per cell. Grids at most 64 wide (the
//! transposed 19x77 NetHack area is 77 rows of one word) take a register-resident path without
//! guard preparation, since there the whole scan is one dependency chain through the rows.
//! The transposes cost 64x64 block swaps: 6 rounds x 32 pairs x 6 ops, vectorised; two blocks
//! with a side of at most 32 cells share one (NetHack: one block each way).

use crate::grid::Grid;
use crate::rule::{Outside, Rule, Update};
use crate::simd::{Isa, Lane, Simd, prefix_xor};

/// Reusable buffers for `step_inplace`: the transposed grid for column-major scans. It is
/// (re)allocated only when the grid shape changes, never per call for a fixed shape.
#[derive(Debug, Default, Clone)]
pub struct InplaceScratch {
    transposed: Option<Grid>,
}

impl InplaceScratch {
    /// Empty scratch; nothing is allocated until the first column-major step.
    pub fn new() -> InplaceScratch {
        InplaceScratch::default()
    }

    /// The transposed-shape grid (`cols x rows`), allocated on first use or shape change.
    fn transposed_for(&mut self, rows: usize, cols: usize) -> &mut Grid {
        let fits = self
            .transposed
            .as_ref()
            .is_some_and(|t| t.rows() == cols && t.cols() == rows);
        if !fits {
            // The transposed shape of a valid grid is valid: same side limits and cell count.
            self.transposed = Some(Grid::new(cols, rows).expect("transposed shape is valid"));
        }
        self.transposed.as_mut().expect("just set")
    }
}

/// `step_inplace` on a given SIMD path (for callers outside a SIMD clone).
pub fn step(
    simd: Simd,
    grid: &mut Grid,
    scratch: &mut InplaceScratch,
    rule: Rule,
    outside: Outside,
    order: Update,
) {
    crate::simd_run!(simd, <I> (
        grid: &'a mut Grid = grid,
        scratch: &'a mut InplaceScratch = scratch,
        rule: Rule = rule,
        outside: Outside = outside,
        order: Update = order,
    ) -> () {
        step_inplace::<I>(grid, scratch, rule, outside, order)
    })
}

/// One in-place step of `rule` over `grid` in scan order `order`.
///
/// `order` must be `InPlaceRowMajor` or `InPlaceColMajor`; `Update::Sync` is not an in-place
/// scan and is rejected by an assertion (the sync kernel lives elsewhere). The border
/// (`Border::Solid`) is the caller's business. Result is bit-identical to
/// `ByteGrid::step` in the oracle.
#[inline(always)]
pub(crate) fn step_inplace<I: Isa>(
    grid: &mut Grid,
    scratch: &mut InplaceScratch,
    rule: Rule,
    outside: Outside,
    order: Update,
) {
    assert!(
        order != Update::Sync,
        "step_inplace needs an in-place scan order, got sync"
    );
    let (birth, survive) = match rule {
        Rule::Moore { birth, survive } => (birth, survive),
        Rule::TwoRadius { .. } | Rule::Hood { .. } | Rule::Ltl(_) => {
            scalar_inplace(grid, rule, outside, order);
            return;
        }
    };
    match order {
        Update::InPlaceRowMajor => row_major::<I>(grid, birth, survive, outside),
        Update::InPlaceColMajor => {
            let (rows, cols) = (grid.rows(), grid.cols());
            if outside == Outside::Wrap && (rows <= 2 || cols == 1) {
                // Degenerate torus in the transposed frame (see module docs).
                scalar_inplace(grid, rule, outside, order);
                return;
            }
            let t = scratch.transposed_for(rows, cols);
            transpose(grid, t);
            row_major::<I>(t, birth, survive, outside);
            transpose(t, grid);
        }
        Update::Sync => unreachable!(),
    }
}

const B678: u16 = 0b1_1100_0000;
const B5678: u16 = 0b1_1110_0000;
const S45678: u16 = 0b1_1111_0000;

/// Row-major in-place scan; dispatches a few hot rules to copies of the kernel with the rule
/// constant-folded (the generic rule evaluator is ~75 ops per word, the folded ones ~10).
#[inline(always)]
fn row_major<I: Isa>(g: &mut Grid, birth: u16, survive: u16, outside: Outside) {
    if outside == Outside::Wrap && (g.rows() == 1 || g.cols() <= 2) {
        scalar_inplace(
            g,
            Rule::Moore { birth, survive },
            outside,
            Update::InPlaceRowMajor,
        );
        return;
    }
    match (birth, survive) {
        (B678, S45678) => rows_kernel::<I>(g, B678, S45678, outside),
        (B5678, S45678) => rows_kernel::<I>(g, B5678, S45678, outside),
        (B5678, B5678) => rows_kernel::<I>(g, B5678, B5678, outside),
        _ => rows_kernel::<I>(g, birth, survive, outside),
    }
}

use super::adders::{full_add as fa, table_mux8 as table8};

/// Solve `new[j] = p[j] ^ (t[j] & new[j-1])` for the 64 bits of a word, `new[-1] = cin` (0/1).
///
/// Cells with `t = 0` are resets (their value is `p`); after a reset `r` the value is
/// `X[j] ^ X[r-1]` with `X` the prefix XOR of `p`. The values `X[r-1]` sit at the reset
/// positions (`S`) and are filled forward through the non-resets by the carry chain of
/// `(t | S) + S + cin`: a set `S` bit generates a carry, a non-reset propagates it, a reset with
/// `S = 0` kills it. 11 ops.
///
/// Generic over the lane type: one word, or one word of each of a batch's caves
/// ([`super::inplace_lanes`]); `prefix` is the prefix XOR ([`prefix_xor`] on one word).
#[inline(always)]
pub(super) fn chain<V: Lane>(p: V, t: V, cin: V, prefix: impl Fn(V) -> V) -> V {
    let x = prefix(p);
    let s = x.shl(1) & !t;
    let z = t | s;
    let sum = z.add(s).add(cin);
    let carry = sum ^ z ^ s;
    x ^ ((carry & t) | s)
}

/// The row-major in-place kernel proper. `inline(always)` so that dispatch arms with constant
/// `birth`/`survive` get the rule folded into the word loop.
#[inline(always)]
fn rows_kernel<I: Isa>(g: &mut Grid, birth: u16, survive: u16, outside: Outside) {
    let (rows, cols, wpr, stride) = (g.rows(), g.cols(), g.words_per_row(), g.stride());
    let mask = g.last_word_mask();
    let wrap = outside == Outside::Wrap;
    debug_assert!(!wrap || (rows >= 2 && cols >= 3));
    if wpr == 1 && !wrap {
        rows_kernel_narrow::<I>(g, birth, survive, outside == Outside::Wall);
        return;
    }
    g.prepare_edges(outside);
    let off = |y: isize| ((y + 1) as usize) * stride + 1;
    let raw = g.raw_mut();
    let bit = |raw: &[u64], o: usize, x: usize| (raw[o + x / 64] >> (x % 64)) & 1;
    for y in 0..rows as isize {
        let (ao, co, bo) = (off(y - 1), off(y), off(y + 1));
        // Left neighbour of x = 0: the prepared guard (outside value, or old (y, cols-1)).
        let mut cin = raw[co - 1] >> 63;
        let old_last = bit(raw, co, cols - 1);
        // Rows are contiguous: take the three rows (with guards) as slices to drop bounds checks.
        for i in 0..wpr {
            let c = raw[co + i];
            let new = word_step(
                birth,
                survive,
                [raw[ao + i - 1], raw[ao + i], raw[ao + i + 1]],
                [c, raw[co + i + 1]],
                [raw[bo + i - 1], raw[bo + i], raw[bo + i + 1]],
                cin,
                prefix_xor::<I>,
            );
            cin = new >> 63;
            raw[co + i] = if i + 1 == wpr {
                // Keep the prepared padding bits (outside values) of the last word.
                (new & mask) | (c & !mask)
            } else {
                new
            };
        }
        if wrap {
            // The last cell's right neighbour is the *new* (y, 0): redo it with that value.
            let (xl, xc) = (cols - 2, cols - 1);
            let n = bit(raw, ao, xl)
                + bit(raw, ao, xc)
                + bit(raw, ao, cols)
                + bit(raw, co, xl)
                + bit(raw, co, 0)
                + bit(raw, bo, xl)
                + bit(raw, bo, xc)
                + bit(raw, bo, cols);
            let set = if old_last == 1 { survive } else { birth };
            let v = ((set >> n) & 1) as u64;
            let wi = co + xc / 64;
            raw[wi] = (raw[wi] & !(1u64 << (xc % 64))) | (v << (xc % 64));
            // Refresh this row's wrap guards with its new values: row y+1 reads them.
            raw[co - 1] = bit(raw, co, xc) << 63;
            let pi = co + cols / 64;
            let first = raw[co] & 1;
            raw[pi] = (raw[pi] & !(1u64 << (cols % 64))) | (first << (cols % 64));
            if y == 0 {
                // The bottom guard row stands for row 0, which is now new.
                let start = co - 1;
                raw.copy_within(start..start + stride, off(rows as isize) - 1);
            }
        }
    }
    g.clear_edges();
}

/// One round of the 64x64 transpose: swap the off-diagonal `J x J` sub-blocks of every
/// `2J x 2J` block. `J` is a constant so each round unrolls into straight-line (vectorisable)
/// code: 32 independent pairs, 6 ops each.
#[inline(always)]
fn transpose_round<V: Lane, const J: usize>(a: &mut [V; 64], m: u64) {
    let m = V::splat(m);
    for k in (0..64).step_by(2 * J) {
        for i in k..k + J {
            let t = (a[i].shr(J as u32) ^ a[i + J]) & m;
            a[i] ^= t.shl(J as u32);
            a[i + J] ^= t;
        }
    }
}

/// One word (64 cells) of the row kernel: the new word from the above row `a` (new), the
/// current row `c` (old) and the below row `b` (old), each with its left and right neighbour
/// words, and the new value `cin` of the cell left of bit 0.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn word_step<V: Lane>(
    birth: u16,
    survive: u16,
    [al, a, ar]: [V; 3],
    [c, cr]: [V; 2],
    [bl, b, br]: [V; 3],
    cin: V,
    prefix: impl Fn(V) -> V,
) -> V {
    let a_l = a.shl(1) | al.shr(63);
    let a_r = a.shr(1) | ar.shl(63);
    let b_l = b.shl(1) | bl.shr(63);
    let b_r = b.shr(1) | br.shl(63);
    let c_r = c.shr(1) | cr.shl(63);
    let (sa, ca) = fa(a_l, a, a_r);
    let (sb, cb) = fa(b_l, b, b_r);
    let (n0, c1) = fa(sa, sb, c_r);
    let (n1, n2) = fa(ca, cb, c1);
    // Rule with L = 0 (count n) and L = 1 (count n + 1).
    let p0b = table8(birth, n0, n1, n2);
    let p0s = table8(survive, n0, n1, n2);
    let p1b = table8(birth >> 1, n0, n1, n2);
    let p1s = table8(survive >> 1, n0, n1, n2);
    let p = p0b ^ ((p0b ^ p0s) & c);
    let q = p1b ^ ((p1b ^ p1s) & c);
    chain(p, p ^ q, cin, prefix)
}

/// The row kernel for grids at most 64 wide with outside floor/wall (the transposed NetHack
/// area is 77 x 19): the scan is one long dependency chain through the rows, so the rows are
/// kept in registers (the new above row never goes through memory) and the outside is
/// OR-ed in as constants instead of preparing and clearing guard words.
#[inline(always)]
fn rows_kernel_narrow<I: Isa>(g: &mut Grid, birth: u16, survive: u16, wall: bool) {
    let (rows, stride) = (g.rows(), g.stride());
    let mask = g.last_word_mask();
    let raw = g.raw_mut();
    narrow_scan(
        raw,
        (stride + 1, stride, rows),
        (birth, survive, wall),
        mask,
        prefix_xor::<I>,
        |_, new| new,
    );
}

/// The in-place scan of `n` rows of one word each, row `y` at `data[o0 + y * stride]` (a
/// grid's rows, or the transposed caves of a batch in lanes): each row's new value is stored
/// right after it is computed and the next row reads it; cells outside read as WALL if `wall`,
/// else FLOOR (OR-ed in as constants); `mask` holds a row's valid bits. What is stored is
/// `store(y, new)` (a border forced on it, say); the scan goes on from `new` itself.
#[inline(always)]
pub(super) fn narrow_scan<V: Lane>(
    data: &mut [V],
    (o0, stride, n): (usize, usize, usize),
    (birth, survive, wall): (u16, u16, bool),
    mask: V,
    prefix: impl Fn(V) -> V + Copy,
    mut store: impl FnMut(usize, V) -> V,
) {
    let out = if wall { V::ONES } else { V::ZERO };
    let pad = out & !mask;
    let cin = V::splat(wall as u64);
    let mut a = out;
    let mut c = data[o0] | pad;
    for y in 0..n {
        let b = if y + 1 < n {
            data[o0 + (y + 1) * stride] | pad
        } else {
            out
        };
        let new = word_step(
            birth,
            survive,
            [out, a, out],
            [c, out],
            [out, b, out],
            cin,
            prefix,
        ) & mask;
        data[o0 + y * stride] = store(y, new);
        a = new | pad;
        c = b;
    }
}

/// Transpose a 64x64 bit block in place: bit `x` of word `y` moves to bit `y` of word `x`.
/// Six rounds of block swaps (Hacker's Delight 7-3). When only the first 32 words can be
/// non-zero (grids at most 32 high, e.g. NetHack's 19 rows), the first round is a plain split.
/// Generic over the lane type: with a batch's vectors, every cave's block is transposed at once.
#[inline(always)]
pub(super) fn transpose64<V: Lane>(a: &mut [V; 64], low_half_only: bool) {
    if low_half_only {
        let low = V::splat(0xFFFF_FFFF);
        for i in 0..32 {
            a[i + 32] = a[i].shr(32);
            a[i] &= low;
        }
    } else {
        transpose_round::<V, 32>(a, 0x0000_0000_FFFF_FFFF);
    }
    transpose_round::<V, 16>(a, 0x0000_FFFF_0000_FFFF);
    transpose_round::<V, 8>(a, 0x00FF_00FF_00FF_00FF);
    transpose_round::<V, 4>(a, 0x0F0F_0F0F_0F0F_0F0F);
    transpose_round::<V, 2>(a, 0x3333_3333_3333_3333);
    transpose_round::<V, 1>(a, 0x5555_5555_5555_5555);
}

/// `out = src` transposed (`out` is `cols x rows`), in 64x64 blocks. Grids must satisfy the
/// padding invariant (bits beyond `cols` zero); `out`'s guards are untouched and stay zero.
///
/// When one side is at most 32 cells and the other longer, two 64-cell blocks only half fill
/// their 64x64 transposes, so two share one, side by side in its two halves (NetHack's 19 x 77
/// and back: one transpose each way instead of two; both directions 0.58 -> 0.38 us per cave,
/// `examples/nethack_passes.rs`, avx512).
#[inline(always)]
pub fn transpose(src: &Grid, out: &mut Grid) {
    let (rows, cols) = (src.rows(), src.cols());
    assert_eq!((out.rows(), out.cols()), (cols, rows));
    let mut blk = [0u64; 64];
    let (swpr, owpr) = (src.words_per_row(), out.words_per_row());
    if rows <= 32 && cols > 32 {
        // Rows of block bx in the low words, of block bx + 1 in the high words: word j of the
        // transpose is column 64 bx + j in its low half, column 64 (bx + 1) + j in its high half.
        let ostride = out.stride();
        let orow = |y: usize| (y + 1) * ostride + 1; // `out.row_offset(y)`
        let (sraw, oraw) = (src.raw(), out.raw_mut());
        for bx in (0..swpr).step_by(2) {
            let pair = bx + 1 < swpr;
            for r in 0..32 {
                let o = src.row_offset(r.min(rows - 1) as isize);
                let ok = r < rows;
                blk[r] = if ok { sraw[o + bx] } else { 0 };
                blk[32 + r] = if ok && pair { sraw[o + bx + 1] } else { 0 };
            }
            transpose64(&mut blk, false);
            for (j, &w) in blk.iter().enumerate().take((cols - 64 * bx).min(64)) {
                oraw[orow(64 * bx + j)] = w & 0xFFFF_FFFF;
            }
            if pair {
                for (j, &w) in blk.iter().enumerate().take((cols - 64 * (bx + 1)).min(64)) {
                    oraw[orow(64 * (bx + 1) + j)] = w >> 32;
                }
            }
        }
        return;
    }
    if cols <= 32 && rows > 32 {
        // One word per source row: rows 64 by + j in the low half of word j, rows
        // 64 (by + 1) + j in its high half; word b of the transpose is word by of output row b,
        // word 32 + b its word by + 1.
        let ostride = out.stride();
        let (sraw, oraw) = (src.raw(), out.raw_mut());
        for by in (0..owpr).step_by(2) {
            let pair = by + 1 < owpr;
            for (j, w) in blk.iter_mut().enumerate() {
                let (y, z) = (64 * by + j, 64 * (by + 1) + j);
                let lo = if y < rows {
                    sraw[src.row_offset(y as isize)]
                } else {
                    0
                };
                let hi = if z < rows {
                    sraw[src.row_offset(z as isize)]
                } else {
                    0
                };
                *w = lo | (hi << 32);
            }
            transpose64(&mut blk, false);
            for b in 0..cols {
                let o = (b + 1) * ostride + 1 + by; // `out.row_offset(b) + by`
                oraw[o] = blk[b];
                if pair {
                    oraw[o + 1] = blk[32 + b];
                }
            }
        }
        return;
    }
    for by in 0..owpr {
        let y0 = by * 64;
        let ny = (rows - y0).min(64);
        for bx in 0..swpr {
            let x0 = bx * 64;
            let nx = (cols - x0).min(64);
            let sraw = src.raw();
            for (r, w) in blk.iter_mut().enumerate().take(ny) {
                *w = sraw[src.row_offset((y0 + r) as isize) + bx];
            }
            blk[ny..].fill(0);
            transpose64(&mut blk, ny <= 32);
            let ostride = out.stride();
            let o0 = out.row_offset(x0 as isize) + by;
            let oraw = out.raw_mut();
            for (j, &w) in blk.iter().enumerate().take(nx) {
                oraw[o0 + j * ostride] = w;
            }
        }
    }
}

/// The cell at `(y, x)`, possibly outside the grid, read per `outside` (the oracle's `read`).
fn read(g: &Grid, y: isize, x: isize, outside: Outside) -> u32 {
    let (r, c) = (g.rows() as isize, g.cols() as isize);
    if (0..r).contains(&y) && (0..c).contains(&x) {
        return g.get(y as usize, x as usize) as u32;
    }
    match outside {
        Outside::Floor => 0,
        Outside::Wall => 1,
        Outside::Wrap => g.get(y.rem_euclid(r) as usize, x.rem_euclid(c) as usize) as u32,
    }
}

/// Next state of `(y, x)` reading the bit grid as it is now (the oracle's `next_cell`).
fn next_cell(g: &Grid, rule: Rule, y: usize, x: usize, outside: Outside) -> bool {
    let (yi, xi) = (y as isize, x as isize);
    let wall = g.get(y, x);
    match rule {
        Rule::Hood {
            hood,
            birth,
            survive,
        } => {
            let n = hood
                .offsets()
                .iter()
                .map(|&(dy, dx)| read(g, yi + dy, xi + dx, outside))
                .sum();
            return Rule::next_moore(birth, survive, wall, n);
        }
        Rule::Ltl(l) => {
            let r = l.radius as isize;
            let mut n = 0;
            for dy in -r..=r {
                for dx in -r..=r {
                    let centre = dy == 0 && dx == 0;
                    if (centre && l.middle) || (!centre && l.contains(dy, dx)) {
                        n += read(g, yi + dy, xi + dx, outside);
                    }
                }
            }
            return l.next(wall, n);
        }
        _ => {}
    }
    let mut n = 0;
    let mut r2 = 0;
    for dy in -2isize..=2 {
        for dx in -2isize..=2 {
            if dy.abs() == 2 && dx.abs() == 2 {
                continue;
            }
            let v = read(g, yi + dy, xi + dx, outside);
            r2 += v;
            if dy.abs() <= 1 && dx.abs() <= 1 && (dy, dx) != (0, 0) {
                n += v;
            }
        }
    }
    match rule {
        Rule::Moore { birth, survive } => Rule::next_moore(birth, survive, wall, n),
        Rule::TwoRadius { r1_min, r2_max } => {
            n + wall as u32 >= r1_min as u32 || r2_max.is_some_and(|m| r2 <= m as u32)
        }
        Rule::Hood { .. } | Rule::Ltl(_) => unreachable!("counted above"),
    }
}

/// Cell-at-a-time in-place scan on the bit grid: the path for two-radius, von Neumann,
/// hexagonal and Larger than Life rules in place and for degenerate tori (see module docs). Slow (~100 ns per cell) but only used off the hot path.
fn scalar_inplace(g: &mut Grid, rule: Rule, outside: Outside, order: Update) {
    let (rows, cols) = (g.rows(), g.cols());
    let mut visit = |y: usize, x: usize| {
        let v = next_cell(g, rule, y, x, outside);
        g.set(y, x, v);
    };
    if order == Update::InPlaceColMajor {
        for x in 0..cols {
            for y in 0..rows {
                visit(y, x);
            }
        }
    } else {
        for y in 0..rows {
            for x in 0..cols {
                visit(y, x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ByteGrid;
    use crate::rule::{Border, Pass};
    use proptest::prelude::*;

    use crate::kernel::strategies;
    use crate::simd::Scalar;

    fn oracle_step(g: &Grid, rule: Rule, outside: Outside, order: Update) -> Grid {
        let mut b = ByteGrid::from_grid(g);
        b.step(&Pass {
            rule,
            outside,
            update: order,
            border: Border::None,
            repeat: 1,
        });
        b.to_grid()
    }

    fn fast_step(g: &Grid, rule: Rule, outside: Outside, order: Update) -> Grid {
        let mut out = g.clone();
        step(
            Simd::detect(),
            &mut out,
            &mut InplaceScratch::new(),
            rule,
            outside,
            order,
        );
        out
    }

    fn grid_from(rows: usize, cols: usize, bits: &[bool]) -> Grid {
        let mut g = Grid::new(rows, cols).unwrap();
        for y in 0..rows {
            for x in 0..cols {
                g.set(y, x, bits[(y * cols + x) % bits.len()]);
            }
        }
        g
    }

    #[test]
    fn chain_matches_sequential_loop() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..2000 {
            let (p, mut t, cin) = (next(), next(), next() & 1);
            if next() & 1 == 0 {
                t |= next(); // long id/not runs
            }
            let mut prev = cin;
            let mut want = 0;
            for j in 0..64 {
                let v = ((p >> j) & 1) ^ ((t >> j) & 1 & prev);
                want |= v << j;
                prev = v;
            }
            assert_eq!(
                chain(p, t, cin, prefix_xor::<Scalar>),
                want,
                "p {p:x} t {t:x} cin {cin}"
            );
            // The lanes kernel's shift-XOR prefix.
            let lanes = super::super::inplace_lanes::prefix_xor::<u64>;
            assert_eq!(chain(p, t, cin, lanes), want, "shift-XOR prefix");
            if crate::simd::Cpu::get().avx2 {
                let clmul = prefix_xor::<crate::simd::Avx2>;
                assert_eq!(chain(p, t, cin, clmul), want, "clmul");
            }
        }
        assert_eq!(chain(0, !0, 1, prefix_xor::<Scalar>), !0);
        assert_eq!(
            chain(!0, !0, 0, prefix_xor::<Scalar>),
            0x5555_5555_5555_5555
        );
    }

    #[test]
    fn transpose_matches_grid_transpose() {
        for (rows, cols) in [
            (1, 1),
            (19, 77),
            (77, 19),
            (3, 130),
            (130, 65),
            (64, 64),
            (32, 200),
            (200, 32),
            (5, 129),
            (129, 5),
            (31, 64),
            (64, 31),
            (20, 300),
            (300, 20),
            (1, 200),
            (200, 1),
            (33, 70),
            (70, 33),
            (32, 33),
            (33, 32),
        ] {
            let bits: Vec<bool> = (0..97).map(|i| (i * 7 + i / 3) % 5 < 2).collect();
            let g = grid_from(rows, cols, &bits);
            let mut want = Grid::new(cols, rows).unwrap();
            g.transpose_into(&mut want);
            let mut got = Grid::new(cols, rows).unwrap();
            transpose(&g, &mut got);
            assert_eq!(got, want);
            assert_eq!(got.raw(), want.raw(), "guards/padding must stay zero");
        }
    }

    /// Hand-worked: B1/S01 (a cell becomes/stays WALL with one wall neighbour, a wall also stays
    /// with none) from a single wall at (0,0) of a 3x4 grid, outside floor. Row-major: (0,1)
    /// sees the new (0,0) and is born, then (0,2) sees the new (0,1) ...; (1,0) sees (0,0) and
    /// (0,1): two walls, stays floor; every later row-1 cell has 2+ wall neighbours or 0, row 2
    /// sees only floor. Column-major runs the same way down column 0 instead.
    #[test]
    fn hand_worked_orders_differ_floor() {
        let rule: Rule = "B1/S01".parse().unwrap();
        let g = Grid::from_text("#...\n....\n....\n").unwrap();
        let r = fast_step(&g, rule, Outside::Floor, Update::InPlaceRowMajor);
        assert_eq!(r.to_text(), "####\n....\n....\n");
        let c = fast_step(&g, rule, Outside::Floor, Update::InPlaceColMajor);
        assert_eq!(c.to_text(), "#...\n#...\n#...\n");
    }

    /// Hand-worked with outside WALL and NetHack's pass-1 rule B678/S45678 on
    ///   . # .
    ///   . . .
    ///   . . .
    /// Row-major: (0,0) sees 5 outside walls + (0,1) = 6 -> born. (0,1) (wall) sees 3 outside +
    /// the *new* (0,0) = 4 -> survives (S4). (0,2): 5 + (0,1) = 6 -> born. (1,0): 3 outside +
    /// (0,0), (0,1) = 5 -> stays floor; (1,1): 3; (1,2): 5; (2,0): 5; (2,1): 3; (2,2): 5 -> all
    /// floor. Column-major reaches the same cells with the same counts ((0,1) sees new (0,0) and
    /// new floor (1,0): 4). A sync step would kill (0,1) (3 neighbours): the in-place read matters.
    /// With outside FLOOR every count drops below 4 and everything dies.
    #[test]
    fn hand_worked_nethack_wall() {
        let rule = Rule::moore(&[6, 7, 8], &[4, 5, 6, 7, 8]);
        let g = Grid::from_text(".#.\n...\n...\n").unwrap();
        for order in [Update::InPlaceRowMajor, Update::InPlaceColMajor] {
            let r = fast_step(&g, rule, Outside::Wall, order);
            assert_eq!(r.to_text(), "###\n...\n...\n", "{order}");
            let f = fast_step(&g, rule, Outside::Floor, order);
            assert_eq!(f.to_text(), "...\n...\n...\n", "{order}");
        }
    }

    /// Hand-worked on a 3x3 torus with B1/S (born with exactly one wall neighbour, walls die).
    /// On a 3x3 torus the 8 neighbours of a cell are exactly the 8 other cells, so a cell's count
    /// is the number of walls elsewhere *at the time it is visited*. Start: one wall at (1,1).
    /// Row-major: (0,0) sees 1 -> born; (0,1), (0,2), (1,0) see 2 -> floor; (1,1) dies; (1,2)
    /// sees only (0,0) -> born; row 2 sees (0,0), (1,2) -> floor. Column-major: (0,0) born;
    /// (1,0), (2,0), (0,1) see 2; (1,1) dies; (2,1) sees only (0,0) -> born; column 2 sees 2.
    #[test]
    fn hand_worked_wrap() {
        let rule: Rule = "B1/S".parse().unwrap();
        let g = Grid::from_text("...\n.#.\n...\n").unwrap();
        let r = fast_step(&g, rule, Outside::Wrap, Update::InPlaceRowMajor);
        assert_eq!(r.to_text(), "#..\n..#\n...\n");
        let c = fast_step(&g, rule, Outside::Wrap, Update::InPlaceColMajor);
        assert_eq!(c.to_text(), "#..\n...\n.#.\n");
    }

    #[test]
    fn two_radius_inplace_uses_scalar_path() {
        let rule = Rule::TwoRadius {
            r1_min: 5,
            r2_max: Some(2),
        };
        let bits: Vec<bool> = (0..61).map(|i| (i * 5) % 7 < 3).collect();
        let g = grid_from(9, 13, &bits);
        for outside in [Outside::Floor, Outside::Wall, Outside::Wrap] {
            for order in [Update::InPlaceRowMajor, Update::InPlaceColMajor] {
                assert_eq!(
                    fast_step(&g, rule, outside, order),
                    oracle_step(&g, rule, outside, order)
                );
            }
        }
    }

    fn arb_order() -> impl Strategy<Value = Update> {
        prop_oneof![Just(Update::InPlaceRowMajor), Just(Update::InPlaceColMajor)]
    }
    fn arb_rule() -> impl Strategy<Value = Rule> {
        prop_oneof![
            (0u16..512, 0u16..512).prop_map(|(birth, survive)| Rule::Moore { birth, survive }),
            Just(Rule::moore(&[6, 7, 8], &[4, 5, 6, 7, 8])),
            Just(Rule::classic_4_5()),
            Just(Rule::chapter_strict()),
        ]
    }

    fn check(
        rows: usize,
        cols: usize,
        seed_bits: Vec<bool>,
        rule: Rule,
        outside: Outside,
        order: Update,
        steps: usize,
    ) -> Result<(), TestCaseError> {
        let g = grid_from(rows, cols, &seed_bits);
        let paths = Simd::available();
        let mut fast = vec![g.clone(); paths.len()];
        let mut slow = ByteGrid::from_grid(&g);
        let mut scratch = InplaceScratch::new();
        let pass = Pass {
            rule,
            outside,
            update: order,
            border: Border::None,
            repeat: 1,
        };
        for s in 0..steps {
            slow.step(&pass);
            let want = slow.to_grid();
            for (&simd, fast) in paths.iter().zip(fast.iter_mut()) {
                step(simd, fast, &mut scratch, rule, outside, order);
                prop_assert_eq!(
                    fast.raw(),
                    want.raw(),
                    "{} step {} {}x{} {} {} {}\nwant\n{}got\n{}",
                    simd,
                    s,
                    rows,
                    cols,
                    rule,
                    outside,
                    order,
                    want,
                    fast
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn small_shapes_match_oracle(
            rows in strategies::small_rows(),
            cols in strategies::small_cols(),
            bits in prop::collection::vec(any::<bool>(), 1..700),
            rule in arb_rule(), outside in strategies::outside(), order in arb_order(),
        ) {
            check(rows, cols, bits, rule, outside, order, 3)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn big_shapes_match_oracle(
            rows in strategies::edge_rows(),
            cols in strategies::edge_cols(),
            bits in prop::collection::vec(any::<bool>(), 1000..3000),
            rule in arb_rule(), outside in strategies::outside(), order in arb_order(),
        ) {
            check(rows, cols, bits, rule, outside, order, 3)?;
        }
    }
}
