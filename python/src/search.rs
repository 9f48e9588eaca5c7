//! The search engine behind `cavesweep.search()`: the call's Python values (converted once by
//! [`crate::args`]) into a library [`Search`], run with
//! the library's [`Search::run`] on worker threads while the calling thread shows progress and
//! takes Ctrl-C. The matches come back as numpy columns; with `out` the same CSV as
//! `cavesweep search --out FILE.csv` is written as rows are found, and the finished chunks are
//! checkpointed beside it exactly as the command line does (so either can resume the other).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cavesweep::measure::{Metric, MetricSet};
use cavesweep::query::Expr;
use cavesweep::search::output::{self, IfComplete, Opened, OutFile, OutputError};
use cavesweep::search::{
    ChunkRecord, Match, Mode, Order, Outcome, PngSpec, Progress, Search, SearchError, SearchSpec,
    Seeds, Sink, read_seeds,
};
use numpy::PyArray1;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::cmdline;
use crate::{args, error_line, interrupt, recipe, runtime_error, value_error, value_msg};

/// The rows: kept for Python, and written to `out` as the command line writes them.
struct Collect<'a> {
    search: &'a Search,
    rows: Vec<Match>,
    file: Option<OutFile>,
    buf: Vec<u8>,
    progress: &'a [AtomicU64; 3],
}

impl Collect<'_> {
    fn write(&mut self, bytes: &[u8], rows: u64) -> Result<(), SearchError> {
        let Some(f) = &mut self.file else {
            return Ok(());
        };
        f.write(bytes, rows).map_err(|source| SearchError::Io {
            what: format!("cannot write {}", f.path().display()),
            source,
        })
    }
}

impl Sink for Collect<'_> {
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
        self.rows.extend_from_slice(rows);
        if self.file.is_some() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            for m in rows {
                self.search.row(m, &mut buf);
            }
            let r = self.write(&buf, rows.len() as u64);
            self.buf = buf;
            r?;
        }
        Ok(())
    }

    fn chunk(&mut self, record: &ChunkRecord) -> Result<(), SearchError> {
        match &mut self.file {
            Some(f) => f.record(record),
            None => Ok(()),
        }
    }

    fn progress(&mut self, p: &Progress) {
        self.progress[0].store(p.examined, Ordering::Relaxed);
        self.progress[1].store(p.total, Ordering::Relaxed);
        self.progress[2].store(p.matches, Ordering::Relaxed);
    }
}

/// `--limit`, `--top`, `--by`, `--order` into a [`Mode`], refused as the command line refuses
/// them (the same messages).
fn mode(
    limit: Option<u64>,
    top: Option<u64>,
    by: Option<&str>,
    order: Option<&str>,
) -> PyResult<Mode> {
    let err = |m: &str| Err(PyValueError::new_err(m.to_string()));
    let mode = match (limit, top, by) {
        (Some(_), Some(_), _) => return err("limit= and top=: give one of them"),
        (Some(0), None, _) => return Err(search_error(SearchError::LimitZero)),
        (Some(n), None, None) => Mode::Limit(n),
        (None, Some(0), _) => return Err(search_error(SearchError::TopZero)),
        (None, Some(_), None) => return err("top= needs by= (the metric to rank by)"),
        (None, Some(k), Some(by)) => Mode::Top {
            k,
            by: by
                .parse::<Metric>()
                .map_err(|e| value_msg(format!("by=: {e}")))?,
            order: match order {
                None => Order::Desc,
                Some(o) => o
                    .parse::<Order>()
                    .map_err(|e| value_msg(format!("order=: {e}")))?,
            },
        },
        (_, None, Some(_)) => return err("by= ranks the matches of top=K: give top= too"),
        (None, None, None) => Mode::All,
    };
    if order.is_some() && top.is_none() {
        return err("order= applies to top=: give top=K and by= too");
    }
    Ok(mode)
}

fn search_error(e: SearchError) -> PyErr {
    value_error(e)
}

/// An output-file error in Python's words: a bad `out=` is a ValueError, a file or checkpoint
/// that cannot be used (unwritable, locked, another search's) a RuntimeError.
fn out_error(e: OutputError) -> PyErr {
    match e {
        OutputError::Empty | OutputError::IsFolder(_) => {
            value_msg(format!("out={}", error_line(&e)))
        }
        OutputError::Checkpoint(e @ (SearchError::Png(_) | SearchError::Save(_))) => {
            search_error(e)
        }
        e => runtime_error(e),
    }
}

/// The matches as numpy columns, as `pandas.read_csv` reads the command line's CSV: `seed` as
/// int64 (uint64 if a seed is 2**63 or more), counts as int64 unless a value is empty (then
/// float64 with NaN, like fractions).
fn columns<'py>(py: Python<'py>, s: &Search, rows: &[Match]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if rows.iter().all(|m| m.seed <= i64::MAX as u64) {
        let v: Vec<i64> = rows.iter().map(|m| m.seed as i64).collect();
        d.set_item("seed", PyArray1::from_vec(py, v))?;
    } else {
        let v: Vec<u64> = rows.iter().map(|m| m.seed).collect();
        d.set_item("seed", PyArray1::from_vec(py, v))?;
    }
    for m in s.columns().iter() {
        let v: Vec<f64> = rows.iter().map(|r| r.values[m.index()]).collect();
        let count = !m.name().ends_with("_fraction");
        if count && v.iter().all(|x| !x.is_nan()) {
            let v: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            d.set_item(m.name(), PyArray1::from_vec(py, v))?;
        } else {
            d.set_item(m.name(), PyArray1::from_vec(py, v))?;
        }
    }
    Ok(d)
}

/// The command recorded in the checkpoint: the `cavesweep search` flags that decide the rows.
fn command(
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
    query: &str,
    search: &Search,
    seeds_text: Option<&str>,
    seeds_from: Option<&std::path::Path>,
    metrics: Option<&str>,
) -> PyResult<String> {
    let mut cmd = cmdline::new("search", recipe, overrides)?;
    cmd.flag("--where", query);
    match (&search.spec().seeds, seeds_text, seeds_from) {
        (_, Some(s), _) => cmd.flag("--seeds", s),
        (_, _, Some(f)) => cmd.flag("--seeds-from", &f.display().to_string()),
        (s, _, _) => cmd.flag("--seeds-from", &format!("<a list of {} seeds>", s.len())),
    }
    match search.spec().mode {
        Mode::All => {}
        Mode::Limit(n) => cmd.flag("--limit", &n.to_string()),
        Mode::Top { k, by, order } => {
            cmd.flag("--top", &k.to_string());
            cmd.flag("--by", by.name());
            cmd.flag("--order", if order == Order::Asc { "asc" } else { "desc" });
        }
    }
    if let Some(m) = metrics {
        cmd.flag("--metrics", m);
    }
    if let Some(n) = search.spec().chunk {
        cmd.flag("--chunk", &n.to_string());
    }
    Ok(cmd.render())
}

/// The output file and the chunks its checkpoint already holds (none without `out`). A
/// completed search is searched again (the rows are wanted here), its bytes rewritten.
fn open_out(
    search: &Search,
    out: Option<&std::path::Path>,
    command: &str,
    force: bool,
    threads: usize,
) -> PyResult<(Option<OutFile>, Vec<ChunkRecord>)> {
    match out {
        Some(path) => {
            let opened = output::open(
                search,
                path,
                command,
                force,
                IfComplete::SearchAgain,
                threads,
            )
            .map_err(out_error)?;
            let Opened::Open(mut f) = opened else {
                unreachable!("IfComplete::SearchAgain always opens the file")
            };
            let prior = f.take_prior();
            Ok((Some(*f), prior))
        }
        None => {
            search.create_match_dirs().map_err(runtime_error)?;
            Ok((None, Vec::new()))
        }
    }
}

/// Search on `threads` workers, `prior`'s chunks skipped, the rows kept and written to `file`;
/// this thread shows progress and takes Ctrl-C. The file is finished when the search is.
fn run(
    py: Python<'_>,
    search: &Search,
    file: Option<OutFile>,
    prior: &[ChunkRecord],
    threads: usize,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<(cavesweep::search::SearchSummary, Vec<Match>)> {
    let stop = AtomicBool::new(false);
    let counts = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
    let rows = Mutex::new(Vec::new());
    let work = || -> Result<(cavesweep::search::SearchSummary, Option<OutFile>), PyErr> {
        let mut sink = Collect {
            search,
            rows: Vec::new(),
            file,
            buf: Vec::new(),
            progress: &counts,
        };
        let header = search.header();
        let result = sink
            .write(&header, 0)
            .and_then(|()| search.run(threads, &stop, prior, &mut sink));
        // Whatever happened, keep the chunks that finished.
        let saved = sink.file.as_mut().map_or(Ok(()), OutFile::save);
        *rows.lock().unwrap() = std::mem::take(&mut sink.rows);
        let report = result.map_err(|e| match e {
            SearchError::Io { .. } => runtime_error(e),
            e => search_error(e),
        })?;
        saved.map_err(runtime_error)?;
        let mut file = sink.file.take();
        if matches!(report.outcome, Outcome::Interrupted)
            && let Some(f) = file.take()
        {
            // Here, not after `interrupt::run`, which returns a KeyboardInterrupt instead of
            // this: a Parquet file gets its footer (readable, the finished chunks' rows), as
            // on the command line.
            f.end_interrupted().map_err(out_error)?;
        }
        Ok((report, file))
    };
    let mut shown = None;
    let mut tick = |_py: Python<'_>| -> PyResult<()> {
        let now = (
            counts[0].load(Ordering::Relaxed),
            counts[1].load(Ordering::Relaxed),
            counts[2].load(Ordering::Relaxed),
        );
        if let Some(cb) = &progress
            && now.1 > 0
            && shown != Some(now)
        {
            shown = Some(now);
            cb.call1(now)?;
        }
        Ok(())
    };
    let (report, file) = interrupt::run(py, &stop, work, &mut tick)??;
    tick(py)?;
    match report.outcome {
        Outcome::Complete => {
            if let Some(f) = file {
                f.finish().map_err(out_error)?;
            }
        }
        Outcome::Interrupted => {
            // Stopped by something other than a Python exception (nothing raises `stop` else).
            return Err(PyRuntimeError::new_err("search stopped early"));
        }
    }
    Ok((report, rows.into_inner().unwrap()))
}

/// {"columns": the matches as numpy columns, "report": what the run did}.
fn result<'py>(
    py: Python<'py>,
    search: &Search,
    rows: &[Match],
    report: &cavesweep::search::SearchSummary,
    threads: usize,
    resumed: usize,
    command: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let r = PyDict::new(py);
    r.set_item("examined", report.examined)?;
    r.set_item("rows", report.rows)?;
    r.set_item("elapsed", report.elapsed.as_secs_f64())?;
    r.set_item("threads", threads)?;
    r.set_item("resumed_chunks", resumed)?;
    r.set_item("command", command)?;
    let d = PyDict::new(py);
    d.set_item("columns", columns(py, search, rows)?)?;
    d.set_item("report", r)?;
    Ok(d.into_any())
}

/// _search(recipe, *, query, seeds=None, seed_list=None, seeds_from=None, limit=None,
/// top=None, by=None, order=None, metrics=None, out=None, force=False, png_dir=None, scale=6,
/// threads=None, chunk=None, explain=False, progress=None, **overrides) -> dict
///
/// Run (or resume) a search; the arguments are `cavesweep.search()`'s, converted by
/// [`args`]. `progress(examined, total, matches)` is called from this thread as
/// chunks finish. Returns {"columns": {name: array}, "report": {...}}, or the plan's text
/// with `explain`. Used by `cavesweep.search()`, which documents the arguments.
#[pyfunction]
#[pyo3(signature = (recipe, *, query, seeds = None, seeds_from = None,
    limit = None, top = None, by = None, order = None, metrics = None, out = None,
    force = false, png_dir = None, scale = None, threads = None, chunk = None, explain = false,
    progress = None, **overrides))]
#[allow(clippy::too_many_arguments)]
fn _search<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    query: &str,
    seeds: Option<&Bound<'py, PyAny>>,
    seeds_from: Option<PathBuf>,
    limit: Option<&Bound<'py, PyAny>>,
    top: Option<&Bound<'py, PyAny>>,
    by: Option<&str>,
    order: Option<&str>,
    metrics: Option<&Bound<'py, PyAny>>,
    out: Option<PathBuf>,
    force: bool,
    png_dir: Option<PathBuf>,
    scale: Option<&Bound<'py, PyAny>>,
    threads: Option<&Bound<'py, PyAny>>,
    chunk: Option<&Bound<'py, PyAny>>,
    explain: bool,
    progress: Option<Bound<'py, PyAny>>,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let threads = args::threads(threads)?;
        let parsed: Expr = query
            .parse()
            .map_err(|e| value_msg(format!("where=: {e}")))?;
        let limit = args::opt_uint(limit, "limit", 0, u64::MAX)?;
        let top = args::opt_uint(top, "top", 0, u64::MAX)?;
        let chunk = args::opt_uint(chunk, "chunk", 0, u64::MAX)?;
        let scale = args::opt_uint(scale, "scale", 1, 64)?.unwrap_or(6);
        let mode = mode(limit, top, by, order)?;
        let metrics = args::strings(metrics, "metrics")?;
        let metrics = (!metrics.is_empty()).then(|| metrics.join(","));
        let extra = match &metrics {
            Some(s) => s
                .parse::<MetricSet>()
                .map_err(|e| value_msg(format!("metrics=: {e}")))?,
            None => MetricSet::EMPTY,
        };
        for p in [&out, &png_dir].into_iter().flatten() {
            if p.as_os_str().is_empty() {
                return Err(value_msg("out/png_dir: an empty path names no file"));
            }
        }
        let seeds = seeds
            .filter(|s| !s.is_none())
            .map(|s| args::seed_set(py, s, "seeds"))
            .transpose()?;
        let (seed_set, seeds_text) = match (seeds, &seeds_from) {
            (Some(_), Some(_)) => {
                return Err(value_msg("seeds= and seeds_from=: give one of them"));
            }
            (Some(args::SeedSet::Run(r)), _) => (Seeds::Range(r.range), Some(r.text)),
            (Some(args::SeedSet::List(v)), _) => (Seeds::list(v).map_err(search_error)?, None),
            (_, Some(f)) => (
                Seeds::list(read_seeds(f).map_err(search_error)?).map_err(search_error)?,
                None,
            ),
            (None, None) => {
                return Err(value_msg(
                    "give the seeds to search: seeds=A..B (or a count, a range) or seeds_from=FILE.csv",
                ));
            }
        };
        let spec = SearchSpec {
            recipe: recipe::resolve(recipe, overrides)?.into_owned(),
            query: parsed,
            seeds: seed_set,
            mode,
            extra,
            chunk,
            png: png_dir.as_ref().map(|dir| PngSpec {
                dir: dir.clone(),
                scale: scale as usize,
                replace: force,
            }),
            save: None,
        };
        // Validation and calibration (a sample of caves): off the GIL.
        let search = py.detach(|| Search::new(spec)).map_err(search_error)?;
        if explain {
            return Ok(PyString::new(py, &search.explain()).into_any());
        }
        let command = command(
            recipe,
            overrides,
            query,
            &search,
            seeds_text.as_deref(),
            seeds_from.as_deref(),
            metrics.as_deref(),
        )?;
        let (file, prior) = open_out(&search, out.as_deref(), &command, force, threads)?;
        let resumed = prior.len();
        let (report, rows) = run(py, &search, file, &prior, threads, progress)?;
        result(py, &search, &rows, &report, threads, resumed, &command)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_search, m)?)?;
    Ok(())
}
