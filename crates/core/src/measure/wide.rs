//! The per-cave flood's row step for wide rows (more than 256 columns) in AVX-512 registers:
//! one call claims every floor run of a row that touches the claimed cells of the rows above
//! and below, eight words per `zmm`, instead of the word-by-word scalar chain of
//! [`super::components::fill_row`].
//!
//! Why it exists: on 1024x1024 classic-4-5 caves the spawn's flood took ~70% of the pipeline
//! (about 3,400 row visits of 16 words per cave), and the scalar row fill ran at ~10 cycles per
//! word against ~1.3 in the lane floods of small caves.
//!
//! A row is a `64 n`-bit number, word 0 lowest; rows are processed in chunks of 8 words.
//!
//! - **Upward fill** (each run from its lowest seed up): `f + seed` over the whole row, as in
//!   [`super::flood::fill_up`]. Each chunk adds its 8 words at once; the carries between words
//!   are resolved for up to 8 chunks (64 words) at a time with one scalar add ([`lookahead`]):
//!   `G` = words whose add overflowed, `P` = words now all ones (they pass a carry on); the
//!   words receiving a carry are `((G << 1 | cin) + P) ^ P`. So the chunks do not wait on each
//!   other's carries: only groups of 64 words do.
//! - **Downward fill** (each run from its highest seed down): the upward fill of the bit-reversed
//!   row, reversed back. A chunk reverses with two instructions: `vgf2p8affineqb` reverses the
//!   bits of each byte, `vpermb` the 64 bytes; the reversed row's chunks are the row's from the
//!   top down. The padding words of the last chunk (zero in both planes) become low zero words
//!   of the reversed row and carry nothing. Bitwise logic commutes with the reversal, so only
//!   the sum is reversed back.
//! - The two fills together are the whole runs holding a seed.
//!
//! Operations per chunk of 8 words (8-connected): candidates 6 loads, 2 ORs, 2 double shifts
//! (`vpshldq`/`vpshrdq`, the bits crossing words), 2 three-input logic ops; downward fill 3
//! reversals (2 ops each), add, 2 compares, masked add, 1 three-input op; upward fill the
//! same without reversals (the add done twice instead of stored); claim 1 OR, 1 `vpopcntq`,
//! 1 add, 1 masked store; plus ~8 scalar mask operations per group of chunks. About 35 vector
//! operations per 8 words, against ~15 scalar operations per word in the scalar row step
//! (with `pext`/`pdep` on one port).
//!
//! Only the `avx512-vbmi2` clone runs this (it needs VBMI for `vpermb`, VBMI2 for the double
//! shifts, VPOPCNTDQ and GFNI); [`super::components`] checks the path before calling, and the
//! tests check it against the scalar row step on random rows.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// `vgf2p8affineqb` with this matrix reverses the bits of every byte (output bit `i` is input
/// bit `7 - i`).
#[cfg(target_arch = "x86_64")]
const BYTE_BITS_REVERSED: i64 = 0x8040201008040201u64 as i64;

/// `vpermb` indices reversing the 64 bytes of a `zmm`.
#[cfg(target_arch = "x86_64")]
const BYTES_REVERSED: [u8; 64] = {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        a[i] = 63 - i as u8;
        i += 1;
    }
    a
};

/// The 512 bits of `x` in reverse order.
///
/// # Safety
/// Runs only on a CPU with AVX-512 VBMI and GFNI (the `avx512-vbmi2` clone).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn reverse(x: __m512i, idx: __m512i, bits: __m512i) -> __m512i {
    // SAFETY: the caller's guarantee.
    unsafe { _mm512_permutexvar_epi8(idx, _mm512_gf2p8affine_epi64_epi8::<0>(x, bits)) }
}

/// The carries of an addition of `kn <= 8` chunks (`8 kn` words): `g` has bit `i` set where
/// word `i`'s add overflowed, `p` where its sum is all ones (it passes a carry on), `cin` is
/// the carry (0 or 1) into word 0. Returns the words that receive a carry (add 1 to them) and the
/// carry out of the top word. A carry into word `i` comes from word `i - 1` overflowing or
/// passing one on, so the receiving words are `((g << 1 | cin) + p) ^ p`: the add runs each
/// carry through a block of all-ones words. `g` and `p` exclude each other (`a + b = 2^64 - 1`
/// does not overflow), so no word receives two carries.
#[inline(always)]
fn lookahead(g: u64, p: u64, cin: u32, kn: usize) -> (u64, u32) {
    let n = 8 * kn as u32;
    let t = ((g as u128) << 1 | cin as u128) + p as u128;
    let low = u64::MAX >> (64 - n);
    ((t as u64 ^ p) & low, (t >> n) as u32 & 1)
}

/// Words `8 c .. 8 c + 8` of the row starting at `p + at` that lie below `wpr` (the others 0).
///
/// # Safety
/// The unmasked words must be readable; runs only on a CPU with AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load(p: *const u64, at: usize, m: __mmask8) -> __m512i {
    // SAFETY: the caller's guarantee; masked-off words are not read.
    unsafe { _mm512_maskz_loadu_epi64(m, p.add(at) as *const i64) }
}

/// The valid words of chunk `c` of a row of `wpr` words.
#[inline(always)]
fn chunk_mask(c: usize, wpr: usize) -> u8 {
    let left = wpr - 8 * c;
    if left >= 8 { 0xff } else { (1u8 << left) - 1 }
}

/// One flood step on the row at word offset `o` of planes `f` (floor) and `s` (claimed), rows
/// `stride` words apart, `wpr` words wide: claim every floor run that holds an unclaimed cell
/// next (connectivity `C`: 4, 6 or 8) to a claimed cell of the row above or below. Returns the
/// number of cells claimed; 0 means nothing changed and `s` was not written. `cand` and `down`
/// are scratch of at least `8 * wpr.div_ceil(8)` words.
///
/// # Safety
/// Runs only on a CPU with AVX-512 F, BW, VBMI, VBMI2, VPOPCNTDQ and GFNI (the `avx512-vbmi2`
/// clone). Words `o - 1 ..= o + wpr` of the row and of the rows `stride` words before and
/// after it must be readable in `s`, words `o .. o + wpr` in `f`, and words `o .. o + wpr` of
/// `s` writable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn grow_row<const C: u8>(
    f: *const u64,
    s: *mut u64,
    o: usize,
    stride: usize,
    wpr: usize,
    cand: &mut [u64],
    down: &mut [u64],
) -> u32 {
    // One copy per chunk count up to 8 (rows up to 4,096 columns): with `nc` a constant the
    // chunk loops unroll and their vectors stay in registers. 1024x1024 classic-4-5 sweeps,
    // whole process, alternated: 1.145x faster than the loops over a
    // run-time `nc` (median of 7 pairs).
    // SAFETY: the caller's guarantee, passed on.
    unsafe {
        match wpr.div_ceil(8) {
            1 => grow_row_in::<C>(f, s, o, stride, wpr, 1, cand, down),
            2 => grow_row_in::<C>(f, s, o, stride, wpr, 2, cand, down),
            3 => grow_row_in::<C>(f, s, o, stride, wpr, 3, cand, down),
            4 => grow_row_in::<C>(f, s, o, stride, wpr, 4, cand, down),
            5 => grow_row_in::<C>(f, s, o, stride, wpr, 5, cand, down),
            6 => grow_row_in::<C>(f, s, o, stride, wpr, 6, cand, down),
            7 => grow_row_in::<C>(f, s, o, stride, wpr, 7, cand, down),
            8 => grow_row_in::<C>(f, s, o, stride, wpr, 8, cand, down),
            nc => grow_row_in::<C>(f, s, o, stride, wpr, nc, cand, down),
        }
    }
}

/// [`grow_row`] for `nc = wpr.div_ceil(8)` chunks.
///
/// # Safety
/// As [`grow_row`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn grow_row_in<const C: u8>(
    f: *const u64,
    s: *mut u64,
    o: usize,
    stride: usize,
    wpr: usize,
    nc: usize,
    cand: &mut [u64],
    down: &mut [u64],
) -> u32 {
    assert!(nc == wpr.div_ceil(8));
    assert!(cand.len() >= 8 * nc && down.len() >= 8 * nc && o > stride);
    // SAFETY: the caller's guarantee for the CPU and the rows; every load and store is masked
    // to the row's `wpr` words (the neighbour loads to words `-1 ..= wpr`), the scratch
    // slices hold `8 nc` words (asserted).
    unsafe {
        let sc = s as *const u64;
        let (up, dn) = (o - stride, o + stride);
        // Candidates: unclaimed floor next to claimed cells above or below.
        let mut any = _mm512_setzero_si512();
        for c in 0..nc {
            let m = chunk_mask(c, wpr);
            let at = 8 * c;
            let (fw, cur) = (load(f, o + at, m), load(sc, o + at, m));
            let (a, b) = (load(sc, up + at, m), load(sc, dn + at, m));
            let n = match C {
                8 => {
                    let ab = _mm512_or_si512(a, b);
                    let l = _mm512_or_si512(load(sc, up + at - 1, m), load(sc, dn + at - 1, m));
                    let r = _mm512_or_si512(load(sc, up + at + 1, m), load(sc, dn + at + 1, m));
                    // ab | (ab << 1 | l >> 63) | (ab >> 1 | r << 63)
                    _mm512_ternarylogic_epi64::<0xfe>(
                        ab,
                        _mm512_shldi_epi64::<1>(ab, l),
                        _mm512_shrdi_epi64::<1>(ab, r),
                    )
                }
                6 => {
                    // From above: the cell and its NW (the column to the left, above); from
                    // below: the cell and its SE.
                    let ul = load(sc, up + at - 1, m);
                    let dr = load(sc, dn + at + 1, m);
                    _mm512_or_si512(
                        _mm512_or_si512(a, b),
                        _mm512_or_si512(
                            _mm512_shldi_epi64::<1>(a, ul),
                            _mm512_shrdi_epi64::<1>(b, dr),
                        ),
                    )
                }
                _ => _mm512_or_si512(a, b),
            };
            // n & f & !cur
            let v = _mm512_ternarylogic_epi64::<0x40>(n, fw, cur);
            _mm512_storeu_si512(cand.as_mut_ptr().add(at) as *mut __m512i, v);
            any = _mm512_or_si512(any, v);
        }
        if _mm512_test_epi64_mask(any, any) == 0 {
            return 0;
        }
        let idx = _mm512_loadu_si512(BYTES_REVERSED.as_ptr() as *const __m512i);
        let bits = _mm512_set1_epi64(BYTE_BITS_REVERSED);
        let ones = _mm512_set1_epi64(-1);
        let chunk =
            |p: &[u64], c: usize| _mm512_loadu_si512(p.as_ptr().add(8 * c) as *const __m512i);
        // Downward: the upward fill of the reversed row, whose chunk k is chunk nc - 1 - k,
        // in groups of up to 8 chunks (64 words, one u64 of carry masks) from the top. The
        // chunks of a group are independent until the one carry add; `down` holds the
        // reversed sums, then the fills.
        let mut carry = 0u32;
        let mut k0 = 0;
        while k0 < nc {
            let kn = (nc - k0).min(8);
            let (mut g, mut p) = (0u64, 0u64);
            for j in 0..kn {
                let c = nc - 1 - (k0 + j);
                let m = chunk_mask(c, wpr);
                let (rf, rv) = (
                    reverse(load(f, o + 8 * c, m), idx, bits),
                    reverse(chunk(cand, c), idx, bits),
                );
                let sum = _mm512_add_epi64(rf, rv);
                g |= (_mm512_cmplt_epu64_mask(sum, rf) as u64) << (8 * j);
                p |= (_mm512_cmpeq_epi64_mask(sum, ones) as u64) << (8 * j);
                _mm512_storeu_si512(down.as_mut_ptr().add(8 * c) as *mut __m512i, sum);
            }
            let (carried, out) = lookahead(g, p, carry, kn);
            carry = out;
            for j in 0..kn {
                let c = nc - 1 - (k0 + j);
                let sum = chunk(down, c);
                let sum = _mm512_mask_sub_epi64(sum, (carried >> (8 * j)) as __mmask8, sum, ones);
                // ((sum ^ f) | seed) & f in the reversed row is the same of the reversed sum
                // in the row itself.
                let fill = _mm512_ternarylogic_epi64::<0x8c>(
                    reverse(sum, idx, bits),
                    load(f, o + 8 * c, chunk_mask(c, wpr)),
                    chunk(cand, c),
                );
                _mm512_storeu_si512(down.as_mut_ptr().add(8 * c) as *mut __m512i, fill);
            }
            k0 += kn;
        }
        // Upward, in the same groups from the bottom, then claim both fills.
        let mut carry = 0u32;
        let mut count = _mm512_setzero_si512();
        let mut c0 = 0;
        while c0 < nc {
            let kn = (nc - c0).min(8);
            let (mut g, mut p) = (0u64, 0u64);
            for j in 0..kn {
                let c = c0 + j;
                let fw = load(f, o + 8 * c, chunk_mask(c, wpr));
                let sum = _mm512_add_epi64(fw, chunk(cand, c));
                g |= (_mm512_cmplt_epu64_mask(sum, fw) as u64) << (8 * j);
                p |= (_mm512_cmpeq_epi64_mask(sum, ones) as u64) << (8 * j);
            }
            let (carried, out) = lookahead(g, p, carry, kn);
            carry = out;
            for j in 0..kn {
                let c = c0 + j;
                let m = chunk_mask(c, wpr);
                let (fw, cur, v) = (
                    load(f, o + 8 * c, m),
                    load(sc, o + 8 * c, m),
                    chunk(cand, c),
                );
                let sum = _mm512_add_epi64(fw, v);
                let sum = _mm512_mask_sub_epi64(sum, (carried >> (8 * j)) as __mmask8, sum, ones);
                let got = _mm512_or_si512(
                    _mm512_ternarylogic_epi64::<0x8c>(sum, fw, v),
                    chunk(down, c),
                );
                // Claims are whole runs and `got` holds only unclaimed runs: all of it is new.
                count = _mm512_add_epi64(count, _mm512_popcnt_epi64(got));
                _mm512_mask_storeu_epi64(
                    s.add(o + 8 * c) as *mut i64,
                    m,
                    _mm512_or_si512(cur, got),
                );
            }
            c0 += kn;
        }
        _mm512_reduce_add_epi64(count) as u32
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::tests::Mix;
    use super::*;
    use crate::simd::{Path, Simd};
    use proptest::prelude::*;

    /// A random word: all floor, all rock, or bits set with a density picked per word, so
    /// rows have long runs crossing words and chunks as well as fine grain.
    fn word(r: &mut Mix) -> u64 {
        match r.next() % 6 {
            0 => !0,
            1 => 0,
            2 => r.next() | r.next(),
            3 => r.next() & r.next(),
            _ => r.next(),
        }
    }

    fn bit(row: &[u64], x: isize) -> bool {
        x >= 0 && (x as usize) < 64 * row.len() && row[x as usize / 64] >> (x % 64) & 1 == 1
    }

    /// The definition cell by cell: candidates are unclaimed floor cells with a claimed
    /// neighbour above or below (connectivity `c`); every floor run holding one is claimed.
    fn oracle(f: &[u64], cur: &[u64], up: &[u64], dn: &[u64], c: u8) -> (Vec<u64>, u32) {
        let n = 64 * f.len() as isize;
        let (ua, da): (&[isize], &[isize]) = match c {
            8 => (&[-1, 0, 1], &[-1, 0, 1]),
            6 => (&[-1, 0], &[0, 1]),
            _ => (&[0], &[0]),
        };
        let cand = |x: isize| {
            bit(f, x)
                && !bit(cur, x)
                && (ua.iter().any(|d| bit(up, x + d)) || da.iter().any(|d| bit(dn, x + d)))
        };
        let mut out = cur.to_vec();
        let mut count = 0;
        let mut x = 0;
        while x < n {
            if !bit(f, x) {
                x += 1;
                continue;
            }
            let start = x;
            while x < n && bit(f, x) {
                x += 1;
            }
            if (start..x).any(cand) {
                for b in start..x {
                    out[b as usize / 64] |= 1 << (b % 64);
                }
                count += (x - start) as u32;
            }
        }
        (out, count)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The AVX-512 row step against the definition on random rows of 1..=80 words (one to
        /// ten chunks: every unrolled copy, the run-time one, partial last chunks, two carry
        /// groups), every connectivity; the claimed row holds whole
        /// runs, as in a flood.
        #[test]
        fn grow_row_matches_the_definition(wpr in 1usize..=80, seed: u64, c in 0usize..3) {
            if !Simd::available().iter().any(|s| s.path() == Path::Avx512Vbmi2) {
                return Ok(());
            }
            let mut r = Mix(seed);
            let w4 = wpr.next_multiple_of(4);
            let stride = w4 + 2;
            // Rows -1 ..= 3 of a plane; the step runs on row 1.
            let (mut f, mut s) = (vec![0u64; 5 * stride], vec![0u64; 5 * stride]);
            let at = |y: usize| y * stride + 1;
            for i in 0..wpr {
                f[at(2) + i] = word(&mut r);
                s[at(1) + i] = word(&mut r);
                s[at(3) + i] = word(&mut r);
            }
            // Claimed cells of row 1: whole runs of its floor, each kept with probability 1/3.
            let fr = f[at(2)..at(2) + wpr].to_vec();
            let mut cur = vec![0u64; wpr];
            let mut x = 0;
            while x < 64 * wpr {
                if !bit(&fr, x as isize) {
                    x += 1;
                    continue;
                }
                let keep = r.next().is_multiple_of(3);
                while x < 64 * wpr && bit(&fr, x as isize) {
                    if keep {
                        cur[x / 64] |= 1 << (x % 64);
                    }
                    x += 1;
                }
            }
            s[at(2)..at(2) + wpr].copy_from_slice(&cur);
            let conn = [4u8, 6, 8][c];
            let (want, count) = oracle(
                &fr,
                &cur,
                &s[at(1)..at(1) + wpr],
                &s[at(3)..at(3) + wpr],
                conn,
            );
            let before = s.clone();
            let (mut cand, mut down) = (vec![0u64; 8 * wpr.div_ceil(8)], vec![0u64; 8 * wpr.div_ceil(8)]);
            let (fp, sp) = (f.as_ptr(), s.as_mut_ptr());
            // SAFETY: the CPU runs the `avx512-vbmi2` clone (checked above); rows 0 ..= 4
            // hold the step's rows with their guard words.
            let got = unsafe {
                match conn {
                    4 => grow_row::<4>(fp, sp, at(2), stride, wpr, &mut cand, &mut down),
                    6 => grow_row::<6>(fp, sp, at(2), stride, wpr, &mut cand, &mut down),
                    _ => grow_row::<8>(fp, sp, at(2), stride, wpr, &mut cand, &mut down),
                }
            };
            prop_assert_eq!(got, count);
            prop_assert_eq!(&s[at(2)..at(2) + wpr], &want[..]);
            // Nothing else written: the other rows, the guard and padding words.
            for (i, (a, b)) in s.iter().zip(&before).enumerate() {
                if !(at(2)..at(2) + wpr).contains(&i) {
                    prop_assert_eq!(a, b, "word {} written", i);
                }
            }
        }
    }
}
