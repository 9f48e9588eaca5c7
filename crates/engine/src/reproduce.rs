//! `reproduce chapter`: rerun the book chapter's experiment with numpy's RNG replayed bit for
//! bit (seeds 0..199, 90x140, fill 0.45, 4 steps) for the strict and the classic 4-5 rule, and
//! set the measured numbers beside the chapter's own statements.
//!
//! This module computes; the CLI prints and writes. The connectivity figure uses the chapter's
//! own `reachable_floor` semantics (a WALL spawn is marked seen and flooded from), not ours, so
//! the comparison is like for like.
//!
//! [`audit`] goes further: every checkable statement of the chapter's excerpt, each measured by
//! an in-process sweep this run makes, with a verdict (`audit.md` / `audit.html`).

pub mod audit;

use std::collections::VecDeque;

use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{Metric, MetricSet};
use cavesweep_core::presets::preset;
use cavesweep_core::recipe::RecipeError;
use cavesweep_core::rng::RngKind;

/// Per-step statistics of the wall fraction over all seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct StepStats {
    /// Smoothing steps done: 0 is the grid right after the fill.
    pub step: usize,
    /// Mean wall fraction (walls / cells, 0..=1) over the seeds.
    pub mean: f64,
    /// Sample standard deviation of the wall fraction (divided by `n - 1`).
    pub sd: f64,
    /// Lowest wall fraction of any seed.
    pub min: f64,
    /// Highest wall fraction of any seed.
    pub max: f64,
}

/// The measured outcome of one variant.
#[derive(Debug, Clone)]
pub struct VariantRun {
    /// The preset's name (`chapter-strict` or `classic-4-5` in the chapter's comparison).
    pub preset: String,
    /// Smoothing steps each cave got (the recipe's `steps`, overridden).
    pub steps: u32,
    /// Seeds run: `0..seeds`, with numpy's RNG.
    pub seeds: u64,
    /// Step 0 = after the fill.
    pub trajectory: Vec<StepStats>,
    /// Final wall fraction per seed, in seed order.
    pub final_walls: Vec<f64>,
    /// The chapter's `connected_fraction` (its `evaluate_cave`) per seed.
    pub connected: Vec<f64>,
    /// Our 4-connected component count per seed.
    pub components: Vec<f64>,
}

impl VariantRun {
    /// The wall-fraction statistics after the last step.
    pub fn final_stats(&self) -> &StepStats {
        self.trajectory.last().expect("at least the fill")
    }
    /// Mean of the chapter's connected fraction.
    pub fn connected_mean(&self) -> f64 {
        mean(&self.connected)
    }
    /// Seeds whose floor is entirely reachable from the spawn.
    pub fn fully_connected(&self) -> usize {
        self.connected.iter().filter(|&&c| c >= 1.0).count()
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The chapter's `reachable_floor` + `evaluate_cave` connected fraction, transcribed: BFS from
/// `start` (marked seen even if it is WALL), 4-neighbours, floor cells only;
/// `seen.sum() / max(1, floor.sum())`.
pub fn chapter_connected_fraction(g: &Grid, start: (usize, usize)) -> f64 {
    let (rows, cols) = (g.rows(), g.cols());
    let mut seen = vec![false; rows * cols];
    let mut queue = VecDeque::from([start]);
    seen[start.0 * cols + start.1] = true;
    let mut n = 1u64;
    while let Some((y, x)) = queue.pop_front() {
        for (dy, dx) in [(-1isize, 0isize), (1, 0), (0, -1), (0, 1)] {
            let (ny, nx) = (y as isize + dy, x as isize + dx);
            if ny < 0 || nx < 0 || ny >= rows as isize || nx >= cols as isize {
                continue;
            }
            let (ny, nx) = (ny as usize, nx as usize);
            if seen[ny * cols + nx] || g.get(ny, nx) {
                continue;
            }
            seen[ny * cols + nx] = true;
            n += 1;
            queue.push_back((ny, nx));
        }
    }
    let floor = g.cells() as u64 - g.count_walls();
    n as f64 / floor.max(1) as f64
}

/// Run `preset` with the numpy RNG for `seeds` seeds and `steps` smoothing steps.
pub fn run_variant(preset_name: &str, seeds: u64, steps: u32) -> Result<VariantRun, RecipeError> {
    let mut recipe = preset(preset_name)?;
    recipe.rng = RngKind::Numpy;
    recipe.set("steps", &steps.to_string())?;
    let metrics: MetricSet = [Metric::Components].into_iter().collect();
    let spawn = recipe.spawn_cell();
    let mut generator = Generator::new(&recipe, metrics)?;
    let len = recipe.trajectory_len();
    let mut per_step: Vec<Vec<f64>> = vec![Vec::with_capacity(seeds as usize); len];
    let mut run = VariantRun {
        preset: preset_name.to_string(),
        steps,
        seeds,
        trajectory: Vec::new(),
        final_walls: Vec::new(),
        connected: Vec::new(),
        components: Vec::new(),
    };
    for seed in 0..seeds {
        let cave = generator.run(seed).expect("validated recipe fills");
        for (k, &w) in cave.trajectory.iter().enumerate() {
            per_step[k].push(w);
        }
        run.final_walls.push(*cave.trajectory.last().unwrap());
        run.connected
            .push(chapter_connected_fraction(cave.grid, spawn));
        run.components.push(cave.values[Metric::Components.index()]);
    }
    run.trajectory = per_step
        .iter()
        .enumerate()
        .map(|(step, v)| {
            let m = mean(v);
            let var =
                v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len().max(2) - 1) as f64;
            StepStats {
                step,
                mean: m,
                sd: var.sqrt(),
                min: v.iter().cloned().fold(f64::INFINITY, f64::min),
                max: v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            }
        })
        .collect();
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapter_connectivity_counts_a_wall_spawn_like_the_chapter() {
        // Spawn on a wall: the chapter marks it seen (1) and floods its floor neighbours.
        let g = Grid::from_text("...\n.#.\n...\n").unwrap();
        assert_eq!(chapter_connected_fraction(&g, (1, 1)), 9.0 / 8.0);
        let g = Grid::from_text("..#..\n..#..\n").unwrap();
        assert_eq!(chapter_connected_fraction(&g, (0, 0)), 0.5);
    }
}
