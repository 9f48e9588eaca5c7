//! Criterion benches of the sync step kernel on every SIMD path this CPU runs, against the
//! scalar oracle, reported as cell updates per second (`Throughput::Elements` = cells stepped).
//!
//! - `sync_<shape>/<path>/row`: one grid, lanes across the words of a row;
//! - `sync_<shape>/<path>/lanes`: one cave per lane (8 with AVX-512), per step of the batch;
//! - `chapter_4_steps_per_cave/<path>/{row,lanes}`: the chapter's whole smoothing, per cave;
//! - `{vonneumann,hex,ltl_r5_box,ltl_r5_diamond}_1024x1024/<path>/row`: Golly's other
//!   neighbourhoods, one step of one grid;
//! - `.../oracle`: the byte-per-cell reference.
//!
//! `cargo bench --bench kernels`; `scripts/kernels_report.py` turns the estimates into
//! `results/kernels.md`.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::kernel::batch::Lanes;
use cavesweep::oracle::ByteGrid;
use cavesweep::rule::{Border, Outside, Pass, Rule};
use cavesweep::simd::Simd;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn noise(rows: usize, cols: usize, seed: u64) -> Grid {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = Grid::new(rows, cols).unwrap();
    for y in 0..rows {
        for x in 0..cols {
            g.set(y, x, rng.next_u32() < (0.45 * 4294967296.0) as u32);
        }
    }
    g
}

fn sync_steps(c: &mut Criterion) {
    let pass = Pass::sync(Rule::chapter_strict(), Outside::Floor, Border::Solid);
    for (rows, cols) in [(90, 140), (1024, 1024)] {
        let mut group = c.benchmark_group(format!("sync_{rows}x{cols}"));
        group
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20);
        let start = noise(rows, cols, 1);
        for simd in Simd::available() {
            group.throughput(Throughput::Elements((rows * cols) as u64));
            let mut g = start.clone();
            let mut stepper = Stepper::with_simd(simd);
            group.bench_function(format!("{simd}/row"), |b| {
                b.iter(|| {
                    // Steps keep going from the last state, as the lanes bench's do: the
                    // kernel's work does not depend on the contents (no branch on a cell), and
                    // re-seeding each step would time a 148 kB copy with the 1024x1024 step.
                    stepper.step(black_box(&mut g), &pass);
                })
            });
            let mut lanes = Lanes::new(simd, rows, cols);
            let grids: Vec<Grid> = (0..lanes.lanes())
                .map(|k| noise(rows, cols, 10 + k as u64))
                .collect();
            lanes.load(&grids);
            group.throughput(Throughput::Elements((lanes.lanes() * rows * cols) as u64));
            group.bench_function(format!("{simd}/lanes"), |b| {
                b.iter(|| {
                    // Steps keep going from the last state: cheaper than reloading, and the
                    // kernel's work does not depend on the contents.
                    black_box(lanes.run_pass(&pass));
                })
            });
        }
        group.throughput(Throughput::Elements((rows * cols) as u64));
        let mut bg = ByteGrid::from_grid(&start);
        let bstart = bg.clone();
        group.bench_function("oracle", |b| {
            b.iter(|| {
                bg.cells.copy_from_slice(&bstart.cells);
                bg.step(black_box(&pass));
            })
        });
        group.finish();
    }
}

/// Golly's other neighbourhoods on a 1024x1024 grid, one step at a time on every path, with
/// the oracle: von Neumann `B2/S013V`, hexagonal `B2/S34H` and Larger than Life radius 5
/// (`R5,C0,M1,S34..58,B34..45,NM`, Bosco's rule, and its diamond).
fn golly_rules(c: &mut Criterion) {
    let (rows, cols) = (1024, 1024);
    let start = noise(rows, cols, 3);
    for (name, rule) in [
        ("vonneumann", "B2/S013V"),
        ("hex", "B2/S34H"),
        ("ltl_r5_box", "R5,C0,M1,S34..58,B34..45,NM"),
        ("ltl_r5_diamond", "R5,C0,M1,S18..30,B18..24,NN"),
    ] {
        let pass = Pass::sync(rule.parse().unwrap(), Outside::Floor, Border::None);
        let mut group = c.benchmark_group(format!("{name}_{rows}x{cols}"));
        group
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .sample_size(10)
            .throughput(Throughput::Elements((rows * cols) as u64));
        for simd in Simd::available() {
            let mut g = start.clone();
            let mut stepper = Stepper::with_simd(simd);
            group.bench_function(format!("{simd}/row"), |b| {
                b.iter(|| {
                    stepper.step(black_box(&mut g), &pass);
                })
            });
        }
        let mut bg = ByteGrid::from_grid(&start);
        let bstart = bg.clone();
        group.sample_size(10).bench_function("oracle", |b| {
            b.iter(|| {
                bg.cells.copy_from_slice(&bstart.cells);
                bg.step(black_box(&pass));
            })
        });
        group.finish();
    }
}

/// The chapter's whole smoothing: 4 steps of a 90x140 cave, per cave.
fn chapter_four_steps(c: &mut Criterion) {
    let pass = Pass {
        repeat: 4,
        ..Pass::sync(Rule::chapter_strict(), Outside::Floor, Border::Solid)
    };
    let mut group = c.benchmark_group("chapter_4_steps_per_cave");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    let grids: Vec<Grid> = (0..8).map(|k| noise(90, 140, 20 + k)).collect();
    for simd in Simd::available() {
        let mut g = grids[0].clone();
        let mut stepper = Stepper::with_simd(simd);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{simd}/row"), |b| {
            b.iter(|| {
                g.copy_from(&grids[0]);
                stepper.run_pass(black_box(&mut g), &pass);
            })
        });
        let mut lanes = Lanes::new(simd, 90, 140);
        let n = lanes.lanes();
        lanes.load(&grids[..n]);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("{simd}/lanes"), |b| {
            b.iter(|| black_box(lanes.run_pass(&pass)))
        });
    }
    group.finish();
}

criterion_group!(benches, sync_steps, chapter_four_steps, golly_rules);
criterion_main!(benches);
