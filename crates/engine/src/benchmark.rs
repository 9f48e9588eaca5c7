//! `cavesweep bench`: throughput of every preset measured in one run, side by side with the
//! scalar oracle, repeated so the report can give a median and a spread (machines are shared and
//! noisy). Criterion benches in `benches/` measure each stage in isolation; this measures the
//! whole pipeline the way a sweep runs it. [`grid`] measures the sweep machinery on parameter
//! grids (`cavesweep bench --grid`), [`search`] how close a search that rejects most caves comes
//! to generating alone (`cavesweep bench --search`).

pub mod grid;
pub mod search;

use std::time::{Duration, Instant};

use rayon::prelude::*;

use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::kernel::Stepper;
use cavesweep_core::measure::{MeasureConfig, Measurer, MetricSet};
use cavesweep_core::oracle::{self, ByteGrid};
use cavesweep_core::recipe::{Recipe, RecipeError};
use cavesweep_core::rng::cave_rng;
use cavesweep_core::simd::Simd;

/// Median, minimum and maximum of repeated measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The middle sample (the mean of the two middle ones when the count is even).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
}

impl Spread {
    /// The spread of the samples `v`, in their own unit. Panics if `v` is empty.
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
    /// The recipe's name (a preset's name when it came from one).
    pub preset: String,
    /// Cells per cave (`rows * cols`): what turns passes per second into cell updates per second.
    pub cells: usize,
    /// Caves per second, whole pipeline, one thread.
    pub caves_1: Spread,
    /// Caves per second, whole pipeline, `threads` threads.
    pub caves_n: Spread,
    /// Threads the `caves_n` figure ran on.
    pub threads: usize,
    /// Caves per second of the oracle pipeline (byte grid, scalar loops), one thread.
    pub oracle_caves: Spread,
    /// Cell updates per second of the recipe's passes (all its steps), fast kernels, one thread.
    pub step_cells: Spread,
    /// The same with the oracle.
    pub oracle_step_cells: Spread,
}

/// Caves per call of the pipeline figures: whole batches for every lane width.
const CHUNK: u64 = 64;

/// Generate and measure the caves `base + i * CHUNK ..` through [`Generator::generate`] (the
/// batched path sweeps use) until `budget` has passed; returns caves per second.
fn caves_rate(g: &mut Generator, budget: Duration, base: u64) -> f64 {
    let mut v = cavesweep_core::measure::EMPTY_VALUES;
    rate(budget, |i| {
        let from = base + i * CHUNK;
        let _ = g
            .generate(from..from + CHUNK, |c| {
                c.measure(&mut v);
                std::hint::black_box(&v);
                std::ops::ControlFlow::Continue(())
            })
            .expect("fill");
    }) * CHUNK as f64
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
    let pool = crate::fanout::pool(threads).map_err(|e| RecipeError::Key {
        key: "--threads".into(),
        msg: e.to_string(),
    })?;
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
        c1.push(caves_rate(&mut generator, slice, seed_base));
        seed_base += 1 << 32;
        let per_thread: Vec<f64> = pool.install(|| {
            (0..threads)
                .into_par_iter()
                .map(|t| {
                    let mut g = Generator::new(recipe, metrics).expect("validated");
                    caves_rate(&mut g, slice, seed_base + ((t as u64) << 40))
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
            std::hint::black_box(oracle::metrics::measure(&b, &cfg));
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

/// Microseconds per cave of each stage of the pipeline, one thread: median, minimum and maximum
/// over the repeats. On a shared machine the minimum is the figure a quiet one approaches; the
/// median is what a run of that length got.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stages {
    /// Filling the grid with random cells.
    pub fill: Spread,
    /// Running the recipe's cellular-automaton passes.
    pub passes: Spread,
    /// Copying caves out of SIMD lanes to their grids (0 when caves are made one at a time).
    pub copy: Spread,
    /// The recipe's post-steps (0 when it has none).
    pub post: Spread,
    /// Measuring as the pipeline does: a whole lane batch at once where the recipe allows
    /// (see [`cavesweep_core::generate`]), else cave by cave.
    pub measure: Spread,
    /// Measuring one cave at a time ([`Measurer::measure`]), as the tail of a range and recipes
    /// that are not batched do.
    pub measure_one: Spread,
    /// The whole pipeline, measured on its own (so not exactly the sum).
    pub total: Spread,
}

impl Stages {
    /// The stages in table order: fill, passes, copy, post, measure, measure_one, total.
    pub fn all(&self) -> [Spread; 7] {
        [
            self.fill,
            self.passes,
            self.copy,
            self.post,
            self.measure,
            self.measure_one,
            self.total,
        ]
    }
}

/// Time each stage of `recipe`'s pipeline on `simd`, one thread: `repeats` samples of
/// `slice` each, summarised per stage ([`Spread`]).
pub fn stage_times(
    recipe: &Recipe,
    metrics: MetricSet,
    simd: Simd,
    repeats: usize,
    slice: Duration,
) -> Result<Stages, RecipeError> {
    let mut g = Generator::with_simd(recipe, metrics, simd)?;
    let us = |d: Duration, n: u64| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    let (mut fill, mut passes, mut copy, mut post, mut meas, mut meas1, mut total) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut base = 0u64;
    // Caves to measure on their own: a ring of them, so the measurer reads memory as it would.
    let caves: Vec<Grid> = {
        let mut v = Vec::with_capacity(64);
        let _ = g
            .generate(0..64, |c| {
                v.push(c.grid().clone());
                std::ops::ControlFlow::Continue(())
            })
            .expect("fill");
        v
    };
    let mut m = Measurer::with_simd(simd);
    let cfg = *g.measure_config();
    for _ in 0..repeats {
        g.set_timing(true);
        let start = Instant::now();
        let mut i = 0u64;
        while start.elapsed() < slice {
            let from = base + i * CHUNK;
            let _ = g
                .generate(from..from + CHUNK, |c| {
                    std::hint::black_box(&c.trajectory);
                    std::ops::ControlFlow::Continue(())
                })
                .expect("fill");
            i += 1;
        }
        let t = g.take_times();
        g.set_timing(false);
        fill.push(us(t.fill, t.caves));
        passes.push(us(t.passes, t.caves));
        copy.push(us(t.copy, t.caves));
        post.push(us(t.post, t.caves));
        let mut v = cavesweep_core::measure::EMPTY_VALUES;
        meas.push(pipeline_measure_us(&mut g, slice, base + (1 << 44)));
        meas1.push(
            1e6 / rate(slice, |i| {
                m.measure(&caves[i as usize % caves.len()], &cfg, &mut v);
                std::hint::black_box(&v);
            }),
        );
        total.push(1e6 / caves_rate(&mut g, slice, base + (1 << 40)));
        base += 1 << 48;
    }
    Ok(Stages {
        fill: Spread::of(fill),
        passes: Spread::of(passes),
        copy: Spread::of(copy),
        post: Spread::of(post),
        measure: Spread::of(meas),
        measure_one: Spread::of(meas1),
        total: Spread::of(total),
    })
}

/// Microseconds per cave spent measuring the caves `base + i * CHUNK ..` as the pipeline does,
/// for about `budget`. The clock runs from the first cave of each batch to the end of the last
/// one's measuring, so it holds the batch's measuring and none of its generation.
fn pipeline_measure_us(g: &mut Generator, budget: Duration, base: u64) -> f64 {
    let batch = g.batch_size() as u64;
    debug_assert_eq!(CHUNK % batch, 0, "whole batches per chunk");
    let mut v = cavesweep_core::measure::EMPTY_VALUES;
    let (mut spent, mut caves) = (Duration::ZERO, 0u64);
    let start = Instant::now();
    while start.elapsed() < budget {
        let from = base + caves;
        let mut t0 = None;
        let _ = g
            .generate(from..from + CHUNK, |c| {
                let k = (c.seed - from) % batch;
                if k == 0 {
                    t0 = Some(Instant::now());
                }
                c.measure(&mut v);
                std::hint::black_box(&v);
                if k == batch - 1 {
                    spent += t0.take().map_or(Duration::ZERO, |t| t.elapsed());
                }
                std::ops::ControlFlow::Continue(())
            })
            .expect("fill");
        caves += CHUNK;
    }
    spent.as_secs_f64() * 1e6 / caves.max(1) as f64
}

/// Caves per second of `recipe`'s whole pipeline on every SIMD path this CPU runs, one
/// thread (median of `repeats` samples of `slice`), lowest path first.
pub fn paths_rates(
    recipe: &Recipe,
    metrics: MetricSet,
    repeats: usize,
    slice: Duration,
) -> Result<Vec<(Simd, f64)>, RecipeError> {
    Simd::available()
        .into_iter()
        .map(|simd| {
            let mut g = Generator::with_simd(recipe, metrics, simd)?;
            let v: Vec<f64> = (0..repeats)
                .map(|r| caves_rate(&mut g, slice, (r as u64) << 40))
                .collect();
            Ok((simd, Spread::of(v).median))
        })
        .collect()
}

/// The SIMD path in use and the CPU's features, for reports: e.g.
/// `"avx512-vbmi2 (CPU: avx2 bmi2 avx512f ...)"`.
pub fn simd_path() -> String {
    let cpu = cavesweep_core::simd::Cpu::get();
    format!("{} (CPU: {})", Simd::active(), cpu.features())
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

    /// What the figures are of (speed itself is for `cavesweep bench` and criterion to show,
    /// not for a unit test to assert).
    #[test]
    fn stages_and_paths_are_measured() {
        let r = cavesweep_core::presets::preset("chapter-strict").unwrap();
        let slice = Duration::from_millis(10);
        let s = stage_times(&r, MetricSet::ALL, Simd::SCALAR, 3, slice).unwrap();
        // chapter-strict has no post-steps, so that stage is not timed.
        assert_eq!((s.post.median, s.post.max), (0.0, 0.0));
        // Every other stage is, and each spread is ordered.
        for (i, st) in s.all().into_iter().enumerate() {
            assert!(
                st.min <= st.median && st.median <= st.max,
                "stage {i}: {st:?}"
            );
            assert!(i == 2 || i == 3 || st.min > 0.0, "stage {i}: {st:?}");
        }
        let p = paths_rates(&r, MetricSet::ALL, 1, slice).unwrap();
        let paths: Vec<Simd> = p.iter().map(|(s, _)| *s).collect();
        assert_eq!(paths, Simd::available());
    }

    #[test]
    fn bench_reports_what_it_ran() {
        let r = cavesweep_core::presets::preset("nethack-mines").unwrap();
        let b = bench_recipe(&r, MetricSet::ALL, 2, 1, Duration::from_millis(5)).unwrap();
        assert_eq!(
            (b.preset.as_str(), b.cells, b.threads),
            ("nethack-mines", 19 * 77, 2)
        );
        let bad = Recipe {
            rows: 0,
            ..r.clone()
        };
        assert!(bench_recipe(&bad, MetricSet::ALL, 1, 1, Duration::from_millis(5)).is_err());
    }
}
