//! `cavesweep sweep` and `cavesweep merge`: flags, progress bar, Ctrl-C, the final report line.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use cavesweep::measure::MetricSet;
use cavesweep::query::Gate;
use cavesweep::sweep::{self, Outcome, PerSeed, Plan, Shard, SweepSpec, vary::Vary};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::RecipeArgs;

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    recipe: RecipeArgs,
    /// Vary a recipe key: `fill=0.40,0.45`, `fill=0.40:0.55:0.05` (inclusive, step),
    /// `steps=1..9` (half-open) or `steps=1..=8`. Several flags make the cartesian grid.
    #[arg(long, value_name = "KEY=VALUES")]
    vary: Vec<Vary>,
    /// Seeds to run, half-open: `0..200` is 200 seeds.
    #[arg(long, value_name = "A..B")]
    seeds: String,
    /// Gate every cave, e.g. `floor_fraction>=0.55 && (components<=3 || !(boundary>900))`
    /// (flags are ANDed; see the README for the query language).
    #[arg(long, value_name = "EXPR")]
    gate: Vec<Gate>,
    /// Metrics to compute and report (comma list or `all`; the gate's metrics are added).
    #[arg(long, default_value = "all")]
    metrics: MetricSet,
    /// Output folder (resumed if it holds the same sweep).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Which caves get a row in seeds.csv: all, kept (passed the gate) or none.
    #[arg(long, default_value = "kept", value_name = "all|kept|none")]
    per_seed: PerSeed,
    /// Run shard K of N (1-based); combine the shard folders with `cavesweep merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
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
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Folder for the merged files (must be empty or new).
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
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

pub fn main(a: SweepArgs) -> Result<()> {
    let base = a.recipe.recipe()?;
    let seeds = sweep::parse_seeds(&a.seeds)?;
    let gate = Gate::all(&a.gate)?;
    if let Some((name, _)) = gate.named().first() {
        bail!("--gate {name}=...: named gates are not supported by sweep yet");
    }
    if a.threads == Some(0) {
        bail!("--threads must be at least 1");
    }
    let plan = Plan::new(SweepSpec {
        base,
        varies: a.vary,
        seeds,
        gate,
        metrics: a.metrics,
        per_seed: a.per_seed,
        chunk: a.chunk,
    })?;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // SIGINT and SIGTERM: finish the chunks in flight, checkpoint, exit.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let mut bar: Option<ProgressBar> = None;
    let report = sweep::run(
        &plan,
        &a.out,
        a.shard.unwrap_or(Shard::WHOLE),
        threads,
        a.force,
        &stop,
        &mut |done, total| {
            let pb = bar.get_or_insert_with(|| progress_bar(total));
            pb.set_position(done);
            pb.set_message(format!("{:.0}/s", pb.per_sec()));
        },
    )?;
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    let secs = report.elapsed.as_secs_f64();
    let rate = report.seeds_run as f64 / secs.max(1e-9);
    let pass = report.passed as f64 / report.seeds_done.max(1) as f64;
    match report.outcome {
        Outcome::Complete => {
            eprintln!(
                "swept {} caves ({} grid points x {} seeds{}) in {secs:.2} s: {rate:.0} caves/s on {threads} threads, pass rate {:.2}% -> {}",
                report.seeds_done,
                plan.points.len(),
                plan.n_seeds(),
                if report.seeds_run < report.seeds_done {
                    format!(", {} resumed", report.seeds_done - report.seeds_run)
                } else {
                    String::new()
                },
                pass * 100.0,
                a.out.display()
            );
            Ok(())
        }
        Outcome::Interrupted => {
            eprintln!(
                "interrupted after {} of {} caves ({rate:.0} caves/s); progress saved in {}: rerun the same command to resume",
                report.seeds_done,
                report.seeds_total,
                a.out.display()
            );
            std::process::exit(130);
        }
    }
}

pub fn merge(a: MergeArgs) -> Result<()> {
    let seeds = cavesweep::sweep::store::merge(&a.dirs, &a.out, a.force)?;
    eprintln!(
        "merged {} shard folders ({seeds} caves) into {}",
        a.dirs.len(),
        a.out.display()
    );
    Ok(())
}
