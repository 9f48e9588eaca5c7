//! Seed search: the caves of a seed range (or list) that match a query, found fast.
//!
//! A [`Search`] is a recipe, a query ([`cavesweep_core::query::Expr`]), the seeds and a [`Mode`]:
//! every match, the N lowest matching seeds (`--limit`), or the K best by a metric (`--top`).
//! Each cave is generated, then the query is evaluated lazily ([`cavesweep_core::query::QueryPlan`]): a
//! metric is computed only when a clause needs it, cheapest and most decisive clauses first,
//! so a cave rejected by a popcount costs its generation and a popcount. Only matches are
//! measured in full (the output columns).
//!
//! The seeds are cut into chunks whose ids depend only on the seed count (never on the thread
//! count), pulled in order by the workers of [`crate::fanout`]; one collecting thread commits the
//! chunks' matches in chunk order, so the rows come out in seed order and are identical for
//! any thread count. With `--limit N` the collector stops everything as soon as N matches are
//! known below every unfinished seed (a chunk stops early once it holds N matches itself);
//! with `--top K` each chunk keeps its best K and the collector merges them into one bounded
//! heap (ties by lower seed).
//!
//! Every completed chunk is reported to the [`Sink`] as a [`ChunkRecord`] before its rows; a
//! caller that stores these records can resume an interrupted search by handing them back to
//! [`Search::run`] (`prior`): those chunks are not run again and their matches count as found.
//! [`checkpoint`] does that in the sweep store (`cavesweep search --out FILE.csv` resumes).

pub mod calibrate;
pub mod checkpoint;
mod files;
mod gather;

pub use files::{PngSpec, SaveSpec};
pub mod output;

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::ops::{ControlFlow, Range};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::fanout;
use crate::render;
use crate::sweep::output::push_num;
use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{MeasureConfig, Measurer, Metric, MetricSet, Stage, Values};
use cavesweep_core::query::{Expr, QueryPlan};

use crate::error::{Param, Worded, Words};
use cavesweep_core::recipe::{Recipe, RecipeError};

pub use calibrate::Calibration;
pub use checkpoint::Checkpoint;

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The recipe is invalid.
    #[error(transparent)]
    Recipe(#[from] RecipeError),
    /// A match limit of 0.
    #[error("{}", self.message(&Words::LIBRARY))]
    LimitZero,
    /// Top 0 matches.
    #[error("{}", self.message(&Words::LIBRARY))]
    TopZero,
    /// No seeds to search.
    #[error("no seeds to search")]
    NoSeeds,
    /// A chunk size of 0 or over [`crate::sweep::MAX_CHUNK`].
    #[error("{}", self.message(&Words::LIBRARY))]
    Chunk,
    /// A listed seed of `u64::MAX` (seed ranges are half-open, so no range can hold it).
    #[error(
        "seed {} is out of range (the largest seed is {})",
        u64::MAX,
        crate::sweep::MAX_SEED
    )]
    SeedPastMax,
    /// The checkpoint folder is a symbolic link.
    #[error(
        "{} is a symbolic link, where the search keeps its checkpoint; cavesweep does not follow links it did not create: move it away",
        .0.display()
    )]
    CheckpointLink(std::path::PathBuf),
    /// The file of listed seeds cannot be read or holds no valid seed column.
    #[error("{}", self.message(&Words::LIBRARY))]
    SeedsFrom {
        /// The file's path, as displayed.
        path: String,
        /// What is wrong with it (a line number where one applies).
        msg: String,
    },
    /// The file of listed seeds holds more than [`MAX_SEEDS_FROM`] seeds.
    #[error("{}", self.message(&Words::LIBRARY))]
    TooManyListed {
        /// The file's path, as displayed.
        path: String,
    },
    /// A match's picture cannot be written (or would be too large).
    #[error(transparent)]
    Png(#[from] render::RenderError),
    /// A match's map file cannot be written.
    #[error(transparent)]
    Save(#[from] crate::mapfile::MapFileError),
    /// The checkpoint store refused or failed (locked, another search's, damaged, unwritable).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The worker thread pool could not be built.
    #[error(transparent)]
    Threads(#[from] crate::fanout::ThreadsError),
    /// A file operation outside the store failed, such as creating the PNG folder.
    #[error("{what}")]
    Io {
        /// What was being done, as the whole message (e.g. `cannot create the PNG folder DIR`).
        what: String,
        /// What the operating system reported.
        source: std::io::Error,
    },
}

impl Worded for SearchError {
    fn message(&self, w: &Words) -> String {
        let bare = |p: Param| w.name(p).trim_end_matches('=');
        match self {
            SearchError::LimitZero => format!("{} must be at least 1", bare(Param::Limit)),
            SearchError::TopZero => format!("{} must be at least 1", bare(Param::Top)),
            SearchError::Chunk => format!(
                "{} must be from 1 to {} seeds",
                bare(Param::Chunk),
                crate::sweep::MAX_CHUNK
            ),
            SearchError::SeedsFrom { path, msg } => {
                format!("{}: {msg}", w.with(Param::SeedsFrom, path))
            }
            SearchError::TooManyListed { path } => format!(
                "{}: more than {MAX_SEEDS_FROM} seeds: search a range with {}, or split the file",
                w.with(Param::SeedsFrom, path),
                w.with(Param::Seeds, "A..B")
            ),
            e => e.to_string(),
        }
    }
}

impl SearchError {
    /// What the user can do about it, if forcing or another file helps.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        match self {
            SearchError::Store(e) => e.remedy(),
            SearchError::Png(e) => e.remedy(),
            SearchError::Save(e) => e.remedy(),
            _ => None,
        }
    }
}

/// The seeds to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seeds {
    /// A half-open range (up to `u64::MAX` exclusive).
    Range(Range<u64>),
    /// Distinct seeds in ascending order (below `u64::MAX`).
    List(Vec<u64>),
}

impl Seeds {
    /// Number of seeds.
    pub fn len(&self) -> u64 {
        match self {
            Seeds::Range(r) => r.end.saturating_sub(r.start),
            Seeds::List(v) => v.len() as u64,
        }
    }

    /// Whether there are no seeds at all (a search refuses that).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The seeds with index in `lo..hi`, as runs of consecutive seeds.
    fn runs(&self, lo: u64, hi: u64, out: &mut Vec<Range<u64>>) {
        out.clear();
        match self {
            // lo < hi <= len, so start + hi <= end <= u64::MAX: no overflow.
            Seeds::Range(r) => out.push(r.start + lo..r.start + hi),
            Seeds::List(v) => {
                for &s in &v[lo as usize..hi as usize] {
                    match out.last_mut() {
                        Some(run) if run.end == s => run.end += 1,
                        _ => out.push(s..s + 1),
                    }
                }
            }
        }
    }

    /// The first `n` seeds as runs.
    pub fn first(&self, n: u64) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        self.runs(0, n.min(self.len()), &mut out);
        out.retain(|r| !r.is_empty());
        out
    }

    /// The seeds of a list: sorted, duplicates dropped; `u64::MAX` is refused (seed ranges are
    /// half-open, so no range can hold it).
    pub fn list(mut seeds: Vec<u64>) -> Result<Seeds, SearchError> {
        if seeds.contains(&u64::MAX) {
            return Err(SearchError::SeedPastMax);
        }
        seeds.sort_unstable();
        seeds.dedup();
        Ok(Seeds::List(seeds))
    }
}

/// The most seeds `--seeds-from` reads (80 MB of seeds in memory).
pub const MAX_SEEDS_FROM: usize = 10_000_000;
/// The longest line of a `--seeds-from` file.
pub const MAX_SEEDS_FROM_LINE: usize = 1 << 20;

/// Read the `seed` column of a CSV file (a sweep's `seeds.csv`, an earlier search's output).
/// Only a regular file is read (a FIFO or device is refused before it can block), at most
/// [`MAX_SEEDS_FROM`] seeds in lines of at most [`MAX_SEEDS_FROM_LINE`] bytes: memory is
/// bounded whatever the file holds.
pub fn read_seeds(path: &Path) -> Result<Vec<u64>, SearchError> {
    let err = |msg: String| SearchError::SeedsFrom {
        path: path.display().to_string(),
        msg,
    };
    if path.extension().is_some_and(|e| e == "parquet") {
        return read_parquet_seeds(path);
    }
    let file = crate::io::open_input(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let file = crate::io::LineCapped::new(std::io::BufReader::new(file), MAX_SEEDS_FROM_LINE);
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(file);
    let header = r
        .headers()
        .map_err(|e| err(format!("not a CSV file: {e}")))?
        .clone();
    let col = header
        .iter()
        .position(|h| h.trim() == "seed")
        .ok_or_else(|| err("no \"seed\" column in the header".into()))?;
    let mut seeds = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| err(format!("not a CSV file: {e}")))?;
        let line = rec.position().map_or(i as u64 + 2, |p| p.line());
        let field = rec.get(col).unwrap_or("").trim();
        let seed = field.parse::<u64>().map_err(|_| {
            err(format!(
                "line {line}: seed {} is not a whole number from 0 to {}",
                cavesweep_core::quote::quote(field),
                crate::sweep::MAX_SEED
            ))
        })?;
        if seeds.len() == MAX_SEEDS_FROM {
            return Err(SearchError::TooManyListed {
                path: path.display().to_string(),
            });
        }
        seeds.push(seed);
    }
    if seeds.is_empty() {
        return Err(err("no seeds (the file has a header but no rows)".into()));
    }
    Ok(seeds)
}

/// The `seed` column of a Parquet file (a sweep's `seeds.parquet`, a search's output), with
/// the limits of [`read_seeds`].
fn read_parquet_seeds(path: &Path) -> Result<Vec<u64>, SearchError> {
    use crate::store::parquet::{self, Col};
    let err = |msg: String| SearchError::SeedsFrom {
        path: path.display().to_string(),
        msg,
    };
    let file = crate::io::open_input(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let t = parquet::read(file, MAX_SEEDS_FROM as u64).map_err(|e| {
        if e.to_string().contains("this reader holds") {
            SearchError::TooManyListed {
                path: path.display().to_string(),
            }
        } else {
            err(format!("not a Parquet file: {e}"))
        }
    })?;
    let col = t
        .names
        .iter()
        .position(|n| n == "seed")
        .ok_or_else(|| err("no \"seed\" column".into()))?;
    let seeds: Vec<u64> = match &t.cols[col] {
        Col::U64(v) => v.iter().map(|s| s.ok_or(())).collect(),
        Col::I64(v) => v
            .iter()
            .map(|s| s.and_then(|s| u64::try_from(s).ok()).ok_or(()))
            .collect(),
        _ => Err(()),
    }
    .map_err(|()| {
        err(format!(
            "the seed column must hold whole numbers from 0 to {}, without nulls",
            crate::sweep::MAX_SEED
        ))
    })?;
    if seeds.is_empty() {
        return Err(err("no seeds (the file has no rows)".into()));
    }
    Ok(seeds)
}

/// Ranking direction of `--top`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

impl std::str::FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Order, String> {
        match s {
            "asc" => Ok(Order::Asc),
            "desc" => Ok(Order::Desc),
            _ => Err(format!("{s:?} is not asc or desc")),
        }
    }
}

/// Which matches a search returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every match, in seed order.
    All,
    /// The N lowest matching seeds, in seed order.
    Limit(u64),
    /// The K best matches by a metric, best first, ties by lower seed; caves with an empty
    /// (NaN) value rank after every value.
    Top {
        /// How many matches to keep (at least 1).
        k: u64,
        /// The metric they are ranked by (`--by`).
        by: Metric,
        /// Whether smaller or larger values rank first.
        order: Order,
    },
}

/// What to search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// The recipe every cave is generated with.
    pub recipe: Recipe,
    /// The query a cave must satisfy to match.
    pub query: Expr,
    /// The seeds to try.
    pub seeds: Seeds,
    /// Which matches to return: all, the first N, or the best K.
    pub mode: Mode,
    /// Metrics written beside those the query and `--by` name.
    pub extra: MetricSet,
    /// Seeds per chunk; `None` picks [`default_chunk`].
    pub chunk: Option<u64>,
    /// Write a PNG per returned match into this folder.
    pub png: Option<PngSpec>,
    /// Save each returned match as map files into this folder.
    pub save: Option<SaveSpec>,
}

/// Seeds per chunk when not given: about 256 chunks, between 64 and 4096 seeds (a few
/// milliseconds of work: fine-grained enough for `--limit` to stop soon and for Ctrl-C).
/// Depends on the seed count only, so chunk ids name the same seeds in every run.
pub fn default_chunk(seeds: u64) -> u64 {
    (seeds / 256).clamp(64, 4096)
}

/// One match: its seed and its values (every output column measured).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// The cave's seed.
    pub seed: u64,
    /// Its metric values, indexed by [`Metric::index`]; only the search's output columns
    /// ([`Search::columns`]) are meaningful.
    pub values: Values,
}

/// A finished chunk: everything needed to take it into account again without rerunning it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRecord {
    /// The chunk's id: it covers the seeds with index `id * chunk .. (id + 1) * chunk`.
    pub id: u64,
    /// Seeds generated (less than the chunk's size when `--limit` stopped it early).
    pub examined: u64,
    /// Its matches in seed order (at most N with `--limit`); with `--top`, its best K.
    pub matches: Vec<Match>,
}

/// Progress after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Seeds generated so far (chunks skipped because `--limit` was already met not counted).
    pub examined: u64,
    /// Seeds in the whole search.
    pub total: u64,
    /// Matches found so far (with `--limit`, those committed; with `--top`, all candidates).
    pub matches: u64,
}

/// Where a search's results go.
pub trait Sink {
    /// Matches to write: with [`Mode::All`] and [`Mode::Limit`], in seed order as they are
    /// committed (call after call continues the same ascending sequence); with [`Mode::Top`],
    /// once at the end, the final ranking.
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError>;
    /// A chunk finished (before its rows are committed). For checkpointing.
    fn chunk(&mut self, _record: &ChunkRecord) -> Result<(), SearchError> {
        Ok(())
    }
    /// Progress after each chunk is taken in (prior chunks included), for a progress bar.
    fn progress(&mut self, _p: &Progress) {}
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every chunk the mode needed finished: all seeds searched, or `--limit` met.
    Complete,
    /// Stopped by the caller's stop flag; the rows of every finished chunk were written.
    Interrupted,
}

/// What a search did.
#[derive(Debug, Clone, Copy)]
pub struct SearchSummary {
    /// Whether the search finished or was stopped.
    pub outcome: Outcome,
    /// Seeds generated by this run.
    pub examined: u64,
    /// Rows written.
    pub rows: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// A search ready to run: validated, calibrated and planned.
pub struct Search {
    spec: SearchSpec,
    plan: QueryPlan,
    columns: MetricSet,
    calibration: Calibration,
    chunk: u64,
    n_chunks: u64,
    /// Gather the caves that the fractions do not decide into lane batches of their own
    /// ([`gather`]) before measuring them further.
    gather: bool,
}

/// Gather survivors ([`gather`]) when at most this share of the calibration sample needs more
/// than the fractions: beyond it, most caves of a generated batch are measured anyway, where
/// they already sit in lanes, and copying them again would cost more than it saves.
const GATHER_MAX_SHARE: f64 = 0.5;

/// The ranking key of `--top`: smaller is better.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    empty: bool,
    key: f64,
    m: Match,
}

impl Ranked {
    fn new(m: Match, by: Metric, order: Order) -> Ranked {
        let v = m.values[by.index()];
        Ranked {
            empty: v.is_nan(),
            key: match order {
                Order::Asc => v,
                Order::Desc => -v,
            },
            m,
        }
    }
}

impl Ord for Ranked {
    fn cmp(&self, o: &Ranked) -> CmpOrdering {
        self.empty
            .cmp(&o.empty)
            .then_with(|| {
                if self.empty {
                    CmpOrdering::Equal
                } else {
                    self.key.partial_cmp(&o.key).expect("not NaN")
                }
            })
            .then(self.m.seed.cmp(&o.m.seed))
    }
}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Ranked) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Ranked {
    fn eq(&self, o: &Ranked) -> bool {
        self.cmp(o) == CmpOrdering::Equal
    }
}
impl Eq for Ranked {}

/// The best `k` seen: a max-heap whose top is the worst kept.
struct TopK {
    k: usize,
    heap: BinaryHeap<Ranked>,
}

impl TopK {
    fn new(k: u64) -> TopK {
        let k = usize::try_from(k).unwrap_or(usize::MAX);
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(1 << 16)),
        }
    }
    fn push(&mut self, r: Ranked) {
        if self.heap.len() < self.k {
            self.heap.push(r);
        } else if self.heap.peek().is_some_and(|w| r < *w) {
            self.heap.pop();
            self.heap.push(r);
        }
    }
    /// Whether a cave whose `--by` value is empty (NaN) can no longer enter: the heap holds
    /// `k` caves and even its worst has a value (an empty value ranks after every value).
    fn shuts_out_empty(&self) -> bool {
        self.heap.len() >= self.k && self.heap.peek().is_some_and(|w| !w.empty)
    }
    fn sorted(&self) -> Vec<Match> {
        let mut v: Vec<Ranked> = self.heap.iter().copied().collect();
        v.sort();
        v.into_iter().map(|r| r.m).collect()
    }
}

/// Whether `m` is certainly empty (NaN) on `grid`, known from a few cells alone (no flood, no
/// BFS): `path_length` when the spawn or the exit is WALL, or no exit lies inside the grid
/// (the BFS walks FLOOR from a FLOOR spawn, so it never reaches a WALL exit), `reach_depth`
/// when the spawn is WALL. False means "not known", never "not empty". Checked against the
/// measured values in the tests.
fn certainly_empty(m: Metric, cfg: &MeasureConfig, grid: &Grid) -> bool {
    let wall = |(y, x): (usize, usize)| y >= grid.rows() || x >= grid.cols() || grid.get(y, x);
    match m {
        Metric::PathLength => wall(cfg.spawn) || cfg.exit.is_none_or(wall),
        Metric::ReachDepth => wall(cfg.spawn),
        _ => false,
    }
}

/// A worker's generator and scratch.
struct Worker {
    generator: Generator,
    runs: Vec<Range<u64>>,
    /// Survivors of the fractions waiting for a lane batch (when the search gathers them).
    gather: Option<gather::Gather>,
}

/// A chunk's matches so far.
struct Found {
    mode: Mode,
    columns: MetricSet,
    limit: u64,
    matches: Vec<Match>,
    top: Option<TopK>,
    /// With `--png-dir` (every match): the grids of the matches, by seed.
    grids: Option<Vec<(u64, Grid)>>,
}

impl Found {
    /// `--top` by a metric that is certainly empty on this cave ([`certainly_empty`]) while
    /// the chunk's heap already holds `k` caves with values: the cave cannot enter the chunk's
    /// best `k` whether it matches or not (an empty value ranks after every value), so it
    /// need not be measured at all. The chunk's best `k` are the same, hence the search's
    /// rows (the search's best `k` are among the chunks' best `k`).
    ///
    /// `certainly_empty(by)` says whether the ranking metric is [`certainly_empty`] on the
    /// cave; it is asked only when the heap is full (it reads the grid, which may first have
    /// to be copied out of the lanes the cave was made in).
    fn shuts_out(&self, certainly_empty: impl FnOnce(Metric) -> bool) -> bool {
        match (&self.top, self.mode) {
            (Some(t), Mode::Top { by, .. }) => t.shuts_out_empty() && certainly_empty(by),
            _ => false,
        }
    }

    /// Whether [`Found::add`] keeps the grids of matches (`--png-dir` without `--top`, whose
    /// best caves are rendered at the end).
    fn wants_grids(&self) -> bool {
        self.grids.is_some() && self.top.is_none()
    }

    /// A cave that matches, measured on `self.columns` (`values`): keep it. `grid` is the
    /// cave's grid when [`Found::wants_grids`]. True once the chunk holds `--limit` matches.
    fn add(&mut self, seed: u64, values: Values, grid: Option<&Grid>) -> bool {
        let m = Match { seed, values };
        if let (Some(t), Mode::Top { by, order, .. }) = (&mut self.top, self.mode) {
            t.push(Ranked::new(m, by, order));
            return false;
        }
        self.matches.push(m);
        if let Some(g) = &mut self.grids {
            g.push((seed, grid.expect("wants_grids").clone()));
        }
        self.matches.len() as u64 >= self.limit
    }
}

impl Search {
    /// Validate `spec`, calibrate on a sample of its seeds and plan the query.
    pub fn new(spec: SearchSpec) -> Result<Search, SearchError> {
        let mut out = Search::uncalibrated(spec)?;
        let mut generator = Generator::new(&out.spec.recipe, out.columns)?;
        let cal = calibrate::calibrate(&mut generator, &out.spec.seeds, out.spec.query.metrics());
        out.plan = QueryPlan::new(&out.spec.query, &cal.costs, &cal.sample);
        out.calibration = cal;
        out.gather = out
            .deeper_share()
            .is_some_and(|s| s > 0.0 && s <= GATHER_MAX_SHARE);
        Ok(out)
    }

    /// Validate `spec` and plan the query on static cost estimates (no sample).
    pub fn uncalibrated(spec: SearchSpec) -> Result<Search, SearchError> {
        spec.recipe.validate()?;
        if let Some(png) = &spec.png {
            let hex = spec.recipe.connectivity == cavesweep_core::measure::Connectivity::Six;
            render::check_size(spec.recipe.rows, spec.recipe.cols, png.scale, hex)?;
        }
        match spec.mode {
            Mode::Limit(0) => return Err(SearchError::LimitZero),
            Mode::Top { k: 0, .. } => return Err(SearchError::TopZero),
            _ => {}
        }
        if spec.seeds.is_empty() {
            return Err(SearchError::NoSeeds);
        }
        let chunk = spec
            .chunk
            .unwrap_or_else(|| default_chunk(spec.seeds.len()));
        if chunk == 0 || chunk > crate::sweep::MAX_CHUNK {
            return Err(SearchError::Chunk);
        }
        let mut columns = spec.query.metrics().union(spec.extra);
        if let Mode::Top { by, .. } = spec.mode {
            columns.insert(by);
        }
        let calibration = Calibration {
            costs: cavesweep_core::query::Costs::estimated(),
            sample: vec![],
            gen_ns: f64::NAN,
            seeds: None,
        };
        Ok(Search {
            plan: QueryPlan::new(&spec.query, &calibration.costs, &[]),
            n_chunks: spec.seeds.len().div_ceil(chunk),
            spec,
            columns,
            calibration,
            chunk,
            gather: false,
        })
    }

    /// Whether caves the fractions do not decide are gathered into lane batches of their own
    /// before being measured further (see `gather`): chosen from the calibration sample
    /// (never without one). The rows are the same either way.
    pub fn gathers(&self) -> bool {
        self.gather
    }

    /// Force gathering on or off (tests and benchmarks compare the two).
    pub fn set_gather(&mut self, on: bool) {
        self.gather = on;
    }

    /// The share of the calibration sample whose plan needs a metric beyond the fractions.
    fn deeper_share(&self) -> Option<f64> {
        let sample = &self.calibration.sample;
        if sample.is_empty() {
            return None;
        }
        let deeper = sample
            .iter()
            .filter(|v| {
                let mut deeper = false;
                self.plan.matches(|m| {
                    deeper |= m.stage() != Stage::Count;
                    v[m.index()]
                });
                deeper
            })
            .count();
        Some(deeper as f64 / sample.len() as f64)
    }

    /// What was asked for, as validated.
    pub fn spec(&self) -> &SearchSpec {
        &self.spec
    }

    /// The query's evaluation plan (clause order, costs, sample pass rates).
    pub fn plan(&self) -> &QueryPlan {
        &self.plan
    }

    /// The calibration the plan was made from (empty for [`Search::uncalibrated`]).
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// The metric columns of the output, in column order.
    pub fn columns(&self) -> MetricSet {
        self.columns
    }

    /// Number of chunks and seeds per chunk.
    pub fn chunks(&self) -> (u64, u64) {
        (self.n_chunks, self.chunk)
    }

    /// A canonical description of everything that decides the rows (recipe, query, seeds,
    /// mode, columns, chunk size; not the threads): a resumed search must have the same.
    pub fn fingerprint(&self) -> serde_json::Value {
        let s = &self.spec;
        let seeds = match &s.seeds {
            Seeds::Range(r) => serde_json::json!(format!("{}..{}", r.start, r.end)),
            Seeds::List(v) => {
                let mut h = crc32fast::Hasher::new();
                v.iter().for_each(|x| h.update(&x.to_le_bytes()));
                serde_json::json!({ "list": v.len(), "crc32": h.finalize() })
            }
        };
        let mode = match s.mode {
            Mode::All => "all".to_string(),
            Mode::Limit(n) => format!("limit {n}"),
            Mode::Top { k, by, order } => format!(
                "top {k} by {} {}",
                by.name(),
                if order == Order::Asc { "asc" } else { "desc" }
            ),
        };
        serde_json::json!({
            "recipe": s.recipe.to_toml(),
            "query": s.query.to_string(),
            "seeds": seeds,
            "mode": mode,
            "columns": self.columns.to_string(),
            "chunk": self.chunk,
        })
    }

    /// The CSV header: `seed`, then the metric columns.
    pub fn header(&self) -> Vec<u8> {
        let mut out = b"seed".to_vec();
        for m in self.columns.iter() {
            out.push(b',');
            out.extend_from_slice(m.name().as_bytes());
        }
        out.push(b'\n');
        out
    }

    /// Append one CSV row (numbers as in a sweep's `seeds.csv`; empty = NaN).
    pub fn row(&self, m: &Match, out: &mut Vec<u8>) {
        out.extend_from_slice(itoa::Buffer::new().format(m.seed).as_bytes());
        for c in self.columns.iter() {
            out.push(b',');
            push_num(out, m.values[c.index()]);
        }
        out.push(b'\n');
    }

    /// `search --explain`: the evaluation order with each clause's metric, measured cost and
    /// sample pass rate.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        let plan = &self.plan;
        let cal = &self.calibration;
        let _ = writeln!(s, "query:            {}", plan.expr());
        let _ = writeln!(s, "evaluation order: {}", plan.ordered_expr());
        match cal.seeds {
            Some((a, b)) => {
                let _ = writeln!(
                    s,
                    "sample:           {} caves of {} (seeds {a}..={b}); generation {:.0} ns/cave",
                    plan.sample_size(),
                    self.spec.recipe.name,
                    cal.gen_ns
                );
            }
            None => {
                let _ = writeln!(s, "sample:           none (static cost estimates)");
            }
        }
        let width = plan
            .order()
            .iter()
            .map(|c| c.clause.to_string().len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            s,
            "  #  {:<width$}  {:<18}  {:>12}  {:>9}  {:>9}",
            "clause", "metric", "cost ns/cave", "pass rate", "evaluated"
        );
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
        for (i, c) in plan.order().iter().enumerate() {
            let _ = writeln!(
                s,
                "  {:<2} {:<width$}  {:<18}  {:>12.0}  {:>9}  {:>9}",
                i + 1,
                c.clause.to_string(),
                c.clause.metric.name(),
                c.cost_ns,
                pct(c.pass_rate),
                pct(c.reached),
            );
        }
        if let Some(e) = plan.expected_ns() {
            let all = cal.costs.of_set(plan.metrics());
            let _ = writeln!(
                s,
                "metric cost on the sample: {e:.0} ns/cave with this order and short-circuits ({all:.0} ns/cave to compute every metric of the query)"
            );
        }
        let _ = write!(
            s,
            "(cost: the metric computed alone, with the stages it needs; pass rate: share of the \
             sample where the clause holds; evaluated: share where the plan needs it)"
        );
        s
    }

    /// Run chunk `id` on a worker. `None` when abandoned (stop, or past the `--limit` end).
    fn run_chunk(
        &self,
        w: &mut Worker,
        id: u64,
        stop: &AtomicBool,
        end: &AtomicU64,
    ) -> Result<Option<ChunkRecord>, SearchError> {
        let lo = id * self.chunk;
        let hi = (lo + self.chunk).min(self.spec.seeds.len());
        self.spec.seeds.runs(lo, hi, &mut w.runs);
        // Abandoned on Ctrl-C, or when --limit no longer needs this chunk.
        let abandon = || stop.load(Ordering::Relaxed) || id >= end.load(Ordering::Relaxed);
        let limit = match self.spec.mode {
            Mode::Limit(n) => n,
            _ => u64::MAX,
        };
        let want_png = self.per_match() && self.spec.mode == Mode::All;
        let mut found = Found {
            mode: self.spec.mode,
            columns: self.columns,
            limit,
            matches: Vec::new(),
            top: match self.spec.mode {
                Mode::Top { k, .. } => Some(TopK::new(k)),
                _ => None,
            },
            grids: want_png.then(Vec::new),
        };
        let mut examined = 0u64;
        let mut abandoned = false;
        let plan = &self.plan;
        let runs = std::mem::take(&mut w.runs);
        let cfg = *w.generator.measure_config();
        let mut gather = if self.gather { w.gather.take() } else { None };
        // A gathered batch: each cave's plan evaluated on lane measurements.
        let flush = |g: &mut gather::Gather, found: &mut Found| {
            let mut full = false;
            g.flush(&cfg, |seed, grid, view| {
                if plan.matches(|m| view.get(m)) {
                    let mut values = cavesweep_core::measure::EMPTY_VALUES;
                    view.ensure(found.columns);
                    view.copy_into(found.columns, &mut values);
                    full |= found.add(seed, values, Some(grid));
                }
            });
            full
        };
        for run in &runs {
            let flow = w
                .generator
                .generate(run.clone(), |cave| {
                    if examined.is_multiple_of(256) && abandon() {
                        abandoned = true;
                        return ControlFlow::Break(());
                    }
                    examined += 1;
                    if found.shuts_out(|by| certainly_empty(by, &cfg, cave.grid())) {
                        return ControlFlow::Continue(());
                    }
                    let matched = match &mut gather {
                        Some(g) => {
                            // Decide on the fractions if they can; otherwise queue the cave.
                            let mut deeper = false;
                            let matched = plan.matches(|m| {
                                if m.stage() == Stage::Count {
                                    cave.metric(m)
                                } else {
                                    deeper = true;
                                    f64::NAN
                                }
                            });
                            if deeper {
                                let seed = cave.seed;
                                let full = g.push(seed, cave.grid()) && flush(g, &mut found);
                                return if full {
                                    ControlFlow::Break(())
                                } else {
                                    ControlFlow::Continue(())
                                };
                            }
                            matched
                        }
                        None => plan.matches(|m| cave.metric(m)),
                    };
                    let full = matched && {
                        let mut values = cavesweep_core::measure::EMPTY_VALUES;
                        cave.measure_set(found.columns, &mut values);
                        let seed = cave.seed;
                        let grid = if found.wants_grids() {
                            Some(cave.grid())
                        } else {
                            None
                        };
                        found.add(seed, values, grid)
                    };
                    if full {
                        // This chunk alone holds N matches: nothing after them is needed.
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
                .expect("recipe validated");
            if flow.is_break() {
                break;
            }
        }
        w.runs = runs;
        if let Some(mut g) = gather {
            if !abandoned {
                flush(&mut g, &mut found);
            }
            w.gather = Some(g);
        }
        if abandoned {
            return Ok(None);
        }
        // Gathered caves are decided after later ones: back to seed order, the N lowest.
        let Found {
            mut matches,
            top,
            grids,
            ..
        } = found;
        matches.sort_unstable_by_key(|m| m.seed);
        matches.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        if let Some(mut grids) = grids {
            grids.sort_unstable_by_key(|g| g.0);
            let mut measurer = Measurer::new();
            for (m, (seed, g)) in matches.iter().zip(&grids) {
                debug_assert_eq!(m.seed, *seed);
                self.write_match(&mut measurer, m.seed, g)?;
            }
        }
        if let Some(t) = top {
            matches = t.sorted();
        }
        Ok(Some(ChunkRecord {
            id,
            examined,
            matches,
        }))
    }

    /// Run the search on `threads` threads, writing into `sink`. Raising `stop` ends it after
    /// the chunks in flight (abandoned) with the rows of every finished chunk written.
    /// `prior`: chunks finished by an earlier run (see the module docs); they are not rerun.
    pub fn run(
        &self,
        threads: usize,
        stop: &AtomicBool,
        prior: &[ChunkRecord],
        sink: &mut dyn Sink,
    ) -> Result<SearchSummary, SearchError> {
        let start = Instant::now();
        // Chunk ids at or past `end` are not needed (lowered by --limit).
        let end = AtomicU64::new(self.n_chunks);
        let mut c = Collector::new(self);
        for r in prior {
            c.add(r.clone(), sink, &end)?;
        }
        let skip: std::collections::BTreeSet<u64> = prior.iter().map(|r| r.id).collect();
        let mut examined = 0u64;
        if !c.finished() {
            let error: std::sync::Mutex<Option<SearchError>> = std::sync::Mutex::new(None);
            let failed = AtomicBool::new(false);
            // Chunks in order, minus those already done, up to `end` (lowered by --limit),
            // until a worker fails.
            let jobs = (0..self.n_chunks)
                .filter(|id| !skip.contains(id))
                .take_while(|&id| {
                    id < end.load(Ordering::Relaxed) && !failed.load(Ordering::Relaxed)
                });
            let r = fanout::run::<_, _, _, SearchError>(
                threads,
                stop,
                jobs,
                || {
                    let mut generator =
                        Generator::new(&self.spec.recipe, self.columns).expect("recipe validated");
                    // Without gathering, caves are measured where their batch made them, and
                    // `min_width`, `path_length` and `reach_depth` load each cave's own planes
                    // from its grid: the generator copies every batch out at once (measured:
                    // cave by cave cost 8% more CPU on `min_width>=2 && components<=2`).
                    // Gathering reads the grids of the few survivors only.
                    if self.gather {
                        generator.set_grids_read(false);
                    }
                    let r = &self.spec.recipe;
                    Worker {
                        gather: gather::Gather::new(generator.simd(), r.rows, r.cols),
                        generator,
                        runs: Vec::new(),
                    }
                },
                |w, id| match self.run_chunk(w, id, stop, &end) {
                    Ok(out) => out,
                    Err(e) => {
                        error.lock().expect("lock").get_or_insert(e);
                        failed.store(true, Ordering::Relaxed);
                        None
                    }
                },
                |out: ChunkRecord| {
                    examined += out.examined;
                    sink.chunk(&out)?;
                    c.add(out, sink, &end)?;
                    Ok(if c.finished() {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    })
                },
            );
            if let Some(e) = error.into_inner().expect("lock") {
                return Err(e);
            }
            r?;
        }
        let complete = c.finished();
        c.flush_all(sink)?;
        if self.spec.mode == Mode::All {
            // A resumed search: the earlier run wrote the files of its chunks' matches; make
            // any missing (deleted, or --png-dir / --save-dir added on the rerun).
            let seeds: Vec<u64> = prior
                .iter()
                .flat_map(|r| &r.matches)
                .map(|m| m.seed)
                .collect();
            self.missing_match_files(&seeds, threads)?;
        }
        if self.per_match() && self.spec.mode != Mode::All {
            self.render_rows(&c.written, threads)?;
        }
        Ok(SearchSummary {
            outcome: if complete {
                Outcome::Complete
            } else {
                Outcome::Interrupted
            },
            examined,
            rows: c.rows,
            elapsed: start.elapsed(),
        })
    }
}

/// The collecting side: commits chunks in order, decides when `--limit` is met, keeps the
/// `--top` heap. Holds only the finished chunks past the first unfinished one.
struct Collector<'a> {
    s: &'a Search,
    /// Finished chunks past the frontier (with `--top`, emptied: their matches are in `top`).
    pending: BTreeMap<u64, ChunkRecord>,
    /// Lowest chunk id not yet finished.
    frontier: u64,
    /// Matches committed (written) so far.
    rows: u64,
    /// Seeds generated, matches found (all modes), for progress.
    examined: u64,
    found: u64,
    top: Option<TopK>,
    /// Seeds written, for the PNGs of `--limit` / `--top` (empty without `--png-dir`).
    written: Vec<u64>,
}

impl<'a> Collector<'a> {
    fn new(s: &'a Search) -> Collector<'a> {
        Collector {
            s,
            pending: BTreeMap::new(),
            frontier: 0,
            rows: 0,
            examined: 0,
            found: 0,
            top: match s.spec.mode {
                Mode::Top { k, .. } => Some(TopK::new(k)),
                _ => None,
            },
            written: Vec::new(),
        }
    }

    fn limit(&self) -> u64 {
        match self.s.spec.mode {
            Mode::Limit(n) => n,
            _ => u64::MAX,
        }
    }

    /// Everything the mode needs is known.
    fn finished(&self) -> bool {
        self.frontier >= self.s.n_chunks || self.rows >= self.limit()
    }

    fn add(
        &mut self,
        mut r: ChunkRecord,
        sink: &mut dyn Sink,
        end: &AtomicU64,
    ) -> Result<(), SearchError> {
        self.examined += r.examined;
        self.found += r.matches.len() as u64;
        if let (Some(top), Mode::Top { by, order, .. }) = (&mut self.top, self.s.spec.mode) {
            for m in r.matches.drain(..) {
                top.push(Ranked::new(m, by, order));
            }
        }
        self.pending.insert(r.id, r);
        let limit = self.limit();
        while let Some(next) = self.pending.remove(&self.frontier) {
            let take = (limit - self.rows).min(next.matches.len() as u64) as usize;
            self.commit(&next.matches[..take], sink)?;
            self.frontier += 1;
            if self.rows >= limit {
                break;
            }
        }
        // --limit: once N matches are known in the committed rows and the finished chunks up
        // to some id, no chunk past that id can hold one of the N lowest.
        if limit != u64::MAX && self.rows < limit {
            let mut n = self.rows;
            for (&id, rec) in &self.pending {
                n += rec.matches.len() as u64;
                if n >= limit {
                    end.fetch_min(id + 1, Ordering::Relaxed);
                    break;
                }
            }
        }
        sink.progress(&Progress {
            examined: self.examined,
            total: self.s.spec.seeds.len(),
            matches: if self.top.is_some() {
                self.found
            } else {
                self.rows
            },
        });
        Ok(())
    }

    fn commit(&mut self, rows: &[Match], sink: &mut dyn Sink) -> Result<(), SearchError> {
        if rows.is_empty() {
            return Ok(());
        }
        sink.rows(rows)?;
        self.rows += rows.len() as u64;
        if self.s.per_match() {
            self.written.extend(rows.iter().map(|m| m.seed));
        }
        Ok(())
    }

    /// At the end (complete or interrupted): the `--top` ranking, or the finished chunks past a
    /// gap left by an interruption (still ascending).
    fn flush_all(&mut self, sink: &mut dyn Sink) -> Result<(), SearchError> {
        if let Some(top) = self.top.take() {
            return self.commit(&top.sorted(), sink);
        }
        let limit = self.limit();
        for (_, r) in std::mem::take(&mut self.pending) {
            if self.rows >= limit {
                break;
            }
            let take = (limit - self.rows).min(r.matches.len() as u64) as usize;
            self.commit(&r.matches[..take], sink)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
