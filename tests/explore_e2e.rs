//! The explorer's page in a real headless Chromium (issue #39), run from `cargo test`: this
//! test runs `tests/e2e/explore.test.mjs` (node's test runner driving Debian's chromium with
//! playwright-core) against the binary cargo just built. `.ci/run` installs chromium, and
//! playwright-core (pinned by tests/e2e/package-lock.json) into `target/e2e/node`; without them
//! the test fails unless CAVESWEEP_SKIP_E2E is set. Screenshots of each view land in
//! `target/e2e/`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .to_path_buf()
}

#[test]
fn the_page_works_in_chromium() {
    let modules = target().join("e2e/node/node_modules/playwright-core");
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(modules.is_dir() && chromium.exists() && node) {
        assert!(
            std::env::var_os("CAVESWEEP_SKIP_E2E").is_some(),
            "node, chromium ({}) and playwright-core in {} are needed (.ci/run installs them: \
             apt-get install chromium; npm ci in target/e2e/node); set CAVESWEEP_SKIP_E2E=1 to \
             skip this test",
            chromium.display(),
            modules.display()
        );
        eprintln!("SKIPPED: the browser test's tools are not installed");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let started = std::time::Instant::now();
    let out = Command::new("node")
        .args(["--test", "--test-reporter=spec"])
        .arg(root.join("tests/e2e/explore.test.mjs"))
        .env("CAVESWEEP_BIN", env!("CARGO_BIN_EXE_cavesweep"))
        .env("CHROMIUM", &chromium)
        .current_dir(root)
        .output()
        .expect("node runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the browser test failed:\n{text}");
    eprintln!(
        "browser test passed in {:.1} s:\n{text}",
        started.elapsed().as_secs_f64()
    );
}
