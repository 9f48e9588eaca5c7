//! PCG64's arithmetic (numpy's XSL-RR 128/64 generator): the multiplier, the output
//! function and the jump-ahead of `k` steps. A leaf module: the scalar stream
//! ([`crate::rng::NumpyRandom`]), the fill's chains ([`crate::fill`]) and the SIMD kernels
//! ([`crate::simd::PcgKernel`]) all build on it, so none of them imports another for it.

/// PCG64's multiplier (numpy's `PCG_DEFAULT_MULTIPLIER_128`).
pub const PCG_MULT: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

/// PCG64's output function (XSL-RR): the XOR of the state's halves, rotated right by its top
/// six bits.
#[inline(always)]
pub fn pcg_output(state: u128) -> u64 {
    let hi = (state >> 64) as u64;
    (hi ^ state as u64).rotate_right((hi >> 58) as u32)
}

/// The affine map `s -> a s + c` (mod 2^128) of `k` PCG steps with increment `inc`: lets `k`
/// interleaved chains each jump `k` draws at a time (Brown's jump-ahead, by doubling).
pub fn pcg_jump(k: u64, inc: u128) -> (u128, u128) {
    let (mut a, mut c) = (1u128, 0u128); // the map so far
    let (mut ma, mut mc) = (PCG_MULT, inc); // the map of 2^i steps
    let mut k = k;
    while k != 0 {
        if k & 1 == 1 {
            a = a.wrapping_mul(ma);
            c = c.wrapping_mul(ma).wrapping_add(mc);
        }
        mc = mc.wrapping_mul(ma).wrapping_add(mc);
        ma = ma.wrapping_mul(ma);
        k >>= 1;
    }
    (a, c)
}
