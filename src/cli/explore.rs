//! `cavesweep explore`: the web explorer (crates/explore), started and stopped from the
//! command line. It prints the page's URL (token included) as the first line of stdout.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use cavesweep::explore::{Options, Server};
use clap::Args;

#[derive(Args)]
pub struct ExploreArgs {
    /// A sweep folder to explore (finished, merged, a shard or still running); read only.
    #[arg(value_name = "SWEEP_DIR")]
    sweep: Option<PathBuf>,
    /// Port to listen on (0: any free port, the default, so two explorers never collide).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on. Anything but a loopback address lets other machines run caves
    /// on this one (token required, but warned about).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Open the page in the default browser (xdg-open, or open on macOS).
    #[arg(long)]
    open: bool,
    /// Threads a search from the page uses (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn main(a: ExploreArgs) -> Result<()> {
    if !a.bind.is_loopback() {
        say!(
            "cavesweep explore: warning: listening on {}, not a loopback address: anyone who can reach this machine and has the token can run caves on it",
            a.bind
        );
    }
    let threads = match a.threads {
        Some(0) => anyhow::bail!("--threads: 0 is not a thread count (give 1 or more)"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let server = Server::bind(&Options {
        bind: a.bind,
        port: a.port,
        sweep: a.sweep.clone(),
        threads,
        header_timeout: cavesweep::explore::HEADER_TIMEOUT,
    })
    .context("explore")?;
    let url = server.url().to_string();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    say!("cavesweep explore: serving the page at the URL above; Ctrl-C stops it");
    if a.open {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        if let Err(e) = std::process::Command::new(opener)
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        {
            say!("cavesweep explore: could not start {opener} ({e}); open the URL yourself");
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    server.serve(stop).context("explore")?;
    Ok(())
}
