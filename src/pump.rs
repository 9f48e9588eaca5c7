//! A write pump: streaming stores that ride along the generation kernels, a few cache lines at a
//! time, instead of in one burst after each batch.
//!
//! **Why.** `generate_many` writes 12.6 kB of bytes per 90x140 cave to an array far bigger than
//! any cache, with streaming (non-temporal) stores ([`crate::cells::Stream`]). Written in one
//! burst per cave, those stores fill the core's store buffer within a few dozen lines and the
//! core then waits for memory: the generation and the writes take turns instead of
//! overlapping. A few lines between stretches of kernel work drain in the background while the
//! kernel runs. (Measured with a standalone C probe on this project's 2-core AVX-512 machine: a
//! 12.6 kB cave written in one burst after 2.6 us of arithmetic cost 1.2 us more per cave; cut
//! into 16 pieces spread over the arithmetic, nothing measurable.)
//!
//! **How.** A [`crate::cells::Stream`] opened with [`crate::cells::Stream::pumped`] hands its
//! staged, line-aligned bytes to this thread's pump; the lane kernels (the xoshiro lane fill,
//! the lane step) call [`tick`] every few iterations, and each tick streams up to [`QUOTA`]
//! lines. With nothing registered (the command line, every other caller) a tick is one
//! thread-local load and a branch not taken. The pump never touches memory on its own: only a
//! registered stream's staged bytes, to its destination, on the registering thread, while the
//! stream is open (see [`Registration`]).

use std::cell::Cell;

/// Cache lines streamed per [`tick`]: small enough to sit in the store buffer while the kernel
/// runs on (a few dozen lines fill it), enough that the ticks of one batch drain it.
pub const QUOTA: usize = 4;

/// Copies `lines` 64-byte lines from `src` to the line-aligned `dst` with streaming stores.
pub(crate) type LineCopy = unsafe fn(src: *const u8, dst: *mut u8, lines: usize);

struct Pump {
    /// Lines left to write (0: nothing registered, or paused).
    lines: Cell<usize>,
    src: Cell<*const u8>,
    dst: Cell<*mut u8>,
    copy: Cell<Option<LineCopy>>,
    /// A stream owns the pump (one at a time per thread).
    owned: Cell<bool>,
}

thread_local! {
    static PUMP: Pump = const {
        Pump {
            lines: Cell::new(0),
            src: Cell::new(std::ptr::null()),
            dst: Cell::new(std::ptr::null_mut()),
            copy: Cell::new(None),
            owned: Cell::new(false),
        }
    };
}

/// Stream up to [`QUOTA`] of the lines registered on this thread, if any. Called by the lane
/// kernels between iterations; cheap when nothing is registered.
#[inline(always)]
pub fn tick() {
    PUMP.with(|p| {
        if p.lines.get() != 0 {
            run(p);
        }
    });
}

#[cold]
#[inline(never)]
fn run(p: &Pump) {
    let n = p.lines.get().min(QUOTA);
    let (src, dst) = (p.src.get(), p.dst.get());
    if let Some(copy) = p.copy.get() {
        // SAFETY: a live [`Registration`] put these pointers here: `lines` lines readable at
        // `src` and writable at a line-aligned `dst`, untouched by anything else until it
        // pauses or ends (which zeroes `lines`); `copy` suits this CPU.
        unsafe { copy(src, dst, n) };
        p.src.set(src.wrapping_add(64 * n));
        p.dst.set(dst.wrapping_add(64 * n));
    }
    p.lines.set(p.lines.get() - n);
}

/// This thread's pump, owned by one stream until dropped. Dropping it clears the pump.
pub(crate) struct Registration {
    copy: LineCopy,
    /// Lines handed over by the last [`Registration::hand`].
    handed: usize,
}

impl Registration {
    /// Take this thread's pump, unless another stream already has it.
    pub(crate) fn take(copy: LineCopy) -> Option<Registration> {
        PUMP.with(|p| {
            if p.owned.replace(true) {
                return None;
            }
            p.lines.set(0);
            Some(Registration { copy, handed: 0 })
        })
    }

    /// Pause the pump and return how many of the lines handed over last have been written (a
    /// prefix of them).
    pub(crate) fn pause(&mut self) -> usize {
        let left = PUMP.with(|p| p.lines.replace(0));
        let done = self.handed - left;
        self.handed = 0;
        done
    }

    /// Hand over `lines` lines to stream from `src` to `dst`.
    ///
    /// # Safety
    /// `src` must be readable and `dst` (64-byte aligned) writable for `64 * lines` bytes, and
    /// nothing else may access either range until the next [`Registration::pause`] or the
    /// drop of this registration (the pump writes them from within kernels on this thread).
    pub(crate) unsafe fn hand(&mut self, src: *const u8, dst: *mut u8, lines: usize) {
        debug_assert!((dst as usize).is_multiple_of(64));
        PUMP.with(|p| {
            p.src.set(src);
            p.dst.set(dst);
            p.copy.set(Some(self.copy));
            p.lines.set(lines);
        });
        self.handed = lines;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        PUMP.with(|p| {
            p.lines.set(0);
            p.src.set(std::ptr::null());
            p.dst.set(std::ptr::null_mut());
            p.copy.set(None);
            p.owned.set(false);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe fn plain(src: *const u8, dst: *mut u8, lines: usize) {
        unsafe { std::ptr::copy_nonoverlapping(src, dst, 64 * lines) };
    }

    #[repr(align(64))]
    struct Lines([u8; 64 * 10]);

    #[test]
    fn ticks_write_a_prefix_quota_by_quota_and_pause_reports_it() {
        let src: Vec<u8> = (0..640).map(|i| i as u8).collect();
        let mut dst = Lines([0; 640]);
        let mut r = Registration::take(plain).expect("the pump is free");
        assert!(Registration::take(plain).is_none(), "one owner at a time");
        unsafe { r.hand(src.as_ptr(), dst.0.as_mut_ptr(), 10) };
        tick();
        tick();
        assert_eq!(r.pause(), 2 * QUOTA);
        tick(); // paused: nothing written
        assert_eq!(&dst.0[..64 * 2 * QUOTA], &src[..64 * 2 * QUOTA]);
        assert!(dst.0[64 * 2 * QUOTA..].iter().all(|&b| b == 0));
        drop(r);
        assert!(
            Registration::take(plain).is_some(),
            "free again after the drop"
        );
    }
}
