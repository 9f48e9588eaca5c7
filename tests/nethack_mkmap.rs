//! nethack-mines against a direct transcription of NetHack's `mkmap.c` loops (3.6/3.7) on a
//! byte map `levl[x][y]` of 80 x 21, for many seeds: an oracle written independently of our
//! kernels, of the rule language and of the 19x77 active-area framing.
//!
//! ```c
//! static void pass_one(schar bg_typ, schar fg_typ) {
//!     for (x = 2; x <= WIDTH; x++)
//!         for (y = 1; y < HEIGHT; y++) {
//!             for (count = 0, dr = 0; dr < 8; dr++)
//!                 if (get_map(x + dirs[dr][0], y + dirs[dr][1], bg_typ) == fg_typ) count++;
//!             switch (count) {
//!             case 0: case 1: case 2: levl[x][y].typ = bg_typ; break;
//!             case 5: case 6: case 7: case 8: levl[x][y].typ = fg_typ; break;
//!             default: break;
//!             }
//!         }
//! }
//! pass_two: new[x][y] = (count == 5) ? bg_typ : levl[x][y]; then copied back (buffered)
//! pass_three: new[x][y] = (count < 3) ? bg_typ : levl[x][y]; then copied back (buffered)
//! ```
//!
//! With the filled area x in 2..=78, y in 1..=19 (docs/variants.md: WIDTH = 78, HEIGHT = 20, x from
//! 2, y from 1) and `get_map` returning `bg_typ` (rock) off the map; cells of the 80 x 21 map
//! outside that area are rock and are never written.

use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::measure::MetricSet;
use cavesweep::presets::preset;
use cavesweep::recipe::Recipe;

const COLNO: usize = 80;
const ROWNO: usize = 21;
const WIDTH: i32 = 78;
const HEIGHT: i32 = 20;
const STONE: u8 = 0; // bg_typ
const ROOM: u8 = 1; // fg_typ

type Levl = [[u8; ROWNO]; COLNO];

const DIRS: [(i32, i32); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

fn get_map(levl: &Levl, col: i32, row: i32, bg: u8) -> u8 {
    if col <= 0 || row < 0 || col > WIDTH || row >= HEIGHT {
        return bg;
    }
    levl[col as usize][row as usize]
}

fn count(levl: &Levl, x: i32, y: i32) -> u32 {
    DIRS.iter()
        .filter(|(dx, dy)| get_map(levl, x + dx, y + dy, STONE) == ROOM)
        .count() as u32
}

fn pass_one(levl: &mut Levl) {
    for x in 2..=WIDTH {
        for y in 1..HEIGHT {
            match count(levl, x, y) {
                0..=2 => levl[x as usize][y as usize] = STONE,
                5..=8 => levl[x as usize][y as usize] = ROOM,
                _ => {}
            }
        }
    }
}

fn pass_buffered(levl: &mut Levl, to_rock: impl Fn(u32) -> bool) {
    let mut new = *levl;
    for x in 2..=WIDTH {
        for y in 1..HEIGHT {
            if to_rock(count(levl, x, y)) {
                new[x as usize][y as usize] = STONE;
            }
        }
    }
    *levl = new;
}

/// Our 19x77 grid (WALL = 1) into NetHack's map (ROOM = 1 where FLOOR).
fn to_levl(g: &Grid) -> Levl {
    assert_eq!((g.rows(), g.cols()), (19, 77));
    let mut l = [[STONE; ROWNO]; COLNO];
    for y in 0..19 {
        for x in 0..77 {
            if !g.get(y, x) {
                l[x + 2][y + 1] = ROOM;
            }
        }
    }
    l
}

// Indexing `levl[x][y]` by coordinates, as mkmap.c does, is the point of the transcription.
#[allow(clippy::needless_range_loop)]
fn from_levl(l: &Levl) -> String {
    let mut s = String::new();
    for y in 1..=19 {
        for x in 2..=78 {
            s.push(if l[x][y] == ROOM { '.' } else { '#' });
        }
        s.push('\n');
    }
    s
}

#[test]
fn nethack_passes_match_mkmap_transcription() {
    let recipe = preset("nethack-mines").unwrap();
    let fill_only = Recipe {
        passes: vec![],
        post: vec![],
        ..recipe.clone()
    };
    let mut filler = Generator::new(&fill_only, MetricSet::EMPTY).unwrap();
    let mut stepper = Stepper::new();
    let mut differ_from_sync = 0;
    for seed in 0..300 {
        let mut g = filler.run(seed).unwrap().grid.clone();
        assert_eq!(g.count_walls(), 1463 - 624, "exact floor count");
        let mut levl = to_levl(&g);

        // Pass 1 alone (in place, column-major).
        stepper.run_pass(&mut g, &recipe.passes[0]);
        pass_one(&mut levl);
        assert_eq!(g.to_text(), from_levl(&levl), "seed {seed}: pass 1");

        // A synchronous pass 1 would differ (the in-place order matters).
        let mut sync = filler.run(seed).unwrap().grid.clone();
        stepper.run_pass(
            &mut sync,
            &cavesweep::rule::Pass {
                update: cavesweep::rule::Update::Sync,
                ..recipe.passes[0]
            },
        );
        differ_from_sync += (sync != g) as u32;

        // Passes 2 and 3 (3 twice).
        stepper.run_pass(&mut g, &recipe.passes[1]);
        pass_buffered(&mut levl, |c| c == 5);
        assert_eq!(g.to_text(), from_levl(&levl), "seed {seed}: pass 2");
        stepper.run_pass(&mut g, &recipe.passes[2]);
        pass_buffered(&mut levl, |c| c < 3);
        pass_buffered(&mut levl, |c| c < 3);
        assert_eq!(g.to_text(), from_levl(&levl), "seed {seed}: pass 3");
    }
    assert!(
        differ_from_sync > 250,
        "in-place pass 1 should usually differ from a sync one"
    );
}
