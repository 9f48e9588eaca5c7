//! cavesweep-core: cellular-automaton caves generated, stepped and measured in memory.
//!
//! This is the layer a game or a tool embeds: no file system, no database, no plotting, no
//! command line. Data flows one way: a [`recipe::Recipe`] (or a [`presets`] one) is filled
//! ([`fill`], [`rng`]) and stepped ([`kernel`]) into a [`grid::Grid`] by a
//! [`generate::Generator`], then measured ([`measure`], lazily when a [`query`] only needs some
//! metrics) and gated. [`simd`] picks the widest vector path the running CPU has; [`cells`]
//! converts grids to and from one byte per cell; [`oracle`] is the plain scalar reference every
//! kernel is tested against.
//!
//! ```
//! use cavesweep_core::{generate::Generator, measure::{Metric, MetricSet}, presets};
//!
//! let recipe = presets::preset("classic-4-5").unwrap();
//! let mut generator = Generator::new(&recipe, MetricSet::ALL).unwrap();
//! let cave = generator.run(31575).unwrap();
//! assert_eq!((cave.grid.rows(), cave.grid.cols()), (90, 140));
//! let floor = cave.values[Metric::FloorFraction.index()];
//! assert!(floor > 0.0 && floor < 1.0);
//! ```

pub mod cells;
pub mod fill;
pub mod generate;
pub mod grid;
pub mod kernel;
pub mod measure;
pub mod oracle;
pub mod presets;
pub mod query;
pub mod quote;
pub mod recipe;
pub mod rng;
pub mod rule;
pub mod simd;
