//! The per-cave metrics that are not plain component counts: boundary length, bit-parallel BFS
//! distances (path length and reach depth) and minimum width by erosion and dilation.
//!
//! All work on the planes of [`super::components`] (FLOOR = 1, zero guards). The BFS is the
//! expensive part, so it advances the whole frontier one distance step per sweep, touches only
//! rows next to a row that changed in the previous step, and updates the visited plane in place
//! while keeping the pre-step copy of the row above (so the step is synchronous).

use super::Connectivity;
use super::components::Layout;

/// Number of 4-adjacent (FLOOR, WALL) pairs of cells inside the grid, from the floor plane.
pub(crate) fn boundary(lay: &Layout, f: &[u64]) -> u64 {
    let w = lay.wpr;
    // Pairs (x, x + 1) with x + 1 < cols: bit x of `inner` is valid for them.
    let inner_last = lay.last_mask() >> 1;
    let mut n = 0u64;
    for y in 0..lay.rows {
        let o = lay.off(y as isize);
        for i in 0..w {
            let a = f[o + i];
            let next = (a >> 1) | (f[o + i + 1] << 63);
            let valid = if i + 1 == w { inner_last } else { !0 };
            n += ((a ^ next) & valid).count_ones() as u64;
        }
        if y + 1 < lay.rows {
            let d = o + lay.stride;
            for i in 0..w {
                n += (f[o + i] ^ f[d + i]).count_ones() as u64;
            }
        }
    }
    n
}

/// Row bitset over `rows` (1 bit per row), for the BFS's active rows.
fn rows_clear(v: &mut Vec<u64>, rows: usize) {
    v.clear();
    v.resize(rows.div_ceil(64) + 1, 0);
}

#[inline(always)]
fn rows_set(v: &mut [u64], y: usize) {
    v[y / 64] |= 1u64 << (y % 64);
}

/// Scratch for [`Bfs::run`].
#[derive(Debug, Default, Clone)]
pub(crate) struct Bfs {
    /// Visited plane.
    pub v: Vec<u64>,
    /// Pre-step copy of the last changed row, and the new row being built (each with guards).
    saved: Vec<u64>,
    next: Vec<u64>,
    active: Vec<u64>,
    changed: Vec<u64>,
}

/// What a BFS found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BfsResult {
    /// Steps from the spawn to the exit, if reached.
    pub path: Option<u32>,
    /// Largest distance to any reachable cell; only meaningful when the BFS ran to completion.
    pub depth: u32,
}

impl Bfs {
    /// BFS from FLOOR cell `spawn` over the floor plane `f`. Stops once the exit is reached
    /// unless `full`; `exit` must be inside the grid if given.
    pub fn run(
        &mut self,
        lay: &Layout,
        f: &[u64],
        conn: Connectivity,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        full: bool,
    ) -> BfsResult {
        let (rows, w, stride) = (lay.rows, lay.wpr, lay.stride);
        self.v.clear();
        self.v.resize(lay.len(), 0);
        for b in [&mut self.saved, &mut self.next] {
            b.clear();
            b.resize(w + 2, 0);
        }
        rows_clear(&mut self.active, rows);
        rows_clear(&mut self.changed, rows);
        let (sy, sx) = spawn;
        self.v[lay.off(sy as isize) + sx / 64] |= 1u64 << (sx % 64);
        let exit_at = exit.map(|(ey, ex)| (ey, lay.off(ey as isize) + ex / 64, 1u64 << (ex % 64)));
        let mut path = (exit == Some(spawn)).then_some(0);
        if path.is_some() && !full {
            return BfsResult { path, depth: 0 };
        }
        for y in sy.saturating_sub(1)..=(sy + 1).min(rows - 1) {
            rows_set(&mut self.active, y);
        }
        let mut step = 0u32;
        loop {
            step += 1;
            let mut any = false;
            self.changed.fill(0);
            // Row whose pre-step value is in `saved` (only the row just above matters).
            let mut saved_row = usize::MAX;
            for wi in 0..self.active.len() {
                let mut bits = self.active[wi];
                while bits != 0 {
                    let y = wi * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let o = lay.off(y as isize);
                    let up_saved = saved_row == y.wrapping_sub(1) && y > 0;
                    let (u, d) = (o - stride, o + stride);
                    let v = &self.v;
                    let up: &[u64] = if up_saved {
                        &self.saved
                    } else {
                        &v[u - 1..u + w + 1]
                    };
                    let cur = &v[o - 1..o + w + 1];
                    let dn = &v[d - 1..d + w + 1];
                    let fr = &f[o..o + w];
                    let next = &mut self.next[1..w + 1];
                    let mut diff = 0u64;
                    match conn {
                        Connectivity::Four => {
                            for i in 0..w {
                                let c = cur[i + 1];
                                let h =
                                    c | (c << 1) | (c >> 1) | (cur[i] >> 63) | (cur[i + 2] << 63);
                                let n = (h | up[i + 1] | dn[i + 1]) & fr[i];
                                diff |= n ^ c;
                                next[i] = n;
                            }
                        }
                        Connectivity::Eight => {
                            for i in 0..w {
                                let a = up[i + 1] | cur[i + 1] | dn[i + 1];
                                let l = up[i] | cur[i] | dn[i];
                                let r = up[i + 2] | cur[i + 2] | dn[i + 2];
                                let n = (a | (a << 1) | (a >> 1) | (l >> 63) | (r << 63)) & fr[i];
                                diff |= n ^ cur[i + 1];
                                next[i] = n;
                            }
                        }
                    }
                    if diff == 0 {
                        saved_row = usize::MAX;
                        continue;
                    }
                    any = true;
                    rows_set(&mut self.changed, y);
                    // saved <- old row, row <- new.
                    self.saved[1..w + 1].copy_from_slice(&self.v[o..o + w]);
                    self.v[o..o + w].copy_from_slice(&self.next[1..w + 1]);
                    saved_row = y;
                    if let Some((ey, ei, eb)) = exit_at
                        && ey == y
                        && path.is_none()
                        && self.v[ei] & eb != 0
                    {
                        path = Some(step);
                        if !full {
                            return BfsResult { path, depth: step };
                        }
                    }
                }
            }
            if !any {
                return BfsResult {
                    path,
                    depth: step - 1,
                };
            }
            // Next active rows: changed rows and their neighbours.
            let n = self.changed.len();
            let mut carry_down = 0u64;
            for i in 0..n {
                let c = self.changed[i];
                let above = (c >> 1) | self.changed.get(i + 1).map_or(0, |&h| h << 63);
                self.active[i] = c | (c << 1) | carry_down | above;
                carry_down = c >> 63;
            }
            // Rows >= rows never hold cells: mask them off.
            let last = rows / 64;
            self.active[last] &= (1u64 << (rows % 64)) - 1;
            for a in &mut self.active[last + 1..] {
                *a = 0;
            }
        }
    }
}

/// Scratch for [`MinWidth::run`].
#[derive(Debug, Default, Clone)]
pub(crate) struct MinWidth {
    e: Vec<u64>,
    d: Vec<u64>,
}

impl MinWidth {
    /// The largest `k` such that every cell of the component plane `c` (non-empty, a subset of
    /// the floor plane `f`) lies in some all-FLOOR `k x k` square.
    ///
    /// `E_k` (cells that are the top-left corner of an all-floor k-square) is eroded one step at
    /// a time (`E_{k+1} = E_k & E_k(right) & E_k(below) & E_k(below-right)`); the cells covered
    /// by a (k+1)-square are `E_{k+1}` dilated by a (k+1)-square toward higher x and y. Any
    /// all-floor square touching the component lies inside it (a square is connected), so the
    /// floor plane can stand in for the component while eroding.
    pub fn run(&mut self, lay: &Layout, f: &[u64], c: &[u64]) -> u32 {
        let (rows, w, stride) = (lay.rows, lay.wpr, lay.stride);
        self.e.clear();
        self.e.extend_from_slice(f);
        self.d.clear();
        self.d.resize(lay.len(), 0);
        let mut k = 1u32;
        loop {
            let l = (k + 1) as usize;
            if l > rows || l > lay.cols {
                return k;
            }
            // Erode: horizontal pairs in place (word i reads the old word i + 1), then rows.
            let mut nonempty = 0u64;
            for y in 0..rows {
                let o = lay.off(y as isize);
                for i in 0..w {
                    let a = self.e[o + i];
                    self.e[o + i] = a & ((a >> 1) | (self.e[o + i + 1] << 63));
                }
            }
            for y in 0..rows {
                let o = lay.off(y as isize);
                for i in 0..w {
                    let v = self.e[o + i] & self.e[o + stride + i];
                    self.e[o + i] = v;
                    nonempty |= v;
                }
            }
            if nonempty == 0 {
                return k;
            }
            // Dilate horizontally by l columns toward higher x, word by word from the top so
            // word i - 1 is still the eroded value.
            for y in 0..rows {
                let o = lay.off(y as isize);
                for i in (0..w).rev() {
                    let e = self.e[o + i];
                    let lo = self.e[o + i - 1];
                    let mut a = e;
                    let mut b = lo;
                    for _ in 1..l {
                        a = e | (a << 1) | (b >> 63);
                        b = lo | (b << 1);
                    }
                    self.d[o + i] = a;
                }
            }
            // Dilate vertically by l rows downward, bottom-up in place, checking coverage.
            let mut covered = true;
            'rows: for y in (0..rows).rev() {
                let o = lay.off(y as isize);
                for i in 0..w {
                    let mut a = self.d[o + i];
                    for dy in 1..l.min(y + 1) {
                        a |= self.d[o + i - dy * stride];
                    }
                    if c[o + i] & !a != 0 {
                        covered = false;
                        break 'rows;
                    }
                    self.d[o + i] = a;
                }
            }
            if !covered {
                return k;
            }
            k += 1;
        }
    }
}
