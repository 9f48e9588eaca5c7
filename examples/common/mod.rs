//! What the development probes in `examples/` share: a thread CPU-time clock.

/// Seconds of CPU time this thread has used: less disturbed by a loaded machine than wall time,
/// which is why the probes time with it.
pub fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
