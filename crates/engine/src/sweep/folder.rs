//! The read side of a sweep folder, for reports and other tools: what state the folder is in,
//! whether its final files are still the ones the sweep wrote, and the tables of a sweep still
//! running. Readers go through this module, never through the run's own state or the store's
//! records, so the folder's layout can change behind it.

use std::path::{Path, PathBuf};

use crate::store::files::{self, FileRecord};
use crate::store::{DB_FILE, Store};

pub use super::state::{OUTPUTS, Provisional, provisional};

/// A sweep folder's Parquet table `stem` (`summary`, `trajectory`, `components`, `seeds`)
/// read back as the CSV it stands for, byte for byte what `--format csv` writes: so a reader
/// of the CSV tables (the report) reads a folder that has only Parquet. The parameters come
/// back as the text given to `--vary` (the file's own metadata holds the sweep's definition).
/// `None` if the folder has no such file; at most `max_rows` rows (more is an error).
pub fn parquet_as_csv(dir: &Path, stem: &str, max_rows: u64) -> Result<Option<Vec<u8>>, String> {
    use crate::store::parquet::{self, ColType, Value};
    let name = format!("{stem}.parquet");
    let path = dir.join(&name);
    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = match crate::io::Folder::open(dir).and_then(|f| f.open_read(&name)) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) => return Err(shown(&e)),
    };
    let t = parquet::read(file, max_rows).map_err(|e| shown(&e))?;
    let fp = t
        .meta
        .iter()
        .find(|(k, _)| k == "cavesweep.sweep")
        .ok_or_else(|| shown(&"no cavesweep.sweep metadata (not written by cavesweep sweep)"))?;
    let fp: serde_json::Value = serde_json::from_str(&fp.1).map_err(|e| shown(&e))?;
    let plan = super::Plan::from_fingerprint(&fp).map_err(|e| shown(&e))?;
    let cols = super::output::columns(&plan, stem);
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    if names != t.names {
        return Err(shown(&format!("columns {:?}, expected {names:?}", t.names)));
    }
    // Each parameter's values back to the text given to `--vary`.
    let first = usize::from(stem == "seeds");
    let axes: Vec<Vec<(Value, String)>> = plan
        .spec
        .varies
        .iter()
        .zip(&cols[first..])
        .map(|(v, (_, ty))| {
            (0..v.len())
                .filter_map(|i| {
                    let text = v.value(i);
                    let typed = match ty {
                        ColType::I64 | ColType::U64 => Value::Int(text.parse().ok()?),
                        ColType::F64 => Value::F64(text.parse().ok()?),
                        ColType::Bool => return None,
                        ColType::Str => Value::Str(text.clone()),
                    };
                    Some((typed, text))
                })
                .collect()
        })
        .collect();
    let mut out = super::output::header(&plan, stem);
    for r in 0..t.rows {
        for (i, col) in t.cols.iter().enumerate() {
            let v = &col.get(r);
            if i > 0 {
                out.push(b',');
            }
            if let Some(axis) = i.checked_sub(first).and_then(|a| axes.get(a)) {
                let text = axis
                    .iter()
                    .find(|(x, _)| Some(x) == v.as_ref())
                    .map(|(_, t)| t.as_str())
                    .ok_or_else(|| shown(&format!("{v:?} is not a value of its --vary")))?;
                super::output::push_field(&mut out, text);
                continue;
            }
            match v {
                None => {}
                Some(Value::Int(n)) => out.extend_from_slice(n.to_string().as_bytes()),
                Some(Value::F64(x)) => super::output::push_num(&mut out, *x),
                Some(Value::Bool(b)) => out.push(if *b { b'1' } else { b'0' }),
                Some(Value::Str(s)) => super::output::push_field(&mut out, s),
            }
        }
        out.push(b'\n');
    }
    Ok(Some(out))
}

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

/// The [`Stage`] of the sweep folder `dir` (its summary as CSV or Parquet counts as the files).
pub fn stage(dir: &Path) -> Stage {
    if dir.join("summary.csv").exists()
        || dir.join("summary.parquet").exists()
        || !dir.join(DB_FILE).exists()
    {
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
