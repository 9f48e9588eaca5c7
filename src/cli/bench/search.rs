//! `cavesweep bench --search`: the seed-search figures, each beside its like-for-like
//! comparison measured alternately in the same run:
//!
//! 1. generation alone (fill + steps + post-steps, no metrics) vs a search whose first clause,
//!    a fraction, rejects about 95% of caves (target: >= 0.9x), and the same first clause alone
//!    (what the rejection itself costs; the rest of the gap is the flood fills of the ~5% of
//!    caves that pass it);
//! 2. `sweep --metrics path_length --per-seed none` vs `search --where 'path_length>=0'
//!    --top 10 --by path_length` on the same seeds, both run as this binary (target: >= 1x).
//!
//! Rates are per wall-clock second and per CPU-second (see `cavesweep::benchmark::search`).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use cavesweep::benchmark::search::{Rate, Rates, RejectBench, reject_bench};
use cavesweep::io::write_atomic;
use cavesweep::recipe::Recipe;

fn rate(r: &Rates) -> String {
    let (w, c) = (&r.wall, &r.cpu);
    format!(
        "{:.0} [{:.0}-{:.0}] per s, {:.0} [{:.0}-{:.0}] per CPU-s",
        w.median, w.min, w.max, c.median, c.min, c.max
    )
}

/// CPU time (user + system) of this process's finished children, in seconds.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills one rusage struct we own; all-zero bytes are a valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return f64::NAN;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Run this binary with `args` over `n` seeds: seeds per wall-clock and per CPU second.
fn timed(args: &[String], n: u64) -> Result<Rate> {
    let exe = std::env::current_exe().context("cannot find the cavesweep binary")?;
    let (t, cpu) = (Instant::now(), children_cpu_seconds());
    let o = Command::new(exe)
        .args(args)
        .output()
        .context("cannot run cavesweep")?;
    let (secs, cpu) = (t.elapsed().as_secs_f64(), children_cpu_seconds() - cpu);
    if !o.status.success() {
        bail!(
            "cavesweep {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(Rate {
        wall: n as f64 / secs,
        cpu: n as f64 / cpu,
    })
}

/// One CSV record of a figure.
#[allow(clippy::too_many_arguments)]
fn record(
    csv: &mut csv::Writer<Vec<u8>>,
    preset: &str,
    fig: &str,
    threads: usize,
    seeds: u64,
    repeats: usize,
    r: &Rates,
    ratios: (f64, f64),
    cmd: &str,
) -> Result<()> {
    let mut rec = vec![
        preset.to_string(),
        fig.to_string(),
        threads.to_string(),
        seeds.to_string(),
        repeats.to_string(),
    ];
    for s in [&r.wall, &r.cpu] {
        rec.extend([s.median, s.min, s.max].map(|v| format!("{v:.1}")));
    }
    rec.extend([format!("{:.3}", ratios.0), format!("{:.3}", ratios.1)]);
    rec.push(cmd.to_string());
    csv.write_record(rec)?;
    Ok(())
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
    out_dir: Option<&Path>,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // A private scratch folder (random name, removed on drop): never a predictable /tmp name.
    let scratch = tempfile::Builder::new()
        .prefix("cavesweep-bench-search-")
        .tempdir()
        .context("cannot create a scratch folder")?;
    let mut csv = new_csv()?;
    for recipe in recipes {
        reject_figures(recipe, threads, repeats, seeds, &mut csv, &mut out)?;
        top_figures(
            recipe,
            threads,
            repeats,
            seeds,
            scratch.path(),
            &mut csv,
            &mut out,
        )?;
    }
    drop(scratch);
    write_csv(out_dir, csv, &mut out)
}

/// The search.csv writer, its header written: one record per figure (see `record`).
fn new_csv() -> Result<csv::Writer<Vec<u8>>> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "preset",
        "figure",
        "threads",
        "seeds",
        "repeats",
        "wall_median",
        "wall_min",
        "wall_max",
        "cpu_median",
        "cpu_min",
        "cpu_max",
        "ratio_wall",
        "ratio_cpu",
        "command",
    ])?;
    Ok(csv)
}

/// Figure 1 for one preset (generation alone vs the rejecting search vs its first clause
/// alone), in the library on a fifth of the seeds (at least 10,000): printed, and recorded.
fn reject_figures(
    recipe: &Recipe,
    threads: usize,
    repeats: usize,
    seeds: u64,
    csv: &mut csv::Writer<Vec<u8>>,
    out: &mut impl Write,
) -> Result<()> {
    let reject_seeds = (seeds / 5).max(10_000);
    let b = reject_bench(recipe, threads, reject_seeds, repeats)?;
    print_reject(&b, recipe, threads, repeats, reject_seeds, out)?;
    record_reject(&b, recipe, threads, repeats, reject_seeds, csv)
}

/// The query's first clause: the fraction that does the rejecting.
fn first_clause(query: &str) -> String {
    query.split(" && ").next().unwrap_or_default().to_string()
}

/// Figure 1's lines on stdout.
fn print_reject(
    b: &RejectBench,
    recipe: &Recipe,
    threads: usize,
    repeats: usize,
    reject_seeds: u64,
    out: &mut impl Write,
) -> Result<()> {
    writeln!(
        out,
        "{}: {threads} threads, seeds (caves) per second: median [min-max] of {repeats}",
        recipe.name
    )?;
    writeln!(
        out,
        "  generation only (fill + steps, no metrics), {reject_seeds} seeds: {}",
        rate(&b.generation)
    )?;
    writeln!(
        out,
        "  search {:?} (first clause rejects {:.1}% of a sample): {}",
        b.query,
        b.rejected * 100.0,
        rate(&b.search),
    )?;
    writeln!(
        out,
        "    = {:.3}x generation per s, {:.3}x per CPU-s (target >= 0.9)",
        b.ratio(),
        b.cpu_ratio()
    )?;
    let first = first_clause(&b.query);
    let (fw, fc) = b.first_only_ratios();
    writeln!(
        out,
        "  search {first:?} alone (the rejection without the later clauses' flood fills): {}",
        rate(&b.first_only),
    )?;
    writeln!(out, "    = {fw:.3}x generation per s, {fc:.3}x per CPU-s")?;
    Ok(())
}

/// Figure 1's three CSV records, each with the command it stands for.
fn record_reject(
    b: &RejectBench,
    recipe: &Recipe,
    threads: usize,
    repeats: usize,
    reject_seeds: u64,
    csv: &mut csv::Writer<Vec<u8>>,
) -> Result<()> {
    let first = first_clause(&b.query);
    let (fw, fc) = b.first_only_ratios();
    let gen_cmd = format!("(library) generation only, seeds 0..{reject_seeds}");
    let search_cmd = search_command(recipe, reject_seeds, &b.query, threads);
    let first_cmd = search_command(recipe, reject_seeds, &first, threads);
    for (fig, r, ratios, cmd) in [
        ("generation", &b.generation, (1.0, 1.0), &gen_cmd),
        (
            "search_reject",
            &b.search,
            (b.ratio(), b.cpu_ratio()),
            &search_cmd,
        ),
        (
            "search_reject_first_clause",
            &b.first_only,
            (fw, fc),
            &first_cmd,
        ),
    ] {
        record(
            csv,
            &recipe.name,
            fig,
            threads,
            reject_seeds,
            repeats,
            r,
            ratios,
            cmd,
        )?;
    }
    Ok(())
}

/// The `cavesweep search` command line a figure-1 search stands for (the CSV's `command`).
fn search_command(recipe: &Recipe, seeds: u64, query: &str, threads: usize) -> String {
    format!(
        "cavesweep search --preset {} --seeds 0..{seeds} --where {} --threads {threads}",
        recipe.name,
        quoted(query)
    )
}

/// Figure 2 for one preset: the top 10 by path length vs the sweep computing path_length, end
/// to end (both run as this binary, writing into `tmp`): printed, and recorded.
fn top_figures(
    recipe: &Recipe,
    threads: usize,
    repeats: usize,
    seeds: u64,
    tmp: &Path,
    csv: &mut csv::Writer<Vec<u8>>,
    out: &mut impl Write,
) -> Result<()> {
    let base = base_args(recipe, seeds, threads);
    let sweep_dir = tmp.join("sweep");
    let found = tmp.join("top.csv");
    let sweep_args = sweep_args(&base, &sweep_dir);
    let search_args = search_args(&base, &found);
    let (sw, se) = alternate(&sweep_args, &search_args, &sweep_dir, seeds, repeats)?;
    let ratios = (
        se.wall.median / sw.wall.median,
        se.cpu.median / sw.cpu.median,
    );
    writeln!(
        out,
        "  sweep --metrics path_length --per-seed none, {seeds} seeds: {}",
        rate(&sw)
    )?;
    writeln!(
        out,
        "  search --where 'path_length>=0' --top 10 --by path_length, {seeds} seeds: {}",
        rate(&se)
    )?;
    writeln!(
        out,
        "    = {:.3}x the sweep per s, {:.3}x per CPU-s (target >= 1)",
        ratios.0, ratios.1
    )?;
    record(
        csv,
        &recipe.name,
        "sweep_path_length",
        threads,
        seeds,
        repeats,
        &sw,
        (1.0, 1.0),
        &shown(&sweep_args),
    )?;
    record(
        csv,
        &recipe.name,
        "search_top10_path_length",
        threads,
        seeds,
        repeats,
        &se,
        ratios,
        &shown(&search_args),
    )
}

/// The flags figure 2's sweep and search share: the preset (with an exit near the top-right
/// corner if it has none, so path_length has a target), the seeds and the threads.
fn base_args(recipe: &Recipe, seeds: u64, threads: usize) -> Vec<String> {
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
    base
}

/// `cavesweep SUB` with the shared flags `base`, then `flags`, then `--force --out OUT`.
fn sub_args(sub: &str, base: &[String], flags: &[&str], out: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![sub.into()];
    args.extend(base.iter().cloned());
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend(["--force".into(), "--out".into(), out.display().to_string()]);
    args
}

/// `sweep` computing path_length alone, no per-seed file, into `sweep_dir`.
fn sweep_args(base: &[String], sweep_dir: &Path) -> Vec<String> {
    let flags = ["--metrics", "path_length", "--per-seed", "none"];
    sub_args("sweep", base, &flags, sweep_dir)
}

/// `search` keeping the top 10 by path_length (every cave passes the query), into `found`.
fn search_args(base: &[String], found: &Path) -> Vec<String> {
    let flags = [
        "--where",
        "path_length>=0",
        "--top",
        "10",
        "--by",
        "path_length",
    ];
    sub_args("search", base, &flags, found)
}

/// Run the sweep and the search `repeats` times each, alternately first and second so drift
/// on a shared machine favours neither (the sweep's folder removed before each pair); returns
/// the sweep's rates and the search's.
fn alternate(
    sweep_args: &[String],
    search_args: &[String],
    sweep_dir: &Path,
    seeds: u64,
    repeats: usize,
) -> Result<(Rates, Rates)> {
    let (mut sw, mut se) = (vec![], vec![]);
    for r in 0..repeats {
        let _ = std::fs::remove_dir_all(sweep_dir);
        if r % 2 == 0 {
            sw.push(timed(sweep_args, seeds)?);
            se.push(timed(search_args, seeds)?);
        } else {
            se.push(timed(search_args, seeds)?);
            sw.push(timed(sweep_args, seeds)?);
        }
    }
    Ok((Rates::of(&sw), Rates::of(&se)))
}

/// A command line as the CSV records it: `cavesweep` and the quoted arguments, without the
/// scratch folder's paths (random names, meaningless once it is removed).
fn shown(a: &[String]) -> String {
    let mut v = vec!["cavesweep".to_string()];
    v.extend(
        a.iter()
            .filter(|x| !x.contains("cavesweep-bench-search"))
            .map(|x| quoted(x)),
    );
    v.join(" ")
}

/// With --out, write the figures as DIR/search.csv (DIR created if needed) and say so.
fn write_csv(
    out_dir: Option<&Path>,
    csv: csv::Writer<Vec<u8>>,
    out: &mut impl Write,
) -> Result<()> {
    let Some(out_dir) = out_dir else {
        return Ok(());
    };
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let path = out_dir.join("search.csv");
    write_atomic(&path, &csv.into_inner()?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}
