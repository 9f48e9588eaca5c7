//! The sweep engine behind `cavesweep.sweep()`: the call's Python values (converted once by
//! [`crate::args`]) into a [`Plan`], run into
//! an output folder with the library's [`sweep::run`], progress and Ctrl-C on the caller's
//! thread. The summary is read back from the folder's `summary.csv` on the Python side, so the
//! Python user gets exactly the command line's numbers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cavesweep::measure::MetricSet;
use cavesweep::query::Gate;
use cavesweep::sweep::{self, Format, Outcome, PerSeed, Plan, RunOptions, SweepError, SweepSpec};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::cmdline;
use crate::{args, interrupt, recipe, runtime_error, value_error, value_msg};

fn sweep_error(e: SweepError) -> PyErr {
    match e {
        // The folder: unwritable, locked, holding another sweep, corrupt.
        e @ (SweepError::Store(_)
        | SweepError::Merge(_)
        | SweepError::Write { .. }
        | SweepError::Read { .. }
        | SweepError::NotASweep { .. }
        | SweepError::Definition { .. }
        | SweepError::Damaged { .. }) => runtime_error(e),
        e => value_error(e),
    }
}

/// The call's arguments, converted once ([`args`]).
struct Call {
    varies: Vec<args::VaryArg>,
    seeds: args::SeedRun,
    gates: Vec<String>,
    metrics: String,
    per_seed: String,
    chunk: Option<u64>,
    /// `csv`, `parquet` or `both`.
    format: String,
}

/// The library's [`Plan`] of the call.
fn plan(
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
    c: &Call,
) -> PyResult<Plan> {
    let base = recipe::resolve(recipe, overrides)?.into_owned();
    let gates = c
        .gates
        .iter()
        .map(|g| g.parse::<Gate>().map_err(value_error))
        .collect::<PyResult<Vec<_>>>()?;
    let spec = SweepSpec {
        base,
        varies: c.varies.iter().map(|v| v.vary.clone()).collect(),
        seeds: c.seeds.range.clone(),
        gate: Gate::all(&gates).map_err(value_error)?,
        metrics: c.metrics.parse::<MetricSet>().map_err(value_error)?,
        per_seed: c.per_seed.parse::<PerSeed>().map_err(sweep_error)?,
        chunk: c.chunk,
        format: c.format.parse::<Format>().map_err(value_error)?,
    };
    Plan::new(spec).map_err(sweep_error)
}

/// The command line recorded in the sweep folder (manifest.json): the `cavesweep sweep` flags
/// equivalent to this call, without those that do not change the results (threads, out,
/// shard, force), as the command line records itself.
fn command(
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
    call: &Call,
) -> PyResult<String> {
    let mut c = cmdline::new("sweep", recipe, overrides)?;
    let mut flag = |f: &str, v: &str| c.flag(f, v);
    for v in &call.varies {
        flag("--vary", &v.text);
    }
    flag("--seeds", &call.seeds.text);
    for g in &call.gates {
        flag("--gate", g);
    }
    flag("--metrics", &call.metrics);
    flag("--per-seed", &call.per_seed);
    if let Some(n) = call.chunk {
        flag("--chunk", &n.to_string());
    }
    // As the command line records it: `--format` only when not the default.
    if call.format != "csv" {
        flag("--format", &call.format);
    }
    Ok(c.render())
}

/// _sweep(recipe, out, *, seeds, vary, gate, metrics, per_seed, chunk, format, shard, threads,
/// force, progress, **overrides) -> dict: run (or resume) a sweep into `out`. The arguments are
/// `cavesweep.sweep()`'s, which documents them, converted by [`args`]. `progress(done, total)`
/// is called from this thread as work completes. Returns the run's report.
#[pyfunction]
#[pyo3(signature = (recipe, out, *, seeds, vary = None, gate = None,
    metrics = None, per_seed = "kept", chunk = None, format = "csv", shard = None, threads = None,
    force = false, progress = None, **overrides))]
#[allow(clippy::too_many_arguments)]
fn _sweep<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    out: PathBuf,
    seeds: &Bound<'py, PyAny>,
    vary: Option<&Bound<'py, PyAny>>,
    gate: Option<&Bound<'py, PyAny>>,
    metrics: Option<&Bound<'py, PyAny>>,
    per_seed: &str,
    chunk: Option<&Bound<'py, PyAny>>,
    format: &str,
    shard: Option<&Bound<'py, PyAny>>,
    threads: Option<&Bound<'py, PyAny>>,
    force: bool,
    progress: Option<Bound<'py, PyAny>>,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guarded(|| {
        if out.as_os_str().is_empty() {
            return Err(value_msg("out: an empty path names no folder"));
        }
        let metrics = args::strings(metrics, "metrics")?;
        let call = Call {
            varies: args::varies(vary)?,
            seeds: args::seed_run(seeds, "seeds")?,
            gates: args::strings(gate, "gate")?,
            metrics: if metrics.is_empty() {
                "all".into()
            } else {
                metrics.join(",")
            },
            per_seed: per_seed.to_string(),
            chunk: args::opt_uint(chunk, "chunk", 0, u64::MAX)?,
            format: format.to_string(),
        };
        let plan = plan(recipe, overrides, &call)?;
        let shard = args::shard(shard)?;
        let threads = args::threads(threads)?;
        let stop = AtomicBool::new(false);
        let command = command(recipe, overrides, &call)?;
        let opts = RunOptions {
            shard,
            threads,
            force,
            command: &command,
            stop: &stop,
        };
        let (done, total) = (AtomicU64::new(0), AtomicU64::new(0));
        let work = || {
            sweep::run(&plan, &out, &opts, &mut |d, t| {
                done.store(d, Ordering::Relaxed);
                total.store(t, Ordering::Relaxed);
            })
        };
        let mut shown = None;
        let mut tick = |_py: Python<'_>| -> PyResult<()> {
            let now = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
            if let Some(cb) = &progress
                && now.1 > 0
                && shown != Some(now)
            {
                shown = Some(now);
                cb.call1(now)?;
            }
            Ok(())
        };
        let report = interrupt::run(py, &stop, work, &mut tick)?.map_err(sweep_error)?;
        tick(py)?;
        if report.outcome == Outcome::Interrupted {
            // Stopped by something other than a Python exception (nothing raises `stop` else).
            return Err(PyRuntimeError::new_err(format!(
                "sweep stopped early; progress saved in {}",
                out.display()
            )));
        }
        let d = PyDict::new(py);
        d.set_item("seeds_run", report.seeds_run)?;
        d.set_item("seeds_done", report.seeds_done)?;
        d.set_item("seeds_total", report.seeds_total)?;
        d.set_item("passed", report.passed)?;
        d.set_item("elapsed", report.elapsed.as_secs_f64())?;
        d.set_item("points", plan.n_points())?;
        d.set_item("threads", threads)?;
        d.set_item("verified", report.verified)?;
        d.set_item("repairs", report.repairs)?;
        d.set_item("command", command)?;
        Ok(d)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sweep, m)?)?;
    Ok(())
}
