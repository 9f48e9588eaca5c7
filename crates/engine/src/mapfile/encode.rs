//! Writing a grid as the bytes of each format. The bytes depend only on the grid and the
//! [`MapInfo`], so saving the same cave twice writes the same file.

use std::fmt::Write as _;

use cavesweep_core::grid::Grid;

use super::{Format, MapInfo, tiled};

/// `grid` (and what `info` holds, where the format has room) as a file of `format`.
pub fn encode(format: Format, grid: &Grid, info: &MapInfo) -> Vec<u8> {
    match format {
        Format::Txt => grid.to_text().into_bytes(),
        Format::Csv => csv(grid),
        Format::Npy => npy(grid),
        Format::Json => json(grid, info).into_bytes(),
        Format::Tmj => tiled::tmj(grid, info).into_bytes(),
        Format::Tmx => tiled::tmx(grid, info).into_bytes(),
        Format::Png => png(grid),
    }
}

/// `0,1,...` lines.
fn csv(grid: &Grid) -> Vec<u8> {
    let mut out = Vec::with_capacity(grid.rows() * grid.cols() * 2);
    for y in 0..grid.rows() {
        for x in 0..grid.cols() {
            out.push(if grid.get(y, x) { b'1' } else { b'0' });
            out.push(if x + 1 == grid.cols() { b'\n' } else { b',' });
        }
    }
    out
}

/// numpy's format 1.0: the magic, a header dict padded with spaces so the data starts at a
/// multiple of 64 bytes (as numpy writes it), then one `uint8` per cell in C order.
fn npy(grid: &Grid) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '|u1', 'fortran_order': False, 'shape': ({}, {}), }}",
        grid.rows(),
        grid.cols()
    );
    // 10 bytes of magic, version and length, then the header ending in '\n'.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + grid.cells());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&grid.to_bytes());
    out
}

/// A JSON number, or `null` for NaN and the infinities (JSON has none).
pub(super) fn number(v: f64) -> String {
    if v.is_finite() {
        // ryu's shortest round-trip form, as the CSV files write values.
        serde_json::Number::from_f64(v).map_or_else(|| "null".into(), |n| n.to_string())
    } else {
        "null".into()
    }
}

/// `[y, x]` or `null`.
pub(super) fn cell(c: Option<(usize, usize)>) -> String {
    c.map_or_else(|| "null".into(), |(y, x)| format!("[{y}, {x}]"))
}

/// A JSON string literal.
pub(super) fn string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The grid with what cavesweep knows of it, keys in a fixed order.
fn json(grid: &Grid, info: &MapInfo) -> String {
    let mut s = String::with_capacity(grid.cells() * 3 + 1024);
    let _ = write!(
        s,
        "{{\n  \"rows\": {},\n  \"cols\": {},\n",
        grid.rows(),
        grid.cols()
    );
    match info.recipe {
        Some(r) => {
            let _ = write!(
                s,
                "  \"recipe\": {},\n  \"recipe_toml\": {},\n",
                string(&r.name),
                string(&r.to_toml())
            );
        }
        None => s.push_str("  \"recipe\": null,\n  \"recipe_toml\": null,\n"),
    }
    let seed = info.seed.map_or_else(|| "null".into(), |v| v.to_string());
    let _ = write!(s, "  \"seed\": {seed},\n  \"metrics\": {{");
    for (i, (name, v)) in info.metrics.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(s, "{sep}\n    {}: {}", string(name), number(*v));
    }
    s.push_str(if info.metrics.is_empty() {
        "},\n"
    } else {
        "\n  },\n"
    });
    let _ = write!(
        s,
        "  \"spawn\": {},\n  \"exit\": {},\n  \"cells\": [\n",
        cell(info.spawn),
        cell(info.exit)
    );
    for y in 0..grid.rows() {
        s.push_str("    [");
        for x in 0..grid.cols() {
            if x > 0 {
                s.push(',');
            }
            s.push(if grid.get(y, x) { '1' } else { '0' });
        }
        s.push_str(if y + 1 == grid.rows() { "]\n" } else { "],\n" });
    }
    s.push_str("  ]\n}\n");
    s
}

/// One grey pixel per cell: black WALL, white FLOOR.
fn png(grid: &Grid) -> Vec<u8> {
    let px: Vec<u8> = grid
        .to_bytes()
        .into_iter()
        .map(|w| if w == 1 { 0 } else { 255 })
        .collect();
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut buf, grid.cols() as u32, grid.rows() as u32);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Eight);
        // A grid's sides are within what PNG holds (MAX_SIDE < 2^31), so encoding cannot fail.
        let mut w = enc.write_header().expect("PNG header");
        w.write_image_data(&px).expect("PNG data");
    }
    buf
}
