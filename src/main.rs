//! The `cavesweep` command line: parses flags, calls the library, prints. No cave logic lives
//! here. Every error ends the process with one line on stderr and a non-zero exit code.

/// `eprintln!` that cannot panic: stderr may be a closed pipe (`cavesweep ... 2>&1 | head -c 0`)
/// or a full disk, and `eprintln!` panics on a failed write, which turned an ordinary error into
/// an abort. A message that cannot be written is dropped; the exit code still tells.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: a sweep's workers allocate each chunk's record and rows
/// and the collector thread frees them, and glibc then takes the worker's arena lock from the
/// collector on every free, so workers and collector wait on each other's locks (thousands of
/// futex waits per second on a 100,000-point grid, seen with `strace -f -e futex`). mimalloc frees
/// another thread's blocks through a lock-free list.
///
/// Wrapped so that running out of memory (`ulimit -v`, a cgroup limit) ends in one line and exit
/// code 1 instead of Rust's "memory allocation of N bytes failed" and an abort (SIGABRT, a core
/// dump and, in CI, a backtrace). The output folder is as a kill leaves it: resumable.
#[global_allocator]
static GLOBAL: Alloc = Alloc;

struct Alloc;

/// Say so and exit at once, without allocating (the message is formatted on the stack and
/// written with `write(2)`; `_exit` runs no destructors that could allocate).
#[cold]
fn out_of_memory(size: usize) -> ! {
    let mut buf = [0u8; 200];
    let mut w = &mut buf[..];
    let _ = std::io::Write::write_fmt(
        &mut w,
        format_args!(
            "cavesweep: error: out of memory (allocating {size} bytes); raise the memory limit or lower --threads (an output folder is resumable: rerun the same command)\n"
        ),
    );
    let n = 200 - w.len();
    // SAFETY: write(2) of a stack buffer, then _exit(2): both async-signal-safe, no allocation.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(1);
    }
}

// SAFETY: every call forwards to mimalloc with the same layout; a null result ends the process.
unsafe impl std::alloc::GlobalAlloc for Alloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on unchanged.
        let p = unsafe { mimalloc::MiMalloc.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new) };
        if p.is_null() {
            out_of_memory(new);
        }
        p
    }
}

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
        say!("cavesweep: internal error (a bug, please report): {msg}{at}");
    }));
    match cli::main() {
        Ok(code) => code,
        Err(e) => {
            say!("cavesweep: error: {}", cli::error_line(&e));
            ExitCode::from(1)
        }
    }
}
