//! cavesweep-engine: many seeds at once, and everything that touches the file system.
//!
//! Above [`cavesweep_core`] (which generates and measures one cave in memory), this crate runs
//! recipes over seed ranges and parameter grids and writes what they found:
//!
//! - [`fanout`]: an ordered job queue pulled by rayon workers, so output order never depends on
//!   the thread count;
//! - [`sweep`]: plans over parameter grids, the chunk engine, exact sparse statistics, verified
//!   resume, merge and shards, CSV writers;
//! - [`search`]: seed search (calibration, ordered chunks, `limit` / `top` collectors);
//! - [`store`]: output folders (lock, SQLite records, final files recorded by size and CRC-32);
//! - [`io`]: the file-safety model (no-follow, folder-relative, atomic writes, capped reads);
//! - [`render`]: cave pictures (PNG and ASCII);
//! - [`reproduce`]: the book chapter's experiment and its verdicts;
//! - [`error`]: errors as one line, and what to do about a refusal in the caller's words;
//! - [`benchmark`]: what `cavesweep bench` measures; [`failpoint`]: faults injected by tests.

pub mod benchmark;
pub mod error;
pub mod failpoint;
pub mod fanout;
pub mod io;
pub mod render;
pub mod reproduce;
pub mod search;
pub mod store;
pub mod sweep;
