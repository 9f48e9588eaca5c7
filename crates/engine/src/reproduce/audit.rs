//! The chapter's claims, audited: every checkable statement of the excerpt of "Generate Caves
//! from Noise" that `cavesweep reproduce chapter` knows, each measured by this run, with a
//! verdict, a concern, a priority and a proposed response (`audit.md` / `audit.html`; the
//! report crate renders them, Python returns [`Audit::claims`] as columns).
//!
//! Why in-process sweeps: every figure is a statistic of a [`Plan`] that `cavesweep sweep` can
//! run from the command written beside it, so the author can re-measure any row; running the
//! plan's chunks here (no folder, no store) keeps the whole audit within seconds, and the
//! statistics are the sweep's exact sums, so the numbers are those `summary.csv` holds whatever
//! the thread count.
//!
//! The flow is recipe -> generate -> measure -> collect: [`audit`] builds the plans, runs them,
//! and derives rows from their statistics; nothing here writes files.

mod claims;

use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use super::VariantRun;
use crate::sweep::engine::{ChunkStats, Mode, Worker, run_chunk};
use crate::sweep::stats::{PointStats, Summary};
use crate::sweep::vary::Vary;
use crate::sweep::{PerSeed, Plan, SweepError, SweepSpec};
use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{Metric, MetricSet};
use cavesweep_core::presets::preset;
use cavesweep_core::query::{Gate, GateArg};
use cavesweep_core::recipe::{Recipe, RecipeError};
use cavesweep_core::rng::RngKind;
use claims::{claims, experiments, sources};

/// Seeds of the chapter's search loop (`for seed in range(10_000)`): the failure rates, the
/// boundary and the cleanup experiments run over all of them.
pub const SEARCH_SEEDS: u64 = 10_000;
/// Seeds of the sensitivity grid: the chapter's own 200 per point.
pub const GRID_SEEDS: u64 = 200;
/// Thresholds of the sensitivity grid.
pub const THRESHOLDS: [u32; 5] = [3, 4, 5, 6, 7];
/// Steps of the sensitivity grid (1..=10).
pub const MAX_STEPS: u32 = 10;
/// The seed whose cave is pictured after every step.
pub const PICTURED_SEED: u64 = 42;
/// The exit the failure gates use. The chapter names a spawn (45, 70) but no exit; cavesweep
/// puts one near the far corner, inside the solid border, and says so wherever it is used.
pub const EXIT: (usize, usize) = (84, 134);

/// Why the audit could not be computed (one line).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A plan or recipe of the audit was refused (a bug: they are fixed).
    #[error("audit: {0}")]
    Sweep(#[from] SweepError),
    /// A recipe setting was refused.
    #[error("audit: {0}")]
    Recipe(#[from] RecipeError),
    /// A gate expression was refused.
    #[error("audit: {0}")]
    Query(String),
    /// Worker threads could not be started.
    #[error("{0}")]
    Threads(#[from] crate::fanout::ThreadsError),
    /// A cave could not be filled.
    #[error("audit: {0}")]
    Fill(String),
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The measurement agrees with the statement as written.
    Holds,
    /// True in substance, but a number or word in it is off or needs a qualifier.
    HoldsLoosely,
    /// The measurement disagrees with the statement.
    Contradicted,
    /// A judgement or a fact about a source this run cannot measure.
    NotCheckable,
}

impl Verdict {
    /// The verdict as the audit writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::HoldsLoosely => "holds loosely",
            Verdict::Contradicted => "contradicted",
            Verdict::NotCheckable => "not checkable here",
        }
    }
}

/// One row of the claim audit.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    /// `C1`, `C2`, ...: the id the checklist and findings refer to.
    pub id: String,
    /// The statement, quoted briefly or paraphrased from the excerpt.
    pub claim: String,
    /// Where in the excerpt it appears.
    pub location: String,
    /// The measured evidence (measured by this run unless the verdict is not checkable).
    pub evidence: String,
    /// The command that measures it again (a `cavesweep` command line).
    pub command: String,
    /// The verdict.
    pub verdict: Verdict,
    /// What is wrong or at risk, or `none`.
    pub concern: String,
    /// `high`, `medium` or `low`.
    pub priority: &'static str,
    /// `no change`, `clarify`, `correct` or `cite`, with a few words.
    pub response: String,
    /// The excerpt's current wording a proposal would replace (empty for no change).
    pub current: String,
    /// A concrete replacement sentence with the measured numbers (empty for no change).
    pub replacement: String,
}

/// The sensitivity grid: threshold x centre counted x steps, from a 45% fill.
#[derive(Debug, Clone)]
pub struct Sensitivity {
    /// The command that runs the same grid.
    pub command: String,
    /// `(threshold, centre counted, rule)` per row of the grid, in the plan's order.
    pub rules: Vec<(u32, bool, String)>,
    /// Mean final wall fraction per `(rule, steps)`: `wall[r][s - 1]`.
    pub wall: Vec<Vec<f64>>,
    /// Mean `connected_fraction` per `(rule, steps)`.
    pub connected: Vec<Vec<f64>>,
}

impl Sensitivity {
    /// Index of the rule row with `threshold` and `centre`.
    pub fn row(&self, threshold: u32, centre: bool) -> usize {
        self.rules
            .iter()
            .position(|r| r.0 == threshold && r.1 == centre)
            .unwrap_or(0)
    }
}

/// One failure of the chapter's list, as a gate, and how often each variant fails it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The chapter's words.
    pub name: &'static str,
    /// The gate's name in the sweep (`pass_rate[NAME]` is the failure rate).
    pub gate: &'static str,
    /// The gate expression: a cave *matching* it has the failure.
    pub expr: &'static str,
    /// Failure rate of chapter-strict and classic-4-5 over the search seeds.
    pub rates: [f64; 2],
}

/// A per-step wall fraction with its p05-p95 band, over the grid's seeds.
#[derive(Debug, Clone)]
pub struct Band {
    /// The variant.
    pub label: String,
    /// Mean per step, step 0 = after the fill.
    pub mean: Vec<f64>,
    /// 5th percentile per step.
    pub p05: Vec<f64>,
    /// 95th percentile per step.
    pub p95: Vec<f64>,
}

/// A comparison (variant x setting) of a few metric means.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The command that runs the same sweep.
    pub command: String,
    /// The settings compared (e.g. `outside=floor border=solid`), in the sweep's order.
    pub settings: Vec<String>,
    /// The metrics compared.
    pub metrics: Vec<Metric>,
    /// `means[variant][setting][metric]`.
    pub means: [Vec<Vec<f64>>; 2],
}

/// An experiment: run by this audit, or proposed and not run.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Its name.
    pub name: String,
    /// How it is (or would be) done.
    pub method: String,
    /// What would count as success.
    pub success: String,
    /// What would count as failure.
    pub failure: String,
    /// `None`: UNRUN. `Some(where)`: run by this audit, with where its results are.
    pub run: Option<String>,
}

/// A source of `docs/sources.md`, as the ledger lists it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The section of docs/sources.md.
    pub section: String,
    /// The source's title or name.
    pub title: String,
    /// What docs/sources.md says it holds (its first sentence).
    pub what: String,
    /// The claims it bears on (ids), or a word on why none.
    pub bears_on: String,
}

/// Everything the audit measured, ready to render.
#[derive(Debug, Clone)]
pub struct Audit {
    /// cavesweep's version (the audit's bytes depend on it only).
    pub version: &'static str,
    /// Seeds of the chapter's own runs (`--seeds`, 200 by default).
    pub seeds: u64,
    /// One row per checkable statement.
    pub claims: Vec<ClaimRow>,
    /// The sensitivity grid.
    pub grid: Sensitivity,
    /// The failure list as rates.
    pub failures: Vec<Failure>,
    /// The failure sweep's command.
    pub failures_command: String,
    /// Fully connected rate (connected_fraction >= 1) of both variants over the search seeds.
    pub fully_connected: [f64; 2],
    /// Fixed (outside FLOOR) against wrapped boundaries, with and without the solid border.
    pub boundaries: Comparison,
    /// Of the search seeds, how many give the very same final cave with fixed and wrapped
    /// boundaries under the chapter's solid border: strict, classic.
    pub boundary_identical: [u64; 2],
    /// Without and with keep-largest.
    pub keep_largest: Comparison,
    /// Of the 512 3x3 neighbourhoods, how many cavesweep's `B5678/S45678` steps as the 4-5 rule
    /// does, and how many `B5678/S5678` as the chapter's `>= 5 of 8`.
    pub equivalence: [u32; 2],
    /// Per-step wall fraction to [`MAX_STEPS`] with bands: strict, classic.
    pub bands: [Band; 2],
    /// Seed 42 after each step 0..=4: `[strict, classic]`, each a grid per step.
    pub pictured: [Vec<Grid>; 2],
    /// The recipes the pictures were made with (spawn and connectivity for their marks).
    pub pictured_recipes: [Recipe; 2],
    /// Experiments run and not run.
    pub experiments: Vec<Experiment>,
    /// The source ledger.
    pub sources: Vec<Source>,
}

/// The two variants, as preset names and short labels.
pub const VARIANTS: [(&str, &str); 2] = [
    ("chapter-strict", "strict (B5678/S5678)"),
    ("classic-4-5", "classic 4-5 (B5678/S45678)"),
];

/// The rule "WALL iff at least `t` WALL cells among the 8 neighbours" (`centre` false) or among
/// the 3x3 block including the cell (`centre` true), in Golly's notation.
pub fn threshold_rule(t: u32, centre: bool) -> String {
    let digits = |lo: u32| (lo..=8).map(|d| d.to_string()).collect::<String>();
    let survive = if centre { t.saturating_sub(1) } else { t };
    format!("B{}/S{}", digits(t), digits(survive))
}

fn numpy(name: &str) -> Result<Recipe, RecipeError> {
    let mut r = preset(name)?;
    r.rng = RngKind::Numpy;
    Ok(r)
}

fn gate(args: &[&str]) -> Result<Gate, AuditError> {
    let parsed: Result<Vec<GateArg>, _> = args.iter().map(|a| a.parse::<GateArg>()).collect();
    Gate::new(parsed.map_err(|e| AuditError::Query(e.to_string()))?)
        .map_err(|e| AuditError::Query(e.to_string()))
}

/// Run every chunk of `plan` in memory on `pool` and merge each grid point's statistics, in
/// chunk order (the sums are exact, so the order only fixes the work, not the numbers).
pub fn sweep_in_memory(plan: &Plan, pool: &rayon::ThreadPool) -> Vec<PointStats> {
    let stop = AtomicBool::new(false);
    let results: Vec<_> = pool.install(|| {
        (0..plan.n_chunks())
            .into_par_iter()
            .map_init(Worker::default, |w, id| {
                run_chunk(plan, id, w, &stop, Mode::Part)
            })
            .collect()
    });
    let mut stats: Vec<Option<PointStats>> = (0..plan.n_points()).map(|_| None).collect();
    for r in results.into_iter().flatten() {
        if let Some(ChunkStats::Part(s)) = r.stats {
            match &mut stats[r.point] {
                Some(acc) => acc.merge(&s),
                slot @ None => *slot = Some(s),
            }
        }
    }
    stats
        .into_iter()
        .enumerate()
        .map(|(p, s)| s.unwrap_or_else(|| PointStats::new(plan.shape(p))))
        .collect()
}

fn summary(st: &PointStats, m: Metric) -> Summary {
    match &st.metrics[m.index()] {
        Some(acc) => acc.summary(),
        None => Summary {
            n: 0,
            mean: f64::NAN,
            sd: f64::NAN,
            min: f64::NAN,
            p05: f64::NAN,
            p50: f64::NAN,
            p95: f64::NAN,
            max: f64::NAN,
        },
    }
}

fn spec(base: Recipe, varies: Vec<Vary>, seeds: u64, gate: Gate, metrics: &[Metric]) -> SweepSpec {
    SweepSpec {
        base,
        varies,
        seeds: 0..seeds,
        gate,
        metrics: metrics.iter().copied().collect(),
        per_seed: PerSeed::None,
        chunk: None,
        format: crate::sweep::Format::Csv,
    }
}

fn vary(key: &str, values: &[&str]) -> Result<Vary, AuditError> {
    Vary::list(key, values.iter().map(|s| s.to_string()).collect())
        .map_err(|e| AuditError::Sweep(SweepError::from(e)))
}

fn metric_names(ms: &[Metric]) -> String {
    ms.iter().map(|m| m.name()).collect::<Vec<_>>().join(",")
}

const BOTH_RULES: &str = "B5678/S5678,B5678/S45678";

/// The failures of the chapter's list, each a gate a failing cave matches.
const FAILURES: [(&str, &str, &str); 6] = [
    (
        "most floor disconnected",
        "most-floor-disconnected",
        "largest_fraction<0.5",
    ),
    (
        "spawn isolated",
        "spawn-isolated",
        "connected_fraction<0.05",
    ),
    ("exit unreachable", "exit-unreachable", "!(path_length>=0)"),
    (
        "tiny inaccessible pockets",
        "tiny-pockets",
        "components>=2 && largest_fraction>=0.9",
    ),
    (
        "too little floor",
        "too-little-floor",
        "floor_fraction<0.35",
    ),
    ("too much open space", "too-open", "floor_fraction>0.8"),
];

const FAILURE_METRICS: [Metric; 7] = [
    Metric::FloorFraction,
    Metric::Components,
    Metric::LargestFraction,
    Metric::ConnectedFraction,
    Metric::Boundary,
    Metric::PathLength,
    Metric::MinWidth,
];

/// Seed 42 after steps 0..=4 of `name`.
fn pictured(name: &str) -> Result<(Vec<Grid>, Recipe), AuditError> {
    let mut r = numpy(name)?;
    let mut grids = Vec::new();
    let mut g = Generator::new(&r, MetricSet::EMPTY)?;
    grids.push(
        g.fill(PICTURED_SEED)
            .map_err(|e| AuditError::Fill(e.to_string()))?
            .clone(),
    );
    for k in 1..=4 {
        r.set("steps", &k.to_string())?;
        g.set_recipe(r.clone(), MetricSet::EMPTY)?;
        let cave = g
            .run(PICTURED_SEED)
            .map_err(|e| AuditError::Fill(e.to_string()))?;
        grids.push(cave.grid.clone());
    }
    Ok((grids, r))
}

/// Of the search seeds, how many give the same final cave, cell for cell, with `outside=floor`
/// and `outside=wrap` (the chapter's solid border kept).
fn identical_with_wrap(name: &str, pool: &rayon::ThreadPool) -> Result<u64, AuditError> {
    let fixed = numpy(name)?;
    let mut wrapped = fixed.clone();
    wrapped.set("outside", "wrap")?;
    const PARTS: u64 = 10;
    let per = SEARCH_SEEDS.div_ceil(PARTS);
    let counts: Result<Vec<u64>, AuditError> = pool.install(|| {
        (0..PARTS)
            .into_par_iter()
            .map(|k| {
                let mut a = Generator::new(&fixed, MetricSet::EMPTY)?;
                let mut b = Generator::new(&wrapped, MetricSet::EMPTY)?;
                let mut same = 0;
                for seed in k * per..((k + 1) * per).min(SEARCH_SEEDS) {
                    let fill = |e: cavesweep_core::fill::FillError| AuditError::Fill(e.to_string());
                    let x = a.run(seed).map_err(fill)?.grid.to_bytes();
                    let y = b.run(seed).map_err(fill)?.grid.to_bytes();
                    same += (x == y) as u64;
                }
                Ok(same)
            })
            .collect()
    });
    Ok(counts?.iter().sum())
}

/// For each of the 512 states of a 3x3 block, step it once with cavesweep's kernels under
/// `rule` (outside FLOOR, no border) and count the blocks whose centre comes out as
/// `expected(walls among the 8 neighbours, centre)` says.
pub fn neighbourhoods_agreeing(
    rule: &str,
    expected: impl Fn(u32, bool) -> bool,
) -> Result<u32, AuditError> {
    let mut r = preset("chapter-strict")?;
    r.set_many([
        ("rows", "3"),
        ("cols", "3"),
        ("rule", rule),
        ("steps", "1"),
        ("border", "none"),
    ])?;
    let mut g = Generator::new(&r, MetricSet::EMPTY)?;
    let mut agree = 0;
    for mask in 0u32..512 {
        let mut start = Grid::new(3, 3).map_err(|e| AuditError::Fill(e.to_string()))?;
        for i in 0..9 {
            start.set(i / 3, i % 3, mask >> i & 1 == 1);
        }
        let centre = mask >> 4 & 1 == 1;
        let neighbours = (mask & !(1 << 4)).count_ones();
        let cave = g
            .run_from(&start, 0)
            .map_err(|e| AuditError::Fill(e.to_string()))?;
        if cave.grid.get(1, 1) == expected(neighbours, centre) {
            agree += 1;
        }
    }
    Ok(agree)
}

fn f4(v: f64) -> String {
    format!("{v:.4}")
}

fn pct(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

/// The sensitivity grid (threshold x centre x steps) and the wall-fraction bands of the
/// chapter's two rules from it.
fn sensitivity(
    base: &Recipe,
    pool: &rayon::ThreadPool,
) -> Result<(Sensitivity, [Band; 2]), AuditError> {
    let mut rules = Vec::new();
    for centre in [false, true] {
        for t in THRESHOLDS {
            rules.push((t, centre, threshold_rule(t, centre)));
        }
    }
    let rule_list: Vec<&str> = rules.iter().map(|r| r.2.as_str()).collect();
    let grid_metrics = [Metric::WallFraction, Metric::ConnectedFraction];
    let grid_plan = Plan::new(spec(
        base.clone(),
        vec![
            vary("rule", &rule_list)?,
            Vary::ints("steps", 1, MAX_STEPS as i64 + 1)
                .map_err(|e| AuditError::Sweep(SweepError::from(e)))?,
        ],
        GRID_SEEDS,
        Gate::default(),
        &grid_metrics,
    ))?;
    let grid_stats = sweep_in_memory(&grid_plan, pool);
    let n_steps = MAX_STEPS as usize;
    let at = |r: usize, s: usize| &grid_stats[r * n_steps + s - 1];
    let grid = Sensitivity {
        command: format!(
            "{BASE} --vary rule={} --vary steps=1..={MAX_STEPS} --seeds 0..{GRID_SEEDS} \
             --metrics {} --per-seed none --out sensitivity",
            rule_list.join(","),
            metric_names(&grid_metrics)
        ),
        wall: (0..rules.len())
            .map(|r| {
                (1..=n_steps)
                    .map(|s| summary(at(r, s), Metric::WallFraction).mean)
                    .collect()
            })
            .collect(),
        connected: (0..rules.len())
            .map(|r| {
                (1..=n_steps)
                    .map(|s| summary(at(r, s), Metric::ConnectedFraction).mean)
                    .collect()
            })
            .collect(),
        rules,
    };
    let band = |r: usize, label: &str| {
        let st = at(r, n_steps);
        let s: Vec<Summary> = st.trajectory.iter().map(|a| a.summary()).collect();
        Band {
            label: label.to_string(),
            mean: s.iter().map(|x| x.mean).collect(),
            p05: s.iter().map(|x| x.p05).collect(),
            p95: s.iter().map(|x| x.p95).collect(),
        }
    };
    let bands = [
        band(grid.row(5, false), VARIANTS[0].1),
        band(grid.row(5, true), VARIANTS[1].1),
    ];

    Ok((grid, bands))
}

/// The chapter's failure list as rates over the search loop's seeds, both rules; the
/// fully-connected rate; the command that measures them.
fn failure_rates(
    base: &Recipe,
    pool: &rayon::ThreadPool,
) -> Result<(Vec<Failure>, [f64; 2], String), AuditError> {
    let mut fail_base = base.clone();
    fail_base.set("exit", &format!("{},{}", EXIT.0, EXIT.1))?;
    let mut gate_args: Vec<String> = FAILURES
        .iter()
        .map(|(_, n, e)| format!("{n}={e}"))
        .collect();
    gate_args.push("fully-connected=connected_fraction>=1".into());
    let gate_refs: Vec<&str> = gate_args.iter().map(String::as_str).collect();
    let fail_plan = Plan::new(spec(
        fail_base,
        vec![vary("rule", &["B5678/S5678", "B5678/S45678"])?],
        SEARCH_SEEDS,
        gate(&gate_refs)?,
        &FAILURE_METRICS,
    ))?;
    let fail_stats = sweep_in_memory(&fail_plan, pool);
    let rate = |v: usize, j: usize| {
        let st = &fail_stats[v];
        st.named[j] as f64 / st.seeds.max(1) as f64
    };
    let failures: Vec<Failure> = FAILURES
        .iter()
        .enumerate()
        .map(|(j, &(name, gate, expr))| Failure {
            name,
            gate,
            expr,
            rates: [rate(0, j), rate(1, j)],
        })
        .collect();
    let fully_connected = [rate(0, FAILURES.len()), rate(1, FAILURES.len())];
    let failures_command = format!(
        "{BASE} --set exit={},{} --vary rule={BOTH_RULES} --seeds 0..{SEARCH_SEEDS} --metrics {} {} --per-seed none --out failures",
        EXIT.0,
        EXIT.1,
        metric_names(&FAILURE_METRICS),
        gate_args
            .iter()
            .map(|g| format!("--gate '{g}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );

    Ok((failures, fully_connected, failures_command))
}

/// Both rules swept over the settings of `axes` (key, values), the mean of each metric per
/// setting; `out` names the sweep's folder in the command shown.
fn compare(
    base: &Recipe,
    pool: &rayon::ThreadPool,
    axes: &[(&str, &[&str])],
    metrics: &[Metric],
    out: &str,
) -> Result<Comparison, AuditError> {
    let mut varies = vec![vary("rule", &["B5678/S5678", "B5678/S45678"])?];
    for (key, values) in axes {
        varies.push(vary(key, values)?);
    }
    let plan = Plan::new(spec(
        base.clone(),
        varies,
        SEARCH_SEEDS,
        Gate::default(),
        metrics,
    ))?;
    let st = sweep_in_memory(&plan, pool);
    let n = plan.n_points() / 2;
    let means = |v: usize| -> Vec<Vec<f64>> {
        (0..n)
            .map(|p| {
                metrics
                    .iter()
                    .map(|&m| summary(&st[v * n + p], m).mean)
                    .collect()
            })
            .collect()
    };
    let settings = (0..n)
        .map(|p| {
            axes.iter()
                .zip(&plan.params(p)[1..])
                .map(|((k, _), v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Ok(Comparison {
        command: format!(
            "{BASE} --vary rule={BOTH_RULES} {} --seeds 0..{SEARCH_SEEDS} \
             --metrics {} --per-seed none --out {out}",
            axes.iter()
                .map(|(k, v)| format!("--vary {k}={}", v.join(",")))
                .collect::<Vec<_>>()
                .join(" "),
            metric_names(metrics)
        ),
        settings,
        metrics: metrics.to_vec(),
        means: [means(0), means(1)],
    })
}

const BASE: &str = "cavesweep sweep --preset chapter-strict --set rng=numpy";

/// Measure everything and build the rows. `strict`, `classic` and `classic10` are the chapter's
/// runs that `reproduce chapter` already made (4, 4 and 10 steps over its `--seeds`).
pub fn audit(
    strict: &VariantRun,
    classic: &VariantRun,
    classic10: &VariantRun,
    threads: usize,
) -> Result<Audit, AuditError> {
    let pool = crate::fanout::pool(threads)?;
    let base = numpy("chapter-strict")?;

    let (grid, bands) = sensitivity(&base, &pool)?;
    let (failures, fully_connected, failures_command) = failure_rates(&base, &pool)?;
    // Fixed against wrapped boundaries; without and with keep-largest.
    let boundaries = compare(
        &base,
        &pool,
        &[
            ("border", &["solid", "none"]),
            ("outside", &["floor", "wrap"]),
        ],
        &[
            Metric::WallFraction,
            Metric::Components,
            Metric::ConnectedFraction,
        ],
        "boundaries",
    )?;
    let boundary_identical = [
        identical_with_wrap("chapter-strict", &pool)?,
        identical_with_wrap("classic-4-5", &pool)?,
    ];
    let keep_largest = compare(
        &base,
        &pool,
        &[("post", &["none", "keep-largest"])],
        &[Metric::FloorFraction, Metric::Components],
        "keep-largest",
    )?;

    let equivalence = [
        neighbourhoods_agreeing("B5678/S45678", |n, c| n + c as u32 >= 5)?,
        neighbourhoods_agreeing("B5678/S5678", |n, _| n >= 5)?,
    ];
    let (strict_grids, strict_recipe) = pictured("chapter-strict")?;
    let (classic_grids, classic_recipe) = pictured("classic-4-5")?;

    let mut a = Audit {
        version: env!("CARGO_PKG_VERSION"),
        seeds: strict.seeds,
        claims: Vec::new(),
        grid,
        failures,
        failures_command,
        fully_connected,
        boundaries,
        boundary_identical,
        keep_largest,
        equivalence,
        bands,
        pictured: [strict_grids, classic_grids],
        pictured_recipes: [strict_recipe, classic_recipe],
        experiments: experiments(),
        sources: sources(),
    };
    a.claims = claims(&a, strict, classic, classic10);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_rules_are_written_as_golly_does() {
        assert_eq!(threshold_rule(5, false), "B5678/S5678");
        assert_eq!(threshold_rule(5, true), "B5678/S45678");
        assert_eq!(threshold_rule(3, true), "B345678/S2345678");
        assert_eq!(threshold_rule(7, false), "B78/S78");
    }

    #[test]
    fn the_4_5_rule_is_b5678_s45678_over_all_512_neighbourhoods() {
        let count9 = |n: u32, c: bool| n + c as u32 >= 5;
        assert_eq!(
            neighbourhoods_agreeing("B5678/S45678", count9).unwrap(),
            512
        );
        assert_eq!(
            neighbourhoods_agreeing("B5678/S5678", |n, _| n >= 5).unwrap(),
            512
        );
        // The check can fail: the strict rule is not the 4-5 rule (a wall with 4 wall
        // neighbours differs: C(8,4) = 70 blocks).
        assert_eq!(
            neighbourhoods_agreeing("B5678/S5678", count9).unwrap(),
            512 - 70
        );
    }

    #[test]
    fn the_ledger_lists_every_source_of_docs_sources_md() {
        let s = sources();
        assert!(
            s.iter()
                .any(|x| x.title.contains("Generate Caves from Noise"))
        );
        assert!(
            s.iter()
                .any(|x| x.section == "RogueBasin" && x.bears_on.contains("C6"))
        );
        assert!(s.iter().all(|x| !x.title.is_empty()));
    }
}
