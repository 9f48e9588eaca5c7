//! Initial grid fills: the random noise a cave grows from.
//!
//! Three fills, all writing every cell of the grid and keeping padding/guard bits zero:
//! - [`fill_numpy`]: numpy's `default_rng(seed).random((rows, cols)) < p`, bit exact, to
//!   reproduce the chapter's published numbers. One PCG64 step per cell (slow, sequential).
//! - [`fill_bernoulli`]: each cell WALL independently with probability `p`, 64 cells per random
//!   word, four words at a time (the throughput fill).
//! - [`fill_exact_count`] / [`fill_exact_walls`]: an exact number of FLOOR (or WALL) cells, as a
//!   uniformly random subset (NetHack's Gnomish Mines filler).
//!
//! None of them allocates.

use rand_core::Rng;
use wide::u64x4;

use crate::grid::Grid;
use crate::rng::{NumpyRandom, Xoshiro256x4, uniform_below};

/// Why a fill could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FillError {
    #[error("fill probability {0} is not a number between 0 and 1")]
    BadProbability(f64),
    #[error(
        "cannot make exactly {count} cells {what} in a {rows}x{cols} grid: it has only {cells} cells"
    )]
    CountTooLarge {
        count: usize,
        what: &'static str,
        rows: usize,
        cols: usize,
        cells: usize,
    },
}

fn check_p(p: f64) -> Result<(), FillError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(FillError::BadProbability(p))
    }
}

// ---------------------------------------------------------------------------------------------
// numpy
// ---------------------------------------------------------------------------------------------

/// Exact replay of `np.random.default_rng(seed).random((rows, cols)) < p`: cell `(y, x)` uses
/// draw number `y * cols + x` and is WALL iff its double `u < p` (strictly).
pub fn fill_numpy(grid: &mut Grid, p: f64, seed: u64) -> Result<(), FillError> {
    fill_numpy_with(grid, p, &mut NumpyRandom::new(seed))
}

/// [`fill_numpy`] continuing an existing numpy stream (draws exactly `rows * cols` values).
///
/// `u = m * 2^-53` with `m = x >> 11`, so `u < p` iff `m < p * 2^53` iff `m < ceil(p * 2^53)`
/// (`p * 2^53` is exact in f64: scaling by a power of two). Comparing integers saves the
/// int-to-float conversion per cell and is the same predicate.
pub fn fill_numpy_with(grid: &mut Grid, p: f64, rng: &mut NumpyRandom) -> Result<(), FillError> {
    check_p(p)?;
    let threshold = (p * (1u64 << 53) as f64).ceil() as u64;
    let (rows, cols, wpr) = (grid.rows(), grid.cols(), grid.words_per_row());
    for y in 0..rows {
        let row = grid.row_mut(y);
        for (w, word) in row.iter_mut().enumerate() {
            let n = (cols - 64 * w).min(64);
            let mut bits = 0u64;
            for b in 0..n {
                let m = rng.next_u64() >> 11;
                bits |= ((m < threshold) as u64) << b;
            }
            *word = bits;
        }
        debug_assert_eq!(row.len(), wpr);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// word-parallel Bernoulli
// ---------------------------------------------------------------------------------------------

/// Each cell WALL independently with probability `p`, generated 64 cells per random word.
///
/// Draws exactly 32 words from `rng` (whatever `p` and the grid are) to seed two
/// [`Xoshiro256x4`] generators with [`Xoshiro256x4::from_stream`] (words 0..16, then 16..32),
/// then runs [`fill_bernoulli_lanes`]. So with `rng = cave_rng(seed)` the grid is a pure
/// function of `(seed, rows, cols, p)`, and the caller's stream continues at the same place for
/// every fill, e.g. for a corridor digger.
pub fn fill_bernoulli<R: Rng + ?Sized>(
    grid: &mut Grid,
    p: f64,
    rng: &mut R,
) -> Result<(), FillError> {
    check_p(p)?;
    let mut lanes = [
        Xoshiro256x4::from_stream(rng),
        Xoshiro256x4::from_stream(rng),
    ];
    fill_bernoulli_lanes(grid, p, &mut lanes)
}

/// The Bernoulli fill from two 4-lane generators (advanced by however many steps it takes).
///
/// **Exactness.** `p` is quantised to `k = floor(p * 2^64)` (`p = 1` is all WALL), and a cell
/// is WALL iff a virtual uniform 64-bit integer `u` satisfies `u < k`: probability exactly
/// `k / 2^64`, within `2^-64` of `p`, and *equal* to `p` for every double `p >= 2^-12` (their
/// ulp is at least `2^-64`), which includes 0.45. `p = 0` and `p = 1` are exact.
///
/// **Method.** `u` is compared with `k` bit by bit, most significant first, for 64 cells at once:
/// at level `j` one random word supplies bit `j` of the 64 cells' `u`. A cell whose bit differs
/// from `k`'s bit `j` is decided (WALL iff `k`'s bit is 1, i.e. its `u` bit is 0); equal bits
/// stay undecided. Levels stop once no cell is undecided, or after level
/// `64 - trailing_zeros(k)`, after which every still-tied cell has `u >= k` (FLOOR). About
/// `log2(cells) + 2` levels instead of 64; on average about 2 bits of `u` per cell decide it.
///
/// **Where a cell's bits come from.** Each row is cut into blocks of 4 words (256 cells; the
/// grid pads every row to a multiple of 4 words, so a block is one `u64x4` load and store, and
/// its words past the row's end are padding that stays 0). Number the blocks in row-major order
/// and take them in pairs `(2m, 2m + 1)` (a last unpaired block pairs with an empty one). A pair
/// draws levels from both generators in lock-step, generator 0 for block `2m` and generator 1
/// for block `2m + 1`, until every real cell of both blocks is decided (checked from level
/// `min(6, depth)` on) or the depth is reached: `d` levels. Bit `j` of cell `(y, x)`'s `u` is
/// bit `x % 64` of lane `(x / 64) % 4`'s `j`-th output of its block's generator within the
/// pair. Padding cells start decided, so they never delay a pair.
///
/// Why pairs: one xoshiro step depends on the previous one, so a single generator runs at the
/// latency of its state update; two independent ones fill the issue slots, and a pair mispredicts
/// its loop exit once where two blocks would twice. Measured with `cargo bench --bench fill`
/// (90x140, p = 0.45, median): one generator 2.30 us, two interleaved 1.65 us.
pub fn fill_bernoulli_lanes(
    grid: &mut Grid,
    p: f64,
    lanes: &mut [Xoshiro256x4; 2],
) -> Result<(), FillError> {
    check_p(p)?;
    if p == 1.0 {
        grid.fill(true);
        return Ok(());
    }
    // p * 2^64 is exact; `as` truncates (floor for non-negative) and p < 1 keeps it < 2^64.
    let k = (p * 18_446_744_073_709_551_616.0) as u64;
    if k == 0 {
        grid.fill(false);
        return Ok(());
    }
    let depth = 64 - k.trailing_zeros();
    let (rows, wpr) = (grid.rows(), grid.words_per_row());
    let blocks = wpr.div_ceil(4);
    // Valid-cell masks of a row's last block; the others are all ones.
    let last_valid = u64x4::new(std::array::from_fn(|i| {
        let w = 4 * (blocks - 1) + i;
        match w.cmp(&(wpr - 1)) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => grid.last_word_mask(),
            std::cmp::Ordering::Greater => 0,
        }
    }));
    let rowsof = grid_raw_offsets(grid);
    let data = grid.raw_mut();
    let valid = |b: usize| {
        if b % blocks + 1 == blocks {
            last_valid
        } else {
            u64x4::MAX
        }
    };
    // Block `b` (row-major) starts at this word of `data`.
    let at = |b: usize| rowsof.row(b / blocks) + 4 * (b % blocks);
    // Local copies keep the generator states in registers across the stores into `data`.
    let [mut g0, mut g1] = lanes.clone();
    let total = rows * blocks;
    let mut b = 0;
    while b < total {
        let second = b + 1 < total;
        let v1 = if second { valid(b + 1) } else { u64x4::ZERO };
        let (w0, w1) = decide_pair(valid(b), v1, k, depth, &mut g0, &mut g1);
        let o = at(b);
        data[o..o + 4].copy_from_slice(w0.as_array());
        if second {
            let o = at(b + 1);
            data[o..o + 4].copy_from_slice(w1.as_array());
        }
        b += 2;
    }
    *lanes = [g0, g1];
    Ok(())
}

/// Row offsets into `Grid::raw` without borrowing the grid (row `y` starts at
/// `first + y * stride`).
struct RawRows {
    first: usize,
    stride: usize,
}
impl RawRows {
    #[inline(always)]
    fn row(&self, y: usize) -> usize {
        self.first + y * self.stride
    }
}
fn grid_raw_offsets(grid: &Grid) -> RawRows {
    RawRows {
        first: grid.row_offset(0),
        stride: grid.stride(),
    }
}

/// Levels every pair draws (unless `depth` is smaller) before it first checks whether it is
/// done: 512 cells are essentially never all decided sooner, so earlier checks would only cost.
const MIN_LEVELS: u32 = 6;

/// Decide the cells of a pair of blocks (see [`fill_bernoulli_lanes`]): `v0`, `v1` mark their
/// real cells, `k` is the threshold (non-zero), `depth` the number of significant bits of `k`.
#[inline(always)]
fn decide_pair(
    v0: u64x4,
    v1: u64x4,
    k: u64,
    depth: u32,
    g0: &mut Xoshiro256x4,
    g1: &mut Xoshiro256x4,
) -> (u64x4, u64x4) {
    let (mut u0, mut u1) = (v0, v1);
    let (mut w0, mut w1) = (u64x4::ZERO, u64x4::ZERO);
    let mut kk = k;
    let mut j = 0;
    loop {
        let r0 = g0.next_u64x4();
        let r1 = g1.next_u64x4();
        // All ones iff k's current bit is 1 (branch-free: the bit pattern of k is arbitrary).
        let kbit = u64x4::splat(((kk as i64) >> 63) as u64);
        // k's bit 1: u's bit 0 means u < k (WALL). k's bit 0: u's bit 1 means u > k (FLOOR).
        // Either way a cell stays tied iff its u bit equals k's bit.
        w0 |= u0 & !r0 & kbit;
        w1 |= u1 & !r1 & kbit;
        u0 &= !(r0 ^ kbit);
        u1 &= !(r1 ^ kbit);
        kk <<= 1;
        j += 1;
        if j == depth || (j >= MIN_LEVELS && (u0 | u1).simd_eq(u64x4::ZERO).all()) {
            return (w0, w1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// exact counts
// ---------------------------------------------------------------------------------------------

/// All WALL except exactly `floor_count` FLOOR cells, chosen uniformly among all
/// `rows * cols`-choose-`floor_count` subsets (NetHack's Gnomish Mines: 624 FLOOR of 19x77).
/// Errors if `floor_count` exceeds the number of cells.
pub fn fill_exact_count<R: Rng + ?Sized>(
    grid: &mut Grid,
    floor_count: usize,
    rng: &mut R,
) -> Result<(), FillError> {
    fill_exact(grid, floor_count, false, rng)
}

/// All FLOOR except exactly `wall_count` WALL cells, uniformly chosen: the WALL-count mirror of
/// [`fill_exact_count`] (for a caller who thinks in wall density).
pub fn fill_exact_walls<R: Rng + ?Sized>(
    grid: &mut Grid,
    wall_count: usize,
    rng: &mut R,
) -> Result<(), FillError> {
    fill_exact(grid, wall_count, true, rng)
}

fn too_many(grid: &Grid, count: usize, what: &'static str) -> FillError {
    FillError::CountTooLarge {
        count,
        what,
        rows: grid.rows(),
        cols: grid.cols(),
        cells: grid.cells(),
    }
}

/// Make exactly `count` cells `wall` (`false` = FLOOR) and the rest the opposite, uniformly.
///
/// Robert Floyd's sampler picks the smaller side `m = min(count, n - count)` as a uniform
/// m-subset of `0..n` with exactly `m` bounded draws ([`uniform_below`], unbiased): for
/// `j` in `n - m .. n`, draw `t` in `0..=j`; mark `t`, or `j` if `t` is already marked. The grid's
/// own bits are the membership set, so nothing is allocated. Cell index `t` is `(t / cols,
/// t % cols)`. Picking the complement when `count > n / 2` keeps the draws at most `n / 2` and
/// does not change the distribution (the complement of a uniform subset is uniform).
fn fill_exact<R: Rng + ?Sized>(
    grid: &mut Grid,
    count: usize,
    wall: bool,
    rng: &mut R,
) -> Result<(), FillError> {
    let n = grid.cells();
    if count > n {
        return Err(too_many(grid, count, if wall { "WALL" } else { "FLOOR" }));
    }
    let (mark, m) = if count <= n - count {
        (wall, count)
    } else {
        (!wall, n - count)
    };
    grid.fill(!mark);
    // n <= MAX_CELLS = 2^30, so u32 index arithmetic is exact and its division is fast.
    let cols = grid.cols() as u32;
    let rows = grid_raw_offsets(grid);
    let data = grid.raw_mut();
    let locate = |t: u32| -> (usize, u64) {
        let y = t / cols;
        let x = t - y * cols;
        (rows.row(y as usize) + (x / 64) as usize, 1u64 << (x % 64))
    };
    let is_marked = |data: &[u64], t: u32| {
        let (i, bit) = locate(t);
        (data[i] & bit != 0) == mark
    };
    let set_mark = |data: &mut [u64], t: u32| {
        let (i, bit) = locate(t);
        if mark {
            data[i] |= bit;
        } else {
            data[i] &= !bit;
        }
    };
    for j in (n - m)..n {
        let t = uniform_below(rng, j as u64 + 1) as u32;
        if is_marked(data, t) {
            set_mark(data, j as u32);
        } else {
            set_mark(data, t);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Xoshiro256PlusPlus, cave_rng};
    use proptest::prelude::*;
    use rand_core::SeedableRng;

    /// True iff every bit outside the grid (guards, padding) is zero.
    fn outside_is_zero(g: &Grid) -> bool {
        let mut c = g.clone();
        c.clear_edges();
        c.raw() == g.raw()
    }

    // ---- numpy ----

    #[test]
    fn numpy_wall_counts_90x140() {
        let mut g = Grid::new(90, 140).unwrap();
        for (seed, walls) in crate::rng::tests::NUMPY_WALLS_90X140 {
            fill_numpy(&mut g, 0.45, seed).unwrap();
            assert_eq!(g.count_walls(), walls, "seed {seed}");
            assert!(outside_is_zero(&g));
        }
    }

    #[test]
    fn numpy_first_cells_hand_checked() {
        // Seed 42's first doubles are 0.7739..., 0.4388..., 0.8585...: with p = 0.5 the first
        // three cells of row 0 are FLOOR, WALL, FLOOR; with p = 0.4388784397520523 (equal to the
        // second double) the second cell is FLOOR (strict <).
        let mut g = Grid::new(2, 3).unwrap();
        fill_numpy(&mut g, 0.5, 42).unwrap();
        assert_eq!(&g.to_text()[..4], ".#.\n");
        fill_numpy(&mut g, 0.4388784397520523, 42).unwrap();
        assert_eq!(&g.to_text()[..4], "...\n");
        fill_numpy(&mut g, 0.4388784397520523f64.next_up(), 42).unwrap();
        assert_eq!(&g.to_text()[..4], ".#.\n");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn numpy_matches_float_oracle(rows in 1usize..5, cols in 1usize..200, seed: u64,
                                      p_num in 0u64..=(1 << 53), exact in any::<bool>()) {
            // Half the cases put p exactly on a possible u (the strict-< boundary).
            let p = if exact {
                p_num as f64 / (1u64 << 53) as f64
            } else {
                (p_num as f64 + 0.37) / ((1u64 << 53) as f64 + 1.0)
            };
            let mut g = Grid::new(rows, cols).unwrap();
            fill_numpy(&mut g, p, seed).unwrap();
            let mut n = NumpyRandom::new(seed);
            for y in 0..rows {
                for x in 0..cols {
                    prop_assert_eq!(g.get(y, x), n.next_f64() < p);
                }
            }
            prop_assert!(outside_is_zero(&g));
        }
    }

    // ---- bernoulli ----

    /// Scalar rand_xoshiro generators equal to the lanes of a 4-lane one.
    fn scalar_lanes(lanes: &Xoshiro256x4) -> Vec<Xoshiro256PlusPlus> {
        lanes
            .lane_states()
            .iter()
            .map(|st| {
                let mut b = [0u8; 32];
                for (j, w) in st.iter().enumerate() {
                    b[8 * j..8 * j + 8].copy_from_slice(&w.to_le_bytes());
                }
                Xoshiro256PlusPlus::from_seed(b)
            })
            .collect()
    }

    /// The documented cell-to-bit mapping, one cell at a time with scalar generators.
    fn bernoulli_oracle(rows: usize, cols: usize, p: f64, lanes: &[Xoshiro256x4; 2]) -> Grid {
        let mut g = Grid::new(rows, cols).unwrap();
        if p == 1.0 {
            g.fill(true);
            return g;
        }
        let k = (p * 2f64.powi(64)) as u64;
        if k == 0 {
            return g;
        }
        let depth = 64 - k.trailing_zeros() as usize;
        let mut scal = [scalar_lanes(&lanes[0]), scalar_lanes(&lanes[1])];
        let wpr = cols.div_ceil(64);
        let blocks: Vec<(usize, usize)> = (0..rows)
            .flat_map(|y| (0..wpr.div_ceil(4)).map(move |b| (y, b)))
            .collect();
        for pair in blocks.chunks(2) {
            // Cells of the pair: (generator, lane, y, x); lane i holds word 4b + i of row y.
            let cells: Vec<(usize, usize, usize, usize)> = pair
                .iter()
                .enumerate()
                .flat_map(|(gi, &(y, b))| {
                    (0..4).filter(move |i| 4 * b + i < wpr).flat_map(move |i| {
                        let x0 = (4 * b + i) * 64;
                        (0..64.min(cols - x0)).map(move |bit| (gi, i, y, x0 + bit))
                    })
                })
                .collect();
            let mut levels = 0;
            let mut result = vec![None::<bool>; cells.len()];
            while levels < depth && (levels < 6.min(depth) || result.iter().any(Option::is_none)) {
                let lvl: [[u64; 4]; 2] = std::array::from_fn(|gi| {
                    std::array::from_fn(|i| rand_core::Rng::next_u64(&mut scal[gi][i]))
                });
                let kbit = (k >> (63 - levels)) & 1;
                levels += 1;
                for (c, &(gi, i, _, x)) in cells.iter().enumerate() {
                    if result[c].is_none() && (lvl[gi][i] >> (x % 64)) & 1 != kbit {
                        result[c] = Some(kbit == 1);
                    }
                }
            }
            for (c, &(_, _, y, x)) in cells.iter().enumerate() {
                if result[c] == Some(true) {
                    g.set(y, x, true);
                }
            }
        }
        g
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn bernoulli_matches_oracle(rows in 1usize..7, cols in 1usize..600, seed: u64,
                                    p_sel in 0usize..8, p_rand in 0.0f64..1.0) {
            let p = [0.0, 1.0, 0.5, 0.25, 0.75, 0.45, 1.0 / 1024.0, p_rand][p_sel];
            let mut parent = cave_rng(seed);
            let lanes = [Xoshiro256x4::from_stream(&mut parent), Xoshiro256x4::from_stream(&mut parent)];
            let mut l2 = lanes.clone();
            let mut g = Grid::new(rows, cols).unwrap();
            fill_bernoulli_lanes(&mut g, p, &mut l2).unwrap();
            let want = bernoulli_oracle(rows, cols, p, &lanes);
            prop_assert_eq!(&g, &want);
            prop_assert!(outside_is_zero(&g));
        }
    }

    #[test]
    fn bernoulli_hand_cases() {
        // One block: 1 row of 256 cells, lane i = word i. Derived from the method by hand:
        // p = 1/2: WALL iff u's first bit is 0            -> !r0
        // p = 1/4: WALL iff u's first two bits are 00     -> !r0 & !r1
        // p = 3/4: WALL iff u's first two bits are not 11 -> !(r0 & r1)
        // (p = 1/4 and 3/4 stop after 2 levels: k has 2 significant bits.)
        let mut parent = cave_rng(77);
        let lanes = [
            Xoshiro256x4::from_stream(&mut parent),
            Xoshiro256x4::from_stream(&mut parent),
        ];
        // A single block is a pair with an empty second block: generator 0 decides it.
        let mut probe = lanes[0].clone();
        let r0 = probe.next_u64x4().to_array();
        let r1 = probe.next_u64x4().to_array();
        let cases: [(f64, [u64; 4]); 3] = [
            (0.5, std::array::from_fn(|i| !r0[i])),
            (0.25, std::array::from_fn(|i| !r0[i] & !r1[i])),
            (0.75, std::array::from_fn(|i| !(r0[i] & r1[i]))),
        ];
        for (p, want) in cases {
            let mut g = Grid::new(1, 256).unwrap();
            fill_bernoulli_lanes(&mut g, p, &mut lanes.clone()).unwrap();
            assert_eq!(g.row(0), &want[..], "p {p}");
        }
        // Padding: 138 columns = words 0, 1 full, word 2 keeps 10 bits, lane 3 unused.
        let mut g = Grid::new(1, 138).unwrap();
        fill_bernoulli_lanes(&mut g, 0.5, &mut lanes.clone()).unwrap();
        assert_eq!(g.row(0), &[!r0[0], !r0[1], !r0[2] & 0x3ff][..]);
    }

    #[test]
    fn bernoulli_p0_p1_and_bad_p() {
        for (rows, cols) in [(1, 1), (3, 63), (5, 64), (7, 65), (90, 140)] {
            let mut g = Grid::new(rows, cols).unwrap();
            fill_bernoulli(&mut g, 1.0, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), (rows * cols) as u64);
            assert!(outside_is_zero(&g));
            fill_bernoulli(&mut g, 0.0, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), 0);
            // Below 2^-64 quantises to 0.
            fill_bernoulli(&mut g, 1e-30, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), 0);
            assert!(outside_is_zero(&g));
        }
        let mut g = Grid::new(2, 2).unwrap();
        for p in [f64::NAN, -0.01, 1.5, f64::INFINITY] {
            let e = fill_bernoulli(&mut g, p, &mut cave_rng(1)).unwrap_err();
            assert!(matches!(e, FillError::BadProbability(_)));
            assert!(fill_numpy(&mut g, p, 1).is_err());
        }
        assert!(FillError::BadProbability(1.5).to_string().contains("1.5"));
    }

    #[test]
    fn bernoulli_draws_32_words_from_the_stream() {
        for p in [0.0, 0.3, 1.0] {
            let mut a = cave_rng(3);
            let mut g = Grid::new(9, 70).unwrap();
            fill_bernoulli(&mut g, p, &mut a).unwrap();
            let mut b = cave_rng(3);
            for _ in 0..32 {
                b.next_u64();
            }
            assert_eq!(a, b, "p {p}");
        }
    }

    #[test]
    fn bernoulli_deterministic_per_seed() {
        let mut a = Grid::new(90, 140).unwrap();
        let mut b = Grid::new(90, 140).unwrap();
        fill_bernoulli(&mut a, 0.45, &mut cave_rng(10)).unwrap();
        fill_bernoulli(&mut b, 0.45, &mut cave_rng(10)).unwrap();
        assert_eq!(a, b);
        fill_bernoulli(&mut b, 0.45, &mut cave_rng(11)).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn bernoulli_mean_and_per_column_rate() {
        let (rows, cols, seeds) = (90usize, 140usize, 400u64);
        let mut g = Grid::new(rows, cols).unwrap();
        for p in [0.1, 0.45, 0.5, 0.9] {
            let mut per_col = vec![0u64; cols];
            let mut total = 0u64;
            for seed in 0..seeds {
                fill_bernoulli(&mut g, p, &mut cave_rng(seed)).unwrap();
                total += g.count_walls();
                for y in 0..rows {
                    for (x, c) in per_col.iter_mut().enumerate() {
                        *c += g.get(y, x) as u64;
                    }
                }
            }
            let n = (rows * cols) as f64 * seeds as f64;
            let sigma = (p * (1.0 - p) / n).sqrt();
            let mean = total as f64 / n;
            assert!(
                (mean - p).abs() < 5.0 * sigma,
                "p {p}: mean {mean} ({} sigma)",
                (mean - p) / sigma
            );
            // Every column (so every bit position and every word of a row) has the right rate.
            let nc = (rows as u64 * seeds) as f64;
            let sc = (p * (1.0 - p) / nc).sqrt();
            for (x, &c) in per_col.iter().enumerate() {
                let m = c as f64 / nc;
                assert!((m - p).abs() < 5.5 * sc, "p {p} column {x}: {m}");
            }
        }
    }

    // ---- exact counts ----

    #[test]
    fn exact_counts_are_exact() {
        for (rows, cols) in [(1, 1), (19, 77), (3, 64), (4, 65), (2, 130)] {
            let n = rows * cols;
            let mut g = Grid::new(rows, cols).unwrap();
            for k in [0, 1, n / 2, n / 2 + 1, n - 1, n] {
                for seed in 0..5 {
                    fill_exact_count(&mut g, k, &mut cave_rng(seed)).unwrap();
                    assert_eq!(g.count_walls(), (n - k) as u64, "{rows}x{cols} floor {k}");
                    assert!(outside_is_zero(&g));
                    fill_exact_walls(&mut g, k, &mut cave_rng(seed)).unwrap();
                    assert_eq!(g.count_walls(), k as u64, "{rows}x{cols} walls {k}");
                    assert!(outside_is_zero(&g));
                }
            }
            let e = fill_exact_count(&mut g, n + 1, &mut cave_rng(0)).unwrap_err();
            assert!(
                matches!(e, FillError::CountTooLarge { count, cells, .. } if count == n + 1 && cells == n)
            );
            assert!(fill_exact_walls(&mut g, n + 1, &mut cave_rng(0)).is_err());
        }
        let mut g = Grid::new(19, 77).unwrap();
        fill_exact_count(&mut g, 624, &mut cave_rng(9)).unwrap();
        assert_eq!(g.cells() - g.count_walls() as usize, 624);
    }

    #[test]
    fn exact_count_deterministic() {
        let mut a = Grid::new(19, 77).unwrap();
        let mut b = Grid::new(19, 77).unwrap();
        fill_exact_count(&mut a, 624, &mut cave_rng(4)).unwrap();
        fill_exact_count(&mut b, 624, &mut cave_rng(4)).unwrap();
        assert_eq!(a, b);
        fill_exact_count(&mut b, 624, &mut cave_rng(5)).unwrap();
        assert_ne!(a, b);
    }

    /// Chi-square of observed counts against equal expected counts.
    fn chi2(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let e = total as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    /// A generous bound for a chi-square with `df` degrees of freedom: mean + 8 sd.
    fn chi2_bound(df: usize) -> f64 {
        df as f64 + 8.0 * (2.0 * df as f64).sqrt()
    }

    #[test]
    fn exact_count_is_uniform_over_subsets() {
        // 2x3 grid: all C(6, k) subsets equally likely, both for the direct (k = 2, 3) and the
        // complement (k = 4) branch, and for the WALL variant.
        let trials = 30_000u64;
        for k in [2usize, 3, 4] {
            for walls in [false, true] {
                let mut hist = [0u64; 64];
                let mut g = Grid::new(2, 3).unwrap();
                for seed in 0..trials {
                    let mut r = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xabcdef);
                    if walls {
                        fill_exact_walls(&mut g, k, &mut r).unwrap();
                    } else {
                        fill_exact_count(&mut g, k, &mut r).unwrap();
                    }
                    let pattern = g.row(0)[0] | (g.row(1)[0] << 3);
                    hist[pattern as usize] += 1;
                }
                let want_ones = if walls { k } else { 6 - k };
                let (valid, bad): (Vec<usize>, Vec<usize>) =
                    (0..64).partition(|&m: &usize| m.count_ones() as usize == want_ones);
                assert!(bad.iter().all(|&m| hist[m] == 0));
                let counts: Vec<u64> = valid.iter().map(|&m| hist[m]).collect();
                let c = chi2(&counts);
                assert!(
                    c < chi2_bound(counts.len() - 1),
                    "k {k} walls {walls}: chi2 {c} over {} subsets {counts:?}",
                    counts.len()
                );
            }
        }
    }

    #[test]
    fn exact_count_is_uniform_per_cell() {
        // 5x13 (two rows straddle nothing, but x/y decoding is exercised): each cell is FLOOR
        // equally often, for a minority and a majority count.
        let (rows, cols) = (5usize, 13usize);
        for k in [7usize, 50] {
            let mut per_cell = vec![0u64; rows * cols];
            let mut g = Grid::new(rows, cols).unwrap();
            for seed in 0..20_000 {
                fill_exact_count(&mut g, k, &mut cave_rng(seed)).unwrap();
                for (i, c) in per_cell.iter_mut().enumerate() {
                    *c += !g.get(i / cols, i % cols) as u64;
                }
            }
            let c = chi2(&per_cell);
            assert!(c < chi2_bound(per_cell.len() - 1), "k {k}: chi2 {c}");
        }
    }
}
