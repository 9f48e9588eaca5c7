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
                writeln!(
                    out,
                    "{name:<16} {}x{}  {}.",
                    r.rows,
                    r.cols,
                    first_sentence(&r.about)
                )?;
            }
        }
    }
    Ok(())
}

/// `about` up to its first full stop that ends a sentence (`. ` before a capital letter, or
/// the end), without it: an abbreviation such as `incl. centre` does not end one.
fn first_sentence(about: &str) -> &str {
    let about = about.trim_end().trim_end_matches('.');
    let mut from = 0;
    while let Some(i) = about[from..].find(". ") {
        let at = from + i;
        if about[at + 2..].starts_with(|c: char| c.is_uppercase()) {
            return &about[..at];
        }
        from = at + 2;
    }
    about
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn a_sentence_ends_before_a_capital_not_at_an_abbreviation() {
        assert_eq!(first_sentence("A b. Cd."), "A b");
        assert_eq!(
            first_sentence("R1 = the 3x3 incl. centre; more. Next."),
            "R1 = the 3x3 incl. centre; more"
        );
        assert_eq!(first_sentence("One sentence only."), "One sentence only");
        assert_eq!(first_sentence("no stop"), "no stop");
    }
}
