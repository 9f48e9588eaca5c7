//! Why an output folder or its store could not be used: one variant per case, naming the folder
//! or file; causes are returned from `source()`, never printed twice (see [`crate::error`]).

use std::io;
use std::path::PathBuf;

use super::{DB_FILE, FORMAT, LockError};
use crate::error::Remedy;

/// Why an output folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The folder's name is empty.
    #[error("the output folder's name is empty: give a folder")]
    EmptyName,
    /// Something other than a folder is at the path.
    #[error("output folder {} exists and is not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// The folder could not be created.
    #[error("cannot create output folder {}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// Another process holds the folder, or the lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A folder or file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The folder or file.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// One of cavesweep's files could not be removed (forced, or a stale temporary file).
    #[error("cannot remove {}", path.display())]
    Remove {
        /// The file or folder that could not be removed.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// A link, FIFO, socket or device has the name of one of cavesweep's files.
    #[error(
        "{} is {kind}, not a file cavesweep wrote; cavesweep neither follows nor removes it: move it away",
        path.display()
    )]
    NotOurs {
        /// The entry in the way.
        path: PathBuf,
        /// What it is, for the message (`a symbolic link`, `a FIFO (named pipe)`, ...).
        kind: &'static str,
    },
    /// A directory has the name of one of cavesweep's files.
    #[error(
        "{} is a directory, where cavesweep writes a file; it is not removed: move it away",
        .0.display()
    )]
    DirWhereFile(PathBuf),
    /// The folder holds cavesweep 0.1's JSON checkpoint.
    #[error(
        "output folder {} holds a sweep written by an older cavesweep (state.json); it cannot be resumed",
        .0.display()
    )]
    Legacy(PathBuf),
    /// SQLite's side files without the store they belong to.
    #[error(
        "output folder {} holds {} but no {DB_FILE}: it is not a store cavesweep can use",
        dir.display(),
        side.display()
    )]
    SideWithoutStore {
        /// The output folder.
        dir: PathBuf,
        /// The side file found (`cavesweep.sqlite-journal`, `-wal` or `-shm`).
        side: PathBuf,
    },
    /// Final files of cavesweep without the store that recorded them.
    #[error(
        "output folder {} holds cavesweep output files but no {DB_FILE} holding a run to resume from",
        .0.display()
    )]
    OutputsWithoutStore(PathBuf),
    /// Files that are not cavesweep's, and no store.
    #[error(
        "output folder {} is not empty and holds no cavesweep store ({name} is not ours)",
        dir.display()
    )]
    Foreign {
        /// The output folder.
        dir: PathBuf,
        /// An entry of the folder that is not cavesweep's (the last one listed).
        name: String,
    },
    /// SQLite cannot write the store.
    #[error(
        "store {}: cannot write it (the file or its folder is read-only): make it writable, or copy the folder somewhere writable",
        .0.display()
    )]
    ReadOnly(PathBuf),
    /// The disk is full.
    #[error(
        "store {}: No space left on device: free some space and rerun the same command (it resumes)",
        .0.display()
    )]
    DiskFull(PathBuf),
    /// Any other SQLite failure.
    #[error("store {}", path.display())]
    Sql {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// An I/O failure of the store outside SQLite (an injected fault).
    #[error("store {}", path.display())]
    Io {
        /// The store file.
        path: PathBuf,
        /// What the operating system (or the failpoint) reported.
        source: io::Error,
    },
    /// The store's structure or meta table cannot be read.
    #[error("store {} is damaged ({why})", path.display())]
    Damaged {
        /// The store file.
        path: PathBuf,
        /// What could not be read (a table, a meta key, the fingerprint).
        why: String,
    },
    /// A store format this build does not read.
    #[error(
        "store {} has format {found:?}, which this cavesweep ({}) does not read (it reads format {FORMAT})",
        path.display(),
        env!("CARGO_PKG_VERSION")
    )]
    Format {
        /// The store file.
        path: PathBuf,
        /// The format the store records (meta `format`).
        found: String,
    },
    /// The folder holds another kind of work (a search where a sweep goes).
    #[error("output folder {} holds a {found}, not a {wanted}", dir.display())]
    OtherKind {
        /// The output folder.
        dir: PathBuf,
        /// The kind the store records (`sweep` or `search`).
        found: String,
        /// The kind this command writes.
        wanted: String,
    },
    /// The folder holds the same kind of work with another definition.
    #[error(
        "output folder {} holds a different {kind} (differs in {}; recorded: {recorded}, shard {shard})",
        dir.display(),
        differ.join(", ")
    )]
    Different {
        /// The output folder.
        dir: PathBuf,
        /// The kind of work both hold (`sweep` or `search`).
        kind: String,
        /// The fingerprint's top-level keys that differ (and `shard` if the shards do).
        differ: Vec<String>,
        /// A short description of the recorded work, for the message.
        recorded: String,
        /// The shard the folder records (`K/N`).
        shard: String,
    },
    /// A folder given to read has no store.
    #[error("{} is not a cavesweep output folder (no {DB_FILE})", .0.display())]
    NotOutputFolder(PathBuf),
    /// The store (or a side file) is not a regular file.
    #[error("{}", path.display())]
    Refused {
        /// The store or side file.
        path: PathBuf,
        /// Why it is refused: its kind (see [`crate::io::folder::refused`]).
        source: io::Error,
    },
    /// A folder given to read was interrupted in the middle of a write.
    #[error(
        "{} was interrupted in the middle of a write ({} exists): rerun its command to finish it first",
        dir.display(),
        side.display()
    )]
    Interrupted {
        /// The output folder.
        dir: PathBuf,
        /// The non-empty side file left by the write (`cavesweep.sqlite-journal`, ...).
        side: PathBuf,
    },
    /// The store cannot be read at all.
    #[error("{} is not a readable cavesweep store", path.display())]
    Unreadable {
        /// The store file.
        path: PathBuf,
        /// SQLite's error when opening or first reading it.
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// What the user can do about it, if forcing or another folder helps.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            StoreError::Legacy(_)
            | StoreError::OutputsWithoutStore(_)
            | StoreError::OtherKind { .. }
            | StoreError::Different { .. } => Some(Remedy::Replace),
            StoreError::SideWithoutStore { .. } => Some(Remedy::Remove),
            StoreError::Foreign { .. } => Some(Remedy::WriteBeside),
            StoreError::Damaged { .. } => Some(Remedy::StartOver),
            StoreError::Format { .. } => Some(Remedy::OtherVersion),
            _ => None,
        }
    }

    /// A SQLite failure of the store at `path`, read-only and full disks said plainly (SQLite's
    /// "attempt to write a readonly database" does not say what to do about it).
    pub(super) fn sql(path: &std::path::Path, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        let path = path.to_path_buf();
        match e.sqlite_error_code() {
            Some(ErrorCode::ReadOnly) => StoreError::ReadOnly(path),
            Some(ErrorCode::DiskFull) => StoreError::DiskFull(path),
            _ => StoreError::Sql { path, source: e },
        }
    }
}
