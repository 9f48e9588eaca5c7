//! The built-in recipes, each with its source and its deviations from it. Semantics follow
//! `docs/variants.md` (sources: `docs/sources.md`); `cavesweep presets NAME` prints any of them
//! as an editable TOML file.

use crate::measure::{Connectivity, PostStep};
use crate::recipe::{Fill, Point, Recipe, RecipeError};
use crate::rng::RngKind;
use crate::rule::{Border, Outside, Pass, Rule, Update};

/// Names of all presets, in the order `cavesweep presets` lists them.
pub const NAMES: [&str; 4] = [
    "chapter-strict",
    "classic-4-5",
    "nethack-mines",
    "roguebasin",
];

fn pass(rule: &str, outside: Outside, update: Update, border: Border, repeat: u32) -> Pass {
    Pass {
        rule: rule.parse().expect("preset rules parse"),
        outside,
        update,
        border,
        repeat,
    }
}

fn chapter(name: &str, rule: Rule, about: &str) -> Recipe {
    Recipe {
        name: name.into(),
        about: about.into(),
        rows: 90,
        cols: 140,
        fill: Fill::Bernoulli { p: 0.45 },
        rng: RngKind::Xoshiro,
        passes: vec![Pass {
            repeat: 4,
            ..Pass::sync(rule, Outside::Floor, Border::Solid)
        }],
        post: vec![],
        spawn: Point::Center,
        exit: None,
        connectivity: Connectivity::Four,
    }
}

/// The preset called `name`.
pub fn preset(name: &str) -> Result<Recipe, RecipeError> {
    Ok(match name {
        "chapter-strict" => chapter(
            name,
            Rule::chapter_strict(),
            "The book chapter 'Generate Caves from Noise': 90x140, each cell WALL iff u < 0.45, \
             4 steps of 'WALL iff >= 5 of the 8 neighbours are WALL' (B5678/S5678), cells outside \
             read as FLOOR (shift_fixed pads zeros), solid border after each step; spawn (45, 70). \
             Deviation: the RNG defaults to xoshiro; `--rng numpy` replays the chapter's \
             np.random.default_rng(seed) bit for bit.",
        ),
        "classic-4-5" => chapter(
            name,
            Rule::classic_4_5(),
            "RogueBasin's classic 4-5 rule (Jim Babcock): WALL iff the 3x3 including the centre \
             holds >= 5 walls (B5678/S45678), run exactly like the chapter measured it: 90x140, \
             45% fill, 4 steps, outside FLOOR, solid border. Deviation: xoshiro RNG by default \
             (`--rng numpy` for the chapter's).",
        ),
        "nethack-mines" => Recipe {
            name: name.into(),
            about: "NetHack's Gnomish Mines filler (mkmap.c, 3.6/3.7): the active area 19x77 of \
                    the 80x21 map, rock (WALL) outside; exactly 624 FLOOR cells placed uniformly; \
                    pass 1 f<=2 rock / f>=5 floor IN PLACE column-major (B678/S45678); pass 2 \
                    f==5 rock (B3/S012345678); pass 3 twice f<=2 rock (B678/S012345678); then \
                    join: 8-connected regions, 1..3-cell regions erased, the rest bridged by \
                    corridors. Deviations: NetHack's RNG and exact corridor digger are not \
                    replayed (any digger that connects every kept region is faithful to the \
                    design); the spawn is the centre cell, which may be rock."
                .into(),
            rows: 19,
            cols: 77,
            fill: Fill::ExactFloor { floor: 624 },
            rng: RngKind::Xoshiro,
            passes: vec![
                pass(
                    "B678/S45678",
                    Outside::Wall,
                    Update::InPlaceColMajor,
                    Border::None,
                    1,
                ),
                pass(
                    "B3/S012345678",
                    Outside::Wall,
                    Update::Sync,
                    Border::None,
                    1,
                ),
                pass(
                    "B678/S012345678",
                    Outside::Wall,
                    Update::Sync,
                    Border::None,
                    2,
                ),
            ],
            post: vec![PostStep::Bridge],
            spawn: Point::Center,
            exit: None,
            connectivity: Connectivity::Eight,
        },
        "roguebasin" => Recipe {
            name: name.into(),
            about: "RogueBasin's two-radius cellular automaton (Jim Babcock, 'Cellular Automata \
                    Method for Generating Random Cave-Like Levels'): 40% fill; 4 times WALL iff \
                    R1 >= 5 or R2 <= 2; then 3 times WALL iff R1 >= 5 (R1 = walls in the 3x3 \
                    incl. centre, R2 = walls in the 5x5 minus corners, outside cells not \
                    counted); border forced to WALL; buffered. Deviation: the grid is the \
                    chapter's 90x140 (the article's examples are smaller) so presets compare."
                .into(),
            rows: 90,
            cols: 140,
            fill: Fill::Bernoulli { p: 0.40 },
            rng: RngKind::Xoshiro,
            passes: vec![
                pass(
                    "R1>=5/R2<=2",
                    Outside::Floor,
                    Update::Sync,
                    Border::Solid,
                    4,
                ),
                pass("R1>=5", Outside::Floor, Update::Sync, Border::Solid, 3),
            ],
            post: vec![],
            spawn: Point::Center,
            exit: None,
            connectivity: Connectivity::Four,
        },
        other => {
            return Err(RecipeError::Key {
                key: "preset".into(),
                msg: format!("unknown preset {other:?}; known: {}", NAMES.join(", ")),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates_and_round_trips_through_toml() {
        for name in NAMES {
            let r = preset(name).unwrap();
            r.validate().unwrap();
            let text = r.to_toml();
            let back = Recipe::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert_eq!(back, r, "{name}\n{text}");
        }
    }

    #[test]
    fn unknown_preset_lists_the_names() {
        let e = preset("nethack").unwrap_err().to_string();
        assert!(
            e.contains("nethack-mines") && e.contains("unknown preset"),
            "{e}"
        );
    }

    #[test]
    fn set_overrides_and_errors_name_the_key() {
        let mut r = preset("chapter-strict").unwrap();
        r.set_kv("steps=7").unwrap();
        r.set_kv("rule=B5678/S45678").unwrap();
        r.set_kv("fill=0.5").unwrap();
        r.set_kv("spawn=1,2").unwrap();
        r.set_kv("outside=wrap").unwrap();
        assert_eq!(r.passes[0].repeat, 7);
        assert_eq!(r.passes[0].rule, Rule::classic_4_5());
        assert_eq!(r.passes[0].outside, Outside::Wrap);
        assert_eq!(r.fill, Fill::Bernoulli { p: 0.5 });
        assert_eq!(r.spawn_cell(), (1, 2));
        let err = |kv: &str| {
            preset("chapter-strict")
                .unwrap()
                .set_kv(kv)
                .unwrap_err()
                .to_string()
        };
        assert!(err("fill=1.5").starts_with("fill:"), "{}", err("fill=1.5"));
        assert!(err("fill=abc").starts_with("fill:"));
        assert!(err("rule=B9/S5").starts_with("rule:"));
        assert!(err("rows=0").contains("empty"));
        assert!(err("rows=100000").contains("too large"));
        assert!(err("spawn=200,3").starts_with("spawn:"));
        assert!(err("colour=red").contains("unknown recipe key"));
        assert!(err("steps").contains("KEY=VALUE"));
        // Exact-count fills keep their density when the shape changes.
        let mut n = preset("nethack-mines").unwrap();
        n.set_kv("rows=38").unwrap();
        assert_eq!(n.fill, Fill::ExactFloor { floor: 1248 });
        n.set_kv("fill=0.5").unwrap();
        assert_eq!(n.fill, Fill::ExactFloor { floor: 1463 });
    }

    #[test]
    fn recipe_file_errors() {
        assert!(Recipe::from_toml("name = 3").is_err());
        let good = preset("chapter-strict").unwrap().to_toml();
        let bad = good.replace("B5678/S5678", "B5678/S9");
        let e = Recipe::from_toml(&bad).unwrap_err().to_string();
        assert!(e.starts_with("pass 1:"), "{e}");
        let e = Recipe::from_toml(&format!("{good}\ncolour = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour") && !e.contains('\n'), "{e}");
    }
}
