//! The per-seed pipeline: recipe + seed -> filled grid -> passes -> post-steps -> metrics.
//!
//! A [`Generator`] owns every buffer its caves need (grids, step scratch, batch lanes, measurer,
//! trajectories), so a worker thread makes one and generates seed after seed with no
//! allocation. The cave for `(recipe, seed)` depends on nothing else: not on the thread, the
//! chunk, the order of seeds, the batch a seed ran in or the SIMD path.
//!
//! **Batches.** When the fill is the xoshiro Bernoulli fill, [`Generator::generate`] makes caves
//! `L` at a time (`L` = the lanes of the SIMD path's widest vector: 8 with AVX-512, 4 with AVX2),
//! one cave per lane: the fill writes the lanes directly (`fill::bernoulli_lanes`), and when
//! every pass runs in lanes ([`kernel::lane_pass`]: sync Moore, sync two-radius with a constant
//! outside, in-place column-major) the steps run on the lanes too ([`kernel::step_lanes`]),
//! counting each cave's walls as they go; with post-steps, each cave is then copied out to its
//! own [`Grid`] for them. Without post-steps, the caves are measured where the steps left
//! them: the boundary, the spawn's flood and the labelling run on the lanes, all caves of the
//! batch at once ([`Measurer::begin_batch`], [`Measurer::lazy_in_lanes`]), and a cave is copied
//! out to its grid only if the visitor or a metric reads the grid itself ([`Generated::grid`]:
//! `min_width`, `path_length`, `reach_depth`, a search's `--png-dir`); a sweep of the count,
//! boundary and component metrics never copies (0.2 us of a chapter-strict cave's 3.1 saved).
//! Every lane is its own cave's
//! stream (see [`crate::fill`]), so a cave is the same in a full batch, a partial one at the end
//! of a range, or alone. A batch of fewer than `L / 2` caves (the tail of a short range,
//! [`Generator::run`]'s single cave) is made one cave at a time instead, with the same bits: its
//! empty lanes would cost more than it does. The tests compare the two ways on every SIMD path.
//!
//! In-place column-major passes (NetHack's pass 1) run in lanes too, for caves at most 64
//! rows high ([`kernel::inplace_lanes`]): on one grid that pass is a dependency chain through
//! the rows, which a batch carries for `L` caves at once.
//!
//! Fills that cannot write lanes (numpy's replay, exact counts: NetHack's) still batch their
//! passes when every pass runs in lanes: each cave is filled on its own grid (its own stream,
//! as alone), the batch is loaded into the lanes, stepped, and copied out for its post-steps
//! (NetHack's passes: 2.1-2.9 us per cave one at a time, 0.4 us in lanes of 8, measured by
//! `cavesweep bench`). Other recipes (two-radius or in-place row-major passes, caves over 64
//! rows with an in-place pass, grids too big to hold `L` copies of cheaply) are made one cave
//! at a time with the same kernels.

use std::ops::ControlFlow;
use std::time::Instant;

use crate::fill::{self, FillError, Threshold};
use crate::grid::Grid;
use crate::kernel::{self, Stepper, batch::LaneBuf};
use crate::measure::{
    Connectivity, Lazy, MeasureConfig, Measurer, Metric, MetricSet, PostStep, Values,
};
use crate::recipe::{Fill, Recipe, RecipeError};
use crate::rng::{CaveRng, NumpyRandom, RngKind, cave_rng};
use crate::rule::Pass;
use crate::simd::{Isa, Lane, PcgKernel, Simd};

/// A batch of fewer caves than this is made one cave at a time (see the module docs): with 13
/// steps on AVX-512, the 2 caves of a 10-seed grid point's second batch cost a quarter of a
/// batch of 8 made alone, measured by CPU time of a 20,000-point sweep.
fn tail_max(lanes: usize) -> usize {
    lanes / 2
}

/// Largest batch buffer (bytes, per buffer) for which caves are batched in lanes; bigger grids
/// are made one at a time (their rows fill the row kernel's vectors anyway).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// One generated and measured cave, borrowed from the [`Generator`] until its next run.
pub struct Cave<'a> {
    /// The seed this cave was generated from (with the recipe, all it depends on).
    pub seed: u64,
    /// The final grid.
    pub grid: &'a Grid,
    /// Wall fraction after the fill, after each pass application, after each post-step.
    pub trajectory: &'a [f64],
    /// Metric values, indexed by [`crate::measure::Metric::index`]; NaN = not computed / empty.
    pub values: &'a Values,
}

/// How the caves of a recipe are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// One cave at a time.
    Single,
    /// The fill in lanes; the passes in lanes too if `steps`, else per cave after copying out.
    Lanes { th: Threshold, steps: bool },
    /// Each cave filled on its own grid (fills that cannot write lanes: exact counts, numpy's
    /// replay), then loaded into the lanes for the passes, which all run there.
    GridLanes,
}

/// One cave's buffers.
#[derive(Debug)]
struct Slot {
    grid: Grid,
    trajectory: Vec<f64>,
}

impl AsMut<Grid> for Slot {
    fn as_mut(&mut self) -> &mut Grid {
        &mut self.grid
    }
}

/// Generates and measures caves of one recipe. See the module docs.
pub struct Generator {
    recipe: Recipe,
    cfg: MeasureConfig,
    simd: Simd,
    route: Route,
    stepper: Stepper,
    measurer: Measurer,
    /// The two batch buffers (a step reads one and writes the other).
    lanes: [LaneBuf; 2],
    /// Scratch of the in-place column-major pass in lanes (the transposed caves).
    columns: LaneBuf,
    /// One per lane (one in total without batching).
    slots: Vec<Slot>,
    /// The streams of the caves in flight, one per lane.
    rngs: Vec<CaveRng>,
    /// The batch buffer holding the last batch's final caves, when they can be measured there
    /// ([`Measurer::begin_batch`]): lane routes whose passes all ran in lanes, no post-steps.
    measure_in: Option<usize>,
    /// With `measure_in`: whether the slots' grids hold the batch (else they are stale, and
    /// [`Generated::grid`] copies a cave out when asked).
    copied: bool,
    /// [`Generator::set_grids_read`]; `None`: the metrics decide.
    every_grid: Option<bool>,
    values: Values,
    /// Stage times, when recording ([`Generator::set_timing`]).
    timing: Option<StageTimes>,
}

impl Generator {
    /// A generator for `recipe` computing `metrics`, on the process's SIMD path
    /// ([`Simd::active`]). Validates the recipe.
    pub fn new(recipe: &Recipe, metrics: MetricSet) -> Result<Generator, RecipeError> {
        Generator::with_simd(recipe, metrics, Simd::active())
    }

    /// [`Generator::new`] on a given SIMD path.
    pub fn with_simd(
        recipe: &Recipe,
        metrics: MetricSet,
        simd: Simd,
    ) -> Result<Generator, RecipeError> {
        recipe.validate()?;
        let route = Generator::route(recipe, simd)?;
        let mut g = Generator {
            recipe: recipe.clone(),
            cfg: Generator::config(recipe, metrics),
            simd,
            route,
            stepper: Stepper::with_simd(simd),
            measurer: Measurer::with_simd(simd),
            lanes: Default::default(),
            columns: LaneBuf::default(),
            slots: Vec::new(),
            rngs: Vec::new(),
            measure_in: None,
            copied: true,
            every_grid: None,
            values: [f64::NAN; crate::measure::Metric::COUNT],
            timing: None,
        };
        g.fit_slots()?;
        Ok(g)
    }

    /// Switch to another recipe (computing `metrics`), keeping the buffers when the grid shape is
    /// unchanged: a sweep worker moves from grid point to grid point without reallocating.
    pub fn set_recipe(&mut self, recipe: Recipe, metrics: MetricSet) -> Result<(), RecipeError> {
        recipe.validate()?;
        self.route = Generator::route(&recipe, self.simd)?;
        self.cfg = Generator::config(&recipe, metrics);
        self.recipe = recipe;
        self.fit_slots()
    }

    fn config(recipe: &Recipe, metrics: MetricSet) -> MeasureConfig {
        MeasureConfig {
            connectivity: recipe.connectivity,
            spawn: recipe.spawn_cell(),
            exit: recipe.exit_cell(),
            metrics,
        }
    }

    /// How `recipe`'s caves are made on `simd` (see the module docs).
    fn route(recipe: &Recipe, simd: Simd) -> Result<Route, RecipeError> {
        let wpr = recipe.cols.div_ceil(64);
        let bytes = (recipe.rows + 2) * (wpr + 2) * 8 * simd.lanes();
        let lane_passes = !recipe.passes.is_empty()
            && recipe
                .passes
                .iter()
                .all(|p| kernel::lane_pass(p, recipe.rows));
        Ok(match (recipe.fill, recipe.rng) {
            (Fill::Bernoulli { p }, RngKind::Xoshiro) if bytes <= MAX_BATCH_BYTES => Route::Lanes {
                th: Threshold::new(p).map_err(|e| RecipeError::Key {
                    key: "fill".into(),
                    msg: e.to_string(),
                })?,
                steps: lane_passes,
            },
            _ if bytes <= MAX_BATCH_BYTES && lane_passes && simd.lanes() > 1 => Route::GridLanes,
            _ => Route::Single,
        })
    }

    /// One slot (grid, trajectory, stream) per cave of a batch, shaped like the recipe.
    fn fit_slots(&mut self) -> Result<(), RecipeError> {
        let n = match self.route {
            Route::Single => 1,
            Route::Lanes { .. } | Route::GridLanes => self.simd.lanes(),
        };
        let (rows, cols) = (self.recipe.rows, self.recipe.cols);
        if self
            .slots
            .first()
            .is_some_and(|s| (s.grid.rows(), s.grid.cols()) != (rows, cols))
        {
            self.slots.clear();
        }
        self.slots.truncate(n);
        while self.slots.len() < n {
            self.slots.push(Slot {
                grid: Grid::new(rows, cols)?,
                trajectory: Vec::with_capacity(self.recipe.trajectory_len()),
            });
        }
        self.rngs.resize_with(n, || cave_rng(0));
        Ok(())
    }

    /// The (validated) recipe this generator makes caves of, as last set by
    /// [`Generator::new`] or [`Generator::set_recipe`].
    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    /// The SIMD path this generator runs on.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// Caves made per batch (1 when this recipe is made one cave at a time).
    pub fn batch_size(&self) -> usize {
        self.slots.len()
    }

    /// The measuring settings of this generator's recipe (spawn, exit, connectivity, metrics).
    pub fn measure_config(&self) -> &MeasureConfig {
        &self.cfg
    }

    /// Make the caves of `seeds` (at most [`Generator::batch_size`] of them) into slots
    /// `0..seeds.len()`: grid and wall-fraction trajectory, post-steps included. No metrics.
    ///
    /// `ths[k]` is cave `k`'s fill probability when the caves come from several grid points
    /// ([`Generator::generate_points`]; lane routes only); `None` means the recipe's own.
    ///
    /// `copy`: copy every cave out of the lanes into its slot's grid. Without it, a batch that
    /// can be measured in its lanes (`measure_in` set) is left there, its slots' grids stale:
    /// [`Generated`] copies a cave out only if something reads its grid.
    fn make(
        &mut self,
        seeds: &[u64],
        ths: &[Option<Threshold>],
        copy: bool,
    ) -> Result<(), FillError> {
        debug_assert!(!seeds.is_empty() && seeds.len() <= self.slots.len());
        debug_assert_eq!(seeds.len(), ths.len());
        let cells = (self.recipe.rows * self.recipe.cols) as f64;
        self.measure_in = None;
        match self.route {
            Route::Single => self.make_one(0, seeds[0], None)?,
            // A short tail of a range (10 seeds per grid point = a batch of 8 and a batch of 2)
            // is cheaper one cave at a time than in a batch whose other lanes are thrown away:
            // the caves are the same (see [`crate::fill`]'s stream layout).
            Route::Lanes { .. } | Route::GridLanes if seeds.len() < tail_max(self.slots.len()) => {
                for (k, &seed) in seeds.iter().enumerate() {
                    self.make_one(k, seed, ths[k])?;
                }
            }
            Route::GridLanes => {
                let t = self.timing.as_ref().map(|_| Instant::now());
                for (k, &seed) in seeds.iter().enumerate() {
                    self.fill_one(k, seed, ths[k])?;
                }
                if let (Some(t), Some(times)) = (t, self.timing.as_mut()) {
                    times.fill += t.elapsed();
                }
                // Measured in the lanes when nothing follows the passes, as the lanes route is.
                let in_lanes =
                    self.recipe.post.is_empty() && Measurer::batch_supported(self.recipe.cols);
                let phases: &[Phase] = if copy || !in_lanes {
                    &[Phase::Load, Phase::Steps, Phase::Copy]
                } else {
                    &[Phase::Load, Phase::Steps]
                };
                let unused = [Threshold::new(0.0).expect("0 is a probability"); 8];
                let cur = self.run_phases(phases, &unused, &[0; 8], seeds.len());
                if in_lanes {
                    self.measure_in = Some(cur);
                    self.copied = copy;
                }
            }
            Route::Lanes { th, steps } => {
                let (mut lane_ths, mut lane_seeds) = ([th; 8], [0u64; 8]);
                for k in 0..8 {
                    // Lanes past the seeds run a throwaway cave (the last seed again). The
                    // fill seeds every lane's stream (`self.rngs`) from `lane_seeds`.
                    let j = k.min(seeds.len() - 1);
                    lane_seeds[k] = seeds[j];
                    lane_ths[k] = ths[j].unwrap_or(th);
                }
                let in_lanes = steps
                    && self.recipe.post.is_empty()
                    && Measurer::batch_supported(self.recipe.cols);
                let phases: &[Phase] = match (steps, copy || !in_lanes) {
                    (true, true) => &[Phase::Fill, Phase::Steps, Phase::Copy],
                    (true, false) => &[Phase::Fill, Phase::Steps],
                    (false, _) => &[Phase::Fill, Phase::Copy],
                };
                let cur = self.run_phases(phases, &lane_ths, &lane_seeds, seeds.len());
                if in_lanes {
                    self.measure_in = Some(cur);
                    self.copied = copy;
                }
                if !steps {
                    let t = self.timing.as_ref().map(|_| Instant::now());
                    for slot in &mut self.slots[..seeds.len()] {
                        run_passes(&mut self.stepper, &self.recipe.passes, slot, cells);
                    }
                    if let (Some(t), Some(times)) = (t, self.timing.as_mut()) {
                        times.passes += t.elapsed();
                    }
                }
            }
        }
        let t = self
            .timing
            .as_ref()
            .filter(|_| !self.recipe.post.is_empty())
            .map(|_| Instant::now());
        self.post_steps(seeds.len());
        if let Some(times) = self.timing.as_mut() {
            if let Some(t) = t {
                times.post += t.elapsed();
            }
            times.caves += seeds.len() as u64;
        }
        Ok(())
    }

    /// The recipe's post-steps on slots `0..n`, each drawing from its own stream, their wall
    /// fractions appended to the trajectories.
    fn post_steps(&mut self, n: usize) {
        let cells = (self.recipe.rows * self.recipe.cols) as f64;
        for (slot, rng) in self.slots[..n].iter_mut().zip(&mut self.rngs) {
            for &step in &self.recipe.post {
                self.measurer
                    .apply_post(&mut slot.grid, step, self.recipe.connectivity, rng);
                slot.trajectory.push(slot.grid.count_walls() as f64 / cells);
            }
        }
    }

    /// Run `phases` of a lane batch of `n` caves in the SIMD clone, timing each; returns the
    /// buffer holding the batch afterwards.
    fn run_phases(
        &mut self,
        phases: &[Phase],
        ths: &[Threshold; 8],
        seeds: &[u64; 8],
        n: usize,
    ) -> usize {
        let mut cur = 0;
        for &phase in phases {
            let t = self.timing.as_ref().map(|_| Instant::now());
            cur = crate::simd_run!(self.simd, <I> (
                phase: Phase = phase,
                recipe: &'a Recipe = &self.recipe,
                ths: &'a [Threshold; 8] = ths,
                seeds: &'a [u64; 8] = seeds,
                bufs: &'a mut [LaneBuf; 2] = &mut self.lanes,
                columns: &'a mut LaneBuf = &mut self.columns,
                cur: usize = cur,
                slots: &'a mut [Slot] = &mut self.slots[..n],
                rngs: &'a mut [CaveRng] = &mut self.rngs,
            ) -> usize {
                run_phase::<I>(phase, recipe, ths, seeds, bufs, columns, cur, slots, rngs)
            });
            if let (Some(t), Some(times)) = (t, self.timing.as_mut()) {
                *match phase {
                    Phase::Fill | Phase::Load => &mut times.fill,
                    Phase::Steps => &mut times.passes,
                    Phase::Copy => &mut times.copy,
                } += t.elapsed();
            }
        }
        cur
    }

    /// Make the cave of `seed` into slot `k` on its own (no lanes): fill and passes, no
    /// post-steps. `th`: the fill probability, when not the recipe's (see [`Generator::make`]).
    fn make_one(&mut self, k: usize, seed: u64, th: Option<Threshold>) -> Result<(), FillError> {
        let cells = (self.recipe.rows * self.recipe.cols) as f64;
        let t = self.timing.as_ref().map(|_| Instant::now());
        self.fill_one(k, seed, th)?;
        let t1 = self.timing.as_ref().map(|_| Instant::now());
        run_passes(
            &mut self.stepper,
            &self.recipe.passes,
            &mut self.slots[k],
            cells,
        );
        if let (Some(t), Some(t1), Some(times)) = (t, t1, self.timing.as_mut()) {
            times.fill += t1 - t;
            times.passes += t1.elapsed();
        }
        Ok(())
    }

    /// Fill slot `k`'s grid for `seed` and start its trajectory; seeds slot `k`'s stream.
    fn fill_one(&mut self, k: usize, seed: u64, th: Option<Threshold>) -> Result<(), FillError> {
        let cells = (self.recipe.rows * self.recipe.cols) as f64;
        self.rngs[k] = cave_rng(seed);
        let (r, slot, rng) = (&self.recipe, &mut self.slots[k], &mut self.rngs[k]);
        let g = &mut slot.grid;
        // Everything random after the fill (corridor digging) continues this stream;
        // with the numpy RNG the fill replays numpy and the rest uses the seed's
        // xoshiro stream.
        match (r.fill, r.rng) {
            (Fill::Bernoulli { .. }, RngKind::Xoshiro) if th.is_some() => {
                fill::fill_bernoulli_th(self.simd, g, th.expect("checked"), rng)
            }
            (Fill::Bernoulli { p }, RngKind::Numpy) => {
                let kernel = PcgKernel::for_path(self.simd.path());
                fill::fill_numpy_on(self.simd, kernel, g, p, &mut NumpyRandom::new(seed))?
            }
            (Fill::Bernoulli { p }, RngKind::Xoshiro) => {
                fill::fill_bernoulli(self.simd, g, p, rng)?
            }
            (Fill::ExactFloor { floor }, _) => fill::fill_exact_count(self.simd, g, floor, rng)?,
        }
        slot.trajectory.clear();
        slot.trajectory.push(g.count_walls() as f64 / cells);
        Ok(())
    }

    /// Tell the generator whether the grid of every cave it generates will be read (an array
    /// of grids, metrics that load a cave's own planes), or only some (a sweep of the count,
    /// boundary and component metrics reads none, a search a few). With `every`, each lane
    /// batch is copied out to the grids at once
    /// ([`crate::kernel::batch::LaneGrid::lanes_to_grids`], 0.2 us per 90x140 cave); without,
    /// [`Generated::grid`] copies a cave out of its lane when first asked for, which costs
    /// more per cave (one cave's words gathered across the lanes) but nothing for the caves
    /// never asked. Until this is called, the generator's metrics decide
    /// ([`MetricSet::loads_planes`]). The caves are the same either way.
    pub fn set_grids_read(&mut self, every: bool) {
        self.every_grid = Some(every);
    }

    /// Start (or stop) recording how long each stage of [`Generator::generate`] takes
    /// (`cavesweep bench` reports it); [`Generator::take_times`] returns the totals. A few
    /// clock reads per batch, none per cell.
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on.then(StageTimes::default);
    }

    /// The stage times recorded since timing was switched on or last taken.
    pub fn take_times(&mut self) -> StageTimes {
        self.timing.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Generate and measure the cave of `seed`.
    pub fn run(&mut self, seed: u64) -> Result<Cave<'_>, FillError> {
        self.make(&[seed], &[None], true)?;
        Ok(self.measured(seed))
    }

    /// Slot 0's cave, measured.
    fn measured(&mut self, seed: u64) -> Cave<'_> {
        let slot = &self.slots[0];
        self.measurer
            .measure(&slot.grid, &self.cfg, &mut self.values);
        Cave {
            seed,
            grid: &slot.grid,
            trajectory: &slot.trajectory,
            values: &self.values,
        }
    }

    /// The start grid of `seed`'s cave: the recipe's fill alone, before any pass.
    pub fn fill(&mut self, seed: u64) -> Result<&Grid, FillError> {
        self.measure_in = None;
        self.fill_one(0, seed, None)?;
        Ok(&self.slots[0].grid)
    }

    /// The cave the recipe makes from `start` instead of its fill: the passes and post-steps
    /// run on a copy of `start`, then the metrics. Random post-steps (`bridge`) draw from
    /// `seed`'s stream as the fill leaves it, so `run_from(fill(seed), seed)` is `run(seed)`.
    /// `start` must have the recipe's shape.
    pub fn run_from(&mut self, start: &Grid, seed: u64) -> Result<Cave<'_>, FillError> {
        assert_eq!(
            (start.rows(), start.cols()),
            (self.recipe.rows, self.recipe.cols),
            "the start grid has the recipe's shape"
        );
        let cells = (self.recipe.rows * self.recipe.cols) as f64;
        // The fill seeds slot 0's stream and draws what it draws; its cells are then replaced.
        self.fill(seed)?;
        let slot = &mut self.slots[0];
        slot.grid.copy_from(start);
        slot.trajectory.clear();
        slot.trajectory.push(start.count_walls() as f64 / cells);
        run_passes(&mut self.stepper, &self.recipe.passes, slot, cells);
        self.post_steps(1);
        Ok(self.measured(seed))
    }

    /// Generate the caves of every seed in `seeds`, in ascending order, handing each to `visit`
    /// unmeasured: the visitor measures what it needs through [`Generated`]. This is the entry
    /// point of the sweep and search engines; it batches seeds in SIMD lanes (see the module
    /// docs), and each cave is exactly the one [`Generator::run`] makes for its seed.
    /// Stops early when `visit` returns `Break`.
    pub fn generate(
        &mut self,
        seeds: std::ops::Range<u64>,
        mut visit: impl FnMut(&mut Generated<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, FillError> {
        self.generate_jobs(&[(f64::NAN, seeds)], true, |_, cave| visit(cave))
    }

    /// The fill probability with which `other`'s caves can be made in the same lane batches
    /// as this generator's recipe ([`Generator::generate_points`]), or `None` when they cannot:
    /// `other` must be this recipe but for the Bernoulli fill's probability, whose threshold
    /// draws as many levels per word as this one's ([`Threshold::shares_lanes`]), and this
    /// recipe must be made in lanes at all.
    pub fn lane_probability(&self, other: &Recipe) -> Option<f64> {
        let Route::Lanes { th, .. } = self.route else {
            return None;
        };
        // Every field that shapes a cave or its measuring, named so that a new field must be
        // considered here (`name` and `about` are only labels).
        let Recipe {
            name: _,
            about: _,
            rows,
            cols,
            fill,
            rng,
            passes,
            post,
            spawn,
            exit,
            connectivity,
        } = other;
        let r = &self.recipe;
        let Fill::Bernoulli { p } = *fill else {
            return None;
        };
        let same = (*rows, *cols, *rng, *spawn, *exit, *connectivity)
            == (r.rows, r.cols, r.rng, r.spawn, r.exit, r.connectivity)
            && *passes == r.passes
            && *post == r.post;
        (same && Threshold::new(p).is_ok_and(|t| t.shares_lanes(&th))).then_some(p)
    }

    /// [`Generator::lane_probability`] of this generator's recipe with its Bernoulli fill's
    /// probability replaced by `p` (what a grid point differing only in `fill` has), without
    /// building and comparing that recipe: a grid of 100,000 points asks this once per point.
    pub fn lane_probability_of(&self, p: f64) -> Option<f64> {
        let Route::Lanes { th, .. } = self.route else {
            return None;
        };
        let Fill::Bernoulli { .. } = self.recipe.fill else {
            return None;
        };
        Threshold::new(p)
            .is_ok_and(|t| t.shares_lanes(&th))
            .then_some(p)
    }

    /// [`Generator::generate`] for several grid points at once: job `j` is the seeds
    /// `jobs[j].1` of this recipe filled with probability `jobs[j].0` (each checked with
    /// [`Generator::lane_probability`] by the caller). The caves are visited job after job, each
    /// job's in seed order, with the job's index; a lane batch may hold the last seeds of one
    /// job and the first of the next, so a grid of many points with few seeds each runs full
    /// batches instead of a short one per point. Each cave is still exactly the one a
    /// generator of its own point's recipe makes.
    pub fn generate_points(
        &mut self,
        jobs: &[(f64, std::ops::Range<u64>)],
        mut visit: impl FnMut(usize, &mut Generated<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, FillError> {
        let Route::Lanes { th, .. } = self.route else {
            // One cave at a time: nothing to share; only the recipe's own probability.
            let mut flow = ControlFlow::Continue(());
            for (j, (p, seeds)) in jobs.iter().enumerate() {
                debug_assert!(matches!(self.recipe.fill, Fill::Bernoulli { p: q } if q == *p));
                flow = self.generate(seeds.clone(), |cave| visit(j, cave))?;
                if flow.is_break() {
                    break;
                }
            }
            return Ok(flow);
        };
        debug_assert!(
            jobs.iter()
                .all(|(p, _)| Threshold::new(*p).is_ok_and(|t| t.shares_lanes(&th)))
        );
        self.generate_jobs(jobs, false, visit)
    }

    /// The batch loop behind [`Generator::generate`] and [`Generator::generate_points`]: job
    /// `j` is seeds `jobs[j].1` filled with probability `jobs[j].0`, or with the recipe's own
    /// when `own`.
    fn generate_jobs(
        &mut self,
        jobs: &[(f64, std::ops::Range<u64>)],
        own: bool,
        mut visit: impl FnMut(usize, &mut Generated<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, FillError> {
        let l = self.slots.len();
        let mut batch = [0u64; 8];
        let mut owner = [0usize; 8];
        let mut ths: [Option<Threshold>; 8] = [None; 8];
        let (mut job, mut next) = (0, jobs.first().map_or(0, |j| j.1.start));
        loop {
            let mut n = 0;
            while n < l && job < jobs.len() {
                let (p, seeds) = &jobs[job];
                let th = if own { None } else { Some(Threshold::new(*p)?) };
                let take = (seeds.end.saturating_sub(next)).min((l - n) as u64) as usize;
                for k in 0..take {
                    batch[n + k] = next + k as u64;
                    owner[n + k] = job;
                    ths[n + k] = th;
                }
                n += take;
                next += take as u64;
                if next >= seeds.end {
                    job += 1;
                    if let Some(j) = jobs.get(job) {
                        next = j.1.start;
                    }
                }
            }
            if n == 0 {
                return Ok(ControlFlow::Continue(()));
            }
            let every = self
                .every_grid
                .unwrap_or_else(|| self.cfg.metrics.loads_planes());
            self.make(&batch[..n], &ths[..n], every)?;
            if self.measure_in.is_some() {
                let (rows, cols) = (self.recipe.rows, self.recipe.cols);
                self.measurer.begin_batch(self.simd, rows, cols);
            }
            let cells = self.recipe.rows * self.recipe.cols;
            for (k, &seed) in batch[..n].iter().enumerate() {
                let slot = &mut self.slots[k];
                let view = match self.measure_in {
                    Some(b) if !self.copied => self.measurer.lazy_in_lanes(
                        &mut slot.grid,
                        &self.cfg,
                        &mut self.lanes[b],
                        k,
                    ),
                    Some(b) => self
                        .measurer
                        .lazy_in(&slot.grid, &self.cfg, &mut self.lanes[b], k),
                    None => self.measurer.lazy(&slot.grid, &self.cfg),
                };
                let mut view = view.with_walls(final_walls(&slot.trajectory, cells));
                // A final `bridge` joins all FLOOR into one 8-connected component.
                if self.recipe.post.last() == Some(&PostStep::Bridge)
                    && self.recipe.connectivity == Connectivity::Eight
                {
                    view = view.with_one_component();
                }
                let mut cave = Generated {
                    seed,
                    trajectory: &slot.trajectory,
                    view,
                };
                if visit(owner[k], &mut cave).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
    }
}

/// Apply every pass of a recipe to one cave, recording the wall fraction after each step.
fn run_passes(stepper: &mut Stepper, passes: &[Pass], slot: &mut Slot, cells: f64) {
    for pass in passes {
        for _ in 0..pass.repeat {
            let walls = stepper.step(&mut slot.grid, pass);
            slot.trajectory.push(walls as f64 / cells);
        }
    }
}

/// A part of a batch made in lanes, in a SIMD clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The fill, into buffer 0 (the wall fraction starts each trajectory).
    Fill,
    /// The slots' filled grids loaded into buffer 0 ([`Route::GridLanes`]).
    Load,
    /// Every pass (each one [`kernel::lane_pass`]), from buffer `cur` back and forth.
    Steps,
    /// Each wanted cave copied out of buffer `cur` to its slot.
    Copy,
}

/// One phase of a lane batch in a SIMD clone; returns the buffer holding the batch afterwards.
///
/// `ths` and `seeds` are each lane's fill probability and seed (the fill seeds the lanes'
/// streams from them); `columns` is the in-place column-major pass's scratch; `cur` the buffer
/// holding the batch; `slots` the caves wanted (a prefix of the lanes); `rngs` one stream per
/// lane.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn run_phase<I: Isa>(
    phase: Phase,
    recipe: &Recipe,
    ths: &[Threshold; 8],
    seeds: &[u64; 8],
    bufs: &mut [LaneBuf; 2],
    columns: &mut LaneBuf,
    mut cur: usize,
    slots: &mut [Slot],
    rngs: &mut [CaveRng],
) -> usize {
    let (rows, cols) = (recipe.rows, recipe.cols);
    let cells = (rows * cols) as f64;
    let n = <I::Lanes as Lane>::N;
    let [b0, b1] = bufs;
    match phase {
        Phase::Fill => {
            let mut a = b0.view::<I::Lanes>(rows, cols);
            let counts = fill::bernoulli_lanes(
                a.raw_mut(),
                rows,
                cols,
                &ths[..n],
                &seeds[..n],
                &mut rngs[..n],
            );
            for (k, slot) in slots.iter_mut().enumerate() {
                slot.trajectory.clear();
                slot.trajectory.push(counts.get(k) as f64 / cells);
            }
            0
        }
        Phase::Load => {
            let mut a = b0.view::<I::Lanes>(rows, cols);
            a.grids_to_lanes(slots.iter().map(|s| &s.grid));
            // The buffer may last have held another shape: zero its guards.
            a.clear_edges();
            0
        }
        Phase::Steps => {
            let (mut a, mut b) = if cur == 0 {
                (
                    b0.view::<I::Lanes>(rows, cols),
                    b1.view::<I::Lanes>(rows, cols),
                )
            } else {
                (
                    b1.view::<I::Lanes>(rows, cols),
                    b0.view::<I::Lanes>(rows, cols),
                )
            };
            // The other buffer's guard rows read as FLOOR until a step prepares them; its
            // rows are all written by the first step, its side guards never read unless a
            // step prepares them (see `LaneGrid::clear_guard_rows`).
            b.clear_guard_rows();
            for pass in &recipe.passes {
                for _ in 0..pass.repeat {
                    let c = if let Some(masks) = kernel::sync_moore(pass) {
                        let c =
                            kernel::step_lanes(&mut a, &mut b, masks, pass.outside, pass.border);
                        std::mem::swap(&mut a, &mut b);
                        cur ^= 1;
                        c
                    } else if let Some(t) = kernel::tworadius::lanes_fit(pass) {
                        let c = kernel::tworadius::step_two_radius_lanes(
                            &mut a,
                            &mut b,
                            t,
                            pass.outside,
                            pass.border,
                        );
                        std::mem::swap(&mut a, &mut b);
                        cur ^= 1;
                        c
                    } else {
                        let how = kernel::inplace_lanes::colmajor_fits(pass, rows)
                            .expect("checked when planning");
                        kernel::inplace_lanes::step_colmajor(&mut a, columns.vectors(cols), how)
                    };
                    for (k, slot) in slots.iter_mut().enumerate() {
                        slot.trajectory.push(c.get(k) as f64 / cells);
                    }
                }
            }
            cur
        }
        Phase::Copy => {
            let a = if cur == 0 { b0 } else { b1 }.view::<I::Lanes>(rows, cols);
            a.lanes_to_grids(slots);
            cur
        }
    }
}

/// Time spent per stage by [`Generator::generate`] (see [`Generator::set_timing`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes {
    /// Caves made.
    pub caves: u64,
    /// The fill (in lanes or per cave).
    pub fill: std::time::Duration,
    /// The passes (in lanes or per cave), wall counts for the trajectory included.
    pub passes: std::time::Duration,
    /// Copying caves out of the lanes to their grids.
    pub copy: std::time::Duration,
    /// Post-steps.
    pub post: std::time::Duration,
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
    /// The seed this cave was generated from (with the recipe, all it depends on).
    pub seed: u64,
    /// Wall fraction after the fill, after each pass application, after each post-step.
    pub trajectory: &'a [f64],
    view: Lazy<'a>,
}

impl Generated<'_> {
    /// The final grid. A cave measured where its batch made it (in SIMD lanes) is copied out
    /// only when first asked for: a sweep that reads metrics alone never pays for it.
    #[inline]
    pub fn grid(&mut self) -> &Grid {
        self.view.grid()
    }

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

    /// `run_from(fill(seed), seed)` is `run(seed)` for every preset and both RNGs: grid,
    /// trajectory and metrics (NetHack's bridge draws from the stream the fill left).
    #[test]
    fn run_from_the_fill_is_run() {
        for name in NAMES {
            for rng in ["xoshiro", "numpy"] {
                let mut r = preset(name).unwrap();
                if rng == "numpy" && r.set_kv("rng=numpy").is_err() {
                    continue;
                }
                let mut g = Generator::new(&r, MetricSet::ALL).unwrap();
                let mut own = Generator::new(&r, MetricSet::ALL).unwrap();
                for seed in [0u64, 7, 31_575, u64::MAX - 1] {
                    let start = own.fill(seed).unwrap().clone();
                    let a = own.run_from(&start, seed).unwrap();
                    let (ga, ta, va) = (a.grid.clone(), a.trajectory.to_vec(), *a.values);
                    let b = g.run(seed).unwrap();
                    assert_eq!(&ga, b.grid, "{name} {rng} seed {seed}");
                    assert_eq!(ta, b.trajectory, "{name} {rng} seed {seed}");
                    assert_eq!(
                        va.map(f64::to_bits),
                        b.values.map(f64::to_bits),
                        "{name} {rng} seed {seed}"
                    );
                }
            }
        }
    }

    /// `generate`'s lazy caves measure exactly what `run` measures, whatever is asked first,
    /// and the fractions taken from the trajectory equal a fresh popcount.
    #[test]
    fn generated_caves_measure_like_run() {
        for name in NAMES {
            let mut r = preset(name).unwrap();
            r.set_kv("exit=3,3").unwrap();
            let mut eager = Generator::new(&r, MetricSet::ALL).unwrap();
            let mut lazy = Generator::new(&r, MetricSet::ALL).unwrap();
            // Grids copied out of the lanes one by one, when asked (after the fractions).
            lazy.set_grids_read(false);
            let mut n = 0;
            let _ = lazy
                .generate(100..140, |cave| {
                    let want = *eager.run(cave.seed).unwrap().values;
                    let g = cave.grid();
                    let walls = g.count_walls() as f64 / g.cells() as f64;
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

    /// Caves made across grid points in shared lane batches are, seed for seed, those a
    /// generator of each point's own recipe makes, with every metric, on every SIMD path:
    /// jobs of 1 to 19 seeds (batches that hold the end of one job and the start of the next,
    /// and a short tail), probabilities with and without a tail, and every preset whose caves
    /// are made in lanes (with and without post-steps).
    #[test]
    fn caves_of_several_points_in_shared_batches_are_each_points_own() {
        let ps = [0.45, 0.3, 1365.0 / 4096.0, 0.61, 0.5 + 1e-7, 0.52, 0.41];
        let sizes = [1u64, 10, 3, 19, 8, 2, 7];
        for simd in Simd::available() {
            for name in NAMES {
                let mut r = preset(name).unwrap();
                r.set_kv("exit=3,3").unwrap();
                r.fill = Fill::Bernoulli { p: ps[0] };
                let mut g = Generator::with_simd(&r, MetricSet::ALL, simd).unwrap();
                if g.lane_probability(&r).is_none() {
                    continue; // made one at a time (numpy, exact count, in-place passes)
                }
                let mut jobs = Vec::new();
                let mut start = 5;
                for (&p, &n) in ps.iter().zip(&sizes) {
                    let mut q = r.clone();
                    q.fill = Fill::Bernoulli { p };
                    q.name = format!("{name} at {p}"); // labels do not matter
                    assert_eq!(g.lane_probability(&q), Some(p), "{name} {p}");
                    jobs.push((p, start..start + n));
                    start += n + 1000;
                }
                let mut seen = Vec::new();
                let _ = g
                    .generate_points(&jobs, |j, cave| {
                        seen.push((j, cave.seed));
                        let mut q = r.clone();
                        q.fill = Fill::Bernoulli { p: jobs[j].0 };
                        let mut own = Generator::with_simd(&q, MetricSet::ALL, simd).unwrap();
                        let want = own.run(cave.seed).unwrap();
                        let seed = cave.seed;
                        assert_eq!(cave.grid(), want.grid, "{simd} {name} job {j} {seed}");
                        assert_eq!(cave.trajectory, want.trajectory);
                        let mut all = EMPTY_VALUES;
                        cave.measure(&mut all);
                        assert!(
                            all.iter()
                                .zip(want.values)
                                .all(|(a, b)| a == b || a.is_nan() && b.is_nan()),
                            "{simd} {name} job {j}"
                        );
                        ControlFlow::Continue(())
                    })
                    .unwrap();
                let expect: Vec<(usize, u64)> = jobs
                    .iter()
                    .enumerate()
                    .flat_map(|(j, (_, s))| s.clone().map(move |seed| (j, seed)))
                    .collect();
                assert_eq!(seen, expect, "{simd} {name}: job after job, seeds in order");
            }
        }
    }

    /// Only a change of the fill probability lets points share batches, and only between
    /// probabilities that draw as many levels.
    #[test]
    fn what_may_share_lane_batches() {
        let r = preset("chapter-strict").unwrap();
        let g = Generator::new(&r, MetricSet::ALL).unwrap();
        let with = |kv: &str| {
            let mut q = r.clone();
            q.set_kv(kv).unwrap();
            g.lane_probability(&q)
        };
        assert_eq!(with("fill=0.3"), Some(0.3));
        assert_eq!(with("fill=0.25"), None); // 2 levels, not 12
        assert_eq!(with("fill=1"), None);
        assert_eq!(with("fill=0"), None);
        assert_eq!(with("steps=5"), None);
        assert_eq!(with("rng=numpy"), None);
        assert_eq!(with("connectivity=8"), None);
        assert_eq!(with("spawn=1,1"), None);
        let mut q = r.clone();
        q.set_kv("fill=0.3").unwrap();
        q.set_kv("rng=numpy").unwrap();
        let numpy = Generator::new(&q, MetricSet::ALL).unwrap();
        assert_eq!(numpy.lane_probability(&q), None);
    }
}
