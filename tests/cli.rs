//! End-to-end tests through the real `cavesweep` binary: output shapes, error handling (one
//! line, non-zero exit, never a panic), determinism across threads, shards + merge, resume after
//! a kill, and the statistics checked against a direct computation from `seeds.csv`.

mod common;

use common::{assert_same_outputs as assert_same_dirs, bin, run, stderr, stdout};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh scratch folder under the target dir, named for this test binary.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("cli-{name}"))
}

/// Bad input: exit code 1 (or clap's 2), exactly one line on stderr, no panic.
fn assert_clean_error(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} should fail");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{args:?}: {err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err:?}"
    );
    if o.status.code() == Some(1) {
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
    }
}

#[test]
fn run_json_has_every_metric_and_trajectory() {
    let o = run(&["run", "--preset", "chapter-strict", "--seed", "7", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["seed"], 7);
    assert_eq!(v["wall_trajectory"].as_array().unwrap().len(), 5);
    for m in [
        "wall_fraction",
        "floor_fraction",
        "components",
        "largest_fraction",
        "connected_fraction",
        "boundary",
        "path_length",
        "reach_depth",
        "min_width",
    ] {
        assert!(v.get(m).is_some(), "missing {m}");
    }
    // Final trajectory entry is the measured wall fraction.
    let traj = v["wall_trajectory"].as_array().unwrap();
    assert_eq!(traj[4].as_f64(), v["wall_fraction"].as_f64());
}

#[test]
fn every_preset_runs_and_prints_as_a_recipe_that_runs_the_same() {
    let d = scratch("presets");
    for name in [
        "chapter-strict",
        "classic-4-5",
        "nethack-mines",
        "roguebasin",
    ] {
        let o = run(&["presets", name]);
        assert!(o.status.success());
        let file = d.join(format!("{name}.toml"));
        fs::write(&file, o.stdout).unwrap();
        let a = run(&["run", "--preset", name, "--seed", "3", "--json", "--ascii"]);
        let b = run(&[
            "run",
            "--recipe",
            file.to_str().unwrap(),
            "--seed",
            "3",
            "--json",
            "--ascii",
        ]);
        assert!(a.status.success() && b.status.success(), "{}", stderr(&b));
        assert_eq!(stdout(&a), stdout(&b), "{name}");
    }
    let png = d.join("cave.png");
    let o = run(&[
        "run",
        "--preset",
        "nethack-mines",
        "--png",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(&fs::read(&png).unwrap()[1..4], b"PNG");
}

#[test]
fn bad_input_gives_one_line_errors() {
    assert_clean_error(&["run", "--preset", "nope"], "unknown preset");
    assert_clean_error(&["run", "--set", "rule=B9/S5"], "rule");
    assert_clean_error(&["run", "--set", "fill=1.5"], "fill");
    assert_clean_error(&["run", "--set", "fill=-0.1"], "fill");
    assert_clean_error(&["run", "--set", "rows=0"], "empty");
    assert_clean_error(&["run", "--set", "cols=70000"], "too large");
    assert_clean_error(
        &["run", "--set", "rows=50000", "--set", "cols=50000"],
        "too large",
    );
    assert_clean_error(&["run", "--set", "colour=red"], "unknown recipe key");
    assert_clean_error(&["run", "--set", "steps"], "KEY=VALUE");
    assert_clean_error(&["run", "--set", "spawn=500,1"], "spawn");
    assert_clean_error(&["run", "--set", "outside=torus"], "outside");
    // Every --set key rejects a bad value, naming the key.
    for (kv, key) in [
        ("rows=abc", "rows:"),
        ("cols=-3", "cols:"),
        ("fill=nan", "fill:"),
        ("floor=99999", "fill:"),
        ("steps=-1", "steps:"),
        ("steps=200000", "pass 1:"),
        ("rule=B5678S5678", "rule:"),
        ("rule=", "rule:"),
        ("border=thick", "border:"),
        ("update=inplace", "update:"),
        ("rng=pcg", "rng:"),
        ("spawn=1", "spawn:"),
        ("exit=3,x", "exit:"),
        ("exit=900,900", "exit:"),
        ("connectivity=5", "connectivity:"),
        ("rule=B456/S3456H", "set connectivity=6"),
        ("rule=R2,C3,M1,S1..2,B1..2,NM", "C3 has 3 states"),
        ("rule=B5/S2V", "over the 4 neighbours"),
        ("post=smooth", "post:"),
        ("post=remove-small x", "post:"),
    ] {
        assert_clean_error(&["run", "--set", kv], key);
    }
    assert_clean_error(
        &["run", "--set", "rng=numpy", "--preset", "nethack-mines"],
        "rng:",
    );
    // Paths under a regular file can never exist (an absolute /nonexistent/... could be made by
    // another program running as root on the same machine).
    let blocker = scratch("blocker").join("file");
    fs::write(&blocker, "not a folder").unwrap();
    let under = |name: &str| blocker.join(name).to_str().unwrap().to_owned();
    assert_clean_error(&["run", "--recipe", &under("r.toml")], "cannot read recipe");
    assert_clean_error(&["run", "--png", &under("x.png")], "cannot write");
    assert_clean_error(&["run", "--metrics", "speed"], "unknown metric");
    assert_clean_error(&["presets", "nope"], "unknown preset");
    assert_clean_error(&["reproduce", "book"], "unknown experiment");
    let d = scratch("bad-recipe");
    let f = d.join("r.toml");
    let good = stdout(&run(&["presets", "chapter-strict"]));
    for (text, needle) in [
        ("name = \"x\"\nrows = 10\n".to_string(), "missing field"),
        (good.replace("rows = 90", "rows = 0"), "empty"),
        (good.replace("p = 0.45", "p = 2.0"), "fill:"),
        (good.replace("B5678/S5678", "B5678/Q5678"), "pass 1:"),
        (
            good.replace("outside = \"floor\"", "outside = \"lava\""),
            "pass 1:",
        ),
        (
            good.replace("kind = \"bernoulli\"", "kind = \"perlin\""),
            "recipe",
        ),
        (format!("{good}\n[extra]\nx = 1\n"), "unknown field"),
        ("this is not toml".to_string(), "recipe"),
    ] {
        fs::write(&f, text).unwrap();
        assert_clean_error(&["run", "--recipe", f.to_str().unwrap()], needle);
    }
    let out = d.join("o");
    let out = out.to_str().unwrap();
    assert_clean_error(&["sweep", "--seeds", "5..5", "--out", out], "--seeds");
    assert_clean_error(
        &[
            "sweep",
            "--seeds",
            "0..10",
            "--out",
            out,
            "--gate",
            "floor>0.5",
        ],
        "unknown metric",
    );
    assert_clean_error(
        &[
            "sweep",
            "--seeds",
            "0..10",
            "--out",
            out,
            "--gate",
            "components<<3",
        ],
        // The query language names the offending character's column.
        "--gate: query \"components<<3\", column 12",
    );
    assert_clean_error(
        &[
            "sweep",
            "--seeds",
            "0..10",
            "--out",
            out,
            "--vary",
            "fill=0.4,1.4",
        ],
        "fill",
    );
    assert_clean_error(
        &["sweep", "--seeds", "0..10", "--out", out, "--shard", "3/2"],
        "shard",
    );
    assert_clean_error(
        &["sweep", "--seeds", "0..10", "--out", "/proc/nope/out"],
        "cannot create output folder",
    );
}

/// The sweep most tests run: two grid points, a two-clause gate, every seed in seeds.csv.
const SWEEP_FLAGS: [&str; 10] = [
    "--preset",
    "chapter-strict",
    "--seeds",
    "0..3000",
    "--vary",
    "fill=0.40,0.45",
    "--gate",
    "connected_fraction>=0.999 && components<=1",
    "--per-seed",
    "all",
];

fn sweep(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep"];
    args.extend_from_slice(&SWEEP_FLAGS);
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn sweep_output_is_identical_across_threads_and_shards() {
    let d = scratch("determinism");
    let (one, two) = (d.join("t1"), d.join("t2"));
    let o = sweep(&one, &["--threads", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(sweep(&two, &["--threads", "2"]).status.success());
    assert_same_dirs(&one, &two);
    for f in [
        "summary.csv",
        "trajectory.csv",
        "seeds.csv",
        "components.csv",
        "manifest.json",
    ] {
        assert!(one.join(f).exists(), "{f}");
    }
    // Three shards, merged, give the same files.
    let shards: Vec<PathBuf> = (1..=3).map(|k| d.join(format!("s{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        let o = sweep(s, &["--shard", &format!("{}/3", k + 1)]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let merged = d.join("merged");
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().map(|s| s.display().to_string()));
    args.extend(["--out".into(), merged.display().to_string()]);
    let o = bin().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_dirs(&one, &merged);
    // Missing a shard is refused.
    let o = bin()
        .args([
            "merge",
            &shards[0].display().to_string(),
            "--out",
            &d.join("m2").display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sweep_refuses_a_different_sweep_and_reports_corrupt_state() {
    let d = scratch("refuse");
    let out = d.join("o");
    assert!(sweep(&out, &[]).status.success());
    let before = fs::read(out.join("summary.csv")).unwrap();
    let o = run(&["sweep", "--seeds", "0..50", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("different sweep"), "{}", stderr(&o));
    // It names what differs.
    assert!(
        stderr(&o).contains("differs in chunk, gate, per_seed, seeds, vary;"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        fs::read(out.join("summary.csv")).unwrap(),
        before,
        "nothing overwritten"
    );
    // Same command again: already complete, same bytes.
    assert!(sweep(&out, &[]).status.success());
    assert_eq!(fs::read(out.join("summary.csv")).unwrap(), before);
    // --force replaces it.
    let o = run(&[
        "sweep",
        "--seeds",
        "0..50",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Corrupt store: a clear one-line error.
    fs::write(
        out.join("cavesweep.sqlite"),
        b"{not a database, not at all; just some text that is long enough to look like a header}",
    )
    .unwrap();
    let o = run(&["sweep", "--seeds", "0..50", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("damaged"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);
    // A folder with someone else's files is not written into.
    let other = d.join("other");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("notes.txt"), b"mine").unwrap();
    let o = run(&[
        "sweep",
        "--seeds",
        "0..50",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && stderr(&o).contains("not empty"));
    let left: Vec<_> = fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["notes.txt"], "refused: no lock file left behind");
}

#[test]
fn sweep_resumes_after_a_kill_with_identical_files() {
    let d = scratch("resume");
    let args = |out: &Path| {
        vec![
            "sweep".to_string(),
            "--preset".into(),
            "classic-4-5".into(),
            "--seeds".into(),
            "0..600000".into(),
            "--vary".into(),
            "steps=3..5".into(),
            "--metrics".into(),
            "wall_fraction".into(),
            "--per-seed".into(),
            "kept".into(),
            "--gate".into(),
            "wall_fraction<=0.36".into(),
            "--threads".into(),
            "2".into(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let reference = d.join("ref");
    let o = bin().args(args(&reference)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("killed");
    // SIGKILL right after the first checkpoint, then again after the resumed run's second one
    // (failpoints: the kill lands at exactly that moment, whatever the machine's speed).
    for fp in ["checkpoint@1", "checkpoint@2"] {
        let o = bin()
            .args(args(&out))
            .env("CAVESWEEP_FAILPOINT", fp)
            .output()
            .unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&o.status),
            Some(9),
            "{fp}: {}",
            stderr(&o)
        );
    }
    assert!(
        out.join("cavesweep.sqlite").exists(),
        "a checkpoint was written before the kill"
    );
    let o = bin().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resumed"), "{}", stderr(&o));
    assert_same_dirs(&reference, &out);
}

#[test]
fn sigterm_checkpoints_and_exits_130() {
    let d = scratch("sigterm");
    let out = d.join("o");
    let child = bin()
        .args([
            "sweep",
            "--seeds",
            "0..5000000",
            "--per-seed",
            "none",
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first checkpoint (its manifest), a condition rather than a guess at timing.
    let start = Instant::now();
    while !out.join("manifest.json").exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("rerun the same command to resume"));
    let done: u64 = serde_json::from_str::<serde_json::Value>(
        &fs::read_to_string(out.join("manifest.json")).unwrap(),
    )
    .unwrap()["progress"]["seeds_done"]
        .as_u64()
        .unwrap();
    assert!(done > 0 && done < 5_000_000, "{done}");
}

/// Parse a CSV into header + rows of strings.
fn csv_rows(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = fs::read_to_string(p).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap().split(',').map(String::from).collect();
    (
        head,
        lines
            .map(|l| l.split(',').map(String::from).collect())
            .collect(),
    )
}

#[test]
fn summary_statistics_match_seeds_csv() {
    let d = scratch("stats");
    let out = d.join("o");
    let o = sweep(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (sh, srows) = csv_rows(&out.join("seeds.csv"));
    let (h, rows) = csv_rows(&out.join("summary.csv"));
    let col = |hdr: &[String], name: &str| hdr.iter().position(|c| c == name).unwrap();
    for row in &rows {
        let fill = &row[col(&h, "fill")];
        let mine: Vec<&Vec<String>> = srows
            .iter()
            .filter(|r| &r[col(&sh, "fill")] == fill)
            .collect();
        assert_eq!(mine.len().to_string(), row[col(&h, "seeds")]);
        let passed = mine.iter().filter(|r| r[col(&sh, "passed")] == "1").count();
        assert_eq!(passed.to_string(), row[col(&h, "passed")]);
        for metric in [
            "floor_fraction",
            "components",
            "boundary",
            "connected_fraction",
        ] {
            let v: Vec<f64> = mine
                .iter()
                .map(|r| r[col(&sh, metric)].parse().unwrap())
                .collect();
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let get = |s: &str| {
                row[col(&h, &format!("{metric}_{s}"))]
                    .parse::<f64>()
                    .unwrap()
            };
            assert!(
                (get("mean") - mean).abs() <= 1e-9 * mean.abs().max(1.0),
                "{metric} mean"
            );
            assert!(
                (get("sd") - sd).abs() <= 1e-6 * sd.max(1e-3),
                "{metric} sd {} {}",
                get("sd"),
                sd
            );
            assert_eq!(get("min"), min, "{metric} min");
            assert_eq!(get("max"), max, "{metric} max");
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let p50 = get("p50");
            let rank = sorted
                .iter()
                .filter(|&&x| x <= p50 * (1.0 + 1e-3) + 1e-6)
                .count() as f64
                / n;
            assert!(rank >= 0.5, "{metric} p50 {p50} rank {rank}");
            let rank_below = sorted
                .iter()
                .filter(|&&x| x < p50 * (1.0 - 1e-3) - 1e-6)
                .count() as f64
                / n;
            assert!(
                rank_below <= 0.5,
                "{metric} p50 {p50} rank below {rank_below}"
            );
        }
    }
}

#[test]
fn memory_stays_flat_on_a_long_sweep() {
    let d = scratch("memory");
    let out = d.join("o");
    let start = Instant::now();
    let mut child = bin()
        .args([
            "sweep",
            "--seeds",
            "0..1500000",
            "--per-seed",
            "none",
            "--metrics",
            "floor_fraction,components",
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(s) = fs::read_to_string(&status) {
            for l in s.lines().filter(|l| l.starts_with("VmHWM:")) {
                let kb: u64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
                peak_kb = peak_kb.max(kb);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        assert!(start.elapsed() < Duration::from_secs(300));
    }
    assert!(peak_kb > 0, "could not read the child's memory");
    assert!(peak_kb < 100 * 1024, "peak RSS {peak_kb} kB");
}

/// `scripts/parallel_sweep.sh` (GNU parallel shards + merge) gives the single-run files. In CI
/// (`CI` set) GNU parallel must be installed (.ci/run installs it); elsewhere the test says it
/// skipped when parallel is missing.
#[test]
fn gnu_parallel_script_matches_a_single_run() {
    let has_parallel = Command::new("parallel")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_parallel {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install GNU parallel (.ci/run does)"
        );
        eprintln!("SKIPPED: GNU parallel is not installed");
        return;
    }
    let d = scratch("parallel");
    let single = d.join("single");
    let o = sweep(&single, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/parallel_sweep.sh");
    let out = d.join("par");
    let o = Command::new("bash")
        .arg(&script)
        .args(["3", out.to_str().unwrap()])
        .args(SWEEP_FLAGS)
        .env("CAVESWEEP", env!("CARGO_BIN_EXE_cavesweep"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_dirs(&single, &out.join("merged"));
}

/// Flags clap rejects end in one line too (exit 2, a usage error), naming the problem and,
/// where clap has one, its suggestion; help still prints in full.
#[test]
fn usage_errors_are_one_line() {
    for (args, needle) in [
        (
            &["search", "--wher", "x", "--seeds", "0..3"][..],
            "similar argument exists: '--where'",
        ),
        (&["swep"][..], "similar subcommand exists: 'sweep'"),
        (&["sweep", "--seeds", "0..10"][..], "--out <DIR>"),
        (&["run", "--scale", "0"][..], "1..=64"),
        // A recipe file and a preset: one would be ignored.
        (
            &["run", "--preset", "classic-4-5", "--recipe", "r.toml"][..],
            "'--preset <PRESET>' cannot be used with '--recipe <FILE>'",
        ),
        (
            &[
                "sweep", "--shard", "2-3,3/4", "--seeds", "0..10", "--out", "x",
            ][..],
            "named twice",
        ),
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cavesweep: error: "), "{err}");
        assert!(
            err.contains(needle) && err.contains("--help`)"),
            "{args:?}: {err}"
        );
    }
    let o = run(&["sweep", "--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("Usage:"));
}
