//! The search's fan-out: an ordered queue of chunk ids pulled by rayon workers, results handed
//! to one collecting thread (the caller's), a halt flag.
//!
//! Kept small and self-contained so it can be swapped for the crate-wide fan-out the sweep
//! engine is moving to: [`run`] is the whole interface.
//!
//! Chunk ids are pulled in increasing order from one atomic counter (never materialised as a
//! list: a search may have 2^58 chunks), so at any moment the unfinished chunks are the few in
//! flight plus every id not yet pulled. That is what lets `--limit` stop early.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

/// Run `work(state, id)` for `id` in `0..end` on `threads` rayon workers (each with its own
/// `init()` state), pulling ids in increasing order; hand every `Some` result to `collect` on
/// the calling thread, in completion order. `end` may be lowered while running (ids at or past
/// it are no longer pulled). Stops pulling once `halt` is raised (by the caller, or here when
/// `collect` breaks or fails); work in flight should watch `halt` too.
pub fn run<W, R, E>(
    threads: usize,
    end: &AtomicU64,
    halt: &AtomicBool,
    init: impl Fn() -> W + Sync,
    work: impl Fn(&mut W, u64) -> Option<R> + Sync,
    mut collect: impl FnMut(u64, R) -> Result<ControlFlow<()>, E>,
) -> Result<(), E>
where
    R: Send,
{
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let next = AtomicU64::new(0);
    let (tx, rx) = mpsc::sync_channel::<(u64, R)>(threads * 4);
    std::thread::scope(|s| {
        let (next, init, work) = (&next, &init, &work);
        s.spawn(move || {
            let tx = tx;
            pool.broadcast(|_| {
                let mut state = init();
                while !halt.load(Ordering::Relaxed) {
                    let id = next.fetch_add(1, Ordering::Relaxed);
                    if id >= end.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Some(r) = work(&mut state, id)
                        && tx.send((id, r)).is_err()
                    {
                        break;
                    }
                }
            });
        });
        let mut result = Ok(());
        for (id, r) in rx {
            if result.is_err() {
                continue;
            }
            match collect(id, r) {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(())) => halt.store(true, Ordering::Relaxed),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
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
    fn every_chunk_once_and_halts() {
        for threads in [1, 2, 3] {
            let halt = AtomicBool::new(false);
            let mut seen = vec![0u32; 1000];
            run::<_, _, ()>(
                threads,
                &AtomicU64::new(1000),
                &halt,
                || 0u64,
                |n, id| {
                    *n += 1;
                    (id % 3 != 0).then_some(id)
                },
                |id, r| {
                    assert_eq!(id, r);
                    seen[id as usize] += 1;
                    Ok(ControlFlow::Continue(()))
                },
            )
            .unwrap();
            for (i, &n) in seen.iter().enumerate() {
                assert_eq!(n, (i % 3 != 0) as u32, "chunk {i}");
            }
            // Breaking stops the pulling: far fewer than 2^60 chunks run.
            let halt = AtomicBool::new(false);
            let mut got = 0;
            run::<_, _, ()>(
                threads,
                &AtomicU64::new(1 << 60),
                &halt,
                || (),
                |_, id| Some(id),
                |_, _| {
                    got += 1;
                    Ok(if got == 10 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    })
                },
            )
            .unwrap();
            assert!((10..10_000).contains(&got), "{got}");
            let halt = AtomicBool::new(false);
            let e = run::<_, _, &str>(
                threads,
                &AtomicU64::new(50),
                &halt,
                || (),
                |_, id| Some(id),
                |_, _| Err("stop"),
            );
            assert_eq!(e, Err("stop"));
            // Lowering the end stops the pulling too.
            let (halt, end) = (AtomicBool::new(false), AtomicU64::new(1 << 60));
            let mut max = 0;
            run::<_, _, ()>(
                threads,
                &end,
                &halt,
                || (),
                |_, id| Some(id),
                |id, _| {
                    max = max.max(id);
                    end.fetch_min(100, Ordering::Relaxed);
                    Ok(ControlFlow::Continue(()))
                },
            )
            .unwrap();
            assert!(max < 100 + 8 * threads as u64, "{max}");
        }
    }
}
