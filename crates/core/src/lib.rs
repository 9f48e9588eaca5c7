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
//!
//! A grid of your own, stepped with the classic 4-5 rule and measured:
//!
//! ```
//! use cavesweep_core::grid::Grid;
//! use cavesweep_core::kernel::Stepper;
//! use cavesweep_core::measure::{Connectivity, MeasureConfig, Measurer, Metric, MetricSet};
//! use cavesweep_core::rule::{Border, Outside, Pass};
//!
//! let mut g = Grid::new(20, 30).unwrap();
//! for (y, x) in (5..8).flat_map(|y| (5..8).map(move |x| (y, x))) {
//!     g.set(y, x, true); // a 3x3 block of walls
//! }
//! g.set(12, 20, true); // and a lone wall
//! let pass = Pass::sync("B5678/S45678".parse().unwrap(), Outside::Floor, Border::None);
//! Stepper::new().run_pass(&mut g, &pass);
//! // A wall survives with 4 or more wall neighbours: the block's centre (8) and edges (5) do,
//! // its corners (3) and the lone wall (0) do not; no floor cell has the 5 a birth needs.
//! assert_eq!(g.count_walls(), 5);
//! assert!(g.get(6, 6) && g.get(5, 6) && !g.get(5, 5));
//! assert!(!g.get(12, 20));
//! let cfg = MeasureConfig {
//!     connectivity: Connectivity::Four,
//!     spawn: (0, 0),
//!     exit: None,
//!     metrics: MetricSet::ALL,
//! };
//! let mut values = cavesweep_core::measure::EMPTY_VALUES;
//! Measurer::new().measure(&g, &cfg, &mut values);
//! assert_eq!(values[Metric::Components.index()], 1.0);
//! ```

#![warn(missing_docs)]

pub mod cells;
pub mod fill;
pub mod generate;
pub mod grid;
pub mod kernel;
pub mod measure;
pub mod oracle;
pub mod pcg64;
pub mod presets;
pub mod query;
pub mod quote;
pub mod recipe;
pub mod rng;
pub mod rule;
pub mod simd;
