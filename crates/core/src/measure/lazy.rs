//! Staged, memoised measurement of one cave: a metric is computed when first asked for, with
//! only the stages it needs, and never twice.
//!
//! The stages, roughly cheapest first (each needs the ones it lists):
//!
//! | stage | metrics | work | needs |
//! |---|---|---|---|
//! | `Count` | `wall_fraction`, `floor_fraction` | one popcount pass over the grid | |
//! | `Plane` | | the FLOOR bit plane the floods and BFS read | |
//! | `Boundary` | `boundary` | popcounts over the plane | Plane |
//! | `Spawn` | `connected_fraction` | the spawn's flood fill | Plane, Count |
//! | `Label` | `components`, `largest_fraction` | flood fills of every other component | Spawn |
//! | `Width` | `min_width` | erosion and dilation of the spawn's component | Spawn |
//! | `Path` | `path_length` | BFS from the spawn, stopped at the exit | Plane |
//! | `Depth` | `reach_depth` (and `path_length`) | BFS to the end | Plane |
//!
//! Results equal the eager [`Measurer::measure`] exactly, whatever order the metrics are asked
//! for in (tested against it and against the byte-grid oracle).
//!
//! **In a batch** ([`Measurer::lazy_in`]): `Boundary`, `Spawn` and `Label` are measured on the
//! batch's lanes instead ([`super::lanes`]): the first cave of a batch to ask pays for every
//! lane's boundary or spawn flood at once (so a search that rejects a whole batch on cheap
//! metrics still pays nothing for them), `Label` then labels only what the lane flood left of
//! this cave. They need no `Plane`; `Width`, `Path` and `Depth` load it as before.

use super::components::Layout;
use super::{Connectivity, MeasureConfig, Measurer, Metric, MetricSet, Values, metrics};
use crate::grid::Grid;
use crate::kernel::batch::LaneBuf;

/// Most components [`Lazy`] floods, after the spawn's, to find one no unflooded floor can
/// outgrow; the floor left after them is labelled by its runs, which is exact in any case.
const MORE_FLOODS: usize = 3;

/// A unit of measuring work. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// One popcount pass over the grid: `wall_fraction`, `floor_fraction`.
    Count,
    /// The FLOOR bit plane the floods and BFS read; yields no metric by itself.
    Plane,
    /// Popcounts over the plane: `boundary`.
    Boundary,
    /// The spawn's flood fill: `connected_fraction`.
    Spawn,
    /// Flood fills of every other component: `components`, `largest_fraction`.
    Label,
    /// Erosion and dilation of the spawn's component: `min_width`.
    Width,
    /// BFS from the spawn, stopped at the exit: `path_length`.
    Path,
    /// BFS from the spawn to the end: `reach_depth` (and `path_length`).
    Depth,
}

impl Stage {
    fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl Metric {
    /// The stage that computes this metric.
    pub fn stage(self) -> Stage {
        match self {
            Metric::WallFraction | Metric::FloorFraction => Stage::Count,
            Metric::Boundary => Stage::Boundary,
            Metric::ConnectedFraction => Stage::Spawn,
            Metric::Components | Metric::LargestFraction => Stage::Label,
            Metric::MinWidth => Stage::Width,
            Metric::PathLength => Stage::Path,
            Metric::ReachDepth => Stage::Depth,
        }
    }
}

/// What one cave's view has found so far.
#[derive(Debug, Clone)]
pub(crate) struct Memo {
    values: Values,
    /// Bit per [`Stage`] done.
    done: u16,
    floor: u64,
    lay: Layout,
    spawn_floor: bool,
    spawn_size: u32,
    /// The exit, if set and inside the grid.
    exit: Option<(usize, usize)>,
    /// After `Spawn`: the exit lies in the spawn's component.
    exit_in_spawn: bool,
    /// `Measurer::comp` holds the spawn's component (copied before labelling).
    comp_kept: bool,
    /// The flood's claimed plane holds exactly the spawn's component.
    claims_spawn: bool,
    /// `Spawn` ran on the batch's lanes (whose flood holds the spawn's component).
    lane_spawn: bool,
    /// The grid's FLOOR is known to be one component or none (see [`Lazy::with_one_component`]).
    one_comp: bool,
}

impl Memo {
    pub(crate) fn new() -> Memo {
        Memo {
            values: super::EMPTY_VALUES,
            done: 0,
            floor: 0,
            lay: Layout::default(),
            spawn_floor: false,
            spawn_size: 0,
            exit: None,
            exit_in_spawn: false,
            comp_kept: false,
            claims_spawn: false,
            lane_spawn: false,
            one_comp: false,
        }
    }
}

/// A lazy, memoising view of one grid's metrics, borrowing a [`Measurer`]'s scratch. Made by
/// [`Measurer::lazy`]; see the module docs.
pub struct Lazy<'a> {
    pub(super) m: &'a mut Measurer,
    pub(super) g: GridOf<'a>,
    pub(super) cfg: &'a MeasureConfig,
    /// Metrics that may still be asked for.
    pub(super) wanted: MetricSet,
    pub(super) memo: Memo,
    /// The batch buffer holding this cave in lane `k`, when it is measured in lanes.
    pub(super) batch: Option<InBatch<'a>>,
}

/// The grid a view measures: ready, or still only in its batch's lanes.
pub(super) enum GridOf<'a> {
    Ready(&'a Grid),
    /// `grid` (shaped like the cave) holds the cave only once `copied`: until a stage or the
    /// caller needs the grid itself, it stays in lane `k` of the view's batch
    /// ([`Measurer::lazy_in_lanes`]).
    InLane {
        grid: &'a mut Grid,
        copied: bool,
    },
}

impl GridOf<'_> {
    /// The grid, only for its shape: its cells may not have been copied out yet.
    fn shape(&self) -> &Grid {
        match self {
            GridOf::Ready(g) => g,
            GridOf::InLane { grid, .. } => grid,
        }
    }

    /// The grid, which must be ready ([`Lazy::copy_out`]).
    fn get(&self) -> &Grid {
        debug_assert!(!matches!(self, GridOf::InLane { copied: false, .. }));
        self.shape()
    }
}

/// Where a cave sits in the batch [`Measurer::begin_batch`] began: its lanes are measured
/// there ([`super::lanes`]) instead of on its own planes.
pub(super) struct InBatch<'a> {
    pub lanes: &'a mut LaneBuf,
    pub k: usize,
}

impl Lazy<'_> {
    /// The value of `m`, computing its stage (and what that needs) on first use. NaN means
    /// empty (an unreachable exit, a WALL spawn's depth).
    #[inline]
    pub fn get(&mut self, m: Metric) -> f64 {
        self.run(m.stage());
        self.memo.values[m.index()]
    }

    /// Compute every metric of `set` not computed yet, sharing work between them.
    pub fn ensure(&mut self, set: MetricSet) {
        self.wanted = self.wanted.union(set);
        let needed = set.iter().fold(0u16, |acc, m| acc | m.stage().bit());
        // Depth before Path: a full BFS also gives the path, so both cost one BFS.
        for stage in [
            Stage::Count,
            Stage::Boundary,
            Stage::Spawn,
            Stage::Label,
            Stage::Width,
            Stage::Depth,
            Stage::Path,
        ] {
            if needed & stage.bit() != 0 {
                self.run(stage);
            }
        }
    }

    /// Every metric computed so far (NaN: not computed yet, or empty).
    pub fn values(&self) -> &Values {
        &self.memo.values
    }

    /// Copy the values of `set` into `out`, every other entry NaN.
    pub fn copy_into(&self, set: MetricSet, out: &mut Values) {
        for m in Metric::ALL {
            out[m.index()] = if set.contains(m) {
                self.memo.values[m.index()]
            } else {
                f64::NAN
            };
        }
    }

    /// Tell the view the grid's WALL count (known from generation), so `wall_fraction` and
    /// `floor_fraction` cost nothing. `walls` must be the grid's count.
    pub fn with_walls(mut self, walls: u64) -> Self {
        // (A cave still in its lane is checked by the tests that copy it out.)
        if let GridOf::Ready(g) = &self.g {
            debug_assert_eq!(walls, g.count_walls());
        }
        self.set_count(walls);
        self.memo.done |= Stage::Count.bit();
        self
    }

    /// Tell the view that the grid's FLOOR is one component under the measuring connectivity
    /// (or that there is no FLOOR): true after a final `bridge` when the metrics are
    /// 8-connected, since its corridors join every kept region. `connected_fraction`,
    /// `components` and `largest_fraction` then need no flood fill.
    pub fn with_one_component(mut self) -> Self {
        self.memo.one_comp = true;
        self
    }

    fn set_count(&mut self, walls: u64) {
        let cells = self.g.shape().cells() as f64;
        self.memo.floor = self.g.shape().cells() as u64 - walls;
        self.set(Metric::WallFraction, walls as f64 / cells);
        self.set(Metric::FloorFraction, self.memo.floor as f64 / cells);
    }

    /// The measuring settings this view was made with.
    pub fn config(&self) -> &MeasureConfig {
        self.cfg
    }

    /// The cave's grid, copied out of its batch's lane first if it is still only there.
    pub fn grid(&mut self) -> &Grid {
        self.copy_out();
        self.g.get()
    }

    /// Copy the cave out of its lane into its grid, unless it is there already.
    fn copy_out(&mut self) {
        if let GridOf::InLane {
            grid,
            copied: copied @ false,
        } = &mut self.g
        {
            let b = self.batch.as_mut().expect("a cave in a lane has its batch");
            b.lanes.lane_to_grid(self.m.batch.lanes(), b.k, grid);
            *copied = true;
        }
    }

    /// Has `stage` run?
    pub fn done(&self, stage: Stage) -> bool {
        self.memo.done & stage.bit() != 0
    }

    fn set(&mut self, m: Metric, v: f64) {
        self.memo.values[m.index()] = v;
    }

    fn frac(&self, n: u64) -> f64 {
        if self.memo.floor == 0 {
            0.0
        } else {
            n as f64 / self.memo.floor as f64
        }
    }

    /// Run `stage` (after its prerequisites) unless it already ran.
    #[inline]
    fn run(&mut self, stage: Stage) {
        if !self.done(stage) {
            self.compute(stage);
            self.memo.done |= stage.bit();
        }
    }

    /// The `Spawn` stage on this cave's own planes: the spawn's flood fill.
    fn spawn_own(&mut self) {
        self.run(Stage::Count);
        self.run(Stage::Plane);
        if self.memo.spawn_floor {
            let (sy, sx) = self.cfg.spawn;
            let conn = self.cfg.connectivity;
            self.memo.spawn_size = self.m.flood.flood_from(sy, sx, conn).size;
            self.memo.claims_spawn = true;
            self.memo.exit_in_spawn = self
                .memo
                .exit
                .is_some_and(|(y, x)| self.m.flood.is_claimed(y, x));
        }
        self.set(
            Metric::ConnectedFraction,
            self.frac(self.memo.spawn_size as u64),
        );
    }

    /// Compute `stage`, by the way this cave is measured: known to have one component, in its
    /// batch's lanes, or on its own planes.
    fn compute(&mut self, stage: Stage) {
        let (one, lanes) = (self.memo.one_comp, self.batch.is_some());
        match stage {
            Stage::Count => self.count(),
            Stage::Plane => self.plane(),
            Stage::Spawn if one => self.spawn_one_component(),
            Stage::Spawn if lanes => self.spawn_lanes(),
            Stage::Spawn => self.spawn_own(),
            Stage::Label if one => self.label_one_component(),
            Stage::Label if lanes => self.label_lanes(),
            Stage::Label => self.label_own(),
            Stage::Boundary if lanes => self.boundary_lanes(),
            Stage::Boundary => self.boundary_own(),
            Stage::Width if lanes && self.width_in_lanes() => self.width_lanes(),
            Stage::Width => self.width_own(),
            Stage::Path => self.distances(false),
            Stage::Depth => self.distances(true),
        }
    }

    /// Whether a batch cave's width is read from the lanes: its spawn's component is there
    /// (measured in lanes), or, not yet measured, is best measured there (a dense batch).
    fn width_in_lanes(&self) -> bool {
        if self.done(Stage::Spawn) {
            self.memo.lane_spawn
        } else {
            self.m.batch.dense()
        }
    }

    /// The wall count (and the floor), from the grid.
    fn count(&mut self) {
        self.copy_out();
        self.set_count(self.g.get().count_walls())
    }

    /// This cave's own planes (the floor plane the flood, boundary and BFS read).
    fn plane(&mut self) {
        self.copy_out();
        self.m.flood.load(self.g.get());
        let lay = self.m.flood.lay;
        let (sy, sx) = self.cfg.spawn;
        self.memo.lay = lay;
        self.memo.spawn_floor = sy < lay.rows && sx < lay.cols && self.m.flood.is_floor(sy, sx);
        self.memo.exit = self.cfg.exit.filter(|&(y, x)| y < lay.rows && x < lay.cols);
    }

    /// The spawn stage of a cave known to have one component (all its floor).
    fn spawn_one_component(&mut self) {
        use Metric::*;
        self.run(Stage::Count);
        let g = self.g.get();
        let floor_at =
            |g: &Grid, (y, x): (usize, usize)| y < g.rows() && x < g.cols() && !g.get(y, x);
        self.memo.spawn_floor = floor_at(g, self.cfg.spawn);
        let exit_floor = self.cfg.exit.is_some_and(|e| floor_at(g, e));
        self.memo.spawn_size = if self.memo.spawn_floor {
            self.memo.floor as u32
        } else {
            0
        };
        self.memo.exit_in_spawn = self.memo.spawn_floor && exit_floor;
        self.set(ConnectedFraction, self.frac(self.memo.spawn_size as u64));
    }

    /// The labelling of a cave known to have one component.
    fn label_one_component(&mut self) {
        use Metric::*;
        self.run(Stage::Spawn);
        self.set(Components, (self.memo.floor > 0) as u32 as f64);
        self.set(LargestFraction, self.frac(self.memo.floor));
    }

    /// The boundary, measured in the batch's lanes.
    fn boundary_lanes(&mut self) {
        use Metric::*;
        let b = self.batch.as_mut().expect("checked");
        let v = self.m.batch.boundary(b.lanes, b.k);
        self.set(Boundary, v as f64);
    }

    /// The spawn's component, flooded in the batch's lanes.
    fn spawn_lanes(&mut self) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        self.run(Stage::Count);
        let b = self.batch.as_mut().expect("checked");
        let cfg = self.cfg;
        let r = self.m.batch.spawn(b.lanes, b.k, cfg.spawn, cfg.exit, conn);
        self.memo.spawn_floor = r.floor;
        self.memo.spawn_size = r.size;
        self.memo.exit_in_spawn = r.exit_in;
        self.memo.lane_spawn = true;
        self.set(ConnectedFraction, self.frac(r.size as u64));
    }

    /// Every component, labelled in the batch's lanes.
    fn label_lanes(&mut self) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        self.run(Stage::Spawn);
        let b = self.batch.as_mut().expect("checked");
        let cfg = self.cfg;
        let (count, largest) = self.m.batch.label(b.lanes, b.k, cfg.spawn, cfg.exit, conn);
        self.set(Components, count as f64);
        self.set(LargestFraction, self.frac(largest as u64));
    }

    /// The boundary, from this cave's floor plane.
    fn boundary_own(&mut self) {
        use Metric::*;
        self.run(Stage::Plane);
        let b = metrics::boundary(self.m.flood.simd, &self.memo.lay, &self.m.flood.f);
        self.set(Boundary, b as f64);
    }

    /// Every component: the big ones flooded on this cave's planes, the rest by its runs.
    fn label_own(&mut self) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        self.run(Stage::Spawn);
        let spawn_floor = self.memo.spawn_floor;
        // Labelling claims every component: keep the spawn's first if min_width may
        // still want it.
        if spawn_floor && self.wanted.contains(MinWidth) && !self.done(Stage::Width) {
            self.m.comp.clear();
            self.m.comp.extend_from_slice(&self.m.flood.s);
            self.memo.comp_kept = true;
        }
        let mut count = spawn_floor as u32;
        let mut largest = self.memo.spawn_size;
        // Flood while the floor left could hold a larger component than any flooded (a WALL
        // spawn, or a spawn in a pocket), a few components at most; what is left then (the
        // pockets) is labelled by its runs, only counted when none can be the largest.
        let flood = &mut self.m.flood;
        let mut cursor = (0, 0);
        for _ in 0..MORE_FLOODS {
            if flood.unclaimed() <= largest as u64 {
                break;
            }
            let Some((y, x)) = flood.next_unclaimed(&mut cursor) else {
                break;
            };
            let n = flood.flood_from(y, x, conn).size;
            count += 1;
            largest = largest.max(n);
            self.memo.claims_spawn = false;
        }
        if flood.unclaimed() > 0 {
            let count_only = conn == Connectivity::Four && flood.unclaimed() <= largest as u64;
            let (c, l) = flood.label_rest(&mut self.m.runs, conn, count_only);
            count += c;
            largest = largest.max(l);
        }
        self.set(Components, count as f64);
        self.set(LargestFraction, self.frac(largest as u64));
    }

    /// The minimum width of a spawn component measured in the batch's lanes, read from there
    /// without this cave's own planes or flood.
    fn width_lanes(&mut self) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        // The spawn's component is (or, in a dense batch, is best) measured in lanes:
        // the width reads it from there, without this cave's own planes or flood.
        self.run(Stage::Spawn);
        let w = if !self.memo.spawn_floor {
            0
        } else {
            let b = self.batch.as_mut().expect("checked");
            let cfg = self.cfg;
            let m = &mut *self.m;
            let (f, c) = m.width.planes_mut();
            m.batch
                .width_planes(b.lanes, b.k, cfg.spawn, cfg.exit, conn, f, c);
            m.width
                .run_loaded(self.g.shape().rows(), self.g.shape().cols())
        };
        self.set(MinWidth, w as f64);
    }

    /// The spawn component's minimum width, from this cave's planes.
    fn width_own(&mut self) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        if self.batch.is_some() && !self.done(Stage::Spawn) {
            // In a batch, the first cave asking for the spawn's component floods every
            // lane (~3.8 us for 8 caves on AVX-512), and the width then needs this
            // cave's planes anyway: a cave that asks for its width first (a search's
            // few survivors of a popcount) floods only itself (~1.4 us), on the planes
            // the width reads.
            self.spawn_own();
            self.memo.done |= Stage::Spawn.bit();
        } else {
            self.run(Stage::Spawn);
        }
        if self.memo.spawn_floor && !self.memo.comp_kept {
            // Measured in lanes, the spawn's stage did not load the cave's planes.
            self.run(Stage::Plane);
        }
        let w = if !self.memo.spawn_floor {
            0
        } else {
            let lay = self.memo.lay;
            let m = &mut *self.m;
            if self.memo.comp_kept {
                m.width.run(&lay, &m.flood.f, &m.comp)
            } else {
                if !self.memo.claims_spawn {
                    // The claims hold every component (labelled) or none (the spawn's
                    // component was measured in lanes): flood the spawn's alone.
                    let (sy, sx) = self.cfg.spawn;
                    m.flood.clear_claims();
                    m.flood.flood_from(sy, sx, conn);
                    self.memo.claims_spawn = true;
                }
                m.width.run(&lay, &m.flood.f, &m.flood.s)
            }
        };
        self.set(MinWidth, w as f64);
    }

    /// The BFS from the spawn: the path to the exit, and with `full` the reach depth.
    fn distances(&mut self, full: bool) {
        use Metric::*;
        let conn = self.cfg.connectivity;
        self.run(Stage::Plane);
        // Known unreachable (the spawn's flood did not claim the exit): no BFS.
        let exit = self
            .memo
            .exit
            .filter(|_| !self.done(Stage::Spawn) || self.memo.exit_in_spawn);
        if !self.memo.spawn_floor || (!full && exit.is_none()) {
            return;
        }
        let r = self.m.bfs.run(
            self.m.flood.simd,
            &self.memo.lay,
            &self.m.flood.f,
            conn,
            self.cfg.spawn,
            exit,
            full,
        );
        if let Some(p) = r.path {
            self.set(PathLength, p as f64);
        }
        if full {
            self.set(ReachDepth, r.depth as f64);
            // A full BFS settles the path too.
            self.memo.done |= Stage::Path.bit();
        }
    }
}
