//! The bit-packed cave grid: one bit per cell (WALL = 1, FLOOR = 0), rows of `u64` words.
//!
//! Layout (the kernels depend on it, nothing else should):
//!
//! ```text
//!   stride = 1 guard word + round_up(words_per_row, 4) + 1 guard word
//!   data   = (rows + 2) * stride words: guard row, rows 0..rows, guard row
//! ```
//!
//! Bit `x % 64` of word `x / 64` of a row holds column `x`. The guard words and guard rows let the
//! step kernels read every neighbour word of a row with plain (unaligned) loads, 4 words at a time,
//! without bounds checks or edge special cases: before a step, [`Grid::prepare_edges`] writes what
//! cells outside the grid read as (floor, wall or the wrapped-around cells) into the guards and the
//! padding bits; [`Grid::clear_edges`] restores the invariant that every bit outside the grid is 0,
//! so popcounts and comparisons never see them.

use std::fmt;

use crate::rule::Outside;

/// Largest accepted side length. 8192 x 8192 is the documented minimum we support; the limit is
/// set at 65536 so that `rows * cols` always fits comfortably and a typo fails fast.
pub const MAX_SIDE: usize = 65_536;

/// Largest accepted cell count (2^30 cells = 128 MiB per grid buffer).
pub const MAX_CELLS: usize = 1 << 30;

/// Why a grid could not be made or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    /// A side is 0 (also: grid text with no non-blank line).
    #[error("grid size {rows}x{cols} is empty: rows and cols must be at least 1")]
    Empty {
        /// Requested number of rows.
        rows: usize,
        /// Requested number of columns (cells per row).
        cols: usize,
    },
    /// A side exceeds [`MAX_SIDE`] or `rows * cols` exceeds [`MAX_CELLS`].
    #[error(
        "grid size {rows}x{cols} is too large (each side at most {MAX_SIDE}, at most {MAX_CELLS} cells)"
    )]
    TooLarge {
        /// Requested number of rows.
        rows: usize,
        /// Requested number of columns (cells per row).
        cols: usize,
    },
    /// A line of [`Grid::from_text`] input is not as long as the first one.
    #[error("grid text line {line}: has {got} cells, expected {expected}")]
    RaggedText {
        /// 1-based line number, counting non-blank lines only (blank lines are skipped).
        line: usize,
        /// Characters (cells) on that line, after trimming whitespace.
        got: usize,
        /// Characters on the first line: the grid's column count.
        expected: usize,
    },
    /// [`Grid::from_text`] input holds a character other than `#` or `.`.
    #[error("grid text line {line}, column {col}: {ch:?} is not '#' (wall) or '.' (floor)")]
    BadChar {
        /// 1-based line number, counting non-blank lines only (blank lines are skipped).
        line: usize,
        /// 1-based character position within the trimmed line.
        col: usize,
        /// The offending character.
        ch: char,
    },
}

/// A rows x cols cave, bit-packed. Cheap to clone (one allocation); reuse with
/// [`Grid::copy_from`] in hot loops.
#[derive(Clone, PartialEq, Eq)]
pub struct Grid {
    rows: usize,
    cols: usize,
    wpr: usize,
    stride: usize,
    data: Vec<u64>,
}

impl Grid {
    /// An all-FLOOR grid. Errors on an empty or oversized shape instead of failing to allocate.
    pub fn new(rows: usize, cols: usize) -> Result<Grid, GridError> {
        check_shape(rows, cols)?;
        let wpr = cols.div_ceil(64);
        let stride = wpr.next_multiple_of(4) + 2;
        Ok(Grid {
            rows,
            cols,
            wpr,
            stride,
            data: vec![0; (rows + 2) * stride],
        })
    }

    /// Number of rows (the y extent), 1..=[`MAX_SIDE`].
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns, i.e. cells per row (the x extent), 1..=[`MAX_SIDE`].
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Number of cells, `rows * cols`.
    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }
    /// Words holding the cells of one row, `ceil(cols / 64)`.
    pub fn words_per_row(&self) -> usize {
        self.wpr
    }
    /// Words between the starts of consecutive rows in [`Grid::raw`] (kernel use).
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// Mask of the valid bits of the last word of a row.
    pub fn last_word_mask(&self) -> u64 {
        match self.cols % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        }
    }

    /// Index in [`Grid::raw`] of word 0 of row `y`; `y` may be -1 or `rows` (the guard rows).
    #[inline(always)]
    pub fn row_offset(&self, y: isize) -> usize {
        ((y + 1) as usize) * self.stride + 1
    }

    /// The words of row `y` (padding bits are zero).
    #[inline]
    pub fn row(&self, y: usize) -> &[u64] {
        let o = self.row_offset(y as isize);
        &self.data[o..o + self.wpr]
    }

    /// The words of row `y`, mutable. Callers must keep padding bits zero (see
    /// [`Grid::last_word_mask`]); [`Grid::clear_edges`] restores it if in doubt.
    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [u64] {
        let o = self.row_offset(y as isize);
        let w = self.wpr;
        &mut self.data[o..o + w]
    }

    /// The whole buffer including guards (kernel use).
    #[inline]
    pub fn raw(&self) -> &[u64] {
        &self.data
    }
    /// The whole buffer including guards, mutable (kernel use).
    #[inline]
    pub fn raw_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// Cell `(y, x)`: true = WALL.
    #[inline]
    pub fn get(&self, y: usize, x: usize) -> bool {
        debug_assert!(y < self.rows && x < self.cols);
        (self.data[self.row_offset(y as isize) + x / 64] >> (x % 64)) & 1 == 1
    }

    /// Set cell `(y, x)` to WALL (`true`) or FLOOR.
    #[inline]
    pub fn set(&mut self, y: usize, x: usize, wall: bool) {
        debug_assert!(y < self.rows && x < self.cols);
        let i = self.row_offset(y as isize) + x / 64;
        let bit = 1u64 << (x % 64);
        if wall {
            self.data[i] |= bit;
        } else {
            self.data[i] &= !bit;
        }
    }

    /// Set every cell to WALL or FLOOR.
    pub fn fill(&mut self, wall: bool) {
        self.data.fill(0);
        if wall {
            let mask = self.last_word_mask();
            for y in 0..self.rows {
                let row = self.row_mut(y);
                row.fill(!0);
                *row.last_mut().unwrap() = mask;
            }
        }
    }

    /// Copy the cells of `other` (same shape) without reallocating.
    pub fn copy_from(&mut self, other: &Grid) {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        self.data.copy_from_slice(&other.data);
    }

    /// Number of WALL cells (popcount; padding bits are zero), on the process's SIMD path.
    pub fn count_walls(&self) -> u64 {
        self.count_walls_on(crate::simd::Simd::active())
    }

    /// [`Grid::count_walls`] on a given SIMD path.
    pub fn count_walls_on(&self, simd: crate::simd::Simd) -> u64 {
        // Every bit outside the grid is zero between kernel calls, so the whole buffer can be
        // counted in one straight pass, vectorised in each clone (`vpopcntq`, or the `vpshufb`
        // nibble table).
        crate::simd_run!(simd, <I> (data: &'a [u64] = &self.data) -> u64 {
            data.iter().map(|w| w.count_ones() as u64).sum()
        })
    }

    /// Fraction of cells that are WALL.
    pub fn wall_fraction(&self) -> f64 {
        self.count_walls() as f64 / self.cells() as f64
    }

    /// Force the outer ring (first/last row and column) to WALL: the chapter's `solid_border`.
    pub fn solid_border(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        let mask = self.last_word_mask();
        for y in [0, rows - 1] {
            let row = self.row_mut(y);
            row.fill(!0);
            *row.last_mut().unwrap() = mask;
        }
        let last = cols - 1;
        for y in 1..rows.saturating_sub(1) {
            let o = self.row_offset(y as isize);
            self.data[o] |= 1;
            self.data[o + last / 64] |= 1u64 << (last % 64);
        }
    }

    /// Write into the guard words, guard rows and padding bits what cells outside the grid read as,
    /// so a kernel can load neighbours blindly. Must be undone by [`Grid::clear_edges`].
    ///
    /// Only the bits adjacent to the grid matter: bit 63 of the left guard word, the first padding
    /// bit after column `cols - 1` (bit 0 of the next word when `cols % 64 == 0`), and the guard
    /// rows. For `floor` and `wall` the whole guard is filled; for `wrap` exactly those bits get
    /// the wrapped-around cell, and the guard rows get copies of the last and first rows.
    /// (Inlined into the SIMD clones that step grids.)
    #[inline(always)]
    pub fn prepare_edges(&mut self, outside: Outside) {
        if outside == Outside::Floor {
            return; // the invariant (everything outside is 0) already reads as FLOOR
        }
        let (rows, cols, wpr, stride) = (self.rows, self.cols, self.wpr, self.stride);
        let rpad = cols % 64; // padding bit index in the last word, if any
        for y in 0..rows {
            let o = self.row_offset(y as isize);
            let (left, right_bit) = match outside {
                Outside::Floor => (0, 0),
                Outside::Wall => (!0, 1),
                Outside::Wrap => {
                    let last = (self.data[o + (cols - 1) / 64] >> ((cols - 1) % 64)) & 1;
                    let first = self.data[o] & 1;
                    (last << 63, first)
                }
            };
            self.data[o - 1] = left;
            let fill = match outside {
                Outside::Wall => !0,
                _ => 0,
            };
            if rpad != 0 {
                self.data[o + wpr - 1] |= right_bit << rpad;
                if outside == Outside::Wall {
                    self.data[o + wpr - 1] |= !self.last_word_mask();
                }
            }
            for w in wpr..stride - 1 {
                self.data[o + w] = fill;
            }
            if rpad == 0 {
                self.data[o + wpr] = right_bit | (fill & !1);
            }
        }
        // Guard rows: a copy of the wrapped row (with its own prepared guards) or a constant.
        let top = 0..stride;
        let bottom = (rows + 1) * stride..(rows + 2) * stride;
        match outside {
            Outside::Floor => {
                self.data[top].fill(0);
                self.data[bottom].fill(0);
            }
            Outside::Wall => {
                self.data[top].fill(!0);
                self.data[bottom].fill(!0);
            }
            Outside::Wrap => {
                let last = rows * stride..(rows + 1) * stride;
                let first = stride..2 * stride;
                self.data.copy_within(last, 0);
                self.data.copy_within(first, (rows + 1) * stride);
            }
        }
    }

    /// Undo [`Grid::prepare_edges`]`(outside)`: every bit outside the grid is zero again.
    #[inline(always)]
    pub fn clear_edges_after(&mut self, outside: Outside) {
        if outside != Outside::Floor {
            self.clear_edges();
        }
    }

    /// Restore the invariant: every bit outside the grid is zero.
    #[inline(always)]
    pub fn clear_edges(&mut self) {
        let (rows, wpr, stride) = (self.rows, self.wpr, self.stride);
        let mask = self.last_word_mask();
        self.data[..stride].fill(0);
        self.data[(rows + 1) * stride..].fill(0);
        for y in 0..rows {
            let o = self.row_offset(y as isize);
            self.data[o - 1] = 0;
            self.data[o + wpr - 1] &= mask;
            self.data[o + wpr..o - 1 + stride].fill(0);
        }
    }

    /// Parse `#` (wall) / `.` (floor) text, one line per row; blank lines are ignored.
    pub fn from_text(text: &str) -> Result<Grid, GridError> {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let rows = lines.len();
        let cols = lines.first().map_or(0, |l| l.chars().count());
        let mut g = Grid::new(rows, cols)?;
        for (y, line) in lines.iter().enumerate() {
            let got = line.chars().count();
            if got != cols {
                return Err(GridError::RaggedText {
                    line: y + 1,
                    got,
                    expected: cols,
                });
            }
            for (x, ch) in line.chars().enumerate() {
                match ch {
                    '#' => g.set(y, x, true),
                    '.' => {}
                    _ => {
                        return Err(GridError::BadChar {
                            line: y + 1,
                            col: x + 1,
                            ch,
                        });
                    }
                }
            }
        }
        Ok(g)
    }

    /// `#`/`.` text, one line per row, each ended by `\n`.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.rows * (self.cols + 1));
        for y in 0..self.rows {
            for x in 0..self.cols {
                s.push(if self.get(y, x) { '#' } else { '.' });
            }
            s.push('\n');
        }
        s
    }

    /// One byte per cell (1 = WALL), row-major: the oracle's representation.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.cells());
        for y in 0..self.rows {
            for x in 0..self.cols {
                v.push(self.get(y, x) as u8);
            }
        }
        v
    }

    /// Build from one byte per cell (non-zero = WALL), row-major.
    pub fn from_bytes(rows: usize, cols: usize, bytes: &[u8]) -> Result<Grid, GridError> {
        let mut g = Grid::new(rows, cols)?;
        assert_eq!(bytes.len(), rows * cols, "byte grid has the wrong length");
        for y in 0..rows {
            for x in 0..cols {
                if bytes[y * cols + x] != 0 {
                    g.set(y, x, true);
                }
            }
        }
        Ok(g)
    }

    /// The transposed grid (`cols x rows`): cell (y, x) moves to (x, y). Used to run a
    /// column-major in-place scan as a row-major one.
    pub fn transpose_into(&self, out: &mut Grid) {
        assert_eq!((out.rows, out.cols), (self.cols, self.rows));
        out.data.fill(0);
        for y in 0..self.rows {
            let row = self.row(y);
            for (wi, &w) in row.iter().enumerate() {
                let mut bits = w;
                while bits != 0 {
                    let x = wi * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = out.row_offset(x as isize) + y / 64;
                    out.data[i] |= 1u64 << (y % 64);
                }
            }
        }
    }
}

impl AsMut<Grid> for Grid {
    fn as_mut(&mut self) -> &mut Grid {
        self
    }
}

/// Check a shape before anything is allocated.
pub fn check_shape(rows: usize, cols: usize) -> Result<(), GridError> {
    if rows == 0 || cols == 0 {
        return Err(GridError::Empty { rows, cols });
    }
    if rows > MAX_SIDE || cols > MAX_SIDE || rows * cols > MAX_CELLS {
        return Err(GridError::TooLarge { rows, cols });
    }
    Ok(())
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Grid {}x{}:", self.rows, self.cols)?;
        f.write_str(&self.to_text())
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip_and_count() {
        let t = "#..#\n.##.\n....\n";
        let g = Grid::from_text(t).unwrap();
        assert_eq!((g.rows(), g.cols()), (3, 4));
        assert_eq!(g.to_text(), t);
        assert_eq!(g.count_walls(), 4);
        assert!(g.get(0, 0) && !g.get(0, 1) && g.get(1, 2));
    }

    #[test]
    fn shape_errors() {
        assert!(matches!(Grid::new(0, 5), Err(GridError::Empty { .. })));
        assert!(matches!(Grid::new(5, 0), Err(GridError::Empty { .. })));
        assert!(matches!(
            Grid::new(MAX_SIDE + 1, 1),
            Err(GridError::TooLarge { .. })
        ));
        assert!(matches!(
            Grid::new(40_000, 40_000),
            Err(GridError::TooLarge { .. })
        ));
        assert!(Grid::new(8192, 8192).is_ok());
        assert!(matches!(
            Grid::from_text("#.\n#"),
            Err(GridError::RaggedText { line: 2, .. })
        ));
        assert!(matches!(
            Grid::from_text("#x"),
            Err(GridError::BadChar { col: 2, .. })
        ));
        assert!(matches!(Grid::from_text(""), Err(GridError::Empty { .. })));
    }

    #[test]
    fn fill_and_border_keep_padding_zero() {
        for cols in [1, 2, 63, 64, 65, 130] {
            let mut g = Grid::new(3, cols).unwrap();
            g.fill(true);
            assert_eq!(g.count_walls(), 3 * cols as u64);
            g.fill(false);
            g.solid_border();
            let expect = if cols <= 2 { 3 * cols } else { 2 * cols + 2 };
            assert_eq!(g.count_walls(), expect as u64, "cols {cols}");
            let before = g.clone();
            for o in [Outside::Floor, Outside::Wall, Outside::Wrap] {
                g.prepare_edges(o);
                g.clear_edges();
                assert_eq!(g, before);
            }
        }
    }

    #[test]
    fn transpose_twice_is_identity() {
        let g = Grid::from_text("#..#.\n.##..\n....#\n").unwrap();
        let mut t = Grid::new(5, 3).unwrap();
        g.transpose_into(&mut t);
        assert_eq!(t.to_text(), "#..\n.#.\n.#.\n#..\n..#\n");
        let mut back = Grid::new(3, 5).unwrap();
        t.transpose_into(&mut back);
        assert_eq!(back, g);
    }
}
