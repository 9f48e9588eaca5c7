//! Caves in lanes: a batch of `V::N` caves of one shape stepped in lock-step, lane `k` of every
//! vector belonging to cave `k` (8 caves per vector with AVX-512, 4 with AVX2).
//!
//! Why: a 90x140 cave has rows of 3 words, so the row kernel of [`super::sync`] leaves a lane of
//! its 4-word vectors idle and needs unaligned loads; with one cave per lane every lane works,
//! every load is aligned, and the vectors can be as wide as the CPU has (the row kernel's are
//! tied to the grid's 4-word row padding). The Bernoulli fill writes these lanes directly
//! (`crate::fill::bernoulli_lanes`), so nothing is interleaved on the way in; each cave is
//! copied out to its own [`Grid`] once, after the last step, to be measured.
//!
//! Layout: like [`Grid`] (guard word each side of a row, guard rows above and below, the guard
//! rows and padding bits zero between steps), but a row is `wpr` vectors with no rounding, so
//! `stride = wpr + 2`. The side guards are read only when the outside wraps, after
//! [`LaneGrid::prepare_edges`] has written them: for FLOOR and WALL the step takes them as a
//! constant, which keeps their cache lines (2 of a 90x140 batch's 5 per row) out of L1. The step kernel is the row kernel's arithmetic with the neighbour words
//! taken from the neighbouring vectors instead of shifted loads; it also counts each lane's
//! walls for the trajectory: per vector in the AVX-512 clones (one `vpopcntq` with VPOPCNTDQ),
//! carry-save over four rows with one popcount per four in the others (AVX2's `vpshufb` nibble
//! table costs 8 ops a vector; see `WallCount` below).

use super::adders::{Lane, full_add, hsum3_parts};
use super::sync::RuleEval;
use crate::grid::Grid;
use crate::rule::Outside;

/// 64 bytes, aligned like the widest vector.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Block([u64; 8]);

/// An owned, 64-byte aligned buffer that holds a batch for any lane width: the generator keeps
/// one and views it as the lanes of whichever clone runs ([`LaneBuf::view`]).
#[derive(Debug, Clone, Default)]
pub struct LaneBuf {
    data: Vec<Block>,
}

impl LaneBuf {
    /// View the buffer as a `rows x cols` batch of `V::N` caves, growing it if needed. The
    /// contents are whatever the buffer held (the fill or a step overwrites them).
    pub fn view<V: Lane>(&mut self, rows: usize, cols: usize) -> LaneGrid<'_, V> {
        let len = (rows + 2) * (cols.div_ceil(64) + 2);
        LaneGrid::new(rows, cols, self.vectors::<V>(len))
    }

    /// The first `len` vectors of the buffer, growing it if needed (scratch for a kernel).
    pub fn vectors<V: Lane>(&mut self, len: usize) -> &mut [V] {
        let need = (len * V::N).div_ceil(8);
        if self.data.len() < need {
            self.data.resize(need, Block::default());
        }
        assert!(
            std::mem::size_of::<V>() == 8 * V::N
                && std::mem::align_of::<V>() <= std::mem::align_of::<Block>()
        );
        // SAFETY: `Lane` is an unsafe trait whose implementors are plain `[u64; N]` layouts
        // (size 8 N, alignment at most 64, every bit pattern valid), so `need` blocks hold at
        // least `len` V values, suitably aligned.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr() as *mut V, len) }
    }
}

impl LaneBuf {
    /// Copy cave `k` of the batch this buffer holds into `g`, which gives the batch's shape;
    /// `lanes` is the lane count of the clone whose view ([`LaneBuf::view`]) made it. For one
    /// cave wanted out of a batch (~270 scalar loads for 90x140), on any clone without
    /// dispatch; [`LaneGrid::lanes_to_grids`] copies a whole batch.
    pub fn lane_to_grid(&self, lanes: usize, k: usize, g: &mut Grid) {
        let (rows, cols) = (g.rows(), g.cols());
        let stride = cols.div_ceil(64) + 2;
        assert!(k < lanes && lanes <= 8 && (rows + 2) * stride * lanes <= self.data.len() * 8);
        // Vector `i` of the view holds lane `k` at word `i * lanes + k` of the buffer.
        let word = |i: usize| {
            let j = i * lanes + k;
            self.data[j / 8].0[j % 8]
        };
        for y in 0..rows {
            let o = (y + 1) * stride + 1;
            for (w, dst) in g.row_mut(y).iter_mut().enumerate() {
                *dst = word(o + w);
            }
        }
    }
}

/// Rows ahead of the copy-out whose grid lines [`LaneGrid::lanes_to_grids`] prefetches.
const PREFETCH_ROWS: usize = 4;

/// Ask for the cache line of `p` (a hint: never faults, whatever `p`).
#[inline(always)]
fn prefetch(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is SSE (x86-64 baseline) and only a hint; it does not fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A batch of caves of one shape, interleaved (see the module docs), borrowed from a
/// [`LaneBuf`] or any slice.
#[derive(Debug)]
pub struct LaneGrid<'a, V: Lane> {
    rows: usize,
    cols: usize,
    wpr: usize,
    stride: usize,
    data: &'a mut [V],
}

impl<'a, V: Lane> LaneGrid<'a, V> {
    /// A batch over `data`, which must hold `(rows + 2) * (ceil(cols / 64) + 2)` vectors.
    pub fn new(rows: usize, cols: usize, data: &'a mut [V]) -> LaneGrid<'a, V> {
        let wpr = cols.div_ceil(64);
        let stride = wpr + 2;
        assert!(rows > 0 && cols > 0 && data.len() >= (rows + 2) * stride);
        LaneGrid {
            rows,
            cols,
            wpr,
            stride,
            data,
        }
    }

    /// Rows of every cave in the batch.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns (cells per row) of every cave in the batch.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The whole buffer: `(rows + 2) * (wpr + 2)` vectors, guard rows included.
    pub fn raw_mut(&mut self) -> &mut [V] {
        let n = (self.rows + 2) * self.stride;
        &mut self.data[..n]
    }

    #[inline(always)]
    fn off(&self, y: isize) -> usize {
        ((y + 1) as usize) * self.stride + 1
    }

    /// Index in [`LaneGrid::raw_mut`] of word 0 of row `y` (`-1` and `rows`: the guard rows).
    #[inline(always)]
    pub fn row_offset(&self, y: isize) -> usize {
        self.off(y)
    }

    /// Mask of the valid bits of a row's last word, in every lane.
    #[inline(always)]
    fn last_mask(&self) -> V {
        V::splat(match self.cols % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        })
    }

    /// Copy caves `0..grids.len()` out, cave `k` into `grids[k]` (all shaped like this batch).
    /// One pass over the batch: a [`Grid`] row slot is a multiple of 4 words (the row's words,
    /// then zero padding), so each group of 4 row words (zero past the row's end) is transposed
    /// from the lanes into one 4-word store per cave ([`Lane::write_lanes4`]: 8 shuffles and
    /// 8 32-byte stores per row group of an AVX-512 batch, against 24 extractions and 8-byte
    /// stores before).
    #[inline(always)]
    pub fn lanes_to_grids<G: AsMut<Grid>>(&self, grids: &mut [G]) {
        assert!(grids.len() <= V::N);
        let mut ptrs = [std::ptr::null_mut::<u64>(); 8];
        let (mut gstride, mut gfirst) = (0, 0);
        let slot = self.wpr.next_multiple_of(4);
        for (p, g) in ptrs.iter_mut().zip(grids.iter_mut()) {
            let g = g.as_mut();
            assert_eq!((g.rows(), g.cols()), (self.rows, self.cols));
            (gstride, gfirst) = (g.stride(), g.row_offset(0));
            // Every row slot (padding included) lies inside the buffer.
            assert!(
                gstride >= slot && gfirst + (self.rows - 1) * gstride + slot <= g.raw_mut().len()
            );
            *p = g.raw_mut().as_mut_ptr();
        }
        let n = grids.len();
        for y in 0..self.rows {
            let o = self.off(y as isize);
            let go = gfirst + y * gstride;
            if y + PREFETCH_ROWS < self.rows {
                // The grids were pushed out of L1 by the batch's fill and steps; asking for
                // their lines a few rows ahead keeps the stores from waiting on each miss.
                for &p in &ptrs[..n] {
                    prefetch(p.wrapping_add(go + PREFETCH_ROWS * gstride));
                }
            }
            for w in (0..self.wpr).step_by(4) {
                let v: [V; 4] = std::array::from_fn(|j| {
                    if w + j < self.wpr {
                        self.data[o + w + j]
                    } else {
                        V::ZERO
                    }
                });
                // Pointers past the grids are null and never written (`wrapping_add`).
                let dst = ptrs.map(|p| p.wrapping_add(go + w));
                // SAFETY: words `go + w .. go + w + 4` lie in row `y`'s slot of each of the
                // first `n` grids (checked above: `w + 4 <= slot`), which are distinct (`&mut`).
                unsafe { V::write_lanes4(v, &dst, n) };
            }
        }
    }

    /// Put `grids` (at most `V::N`, shaped like this batch) into lanes `0..`, one vector store
    /// per word of a row; lanes past the grids get the last grid again (a throwaway copy, so
    /// every lane holds a valid cave).
    pub fn grids_to_lanes<'g>(&mut self, grids: impl Iterator<Item = &'g Grid>) {
        let mut g: [Option<&Grid>; 8] = [None; 8];
        let mut n = 0;
        for (slot, grid) in g.iter_mut().zip(grids) {
            assert_eq!((grid.rows(), grid.cols()), (self.rows, self.cols));
            *slot = Some(grid);
            n += 1;
        }
        assert!(n > 0 && n <= V::N);
        let g: [&Grid; 8] = std::array::from_fn(|k| g[k.min(n - 1)].expect("filled up to n"));
        let o0 = g[0].row_offset(0);
        let gstride = g[0].stride();
        for y in 0..self.rows {
            let o = self.off(y as isize);
            let go = o0 + y * gstride;
            for w in 0..self.wpr {
                self.data[o + w] = V::from_fn(|k| g[k].raw()[go + w]);
            }
        }
    }

    /// Put `g` (shaped like this batch) into lane `k`.
    pub fn grid_to_lane(&mut self, k: usize, g: &Grid) {
        assert_eq!((g.rows(), g.cols()), (self.rows, self.cols));
        for y in 0..self.rows {
            let o = self.off(y as isize);
            for (w, &src) in g.row(y).iter().enumerate() {
                self.data[o + w].set(k, src);
            }
        }
    }

    /// Zero every vector outside the caves (guards, padding bits).
    #[inline(always)]
    pub fn clear_edges(&mut self) {
        let (rows, wpr, stride) = (self.rows, self.wpr, self.stride);
        let mask = self.last_mask();
        self.data[..stride].fill(V::ZERO);
        self.data[(rows + 1) * stride..(rows + 2) * stride].fill(V::ZERO);
        for y in 0..rows {
            let o = self.off(y as isize);
            self.data[o - 1] = V::ZERO;
            self.data[o + wpr] = V::ZERO;
            self.data[o + wpr - 1] &= mask;
        }
    }

    /// Zero the guard rows above and below the caves, and nothing else: all a step's
    /// destination needs before [`step_lanes`] writes every row of it (side guards it never
    /// reads unless outside wraps, and then [`LaneGrid::prepare_edges`] writes them first).
    ///
    /// Why not [`LaneGrid::clear_edges`]: on a buffer last touched a batch ago, its stores
    /// pull two guard lines and a row line per row into L1 (~280 lines for a 90x140 batch),
    /// measured at a tenth of chapter-strict's four steps.
    #[inline(always)]
    pub fn clear_guard_rows(&mut self) {
        let (rows, stride) = (self.rows, self.stride);
        self.data[..stride].fill(V::ZERO);
        self.data[(rows + 1) * stride..(rows + 2) * stride].fill(V::ZERO);
    }

    /// Undo [`LaneGrid::prepare_edges`]`(outside)`: zero what it wrote (nothing for FLOOR; the
    /// guard rows and padding bits for WALL, whose side guards it leaves alone; every guard and
    /// padding bit for wrap).
    #[inline(always)]
    pub fn restore_edges(&mut self, outside: Outside) {
        match outside {
            Outside::Floor => {}
            Outside::Wall => {
                self.clear_guard_rows();
                let mask = self.last_mask();
                for y in 0..self.rows {
                    let o = self.off(y as isize) + self.wpr - 1;
                    self.data[o] &= mask;
                }
            }
            _ => self.clear_edges(),
        }
    }

    /// Write what cells outside the caves read as into the guards and padding bits, as
    /// [`Grid::prepare_edges`] does for one grid. Undone by [`LaneGrid::restore_edges`].
    ///
    /// WALL leaves the side guards alone: [`step_lanes`] takes them as a constant when the
    /// outside is FLOOR or WALL (its `guard`), so only wrapping needs them written.
    #[inline(always)]
    pub fn prepare_edges(&mut self, outside: Outside) {
        if outside == Outside::Floor {
            return; // guard rows are zero between steps; side guards are a constant
        }
        let (rows, cols, wpr, stride) = (self.rows, self.cols, self.wpr, self.stride);
        let rpad = (cols % 64) as u32;
        let mask = self.last_mask();
        for y in 0..rows {
            let o = self.off(y as isize);
            let last = self.data[o + wpr - 1];
            if outside == Outside::Wall {
                self.data[o + wpr - 1] = last | !mask;
            } else {
                // Wrap: bit 63 of the left guard is the row's last cell, the first padding
                // bit (or bit 0 of the right guard) its first cell.
                let lastbit =
                    self.data[o + (cols - 1) / 64].shr((cols as u32 - 1) % 64) & V::splat(1);
                let first = self.data[o] & V::splat(1);
                self.data[o - 1] = lastbit.shl(63);
                if rpad == 0 {
                    self.data[o + wpr] = first;
                } else {
                    self.data[o + wpr] = V::ZERO;
                    self.data[o + wpr - 1] = last | first.shl(rpad);
                }
            }
        }
        let top = 0..stride;
        let bottom = (rows + 1) * stride..(rows + 2) * stride;
        if outside == Outside::Wall {
            self.data[top].fill(V::ONES);
            self.data[bottom].fill(V::ONES);
        } else {
            self.data.copy_within(rows * stride..(rows + 1) * stride, 0);
            self.data
                .copy_within(stride..2 * stride, (rows + 1) * stride);
        }
    }

    /// Walls per lane.
    #[inline(always)]
    pub fn count_walls(&self) -> V {
        let mut n = V::ZERO;
        for y in 0..self.rows {
            let o = self.off(y as isize);
            for &v in &self.data[o..o + self.wpr] {
                n = n.add(v.popcnt());
            }
        }
        n
    }
}

/// One sync step of every cave `src -> dst` (edges prepared on `src`); with `solid_border`
/// the outer ring is forced to WALL as the vectors are stored. `guard`: what the side guards
/// hold when it is the same everywhere (outside FLOOR or WALL), taken as a constant instead of
/// loaded; `None` (wrap) loads them. Masks `dst`'s padding bits and leaves its guards alone.
/// Returns the walls of `dst` per lane.
///
/// With `solid_border` the first and last rows are all WALL whatever the rule says, so they are
/// stored without being computed (2 of the chapter's 90 rows), and the inner loop has no
/// per-row test.
#[inline(always)]
pub fn step_lanes<V: Lane, R: RuleEval>(
    src: &LaneGrid<'_, V>,
    dst: &mut LaneGrid<'_, V>,
    rule: R,
    solid_border: bool,
    guard: Option<V>,
) -> V {
    assert_eq!((src.rows, src.cols), (dst.rows, dst.cols));
    let (rows, wpr, stride) = (src.rows, src.wpr, src.stride);
    assert!(src.data.len() >= (rows + 2) * stride && dst.data.len() >= (rows + 2) * stride);
    let d = src.data.as_ptr();
    let out = dst.data.as_mut_ptr();
    let mask = src.last_mask();
    let lc = src.cols - 1;
    // Rows computed from the rule: all, or with a solid border all but the first and last.
    let (first, end) = if solid_border {
        (1, rows.saturating_sub(1).max(1))
    } else {
        (0, rows)
    };
    let mut count = V::ZERO;
    for w in 0..wpr {
        let m = if w + 1 == wpr { mask } else { V::ONES };
        let mut edge = 0u64;
        if solid_border && w == 0 {
            edge |= 1;
        }
        if solid_border && w == lc / 64 {
            edge |= 1u64 << (lc % 64);
        }
        let e = V::splat(edge);
        let base = src.off(-1) + w;
        // SAFETY (all reads and writes below): indices are `base + stride * r + {-1, 0, 1}`
        // for r in 0..=rows + 1 and w < wpr, inside the (rows + 2) * stride vectors asserted.
        if solid_border {
            // The ring rows: every valid bit set.
            let walls = m.popcnt();
            // SAFETY: row 1 of this column: inside the (rows + 2) * stride buffer (note above).
            unsafe { *out.add(base + stride) = m };
            count = count.add(walls);
            if rows > 1 {
                // SAFETY: row `rows` of this column: inside the buffer (note above).
                unsafe { *out.add(base + rows * stride) = m };
                count = count.add(walls);
            }
        }
        if first >= end {
            continue;
        }
        // The middle words of a row need neither the mask nor border bits: one op less.
        let g = guard.unwrap_or(V::ZERO);
        let (lc, rc) = (guard.is_some() && w == 0, guard.is_some() && w + 1 == wpr);
        let ys = first..end;
        // SAFETY: as above.
        count = unsafe {
            match (edge == 0 && w + 1 < wpr, lc, rc) {
                (true, false, _) => {
                    strip::<V, R, false, 0>(d, out, base, stride, ys, rule, m, e, g, count)
                }
                (_, false, false) => {
                    strip::<V, R, true, 0>(d, out, base, stride, ys, rule, m, e, g, count)
                }
                (_, true, false) => {
                    strip::<V, R, true, 1>(d, out, base, stride, ys, rule, m, e, g, count)
                }
                (_, false, true) => {
                    strip::<V, R, true, 2>(d, out, base, stride, ys, rule, m, e, g, count)
                }
                (_, true, true) => {
                    strip::<V, R, true, 3>(d, out, base, stride, ys, rule, m, e, g, count)
                }
            }
        };
    }
    count
}

/// Rows `ys` (non-empty) of the word column at `base` (the vector above row 0) stepped from `d`
/// to `out`, each output `& m | e` when `FIX`; returns `count` plus their walls.
///
/// The walls (the trajectory's count) are counted as [`WallCount`] does: per vector in the
/// AVX-512 clones, carry-save over four rows in the others (AVX2, SSE2, scalar).
///
/// # Safety
/// `d` and `out` must hold the rows `ys.start - 1 ..= ys.end` of the column and the vectors
/// beside them (`base + stride * (y + 1) + {-1, 0, 1}`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn strip<V: Lane, R: RuleEval, const FIX: bool, const G: u8>(
    d: *const V,
    out: *mut V,
    base: usize,
    stride: usize,
    ys: std::ops::Range<usize>,
    rule: R,
    m: V,
    e: V,
    g: V,
    count: V,
) -> V {
    // One row: step it, store it, and return the stored vector.
    // SAFETY (in `row`): the caller's guarantee, for `y` in `ys`.
    #[inline(always)]
    unsafe fn row<V: Lane, R: RuleEval, const FIX: bool, const G: u8>(
        d: *const V,
        out: *mut V,
        o: usize,
        stride: usize,
        rule: R,
        (m, e, g): (V, V, V),
        (above, here): (&mut [V; 4], &mut [V; 4]),
    ) -> V {
        // SAFETY: the caller's guarantee for this row (the note above `row`).
        unsafe {
            let below = hrow::<V, G>(d, o + stride, g);
            let mut v = rule.next(above, here, &below, *d.add(o));
            if FIX {
                v = (v & m) | e;
            }
            *out.add(o) = v;
            *above = *here;
            *here = below;
            v
        }
    }
    let mut walls = WallCount::new(count);
    // SAFETY: the caller's guarantee.
    unsafe {
        let mut above = hrow::<V, G>(d, base + ys.start * stride, g);
        let mut here = hrow::<V, G>(d, base + (ys.start + 1) * stride, g);
        let mut y = ys.start;
        if WallCount::<V>::CARRY_SAVE {
            while y + 4 <= ys.end {
                let mut vs = [V::ZERO; 4];
                for (j, v) in vs.iter_mut().enumerate() {
                    let o = base + (y + j + 1) * stride;
                    *v = row::<V, R, FIX, G>(
                        d,
                        out,
                        o,
                        stride,
                        rule,
                        (m, e, g),
                        (&mut above, &mut here),
                    );
                }
                walls.add4(vs);
                y += 4;
            }
        }
        while y < ys.end {
            let o = base + (y + 1) * stride;
            let v =
                row::<V, R, FIX, G>(d, out, o, stride, rule, (m, e, g), (&mut above, &mut here));
            walls.add(v);
            y += 1;
        }
    }
    walls.total()
}

/// Walls per lane of a stream of vectors.
///
/// In the AVX-512 clones each vector is counted as it comes: with VPOPCNTDQ that is one
/// `vpopcntq`, which the adders could not beat. (The clone without VPOPCNTDQ, Skylake-X's, pays
/// the nibble table per vector and would gain from the adders too, but the lane type, which
/// picks the method, is the same `W8` in both AVX-512 clones.) In the others (AVX2: the
/// `vpshufb` nibble table, 8 ops per vector with the add; SSE2 and the scalar baseline: a
/// shift-and-mask tree), four vectors are first added bitwise into running
/// ones and twos planes, Harley-Seal style: `ones + v0 + v1 -> (ones, t0)`, `ones + v2 + v3 ->
/// (ones, t1)`, `twos + t0 + t1 -> (twos, f)`, three full adders of 5 ops, and only `f` (worth
/// 4 each) is counted per group: 23 ops per 4 vectors against 32. The planes are counted once,
/// at the end.
struct WallCount<V: Lane> {
    /// Walls counted so far (units of one).
    n: V,
    /// Popcounts of the fours planes (units of four).
    fours: V,
    ones: V,
    twos: V,
}

impl<V: Lane> WallCount<V> {
    /// Whether [`WallCount::add4`] adds carry-save (else it counts each vector).
    const CARRY_SAVE: bool = !V::TERNLOG;

    #[inline(always)]
    fn new(n: V) -> WallCount<V> {
        WallCount {
            n,
            fours: V::ZERO,
            ones: V::ZERO,
            twos: V::ZERO,
        }
    }

    #[inline(always)]
    fn add(&mut self, v: V) {
        self.n = self.n.add(v.popcnt());
    }

    #[inline(always)]
    fn add4(&mut self, [v0, v1, v2, v3]: [V; 4]) {
        debug_assert!(Self::CARRY_SAVE);
        let (ones, t0) = full_add(self.ones, v0, v1);
        let (ones, t1) = full_add(ones, v2, v3);
        let (twos, f) = full_add(self.twos, t0, t1);
        self.ones = ones;
        self.twos = twos;
        self.fours = self.fours.add(f.popcnt());
    }

    #[inline(always)]
    fn total(self) -> V {
        let n = self.n.add(self.ones.popcnt());
        n.add(self.twos.popcnt().shl(1)).add(self.fours.shl(2))
    }
}

/// [`hsum3_parts`] of vector `o` with the vectors beside it (the same row's previous and next
/// words).
///
/// # Safety
/// `d + o - 1 ..= d + o + 1` must be readable.
#[inline(always)]
unsafe fn hrow<V: Lane, const G: u8>(d: *const V, o: usize, g: V) -> [V; 4] {
    // SAFETY: the caller's guarantee.
    unsafe {
        let before = if G & 1 != 0 { g } else { *d.add(o - 1) };
        let after = if G & 2 != 0 { g } else { *d.add(o + 1) };
        hsum3_parts(before, *d.add(o), after)
    }
}

/// Caves stepped in lanes on a SIMD path, for callers outside the generator (benches, tests):
/// [`Lanes::load`] interleaves grids into the lanes, [`Lanes::run_pass`] steps them, and
/// [`Lanes::store`] copies them out. The generator itself never interleaves: its fill writes
/// the lanes directly.
#[derive(Debug)]
pub struct Lanes {
    simd: crate::simd::Simd,
    rows: usize,
    cols: usize,
    bufs: [LaneBuf; 2],
    cur: usize,
}

impl Lanes {
    /// A batch of `simd.lanes()` caves of `rows x cols`.
    pub fn new(simd: crate::simd::Simd, rows: usize, cols: usize) -> Lanes {
        Lanes {
            simd,
            rows,
            cols,
            bufs: Default::default(),
            cur: 0,
        }
    }

    /// Caves per batch.
    pub fn lanes(&self) -> usize {
        self.simd.lanes()
    }

    /// Put `grids` (at most [`Lanes::lanes`], all `rows x cols`) into lanes `0..grids.len()`;
    /// the other lanes hold empty caves.
    pub fn load(&mut self, grids: &[Grid]) {
        let simd = self.simd;
        crate::simd_run!(simd, <I> (l: &'a mut Lanes = self, grids: &'a [Grid] = grids) -> () {
            assert!(grids.len() <= <I::Lanes as Lane>::N);
            let mut a = l.bufs[0].view::<I::Lanes>(l.rows, l.cols);
            a.raw_mut().fill(<I::Lanes as Lane>::ZERO);
            for (k, g) in grids.iter().enumerate() {
                a.grid_to_lane(k, g);
            }
            l.cur = 0;
        });
    }

    /// The Bernoulli fill of the caves of `seeds` (at most [`Lanes::lanes`]; the other lanes
    /// repeat the last seed) straight into the lanes, exactly as the generator fills them.
    /// Returns the walls per lane.
    pub fn fill_bernoulli(
        &mut self,
        p: f64,
        seeds: &[u64],
    ) -> Result<[u64; 8], crate::fill::FillError> {
        assert!(!seeds.is_empty() && seeds.len() <= self.lanes());
        let th = crate::fill::Threshold::new(p)?;
        let simd = self.simd;
        Ok(crate::simd_run!(simd, <I> (
            l: &'a mut Lanes = self,
            th: crate::fill::Threshold = th,
            seeds: &'a [u64] = seeds,
        ) -> [u64; 8] {
            let n = <I::Lanes as Lane>::N;
            let mut rngs: [crate::rng::CaveRng; 8] =
                std::array::from_fn(|_| crate::rng::cave_rng(0));
            let lane_seeds: [u64; 8] = std::array::from_fn(|k| seeds[k.min(seeds.len() - 1)]);
            let mut a = l.bufs[0].view::<I::Lanes>(l.rows, l.cols);
            let c = crate::fill::bernoulli_lanes(
                a.raw_mut(),
                l.rows,
                l.cols,
                &[th; 8][..n],
                &lane_seeds[..n],
                &mut rngs[..n],
            );
            l.cur = 0;
            std::array::from_fn(|k| if k < n { c.get(k) } else { 0 })
        }))
    }

    /// Apply `pass` (a sync Moore pass, see [`super::sync_moore`], or a two-radius one that
    /// [`super::tworadius::lanes_fit`] accepts) `pass.repeat` times to every lane; returns the
    /// walls per lane after the last step.
    ///
    /// # Panics
    /// If the pass cannot run in lanes.
    pub fn run_pass(&mut self, pass: &crate::rule::Pass) -> [u64; 8] {
        let simd = self.simd;
        crate::simd_run!(simd, <I> (
            l: &'a mut Lanes = self,
            pass: &'a crate::rule::Pass = pass,
        ) -> [u64; 8] {
            let masks = super::sync_moore(pass);
            let two = super::tworadius::lanes_fit(pass);
            assert!(masks.is_some() || two.is_some(), "a pass that runs in lanes");
            let [b0, b1] = &mut l.bufs;
            let (mut a, mut b) = if l.cur == 0 {
                (b0.view::<I::Lanes>(l.rows, l.cols), b1.view(l.rows, l.cols))
            } else {
                (b1.view::<I::Lanes>(l.rows, l.cols), b0.view(l.rows, l.cols))
            };
            // As the pipeline does (`generate`'s steps phase): the destination needs only
            // its guard rows zeroed, since every step writes each of its rows.
            b.clear_guard_rows();
            let mut counts = [0u64; 8];
            for _ in 0..pass.repeat {
                let c = match (masks, two) {
                    (Some(m), _) => super::step_lanes(&mut a, &mut b, m, pass.outside, pass.border),
                    (None, Some(t)) => super::tworadius::step_two_radius_lanes(
                        &mut a,
                        &mut b,
                        t,
                        pass.outside,
                        pass.border,
                    ),
                    _ => unreachable!("asserted above"),
                };
                std::mem::swap(&mut a, &mut b);
                l.cur ^= 1;
                for (k, n) in counts.iter_mut().enumerate().take(<I::Lanes as Lane>::N) {
                    *n = c.get(k);
                }
            }
            counts
        })
    }

    /// Copy lanes `0..grids.len()` out to `grids`.
    pub fn store(&mut self, grids: &mut [Grid]) {
        let simd = self.simd;
        crate::simd_run!(simd, <I> (l: &'a mut Lanes = self, grids: &'a mut [Grid] = grids) -> () {
            let a = l.bufs[l.cur].view::<I::Lanes>(l.rows, l.cols);
            a.lanes_to_grids(grids);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::WallCount;
    use crate::rng::{CaveRng, cave_rng};
    use crate::simd::{Lane, W1, W2};
    use rand_core::Rng;

    /// The carry-save count equals the per-word popcounts for any mix of single vectors and
    /// groups of four (the order a strip adds them in), on the lane types without three-input
    /// logic (the clones with it count per word).
    fn check<V: Lane>(seed: u64) {
        let mut rng = cave_rng(seed);
        for case in 0..300 {
            let start = V::from_fn(|_| rng.next_u64() % 1000);
            let mut want: Vec<u64> = (0..V::N).map(|k| start.get(k)).collect();
            let mut w = WallCount::new(start);
            let groups = rng.next_u64() % 40;
            // Dense, sparse and random words, so every plane carries.
            let density = case % 3;
            let word = |rng: &mut CaveRng| {
                let x = rng.next_u64();
                match density {
                    0 => x | rng.next_u64(),
                    1 => x & rng.next_u64() & rng.next_u64(),
                    _ => x,
                }
            };
            for _ in 0..groups {
                let vs: [V; 4] = std::array::from_fn(|_| V::from_fn(|_| word(&mut rng)));
                for v in &vs {
                    for (k, n) in want.iter_mut().enumerate() {
                        *n += v.get(k).count_ones() as u64;
                    }
                }
                if !rng.next_u64().is_multiple_of(5) {
                    w.add4(vs);
                } else {
                    vs.iter().for_each(|&v| w.add(v));
                }
            }
            let got = w.total();
            for (k, &n) in want.iter().enumerate() {
                assert_eq!(got.get(k), n, "case {case} lane {k}");
            }
        }
    }

    #[test]
    fn carry_save_wall_count_matches_popcount() {
        const { assert!(WallCount::<u64>::CARRY_SAVE && WallCount::<W2>::CARRY_SAVE) };
        check::<u64>(1);
        check::<W1>(2);
        check::<W2>(3);
    }
}
