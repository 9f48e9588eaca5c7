//! Tiled maps (<https://doc.mapeditor.org>): the JSON (`.tmj`) and XML (`.tmx`) forms of one
//! orthogonal map with a tile layer `cave` (tile 0 of the tileset floor, tile 1 wall), an object
//! layer `markers` holding the spawn and exit as one-tile rectangles named `spawn` and `exit`,
//! and the recipe, seed and metrics as the map's custom properties. The tileset is embedded in
//! the map; its picture is [`TILES_PNG`] beside it, since Tiled draws no picture embedded in a
//! map file (an `<image>` with inline `<data>` renders as missing tiles in Tiled 1.10).
//!
//! Reading takes the first tile layer of any such map: gid 0 (no tile) and the tileset's first
//! tile are FLOOR, its second tile is WALL; the flip flags of a gid are ignored.

use std::fmt::Write as _;

use cavesweep_core::grid::Grid;

use super::decode::build;
use super::encode::{number, string};
use super::{MapInfo, Problem, TILE, TILES_PNG, bad};

/// The gid of a floor and a wall tile (the tileset's first gid is 1).
const FLOOR_GID: u32 = 1;
const WALL_GID: u32 = 2;

/// The Tiled version whose format these maps follow.
const TILED_VERSION: &str = "1.10.2";

/// The tileset picture: a floor tile and a wall tile side by side, in the colours of
/// cavesweep's pictures ([`crate::render::FLOOR`], [`crate::render::WALL`]).
pub fn tiles_png() -> Vec<u8> {
    let mut rgb = Vec::with_capacity(2 * TILE * TILE * 3);
    for _ in 0..TILE {
        for x in 0..2 * TILE {
            rgb.extend_from_slice(if x < TILE {
                &crate::render::FLOOR
            } else {
                &crate::render::WALL
            });
        }
    }
    crate::render::encode_png(2 * TILE, TILE, &rgb).expect("a 32x16 picture encodes")
}

fn gid(grid: &Grid, y: usize, x: usize) -> u32 {
    if grid.get(y, x) { WALL_GID } else { FLOOR_GID }
}

/// The markers: `(id, name, cell)` for the spawn and the exit that are set.
fn markers(info: &MapInfo) -> Vec<(usize, &'static str, (usize, usize))> {
    [("spawn", info.spawn), ("exit", info.exit)]
        .into_iter()
        .filter_map(|(n, c)| c.map(|c| (n, c)))
        .enumerate()
        .map(|(i, (n, c))| (i + 1, n, c))
        .collect()
}

/// The map's custom properties: `(name, type, value as JSON, value as text)`.
fn properties(info: &MapInfo) -> Vec<(String, &'static str, String, String)> {
    let mut p = Vec::new();
    if let Some(r) = info.recipe {
        p.push(("recipe".into(), "string", string(&r.name), r.name.clone()));
        let toml = r.to_toml();
        p.push(("recipe_toml".into(), "string", string(&toml), toml));
    }
    if let Some(s) = info.seed {
        // A string: Tiled's int properties are 32-bit and a seed may not fit.
        p.push((
            "seed".into(),
            "string",
            string(&s.to_string()),
            s.to_string(),
        ));
    }
    for (name, v) in info.metrics {
        // Tiled has no empty float: an empty metric (an unreachable exit's path) is left out.
        if v.is_finite() {
            p.push((name.to_string(), "float", number(*v), number(*v)));
        }
    }
    p
}

/// The map as Tiled's JSON.
pub(super) fn tmj(grid: &Grid, info: &MapInfo) -> String {
    let (rows, cols) = (grid.rows(), grid.cols());
    let marks = markers(info);
    let mut s = String::with_capacity(grid.cells() * 2 + 2048);
    let _ = write!(
        s,
        "{{\"type\": \"map\", \"version\": \"1.10\", \"tiledversion\": \"{TILED_VERSION}\",\n\
         \"orientation\": \"orthogonal\", \"renderorder\": \"right-down\", \"infinite\": false,\n\
         \"width\": {cols}, \"height\": {rows}, \"tilewidth\": {TILE}, \"tileheight\": {TILE},\n\
         \"nextlayerid\": 3, \"nextobjectid\": {},\n\"properties\": [",
        marks.len() + 1
    );
    for (i, (name, ty, json, _)) in properties(info).iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            s,
            "{sep}\n  {{\"name\": {}, \"type\": \"{ty}\", \"value\": {json}}}",
            string(name)
        );
    }
    let _ = write!(
        s,
        "],\n\"tilesets\": [{{\"firstgid\": 1, \"name\": \"cavesweep\", \"tilewidth\": {TILE}, \
         \"tileheight\": {TILE}, \"tilecount\": 2, \"columns\": 2, \"margin\": 0, \"spacing\": 0, \
         \"image\": \"{TILES_PNG}\", \"imagewidth\": {}, \"imageheight\": {TILE}}}],\n\
         \"layers\": [\n{{\"type\": \"tilelayer\", \"id\": 1, \"name\": \"cave\", \"x\": 0, \"y\": 0, \
         \"width\": {cols}, \"height\": {rows}, \"opacity\": 1, \"visible\": true, \"data\": [\n",
        2 * TILE
    );
    for y in 0..rows {
        for x in 0..cols {
            let _ = write!(s, "{}", gid(grid, y, x));
            if x + 1 < cols {
                s.push(',');
            }
        }
        s.push_str(if y + 1 < rows { ",\n" } else { "\n" });
    }
    s.push_str(
        "]},\n{\"type\": \"objectgroup\", \"id\": 2, \"name\": \"markers\", \"x\": 0, \"y\": 0, \
         \"opacity\": 1, \"visible\": true, \"draworder\": \"topdown\", \"objects\": [",
    );
    for (i, (id, name, (y, x))) in marks.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            s,
            "{sep}\n  {{\"id\": {id}, \"name\": \"{name}\", \"type\": \"{name}\", \"x\": {}, \"y\": {}, \
             \"width\": {TILE}, \"height\": {TILE}, \"rotation\": 0, \"visible\": true}}",
            x * TILE,
            y * TILE
        );
    }
    s.push_str("]}\n]}\n");
    s
}

/// `&`, `<`, `>` and `"` escaped for XML text and attributes; newlines kept in element text.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The map as Tiled's XML, the tile data as CSV.
pub(super) fn tmx(grid: &Grid, info: &MapInfo) -> String {
    let (rows, cols) = (grid.rows(), grid.cols());
    let marks = markers(info);
    let mut s = String::with_capacity(grid.cells() * 2 + 2048);
    let _ = write!(
        s,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <map version=\"1.10\" tiledversion=\"{TILED_VERSION}\" orientation=\"orthogonal\" \
         renderorder=\"right-down\" width=\"{cols}\" height=\"{rows}\" tilewidth=\"{TILE}\" \
         tileheight=\"{TILE}\" infinite=\"0\" nextlayerid=\"3\" nextobjectid=\"{}\">\n",
        marks.len() + 1
    );
    let props = properties(info);
    if !props.is_empty() {
        s.push_str(" <properties>\n");
        for (name, ty, _, text) in &props {
            let ty = if *ty == "float" {
                " type=\"float\""
            } else {
                ""
            };
            if text.contains('\n') {
                // Multi-line text goes in the element (an attribute's newlines become spaces).
                let _ = writeln!(
                    s,
                    "  <property name=\"{}\"{ty}>{}</property>",
                    xml(name),
                    xml(text)
                );
            } else {
                let _ = writeln!(
                    s,
                    "  <property name=\"{}\"{ty} value=\"{}\"/>",
                    xml(name),
                    xml(text)
                );
            }
        }
        s.push_str(" </properties>\n");
    }
    let _ = write!(
        s,
        " <tileset firstgid=\"1\" name=\"cavesweep\" tilewidth=\"{TILE}\" tileheight=\"{TILE}\" \
         tilecount=\"2\" columns=\"2\">\n  <image source=\"{TILES_PNG}\" width=\"{}\" height=\"{TILE}\"/>\n \
         </tileset>\n <layer id=\"1\" name=\"cave\" width=\"{cols}\" height=\"{rows}\">\n  \
         <data encoding=\"csv\">\n",
        2 * TILE
    );
    for y in 0..rows {
        for x in 0..cols {
            let _ = write!(s, "{}", gid(grid, y, x));
            if x + 1 < cols || y + 1 < rows {
                s.push(',');
            }
        }
        s.push('\n');
    }
    s.push_str("</data>\n </layer>\n <objectgroup id=\"2\" name=\"markers\">\n");
    for (id, name, (y, x)) in &marks {
        let _ = writeln!(
            s,
            "  <object id=\"{id}\" name=\"{name}\" type=\"{name}\" x=\"{}\" y=\"{}\" width=\"{TILE}\" height=\"{TILE}\"/>",
            x * TILE,
            y * TILE
        );
    }
    s.push_str(" </objectgroup>\n</map>\n");
    s
}

/// A gid's cell: FLOOR for no tile or the first tile, WALL for the second.
fn cell(gid: u64, first: u64, y: usize, x: usize) -> Result<bool, Problem> {
    if gid > u32::MAX as u64 {
        return Err(bad!(
            "tile gid {gid} at row {y}, column {x} is not a Tiled gid (a 32-bit number)"
        ));
    }
    // Bits 28..31 are Tiled's flip and rotation flags.
    let g = gid & 0x0fff_ffff;
    match g {
        0 => Ok(false),
        g if g == first => Ok(false),
        g if g == first + 1 => Ok(true),
        _ => Err(bad!(
            "tile gid {gid} at row {y}, column {x} is neither the tileset's floor tile ({first}) \
             nor its wall tile ({})",
            first + 1
        )),
    }
}

/// The first tileset's `firstgid` (1 when there is none): a tile id with room for the wall
/// tile after it (ids are 28 bits, the rest of a gid are flip flags).
fn first_gid(g: Option<Option<u64>>) -> Result<u64, Problem> {
    match g {
        None => Ok(1),
        Some(Some(g)) if (1..0x0fff_ffff).contains(&g) => Ok(g),
        Some(Some(g)) => Err(bad!(
            "the tileset's firstgid {g} is not a tile id (1 to {})",
            0x0fff_fffe
        )),
        Some(None) => Err(bad!("the tileset's firstgid is not a number")),
    }
}

/// The first tile layer of a Tiled JSON map.
pub(super) fn read_tmj(bytes: &[u8]) -> Result<Grid, Problem> {
    let v: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| bad!("not JSON: line {}, column {}: {e}", e.line(), e.column()))?;
    let first = first_gid(
        v.get("tilesets")
            .and_then(|t| t.get(0))
            .and_then(|t| t.get("firstgid"))
            .map(|g| g.as_u64()),
    )?;
    let layer = v
        .get("layers")
        .and_then(|l| l.as_array())
        .and_then(|l| {
            l.iter()
                .find(|l| l.get("type").and_then(|t| t.as_str()) == Some("tilelayer"))
        })
        .ok_or_else(|| bad!("holds no tile layer"))?;
    if let Some(enc) = layer.get("encoding").and_then(|e| e.as_str())
        && enc != "csv"
    {
        return Err(bad!(
            "the tile layer's data is {enc}-encoded; cavesweep reads it as a plain array (Tiled: Map Properties, Tile Layer Format CSV)"
        ));
    }
    let size = |k: &str| layer.get(k).or_else(|| v.get(k)).and_then(|n| n.as_u64());
    let (Some(cols), Some(rows)) = (size("width"), size("height")) else {
        return Err(bad!("the tile layer has no width and height"));
    };
    let data = layer
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or_else(|| bad!("the tile layer has no data array"))?;
    let (rows, cols) = (rows as usize, cols as usize);
    cavesweep_core::grid::check_shape(rows, cols)?;
    if data.len() != rows * cols {
        return Err(bad!(
            "the tile layer holds {} tiles, expected {rows} x {cols}",
            data.len()
        ));
    }
    build(rows, cols, |y, x| {
        let g = data[y * cols + x]
            .as_u64()
            .ok_or_else(|| bad!("tile at row {y}, column {x} is not a gid"))?;
        cell(g, first, y, x)
    })
}

/// The first tile layer of a Tiled XML map (CSV or `<tile gid>` data).
pub(super) fn read_tmx(bytes: &[u8]) -> Result<Grid, Problem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| bad!("not UTF-8 text (at byte {})", e.valid_up_to() + 1))?;
    let doc = roxmltree::Document::parse(text).map_err(|e| bad!("not XML: {e}"))?;
    let map = doc.root_element();
    if map.tag_name().name() != "map" {
        return Err(bad!(
            "not a Tiled map (the root element is <{}>)",
            map.tag_name().name()
        ));
    }
    let first = first_gid(
        map.children()
            .find(|n| n.has_tag_name("tileset"))
            .and_then(|t| t.attribute("firstgid"))
            .map(|g| g.trim().parse::<u64>().ok()),
    )?;
    let layer = map
        .children()
        .find(|n| n.has_tag_name("layer"))
        .ok_or_else(|| bad!("holds no tile layer"))?;
    let size = |k: &str| {
        layer
            .attribute(k)
            .or_else(|| map.attribute(k))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let (Some(cols), Some(rows)) = (size("width"), size("height")) else {
        return Err(bad!("the tile layer has no width and height"));
    };
    cavesweep_core::grid::check_shape(rows, cols)?;
    let data = layer
        .children()
        .find(|n| n.has_tag_name("data"))
        .ok_or_else(|| bad!("the tile layer has no <data>"))?;
    let gids: Vec<u64> = match data.attribute("encoding") {
        Some("csv") => data
            .text()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| bad!("tile {} is not a gid", cavesweep_core::quote::quote(t)))
            })
            .collect::<Result<_, _>>()?,
        None => data
            .children()
            .filter(|n| n.has_tag_name("tile"))
            // A `<tile/>` without a gid is an empty cell (gid 0), as Tiled writes it.
            .map(|t| match t.attribute("gid") {
                None => Ok(0),
                Some(g) => g
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad!("tile {} is not a gid", cavesweep_core::quote::quote(g))),
            })
            .collect::<Result<_, _>>()?,
        Some(enc) => {
            return Err(bad!(
                "the tile layer's data is {enc}-encoded; cavesweep reads CSV or <tile> data (Tiled: Map Properties, Tile Layer Format CSV)"
            ));
        }
    };
    if gids.len() != rows * cols {
        return Err(bad!(
            "the tile layer holds {} tiles, expected {rows} x {cols}",
            gids.len()
        ));
    }
    build(rows, cols, |y, x| cell(gids[y * cols + x], first, y, x))
}
