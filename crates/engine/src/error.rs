//! Errors as the user reads them: one line, each message once, and what to do about a refusal
//! in the caller's own words.
//!
//! The library's errors describe the problem in the library's terms and name no flag. Two rules
//! keep them printable by any caller:
//!
//! - an error that has a cause returns it from `source()` and does **not** also print it in its
//!   own message, so [`line()`] joins the chain (`cannot write out/seeds.csv: No space left on
//!   device`) and each part appears once;
//! - a refusal the user can override (a folder holding other work, a damaged store) says so
//!   through [`remedy`], as a [`Remedy`], and the caller words it: the command line says
//!   `--out`/`--force`, Python `out=`/`force=True` ([`Words`]).

use std::error::Error;

use crate::search::SearchError;
use crate::search::output::OutputError;
use crate::store::StoreError;
use crate::sweep::SweepError;

/// What the user can do about a refused output, without any caller's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// Write elsewhere, or force: cavesweep's files there are replaced.
    Replace,
    /// Write elsewhere, or force: the stray files there are removed.
    Remove,
    /// Write elsewhere, or force: the foreign files stay and cavesweep writes beside them.
    WriteBeside,
    /// Force: the damaged store is started over.
    StartOver,
    /// Use the cavesweep version that wrote the store, or force to start over.
    OtherVersion,
    /// Force: the file is replaced.
    Force,
}

/// A caller's names for choosing another output and for forcing.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// How to say "another output" (`another --out`, `another out=`).
    pub another_out: &'static str,
    /// How to say "force" (`--force`, `force=True`).
    pub force: &'static str,
}

impl Remedy {
    /// The advice in `words`, e.g. `use another --out, or --force to replace it`.
    pub fn say(self, w: &Words) -> String {
        let (out, force) = (w.another_out, w.force);
        match self {
            Remedy::Replace => format!("use {out}, or {force} to replace it"),
            Remedy::Remove => format!("use {out}, or {force} to remove it"),
            Remedy::WriteBeside => format!("use {out}, or {force} to write beside those files"),
            Remedy::StartOver => format!("rerun with {force} to start over"),
            Remedy::OtherVersion => {
                format!("use the cavesweep that wrote it, or {force} to start over")
            }
            Remedy::Force => format!("pass {force} to replace it"),
        }
    }
}

/// The remedy of the first error in `e`'s chain that has one.
pub fn remedy(e: &(dyn Error + 'static)) -> Option<Remedy> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        let r = if let Some(s) = c.downcast_ref::<StoreError>() {
            s.remedy()
        } else if let Some(s) = c.downcast_ref::<SweepError>() {
            s.remedy()
        } else if let Some(s) = c.downcast_ref::<SearchError>() {
            s.remedy()
        } else if let Some(s) = c.downcast_ref::<OutputError>() {
            s.remedy()
        } else if let Some(s) = c.downcast_ref::<crate::render::RenderError>() {
            s.remedy()
        } else if let Some(s) = c.downcast_ref::<crate::io::ReplaceError>() {
            s.remedy()
        } else {
            None
        };
        if r.is_some() {
            return r;
        }
        cause = c.source();
    }
    None
}

/// `e` as one line: [`text`], then the [`remedy`] in `words`.
pub fn line(e: &(dyn Error + 'static), words: &Words) -> String {
    let mut line = text(e);
    if let Some(r) = remedy(e) {
        line.push_str("; ");
        line.push_str(&r.say(words));
    }
    line
}

/// The messages of `e`'s chain joined by `: `, line breaks folded into spaces: what an error
/// says when it becomes part of another message. A cause the previous message already ends
/// with is skipped: cavesweep's errors never print their cause, but some other crates' errors
/// do (and return it from `source()` too).
pub fn text(e: &(dyn Error + 'static)) -> String {
    let mut line = String::new();
    let mut last = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let msg = c
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        cause = c.source();
        if msg.is_empty() || last.ends_with(&msg) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&msg);
        last = msg;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const CLI: Words = Words {
        another_out: "another --out",
        force: "--force",
    };
    const PY: Words = Words {
        another_out: "another out=",
        force: "force=True",
    };

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Printing(#[source] std::io::Error);

    #[test]
    fn each_message_once_and_the_remedy_in_the_callers_words() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = StoreError::Create {
            path: PathBuf::from("o"),
            source: io(),
        };
        assert_eq!(
            line(&e, &CLI),
            "cannot create output folder o: No such file"
        );
        // A foreign error that prints its cause and returns it too.
        assert_eq!(line(&Printing(io()), &CLI), "No such file");
        let e = SweepError::from(StoreError::OutputsWithoutStore(PathBuf::from("o")));
        let (cli, py) = (line(&e, &CLI), line(&e, &PY));
        assert!(
            cli.ends_with("; use another --out, or --force to replace it"),
            "{cli}"
        );
        assert!(
            py.ends_with("; use another out=, or force=True to replace it"),
            "{py}"
        );
        assert!(!py.contains("--"), "{py}");
    }
}
