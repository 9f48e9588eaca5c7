//! The read side of a sweep folder, for reports and other tools: what state the folder is in,
//! whether its final files are still the ones the sweep wrote, and the tables of a sweep still
//! running. Readers go through this module, never through the run's own state or the store's
//! records, so the folder's layout can change behind it.

use std::path::{Path, PathBuf};

use crate::store::files::{self, FileRecord};
use crate::store::{DB_FILE, Store};

pub use super::state::{OUTPUTS, Provisional, provisional};

/// The store's file name in a sweep folder (for messages that point at it).
pub const STORE_FILE: &str = DB_FILE;

/// How far a sweep folder got, as far as its readers care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The final files are there (`summary.csv`), or there is no store to read instead (the
    /// CSVs copied elsewhere, as in `results/`): read the files.
    Files,
    /// A store but no `summary.csv` yet: the sweep is running or was interrupted; its
    /// finished points are read from the store ([`provisional`]).
    Running,
}

/// The [`Stage`] of the sweep folder `dir`.
pub fn stage(dir: &Path) -> Stage {
    if dir.join("summary.csv").exists() || !dir.join(DB_FILE).exists() {
        Stage::Files
    } else {
        Stage::Running
    }
}

/// A final file that is not what the sweep recorded writing, or cannot be read to tell.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The file's size or CRC-32 differs from the store's record of it.
    #[error(
        "{} is not the file the sweep wrote (its size or CRC-32 differs from the record in {DB_FILE}): rerun the sweep command to rewrite it",
        .0.display()
    )]
    Changed(PathBuf),
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Checks a finished sweep's final files (every name of [`OUTPUTS`] but those in `skip`)
/// against the size and CRC-32 its store recorded for them: a file edited by hand, truncated
/// or replaced is an error, since a reader would present its numbers as the sweep's. A folder
/// without a store, or whose store does not say the sweep finished, has nothing to check
/// against and passes; so does a file the store has no record of (not written by this run).
pub fn check_final_files(dir: &Path, skip: &[&str]) -> Result<(), CheckError> {
    let Ok(store) = Store::open_snapshot(dir) else {
        return Ok(());
    };
    if store.meta("complete").ok().flatten().as_deref() != Some("1") {
        return Ok(());
    }
    let Some(json) = store.meta("files").ok().flatten() else {
        return Ok(());
    };
    let recorded: std::collections::BTreeMap<String, FileRecord> =
        serde_json::from_str(&json).unwrap_or_default();
    for name in OUTPUTS.into_iter().filter(|n| !skip.contains(n)) {
        let Some(rec) = recorded.get(name) else {
            continue;
        };
        let path = dir.join(name);
        match files::matches(dir, name, rec) {
            Ok(true) => {}
            Ok(false) => return Err(CheckError::Changed(path)),
            Err(source) => return Err(CheckError::Read { path, source }),
        }
    }
    Ok(())
}
