//! Sync Moore steps for narrow grids (rows of one or two 64-bit words, at most 128 columns,
//! outside `floor` or `wall`): NetHack's 19 x 77 passes 2 and 3.
//!
//! The general sync kernel ([`super::sync::step_grid`]) loads each row with its guard words, so
//! a step with outside `wall` first writes the outside into every guard (prepare) and zeroes
//! it again afterwards (clear): for a 19 x 77 grid that bookkeeping cost as much as the step
//! itself (~0.32 us per pass, dev probe `examples/nethack_passes.rs`). Here the rows are read
//! straight into registers, the outside is OR-ed in as constants (the left word of word 0, the
//! right word of the last word, the padding bits of the last word, the rows above the first
//! and below the last), and nothing outside the grid is ever written: `src` is only read, and
//! `dst`'s guards and padding keep their zeros.
//!
//! Ops per 64-cell word: 10 shifts/ors for the 8 neighbour words, 13 for the 8 -> 4 carry-save
//! count (bit planes n0, n1, n2 and n8 = "all eight"), the rule pair (birth for FLOOR,
//! survive for WALL) folded to a few ops when it is a compile-time constant (NetHack's rules
//! are dispatched as constants), 3 for the centre select, 1 popcount.

use crate::grid::Grid;
use crate::rule::{Border, Outside};

/// One sync step of `birth`/`survive` from `src` into `dst` (same shape) if the shape and
/// outside fit this kernel (`cols <= 128`, outside `floor` or `wall`); returns the WALL cells
/// of `dst`, or `None` (nothing written) when the caller must use the general kernel. With
/// `border` solid the outer ring of `dst` is WALL. `src` and `dst` must satisfy the grid
/// invariant (every bit outside the grid zero); `dst` does afterwards.
#[inline(always)]
pub(crate) fn step(
    src: &Grid,
    dst: &mut Grid,
    birth: u16,
    survive: u16,
    outside: Outside,
    border: Border,
) -> Option<u64> {
    let wall = match outside {
        Outside::Wall => true,
        Outside::Floor => false,
        Outside::Wrap => return None,
    };
    let solid = border == Border::Solid;
    assert_eq!((src.rows(), src.cols()), (dst.rows(), dst.cols()));
    Some(match (src.words_per_row(), birth, survive) {
        // NetHack's passes 2 and 3 with the rule constant-folded.
        (1, 0x008, 0x1ff) => rows::<1>(src, dst, 0x008, 0x1ff, wall, solid),
        (2, 0x008, 0x1ff) => rows::<2>(src, dst, 0x008, 0x1ff, wall, solid),
        (1, 0x1c0, 0x1ff) => rows::<1>(src, dst, 0x1c0, 0x1ff, wall, solid),
        (2, 0x1c0, 0x1ff) => rows::<2>(src, dst, 0x1c0, 0x1ff, wall, solid),
        (1, b, s) => rows::<1>(src, dst, b, s, wall, solid),
        (2, b, s) => rows::<2>(src, dst, b, s, wall, solid),
        _ => return None,
    })
}

use super::adders::{full_add as fa, mux, table_mux8};

/// `f(n)` per bit for a neighbour count `n = n0 + 2 n1 + 4 n2`, or `n = 8` where `n8` is set
/// (then `n0 = n1 = n2 = 0`); bit `k` of `table` is `f(k)`. A mux tree over constant leaves,
/// folded to a few ops when `table` is a compile-time constant.
#[inline(always)]
fn table9(table: u16, n0: u64, n1: u64, n2: u64, n8: u64) -> u64 {
    let at8 = 0u64.wrapping_sub((table >> 8 & 1) as u64);
    mux(n8, table_mux8(table, n0, n1, n2), at8)
}

/// The new word of the cells `c` from the rows above (`a`) and below (`b`), each with its
/// left and right neighbour words (`*l`, `*r`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn word(
    birth: u16,
    survive: u16,
    [al, a, ar]: [u64; 3],
    [cl, c, cr]: [u64; 3],
    [bl, b, br]: [u64; 3],
) -> u64 {
    let (sa, ca) = fa((a << 1) | (al >> 63), a, (a >> 1) | (ar << 63));
    let (sb, cb) = fa((b << 1) | (bl >> 63), b, (b >> 1) | (br << 63));
    let (x, y) = ((c << 1) | (cl >> 63), (c >> 1) | (cr << 63));
    let (sc, cc) = (x ^ y, x & y);
    // Ones: sa + sb + sc; twos: ca + cb + cc + the carry of the ones; fours: the carries.
    let (n0, k1) = fa(sa, sb, sc);
    let (t, f1) = fa(ca, cb, cc);
    let (n1, f2) = (t ^ k1, t & k1);
    let (n2, n8) = (f1 ^ f2, f1 & f2);
    let born = table9(birth, n0, n1, n2, n8);
    let kept = table9(survive, n0, n1, n2, n8);
    born ^ ((born ^ kept) & c)
}

/// The kernel for rows of exactly `N` words; see [`step`]. One row after another, the three
/// rows in registers. (Copying the words into per-column arrays so the row loop runs in vectors
/// across rows was slower on NetHack's 19 rows: 0.35 vs 0.23 us per pass.)
#[inline(always)]
fn rows<const N: usize>(
    src: &Grid,
    dst: &mut Grid,
    birth: u16,
    survive: u16,
    wall: bool,
    solid: bool,
) -> u64 {
    let (rows, cols, stride) = (src.rows(), src.cols(), src.stride());
    assert!(N == src.words_per_row() && N + 2 <= stride && dst.stride() == stride);
    let mask = src.last_word_mask();
    let out = if wall { !0u64 } else { 0 };
    let o0 = src.row_offset(0);
    let sraw = src.raw();
    // Row `y` as the step reads it: the outside in the padding bits of the last word.
    let load = |y: usize| -> [u64; N] {
        let r: &[u64; N] = sraw[o0 + y * stride..o0 + y * stride + N]
            .try_into()
            .expect("N words");
        let mut r = *r;
        r[N - 1] |= out & !mask;
        r
    };
    // Each word with its left and right neighbour words (the outside beyond the row).
    let ctx = |r: &[u64; N], i: usize| -> [u64; 3] {
        [
            if i == 0 { out } else { r[i - 1] },
            r[i],
            if i + 1 == N { out } else { r[i + 1] },
        ]
    };
    let lc = cols - 1;
    let draw = dst.raw_mut();
    let mut count = 0u64;
    let mut a = [out; N];
    let mut c = load(0);
    for y in 0..rows {
        let b = if y + 1 < rows { load(y + 1) } else { [out; N] };
        let edge_row = solid && (y == 0 || y + 1 == rows);
        for i in 0..N {
            let m = if i + 1 == N { mask } else { !0 };
            let mut v = word(birth, survive, ctx(&a, i), ctx(&c, i), ctx(&b, i));
            if solid {
                if edge_row {
                    v = !0;
                }
                if i == 0 {
                    v |= 1;
                }
                if i == lc / 64 {
                    v |= 1u64 << (lc % 64);
                }
            }
            v &= m;
            count += v.count_ones() as u64;
            draw[o0 + y * stride + i] = v;
        }
        a = c;
        c = b;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Stepper;
    use crate::oracle::ByteGrid;
    use crate::rule::{Pass, Rule};
    use crate::simd::Simd;
    use proptest::prelude::*;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_grid(rows: usize, cols: usize, density: u32, seed: u64) -> Grid {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut g = Grid::new(rows, cols).unwrap();
        for y in 0..rows {
            for x in 0..cols {
                g.set(y, x, rng.next_u32() % 100 < density);
            }
        }
        g
    }

    /// NetHack's rules (constant-folded arms) half the time, arbitrary masks otherwise.
    fn rule() -> impl Strategy<Value = (u16, u16)> {
        prop_oneof![
            prop::sample::select(vec![(0x008u16, 0x1ffu16), (0x1c0, 0x1ff), (0x1c0, 0x1f0)]),
            (0u16..512, 0u16..512),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]

        /// The narrow kernel alone, and through the stepper on every SIMD path, against the
        /// oracle: grid, wall count, and zeros outside the grid (stale `dst` contents inside
        /// the grid are overwritten).
        #[test]
        fn narrow_matches_oracle(
            rows in prop_oneof![Just(1usize), Just(2), Just(3), Just(19), Just(64), Just(65), 1usize..90],
            cols in prop_oneof![Just(1usize), Just(2), Just(63), Just(64), Just(65), Just(77),
                                Just(127), Just(128), 1usize..=128],
            density in 0u32..=100, seed in any::<u64>(), (birth, survive) in rule(),
            wall in any::<bool>(), solid in any::<bool>(),
        ) {
            let outside = if wall { Outside::Wall } else { Outside::Floor };
            let border = if solid { Border::Solid } else { Border::None };
            let pass = Pass::sync(Rule::Moore { birth, survive }, outside, border);
            let src = random_grid(rows, cols, density, seed);
            let mut oracle = ByteGrid::from_grid(&src);
            oracle.step(&pass);
            let want = oracle.to_grid();
            let mut dst = random_grid(rows, cols, 50, !seed);
            let n = step(&src, &mut dst, birth, survive, outside, border);
            prop_assert_eq!(n, Some(oracle.count_walls()));
            prop_assert_eq!(&dst, &want);
            prop_assert_eq!(dst.count_walls(), oracle.count_walls(), "padding stays zero");
            for simd in Simd::available() {
                let mut g = src.clone();
                let n = Stepper::with_simd(simd).step(&mut g, &pass);
                prop_assert_eq!(n, oracle.count_walls(), "{}", simd);
                prop_assert_eq!(&g, &want, "{}", simd);
                let mut c = g.clone();
                c.clear_edges();
                prop_assert_eq!(c.raw(), g.raw(), "{}: zeros outside the grid", simd);
            }
        }
    }

    #[test]
    fn wide_or_wrapped_grids_are_left_to_the_general_kernel() {
        let src = random_grid(5, 129, 50, 1);
        let mut dst = Grid::new(5, 129).unwrap();
        assert_eq!(
            step(&src, &mut dst, 0x1c0, 0x1ff, Outside::Wall, Border::None),
            None
        );
        let src = random_grid(5, 77, 50, 1);
        let mut dst = Grid::new(5, 77).unwrap();
        assert_eq!(
            step(&src, &mut dst, 0x1c0, 0x1ff, Outside::Wrap, Border::None),
            None
        );
        assert_eq!(dst, Grid::new(5, 77).unwrap(), "nothing written");
    }
}
