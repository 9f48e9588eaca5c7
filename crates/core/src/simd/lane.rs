//! The vector types every kernel is written in: `N` independent 64-bit words (`u64`, `W1` ..
//! `W8`), each word a lane.
//!
//! Why not `wide`: it fixes its representation at compile time with `cfg(target_feature)`, so a
//! kernel compiled inside an AVX2 or AVX-512 [`target_feature`](super) clone of a baseline build
//! would still run `wide`'s SSE2 code. And why not plain `[u64; N]` loops: measured, LLVM's SLP
//! vectoriser handles them in small loops but packs the kernels' arrays of arrays into chains of
//! shuffles (the row step ran 3.7x slower than with vector types). So `W2`, `W4` and `W8` wrap
//! `__m128i`, `__m256i` and `__m512i` and use `std::arch` intrinsics; LLVM still fuses their
//! logic into `vpternlogq` and their cross-word shifts into `vpshldq` where the clone has
//! AVX-512 (VBMI2), and lowers the per-word popcount to `vpopcntq` or the `vpshufb` table.
//!
//! A `W4` may only be used inside a clone with AVX2, a `W8` inside one with AVX-512 (the
//! intrinsics are those instructions): kernels never name them, they use the [`super::Isa`]'s
//! `Lanes` and `Row` types, which only name what the clone has. `W1` is a plain word and `W2`
//! is SSE2, part of x86-64.
//!
//! Every method is `#[inline(always)]`: a kernel only gets its clone's instructions if all of it
//! is inlined into the clone's entry point (see [`super::Task`]).

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// `N` independent 64-bit words treated as `64 * N` one-bit cells, or as `N` lanes.
///
/// # Safety
/// Implementors are laid out exactly as `[u64; N]` (size `8 * N`, alignment at most 64, every
/// bit pattern valid): batches reinterpret buffers of [`W8`] as any lane type.
pub unsafe trait Lane:
    Copy
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + PartialEq
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
    + 'static
{
    /// Number of 64-bit words.
    const N: usize;
    /// Whether any function of three vectors is one instruction (`vpternlogq`, the AVX-512
    /// `W8`): the kernels then prefer forms such as [`Lane::maj`] that need it, and otherwise
    /// forms that share intermediate results.
    const TERNLOG: bool = false;
    /// Every bit 0 (all FLOOR).
    const ZERO: Self;
    /// Every bit 1 (all WALL; `!ZERO`).
    const ONES: Self;
    /// Every word `x`.
    fn splat(x: u64) -> Self;
    /// Build from words (`f(i)` is word `i`).
    fn from_fn(f: impl FnMut(usize) -> u64) -> Self;
    /// Word `i`.
    fn get(&self, i: usize) -> u64;
    /// Set word `i`.
    fn set(&mut self, i: usize, v: u64);
    /// The words as a slice.
    fn words(&self) -> &[u64];
    /// Shift every word left by `n < 64` (towards higher columns).
    fn shl(self, n: u32) -> Self;
    /// Shift every word right by `n < 64` (towards lower columns).
    fn shr(self, n: u32) -> Self;
    /// Rotate every word left by `0 < r < 64`.
    fn rotl(self, r: u32) -> Self;
    /// Wrapping add, word by word.
    fn add(self, o: Self) -> Self;
    /// Is any bit set?
    fn any(self) -> bool;
    /// Per-word population count.
    fn popcnt(self) -> Self;
    /// Bitwise majority of `self`, `b`, `c`: 4 ops, one `vpternlogq` where the vector has it
    /// (the AVX-512 `W8`; LLVM does not fuse the 4-op form into one by itself).
    #[inline(always)]
    fn maj(self, b: Self, c: Self) -> Self {
        (self & b) | (c & (self | b))
    }
    /// `self + o + carry` word by word, and the carry out of each word (`carry` and the carry
    /// out are 0 or 1 per word): the link of a multi-word addition chained across the words of
    /// a row. Vectors have no carry flag, so the carry out is the majority of the top bits of
    /// `self`, `o` and the carry into bit 63 (`self ^ o ^ sum`): `maj(self, o, !sum) >> 63`.
    /// A plain `u64` overrides it with the flag (`adc`).
    #[inline(always)]
    fn add_carry(self, o: Self, carry: Self) -> (Self, Self) {
        let t = self.add(o).add(carry);
        (t, self.maj(o, !t).shr(63))
    }
    /// Reverse the bits of every word (bit `j` to bit `63 - j`): the measuring floods fill
    /// runs downward as an upward fill of the mirrored row.
    fn reverse_bits(self) -> Self;
    /// `N` words from `s[o..o + N]` (unaligned).
    fn load(s: &[u64], o: usize) -> Self;
    /// Store into `s[o..o + N]` (unaligned).
    fn store(self, s: &mut [u64], o: usize);
    /// `N` words from `p` (unaligned), no bounds check.
    ///
    /// # Safety
    /// `p .. p + N` must be readable.
    unsafe fn read(p: *const u64) -> Self;
    /// Store `N` words at `p` (unaligned), no bounds check.
    ///
    /// # Safety
    /// `p .. p + N` must be writable.
    unsafe fn write(self, p: *mut u64);
    /// Write lane `k` of the four vectors, `[v[0].get(k), .., v[3].get(k)]`, to
    /// `dst[k] .. dst[k] + 4` for every `k < n` (`n <= N`): a 4 x N transpose, how a batch of
    /// caves in lanes is copied out to grids whose rows are 4 words long. The `W4` and `W8`
    /// implementations transpose in registers (8 shuffles) and store one 32-byte row per lane;
    /// the default stores word by word.
    ///
    /// # Safety
    /// `dst[k] .. dst[k] + 4` must be writable for every `k < n`, and not overlap each other.
    #[inline(always)]
    unsafe fn write_lanes4(v: [Self; 4], dst: &[*mut u64; 8], n: usize) {
        debug_assert!(n <= Self::N);
        for (k, &p) in dst.iter().enumerate().take(n) {
            for (j, w) in v.iter().enumerate() {
                // Volatile only to keep LLVM from turning the copy into `vpscatterqq`, which
                // measured several times slower than plain stores here.
                // SAFETY: the caller's guarantee.
                unsafe { p.add(j).write_volatile(w.words()[k]) };
            }
        }
    }
    /// Wrapping product, word by word: `vpmullq` where the clone has AVX-512DQ, LLVM's
    /// 32-bit-multiply emulation elsewhere. Only the fills' seeding uses it (SplitMix64's
    /// finalizer, a few dozen per cave), so it is written once here, per word.
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self::from_fn(|i| self.get(i).wrapping_mul(o.get(i)))
    }
    /// Sum of the words (wrapping).
    #[inline(always)]
    fn sum(self) -> u64 {
        self.words().iter().fold(0u64, |a, &w| a.wrapping_add(w))
    }
}

/// A plain word is a one-lane vector too (scalar code and tests).
// SAFETY: a `u64` is one word: size 8, alignment 8, every bit pattern valid.
unsafe impl Lane for u64 {
    const N: usize = 1;
    const ZERO: u64 = 0;
    const ONES: u64 = !0;
    #[inline(always)]
    fn splat(x: u64) -> u64 {
        x
    }
    #[inline(always)]
    fn from_fn(mut f: impl FnMut(usize) -> u64) -> u64 {
        f(0)
    }
    #[inline(always)]
    fn get(&self, _: usize) -> u64 {
        *self
    }
    #[inline(always)]
    fn set(&mut self, _: usize, v: u64) {
        *self = v;
    }
    #[inline(always)]
    fn words(&self) -> &[u64] {
        std::slice::from_ref(self)
    }
    #[inline(always)]
    fn shl(self, n: u32) -> u64 {
        self << n
    }
    #[inline(always)]
    fn shr(self, n: u32) -> u64 {
        self >> n
    }
    #[inline(always)]
    fn rotl(self, n: u32) -> u64 {
        self.rotate_left(n)
    }
    #[inline(always)]
    fn add(self, o: u64) -> u64 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn add_carry(self, o: u64, carry: u64) -> (u64, u64) {
        let (a, c1) = self.overflowing_add(o);
        let (b, c2) = a.overflowing_add(carry);
        (b, (c1 | c2) as u64)
    }
    #[inline(always)]
    fn any(self) -> bool {
        self != 0
    }
    #[inline(always)]
    fn popcnt(self) -> u64 {
        self.count_ones() as u64
    }
    #[inline(always)]
    fn reverse_bits(self) -> u64 {
        u64::reverse_bits(self)
    }
    #[inline(always)]
    fn load(s: &[u64], o: usize) -> u64 {
        s[o]
    }
    #[inline(always)]
    fn store(self, s: &mut [u64], o: usize) {
        s[o] = self;
    }
    #[inline(always)]
    unsafe fn read(p: *const u64) -> u64 {
        // SAFETY: the caller guarantees a readable word.
        unsafe { std::ptr::read_unaligned(p) }
    }
    #[inline(always)]
    unsafe fn write(self, p: *mut u64) {
        // SAFETY: the caller guarantees a writable word.
        unsafe { std::ptr::write_unaligned(p, self) }
    }
}

/// One word: the scalar path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct W1(pub u64);

macro_rules! word_ops {
    ($name:ident) => {
        impl BitAnd for $name {
            type Output = $name;
            #[inline(always)]
            fn bitand(self, o: $name) -> $name {
                $name(self.0 & o.0)
            }
        }
        impl BitOr for $name {
            type Output = $name;
            #[inline(always)]
            fn bitor(self, o: $name) -> $name {
                $name(self.0 | o.0)
            }
        }
        impl BitXor for $name {
            type Output = $name;
            #[inline(always)]
            fn bitxor(self, o: $name) -> $name {
                $name(self.0 ^ o.0)
            }
        }
        impl Not for $name {
            type Output = $name;
            #[inline(always)]
            fn not(self) -> $name {
                $name(!self.0)
            }
        }
        impl BitAndAssign for $name {
            #[inline(always)]
            fn bitand_assign(&mut self, o: $name) {
                *self = *self & o;
            }
        }
        impl BitOrAssign for $name {
            #[inline(always)]
            fn bitor_assign(&mut self, o: $name) {
                *self = *self | o;
            }
        }
        impl BitXorAssign for $name {
            #[inline(always)]
            fn bitxor_assign(&mut self, o: $name) {
                *self = *self ^ o;
            }
        }
    };
}
word_ops!(W1);

// SAFETY: `repr(transparent)` over one `u64`.
unsafe impl Lane for W1 {
    const N: usize = 1;
    const ZERO: W1 = W1(0);
    const ONES: W1 = W1(!0);
    #[inline(always)]
    fn splat(x: u64) -> W1 {
        W1(x)
    }
    #[inline(always)]
    fn from_fn(mut f: impl FnMut(usize) -> u64) -> W1 {
        W1(f(0))
    }
    #[inline(always)]
    fn get(&self, _: usize) -> u64 {
        self.0
    }
    #[inline(always)]
    fn set(&mut self, _: usize, v: u64) {
        self.0 = v;
    }
    #[inline(always)]
    fn words(&self) -> &[u64] {
        std::slice::from_ref(&self.0)
    }
    #[inline(always)]
    fn shl(self, n: u32) -> W1 {
        W1(self.0 << n)
    }
    #[inline(always)]
    fn shr(self, n: u32) -> W1 {
        W1(self.0 >> n)
    }
    #[inline(always)]
    fn rotl(self, n: u32) -> W1 {
        W1(self.0.rotate_left(n))
    }
    #[inline(always)]
    fn add(self, o: W1) -> W1 {
        W1(self.0.wrapping_add(o.0))
    }
    #[inline(always)]
    fn any(self) -> bool {
        self.0 != 0
    }
    #[inline(always)]
    fn popcnt(self) -> W1 {
        W1(self.0.count_ones() as u64)
    }
    #[inline(always)]
    fn reverse_bits(self) -> W1 {
        W1(self.0.reverse_bits())
    }
    #[inline(always)]
    fn load(s: &[u64], o: usize) -> W1 {
        W1(s[o])
    }
    #[inline(always)]
    fn store(self, s: &mut [u64], o: usize) {
        s[o] = self.0;
    }
    #[inline(always)]
    unsafe fn read(p: *const u64) -> W1 {
        // SAFETY: the caller guarantees a readable word.
        W1(unsafe { std::ptr::read_unaligned(p) })
    }
    #[inline(always)]
    unsafe fn write(self, p: *mut u64) {
        // SAFETY: the caller guarantees a writable word.
        unsafe { std::ptr::write_unaligned(p, self.0) }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! `W2`/`W4`/`W8` on `std::arch` vectors.
    use super::Lane;
    use std::arch::x86_64::*;
    use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

    macro_rules! vector_lane {
        (
            $(#[$m:meta])* $name:ident, $n:literal, $t:ty,
            and = $and:ident, or = $or:ident, xor = $xor:ident, add = $add:ident,
            sll = $sll:ident, srl = $srl:ident,
            loadu = $loadu:ident, storeu = $storeu:ident, any = $any:ident, maj = $maj:ident
            $(, write_lanes4 = $wl4:ident)?
        ) => {
            $(#[$m])*
            #[derive(Clone, Copy)]
            #[repr(transparent)]
            pub struct $name(pub $t);

            impl $name {
                #[inline(always)]
                fn arr(self) -> [u64; $n] {
                    // SAFETY: a vector of 8 N bytes is N words; every bit pattern is valid.
                    unsafe { std::mem::transmute::<$t, [u64; $n]>(self.0) }
                }
                #[inline(always)]
                fn of(a: [u64; $n]) -> $name {
                    // SAFETY: as for `arr`.
                    $name(unsafe { std::mem::transmute::<[u64; $n], $t>(a) })
                }
            }

            impl Default for $name {
                fn default() -> $name {
                    $name::of([0; $n])
                }
            }
            impl PartialEq for $name {
                fn eq(&self, o: &$name) -> bool {
                    self.arr() == o.arr()
                }
            }
            impl std::fmt::Debug for $name {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    write!(f, "{}({:x?})", stringify!($name), self.arr())
                }
            }
            // SAFETY (all intrinsic calls below): a `$name` only exists inside code that runs
            // on a CPU with its instructions (see the module docs); the callers are clones
            // whose features include them, or baseline code for SSE2.
            impl BitAnd for $name {
                type Output = $name;
                #[inline(always)]
                fn bitand(self, o: $name) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $and(self.0, o.0) })
                }
            }
            impl BitOr for $name {
                type Output = $name;
                #[inline(always)]
                fn bitor(self, o: $name) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $or(self.0, o.0) })
                }
            }
            impl BitXor for $name {
                type Output = $name;
                #[inline(always)]
                fn bitxor(self, o: $name) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $xor(self.0, o.0) })
                }
            }
            impl Not for $name {
                type Output = $name;
                #[inline(always)]
                fn not(self) -> $name {
                    self ^ $name::ONES
                }
            }
            impl BitAndAssign for $name {
                #[inline(always)]
                fn bitand_assign(&mut self, o: $name) {
                    *self = *self & o;
                }
            }
            impl BitOrAssign for $name {
                #[inline(always)]
                fn bitor_assign(&mut self, o: $name) {
                    *self = *self | o;
                }
            }
            impl BitXorAssign for $name {
                #[inline(always)]
                fn bitxor_assign(&mut self, o: $name) {
                    *self = *self ^ o;
                }
            }

            // SAFETY: `repr(transparent)` over a vector of `N` words: size 8 N, alignment
            // 16/32/64, every bit pattern valid.
            unsafe impl Lane for $name {
                const N: usize = $n;
                // Only the `__m512i` vector has eight words, and it lives in AVX-512 clones.
                const TERNLOG: bool = $n == 8;
                // SAFETY: `$t` is `$n` plain words; every bit pattern is valid.
                const ZERO: $name = $name(unsafe { std::mem::transmute::<[u64; $n], $t>([0; $n]) });
                // SAFETY: `$t` is `$n` plain words; every bit pattern is valid.
                const ONES: $name = $name(unsafe { std::mem::transmute::<[u64; $n], $t>([!0; $n]) });
                #[inline(always)]
                fn splat(x: u64) -> $name {
                    $name::of([x; $n])
                }
                #[inline(always)]
                fn from_fn(f: impl FnMut(usize) -> u64) -> $name {
                    $name::of(std::array::from_fn(f))
                }
                #[inline(always)]
                fn get(&self, i: usize) -> u64 {
                    self.words()[i]
                }
                #[inline(always)]
                fn set(&mut self, i: usize, v: u64) {
                    let mut a = self.arr();
                    a[i] = v;
                    *self = $name::of(a);
                }
                #[inline(always)]
                fn words(&self) -> &[u64] {
                    // SAFETY: the vector is N contiguous words.
                    unsafe { std::slice::from_raw_parts(self as *const $name as *const u64, $n) }
                }
                #[inline(always)]
                fn shl(self, n: u32) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $sll(self.0, _mm_cvtsi32_si128(n as i32)) })
                }
                #[inline(always)]
                fn shr(self, n: u32) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $srl(self.0, _mm_cvtsi32_si128(n as i32)) })
                }
                #[inline(always)]
                fn rotl(self, n: u32) -> $name {
                    self.shl(n) | self.shr(64 - n)
                }
                #[inline(always)]
                fn add(self, o: $name) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $add(self.0, o.0) })
                }
                #[inline(always)]
                fn any(self) -> bool {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    unsafe { $any(self.0) }
                }
                #[inline(always)]
                fn maj(self, b: $name, c: $name) -> $name {
                    // SAFETY: a `$name` only runs on a CPU with its instructions (note above `BitAnd`).
                    $name(unsafe { $maj(self.0, b.0, c.0) })
                }
                #[inline(always)]
                fn popcnt(self) -> $name {
                    // Word by word: LLVM lowers this to `vpopcntq` or the nibble table.
                    let mut a = self.arr();
                    for w in a.iter_mut() {
                        *w = w.count_ones() as u64;
                    }
                    $name::of(a)
                }
                #[inline(always)]
                fn reverse_bits(self) -> $name {
                    // Word by word: LLVM lowers this to `vgf2p8affineqb` + a byte shuffle with
                    // GFNI, to the `vpshufb` nibble table with AVX2.
                    let mut a = self.arr();
                    for w in a.iter_mut() {
                        *w = w.reverse_bits();
                    }
                    $name::of(a)
                }
                #[inline(always)]
                fn load(s: &[u64], o: usize) -> $name {
                    assert!(o + $n <= s.len());
                    // SAFETY: in bounds, as asserted.
                    unsafe { $name::read(s.as_ptr().add(o)) }
                }
                #[inline(always)]
                fn store(self, s: &mut [u64], o: usize) {
                    assert!(o + $n <= s.len());
                    // SAFETY: in bounds, as asserted.
                    unsafe { self.write(s.as_mut_ptr().add(o)) }
                }
                #[inline(always)]
                unsafe fn read(p: *const u64) -> $name {
                    // SAFETY: the caller guarantees N readable words.
                    $name(unsafe { $loadu(p as *const _) })
                }
                #[inline(always)]
                unsafe fn write(self, p: *mut u64) {
                    // SAFETY: the caller guarantees N writable words.
                    unsafe { $storeu(p as *mut _, self.0) }
                }
                $(
                #[inline(always)]
                unsafe fn write_lanes4(v: [$name; 4], dst: &[*mut u64; 8], n: usize) {
                    // SAFETY: the caller's guarantee.
                    unsafe { $wl4(v.map(|x| x.0), dst, n) }
                }
                )?
            }
        };
    }

    vector_lane!(
        /// Two words: one SSE2 register (x86-64 baseline).
        W2, 2, __m128i,
        and = _mm_and_si128, or = _mm_or_si128, xor = _mm_xor_si128, add = _mm_add_epi64,
        sll = _mm_sll_epi64, srl = _mm_srl_epi64,
        loadu = _mm_loadu_si128, storeu = _mm_storeu_si128, any = any128, maj = maj128
    );
    vector_lane!(
        /// Four words: one AVX2 register.
        W4, 4, __m256i,
        and = _mm256_and_si256, or = _mm256_or_si256, xor = _mm256_xor_si256,
        add = _mm256_add_epi64, sll = _mm256_sll_epi64, srl = _mm256_srl_epi64,
        loadu = _mm256_loadu_si256, storeu = _mm256_storeu_si256, any = any256, maj = maj256,
        write_lanes4 = write_lanes4_256
    );
    vector_lane!(
        /// Eight words: one AVX-512 register.
        W8, 8, __m512i,
        and = _mm512_and_si512, or = _mm512_or_si512, xor = _mm512_xor_si512,
        add = _mm512_add_epi64, sll = _mm512_sll_epi64, srl = _mm512_srl_epi64,
        loadu = _mm512_loadu_si512, storeu = _mm512_storeu_si512, any = any512, maj = maj512,
        write_lanes4 = write_lanes4_512
    );

    /// [`Lane::write_lanes4`] for `W4`: the 4 x 4 transpose (4 `vpunpck*qdq`, 4 `vperm2i128`),
    /// then one 32-byte store per lane.
    ///
    /// # Safety
    /// As [`Lane::write_lanes4`]; only called for W4, which lives in AVX2 clones.
    #[inline(always)]
    unsafe fn write_lanes4_256(v: [__m256i; 4], dst: &[*mut u64; 8], n: usize) {
        // SAFETY: AVX2 (the clone), and the caller's guarantee for the stores.
        unsafe {
            let [a, b, c, d] = v;
            let ab0 = _mm256_unpacklo_epi64(a, b); // a0 b0 a2 b2
            let ab1 = _mm256_unpackhi_epi64(a, b); // a1 b1 a3 b3
            let cd0 = _mm256_unpacklo_epi64(c, d);
            let cd1 = _mm256_unpackhi_epi64(c, d);
            let rows = [
                _mm256_permute2x128_si256::<0x20>(ab0, cd0),
                _mm256_permute2x128_si256::<0x20>(ab1, cd1),
                _mm256_permute2x128_si256::<0x31>(ab0, cd0),
                _mm256_permute2x128_si256::<0x31>(ab1, cd1),
            ];
            for (&r, &p) in rows.iter().zip(dst).take(n) {
                _mm256_storeu_si256(p as *mut __m256i, r);
            }
        }
    }

    /// [`Lane::write_lanes4`] for `W8`: 4 `vpunpck*qdq` pair the words of lanes `2i`/`2i + 1`,
    /// 4 `vpermt2q` put two lanes' rows in each vector, then one 32-byte store per lane (the
    /// upper halves through `vextracti64x4`).
    ///
    /// # Safety
    /// As [`Lane::write_lanes4`]; only called for W8, which lives in AVX-512 clones.
    #[inline(always)]
    unsafe fn write_lanes4_512(v: [__m512i; 4], dst: &[*mut u64; 8], n: usize) {
        // SAFETY: AVX-512F (the clone), and the caller's guarantee for the stores.
        unsafe {
            let [a, b, c, d] = v;
            let ab0 = _mm512_unpacklo_epi64(a, b); // a0 b0 | a2 b2 | a4 b4 | a6 b6
            let ab1 = _mm512_unpackhi_epi64(a, b); // a1 b1 | a3 b3 | a5 b5 | a7 b7
            let cd0 = _mm512_unpacklo_epi64(c, d);
            let cd1 = _mm512_unpackhi_epi64(c, d);
            let lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
            let hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
            let r02 = _mm512_permutex2var_epi64(ab0, lo, cd0); // rows of lanes 0 and 2
            let r13 = _mm512_permutex2var_epi64(ab1, lo, cd1);
            let r46 = _mm512_permutex2var_epi64(ab0, hi, cd0);
            let r57 = _mm512_permutex2var_epi64(ab1, hi, cd1);
            let rows = [
                _mm512_castsi512_si256(r02),
                _mm512_castsi512_si256(r13),
                _mm512_extracti64x4_epi64::<1>(r02),
                _mm512_extracti64x4_epi64::<1>(r13),
                _mm512_castsi512_si256(r46),
                _mm512_castsi512_si256(r57),
                _mm512_extracti64x4_epi64::<1>(r46),
                _mm512_extracti64x4_epi64::<1>(r57),
            ];
            if n == 8 {
                for (&r, &p) in rows.iter().zip(dst) {
                    _mm256_storeu_si256(p as *mut __m256i, r);
                }
            } else {
                for (&r, &p) in rows.iter().zip(dst).take(n) {
                    _mm256_storeu_si256(p as *mut __m256i, r);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn maj128(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_or_si128(_mm_and_si128(a, b), _mm_and_si128(c, _mm_or_si128(a, b))) }
    }
    #[inline(always)]
    unsafe fn maj256(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
        // SAFETY: only called for W4, which lives in AVX2 clones.
        unsafe {
            _mm256_or_si256(
                _mm256_and_si256(a, b),
                _mm256_and_si256(c, _mm256_or_si256(a, b)),
            )
        }
    }
    #[inline(always)]
    unsafe fn maj512(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
        // SAFETY: only called for W8, which lives in AVX-512 clones. 0xe8 is the majority
        // truth table (bit `4a + 2b + c` set iff at least two of a, b, c are).
        unsafe { _mm512_ternarylogic_epi64::<0xe8>(a, b, c) }
    }
    #[inline(always)]
    unsafe fn any128(v: __m128i) -> bool {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) != 0xffff }
    }
    #[inline(always)]
    unsafe fn any256(v: __m256i) -> bool {
        // SAFETY: only called for W4, which lives in AVX2 clones.
        unsafe { _mm256_testz_si256(v, v) == 0 }
    }
    #[inline(always)]
    unsafe fn any512(v: __m512i) -> bool {
        // SAFETY: only called for W8, which lives in AVX-512 clones.
        unsafe { _mm512_test_epi64_mask(v, v) != 0 }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod portable {
    //! `W2`/`W4`/`W8` as plain word arrays where there is no x86 SIMD (the clones are then
    //! all baseline code).
    use super::Lane;
    use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

    macro_rules! array_lane {
        ($name:ident, $n:literal) => {
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
            #[repr(C, align(64))]
            pub struct $name(pub [u64; $n]);
            impl BitAnd for $name {
                type Output = $name;
                fn bitand(self, o: $name) -> $name {
                    $name(std::array::from_fn(|i| self.0[i] & o.0[i]))
                }
            }
            impl BitOr for $name {
                type Output = $name;
                fn bitor(self, o: $name) -> $name {
                    $name(std::array::from_fn(|i| self.0[i] | o.0[i]))
                }
            }
            impl BitXor for $name {
                type Output = $name;
                fn bitxor(self, o: $name) -> $name {
                    $name(std::array::from_fn(|i| self.0[i] ^ o.0[i]))
                }
            }
            impl Not for $name {
                type Output = $name;
                fn not(self) -> $name {
                    $name(self.0.map(|w| !w))
                }
            }
            impl BitAndAssign for $name {
                fn bitand_assign(&mut self, o: $name) {
                    *self = *self & o;
                }
            }
            impl BitOrAssign for $name {
                fn bitor_assign(&mut self, o: $name) {
                    *self = *self | o;
                }
            }
            impl BitXorAssign for $name {
                fn bitxor_assign(&mut self, o: $name) {
                    *self = *self ^ o;
                }
            }
            // SAFETY: `repr(C)` over `[u64; N]`, alignment 64.
            unsafe impl Lane for $name {
                const N: usize = $n;
                const ZERO: $name = $name([0; $n]);
                const ONES: $name = $name([!0; $n]);
                fn splat(x: u64) -> $name {
                    $name([x; $n])
                }
                fn from_fn(f: impl FnMut(usize) -> u64) -> $name {
                    $name(std::array::from_fn(f))
                }
                fn get(&self, i: usize) -> u64 {
                    self.0[i]
                }
                fn set(&mut self, i: usize, v: u64) {
                    self.0[i] = v;
                }
                fn words(&self) -> &[u64] {
                    &self.0
                }
                fn shl(self, n: u32) -> $name {
                    $name(self.0.map(|w| w << n))
                }
                fn shr(self, n: u32) -> $name {
                    $name(self.0.map(|w| w >> n))
                }
                fn rotl(self, n: u32) -> $name {
                    $name(self.0.map(|w| w.rotate_left(n)))
                }
                fn add(self, o: $name) -> $name {
                    $name(std::array::from_fn(|i| self.0[i].wrapping_add(o.0[i])))
                }
                fn any(self) -> bool {
                    self.0.iter().any(|&w| w != 0)
                }
                fn popcnt(self) -> $name {
                    $name(self.0.map(|w| w.count_ones() as u64))
                }
                fn reverse_bits(self) -> $name {
                    $name(self.0.map(u64::reverse_bits))
                }
                fn load(s: &[u64], o: usize) -> $name {
                    $name(s[o..o + $n].try_into().expect("N words"))
                }
                fn store(self, s: &mut [u64], o: usize) {
                    s[o..o + $n].copy_from_slice(&self.0);
                }
                unsafe fn read(p: *const u64) -> $name {
                    // SAFETY: the caller guarantees N readable words.
                    $name(unsafe { std::ptr::read_unaligned(p as *const [u64; $n]) })
                }
                unsafe fn write(self, p: *mut u64) {
                    // SAFETY: the caller guarantees N writable words.
                    unsafe { std::ptr::write_unaligned(p as *mut [u64; $n], self.0) }
                }
            }
        };
    }
    array_lane!(W2, 2);
    array_lane!(W4, 4);
    array_lane!(W8, 8);
}

#[cfg(not(target_arch = "x86_64"))]
pub use portable::{W2, W4, W8};

#[cfg(target_arch = "x86_64")]
pub use x86::{W2, W4, W8};

#[cfg(test)]
mod tests {
    use super::*;

    fn check<V: Lane>() {
        let a = V::from_fn(|i| 0x8000_0000_0000_0001u64.rotate_left(i as u32 * 7));
        let b = V::from_fn(|i| (i as u64 + 3) * 0x0123_4567_89ab_cdef);
        for i in 0..V::N {
            let (x, y) = (a.get(i), b.get(i));
            assert_eq!((a & b).get(i), x & y);
            assert_eq!((a | b).get(i), x | y);
            assert_eq!((a ^ b).get(i), x ^ y);
            assert_eq!((!a).get(i), !x);
            assert_eq!(a.shl(5).get(i), x << 5);
            assert_eq!(a.shr(63).get(i), x >> 63);
            assert_eq!(a.rotl(23).get(i), x.rotate_left(23));
            assert_eq!(a.add(b).get(i), x.wrapping_add(y));
            assert_eq!(b.popcnt().get(i), y.count_ones() as u64);
            let z = x.rotate_left(17) ^ y;
            let c = V::from_fn(|j| a.get(j).rotate_left(17) ^ b.get(j));
            assert_eq!(a.maj(b, c).get(i), (x & y) | (x & z) | (y & z));
            // The carry chain's link, against 128-bit arithmetic, with carries in of 0 and 1
            // and the edge words (a carry out of all-ones plus a carry in).
            for (p, q) in [(x, y), (!0, 0), (!0, !0), (1 << 63, 1 << 63), (0, 0)] {
                for cin in [0u64, 1] {
                    let (pv, qv) = (V::splat(p), V::splat(q));
                    let (t, c) = pv.add_carry(qv, V::splat(cin));
                    let want = p as u128 + q as u128 + cin as u128;
                    assert_eq!((t.get(i), c.get(i)), (want as u64, (want >> 64) as u64));
                }
            }
            assert_eq!(b.reverse_bits().get(i), y.reverse_bits());
        }
        assert!(a.any() && !V::ZERO.any() && V::ONES.any());
        let mut s = vec![0u64; V::N + 3];
        b.store(&mut s, 2);
        assert_eq!(V::load(&s, 2), b);
        // SAFETY: s has N + 3 words.
        unsafe {
            assert_eq!(V::read(s.as_ptr().add(2)), b);
            a.write(s.as_mut_ptr().add(1));
        }
        assert_eq!(V::load(&s, 1), a);
        assert_eq!(
            b.popcnt().sum(),
            (0..V::N).map(|i| b.get(i).count_ones() as u64).sum::<u64>()
        );
        assert_eq!(V::splat(9).words(), &vec![9u64; V::N][..]);
    }

    #[test]
    fn lane_ops_are_word_wise() {
        check::<u64>();
        check::<W1>();
        check::<W2>();
        for simd in crate::simd::Simd::available() {
            crate::simd_run!(simd, <I> () -> () {
                check::<I::Lanes>();
                check::<I::Row>();
            });
        }
    }
}
