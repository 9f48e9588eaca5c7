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

/// The width in pixels of a picture of a `rows x cols` cave at `scale` pixels per cell: a hex
/// cave's rows are shifted half a cell each ([`Marks::hex`]), widening it by half its height.
pub fn picture_width(rows: usize, cols: usize, scale: usize, hex: bool) -> usize {
    let scale = scale.max(1);
    cols * scale + if hex { hex_shift(rows, 0, scale) } else { 0 }
}

/// The pixels row `y` of a hex cave of `rows` rows is shifted right: half a cell per row below
/// it, so each cell sits between the two cells above it that are its neighbours (N and NW).
fn hex_shift(rows: usize, y: usize, cell: usize) -> usize {
    (rows - 1 - y) * cell / 2
}

/// Refuse a picture of a `rows x cols` cave at `scale` pixels per cell (`hex`: a hex cave's,
/// see [`picture_width`]) that is over [`MAX_PIXELS`]. Checked before anything is generated or
/// allocated.
pub fn check_size(rows: usize, cols: usize, scale: usize, hex: bool) -> Result<(), RenderError> {
    let scale = scale.max(1);
    let (width, height) = (
        picture_width(rows, cols, scale, hex) as u64,
        rows as u64 * scale as u64,
    );
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
    /// Whether the cave is a hex cave (connectivity 6): drawn with each row shifted half a
    /// cell from the one above, so every cell touches its six neighbours.
    pub fn hex(&self) -> bool {
        self.connectivity == Connectivity::Six
    }

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

/// The background of a hex cave's picture, beside its shifted rows.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];

/// RGB pixels of `g` at `scale` pixels per cell: walls, reached and unreached floor, markers;
/// [`picture_width`] pixels wide (a hex cave's rows shifted, [`Marks::hex`]).
pub fn rgb(g: &Grid, scale: usize, marks: &Marks) -> Vec<u8> {
    let scale = scale.max(1);
    let (w, h) = (
        picture_width(g.rows(), g.cols(), scale, marks.hex()),
        g.rows() * scale,
    );
    let reach = reached(g, marks.spawn, marks.connectivity);
    let mut px = Vec::with_capacity(w * h * 3);
    // A cell row's pixel row is made once, a cell's colour looked up once, and the row copied
    // for the cell's other `scale - 1` pixel rows (a 90x140 cave at scale 6 took ~1 ms a pixel
    // at a time; the explorer draws one per key press).
    for y in 0..g.rows() {
        let shift = if marks.hex() {
            hex_shift(g.rows(), y, scale)
        } else {
            0
        };
        let start = px.len();
        let background = |px: &mut Vec<u8>, n: usize| {
            for _ in 0..n {
                px.extend_from_slice(&BACKGROUND);
            }
        };
        background(&mut px, shift.min(w));
        for x in 0..g.cols() {
            let c = colour(g, &reach, y, x);
            for _ in 0..scale {
                px.extend_from_slice(&c);
            }
        }
        background(&mut px, w - (shift + g.cols() * scale).min(w));
        px.truncate(start + 3 * w);
        for _ in 1..scale {
            px.extend_from_within(start..start + 3 * w);
        }
    }
    debug_assert_eq!(px.len(), 3 * w * h);
    markers(&mut px, w, h, scale, marks, 1, g.rows());
    px
}

/// `g` as a PNG for the screen, not for a file: the pixels of [`rgb`], compressed by
/// `fdeflate` (png's `Fast`) instead of the default. Several times faster to encode (the
/// explorer's frames and thumbnails, one batch per key press); its bytes differ from
/// [`png_bytes`]'s, which every saved picture keeps.
pub fn preview_png(g: &Grid, scale: usize, marks: &Marks) -> Result<Vec<u8>, RenderError> {
    let scale = scale.max(1);
    check_size(g.rows(), g.cols(), scale, marks.hex())?;
    let rgb = rgb(g, scale, marks);
    let w = picture_width(g.rows(), g.cols(), scale, marks.hex());
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut buf, w as u32, (g.rows() * scale) as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let png = |e: png::EncodingError| RenderError::Png {
            path: String::new(),
            msg: e.to_string(),
        };
        let mut wr = enc.write_header().map_err(png)?;
        wr.write_image_data(&rgb).map_err(png)?;
    }
    Ok(buf)
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
/// `rows`: the picture's rows of cells (or of blocks), for a hex cave's shift.
fn markers(px: &mut [u8], w: usize, h: usize, scale: usize, marks: &Marks, k: usize, rows: usize) {
    let shift = |y: usize| {
        if marks.hex() {
            hex_shift(rows, y / k, scale)
        } else {
            0
        }
    };
    if let Some((y, x)) = marks.exit {
        marker(px, (w, h), scale, (y / k, x / k), shift(y), EXIT, true);
    }
    if let Some((y, x)) = marks.spawn {
        marker(px, (w, h), scale, (y / k, x / k), shift(y), SPAWN, false);
    }
}

/// RGB pixels of `g` with one pixel per `k x k` block of cells, each the average colour of its
/// cells (walls, reached and unreached floor), and the markers at their blocks: a picture of a
/// cave too big to show cell by cell (a report's thumbnail of a 20000 x 20000 cave). Returns
/// the width, height and pixels.
pub fn rgb_downsampled(g: &Grid, k: usize, marks: &Marks) -> (usize, usize, Vec<u8>) {
    let k = k.max(1);
    let (bw, h) = (g.cols().div_ceil(k), g.rows().div_ceil(k));
    let w = picture_width(h, bw, 1, marks.hex());
    let reach = reached(g, marks.spawn, marks.connectivity);
    // Per block: the sums of its cells' colour channels, and its cell count.
    let mut sums = vec![[0u64; 4]; bw * h];
    for y in 0..g.rows() {
        let row = &mut sums[(y / k) * bw..(y / k + 1) * bw];
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
    for (by, row) in sums.chunks_exact(bw).enumerate() {
        let shift = if marks.hex() { hex_shift(h, by, 1) } else { 0 };
        px.extend(BACKGROUND.iter().cycle().take(3 * shift));
        for s in row {
            let n = s[3].max(1);
            px.extend((0..3).map(|i| ((s[i] + n / 2) / n) as u8));
        }
        px.extend(BACKGROUND.iter().cycle().take(3 * (w - bw - shift)));
    }
    markers(&mut px, w, h, 1, marks, k, h);
    (w, h, px)
}

/// Draw a marker around cell `(y, x)`: a ring, or a diamond outline when `diamond`, edged in
/// black. The cell itself stays visible inside (a spawn on a wall shows as one). The ring's
/// width grows with the cell size but never drops below 3 pixels, so it stays visible on a
/// small thumbnail.
/// `shift`: the pixels the cell's row is shifted right (a hex cave's).
fn marker(
    px: &mut [u8],
    (w, h): (usize, usize),
    scale: usize,
    (y, x): (usize, usize),
    shift: usize,
    color: [u8; 3],
    diamond: bool,
) {
    let s = scale as f64;
    // Inside `hole` the cell shows (it covers the cell's half-diagonal, 0.71 cells).
    let hole = s * 0.75 + 0.5;
    let r = hole + 1.0 + (s * 0.8).max(3.0);
    let (cy, cx) = ((y as f64 + 0.5) * s, (x as f64 + 0.5) * s + shift as f64);
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
    check_size(g.rows(), g.cols(), scale, marks.hex())?;
    let w = picture_width(g.rows(), g.cols(), scale, marks.hex());
    encode_png(w, g.rows() * scale, &rgb(g, scale, marks)).map_err(|e| RenderError::Png {
        path: String::new(),
        msg: e.to_string(),
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
        check_replaces_nothing(path, &buf)?;
    }
    crate::io::write_atomic(path, &buf).map_err(|source| RenderError::Io { path: p, source })
}

/// Refuse to write the picture `buf` over a file at `path` that holds another one (see
/// [`crate::io::replaces_nothing`]): [`RenderError::Exists`], whose remedy is `--force`.
pub fn check_replaces_nothing(path: &Path, buf: &[u8]) -> Result<(), RenderError> {
    let p = || path.display().to_string();
    let same = crate::io::replaces_nothing(path, buf)
        .map_err(|source| RenderError::Io { path: p(), source })?;
    if same {
        Ok(())
    } else {
        Err(RenderError::Exists { path: p() })
    }
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

    /// The pixels a pixel at a time, as `rgb` made them before it copied rows: the reference
    /// the row-copying version must equal byte for byte (saved pictures must not change).
    fn rgb_reference(g: &Grid, scale: usize, marks: &Marks) -> Vec<u8> {
        let (w, h) = (
            picture_width(g.rows(), g.cols(), scale, marks.hex()),
            g.rows() * scale,
        );
        let reach = reached(g, marks.spawn, marks.connectivity);
        let mut px = Vec::with_capacity(w * h * 3);
        for py in 0..h {
            let y = py / scale;
            let shift = if marks.hex() {
                hex_shift(g.rows(), y, scale)
            } else {
                0
            };
            for pxx in 0..w {
                let c = match pxx.checked_sub(shift).filter(|&x| x < g.cols() * scale) {
                    Some(x) => colour(g, &reach, y, x / scale),
                    None => BACKGROUND,
                };
                px.extend_from_slice(&c);
            }
        }
        markers(&mut px, w, h, scale, marks, 1, g.rows());
        px
    }

    #[test]
    fn rgb_equals_the_pixel_at_a_time_reference() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..300 {
            let rows = 1 + (next() % 40) as usize;
            let cols = 1 + (next() % 150) as usize;
            let mut g = Grid::new(rows, cols).unwrap();
            let p = next() % 100;
            for y in 0..rows {
                for c in 0..cols {
                    g.set(y, c, next() % 100 < p);
                }
            }
            let connectivity =
                [Connectivity::Four, Connectivity::Eight, Connectivity::Six][case % 3];
            let spawn = (next() as usize % rows, next() as usize % cols);
            let exit = (next() as usize % rows, next() as usize % cols);
            let marks = Marks {
                spawn: (case % 5 != 0).then_some(spawn),
                exit: (case % 2 == 0).then_some(exit),
                connectivity,
            };
            for scale in [1, 2, 3, 6] {
                assert_eq!(
                    rgb(&g, scale, &marks),
                    rgb_reference(&g, scale, &marks),
                    "case {case} {rows}x{cols} scale {scale} {connectivity}"
                );
            }
        }
    }

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

    /// A hex cave's rows shift half a cell per row below them, so a cell's N and NW
    /// neighbours are the two cells over it and its SE and S ones the two under it.
    #[test]
    fn hex_caves_are_drawn_with_shifted_rows() {
        let g = Grid::from_text("...\n.#.\n...\n").unwrap();
        let marks = Marks {
            connectivity: Connectivity::Six,
            ..no_marks()
        };
        let s = 4;
        let w = picture_width(3, 3, s, true);
        assert_eq!(w, 3 * s + (3 - 1) * s / 2);
        let px = rgb(&g, s, &marks);
        assert_eq!(px.len(), w * 3 * s * 3);
        // Row 1 is shifted (3 - 1 - 1) * 4 / 2 = 2 pixels: the wall's pixels start at x = 6.
        assert_eq!(at(&px, w, s + 1, s + 1), UNREACHED);
        assert_eq!(at(&px, w, s + 1, s + 2), WALL);
        assert_eq!(at(&px, w, s + 1, 2 * s + 1), WALL);
        // Row 0 is shifted 4 pixels: its first pixels are background, row 2's are not.
        assert_eq!(at(&px, w, 0, 0), BACKGROUND);
        assert_eq!(at(&px, w, 2 * s, 0), UNREACHED);
        // The wall's centre lies between its N and NW neighbours' centres, half a cell each way.
        let centre = |y: usize, x: usize| (x as f64 + 0.5) * s as f64 + hex_shift(3, y, s) as f64;
        assert_eq!(centre(0, 1) - centre(1, 1), s as f64 / 2.0);
        assert_eq!(centre(1, 1) - centre(0, 0), s as f64 / 2.0);
        // Square caves are drawn as before.
        assert_eq!(picture_width(3, 3, s, false), 3 * s);
        let (dw, dh, dpx) = rgb_downsampled(&g, 1, &marks);
        assert_eq!((dw, dh, dpx.len()), (4, 3, 36));
    }

    #[test]
    fn pictures_over_the_pixel_limit_are_refused_before_drawing() {
        assert!(check_size(16384, 16384, 1, false).is_ok());
        assert!(check_size(90, 140, 64, false).is_ok());
        let err = check_size(16384, 16384, 64, false).unwrap_err().to_string();
        assert!(
            err.contains("1048576x1048576") && err.contains("--scale"),
            "{err}"
        );
        assert!(check_size(16385, 16384, 1, false).is_err());
        // A side beyond u32 still counts, without overflow.
        assert!(check_size(65536, 65536, 64, false).is_err());
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
