//! Criterion benchmarks of cave measurement on chapter-strict 90x140 caves: the bit-plane
//! `Measurer` (component metrics alone, and every metric) against the byte-grid oracles, plus
//! the post-steps. Test caves are built with the scalar oracle (45% fill from a seeded RNG, then
//! 4 chapter-strict steps), so the bench depends on nothing but the grid and the oracle.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::grid::Grid;
use cavesweep::measure::{
    Connectivity, EMPTY_VALUES, MeasureConfig, Measurer, Metric, MetricSet, PostStep, oracle,
};
use cavesweep::oracle::ByteGrid;
use cavesweep::rule::{Border, Outside, Pass, Rule};
use criterion::{Criterion, criterion_group, criterion_main};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const CAVES: usize = 32;

fn caves() -> Vec<(ByteGrid, Grid)> {
    let pass = Pass::sync(Rule::chapter_strict(), Outside::Floor, Border::Solid);
    (0..CAVES as u64)
        .map(|seed| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut b = ByteGrid::new(90, 140);
            for c in &mut b.cells {
                use rand_core::Rng;
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                *c = (u < 0.45) as u8;
            }
            for _ in 0..4 {
                b.step(&pass);
            }
            let g = b.to_grid();
            (b, g)
        })
        .collect()
}

fn config(metrics: MetricSet) -> MeasureConfig {
    MeasureConfig {
        connectivity: Connectivity::Four,
        spawn: (45, 70),
        exit: Some((5, 130)),
        metrics,
    }
}

fn bench(c: &mut Criterion) {
    let caves = caves();
    let comp = MetricSet::EMPTY
        .with(Metric::Components)
        .with(Metric::LargestFraction)
        .with(Metric::ConnectedFraction)
        .with(Metric::Boundary);
    let mut group = c.benchmark_group("measure_90x140");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    let mut m = Measurer::new();
    let mut out = EMPTY_VALUES;
    for (name, set) in [
        ("components+largest+connected+boundary", comp),
        ("path_length", MetricSet::EMPTY.with(Metric::PathLength)),
        ("reach_depth", MetricSet::EMPTY.with(Metric::ReachDepth)),
        ("min_width", MetricSet::EMPTY.with(Metric::MinWidth)),
        ("all", MetricSet::ALL),
    ] {
        let cfg = config(set);
        let mut i = 0;
        group.bench_function(format!("bits/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % CAVES;
                m.measure(black_box(&caves[i].1), &cfg, &mut out);
                black_box(&out);
            })
        });
        let mut i = 0;
        group.bench_function(format!("oracle/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % CAVES;
                black_box(oracle::measure(black_box(&caves[i].0), &cfg))
            })
        });
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut work = caves[0].1.clone();
    for step in [
        PostStep::KeepLargest,
        PostStep::RemoveSmall(20),
        PostStep::Bridge,
    ] {
        let mut i = 0;
        group.bench_function(format!("post/{step}"), |b| {
            b.iter(|| {
                i = (i + 1) % CAVES;
                work.copy_from(&caves[i].1);
                m.apply_post(&mut work, step, Connectivity::Four, &mut rng);
                black_box(&work);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
