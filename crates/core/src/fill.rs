//! Initial grid fills: the random noise a cave grows from.
//!
//! Three fills, all writing every cell of the grid and keeping padding/guard bits zero:
//! - [`fill_numpy`]: numpy's `default_rng(seed).random((rows, cols)) < p`, bit exact, to
//!   reproduce the chapter's published numbers. PCG64 jump-ahead chains, in vector lanes from
//!   AVX2 on.
//! - [`fill_bernoulli`]: each cell WALL independently with probability `p`, 64 cells per random
//!   word (the throughput fill), one grid at a time or, through `bernoulli_lanes`, straight
//!   into the lanes of a batch of caves.
//! - [`fill_exact_count`] / [`fill_exact_walls`]: an exact number of FLOOR (or WALL) cells, as a
//!   uniformly random subset (NetHack's Gnomish Mines filler).
//!
//! # The xoshiro stream of a cave (the layout every xoshiro fill follows)
//!
//! Everything random in the cave of `seed` comes from its stream `P = cave_rng(seed)`
//! (xoshiro256++ seeded by SplitMix64, see [`crate::rng`]):
//!
//! 1. The fill first draws 32 words from `P` to seed [`SLOTS`] = 8 *slot generators*
//!    `G_0..G_7` ([`slot_states`]), whatever the fill and `p`.
//! 2. Cells are numbered row-major, `i = y * cols + x`, and packed 64 to a word: *packed word*
//!    `v` holds cells `64v .. 64v + 63` (bit `b` = cell `64v + b`), ignoring row boundaries.
//! 3. **Bernoulli(p)**: `k = floor(p * 2^64)` (`p = 1` is all WALL, `k = 0` all FLOOR); a cell
//!    is WALL iff its virtual uniform 64-bit `u` is `< k`. Let `depth = 64 - trailing_zeros(k)`
//!    and `m = min(LEVELS, depth)` with [`LEVELS`] = 12. Packed word `v` draws `m` consecutive
//!    outputs of `G_{v mod 8}` (each generator serves its words in increasing `v`); bit `b` of
//!    the `j`-th of them is bit `63 - j` of cell `64v + b`'s `u`. A cell whose `m` bits equal
//!    `k`'s top `m` bits is still tied: if `m = depth` it is FLOOR (`u >= k`); otherwise, in
//!    increasing cell order, it draws one word `t` from `P` and is WALL iff
//!    `t >> m < k mod 2^(64 - m)` (`t`'s top bits are the rest of its `u`). Exactly Bernoulli:
//!    `P(u < k) = k / 2^64`, which equals `p` for every double `p >= 2^-12` (0.45 included).
//! 4. **Exact count** (`count` cells of one kind among `n`): the cells of the smaller side are
//!    first marked independently by the level walk of 3. (8 levels, `k = floor(m 2^64 / n)`,
//!    ties unmarked), then marks are removed or added one at a time, each at a uniform rank
//!    drawn from `P` with Lemire's method ([`uniform_below`]), until exactly `m`: see
//!    [`fill_exact_count`].
//! 5. After the fill, post-steps (the corridors of `bridge`) continue on `P`.
//!
//! Why this layout: the slot generators let one cave's fill run 8 words per vector step (lanes
//! across slots, [`fill_bernoulli`]) *and* a batch of caves run one word of 8 caves per step
//! (lanes across caves, `bernoulli_lanes`) with the same bits, so a cave never depends on
//! the batch it ran in; packing cells across rows wastes no random bits on padding (90x140 uses
//! 197 words, not 270); the first `LEVELS` levels are branch-free, and after 12 levels only
//! ~1 cell in 4096 is tied, so the per-cell tail is rare. This layout replaced the earlier
//! one (blocks of 4 row words in generator pairs) in the change that batched seeds in lanes.
//!
//! None of the fills allocates.

use rand_core::Rng;

use crate::grid::Grid;
use crate::rng::{
    CaveRng, LaneXoshiro, NumpyRandom, SLOTS, lane_slots, slot_states, uniform_below,
    xoshiro_from_state,
};
use crate::simd::{Isa, Lane, PcgKernel, Simd};

/// Why a fill could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FillError {
    /// A Bernoulli fill probability outside `0.0..=1.0` (or NaN); holds the value given.
    #[error("fill probability {0} is not a number between 0 and 1")]
    BadProbability(f64),
    /// An exact-count fill asked for more cells of one kind than the grid has.
    #[error(
        "cannot make exactly {count} cells {what} in a {rows}x{cols} grid: it has only {cells} cells"
    )]
    CountTooLarge {
        /// Cells of kind `what` requested.
        count: usize,
        /// The kind counted: `"FLOOR"` ([`fill_exact_count`]) or `"WALL"`
        /// ([`fill_exact_walls`]).
        what: &'static str,
        /// Rows of the grid being filled.
        rows: usize,
        /// Columns of the grid being filled.
        cols: usize,
        /// Cells in the grid, `rows * cols`: the largest `count` accepted.
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
///
/// **Speed.** Each PCG64 step is a 128-bit multiply-add on the previous state, so one stream
/// runs at the latency of that chain (~26 us for 90x140). Instead `CHAINS` interleaved
/// copies of the stream each jump `CHAINS` draws per step (`s -> A s + C`, the jump-ahead map):
/// chain `j` produces draws `j, j + CHAINS, ...`, the chains are independent work, and the
/// cells are exactly the sequential stream's. Cells are decided in row-major order and
/// packed 64 to a word, then unpacked into rows (as the xoshiro fills do).
/// Runs on the process's SIMD path ([`Simd::active`]) with the PCG kernel
/// [`PcgKernel::for_path`] picks for it: on AVX-512 and AVX2 the chains run in vector lanes
/// (8 or 4 per vector, 32 or 16 in all; IFMA 52-bit limbs where the CPU has them, else 32-bit
/// limbs), see [`crate::simd::PcgKernel`]; 90x140 went from 21.2 to 7.9 us per cave with
/// IFMA. On SSE2 and the scalar path, the scalar chains: the clones with BMI2 get `mulx`, `rorx` and `shlx` for the
/// 128-bit steps. Per cell: 3 multiplies (the 128-bit product's low half: `mulx` + 2 `imul`,
/// all on one port on current x86, so ~3 cycles per cell is the floor of the scalar method),
/// add/adc, the XSL-RR output (xor, shift, rotate), one compare against `threshold << 11` and
/// one `adc` into the word (bit-reversed once per word). Measured 24.7 -> 21.0 us per 90x140
/// cave for the compare/`adc` form against setb/shift/or per cell.
pub fn fill_numpy_with(grid: &mut Grid, p: f64, rng: &mut NumpyRandom) -> Result<(), FillError> {
    let simd = Simd::active();
    fill_numpy_on(simd, PcgKernel::for_path(simd.path()), grid, p, rng)
}

/// [`fill_numpy_with`] on a chosen SIMD clone and PCG kernel (for the tests and probes that
/// check and time every kernel; production takes [`PcgKernel::for_path`] of
/// [`Simd::active`]). The cells are the same whatever the choice. Panics if the CPU lacks
/// `kernel`'s features.
pub fn fill_numpy_on(
    simd: Simd,
    kernel: PcgKernel,
    grid: &mut Grid,
    p: f64,
    rng: &mut NumpyRandom,
) -> Result<(), FillError> {
    check_p(p)?;
    assert!(
        kernel.supported(),
        "PCG kernel {} not supported",
        kernel.name()
    );
    crate::simd_run!(simd, <I> (
        grid: &'a mut Grid = grid,
        p: f64 = p,
        rng: &'a mut NumpyRandom = rng,
        kernel: PcgKernel = kernel,
    ) -> () {
        numpy_chains(grid, p, rng, kernel)
    });
    Ok(())
}

/// The body of [`fill_numpy_with`] (`p` checked).
#[inline(always)]
fn numpy_chains(grid: &mut Grid, p: f64, rng: &mut NumpyRandom, kernel: PcgKernel) {
    let threshold = (p * (1u64 << 53) as f64).ceil() as u64;
    let (rows, cols, wpr, stride) = (
        grid.rows(),
        grid.cols(),
        grid.words_per_row(),
        grid.stride(),
    );
    let n = rows * cols;
    let (words, last_mask) = packed_shape(rows, cols);
    let (state, inc) = rng.state();
    let data = grid.raw_mut();
    // `m < threshold` with `m = out >> 11` is `out < threshold * 2^11`, one compare, when that
    // fits in 64 bits (threshold < 2^53, i.e. p < 1); p = 1 (threshold 2^53) is all WALL.
    if threshold >= 1 << 53 {
        data[..words].fill(!0);
    } else if !kernel.fill_words(&mut data[..words], state, inc, threshold << 11) {
        scalar_chains(&mut data[..words], n, state, inc, threshold << 11);
    }
    data[words - 1] &= last_mask;
    unpack_rows(data, rows, cols, wpr, stride);
    rng.advance(n as u64);
}

/// The scalar kernel: [`CHAINS`] interleaved 128-bit chains (see [`fill_numpy_with`]), cells
/// `0..n` into the packed `words`.
#[inline(always)]
fn scalar_chains(words: &mut [u64], n: usize, state: u128, inc: u128, t: u64) {
    // Chain j starts at the state that produces draw j.
    let mut st = [0u128; CHAINS];
    let mut s = state;
    for c in st.iter_mut() {
        s = s.wrapping_mul(crate::pcg64::PCG_MULT).wrapping_add(inc);
        *c = s;
    }
    let (a, c) = crate::pcg64::pcg_jump(CHAINS as u64, inc);
    let mut cell = 0;
    for word in words.iter_mut() {
        let take = (n - cell).min(64);
        // Cells enter at the bottom, each shifting the earlier ones up (`bits + bits + wall`,
        // which LLVM turns into `cmp` + `adc`: 2 ops per cell instead of setb, movzx, shift,
        // or), so the word comes out bit-reversed. Whole rounds of the chains; a round never
        // straddles a word (64 % CHAINS == 0), and draws past the last cell are not cells.
        let mut bits = 0u64;
        for _ in (0..take).step_by(CHAINS) {
            for s in st.iter_mut() {
                let wall = crate::pcg64::pcg_output(*s) < t;
                bits = bits.wrapping_add(bits).wrapping_add(wall as u64);
                *s = s.wrapping_mul(a).wrapping_add(c);
            }
        }
        let drawn = take.div_ceil(CHAINS) * CHAINS;
        // The first cell is bit drawn - 1: reverse, then drop the draws past the last cell.
        let r = (bits << (64 - drawn)).reverse_bits();
        *word = if take == 64 {
            r
        } else {
            r & ((1u64 << take) - 1)
        };
        cell += take;
    }
}

/// Interleaved PCG64 chains of the numpy fill (see [`fill_numpy_with`]).
const CHAINS: usize = 4;

// ---------------------------------------------------------------------------------------------
// word-parallel Bernoulli
// ---------------------------------------------------------------------------------------------

/// Levels every packed word draws before the per-cell tail (part of the stream layout, see the
/// module docs). 12: measured per cave on 90x140 against 8 and 10, the extra branch-free levels
/// cost less than the tail's branches they save.
pub const LEVELS: u32 = 12;

/// A Bernoulli probability prepared for the level walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    /// `floor(p * 2^64)`; meaningless when `all_wall`.
    k: u64,
    all_wall: bool,
    /// Levels drawn per word: `min(LEVELS, depth)`.
    m: u32,
    /// Whether tied cells go on to the tail (`m < depth`).
    tail: bool,
    /// `k mod 2^(64 - m)`: what a tail draw's top bits are compared with.
    low: u64,
}

impl Threshold {
    /// Prepare wall probability `p` (`0.0..=1.0`; `1.0` is all WALL, and `p < 2^-64` rounds
    /// to all FLOOR). Errors with [`FillError::BadProbability`] outside that range or on NaN.
    pub fn new(p: f64) -> Result<Threshold, FillError> {
        check_p(p)?;
        if p == 1.0 {
            return Ok(Threshold {
                k: 0,
                all_wall: true,
                m: 0,
                tail: false,
                low: 0,
            });
        }
        // p * 2^64 is exact; `as` truncates (floor for non-negative) and p < 1 keeps it < 2^64.
        let k = (p * 18_446_744_073_709_551_616.0) as u64;
        let depth = if k == 0 { 0 } else { 64 - k.trailing_zeros() };
        let m = depth.min(LEVELS);
        Ok(Threshold {
            k,
            all_wall: false,
            m,
            tail: m < depth,
            low: if m == 0 { k } else { k & (!0u64 >> m) },
        })
    }

    /// Whether caves filled with `self` and with `other` can share a lane batch
    /// (`bernoulli_lanes`): both draw the same number of levels per word, and neither is a
    /// special case that draws none (all WALL, all FLOOR).
    pub fn shares_lanes(&self, other: &Threshold) -> bool {
        self == other || (self.m == other.m && self.m > 0 && !self.all_wall && !other.all_wall)
    }

    /// Level masks: all ones where `k`'s bit `63 - j` is set.
    #[inline(always)]
    fn level_masks<V: Lane>(&self) -> [V; LEVELS as usize] {
        std::array::from_fn(|j| V::splat(0u64.wrapping_sub((self.k >> (63 - j)) & 1)))
    }

    /// The rest of a tied cell's comparison: WALL iff the tail draw's top bits are below `low`.
    #[inline(always)]
    fn tail_wall(&self, t: u64) -> bool {
        (t >> self.m) < self.low
    }
}

/// How the levels of a batch are compared: [`Levels::Shared`] when every lane has the same
/// threshold and it draws all [`LEVELS`] levels (the common case: one probability with more
/// than 12 significant bits, such as 0.45), else the general per-lane masks.
#[derive(Clone, Copy)]
enum Levels<V: Lane> {
    /// `k`'s top 12 bits (level 0 = bit 11).
    Shared(u32),
    /// Per-lane level masks and the number of levels.
    Masks([V; LEVELS as usize], u32),
}

impl<V: Lane> Levels<V> {
    #[inline(always)]
    fn of(ths: &[Threshold]) -> Levels<V> {
        let th = &ths[0];
        let shared = ths.iter().all(|t| t.k == th.k);
        if shared && th.m == LEVELS {
            return Levels::Shared((th.k >> (64 - LEVELS)) as u32);
        }
        let kb = if shared {
            th.level_masks::<V>()
        } else {
            std::array::from_fn(|j| V::from_fn(|k| 0u64.wrapping_sub((ths[k].k >> (63 - j)) & 1)))
        };
        Levels::Masks(kb, th.m)
    }
}

/// Decide the levels of one 64-cell word per lane: returns (WALL cells, still tied cells).
/// `valid` marks the real cells (padding starts decided as FLOOR).
#[inline(always)]
fn decide<V: Lane>(g: &mut LaneXoshiro<V>, levels: &Levels<V>, valid: V) -> (V, V) {
    let (kb, m) = match levels {
        Levels::Shared(bits) => return decide_shared(g, *bits, valid),
        Levels::Masks(kb, m) => (kb, *m),
    };
    if m == LEVELS {
        // The common case (p with more than 12 significant bits): a straight line of 12 levels.
        decide_n::<V, true>(g, kb, m, valid)
    } else {
        decide_n::<V, false>(g, kb, m, valid)
    }
}

#[inline(always)]
fn decide_n<V: Lane, const ALL: bool>(
    g: &mut LaneXoshiro<V>,
    kb: &[V; LEVELS as usize],
    m: u32,
    valid: V,
) -> (V, V) {
    if V::N < 8 {
        // Without three-input logic (SSE2, AVX2, scalar): walk from the top, 5 ops per level
        // (andn, and, or into the WALLs; xor, andn for the tied cells), against 6 for the
        // bottom-up comparison below with a 4-op majority.
        let (mut wall, mut tied) = (V::ZERO, valid);
        for (j, &kbit) in kb.iter().enumerate() {
            if !ALL && j as u32 == m {
                break;
            }
            let r = g.next();
            // k's bit 1: u's bit 0 means u < k (WALL). k's bit 0: u's bit 1 means u > k
            // (FLOOR). Either way a cell stays tied iff its u bit equals k's bit.
            wall |= tied & !r & kbit;
            tied &= !(r ^ kbit);
        }
        return (wall, tied);
    }
    // AVX-512 (`vpternlogq`): draw the m level words first (level 0 = u's most significant
    // bit), then compare u's top m bits with k's from the least significant level up: `lt` =
    // "u < k on the levels below this one" becomes, one level up, `k ? (!r | lt) : (!r & lt)`
    // = majority(!r, lt, k), one `vpternlogq`; `tied` (every level equal) is another. Per
    // level and vector: xoshiro256++ 9 ops (2 adds, 2 rotates, 1 shift, 4 logic of which
    // LLVM fuses 3 into `vpternlogq`) + 2 = 11, against 12 for the walk from the top. Same
    // cells: WALL iff k has the 1 at the first differing level, tied iff no level differs.
    let mut r = [V::ZERO; LEVELS as usize];
    for (j, rj) in r.iter_mut().enumerate() {
        if !ALL && j as u32 == m {
            break;
        }
        *rj = g.next();
    }
    // Majority is self-dual, so `ge = !lt` steps as majority(r, ge, !k): no NOT per level
    // (`!k` is loop-invariant and hoisted out of the word loop).
    let (mut ge, mut tied) = (V::ONES, valid);
    for j in (0..LEVELS as usize).rev() {
        if !ALL && j as u32 >= m {
            continue;
        }
        let (rj, kbit) = (r[j], kb[j]);
        ge = rj.maj(ge, !kbit);
        tied &= !(rj ^ kbit);
    }
    (!ge & valid, tied)
}

/// `$f::<$v, P>(args)` for the run-time 4-bit pattern `$pat`, as one `match`: a jump to a copy
/// compiled for each pattern (the level walks below), always to the same one for a threshold.
macro_rules! by_pattern {
    ($pat:expr, $f:ident::<$v:ty>($($a:expr),*)) => {
        match $pat {
            0 => $f::<$v, 0>($($a),*),
            1 => $f::<$v, 1>($($a),*),
            2 => $f::<$v, 2>($($a),*),
            3 => $f::<$v, 3>($($a),*),
            4 => $f::<$v, 4>($($a),*),
            5 => $f::<$v, 5>($($a),*),
            6 => $f::<$v, 6>($($a),*),
            7 => $f::<$v, 7>($($a),*),
            8 => $f::<$v, 8>($($a),*),
            9 => $f::<$v, 9>($($a),*),
            10 => $f::<$v, 10>($($a),*),
            11 => $f::<$v, 11>($($a),*),
            12 => $f::<$v, 12>($($a),*),
            13 => $f::<$v, 13>($($a),*),
            14 => $f::<$v, 14>($($a),*),
            _ => $f::<$v, 15>($($a),*),
        }
    };
}

/// [`decide`] for a threshold shared by every lane and all 12 levels, walking from the top
/// with `k`'s bits known: a level where `k` has a 0 only narrows the tied cells (`tied &= !r`,
/// 1 op), a level where it has a 1 also decides the tied cells whose bit is 0 as WALL
/// (`wall |= tied & !r`, then `tied &= r`: 3 ops without three-input logic). For 0.45 (7 ones
/// in its top 12 bits) that is 2.2 ops per level against 5 for the run-time masks on these
/// paths (SSE2, AVX2, scalar). Same cells: WALL iff `k` has the 1 at the first level where `u`
/// and `k` differ, tied iff none differs. With three-input logic (AVX-512)
/// [`decide_shared_up`] compares from the bottom instead, at 1 op per level.
///
/// `k`'s bits are known only at run time, so each group of 4 levels jumps to a copy compiled
/// for its 4-bit pattern ([`levels4`], through `by_pattern!`): three jumps per word, each
/// always to the same place for a given threshold, so they are predicted.
#[inline(always)]
fn decide_shared<V: Lane>(g: &mut LaneXoshiro<V>, bits: u32, valid: V) -> (V, V) {
    if V::TERNLOG {
        return decide_shared_up(g, bits, valid);
    }
    let (mut wall, mut tied) = (V::ZERO, valid);
    // Three separate `match`es (not a loop over one), so each jump has one target per threshold.
    by_pattern!((bits >> 8) & 15, levels4::<V>(g, &mut wall, &mut tied));
    by_pattern!((bits >> 4) & 15, levels4::<V>(g, &mut wall, &mut tied));
    by_pattern!(bits & 15, levels4::<V>(g, &mut wall, &mut tied));
    (wall, tied)
}

/// [`decide_shared`] (without three-input logic) for two words at once, each from its own
/// generator: the same levels in the same order per generator, interleaved step by step so
/// the two xoshiro chains overlap (one chain is a serial dependency of 12 steps per word).
#[inline(always)]
fn decide_pair<V: Lane>(
    ga: &mut LaneXoshiro<V>,
    gb: &mut LaneXoshiro<V>,
    bits: u32,
    valid_a: V,
    valid_b: V,
) -> ((V, V), (V, V)) {
    let mut st = [(V::ZERO, valid_a), (V::ZERO, valid_b)];
    by_pattern!((bits >> 8) & 15, levels4_pair::<V>(ga, gb, &mut st));
    by_pattern!((bits >> 4) & 15, levels4_pair::<V>(ga, gb, &mut st));
    by_pattern!(bits & 15, levels4_pair::<V>(ga, gb, &mut st));
    (st[0], st[1])
}

/// [`levels4`] for two generators, each level drawn from both before the next.
#[inline(always)]
fn levels4_pair<V: Lane, const P: u32>(
    ga: &mut LaneXoshiro<V>,
    gb: &mut LaneXoshiro<V>,
    st: &mut [(V, V); 2],
) {
    walk4::<V, P, 2>([ga, gb], st);
}

/// Four levels of the top-down walk with `k`'s bits `P` (the first level is bit 3).
#[inline(always)]
fn levels4<V: Lane, const P: u32>(g: &mut LaneXoshiro<V>, wall: &mut V, tied: &mut V) {
    let mut st = [(*wall, *tied)];
    walk4::<V, P, 1>([g], &mut st);
    (*wall, *tied) = st[0];
}

/// The top-down walk of [`levels4`] for `K` generators, `st[k]` = (WALL, tied) of generator
/// `k`'s word: each level is drawn from every generator before the next level (plain loops,
/// no `array::from_fn`, whose closure would be compiled outside the SIMD clone).
#[inline(always)]
fn walk4<V: Lane, const P: u32, const K: usize>(g: [&mut LaneXoshiro<V>; K], st: &mut [(V, V); K]) {
    for j in (0..4).rev() {
        let mut r = [V::ZERO; K];
        for k in 0..K {
            r[k] = g[k].next();
        }
        for (k, (wall, tied)) in st.iter_mut().enumerate() {
            if (P >> j) & 1 == 1 {
                *wall |= *tied & !r[k];
                *tied &= r[k];
            } else {
                *tied &= !r[k];
            }
        }
    }
}

/// [`decide_shared`] with three-input logic (AVX-512): the comparison of [`decide_n`] from the
/// least significant level up, with `k`'s bits known. One level steps `ge` ("u >= k on the
/// levels below") to `r | ge` where `k` has a 0 and `r & ge` where it has a 1, and `tied` to
/// `tied & !r` or `tied & r`: each a two-input op with one constant, so two levels of either
/// fold into one `vpternlogq` (inputs: the state and the two levels' words). 1 op per level
/// against the top-down walk's 1.58 for 0.45 (7 ones in its top 12 bits), and against the
/// run-time masks' 2. Same cells: WALL iff `u < k` on the 12 levels, tied iff `u`'s bits equal
/// `k`'s on all of them.
#[inline(always)]
fn decide_shared_up<V: Lane>(g: &mut LaneXoshiro<V>, bits: u32, valid: V) -> (V, V) {
    // Draw all 12 level words first (level 0 first, as the stream requires), then walk up. (A
    // plain loop, not `array::from_fn`: its closure, left out of line, was compiled outside the
    // SIMD clone, and the fill ran 40 times slower.)
    let mut r = [V::ZERO; LEVELS as usize];
    for rj in r.iter_mut() {
        *rj = g.next();
    }
    // (ge, tied). Three separate `match`es, each one jump with one target per threshold
    // (predicted).
    let mut state = (V::ONES, valid);
    by_pattern!(bits & 15, levels4_up::<V>(&r, 8, &mut state));
    by_pattern!((bits >> 4) & 15, levels4_up::<V>(&r, 4, &mut state));
    by_pattern!((bits >> 8) & 15, levels4_up::<V>(&r, 0, &mut state));
    let (ge, tied) = state;
    (!ge & valid, tied)
}

/// Levels `o..o + 4` walked up: `r[o + 3]`, the least significant (`P`'s bit 0), first.
#[inline(always)]
fn levels4_up<V: Lane, const P: u32>(r: &[V; LEVELS as usize], o: usize, st: &mut (V, V)) {
    let (ge, tied) = st;
    for j in 0..4 {
        let rj = r[o + 3 - j];
        if (P >> j) & 1 == 1 {
            *ge &= rj;
            *tied &= rj;
        } else {
            *ge |= rj;
            *tied &= !rj;
        }
    }
}

/// The tail of one packed word: each tied cell (bit of `tied`, lowest first) draws a word
/// from the cave's stream. Returns the WALL cells among them.
#[inline(always)]
fn tail<R: Rng + ?Sized>(th: &Threshold, mut tied: u64, rng: &mut R) -> u64 {
    let mut wall = 0;
    while tied != 0 {
        let bit = tied & tied.wrapping_neg();
        if th.tail_wall(rng.next_u64()) {
            wall |= bit;
        }
        tied ^= bit;
    }
    wall
}

/// Number of packed words of a `rows x cols` grid, and the valid-bit mask of the last one.
fn packed_shape(rows: usize, cols: usize) -> (usize, u64) {
    let cells = rows * cols;
    let n = cells.div_ceil(64);
    let mask = match cells % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    };
    (n, mask)
}

/// Move packed words `data[0..n]` (cells row-major, 64 per word) into the row layout of
/// [`Grid`] (row `y` at `(y + 1) * stride + 1`, `wpr` words, guards around), in place, and zero
/// every word outside the rows. Works backwards: the source words of row `y` lie at or below
/// `y * wpr + wpr < (y + 1) * stride + 1`, so no source is overwritten before it is read.
///
/// Row `y` starts at cell `y * cols`, so all its words take the same shift `s = y * cols mod
/// 64`: word `w` is packed words `v0 + w` and `v0 + w + 1` funnel-shifted by `s`. No division
/// or bounds check per word (measured: the indexed form with a division per word was a tenth
/// of the lane fill).
#[inline(always)]
fn unpack_rows<V: Lane>(data: &mut [V], rows: usize, cols: usize, wpr: usize, stride: usize) {
    let last = match cols % 64 {
        0 => V::ONES,
        r => V::splat((1u64 << r) - 1),
    };
    assert!(stride > wpr && data.len() >= (rows + 2) * stride);
    let p = data.as_mut_ptr();
    let mut b0 = rows * cols;
    for y in (0..rows).rev() {
        b0 -= cols;
        let (v0, s) = (b0 / 64, (b0 % 64) as u32);
        let o = (y + 1) * stride + 1;
        // SAFETY: reads are `v0 ..= v0 + wpr <= (y + 1) * wpr < o - 1` (as `v0 <= y * wpr`),
        // writes `o - 1 .. (y + 2) * stride`, all below `(rows + 2) * stride` (asserted).
        // Reading `v0 + wpr` when it is `n` (past the packed words) only feeds bits of cells
        // past the grid's last, which are row positions at or past `cols` that `last` clears.
        // The last word (the only one masked) is peeled, so the word loop has no per-word
        // select; `s` is the same for the whole row.
        unsafe {
            let word = |w: usize| {
                if s == 0 {
                    *p.add(v0 + w)
                } else {
                    (*p.add(v0 + w)).shr(s) | (*p.add(v0 + w + 1)).shl(64 - s)
                }
            };
            for w in 0..wpr - 1 {
                *p.add(o + w) = word(w);
            }
            *p.add(o + wpr - 1) = word(wpr - 1) & last;
            // This row's guard words and padding words.
            *p.add(o - 1) = V::ZERO;
            for i in o + wpr..o - 1 + stride {
                *p.add(i) = V::ZERO;
            }
        }
    }
    data[..stride].fill(V::ZERO);
    data[(rows + 1) * stride..].fill(V::ZERO);
}

/// Each cell WALL independently with probability `p`, generated 64 cells per random word
/// (the stream layout of the module docs; `rng` is the cave's stream `P`).
///
/// Draws 32 words from `rng` to seed the slot generators, then one word per tied cell of the
/// tail (about 1 in 4096 cells for p = 0.45; none when `p` has at most 12 significant bits).
/// Runs on `simd`'s clone, 8 packed words (one per slot generator) per vector step.
pub fn fill_bernoulli<R: Rng + ?Sized>(
    simd: Simd,
    grid: &mut Grid,
    p: f64,
    rng: &mut R,
) -> Result<(), FillError> {
    fill_bernoulli_th(simd, grid, Threshold::new(p)?, rng);
    Ok(())
}

/// [`fill_bernoulli`] with the probability already prepared.
pub(crate) fn fill_bernoulli_th<R: Rng + ?Sized>(
    simd: Simd,
    grid: &mut Grid,
    th: Threshold,
    rng: &mut R,
) {
    let slots = slot_states(rng);
    crate::simd_run!(simd, <I> [R: Rng + ?Sized] (
        grid: &'a mut Grid = grid,
        th: Threshold = th,
        slots: [[u64; 4]; SLOTS] = slots,
        rng: &'a mut R = rng,
    ) -> () {
        fill_single::<I, R>(grid, th, slots, rng)
    });
}

/// The [`SLOTS`] slot generators of one cave in vectors of `V::N` lanes: `SLOTS / N` of them
/// (slot `g` is lane `g % N` of vector `g / N`).
struct Slots<V: Lane> {
    g: [LaneXoshiro<V>; SLOTS],
}

impl<V: Lane> Slots<V> {
    #[inline(always)]
    fn new(states: &[[u64; 4]; SLOTS]) -> Slots<V> {
        let groups = SLOTS / V::N;
        Slots {
            g: std::array::from_fn(|i| {
                LaneXoshiro::from_states(|k| {
                    if i < groups {
                        states[i * V::N + k]
                    } else {
                        [1, 0, 0, 0]
                    }
                })
            }),
        }
    }
}

/// [`fill_bernoulli_th`] in a SIMD clone.
#[inline(always)]
fn fill_single<I: Isa, R: Rng + ?Sized>(
    grid: &mut Grid,
    th: Threshold,
    slots: [[u64; 4]; SLOTS],
    rng: &mut R,
) {
    let (rows, cols, wpr, stride) = (
        grid.rows(),
        grid.cols(),
        grid.words_per_row(),
        grid.stride(),
    );
    if th.all_wall || th.m == 0 {
        grid.fill(th.all_wall);
        return;
    }
    let (n, last_mask) = packed_shape(rows, cols);
    let data = grid.raw_mut();
    // Slot generator g decides packed words 8q + g: vector i holds slots i N .. i N + N.
    let mut gens = Slots::<I::Lanes>::new(&slots);
    let levels = Levels::<I::Lanes>::of(&[th]);
    let nv = <I::Lanes as Lane>::N;
    let groups = SLOTS / nv;
    for q in 0..n.div_ceil(SLOTS) {
        for (i, gen_i) in gens.g[..groups].iter_mut().enumerate() {
            let v0 = SLOTS * q + i * nv;
            if v0 >= n {
                break;
            }
            let valid = <I::Lanes as Lane>::from_fn(|k| match (v0 + k).cmp(&(n - 1)) {
                std::cmp::Ordering::Less => !0,
                std::cmp::Ordering::Equal => last_mask,
                std::cmp::Ordering::Greater => 0,
            });
            let (wall, tied) = decide(gen_i, &levels, valid);
            let k = (n - v0).min(nv);
            data[v0..v0 + k].copy_from_slice(&wall.words()[..k]);
            if th.tail && tied.any() {
                // Words in order, so tail draws follow the cells' order.
                for (j, w) in data[v0..v0 + k].iter_mut().enumerate() {
                    *w |= tail(&th, tied.get(j), rng);
                }
            }
        }
    }
    unpack_rows(data, rows, cols, wpr, stride);
}

/// The Bernoulli fill of a batch of caves straight into the lanes of an interleaved buffer:
/// lane `k` of `data` is cave `k`, of seed `seeds[k]` (`seeds.len() == V::N`); each cave gets
/// exactly the cells [`fill_bernoulli`] gives it from `cave_rng(seeds[k])`, and `rngs[k]` is
/// set to that stream as the fill leaves it (the cave's later draws continue it). The streams
/// are seeded here, in lanes ([`lane_slots`]), not by the caller one cave at a time. `data`
/// has the row layout of [`crate::kernel::batch::LaneGrid`] (`stride = wpr + 2`, guard rows). Returns the WALL count
/// per lane.
///
/// Slot generator `g` of every cave sits in lane `k` of `gens[g]`, so one vector step decides
/// packed word `v` of all caves at once.
///
/// Lane `k` fills with probability `ths[k]` (`ths.len() == V::N`): the caves of a batch may
/// come from different grid points of a sweep, as long as their thresholds draw the same
/// number of levels ([`Threshold::shares_lanes`]); each lane's level masks are its own `k`'s
/// bits, and its tied cells use its own tail comparison.
#[inline(always)]
pub(crate) fn bernoulli_lanes<V: Lane>(
    data: &mut [V],
    rows: usize,
    cols: usize,
    ths: &[Threshold],
    seeds: &[u64],
    rngs: &mut [CaveRng],
) -> V {
    assert_eq!(rngs.len(), V::N);
    assert_eq!(seeds.len(), V::N);
    assert_eq!(ths.len(), V::N);
    let th = &ths[0];
    debug_assert!(ths.iter().all(|t| t.shares_lanes(th)));
    let wpr = cols.div_ceil(64);
    let stride = wpr + 2;
    let (mut gens, cave) = lane_slots::<V>(|k| seeds[k]);
    for (k, r) in rngs.iter_mut().enumerate() {
        *r = xoshiro_from_state(cave.lane_state(k));
    }
    if th.all_wall || th.m == 0 {
        let fill = if th.all_wall { V::ONES } else { V::ZERO };
        let last = match cols % 64 {
            0 => fill,
            r => fill & V::splat((1u64 << r) - 1),
        };
        data.fill(V::ZERO);
        for y in 0..rows {
            let o = (y + 1) * stride + 1;
            data[o..o + wpr].fill(fill);
            data[o + wpr - 1] = last;
        }
        return V::splat(if th.all_wall { (rows * cols) as u64 } else { 0 });
    }
    let (n, last_mask) = packed_shape(rows, cols);
    let levels = Levels::<V>::of(ths);
    let any_tail = ths.iter().any(|t| t.tail);
    let mut count = V::ZERO;
    // The tail is deferred to the end of each window of 64 packed words: a tied vector (about
    // one in 8 at 12 levels: 512 cells, 2^-12 tied each) is kept in `ring` and flagged in
    // `pending`, branch-free, and the window's flagged vectors are finished in order after
    // its last word, so each cave's tail draws still follow its cells' order. (A branch per
    // vector on "any lane tied" was taken at random, one vector in 8.)
    let mut ring = [V::ZERO; 64];
    let mut pending = 0u64;
    // Without three-input logic, words are decided two at a time (`decide_pair`): word `v`
    // and `v + 1` have different slot generators (v even, so `v % SLOTS + 1 < SLOTS`), and
    // interleaving their two serial xoshiro chains cut the AVX2 fill from 1.04 to 0.81 us per
    // 90x140 cave and SSE2's from 2.13 to 1.70 (Zen 4, `bench`). With `vpternlogq` the same
    // pairing (both words' 12 levels drawn, then walked up) was slower, 0.48 against 0.44-0.46
    // us: that path is bound by issue, not by the chains, and keeps one word at a time.
    let paired = match levels {
        Levels::Shared(bits) if !V::TERNLOG => Some(bits),
        _ => None,
    };
    let mut next = [V::ZERO; 2];
    for v in 0..n {
        let valid = V::splat(if v + 1 == n { last_mask } else { !0 });
        let (wall, tied) = match paired {
            Some(_) if v % 2 == 1 => (next[0], next[1]),
            Some(bits) if v + 1 < n => {
                let valid2 = V::splat(if v + 2 == n { last_mask } else { !0 });
                let (a, b) = gens.split_at_mut(v % SLOTS + 1);
                let (first, second) =
                    decide_pair(&mut a[v % SLOTS], &mut b[0], bits, valid, valid2);
                next = [second.0, second.1];
                first
            }
            _ => decide(&mut gens[v % SLOTS], &levels, valid),
        };
        count = count.add(wall.popcnt());
        data[v] = wall;
        if any_tail {
            ring[v % 64] = tied;
            pending |= (tied.any() as u64) << (v % 64);
            if v % 64 == 63 || v + 1 == n {
                let base = v - v % 64;
                while pending != 0 {
                    let j = pending.trailing_zeros() as usize;
                    pending &= pending - 1;
                    // The lanes go through plain arrays: one vector store and one load per
                    // tied vector. (Setting lanes one by one with `Lane::set` round-tripped
                    // the whole vector through memory per lane, a store-forwarding stall
                    // each: measured a fifth of the fill's time.)
                    let (mut t, mut extra) = ([0u64; 8], [0u64; 8]);
                    ring[j].store(&mut t, 0);
                    for (((e, &t), r), th) in extra.iter_mut().zip(&t).zip(rngs.iter_mut()).zip(ths)
                    {
                        // A lane without a tail (`m` = its depth) leaves its tied cells FLOOR.
                        if t != 0 && th.tail {
                            *e = tail(th, t, r);
                        }
                    }
                    let e = V::load(&extra, 0);
                    data[base + j] |= e;
                    count = count.add(e.popcnt());
                }
            }
        }
    }
    unpack_rows(data, rows, cols, wpr, stride);
    count
}

// ---------------------------------------------------------------------------------------------
// exact counts
// ---------------------------------------------------------------------------------------------

/// All WALL except exactly `floor_count` FLOOR cells, chosen uniformly among all
/// `rows * cols`-choose-`floor_count` subsets (NetHack's Gnomish Mines: 624 FLOOR of 19x77).
/// Errors if `floor_count` exceeds the number of cells. `rng` is the cave's stream (32 draws).
pub fn fill_exact_count<R: Rng + ?Sized>(
    simd: Simd,
    grid: &mut Grid,
    floor_count: usize,
    rng: &mut R,
) -> Result<(), FillError> {
    fill_exact(simd, grid, floor_count, false, rng)
}

/// All FLOOR except exactly `wall_count` WALL cells, uniformly chosen: the WALL-count mirror of
/// [`fill_exact_count`] (for a caller who thinks in wall density).
pub fn fill_exact_walls<R: Rng + ?Sized>(
    simd: Simd,
    grid: &mut Grid,
    wall_count: usize,
    rng: &mut R,
) -> Result<(), FillError> {
    fill_exact(simd, grid, wall_count, true, rng)
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

/// Levels of the exact-count fill's first, approximate, draw (part of the stream layout).
pub const EXACT_LEVELS: u32 = 8;

/// Make exactly `count` cells `wall` (`false` = FLOOR) and the rest the opposite, uniformly.
///
/// Let `m = min(count, n - count)` be the smaller side (the *marked* cells; picking the
/// complement does not change the distribution: the complement of a uniform subset is uniform).
/// 1. Mark cells independently with one fixed probability `q` close to `m / n`: the Bernoulli
///    level walk of the module docs with `k = floor(m * 2^64 / n)`, exactly [`EXACT_LEVELS`]
///    levels per packed word and ties unmarked (so `q = floor(k / 2^56) / 256`); 8 cells per
///    vector step, no branches.
/// 2. With `c` cells marked: while `c > m`, unmark the `r`-th marked cell (row-major) for
///    `r = uniform_below(rng, c)`; while `c < m`, mark the `r`-th unmarked cell for
///    `r = uniform_below(rng, n - c)`. `rng` is the cave's stream.
///
/// Why this is uniform: given `c`, the cells of step 1 are a uniform `c`-subset (the cells are
/// independent and equally likely), and removing a uniform member from a uniform subset, or
/// adding a uniform non-member, keeps it uniform. Why: step 1 costs a few vector steps and the
/// corrections are about `sqrt(n q (1 - q))` (some 20 for NetHack's 624 of 1463) instead of
/// Robert Floyd's `m` sequential draws, each a coin flip no branch predictor learns (measured
/// on 19x77: the Floyd fill was the biggest part of a NetHack cave after the bridge).
fn fill_exact<R: Rng + ?Sized>(
    simd: Simd,
    grid: &mut Grid,
    count: usize,
    wall: bool,
    rng: &mut R,
) -> Result<(), FillError> {
    let n = grid.cells();
    if count > n {
        return Err(too_many(grid, count, if wall { "WALL" } else { "FLOOR" }));
    }
    let slots = slot_states(rng);
    crate::simd_run!(simd, <I> [R: Rng + ?Sized] (
        grid: &'a mut Grid = grid,
        count: usize = count,
        wall: bool = wall,
        slots: [[u64; 4]; SLOTS] = slots,
        rng: &'a mut R = rng,
    ) -> () {
        fill_exact_in::<I, R>(grid, count, wall, slots, rng)
    });
    Ok(())
}

/// Index of the `r`-th (0-based) set bit of the packed bitset `bits` (masked by `valid` for
/// its last word when counting zeros: `invert` selects among the zero bits).
#[inline(always)]
fn select_bit<I: Isa>(bits: &[u64], last_mask: u64, invert: bool, mut r: u64) -> usize {
    let n = bits.len();
    for (i, &w) in bits.iter().enumerate() {
        let mut w = if invert { !w } else { w };
        if i + 1 == n {
            w &= last_mask;
        }
        let pc = w.count_ones() as u64;
        if r < pc {
            let bit = if I::FAST_PDEP {
                crate::simd::pdep::<I>(1u64 << r, w).trailing_zeros()
            } else {
                for _ in 0..r {
                    w &= w - 1;
                }
                w.trailing_zeros()
            };
            return 64 * i + bit as usize;
        }
        r -= pc;
    }
    unreachable!("r is below the number of candidate bits")
}

/// [`fill_exact`] in a SIMD clone.
#[inline(always)]
fn fill_exact_in<I: Isa, R: Rng + ?Sized>(
    grid: &mut Grid,
    count: usize,
    wall: bool,
    slots: [[u64; 4]; SLOTS],
    rng: &mut R,
) {
    let (rows, cols, wpr, stride) = (
        grid.rows(),
        grid.cols(),
        grid.words_per_row(),
        grid.stride(),
    );
    let n = rows * cols;
    let (mark, m) = if count <= n - count {
        (wall, count)
    } else {
        (!wall, n - count)
    };
    let (words, last_mask) = packed_shape(rows, cols);
    let data = grid.raw_mut();
    // 1. Independent marks (bit 1), 8 packed words per step, as the Bernoulli fill.
    let k = (((m as u128) << 64) / n as u128) as u64;
    let th = Threshold {
        k,
        all_wall: false,
        m: EXACT_LEVELS,
        tail: false,
        low: 0,
    };
    let mut gens = Slots::<I::Lanes>::new(&slots);
    let kb = th.level_masks::<I::Lanes>();
    let nv = <I::Lanes as Lane>::N;
    let mut c = 0u64;
    for q in 0..words.div_ceil(SLOTS) {
        for (i, gen_i) in gens.g[..SLOTS / nv].iter_mut().enumerate() {
            let v0 = SLOTS * q + i * nv;
            if v0 >= words {
                break;
            }
            let valid = <I::Lanes as Lane>::from_fn(|j| match (v0 + j).cmp(&(words - 1)) {
                std::cmp::Ordering::Less => !0,
                std::cmp::Ordering::Equal => last_mask,
                std::cmp::Ordering::Greater => 0,
            });
            let (marks, _) = decide_n::<I::Lanes, false>(gen_i, &kb, EXACT_LEVELS, valid);
            let kk = (words - v0).min(nv);
            data[v0..v0 + kk].copy_from_slice(&marks.words()[..kk]);
            c += marks.popcnt().sum();
        }
    }
    // 2. Exactly m.
    let m = m as u64;
    while c > m {
        let at = select_bit::<I>(&data[..words], last_mask, false, uniform_below(rng, c));
        data[at / 64] &= !(1u64 << (at % 64));
        c -= 1;
    }
    while c < m {
        let free = n as u64 - c;
        let at = select_bit::<I>(&data[..words], last_mask, true, uniform_below(rng, free));
        data[at / 64] |= 1u64 << (at % 64);
        c += 1;
    }
    if !mark {
        for w in data[..words].iter_mut() {
            *w = !*w;
        }
        data[words - 1] &= last_mask;
    }
    unpack_rows(data, rows, cols, wpr, stride);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{CaveRng, Xoshiro256PlusPlus, cave_rng};
    use proptest::prelude::*;
    use rand_core::SeedableRng;

    /// True iff every bit outside the grid (guards, padding) is zero.
    fn outside_is_zero(g: &Grid) -> bool {
        let mut c = g.clone();
        c.clear_edges();
        c.raw() == g.raw()
    }

    /// The path the statistical tests run on (the oracle tests run every path).
    const S: Simd = Simd::SCALAR;

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

    /// Every SIMD clone with every PCG kernel the CPU runs, against the float oracle (the
    /// sequential stream, `u < p` per cell): shapes from 1x1 through widths that are not
    /// multiples of 64 or of any kernel's chain count, streams already advanced, two fills in
    /// a row from one stream (the first must leave it exactly where `rows * cols` sequential
    /// draws would), and p = 0, p = 1 and p on a possible `u`.
    fn numpy_every_kernel_case(rows: usize, cols: usize, seed: u64, skip: u64, p: f64) {
        let mut want = NumpyRandom::new(seed);
        want.advance(skip);
        let start = want.clone();
        let mut cells = vec![];
        for _ in 0..2 * rows * cols {
            cells.push(want.next_f64() < p);
        }
        for simd in Simd::available() {
            for kernel in PcgKernel::available() {
                let mut rng = start.clone();
                for (round, cells) in cells.chunks(rows * cols).enumerate() {
                    let mut g = Grid::new(rows, cols).unwrap();
                    // Leftovers of an earlier fill must not survive.
                    g.raw_mut().fill(!0);
                    fill_numpy_on(simd, kernel, &mut g, p, &mut rng).unwrap();
                    for y in 0..rows {
                        for x in 0..cols {
                            assert_eq!(
                                g.get(y, x),
                                cells[y * cols + x],
                                "{simd} {} {rows}x{cols} seed {seed} skip {skip} p {p} \
                                 round {round} cell ({y}, {x})",
                                kernel.name()
                            );
                        }
                    }
                    assert!(outside_is_zero(&g), "{simd} {}", kernel.name());
                }
                assert_eq!(rng, want, "{simd} {} stream position", kernel.name());
            }
        }
    }

    #[test]
    fn numpy_every_kernel_hand_cases() {
        let on_u = 0x0001_2345_6789_abcd_u64 as f64 / (1u64 << 53) as f64;
        for (rows, cols) in [
            (1, 1),
            (1, 7),
            (3, 63),
            (2, 65),
            (90, 140),
            (5, 200),
            (1, 129),
        ] {
            for p in [0.0, 1.0, 0.45, on_u, 1e-9, 1.0 - 1e-12] {
                numpy_every_kernel_case(rows, cols, 42, 0, p);
            }
        }
        numpy_every_kernel_case(90, 140, (1 << 40) + 7, 12_345, 0.45);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn numpy_every_kernel_matches_float_oracle(
            rows in prop_oneof![1usize..4, 60usize..91],
            cols in prop_oneof![1usize..200, Just(64), Just(140)],
            seed: u64, skip in prop_oneof![Just(0u64), 0u64..200, any::<u64>()],
            p_num in 0u64..=(1 << 53), exact in any::<bool>()) {
            let p = if exact {
                p_num as f64 / (1u64 << 53) as f64
            } else {
                (p_num as f64 + 0.37) / ((1u64 << 53) as f64 + 1.0)
            };
            numpy_every_kernel_case(rows, cols, seed, skip, p);
        }
    }

    // ---- bernoulli ----

    /// The documented stream layout, one cell at a time with scalar rand_xoshiro generators and
    /// plain integer comparisons (no levels, no packing): an independent reading of the docs.
    fn bernoulli_oracle(rows: usize, cols: usize, p: f64, seed: u64) -> (Grid, CaveRng) {
        let mut parent = cave_rng(seed);
        let mut st = [[0u64; 4]; SLOTS];
        for g in st.iter_mut() {
            for w in g.iter_mut() {
                *w = crate::rng::splitmix_finalize(parent.next_u64());
            }
        }
        let mut slots: Vec<Xoshiro256PlusPlus> = st
            .iter()
            .map(|&s| crate::rng::xoshiro_from_state(s))
            .collect();
        let mut g = Grid::new(rows, cols).unwrap();
        if p == 1.0 {
            g.fill(true);
            return (g, parent);
        }
        let k = (p * 2f64.powi(64)) as u64;
        if k == 0 {
            return (g, parent);
        }
        let depth = 64 - k.trailing_zeros();
        let m = depth.min(LEVELS);
        let cells = rows * cols;
        for v in 0..cells.div_ceil(64) {
            // The m level words of packed word v, from its slot generator.
            let lv: Vec<u64> = (0..m).map(|_| slots[v % SLOTS].next_u64()).collect();
            for b in 0..64 {
                let i = 64 * v + b;
                if i >= cells {
                    break;
                }
                // u's top m bits, MSB first.
                let top = lv.iter().fold(0u64, |acc, &w| (acc << 1) | ((w >> b) & 1));
                let ktop = k >> (64 - m);
                let wall = if top != ktop {
                    top < ktop
                } else if m == depth {
                    false
                } else {
                    let t = parent.next_u64();
                    let u = (top << (64 - m)) | (t >> m);
                    u < k
                };
                g.set(i / cols, i % cols, wall);
            }
        }
        (g, parent)
    }

    const P_CASES: [f64; 7] = [0.0, 1.0, 0.5, 0.25, 0.75, 0.45, 1.0 / 1024.0];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn bernoulli_matches_oracle(rows in prop_oneof![1usize..7, Just(64), Just(65), 60usize..70],
                                    cols in prop_oneof![1usize..600, Just(64), Just(128), Just(140)],
                                    seed: u64, p_sel in 0usize..8, p_rand in 0.0f64..1.0) {
            let p = if p_sel < P_CASES.len() { P_CASES[p_sel] } else { p_rand };
            let (want, want_rng) = bernoulli_oracle(rows, cols, p, seed);
            for simd in Simd::available() {
                let mut g = Grid::new(rows, cols).unwrap();
                g.fill(true); // stale contents must be overwritten
                let mut rng = cave_rng(seed);
                fill_bernoulli(simd, &mut g, p, &mut rng).unwrap();
                prop_assert_eq!(&g, &want, "{}", simd);
                prop_assert!(outside_is_zero(&g));
                // The stream continues where the oracle's does (tail draws included).
                prop_assert_eq!(&rng, &want_rng);
            }
        }
    }

    /// A fill in lanes gives every lane the cave `fill_bernoulli` gives its seed, whatever the
    /// lane count and position.
    fn lanes_match_single<V: Lane>(rows: usize, cols: usize, ps: &[f64], seeds: &[u64]) {
        let simd = Simd::SCALAR;
        let wpr = cols.div_ceil(64);
        let mut data = vec![V::ONES; (rows + 2) * (wpr + 2)];
        // Streams that are not the caves': the fill must set them.
        let mut rngs: Vec<CaveRng> = seeds.iter().map(|&s| cave_rng(!s)).collect();
        let ths: Vec<Threshold> = ps.iter().map(|&p| Threshold::new(p).unwrap()).collect();
        let count = bernoulli_lanes(&mut data, rows, cols, &ths, seeds, &mut rngs);
        for (k, &seed) in seeds.iter().enumerate() {
            let p = ps[k];
            let mut want = Grid::new(rows, cols).unwrap();
            let mut rng = cave_rng(seed);
            fill_bernoulli(simd, &mut want, p, &mut rng).unwrap();
            assert_eq!(rng, rngs[k], "lane {k}");
            assert_eq!(count.get(k), want.count_walls(), "lane {k}");
            for y in -1..=rows as isize {
                let o = ((y + 1) as usize) * (wpr + 2);
                for w in 0..wpr + 2 {
                    let got = data[o + w].get(k);
                    let exp = if (0..rows as isize).contains(&y) && (1..=wpr).contains(&w) {
                        want.row(y as usize)[w - 1]
                    } else {
                        0
                    };
                    assert_eq!(got, exp, "lane {k} row {y} word {w} {rows}x{cols} p {p}");
                }
            }
        }
    }

    #[test]
    fn bernoulli_lanes_match_single_grid_fill() {
        for (rows, cols) in [(1, 1), (90, 140)] {
            lanes_match_single::<u64>(rows, cols, &[0.45], &[7]);
        }
        for simd in Simd::available() {
            crate::simd_run!(simd, <I> () -> () {
                let seeds = [5, 4, 3, 2, 1, 0, 99, u64::MAX];
                let n = <I::Lanes as Lane>::N;
                for (rows, cols) in [(1, 1), (3, 63), (2, 64), (5, 65), (90, 140), (7, 257)] {
                    for p in P_CASES {
                        lanes_match_single::<I::Lanes>(rows, cols, &[p; 8][..n], &seeds[..n]);
                    }
                }
            });
        }
    }

    /// Lanes of one batch with different probabilities (caves of different grid points) each
    /// get the cave `fill_bernoulli` gives their own seed and probability: lanes with and
    /// without a tail, tiny and large probabilities, and random ones.
    #[test]
    fn bernoulli_lanes_with_a_probability_per_lane() {
        // 1365/4096 has exactly 12 significant bits: 12 levels and no tail, beside lanes that
        // have one; 1/4 and 3/4 both stop after 2 levels.
        let mut sets = vec![
            [
                0.45,
                1365.0 / 4096.0,
                0.3,
                0.61,
                1e-5,
                0.999_99,
                0.5 + 1e-9,
                1.0 / 3.0,
            ],
            [0.25, 0.75, 0.25, 0.75, 0.75, 0.25, 0.25, 0.75],
        ];
        let mut r = cave_rng(2024);
        for _ in 0..6 {
            // Random doubles in (2^-12, 1): 12 levels and a tail, almost surely.
            sets.push(std::array::from_fn(|_| {
                0.000_3 + 0.999 * (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
            }));
        }
        assert!(
            !Threshold::new(0.25)
                .unwrap()
                .shares_lanes(&Threshold::new(0.5).unwrap())
        );
        assert!(
            !Threshold::new(1.0)
                .unwrap()
                .shares_lanes(&Threshold::new(0.0).unwrap())
        );
        for simd in Simd::available() {
            crate::simd_run!(simd, <I> (sets: &'a [[f64; 8]] = &sets) -> () {
                let seeds = [11, 12, 13, 14, 15, 16, 17, u64::MAX - 3];
                let n = <I::Lanes as Lane>::N;
                for ps in sets {
                    let ths: Vec<Threshold> = ps[..n]
                        .iter()
                        .map(|&p| Threshold::new(p).unwrap())
                        .collect();
                    assert!(ths.iter().all(|t| t.shares_lanes(&ths[0])), "{ps:?}");
                    for (rows, cols) in [(1, 1), (3, 63), (5, 65), (90, 140), (7, 257)] {
                        lanes_match_single::<I::Lanes>(rows, cols, &ps[..n], &seeds[..n]);
                    }
                }
            });
        }
    }

    #[test]
    fn bernoulli_hand_cases() {
        // One row of 64 cells is packed word 0: slot generator 0 decides it. Derived from the
        // method by hand:
        // p = 1/2: WALL iff u's first bit is 0            -> !r0
        // p = 1/4: WALL iff u's first two bits are 00     -> !r0 & !r1
        // p = 3/4: WALL iff u's first two bits are not 11 -> !(r0 & r1)
        // (p = 1/4 and 3/4 stop after 2 levels: k has 2 significant bits, no tail.)
        let st = slot_states(&mut cave_rng(77));
        let mut g0 = crate::rng::xoshiro_from_state(st[0]);
        let (r0, r1) = (g0.next_u64(), g0.next_u64());
        for (p, want) in [(0.5, !r0), (0.25, !r0 & !r1), (0.75, !(r0 & r1))] {
            let mut g = Grid::new(1, 64).unwrap();
            fill_bernoulli(Simd::detect(), &mut g, p, &mut cave_rng(77)).unwrap();
            assert_eq!(g.row(0), &[want][..], "p {p}");
        }
        // Packing across rows: 2 rows of 40 cells are packed word 0's bits 0..40 and 40..80
        // (bits 40..64 of word 0, then bits 0..16 of word 1 from slot generator 1).
        let mut g1 = crate::rng::xoshiro_from_state(st[1]);
        let s0 = g1.next_u64();
        let mut g = Grid::new(2, 40).unwrap();
        fill_bernoulli(Simd::detect(), &mut g, 0.5, &mut cave_rng(77)).unwrap();
        let m40 = (1u64 << 40) - 1;
        assert_eq!(g.row(0), &[!r0 & m40][..]);
        assert_eq!(g.row(1), &[((!r0 >> 40) | (!s0 << 24)) & m40][..]);
    }

    #[test]
    fn bernoulli_p0_p1_and_bad_p() {
        for (rows, cols) in [(1, 1), (3, 63), (5, 64), (7, 65), (90, 140)] {
            let mut g = Grid::new(rows, cols).unwrap();
            fill_bernoulli(S, &mut g, 1.0, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), (rows * cols) as u64);
            assert!(outside_is_zero(&g));
            fill_bernoulli(S, &mut g, 0.0, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), 0);
            // Below 2^-64 quantises to 0.
            fill_bernoulli(S, &mut g, 1e-30, &mut cave_rng(1)).unwrap();
            assert_eq!(g.count_walls(), 0);
            assert!(outside_is_zero(&g));
        }
        let mut g = Grid::new(2, 2).unwrap();
        for p in [f64::NAN, -0.01, 1.5, f64::INFINITY] {
            let e = fill_bernoulli(S, &mut g, p, &mut cave_rng(1)).unwrap_err();
            assert!(matches!(e, FillError::BadProbability(_)));
            assert!(fill_numpy(&mut g, p, 1).is_err());
        }
        assert!(FillError::BadProbability(1.5).to_string().contains("1.5"));
    }

    #[test]
    fn bernoulli_draws_32_words_from_the_stream_without_tail() {
        // 0.25 has 2 significant bits (no tail); 0 and 1 draw no levels at all.
        for p in [0.0, 0.25, 1.0] {
            let mut a = cave_rng(3);
            let mut g = Grid::new(9, 70).unwrap();
            fill_bernoulli(S, &mut g, p, &mut a).unwrap();
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
        fill_bernoulli(S, &mut a, 0.45, &mut cave_rng(10)).unwrap();
        fill_bernoulli(S, &mut b, 0.45, &mut cave_rng(10)).unwrap();
        assert_eq!(a, b);
        fill_bernoulli(S, &mut b, 0.45, &mut cave_rng(11)).unwrap();
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
                fill_bernoulli(S, &mut g, p, &mut cave_rng(seed)).unwrap();
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
                    fill_exact_count(S, &mut g, k, &mut cave_rng(seed)).unwrap();
                    assert_eq!(g.count_walls(), (n - k) as u64, "{rows}x{cols} floor {k}");
                    assert!(outside_is_zero(&g));
                    fill_exact_walls(S, &mut g, k, &mut cave_rng(seed)).unwrap();
                    assert_eq!(g.count_walls(), k as u64, "{rows}x{cols} walls {k}");
                    assert!(outside_is_zero(&g));
                }
            }
            let e = fill_exact_count(S, &mut g, n + 1, &mut cave_rng(0)).unwrap_err();
            assert!(
                matches!(e, FillError::CountTooLarge { count, cells, .. } if count == n + 1 && cells == n)
            );
            assert!(fill_exact_walls(S, &mut g, n + 1, &mut cave_rng(0)).is_err());
        }
        let mut g = Grid::new(19, 77).unwrap();
        fill_exact_count(S, &mut g, 624, &mut cave_rng(9)).unwrap();
        assert_eq!(g.cells() - g.count_walls() as usize, 624);
    }

    #[test]
    fn exact_count_deterministic() {
        let mut a = Grid::new(19, 77).unwrap();
        let mut b = Grid::new(19, 77).unwrap();
        fill_exact_count(S, &mut a, 624, &mut cave_rng(4)).unwrap();
        fill_exact_count(S, &mut b, 624, &mut cave_rng(4)).unwrap();
        assert_eq!(a, b);
        fill_exact_count(S, &mut b, 624, &mut cave_rng(5)).unwrap();
        assert_ne!(a, b);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every SIMD path makes the scalar path's exact-count cave (the level walk differs by
        /// path: bottom-up with `vpternlogq` on AVX-512, top-down elsewhere) and leaves the
        /// stream in the same place.
        #[test]
        fn exact_count_same_on_every_path(rows in 1usize..40, cols in prop_oneof![1usize..200, Just(64), Just(77), Just(128)],
                                          frac in 0.0f64..=1.0, walls: bool, seed: u64) {
            let n = rows * cols;
            let count = ((n as f64 * frac) as usize).min(n);
            let mut want = Grid::new(rows, cols).unwrap();
            let mut want_rng = cave_rng(seed);
            fill_exact(S, &mut want, count, walls, &mut want_rng).unwrap();
            for simd in Simd::available() {
                let mut g = Grid::new(rows, cols).unwrap();
                g.fill(true);
                let mut rng = cave_rng(seed);
                fill_exact(simd, &mut g, count, walls, &mut rng).unwrap();
                prop_assert_eq!(&g, &want, "{}", simd);
                prop_assert_eq!(&rng, &want_rng, "{}", simd);
                prop_assert!(outside_is_zero(&g));
            }
        }
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
                        fill_exact_walls(S, &mut g, k, &mut r).unwrap();
                    } else {
                        fill_exact_count(S, &mut g, k, &mut r).unwrap();
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
                fill_exact_count(S, &mut g, k, &mut cave_rng(seed)).unwrap();
                for (i, c) in per_cell.iter_mut().enumerate() {
                    *c += !g.get(i / cols, i % cols) as u64;
                }
            }
            let c = chi2(&per_cell);
            assert!(c < chi2_bound(per_cell.len() - 1), "k {k}: chi2 {c}");
        }
    }
}
