//! `cavesweep presets [NAME]`: list presets or print one as TOML.

use std::io::Write;

use anyhow::Result;
use cavesweep::presets::{NAMES, preset};
use clap::Args;

#[derive(Args)]
pub struct PresetsArgs {
    /// Print this preset as a recipe file (TOML) instead of listing all.
    name: Option<String>,
}

pub fn main(a: PresetsArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match a.name {
        Some(name) => write!(out, "{}", preset(&name)?.to_toml())?,
        None => {
            for name in NAMES {
                let r = preset(name)?;
                let first = r.about.split(". ").next().unwrap_or("");
                writeln!(out, "{name:<16} {}x{}  {first}.", r.rows, r.cols)?;
            }
        }
    }
    Ok(())
}
