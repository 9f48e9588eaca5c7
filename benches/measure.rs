//! Criterion benchmarks of cave measurement on chapter-strict 90x140 caves: the bit-plane
//! `Measurer` (component metrics alone, and every metric) against the byte-grid oracles, the
//! post-steps, and the component metrics measured on a batch in SIMD lanes (as
//! `Generator::generate` measures them). Test caves are built with the scalar oracle (45% fill
//! from a seeded RNG, then 4 chapter-strict steps), so the bench depends on nothing but the grid
//! and the oracle.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::grid::Grid;
use cavesweep::kernel::batch::LaneBuf;
use cavesweep::measure::{
    Connectivity, EMPTY_VALUES, MeasureConfig, Measurer, Metric, MetricSet, PostStep,
};
use cavesweep::oracle::ByteGrid;
use cavesweep::oracle::metrics as oracle;
use cavesweep::rule::{Border, Outside, Pass, Rule};
use cavesweep::simd::{Isa, Simd, Task};
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
    // The same caves in SIMD lanes, as the generator's batches hold them: the four component
    // metrics of every cave of a batch, measured in its lanes (time per batch of `lanes`).
    let simd = Simd::active();
    let lanes = simd.lanes();
    let grids: Vec<Grid> = caves.iter().map(|c| c.1.clone()).collect();
    let mut bufs: Vec<LaneBuf> = grids
        .chunks_exact(lanes)
        .map(|batch| {
            let mut buf = LaneBuf::default();
            simd.run(Load(&mut buf, batch));
            buf
        })
        .collect();
    let cfg = config(comp);
    let mut i = 0;
    group.bench_function(
        format!("lanes/components+largest+connected+boundary (batch of {lanes})"),
        |b| {
            b.iter(|| {
                i = (i + 1) % bufs.len();
                m.begin_batch(simd, 90, 140);
                for k in 0..lanes {
                    let g = &grids[i * lanes + k];
                    let mut v = m.lazy_in(g, &cfg, &mut bufs[i], k);
                    v.ensure(comp);
                    v.copy_into(comp, &mut out);
                    black_box(&out);
                }
            })
        },
    );
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

/// Put one grid per lane into a batch buffer (guards zero), on the running SIMD path.
struct Load<'a>(&'a mut LaneBuf, &'a [Grid]);

impl Task for Load<'_> {
    type Output = ();
    #[inline(always)]
    fn run<I: Isa>(self) {
        let mut v = self.0.view::<I::Lanes>(90, 140);
        v.clear_edges();
        for (k, g) in self.1.iter().enumerate() {
            v.grid_to_lane(k, g);
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
