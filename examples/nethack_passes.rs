//! Dev probe: NetHack's passes one by one (thread CPU time per cave, min/median of repeats) on
//! 64 filled caves, on the process's SIMD path (`CAVESWEEP_SIMD` forces one).
//! `cargo run --release --example nethack_passes`
use std::hint::black_box;

use cavesweep::fill::fill_exact_count;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::presets::preset;
use cavesweep::rng::cave_rng;
use cavesweep::simd::Simd;

#[path = "common/mod.rs"]
mod common;
use common::cpu;

fn main() {
    let r = preset("nethack-mines").unwrap();
    let mut st = Stepper::new();
    let filled: Vec<Grid> = (0..64u64)
        .map(|s| {
            let mut g = Grid::new(r.rows, r.cols).unwrap();
            fill_exact_count(Simd::active(), &mut g, 624, &mut cave_rng(s)).unwrap();
            g
        })
        .collect();
    // Inputs of each pass: the caves as the passes before leave them.
    let mut inputs = vec![filled.clone()];
    for p in &r.passes {
        for _ in 0..p.repeat {
            let mut next = inputs.last().unwrap().clone();
            for g in &mut next {
                st.step(g, p);
            }
            inputs.push(next);
        }
    }
    let mut k = 0;
    let mut total = 0.0;
    for p in &r.passes {
        for _ in 0..p.repeat {
            let mut v = vec![];
            let mut work = inputs[k].clone();
            for _ in 0..15 {
                let t = cpu();
                for _ in 0..200 {
                    for (g, src) in work.iter_mut().zip(&inputs[k]) {
                        g.clone_from(src);
                        black_box(st.step(g, p));
                    }
                }
                v.push((cpu() - t) * 1e6 / (200.0 * 64.0));
            }
            v.sort_by(f64::total_cmp);
            total += v[v.len() / 2];
            println!(
                "pass {k} ({} {:?}): {:.3}/{:.3} us per cave (min/median, grid copy included)",
                p.rule,
                p.update,
                v[0],
                v[v.len() / 2]
            );
            k += 1;
        }
    }
    println!("sum of medians: {total:.3} us");
    // The two transposes of pass 0 alone.
    let mut t = Grid::new(r.cols, r.rows).unwrap();
    let mut back = Grid::new(r.rows, r.cols).unwrap();
    let mut v = vec![];
    for _ in 0..15 {
        let c = cpu();
        for _ in 0..200 {
            for g in &filled {
                cavesweep::kernel::inplace::transpose(g, &mut t);
                cavesweep::kernel::inplace::transpose(black_box(&t), &mut back);
                black_box(&back);
            }
        }
        v.push((cpu() - c) * 1e6 / (200.0 * 64.0));
    }
    v.sort_by(f64::total_cmp);
    println!(
        "transpose there and back: {:.3}/{:.3} us per cave",
        v[0],
        v[v.len() / 2]
    );
}
