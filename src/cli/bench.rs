//! `cavesweep bench`: pipeline and kernel throughput per preset, with the oracle beside it.
//! `--search` measures the seed-search figures instead (see `bench/search.rs`).

mod search;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use cavesweep::benchmark::{
    PresetBench, Spread, Stages, bench_recipe, paths_rates, simd_path, stage_times,
};
use cavesweep::io::write_atomic;
use cavesweep::measure::MetricSet;
use cavesweep::presets::{NAMES, preset};
use cavesweep::recipe::{MAX_RECIPE_BYTES, Recipe};
use cavesweep::simd::Simd;
use clap::Args;

#[derive(Args)]
pub struct BenchArgs {
    /// Presets to measure (repeatable; default: all, or none when --recipe is given).
    #[arg(long)]
    preset: Vec<String>,
    /// Recipe files (TOML, as `sweep --recipe`) to measure after the presets, each under its
    /// `name` (repeatable): e.g. a preset at another size, to compare per-cell costs in one run.
    #[arg(long, value_name = "FILE")]
    recipe: Vec<PathBuf>,
    /// Seconds per figure per preset (split over the repeats).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Repeats per figure; the table shows the median and [min-max].
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    repeats: u64,
    /// Metrics each cave computes (as `sweep --metrics`).
    #[arg(
        long,
        default_value = "floor_fraction,components,largest_fraction,connected_fraction,boundary"
    )]
    metrics: MetricSet,
    /// Threads for the parallel figure (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Measure the seed-search figures instead (search vs generation alone, search --top vs
    /// sweep); default preset chapter-strict. With --out, writes DIR/search.csv.
    #[arg(long)]
    search: bool,
    /// Seeds of the `search --top` vs `sweep` figure (the rejecting search uses a fifth).
    #[arg(long, default_value_t = 1_000_000, requires = "search")]
    search_seeds: u64,
    /// Measure the sweep machinery on parameter grids instead (1,025, 10,000 and 100,000 points
    /// against one point doing the same work), through real sweeps into a scratch folder; with
    /// --out, writes DIR/grid.csv.
    #[arg(long)]
    grid: bool,
    /// Caves per sweep of the --grid benchmark.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1000..))]
    grid_caves: u64,
    /// Also measure every SIMD path this CPU runs (forced as `CAVESWEEP_SIMD` would), one
    /// thread per preset (and, with --out, write DIR/paths.csv).
    #[arg(long)]
    paths: bool,
    /// Also write the figures as DIR/bench.csv and DIR/stages.csv (DIR is created if needed).
    /// Without it, bench only prints: it writes no file unless asked to.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace figures an earlier bench left in --out (without it, bench refuses before it
    /// measures anything).
    #[arg(long, requires = "out")]
    force: bool,
}

/// The files `bench` writes into --out in this mode.
fn out_files(a: &BenchArgs) -> Vec<&'static str> {
    if a.search {
        vec!["search.csv"]
    } else if a.grid {
        vec!["grid.csv"]
    } else if a.paths {
        vec!["bench.csv", "stages.csv", "paths.csv"]
    } else {
        vec!["bench.csv", "stages.csv"]
    }
}

/// Before measuring (minutes, maybe): --out is a folder bench can write, and holds no earlier
/// figures unless --force. A run that would fail only at its end wastes the run.
fn check_out(a: &BenchArgs) -> Result<()> {
    let Some(dir) = &a.out else { return Ok(()) };
    if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
        bail!("--out {} is not a folder", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    cavesweep::io::AtomicFile::create(&dir.join(".cavesweep-bench-probe"))
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    let paths: Vec<PathBuf> = out_files(a).iter().map(|n| dir.join(n)).collect();
    cavesweep::io::check_writable(paths.iter().map(PathBuf::as_path))?;
    if !a.force {
        for path in paths {
            if std::fs::symlink_metadata(&path).is_ok() {
                bail!(
                    "{} exists (figures of an earlier bench): pass --force to replace it",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// `--preset` names in order, each once (a repeated name would measure and print it twice).
fn preset_names(a: &BenchArgs, default: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let given: Vec<String> = if a.preset.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        a.preset.clone()
    };
    for n in given {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The recipes to measure: the `--preset`s (`default` when none is given and no `--recipe`
/// either), then the `--recipe` files in order.
fn recipes(a: &BenchArgs, default: &[&str]) -> Result<Vec<Recipe>> {
    let mut out = Vec::new();
    if !a.preset.is_empty() || a.recipe.is_empty() {
        for n in preset_names(a, default) {
            out.push(preset(&n)?);
        }
    }
    for path in &a.recipe {
        let text = cavesweep::io::read_to_string_capped(path, MAX_RECIPE_BYTES)
            .with_context(|| format!("cannot read recipe {}", path.display()))?;
        out.push(Recipe::from_toml(&text).with_context(|| format!("recipe {}", path.display()))?);
    }
    Ok(out)
}

fn human(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if v >= 100e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn spread(s: &Spread) -> String {
    format!("{} [{}-{}]", human(s.median), human(s.min), human(s.max))
}

pub fn main(a: BenchArgs) -> Result<()> {
    let threads = check_args(&a)?;
    if a.search {
        let recipes = recipes(&a, &["chapter-strict"])?;
        return search::main(
            &recipes,
            threads,
            a.repeats as usize,
            a.search_seeds,
            a.out.as_deref(),
        );
    }
    if a.grid {
        return grid(&a, threads);
    }
    let recipes = recipes(&a, &NAMES)?;
    let slice = Duration::from_secs_f64(a.seconds / a.repeats as f64);
    let mut out = std::io::stdout().lock();
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        (
            "bench.csv",
            pipeline(&a, &recipes, threads, slice, &mut out)?,
        ),
        ("stages.csv", stages(&a, &recipes, slice, &mut out)?),
    ];
    if a.paths {
        files.push(("paths.csv", paths(&a, &recipes, slice, &mut out)?));
    }
    let Some(dir) = &a.out else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, bytes) in files {
        let path = dir.join(name);
        write_atomic(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(())
}

/// The flags `main` refuses before it measures anything; returns the thread count.
fn check_args(a: &BenchArgs) -> Result<usize> {
    if !(a.seconds > 0.0 && a.seconds <= 3600.0) {
        bail!("--seconds must be more than 0 and at most 3600");
    }
    let threads = super::sweep::check_threads(a.threads)?;
    if a.search && a.grid {
        bail!("--search and --grid are two benchmarks: give one of them");
    }
    if a.search_seeds < 1000 {
        bail!("--search-seeds must be at least 1000");
    }
    if a.grid && !a.recipe.is_empty() {
        bail!("--recipe applies to the pipeline and --search benchmarks, not to --grid");
    }
    if a.paths && (a.search || a.grid) {
        bail!("--paths applies to the pipeline benchmark, not to --search or --grid");
    }
    check_out(a)?;
    Ok(threads)
}

/// The pipeline table (1 thread, all threads, the oracle, the step kernels) on stdout; returns
/// `bench.csv`.
fn pipeline(
    a: &BenchArgs,
    recipes: &[Recipe],
    threads: usize,
    slice: Duration,
    out: &mut impl Write,
) -> Result<Vec<u8>> {
    writeln!(
        out,
        "cavesweep bench: {} repeats x {:.2} s per figure, {threads} threads, SIMD {}, metrics {}",
        a.repeats,
        slice.as_secs_f64(),
        simd_path(),
        a.metrics
    )?;
    writeln!(
        out,
        "median [min-max]; caves/s = whole pipeline (fill, passes, post-steps, metrics)"
    )?;
    writeln!(
        out,
        "{:<15} {:>24} {:>24} {:>7} {:>24} {:>9} {:>22} {:>22} {:>9}",
        "preset",
        "caves/s 1 thread",
        format!("caves/s {}", super::sweep::threads_word(threads)),
        "scaling",
        "oracle caves/s",
        "vs oracle",
        "step cells/s",
        "oracle step cells/s",
        "vs oracle"
    )?;
    let mut rows: Vec<PresetBench> = Vec::new();
    for r in recipes {
        let b = bench_recipe(r, a.metrics, threads, a.repeats as usize, slice)?;
        writeln!(
            out,
            "{:<15} {:>24} {:>24} {:>6.2}x {:>24} {:>8.0}x {:>22} {:>22} {:>8.0}x",
            b.preset,
            spread(&b.caves_1),
            spread(&b.caves_n),
            b.caves_n.median / b.caves_1.median,
            spread(&b.oracle_caves),
            b.caves_1.median / b.oracle_caves.median,
            spread(&b.step_cells),
            spread(&b.oracle_step_cells),
            b.step_cells.median / b.oracle_step_cells.median,
        )?;
        rows.push(b);
    }
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "preset",
        "cells",
        "threads",
        "repeats",
        "seconds",
        "simd",
        "metrics",
        "caves_1_median",
        "caves_1_min",
        "caves_1_max",
        "caves_n_median",
        "caves_n_min",
        "caves_n_max",
        "oracle_caves_median",
        "oracle_caves_min",
        "oracle_caves_max",
        "step_cells_median",
        "step_cells_min",
        "step_cells_max",
        "oracle_step_cells_median",
        "oracle_step_cells_min",
        "oracle_step_cells_max",
    ])?;
    for b in &rows {
        let mut rec = vec![
            b.preset.clone(),
            b.cells.to_string(),
            b.threads.to_string(),
            a.repeats.to_string(),
            a.seconds.to_string(),
            simd_path(),
            a.metrics.to_string(),
        ];
        for s in [
            &b.caves_1,
            &b.caves_n,
            &b.oracle_caves,
            &b.step_cells,
            &b.oracle_step_cells,
        ] {
            rec.extend([s.median, s.min, s.max].map(|v| format!("{v:.1}")));
        }
        csv.write_record(rec)?;
    }
    Ok(csv.into_inner()?)
}

/// Where a cave's time goes, one thread, on the path in use: the stages table on stdout;
/// returns `stages.csv`.
fn stages(
    a: &BenchArgs,
    recipes: &[Recipe],
    slice: Duration,
    out: &mut impl Write,
) -> Result<Vec<u8>> {
    let simd = Simd::active();
    writeln!(out)?;
    writeln!(
        out,
        "stages, us per cave, 1 thread, SIMD path {simd} (medians of {} repeats, and on the \
         (min) line their minimum, what a quiet machine approaches; measure = as the pipeline \
         measures, a lane batch at once where it can; copy-out = lanes to grids, none where the \
         caves are measured in their lanes; measure/cave = one cave at a time, as range tails \
         do; total = the whole pipeline timed on its own)",
        a.repeats
    )?;
    writeln!(
        out,
        "{:<15} {:>8} {:>8} {:>9} {:>8} {:>8} {:>12} {:>8}",
        "preset", "fill", "passes", "copy-out", "post", "measure", "measure/cave", "total"
    )?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "preset",
        "simd",
        "metrics",
        "fill_us",
        "passes_us",
        "copy_us",
        "post_us",
        "measure_us",
        "measure_one_us",
        "total_us",
        "fill_min_us",
        "passes_min_us",
        "copy_min_us",
        "post_min_us",
        "measure_min_us",
        "measure_one_min_us",
        "total_min_us",
    ])?;
    for r in recipes {
        let st: Stages = stage_times(r, a.metrics, simd, a.repeats as usize, slice)?;
        for (label, min) in [(r.name.as_str(), false), ("  (min)", true)] {
            let v = st.all().map(|s| if min { s.min } else { s.median });
            writeln!(
                out,
                "{:<15} {:>8.3} {:>8.3} {:>9.3} {:>8.3} {:>8.3} {:>12.3} {:>8.3}",
                label, v[0], v[1], v[2], v[3], v[4], v[5], v[6]
            )?;
        }
        let mut rec = vec![r.name.clone(), simd.to_string(), a.metrics.to_string()];
        rec.extend(st.all().map(|s| format!("{:.4}", s.median)));
        rec.extend(st.all().map(|s| format!("{:.4}", s.min)));
        csv.write_record(rec)?;
    }
    Ok(csv.into_inner()?)
}

/// Caves/s per SIMD path this CPU runs, one thread: the table on stdout; returns `paths.csv`.
fn paths(
    a: &BenchArgs,
    recipes: &[Recipe],
    slice: Duration,
    out: &mut impl Write,
) -> Result<Vec<u8>> {
    let all = Simd::available();
    writeln!(out)?;
    writeln!(
        out,
        "caves/s per SIMD path, 1 thread (medians of {} repeats; each path forced as \
         CAVESWEEP_SIMD would)",
        a.repeats
    )?;
    let mut head = format!("{:<15}", "preset");
    for p in &all {
        head += &format!(" {:>15}", p.to_string());
    }
    writeln!(out, "{head}")?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(["preset", "path", "level", "metrics", "caves_1_median"])?;
    for r in recipes {
        let rates = paths_rates(r, a.metrics, a.repeats as usize, slice)?;
        let mut line = format!("{:<15}", r.name);
        for (p, v) in &rates {
            line += &format!(" {:>15}", human(*v));
            csv.write_record([
                r.name.clone(),
                p.to_string(),
                p.level().to_string(),
                a.metrics.to_string(),
                format!("{v:.1}"),
            ])?;
        }
        writeln!(out, "{line}")?;
    }
    Ok(csv.into_inner()?)
}

/// `cavesweep bench --grid`.
fn grid(a: &BenchArgs, threads: usize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "cavesweep bench --grid: sweeps of ~{} caves each, {} repeats interleaved, {threads} threads, SIMD {}, metrics {}",
        a.grid_caves,
        a.repeats,
        simd_path(),
        a.metrics
    )?;
    writeln!(
        out,
        "median [min-max]; caves/s of the whole sweep (generation, statistics, store, CSV files)"
    )?;
    writeln!(
        out,
        "{:<36} {:>8} {:>10} {:>24} {:<22} {:>24} {:>22}",
        "grid", "points", "seeds/pt", "caves/s", "reference", "reference caves/s", "ratio"
    )?;
    let rows = cavesweep::benchmark::grid::bench_grid(
        a.grid_caves,
        threads,
        a.repeats as usize,
        a.metrics,
    )?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "grid",
        "points",
        "seeds_per_point",
        "caves",
        "threads",
        "repeats",
        "simd",
        "metrics",
        "caves_per_s_median",
        "caves_per_s_min",
        "caves_per_s_max",
        "reference",
        "reference_median",
        "ratio_median",
        "ratio_min",
        "ratio_max",
    ])?;
    for r in &rows {
        writeln!(
            out,
            "{:<36} {:>8} {:>10} {:>24} {:<22} {:>24} {:>6.2}x [{:.2}-{:.2}]",
            r.name,
            r.points,
            r.seeds_per_point,
            spread(&r.rate),
            r.reference_name,
            spread(&r.reference),
            r.ratio.median,
            r.ratio.min,
            r.ratio.max
        )?;
        csv.write_record([
            r.name.clone(),
            r.points.to_string(),
            r.seeds_per_point.to_string(),
            r.caves.to_string(),
            threads.to_string(),
            a.repeats.to_string(),
            simd_path(),
            a.metrics.to_string(),
            format!("{:.1}", r.rate.median),
            format!("{:.1}", r.rate.min),
            format!("{:.1}", r.rate.max),
            r.reference_name.clone(),
            format!("{:.1}", r.reference.median),
            format!("{:.3}", r.ratio.median),
            format!("{:.3}", r.ratio.min),
            format!("{:.3}", r.ratio.max),
        ])?;
    }
    let Some(dir) = &a.out else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("grid.csv");
    write_atomic(&path, &csv.into_inner()?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}
