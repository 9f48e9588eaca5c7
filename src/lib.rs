//! cavesweep: cellular-automaton cave generation, measurement and seed sweeps.
//!
//! Data flows one way: a [`recipe::Recipe`] (or a [`presets`] one) is filled ([`fill`], [`rng`])
//! and stepped ([`kernel`]) into a [`grid::Grid`] by a [`generate::Generator`], measured and
//! gated ([`measure`]), and the results collected and written. The CLI in `main.rs` only parses
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
pub mod recipe;
pub mod render;
pub mod report;
pub mod reproduce;
pub mod rng;
pub mod rule;
pub mod simd;
pub mod store;
pub mod sweep;
