//! Reading a grid from the bytes of a text, CSV, numpy, JSON or PNG file (the Tiled maps are in
//! `tiled.rs`). Every error says where: the line and column of a text file, the cell of an
//! array or picture.

use cavesweep_core::grid::{Grid, check_shape};
use cavesweep_core::quote::quote;

use super::{Problem, bad};

/// A grid of `rows x cols` (checked first), each cell from `wall(y, x)`.
pub(super) fn build(
    rows: usize,
    cols: usize,
    mut wall: impl FnMut(usize, usize) -> Result<bool, Problem>,
) -> Result<Grid, Problem> {
    check_shape(rows, cols)?;
    let mut g = Grid::new(rows, cols)?;
    for y in 0..rows {
        let row = g.row_mut(y);
        for x in 0..cols {
            if wall(y, x)? {
                row[x / 64] |= 1u64 << (x % 64);
            }
        }
    }
    Ok(g)
}

/// The file's lines as `(line number, text)`: `\r\n` endings accepted, blank lines at the end
/// dropped; a blank line before the last row is an error (a grid has no empty row).
fn lines(bytes: &[u8]) -> Result<Vec<(usize, &str)>, Problem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| bad!("not UTF-8 text (at byte {})", e.valid_up_to() + 1))?;
    let mut out: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    while out.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        out.pop();
    }
    if out.is_empty() {
        return Err(bad!("holds no grid (no rows)"));
    }
    if let Some((n, _)) = out.iter().find(|(_, l)| l.trim().is_empty()) {
        return Err(bad!("line {n}: an empty line inside the grid"));
    }
    Ok(out)
}

/// `#` (wall) and `.` (floor) text, one row a line.
pub(super) fn txt(bytes: &[u8]) -> Result<Grid, Problem> {
    let lines = lines(bytes)?;
    let rows = lines.len();
    let cols = lines[0].1.chars().count();
    check_shape(rows, cols)?;
    for &(n, l) in &lines {
        let got = l.chars().count();
        if got != cols {
            return Err(bad!(
                "line {n}: has {got} cells, expected {cols} (as line {})",
                lines[0].0
            ));
        }
        if let Some((x, ch)) = l.chars().enumerate().find(|&(_, c)| c != '#' && c != '.') {
            return Err(bad!(
                "line {n}, column {}: {ch:?} is not '#' (wall) or '.' (floor)",
                x + 1
            ));
        }
    }
    // Every line is `cols` ASCII bytes now.
    build(rows, cols, |y, x| Ok(lines[y].1.as_bytes()[x] == b'#'))
}

/// `0`/`1` values separated by commas, one row a line.
pub(super) fn csv(bytes: &[u8]) -> Result<Grid, Problem> {
    let lines = lines(bytes)?;
    let rows = lines.len();
    let cells: Vec<Vec<&str>> = lines.iter().map(|(_, l)| l.split(',').collect()).collect();
    let cols = cells[0].len();
    check_shape(rows, cols)?;
    for (&(n, _), row) in lines.iter().zip(&cells) {
        if row.len() != cols {
            return Err(bad!(
                "line {n}: has {} values, expected {cols} (as line {})",
                row.len(),
                lines[0].0
            ));
        }
    }
    build(rows, cols, |y, x| match cells[y][x].trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        v => Err(bad!(
            "line {}, value {}: {} is not 0 (floor) or 1 (wall)",
            lines[y].0,
            x + 1,
            quote(v)
        )),
    })
}

/// A numpy `.npy` array: 2-D, of bool, integers or floats holding only 0 and 1.
pub(super) fn npy(bytes: &[u8]) -> Result<Grid, Problem> {
    let h = NpyHeader::parse(bytes)?;
    let (rows, cols) = h.shape;
    check_shape(rows, cols)?;
    let need = rows * cols * h.size;
    let data = &bytes[h.data_at..];
    if data.len() != need {
        return Err(bad!(
            "holds {} bytes of array data, expected {need} for shape ({rows}, {cols}) of {}",
            data.len(),
            h.descr
        ));
    }
    build(rows, cols, |y, x| {
        let i = if h.fortran {
            x * rows + y
        } else {
            y * cols + x
        };
        let raw = &data[i * h.size..(i + 1) * h.size];
        match h.value(raw) {
            Some(v) => Ok(v),
            None => Err(bad!(
                "cell ({y}, {x}) is {}, not 0 (floor) or 1 (wall)",
                h.show(raw)
            )),
        }
    })
}

/// What a `.npy` header says.
struct NpyHeader {
    descr: String,
    /// `b`, `u`, `i` or `f`.
    kind: u8,
    size: usize,
    big_endian: bool,
    fortran: bool,
    shape: (usize, usize),
    data_at: usize,
}

impl NpyHeader {
    fn parse(bytes: &[u8]) -> Result<NpyHeader, Problem> {
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err(bad!("not a numpy .npy file (no \\x93NUMPY magic)"));
        }
        let (len, at) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            v => {
                return Err(bad!(
                    "numpy format version {v} is not one cavesweep reads (1 to 3)"
                ));
            }
        };
        let text = bytes
            .get(at..at + len)
            .and_then(|h| std::str::from_utf8(h).ok())
            .ok_or_else(|| bad!("the numpy header is cut short or not text"))?;
        let descr = dict_str(text, "descr")?;
        let fortran = match dict_raw(text, "fortran_order")? {
            "True" => true,
            "False" => false,
            v => return Err(bad!("fortran_order is {}, not True or False", quote(v))),
        };
        let shape = dict_raw(text, "shape")?;
        let dims: Vec<&str> = shape
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let dims: Vec<usize> = dims
            .iter()
            .map(|d| d.parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad!("shape {} is not a tuple of sizes", quote(shape)))?;
        let [rows, cols] = dims[..] else {
            return Err(bad!(
                "the array has {} dimensions (shape {}); a grid has 2",
                dims.len(),
                quote(shape)
            ));
        };
        let d = descr.as_bytes();
        let (order, kind, size) = match d {
            [o @ (b'<' | b'>' | b'|' | b'='), k, rest @ ..] => (
                *o,
                *k,
                std::str::from_utf8(rest)
                    .ok()
                    .and_then(|s| s.parse::<usize>().ok())
                    .unwrap_or(0),
            ),
            _ => (0, 0, 0),
        };
        let known = matches!(
            (kind, size),
            (b'b', 1) | (b'u' | b'i', 1 | 2 | 4 | 8) | (b'f', 2 | 4 | 8)
        );
        if order == 0 || !known {
            return Err(bad!(
                "dtype {} is not one cavesweep reads (bool, integers, float16/32/64)",
                quote(&descr)
            ));
        }
        Ok(NpyHeader {
            descr,
            kind,
            size,
            big_endian: order == b'>',
            fortran,
            shape: (rows, cols),
            data_at: at + len,
        })
    }

    /// The element's bits as a little-endian integer of `size` bytes.
    fn bits(&self, raw: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..self.size].copy_from_slice(raw);
        if self.big_endian {
            b[..self.size].reverse();
        }
        u64::from_le_bytes(b)
    }

    /// WALL (1) or FLOOR (0); `None` for any other value.
    fn value(&self, raw: &[u8]) -> Option<bool> {
        let v = self.bits(raw);
        match (self.kind, self.size) {
            (b'b' | b'u' | b'i', _) => match v {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
            // 0.0 and -0.0 are floor, 1.0 wall.
            (b'f', 2) => match v {
                0 | 0x8000 => Some(false),
                0x3c00 => Some(true),
                _ => None,
            },
            (b'f', 4) => match v {
                0 | 0x8000_0000 => Some(false),
                0x3f80_0000 => Some(true),
                _ => None,
            },
            _ => match v {
                0 | 0x8000_0000_0000_0000 => Some(false),
                0x3ff0_0000_0000_0000 => Some(true),
                _ => None,
            },
        }
    }

    /// The element as numpy would print it, for the error.
    fn show(&self, raw: &[u8]) -> String {
        let v = self.bits(raw);
        match (self.kind, self.size) {
            (b'i', n) => ((v << (64 - 8 * n)) as i64 >> (64 - 8 * n)).to_string(),
            (b'f', 4) => f32::from_bits(v as u32).to_string(),
            (b'f', 8) => f64::from_bits(v).to_string(),
            (b'f', _) => format!("float16 bits {v:#06x}"),
            _ => v.to_string(),
        }
    }
}

/// The text of `key`'s value in a numpy header dict (`{'descr': '<u1', ...}`), up to the next
/// comma outside parentheses.
fn dict_raw<'a>(header: &'a str, key: &str) -> Result<&'a str, Problem> {
    let at = [format!("'{key}'"), format!("\"{key}\"")]
        .iter()
        .find_map(|k| header.find(k.as_str()).map(|i| i + k.len()))
        .ok_or_else(|| bad!("the numpy header has no {key}"))?;
    let rest = header[at..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| bad!("the numpy header's {key} has no value"))?
        .trim_start();
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Ok(rest[..i].trim()),
            _ => {}
        }
    }
    Ok(rest.trim())
}

/// A quoted string value of a numpy header dict.
fn dict_str(header: &str, key: &str) -> Result<String, Problem> {
    let v = dict_raw(header, key)?;
    v.strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
        .map(str::to_string)
        .ok_or_else(|| bad!("the numpy header's {key} is {}, not a string", quote(v)))
}

/// cavesweep's JSON map (or any JSON object with `cells`, rows of 0/1 or booleans).
pub(super) fn json(bytes: &[u8]) -> Result<Grid, Problem> {
    let v: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| bad!("not JSON: line {}, column {}: {e}", e.line(), e.column()))?;
    let cells = v
        .get("cells")
        .and_then(|c| c.as_array())
        .ok_or_else(|| bad!("has no \"cells\" array (rows of 0/1 values)"))?;
    let rows = cells.len();
    let row = |y: usize| -> Result<&Vec<serde_json::Value>, Problem> {
        cells[y]
            .as_array()
            .ok_or_else(|| bad!("cells[{y}] is not an array of 0/1 values"))
    };
    if rows == 0 {
        return Err(bad!("\"cells\" is empty (no rows)"));
    }
    let cols = row(0)?.len();
    for y in 0..rows {
        let got = row(y)?.len();
        if got != cols {
            return Err(bad!(
                "cells[{y}] has {got} values, expected {cols} (as cells[0])"
            ));
        }
    }
    for (key, want) in [("rows", rows), ("cols", cols)] {
        if let Some(n) = v.get(key)
            && n.as_u64() != Some(want as u64)
        {
            return Err(bad!("\"{key}\" is {n}, but \"cells\" holds {want}"));
        }
    }
    build(rows, cols, |y, x| match &row(y)?[x] {
        serde_json::Value::Bool(b) => Ok(*b),
        n if n.as_f64() == Some(1.0) => Ok(true),
        n if n.as_f64() == Some(0.0) => Ok(false),
        other => Err(bad!(
            "cells[{y}][{x}] is {}, not 0 (floor) or 1 (wall)",
            quote(&other.to_string())
        )),
    })
}

/// The png crate's message with its chunk types in PNG's own words: it prints a chunk as
/// `ChunkType { type: IHDR, critical: true, ... }` (Rust's debug form), shown here as `IHDR`.
fn png_message(e: &png::DecodingError) -> String {
    let mut msg = e.to_string();
    while let Some(at) = msg.find("ChunkType { type: ") {
        let rest = &msg[at + "ChunkType { type: ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let Some(end) = rest.find('}') else { break };
        msg.replace_range(at..at + "ChunkType { type: ".len() + end + 1, &name);
    }
    msg
}

/// An indexed PNG's pixels all name an entry of its palette (`entries` of them). The decoder
/// expands an index past the palette's end to black, a WALL cell, without a word; here such a
/// picture is an error. Reads the raw indices (1, 2, 4 or 8 bits each) in a second decode.
fn check_palette_indices(
    bytes: &[u8],
    entries: usize,
    max: usize,
) -> Result<Result<(), Problem>, png::DecodingError> {
    let mut dec =
        png::Decoder::new_with_limits(std::io::Cursor::new(bytes), png::Limits { bytes: max });
    dec.set_transformations(png::Transformations::IDENTITY);
    let mut reader = dec.read_info()?;
    let width = reader.info().width as usize;
    let depth = reader.info().bit_depth as usize;
    let size = reader
        .output_buffer_size()
        .ok_or(png::DecodingError::LimitsExceeded)?;
    if size > max {
        return Err(png::DecodingError::LimitsExceeded);
    }
    let mut buf = vec![0u8; size];
    let out = reader.next_frame(&mut buf)?;
    let mask = ((1u16 << depth) - 1) as u8;
    for (y, line) in buf
        .chunks(out.line_size)
        .take(out.height as usize)
        .enumerate()
    {
        for x in 0..width {
            let bit = x * depth;
            let index = (line[bit / 8] >> (8 - depth - bit % 8)) & mask;
            if index as usize >= entries {
                return Ok(Err(bad!(
                    "pixel at row {y}, column {x} is palette entry {index}, but the palette has {entries}"
                )));
            }
        }
    }
    Ok(Ok(()))
}

/// Any PNG: WALL where a pixel is dark (8-bit luminance below 128) and not transparent.
pub(super) fn png(bytes: &[u8]) -> Result<Grid, Problem> {
    // The decoder's whole buffer: at most 512 MiB, an 8-bit RGBA picture of 134 million
    // pixels (bigger grids come as .npy or text).
    const MAX_DECODED: usize = 512 << 20;
    let too_large = || {
        bad!(
            "the picture is too large to decode here (over 512 MiB of pixels): give the grid as .npy or text"
        )
    };
    let limits = png::Limits { bytes: MAX_DECODED };
    let mut dec = png::Decoder::new_with_limits(std::io::Cursor::new(bytes), limits);
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec.read_info().map_err(|e| match e {
        png::DecodingError::LimitsExceeded => too_large(),
        e => bad!("not a PNG picture cavesweep can read: {}", png_message(&e)),
    })?;
    let (w, h) = (reader.info().width as usize, reader.info().height as usize);
    check_shape(h, w)?;
    if reader.info().color_type == png::ColorType::Indexed {
        let entries = reader.info().palette.as_ref().map_or(0, |p| p.len() / 3);
        check_palette_indices(bytes, entries, MAX_DECODED).map_err(|e| match e {
            png::DecodingError::LimitsExceeded => too_large(),
            e => bad!("cannot decode the picture: {}", png_message(&e)),
        })??;
    }
    let size = reader
        .output_buffer_size()
        .filter(|&n| n <= MAX_DECODED)
        .ok_or_else(too_large)?;
    let mut buf = vec![0u8; size];
    let out = reader
        .next_frame(&mut buf)
        .map_err(|e| bad!("cannot decode the picture: {}", png_message(&e)))?;
    let channels = out.color_type.samples();
    let line = out.line_size;
    build(h, w, |y, x| {
        let p = &buf[y * line + x * channels..][..channels];
        let (lum, alpha) = match channels {
            1 => (p[0] as u32 * 1000, 255),
            2 => (p[0] as u32 * 1000, p[1]),
            3 => (
                299 * p[0] as u32 + 587 * p[1] as u32 + 114 * p[2] as u32,
                255,
            ),
            _ => (
                299 * p[0] as u32 + 587 * p[1] as u32 + 114 * p[2] as u32,
                p[3],
            ),
        };
        Ok(alpha >= 128 && lum < 128 * 1000)
    })
}
