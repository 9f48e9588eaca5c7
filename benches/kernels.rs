//! Criterion benches of the sync step kernel against the scalar oracle, reported as cell
//! updates per second (`Throughput::Elements` = cells per step).
//!
//! `cargo bench --bench kernels`; figures and their reading are in `results/kernels.md`.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::grid::Grid;
use cavesweep::kernel::{self, Stepper, sync::Batch4};
use cavesweep::oracle::ByteGrid;
use cavesweep::rule::{Border, Outside, Pass, Rule};
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
        let mut group = c.benchmark_group(format!("sync_B5678_S5678_{rows}x{cols}"));
        group
            .throughput(Throughput::Elements((rows * cols) as u64))
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(30);
        let start = noise(rows, cols, 1);
        let mut g = start.clone();
        let mut stepper = Stepper::new();
        group.bench_function("fast", |b| {
            b.iter(|| {
                // A step of noise: re-seed now and then so the grid does not go static.
                g.copy_from(&start);
                stepper.step(black_box(&mut g), &pass);
            })
        });
        let mut bg = ByteGrid::from_grid(&start);
        let bstart = bg.clone();
        group.bench_function("oracle", |b| {
            b.iter(|| {
                bg.cells.copy_from_slice(&bstart.cells);
                bg.step(black_box(&pass));
            })
        });
        // Four grids in lock-step, one per u64 lane; throughput counts all four.
        let grids: Vec<Grid> = (0..4).map(|k| noise(rows, cols, 10 + k)).collect();
        let mut batch = Batch4::like(&start);
        let mut tmp = Batch4::like(&start);
        group.throughput(Throughput::Elements((4 * rows * cols) as u64));
        group.bench_function("batch4", |b| {
            b.iter(|| {
                batch.load([&grids[0], &grids[1], &grids[2], &grids[3]]);
                kernel::run_pass_batch(black_box(&mut batch), &mut tmp, &pass);
            })
        });
        group.finish();
    }
}

/// The chapter's whole smoothing: 4 steps of a 90x140 grid, per seed.
fn chapter_four_steps(c: &mut Criterion) {
    let pass = Pass {
        repeat: 4,
        ..Pass::sync(Rule::chapter_strict(), Outside::Floor, Border::Solid)
    };
    let mut group = c.benchmark_group("chapter_4_steps_90x140_per_seed");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    let grids: Vec<Grid> = (0..4).map(|k| noise(90, 140, 20 + k)).collect();
    let mut g = grids[0].clone();
    let mut stepper = Stepper::new();
    group.throughput(Throughput::Elements(1));
    group.bench_function("single", |b| {
        b.iter(|| {
            g.copy_from(&grids[0]);
            stepper.run_pass(black_box(&mut g), &pass);
        })
    });
    let mut batch = Batch4::like(&grids[0]);
    let mut tmp = Batch4::like(&grids[0]);
    group.throughput(Throughput::Elements(4));
    group.bench_function("batch4", |b| {
        b.iter(|| {
            batch.load([&grids[0], &grids[1], &grids[2], &grids[3]]);
            kernel::run_pass_batch(black_box(&mut batch), &mut tmp, &pass);
        })
    });
    group.finish();
}

criterion_group!(benches, sync_steps, chapter_four_steps);
criterion_main!(benches);
