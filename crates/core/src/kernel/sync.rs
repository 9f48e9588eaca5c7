//! The buffered (sync) Moore step: every cell's next state from the old grid, word-parallel.
//!
//! Per output vector of `N` consecutive words of a row (the clone's row vector, see
//! [`crate::simd`]: 4 words = 256 cells from AVX2 up, 2 with SSE2, 1 scalar; on AVX-512, 8
//! words when the padded row holds whole 8-word vectors, as 1024 columns do, see
//! [`whole_vectors`]; `results/kernels.md` has the figures):
//!
//! ```text
//!   hsum3_parts of the row below  10 ops  (computed once per row, reused by 3 output rows:
//!                                           the kernel walks down a column strip keeping
//!                                           the rows' sums in registers; with VBMI2 the
//!                                           cross-word shifts are 2 `vpshldq`, with
//!                                           `vpternlogq` the sums 2-4 ops)
//!   rule on the three row sums    6-13 ops (eval_rows: s = u + 2 v, a full adder for v and
//!                                           one threshold of three bits per u-slice; for
//!                                           count8 >= 5 that is 6 `vpternlogq`, or 13 ops
//!                                           without; other tables add the sums into
//!                                           redundant planes first, vsum3_redundant)
//!   mask of the row's last vector  1 op
//!   solid border                   1 op  (OR of the edge bits, whole vector on rows 0, rows-1)
//!   wall count                     2 ops (per-word popcount, added per lane)
//!   3 unaligned loads + 1 store
//! ```
//!
//! So about 20 logic ops per 256 cells for the chapter's rule (0.08 ops per cell; the binary
//! sum of [`vsum3`] and its mux tree took 28, and still serve rules known only at run time). In the
//! AVX-512 clones LLVM fuses many of them into `vpternlogq` (three-input logic) and, with
//! VBMI2, `vpshldq` (the cross-word shifts); see `results/kernels.md` for the instruction
//! census. Outside modes are handled entirely by [`Grid::prepare_edges`] (guard words and guard
//! rows), so the inner loop has no edge cases.
//!
//! **Which lanes.** This kernel puts the lanes across consecutive words of one row: the path
//! for big grids and for caves stepped one at a time. Small caves generated in bulk are stepped
//! in [`super::batch`] instead, one cave per lane (8 with AVX-512), which fills every lane of
//! the widest vectors whatever the row width; the fill writes those lanes directly, so nothing
//! is interleaved on the way in.

use super::adders::{
    Lane, SumTable, apply_count8_rows, apply_table, apply_table_rows, hsum3_parts, vsum3,
};
use crate::grid::Grid;

/// A Moore rule in the form the kernels evaluate: constant (monomorphised, folded) or dynamic.
pub trait RuleEval: Copy {
    /// The rule over (centre, walls in the 3x3).
    fn table(&self) -> SumTable;
    /// `Some(mask)` when the rule ignores the centre cell (`B == S`): the kernel then sums only
    /// the 8 neighbours and saves the centre mux (4-6 ops per vector for B5678/S5678).
    fn centre_free(&self) -> Option<u16>;

    /// Next state from one row's [`hsum3_parts`] above, here and below: the three 2-bit row
    /// sums go straight into the rule ([`apply_table_rows`]: 6 `vpternlogq` for a threshold
    /// such as `count8 >= 5`, see [`eval_rows`](super::adders::eval_rows)).
    #[inline(always)]
    fn next<V: Lane>(&self, above: &[V; 4], here: &[V; 4], below: &[V; 4], centre: V) -> V {
        let t = self.table();
        let (a, c) = ((above[0], above[1]), (below[0], below[1]));
        match self.centre_free() {
            // The centre row's sum without the centre (left + right), unless the rule ignores
            // the centre in sum9 terms too: then the 3x3 sum below needs no centre mux.
            Some(mask) if t.floor != t.wall => apply_count8_rows(mask, a, (here[2], here[3]), c),
            _ => apply_table_rows(t, centre, a, (here[0], here[1]), c),
        }
    }
}

/// A rule known at compile time: `B` and `S` are the birth/survive masks over count8.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstRule<const B: u16, const S: u16>;

impl<const B: u16, const S: u16> RuleEval for ConstRule<B, S> {
    #[inline(always)]
    fn table(&self) -> SumTable {
        const { SumTable::new(B, S) }
    }
    #[inline(always)]
    fn centre_free(&self) -> Option<u16> {
        if B == S { Some(B) } else { None }
    }
}

/// Any rule, evaluated by the full mux tree (19 muxes, ~57 ops per vector).
#[derive(Clone, Copy, Debug)]
pub struct DynRule(pub SumTable);

impl RuleEval for DynRule {
    #[inline(always)]
    fn table(&self) -> SumTable {
        self.0
    }
    #[inline(always)]
    fn centre_free(&self) -> Option<u16> {
        None
    }
    /// A table known only at run time does not fold, so the short mux tree over the binary
    /// sum (14 + 2 x 27 + 3 ops) beats the redundant planes' longer one.
    #[inline(always)]
    fn next<V: Lane>(&self, above: &[V; 4], here: &[V; 4], below: &[V; 4], centre: V) -> V {
        let p = vsum3(
            (above[0], above[1]),
            (here[0], here[1]),
            (below[0], below[1]),
        );
        apply_table(self.0, centre, &p)
    }
}

/// Whether `V::N = n` words per vector cover each row of `g` within its padded words
/// ([`Grid`] pads rows to a multiple of 4): always for 1, 2 or 4; for 8 when the padded row
/// is a multiple of 8 words (e.g. 1024 columns, or 257-512).
pub fn whole_vectors(g: &Grid, n: usize) -> bool {
    let wpr = g.words_per_row();
    wpr.next_multiple_of(n) <= wpr.next_multiple_of(4)
}

/// One sync step `src -> dst` on prepared edges, lanes across the words of a row (`V::N` words
/// per vector, [`whole_vectors`] of `src`). `src` must have had [`Grid::prepare_edges`] called; `dst`
/// must have the same shape. The last vector of each row is masked, so `dst`'s padding bits and
/// words end zero with no extra pass. Returns the number of WALL cells of `dst`.
///
/// With `solid_border` the outer ring is forced to WALL as each vector is stored (one OR per
/// vector), instead of a second pass over the grid.
#[inline(always)]
pub fn step_grid<V: Lane, R: RuleEval>(
    src: &Grid,
    dst: &mut Grid,
    rule: R,
    solid_border: bool,
) -> u64 {
    assert_eq!((src.rows(), src.cols()), (dst.rows(), dst.cols()));
    assert!(
        whole_vectors(src, V::N),
        "row vectors within the padded row"
    );
    let rows = src.rows() as isize;
    let stride = src.stride();
    let wpr = src.words_per_row();
    assert_eq!(src.raw().len(), (src.rows() + 2) * stride);
    assert_eq!(dst.raw().len(), src.raw().len());
    let nvec = wpr.div_ceil(V::N);
    let raw = src.raw().as_ptr();
    // SAFETY (every `read`/`write` below): offsets are `base + stride * (y + 1) + {-1, 0, 1}`
    // for rows -1..=rows of vector `i < nvec`; a row slot holds a guard word, the row's words
    // padded to a multiple of 4 >= nvec * N (asserted above), and a guard word, so every access stays inside
    // the buffer of (rows + 2) * stride words, as asserted above.
    let last = V::from_fn(|k| {
        let w = V::N * (nvec - 1) + k;
        match w.cmp(&(wpr - 1)) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => src.last_word_mask(),
            std::cmp::Ordering::Greater => 0,
        }
    });
    // The border: bit 0 of word 0 and the last column's bit, on every row.
    let lc = src.cols() - 1;
    let edge_of = |i: usize| {
        V::from_fn(|k| {
            let w = V::N * i + k;
            let mut e = 0u64;
            if solid_border && w == 0 {
                e |= 1;
            }
            if solid_border && w == lc / 64 {
                e |= 1u64 << (lc % 64);
            }
            e
        })
    };
    let out = dst.raw_mut().as_mut_ptr();
    let mut count = V::ZERO;
    for i in 0..nvec {
        let m = if i + 1 == nvec { last } else { V::ONES };
        // Border bits of this vector, and the all-wall value of the first and last rows.
        let e = edge_of(i);
        let full = if solid_border { m } else { V::ZERO };
        let base = src.row_offset(-1) + V::N * i;
        // SAFETY: rows -1..=rows of vector `i`: inside the buffer (the note above `last`).
        let mut above = unsafe { hrow::<V>(raw, base) };
        // SAFETY: rows -1..=rows of vector `i`: inside the buffer (the note above `last`).
        let mut here = unsafe { hrow::<V>(raw, base + stride) };
        for y in 0..rows {
            let o = base + (y as usize + 1) * stride;
            // SAFETY: rows -1..=rows of vector `i`: inside the buffer (the note above `last`).
            let below = unsafe { hrow::<V>(raw, o + stride) };
            // SAFETY: rows -1..=rows of vector `i`: inside the buffer (the note above `last`).
            let mut v = (rule.next(&above, &here, &below, unsafe { V::read(raw.add(o)) }) & m) | e;
            if y == 0 || y == rows - 1 {
                v |= full;
            }
            // SAFETY: as for the loads; `dst` has `src`'s shape.
            unsafe { v.write(out.add(o)) };
            count = count.add(v.popcnt());
            above = here;
            here = below;
        }
    }
    count.sum()
}

/// [`hsum3_parts`] of the vector at `raw + o` with its neighbour words.
///
/// # Safety
/// `raw + o - 1 .. raw + o + N + 1` must be readable.
#[inline(always)]
unsafe fn hrow<V: Lane>(raw: *const u64, o: usize) -> [V; 4] {
    // SAFETY: the caller's guarantee.
    unsafe {
        hsum3_parts(
            V::read(raw.add(o - 1)),
            V::read(raw.add(o)),
            V::read(raw.add(o + 1)),
        )
    }
}
