//! Cave grids as files: the formats `run --from` reads a start grid from and `run --save`,
//! `search --save-dir` and Python's `save` write a cave to.
//!
//! | extension | written | read |
//! |---|---|---|
//! | `.txt` | `#` wall, `.` floor, one row a line | the same; `\r\n` and blank lines at the end accepted |
//! | `.csv` | `0`/`1` per cell, comma-separated, one row a line, no header | the same (spaces around a value allowed) |
//! | `.npy` | numpy's format 1.0, `uint8`, C order, shape `(rows, cols)` | any 2-D array of bool, integers or floats holding only 0 and 1, C or Fortran order, either byte order |
//! | `.json` | `rows`, `cols`, `cells` (rows of 0/1), `recipe` (name and TOML), `seed`, `metrics`, `spawn`, `exit` | `cells` |
//! | `.tmj` / `.tmx` | a Tiled map: one tile layer, an embedded two-tile tileset, spawn and exit as objects | the first tile layer |
//! | `.png` | one pixel per cell, black wall, white floor (8-bit grey) | any PNG: a pixel is WALL when its luminance is below half (`0.299 R + 0.587 G + 0.114 B < 128` on 8 bits) and it is not transparent (alpha at least half) |
//!
//! A Tiled map names its tileset's picture, [`TILES_PNG`], a file beside the map (Tiled reads
//! no picture embedded in a map): writing a map writes that picture too, the same bytes for
//! every map, so many maps in one folder share it.
//!
//! Reading follows the file-safety model of [`crate::io`]: only regular files, at most
//! [`MAX_INPUT`] bytes, checked before the first byte is read. Writing is atomic and replaces
//! an existing file only when it holds the same bytes, unless forced. A bad file is one error
//! naming the file and the line and column (or the cell) at fault.

mod decode;
mod encode;
mod tiled;

use std::fmt;
use std::path::{Path, PathBuf};

use cavesweep_core::grid::{Grid, GridError};
use cavesweep_core::recipe::Recipe;

use crate::io::{self, ReplaceError};

pub use encode::encode;
pub use tiled::tiles_png;

/// The largest map file read: 1 GiB (a 32768 x 32768 grid as text, with its newlines).
pub const MAX_INPUT: u64 = 1 << 30;

/// The tileset picture a Tiled map refers to, written beside it: two 16x16 tiles, floor then
/// wall, in the colours of cavesweep's pictures.
pub const TILES_PNG: &str = "cavesweep-tiles.png";

/// Pixels per tile side in the Tiled maps.
pub const TILE: usize = 16;

/// A map file format, chosen by the file name's extension (case does not matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `#`/`.` text.
    Txt,
    /// 0/1 values, comma-separated.
    Csv,
    /// A numpy array.
    Npy,
    /// The grid and what cavesweep knows of it, as JSON.
    Json,
    /// A Tiled map, JSON form.
    Tmj,
    /// A Tiled map, XML form.
    Tmx,
    /// A picture, one pixel per cell.
    Png,
}

impl Format {
    /// Every format, in the order of the module docs.
    pub const ALL: [Format; 7] = [
        Format::Txt,
        Format::Csv,
        Format::Npy,
        Format::Json,
        Format::Tmj,
        Format::Tmx,
        Format::Png,
    ];

    /// The extension without its dot: `txt`, `csv`, ...
    pub fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Csv => "csv",
            Format::Npy => "npy",
            Format::Json => "json",
            Format::Tmj => "tmj",
            Format::Tmx => "tmx",
            Format::Png => "png",
        }
    }

    /// The format a path's extension names.
    pub fn of_path(path: &Path) -> Result<Format, MapFileError> {
        path.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse().ok())
            .ok_or_else(|| MapFileError::Format(path.to_path_buf()))
    }

    /// Whether a file of this format refers to [`TILES_PNG`] beside it.
    pub fn needs_tiles(self) -> bool {
        matches!(self, Format::Tmj | Format::Tmx)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

impl std::str::FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        let s = s.trim().trim_start_matches('.').to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.extension() == s)
            .ok_or_else(|| UnknownFormat(cavesweep_core::quote::quote(&s)))
    }
}

/// A format name that is none of [`Format::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("unknown map format {0} (known: txt, csv, npy, json, tmj, tmx, png)")]
pub struct UnknownFormat(String);

/// What a map file holds besides the cells, where the format has room for it (JSON and the
/// Tiled maps): the recipe and seed that made the cave, its metrics, spawn and exit.
#[derive(Debug, Clone, Copy, Default)]
pub struct MapInfo<'a> {
    /// The recipe that made the cave.
    pub recipe: Option<&'a Recipe>,
    /// The cave's seed.
    pub seed: Option<u64>,
    /// Metric names and values (NaN is written as null).
    pub metrics: &'a [(&'a str, f64)],
    /// The spawn cell `(row, column)`.
    pub spawn: Option<(usize, usize)>,
    /// The exit cell `(row, column)`.
    pub exit: Option<(usize, usize)>,
}

/// Why a map file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum MapFileError {
    /// The file name's extension names no format.
    #[error(
        "{}: cannot tell the map format from the name (it should end in .txt, .csv, .npy, .json, .tmj, .tmx or .png)",
        .0.display()
    )]
    Format(PathBuf),
    /// The file could not be opened or read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file's contents are not a grid of its format; `what` says where and why.
    #[error("{}: {what}", path.display())]
    Bad {
        /// The file.
        path: PathBuf,
        /// The line and column (or cell) at fault, and the problem.
        what: String,
    },
    /// The grid's shape is empty or too large.
    #[error("{}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The shape's problem.
        source: GridError,
    },
    /// A file holds other bytes where this one would be written (the caller may force).
    #[error(transparent)]
    Replace(#[from] ReplaceError),
    /// Writing failed.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl MapFileError {
    /// What the caller can do: force the replacement of a file that holds something else.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        match self {
            MapFileError::Replace(e) => e.remedy(),
            _ => None,
        }
    }
}

/// A problem found in a file's contents, before the caller names the file.
#[derive(Debug)]
pub(crate) enum Problem {
    /// Where and what, in words.
    Bad(String),
    /// An empty or too-large shape.
    Shape(GridError),
}

impl From<GridError> for Problem {
    fn from(e: GridError) -> Problem {
        Problem::Shape(e)
    }
}

/// `Problem::Bad` from a format string.
macro_rules! bad {
    ($($t:tt)*) => { $crate::mapfile::Problem::Bad(format!($($t)*)) };
}
pub(crate) use bad;

/// Read the grid in `path`, its format from its extension.
pub fn read(path: &Path) -> Result<Grid, MapFileError> {
    let format = Format::of_path(path)?;
    let read = |source| MapFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let bytes = io::folder::read_all_capped(io::open_input(path).map_err(read)?, MAX_INPUT)
        .map_err(read)?;
    decode_problem(format, &bytes).map_err(|p| match p {
        Problem::Bad(what) => MapFileError::Bad {
            path: path.to_path_buf(),
            what,
        },
        Problem::Shape(source) => MapFileError::Shape {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// The grid in `bytes` of format `format` (what [`read`] does after reading the file); the
/// error says where and what, without a file name.
pub fn decode(format: Format, bytes: &[u8]) -> Result<Grid, String> {
    decode_problem(format, bytes).map_err(|p| match p {
        Problem::Bad(s) => s,
        Problem::Shape(e) => e.to_string(),
    })
}

fn decode_problem(format: Format, bytes: &[u8]) -> Result<Grid, Problem> {
    match format {
        Format::Txt => decode::txt(bytes),
        Format::Csv => decode::csv(bytes),
        Format::Npy => decode::npy(bytes),
        Format::Json => decode::json(bytes),
        Format::Tmj => tiled::read_tmj(bytes),
        Format::Tmx => tiled::read_tmx(bytes),
        Format::Png => decode::png(bytes),
    }
}

/// The files saving `grid` at `path` writes: the map itself, and [`TILES_PNG`] beside a Tiled
/// map. Each is `(path, bytes)`.
pub fn files(
    path: &Path,
    grid: &Grid,
    info: &MapInfo,
) -> Result<Vec<(PathBuf, Vec<u8>)>, MapFileError> {
    let format = Format::of_path(path)?;
    let mut out = vec![(path.to_path_buf(), encode(format, grid, info))];
    if format.needs_tiles() {
        let dir = path.parent().unwrap_or(Path::new(""));
        out.push((dir.join(TILES_PNG), tiled::tiles_png()));
    }
    Ok(out)
}

/// Write several prepared files (from [`files`]): all are checked first, so a refusal writes
/// none; without `force` a file already there is replaced only when it holds the same bytes.
/// Each file is written atomically.
pub fn write_all(files: &[(PathBuf, Vec<u8>)], force: bool) -> Result<(), MapFileError> {
    io::check_writable(files.iter().map(|(p, _)| p.as_path()))?;
    if !force {
        io::check_no_replace(files.iter().map(|(p, b)| (p.as_path(), b.as_slice())))?;
    }
    // All or none (a missing or read-only folder, a full disk): see `io::write_files`. The
    // tileset picture shared by the maps of a folder is one path given twice with the same
    // bytes, written once.
    let files: Vec<(&Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    io::write_files(&files)?;
    Ok(())
}

/// Save `grid` at `path` in the format its extension names (with [`TILES_PNG`] beside a Tiled
/// map); see [`write_all`] for `force`.
pub fn save(path: &Path, grid: &Grid, info: &MapInfo, force: bool) -> Result<(), MapFileError> {
    write_all(&files(path, grid, info)?, force)
}

#[cfg(test)]
mod tests;
