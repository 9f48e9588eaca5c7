//! Criterion benchmark of whole grid sweeps (store, statistics and CSV files included): one
//! point against grids of 1,025, 10,000 and 100,000 points doing the same work (chapter-strict,
//! 13 steps, fill varied over 0.50-0.60), and the natural `fill x steps` grid. Throughput is in caves, so
//! the grids' caves/s read directly against the single point's: the ratio is the cost of the
//! grid's shape. `cavesweep bench --grid` gives the same comparison as interleaved repeats.

use std::time::Duration;

use cavesweep::benchmark::grid::{cases, sweep_once};
use cavesweep::measure::MetricSet;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Caves per sweep: 200,000 gives the 100,000-point grid two seeds per point (its worst case:
/// every point writes 16 CSV rows for two caves; `cavesweep bench --grid` uses 1,025,000).
const CAVES: u64 = 200_000;

fn grid(c: &mut Criterion) {
    let scratch =
        std::env::temp_dir().join(format!("cavesweep-criterion-sweep-{}", std::process::id()));
    let metrics: MetricSet =
        "floor_fraction,components,largest_fraction,connected_fraction,boundary"
            .parse()
            .expect("valid metrics");
    let mut group = c.benchmark_group("sweep_grid");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20));
    for (name, plan) in cases(CAVES, metrics).expect("valid cases") {
        group.throughput(Throughput::Elements(plan.n_caves()));
        group.bench_function(name, |b| {
            b.iter(|| sweep_once(&plan, 1, &scratch).expect("sweep runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, grid);
criterion_main!(benches);
