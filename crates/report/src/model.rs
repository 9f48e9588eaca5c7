//! The report's in-memory model of a sweep: its definition (from `manifest.json`) and, per grid
//! point, the statistics the sweep wrote (`summary.csv`, `trajectory.csv`, `components.csv`).
//!
//! Everything the report draws comes from this model, never from the files directly, so the
//! model can also be filled from another source (a running sweep's store) without touching the
//! charts. Columns are found by name, not position, and unknown columns are ignored, so columns
//! added later (`pass_rate[NAME]` for named gates, new metrics) need no change here: every
//! `pass_rate*` column becomes a gate and every `<name>_mean` column a metric.

use std::collections::HashMap;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ReportError;
use cavesweep_core::recipe::Recipe;
use cavesweep_engine::io::Folder;
use cavesweep_engine::sweep::folder;
use cavesweep_engine::sweep::vary::{self, Vary};

/// One varied recipe key and its values, in grid order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The recipe key varied (one of [`cavesweep_core::recipe::KEYS`], e.g. `fill`).
    pub key: String,
    /// Its values in grid order, as the CSV files write them (at least one).
    pub values: Vec<String>,
}

/// Statistics of one quantity over a grid point's caves; NaN where the file had no value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Mean over the caves.
    pub mean: f64,
    /// Sample standard deviation (n - 1 denominator; 0 for a single cave).
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// 5th percentile (the sweep's histogram quantile, within 0.1%).
    pub p05: f64,
    /// Median (histogram quantile, within 0.1%); the typical cave's target in [`crate::caves`].
    pub p50: f64,
    /// 95th percentile (histogram quantile, within 0.1%).
    pub p95: f64,
    /// Largest value.
    pub max: f64,
}

impl Stat {
    /// Every statistic NaN: what a point without statistics shows.
    pub const EMPTY: Stat = Stat {
        mean: f64::NAN,
        sd: f64::NAN,
        min: f64::NAN,
        p05: f64::NAN,
        p50: f64::NAN,
        p95: f64::NAN,
        max: f64::NAN,
    };
}

/// A pass-rate column of `summary.csv`: the sweep's gate (`pass_rate`) or a named gate
/// (`pass_rate[NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCol {
    /// `None` for the sweep's (unnamed) gate.
    pub name: Option<String>,
    /// The column name in `summary.csv`.
    pub column: String,
}

impl GateCol {
    /// How the report names the gate.
    pub fn label(&self) -> String {
        match &self.name {
            None => "pass rate".into(),
            Some(n) => format!("pass rate [{n}]"),
        }
    }
}

/// One `summary.csv` row.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Caves measured at this point (the `seeds` column).
    pub seeds: u64,
    /// Caves that passed the sweep's unnamed gate (the `passed` column).
    pub passed: u64,
    /// Per [`Sweep::gates`].
    pub rates: Vec<f64>,
    /// Per [`Sweep::clauses`]: caves that failed the clause.
    pub fails: Vec<u64>,
    /// Per [`Sweep::metrics`].
    pub metrics: Vec<Stat>,
}

/// One grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The varied keys' values, as written in the CSV files (per [`Sweep::axes`]).
    pub params: Vec<String>,
    /// Index of each value in its axis.
    pub coords: Vec<usize>,
    /// `None` while the point has no statistics yet (a running or half-finished sweep).
    pub summary: Option<Summary>,
    /// Wall fraction per step (0 = after the fill).
    pub trajectory: Vec<Stat>,
    /// (component count, caves), ascending.
    pub components: Vec<(u64, u64)>,
}

/// How far the sweep got, from the manifest's `progress` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// The manifest says the sweep finished (`false` when it says nothing).
    pub complete: bool,
    /// Chunks of work finished, if known (the store's count when the sweep is still running).
    pub chunks_done: Option<u64>,
    /// Chunks of work in the whole sweep, if known.
    pub chunks_total: Option<u64>,
    /// Caves finished so far, over every grid point (of this shard's share), if known.
    pub seeds_done: Option<u64>,
    /// Grid points whose store record is damaged (a running sweep's store): not shown.
    pub damaged: Vec<u64>,
}

/// A sweep, as the report sees it. See the module docs.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The sweep folder read (file names in messages are relative to it).
    pub dir: PathBuf,
    /// cavesweep version that wrote the manifest.
    pub version: Option<String>,
    /// The command line recorded in the manifest.
    pub command: Option<String>,
    /// `K/N` when the folder holds one shard's share.
    pub shard: Option<String>,
    /// The base recipe, as TOML (exactly as recorded).
    pub recipe_toml: String,
    /// The base recipe, parsed; [`Sweep::point_recipe`] applies a point's values to it.
    pub recipe: Recipe,
    /// The varied keys, first varying slowest; empty for a one-point sweep.
    pub axes: Vec<Axis>,
    /// The seeds every grid point runs (the same range at each point).
    pub seeds: Range<u64>,
    /// The sweep's gate expression; empty when there is none.
    pub gate: String,
    /// `all`, `kept` or `none`: which caves have a row in `seeds.csv`.
    pub per_seed: String,
    /// How far the sweep got.
    pub progress: Progress,
    /// The pass-rate columns, in `summary.csv` order ([`Summary::rates`] follows it); before
    /// `summary.csv` is read, just the manifest's gate (if any).
    pub gates: Vec<GateCol>,
    /// Gate clauses with a `fail[...]` column.
    pub clauses: Vec<String>,
    /// Metric names with a `<name>_mean` column.
    pub metrics: Vec<String>,
    /// Every grid point, first axis varying slowest (the sweep's order).
    pub points: Vec<Point>,
    /// Which of the sweep's CSV files were there.
    pub found: Vec<&'static str>,
}

/// One `seeds.csv` row, reduced to what the report uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedRow {
    /// The cave's seed.
    pub seed: u64,
    /// Final wall fraction; NaN when the sweep did not compute it.
    pub wall: f64,
    /// Whether the cave passed the [`Sweep::primary_gate`]; `None` without that column.
    pub passed: Option<bool>,
}

const STATS: [&str; 7] = ["mean", "sd", "min", "p05", "p50", "p95", "max"];

impl Sweep {
    /// The value strings of a point, as `key=value` pairs.
    pub fn point_label(&self, p: usize) -> String {
        if self.axes.is_empty() {
            return "(the one point)".into();
        }
        self.axes
            .iter()
            .zip(&self.points[p].params)
            .map(|(a, v)| format!("{}={v}", a.key))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The gate whose pass/fail the report shows per cave: the sweep's own gate if it has
    /// one, else the first named gate.
    pub fn primary_gate(&self) -> Option<usize> {
        self.gates
            .iter()
            .position(|g| g.name.is_none())
            .or((!self.gates.is_empty()).then_some(0))
    }

    /// Number of seeds the sweep runs per grid point.
    pub fn n_seeds(&self) -> u64 {
        self.seeds.end - self.seeds.start
    }

    /// Index of a metric in [`Sweep::metrics`].
    pub fn metric(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == name)
    }

    /// Points that have statistics.
    pub fn done_points(&self) -> usize {
        self.points.iter().filter(|p| p.summary.is_some()).count()
    }

    /// The recipe of point `p`: the base recipe with the point's values set.
    pub fn point_recipe(&self, p: usize) -> Result<Recipe, ReportError> {
        let mut r = self.recipe.clone();
        for (a, v) in self.axes.iter().zip(&self.points[p].params) {
            r.set(&a.key, v).map_err(|e| {
                ReportError::Input(format!(
                    "{}: grid point {}: {e}",
                    self.dir.join("manifest.json").display(),
                    self.point_label(p)
                ))
            })?;
        }
        Ok(r)
    }
}

/// The largest `manifest.json` read (a 100,000-point grid's is about 30 MB).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// Read a sweep folder: `manifest.json` (required) and whichever CSV files exist.
pub fn load(dir: &Path) -> Result<Sweep, ReportError> {
    let shown = dir.display();
    let meta = fs::metadata(dir)
        .map_err(|e| ReportError::NotASweep(format!("cannot read sweep folder {shown}: {e}")))?;
    if !meta.is_dir() {
        return Err(ReportError::NotASweep(format!(
            "{shown} is not a folder (give the --out folder of `cavesweep sweep`)"
        )));
    }
    let names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| ReportError::NotASweep(format!("cannot read sweep folder {shown}: {e}")))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.is_empty() {
        return Err(ReportError::NotASweep(format!(
            "{shown} is empty: not a sweep folder (give the --out folder of `cavesweep sweep`)"
        )));
    }
    let manifest_path = dir.join("manifest.json");
    if !manifest_path.exists() {
        let csvs = names.iter().any(|n| n == "summary.csv");
        return Err(ReportError::NotASweep(if csvs {
            format!(
                "{shown} has summary.csv but no manifest.json, which holds the sweep's recipe and grid: cannot report without it"
            )
        } else {
            format!(
                "{shown} holds no manifest.json: not a sweep folder (give the --out folder of `cavesweep sweep`)"
            )
        }));
    }
    let bytes = Folder::open(dir)
        .and_then(|f| f.read_capped("manifest.json", MAX_MANIFEST_BYTES))
        .map_err(|e| ReportError::Input(format!("cannot read {}: {e}", manifest_path.display())))?
        .unwrap_or_default();
    let text = String::from_utf8(bytes).map_err(|_| {
        ReportError::Input(format!("{} is not UTF-8 text", manifest_path.display()))
    })?;
    let m: Value = serde_json::from_str(&text).map_err(|e| {
        ReportError::Input(format!(
            "{} is not valid JSON ({e})",
            manifest_path.display()
        ))
    })?;
    let mut sweep = from_manifest(dir, &m)
        .map_err(|e| ReportError::Input(format!("{}: {e}", manifest_path.display())))?;
    if folder::stage(dir) == folder::Stage::Files {
        check_recorded(dir)?;
        read_csvs(&mut sweep, &Tables::Folder(dir))?;
    } else {
        // Still running (or interrupted): the finished points' rows, read from the store.
        let p = folder::provisional(dir)
            .map_err(|e| ReportError::Input(cavesweep_engine::error::text(&e)))?;
        // The store is fresher than the manifest, which is written at checkpoints.
        sweep.progress.chunks_done = Some(p.chunks_done);
        sweep.progress.chunks_total = Some(p.chunks_total);
        sweep.progress.seeds_done = Some(p.seeds_done);
        sweep.progress.damaged = p.damaged.clone();
        read_csvs(&mut sweep, &Tables::Provisional(dir, &p))?;
        // Only files really in the sweep folder are listed as its files.
        sweep.found.retain(|f| dir.join(f).exists());
    }
    Ok(sweep)
}

/// A finished sweep's store records the size and CRC-32 of every final file: a file that no
/// longer matches (edited by hand, truncated, replaced) is refused rather than reported, since
/// the report would present its numbers as the sweep's. A folder without a store (the CSVs
/// copied elsewhere, as in `results/`) is reported from its files as they are.
fn check_recorded(dir: &Path) -> Result<(), ReportError> {
    // seeds.csv is not read by the report (and may be large): not checked.
    folder::check_final_files(dir, &["seeds.csv", "seeds.parquet"])
        .map_err(|e| ReportError::Input(cavesweep_engine::error::text(&e)))
}

/// The sweep's definition from a parsed manifest; no statistics yet.
fn from_manifest(dir: &Path, m: &Value) -> Result<Sweep, String> {
    let sweep = m
        .get("sweep")
        .filter(|s| s.is_object())
        .ok_or("no \"sweep\" object (not written by `cavesweep sweep`?)")?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let recipe_toml = text(sweep, "recipe").ok_or("sweep.recipe is missing")?;
    let recipe = Recipe::from_toml(&recipe_toml).map_err(|e| format!("sweep.recipe: {e}"))?;
    let varies = match sweep.get("vary") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| "sweep.vary holds a non-string".to_string())?
                    .parse::<Vary>()
                    .map_err(|e| format!("sweep.vary: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("sweep.vary is not a list".into()),
    };
    let seeds_text = text(sweep, "seeds").ok_or("sweep.seeds is missing")?;
    let seeds = cavesweep_engine::sweep::parse_seeds(&seeds_text)
        .map_err(|e| format!("sweep.seeds: {e}"))?;
    let n_points = vary::point_count(&varies).map_err(|e| format!("sweep.vary: {e}"))?;
    let axes: Vec<Axis> = varies
        .iter()
        .map(|v| Axis {
            key: v.key.clone(),
            values: v.values(),
        })
        .collect();
    let points = (0..n_points)
        .map(|i| {
            let params = vary::params(&varies, i);
            // First axis slowest: the coordinates are the mixed-radix digits of i.
            let mut coords = vec![0; axes.len()];
            let mut rest = i;
            for (k, a) in axes.iter().enumerate().rev() {
                coords[k] = rest % a.values.len();
                rest /= a.values.len();
            }
            Point {
                params,
                coords,
                summary: None,
                trajectory: Vec::new(),
                components: Vec::new(),
            }
        })
        .collect();
    let progress = m
        .get("progress")
        .map(|p| Progress {
            complete: p.get("complete").and_then(Value::as_bool).unwrap_or(false),
            chunks_done: p.get("chunks_done").and_then(Value::as_u64),
            chunks_total: p.get("chunks_total").and_then(Value::as_u64),
            seeds_done: p.get("seeds_done").and_then(Value::as_u64),
            damaged: Vec::new(),
        })
        .unwrap_or_default();
    let gate = text(sweep, "gate").unwrap_or_default();
    // Until summary.csv says which gates it counted, the manifest's gate is the one.
    let gates = if gate.trim().is_empty() {
        Vec::new()
    } else {
        vec![GateCol {
            name: None,
            column: "pass_rate".into(),
        }]
    };
    Ok(Sweep {
        dir: dir.to_path_buf(),
        version: text(m, "cavesweep"),
        command: text(m, "command"),
        shard: text(m, "shard").filter(|s| s != "1/1"),
        recipe_toml,
        recipe,
        axes,
        seeds,
        gate,
        per_seed: text(sweep, "per_seed").unwrap_or_else(|| "none".into()),
        progress,
        gates,
        clauses: Vec::new(),
        metrics: Vec::new(),
        points,
        found: Vec::new(),
    })
}

/// A CSV file opened with its header indexed by column name.
struct Table {
    path: PathBuf,
    reader: csv::Reader<Box<dyn std::io::Read>>,
    cols: HashMap<String, usize>,
    header: Vec<String>,
}

impl Table {
    /// Open the CSV file `path`: absent is `None`; a link, FIFO or device is refused before
    /// anything can block.
    fn open(path: PathBuf) -> Result<Option<Table>, ReportError> {
        let cannot =
            |e: std::io::Error| ReportError::Input(format!("cannot read {}: {e}", path.display()));
        let (folder, name) = Folder::of_file(&path).map_err(cannot)?;
        match folder.open_read(name).map_err(cannot)? {
            None => Ok(None),
            Some(f) => Table::from_reader(path, Box::new(f)).map(Some),
        }
    }

    fn from_reader(path: PathBuf, r: Box<dyn std::io::Read>) -> Result<Table, ReportError> {
        let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(r);
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| ReportError::Input(format!("{}: {e}", path.display())))?
            .iter()
            .map(str::to_string)
            .collect();
        let cols = header
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), i))
            .collect();
        Ok(Table {
            path,
            reader,
            cols,
            header,
        })
    }

    /// Whether the table was read from a Parquet file (as the CSV it stands for).
    fn is_parquet(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "parquet")
    }

    fn err(&self, line: u64, msg: impl std::fmt::Display) -> ReportError {
        ReportError::Input(format!("{} line {line}: {msg}", self.path.display()))
    }

    fn col(&self, name: &str) -> Result<usize, ReportError> {
        self.cols.get(name).copied().ok_or_else(|| {
            ReportError::Input(format!("{} has no {name:?} column", self.path.display()))
        })
    }

    /// Check that the leading columns are the varied keys.
    fn check_params(&self, axes: &[Axis]) -> Result<(), ReportError> {
        let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
        let lead: Vec<&str> = self
            .header
            .iter()
            .take(keys.len())
            .map(String::as_str)
            .collect();
        if lead != keys {
            return Err(ReportError::Input(format!(
                "{}: the first columns are {lead:?}, but manifest.json varies {keys:?}",
                self.path.display()
            )));
        }
        Ok(())
    }
}

fn num(s: &str) -> Result<f64, String> {
    if s.is_empty() {
        return Ok(f64::NAN);
    }
    s.parse::<f64>()
        .map_err(|_| format!("{s:?} is not a number"))
}

fn count(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{s:?} is not a whole number"))
}

/// Reads rows of a table whose leading columns are the grid point's values, handing each row
/// and its point index to `f`.
fn for_rows(
    t: &mut Table,
    index: &HashMap<Vec<String>, usize>,
    n_params: usize,
    mut f: impl FnMut(&csv::StringRecord, usize) -> Result<(), String>,
) -> Result<(), ReportError> {
    let mut rec = csv::StringRecord::new();
    loop {
        let more = t
            .reader
            .read_record(&mut rec)
            .map_err(|e| ReportError::Input(format!("{}: {e}", t.path.display())))?;
        if !more {
            return Ok(());
        }
        let line = rec.position().map_or(0, |p| p.line());
        let params: Vec<String> = rec.iter().take(n_params).map(str::to_string).collect();
        let p = *index.get(&params).ok_or_else(|| {
            t.err(
                line,
                format!("parameters {params:?} are not a point of the manifest's grid"),
            )
        })?;
        f(&rec, p).map_err(|m| t.err(line, m))?;
    }
}

/// Where [`read_csvs`] reads the tables: a sweep folder's files, or the provisional tables of
/// a running sweep, built in memory from its store (never written to a scratch folder, which
/// would be one more place to get wrong).
enum Tables<'a> {
    Folder(&'a Path),
    Provisional(&'a Path, &'a folder::Provisional),
}

impl Tables<'_> {
    fn open(&self, name: &str) -> Result<Option<Table>, ReportError> {
        match self {
            Tables::Folder(dir) => match Table::open(dir.join(name))? {
                Some(t) => Ok(Some(t)),
                // A folder swept with `--format parquet` has the same tables as Parquet.
                None => parquet_table(dir, name, MAX_PARQUET_ROWS),
            },
            Tables::Provisional(dir, p) => {
                let bytes = match name {
                    "summary.csv" => &p.summary,
                    "trajectory.csv" => &p.trajectory,
                    "components.csv" => &p.components,
                    _ => return Ok(None),
                };
                let label = dir.join(format!("{} (rows so far)", folder::STORE_FILE));
                Table::from_reader(label, Box::new(std::io::Cursor::new(bytes.clone()))).map(Some)
            }
        }
    }
}

/// The most rows a Parquet table is read with (it is held in memory as the CSV it stands
/// for): a 1,000,000-point grid's summary.
const MAX_PARQUET_ROWS: u64 = 1_000_000;

/// `NAME.parquet` (for `NAME.csv`) in `dir`, as a [`Table`] over the CSV it stands for.
fn parquet_table(dir: &Path, csv_name: &str, max_rows: u64) -> Result<Option<Table>, ReportError> {
    let Some(stem) = csv_name.strip_suffix(".csv") else {
        return Ok(None);
    };
    match folder::parquet_as_csv(dir, stem, max_rows).map_err(ReportError::Input)? {
        None => Ok(None),
        Some(bytes) => Table::from_reader(
            dir.join(format!("{stem}.parquet")),
            Box::new(std::io::Cursor::new(bytes)),
        )
        .map(Some),
    }
}

/// Read the CSV files in `tables` (the sweep folder, or the provisional tables of a running one).
fn read_csvs(s: &mut Sweep, tables: &Tables) -> Result<(), ReportError> {
    let index: HashMap<Vec<String>, usize> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (p.params.clone(), i))
        .collect();
    let np = s.axes.len();
    if let Some(mut t) = tables.open("summary.csv")? {
        t.check_params(&s.axes)?;
        s.found.push(if t.is_parquet() {
            "summary.parquet"
        } else {
            "summary.csv"
        });
        let seeds = t.col("seeds")?;
        let passed = t.col("passed")?;
        s.gates.clear();
        for (i, c) in t.header.iter().enumerate().skip(np) {
            if c == "pass_rate" {
                s.gates.push(GateCol {
                    name: None,
                    column: c.clone(),
                });
            } else if let Some(n) = c
                .strip_prefix("pass_rate[")
                .and_then(|r| r.strip_suffix(']'))
            {
                s.gates.push(GateCol {
                    name: Some(n.to_string()),
                    column: c.clone(),
                });
            } else if let Some(cl) = c.strip_prefix("fail[").and_then(|r| r.strip_suffix(']')) {
                s.clauses.push(cl.to_string());
            } else if let Some(m) = c.strip_suffix("_mean")
                && !m.contains('[')
                && i >= np
            {
                s.metrics.push(m.to_string());
            }
        }
        // The sweep's own gate says nothing when it has no clauses (every cave passes).
        if s.gate.trim().is_empty() && s.clauses.is_empty() {
            s.gates.retain(|g| g.name.is_some());
        }
        let gate_cols: Vec<usize> = s.gates.iter().map(|g| t.cols[&g.column]).collect();
        let fail_cols: Vec<usize> = s
            .clauses
            .iter()
            .map(|c| t.cols[&format!("fail[{c}]")])
            .collect();
        let metric_cols: Vec<[Option<usize>; 7]> = s
            .metrics
            .iter()
            .map(|m| STATS.map(|st| t.cols.get(&format!("{m}_{st}")).copied()))
            .collect();
        let points = &mut s.points;
        for_rows(&mut t, &index, np, |rec, p| {
            let field = |i: usize| rec.get(i).unwrap_or("");
            let rates = gate_cols
                .iter()
                .map(|&i| num(field(i)))
                .collect::<Result<_, _>>()?;
            let fails = fail_cols
                .iter()
                .map(|&i| count(field(i)))
                .collect::<Result<_, _>>()?;
            let metrics = metric_cols
                .iter()
                .map(|cols| stat(cols, &field))
                .collect::<Result<_, _>>()?;
            if points[p].summary.is_some() {
                return Err("a second row for this grid point".into());
            }
            points[p].summary = Some(Summary {
                seeds: count(field(seeds))?,
                passed: count(field(passed))?,
                rates,
                fails,
                metrics,
            });
            Ok(())
        })?;
    }
    if let Some(mut t) = tables.open("trajectory.csv")? {
        t.check_params(&s.axes)?;
        s.found.push(if t.is_parquet() {
            "trajectory.parquet"
        } else {
            "trajectory.csv"
        });
        let step = t.col("step")?;
        let cols = STATS.map(|st| t.cols.get(st).copied());
        let points = &mut s.points;
        for_rows(&mut t, &index, np, |rec, p| {
            let k = count(rec.get(step).unwrap_or(""))? as usize;
            let traj = &mut points[p].trajectory;
            if k != traj.len() {
                return Err(format!(
                    "step {k} where step {} was expected (rows out of order?)",
                    traj.len()
                ));
            }
            traj.push(stat(&cols, &|i| rec.get(i).unwrap_or(""))?);
            Ok(())
        })?;
    }
    if let Some(mut t) = tables.open("components.csv")? {
        t.check_params(&s.axes)?;
        s.found.push(if t.is_parquet() {
            "components.parquet"
        } else {
            "components.csv"
        });
        let (k, n) = (t.col("components")?, t.col("caves")?);
        let points = &mut s.points;
        for_rows(&mut t, &index, np, |rec, p| {
            points[p].components.push((
                count(rec.get(k).unwrap_or(""))?,
                count(rec.get(n).unwrap_or(""))?,
            ));
            Ok(())
        })?;
        for p in &mut s.points {
            p.components.sort_unstable();
        }
    }
    if s.dir.join("seeds.csv").exists() {
        s.found.push("seeds.csv");
    } else if s.dir.join("seeds.parquet").exists() {
        s.found.push("seeds.parquet");
    }
    Ok(())
}

fn stat<'r>(cols: &[Option<usize>; 7], field: &dyn Fn(usize) -> &'r str) -> Result<Stat, String> {
    let v = |k: usize| cols[k].map_or(Ok(f64::NAN), |i| num(field(i)));
    Ok(Stat {
        mean: v(0)?,
        sd: v(1)?,
        min: v(2)?,
        p05: v(3)?,
        p50: v(4)?,
        p95: v(5)?,
        max: v(6)?,
    })
}

/// `seeds.csv` rows of the points in `wanted` (indices into [`Sweep::points`]), in file order.
/// `None` when the sweep wrote no per-seed rows, or the file is larger than `max_bytes` (a
/// sweep of millions of caves with `--per-seed all`, too big to scan for a report).
pub fn seed_rows(
    s: &Sweep,
    wanted: &[usize],
    max_bytes: u64,
) -> Result<Option<HashMap<usize, Vec<SeedRow>>>, ReportError> {
    let path = s.dir.join("seeds.csv");
    let parquet = s.dir.join("seeds.parquet");
    let mut t = match fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() <= max_bytes => match Table::open(path)? {
            Some(t) => t,
            None => return Ok(None),
        },
        // Parquet: its rows are made into CSV in memory, and Parquet is ~5x smaller than
        // the CSV: the same budget in CSV bytes, as rows (~60 bytes each).
        Err(_) if fs::symlink_metadata(&parquet).is_ok_and(|m| m.is_file()) => {
            match parquet_table(&s.dir, "seeds.csv", max_bytes / 60) {
                Ok(Some(t)) => t,
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    };
    t.check_params_after_seed(&s.axes)?;
    let seed = t.col("seed")?;
    let wall = t.cols.get("wall_fraction").copied();
    let passed = s.primary_gate().and_then(|g| match &s.gates[g].name {
        None => t.cols.get("passed").copied(),
        Some(n) => t.cols.get(&format!("passed[{n}]")).copied(),
    });
    let index: HashMap<Vec<String>, usize> = wanted
        .iter()
        .map(|&p| (s.points[p].params.clone(), p))
        .collect();
    let np = s.axes.len();
    let mut out: HashMap<usize, Vec<SeedRow>> = wanted.iter().map(|&p| (p, Vec::new())).collect();
    let mut rec = csv::ByteRecord::new();
    let mut key: Vec<String> = Vec::with_capacity(np);
    loop {
        let more = t
            .reader
            .read_byte_record(&mut rec)
            .map_err(|e| ReportError::Input(format!("{}: {e}", t.path.display())))?;
        if !more {
            break;
        }
        key.clear();
        key.extend(
            rec.iter()
                .skip(1)
                .take(np)
                .map(|f| String::from_utf8_lossy(f).into_owned()),
        );
        let Some(&p) = index.get(&key) else { continue };
        let line = rec.position().map_or(0, |p| p.line());
        let field = |i: usize| std::str::from_utf8(rec.get(i).unwrap_or(b"")).unwrap_or("?");
        let row = SeedRow {
            seed: count(field(seed)).map_err(|m| t.err(line, m))?,
            wall: match wall {
                Some(i) => num(field(i)).map_err(|m| t.err(line, m))?,
                None => f64::NAN,
            },
            passed: passed.map(|i| field(i) == "1"),
        };
        out.get_mut(&p).expect("wanted point").push(row);
    }
    Ok(Some(out))
}

impl Table {
    /// `seeds.csv` starts with `seed`, then the varied keys.
    fn check_params_after_seed(&self, axes: &[Axis]) -> Result<(), ReportError> {
        let keys: Vec<&str> = std::iter::once("seed")
            .chain(axes.iter().map(|a| a.key.as_str()))
            .collect();
        let lead: Vec<&str> = self
            .header
            .iter()
            .take(keys.len())
            .map(String::as_str)
            .collect();
        if lead != keys {
            return Err(ReportError::Input(format!(
                "{}: the first columns are {lead:?}, expected {keys:?}",
                self.path.display()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_gives_the_grid_in_sweep_order() {
        let m = serde_json::json!({
            "command": "cavesweep sweep ...",
            "shard": "1/1",
            "sweep": {
                "recipe": cavesweep_core::presets::preset("chapter-strict").unwrap().to_toml(),
                "vary": ["fill=0.4,0.5", "steps=1,2,3"],
                "seeds": "0..10",
                "gate": "",
            },
            "progress": {"complete": false, "chunks_done": 2, "chunks_total": 6},
        });
        let s = from_manifest(Path::new("x"), &m).unwrap();
        assert_eq!(s.points.len(), 6);
        assert_eq!(s.points[4].params, ["0.5", "2"]);
        assert_eq!(s.points[4].coords, [1, 1]);
        assert_eq!(s.point_label(4), "fill=0.5 steps=2");
        assert_eq!(s.shard, None);
        assert_eq!(s.progress.chunks_done, Some(2));
        assert_eq!(s.point_recipe(4).unwrap().passes[0].repeat, 2);
        let bad = serde_json::json!({"sweep": {"vary": []}});
        assert!(from_manifest(Path::new("x"), &bad).is_err());
    }
}
