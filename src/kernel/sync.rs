//! The buffered (sync) Moore step: every cell's next state from the old grid, word-parallel.
//!
//! Per output vector of 4 words (256 cells, `wide::u64x4`, one AVX2 register):
//!
//! ```text
//!   hsum3_parts of the row below  10 ops  (computed once per row, reused by 3 output rows:
//!                                           the kernel walks down a 4-word column strip
//!                                           keeping the rows' sums in registers)
//!   vsum3 of three row sums       14 ops  -> planes of sum9 = walls in the 3x3 (0..9), or of
//!                                           count8 = the 8 neighbours when the rule ignores
//!                                           the centre (B == S, e.g. B5678/S5678)
//!   rule on the planes            4-20 ops (count8 >= 5: p3 | p2 & (p1 | p0) = 4)
//!   mask of the row's last vector  1 op
//!   solid border                   1 op  (OR of the edge bits, whole vector on rows 0, rows-1)
//!   3 unaligned loads + 1 store
//! ```
//!
//! So about 30 logic ops per 256 cells for the chapter's rule (0.12 ops per cell). With
//! `-C target-cpu=native` on this AVX-512 machine LLVM fuses many of them into `vpternlogq`
//! (three-input logic) and `vpshldq` (the cross-word shifts) on 256-bit registers; see
//! `results/kernels.md` for the instruction census. Outside modes are handled entirely by
//! [`Grid::prepare_edges`] (guard words and guard rows), so the inner loop has no edge cases.
//!
//! **Which lanes.** The production path puts the 4 lanes across 4 consecutive words of a row.
//! [`step_batch`] runs the same arithmetic on [`Batch4`] instead: four grids stepped in
//! lock-step, one grid per lane, which fills all four lanes on a 140-column grid (3 words, so the
//! row path leaves one lane idle) and needs only aligned loads. Measured side by side
//! (`cargo bench --bench kernels`, 4 steps of 90x140 per seed): 0.73 us on one grid, 0.86 us per
//! seed in lock-step once the interleaving in and out is paid, and 1024x1024 runs at 81e9 vs 64e9
//! cell updates/s. The kernel is bound by logic ops, not lanes, so the simpler per-grid layout
//! won; `Batch4` stays as the measured alternative (and for callers that already hold grids
//! interleaved).

use wide::u64x4;

use super::lanes::{Lane, SumTable, apply_count8, apply_table, hsum3_parts, vsum3};
use crate::grid::Grid;

/// A Moore rule in the form the kernels evaluate: constant (monomorphised, folded) or dynamic.
pub trait RuleEval: Copy {
    /// The rule over (centre, walls in the 3x3).
    fn table(&self) -> SumTable;
    /// `Some(mask)` when the rule ignores the centre cell (`B == S`): the kernel then sums only
    /// the 8 neighbours and saves the centre mux (4-6 ops per vector for B5678/S5678).
    fn centre_free(&self) -> Option<u16>;

    /// Next state from one row's [`hsum3_parts`] above, here and below.
    #[inline(always)]
    fn next<V: Lane>(&self, above: &[V; 4], here: &[V; 4], below: &[V; 4], centre: V) -> V {
        let t = self.table();
        match self.centre_free() {
            // In sum9 terms the rule still ignores the centre: use the 3x3 sum directly.
            _ if t.floor == t.wall => {
                let p = vsum3(
                    (above[0], above[1]),
                    (here[0], here[1]),
                    (below[0], below[1]),
                );
                apply_table(t, centre, &p)
            }
            Some(mask) => {
                let p = vsum3(
                    (above[0], above[1]),
                    (here[2], here[3]),
                    (below[0], below[1]),
                );
                apply_count8(mask, &p)
            }
            None => {
                let p = vsum3(
                    (above[0], above[1]),
                    (here[0], here[1]),
                    (below[0], below[1]),
                );
                apply_table(t, centre, &p)
            }
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
}

#[inline(always)]
fn load4(raw: &[u64], o: usize) -> u64x4 {
    debug_assert!(o + 4 <= raw.len());
    // SAFETY: callers pass offsets inside a row slot of a grid whose buffer holds
    // (rows + 2) * stride words; `step_grid` checks the shape once before the loop.
    unsafe {
        u64x4::from(std::ptr::read_unaligned(
            raw.as_ptr().add(o) as *const [u64; 4]
        ))
    }
}

#[inline(always)]
fn store4(raw: &mut [u64], o: usize, v: u64x4) {
    debug_assert!(o + 4 <= raw.len());
    // SAFETY: as for `load4`.
    unsafe { std::ptr::write_unaligned(raw.as_mut_ptr().add(o) as *mut [u64; 4], v.to_array()) }
}

/// One sync step `src -> dst` on prepared edges. `src` must have had
/// [`Grid::prepare_edges`] called; `dst` must have the same shape. The last vector of each row
/// is masked, so `dst`'s padding bits and words end zero with no extra pass.
///
/// With `solid_border` the outer ring is forced to WALL as each vector is stored (one OR per
/// vector), instead of a second pass over the grid.
pub fn step_grid<R: RuleEval>(src: &Grid, dst: &mut Grid, rule: R, solid_border: bool) {
    assert_eq!((src.rows(), src.cols()), (dst.rows(), dst.cols()));
    let rows = src.rows() as isize;
    let stride = src.stride();
    assert_eq!(src.raw().len(), (src.rows() + 2) * stride);
    let nvec = src.words_per_row().div_ceil(4);
    let raw = src.raw();
    let hrow = |o: usize| hsum3_parts(load4(raw, o - 1), load4(raw, o), load4(raw, o + 1));
    let mut last = [0u64; 4];
    for (k, m) in last.iter_mut().enumerate() {
        let w = 4 * (nvec - 1) + k;
        *m = match w.cmp(&(src.words_per_row() - 1)) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => src.last_word_mask(),
            std::cmp::Ordering::Greater => 0,
        };
    }
    // The border: bit 0 of word 0 and the last column's bit, on every row.
    let mut edge = [[0u64; 4]; 2]; // [first vector, last vector]
    if solid_border {
        edge[0][0] = 1;
        let lc = src.cols() - 1;
        edge[1][lc / 64 - 4 * (nvec - 1)] |= 1u64 << (lc % 64);
        if nvec == 1 {
            edge[0][lc / 64] |= 1u64 << (lc % 64);
        }
    }
    let last = u64x4::from(last);
    let out = dst.raw_mut();
    for i in 0..nvec {
        let m = if i + 1 == nvec { last } else { u64x4::MAX };
        // Border bits of this vector, and the all-wall value of the first and last rows.
        let e = u64x4::from(match i {
            0 => edge[0],
            _ if i + 1 == nvec => edge[1],
            _ => [0; 4],
        });
        let full = if solid_border { m } else { u64x4::ZERO };
        let base = src.row_offset(-1) + 4 * i;
        let mut above = hrow(base);
        let mut here = hrow(base + stride);
        for y in 0..rows {
            let o = base + (y as usize + 1) * stride;
            let below = hrow(o + stride);
            let mut v = (rule.next(&above, &here, &below, load4(raw, o)) & m) | e;
            if y == 0 || y == rows - 1 {
                v |= full;
            }
            store4(out, o, v);
            above = here;
            here = below;
        }
    }
}

/// Four grids of one shape, interleaved word by word so that lane `k` of every `u64x4` belongs
/// to grid `k`. Same guard layout as [`Grid`] (a guard word each side, guard rows), but with no
/// rounding of the row to 4 words: the 4 lanes run across grids, not along the row.
#[derive(Clone, Debug)]
pub struct Batch4 {
    rows: usize,
    cols: usize,
    wpr: usize,
    stride: usize,
    data: Vec<u64x4>,
}

impl Batch4 {
    /// A batch shaped like `g`.
    pub fn like(g: &Grid) -> Batch4 {
        let wpr = g.words_per_row();
        Batch4 {
            rows: g.rows(),
            cols: g.cols(),
            wpr,
            stride: wpr + 2,
            data: vec![u64x4::ZERO; (g.rows() + 2) * (wpr + 2)],
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }

    fn offset(&self, y: isize) -> usize {
        ((y + 1) as usize) * self.stride + 1
    }

    /// Interleave four grids (all shaped like this batch) into the lanes.
    pub fn load(&mut self, grids: [&Grid; 4]) {
        for g in grids {
            assert_eq!((g.rows(), g.cols()), (self.rows, self.cols));
        }
        for y in 0..self.rows {
            let o = self.offset(y as isize);
            let rows = grids.map(|g| g.row(y));
            for w in 0..self.wpr {
                self.data[o + w] = u64x4::from(rows.map(|r| r[w]));
            }
        }
    }

    /// De-interleave lane `k` into `g` (shaped like this batch).
    pub fn store_lane(&self, k: usize, g: &mut Grid) {
        assert_eq!((g.rows(), g.cols()), (self.rows, self.cols));
        for y in 0..self.rows {
            let o = self.offset(y as isize);
            for (w, dst) in g.row_mut(y).iter_mut().enumerate() {
                *dst = self.data[o + w].to_array()[k];
            }
        }
    }

    /// Prepare guards for `outside`, as [`Grid::prepare_edges`] does for one grid.
    pub fn prepare_edges(&mut self, outside: crate::rule::Outside) {
        use crate::rule::Outside;
        if outside == Outside::Floor {
            return; // guards are zero between steps
        }
        let (rows, cols, wpr, stride) = (self.rows, self.cols, self.wpr, self.stride);
        let rpad = (cols % 64) as u32;
        let mask = if rpad == 0 { !0u64 } else { (1u64 << rpad) - 1 };
        for y in 0..rows {
            let o = self.offset(y as isize);
            let last = self.data[o + wpr - 1];
            match outside {
                Outside::Floor => {
                    self.data[o - 1] = u64x4::ZERO;
                    self.data[o + wpr] = u64x4::ZERO;
                }
                Outside::Wall => {
                    self.data[o - 1] = u64x4::MAX;
                    self.data[o + wpr] = u64x4::MAX;
                    self.data[o + wpr - 1] = last | u64x4::splat(!mask);
                }
                Outside::Wrap => {
                    let lastbit = (self.data[o + (cols - 1) / 64] >> ((cols as u32 - 1) % 64))
                        & u64x4::splat(1);
                    let first = self.data[o] & u64x4::splat(1);
                    self.data[o - 1] = lastbit << 63;
                    if rpad == 0 {
                        self.data[o + wpr] = first;
                    } else {
                        self.data[o + wpr] = u64x4::ZERO;
                        self.data[o + wpr - 1] = last | (first << rpad);
                    }
                }
            }
        }
        let (top, bottom) = (0..stride, (rows + 1) * stride..(rows + 2) * stride);
        match outside {
            Outside::Floor => {
                self.data[top].fill(u64x4::ZERO);
                self.data[bottom].fill(u64x4::ZERO);
            }
            Outside::Wall => {
                self.data[top].fill(u64x4::MAX);
                self.data[bottom].fill(u64x4::MAX);
            }
            Outside::Wrap => {
                self.data.copy_within(rows * stride..(rows + 1) * stride, 0);
                self.data
                    .copy_within(stride..2 * stride, (rows + 1) * stride);
            }
        }
    }

    /// Zero the guards and padding bits again.
    pub fn clear_edges(&mut self) {
        let (rows, wpr, stride) = (self.rows, self.wpr, self.stride);
        let rpad = (self.cols % 64) as u32;
        let mask = u64x4::splat(if rpad == 0 { !0u64 } else { (1u64 << rpad) - 1 });
        self.data[..stride].fill(u64x4::ZERO);
        self.data[(rows + 1) * stride..].fill(u64x4::ZERO);
        for y in 0..rows {
            let o = self.offset(y as isize);
            self.data[o - 1] = u64x4::ZERO;
            self.data[o + wpr] = u64x4::ZERO;
            self.data[o + wpr - 1] &= mask;
        }
    }

    /// Force the outer ring of all four grids to WALL.
    pub fn solid_border(&mut self) {
        let (rows, cols, wpr) = (self.rows, self.cols, self.wpr);
        let rpad = (cols % 64) as u32;
        let mask = u64x4::splat(if rpad == 0 { !0u64 } else { (1u64 << rpad) - 1 });
        for y in [0, rows - 1] {
            let o = self.offset(y as isize);
            self.data[o..o + wpr].fill(u64x4::MAX);
            self.data[o + wpr - 1] = mask;
        }
        let last = cols - 1;
        let (lw, lb) = (last / 64, u64x4::splat(1u64 << (last % 64)));
        for y in 1..rows.saturating_sub(1) {
            let o = self.offset(y as isize);
            self.data[o] |= u64x4::splat(1);
            self.data[o + lw] |= lb;
        }
    }

    /// Walls per lane.
    pub fn count_walls(&self) -> [u64; 4] {
        let mut n = [0u64; 4];
        for y in 0..self.rows {
            let o = self.offset(y as isize);
            for v in &self.data[o..o + self.wpr] {
                for (k, w) in v.to_array().iter().enumerate() {
                    n[k] += w.count_ones() as u64;
                }
            }
        }
        n
    }
}

/// One sync step of a batch `src -> dst` (edges prepared on `src`); masks `dst`'s padding.
pub fn step_batch<R: RuleEval>(src: &Batch4, dst: &mut Batch4, rule: R) {
    assert_eq!((src.rows, src.cols), (dst.rows, dst.cols));
    let (rows, wpr, stride) = (src.rows, src.wpr, src.stride);
    let d = &src.data;
    let hrow = |o: usize| hsum3_parts(d[o - 1], d[o], d[o + 1]);
    let rpad = (src.cols % 64) as u32;
    let mask = u64x4::splat(if rpad == 0 { !0u64 } else { (1u64 << rpad) - 1 });
    for w in 0..wpr {
        let base = src.offset(-1) + w;
        let mut above = hrow(base);
        let mut here = hrow(base + stride);
        let m = if w + 1 == wpr { mask } else { u64x4::MAX };
        for y in 0..rows {
            let o = base + (y + 1) * stride;
            let below = hrow(o + stride);
            dst.data[o] = rule.next(&above, &here, &below, d[o]) & m;
            above = here;
            here = below;
        }
    }
}
