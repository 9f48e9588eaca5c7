//! Pictures of caves: PNG (a few pixels per cell) and ASCII.
//!
//! In a PNG, walls are dark, floor the spawn reaches is light, and floor it cannot reach (a
//! sealed pocket, or all floor when the spawn is a wall) is sky blue, so a cave that fails a
//! connectivity gate shows why at a glance. A green ring marks the spawn and an orange diamond
//! the exit, both edged in black, with the cell itself showing inside, big enough to find on a
//! thumbnail. The colours are from the
//! Okabe-Ito palette, told apart with any common colour-vision deficiency, and the markers
//! differ in shape as well as colour.

use std::io::Write;
use std::path::Path;

use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{Connectivity, Measurer};
use cavesweep_core::recipe::Recipe;

/// Wall cells (a dark grey-violet).
pub const WALL: [u8; 3] = [52, 46, 58];
/// Floor the spawn reaches.
pub const FLOOR: [u8; 3] = [226, 214, 186];
/// Floor the spawn cannot reach.
pub const UNREACHED: [u8; 3] = [86, 180, 233];
/// The spawn's ring (Okabe-Ito bluish green).
pub const SPAWN: [u8; 3] = [0, 158, 115];
/// The exit's diamond (Okabe-Ito orange).
pub const EXIT: [u8; 3] = [230, 159, 0];
const OUTLINE: [u8; 3] = [0, 0, 0];

/// Why a picture could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Reading the file already at `path` or writing the picture there failed.
    #[error("cannot write {path}")]
    Io {
        /// The picture's path, as displayed.
        path: String,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The PNG encoder refused the pixels.
    #[error("cannot encode PNG {path}: {msg}")]
    Png {
        /// The picture's path, as displayed (empty when [`png_bytes`] encodes in memory).
        path: String,
        /// The encoder's message.
        msg: String,
    },
    /// The picture would have more than [`MAX_PIXELS`] pixels (found by [`check_size`] before
    /// anything is generated).
    #[error(
        "a {rows}x{cols} cave at {scale} pixels per cell is a {width}x{height}-pixel picture, \
         over the limit of {MAX_PIXELS} pixels: give a smaller --scale"
    )]
    TooLarge {
        /// The cave's rows.
        rows: usize,
        /// The cave's columns.
        cols: usize,
        /// Pixels per cell asked for (`--scale`, at least 1).
        scale: usize,
        /// The picture's width in pixels (`cols * scale`).
        width: u64,
        /// The picture's height in pixels (`rows * scale`).
        height: u64,
    },
    /// Without `force`, a different file is already at `path` (a rerun that would write the
    /// same bytes is not refused).
    #[error("{path} exists and holds another picture")]
    Exists {
        /// The picture's path, as displayed.
        path: String,
    },
}

impl RenderError {
    /// What the user can do about it: force, for a picture that is in the way.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        matches!(self, RenderError::Exists { .. }).then_some(crate::error::Remedy::Force)
    }
}

/// The most pixels a picture may have: 2^28 (16384 x 16384), 768 MiB of RGB before it is
/// encoded. A 16384 x 16384 cave at `--scale 64` would otherwise ask for 3 TiB and abort.
pub const MAX_PIXELS: u64 = 1 << 28;

/// Refuse a picture of a `rows x cols` cave at `scale` pixels per cell that is over
/// [`MAX_PIXELS`]. Checked before anything is generated or allocated.
pub fn check_size(rows: usize, cols: usize, scale: usize) -> Result<(), RenderError> {
    let scale = scale.max(1);
    let (width, height) = (cols as u64 * scale as u64, rows as u64 * scale as u64);
    if width.saturating_mul(height) > MAX_PIXELS {
        return Err(RenderError::TooLarge {
            rows,
            cols,
            scale,
            width,
            height,
        });
    }
    Ok(())
}

/// What a cave picture marks: the spawn and exit cells, and the adjacency that decides which
/// floor the spawn reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marks {
    /// The spawn cell as `(row, column)`, marked by a ring; `None` marks none and leaves all floor
    /// unreached.
    pub spawn: Option<(usize, usize)>,
    /// The exit cell as `(row, column)`, marked by a diamond; `None` when the recipe has no exit.
    pub exit: Option<(usize, usize)>,
    /// The adjacency (4 or 8 neighbours) that decides which floor the spawn reaches.
    pub connectivity: Connectivity,
}

impl Marks {
    /// The spawn, exit and connectivity of `recipe`.
    pub fn of(recipe: &Recipe) -> Marks {
        Marks {
            spawn: Some(recipe.spawn_cell()),
            exit: recipe.exit_cell(),
            connectivity: recipe.connectivity,
        }
    }
}

/// Per cell (row-major): floor the spawn reaches. All false for a wall spawn or no spawn.
pub fn reached(g: &Grid, spawn: Option<(usize, usize)>, conn: Connectivity) -> Vec<bool> {
    let mut out = vec![false; g.cells()];
    let Some((sy, sx)) = spawn else { return out };
    let mut measurer = Measurer::new();
    let comps = measurer.components(g, conn);
    if let Some(label) = comps.label(sy, sx) {
        for y in 0..g.rows() {
            for x in 0..g.cols() {
                out[y * g.cols() + x] = comps.label(y, x) == Some(label);
            }
        }
    }
    out
}

/// RGB pixels of `g` at `scale` pixels per cell: walls, reached and unreached floor, markers.
pub fn rgb(g: &Grid, scale: usize, marks: &Marks) -> Vec<u8> {
    let scale = scale.max(1);
    let (w, h) = (g.cols() * scale, g.rows() * scale);
    let reach = reached(g, marks.spawn, marks.connectivity);
    let mut px = Vec::with_capacity(w * h * 3);
    for py in 0..h {
        let y = py / scale;
        for pxx in 0..w {
            px.extend_from_slice(&colour(g, &reach, y, pxx / scale));
        }
    }
    markers(&mut px, w, h, scale, marks, 1);
    px
}

/// The colour of cell `(y, x)`: wall, floor the spawn reaches (`reach`, from [`reached`]), or
/// floor it does not.
fn colour(g: &Grid, reach: &[bool], y: usize, x: usize) -> [u8; 3] {
    if g.get(y, x) {
        WALL
    } else if reach[y * g.cols() + x] {
        FLOOR
    } else {
        UNREACHED
    }
}

/// The exit's diamond and the spawn's ring (drawn last, on top), at the pixel of their cell
/// divided by `k` (the block size of a downsampled picture; 1 otherwise).
fn markers(px: &mut [u8], w: usize, h: usize, scale: usize, marks: &Marks, k: usize) {
    if let Some((y, x)) = marks.exit {
        marker(px, w, h, scale, (y / k, x / k), EXIT, true);
    }
    if let Some((y, x)) = marks.spawn {
        marker(px, w, h, scale, (y / k, x / k), SPAWN, false);
    }
}

/// RGB pixels of `g` with one pixel per `k x k` block of cells, each the average colour of its
/// cells (walls, reached and unreached floor), and the markers at their blocks: a picture of a
/// cave too big to show cell by cell (a report's thumbnail of a 20000 x 20000 cave). Returns
/// the width, height and pixels.
pub fn rgb_downsampled(g: &Grid, k: usize, marks: &Marks) -> (usize, usize, Vec<u8>) {
    let k = k.max(1);
    let (w, h) = (g.cols().div_ceil(k), g.rows().div_ceil(k));
    let reach = reached(g, marks.spawn, marks.connectivity);
    // Per block: the sums of its cells' colour channels, and its cell count.
    let mut sums = vec![[0u64; 4]; w * h];
    for y in 0..g.rows() {
        let row = &mut sums[(y / k) * w..(y / k + 1) * w];
        for x in 0..g.cols() {
            let c = colour(g, &reach, y, x);
            let s = &mut row[x / k];
            s[0] += c[0] as u64;
            s[1] += c[1] as u64;
            s[2] += c[2] as u64;
            s[3] += 1;
        }
    }
    let mut px = Vec::with_capacity(w * h * 3);
    for s in &sums {
        let n = s[3].max(1);
        px.extend((0..3).map(|i| ((s[i] + n / 2) / n) as u8));
    }
    markers(&mut px, w, h, 1, marks, k);
    (w, h, px)
}

/// Draw a marker around cell `(y, x)`: a ring, or a diamond outline when `diamond`, edged in
/// black. The cell itself stays visible inside (a spawn on a wall shows as one). The ring's
/// width grows with the cell size but never drops below 3 pixels, so it stays visible on a
/// small thumbnail.
fn marker(
    px: &mut [u8],
    w: usize,
    h: usize,
    scale: usize,
    (y, x): (usize, usize),
    color: [u8; 3],
    diamond: bool,
) {
    let s = scale as f64;
    // Inside `hole` the cell shows (it covers the cell's half-diagonal, 0.71 cells).
    let hole = s * 0.75 + 0.5;
    let r = hole + 1.0 + (s * 0.8).max(3.0);
    let (cy, cx) = ((y as f64 + 0.5) * s, (x as f64 + 0.5) * s);
    let reach = r.ceil() as isize + 2;
    for dy in -reach..=reach {
        for dx in -reach..=reach {
            let (py, pxx) = (cy as isize + dy, cx as isize + dx);
            if py < 0 || pxx < 0 || py as usize >= h || pxx as usize >= w {
                continue;
            }
            let (fy, fx) = (py as f64 + 0.5 - cy, pxx as f64 + 0.5 - cx);
            let d = if diamond {
                (fy.abs() + fx.abs()) / std::f64::consts::SQRT_2
            } else {
                (fy * fy + fx * fx).sqrt()
            };
            let c = if d < hole {
                continue;
            } else if d < hole + 1.0 || (d > r && d <= r + 1.0) {
                OUTLINE
            } else if d <= r {
                color
            } else {
                continue;
            };
            let i = (py as usize * w + pxx as usize) * 3;
            px[i..i + 3].copy_from_slice(&c);
        }
    }
}

/// Encode 8-bit RGB pixels as PNG bytes.
pub fn encode_png(width: usize, height: usize, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut buf, width as u32, height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header()?;
        w.write_image_data(rgb)?;
    }
    Ok(buf)
}

/// `g` as PNG bytes (see [`rgb`]), within [`MAX_PIXELS`].
pub fn png_bytes(g: &Grid, scale: usize, marks: &Marks) -> Result<Vec<u8>, RenderError> {
    let scale = scale.max(1);
    check_size(g.rows(), g.cols(), scale)?;
    encode_png(g.cols() * scale, g.rows() * scale, &rgb(g, scale, marks)).map_err(|e| {
        RenderError::Png {
            path: String::new(),
            msg: e.to_string(),
        }
    })
}

/// Write `g` as a PNG. The file is written to a temporary name and renamed into place, so a
/// failed write never leaves a truncated picture under the requested name. Unless `force`, a
/// file already at `path` is replaced only when it holds exactly this picture (a rerun).
pub fn write_png(
    path: &Path,
    g: &Grid,
    scale: usize,
    marks: &Marks,
    force: bool,
) -> Result<(), RenderError> {
    let p = path.display().to_string();
    let buf = png_bytes(g, scale, marks).map_err(|e| match e {
        RenderError::Png { msg, .. } => RenderError::Png {
            path: p.clone(),
            msg,
        },
        e => e,
    })?;
    if !force {
        let same = crate::io::replaces_nothing(path, &buf).map_err(|source| RenderError::Io {
            path: p.clone(),
            source,
        })?;
        if !same {
            return Err(RenderError::Exists { path: p });
        }
    }
    crate::io::write_atomic(path, &buf).map_err(|source| RenderError::Io { path: p, source })
}

/// `#`/`.` lines with `S` and `E` at spawn and exit.
pub fn ascii(g: &Grid, spawn: Option<(usize, usize)>, exit: Option<(usize, usize)>) -> String {
    let mut out = Vec::with_capacity(g.rows() * (g.cols() + 1));
    for y in 0..g.rows() {
        for x in 0..g.cols() {
            out.push(if Some((y, x)) == spawn {
                b'S'
            } else if Some((y, x)) == exit {
                b'E'
            } else if g.get(y, x) {
                b'#'
            } else {
                b'.'
            });
        }
        out.write_all(b"\n").unwrap();
    }
    String::from_utf8(out).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_marks() -> Marks {
        Marks {
            spawn: None,
            exit: None,
            connectivity: Connectivity::Four,
        }
    }

    fn at(px: &[u8], w: usize, y: usize, x: usize) -> [u8; 3] {
        let i = (y * w + x) * 3;
        [px[i], px[i + 1], px[i + 2]]
    }

    #[test]
    fn pictures_over_the_pixel_limit_are_refused_before_drawing() {
        assert!(check_size(16384, 16384, 1).is_ok());
        assert!(check_size(90, 140, 64).is_ok());
        let err = check_size(16384, 16384, 64).unwrap_err().to_string();
        assert!(
            err.contains("1048576x1048576") && err.contains("--scale"),
            "{err}"
        );
        assert!(check_size(16385, 16384, 1).is_err());
        // A side beyond u32 still counts, without overflow.
        assert!(check_size(65536, 65536, 64).is_err());
    }

    #[test]
    fn write_png_replaces_only_the_same_picture_unless_forced() {
        let dir = std::env::temp_dir().join(format!("cavesweep-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.png");
        let a = Grid::from_text("#.\n..\n").unwrap();
        let b = Grid::from_text("..\n.#\n").unwrap();
        write_png(&p, &a, 2, &no_marks(), false).unwrap();
        write_png(&p, &a, 2, &no_marks(), false).unwrap();
        let before = std::fs::read(&p).unwrap();
        let err = write_png(&p, &b, 2, &no_marks(), false).unwrap_err();
        assert!(matches!(err, RenderError::Exists { .. }), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), before);
        write_png(&p, &b, 2, &no_marks(), true).unwrap();
        assert_ne!(std::fs::read(&p).unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_downsampled_picture_averages_each_block() {
        // 4x6 cells in 2x2 blocks: all wall, all (unreached) floor, half and half.
        let g = Grid::from_text("##..#.\n##..#.\n......\n......\n").unwrap();
        let (w, h, px) = rgb_downsampled(&g, 2, &no_marks());
        assert_eq!((w, h, px.len()), (3, 2, 18));
        assert_eq!(at(&px, w, 0, 0), WALL);
        assert_eq!(at(&px, w, 0, 1), UNREACHED);
        let mid = |a: u8, b: u8| (a as u64 + b as u64).div_ceil(2) as u8;
        assert_eq!(
            at(&px, w, 0, 2),
            [0, 1, 2].map(|i| mid(WALL[i], UNREACHED[i]))
        );
        assert_eq!(at(&px, w, 1, 2), UNREACHED);
        // A block past the edge averages only the cells it has.
        let (w, h, px) = rgb_downsampled(&g, 4, &no_marks());
        assert_eq!((w, h), (2, 1));
        let left =
            [0, 1, 2].map(|i| ((4 * WALL[i] as u64 + 12 * UNREACHED[i] as u64 + 8) / 16) as u8);
        assert_eq!(at(&px, w, 0, 0), left);
        // k = 1 is the picture at one pixel per cell.
        let (_, _, one) = rgb_downsampled(&g, 1, &no_marks());
        assert_eq!(one, rgb(&g, 1, &no_marks()));
    }

    #[test]
    fn ascii_marks_spawn_and_exit() {
        let g = Grid::from_text("#..\n...\n").unwrap();
        assert_eq!(ascii(&g, Some((1, 0)), Some((0, 2))), "#.E\nS..\n");
    }

    #[test]
    fn rgb_has_scale_squared_pixels_per_cell() {
        let g = Grid::from_text("#.\n").unwrap();
        let px = rgb(&g, 3, &no_marks());
        assert_eq!(px.len(), 2 * 3 * 3 * 3);
        assert_eq!(&px[0..3], &WALL);
        // No spawn: no floor is reached.
        assert_eq!(&px[9..12], &UNREACHED);
    }

    #[test]
    fn floor_the_spawn_cannot_reach_has_its_own_colour() {
        // A sealed pocket on the right; 4-connected, the diagonal does not join it.
        let text = "\
..........#.....
..........#.....
..........#.....
..........#.....
..........#.....
..........#.....
..........#.....
..........#.....
";
        let g = Grid::from_text(text).unwrap();
        let marks = Marks {
            spawn: Some((4, 2)),
            exit: Some((4, 13)),
            connectivity: Connectivity::Four,
        };
        let reach = reached(&g, marks.spawn, marks.connectivity);
        assert!(reach[0] && !reach[10] && !reach[11]);
        let s = 4;
        let px = rgb(&g, s, &marks);
        let w = g.cols() * s;
        assert_eq!(at(&px, w, 0, 0), FLOOR);
        assert_eq!(at(&px, w, 0, 10 * s), WALL);
        assert_eq!(at(&px, w, 0, 15 * s), UNREACHED);
        // The markers ring their cells, which show through.
        let (cy, cx) = (4 * s + s / 2, 2 * s + s / 2);
        assert_eq!(at(&px, w, cy, cx), FLOOR);
        assert!((cx..cx + 4 * s).any(|x| at(&px, w, cy, x) == SPAWN));
        assert!((13 * s..w).any(|x| at(&px, w, cy, x) == EXIT));
        // A wall spawn reaches nothing.
        let reach = reached(&g, Some((0, 10)), Connectivity::Four);
        assert!(reach.iter().all(|&r| !r));
    }
}
