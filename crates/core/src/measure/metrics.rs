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
    /// The floor eroded by the largest square known to hold (E_lo of the search).
    e: Vec<u64>,
    /// E_k of the probe being tested, kept while `a` is dilated to test it.
    m: Vec<u64>,
    /// One row between zero words, for [`shift_cols`].
    x: Vec<u64>,
}

/// Rows of up to this many words shift in place (see [`shift_cols`]): on a 90x140 cave
/// (3 words) the copy cost up to 15% of a search by `min_width`; on 128-word rows the
/// in-place loop, which does not vectorize, cost half of `min_width`.
const NARROW_WPR: usize = 8;

/// In place, `p(x) = p(x) & p(x + s)` (`AND`) or `p(x) | p(x + s)` along each row of `wpr`
/// words (bits outside the row read as 0): the column step of erosions (`s > 0`, look right)
/// and dilations (`s < 0`). (`AND` is a const parameter so each loop compiles to
/// straight-line word ops.)
///
/// A shift within a word on rows of at most [`NARROW_WPR`] words (every shift of a 90x140
/// cave's windows) runs in place, visiting the words in the order that reads only words not
/// yet rewritten. Any other first copies each row into `x` between zero words (`q + 1` a side, `q` = the
/// whole words of the shift), so that the loop has no bounds or edge cases and vectorizes:
/// per word 2 loads, 3 shifts, an OR, the AND/OR and a store. On an open 8192x8192 map with
/// a wall border (`min_width` 8188, 12 bisection steps) this took `min_width` from 0.45 s to
/// 0.31 s, whole process.
fn shift_cols<const AND: bool>(p: &mut [u64], wpr: usize, s: isize, x: &mut Vec<u64>) {
    let k = s.unsigned_abs();
    let (q, r) = (k / 64, (k % 64) as u32);
    if wpr == 0 || k == 0 {
        return;
    }
    let op = |a: u64, b: u64| if AND { a & b } else { a | b };
    if q == 0 && wpr <= NARROW_WPR {
        for row in p.chunks_exact_mut(wpr) {
            if s > 0 {
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
    let pad = q + 1;
    x.clear();
    x.resize(wpr + 2 * pad, 0);
    for row in p.chunks_exact_mut(wpr) {
        x[pad..pad + wpr].copy_from_slice(row);
        if s > 0 {
            let (near, far) = (
                &x[pad + q..pad + q + wpr],
                &x[pad + q + 1..pad + q + 1 + wpr],
            );
            step_words::<AND, true>(row, near, far, r);
        } else {
            let (near, far) = (
                &x[pad - q..pad - q + wpr],
                &x[pad - q - 1..pad - q - 1 + wpr],
            );
            step_words::<AND, false>(row, near, far, r);
        }
    }
}

/// `row[i] = row[i] op (near[i] shifted by r, filled from far[i])`, toward lower bits
/// (`RIGHT`) or higher: the loop of [`shift_cols`] over equal-length slices.
#[inline(always)]
fn step_words<const AND: bool, const RIGHT: bool>(
    row: &mut [u64],
    near: &[u64],
    far: &[u64],
    r: u32,
) {
    let n = row.len().min(near.len()).min(far.len());
    let (row, near, far) = (&mut row[..n], &near[..n], &far[..n]);
    for i in 0..n {
        let v = if RIGHT {
            (near[i] >> r) | (far[i] << (63 - r) << 1)
        } else {
            (near[i] << r) | (far[i] >> (63 - r) >> 1)
        };
        row[i] = if AND { row[i] & v } else { row[i] | v };
    }
}

/// In place, `p(y) = p(y) & p(y + s)` (`AND`) or `p(y) | p(y + s)` row by row (rows outside
/// read as 0). The plane is rewritten in blocks of `|s|` rows, in the order that reads only
/// blocks not yet rewritten, each block against the next (or previous) as two disjoint
/// slices, so that the loop vectorizes.
fn shift_rows<const AND: bool>(p: &mut [u64], wpr: usize, s: isize) {
    let d = s.unsigned_abs() * wpr;
    let len = p.len();
    if d == 0 {
        return;
    }
    if d >= len {
        if AND {
            p.fill(0);
        }
        return;
    }
    let op = |dst: &mut [u64], src: &[u64]| {
        for (a, &b) in dst.iter_mut().zip(src) {
            *a = if AND { *a & b } else { *a | b };
        }
    };
    if s > 0 {
        // Rows j get rows j + d: forward, block [b, b + d) from [b + d, b + 2d).
        let mut b = 0;
        while b + d < len {
            let (lo, hi) = p.split_at_mut(b + d);
            op(&mut lo[b..], &hi[..d.min(len - b - d)]);
            b += d;
        }
        if AND {
            p[len - d..].fill(0);
        }
    } else {
        // Rows j get rows j - d: backward, block [e - d, e) from [e - 2d, e - d).
        let mut e = len;
        while e > d {
            let n = d.min(e - d);
            let (lo, hi) = p.split_at_mut(e - n);
            op(&mut hi[..n], &lo[e - n - d..e - d]);
            e -= n;
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
    /// tests instead of K, each test 2 passes over the planes to erode and O(log k) to cover
    /// instead of O(k) (see [`MinWidth::holds_from`] and [`MinWidth::covers`]). An open
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
        if max < 2 || !self.holds2(rows, w) {
            return 1;
        }
        // `holds2` left E_2 in `a`. From here `e` holds E_lo, the floor eroded by the largest
        // square known to hold: every later probe k is at most 2 lo, so E_k is E_lo eroded
        // once more by k - lo (one shift a direction; see [`MinWidth::holds_from`]), and only
        // the covering of each probe costs log2(k) passes a direction. An open 8192x8192 map
        // probes up to 8192; one with a wall border gallops to 4096 then bisects 12 times.
        std::mem::swap(&mut self.e, &mut self.a);
        let (mut lo, mut hi) = (2u32, max + 1);
        while 2 * lo <= max && self.holds_from(lo, 2 * lo, w) {
            lo *= 2;
        }
        if 2 * lo <= max {
            hi = 2 * lo;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.holds_from(lo, mid, w) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether `k` holds (see [`MinWidth::covers`]), with `self.e` = E_lo and `lo < k <= 2 lo`:
    /// E_k is E_lo ANDed with itself shifted by `k - lo` (a window of lo cells and one
    /// `k - lo` further on cover exactly k cells), in each direction. If `k` holds, `self.e`
    /// becomes E_k.
    fn holds_from(&mut self, lo: u32, k: u32, w: usize) -> bool {
        debug_assert!(lo < k && k <= 2 * lo);
        let s = (k - lo) as isize;
        self.a.clone_from(&self.e);
        shift_cols::<true>(&mut self.a, w, s, &mut self.x);
        shift_rows::<true>(&mut self.a, w, s);
        self.m.clone_from(&self.a);
        let ok = self.covers(k, w);
        if ok {
            std::mem::swap(&mut self.e, &mut self.m);
        }
        ok
    }

    /// [`MinWidth::covers`] for `k = 2` (the first test, and the only one for a cave with a
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

    /// Whether `k` holds, with `self.a` = `E`, the top-left corners of all-floor k-squares (the
    /// floor eroded by k toward higher x, then higher y): the cells the squares cover are `E`
    /// dilated by k toward lower x, then lower y, and they must include every component cell.
    /// A window of length k is the union of the two power-of-two windows of length
    /// m <= k < 2m at its two ends, and a power-of-two window is built by doubling.
    fn covers(&mut self, k: u32, w: usize) -> bool {
        let (a, x) = (&mut self.a, &mut self.x);
        if a.iter().all(|&v| v == 0) {
            return false;
        }
        window_shifts(k, -1).for_each(|s| shift_cols::<false>(a, w, s, x));
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bit `x` of row `y` of a compact plane, 0 outside the row's `cols` and the plane's rows.
    fn bit(p: &[u64], wpr: usize, cols: usize, y: isize, x: isize) -> bool {
        let rows = (p.len() / wpr.max(1)) as isize;
        if y < 0 || y >= rows || x < 0 || x >= cols as isize {
            return false;
        }
        let (y, x) = (y as usize, x as usize);
        p[y * wpr + x / 64] >> (x % 64) & 1 == 1
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Both ways of shifting columns (in place on narrow rows, through the padded copy
        /// on wide rows and long shifts) and the block-wise row shift, against the
        /// definition cell by cell.
        #[test]
        fn shifts_match_the_definition(seed: u64, rows in 1usize..12, cols in 1usize..1300,
                                       s in -1400isize..1400, and: bool) {
            let wpr = cols.div_ceil(64);
            let mut r = seed | 1;
            let mut p: Vec<u64> = (0..rows * wpr).map(|_| {
                r ^= r << 13; r ^= r >> 7; r ^= r << 17; r
            }).collect();
            // Bits past the last column are 0, as in MinWidth's planes.
            for y in 0..rows {
                if cols % 64 != 0 {
                    p[y * wpr + wpr - 1] &= (1u64 << (cols % 64)) - 1;
                }
            }
            let op = |a: bool, b: bool| if and { a & b } else { a | b };
            let mut c = p.clone();
            let mut x = Vec::new();
            if and { shift_cols::<true>(&mut c, wpr, s, &mut x) } else { shift_cols::<false>(&mut c, wpr, s, &mut x) }
            let mut rw = p.clone();
            if and { shift_rows::<true>(&mut rw, wpr, s % 16) } else { shift_rows::<false>(&mut rw, wpr, s % 16) }
            for y in 0..rows as isize {
                for xx in 0..cols as isize {
                    let here = bit(&p, wpr, cols, y, xx);
                    prop_assert_eq!(bit(&c, wpr, cols, y, xx), op(here, bit(&p, wpr, cols, y, xx + s)),
                        "cols: y {} x {} s {}", y, xx, s);
                    prop_assert_eq!(bit(&rw, wpr, cols, y, xx), op(here, bit(&p, wpr, cols, y + s % 16, xx)),
                        "rows: y {} x {} s {}", y, xx, s % 16);
                }
            }
        }
    }
}
