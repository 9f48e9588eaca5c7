//! The whole production pipeline against the scalar oracle, cave for cave: every preset over
//! many seeds, then random recipes. Production (`Generator::run` and the batch entry point
//! `Generator::generate`: bit-plane kernels, bit-parallel floods, production post-steps) and the
//! oracle (`cavesweep::oracle::cave`: byte-grid passes, byte-grid post-steps, byte-grid metrics)
//! share only the fill and the per-cave random stream; the final grid, the wall-fraction
//! trajectory and every metric must be identical.

use std::ops::ControlFlow;

use cavesweep::generate::Generator;
use cavesweep::measure::{Connectivity, EMPTY_VALUES, Metric, MetricSet, PostStep, Values};
use cavesweep::oracle::metrics as oracle;
use cavesweep::oracle::{ByteGrid, OracleCave, cave};
use cavesweep::presets::{NAMES, preset};
use cavesweep::recipe::{Fill, Point, Recipe};
use cavesweep::rng::RngKind;
use cavesweep::rule::{Border, Outside, Pass, Rule, Update};
use proptest::prelude::*;

/// Compare production with the oracle for `seeds`, through both entry points; `Err` names the
/// first difference.
fn compare(recipe: &Recipe, seeds: std::ops::Range<u64>, metrics: MetricSet) -> Result<(), String> {
    let want: Vec<OracleCave> = seeds.clone().map(|s| cave(recipe, s, metrics)).collect();
    let check = |seed: u64, grid: ByteGrid, traj: &[f64], values: &Values| {
        let w = &want[(seed - seeds.start) as usize];
        if grid != w.grid {
            return Err(format!(
                "{}: seed {seed}: grids differ\nproduction:\n{}oracle:\n{}",
                recipe.name,
                grid.to_grid().to_text(),
                w.grid.to_grid().to_text()
            ));
        }
        if traj != w.trajectory {
            return Err(format!(
                "{}: seed {seed}: trajectory {traj:?} vs oracle {:?}",
                recipe.name, w.trajectory
            ));
        }
        if !oracle::same_values(values, &w.values) {
            return Err(format!(
                "{}: seed {seed}: metrics\n  production {}\n  oracle     {}",
                recipe.name,
                oracle::show_values(values),
                oracle::show_values(&w.values)
            ));
        }
        Ok(())
    };
    let mut generator = Generator::new(recipe, metrics).map_err(|e| e.to_string())?;
    for seed in seeds.clone() {
        let cave = generator.run(seed).map_err(|e| e.to_string())?;
        check(
            seed,
            ByteGrid::from_grid(cave.grid),
            cave.trajectory,
            cave.values,
        )?;
    }
    let mut result = Ok(());
    let mut visited = 0;
    let flow = generator
        .generate(seeds.clone(), |cave| {
            let mut v = EMPTY_VALUES;
            cave.measure(&mut v);
            visited += 1;
            let (seed, trajectory) = (cave.seed, cave.trajectory);
            result = check(seed, ByteGrid::from_grid(cave.grid()), trajectory, &v);
            if result.is_ok() {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        })
        .map_err(|e| e.to_string())?;
    result?;
    if flow.is_break() || visited != seeds.end - seeds.start {
        return Err(format!("generate visited {visited} caves"));
    }
    Ok(())
}

/// A preset with an exit near the far corner, so `path_length` is measured too.
fn with_exit(mut r: Recipe) -> Recipe {
    r.exit = Some(Point::At(r.rows - 2, r.cols - 2));
    r
}

fn check_preset(name: &str, seeds: u64) {
    let r = with_exit(preset(name).unwrap());
    compare(&r, 0..seeds, MetricSet::ALL).unwrap();
    // Far seeds too (the stream's seeding must not depend on small numbers).
    compare(&r, u64::MAX - 20..u64::MAX, MetricSet::ALL).unwrap();
    if matches!(r.fill, Fill::Bernoulli { .. }) {
        let numpy = Recipe {
            rng: RngKind::Numpy,
            ..r.clone()
        };
        compare(&numpy, 0..seeds / 4, MetricSet::ALL).unwrap();
    }
}

#[test]
fn every_preset_is_named_here() {
    // A new preset must get its own whole-pipeline test below.
    assert_eq!(
        NAMES,
        [
            "chapter-strict",
            "classic-4-5",
            "nethack-mines",
            "roguebasin"
        ]
    );
}

#[test]
fn chapter_strict_matches_oracle() {
    check_preset("chapter-strict", 200);
}

#[test]
fn classic_4_5_matches_oracle() {
    check_preset("classic-4-5", 200);
}

#[test]
fn nethack_mines_matches_oracle() {
    check_preset("nethack-mines", 600);
}

#[test]
fn roguebasin_matches_oracle() {
    check_preset("roguebasin", 200);
}

/// Variants of the presets' own structure: every post-step after each preset's passes.
#[test]
fn presets_with_every_post_step_match_oracle() {
    for name in NAMES {
        for post in [
            vec![PostStep::KeepLargest],
            vec![PostStep::RemoveSmall(12)],
            vec![PostStep::Bridge],
            vec![PostStep::KeepLargest, PostStep::Bridge],
            vec![PostStep::Bridge, PostStep::RemoveSmall(3)],
            vec![
                PostStep::RemoveSmall(5),
                PostStep::Bridge,
                PostStep::KeepLargest,
            ],
        ] {
            for conn in [Connectivity::Four, Connectivity::Eight] {
                let r = Recipe {
                    post: post.clone(),
                    connectivity: conn,
                    ..with_exit(preset(name).unwrap())
                };
                compare(&r, 0..20, MetricSet::ALL).unwrap();
            }
        }
    }
}

/// After a final `bridge` with 8-connected metrics, `Generator::generate` tells the lazy view
/// that FLOOR is one component or none (`Lazy::with_one_component`), so `connected_fraction`,
/// `components` and `largest_fraction` come without floods. Checked against the oracle (which
/// floods) with each metric asked first, on every SIMD path, for caves with no FLOOR, with only
/// erased pockets, sparse, dense, with the spawn on WALL, and with 4-connected metrics (where a
/// bridged cave may be several components, so the hint must not be used: the test checks that
/// such caves occur).
#[test]
fn final_bridge_metrics_in_any_order_match_oracle() {
    let mut variants = Vec::new();
    for conn in ["8", "4"] {
        for floor in ["0", "3", "30", "200", "624", "1400", "1463"] {
            for spawn in ["center", "0,0", "9,3"] {
                let mut r = preset("nethack-mines").unwrap();
                for kv in [
                    format!("connectivity={conn}"),
                    format!("floor={floor}"),
                    format!("spawn={spawn}"),
                    "exit=10,70".to_string(),
                ] {
                    r.set_kv(&kv).unwrap();
                }
                variants.push(r);
            }
        }
        let mut r = with_exit(preset("chapter-strict").unwrap());
        r.post = vec![PostStep::Bridge];
        r.set_kv(&format!("connectivity={conn}")).unwrap();
        variants.push(r);
    }
    let (mut no_floor, mut four_split) = (0, 0);
    for simd in cavesweep::simd::Simd::available() {
        for r in &variants {
            let seeds = 0..12u64;
            let want: Vec<OracleCave> = seeds.clone().map(|s| cave(r, s, MetricSet::ALL)).collect();
            let mut g = Generator::with_simd(r, MetricSet::ALL, simd).unwrap();
            // Caves stay in their lanes until asked for (all metrics would copy each batch
            // out at once): the order of grid and metrics below then matters.
            g.set_grids_read(false);
            let flow = g.generate(seeds, |c| {
                let seed = c.seed;
                let w = &want[seed as usize];
                // The grid before the metrics on even seeds, after them on odd ones (a cave
                // measured in its batch's lanes is copied out when first asked for).
                if seed % 2 == 0 {
                    assert_eq!(ByteGrid::from_grid(c.grid()), w.grid, "{simd} seed {seed}");
                }
                // Each metric first in turn, then the rest in order (forwards or backwards).
                let mut order = Metric::ALL;
                order.rotate_left(c.seed as usize % Metric::COUNT);
                if c.seed >= Metric::COUNT as u64 {
                    order.reverse();
                }
                for m in order {
                    let (a, b) = (c.metric(m), w.values[m.index()]);
                    assert!(
                        a == b || a.is_nan() && b.is_nan(),
                        "{simd} {} seed {seed} {m}: {a} vs oracle {b}\n{}",
                        r.to_toml(),
                        c.grid()
                    );
                }
                if seed % 2 == 1 {
                    assert_eq!(ByteGrid::from_grid(c.grid()), w.grid, "{simd} seed {seed}");
                }
                no_floor += (w.values[Metric::FloorFraction.index()] == 0.0) as u32;
                four_split += (r.connectivity == Connectivity::Four
                    && w.values[Metric::Components.index()] > 1.0)
                    as u32;
                ControlFlow::Continue(())
            });
            assert!(flow.unwrap().is_continue());
        }
    }
    assert!(no_floor > 0 && four_split > 0, "{no_floor} {four_split}");
}

// ---- random recipes --------------------------------------------------------------------------

/// Widths around the 64-bit word and 256-bit block edges, and small ones.
fn side(
    edges: &'static [usize],
    small: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = usize> {
    prop_oneof![small, proptest::sample::select(edges)]
}

fn rule() -> impl Strategy<Value = Rule> {
    prop_oneof![
        (0u16..512, 0u16..512).prop_map(|(birth, survive)| Rule::Moore { birth, survive }),
        (0u8..=9, proptest::option::of(0u8..=21))
            .prop_map(|(r1_min, r2_max)| Rule::TwoRadius { r1_min, r2_max }),
    ]
}

fn pass() -> impl Strategy<Value = Pass> {
    (
        rule(),
        proptest::sample::select(vec![Outside::Floor, Outside::Wall, Outside::Wrap]),
        proptest::sample::select(vec![
            Update::Sync,
            Update::InPlaceRowMajor,
            Update::InPlaceColMajor,
        ]),
        proptest::sample::select(vec![Border::None, Border::Solid]),
        1u32..=3,
    )
        .prop_map(|(rule, outside, update, border, repeat)| Pass {
            rule,
            outside,
            update,
            border,
            repeat,
        })
}

fn post_step() -> impl Strategy<Value = PostStep> {
    prop_oneof![
        Just(PostStep::Bridge),
        Just(PostStep::KeepLargest),
        (0u32..20).prop_map(PostStep::RemoveSmall),
    ]
}

prop_compose! {
    fn recipe()(
        rows in side(&[63, 64, 65, 127, 128, 129], 1..=24),
        cols in side(&[63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257], 1..=70),
        wall in 0.0f64..=1.0,
        exact in any::<bool>(),
        numpy in any::<bool>(),
        passes in proptest::collection::vec(pass(), 0..=3),
        post in proptest::collection::vec(post_step(), 0..=3),
        eight in any::<bool>(),
        spawn in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        exit in proptest::option::of((any::<prop::sample::Index>(), any::<prop::sample::Index>())),
    ) -> Recipe {
        let cells = rows * cols;
        let fill = if exact {
            Fill::ExactFloor { floor: ((1.0 - wall) * cells as f64) as usize }
        } else {
            Fill::Bernoulli { p: wall }
        };
        let at = |(y, x): (prop::sample::Index, prop::sample::Index)| Point::At(y.index(rows), x.index(cols));
        Recipe {
            name: "random".into(),
            about: String::new(),
            rows,
            cols,
            fill,
            rng: if numpy && !exact { RngKind::Numpy } else { RngKind::Xoshiro },
            passes,
            post,
            spawn: at(spawn),
            exit: exit.map(at),
            connectivity: if eight { Connectivity::Eight } else { Connectivity::Four },
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn random_recipes_match_oracle(r in recipe(), seed: u64) {
        // min_width's oracle is brute force (k^4 per cell): only on small grids.
        let metrics = if r.rows * r.cols <= 3000 {
            MetricSet::ALL
        } else {
            Metric::ALL.into_iter().filter(|&m| m != Metric::MinWidth).collect()
        };
        let seeds = seed % (u64::MAX - 3)..seed % (u64::MAX - 3) + 3;
        if let Err(e) = compare(&r, seeds, metrics) {
            return Err(TestCaseError::fail(format!("{e}\nrecipe:\n{}", r.to_toml())));
        }
    }
}
