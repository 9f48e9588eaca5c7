//! `cavesweep sweep` and `cavesweep merge`: flags, progress bar, Ctrl-C, the final report line.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use cavesweep::measure::MetricSet;
use cavesweep::query::{Gate, GateArg};
use cavesweep::sweep::shard::{ShardArg, Shards};
use cavesweep::sweep::{self, Outcome, PerSeed, Plan, RunOptions, SweepSpec, vary::Vary};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::RecipeArgs;

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    recipe: RecipeArgs,
    /// Vary a recipe key: `fill=0.40,0.45`, `fill=0.40:0.55:0.05` (inclusive, step),
    /// `steps=1..9` (half-open) or `steps=1..=8`. Several flags make the cartesian grid.
    #[arg(long, value_name = "KEY=VALUES", value_parser = super::worded::<Vary>)]
    vary: Vec<Vary>,
    /// Seeds to run: `0..200` (half-open: 200 seeds) or `0..=199`; bounds may be written `1e6` or
    /// `1_000_000` (`0..1e6`).
    #[arg(long, value_name = "A..B")]
    seeds: String,
    /// Gate every cave, e.g. `floor_fraction>=0.55 && (components<=3 || !(boundary>900))`
    /// (flags are ANDed; see the README for the query language). `NAME=EXPR` defines a named
    /// gate, counted beside the unnamed one: `pass_rate[NAME]` in summary.csv, `passed[NAME]` in
    /// seeds.csv (repeatable; `passed`, `pass_rate` and `--per-seed kept` follow the unnamed gate).
    #[arg(long, value_name = "EXPR")]
    gate: Vec<String>,
    /// Metrics to compute and report (comma list or `all`; the gate's metrics are added).
    #[arg(long, default_value = "all")]
    metrics: MetricSet,
    /// Output folder (resumed if it holds the same sweep). With --shard, `{shard}` in it is
    /// replaced by each shard's number K (needed when several shards run, or with `auto`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Which caves get a row in seeds.csv: all, kept (passed the gate) or none.
    #[arg(long, default_value = "kept", value_name = "all|kept|none", value_parser = super::worded::<PerSeed>)]
    per_seed: PerSeed,
    /// Run shard K of N (1-based), several (`3,7,11/16`, `1-4/16`: one after another, each in
    /// its own folder), or `auto`/`auto/N`: from a Slurm job array (SLURM_ARRAY_TASK_*) or a
    /// Kubernetes Indexed Job (JOB_COMPLETION_INDEX), N shards dealt over the tasks (default:
    /// one per task). Combine the shard folders with `cavesweep merge`.
    #[arg(long, value_name = "K/N|auto[/N]", value_parser = super::worded::<ShardArg>)]
    shard: Option<ShardArg>,
    /// Table files: `csv` (summary.csv, seeds.csv, ...), `parquet` (summary.parquet,
    /// seeds.parquet, ...: typed, compressed columns for pandas, polars, DuckDB) or `both`.
    #[arg(long, default_value = "csv", value_name = "csv|parquet|both", value_parser = super::worded::<sweep::Format>)]
    format: sweep::Format,
    /// Seeds per chunk, the unit of work and of checkpointing (default: from the seed count).
    #[arg(long)]
    chunk: Option<u64>,
    /// Replace the cavesweep files in an --out folder that holds a different sweep.
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
pub struct MergeArgs {
    /// Shard output folders (from `sweep --shard K/N`).
    #[arg(required_unless_present = "from")]
    dirs: Vec<PathBuf>,
    /// Merge every `shard-K` folder in DIR (what `--out DIR/shard-{shard}` writes); for splits
    /// too large for a command line. May be combined with folders given one by one.
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// Folder for the merged files (new, empty, or an unfinished merge of the same shards).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace the cavesweep files already in --out.
    #[arg(long)]
    force: bool,
}

fn progress_bar(total: u64) -> ProgressBar {
    // Draws only when stderr is a terminal.
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} caves {msg} ETA {eta}",
        )
        .expect("template"),
    );
    // The ticker is a thread that indicatif starts with `thread::spawn`, which panics when
    // the thread cannot start (an address-space limit such as `ulimit -v`): started only
    // where there is something to draw.
    if !pb.is_hidden() {
        pb.enable_steady_tick(Duration::from_millis(200));
    }
    pb
}

/// `1 shard folder`, `3 shard folders`.
fn folders(n: usize) -> String {
    format!("{n} shard folder{}", if n == 1 { "" } else { "s" })
}

/// `1 thread`, `2 threads`.
pub fn threads_word(n: usize) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// The most worker threads accepted: 4 per core (a typo like `--threads 100000` must fail fast,
/// not spawn threads for minutes while ignoring Ctrl-C).
pub fn check_threads(threads: Option<usize>) -> Result<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = 4 * cores;
    match threads {
        None => Ok(cores),
        Some(0) => bail!("--threads must be at least 1"),
        Some(t) if t > cap => {
            bail!(
                "--threads {t} is more than this machine can use (at most {cap}: 4 per core, {cores} cores)"
            )
        }
        Some(t) => Ok(t),
    }
}

/// The command line as recorded in a sweep folder: the flags that decide the results, as typed,
/// without those that do not (`--threads`, `--out`, `--force`, `--shard`), so the record is the
/// same whatever machine, thread count or shard ran it.
fn recorded_command() -> String {
    cavesweep::command::recorded_args(&["--threads", "--out", "--shard"], &["--force"])
}

/// Ctrl-C (or SIGTERM) once: finish the chunks in flight, checkpoint, exit 130. Twice: exit at
/// once (the store holds the last checkpoint; only the work since then is lost).
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            say!(
                "cavesweep: stopping now; rerun the same command to resume from the last checkpoint"
            );
            std::process::exit(130);
        }
    });
    stop
}

pub fn main(a: SweepArgs) -> Result<()> {
    let threads = check_threads(a.threads)?;
    let base = a.recipe.recipe()?;
    let seeds = sweep::parse_seeds(&a.seeds)?;
    // Parsed here, not by clap, so a bad query is one line (clap adds usage lines).
    let gate = Gate::new(
        a.gate
            .iter()
            .map(|g| g.parse::<GateArg>().context("--gate"))
            .collect::<Result<Vec<_>>>()?,
    )
    .context("--gate")?;
    let plan = Plan::new(SweepSpec {
        base,
        varies: a.vary,
        seeds,
        gate,
        metrics: a.metrics,
        per_seed: a.per_seed,
        format: a.format,
        chunk: a.chunk,
    })?;
    let shards = match &a.shard {
        None => Shards::whole(),
        Some(arg) => Shards::resolve(arg, &|v| std::env::var(v).ok())?,
    };
    shards.check_out(&a.out, a.shard.as_ref())?;
    shards.check_plan(&plan)?;
    let stop = stop_on_signals();
    let command = recorded_command();
    let several = shards.len() > 1;
    if several {
        say!(
            "running {} shards ({shards}) one after another",
            shards.len()
        );
    }
    for shard in shards.iter() {
        let out = shards.dir(&a.out, shard);
        let label = if several {
            format!("shard {shard}: ")
        } else {
            String::new()
        };
        let opts = RunOptions {
            shard,
            threads,
            force: a.force,
            command: &command,
            stop: &stop,
        };
        let outcome = run_shard(&plan, &out, &opts, &label).map_err(|e| {
            if several {
                e.context(format!("shard {shard}"))
            } else {
                e
            }
        })?;
        if outcome == Outcome::Interrupted {
            std::process::exit(130);
        }
    }
    Ok(())
}

/// Run (or resume, or verify) one shard's folder and print its report line (after `label`).
fn run_shard(
    plan: &Plan,
    out: &std::path::Path,
    opts: &RunOptions,
    label: &str,
) -> Result<Outcome> {
    let threads = opts.threads;
    let mut bar: Option<ProgressBar> = None;
    let report = sweep::run(plan, out, opts, &mut |done, total| {
        let pb = bar.get_or_insert_with(|| progress_bar(total));
        pb.set_position(done);
        pb.set_message(format!("{:.0}/s", pb.per_sec()));
    })?;
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    for r in &report.repairs {
        say!("cavesweep: {label}repaired: {r}");
    }
    let secs = report.elapsed.as_secs_f64();
    let rate = super::fmt_rate(report.seeds_run as f64 / secs.max(1e-9));
    let pass = report.passed as f64 / report.seeds_done.max(1) as f64;
    match report.outcome {
        Outcome::Complete if report.verified => {
            say!(
                "{label}already complete: {} caves ({} grid points x {} seeds), files verified against their records, pass rate {:.2}% -> {}",
                report.seeds_done,
                plan.n_points(),
                plan.n_seeds(),
                pass * 100.0,
                out.display()
            );
        }
        Outcome::Complete => {
            say!(
                "{label}swept {} caves ({} grid points x {} seeds{}) in {secs:.2} s: {rate} caves/s on {}, pass rate {:.2}% -> {}",
                report.seeds_done,
                plan.n_points(),
                plan.n_seeds(),
                if report.seeds_run < report.seeds_done {
                    format!(", {} resumed", report.seeds_done - report.seeds_run)
                } else {
                    String::new()
                },
                threads_word(threads),
                pass * 100.0,
                out.display()
            );
        }
        Outcome::Interrupted => {
            say!(
                "{label}interrupted after {} of {} caves ({rate} caves/s); progress saved in {}: rerun the same command to resume",
                report.seeds_done,
                report.seeds_total,
                out.display()
            );
        }
    }
    Ok(report.outcome)
}

pub fn merge(a: MergeArgs) -> Result<()> {
    let mut bar: Option<ProgressBar> = None;
    let mut dirs = a.dirs;
    if let Some(from) = &a.from {
        dirs.extend(cavesweep::sweep::merge::shard_folders(from)?);
    }
    let report = cavesweep::sweep::merge::merge(&dirs, &a.out, a.force, &mut |done, total| {
        let pb = bar.get_or_insert_with(|| progress_bar(total));
        pb.set_position(done);
    })?;
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    if report.verified {
        say!(
            "already merged: {} caves from {} in {}, files verified against their records",
            report.caves,
            folders(report.shards),
            a.out.display()
        );
    } else {
        say!(
            "merged {} ({} caves) into {}",
            folders(report.shards),
            report.caves,
            a.out.display()
        );
    }
    Ok(())
}
