//! The per-cave metrics that are neither component counts nor distances: boundary length and
//! minimum width by erosion and dilation (the BFS distances are in [`super::bfs`]).
//!
//! Both work on the planes of [`super::components`] (FLOOR = 1, zero guards).

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

/// Scratch for [`MinWidth::run`]: compact planes (`rows * wpr` words, no guards).
#[derive(Debug, Default, Clone)]
pub(crate) struct MinWidth {
    f: Vec<u64>,
    c: Vec<u64>,
    a: Vec<u64>,
    /// The floor eroded by the last power-of-two square of the galloping search.
    e: Vec<u64>,
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
        // The galloping probes are powers of two: the floor eroded by a 2m-square is the one
        // eroded by an m-square, eroded once more by m (two passes a probe instead of
        // 2 log2(probe); an open 8192x8192 map probes up to 8192).
        self.e.clone_from(&self.f);
        let mut eroded = 1u32;
        while probe <= max {
            let holds = if probe == 2 {
                self.holds2(rows, w)
            } else {
                while eroded < probe {
                    shift_cols::<true>(&mut self.e, w, eroded as isize);
                    shift_rows::<true>(&mut self.e, w, eroded as isize);
                    eroded *= 2;
                }
                self.a.clone_from(&self.e);
                self.covers(probe, w)
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
        let a = &mut self.a;
        a.clone_from(&self.f);
        window_shifts(k, 1).for_each(|s| shift_cols::<true>(a, w, s));
        window_shifts(k, 1).for_each(|s| shift_rows::<true>(a, w, s));
        self.covers(k, w)
    }

    /// With `self.a` = `E` (the floor eroded by a `k x k` square, as in [`MinWidth::holds`]):
    /// whether the squares cover every component cell.
    fn covers(&mut self, k: u32, w: usize) -> bool {
        let a = &mut self.a;
        if a.iter().all(|&x| x == 0) {
            return false;
        }
        window_shifts(k, -1).for_each(|s| shift_cols::<false>(a, w, s));
        window_shifts(k, -1).for_each(|s| shift_rows::<false>(a, w, s));
        self.c.iter().zip(a.iter()).all(|(&c, &d)| c & !d == 0)
    }
}

/// The shifts that turn a plane into the AND / OR over the window `[x, x + dir * k)` of each
/// cell: by 1, 2, 4, ... < m (doubling the window), then by `k - m`, where m is the largest
/// power of two <= k (two overlapping power-of-two windows make any length).
fn window_shifts(k: u32, dir: isize) -> impl Iterator<Item = isize> {
    let k = k as isize;
    let m = 1isize << (usize::BITS - 1 - (k as usize).leading_zeros());
    let doubling = std::iter::successors(Some(1isize), |&l| Some(l * 2))
        .take_while(move |&l| l < m)
        .map(move |l| dir * l);
    doubling.chain((k > m).then_some(dir * (k - m)))
}
