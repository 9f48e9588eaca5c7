//! End-to-end tests of the Parquet tables (issue 41) through the real binary: `sweep --format
//! parquet|both` writes byte-identical files across thread counts and chunkings, after a kill
//! at every stage of the run and of the final assembly, and when shards are merged; every
//! Parquet table reads back as exactly the CSV it stands for; `report` reads a folder that has
//! only Parquet; `search --out FILE.parquet` holds the CSV's rows, resumes after a kill and
//! leaves a readable file after Ctrl-C. (pyarrow, polars and DuckDB read them in
//! python/tests/test_parquet.py.)

mod common;

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use cavesweep::store::parquet::{self, Col};
use cavesweep::sweep::folder::parquet_as_csv;
use common::*;

/// Two grid points of two `post` values (a text parameter) and two fills, an exit that some
/// caves cannot reach (empty `path_length`: nulls), a gate and a named gate, every seed kept:
/// several chunks per point.
const FLAGS: [&str; 18] = [
    "--preset",
    "classic-4-5",
    "--set",
    "exit=5,5",
    "--seeds",
    "0..700",
    "--vary",
    "fill=0.40,0.45",
    "--vary",
    "post=bridge,keep-largest",
    "--gate",
    "components<=3",
    "--gate",
    "open=floor_fraction>=0.6",
    "--per-seed",
    "all",
    "--metrics",
    "all",
];

const TABLES: [&str; 4] = ["summary", "trajectory", "components", "seeds"];

fn sweep_cmd(out: &Path, extra: &[&str]) -> Command {
    let mut c = bin();
    c.arg("sweep").args(FLAGS).arg("--out").arg(out).args(extra);
    c
}

fn sweep(out: &Path, extra: &[&str]) -> Output {
    sweep_cmd(out, extra).output().unwrap()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

fn killed(o: &Output) -> bool {
    o.status.signal() == Some(9)
}

/// The files of table `stem` in `dir`: the Parquet file's bytes.
fn parquet_bytes(dir: &Path, stem: &str) -> Vec<u8> {
    fs::read(dir.join(format!("{stem}.parquet"))).unwrap()
}

/// Every Parquet table of `dir` is exactly the CSV of `csv_dir`, read back as CSV.
fn assert_parquet_is_csv(dir: &Path, csv_dir: &Path) {
    for stem in TABLES {
        let back = parquet_as_csv(dir, stem, u64::MAX).unwrap().unwrap();
        let csv = fs::read(csv_dir.join(format!("{stem}.csv"))).unwrap();
        assert!(
            back == csv,
            "{stem}.parquet read back differs from {stem}.csv:\n{}\n---\n{}",
            String::from_utf8_lossy(&back[..back.len().min(600)]),
            String::from_utf8_lossy(&csv[..csv.len().min(600)])
        );
    }
}

#[test]
fn parquet_tables_are_the_csv_typed_and_identical_across_threads_and_chunkings() {
    let d = scratch("parquet-identity");
    let csv = d.join("csv");
    ok(&sweep(&csv, &["--threads", "2"]));
    let both = d.join("both");
    ok(&sweep(&both, &["--format", "both", "--threads", "2"]));
    // The CSV files of `--format both` are the CSV sweep's, byte for byte, and the manifest
    // of a CSV sweep says nothing of Parquet.
    for stem in TABLES {
        let name = format!("{stem}.csv");
        assert!(fs::read(csv.join(&name)).unwrap() == fs::read(both.join(&name)).unwrap());
    }
    assert!(
        !fs::read_to_string(csv.join("manifest.json"))
            .unwrap()
            .contains("parquet")
    );
    assert_parquet_is_csv(&both, &csv);
    // Parquet only: the same Parquet bytes, whatever the threads and chunking.
    let mut runs: Vec<PathBuf> = Vec::new();
    for (i, extra) in [
        &["--threads", "1"][..],
        &["--threads", "2"],
        &["--threads", "2", "--chunk", "64"],
        &["--threads", "1", "--chunk", "333"],
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("p{i}"));
        let mut args = vec!["--format", "parquet"];
        args.extend_from_slice(extra);
        ok(&sweep(&out, &args));
        for stem in TABLES {
            // (The files of `--format both` differ from these only in the command and
            // definition in their metadata: they were read back as the CSV above.)
            if let Some(first) = runs.first() {
                assert!(
                    parquet_bytes(&out, stem) == parquet_bytes(first, stem),
                    "{stem}.parquet differs with {extra:?}"
                );
            }
            assert!(!out.join(format!("{stem}.csv")).exists());
        }
        assert_parquet_is_csv(&out, &csv);
        runs.push(out);
    }
    // The typed columns: seed u64, text and float parameters, booleans, nulls.
    let f = fs::File::open(runs[0].join("seeds.parquet")).unwrap();
    let t = parquet::read(f, u64::MAX).unwrap();
    assert_eq!(t.rows, 4 * 700);
    let col = |n: &str| &t.cols[t.names.iter().position(|x| x == n).unwrap()];
    assert!(matches!(col("seed"), Col::U64(_)));
    assert!(matches!(col("fill"), Col::F64(_)));
    assert!(matches!(col("post"), Col::Str(_)));
    assert!(matches!(col("passed"), Col::Bool(_)));
    assert!(matches!(col("passed[open]"), Col::Bool(_)));
    match col("path_length") {
        Col::F64(v) => {
            assert!(v.iter().any(Option::is_none), "some exits unreachable");
            assert!(v.iter().any(Option::is_some));
        }
        c => panic!("path_length {c:?}"),
    }
    // The metadata: the recipe, the command (without --chunk) and the version.
    let meta = |k: &str| t.meta.iter().find(|(x, _)| x == k).unwrap().1.clone();
    assert!(meta("cavesweep.recipe").contains("classic-4-5"));
    let cmd = meta("cavesweep.command");
    assert!(
        cmd.starts_with("cavesweep sweep --preset classic-4-5"),
        "{cmd}"
    );
    assert!(
        !cmd.contains("--chunk") && !cmd.contains("--threads"),
        "{cmd}"
    );
    assert_eq!(meta("cavesweep.version"), env!("CARGO_PKG_VERSION"));
    // A finished Parquet sweep only verifies when run again.
    let o = sweep(&runs[0], &["--format", "parquet"]);
    ok(&o);
    assert!(stderr(&o).contains("already complete"), "{}", stderr(&o));
    // A changed Parquet file is noticed and rewritten from the store.
    let p = runs[0].join("summary.parquet");
    let mut bytes = fs::read(&p).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    fs::write(&p, &bytes).unwrap();
    let o = sweep(&runs[0], &["--format", "parquet"]);
    ok(&o);
    assert!(parquet_bytes(&runs[0], "summary") == parquet_bytes(&runs[1], "summary"));
    // Another format in the same folder is another sweep: refused without --force.
    let o = sweep(&runs[0], &["--format", "csv"]);
    assert!(!o.status.success());
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn a_kill_at_every_stage_of_a_parquet_sweep_then_a_rerun_gives_identical_files() {
    let d = scratch("parquet-kill");
    let fmt = ["--format", "parquet"];
    let r = d.join("ref");
    ok(&sweep(&r, &fmt));
    for (i, fp) in [
        "checkpoint@1",
        "checkpoint@2",
        "final:summary.parquet",
        "final:trajectory.parquet",
        "final:components.parquet",
        "seeds-partial",
        "final:seeds.parquet",
        "final:manifest.json",
        "completed",
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("k{i}"));
        let o = sweep_cmd(&out, &["--format", "parquet", "--threads", "2"])
            .env("CAVESWEEP_FAILPOINT", fp)
            .output()
            .unwrap();
        assert!(killed(&o), "{fp}: not killed: {}", stderr(&o));
        let o = sweep(&out, &["--format", "parquet", "--threads", "1"]);
        assert!(o.status.success(), "{fp}: {}", stderr(&o));
        assert_same_outputs(&r, &out);
        for e in fs::read_dir(&out).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!n.contains(".tmp"), "{fp}: {n} left behind");
        }
    }
}

#[test]
fn parquet_shards_merge_into_the_whole_sweep() {
    let d = scratch("parquet-merge");
    let fmt = ["--format", "parquet"];
    let r = d.join("ref");
    ok(&sweep(&r, &fmt));
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let out = d.join(format!("shard-{k}"));
        ok(&sweep(&out, &["--format", "parquet", "--shard", &shard]));
        assert!(out.join("seeds.parquet").exists());
    }
    for (i, fp) in [None, Some("final:summary.parquet"), Some("seeds-partial")]
        .iter()
        .enumerate()
    {
        let out = d.join(format!("merged{i}"));
        let mut c = bin();
        c.arg("merge").arg("--from").arg(&d).arg("--out").arg(&out);
        if let Some(fp) = fp {
            let o = bin()
                .arg("merge")
                .arg("--from")
                .arg(&d)
                .arg("--out")
                .arg(&out)
                .env("CAVESWEEP_FAILPOINT", fp)
                .output()
                .unwrap();
            assert!(killed(&o), "{fp}: {}", stderr(&o));
        }
        ok(&c.output().unwrap());
        assert_same_outputs(&r, &out);
    }
}

#[test]
fn report_reads_a_folder_that_has_only_parquet() {
    let d = scratch("parquet-report");
    let (csv, pq) = (d.join("csv"), d.join("pq"));
    ok(&sweep(&csv, &[]));
    ok(&sweep(&pq, &["--format", "parquet"]));
    let report = |dir: &Path| {
        let o = bin().arg("report").arg(dir).output().unwrap();
        ok(&o);
        fs::read_to_string(dir.join("report/README.md")).unwrap()
    };
    // The same tables (best points, every grid point, typical caves: the seed rows read too).
    let tables = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with('|'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (a, b) = (tables(&report(&csv)), tables(&report(&pq)));
    assert!(a.len() > 10, "{a:?}");
    assert_eq!(a, b);
}

fn search_args(out: &Path, seeds: &str) -> Vec<String> {
    [
        "search",
        "--preset",
        "classic-4-5",
        "--set",
        "exit=5,5",
        "--seeds",
        seeds,
        "--where",
        "components<=2 && floor_fraction>=0.55",
        "--metrics",
        "path_length,min_width",
        "--threads",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// The seeds of a search's Parquet output, and it read back as CSV text (`seed` then each
/// metric, empty for null) to compare with the CSV output.
fn search_parquet_as_csv(path: &Path) -> String {
    let t = parquet::read(fs::File::open(path).unwrap(), u64::MAX).unwrap();
    let mut out = t.names.join(",") + "\n";
    for r in 0..t.rows {
        let fields: Vec<String> = t
            .cols
            .iter()
            .map(|c| match c {
                Col::U64(v) => v[r].map_or(String::new(), |x| x.to_string()),
                Col::F64(v) => v[r].map_or(String::new(), |x| {
                    let mut b = Vec::new();
                    cavesweep::sweep::output::push_num(&mut b, x);
                    String::from_utf8(b).unwrap()
                }),
                c => panic!("unexpected column {c:?}"),
            })
            .collect();
        out += &fields.join(",");
        out += "\n";
    }
    out
}

#[test]
fn a_search_writes_parquet_resumes_after_a_kill_and_stops_with_a_readable_file() {
    let d = scratch("parquet-search");
    let csv = d.join("found.csv");
    ok(&bin().args(search_args(&csv, "0..300000")).output().unwrap());
    let want = fs::read_to_string(&csv).unwrap();
    let pq = d.join("found.parquet");
    ok(&bin().args(search_args(&pq, "0..300000")).output().unwrap());
    assert_eq!(search_parquet_as_csv(&pq), want);
    let reference = fs::read(&pq).unwrap();
    assert!(reference.len() * 3 < want.len(), "Parquet is not smaller");
    // --seeds-from reads the Parquet file's seed column.
    let again = d.join("again.csv");
    let mut args = search_args(&again, "0..1");
    let i = args.iter().position(|a| a == "--seeds").unwrap();
    args.splice(
        i..i + 2,
        ["--seeds-from".to_string(), pq.display().to_string()],
    );
    ok(&bin().args(&args).output().unwrap());
    assert_eq!(fs::read_to_string(&again).unwrap(), want);

    // Killed after a checkpoint: the rerun resumes to the same bytes.
    let killed_out = d.join("killed.parquet");
    let o = bin()
        .args(search_args(&killed_out, "0..300000"))
        .env("CAVESWEEP_FAILPOINT", "search-saved")
        .output()
        .unwrap();
    assert!(killed(&o), "{}", stderr(&o));
    let o = bin()
        .args(search_args(&killed_out, "0..300000"))
        .output()
        .unwrap();
    ok(&o);
    assert!(fs::read(&killed_out).unwrap() == reference);

    // Ctrl-C: a valid Parquet file of the finished chunks' rows (a prefix of the matches).
    let stopped = d.join("stopped.parquet");
    let big = "0..50000000";
    let mut child = bin().args(search_args(&stopped, big)).spawn().unwrap();
    let ck = d.join("stopped.parquet.checkpoint/cavesweep.sqlite");
    let t = Instant::now();
    while !ck.exists() || t.elapsed() < Duration::from_millis(1500) {
        assert!(t.elapsed() < Duration::from_secs(60), "no checkpoint");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let got = search_parquet_as_csv(&stopped);
    let rows = got.lines().count() - 1;
    assert!(rows > 0, "no rows before Ctrl-C");
    assert!(got.lines().skip(1).collect::<Vec<_>>().windows(2).all(|w| {
        let s = |l: &str| l.split(',').next().unwrap().parse::<u64>().unwrap();
        s(w[0]) < s(w[1])
    }));
}

/// `--per-seed kept` with a gate most caves fail: many chunks contribute no row, a few many.
/// The streamed table, one written from the store after a kill, and the CSV agree.
#[test]
fn kept_rows_stream_and_resume_to_the_csv() {
    let d = scratch("parquet-kept");
    let args = |out: &Path| {
        let mut c = bin();
        c.args([
            "sweep",
            "--preset",
            "classic-4-5",
            "--seeds",
            "0..5000",
            "--vary",
            "fill=0.40,0.47",
            "--gate",
            "components<=1",
            "--per-seed",
            "kept",
            "--chunk",
            "100",
            "--format",
            "both",
            "--out",
        ])
        .arg(out);
        c
    };
    let r = d.join("ref");
    ok(&args(&r).output().unwrap());
    let seeds = fs::read_to_string(r.join("seeds.csv")).unwrap();
    assert!(seeds.lines().count() > 10 && seeds.lines().count() < 9000);
    assert_parquet_is_csv(&r, &r);
    let k = d.join("killed");
    let o = args(&k)
        .env("CAVESWEEP_FAILPOINT", "checkpoint@1")
        .output()
        .unwrap();
    assert!(killed(&o), "{}", stderr(&o));
    ok(&args(&k).output().unwrap());
    assert_same_outputs(&r, &k);
}
