//! Random number sources for cave generation: the per-seed xoshiro stream, xoshiro256++ in
//! SIMD lanes for the word-parallel fills, and a bit-exact replay of numpy's
//! `np.random.default_rng(seed)` (SeedSequence + PCG64) so the book chapter's numbers can be
//! reproduced exactly, not just statistically.
//!
//! Why two kinds: `numpy` exists only to match published results; it is slow (one 128-bit LCG
//! step per cell, strictly sequential). `xoshiro` is the default: one seed regenerates one cave
//! anywhere, and every random decision of a cave (fill, exact-count draws, corridor digging)
//! draws from the single [`CaveRng`] stream returned by [`cave_rng`], in a fixed order.

use std::fmt;
use std::str::FromStr;

use rand_core::{Infallible, Rng, SeedableRng, TryRng};

use crate::pcg64::{PCG_MULT, pcg_jump, pcg_output};
use crate::simd::Lane;

pub use rand_xoshiro::Xoshiro256PlusPlus;

/// The per-cave random stream: `Xoshiro256PlusPlus::seed_from_u64(seed)` (rand_xoshiro's
/// SplitMix64 seeding), so any tool with rand_xoshiro can regenerate a cave from its seed.
pub type CaveRng = Xoshiro256PlusPlus;

/// The stream of cave `seed`. Everything random in that cave draws from it.
#[inline]
pub fn cave_rng(seed: u64) -> CaveRng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// A uniform integer in `0..s` (`s > 0`) by Lemire's nearly-divisionless method: unbiased
/// (rejects the `2^64 mod s` low products), one `next_u64` per draw except with probability
/// `< s / 2^64`. Used by the exact-count fill and meant for any later bounded draw of a cave.
#[inline(always)]
pub fn uniform_below<R: Rng + ?Sized>(rng: &mut R, s: u64) -> u64 {
    debug_assert!(s > 0, "uniform_below needs a non-empty range");
    let mut m = (rng.next_u64() as u128) * (s as u128);
    if (m as u64) < s {
        let threshold = s.wrapping_neg() % s;
        while (m as u64) < threshold {
            m = (rng.next_u64() as u128) * (s as u128);
        }
    }
    (m >> 64) as u64
}

/// Which random source generates a cave's initial fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RngKind {
    /// The fast default: [`cave_rng`] (xoshiro256++), word-parallel fill.
    #[default]
    Xoshiro,
    /// Bit-exact numpy `default_rng(seed).random((rows, cols)) < p`, to reproduce the chapter.
    Numpy,
}

impl RngKind {
    /// All kinds, in the order they are listed in messages.
    pub const ALL: [RngKind; 2] = [RngKind::Xoshiro, RngKind::Numpy];

    /// The name used on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            RngKind::Xoshiro => "xoshiro",
            RngKind::Numpy => "numpy",
        }
    }
}

impl fmt::Display for RngKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An RNG name that is not one of [`RngKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown RNG kind {got:?}: expected one of \"xoshiro\", \"numpy\"")]
pub struct UnknownRngKind {
    /// The name given, as given (not trimmed).
    pub got: String,
}

impl FromStr for RngKind {
    type Err = UnknownRngKind;
    fn from_str(s: &str) -> Result<RngKind, UnknownRngKind> {
        RngKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownRngKind { got: s.to_string() })
    }
}

// ---------------------------------------------------------------------------------------------
// numpy replay
// ---------------------------------------------------------------------------------------------

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

#[inline]
fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

/// numpy's `SeedSequence` with the default pool size 4 and no spawn key: turns a seed into the
/// entropy pool from which `generate_state` derives generator seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL_SIZE],
}

impl SeedSequence {
    /// The sequence for an integer seed: the seed is split into 32-bit words, least significant
    /// first (`0 -> [0]`, `2^40 + 7 -> [7, 256]`), exactly as numpy does for Python ints.
    pub fn new(seed: u64) -> SeedSequence {
        let lo = seed as u32;
        let hi = (seed >> 32) as u32;
        if hi == 0 {
            SeedSequence::from_words(&[lo])
        } else {
            SeedSequence::from_words(&[lo, hi])
        }
    }

    /// The sequence for entropy already split into 32-bit words (least significant first, as
    /// numpy does for a big int). More than 4 words (seeds >= 2^128) are mixed in after the pool
    /// is built, as numpy's `mix_entropy` does.
    pub fn from_words(words: &[u32]) -> SeedSequence {
        let mut hc = INIT_A;
        // The hash constant carries over between calls within one pool build.
        let mut hashmix = |v: u32| {
            let mut v = v ^ hc;
            hc = hc.wrapping_mul(MULT_A);
            v = v.wrapping_mul(hc);
            v ^ (v >> XSHIFT)
        };
        let mut pool = [0u32; POOL_SIZE];
        for (i, p) in pool.iter_mut().enumerate() {
            *p = hashmix(words.get(i).copied().unwrap_or(0));
        }
        for src in 0..POOL_SIZE {
            for dst in 0..POOL_SIZE {
                if src != dst {
                    let h = hashmix(pool[src]);
                    pool[dst] = mix(pool[dst], h);
                }
            }
        }
        for &w in words.iter().skip(POOL_SIZE) {
            for p in pool.iter_mut() {
                let h = hashmix(w);
                *p = mix(*p, h);
            }
        }
        SeedSequence { pool }
    }

    /// The entropy pool (for tests and diagnostics).
    pub fn pool(&self) -> [u32; POOL_SIZE] {
        self.pool
    }

    /// numpy's `generate_state(out.len(), dtype=np.uint64)`: fills `out` without allocating.
    pub fn generate_state(&self, out: &mut [u64]) {
        let mut hb = INIT_B;
        let mut word = |i: usize| {
            let mut v = self.pool[i % POOL_SIZE] ^ hb;
            hb = hb.wrapping_mul(MULT_B);
            v = v.wrapping_mul(hb);
            v ^ (v >> XSHIFT)
        };
        for (k, o) in out.iter_mut().enumerate() {
            let lo = word(2 * k) as u64;
            let hi = word(2 * k + 1) as u64;
            *o = lo | (hi << 32);
        }
    }
}

/// The 128-bit `(initstate, initseq)` pair numpy's PCG64 is seeded with for `seed`
/// (`generate_state(4)`; the first word of each pair is the HIGH half).
pub fn numpy_pcg64_init(seed: u64) -> (u128, u128) {
    let mut g = [0u64; 4];
    SeedSequence::new(seed).generate_state(&mut g);
    let initstate = ((g[0] as u128) << 64) | g[1] as u128;
    let initseq = ((g[2] as u128) << 64) | g[3] as u128;
    (initstate, initseq)
}

/// `np.random.default_rng(seed)`, bit for bit: PCG64 (XSL-RR 128/64) seeded through
/// SeedSequence. Only what the fill needs: raw u64s, `random()` doubles, and the state (for the
/// fill's jump-ahead chains).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumpyRandom {
    state: u128,
    inc: u128,
}

impl NumpyRandom {
    /// The generator `np.random.default_rng(seed)` makes, in its initial state.
    pub fn new(seed: u64) -> NumpyRandom {
        let (initstate, initseq) = numpy_pcg64_init(seed);
        // numpy's `pcg_setseq_128_srandom_r`.
        let inc = (initseq << 1) | 1;
        let mut r = NumpyRandom { state: 0, inc };
        r.step();
        r.state = r.state.wrapping_add(initstate);
        r.step();
        r
    }

    #[inline(always)]
    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// numpy's `bit_generator.random_raw()`: step, then output the new state.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        pcg_output(self.state)
    }

    /// numpy's `Generator.random()`: 53 random bits scaled to [0, 1), one u64 per double.
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The generator's state and increment.
    pub fn state(&self) -> (u128, u128) {
        (self.state, self.inc)
    }

    /// Skip `k` draws.
    pub fn advance(&mut self, k: u64) {
        let (a, c) = pcg_jump(k, self.inc);
        self.state = self.state.wrapping_mul(a).wrapping_add(c);
    }
}

impl TryRng for NumpyRandom {
    type Error = Infallible;
    /// numpy's `next_uint32` buffers the other half of a u64; we do not need 32-bit draws from
    /// numpy, so this is simply the low half of a fresh u64 (NOT numpy-compatible).
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next_u64() as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// xoshiro256++ in vector lanes
// ---------------------------------------------------------------------------------------------

/// Generators the fills derive from a cave's stream (see [`slot_states`]).
pub const SLOTS: usize = 8;

/// SplitMix64's output finalizer: a bijection on u64 that decorrelates words drawn from one
/// xoshiro stream before they become another xoshiro state.
#[inline]
pub fn splitmix_finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The states of the [`SLOTS`] generators a fill runs, derived from the cave's stream: draws
/// exactly 32 words `w[0..32]` from `rng`; generator `g`'s state word `j` (rand_xoshiro's
/// order `s[0..4]`) is `splitmix_finalize(w[4 * g + j])`, and an all-zero state (xoshiro's fixed
/// point, probability 2^-256) becomes `[1, 0, 0, 0]`. Cheap (32 scalar steps) and a pure
/// function of the parent's state, hence of the cave seed.
pub fn slot_states<R: Rng + ?Sized>(rng: &mut R) -> [[u64; 4]; SLOTS] {
    let mut st = [[0u64; 4]; SLOTS];
    for g in st.iter_mut() {
        for w in g.iter_mut() {
            *w = splitmix_finalize(rng.next_u64());
        }
        if g.iter().all(|&w| w == 0) {
            g[0] = 1;
        }
    }
    st
}

/// Independent xoshiro256++ generators in the lanes of a [`Lane`] vector: one step yields one
/// output per lane for the price of one scalar step. Lane `i` computes exactly what a scalar
/// [`Xoshiro256PlusPlus`] with the same state computes (tested), so every lane is a
/// documented, reproducible stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneXoshiro<V: Lane> {
    /// `s[j]` holds state word `j` of every lane.
    pub s: [V; 4],
}

impl<V: Lane> LaneXoshiro<V> {
    /// Lane `i` gets state `states(i)` (`s[0..4]` in rand_xoshiro's order, not all zero).
    #[inline(always)]
    pub fn from_states(mut states: impl FnMut(usize) -> [u64; 4]) -> LaneXoshiro<V> {
        let mut s = [V::ZERO; 4];
        for i in 0..V::N {
            let st = states(i);
            for j in 0..4 {
                s[j].set(i, st[j]);
            }
        }
        LaneXoshiro { s }
    }

    /// The current state of lane `i`.
    pub fn lane_state(&self, i: usize) -> [u64; 4] {
        std::array::from_fn(|j| self.s[j].get(i))
    }

    /// One xoshiro256++ step in every lane; lane `i` of the result is lane `i`'s next output.
    /// (Not an `Iterator`: the stream never ends, and this must inline into each SIMD clone.)
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> V {
        let [s0, s1, s2, s3] = self.s;
        let result = s0.add(s3).rotl(23).add(s0);
        let t = s1.shl(17);
        let s2 = s2 ^ s0;
        let s3 = s3 ^ s1;
        let s1 = s1 ^ s2;
        let s0 = s0 ^ s3;
        let s2 = s2 ^ t;
        let s3 = s3.rotl(45);
        self.s = [s0, s1, s2, s3];
        result
    }
}

/// [`splitmix_finalize`] of every lane.
#[inline(always)]
fn splitmix_finalize_lanes<V: Lane>(z: V) -> V {
    let z = (z ^ z.shr(30)).mul(V::splat(0xbf58_476d_1ce4_e5b9));
    let z = (z ^ z.shr(27)).mul(V::splat(0x94d0_49bb_1331_11eb));
    z ^ z.shr(31)
}

/// `x != 0` per lane, as 1 or 0: the top bit of `x | -x`.
#[inline(always)]
fn nonzero_lanes<V: Lane>(x: V) -> V {
    (x | (!x).add(V::splat(1))).shr(63)
}

/// [`cave_rng`] then [`slot_states`] for `V::N` caves at once, one per lane, straight from
/// their seeds: slot generator `g`'s lane `k` is `slot_states(&mut cave_rng(seed(k)))[g]`, and
/// the returned stream's lane `k` is `cave_rng(seed(k))` after those 32 draws (what the cave's
/// later draws continue). The batched fill seeds its caves with this: done per cave, the 8
/// SplitMix64 steps, 32 xoshiro steps and 32 finalizers were 8% of the lane fill's samples
/// (`perf`, 90x140), and in lanes they cost one vector step for all the caves.
///
/// rand_xoshiro's `seed_from_u64` is SplitMix64 from `x = seed`: state word `j` is its output
/// `j + 1`. Those four outputs are never all zero (the finalizer is a bijection and the four
/// `x` differ), so its all-zero fallback never applies.
#[inline(always)]
pub fn lane_slots<V: Lane>(
    seed: impl FnMut(usize) -> u64,
) -> ([LaneXoshiro<V>; SLOTS], LaneXoshiro<V>) {
    const PHI: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut x = V::from_fn(seed);
    let mut cave = LaneXoshiro { s: [V::ZERO; 4] };
    for w in cave.s.iter_mut() {
        x = x.add(V::splat(PHI));
        *w = splitmix_finalize_lanes(x);
    }
    let mut gens = [LaneXoshiro { s: [V::ZERO; 4] }; SLOTS];
    for g in gens.iter_mut() {
        for w in g.s.iter_mut() {
            *w = splitmix_finalize_lanes(cave.next());
        }
        // slot_states's all-zero state becomes [1, 0, 0, 0], lane by lane.
        let any = g.s[0] | g.s[1] | g.s[2] | g.s[3];
        g.s[0] |= nonzero_lanes(any) ^ V::splat(1);
    }
    (gens, cave)
}

/// A scalar generator with state `st` (rand_xoshiro's word order).
pub fn xoshiro_from_state(st: [u64; 4]) -> Xoshiro256PlusPlus {
    let mut b = [0u8; 32];
    for (j, w) in st.iter().enumerate() {
        b[8 * j..8 * j + 8].copy_from_slice(&w.to_le_bytes());
    }
    Xoshiro256PlusPlus::from_seed(b)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A from-scratch PCG64 (numpy's `pcg_setseq_128`), sharing no code with [`NumpyRandom`],
    /// to check it and the spec's state/inc vectors.
    struct RefPcg {
        state: u128,
        inc: u128,
    }
    const PCG_MULT: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;
    impl RefPcg {
        fn seeded(initstate: u128, initseq: u128) -> RefPcg {
            let mut p = RefPcg {
                state: 0,
                inc: (initseq << 1) | 1,
            };
            p.step();
            p.state = p.state.wrapping_add(initstate);
            p.step();
            p
        }
        fn step(&mut self) {
            self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
        }
        fn next(&mut self) -> u64 {
            self.step();
            let x = ((self.state >> 64) as u64) ^ (self.state as u64);
            x.rotate_right((self.state >> 122) as u32)
        }
    }

    #[test]
    fn rng_kind_parse_and_display() {
        for k in RngKind::ALL {
            assert_eq!(k.to_string().parse::<RngKind>().unwrap(), k);
        }
        assert_eq!("numpy".parse::<RngKind>().unwrap(), RngKind::Numpy);
        let e = "pcg".parse::<RngKind>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("\"pcg\"") && msg.contains("xoshiro") && msg.contains("numpy"),
            "{msg}"
        );
    }

    #[test]
    fn seed_words_split() {
        // 2^40 + 7 must be the two words [7, 256]; one word [x] differs from [x, 0].
        let two = SeedSequence::new((1u64 << 40) + 7);
        assert_eq!(two, SeedSequence::from_words(&[7, 256]));
        assert_ne!(two, SeedSequence::from_words(&[7]));
        assert_eq!(SeedSequence::new(42), SeedSequence::from_words(&[42]));
        assert_eq!(SeedSequence::new(0), SeedSequence::from_words(&[0]));
    }

    #[test]
    fn five_word_entropy_matches_numpy() {
        // Vector from numpy 2.4.6: SeedSequence(2**130 + 5), i.e. words [5, 0, 0, 0, 4]; checks
        // the mixing of words beyond the pool size.
        let ss = SeedSequence::from_words(&[5, 0, 0, 0, 4]);
        assert_eq!(ss.pool(), [0xeadb24d1, 0xc54ff8fe, 0x5c769898, 0xff10252b]);
        let mut g = [0u64; 2];
        ss.generate_state(&mut g);
        assert_eq!(g, [0x79f03193e6187234, 0x79e6bfc4e432e6cf]);
    }

    /// Replays a fixed list of u64s.
    struct Scripted(Vec<u64>);
    impl TryRng for Scripted {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            Ok(self.0.remove(0) as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            Ok(self.0.remove(0))
        }
        fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Infallible> {
            unimplemented!()
        }
    }

    #[test]
    fn uniform_below_rejects_and_scales() {
        // s = 3: 2^64 mod 3 = 1, so only a low product of 0 is rejected. x = 0 -> rejected;
        // x = 2^63 -> 3 * 2^63 = 1 * 2^64 + 2^63 -> 1.
        let mut r = Scripted(vec![0, 1 << 63]);
        assert_eq!(uniform_below(&mut r, 3), 1);
        assert!(r.0.is_empty());
        // x = u64::MAX -> high word s - 1.
        assert_eq!(uniform_below(&mut Scripted(vec![u64::MAX]), 1000), 999);
        // Frequencies for a small range.
        let mut rng = cave_rng(8);
        let mut hist = [0u32; 7];
        for _ in 0..70_000 {
            hist[uniform_below(&mut rng, 7) as usize] += 1;
        }
        let chi2: f64 = hist
            .iter()
            .map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi2 < 6.0 + 8.0 * 12f64.sqrt(), "{hist:?}");
    }

    #[test]
    fn seed0_pool_vector() {
        assert_eq!(
            SeedSequence::new(0).pool(),
            [0xfe40eb07, 0x4f363a36, 0x4eb2009d, 0xc89a7aa7]
        );
    }

    #[test]
    fn seed42_generate_state_vector() {
        let mut g = [0u64; 4];
        SeedSequence::new(42).generate_state(&mut g);
        assert_eq!(
            g,
            [
                0x9f1e2e6dcd540ab7,
                0xd57873dc79fb94b6,
                0x7d282a1b64d420b7,
                0x336579714692d5ff
            ]
        );
        // A shorter request is a prefix (numpy draws words in order).
        let mut g2 = [0u64; 2];
        SeedSequence::new(42).generate_state(&mut g2);
        assert_eq!(g2, [g[0], g[1]]);
    }

    #[test]
    fn seed42_pcg_state_vector() {
        let (initstate, initseq) = numpy_pcg64_init(42);
        let r = RefPcg::seeded(initstate, initseq);
        assert_eq!(r.state, 0xcea44f6798798f2aacbc7c9d68860ac8);
        assert_eq!(r.inc, 0xfa505436c9a8416e66caf2e28d25abff);
    }

    #[test]
    fn seed42_first_outputs_vector() {
        let raw = [
            0xc621fbcd16d92688u64,
            0x705a5661a791ffc1,
            0xdbcd12c26eda1624,
        ];
        let mut n = NumpyRandom::new(42);
        let (s, q) = numpy_pcg64_init(42);
        let mut r = RefPcg::seeded(s, q);
        for &x in &raw {
            assert_eq!(n.next_u64(), x);
            assert_eq!(r.next(), x);
        }
        let mut n = NumpyRandom::new(42);
        for d in [0.7739560485559633, 0.4388784397520523, 0.8585979199113825] {
            assert_eq!(n.next_f64(), d);
        }
    }

    #[test]
    fn jump_ahead_equals_stepping() {
        let mut a = NumpyRandom::new(7);
        let mut b = a.clone();
        for k in [0u64, 1, 2, 3, 8, 1000, 12599] {
            for _ in 0..k {
                a.next_u64();
            }
            b.advance(k);
            assert_eq!(a, b, "k {k}");
        }
    }

    #[test]
    fn numpy_random_matches_rand_pcg() {
        // A third implementation (rand_pcg's Lcg128Xsl64 takes numpy's raw seeding inputs).
        for seed in [0u64, 42, u64::MAX] {
            let (s, q) = numpy_pcg64_init(seed);
            let mut r = rand_pcg::Lcg128Xsl64::new(s, q);
            let mut n = NumpyRandom::new(seed);
            for _ in 0..100 {
                assert_eq!(n.next_u64(), r.next_u64(), "seed {seed}");
            }
        }
    }

    #[test]
    fn numpy_random_matches_reference_pcg() {
        for seed in [0u64, 1, 7, 12345, u64::MAX, (1 << 40) + 7] {
            let (s, q) = numpy_pcg64_init(seed);
            let mut r = RefPcg::seeded(s, q);
            let mut n = NumpyRandom::new(seed);
            for _ in 0..1000 {
                assert_eq!(n.next_u64(), r.next(), "seed {seed}");
            }
        }
    }

    /// docs/numpy-rng.md's check values: walls in `default_rng(seed).random((90, 140)) < 0.45`.
    pub(crate) const NUMPY_WALLS_90X140: [(u64, u64); 5] = [
        (0, 5667),
        (1, 5625),
        (42, 5710),
        (12345, 5754),
        ((1 << 40) + 7, 5701),
    ];

    #[test]
    fn numpy_wall_count_vectors() {
        // The plain definition: count doubles u < 0.45 over a 90x140 C-order draw.
        for (seed, walls) in NUMPY_WALLS_90X140 {
            let mut n = NumpyRandom::new(seed);
            let got = (0..90 * 140).filter(|_| n.next_f64() < 0.45).count() as u64;
            assert_eq!(got, walls, "seed {seed}");
        }
    }

    #[test]
    fn cave_rng_is_seed_from_u64() {
        let mut a = cave_rng(99);
        let mut b = Xoshiro256PlusPlus::seed_from_u64(99);
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    /// An independent transcription of the documented seeding, from the published algorithms
    /// (Vigna's SplitMix64 and xoshiro256++ reference C code), sharing no code with the crate:
    /// `cave_rng(seed)` = xoshiro256++ whose state words are the first four SplitMix64 outputs
    /// from `x = seed`; `slot_states` = 32 draws of that stream, each through SplitMix64's
    /// finalizer.
    mod transcription {
        pub const PHI: u64 = 0x9e37_79b9_7f4a_7c15;
        pub fn splitmix_next(x: &mut u64) -> u64 {
            *x = x.wrapping_add(PHI);
            finalize(*x)
        }
        pub fn finalize(z: u64) -> u64 {
            let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        pub struct Xo(pub [u64; 4]);
        impl Xo {
            pub fn seeded(seed: u64) -> Xo {
                let mut x = seed;
                Xo([(); 4].map(|_| splitmix_next(&mut x)))
            }
            /// `next()` of xoshiro256plusplus.c, line by line.
            pub fn next(&mut self) -> u64 {
                let s = &mut self.0;
                let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
                let t = s[1] << 17;
                s[2] ^= s[0];
                s[3] ^= s[1];
                s[1] ^= s[2];
                s[0] ^= s[3];
                s[2] ^= t;
                s[3] = s[3].rotate_left(45);
                result
            }
        }
    }

    #[test]
    fn seeding_matches_an_independent_transcription() {
        use transcription::*;
        for seed in [0u64, 1, 42, 0xdead_beef, u64::MAX] {
            let mut ours = cave_rng(seed);
            let mut theirs = Xo::seeded(seed);
            for _ in 0..100 {
                assert_eq!(ours.next_u64(), theirs.next(), "seed {seed}");
            }
            let slots = slot_states(&mut cave_rng(seed));
            let mut parent = Xo::seeded(seed);
            for (g, st) in slots.iter().enumerate() {
                for (j, &w) in st.iter().enumerate() {
                    assert_eq!(w, finalize(parent.next()), "seed {seed} slot {g} word {j}");
                }
            }
            // Each slot's stream is plain xoshiro256++ from that state.
            let mut lanes = LaneXoshiro::<u64>::from_states(|_| slots[3]);
            let mut scalar = Xo(slots[3]);
            for _ in 0..50 {
                assert_eq!(lanes.next(), scalar.next(), "seed {seed} slot 3");
            }
        }
        // A worked value: SplitMix64's first output from x = 0 (Vigna's splitmix64.c).
        assert_eq!(splitmix_next(&mut 0u64), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn slot_states_draw_32_words() {
        let mut parent = cave_rng(5);
        let mut copy = parent.clone();
        let st = slot_states(&mut parent);
        for _ in 0..32 {
            copy.next_u64();
        }
        assert_eq!(parent, copy);
        // Lane generators equal rand_xoshiro's scalar generator from the same state, in every
        // vector width.
        fn check<V: Lane>(st: &[[u64; 4]; SLOTS]) {
            let mut v = LaneXoshiro::<V>::from_states(|i| st[i]);
            let mut s: Vec<Xoshiro256PlusPlus> =
                (0..V::N).map(|i| xoshiro_from_state(st[i])).collect();
            for _ in 0..200 {
                let out = v.next();
                for (i, r) in s.iter_mut().enumerate() {
                    assert_eq!(out.get(i), r.next_u64());
                }
            }
            for (i, r) in s.iter().enumerate() {
                assert_eq!(xoshiro_from_state(v.lane_state(i)), *r);
            }
        }
        check::<u64>(&st);
        for simd in crate::simd::Simd::available() {
            crate::simd_run!(simd, <I> (st: &'a [[u64; 4]; SLOTS] = &st) -> () {
                check::<I::Lanes>(st);
                check::<I::Row>(st);
            });
        }
    }

    /// `lane_slots` is `cave_rng` + `slot_states` lane by lane, on every SIMD path and lane
    /// width, for random seeds and the edge seeds; the returned stream continues each cave's.
    #[test]
    fn lane_slots_match_slot_states() {
        fn check<V: Lane>(seeds: &[u64]) {
            for chunk in seeds.chunks(V::N) {
                let seed = |k: usize| chunk[k.min(chunk.len() - 1)];
                let (gens, cave) = lane_slots::<V>(seed);
                for k in 0..V::N {
                    let mut rng = cave_rng(seed(k));
                    let want = slot_states(&mut rng);
                    for (g, st) in want.iter().enumerate() {
                        assert_eq!(gens[g].lane_state(k), *st, "seed {} slot {g}", seed(k));
                    }
                    assert_eq!(
                        xoshiro_from_state(cave.lane_state(k)),
                        rng,
                        "seed {}",
                        seed(k)
                    );
                }
            }
        }
        let mut seeds = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 0x9e37_79b9_7f4a_7c15];
        let mut x = 12345u64;
        seeds.extend((0..200).map(|_| transcription::splitmix_next(&mut x)));
        check::<u64>(&seeds);
        for simd in crate::simd::Simd::available() {
            crate::simd_run!(simd, <I> (seeds: &'a [u64] = &seeds) -> () {
                check::<I::Lanes>(seeds);
                check::<I::Row>(seeds);
            });
        }
        // The all-zero guard: 1 exactly where a lane is zero.
        for x in [0u64, 1, 2, 1 << 63, !0, 0x8000_0001] {
            assert_eq!(nonzero_lanes(x), (x != 0) as u64, "{x:x}");
        }
    }
}
