//! One chunk of a sweep, on a worker thread: generate its caves, measure, gate, record
//! statistics and `seeds.csv` rows. Workers reuse their generator and buffers from chunk to chunk
//! and from grid point to grid point.
//!
//! A chunk that is the whole of its grid point (every point of a big grid with few seeds per
//! point) is also *closed* here: the worker encodes the point's store record and formats its
//! rows of the final files, so the collector thread, which is one thread for all workers, only
//! stores and appends bytes. On a 100,000-point grid that work is most of the sweep's cost
//! beyond the caves themselves.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use super::output::{self, point_rows, seed_row};
use super::stats::{PointBuilder, PointStats};
use super::{PerSeed, Plan};
use crate::failpoint;
use crate::store::parquet::{Batch, BatchPool, Columns, Typed};
use cavesweep_core::generate::Generator;
use cavesweep_core::measure::{EMPTY_VALUES, Values};
use cavesweep_core::query::GateResult;

/// What a chunk does beyond generating its caves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Collect the chunk's statistics (part of a point that has other chunks).
    Part,
    /// The chunk is the whole point (of this shard's share): close it, and format its final
    /// rows when `rows`.
    Whole {
        /// Also format the point's rows of the final files ([`Closed::rows`]).
        rows: bool,
    },
    /// Only the `seeds.csv` rows (a repair of lost rows): no statistics.
    RowsOnly,
}

/// A closed grid point, ready to store and write.
pub struct Closed {
    /// Caves of the point (this shard's share).
    pub seeds: u64,
    /// Of those, caves that passed the gate.
    pub passed: u64,
    /// [`PointStats::encode`]'s bytes.
    pub record: Vec<u8>,
    /// Its rows of summary.csv, trajectory.csv and components.csv ([`point_rows`]), when asked.
    pub rows: Option<[Vec<u8>; 3]>,
}

/// A chunk's statistics.
pub enum ChunkStats {
    /// Statistics of part of a point, for the collector to merge into the point's open record.
    Part(PointStats),
    /// The whole point, already closed.
    Whole(Closed),
}

/// The outcome of one chunk.
pub struct ChunkResult {
    /// The chunk's id (see [`Plan::chunk`]).
    pub id: u64,
    /// Its grid point's index.
    pub point: usize,
    /// `None` when only the rows were asked for (a repair).
    pub stats: Option<ChunkStats>,
    /// `seeds.csv` rows (no header), in seed order, and how many.
    pub rows: Vec<u8>,
    /// The number of rows in `rows`.
    pub n_rows: u64,
    /// The same rows as typed values for `seeds.parquet`, when the worker was asked for them
    /// ([`Worker::with_typed_rows`]).
    pub typed: Option<Batch>,
}

/// A worker's reusable state.
pub struct Worker {
    /// The grid point the generator and builder are set up for.
    point: Option<usize>,
    generator: Option<Generator>,
    builder: Option<PointBuilder>,
    /// The parameter values of grid point `params_of` (may differ from `point` after a run of
    /// chunks of several points).
    params: Vec<String>,
    params_of: Option<usize>,
    values: Values,
    /// A closed point's statistics, reused from point to point.
    closed: Option<PointStats>,
    /// The columns of `seeds.parquet`, when the chunks' rows are also built typed, and the
    /// emptied batches to fill again.
    typed: Option<Columns>,
    pool: BatchPool,
}

impl Default for Worker {
    fn default() -> Worker {
        Worker {
            point: None,
            generator: None,
            builder: None,
            params: Vec::new(),
            params_of: None,
            values: EMPTY_VALUES,
            closed: None,
            typed: None,
            pool: BatchPool::default(),
        }
    }
}

impl Worker {
    /// A worker that also builds its chunks' seed rows as typed values for `seeds.parquet`
    /// ([`ChunkResult::typed`]), so that the collector writes them without parsing the CSV
    /// rows. Why in the worker: values are at hand there, and the workers are many while the
    /// collector is one; parsing ten million rows back on the collector thread cost a fifth of
    /// a sweep's time.
    /// Batches come from `pool` when it has some (the writer hands them back).
    pub fn with_typed_rows(plan: &Plan, pool: BatchPool) -> Worker {
        Worker {
            typed: (plan.spec.per_seed != PerSeed::None && plan.spec.format.parquet())
                .then(|| output::columns(plan, "seeds")),
            pool,
            ..Worker::default()
        }
    }

    fn prepare(&mut self, plan: &Plan, point: usize) {
        set_params(plan, &mut self.params, &mut self.params_of, point);
        if self.point == Some(point) {
            return;
        }
        let recipe = plan.recipe(point);
        match &mut self.generator {
            Some(g) => g
                .set_recipe(recipe, plan.computed)
                .expect("plan recipes are validated"),
            None => {
                self.generator = Some(
                    Generator::new(&recipe, plan.computed).expect("plan recipes are validated"),
                )
            }
        }
        let shape = plan.shape(point);
        if self.builder.as_ref().is_none_or(|b| b.shape() != shape) {
            self.builder = Some(PointBuilder::new(shape));
        }
        self.point = Some(point);
    }
}

/// Make `params` the parameter values of `point` (formatted only when it changes).
fn set_params(plan: &Plan, params: &mut Vec<String>, of: &mut Option<usize>, point: usize) {
    if *of != Some(point) {
        *params = plan.params(point);
        *of = Some(point);
    }
}

/// How often (in seeds) a chunk looks at the stop flag.
const STOP_CHECK: u64 = 256;

/// Run chunk `id` (see [`Mode`]). Returns `None` when `stop` was raised before it finished (its
/// partial work is dropped: a chunk is the unit of persistence).
pub fn run_chunk(
    plan: &Plan,
    id: u64,
    w: &mut Worker,
    stop: &AtomicBool,
    mode: Mode,
) -> Option<ChunkResult> {
    run_chunks(plan, &[id], w, stop, |_| mode).pop()
}

/// Run the chunks `ids` (consecutive small chunks of a grid, in order; `mode(id)` says what
/// each one does), returning the results of those that finished before `stop` was raised.
///
/// Chunks whose grid points differ only in the fill probability are made together
/// ([`Generator::generate_points`]): a grid of many points with a few seeds each runs full
/// lane batches across points instead of a short batch (or single caves) at the end of every
/// point. Each chunk's statistics and rows are still built from its own caves alone, in seed
/// order, so the results are the ones each chunk gives on its own.
pub fn run_chunks(
    plan: &Plan,
    ids: &[u64],
    w: &mut Worker,
    stop: &AtomicBool,
    mode: impl Fn(u64) -> Mode,
) -> Vec<ChunkResult> {
    let mut out = Vec::with_capacity(ids.len());
    // A test hook: `chunk-start` holds a worker before a chunk until it is stopped (a Slurm
    // requeue mid-sweep). While it is set, chunks run one by one, so that it holds between the
    // chunks of a group, those before it done and returned.
    let hook = failpoint::configured("chunk-start");
    let mut i = 0;
    while i < ids.len() {
        if hook {
            failpoint::hold("chunk-start", stop);
            if stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let (point, seeds) = plan.chunk(ids[i]);
        w.prepare(plan, point);
        let generator = w.generator.as_ref().expect("prepared");
        // The run of chunks that can share lane batches with this one.
        let own = lane_p(generator);
        let mut jobs = vec![(own, seeds)];
        let mut j = i + 1;
        if own.is_some() && !hook {
            while let Some(&id) = ids.get(j) {
                let (q, seeds) = plan.chunk(id);
                // Same recipe but the fill: same trajectory length and statistics shape. The
                // varied values tell without building q's recipe, when only the fill differs.
                let p = if q == point {
                    own
                } else {
                    match plan.fill_only_change(point, q) {
                        Some(p) => generator.lane_probability_of(p),
                        None => generator.lane_probability(&plan.recipe(q)),
                    }
                };
                if p.is_none() {
                    break;
                }
                jobs.push((p, seeds));
                j += 1;
            }
        }
        let run = &ids[i..j];
        if !run_together(plan, run, &jobs, w, stop, &mode, &mut out) {
            break;
        }
        i = j;
    }
    out
}

/// The fill probability of the recipe `generator` is set up for, if it makes its caves in
/// lanes that other points may share.
fn lane_p(generator: &Generator) -> Option<f64> {
    generator.lane_probability(generator.recipe())
}

/// A chunk being collected: its statistics builder, `seeds.csv` rows and the buffers a closed
/// point reuses.
struct Collect<'a> {
    plan: &'a Plan,
    builder: &'a mut PointBuilder,
    closed: &'a mut Option<PointStats>,
    params: &'a mut Vec<String>,
    params_of: &'a mut Option<usize>,
    rows: Vec<u8>,
    n_rows: u64,
    /// Typed rows, when asked ([`Worker::with_typed_rows`]): the columns, the batch, and the
    /// parameters of the point `typed_of` as typed values.
    columns: Option<&'a Columns>,
    pool: &'a BatchPool,
    typed: Option<Batch>,
    typed_params: Vec<Typed>,
    typed_of: Option<usize>,
}

impl Collect<'_> {
    /// The result of chunk `id`, whose caves the builder has recorded (and whose `seeds.csv`
    /// rows are in `rows`): the statistics as `mode` asks.
    fn finish(&mut self, id: u64, mode: Mode) -> ChunkResult {
        let point = self.plan.chunk(id).0;
        let stats = match mode {
            Mode::RowsOnly => None,
            Mode::Part => Some(ChunkStats::Part(self.builder.finish())),
            Mode::Whole { rows } => {
                set_params(self.plan, self.params, self.params_of, point);
                let st = self
                    .closed
                    .get_or_insert_with(|| PointStats::new(self.builder.shape()));
                self.builder.finish_into(st);
                Some(ChunkStats::Whole(Closed {
                    seeds: st.seeds,
                    passed: st.passed,
                    record: st.encode(),
                    rows: rows.then(|| point_rows(self.plan, self.params, st)),
                }))
            }
        };
        ChunkResult {
            id,
            point,
            stats,
            rows: std::mem::take(&mut self.rows),
            n_rows: std::mem::take(&mut self.n_rows),
            // Made by the chunk's first kept row ([`Collect::typed_row`]).
            typed: self.typed.take(),
        }
    }

    /// Append a kept cave's typed row (as [`seed_row`] prints it) to the batch, if one is built.
    fn typed_row(&mut self, id: u64, seed: u64, values: &Values, gate: GateResult) {
        let Some(cols) = self.columns else {
            return;
        };
        let (point, seeds) = self.plan.chunk(id);
        if self.typed_of != Some(point) {
            let np = self.plan.spec.varies.len();
            self.typed_params = self
                .plan
                .params(point)
                .iter()
                .zip(&cols[1..=np])
                .map(|(text, (_, ty))| Typed::parse(text, *ty).unwrap_or(Typed::Null))
                .collect();
            self.typed_of = Some(point);
        }
        let pool = self.pool;
        let b = self.typed.get_or_insert_with(|| {
            pool.take()
                .unwrap_or_else(|| Batch::with_capacity(cols, (seeds.end - seeds.start) as usize))
        });
        let mut c = 0;
        b.int(c, seed as i64);
        c += 1;
        for v in &self.typed_params {
            b.value(c, v);
            c += 1;
        }
        for m in self.plan.computed.iter() {
            b.f64(c, values[m.index()]);
            c += 1;
        }
        b.bool(c, gate.pass());
        c += 1;
        for j in 0..self.plan.spec.gate.named().len() {
            b.bool(c, gate.named_pass(j));
            c += 1;
        }
        b.end_row();
    }
}

/// Run the chunks `run` (with their fill probabilities and seeds, `jobs`) in one stream of
/// lane batches, pushing each finished chunk's result to `out`. `false` when stopped.
fn run_together(
    plan: &Plan,
    run: &[u64],
    jobs: &[(Option<f64>, std::ops::Range<u64>)],
    w: &mut Worker,
    stop: &AtomicBool,
    mode: &impl Fn(u64) -> Mode,
    out: &mut Vec<ChunkResult>,
) -> bool {
    let Worker {
        generator,
        builder,
        params,
        params_of,
        values,
        closed,
        point: _,
        typed,
        pool,
    } = w;
    let generator = generator.as_mut().expect("prepared");
    let columns = typed.as_ref();
    let mut c = Collect {
        plan,
        builder: builder.as_mut().expect("prepared"),
        closed,
        params,
        params_of,
        rows: Vec::new(),
        n_rows: 0,
        columns,
        pool,
        typed: None,
        typed_params: Vec::new(),
        typed_of: None,
    };
    let per_seed = plan.spec.per_seed;
    let mut stopped = false;
    let mut current = 0;
    let mut current_mode = mode(run[0]);
    let mut visit = |job: usize, cave: &mut cavesweep_core::generate::Generated<'_>| {
        if job != current {
            // Chunk `current` is complete: every cave of a job comes before the next job's.
            out.push(c.finish(run[current], current_mode));
            current = job;
            current_mode = mode(run[job]);
            if per_seed != PerSeed::None {
                set_params(plan, c.params, c.params_of, plan.chunk(run[job]).0);
            }
        }
        if cave.seed.is_multiple_of(STOP_CHECK) && stop.load(Ordering::Relaxed) {
            stopped = true;
            return ControlFlow::Break(());
        }
        cave.measure(values);
        let gate = plan.spec.gate.eval(values);
        if current_mode != Mode::RowsOnly {
            c.builder.record(cave.trajectory, values, gate);
        }
        let keep = match per_seed {
            PerSeed::All => true,
            PerSeed::Kept => gate.pass(),
            PerSeed::None => false,
        };
        if keep {
            seed_row(
                &mut c.rows,
                cave.seed,
                c.params,
                plan.computed,
                values,
                gate,
                plan.spec.gate.named().len(),
            );
            c.n_rows += 1;
            c.typed_row(run[current], cave.seed, values, gate);
        }
        ControlFlow::Continue(())
    };
    let flow = if run.len() == 1 {
        generator.generate(jobs[0].1.clone(), |cave| visit(0, cave))
    } else {
        let jobs: Vec<(f64, std::ops::Range<u64>)> = jobs
            .iter()
            .map(|(p, s)| (p.expect("only shared runs have several chunks"), s.clone()))
            .collect();
        generator.generate_points(&jobs, &mut visit)
    }
    .expect("plan recipes are validated");
    if stopped || flow.is_break() {
        // Leave the builder empty for the next chunk.
        c.builder.finish();
        return false;
    }
    out.push(c.finish(run[run.len() - 1], current_mode));
    true
}
