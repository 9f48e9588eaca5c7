//! Resumable searches: the finished chunks of a search writing `--out FILE.csv` are recorded in
//! the sweep store ([`crate::store`], SQLite, one writer per folder) in the folder
//! `FILE.csv.checkpoint/`. Rerunning the same command reads them back as the `prior` of
//! [`super::Search::run`]: those chunks are not run again, and the CSV is rewritten whole, in
//! seed order, from the records and the new work. Once the CSV is complete the records are
//! dropped and the folder keeps only a completion mark: the CSV's size and CRC-32 (as a sweep
//! records its final files), so rerunning the command finds the search already complete and
//! leaves the file alone (or searches again if the file was changed or removed).
//!
//! Layout in the store (see [`crate::store`] for the tables):
//! - the identity: kind `search`, the fingerprint [`Search::fingerprint`] (recipe, query,
//!   seeds, mode, columns, chunk size: everything that decides the rows);
//! - point record 0: `done` = the finished chunk ids (a few ranges), `seeds` = seeds examined,
//!   `passed` = matches recorded;
//! - one row record per finished chunk with matches: `examined` (u64) then per match the seed
//!   (u64) and each output column's value (f64 bits), little-endian. Chunks without matches
//!   need no record: a finished chunk without matches examined all its seeds;
//! - when complete: meta `complete` = 1 and meta `csv` = the CSV's [`Completed`] record, and no
//!   point or row records.
//!
//! A checkpoint is one SQLite transaction, at most once a second (and when the search stops),
//! so a kill loses at most the chunks of the last second; a row record that fails its checksum
//! or does not decode is dropped from the done set and its chunk rerun.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{ChunkRecord, Match, Search, SearchError};
use crate::store::{FileRecord, Identity, PointRecord, RangeSet, Store};
use cavesweep_core::measure::EMPTY_VALUES;

/// What a completed search wrote: its CSV's size and checksum, and what it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Completed {
    /// The CSV's size in bytes, header included.
    pub size: u64,
    /// The CRC-32 of the CSV's bytes.
    pub crc32: u32,
    /// Data rows (the header not counted).
    pub rows: u64,
}

impl Completed {
    /// As a store file record (size and CRC-32).
    pub fn file(&self) -> FileRecord {
        FileRecord {
            size: self.size,
            crc32: self.crc32,
        }
    }
}

/// Minimum time between checkpoints.
const EVERY: Duration = Duration::from_secs(1);

/// The checkpoint folder of a search writing `out`.
pub fn dir_for(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".checkpoint");
    out.with_file_name(name)
}

fn describe(fp: &serde_json::Value) -> String {
    let get = |k: &str| fp.get(k).map(|v| v.to_string()).unwrap_or_default();
    format!(
        "query {}, seeds {}, mode {}",
        get("query"),
        get("seeds"),
        get("mode")
    )
}

/// An open checkpoint folder (locked: one search writes it at a time).
pub struct Checkpoint {
    store: Store,
    /// Finished chunk ids.
    done: RangeSet,
    examined: u64,
    found: u64,
    /// Finished chunks not yet committed.
    pending: Vec<ChunkRecord>,
    last: Instant,
    n_chunks: u64,
    columns: Vec<usize>,
    /// Chunks read back, and those dropped as damaged.
    resumed: u64,
    repaired: u64,
    /// The search was complete when opened: what its CSV was.
    completed: Option<Completed>,
}

impl Checkpoint {
    /// Open (create, or resume from) the checkpoint folder `dir` of `search`. Returns the
    /// finished chunks to hand to [`Search::run`] as `prior`. `force`: replace a checkpoint of
    /// another search.
    pub fn open(
        search: &Search,
        dir: &Path,
        command: &str,
        force: bool,
    ) -> Result<(Checkpoint, Vec<ChunkRecord>), SearchError> {
        let fp = search.fingerprint();
        let id = Identity {
            kind: "search",
            fingerprint: &fp,
            shard: "1/1",
            command,
            outputs: &[],
            describe,
        };
        // The folder's name is derived from --out, not given by the user: never reached
        // through a link someone put there.
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(SearchError::CheckpointLink(dir.to_path_buf()));
        }
        let store = Store::open(dir, &id, force)?;
        let (n_chunks, _) = search.chunks();
        let mut ck = Checkpoint {
            store,
            done: RangeSet::new(),
            examined: 0,
            found: 0,
            pending: Vec::new(),
            last: Instant::now(),
            n_chunks,
            columns: search.columns().iter().map(|m| m.index()).collect(),
            resumed: 0,
            repaired: 0,
            completed: None,
        };
        if ck.store.meta("complete")?.as_deref() == Some("1") {
            // A completion mark that cannot be read is no mark: search again.
            ck.completed = ck
                .store
                .meta("csv")?
                .and_then(|j| serde_json::from_str(&j).ok());
            if ck.completed.is_none() {
                ck.restart()?;
            }
            return Ok((ck, Vec::new()));
        }
        let prior = ck.load(search)?;
        Ok((ck, prior))
    }

    /// The search was already complete when the folder was opened: what its CSV was (check the
    /// file against it, then [`Checkpoint::restart`] if it no longer matches).
    pub fn completed(&self) -> Option<Completed> {
        self.completed
    }

    /// Forget a completed search (its CSV is gone or changed): the next run searches again.
    pub fn restart(&mut self) -> Result<(), SearchError> {
        let b = self.store.begin()?;
        b.clear_records()?;
        b.set_meta("complete", "0")?;
        b.set_meta("csv", "")?;
        b.commit()?;
        self.completed = None;
        self.done = RangeSet::new();
        (self.examined, self.found) = (0, 0);
        self.pending.clear();
        Ok(())
    }

    /// Read the records back, verified.
    fn load(&mut self, search: &Search) -> Result<Vec<ChunkRecord>, SearchError> {
        let Some(rec) = self.store.point(0)? else {
            return Ok(Vec::new());
        };
        let (passed, done) = match rec
            .map_err(|(_, why)| why)
            .and_then(|r| Ok((r.passed, RangeSet::from_ranges(r.done, self.n_chunks)?)))
        {
            Ok(d) => d,
            Err(_) => {
                // The index of finished chunks is unusable: start over (the rows cannot be
                // placed without it).
                self.repaired = 1;
                return self.clear().map(|()| Vec::new());
            }
        };
        let mut with_rows = std::collections::BTreeMap::new();
        let mut damaged = std::collections::BTreeSet::new();
        // Matches the damaged records of finished chunks claim.
        let mut damaged_n = 0u64;
        let width = 8 + 8 * self.columns.len();
        self.store
            .rows::<SearchError>(0..u64::MAX, |chunk, n, data, ok| {
                match (ok && done.contains(chunk))
                    .then(|| self.decode(search, chunk, n, data, width))
                    .flatten()
                {
                    Some(r) => {
                        with_rows.insert(chunk, r);
                    }
                    None => {
                        if done.contains(chunk) {
                            damaged_n = damaged_n.saturating_add(n);
                        }
                        damaged.insert(chunk);
                    }
                }
                Ok(())
            })?;
        // A finished chunk without matches has no row record, so a lost record looks like a
        // chunk without matches. The index counts the matches recorded: if the records found
        // do not add up to it, some were lost, and every finished chunk without a record is
        // run again (never trusted to have had no matches).
        let listed = with_rows
            .values()
            .map(|r: &ChunkRecord| r.matches.len() as u64)
            .sum::<u64>()
            .saturating_add(damaged_n);
        let lost = listed != passed;
        let mut prior = Vec::new();
        let (_, chunk) = search.chunks();
        let total = search.spec().seeds.len();
        for &(a, b) in done.ranges() {
            for id in a..b {
                if damaged.contains(&id) || (lost && !with_rows.contains_key(&id)) {
                    self.repaired += 1;
                    continue;
                }
                let r = with_rows.remove(&id).unwrap_or_else(|| ChunkRecord {
                    id,
                    examined: (total - id * chunk).min(chunk),
                    matches: Vec::new(),
                });
                self.done.insert(id);
                self.examined += r.examined;
                self.found += r.matches.len() as u64;
                prior.push(r);
            }
        }
        self.resumed = prior.len() as u64;
        Ok(prior)
    }

    /// Decode one row record; `None` if it is not what this search writes.
    fn decode(
        &self,
        search: &Search,
        id: u64,
        n: u64,
        data: &[u8],
        width: usize,
    ) -> Option<ChunkRecord> {
        let (_, chunk) = search.chunks();
        let size = (search.spec().seeds.len() - id * chunk).min(chunk);
        if data.len() < 8
            || !(data.len() - 8).is_multiple_of(width)
            || ((data.len() - 8) / width) as u64 != n
        {
            return None;
        }
        let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes"));
        let examined = word(0);
        if examined > size || n > examined {
            return None;
        }
        let mut matches = Vec::with_capacity(n as usize);
        for k in 0..n as usize {
            let at = 8 + k * width;
            let mut values = EMPTY_VALUES;
            for (j, &c) in self.columns.iter().enumerate() {
                values[c] = f64::from_bits(word(at + 8 + 8 * j));
            }
            matches.push(Match {
                seed: word(at),
                values,
            });
        }
        Some(ChunkRecord {
            id,
            examined,
            matches,
        })
    }

    fn encode(&self, r: &ChunkRecord) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + r.matches.len() * (8 + 8 * self.columns.len()));
        out.extend_from_slice(&r.examined.to_le_bytes());
        for m in &r.matches {
            out.extend_from_slice(&m.seed.to_le_bytes());
            for &c in &self.columns {
                out.extend_from_slice(&m.values[c].to_bits().to_le_bytes());
            }
        }
        out
    }

    fn clear(&mut self) -> Result<(), SearchError> {
        let b = self.store.begin()?;
        b.clear_records()?;
        Ok(b.commit()?)
    }

    /// Chunks read back from an earlier run, and chunks whose records were damaged (rerun).
    pub fn resumed(&self) -> (u64, u64) {
        (self.resumed, self.repaired)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// A chunk finished: record it (committed with the next checkpoint, at most a second later).
    pub fn record(&mut self, r: &ChunkRecord) -> Result<(), SearchError> {
        self.pending.push(r.clone());
        if self.last.elapsed() >= EVERY {
            self.save()?;
        }
        Ok(())
    }

    /// Commit every finished chunk not yet committed, in one transaction.
    pub fn save(&mut self) -> Result<(), SearchError> {
        self.last = Instant::now();
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let mut done = self.done.clone();
        let (mut examined, mut found) = (self.examined, self.found);
        let encoded: Vec<(u64, u64, Vec<u8>)> = pending
            .iter()
            .filter(|r| !r.matches.is_empty())
            .map(|r| (r.id, r.matches.len() as u64, self.encode(r)))
            .collect();
        for r in &pending {
            done.insert(r.id);
            examined += r.examined;
            found += r.matches.len() as u64;
        }
        let rec = PointRecord {
            point: 0,
            closed: done.len() == self.n_chunks,
            seeds: examined,
            passed: found,
            done: done.ranges().to_vec(),
            stats: Vec::new(),
        };
        let b = self.store.begin()?;
        for (id, n, data) in &encoded {
            b.put_rows(*id, *n, data)?;
        }
        b.put_point(&rec)?;
        b.commit()?;
        self.done = done;
        self.examined = examined;
        self.found = found;
        Ok(())
    }

    /// The CSV is complete (and durable): replace the records by the completion mark, in one
    /// transaction, and give their space back. Killed before, the rerun rewrites the CSV from
    /// the records; after, it finds the search complete.
    pub fn finish(mut self, csv: Completed) -> Result<(), SearchError> {
        let mark = serde_json::to_string(&csv).expect("serialises");
        let b = self.store.begin()?;
        b.clear_records()?;
        b.set_meta("csv", &mark)?;
        b.set_meta("complete", "1")?;
        b.commit()?;
        Ok(self.store.drop_rows()?)
    }
}
