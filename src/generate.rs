//! The per-seed pipeline: recipe + seed -> filled grid -> passes -> post-steps -> metrics.
//!
//! A [`Generator`] owns every buffer one cave needs (grid, step scratch, measurer, trajectory),
//! so a worker thread makes one and calls [`Generator::run`] for seed after seed with no
//! allocation. The cave for `(recipe, seed)` depends on nothing else: not on the thread, the
//! chunk or the order of seeds.

use std::ops::ControlFlow;

use crate::fill::{self, FillError};
use crate::grid::Grid;
use crate::kernel::Stepper;
use crate::measure::{Lazy, MeasureConfig, Measurer, Metric, MetricSet, Values};
use crate::recipe::{Fill, Recipe, RecipeError};
use crate::rng::{RngKind, cave_rng};

/// One generated and measured cave, borrowed from the [`Generator`] until its next run.
pub struct Cave<'a> {
    pub seed: u64,
    /// The final grid.
    pub grid: &'a Grid,
    /// Wall fraction after the fill, after each pass application, after each post-step.
    pub trajectory: &'a [f64],
    /// Metric values, indexed by [`crate::measure::Metric::index`]; NaN = not computed / empty.
    pub values: &'a Values,
}

/// Generates and measures caves of one recipe. See the module docs.
pub struct Generator {
    recipe: Recipe,
    cfg: MeasureConfig,
    stepper: Stepper,
    measurer: Measurer,
    grid: Grid,
    trajectory: Vec<f64>,
    values: Values,
}

impl Generator {
    /// A generator for `recipe` computing `metrics`. Validates the recipe.
    pub fn new(recipe: &Recipe, metrics: MetricSet) -> Result<Generator, RecipeError> {
        recipe.validate()?;
        let cfg = MeasureConfig {
            connectivity: recipe.connectivity,
            spawn: recipe.spawn_cell(),
            exit: recipe.exit_cell(),
            metrics,
        };
        Ok(Generator {
            recipe: recipe.clone(),
            cfg,
            stepper: Stepper::new(),
            measurer: Measurer::new(),
            grid: Grid::new(recipe.rows, recipe.cols)?,
            trajectory: Vec::with_capacity(recipe.trajectory_len()),
            values: [f64::NAN; crate::measure::Metric::COUNT],
        })
    }

    /// Switch to another recipe (computing `metrics`), keeping the buffers when the grid shape is
    /// unchanged: a sweep worker moves from grid point to grid point without reallocating.
    pub fn set_recipe(&mut self, recipe: Recipe, metrics: MetricSet) -> Result<(), RecipeError> {
        recipe.validate()?;
        if (recipe.rows, recipe.cols) != (self.grid.rows(), self.grid.cols()) {
            self.grid = Grid::new(recipe.rows, recipe.cols)?;
        }
        self.cfg = MeasureConfig {
            connectivity: recipe.connectivity,
            spawn: recipe.spawn_cell(),
            exit: recipe.exit_cell(),
            metrics,
        };
        self.recipe = recipe;
        Ok(())
    }

    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    /// The measuring settings of this generator's recipe (spawn, exit, connectivity, metrics).
    pub fn measure_config(&self) -> &MeasureConfig {
        &self.cfg
    }

    /// Fill, step and post-process the cave of `seed` into `self.grid`, recording the
    /// wall-fraction trajectory. No metrics.
    fn make(&mut self, seed: u64) -> Result<(), FillError> {
        let r = &self.recipe;
        let g = &mut self.grid;
        // Everything random after the fill (corridor digging) continues this stream; with the
        // numpy RNG the fill replays numpy and the rest uses the seed's xoshiro stream.
        let mut rng = cave_rng(seed);
        match (r.fill, r.rng) {
            (Fill::Bernoulli { p }, RngKind::Numpy) => fill::fill_numpy(g, p, seed)?,
            (Fill::Bernoulli { p }, RngKind::Xoshiro) => fill::fill_bernoulli(g, p, &mut rng)?,
            (Fill::ExactFloor { floor }, _) => fill::fill_exact_count(g, floor, &mut rng)?,
        }
        let cells = g.cells() as f64;
        self.trajectory.clear();
        self.trajectory.push(g.count_walls() as f64 / cells);
        for pass in &r.passes {
            for _ in 0..pass.repeat {
                self.stepper.step(g, pass);
                self.trajectory.push(g.count_walls() as f64 / cells);
            }
        }
        for &step in &r.post {
            self.measurer.apply_post(g, step, r.connectivity, &mut rng);
            self.trajectory.push(g.count_walls() as f64 / cells);
        }
        Ok(())
    }

    /// Generate and measure the cave of `seed`.
    pub fn run(&mut self, seed: u64) -> Result<Cave<'_>, FillError> {
        self.make(seed)?;
        self.measurer
            .measure(&self.grid, &self.cfg, &mut self.values);
        Ok(Cave {
            seed,
            grid: &self.grid,
            trajectory: &self.trajectory,
            values: &self.values,
        })
    }

    /// Generate the caves of every seed in `seeds`, in ascending order, handing each to `visit`
    /// unmeasured: the visitor measures what it needs through [`Generated`]. This is the entry
    /// point of the sweep and search engines; it may batch seeds internally (several caves in
    /// SIMD lanes), but each cave is exactly the one [`Generator::run`] makes for its seed.
    /// Stops early when `visit` returns `Break`.
    pub fn generate(
        &mut self,
        seeds: std::ops::Range<u64>,
        mut visit: impl FnMut(&mut Generated<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, FillError> {
        for seed in seeds {
            self.make(seed)?;
            let mut cave = Generated {
                seed,
                grid: &self.grid,
                trajectory: &self.trajectory,
                view: self
                    .measurer
                    .lazy(&self.grid, &self.cfg)
                    .with_walls(final_walls(&self.trajectory, self.grid.cells())),
            };
            if visit(&mut cave).is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// The final grid's WALL count, recovered from the trajectory's last entry (`walls / cells`
/// rounded to an f64): with `cells < 2^53` the product with `cells` is within far less than
/// one half of `walls`, so rounding it is exact. Saves the fractions a popcount per cave.
fn final_walls(trajectory: &[f64], cells: usize) -> u64 {
    let last = *trajectory
        .last()
        .expect("the trajectory starts with the fill");
    (last * cells as f64).round() as u64
}

/// A generated, not yet measured cave handed out by [`Generator::generate`]. Its metrics are
/// measured lazily through the generator's [`Measurer`] (no allocation): [`Generated::metric`]
/// computes a metric on first use with only the stages it needs and memoises it, so a search
/// that rejects a cave on `floor_fraction` pays nothing beyond generating it (the wall count
/// comes from the trajectory), not the flood fills.
pub struct Generated<'a> {
    pub seed: u64,
    /// The final grid.
    pub grid: &'a Grid,
    /// Wall fraction after the fill, after each pass application, after each post-step.
    pub trajectory: &'a [f64],
    view: Lazy<'a>,
}

impl Generated<'_> {
    /// The value of `m` (NaN = empty), computed on first use and memoised.
    #[inline]
    pub fn metric(&mut self, m: Metric) -> f64 {
        self.view.get(m)
    }

    /// Every metric measured so far (NaN: not yet, or empty).
    pub fn measured(&self) -> &Values {
        self.view.values()
    }

    /// Measure the metrics of the generator's [`MeasureConfig`] into `out` (others NaN).
    pub fn measure(&mut self, out: &mut Values) {
        let set = self.view.config().metrics;
        self.measure_set(set, out);
    }

    /// Measure `metrics` (instead of the configured set) into `out` (others NaN); metrics
    /// already measured are not measured again.
    pub fn measure_set(&mut self, metrics: MetricSet, out: &mut Values) {
        self.view.ensure(metrics);
        self.view.copy_into(metrics, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::EMPTY_VALUES;
    use crate::presets::{NAMES, preset};

    /// `generate`'s lazy caves measure exactly what `run` measures, whatever is asked first,
    /// and the fractions taken from the trajectory equal a fresh popcount.
    #[test]
    fn generated_caves_measure_like_run() {
        for name in NAMES {
            let mut r = preset(name).unwrap();
            r.set_kv("exit=3,3").unwrap();
            let mut eager = Generator::new(&r, MetricSet::ALL).unwrap();
            let mut lazy = Generator::new(&r, MetricSet::ALL).unwrap();
            let mut n = 0;
            let _ = lazy
                .generate(100..140, |cave| {
                    let want = *eager.run(cave.seed).unwrap().values;
                    let walls = cave.grid.count_walls() as f64 / cave.grid.cells() as f64;
                    assert_eq!(cave.metric(Metric::WallFraction), walls, "{name}");
                    let order = if cave.seed % 2 == 0 {
                        Metric::ALL
                    } else {
                        let mut o = Metric::ALL;
                        o.reverse();
                        o
                    };
                    for m in order {
                        let (a, b) = (cave.metric(m), want[m.index()]);
                        assert!(a == b || (a.is_nan() && b.is_nan()), "{name} {m}: {a} {b}");
                    }
                    let mut all = EMPTY_VALUES;
                    cave.measure(&mut all);
                    assert!(
                        all.iter()
                            .zip(&want)
                            .all(|(a, b)| a == b || a.is_nan() && b.is_nan())
                    );
                    n += 1;
                    ControlFlow::Continue(())
                })
                .unwrap();
            assert_eq!(n, 40);
        }
    }
}
