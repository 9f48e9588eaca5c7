//! Output folders that never lose data: the lock, the record store, verified resume and the
//! final files. Sweeps (and searches) write through this module; it knows records and files,
//! not caves.
//!
//! ```text
//! DIR/cavesweep.lock     flock'ed by the one process writing DIR (see [`lock`])
//! DIR/cavesweep.sqlite   the store: meta, one record per grid point, seed rows per chunk
//! DIR/<final files>      written when the work is complete, recorded by size and CRC-32
//! ```
//!
//! Why SQLite (through `rusqlite`, bundled): a checkpoint must write only what changed and be
//! atomic. A SQLite transaction is both: a kill or a full disk at any instant leaves the last
//! committed checkpoint, and a checkpoint rewrites only the records of the grid points that moved
//! (and appends the new chunks' seed rows), whatever the size of the grid. It is a real, well-kept
//! format that users and scripts can open (`sqlite3 DIR/cavesweep.sqlite`, Python's `sqlite3`).
//! The rollback journal (not WAL) is used because it needs no shared memory, so it works on the
//! network file systems clusters put output folders on.
//!
//! Records carry a CRC-32 of their content on top of SQLite's own structure checks, so a record
//! damaged on disk is detected and its work recomputed instead of being trusted.
//!
//! Tables (integers that are `u64` in Rust are stored bit-cast to SQLite's i64):
//! - `meta(key, value)`: `format`, `kind`, `fingerprint` (canonical JSON of everything that
//!   determines the results), `shard`, `command`, `complete`, `files` (JSON: name -> size, crc32);
//! - `points(point, closed, seeds, passed, done, stats, crc)`: per grid point, its statistics and,
//!   until it is closed (every chunk of it done), the ranges of its chunks that are done;
//! - `rows(chunk, n, data, crc)`: the `n > 0` CSV rows a chunk contributes to a row file (the
//!   Parquet tables are made from the same rows, see [`parquet`]);
//! - `runs(started, argv, host, pid, version)`: every invocation that wrote the folder.

mod error;
pub mod files;
pub mod lock;
pub mod parquet;
pub mod ranges;
pub mod table;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

pub use error::StoreError;
pub use files::FileRecord;
pub use lock::{FolderLock, LOCK_FILE, LockError};
pub use ranges::RangeSet;

use crate::command::this_argv;

use crate::failpoint;
use crate::io::{Folder, Kind};

/// The store's file name inside an output folder.
pub const DB_FILE: &str = "cavesweep.sqlite";
/// The store format this build reads and writes.
pub const FORMAT: u32 = 1;
/// SQLite's side files of the store.
const DB_SIDE: [&str; 3] = ["-journal", "-wal", "-shm"];
/// Files of the JSON checkpoint format of cavesweep 0.1 (refused; `--force` removes them, but
/// only once [`legacy_checkpoint`] has proved them that format's: both are common names).
const LEGACY: [&str; 2] = ["state.json", "parts"];
/// The largest `state.json` read to prove it cavesweep 0.1's.
const LEGACY_STATE_LIMIT: u64 = 64 << 20;

/// What a folder holds: the kind of work and everything that determines its results.
pub struct Identity<'a> {
    /// `"sweep"` or `"search"`.
    pub kind: &'a str,
    /// Canonical description of the work; two runs with equal fingerprints write equal bytes.
    pub fingerprint: &'a serde_json::Value,
    /// This process's share (`"K/N"`), part of the identity: a shard folder is not a whole one.
    pub shard: &'a str,
    /// The command line recorded in the folder when it is created (results-relevant flags only).
    pub command: &'a str,
    /// The final files the work writes (also: names `--force` may remove).
    pub outputs: &'a [&'a str],
    /// A short human description of a recorded fingerprint, for "holds a different ..." errors.
    pub describe: fn(&serde_json::Value) -> String,
}

/// One grid point's record as stored.
#[derive(Debug, Clone)]
pub struct PointRecord {
    /// The grid point's index (a search keeps its one record at point 0).
    pub point: u64,
    /// Every chunk of the point (this shard's share of it) is done.
    pub closed: bool,
    /// Seeds done so far for this point (in this shard).
    pub seeds: u64,
    /// Of those, the seeds that passed the gate (a search: matches recorded).
    pub passed: u64,
    /// Done chunk offsets within the point (empty for a closed point).
    pub done: Vec<(u64, u64)>,
    /// The statistics, encoded by the caller.
    pub stats: Vec<u8>,
}

/// A point record as read back: the record, or why it cannot be trusted.
pub type ReadPoint = Result<PointRecord, (u64, String)>;

impl PointRecord {
    fn crc(&self, done: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new();
        h.update(&self.point.to_le_bytes());
        h.update(&[self.closed as u8]);
        h.update(&self.seeds.to_le_bytes());
        h.update(&self.passed.to_le_bytes());
        h.update(&(done.len() as u64).to_le_bytes());
        h.update(done);
        h.update(&self.stats);
        h.finalize()
    }
}

fn rows_crc(chunk: u64, n: u64, data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&chunk.to_le_bytes());
    h.update(&n.to_le_bytes());
    h.update(data);
    h.finalize()
}

/// An open, locked output folder.
pub struct Store {
    dir: PathBuf,
    conn: Connection,
    fresh: bool,
    /// The folder's lock: exclusive for a writer, shared for a merge input, none for a snapshot.
    _lock: Option<FolderLock>,
}

/// How the names in an output folder relate to us.
enum Entry {
    /// The lock file: never removed.
    Lock,
    /// The store or one of our final files, or a temporary sibling of one: ours.
    Ours,
    /// A temporary left by a killed process: removed on open (a regular file in a folder
    /// holding our store; anything else of that name is foreign).
    Temp,
    /// Written by an older cavesweep.
    Legacy,
    /// Not ours: never touched.
    Foreign,
}

fn classify(name: &str, outputs: &[&str], legacy: bool) -> Entry {
    let db_side = DB_SIDE.map(|s| format!("{DB_FILE}{s}"));
    if name == LOCK_FILE {
        Entry::Lock
    } else if name == DB_FILE || db_side.iter().any(|s| s == name) || outputs.contains(&name) {
        Entry::Ours
    } else if outputs
        .iter()
        .chain(["manifest.json", DB_FILE].iter())
        .any(|o| files::is_temp_of(name, o))
    {
        Entry::Temp
    } else if legacy && LEGACY.contains(&name) {
        Entry::Legacy
    } else {
        Entry::Foreign
    }
}

/// Cavesweep 0.1's checkpoint in `folder`, proved, as the names in `parts/` to remove (empty
/// when there is no `parts/`), or `None` when it cannot be proved (then `state.json` and
/// `parts` are foreign names: never touched). Proof: `state.json` is a regular file of at most
/// [`LEGACY_STATE_LIMIT`] holding a JSON object with exactly that format's keys, and `parts`,
/// when present, is a folder of regular files named `N.csv` (its chunks' rows), nothing else.
fn legacy_checkpoint(folder: &Folder) -> Option<Vec<OsString>> {
    const KEYS: [&str; 6] = ["chunks", "done", "fingerprint", "format", "points", "shard"];
    let bytes = folder.read_capped(LEGACY[0], LEGACY_STATE_LIMIT).ok()??;
    let state: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes).ok()?;
    let mut keys: Vec<&str> = state.keys().map(String::as_str).collect();
    keys.sort_unstable();
    if keys != KEYS {
        return None;
    }
    let parts = match folder.kind(LEGACY[1]).ok()? {
        None => return Some(Vec::new()),
        Some(Kind::Dir) => folder.sub(LEGACY[1], false).ok()?.0,
        Some(_) => return None,
    };
    let names = parts.entries().ok()?;
    let chunk_file = |n: &OsString, k: &Kind| {
        *k == Kind::File
            && n.to_str()
                .and_then(|n| n.strip_suffix(".csv"))
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    names
        .iter()
        .all(|(n, k)| chunk_file(n, k))
        .then(|| names.into_iter().map(|(n, _)| n).collect())
}

/// The store file at `path` (a regular file) holds no table: empty, or a creation interrupted
/// before its commit. Opened read-only and not followed through a link; a file SQLite cannot
/// read counts as not empty (opening it for the work then says what is wrong with it).
pub(crate) fn store_is_empty(path: &Path) -> bool {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    Connection::open_with_flags(sqlite_path(path), flags)
        .and_then(|c| c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)))
        .is_ok_and(|n: i64| n == 0)
}

fn sql_err(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::sql(path, e)
}

/// `path` (the store file) with its folder resolved to the folder's real path, for SQLite:
/// with `SQLITE_OPEN_NOFOLLOW` SQLite refuses a link in *any* component of the name it is
/// given (error 1550), but the folder a user names is theirs and is followed like `cd` follows
/// it (`--out results` where `results` is a link, `/home` a link to `/data/home`); only the
/// store file itself must not be a link. A folder that cannot be resolved is left as given (the
/// open then says why): [`crate::io::real_folder_path`].
fn sqlite_path(path: &Path) -> PathBuf {
    crate::io::real_folder_path(path).unwrap_or_else(|| path.to_path_buf())
}

/// Open the store database with the settings every writer uses.
fn connect(path: &Path, flags: OpenFlags) -> Result<Connection, StoreError> {
    // NOFOLLOW: the store's file inside the folder is never reached through a link.
    let conn =
        Connection::open_with_flags(sqlite_path(path), flags | OpenFlags::SQLITE_OPEN_NOFOLLOW)
            .map_err(|e| sql_err(path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| sql_err(path, e))?;
    Ok(conn)
}

/// 32 KiB pages (SQLite's default is 4 KiB): a checkpoint of a 100,000-point grid inserts
/// ~20,000 records of ~2 KB a second, and with small pages that is thousands of page writes per
/// transaction on the collector thread, which the workers then wait for.
const SCHEMA: &str = "
    PRAGMA page_size = 32768;
    PRAGMA auto_vacuum = INCREMENTAL;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE points (
        point INTEGER PRIMARY KEY, closed INTEGER NOT NULL, seeds INTEGER NOT NULL,
        passed INTEGER NOT NULL, done BLOB NOT NULL, stats BLOB NOT NULL, crc INTEGER NOT NULL);
    CREATE TABLE rows (chunk INTEGER PRIMARY KEY, n INTEGER NOT NULL, data BLOB NOT NULL,
        crc INTEGER NOT NULL);
    CREATE TABLE runs (started TEXT NOT NULL, argv TEXT NOT NULL, host TEXT NOT NULL,
        pid INTEGER NOT NULL, version TEXT NOT NULL);
";

impl Store {
    /// Open `dir` for the work `id` describes: a new folder, an empty one, or one holding the
    /// same work (to resume or verify). Takes the folder's lock first, so a second process is
    /// refused before anything is read or written. A folder holding other work or other files is
    /// refused unless `force`, which removes only cavesweep's own files.
    pub fn open(dir: &Path, id: &Identity, force: bool) -> Result<Store, StoreError> {
        if dir.as_os_str().is_empty() {
            return Err(StoreError::EmptyName);
        }
        if dir.exists() && !dir.is_dir() {
            return Err(StoreError::NotAFolder(dir.into()));
        }
        let (folder, _) = Folder::create(dir).map_err(|source| StoreError::Create {
            path: dir.into(),
            source,
        })?;
        let (lock, lock_created) = FolderLock::acquire(dir, &this_argv())?;
        failpoint::kill("locked");
        // A refused folder is left as it was found: without a lock file this run created.
        let refuse = |e: StoreError| {
            if lock_created {
                let _ = folder.remove_file(LOCK_FILE);
            }
            e
        };
        let entries = folder.entries().map_err(|source| {
            refuse(StoreError::Read {
                path: dir.into(),
                source,
            })
        })?;
        // The store proves the folder ours only once its schema is committed (final files are
        // written after that): an empty one, such as an interrupted creation leaves or anyone
        // can make, proves nothing about the files beside it.
        let db_file = entries
            .iter()
            .any(|(n, k)| n == DB_FILE && *k == Kind::File);
        let has_db = db_file && !store_is_empty(&dir.join(DB_FILE));
        let legacy_parts = legacy_checkpoint(&folder);
        // Decide everything first: a refusal removes nothing.
        let mut legacy = false;
        let mut foreign = None;
        let mut outputs_without_store = false;
        let mut side_without_store = None;
        let mut remove_files = Vec::new();
        let mut remove_dirs = Vec::new();
        for (name, kind) in &entries {
            let shown = || folder.join(name);
            let Some(name_str) = name.to_str() else {
                foreign = Some(name.to_string_lossy().into_owned());
                continue;
            };
            let entry = match classify(name_str, id.outputs, legacy_parts.is_some()) {
                // A temporary file is ours only in a folder holding our store (the store is
                // created before any final file is written) and only as a regular file.
                Entry::Temp if !has_db || *kind != Kind::File => Entry::Foreign,
                e => e,
            };
            match entry {
                Entry::Lock => {}
                Entry::Ours | Entry::Legacy
                    if *kind == Kind::Link || matches!(kind, Kind::Special(_)) =>
                {
                    return Err(refuse(StoreError::NotOurs {
                        path: shown(),
                        kind: kind.name(),
                    }));
                }
                Entry::Ours if *kind == Kind::Dir => {
                    return Err(refuse(StoreError::DirWhereFile(shown())));
                }
                Entry::Temp => remove_files.push(name.clone()),
                Entry::Ours if force => remove_files.push(name.clone()),
                Entry::Legacy if force => match kind {
                    Kind::Dir => remove_dirs.push(name.clone()),
                    _ => remove_files.push(name.clone()),
                },
                // An empty store (see `has_db`) and its side files (a killed creation's
                // journal, which SQLite rolls back on opening): it is made again in place.
                Entry::Ours if db_file && name_str.starts_with(DB_FILE) => {}
                Entry::Ours => {
                    if !has_db {
                        if name_str.starts_with(DB_FILE) {
                            side_without_store = Some(shown());
                        } else {
                            outputs_without_store = true;
                        }
                    }
                }
                Entry::Legacy => legacy = true,
                Entry::Foreign => foreign = Some(name_str.to_string()),
            }
        }
        if !has_db {
            if legacy {
                return Err(refuse(StoreError::Legacy(dir.into())));
            }
            if let Some(side) = side_without_store {
                return Err(refuse(StoreError::SideWithoutStore {
                    dir: dir.into(),
                    side,
                }));
            }
            if outputs_without_store {
                return Err(refuse(StoreError::OutputsWithoutStore(dir.into())));
            }
            if let (Some(name), false) = (foreign, force) {
                return Err(refuse(StoreError::Foreign {
                    dir: dir.into(),
                    name,
                }));
            }
        }
        for name in &remove_files {
            folder
                .remove_file(name)
                .map_err(|source| StoreError::Remove {
                    path: folder.join(name),
                    source,
                })?;
        }
        // `parts/`, proved cavesweep 0.1's: its chunk files, then the folder itself (emptied,
        // never removed whole: a file that appeared in it since makes the removal fail).
        for name in &remove_dirs {
            let path = folder.join(name);
            let remove = |source| StoreError::Remove {
                path: path.clone(),
                source,
            };
            let (sub, _) = folder.sub(name, false).map_err(remove)?;
            for part in legacy_parts.as_deref().unwrap_or_default() {
                sub.remove_file(part).map_err(|source| StoreError::Remove {
                    path: sub.join(part),
                    source,
                })?;
            }
            folder.remove_dir(name).map_err(remove)?;
        }
        let db = dir.join(DB_FILE);
        let conn = connect(
            &db,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )?;
        let mut store = Store {
            dir: dir.to_path_buf(),
            conn,
            fresh: false,
            _lock: Some(lock),
        };
        store.identify(id)?;
        store.record_run()?;
        Ok(store)
    }

    /// Check (or, for a new store, write) what the store holds.
    fn identify(&mut self, id: &Identity) -> Result<(), StoreError> {
        let path = self.dir.join(DB_FILE);
        let damaged = |why: String| StoreError::Damaged {
            path: path.clone(),
            why,
        };
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| damaged(e.to_string()))?;
        if tables == 0 {
            // A new store, or one whose creation was interrupted before its first commit.
            let fp = serde_json::to_string(id.fingerprint).expect("fingerprint serialises");
            let tx = self.conn.transaction().map_err(|e| sql_err(&path, e))?;
            tx.execute_batch(SCHEMA).map_err(|e| sql_err(&path, e))?;
            for (k, v) in [
                ("format", FORMAT.to_string()),
                ("kind", id.kind.to_string()),
                ("fingerprint", fp),
                ("shard", id.shard.to_string()),
                ("command", id.command.to_string()),
                ("complete", "0".to_string()),
                ("cavesweep", env!("CARGO_PKG_VERSION").to_string()),
            ] {
                tx.execute("INSERT INTO meta VALUES (?1, ?2)", params![k, v])
                    .map_err(|e| sql_err(&path, e))?;
            }
            failpoint::io("create-store").map_err(|e| sql_err_io(&path, e))?;
            tx.commit().map_err(|e| sql_err(&path, e))?;
            self.fresh = true;
            return Ok(());
        }
        let meta = |k: &str| -> Result<String, StoreError> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
                .optional()
                .map_err(|e| damaged(e.to_string()))?
                .ok_or_else(|| damaged(format!("no {k:?} in its meta table")))
        };
        let format = meta("format")?;
        if format != FORMAT.to_string() {
            return Err(StoreError::Format {
                path,
                found: format,
            });
        }
        let kind = meta("kind")?;
        if kind != id.kind {
            return Err(StoreError::OtherKind {
                dir: self.dir.clone(),
                found: kind,
                wanted: id.kind.into(),
            });
        }
        let recorded: serde_json::Value = serde_json::from_str(&meta("fingerprint")?)
            .map_err(|e| damaged(format!("fingerprint: {e}")))?;
        let shard = meta("shard")?;
        if &recorded != id.fingerprint || shard != id.shard {
            let mut differ = differing_keys(&recorded, id.fingerprint);
            if shard != id.shard {
                differ.push("shard".into());
            }
            return Err(StoreError::Different {
                dir: self.dir.clone(),
                kind,
                differ,
                recorded: (id.describe)(&recorded),
                shard,
            });
        }
        Ok(())
    }

    fn record_run(&mut self) -> Result<(), StoreError> {
        let path = self.dir.join(DB_FILE);
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        self.conn
            .execute(
                "INSERT INTO runs VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
                    this_argv(),
                    host,
                    std::process::id(),
                    env!("CARGO_PKG_VERSION")
                ],
            )
            .map_err(|e| sql_err(&path, e))?;
        Ok(())
    }

    /// Open a finished folder for reading only (merge inputs): takes a shared lock, so no writer
    /// can start in it meanwhile, and never writes. Refuses a folder whose last transaction was
    /// interrupted (its journal would have to be rolled back, which is a write).
    pub fn open_input(dir: &Path) -> Result<Store, StoreError> {
        Self::open_read(dir, true)
    }

    /// Open a folder's store for reading while another process may be writing it (a report of
    /// a running sweep): no lock is taken (SQLite's own read lock keeps each query consistent
    /// with the last committed checkpoint), nothing is written.
    pub fn open_snapshot(dir: &Path) -> Result<Store, StoreError> {
        Self::open_read(dir, false)
    }

    fn open_read(dir: &Path, locked: bool) -> Result<Store, StoreError> {
        let db = dir.join(DB_FILE);
        let folder = Folder::open(dir).map_err(|source| StoreError::Read {
            path: dir.into(),
            source,
        })?;
        let kind = |name: &str| {
            folder.kind(name).map_err(|source| StoreError::Read {
                path: folder.join(name),
                source,
            })
        };
        match kind(DB_FILE)? {
            Some(Kind::File) => {}
            None => return Err(StoreError::NotOutputFolder(dir.into())),
            Some(k) => {
                return Err(StoreError::Refused {
                    path: db,
                    source: crate::io::folder::refused(k),
                });
            }
        }
        let lock = if locked {
            FolderLock::acquire_shared(dir)?
        } else {
            None
        };
        for side in DB_SIDE {
            let name = format!("{DB_FILE}{side}");
            let p = dir.join(&name);
            match kind(&name)? {
                None | Some(Kind::File) => {}
                Some(k) => {
                    return Err(StoreError::Refused {
                        path: p,
                        source: crate::io::folder::refused(k),
                    });
                }
            }
            if locked && fs::symlink_metadata(&p).is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::Interrupted {
                    dir: dir.into(),
                    side: p,
                });
            }
        }
        let conn = connect(
            &db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.query_row("SELECT count(*) FROM meta", [], |_| Ok(()))
            .map_err(|source| StoreError::Unreadable {
                path: db.clone(),
                source,
            })?;
        Ok(Store {
            dir: dir.to_path_buf(),
            conn,
            fresh: false,
            _lock: lock,
        })
    }

    /// The output folder this store is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether [`Store::open`] created the store (nothing to resume).
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }

    fn path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    fn sql(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path(), e)
    }

    /// A meta value.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// A second connection to this store for a thread that writes checkpoints while this one
    /// keeps collecting (see `sweep::state`). It shares this process's folder lock, so it must
    /// not outlive the [`Store`]; SQLite serialises its transactions with this connection's.
    pub fn side_writer(&self) -> Result<SideWriter, StoreError> {
        let path = self.path();
        let conn = connect(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        Ok(SideWriter { conn, path })
    }

    /// Start a transaction: everything written through it lands together at
    /// [`Batch::commit`], or not at all.
    pub fn begin(&mut self) -> Result<Batch<'_>, StoreError> {
        let path = self.path();
        let tx = self.conn.transaction().map_err(|e| sql_err(&path, e))?;
        Ok(Batch { tx, path })
    }

    /// Every point record in point order; records that fail their checksum or cannot be read
    /// come back as `Err((point, why))`.
    pub fn points<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(ReadPoint) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut st = self
            .conn
            .prepare(
                "SELECT point, closed, seeds, passed, done, stats, crc FROM points ORDER BY point",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([]).map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            f(read_point(r))?;
        }
        Ok(())
    }

    /// The record of one point, if any.
    pub fn point(&self, point: u64) -> Result<Option<ReadPoint>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT point, closed, seeds, passed, done, stats, crc FROM points WHERE point = ?1",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([point as i64]).map_err(|e| self.sql(e))?;
        Ok(rows.next().map_err(|e| self.sql(e))?.map(read_point))
    }

    /// The point records with `point` in `range`, in point order.
    pub fn points_in(&self, range: std::ops::Range<u64>) -> Result<Vec<ReadPoint>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT point, closed, seeds, passed, done, stats, crc FROM points
                 WHERE point >= ?1 AND point < ?2 ORDER BY point",
            )
            .map_err(|e| self.sql(e))?;
        let end = i64::try_from(range.end).unwrap_or(i64::MAX);
        let mut rows = st
            .query(params![range.start as i64, end])
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            out.push(read_point(r));
        }
        Ok(out)
    }

    /// `(chunk, n)` of every row record, in chunk order (no row data is read).
    pub fn row_counts(&self, mut f: impl FnMut(u64, u64)) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT chunk, n FROM rows ORDER BY chunk")
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([]).map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let (c, n): (i64, i64) = (
                r.get(0).map_err(|e| self.sql(e))?,
                r.get(1).map_err(|e| self.sql(e))?,
            );
            f(c as u64, n as u64);
        }
        Ok(())
    }

    /// The rows of chunks `range`, in chunk order: `(chunk, n, data, checksum ok)`.
    pub fn rows<E: From<StoreError>>(
        &self,
        range: std::ops::Range<u64>,
        mut f: impl FnMut(u64, u64, &[u8], bool) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT chunk, n, data, crc FROM rows WHERE chunk >= ?1 AND chunk < ?2 ORDER BY chunk",
            )
            .map_err(|e| self.sql(e))?;
        let end = i64::try_from(range.end).unwrap_or(i64::MAX);
        let mut rows = st
            .query(params![range.start as i64, end])
            .map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let chunk = r.get::<_, i64>(0).map_err(|e| self.sql(e))? as u64;
            let n = r.get::<_, i64>(1).map_err(|e| self.sql(e))? as u64;
            let data = r
                .get_ref(2)
                .map_err(|e| self.sql(e))?
                .as_blob()
                .unwrap_or(&[]);
            let crc = r.get::<_, i64>(3).map_err(|e| self.sql(e))? as u32;
            f(chunk, n, data, rows_crc(chunk, n, data) == crc)?;
        }
        Ok(())
    }

    /// Whether any row record is stored.
    pub fn has_rows(&self) -> Result<bool, StoreError> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM rows)", [], |r| r.get(0))
            .map_err(|e| self.sql(e))
    }

    /// Delete every row record and give the space back to the file system (after the row file
    /// they make up is complete).
    pub fn drop_rows(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("DELETE FROM rows;")
            .map_err(|e| self.sql(e))?;
        self.vacuum()
    }

    /// Give free pages back to the file system. `incremental_vacuum` frees one page per step of
    /// its statement, so it is stepped to the end: run once through `execute_batch`, it freed a
    /// single page and a finished sweep's store kept every page its seed rows had used.
    fn vacuum(&mut self) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA incremental_vacuum")
            .map_err(|e| self.sql(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.sql(e))?;
        while rows.next().map_err(|e| self.sql(e))?.is_some() {}
        Ok(())
    }
}

/// The top-level fields in which two fingerprints differ (`recipe`, `chunk`, `per_seed`, ...),
/// so a refusal says what changed instead of leaving the user to compare two descriptions.
fn differing_keys(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter(|k| a.get(*k) != b.get(*k))
                .cloned()
                .collect()
        }
        _ => vec!["its definition".into()],
    }
}

fn sql_err_io(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.into(),
        source,
    }
}

fn read_point(r: &rusqlite::Row<'_>) -> ReadPoint {
    let point = r.get::<_, i64>(0).map_err(|e| (u64::MAX, e.to_string()))? as u64;
    let bad = |why: String| (point, why);
    let closed: i64 = r.get(1).map_err(|e| bad(e.to_string()))?;
    let seeds: i64 = r.get(2).map_err(|e| bad(e.to_string()))?;
    let passed: i64 = r.get(3).map_err(|e| bad(e.to_string()))?;
    let done: Vec<u8> = r.get(4).map_err(|e| bad(e.to_string()))?;
    let stats: Vec<u8> = r.get(5).map_err(|e| bad(e.to_string()))?;
    let crc: i64 = r.get(6).map_err(|e| bad(e.to_string()))?;
    let mut rec = PointRecord {
        point,
        closed: closed != 0,
        seeds: seeds as u64,
        passed: passed as u64,
        done: Vec::new(),
        stats,
    };
    if rec.crc(&done) != crc as u32 {
        return Err(bad("checksum mismatch".into()));
    }
    rec.done = postcard::from_bytes(&done).map_err(|e| bad(format!("done ranges: {e}")))?;
    Ok(rec)
}

/// A second connection to a [`Store`], for a thread that writes checkpoints.
/// See [`Store::side_writer`].
pub struct SideWriter {
    conn: Connection,
    path: PathBuf,
}

impl SideWriter {
    /// Start a transaction, as [`Store::begin`].
    pub fn begin(&mut self) -> Result<Batch<'_>, StoreError> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| sql_err(&self.path, e))?;
        Ok(Batch {
            tx,
            path: self.path.clone(),
        })
    }
}

/// An open transaction on a [`Store`] (or a [`SideWriter`]): writes land together at
/// [`Batch::commit`]; dropped uncommitted, it rolls back.
pub struct Batch<'a> {
    tx: rusqlite::Transaction<'a>,
    path: PathBuf,
}

impl Batch<'_> {
    fn sql(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path, e)
    }

    /// Set (or replace) the meta entry `key` (`complete`, `files`, ...).
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.tx
            .execute(
                "INSERT OR REPLACE INTO meta VALUES (?1, ?2)",
                params![key, value],
            )
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Write (or replace) a point record.
    pub fn put_point(&self, rec: &PointRecord) -> Result<(), StoreError> {
        let done = postcard::to_allocvec(&rec.done).expect("ranges encode");
        let crc = rec.crc(&done);
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO points VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            .and_then(|mut st| {
                st.execute(params![
                    rec.point as i64,
                    rec.closed as i64,
                    rec.seeds as i64,
                    rec.passed as i64,
                    done,
                    rec.stats,
                    crc as i64
                ])
            })
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Delete point `point`'s record, if any.
    pub fn delete_point(&self, point: u64) -> Result<(), StoreError> {
        self.tx
            .execute("DELETE FROM points WHERE point = ?1", [point as i64])
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Write (or replace) the `n` rows chunk `chunk` contributes.
    pub fn put_rows(&self, chunk: u64, n: u64, data: &[u8]) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO rows VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut st| {
                st.execute(params![
                    chunk as i64,
                    n as i64,
                    data,
                    rows_crc(chunk, n, data) as i64
                ])
            })
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Delete the row records of chunks `range`.
    pub fn delete_rows(&self, range: std::ops::Range<u64>) -> Result<(), StoreError> {
        let end = i64::try_from(range.end).unwrap_or(i64::MAX);
        self.tx
            .execute(
                "DELETE FROM rows WHERE chunk >= ?1 AND chunk < ?2",
                params![range.start as i64, end],
            )
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Delete every point and row record (a merge starting over).
    pub fn clear_records(&self) -> Result<(), StoreError> {
        self.tx
            .execute_batch("DELETE FROM points; DELETE FROM rows;")
            .map_err(|e| self.sql(e))
    }

    /// Make everything in the batch durable at once. Failpoint `commit` (with `@K`: the K-th).
    pub fn commit(self) -> Result<(), StoreError> {
        failpoint::io("commit").map_err(|e| sql_err_io(&self.path, e))?;
        let path = self.path.clone();
        self.tx.commit().map_err(|e| sql_err(&path, e))
    }
}
