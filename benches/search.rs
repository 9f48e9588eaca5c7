//! Criterion benchmarks of lazy query evaluation, per batch of 64 chapter-strict caves on one
//! thread: generation alone, generation + a query rejected by its first clause (a fraction,
//! evaluated lazily: no flood fill runs), and generation + the same query's metrics measured
//! eagerly (what a search without lazy evaluation would pay).

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Duration;

use cavesweep::generate::Generator;
use cavesweep::measure::{EMPTY_VALUES, MetricSet};
use cavesweep::presets::preset;
use cavesweep::query::{Costs, Expr, QueryPlan};
use criterion::{Criterion, criterion_group, criterion_main};

const SEEDS: std::ops::Range<u64> = 0..64;

fn bench(c: &mut Criterion) {
    let recipe = preset("chapter-strict").unwrap();
    // Rejects every cave of this recipe on the popcount (floor is about 0.93).
    let query: Expr = "floor_fraction>=0.99 && components<=2 && min_width>=2"
        .parse()
        .unwrap();
    let plan = QueryPlan::new(&query, &Costs::estimated(), &[]);
    let metrics = query.metrics();
    let mut group = c.benchmark_group("search_64_caves");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    let mut g = Generator::new(&recipe, MetricSet::EMPTY).unwrap();
    group.bench_function("generate_only", |b| {
        b.iter(|| {
            let _ = g.generate(SEEDS, |cave| {
                black_box(&cave.trajectory);
                ControlFlow::Continue(())
            });
        })
    });
    let mut g = Generator::new(&recipe, metrics).unwrap();
    group.bench_function("generate_lazy_reject", |b| {
        b.iter(|| {
            let _ = g.generate(SEEDS, |cave| {
                black_box(plan.matches(|m| cave.metric(m)));
                ControlFlow::Continue(())
            });
        })
    });
    group.bench_function("generate_eager_metrics", |b| {
        b.iter(|| {
            let _ = g.generate(SEEDS, |cave| {
                let mut v = EMPTY_VALUES;
                cave.measure_set(metrics, &mut v);
                black_box(query.eval(&v));
                ControlFlow::Continue(())
            });
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
