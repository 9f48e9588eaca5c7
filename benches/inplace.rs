//! Criterion benches for the in-place and two-radius step kernels against the scalar oracle:
//! NetHack's pass 1 (`B678/S45678`, outside wall, in place) on its 19x77 active area, both scan
//! orders, and RogueBasin's `R1>=5/R2<=2` buffered step on 90x140 and 1024x1024. Throughput is
//! reported in cells (one element = one cell update). NetHack's pass 1 also on a batch of caves
//! in SIMD lanes, as the generator runs it (throughput over all the batch's caves).

use std::hint::black_box;
use std::time::Duration;

use cavesweep::grid::Grid;
use cavesweep::kernel::batch::LaneBuf;
use cavesweep::kernel::inplace::{InplaceScratch, step, transpose};
use cavesweep::kernel::inplace_lanes::{self, ColMajor};
use cavesweep::kernel::tworadius;
use cavesweep::oracle::ByteGrid;
use cavesweep::rule::{Border, Outside, Pass, Rule, Update};
use cavesweep::simd::{Isa, Lane, Simd, Task};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A deterministic ~45% wall grid (xorshift), so every run measures the same input.
fn noise(rows: usize, cols: usize, seed: u64) -> Grid {
    let mut s = seed | 1;
    let mut g = Grid::new(rows, cols).unwrap();
    for y in 0..rows {
        for x in 0..cols {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            g.set(y, x, (s % 100) < 45);
        }
    }
    g
}

fn inplace(c: &mut Criterion) {
    let rule = Rule::moore(&[6, 7, 8], &[4, 5, 6, 7, 8]);
    let start = noise(19, 77, 7);
    let mut group = c.benchmark_group("nethack_pass1_19x77");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
        .throughput(Throughput::Elements(start.cells() as u64));
    for (name, order) in [
        ("col_major", Update::InPlaceColMajor),
        ("row_major", Update::InPlaceRowMajor),
    ] {
        let mut g = start.clone();
        let mut scratch = InplaceScratch::new();
        group.bench_function(format!("fast_{name}"), |b| {
            b.iter(|| {
                g.copy_from(&start);
                step(
                    Simd::active(),
                    &mut g,
                    &mut scratch,
                    rule,
                    Outside::Wall,
                    order,
                );
                black_box(&g);
            })
        });
        if order == Update::InPlaceColMajor {
            // The column-major overhead on its own: transpose there and back.
            let mut t = Grid::new(77, 19).unwrap();
            group.bench_function("transpose_round_trip", |b| {
                b.iter(|| {
                    transpose(&start, &mut t);
                    transpose(&t, &mut g);
                    black_box(&g);
                })
            });
        }
        let pass = Pass {
            rule,
            outside: Outside::Wall,
            update: order,
            border: Border::None,
            repeat: 1,
        };
        let ostart = ByteGrid::from_grid(&start);
        let mut o = ostart.clone();
        group.bench_function(format!("oracle_{name}"), |b| {
            b.iter(|| {
                o.cells.copy_from_slice(&ostart.cells);
                o.step(&pass);
                black_box(&o);
            })
        });
    }
    group.finish();
}

fn two_radius(c: &mut Criterion) {
    for (rows, cols) in [(90, 140), (1024, 1024)] {
        let mut src = noise(rows, cols, 11);
        let mut dst = Grid::new(rows, cols).unwrap();
        let mut group = c.benchmark_group(format!("r1ge5_r2le2_{rows}x{cols}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500))
            .sample_size(20)
            .throughput(Throughput::Elements((rows * cols) as u64));
        group.bench_function("fast", |b| {
            b.iter(|| {
                tworadius::step(
                    Simd::active(),
                    &mut src,
                    &mut dst,
                    5,
                    Some(2),
                    Outside::Floor,
                );
                black_box(&dst);
            })
        });
        let pass = Pass::sync(
            Rule::TwoRadius {
                r1_min: 5,
                r2_max: Some(2),
            },
            Outside::Floor,
            Border::None,
        );
        let ostart = ByteGrid::from_grid(&src);
        let mut o = ostart.clone();
        group.bench_function("oracle", |b| {
            b.iter(|| {
                o.cells.copy_from_slice(&ostart.cells);
                o.step(&pass);
                black_box(&o);
            })
        });
        group.finish();
    }
}

/// One column-major pass on a batch in lanes ([`step_colmajor`]), `reps` times, in the SIMD
/// clone: the generator's NetHack path (8 caves per vector with AVX-512).
struct LanesPass<'a> {
    buf: &'a mut LaneBuf,
    cols_buf: &'a mut LaneBuf,
    start: &'a Grid,
    how: ColMajor,
    reps: u64,
}

impl Task for LanesPass<'_> {
    type Output = u64;
    #[inline(always)]
    fn run<I: Isa>(self) -> u64 {
        let (rows, cols) = (self.start.rows(), self.start.cols());
        let mut a = self.buf.view::<I::Lanes>(rows, cols);
        a.grids_to_lanes(std::iter::repeat_n(self.start, <I::Lanes as Lane>::N));
        a.clear_edges();
        let mut n = 0;
        for _ in 0..self.reps {
            let t = self.cols_buf.vectors::<I::Lanes>(cols);
            n += inplace_lanes::step_colmajor(&mut a, t, self.how).get(0);
        }
        n
    }
}

/// NetHack's pass 1 on caves in SIMD lanes, per cave (throughput: cells of every lane's cave;
/// each iteration steps the batch again, from where the last left it, as a sweep does).
fn inplace_lanes(c: &mut Criterion) {
    let start = noise(19, 77, 7);
    let pass = Pass {
        rule: Rule::moore(&[6, 7, 8], &[4, 5, 6, 7, 8]),
        outside: Outside::Wall,
        update: Update::InPlaceColMajor,
        border: Border::None,
        repeat: 1,
    };
    let how = inplace_lanes::colmajor_fits(&pass, 19).unwrap();
    let simd = Simd::active();
    let mut group = c.benchmark_group("nethack_pass1_19x77");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
        .throughput(Throughput::Elements((start.cells() * simd.lanes()) as u64));
    let (mut buf, mut cols_buf) = (LaneBuf::default(), LaneBuf::default());
    group.bench_function(format!("fast_col_major_lanes{}", simd.lanes()), |b| {
        b.iter_custom(|iters| {
            let t = std::time::Instant::now();
            black_box(simd.run(LanesPass {
                buf: &mut buf,
                cols_buf: &mut cols_buf,
                start: &start,
                how,
                reps: iters,
            }));
            t.elapsed()
        })
    });
    group.finish();
}

criterion_group!(benches, inplace, inplace_lanes, two_radius);
criterion_main!(benches);
