//! `cavesweep bench --search`: the seed-search figures, each beside its like-for-like
//! comparison measured alternately in the same run:
//!
//! 1. generation alone (fill + steps + post-steps, no metrics) vs a search whose first clause,
//!    a fraction, rejects about 95% of caves (target: >= 0.9x);
//! 2. `sweep --metrics path_length --per-seed none` vs `search --where 'path_length>=0'
//!    --top 10 --by path_length` on the same seeds, both run as this binary (target: >= 1x).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use cavesweep::benchmark::Spread;
use cavesweep::benchmark::search::reject_bench;
use cavesweep::io::write_atomic;
use cavesweep::recipe::Recipe;

fn rate(s: &Spread) -> String {
    format!("{:.0} [{:.0}-{:.0}]", s.median, s.min, s.max)
}

/// Run this binary with `args`, returning the wall time in seconds.
fn timed(args: &[String]) -> Result<f64> {
    let exe = std::env::current_exe().context("cannot find the cavesweep binary")?;
    let t = Instant::now();
    let o = Command::new(exe)
        .args(args)
        .output()
        .context("cannot run cavesweep")?;
    let secs = t.elapsed().as_secs_f64();
    if !o.status.success() {
        bail!(
            "cavesweep {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(secs)
}

/// Shell-quote an argument for the printed command.
fn quoted(a: &str) -> String {
    if a.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.,=/:".contains(c))
    {
        a.to_string()
    } else {
        format!("'{a}'")
    }
}

pub fn main(
    recipes: &[Recipe],
    threads: usize,
    repeats: usize,
    seeds: u64,
    out_dir: &Path,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let tmp = std::env::temp_dir().join(format!("cavesweep-bench-search-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "preset", "figure", "threads", "seeds", "repeats", "median", "min", "max", "ratio",
        "command",
    ])?;
    for recipe in recipes {
        let reject_seeds = (seeds / 5).max(10_000);
        let b = reject_bench(recipe, threads, reject_seeds, repeats)?;
        writeln!(
            out,
            "{}: {threads} threads, median [min-max] of {repeats}, seeds/s",
            recipe.name
        )?;
        writeln!(
            out,
            "  generation only (fill + steps, no metrics), {reject_seeds} seeds: {}",
            rate(&b.generation)
        )?;
        writeln!(
            out,
            "  search {:?} (first clause rejects {:.1}% of a sample): {} = {:.3}x generation (target >= 0.9)",
            b.query,
            b.rejected * 100.0,
            rate(&b.search),
            b.ratio()
        )?;
        let gen_cmd = format!("(library) generation only, seeds 0..{reject_seeds}");
        let search_cmd = format!(
            "cavesweep search --preset {} --seeds 0..{reject_seeds} --where {} --threads {threads}",
            recipe.name,
            quoted(&b.query)
        );
        for (fig, s, ratio, cmd) in [
            ("generation", &b.generation, 1.0, &gen_cmd),
            ("search_reject", &b.search, b.ratio(), &search_cmd),
        ] {
            csv.write_record([
                recipe.name.clone(),
                fig.into(),
                threads.to_string(),
                reject_seeds.to_string(),
                repeats.to_string(),
                format!("{:.1}", s.median),
                format!("{:.1}", s.min),
                format!("{:.1}", s.max),
                format!("{ratio:.3}"),
                cmd.clone(),
            ])?;
        }

        // Top 10 by path length vs the sweep computing path_length, end to end.
        let mut base: Vec<String> = vec!["--preset".into(), recipe.name.clone()];
        if recipe.exit.is_none() {
            let (y, x) = (
                (recipe.rows / 16).max(1),
                recipe.cols - 1 - (recipe.cols / 16).max(1),
            );
            base.extend(["--set".into(), format!("exit={y},{x}")]);
        }
        base.extend([
            "--seeds".into(),
            format!("0..{seeds}"),
            "--threads".into(),
            threads.to_string(),
        ]);
        let sweep_dir = tmp.join("sweep");
        let found = tmp.join("top.csv");
        let mut sweep_args: Vec<String> = vec!["sweep".into()];
        sweep_args.extend(base.iter().cloned());
        sweep_args.extend(
            [
                "--metrics",
                "path_length",
                "--per-seed",
                "none",
                "--force",
                "--out",
            ]
            .map(String::from),
        );
        sweep_args.push(sweep_dir.display().to_string());
        let mut search_args: Vec<String> = vec!["search".into()];
        search_args.extend(base.iter().cloned());
        search_args.extend(
            [
                "--where",
                "path_length>=0",
                "--top",
                "10",
                "--by",
                "path_length",
                "--force",
                "--out",
            ]
            .map(String::from),
        );
        search_args.push(found.display().to_string());
        let (mut sw, mut se) = (vec![], vec![]);
        for _ in 0..repeats {
            let _ = std::fs::remove_dir_all(&sweep_dir);
            sw.push(seeds as f64 / timed(&sweep_args)?);
            se.push(seeds as f64 / timed(&search_args)?);
        }
        let (sw, se) = (Spread::of(sw), Spread::of(se));
        let ratio = se.median / sw.median;
        writeln!(
            out,
            "  sweep --metrics path_length --per-seed none, {seeds} seeds: {}",
            rate(&sw)
        )?;
        writeln!(
            out,
            "  search --where 'path_length>=0' --top 10 --by path_length, {seeds} seeds: {} = {ratio:.3}x the sweep (target >= 1)",
            rate(&se)
        )?;
        let show = |a: &[String]| {
            let mut v = vec!["cavesweep".to_string()];
            v.extend(
                a.iter()
                    .filter(|x| !x.contains("cavesweep-bench-search"))
                    .map(|x| quoted(x)),
            );
            v.join(" ")
        };
        for (fig, s, ratio, cmd) in [
            ("sweep_path_length", &sw, 1.0, show(&sweep_args)),
            ("search_top10_path_length", &se, ratio, show(&search_args)),
        ] {
            csv.write_record([
                recipe.name.clone(),
                fig.into(),
                threads.to_string(),
                seeds.to_string(),
                repeats.to_string(),
                format!("{:.1}", s.median),
                format!("{:.1}", s.min),
                format!("{:.1}", s.max),
                format!("{ratio:.3}"),
                cmd,
            ])?;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let path = out_dir.join("search.csv");
    write_atomic(&path, &csv.into_inner()?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}
