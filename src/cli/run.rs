//! `cavesweep run`: one cave, its trajectory, its metrics, optionally its picture.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use cavesweep::generate::{Cave, Generator};
use cavesweep::mapfile;
use cavesweep::measure::{Metric, MetricSet};
use cavesweep::recipe::Recipe;
use cavesweep::render;
use cavesweep::simd::{Cpu, Simd};
use clap::Args;

use super::RecipeArgs;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    recipe: RecipeArgs,
    /// Seed of the cave (0 to 18446744073709551614, the largest seed a range can hold).
    #[arg(long, default_value_t = 42,
        value_parser = clap::value_parser!(u64).range(..=cavesweep::sweep::MAX_SEED))]
    seed: u64,
    /// Metrics to compute (comma list, or `all`).
    #[arg(long, default_value = "all")]
    metrics: MetricSet,
    /// Print the map (`#` wall, `.` floor, `S` spawn, `E` exit).
    #[arg(long)]
    ascii: bool,
    /// Write a PNG picture of the cave.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Pixels per cell in the PNG.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(1..=64))]
    scale: u16,
    /// Start from the grid in FILE instead of the recipe's fill: `.txt` (`#` wall, `.` floor),
    /// `.csv` (0/1), `.npy`, `.json`, `.tmj`/`.tmx` (Tiled) or `.png` (dark pixels are walls).
    /// The file sets the cave's size (a `--set rows=`/`cols=` must agree with it); random
    /// post-steps draw from the seed's stream.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Save the cave to FILE, the format from its extension: `.txt`, `.csv`, `.npy`, `.json`,
    /// `.tmj`/`.tmx` (a Tiled map, with `cavesweep-tiles.png` beside it) or `.png` (one pixel
    /// per cell). Repeatable.
    #[arg(long, value_name = "FILE")]
    save: Vec<PathBuf>,
    /// Replace a --png or --save file that holds something else (the same bytes are always
    /// rewritten).
    #[arg(long)]
    force: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
}

fn num(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

pub fn main(a: RunArgs) -> Result<()> {
    let start = match &a.from {
        Some(path) => Some(mapfile::read(path).context("--from")?),
        None => None,
    };
    let recipe = a
        .recipe
        .recipe_shaped(start.as_ref().map(|g| (g.rows(), g.cols())))?;
    if a.png.is_some() {
        let hex = render::Marks::of(&recipe).hex();
        render::check_size(recipe.rows, recipe.cols, a.scale as usize, hex).context("--png")?;
    }
    for path in &a.save {
        mapfile::Format::of_path(path).context("--save")?;
    }
    let mut generator = Generator::new(&recipe, a.metrics)?;
    let cave = match &start {
        Some(g) => generator.run_from(g, a.seed)?,
        None => generator.run(a.seed)?,
    };
    let png = png_file(&a, &recipe, &cave)?;
    let saves = save_files(&a, &recipe, &cave)?;
    // Every file's place is checked before the first is written, and the files are written
    // all or none: a refusal, a missing or read-only folder or a full disk writes none.
    cavesweep::io::check_writable(png.iter().map(|(p, _)| p.as_path())).context("--png")?;
    cavesweep::io::check_writable(saves.iter().map(|(p, _)| p.as_path())).context("--save")?;
    let all: Vec<(&std::path::Path, &[u8])> = png
        .iter()
        .chain(&saves)
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    let flags = if png.is_some() && !saves.is_empty() {
        "--png/--save"
    } else if png.is_some() {
        "--png"
    } else {
        "--save"
    };
    cavesweep::io::write_files(&all).context(flags)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        return json(&a, &recipe, &cave, &mut out);
    }
    trajectory(&a, &recipe, &cave, &mut out)?;
    metrics(&a, &recipe, &cave, &mut out)?;
    if a.ascii {
        write!(
            out,
            "{}",
            render::ascii(cave.grid, Some(recipe.spawn_cell()), recipe.exit_cell())
        )?;
    }
    Ok(())
}

/// The --save files, checked (unless --force) before anything is written: a refusal writes
/// neither them nor the --png picture.
fn save_files(a: &RunArgs, recipe: &Recipe, cave: &Cave) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let metrics: Vec<(&str, f64)> = Metric::ALL
        .into_iter()
        .filter(|&m| a.metrics.contains(m))
        .map(|m| (m.name(), cave.values[m.index()]))
        .collect();
    let info = mapfile::MapInfo {
        recipe: Some(recipe),
        seed: Some(a.seed),
        metrics: &metrics,
        spawn: Some(recipe.spawn_cell()),
        exit: recipe.exit_cell(),
    };
    let mut files = Vec::new();
    for path in &a.save {
        files.extend(mapfile::files(path, cave.grid, &info).context("--save")?);
    }
    if !a.force {
        cavesweep::io::check_no_replace(files.iter().map(|(p, b)| (p.as_path(), b.as_slice())))
            .context("--save")?;
    }
    Ok(files)
}

/// The --png picture's path and bytes, if asked for; unless --force, a file there that holds
/// another picture is refused (before anything is written or printed).
fn png_file(a: &RunArgs, recipe: &Recipe, cave: &Cave) -> Result<Option<(PathBuf, Vec<u8>)>> {
    let Some(path) = &a.png else {
        return Ok(None);
    };
    let bytes = render::png_bytes(cave.grid, a.scale as usize, &render::Marks::of(recipe))
        .context("--png")?;
    if !a.force {
        render::check_replaces_nothing(path, &bytes).context("--png")?;
    }
    Ok(Some((path.clone(), bytes)))
}

/// The --json report: one object on one line (the map in it with --ascii).
fn json(a: &RunArgs, recipe: &Recipe, cave: &Cave, out: &mut impl Write) -> Result<()> {
    let mut obj = serde_json::Map::new();
    obj.insert("recipe".into(), recipe.name.clone().into());
    obj.insert("seed".into(), a.seed.into());
    if let Some(p) = &a.from {
        obj.insert("from".into(), p.display().to_string().into());
    }
    obj.insert("rng".into(), recipe.rng.to_string().into());
    obj.insert("rows".into(), recipe.rows.into());
    obj.insert("cols".into(), recipe.cols.into());
    // Which compiled clone ran, and what the CPU offers (the cave does not depend on it).
    obj.insert("simd".into(), Simd::active().to_string().into());
    obj.insert("cpu".into(), Cpu::get().features().into());
    obj.insert(
        "wall_trajectory".into(),
        cave.trajectory.iter().map(|&w| num(w)).collect(),
    );
    for m in Metric::ALL {
        if a.metrics.contains(m) {
            obj.insert(m.name().into(), num(cave.values[m.index()]));
        }
    }
    if a.ascii {
        obj.insert(
            "map".into(),
            render::ascii(cave.grid, Some(recipe.spawn_cell()), recipe.exit_cell()).into(),
        );
    }
    writeln!(out, "{}", serde_json::Value::Object(obj))?;
    Ok(())
}

/// The text report's heading and wall fraction after the fill, each pass step and each
/// post-step (`cave.trajectory` holds them in that order).
fn trajectory(a: &RunArgs, recipe: &Recipe, cave: &Cave, out: &mut impl Write) -> Result<()> {
    let from = match &a.from {
        Some(p) => format!(" from {}", p.display()),
        None => String::new(),
    };
    writeln!(
        out,
        "{} seed {}{from} ({} rng, {}x{})",
        recipe.name, a.seed, recipe.rng, recipe.rows, recipe.cols
    )?;
    writeln!(out, "wall fraction")?;
    let first = if a.from.is_some() {
        "start grid"
    } else {
        "after fill"
    };
    writeln!(out, "  {first:<20}{:.4}", cave.trajectory[0])?;
    let mut k = 1;
    for (i, pass) in recipe.passes.iter().enumerate() {
        for rep in 0..pass.repeat {
            writeln!(
                out,
                "  pass {} step {:<3}    {:.4}   {} {} {} {}",
                i + 1,
                rep + 1,
                cave.trajectory[k],
                pass.rule,
                pass.update,
                pass.outside,
                pass.border
            )?;
            k += 1;
        }
    }
    for step in &recipe.post {
        writeln!(
            out,
            "  post {:<14} {:.4}",
            step.to_string(),
            cave.trajectory[k]
        )?;
        k += 1;
    }
    Ok(())
}

/// The text report's metrics, in `Metric::ALL` order: `-` for none (NaN), whole numbers
/// without decimals.
fn metrics(a: &RunArgs, recipe: &Recipe, cave: &Cave, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "metrics (spawn {:?}{})",
        recipe.spawn_cell(),
        match recipe.exit_cell() {
            Some(e) => format!(", exit {e:?}"),
            None => String::new(),
        }
    )?;
    for m in Metric::ALL {
        if a.metrics.contains(m) {
            let v = cave.values[m.index()];
            let shown = if v.is_nan() {
                "-".to_string()
            } else if v.fract() == 0.0 {
                format!("{v}")
            } else {
                format!("{v:.4}")
            };
            writeln!(out, "  {:<20} {shown}", m.name())?;
        }
    }
    Ok(())
}
