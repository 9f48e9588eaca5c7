//! The explorer's page in a real headless Firefox (issue #39: "works in current Chromium and
//! Firefox"), run from `cargo test`: this test runs `tests/e2e-firefox/explore.firefox.test.mjs`
//! (node's test runner driving Debian's firefox-esr over WebDriver BiDi with puppeteer-core)
//! against the binary cargo just built. `.ci/run` installs firefox-esr, and puppeteer-core (pinned
//! by tests/e2e-firefox/package-lock.json) into `target/e2e-firefox/node`; without them the test
//! fails unless CAVESWEEP_SKIP_FIREFOX is set. Screenshots of each view land in
//! `target/e2e-firefox/`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .to_path_buf()
}

#[test]
fn the_page_works_in_firefox() {
    let modules = target().join("e2e-firefox/node/node_modules/puppeteer-core");
    let firefox = std::env::var_os("FIREFOX")
        .map_or_else(|| PathBuf::from("/usr/bin/firefox-esr"), PathBuf::from);
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(modules.is_dir() && firefox.exists() && node) {
        assert!(
            std::env::var_os("CAVESWEEP_SKIP_FIREFOX").is_some(),
            "node, firefox ({}) and puppeteer-core in {} are needed (.ci/run installs them: \
             apt-get install firefox-esr; npm ci in target/e2e-firefox/node); set \
             CAVESWEEP_SKIP_FIREFOX=1 to skip this test",
            firefox.display(),
            modules.display()
        );
        eprintln!("SKIPPED: the Firefox test's tools are not installed");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let started = std::time::Instant::now();
    let out = Command::new("node")
        .args(["--test", "--test-reporter=spec"])
        .arg(root.join("tests/e2e-firefox/explore.firefox.test.mjs"))
        .env("CAVESWEEP_BIN", env!("CARGO_BIN_EXE_cavesweep"))
        .env("FIREFOX", &firefox)
        // puppeteer-core never downloads a browser; this says so to anything that might
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .current_dir(root)
        .output()
        .expect("node runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the Firefox test failed:\n{text}");
    eprintln!(
        "Firefox test passed in {:.1} s:\n{text}",
        started.elapsed().as_secs_f64()
    );
}
