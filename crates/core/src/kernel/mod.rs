//! Step kernels: apply a [`Pass`] to a bit-packed [`Grid`], or to a batch of caves in lanes.
//!
//! - [`sync`]: buffered Moore steps, lanes across the words of a row (one grid);
//! - [`batch`]: the same arithmetic with one cave per lane ([`batch::LaneGrid`]), for caves
//!   generated in bulk;
//! - `narrow`: sync steps of grids at most 128 wide in registers (NetHack's 19 x 77);
//! - [`inplace`]: in-place (Gauss-Seidel) scans; [`tworadius`]: RogueBasin's two-radius rule;
//! - [`hood`]: von Neumann, hexagonal and Larger than Life rules (Golly's), buffered;
//! - [`Stepper`] owns the scratch buffers and picks the kernel for a pass; rules the presets use
//!   are monomorphised ([`sync::ConstRule`]) so their logic constant-folds, any other rule runs
//!   the generic evaluator ([`sync::DynRule`]).
//!
//! Every kernel runs in the SIMD clone of the [`Simd`] it is given (see [`crate::simd`]).
//! Kernels know nothing of recipes, seeds or output; they only step grids.

/// Call `$f(args..., rule_eval)` with a compile-time rule for the rules our presets use and the
/// generic evaluator otherwise.
macro_rules! with_rule {
    ($birth:expr, $survive:expr, $f:ident::<$($g:ty),*>($($arg:expr),*)) => {
        match ($birth, $survive) {
            (0x1e0, 0x1e0) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x1e0, 0x1e0>), // B5678/S5678
            (0x1e0, 0x1f0) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x1e0, 0x1f0>), // B5678/S45678
            (0x1c0, 0x1f0) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x1c0, 0x1f0>), // B678/S45678
            (0x008, 0x1ff) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x008, 0x1ff>), // B3/S012345678
            (0x1c0, 0x1ff) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x1c0, 0x1ff>), // B678/S012345678
            (0x1e1, 0x1e1) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::ConstRule::<0x1e1, 0x1e1>), // B05678/S05678
            (b, s) => $f::<$($g,)* _>($($arg,)* $crate::kernel::sync::DynRule($crate::kernel::adders::SumTable::new(b, s))),
        }
    };
}

pub mod adders;
pub mod batch;
pub mod hood;
pub mod inplace;
pub mod inplace_lanes;
mod narrow;
pub mod sync;
pub mod tworadius;

use crate::grid::Grid;
use crate::rule::{Border, Outside, Pass, Rule, Update};
use crate::simd::{Isa, Lane, Simd};
use batch::LaneGrid;

/// True when the rule has a compile-time specialisation (reported by `cavesweep bench`).
pub fn is_specialised(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::Moore {
            birth: 0x1e0,
            survive: 0x1e0 | 0x1f0
        } | Rule::Moore {
            birth: 0x1c0,
            survive: 0x1f0 | 0x1ff
        } | Rule::Moore {
            birth: 0x008,
            survive: 0x1ff
        } | Rule::Moore {
            birth: 0x1e1,
            survive: 0x1e1
        }
    )
}

/// The Moore rule equal to RogueBasin's `R1 >= t` alone (R1 = count8 + centre):
/// birth at count8 >= t, survival at count8 >= t - 1.
pub(crate) fn r1_as_moore(t: u8) -> (u16, u16) {
    let from = |k: i32| (k.clamp(0, 9)..=8).fold(0u16, |m, c| m | (1 << c));
    (from(t as i32), from(t as i32 - 1))
}

/// The birth/survive masks a pass runs with on the sync Moore kernels, if it does: sync Moore
/// passes and sync `R1 >= t` passes (which are Moore rules, see `r1_as_moore`). These are
/// also passes a batch of caves can run in lanes (see [`lane_pass`] for all of them).
pub fn sync_moore(pass: &Pass) -> Option<(u16, u16)> {
    match (pass.rule, pass.update) {
        (Rule::Moore { birth, survive }, Update::Sync) => Some((birth, survive)),
        (
            Rule::TwoRadius {
                r1_min,
                r2_max: None,
            },
            Update::Sync,
        ) => Some(r1_as_moore(r1_min)),
        _ => None,
    }
}

/// Whether `pass` runs on caves `rows` high in lanes: a sync Moore pass ([`step_lanes`]), a
/// sync two-radius one with a constant outside ([`tworadius::step_two_radius_lanes`]) or an
/// in-place column-major one ([`inplace_lanes::step_colmajor`]).
pub fn lane_pass(pass: &Pass, rows: usize) -> bool {
    sync_moore(pass).is_some()
        || tworadius::lanes_fit(pass).is_some()
        || inplace_lanes::colmajor_fits(pass, rows).is_some()
}

/// One sync Moore step of `g` in place (`tmp`, same shape, is the other buffer); with `border`
/// solid the outer ring is forced to WALL in the same pass. Returns the walls after the step.
#[inline(always)]
fn step_sync<I: Isa>(
    g: &mut Grid,
    tmp: &mut Grid,
    birth: u16,
    survive: u16,
    outside: Outside,
    border: Border,
) -> u64 {
    // Narrow grids (NetHack's 19 x 77): rows in registers, no guard preparation.
    if let Some(n) = narrow::step(g, tmp, birth, survive, outside, border) {
        std::mem::swap(g, tmp);
        return n;
    }
    g.prepare_edges(outside);
    let solid = border == Border::Solid;
    // Rows whose padded words hold whole vectors of the batch width (AVX-512: 8 words, e.g.
    // 1024 columns) step in those instead of `Row`'s 4: half the loop trips and loads.
    let wide = <I::Lanes as Lane>::N;
    let n = if wide > <I::Row as Lane>::N && sync::whole_vectors(g, wide) {
        with_rule!(birth, survive, step_grid_call::<I::Lanes>(g, tmp, solid))
    } else {
        with_rule!(birth, survive, step_grid_call::<I::Row>(g, tmp, solid))
    };
    g.clear_edges_after(outside);
    std::mem::swap(g, tmp);
    n
}

#[inline(always)]
fn step_grid_call<V: Lane, R: sync::RuleEval>(g: &Grid, tmp: &mut Grid, solid: bool, r: R) -> u64 {
    sync::step_grid::<V, R>(g, tmp, r, solid)
}

/// One sync Moore step of every cave of a batch `a -> b` (see [`sync_moore`] for the masks),
/// leaving `a`'s guards zero again. The caller swaps the two. Returns the walls per lane.
#[inline(always)]
pub fn step_lanes<V: Lane>(
    a: &mut LaneGrid<'_, V>,
    b: &mut LaneGrid<'_, V>,
    (birth, survive): (u16, u16),
    outside: Outside,
    border: Border,
) -> V {
    a.prepare_edges(outside);
    let solid = border == Border::Solid;
    // The side guards' value when it is the same in every row: the edge strips then take it
    // as a constant instead of loading the guard vectors, which keeps their cache lines (2 of
    // a 90x140 batch's 5 per row) out of L1 while the steps run.
    let guard = match outside {
        Outside::Floor => Some(V::ZERO),
        Outside::Wall => Some(V::ONES),
        _ => None,
    };
    let n = with_rule!(birth, survive, step_lanes_call::<V>(a, b, solid, guard));
    a.restore_edges(outside);
    n
}

#[inline(always)]
fn step_lanes_call<V: Lane, R: sync::RuleEval>(
    a: &LaneGrid<'_, V>,
    b: &mut LaneGrid<'_, V>,
    solid: bool,
    guard: Option<V>,
    r: R,
) -> V {
    batch::step_lanes::<V, R>(a, b, r, solid, guard)
}

/// Owns the scratch buffers for stepping grids of one shape; reuse it across seeds.
#[derive(Debug)]
pub struct Stepper {
    simd: Simd,
    tmp: Option<Grid>,
    inplace: inplace::InplaceScratch,
    ltl: hood::LtlScratch,
}

impl Default for Stepper {
    fn default() -> Stepper {
        Stepper::with_simd(Simd::active())
    }
}

/// One application of a pass, run in a SIMD clone; the walls after the step when the kernel
/// counted them.
#[inline(always)]
fn step_in<I: Isa>(
    g: &mut Grid,
    tmp: &mut Grid,
    inplace: &mut inplace::InplaceScratch,
    ltl: &mut hood::LtlScratch,
    pass: &Pass,
) -> Option<u64> {
    let solid = pass.border == Border::Solid;
    match (pass.rule, pass.update) {
        (
            Rule::Hood {
                hood,
                birth,
                survive,
            },
            Update::Sync,
        ) => {
            g.prepare_edges(pass.outside);
            let n = hood::step_hood::<I::Row>(g, tmp, hood, birth, survive, solid);
            g.clear_edges_after(pass.outside);
            std::mem::swap(g, tmp);
            return Some(n);
        }
        (Rule::Ltl(l), Update::Sync) => {
            let n = hood::step_ltl::<I::Row>(g, tmp, &l, pass.outside, solid, ltl);
            std::mem::swap(g, tmp);
            return Some(n);
        }
        _ => {}
    }
    if let Some((birth, survive)) = sync_moore(pass) {
        // The sync kernel applies the border in the same pass.
        return Some(step_sync::<I>(
            g,
            tmp,
            birth,
            survive,
            pass.outside,
            pass.border,
        ));
    }
    match (pass.rule, pass.update) {
        (Rule::TwoRadius { r1_min, r2_max }, Update::Sync) => {
            tworadius::step_two_radius::<I>(g, tmp, r1_min, r2_max, pass.outside);
            std::mem::swap(g, tmp);
        }
        (rule, order) => inplace::step_inplace::<I>(g, inplace, rule, pass.outside, order),
    }
    if pass.border == Border::Solid {
        g.solid_border();
    }
    None
}

impl Stepper {
    /// A stepper on the process's SIMD path ([`Simd::active`]).
    pub fn new() -> Stepper {
        Stepper::default()
    }

    /// A stepper on a given SIMD path.
    pub fn with_simd(simd: Simd) -> Stepper {
        Stepper {
            simd,
            tmp: None,
            inplace: inplace::InplaceScratch::new(),
            ltl: hood::LtlScratch::default(),
        }
    }

    /// The SIMD path this stepper's kernels run on.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    fn tmp_for(tmp: &mut Option<Grid>, g: &Grid) -> Grid {
        match tmp.take() {
            Some(t) if (t.rows(), t.cols()) == (g.rows(), g.cols()) => t,
            _ => Grid::new(g.rows(), g.cols()).expect("shape of an existing grid"),
        }
    }

    /// Apply `pass` once (its border included, its repeat count ignored); returns the number of
    /// WALL cells after the step.
    pub fn step(&mut self, g: &mut Grid, pass: &Pass) -> u64 {
        let mut tmp = Stepper::tmp_for(&mut self.tmp, g);
        let counted = crate::simd_run!(self.simd, <I> (
            g: &'a mut Grid = g,
            tmp: &'a mut Grid = &mut tmp,
            inplace: &'a mut inplace::InplaceScratch = &mut self.inplace,
            ltl: &'a mut hood::LtlScratch = &mut self.ltl,
            pass: &'a Pass = pass,
        ) -> Option<u64> {
            step_in::<I>(g, tmp, inplace, ltl, pass)
        });
        self.tmp = Some(tmp);
        counted.unwrap_or_else(|| g.count_walls())
    }

    /// Apply `pass` `pass.repeat` times.
    pub fn run_pass(&mut self, g: &mut Grid, pass: &Pass) {
        for _ in 0..pass.repeat {
            self.step(g, pass);
        }
    }
}

#[cfg(test)]
mod tests;

/// Proptest strategies shared by the kernel test modules.
#[cfg(test)]
pub(crate) mod strategies {
    use proptest::prelude::*;

    use crate::rule::Outside;

    /// Every outside mode.
    pub fn outside() -> impl Strategy<Value = Outside> {
        prop::sample::select(Outside::ALL.to_vec())
    }

    /// Small heights, the degenerate 1..3 favoured.
    pub fn small_rows() -> impl Strategy<Value = usize> {
        prop_oneof![Just(1usize), Just(2), Just(3), 1usize..8]
    }

    /// Widths at the kernels' edges: word boundaries (63/64/65), 4-word vector boundaries
    /// (192/256/257), two vectors (512), the presets' 77 and 140.
    pub fn edge_cols() -> impl Strategy<Value = usize> {
        prop::sample::select(vec![
            1usize, 2, 63, 64, 65, 77, 127, 128, 140, 192, 200, 256, 257, 512,
        ])
    }

    /// Heights at the edges: degenerate ones, the presets' 19 and 90, and heights around 64
    /// and 128 (the flood's pending-row bitset crosses a word; a column-major scan's transposed
    /// grid is this many columns wide: 33, 64, 65).
    pub fn edge_rows() -> impl Strategy<Value = usize> {
        prop::sample::select(vec![1usize, 2, 3, 19, 33, 63, 64, 65, 90, 129])
    }

    /// Small widths plus the word-boundary ones.
    pub fn small_cols() -> impl Strategy<Value = usize> {
        prop_oneof![
            Just(1usize),
            Just(2),
            Just(3),
            Just(63),
            Just(64),
            Just(65),
            1usize..10
        ]
    }
}
