//! End-to-end tests of `cavesweep search` through the real binary: results equal filtering a
//! sweep's `seeds.csv` (every metric, value for value), `--limit` / `--top` equal the head of
//! that filtered, sorted table, the same with 1 and 2 threads and any chunking; re-filtering;
//! seeds at the top of the u64 range; PNGs; Ctrl-C; and one-line errors.

// The reference predicates negate float comparisons on purpose: that is the NaN semantics
// under test (`!(x >= 1)` holds for NaN, `x < 1` does not).
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use std::cmp::Ordering;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{run, stderr};

fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("search-{name}"))
}

/// A CSV as a header and rows of fields.
type Table = (Vec<String>, Vec<Vec<String>>);

fn parse_csv(text: &str) -> Table {
    let mut lines = text.lines();
    let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
    let header = split(lines.next().expect("a header"));
    let rows: Vec<Vec<String>> = lines.map(split).collect();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "ragged row {r:?}");
    }
    (header, rows)
}

/// Run a search, check it succeeded, return its CSV.
fn search(args: &[&str]) -> Table {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    parse_csv(&String::from_utf8(o.stdout).unwrap())
}

/// The recipe of every comparison: real caves (many components, a WALL spawn now and then)
/// with an exit that is often unreachable, so path_length and reach_depth are often empty.
const RECIPE: [&str; 4] = ["--preset", "classic-4-5", "--set", "exit=5,5"];
const SEEDS: &str = "0..3000";

/// The sweep's seeds.csv for RECIPE and SEEDS (every metric), minus its `passed` column.
fn sweep_table(name: &str) -> Table {
    let d = scratch(&format!("sweep-{name}"));
    let mut args = vec!["sweep"];
    args.extend_from_slice(&RECIPE);
    args.extend_from_slice(&[
        "--seeds",
        SEEDS,
        "--metrics",
        "all",
        "--per-seed",
        "all",
        "--out",
        d.to_str().unwrap(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut h, mut rows) = parse_csv(&fs::read_to_string(d.join("seeds.csv")).unwrap());
    assert_eq!(h.pop().as_deref(), Some("passed"));
    for r in &mut rows {
        r.pop();
    }
    (h, rows)
}

/// A row's value of a column (NaN for an empty field).
fn val(h: &[String], r: &[String], col: &str) -> f64 {
    let i = h.iter().position(|c| c == col).unwrap();
    if r[i].is_empty() {
        f64::NAN
    } else {
        r[i].parse().unwrap()
    }
}

/// The queries and, independently, what they mean (Rust's f64 comparisons are IEEE, as the
/// query language's are).
type Pred = fn(&dyn Fn(&str) -> f64) -> bool;
const QUERIES: [(&str, Pred); 9] = [
    ("components<=3 || !(floor_fraction>0.66)", |v| {
        v("components") <= 3.0 || !(v("floor_fraction") > 0.66)
    }),
    ("path_length<110", |v| v("path_length") < 110.0),
    ("!(path_length>=110)", |v| !(v("path_length") >= 110.0)),
    ("path_length!=105 && components>=6", |v| {
        v("path_length") != 105.0 && v("components") >= 6.0
    }),
    (
        "(components<=2 || components>=9) && connected_fraction>=0.95",
        |v| (v("components") <= 2.0 || v("components") >= 9.0) && v("connected_fraction") >= 0.95,
    ),
    ("!(min_width>=1 && reach_depth<120) || boundary<2900", |v| {
        !(v("min_width") >= 1.0 && v("reach_depth") < 120.0) || v("boundary") < 2900.0
    }),
    (
        "reach_depth>125 && !(path_length<108 || largest_fraction<0.98)",
        |v| v("reach_depth") > 125.0 && !(v("path_length") < 108.0 || v("largest_fraction") < 0.98),
    ),
    (
        "wall_fraction<0.32 || wall_fraction>0.37 || (boundary>=3200 && !(components==5))",
        |v| {
            v("wall_fraction") < 0.32
                || v("wall_fraction") > 0.37
                || (v("boundary") >= 3200.0 && !(v("components") == 5.0))
        },
    ),
    ("!!(floor_fraction>=0.66) && path_length>=0", |v| {
        v("floor_fraction") >= 0.66 && v("path_length") >= 0.0
    }),
];

fn filtered(t: &Table, pred: Pred) -> Vec<Vec<String>> {
    let (h, rows) = t;
    rows.iter()
        .filter(|r| pred(&|c| val(h, r, c)))
        .cloned()
        .collect()
}

/// Sort by a column (NaN last in either order), ties by lower seed.
fn sorted_by(t: &Table, rows: &[Vec<String>], col: &str, desc: bool) -> Vec<Vec<String>> {
    let h = &t.0;
    let mut v = rows.to_vec();
    v.sort_by(|a, b| {
        let (x, y) = (val(h, a, col), val(h, b, col));
        let by_value = match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ if desc => y.partial_cmp(&x).unwrap(),
            _ => x.partial_cmp(&y).unwrap(),
        };
        by_value.then(val(h, a, "seed").total_cmp(&val(h, b, "seed")))
    });
    v
}

#[test]
fn search_equals_filtering_the_sweep() {
    let table = sweep_table("filter");
    assert_eq!(table.1.len(), 3000);
    for (q, pred) in QUERIES {
        let want = filtered(&table, pred);
        assert!(
            !want.is_empty() && want.len() < 3000,
            "{q}: {} of 3000 match; pick a query that separates",
            want.len()
        );
        let mut base = RECIPE.to_vec();
        base.extend_from_slice(&["--seeds", SEEDS, "--where", q, "--metrics", "all"]);
        for extra in [
            &["--threads", "1"][..],
            &["--threads", "2"],
            &["--threads", "2", "--chunk", "7"],
        ] {
            let mut args = base.clone();
            args.extend_from_slice(extra);
            let (h, rows) = search(&args);
            assert_eq!(h, table.0, "{q}");
            assert_eq!(rows, want, "{q} {extra:?}");
        }
        // --limit: the head of the filtered table, whatever the threads and chunking.
        for (n, extra) in [
            ("1", &["--threads", "1"][..]),
            ("7", &["--threads", "2"]),
            ("7", &["--threads", "2", "--chunk", "3"]),
            ("100000", &["--threads", "2"]),
        ] {
            let mut args = base.clone();
            args.extend_from_slice(&["--limit", n]);
            args.extend_from_slice(extra);
            let (_, rows) = search(&args);
            let n: usize = n.parse().unwrap();
            assert_eq!(rows, want[..n.min(want.len())], "{q} --limit {n} {extra:?}");
        }
    }
    // --top: the head of the filtered table sorted by the metric (NaN last, ties by seed).
    for (q, pred) in [QUERIES[0], QUERIES[2], QUERIES[5]] {
        let want = filtered(&table, pred);
        for (by, order, k) in [
            ("path_length", "desc", "10"),
            ("path_length", "asc", "25"),
            ("boundary", "asc", "9"),
            ("components", "desc", "40"),
            ("reach_depth", "desc", "5000"),
        ] {
            let expect = sorted_by(&table, &want, by, order == "desc");
            let k: usize = k.parse().unwrap();
            for threads in ["1", "2"] {
                let mut args = RECIPE.to_vec();
                let ks = k.to_string();
                args.extend_from_slice(&[
                    "--seeds",
                    SEEDS,
                    "--where",
                    q,
                    "--metrics",
                    "all",
                    "--top",
                    &ks,
                    "--by",
                    by,
                    "--order",
                    order,
                    "--threads",
                    threads,
                    "--chunk",
                    "50",
                ]);
                let (_, rows) = search(&args);
                assert_eq!(
                    rows,
                    expect[..k.min(expect.len())],
                    "{q} --top {k} --by {by} {order}"
                );
            }
        }
    }
}

#[test]
fn columns_are_the_query_the_ranking_and_the_extras() {
    let mut args = RECIPE.to_vec();
    args.extend_from_slice(&[
        "--seeds",
        "0..300",
        "--where",
        "components<=4 && !(path_length<50)",
        "--top",
        "3",
        "--by",
        "boundary",
        "--metrics",
        "min_width,wall_fraction",
    ]);
    let (h, rows) = search(&args);
    assert_eq!(
        h,
        [
            "seed",
            "wall_fraction",
            "components",
            "boundary",
            "path_length",
            "min_width"
        ]
    );
    assert_eq!(rows.len(), 3);
    // desc is the default order
    assert!(val(&h, &rows[0], "boundary") >= val(&h, &rows[2], "boundary"));
}

#[test]
fn seeds_from_refilters_a_sweep_or_an_earlier_search() {
    let d = scratch("seeds-from");
    let table = sweep_table("seeds-from");
    let (q1, p1) = QUERIES[0];
    let (q2, p2) = QUERIES[3];
    let first = d.join("first.csv");
    let mut args = vec!["search"];
    args.extend_from_slice(&RECIPE);
    args.extend_from_slice(&[
        "--seeds",
        SEEDS,
        "--where",
        q1,
        "--out",
        first.to_str().unwrap(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // The earlier search's file holds only the query's columns; the new search measures again.
    let mut args = RECIPE.to_vec();
    args.extend_from_slice(&[
        "--seeds-from",
        first.to_str().unwrap(),
        "--where",
        q2,
        "--metrics",
        "all",
    ]);
    let (_, rows) = search(&args);
    let want: Vec<_> = filtered(&table, p1)
        .into_iter()
        .filter(|r| p2(&|c| val(&table.0, r, c)))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(rows, want);
    // A sweep's seeds.csv (repeated and shuffled seeds are fine: sorted, duplicates dropped).
    let seeds_csv = d.join("seeds.csv");
    let mut text = String::from("seed,other\n");
    for r in table.1.iter().rev() {
        text.push_str(&format!("{},x\n{},y\n", r[0], r[0]));
    }
    fs::write(&seeds_csv, text).unwrap();
    let mut args = RECIPE.to_vec();
    args.extend_from_slice(&[
        "--seeds-from",
        seeds_csv.to_str().unwrap(),
        "--where",
        q2,
        "--metrics",
        "all",
        "--limit",
        "4",
    ]);
    let (_, rows) = search(&args);
    assert_eq!(rows, filtered(&table, p2)[..4]);
}

#[test]
fn seeds_at_the_top_of_the_u64_range() {
    let (h, rows) = search(&[
        "--seeds",
        "18446744073709551000..18446744073709551615",
        "--where",
        "floor_fraction>=0",
        "--threads",
        "2",
    ]);
    assert_eq!(h, ["seed", "floor_fraction"]);
    assert_eq!(rows.len(), 615);
    assert_eq!(rows[0][0], "18446744073709551000");
    assert_eq!(rows[614][0], "18446744073709551614");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r[0].parse::<u64>().unwrap(),
            18446744073709551000 + i as u64
        );
    }
    // The last seed's cave is the one `run` makes.
    let o = run(&["run", "--seed", "18446744073709551614", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["floor_fraction"].as_f64().unwrap(),
        rows[614][1].parse::<f64>().unwrap()
    );
    // --limit near the top: stops, no overflow.
    let (_, rows) = search(&[
        "--seeds",
        "18446744073709551000..18446744073709551615",
        "--where",
        "floor_fraction>=0",
        "--limit",
        "3",
        "--chunk",
        "1000",
    ]);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2][0], "18446744073709551002");
}

#[test]
fn pngs_per_returned_match() {
    let d = scratch("png");
    let pngs = |dir: &Path| {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    for (mode, n) in [
        (&["--limit", "3"][..], 3),
        (&["--top", "2", "--by", "boundary"], 2),
        (&[], 0),
    ] {
        let dir = d.join(format!("p{}", mode.len()));
        let mut args = RECIPE.to_vec();
        args.extend_from_slice(&[
            "--seeds",
            "0..200",
            "--where",
            "components<=3",
            "--png-dir",
            dir.to_str().unwrap(),
            "--scale",
            "2",
        ]);
        args.extend_from_slice(mode);
        let (_, rows) = search(&args);
        if n > 0 {
            assert_eq!(rows.len(), n);
        }
        let mut want: Vec<String> = rows.iter().map(|r| format!("{}.png", r[0])).collect();
        want.sort();
        assert_eq!(pngs(&dir), want, "{mode:?}");
        let png = fs::read(dir.join(&want[0])).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}

#[test]
fn sigterm_leaves_a_valid_csv_of_what_was_found() {
    let d = scratch("sigterm");
    let out = d.join("found.csv");
    let mut child = common::bin()
        .args([
            "search",
            "--seeds",
            "0..1000000000",
            "--where",
            "floor_fraction>=0.93",
            "--threads",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Rows appear in the file while the search runs (a reader tailing it sees them).
    let t = Instant::now();
    loop {
        let lines = fs::read_to_string(&out).map_or(0, |s| s.lines().count());
        if lines >= 4 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "no rows appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "finished already");
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
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.ends_with('\n'));
    let (h, rows) = parse_csv(&text);
    assert_eq!(h, ["seed", "floor_fraction"]);
    assert!(rows.len() >= 3);
    let seeds: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(seeds.windows(2).all(|w| w[0] < w[1]), "seed order");
    for r in &rows {
        assert!(r[1].parse::<f64>().unwrap() >= 0.93);
    }
    // The finished chunks are checkpointed for a rerun to resume.
    assert!(checkpointed_chunks(&d.join("found.csv.checkpoint")) > 0);
    assert!(stderr(&o).contains("rerun the same command to resume"));
}

/// Bad input: exit code 1, exactly one line on stderr, no panic, nothing on stdout.
fn assert_one_line_error(args: &[&str], needle: &str) {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    let o = run(&all);
    common::assert_one_line_error(&o, needle);
    assert!(
        o.stdout.is_empty(),
        "{all:?} printed {:?}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn bad_input_gives_one_line_errors() {
    let d = scratch("errors");
    let s = ["--seeds", "0..10"];
    let q = |query: &str, needle: &str| {
        let mut args = s.to_vec();
        args.extend_from_slice(&["--where", query]);
        assert_one_line_error(&args, needle);
    };
    q("components<=3 &&", "column 17");
    q("components<=3 &&", "end of the query");
    q("floor>0.5", "unknown metric \"floor\"");
    q("components<<3", "column 12");
    q("components=3", "use \"==\"");
    q(
        "(components<=3 || boundary<2",
        "close the \"(\" at column 1",
    );
    q("components<=3)", "without a matching");
    q("components<=3 and boundary<9", "column 15");
    q("", "empty query");
    q("good=components<=3", "named gate");
    let with = |extra: &[&str], needle: &str| {
        let mut args = s.to_vec();
        args.extend_from_slice(&["--where", "components<=3"]);
        args.extend_from_slice(extra);
        assert_one_line_error(&args, needle);
    };
    with(&["--top", "5"], "--top needs --by");
    with(&["--limit", "0"], "--limit must be at least 1");
    with(
        &["--top", "0", "--by", "boundary"],
        "--top must be at least 1",
    );
    with(
        &["--limit", "3", "--top", "3", "--by", "boundary"],
        "give one of them",
    );
    with(&["--by", "boundary"], "--by ranks the matches of --top");
    with(&["--top", "3", "--by", "speed"], "unknown metric");
    with(
        &["--top", "3", "--by", "boundary", "--order", "up"],
        "asc or desc",
    );
    with(&["--order", "asc"], "--order applies to --top");
    with(&["--metrics", "speed"], "unknown metric");
    with(&["--threads", "0"], "--threads");
    with(&["--seeds-from", "x.csv"], "give one of them");
    with(&["--set", "fill=2"], "fill");
    with(&["--out", "/nonexistent/dir/x.csv"], "cannot create");
    // A folder is named as one, with or without --force (not "holds no search").
    with(
        &["--out", d.to_str().unwrap()],
        "is a folder; give a file name",
    );
    let exists = d.join("exists.csv");
    fs::write(&exists, "keep me\n").unwrap();
    with(&["--out", exists.to_str().unwrap()], "--force");
    assert_eq!(fs::read_to_string(&exists).unwrap(), "keep me\n");
    assert_one_line_error(
        &["--where", "components<=3"],
        "--seeds A..B or --seeds-from",
    );
    assert_one_line_error(&["--where", "components<=3", "--seeds", "5..5"], "--seeds");
    let from = |text: Option<&str>, needle: &str| {
        let f = d.join("from.csv");
        let _ = fs::remove_file(&f);
        if let Some(t) = text {
            fs::write(&f, t).unwrap();
        }
        assert_one_line_error(
            &[
                "--where",
                "components<=3",
                "--seeds-from",
                f.to_str().unwrap(),
            ],
            needle,
        );
    };
    from(None, "cannot read");
    from(Some(""), "no \"seed\" column");
    from(Some("seed,components\n"), "no seeds");
    from(Some("id,components\n1,2\n"), "no \"seed\" column");
    from(Some("seed\n1\n2\nseven\n"), "line 4");
    from(Some("seed\n-1\n"), "line 2");
    from(Some("seed\n18446744073709551615\n"), "out of range");
}

/// Chunks recorded as done in a search's checkpoint store (0 when there is none yet).
fn checkpointed_chunks(dir: &Path) -> u64 {
    let db = dir.join("cavesweep.sqlite");
    if !db.exists() {
        return 0;
    }
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    // Point record 0's seeds = seeds examined by the recorded chunks.
    conn.query_row("SELECT seeds FROM points WHERE point = 0", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as u64)
}

/// `search --seeds SEEDS --where QUERY EXTRA... --out OUT`, as owned arguments (tests edit
/// them by index: the query is at 4, EXTRA from 5).
fn search_out(seeds: &str, query: &str, extra: &[&str], out: &Path) -> Vec<String> {
    let mut v: Vec<String> = ["search", "--seeds", seeds, "--where", query]
        .map(String::from)
        .to_vec();
    v.extend(extra.iter().map(|s| s.to_string()));
    v.extend(["--out".to_string(), out.to_str().unwrap().to_string()]);
    v
}

/// The CSV of `args` run once, uninterrupted, into `d/ref.csv`.
fn reference_csv(d: &Path, args: &dyn Fn(&Path) -> Vec<String>) -> Vec<u8> {
    let reference = d.join("ref.csv");
    let o = common::bin().args(args(&reference)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    fs::read(&reference).unwrap()
}

#[test]
fn a_killed_search_resumes_to_the_same_csv() {
    let d = scratch("resume");
    // Seeds searched: enough that the killed run (one thread) is still going when its first
    // chunk is checkpointed, on a host that makes 1.3M caves/s (0..600000 finished first there).
    const N: u64 = 2_400_000;
    let seeds = format!("0..{N}");
    let args = |out: &Path| {
        search_out(
            &seeds,
            "floor_fraction>=0.925 || components>=14",
            &["--metrics", "boundary", "--threads", "2"],
            out,
        )
    };
    // The reference: one uninterrupted run.
    let want = reference_csv(&d, &args);
    assert_completion_mark(&d.join("ref.csv.checkpoint"));
    assert!(String::from_utf8_lossy(&want).lines().count() > 10);

    // Killed (SIGKILL: no chance to clean up) once a checkpoint holds some work.
    let out = d.join("found.csv");
    let ck = d.join("found.csv.checkpoint");
    // One thread, so the run outlasts the polling on a fast host (the CSV is the same for any
    // thread count; checked below).
    let mut killed = args(&out);
    killed[8] = "1".into();
    let mut child = common::bin()
        .args(&killed)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while checkpointed_chunks(&ck) == 0 {
        assert!(t.elapsed() < Duration::from_secs(120), "no checkpoint");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before a kill"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = checkpointed_chunks(&ck);
    assert!(done > 0 && done < N, "{done}");

    // Another search writing the same file is refused, and the file and checkpoint kept.
    let before = fs::read(&out).unwrap();
    let mut other = args(&out);
    other[4] = "components>=15".into();
    let o = common::bin().args(&other).output().unwrap();
    common::assert_one_line_error(&o, "holds a different search");
    assert_eq!(fs::read(&out).unwrap(), before);
    assert_eq!(checkpointed_chunks(&ck), done);

    // Rerunning the command resumes: only the rest is searched, the CSV is the reference's.
    let o = common::bin().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("resumed:"), "{err}");
    let searched: u64 = err
        .strip_prefix("searched ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(searched, N - done, "{err}");
    assert!(fs::read(&out).unwrap() == want, "resumed CSV differs");
    assert_completion_mark(&ck);

    // Complete: rerunning (any thread count) says so, exit 0, and leaves the file alone.
    let modified = fs::metadata(&out).unwrap().modified().unwrap();
    let mut one_thread = args(&out);
    one_thread[8] = "1".into();
    let o = common::bin().args(&one_thread).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.starts_with("already complete: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(fs::read(&out).unwrap() == want);
    assert_eq!(fs::metadata(&out).unwrap().modified().unwrap(), modified);
    // A changed (or deleted) CSV no longer matches what was written: searched again.
    fs::write(&out, b"seed,floor_fraction\n1,0.5\n").unwrap();
    let o = common::bin().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("searching again"), "{}", stderr(&o));
    assert!(fs::read(&out).unwrap() == want);
    fs::remove_file(&out).unwrap();
    let o = common::bin().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(&out).unwrap() == want);
    // A file without the folder beside it is not ours to replace unless --force.
    fs::remove_dir_all(&ck).unwrap();
    let o = common::bin().args(args(&out)).output().unwrap();
    common::assert_one_line_error(&o, "--force");
    assert!(fs::read(&out).unwrap() == want);
    let mut forced = args(&out);
    forced.push("--force".into());
    let o = common::bin().args(&forced).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(&out).unwrap() == want);
}

/// A chunk without matches has no row record, so a lost record must not pass for one: the
/// index counts the matches recorded, and when the records do not add up, every finished chunk
/// without a record is searched again. Damaged records are redone too. Killed at a failpoint
/// after the last checkpoint (every chunk recorded), so no timing is involved.
#[test]
fn lost_or_damaged_checkpoint_records_are_searched_again() {
    let d = scratch("lost-rows");
    let args = |out: &Path| search_out("0..20000", "components>=4", &[], out);
    let want = reference_csv(&d, &args);
    for (case, sql) in [
        (
            "lost",
            "DELETE FROM rows WHERE chunk = (SELECT min(chunk) FROM rows)",
        ),
        (
            "damaged",
            "UPDATE rows SET data = x'00' WHERE chunk = (SELECT max(chunk) FROM rows)",
        ),
    ] {
        let out = d.join(format!("{case}.csv"));
        let o = common::bin()
            .args(args(&out))
            .env("CAVESWEEP_FAILPOINT", "search-saved")
            .output()
            .unwrap();
        assert_eq!(o.status.signal(), Some(9), "{case}: {}", stderr(&o));
        let db = d.join(format!("{case}.csv.checkpoint/cavesweep.sqlite"));
        let conn = rusqlite::Connection::open(&db).unwrap();
        let records: i64 = conn
            .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
            .unwrap();
        assert!(records >= 2, "{case}: {records} row records");
        assert_eq!(conn.execute(sql, []).unwrap(), 1, "{case}");
        drop(conn);
        let o = common::bin().args(args(&out)).output().unwrap();
        assert!(o.status.success(), "{case}: {}", stderr(&o));
        assert!(stderr(&o).contains("redone"), "{case}: {}", stderr(&o));
        assert!(
            fs::read(&out).unwrap() == want,
            "{case}: the resumed CSV differs"
        );
    }
}

/// A completed search's checkpoint folder: no chunk records, marked complete.
fn assert_completion_mark(dir: &Path) {
    assert_eq!(checkpointed_chunks(dir), 0, "records dropped when complete");
    let conn = rusqlite::Connection::open_with_flags(
        dir.join("cavesweep.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let meta = |k: &str| -> String {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(meta("complete"), "1");
    assert!(meta("csv").contains("crc32"), "{}", meta("csv"));
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}

/// Ctrl-C once stops after the chunks in flight; a second Ctrl-C, while the search is still
/// winding down (held there by a failpoint), exits 130 at once, leaving a CSV of whole rows and a
/// checkpoint that a rerun resumes from to the uninterrupted result.
#[test]
fn a_second_ctrl_c_exits_at_once_and_the_rerun_resumes() {
    use std::io::{BufRead, BufReader};
    let d = scratch("second-sigint");
    let args = |out: &Path| {
        search_out(
            "0..1000000",
            "floor_fraction>=0.925 || components>=14",
            &["--threads", "2"],
            out,
        )
    };
    let want = reference_csv(&d, &args);

    let out = d.join("found.csv");
    let ck = d.join("found.csv.checkpoint");
    let mut child = common::bin()
        .args(args(&out))
        .env("CAVESWEEP_FAILPOINT", "search-stopping:pause")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // stderr, line by line, as it comes.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let t = Instant::now();
    while checkpointed_chunks(&ck) == 0 {
        assert!(t.elapsed() < Duration::from_secs(120), "no checkpoint");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sigint = |pid: u32| {
        assert!(
            Command::new("kill")
                .args(["-INT", &pid.to_string()])
                .status()
                .unwrap()
                .success()
        );
    };
    sigint(child.id());
    // The first Ctrl-C is taken: the search stops its workers and (held by the failpoint)
    // does not exit yet.
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("never paused after Ctrl-C: {seen:?}"));
        let paused = line.contains("failpoint search-stopping: paused");
        seen.push(line);
        if paused {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "exited on its own");
    let t = Instant::now();
    sigint(child.id());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "a second Ctrl-C did not end the search"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    let rest: Vec<String> = rx.iter().collect();
    assert!(
        rest.iter().any(|l| l.contains("stopping now")),
        "{seen:?} {rest:?}"
    );
    // Whole rows, in seed order, each a match.
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.ends_with('\n'), "a partial row: {text:?}");
    let (h, rows) = parse_csv(&text);
    assert_eq!(h[0], "seed");
    let seeds: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(seeds.windows(2).all(|w| w[0] < w[1]), "seed order");
    let want_text = String::from_utf8(want.clone()).unwrap();
    let want_rows: std::collections::HashSet<&str> = want_text.lines().collect();
    assert!(
        text.lines().all(|l| want_rows.contains(l)),
        "a row that is not a match"
    );

    // The checkpoint resumes to the uninterrupted result.
    let done = checkpointed_chunks(&ck);
    assert!(done > 0 && done < 1000000, "{done}");
    let o = common::bin().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resumed:"), "{}", stderr(&o));
    assert!(fs::read(&out).unwrap() == want, "resumed CSV differs");
}

#[test]
fn a_png_that_cannot_be_written_is_a_one_line_error() {
    let d = scratch("png-blocked");
    let png = d.join("png");
    // Seed 0 matches; its picture's name is taken by a folder.
    fs::create_dir_all(png.join("0.png")).unwrap();
    for extra in [&[][..], &["--limit", "2"]] {
        let mut args = vec![
            "--seeds",
            "0..50",
            "--where",
            "floor_fraction>=0",
            "--png-dir",
            png.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let mut all = vec!["search"];
        all.extend_from_slice(&args);
        let o = run(&all);
        common::assert_one_line_error(&o, "0.png");
    }
}
