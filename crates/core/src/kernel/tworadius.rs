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
//! A batch of caves in SIMD lanes (one cave per lane, [`step_two_radius_lanes`]) runs the same
//! sums for passes whose outside is FLOOR or WALL: every cell outside, the second ring too, is
//! then a constant register. RogueBasin's preset went from 5.6 us of passes per cave (one grid at
//! a time) to 0.7 us, and its caves are measured in their lanes after (issue 38).
//!
//! Cells outside the grid: one ring comes from [`Grid::prepare_edges`] (guard words, padding,
//! guard rows); the second ring is ours: for `floor`/`wall` the guards are whole constant words
//! and rows, so rows `-2` and `rows + 1` map to the guard rows; for `wrap` rows are mapped modulo
//! `rows` and bit 62 of the left guard word and the second padding bit get the wrapped cells.

use super::batch::LaneGrid;
use crate::grid::Grid;
use crate::rule::{Border, Outside};
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
    hsums_of(l, w, r)
}

/// Horizontal sums of word `w` with the words `l` (lower columns) and `r` beside it:
/// `(H3 low, H3 high, H2 low, H2 high)`, H3 = columns x-1..=x+1, H2 = columns x-2 and x+2.
#[inline(always)]
fn hsums_of<V: Lane>(l: V, w: V, r: V) -> [V; 4] {
    let m1 = w.shl(1) | l.shr(63);
    let m2 = w.shl(2) | l.shr(62);
    let p1 = w.shr(1) | r.shl(63);
    let p2 = w.shr(2) | r.shl(62);
    let (h3l, h3h) = fa(m1, w, p1);
    [h3l, h3h, m2 ^ p2, m2 & p2]
}

/// The rule on the middle row of a window of 5 rows' horizontal sums (`y-2..=y+2`): WALL iff
/// `R1 >= t1` or (with `m2`) `R2 <= m2`.
#[inline(always)]
fn window_rule<V: Lane>(win: &[[V; 4]; 5], t1: u32, m2: Option<u32>) -> V {
    let [d, a, b, c, e] = *win;
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
    wall
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
            let wall = window_rule(&win, t1, m2);
            (wall & wmask).store(out, dst_off0 + y as usize * dstride + i);
            win = [win[1], win[2], win[3], win[4], [V::ZERO; 4]];
        }
    }
}

/// Whether a pass of the two-radius rule `R1>=a/R2<=b` runs in lanes
/// ([`step_two_radius_lanes`]): sync, and cells outside read as a constant (FLOOR or WALL), so
/// the second ring outside needs no guard rows or words of its own (wrapping would).
pub fn lanes_fit(pass: &crate::rule::Pass) -> Option<(u8, u8)> {
    match (pass.rule, pass.update, pass.outside) {
        (
            crate::rule::Rule::TwoRadius {
                r1_min,
                r2_max: Some(r2),
            },
            crate::rule::Update::Sync,
            Outside::Floor | Outside::Wall,
        ) => Some((r1_min, r2)),
        _ => None,
    }
}

/// One two-radius step of every cave of a batch, `src` -> `dst` (laid out as
/// [`LaneGrid`]: a guard vector each side of a row, a guard row above and below), for a pass
/// [`lanes_fit`] accepts; with `border` solid the outer ring is stored as WALL. Returns the walls
/// of `dst` per lane.
///
/// The same sums as the strip walk of one grid ([`step`]), one cave per lane: a row
/// word's horizontal neighbours are the words beside it in the same lane, and every cell
/// outside the cave, the second ring included, is the constant `outside` (taken as a register,
/// not loaded): neither buffer's guards are read or written, and `src` is left as it was.
/// `inline(always)`: it runs inside the caller's SIMD clone, with its features.
#[inline(always)]
pub fn step_two_radius_lanes<V: Lane>(
    src: &mut LaneGrid<'_, V>,
    dst: &mut LaneGrid<'_, V>,
    (r1_min, r2_max): (u8, u8),
    outside: Outside,
    border: Border,
) -> V {
    let solid = border == Border::Solid;
    match (r1_min, r2_max) {
        // The presets' rule, with its thresholds folded into the comparisons.
        (5, 2) => lanes_in(src, dst, 5, 2, outside, solid),
        _ => lanes_in(src, dst, r1_min as u32, r2_max as u32, outside, solid),
    }
}

/// Horizontal sums of word `i` of row `yy` of a lane batch (`s`, row 0 at `o0`, rows `stride`
/// vectors apart): cells outside the cave (rows `yy` outside `0..rows`, words beside the row,
/// bits past `lm` in the last word) read as `g`. A plain function, not a closure: a closure may
/// be compiled out of line, without the SIMD clone's features.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn lane_sums<V: Lane>(
    s: &[V],
    o0: usize,
    stride: usize,
    i: usize,
    wpr: usize,
    rows: usize,
    yy: isize,
    g: V,
    lm: V,
) -> [V; 4] {
    if yy < 0 || yy >= rows as isize {
        return hsums_of(g, g, g);
    }
    let o = o0 + yy as usize * stride + i;
    let l = if i == 0 { g } else { s[o - 1] };
    let (w, r) = if i + 1 == wpr {
        ((s[o] & lm) | (g & !lm), g)
    } else if i + 2 == wpr {
        (s[o], (s[o + 1] & lm) | (g & !lm))
    } else {
        (s[o], s[o + 1])
    };
    hsums_of(l, w, r)
}

#[inline(always)]
fn lanes_in<V: Lane>(
    src: &mut LaneGrid<'_, V>,
    dst: &mut LaneGrid<'_, V>,
    t1: u32,
    m2: u32,
    outside: Outside,
    solid: bool,
) -> V {
    let (rows, cols) = (src.rows(), src.cols());
    assert_eq!((rows, cols), (dst.rows(), dst.cols()));
    let wpr = cols.div_ceil(64);
    let g = match outside {
        Outside::Floor => V::ZERO,
        Outside::Wall => V::ONES,
        Outside::Wrap => unreachable!("lanes_fit refuses wrapping passes"),
    };
    let last = match cols % 64 {
        0 => !0u64,
        r => (1u64 << r) - 1,
    };
    let (so, doff) = (src.row_offset(0), dst.row_offset(0));
    let stride = wpr + 2;
    let s = src.raw_mut();
    let d = dst.raw_mut();
    let mut count = V::ZERO;
    for i in 0..wpr {
        let mask = V::splat(if i + 1 == wpr { last } else { !0 });
        let lm = V::splat(last);
        let mut win: [[V; 4]; 5] = [
            lane_sums(s, so, stride, i, wpr, rows, -2, g, lm),
            lane_sums(s, so, stride, i, wpr, rows, -1, g, lm),
            lane_sums(s, so, stride, i, wpr, rows, 0, g, lm),
            lane_sums(s, so, stride, i, wpr, rows, 1, g, lm),
            [V::ZERO; 4],
        ];
        // The ring's bits of this word (first and last columns).
        let mut edge = 0u64;
        if i == 0 {
            edge |= 1;
        }
        if i == (cols - 1) / 64 {
            edge |= 1 << ((cols - 1) % 64);
        }
        let e = V::splat(if solid { edge } else { 0 });
        for y in 0..rows {
            win[4] = lane_sums(s, so, stride, i, wpr, rows, y as isize + 2, g, lm);
            let wall = if solid && (y == 0 || y + 1 == rows) {
                mask
            } else {
                (window_rule(&win, t1, Some(m2)) | e) & mask
            };
            d[doff + y * stride + i] = wall;
            count = count.add(wall.popcnt());
            win = [win[1], win[2], win[3], win[4], [V::ZERO; 4]];
        }
    }
    count
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

    /// A batch in lanes (every SIMD path, each lane its own random cave, a partial batch too)
    /// stepped by [`step_two_radius_lanes`] equals the oracle cave by cave, with the walls it
    /// counts; outside FLOOR and WALL, border none and solid, three steps.
    fn check_lanes(
        rows: usize,
        cols: usize,
        seed: u64,
        r1_min: u8,
        r2_max: u8,
        outside: Outside,
        border: Border,
    ) -> Result<(), TestCaseError> {
        let pass = Pass {
            repeat: 3,
            ..Pass::sync(
                Rule::TwoRadius {
                    r1_min,
                    r2_max: Some(r2_max),
                },
                outside,
                border,
            )
        };
        prop_assert!(lanes_fit(&pass).is_some());
        for simd in Simd::available() {
            let n = simd.lanes().max(2) - 1;
            let grids: Vec<Grid> = (0..n)
                .map(|k| {
                    let mut x = seed ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    let mut g = Grid::new(rows, cols).unwrap();
                    for y in 0..rows {
                        for c in 0..cols {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            g.set(y, c, x >> 62 != 0 && (x >> 40) % 5 < 3);
                        }
                    }
                    g
                })
                .collect();
            let mut lanes = crate::kernel::batch::Lanes::new(simd, rows, cols);
            lanes.load(&grids);
            let walls = lanes.run_pass(&pass);
            let mut got = vec![Grid::new(rows, cols).unwrap(); n];
            lanes.store(&mut got);
            for (k, g) in grids.iter().enumerate() {
                let mut b = ByteGrid::from_grid(g);
                for _ in 0..3 {
                    b.step(&Pass { repeat: 1, ..pass });
                }
                let want = b.to_grid();
                prop_assert_eq!(
                    got[k].raw(),
                    want.raw(),
                    "{} lane {} {}x{} R1>={}/R2<={} {} {}\nwant\n{}got\n{}",
                    simd,
                    k,
                    rows,
                    cols,
                    r1_min,
                    r2_max,
                    outside,
                    border,
                    want,
                    got[k]
                );
                prop_assert_eq!(walls[k], want.count_walls());
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(120))]
        #[test]
        fn lanes_match_oracle(
            rows in 1usize..40, cols in 1usize..260, seed: u64,
            r1 in prop_oneof![Just(5u8), 0u8..=9], r2 in prop_oneof![Just(2u8), 0u8..=21],
            wall: bool, solid: bool,
        ) {
            let outside = if wall { Outside::Wall } else { Outside::Floor };
            let border = if solid { Border::Solid } else { Border::None };
            check_lanes(rows, cols, seed, r1, r2, outside, border)?;
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
