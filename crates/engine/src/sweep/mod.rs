//! Sweeps: millions of (grid point x seed) caves, reduced on the fly to statistics.
//!
//! - [`vary`]: `--vary` axes and their cartesian product (computed per point, never expanded);
//! - [`Plan`]: the fixed cut of a sweep into chunks (grid point, seed range). The cut depends only
//!   on the sweep's definition, never on the thread count, so chunk ids name the same work in
//!   every run, resume and shard;
//! - [`stats`]: the exactly mergeable, sparse collector;
//! - [`engine`]: runs one chunk (generate, measure, gate, record);
//! - [`state`]: the sweep's records in the output folder's store ([`crate::store`]): open grid
//!   points, checkpoints, verified resume, the final files;
//! - [`shard`]: which shards a process runs (`--shard K/N`, lists, `auto` from a scheduler);
//! - [`merge`]: shard folders into one;
//! - [`output`]: the CSV rows;
//! - [`folder`]: the read side of a sweep folder, for reports and other tools.
//!
//! What the machinery costs on grids (`cavesweep bench --grid`) is measured in
//! [`crate::benchmark::grid`], on this module's public API.

pub mod engine;
pub mod folder;
pub mod merge;
pub mod output;
pub mod shard;
pub mod state;
pub mod stats;
pub mod vary;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::error::{Param, Worded, Words};
pub use crate::store::table::Format;
use cavesweep_core::measure::MetricSet;
use cavesweep_core::query::Gate;
use cavesweep_core::recipe::{Recipe, RecipeError};
use stats::Shape;
use vary::{Vary, VaryError};

/// Why a sweep could not be planned or run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A `--vary` axis is malformed or repeated, or the grid has too many points.
    #[error(transparent)]
    Vary(#[from] VaryError),
    /// The worker thread pool could not be built.
    #[error(transparent)]
    Threads(#[from] crate::fanout::ThreadsError),
    /// A grid point's recipe is invalid: a `--vary` value its key refuses.
    #[error("grid point {point}")]
    Point {
        /// The point's offending setting, as `KEY=VALUE`.
        point: String,
        /// Why the recipe refuses it.
        source: RecipeError,
    },
    /// `--seeds` is not `A..B` or `A..=B` with `A < B` (the text given).
    #[error("{}", self.message(&Words::LIBRARY))]
    Seeds(String),
    /// `--shard` is malformed, or names shards the sweep cannot have.
    #[error(transparent)]
    Shard(#[from] shard::ShardError),
    /// `--per-seed` is not `all`, `kept` or `none` (the text given).
    #[error("{}", self.message(&Words::LIBRARY))]
    PerSeed(String),
    /// `--chunk` is 0 or over [`MAX_CHUNK`].
    #[error("{}", self.message(&Words::LIBRARY))]
    Chunk,
    /// An inclusive seed range ending at `u64::MAX` (the text given): the counters are `u64`.
    #[error("{}", self.message(&Words::LIBRARY))]
    SeedPastMax(String),
    /// More than 2^64 caves.
    #[error(
        "{points} grid points x {seeds} seeds is more than 2^64 caves; sweep fewer seeds or points"
    )]
    TooManyCaves {
        /// The grid's points.
        points: usize,
        /// Seeds per point.
        seeds: u64,
    },
    /// More than 2^63 chunks (the chunk size given or chosen).
    #[error("{}", self.message(&Words::LIBRARY))]
    TooManyChunks(u64),
    /// The output folder: unwritable, locked, holding other work, damaged.
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
    /// Shard folders that cannot be merged.
    #[error(transparent)]
    Merge(Box<merge::MergeError>),
    /// A file of the output folder could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// A final file could not be read back to verify it.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The thread that writes checkpoints could not start.
    #[error("cannot start the checkpoint thread (raise the memory or thread limit)")]
    CheckpointThread(#[source] std::io::Error),
    /// The thread that writes checkpoints panicked or hung up.
    #[error("the checkpoint thread stopped unexpectedly")]
    CheckpointThreadStopped,
    /// A point record written by this run no longer decodes.
    #[error(
        "the record of grid point {point} was damaged while the sweep ran ({why}); rerun to recompute it"
    )]
    Damaged {
        /// The grid point's index.
        point: u64,
        /// What does not decode or check.
        why: String,
    },
    /// A folder's store does not describe a sweep this build can rebuild.
    #[error("{}", match dir {
        Some(d) => format!("{}: unreadable sweep definition ({why})", d.display()),
        None => format!("recorded sweep definition: {why}"),
    })]
    Definition {
        /// The folder whose store holds the definition; `None` when a fingerprint alone was rebuilt
        /// ([`Plan::from_fingerprint`]).
        dir: Option<std::path::PathBuf>,
        /// What is missing or wrong in it.
        why: String,
    },
    /// A folder read as a sweep holds something else.
    #[error("{}", match key {
        Some(k) => format!("{}: the store has no {k:?}", dir.display()),
        None => format!("{} does not hold a sweep", dir.display()),
    })]
    NotASweep {
        /// The folder.
        dir: std::path::PathBuf,
        /// The meta key the store lacks; `None` when the store holds another kind of work.
        key: Option<String>,
    },
    /// A scratch folder (for `bench --grid`) could not be made.
    #[error("cannot create a scratch folder")]
    Scratch(#[source] std::io::Error),
    /// A bug: an invariant of the engine did not hold.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Worded for SweepError {
    fn message(&self, w: &Words) -> String {
        match self {
            SweepError::Seeds(s) => format!(
                "{}: expected A..B (half-open: 0..200 is 200 seeds) or A..=B, with A < B <= 18446744073709551615",
                w.given(Param::Seeds, s)
            ),
            SweepError::SeedPastMax(s) => format!(
                "{}: the largest seed is 18446744073709551614 (ranges are half-open in u64): give A..18446744073709551615 or A..=18446744073709551614",
                w.given(Param::Seeds, s)
            ),
            SweepError::PerSeed(s) => {
                format!("{}: expected all, kept or none", w.given(Param::PerSeed, s))
            }
            SweepError::Chunk => format!(
                "{} must be from 1 to {MAX_CHUNK} seeds (a chunk's rows are held in memory until it is done)",
                w.name(Param::Chunk).trim_end_matches('=')
            ),
            SweepError::TooManyChunks(chunk) => format!(
                "{} cuts this sweep into more than 2^63 chunks; use a larger {}",
                w.with(Param::Chunk, &chunk.to_string()),
                w.name(Param::Chunk).trim_end_matches('=')
            ),
            SweepError::Vary(e) => e.message(w),
            SweepError::Shard(e) => e.message(w),
            SweepError::Merge(e) => e.message(w),
            e => e.to_string(),
        }
    }
}

// Boxed: the folder errors carry paths and descriptions, and every `Result` of the engine
// would otherwise be as large as the largest of them.
impl From<crate::store::StoreError> for SweepError {
    fn from(e: crate::store::StoreError) -> SweepError {
        SweepError::Store(Box::new(e))
    }
}

impl From<merge::MergeError> for SweepError {
    fn from(e: merge::MergeError) -> SweepError {
        SweepError::Merge(Box::new(e))
    }
}

impl SweepError {
    /// What the user can do about it, if forcing or another folder helps.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        match self {
            SweepError::Store(e) => e.remedy(),
            _ => None,
        }
    }
}

/// Which caves get a row in `seeds.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerSeed {
    /// Every cave.
    All,
    /// Only the caves that pass the gate.
    Kept,
    /// No cave: `seeds.csv` is not written.
    None,
}

impl FromStr for PerSeed {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<PerSeed, SweepError> {
        match s {
            "all" => Ok(PerSeed::All),
            "kept" => Ok(PerSeed::Kept),
            "none" => Ok(PerSeed::None),
            _ => Err(SweepError::PerSeed(s.into())),
        }
    }
}

impl fmt::Display for PerSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PerSeed::All => "all",
            PerSeed::Kept => "kept",
            PerSeed::None => "none",
        })
    }
}

/// A seed: a `u64` in decimal, with optional `_` separators or a power-of-ten exponent
/// (`1e12`, `5e6`) as long as the value is a whole number that fits.
fn parse_seed(t: &str) -> Option<u64> {
    let t = t.trim().replace('_', "");
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        let (m, e): (u64, u32) = (m.parse().ok()?, e.parse().ok()?);
        return m.checked_mul(10u64.checked_pow(e)?);
    }
    t.parse().ok()
}

/// The largest seed the command line and Python take, in a range, a list or alone
/// (`run --seed`, `generate`): seed ranges are half-open in `u64`, so no range can hold
/// `u64::MAX`, and one limit everywhere beats a seed that works in one command only.
pub const MAX_SEED: u64 = u64::MAX - 1;

/// `A..B` (half-open) or `A..=B` (inclusive), as a half-open range of at least one seed. Every
/// seed up to [`MAX_SEED`] can be named; `u64::MAX` itself cannot (the range would not fit).
pub fn parse_seeds(s: &str) -> Result<Range<u64>, SweepError> {
    let err = || SweepError::Seeds(s.into());
    let (a, b) = s.split_once("..").ok_or_else(err)?;
    let (b, inclusive) = match b.strip_prefix('=') {
        Some(b) => (b, true),
        None => (b, false),
    };
    let a = parse_seed(a).ok_or_else(err)?;
    let b = parse_seed(b).ok_or_else(err)?;
    let b = if inclusive {
        b.checked_add(1)
            .ok_or_else(|| SweepError::SeedPastMax(s.to_string()))?
    } else {
        b
    };
    if a >= b {
        return Err(err());
    }
    Ok(a..b)
}

/// `K/N`: this machine runs shard K (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, from 1 to `n`.
    pub k: u32,
    /// How many shards the sweep is split into (at least 1).
    pub n: u32,
}

impl Shard {
    /// The whole sweep as one shard (`1/1`): a run without `--shard`, or a merge's output.
    pub const WHOLE: Shard = Shard { k: 1, n: 1 };
    /// Whether chunk `id` belongs to this shard (round robin, so every shard gets a share of
    /// every grid point).
    pub fn owns(self, id: u64) -> bool {
        id % self.n as u64 == (self.k - 1) as u64
    }
    /// How many ids in `lo..hi` this shard owns.
    pub fn owned_in(self, lo: u64, hi: u64) -> u64 {
        let (n, r) = (self.n as u64, (self.k - 1) as u64);
        // Ids <= x owned: those r + j n <= x.
        let upto = |x: u64| if x < r { 0 } else { (x - r) / n + 1 };
        if hi <= lo {
            return 0;
        }
        upto(hi - 1) - if lo == 0 { 0 } else { upto(lo - 1) }
    }
    /// The first id >= `lo` this shard owns (None past `u64::MAX`).
    pub fn first_owned(self, lo: u64) -> Option<u64> {
        let (n, r) = (self.n as u64, (self.k - 1) as u64);
        let off = (r + n - lo % n) % n;
        lo.checked_add(off)
    }
}

impl Shard {
    /// Shard `k` of `n` (`1 <= k <= n`), as the values `K/N` names.
    pub fn new(k: u32, n: u32) -> Result<Shard, shard::ShardError> {
        if k == 0 || n == 0 || k > n {
            return Err(shard::ShardError::Syntax(format!("{k}/{n}")));
        }
        Ok(Shard { k, n })
    }
}

impl FromStr for Shard {
    type Err = shard::ShardError;
    fn from_str(s: &str) -> Result<Shard, shard::ShardError> {
        let err = || shard::ShardError::Syntax(s.into());
        let (k, n) = s.split_once('/').ok_or_else(err)?;
        let k: u32 = k.trim().parse().map_err(|_| err())?;
        let n: u32 = n.trim().parse().map_err(|_| err())?;
        Shard::new(k, n).map_err(|_| err())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// What defines a sweep's results (everything but threads, output folder and shard).
#[derive(Debug, Clone)]
pub struct SweepSpec {
    /// The recipe every grid point starts from, before the `--vary` values are set.
    pub base: Recipe,
    /// The `--vary` axes, in order: the grid is their cartesian product, last axis fastest.
    pub varies: Vec<Vary>,
    /// The seeds every grid point runs (half-open, at least one).
    pub seeds: Range<u64>,
    /// The gate (`--gate`, with any named gates) each cave is tested against.
    pub gate: Gate,
    /// The metrics requested (`--metrics`): the statistics' and rows' columns.
    pub metrics: MetricSet,
    /// Which caves get a row in `seeds.csv`.
    pub per_seed: PerSeed,
    /// Seeds per chunk; `None` picks [`default_chunk`].
    pub chunk: Option<u64>,
    /// The tables' file format (`--format`): CSV, Parquet or both. Part of the definition (and
    /// of the fingerprint when not CSV) because it decides which files the folder holds: a
    /// rerun with another format is another sweep, and `merge` writes what the shards wrote.
    pub format: Format,
}

/// The largest `--chunk` (of sweeps and searches): a chunk is the unit of work and of
/// persistence, so its `seeds.csv` rows are held until it is done; capped, memory stays within
/// a constant per worker whatever the flag (`--chunk 1000000000` grew by 45 MB/s). Four times
/// the largest default chunk.
pub const MAX_CHUNK: u64 = 65_536;

/// Seeds per chunk when not given. About 64 chunks in all (so a small sweep still spreads over
/// cores and a big one checkpoints every few milliseconds of work per chunk) but never less than
/// one chunk per grid point: a grid's points give the parallelism, and a chunk of a whole point
/// avoids paying per-chunk costs many times per point. Between 64 and 16384 seeds (fewer only
/// when a point has fewer seeds). Depends on the sweep's definition only.
pub fn default_chunk(seeds: u64, points: usize) -> u64 {
    let per_point = 64u64.div_ceil(points.max(1) as u64);
    seeds.div_ceil(per_point).clamp(64, 16_384)
}

/// One grid point: its parameter values (as given to `--vary`) and its recipe.
#[derive(Debug, Clone)]
pub struct PlanPoint {
    /// The value of each varied key at this point, as given to `--vary`, in axis order.
    pub params: Vec<String>,
    /// The base recipe with those values set.
    pub recipe: Recipe,
}

/// A sweep cut into chunks. See the module docs. Grid points are not stored: a point's values
/// and recipe are computed from its index when it is run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The sweep's definition.
    pub spec: SweepSpec,
    n_points: usize,
    /// Metrics computed: the requested ones plus those the gate reads.
    pub computed: MetricSet,
    /// Seeds per chunk (the last chunk of a point may have fewer).
    pub chunk: u64,
    /// Chunks each grid point is cut into (every point has the same count).
    pub chunks_per_point: u64,
}

/// The largest chunk count a sweep may have (chunk ids are stored as SQLite integers).
const MAX_CHUNKS: u64 = i64::MAX as u64;

impl Plan {
    /// Check every grid point's recipe (each override validated) and cut the sweep into chunks.
    pub fn new(spec: SweepSpec) -> Result<Plan, SweepError> {
        let n_points = vary::point_count(&spec.varies)?;
        let n = spec.seeds.end - spec.seeds.start;
        n.checked_mul(n_points as u64)
            .ok_or_else(|| SweepError::TooManyCaves {
                points: n_points,
                seeds: n,
            })?;
        let chunk = spec.chunk.unwrap_or_else(|| default_chunk(n, n_points));
        if chunk == 0 || chunk > MAX_CHUNK {
            return Err(SweepError::Chunk);
        }
        let chunks_per_point = n.div_ceil(chunk);
        if chunks_per_point
            .checked_mul(n_points as u64)
            .is_none_or(|c| c > MAX_CHUNKS)
        {
            return Err(SweepError::TooManyChunks(chunk));
        }
        let computed = spec.metrics.union(spec.gate.metrics());
        let plan = Plan {
            spec,
            n_points,
            computed,
            chunk,
            chunks_per_point,
        };
        for p in 0..n_points {
            plan.try_recipe(p)?;
        }
        Ok(plan)
    }

    fn try_recipe(&self, point: usize) -> Result<Recipe, SweepError> {
        let mut recipe = self.spec.base.clone();
        let values: Vec<String> = (0..self.spec.varies.len())
            .map(|i| self.spec.varies[i].value(axis_index(&self.spec.varies, point, i)))
            .collect();
        // The point's values together, validated once (no order between axes).
        recipe
            .set_many(
                self.spec
                    .varies
                    .iter()
                    .zip(&values)
                    .map(|(v, x)| (v.key.as_str(), x.as_str())),
            )
            .map_err(|source| SweepError::Point {
                point: self
                    .spec
                    .varies
                    .iter()
                    .zip(&values)
                    .map(|(v, x)| format!("{}={x}", v.key))
                    .collect::<Vec<_>>()
                    .join(" "),
                source,
            })?;
        Ok(recipe)
    }

    /// Number of grid points.
    pub fn n_points(&self) -> usize {
        self.n_points
    }

    /// Number of chunks in all shards.
    pub fn n_chunks(&self) -> u64 {
        self.chunks_per_point * self.n_points as u64
    }

    /// Seeds per grid point.
    pub fn n_seeds(&self) -> u64 {
        self.spec.seeds.end - self.spec.seeds.start
    }

    /// Caves in the whole sweep (fits: checked by [`Plan::new`]).
    pub fn n_caves(&self) -> u64 {
        self.n_seeds() * self.n_points as u64
    }

    /// The parameter values of grid point `point`.
    pub fn params(&self, point: usize) -> Vec<String> {
        vary::params(&self.spec.varies, point)
    }

    /// The recipe of grid point `point` (validated by [`Plan::new`]).
    pub fn recipe(&self, point: usize) -> Recipe {
        self.try_recipe(point)
            .expect("grid point recipes are validated by Plan::new")
    }

    /// Grid point `point`: values and recipe.
    pub fn point(&self, point: usize) -> PlanPoint {
        PlanPoint {
            params: self.params(point),
            recipe: self.recipe(point),
        }
    }

    /// The statistics shape of grid point `point`.
    pub fn shape(&self, point: usize) -> Shape {
        Shape {
            metrics: self.computed,
            clauses: self.spec.gate.clauses().len(),
            named: self.spec.gate.named().len(),
            steps: self.trajectory_len(point),
        }
    }

    /// Wall-fraction samples per cave at grid point `point`.
    pub fn trajectory_len(&self, point: usize) -> usize {
        // Only varied keys can change it; skip building the recipe when none of them can.
        if self
            .spec
            .varies
            .iter()
            .any(|v| matches!(v.key.as_str(), "steps" | "post"))
        {
            self.recipe(point).trajectory_len()
        } else {
            self.spec.base.trajectory_len()
        }
    }

    /// The fill probability of grid point `q` when its recipe is grid point `point`'s but for
    /// the value of a varied `fill` (every other axis has the same value at both points), so
    /// that a Bernoulli fill of `point` becomes a Bernoulli fill with this probability at `q`
    /// (the same keys are set in the same order, only `fill`'s value differs). `None` when
    /// another axis differs or `fill` is not varied; the recipes must then be compared.
    pub fn fill_only_change(&self, point: usize, q: usize) -> Option<f64> {
        let varies = &self.spec.varies;
        let k = varies.iter().position(|v| v.key == "fill")?;
        for i in 0..varies.len() {
            if i != k && axis_index(varies, point, i) != axis_index(varies, q, i) {
                return None;
            }
        }
        // Parsed as `Recipe::set` parses it.
        varies[k].value(axis_index(varies, q, k)).parse().ok()
    }

    /// The grid point and seed range of chunk `id` (point-major, seeds ascending).
    pub fn chunk(&self, id: u64) -> (usize, Range<u64>) {
        let point = (id / self.chunks_per_point) as usize;
        let k = id % self.chunks_per_point;
        (point, self.chunk_seeds(k))
    }

    /// The seeds of the `k`-th chunk of a point.
    pub fn chunk_seeds(&self, k: u64) -> Range<u64> {
        // k * chunk < n <= u64::MAX - start: no overflow.
        let start = self.spec.seeds.start + k * self.chunk;
        let len = (self.spec.seeds.end - start).min(self.chunk);
        start..start + len
    }

    /// The chunk ids of grid point `point`.
    pub fn point_chunks(&self, point: usize) -> Range<u64> {
        let a = point as u64 * self.chunks_per_point;
        a..a + self.chunks_per_point
    }

    /// The final files this sweep writes (its shards too), in [`state::OUTPUTS`] order:
    /// the tables in its format (`seeds` only with per-seed rows), then `manifest.json`.
    pub fn outputs(&self) -> Vec<&'static str> {
        state::OUTPUTS
            .iter()
            .copied()
            .filter(|n| {
                let (stem, ext) = n.rsplit_once('.').expect("names have extensions");
                match ext {
                    "csv" if !self.spec.format.csv() => false,
                    "parquet" if !self.spec.format.parquet() => false,
                    _ => stem != "seeds" || self.spec.per_seed != PerSeed::None,
                }
            })
            .collect()
    }

    /// The varied keys (the parameter columns).
    pub fn param_names(&self) -> Vec<&str> {
        self.spec.varies.iter().map(|v| v.key.as_str()).collect()
    }

    /// A canonical description of everything that determines the results. Two runs with the
    /// same fingerprint write the same bytes.
    /// Named gates appear (as `"gates": ["NAME=EXPR", ...]`) only when there are some, so the
    /// fingerprint of a sweep without them is what it was before named gates existed.
    pub fn fingerprint(&self) -> serde_json::Value {
        let mut fp = serde_json::json!({
            "recipe": self.spec.base.to_toml(),
            "vary": self.spec.varies.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            "seeds": format!("{}..{}", self.spec.seeds.start, self.spec.seeds.end),
            "gate": self.spec.gate.to_string(),
            "metrics": self.spec.metrics.to_string(),
            "per_seed": self.spec.per_seed.to_string(),
            "chunk": self.chunk,
        });
        // Only when not CSV: the fingerprint of a CSV sweep is what it was before Parquet.
        if self.spec.format != Format::Csv {
            fp["format"] = self.spec.format.to_string().into();
        }
        let named = self.spec.gate.named();
        if !named.is_empty() {
            fp["gates"] = named
                .iter()
                .map(|(n, e)| format!("{n}={e}"))
                .collect::<Vec<_>>()
                .into();
        }
        fp
    }

    /// Rebuild the plan a fingerprint describes (used by `merge`).
    pub fn from_fingerprint(fp: &serde_json::Value) -> Result<Plan, SweepError> {
        let bad = |why: String| SweepError::Definition { dir: None, why };
        let s = |k: &str| {
            fp.get(k)
                .and_then(|v| v.as_str())
                .ok_or_else(|| bad(format!("no {k:?}")))
        };
        let base = Recipe::from_toml(s("recipe")?).map_err(|e| bad(e.to_string()))?;
        let varies = fp
            .get("vary")
            .and_then(|v| v.as_array())
            .ok_or_else(|| bad("no \"vary\"".into()))?
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| bad("a vary entry is not text".into()))?
                    .parse::<Vary>()
                    .map_err(|e| bad(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let qerr = |e: cavesweep_core::query::QueryError| bad(e.to_string());
        let mut args: Vec<cavesweep_core::query::GateArg> = match s("gate")? {
            "" => Vec::new(),
            g => vec![g.parse().map_err(qerr)?],
        };
        if let Some(named) = fp.get("gates") {
            for g in named
                .as_array()
                .ok_or_else(|| bad("\"gates\" is not a list".into()))?
            {
                let g: cavesweep_core::query::GateArg = g
                    .as_str()
                    .ok_or_else(|| bad("a named gate is not text".into()))?
                    .parse()
                    .map_err(qerr)?;
                if g.name.is_none() {
                    return Err(bad(format!("named gate {g} has no name")));
                }
                args.push(g);
            }
        }
        let gate = Gate::new(args).map_err(qerr)?;
        let spec = SweepSpec {
            base,
            varies,
            seeds: parse_seeds(s("seeds")?)?,
            gate,
            metrics: s("metrics")?
                .parse::<MetricSet>()
                .map_err(|e| bad(e.to_string()))?,
            per_seed: s("per_seed")?.parse::<PerSeed>()?,
            chunk: fp.get("chunk").and_then(|c| c.as_u64()),
            format: match fp.get("format") {
                None => Format::Csv,
                Some(f) => f
                    .as_str()
                    .ok_or_else(|| bad("\"format\" is not text".into()))?
                    .parse()
                    .map_err(|e: crate::store::table::FormatError| bad(e.to_string()))?,
            },
        };
        let plan = Plan::new(spec)?;
        let mut rebuilt = plan.fingerprint();
        if fp.get("chunk").is_none() {
            // A table's definition ([`Plan::table_definition`]): any chunking writes its bytes.
            rebuilt.as_object_mut().map(|o| o.remove("chunk"));
        }
        if &rebuilt != fp {
            return Err(bad("it does not rebuild the same sweep".into()));
        }
        Ok(plan)
    }

    /// The fingerprint without the chunk size, which changes no byte of the tables: what a
    /// Parquet table's metadata records (so the table is byte-identical whatever `--chunk`),
    /// and what [`Plan::from_fingerprint`] rebuilds a plan from (with the default chunking).
    pub fn table_definition(&self) -> serde_json::Value {
        let mut fp = self.fingerprint();
        fp.as_object_mut().map(|o| o.remove("chunk"));
        fp
    }
}

/// The index into axis `axis` of grid point `point`.
fn axis_index(varies: &[Vary], point: usize, axis: usize) -> usize {
    let inner: usize = varies[axis + 1..].iter().map(Vary::len).product();
    (point / inner) % varies[axis].len()
}

/// A short human description of a recorded sweep (for "folder holds a different sweep").
pub fn describe_fingerprint(fp: &serde_json::Value) -> String {
    let get = |k: &str| fp.get(k).map(|v| v.to_string()).unwrap_or_default();
    let name = fp
        .get("recipe")
        .and_then(|r| r.as_str())
        .and_then(|r| r.lines().find(|l| l.starts_with("name")))
        .unwrap_or("name = ?")
        .to_string();
    let named = match fp.get("gates") {
        Some(g) => format!(", named gates {g}"),
        None => String::new(),
    };
    format!(
        "{name}, seeds {}, vary {}, gate {}{named}",
        get("seeds"),
        get("vary"),
        get("gate")
    )
}

/// How a sweep run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every chunk of this shard is done and the final files are written and recorded.
    Complete,
    /// Stopped by the stop flag; the store holds everything finished.
    Interrupted,
}

/// How a run is carried out (none of it changes the results).
pub struct RunOptions<'a> {
    /// Which shard of the sweep this process runs ([`Shard::WHOLE`] for all of it).
    pub shard: Shard,
    /// Worker threads for the chunks.
    pub threads: usize,
    /// Replace the cavesweep files of another sweep in the folder.
    pub force: bool,
    /// The command recorded in the folder when it is created (see `manifest.json`).
    pub command: &'a str,
    /// Raised (e.g. by Ctrl-C) to stop after the chunks in flight, with a checkpoint.
    pub stop: &'a std::sync::atomic::AtomicBool,
}

/// What a sweep run did, for the final report line.
#[derive(Debug, Clone)]
pub struct SweepSummary {
    /// Whether this shard's work is finished or was stopped.
    pub outcome: Outcome,
    /// Caves generated by this run (resumed work and repairs excluded).
    pub seeds_run: u64,
    /// Caves done by this shard in all, and its total.
    pub seeds_done: u64,
    /// Caves this shard has to do in all.
    pub seeds_total: u64,
    /// Caves of this shard that passed the gate so far (resumed work included).
    pub passed: u64,
    /// Wall-clock time of this run.
    pub elapsed: std::time::Duration,
    /// The folder was already complete and its files matched their records.
    pub verified: bool,
    /// What was found damaged and redone (one line each).
    pub repairs: Vec<String>,
}

/// Run (or resume, or verify) a sweep into `out`. `progress(done, total)` is called as chunks
/// finish.
pub fn run(
    plan: &Plan,
    out: &std::path::Path,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SweepSummary, SweepError> {
    state::SweepState::open(plan, out, opts)?.run(opts, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cavesweep_core::presets::preset;

    fn spec(seeds: Range<u64>, varies: &[&str]) -> SweepSpec {
        SweepSpec {
            base: preset("chapter-strict").unwrap(),
            varies: varies.iter().map(|v| v.parse().unwrap()).collect(),
            seeds,
            gate: Gate::default(),
            metrics: MetricSet::ALL,
            per_seed: PerSeed::Kept,
            chunk: None,
            format: Format::Csv,
        }
    }

    #[test]
    fn chunks_cover_every_seed_once() {
        let plan = Plan::new(spec(10..1000, &["fill=0.4,0.5"])).unwrap();
        assert_eq!(plan.chunk, 64);
        let mut seen = vec![0u32; 2 * 990];
        for id in 0..plan.n_chunks() {
            let (p, r) = plan.chunk(id);
            for s in r {
                seen[p * 990 + (s - 10) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        // A grid gets one chunk per point when it has enough points.
        let grid = Plan::new(spec(0..1000, &["fill=0.30:0.70:0.01", "steps=1..=25"])).unwrap();
        assert_eq!(
            (grid.n_points(), grid.chunk, grid.chunks_per_point),
            (1025, 1000, 1)
        );
        assert_eq!(grid.params(26), ["0.31", "2"]);
        assert_eq!(grid.trajectory_len(26), 3);
    }

    /// `fill_only_change` says `Some(p)` only when the recipe of `q` is that of `point` with
    /// the fill probability `p` (checked against the recipes themselves), for grids where fill
    /// is the first, last or only axis, with floor and steps axes around it.
    #[test]
    fn fill_only_change_agrees_with_the_recipes() {
        use cavesweep_core::recipe::Fill;
        for varies in [
            &["fill=0.40:0.60:0.05", "steps=1..=3"][..],
            &["steps=1..=3", "fill=0.40:0.60:0.05"],
            &["fill=0.40:0.60:0.01"],
            &["floor=100,200", "fill=0.4,0.5"],
            &["fill=0.4,0.5", "floor=100,200"],
            &["steps=2,3"],
        ] {
            let plan = Plan::new(spec(0..10, varies)).unwrap();
            let n = plan.n_points();
            let mut some = 0;
            for point in 0..n {
                let base = plan.recipe(point);
                for q in 0..n {
                    let Some(p) = plan.fill_only_change(point, q) else {
                        continue;
                    };
                    let mut want = base.clone();
                    if let Fill::Bernoulli { .. } = want.fill {
                        want.fill = Fill::Bernoulli { p };
                        assert_eq!(plan.recipe(q), want, "{varies:?} {point} {q}");
                        some += 1;
                    }
                }
            }
            // With a floor axis the fill is an exact count, never Bernoulli.
            let has = |k: &str| varies.iter().any(|v| v.starts_with(k));
            assert_eq!(some > 0, has("fill=") && !has("floor="), "{varies:?}");
        }
    }

    #[test]
    fn seeds_reach_u64_max_without_overflow() {
        let max = u64::MAX;
        let plan = Plan::new(spec(max - 615..max, &[])).unwrap();
        let total: u64 = (0..plan.n_chunks())
            .map(|id| {
                let r = plan.chunk(id).1;
                r.end - r.start
            })
            .sum();
        assert_eq!(total, 615);
        assert_eq!(plan.chunk(plan.n_chunks() - 1).1.end, max);
        let one = Plan::new(spec(max - 1..max, &[])).unwrap();
        assert_eq!(one.chunk(0).1, max - 1..max);
        let all = Plan::new(spec(0..max, &[])).unwrap();
        assert_eq!(all.chunk, 16_384);
        assert_eq!(all.chunk(all.n_chunks() - 1).1.end, max);
        assert!(Plan::new(spec(0..max, &["fill=0.4,0.5"])).is_err());
    }

    #[test]
    fn seed_ranges_parse() {
        assert!(parse_seeds("5..5").is_err() && parse_seeds("a..3").is_err());
        assert_eq!(parse_seeds("0..200").unwrap(), 0..200);
        assert_eq!(parse_seeds("0..=199").unwrap(), 0..200);
        assert_eq!(parse_seeds("0..1e12").unwrap(), 0..1_000_000_000_000);
        let top = parse_seeds("5..=18446744073709551615")
            .unwrap_err()
            .to_string();
        assert!(
            top.contains("largest seed is 18446744073709551614"),
            "{top}"
        );
        assert_eq!(parse_seeds("1_000..2_000").unwrap(), 1000..2000);
        assert_eq!(parse_seeds("0..18446744073709551615").unwrap(), 0..u64::MAX);
        assert!(parse_seeds("0..=18446744073709551615").is_err());
        assert!(parse_seeds("0..18446744073709551616").is_err());
        assert!(parse_seeds("0..1e20").is_err() && parse_seeds("0..1.5e3").is_err());
    }

    #[test]
    fn bad_points_name_the_key() {
        let e = Plan::new(spec(0..10, &["fill=0.4,1.5"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("fill=1.5"), "{e}");
        assert!("0/2".parse::<Shard>().is_err() && "3/2".parse::<Shard>().is_err());
        let s: Shard = "2/3".parse().unwrap();
        assert!(s.owns(1) && s.owns(4) && !s.owns(0));
    }

    #[test]
    fn shard_ownership_counts_match_a_scan() {
        for n in 1..6u32 {
            for k in 1..=n {
                let s = Shard { k, n };
                for lo in 0..20u64 {
                    for hi in lo..30u64 {
                        let scan = (lo..hi).filter(|&i| s.owns(i)).count() as u64;
                        assert_eq!(s.owned_in(lo, hi), scan, "{s} {lo}..{hi}");
                    }
                    let first = (lo..).find(|&i| s.owns(i)).unwrap();
                    assert_eq!(s.first_owned(lo), Some(first));
                }
            }
        }
        assert_eq!(Shard { k: 1, n: 2 }.first_owned(u64::MAX), None);
    }
}
