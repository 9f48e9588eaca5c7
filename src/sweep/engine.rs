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

use super::output::{point_rows, seed_row};
use super::stats::{PointBuilder, PointStats};
use super::{PerSeed, Plan};
use crate::generate::Generator;
use crate::measure::{EMPTY_VALUES, Values};

/// What a chunk does beyond generating its caves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Collect the chunk's statistics (part of a point that has other chunks).
    Part,
    /// The chunk is the whole point (of this shard's share): close it, and format its final
    /// rows when `rows`.
    Whole { rows: bool },
    /// Only the `seeds.csv` rows (a repair of lost rows): no statistics.
    RowsOnly,
}

/// A closed grid point, ready to store and write.
pub struct Closed {
    pub seeds: u64,
    pub passed: u64,
    /// [`PointStats::encode`]'s bytes.
    pub record: Vec<u8>,
    /// Its rows of summary.csv, trajectory.csv and components.csv ([`point_rows`]), when asked.
    pub rows: Option<[Vec<u8>; 3]>,
}

/// A chunk's statistics.
pub enum ChunkStats {
    Part(PointStats),
    Whole(Closed),
}

/// The outcome of one chunk.
pub struct ChunkResult {
    pub id: u64,
    pub point: usize,
    /// `None` when only the rows were asked for (a repair).
    pub stats: Option<ChunkStats>,
    /// `seeds.csv` rows (no header), in seed order, and how many.
    pub rows: Vec<u8>,
    pub n_rows: u64,
}

/// A worker's reusable state.
pub struct Worker {
    /// The grid point the generator, builder and params are set up for.
    point: Option<usize>,
    generator: Option<Generator>,
    builder: Option<PointBuilder>,
    params: Vec<String>,
    values: Values,
    /// A closed point's statistics, reused from point to point.
    closed: Option<PointStats>,
}

impl Default for Worker {
    fn default() -> Worker {
        Worker {
            point: None,
            generator: None,
            builder: None,
            params: Vec::new(),
            values: EMPTY_VALUES,
            closed: None,
        }
    }
}

impl Worker {
    fn prepare(&mut self, plan: &Plan, point: usize) {
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
        self.params = plan.params(point);
        self.point = Some(point);
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
    let rows_only = mode == Mode::RowsOnly;
    let (point, seeds) = plan.chunk(id);
    w.prepare(plan, point);
    let Worker {
        generator,
        builder,
        params,
        values,
        closed,
        ..
    } = w;
    let generator = generator.as_mut().expect("prepared");
    let builder = builder.as_mut().expect("prepared");
    let per_seed = plan.spec.per_seed;
    let mut rows = Vec::new();
    let mut n_rows = 0;
    let mut stopped = false;
    let flow = generator
        .generate(seeds, |cave| {
            if cave.seed % STOP_CHECK == 0 && stop.load(Ordering::Relaxed) {
                stopped = true;
                return ControlFlow::Break(());
            }
            cave.measure(values);
            let gate = plan.spec.gate.eval(values);
            if !rows_only {
                builder.record(cave.trajectory, values, gate);
            }
            let keep = match per_seed {
                PerSeed::All => true,
                PerSeed::Kept => gate.pass(),
                PerSeed::None => false,
            };
            if keep {
                seed_row(
                    &mut rows,
                    cave.seed,
                    params,
                    plan.computed,
                    values,
                    gate,
                    plan.spec.gate.named().len(),
                );
                n_rows += 1;
            }
            ControlFlow::Continue(())
        })
        .expect("plan recipes are validated");
    if stopped || flow.is_break() {
        // Leave the builder empty for the next chunk.
        builder.finish();
        return None;
    }
    let stats = match mode {
        Mode::RowsOnly => None,
        Mode::Part => Some(ChunkStats::Part(builder.finish())),
        Mode::Whole { rows } => {
            let st = closed.get_or_insert_with(|| PointStats::new(builder.shape()));
            builder.finish_into(st);
            Some(ChunkStats::Whole(Closed {
                seeds: st.seeds,
                passed: st.passed,
                record: st.encode(),
                rows: rows.then(|| point_rows(plan, params, st)),
            }))
        }
    };
    Some(ChunkResult {
        id,
        point,
        stats,
        rows,
        n_rows,
    })
}
