//! The sweep engine behind `cavesweep.sweep()`: the CLI's `sweep` flags (as the CLI's own
//! strings, which `cavesweep/_sweep.py` builds from Python values) into a [`Plan`], run into
//! an output folder with the library's [`sweep::run`], progress and Ctrl-C on the caller's
//! thread. The summary is read back from the folder's `summary.csv` on the Python side, so the
//! Python user gets exactly the command line's numbers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cavesweep::measure::MetricSet;
use cavesweep::query::Gate;
use cavesweep::sweep::{self, Outcome, PerSeed, Plan, RunOptions, Shard, SweepError, SweepSpec};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::cmdline;
use crate::{interrupt, recipe, runtime_error, value_error, value_msg};

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

/// Parse every flag, as the CLI does.
#[allow(clippy::too_many_arguments)]
fn plan(
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
    vary: &[String],
    seeds: &str,
    gate: &[String],
    metrics: &str,
    per_seed: &str,
    chunk: Option<u64>,
) -> PyResult<Plan> {
    let base = recipe::resolve(recipe, overrides)?.into_owned();
    let varies = vary
        .iter()
        .map(|v| v.parse().map_err(value_error))
        .collect::<PyResult<Vec<_>>>()?;
    let gates = gate
        .iter()
        .map(|g| g.parse::<Gate>().map_err(value_error))
        .collect::<PyResult<Vec<_>>>()?;
    let spec = SweepSpec {
        base,
        varies,
        seeds: sweep::parse_seeds(seeds).map_err(sweep_error)?,
        gate: Gate::all(&gates).map_err(value_error)?,
        metrics: metrics.parse::<MetricSet>().map_err(value_error)?,
        per_seed: per_seed.parse::<PerSeed>().map_err(sweep_error)?,
        chunk,
    };
    Plan::new(spec).map_err(sweep_error)
}

/// The command line recorded in the sweep folder (manifest.json): the `cavesweep sweep` flags
/// equivalent to this call, without those that do not change the results (threads, out,
/// shard, force), as the command line records itself.
#[allow(clippy::too_many_arguments)]
fn command(
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
    vary: &[String],
    seeds: &str,
    gate: &[String],
    metrics: &str,
    per_seed: &str,
    chunk: Option<u64>,
) -> PyResult<String> {
    let mut c = cmdline::new("sweep", recipe, overrides)?;
    let mut flag = |f: &str, v: &str| c.flag(f, v);
    for v in vary {
        flag("--vary", v);
    }
    flag("--seeds", seeds);
    for g in gate {
        flag("--gate", g);
    }
    flag("--metrics", metrics);
    flag("--per-seed", per_seed);
    if let Some(n) = chunk {
        flag("--chunk", &n.to_string());
    }
    Ok(c.render())
}

/// _sweep(recipe, out, *, vary, seeds, gate, metrics, per_seed, chunk, shard, threads, force,
/// progress, **overrides) -> dict: run (or resume) a sweep into `out`; the CLI's flags as
/// strings. `progress(done, total)` is called from this thread as work completes.
/// Returns the run's report. Used by `cavesweep.sweep()`, which documents the arguments.
#[pyfunction]
#[pyo3(signature = (recipe, out, *, seeds, vary = Vec::new(), gate = Vec::new(),
    metrics = "all", per_seed = "kept", chunk = None, shard = None, threads = None,
    force = false, progress = None, **overrides))]
#[allow(clippy::too_many_arguments)]
fn _sweep<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    out: PathBuf,
    seeds: &str,
    vary: Vec<String>,
    gate: Vec<String>,
    metrics: &str,
    per_seed: &str,
    chunk: Option<u64>,
    shard: Option<&str>,
    threads: Option<usize>,
    force: bool,
    progress: Option<Bound<'py, PyAny>>,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let plan = plan(
        recipe, overrides, &vary, seeds, &gate, metrics, per_seed, chunk,
    )?;
    let shard = match shard {
        Some(s) => s.parse::<Shard>().map_err(|e| sweep_error(e.into()))?,
        None => Shard::WHOLE,
    };
    let threads = match threads {
        Some(0) => return Err(value_msg("threads must be at least 1")),
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let stop = AtomicBool::new(false);
    let command = command(
        recipe, overrides, &vary, seeds, &gate, metrics, per_seed, chunk,
    )?;
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
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sweep, m)?)?;
    Ok(())
}
