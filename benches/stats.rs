//! Criterion benchmark of the statistics collector's per-chunk work: one chunk of 16,384
//! caves (the default chunk of a big sweep) recorded into an accumulator and finished into
//! its sums, extremes and histogram, for a fraction (values spread like a chapter cave's floor
//! fraction) and a count (small integers like a component count). A sweep does this for each
//! metric and trajectory value: ten per cave with five metrics and four steps (the wall
//! fraction after the fill and after each step).

use cavesweep::sweep::stats::{Acc, AccBuilder, Kind};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const CAVES: usize = 16_384;

/// Deterministic values: a fraction near 0.55 with a spread of ~0.05, or a count 1..=40.
fn values(kind: Kind) -> Vec<f64> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..CAVES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            match kind {
                // 12,600 cells: the fraction is a multiple of 1/12600.
                Kind::Fraction => ((0.5 + 0.1 * u) * 12_600.0).round() / 12_600.0,
                Kind::Count => (1.0 + (u * u * 40.0).floor()).min(40.0),
            }
        })
        .collect()
}

fn chunk(c: &mut Criterion) {
    let mut group = c.benchmark_group("stats_chunk");
    group.throughput(Throughput::Elements(CAVES as u64));
    for (name, kind) in [("fraction", Kind::Fraction), ("count", Kind::Count)] {
        let v = values(kind);
        let mut b = AccBuilder::new(kind);
        let mut out = Acc::new(kind);
        group.bench_function(name, |bench| {
            bench.iter(|| {
                for &x in &v {
                    b.record(x);
                }
                b.finish_into(&mut out);
                std::hint::black_box(&out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, chunk);
criterion_main!(benches);
