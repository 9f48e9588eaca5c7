//! The carry-save adders and rule evaluators of every step kernel, on one screen: neighbour
//! words into count bit-planes, planes into next states, all generic over the [`Lane`] vector
//! type (one word per lane, 1 to 8 lanes; see [`crate::simd`]; `u64` is the one-word lane).
//!
//! Everything here is `#[inline(always)]` so a kernel monomorphised for one rule compiles to a
//! straight line of AND/OR/XOR/ANDNOT with no calls, in whichever SIMD clone inlines it.
//!
//! Operations per word (one lane), before constant folding; "3-in" is with three-input logic
//! (`vpternlogq`, AVX-512), where any function of three planes is one op:
//!
//! ```text
//! primitive                  planes in -> out                         ops    3-in
//! mux(sel, a, b)             3 -> 1   sel ? b : a                       3       1
//! full_add(a, b, c)          3 -> 2   sum, carry                        5       2
//! hsum3_parts(l, c, r)       3 words -> (s0, s1), (x, a)               10       4
//!                                     4 shifts, 2 ORs, a full adder (3-in: 2 vpshldq, VBMI2)
//! vsum3                      3 x 2 -> 4   binary sum 0..=9             14       -
//! vsum3_redundant            3 x 2 -> 4   r0 + 2(t + k0) + 4 k1        10       4
//! eval_rows (s >= 5)         3 x 2 -> 1   threshold without the sum    13       6
//! eval_redundant             4 -> 1   a 10-entry table, 2 halves      <= 9  3 (const)
//! table_mux8                 3 -> 1   an 8-entry table, 7 muxes        21       7
//! eval_side                  4 -> 1   a 10-entry table, 9 muxes        27       9
//! ```
//!
//! Per output word, the kernels add these up as follows (rule tables known at run time unless
//! said; each kernel's own header has the detail):
//!
//! ```text
//! sync / batch (Moore, ConstRule)  hsum3_parts 10 (once per row, shared by 3 output rows)
//!                                  + eval_rows 13 (6 3-in) + mask, border: ~20, see sync.rs
//! sync / batch (Moore, DynRule)    10 + vsum3 14 + 2 eval_side 54 + mux 3: ~81
//! narrow (<= 128 wide)             6 shifts/ORs x 3 rows 18 + 4 full adders 20 + 2 half
//!                                  adders 4 + 2 x (table_mux8 + the n = 8 mux) 48 + blend 3: ~93
//! inplace (Gauss-Seidel)           5 shifted words 15 + 4 full adders 20 + 4 table_mux8 84
//!                                  + 2 blends 6 + p ^ q and the carry chain 12: ~137
//! tworadius (RogueBasin)           the 5x5 column sums by full adders, then two comparisons
//!                                  with a constant (`ge`), see tworadius.rs
//! ```

pub use crate::simd::Lane;

/// `sel ? b : a`, per bit (3 ops; folds to 0, 1, `sel` or `!sel` when `a`, `b` are constants).
#[inline(always)]
pub fn mux<V: Lane>(sel: V, a: V, b: V) -> V {
    a ^ ((a ^ b) & sel)
}

/// Horizontal sums of a row. `centre` is the word, `before`/`after` the words holding the
/// columns just below/above it (the previous/next word of the row). Returns
/// `[s0, s1, x, a]`: `(s0, s1)` = left + self + right and `(x, a)` = left + right, each a 2-bit
/// number per cell. 10 ops: 4 shifts, 2 ORs, 4 logic.
#[inline(always)]
pub fn hsum3_parts<V: Lane>(before: V, centre: V, after: V) -> [V; 4] {
    let l = centre.shl(1) | before.shr(63);
    let r = centre.shr(1) | after.shl(63);
    // l + centre + r as a full adder: 2 `vpternlogq` when a kernel uses only (s0, s1); without
    // three-input logic its `l ^ r` and `l & r` are the x and a returned (shared by LLVM).
    let (s0, s1) = full_add(l, r, centre);
    [s0, s1, l ^ r, l & r]
}

/// A full adder `(a ^ b ^ c, majority)`: 2 `vpternlogq` with three-input logic, else 5 ops
/// (`a ^ b` shared by the sum and the carry).
#[inline(always)]
pub fn full_add<V: Lane>(a: V, b: V, c: V) -> (V, V) {
    if V::TERNLOG {
        (a ^ b ^ c, a.maj(b, c))
    } else {
        let x = a ^ b;
        (x ^ c, (a & b) | (x & c))
    }
}

/// Whether `pattern` (bit `u` = value at `u`, for `u` in 0..=3) is a threshold `u >= k`.
const fn is_threshold(pattern: u16) -> bool {
    matches!(pattern & 0xf, 0b0000 | 0b1000 | 0b1100 | 0b1110 | 0b1111)
}

/// `u >= k` for the threshold `pattern` ([`is_threshold`]) where `u = a + b + c` of three
/// bits: 0, AND3, majority, OR3 or 1 (one `vpternlogq` each with AVX-512).
#[inline(always)]
fn u_at_least<V: Lane>(pattern: u16, a: V, b: V, c: V) -> V {
    match pattern & 0xf {
        0b0000 => V::ZERO,
        0b1000 => a & b & c,
        0b1100 => a.maj(b, c),
        0b1110 => a | b | c,
        _ => V::ONES,
    }
}

/// A 10-entry table over `s = a + b + c` (bit `s` = next state, as in `eval_side`) on three
/// 2-bit row sums given as planes `(lo, hi)`.
///
/// Why not add first: split `s = u + 2 v` with `u = a.0 + b.0 + c.0` and `v = a.1 + b.1 + c.1`
/// (0..=3 each). For each `v` the table is a function `g_v` of `u`, and for threshold rules
/// (`s >= 5`: `g_0 = 0`, `g_1 = [u >= 3]`, `g_2 = [u >= 1]`, `g_3 = 1`) every `g_v` is a
/// threshold of three bits, one op. With `v = t + 2 k1` (a full adder on the high planes):
///
/// ```text
///   f = (k1 & (t | g_2)) | (t & g_1)     when g_0 = 0 and g_3 = 1
/// ```
///
/// (k1 = 1: t | g_2 gives g_3 = 1 or g_2; k1 = 0: t & g_1 gives g_1 or g_0 = 0). For `s >= 5`
/// that is t, k1, g_1, g_2 and 2 for f: 6 `vpternlogq` against the redundant form's 7
/// ([`vsum3_redundant`] + [`eval_redundant`]); without three-input logic 5 + 2 + 2 + 4 = 13
/// against 19. Other tables take the redundant form; all of it folds at compile time for a
/// constant table.
#[inline(always)]
pub fn eval_rows<V: Lane>(table: u16, a: (V, V), b: (V, V), c: (V, V)) -> V {
    let (g0, g1, g2, g3) = (
        table & 0xf,
        table >> 2 & 0xf,
        table >> 4 & 0xf,
        table >> 6 & 0xf,
    );
    if g0 == 0 && g3 == 0xf && is_threshold(g1) && is_threshold(g2) {
        let (t, k1) = full_add(a.1, b.1, c.1);
        let u1 = u_at_least(g1, a.0, b.0, c.0);
        let u2 = u_at_least(g2, a.0, b.0, c.0);
        return (k1 & (t | u2)) | (t & u1);
    }
    eval_redundant(table, &vsum3_redundant(a, b, c))
}

/// Next state from three row sums ([`eval_rows`]) for a rule that ignores the centre
/// (`birth == survive`) and sums only the 8 neighbours; bit `k` of `table` is the next state at
/// count `k` (0..=8).
#[inline(always)]
pub fn apply_count8_rows<V: Lane>(table: u16, a: (V, V), b: (V, V), c: (V, V)) -> V {
    eval_rows((table & 0x1ff) | ((table >> 8 & 1) << 9), a, b, c)
}

/// [`apply_table`] on three row sums ([`eval_rows`]).
#[inline(always)]
pub fn apply_table_rows<V: Lane>(t: SumTable, centre: V, a: (V, V), b: (V, V), c: (V, V)) -> V {
    if t.floor == t.wall {
        return eval_rows(t.floor, a, b, c);
    }
    mux(
        centre,
        eval_rows(t.floor, a, b, c),
        eval_rows(t.wall, a, b, c),
    )
}

/// Add three 2-bit numbers (0..3 each) into a 4-bit sum (0..9) `[p0, p1, p2, p3]`. 14 ops.
///
/// ```text
/// weight 1: a0 + b0 + c0            -> p0, carry k0         (full adder, 5)
/// weight 2: a1 + b1 + c1 + k0       -> x, k1 (5); p1 = x^k0, k2 = x&k0 (2)
/// weight 4: k1 + k2                 -> p2 = k1^k2, p3 = k1&k2 (2)
/// ```
#[inline(always)]
pub fn vsum3<V: Lane>(a: (V, V), b: (V, V), c: (V, V)) -> [V; 4] {
    let t0 = a.0 ^ b.0;
    let p0 = t0 ^ c.0;
    let k0 = (a.0 & b.0) | (t0 & c.0);
    let t1 = a.1 ^ b.1;
    let x = t1 ^ c.1;
    let k1 = (a.1 & b.1) | (t1 & c.1);
    let p1 = x ^ k0;
    let k2 = x & k0;
    [p0, p1, k1 ^ k2, k1 & k2]
}

/// Add three 2-bit numbers (0..3 each) into the *redundant* form `[r0, t, k0, k1]`, whose value
/// is `r0 + 2 (t + k0) + 4 k1` (0..9). Two [`full_add`]s: 4 `vpternlogq` with AVX-512 (10 ops
/// without), against [`vsum3`]'s 14 for the binary sum: the rule is
/// then evaluated on these four planes directly ([`eval_redundant`]), so the carries `t + k0`
/// are never added up.
///
/// ```text
/// weight 1: a0 + b0 + c0 -> r0 (XOR3), carry k0 (MAJ)
/// weight 2: a1 + b1 + c1 -> t  (XOR3), carry k1 (MAJ)
/// ```
#[inline(always)]
pub fn vsum3_redundant<V: Lane>(a: (V, V), b: (V, V), c: (V, V)) -> [V; 4] {
    let (r0, k0) = full_add(a.0, b.0, c.0);
    let (t, k1) = full_add(a.1, b.1, c.1);
    [r0, t, k0, k1]
}

/// A symmetric function of two planes given by its value at `t + k0` = 0, 1, 2 (bits 0, 1, 2
/// of `pattern`): at most 2 ops, folded at compile time for a constant pattern.
#[inline(always)]
fn sym2<V: Lane>(pattern: u16, t: V, k0: V) -> V {
    match pattern & 7 {
        0b000 => V::ZERO,
        0b111 => V::ONES,
        0b100 => t & k0,
        0b110 => t | k0,
        0b010 => t ^ k0,
        0b011 => !(t & k0),
        0b001 => !(t | k0),
        _ => !(t ^ k0), // 0b101
    }
}

/// A 10-entry table over sum values (bit `s` = next state at value `s`, as in `eval_side`)
/// evaluated on the redundant planes of [`vsum3_redundant`]: for `k1 = 0` and `k1 = 1` the
/// table is a function of `r0` and the symmetric `t + k0`, and `k1` picks between the two.
/// For a constant table this folds to three 3-input functions (three `vpternlogq` with
/// AVX-512; e.g. `count >= 5` is `k1 ? r0 | t | k0 : r0 & t & k0`).
#[inline(always)]
pub fn eval_redundant<V: Lane>(table: u16, r: &[V; 4]) -> V {
    let [r0, t, k0, k1] = *r;
    // With k1 set the value is at least 4: bits 4..=9 (bit 10 and up never occur: 1 + 4 + 4 = 9).
    mux(
        k1,
        redundant_half(table, r0, t, k0),
        redundant_half(table >> 4, r0, t, k0),
    )
}

/// Bits 0..=5 of `table` (values `r0 + 2 u`, u = t + k0 in 0..=2) on the planes. No closures
/// here or in the callers: a closure is not inlined into a SIMD clone's body.
#[inline(always)]
fn redundant_half<V: Lane>(table: u16, r0: V, t: V, k0: V) -> V {
    // Bits 0, 2, 4 (r0 = 0) and 1, 3, 5 (r0 = 1) as patterns over u.
    let even = (table & 1) | (table >> 1 & 2) | (table >> 2 & 4);
    let odd = (table >> 1 & 1) | (table >> 2 & 2) | (table >> 3 & 4);
    // The shapes of threshold rules written out: as the general mux, LLVM keeps a blend with
    // a constant (4 ops with AVX-512 instead of one `vpternlogq`).
    match (even, odd) {
        (e, o) if e == o => sym2(e, t, k0),
        (0b000, 0b100) => r0 & t & k0,
        (0b110, 0b111) => r0 | t | k0,
        _ => mux(r0, sym2(even, t, k0), sym2(odd, t, k0)),
    }
}

/// [`apply_count8_rows`] on the redundant planes of the count8 sum (tests: [`eval_rows`] takes
/// this form for tables that are not thresholds).
#[cfg(test)]
fn apply_count8_redundant<V: Lane>(table: u16, r: &[V; 4]) -> V {
    eval_redundant((table & 0x1ff) | ((table >> 8 & 1) << 9), r)
}

/// [`apply_table`] on the redundant planes of the sum9 sum (tests, as above).
#[cfg(test)]
fn apply_table_redundant<V: Lane>(t: SumTable, centre: V, r: &[V; 4]) -> V {
    if t.floor == t.wall {
        return eval_redundant(t.floor, r);
    }
    mux(
        centre,
        eval_redundant(t.floor, r),
        eval_redundant(t.wall, r),
    )
}

/// A Moore rule as a lookup over `(centre, sum9)`, where `sum9` counts WALLs in the whole 3x3
/// (centre included, 0..=9). The kernels compute `sum9` because each row's horizontal 3-sum is then
/// shared by the three output rows that see it; `count8 = sum9 - centre`.
#[derive(Clone, Copy, Debug)]
pub struct SumTable {
    /// Bit `s`: next state of a FLOOR cell whose 3x3 holds `s` walls (= birth bit `s`).
    pub floor: u16,
    /// Bit `s`: next state of a WALL cell whose 3x3 holds `s` walls (= survive bit `s - 1`).
    pub wall: u16,
}

impl SumTable {
    /// Translate birth/survive masks (over count8) into the sum9 table. Impossible entries
    /// (a floor cell with sum 9, a wall cell with sum 0) copy their neighbour entry, which lets
    /// the logic simplify.
    pub const fn new(birth: u16, survive: u16) -> SumTable {
        let floor = (birth & 0x1ff) | ((birth >> 8 & 1) << 9);
        let wall = ((survive & 0x1ff) << 1) | (survive & 1);
        SumTable { floor, wall }
    }
}

/// Bit `s` of `table` as a lane mask: all ones or all zeros (no branch, for runtime tables).
#[inline(always)]
fn leaf<V: Lane>(table: u16, s: u32) -> V {
    V::splat(0u64.wrapping_sub((table >> s & 1) as u64))
}

/// `f(n)` per bit for a count `n = s0 + 2 s1 + 4 s2` (0..=7), where bit `k` of `table` is
/// `f(k)`: a mux tree of 7 muxes over constant leaves, most of which fold away when the table
/// is a compile-time constant. The in-place and narrow kernels evaluate their rules with it.
#[inline(always)]
pub fn table_mux8<V: Lane>(table: u16, s0: V, s1: V, s2: V) -> V {
    let m01 = mux(s0, leaf(table, 0), leaf(table, 1));
    let m23 = mux(s0, leaf(table, 2), leaf(table, 3));
    let m45 = mux(s0, leaf(table, 4), leaf(table, 5));
    let m67 = mux(s0, leaf(table, 6), leaf(table, 7));
    let m03 = mux(s1, m01, m23);
    let m47 = mux(s1, m45, m67);
    mux(s2, m03, m47)
}

/// Evaluate one side of the table (a 10-entry truth table) on the binary sum planes: the
/// 8-entry tree and the 8/9 pair, 9 muxes.
#[inline(always)]
fn eval_side<V: Lane>(table: u16, p: &[V; 4]) -> V {
    let m89 = mux(p[0], leaf(table, 8), leaf(table, 9));
    mux(p[3], table_mux8(table, p[0], p[1], p[2]), m89)
}

/// Next state from the centre word and the sum planes.
#[inline(always)]
pub fn apply_table<V: Lane>(t: SumTable, centre: V, p: &[V; 4]) -> V {
    // Fast forms for the common shapes, chosen at compile time for constant tables.
    if t.floor == t.wall {
        return eval_side(t.floor, p);
    }
    mux(centre, eval_side(t.floor, p), eval_side(t.wall, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three 2-bit numbers per bit position (as low/high planes): bit `i` holds `i % 4`,
    /// `(i / 4) % 4` and `(i / 16) % 4`, so the 64 positions cover every triple.
    fn all_triples() -> ((u64, u64), (u64, u64), (u64, u64)) {
        let mut a = (0u64, 0u64);
        let mut b = (0u64, 0u64);
        let mut c = (0u64, 0u64);
        for i in 0..64u32 {
            let (x, y, z) = (i % 4, (i / 4) % 4, (i / 16) % 4);
            a.0 |= ((x & 1) as u64) << i;
            a.1 |= ((x >> 1) as u64) << i;
            b.0 |= ((y & 1) as u64) << i;
            b.1 |= ((y >> 1) as u64) << i;
            c.0 |= ((z & 1) as u64) << i;
            c.1 |= ((z >> 1) as u64) << i;
        }
        (a, b, c)
    }

    #[test]
    fn adders_match_integer_sums() {
        // Exhaustive over all 2-bit inputs placed in distinct bit positions.
        let (a, b, c) = all_triples();
        let p = vsum3(a, b, c);
        for i in 0..64u32 {
            let want = i % 4 + (i / 4) % 4 + (i / 16) % 4;
            let got = (0..4).map(|k| ((p[k] >> i) & 1) << k).sum::<u64>();
            assert_eq!(got, want as u64, "bit {i}");
        }
    }

    #[test]
    fn hsum3_counts_neighbours_across_words() {
        let (before, centre, after) = (1u64 << 63, 0b101u64, 1u64);
        let [s0, s1, x, a] = hsum3_parts(before, centre, after);
        // left + right alone: bit 0 = 1 + 0, bit 1 = 1 + 1.
        assert_eq!((x & 3, a & 3), (1, 2));
        // bit 0: left (before's bit 63) + self(1) + right(0) = 2
        assert_eq!((s0 & 1, s1 & 1), (0, 1));
        // bit 1: 1 + 0 + 1 = 2 ; bit 63: bit62(0) + 0 + after bit0 (1) = 1
        assert_eq!((s0 >> 1 & 1, s1 >> 1 & 1), (0, 1));
        assert_eq!((s0 >> 63 & 1, s1 >> 63), (1, 0));
    }

    #[test]
    fn redundant_sum_and_rule_match_integer_sums() {
        // Every triple of 2-bit inputs, one per bit position, through the redundant adder and
        // every table shape the kernels use, against the integer sum.
        let (a, b, c) = all_triples();
        let r = vsum3_redundant(a, b, c);
        for i in 0..64u32 {
            let want = i % 4 + (i / 4) % 4 + (i / 16) % 4;
            let bit = |k: usize| (r[k] >> i & 1) as u32;
            assert_eq!(bit(0) + 2 * (bit(1) + bit(2)) + 4 * bit(3), want, "bit {i}");
        }
        for table in [
            0u16, 0x3ff, 0x3e0, 0x3c0, 0x008, 0x155, 0x2aa, 0x1a5, 0x05a, 0x3f1,
        ] {
            let got = eval_redundant(table, &r);
            for i in 0..64u32 {
                let s = i % 4 + (i / 4) % 4 + (i / 16) % 4;
                assert_eq!(
                    got >> i & 1,
                    (table >> s & 1) as u64,
                    "table {table:#x} sum {s}"
                );
            }
        }
    }

    /// The redundant planes reach every table bit through every decomposition of a sum, so a
    /// table is checked for all 1024 tables here, not just the presets'.
    #[test]
    fn redundant_eval_covers_every_table() {
        for table in 0u16..1024 {
            for bits in 0..16u32 {
                let p = [0, 1, 2, 3].map(|k| if bits >> k & 1 == 1 { !0u64 } else { 0 });
                let s = (bits & 1) + 2 * ((bits >> 1 & 1) + (bits >> 2 & 1)) + 4 * (bits >> 3 & 1);
                let got = eval_redundant(table, &p) & 1;
                assert_eq!(
                    got,
                    (table >> s & 1) as u64,
                    "table {table:#x} planes {bits:04b}"
                );
            }
        }
    }

    /// [`eval_rows`] for every table and every triple of 2-bit row sums, on the plain word and
    /// on each SIMD path's vectors, whose forms differ (`Lane::TERNLOG`).
    #[test]
    fn row_eval_matches_integer_sums_for_every_table() {
        fn check<V: Lane>() {
            let (a, b, c) = all_triples();
            let lift = |p: (u64, u64)| (V::splat(p.0), V::splat(p.1));
            let (a, b, c) = (lift(a), lift(b), lift(c));
            for table in 0u16..1024 {
                let got = eval_rows(table, a, b, c);
                for k in 0..V::N {
                    for i in 0..64u32 {
                        let s = i % 4 + (i / 4) % 4 + (i / 16) % 4;
                        let want = (table >> s & 1) as u64;
                        assert_eq!(got.get(k) >> i & 1, want, "table {table:#x} sum {s}");
                    }
                }
            }
        }
        check::<u64>();
        for simd in crate::simd::Simd::available() {
            crate::simd_run!(simd, <I> () -> () {
                check::<I::Lanes>();
                check::<I::Row>();
            });
        }
    }

    /// Every `[r0, t, k0, k1]` (as all-ones or zero words) whose value `r0 + 2 (t + k0) + 4 k1`
    /// is `s`.
    fn redundant_forms(s: u32) -> Vec<[u64; 4]> {
        (0..16u32)
            .filter(|b| (b & 1) + 2 * ((b >> 1 & 1) + (b >> 2 & 1)) + 4 * (b >> 3 & 1) == s)
            .map(|b| [0, 1, 2, 3].map(|k| if b >> k & 1 == 1 { !0u64 } else { 0 }))
            .collect()
    }

    #[test]
    fn table_matches_rule_for_every_count() {
        for (birth, survive) in [
            (0x1e0u16, 0x1e0u16),
            (0x1e0, 0x1f0),
            (0x008, 0x1ff),
            (0x1a5, 0x05a),
        ] {
            let t = SumTable::new(birth, survive);
            for centre in [0u64, !0] {
                for count8 in 0..=8u32 {
                    let sum9 = count8 + (centre & 1) as u32;
                    let p = [0, 1, 2, 3].map(|k| if sum9 >> k & 1 == 1 { !0u64 } else { 0 });
                    let got = apply_table(t, centre, &p) & 1 == 1;
                    let want = crate::rule::Rule::next_moore(birth, survive, centre != 0, count8);
                    assert_eq!(got, want, "B{birth:b} S{survive:b} c{centre} n{count8}");
                    // The same sums as redundant planes (r0, t, k0, k1), every decomposition.
                    for r in redundant_forms(sum9) {
                        let got = apply_table_redundant(t, centre, &r) & 1 == 1;
                        assert_eq!(
                            got, want,
                            "redundant B{birth:b} S{survive:b} c{centre} n{count8}"
                        );
                    }
                    if birth == survive {
                        for r in redundant_forms(count8) {
                            assert_eq!(apply_count8_redundant(birth, &r) & 1 == 1, want);
                        }
                    }
                }
            }
        }
    }
}
