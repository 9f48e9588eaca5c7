//! Every rule family against Golly itself: `bgolly` (Debian's `golly`, installed by `.ci/run`)
//! steps the same start grid as cavesweep's kernels, for random Moore, von Neumann (`V`),
//! hexagonal (`H`) and Larger than Life rules, random shapes (1 to 3 rows or columns among
//! them), up to 30 steps and random fills, on Golly's bounded plane (`:Pcols,rows`, cells
//! beyond the edge dead: cavesweep's `outside = floor`) and its torus (`:Tcols,rows`:
//! `outside = wrap`). Golly writes the live cells' bounding box, so the two results are
//! compared cropped to their live cells.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::rule::{Border, Outside, Pass, Rule};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn bgolly() -> Option<&'static str> {
    let ok = Command::new("bgolly")
        .arg("--help")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("bgolly"));
    if ok {
        return Some("bgolly");
    }
    assert!(
        std::env::var_os("CAVESWEEP_SKIP_GOLLY").is_some(),
        "bgolly (Debian package `golly`) is not installed: .ci/run installs it; set \
         CAVESWEEP_SKIP_GOLLY=1 to skip this test"
    );
    eprintln!("SKIPPED: bgolly is not installed");
    None
}

/// The grid as RLE (WALL = alive), placed so Golly's bounded grid of the same size holds it.
fn to_rle(g: &Grid, rule: &str) -> String {
    let (rows, cols) = (g.rows(), g.cols());
    let mut s = format!(
        "#CXRLE Pos={},{}\nx = {cols}, y = {rows}, rule = {rule}\n",
        -((cols / 2) as i64),
        -((rows / 2) as i64)
    );
    let mut line = String::new();
    for y in 0..rows {
        let mut x = 0;
        while x < cols {
            let v = g.get(y, x);
            let mut n = 1;
            while x + n < cols && g.get(y, x + n) == v {
                n += 1;
            }
            if n > 1 {
                let _ = write!(line, "{n}");
            }
            line.push(if v { 'o' } else { 'b' });
            x += n;
        }
        line.push(if y + 1 == rows { '!' } else { '$' });
        if line.len() > 60 {
            s.push_str(&line);
            s.push('\n');
            line.clear();
        }
    }
    s.push_str(&line);
    s.push('\n');
    s
}

/// Golly's RLE output as rows of cells (its live bounding box), `#` alive.
fn from_rle(text: &str) -> Vec<String> {
    let mut w = 0;
    let mut body = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with('x') {
            w = line
                .split(',')
                .next()
                .and_then(|p| p.split('=').nth(1))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .expect("an RLE header");
            continue;
        }
        body.push_str(line);
    }
    let mut rows = vec![String::new()];
    let mut n = String::new();
    for c in body.chars() {
        match c {
            '0'..='9' => n.push(c),
            'b' | 'o' | '.' | 'A' => {
                let k = n.parse::<usize>().unwrap_or(1);
                let ch = if c == 'b' || c == '.' { '.' } else { '#' };
                rows.last_mut().unwrap().extend(std::iter::repeat_n(ch, k));
                n.clear();
            }
            '$' => {
                let k = n.parse::<usize>().unwrap_or(1);
                for _ in 0..k {
                    rows.push(String::new());
                }
                n.clear();
            }
            '!' => break,
            other => panic!("unexpected {other:?} in Golly's RLE"),
        }
    }
    for r in &mut rows {
        while r.len() < w {
            r.push('.');
        }
    }
    crop(&rows)
}

/// Rows cropped to the bounding box of their `#` cells (empty when there are none).
fn crop(rows: &[String]) -> Vec<String> {
    let live: Vec<(usize, usize)> = rows
        .iter()
        .enumerate()
        .flat_map(|(y, r)| {
            r.char_indices()
                .filter(|c| c.1 == '#')
                .map(move |(x, _)| (y, x))
        })
        .collect();
    if live.is_empty() {
        return Vec::new();
    }
    let (y0, y1) = (
        live.iter().map(|c| c.0).min().unwrap(),
        live.iter().map(|c| c.0).max().unwrap(),
    );
    let (x0, x1) = (
        live.iter().map(|c| c.1).min().unwrap(),
        live.iter().map(|c| c.1).max().unwrap(),
    );
    rows[y0..=y1]
        .iter()
        .map(|r| r[x0..=x1].to_string())
        .collect()
}

fn random_rule(rng: &mut Xoshiro256PlusPlus, family: &str) -> String {
    let mut digits = |max: u32, p: u32| -> String {
        (0..=max)
            .filter(|_| rng.next_u32() % 100 < p)
            .map(|d| char::from(b'0' + d as u8))
            .collect()
    };
    match family {
        // Golly's B0 rules on a bounded grid are emulated with alternating rules; leave 0 out
        // of birth so both programs mean the same thing.
        "moore" => format!("B{}/S{}", digits(8, 40).replace('0', ""), digits(8, 40)),
        "vonneumann" => format!("B{}/S{}V", digits(4, 45).replace('0', ""), digits(4, 45)),
        "hex" => format!("B{}/S{}H", digits(6, 40).replace('0', ""), digits(6, 40)),
        _ => {
            let r = 1 + rng.next_u32() % 5;
            let middle = rng.next_u32() % 2;
            let diamond = rng.next_u32() % 2 == 1;
            let max = if diamond {
                2 * r * (r + 1) + 1
            } else {
                (2 * r + 1) * (2 * r + 1)
            } - (1 - middle);
            let mut range = |lo_min: u32| {
                let a = lo_min + rng.next_u32() % (max + 1 - lo_min);
                let b = lo_min + rng.next_u32() % (max + 1 - lo_min);
                (a.min(b), a.max(b))
            };
            let s = range(0);
            // Birth at 0 would fill the plane: Golly's LtL refuses B0 like its other algorithms.
            let b = range(1);
            format!(
                "R{r},C0,M{middle},S{}..{},B{}..{},{}",
                s.0,
                s.1,
                b.0,
                b.1,
                if diamond { "NN" } else { "NM" }
            )
        }
    }
}

#[test]
fn every_rule_family_steps_as_golly_does() {
    let Some(bg) = bgolly() else { return };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golly");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20261206);
    let mut cases = std::collections::BTreeMap::<String, usize>::new();
    for family in ["moore", "vonneumann", "hex", "ltl"] {
        for torus in [false, true] {
            for case in 0..40 {
                let rule_text = random_rule(&mut rng, family);
                let rule: Rule = rule_text.parse().unwrap();
                // Shapes: a third of them 1 to 3 rows or columns.
                let side = |rng: &mut Xoshiro256PlusPlus| match rng.next_u32() % 3 {
                    0 => 1 + (rng.next_u32() % 3) as usize,
                    _ => 4 + (rng.next_u32() % 120) as usize,
                };
                let (rows, cols) = (side(&mut rng), side(&mut rng));
                // Larger than Life: Golly's bounded grids hold at least the neighbourhood (on a
                // P3,99 plane with radius 2 it writes a pattern 4 cells wide); smaller grids
                // are checked against the oracle only (the kernel tests).
                let (rows, cols) = match &rule {
                    Rule::Ltl(l) => {
                        let d = 2 * l.radius as usize + 1;
                        (rows.max(d), cols.max(d))
                    }
                    _ => (rows, cols),
                };
                let density = rng.next_u32() % 101;
                let mut g = Grid::new(rows, cols).unwrap();
                for y in 0..rows {
                    for x in 0..cols {
                        g.set(y, x, rng.next_u32() % 100 < density);
                    }
                }
                let steps = 1 + rng.next_u32() % 30;
                let bounded = if torus { 'T' } else { 'P' };
                let full_rule = format!("{rule_text}:{bounded}{cols},{rows}");
                let input = dir.join(format!("{family}-{torus}-{case}.rle"));
                let output = dir.join(format!("{family}-{torus}-{case}.out.rle"));
                std::fs::write(&input, to_rle(&g, &full_rule)).unwrap();
                let mut cmd = Command::new(bg);
                if family == "ltl" {
                    cmd.args(["-a", "Larger than Life"]);
                }
                let o = cmd
                    .args(["-q", "-q", "-m", &steps.to_string(), "-r", &full_rule, "-o"])
                    .arg(&output)
                    .arg(&input)
                    .output()
                    .unwrap();
                assert!(
                    o.status.success() && output.is_file(),
                    "bgolly failed on {full_rule}: {}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
                let golly = from_rle(&std::fs::read_to_string(&output).unwrap());
                let outside = if torus { Outside::Wrap } else { Outside::Floor };
                let pass = Pass {
                    repeat: steps,
                    ..Pass::sync(rule, outside, Border::None)
                };
                let mut ours = g.clone();
                Stepper::new().run_pass(&mut ours, &pass);
                let ours_rows: Vec<String> = ours.to_text().lines().map(str::to_string).collect();
                assert_eq!(
                    crop(&ours_rows),
                    golly,
                    "{full_rule} {rows}x{cols} {steps} steps from {}",
                    input.display()
                );
                *cases.entry(format!("{family} {bounded}")).or_default() += 1;
            }
        }
    }
    eprintln!("golly cases: {cases:?}");
    assert_eq!(cases.values().sum::<usize>(), 4 * 2 * 40);
}
