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

/// A setting of a sweep, a search or their output that a message names. The library names it
/// by its field ([`Param::name`]); each caller spells it its own way through [`Words`] (the
/// command line `--per-seed`, Python `per_seed=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// The seed range.
    Seeds,
    /// The file of listed seeds.
    SeedsFrom,
    /// Which caves get a seed row.
    PerSeed,
    /// Seeds per chunk.
    Chunk,
    /// One axis of a parameter grid.
    Vary,
    /// Which shards of a split run this process runs.
    Shard,
    /// The output folder or file.
    Out,
    /// A search's match limit.
    Limit,
    /// A search's ranked matches.
    Top,
    /// An override of one recipe key: the library and Python name it by the key alone
    /// ([`Words::set`]).
    Set,
}

impl Param {
    /// The library's name: the field of the spec or options that holds it.
    pub fn name(self) -> &'static str {
        match self {
            Param::Seeds => "seeds",
            Param::SeedsFrom => "seeds_from",
            Param::PerSeed => "per_seed",
            Param::Chunk => "chunk",
            Param::Vary => "vary",
            Param::Shard => "shard",
            Param::Out => "out",
            Param::Limit => "limit",
            Param::Top => "top",
            Param::Set => "",
        }
    }
}

/// A caller's vocabulary: its names for choosing another output, for forcing, and for each
/// [`Param`] a message names.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// How to say "another output" (`another --out`, `another out=`).
    pub another_out: &'static str,
    /// How to say "force" (`--force`, `force=True`).
    pub force: &'static str,
    /// How a setting is named when the message shows no value (`--shard`, `shard=`, `shard`).
    pub param: fn(Param) -> &'static str,
    /// Whether a setting and its value are written `name="value"` (Python's keywords, the
    /// name then ends with `=`) rather than `name value` (flags, the library's field names).
    pub joined: bool,
}

impl Words {
    /// The library's own words: field names, and no advice spelled as a call
    /// (what [`std::fmt::Display`] prints).
    pub const LIBRARY: Words = Words {
        another_out: "another output",
        force: "force",
        param: Param::name,
        joined: false,
    };

    /// `p` alone: `--chunk`, `chunk=`.
    pub fn name(&self, p: Param) -> &'static str {
        (self.param)(p)
    }

    /// `p` with the text given for it, quoted: `--seeds "5..5"`, `seeds="5..5"`.
    pub fn given(&self, p: Param, text: &str) -> String {
        let text = cavesweep_core::quote::quote(text);
        self.join(p, &text)
    }

    /// `p` with a value written as it is (a number, `auto/N`, `K/N`): `--shard auto/4`;
    /// Python's keywords quote it (`shard="auto/4"`), as a value there is a string.
    pub fn with(&self, p: Param, value: &str) -> String {
        if self.joined {
            self.given(p, value)
        } else {
            self.join(p, value)
        }
    }

    /// An override of recipe key `key`: `--set spawn=Y,X`, `spawn=Y,X`.
    pub fn set(&self, key: &str, value: &str) -> String {
        match self.name(Param::Set) {
            "" => format!("{key}={value}"),
            set => format!("{set} {key}={value}"),
        }
    }

    fn join(&self, p: Param, value: &str) -> String {
        if self.joined {
            format!("{}{value}", self.name(p))
        } else {
            format!("{} {value}", self.name(p))
        }
    }
}

/// An error whose message names settings: written in a caller's [`Words`]. Its `Display` is
/// the message in [`Words::LIBRARY`].
pub trait Worded {
    /// The message (this error's own, not its causes') in `w`.
    fn message(&self, w: &Words) -> String;
}

/// The message of `c` in `w`, when `c` is one of the errors that name settings.
fn worded(c: &(dyn Error + 'static), w: &Words) -> Option<String> {
    if let Some(e) = c.downcast_ref::<SweepError>() {
        Some(e.message(w))
    } else if let Some(e) = c.downcast_ref::<SearchError>() {
        Some(e.message(w))
    } else if let Some(e) = c.downcast_ref::<crate::sweep::shard::ShardError>() {
        Some(e.message(w))
    } else if let Some(e) = c.downcast_ref::<crate::sweep::vary::VaryError>() {
        Some(e.message(w))
    } else {
        c.downcast_ref::<crate::sweep::merge::MergeError>()
            .map(|e| e.message(w))
    }
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
        } else if let Some(s) = c.downcast_ref::<crate::mapfile::MapFileError>() {
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

/// `e` as one line in `words`: its chain ([`text`], each message in the caller's names for
/// settings), then the [`remedy`], made safe to print by
/// [`tame`](cavesweep_core::quote::tame) (no control characters, no input repeated whole).
pub fn line(e: &(dyn Error + 'static), words: &Words) -> String {
    let mut line = text_in(e, words);
    if let Some(r) = remedy(e) {
        line.push_str("; ");
        line.push_str(&r.say(words));
    }
    cavesweep_core::quote::tame(&line)
}

/// The messages of `e`'s chain joined by `: `, line breaks folded into spaces: what an error
/// says when it becomes part of another message. A cause the previous message already ends
/// with is skipped: cavesweep's errors never print their cause, but some other crates' errors
/// do (and return it from `source()` too).
pub fn text(e: &(dyn Error + 'static)) -> String {
    text_in(e, &Words::LIBRARY)
}

/// [`text`] with the settings each message names in `words`.
pub fn text_in(e: &(dyn Error + 'static), words: &Words) -> String {
    let mut line = String::new();
    let mut last = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let msg = worded(c, words)
            .unwrap_or_else(|| c.to_string())
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

    fn flag(p: Param) -> &'static str {
        match p {
            Param::Seeds => "--seeds",
            Param::Shard => "--shard",
            Param::Chunk => "--chunk",
            _ => "--other",
        }
    }
    fn keyword(p: Param) -> &'static str {
        match p {
            Param::Seeds => "seeds=",
            Param::Shard => "shard=",
            Param::Chunk => "chunk=",
            _ => "other=",
        }
    }
    const CLI: Words = Words {
        another_out: "another --out",
        force: "--force",
        param: flag,
        joined: false,
    };
    const PY: Words = Words {
        another_out: "another out=",
        force: "force=True",
        param: keyword,
        joined: true,
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
