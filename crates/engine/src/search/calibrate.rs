//! Measuring what a query's metrics cost, on a small sample of the caves to be searched, so
//! the plan can put cheap, decisive clauses first and `search --explain` can show the figures.

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{MeasureConfig, Measurer, MetricSet, Values};
use cavesweep_core::query::Costs;

use super::Seeds;

/// Caves in the calibration sample (fewer when the search has fewer seeds).
pub const SAMPLE: usize = 256;

/// What a sample of caves showed.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// Measured cost of each metric from scratch (metrics not measured: the static estimate).
    pub costs: Costs,
    /// The sample caves' values (every measured metric).
    pub sample: Vec<Values>,
    /// Generation (fill, passes, post-steps) per cave, ns.
    pub gen_ns: f64,
    /// First and last seed of the sample.
    pub seeds: Option<(u64, u64)>,
}

/// Fastest of `rounds` timings of `f` (the machine is shared: the minimum is the least
/// disturbed).
fn fastest(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Generate up to [`SAMPLE`] caves from the start of `seeds` and time the generation and each
/// metric of `metrics` computed alone (a fresh lazy view per cave and metric, so a metric pays
/// for every stage it needs; the fractions are free, as for a generated cave).
pub fn calibrate(generator: &mut Generator, seeds: &Seeds, metrics: MetricSet) -> Calibration {
    let runs = seeds.first(SAMPLE as u64);
    let n: u64 = runs.iter().map(|r| r.end - r.start).sum();
    let mut costs = Costs::estimated();
    if n == 0 {
        return Calibration {
            costs,
            sample: vec![],
            gen_ns: f64::NAN,
            seeds: None,
        };
    }
    let gen_time = fastest(2, || {
        for r in &runs {
            let _ = generator
                .generate(r.clone(), |_| ControlFlow::Continue(()))
                .expect("recipe validated");
        }
    });
    let mut grids: Vec<Grid> = Vec::with_capacity(n as usize);
    let mut sample = Vec::with_capacity(n as usize);
    for r in &runs {
        let _ = generator
            .generate(r.clone(), |cave| {
                grids.push(cave.grid().clone());
                let mut v = cavesweep_core::measure::EMPTY_VALUES;
                cave.measure_set(metrics, &mut v);
                sample.push(v);
                ControlFlow::Continue(())
            })
            .expect("recipe validated");
    }
    let cfg = MeasureConfig {
        metrics,
        ..*generator.measure_config()
    };
    // As in the search: the wall count comes with the generated cave.
    let walls: Vec<u64> = grids.iter().map(Grid::count_walls).collect();
    let mut measurer = Measurer::new();
    for m in metrics.iter() {
        let t = fastest(3, || {
            for (g, &w) in grids.iter().zip(&walls) {
                black_box(measurer.lazy(g, &cfg).with_walls(w).get(m));
            }
        });
        costs.ns[m.index()] = t.as_nanos() as f64 / n as f64;
    }
    Calibration {
        costs,
        sample,
        gen_ns: gen_time.as_nanos() as f64 / n as f64,
        seeds: Some((runs[0].start, runs[runs.len() - 1].end - 1)),
    }
}
