//! Pictures of caves: PNG (a few pixels per cell, spawn and exit marked) and ASCII.

use std::io::Write;
use std::path::Path;

use crate::grid::Grid;

const WALL: [u8; 3] = [52, 46, 58];
const FLOOR: [u8; 3] = [226, 214, 186];
const SPAWN: [u8; 3] = [40, 170, 70];
const EXIT: [u8; 3] = [210, 50, 50];

/// Why a picture could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot encode PNG {path}: {msg}")]
    Png { path: String, msg: String },
}

/// RGB pixels of `g` at `scale` pixels per cell, with the spawn (green) and exit (red) cells.
pub fn rgb(
    g: &Grid,
    scale: usize,
    spawn: Option<(usize, usize)>,
    exit: Option<(usize, usize)>,
) -> Vec<u8> {
    let (w, h) = (g.cols() * scale, g.rows() * scale);
    let mut px = Vec::with_capacity(w * h * 3);
    for py in 0..h {
        for pxx in 0..w {
            let (y, x) = (py / scale, pxx / scale);
            let c = if Some((y, x)) == spawn {
                SPAWN
            } else if Some((y, x)) == exit {
                EXIT
            } else if g.get(y, x) {
                WALL
            } else {
                FLOOR
            };
            px.extend_from_slice(&c);
        }
    }
    px
}

/// Write `g` as a PNG. The file is written to a temporary name and renamed into place, so a
/// failed write never leaves a truncated picture under the requested name.
pub fn write_png(
    path: &Path,
    g: &Grid,
    scale: usize,
    spawn: Option<(usize, usize)>,
    exit: Option<(usize, usize)>,
) -> Result<(), RenderError> {
    let p = path.display().to_string();
    let io = |source| RenderError::Io {
        path: p.clone(),
        source,
    };
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(
            &mut buf,
            (g.cols() * scale) as u32,
            (g.rows() * scale) as u32,
        );
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let png_err = |e: png::EncodingError| RenderError::Png {
            path: p.clone(),
            msg: e.to_string(),
        };
        let mut w = enc.write_header().map_err(png_err)?;
        w.write_image_data(&rgb(g, scale, spawn, exit))
            .map_err(png_err)?;
    }
    crate::io::write_atomic(path, &buf).map_err(io)
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

    #[test]
    fn ascii_marks_spawn_and_exit() {
        let g = Grid::from_text("#..\n...\n").unwrap();
        assert_eq!(ascii(&g, Some((1, 0)), Some((0, 2))), "#.E\nS..\n");
    }

    #[test]
    fn rgb_has_scale_squared_pixels_per_cell() {
        let g = Grid::from_text("#.\n").unwrap();
        let px = rgb(&g, 3, None, None);
        assert_eq!(px.len(), 2 * 3 * 3 * 3);
        assert_eq!(&px[0..3], &WALL);
        assert_eq!(&px[9..12], &FLOOR);
    }
}
