//! Helpers shared by the end-to-end tests: run the real binary, scratch folders, compare the
//! output files of two sweep folders.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// A small search writing the file named next (the hostile tests' target): its `--out` last.
pub const SEARCH_OUT: &[&str] = &[
    "search",
    "--preset",
    "classic-4-5",
    "--seeds",
    "0..50",
    "--where",
    "components >= 1",
    "--out",
];

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cavesweep"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch folder under the target dir, unique per test `name`.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The output files of a folder (the store and lock excluded: their bytes depend on timing;
/// the promise of byte-identity is about the files a user reads), sorted by name.
pub fn output_files(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("cavesweep.")
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Both folders hold the same output files, byte for byte.
pub fn assert_same_outputs(a: &Path, b: &Path) {
    let (fa, fb) = (output_files(a), output_files(b));
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&fa), names(&fb), "{} vs {}", a.display(), b.display());
    for ((n, x), (_, y)) in fa.iter().zip(&fb) {
        assert!(
            x == y,
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

/// Failed cleanly: non-zero exit, one line on stderr containing `needle`, no panic.
pub fn assert_one_line_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "should fail: {err}");
    assert_eq!(o.status.code(), Some(1), "exit code: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
}

/// Wait for `child` and collect its output, killing it (and failing, naming `what`) once it has
/// run for `limit`: a test of "never blocks" must end even when the binary does block.
pub fn wait_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
