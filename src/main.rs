//! The `cavesweep` command line: parses flags, calls the library, prints. No cave logic lives
//! here. Every error ends the process with one line on stderr and a non-zero exit code.

mod cli;

use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: a sweep's workers allocate each chunk's record and rows
/// and the collector thread frees them, and glibc then takes the worker's arena lock from the
/// collector on every free, so workers and collector wait on each other's locks (thousands of
/// futex waits per second on a 100,000-point grid, seen with `strace -f -e futex`). mimalloc frees
/// another thread's blocks through a lock-free list.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A file-size limit (`ulimit -f`) must end in a one-line error like a full disk does, not in
    // SIGXFSZ killing the process mid-write: ignored, the signal turns into EFBIG from write().
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // No transparent huge pages: mimalloc asks for them on its arenas, so each thread's first
    // allocations fault in and zero whole 2 MB pages. The process lives in ~10 MB, so they buy
    // nothing, and on a VM the first touch of each one is slow: 40-200 ms of page clearing at
    // the start of every sweep here (`perf`: `clear_page_erms` under mimalloc's page faults).
    // A kernel without the option refuses it, which is harmless.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only changes this process's paging policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("cavesweep: internal error (a bug, please report): {msg}{at}");
    }));
    match cli::main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cavesweep: error: {}", cli::error_line(&e));
            ExitCode::from(1)
        }
    }
}
