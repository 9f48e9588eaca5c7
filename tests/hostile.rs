//! The file-safety model (README, "What cavesweep touches"), through the real binary: every
//! defect of issue 35 about files that are not cavesweep's own, reproduced in a scratch folder,
//! a randomized round of hostile output folders run against every command that writes, and
//! the defects a second hostile round found (2026-12-07: `--force` and a `parts` folder, an
//! empty store, hard links, several files written by one command, the default report folder,
//! a Parquet footer, long inputs in errors).
//!
//! `CAVESWEEP_HOSTILE_BIN=/path/to/cavesweep` runs these against another build (an older one
//! fails them: that is how each test was shown to be able to fail).

#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn bin() -> PathBuf {
    std::env::var_os("CAVESWEEP_HOSTILE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cavesweep")))
}

/// Run the binary in `dir`, killing it (and failing the test) after `limit`: every run here
/// has a time limit, since blocking forever on a FIFO is one of the defects.
fn run_limited(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    common::wait_within(child, limit, &format!("cavesweep {args:?}"))
}

fn run(dir: &Path, args: &[&str]) -> Output {
    run_limited(dir, args, Duration::from_secs(60))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Refused cleanly: non-zero exit (not a crash), one line on stderr containing `needle`.
fn refused(o: &Output, needle: &str) {
    let e = stderr(o);
    assert!(!o.status.success(), "should be refused, but succeeded: {e}");
    assert!(
        matches!(o.status.code(), Some(c) if c != 101 && c < 128),
        "exit {:?}: {e}",
        o.status
    );
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(e.contains(needle), "{needle:?} not in: {e}");
}

fn ok(o: &Output) {
    assert!(o.status.success(), "failed: {}", stderr(o));
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// Everything under `dir`, not following links: name -> what it is (bytes of a file, target of
/// a link, "fifo", "dir").
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(rd) = fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let m = fs::symlink_metadata(&p).unwrap();
            let ft = m.file_type();
            let v = if ft.is_symlink() {
                format!("link -> {}", fs::read_link(&p).unwrap().display())
            } else if ft.is_fifo() {
                "fifo".into()
            } else if ft.is_dir() {
                walk(root, &p, out);
                "dir".into()
            } else {
                format!("file {:?}", fs::read(&p).unwrap())
            };
            out.insert(rel, v);
        }
    }
    walk(dir, dir, &mut out);
    out
}

const SWEEP: &[&str] = &["sweep", "--preset", "classic-4-5", "--seeds", "0..40"];

fn sweep_into(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args = SWEEP.to_vec();
    args.extend(["--out", out]);
    args.extend(extra);
    run(dir, &args)
}

#[test]
fn d01_a_linked_lock_file_is_refused_and_its_target_untouched() {
    let d = scratch("d01");
    fs::create_dir(d.join("o")).unwrap();
    fs::write(d.join("victim.txt"), b"PRECIOUS\n").unwrap();
    symlink(d.join("victim.txt"), d.join("o/cavesweep.lock")).unwrap();
    refused(&sweep_into(&d, "o", &[]), "symbolic link");
    assert_eq!(fs::read(d.join("victim.txt")).unwrap(), b"PRECIOUS\n");
    // A dangling link: its target is not created.
    fs::create_dir(d.join("p")).unwrap();
    symlink(d.join("made-by-link"), d.join("p/cavesweep.lock")).unwrap();
    refused(&sweep_into(&d, "p", &["--force"]), "symbolic link");
    assert!(!d.join("made-by-link").exists());
}

/// A finished sweep folder to report on.
fn finished_sweep(d: &Path) -> PathBuf {
    ok(&sweep_into(d, "sw", &[]));
    d.join("sw")
}

#[test]
fn d02_report_never_takes_a_folder_without_its_marker_for_an_earlier_report() {
    let d = scratch("d02");
    finished_sweep(&d);
    let site = d.join("site");
    fs::create_dir_all(site.join("img")).unwrap();
    fs::write(site.join("index.html"), b"<h1>my site</h1>").unwrap();
    fs::write(site.join("README.md"), b"# mine").unwrap();
    fs::write(site.join("img/logo.png"), b"logo").unwrap();
    let before = snapshot(&site);
    refused(&run(&d, &["report", "sw", "--out", "site"]), "site");
    assert_eq!(snapshot(&site), before, "nothing replaced or deleted");
    // A report folder of our own: rerun replaces its files, keeps what the user added.
    ok(&run(&d, &["report", "sw", "--out", "rep"]));
    fs::write(d.join("rep/notes.txt"), b"mine").unwrap();
    fs::write(d.join("rep/img/logo.png"), b"logo").unwrap();
    ok(&run(&d, &["report", "sw", "--out", "rep"]));
    assert_eq!(fs::read(d.join("rep/notes.txt")).unwrap(), b"mine");
    assert_eq!(fs::read(d.join("rep/img/logo.png")).unwrap(), b"logo");
}

#[test]
fn d03_a_linked_report_img_folder_is_refused() {
    let d = scratch("d03");
    finished_sweep(&d);
    ok(&run(&d, &["report", "sw", "--out", "rep"]));
    fs::create_dir(d.join("elsewhere")).unwrap();
    fs::write(d.join("elsewhere/holiday.png"), b"photo").unwrap();
    fs::remove_dir_all(d.join("rep/img")).unwrap();
    symlink(d.join("elsewhere"), d.join("rep/img")).unwrap();
    let before = snapshot(&d.join("elsewhere"));
    refused(&run(&d, &["report", "sw", "--out", "rep"]), "symbolic link");
    assert_eq!(snapshot(&d.join("elsewhere")), before);
}

#[test]
fn d04_a_refused_sweep_removes_nothing_not_even_look_alike_temp_files() {
    let d = scratch("d04");
    let tm = d.join("tm");
    fs::create_dir_all(tm.join("seeds.csv.tmp2024")).unwrap();
    fs::write(tm.join("seeds.csv.tmp2024/ch1.txt"), b"thesis").unwrap();
    fs::write(tm.join("summary.csv.tmp77"), b"a file of mine").unwrap();
    fs::write(tm.join("notes.txt"), b"n").unwrap();
    let before = snapshot(&tm);
    refused(&sweep_into(&d, "tm", &[]), "is not ours");
    assert_eq!(snapshot(&tm), before);
    // With --force (write beside foreign files) the look-alikes are still not removed.
    ok(&sweep_into(&d, "tm", &["--force"]));
    let after = snapshot(&tm);
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "{k} kept");
    }
}

#[test]
fn d05_fifos_never_block_a_sweep_a_report_or_a_search() {
    let d = scratch("d05");
    finished_sweep(&d);
    fs::remove_file(d.join("sw/seeds.csv")).ok();
    fs::remove_file(d.join("sw/summary.csv")).unwrap();
    mkfifo(&d.join("sw/summary.csv"));
    let limit = Duration::from_secs(20);
    let mut args = SWEEP.to_vec();
    args.extend(["--out", "sw"]);
    refused(&run_limited(&d, &args, limit), "FIFO");
    let o = run_limited(&d, &["report", "sw", "--out", "rep"], limit);
    refused(&o, "FIFO");
    assert!(
        fs::symlink_metadata(d.join("sw/summary.csv"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // search --out a FIFO, with --force: refused before a row is written.
    mkfifo(&d.join("rows.csv"));
    let o = run_limited(
        &d,
        &[common::SEARCH_OUT, &["rows.csv", "--force"]].concat(),
        limit,
    );
    refused(&o, "FIFO");
    // --recipe and --seeds-from FIFOs: refused, not read.
    mkfifo(&d.join("recipe.toml"));
    refused(
        &run_limited(&d, &["run", "--recipe", "recipe.toml"], limit),
        "FIFO",
    );
}

/// Make `dirs` read-only by bind-mounting a read-only tmpfs copy when this process may mount
/// (root in CI); `None` otherwise.
struct RoMount(PathBuf);

impl RoMount {
    fn new(dir: &Path) -> Option<RoMount> {
        let copy = dir.with_extension("copy");
        let sh = |cmd: String| {
            Command::new("sh")
                .args(["-c", &cmd])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let (d, c) = (dir.display(), copy.display());
        if !sh(format!(
            "cp -a '{d}' '{c}' && mount -t tmpfs -o size=16m tmpfs '{d}' && cp -a '{c}/.' '{d}/' && mount -o remount,ro '{d}'"
        )) {
            let _ = sh(format!("umount '{d}'"));
            return None;
        }
        Some(RoMount(dir.to_path_buf()))
    }
}

impl Drop for RoMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn d08_merge_reads_shards_it_may_not_write() {
    let d = scratch("d08");
    for k in 1..=2 {
        let shard = format!("shards/shard-{k}");
        ok(&sweep_into(
            &d,
            &shard,
            &["--chunk", "16", "--shard", &format!("{k}/2")],
        ));
        // A merge input without a lock file gets none made: merge only reads its inputs.
        fs::remove_file(d.join(&shard).join("cavesweep.lock")).unwrap();
    }
    let before = snapshot(&d.join("shards"));
    ok(&run(&d, &["merge", "--from", "shards", "--out", "merged"]));
    assert_eq!(
        snapshot(&d.join("shards")),
        before,
        "merge wrote nothing into its inputs"
    );
    // On a read-only mount (when this test may mount one).
    match RoMount::new(&d.join("shards")) {
        Some(_ro) => {
            ok(&run(
                &d,
                &["merge", "--from", "shards", "--out", "merged-ro"],
            ));
            let a = fs::read(d.join("merged/summary.csv")).unwrap();
            assert_eq!(fs::read(d.join("merged-ro/summary.csv")).unwrap(), a);
        }
        None => eprintln!("d08: cannot mount here; the read-only mount case was not run"),
    }
}

#[test]
fn search_out_and_run_png_never_write_through_links() {
    let d = scratch("links");
    fs::write(d.join("victim"), b"PRECIOUS").unwrap();
    symlink(d.join("victim"), d.join("rows.csv")).unwrap();
    symlink(d.join("victim"), d.join("cave.png")).unwrap();
    refused(
        &run(&d, &search_args("rows.csv", &["--force"])),
        "symbolic link",
    );
    refused(
        &run(&d, &["run", "--png", "cave.png", "--force"]),
        "symbolic link",
    );
    // The checkpoint folder beside --out is derived, not named by the user: a link there is
    // refused too.
    fs::create_dir(d.join("elsewhere")).unwrap();
    symlink(d.join("elsewhere"), d.join("out.csv.checkpoint")).unwrap();
    refused(
        &run(&d, &search_args("out.csv", &["--force"])),
        "symbolic link",
    );
    assert_eq!(fs::read(d.join("victim")).unwrap(), b"PRECIOUS");
    assert!(snapshot(&d.join("elsewhere")).is_empty());
    assert!(!d.join("out.csv").exists());
}

#[test]
fn a_foreign_sqlite_journal_without_a_store_is_refused() {
    let d = scratch("journal");
    fs::create_dir(d.join("o")).unwrap();
    fs::write(d.join("o/cavesweep.sqlite-journal"), b"not ours").unwrap();
    refused(&sweep_into(&d, "o", &[]), "cavesweep.sqlite-journal");
    assert_eq!(
        fs::read(d.join("o/cavesweep.sqlite-journal")).unwrap(),
        b"not ours"
    );
    assert_eq!(snapshot(&d.join("o")).len(), 1, "no lock file left behind");
}

/// A small deterministic generator (SplitMix64), so a failing case can be rerun by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }
}

/// Names cavesweep writes or looks at, and some of its own.
const NAMES: &[&str] = &[
    "cavesweep.lock",
    "cavesweep.sqlite",
    "cavesweep.sqlite-journal",
    "summary.csv",
    "seeds.csv",
    "trajectory.csv",
    "manifest.json",
    "seeds.csv.tmp123",
    "summary.csv.tmp9",
    "index.html",
    "img",
    ".cavesweep-report",
    "rows.csv",
    "rows.csv.checkpoint",
    "cave.png",
    "notes.txt",
];

/// Put something hostile at `dir/name`: a link to a file outside, a dangling link, a FIFO, a
/// folder with a file in it, or a foreign file (only under a name that is not one of ours:
/// `--force` may replace a regular file bearing one of cavesweep's names, by design).
fn plant(rng: &mut Rng, dir: &Path, name: &str, outside: &Path) {
    let p = dir.join(name);
    let ours = !matches!(name, "notes.txt") && !name.contains(".tmp");
    let kinds: &[u8] = if ours {
        &[0, 1, 2, 3]
    } else {
        &[0, 1, 2, 3, 4]
    };
    match rng.pick(kinds) {
        0 => symlink(outside.join("victim"), &p).unwrap(),
        1 => symlink(outside.join(format!("never-{name}")), &p).unwrap(),
        2 => mkfifo(&p),
        3 => {
            fs::create_dir(&p).unwrap();
            fs::write(p.join("inside.txt"), b"keep me").unwrap();
        }
        _ => fs::write(&p, format!("foreign {name}")).unwrap(),
    }
}

#[test]
fn randomized_hostile_folders_change_nothing_that_is_not_ours() {
    let d = scratch("random");
    finished_sweep(&d);
    let outside = d.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim"), b"PRECIOUS").unwrap();
    let rounds: u64 = std::env::var("CAVESWEEP_HOSTILE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let limit = Duration::from_secs(30);
    for round in 0..rounds {
        let mut rng = Rng(round);
        let h = d.join(format!("h{round}"));
        fs::create_dir(&h).unwrap();
        let n = 1 + rng.next() % 4;
        let mut planted = Vec::new();
        for _ in 0..n {
            let name = *rng.pick(NAMES);
            if !planted.contains(&name) {
                plant(&mut rng, &h, name, &outside);
                planted.push(name);
            }
        }
        let outside_before = snapshot(&outside);
        let before = snapshot(&h);
        let hs = h.file_name().unwrap().to_str().unwrap().to_string();
        let (rows, png) = (format!("{hs}/rows.csv"), format!("{hs}/cave.png"));
        let commands: Vec<Vec<&str>> = vec![
            [SWEEP, &["--out", &hs]].concat(),
            [SWEEP, &["--out", &hs, "--force"]].concat(),
            vec!["report", "sw", "--out", &hs],
            vec!["report", &hs],
            vec![
                "search",
                "--preset",
                "classic-4-5",
                "--seeds",
                "0..20",
                "--where",
                "components >= 1",
                "--out",
                &rows,
                "--force",
            ],
            vec!["run", "--png", &png, "--force"],
            vec!["merge", &hs, "--out", "merged-never"],
        ];
        for args in &commands {
            let o = run_limited(&d, args, limit);
            let e = stderr(&o);
            let case = format!("round {round} planted {planted:?}: cavesweep {args:?}");
            assert!(!e.contains("panicked"), "{case}: {e}");
            assert!(
                matches!(o.status.code(), Some(c) if c != 101 && c < 128),
                "{case}: exit {:?}: {e}",
                o.status
            );
            if !o.status.success() {
                assert_eq!(e.trim_end().lines().count(), 1, "{case}: one line: {e}");
            }
            assert_eq!(
                snapshot(&outside),
                outside_before,
                "{case}: outside changed"
            );
            // Every entry that was there before is still there, unchanged, unless it is a
            // regular file of cavesweep's own name (then --force may replace it).
            let now = snapshot(&h);
            for (k, v) in &before {
                assert_eq!(now.get(k), Some(v), "{case}: {k} changed");
            }
        }
        let _ = fs::remove_dir_all(d.join("merged-never"));
    }
}

// A second hostile round (2026-12-07): what `--force`, an empty store, hard links, the default
// report folder, a Parquet footer and long inputs could still do.

/// A `state.json` of cavesweep 0.1's checkpoint format (its keys, nothing else).
const LEGACY_STATE: &str =
    r#"{"format":1,"fingerprint":{},"shard":"1/1","chunks":2,"done":[[0,1]],"points":[]}"#;

/// `search` of 20 classic-4-5 seeds into `out`, with `extra` flags.
fn search_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "search",
        "--preset",
        "classic-4-5",
        "--seeds",
        "0..20",
        "--where",
        "components >= 1",
        "--out",
        out,
    ];
    a.extend(extra);
    a
}

#[test]
fn force_removes_a_parts_folder_only_when_it_is_provably_cavesweep_01s() {
    let d = scratch("parts");
    // A folder of the user's named `parts`, beside no checkpoint: never touched.
    fs::create_dir_all(d.join("a/parts/deep")).unwrap();
    fs::write(d.join("a/parts/photo.jpg"), b"PHOTO").unwrap();
    fs::write(d.join("a/parts/deep/thesis.tex"), b"THESIS").unwrap();
    let before = snapshot(&d.join("a"));
    refused(&sweep_into(&d, "a", &[]), "parts is not ours");
    ok(&sweep_into(&d, "a", &["--force"]));
    let after = snapshot(&d.join("a"));
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "{k} changed");
    }
    // A `state.json` that is not that format's proves nothing either.
    fs::create_dir_all(d.join("b/parts")).unwrap();
    fs::write(d.join("b/state.json"), b"{}").unwrap();
    fs::write(d.join("b/parts/0.csv"), b"seed\n").unwrap();
    ok(&sweep_into(&d, "b", &["--force"]));
    assert_eq!(fs::read(d.join("b/state.json")).unwrap(), b"{}");
    assert!(d.join("b/parts/0.csv").exists());
    // The real thing, with a file in parts/ cavesweep 0.1 never wrote: kept, all of it.
    fs::create_dir_all(d.join("c/parts")).unwrap();
    fs::write(d.join("c/state.json"), LEGACY_STATE).unwrap();
    fs::write(d.join("c/parts/0.csv"), b"seed\n").unwrap();
    fs::write(d.join("c/parts/notes.txt"), b"MINE").unwrap();
    ok(&sweep_into(&d, "c", &["--force"]));
    assert_eq!(fs::read(d.join("c/parts/notes.txt")).unwrap(), b"MINE");
    assert!(d.join("c/state.json").exists() && d.join("c/parts/0.csv").exists());
    // Proved: refused without --force, removed with it.
    fs::create_dir_all(d.join("e/parts")).unwrap();
    fs::write(d.join("e/state.json"), LEGACY_STATE).unwrap();
    fs::write(d.join("e/parts/0.csv"), b"seed\n").unwrap();
    fs::write(d.join("e/parts/17.csv"), b"seed\n").unwrap();
    refused(&sweep_into(&d, "e", &[]), "older cavesweep");
    ok(&sweep_into(&d, "e", &["--force"]));
    assert!(!d.join("e/state.json").exists() && !d.join("e/parts").exists());
}

#[test]
fn search_never_writes_into_a_file_with_other_hard_links() {
    let d = scratch("hardlink");
    let search = |out: &str, force: bool| {
        run(
            &d,
            &search_args(out, if force { &["--force"] } else { &[] }),
        )
    };
    for out in ["a.csv", "p.parquet"] {
        fs::write(d.join("keep.txt"), b"PRECIOUS").unwrap();
        // A finished search whose file is then replaced by another name of keep.txt: the
        // rerun finds it changed and would rewrite it in place.
        ok(&search(out, false));
        fs::remove_file(d.join(out)).unwrap();
        fs::hard_link(d.join("keep.txt"), d.join(out)).unwrap();
        refused(&search(out, false), "hard links");
        refused(&search(out, true), "hard links");
        assert_eq!(fs::read(d.join("keep.txt")).unwrap(), b"PRECIOUS");
        fs::remove_file(d.join(out)).unwrap();
    }
    // On a fresh name, --force: refused before its checkpoint folder is made.
    fs::hard_link(d.join("keep.txt"), d.join("fresh.csv")).unwrap();
    refused(&search("fresh.csv", true), "hard links");
    assert_eq!(fs::read(d.join("keep.txt")).unwrap(), b"PRECIOUS");
    assert!(!d.join("fresh.csv.checkpoint").exists());
}

#[test]
fn an_empty_store_proves_nothing_about_the_files_beside_it() {
    let d = scratch("emptystore");
    fs::create_dir(d.join("o")).unwrap();
    fs::write(d.join("o/cavesweep.sqlite"), b"").unwrap();
    fs::write(d.join("o/summary.csv"), b"MINE").unwrap();
    fs::write(d.join("o/seeds.csv.tmp123"), b"MINE TOO").unwrap();
    let before = snapshot(&d.join("o"));
    refused(&sweep_into(&d, "o", &[]), "o");
    assert_eq!(snapshot(&d.join("o")), before);
    // The same for a search's checkpoint folder.
    fs::create_dir(d.join("s.csv.checkpoint")).unwrap();
    fs::write(d.join("s.csv.checkpoint/cavesweep.sqlite"), b"").unwrap();
    fs::write(d.join("s.csv"), b"MINE").unwrap();
    refused(&run(&d, &search_args("s.csv", &[])), "s.csv exists");
    assert_eq!(fs::read(d.join("s.csv")).unwrap(), b"MINE");
    // Alone, an empty store (a creation killed before its commit) is simply created again.
    fs::create_dir(d.join("k")).unwrap();
    fs::write(d.join("k/cavesweep.sqlite"), b"").unwrap();
    ok(&sweep_into(&d, "k", &[]));
    assert!(d.join("k/summary.csv").exists());
}

#[test]
fn search_refuses_an_out_it_can_never_write_before_making_its_checkpoint() {
    let d = scratch("searchfifo");
    mkfifo(&d.join("ff.csv"));
    symlink(d.join("nowhere"), d.join("l.csv")).unwrap();
    for out in ["ff.csv", "l.csv"] {
        let o = run_limited(&d, &search_args(out, &["--force"]), Duration::from_secs(20));
        refused(&o, out);
        assert!(
            !d.join(format!("{out}.checkpoint")).exists(),
            "{out}: a checkpoint folder was left behind"
        );
    }
    assert!(!d.join("nowhere").exists());
}

#[test]
fn the_default_report_folder_is_not_followed_through_a_link() {
    let d = scratch("reportlink");
    let sw = finished_sweep(&d);
    fs::create_dir(d.join("victim")).unwrap();
    symlink("../victim", sw.join("report")).unwrap();
    refused(&run(&d, &["report", "sw"]), "symbolic link");
    assert!(snapshot(&d.join("victim")).is_empty());
    // A folder the user names may be a link they made.
    ok(&run(&d, &["report", "sw", "--out", "sw/report"]));
    assert!(d.join("victim/index.html").exists());
}

#[test]
fn a_parquet_footer_stating_a_huge_length_is_refused_unread() {
    let d = scratch("footer");
    // 1 GiB, sparse: "PAR1", then a footer stating almost all of it as metadata.
    let size: u64 = 1 << 30;
    let f = fs::File::create(d.join("big.parquet")).unwrap();
    f.set_len(size).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_all_at(b"PAR1", 0).unwrap();
    let mut tail = ((size - 12) as u32).to_le_bytes().to_vec();
    tail.extend_from_slice(b"PAR1");
    f.write_all_at(&tail, size - 8).unwrap();
    drop(f);
    let o = run_limited(
        &d,
        &[
            "search",
            "--preset",
            "classic-4-5",
            "--where",
            "components >= 1",
            "--seeds-from",
            "big.parquet",
        ],
        Duration::from_secs(20),
    );
    refused(&o, "footer states");
}

#[test]
fn errors_never_repeat_a_long_input_whole_nor_its_control_characters() {
    let d = scratch("longinput");
    let long = "x".repeat(100_000);
    for args in [
        vec!["run", "--preset", &long],
        vec!["run", "--metrics", &long],
        vec!["reproduce", &long],
        vec!["run", "--recipe", &long],
        vec!["sweep", "--per-seed", &long, "--seeds", "0..2"],
    ] {
        let o = run(&d, &args);
        refused(&o, "characters");
        assert!(
            o.stderr.len() < 1000,
            "{} bytes: {}",
            o.stderr.len(),
            stderr(&o)
        );
    }
    let o = run(&d, &["run", "--recipe", "a\u{1b}[31mred"]);
    refused(&o, "u{1b}");
    assert!(!o.stderr.contains(&0x1b), "{}", stderr(&o));
}

#[test]
fn a_command_writing_several_files_refuses_before_writing_any() {
    let d = scratch("several");
    // run: a Tiled map whose tileset's place holds a link; a picture beside a linked --save.
    symlink(d.join("nowhere"), d.join("cavesweep-tiles.png")).unwrap();
    refused(&run(&d, &["run", "--save", "a.tmx"]), "symbolic link");
    refused(
        &run(&d, &["run", "--save", "a.tmx", "--force"]),
        "symbolic link",
    );
    assert!(!d.join("a.tmx").exists());
    symlink(d.join("nowhere"), d.join("l.csv")).unwrap();
    refused(
        &run(
            &d,
            &[
                "run", "--png", "p.png", "--save", "a.txt", "--save", "l.csv",
            ],
        ),
        "symbolic link",
    );
    assert!(!d.join("p.png").exists() && !d.join("a.txt").exists());
    assert!(!d.join("nowhere").exists());
    // bench: refused before measuring, even with --force.
    fs::create_dir(d.join("bo")).unwrap();
    symlink(d.join("nowhere"), d.join("bo/stages.csv")).unwrap();
    let o = run_limited(
        &d,
        &[
            "bench",
            "--preset",
            "classic-4-5",
            "--seconds",
            "60",
            "--repeats",
            "1",
            "--out",
            "bo",
            "--force",
        ],
        Duration::from_secs(30),
    );
    refused(&o, "symbolic link");
    assert!(!d.join("bo/bench.csv").exists());
    // reproduce: a rerun whose last picture's place holds a link rewrites nothing.
    ok(&run(
        &d,
        &["reproduce", "chapter", "--seeds", "20", "--out", "rp"],
    ));
    let last = "audit-trajectory.png";
    fs::remove_file(d.join("rp").join(last)).unwrap();
    symlink(d.join("nowhere"), d.join("rp").join(last)).unwrap();
    let before = snapshot(&d.join("rp"));
    refused(
        &run(
            &d,
            &[
                "reproduce",
                "chapter",
                "--seeds",
                "10",
                "--out",
                "rp",
                "--force",
            ],
        ),
        "symbolic link",
    );
    assert_eq!(snapshot(&d.join("rp")), before);
}

#[test]
fn a_search_write_that_fails_leaves_whole_rows_and_the_rerun_finishes_the_file() {
    let d = scratch("enospc");
    let args = [
        "search",
        "--preset",
        "classic-4-5",
        "--seeds",
        "0..20000",
        "--where",
        "components >= 1",
        "--out",
        "s.csv",
    ];
    ok(&run(&d, &args));
    let want = fs::read(d.join("s.csv")).unwrap();
    fs::remove_file(d.join("s.csv")).unwrap();
    fs::remove_dir_all(d.join("s.csv.checkpoint")).unwrap();
    // The third write (the header, then batches of rows) fails as a full disk would, after
    // its bytes reached the file.
    let child = Command::new(bin())
        .args(args)
        .current_dir(&d)
        .env("CAVESWEEP_FAILPOINT", "search-write@3:enospc")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = common::wait_within(
        child,
        Duration::from_secs(60),
        "search with a failing write",
    );
    refused(&o, "No space left");
    let got = fs::read(d.join("s.csv")).unwrap();
    assert!(
        got.ends_with(b"\n") && got.len() < want.len(),
        "{} bytes",
        got.len()
    );
    assert!(
        want.starts_with(&got),
        "not a prefix of the whole file: whole rows only"
    );
    ok(&run(&d, &args));
    assert_eq!(fs::read(d.join("s.csv")).unwrap(), want);
}
