//! Sweeps: millions of (grid point x seed) caves, reduced on the fly to statistics.
//!
//! - [`vary`]: `--vary` axes and their cartesian product;
//! - [`Plan`]: the fixed list of chunks (grid point, seed range) a sweep is cut into. The cut
//!   depends only on the sweep's definition, never on the thread count, so chunk ids name the
//!   same work in every run, resume and shard;
//! - [`stats`]: the exactly mergeable collector;
//! - [`store`]: the output folder: checkpoints, per-chunk seed rows, resume, shards and merge;
//! - [`output`]: the CSV files;
//! - [`engine`]: rayon fan-out over chunks with a single collecting thread.

pub mod engine;
pub mod output;
pub mod stats;
pub mod store;
pub mod vary;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::measure::MetricSet;
use crate::query::Gate;
use crate::recipe::{Recipe, RecipeError};
use vary::{Vary, VaryError};

/// Why a sweep could not be planned or run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Vary(#[from] VaryError),
    #[error("grid point {point}: {source}")]
    Point { point: String, source: RecipeError },
    #[error("--seeds {0:?}: expected A..B with A < B (half-open: 0..200 is 200 seeds)")]
    Seeds(String),
    #[error("--shard {0:?}: expected K/N with 1 <= K <= N")]
    Shard(String),
    #[error("--per-seed {0:?}: expected all, kept or none")]
    PerSeed(String),
    #[error("--chunk must be at least 1")]
    Chunk,
    #[error("{0}")]
    Store(String),
}

/// Which caves get a row in `seeds.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerSeed {
    All,
    Kept,
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

/// `A..B`, half-open.
pub fn parse_seeds(s: &str) -> Result<Range<u64>, SweepError> {
    let err = || SweepError::Seeds(s.into());
    let (a, b) = s.split_once("..").ok_or_else(err)?;
    let a: u64 = a.trim().parse().map_err(|_| err())?;
    let b: u64 = b.trim().parse().map_err(|_| err())?;
    if a >= b {
        return Err(err());
    }
    Ok(a..b)
}

/// `K/N`: this machine runs shard K (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl Shard {
    pub const WHOLE: Shard = Shard { k: 1, n: 1 };
    /// Whether chunk `id` belongs to this shard (round robin, so every shard gets a share of
    /// every grid point).
    pub fn owns(self, id: usize) -> bool {
        id % self.n as usize == (self.k - 1) as usize
    }
}

impl FromStr for Shard {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<Shard, SweepError> {
        let err = || SweepError::Shard(s.into());
        let (k, n) = s.split_once('/').ok_or_else(err)?;
        let k: u32 = k.trim().parse().map_err(|_| err())?;
        let n: u32 = n.trim().parse().map_err(|_| err())?;
        if k == 0 || n == 0 || k > n {
            return Err(err());
        }
        Ok(Shard { k, n })
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
    pub base: Recipe,
    pub varies: Vec<Vary>,
    pub seeds: Range<u64>,
    pub gate: Gate,
    pub metrics: MetricSet,
    pub per_seed: PerSeed,
    /// Seeds per chunk; `None` picks [`default_chunk`].
    pub chunk: Option<u64>,
}

/// Seeds per chunk when not given: about 64 chunks per grid point, between 64 and 16384
/// seeds, so small sweeps still spread over cores and big ones checkpoint every few
/// milliseconds of work per chunk. Depends on the seed count only.
pub fn default_chunk(seeds: u64) -> u64 {
    (seeds / 64).clamp(64, 16_384)
}

/// One grid point: its parameter values (as given to `--vary`) and its recipe.
#[derive(Debug, Clone)]
pub struct PlanPoint {
    pub params: Vec<String>,
    pub recipe: Recipe,
}

/// A sweep cut into chunks. See the module docs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub spec: SweepSpec,
    pub points: Vec<PlanPoint>,
    /// Metrics computed: the requested ones plus those the gate reads.
    pub computed: MetricSet,
    pub chunk: u64,
    pub chunks_per_point: usize,
}

impl Plan {
    /// Build every grid point's recipe (each override validated) and the chunking.
    pub fn new(spec: SweepSpec) -> Result<Plan, SweepError> {
        let points = vary::grid_points(&spec.varies)?
            .into_iter()
            .map(|params| {
                let mut recipe = spec.base.clone();
                for (v, value) in spec.varies.iter().zip(&params) {
                    recipe
                        .set(&v.key, value)
                        .map_err(|source| SweepError::Point {
                            point: format!("{}={value}", v.key),
                            source,
                        })?;
                }
                Ok(PlanPoint { params, recipe })
            })
            .collect::<Result<Vec<_>, SweepError>>()?;
        let n = spec.seeds.end - spec.seeds.start;
        let chunk = spec.chunk.unwrap_or_else(|| default_chunk(n));
        if chunk == 0 {
            return Err(SweepError::Chunk);
        }
        let chunks_per_point = n.div_ceil(chunk) as usize;
        let computed = spec.metrics.union(spec.gate.metrics());
        Ok(Plan {
            spec,
            points,
            computed,
            chunk,
            chunks_per_point,
        })
    }

    pub fn n_chunks(&self) -> usize {
        self.points.len() * self.chunks_per_point
    }

    pub fn n_seeds(&self) -> u64 {
        self.spec.seeds.end - self.spec.seeds.start
    }

    /// The grid point and seed range of chunk `id` (point-major, seeds ascending).
    pub fn chunk(&self, id: usize) -> (usize, Range<u64>) {
        let point = id / self.chunks_per_point;
        let k = (id % self.chunks_per_point) as u64;
        let start = self.spec.seeds.start + k * self.chunk;
        let end = (start + self.chunk).min(self.spec.seeds.end);
        (point, start..end)
    }

    /// The varied keys (the parameter columns).
    pub fn param_names(&self) -> Vec<&str> {
        self.spec.varies.iter().map(|v| v.key.as_str()).collect()
    }

    /// A canonical description of everything that determines the results. Two runs with the
    /// same fingerprint write the same bytes.
    pub fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({
            "recipe": self.spec.base.to_toml(),
            "vary": self.spec.varies.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            "seeds": format!("{}..{}", self.spec.seeds.start, self.spec.seeds.end),
            "gate": self.spec.gate.to_string(),
            "metrics": self.spec.metrics.to_string(),
            "per_seed": self.spec.per_seed.to_string(),
            "chunk": self.chunk,
        })
    }

    /// The command line that reproduces these results (threads and output folder aside).
    pub fn command(&self) -> String {
        let mut c = format!("cavesweep sweep --preset {}", self.spec.base.name);
        for v in &self.spec.varies {
            c.push_str(&format!(" --vary '{v}'"));
        }
        c.push_str(&format!(
            " --seeds {}..{}",
            self.spec.seeds.start, self.spec.seeds.end
        ));
        if !self.spec.gate.clauses().is_empty() {
            c.push_str(&format!(" --gate '{}'", self.spec.gate));
        }
        c.push_str(&format!(
            " --metrics {} --per-seed {} --chunk {}",
            self.spec.metrics, self.spec.per_seed, self.chunk
        ));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;

    fn spec(seeds: Range<u64>, varies: &[&str]) -> SweepSpec {
        SweepSpec {
            base: preset("chapter-strict").unwrap(),
            varies: varies.iter().map(|v| v.parse().unwrap()).collect(),
            seeds,
            gate: Gate::default(),
            metrics: MetricSet::ALL,
            per_seed: PerSeed::Kept,
            chunk: None,
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
    }

    #[test]
    fn bad_points_name_the_key() {
        let e = Plan::new(spec(0..10, &["fill=0.4,1.5"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("fill=1.5"), "{e}");
        assert!(parse_seeds("5..5").is_err() && parse_seeds("a..3").is_err());
        assert_eq!(parse_seeds("0..200").unwrap(), 0..200);
        assert!("0/2".parse::<Shard>().is_err() && "3/2".parse::<Shard>().is_err());
        let s: Shard = "2/3".parse().unwrap();
        assert!(s.owns(1) && s.owns(4) && !s.owns(0));
    }
}

/// A short human description of a recorded sweep (for "folder holds a different sweep").
fn output_summary(fp: &serde_json::Value) -> String {
    let get = |k: &str| fp.get(k).map(|v| v.to_string()).unwrap_or_default();
    let name = fp
        .get("recipe")
        .and_then(|r| r.as_str())
        .and_then(|r| r.lines().find(|l| l.starts_with("name")))
        .unwrap_or("name = ?")
        .to_string();
    format!(
        "{name}, seeds {}, vary {}, gate {}",
        get("seeds"),
        get("vary"),
        get("gate")
    )
}

/// How a sweep run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every chunk of this shard is done and the final files are written.
    Complete,
    /// Stopped by the stop flag; the checkpoint holds everything finished.
    Interrupted,
}

/// What a sweep run did, for the final report line.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    pub outcome: Outcome,
    /// Caves generated by this run (resumed work excluded).
    pub seeds_run: u64,
    /// Caves done by this shard in all, and its total.
    pub seeds_done: u64,
    pub seeds_total: u64,
    pub passed: u64,
    pub elapsed: std::time::Duration,
}

/// Run (or resume) a sweep into `out`. `progress(done, total)` is called after each chunk;
/// raising `stop` ends the run after the chunks in flight, with a checkpoint.
pub fn run(
    plan: &Plan,
    out: &std::path::Path,
    shard: Shard,
    threads: usize,
    force: bool,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report, SweepError> {
    let start = std::time::Instant::now();
    let mut store = store::Store::open(out, plan, shard, force)?;
    let before = store.seeds_done();
    let total = store.seeds_total();
    if store.is_complete() {
        // Nothing to do: the final files are already there (and the parts folded into them).
        return Ok(Report {
            outcome: Outcome::Complete,
            seeds_run: 0,
            seeds_done: before,
            seeds_total: total,
            passed: store.passed(),
            elapsed: start.elapsed(),
        });
    }
    progress(before, total);
    let pending = store.pending();
    engine::run_chunks(plan, &pending, threads.max(1), stop, |r| {
        store.add(r)?;
        progress(store.seeds_done(), total);
        Ok::<(), SweepError>(())
    })?;
    let outcome = if store.is_complete() {
        store.finish()?;
        Outcome::Complete
    } else {
        store.checkpoint()?;
        Outcome::Interrupted
    };
    Ok(Report {
        outcome,
        seeds_run: store.seeds_done() - before,
        seeds_done: store.seeds_done(),
        seeds_total: total,
        passed: store.passed(),
        elapsed: start.elapsed(),
    })
}
