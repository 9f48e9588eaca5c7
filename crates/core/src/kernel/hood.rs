//! Buffered (sync) steps of the rules Golly knows beyond Moore: von Neumann and hexagonal
//! B/S rules ([`Rule::Hood`](crate::rule::Rule::Hood)) and Larger than Life
//! ([`Rule::Ltl`](crate::rule::Rule::Ltl)), word-parallel on the bit-packed rows, lanes across
//! the words of a row (the clone's `Row` vector: 256 cells from AVX2 up).
//!
//! **Von Neumann and hexagonal.** The neighbour words of a row vector are its row above and
//! below (N, S), its row shifted by one cell each way (W, E) and, for hex, the row above shifted
//! towards higher columns (NW) and the row below towards lower ones (SE). Their count goes into
//! three bit planes by carry-save adders, the rule is a mux over the count per centre state:
//!
//! ```text
//!                               von Neumann   hexagonal
//! W, E (and NW, SE) shifts      4 sh + 2 or   8 sh + 4 or
//! count into 3 planes           FA + 4        2 FA + 2 + FA      (FA = full adder, 5 ops)
//! two table_mux8 + centre mux   45            45
//! mask, border, popcount        ~5            ~5
//! per 64-cell word              ~65           ~80  (0.2 vector ops per cell with AVX2)
//! ```
//!
//! **Larger than Life.** The grid is copied once into a buffer with `r` margin rows above and
//! below and a margin word left and right, filled per the outside mode (so a torus smaller than
//! the neighbourhood reads each cell as often as it lies in it, as the oracle does). Then per
//! padded row the horizontal counts `H_w(y) = sum of the 2w+1 cells around x` go into bit planes
//! (each shifted word added to a bit-sliced counter: 2 ops per plane); a box (`NM`) needs
//! `w = r` only and keeps a running vertical sum, `C(y) = C(y-1) + H(y+r) - H(y-r-1)` (two
//! ripple adds over the count planes); a diamond (`NN`) needs every `w <= r` and adds
//! `H_{r-|dy|}(y+dy)` over the `2r+1` rows. The rule is two range tests on the planes (a
//! comparison with a constant is one op per plane). For radius 5, a box costs about 11 shifted
//! adds of 4 planes, 2 adds of 10 planes and 2 x 2 range compares: ~300 ops per vector.

use crate::grid::Grid;
use crate::rule::{Hood, Ltl, LtlShape, Outside};
use crate::simd::Lane;

use super::adders::{full_add, mux, table_mux8};

/// The words of the vector at `raw + o` and of the vectors one word before and after it.
///
/// # Safety
/// `raw + o - 1 .. raw + o + N + 1` must be readable.
#[inline(always)]
unsafe fn around<V: Lane>(raw: *const u64, o: usize) -> (V, V, V) {
    // SAFETY: the caller's guarantee.
    unsafe {
        (
            V::read(raw.add(o - 1)),
            V::read(raw.add(o)),
            V::read(raw.add(o + 1)),
        )
    }
}

/// Cells at `x - 1` (the west neighbours) and `x + 1` (east) of a vector, from its words and
/// the words before and after it.
#[inline(always)]
fn west_east<V: Lane>((before, centre, after): (V, V, V)) -> (V, V) {
    (
        centre.shl(1) | before.shr(63),
        centre.shr(1) | after.shl(63),
    )
}

/// One sync step of a von Neumann or hexagonal rule `src -> dst` (`src`'s edges prepared for
/// the pass's outside mode by [`Grid::prepare_edges`], `dst` the same shape); `solid` walls
/// the outer ring. Returns the WALL cells of `dst`.
#[inline(always)]
pub fn step_hood<V: Lane>(
    src: &Grid,
    dst: &mut Grid,
    hood: Hood,
    birth: u16,
    survive: u16,
    solid: bool,
) -> u64 {
    assert_eq!((src.rows(), src.cols()), (dst.rows(), dst.cols()));
    assert!(
        super::sync::whole_vectors(src, V::N),
        "row vectors within the padded row"
    );
    let (rows, stride, wpr) = (src.rows(), src.stride(), src.words_per_row());
    assert_eq!(src.raw().len(), (rows + 2) * stride);
    assert_eq!(dst.raw().len(), src.raw().len());
    let nvec = wpr.div_ceil(V::N);
    let raw = src.raw().as_ptr();
    let out = dst.raw_mut().as_mut_ptr();
    let (mask, edge) = row_masks::<V>(src, nvec, solid);
    let hex = hood == Hood::Hex;
    let mut count = V::ZERO;
    for i in 0..nvec {
        let m = if i + 1 == nvec { mask[1] } else { mask[0] };
        let e = edge(i);
        let full = if solid { m } else { V::ZERO };
        for y in 0..rows {
            let o = src.row_offset(y as isize) + V::N * i;
            // SAFETY: rows -1..=rows of vector `i` with a word on each side lie inside the
            // buffer of (rows + 2) * stride words: a row slot is a guard word, the row's words
            // padded to a multiple of 4 >= nvec * N (asserted), and a guard word.
            let (above, here, below) = unsafe {
                (
                    around::<V>(raw, o - stride),
                    around::<V>(raw, o),
                    around::<V>(raw, o + stride),
                )
            };
            let (w, ea) = west_east(here);
            let (n, s, c) = (above.1, below.1, here.1);
            // Count planes (b0, b1, b2).
            let (b0, b1, b2) = if hex {
                let nw = west_east(above).0;
                let se = west_east(below).1;
                let (a0, a1) = full_add(n, s, w);
                let (c0, c1) = full_add(ea, nw, se);
                let (k, b0) = (a0 & c0, a0 ^ c0);
                let (b1, b2) = full_add(a1, c1, k);
                (b0, b1, b2)
            } else {
                let (s0, c1) = full_add(n, s, w);
                let k = s0 & ea;
                (s0 ^ ea, c1 ^ k, c1 & k)
            };
            let next = mux(
                c,
                table_mux8(birth, b0, b1, b2),
                table_mux8(survive, b0, b1, b2),
            );
            let mut v = (next & m) | e;
            if y == 0 || y + 1 == rows {
                v |= full;
            }
            // SAFETY: `dst` has `src`'s shape; the offset is inside as for the loads.
            unsafe { v.write(out.add(o)) };
            count = count.add(v.popcnt());
        }
    }
    count.sum()
}

/// The masks of a row's vectors: `[whole, last]` (the last vector's words past the row and
/// bits past the last column cleared), and the solid border's bits of vector `i` (bit 0 of
/// word 0, the last column's bit), zero unless `solid`.
fn row_masks<V: Lane>(g: &Grid, nvec: usize, solid: bool) -> ([V; 2], impl Fn(usize) -> V) {
    let wpr = g.words_per_row();
    let lm = g.last_word_mask();
    let last = V::from_fn(|k| {
        let w = V::N * (nvec - 1) + k;
        match w.cmp(&(wpr - 1)) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => lm,
            std::cmp::Ordering::Greater => 0,
        }
    });
    let lc = g.cols() - 1;
    let edge = move |i: usize| {
        V::from_fn(|k| {
            let w = V::N * i + k;
            let mut e = 0u64;
            if solid && w == 0 {
                e |= 1;
            }
            if solid && w == lc / 64 {
                e |= 1u64 << (lc % 64);
            }
            e
        })
    };
    ([V::ONES, last], edge)
}

/// Count planes of a Larger than Life step: at most 10 (counts up to 1023; radius 15's box
/// holds 961 cells).
const PLANES: usize = 10;

/// Planes of a horizontal count (up to `2 * 15 + 1 = 31`).
const HPLANES: usize = 5;

/// Reusable buffers of [`step_ltl`].
#[derive(Debug, Default, Clone)]
pub struct LtlScratch {
    /// The padded grid: `rows + 2r` rows of `stride` words.
    padded: Vec<u64>,
    /// Horizontal count planes: per padded row, per width `w` kept, [`HPLANES`] planes of
    /// `stride` words.
    h: Vec<u64>,
}

/// One sync Larger than Life step `g -> tmp` (same shape); `solid` walls the outer ring.
/// Returns the WALL cells of `tmp`.
#[inline(always)]
pub fn step_ltl<V: Lane>(
    g: &Grid,
    tmp: &mut Grid,
    ltl: &Ltl,
    outside: Outside,
    solid: bool,
    scratch: &mut LtlScratch,
) -> u64 {
    assert_eq!((g.rows(), g.cols()), (tmp.rows(), tmp.cols()));
    let (rows, wpr) = (g.rows(), g.words_per_row());
    let r = ltl.radius as usize;
    let nvec = wpr.div_ceil(V::N);
    // A margin word each side, the row's vectors, and one spare word for the last vector's
    // `after` read.
    let stride = nvec * V::N + 3;
    let prow = rows + 2 * r;
    pad(g, outside, r, stride, &mut scratch.padded);
    let widths: Vec<usize> = match ltl.shape {
        LtlShape::Box => vec![r],
        LtlShape::Diamond => (0..=r).collect(),
    };
    let nw = widths.len();
    let plane = stride;
    let hrow = nw * HPLANES * plane;
    scratch.h.clear();
    scratch.h.resize(prow * hrow, 0);
    // Horizontal counts of every padded row, every width kept, every vector.
    for py in 0..prow {
        for i in 0..nvec {
            let o = py * stride + 1 + V::N * i;
            hcounts::<V>(
                &scratch.padded,
                o,
                r,
                &widths,
                &mut scratch.h,
                py * hrow,
                i,
                plane,
            );
        }
    }
    // Planes for the count with the centre (M0 takes it out after the sum).
    let all = ltl.max_count() + !ltl.middle as u16;
    let nb = (16 - all.leading_zeros()) as usize;
    let (mask, edge) = row_masks::<V>(g, nvec, solid);
    let h = &scratch.h;
    let at = |py: usize, wi: usize| py * hrow + wi * HPLANES * plane;
    let src = g.raw();
    let out = tmp.raw_mut();
    let mut count = V::ZERO;
    for i in 0..nvec {
        let m = if i + 1 == nvec { mask[1] } else { mask[0] };
        let e = edge(i);
        let full = if solid { m } else { V::ZERO };
        let mut c = [V::ZERO; PLANES];
        if ltl.shape == LtlShape::Box {
            // The running vertical sum: rows 0..2r of the padded grid (output row 0 adds the
            // last one first).
            for py in 0..2 * r {
                add_planes(&mut c, nb, &hload::<V>(h, at(py, 0), plane, i));
            }
        }
        for y in 0..rows {
            match ltl.shape {
                LtlShape::Box => {
                    add_planes(&mut c, nb, &hload::<V>(h, at(y + 2 * r, 0), plane, i));
                    if y > 0 {
                        sub_planes(&mut c, nb, &hload::<V>(h, at(y - 1, 0), plane, i));
                    }
                }
                LtlShape::Diamond => {
                    c = [V::ZERO; PLANES];
                    for dy in 0..=2 * r {
                        let w = r - dy.abs_diff(r);
                        add_planes(&mut c, nb, &hload::<V>(h, at(y + dy, w), plane, i));
                    }
                }
            }
            let o = g.row_offset(y as isize) + V::N * i;
            let centre = V::load(src, o);
            // The box and diamond counts include the centre; M0 takes it out.
            let mut k = c;
            if !ltl.middle {
                let mut one = [V::ZERO; HPLANES];
                one[0] = centre;
                sub_planes(&mut k, nb, &one);
            }
            let birth = in_range(&k, nb, ltl.birth);
            let survive = in_range(&k, nb, ltl.survive);
            let mut v = (mux(centre, birth, survive) & m) | e;
            if y == 0 || y + 1 == rows {
                v |= full;
            }
            v.store(out, o);
            count = count.add(v.popcnt());
        }
    }
    count.sum()
}

/// Copy `g` into `out` with `r` margin rows above and below and a margin word left and right
/// (`stride` words a row), the margins read per `outside` as the oracle reads cells beyond the
/// edge (a torus: `(y mod rows, x mod cols)`, however small the grid).
fn pad(g: &Grid, outside: Outside, r: usize, stride: usize, out: &mut Vec<u64>) {
    let (rows, cols, wpr) = (g.rows(), g.cols(), g.words_per_row());
    let prow = rows + 2 * r;
    out.clear();
    let fill = if outside == Outside::Wall { !0 } else { 0 };
    out.resize(prow * stride, fill);
    // Bits x in -64..0 (word 0) and cols..cols + 64 of a padded row of grid row `gy`.
    let margin_bit = |gy: usize, x: isize| -> bool {
        match outside {
            Outside::Floor => false,
            Outside::Wall => true,
            Outside::Wrap => g.get(gy, x.rem_euclid(cols as isize) as usize),
        }
    };
    for gy in 0..rows {
        let o = (gy + r) * stride;
        let row = &mut out[o..o + stride];
        row[1..1 + wpr].copy_from_slice(g.row(gy));
        // Left margin word: x = -64..-1 at bits 0..63.
        let mut left = 0u64;
        for b in 0..64 {
            left |= (margin_bit(gy, b as isize - 64) as u64) << b;
        }
        row[0] = left;
        // Right margin: x = cols .. cols + 63 (bits past the row, into the following words),
        // the words beyond read per `fill`.
        row[1 + wpr..].fill(fill);
        for dx in 0..64usize {
            let x = cols + dx;
            let (w, b) = (1 + x / 64, x % 64);
            if w < stride {
                if margin_bit(gy, x as isize) {
                    row[w] |= 1 << b;
                } else {
                    row[w] &= !(1 << b);
                }
            }
        }
    }
    // Margin rows: constants, or for a torus copies of the padded rows they wrap to.
    if outside == Outside::Wrap {
        for k in 0..r {
            for (dst, src) in [
                (
                    k,
                    r + (((k as isize - r as isize).rem_euclid(rows as isize)) as usize),
                ),
                (rows + r + k, r + ((rows + k) % rows)),
            ] {
                out.copy_within(src * stride..(src + 1) * stride, dst * stride);
            }
        }
    }
}

/// The horizontal counts of the vector at `padded[o..]` for every width in `widths`, into
/// `h[base + (wi * HPLANES + p) * plane + N * i]`: each count a bit-sliced sum of shifted
/// words, width `w` = width `w - 1` plus the cells at `x - w` and `x + w`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn hcounts<V: Lane>(
    padded: &[u64],
    o: usize,
    r: usize,
    widths: &[usize],
    h: &mut [u64],
    base: usize,
    i: usize,
    plane: usize,
) {
    let (before, centre, after) = (
        V::load(padded, o - 1),
        V::load(padded, o),
        V::load(padded, o + 1),
    );
    let mut acc = [V::ZERO; HPLANES];
    acc[0] = centre;
    let mut wi = 0;
    for w in 0..=r {
        if w > 0 {
            let d = w as u32;
            let west = centre.shl(d) | before.shr(64 - d);
            let east = centre.shr(d) | after.shl(64 - d);
            add_bit(&mut acc, west);
            add_bit(&mut acc, east);
        }
        if widths.get(wi) == Some(&w) {
            for (p, v) in acc.iter().enumerate() {
                v.store(h, base + (wi * HPLANES + p) * plane + V::N * i);
            }
            wi += 1;
        }
    }
}

/// The [`HPLANES`] planes of a horizontal count for vector `i`, from `h[at..]`.
#[inline(always)]
fn hload<V: Lane>(h: &[u64], at: usize, plane: usize, i: usize) -> [V; HPLANES] {
    let mut x = [V::ZERO; HPLANES];
    for (p, xp) in x.iter_mut().enumerate() {
        *xp = V::load(h, at + p * plane + V::N * i);
    }
    x
}

/// `acc += bit` over the counter planes (a half-adder ripple: 2 ops a plane).
#[inline(always)]
fn add_bit<V: Lane>(acc: &mut [V; HPLANES], bit: V) {
    let mut carry = bit;
    for p in acc.iter_mut() {
        let s = *p ^ carry;
        carry &= *p;
        *p = s;
    }
}

/// `c += x` over the first `nb` planes (`x` zero past [`HPLANES`]): a ripple of full adders,
/// 5 ops a plane. (Arrays, no closures: a closure may be compiled out of line, without the
/// clone's features.)
#[inline(always)]
fn add_planes<V: Lane>(c: &mut [V; PLANES], nb: usize, x: &[V; HPLANES]) {
    let mut carry = V::ZERO;
    for (p, cp) in c.iter_mut().enumerate().take(nb) {
        let xp = if p < HPLANES { x[p] } else { V::ZERO };
        let (s, k) = full_add(*cp, xp, carry);
        *cp = s;
        carry = k;
    }
}

/// `c -= x` over the first `nb` planes: `c + !x + 1` in two's complement.
#[inline(always)]
fn sub_planes<V: Lane>(c: &mut [V; PLANES], nb: usize, x: &[V; HPLANES]) {
    let mut carry = V::ONES;
    for (p, cp) in c.iter_mut().enumerate().take(nb) {
        let xp = if p < HPLANES { !x[p] } else { V::ONES };
        let (s, k) = full_add(*cp, xp, carry);
        *cp = s;
        carry = k;
    }
}

/// Per bit, whether the count on the planes is `>= k` (bits from the lowest: a 1 in `k` needs
/// the plane and what is below, a 0 is met by the plane or what is below).
#[inline(always)]
fn at_least<V: Lane>(c: &[V; PLANES], nb: usize, k: u32) -> V {
    if k >= 1 << nb {
        return V::ZERO;
    }
    let mut ge = V::ONES;
    for (p, cp) in c.iter().enumerate().take(nb) {
        ge = if k >> p & 1 == 1 { *cp & ge } else { *cp | ge };
    }
    ge
}

/// Per bit, whether the count is in `lo..=hi`.
#[inline(always)]
fn in_range<V: Lane>(c: &[V; PLANES], nb: usize, (lo, hi): (u16, u16)) -> V {
    at_least(c, nb, lo as u32) & !at_least(c, nb, hi as u32 + 1)
}
