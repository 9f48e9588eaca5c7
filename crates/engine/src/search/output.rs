//! The file a search writes (`search --out FILE.csv`, `cavesweep.search(out=...)`) and its
//! checkpoint, as one protocol for every caller:
//!
//! 1. refuse what is not ours: an existing file with no checkpoint beside it (unless forced),
//!    a folder, a missing or non-folder parent (the checkpoint goes beside the file: missing
//!    parents are never created);
//! 2. open the checkpoint [`Checkpoint::open`] (it takes the lock, so a second search writing
//!    the same file is refused before the file is touched);
//! 3. a search that completed earlier: verify the file against its completion mark (size and
//!    CRC-32) and, if intact, make the PNGs the folder lacks and stop ([`Opened::Complete`]);
//!    if the file is gone or changed, search again ([`Opened::Open`] with `repaired`);
//! 4. create the CSV in place (never through a link, never a FIFO) and write it through a
//!    [`Counted`] writer, flushed per batch, so its size and CRC are known as it is written;
//!    only then is the PNG folder created (a refused search leaves none behind);
//! 5. [`OutFile::finish`]: fsync, then the completion mark.
//!
//! A path ending in `.parquet` gets the same rows as a Parquet table (`seed` u64, each metric
//! f64, null where the CSV is empty; [`crate::store::parquet`]), written through the same
//! [`Counted`] writer: row groups go to disk as they fill, and [`OutFile::end_interrupted`]
//! writes the footer after a Ctrl-C so the file holds the finished chunks' rows.
//!
//! The CLI and Python differ only in how they word the errors ([`OutputError`] is typed so each
//! adds its own flag names) and in what they do with the rows.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::checkpoint::{self, Checkpoint, Completed};
use super::{ChunkRecord, Search, SearchError, read_seeds};
use crate::io::Folder;
use crate::store::files::{self, Counted};
use crate::store::parquet::{self, ColType, ParquetTable};

/// Why a search's output file cannot be opened or finished. The messages name no flag: the
/// caller adds its own (`--out`/`--force`, `out=`/`force=True`).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output path is empty.
    #[error("the output file name is empty: give a file name")]
    Empty,
    /// A file is there and no checkpoint beside it says a search of ours wrote it. Forcing
    /// replaces it.
    #[error(
        "{} exists and holds no search of cavesweep to resume or verify ({} is missing)",
        path.display(),
        checkpoint.display()
    )]
    Exists {
        /// The output file.
        path: PathBuf,
        /// Where its checkpoint folder would be (`FILE.csv.checkpoint`).
        checkpoint: PathBuf,
    },
    /// The output path is a folder.
    #[error("{} is a folder; give a file name", .0.display())]
    IsFolder(PathBuf),
    /// The folder the file would go in is missing (`missing`) or is not a folder.
    #[error(
        "cannot create {}: {} {}",
        path.display(),
        parent.display(),
        if *missing { "does not exist" } else { "is not a folder" }
    )]
    Parent {
        /// The output file.
        path: PathBuf,
        /// The folder it would go in.
        parent: PathBuf,
        /// True when the folder does not exist, false when it is not a folder.
        missing: bool,
    },
    /// Reading, creating, writing or syncing the file failed.
    #[error("cannot {what} {}", path.display())]
    File {
        /// The operation, as a verb for the message: `create`, `read` or `write`.
        what: &'static str,
        /// The output file.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// The checkpoint (locked by another search, another search's, unwritable), or the PNGs.
    #[error(transparent)]
    Checkpoint(#[from] SearchError),
}

impl OutputError {
    /// What the user can do about it, if forcing or another file helps.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        match self {
            OutputError::Exists { .. } => Some(crate::error::Remedy::Force),
            OutputError::Checkpoint(e) => e.remedy(),
            _ => None,
        }
    }
}

/// What to do when the checkpoint says the search already completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfComplete {
    /// Verify the file against the completion mark and leave it alone if intact (the command
    /// line: rerunning a finished command is instant).
    Verify,
    /// Search again, rewriting the same bytes (a caller that needs the rows in memory).
    SearchAgain,
}

/// The result of [`open`].
pub enum Opened {
    /// The search had completed and its file is intact (and the PNGs it lacked were made):
    /// nothing to do. `rows`: its data rows.
    Complete {
        /// Data rows in the file (the header not counted).
        rows: u64,
    },
    /// Ready to run: pass [`OutFile::take_prior`] to [`Search::run`].
    Open(Box<OutFile>),
}

/// An output file being written, with its checkpoint.
pub struct OutFile {
    path: PathBuf,
    checkpoint: Checkpoint,
    prior: Vec<ChunkRecord>,
    file: Sink,
    rows: u64,
    repaired: bool,
    /// The command, for a Parquet file's metadata.
    command: String,
}

/// The file's format: CSV bytes as they come, or a Parquet table made of them.
enum Sink {
    Csv(Counted<BufWriter<File>>),
    /// The table is started by the first write (the header, which names its columns).
    Parquet(ParquetSink),
    /// A CSV write failed and the file was cut back to its last whole batch.
    Failed,
}

/// The file's writer, the Parquet footer written first (a file that never got its header is
/// left empty).
fn close_sink(file: Sink) -> io::Result<Counted<BufWriter<File>>> {
    match file {
        Sink::Csv(f) | Sink::Parquet(ParquetSink::Start(f)) => Ok(f),
        Sink::Parquet(ParquetSink::Table(t)) => t.finish(),
        Sink::Parquet(ParquetSink::Gone) | Sink::Failed => {
            Err(io::Error::other("an earlier write failed"))
        }
    }
}

/// A Parquet output before its header (`Start`) or after.
enum ParquetSink {
    Start(Counted<BufWriter<File>>),
    Table(Box<ParquetTable<Counted<BufWriter<File>>>>),
    /// Only while a write is failing half-way.
    Gone,
}

/// Steps 1-4 of the protocol (see the module docs) for `search` writing `path`. `command`:
/// the canonical command recorded in the checkpoint. `force`: replace a file or a checkpoint
/// that is not this search's. `threads`: for PNGs a completed search lacks.
pub fn open(
    search: &Search,
    path: &Path,
    command: &str,
    force: bool,
    if_complete: IfComplete,
    threads: usize,
) -> Result<Opened, OutputError> {
    if path.as_os_str().is_empty() {
        return Err(OutputError::Empty);
    }
    if path.is_dir() {
        return Err(OutputError::IsFolder(path.to_path_buf()));
    }
    let dir = checkpoint::dir_for(path);
    // An existing file is ours to rewrite only beside a checkpoint store that says so (an empty
    // or foreign FILE.checkpoint/ folder proves nothing).
    let db = dir.join(crate::store::DB_FILE);
    let has_store = std::fs::symlink_metadata(&db).is_ok_and(|m| m.is_file())
        && !crate::store::store_is_empty(&db);
    if !force && std::fs::symlink_metadata(path).is_ok() && !has_store {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
            checkpoint: dir,
        });
    }
    // What can never be written (a link, FIFO, device, a file with other names) is refused
    // before the checkpoint folder is made: a refusal leaves nothing behind.
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let why = if m.is_file() {
            (m.nlink() > 1).then(|| crate::io::folder::hard_linked(m.nlink()))
        } else {
            Folder::of_file(path)
                .and_then(|(d, name)| d.kind(name))
                .ok()
                .flatten()
                .map(crate::io::folder::refused)
        };
        if let Some(source) = why {
            return Err(OutputError::File {
                what: "create",
                path: path.to_path_buf(),
                source,
            });
        }
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(OutputError::Parent {
            path: path.to_path_buf(),
            parent: parent.to_path_buf(),
            missing: !parent.exists(),
        });
    }
    let (mut checkpoint, prior) = Checkpoint::open(search, &dir, command, force)?;
    let mut repaired = false;
    if let Some(done) = checkpoint.completed() {
        if if_complete == IfComplete::Verify && intact(search, path, &done, threads)? {
            return Ok(Opened::Complete { rows: done.rows });
        }
        repaired = if_complete == IfComplete::Verify;
        checkpoint.restart()?;
    }
    let file = Folder::of_file(path)
        .and_then(|(dir, name)| dir.create_in_place(name))
        .map_err(|source| OutputError::File {
            what: "create",
            path: path.to_path_buf(),
            source,
        })?;
    // Last: a search refused for any reason above leaves no PNG folder behind.
    search.create_match_dirs()?;
    let file = Counted::new(BufWriter::new(file));
    let file = if path.extension().is_some_and(|e| e == "parquet") {
        Sink::Parquet(ParquetSink::Start(file))
    } else {
        Sink::Csv(file)
    };
    Ok(Opened::Open(Box::new(OutFile {
        path: path.to_path_buf(),
        checkpoint,
        prior,
        file,
        rows: 0,
        repaired,
        command: command.to_string(),
    })))
}

/// Whether the file a completed search wrote is still what it wrote (making the PNGs its rows
/// lack if so).
fn intact(
    search: &Search,
    path: &Path,
    done: &Completed,
    threads: usize,
) -> Result<bool, OutputError> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let intact =
        files::matches(parent, &name, &done.file()).map_err(|source| OutputError::File {
            what: "read",
            path: path.to_path_buf(),
            source,
        })?;
    if intact {
        search.create_match_dirs()?;
        if search.per_match() && done.rows > 0 {
            search.missing_match_files(&read_seeds(path)?, threads)?;
        }
    }
    Ok(intact)
}

impl OutFile {
    /// The finished chunks of an earlier run, for [`Search::run`]'s `prior` (once).
    pub fn take_prior(&mut self) -> Vec<ChunkRecord> {
        std::mem::take(&mut self.prior)
    }

    /// The completed search's file was gone or changed, so it is searched again.
    pub fn repaired(&self) -> bool {
        self.repaired
    }

    /// Chunks read back from an earlier run, and chunks whose records were damaged (rerun).
    pub fn resumed(&self) -> (u64, u64) {
        self.checkpoint.resumed()
    }

    /// The checkpoint folder.
    pub fn checkpoint_dir(&self) -> &Path {
        self.checkpoint.dir()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `bytes` (the header, or the rows of a batch holding `rows` matches) and flush, so
    /// a reader tailing the file sees them. A Parquet file takes them into its current row
    /// group, written when full ([`parquet::rows_per_group`]).
    pub fn write(&mut self, bytes: &[u8], rows: u64) -> io::Result<()> {
        match &mut self.file {
            Sink::Csv(f) => {
                let before = f.record().size;
                let written = match crate::failpoint::io("search-write") {
                    // As a disk filling up would: all of the batch but its last byte (the
                    // last row's newline) reaches the file first.
                    Err(e) => f
                        .write_all(&bytes[..bytes.len().saturating_sub(1)])
                        .and_then(|()| f.flush())
                        .and(Err(e)),
                    Ok(()) => f.write_all(bytes).and_then(|()| f.flush()),
                };
                if let Err(e) = written {
                    // A batch that failed part-way (a full disk) leaves no torn row: the file is
                    // cut back to the batches before it, each flushed whole. The sink is given
                    // up without flushing what its buffer still holds.
                    if let Sink::Csv(f) = std::mem::replace(&mut self.file, Sink::Failed) {
                        let (file, _unwritten) = f.into_inner().into_parts();
                        let _ = file.set_len(before);
                    }
                    return Err(e);
                }
            }
            Sink::Failed => return Err(io::Error::other("an earlier write failed")),
            Sink::Parquet(p) => match std::mem::replace(p, ParquetSink::Gone) {
                ParquetSink::Start(f) => {
                    // The header: `seed`, then metrics.
                    let cols = parquet::columns_of(bytes, |i, _| {
                        if i == 0 { ColType::U64 } else { ColType::F64 }
                    });
                    let meta = [
                        ("cavesweep.table", "search".to_string()),
                        ("cavesweep.version", env!("CARGO_PKG_VERSION").to_string()),
                        ("cavesweep.command", self.command.clone()),
                    ];
                    *p = ParquetSink::Table(Box::new(ParquetTable::new(f, &cols, &meta)?));
                }
                ParquetSink::Table(mut t) => {
                    let r = t.write_csv(bytes);
                    *p = ParquetSink::Table(t);
                    r?;
                }
                ParquetSink::Gone => return Err(io::Error::other("an earlier write failed")),
            },
        }
        self.rows += rows;
        Ok(())
    }

    /// The search was stopped: leave a valid file of the rows written so far (a Parquet file
    /// gets its last row group and footer; a CSV file is whole already), not marked complete,
    /// so a rerun resumes and rewrites it.
    pub fn end_interrupted(self) -> Result<(), OutputError> {
        let path = self.path.clone();
        close_sink(self.file)
            .and_then(|mut f| f.flush())
            .map_err(|source| OutputError::File {
                what: "write",
                path,
                source,
            })
    }

    /// A chunk finished: record it in the checkpoint.
    pub fn record(&mut self, r: &ChunkRecord) -> Result<(), SearchError> {
        self.checkpoint.record(r)
    }

    /// Commit every finished chunk (whatever happened to the run: the chunks that finished
    /// are kept).
    pub fn save(&mut self) -> Result<(), SearchError> {
        self.checkpoint.save()
    }

    /// The search completed: make the file durable, then replace the checkpoint's records by
    /// the completion mark (killed in between, the rerun rewrites the file from the records).
    pub fn finish(self) -> Result<(), OutputError> {
        let OutFile {
            path,
            checkpoint,
            file,
            rows,
            ..
        } = self;
        let counted = close_sink(file).map_err(|source| OutputError::File {
            what: "write",
            path: path.clone(),
            source,
        })?;
        let record = counted.record();
        let file = counted.into_inner();
        let file = file
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all().map(|()| f))
            .map_err(|source| OutputError::File {
                what: "write",
                path: path.clone(),
                source,
            })?;
        drop(file);
        checkpoint.finish(Completed {
            size: record.size,
            crc32: record.crc32,
            rows,
        })?;
        Ok(())
    }
}
