//! `cavesweep bench`: throughput of every preset measured in one run, side by side with the
//! scalar oracle, repeated so the report can give a median and a spread (machines are shared and
//! noisy). Criterion benches in `benches/` measure each stage in isolation; this measures the
//! whole pipeline the way a sweep runs it.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::generate::Generator;
use crate::grid::Grid;
use crate::kernel::Stepper;
use crate::measure::{self, MeasureConfig, Measurer, MetricSet};
use crate::oracle::ByteGrid;
use crate::recipe::{Recipe, RecipeError};
use crate::rng::cave_rng;

/// Median, minimum and maximum of repeated measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(mut v: Vec<f64>) -> Spread {
        assert!(!v.is_empty(), "at least one sample");
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// One preset's figures.
#[derive(Debug, Clone)]
pub struct PresetBench {
    pub preset: String,
    pub cells: usize,
    /// Caves per second, whole pipeline, one thread.
    pub caves_1: Spread,
    /// Caves per second, whole pipeline, `threads` threads.
    pub caves_n: Spread,
    pub threads: usize,
    /// Caves per second of the oracle pipeline (byte grid, scalar loops), one thread.
    pub oracle_caves: Spread,
    /// Cell updates per second of the recipe's passes (all its steps), fast kernels, one thread.
    pub step_cells: Spread,
    /// The same with the oracle.
    pub oracle_step_cells: Spread,
}

/// Run `work(i)` for `i = 0, 1, 2, ...` until `budget` has passed; returns calls per second.
fn rate(budget: Duration, mut work: impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    let mut i = 0u64;
    loop {
        // Check the clock every few calls only.
        for _ in 0..8 {
            work(i);
            i += 1;
        }
        let t = start.elapsed();
        if t >= budget {
            return i as f64 / t.as_secs_f64();
        }
    }
}

/// Measure one recipe: `repeats` samples of each figure, each lasting `slice`.
pub fn bench_recipe(
    recipe: &Recipe,
    metrics: MetricSet,
    threads: usize,
    repeats: usize,
    slice: Duration,
) -> Result<PresetBench, RecipeError> {
    let mut generator = Generator::new(recipe, metrics)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let cfg = MeasureConfig {
        connectivity: recipe.connectivity,
        spawn: recipe.spawn_cell(),
        exit: recipe.exit_cell(),
        metrics,
    };
    let steps: u64 = recipe.passes.iter().map(|p| p.repeat as u64).sum();
    let cells = recipe.rows * recipe.cols;

    // Fill only (no passes, no post-steps, no metrics): the oracle pipeline shares our fill,
    // and the step-kernel figures start from one fixed filled grid.
    let mut fill_only = Generator::new(
        &Recipe {
            passes: vec![],
            post: vec![],
            ..recipe.clone()
        },
        MetricSet::EMPTY,
    )?;
    let mut filled = Grid::new(recipe.rows, recipe.cols)?;
    filled.copy_from(fill_only.run(1).expect("fill").grid);
    let bytes_filled = ByteGrid::from_grid(&filled);

    let (mut c1, mut cn, mut oc, mut sc, mut osc) = (vec![], vec![], vec![], vec![], vec![]);
    let mut seed_base = 0u64;
    for _ in 0..repeats {
        c1.push(rate(slice, |i| {
            generator.run(seed_base + i).expect("fill");
        }));
        seed_base += 1 << 32;
        let per_thread: Vec<f64> = pool.install(|| {
            (0..threads)
                .into_par_iter()
                .map(|t| {
                    let mut g = Generator::new(recipe, metrics).expect("validated");
                    let base = seed_base + ((t as u64) << 40);
                    rate(slice, |i| {
                        g.run(base + i).expect("fill");
                    })
                })
                .collect()
        });
        cn.push(per_thread.iter().sum());

        // Oracle pipeline: the same fill, then byte-grid passes and byte-grid measurement.
        let mut measurer = Measurer::new();
        let mut grid = Grid::new(recipe.rows, recipe.cols)?;
        oc.push(rate(slice / 4, |i| {
            let mut b = ByteGrid::from_grid(fill_only.run(seed_base + i).expect("fill").grid);
            for pass in &recipe.passes {
                b.run_pass(pass);
            }
            if !recipe.post.is_empty() {
                // The oracle has no post-steps: run the fast ones on a copy (documented).
                grid.copy_from(&b.to_grid());
                let mut rng = cave_rng(i);
                for &p in &recipe.post {
                    measurer.apply_post(&mut grid, p, recipe.connectivity, &mut rng);
                }
                b = ByteGrid::from_grid(&grid);
            }
            std::hint::black_box(measure::oracle::measure(&b, &cfg));
        }));

        let mut stepper = Stepper::new();
        let mut g = filled.clone();
        sc.push(
            rate(slice, |_| {
                g.copy_from(&filled);
                for pass in &recipe.passes {
                    stepper.run_pass(&mut g, pass);
                }
                std::hint::black_box(&g);
            }) * (steps as usize * cells) as f64,
        );
        let mut b = bytes_filled.clone();
        osc.push(
            rate(slice / 4, |_| {
                b.cells.copy_from_slice(&bytes_filled.cells);
                for pass in &recipe.passes {
                    b.run_pass(pass);
                }
                std::hint::black_box(&b);
            }) * (steps as usize * cells) as f64,
        );
        seed_base += 1 << 48;
    }
    Ok(PresetBench {
        preset: recipe.name.clone(),
        cells,
        caves_1: Spread::of(c1),
        caves_n: Spread::of(cn),
        threads,
        oracle_caves: Spread::of(oc),
        step_cells: Spread::of(sc),
        oracle_step_cells: Spread::of(osc),
    })
}

/// The SIMD path in use and the CPU's features, for reports: e.g.
/// `"avx512-vbmi2 (CPU: avx2 bmi2 avx512f ...)"`.
pub fn simd_path() -> String {
    let cpu = crate::simd::Cpu::get();
    format!("{} (CPU: {})", crate::simd::Simd::active(), cpu.features())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_median() {
        let s = Spread::of(vec![5.0, 1.0, 3.0]);
        assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
        assert_eq!(Spread::of(vec![1.0, 2.0, 4.0, 10.0]).median, 3.0);
    }

    #[test]
    fn bench_runs_and_reports_positive_rates() {
        let r = crate::presets::preset("chapter-strict").unwrap();
        let b = bench_recipe(&r, MetricSet::ALL, 2, 1, Duration::from_millis(20)).unwrap();
        assert!(b.caves_1.median > 0.0 && b.caves_n.median > 0.0 && b.oracle_caves.median > 0.0);
        assert!(b.step_cells.median > b.oracle_step_cells.median);
    }
}
