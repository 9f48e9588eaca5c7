//! `audit.md` and `audit.html` of `cavesweep reproduce chapter --out`: the chapter's research
//! brief answered in its seven sections, with the pictures beside the pages.
//!
//! The engine ([`cavesweep_engine::reproduce::audit`]) measures; this module only lays out what
//! it measured, with the same blocks, charts and cave pictures as `cavesweep report`, so the
//! audit looks like the rest of cavesweep's output and draws identically on every machine.
//! Nothing here reads a clock: the same version writes the same bytes.

use cavesweep_engine::render::{self, Marks};
use cavesweep_engine::reproduce::audit::{Audit, Comparison, VARIANTS, Verdict};

use super::ReportError;
use super::chart::{self, Band, ColorMap, Heatmap, Lines, Panel, Png, XAxis};
use super::page::{self, Block, Figure};

/// The seven top-level sections, in the order the brief asks for.
pub const SECTIONS: [&str; 7] = [
    "1 Context and provenance",
    "2 Claim audit",
    "3 Source ledger",
    "4 Findings",
    "5 Upgrade proposal",
    "6 Experiment opportunities",
    "7 Review checklist",
];

/// The audit's files: `audit.md`, `audit.html` and every picture they show, as
/// `(file name, bytes)` in a fixed order, all to be written side by side.
pub fn files(a: &Audit) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
    let mut pictures: Vec<(String, Png)> = Vec::new();
    let blocks = blocks(a, &mut pictures)?;
    let mut out = vec![
        ("audit.md".to_string(), page::markdown(&blocks).into_bytes()),
        ("audit.html".to_string(), page::html(&blocks).into_bytes()),
    ];
    out.extend(pictures.into_iter().map(|(n, p)| (n, p.bytes)));
    Ok(out)
}

fn fig(name: &str, png: &Png, alt: &str, caption: Option<String>) -> Figure {
    Figure {
        path: name.to_string(),
        alt: alt.to_string(),
        width: png.width,
        height: png.height,
        caption,
    }
}

fn render_err(e: String) -> ReportError {
    ReportError::Render(e)
}

fn f4(v: f64) -> String {
    format!("{v:.4}")
}

fn short_name(v: usize) -> &'static str {
    ["strict", "classic"][v]
}

/// The audit's blocks in the order the brief asks for, a function per section (section 2, the
/// claim audit with its pictures and sweeps, in five), the pictures they show added to `pics`.
fn blocks(a: &Audit, pics: &mut Vec<(String, Png)>) -> Result<Vec<Block>, ReportError> {
    let mut b = vec![Block::Title(
        "'Generate Caves from Noise': the chapter's claims, audited".into(),
    )];
    context(a, &mut b);
    claims(a, &mut b);
    seed42(a, &mut b, pics)?;
    trajectory(a, &mut b, pics)?;
    sensitivity(a, &mut b, pics)?;
    failures(a, &mut b);
    ledger(a, &mut b);
    findings(a, &mut b);
    proposal(a, &mut b);
    experiments(a, &mut b);
    checklist(a, &mut b);
    Ok(b)
}

/// The brief's context: what wrote the audit, from which sources, and what its labels mean.
fn context(a: &Audit, b: &mut Vec<Block>) {
    // 1 Context and provenance.
    b.push(Block::Heading(SECTIONS[0].into()));
    b.push(Block::Para(format!(
        "Written by `cavesweep reproduce chapter --out DIR` (cavesweep {}). It audits the \
         checkable statements of the excerpt of chapter 15 of the open book *Cellular Automata \
         From First Principles* (the excerpt ends mid-sentence in the search loop's comment). \
         Every cave is generated with numpy's `default_rng(seed)` replayed bit for bit, 90x140, \
         45% fill, cells outside the grid read as FLOOR, a solid border after each step, spawn \
         (45, 70), as the chapter does.",
        a.version
    )));
    b.push(Block::Para(format!(
        "Labels: **REPRODUCED** marks figures computed by this run (the chapter's runs over \
         seeds 0..{}, the sensitivity grid over 200 seeds per point, the failure, boundary and \
         cleanup sweeps over the search loop's 10,000 seeds, the 512-neighbourhood checks); \
         **BACKGROUND** marks what rests on the sources in docs/sources.md, which this run did \
         not re-read (**UNVERIFIED** where a fact rests on a source alone); **PROPOSAL** marks \
         suggested text and experiments; **UNRUN** marks experiments this run did not do. \
         Nothing is presented as run that was not.",
        a.seeds - 1
    )));
    b.push(Block::Para(
        "Each claim row names the command that measures it again; the sweeps are the in-process \
         equivalents of those commands and give the same statistics as their `summary.csv`. The \
         statements audited are quoted briefly, with where in the excerpt each appears, in \
         cavesweep's source (`crates/engine/src/reproduce/audit.rs`); the excerpt itself is not \
         stored in the repository."
            .into(),
    ));
}

/// Section 2's head: one row per checkable statement of the chapter.
fn claims(a: &Audit, b: &mut Vec<Block>) {
    // 2 Claim audit.
    b.push(Block::Heading(SECTIONS[1].into()));
    b.push(Block::Para(
        "REPRODUCED: one row per checkable statement. Evidence is measured by this run except \
         where it says UNVERIFIED."
            .into(),
    ));
    b.push(Block::Table {
        head: [
            "id",
            "claim (where)",
            "evidence",
            "command",
            "verdict",
            "concern",
            "priority",
            "proposed response",
        ]
        .map(String::from)
        .to_vec(),
        rows: a
            .claims
            .iter()
            .map(|c| {
                vec![
                    c.id.clone(),
                    format!("{} ({})", c.claim, c.location),
                    c.evidence.clone(),
                    if c.command.starts_with("cavesweep ") {
                        format!("`{}`", c.command)
                    } else {
                        c.command.clone()
                    },
                    c.verdict.as_str().to_string(),
                    c.concern.clone(),
                    c.priority.to_string(),
                    c.response.clone(),
                ]
            })
            .collect(),
        numeric: vec![],
    });
}

/// Seed 42 after each step, both variants, as a strip of pictures.
fn seed42(a: &Audit, b: &mut Vec<Block>, pics: &mut Vec<(String, Png)>) -> Result<(), ReportError> {
    b.push(Block::Subheading(
        "Seed 42 after each step (REPRODUCED)".into(),
    ));
    for k in 0..a.pictured[0].len() {
        let mut strip = Vec::new();
        for (v, (_, label)) in VARIANTS.iter().enumerate() {
            let grid = &a.pictured[v][k];
            let recipe = &a.pictured_recipes[v];
            let marks = Marks::of(recipe);
            let scale = 2;
            let bytes = render::png_bytes(grid, scale, &marks)
                .map_err(|e| ReportError::Render(cavesweep_engine::error::text(&e)))?;
            let png = Png {
                width: render::picture_width(grid.rows(), grid.cols(), scale, false) as u32,
                height: (grid.rows() * scale) as u32,
                bytes,
            };
            let name = format!("audit-seed42-{}-step{k}.png", short_name(v));
            strip.push(fig(
                &name,
                &png,
                &format!("seed 42, {label}, step {k}"),
                Some(format!(
                    "{label}, step {k}: wall fraction {}",
                    f4(grid.wall_fraction())
                )),
            ));
            pics.push((name, png));
        }
        b.push(Block::Strip(strip));
    }
    b.push(Block::Para(
        "Walls dark, floor light; floor the spawn cannot reach is blue, the spawn a green ring."
            .into(),
    ));
    Ok(())
}

/// The wall fraction per step of both variants, mean and p05-p95 band.
fn trajectory(
    a: &Audit,
    b: &mut Vec<Block>,
    pics: &mut Vec<(String, Png)>,
) -> Result<(), ReportError> {
    b.push(Block::Subheading(
        "Wall fraction per step, both variants (REPRODUCED)".into(),
    ));
    let series: Vec<Band> = a
        .bands
        .iter()
        .map(|band| Band {
            label: band.label.clone(),
            x: (0..band.mean.len()).map(|x| x as f64).collect(),
            mean: band.mean.clone(),
            lo_hi: Some((band.p05.clone(), band.p95.clone())),
        })
        .collect();
    let png = chart::lines(&Lines {
        title: "Mean wall fraction per step, p05-p95 band (200 seeds)".into(),
        x_desc: "step (0 = after the 45% fill)".into(),
        y_desc: "wall fraction".into(),
        x_axis: XAxis::Integers,
        series,
        y_range: Some((0.0, 0.5)),
        width: 640,
        height: 360,
        legend: true,
    })
    .map_err(render_err)?;
    b.push(Block::Image(fig(
        "audit-trajectory.png",
        &png,
        "wall fraction per step, strict and classic, with p05-p95 bands",
        Some(format!(
            "Strict at step 10: {}; classic 4-5 at step 4: {}, at step 10: {}.",
            f4(a.bands[0].mean[10]),
            f4(a.bands[1].mean[4]),
            f4(a.bands[1].mean[10])
        )),
    )));
    pics.push(("audit-trajectory.png".into(), png));
    Ok(())
}

/// The sensitivity grid (threshold x centre x steps) as heat maps and a table.
fn sensitivity(
    a: &Audit,
    b: &mut Vec<Block>,
    pics: &mut Vec<(String, Png)>,
) -> Result<(), ReportError> {
    b.push(Block::Subheading(
        "Sensitivity grid: threshold x centre x steps (REPRODUCED)".into(),
    ));
    b.push(Block::Para(format!(
        "From a 45% fill, 200 seeds per point; a rule 'WALL iff at least t walls' among the 8 \
         neighbours (centre not counted: `B{{t..8}}/S{{t..8}}`) or in the 3x3 block (centre \
         counted: `B{{t..8}}/S{{t-1..8}}`). Threshold 5 without the centre is the chapter's \
         strict rule, with it the classic 4-5 rule. The connected fraction is cavesweep's \
         `connected_fraction` (0 for a WALL spawn). Command: `{}`",
        a.grid.command
    )));
    for (name, what, values) in [
        (
            "audit-heat-wall.png",
            "mean final wall fraction",
            &a.grid.wall,
        ),
        (
            "audit-heat-connected.png",
            "mean connected fraction",
            &a.grid.connected,
        ),
    ] {
        let panels = [false, true]
            .iter()
            .map(|&centre| Panel {
                title: Some(if centre {
                    "centre counted (3x3)".into()
                } else {
                    "centre not counted (8 neighbours)".into()
                }),
                values: a
                    .grid
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.1 == centre)
                    .flat_map(|(i, _)| values[i].iter().copied())
                    .collect(),
            })
            .collect();
        let png = chart::heatmap(&Heatmap {
            title: format!("{what} by threshold and steps"),
            subtitle: Some("45% fill, 200 seeds per cell".into()),
            x_key: "steps".into(),
            x_values: (1..=values[0].len()).map(|s| s.to_string()).collect(),
            y_key: "threshold".into(),
            y_values: a
                .grid
                .rules
                .iter()
                .filter(|r| !r.1)
                .map(|r| r.0.to_string())
                .collect(),
            panels,
            range: (0.0, 1.0),
            map: ColorMap::Viridis,
            legend: what.into(),
            format: |v| format!("{v:.2}"),
        })
        .map_err(render_err)?;
        b.push(Block::Image(fig(name, &png, what, None)));
        pics.push((name.into(), png));
    }
    let mut rows = Vec::new();
    for (i, r) in a.grid.rules.iter().enumerate() {
        for s in [1usize, 4, 10] {
            rows.push(vec![
                format!("`{}`", r.2),
                r.0.to_string(),
                if r.1 { "yes" } else { "no" }.into(),
                s.to_string(),
                f4(a.grid.wall[i][s - 1]),
                f4(a.grid.connected[i][s - 1]),
            ]);
        }
    }
    b.push(Block::Table {
        head: [
            "rule",
            "threshold",
            "centre",
            "steps",
            "wall fraction",
            "connected fraction",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        numeric: vec![false, true, false, true, true, true],
    });
    Ok(())
}

/// The failure rates of the chapter's search loop, and the boundary and keep-largest comparisons.
fn failures(a: &Audit, b: &mut Vec<Block>) {
    b.push(Block::Subheading(
        "Failure rates over seeds 0..9999 (REPRODUCED)".into(),
    ));
    b.push(Block::Para(format!(
        "Each failure is a gate a failing cave matches; the rate is the share of caves matching \
         it. The chapter names no exit: cavesweep puts one at (84, 134) for 'exit unreachable'. \
         Command: `{}`",
        a.failures_command
    )));
    b.push(Block::Table {
        head: [
            "failure (the chapter's words)",
            "gate",
            "strict",
            "classic 4-5",
        ]
        .map(String::from)
        .to_vec(),
        rows: a
            .failures
            .iter()
            .map(|f| {
                vec![
                    f.name.into(),
                    format!("`{}={}`", f.gate, f.expr),
                    f4(f.rates[0]),
                    f4(f.rates[1]),
                ]
            })
            .chain(std::iter::once(vec![
                "(passes) fully connected".into(),
                "`fully-connected=connected_fraction>=1`".into(),
                f4(a.fully_connected[0]),
                f4(a.fully_connected[1]),
            ]))
            .collect(),
        numeric: vec![false, false, true, true],
    });

    b.push(Block::Subheading(
        "Boundaries: fixed (outside FLOOR) against wrapped, seeds 0..9999 (REPRODUCED)".into(),
    ));
    b.push(Block::Para(format!(
        "With the chapter's solid border, fixed and wrapped counting made the very same final \
         cave, cell for cell, in {} of 10000 strict and {} of 10000 classic seeds (compared in \
         this run): only edge cells count neighbours beyond the grid, and the border overwrites \
         them after every step. Without the border the choice shows. Command: `{}`",
        a.boundary_identical[0], a.boundary_identical[1], a.boundaries.command
    )));
    b.push(comparison(&a.boundaries));
    b.push(Block::Subheading(
        "Keep-largest: the floor it removes, seeds 0..9999 (REPRODUCED)".into(),
    ));
    b.push(Block::Para(format!(
        "Command: `{}`",
        a.keep_largest.command
    )));
    b.push(comparison(&a.keep_largest));
}

/// Section 3: the sources the audit rests on.
fn ledger(a: &Audit, b: &mut Vec<Block>) {
    // 3 Source ledger.
    b.push(Block::Heading(SECTIONS[2].into()));
    b.push(Block::Para(
        "BACKGROUND, from docs/sources.md. cavesweep did not re-read any source this run: a \
         fact that rests on a source alone is UNVERIFIED; what the tests check (numpy's \
         generator replayed against a fixture numpy wrote, the rules against Golly) is noted in \
         docs/sources.md."
            .into(),
    ));
    b.push(Block::Table {
        head: [
            "section",
            "source",
            "what it holds",
            "bears on",
            "status this run",
        ]
        .map(String::from)
        .to_vec(),
        rows: a
            .sources
            .iter()
            .map(|s| {
                vec![
                    s.section.clone(),
                    s.title.clone(),
                    s.what.clone(),
                    s.bears_on.clone(),
                    "not re-read: UNVERIFIED where a fact rests on it alone".into(),
                ]
            })
            .collect(),
        numeric: vec![],
    });
}

/// Section 4: the claims grouped by verdict.
fn findings(a: &Audit, b: &mut Vec<Block>) {
    // 4 Findings.
    b.push(Block::Heading(SECTIONS[3].into()));
    for (title, verdict) in [
        ("Supporting", Verdict::Holds),
        ("Qualifying", Verdict::HoldsLoosely),
        ("Contradictory", Verdict::Contradicted),
        ("Unresolved", Verdict::NotCheckable),
    ] {
        b.push(Block::Subheading(title.into()));
        let items: Vec<String> = a
            .claims
            .iter()
            .filter(|c| c.verdict == verdict)
            .map(|c| format!("{} ({}): {}", c.id, c.claim, c.evidence))
            .collect();
        if items.is_empty() {
            b.push(Block::Para("None.".into()));
        }
        for i in items {
            b.push(Block::Para(format!("- {i}")));
        }
    }
}

/// Section 5: the text changes proposed, with the numbers they rest on.
fn proposal(a: &Audit, b: &mut Vec<Block>) {
    // 5 Upgrade proposal.
    b.push(Block::Heading(SECTIONS[4].into()));
    b.push(Block::Para(
        "PROPOSAL: the smallest text changes, each with the measured number it rests on.".into(),
    ));
    let proposals: Vec<Vec<String>> = a
        .claims
        .iter()
        .filter(|c| !c.replacement.is_empty())
        .map(|c| {
            vec![
                c.id.clone(),
                if c.current.is_empty() {
                    format!("(add after: {})", c.location)
                } else {
                    format!("\"{}\"", c.current)
                },
                format!("\"{}\"", c.replacement),
                format!("{}: {}", c.response, c.evidence),
            ]
        })
        .collect();
    b.push(Block::Table {
        head: ["id", "current text", "replacement", "reason"]
            .map(String::from)
            .to_vec(),
        rows: proposals,
        numeric: vec![],
    });
    // Every other proposed change, said as what it is: a citation to add, or a change whose
    // sentence needs what this run could not measure (nothing presented as run that was not).
    let cites: Vec<String> = a
        .claims
        .iter()
        .filter(|c| c.replacement.is_empty() && !c.response.starts_with("no change"))
        .map(|c| {
            if c.response.starts_with("cite") {
                format!("{}: {}", c.id, c.response)
            } else {
                format!(
                    "{}: {} (no sentence proposed: it needs what this run could not measure; see section 6)",
                    c.id, c.response
                )
            }
        })
        .collect();
    for c in cites {
        b.push(Block::Para(format!("- {c}")));
    }
}

/// Section 6: the experiments, run or proposed.
fn experiments(a: &Audit, b: &mut Vec<Block>) {
    // 6 Experiment opportunities.
    b.push(Block::Heading(SECTIONS[5].into()));
    b.push(Block::Table {
        head: ["experiment", "status", "method", "success", "failure"]
            .map(String::from)
            .to_vec(),
        rows: a
            .experiments
            .iter()
            .map(|e| {
                vec![
                    e.name.clone(),
                    match &e.run {
                        Some(w) => format!("RUN by this audit ({w})"),
                        None => "UNRUN (PROPOSAL)".into(),
                    },
                    e.method.clone(),
                    e.success.clone(),
                    e.failure.clone(),
                ]
            })
            .collect(),
        numeric: vec![],
    });
}

/// Section 7: what a reviewer decides.
fn checklist(a: &Audit, b: &mut Vec<Block>) {
    // 7 Review checklist.
    b.push(Block::Heading(SECTIONS[6].into()));
    let mut items: Vec<String> = a
        .claims
        .iter()
        .filter(|c| !c.response.starts_with("no change"))
        .map(|c| {
            format!(
                "- [ ] {} ({}, {}): decide on \"{}\"",
                c.id,
                c.verdict.as_str(),
                c.priority,
                c.response
            )
        })
        .collect();
    items.extend(
        [
            "- [ ] The failure gates' thresholds (section 2) match what the chapter means by each failure",
            "- [ ] The exit at (84, 134) is acceptable for 'exit unreachable', or name the chapter's own",
            "- [ ] The UNVERIFIED source facts (section 3) are checked against the sources",
            "- [ ] Each UNRUN experiment (section 6) is run, or dropped with a reason",
        ]
        .map(String::from),
    );
    b.extend(items.into_iter().map(Block::Para));
}

fn comparison(c: &Comparison) -> Block {
    let mut head = vec!["variant".to_string(), "setting".to_string()];
    head.extend(c.metrics.iter().map(|m| format!("{} mean", m.name())));
    let rows = (0..2)
        .flat_map(|v| {
            c.settings.iter().enumerate().map(move |(s, setting)| {
                let mut r = vec![VARIANTS[v].1.to_string(), format!("`{setting}`")];
                r.extend(c.means[v][s].iter().map(|&x| f4(x)));
                r
            })
        })
        .collect();
    let n = head.len();
    Block::Table {
        head,
        rows,
        numeric: (0..n).map(|i| i > 1).collect(),
    }
}
