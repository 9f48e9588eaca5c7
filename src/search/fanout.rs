//! The search's fan-out: an ordered queue of jobs pulled by rayon workers, results collected on
//! the calling thread.
//!
//! A stand-in with the same interface as the crate-wide fan-out the sweep engine is moving to
//! (`crate::fanout::run`): when that lands, this file goes and `search` calls it instead.
//!
//! Jobs come from a lazy iterator behind a mutex (a search may have 2^58 chunks: no list of
//! them is ever made), so workers take them in order and the work in flight is a short window of
//! consecutive chunks: every seed below it is decided, which is what lets `--limit` stop early.

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Run `jobs` on `threads` rayon workers, each with its own `init()` state. `work` returns
/// `None` when it abandoned the job because `stop` was raised (the worker then ends). `collect`
/// sees every result on the calling thread, in completion order; when it breaks or fails no
/// more jobs are handed out (those in flight finish). Returns `collect`'s first error.
pub fn run<J, W, R, E>(
    threads: usize,
    stop: &AtomicBool,
    jobs: impl Iterator<Item = J> + Send,
    init: impl Fn() -> W + Sync,
    work: impl Fn(&mut W, J) -> Option<R> + Sync,
    mut collect: impl FnMut(R) -> Result<ControlFlow<()>, E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
{
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("cannot start worker threads");
    let jobs = Mutex::new(jobs);
    let no_more = AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<R>(threads * 2);
    std::thread::scope(|s| {
        let (jobs, no_more, init, work) = (&jobs, &no_more, &init, &work);
        s.spawn(move || {
            let tx = tx;
            pool.broadcast(|_| {
                let mut state = init();
                while !stop.load(Ordering::Relaxed) && !no_more.load(Ordering::Relaxed) {
                    let Some(job) = jobs.lock().ok().and_then(|mut it| it.next()) else {
                        return;
                    };
                    let Some(r) = work(&mut state, job) else {
                        return;
                    };
                    if tx.send(r).is_err() {
                        return;
                    }
                }
            });
        });
        let mut result = Ok(());
        for r in rx {
            if result.is_err() {
                continue;
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

    #[test]
    fn every_job_once_then_break_error_and_stop() {
        for threads in [1, 2, 3] {
            let stop = AtomicBool::new(false);
            let mut seen = vec![0u32; 1000];
            run::<_, _, _, ()>(
                threads,
                &stop,
                0u64..1000,
                || 0u64,
                |n, id| {
                    *n += 1;
                    Some(id)
                },
                |id| {
                    seen[id as usize] += 1;
                    Ok(ControlFlow::Continue(()))
                },
            )
            .unwrap();
            assert!(seen.iter().all(|&n| n == 1));
            // Breaking stops the handing out: far fewer than 2^60 jobs run.
            let mut got = 0;
            run::<_, _, _, ()>(
                threads,
                &stop,
                0u64..1 << 60,
                || (),
                |_, id| Some(id),
                |_| {
                    got += 1;
                    Ok(if got == 10 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    })
                },
            )
            .unwrap();
            assert!((10..100).contains(&got), "{got}");
            let e = run(
                threads,
                &stop,
                0u64..50,
                || (),
                |_, id| Some(id),
                |_| Err("no"),
            );
            assert_eq!(e, Err("no"));
            let mut n = 0;
            run::<_, _, _, ()>(
                threads,
                &AtomicBool::new(true),
                0u64..50,
                || (),
                |_, id| Some(id),
                |_| {
                    n += 1;
                    Ok(ControlFlow::Continue(()))
                },
            )
            .unwrap();
            assert_eq!(n, 0);
        }
    }
}
