//! `cavesweep reproduce chapter`: the chapter's experiment, its claims and our measurements side
//! by side, written as CSV and a markdown report; with `--out`, also the audit of every checkable
//! claim of the excerpt (`audit.md`, `audit.html` and their pictures: measured by
//! `cavesweep::reproduce::audit`, laid out by `cavesweep_report::audit`).

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cavesweep::io::write_atomic;
use cavesweep::reproduce::{VariantRun, audit, run_variant};
use clap::Args;

#[derive(Args)]
pub struct ReproduceArgs {
    /// What to reproduce (only `chapter`: "Generate Caves from Noise").
    what: String,
    /// Also write trajectory.csv, seeds.csv, report.md and the claim audit (audit.md,
    /// audit.html, audit-*.png) into DIR (created if needed; the same run always writes the same
    /// bytes). Without it, reproduce only prints: it writes no file unless asked to.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Number of seeds (the chapter used 200: seeds 0..199).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    seeds: u64,
    /// Replace files in --out that hold something else (a run with other --seeds, or of
    /// another version). The same run's files are always rewritten: they are the same bytes.
    #[arg(long, requires = "out")]
    force: bool,
    /// Worker threads for the audit's sweeps (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

struct Claim {
    what: &'static str,
    chapter: &'static str,
    measured: String,
    verdict: &'static str,
}

fn claims(strict: &VariantRun, classic: &VariantRun, classic10: &VariantRun) -> Vec<Claim> {
    let s = strict.final_stats();
    let (lo, hi) = (s.min, s.max);
    let range_holds = format!("{lo:.3}") == "0.067" && format!("{hi:.3}") == "0.097";
    let c4 = classic.final_stats().mean;
    let c10 = classic10.final_stats().mean;
    let last_change = (classic10.trajectory[10].mean - classic10.trajectory[9].mean).abs();
    let full = strict.fully_connected();
    let n = strict.seeds as usize;
    let worst = strict
        .connected
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    vec![
        Claim {
            what: "strict: final wall fraction across seeds",
            chapter: "0.067-0.097",
            measured: format!("{lo:.4}-{hi:.4}"),
            verdict: if range_holds {
                "holds exactly"
            } else {
                "differs"
            },
        },
        Claim {
            what: "strict: typical final wall fraction",
            chapter: "~0.08",
            measured: format!("mean {:.4} (sd {:.4})", s.mean, s.sd),
            verdict: if (s.mean - 0.08).abs() < 0.01 {
                "holds"
            } else {
                "differs"
            },
        },
        Claim {
            what: "strict: falls from 0.45 toward mostly floor within a few steps",
            chapter: "0.45 -> mostly floor",
            measured: strict
                .trajectory
                .iter()
                .map(|t| format!("{:.3}", t.mean))
                .collect::<Vec<_>>()
                .join(" -> "),
            verdict: if s.mean < 0.15 { "holds" } else { "differs" },
        },
        Claim {
            what: "classic 4-5: stabilizes near 0.35 walls",
            chapter: "~0.35, stable",
            measured: format!(
                "{c4:.4} at step 4, {c10:.4} at step 10 (step 9->10 change {last_change:.4})"
            ),
            verdict: if (c10 - 0.35).abs() < 0.02 && last_change < 0.002 {
                "holds"
            } else if (c4 - 0.35).abs() < 0.03 {
                "loose: near 0.35 after 4 steps, but still eroding after 10"
            } else {
                "differs"
            },
        },
        Claim {
            what: "strict: open, fully connected maps (spawn 45,70)",
            chapter: "fully connected",
            measured: format!(
                "{full}/{n} seeds fully connected; connected fraction mean {:.4}, worst {worst:.4}",
                strict.connected_mean()
            ),
            verdict: if full == n {
                "holds exactly"
            } else if worst >= 0.99 {
                "loose: every map >= 99% connected, but small sealed pockets are common"
            } else {
                "differs: some maps are badly disconnected"
            },
        },
    ]
}

pub fn main(a: ReproduceArgs) -> Result<()> {
    if a.what != "chapter" {
        bail!("unknown experiment {:?}: the only one is `chapter`", a.what);
    }
    let strict = run_variant("chapter-strict", a.seeds, 4)?;
    let classic = run_variant("classic-4-5", a.seeds, 4)?;
    let classic10 = run_variant("classic-4-5", a.seeds, 10)?;
    let claims = claims(&strict, &classic, &classic10);

    let t = text(a.seeds, &strict, &classic10, &claims)?;
    let mut out = std::io::stdout().lock();
    write!(out, "{t}")?;
    let Some(dir) = &a.out else {
        writeln!(
            out,
            "\n(add --out DIR to write trajectory.csv, seeds.csv, report.md and the claim audit)"
        )?;
        return Ok(());
    };
    let threads = super::sweep::check_threads(a.threads)?;
    let started = std::time::Instant::now();
    let audit = audit::audit(&strict, &classic, &classic10, threads)?;
    let audit_files = cavesweep_report::audit::files(&audit)?;
    let measured = started.elapsed();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output folder {}", dir.display()))?;
    let mut files = vec![
        (
            "trajectory.csv".to_string(),
            trajectory_csv(&strict, &classic10)?,
        ),
        ("seeds.csv".to_string(), seeds_csv(&strict, &classic)?),
        ("report.md".to_string(), report_md(a.seeds, &t).into_bytes()),
    ];
    let pictures = audit_files.len() - 2;
    files.extend(audit_files);
    let files: Vec<_> = files
        .into_iter()
        .map(|(name, bytes)| (dir.join(name), bytes))
        .collect();
    write_files(&files, a.force)?;
    writeln!(
        out,
        "\nwrote {}/{{trajectory.csv,seeds.csv,report.md}} and the claim audit: audit.md, \
         audit.html, {pictures} pictures ({} claims audited in {:.1} s)",
        dir.display(),
        audit.claims.len(),
        measured.as_secs_f64()
    )?;
    Ok(())
}

/// The printed report (also quoted whole in report.md): the mean wall fraction per step of
/// both rules side by side, then each of the chapter's claims with our measurement and verdict.
fn text(
    seeds: u64,
    strict: &VariantRun,
    classic10: &VariantRun,
    claims: &[Claim],
) -> Result<String> {
    let mut t = String::new();
    writeln!(
        t,
        "Reproducing 'Generate Caves from Noise': numpy default_rng(seed) replayed bit for bit,\n\
         {}, 90x140, fill 0.45, outside FLOOR, solid border.\n",
        match seeds {
            1 => "seed 0".to_string(),
            n => format!("seeds 0..{}", n - 1),
        }
    )?;
    writeln!(
        t,
        "mean wall fraction per step [min, max] over {} seeds",
        seeds
    )?;
    writeln!(
        t,
        "step  chapter-strict (B5678/S5678)   classic-4-5 (B5678/S45678)"
    )?;
    // classic-4-5 runs to 10 steps; the strict column is blank past its 4.
    for (k, c) in classic10.trajectory.iter().enumerate() {
        let s = strict
            .trajectory
            .get(k)
            .map(|s| format!("{:.4} [{:.4}, {:.4}]", s.mean, s.min, s.max))
            .unwrap_or_default();
        writeln!(
            t,
            "{k:>4}  {s:<30}   {:.4} [{:.4}, {:.4}]",
            c.mean, c.min, c.max
        )?;
    }
    writeln!(t, "\nthe chapter's claims")?;
    for c in claims {
        writeln!(
            t,
            "- {}\n    chapter: {}\n    measured: {}\n    verdict: {}",
            c.what, c.chapter, c.measured, c.verdict
        )?;
    }
    Ok(t)
}

/// trajectory.csv: the per-step statistics of the strict run and the 10-step classic run.
fn trajectory_csv(strict: &VariantRun, classic10: &VariantRun) -> Result<Vec<u8>> {
    let mut traj = csv::Writer::from_writer(Vec::new());
    traj.write_record(["preset", "steps", "step", "n", "mean", "sd", "min", "max"])?;
    for run in [strict, classic10] {
        for s in &run.trajectory {
            traj.write_record([
                run.preset.clone(),
                run.steps.to_string(),
                s.step.to_string(),
                run.seeds.to_string(),
                format!("{:.6}", s.mean),
                format!("{:.6}", s.sd),
                format!("{:.6}", s.min),
                format!("{:.6}", s.max),
            ])?;
        }
    }
    Ok(traj.into_inner()?)
}

/// seeds.csv: one row per seed of each 4-step run (final walls, the chapter's connected
/// fraction, our component count).
fn seeds_csv(strict: &VariantRun, classic: &VariantRun) -> Result<Vec<u8>> {
    let mut seeds = csv::Writer::from_writer(Vec::new());
    seeds.write_record([
        "preset",
        "steps",
        "seed",
        "final_wall_fraction",
        "chapter_connected_fraction",
        "components",
    ])?;
    for run in [strict, classic] {
        for (seed, ((w, c), k)) in run
            .final_walls
            .iter()
            .zip(&run.connected)
            .zip(&run.components)
            .enumerate()
        {
            seeds.write_record([
                run.preset.clone(),
                run.steps.to_string(),
                seed.to_string(),
                format!("{w:.6}"),
                format!("{c:.6}"),
                k.to_string(),
            ])?;
        }
    }
    Ok(seeds.into_inner()?)
}

/// report.md: how it was made, the printed report `t` verbatim, and what the CSV files hold.
fn report_md(seeds: u64, t: &str) -> String {
    format!(
        "# The chapter reproduced\n\nMade by `cavesweep reproduce chapter --seeds {}` \
         (cavesweep {}). Every seed's noise is numpy's `default_rng(seed).random((90, 140)) \
         < 0.45`, replayed bit for bit; the connectivity figure uses the chapter's own \
         `reachable_floor` semantics.\n\n```text\n{t}```\n\nFiles: `trajectory.csv` \
         (per-step statistics; classic-4-5 run to 10 steps, its first 4 steps are the \
         4-step run), `seeds.csv` (one row per seed and 4-step variant).\n",
        seeds,
        env!("CARGO_PKG_VERSION")
    )
}

/// Write the files, each atomically. First refuse (writing none) if any of them is where a
/// link, folder or special file is, and without `force` if any holds other bytes: rewriting
/// the same run's files is always allowed.
fn write_files(files: &[(PathBuf, Vec<u8>)], force: bool) -> Result<()> {
    cavesweep::io::check_writable(files.iter().map(|(p, _)| p.as_path()))?;
    if !force {
        cavesweep::io::check_no_replace(files.iter().map(|(p, b)| (p.as_path(), b.as_slice())))?;
    }
    for (path, bytes) in files {
        write_atomic(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
