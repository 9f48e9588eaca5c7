//! Peers side by side (issue 6): the same cave work done by cavesweep and by its peers, timed on
//! one thread so `scripts/peers.sh` can put per-core rates and ratios in `results/peers.md`.
//!
//! Peers measured here (the numpy peer, the chapter's own code, is `scripts/chapter_reference.py`):
//! - **mapgen 0.6** (`mapgen::filter::CellularAutomata` after `NoiseGenerator::uniform()`, on its
//!   documented 80x50 map): walkable iff 1..4 of the 8 neighbours are blocked, interior only, 15
//!   iterations. cavesweep does the same work with the recipe `B05678/S05678`, 15 sync steps,
//!   solid border, fill 0.51 (mapgen's `roll % 100 <= 50` is WALL), 50x80, measuring
//!   `wall_fraction` (the mapgen run counts its walls too, so both end with map + fraction).
//! - **our scalar oracle** (`cavesweep::oracle::ByteGrid`, one byte per cell, plain loops, and the
//!   BFS/label oracles of `cavesweep::oracle::metrics`), on chapter-strict caves filled from the
//!   same bit grid as cavesweep's.
//!
//! cavesweep itself runs the public pipeline (`Generator::run`) for chapter-strict and
//! classic-4-5 with no metrics, with the chapter's two (`floor_fraction,connected_fraction`), and
//! with the five of issue 6. Every iteration is one seed (a fresh seed each time), so criterion's
//! time per iteration is seconds per seed; `Throughput::Elements(1)` makes it print seeds/s.
//!
//! Before timing, the bench checks that the comparisons are of the same work (so a wrong rule
//! translation cannot produce a flattering ratio): our stepper on a solid-bordered fill equals
//! mapgen's CA cell for cell, and the oracle pipeline produces the same grid and metric values as
//! `Generator`. These checks also run in `cargo test --all-targets` (criterion's test mode runs
//! each bench once), so they stay small.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::fill::fill_bernoulli;
use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::measure::{Connectivity, MeasureConfig, Metric, MetricSet};
use cavesweep::oracle::ByteGrid;
use cavesweep::oracle::metrics as oracle;
use cavesweep::presets::preset;
use cavesweep::recipe::{Fill, Point, Recipe};
use cavesweep::rng::{RngKind, cave_rng};
use cavesweep::rule::{Border, Outside, Pass};
use cavesweep::simd::Simd;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mapgen::{MapBuffer, MapFilter, filter::CellularAutomata, filter::NoiseGenerator};
use rand08::{SeedableRng, rngs::StdRng};

/// mapgen's documented map size (its README / crate docs build `MapBuilder::new(80, 50)`):
/// width 80, height 50.
const MAPGEN_W: usize = 80;
const MAPGEN_H: usize = 50;
/// `CellularAutomata::new()`'s iteration count.
const MAPGEN_ITERS: u32 = 15;
/// `NoiseGenerator::uniform()` is prob 0.5 -> `p = 50`, and a cell is blocked iff
/// `next_u32() % 100 <= 50`: 51 of 100 residues (the `2^32 mod 100` bias is below 1e-8).
const MAPGEN_WALL_P: f64 = 0.51;

/// mapgen's CA rule in our language: walkable iff `0 < n < 5` blocked neighbours, so WALL iff
/// n == 0 or n >= 5 whatever the centre: B05678/S05678.
fn mapgen_pass() -> Pass {
    Pass {
        repeat: MAPGEN_ITERS,
        ..Pass::sync(
            "B05678/S05678".parse().expect("valid rule"),
            // Irrelevant: only ring cells read outside, and the border overwrites them.
            Outside::Floor,
            Border::Solid,
        )
    }
}

/// The cavesweep recipe closest to mapgen's noise + CA (see the module docs).
fn mapgen_recipe() -> Recipe {
    Recipe {
        name: "mapgen-ca".into(),
        about: "mapgen 0.6 CellularAutomata: B05678/S05678, 15 steps, 80x50, ~51% walls".into(),
        rows: MAPGEN_H,
        cols: MAPGEN_W,
        fill: Fill::Bernoulli { p: MAPGEN_WALL_P },
        rng: RngKind::Xoshiro,
        passes: vec![mapgen_pass()],
        post: vec![],
        spawn: Point::Center,
        exit: None,
        connectivity: Connectivity::Four,
    }
}

fn metrics(ms: &[Metric]) -> MetricSet {
    ms.iter().copied().collect()
}

/// The chapter's `evaluate_cave`: floor fraction and connected fraction.
fn chapter_metrics() -> MetricSet {
    metrics(&[Metric::FloorFraction, Metric::ConnectedFraction])
}

/// Issue 6's five metrics.
fn five_metrics() -> MetricSet {
    metrics(&[
        Metric::FloorFraction,
        Metric::Components,
        Metric::LargestFraction,
        Metric::ConnectedFraction,
        Metric::Boundary,
    ])
}

/// One mapgen map: noise then CA, like `MapBuilder::new(80, 50).with(NoiseGenerator::uniform())
/// .with(CellularAutomata::new())`, then its wall fraction.
fn mapgen_map(seed: u64) -> (MapBuffer, f64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = NoiseGenerator::uniform().modify_map(&mut rng, &MapBuffer::new(MAPGEN_W, MAPGEN_H));
    let map = CellularAutomata::new().modify_map(&mut rng, &noise);
    let walls = map.walkables.iter().filter(|&&w| !w).count();
    let frac = walls as f64 / (MAPGEN_W * MAPGEN_H) as f64;
    (map, frac)
}

/// The scalar-oracle pipeline for `recipe` (one pass, Bernoulli fill): the same bit-grid fill as
/// `Generator`, copied into a byte grid, stepped by the oracle (wall fraction after every step,
/// like `Generator`'s trajectory), measured by the oracles when `cfg` is given.
struct OraclePipeline {
    recipe: Recipe,
    fill: Grid,
    cfg: MeasureConfig,
}

impl OraclePipeline {
    fn new(recipe: Recipe, metrics: MetricSet) -> OraclePipeline {
        let cfg = MeasureConfig {
            connectivity: recipe.connectivity,
            spawn: recipe.spawn_cell(),
            exit: recipe.exit_cell(),
            metrics,
        };
        let fill = Grid::new(recipe.rows, recipe.cols).expect("preset shape");
        OraclePipeline { recipe, fill, cfg }
    }

    fn run(&mut self, seed: u64) -> (ByteGrid, f64, cavesweep::measure::Values) {
        let Fill::Bernoulli { p } = self.recipe.fill else {
            panic!("oracle pipeline only for Bernoulli fills");
        };
        fill_bernoulli(Simd::active(), &mut self.fill, p, &mut cave_rng(seed)).expect("valid p");
        let mut g = ByteGrid::from_grid(&self.fill);
        let cells = (g.rows * g.cols) as f64;
        let mut last = g.count_walls() as f64 / cells;
        for pass in &self.recipe.passes {
            for _ in 0..pass.repeat {
                g.step(pass);
                last = g.count_walls() as f64 / cells;
            }
        }
        let values = if self.cfg.metrics.is_empty() {
            cavesweep::measure::EMPTY_VALUES
        } else {
            oracle::measure(&g, &self.cfg)
        };
        (g, last, values)
    }
}

/// Refuse to time anything unless each comparison is of identical work.
fn check_same_work() {
    // mapgen: its CA on a solid-bordered fill == our stepper, cell for cell. (mapgen's noise
    // never touches the outer ring, which `MapBuffer::new` makes all blocked; our fill is random
    // there and `border = solid` walls it after the first step. Bordering our fill first makes
    // the inputs identical.)
    let pass = mapgen_pass();
    let mut stepper = Stepper::new();
    for seed in 0..4 {
        let mut g = Grid::new(MAPGEN_H, MAPGEN_W).unwrap();
        fill_bernoulli(Simd::active(), &mut g, MAPGEN_WALL_P, &mut cave_rng(seed)).unwrap();
        g.solid_border();
        let mut m = MapBuffer::new(MAPGEN_W, MAPGEN_H);
        for y in 0..MAPGEN_H {
            for x in 0..MAPGEN_W {
                m.set_walkable(x, y, !g.get(y, x));
            }
        }
        let m = CellularAutomata::new().modify_map(&mut StdRng::seed_from_u64(seed), &m);
        stepper.run_pass(&mut g, &pass);
        for y in 0..MAPGEN_H {
            for x in 0..MAPGEN_W {
                assert_eq!(
                    g.get(y, x),
                    m.is_blocked(x, y),
                    "seed {seed}: cavesweep and mapgen differ at (y {y}, x {x})"
                );
            }
        }
    }
    // mapgen's own pipeline keeps its outer ring blocked, as `border = solid` does.
    let (m, _) = mapgen_map(1);
    assert!((0..MAPGEN_W).all(|x| m.is_blocked(x, 0) && m.is_blocked(x, MAPGEN_H - 1)));

    // The oracle pipeline == Generator, grid and metrics.
    for name in ["chapter-strict", "classic-4-5"] {
        let recipe = preset(name).unwrap();
        let mut generator = Generator::new(&recipe, five_metrics()).unwrap();
        let mut orc = OraclePipeline::new(recipe, five_metrics());
        for seed in 0..2 {
            let cave = generator.run(seed).unwrap();
            let (g, wall, values) = orc.run(seed);
            assert_eq!(g.to_grid(), *cave.grid, "{name} seed {seed}: grids differ");
            assert_eq!(wall, *cave.trajectory.last().unwrap());
            for m in five_metrics().iter() {
                let (a, b) = (values[m.index()], cave.values[m.index()]);
                assert!((a - b).abs() < 1e-12, "{name} seed {seed} {m}: {a} vs {b}");
            }
        }
    }
}

fn peers(c: &mut Criterion) {
    check_same_work();
    let mut group = c.benchmark_group("peers");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
        .throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    let mut next = move || {
        seed = seed.wrapping_add(1);
        seed
    };

    // mapgen: noise + CA + wall count per map.
    group.bench_function("mapgen_noise_ca_80x50", |b| {
        b.iter(|| black_box(mapgen_map(next()).1))
    });
    // mapgen's CA alone on pre-made noise maps.
    let noise: Vec<MapBuffer> = (0..16)
        .map(|s| {
            NoiseGenerator::uniform().modify_map(
                &mut StdRng::seed_from_u64(s),
                &MapBuffer::new(MAPGEN_W, MAPGEN_H),
            )
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(0);
    group.bench_function("mapgen_ca_only_80x50", |b| {
        b.iter(|| {
            let m = &noise[(next() % 16) as usize];
            black_box(CellularAutomata::new().modify_map(&mut rng, m).walkables[81])
        })
    });
    bench_caves(
        &mut group,
        "cavesweep_mapgen_rule_80x50",
        &mapgen_recipe(),
        metrics(&[Metric::WallFraction]),
    );

    // cavesweep's own pipeline on the chapter's presets.
    let strict = preset("chapter-strict").unwrap();
    let classic = preset("classic-4-5").unwrap();
    let mut strict_numpy = strict.clone();
    strict_numpy.rng = RngKind::Numpy;
    let runs = [
        ("cavesweep_strict_gen", &strict, MetricSet::EMPTY),
        ("cavesweep_strict_eval", &strict, chapter_metrics()),
        ("cavesweep_strict_five", &strict, five_metrics()),
        (
            "cavesweep_strict_numpy_rng_eval",
            &strict_numpy,
            chapter_metrics(),
        ),
        ("cavesweep_classic_gen", &classic, MetricSet::EMPTY),
        ("cavesweep_classic_eval", &classic, chapter_metrics()),
    ];
    for (id, recipe, set) in runs {
        bench_caves(&mut group, id, recipe, set);
    }

    // Our scalar oracle pipeline on chapter-strict.
    for (id, set) in [
        ("oracle_strict_gen", MetricSet::EMPTY),
        ("oracle_strict_five", five_metrics()),
    ] {
        let mut orc = OraclePipeline::new(strict.clone(), set);
        group.bench_function(id, |b| {
            b.iter(|| {
                let (_, wall, values) = orc.run(next());
                black_box((wall, values[Metric::Components.index()]))
            })
        });
    }
    group.finish();
}

/// Time per cave of `recipe`'s pipeline measuring `set`, through [`Generator::generate`] (the
/// batched path sweeps use: one criterion iteration is one cave of a longer range).
fn bench_caves(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
    recipe: &Recipe,
    set: MetricSet,
) {
    let mut generator = Generator::new(recipe, set).unwrap();
    // Generation only: every cave ends as its own grid, as numpy's does (a measured cave may
    // stay in its batch's lanes, where the metrics read it).
    generator.set_grids_read(set.is_empty());
    let mut base = 1u64 << 40;
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let mut v = cavesweep::measure::EMPTY_VALUES;
            let start = std::time::Instant::now();
            let _ = generator
                .generate(base..base + iters, |c| {
                    if set.is_empty() {
                        black_box(c.grid());
                    } else {
                        c.measure(&mut v);
                    }
                    black_box((c.trajectory.last(), &v));
                    std::ops::ControlFlow::Continue(())
                })
                .unwrap();
            base += iters;
            start.elapsed()
        })
    });
}

criterion_group!(benches, peers);
criterion_main!(benches);
