//! Which caves the report shows, regenerated from the sweep's recipe: per grid point a typical
//! cave (the seed whose final wall fraction is nearest the point's median), and a passing and a
//! failing cave side by side.
//!
//! Where `seeds.csv` has every seed of a point (`--per-seed all`), the median and the choice are
//! exact over all of them. Otherwise the target is the point's p50 from `trajectory.csv` (the
//! sweep's histogram median, within 0.1%) and the candidates are the first [`SCAN`] seeds of
//! the range, regenerated here; with `--per-seed kept` the passing candidates are the kept
//! rows and the failing ones the seeds missing from them. Pass or fail of a regenerated cave is
//! decided by the sweep's gate; a gate this version cannot evaluate leaves the pair out.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use rayon::prelude::*;

use super::ReportError;
use super::model::{SeedRow, Sweep};
use cavesweep_core::generate::Generator;
use cavesweep_core::measure::MetricSet;
use cavesweep_core::query::Gate;
use cavesweep_engine::render::{self, Marks};

/// Seeds regenerated per point when `seeds.csv` cannot answer.
pub const SCAN: u64 = 256;

/// Which role a cave plays in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The seed whose final wall fraction is nearest the point's median.
    Typical,
    /// The passing cave (by the sweep's gate) nearest the median.
    Passing,
    /// The failing cave (by the sweep's gate) nearest the median.
    Failing,
}

impl Role {
    /// The role's word in picture file names (`img/cave-<point>-<name>.png`), captions and
    /// `caves.csv`: `typical`, `passing` or `failing`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Typical => "typical",
            Role::Passing => "passing",
            Role::Failing => "failing",
        }
    }
}

/// A chosen cave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    /// The cave's seed (regenerated from the point's recipe to draw it).
    pub seed: u64,
    /// Its final wall fraction.
    pub wall: f64,
}

/// The caves chosen for one grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPicks {
    /// The grid point, an index into [`Sweep::points`].
    pub point: usize,
    /// The median the typical cave is nearest to.
    pub median: f64,
    /// How the median and candidates were found, for the captions: `true` = over every seed's
    /// row in `seeds.csv`; `false` = the sweep's p50 (else the scan's median) and the first
    /// [`SCAN`] seeds regenerated (plus kept rows with `--per-seed kept`).
    pub exact: bool,
    /// The typical cave (there always is one).
    pub typical: Pick,
    /// The passing cave nearest the median; `None` when no candidate passed or pass/fail is
    /// unknown (no gate, or one this version cannot evaluate).
    pub passing: Option<Pick>,
    /// The failing cave nearest the median; `None` when no candidate failed or pass/fail is
    /// unknown.
    pub failing: Option<Pick>,
}

impl PointPicks {
    /// The pick for `role`: always `Some` for [`Role::Typical`].
    pub fn get(&self, role: Role) -> Option<Pick> {
        match role {
            Role::Typical => Some(self.typical),
            Role::Passing => self.passing,
            Role::Failing => self.failing,
        }
    }
}

/// A candidate cave: seed, final wall fraction, passed (if known).
type Cand = (u64, f64, Option<bool>);

/// The candidate nearest `target` (ties: lowest seed); a NaN wall fraction counts as far.
fn nearest(cands: impl Iterator<Item = Cand>, target: f64) -> Option<Pick> {
    cands
        .map(|(seed, wall, _)| {
            let d = (wall - target).abs();
            (if d.is_nan() { f64::INFINITY } else { d }, seed, wall)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, seed, wall)| Pick { seed, wall })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The sweep's gate, if this version can evaluate it.
fn gate(s: &Sweep) -> Option<Gate> {
    let primary = s.primary_gate()?;
    if s.gates[primary].name.is_some() || s.gate.trim().is_empty() {
        return None;
    }
    Gate::from_str(&s.gate).ok()
}

/// Regenerate `seeds` of point `p`: (seed, final wall fraction, passed the gate).
fn scan(
    s: &Sweep,
    p: usize,
    seeds: impl Iterator<Item = u64>,
    gate: Option<&Gate>,
) -> Result<Vec<Cand>, ReportError> {
    let recipe = s.point_recipe(p)?;
    let metrics = gate.map_or(MetricSet::EMPTY, Gate::metrics);
    let mut g = Generator::new(&recipe, metrics).map_err(|e| ReportError::Input(e.to_string()))?;
    seeds
        .map(|seed| {
            let cave = g
                .run(seed)
                .map_err(|e| ReportError::Input(format!("seed {seed}: {e}")))?;
            let wall = *cave.trajectory.last().unwrap_or(&f64::NAN);
            Ok((seed, wall, gate.map(|g| g.eval(cave.values).pass())))
        })
        .collect()
}

/// Choose the caves of each point in `points`. `rows` holds `seeds.csv` rows per point when
/// the file was read.
pub fn pick(
    s: &Sweep,
    points: &[usize],
    rows: Option<&HashMap<usize, Vec<SeedRow>>>,
) -> Result<Vec<PointPicks>, ReportError> {
    let gate = gate(s);
    points
        .par_iter()
        .map(|&p| pick_one(s, p, rows.and_then(|r| r.get(&p)), gate.as_ref()))
        .collect()
}

fn pick_one(
    s: &Sweep,
    p: usize,
    rows: Option<&Vec<SeedRow>>,
    gate: Option<&Gate>,
) -> Result<PointPicks, ReportError> {
    let point = &s.points[p];
    let n_seeds = s.n_seeds();
    let complete_rows = rows.filter(|r| {
        s.per_seed == "all"
            && point
                .summary
                .as_ref()
                .is_some_and(|sum| sum.seeds == r.len() as u64)
            && !r.is_empty()
            && r.iter().all(|x| x.wall.is_finite())
    });
    if let Some(r) = complete_rows {
        // Exact: every seed of the point, with its final wall fraction and pass flag.
        let med = median(r.iter().map(|x| x.wall).collect());
        let cands = || r.iter().map(|x| (x.seed, x.wall, x.passed));
        let typical = nearest(cands(), med).expect("non-empty rows");
        return Ok(PointPicks {
            point: p,
            median: med,
            exact: true,
            typical,
            passing: nearest(cands().filter(|c| c.2 == Some(true)), med),
            failing: nearest(cands().filter(|c| c.2 == Some(false)), med),
        });
    }
    let scanned = scan(s, p, s.seeds.start..s.seeds.start + n_seeds.min(SCAN), gate)?;
    // The sweep's median when it has one, else the median of the scanned caves.
    let med = point
        .trajectory
        .last()
        .map(|t| t.p50)
        .filter(|m| m.is_finite())
        .unwrap_or_else(|| median(scanned.iter().map(|c| c.1).collect()));
    let typical = nearest(scanned.iter().copied(), med).expect("at least one seed");
    let (mut passing, mut failing) = (
        nearest(scanned.iter().copied().filter(|c| c.2 == Some(true)), med),
        nearest(scanned.iter().copied().filter(|c| c.2 == Some(false)), med),
    );
    if let Some(r) = rows.filter(|r| s.per_seed == "kept" && !r.is_empty()) {
        // Kept rows are passing caves from the whole range.
        let kept = r.iter().map(|x| (x.seed, x.wall, Some(true)));
        if r.iter().all(|x| x.wall.is_finite()) {
            passing = nearest(kept, med).or(passing);
        } else if passing.is_none() {
            let seed = r.iter().map(|x| x.seed).min().expect("non-empty");
            passing = scan(s, p, std::iter::once(seed), None)?
                .first()
                .map(|c| Pick {
                    seed: c.0,
                    wall: c.1,
                });
        }
        if failing.is_none() && gate.is_some() {
            let kept: HashSet<u64> = r.iter().map(|x| x.seed).collect();
            let missing = (s.seeds.start..s.seeds.end)
                .filter(|x| !kept.contains(x))
                .take(SCAN as usize);
            failing = nearest(
                scan(s, p, missing, gate)?
                    .into_iter()
                    .filter(|c| c.2 == Some(false)),
                med,
            );
        }
    }
    Ok(PointPicks {
        point: p,
        median: med,
        exact: false,
        typical,
        passing,
        failing,
    })
}

/// The longest side, in cells, a report pictures cell by cell; a bigger cave is drawn with one
/// pixel per block of cells, at most this many pixels across.
pub const MAX_THUMB_SIDE: usize = 2048;

/// Pixels per cell of a thumbnail: at least 280 pixels across, at most 12 per cell.
pub fn thumb_scale(cols: usize) -> usize {
    280usize.div_ceil(cols.max(1)).clamp(1, 12)
}

/// The picture of point `p`'s cave `seed` (see [`render::rgb`]).
pub fn picture(s: &Sweep, p: usize, seed: u64) -> Result<super::chart::Png, ReportError> {
    let recipe = s.point_recipe(p)?;
    let mut g =
        Generator::new(&recipe, MetricSet::EMPTY).map_err(|e| ReportError::Input(e.to_string()))?;
    let cave = g
        .run(seed)
        .map_err(|e| ReportError::Input(format!("seed {seed}: {e}")))?;
    let marks = Marks::of(&recipe);
    let side = recipe.rows.max(recipe.cols);
    if side > MAX_THUMB_SIDE {
        // Too big to show cell by cell: one pixel per block of cells.
        let k = side.div_ceil(MAX_THUMB_SIDE);
        let (w, h, px) = render::rgb_downsampled(cave.grid, k, &marks);
        let bytes = render::encode_png(w, h, &px)
            .map_err(|e| ReportError::Render(cavesweep_engine::error::text(&e)))?;
        return Ok(super::chart::Png {
            width: w as u32,
            height: h as u32,
            bytes,
        });
    }
    let scale = thumb_scale(recipe.cols);
    let bytes = render::png_bytes(cave.grid, scale, &marks)
        .map_err(|e| ReportError::Render(cavesweep_engine::error::text(&e)))?;
    Ok(super::chart::Png {
        width: render::picture_width(recipe.rows, recipe.cols, scale, marks.hex()) as u32,
        height: (recipe.rows * scale) as u32,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_prefers_the_lowest_seed_on_ties() {
        let c = [
            (5, 0.3, None),
            (2, 0.5, None),
            (9, 0.5, None),
            (1, f64::NAN, None),
        ];
        assert_eq!(nearest(c.iter().copied(), 0.5).unwrap().seed, 2);
        assert_eq!(nearest(c.iter().copied(), 0.31).unwrap().seed, 5);
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(median(vec![3.0, 1.0, f64::NAN]), 2.0);
    }
}
