//! End-to-end tests of the sweep store through the real binary: one writer per folder, a kill
//! at every stage of the final assembly and of merge (failpoints, no timing races), a full disk,
//! damaged records and files detected and redone, seeds up to u64::MAX, and flat memory on huge
//! grids and seed ranges.

mod common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

/// A small two-point sweep with a gate and every seed kept: 10 chunks per point.
const FLAGS: [&str; 10] = [
    "--preset",
    "chapter-strict",
    "--seeds",
    "0..600",
    "--vary",
    "fill=0.40,0.45",
    "--gate",
    "connected_fraction>=0.999 && components<=1",
    "--per-seed",
    "all",
];

fn sweep_cmd(out: &Path, extra: &[&str]) -> Command {
    let mut c = bin();
    c.arg("sweep").args(FLAGS).arg("--out").arg(out).args(extra);
    c
}

fn sweep(out: &Path, extra: &[&str]) -> Output {
    sweep_cmd(out, extra).output().unwrap()
}

/// Run with failpoint `fp` set; returns the output.
fn sweep_fp(out: &Path, fp: &str, extra: &[&str]) -> Output {
    sweep_cmd(out, extra)
        .env("CAVESWEEP_FAILPOINT", fp)
        .output()
        .unwrap()
}

fn killed(o: &Output) -> bool {
    o.status.signal() == Some(9)
}

/// A reference folder: the sweep run once, uninterrupted.
fn reference(dir: &Path) -> PathBuf {
    let r = dir.join("ref");
    let o = sweep(&r, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    r
}

fn db(out: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(out.join("cavesweep.sqlite")).unwrap()
}

fn no_temporaries(out: &Path) {
    for e in fs::read_dir(out).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.contains(".tmp"), "{n} left in {}", out.display());
    }
}

/// The CRC-32 a point record carries, transcribed from the store's documented layout: point,
/// closed, seeds, passed (little-endian), the done-ranges blob with its length, the stats blob.
fn point_crc(point: u64, closed: bool, seeds: u64, passed: u64, done: &[u8], stats: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&point.to_le_bytes());
    h.update(&[closed as u8]);
    h.update(&seeds.to_le_bytes());
    h.update(&passed.to_le_bytes());
    h.update(&(done.len() as u64).to_le_bytes());
    h.update(done);
    h.update(stats);
    h.finalize()
}

/// Rewrite point `p`'s record with `edit` applied, re-checksummed (so only the consistency
/// checks, not the checksum, can catch it).
fn edit_point(out: &Path, p: i64, edit: impl FnOnce(&mut (bool, u64, u64, Vec<u8>, Vec<u8>))) {
    let c = db(out);
    let mut rec: (bool, u64, u64, Vec<u8>, Vec<u8>) = c
        .query_row(
            "SELECT closed, seeds, passed, done, stats FROM points WHERE point = ?1",
            [p],
            |r| {
                Ok((
                    r.get::<_, i64>(0)? != 0,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, i64>(2)? as u64,
                    r.get(3)?,
                    r.get(4)?,
                ))
            },
        )
        .unwrap();
    edit(&mut rec);
    let crc = point_crc(p as u64, rec.0, rec.1, rec.2, &rec.3, &rec.4);
    c.execute(
        "UPDATE points SET closed=?2, seeds=?3, passed=?4, done=?5, stats=?6, crc=?7 WHERE point=?1",
        rusqlite::params![p, rec.0 as i64, rec.1 as i64, rec.2 as i64, rec.3, rec.4, crc as i64],
    )
    .unwrap();
}

#[test]
fn a_second_writer_is_refused_at_once_naming_the_first() {
    let d = scratch("store-lock");
    let out = d.join("o");
    let mut first = sweep_cmd(&out, &[])
        .env("CAVESWEEP_FAILPOINT", "locked:pause")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first process says it holds the lock (a line, not a timer).
    let mut line = String::new();
    BufReader::new(first.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("paused"), "{line}");
    let second = sweep(&out, &[]);
    assert_one_line_error(&second, "in use by another cavesweep");
    assert!(
        stderr(&second).contains(&format!("pid {}", first.id())),
        "{}",
        stderr(&second)
    );
    // --force does not break in, and merge --out is refused the same way.
    assert_one_line_error(&sweep(&out, &["--force"]), "in use by another cavesweep");
    let shard = d.join("unused");
    let o = run(&[
        "merge",
        shard.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    first.kill().unwrap();
    first.wait().unwrap();
    // The kernel released the lock with the process: no stale lock.
    let o = sweep(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference(&d), &out);
}

#[test]
fn a_kill_at_every_stage_then_a_rerun_gives_identical_files() {
    let d = scratch("store-kill");
    let r = reference(&d);
    for (i, fp) in [
        "checkpoint@1",
        "checkpoint@2",
        "final:summary.csv",
        "final:trajectory.csv",
        "final:components.csv",
        "seeds-partial",
        "final:seeds.csv",
        "final:manifest.json",
        "completed",
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("k{i}"));
        let o = sweep_fp(&out, fp, &["--threads", "2"]);
        assert!(killed(&o), "{fp}: not killed: {}", stderr(&o));
        let o = sweep(&out, &["--threads", "1"]);
        assert!(o.status.success(), "{fp}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
        no_temporaries(&out);
        // A whole sweep's rows are dropped once seeds.csv is recorded.
        let rows: i64 = db(&out)
            .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "{fp}");
        // And a third run only verifies.
        let o = sweep(&out, &[]);
        assert!(
            stderr(&o).contains("already complete"),
            "{fp}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_full_disk_is_a_one_line_error_and_the_rerun_finishes() {
    let d = scratch("store-enospc");
    let r = reference(&d);
    for (i, fp) in [
        "create-store:enospc",
        "commit@2:enospc",
        "write:manifest.json:enospc",
        "write:summary.csv:enospc",
        "write:seeds.csv:enospc",
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("f{i}"));
        let o = sweep_fp(&out, fp, &[]);
        assert_one_line_error(&o, "No space left on device");
        no_temporaries(&out);
        let o = sweep(&out, &[]);
        assert!(o.status.success(), "{fp}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
    }
}

#[test]
fn damaged_point_records_are_detected_and_recomputed() {
    let d = scratch("store-damage");
    let r = reference(&d);
    type Edit = fn(&mut (bool, u64, u64, Vec<u8>, Vec<u8>));
    let edits: [(&str, Edit); 4] = [
        ("passed > seeds", |rec| rec.2 = rec.1 + 1),
        ("seeds not matching the done chunks", |rec| rec.1 += 7),
        ("statistics that do not decode", |rec| {
            rec.4.truncate(rec.4.len() / 2)
        }),
        ("an open point claiming no done chunks", |rec| {
            rec.0 = false;
            rec.3 = vec![0];
        }),
    ];
    for (i, (what, edit)) in edits.into_iter().enumerate() {
        let out = d.join(format!("e{i}"));
        fs::create_dir_all(&out).unwrap();
        assert!(sweep(&out, &[]).status.success());
        edit_point(&out, 1, edit);
        let o = sweep(&out, &[]);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("repaired: grid point 1"),
            "{what}: {}",
            stderr(&o)
        );
        assert_same_outputs(&r, &out);
    }
    // A checksum mismatch (garbage written over a record).
    let out = d.join("garbage");
    assert!(sweep(&out, &[]).status.success());
    db(&out)
        .execute("UPDATE points SET stats = x'deadbeef' WHERE point = 0", [])
        .unwrap();
    let o = sweep(&out, &[]);
    assert!(stderr(&o).contains("checksum"), "{}", stderr(&o));
    assert_same_outputs(&r, &out);
}

#[test]
fn a_damaged_or_foreign_store_is_a_one_line_error_and_force_starts_over() {
    let d = scratch("store-badfile");
    let r = reference(&d);
    let out = d.join("o");
    assert!(sweep(&out, &[]).status.success());
    // An unknown format version.
    db(&out)
        .execute("UPDATE meta SET value = '99' WHERE key = 'format'", [])
        .unwrap();
    assert_one_line_error(&sweep(&out, &[]), "format \"99\"");
    // A truncated file.
    let p = out.join("cavesweep.sqlite");
    let bytes = fs::read(&p).unwrap();
    fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    assert_one_line_error(&sweep(&out, &[]), "damaged");
    // Garbage.
    fs::write(&p, vec![0x5a; 8192]).unwrap();
    assert_one_line_error(&sweep(&out, &[]), "damaged");
    let o = sweep(&out, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&r, &out);
    // A folder written by the old JSON checkpoint format is refused, --force replaces it.
    let old = d.join("old");
    fs::create_dir_all(old.join("parts")).unwrap();
    fs::write(
        old.join("state.json"),
        r#"{"format":1,"fingerprint":{},"shard":"1/1","chunks":1,"done":[],"points":[]}"#,
    )
    .unwrap();
    fs::write(old.join("parts/0.csv"), "seed\n").unwrap();
    assert_one_line_error(&sweep(&old, &[]), "older cavesweep");
    assert!(sweep(&old, &["--force"]).status.success());
    assert!(!old.join("state.json").exists() && !old.join("parts").exists());
    assert_same_outputs(&r, &old);
    // --force removes only what cavesweep wrote.
    fs::write(old.join("notes.txt"), "mine").unwrap();
    assert!(sweep(&old, &["--force", "--threads", "1"]).status.success());
    assert_eq!(fs::read_to_string(old.join("notes.txt")).unwrap(), "mine");
}

#[test]
fn damaged_or_missing_seed_rows_are_regenerated() {
    let d = scratch("store-rows");
    let r = reference(&d);
    // Stop after every chunk is done but before seeds.csv: the rows are in the store.
    let out = d.join("o");
    assert!(killed(&sweep_fp(&out, "final:summary.csv", &[])));
    let c = db(&out);
    let chunks: Vec<i64> = c
        .prepare("SELECT chunk FROM rows ORDER BY chunk")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(chunks.len() >= 3);
    c.execute(
        "UPDATE rows SET data = x'313233' WHERE chunk = ?1",
        [chunks[0]],
    )
    .unwrap();
    c.execute("DELETE FROM rows WHERE chunk = ?1", [chunks[2]])
        .unwrap();
    drop(c);
    let o = sweep(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("repaired"), "{}", stderr(&o));
    assert_same_outputs(&r, &out);
}

#[test]
fn a_complete_folder_whose_files_changed_is_finished_again() {
    let d = scratch("store-files");
    let r = reference(&d);
    let out = d.join("o");
    assert!(sweep(&out, &[]).status.success());
    for (name, change) in [
        ("seeds.csv", None),
        ("summary.csv", Some(b"x\n".as_slice())),
        ("trajectory.csv", None),
        ("manifest.json", Some(b"{}".as_slice())),
    ] {
        match change {
            None => fs::remove_file(out.join(name)).unwrap(),
            Some(bytes) => fs::write(out.join(name), bytes).unwrap(),
        }
        let o = sweep(&out, &[]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(name), "{name}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
    }
}

#[test]
fn an_open_point_with_overlapping_done_ranges_is_recomputed() {
    let d = scratch("store-open");
    let args = [
        "sweep",
        "--seeds",
        "0..20000",
        "--chunk",
        "500",
        "--metrics",
        "floor_fraction,components",
        "--per-seed",
        "kept",
        "--gate",
        "components<=1",
        "--threads",
        "1",
    ];
    let reference = d.join("ref");
    let o = bin()
        .args(args)
        .arg("--out")
        .arg(&reference)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("o");
    let o = bin()
        .args(args)
        .arg("--out")
        .arg(&out)
        .env("CAVESWEEP_FAILPOINT", "checkpoint@1")
        .output()
        .unwrap();
    assert!(killed(&o));
    edit_point(&out, 0, |rec| {
        assert!(!rec.0, "the point is open after one checkpoint");
        let mut done: Vec<(u64, u64)> = postcard::from_bytes(&rec.3).unwrap();
        done.push((0, 1)); // overlaps the first range
        rec.3 = postcard::to_allocvec(&done).unwrap();
    });
    let o = bin().args(args).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("overlap"), "{}", stderr(&o));
    assert_same_outputs(&reference, &out);
}

#[test]
fn seeds_up_to_u64_max_are_all_swept() {
    let d = scratch("store-u64max");
    for (range, n, last) in [
        (
            "18446744073709551000..18446744073709551615",
            615,
            "18446744073709551614",
        ),
        (
            "18446744073709551614..18446744073709551615",
            1,
            "18446744073709551614",
        ),
        (
            "18446744073709551600..=18446744073709551614",
            15,
            "18446744073709551614",
        ),
    ] {
        let out = d.join(range.replace(['.', '='], "_"));
        let o = run(&[
            "sweep",
            "--seeds",
            range,
            "--per-seed",
            "all",
            "--metrics",
            "floor_fraction",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let seeds = fs::read_to_string(out.join("seeds.csv")).unwrap();
        let rows: Vec<&str> = seeds.lines().skip(1).collect();
        assert_eq!(rows.len(), n, "{range}");
        assert!(rows.last().unwrap().starts_with(last), "{range}");
    }
}

/// `wait4` on our child `pid` with `flags`: its exit status once it has exited, `None` while it
/// runs (with `WNOHANG`).
fn reap(pid: libc::pid_t, flags: libc::c_int) -> Option<std::process::ExitStatus> {
    let mut status = 0;
    // SAFETY: `pid` is our child, not yet reaped (its std Child is forgotten by the caller).
    let r = unsafe { libc::waitpid(pid, &mut status, flags) };
    if r == 0 {
        return None;
    }
    assert_eq!(r, pid, "waitpid failed");
    Some(std::process::ExitStatus::from_raw(status))
}

/// The peak RSS (kB) of running process `pid` so far: `VmHWM` of its memory map.
///
/// Why not `wait4`'s `ru_maxrss`: Linux carries the pre-exec memory map's peak into it, and the
/// child is forked from this test process, which may hold hundreds of MB for other tests running
/// in parallel (the 100,000-point grid's CSV files): measured 404 MB for a sweep whose own peak
/// was 29 MB. `VmHWM` belongs to the map the child got at exec.
fn hwm_kb(pid: libc::pid_t) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak RSS (kB) of a child, polled every 10 ms until it exits, and its exit status.
fn wait_rss(child: std::process::Child) -> (std::process::ExitStatus, u64) {
    let pid = child.id() as libc::pid_t;
    std::mem::forget(child);
    let mut peak = 0;
    loop {
        peak = peak.max(hwm_kb(pid).unwrap_or(0));
        if let Some(status) = reap(pid, libc::WNOHANG) {
            return (status, peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Send SIGINT every 100 ms until `child` exits (a minute at most, then SIGKILL); its exit
/// status and peak RSS in kB.
fn interrupt_until_exit(child: std::process::Child) -> (std::process::ExitStatus, u64) {
    let pid = child.id() as libc::pid_t;
    std::mem::forget(child);
    let t0 = std::time::Instant::now();
    let mut peak = 0;
    loop {
        peak = peak.max(hwm_kb(pid).unwrap_or(0));
        if let Some(status) = reap(pid, libc::WNOHANG) {
            return (status, peak);
        }
        let sig = if t0.elapsed() > std::time::Duration::from_secs(60) {
            libc::SIGKILL
        } else {
            libc::SIGINT
        };
        // SAFETY: signalling our own, not yet reaped child.
        unsafe { libc::kill(pid, sig) };
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn huge_seed_ranges_start_checkpoint_and_stop_with_flat_memory() {
    let d = scratch("store-huge");
    for range in ["0..18446744073709551615", "0..1e12"] {
        let out = d.join(range.replace('.', "_"));
        let mut child = bin()
            .args([
                "sweep",
                "--seeds",
                range,
                "--per-seed",
                "none",
                "--metrics",
                "floor_fraction",
                "--out",
                out.to_str().unwrap(),
            ])
            .env("CAVESWEEP_FAILPOINT", "checkpoint@2:pause")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Paused right after its second checkpoint: started, checkpointed, memory at its working
        // size. Then Ctrl-C's signal.
        let mut line = String::new();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        err.read_line(&mut line).unwrap();
        assert!(line.contains("paused"), "{range}: {line}");
        assert!(out.join("manifest.json").exists());
        // The failpoint's thread sleeps: the first Ctrl-C asks it to stop, the second exits at
        // once (exit 130). Signals sent back to back can merge into one, so keep signalling.
        let (status, rss_kb) = interrupt_until_exit(child);
        assert_eq!(status.code(), Some(130), "{range}");
        assert!(rss_kb < 256 * 1024, "{range}: peak RSS {rss_kb} kB");
        // Resumable: the store holds the checkpoint.
        let done: i64 = db(&out)
            .query_row("SELECT count(*) FROM points", [], |r| r.get(0))
            .unwrap();
        assert_eq!(done, 1, "{range}");
    }
}

#[test]
fn a_100000_point_grid_stays_under_the_memory_cap() {
    let d = scratch("store-grid");
    let out = d.join("o");
    let grid = |out: &Path| {
        let mut c = bin();
        c.args([
            "sweep",
            "--set",
            "rows=16",
            "--set",
            "cols=16",
            "--vary",
            "fill=0.30:0.70:0.0001",
            "--vary",
            "steps=1..=25",
            "--seeds",
            "0..2",
            "--per-seed",
            "kept",
            "--gate",
            "components<=1",
            "--out",
            out.to_str().unwrap(),
        ]);
        c
    };
    let child = grid(&out).stderr(Stdio::null()).spawn().unwrap();
    let (status, rss_kb) = wait_rss(child);
    assert!(status.success());
    assert!(rss_kb < 256 * 1024, "peak RSS {rss_kb} kB");
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 4001 * 25);
    let traj = fs::read_to_string(out.join("trajectory.csv")).unwrap();
    // Steps 1..=25 give 2..=26 trajectory rows per point.
    assert_eq!(traj.lines().count(), 1 + 4001 * (2..=26).sum::<usize>());

    // A disk that stops taking checkpoints (the checkpoint thread paused after its second) must
    // stall the sweep, not let closed points pile up in memory: the whole grid takes ~2 s, so
    // 4 s paused is time enough to reach the end unchecked.
    let slow = d.join("slow");
    let mut child = grid(&slow)
        .env("CAVESWEEP_FAILPOINT", "checkpoint@2:pause")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("paused"), "{line}");
    std::thread::sleep(std::time::Duration::from_secs(4));
    let (_, rss_kb) = interrupt_until_exit(child);
    assert!(
        rss_kb < 256 * 1024,
        "peak RSS {rss_kb} kB with checkpoints stalled"
    );
    // And the rerun finishes the same files.
    assert!(grid(&slow).output().unwrap().status.success());
    for f in [
        "summary.csv",
        "trajectory.csv",
        "components.csv",
        "seeds.csv",
    ] {
        assert!(
            fs::read(out.join(f)).unwrap() == fs::read(slow.join(f)).unwrap(),
            "{f} differs after the stalled run's resume"
        );
    }
}

fn merge(inputs: &[&Path], out: &Path, extra: &[&str], fp: Option<&str>) -> Output {
    let mut c = bin();
    c.arg("merge")
        .args(inputs)
        .arg("--out")
        .arg(out)
        .args(extra);
    if let Some(fp) = fp {
        c.env("CAVESWEEP_FAILPOINT", fp);
    }
    c.output().unwrap()
}

/// A whole folder (unsharded, or the one shard of a 1/1 split, as a one-task array writes) drops
/// its seed rows once `seeds.csv` holds them; merging it regenerates them. A finished shard whose
/// row records were lost or damaged is repaired by rerunning its sweep command, even though its
/// own `seeds.csv` is intact, and then merges.
#[test]
fn whole_folders_merge_and_a_finished_shards_lost_rows_are_repaired_by_its_rerun() {
    let d = scratch("store-merge-whole");
    let r = reference(&d);
    let one = d.join("one");
    assert!(sweep(&one, &["--shard", "1/1"]).status.success());
    for (input, name) in [(&r, "m-ref"), (&one, "m-one")] {
        let out = d.join(name);
        let o = merge(&[input], &out, &[], None);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
    }
    let shards: Vec<PathBuf> = (1..=2).map(|k| d.join(format!("shard-{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        let o = sweep(s, &["--shard", &format!("{}/2", k + 1)]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let first_chunk = |s: &Path| -> i64 {
        db(s)
            .query_row("SELECT min(chunk) FROM rows", [], |r| r.get(0))
            .unwrap()
    };
    let c0 = first_chunk(&shards[0]);
    db(&shards[0])
        .execute("DELETE FROM rows WHERE chunk = ?1", [c0])
        .unwrap();
    let c1 = first_chunk(&shards[1]);
    db(&shards[1])
        .execute("UPDATE rows SET data = x'313233' WHERE chunk = ?1", [c1])
        .unwrap();
    let refs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let o = merge(&refs, &d.join("m-bad"), &[], None);
    assert_one_line_error(&o, "rerun");
    for (k, s) in shards.iter().enumerate() {
        let o = sweep(s, &["--shard", &format!("{}/2", k + 1)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("repaired"),
            "shard {}: {}",
            k + 1,
            stderr(&o)
        );
        // Repaired once: the next rerun only verifies.
        let o = sweep(s, &["--shard", &format!("{}/2", k + 1)]);
        assert!(stderr(&o).contains("already complete"), "{}", stderr(&o));
    }
    let out = d.join("m-good");
    let o = merge(&refs, &out, &[], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&r, &out);
}

#[test]
fn merge_is_atomic_refuses_bad_inputs_and_never_writes_into_them() {
    let d = scratch("store-merge");
    let r = reference(&d);
    let shards: Vec<PathBuf> = (1..=3).map(|k| d.join(format!("shard-{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        let o = sweep(s, &["--shard", &format!("{}/3", k + 1)]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let refs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let snapshot = |p: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.display().to_string(), fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let before: Vec<_> = shards.iter().map(|s| snapshot(s)).collect();
    // Never into an input, --force or not.
    for extra in [&[][..], &["--force"][..]] {
        let o = merge(&refs, &shards[1], extra, None);
        assert_one_line_error(&o, "never writes into its inputs");
        let o = merge(&refs, &shards[0].join("sub"), extra, None);
        assert_one_line_error(&o, "never writes into its inputs");
    }
    // Missing shards are named.
    let o = merge(&refs[..1], &d.join("m-missing"), &[], None);
    assert_one_line_error(&o, "missing shards 2/3, 3/3");
    // A shard given twice.
    let o = merge(&[refs[0], refs[0], refs[1]], &d.join("m-twice"), &[], None);
    assert_one_line_error(&o, "both shard 1/3");
    // A killed merge, at each stage, is finished by rerunning it.
    for (i, fp) in [
        "merge:points",
        "merge:rows",
        "final:summary.csv",
        "seeds-partial",
        "final:manifest.json",
        "completed",
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("m{i}"));
        let o = merge(&refs, &out, &[], Some(fp));
        assert!(killed(&o), "{fp}: {}", stderr(&o));
        let o = merge(&refs, &out, &[], None);
        assert!(o.status.success(), "{fp}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
        let o = merge(&refs, &out, &[], None);
        assert!(stderr(&o).contains("already merged"), "{}", stderr(&o));
    }
    // The inputs are byte-for-byte untouched (store and lock included).
    for (s, b) in shards.iter().zip(&before) {
        let mut now = snapshot(s);
        let mut b = b.clone();
        // The lock file's content names the last process that held it exclusively: unchanged.
        now.retain(|(n, _)| !n.ends_with("cavesweep.lock"));
        b.retain(|(n, _)| !n.ends_with("cavesweep.lock"));
        assert!(now == b, "{} changed", s.display());
    }
    // An unfinished shard is refused.
    let unfinished = d.join("unfinished");
    assert!(killed(&sweep_fp(
        &unfinished,
        "final:summary.csv",
        &["--shard", "2/3"]
    )));
    let o = merge(
        &[refs[0], &unfinished, refs[2]],
        &d.join("m-unf"),
        &[],
        None,
    );
    assert_one_line_error(&o, "not a finished shard");
}

#[test]
fn absurd_thread_counts_and_interrupted_first_milliseconds() {
    let d = scratch("store-edges");
    let out = d.join("o");
    assert_one_line_error(&sweep(&out, &["--threads", "100000"]), "--threads 100000");
    assert_one_line_error(&sweep(&out, &["--threads", "0"]), "--threads");
    // Killed while creating the store: the rerun makes it again.
    assert!(killed(&sweep_fp(&out, "create-store", &[])));
    let o = sweep(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference(&d), &out);
    // A temporary a killed process left beside the store it wrote is removed by the rerun
    // (beside a store without its schema, nothing proves one ours: see tests/hostile.rs).
    fs::write(out.join("manifest.json.tmp12345"), b"half").unwrap();
    let o = sweep(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_temporaries(&out);
    assert_same_outputs(&reference(&d), &out);
}

#[test]
fn a_running_sweep_shows_its_finished_points_as_they_will_be_written() {
    let d = scratch("store-provisional");
    let args = [
        "sweep",
        "--vary",
        "fill=0.40:0.50:0.01",
        "--seeds",
        "0..300",
        "--metrics",
        "floor_fraction,components",
        "--threads",
        "1",
    ];
    let out = d.join("o");
    // Stopped after its second checkpoint, with some points finished and none final.
    let o = bin()
        .args(args)
        .arg("--out")
        .arg(&out)
        .env("CAVESWEEP_FAILPOINT", "checkpoint@2")
        .output()
        .unwrap();
    assert!(killed(&o));
    assert!(!out.join("summary.csv").exists());
    let p = cavesweep::sweep::state::provisional(&out).unwrap();
    assert_eq!(p.points, 11);
    assert!(p.points_done >= 1, "{}", p.points_done);
    // `report` on the interrupted folder shows the finished points (and says it is partial).
    let rep = d.join("rep");
    let o = bin()
        .args(["report"])
        .arg(&out)
        .arg("--out")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let html = fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("img/heat-wall-fraction.png") || html.contains("img/trajectory.png"));
    let o = bin().args(args).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Every provisional row is the final file's row for that point, byte for byte.
    for (rows, name) in [
        (&p.summary, "summary.csv"),
        (&p.trajectory, "trajectory.csv"),
        (&p.components, "components.csv"),
    ] {
        let final_text = fs::read_to_string(out.join(name)).unwrap();
        let text = String::from_utf8(rows.clone()).unwrap();
        assert!(text.lines().count() > 1, "{name}");
        for line in text.lines() {
            assert!(final_text.lines().any(|l| l == line), "{name}: {line}");
        }
    }
    assert_eq!(
        p.summary.iter().filter(|&&b| b == b'\n').count(),
        1 + p.points_done
    );
}

/// A grid of many points with a few seeds each makes its caves in lane batches shared across
/// points (engine::run_chunks); every point's rows must still be the ones a sweep of that point
/// alone gives: seeds.csv rows, summary row and trajectory rows, with the `fill` column removed.
/// The probabilities include ones that cannot share batches (0.25, 0.5, 1) between ones that
/// can, points of 3 seeds (batches spanning three points) and a 2-thread run.
#[test]
fn grid_points_sharing_lane_batches_give_each_points_own_rows() {
    let dir = scratch("shared_batches");
    let ps = [
        "0.45", "0.3", "0.25", "0.41", "0.5", "0.47", "1", "0.35", "0.44", "0.46",
    ];
    let grid = dir.join("grid");
    let o = run(&[
        "sweep",
        "--vary",
        &format!("fill={}", ps.join(",")),
        "--seeds",
        "7..10",
        "--chunk",
        "3",
        "--per-seed",
        "all",
        "--threads",
        "2",
        "--out",
        grid.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = |d: &Path, f: &str| -> Vec<String> {
        fs::read_to_string(d.join(f))
            .unwrap()
            .lines()
            .skip(1)
            .map(String::from)
            .collect()
    };
    // Drop field `i` of a CSV row (no quoted fields in these files).
    let drop = |row: &str, i: usize| -> String {
        let mut f: Vec<&str> = row.split(',').collect();
        f.remove(i);
        f.join(",")
    };
    let (g_seeds, g_summary, g_traj) = (
        lines(&grid, "seeds.csv"),
        lines(&grid, "summary.csv"),
        lines(&grid, "trajectory.csv"),
    );
    for p in ps {
        let one = dir.join(format!("p{p}"));
        let o = run(&[
            "sweep",
            "--set",
            &format!("fill={p}"),
            "--seeds",
            "7..10",
            "--per-seed",
            "all",
            "--threads",
            "1",
            "--out",
            one.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let of_p = |rows: &[String], i: usize| -> Vec<String> {
            rows.iter()
                .filter(|r| r.split(',').nth(i) == Some(p))
                .map(|r| drop(r, i))
                .collect()
        };
        assert_eq!(
            of_p(&g_seeds, 1),
            lines(&one, "seeds.csv"),
            "seeds.csv at fill={p}"
        );
        assert_eq!(
            of_p(&g_summary, 0),
            lines(&one, "summary.csv"),
            "summary.csv at fill={p}"
        );
        assert_eq!(
            of_p(&g_traj, 0),
            lines(&one, "trajectory.csv"),
            "trajectory at fill={p}"
        );
        assert_eq!(lines(&one, "seeds.csv").len(), 3);
    }
}

/// A finished sweep drops its seed rows (they are in seeds.csv) and gives their pages back: the
/// store keeps no free pages, so it is a fraction of seeds.csv, not as big.
#[test]
fn a_finished_store_gives_its_free_pages_back() {
    let d = scratch("store-vacuum");
    let out = d.join("o");
    let o = bin()
        .args(["sweep", "--seeds", "0..20000", "--per-seed", "all", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let c = db(&out);
    let free: i64 = c
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .unwrap();
    let rows: i64 = c
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .unwrap();
    assert_eq!((rows, free), (0, 0), "rows dropped and their pages freed");
    let store = fs::metadata(out.join("cavesweep.sqlite")).unwrap().len();
    let seeds = fs::metadata(out.join("seeds.csv")).unwrap().len();
    assert!(store * 4 < seeds, "store {store} bytes, seeds.csv {seeds}");
}

#[test]
fn a_report_of_a_store_with_a_damaged_record_says_it_left_it_out() {
    let d = scratch("store-report-damaged");
    let out = d.join("o");
    assert!(sweep(&out, &[]).status.success());
    // As an interrupted sweep leaves it: no summary.csv yet, the statistics only in the store.
    fs::remove_file(out.join("summary.csv")).unwrap();
    db(&out)
        .execute("UPDATE points SET stats = x'deadbeef' WHERE point = 0", [])
        .unwrap();
    let rep = d.join("rep");
    let o = bin()
        .args([
            "report",
            out.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("damaged records left out")
            || stderr(&o).contains("damaged records left out"),
        "the status line says so: {} {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    let md = fs::read_to_string(rep.join("README.md")).unwrap();
    assert!(md.contains("left out (point 0)"), "{md}");
}

/// The folder a user names is followed like `cd` follows it: `--out` that is a link, or whose
/// parent is one (as `/home` linked to `/data/home` makes every path), works and writes the
/// same files as a plain folder, for sweep, merge (input and output) and a search's checkpoint.
/// (SQLite's no-follow flag refuses a link in any component of a name, so the store was
/// unreachable through one.)
#[test]
fn folders_named_through_links_are_followed() {
    let d = scratch("store-linked");
    let r = reference(&d);
    fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("lnk")).unwrap();
    for out in [d.join("lnk"), d.join("lnk/sub")] {
        let o = sweep(&out, &[]);
        assert!(o.status.success(), "{}: {}", out.display(), stderr(&o));
        assert_same_outputs(&out, &r);
    }
    let o = merge(&[&d.join("lnk/sub")], &d.join("lnk/merged"), &[], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("real/merged/summary.csv").is_file());
    let o = bin()
        .args(["search", "--seeds", "0..100", "--where", "components<=2"])
        .arg("--out")
        .arg(d.join("lnk/found.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("real/found.csv").is_file());
}

/// A file of the user's named `cavesweep.lock` in `--out` is not cavesweep's: the sweep (and
/// merge) is refused and the file keeps its text, beside other files or alone.
#[test]
fn a_users_file_named_like_the_lock_is_kept() {
    let d = scratch("store-user-lock");
    let r = reference(&d);
    for other in [true, false] {
        let out = d.join(format!("u{other}"));
        fs::create_dir(&out).unwrap();
        fs::write(out.join("cavesweep.lock"), "USER DATA\n").unwrap();
        if other {
            fs::write(out.join("notes.txt"), "notes\n").unwrap();
        }
        assert_one_line_error(&sweep(&out, &[]), "is not a cavesweep lock file");
        assert_eq!(
            fs::read_to_string(out.join("cavesweep.lock")).unwrap(),
            "USER DATA\n"
        );
        assert!(!out.join("cavesweep.sqlite").exists());
        let o = merge(&[&r], &out, &[], None);
        assert!(!o.status.success(), "{}", stderr(&o));
        assert_eq!(
            fs::read_to_string(out.join("cavesweep.lock")).unwrap(),
            "USER DATA\n"
        );
    }
}
