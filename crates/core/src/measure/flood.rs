//! The row primitives of every flood fill, written once and generic over the lane type: the
//! per-cave flood ([`super::components`], on plain `u64` words) and the flood of a batch of
//! caves in SIMD lanes ([`super::lanes`], one cave per lane) both claim a row's floor runs with
//! [`fill_up`] and find the cells a claim reaches in the next row with [`touch_above`] and
//! [`touch_below`].
//!
//! Operation count per word (`V` a vector of caves or one `u64`):
//!
//! | primitive | ops per word | note |
//! |---|---|---|
//! | [`fill_up`], [`fill_up_word`] | add, add, carry (1 on `u64`: `adc`; 5 in vectors), xor, or, and | one carry chain over the row |
//! | [`touch_above`], [`touch_below`], 4-connected | 0 | the cells themselves |
//! | the same, 8-connected | 2 shifts, 2 ors, + 2 shift-ors across words | one column either side |
//! | the same, hex | 1 shift, 1 or, + 1 shift-or across words | one column, to the right from above, to the left from below |

use crate::simd::Lane;

/// Each floor run of `f` (a row of `N` words, word 0 lowest) from its lowest bit of `seed` (a
/// subset of `f`) upward. `f + seed` as one `64 N`-bit number: the carry from a run's lowest
/// seed clears the run above it and stops at the first non-floor bit, so `(f + seed) ^ f` (with
/// the seeds, which the carry passes over) is the fill. The carry between words is
/// [`Lane::add_carry`]'s.
#[inline(always)]
pub(super) fn fill_up<V: Lane, const N: usize>(f: [V; N], seed: [V; N]) -> [V; N] {
    let mut carry = V::ZERO;
    let mut out = [V::ZERO; N];
    for i in 0..N {
        (out[i], carry) = fill_up_word(f[i], seed[i], carry);
    }
    out
}

/// One word of [`fill_up`]: the fill of word `f` from `seed` with the `carry` (0 or 1 per
/// word) out of the word below, and the carry into the word above.
#[inline(always)]
pub(super) fn fill_up_word<V: Lane>(f: V, seed: V, carry: V) -> (V, V) {
    let (t, c) = f.add_carry(seed, carry);
    (((t ^ f) | seed) & f, c)
}

/// The cells of a row adjacent (connectivity `C`: 4, 6 or 8) to cells `a` of the row *above*
/// it: themselves; for 8 one column either side; for 6 (hex: the neighbour above-left, NW) the
/// column to the right (the cell whose NW neighbour is in `a`).
#[inline(always)]
pub(super) fn touch_above<V: Lane, const N: usize, const C: u8>(a: [V; N]) -> [V; N] {
    match C {
        8 => spread8(a),
        6 => {
            let mut out = a;
            for i in 0..N {
                out[i] |= a[i].shl(1);
                if i > 0 {
                    out[i] |= a[i - 1].shr(63);
                }
            }
            out
        }
        _ => a,
    }
}

/// The cells of a row adjacent (connectivity `C`) to cells `b` of the row *below* it: as
/// [`touch_above`], the hex case the column to the left (the cell whose SE neighbour is in
/// `b`).
#[inline(always)]
pub(super) fn touch_below<V: Lane, const N: usize, const C: u8>(b: [V; N]) -> [V; N] {
    match C {
        8 => spread8(b),
        6 => {
            let mut out = b;
            for i in 0..N {
                out[i] |= b[i].shr(1);
                if i + 1 < N {
                    out[i] |= b[i + 1].shl(63);
                }
            }
            out
        }
        _ => b,
    }
}

/// One column either side and the cells themselves.
#[inline(always)]
fn spread8<V: Lane, const N: usize>(a: [V; N]) -> [V; N] {
    let mut out = [V::ZERO; N];
    for i in 0..N {
        let mut x = a[i] | a[i].shl(1) | a[i].shr(1);
        if i > 0 {
            x |= a[i - 1].shr(63);
        }
        if i + 1 < N {
            x |= a[i + 1].shl(63);
        }
        out[i] = x;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{Simd, W1, W2};

    /// The cells of `row` (`64 N` bits) as booleans, bit 0 of word 0 first.
    fn bits<const N: usize>(row: [u64; N]) -> Vec<bool> {
        (0..64 * N)
            .map(|b| row[b / 64] >> (b % 64) & 1 == 1)
            .collect()
    }

    /// The definition, cell by cell: a floor cell is filled when a seed lies at or below it
    /// in its run.
    fn fill_up_oracle<const N: usize>(f: [u64; N], seed: [u64; N]) -> [u64; N] {
        let (f, s) = (bits(f), bits(seed));
        let mut out = [0u64; N];
        let mut on = false;
        for b in 0..64 * N {
            on = f[b] && (on || s[b]);
            if on {
                out[b / 64] |= 1 << (b % 64);
            }
        }
        out
    }

    fn spread_oracle<const N: usize>(a: [u64; N], eight: bool) -> [u64; N] {
        let a = bits(a);
        let mut out = [0u64; N];
        for b in 0..64 * N {
            let near = a[b] || (eight && ((b > 0 && a[b - 1]) || (b + 1 < 64 * N && a[b + 1])));
            if near {
                out[b / 64] |= 1 << (b % 64);
            }
        }
        out
    }

    /// The cells of `a` and those `d` columns further on (`d = 1`: each cell's right
    /// neighbour also set; `-1`: the left one), within the row.
    fn shift_oracle<const N: usize>(a: [u64; N], d: isize) -> [u64; N] {
        let a = bits(a);
        let mut out = [0u64; N];
        for b in 0..64 * N {
            let from = b as isize - d;
            let near = a[b] || (from >= 0 && (from as usize) < 64 * N && a[from as usize]);
            if near {
                out[b / 64] |= 1 << (b % 64);
            }
        }
        out
    }

    /// A word with runs of every length: sparse, dense and all-floor words.
    fn word(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = *x ^ (*x >> 29);
        match r % 5 {
            0 => !0,
            1 => r | r >> 3 | r >> 7,
            2 => r & r >> 2,
            _ => r,
        }
    }

    /// Every lane type gives what the cell-by-cell definition gives, lane by lane, on random
    /// rows of 1 to 4 words (carries across all-floor words included).
    fn check<V: Lane, const N: usize>(x: &mut u64) {
        for _ in 0..300 {
            let f: [V; N] = std::array::from_fn(|_| V::from_fn(|_| word(x)));
            let seed: [V; N] = std::array::from_fn(|i| {
                let mask = V::from_fn(|_| {
                    let w = word(x);
                    w & w >> 5 & w >> 11
                });
                f[i] & mask
            });
            let up = fill_up::<V, N>(f, seed);
            let (s4, s8) = (touch_above::<V, N, 4>(f), touch_below::<V, N, 8>(f));
            let (a6, b6) = (touch_above::<V, N, 6>(f), touch_below::<V, N, 6>(f));
            let (a8, b4) = (touch_above::<V, N, 8>(f), touch_below::<V, N, 4>(f));
            for k in 0..V::N {
                let fk: [u64; N] = std::array::from_fn(|i| f[i].get(k));
                let sk: [u64; N] = std::array::from_fn(|i| seed[i].get(k));
                let lane = |v: [V; N]| -> [u64; N] { std::array::from_fn(|i| v[i].get(k)) };
                assert_eq!(
                    lane(up),
                    fill_up_oracle(fk, sk),
                    "fill_up lane {k} {fk:x?} {sk:x?}"
                );
                assert_eq!(lane(s4), spread_oracle(fk, false));
                assert_eq!(lane(s8), spread_oracle(fk, true));
                assert_eq!(lane(a8), spread_oracle(fk, true));
                assert_eq!(lane(b4), fk);
                assert_eq!(lane(a6), shift_oracle(fk, 1), "hex from above");
                assert_eq!(lane(b6), shift_oracle(fk, -1), "hex from below");
            }
        }
    }

    /// Rows of 1 to 4 words on lane type `V`.
    #[inline(always)]
    fn check_all<V: Lane>(x: &mut u64) {
        check::<V, 1>(x);
        check::<V, 2>(x);
        check::<V, 3>(x);
        check::<V, 4>(x);
    }

    #[test]
    fn primitives_match_their_definitions_on_every_lane_type() {
        let mut x = 7;
        check_all::<u64>(&mut x);
        check_all::<W1>(&mut x);
        check_all::<W2>(&mut x);
        // The vector lanes of each clone this CPU runs (W4 and W8 only inside their clones).
        for simd in Simd::available() {
            crate::simd_run!(simd, <I> (x: &'a mut u64 = &mut x) -> () {
                check_all::<I::Lanes>(x);
                check_all::<I::Row>(x);
            });
        }
    }
}
