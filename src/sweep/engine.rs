//! The fan-out: chunks run on a rayon pool, each worker reusing one [`Generator`] per grid
//! point; results flow to one collecting thread that merges statistics and persists progress.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use rayon::prelude::*;

use super::output::seed_row;
use super::stats::PointStats;
use super::{PerSeed, Plan};
use crate::generate::Generator;

/// The outcome of one chunk.
pub struct ChunkResult {
    pub id: usize,
    pub point: usize,
    pub stats: PointStats,
    /// `seeds.csv` rows (no header), in seed order.
    pub rows: Vec<u8>,
}

/// A worker's generator, rebuilt only when the worker moves to another grid point.
#[derive(Default)]
pub struct GenCache {
    current: Option<(usize, Generator)>,
}

impl GenCache {
    fn get(&mut self, plan: &Plan, point: usize) -> &mut Generator {
        if self.current.as_ref().is_none_or(|(p, _)| *p != point) {
            let g = Generator::new(&plan.points[point].recipe, plan.computed)
                .expect("plan recipes are validated");
            self.current = Some((point, g));
        }
        &mut self.current.as_mut().unwrap().1
    }
}

/// Empty statistics shaped for grid point `point`.
pub fn empty_stats(plan: &Plan, point: usize) -> PointStats {
    PointStats::new(
        plan.computed,
        plan.spec.gate.clauses().len(),
        plan.points[point].recipe.trajectory_len(),
    )
}

/// Run chunk `id`. Returns `None` when `stop` was raised before it finished (its partial
/// work is dropped: a chunk is the unit of persistence).
pub fn run_chunk(
    plan: &Plan,
    id: usize,
    cache: &mut GenCache,
    stop: &AtomicBool,
) -> Option<ChunkResult> {
    let (point, seeds) = plan.chunk(id);
    let mut stats = empty_stats(plan, point);
    let mut rows = Vec::new();
    let generator = cache.get(plan, point);
    let params = &plan.points[point].params;
    for seed in seeds {
        if seed % 1024 == 0 && stop.load(Ordering::Relaxed) {
            return None;
        }
        let cave = generator.run(seed).expect("plan recipes are validated");
        let gate = plan.spec.gate.eval(cave.values);
        stats.record(cave.trajectory, cave.values, gate);
        let keep = match plan.spec.per_seed {
            PerSeed::All => true,
            PerSeed::Kept => gate.pass(),
            PerSeed::None => false,
        };
        if keep {
            seed_row(
                &mut rows,
                seed,
                params,
                plan.computed,
                cave.values,
                gate.pass(),
            );
        }
    }
    Some(ChunkResult {
        id,
        point,
        stats,
        rows,
    })
}

/// Run `ids` on `threads` threads, handing each finished chunk to `collect` on the calling
/// thread (in completion order). Stops early, without error, when `stop` is raised.
pub fn run_chunks<E>(
    plan: &Plan,
    ids: &[usize],
    threads: usize,
    stop: &AtomicBool,
    mut collect: impl FnMut(ChunkResult) -> Result<(), E>,
) -> Result<(), E> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let (tx, rx) = mpsc::sync_channel::<ChunkResult>(threads * 4);
    std::thread::scope(|s| {
        s.spawn(move || {
            pool.install(|| {
                ids.par_iter()
                    .with_max_len(1)
                    .for_each_init(GenCache::default, |cache, &id| {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        if let Some(r) = run_chunk(plan, id, cache, stop) {
                            // The receiver only hangs up after an error; then drop results.
                            let _ = tx.send(r);
                        }
                    })
            })
        });
        let mut result = Ok(());
        for r in rx {
            if result.is_ok() {
                result = collect(r);
                if result.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        result
    })
}
