//! The fan-out shared by sweeps and searches: an ordered queue of jobs pulled by rayon workers,
//! results collected on the calling thread.
//!
//! Why a pulled queue and not `par_iter` over a `Vec` of job ids: a sweep over
//! `0..18446744073709551615` seeds has 2^50 chunks, which no `Vec` holds; the jobs here come from
//! a lazy iterator behind a mutex (one lock per chunk, i.e. per thousands of caves). Workers take
//! jobs in the iterator's order, so the work in flight is always a short window of consecutive
//! jobs: a sweep keeps only a few grid points open at a time (flat memory whatever the grid), and
//! a search knows that every seed below the window is decided.
//!
//! Two ways to stop: the caller's `stop` flag (Ctrl-C: workers drop the job in hand, nothing more
//! is dispatched) and the collector returning [`ControlFlow::Break`] (enough is known: nothing more
//! is dispatched, but the jobs in flight finish and are still collected).

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Batches of results that may wait for the collector per worker thread before workers block.
/// Enough to cover the collector's once-a-second checkpoint (a transaction of ~20,000 closed
/// points on a 100,000-point grid, tens of ms) without stalling the workers: 16 batches of 2 ms
/// of work each. Bounded in memory: a batch holds at most [`BATCH_LEN`] small results or, for
/// chunks slower than 2 ms, one chunk (its `seeds.csv` rows, under a MB).
pub(crate) const BACKLOG_PER_THREAD: usize = 16;
/// A worker hands its results over in batches, at the latest after this long (or this many
/// results): a sweep of a 100,000-point grid with a few seeds per point finishes a chunk every
/// few microseconds, and waking the collector for each would cost more than the chunk.
const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(2);
const BATCH_LEN: usize = 256;

/// Why worker threads could not be started (a memory limit: each thread needs its stack).
#[derive(Debug, thiserror::Error)]
#[error("cannot start {threads} worker threads (use fewer, or raise the memory limit)")]
pub struct ThreadsError {
    threads: usize,
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// A rayon pool of `threads` workers named `cavesweep-worker-N`, or why it cannot be started:
/// every pool cavesweep starts comes from here, so a memory limit is a message, not a panic.
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, ThreadsError> {
    let threads = threads.max(1);
    let mut b = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cavesweep-worker-{i}"));
    // Unoptimised builds (`cargo run` without --release) keep the kernels' temporaries on the
    // stack and overflowed rayon's default 2 MiB; optimised builds need far less.
    if cfg!(debug_assertions) {
        b = b.stack_size(16 << 20);
    }
    b.build().map_err(|source| ThreadsError {
        threads,
        source: Box::new(source),
    })
}

/// Run `jobs` on `threads` rayon workers. Each worker makes its state with `init` once and calls
/// `work(state, job)` for job after job; a `None` result means the job was abandoned because
/// `stop` was raised. `collect` sees every result on the calling thread, in completion order.
/// Returns the first error of `collect` (after which nothing more is dispatched).
pub fn run<J, W, R, E>(
    threads: usize,
    stop: &AtomicBool,
    jobs: impl Iterator<Item = J> + Send,
    init: impl Fn() -> W + Sync,
    work: impl Fn(&mut W, J) -> Option<R> + Sync,
    collect: impl FnMut(R) -> Result<ControlFlow<()>, E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
    E: From<ThreadsError>,
{
    run_with_backlog(threads, BACKLOG_PER_THREAD, stop, jobs, init, work, collect)
}

/// [`run`] with `backlog` batches per worker thread that may wait for the collector (instead
/// of the default, 16): fewer for results that hold more memory (a sweep's chunks that
/// carry their rows twice, as CSV and typed for Parquet), so that a collector that falls
/// behind for a moment holds a few MB of them, not a hundred.
pub fn run_with_backlog<J, W, R, E>(
    threads: usize,
    backlog: usize,
    stop: &AtomicBool,
    jobs: impl Iterator<Item = J> + Send,
    init: impl Fn() -> W + Sync,
    work: impl Fn(&mut W, J) -> Option<R> + Sync,
    mut collect: impl FnMut(R) -> Result<ControlFlow<()>, E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
    E: From<ThreadsError>,
{
    let threads = threads.max(1);
    let pool = pool(threads)?;
    let jobs = Mutex::new(jobs);
    // Raised when the collector has seen enough or failed: no new jobs, in-flight ones finish.
    let no_more = AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<Vec<R>>(threads * backlog.max(1));
    std::thread::scope(|s| {
        let (jobs, no_more, init, work) = (&jobs, &no_more, &init, &work);
        // Builder::spawn_scoped, not s.spawn: a thread that cannot start is an error, not a
        // panic.
        let started = std::thread::Builder::new().spawn_scoped(s, move || {
            pool.scope(|ps| {
                for _ in 0..threads {
                    let tx = tx.clone();
                    ps.spawn(move |_| {
                        let mut state = init();
                        let mut batch: Vec<R> = Vec::new();
                        let mut since = std::time::Instant::now();
                        loop {
                            if stop.load(Ordering::Relaxed) || no_more.load(Ordering::Relaxed) {
                                break;
                            }
                            // A poisoned lock means another worker panicked: stop too.
                            let Some(job) = jobs.lock().ok().and_then(|mut it| it.next()) else {
                                break;
                            };
                            let Some(r) = work(&mut state, job) else {
                                break;
                            };
                            batch.push(r);
                            if batch.len() >= BATCH_LEN || since.elapsed() >= BATCH_TIME {
                                if tx.send(std::mem::take(&mut batch)).is_err() {
                                    return;
                                }
                                since = std::time::Instant::now();
                            }
                        }
                        // Finished work is never dropped, even when stopping.
                        if !batch.is_empty() {
                            let _ = tx.send(batch);
                        }
                    });
                }
                drop(tx);
            });
        });
        if let Err(source) = started {
            return Err(E::from(ThreadsError {
                threads,
                source: Box::new(source),
            }));
        }
        let mut result = Ok(());
        for r in rx.iter().flatten() {
            if result.is_err() {
                continue; // drain, so blocked workers can finish
            }
            match collect(r) {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(())) => no_more.store(true, Ordering::Relaxed),
                Err(e) => {
                    no_more.store(true, Ordering::Relaxed);
                    result = Err(e);
                }
            }
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collector's error in these tests (any error type must also take [`ThreadsError`]).
    #[derive(Debug, PartialEq)]
    enum TestError {
        Threads,
        Value(u64),
    }

    impl From<ThreadsError> for TestError {
        fn from(_: ThreadsError) -> TestError {
            TestError::Threads
        }
    }

    #[test]
    fn every_job_once_in_any_thread_count() {
        for threads in [1, 2, 5] {
            let stop = AtomicBool::new(false);
            let mut seen = Vec::new();
            run(
                threads,
                &stop,
                0u64..1000,
                || 0u64,
                |n, j| {
                    *n += 1;
                    Some(j * 3)
                },
                |r| {
                    seen.push(r);
                    Ok::<_, TestError>(ControlFlow::Continue(()))
                },
            )
            .unwrap();
            seen.sort();
            assert_eq!(seen, (0..1000).map(|j| j * 3).collect::<Vec<_>>());
        }
    }

    #[test]
    fn break_stops_dispatch_but_keeps_in_flight_results() {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        run(
            2,
            &stop,
            0u64..u64::MAX, // lazy: never materialised
            || (),
            |_, j| Some(j),
            |r| {
                seen.push(r);
                Ok::<_, TestError>(if seen.len() >= 10 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                })
            },
        )
        .unwrap();
        // Dispatch stops soon after: within the batches in flight.
        let window = 2 * (BACKLOG_PER_THREAD + 2) * BATCH_LEN;
        assert!(
            seen.len() >= 10 && seen.len() < 10 + window,
            "{}",
            seen.len()
        );
        seen.sort();
        // Jobs are handed out in order, so what was collected is a window at the start.
        assert!(*seen.last().unwrap() < (10 + window) as u64, "{seen:?}");
    }

    #[test]
    fn errors_and_stop_end_the_run() {
        let stop = AtomicBool::new(false);
        let e = run(
            2,
            &stop,
            0u64..u64::MAX,
            || (),
            |_, j| Some(j),
            |r| {
                if r == 5 {
                    Err(TestError::Value(r))
                } else {
                    Ok(ControlFlow::Continue(()))
                }
            },
        );
        assert_eq!(e, Err(TestError::Value(5)));
        let stop = AtomicBool::new(true);
        let mut n = 0;
        run(
            2,
            &stop,
            0u64..u64::MAX,
            || (),
            |_, j| Some(j),
            |_| {
                n += 1;
                Ok::<_, TestError>(ControlFlow::Continue(()))
            },
        )
        .unwrap();
        assert_eq!(n, 0);
    }
}
