//! cavesweep: cellular-automaton cave generation, measurement, seed sweeps and seed search.
//!
//! This crate is the engine and the binary; the generator itself lives in the
//! [`cavesweep_core`] crate (grids, rules, RNG streams, fills, kernels, measures, queries,
//! recipes and the per-seed [`generate::Generator`]), re-exported here under its old paths so
//! `cavesweep::grid` and friends keep working.
//!
//! Data flows one way: a [`recipe::Recipe`] (or a [`presets`] one) is filled and stepped into a
//! [`grid::Grid`] by a [`generate::Generator`] (all in `cavesweep-core`), measured and gated, and
//! the results collected ([`sweep`], [`search`]) and written ([`store`], [`io`]). The CLI in
//! `main.rs` only parses flags and prints.

pub use cavesweep_core::{
    cells, fill, generate, grid, kernel, measure, oracle, presets, query, quote, recipe, rng, rule,
    simd,
};

pub mod benchmark;
pub mod failpoint;
pub mod fanout;
pub mod io;
pub mod render;
pub mod report;
pub mod reproduce;
pub mod search;
pub mod store;
pub mod sweep;
