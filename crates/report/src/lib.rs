//! cavesweep-report (`cavesweep report`): a sweep folder made into pictures and tables a person
//! reads in the morning: `index.html` (one self-contained page, images beside it in `img/`) and
//! `README.md` with the same content for a forge.
//!
//! - [`model`]: the sweep folder parsed into a small in-memory model (manifest + CSV files);
//! - [`chart`]: heatmaps, line charts with bands, histograms (plotters, bundled font);
//! - [`caves`]: which seeds to show per grid point, regenerated from the recipe;
//! - [`page`]: the page as blocks, written as HTML and Markdown;
//! - [`audit`]: `reproduce chapter`'s audit of the chapter's claims, in the same blocks.
//!
//! This crate's root decides what goes on the page: pass rates of the sweep's gate and of every
//! named gate and every metric's mean, as heatmaps over the first two varied keys (one panel
//! per value of further keys), as line charts for one varied key, as a table for one point;
//! then the wall-fraction trajectories, component-count histograms, typical/passing/failing
//! caves, and the best grid points with the command that re-runs one.

#![warn(missing_docs)]

pub mod audit;
pub mod canvas;
pub mod caves;
pub mod chart;
pub mod model;
pub mod out;
pub mod page;
mod sections;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use caves::{PointPicks, Role};
use chart::{Band, ColorMap, Heatmap, Histograms, Lines, Panel, Png, XAxis};
use model::Sweep;
use page::{Block, Figure};
use sections::Page;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The folder is not a sweep folder (missing, empty, no manifest).
    #[error("{0}")]
    NotASweep(String),
    /// A sweep file could not be read or parsed.
    #[error("{0}")]
    Input(String),
    /// The report could not be written.
    #[error("{0}")]
    Output(String),
    /// A chart or cave picture could not be drawn or encoded as PNG.
    #[error("cannot draw a picture: {0}")]
    Render(String),
    /// An [`Options::points`] filter is malformed, names a key the sweep does not vary, or
    /// matches no grid point (or the sweep varies no key at all).
    #[error("--points {0}")]
    Points(String),
}

/// What to write and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The report folder; `None`: `report/` inside the sweep folder, which (a name cavesweep
    /// chose, inside a folder whose names it vouches for) is never reached through a link.
    pub out: Option<PathBuf>,
    /// `KEY=VALUE[,KEY=VALUE...]` filters: the points whose trajectories, histograms and caves
    /// are shown (all points matching any filter). Empty: a spread of the grid.
    pub points: Vec<String>,
    /// Rows of the best-points table.
    pub top: usize,
}

/// What [`write()`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// Path of the report's `index.html` (inside [`Options::out`]).
    pub index: PathBuf,
    /// Number of PNG pictures written to `img/` (charts and caves).
    pub images: usize,
    /// Number of grid points in the sweep (all of them, with statistics or not).
    pub points: usize,
    /// One line on how complete the sweep is.
    pub status: String,
}

/// Default cap on the points shown one by one (trajectory lines, histograms, caves).
const MAX_LINES: usize = 8;
const MAX_HISTOGRAMS: usize = 16;
const MAX_THUMBS: usize = 24;
const MAX_PAIRS: usize = 8;
/// Cap when the user picks points with `--points`.
const MAX_PICKED: usize = 48;
/// Heatmap panels drawn at most (one per combination of the keys beyond the second).
const MAX_PANELS: usize = 48;
/// `seeds.csv` files larger than this are not scanned (the caves are then regenerated).
const MAX_SEEDS_CSV: u64 = 256 << 20;
/// The all-points table is shown up to this many points.
const MAX_TABLE_POINTS: usize = 60;

/// A quantity drawn over the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    /// Index into [`Sweep::gates`].
    Gate(usize),
    /// Index into [`Sweep::metrics`].
    Metric(usize),
}

/// The report's quantities: gates, then the wall fraction and components, then the rest;
/// those without any value (`path_length` of a recipe without an exit) left out.
fn quantities(s: &Sweep) -> Vec<Quantity> {
    let mut q: Vec<Quantity> = (0..s.gates.len()).map(Quantity::Gate).collect();
    let first = ["wall_fraction", "components"];
    q.extend(
        first
            .iter()
            .filter_map(|m| s.metric(m))
            .map(Quantity::Metric),
    );
    q.extend(
        (0..s.metrics.len())
            .filter(|&i| !first.contains(&s.metrics[i].as_str()))
            .map(Quantity::Metric),
    );
    q.retain(|q| (0..s.points.len()).any(|p| q.value(s, p).is_finite()));
    q
}

impl Quantity {
    fn value(self, s: &Sweep, p: usize) -> f64 {
        match (&s.points[p].summary, self) {
            (Some(sum), Quantity::Gate(g)) => sum.rates[g],
            (Some(sum), Quantity::Metric(m)) => sum.metrics[m].mean,
            (None, _) => f64::NAN,
        }
    }
    fn stat(self, s: &Sweep, p: usize) -> Option<model::Stat> {
        match (&s.points[p].summary, self) {
            (Some(sum), Quantity::Metric(m)) => Some(sum.metrics[m]),
            _ => None,
        }
    }
    /// Title (plain text: drawn into pictures too).
    fn title(self, s: &Sweep) -> String {
        match self {
            Quantity::Gate(g) => match &s.gates[g].name {
                None => "Pass rate of the gate".into(),
                Some(n) => format!("Pass rate of the gate \"{n}\""),
            },
            Quantity::Metric(m) => match s.metrics[m].as_str() {
                "wall_fraction" => "Mean final wall fraction".into(),
                "components" => "Mean number of floor components".into(),
                other => format!("Mean {other}"),
            },
        }
    }
    /// Label of a colour scale or y axis.
    fn legend(self, s: &Sweep) -> String {
        match self {
            Quantity::Gate(g) => s.gates[g].label(),
            Quantity::Metric(m) => format!("{} (mean)", s.metrics[m]),
        }
    }
    /// File-name stem.
    fn slug(self, s: &Sweep) -> String {
        let raw = match self {
            Quantity::Gate(g) => s.gates[g].column.clone(),
            Quantity::Metric(m) => s.metrics[m].clone(),
        };
        let mut out = String::new();
        for c in raw.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(c.to_ascii_lowercase());
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_matches('-').to_string()
    }
}

/// A table number: 4 significant digits (integers whole).
pub fn sig4(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v.fract() == 0.0 && v.abs() < 1e12 {
        return format!("{}", v as i64);
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// A pass rate in percent, one decimal.
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", v * 100.0)
    } else {
        "–".into()
    }
}

fn pct_cell(v: f64) -> String {
    if v.is_finite() {
        format!("{:.0}%", v * 100.0)
    } else {
        String::new()
    }
}

/// Points matching `filters` (see [`Options::points`]).
fn filtered_points(s: &Sweep, filters: &[String]) -> Result<Vec<usize>, ReportError> {
    if s.axes.is_empty() {
        return Err(ReportError::Points(
            "cannot pick points: the sweep varies no key".into(),
        ));
    }
    let mut keep = BTreeSet::new();
    for f in filters {
        let mut conds = Vec::new();
        for kv in f.split(',') {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                ReportError::Points(format!("{f:?}: expected KEY=VALUE[,KEY=VALUE...]"))
            })?;
            let axis = s
                .axes
                .iter()
                .position(|a| a.key == k.trim())
                .ok_or_else(|| {
                    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
                    ReportError::Points(format!(
                        "{f:?}: {:?} is not a varied key (varied: {})",
                        k.trim(),
                        keys.join(", ")
                    ))
                })?;
            conds.push((axis, v.trim().to_string()));
        }
        let same = |a: &str, b: &str| {
            a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        };
        let mut any = false;
        for (i, p) in s.points.iter().enumerate() {
            if conds.iter().all(|(a, v)| same(&p.params[*a], v)) {
                keep.insert(i);
                any = true;
            }
        }
        if !any {
            return Err(ReportError::Points(format!("{f:?} matches no grid point")));
        }
    }
    Ok(keep.into_iter().take(MAX_PICKED).collect())
}

/// Index of the point with these axis coordinates.
fn point_at(s: &Sweep, coords: &[usize]) -> usize {
    coords
        .iter()
        .zip(&s.axes)
        .fold(0, |acc, (&c, a)| acc * a.values.len() + c)
}

/// At most `cap` points spread over the grid: evenly spaced values of each axis (the longest
/// axes thinned first), every combination of them.
fn spread(s: &Sweep, cap: usize) -> Vec<usize> {
    spread_pinned(s, cap, None)
}

/// [`spread`], with axis `pin` (if any) held at its last value.
fn spread_pinned(s: &Sweep, cap: usize, pin: Option<usize>) -> Vec<usize> {
    if s.points.len() <= cap && pin.is_none() {
        return (0..s.points.len()).collect();
    }
    let lens: Vec<usize> = s.axes.iter().map(|a| a.values.len()).collect();
    let mut k = lens.clone();
    if let Some(a) = pin {
        k[a] = 1;
    }
    while k.iter().product::<usize>() > cap {
        let (i, _) = k
            .iter()
            .enumerate()
            .max_by_key(|&(i, &n)| (n, usize::MAX - i))
            .expect("axes");
        if k[i] == 1 {
            break;
        }
        k[i] -= 1;
    }
    let picks: Vec<Vec<usize>> = lens
        .iter()
        .zip(&k)
        .enumerate()
        .map(|(a, (&n, &k))| {
            if pin == Some(a) {
                vec![n - 1]
            } else if k == 1 {
                vec![n / 2]
            } else {
                (0..k)
                    .map(|j| ((j * (n - 1)) as f64 / (k - 1) as f64).round() as usize)
                    .collect()
            }
        })
        .collect();
    let mut out = vec![Vec::new()];
    for axis in &picks {
        out = out
            .into_iter()
            .flat_map(|c: Vec<usize>| {
                axis.iter().map(move |&v| {
                    let mut c = c.clone();
                    c.push(v);
                    c
                })
            })
            .collect();
    }
    out.iter().map(|c| point_at(s, c)).take(cap).collect()
}

/// At most `cap` of `items`, evenly spaced, first and last included.
fn evenly(items: &[usize], cap: usize) -> Vec<usize> {
    if items.len() <= cap {
        return items.to_vec();
    }
    let mut out: Vec<usize> = (0..cap)
        .map(|j| items[(j * (items.len() - 1)) / (cap - 1).max(1)])
        .collect();
    out.dedup();
    out
}

/// A picture to draw.
enum Job {
    Heat(Heatmap),
    Lines(Lines),
    Hist(Histograms),
    Cave(usize, u64),
}

/// A picture on the page: its job, alt text and caption.
struct Fig {
    job: usize,
    alt: String,
    caption: Option<String>,
}

/// A page item before the pictures are drawn (their sizes are known only then).
enum Item {
    Block(Block),
    Image(Fig),
    Strip(Vec<Fig>),
}

/// The page being assembled: items plus the pictures they need.
#[derive(Default)]
struct Builder {
    items: Vec<Item>,
    jobs: Vec<(String, Job)>,
}

impl Builder {
    fn push(&mut self, b: Block) {
        self.items.push(Item::Block(b));
    }
    fn job(&mut self, file: String, job: Job, alt: String, caption: Option<String>) -> Fig {
        self.jobs.push((file, job));
        Fig {
            job: self.jobs.len() - 1,
            alt,
            caption,
        }
    }
}

fn values_label(a: &model::Axis) -> String {
    match a.values.len() {
        n if n <= 4 => a.values.join(", "),
        n => format!("{}, {} … {}", a.values[0], a.values[1], a.values[n - 1]),
    }
}

/// A point's values, compact (for panel titles and legends).
fn short_label(s: &Sweep, p: usize) -> String {
    if s.axes.is_empty() {
        s.recipe.name.clone()
    } else {
        s.point_label(p)
    }
}

/// One line on how complete the folder is.
fn status_line(s: &Sweep) -> String {
    let done = s.done_points();
    if let Some(k) = &s.shard {
        format!(
            "shard {k}: {done} of {} grid points with statistics",
            s.points.len()
        )
    } else if s.progress.complete && done == s.points.len() {
        format!("complete: {} grid points", s.points.len())
    } else {
        let chunks = match (s.progress.chunks_done, s.progress.chunks_total) {
            (Some(a), Some(b)) => format!("{a} of {b} chunks"),
            _ => "an unknown share of the chunks".into(),
        };
        let damaged = match s.progress.damaged.len() {
            0 => String::new(),
            n => format!("; {n} damaged records left out"),
        };
        format!(
            "not finished: {chunks} done; {done} of {} grid points with statistics{damaged}",
            s.points.len()
        )
    }
}

/// The report's notice: [`progress_notice`], and the damaged store records left out.
fn notice(s: &Sweep) -> Option<String> {
    let damaged = match s.progress.damaged.len() {
        0 => String::new(),
        n => format!(
            "{n} grid point record{} in the store failed {} checksum and {} left out (point{} {}); the resumed sweep recomputes {}.",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" },
            if n == 1 { "is" } else { "are" },
            if n == 1 { "" } else { "s" },
            s.progress
                .damaged
                .iter()
                .take(10)
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            if n == 1 { "it" } else { "them" },
        ),
    };
    match (progress_notice(s), damaged.is_empty()) {
        (n, true) => n,
        (None, false) => Some(damaged),
        (Some(n), false) => Some(format!("{n} {damaged}")),
    }
}

/// The highlighted note for a folder that is not one finished, whole sweep.
fn progress_notice(s: &Sweep) -> Option<String> {
    let done = s.done_points();
    if let Some(k) = &s.shard {
        return Some(format!(
            "This folder holds shard {k} of a sharded sweep: its statistics cover only this shard's share of the seeds. Combine the shard folders with `cavesweep merge` and report the merged folder for the whole sweep."
        ));
    }
    if s.progress.complete && done == s.points.len() {
        return None;
    }
    if s.progress.complete {
        return Some(format!(
            "manifest.json says the sweep is complete, but only {done} of the {} grid points have a row in summary.csv.",
            s.points.len()
        ));
    }
    let chunks = match (s.progress.chunks_done, s.progress.chunks_total) {
        (Some(a), Some(b)) => {
            format!(
                "{a} of {b} chunks ({:.1}%)",
                100.0 * a as f64 / b.max(1) as f64
            )
        }
        _ => "an unknown share of the chunks".into(),
    };
    let caves = s
        .progress
        .seeds_done
        .map_or(String::new(), |n| format!(", {n} caves"));
    let shows = if done == 0 {
        "The sweep's statistics are written when it completes, so this report shows its definition and caves regenerated from its recipe (the typical cave: the median of the first 256 seeds)."
            .to_string()
    } else {
        format!(
            "{done} of the {} grid points have statistics; the others are grey or missing.",
            s.points.len()
        )
    };
    Some(format!(
        "The sweep is not finished: {chunks}{caves} are recorded as done. {shows} Rerun the sweep's command to resume it, then `cavesweep report` again."
    ))
}

/// The command that re-runs cave `seed` of point `p`, from the report folder.
fn rerun_command(s: &Sweep, p: usize, seed: u64) -> String {
    let quote = |v: &str| {
        if v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:=,+".contains(c))
        {
            v.to_string()
        } else {
            format!("'{}'", v.replace('\'', "'\\''"))
        }
    };
    let mut c = "cavesweep run --recipe recipe.toml".to_string();
    for (a, v) in s.axes.iter().zip(&s.points[p].params) {
        c.push_str(&format!(" --set {}", quote(&format!("{}={v}", a.key))));
    }
    c.push_str(&format!(" --seed {seed} --png cave.png"));
    c
}

/// A table of points: their values, seeds, passed, every gate's rate, every metric's mean,
/// and optionally a command per point.
fn points_table(
    s: &Sweep,
    points: &[usize],
    metrics: &[usize],
    command: Option<&dyn Fn(usize) -> String>,
) -> Block {
    let mut head: Vec<String> = s.axes.iter().map(|a| format!("`{}`", a.key)).collect();
    let mut numeric = vec![false; head.len()];
    head.extend(["seeds".into(), "passed".into()]);
    numeric.extend([true, true]);
    for g in &s.gates {
        head.push(g.label());
        numeric.push(true);
    }
    for &m in metrics {
        head.push(format!("{} mean", s.metrics[m]));
        numeric.push(true);
    }
    if command.is_some() {
        head.push("re-run one cave".into());
        numeric.push(false);
    }
    let rows = points
        .iter()
        .map(|&p| {
            let pt = &s.points[p];
            let mut r: Vec<String> = pt.params.clone();
            match &pt.summary {
                Some(sum) => {
                    r.push(sum.seeds.to_string());
                    r.push(sum.passed.to_string());
                    r.extend(sum.rates.iter().map(|&v| pct(v)));
                    r.extend(metrics.iter().map(|&m| sig4(sum.metrics[m].mean)));
                }
                None => r.extend(std::iter::repeat_n(
                    "–".to_string(),
                    2 + s.gates.len() + metrics.len(),
                )),
            }
            if let Some(f) = command {
                r.push(format!("`{}`", f(p)));
            }
            r
        })
        .collect();
    Block::Table {
        head,
        rows,
        numeric,
    }
}

/// The one point of a sweep without varied keys: every metric's statistics, and the gates.
fn one_point_table(s: &Sweep) -> Block {
    let sum = s.points[0].summary.as_ref();
    let mut rows: Vec<Vec<String>> = s
        .gates
        .iter()
        .enumerate()
        .map(|(g, gc)| {
            let v = sum.map_or(f64::NAN, |x| x.rates[g]);
            let mut r = vec![gc.label(), pct(v)];
            r.extend(std::iter::repeat_n(String::new(), 6));
            r
        })
        .collect();
    for (m, name) in s.metrics.iter().enumerate() {
        let st = sum.map_or(model::Stat::EMPTY, |x| x.metrics[m]);
        rows.push(vec![
            name.clone(),
            sig4(st.mean),
            sig4(st.sd),
            sig4(st.min),
            sig4(st.p05),
            sig4(st.p50),
            sig4(st.p95),
            sig4(st.max),
        ]);
    }
    Block::Table {
        head: ["quantity", "mean", "sd", "min", "p05", "p50", "p95", "max"]
            .map(String::from)
            .to_vec(),
        rows,
        numeric: vec![false, true, true, true, true, true, true, true],
    }
}

/// The heatmap of `q` over the first two axes, one panel per combination of the others.
fn heatmap(s: &Sweep, q: Quantity) -> Heatmap {
    let (xa, ya) = (&s.axes[0], &s.axes[1]);
    let further = &s.axes[2..];
    let n_panels: usize = further.iter().map(|a| a.values.len()).product();
    let panels = (0..n_panels.min(MAX_PANELS))
        .map(|i| {
            // Mixed-radix digits of i over the further axes, the first slowest.
            let mut rest = i;
            let mut tail = vec![0; further.len()];
            for (k, a) in further.iter().enumerate().rev() {
                tail[k] = rest % a.values.len();
                rest /= a.values.len();
            }
            let mut values = Vec::with_capacity(xa.values.len() * ya.values.len());
            for y in 0..ya.values.len() {
                for x in 0..xa.values.len() {
                    let mut coords = vec![x, y];
                    coords.extend(&tail);
                    values.push(q.value(s, point_at(s, &coords)));
                }
            }
            let title = (!further.is_empty()).then(|| {
                further
                    .iter()
                    .zip(&tail)
                    .map(|(a, &t)| format!("{}={}", a.key, a.values[t]))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            Panel { title, values }
        })
        .collect::<Vec<_>>();
    let (range, map, format): (_, _, fn(f64) -> String) = match q {
        Quantity::Gate(_) => ((0.0, 1.0), ColorMap::Viridis, pct_cell),
        Quantity::Metric(_) => {
            let (lo, hi) = panels
                .iter()
                .flat_map(|p| p.values.iter().copied())
                .filter(|v| v.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            let r = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
            (r, ColorMap::Cividis, chart::short)
        }
    };
    Heatmap {
        title: q.title(s),
        subtitle: match q {
            Quantity::Gate(g) if s.gates[g].name.is_none() => Some(s.gate.trim().to_string()),
            _ => None,
        },
        x_key: xa.key.clone(),
        x_values: xa.values.clone(),
        y_key: ya.key.clone(),
        y_values: ya.values.clone(),
        panels,
        range,
        map,
        legend: q.legend(s),
        format,
    }
}

/// The x positions of the one axis: its values when all are numbers, else category indices.
fn axis_x(a: &model::Axis) -> (Vec<f64>, XAxis) {
    let nums: Option<Vec<f64>> = a.values.iter().map(|v| v.parse::<f64>().ok()).collect();
    match nums {
        Some(x) if x.iter().all(|v| v.is_finite()) => {
            let ints = x.iter().all(|v| v.fract() == 0.0);
            (
                x,
                if ints {
                    XAxis::Integers
                } else {
                    XAxis::Numbers
                },
            )
        }
        _ => (
            (0..a.values.len()).map(|i| i as f64).collect(),
            XAxis::Categories(a.values.clone()),
        ),
    }
}

/// Line chart over the one varied key: a line per quantity, with a p05-p95 band for metrics.
fn line_chart(s: &Sweep, qs: &[Quantity], title: &str) -> Lines {
    let a = &s.axes[0];
    let (x, x_axis) = axis_x(a);
    let n = s.points.len();
    let series = qs
        .iter()
        .map(|&q| {
            let mean = (0..n).map(|p| q.value(s, p)).collect();
            let lo_hi = match q {
                Quantity::Gate(_) => None,
                Quantity::Metric(_) => Some((
                    (0..n)
                        .map(|p| q.stat(s, p).map_or(f64::NAN, |st| st.p05))
                        .collect(),
                    (0..n)
                        .map(|p| q.stat(s, p).map_or(f64::NAN, |st| st.p95))
                        .collect(),
                )),
            };
            Band {
                label: q.legend(s),
                x: x.clone(),
                mean,
                lo_hi,
            }
        })
        .collect();
    let gates = qs.iter().all(|q| matches!(q, Quantity::Gate(_)));
    Lines {
        title: title.to_string(),
        x_desc: a.key.clone(),
        y_desc: if gates {
            "pass rate".into()
        } else {
            qs[0].legend(s)
        },
        x_axis,
        series,
        y_range: gates.then_some((-0.02, 1.02)),
        width: 640,
        height: 380,
        legend: gates,
    }
}

/// Wall fraction per step, one line (and band) per point.
fn trajectory_chart(s: &Sweep, points: &[usize]) -> Lines {
    let series = points
        .iter()
        .map(|&p| {
            let t = &s.points[p].trajectory;
            Band {
                label: short_label(s, p),
                x: (0..t.len()).map(|i| i as f64).collect(),
                mean: t.iter().map(|x| x.mean).collect(),
                lo_hi: Some((
                    t.iter().map(|x| x.p05).collect(),
                    t.iter().map(|x| x.p95).collect(),
                )),
            }
        })
        .collect();
    Lines {
        title: "Wall fraction per step: mean and p05-p95".into(),
        x_desc: "step (0 = after the fill)".into(),
        y_desc: "wall fraction".into(),
        x_axis: XAxis::Integers,
        series,
        y_range: None,
        width: 960,
        height: 500,
        legend: true,
    }
}

/// `caves.csv`: the caves pictured (and chosen for the re-run commands).
fn caves_csv(s: &Sweep, picks: &[PointPicks]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = s.axes.iter().map(|a| a.key.clone()).collect();
    head.extend(["role", "seed", "wall_fraction", "median", "exact"].map(String::from));
    let _ = w.write_record(&head);
    for pk in picks {
        for role in [Role::Typical, Role::Passing, Role::Failing] {
            if let Some(c) = pk.get(role) {
                let mut r = s.points[pk.point].params.clone();
                r.extend([
                    role.name().to_string(),
                    c.seed.to_string(),
                    format!("{}", c.wall),
                    format!("{}", pk.median),
                    (pk.exact as u8).to_string(),
                ]);
                let _ = w.write_record(&r);
            }
        }
    }
    w.into_inner().unwrap_or_default()
}

/// Draw the pictures (in parallel), write them, then the pages; returns the number of pictures.
fn draw_and_write(
    s: &Sweep,
    mut b: Builder,
    picks: &[PointPicks],
    out: &mut out::ReportDir,
) -> Result<usize, ReportError> {
    let drawn: Vec<Png> = b
        .jobs
        .par_iter()
        .map(|(_, job)| match job {
            Job::Heat(h) => chart::heatmap(h).map_err(ReportError::Render),
            Job::Lines(l) => chart::lines(l).map_err(ReportError::Render),
            Job::Hist(h) => chart::histograms(h).map_err(ReportError::Render),
            Job::Cave(p, seed) => caves::picture(s, *p, *seed),
        })
        .collect::<Result<_, _>>()?;
    let mut files: Vec<String> = b.jobs.iter().map(|j| j.0.clone()).collect();
    files.extend(["recipe.toml", "caves.csv", "README.md", "index.html"].map(String::from));
    out.begin(&files)?;
    for ((file, _), png) in b.jobs.iter().zip(&drawn) {
        out.put(file, &png.bytes)?;
    }
    let figure = |f: Fig| Figure {
        path: b.jobs[f.job].0.clone(),
        alt: f.alt,
        width: drawn[f.job].width,
        height: drawn[f.job].height,
        caption: f.caption,
    };
    let mut blocks = Vec::new();
    for item in std::mem::take(&mut b.items) {
        blocks.push(match item {
            Item::Block(x) => x,
            Item::Image(f) => Block::Image(figure(f)),
            Item::Strip(fs) => Block::Strip(fs.into_iter().map(figure).collect()),
        });
    }
    out.put("recipe.toml", s.recipe_toml.as_bytes())?;
    out.put("caves.csv", &caves_csv(s, picks))?;
    out.put("README.md", page::markdown(&blocks).as_bytes())?;
    out.put("index.html", page::html(&blocks).as_bytes())?;
    out.finish(&files)?;
    Ok(drawn.len())
}

/// Make the report of sweep folder `dir`. See the module docs.
pub fn write(dir: &Path, opts: &Options) -> Result<Written, ReportError> {
    let s = model::load(dir)?;
    let picked = if opts.points.is_empty() {
        None
    } else {
        Some(filtered_points(&s, &opts.points)?)
    };
    let out_path = opts.out.clone().unwrap_or_else(|| dir.join("report"));
    let mut out = out::ReportDir::check(&out_path, opts.out.is_none())?;
    let page = Page {
        s: &s,
        picked,
        have_stats: s.done_points() > 0,
        primary: s.primary_gate(),
    };
    let mut b = Builder::default();
    page.heading(&mut b);
    let chosen = page.choose(opts.top)?;
    page.best_points(&chosen, &mut b);
    page.grid(&chosen, &mut b);
    page.trajectories(&mut b);
    page.components(&mut b);
    page.caves(&chosen, &mut b);
    page.every_point(&mut b);
    page.files(&mut b);
    let images = draw_and_write(&s, b, &chosen.picks, &mut out)?;
    Ok(Written {
        index: out_path.join("index.html"),
        images,
        points: s.points.len(),
        status: status_line(&s),
    })
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_numbers() {
        assert_eq!(sig4(0.081312), "0.08131");
        assert_eq!(sig4(111.364), "111.4");
        assert_eq!(sig4(2006.8), "2007");
        assert_eq!(sig4(3.0), "3");
        assert_eq!(sig4(f64::NAN), "–");
        assert_eq!(pct(0.915), "91.5%");
    }
}
