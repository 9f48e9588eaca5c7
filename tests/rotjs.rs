//! Moore and von Neumann rules against rot.js, the JavaScript roguelike toolkit whose
//! `Map.Cellular` many cave tutorials use: the same start grids stepped by rot.js (node, with
//! the `rot-js` package `.ci/run` installs into `target/rotjs`) and by cavesweep's kernels give
//! the same grids. rot.js counts only neighbours inside the map, cavesweep's `outside = floor`;
//! its topology 8 is the Moore neighbourhood, 4 the von Neumann one. (Its hexagonal topology
//! uses doubled columns, another embedding than Golly's: hex is checked against Golly only.)

use std::path::{Path, PathBuf};
use std::process::Command;

use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::rule::{Border, Outside, Pass, Rule};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `target/rotjs/node_modules`, where `.ci/run` installs tests/rotjs/package.json.
fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("rotjs/node_modules")
}

#[test]
fn moore_and_von_neumann_step_as_rotjs_does() {
    let modules = node_modules();
    let have = modules.join("rot-js").is_dir()
        && Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("CAVESWEEP_SKIP_ROTJS").is_some(),
            "node and rot-js in {} are needed (.ci/run installs them: npm ci in target/rotjs); \
             set CAVESWEEP_SKIP_ROTJS=1 to skip this test",
            modules.display()
        );
        eprintln!("SKIPPED: rot-js is not installed");
        return;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(720_261_206);
    let mut cases = Vec::new();
    let mut json = String::from("[");
    for k in 0..200 {
        let topology = if k % 2 == 0 { 8 } else { 4 };
        let n = if topology == 8 { 8 } else { 4 };
        let mut counts =
            |p: u32| -> Vec<u32> { (0..=n).filter(|_| rng.next_u32() % 100 < p).collect() };
        let (born, survive) = (counts(40), counts(45));
        let rows = 1 + (rng.next_u32() % 60) as usize;
        let cols = 1 + (rng.next_u32() % 150) as usize;
        let density = rng.next_u32() % 101;
        let steps = 1 + rng.next_u32() % 12;
        let mut g = Grid::new(rows, cols).unwrap();
        let mut cells = String::with_capacity(rows * cols);
        for y in 0..rows {
            for x in 0..cols {
                let wall = rng.next_u32() % 100 < density;
                g.set(y, x, wall);
                cells.push(if wall { '1' } else { '0' });
            }
        }
        let list = |v: &[u32]| {
            v.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        if k > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "{{\"rows\":{rows},\"cols\":{cols},\"cells\":\"{cells}\",\"born\":[{}],\"survive\":[{}],\"topology\":{topology},\"steps\":{steps}}}",
            list(&born),
            list(&survive)
        ));
        let digits = |v: &[u32]| v.iter().map(|c| c.to_string()).collect::<String>();
        let suffix = if topology == 4 { "V" } else { "" };
        let rule: Rule = format!("B{}/S{}{suffix}", digits(&born), digits(&survive))
            .parse()
            .unwrap();
        cases.push((g, rule, steps));
    }
    json.push(']');
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rotjs");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("cases.json");
    std::fs::write(&input, json).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rotjs/step.cjs");
    let o = Command::new("node")
        .arg(&script)
        .arg(&input)
        .env("NODE_PATH", &modules)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "node: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs: Vec<String> = serde_json::from_slice(&o.stdout).expect("rot.js's results as JSON");
    assert_eq!(theirs.len(), cases.len());
    let mut stepper = Stepper::new();
    for (k, ((start, rule, steps), want)) in cases.iter().zip(&theirs).enumerate() {
        let mut g = start.clone();
        let pass = Pass {
            repeat: *steps,
            ..Pass::sync(*rule, Outside::Floor, Border::None)
        };
        stepper.run_pass(&mut g, &pass);
        let ours: String = g.to_bytes().iter().map(|&b| char::from(b'0' + b)).collect();
        assert_eq!(
            &ours,
            want,
            "case {k}: {rule} {}x{} {steps} steps",
            g.rows(),
            g.cols()
        );
    }
    eprintln!("rot.js cases: {} (100 Moore, 100 von Neumann)", cases.len());
}
