//! `cavesweep bench --grid`: what the sweep machinery (chunking, statistics, the store, the CSV
//! files) costs on parameter grids, measured through the real [`crate::sweep::run`] into a scratch
//! folder, side by side in one run.
//!
//! Two comparisons, each a ratio of caves per second:
//! - *matched work*: grids of 1,025, 10,000 and 100,000 points of chapter-strict, 13 steps,
//!   fill varied over 0.50-0.60 only, against one point at fill 0.55 with as many seeds as the
//!   grid has caves. The match is close but not exact. A cave's cost rises steeply with fill
//!   (labelling more, smaller regions): 0.599 costs ~2.6x what 0.50 does. So a grid's caves
//!   cost ~7% more on average than the point's, and the ratio is the grid's overhead plus that
//!   (results/bench/grid.md gives the figures). A fourth grid of 100,000 points keeps its
//!   fills within 0.545-0.555, where the work matches the point's to about a percent: its
//!   ratio is the per-point machinery's cost alone. With ~1M caves per sweep, the 100,000-point grid has 10 seeds per point: each point
//!   still writes ~2 KB of store record and ~2 KB of CSV rows, the worst case of the three.
//! - *the natural grid* (`fill=0.30:0.70:0.01` x `steps=1..=25`): against the same caves
//!   generated and measured in a bare loop (no sweep machinery), since no single point does the
//!   same work as a grid whose caves range from 1 to 25 steps.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rayon::prelude::*;

use super::Spread;
use crate::sweep::{self, PerSeed, Plan, RunOptions, Shard, SweepError, SweepSpec};
use cavesweep_core::generate::Generator;
use cavesweep_core::measure::{EMPTY_VALUES, MetricSet};
use cavesweep_core::presets::preset;
use cavesweep_core::query::Gate;

/// One case's figures: caves per second of the case and of its reference, per repeat.
#[derive(Debug, Clone)]
pub struct GridCase {
    /// The case, for the table (`1 point`, `1,025 points, matched work`, ...).
    pub name: String,
    /// Grid points in the case's sweep.
    pub points: usize,
    /// Seeds each point runs.
    pub seeds_per_point: u64,
    /// Caves in the whole sweep (`points * seeds_per_point`).
    pub caves: u64,
    /// Caves per second of the sweep, run through [`sweep::run`] into a scratch folder.
    pub rate: Spread,
    /// What the case is compared with, for the table (`1 point, same caves`, ...).
    pub reference_name: String,
    /// Caves per second of that reference.
    pub reference: Spread,
    /// The per-repeat ratios rate / reference (median, minimum, maximum).
    pub ratio: Spread,
}

struct Case {
    name: &'static str,
    sets: &'static [(&'static str, &'static str)],
    varies: &'static [&'static str],
    points: u64,
}

const SINGLE: Case = Case {
    name: "1 point",
    sets: &[("steps", "13"), ("fill", "0.55")],
    varies: &[],
    points: 1,
};
const MATCHED_1K: Case = Case {
    name: "1,025 points, matched work",
    sets: &[("steps", "13")],
    varies: &["fill=0.500:0.6024:0.0001"],
    points: 1025,
};
const MATCHED_10K: Case = Case {
    name: "10,000 points, matched work",
    sets: &[("steps", "13")],
    varies: &["fill=0.5:0.59999:0.00001"],
    points: 10_000,
};
const MATCHED_100K: Case = Case {
    name: "100,000 points, matched work",
    sets: &[("steps", "13")],
    varies: &["fill=0.5:0.599999:0.000001"],
    points: 100_000,
};
/// The 100,000-point grid with its fills within 0.545-0.555, around the single point's 0.55:
/// the work matches the point's to about a percent (a cave's cost rises steeply with fill, so
/// the 0.50-0.60 grids' caves cost ~7% more than the point's), leaving the per-point machinery
/// as the difference.
const MATCHED_100K_NARROW: Case = Case {
    name: "100,000 points, fill 0.545-0.555",
    sets: &[("steps", "13")],
    varies: &["fill=0.545:0.5549999:0.0000001"],
    points: 100_000,
};
const NATURAL: Case = Case {
    name: "fill=0.30:0.70:0.01 x steps=1..=25",
    sets: &[],
    varies: &["fill=0.30:0.70:0.01", "steps=1..=25"],
    points: 1025,
};

fn plan(case: &Case, seeds: u64, metrics: MetricSet) -> Result<Plan, SweepError> {
    let mut base = preset("chapter-strict").expect("preset exists");
    for (k, v) in case.sets {
        base.set(k, v).map_err(|source| SweepError::Point {
            point: format!("{k}={v}"),
            source,
        })?;
    }
    Plan::new(SweepSpec {
        base,
        varies: case
            .varies
            .iter()
            .map(|v| v.parse())
            .collect::<Result<_, _>>()?,
        seeds: 0..seeds,
        gate: Gate::default(),
        metrics,
        per_seed: PerSeed::None,
        format: sweep::Format::Csv,
        chunk: None,
    })
}

/// Caves per second of a whole sweep of `plan` into a fresh scratch folder.
fn sweep_rate(plan: &Plan, threads: usize, scratch: &PathBuf) -> Result<f64, SweepError> {
    let _ = std::fs::remove_dir_all(scratch);
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        shard: Shard::WHOLE,
        threads,
        force: false,
        command: "cavesweep bench --grid",
        stop: &stop,
    };
    let start = Instant::now();
    sweep::run(plan, scratch, &opts, &mut |_, _| {})?;
    let secs = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(scratch);
    Ok(plan.n_caves() as f64 / secs)
}

/// Caves per second of generating and measuring `plan`'s caves in a bare loop.
fn loop_rate(plan: &Plan, threads: usize) -> Result<f64, SweepError> {
    let pool = crate::fanout::pool(threads)?;
    let start = Instant::now();
    pool.install(|| {
        (0..plan.n_points()).into_par_iter().for_each(|p| {
            let mut g = Generator::new(&plan.recipe(p), plan.computed).expect("valid");
            let mut values = EMPTY_VALUES;
            let _ = g.generate(plan.spec.seeds.clone(), |cave| {
                cave.measure(&mut values);
                std::hint::black_box(&values);
                std::ops::ControlFlow::Continue(())
            });
        })
    });
    Ok(plan.n_caves() as f64 / start.elapsed().as_secs_f64())
}

/// Run every case `repeats` times, interleaved (A B C D A B C D ...), with about `caves` caves per
/// sweep.
pub fn bench_grid(
    caves: u64,
    threads: usize,
    repeats: usize,
    metrics: MetricSet,
) -> Result<Vec<GridCase>, SweepError> {
    let base = tempfile::Builder::new()
        .prefix("cavesweep-bench-grid-")
        .tempdir()
        .map_err(SweepError::Scratch)?;
    let scratch = base.path().join("sweep");
    let per = |c: &Case| (caves / c.points).max(1);
    let single = plan(&SINGLE, per(&SINGLE), metrics)?;
    let cases = [
        &MATCHED_1K,
        &MATCHED_10K,
        &MATCHED_100K,
        &MATCHED_100K_NARROW,
        &NATURAL,
    ]
    .iter()
    .map(|c| Ok((*c, plan(c, per(c), metrics)?)))
    .collect::<Result<Vec<_>, SweepError>>()?;
    let mut single_rates = Vec::new();
    let mut rates = vec![Vec::new(); cases.len()];
    let mut refs = vec![Vec::new(); cases.len()];
    for _ in 0..repeats {
        single_rates.push(sweep_rate(&single, threads, &scratch)?);
        for (i, (case, p)) in cases.iter().enumerate() {
            rates[i].push(sweep_rate(p, threads, &scratch)?);
            if std::ptr::eq(*case, &NATURAL) {
                refs[i].push(loop_rate(p, threads)?);
            } else {
                // Matched work: the single point's rate from the same round.
                refs[i].push(*single_rates.last().expect("measured"));
            }
        }
    }
    let mut out = vec![GridCase {
        name: SINGLE.name.into(),
        points: 1,
        seeds_per_point: single.n_seeds(),
        caves: single.n_caves(),
        rate: Spread::of(single_rates.clone()),
        reference_name: "itself".into(),
        reference: Spread::of(single_rates.clone()),
        ratio: Spread::of(vec![1.0; repeats]),
    }];
    for (i, (case, p)) in cases.iter().enumerate() {
        let ratios = rates[i].iter().zip(&refs[i]).map(|(a, b)| a / b).collect();
        out.push(GridCase {
            name: case.name.into(),
            points: p.n_points(),
            seeds_per_point: p.n_seeds(),
            caves: p.n_caves(),
            rate: Spread::of(rates[i].clone()),
            reference_name: if std::ptr::eq(*case, &NATURAL) {
                "same caves, bare loop".into()
            } else {
                "1 point, same caves".into()
            },
            reference: Spread::of(refs[i].clone()),
            ratio: Spread::of(ratios),
        });
    }
    Ok(out)
}

/// The grid cases of [`bench_grid`] with about `caves` caves each, in order: one point, 1,025,
/// 10,000 and 100,000 points of matched work (fills 0.50-0.60), the natural fill x steps grid.
/// For `benches/sweep.rs`.
pub fn cases(caves: u64, metrics: MetricSet) -> Result<Vec<(&'static str, Plan)>, SweepError> {
    [&SINGLE, &MATCHED_1K, &MATCHED_10K, &MATCHED_100K, &NATURAL]
        .into_iter()
        .map(|c| Ok((c.name, plan(c, (caves / c.points).max(1), metrics)?)))
        .collect()
}

/// One whole sweep of `plan` into `scratch` (emptied before and after), as `cavesweep sweep`
/// runs it: the store, the statistics and the CSV files included.
pub fn sweep_once(plan: &Plan, threads: usize, scratch: &PathBuf) -> Result<(), SweepError> {
    sweep_rate(plan, threads, scratch).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case's grid has the number of points its name and `points` say.
    #[test]
    fn cases_have_their_points() {
        for c in [
            &SINGLE,
            &MATCHED_1K,
            &MATCHED_10K,
            &MATCHED_100K,
            &MATCHED_100K_NARROW,
            &NATURAL,
        ] {
            let p = plan(c, 1, MetricSet::EMPTY).unwrap();
            assert_eq!(p.n_points() as u64, c.points, "{}", c.name);
        }
    }
}
