//! What the live generator asks for, answered with library calls: a request's recipe (a preset
//! or a sweep's TOML plus `--set` values), one cave with its picture, metrics, trajectory and
//! per-step frames, a strip of thumbnails, and the cave or recipe as a file to download.
//!
//! Everything here is synchronous and bounded by [`Limits`]; the HTTP layer runs it on the
//! blocking pool. Pictures are the bytes `cavesweep run --png F --scale S` writes (the same
//! `render::png_bytes` call), so what the page shows is what the command line saves.

use std::collections::BTreeMap;

use base64::Engine as _;
use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::kernel::Stepper;
use cavesweep_core::measure::{Metric, MetricSet};
use cavesweep_core::recipe::{KEYS, Recipe};
use cavesweep_core::rule::Pass;
use cavesweep_engine::mapfile::{self, Format, MapInfo};
use cavesweep_engine::render::{self, Marks};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ApiError;

/// The bounds on one request's work (sent to the page by `/api/info`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest grid, in cells.
    pub max_cells: usize,
    /// Most pass applications in one recipe.
    pub max_steps: u64,
    /// Most thumbnails per request.
    pub max_thumbs: u64,
    /// Most seeds one search may try.
    pub max_search_seeds: u64,
    /// Largest picture scale (pixels per cell side).
    pub max_scale: usize,
    /// Most pixels in one picture, and in all the frames of one answer together.
    pub max_pixels: usize,
}

impl Limits {
    /// The defaults: a 1024x1024 grid, 200 steps, 16 thumbnails, 10 million search seeds,
    /// 16 pixels per cell, 16 Mpx per picture (64 Mpx of frames).
    pub const DEFAULT: Limits = Limits {
        max_cells: 1 << 20,
        max_steps: 200,
        max_thumbs: 16,
        max_search_seeds: 10_000_000,
        max_scale: 16,
        max_pixels: 16 << 20,
    };

    /// As JSON for `/api/info`.
    pub fn json(&self, timeout_ms: u64, search_ms: u64, heavy: usize) -> Value {
        json!({
            "max_cells": self.max_cells,
            "max_steps": self.max_steps,
            "max_thumbs": self.max_thumbs,
            "max_search_seeds": self.max_search_seeds,
            "max_scale": self.max_scale,
            "max_pixels": self.max_pixels,
            "timeout_ms": timeout_ms,
            "search_ms": search_ms,
            "heavy_at_once": heavy,
        })
    }
}

/// How a request names its recipe: a preset or a TOML recipe (a sweep's), then `--set` values.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RecipeReq {
    /// A preset name (default `chapter-strict` when neither this nor `toml` is given).
    #[serde(default)]
    pub preset: Option<String>,
    /// A whole recipe as TOML (what `/api/sweep` returns), instead of `preset`.
    #[serde(default)]
    pub toml: Option<String>,
    /// `--set` values, applied together.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// Largest TOML recipe accepted in a request.
const MAX_TOML: usize = 16 << 10;

/// Most neighbour reads of the in-place passes of the caves one request makes (cells x steps x
/// the neighbourhood's cells, centre included), summed over a thumbnail sheet's caves.
///
/// Why: an in-place pass reads its neighbourhood cell by cell (later cells see earlier
/// results, so no lanes, no shared box sums), 3-10 ns a read here, while the size and step
/// limits were set for the buffered and Moore passes, which step a whole 1024x1024 grid 200
/// times in well under a second. Within them a Larger than Life rule of radius 15 updated in
/// place took ~2.6 s a step at 1024x1024: minutes a cave, long after its request had answered
/// `503`, holding one of the two heavy slots (so every cave request got `429`). 3e8 reads is
/// ~1-3 s; Moore passes in place are bit-parallel and not counted.
pub const MAX_INPLACE_READS: u64 = 300_000_000;

/// The neighbour reads of `r`'s in-place passes for one cave (see [`MAX_INPLACE_READS`]).
fn inplace_reads(r: &Recipe) -> u64 {
    use cavesweep_core::rule::{Rule, Update};
    let cells = (r.rows * r.cols) as u64;
    r.passes
        .iter()
        .filter(|p| p.update != Update::Sync)
        .map(|p| {
            let reads = match p.rule {
                Rule::Moore { .. } => 0,
                Rule::Hood { hood, .. } => hood.size() as u64 + 1,
                Rule::Ltl(l) => l.max_count() as u64 + 1,
                // The 3x3 and the 21-cell area beside it.
                Rule::TwoRadius { .. } => 30,
            };
            cells * p.repeat as u64 * reads
        })
        .sum()
}

/// Refuse a request whose `caves` caves of `r` would read more than [`MAX_INPLACE_READS`].
fn check_inplace(r: &Recipe, caves: u64) -> Result<(), ApiError> {
    let reads = inplace_reads(r).saturating_mul(caves);
    if reads > MAX_INPLACE_READS {
        return Err(ApiError::bad(format!(
            "the in-place passes would read {reads} neighbours ({}x{}, their steps, their \
             neighbourhoods{}), over the explorer's limit of {MAX_INPLACE_READS}: use fewer \
             steps, a smaller grid or update = sync",
            r.rows,
            r.cols,
            if caves > 1 { ", every thumbnail" } else { "" }
        ))
        .field("update"));
    }
    Ok(())
}

impl RecipeReq {
    /// The recipe, validated and checked against `limits`.
    pub fn recipe(&self, limits: &Limits) -> Result<Recipe, ApiError> {
        let mut r = match (&self.preset, &self.toml) {
            (Some(_), Some(_)) => {
                return Err(ApiError::bad("give either preset or toml, not both").field("preset"));
            }
            (_, Some(t)) if t.len() > MAX_TOML => {
                return Err(ApiError::bad(format!(
                    "toml: {} bytes is over the {MAX_TOML}-byte limit of a recipe",
                    t.len()
                ))
                .field("toml"));
            }
            (_, Some(t)) => Recipe::from_toml(t)
                .map_err(|e| ApiError::bad(format!("toml: {e}")).field("toml"))?,
            (Some(p), None) => cavesweep_core::presets::preset(p)
                .map_err(|e| ApiError::bad(e.to_string()).field("preset"))?,
            (None, None) => cavesweep_core::presets::preset("chapter-strict").expect("a preset"),
        };
        for k in self.set.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(ApiError::bad(format!(
                    "unknown recipe key {k:?}; known keys: {}",
                    KEYS.join(", ")
                ))
                .field(k));
            }
        }
        r.set_many(self.set.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(recipe_error)?;
        let cells = r.rows * r.cols;
        if cells > limits.max_cells {
            return Err(ApiError::bad(format!(
                "{}x{} is {cells} cells, over the explorer's limit of {}",
                r.rows, r.cols, limits.max_cells
            ))
            .field("rows"));
        }
        let steps: u64 = r.passes.iter().map(|p| p.repeat as u64).sum();
        if steps > limits.max_steps {
            return Err(ApiError::bad(format!(
                "{steps} pass applications, over the explorer's limit of {}",
                limits.max_steps
            ))
            .field("steps"));
        }
        check_inplace(&r, 1)?;
        Ok(r)
    }

    /// The `--preset`/`--recipe` and `--set` flags of the command that makes this recipe.
    pub fn flags(&self) -> String {
        let mut s = match (&self.preset, &self.toml) {
            (_, Some(_)) => "--recipe recipe.toml".to_string(),
            (Some(p), None) => format!("--preset {}", shell(p)),
            (None, None) => "--preset chapter-strict".to_string(),
        };
        for (k, v) in &self.set {
            s.push_str(&format!(" --set {}", shell(&format!("{k}={v}"))));
        }
        s
    }
}

/// A recipe error with the key it concerns, so the page can show it beside that control.
fn recipe_error(e: cavesweep_core::recipe::RecipeError) -> ApiError {
    use cavesweep_core::recipe::RecipeError as E;
    let key = match &e {
        E::Key { key, .. } => Some(key.clone()),
        E::UnknownKey(k) => Some(k.clone()),
        E::Grid(_) => Some("rows".to_string()),
        _ => None,
    };
    let a = ApiError::bad(e.to_string());
    match key {
        Some(k) => a.field(&k),
        None => a,
    }
}

/// A word as a POSIX shell reads it back: bare when safe, else single-quoted.
pub fn shell(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/=+@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// The picture scale a request asked for, checked.
fn scale(s: Option<usize>, default: usize, r: &Recipe, limits: &Limits) -> Result<usize, ApiError> {
    let s = s.unwrap_or(default);
    if s == 0 || s > limits.max_scale {
        return Err(
            ApiError::bad(format!("scale {s} is outside 1..={}", limits.max_scale)).field("scale"),
        );
    }
    let hex = Marks::of(r).hex();
    let px = render::picture_width(r.rows, r.cols, s, hex) * r.rows * s;
    if px > limits.max_pixels {
        return Err(ApiError::bad(format!(
            "a {}x{} picture at scale {s} is {px} pixels, over the limit of {}; lower the scale",
            r.rows, r.cols, limits.max_pixels
        ))
        .field("scale"));
    }
    render::check_size(r.rows, r.cols, s, hex)
        .map_err(|e| ApiError::bad(e.to_string()).field("scale"))?;
    Ok(s)
}

/// The picture `run --png` writes (the shown cave and the PNG download: the same bytes).
fn picture(g: &Grid, s: usize, marks: &Marks) -> Result<Vec<u8>, ApiError> {
    render::png_bytes(g, s, marks).map_err(|e| ApiError::internal(e.to_string()))
}

/// A picture for the screen only (frames, thumbnails): the same pixels, faster compression.
fn preview(g: &Grid, s: usize, marks: &Marks) -> Result<Vec<u8>, ApiError> {
    render::preview_png(g, s, marks).map_err(|e| ApiError::internal(e.to_string()))
}

/// `/api/cave`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaveReq {
    /// The recipe.
    #[serde(flatten)]
    pub recipe: RecipeReq,
    /// The seed.
    #[serde(default)]
    pub seed: u64,
    /// Pixels per cell (default 6, as `run --png`).
    #[serde(default)]
    pub scale: Option<usize>,
    /// Also the grid after the fill, each pass application and each post-step.
    #[serde(default)]
    pub frames: bool,
    /// Pixels per cell of the frames (default: `scale`). The page asks for 1 and scales them
    /// up on screen: encoding a frame costs in proportion to its pixels, and a cave answered
    /// with 6x frames took ~25 ms against ~4 ms with 1x ones (90x140, 4 steps).
    #[serde(default)]
    pub frame_scale: Option<usize>,
}

/// The seed bound every request shares with the command line.
fn check_seed(seed: u64) -> Result<(), ApiError> {
    if seed > cavesweep_engine::sweep::MAX_SEED {
        return Err(ApiError::bad(format!(
            "seed {seed} is over the largest seed, {}",
            cavesweep_engine::sweep::MAX_SEED
        ))
        .field("seed"));
    }
    Ok(())
}

/// One cave: picture, metrics, trajectory, optionally frames, the command and the TOML.
pub fn cave(req: &CaveReq, limits: &Limits) -> Result<Value, ApiError> {
    let t0 = std::time::Instant::now();
    let r = req.recipe.recipe(limits)?;
    check_seed(req.seed)?;
    let s = scale(req.scale, 6, &r, limits)?;
    let marks = Marks::of(&r);
    let mut generator = Generator::new(&r, MetricSet::ALL).map_err(recipe_error)?;
    let cave = generator
        .run(req.seed)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    let png = picture(cave.grid, s, &marks)?;
    let mut metrics = serde_json::Map::new();
    for m in Metric::ALL {
        metrics.insert(m.name().into(), num(cave.values[m.index()]));
    }
    let trajectory: Vec<Value> = cave.trajectory.iter().map(|&w| num(w)).collect();
    let frames = if req.frames {
        let fs = scale(req.frame_scale, s, &r, limits)?;
        Value::Array(frames(&r, req.seed, fs, &marks, limits)?)
    } else {
        Value::Null
    };
    let mut values = serde_json::Map::new();
    for k in KEYS {
        if let Some(v) = r.value(k) {
            values.insert(k.into(), v.into());
        }
    }
    let flags = req.recipe.flags();
    let scale_flag = if s == 6 {
        String::new()
    } else {
        format!(" --scale {s}")
    };
    Ok(json!({
        "recipe": r.name,
        "seed": req.seed,
        "rows": r.rows,
        "cols": r.cols,
        "scale": s,
        "width": render::picture_width(r.rows, r.cols, s, marks.hex()),
        "height": r.rows * s,
        "values": values,
        "metrics": metrics,
        "trajectory": trajectory,
        "png": b64(&png),
        "frames": frames,
        "command": format!("cavesweep run {flags} --seed {}{scale_flag} --png cave.png", req.seed),
        "toml": r.to_toml(),
        "server_us": t0.elapsed().as_micros() as u64,
    }))
}

/// The grid after the fill, after each pass application and after each post-step, each
/// labelled. Passes are stepped one application at a time from the fill with the library's
/// stepper (the generator's own kernels); each post-step's frame is the recipe run with the
/// post-steps up to it, so a random `bridge` draws what the pipeline draws.
fn frames(
    r: &Recipe,
    seed: u64,
    s: usize,
    marks: &Marks,
    limits: &Limits,
) -> Result<Vec<Value>, ApiError> {
    let n = r.trajectory_len();
    let hex = marks.hex();
    let px = render::picture_width(r.rows, r.cols, s, hex) * r.rows * s;
    if px.saturating_mul(n) > 4 * limits.max_pixels {
        return Err(ApiError::bad(format!(
            "{n} frames of {px} pixels are over the limit of {} pixels; lower the scale",
            4 * limits.max_pixels
        ))
        .field("scale"));
    }
    let mut out = Vec::with_capacity(n);
    let mut plain = r.clone();
    plain.post.clear();
    let mut generator = Generator::new(&plain, MetricSet::EMPTY).map_err(recipe_error)?;
    let mut g = generator
        .fill(seed)
        .map_err(|e| ApiError::bad(e.to_string()))?
        .clone();
    let frame = |label: String, g: &Grid| -> Result<Value, ApiError> {
        Ok(json!({"label": label, "png": b64(&preview(g, s, marks)?)}))
    };
    out.push(frame("fill".into(), &g)?);
    let mut stepper = Stepper::new();
    for (i, pass) in r.passes.iter().enumerate() {
        let one = Pass { repeat: 1, ..*pass };
        for k in 0..pass.repeat {
            stepper.step(&mut g, &one);
            out.push(frame(format!("pass {} step {}", i + 1, k + 1), &g)?);
        }
    }
    for j in 0..r.post.len() {
        let mut upto = r.clone();
        upto.post.truncate(j + 1);
        let mut gen_j = Generator::new(&upto, MetricSet::EMPTY).map_err(recipe_error)?;
        let cave = gen_j.run(seed).map_err(|e| ApiError::bad(e.to_string()))?;
        out.push(frame(format!("post {}", r.post[j]), cave.grid)?);
    }
    Ok(out)
}

/// `/api/thumbs`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThumbsReq {
    /// The recipe.
    #[serde(flatten)]
    pub recipe: RecipeReq,
    /// The first seed.
    #[serde(default)]
    pub seed: u64,
    /// How many (1..=16).
    #[serde(default = "sixteen")]
    pub count: u64,
    /// Pixels per cell (default 2).
    #[serde(default)]
    pub scale: Option<usize>,
}

fn sixteen() -> u64 {
    16
}

/// Thumbnails of `count` consecutive seeds, with two headline metrics each.
pub fn thumbs(req: &ThumbsReq, limits: &Limits) -> Result<Value, ApiError> {
    let r = req.recipe.recipe(limits)?;
    if req.count == 0 || req.count > limits.max_thumbs {
        return Err(ApiError::bad(format!(
            "count {} is outside 1..={}",
            req.count, limits.max_thumbs
        ))
        .field("count"));
    }
    check_inplace(&r, req.count)?;
    let last = req.seed.checked_add(req.count - 1);
    check_seed(last.unwrap_or(u64::MAX))?;
    let s = scale(req.scale, 2, &r, limits)?;
    let marks = Marks::of(&r);
    let metrics: MetricSet = [Metric::FloorFraction, Metric::Components]
        .into_iter()
        .collect();
    let mut generator = Generator::new(&r, metrics).map_err(recipe_error)?;
    let mut out = Vec::new();
    for seed in req.seed..req.seed + req.count {
        let cave = generator
            .run(seed)
            .map_err(|e| ApiError::bad(e.to_string()))?;
        out.push(json!({
            "seed": seed,
            "png": b64(&preview(cave.grid, s, &marks)?),
            "floor_fraction": num(cave.values[Metric::FloorFraction.index()]),
            "components": num(cave.values[Metric::Components.index()]),
        }));
    }
    Ok(json!({ "thumbs": out }))
}

/// `/api/export`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportReq {
    /// The recipe.
    #[serde(flatten)]
    pub recipe: RecipeReq,
    /// The seed.
    #[serde(default)]
    pub seed: u64,
    /// `png`, `txt`, `csv`, `npy`, `json`, `tmj`, `tmx`, `tiles` or `toml`.
    pub format: String,
    /// Pixels per cell of `png` (default 6).
    #[serde(default)]
    pub scale: Option<usize>,
}

/// A file to download: its name, media type and bytes.
pub struct Download {
    /// The file name offered.
    pub name: String,
    /// Its media type.
    pub mime: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The shown cave (or its recipe) as a file, exactly as the command line writes it:
/// `run --png` for `png`, `run --save cave.EXT` for the map formats, `presets`' TOML for `toml`.
pub fn export(req: &ExportReq, limits: &Limits) -> Result<Download, ApiError> {
    let r = req.recipe.recipe(limits)?;
    check_seed(req.seed)?;
    let base = format!("{}-{}", sanitize(&r.name), req.seed);
    match req.format.as_str() {
        "toml" => {
            return Ok(Download {
                name: format!("{}.toml", sanitize(&r.name)),
                mime: "application/toml",
                bytes: r.to_toml().into_bytes(),
            });
        }
        "tiles" => {
            return Ok(Download {
                name: mapfile::TILES_PNG.to_string(),
                mime: "image/png",
                bytes: tiles_png(),
            });
        }
        _ => {}
    }
    let mut generator = Generator::new(&r, MetricSet::ALL).map_err(recipe_error)?;
    let cave = generator
        .run(req.seed)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    if req.format == "png" {
        let s = scale(req.scale, 6, &r, limits)?;
        return Ok(Download {
            name: format!("{base}.png"),
            mime: "image/png",
            bytes: picture(cave.grid, s, &Marks::of(&r))?,
        });
    }
    let format = Format::ALL
        .into_iter()
        .find(|f| f.extension() == req.format && *f != Format::Png)
        .ok_or_else(|| {
            ApiError::bad(format!(
                "format {:?} is not one of png, txt, csv, npy, json, tmj, tmx, tiles, toml",
                req.format
            ))
            .field("format")
        })?;
    let metrics: Vec<(&str, f64)> = Metric::ALL
        .into_iter()
        .map(|m| (m.name(), cave.values[m.index()]))
        .collect();
    let info = MapInfo {
        recipe: Some(&r),
        seed: Some(req.seed),
        metrics: &metrics,
        spawn: Some(r.spawn_cell()),
        exit: r.exit_cell(),
    };
    let name = format!("{base}.{}", format.extension());
    let files = mapfile::files(std::path::Path::new(&name), cave.grid, &info)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let (_, bytes) = files.into_iter().next().expect("the map file comes first");
    let mime = match format {
        Format::Npy => "application/octet-stream",
        Format::Json | Format::Tmj => "application/json",
        Format::Tmx => "application/xml",
        Format::Csv => "text/csv",
        _ => "text/plain; charset=utf-8",
    };
    Ok(Download { name, mime, bytes })
}

/// The tileset picture a Tiled map refers to (the one `run --save cave.tmj` writes beside it).
fn tiles_png() -> Vec<u8> {
    let g = Grid::new(1, 1).expect("a 1x1 grid");
    let files = mapfile::files(std::path::Path::new("x.tmj"), &g, &MapInfo::default())
        .expect("a Tiled map's files");
    files
        .into_iter()
        .nth(1)
        .expect("the tileset comes second")
        .1
}

/// A recipe name as part of a file name: letters, digits, `-` and `_` only.
fn sanitize(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if t.is_empty() { "cave".into() } else { t }
}
