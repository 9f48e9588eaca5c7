//! End-to-end tests of `cavesweep report` through the real binary: sweeps of every shape (2-D,
//! 1-D, 3-D, one point, merged shards, interrupted), each reported, then every promised file
//! checked: the pictures are valid PNGs of the size the page states and not blank, the page
//! links only files that exist, and the tables' numbers are summary.csv's. Bad input gets a
//! one-line error.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cavesweep"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Small caves, so every sweep here takes well under a second.
const SMALL: [&str; 4] = ["--set", "rows=36", "--set", "cols=54"];
const GATE: &str = "connected_fraction>=0.9 && floor_fraction>=0.5";

fn sweep(out: &Path, extra: &[&str]) {
    let mut args = vec!["sweep"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "sweep {extra:?}: {}", stderr(&o));
}

fn report(dir: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "report",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "report: {}", stderr(&o));
    o
}

/// Values of attribute `attr` of every `<tag ...>` in `html`.
fn attrs(html: &str, attr: &str) -> Vec<String> {
    let pat = format!(" {attr}=\"");
    html.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// Decode a PNG: (width, height, pixels as RGB(A) bytes, bytes per pixel).
fn decode(p: &Path) -> (u32, u32, Vec<u8>, usize) {
    let dec = png::Decoder::new(std::io::BufReader::new(fs::File::open(p).unwrap()));
    let mut r = dec
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf, bpp)
}

/// Everything a report must hold; returns the number of pictures.
fn check_report(out: &Path) -> usize {
    for f in ["index.html", "README.md", "recipe.toml", "caves.csv"] {
        assert!(out.join(f).is_file(), "{} lacks {f}", out.display());
    }
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        !html.contains("<script") && !html.contains("http://") && !html.contains("https://"),
        "the page must be self-contained"
    );
    // Every reference is a file beside the page.
    for r in attrs(&html, "src").into_iter().chain(attrs(&html, "href")) {
        assert!(out.join(&r).is_file(), "index.html references missing {r}");
    }
    // Every picture: a PNG of the stated size, not all one colour.
    let imgs: Vec<&str> = html.split("<img ").skip(1).collect();
    for tag in &imgs {
        let tag = &tag[..tag.find('>').unwrap()];
        let get = |a: &str| attrs(&format!(" {tag}"), a)[0].clone();
        let (w, h, px, bpp) = decode(&out.join(get("src")));
        assert_eq!(
            (w.to_string(), h.to_string()),
            (get("width"), get("height")),
            "{}",
            get("src")
        );
        let first = &px[..bpp];
        assert!(
            px.chunks(bpp).any(|p| p != first),
            "{} is one colour",
            get("src")
        );
    }
    // README.md shows the same pictures.
    let md = fs::read_to_string(out.join("README.md")).unwrap();
    for src in attrs(&html, "src") {
        assert!(md.contains(&format!("]({src})")), "README.md lacks {src}");
    }
    imgs.len()
}

/// summary.csv as rows of column -> text.
fn summary(dir: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// The rows of the first Markdown table after heading `## {heading}`: header and cells.
fn md_table(md: &str, heading: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let at = md.find(&format!("## {heading}\n"))?;
    let lines: Vec<&str> = md[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    Some((
        cells(lines[0]),
        lines[2..].iter().map(|l| cells(l)).collect(),
    ))
}

/// A table's number equals the CSV's, to the digits the table shows.
fn assert_same_number(table: &str, csv: &str, what: &str) {
    if table == "–" {
        assert!(csv.is_empty(), "{what}: table has none, csv {csv:?}");
        return;
    }
    let (text, scale) = match table.strip_suffix('%') {
        Some(t) => (t, 0.01),
        None => (table, 1.0),
    };
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let shown: f64 = text.parse::<f64>().unwrap() * scale;
    let exact: f64 = csv.parse().unwrap();
    let tol = 0.5 * 10f64.powi(-decimals) * scale + 1e-12;
    assert!(
        (shown - exact).abs() <= tol,
        "{what}: table {table} vs summary.csv {csv}"
    );
}

/// Every row of the report's table under `heading` matches summary.csv's row of that point.
fn check_table(out: &Path, dir: &Path, heading: &str, keys: &[&str]) -> usize {
    let md = fs::read_to_string(out.join("README.md")).unwrap();
    let (head, rows) = md_table(&md, heading).unwrap_or_else(|| panic!("no table {heading}"));
    let sum = summary(dir);
    for row in &rows {
        let csv = sum
            .iter()
            .find(|s| keys.iter().zip(row).all(|(k, v)| &s[*k] == v))
            .unwrap_or_else(|| panic!("{heading}: row {row:?} is no summary.csv point"));
        for (h, cell) in head.iter().zip(row).skip(keys.len()) {
            let col = match h.as_str() {
                "seeds" | "passed" => h.clone(),
                "pass rate" => "pass_rate".into(),
                h if h.ends_with(" mean") => format!("{}_mean", h.trim_end_matches(" mean")),
                _ => continue,
            };
            if col == "seeds" || col == "passed" {
                assert_eq!(cell, &csv[&col], "{heading} {col}");
            } else {
                assert_same_number(cell, &csv[&col], &format!("{heading} {col}"));
            }
        }
    }
    rows.len()
}

#[test]
fn two_key_grid_report() {
    let d = scratch("2d");
    let dir = d.join("sweep");
    sweep(
        &dir,
        &[
            "--vary",
            "fill=0.40,0.45,0.50",
            "--vary",
            "steps=2..=4",
            "--seeds",
            "0..60",
            "--gate",
            GATE,
            "--per-seed",
            "all",
        ],
    );
    let out = d.join("report");
    let o = report(&dir, &out, &[]);
    assert!(stderr(&o).contains("complete"), "{}", stderr(&o));
    let n = check_report(&out);
    assert!(n >= 9 + 9 + 2, "{n} pictures");
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    for needle in [
        "img/heat-pass-rate.png",
        "img/heat-wall-fraction.png",
        "img/heat-components.png",
        "img/trajectory.png",
        "img/components.png",
        "passing seed",
        "failing seed",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    assert_eq!(
        check_table(&out, &dir, "Every grid point", &["fill", "steps"]),
        9
    );
    assert_eq!(
        check_table(&out, &dir, "Best grid points", &["fill", "steps"]),
        9
    );
    // The best table is sorted by pass rate, and its first command re-runs a passing cave.
    let md = fs::read_to_string(out.join("README.md")).unwrap();
    let (head, rows) = md_table(&md, "Best grid points").unwrap();
    let rate = head.iter().position(|h| h == "pass rate").unwrap();
    let rates: Vec<f64> = rows
        .iter()
        .map(|r| r[rate].trim_end_matches('%').parse().unwrap())
        .collect();
    assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{rates:?}");
    let cmd = rows[0].last().unwrap().trim_matches('`').to_string();
    let args: Vec<&str> = cmd.split(' ').skip(1).collect();
    assert_eq!(args[0], "run");
    let mut args: Vec<&str> = args.into_iter().take_while(|a| *a != "--png").collect();
    args.push("--json");
    let o = bin().args(&args).current_dir(&out).output().unwrap();
    assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["connected_fraction"].as_f64().unwrap() >= 0.9
            && v["floor_fraction"].as_f64().unwrap() >= 0.5,
        "{cmd} does not re-run a passing cave: {v}"
    );
    // Rerunning replaces the earlier report in place.
    report(&dir, &out, &["--points", "fill=0.45"]);
    check_report(&out);
    let caves = fs::read_to_string(out.join("caves.csv")).unwrap();
    assert!(caves.lines().skip(1).any(|l| l.starts_with("0.45,")));
}

#[test]
fn one_key_report_has_line_charts() {
    let d = scratch("1d");
    let dir = d.join("sweep");
    sweep(
        &dir,
        &[
            "--vary",
            "fill=0.35:0.55:0.05",
            "--seeds",
            "0..50",
            "--gate",
            GATE,
        ],
    );
    let out = d.join("report");
    report(&dir, &out, &[]);
    check_report(&out);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("img/lines-pass-rate.png") && html.contains("img/lines-wall-fraction.png")
    );
    assert!(!html.contains("img/heat-"));
    assert_eq!(check_table(&out, &dir, "Every grid point", &["fill"]), 5);
}

#[test]
fn three_key_report_has_small_multiples() {
    let d = scratch("3d");
    let dir = d.join("sweep");
    sweep(
        &dir,
        &[
            "--vary",
            "fill=0.40,0.45",
            "--vary",
            "steps=2,3",
            "--vary",
            "rule=B5678/S5678,B5678/S45678",
            "--seeds",
            "0..30",
            "--gate",
            GATE,
            "--per-seed",
            "none",
        ],
    );
    let out = d.join("report");
    report(&dir, &out, &[]);
    check_report(&out);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("One panel per value of <code>rule</code>"));
    assert_eq!(
        check_table(&out, &dir, "Every grid point", &["fill", "steps", "rule"]),
        8
    );
}

#[test]
fn one_point_report_has_a_metrics_table() {
    let d = scratch("1p");
    let dir = d.join("sweep");
    sweep(
        &dir,
        &["--seeds", "0..80", "--per-seed", "kept", "--gate", GATE],
    );
    let out = d.join("report");
    report(&dir, &out, &[]);
    check_report(&out);
    let md = fs::read_to_string(out.join("README.md")).unwrap();
    let (_, rows) = md_table(&md, "Metrics").unwrap();
    let sum = &summary(&dir)[0];
    for r in &rows {
        if let Some(stat) = sum.get(&format!("{}_mean", r[0])) {
            assert_same_number(&r[1], stat, &r[0]);
            assert_same_number(&r[5], &sum[&format!("{}_p50", r[0])], &r[0]);
        } else {
            assert_eq!(r[0], "pass rate");
            assert_same_number(&r[1], &sum["pass_rate"], "pass rate");
        }
    }
}

#[test]
fn merged_shards_report_like_one_run_and_a_shard_says_so() {
    let d = scratch("merged");
    let flags = [
        "--vary",
        "fill=0.40,0.45",
        "--vary",
        "steps=2,3",
        "--seeds",
        "0..300",
        "--gate",
        GATE,
        "--per-seed",
        "all",
    ];
    let shards: Vec<PathBuf> = (1..=2).map(|k| d.join(format!("s{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        let mut f = flags.to_vec();
        let shard = format!("{}/2", k + 1);
        f.extend(["--shard", &shard]);
        sweep(s, &f);
    }
    let merged = d.join("merged");
    let o = run(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("report");
    report(&merged, &out, &[]);
    check_report(&out);
    assert_eq!(
        check_table(&out, &merged, "Every grid point", &["fill", "steps"]),
        4
    );
    let shard_out = d.join("shard-report");
    let o = report(&shards[0], &shard_out, &[]);
    assert!(stderr(&o).contains("shard 1/2"), "{}", stderr(&o));
    check_report(&shard_out);
    let html = fs::read_to_string(shard_out.join("index.html")).unwrap();
    assert!(html.contains("cavesweep merge"));
}

#[test]
fn interrupted_sweep_reports_its_progress() {
    let d = scratch("half");
    let dir = d.join("sweep");
    let mut child = bin()
        .args([
            "sweep",
            "--vary",
            "fill=0.40,0.45",
            "--seeds",
            "0..50000000",
            "--per-seed",
            "none",
            "--gate",
            GATE,
            "--out",
            dir.to_str().unwrap(),
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !dir.join("manifest.json").exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    child.wait().unwrap();
    let out = d.join("report");
    let o = report(&dir, &out, &[]);
    assert!(stderr(&o).contains("not finished"), "{}", stderr(&o));
    check_report(&out);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("The sweep is not finished"),
        "no progress notice"
    );
    assert!(html.contains("chunks"));
    // Its caves are still shown, regenerated from the recipe.
    assert!(html.contains("img/cave-0-typical.png"));
}

/// Bad input: exit 1, one line on stderr, no panic.
fn assert_clean_error(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err:?}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
}

#[test]
fn bad_input_gives_one_line_errors() {
    let d = scratch("bad");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let empty = d.join("empty");
    fs::create_dir_all(&empty).unwrap();
    assert_clean_error(&["report", &s(&empty)], "is empty");
    let other = d.join("other");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("notes.txt"), "hello").unwrap();
    assert_clean_error(&["report", &s(&other)], "not a sweep folder");
    assert_clean_error(
        &["report", &s(&d.join("missing"))],
        "cannot read sweep folder",
    );
    assert_clean_error(&["report", &s(&other.join("notes.txt"))], "is not a folder");
    // A sweep folder whose manifest is gone, or corrupt.
    let dir = d.join("sweep");
    sweep(&dir, &["--vary", "fill=0.4,0.5", "--seeds", "0..20"]);
    let manifest = fs::read(dir.join("manifest.json")).unwrap();
    fs::remove_file(dir.join("manifest.json")).unwrap();
    assert_clean_error(&["report", &s(&dir)], "no manifest.json");
    fs::write(dir.join("manifest.json"), "{ not json").unwrap();
    assert_clean_error(&["report", &s(&dir)], "not valid JSON");
    fs::write(dir.join("manifest.json"), &manifest).unwrap();
    // A summary.csv that does not match the manifest's grid.
    let good = fs::read_to_string(dir.join("summary.csv")).unwrap();
    fs::write(dir.join("summary.csv"), good.replace("\n0.5,", "\n0.7,")).unwrap();
    // The store records what the sweep wrote: an edited file is refused as such...
    assert_clean_error(&["report", &s(&dir)], "is not the file the sweep wrote");
    // ... and without the store (the CSVs copied elsewhere), by what it holds.
    fs::remove_file(dir.join("cavesweep.sqlite")).unwrap();
    assert_clean_error(&["report", &s(&dir)], "not a point of the manifest's grid");
    fs::write(dir.join("summary.csv"), &good).unwrap();
    // An output folder holding other files is not overwritten.
    assert_clean_error(
        &["report", &s(&dir), "--out", &s(&other)],
        "holds no earlier report",
    );
    assert!(other.join("notes.txt").exists());
    assert_clean_error(
        &["report", &s(&dir), "--points", "size=3"],
        "not a varied key",
    );
    assert_clean_error(
        &["report", &s(&dir), "--points", "fill=0.9"],
        "matches no grid point",
    );
    // And the repaired folder reports.
    report(&dir, &d.join("ok"), &[]);
    check_report(&d.join("ok"));
}

/// A report that failed partway (here a file size limit, as a full disk would) leaves a folder
/// the rerun recognises as an unfinished report and finishes; a folder holding anything else is
/// still refused.
#[test]
fn a_report_that_failed_partway_is_finished_by_the_rerun() {
    let d = scratch("partial");
    let dir = d.join("sweep");
    sweep(&dir, &["--vary", "fill=0.4,0.5", "--seeds", "0..20"]);
    let out = d.join("rep");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 8; exec {} report {} --out {}",
            env!("CARGO_BIN_EXE_cavesweep"),
            dir.display(),
            out.display()
        ))
        .output()
        .unwrap();
    assert!(!o.status.success(), "the 8 KiB limit stops the report");
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!out.join("index.html").exists(), "failed before the page");
    report(&dir, &out, &[]);
    check_report(&out);
    // What is left is the page's files and the marker naming exactly them, nothing else hidden.
    let mut on_disk: Vec<String> = Vec::new();
    for e in fs::read_dir(&out).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if n == "img" {
            for p in fs::read_dir(out.join("img")).unwrap() {
                on_disk.push(format!("img/{}", p.unwrap().file_name().to_string_lossy()));
            }
        } else if n != ".cavesweep-report" {
            on_disk.push(n);
        }
    }
    on_disk.sort();
    let marker = fs::read_to_string(out.join(".cavesweep-report")).unwrap();
    let mut named: Vec<String> = marker.lines().skip(1).map(str::to_string).collect();
    named.sort();
    assert_eq!(
        named, on_disk,
        "the marker names exactly the report's files"
    );
    // A report killed after its marker but before its page: the rerun finishes it.
    for f in ["index.html", "README.md", "recipe.toml", "caves.csv"] {
        fs::remove_file(out.join(f)).unwrap();
    }
    report(&dir, &out, &[]);
    check_report(&out);
    // A user's file the report does not write is left alone (the rerun touches only what its
    // marker names) ...
    fs::write(out.join("img/notes.txt"), "mine").unwrap();
    report(&dir, &out, &[]);
    check_report(&out);
    assert_eq!(
        fs::read_to_string(out.join("img/notes.txt")).unwrap(),
        "mine"
    );
    // ... and a user's file where the report would write one its marker does not name is
    // refused before anything is written.
    let marker = fs::read_to_string(out.join(".cavesweep-report")).unwrap();
    let without: String = marker
        .lines()
        .filter(|l| *l != "README.md")
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(out.join(".cavesweep-report"), without).unwrap();
    fs::write(out.join("README.md"), "my notes").unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    assert_clean_error(
        &["report", &s(&dir), "--out", &s(&out)],
        "that no earlier report",
    );
    assert_eq!(
        fs::read_to_string(out.join("README.md")).unwrap(),
        "my notes"
    );
    // A folder without the marker (a report of a version before it, or anybody's folder) is
    // not taken for a report.
    fs::remove_file(out.join(".cavesweep-report")).unwrap();
    fs::remove_file(out.join("README.md")).unwrap();
    assert_clean_error(
        &["report", &s(&dir), "--out", &s(&out)],
        "holds no earlier report",
    );
    assert!(out.join("index.html").is_file());
}

/// A cave too big to picture cell by cell (past 2048 cells a side, where 16384 x 16384 would be
/// over the picture size limit) is drawn one pixel per block of cells, and the page says so.
#[test]
fn huge_caves_are_pictured_in_blocks() {
    let d = scratch("huge");
    let dir = d.join("sweep");
    let o = run(&[
        "sweep",
        "--set",
        "rows=5000",
        "--set",
        "cols=3000",
        "--seeds",
        "0..1",
        "--metrics",
        "floor_fraction",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("rep");
    report(&dir, &out, &[]);
    let (w, h, _, _) = decode(&out.join("img/cave-0-typical.png"));
    assert_eq!((w, h), (1000, 1667), "3x3 blocks");
    let md = fs::read_to_string(out.join("README.md")).unwrap();
    assert!(md.contains("average colour of a 3x3 block"), "{md}");
}
