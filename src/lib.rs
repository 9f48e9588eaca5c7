//! cavesweep: cellular-automaton cave generation, measurement, seed sweeps and seed search.
//!
//! This crate is the `cavesweep` binary and a facade over the library crates, re-exported here
//! under their old paths so `cavesweep::grid`, `cavesweep::sweep` and friends keep working:
//!
//! - [`cavesweep_core`]: grids, rules, RNG streams, fills, kernels, measures, queries, recipes
//!   and the per-seed [`generate::Generator`] (no file system: the crate a game embeds);
//! - [`cavesweep_engine`]: fan-out, sweeps, search, output folders, merge and shards, the
//!   chapter's reproduction, cave pictures;
//! - [`cavesweep_report`]: `cavesweep report`'s charts and pages.
//!
//! Data flows one way: a [`recipe::Recipe`] (or a [`presets`] one) is filled and stepped into a
//! [`grid::Grid`] by a [`generate::Generator`], measured and gated, and the results collected
//! ([`sweep`], [`search`]) and written ([`store`], [`io`]). The CLI in `main.rs` only parses
//! flags and prints.

pub use cavesweep_core::{
    cells, fill, generate, grid, kernel, measure, oracle, presets, query, quote, recipe, rng, rule,
    simd,
};
pub use cavesweep_engine::{
    benchmark, command, error, failpoint, fanout, io, mapfile, render, reproduce, search, store,
    sweep,
};
pub use cavesweep_explore as explore;
pub use cavesweep_report as report;
