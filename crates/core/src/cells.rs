//! One byte per cell: fast conversion between a bit-packed [`Grid`] and rows of bytes
//! (0 = FLOOR, 1 = WALL), the representation numpy users hold caves in.
//!
//! [`Grid::to_bytes`] and [`Grid::from_bytes`] go cell by cell and allocate; these work a word
//! (64 cells) at a time into and out of buffers the caller owns, so the Python package can fill
//! a numpy array of a million caves without a per-cell branch:
//!
//! - [`unpack`] / [`unpack_row`]: portable, one 256-entry table lookup and one 8-byte store per
//!   8 cells (the oracle of the SIMD paths);
//! - [`unpack_on`]: the same on a SIMD path: AVX-512 turns a 64-cell word into 64 bytes with one
//!   zero-masked byte move (`vmovdqu8 zmm{k}{z}`), AVX2 32 cells with a broadcast, a byte
//!   shuffle, an AND and an unsigned min (4 instructions); lower levels use the table;
//! - [`Stream`]: caves one after another into one big buffer (an `(n, rows, cols)` array),
//!   packed into one dense bit stream whose 64-bit words are the destination's cache lines,
//!   each written with one streaming (non-temporal) 64-byte store: a 100,000-cave array is
//!   1.26 GB, far bigger than any cache, and ordinary stores would first read every
//!   destination line from memory (read for ownership) only to overwrite it, doubling the
//!   memory traffic.
//!
//! Packing is one multiply per 8 cells.

use crate::grid::Grid;
use crate::simd::{Isa, Level, Simd};

/// `SPREAD[b]`: the 8 bits of `b` as 8 bytes of 0/1, bit i in byte i (little-endian order).
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= (((b >> i) & 1) as u64) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// Gather the low bit of each of the 8 bytes of `v` (each byte 0 or 1) into one byte, byte i
/// to bit i. Byte i times 2^(56 - 7i) lands on bit 56 + i; all 64 partial products fall on
/// distinct bits, so nothing carries into the top byte.
#[inline(always)]
fn gather8(v: u64) -> u64 {
    v.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Write row `y` of `g` into `out` (`g.cols()` bytes): 1 = WALL, 0 = FLOOR.
pub fn unpack_row(g: &Grid, y: usize, out: &mut [u8]) {
    assert_eq!(out.len(), g.cols(), "row buffer has the wrong length");
    // Whole words: 64 cells, eight table lookups and eight 8-byte stores, no bounds checks.
    spread_row(g.row(y), out);
}

/// Write every cell of `g` into `out` (`g.cells()` bytes, row-major): 1 = WALL, 0 = FLOOR.
pub fn unpack(g: &Grid, out: &mut [u8]) {
    assert_eq!(out.len(), g.cells(), "cell buffer has the wrong length");
    if g.cols() == 0 {
        return;
    }
    for (y, row) in out.chunks_exact_mut(g.cols()).enumerate() {
        unpack_row(g, y, row);
    }
}

/// [`unpack`] on the SIMD path `simd` (the same bytes, faster).
pub fn unpack_on(simd: Simd, g: &Grid, out: &mut [u8]) {
    assert_eq!(out.len(), g.cells(), "cell buffer has the wrong length");
    if g.cols() == 0 {
        return;
    }
    crate::simd_run!(simd, <I> (g: &'a Grid = g, out: &'a mut [u8] = out) -> () {
        unpack_in::<I>(g, out)
    });
}

/// [`unpack_on`] in a SIMD clone.
#[inline(always)]
fn unpack_in<I: Isa>(g: &Grid, out: &mut [u8]) {
    let cols = g.cols();
    for (y, out) in out.chunks_exact_mut(cols).enumerate() {
        expand_row::<I>(g.row(y), out);
    }
}

/// The first `out.len()` cells of `row` as bytes, on the clone's widest expansion.
#[inline(always)]
fn expand_row<I: Isa>(row: &[u64], out: &mut [u8]) {
    assert!(out.len() <= row.len() * 64, "row too short for the cells");
    #[cfg(target_arch = "x86_64")]
    match I::PATH.level() {
        // SAFETY: the level is that of the running clone, whose CPU has its features; the
        // assertion above keeps every read in `row`, and the functions write only `out`.
        Level::Avx512 => return unsafe { x86::expand_avx512(row, out) },
        // SAFETY: as for the arm above: the running clone's CPU has this level's features.
        Level::Avx2 => return unsafe { x86::expand_avx2(row, out) },
        Level::Sse2 | Level::Scalar => {}
    }
    spread_row(row, out);
}

/// The table expansion of [`unpack_row`] on a row's words.
#[inline(always)]
fn spread_row(row: &[u64], out: &mut [u8]) {
    let last = out.len() / 64;
    let mut blocks = out.chunks_exact_mut(64);
    for (dst, &w) in (&mut blocks).zip(row) {
        spread_word(w, dst);
    }
    let tail = blocks.into_remainder();
    if !tail.is_empty() {
        spread_word(row[last], tail);
    }
}

/// The low `out.len()` (at most 64) bits of `w` as bytes.
#[inline(always)]
fn spread_word(mut w: u64, out: &mut [u8]) {
    let mut groups = out.chunks_exact_mut(8);
    for d in &mut groups {
        d.copy_from_slice(&SPREAD[(w & 0xff) as usize].to_le_bytes());
        w >>= 8;
    }
    // The last 1..7 cells one byte each (a variable-length copy would call memcpy).
    for (i, d) in groups.into_remainder().iter_mut().enumerate() {
        *d = ((w >> i) & 1) as u8;
    }
}

/// Bytes per streaming store block (one cache line).
const LINE: usize = 64;

/// Caves written one after another into one byte buffer, as an `(n, rows, cols)` array holds
/// them, with streaming stores (see the module docs).
///
/// The destination is one run of bytes, one per cell, so cell `k` of the whole stream (caves
/// back to back, row-major) lands at `out + k`, and the cache line holding it is line
/// `(k + lead) / 64` counted from the line `out` starts in (`lead` = `out`'s address mod 64).
/// The stream therefore packs the caves' rows into one dense bit stream, bit `k + lead` for
/// cell `k`: each 64-bit word of it is exactly one aligned destination line, written straight
/// from the word with one expansion and one streaming 64-byte store, with no staging buffer
/// and no unaligned stores. Per 90x140 cave that is 270 row words appended (a shift, an OR,
/// a compare) and 197 lines written; the earlier staged copy (expand each row into an L1
/// buffer at its unaligned offset, then stream whole lines out of it) took ~3x the time.
/// The partial lines at the two ends of `out` are written with ordinary stores. Dropping the
/// stream (or [`Stream::finish`]) writes the last partial line and fences the streaming
/// stores, so the bytes are in `out` for any thread that synchronises with this one afterwards.
pub struct Stream<'a> {
    simd: Simd,
    out: &'a mut [u8],
    /// Cells pushed.
    pushed: usize,
    /// `out`'s address mod [`LINE`]: the bytes of line 0 before `out`, which the stream never
    /// writes (bits `0..lead` of line 0's word are placeholders).
    lead: usize,
    /// The bits of the current line (bit `i` = byte `i` of the line), `fill` of them set.
    acc: u64,
    fill: usize,
    /// Index of the current line (line 0 is the one `out` starts in).
    line: usize,
}

impl<'a> Stream<'a> {
    /// A stream writing `out` from its start.
    pub fn new(simd: Simd, out: &'a mut [u8]) -> Stream<'a> {
        let lead = out.as_ptr() as usize % LINE;
        Stream {
            simd,
            out,
            pushed: 0,
            lead,
            acc: 0,
            fill: lead,
            line: 0,
        }
    }

    /// Bytes pushed so far.
    pub fn pushed(&self) -> usize {
        self.pushed
    }

    /// Append the cells of `g` (panics if `out` has no room for them).
    pub fn push(&mut self, g: &Grid) {
        let cells = g.cells();
        assert!(
            cells <= self.out.len() - self.pushed,
            "stream buffer too small for the cave"
        );
        if cells == 0 {
            return;
        }
        let simd = self.simd;
        crate::simd_run!(simd, <I> ['b] (s: &'a mut Stream<'b> = self, g: &'a Grid = g) -> () {
            s.push_in::<I>(g)
        });
        self.pushed += cells;
    }

    /// Write the last partial line and fence the streaming stores (also done on drop).
    pub fn finish(self) {}

    /// Write line `self.line` (its word `w`, all 64 bits pushed) and move to the next.
    #[inline(always)]
    fn emit<I: Isa>(&mut self, w: u64) {
        let first = if self.line == 0 { self.lead } else { 0 };
        if first == 0 {
            let at = self.line * LINE - self.lead;
            // The whole line lies in `out`: `line * 64 - lead + 64 <= pushed <= out.len()`.
            let dst = &mut self.out[at..at + LINE];
            debug_assert!((dst.as_ptr() as usize).is_multiple_of(LINE));
            #[cfg(target_arch = "x86_64")]
            match I::PATH.level() {
                // SAFETY: the clone's CPU has the level's features; `dst` is one whole
                // aligned line (line `line` starts on a multiple of 64 by the choice of lead).
                Level::Avx512 => return unsafe { x86::line_avx512(w, dst) },
                // SAFETY: as for the arm above: the running clone's CPU has this level's features.
                Level::Avx2 => return unsafe { x86::line_avx2(w, dst) },
                // SAFETY: as for the arm above: the running clone's CPU has this level's features.
                Level::Sse2 => return unsafe { x86::line_sse2(w, dst) },
                Level::Scalar => {}
            }
            spread_word(w, dst);
        } else {
            self.partial(w, first, LINE);
        }
    }

    /// Bytes `from..to` of line `self.line` (word `w`) with ordinary stores.
    fn partial(&mut self, w: u64, from: usize, to: usize) {
        let mut bytes = [0u8; LINE];
        spread_word(w, &mut bytes);
        let at = self.line * LINE + from - self.lead;
        self.out[at..at + (to - from)].copy_from_slice(&bytes[from..to]);
    }
}

impl Stream<'_> {
    /// [`Stream::push`]'s work on one SIMD path: append each row's cells to the bit stream
    /// and write every line completed.
    #[inline(always)]
    fn push_in<I: Isa>(&mut self, g: &Grid) {
        let s = self;
        let cols = g.cols();
        let full = cols / 64;
        let rest = cols % 64;
        let (mut acc, mut fill) = (s.acc, s.fill);
        // Append the low `n` bits of `w` (1 <= n <= 64, higher bits zero); 0 <= fill < 64.
        let mut append = |s: &mut Stream, w: u64, n: usize| {
            acc |= w << fill;
            fill += n;
            if fill >= 64 {
                s.emit::<I>(acc);
                s.line += 1;
                fill -= 64;
                // The bits of `w` that did not fit (none if it started a line).
                acc = if fill == 0 { 0 } else { w >> (n - fill) };
            }
        };
        for y in 0..g.rows() {
            let row = g.row(y);
            for &w in &row[..full] {
                append(s, w, 64);
            }
            if rest > 0 {
                append(s, row[full] & ((1u64 << rest) - 1), rest);
            }
        }
        s.acc = acc;
        s.fill = fill;
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        let first = if self.line == 0 { self.lead } else { 0 };
        if self.fill > first {
            self.partial(self.acc, first, self.fill);
        }
        self.fill = first;
        #[cfg(target_arch = "x86_64")]
        if self.simd.level() != Level::Scalar {
            // SAFETY: SSE2 is part of x86-64. Orders this thread's streaming stores before
            // whatever it does next (required before anyone reads the bytes).
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
    }
}

/// The x86-64 expansions and streaming copies; called only from clones with the features.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{LINE, spread_word};

    /// 64 cells per word: one zero-masked byte move of 64 ones.
    /// SAFETY: AVX-512 F/BW; `out.len() <= row.len() * 64`.
    #[inline(always)]
    pub unsafe fn expand_avx512(row: &[u64], out: &mut [u8]) {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let ones = _mm512_set1_epi8(1);
            let n = out.len();
            let p = out.as_mut_ptr();
            let full = n / 64;
            for (i, &w) in row[..full].iter().enumerate() {
                _mm512_storeu_si512(p.add(64 * i).cast(), _mm512_maskz_mov_epi8(w, ones));
            }
            let rest = n % 64;
            if rest > 0 {
                let v = _mm512_maskz_mov_epi8(row[full], ones);
                _mm512_mask_storeu_epi8(p.add(64 * full).cast(), (1u64 << rest) - 1, v);
            }
        }
    }

    /// 32 cells per step: broadcast, each byte takes its cell's source byte (shuffle), keeps
    /// its cell's bit (AND), and min(., 1) makes it 0/1.
    /// SAFETY: AVX2; `out.len() <= row.len() * 64`.
    #[inline(always)]
    pub unsafe fn expand_avx2(row: &[u64], out: &mut [u8]) {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            #[rustfmt::skip]
            let idx = _mm256_setr_epi8(
                0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
            );
            let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
            let ones = _mm256_set1_epi8(1);
            let n = out.len();
            let p = out.as_mut_ptr();
            let halves = n / 32;
            for h in 0..halves {
                let x = (row[h / 2] >> (32 * (h % 2))) as u32;
                let v = _mm256_shuffle_epi8(_mm256_set1_epi32(x as i32), idx);
                let v = _mm256_min_epu8(_mm256_and_si256(v, bits), ones);
                _mm256_storeu_si256(p.add(32 * h).cast(), v);
            }
            let rest = n % 32;
            if rest > 0 {
                let w = row[halves / 2] >> (32 * (halves % 2));
                spread_word(w, &mut out[32 * halves..]);
            }
        }
    }

    /// 64 cells per step: one compare for bytes over 1, one test for the word.
    /// SAFETY: AVX-512 F/BW; `cells.len() <= row.len() * 64`.
    #[inline(always)]
    pub unsafe fn pack_avx512(row: &mut [u64], cells: &[u8]) -> bool {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line); the
        // tail is a masked load of exactly its bytes.
        unsafe {
            let ones = _mm512_set1_epi8(1);
            let mut over = 0u64;
            let p = cells.as_ptr();
            let full = cells.len() / 64;
            for (i, w) in row[..full].iter_mut().enumerate() {
                let v = _mm512_loadu_si512(p.add(64 * i).cast());
                over |= _mm512_cmpgt_epu8_mask(v, ones);
                *w = _mm512_test_epi8_mask(v, v);
            }
            let rest = cells.len() % 64;
            if rest > 0 {
                let v = _mm512_maskz_loadu_epi8((1u64 << rest) - 1, p.add(64 * full).cast());
                over |= _mm512_cmpgt_epu8_mask(v, ones);
                row[full] = _mm512_test_epi8_mask(v, v);
            }
            over == 0
        }
    }

    /// 32 cells per step: each byte's bit 0 shifted to its sign bit, then `movemask`; the
    /// largest byte kept for the check.
    /// SAFETY: AVX2; `cells.len() <= row.len() * 64`.
    #[inline(always)]
    pub unsafe fn pack_avx2(row: &mut [u64], cells: &[u8]) -> bool {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let mut max = _mm256_setzero_si256();
            let p = cells.as_ptr();
            let halves = cells.len() / 32;
            // Plain loops, no closure: a closure may be compiled out of line, without the
            // clone's features.
            for (i, w) in row.iter_mut().enumerate().take(halves / 2) {
                let lo = _mm256_loadu_si256(p.add(64 * i).cast());
                let hi = _mm256_loadu_si256(p.add(64 * i + 32).cast());
                max = _mm256_max_epu8(max, _mm256_max_epu8(lo, hi));
                let l = _mm256_movemask_epi8(_mm256_slli_epi16(lo, 7)) as u32 as u64;
                let h = _mm256_movemask_epi8(_mm256_slli_epi16(hi, 7)) as u32 as u64;
                *w = l | h << 32;
            }
            let ones = _mm256_set1_epi8(1);
            let all = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(max, ones), ones));
            let mut ok = all == -1;
            let done = halves / 2 * 64;
            if done < cells.len() {
                let tail = &cells[done..];
                ok &= tail.iter().all(|&c| c <= 1);
                row[halves / 2] = super::pack_word(tail);
            }
            ok
        }
    }

    /// 16 cells per step, as [`pack_avx2`] on SSE2's 128-bit vectors.
    /// SAFETY: SSE2 (every x86-64 CPU); `cells.len() <= row.len() * 64`.
    #[inline(always)]
    pub unsafe fn pack_sse2(row: &mut [u64], cells: &[u8]) -> bool {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let mut max = _mm_setzero_si128();
            let p = cells.as_ptr();
            let full = cells.len() / 64;
            for (i, w) in row[..full].iter_mut().enumerate() {
                let mut word = 0u64;
                for q in 0..4 {
                    let v = _mm_loadu_si128(p.add(64 * i + 16 * q).cast());
                    max = _mm_max_epu8(max, v);
                    word |= (_mm_movemask_epi8(_mm_slli_epi16(v, 7)) as u32 as u64) << (16 * q);
                }
                *w = word;
            }
            let ones = _mm_set1_epi8(1);
            let all = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(max, ones), ones));
            let mut ok = all == 0xffff;
            if full * 64 < cells.len() {
                let tail = &cells[full * 64..];
                ok &= tail.iter().all(|&c| c <= 1);
                row[full] = super::pack_word(tail);
            }
            ok
        }
    }

    /// The 64 cells of `w` as one streamed line.
    /// SAFETY: AVX-512 F/BW; `dst` is 64 bytes, line-aligned.
    #[inline(always)]
    pub unsafe fn line_avx512(w: u64, dst: &mut [u8]) {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let v = _mm512_maskz_mov_epi8(w, _mm512_set1_epi8(1));
            _mm512_stream_si512(dst.as_mut_ptr().cast(), v);
        }
    }

    /// SAFETY: AVX2; as [`line_avx512`].
    #[inline(always)]
    pub unsafe fn line_avx2(w: u64, dst: &mut [u8]) {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let mut bytes = [0u8; LINE];
            expand_avx2(&[w], &mut bytes);
            let (s, d) = (bytes.as_ptr(), dst.as_mut_ptr());
            _mm256_stream_si256(d.cast(), _mm256_loadu_si256(s.cast()));
            _mm256_stream_si256(d.add(32).cast(), _mm256_loadu_si256(s.add(32).cast()));
        }
    }

    /// SAFETY: SSE2; as [`line_avx512`].
    #[inline(always)]
    pub unsafe fn line_sse2(w: u64, dst: &mut [u8]) {
        // SAFETY: the caller upholds this function's contract (its `SAFETY:` doc line).
        unsafe {
            let mut bytes = [0u8; LINE];
            spread_word(w, &mut bytes);
            let (s, d) = (bytes.as_ptr(), dst.as_mut_ptr());
            for i in (0..LINE).step_by(16) {
                _mm_stream_si128(d.add(i).cast(), _mm_loadu_si128(s.add(i).cast()));
            }
        }
    }
}

/// Set row `y` of `g` from `cells` (`g.cols()` bytes, each 0 = FLOOR or 1 = WALL; other values
/// give unspecified cells: check them first, see [`first_not_binary`]).
pub fn pack_row(g: &mut Grid, y: usize, cells: &[u8]) {
    assert_eq!(cells.len(), g.cols(), "row buffer has the wrong length");
    let row = g.row_mut(y);
    // The last word's padding bits stay zero: `pack_word` sets only the tail's bits.
    for (w, src) in row.iter_mut().zip(cells.chunks(64)) {
        *w = pack_word(src);
    }
}

/// [`pack_row`] with the check of [`first_not_binary`] in the same pass, on `simd`'s widest
/// instructions (64 cells per AVX-512 compare, 32 per AVX2 `movemask`): `Err(x)` names the
/// first cell that is neither 0 nor 1, and the row is then left unspecified. What the Python
/// package runs on every row of an array it is given.
pub fn pack_row_checked(simd: Simd, g: &mut Grid, y: usize, cells: &[u8]) -> Result<(), usize> {
    assert_eq!(cells.len(), g.cols(), "row buffer has the wrong length");
    let row = g.row_mut(y);
    let ok = crate::simd_run!(simd, <I> (row: &'a mut [u64] = row, cells: &'a [u8] = cells) -> bool {
        pack_in::<I>(row, cells)
    });
    match ok {
        true => Ok(()),
        false => Err(first_not_binary(cells).expect("the pack saw a byte over 1")),
    }
}

/// [`pack_row_checked`] in a SIMD clone: whether every cell was 0 or 1.
#[inline(always)]
fn pack_in<I: Isa>(row: &mut [u64], cells: &[u8]) -> bool {
    debug_assert!(cells.len() <= row.len() * 64);
    #[cfg(target_arch = "x86_64")]
    match I::PATH.level() {
        // SAFETY: the level is the running clone's, whose CPU has its features; the
        // functions read `cells` and write `row[..cells.len().div_ceil(64)]` only.
        Level::Avx512 => return unsafe { x86::pack_avx512(row, cells) },
        // SAFETY: as above.
        Level::Avx2 => return unsafe { x86::pack_avx2(row, cells) },
        // SAFETY: as above (SSE2 is part of x86-64).
        Level::Sse2 => return unsafe { x86::pack_sse2(row, cells) },
        Level::Scalar => {}
    }
    if first_not_binary(cells).is_some() {
        return false;
    }
    for (w, src) in row.iter_mut().zip(cells.chunks(64)) {
        *w = pack_word(src);
    }
    true
}

/// Up to 64 cell bytes (0/1) as one word, 8 at a time by [`gather8`].
#[inline(always)]
fn pack_word(src: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut groups = src.chunks_exact(8);
    for (j, c) in (&mut groups).enumerate() {
        w |= gather8(u64::from_le_bytes(c.try_into().expect("8 bytes"))) << (8 * j);
    }
    let base = src.len() / 8 * 8;
    for (i, &c) in groups.remainder().iter().enumerate() {
        w |= ((c & 1) as u64) << (base + i);
    }
    w
}

/// Index of the first byte that is neither 0 nor 1, if any.
pub fn first_not_binary(cells: &[u8]) -> Option<usize> {
    // The all() pass vectorises; the position is only looked for on failure.
    if cells.iter().all(|&c| c <= 1) {
        None
    } else {
        cells.iter().position(|&c| c > 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pack_unpack_round_trip_matches_cell_by_cell(
            rows in 1usize..5,
            cols in 1usize..300,
            seed in any::<u64>(),
        ) {
            // Cells from a simple LCG, so every shape gets a different pattern.
            let mut s = seed | 1;
            let bytes: Vec<u8> = (0..rows * cols)
                .map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (s >> 63) as u8
                })
                .collect();
            let mut g = Grid::new(rows, cols).unwrap();
            for (y, row) in bytes.chunks_exact(cols).enumerate() {
                pack_row(&mut g, y, row);
            }
            prop_assert_eq!(&g, &Grid::from_bytes(rows, cols, &bytes).unwrap());
            prop_assert_eq!(g.count_walls(), bytes.iter().map(|&b| b as u64).sum::<u64>());
            let mut out = vec![7u8; rows * cols];
            unpack(&g, &mut out);
            prop_assert_eq!(&out, &g.to_bytes());
        }

        /// Every SIMD path's checked packing against the cell-by-cell oracle
        /// (`Grid::from_bytes`), widths across the 16-, 32- and 64-cell steps; with a bad
        /// byte planted anywhere (its value 2..=255), the error names the first one.
        #[test]
        fn checked_pack_on_every_path_matches_cell_by_cell(
            cols in 1usize..300,
            seed in any::<u64>(),
            bad in proptest::option::of((any::<prop::sample::Index>(), 2u8..=255)),
        ) {
            let mut s = seed | 1;
            let mut bytes: Vec<u8> = (0..cols)
                .map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (s >> 63) as u8
                })
                .collect();
            let want = Grid::from_bytes(1, cols, &bytes).unwrap();
            let planted = bad.map(|(i, v)| {
                let x = i.index(cols);
                bytes[x] = v;
                x
            });
            for simd in Simd::available() {
                let mut g = Grid::new(1, cols).unwrap();
                g.row_mut(0).fill(!0);
                let r = pack_row_checked(simd, &mut g, 0, &bytes);
                match planted {
                    Some(x) => prop_assert_eq!(r, Err(x), "{}", simd),
                    None => {
                        prop_assert_eq!(r, Ok(()), "{}", simd);
                        prop_assert_eq!(&g, &want, "{}", simd);
                    }
                }
            }
        }

        /// Every SIMD path's unpacking against the cell-by-cell oracle (`Grid::to_bytes`),
        /// widths across the 32- and 64-cell steps, bytes outside the cave untouched.
        #[test]
        fn unpack_on_every_path_matches_cell_by_cell(
            rows in 1usize..4,
            cols in 1usize..300,
            seed in any::<u64>(),
        ) {
            let g = random_grid(rows, cols, seed);
            let want = g.to_bytes();
            for simd in Simd::available() {
                let mut out = vec![7u8; rows * cols + 2];
                unpack_on(simd, &g, &mut out[1..rows * cols + 1]);
                prop_assert_eq!(&out[1..rows * cols + 1], &want[..], "{}", simd);
                prop_assert_eq!((out[0], out[rows * cols + 1]), (7, 7), "{}", simd);
            }
        }

        /// A stream of caves of random shapes into a buffer at every alignment: the bytes are
        /// the caves' in order, nothing past them is written.
        #[test]
        fn stream_writes_the_caves_back_to_back(
            shapes in prop::collection::vec((1usize..5, 1usize..200), 0..12),
            offset in 0usize..64,
            seed in any::<u64>(),
        ) {
            let caves: Vec<Grid> = shapes
                .iter()
                .enumerate()
                .map(|(i, &(r, c))| random_grid(r, c, seed ^ i as u64))
                .collect();
            let want: Vec<u8> = caves.iter().flat_map(|g| g.to_bytes()).collect();
            for simd in Simd::available() {
                let mut buf = vec![7u8; offset + want.len() + 70];
                let out = &mut buf[offset..offset + want.len() + 5];
                let mut s = Stream::new(simd, out);
                for g in &caves {
                    s.push(g);
                }
                prop_assert_eq!(s.pushed(), want.len());
                s.finish();
                prop_assert_eq!(&buf[offset..offset + want.len()], &want[..], "{}", simd);
                prop_assert!(buf[..offset].iter().all(|&b| b == 7), "{}", simd);
                prop_assert!(buf[offset + want.len()..].iter().all(|&b| b == 7), "{}", simd);
            }
        }
    }

    fn random_grid(rows: usize, cols: usize, seed: u64) -> Grid {
        let mut s = seed | 1;
        let mut g = Grid::new(rows, cols).unwrap();
        for y in 0..rows {
            for x in 0..cols {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                g.set(y, x, s >> 63 == 1);
            }
        }
        g
    }

    #[test]
    fn a_stream_of_big_caves_streams_whole_lines() {
        // 90x140 caves: most bytes go through the streaming stores.
        let caves: Vec<Grid> = (0..5).map(|i| random_grid(90, 140, i)).collect();
        let want: Vec<u8> = caves.iter().flat_map(|g| g.to_bytes()).collect();
        for simd in Simd::available() {
            let mut out = vec![0u8; want.len() + 3];
            let mut s = Stream::new(simd, &mut out[3..]);
            caves.iter().for_each(|g| s.push(g));
            drop(s);
            assert_eq!(&out[3..], &want[..], "{simd}");
        }
    }

    #[test]
    #[should_panic(expected = "too small")]
    fn a_stream_refuses_a_cave_past_its_end() {
        let g = random_grid(3, 3, 1);
        let mut out = [0u8; 8];
        Stream::new(Simd::SCALAR, &mut out).push(&g);
    }

    #[test]
    fn not_binary_is_found() {
        assert_eq!(first_not_binary(&[0, 1, 1, 0]), None);
        assert_eq!(first_not_binary(&[0, 1, 2, 0, 255]), Some(2));
        assert_eq!(first_not_binary(&[]), None);
    }

    #[test]
    fn spread_table_puts_bit_i_in_byte_i() {
        assert_eq!(SPREAD[0b1000_0001], 0x0100_0000_0000_0001);
        assert_eq!(SPREAD[0xff], 0x0101_0101_0101_0101);
        for b in 0..256u64 {
            assert_eq!(gather8(SPREAD[b as usize]), b);
        }
    }
}
