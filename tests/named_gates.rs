//! End-to-end tests of named gates in sweeps (`sweep --gate NAME=EXPR`): `passed[NAME]` in
//! seeds.csv agrees with the expression evaluated independently on the row's own values,
//! `pass_rate[NAME]` in summary.csv is the mean of those per grid point, the unnamed gate keeps
//! `passed`, `pass_rate` and `--per-seed kept`, the expressions are recorded in manifest.json
//! and in the store's identity, and bad definitions are one-line errors.

// The reference predicates negate float comparisons on purpose (NaN semantics).
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::{run, stderr};

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

fn col(h: &[String], name: &str) -> usize {
    h.iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {h:?}"))
}

fn num(s: &str) -> f64 {
    if s.is_empty() {
        f64::NAN
    } else {
        s.parse().unwrap()
    }
}

type Pred = fn(&dyn Fn(&str) -> f64) -> bool;
/// Named gates and, independently, what they mean.
const NAMED: [(&str, &str, Pred); 3] = [
    ("open", "floor_fraction>=0.62", |v| {
        v("floor_fraction") >= 0.62
    }),
    (
        "few-or-big",
        "components<=3 || !(largest_fraction<0.9)",
        |v| v("components") <= 3.0 || !(v("largest_fraction") < 0.9),
    ),
    ("short_path", "!(path_length>=110) && components>=2", |v| {
        !(v("path_length") >= 110.0) && v("components") >= 2.0
    }),
];
const MAIN: &str = "floor_fraction>=0.6";

fn sweep_args<'a>(out: &'a str, per_seed: &'a str, named: &'a [String]) -> Vec<&'a str> {
    let mut a = vec![
        "sweep",
        "--preset",
        "classic-4-5",
        "--set",
        "exit=5,5",
        "--vary",
        "fill=0.44,0.47",
        "--seeds",
        "0..600",
        "--metrics",
        "all",
        "--per-seed",
        per_seed,
        "--gate",
        MAIN,
        "--out",
        out,
    ];
    for g in named {
        a.extend_from_slice(&["--gate", g]);
    }
    a
}

#[test]
fn named_gates_are_counted_beside_the_unnamed_gate() {
    let d = common::scratch("named-gates");
    let out = d.join("all");
    let named: Vec<String> = NAMED.iter().map(|(n, e, _)| format!("{n}={e}")).collect();
    let o = run(&sweep_args(out.to_str().unwrap(), "all", &named));
    assert!(o.status.success(), "{}", stderr(&o));

    let (h, rows) = parse_csv(&fs::read_to_string(out.join("seeds.csv")).unwrap());
    let tail: Vec<&str> = h[h.len() - 4..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "passed",
            "passed[open]",
            "passed[few-or-big]",
            "passed[short_path]"
        ]
    );
    assert_eq!(rows.len(), 1200);
    // Per grid point: caves, unnamed passes, named passes.
    let mut per_point: BTreeMap<String, (u64, u64, Vec<u64>)> = BTreeMap::new();
    for r in &rows {
        let v = |c: &str| num(&r[col(&h, c)]);
        let passed = r[col(&h, "passed")] == "1";
        assert_eq!(passed, v("floor_fraction") >= 0.6, "seed {}", r[0]);
        let e = per_point
            .entry(r[col(&h, "fill")].clone())
            .or_insert((0, 0, vec![0; NAMED.len()]));
        e.0 += 1;
        e.1 += passed as u64;
        for (j, (name, _, pred)) in NAMED.iter().enumerate() {
            let got = &r[col(&h, &format!("passed[{name}]"))];
            assert_eq!(got == "1", pred(&v), "seed {} gate {name}", r[0]);
            e.2[j] += (got == "1") as u64;
        }
    }
    // Every named gate separates (the test would prove little otherwise).
    for (j, (name, _, _)) in NAMED.iter().enumerate() {
        let n: u64 = per_point.values().map(|p| p.2[j]).sum();
        assert!(n > 0 && n < 1200, "{name}: {n} of 1200 pass");
    }

    let (sh, srows) = parse_csv(&fs::read_to_string(out.join("summary.csv")).unwrap());
    assert_eq!(srows.len(), 2);
    let rate_cols: Vec<&str> = sh
        .iter()
        .filter(|c| c.starts_with("pass_rate"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        rate_cols,
        [
            "pass_rate",
            "pass_rate[open]",
            "pass_rate[few-or-big]",
            "pass_rate[short_path]"
        ]
    );
    // One failure column per distinct clause of every gate.
    for c in [
        "fail[floor_fraction>=0.6]",
        "fail[floor_fraction>=0.62]",
        "fail[components<=3]",
        "fail[largest_fraction<0.9]",
        "fail[path_length>=110]",
        "fail[components>=2]",
    ] {
        col(&sh, c);
    }
    for r in &srows {
        let (seeds, passed, named) = &per_point[&r[col(&sh, "fill")]];
        assert_eq!(num(&r[col(&sh, "seeds")]), *seeds as f64);
        assert_eq!(num(&r[col(&sh, "passed")]), *passed as f64);
        for (j, (name, _, _)) in NAMED.iter().enumerate() {
            let rate = num(&r[col(&sh, &format!("pass_rate[{name}]"))]);
            assert_eq!(rate, named[j] as f64 / *seeds as f64, "{name}");
        }
    }

    // The definitions are in manifest.json.
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["sweep"]["gate"], MAIN);
    let recorded: Vec<&str> = m["sweep"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap())
        .collect();
    assert_eq!(
        recorded,
        [
            "open=floor_fraction>=0.62",
            "few-or-big=components<=3 || !largest_fraction<0.9",
            "short_path=!path_length>=110 && components>=2"
        ]
    );

    // Rerunning the same command verifies; other named gates are another sweep.
    let o = run(&sweep_args(out.to_str().unwrap(), "all", &named));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("already complete"), "{}", stderr(&o));
    let fewer = named[..2].to_vec();
    let o = run(&sweep_args(out.to_str().unwrap(), "all", &fewer));
    common::assert_one_line_error(&o, "holds a different sweep");
    assert!(stderr(&o).contains("differs in gates;"), "{}", stderr(&o));

    // --per-seed kept follows the unnamed gate only, and keeps the named columns.
    let kept = d.join("kept");
    let o = run(&sweep_args(kept.to_str().unwrap(), "kept", &named));
    assert!(o.status.success(), "{}", stderr(&o));
    let (kh, krows) = parse_csv(&fs::read_to_string(kept.join("seeds.csv")).unwrap());
    assert_eq!(kh, h);
    let want: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col(&h, "passed")] == "1")
        .collect();
    assert_eq!(krows.iter().collect::<Vec<_>>(), want);
    // The named gates change no other file: summary.csv without its named columns, and every
    // other output, equal a sweep without them.
    let plain = d.join("plain");
    let o = run(&sweep_args(plain.to_str().unwrap(), "kept", &[]));
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["trajectory.csv", "components.csv"] {
        assert_eq!(
            fs::read(kept.join(f)).unwrap(),
            fs::read(plain.join(f)).unwrap(),
            "{f}"
        );
    }
    let (ph, prows) = parse_csv(&fs::read_to_string(plain.join("summary.csv")).unwrap());
    let (kh, krows) = parse_csv(&fs::read_to_string(kept.join("summary.csv")).unwrap());
    for (pr, kr) in prows.iter().zip(&krows) {
        for (i, c) in ph.iter().enumerate() {
            assert_eq!(pr[i], kr[col(&kh, c)], "{c}");
        }
    }
}

#[test]
fn bad_named_gates_are_one_line_errors() {
    let d = common::scratch("named-gates-bad");
    let out = d.join("x");
    let bad = |gates: &[&str], needle: &str| {
        let gates: Vec<String> = gates.iter().map(|s| s.to_string()).collect();
        let o = run(&sweep_args(out.to_str().unwrap(), "none", &gates));
        common::assert_one_line_error(&o, needle);
        assert!(!out.join("summary.csv").exists());
    };
    bad(&["a=components<=3", "a=boundary>5"], "defined twice");
    bad(&["open=floor_fraction>=0.6 &&"], "column 28");
    bad(&["components=3"], "use \"==\"");
    bad(&["open=floor>0.6"], "unknown metric");
}
