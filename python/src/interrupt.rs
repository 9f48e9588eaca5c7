//! Long work off the GIL that Ctrl-C still stops.
//!
//! Python runs signal handlers only on the main thread, between bytecodes; while native code
//! holds the thread, a Ctrl-C (a notebook's "interrupt kernel") just sets a flag. So the work
//! runs on a scoped thread while the calling thread, with the GIL released, wakes every
//! [`TICK`] to run the handlers (`check_signals`) and the caller's `tick` (a progress bar).
//! A `KeyboardInterrupt` raises `stop`, the work winds down (it polls the flag), and the
//! interrupt is re-raised once the work has returned, so nothing is left running.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

/// How often the calling thread looks at signals and progress.
pub const TICK: Duration = Duration::from_millis(50);

/// Run `work` on another thread, checking signals and calling `tick` every [`TICK`] on this
/// one. The first error (a `KeyboardInterrupt`, or an exception from `tick`) raises `stop` and
/// is returned once `work` has finished; otherwise `work`'s result.
pub fn run<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
    mut tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T> {
    let done = AtomicBool::new(false);
    let me = std::thread::current();
    std::thread::scope(|s| {
        // Builder::spawn_scoped, not s.spawn: a thread that cannot start (a memory limit) is a
        // MemoryError, not a panic.
        let handle = std::thread::Builder::new().spawn_scoped(s, || {
            // Wake the caller however `work` ends, a panic included.
            struct Wake<'a>(&'a AtomicBool, std::thread::Thread);
            impl Drop for Wake<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Release);
                    self.1.unpark();
                }
            }
            let _wake = Wake(&done, me);
            work()
        });
        let handle = handle.map_err(|e| {
            pyo3::exceptions::PyMemoryError::new_err(format!("cannot start a worker thread: {e}"))
        })?;
        let mut failed: Option<PyErr> = None;
        while !done.load(Ordering::Acquire) {
            py.detach(|| std::thread::park_timeout(TICK));
            if failed.is_none() {
                let r = py.check_signals().and_then(|()| tick(py));
                if let Err(e) = r {
                    stop.store(true, Ordering::SeqCst);
                    failed = Some(e);
                }
            }
        }
        let out = handle.join().map_err(crate::panic_error)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}
