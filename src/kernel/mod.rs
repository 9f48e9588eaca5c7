//! Step kernels: apply a [`Pass`] to a bit-packed [`Grid`].
//!
//! - [`sync`]: buffered Moore steps, word-parallel with `wide::u64x4` (one grid, 4 words per
//!   vector) or across four grids in lock-step ([`sync::Batch4`]);
//! - [`Stepper`] owns the scratch buffers and picks the kernel for a pass; rules the presets use
//!   are monomorphised ([`sync::ConstRule`]) so their logic constant-folds, any other rule runs
//!   the generic evaluator ([`sync::DynRule`]).
//!
//! Kernels know nothing of recipes, seeds or output; they only step grids.

pub mod inplace;
pub mod lanes;
pub mod sync;
pub mod tworadius;

use crate::grid::Grid;
use crate::rule::{Border, Outside, Pass, Rule, Update};
use lanes::SumTable;
use sync::{Batch4, ConstRule, DynRule};

/// Call `$f(args..., rule_eval)` with a compile-time rule for the rules our presets use and the
/// generic evaluator otherwise.
macro_rules! with_rule {
    ($birth:expr, $survive:expr, $f:ident($($arg:expr),*)) => {
        match ($birth, $survive) {
            (0x1e0, 0x1e0) => $f($($arg,)* ConstRule::<0x1e0, 0x1e0>), // B5678/S5678
            (0x1e0, 0x1f0) => $f($($arg,)* ConstRule::<0x1e0, 0x1f0>), // B5678/S45678
            (0x1c0, 0x1f0) => $f($($arg,)* ConstRule::<0x1c0, 0x1f0>), // B678/S45678
            (0x008, 0x1ff) => $f($($arg,)* ConstRule::<0x008, 0x1ff>), // B3/S012345678
            (0x1c0, 0x1ff) => $f($($arg,)* ConstRule::<0x1c0, 0x1ff>), // B678/S012345678
            (0x1e1, 0x1e1) => $f($($arg,)* ConstRule::<0x1e1, 0x1e1>), // B05678/S05678
            (b, s) => $f($($arg,)* DynRule(SumTable::new(b, s))),
        }
    };
}

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

/// One sync Moore step of `g` in place, using `tmp` (same shape) as the other buffer; with
/// `border` solid the outer ring is forced to WALL in the same pass.
pub fn step_sync(
    g: &mut Grid,
    tmp: &mut Grid,
    birth: u16,
    survive: u16,
    outside: Outside,
    border: Border,
) {
    g.prepare_edges(outside);
    let solid = border == Border::Solid;
    with_rule!(birth, survive, step_grid_call(g, tmp, solid));
    g.clear_edges_after(outside);
    std::mem::swap(g, tmp);
}

#[inline(always)]
fn step_grid_call<R: sync::RuleEval>(g: &Grid, tmp: &mut Grid, solid: bool, r: R) {
    sync::step_grid(g, tmp, r, solid)
}

/// One sync Moore step of all four grids of a batch.
pub fn step_batch(b: &mut Batch4, tmp: &mut Batch4, birth: u16, survive: u16, outside: Outside) {
    b.prepare_edges(outside);
    with_rule!(birth, survive, step_batch_call(b, tmp));
    if outside != Outside::Floor {
        b.clear_edges();
    }
    std::mem::swap(b, tmp);
}

#[inline(always)]
fn step_batch_call<R: sync::RuleEval>(b: &Batch4, tmp: &mut Batch4, r: R) {
    sync::step_batch(b, tmp, r)
}

/// Apply a pass `pass.repeat` times to a batch. Only sync Moore passes batch; see
/// [`batchable`].
pub fn run_pass_batch(b: &mut Batch4, tmp: &mut Batch4, pass: &Pass) {
    let Rule::Moore { birth, survive } = pass.rule else {
        panic!("run_pass_batch: only Moore rules batch (check `batchable` first)");
    };
    assert_eq!(
        pass.update,
        Update::Sync,
        "run_pass_batch: only sync passes batch"
    );
    for _ in 0..pass.repeat {
        step_batch(b, tmp, birth, survive, pass.outside);
        if pass.border == Border::Solid {
            b.solid_border();
        }
    }
}

/// Whether a pass can run on [`Batch4`] (sync updates of a Moore rule).
pub fn batchable(pass: &Pass) -> bool {
    pass.update == Update::Sync && matches!(pass.rule, Rule::Moore { .. })
}

/// The Moore rule equal to RogueBasin's `R1 >= t` alone (R1 = count8 + centre):
/// birth at count8 >= t, survival at count8 >= t - 1.
fn r1_as_moore(t: u8) -> (u16, u16) {
    let from = |k: i32| (k.clamp(0, 9)..=8).fold(0u16, |m, c| m | (1 << c));
    (from(t as i32), from(t as i32 - 1))
}

/// Owns the scratch buffers for stepping grids of one shape; reuse it across seeds.
#[derive(Debug, Default)]
pub struct Stepper {
    tmp: Option<Grid>,
    inplace: inplace::InplaceScratch,
}

impl Stepper {
    pub fn new() -> Stepper {
        Stepper::default()
    }

    fn tmp_for(&mut self, g: &Grid) -> &mut Grid {
        let fits = self
            .tmp
            .as_ref()
            .is_some_and(|t| (t.rows(), t.cols()) == (g.rows(), g.cols()));
        if !fits {
            self.tmp = Some(Grid::new(g.rows(), g.cols()).expect("shape of an existing grid"));
        }
        self.tmp.as_mut().unwrap()
    }

    /// Apply `pass` once (its border included, its repeat count ignored).
    pub fn step(&mut self, g: &mut Grid, pass: &Pass) {
        match (pass.rule, pass.update) {
            (Rule::Moore { birth, survive }, Update::Sync) => {
                let tmp = self.tmp_for(g);
                // The sync kernel applies the border in the same pass.
                return step_sync(g, tmp, birth, survive, pass.outside, pass.border);
            }
            // `R1 >= t` alone is a Moore rule: use the (faster) sync kernel.
            (
                Rule::TwoRadius {
                    r1_min,
                    r2_max: None,
                },
                Update::Sync,
            ) => {
                let (birth, survive) = r1_as_moore(r1_min);
                let tmp = self.tmp_for(g);
                return step_sync(g, tmp, birth, survive, pass.outside, pass.border);
            }
            (Rule::TwoRadius { r1_min, r2_max }, Update::Sync) => {
                let tmp = self.tmp_for(g);
                tworadius::step_two_radius(g, tmp, r1_min, r2_max, pass.outside);
                std::mem::swap(g, self.tmp.as_mut().unwrap());
            }
            (rule, order) => {
                inplace::step_inplace(g, &mut self.inplace, rule, pass.outside, order);
            }
        }
        if pass.border == Border::Solid {
            g.solid_border();
        }
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
