//! Dev probe for the measuring stages: a fixed loop over 64 chapter-strict caves, one stage (or
//! the five bench metrics) at a time, so `valgrind --tool=callgrind` / `perf record` see only
//! that work. Prints thread CPU time per cave (noisy on a shared machine: compare instruction
//! counts). Usage: `measure_probe [STAGE] [N]`, STAGE one of five (default), plane, boundary,
//! spawn, label, width, one (the five metrics through `Measurer::measure`, as bench's "measure
//! one cave at a time"), copy (generation alone), gen5 (generation + five metrics),
//! gen:METRICS, lanes:METRICS, dense:METRICS (a dense batch), post (the preset's post-steps
//! alone, on 64 of its caves as the passes leave them, a seeded stream per cave); N caves
//! measured (default 200000). `PRESET=NAME` measures that preset's caves instead of
//! chapter-strict's.
use std::hint::black_box;
use std::ops::ControlFlow;

use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::measure::{EMPTY_VALUES, Measurer, Metric, MetricSet};
use cavesweep::presets::preset;
use cavesweep::simd::Simd;

#[path = "common/mod.rs"]
mod common;
use common::cpu;

fn main() {
    let stage = std::env::args().nth(1).unwrap_or("five".into());
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(200_000);
    // PRESET=NAME measures that preset's caves (default chapter-strict).
    let r = preset(&std::env::var("PRESET").unwrap_or("chapter-strict".into())).unwrap();
    let five: MetricSet = "floor_fraction,components,largest_fraction,connected_fraction,boundary"
        .parse()
        .unwrap();
    let simd = Simd::active();
    let mut gn = Generator::with_simd(&r, five, simd).unwrap();
    let caves: Vec<Grid> = (0..64).map(|s| gn.run(s).unwrap().grid.clone()).collect();
    let walls: Vec<u64> = caves.iter().map(Grid::count_walls).collect();
    let cfg = *gn.measure_config();
    let mut m = Measurer::with_simd(simd);
    let mut out = EMPTY_VALUES;
    let mut buf = cavesweep::kernel::batch::LaneBuf::default();
    {
        struct Load<'a>(&'a mut cavesweep::kernel::batch::LaneBuf, &'a [Grid]);
        impl cavesweep::simd::Task for Load<'_> {
            type Output = ();
            #[inline(always)]
            fn run<I: cavesweep::simd::Isa>(self) {
                let g = &self.1[0];
                let mut v = self.0.view::<I::Lanes>(g.rows(), g.cols());
                v.clear_edges();
                for k in 0..<I::Lanes as cavesweep::simd::Lane>::N {
                    v.grid_to_lane(k, &self.1[k]);
                }
            }
        }
        simd.run(Load(&mut buf, &caves));
    }
    // The caves before their post-steps, and each one's stream as the post-steps get it.
    let bare = cavesweep::recipe::Recipe {
        post: vec![],
        ..r.clone()
    };
    let mut gb = Generator::with_simd(&bare, five, simd).unwrap();
    let pre: Vec<Grid> = (0..64).map(|s| gb.run(s).unwrap().grid.clone()).collect();
    let mut m2 = Measurer::with_simd(simd);
    let mut best = f64::INFINITY;
    for _rep in 0..7 {
        let t = cpu();
        if stage == "gen5" || stage.starts_with("gen:") {
            // Generation and the five metrics (or the metrics after `gen:`), measured in the
            // batch's lanes, n caves.
            let set: MetricSet = stage
                .strip_prefix("gen:")
                .map_or(five, |m| m.parse().unwrap());
            let _ = gn
                .generate(0..n as u64, |c| {
                    c.measure_set(set, &mut out);
                    black_box(&out);
                    ControlFlow::Continue(())
                })
                .unwrap();
        } else if let Some(m) = stage
            .strip_prefix("lanes:")
            .or_else(|| stage.strip_prefix("dense:"))
        {
            // One batch loaded into lanes once, measured again and again (metrics after
            // `lanes:`): the lane measuring alone, n caves.
            let set: MetricSet = m.parse().unwrap();
            let l = simd.lanes();
            let mut i = 0;
            while i < n {
                if stage.starts_with("dense:") {
                    m2.begin_dense_batch(simd, r.rows, r.cols);
                } else {
                    m2.begin_batch(simd, r.rows, r.cols);
                }
                for k in 0..l {
                    let mut v = m2
                        .lazy_in(&caves[k], &cfg, &mut buf, k)
                        .with_walls(walls[k]);
                    v.ensure(set);
                    out[0] = v.values()[0];
                    black_box(&out);
                }
                i += l;
            }
        } else if stage == "post" {
            // The post-steps alone (a grid copy per cave included), n caves.
            let mut g = pre[0].clone();
            for i in 0..n {
                g.clone_from(&pre[i % 64]);
                let mut rng = cavesweep::rng::cave_rng(i as u64);
                for &p in &r.post {
                    m.apply_post(&mut g, p, r.connectivity, &mut rng);
                }
                black_box(&g);
            }
        } else if stage == "copy" {
            // Generation alone (fill, steps, copy-out), n caves.
            let _ = gn
                .generate(0..n as u64, |c| {
                    black_box(c.grid());
                    ControlFlow::Continue(())
                })
                .unwrap();
        } else {
            for i in 0..n {
                let g = &caves[i % 64];
                let mut v = m.lazy(g, &cfg).with_walls(walls[i % 64]);
                if stage == "one" {
                    // As `cavesweep bench` times "measure one cave at a time": the five
                    // metrics through `Measurer::measure`, the wall count included.
                    m.measure(g, &cfg, &mut out);
                    black_box(&out);
                    continue;
                }
                let x = match stage.as_str() {
                    "five" => {
                        v.ensure(five);
                        v.values()[Metric::Components.index()]
                    }
                    "none" => v.get(Metric::FloorFraction),
                    "plane" | "boundary" => v.get(Metric::Boundary),
                    "spawn" => v.get(Metric::ConnectedFraction),
                    "label" => v.get(Metric::Components),
                    "width" => v.get(Metric::MinWidth),
                    _ => panic!("unknown stage {stage}"),
                };
                out[0] = x;
                black_box(&out);
            }
        }
        best = best.min((cpu() - t) * 1e6 / n as f64);
    }
    println!("{stage} ({simd}): {best:.3} us per cave (thread CPU time, best of 7 x {n} caves)");
}
