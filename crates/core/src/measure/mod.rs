//! Measuring caves: FLOOR components, the per-cave metrics the sweeps record and gate on, and the
//! post-steps that repair connectivity (keep-largest, remove-small, NetHack's bridge).
//!
//! Everything runs on bit planes (one bit per cell) with reusable scratch in [`Measurer`], so
//! measuring a seed allocates nothing once the scratch has grown to the grid's shape. The metric
//! names below are part of the output format: they are the CSV column names, JSON keys and the
//! words of gate expressions.
//!
//! Connectivity is 4 by default (the chapter's); with 8, components, largest, connected and the
//! path metrics (8-connected steps) all use it.
//!
//! One deliberate difference from the chapter: its `reachable_floor` marks the spawn as seen and
//! floods from it even when the spawn is a WALL (so a wall spawn still "reaches" its floor
//! neighbours). Here a WALL spawn reaches nothing: `connected_fraction` is 0, `min_width` is 0,
//! and `path_length` / `reach_depth` are empty (NaN).

use std::fmt;
use std::str::FromStr;

use crate::grid::Grid;

mod bfs;
mod components;
mod flood;
mod lanes;
mod lazy;
mod metrics;
mod post;
mod runs;
#[cfg(target_arch = "x86_64")]
mod wide;

pub use components::Components;
pub use lazy::{Lazy, Stage};
pub use post::PostStep;

use bfs::Bfs;
use components::Flood;
use lazy::Memo;
use metrics::MinWidth;

/// Why a measurement setting could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MeasureError {
    /// A name that is not one of [`Metric::name`]'s (parsing a [`Metric`] or [`MetricSet`]).
    #[error("unknown metric {name:?}; valid metrics: {valid}")]
    UnknownMetric {
        /// The name given, trimmed.
        name: String,
        /// Every valid metric name, comma-separated in column order (for the message).
        valid: String,
    },
    /// A [`MetricSet`] string that is empty or only whitespace.
    #[error("empty metric list (give metric names separated by ',' or \"all\")")]
    EmptyMetricList,
    /// A [`Connectivity`] string other than `4`, `6` or `8`; holds the trimmed text.
    #[error("connectivity {0:?} is not \"4\", \"6\" (hex) or \"8\"")]
    BadConnectivity(String),
    /// [`MeasureConfig::validate`]: the spawn cell is not inside the grid.
    #[error("spawn ({y}, {x}) is outside the {rows}x{cols} grid")]
    SpawnOutside {
        /// Row of the spawn.
        y: usize,
        /// Column of the spawn.
        x: usize,
        /// Rows of the grid it was checked against.
        rows: usize,
        /// Columns of the grid it was checked against.
        cols: usize,
    },
    /// [`MeasureConfig::validate`]: the exit cell is not inside the grid.
    #[error("exit ({y}, {x}) is outside the {rows}x{cols} grid")]
    ExitOutside {
        /// Row of the exit.
        y: usize,
        /// Column of the exit.
        x: usize,
        /// Rows of the grid it was checked against.
        rows: usize,
        /// Columns of the grid it was checked against.
        cols: usize,
    },
    /// A [`PostStep`] string that names no post-step; holds the trimmed text.
    #[error(
        "post-step {0:?} not understood; expected \"keep-largest\", \"remove-small N\" (or \"remove-small:N\") or \"bridge\""
    )]
    BadPostStep(String),
    /// `remove-small` with an argument that is not a `u32` cell count.
    #[error("post-step {step:?}: {value:?} is not a cell count (a whole number >= 0)")]
    BadPostStepCount {
        /// The whole post-step text, trimmed (e.g. `remove-small x`).
        step: String,
        /// The argument that failed to parse, trimmed.
        value: String,
    },
}

macro_rules! metrics {
    ($($(#[$m:meta])* $var:ident = $name:literal,)+) => {
        /// A per-cave measurement. [`Metric::name`] is its CSV column / JSON key / gate word.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric { $($(#[$m])* $var,)+ }

        impl Metric {
            /// Every metric, in column order.
            pub const ALL: [Metric; Metric::COUNT] = [$(Metric::$var,)+];
            /// Number of metrics (the length of [`Values`]).
            pub const COUNT: usize = [$($name,)+].len();

            /// The metric's exact name.
            pub fn name(self) -> &'static str {
                match self { $(Metric::$var => $name,)+ }
            }
        }
    };
}

metrics! {
    /// WALL cells / all cells.
    WallFraction = "wall_fraction",
    /// FLOOR cells / all cells.
    FloorFraction = "floor_fraction",
    /// Number of FLOOR components.
    Components = "components",
    /// Cells of the largest FLOOR component / FLOOR cells (0 without floor).
    LargestFraction = "largest_fraction",
    /// FLOOR cells reachable from the spawn / FLOOR cells (0 for a WALL spawn or no floor).
    ConnectedFraction = "connected_fraction",
    /// Number of 4-adjacent (FLOOR, WALL) pairs of cells inside the grid.
    Boundary = "boundary",
    /// Steps of a shortest path from spawn to exit; NaN when unreachable or no exit is set.
    PathLength = "path_length",
    /// Largest distance (steps) from the spawn to a reachable FLOOR cell; NaN for a WALL spawn.
    ReachDepth = "reach_depth",
    /// Largest k such that every cell of the spawn's component lies in an all-FLOOR k x k
    /// square (1 = a one-cell-wide passage exists); 0 for a WALL spawn.
    MinWidth = "min_width",
}

impl Metric {
    /// Position in [`Values`].
    pub fn index(self) -> usize {
        self as usize
    }

    fn valid_names() -> String {
        Metric::ALL.map(Metric::name).join(", ")
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = MeasureError;
    fn from_str(s: &str) -> Result<Metric, MeasureError> {
        let s = s.trim();
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| MeasureError::UnknownMetric {
                name: s.to_string(),
                valid: Metric::valid_names(),
            })
    }
}

/// A set of metrics (a bitset), so the caller can skip the expensive ones it does not need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MetricSet(u32);

impl MetricSet {
    /// No metric: measuring computes nothing (every value stays NaN).
    pub const EMPTY: MetricSet = MetricSet(0);
    /// Every [`Metric`] (what the string `"all"` parses to).
    pub const ALL: MetricSet = MetricSet((1 << Metric::COUNT) - 1);

    /// Whether `m` is in the set.
    pub fn contains(self, m: Metric) -> bool {
        self.0 & (1 << m.index()) != 0
    }
    /// Add `m` to the set in place (no-op if present).
    pub fn insert(&mut self, m: Metric) {
        self.0 |= 1 << m.index();
    }
    /// The set plus `m`, by value (builder style: `MetricSet::EMPTY.with(a).with(b)`).
    pub fn with(mut self, m: Metric) -> MetricSet {
        self.insert(m);
        self
    }
    /// The metrics in either set.
    pub fn union(self, other: MetricSet) -> MetricSet {
        MetricSet(self.0 | other.0)
    }
    /// Whether the set holds no metric.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether measuring the set loads each cave's own planes from its grid (`min_width`,
    /// `path_length`, `reach_depth`), even for a cave measured in its batch's lanes.
    pub fn loads_planes(self) -> bool {
        self.iter()
            .any(|m| matches!(m.stage(), Stage::Width | Stage::Path | Stage::Depth))
    }
    /// The metrics in the set, in column order.
    pub fn iter(self) -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(move |&m| self.contains(m))
    }
}

impl FromIterator<Metric> for MetricSet {
    fn from_iter<I: IntoIterator<Item = Metric>>(iter: I) -> MetricSet {
        let mut s = MetricSet::EMPTY;
        for m in iter {
            s.insert(m);
        }
        s
    }
}

impl FromStr for MetricSet {
    type Err = MeasureError;
    /// `"all"` or names separated by `,` (whitespace around names is ignored).
    fn from_str(s: &str) -> Result<MetricSet, MeasureError> {
        if s.trim() == "all" {
            return Ok(MetricSet::ALL);
        }
        if s.trim().is_empty() {
            return Err(MeasureError::EmptyMetricList);
        }
        s.split(',').map(str::parse).collect()
    }
}

impl fmt::Display for MetricSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Metric::name).collect();
        f.write_str(&names.join(","))
    }
}

/// Cell adjacency for components and paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Connectivity {
    /// Edge neighbours (the chapter's).
    #[default]
    Four,
    /// Edge and corner neighbours (NetHack's flood fill).
    Eight,
    /// The hexagonal neighbours of Golly's `H` rules: the edge neighbours and NW, SE (not NE,
    /// SW): the adjacency of a hex cave.
    Six,
}

impl Connectivity {
    /// The number written for it: 4, 6 or 8 (the const parameter of the flood kernels).
    pub const fn number(self) -> u8 {
        match self {
            Connectivity::Four => 4,
            Connectivity::Six => 6,
            Connectivity::Eight => 8,
        }
    }
}

impl FromStr for Connectivity {
    type Err = MeasureError;
    fn from_str(s: &str) -> Result<Connectivity, MeasureError> {
        match s.trim() {
            "4" => Ok(Connectivity::Four),
            "8" => Ok(Connectivity::Eight),
            "6" => Ok(Connectivity::Six),
            other => Err(MeasureError::BadConnectivity(other.to_string())),
        }
    }
}

impl fmt::Display for Connectivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Connectivity::Four => "4",
            Connectivity::Eight => "8",
            Connectivity::Six => "6",
        })
    }
}

/// What to measure and from where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasureConfig {
    /// Adjacency of FLOOR cells for components, the spawn's flood and the path metrics
    /// (`boundary` always counts 4-adjacent pairs).
    pub connectivity: Connectivity,
    /// `(y, x)` of the spawn.
    pub spawn: (usize, usize),
    /// `(y, x)` of the exit, for `path_length`.
    pub exit: Option<(usize, usize)>,
    /// The metrics [`Measurer::measure`] computes (the rest stay NaN); for a [`Lazy`] view, the
    /// ones it may be asked for.
    pub metrics: MetricSet,
}

impl MeasureConfig {
    /// Check that spawn and exit lie inside a `rows x cols` grid. [`Measurer::measure`] does not
    /// panic on a bad config (an outside spawn is treated as WALL, an outside exit as
    /// unreachable), but a recipe should be rejected up front with this message.
    pub fn validate(&self, rows: usize, cols: usize) -> Result<(), MeasureError> {
        let (y, x) = self.spawn;
        if y >= rows || x >= cols {
            return Err(MeasureError::SpawnOutside { y, x, rows, cols });
        }
        if let Some((y, x)) = self.exit
            && (y >= rows || x >= cols)
        {
            return Err(MeasureError::ExitOutside { y, x, rows, cols });
        }
        Ok(())
    }
}

/// One cave's metrics, indexed by [`Metric::index`]; NaN = not computed or empty.
pub type Values = [f64; Metric::COUNT];

/// A [`Values`] with every entry NaN.
pub const EMPTY_VALUES: Values = [f64::NAN; Metric::COUNT];

/// Reusable measuring scratch. Grows lazily to the shape of the grids it is given; after that,
/// measuring and post-steps allocate nothing (except `bridge`'s small per-region list, which is
/// also reused).
#[derive(Debug, Default, Clone)]
pub struct Measurer {
    flood: Flood,
    /// Copy of the spawn's component, for `min_width`.
    comp: Vec<u64>,
    bfs: Bfs,
    width: MinWidth,
    labels: Components,
    prev: Vec<u64>,
    post: post::PostScratch,
    /// Labelling scratch of the floor a cave's floods left ([`components::Flood::label_rest`]).
    runs: runs::RunLabel,
    /// The current batch's lane planes and per-lane results (see [`Measurer::begin_batch`]).
    batch: lanes::BatchPlanes,
}

impl Measurer {
    /// An empty measurer on the process's SIMD path ([`crate::simd::Simd::active`]); its
    /// scratch grows on first use.
    pub fn new() -> Measurer {
        Measurer::default()
    }

    /// A measurer whose floods and distance sweeps run on `simd` (the default is
    /// [`crate::simd::Simd::active`]).
    pub fn with_simd(simd: crate::simd::Simd) -> Measurer {
        let mut m = Measurer::default();
        m.flood.simd = simd;
        m
    }

    /// Measure `g` into `out`: every metric of `cfg.metrics`, the others left NaN. The
    /// stages run in the order that shares the most work (one BFS serves both path metrics).
    pub fn measure(&mut self, g: &Grid, cfg: &MeasureConfig, out: &mut Values) {
        let mut view = self.lazy(g, cfg);
        view.ensure(cfg.metrics);
        view.copy_into(cfg.metrics, out);
    }

    /// A lazy view of `g`: metrics computed on first request and memoised. `cfg.metrics` are
    /// the metrics the caller may ask for (a hint that lets the labelling keep the spawn's
    /// component for `min_width`); others can be asked for too.
    pub fn lazy<'a>(&'a mut self, g: &'a Grid, cfg: &'a MeasureConfig) -> Lazy<'a> {
        Lazy {
            m: self,
            g: lazy::GridOf::Ready(g),
            cfg,
            wanted: cfg.metrics,
            memo: Memo::new(),
            batch: None,
        }
    }

    /// Whether caves `cols` wide can be measured where a batch made them, in its lanes
    /// ([`Measurer::begin_batch`]).
    pub fn batch_supported(cols: usize) -> bool {
        lanes::supported(cols)
    }

    /// Start measuring a new batch of `rows x cols` caves that sit in the lanes of a batch
    /// buffer of `simd` (one cave per lane of its widest vector, as
    /// [`crate::kernel::batch::LaneGrid`] lays them out). Views made by [`Measurer::lazy_in`]
    /// then measure the boundary, the spawn's component and the components of all the batch's
    /// caves at once, on first request. `cols` must be [`Measurer::batch_supported`].
    pub fn begin_batch(&mut self, simd: crate::simd::Simd, rows: usize, cols: usize) {
        self.batch.begin(simd, rows, cols);
    }

    /// [`Measurer::begin_batch`] for a batch whose caves all (or nearly all) will be asked for
    /// their spawn's component or `min_width` (a search's survivors, gathered from several
    /// generated batches): `min_width` then reads the spawn's component from the lane flood
    /// instead of flooding the cave alone. The results are the same either way.
    pub fn begin_dense_batch(&mut self, simd: crate::simd::Simd, rows: usize, cols: usize) {
        self.batch.begin_dense(simd, rows, cols);
    }

    /// [`Measurer::lazy`] for cave `k` of the batch begun last, whose lanes are in `lanes`:
    /// `g` must be that cave (copied out of the lanes) and `lanes` unchanged since
    /// [`Measurer::begin_batch`]. The results are exactly those of [`Measurer::lazy`].
    pub fn lazy_in<'a>(
        &'a mut self,
        g: &'a Grid,
        cfg: &'a MeasureConfig,
        lanes: &'a mut crate::kernel::batch::LaneBuf,
        k: usize,
    ) -> Lazy<'a> {
        let mut view = self.lazy(g, cfg);
        view.batch = Some(lazy::InBatch { lanes, k });
        view
    }

    /// [`Measurer::lazy_in`] for a cave that so far is only in its lane: `grid` (shaped like
    /// the cave; its cells are stale) receives it from lane `k` when a stage or the caller
    /// first needs the grid itself ([`Lazy::grid`]). Measuring the count, the boundary and
    /// the components never does, so a sweep of those skips the batch's copy-out (0.2 us per
    /// 90x140 cave, 6% of the whole).
    pub fn lazy_in_lanes<'a>(
        &'a mut self,
        grid: &'a mut Grid,
        cfg: &'a MeasureConfig,
        lanes: &'a mut crate::kernel::batch::LaneBuf,
        k: usize,
    ) -> Lazy<'a> {
        debug_assert!(k < self.batch.lanes());
        Lazy {
            m: self,
            g: lazy::GridOf::InLane {
                grid,
                copied: false,
            },
            cfg,
            wanted: cfg.metrics,
            memo: lazy::Memo::new(),
            batch: Some(lazy::InBatch { lanes, k }),
        }
    }

    /// Label the FLOOR components of `g` (count, sizes, label lookup). Labels are numbered in
    /// row-major order of each component's first cell.
    pub fn components(&mut self, g: &Grid, conn: Connectivity) -> &Components {
        self.labels
            .compute(&mut self.flood, &mut self.prev, g, conn);
        &self.labels
    }

    /// Apply a post-step to `g` in place. `conn` is the connectivity of `keep-largest` and
    /// `remove-small`; `bridge` always uses NetHack's 8-connected regions. `rng` is only drawn
    /// from by `bridge`.
    pub fn apply_post<R: rand_core::Rng + ?Sized>(
        &mut self,
        g: &mut Grid,
        step: PostStep,
        conn: Connectivity,
        rng: &mut R,
    ) {
        post::apply(&mut self.flood, &mut self.post, g, step, conn, rng);
    }
}

#[cfg(test)]
mod tests;
