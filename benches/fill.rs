//! Criterion benches for the initial fills: the word-parallel Bernoulli fill of a 90x140 cave
//! (the throughput path), numpy's bit-exact replay (the chapter-reproduction path), NetHack's
//! exact-count fill (624 FLOOR of 19x77), and the two ways of seeding the 4-lane generator
//! (which is why `fill_bernoulli` seeds lanes from the stream instead of by jumps).

use std::hint::black_box;
use std::time::Duration;

use cavesweep::fill::{fill_bernoulli, fill_exact_count, fill_numpy};
use cavesweep::grid::Grid;
use cavesweep::rng::{Xoshiro256x4, cave_rng};
use criterion::{Criterion, criterion_group, criterion_main};

fn fills(c: &mut Criterion) {
    let mut g = Grid::new(90, 140).unwrap();
    let mut seed = 0u64;
    c.bench_function(
        "fill_bernoulli 90x140 p=0.45 (incl. cave_rng seeding)",
        |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                fill_bernoulli(&mut g, black_box(0.45), &mut cave_rng(seed)).unwrap();
                black_box(g.raw()[g.row_offset(0)])
            })
        },
    );
    c.bench_function("fill_numpy 90x140 p=0.45 (incl. SeedSequence)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            fill_numpy(&mut g, black_box(0.45), seed).unwrap();
            black_box(g.raw()[g.row_offset(0)])
        })
    });
    let mut m = Grid::new(19, 77).unwrap();
    c.bench_function("fill_exact_count 19x77 floor=624", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            fill_exact_count(&mut m, black_box(624), &mut cave_rng(seed)).unwrap();
            black_box(m.raw()[m.row_offset(0)])
        })
    });
    c.bench_function("Xoshiro256x4::from_stream", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(Xoshiro256x4::from_stream(&mut cave_rng(seed)))
        })
    });
    c.bench_function("Xoshiro256x4::from_jumps", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(Xoshiro256x4::from_jumps(&cave_rng(seed)))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    targets = fills
}
criterion_main!(benches);
