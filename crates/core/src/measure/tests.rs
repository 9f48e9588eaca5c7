//! Tests of the measuring code against the byte-grid oracles (random grids of many shapes and
//! fill levels) and against small hand-worked grids.

use proptest::prelude::*;
use rand_core::Rng;

use super::components::{fill_down_word, fill_down_word_portable, fill_row, fill_row_n};
use super::*;
use crate::oracle::ByteGrid;
use crate::simd::Scalar;

/// A tiny deterministic RNG for building test grids (splitmix64).
pub(super) struct Mix(pub(super) u64);
impl Mix {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn random_grid(rows: usize, cols: usize, wall_p: f64, seed: u64) -> Grid {
    let mut b = ByteGrid::new(rows, cols);
    fill_cells(&mut b, wall_p, seed);
    b.to_grid()
}

fn fill_cells(b: &mut ByteGrid, wall_p: f64, seed: u64) {
    let mut r = Mix(seed ^ 0x5555);
    for c in &mut b.cells {
        *c = (((r.next() >> 11) as f64 / (1u64 << 53) as f64) < wall_p) as u8;
    }
}

fn g(t: &str) -> Grid {
    Grid::from_text(t).unwrap()
}

fn cfg(conn: Connectivity, spawn: (usize, usize), exit: Option<(usize, usize)>) -> MeasureConfig {
    MeasureConfig {
        connectivity: conn,
        spawn,
        exit,
        metrics: MetricSet::ALL,
    }
}

thread_local! {
    /// One measurer reused across every test grid of a thread, so scratch reuse across shapes
    /// (stale planes, lazily grown buffers) is exercised by the oracle comparisons.
    static SHARED: std::cell::RefCell<Measurer> = std::cell::RefCell::new(Measurer::new());
}

fn measure(grid: &Grid, c: &MeasureConfig) -> Values {
    let mut v = EMPTY_VALUES;
    SHARED.with(|m| m.borrow_mut().measure(grid, c, &mut v));
    v
}

use crate::oracle::metrics::{self as oracle, same_values as same, show_values as show};

// ---------------------------------------------------------------- row fill primitives

/// Naive: every floor run holding a seed, bit by bit.
fn naive_fill(f: &[u64], seed: &[u64]) -> Vec<u64> {
    let n = f.len() * 64;
    let bit = |v: &[u64], i: usize| (v[i / 64] >> (i % 64)) & 1 == 1;
    let mut out = vec![0u64; f.len()];
    let mut i = 0;
    while i < n {
        if !bit(f, i) {
            i += 1;
            continue;
        }
        let start = i;
        let mut seeded = false;
        while i < n && bit(f, i) {
            seeded |= bit(seed, i);
            i += 1;
        }
        if seeded {
            for j in start..i {
                out[j / 64] |= 1 << (j % 64);
            }
        }
    }
    out
}

fn naive_down(f: u64, s: u64) -> u64 {
    let mut out = 0;
    for q in 0..64 {
        if s >> q & 1 == 1 {
            let mut j: i32 = q;
            while j >= 0 && f >> j & 1 == 1 {
                out |= 1 << j;
                j -= 1;
            }
            out |= 1 << q;
        }
    }
    out
}

proptest! {
    #[test]
    fn fill_down_matches_naive(f: u64, s: u64, sparse in 0u32..4) {
        let mut s = s & f;
        for _ in 0..sparse { s &= s.rotate_left(17) ^ f.rotate_right(5); }
        let s = s & f;
        prop_assert_eq!(fill_down_word::<Scalar>(f, s), naive_down(f, s));
        prop_assert_eq!(fill_down_word_portable(f, s), naive_down(f, s));
        if crate::simd::Cpu::get().avx2 {
            // The pdep/pext formulation (called outside a clone: the intrinsics still run).
            prop_assert_eq!(fill_down_word::<crate::simd::Avx2>(f, s), naive_down(f, s));
        }
    }

    #[test]
    fn fill_row_matches_naive(f in prop::collection::vec(any::<u64>(), 1..5),
                              seeds in prop::collection::vec(any::<u64>(), 5), dense in any::<bool>()) {
        // Long runs (dense floor) exercise the carries across words.
        let f: Vec<u64> = f.iter().map(|&w| if dense { w | w.rotate_left(1) | w.rotate_left(7) } else { w }).collect();
        let seed: Vec<u64> = f.iter().zip(&seeds).map(|(&a, &b)| a & b & b.rotate_left(13) & b.rotate_left(29)).collect();
        let mut out = vec![0; f.len()];
        fill_row::<Scalar>(&f, &seed, &mut out);
        let want = naive_fill(&f, &seed);
        prop_assert_eq!(&out, &want);
        // The unrolled fixed-width form, on a zero-padded 4-word row.
        let (mut f4, mut s4) = ([0u64; 4], [0u64; 4]);
        f4[..f.len()].copy_from_slice(&f);
        s4[..f.len()].copy_from_slice(&seed);
        let got = match f.len() {
            1 => fill_row_n::<Scalar, 1>(&f4, &s4),
            2 => fill_row_n::<Scalar, 2>(&f4, &s4),
            3 => fill_row_n::<Scalar, 3>(&f4, &s4),
            _ => fill_row_n::<Scalar, 4>(&f4, &s4),
        };
        prop_assert_eq!(&got[..f.len()], &want[..]);
    }
}

#[test]
fn fill_row_hand_cases() {
    // A run spanning three words seeded only in the middle word.
    let f = [!0u64 << 60, !0, (1 << 4) - 1];
    let seed = [0, 1 << 30, 0];
    let mut out = [0; 3];
    fill_row::<Scalar>(&f, &seed, &mut out);
    assert_eq!(out, f);
    // Two runs, only the upper seeded.
    let f = [0b1110_0111u64];
    let mut out = [0];
    fill_row::<Scalar>(&f, &[0b0100_0000], &mut out);
    assert_eq!(out, [0b1110_0000]);
}

// ---------------------------------------------------------------- oracle comparisons

fn cols_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(1usize),
        Just(2),
        Just(63),
        Just(64),
        Just(65),
        Just(130),
        Just(257),
        Just(300),
        // Wide rows (the AVX-512 wide row step): two chunks of 8 words, a partial one, three.
        Just(1024),
        Just(1100),
        Just(1500),
        1usize..200
    ]
}

fn conn_strategy() -> impl Strategy<Value = Connectivity> {
    prop_oneof![
        Just(Connectivity::Four),
        Just(Connectivity::Six),
        Just(Connectivity::Eight)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn components_match_oracle(rows in 1usize..24, cols in cols_strategy(),
                               wall_p in 0.0f64..1.0, seed: u64, conn in conn_strategy()) {
        let grid = random_grid(rows, cols, wall_p, seed);
        let bg = ByteGrid::from_grid(&grid);
        let (labels, sizes) = oracle::components(&bg, conn);
        let shared = SHARED.with(|m| m.take());
        let mut m = shared;
        let c = m.components(&grid, conn);
        prop_assert_eq!(c.count(), sizes.len());
        prop_assert_eq!(c.sizes(), &sizes[..]);
        for y in 0..rows {
            for x in 0..cols {
                let want = match labels[y * cols + x] { u32::MAX => None, l => Some(l) };
                prop_assert_eq!(c.label(y, x), want, "cell ({}, {})", y, x);
            }
        }
        prop_assert_eq!(c.label(rows, 0), None);
        SHARED.with(|s| *s.borrow_mut() = m);
    }

    #[test]
    fn metrics_match_oracle(rows in 1usize..24, cols in cols_strategy(),
                            wall_p in prop_oneof![0.0f64..1.0, 0.0f64..0.2, Just(0.0), Just(1.0)],
                            seed: u64, conn in conn_strategy(), pick: u64, with_exit: bool) {
        let grid = random_grid(rows, cols, wall_p, seed);
        let bg = ByteGrid::from_grid(&grid);
        let mut r = Mix(pick);
        let spawn = (r.below(rows), r.below(cols));
        let exit = with_exit.then(|| (r.below(rows), r.below(cols)));
        let c = cfg(conn, spawn, exit);
        let want = oracle::measure(&bg, &c);
        let got = measure(&grid, &c);
        prop_assert!(same(&got, &want), "\n got  {}\n want {}\n{}", show(&got), show(&want), grid);
        // Subsets of metrics give the same numbers and NaN elsewhere.
        let sub = MetricSet::EMPTY.with(Metric::from_index(pick as usize % Metric::COUNT))
            .with(Metric::from_index((pick >> 8) as usize % Metric::COUNT));
        let c2 = MeasureConfig { metrics: sub, ..c };
        let got2 = measure(&grid, &c2);
        for m in Metric::ALL {
            if sub.contains(m) {
                let (a, b) = (got2[m.index()], want[m.index()]);
                prop_assert!(a == b || (a.is_nan() && b.is_nan()), "{} subset: {} vs {}", m, a, b);
            } else {
                prop_assert!(got2[m.index()].is_nan(), "{} not requested", m);
            }
        }
    }

    #[test]
    fn open_caves_match_oracle(seed: u64, conn in conn_strategy(), rows in 3usize..40, cols in cols_strategy()) {
        // Smoothed-like caves: mostly floor, long runs, wide areas (min_width > 1 matters).
        let grid = random_grid(rows, cols, 0.03, seed);
        let bg = ByteGrid::from_grid(&grid);
        let mut r = Mix(seed);
        let spawn = (r.below(rows), r.below(cols));
        let exit = Some((r.below(rows), r.below(cols)));
        let c = cfg(conn, spawn, exit);
        let want = oracle::measure(&bg, &c);
        let got = measure(&grid, &c);
        prop_assert!(same(&got, &want), "\n got  {}\n want {}\n{}", show(&got), show(&want), grid);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The lazy view gives the oracle's values whatever order the metrics are asked for in and
    /// whatever the "wanted" hint says (a min_width asked for after the labelling, without the
    /// hint, re-floods the spawn's component).
    #[test]
    fn lazy_views_match_oracle_in_any_order(rows in 1usize..30, cols in cols_strategy(),
                            wall_p in prop_oneof![0.0f64..1.0, 0.0f64..0.1, Just(0.0)],
                            seed: u64, conn in conn_strategy(), pick: u64, with_exit: bool,
                            wanted_bits in 0u32..(1 << Metric::COUNT), outside: bool) {
        let grid = random_grid(rows, cols, wall_p, seed);
        let bg = ByteGrid::from_grid(&grid);
        let mut r = Mix(pick);
        let spawn = (r.below(rows), r.below(cols));
        let exit = with_exit.then(|| (r.below(rows), r.below(cols)));
        let c = cfg(conn, spawn, exit);
        let want = oracle::measure(&bg, &c);
        let mut order = Metric::ALL.to_vec();
        for i in (1..order.len()).rev() {
            order.swap(i, r.below(i + 1));
        }
        let hint: MetricSet = Metric::ALL.into_iter().filter(|m| wanted_bits >> m.index() & 1 == 1).collect();
        // An exit outside the grid counts as unreachable (validation rejects it up front).
        let c = MeasureConfig { metrics: hint, exit: if outside { Some((rows, 0)) } else { c.exit }, ..c };
        let want = if outside { let mut w = want; w[Metric::PathLength.index()] = f64::NAN; w } else { want };
        let mut m = SHARED.with(|m| m.take());
        {
            let mut view = m.lazy(&grid, &c);
            for (k, &metric) in order.iter().enumerate() {
                let (a, b) = (view.get(metric), want[metric.index()]);
                prop_assert!(a == b || (a.is_nan() && b.is_nan()),
                    "{} (asked {}th, order {:?}, hint {}): {} vs {}\n{}", metric, k, order, hint, a, b, grid);
                // Asking again answers from the memo.
                let again = view.get(metric);
                prop_assert!(again == a || (again.is_nan() && a.is_nan()));
            }
        }
        SHARED.with(|s| *s.borrow_mut() = m);
    }
}

/// min_width asked for after the labelling (which claims every component) must still measure
/// the spawn's component alone, with or without the hint that keeps a copy of it.
#[test]
fn lazy_min_width_after_labelling_is_the_spawns() {
    let grid = g("...#.\n...#.\n...#.\n");
    for hint in [MetricSet::EMPTY, MetricSet::ALL] {
        let c = MeasureConfig {
            metrics: hint,
            ..cfg(Connectivity::Four, (1, 1), None)
        };
        let mut m = Measurer::new();
        let mut view = m.lazy(&grid, &c);
        assert_eq!(view.get(Metric::Components), 2.0);
        assert_eq!(view.get(Metric::MinWidth), 3.0, "hint {hint}");
        let mut view = m.lazy(&grid, &c);
        assert_eq!(view.get(Metric::MinWidth), 3.0);
        assert_eq!(view.get(Metric::Components), 2.0);
        assert_eq!(view.get(Metric::LargestFraction), 9.0 / 12.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn wide_open_caves_match_oracle(seed: u64, rows in 1usize..100, cols in 1usize..300, walls in 0usize..4) {
        // Nearly empty grids: min_width up to the grid's short side (the galloping search and
        // the long windows of MinWidth), widths across 64-bit word boundaries.
        let grid = random_grid(rows, cols, [0.0, 0.0005, 0.002, 0.01][walls], seed);
        let bg = ByteGrid::from_grid(&grid);
        let mut r = Mix(seed);
        let spawn = (r.below(rows), r.below(cols));
        let c = cfg(Connectivity::Four, spawn, None);
        let c = MeasureConfig { metrics: MetricSet::EMPTY.with(Metric::MinWidth), ..c };
        let want = oracle::measure(&bg, &c);
        let got = measure(&grid, &c);
        prop_assert!(same(&got, &want), "\n got  {}\n want {}\n{}", show(&got), show(&want), grid);
    }
}

#[test]
fn chapter_caves_match_oracle() {
    use crate::rule::{Border, Outside, Pass, Rule};
    let pass = Pass::sync(Rule::chapter_strict(), Outside::Floor, Border::Solid);
    let mut m = Measurer::new();
    for seed in 0..20 {
        let mut b = ByteGrid::new(90, 140);
        fill_cells(&mut b, 0.45, seed);
        for _ in 0..4 {
            b.step(&pass);
        }
        let grid = b.to_grid();
        for conn in [Connectivity::Four, Connectivity::Six, Connectivity::Eight] {
            let c = cfg(conn, (45, 70), Some((5, 130)));
            let want = oracle::measure(&b, &c);
            let mut got = EMPTY_VALUES;
            m.measure(&grid, &c, &mut got);
            assert!(
                same(&got, &want),
                "seed {seed}\n got  {}\n want {}",
                show(&got),
                show(&want)
            );
        }
    }
}

// ---------------------------------------------------------------- hand-worked grids

fn v(
    grid: &str,
    conn: Connectivity,
    spawn: (usize, usize),
    exit: Option<(usize, usize)>,
) -> Values {
    measure(&g(grid), &cfg(conn, spawn, exit))
}

#[test]
fn hand_fractions_components_boundary() {
    // 3x4: floor cells 8, two 4-components ({(0,0),(1,0)} is cut from the rest by walls).
    let t = ".#..\n.#..\n##..\n";
    let x = v(t, Connectivity::Four, (0, 0), None);
    assert_eq!(x[Metric::WallFraction.index()], 4.0 / 12.0);
    assert_eq!(x[Metric::FloorFraction.index()], 8.0 / 12.0);
    assert_eq!(x[Metric::Components.index()], 2.0);
    assert_eq!(x[Metric::LargestFraction.index()], 6.0 / 8.0);
    assert_eq!(x[Metric::ConnectedFraction.index()], 2.0 / 8.0);
    // Horizontal pairs: row0 (.#)(#.) =2, row1 2, row2 (#.)=1; vertical: col0 (.#) between rows
    // 1,2 =1, col1 none (#,#,#) ... col1 rows are #,#,#: 0; cols 2,3: all floor: 0. Total 6.
    assert_eq!(x[Metric::Boundary.index()], 6.0);
    assert!(x[Metric::PathLength.index()].is_nan());
    assert_eq!(x[Metric::ReachDepth.index()], 1.0);
    assert_eq!(x[Metric::MinWidth.index()], 1.0);
    // Diagonal contact joins components only with 8-connectivity.
    let t = ".#\n#.\n";
    assert_eq!(
        v(t, Connectivity::Four, (0, 0), None)[Metric::Components.index()],
        2.0
    );
    let e = v(t, Connectivity::Eight, (0, 0), Some((1, 1)));
    assert_eq!(e[Metric::Components.index()], 1.0);
    assert_eq!(e[Metric::PathLength.index()], 1.0);
    assert_eq!(e[Metric::ConnectedFraction.index()], 1.0);
}

#[test]
fn hand_paths() {
    // A U-shaped corridor: from (0,0) down, across, up to (0,4): 4 + 4 + 4 = 12 steps.
    let t = ".###.\n.###.\n.###.\n.###.\n.....\n";
    let x = v(t, Connectivity::Four, (0, 0), Some((0, 4)));
    assert_eq!(x[Metric::PathLength.index()], 12.0);
    assert_eq!(x[Metric::ReachDepth.index()], 12.0);
    let x = v(t, Connectivity::Eight, (0, 0), Some((0, 4)));
    // 8-connected: (0,0)->(3,0) 3 steps, (4,1) 1 diagonal, (4,2),(4,3)... (3,4) diagonal, (0,4).
    assert_eq!(x[Metric::PathLength.index()], 3.0 + 1.0 + 2.0 + 1.0 + 3.0);
    // Spawn == exit, exit on wall, WALL spawn.
    assert_eq!(
        v(t, Connectivity::Four, (4, 2), Some((4, 2)))[Metric::PathLength.index()],
        0.0
    );
    assert!(v(t, Connectivity::Four, (4, 2), Some((0, 2)))[Metric::PathLength.index()].is_nan());
    let w = v(t, Connectivity::Four, (0, 2), Some((0, 0)));
    assert!(w[Metric::PathLength.index()].is_nan());
    assert!(w[Metric::ReachDepth.index()].is_nan());
    assert_eq!(w[Metric::ConnectedFraction.index()], 0.0);
    assert_eq!(w[Metric::MinWidth.index()], 0.0);
    // A wall spawn next to floor still reaches nothing (unlike the chapter's reachable_floor).
    assert_eq!(w[Metric::Components.index()], 1.0);
}

#[test]
fn hand_min_width() {
    // Open 3x3 room: 3.
    let room = "...\n...\n...\n";
    assert_eq!(
        v(room, Connectivity::Four, (1, 1), None)[Metric::MinWidth.index()],
        3.0
    );
    // Two 2x2 rooms joined by a one-cell neck: 1.
    let neck = "..#..\n.....\n..#..\n";
    let t = "..###..\n.......\n..###..\n";
    assert_eq!(
        v(t, Connectivity::Four, (0, 0), None)[Metric::MinWidth.index()],
        1.0
    );
    // The middle row alone is the neck; here it is 2 rows tall: every cell in a 2x2 square.
    let t2 = "..###..\n.......\n.......\n..###..\n";
    assert_eq!(
        v(t2, Connectivity::Four, (0, 0), None)[Metric::MinWidth.index()],
        2.0
    );
    // The neck shape `neck`: every 2x2 square holding (1,2) also holds (0,2) or (2,2), both
    // WALL, so (1,2) is only in a 1x1 square -> 1.
    assert_eq!(
        v(neck, Connectivity::Four, (0, 0), None)[Metric::MinWidth.index()],
        1.0
    );
    // Remove the lower wall: (1,2),(1,3),(2,2),(2,3) is all floor now -> 2.
    let wide = "..#..\n.....\n.....\n";
    assert_eq!(
        v(wide, Connectivity::Four, (0, 0), None)[Metric::MinWidth.index()],
        2.0
    );
    // A 3-wide corridor around a wall block: 3. A stray isolated floor cell elsewhere does not
    // matter (not in the spawn's component), but a 1-wide spur does.
    let ring = "#########\n#.......#\n#.......#\n#.......#\n#...#...#\n#.......#\n#.......#\n#.......#\n#########\n";
    assert_eq!(
        v(ring, Connectivity::Four, (1, 1), None)[Metric::MinWidth.index()],
        3.0
    );
    let ring_stray = ring.replacen("#########\n", "#.#######\n", 1);
    // The stray (0,1) touches (1,1): it is in the component and only in 1x1 squares.
    assert_eq!(
        v(&ring_stray, Connectivity::Four, (1, 1), None)[Metric::MinWidth.index()],
        1.0
    );
    let ring_iso = ring.to_string() + ".........\n";
    // Last row floor, separated by the wall row: a 1-high strip not in the spawn's component.
    assert_eq!(
        v(&ring_iso, Connectivity::Four, (1, 1), None)[Metric::MinWidth.index()],
        3.0
    );
}

// ---------------------------------------------------------------- parsing and config

impl Metric {
    fn from_index(i: usize) -> Metric {
        Metric::ALL[i]
    }
}

#[test]
fn names_and_sets() {
    let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "wall_fraction",
            "floor_fraction",
            "components",
            "largest_fraction",
            "connected_fraction",
            "boundary",
            "path_length",
            "reach_depth",
            "min_width"
        ]
    );
    for m in Metric::ALL {
        assert_eq!(m.name().parse::<Metric>().unwrap(), m);
    }
    let e = "width".parse::<Metric>().unwrap_err().to_string();
    assert!(
        e.contains("\"width\"") && e.contains("min_width") && e.contains("wall_fraction"),
        "{e}"
    );
    let s: MetricSet = "components, boundary".parse().unwrap();
    assert_eq!(
        s.iter().collect::<Vec<_>>(),
        [Metric::Components, Metric::Boundary]
    );
    assert_eq!(s.to_string(), "components,boundary");
    assert_eq!("all".parse::<MetricSet>().unwrap(), MetricSet::ALL);
    assert_eq!(MetricSet::ALL.iter().count(), Metric::COUNT);
    assert!("components,,boundary".parse::<MetricSet>().is_err());
    assert!("".parse::<MetricSet>().is_err());
    assert_eq!("4".parse::<Connectivity>().unwrap(), Connectivity::Four);
    assert_eq!("8".parse::<Connectivity>().unwrap(), Connectivity::Eight);
    assert_eq!("6".parse::<Connectivity>().unwrap(), Connectivity::Six);
    assert!(
        "5".parse::<Connectivity>()
            .unwrap_err()
            .to_string()
            .contains("\"5\"")
    );
}

#[test]
fn validate_spawn_exit() {
    let c = cfg(Connectivity::Four, (45, 70), Some((89, 139)));
    assert_eq!(c.validate(90, 140), Ok(()));
    let e = c.validate(40, 140).unwrap_err();
    assert_eq!(
        e,
        MeasureError::SpawnOutside {
            y: 45,
            x: 70,
            rows: 40,
            cols: 140
        }
    );
    assert!(e.to_string().contains("(45, 70)") && e.to_string().contains("40x140"));
    assert!(matches!(
        c.validate(90, 60),
        Err(MeasureError::SpawnOutside { .. })
    ));
    assert!(matches!(
        c.validate(89, 140),
        Err(MeasureError::ExitOutside { .. })
    ));
    // Measuring with an outside spawn/exit does not panic.
    let x = v("...\n...\n", Connectivity::Four, (5, 5), Some((9, 9)));
    assert_eq!(x[Metric::ConnectedFraction.index()], 0.0);
    let x = v("...\n...\n", Connectivity::Four, (0, 0), Some((9, 9)));
    assert!(x[Metric::PathLength.index()].is_nan());
}

#[test]
fn post_step_parse() {
    for (s, p) in [
        ("keep-largest", PostStep::KeepLargest),
        ("remove-small 20", PostStep::RemoveSmall(20)),
        ("remove-small:20", PostStep::RemoveSmall(20)),
        (" bridge ", PostStep::Bridge),
    ] {
        assert_eq!(s.parse::<PostStep>().unwrap(), p);
    }
    assert_eq!(PostStep::RemoveSmall(7).to_string(), "remove-small 7");
    for p in [
        PostStep::KeepLargest,
        PostStep::RemoveSmall(3),
        PostStep::Bridge,
    ] {
        assert_eq!(p.to_string().parse::<PostStep>().unwrap(), p);
    }
    assert!(matches!(
        "remove-small x".parse::<PostStep>(),
        Err(MeasureError::BadPostStepCount { .. })
    ));
    assert!(matches!(
        "remove-small".parse::<PostStep>(),
        Err(MeasureError::BadPostStep(_))
    ));
    assert!(matches!(
        "remove-smallish 3".parse::<PostStep>(),
        Err(MeasureError::BadPostStep(_))
    ));
    assert!(matches!(
        "keep".parse::<PostStep>(),
        Err(MeasureError::BadPostStep(_))
    ));
}

// ---------------------------------------------------------------- post-steps

struct Rand(Mix);
impl rand_core::TryRng for Rand {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.0.next() as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.0.next())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for b in dst {
            *b = self.0.next() as u8;
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn keep_and_remove_match_oracle(rows in 1usize..20, cols in cols_strategy(), wall_p in 0.0f64..1.0,
                                    seed: u64, conn in conn_strategy(), n in 0u32..12) {
        let grid = random_grid(rows, cols, wall_p, seed);
        // Every SIMD path: the post-steps run in the path's clone.
        for simd in crate::simd::Simd::available() {
            let mut m = Measurer::with_simd(simd);
            for step in [PostStep::KeepLargest, PostStep::RemoveSmall(n)] {
                let mut fast = grid.clone();
                let mut rng = Rand(Mix(seed));
                m.apply_post(&mut fast, step, conn, &mut rng);
                let mut want = ByteGrid::from_grid(&grid);
                oracle::apply_post(&mut want, step, conn, &mut Rand(Mix(seed)));
                prop_assert_eq!(fast.to_text(), want.to_grid().to_text(), "{} {}", simd, step);
                // Neither draws from the stream.
                prop_assert_eq!(rng.next_u64(), Rand(Mix(seed)).next_u64());
            }
        }
    }

    #[test]
    fn bridge_matches_oracle(rows in 1usize..30, cols in cols_strategy(), wall_p in 0.3f64..0.9,
                             seed: u64, conn in conn_strategy()) {
        let grid = random_grid(rows, cols, wall_p, seed);
        let mut want = ByteGrid::from_grid(&grid);
        let mut oracle_rng = Rand(Mix(seed));
        oracle::apply_post(&mut want, PostStep::Bridge, conn, &mut oracle_rng);
        let after = oracle_rng.next_u64();
        // Every SIMD path: the post-steps run in the path's clone.
        for simd in crate::simd::Simd::available() {
            let mut fast = grid.clone();
            let mut rng = Rand(Mix(seed));
            Measurer::with_simd(simd).apply_post(&mut fast, PostStep::Bridge, conn, &mut rng);
            prop_assert_eq!(fast.to_text(), want.to_grid().to_text(), "{}\n{}", simd, grid);
            // The same number of draws: the streams continue at the same place.
            prop_assert_eq!(rng.next_u64(), after);
        }
    }

    #[test]
    fn bridge_connects_everything(rows in 1usize..30, cols in cols_strategy(), wall_p in 0.3f64..0.9,
                                  seed: u64) {
        let grid = random_grid(rows, cols, wall_p, seed);
        let b = ByteGrid::from_grid(&grid);
        let mut m = Measurer::new();
        let mut out = grid.clone();
        m.apply_post(&mut out, PostStep::Bridge, Connectivity::Four, &mut Rand(Mix(seed)));
        let ob = ByteGrid::from_grid(&out);
        let (labels, sizes) = oracle::components(&b, Connectivity::Eight);
        // Kept regions (>= 4 cells) keep every cell; cells of dropped regions not on a corridor
        // become WALL (they may be re-dug by a corridor passing through).
        for (i, &l) in labels.iter().enumerate() {
            if l != u32::MAX && sizes[l as usize] >= 4 {
                prop_assert_eq!(ob.cells[i], 0, "kept cell {} lost", i);
            }
        }
        let (_, after) = oracle::components(&ob, Connectivity::Eight);
        let kept = sizes.iter().filter(|&&s| s >= 4).count();
        prop_assert_eq!(after.len(), kept.min(1), "\n{}\n{}", grid, out);
        // Without kept regions nothing is dug: all WALL.
        if kept == 0 {
            prop_assert_eq!(out.count_walls(), (rows * cols) as u64);
        }
    }
}

#[test]
fn bridge_hand_case() {
    // Two 2x2 rooms and a 1-cell pocket: the pocket is erased, the rooms get joined.
    let t = "..#####\n..###..\n#####..\n.######\n";
    let mut grid = g(t);
    let mut m = Measurer::new();
    m.apply_post(
        &mut grid,
        PostStep::Bridge,
        Connectivity::Four,
        &mut Rand(Mix(1)),
    );
    assert!(grid.get(3, 0), "pocket erased");
    let c = m.components(&grid, Connectivity::Eight);
    assert_eq!(c.count(), 1);
    for (y, x) in [(0, 0), (1, 1), (1, 5), (2, 6)] {
        assert!(!grid.get(y, x));
    }
    // The RNG is only touched by bridge; same seed, same result.
    let mut again = g(t);
    m.apply_post(
        &mut again,
        PostStep::Bridge,
        Connectivity::Four,
        &mut Rand(Mix(1)),
    );
    assert_eq!(again, grid);
    // Two kept regions: two draws, one `next_u32` each (one splitmix step each here).
    let mut rng = Rand(Mix(1));
    m.apply_post(&mut g(t), PostStep::Bridge, Connectivity::Four, &mut rng);
    let mut fresh = Rand(Mix(1));
    fresh.next_u32();
    fresh.next_u32();
    assert_eq!(rng.next_u64(), fresh.next_u64());
}

/// A stream that hands out given `next_u32` values (and nothing else).
struct Scripted(std::vec::IntoIter<u32>);
impl rand_core::TryRng for Scripted {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.0.next().expect("no more scripted draws"))
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        unreachable!("bridge draws u32s")
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
        unreachable!("bridge draws u32s")
    }
}

#[test]
fn bridge_hand_worked_corridor() {
    // Rooms A (top left) and B (right), and a one-cell pocket that is erased. Draws: 0 picks
    // A's rank 0 cell (0,0); 3/4 * 2^32 picks B's rank floor(0.75 * 4) = 3 cell, (4,7) in
    // row-major order. Column-major order is A then B, so one corridor: row 0 from x 0 to 7,
    // then column 7 from y 0 to 4.
    let before = "..#######\n..#######\n#########\n######..#\n######..#\n.########\n";
    let after = "........#\n..#####.#\n#######.#\n######..#\n######..#\n#########\n";
    let script = || Scripted(vec![0, 0xC000_0000].into_iter());
    let mut fast = g(before);
    Measurer::new().apply_post(
        &mut fast,
        PostStep::Bridge,
        Connectivity::Four,
        &mut script(),
    );
    assert_eq!(fast.to_text(), after);
    let mut bytes = ByteGrid::from_grid(&g(before));
    oracle::apply_post(
        &mut bytes,
        PostStep::Bridge,
        Connectivity::Four,
        &mut script(),
    );
    assert_eq!(bytes.to_grid().to_text(), after);
}

// ---------------------------------------------------------------- batches measured in lanes

/// Put `grids` (one shape) into the lanes of `buf` as the generator's batch buffer holds them
/// (guards and padding zero), on `simd`'s lane width.
fn load_lanes(simd: crate::simd::Simd, buf: &mut crate::kernel::batch::LaneBuf, grids: &[Grid]) {
    crate::simd_run!(simd, <I> (
        buf: &'a mut crate::kernel::batch::LaneBuf = buf,
        grids: &'a [Grid] = grids,
    ) -> () {
        let (rows, cols) = (grids[0].rows(), grids[0].cols());
        let mut v = buf.view::<I::Lanes>(rows, cols);
        // Stale data everywhere first: the lanes must not depend on what the buffer held.
        v.raw_mut().fill(<I::Lanes as crate::simd::Lane>::ONES);
        v.clear_edges();
        for (k, g) in grids.iter().enumerate() {
            v.grid_to_lane(k, g);
        }
    });
}

fn lane_cols_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(1usize),
        Just(63),
        Just(64),
        Just(65),
        Just(127),
        Just(128),
        Just(129),
        Just(140),
        Just(192),
        Just(255),
        Just(256),
        1usize..257
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// Every SIMD path: a batch of random caves measured in its lanes (the lanes asked in a
    /// random order, each cave's metrics in a random order, some lanes never asked) gives the
    /// oracle's values, cave by cave. Grids range from 1x1 to 256 columns (the lane limit),
    /// from empty to full, with wall spawns (another component flooded first) and pockets.
    #[test]
    fn batches_in_lanes_match_oracle(rows in 1usize..40, cols in lane_cols_strategy(),
                            seed: u64, conn in conn_strategy(), pick: u64, with_exit: bool,
                            skip in 0usize..3) {
        prop_assert!(Measurer::batch_supported(cols));
        let mut r = Mix(pick);
        let spawn = (r.below(rows), r.below(cols));
        let exit = with_exit.then(|| (r.below(rows), r.below(cols)));
        let c = cfg(conn, spawn, exit);
        for simd in crate::simd::Simd::available() {
            let n = simd.lanes();
            let grids: Vec<Grid> = (0..n)
                .map(|k| {
                    let p = [0.0, 0.03, 0.2, 0.45, 0.6, 1.0][(r.next() % 6) as usize];
                    let mut b = ByteGrid::from_grid(&random_grid(rows, cols, p, seed ^ k as u64));
                    if r.next().is_multiple_of(2) && rows > 2 && cols > 2 {
                        // Smooth it like a cave: pockets, long runs, one big component.
                        let pass = smoothing_pass();
                        b.step(&pass);
                        b.step(&pass);
                    }
                    b.to_grid()
                })
                .collect();
            let mut buf = crate::kernel::batch::LaneBuf::default();
            load_lanes(simd, &mut buf, &grids);
            let mut m = Measurer::with_simd(simd);
            // A dense batch (a search's gathered survivors) takes min_width from the lanes.
            if r.next().is_multiple_of(2) {
                m.begin_batch(simd, rows, cols);
            } else {
                m.begin_dense_batch(simd, rows, cols);
            }
            let mut lanes: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                lanes.swap(i, r.below(i + 1));
            }
            for &k in lanes.iter().skip(skip.min(n - 1)) {
                let want = oracle::measure(&ByteGrid::from_grid(&grids[k]), &c);
                let mut order = Metric::ALL.to_vec();
                for i in (1..order.len()).rev() {
                    order.swap(i, r.below(i + 1));
                }
                let mut view = m.lazy_in(&grids[k], &c, &mut buf, k);
                for &metric in &order {
                    let (a, b) = (view.get(metric), want[metric.index()]);
                    prop_assert!(a == b || (a.is_nan() && b.is_nan()),
                        "{} lane {}/{}, {}: {} vs {} (order {:?})\n{}", simd, k, n, metric, a, b, order, grids[k]);
                }
            }
        }
    }
}

/// The lanes' flood on a hand-made batch: a WALL spawn (another component is flooded first),
/// a spawn cut off from the big component, runs crossing word boundaries in both directions,
/// and an empty cave, on every SIMD path.
#[test]
fn batch_hand_cases() {
    let wide = |row: &str| row.repeat(15);
    let caves = [
        // The spawn (1, 2) is WALL; two components.
        format!("{}\n{}\n{}\n", wide("...#."), wide("..#.#"), wide("....#")),
        // One snake across word boundaries.
        format!("{}\n{}\n{}\n", wide("....."), wide("####."), wide(".....")),
        // All wall.
        format!("{}\n{}\n{}\n", wide("#####"), wide("#####"), wide("#####")),
        // Pockets only.
        format!("{}\n{}\n{}\n", wide(".#.#."), wide("#.#.#"), wide(".#.#.")),
    ];
    let grids: Vec<Grid> = caves.iter().map(|t| g(t)).collect();
    for simd in crate::simd::Simd::available() {
        let n = simd.lanes();
        let batch: Vec<Grid> = (0..n).map(|k| grids[k % grids.len()].clone()).collect();
        let mut buf = crate::kernel::batch::LaneBuf::default();
        load_lanes(simd, &mut buf, &batch);
        for conn in [Connectivity::Four, Connectivity::Six, Connectivity::Eight] {
            let c = cfg(conn, (1, 2), Some((2, 70)));
            for dense in [false, true] {
                let mut m = Measurer::with_simd(simd);
                if dense {
                    m.begin_dense_batch(simd, 3, 75);
                } else {
                    m.begin_batch(simd, 3, 75);
                }
                for (k, grid) in batch.iter().enumerate() {
                    let want = oracle::measure(&ByteGrid::from_grid(grid), &c);
                    let mut got = EMPTY_VALUES;
                    let mut view = m.lazy_in(grid, &c, &mut buf, k);
                    view.ensure(MetricSet::ALL);
                    view.copy_into(MetricSet::ALL, &mut got);
                    assert!(
                        same(&got, &want),
                        "{simd} lane {k} {conn} dense {dense}:\n got  {}\n want {}\n{grid}",
                        show(&got),
                        show(&want)
                    );
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every SIMD path: `min_width` asked for first (before the spawn's component is measured:
    /// a search's order) gives the oracle's value, alone and in a batch's lanes (plain and
    /// dense), on smoothed caves and random grids; the other metrics after it too.
    #[test]
    fn min_width_first_matches_oracle(rows in 1usize..50, cols in lane_cols_strategy(),
                            seed: u64, conn in conn_strategy(), pick: u64,
                            p in prop_oneof![Just(0.0), 0.0f64..0.05, 0.0f64..0.6]) {
        let mut r = Mix(pick);
        let mut b = ByteGrid::from_grid(&random_grid(rows, cols, p, seed));
        if r.next().is_multiple_of(2) && rows > 2 && cols > 2 {
            let pass = smoothing_pass();
            b.step(&pass);
        }
        let grid = b.to_grid();
        let spawn = (r.below(rows), r.below(cols));
        let c = cfg(conn, spawn, Some((r.below(rows), r.below(cols))));
        let want = oracle::measure(&b, &c);
        for simd in crate::simd::Simd::available() {
            let mut m = Measurer::with_simd(simd);
            let mut view = m.lazy(&grid, &c);
            let got = view.get(Metric::MinWidth);
            prop_assert_eq!(got, want[Metric::MinWidth.index()], "{:?}\n{}", simd, grid);
            for metric in Metric::ALL {
                let (a, w) = (view.get(metric), want[metric.index()]);
                prop_assert!(a == w || (a.is_nan() && w.is_nan()), "{:?} {}: {} vs {}", simd, metric, a, w);
            }
            let grids = vec![grid.clone(); simd.lanes()];
            let mut buf = crate::kernel::batch::LaneBuf::default();
            load_lanes(simd, &mut buf, &grids);
            for dense in [false, true] {
                if dense {
                    m.begin_dense_batch(simd, rows, cols);
                } else {
                    m.begin_batch(simd, rows, cols);
                }
                let k = r.below(simd.lanes());
                let got = m.lazy_in(&grids[k], &c, &mut buf, k).get(Metric::MinWidth);
                prop_assert_eq!(got, want[Metric::MinWidth.index()], "{:?} dense {}", simd, dense);
            }
        }
    }
}

/// The chapter's strict sync pass, used to smooth random grids into cave-like ones.
fn smoothing_pass() -> crate::rule::Pass {
    crate::rule::Pass::sync(
        crate::rule::Rule::chapter_strict(),
        crate::rule::Outside::Floor,
        crate::rule::Border::Solid,
    )
}

/// The definition of `min_width`, searched square by square (what the oracle was until its
/// runtime on open grids mattered): every covered cell looks at every k x k square holding it.
fn min_width_by_search(g: &ByteGrid, in_comp: &[bool]) -> u32 {
    let square = |y: usize, x: usize, k: usize| {
        y + k <= g.rows
            && x + k <= g.cols
            && (y..y + k).all(|yy| (x..x + k).all(|xx| g.get(yy, xx) == 0))
    };
    let covered = |k: usize| {
        (0..g.rows).all(|y| {
            (0..g.cols).all(|x| {
                !in_comp[y * g.cols + x]
                    || (0..k)
                        .any(|dy| (0..k).any(|dx| y >= dy && x >= dx && square(y - dy, x - dx, k)))
            })
        })
    };
    let mut k = 1;
    while covered(k + 1) {
        k += 1;
    }
    k as u32
}

#[test]
fn min_width_oracle_is_the_search_of_every_square() {
    let mut r = Mix(0x2545_f491_4f6c_dd1d);
    let mut widths = std::collections::BTreeSet::new();
    for case in 0..400u64 {
        let (rows, cols) = (1 + r.below(24), 1 + r.below(24));
        let mut g = ByteGrid::new(rows, cols);
        fill_cells(&mut g, r.below(40) as f64 / 100.0, case);
        // The component of the first floor cell (4-connected), as `measure` asks.
        let Some(first) = g.cells.iter().position(|&c| c == 0) else {
            continue;
        };
        let (labels, _) = oracle::components(&g, Connectivity::Four);
        let in_comp: Vec<bool> = labels.iter().map(|&l| l == labels[first]).collect();
        let want = min_width_by_search(&g, &in_comp);
        assert_eq!(
            oracle::min_width(&g, &in_comp),
            want,
            "case {case}: {rows}x{cols}"
        );
        widths.insert(want);
    }
    // The cases reach wide components, not only width 1.
    assert!(widths.len() >= 5, "{widths:?}");
}
