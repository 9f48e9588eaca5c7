//! Dev probe for the generation stages (fill in lanes, steps in lanes, numpy fill, NetHack's
//! pipeline), per cave, on the process's SIMD path (`CAVESWEEP_SIMD` forces one). Times are
//! thread CPU time, minimum and median of repeats, so a loaded machine disturbs them less than
//! wall-clock figures; the headline figures still come from `cavesweep bench` and criterion.
//!
//! `cargo run --release --example gen_stages [STAGE]` with STAGE one of `lanesfill`, `steps`,
//! `numpy`, `nethack` runs that stage alone in a ~4 s loop (for `perf record`); no argument
//! prints every figure.
use std::hint::black_box;
use std::ops::ControlFlow;

use cavesweep::fill::{fill_numpy, fill_numpy_on};
use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::batch::Lanes;
use cavesweep::measure::MetricSet;
use cavesweep::presets::preset;
use cavesweep::rng::NumpyRandom;
use cavesweep::simd::{PcgKernel, Simd};

#[path = "common/mod.rs"]
mod common;
use common::cpu;

/// us per unit: `f(i)` does `per` units; (min, median) over `reps` repeats of `n` calls.
fn time(reps: usize, n: usize, per: usize, mut f: impl FnMut(usize)) -> (f64, f64) {
    let mut v = vec![];
    for r in 0..reps {
        let t = cpu();
        for i in 0..n {
            f(r * n + i);
        }
        v.push((cpu() - t) * 1e6 / (n * per) as f64);
    }
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

fn main() {
    let simd = Simd::active();
    let only = std::env::args().nth(1);
    let reps = if only.is_some() { 400 } else { 15 };
    let strict = preset("chapter-strict").unwrap();
    let want = |s: &str| only.as_deref().is_none_or(|o| o == s);
    if want("lanesfill") {
        let mut lanes = Lanes::new(simd, 90, 140);
        let n = lanes.lanes();
        let (a, b) = time(reps, 2000, n, |i| {
            let s = (i * n) as u64;
            let seeds: [u64; 8] = std::array::from_fn(|k| s + k as u64);
            black_box(lanes.fill_bernoulli(0.45, &seeds[..n]).unwrap());
        });
        println!("{simd}: lanes fill 90x140: {a:.3}/{b:.3} us per cave (min/median)");
    }
    if want("steps") {
        let mut lanes = Lanes::new(simd, 90, 140);
        let n = lanes.lanes();
        let seeds: Vec<u64> = (0..n as u64).collect();
        let (a, b) = time(reps, 2000, n, |_| {
            lanes.fill_bernoulli(0.45, &seeds).unwrap();
            black_box(lanes.run_pass(&strict.passes[0]));
        });
        let (fa, _) = time(reps, 2000, n, |_| {
            black_box(lanes.fill_bernoulli(0.45, &seeds).unwrap());
        });
        // The steps alone, again and again on one filled batch (the kernel is branch-free, so
        // the contents do not change its time).
        lanes.fill_bernoulli(0.45, &seeds).unwrap();
        let (sa, sb) = time(reps, 2000, n, |_| {
            black_box(lanes.run_pass(&strict.passes[0]));
        });
        println!(
            "{simd}: lanes fill + 4 steps 90x140: {a:.3}/{b:.3} us per cave; fill alone {fa:.3} -> steps ~{:.3}; 4 steps alone {sa:.3}/{sb:.3}",
            a - fa
        );
    }
    if want("numpy") {
        let mut g = Grid::new(90, 140).unwrap();
        let (a, b) = time(reps.min(40), 200, 1, |i| {
            fill_numpy(&mut g, 0.45, i as u64).unwrap();
            black_box(&g);
        });
        println!("{simd}: numpy fill 90x140: {a:.3}/{b:.3} us per cave");
        // Every PCG kernel this CPU runs, in this path's clone (what `for_path` chose is above).
        for k in PcgKernel::available() {
            let (a, b) = time(reps.min(40), 200, 1, |i| {
                let mut rng = NumpyRandom::new(i as u64);
                fill_numpy_on(simd, k, &mut g, 0.45, &mut rng).unwrap();
                black_box(&g);
            });
            println!(
                "{simd}: numpy fill 90x140, kernel {}: {a:.3}/{b:.3} us per cave",
                k.name()
            );
        }
    }
    for name in ["nethack-mines", "chapter-strict"] {
        if !want(if name == "nethack-mines" {
            "nethack"
        } else {
            "strict"
        }) {
            continue;
        }
        let r = preset(name).unwrap();
        let mut g = Generator::with_simd(&r, MetricSet::EMPTY, simd).unwrap();
        g.set_timing(true);
        let mut seed = 0u64;
        let (a, b) = time(reps, 1, 2000, |_| {
            let _ = g
                .generate(seed..seed + 2000, |c| {
                    black_box(c.grid());
                    ControlFlow::Continue(())
                })
                .unwrap();
            seed += 2000;
        });
        let t = g.take_times();
        let us = |d: std::time::Duration| d.as_secs_f64() * 1e6 / t.caves as f64;
        println!(
            "{simd}: {name} generate (no metrics): {a:.3}/{b:.3} us per cave; stages (wall, mean): fill {:.3} passes {:.3} copy {:.3} post {:.3}",
            us(t.fill),
            us(t.passes),
            us(t.copy),
            us(t.post)
        );
    }
}
