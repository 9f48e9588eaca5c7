//! Failpoints: named moments at which an end-to-end test can make the process die (as `kill -9`
//! would) or make a write fail (as a full disk would), so crash-safety is tested at exactly the
//! moment that matters instead of by racing a timer.
//!
//! Set `CAVESWEEP_FAILPOINT=NAME` to SIGKILL the process when it reaches failpoint `NAME`,
//! `CAVESWEEP_FAILPOINT=NAME:enospc` to make the write guarded by `NAME` fail with "No space left
//! on device", or `CAVESWEEP_FAILPOINT=NAME:pause` to make the process print
//! `cavesweep: failpoint NAME: paused` on stderr and wait there until it is killed (a test then
//! knows the process is alive at exactly that moment, e.g. holding its folder's lock), or
//! `CAVESWEEP_FAILPOINT=NAME:hold` to make it print `cavesweep: failpoint NAME: holding until
//! stopped` and wait there until it is asked to stop (SIGTERM, Ctrl-C), then carry on as a run
//! stopped at that moment would (used to requeue a Slurm task mid-sweep). `NAME@K`
//! fires on the K-th time the point is reached (1-based), so "die at the third checkpoint" is
//! expressible. Unset (the normal case), a failpoint costs one
//! load of a `OnceLock`.
//!
//! These are test hooks compiled into the real binary on purpose: the end-to-end tests run the
//! binary a user runs (a cargo feature could not be switched on for it by `cargo test`), and the
//! `fail` crate's points compile to nothing without such a feature.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(PartialEq)]
enum Action {
    Kill,
    Enospc,
    Pause,
    Hold,
}

struct Config {
    name: String,
    nth: u64,
    action: Action,
    hits: AtomicU64,
}

fn config() -> Option<&'static Config> {
    static CONFIG: OnceLock<Option<Config>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let spec = std::env::var("CAVESWEEP_FAILPOINT").ok()?;
            let (spec, action) = if let Some(s) = spec.strip_suffix(":enospc") {
                (s.to_string(), Action::Enospc)
            } else if let Some(s) = spec.strip_suffix(":pause") {
                (s.to_string(), Action::Pause)
            } else if let Some(s) = spec.strip_suffix(":hold") {
                (s.to_string(), Action::Hold)
            } else {
                (spec, Action::Kill)
            };
            let (name, nth) = match spec.split_once('@') {
                Some((n, k)) => (n.to_string(), k.parse().unwrap_or(1)),
                None => (spec, 1),
            };
            Some(Config {
                name,
                nth,
                action,
                hits: AtomicU64::new(0),
            })
        })
        .as_ref()
}

/// Whether point `name` is configured and this is the hit that fires.
fn fires(name: &str) -> Option<&'static Config> {
    let c = config()?;
    if c.name != name {
        return None;
    }
    let k = c.hits.fetch_add(1, Ordering::SeqCst) + 1;
    (k == c.nth).then_some(c)
}

fn die_or_pause(c: &Config) {
    if c.action == Action::Pause {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("cavesweep: failpoint {}: paused\n", c.name),
        );
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    // SAFETY: plain libc calls on our own pid; SIGKILL cannot be caught, so no code runs after
    // it, exactly like an external `kill -9`.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort();
}

/// Whether failpoint `name` is configured in this process (at any hit count).
pub fn configured(name: &str) -> bool {
    config().is_some_and(|c| c.name == name)
}

/// Die (or pause) here if the failpoint `name` is set to fire now.
pub fn kill(name: &str) {
    if let Some(c) = fires(name)
        && matches!(c.action, Action::Kill | Action::Pause)
    {
        die_or_pause(c);
    }
}

/// Die, pause, or (`:hold`) wait until `stop` is raised, if failpoint `name` fires now.
pub fn hold(name: &str, stop: &std::sync::atomic::AtomicBool) {
    let Some(c) = fires(name) else { return };
    match c.action {
        Action::Kill | Action::Pause => die_or_pause(c),
        Action::Hold => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("cavesweep: failpoint {}: holding until stopped\n", c.name),
            );
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        Action::Enospc => {}
    }
}

/// Die (or pause) here, or return the "disk full" error, if failpoint `name` fires now.
pub fn io(name: &str) -> std::io::Result<()> {
    if let Some(c) = fires(name) {
        match c.action {
            Action::Enospc => return Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
            Action::Kill | Action::Pause => die_or_pause(c),
            Action::Hold => {}
        }
    }
    Ok(())
}
