//! PCG64 (numpy's bit generator) in vector lanes: the kernels behind the numpy replay fill
//! ([`crate::fill::fill_numpy_with`]).
//!
//! **What they compute.** Draw `i` of a numpy stream is `pcg_output(S_{i+1})` with
//! `S_{k+1} = M S_k + inc (mod 2^128)`, and the fill's cell `i` is WALL iff that draw is
//! `< t` (`t = threshold << 11`, see the fill). A kernel runs `CH` *chains*, chain `j` producing
//! draws `j, j + CH, j + 2 CH, ...` by the jump-ahead map `s -> A s + C` of `CH` steps
//! ([`crate::pcg64::pcg_jump`]); the chains of one step give `CH` consecutive cells, so the
//! compare masks of a step are directly the bits of the packed words (cell `64 w + b` is bit
//! `b` of word `w`), with no shuffling. Every kernel writes exactly the bits the sequential
//! stream gives (tested against [`crate::rng::NumpyRandom`] on every kernel the CPU runs).
//!
//! **Why lanes.** The scalar chains cost three 64-bit multiplies per cell (`mulx` + 2 `imul`,
//! one port), ~3 cycles per cell at best. The 128-bit product `A s mod 2^128` splits into
//! limb products that vector multipliers do 8 lanes at a time:
//! - [`PcgKernel::Ifma`] (AVX-512 IFMA, `vpmadd52luq`/`vpmadd52huq`): the state in three 52-bit
//!   limbs `s = s0 + s1 2^52 + s2 2^104`; the product mod 2^128 is 9 multiply-adds, which
//!   accumulate onto the increment's limbs for free (see `ifma::step`). Carries are left in the
//!   limbs (IFMA reads only the low 52 bits of each multiplicand) and resolved only where the
//!   output needs them. XSL-RR is a shift/add/xor, one `vprorvq`, and the compare
//!   `vpcmpuq` lands in a mask register: 22 vector ops per 8 cells.
//! - [`PcgKernel::Avx512`] / [`PcgKernel::Avx2`] (no IFMA): the state as two 64-bit halves and
//!   the product from 32-bit limbs with `vpmuludq` (10 partial products, see `limb32::step`).
//!
//! The kernels are compiled in their own `#[target_feature]` functions (IFMA is not part of
//! any [`super::Isa`] clone) and chosen per CPU by [`PcgKernel::for_path`].
//!
//! **Where the IFMA kernel stands.** 22 vector ops per 8 cells (plus a `kmovb`), and on Intel
//! 512-bit ops issue on two ports only: ~11.5 cycles per step, which is what it measures
//! (7.9 us per 90x140 cave at 2.3 GHz, against 19.4 us for the scalar chains). Tried and not
//! better: 1, 2 or 8 vectors of chains instead of 4 (8 spills registers), storing each
//! compare mask as a byte instead of assembling words in a register.
//!
//! **The AVX2 kernel, tried and not better:** scalar chains beside the vector chains in the
//! same loop, so the scalar multiplier would work while the vector ones do (2 vectors of 4
//! chains + 8 scalar, 3 + 4, 4 + 16; AMD Zen 3, 2026-12-02). No consistent gain over 4 vectors
//! alone: one scalar cell costs ~20 instructions (3 multiplies, the 128-bit adds, XSL-RR, the
//! compare, register moves) against ~12 vector ops per cell, and the loop is bound by how many
//! instructions issue per cycle, not by the multipliers.

use crate::pcg64::{PCG_MULT, pcg_jump};

use super::Path;

/// A PCG64 fill kernel (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PcgKernel {
    /// Scalar 128-bit chains (in [`crate::fill`]): the oracle-shaped path, any CPU.
    Scalar,
    /// 32-bit limbs in 4 AVX2 lanes.
    Avx2,
    /// 32-bit limbs in 8 AVX-512 lanes (AVX-512 without IFMA).
    Avx512,
    /// 52-bit limbs in 8 AVX-512 IFMA lanes.
    Ifma,
}

impl PcgKernel {
    /// Every kernel, simplest first.
    pub const ALL: [PcgKernel; 4] = [
        PcgKernel::Scalar,
        PcgKernel::Avx2,
        PcgKernel::Avx512,
        PcgKernel::Ifma,
    ];

    /// The kernel's name in reports and benchmarks: `scalar`, `avx2`, `avx512`, `avx512-ifma`.
    pub fn name(self) -> &'static str {
        match self {
            PcgKernel::Scalar => "scalar",
            PcgKernel::Avx2 => "avx2",
            PcgKernel::Avx512 => "avx512",
            PcgKernel::Ifma => "avx512-ifma",
        }
    }

    /// Whether this CPU runs the kernel.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                PcgKernel::Scalar => true,
                PcgKernel::Avx2 => has!("avx2"),
                PcgKernel::Avx512 => has!("avx512f") && has!("avx512vl"),
                PcgKernel::Ifma => has!("avx512f") && has!("avx512vl") && has!("avx512ifma"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == PcgKernel::Scalar
        }
    }

    /// The kernels this CPU runs (what the tests check against the oracle).
    pub fn available() -> Vec<PcgKernel> {
        PcgKernel::ALL
            .into_iter()
            .filter(|k| k.supported())
            .collect()
    }

    /// The kernel production uses on a SIMD path: the fastest one the path's features allow,
    /// as measured per 90x140 cave (`CAVESWEEP_SIMD=avx2 cargo run --release --example
    /// gen_stages numpy`, thread CPU time, min/median, Sapphire Rapids at 2.3 GHz): IFMA
    /// 7.9 us, AVX-512 32-bit limbs 12.7 us, and in the AVX2 clone scalar chains 19.4/19.9 us
    /// against AVX2 32-bit limbs 19.7/20.1 us on a quiet core. A tie there, but with the
    /// other core's hyperthread busy (six runs) the scalar chains' medians were 30-39 us and
    /// the AVX2 kernel's 27-29 us (it leaves the scalar multiplier alone), so AVX2 gets it.
    pub fn for_path(path: Path) -> PcgKernel {
        let k = match path {
            Path::Avx512 | Path::Avx512Vbmi2 if PcgKernel::Ifma.supported() => PcgKernel::Ifma,
            Path::Avx512 | Path::Avx512Vbmi2 => PcgKernel::Avx512,
            Path::Avx2 | Path::Avx2SlowPdep => PcgKernel::Avx2,
            Path::Sse2 | Path::Scalar => PcgKernel::Scalar,
        };
        if k.supported() { k } else { PcgKernel::Scalar }
    }

    /// Write the cells of draws `0 .. 64 * words.len()` of the stream whose state is `state`
    /// (draw 0 comes from the next step) into `words`: bit `b` of `words[w]` is WALL iff draw
    /// `64 w + b` is `< t`. Draws past the grid's cells are computed too; the caller masks them.
    /// Returns `false` (writing nothing) for [`PcgKernel::Scalar`], which the fill runs inline
    /// in its SIMD clone. Panics if the CPU lacks the kernel's features.
    pub fn fill_words(self, words: &mut [u64], state: u128, inc: u128, t: u64) -> bool {
        assert!(self.supported(), "PCG kernel {} not supported", self.name());
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY (each arm): `supported()` checked the kernel's CPU features just above.
            match self {
                PcgKernel::Scalar => return false,
                // SAFETY: `supported()` checked this kernel's CPU features just above.
                PcgKernel::Ifma => unsafe { ifma::fill::<4>(words, state, inc, t) },
                // SAFETY: `supported()` checked this kernel's CPU features just above.
                PcgKernel::Avx512 => unsafe { limb32::fill_avx512(words, state, inc, t) },
                // SAFETY: `supported()` checked this kernel's CPU features just above.
                PcgKernel::Avx2 => unsafe { limb32::fill_avx2(words, state, inc, t) },
            }
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (words, state, inc, t);
            false
        }
    }
}

/// The multiplicative inverse of an odd `a` modulo 2^128 (Newton's iteration: each round
/// doubles the number of correct low bits, starting from 3 since `a a = 1 mod 8`).
fn inverse(a: u128) -> u128 {
    debug_assert!(a & 1 == 1);
    let mut x = a;
    for _ in 0..6 {
        x = x.wrapping_mul(2u128.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// Starting states of `out.len()` chains that jump `(a, c)` per step: chain `j` holds the
/// state one jump *before* `S_{j+1}` (the state producing draw `j`), so each loop round of a
/// kernel steps first and outputs the new state (which lets the output reuse the step's
/// unnormalized limbs).
fn chain_starts(out: &mut [u128], state: u128, inc: u128, a: u128, c: u128) {
    let ai = inverse(a);
    let mut s = state;
    for o in out.iter_mut() {
        s = s.wrapping_mul(PCG_MULT).wrapping_add(inc);
        *o = s.wrapping_sub(c).wrapping_mul(ai);
    }
}

#[cfg(target_arch = "x86_64")]
mod ifma {
    use std::arch::x86_64::*;

    use super::{chain_starts, pcg_jump};

    const M52: u64 = (1 << 52) - 1;

    /// The three 52-bit limbs of `x` (the top one holds bits 104..127).
    fn limbs(x: u128) -> [u64; 3] {
        [x as u64 & M52, (x >> 52) as u64 & M52, (x >> 104) as u64]
    }

    /// One step of 8 chains in 52-bit limbs and the new state's output compare.
    ///
    /// `s = s0 + s1 2^52 + s2 2^104` where only the low 52 bits of `s0`, `s1` and the low 24
    /// of `s2` count (IFMA ignores the high bits of its multiplicands; `s2`'s bits past 24 are
    /// past 2^128). `A s + C mod 2^128` by limb (`lo`/`hi`: the low/high 52 bits of a 104-bit
    /// product, what `vpmadd52luq`/`vpmadd52huq` add):
    /// - `t0 = c0 + lo(s0 a0)` (limb 0 plus its carry at bit 52),
    /// - `t1 = c1 + hi(s0 a0) + lo(s0 a1) + lo(s1 a0)` (limb 1 before limb 0's carry),
    /// - `t2 = c2 + hi(s0 a1) + hi(s1 a0) + lo(s0 a2) + lo(s1 a1) + lo(s2 a0)` (limb 2).
    ///
    /// With `n1 = t1 + (t0 >> 52)` and `n2 = t2 + (n1 >> 52)` the new state is `(t0, n1, n2)`,
    /// and its 64-bit halves are `lo = t0 + (t1 << 52)` and `hi = (n1 >> 12) + (t2 << 40)`
    /// (mod 2^64: the carries are counted once, by the half that holds their bit). Ops: 9
    /// multiply-adds, 4 shifts and 2 adds for the state; 4 shifts, 3 adds, xor, `vprorvq` and
    /// the compare for the output.
    #[inline(always)]
    fn step(s: &mut [__m512i; 3], a: &[__m512i; 3], c: &[__m512i; 3], t: __m512i) -> __mmask8 {
        // SAFETY: only inlined into `fill`, which has the features (avx512f + avx512ifma).
        unsafe {
            let [x0, x1, x2] = *s;
            let t0 = _mm512_madd52lo_epu64(c[0], x0, a[0]);
            let mut t1 = _mm512_madd52hi_epu64(c[1], x0, a[0]);
            t1 = _mm512_madd52lo_epu64(t1, x0, a[1]);
            t1 = _mm512_madd52lo_epu64(t1, x1, a[0]);
            let mut t2 = _mm512_madd52hi_epu64(c[2], x0, a[1]);
            t2 = _mm512_madd52hi_epu64(t2, x1, a[0]);
            t2 = _mm512_madd52lo_epu64(t2, x0, a[2]);
            t2 = _mm512_madd52lo_epu64(t2, x1, a[1]);
            t2 = _mm512_madd52lo_epu64(t2, x2, a[0]);
            let lo = _mm512_add_epi64(t0, _mm512_slli_epi64::<52>(t1));
            let n1 = _mm512_add_epi64(t1, _mm512_srli_epi64::<52>(t0));
            let hi = _mm512_add_epi64(_mm512_srli_epi64::<12>(n1), _mm512_slli_epi64::<40>(t2));
            let n2 = _mm512_add_epi64(t2, _mm512_srli_epi64::<52>(n1));
            *s = [t0, n1, n2];
            let x = _mm512_xor_si512(hi, lo);
            let out = _mm512_rorv_epi64(x, _mm512_srli_epi64::<58>(hi));
            _mm512_cmplt_epu64_mask(out, t)
        }
    }

    /// `V` vectors of 8 chains (`8 V` chains, `V` in 1, 2, 4, 8): `64 / (8 V)` steps per word.
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    pub(super) fn fill<const V: usize>(words: &mut [u64], state: u128, inc: u128, t: u64) {
        let ch = 8 * V;
        assert!(64 % ch == 0);
        let per = 64 / ch;
        let (a, c) = pcg_jump(ch as u64, inc);
        let mut starts = [0u128; 64];
        chain_starts(&mut starts[..ch], state, inc, a, c);
        let (la, lc) = (limbs(a), limbs(c));
        let mut av = [_mm512_setzero_si512(); 3];
        let mut cv = av;
        for k in 0..3 {
            av[k] = _mm512_set1_epi64(la[k] as i64);
            cv[k] = _mm512_set1_epi64(lc[k] as i64);
        }
        let tv = _mm512_set1_epi64(t as i64);
        let mut s = [[_mm512_setzero_si512(); 3]; V];
        for (v, sv) in s.iter_mut().enumerate() {
            for (k, limb) in sv.iter_mut().enumerate() {
                let l: [u64; 8] = std::array::from_fn(|i| limbs(starts[8 * v + i])[k]);
                // SAFETY: reads the 8 words of `l`.
                *limb = unsafe { _mm512_loadu_si512(l.as_ptr().cast()) };
            }
        }
        for w in words.iter_mut() {
            let mut word = 0u64;
            for k in 0..per {
                for (v, sv) in s.iter_mut().enumerate() {
                    let m = step(sv, &av, &cv, tv);
                    word |= (m as u64) << (8 * (V * k + v));
                }
            }
            *w = word;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod limb32 {
    use std::arch::x86_64::*;

    use super::{chain_starts, pcg_jump};

    /// The few vector operations the 32-bit-limb step needs, for `__m256i` (AVX2) and
    /// `__m512i` (AVX-512F). Implementations are only used inside their `#[target_feature]`
    /// entry points below.
    trait V64: Copy {
        /// Lanes (chains per vector).
        const L: usize;
        fn splat(x: u64) -> Self;
        fn from_slice(x: &[u64]) -> Self;
        fn add(self, o: Self) -> Self;
        fn and(self, o: Self) -> Self;
        /// `vpmuludq`: the low 32 bits of each lane times the other's, 64-bit products.
        fn mul32(self, o: Self) -> Self;
        fn shr32(self) -> Self;
        fn shl32(self) -> Self;
        /// Low 32 bits of each lane from `self`, high 32 from `hi`.
        fn blend_hi(self, hi: Self) -> Self;
        /// `L` bits: lane `i` is set iff `rotr(hi ^ lo, hi >> 58) < t`.
        fn xsl_rr_below(hi: Self, lo: Self, t: u64) -> u64;
    }

    impl V64 for __m256i {
        const L: usize = 4;
        // SAFETY (every method): only called from `fill_avx2`, compiled with AVX2.
        #[inline(always)]
        fn splat(x: u64) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_set1_epi64x(x as i64) }
        }
        #[inline(always)]
        fn from_slice(x: &[u64]) -> Self {
            assert!(x.len() >= 4);
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_add_epi64(self, o) }
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_and_si256(self, o) }
        }
        #[inline(always)]
        fn mul32(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_mul_epu32(self, o) }
        }
        #[inline(always)]
        fn shr32(self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_srli_epi64::<32>(self) }
        }
        #[inline(always)]
        fn shl32(self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_slli_epi64::<32>(self) }
        }
        #[inline(always)]
        fn blend_hi(self, hi: Self) -> Self {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe { _mm256_blend_epi32::<0b1010_1010>(self, hi) }
        }
        #[inline(always)]
        fn xsl_rr_below(hi: Self, lo: Self, t: u64) -> u64 {
            // SAFETY: only called from `fill_avx2`, compiled with AVX2.
            unsafe {
                let x = _mm256_xor_si256(hi, lo);
                let r = _mm256_srli_epi64::<58>(hi);
                let rl = _mm256_sub_epi64(_mm256_set1_epi64x(64), r);
                // A count of 64 shifts everything out, so r = 0 needs no special case.
                let out = _mm256_or_si256(_mm256_srlv_epi64(x, r), _mm256_sllv_epi64(x, rl));
                // Unsigned `out < t` as a signed compare with both sign bits flipped.
                let bias = _mm256_set1_epi64x(i64::MIN);
                let lt = _mm256_cmpgt_epi64(
                    _mm256_set1_epi64x((t ^ (1 << 63)) as i64),
                    _mm256_xor_si256(out, bias),
                );
                _mm256_movemask_pd(_mm256_castsi256_pd(lt)) as u64
            }
        }
    }

    impl V64 for __m512i {
        const L: usize = 8;
        // SAFETY (every method): only called from `fill_avx512`, compiled with AVX-512F.
        #[inline(always)]
        fn splat(x: u64) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_set1_epi64(x as i64) }
        }
        #[inline(always)]
        fn from_slice(x: &[u64]) -> Self {
            assert!(x.len() >= 8);
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_add_epi64(self, o) }
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_and_si512(self, o) }
        }
        #[inline(always)]
        fn mul32(self, o: Self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_mul_epu32(self, o) }
        }
        #[inline(always)]
        fn shr32(self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_srli_epi64::<32>(self) }
        }
        #[inline(always)]
        fn shl32(self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_slli_epi64::<32>(self) }
        }
        #[inline(always)]
        fn blend_hi(self, hi: Self) -> Self {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe { _mm512_mask_blend_epi32(0xaaaa, self, hi) }
        }
        #[inline(always)]
        fn xsl_rr_below(hi: Self, lo: Self, t: u64) -> u64 {
            // SAFETY: only called from `fill_avx512`, compiled with AVX-512F.
            unsafe {
                let x = _mm512_xor_si512(hi, lo);
                let out = _mm512_rorv_epi64(x, _mm512_srli_epi64::<58>(hi));
                _mm512_cmplt_epu64_mask(out, _mm512_set1_epi64(t as i64)) as u64
            }
        }
    }

    /// The jump map's constants split for the step: `a[k]` is 32-bit limb `k` of `A`, `cl0`,
    /// `cl1` the 32-bit halves of `C`'s low word, `ch` its high word.
    #[derive(Clone, Copy)]
    struct Consts<W> {
        a: [W; 4],
        cl0: W,
        cl1: W,
        ch: W,
        m32: W,
    }

    /// One step `s -> A s + C (mod 2^128)` of `L` chains, the state as 64-bit halves
    /// `(lo, hi)` with 32-bit limbs `s0 s1 | s2 s3`. With `pij = si * aj` (`vpmuludq`):
    /// `lo*A_lo = p00 + (p01 + p10) 2^32 + p11 2^64`; adding `C_lo` limb by limb, `t0 = p00 mod
    /// 2^32 + C_lo mod 2^32` and `mid = p00 >> 32 + t0 >> 32 + p01 mod 2^32 + p10 mod 2^32 +
    /// C_lo >> 32` give the new low half `t0 mod 2^32 | mid << 32` and its carry `mid >> 32`.
    /// The new high half is `p11 + p01 >> 32 + p10 >> 32 + mid >> 32 + s0 a2 + s2 a0 +
    /// (s0 a3 + s1 a2 + s2 a1 + s3 a0) << 32 + C_hi`. 10 multiplies, 38 ops.
    #[inline(always)]
    fn step<W: V64>(lo: W, hi: W, k: &Consts<W>) -> (W, W) {
        let [a0, a1, a2, a3] = k.a;
        let s1 = lo.shr32();
        let s3 = hi.shr32();
        let p00 = lo.mul32(a0);
        let p01 = lo.mul32(a1);
        let p10 = s1.mul32(a0);
        let p11 = s1.mul32(a1);
        let q = lo
            .mul32(a3)
            .add(s1.mul32(a2))
            .add(hi.mul32(a1).add(s3.mul32(a0)));
        let e = lo.mul32(a2).add(hi.mul32(a0));
        let t0 = p00.and(k.m32).add(k.cl0);
        let mid = p00
            .shr32()
            .add(t0.shr32())
            .add(p01.and(k.m32).add(p10.and(k.m32)))
            .add(k.cl1);
        let nlo = t0.blend_hi(mid.shl32());
        let nhi = p11
            .add(p01.shr32())
            .add(p10.shr32().add(mid.shr32()))
            .add(e.add(k.ch))
            .add(q.shl32());
        (nlo, nhi)
    }

    /// `V` vectors of `W::L` chains; `64 / (L V)` steps per word.
    #[inline(always)]
    fn fill<W: V64, const V: usize>(words: &mut [u64], state: u128, inc: u128, t: u64) {
        let ch = W::L * V;
        assert!(64 % ch == 0);
        let per = 64 / ch;
        let (a, c) = pcg_jump(ch as u64, inc);
        let mut starts = [0u128; 64];
        chain_starts(&mut starts[..ch], state, inc, a, c);
        let k = Consts {
            a: [0, 32, 64, 96].map(|sh| W::splat((a >> sh) as u64 & 0xffff_ffff)),
            cl0: W::splat(c as u64 & 0xffff_ffff),
            cl1: W::splat((c as u64) >> 32),
            ch: W::splat((c >> 64) as u64),
            m32: W::splat(0xffff_ffff),
        };
        let lanes = |v: usize, half: u32| {
            let x: [u64; 8] = std::array::from_fn(|i| {
                starts.get(W::L * v + i).map_or(0, |&s| (s >> half) as u64)
            });
            W::from_slice(&x)
        };
        let mut lo: [W; V] = std::array::from_fn(|v| lanes(v, 0));
        let mut hi: [W; V] = std::array::from_fn(|v| lanes(v, 64));
        for w in words.iter_mut() {
            let mut word = 0u64;
            for j in 0..per {
                for v in 0..V {
                    let (l, h) = step(lo[v], hi[v], &k);
                    (lo[v], hi[v]) = (l, h);
                    word |= W::xsl_rr_below(h, l, t) << (W::L * (V * j + v));
                }
            }
            *w = word;
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn fill_avx2(words: &mut [u64], state: u128, inc: u128, t: u64) {
        fill::<__m256i, 4>(words, state, inc, t)
    }

    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn fill_avx512(words: &mut [u64], state: u128, inc: u128, t: u64) {
        fill::<__m512i, 4>(words, state, inc, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::NumpyRandom;

    #[test]
    fn inverse_inverts() {
        for a in [1u128, 3, PCG_MULT, u128::MAX, 0x1234_5678_9abc_def1] {
            assert_eq!(a.wrapping_mul(inverse(a)), 1, "{a:#x}");
        }
    }

    /// Every kernel the CPU runs against the sequential stream, bit by bit, on several
    /// streams, thresholds and word counts.
    #[test]
    fn kernels_match_the_sequential_stream() {
        let mut words = vec![0u64; 40];
        for kernel in PcgKernel::available() {
            for (seed, p) in [
                (0u64, 0.45),
                (42, 0.5),
                (7, 0.0),
                (u64::MAX, 0.999),
                (9, 1e-3),
            ] {
                let t = ((p * (1u64 << 53) as f64).ceil() as u64) << 11;
                let mut rng = NumpyRandom::new(seed);
                rng.advance(seed % 97);
                for n in [1usize, 2, 5, 40] {
                    let (state, inc) = rng.state();
                    if !kernel.fill_words(&mut words[..n], state, inc, t) {
                        continue;
                    }
                    let mut r = rng.clone();
                    for (w, &word) in words[..n].iter().enumerate() {
                        for b in 0..64 {
                            let want = r.next_u64() < t;
                            assert_eq!(
                                (word >> b) & 1 == 1,
                                want,
                                "{} seed {seed} p {p} n {n} cell {}",
                                kernel.name(),
                                64 * w + b
                            );
                        }
                    }
                }
            }
        }
    }
}
