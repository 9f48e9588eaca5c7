//! `cavesweep search`: flags, the CSV sink (file or stdout, flushed per batch), the checkpoint
//! of a search writing `--out` (resumed by rerunning the command; a completed one is reported
//! as such and left alone), progress bar, Ctrl-C (once: stop after the chunks in flight; twice:
//! at once), the final report line.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use cavesweep::mapfile;
use cavesweep::measure::{Metric, MetricSet};
use cavesweep::query::Expr;
use cavesweep::search::output::{self, IfComplete, Opened, OutFile, OutputError};
use cavesweep::search::{
    ChunkRecord, Match, Mode, Order, Outcome, PngSpec, Progress, SaveSpec, Search, SearchError,
    SearchSpec, Seeds, Sink, read_seeds,
};
use cavesweep::sweep::parse_seeds;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::RecipeArgs;

#[derive(Args)]
pub struct SearchArgs {
    #[command(flatten)]
    recipe: RecipeArgs,
    /// The query, e.g. `floor_fraction>=0.6 && (components<=3 || !(path_length>40))`.
    #[arg(long = "where", value_name = "EXPR")]
    query: String,
    /// Seeds to search, half-open: `0..1000000` (up to 18446744073709551615 exclusive).
    #[arg(long, value_name = "A..B")]
    seeds: Option<String>,
    /// Search the `seed` column of a CSV or Parquet file instead (a sweep's seeds.csv or
    /// seeds.parquet, an earlier search).
    #[arg(long, value_name = "FILE.csv|FILE.parquet")]
    seeds_from: Option<PathBuf>,
    /// Return the N lowest matching seeds (the same for any thread count).
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Return the K best matches by --by (ties: lower seed first), best first.
    #[arg(long, value_name = "K")]
    top: Option<u64>,
    /// The metric --top ranks by.
    #[arg(long, value_name = "METRIC")]
    by: Option<String>,
    /// --top order: desc (largest first, the default) or asc.
    #[arg(long, value_name = "asc|desc")]
    order: Option<String>,
    /// More metrics to write beside those the query and --by name (comma list or `all`).
    #[arg(long, value_name = "LIST")]
    metrics: Option<String>,
    /// Write the CSV here instead of stdout (rows appear as they are found), or Parquet when
    /// the name ends in `.parquet` (rows written a row group at a time). Finished work is
    /// checkpointed in FILE.checkpoint/: rerun the same command to resume.
    #[arg(long, value_name = "FILE.csv|FILE.parquet")]
    out: Option<PathBuf>,
    /// Replace an existing --out file (and a checkpoint of another search), and files in
    /// --png-dir and --save-dir that hold something else.
    #[arg(long)]
    force: bool,
    /// Write a PNG per returned match into this folder, named SEED.png.
    #[arg(long, value_name = "DIR")]
    png_dir: Option<PathBuf>,
    /// Save each returned match as map files into this folder, named SEED.EXT (see
    /// --save-format; Tiled maps share `cavesweep-tiles.png` there).
    #[arg(long, value_name = "DIR")]
    save_dir: Option<PathBuf>,
    /// The formats --save-dir writes, a comma list of txt, csv, npy, json, tmj, tmx, png (one
    /// pixel per cell).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "json",
        requires = "save_dir"
    )]
    save_format: String,
    /// Pixels per cell in the PNGs.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(1..=64))]
    scale: u16,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Seeds per chunk, the unit of work (default: from the seed count).
    #[arg(long, hide = true)]
    chunk: Option<u64>,
    /// Print the evaluation plan (clause order, measured cost per cave, pass rate on a sample)
    /// and exit without searching.
    #[arg(long)]
    explain: bool,
}

/// Where the CSV rows go: the `--out` file (with its checkpoint) or stdout.
enum Dest<'a> {
    File(Box<OutFile>),
    Stdout(std::io::StdoutLock<'a>),
}

/// The CSV rows, flushed after every batch so a reader tailing the file sees matches appear.
struct CsvSink<'a> {
    search: &'a Search,
    dest: Dest<'a>,
    what: String,
    buf: Vec<u8>,
    bar: Option<ProgressBar>,
    /// The write error, kept whole so a closed pipe can end the program quietly.
    io_error: Option<std::io::Error>,
    /// Held while bytes are written: a second Ctrl-C takes it before exiting, so the file ends
    /// with a whole row.
    writing: Arc<Mutex<()>>,
}

impl CsvSink<'_> {
    fn write(&mut self, bytes: &[u8], rows: u64) -> Result<(), SearchError> {
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let r = match &mut self.dest {
            Dest::File(f) => f.write(bytes, rows),
            Dest::Stdout(out) => out.write_all(bytes).and_then(|()| out.flush()),
        };
        r.map_err(|e| {
            let err = SearchError::Io {
                what: format!("cannot write {}", self.what),
                source: std::io::Error::new(e.kind(), e.to_string()),
            };
            self.io_error = Some(e);
            err
        })
    }
}

impl Sink for CsvSink<'_> {
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        for m in rows {
            self.search.row(m, &mut buf);
        }
        let r = self.write(&buf, rows.len() as u64);
        self.buf = buf;
        r
    }

    fn chunk(&mut self, record: &ChunkRecord) -> Result<(), SearchError> {
        match &mut self.dest {
            Dest::File(f) => f.record(record),
            Dest::Stdout(_) => Ok(()),
        }
    }

    fn progress(&mut self, p: &Progress) {
        let pb = self.bar.get_or_insert_with(|| progress_bar(p.total));
        pb.set_position(p.examined);
        pb.set_message(format!(
            "{} matches, {} seeds/s",
            p.matches,
            super::fmt_rate(pb.per_sec())
        ));
    }
}

fn progress_bar(total: u64) -> ProgressBar {
    // Draws only when stderr is a terminal.
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} seeds {msg} ETA {eta}",
        )
        .expect("template"),
    );
    // The ticker is a thread that indicatif starts with `thread::spawn`, which panics when
    // the thread cannot start (an address-space limit such as `ulimit -v`): started only
    // where there is something to draw.
    if !pb.is_hidden() {
        pb.enable_steady_tick(Duration::from_millis(200));
    }
    pb
}

fn metric(flag: &str, s: &str) -> Result<Metric> {
    s.parse::<Metric>().with_context(|| flag.to_string())
}

pub fn main(a: SearchArgs) -> Result<()> {
    let threads = super::sweep::check_threads(a.threads)?;
    let search = Search::new(spec(&a)?)?;
    if a.explain {
        writeln!(std::io::stdout(), "{}", search.explain())?;
        return Ok(());
    }
    let Some((dest, mut prior, what)) = open_dest(&a, &search, threads)? else {
        return Ok(());
    };
    let writing = Arc::new(Mutex::new(()));
    let stop = stop_on_signals(writing.clone());
    let mut sink = CsvSink {
        search: &search,
        dest,
        what,
        buf: Vec::new(),
        bar: None,
        io_error: None,
        writing,
    };
    let header = search.header();
    let result = sink
        .write(&header, 0)
        .and_then(|()| search.run(threads, &stop, &prior, &mut sink));
    prior.clear();
    if let Some(pb) = sink.bar.take() {
        pb.finish_and_clear();
    }
    // Whatever happened, keep the chunks that finished.
    let saved = match &mut sink.dest {
        Dest::File(f) => f.save(),
        Dest::Stdout(_) => Ok(()),
    };
    if stop.load(Ordering::SeqCst) {
        // Tests stop here (`search-stopping:pause`) to check that a second Ctrl-C exits at once.
        cavesweep::failpoint::kill("search-stopping");
    }
    // Tests stop here to find every chunk in the checkpoint, before the completion mark.
    cavesweep::failpoint::kill("search-saved");
    let report = match result.and_then(|r| saved.map(|()| r)) {
        Ok(r) => r,
        Err(e) => {
            if let Some(io) = sink.io_error.take()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return Err(io.into());
            }
            return Err(e.into());
        }
    };
    let out = match sink.dest {
        Dest::File(f) => Some(f),
        Dest::Stdout(_) => None,
    };
    summary(&a, &report, out, threads)
}

/// The search the flags describe (the query, mode, seeds and recipe checked here).
fn spec(a: &SearchArgs) -> Result<SearchSpec> {
    let query: Expr = a.query.parse().context("--where")?;
    let mode = match (a.limit, a.top, &a.by) {
        (Some(_), Some(_), _) => bail!("--limit and --top: give one of them"),
        (Some(0), None, _) => bail!("--limit must be at least 1"),
        (Some(n), None, None) => Mode::Limit(n),
        (None, Some(0), _) => bail!("--top must be at least 1"),
        (None, Some(_), None) => bail!("--top needs --by METRIC (the metric to rank by)"),
        (None, Some(k), Some(by)) => Mode::Top {
            k,
            by: metric("--by", by)?,
            order: match &a.order {
                None => Order::Desc,
                Some(o) => o
                    .parse::<Order>()
                    .map_err(|e| anyhow::anyhow!("--order: {e}"))?,
            },
        },
        (_, None, Some(_)) => bail!("--by ranks the matches of --top K: give --top too"),
        (None, None, None) => Mode::All,
    };
    if a.order.is_some() && a.top.is_none() {
        bail!("--order applies to --top: give --top K --by METRIC too");
    }
    let extra = match &a.metrics {
        Some(s) => s.parse::<MetricSet>().context("--metrics")?,
        None => MetricSet::EMPTY,
    };
    let seeds = match (&a.seeds, &a.seeds_from) {
        (Some(_), Some(_)) => bail!("--seeds and --seeds-from: give one of them"),
        (None, None) => bail!("give the seeds to search: --seeds A..B or --seeds-from FILE.csv"),
        (Some(s), None) => Seeds::Range(parse_seeds(s)?),
        (None, Some(f)) => Seeds::list(read_seeds(f)?)?,
    };
    let recipe = a.recipe.recipe()?;
    let png = a.png_dir.as_ref().map(|dir| PngSpec {
        dir: dir.clone(),
        scale: a.scale as usize,
        replace: a.force,
    });
    let save = match &a.save_dir {
        Some(dir) => {
            let mut formats: Vec<mapfile::Format> = Vec::new();
            for f in a.save_format.split(',') {
                let f: mapfile::Format = f.parse().context("--save-format")?;
                if !formats.contains(&f) {
                    formats.push(f);
                }
            }
            Some(SaveSpec {
                dir: dir.clone(),
                formats,
                replace: a.force,
            })
        }
        None => None,
    };
    Ok(SearchSpec {
        recipe,
        query,
        seeds,
        mode,
        extra,
        chunk: a.chunk,
        png,
        save,
    })
}

/// Where the rows go: `--out`'s file (opened through the library's search-output protocol,
/// with the chunks an earlier run finished) or stdout, and how to name it. `None`: the file
/// holds this search, complete and verified; nothing to do.
fn open_dest<'s>(
    a: &SearchArgs,
    search: &'s Search,
    threads: usize,
) -> Result<Option<(Dest<'s>, Vec<ChunkRecord>, String)>> {
    Ok(Some(match &a.out {
        Some(path) => {
            let opened = output::open(
                search,
                path,
                &recorded_command(),
                a.force,
                IfComplete::Verify,
                threads,
            )
            .map_err(out_error)?;
            let mut f = match opened {
                Opened::Complete { rows } => {
                    say!(
                        "already complete: {rows} rows, {} verified against what the search wrote (nothing searched; --force searches again)",
                        path.display()
                    );
                    return Ok(None);
                }
                Opened::Open(f) => f,
            };
            if f.repaired() {
                say!(
                    "cavesweep: repaired: {} did not match what the completed search wrote (missing or changed): searching again",
                    path.display()
                );
            }
            let prior = f.take_prior();
            (Dest::File(f), prior, path.display().to_string())
        }
        None => {
            search.create_match_dirs()?;
            (
                Dest::Stdout(std::io::stdout().lock()),
                Vec::new(),
                "stdout".into(),
            )
        }
    }))
}

/// The closing line on stderr (and, for a completed file, its completion mark); an interrupted
/// search exits 130.
fn summary(
    a: &SearchArgs,
    report: &cavesweep::search::SearchSummary,
    out: Option<Box<OutFile>>,
    threads: usize,
) -> Result<()> {
    let resumed = match &out {
        Some(f) if f.resumed() != (0, 0) => {
            let (n, bad) = f.resumed();
            let bad = if bad > 0 {
                format!(", {bad} chunks redone: records lost or damaged")
            } else {
                String::new()
            };
            format!(
                " (resumed: {n} chunks from {}{bad})",
                f.checkpoint_dir().display()
            )
        }
        _ => String::new(),
    };
    let secs = report.elapsed.as_secs_f64();
    let rate = super::fmt_rate(report.examined as f64 / secs.max(1e-9));
    let dest = a
        .out
        .as_ref()
        .map_or("stdout".to_string(), |p| p.display().to_string());
    match report.outcome {
        Outcome::Complete => {
            if let Some(f) = out {
                f.finish().map_err(out_error)?;
            }
            say!(
                "searched {} seeds in {secs:.2} s ({rate} seeds/s on {}){resumed}: {} rows -> {dest}",
                report.examined,
                super::sweep::threads_word(threads),
                report.rows
            );
            Ok(())
        }
        Outcome::Interrupted => {
            let again = match &out {
                Some(f) => format!(
                    "; rerun the same command to resume (checkpoint: {})",
                    f.checkpoint_dir().display()
                ),
                None => String::new(),
            };
            if let Some(f) = out {
                // A Parquet file gets its footer: readable, holding the finished chunks' rows.
                f.end_interrupted().map_err(out_error)?;
            }
            say!(
                "interrupted after {} seeds searched by this run ({rate} seeds/s): {} rows, every finished chunk's (an earlier run's included) -> {dest}{again}",
                report.examined,
                report.rows
            );
            std::process::exit(130);
        }
    }
}

/// An output-file error in the command line's words.
fn out_error(e: OutputError) -> anyhow::Error {
    match e {
        OutputError::Empty | OutputError::IsFolder(_) => anyhow::anyhow!("--out {e}"),
        e => e.into(),
    }
}

/// Ctrl-C (or SIGTERM) once: the search stops after the chunks in flight, writes the rows of
/// every finished chunk, checkpoints and exits 130. Twice: exit 130 at once, as `sweep` does
/// (the checkpoint holds the last commit, at most a second old; the CSV, rewritten whole by the
/// rerun, ends with a whole row: a write in progress is waited for, briefly).
fn stop_on_signals(writing: Arc<Mutex<()>>) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if !flag.swap(true, Ordering::SeqCst) {
            return;
        }
        let t = Instant::now();
        // Held until exit: no row is written after this.
        let _held = loop {
            match writing.try_lock() {
                Ok(g) => break Some(g),
                Err(TryLockError::Poisoned(p)) => break Some(p.into_inner()),
                Err(TryLockError::WouldBlock) if t.elapsed() < Duration::from_secs(1) => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                // A write stuck (a full pipe): do not wait for it.
                Err(TryLockError::WouldBlock) => break None,
            }
        };
        say!("cavesweep: stopping now; rerun the same command to resume from the last checkpoint");
        std::process::exit(130);
    });
    stop
}

/// The command recorded in a checkpoint: the flags that decide the rows (not --threads, --out,
/// --force, --png-dir, --scale, --save-dir or --save-format).
fn recorded_command() -> String {
    cavesweep::command::recorded_args(
        &[
            "--threads",
            "--out",
            "--png-dir",
            "--scale",
            "--save-dir",
            "--save-format",
        ],
        &["--force"],
    )
}
