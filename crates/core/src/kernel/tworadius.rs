//! The buffered two-radius step (RogueBasin): WALL iff `R1 >= r1_min` or, when `r2_max` is set,
//! `R2 <= r2_max`; R1 = walls in the 3x3 including the centre, R2 = walls in the 5x5 minus its
//! 4 corners (21 cells). Bit-parallel, 64 cells per word, exact against the oracle.
//!
//! Layout of the work: the grid is walked in vertical strips one vector wide (the clone's row
//! vector: 4 words from AVX2 up; outer loop over the strips, inner over rows), keeping the
//! horizontal sums of the 5 rows `y-2..=y+2` in registers; each row's words are loaded and
//! shifted once per strip. Per row (amortised per output word):
//!
//! * `h-2, h-1, h+1, h+2`: 4 shifted copies from the word and its neighbours (12 ops);
//! * `H3 = h-1 + h0 + h1` (full adder, 5 ops) and `H2 = h-2 + h+2` (half adder, 2 ops).
//!
//! Per output word: `R1 = H3[y-1] + H3[y] + H3[y+1]` (14 ops, 4 bits),
//! `R2 = R1 + H2[y-1] + H2[y] + H2[y+1] + H3[y-2] + H3[y+2]` (47 ops carry-save, 5 bits), and the
//! two comparisons as the carry out of `R + (2^n - threshold)`: 4 ops per bit with a run-time
//! threshold, 2-3 ops in total once a constant threshold is folded (the preset `R1>=5/R2<=2` and
//! `R1>=5` get folded copies). Total for `R1>=5/R2<=2`: 19 + 14 + 47 + ~8 + store ≈ 90 ops per
//! 64 cells; `R1>=5` alone ≈ 37. Full 5-bit sums beat saturating (thermometer) counters here:
//! a thermometer for `R2 <= 2` costs 4 ops per input (84 for 21 inputs) against ~61 for the sums.
//!
//! Cells outside the grid: one ring comes from [`Grid::prepare_edges`] (guard words, padding,
//! guard rows); the second ring is ours: for `floor`/`wall` the guards are whole constant words
//! and rows, so rows `-2` and `rows + 1` map to the guard rows; for `wrap` rows are mapped modulo
//! `rows` and bit 62 of the left guard word and the second padding bit get the wrapped cells.

use crate::grid::Grid;
use crate::rule::Outside;
use crate::simd::{Isa, Lane, Simd};

/// One buffered two-radius step from `src` into `dst` (same shape).
///
/// `src` keeps its cells; its guards are used as scratch and cleared again (the grid invariant
/// holds on return). Every word of `dst`'s rows is overwritten and its padding bits end zero.
///
/// # Panics
/// If `dst` does not have `src`'s shape (a programming error, not user input).
#[inline(always)]
pub(crate) fn step_two_radius<I: Isa>(
    src: &mut Grid,
    dst: &mut Grid,
    r1_min: u8,
    r2_max: Option<u8>,
    outside: Outside,
) {
    assert_eq!(
        (src.rows(), src.cols()),
        (dst.rows(), dst.cols()),
        "step_two_radius: src and dst shapes differ"
    );
    prepare_two_rings(src, outside);
    match (r1_min, r2_max) {
        (5, Some(2)) => strips::<I::Row>(src, dst, 5, Some(2), outside),
        (5, None) => strips::<I::Row>(src, dst, 5, None, outside),
        _ => strips::<I::Row>(src, dst, r1_min as u32, r2_max.map(u32::from), outside),
    }
    src.clear_edges();
}

/// `step_two_radius` on a given SIMD path (for callers outside a SIMD clone).
pub fn step(
    simd: Simd,
    src: &mut Grid,
    dst: &mut Grid,
    r1_min: u8,
    r2_max: Option<u8>,
    outside: Outside,
) {
    crate::simd_run!(simd, <I> (
        src: &'a mut Grid = src,
        dst: &'a mut Grid = dst,
        r1_min: u8 = r1_min,
        r2_max: Option<u8> = r2_max,
        outside: Outside = outside,
    ) -> () {
        step_two_radius::<I>(src, dst, r1_min, r2_max, outside)
    })
}

/// `prepare_edges` plus the second ring of the torus (see module docs).
fn prepare_two_rings(g: &mut Grid, outside: Outside) {
    g.prepare_edges(outside);
    if outside != Outside::Wrap {
        return;
    }
    let (rows, cols) = (g.rows(), g.cols());
    for y in 0..rows {
        let o = g.row_offset(y as isize);
        let cell = |g: &Grid, x: usize| (g.raw()[o + x / 64] >> (x % 64)) & 1;
        let left2 = cell(g, (cols as isize - 2).rem_euclid(cols as isize) as usize);
        let right2 = cell(g, 1 % cols);
        let raw = g.raw_mut();
        raw[o - 1] |= left2 << 62;
        let p = cols + 1;
        raw[o + p / 64] |= right2 << (p % 64);
    }
}

use super::adders::full_add as fa;

/// Bitwise `R >= t` for an `N`-bit number `R` given as bit planes (LSB first): the carry out of
/// `R + (2^N - t)`. Constant-folds to a few ops when `t` is a compile-time constant.
#[inline(always)]
fn ge<V: Lane, const N: usize>(r: [V; N], t: u32) -> V {
    if t == 0 {
        return V::ONES;
    }
    if t >= 1 << N {
        return V::ZERO;
    }
    let k = (1u32 << N) - t;
    let mut c = V::ZERO;
    for (b, &rb) in r.iter().enumerate() {
        let kb = V::splat(0u64.wrapping_sub(((k >> b) & 1) as u64));
        c = (rb & c) | (kb & (rb | c));
    }
    c
}

/// Horizontal sums of the row vector at `o`: `(H3 low, H3 high, H2 low, H2 high)`.
#[inline(always)]
fn hsums<V: Lane>(raw: &[u64], o: usize) -> [V; 4] {
    assert!(o >= 1 && o + V::N < raw.len());
    // SAFETY: words o - 1 ..= o + N are inside `raw`, as just asserted.
    let (l, w, r) = unsafe {
        let p = raw.as_ptr();
        (
            V::read(p.add(o - 1)),
            V::read(p.add(o)),
            V::read(p.add(o + 1)),
        )
    };
    let m1 = w.shl(1) | l.shr(63);
    let m2 = w.shl(2) | l.shr(62);
    let p1 = w.shr(1) | r.shl(63);
    let p2 = w.shr(2) | r.shl(62);
    let (h3l, h3h) = fa(m1, w, p1);
    [h3l, h3h, m2 ^ p2, m2 & p2]
}

/// The strip walk (see module docs); `inline(always)` so constant thresholds fold.
#[inline(always)]
fn strips<V: Lane>(src: &Grid, dst: &mut Grid, t1: u32, m2: Option<u32>, outside: Outside) {
    let (rows, wpr) = (src.rows(), src.words_per_row());
    assert!(V::N <= 4 && 4 % V::N == 0, "row vectors of 1, 2 or 4 words");
    let mask = src.last_word_mask();
    let ri = rows as isize;
    // Offset of word 0 of the row that row index `yy` (in -2..rows+2) reads.
    let row_of = |yy: isize| -> usize {
        let y = match outside {
            Outside::Wrap => yy.rem_euclid(ri),
            _ => yy.clamp(-1, ri),
        };
        src.row_offset(y)
    };
    let raw = src.raw();
    let dst_off0 = dst.row_offset(0);
    let dstride = dst.stride();
    let out = dst.raw_mut();
    for i in (0..wpr).step_by(V::N) {
        // Words past the row's end are padding: they must stay zero.
        let wmask = V::from_fn(|k| match (i + k).cmp(&(wpr - 1)) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => mask,
            std::cmp::Ordering::Greater => 0,
        });
        let mut win: [[V; 4]; 5] = [
            hsums(raw, row_of(-2) + i),
            hsums(raw, row_of(-1) + i),
            hsums(raw, row_of(0) + i),
            hsums(raw, row_of(1) + i),
            [V::ZERO; 4],
        ];
        for y in 0..ri {
            win[4] = hsums(raw, row_of(y + 2) + i);
            let [d, a, b, c, e] = win;
            // R1 = H3[y-1] + H3[y] + H3[y+1]  (0..9, 4 bits)
            let (r0, k1) = fa(a[0], b[0], c[0]);
            let (s, k2) = fa(a[1], b[1], c[1]);
            let (r1, k3) = (s ^ k1, s & k1);
            let (r2, r3) = (k2 ^ k3, k2 & k3);
            let mut wall = ge([r0, r1, r2, r3], t1);
            if let Some(m) = m2 {
                // R2 = R1 + H2[y-1..=y+1] + H3[y-2] + H3[y+2]  (0..21, 5 bits)
                let (x1, cx1) = fa(r0, d[0], e[0]);
                let (x2, cx2) = fa(a[2], b[2], c[2]);
                let (z0, cx3) = (x1 ^ x2, x1 & x2);
                let (y1, cy1) = fa(r1, d[1], e[1]);
                let (y2, cy2) = fa(a[3], b[3], c[3]);
                let (y3, cy3) = fa(cx1, cx2, cx3);
                let (z1, cy4) = fa(y1, y2, y3);
                let (u1, cu1) = fa(r2, cy1, cy2);
                let (z2, cu2) = fa(u1, cy3, cy4);
                let (z3, z4) = fa(r3, cu1, cu2);
                wall |= !ge([z0, z1, z2, z3, z4], m + 1);
            }
            (wall & wmask).store(out, dst_off0 + y as usize * dstride + i);
            win = [a, b, c, e, [V::ZERO; 4]];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ByteGrid;
    use crate::rule::{Border, Pass, Rule};
    use proptest::prelude::*;

    use crate::kernel::strategies;

    fn oracle(g: &Grid, r1_min: u8, r2_max: Option<u8>, outside: Outside) -> Grid {
        let mut b = ByteGrid::from_grid(g);
        b.step(&Pass::sync(
            Rule::TwoRadius { r1_min, r2_max },
            outside,
            Border::None,
        ));
        b.to_grid()
    }

    fn fast(g: &Grid, r1_min: u8, r2_max: Option<u8>, outside: Outside) -> Grid {
        fast_on(Simd::detect(), g, r1_min, r2_max, outside)
    }

    fn fast_on(simd: Simd, g: &Grid, r1_min: u8, r2_max: Option<u8>, outside: Outside) -> Grid {
        let mut src = g.clone();
        let mut dst = Grid::new(g.rows(), g.cols()).unwrap();
        dst.fill(true); // stale contents must be overwritten
        step(simd, &mut src, &mut dst, r1_min, r2_max, outside);
        assert_eq!(src.raw(), g.raw(), "src must be left unchanged");
        dst
    }

    #[test]
    fn ge_matches_comparison() {
        for v in 0u32..32 {
            let planes: [u64; 5] =
                std::array::from_fn(|b| 0u64.wrapping_sub(((v >> b) & 1) as u64));
            for t in 0..40 {
                assert_eq!(ge::<u64, 5>(planes, t) == !0, v >= t, "{v} >= {t}");
            }
        }
    }

    /// Hand-worked, 5x5 with a single wall at the centre (2,2), R1>=1/R2<=0.
    /// R1 >= 1 holds for the 3x3 around the centre. R2 <= 0 needs a 21-cell window missing
    /// (2,2): with outside floor only the 4 grid corners qualify ((2,2) is their excluded window
    /// corner) -> the 3x3 block plus the 4 corners. With outside wall every border cell's 3x3
    /// reaches outside walls, so R1 >= 1 on the whole border too -> all walls.
    #[test]
    fn hand_worked_single_wall() {
        let g = Grid::from_text(".....\n.....\n..#..\n.....\n.....\n").unwrap();
        let f = fast(&g, 1, Some(0), Outside::Floor);
        assert_eq!(f.to_text(), "#...#\n.###.\n.###.\n.###.\n#...#\n");
        let w = fast(&g, 1, Some(0), Outside::Wall);
        assert_eq!(w.to_text(), "#####\n#####\n#####\n#####\n#####\n");
        // Torus: R2 windows of the corners wrap and see the centre? (0,0)'s window spans rows
        // -2..2 and cols -2..2 minus corners; (2,2) is the (+2,+2) corner -> excluded. The torus
        // wraps (-2,-2) to (3,3): also a corner. So the torus corners behave like floor's.
        let t = fast(&g, 1, Some(0), Outside::Wrap);
        assert_eq!(t.to_text(), "#...#\n.###.\n.###.\n.###.\n#...#\n");
        // R1>=5 alone on a lone wall: nothing reaches 5.
        assert_eq!(fast(&g, 5, None, Outside::Floor).count_walls(), 0);
        // Outside wall, all floor: a corner cell's R1 sees 5 outside walls, an edge cell 3.
        let e = Grid::new(4, 4).unwrap();
        let c = fast(&e, 5, None, Outside::Wall);
        assert_eq!(c.to_text(), "#..#\n....\n....\n#..#\n");
    }

    fn arb_r2() -> impl Strategy<Value = Option<u8>> {
        prop_oneof![Just(None), Just(Some(2u8)), (0u8..=21).prop_map(Some)]
    }

    fn check(
        rows: usize,
        cols: usize,
        bits: Vec<bool>,
        r1_min: u8,
        r2_max: Option<u8>,
        outside: Outside,
    ) -> Result<(), TestCaseError> {
        let mut g = Grid::new(rows, cols).unwrap();
        for y in 0..rows {
            for x in 0..cols {
                g.set(y, x, bits[(y * cols + x) % bits.len()]);
            }
        }
        for step in 0..3 {
            let want = oracle(&g, r1_min, r2_max, outside);
            for simd in Simd::available() {
                let got = fast_on(simd, &g, r1_min, r2_max, outside);
                prop_assert_eq!(
                    got.raw(),
                    want.raw(),
                    "{} step {} {}x{} R1>={} R2<={:?} {}\nwant\n{}got\n{}",
                    simd,
                    step,
                    rows,
                    cols,
                    r1_min,
                    r2_max,
                    outside,
                    want,
                    got
                );
            }
            g = want;
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
            r1 in prop_oneof![Just(5u8), 0u8..=9], r2 in arb_r2(), outside in strategies::outside(),
        ) {
            check(rows, cols, bits, r1, r2, outside)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn big_shapes_match_oracle(
            rows in strategies::edge_rows(),
            cols in strategies::edge_cols(),
            bits in prop::collection::vec(any::<bool>(), 1000..3000),
            r1 in prop_oneof![Just(5u8), 0u8..=9], r2 in arb_r2(), outside in strategies::outside(),
        ) {
            check(rows, cols, bits, r1, r2, outside)?;
        }
    }
}
