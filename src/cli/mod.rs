//! Flag definitions (clap) and dispatch to one module per subcommand.

mod bench;
mod explore;
mod presets;
mod report;
mod reproduce;
mod run;
mod search;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use cavesweep::io::read_to_string_capped;
use cavesweep::recipe::{MAX_RECIPE_BYTES, Recipe};
use cavesweep::rng::RngKind;
use clap::{Args, CommandFactory, Parser, Subcommand};

/// Cellular-automaton caves: generate, measure and sweep millions of seeds.
#[derive(Parser)]
#[command(name = "cavesweep", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate one cave, print its wall-fraction trajectory and metrics.
    Run(run::RunArgs),
    /// Rerun the book chapter's experiment with numpy's RNG, bit for bit.
    Reproduce(reproduce::ReproduceArgs),
    /// List the presets, or print one as an editable recipe file.
    Presets(presets::PresetsArgs),
    /// Sweep seeds (x a parameter grid) into statistics: CSV files in --out, resumable.
    Sweep(sweep::SweepArgs),
    /// Find the seeds whose caves match a query (all, the N lowest, or the K best).
    Search(search::SearchArgs),
    /// Combine the output folders of `sweep --shard K/N` runs into one.
    Merge(sweep::MergeArgs),
    /// Pictures and tables of a sweep folder: index.html and README.md.
    Report(report::ReportArgs),
    /// Measure throughput per preset (1 thread, all threads, kernels, oracle) and write CSV.
    Bench(bench::BenchArgs),
    /// The generator family live in a browser: a local page (URL printed) with the generator,
    /// a sweep folder's heatmaps and seed search.
    Explore(explore::ExploreArgs),
}

/// Flags that choose a recipe: shared by `run`, `sweep`, `search` and `bench`.
#[derive(Args, Clone, Debug)]
pub struct RecipeArgs {
    /// Preset to start from (see `cavesweep presets`).
    #[arg(long, default_value = "chapter-strict")]
    pub preset: String,
    /// Recipe file (TOML) to use instead of the preset (not with --preset).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub recipe: Option<PathBuf>,
    /// Override a recipe key, e.g. `--set fill=0.5 --set steps=6` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Random number generator: xoshiro (fast, default) or numpy (bit-exact replay).
    #[arg(long, value_name = "xoshiro|numpy")]
    pub rng: Option<RngKind>,
}

impl RecipeArgs {
    /// The recipe these flags describe, validated.
    pub fn recipe(&self) -> Result<Recipe> {
        self.recipe_shaped(None)
    }

    /// The recipe these flags describe with its grid size set to `shape` (a start grid's):
    /// applied with the `--set`s, so a spawn that fits the start grid is accepted.
    pub fn recipe_shaped(&self, shape: Option<(usize, usize)>) -> Result<Recipe> {
        let mut recipe = match &self.recipe {
            Some(path) => {
                let text = read_to_string_capped(path, MAX_RECIPE_BYTES)
                    .with_context(|| format!("cannot read recipe {}", path.display()))?;
                Recipe::from_toml(&text).with_context(|| format!("recipe {}", path.display()))?
            }
            None => cavesweep::presets::preset(&self.preset)?,
        };
        // Applied together and validated once: `--set spawn=100,100 --set rows=200` works in
        // either order.
        let mut pairs = Vec::with_capacity(self.sets.len());
        for kv in &self.sets {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| cavesweep::recipe::RecipeError::NotKeyValue(kv.clone()))
                .with_context(|| format!("--set {}", cavesweep::quote::cut(kv)))?;
            pairs.push((k.trim(), v));
        }
        let shape = shape.map(|(r, c)| (r.to_string(), c.to_string()));
        if let Some((rows, cols)) = &shape {
            for (key, size) in [("rows", rows), ("cols", cols)] {
                if let Some((_, v)) = pairs.iter().find(|(k, _)| *k == key)
                    && v.trim() != size
                {
                    anyhow::bail!(
                        "--set {key}={} differs from the start grid's {key} ({size}): the start grid sets the size",
                        cavesweep::quote::cut(v.trim())
                    );
                }
            }
            pairs.push(("rows", rows));
            pairs.push(("cols", cols));
        }
        recipe.set_many(pairs.iter().copied()).with_context(|| {
            let mut what: Vec<String> = self
                .sets
                .iter()
                .map(|kv| format!("--set {}", cavesweep::quote::cut(kv)))
                .collect();
            if let Some((rows, cols)) = &shape {
                what.push(format!("with the start grid's size {rows}x{cols}"));
            }
            what.join(", ")
        })?;
        if let Some(rng) = self.rng {
            recipe.rng = rng;
            recipe.validate()?;
        }
        Ok(recipe)
    }
}

/// The command line's words for the library's [`Remedy`](cavesweep::error::Remedy) advice and
/// the settings its messages name.
pub const WORDS: cavesweep::error::Words = cavesweep::error::Words {
    another_out: "another --out",
    force: "--force",
    param: flag,
    joined: false,
};

/// `s` parsed as a `T`, its error in the command line's words: clap's own parsing would print
/// the library's (`shard "3/2"` where the user typed `--shard`).
pub fn worded<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + 'static,
{
    s.parse::<T>()
        .map_err(|e| cavesweep::error::line(&e, &WORDS))
}

/// The flag of a setting a library message names.
fn flag(p: cavesweep::error::Param) -> &'static str {
    use cavesweep::error::Param;
    match p {
        Param::Seeds => "--seeds",
        Param::SeedsFrom => "--seeds-from",
        Param::PerSeed => "--per-seed",
        Param::Chunk => "--chunk",
        Param::Vary => "--vary",
        Param::Shard => "--shard",
        Param::Out => "--out",
        Param::Limit => "--limit",
        Param::Top => "--top",
        Param::Set => "--set",
    }
}

/// The error as one line for stderr ([`cavesweep::error::line()`]): the messages of its chain
/// joined by `: `, then what to do about a refusal, in this command line's flags.
pub fn error_line(e: &anyhow::Error) -> String {
    cavesweep::error::line(e.as_ref(), &WORDS)
}

/// A flag clap rejects: one line naming the problem, and exit 2 (a usage error, as clap exits).
/// Help and version requests print as clap prints them. Clap's own rendering adds a usage block
/// and a "try --help" line under the message; one line (with the hint folded in) is what every
/// other error of cavesweep prints.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    // The message is the first paragraph: its first line, and the indented lines under it
    // (the missing arguments' names). Usage and tips follow a blank line.
    let text = e.render().to_string();
    let para: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let mut joined = para.join(" ");
    // Clap's suggestion ("tip: a similar argument exists: '--where'") is worth the line.
    for tip in text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tip: "))
    {
        joined.push_str("; ");
        joined.push_str(tip);
    }
    let first = joined.strip_prefix("error: ").unwrap_or(&joined);
    let first = if first.is_empty() {
        "bad arguments"
    } else {
        first
    };
    // The subcommand, for the hint: the first argument that names one.
    let sub = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .find(|a| !a.starts_with('-'))
        .filter(|a| Cli::command().find_subcommand(a).is_some());
    let hint = match sub {
        Some(s) => format!("cavesweep {s} --help"),
        None => "cavesweep --help".to_string(),
    };
    let first = cavesweep::quote::tame(first);
    say!("cavesweep: error: {first} (see `{hint}`)");
    ExitCode::from(2)
}

/// Parse flags and run the subcommand.
pub fn main() -> Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return Ok(usage_error(e)),
    };
    // A bad `CAVESWEEP_SIMD` (unknown level, or one this CPU lacks) is refused before any work;
    // `Simd::active` would otherwise quietly fall back to the best path.
    cavesweep::simd::Simd::from_env()?;
    let result = match cli.command {
        Command::Run(a) => run::main(a),
        Command::Reproduce(a) => reproduce::main(a),
        Command::Presets(a) => presets::main(a),
        Command::Sweep(a) => sweep::main(a),
        Command::Search(a) => search::main(a),
        Command::Merge(a) => sweep::merge(a),
        Command::Report(a) => report::main(a),
        Command::Bench(a) => bench::main(a),
        Command::Explore(a) => explore::main(a),
    };
    match result {
        // A closed pipe (`cavesweep presets | head -1`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        r => r.map(|()| ExitCode::SUCCESS),
    }
}

/// A rate (caves or seeds per second): whole numbers from 100 on, three significant digits
/// below (a sweep of a few 8192x8192 caves runs at 0.09 caves/s, which `{:.0}` printed as 0).
pub(crate) fn fmt_rate(r: f64) -> String {
    if r >= 100.0 || r <= 0.0 || !r.is_finite() {
        format!("{r:.0}")
    } else {
        let digits = (2 - r.log10().floor() as i32).clamp(0, 9) as usize;
        format!("{r:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::{error_line, fmt_rate};

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write x.png: {source}")]
    struct Wrapping {
        source: std::io::Error,
    }

    #[test]
    fn error_line_says_each_message_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(Wrapping { source: io }).context("--png");
        assert_eq!(error_line(&e), "--png: cannot write x.png: No such file");
        let e = anyhow::anyhow!("fill: p is 2\n  (must be in [0, 1])").context("--set fill=2");
        assert_eq!(
            error_line(&e),
            "--set fill=2: fill: p is 2 (must be in [0, 1])"
        );
    }

    #[test]
    fn rates_keep_three_significant_digits_below_100() {
        let cases = [
            (801_123.4, "801123"),
            (100.0, "100"),
            (99.94, "99.9"),
            (5.2, "5.20"),
            (0.0891, "0.0891"),
            (0.000_012_34, "0.0000123"),
            (1e-12, "0.000000000"),
            (0.0, "0"),
        ];
        for (r, want) in cases {
            assert_eq!(fmt_rate(r), want, "{r}");
        }
    }
}
