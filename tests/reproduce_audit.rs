//! `reproduce chapter --out`'s claim audit (issue 40), through the real binary: the seven
//! sections in order, every picture present and not blank, UNRUN only on experiments not run,
//! the same bytes whatever the thread count, the files it wrote before the audit unchanged, and
//! the audit's evidence equal to what the `sweep` commands it names give.

mod common;

use std::fs;
use std::path::Path;

use common::{assert_same_outputs, run, scratch, stderr};

const SECTIONS: [&str; 7] = [
    "1 Context and provenance",
    "2 Claim audit",
    "3 Source ledger",
    "4 Findings",
    "5 Upgrade proposal",
    "6 Experiment opportunities",
    "7 Review checklist",
];

fn reproduce(dir: &Path, threads: &str) -> String {
    let o = run(&[
        "reproduce",
        "chapter",
        "--threads",
        threads,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::read_to_string(dir.join("audit.md")).unwrap()
}

/// Split a command line as a POSIX shell would for the simple forms the audit writes: words
/// separated by spaces, single quotes around words holding shell characters.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in cmd.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            _ => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Run a `cavesweep sweep ... --out NAME` command the audit names, into `dir`, and return its
/// summary.csv as a header and rows.
fn run_command(cmd: &str, dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut w = words(cmd);
    assert_eq!(w[0], "cavesweep", "{cmd}");
    let n = w.len();
    assert_eq!(w[n - 2], "--out", "{cmd}");
    w[n - 1] = dir.to_str().unwrap().to_string();
    let args: Vec<&str> = w[1..].iter().map(String::as_str).collect();
    let o = run(&args);
    assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    let text = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (head, rows)
}

fn col(head: &[String], name: &str) -> usize {
    head.iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {head:?}"))
}

fn f4(s: &str) -> String {
    format!("{:.4}", s.parse::<f64>().unwrap())
}

/// The command written after "Command: `" under the subheading starting with `heading`.
fn command_under(md: &str, heading: &str) -> String {
    let at = md
        .find(&format!("### {heading}"))
        .unwrap_or_else(|| panic!("no {heading}"));
    let rest = &md[at..];
    let start = rest.find("Command: `").unwrap() + "Command: `".len();
    let end = rest[start..].find('`').unwrap();
    rest[start..start + end].to_string()
}

#[test]
fn the_audit_is_complete_deterministic_and_measured_by_the_commands_it_names() {
    let root = scratch("reproduce-audit");
    let (a, b) = (root.join("one"), root.join("two"));
    let md = reproduce(&a, "1");
    let md2 = reproduce(&b, "2");
    assert_eq!(md, md2, "audit.md depends on --threads");
    assert_same_outputs(&a, &b);

    // Exactly the seven sections, in order, under one title.
    let headings: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(headings, SECTIONS);
    assert_eq!(md.lines().filter(|l| l.starts_with("# ")).count(), 1);
    let html = fs::read_to_string(a.join("audit.html")).unwrap();
    for s in SECTIONS {
        assert!(html.contains(&format!("<h2>{s}</h2>")), "{s}");
    }

    // Every claim whose proposed response is a change appears in the upgrade proposal, as a
    // replacement sentence or as a bullet saying why there is none.
    let section = |n: usize| {
        let start = md.find(&format!("## {}", SECTIONS[n])).unwrap();
        let end = md[start + 3..]
            .find("\n## ")
            .map_or(md.len(), |e| start + 3 + e);
        &md[start..end]
    };
    let (audit_rows, proposal) = (section(1), section(4));
    let mut changes = 0;
    for line in audit_rows.lines().filter(|l| l.starts_with("| C")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let (id, response) = (cells[0].trim_start_matches("| "), cells[cells.len() - 1]);
        if !response.starts_with("no change") {
            changes += 1;
            assert!(
                proposal.contains(&format!("| {id} |")) || proposal.contains(&format!("- {id}: ")),
                "{id} proposes a change that section 5 does not carry"
            );
        }
    }
    assert!(changes >= 5, "{changes} changes proposed");

    // Every picture referenced exists beside the page and is a PNG that is not one colour.
    let mut pictures = 0;
    for part in md.split("](").skip(1) {
        let name = &part[..part.find(')').unwrap()];
        assert!(name.ends_with(".png") && !name.contains('/'), "{name}");
        let bytes = fs::read(a.join(name)).unwrap_or_else(|_| panic!("{name} missing"));
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let px = &buf[..info.buffer_size()];
        let first = &px[..3];
        assert!(
            px.chunks(3).any(|p| p != first),
            "{name} is a single colour"
        );
        pictures += 1;
    }
    // Seed 42 at steps 0..4 for two variants, the trajectory chart, two heatmaps.
    assert_eq!(pictures, 13);
    assert!(html.contains("audit-heat-wall.png") && html.contains("audit-trajectory.png"));

    // UNRUN appears only on experiments marked as not run, in section 6 (and the legend).
    let s6 = &md[md.find("## 6 ").unwrap()..md.find("## 7 ").unwrap()];
    for line in md.lines().filter(|l| l.contains("UNRUN (PROPOSAL)")) {
        assert!(s6.contains(line), "UNRUN outside section 6: {line}");
        assert!(!line.contains("RUN by this audit"), "{line}");
    }
    assert!(s6.matches("UNRUN (PROPOSAL)").count() >= 3);
    assert!(s6.contains("RUN by this audit"));

    // Failure rates: the sweep command the audit names gives the same pass rates.
    let cmd = command_under(&md, "Failure rates");
    let (head, rows) = run_command(&cmd, &root.join("failures"));
    for gate in [
        "most-floor-disconnected",
        "spawn-isolated",
        "exit-unreachable",
        "tiny-pockets",
        "too-little-floor",
        "too-open",
    ] {
        let c = col(&head, &format!("pass_rate[{gate}]"));
        let line = md
            .lines()
            .find(|l| l.contains(&format!("`{gate}=")))
            .unwrap_or_else(|| panic!("no row for {gate}"));
        let cells: Vec<&str> = line.split(" | ").collect();
        let n = cells.len();
        assert_eq!(cells[n - 2], f4(&rows[0][c]), "{gate} strict: {line}");
        assert_eq!(
            cells[n - 1].trim_end_matches(" |"),
            f4(&rows[1][c]),
            "{gate} classic: {line}"
        );
    }

    // Keep-largest: the floor fraction means of the sweep it names.
    let cmd = command_under(&md, "Keep-largest");
    let (head, rows) = run_command(&cmd, &root.join("keep"));
    let c = col(&head, "floor_fraction_mean");
    let c14 = md.lines().find(|l| l.starts_with("| C14 |")).unwrap();
    for r in &rows {
        assert!(c14.contains(&f4(&r[c])), "{} not in {c14}", f4(&r[c]));
    }

    // C1 and C2 (the chapter's range and typical value): a plain sweep of the chapter's seeds.
    let dir = root.join("chapter-strict");
    let cmd = format!(
        "cavesweep sweep --preset chapter-strict --set rng=numpy --seeds 0..200 \
         --metrics wall_fraction --per-seed none --out {}",
        dir.display()
    );
    let (head, rows) = run_command(&cmd, &dir);
    let (lo, hi, mean) = (
        f4(&rows[0][col(&head, "wall_fraction_min")]),
        f4(&rows[0][col(&head, "wall_fraction_max")]),
        f4(&rows[0][col(&head, "wall_fraction_mean")]),
    );
    let c1 = md.lines().find(|l| l.starts_with("| C1 |")).unwrap();
    assert!(
        c1.contains(&format!("final wall fraction {lo}-{hi} ")),
        "{c1}"
    );
    let c2 = md.lines().find(|l| l.starts_with("| C2 |")).unwrap();
    assert!(c2.contains(&format!("mean {mean} ")), "{c2}");

    // The sensitivity grid's corners equal direct sweeps of one point each.
    for (rule, t, centre, steps) in [
        ("B345678/S345678", 3, "no", 1),
        ("B345678/S345678", 3, "no", 10),
        ("B78/S678", 7, "yes", 1),
        ("B78/S678", 7, "yes", 10),
    ] {
        let dir = root.join(format!("corner-{t}-{centre}-{steps}"));
        let o = run(&[
            "sweep",
            "--preset",
            "chapter-strict",
            "--set",
            "rng=numpy",
            "--set",
            &format!("rule={rule}"),
            "--set",
            &format!("steps={steps}"),
            "--seeds",
            "0..200",
            "--metrics",
            "wall_fraction,connected_fraction",
            "--per-seed",
            "none",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = fs::read_to_string(dir.join("summary.csv")).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let row: Vec<String> = r
            .records()
            .next()
            .unwrap()
            .unwrap()
            .iter()
            .map(String::from)
            .collect();
        let want = format!(
            "| `{rule}` | {t} | {centre} | {steps} | {} | {} |",
            f4(&row[col(&head, "wall_fraction_mean")]),
            f4(&row[col(&head, "connected_fraction_mean")])
        );
        assert!(md.contains(&want), "{want} not in the audit");
    }
}

#[test]
fn the_files_reproduce_wrote_before_the_audit_are_unchanged() {
    // results/chapter holds the files of `reproduce chapter --out` from before the audit
    // existed (scripts/make_results.sh); the audit only adds files beside them.
    let dir = scratch("reproduce-audit-unchanged");
    reproduce(&dir, "2");
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/chapter");
    for name in ["trajectory.csv", "seeds.csv", "report.md"] {
        assert!(
            fs::read(dir.join(name)).unwrap() == fs::read(here.join(name)).unwrap(),
            "{name} changed"
        );
    }
}
