//! `cavesweep report`: flags and the final line; the work is in `cavesweep::report`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use cavesweep::report::{self, Options};
use clap::Args;

#[derive(Args)]
pub struct ReportArgs {
    /// Sweep folder (the --out of `cavesweep sweep` or `cavesweep merge`).
    dir: PathBuf,
    /// Report folder: new, empty, or an earlier report to replace [default: DIR/report].
    #[arg(long, value_name = "REPORT_DIR")]
    out: Option<PathBuf>,
    /// Show these grid points in the trajectory chart, histograms and cave pictures, e.g.
    /// `--points fill=0.45` (every point with that value) or `--points fill=0.45,steps=4`
    /// (repeatable). Default: a spread of the grid.
    #[arg(long, value_name = "KEY=VALUE,...")]
    points: Vec<String>,
    /// Rows in the table of best grid points.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

pub fn main(a: ReportArgs) -> Result<()> {
    let start = Instant::now();
    let w = report::write(
        &a.dir,
        &Options {
            out: a.out,
            points: a.points,
            top: a.top,
        },
    )?;
    say!(
        "report of {} grid points ({}) with {} pictures in {:.2} s -> {}",
        w.points,
        w.status,
        w.images,
        start.elapsed().as_secs_f64(),
        w.index.display()
    );
    Ok(())
}
