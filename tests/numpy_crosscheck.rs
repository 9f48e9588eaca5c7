//! cavesweep's numpy replay against what real numpy computed: the chapter's whole pipeline for
//! seeds 0..199, step by step, from the fixture in `tests/fixtures/numpy_chapter/` (written by
//! `scripts/numpy_crosscheck.py` running the chapter's own functions with numpy 2.4.6; the exact
//! command is in the folder's README.md, and `.ci/run` reruns it with `--check` against live
//! numpy from PyPI).
//!
//! Checked, all with exact equality: every fill (wall count and CRC-32 of the packed grid,
//! multi-word seeds included); the grid after each of the 4 smoothing steps of the strict and
//! the classic rule (production `Stepper`); the production pipeline's trajectory and final grid
//! (`Generator::generate`); the chapter's `evaluate_cave` fractions against ours and against
//! what `cavesweep reproduce chapter` reports; three whole grids cell for cell. A missing or
//! short fixture is a failure, never a skip.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use cavesweep::fill::fill_numpy;
use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::measure::{EMPTY_VALUES, Metric, MetricSet};
use cavesweep::presets::preset;
use cavesweep::recipe::Recipe;
use cavesweep::reproduce::{chapter_connected_fraction, run_variant};
use cavesweep::rng::RngKind;
use cavesweep::rule::Pass;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numpy_chapter");
const CELLS: f64 = (90 * 140) as f64;

/// A fixture file; its absence fails the test (with how to make it).
fn fixture(name: &str) -> String {
    let path = format!("{DIR}/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "numpy fixture {path} unreadable ({e}); it is committed to the repository and made by \
             `\"$(scripts/numpy_venv.sh)\" scripts/numpy_crosscheck.py --out tests/fixtures/numpy_chapter`"
        )
    })
}

/// CSV rows without the header, split on commas.
fn rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect()
}

/// CRC-32 (IEEE, reflected, as zlib's `crc32`), bitwise: a few thousand grids need no table.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The script's digest: rows' words as little-endian bytes, concatenated.
fn grid_crc(g: &Grid) -> String {
    let mut bytes = Vec::new();
    for y in 0..g.rows() {
        for w in g.row(y) {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    format!("{:08x}", crc32(&bytes))
}

#[test]
fn crc32_known_value() {
    // The standard CRC-32 check value.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}

#[test]
fn fills_match_numpy() {
    let text = fixture("fills.csv");
    let mut g = Grid::new(90, 140).unwrap();
    let mut seeds = BTreeSet::new();
    for r in rows(&text) {
        let seed: u64 = r[0].parse().unwrap();
        fill_numpy(&mut g, 0.45, seed).unwrap();
        assert_eq!(g.count_walls().to_string(), r[1], "seed {seed}: wall count");
        assert_eq!(grid_crc(&g), r[2], "seed {seed}: grid digest");
        seeds.insert(seed);
    }
    assert!((0..200).all(|s| seeds.contains(&s)), "seeds 0..199");
    for multi_word in [12345, (1 << 40) + 7, u64::MAX] {
        assert!(seeds.contains(&multi_word), "seed {multi_word}");
    }
    // The spec's check value, independently of the fixture.
    assert!(text.contains("\n0,5667,"), "seed 0 has 5667 walls");
}

/// One rule's fixture rows: seed -> (walls per step, crc per step, floor and connected fraction).
struct Row {
    walls: Vec<u64>,
    crcs: Vec<String>,
    floor_fraction: f64,
    connected: f64,
}

fn chapter_rows(rule: &str) -> Vec<Row> {
    let text = fixture("chapter.csv");
    let mut out: Vec<Row> = Vec::new();
    for r in rows(&text).into_iter().filter(|r| r[0] == rule) {
        let seed: usize = r[1].parse().unwrap();
        assert_eq!(seed, out.len(), "{rule}: seeds in order from 0");
        let walls: Vec<u64> = r[2].split(' ').map(|w| w.parse().unwrap()).collect();
        let crcs: Vec<String> = r[3].split(' ').map(String::from).collect();
        assert_eq!(
            (walls.len(), crcs.len()),
            (5, 5),
            "{rule} seed {seed}: steps 0..4"
        );
        out.push(Row {
            walls,
            crcs,
            floor_fraction: r[4].parse().unwrap(),
            connected: r[5].parse().unwrap(),
        });
    }
    assert_eq!(out.len(), 200, "{rule}: seeds 0..199");
    out
}

fn numpy_recipe(name: &str) -> Recipe {
    let mut r = preset(name).unwrap();
    r.rng = RngKind::Numpy;
    r
}

fn check_rule(rule: &str, preset_name: &str) {
    let want = chapter_rows(rule);
    let recipe = numpy_recipe(preset_name);
    let spawn = recipe.spawn_cell();
    assert_eq!(spawn, (45, 70), "the chapter's spawn");
    let pass = Pass {
        repeat: 1,
        ..recipe.passes[0]
    };

    // Each smoothing step on its own, through the production kernels.
    let mut stepper = Stepper::new();
    let mut g = Grid::new(90, 140).unwrap();
    for (seed, w) in want.iter().enumerate() {
        fill_numpy(&mut g, 0.45, seed as u64).unwrap();
        for step in 0..5 {
            if step > 0 {
                stepper.step(&mut g, &pass);
            }
            assert_eq!(
                g.count_walls(),
                w.walls[step],
                "{rule} seed {seed} step {step}"
            );
            assert_eq!(grid_crc(&g), w.crcs[step], "{rule} seed {seed} step {step}");
        }
    }

    // The production pipeline (what sweeps and search run) and evaluate_cave's two figures.
    let metrics: MetricSet = [Metric::FloorFraction, Metric::ConnectedFraction]
        .into_iter()
        .collect();
    let mut generator = Generator::new(&recipe, metrics).unwrap();
    let mut seen = 0;
    let flow = generator
        .generate(0..200, |cave| {
            let w = &want[cave.seed as usize];
            let traj: Vec<f64> = w.walls.iter().map(|&n| n as f64 / CELLS).collect();
            assert_eq!(cave.trajectory, &traj[..], "{rule} seed {}", cave.seed);
            let seed = cave.seed;
            assert_eq!(grid_crc(cave.grid()), w.crcs[4], "{rule} seed {seed}");
            let mut v = EMPTY_VALUES;
            cave.measure(&mut v);
            assert_eq!(v[Metric::FloorFraction.index()], w.floor_fraction);
            assert_eq!(chapter_connected_fraction(cave.grid(), spawn), w.connected);
            // Where the spawn is FLOOR our connected_fraction is the chapter's.
            if !cave.grid().get(spawn.0, spawn.1) {
                assert_eq!(v[Metric::ConnectedFraction.index()], w.connected);
            }
            seen += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
    assert!(flow.is_continue() && seen == 200, "every seed visited");

    // What `cavesweep reproduce chapter` reports.
    let run = run_variant(preset_name, 200, 4).unwrap();
    for (seed, w) in want.iter().enumerate() {
        assert_eq!(
            run.final_walls[seed],
            w.walls[4] as f64 / CELLS,
            "seed {seed}"
        );
        assert_eq!(run.connected[seed], w.connected, "seed {seed}");
    }
}

#[test]
fn strict_pipeline_matches_numpy() {
    check_rule("strict", "chapter-strict");
    // The chapter's claim, read off numpy's own numbers: final wall fraction 0.067-0.097.
    let finals: Vec<f64> = chapter_rows("strict")
        .iter()
        .map(|w| w.walls[4] as f64 / CELLS)
        .collect();
    let lo = finals.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = finals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(
        (format!("{lo:.3}"), format!("{hi:.3}")),
        ("0.067".into(), "0.097".into())
    );
}

#[test]
fn classic_pipeline_matches_numpy() {
    check_rule("classic", "classic-4-5");
}

#[test]
fn whole_grids_match_numpy() {
    let mut g = Grid::new(90, 140).unwrap();
    fill_numpy(&mut g, 0.45, 42).unwrap();
    assert_eq!(g.to_text(), fixture("seed42_fill.txt"), "seed 42 noise");
    for (file, name) in [
        ("seed42_strict.txt", "chapter-strict"),
        ("seed42_classic.txt", "classic-4-5"),
    ] {
        let mut generator = Generator::new(&numpy_recipe(name), MetricSet::EMPTY).unwrap();
        let cave = generator.run(42).unwrap();
        assert_eq!(cave.grid.to_text(), fixture(file), "{name} seed 42");
    }
}
