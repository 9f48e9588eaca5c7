//! cavesweep: cellular-automaton cave generation, measurement and seed sweeps.
//!
//! Data flows one way: a recipe is generated into a [`grid::Grid`] by step kernels, measured,
//! collected into statistics and written out. The modules follow that flow; the CLI in
//! `main.rs` only parses flags and prints.

pub mod fill;
pub mod grid;
pub mod kernel;
pub mod measure;
pub mod oracle;
pub mod rng;
pub mod rule;
