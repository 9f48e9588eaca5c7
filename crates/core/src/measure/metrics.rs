//! The per-cave metrics that are not plain component counts: boundary length, bit-parallel BFS
//! distances (path length and reach depth) and minimum width by erosion and dilation.
//!
//! All work on the planes of [`super::components`] (FLOOR = 1, zero guards). The BFS is the
//! expensive part, so it advances the whole frontier one distance step per sweep (a dilation of
//! the visited plane within FLOOR, double-buffered so the step is synchronous), computes only the
//! band of rows between the first and last rows that changed in the previous step (plus one on
//! each side), and for rows of at most 256 cells does each row as one 4-word vector (a handful of
//! AVX2 or AVX-512 instructions in those clones, see [`crate::simd`]).

use super::Connectivity;
use super::components::Layout;
use crate::simd::{Lane, Simd};

/// Number of 4-adjacent (FLOOR, WALL) pairs of cells inside the grid, from the floor plane:
/// popcounts of `row ^ (row >> 1)` (masked to pairs inside the grid) and `row ^ next row`.
pub(crate) fn boundary(simd: Simd, lay: &Layout, f: &[u64]) -> u64 {
    crate::simd_run!(simd, <I> (lay: &'a Layout = lay, f: &'a [u64] = f) -> u64 {
        boundary_in::<I::Row>(lay, f)
    })
}

#[inline(always)]
fn boundary_in<V: Lane>(lay: &Layout, f: &[u64]) -> u64 {
    let (w, w4, stride) = (lay.wpr, lay.w4, lay.stride);
    assert!(f.len() == lay.len());
    let mut n = V::ZERO;
    for c in (0..w4).step_by(V::N) {
        // Pairs (x, x + 1) need x + 1 < cols; bits past the grid are zero in `f` anyway.
        let valid = V::from_fn(|j| {
            let i = c + j;
            match (i + 1).cmp(&w) {
                std::cmp::Ordering::Less => !0,
                std::cmp::Ordering::Equal => lay.last_mask() >> 1,
                std::cmp::Ordering::Greater => 0,
            }
        });
        for y in 0..lay.rows {
            let o = lay.off(y as isize) + c;
            let (a, r) = (V::load(f, o), V::load(f, o + 1));
            // The last row's vertical pairs would meet the zero guard row: masked off.
            let dn = if y + 1 < lay.rows {
                V::load(f, o + stride)
            } else {
                a
            };
            let h = (a ^ (a.shr(1) | r.shl(63))) & valid;
            n = n.add(h.popcnt()).add((a ^ dn).popcnt());
        }
    }
    n.sum()
}

/// Scratch for [`Bfs::run`]: two visited planes (the step is synchronous: double buffered),
/// and for wide grids the frontier's cells, this step's and the next's.
#[derive(Debug, Default, Clone)]
pub(crate) struct Bfs {
    a: Vec<u64>,
    b: Vec<u64>,
    cur: Vec<u32>,
    next: Vec<u32>,
}

/// Grids wider than this many words a row (256 cells) run the BFS cell by cell
/// ([`Bfs::run_cells`]) instead of by bands of whole rows. A band step costs `band rows x row
/// words`: on a 90x140 cave that is a vector a row and the fastest there is, but on an open
/// 8192x8192 map the band holds thousands of rows of 128 words while the frontier (a diamond's
/// rim) is two cells a row, and the whole BFS cost `side^3 / 32` word operations (4.8 s). Cell
/// by cell it costs a few operations per reachable cell: O(cells) on any map. (A word-sparse
/// step was tried first: a word on a horizontally moving frontier changes on each of its 64
/// steps, so it was no faster.)
const CELLS_WPR: usize = 4;

/// What a BFS found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BfsResult {
    /// Steps from the spawn to the exit, if reached.
    pub path: Option<u32>,
    /// Largest distance to any reachable cell; only meaningful when the BFS ran to completion.
    pub depth: u32,
}

impl Bfs {
    /// BFS from FLOOR cell `spawn` over the floor plane `f`: one step dilates the whole visited
    /// set by one cell (within FLOOR). Stops once the exit is reached unless `full`; `exit` must
    /// be inside the grid if given.
    ///
    /// Only the band of rows next to rows that changed in the previous step can change, so only
    /// it is computed. The buffer written holds the state of two steps ago; outside the band
    /// that equals the current state (those rows did not change last step), so it stays valid.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        simd: Simd,
        lay: &Layout,
        f: &[u64],
        conn: Connectivity,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        // Cells are numbered in u32 (half the frontier's memory traffic): planes of up to 2**26
        // words, grids of up to about 4 billion cells.
        if lay.wpr > CELLS_WPR && lay.len() < 1 << 26 {
            self.run_cells(lay, f, conn, spawn, exit, full)
        } else {
            self.run_band(simd, lay, f, conn, spawn, exit, full)
        }
    }

    /// [`Bfs::run`] by bands of whole rows, a vector at a time.
    #[allow(clippy::too_many_arguments)]
    fn run_band(
        &mut self,
        simd: Simd,
        lay: &Layout,
        f: &[u64],
        conn: Connectivity,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        crate::simd_run!(simd, <I> (
            bfs: &'a mut Bfs = self,
            lay: &'a Layout = lay,
            f: &'a [u64] = f,
            conn: Connectivity = conn,
            spawn: (usize, usize) = spawn,
            exit: Option<(usize, usize)> = exit,
            full: bool = full,
        ) -> BfsResult {
            match conn {
                Connectivity::Four => bfs.run_in::<I::Row, false>(lay, f, spawn, exit, full),
                Connectivity::Eight => bfs.run_in::<I::Row, true>(lay, f, spawn, exit, full),
            }
        })
    }

    #[inline(always)]
    fn run_in<V: Lane, const EIGHT: bool>(
        &mut self,
        lay: &Layout,
        f: &[u64],
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        let rows = lay.rows;
        for p in [&mut self.a, &mut self.b] {
            p.clear();
            p.resize(lay.len(), 0);
        }
        let (sy, sx) = spawn;
        let si = lay.off(sy as isize) + sx / 64;
        self.a[si] |= 1u64 << (sx % 64);
        self.b[si] |= 1u64 << (sx % 64);
        let exit_at = exit.map(|(ey, ex)| (ey, lay.off(ey as isize) + ex / 64, 1u64 << (ex % 64)));
        let mut path = (exit == Some(spawn)).then_some(0);
        if path.is_some() && !full {
            return BfsResult { path, depth: 0 };
        }
        let (mut lo, mut hi) = (sy.saturating_sub(1), (sy + 1).min(rows - 1));
        let (mut src, mut dst) = (&mut self.a, &mut self.b);
        let mut step = 0u32;
        loop {
            step += 1;
            let (clo, chi) = band_step::<V, EIGHT>(src, dst, f, lay, lo, hi);
            if clo == usize::MAX {
                return BfsResult {
                    path,
                    depth: step - 1,
                };
            }
            if let Some((ey, ei, eb)) = exit_at
                && path.is_none()
                && (clo..=chi).contains(&ey)
                && dst[ei] & eb != 0
            {
                path = Some(step);
                if !full {
                    return BfsResult { path, depth: step };
                }
            }
            std::mem::swap(&mut src, &mut dst);
            lo = clo.saturating_sub(1);
            hi = (chi + 1).min(rows - 1);
        }
    }
}

impl Bfs {
    /// [`Bfs::run`] for wide grids, cell by cell: the frontier is a list of cells, each step
    /// visits its cells' neighbours once (a bit test and set in the visited plane), so the
    /// whole BFS costs a few operations per reachable cell however open the map is.
    /// Cells are numbered by bit position in the plane (`word * 64 + bit`), so a neighbour is
    /// an index plus a constant (the guard words and rows are WALL: no bounds checks).
    fn run_cells(
        &mut self,
        lay: &Layout,
        f: &[u64],
        conn: Connectivity,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        let s = lay.stride as i32 * 64;
        match conn {
            Connectivity::Four => self.cells_in(lay, f, &[-1, 1, -s, s], spawn, exit, full),
            Connectivity::Eight => self.cells_in(
                lay,
                f,
                &[-s - 1, -s, -s + 1, -1, 1, s - 1, s, s + 1],
                spawn,
                exit,
                full,
            ),
        }
    }

    #[inline(always)]
    fn cells_in<const K: usize>(
        &mut self,
        lay: &Layout,
        f: &[u64],
        steps: &[i32; K],
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        assert!(f.len() == lay.len());
        // The floor not yet reached: a cell is taken by clearing its bit. The guard rows and words
        // of `f` are zero (WALL), so a neighbour index needs no bounds check against the grid.
        let u = &mut self.a;
        u.clear();
        u.extend_from_slice(f);
        let cell = |(y, x): (usize, usize)| (lay.off(y as isize) * 64 + x) as u32;
        let start = cell(spawn);
        u[start as usize >> 6] &= !(1 << (start & 63));
        let mut path = (exit == Some(spawn)).then_some(0);
        if path.is_some() && !full {
            return BfsResult { path, depth: 0 };
        }
        let exit = exit.map(cell);
        let (cur, next) = (&mut self.cur, &mut self.next);
        cur.clear();
        cur.push(start);
        let mut step = 0u32;
        loop {
            step += 1;
            // Branch-free: every neighbour is written, the count moves on only for new cells
            // (whether a neighbour is new is a coin toss on an open map: a branch mispredicts).
            next.clear();
            next.reserve(cur.len() * K);
            let spare = next.spare_capacity_mut();
            let mut n = 0;
            for &i in cur.iter() {
                for &d in steps {
                    let j = i.wrapping_add_signed(d);
                    let (w, b) = (j as usize >> 6, 1u64 << (j & 63));
                    // Guard words and rows are WALL in `f`: j never leaves the plane.
                    let new = u[w] & b;
                    u[w] &= !b;
                    spare[n].write(j);
                    n += (new != 0) as usize;
                }
            }
            // SAFETY: the first n slots of the spare capacity were written just above (n counts
            // the slots kept, each written before n moved past it).
            unsafe { next.set_len(n) };
            if next.is_empty() {
                return BfsResult {
                    path,
                    depth: step - 1,
                };
            }
            if let Some(e) = exit
                && path.is_none()
                && (f[e as usize >> 6] & !u[e as usize >> 6]) & (1 << (e & 63)) != 0
            {
                path = Some(step);
                if !full {
                    return BfsResult { path, depth: step };
                }
            }
            std::mem::swap(cur, next);
        }
    }
}

/// One BFS step over rows `lo..=hi`, a vector of words at a time: every cell of `dst`
/// becomes `src` dilated by one step (4 or 8 neighbours) within FLOOR. Returns the first and
/// last changed rows (`usize::MAX, 0` if none changed).
#[inline(always)]
fn band_step<V: Lane, const EIGHT: bool>(
    src: &[u64],
    dst: &mut [u64],
    f: &[u64],
    lay: &Layout,
    lo: usize,
    hi: usize,
) -> (usize, usize) {
    let (w4, stride) = (lay.w4, lay.stride);
    assert!(src.len() == lay.len() && dst.len() == lay.len() && f.len() == lay.len());
    assert!(hi < lay.rows);
    let (s, d, fp) = (src.as_ptr(), dst.as_mut_ptr(), f.as_ptr());
    let (mut clo, mut chi) = (usize::MAX, 0usize);
    // Half-open range: cheaper loop control than `lo..=hi`.
    for y in lo..hi + 1 {
        let o = lay.off(y as isize);
        let mut diff = V::ZERO;
        for c in (0..w4).step_by(V::N) {
            let p = o + c;
            // SAFETY: rows lo - 1 ..= hi + 1 (guard rows included) and the guard words beside
            // each chunk (rows are padded to 4 words, a multiple of N) lie inside planes of
            // `lay.len()` words, as asserted above.
            let (cur, n) = unsafe {
                let cur = V::read(s.add(p));
                let n = if EIGHT {
                    // The OR of the rows above, here and below, then dilated sideways.
                    let (l, x, r) = (
                        col3::<V>(s, p - 1, stride),
                        col3::<V>(s, p, stride),
                        col3::<V>(s, p + 1, stride),
                    );
                    x | x.shl(1) | x.shr(1) | l.shr(63) | r.shl(63)
                } else {
                    let (l, r) = (V::read(s.add(p - 1)), V::read(s.add(p + 1)));
                    let v = V::read(s.add(p - stride)) | V::read(s.add(p + stride));
                    cur | cur.shl(1) | cur.shr(1) | l.shr(63) | r.shl(63) | v
                };
                (cur, n & V::read(fp.add(p)))
            };
            // n contains cur: the row changed unless (n & !cur) == 0.
            diff |= n & !cur;
            // SAFETY: as above.
            unsafe { n.write(d.add(p)) };
        }
        if diff.any() {
            clo = clo.min(y);
            chi = y;
        }
    }
    (clo, chi)
}

/// The OR of the chunks at `q` in the rows above, here and below.
///
/// # Safety
/// The three chunks must be readable.
#[inline(always)]
unsafe fn col3<V: Lane>(s: *const u64, q: usize, stride: usize) -> V {
    // SAFETY: the caller's guarantee.
    unsafe { V::read(s.add(q - stride)) | V::read(s.add(q)) | V::read(s.add(q + stride)) }
}

/// Scratch for [`MinWidth::run`]: compact planes (`rows * wpr` words, no guards).
#[derive(Debug, Default, Clone)]
pub(crate) struct MinWidth {
    f: Vec<u64>,
    c: Vec<u64>,
    a: Vec<u64>,
}

/// In place, `p(x) = p(x) & p(x + s)` (`AND`) or `p(x) | p(x + s)` along each row of `wpr`
/// words (bits outside the row read as 0): the column step of erosions (`s > 0`, look right)
/// and dilations (`s < 0`). Words are visited in the order that reads only values not yet
/// rewritten. (`AND` is a const parameter so each loop compiles to straight-line word ops.)
fn shift_cols<const AND: bool>(p: &mut [u64], wpr: usize, s: isize) {
    let k = s.unsigned_abs();
    let (q, r) = (k / 64, (k % 64) as u32);
    let op = |a: u64, b: u64| if AND { a & b } else { a | b };
    if q == 0 && r != 0 && wpr > 0 {
        // A shift within a word (every shift of the narrow windows): branch-free per word.
        for row in p.chunks_exact_mut(wpr) {
            if s >= 0 {
                for i in 0..wpr - 1 {
                    row[i] = op(row[i], (row[i] >> r) | (row[i + 1] << (64 - r)));
                }
                row[wpr - 1] = op(row[wpr - 1], row[wpr - 1] >> r);
            } else {
                for i in (1..wpr).rev() {
                    row[i] = op(row[i], (row[i] << r) | (row[i - 1] >> (64 - r)));
                }
                row[0] = op(row[0], row[0] << r);
            }
        }
        return;
    }
    for row in p.chunks_exact_mut(wpr) {
        if s >= 0 {
            for i in 0..wpr {
                let a = if i + q < wpr { row[i + q] } else { 0 };
                let b = if r != 0 && i + q + 1 < wpr {
                    row[i + q + 1] << (64 - r)
                } else {
                    0
                };
                row[i] = op(row[i], (a >> r) | b);
            }
        } else {
            for i in (0..wpr).rev() {
                let a = if i >= q { row[i - q] } else { 0 };
                let b = if r != 0 && i > q {
                    row[i - q - 1] >> (64 - r)
                } else {
                    0
                };
                row[i] = op(row[i], (a << r) | b);
            }
        }
    }
}

/// In place, `p(y) = p(y) & p(y + s)` (`AND`) or `p(y) | p(y + s)` row by row (rows outside
/// read as 0), in the order that reads only rows not yet rewritten.
fn shift_rows<const AND: bool>(p: &mut [u64], wpr: usize, s: isize) {
    let d = s.unsigned_abs() * wpr;
    let len = p.len();
    if d >= len {
        if AND {
            p.fill(0);
        }
        return;
    }
    if s >= 0 {
        for j in 0..len - d {
            let v = p[j + d];
            p[j] = if AND { p[j] & v } else { p[j] | v };
        }
        if AND {
            p[len - d..].fill(0);
        }
    } else {
        for j in (d..len).rev() {
            let v = p[j - d];
            p[j] = if AND { p[j] & v } else { p[j] | v };
        }
        if AND {
            p[..d].fill(0);
        }
    }
}

impl MinWidth {
    /// The largest `k` such that every cell of the component plane `c` (non-empty, a subset of
    /// the floor plane `f`) lies in some all-FLOOR `k x k` square.
    ///
    /// Whether a given `k` holds is monotone in `k` (a cell in a floor k-square is in a floor
    /// (k-1)-square), so `k` is found by galloping (2, 4, 8, ...) then bisecting: O(log K)
    /// tests instead of K, each test O(log k) passes over the planes instead of O(k) (windows of
    /// any length from two overlapping power-of-two windows; see [`MinWidth::holds`]). An open
    /// 90x140 cave with k = 74 went from ~1 ms to tens of microseconds.
    pub fn run(&mut self, lay: &Layout, f: &[u64], c: &[u64]) -> u32 {
        let (rows, w) = (lay.rows, lay.wpr);
        self.f.clear();
        self.c.clear();
        for y in 0..rows {
            let o = lay.off(y as isize);
            self.f.extend_from_slice(&f[o..o + w]);
            self.c.extend_from_slice(&c[o..o + w]);
        }
        self.run_loaded(rows, lay.cols)
    }

    /// The compact planes [`MinWidth::run_loaded`] reads (`rows * wpr` words each, no
    /// guards, bits past the last column 0): the floor and the component.
    pub fn planes_mut(&mut self) -> (&mut Vec<u64>, &mut Vec<u64>) {
        (&mut self.f, &mut self.c)
    }

    /// [`MinWidth::run`] on planes already put into [`MinWidth::planes_mut`] for a `rows x
    /// cols` grid.
    pub fn run_loaded(&mut self, rows: usize, cols: usize) -> u32 {
        let w = cols.div_ceil(64);
        debug_assert!(self.f.len() == rows * w && self.c.len() == rows * w);
        let max = rows.min(cols) as u32;
        let (mut lo, mut hi) = (1u32, max + 1);
        let mut probe = 2u32;
        while probe <= max {
            let holds = if probe == 2 {
                self.holds2(rows, w)
            } else {
                self.holds(probe, w)
            };
            if holds {
                lo = probe;
                probe *= 2;
            } else {
                hi = probe;
                break;
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.holds(mid, w) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// [`MinWidth::holds`] for `k = 2` (the first test, and the only one for a cave with a
    /// one-cell passage: most caves) in two fused passes instead of seven: `E` = top-left
    /// corners of floor 2x2 squares = `(f[y] & f[y + 1])` eroded by one toward higher x; the
    /// cells they cover = `E[y] | E[y - 1]` dilated by one toward higher x. About 10
    /// word operations per word.
    fn holds2(&mut self, rows: usize, w: usize) -> bool {
        let (f, c, e) = (&self.f, &self.c, &mut self.a);
        assert!(f.len() == rows * w && c.len() == rows * w);
        e.clear();
        e.resize(rows * w, 0);
        for y in 0..rows.saturating_sub(1) {
            let (r0, r1) = (&f[y * w..(y + 1) * w], &f[(y + 1) * w..(y + 2) * w]);
            let er = &mut e[y * w..(y + 1) * w];
            for i in 0..w {
                let a = r0[i] & r1[i];
                let next = if i + 1 < w { r0[i + 1] & r1[i + 1] } else { 0 };
                er[i] = a & ((a >> 1) | (next << 63));
            }
        }
        // The last row starts no square (E = 0 there).
        for y in 0..rows {
            let (er, cr) = (&e[y * w..(y + 1) * w], &c[y * w..(y + 1) * w]);
            let above = if y > 0 { &e[(y - 1) * w..y * w] } else { er };
            let mut carry = 0u64;
            for i in 0..w {
                let v = er[i] | above[i];
                let d = v | (v << 1) | carry;
                carry = v >> 63;
                if cr[i] & !d != 0 {
                    return false;
                }
            }
        }
        true
    }

    /// Whether every component cell lies in an all-floor `k x k` square. `E` = top-left corners
    /// of all-floor k-squares (the floor eroded by k toward higher x, then higher y); the cells
    /// the squares cover are `E` dilated by k toward higher x, then higher y. A window of length
    /// k is the union of the two power-of-two windows of length m <= k < 2m at its two ends,
    /// and a power-of-two window is built by doubling.
    fn holds(&mut self, k: u32, w: usize) -> bool {
        let k = k as isize;
        let m = 1isize << (usize::BITS - 1 - (k as usize).leading_zeros());
        // The plane becomes the AND / OR over the window [x, x + dir * k) of each cell: the
        // shifts by 1, 2, 4, ... < m, then by k - m.
        let shifts = |dir: isize| {
            let doubling = std::iter::successors(Some(1isize), |&l| Some(l * 2))
                .take_while(move |&l| l < m)
                .map(move |l| dir * l);
            doubling.chain((k > m).then_some(dir * (k - m)))
        };
        let a = &mut self.a;
        a.clone_from(&self.f);
        shifts(1).for_each(|s| shift_cols::<true>(a, w, s));
        shifts(1).for_each(|s| shift_rows::<true>(a, w, s));
        if a.iter().all(|&x| x == 0) {
            return false;
        }
        shifts(-1).for_each(|s| shift_cols::<false>(a, w, s));
        shifts(-1).for_each(|s| shift_rows::<false>(a, w, s));
        self.c.iter().zip(a.iter()).all(|(&c, &d)| c & !d == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ByteGrid;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The cell-by-cell and the band BFS give the oracle's distances on grids of any width
        /// (cell by cell is used only past 256 columns; here both run on every grid).
        #[test]
        fn sparse_and_band_bfs_match_the_oracle(rows in 1usize..40, cols in 1usize..700,
                density in 0usize..5, seed: u64, eight: bool, full: bool, with_exit: bool) {
            let lay = Layout::new(rows, cols);
            let mut f = vec![0u64; lay.len()];
            let mut bg = ByteGrid::new(rows, cols);
            let mut x = seed | 1;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let wall_per_256 = [0u64, 8, 60, 110, 150][density];
            for y in 0..rows {
                for c in 0..cols {
                    let floor = next() % 256 >= wall_per_256;
                    bg.cells[y * cols + c] = (!floor) as u8;
                    if floor {
                        f[lay.off(y as isize) + c / 64] |= 1 << (c % 64);
                    }
                }
            }
            let spawn = ((next() % rows as u64) as usize, (next() % cols as u64) as usize);
            bg.cells[spawn.0 * cols + spawn.1] = 0;
            f[lay.off(spawn.0 as isize) + spawn.1 / 64] |= 1 << (spawn.1 % 64);
            let exit = with_exit
                .then(|| ((next() % rows as u64) as usize, (next() % cols as u64) as usize));
            let conn = if eight { Connectivity::Eight } else { Connectivity::Four };
            let d = crate::measure::oracle::distances(&bg, spawn, conn);
            let depth = d.iter().filter(|&&v| v != u32::MAX).max().copied().unwrap_or(0);
            let path = exit.and_then(|(ey, ex)| Some(d[ey * cols + ex]).filter(|&v| v != u32::MAX));
            let mut bfs = Bfs::default();
            for sparse in [false, true] {
                let r = if sparse {
                    bfs.run_cells(&lay, &f, conn, spawn, exit, full)
                } else {
                    bfs.run_band(Simd::active(), &lay, &f, conn, spawn, exit, full)
                };
                prop_assert_eq!(r.path, path, "sparse {}", sparse);
                if full || path.is_none() {
                    prop_assert_eq!(r.depth, depth, "sparse {}", sparse);
                }
            }
        }
    }
}
