//! cavesweep: cellular-automaton cave generation, measurement, seed sweeps and seed search.
//!
//! Data flows one way: a [`recipe::Recipe`] (or a [`presets`] one) is filled ([`fill`], [`rng`])
//! and stepped ([`kernel`]) into a [`grid::Grid`] by a [`generate::Generator`], measured
//! ([`measure`], lazily when a [`query`] only needs some metrics) and gated, and the results
//! collected ([`sweep`], [`search`]) and written. The CLI in `main.rs` only parses
//! flags and prints. [`oracle`] is the scalar reference the kernels are tested against.

pub mod benchmark;
pub mod cells;
pub mod failpoint;
pub mod fanout;
pub mod fill;
pub mod generate;
pub mod grid;
pub mod io;
pub mod kernel;
pub mod measure;
pub mod oracle;
pub mod presets;
pub mod query;
pub mod quote;
pub mod recipe;
pub mod render;
pub mod report;
pub mod reproduce;
pub mod rng;
pub mod rule;
pub mod search;
pub mod simd;
pub mod store;
pub mod sweep;
