//! Kernel tests: every fast path against the scalar oracle on random grids and rules, plus
//! hand-worked cases so a bug shared by kernel and oracle still shows.

use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::oracle::ByteGrid;

const WIDTHS: [usize; 9] = [1, 2, 63, 64, 65, 127, 128, 140, 200];
const HEIGHTS: [usize; 4] = [1, 2, 3, 90];

fn random_grid(rows: usize, cols: usize, density: u32, seed: u64) -> Grid {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = Grid::new(rows, cols).unwrap();
    for y in 0..rows {
        for x in 0..cols {
            g.set(y, x, rng.next_u32() % 100 < density);
        }
    }
    g
}

fn any_border() -> impl Strategy<Value = Border> {
    prop::sample::select(Border::ALL.to_vec())
}

/// Preset rules (specialised) half the time, arbitrary masks otherwise.
fn any_moore() -> impl Strategy<Value = Rule> {
    prop_oneof![
        prop::sample::select(vec![
            "B5678/S5678",
            "B5678/S45678",
            "B678/S45678",
            "B3/S012345678",
            "B678/S012345678",
            "B05678/S05678",
        ])
        .prop_map(|s| s.parse::<Rule>().unwrap()),
        (0u16..512, 0u16..512).prop_map(|(birth, survive)| Rule::Moore { birth, survive }),
    ]
}

fn check_sync(
    rows: usize,
    cols: usize,
    density: u32,
    seed: u64,
    rule: Rule,
    o: Outside,
    b: Border,
) {
    let pass = Pass::sync(rule, o, b);
    let mut g = random_grid(rows, cols, density, seed);
    let mut oracle = ByteGrid::from_grid(&g);
    let mut stepper = Stepper::new();
    for step in 0..3 {
        stepper.step(&mut g, &pass);
        oracle.step(&pass);
        assert_eq!(
            g.to_text(),
            oracle.to_grid().to_text(),
            "{rows}x{cols} {rule} {o} {b} step {step}"
        );
        assert_eq!(
            g.count_walls(),
            oracle.count_walls(),
            "padding must stay zero"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn sync_matches_oracle(
        wi in 0..WIDTHS.len(), hi in 0..HEIGHTS.len(), density in 0u32..=100,
        seed in any::<u64>(), rule in any_moore(), o in super::strategies::outside(), b in any_border(),
    ) {
        check_sync(HEIGHTS[hi], WIDTHS[wi], density, seed, rule, o, b);
    }

    #[test]
    fn sync_matches_oracle_any_shape(
        rows in 1usize..40, cols in 1usize..300, density in 0u32..=100,
        seed in any::<u64>(), rule in any_moore(), o in super::strategies::outside(), b in any_border(),
    ) {
        check_sync(rows, cols, density, seed, rule, o, b);
    }

    #[test]
    fn batch_matches_single_grids(
        wi in 0..WIDTHS.len(), hi in 0..HEIGHTS.len(), density in 0u32..=100,
        seed in any::<u64>(), rule in any_moore(), o in super::strategies::outside(), b in any_border(),
    ) {
        let (rows, cols) = (HEIGHTS[hi], WIDTHS[wi]);
        let pass = Pass { repeat: 3, ..Pass::sync(rule, o, b) };
        let mut grids: Vec<Grid> =
            (0..4).map(|k| random_grid(rows, cols, density, seed ^ k)).collect();
        let mut batch = Batch4::like(&grids[0]);
        let mut tmp = Batch4::like(&grids[0]);
        batch.load([&grids[0], &grids[1], &grids[2], &grids[3]]);
        run_pass_batch(&mut batch, &mut tmp, &pass);
        let mut stepper = Stepper::new();
        let counts = batch.count_walls();
        for (k, g) in grids.iter_mut().enumerate() {
            stepper.run_pass(g, &pass);
            let mut out = Grid::new(rows, cols).unwrap();
            batch.store_lane(k, &mut out);
            prop_assert_eq!(out.to_text(), g.to_text(), "lane {}", k);
            prop_assert_eq!(counts[k], g.count_walls());
        }
    }
}

#[test]
fn large_grid_matches_oracle() {
    for (rows, cols) in [(130, 1024), (64, 1000)] {
        for o in Outside::ALL {
            check_sync(rows, cols, 45, 7, Rule::chapter_strict(), *o, Border::Solid);
            check_sync(
                rows,
                cols,
                50,
                8,
                "B36/S23".parse().unwrap(),
                *o,
                Border::None,
            );
        }
    }
}

/// Worked by hand: a 3x3 block in a 5x5 field under each outside mode.
#[test]
fn hand_worked_outside_modes() {
    let start = ".....\n.###.\n.###.\n.###.\n.....\n";
    let step = |o: Outside, rule: &str| {
        let mut g = Grid::from_text(start).unwrap();
        Stepper::new().step(&mut g, &Pass::sync(rule.parse().unwrap(), o, Border::None));
        g.to_text()
    };
    // Strict rule, outside floor: block corners have 3 neighbours (die), edge middles 5 (stay),
    // centre 8 (stays); outside cells have at most 3.
    assert_eq!(
        step(Outside::Floor, "B5678/S5678"),
        ".....\n..#..\n.###.\n..#..\n.....\n"
    );
    // Outside wall: grid corners see 5 outside walls, edge cells 3 outside + up to 3 block walls.
    // (0,0): 5 outside + (1,1) = 6 -> wall. (0,1): 3 + (1,1),(1,2) = 5 -> wall. (0,2): 3+3 = 6.
    // (1,0): 3 + (1,1),(2,1) = 5 -> wall; (2,0): 3 + 3 = 6 -> wall.
    assert_eq!(
        step(Outside::Wall, "B5678/S5678"),
        "#####\n#.#.#\n#####\n#.#.#\n#####\n"
    );
    // Torus: (0,0) touches (4,4),(4,0),(4,1),(0,4),(1,4),(0,1),(1,0),(1,1): only (1,1) is wall.
    assert_eq!(
        step(Outside::Wrap, "B5678/S5678"),
        ".....\n..#..\n.###.\n..#..\n.....\n"
    );
    // Classic 4-5: block corners have 3 wall neighbours (survival needs 4: they die), edge
    // middles 5, outside cells at most 3 (birth needs 5): the same plus as the strict rule.
    assert_eq!(
        step(Outside::Floor, "B5678/S45678"),
        ".....\n..#..\n.###.\n..#..\n.....\n"
    );
    // B3/S012345678 (NetHack pass 2 in wall terms): floor cells with exactly 3 walls become wall:
    // (0,2) sees (1,1),(1,2),(1,3) = 3; (0,1) sees (1,1),(1,2) = 2; (0,0) sees 1.
    assert_eq!(
        step(Outside::Floor, "B3/S012345678"),
        "..#..\n.###.\n#####\n.###.\n..#..\n"
    );
}

#[test]
fn hand_worked_wrap_blinker() {
    // B3/S23 on a torus: a blinker across the seam of a 5x5 torus still blinks.
    let mut g = Grid::from_text(".....\n.....\n.....\n.....\n.....\n").unwrap();
    for (y, x) in [(0, 4), (0, 0), (0, 1)] {
        g.set(y, x, true);
    }
    let pass = Pass::sync("B3/S23".parse().unwrap(), Outside::Wrap, Border::None);
    let mut s = Stepper::new();
    s.step(&mut g, &pass);
    assert_eq!(g.to_text(), "#....\n#....\n.....\n.....\n#....\n");
    s.step(&mut g, &pass);
    assert_eq!(g.to_text(), "##..#\n.....\n.....\n.....\n.....\n");
}
