//! Criterion benches for the initial fills: the Bernoulli fill of a 90x140 cave on every SIMD
//! path, one grid at a time (8 slot generators in the lanes) and straight into the lanes of a
//! batch (one cave per lane, what `Generator::generate` runs); numpy's bit-exact replay (the
//! chapter-reproduction path); NetHack's exact-count fill (624 FLOOR of 19x77). Times are per
//! cave, the seeding of the cave's stream included.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::fill::{fill_bernoulli, fill_exact_count, fill_numpy};
use cavesweep::grid::Grid;
use cavesweep::kernel::batch::Lanes;
use cavesweep::rng::cave_rng;
use cavesweep::simd::Simd;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn fills(c: &mut Criterion) {
    let mut group = c.benchmark_group("fill_per_cave");
    let mut seed = 0u64;
    for simd in Simd::available() {
        let mut g = Grid::new(90, 140).unwrap();
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("bernoulli_90x140/{simd}/single"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                fill_bernoulli(simd, &mut g, black_box(0.45), &mut cave_rng(seed)).unwrap();
                black_box(g.raw()[g.row_offset(0)])
            })
        });
        let mut lanes = Lanes::new(simd, 90, 140);
        let n = lanes.lanes();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("bernoulli_90x140/{simd}/lanes"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(8);
                let seeds: Vec<u64> = (seed..seed + n as u64).collect();
                black_box(lanes.fill_bernoulli(black_box(0.45), &seeds).unwrap())
            })
        });
        let mut m = Grid::new(19, 77).unwrap();
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("exact_count_19x77_624/{simd}"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                fill_exact_count(simd, &mut m, black_box(624), &mut cave_rng(seed)).unwrap();
                black_box(m.raw()[m.row_offset(0)])
            })
        });
    }
    let mut g = Grid::new(90, 140).unwrap();
    group.throughput(Throughput::Elements(1));
    group.bench_function("numpy_90x140", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            fill_numpy(&mut g, black_box(0.45), seed).unwrap();
            black_box(g.raw()[g.row_offset(0)])
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
        .sample_size(20);
    targets = fills
}
criterion_main!(benches);
