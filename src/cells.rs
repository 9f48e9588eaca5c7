//! One byte per cell: fast conversion between a bit-packed [`Grid`] and rows of bytes
//! (0 = FLOOR, 1 = WALL), the representation numpy users hold caves in.
//!
//! [`Grid::to_bytes`] and [`Grid::from_bytes`] go cell by cell and allocate; these work a word
//! (64 cells) at a time into and out of buffers the caller owns, so the Python package can fill
//! a numpy array of a million caves without a per-cell branch: unpacking is one 256-entry table
//! lookup per 8 cells, packing one multiply per 8 cells.

use crate::grid::Grid;

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
    let row = g.row(y);
    // Whole words: 64 cells, eight table lookups and eight 8-byte stores, no bounds checks.
    let mut blocks = out.chunks_exact_mut(64);
    for (dst, &w) in (&mut blocks).zip(row) {
        for (j, d) in dst.chunks_exact_mut(8).enumerate() {
            d.copy_from_slice(&SPREAD[((w >> (8 * j)) & 0xff) as usize].to_le_bytes());
        }
    }
    let tail = blocks.into_remainder();
    if !tail.is_empty() {
        let mut w = row[row.len() - 1];
        let mut groups = tail.chunks_exact_mut(8);
        for d in &mut groups {
            d.copy_from_slice(&SPREAD[(w & 0xff) as usize].to_le_bytes());
            w >>= 8;
        }
        // The last 1..7 cells one byte each (a variable-length copy would call memcpy).
        for (i, d) in groups.into_remainder().iter_mut().enumerate() {
            *d = ((w >> i) & 1) as u8;
        }
    }
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

/// Set row `y` of `g` from `cells` (`g.cols()` bytes, each 0 = FLOOR or 1 = WALL; other values
/// give unspecified cells: check them first, see [`first_not_binary`]).
pub fn pack_row(g: &mut Grid, y: usize, cells: &[u8]) {
    assert_eq!(cells.len(), g.cols(), "row buffer has the wrong length");
    let row = g.row_mut(y);
    let word = |src: &[u8]| {
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
    };
    let mut blocks = cells.chunks_exact(64);
    for (w, src) in row.iter_mut().zip(&mut blocks) {
        *w = word(src);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // The last word's padding bits stay zero: `word` sets only the tail's bits.
        *row.last_mut().expect("a row has a word") = word(tail);
    }
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
