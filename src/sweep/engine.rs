//! One chunk of a sweep, on a worker thread: generate its caves, measure, gate, record
//! statistics and `seeds.csv` rows. Workers reuse their generator and buffers from chunk to chunk
//! and from grid point to grid point.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use super::output::seed_row;
use super::stats::{PointBuilder, PointStats};
use super::{PerSeed, Plan};
use crate::generate::Generator;
use crate::measure::{EMPTY_VALUES, Values};

/// The outcome of one chunk.
pub struct ChunkResult {
    pub id: u64,
    pub point: usize,
    /// `None` when only the rows were asked for (a repair).
    pub stats: Option<PointStats>,
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
}

impl Default for Worker {
    fn default() -> Worker {
        Worker {
            point: None,
            generator: None,
            builder: None,
            params: Vec::new(),
            values: EMPTY_VALUES,
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

/// Run chunk `id`. With `rows_only`, statistics are not collected (a repair of lost rows).
/// Returns `None` when `stop` was raised before it finished (its partial work is dropped: a
/// chunk is the unit of persistence).
pub fn run_chunk(
    plan: &Plan,
    id: u64,
    w: &mut Worker,
    stop: &AtomicBool,
    rows_only: bool,
) -> Option<ChunkResult> {
    let (point, seeds) = plan.chunk(id);
    w.prepare(plan, point);
    let Worker {
        generator,
        builder,
        params,
        values,
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
                    gate.pass(),
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
    Some(ChunkResult {
        id,
        point,
        stats: (!rows_only).then(|| builder.finish()),
        rows,
        n_rows,
    })
}
