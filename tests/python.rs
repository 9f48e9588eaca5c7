//! The Python package (`python/`), end to end: builds it with `pip install ./python` into a
//! virtual environment under `target/` and runs its pytest suite (python/tests) against the
//! `cavesweep` binary cargo just built, so `cargo test --profile ci --all-targets` covers Python.
//!
//! - The venv is `target/python-venv`, made with the first `python3` on PATH (or
//!   `$CAVESWEEP_PYTHON`) and filled from python/requirements-test.txt (maturin, numpy, pandas,
//!   pytest from the package index); it is reused while that file is unchanged.
//! - The native module builds in this workspace's target directory (python/ is a non-default
//!   member). Under `cargo test --profile ci` it builds with that `ci` profile too (maturin
//!   reads `MATURIN_PEP517_ARGS`), so the dependencies `cargo test` just compiled are reused
//!   where their features agree and nothing is re-optimised with the release profile's thin
//!   LTO and single codegen unit: that build was ~5 of the CI run's ~17 minutes on 2 cores.
//!   Other test runs, and a user's `pip install ./python`, build with the release profile.
//! - Every failing step fails the test with its output. Only when no Python with pip exists at
//!   all, and not in CI (`CI` set), is the test skipped, with a loud message.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn target_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target>/tmp.
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .to_path_buf()
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Run a step; on failure, panic with its command line and output.
fn step(what: &str, cmd: &mut Command) {
    let t = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("python tests: {what}: could not start {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "python tests: {what} failed ({}):\n{cmd:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("python tests: {what}: {:.1} s", t.elapsed().as_secs_f64());
}

fn works(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// PATH with the venv's bin folder first.
fn with_venv_path(venv: &Path) -> std::ffi::OsString {
    let mut paths = vec![venv.join("bin")];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("PATH entries join")
}

/// Whether this test binary was built with the `ci` profile (its path is
/// `target/ci/deps/...`): then the package is built with it too. Other `cargo test` runs keep
/// maturin's default (release), as a dev build of the module would make pytest crawl.
fn built_with_ci_profile() -> bool {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|p| p == "ci")
}

#[test]
fn python_package() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("CAVESWEEP_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_pip = works(Command::new(&python).args(["-m", "pip", "--version"]));
    if !has_pip && !in_ci() {
        eprintln!(
            "\n\n*** python tests SKIPPED: no `{python}` with pip on this machine (set \
             CAVESWEEP_PYTHON to a Python 3.9+ with pip); the Python package is NOT tested ***\n"
        );
        return;
    }
    let target = target_dir();
    let venv = target.join("python-venv");
    let vpy = venv.join("bin").join("python");
    let requirements = root.join("python/requirements-test.txt");
    let wanted = std::fs::read_to_string(&requirements).expect("python/requirements-test.txt");
    let stamp = venv.join("cavesweep-requirements.txt");
    let fresh = vpy.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted);
    if !fresh {
        let _ = std::fs::remove_dir_all(&venv);
        step(
            "create the venv",
            Command::new(&python).arg("-m").arg("venv").arg(&venv),
        );
        step(
            "install maturin, numpy, pandas, pytest",
            Command::new(&vpy)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(&requirements),
        );
        std::fs::write(&stamp, &wanted).expect("write the venv's requirements stamp");
    }
    // The package itself, as a user installs it from a clone (the venv's maturin builds it).
    let mut install = Command::new(&vpy);
    if built_with_ci_profile() {
        install.env("MATURIN_PEP517_ARGS", "--profile ci");
    }
    step(
        "pip install ./python",
        install
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-build-isolation",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(root.join("python"))
            // The build backend runs `maturin` from PATH: the venv's, as an activated venv would.
            .env("PATH", with_venv_path(&venv)),
    );
    // pytest's own output (its closing "N passed" line included) goes straight to the console.
    let t = Instant::now();
    let status = Command::new(&vpy)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("python/tests"))
        .current_dir(root)
        .env("CAVESWEEP_BIN", env!("CARGO_BIN_EXE_cavesweep"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .status()
        .expect("could not run pytest");
    eprintln!("python tests: pytest: {:.1} s", t.elapsed().as_secs_f64());
    assert!(
        status.success(),
        "pytest failed ({status}): see its output above"
    );
}
