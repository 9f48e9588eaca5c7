//! The audit's statements: each checkable claim of the chapter as a row (its evidence from the
//! statistics [`super::audit`] measured, a verdict, a concern, a priority and a proposed
//! response), the experiments the brief asks for, and the source ledger. Text built from
//! numbers; nothing here runs a cave.

use super::*;

/// What a claim's audit proposes: the concern, its priority, the response, and the chapter's
/// sentence with the one to replace it (both empty when the text stays).
struct Response {
    concern: &'static str,
    priority: &'static str,
    response: &'static str,
    current: &'static str,
    replacement: String,
}

/// The response to a claim that holds as written.
fn no_change() -> Response {
    Response {
        concern: "none",
        priority: "low",
        response: "no change",
        current: "",
        replacement: String::new(),
    }
}

fn row(
    id: usize,
    claim: &str,
    location: &str,
    evidence: String,
    command: &str,
    verdict: Verdict,
    r: Response,
) -> ClaimRow {
    ClaimRow {
        id: format!("C{id}"),
        claim: claim.into(),
        location: location.into(),
        evidence,
        command: command.into(),
        verdict,
        concern: r.concern.into(),
        priority: r.priority,
        response: r.response.into(),
        current: r.current.into(),
        replacement: r.replacement,
    }
}

/// A claim that holds when `holds`, else is contradicted by the measurement.
fn checked(holds: bool) -> Verdict {
    if holds {
        Verdict::Holds
    } else {
        Verdict::Contradicted
    }
}

/// The runs the claims are checked against, and the command that makes them.
struct Facts<'a> {
    a: &'a Audit,
    strict: &'a VariantRun,
    classic: &'a VariantRun,
    classic10: &'a VariantRun,
    /// Seeds of the chapter's own runs.
    n: u64,
    /// The command that reproduces the chapter's runs with these seeds.
    reproduce: String,
}

/// The claim rows C1-C15, in order.
pub(super) fn claims(
    a: &Audit,
    strict: &VariantRun,
    classic: &VariantRun,
    classic10: &VariantRun,
) -> Vec<ClaimRow> {
    let n = strict.seeds;
    let f = Facts {
        a,
        strict,
        classic,
        classic10,
        n,
        reproduce: if n == 200 {
            "cavesweep reproduce chapter".to_string()
        } else {
            format!("cavesweep reproduce chapter --seeds {n}")
        },
    };
    let mut rows = trajectory_claims(&f);
    rows.extend(rule_claims(&f));
    rows.extend(grid_claims(&f));
    rows.extend(failure_claims(&f));
    rows.extend(cleanup_claims(&f));
    rows
}

/// A run's mean wall fraction per step, `0.450 -> 0.312 -> ...`.
fn traj(r: &VariantRun) -> String {
    r.trajectory
        .iter()
        .map(|t| format!("{:.3}", t.mean))
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// C1-C4: the wall fractions the two variants reach, and how they get there.
fn trajectory_claims(f: &Facts) -> Vec<ClaimRow> {
    let (n, reproduce, strict, classic10) = (f.n, f.reproduce.as_str(), f.strict, f.classic10);
    let s = strict.final_stats();
    let c4 = f.classic.final_stats().mean;
    let c10 = classic10.final_stats().mean;
    let tr = &classic10.trajectory;
    let last_change = (tr[tr.len() - 1].mean - tr[tr.len() - 2].mean).abs();
    let range_holds = format!("{:.3}", s.min) == "0.067" && format!("{:.3}", s.max) == "0.097";
    vec![
        row(
            1,
            "strict rule: measured wall fraction 0.067-0.097 across 200 seeds",
            "search loop, code comment",
            format!(
                "final wall fraction {}-{} over seeds 0..{} (numpy's generator replayed bit for bit)",
                f4(s.min),
                f4(s.max),
                n - 1
            ),
            reproduce,
            checked(range_holds),
            no_change(),
        ),
        row(
            2,
            "strict variant's measured wall fraction ~0.08, erodes with steps",
            "variant table, strict row",
            format!("mean {} (sd {}) after 4 steps", f4(s.mean), f4(s.sd)),
            reproduce,
            checked((s.mean - 0.08).abs() < 0.01),
            no_change(),
        ),
        row(
            3,
            "strict rule: wall fraction falls from 0.45 toward mostly-floor within a few steps",
            "'One measured caution' paragraph",
            format!("mean per step {}", traj(strict)),
            reproduce,
            checked(s.mean < 0.15),
            no_change(),
        ),
        row(
            4,
            "the classic center-counting 4-5 rule stabilizes near 0.35 walls (table: ~0.35, stable)",
            "'One measured caution' paragraph; variant table, classic row",
            format!(
                "mean per step to 10: {}; {} at step 4, {} at step 10, still falling {} per step at step 10",
                traj(classic10),
                f4(c4),
                f4(c10),
                f4(last_change)
            ),
            reproduce,
            if (c10 - 0.35).abs() < 0.02 && last_change < 0.002 {
                Verdict::Holds
            } else if (c4 - 0.35).abs() < 0.03 {
                Verdict::HoldsLoosely
            } else {
                Verdict::Contradicted
            },
            Response {
                concern: "'stable' is not what the trajectory shows: near 0.35 only around step 3-4, then it keeps eroding",
                priority: "high",
                response: "clarify, with the measured trajectory",
                current: "the classic center-counting 4-5 rule stabilizes near 0.35 walls",
                replacement: format!(
                    "the classic center-counting 4-5 rule erodes far more slowly: {c4:.2} walls after 4 steps and {c10:.2} after 10 ({n} seeds), still falling by about {last_change:.3} per step"
                ),
            },
        ),
    ]
}

/// C5-C7: connectivity of the strict variant, and the two rules as the chapter states them.
fn rule_claims(f: &Facts) -> Vec<ClaimRow> {
    let (a, n, reproduce, strict) = (f.a, f.n, f.reproduce.as_str(), f.strict);
    let full = strict.fully_connected();
    let worst = strict
        .connected
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let fc = a.fully_connected;
    vec![
        row(
            5,
            "strict rule produces open, fully connected maps (spawn (45, 70))",
            "search loop, code comment",
            format!(
                "{full}/{n} seeds fully connected by the chapter's own reachable_floor, mean connected fraction {}, worst {}; over the search loop's {SEARCH_SEEDS} seeds {} fully connected (cavesweep's connected_fraction)",
                f4(strict.connected_mean()),
                f4(worst),
                pct(fc[0])
            ),
            reproduce,
            if full as u64 == n {
                Verdict::Holds
            } else if worst >= 0.99 {
                Verdict::HoldsLoosely
            } else {
                Verdict::Contradicted
            },
            Response {
                concern: "'fully connected' is true of most maps, not all: small sealed pockets are common",
                priority: "high",
                response: "clarify, with the measured rate",
                current: "this strict rule produces open, fully connected maps",
                replacement: format!(
                    "this strict rule produces open, almost fully connected maps: the spawn reaches at least {:.1}% of the floor in every one of {n} seeds, but only {}/{} are fully connected (small sealed pockets)",
                    (worst * 1000.0).floor() / 10.0,
                    full,
                    n
                ),
            },
        ),
        row(
            6,
            "classic 4-5 rule: a tile becomes a wall if its 3x3 neighborhood (counting itself) holds at least 5 walls, the rule cavesweep writes B5678/S45678",
            "opening paragraph",
            format!(
                "{}/512 neighbourhoods stepped by cavesweep's B5678/S45678 agree with '3x3 incl. centre >= 5'",
                a.equivalence[0]
            ),
            reproduce,
            checked(a.equivalence[0] == 512),
            no_change(),
        ),
        row(
            7,
            "the strict rule: wall iff at least 5 of the 8 neighbours are walls (cave_step, wall_count), cavesweep's B5678/S5678",
            "cave_step and wall_count code",
            format!(
                "{}/512 neighbourhoods stepped by cavesweep's B5678/S5678 agree with '>= 5 of 8'",
                a.equivalence[1]
            ),
            reproduce,
            checked(a.equivalence[1] == 512),
            no_change(),
        ),
    ]
}

/// C8-C10: the practice of 45% fill and five steps, and what the sensitivity grid shows.
fn grid_claims(f: &Facts) -> Vec<ClaimRow> {
    let g = &f.a.grid;
    let w = |t: u32, c: bool, steps: usize| g.wall[g.row(t, c)][steps - 1];
    let (wmin, wmax) = g
        .wall
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    vec![
        row(
            8,
            "the 4-5 rule is usually run from ~45% initial fill for about five iterations",
            "opening paragraph",
            "UNVERIFIED: a statement about practice, resting on the sources alone; docs/sources.md summarises RogueBasin's article as the 4-5 rule plus a refinement from 40% fill (4 + 3 iterations); not re-read this run".into(),
            "(none: needs the sources)",
            Verdict::NotCheckable,
            Response {
                concern: "the numbers rest on an uncited source; docs/sources.md's summary of RogueBasin mentions 40% fill for its refinement",
                priority: "medium",
                response: "cite the source for '~45%' and 'about five'",
                current: "",
                replacement: String::new(),
            },
        ),
        row(
            9,
            "counting only the eight neighbors (excluding the center cell) with threshold 5 erodes walls aggressively",
            "'One measured caution' paragraph",
            format!(
                "from 0.45: threshold 5 without the centre {} after 4 steps, {} after 10; with the centre {} and {}",
                f4(w(5, false, 4)),
                f4(w(5, false, 10)),
                f4(w(5, true, 4)),
                f4(w(5, true, 10))
            ),
            &g.command,
            checked(w(5, false, 4) < 0.15 && w(5, true, 4) > 0.25),
            no_change(),
        ),
        row(
            10,
            "threshold, neighbor definition, and step count jointly control the outcome",
            "'One measured caution' paragraph",
            format!(
                "mean final wall fraction over the grid {}..{}; at 4 steps without the centre threshold 4 {} vs 6 {}; at threshold 5 and 4 steps centre excluded {} vs included {}; without the centre at threshold 5, 1 step {} vs 10 steps {}",
                f4(wmin),
                f4(wmax),
                f4(w(4, false, 4)),
                f4(w(6, false, 4)),
                f4(w(5, false, 4)),
                f4(w(5, true, 4)),
                f4(w(5, false, 1)),
                f4(w(5, false, 10))
            ),
            &g.command,
            if (w(4, false, 4) - w(6, false, 4)).abs() > 0.05
                && (w(5, false, 4) - w(5, true, 4)).abs() > 0.05
                && (w(5, false, 1) - w(5, false, 10)).abs() > 0.05
            {
                Verdict::Holds
            } else {
                Verdict::HoldsLoosely
            },
            Response {
                concern: "none; the heatmaps show it (a mean of 0.0362 is the solid border alone: every interior cell is floor)",
                priority: "low",
                response: "no change (optionally add the heatmap)",
                current: "",
                replacement: String::new(),
            },
        ),
    ]
}

/// C11-C12: the failures and measurements the chapter lists.
fn failure_claims(f: &Facts) -> Vec<ClaimRow> {
    let a = f.a;
    let fail_table = a
        .failures
        .iter()
        .map(|f| {
            format!(
                "{} `{}`: strict {}, classic {}",
                f.name,
                f.expr,
                pct(f.rates[0]),
                pct(f.rates[1])
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let never: Vec<&str> = a
        .failures
        .iter()
        .filter(|f| f.rates.iter().all(|&r| r == 0.0))
        .map(|f| f.name)
        .collect();
    vec![
        row(
            11,
            "typical failures: most floor disconnected, spawn isolated, exit unreachable, tiny inaccessible pockets, too little floor, too much open space",
            "'Pretty does not mean playable'",
            format!(
                "failure rates over seeds 0..{} (exit ({}, {}), cavesweep's choice): {fail_table}",
                SEARCH_SEEDS - 1,
                EXIT.0,
                EXIT.1
            ),
            &a.failures_command,
            if never.is_empty() { Verdict::Holds } else { Verdict::HoldsLoosely },
            Response {
                concern: if never.is_empty() {
                    "none; which failures a variant shows depends on the variant"
                } else {
                    "some listed failures never occur with either of the chapter's variants at these gates"
                },
                priority: "medium",
                response: "clarify which failures each variant shows",
                current: "",
                replacement: format!(
                    "with the strict rule the typical failure is too much open space ({} of {SEARCH_SEEDS} seeds have more than 80% floor) and small sealed pockets ({}); the classic 4-5 rule fails more often on {}",
                    pct(a.failures[5].rates[0]),
                    pct(a.failures[3].rates[0]),
                    classic_worst(&a.failures)
                ),
            },
        ),
        row(
            12,
            "useful measurements: floor fraction, largest connected floor fraction, number of floor components, boundary length, shortest path between endpoints, minimum local width",
            "'Build a cave score'",
            "all six are measured per cave by cavesweep (floor_fraction, largest_fraction, components, boundary, path_length, min_width) in the failure sweep".into(),
            &a.failures_command,
            Verdict::Holds,
            Response {
                concern: "'shortest path between endpoints' needs an exit the chapter never defines",
                priority: "low",
                response: "clarify that an exit must be chosen",
                current: "",
                replacement: format!(
                    "The shortest path between endpoints needs an exit as well as the spawn: with the spawn at (45, 70) and an exit at ({}, {}), no path exists in {} of strict and {} of classic 4-5 caves ({SEARCH_SEEDS} seeds).",
                    EXIT.0,
                    EXIT.1,
                    pct(a.failures[2].rates[0]),
                    pct(a.failures[2].rates[1])
                ),
            },
        ),
    ]
}

/// C13-C15: boundaries, keep-largest and the search loop's gate.
fn cleanup_claims(f: &Facts) -> Vec<ClaimRow> {
    let a = f.a;
    let b = &a.boundaries;
    let k = &a.keep_largest;
    let lost = |v: usize| k.means[v][0][0] - k.means[v][1][0];
    let fc = a.fully_connected;
    vec![
        row(
            13,
            "use fixed boundaries rather than np.roll wraparound: wrapping the left edge onto the right is usually undesirable for game maps",
            "'Count nearby walls with fixed boundaries'",
            format!(
                "with the chapter's solid border, fixed and wrapped counting give the very same cave in {}/{SEARCH_SEEDS} strict and {}/{SEARCH_SEEDS} classic seeds (only edge cells read beyond the grid, and the border overwrites them); without the border, mean final wall fraction fixed vs wrapped: strict {} vs {}, classic {} vs {}; mean connected fraction strict {} vs {}, classic {} vs {}",
                a.boundary_identical[0],
                a.boundary_identical[1],
                f4(b.means[0][2][0]),
                f4(b.means[0][3][0]),
                f4(b.means[1][2][0]),
                f4(b.means[1][3][0]),
                f4(b.means[0][2][2]),
                f4(b.means[0][3][2]),
                f4(b.means[1][2][2]),
                f4(b.means[1][3][2])
            ),
            &b.command,
            if a.boundary_identical == [SEARCH_SEEDS; 2] {
                Verdict::HoldsLoosely
            } else {
                Verdict::NotCheckable
            },
            Response {
                concern: "in the chapter's own pipeline the choice changes nothing (solid_border overwrites every cell whose count reaches past the edge); whether players dislike wrapped maps is a design judgement this run cannot measure",
                priority: "medium",
                response: "clarify that the solid border makes the choice moot here",
                current: "",
                replacement: format!(
                    "Because solid_border then overwrites the edge cells, the only cells whose count reaches past the grid, fixed and wrapped counting give identical caves in this pipeline ({} of {SEARCH_SEEDS} seeds for each rule); the choice matters only without a solid border.",
                    a.boundary_identical[0].min(a.boundary_identical[1])
                ),
            },
        ),
        row(
            14,
            "one common cleanup strategy is to keep only the largest connected floor component",
            "'Combine local emergence with global constraints'",
            format!(
                "mean floor fraction without vs with keep-largest: strict {} vs {} ({} of the map lost), classic {} vs {} ({} lost); components after it: {} and {}",
                f4(k.means[0][0][0]),
                f4(k.means[0][1][0]),
                pct(lost(0)),
                f4(k.means[1][0][0]),
                f4(k.means[1][1][0]),
                pct(lost(1)),
                k.means[0][1][1],
                k.means[1][1][1]
            ),
            &k.command,
            Verdict::Holds,
            Response {
                concern: "the cost of the cleanup (floor lost) is not stated",
                priority: "medium",
                response: "clarify, with the measured cost",
                current: "",
                replacement: format!(
                    "Keeping only the largest component costs little with the strict rule ({} of the map on average) and more with the classic 4-5 rule ({}).",
                    pct(lost(0)),
                    pct(lost(1))
                ),
            },
        ),
        row(
            15,
            "the search loop over range(10_000) with spawn (45, 70): gates are calibrated to the generator variant",
            "search loop and its comment; the excerpt ends mid-sentence",
            format!(
                "the same gate connected_fraction>=1 passes {} of strict caves and {} of classic 4-5 caves over seeds 0..{}",
                pct(fc[0]),
                pct(fc[1]),
                SEARCH_SEEDS - 1
            ),
            &a.failures_command,
            Verdict::Holds,
            Response {
                concern: "the gate itself is cut off in the excerpt, so its calibration cannot be checked",
                priority: "medium",
                response: "clarify, with the pass rates of the chapter's gate once its text is complete",
                current: "",
                replacement: String::new(),
            },
        ),
    ]
}

fn classic_worst(f: &[Failure]) -> String {
    f.iter()
        .max_by(|a, b| a.rates[1].total_cmp(&b.rates[1]))
        .map(|x| format!("{} ({})", x.name, pct(x.rates[1])))
        .unwrap_or_default()
}

pub(super) fn experiments() -> Vec<Experiment> {
    let run = |s: &str| Some(s.to_string());
    vec![
        Experiment {
            name: "Sensitivity grid: threshold 3..7 x centre counted or not x steps 1..10".into(),
            method: "one sweep from 45% fill, 200 seeds per point, numpy's generator; mean final wall fraction and connected fraction per point".into(),
            success: "each of the three factors alone moves the mean wall fraction by more than 0.05 somewhere on the grid".into(),
            failure: "one factor changes nothing measurable".into(),
            run: run("section 2, 'Sensitivity grid'"),
        },
        Experiment {
            name: "Failure rates of the chapter's list, both variants, 10,000 seeds".into(),
            method: "one sweep with a named gate per failure; the failure rate is the gate's pass rate".into(),
            success: "rates are stated per variant and each failure's gate is written down".into(),
            failure: "a failure has no measurable gate".into(),
            run: run("section 2, 'Failure rates'"),
        },
        Experiment {
            name: "Fixed against wrapped boundaries".into(),
            method: "outside=floor vs outside=wrap, with and without the solid border, both variants, 10,000 seeds; and the final caves compared cell by cell with the border".into(),
            success: "the effect of the boundary on wall fraction and connectivity is measured".into(),
            failure: "no setting separates the two".into(),
            run: run("section 2, 'Boundaries'"),
        },
        Experiment {
            name: "Keep-largest's cost".into(),
            method: "post=none vs post=keep-largest, both variants, 10,000 seeds; floor fraction lost".into(),
            success: "the floor lost is measured".into(),
            failure: "keep-largest leaves more than one component".into(),
            run: run("section 2, 'Keep-largest'"),
        },
        Experiment {
            name: "The 4-5 rule and the strict rule over all 512 neighbourhoods".into(),
            method: "step every 3x3 block once with cavesweep's kernels and compare the centre with the chapter's definition".into(),
            success: "512/512 agree".into(),
            failure: "any block differs".into(),
            run: run("section 2, claims C6 and C7"),
        },
        Experiment {
            name: "The chapter's own gate".into(),
            method: "once the search loop's gate is known (the excerpt ends mid-sentence), run it over range(10_000) for both variants and report how many seeds it keeps".into(),
            success: "the gate keeps a useful share of the strict variant's seeds and the comment's calibration claim holds".into(),
            failure: "the gate keeps almost none or almost all seeds of the variant it was calibrated for".into(),
            run: None,
        },
        Experiment {
            name: "Fill sensitivity around 45%".into(),
            method: "sweep fill 0.40..0.55 by 0.01 for both variants at 4 and 5 steps; final wall fraction and connected fraction".into(),
            success: "the '~45% initial fill' practice sits where the classic rule gives balanced, connected caves".into(),
            failure: "the measured optimum is far from 45%".into(),
            run: None,
        },
        Experiment {
            name: "RogueBasin's 'about five iterations' practice".into(),
            method: "re-read the RogueBasin article and compare its stated fill and iteration counts with the chapter's summary".into(),
            success: "the article states ~45% and about five iterations".into(),
            failure: "it states other numbers (docs/sources.md summarises 40% fill and 4 + 3 iterations for its refinement)".into(),
            run: None,
        },
        Experiment {
            name: "Minimum width as a playability gate".into(),
            method: "gate on min_width>=2 and path_length for both variants over 10,000 seeds; compare with the connectivity gate".into(),
            success: "a width gate separates visibly cramped caves from the rest".into(),
            failure: "min_width is 1 in almost every cave of both variants, so it separates nothing".into(),
            run: None,
        },
    ]
}

/// docs/sources.md, compiled in: the ledger is built from the text the repository ships.
const SOURCES_MD: &str = include_str!("../../../../../docs/sources.md");

fn bears_on(section: &str) -> &'static str {
    match section {
        "The book chapter" => "C1-C15 (the statements audited)",
        "RogueBasin" => "C6, C8",
        "Random numbers" => "C1-C5 (numpy's generator replayed)",
        _ => "none of the chapter's claims (used by other presets)",
    }
}

/// The source ledger: each `- **Title**` entry of docs/sources.md under its `##` section.
pub(super) fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = SOURCES_MD.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("## ") {
            section = h.trim().to_string();
            continue;
        }
        let Some(item) = line.strip_prefix("- ") else {
            continue;
        };
        let mut text = item.trim().to_string();
        while let Some(next) = lines.peek() {
            if next.starts_with("  ") && !next.trim_start().starts_with("- ") {
                text.push(' ');
                text.push_str(next.trim());
                lines.next();
            } else {
                break;
            }
        }
        // `**"Title"**, rest`, or `Author, "Title" (year), <url>: rest`, or `Name: rest`.
        let quoted = text.find('"').and_then(|a| {
            let b = a + 1 + text[a + 1..].find('"')?;
            Some(b + 1)
        });
        let (title, rest) = match text.strip_prefix("**").and_then(|t| t.split_once("**")) {
            Some((t, rest)) => (t.trim_matches('"').to_string(), rest.to_string()),
            None => match quoted {
                Some(end) => (text[..end].to_string(), text[end..].to_string()),
                None => match text.split_once(": ") {
                    Some((t, rest)) => (t.to_string(), rest.to_string()),
                    None => (text.clone(), String::new()),
                },
            },
        };
        let rest = rest.trim_start_matches([',', ' ']).to_string();
        let what = match rest.find(". ") {
            Some(i) => rest[..=i].to_string(),
            None => rest,
        };
        out.push(Source {
            bears_on: bears_on(&section).into(),
            section: section.clone(),
            title,
            what,
        });
    }
    out
}
