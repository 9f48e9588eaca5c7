//! The BFS from the spawn that gives `path_length` and `reach_depth`, bit-parallel: one step
//! dilates the visited plane by one cell within FLOOR (double-buffered, so the step is
//! synchronous) and computes only where the previous step changed something.
//!
//! Two ways, by grid width. Caves of up to 256 columns (the 90x140 of every preset) compute the
//! band of rows between the first and last rows that changed in the previous step (plus one on
//! each side), each row one 4-word vector (a handful of AVX2 or AVX-512 instructions in those
//! clones, see [`crate::simd`]). Wider grids compute tiles of 64 columns x 64 rows next to a
//! change, in a copy of the floor plane laid out by columns of words, so that a run of rows is
//! a run of words: O(cells) on any map, open or not.

use super::Connectivity;
use super::components::Layout;
use crate::simd::{Lane, Simd};

/// Scratch for [`Bfs::run`]: two visited planes (the step is synchronous: double buffered),
/// and for wide grids the frontier's cells, this step's and the next's.
#[derive(Debug, Default, Clone)]
pub(crate) struct Bfs {
    a: Vec<u64>,
    b: Vec<u64>,
    tiles: Tiles,
}

/// Grids wider than this many words a row (256 cells) run the BFS by tiles ([`Bfs::run_tiles`])
/// instead of by bands of whole rows. A band step costs `band rows x row words`: on a 90x140
/// cave that is a vector a row and the fastest there is, but on an open 8192x8192 map the band
/// holds thousands of rows of 128 words while the frontier (a diamond's rim) is two cells a row,
/// and the whole BFS cost `side^3 / 32` word operations (4.8 s).
const TILES_WPR: usize = 4;

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
        if lay.wpr > TILES_WPR {
            self.run_tiles(simd, lay, f, conn, spawn, exit, full)
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
                Connectivity::Four => bfs.run_in::<I::Row, 4>(lay, f, spawn, exit, full),
                Connectivity::Six => bfs.run_in::<I::Row, 6>(lay, f, spawn, exit, full),
                Connectivity::Eight => bfs.run_in::<I::Row, 8>(lay, f, spawn, exit, full),
            }
        })
    }

    #[inline(always)]
    fn run_in<V: Lane, const C: u8>(
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
            let (clo, chi) = band_step::<V, C>(src, dst, f, lay, lo, hi);
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

/// One BFS step over rows `lo..=hi`, a vector of words at a time: every cell of `dst`
/// becomes `src` dilated by one step (4 or 8 neighbours) within FLOOR. Returns the first and
/// last changed rows (`usize::MAX, 0` if none changed).
#[inline(always)]
fn band_step<V: Lane, const C: u8>(
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
                let n = if C == 8 {
                    // The OR of the rows above, here and below, then dilated sideways.
                    let (l, x, r) = (
                        col3::<V>(s, p - 1, stride),
                        col3::<V>(s, p, stride),
                        col3::<V>(s, p + 1, stride),
                    );
                    x | x.shl(1) | x.shr(1) | l.shr(63) | r.shl(63)
                } else if C == 6 {
                    // Hex: this row sideways, the row above and its cells' right neighbours
                    // (their NW is above), the row below and its left neighbours (SE below).
                    let (l, r) = (V::read(s.add(p - 1)), V::read(s.add(p + 1)));
                    let (up, upl) = (V::read(s.add(p - stride)), V::read(s.add(p - stride - 1)));
                    let (dn, dnr) = (V::read(s.add(p + stride)), V::read(s.add(p + stride + 1)));
                    cur | cur.shl(1)
                        | cur.shr(1)
                        | l.shr(63)
                        | r.shl(63)
                        | up
                        | up.shl(1)
                        | upl.shr(63)
                        | dn
                        | dn.shr(1)
                        | dnr.shl(63)
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

/// Rows a tile of the wide-grid BFS spans: a strip of 64 columns is cut into tiles of this many
/// rows, and each tile keeps the range of rows it computes next. Tiles bound the work where one
/// strip holds several fronts far apart (one range per strip would span the rows between them).
const TILE_ROWS: usize = 64;

/// What one step changed in a strip: the first and last changed rows, and those of the rows
/// whose lowest bit (next to the strip on the left) and highest bit (on the right) changed.
#[derive(Debug, Clone, Copy)]
struct Change {
    rows: (usize, usize),
    left: Option<(usize, usize)>,
    right: Option<(usize, usize)>,
}

/// An empty row range.
const NONE: (usize, usize) = (usize::MAX, 0);

/// Scratch for [`Bfs::run_tiles`]: the floor plane in strip order, and per tile the rows to
/// compute this step and the next, with the lists of tiles that have any.
#[derive(Debug, Default, Clone)]
struct Tiles {
    f: Vec<u64>,
    cur: Vec<(usize, usize)>,
    next: Vec<(usize, usize)>,
    active: Vec<usize>,
    queued: Vec<usize>,
}

/// Where a wide grid's words sit in strip order: word `x` of row `y` at `(x + 1) * h + y + 1`,
/// `h = rows + 2`. Strip `x` (the grid's word column `x`) is contiguous from top to bottom, so a
/// cell's upper and lower neighbours are the words beside it and a run of rows is a run of words
/// (a vector of rows in the AVX2 and AVX-512 clones); strips 0 and `wpr + 1` and the first and
/// last word of each strip are zero guards (WALL).
#[derive(Debug, Clone, Copy)]
struct Strips {
    rows: usize,
    wpr: usize,
    h: usize,
}

impl Strips {
    fn new(lay: &Layout) -> Strips {
        Strips {
            rows: lay.rows,
            wpr: lay.wpr,
            h: lay.rows + 2,
        }
    }

    /// Words in a plane: the strips and one word of padding (read beside the last guard).
    fn len(self) -> usize {
        (self.wpr + 2) * self.h + 1
    }

    /// Index of word `x` of row `y`.
    fn at(self, y: usize, x: usize) -> usize {
        (x + 1) * self.h + y + 1
    }

    fn tiles_per_strip(self) -> usize {
        self.rows.div_ceil(TILE_ROWS)
    }
}

impl Tiles {
    /// Ask for rows `lo..=hi` (clipped to the grid) of strip `x` to be computed next step.
    #[inline]
    fn request(&mut self, st: Strips, x: isize, lo: isize, hi: isize) {
        if x < 0 || x as usize >= st.wpr {
            return;
        }
        let (lo, hi) = (lo.max(0) as usize, hi.min(st.rows as isize - 1));
        if hi < lo as isize {
            return;
        }
        let (x, hi) = (x as usize, hi as usize);
        let tps = st.tiles_per_strip();
        for t in lo / TILE_ROWS..=hi / TILE_ROWS {
            let id = x * tps + t;
            let (a, b) = (lo.max(t * TILE_ROWS), hi.min(t * TILE_ROWS + TILE_ROWS - 1));
            let r = &mut self.next[id];
            if r.0 == usize::MAX {
                self.queued.push(id);
            }
            *r = (r.0.min(a), r.1.max(b));
        }
    }

    /// Strip `x` changed as `c` says: the rows beside the changed ones in the strip are
    /// computed next step, and the neighbouring strips' rows beside a change of the bit next to
    /// them (within one more row each way for 8- and 6-connectivity).
    fn changed(&mut self, st: Strips, x: usize, c: Change, eight: bool) {
        let (x, e) = (x as isize, eight as isize);
        let side = |(lo, hi): (usize, usize)| (lo as isize - e, hi as isize + e);
        self.request(st, x, c.rows.0 as isize - 1, c.rows.1 as isize + 1);
        if let Some(r) = c.left {
            let (lo, hi) = side(r);
            self.request(st, x - 1, lo, hi);
        }
        if let Some(r) = c.right {
            let (lo, hi) = side(r);
            self.request(st, x + 1, lo, hi);
        }
    }
}

impl Bfs {
    /// [`Bfs::run`] for wide grids, by tiles of 64 columns x [`TILE_ROWS`] rows: one step
    /// dilates only the rows of the tiles next to a change in the previous step, a run of
    /// words at a time (see [`Strips`]). On an open 8192x8192 map the frontier (a diamond's
    /// rim) crosses each strip in about 64 rows, so a step costs about a row per frontier cell
    /// (an eighth of a vector in the AVX-512 clone) instead of the band's whole rows: the BFS
    /// is O(cells) on any map. (Cell by cell, with a list of frontier cells, costs four
    /// dependent read-modify-writes of the visited plane per cell: 6.6 ns a cell there.)
    #[allow(clippy::too_many_arguments)]
    fn run_tiles(
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
                Connectivity::Four => bfs.tiles_in::<4>(lay, f, spawn, exit, full),
                Connectivity::Six => bfs.tiles_in::<6>(lay, f, spawn, exit, full),
                Connectivity::Eight => bfs.tiles_in::<8>(lay, f, spawn, exit, full),
            }
        })
    }

    #[inline(always)]
    fn tiles_in<const C: u8>(
        &mut self,
        lay: &Layout,
        f: &[u64],
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        assert!(f.len() == lay.len());
        let st = Strips::new(lay);
        let t = &mut self.tiles;
        t.f.clear();
        t.f.resize(st.len(), 0);
        for y in 0..st.rows {
            let o = lay.off(y as isize);
            for (x, &w) in f[o..o + st.wpr].iter().enumerate() {
                t.f[st.at(y, x)] = w;
            }
        }
        for p in [&mut self.a, &mut self.b] {
            p.clear();
            p.resize(st.len(), 0);
        }
        let ntiles = st.wpr * st.tiles_per_strip();
        for r in [&mut t.cur, &mut t.next] {
            r.clear();
            r.resize(ntiles, NONE);
        }
        t.active.clear();
        t.queued.clear();
        let (sy, sx) = spawn;
        let bit = 1u64 << (sx % 64);
        self.a[st.at(sy, sx / 64)] |= bit;
        self.b[st.at(sy, sx / 64)] |= bit;
        let mut path = (exit == Some(spawn)).then_some(0);
        if path.is_some() && !full {
            return BfsResult { path, depth: 0 };
        }
        let exit_at = exit.map(|(ey, ex)| (st.at(ey, ex / 64), 1u64 << (ex % 64)));
        // The spawn is the change of step 0.
        let at = (sy, sy);
        let c = Change {
            rows: at,
            left: (bit == 1).then_some(at),
            right: (bit == 1 << 63).then_some(at),
        };
        t.changed(st, sx / 64, c, C != 4);
        std::mem::swap(&mut t.cur, &mut t.next);
        std::mem::swap(&mut t.active, &mut t.queued);
        let (mut src, mut dst) = (&mut self.a, &mut self.b);
        let mut step = 0u32;
        loop {
            step += 1;
            let mut any = false;
            for k in 0..t.active.len() {
                let id = t.active[k];
                let (lo, hi) = std::mem::replace(&mut t.cur[id], NONE);
                let x = id / st.tiles_per_strip();
                if let Some(c) = strip_step::<C>(src, dst, &t.f, st, x, lo, hi) {
                    any = true;
                    t.changed(st, x, c, C != 4);
                }
            }
            if !any {
                return BfsResult {
                    path,
                    depth: step - 1,
                };
            }
            if let Some((ei, eb)) = exit_at
                && path.is_none()
                && dst[ei] & eb != 0
            {
                path = Some(step);
                if !full {
                    return BfsResult { path, depth: step };
                }
            }
            std::mem::swap(&mut src, &mut dst);
            std::mem::swap(&mut t.cur, &mut t.next);
            std::mem::swap(&mut t.active, &mut t.queued);
            t.queued.clear();
        }
    }
}

/// One BFS step over rows `lo..=hi` of strip `x` (see [`Strips`]): `dst` becomes `src`
/// dilated by one step (4 or 8 neighbours) within FLOOR there. Returns what changed, or `None`
/// if nothing did.
///
/// The range is rounded up to a multiple of 16 rows (two AVX-512 vectors of rows, four of
/// AVX2's), clipped at the strip's guard row: an extra row comes out as its next state too
/// (and the guard row as 0), so only the cost changes. Per row: 4-connectivity 5 loads, 2
/// shifts in the word and 2 across words, 6 ORs, an AND, a store, an XOR for the change;
/// 8-connectivity 9 loads and 6 more ORs. The first and last changed rows, and those of the
/// rows whose edge bits changed, come from a scan from each end, so that the neighbour strip
/// computes only the rows beside a change of its edge (about one a step where a frontier
/// crosses into it). Measured on an open 8192x8192 grid, these exact edge ranges beat a range
/// over all the changed rows by about 5% (222 -> 210 ms for `reach_depth`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn strip_step<const C: u8>(
    src: &[u64],
    dst: &mut [u64],
    f: &[u64],
    st: Strips,
    x: usize,
    lo: usize,
    hi: usize,
) -> Option<Change> {
    let h = st.h;
    assert!(x < st.wpr && lo <= hi && hi < st.rows);
    let n = (hi - lo + 1).next_multiple_of(16).min(st.rows + 1 - lo);
    let (b, e) = (st.at(lo, x), st.at(lo, x) + n);
    // Rows lo - 1 ..= lo + n of strips x - 1 ..= x + 1 are read: inside the planes (the guard
    // row below the last strip's last row is the one word of padding).
    assert!(src.len() == st.len() && dst.len() == st.len() && f.len() == st.len());
    // The rows above, here and below of strip x and of the strips beside it, as runs of n
    // words each (equal lengths: the loop below needs no bounds checks and vectorizes).
    let run = |o: usize| &src[o..o + n];
    let (up, mid, dn) = (run(b - 1), run(b), run(b + 1));
    let (l_up, l, l_dn) = (run(b - h - 1), run(b - h), run(b - h + 1));
    let (r_up, r, r_dn) = (run(b + h - 1), run(b + h), run(b + h + 1));
    let (fr, d) = (&f[b..e], &mut dst[b..e]);
    let mut or = 0u64;
    for i in 0..n {
        let v = if C == 8 {
            let m = up[i] | mid[i] | dn[i];
            let ml = l_up[i] | l[i] | l_dn[i];
            let mr = r_up[i] | r[i] | r_dn[i];
            m | (m << 1) | (m >> 1) | (ml >> 63) | (mr << 63)
        } else if C == 6 {
            let m = mid[i];
            m | (m << 1)
                | (m >> 1)
                | (l[i] >> 63)
                | (r[i] << 63)
                | up[i]
                | (up[i] << 1)
                | (l_up[i] >> 63)
                | dn[i]
                | (dn[i] >> 1)
                | (r_dn[i] << 63)
        } else {
            let m = mid[i];
            m | (m << 1) | (m >> 1) | (l[i] >> 63) | (r[i] << 63) | up[i] | dn[i]
        } & fr[i];
        // v contains this row's src (src lies within FLOOR): the row changed iff v != src.
        or |= v ^ mid[i];
        d[i] = v;
    }
    if or == 0 {
        return None;
    }
    let range = |m: u64| changed_rows(d, mid, m).map(|(a, z)| (lo + a, lo + z));
    Some(Change {
        rows: range(!0).expect("a row changed"),
        left: (or & 1 != 0).then(|| range(1)).flatten(),
        right: (or >> 63 != 0).then(|| range(1 << 63)).flatten(),
    })
}

/// The first and last `i` with `(d[i] ^ s[i]) & m != 0`, if any: a scan from each end (a
/// function, not a closure, so that it is inlined into the SIMD clones).
#[inline(always)]
fn changed_rows(d: &[u64], s: &[u64], m: u64) -> Option<(usize, usize)> {
    let n = d.len().min(s.len());
    let changed = |i: &usize| (d[*i] ^ s[*i]) & m != 0;
    let first = (0..n).find(changed)?;
    let last = (0..n).rev().find(changed).expect("the first one is");
    Some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ByteGrid;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The tiled and the band BFS give the oracle's distances on grids of any width (tiles
        /// are used only past 256 columns; here both run on every grid). Up to 200 rows: several
        /// tiles a strip.
        #[test]
        fn tiled_and_band_bfs_match_the_oracle(rows in 1usize..200, cols in 1usize..700,
                density in 0usize..5, seed: u64, conn in 0usize..3, full: bool, with_exit: bool) {
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
            let conn = [Connectivity::Four, Connectivity::Six, Connectivity::Eight][conn];
            let d = crate::oracle::metrics::distances(&bg, spawn, conn);
            let depth = d.iter().filter(|&&v| v != u32::MAX).max().copied().unwrap_or(0);
            let path = exit.and_then(|(ey, ex)| Some(d[ey * cols + ex]).filter(|&v| v != u32::MAX));
            let mut bfs = Bfs::default();
            for tiled in [false, true] {
                for simd in Simd::available() {
                    let r = if tiled {
                        bfs.run_tiles(simd, &lay, &f, conn, spawn, exit, full)
                    } else {
                        bfs.run_band(simd, &lay, &f, conn, spawn, exit, full)
                    };
                    prop_assert_eq!(r.path, path, "tiled {} {:?}", tiled, simd);
                    if full || path.is_none() {
                        prop_assert_eq!(r.depth, depth, "tiled {} {:?}", tiled, simd);
                    }
                }
            }
        }
    }
}
