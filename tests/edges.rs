//! Edges of the command line, through the real binary: what a user can aim cavesweep at by
//! mistake. Files are never written through symbolic links and only over regular files; a recipe path
//! is read up to a cap; a full disk or a file-size limit ends in one line; every error message
//! says each thing once; `bench` and `reproduce` write nothing unless `--out` names a folder.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cavesweep");

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch folder under the target dir.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("edges-{name}"));
    if d.exists() {
        fs::remove_dir_all(&d).unwrap();
    }
    fs::create_dir_all(&d).unwrap();
    d
}

/// Sorted names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The child's output, or a panic (after killing it) if it has not exited within `limit`: a
/// guard against hangs, not a speed measurement.
fn wait_with_limit(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A failed run: exit code 1, exactly one line on stderr starting `cavesweep: error: `, no
/// panic, containing `needle`, and no part of the message said twice.
fn assert_one_line_error(o: &Output, needle: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("cavesweep: error: "), "{err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err:?}"
    );
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert_said_once(&err);
    err
}

/// No `: `-separated part of a message (of 10 characters or more) occurs twice in it: the
/// symptom of an error chain printing a cause that its context already printed.
fn assert_said_once(msg: &str) {
    let msg = msg.trim_end();
    for part in msg.split(": ").filter(|p| p.len() >= 10) {
        assert_eq!(msg.matches(part).count(), 1, "{part:?} repeated in {msg:?}");
    }
}

fn is_png(p: &Path) -> bool {
    fs::read(p).is_ok_and(|b| b.starts_with(b"\x89PNG"))
}

#[test]
fn said_once_detects_a_repeat() {
    // The checker itself must be able to fail.
    let repeated = "cavesweep: error: --png: cannot write d: Is a directory (os error 21): Is a directory (os error 21)";
    assert!(std::panic::catch_unwind(|| assert_said_once(repeated)).is_err());
    assert_said_once("cavesweep: error: --png: cannot write d: Is a directory (os error 21)");
}

#[test]
fn recipe_reads_are_capped() {
    let d = scratch("recipe-cap");
    let child = Command::new(BIN)
        .args(["run", "--recipe", "/dev/zero"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_with_limit(child, Duration::from_secs(60));
    assert_one_line_error(&o, "/dev/zero");
    // A device is refused before the first read (it used to be read up to the cap).
    assert!(stderr(&o).contains("character device"), "{}", stderr(&o));
    // A regular file just over the cap is refused; one under it is parsed (and fails as TOML).
    let big = d.join("big.toml");
    fs::write(&big, vec![b'#'; (4 << 20) + 1]).unwrap();
    assert_one_line_error(&run_in(&d, &["run", "--recipe", "big.toml"]), "4 MiB");
    fs::write(&big, vec![b'\n'; 4 << 20]).unwrap();
    assert_one_line_error(
        &run_in(&d, &["run", "--recipe", "big.toml"]),
        "missing field",
    );
    assert_one_line_error(&run_in(&d, &["run", "--recipe", "."]), "directory");
}

#[test]
fn png_is_never_written_through_links() {
    let d = scratch("links");
    fs::create_dir(d.join("pics")).unwrap();
    fs::write(d.join("pics/cave.png"), b"old").unwrap();
    symlink("pics/cave.png", d.join("rel.png")).unwrap();
    symlink(d.join("rel.png"), d.join("abs.png")).unwrap();
    symlink("pics/new.png", d.join("dangling.png")).unwrap();
    for link in ["rel.png", "abs.png", "dangling.png"] {
        let o = run_in(&d, &["run", "--png", link, "--force"]);
        assert!(!o.status.success(), "{link}: refused");
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert_eq!(fs::read(d.join("pics/cave.png")).unwrap(), b"old", "{link}");
        assert!(
            fs::symlink_metadata(d.join(link))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{link} is still a link"
        );
    }
    assert_eq!(names(&d.join("pics")), ["cave.png"], "nothing created");
    // A link to the folder is the user's own path and is followed.
    symlink("pics", d.join("to-pics")).unwrap();
    let o = run_in(&d, &["run", "--png", "to-pics/new.png"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_png(&d.join("pics/new.png")));
    assert_eq!(
        names(&d.join("pics")),
        ["cave.png", "new.png"],
        "no temporary files left"
    );
}

#[test]
fn outputs_refuse_fifos_directories_and_devices() {
    let d = scratch("refuse");
    let made = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .current_dir(&d)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(made(&["mkfifo", "pipe.png"]));
    fs::create_dir(d.join("dir.png")).unwrap();
    symlink("dir.png", d.join("to-dir.png")).unwrap();
    symlink("pipe.png", d.join("to-pipe.png")).unwrap();
    let mut cases = vec![
        ("pipe.png", "FIFO"),
        ("dir.png", "directory"),
        ("to-dir.png", "symbolic link"),
        ("to-pipe.png", "symbolic link"),
    ];
    // `run --png /dev/full` as root used to replace the device with a PNG. A device node of our
    // own (made only where allowed, i.e. as root) stands in for it: never aim a test at /dev.
    let device = made(&["mknod", "full.png", "c", "1", "7"]);
    if device {
        cases.push(("full.png", "character device"));
    }
    let before = names(&d);
    for (target, what) in cases {
        let child = Command::new(BIN)
            .args(["run", "--png", target])
            .current_dir(&d)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Opening a FIFO for writing would block: the limit catches that.
        let o = wait_with_limit(child, Duration::from_secs(60));
        let err = assert_one_line_error(&o, what);
        let why = if what == "symbolic link" {
            "links it did not create"
        } else {
            "regular file"
        };
        assert!(err.contains(why), "{err}");
    }
    assert_eq!(names(&d), before, "nothing replaced or left behind");
    assert!(
        fs::symlink_metadata(d.join("pipe.png"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(fs::symlink_metadata(d.join("dir.png")).unwrap().is_dir());
    if device {
        let ft = fs::symlink_metadata(d.join("full.png"))
            .unwrap()
            .file_type();
        assert!(ft.is_char_device(), "the device node is still a device");
    }
    // The same rule holds for the folders `reproduce --out` writes into.
    fs::create_dir(d.join("chapter")).unwrap();
    fs::create_dir(d.join("chapter/report.md")).unwrap();
    let o = run_in(
        &d,
        &["reproduce", "chapter", "--seeds", "2", "--out", "chapter"],
    );
    assert_one_line_error(&o, "directory");
    assert!(d.join("chapter/report.md").is_dir());
}

/// A bench of one preset, a twentieth of a second per figure.
const QUICK_BENCH: [&str; 7] = [
    "bench",
    "--preset",
    "chapter-strict",
    "--seconds",
    "0.05",
    "--repeats",
    "1",
];

#[test]
fn reproduce_and_bench_write_only_where_told() {
    let d = scratch("no-surprise");
    // Each command succeeds, prints `shows`, and (with `out`) adds `--out out`.
    let ok = |args: &[&str], out: bool, shows: &str| {
        let mut args = args.to_vec();
        if out {
            args.extend(["--out", "out"]);
        }
        let o = run_in(&d, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(shows),
            "{args:?}"
        );
    };
    let reproduce: &[&str] = &["reproduce", "chapter", "--seeds", "3"];
    let bench: &[&str] = &QUICK_BENCH;
    ok(reproduce, false, "the chapter's claims");
    ok(bench, false, "chapter-strict");
    assert!(names(&d).is_empty(), "wrote {:?} without --out", names(&d));
    // With --out they write there, through a link to the real folder.
    fs::create_dir(d.join("real")).unwrap();
    symlink("real", d.join("out")).unwrap();
    ok(reproduce, true, "wrote out/");
    ok(bench, true, "wrote out/bench.csv");
    let written = names(&d.join("real"));
    let (audit, rest): (Vec<_>, Vec<_>) = written.iter().partition(|n| n.starts_with("audit"));
    assert_eq!(
        rest,
        [
            "bench.csv",
            "report.md",
            "seeds.csv",
            "stages.csv",
            "trajectory.csv"
        ]
    );
    // reproduce's claim audit: audit.md, audit.html and 13 pictures.
    assert_eq!(audit.len(), 15, "{audit:?}");
    assert!(audit.iter().any(|n| *n == "audit.md") && audit.iter().any(|n| *n == "audit.html"));
}

/// `run --png`, `reproduce --out`, `bench --out` and `search --png-dir` rewrite a file only
/// when it would hold the same bytes (a rerun); anything else needs `--force`, and a refusal
/// leaves every file as it was.
#[test]
fn no_file_is_replaced_silently() {
    let d = scratch("no-replace");
    let ok = |args: &[&str]| {
        let o = run_in(&d, args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    };
    let refused = |args: &[&str], file: &str| {
        let before = fs::read(d.join(file)).unwrap();
        let err = assert_one_line_error(&run_in(&d, args), "--force");
        assert!(err.contains(file), "{args:?}: {err}");
        assert_eq!(
            fs::read(d.join(file)).unwrap(),
            before,
            "{args:?} changed {file}"
        );
    };
    // `first` twice (the same bytes again), then `other` refused (naming `file`), and
    // `other --force` replacing it.
    let again_then_forced = |first: &[&str], other: &[&str], file: &dyn Fn() -> String| {
        ok(first);
        ok(first);
        refused(other, &file());
        ok(&[other, &["--force"]].concat());
    };
    // run --png: the same picture again is fine; another seed's is refused.
    ok(&["run", "--png", "cave.png"]);
    ok(&["run", "--png", "cave.png"]);
    refused(&["run", "--png", "cave.png", "--seed", "7"], "cave.png");
    refused(&["run", "--png", "cave.png", "--scale", "2"], "cave.png");
    fs::write(d.join("mine.png"), b"not a cave").unwrap();
    refused(&["run", "--png", "mine.png"], "mine.png");
    ok(&["run", "--png", "mine.png", "--force"]);
    assert!(is_png(&d.join("mine.png")));
    // reproduce --out: the same run rewrites its files; other --seeds are refused as a whole.
    again_then_forced(
        &["reproduce", "chapter", "--seeds", "2", "--out", "chapter"],
        &["reproduce", "chapter", "--seeds", "3", "--out", "chapter"],
        &|| "chapter/trajectory.csv".into(),
    );
    // bench --out: figures always differ, so an earlier bench.csv is refused before measuring.
    let bench = [&QUICK_BENCH[..], &["--out", "figs"]].concat();
    ok(&bench);
    let t = Instant::now();
    refused(&bench, "figs/bench.csv");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "refused before measuring"
    );
    ok(&[&bench[..], &["--force"]].concat());
    // search --png-dir: a resumed or repeated search rewrites its pictures; a search with
    // another scale (or recipe) would replace them, and is refused.
    let search = [
        "search",
        "--seeds",
        "0..200",
        "--where",
        "components<=1",
        "--limit",
        "2",
        "--png-dir",
        "pics",
    ];
    let first_png = || {
        let pics = names(&d.join("pics"));
        assert_eq!(pics.len(), 2, "{pics:?}");
        format!("pics/{}", pics[0])
    };
    again_then_forced(
        &search,
        &[&search[..], &["--scale", "2"]].concat(),
        &first_png,
    );
}

/// A picture too big to hold in memory is refused at once with a one-line error, before any
/// cave is generated (a 16384x16384 cave at scale 64 would ask for 3 TiB).
#[test]
fn pictures_over_the_pixel_limit_are_one_line_errors() {
    let d = scratch("huge-png");
    let big = [
        "--set",
        "rows=16384",
        "--set",
        "cols=16384",
        "--scale",
        "64",
    ];
    let t = Instant::now();
    let err = assert_one_line_error(
        &run_in(&d, &[&["run", "--png", "huge.png"][..], &big].concat()),
        "pixels",
    );
    assert!(err.contains("--scale"), "{err}");
    assert_one_line_error(
        &run_in(
            &d,
            &[
                &[
                    "search",
                    "--seeds",
                    "0..10",
                    "--where",
                    "components>=1",
                    "--png-dir",
                    "p",
                ][..],
                &big,
            ]
            .concat(),
        ),
        "pixels",
    );
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "refused before generating"
    );
    assert!(names(&d).is_empty(), "left {:?}", names(&d));
}

#[test]
fn a_file_size_limit_is_a_one_line_error() {
    let d = scratch("fsize");
    // `ulimit -f 10`: files may not grow past 10 KiB. The PNG at scale 64 is far bigger.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 10; exec {BIN} run --png big.png --scale 64"
        ))
        .current_dir(&d)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_one_line_error(&o, "File too large");
    assert!(names(&d).is_empty(), "left {:?}", names(&d));
    // The same through stdout, and a full disk through stdout.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1; exec {BIN} run --ascii --set rows=200 --set cols=2000 > out.txt"
        ))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_one_line_error(&o, "File too large");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("exec {BIN} run --json > /dev/full"))
        .output()
        .unwrap();
    assert_one_line_error(&o, "No space left on device");
}

#[test]
fn errors_say_each_thing_once() {
    let d = scratch("once");
    let good = String::from_utf8(run_in(&d, &["presets", "chapter-strict"]).stdout).unwrap();
    fs::create_dir(d.join("dir.png")).unwrap();
    let recipes = [
        ("rows0.toml", good.replace("rows = 90", "rows = 0"), "empty"),
        ("p2.toml", good.replace("p = 0.45", "p = 2.0"), "fill"),
        (
            "rule.toml",
            good.replace("B5678/S5678", "B5678/Q5678"),
            "pass 1",
        ),
        (
            "huge.toml",
            good.replace("rows = 90", "rows = 100000"),
            "too large",
        ),
        ("junk.toml", "this is not toml".to_string(), "TOML"),
        (
            "steps.toml",
            good.replace("repeat = 4", "repeat = 60000")
                + &good[good.find("[[pass]]").unwrap()..].replace("repeat = 4", "repeat = 60000"),
            "add up to 120000 steps",
        ),
    ];
    for (name, text, needle) in &recipes {
        fs::write(d.join(name), text).unwrap();
        assert_one_line_error(&run_in(&d, &["run", "--recipe", name]), needle);
    }
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--set", "rows=100000"], "too large"),
        (&["run", "--set", "rows=0"], "empty"),
        (&["run", "--set", "fill=2"], "outside [0, 1]"),
        (&["run", "--set", "post=remove-small x"], "cell count"),
        (&["run", "--png", "missing/x.png"], "No such file"),
        (&["run", "--png", "dir.png"], "directory"),
        (
            &[
                "reproduce",
                "chapter",
                "--seeds",
                "2",
                "--out",
                "/proc/nope",
            ],
            "/proc/nope",
        ),
        (
            &[
                "sweep",
                "--seeds",
                "0..10",
                "--vary",
                "fill=0.4,1.4",
                "--out",
                "s1",
            ],
            "outside [0, 1]",
        ),
        (
            &[
                "sweep", "--seeds", "0..10", "--vary", "rows=0,5", "--out", "s2",
            ],
            "empty",
        ),
    ];
    for (args, needle) in cases {
        let o = run_in(&d, args);
        assert_one_line_error(&o, needle);
    }
}

/// `bench --recipe FILE`: a recipe file is measured under its name, after the presets named
/// (alone when none is); a file that is not a recipe ends in one line before measuring.
#[test]
fn bench_measures_recipe_files() {
    let d = scratch("bench-recipe");
    let mut r = String::from_utf8(run_in(&d, &["presets", "classic-4-5"]).stdout).unwrap();
    r = r.replacen("name = \"classic-4-5\"", "name = \"classic-wide\"", 1);
    r = r.replacen("cols = 140", "cols = 600", 1);
    assert!(
        r.contains("classic-wide") && r.contains("cols = 600"),
        "{r}"
    );
    fs::write(d.join("wide.toml"), r).unwrap();
    let quick = ["bench", "--seconds", "0.05", "--repeats", "1"];
    let o = run_in(
        &d,
        &[&quick[..], &["--recipe", "wide.toml", "--out", "f"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = fs::read_to_string(d.join("f/bench.csv")).unwrap();
    let rows: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(rows, ["classic-wide"], "{csv}");
    assert!(csv.contains("classic-wide,54000,"), "{csv}");
    let o = run_in(
        &d,
        &[
            &quick[..],
            &["--preset", "chapter-strict", "--recipe", "wide.toml"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let (a, b) = (text.find("\nchapter-strict "), text.find("\nclassic-wide "));
    assert!(a.is_some() && b.is_some() && a < b, "{text}");
    fs::write(d.join("bad.toml"), "rows = 'many'\n").unwrap();
    let o = run_in(&d, &[&quick[..], &["--recipe", "bad.toml"]].concat());
    assert_one_line_error(&o, "bad.toml");
    let o = run_in(&d, &[&quick[..], &["--recipe", "missing.toml"]].concat());
    assert_one_line_error(&o, "missing.toml");
}
