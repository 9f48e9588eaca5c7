//! Criterion benches of the whole per-seed pipeline (fill, passes, post-steps, metrics) for
//! every preset, and of each preset's passes alone (the step kernels on that preset's rules).
//!
//! `cargo bench --bench pipeline`. `cavesweep bench` reports the same pipeline figures with
//! threads and the oracle beside them.

use std::hint::black_box;
use std::time::Duration;

use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::measure::MetricSet;
use cavesweep::presets::{NAMES, preset};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn pipeline(c: &mut Criterion) {
    let five: MetricSet = "floor_fraction,components,largest_fraction,connected_fraction,boundary"
        .parse()
        .unwrap();
    let mut group = c.benchmark_group("pipeline_per_seed");
    group
        .throughput(Throughput::Elements(1))
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for name in NAMES {
        let r = preset(name).unwrap();
        for (label, metrics) in [("five_metrics", five), ("all_metrics", MetricSet::ALL)] {
            // Through `generate` (the batched path sweeps use): one criterion iteration is one
            // cave of a longer range.
            let mut g = Generator::new(&r, metrics).unwrap();
            let mut seed = 0u64;
            group.bench_function(format!("{name}/{label}"), |b| {
                b.iter_custom(|iters| {
                    let mut v = cavesweep::measure::EMPTY_VALUES;
                    let start = std::time::Instant::now();
                    let _ = g
                        .generate(seed..seed + iters, |c| {
                            c.measure(&mut v);
                            black_box(&v);
                            std::ops::ControlFlow::Continue(())
                        })
                        .unwrap();
                    seed += iters;
                    start.elapsed()
                })
            });
        }
    }
    group.finish();
}

fn preset_passes(c: &mut Criterion) {
    let mut group = c.benchmark_group("preset_passes");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for name in NAMES {
        let r = preset(name).unwrap();
        let steps: u64 = r.passes.iter().map(|p| p.repeat as u64).sum();
        group.throughput(Throughput::Elements(steps * (r.rows * r.cols) as u64));
        let filled: Grid = Generator::new(
            &cavesweep::recipe::Recipe {
                passes: vec![],
                post: vec![],
                ..r.clone()
            },
            MetricSet::EMPTY,
        )
        .unwrap()
        .run(5)
        .unwrap()
        .grid
        .clone();
        let mut g = filled.clone();
        let mut stepper = Stepper::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                g.copy_from(&filled);
                for p in &r.passes {
                    stepper.run_pass(black_box(&mut g), p);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline, preset_passes);
criterion_main!(benches);
