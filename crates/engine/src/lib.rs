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
//! - [`mapfile`]: grids as files, both ways (text, CSV, numpy, JSON, Tiled maps, PNG);
//! - [`reproduce`]: the book chapter's experiment and its verdicts;
//! - [`command`]: the command line a folder records (the CLI's own, Python's rendered);
//! - [`error`]: errors as one line, and what to do about a refusal in the caller's words;
//! - [`benchmark`]: what `cavesweep bench` measures; [`failpoint`]: faults injected by tests.
//!
//! A sweep of a two-point grid into a folder (resumable: run it again and it verifies the
//! folder instead of recomputing), then its `summary.csv`:
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use cavesweep_core::{measure::MetricSet, presets, query::Gate};
//! use cavesweep_engine::sweep::{self, PerSeed, Plan, RunOptions, Shard, SweepSpec};
//!
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("fills");
//! let plan = Plan::new(SweepSpec {
//!     base: presets::preset("classic-4-5")?,
//!     varies: vec!["fill=0.40,0.45".parse()?],
//!     seeds: 0..200,
//!     gate: "components<=3".parse::<Gate>()?,
//!     metrics: "components,floor_fraction".parse::<MetricSet>()?,
//!     per_seed: PerSeed::None,
//!     chunk: None,
//!     format: sweep::Format::Csv,
//! })?;
//! let stop = AtomicBool::new(false);
//! let opts = RunOptions {
//!     shard: Shard::WHOLE,
//!     threads: 2,
//!     force: false,
//!     command: "my-tool fills",
//!     stop: &stop,
//! };
//! let report = sweep::run(&plan, &out, &opts, &mut |_done, _total| {})?;
//! assert_eq!(report.seeds_run, 400);
//! let summary = std::fs::read_to_string(out.join("summary.csv"))?;
//! assert_eq!(summary.lines().count(), 3); // the header and one row per grid point
//! let again = sweep::run(&plan, &out, &opts, &mut |_, _| {})?;
//! assert!(again.verified && again.seeds_run == 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A seed search: the five lowest seeds of NetHack's mines filler whose cave has at most two
//! floor components, collected by a [`search::Sink`] (the command line's writes CSV instead):
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use cavesweep_core::{measure::MetricSet, presets};
//! use cavesweep_engine::search::{Match, Mode, Search, SearchError, SearchSpec, Seeds, Sink};
//!
//! struct Keep(Vec<u64>);
//! impl Sink for Keep {
//!     fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
//!         self.0.extend(rows.iter().map(|m| m.seed));
//!         Ok(())
//!     }
//! }
//! let search = Search::new(SearchSpec {
//!     recipe: presets::preset("nethack-mines")?,
//!     query: "components<=2".parse()?,
//!     seeds: Seeds::Range(0..1000),
//!     mode: Mode::Limit(5),
//!     extra: MetricSet::EMPTY,
//!     chunk: None,
//!     png: None,
//!     save: None,
//! })?;
//! let mut keep = Keep(Vec::new());
//! search.run(2, &AtomicBool::new(false), &[], &mut keep)?;
//! assert!(keep.0.len() <= 5 && keep.0.is_sorted());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod benchmark;
pub mod command;
pub mod error;
pub mod failpoint;
pub mod fanout;
pub mod io;
pub mod mapfile;
pub mod render;
pub mod reproduce;
pub mod search;
pub mod store;
pub mod sweep;
