//! Every SIMD path this CPU runs, forced one at a time, against the scalar oracle: the whole
//! pipeline of every preset (batched generation, one seed at a time, partial batches) and the
//! measurer on random grids. The unit tests check each kernel on every path; this checks that
//! the paths are wired the same way end to end.

use std::ops::ControlFlow;

use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::measure::{Connectivity, EMPTY_VALUES, MeasureConfig, Measurer, MetricSet, Values};
use cavesweep::oracle::ByteGrid;
use cavesweep::oracle::metrics as oracle;
use cavesweep::presets::{NAMES, preset};
use cavesweep::recipe::Recipe;
use cavesweep::rng::RngKind;
use cavesweep::simd::{Level, Simd};

/// One generated cave: grid, trajectory and metric values.
type Made = (Grid, Vec<f64>, Values);

fn same_values(a: &Values, b: &Values) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Caves `seeds` through `generate` (batched), measured with every metric.
fn generated(r: &Recipe, simd: Simd, seeds: std::ops::Range<u64>) -> Vec<Made> {
    generated_with(r, simd, seeds, false)
}

/// [`generated`], with the generator told whether every grid is read (each lane batch copied
/// out at once) or not (each cave copied out of its lane when asked).
fn generated_with(
    r: &Recipe,
    simd: Simd,
    seeds: std::ops::Range<u64>,
    every_grid: bool,
) -> Vec<Made> {
    let mut g = Generator::with_simd(r, MetricSet::ALL, simd).unwrap();
    g.set_grids_read(every_grid);
    let mut out = vec![];
    let flow = g
        .generate(seeds, |c| {
            let mut v = EMPTY_VALUES;
            c.measure(&mut v);
            // The grid after the metrics: measured in lanes, then copied out.
            out.push((c.grid().clone(), c.trajectory.to_vec(), v));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(flow, ControlFlow::Continue(()));
    out
}

#[test]
fn every_path_makes_the_same_caves_as_the_scalar_path() {
    let paths = Simd::available();
    assert!(paths.iter().any(|s| s.level() == Level::Scalar));
    for name in NAMES {
        let r = preset(name).unwrap();
        // 13 seeds: not a multiple of any batch size, so every path ends on a partial batch.
        let want = generated(&r, Simd::SCALAR, 1000..1013);
        for &simd in &paths {
            let got = generated(&r, simd, 1000..1013);
            let eager = generated_with(&r, simd, 1000..1013, true);
            for (a, b) in got.iter().zip(&eager) {
                assert!(
                    a.0 == b.0 && a.1 == b.1 && same_values(&a.2, &b.2),
                    "{name} {simd}"
                );
            }
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert_eq!(a.0, b.0, "{name} {simd} seed {}", 1000 + k);
                assert_eq!(a.1, b.1, "{name} {simd} seed {} trajectory", 1000 + k);
                assert!(
                    same_values(&a.2, &b.2),
                    "{name} {simd} seed {}: {:?} vs {:?}",
                    1000 + k,
                    a.2,
                    b.2
                );
            }
            // One seed at a time (a batch of one), a range of one, and a range starting mid-batch.
            let mut one = Generator::with_simd(&r, MetricSet::ALL, simd).unwrap();
            for (k, b) in want.iter().enumerate() {
                let c = one.run(1000 + k as u64).unwrap();
                assert_eq!(c.grid, &b.0, "{name} {simd} run({})", 1000 + k);
                assert_eq!(c.trajectory, &b.1[..]);
                assert!(same_values(c.values, &b.2));
            }
            let single = generated(&r, simd, 1007..1008);
            assert_eq!(single[0].0, want[7].0, "{name} {simd} range of one");
            let tail = generated(&r, simd, 1005..1013);
            for (k, t) in tail.iter().enumerate() {
                assert_eq!(t.0, want[5 + k].0, "{name} {simd} shifted range");
            }
        }
    }
}

/// The numpy replay (`rng = "numpy"`) through every path, each with its PCG kernel (AVX-512
/// IFMA, 32-bit limbs, scalar chains), against the oracle, whose fill is the scalar kernel.
#[test]
fn every_path_replays_numpy_like_the_oracle() {
    let r = Recipe {
        rng: RngKind::Numpy,
        ..preset("chapter-strict").unwrap()
    };
    let seeds = [0u64, 1, 42, 12345, (1 << 40) + 7, u64::MAX];
    let want: Vec<_> = seeds
        .iter()
        .map(|&s| cavesweep::oracle::cave(&r, s, MetricSet::ALL))
        .collect();
    for simd in Simd::available() {
        let mut g = Generator::with_simd(&r, MetricSet::ALL, simd).unwrap();
        for (&seed, w) in seeds.iter().zip(&want) {
            let c = g.run(seed).unwrap();
            assert_eq!(ByteGrid::from_grid(c.grid), w.grid, "{simd} seed {seed}");
            assert_eq!(c.trajectory, &w.trajectory[..], "{simd} seed {seed}");
        }
    }
}

/// Every path's whole pipeline (fill, passes, post-steps, every metric) against the scalar
/// oracle, `cavesweep::oracle::cave`, which shares only the fill with production (on the
/// scalar path) and does the rest on bytes.
#[test]
fn every_path_matches_the_oracle_pipeline() {
    for name in NAMES {
        let r = preset(name).unwrap();
        let want: Vec<_> = (0..13)
            .map(|s| cavesweep::oracle::cave(&r, s, MetricSet::ALL))
            .collect();
        for simd in Simd::available() {
            for (k, (grid, traj, values)) in generated(&r, simd, 0..13).into_iter().enumerate() {
                let w = &want[k];
                assert_eq!(ByteGrid::from_grid(&grid), w.grid, "{name} {simd} seed {k}");
                assert_eq!(traj, w.trajectory, "{name} {simd} seed {k} trajectory");
                assert!(
                    same_values(&values, &w.values),
                    "{name} {simd} seed {k}: {values:?} vs {:?}",
                    w.values
                );
            }
        }
    }
}

/// The command line honours `CAVESWEEP_SIMD`: every level the CPU has gives the same cave and
/// says which path ran; a level it lacks, or an unknown name, is one line and a non-zero exit.
#[test]
fn cli_forces_levels_and_refuses_bad_ones() {
    use std::process::Command;
    let run = |level: &str| {
        Command::new(env!("CARGO_BIN_EXE_cavesweep"))
            .args(["run", "--preset", "classic-4-5", "--seed", "7", "--json"])
            .env("CAVESWEEP_SIMD", level)
            .output()
            .unwrap()
    };
    // The JSON without the two fields that name the path and the CPU.
    let cave = |out: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(out).unwrap();
        let o = v.as_object_mut().unwrap();
        let path = o.remove("simd").unwrap().as_str().unwrap().to_string();
        assert!(o.remove("cpu").is_some());
        (path, v)
    };
    let best = Simd::detect();
    let (path, want) = cave(&run("").stdout);
    assert_eq!(
        path,
        best.to_string(),
        "unset CAVESWEEP_SIMD runs the best path"
    );
    for level in Level::ALL {
        let o = run(level.name());
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        if level <= best.level() {
            assert!(o.status.success(), "{level}: {err}");
            let (path, got) = cave(&o.stdout);
            assert_eq!(path, Simd::for_level(level).unwrap().to_string());
            assert_eq!(got, want, "{level}");
        } else {
            assert!(!o.status.success(), "{level} should be refused on this CPU");
            assert!(err.contains("does not support"), "{level}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
    let o = run("avx9");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("CAVESWEEP_SIMD=\"avx9\" is not one of"),
        "{err}"
    );
}

/// A small deterministic generator for test grids (no dependency on the crate's RNGs).
fn noise(rows: usize, cols: usize, seed: u64, wall_percent: u64) -> Grid {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let bytes: Vec<u8> = (0..rows * cols)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 100 < wall_percent) as u8
        })
        .collect();
    Grid::from_bytes(rows, cols, &bytes).unwrap()
}

/// Measure `g` on every path and compare with the oracle (metrics and component labels). The
/// oracle runs once per connectivity, not once per path: it is most of this test's time.
fn check_measure(g: &Grid, spawn: (usize, usize)) {
    let (rows, cols) = (g.rows(), g.cols());
    let b = ByteGrid::from_grid(g);
    // One measurer per path, reused from one connectivity to the next as a caller would.
    let paths = Simd::available();
    let mut measurers: Vec<Measurer> = paths.iter().map(|&s| Measurer::with_simd(s)).collect();
    for conn in [Connectivity::Four, Connectivity::Eight] {
        let cfg = MeasureConfig {
            connectivity: conn,
            spawn,
            exit: Some((rows - 1, cols - 1)),
            metrics: MetricSet::ALL,
        };
        let want = oracle::measure(&b, &cfg);
        let (labels, sizes) = oracle::components(&b, conn);
        for (simd, m) in paths.iter().zip(&mut measurers) {
            let mut got = EMPTY_VALUES;
            m.measure(g, &cfg, &mut got);
            assert!(
                same_values(&got, &want),
                "{simd} {rows}x{cols} {conn:?}\n got {got:?}\nwant {want:?}"
            );
            let comps = m.components(g, conn).clone();
            assert_eq!(comps.sizes(), &sizes[..], "{simd} {rows}x{cols}");
            for y in 0..rows {
                for x in 0..cols {
                    let l = labels[y * cols + x];
                    let want = (l != u32::MAX).then_some(l);
                    assert_eq!(comps.label(y, x), want, "{simd} ({y}, {x})");
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Widths at the edges of the flood's narrow (1..4 words) and general paths and of the
    /// vector chunks; heights crossing 64 rows (the pending-row bitset's second word).
    #[test]
    fn every_path_measures_like_the_oracle(
        rows in proptest::sample::select(vec![1usize, 2, 3, 19, 63, 64, 65, 90, 130]),
        cols in proptest::sample::select(vec![1usize, 2, 63, 64, 65, 77, 128, 140, 192, 256, 257, 300, 512]),
        wall in 0u64..70, seed: u64, sy in 0usize..200, sx in 0usize..600,
    ) {
        let g = noise(rows, cols, seed, wall);
        check_measure(&g, (sy % rows, sx % cols));
    }
}
