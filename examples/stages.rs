//! Dev probe: per-stage time per cave on each SIMD path (min and median of repeats).
use std::hint::black_box;
use std::time::Instant;

use cavesweep::fill::fill_bernoulli;
use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::measure::{EMPTY_VALUES, Measurer, MetricSet};
use cavesweep::presets::preset;
use cavesweep::rng::cave_rng;
use cavesweep::simd::Simd;

#[path = "common/mod.rs"]
mod common;
use common::cpu;

fn time(reps: usize, n: usize, mut f: impl FnMut(usize)) -> (f64, f64) {
    let mut v = vec![];
    let _ = Instant::now();
    for r in 0..reps {
        let t = cpu();
        for i in 0..n {
            f(r * n + i);
        }
        v.push((cpu() - t) * 1e6 / n as f64);
    }
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

fn main() {
    {
        let mut g = Grid::new(90, 140).unwrap();
        let (a, b) = time(9, 300, |i| {
            cavesweep::fill::fill_numpy(&mut g, 0.45, i as u64).unwrap();
            black_box(&g);
        });
        println!("numpy fill 90x140: {a:.2}/{b:.2} us (min/median)");
    }
    let name = std::env::args().nth(1).unwrap_or("chapter-strict".into());
    let r = preset(&name).unwrap();
    let five: MetricSet = "floor_fraction,components,largest_fraction,connected_fraction,boundary"
        .parse()
        .unwrap();
    if let Ok(stage) = std::env::var("ONLY") {
        // A 4 s loop of one stage, for `perf record`.
        let simd = Simd::active();
        let mut gn = Generator::with_simd(&r, five, simd).unwrap();
        let mut out = EMPTY_VALUES;
        let mut g = Grid::new(r.rows, r.cols).unwrap();
        let t = Instant::now();
        let mut seed = 0u64;
        while t.elapsed().as_secs_f64() < 4.0 {
            match stage.as_str() {
                "generate" => {
                    let _ = gn
                        .generate(seed..seed + 1000, |c| {
                            black_box(c.grid());
                            std::ops::ControlFlow::Continue(())
                        })
                        .unwrap();
                }
                "measureonly" => {
                    let caves: Vec<Grid> =
                        (0..64).map(|s| gn.run(s).unwrap().grid.clone()).collect();
                    let cfg = *gn.measure_config();
                    let mut m = Measurer::with_simd(simd);
                    for i in 0..64000 {
                        m.measure(&caves[i % 64], &cfg, &mut out);
                        black_box(&out);
                    }
                }
                "measure" => {
                    let _ = gn
                        .generate(seed..seed + 1000, |c| {
                            c.measure(&mut out);
                            std::ops::ControlFlow::Continue(())
                        })
                        .unwrap();
                }
                _ => {
                    for i in 0..1000 {
                        fill_bernoulli(simd, &mut g, 0.45, &mut cave_rng(seed + i)).unwrap();
                        black_box(&g);
                    }
                }
            }
            seed += 1000;
        }
        return;
    }
    let paths: Vec<Simd> = match std::env::var("PATHS") {
        Ok(_) => Simd::available(),
        Err(_) => vec![Simd::active()],
    };
    for simd in paths {
        let mut g = Grid::new(r.rows, r.cols).unwrap();
        let p = match r.fill {
            cavesweep::recipe::Fill::Bernoulli { p } => p,
            _ => 0.45,
        };
        let (fmin, fmed) = time(15, 2000, |i| {
            fill_bernoulli(simd, &mut g, p, &mut cave_rng(i as u64)).unwrap();
            black_box(&g);
        });
        let mut st = Stepper::with_simd(simd);
        let start = g.clone();
        let (smin, smed) = time(15, 2000, |_| {
            g.copy_from(&start);
            for pass in &r.passes {
                st.run_pass(&mut g, pass);
            }
            black_box(&g);
        });
        let mut m = Measurer::with_simd(simd);
        let mut gn = Generator::with_simd(&r, five, simd).unwrap();
        let caves: Vec<Grid> = (0..64).map(|s| gn.run(s).unwrap().grid.clone()).collect();
        let cfg = *gn.measure_config();
        let mut out = EMPTY_VALUES;
        let (mmin, mmed) = time(15, 2000, |i| {
            m.measure(&caves[i % 64], &cfg, &mut out);
            black_box(&out);
        });
        let mut seed = 0u64;
        let (gmin, gmed) = time(15, 1, |_| {
            let _ = gn
                .generate(seed..seed + 2000, |c| {
                    black_box(c.grid());
                    std::ops::ControlFlow::Continue(())
                })
                .unwrap();
            seed += 2000;
        });
        let mut seed = 0u64;
        let (amin, amed) = time(15, 1, |_| {
            let _ = gn
                .generate(seed..seed + 2000, |c| {
                    c.measure(&mut out);
                    black_box(&out);
                    std::ops::ControlFlow::Continue(())
                })
                .unwrap();
            seed += 2000;
        });
        println!(
            "{name} {simd:>14} (batch {}): fill {fmin:.3}/{fmed:.3}  steps {smin:.3}/{smed:.3}  measure5 {mmin:.3}/{mmed:.3}  generate {:.3}/{:.3}  gn+measure {:.3}/{:.3} us/cave (min/median)",
            gn.batch_size(),
            gmin / 2000.0,
            gmed / 2000.0,
            amin / 2000.0,
            amed / 2000.0
        );
    }
}
