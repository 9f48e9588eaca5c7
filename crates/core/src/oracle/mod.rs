//! The scalar oracle: one byte per cell and the obvious loops, for every rule, outside, update
//! order and border mode, and [`cave`], the whole pipeline (passes, post-steps, metrics) on bytes.
//! It is the specification the fast code is tested against and the baseline the benchmarks
//! compare with; nothing in the production pipeline calls it. [`metrics`] holds the oracles of
//! every measurement and post-step.
//!
//! The oracle sits above the code it checks: it uses the library's types (recipes, configs,
//! the numpy RNG), and nothing outside tests and benchmarks uses it.

pub mod metrics;

use crate::fill;
use crate::grid::Grid;
use crate::measure::{MeasureConfig, MetricSet, Values};
use crate::recipe::{Fill, Recipe};
use crate::rng::{NumpyRandom, RngKind, cave_rng};
use crate::rule::{Border, Ltl, Outside, Pass, Rule, Update};
use crate::simd::{PcgKernel, Simd};

/// A byte grid: `cells[y * cols + x]` is 1 for WALL, 0 for FLOOR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteGrid {
    /// Number of rows (the y extent).
    pub rows: usize,
    /// Number of columns, i.e. cells per row (the x extent).
    pub cols: usize,
    /// `rows * cols` cells in row-major order, each 1 (WALL) or 0 (FLOOR).
    pub cells: Vec<u8>,
}

impl ByteGrid {
    /// An all-FLOOR `rows x cols` grid. Unlike [`Grid::new`] the shape is not checked.
    pub fn new(rows: usize, cols: usize) -> ByteGrid {
        ByteGrid {
            rows,
            cols,
            cells: vec![0; rows * cols],
        }
    }

    /// From a bit-packed grid.
    pub fn from_grid(g: &crate::grid::Grid) -> ByteGrid {
        ByteGrid {
            rows: g.rows(),
            cols: g.cols(),
            cells: g.to_bytes(),
        }
    }

    /// To a bit-packed grid.
    pub fn to_grid(&self) -> crate::grid::Grid {
        crate::grid::Grid::from_bytes(self.rows, self.cols, &self.cells).expect("valid shape")
    }

    /// Cell `(y, x)`, which must lie inside the grid: 1 = WALL, 0 = FLOOR.
    #[inline]
    pub fn get(&self, y: usize, x: usize) -> u8 {
        self.cells[y * self.cols + x]
    }

    /// The cell at `(y, x)` which may lie outside the grid, read per `outside`.
    #[inline]
    pub fn read(&self, y: isize, x: isize, outside: Outside) -> u32 {
        let (r, c) = (self.rows as isize, self.cols as isize);
        if (0..r).contains(&y) && (0..c).contains(&x) {
            return self.get(y as usize, x as usize) as u32;
        }
        match outside {
            Outside::Floor => 0,
            Outside::Wall => 1,
            Outside::Wrap => self.get(y.rem_euclid(r) as usize, x.rem_euclid(c) as usize) as u32,
        }
    }

    /// WALL cells among the 8 neighbours of `(y, x)`.
    pub fn moore_count(&self, y: usize, x: usize, outside: Outside) -> u32 {
        let mut n = 0;
        for dy in -1..=1 {
            for dx in -1..=1 {
                if dy != 0 || dx != 0 {
                    n += self.read(y as isize + dy, x as isize + dx, outside);
                }
            }
        }
        n
    }

    /// WALL cells among the offsets `hood` of `(y, x)`.
    pub fn hood_count(&self, y: usize, x: usize, hood: &[(isize, isize)], outside: Outside) -> u32 {
        hood.iter()
            .map(|&(dy, dx)| self.read(y as isize + dy, x as isize + dx, outside))
            .sum()
    }

    /// WALL cells in a Larger than Life neighbourhood of `(y, x)` (the centre if `middle`).
    pub fn ltl_count(&self, y: usize, x: usize, l: &Ltl, outside: Outside) -> u32 {
        let r = l.radius as isize;
        let mut n = 0;
        for dy in -r..=r {
            for dx in -r..=r {
                let centre = dy == 0 && dx == 0;
                if (centre && l.middle) || (!centre && l.contains(dy, dx)) {
                    n += self.read(y as isize + dy, x as isize + dx, outside);
                }
            }
        }
        n
    }

    /// WALL cells in the 5x5 around `(y, x)` minus its 4 corners (21 cells, centre included).
    pub fn r2_count(&self, y: usize, x: usize, outside: Outside) -> u32 {
        let mut n = 0;
        for dy in -2isize..=2 {
            for dx in -2isize..=2 {
                if dy.abs() == 2 && dx.abs() == 2 {
                    continue;
                }
                n += self.read(y as isize + dy, x as isize + dx, outside);
            }
        }
        n
    }

    /// The next state of `(y, x)` under `rule`, reading the grid as it is now.
    pub fn next_cell(&self, rule: Rule, y: usize, x: usize, outside: Outside) -> u8 {
        let wall = self.get(y, x) == 1;
        match rule {
            Rule::Hood {
                hood,
                birth,
                survive,
            } => {
                let n = self.hood_count(y, x, hood.offsets(), outside);
                return Rule::next_moore(birth, survive, wall, n) as u8;
            }
            Rule::Ltl(l) => return l.next(wall, self.ltl_count(y, x, &l, outside)) as u8,
            _ => {}
        }
        let n = self.moore_count(y, x, outside);
        match rule {
            Rule::Moore { birth, survive } => Rule::next_moore(birth, survive, wall, n) as u8,
            Rule::TwoRadius { r1_min, r2_max } => {
                let r1 = n + wall as u32;
                let by_r2 = r2_max.is_some_and(|m| self.r2_count(y, x, outside) <= m as u32);
                (r1 >= r1_min as u32 || by_r2) as u8
            }
            Rule::Hood { .. } | Rule::Ltl(_) => unreachable!("counted above"),
        }
    }

    /// Apply a pass once (ignoring its repeat count).
    pub fn step(&mut self, pass: &Pass) {
        let (rows, cols) = (self.rows, self.cols);
        match pass.update {
            Update::Sync => {
                let mut next = vec![0u8; rows * cols];
                for y in 0..rows {
                    for x in 0..cols {
                        next[y * cols + x] = self.next_cell(pass.rule, y, x, pass.outside);
                    }
                }
                self.cells = next;
            }
            Update::InPlaceRowMajor => {
                for y in 0..rows {
                    for x in 0..cols {
                        self.cells[y * cols + x] = self.next_cell(pass.rule, y, x, pass.outside);
                    }
                }
            }
            Update::InPlaceColMajor => {
                for x in 0..cols {
                    for y in 0..rows {
                        self.cells[y * cols + x] = self.next_cell(pass.rule, y, x, pass.outside);
                    }
                }
            }
        }
        if pass.border == Border::Solid {
            self.solid_border();
        }
    }

    /// Apply a pass `pass.repeat` times.
    pub fn run_pass(&mut self, pass: &Pass) {
        for _ in 0..pass.repeat {
            self.step(pass);
        }
    }

    /// Force the outer ring to WALL.
    pub fn solid_border(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        for x in 0..cols {
            self.cells[x] = 1;
            self.cells[(rows - 1) * cols + x] = 1;
        }
        for y in 0..rows {
            self.cells[y * cols] = 1;
            self.cells[y * cols + cols - 1] = 1;
        }
    }

    /// Number of WALL cells.
    pub fn count_walls(&self) -> u64 {
        self.cells.iter().map(|&c| c as u64).sum()
    }
}

/// A cave made by [`cave`]: what [`crate::generate::Generator::run`] returns, by the oracle.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleCave {
    /// The final grid, after every pass and post-step.
    pub grid: ByteGrid,
    /// Wall fraction after the fill, after each pass application, after each post-step.
    pub trajectory: Vec<f64>,
    /// Metric values by the byte-grid oracles (NaN where not requested or empty).
    pub values: Values,
}

/// The whole pipeline of `recipe` for `seed` by the oracle, to compare with the production
/// pipeline: the fill is production's on the scalar path (the fills have tests of their own),
/// drawn from the same per-cave stream in the same order as `docs/variants.md` says;
/// everything after it (passes,
/// post-steps, which continue that stream, and the metrics of `metrics`) runs on bytes.
///
/// Panics on a recipe that does not validate.
pub fn cave(recipe: &Recipe, seed: u64, metrics: MetricSet) -> OracleCave {
    recipe.validate().expect("a valid recipe");
    let mut g = Grid::new(recipe.rows, recipe.cols).expect("validated shape");
    let mut rng = cave_rng(seed);
    match (recipe.fill, recipe.rng) {
        (Fill::Bernoulli { p }, RngKind::Numpy) => fill::fill_numpy_on(
            Simd::SCALAR,
            PcgKernel::Scalar,
            &mut g,
            p,
            &mut NumpyRandom::new(seed),
        ),
        (Fill::Bernoulli { p }, RngKind::Xoshiro) => {
            fill::fill_bernoulli(Simd::SCALAR, &mut g, p, &mut rng)
        }
        (Fill::ExactFloor { floor }, _) => {
            fill::fill_exact_count(Simd::SCALAR, &mut g, floor, &mut rng)
        }
    }
    .expect("validated fill");
    let mut b = ByteGrid::from_grid(&g);
    let cells = (b.rows * b.cols) as f64;
    let mut trajectory = vec![b.count_walls() as f64 / cells];
    for pass in &recipe.passes {
        for _ in 0..pass.repeat {
            b.step(pass);
            trajectory.push(b.count_walls() as f64 / cells);
        }
    }
    for &step in &recipe.post {
        metrics::apply_post(&mut b, step, recipe.connectivity, &mut rng);
        trajectory.push(b.count_walls() as f64 / cells);
    }
    let cfg = MeasureConfig {
        connectivity: recipe.connectivity,
        spawn: recipe.spawn_cell(),
        exit: recipe.exit_cell(),
        metrics,
    };
    let values = metrics::measure(&b, &cfg);
    OracleCave {
        grid: b,
        trajectory,
        values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    fn bg(t: &str) -> ByteGrid {
        ByteGrid::from_grid(&Grid::from_text(t).unwrap())
    }

    fn text(b: &ByteGrid) -> String {
        b.to_grid().to_text()
    }

    #[test]
    fn counts_by_outside_mode() {
        let g = bg("#..\n...\n..#\n");
        assert_eq!(g.moore_count(0, 0, Outside::Floor), 0);
        assert_eq!(g.moore_count(0, 0, Outside::Wall), 5);
        // On the torus (0,0) touches (2,2) diagonally.
        assert_eq!(g.moore_count(0, 0, Outside::Wrap), 1);
        assert_eq!(g.moore_count(1, 1, Outside::Floor), 2);
        assert_eq!(g.r2_count(1, 1, Outside::Floor), 2);
    }

    #[test]
    fn hand_worked_strict_step() {
        // A 3x3 wall block in a 5x5 floor: corners of the block have 3 wall neighbours, edges 5,
        // centre 8; outside floor. B5678/S5678 keeps a plus shape.
        let mut g = bg(".....\n.###.\n.###.\n.###.\n.....\n");
        g.step(&Pass::sync(
            Rule::chapter_strict(),
            Outside::Floor,
            Border::None,
        ));
        assert_eq!(text(&g), ".....\n..#..\n.###.\n..#..\n.....\n");
    }

    #[test]
    fn hand_worked_inplace_orders_differ() {
        // B1/S1 grows from any wall neighbour; in place the growth runs along the scan order.
        let rule: Rule = "B1/S1".parse().unwrap();
        let base = "#...\n....\n....\n";
        let pass = |u| Pass {
            rule,
            outside: Outside::Floor,
            update: u,
            border: Border::None,
            repeat: 1,
        };
        let mut s = bg(base);
        s.step(&pass(Update::Sync));
        assert_eq!(text(&s), ".#..\n##..\n....\n");
        let mut r = bg(base);
        r.step(&pass(Update::InPlaceRowMajor));
        // (0,0) dies (0 neighbours), so nothing downstream sees a wall.
        assert_eq!(text(&r), "....\n....\n....\n");
        let rule: Rule = "B1/S01".parse().unwrap();
        let mut c = bg(base);
        c.step(&Pass {
            rule,
            ..pass(Update::InPlaceColMajor)
        });
        // Column-major: (1,0) sees (0,0); (2,0) sees new (1,0); column 1 sees column 0 ...
        assert_eq!(text(&c), "#...\n#...\n#...\n");
        let mut r = bg(base);
        r.step(&Pass {
            rule,
            ..pass(Update::InPlaceRowMajor)
        });
        // Row-major: the wall runs along row 0 instead.
        assert_eq!(text(&r), "####\n....\n....\n");
    }

    #[test]
    fn solid_border_applies_after_pass() {
        let mut g = ByteGrid::new(3, 4);
        g.step(&Pass::sync(
            Rule::chapter_strict(),
            Outside::Floor,
            Border::Solid,
        ));
        assert_eq!(text(&g), "####\n#..#\n####\n");
    }
}
