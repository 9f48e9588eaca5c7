//! A sweep's records in its output folder: which chunks are done, the statistics of every grid
//! point, the `seeds.csv` rows; checkpoints, verified resume, and the final files.
//!
//! Work is handed out in chunk order, so only the few grid points with chunks in flight are
//! *open* (held in memory, rewritten at each checkpoint). A point whose chunks are all done is
//! *closed*: its statistics are written once and dropped from memory. Memory therefore depends
//! on the number of threads, not on the size of the grid or of the seed range.
//!
//! A shard owns every N-th chunk id; within a grid point, its chunks are numbered by *owned
//! index* j (the j-th chunk of the point this shard owns), so a point's done set stays a few
//! ranges in every shard.
//!
//! Resume verifies before it trusts: every record is checksummed and checked against the plan
//! (shape, seed counts, pass counts, histogram totals); a damaged point is recomputed, damaged or
//! missing seed rows are regenerated, and a folder marked complete is accepted only if its final
//! files still match their recorded size and CRC-32, and rewritten from the store otherwise.
//!
//! This file is the run driver (open the folder, hand out chunks, take in their results); the
//! other jobs have a file each: `resume.rs` (verifying what the store holds), `checkpoint.rs`
//! (writing what changed, on a thread of its own), `finish.rs` (the final files), `absorb.rs`
//! (the merge's side: other shards' records taken in) and `read.rs` (the tables of a folder
//! still running, for a report).

use std::collections::BTreeMap;
use std::ops::{ControlFlow, Range};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::engine::{self, ChunkResult, ChunkStats, Closed, Mode, Worker};
use super::output;
use super::stats::PointStats;
use super::{Outcome, PerSeed, Plan, RunOptions, Shard, SweepError, SweepSummary};
use crate::failpoint;
use crate::fanout;
use crate::store::files::{self, FileRecord};
use crate::store::{Identity, PointRecord, RangeSet, SideWriter, Store};

mod absorb;
mod checkpoint;
mod finish;
mod read;
mod resume;

use crate::store::parquet::Batch;
use checkpoint::Background;
use finish::{SeedsStream, Stream};
pub use read::{Provisional, provisional};

/// The final files a sweep folder can hold: each table as CSV and as Parquet (per
/// `--format`; `seeds.*` only with `--per-seed all|kept`), and the manifest. [`Plan::outputs`]
/// says which ones a given sweep writes.
pub const OUTPUTS: [&str; 9] = [
    "summary.csv",
    "trajectory.csv",
    "components.csv",
    "seeds.csv",
    "summary.parquet",
    "trajectory.parquet",
    "components.parquet",
    "seeds.parquet",
    "manifest.json",
];
/// The tables of a sweep folder, by stem, in the order their files are written.
pub const TABLES: [&str; 4] = ["summary", "trajectory", "components", "seeds"];
/// Minimum time between checkpoints.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
/// Grid points formatted per batch by the final assembly.
const FINISH_BATCH: u64 = 4096;
/// Bytes waiting in memory (seed rows and closed points' records) that force an early
/// checkpoint. Why a bound at all: a small-cave grid closes ~50,000 points a second, ~1.2 KB of
/// record each, so a one-second checkpoint interval alone let ~100 MB wait (and as much again in
/// the checkpoint being written), breaking the 256 MB cap on a 100,000-point grid.
const FLUSH_BYTES: usize = 8 << 20;
/// Bytes waiting beyond which the collector waits for the checkpoint in flight instead of
/// gathering more, so memory stays bounded however slow the disk (a test pauses the checkpoint
/// thread and watches the peak RSS). Bytes are counted by capacity, what they really hold.
const BACKPRESSURE_BYTES: usize = 4 * FLUSH_BYTES;

/// Results per worker that may wait for the collector when chunks carry typed rows for
/// `seeds.parquet` ([`fanout::run_with_backlog`]): each then holds its rows twice, ~3 MB for a
/// chunk of 16,384 seeds, so the default backlog of 16 would let a collector that falls behind
/// (it also encodes the Parquet row groups) hold ~100 MB of them.
const TYPED_BACKLOG: usize = 4;

/// Chunks of at most this many seeds are handed to workers in groups ([`group_small`]): a
/// 10,000-point grid of 100 seeds per point shares its points' last lane batches too.
const SMALL_CHUNK: u64 = 1024;
/// A group takes chunks until it has this many seeds (or [`GROUP_CHUNKS`] chunks): a few ms
/// of work, so a Ctrl-C still stops within a moment and the queue's lock is taken rarely.
const GROUP_SEEDS: u64 = 512;
const GROUP_CHUNKS: usize = 64;

/// Hand out `ids` in groups of consecutive small chunks (a grid of many points with a few
/// seeds each): one lock of the job queue per group instead of per chunk, and a group's points
/// can share lane batches ([`engine::run_chunks`]). Bigger chunks go alone. Lazy, like `ids`.
fn group_small<'a>(
    plan: &'a Plan,
    ids: impl Iterator<Item = u64> + Send + 'a,
) -> impl Iterator<Item = Vec<u64>> + Send + 'a {
    let small = |id: u64| plan.chunk(id).1.end - plan.chunk(id).1.start <= SMALL_CHUNK;
    let mut ids = ids.peekable();
    std::iter::from_fn(move || {
        let first = ids.next()?;
        let mut group = vec![first];
        if small(first) {
            let mut seeds = plan.chunk(first).1.end - plan.chunk(first).1.start;
            while seeds < GROUP_SEEDS && group.len() < GROUP_CHUNKS {
                match ids.next_if(|&id| small(id)) {
                    Some(id) => {
                        let r = plan.chunk(id).1;
                        seeds += r.end - r.start;
                        group.push(id);
                    }
                    None => break,
                }
            }
        }
        Some(group)
    })
}

/// `name` in `dir` could not be written.
fn write_err(dir: &Path, name: &str, source: std::io::Error) -> SweepError {
    SweepError::Write {
        path: dir.join(name),
        source,
    }
}

/// A grid point with some, not all, of its chunks done.
struct OpenPoint {
    stats: PointStats,
    /// Owned indices done.
    done: RangeSet,
    /// Owned chunks still to do.
    remaining: u64,
    /// Changed since the last checkpoint.
    dirty: bool,
}

/// Geometry of one shard's share of a plan.
#[derive(Clone, Copy)]
pub(super) struct Share<'p> {
    pub plan: &'p Plan,
    pub shard: Shard,
}

impl Share<'_> {
    /// Chunks of `point` this shard owns.
    fn owned(&self, point: usize) -> u64 {
        let r = self.plan.point_chunks(point);
        self.shard.owned_in(r.start, r.end)
    }
    /// The chunk id of owned index `j` of `point`.
    fn id(&self, point: usize, j: u64) -> u64 {
        let first = self
            .shard
            .first_owned(self.plan.point_chunks(point).start)
            .expect("an owned chunk exists");
        first + j * self.shard.n as u64
    }
    /// The owned index of chunk `id` (of its point).
    fn index(&self, point: usize, id: u64) -> u64 {
        let first = self
            .shard
            .first_owned(self.plan.point_chunks(point).start)
            .expect("an owned chunk exists");
        (id - first) / self.shard.n as u64
    }
    /// Seeds in the owned chunks `js` of `point`.
    fn seeds_in(&self, point: usize, js: Range<u64>) -> u64 {
        if js.is_empty() {
            return 0;
        }
        let n = js.end - js.start;
        let last = self.plan.point_chunks(point).end - 1;
        // Only a point's last chunk can be short. (Counted as n - 1 whole chunks plus the short
        // one: n whole chunks of a range of 2^64 - 1 seeds do not fit in a u64.)
        if self.id(point, js.end - 1) == last {
            let short = self.plan.chunk_seeds(self.plan.chunks_per_point - 1);
            (n - 1) * self.plan.chunk + (short.end - short.start)
        } else {
            n * self.plan.chunk
        }
    }
    /// Seeds this shard runs at `point`.
    pub fn point_seeds(&self, point: usize) -> u64 {
        self.seeds_in(point, 0..self.owned(point))
    }
}

/// A sweep's open output folder. See the module docs.
pub struct SweepState<'p> {
    share: Share<'p>,
    plan: &'p Plan,
    store: Store,
    /// Per point: complete for this shard (closed, or owning no chunk).
    complete: Vec<bool>,
    n_complete: usize,
    open: BTreeMap<usize, OpenPoint>,
    pending_closed: Vec<PointRecord>,
    pending_rows: Vec<(u64, u64, Vec<u8>)>,
    /// Bytes of `pending_rows` and `pending_closed`.
    pending_bytes: usize,
    chunks_done: u64,
    chunks_total: u64,
    seeds_done: u64,
    seeds_total: u64,
    passed: u64,
    last_save: Option<Instant>,
    dirty: bool,
    /// Points whose seed rows must be regenerated before `seeds.csv` can be written.
    rows_to_redo: Vec<usize>,
    repairs: Vec<String>,
    /// Complete when opened, with every final file matching its record.
    verified: bool,
    /// Final files found intact on a complete folder being finished again (not rewritten).
    intact: BTreeMap<&'static str, FileRecord>,
    /// Worker threads (also used to format the final files).
    threads: usize,
    /// The store was created by this run (so every point it closes, it closes in this run).
    fresh: bool,
    /// The final files being written as points close (fresh folders only).
    stream: Option<Stream>,
    /// `seeds.parquet` being written as chunks finish, from the workers' typed rows (fresh
    /// folders only).
    seeds_stream: Option<SeedsStream<'p>>,
    /// The checkpoint thread, while [`SweepState::run`] runs its chunks.
    background: Option<Background>,
}

impl<'p> SweepState<'p> {
    /// Open (lock, create or verify) the folder `dir` for `plan`.
    pub fn open(
        plan: &'p Plan,
        dir: &Path,
        opts: &RunOptions,
    ) -> Result<SweepState<'p>, SweepError> {
        let fp = plan.fingerprint();
        let shard = opts.shard.to_string();
        let id = Identity {
            kind: "sweep",
            fingerprint: &fp,
            shard: &shard,
            command: opts.command,
            outputs: &OUTPUTS,
            describe: super::describe_fingerprint,
        };
        let store = Store::open(dir, &id, opts.force)?;
        let share = Share {
            plan,
            shard: opts.shard,
        };
        let n = plan.n_points();
        let mut st = SweepState {
            share,
            plan,
            store,
            complete: vec![false; n],
            n_complete: 0,
            open: BTreeMap::new(),
            pending_closed: Vec::new(),
            pending_rows: Vec::new(),
            pending_bytes: 0,
            chunks_done: 0,
            chunks_total: 0,
            seeds_done: 0,
            seeds_total: 0,
            passed: 0,
            last_save: None,
            dirty: false,
            rows_to_redo: Vec::new(),
            repairs: Vec::new(),
            verified: false,
            intact: BTreeMap::new(),
            threads: opts.threads.max(1),
            fresh: false,
            stream: None,
            seeds_stream: None,
            background: None,
        };
        for p in 0..n {
            let m = share.owned(p);
            st.chunks_total += m;
            st.seeds_total += share.point_seeds(p);
            if m == 0 {
                st.complete[p] = true;
                st.n_complete += 1;
            }
        }
        st.fresh = st.store.is_fresh();
        if !st.fresh {
            st.load()?;
        }
        Ok(st)
    }

    fn summary(&self, outcome: Outcome, before: u64, start: Instant) -> SweepSummary {
        SweepSummary {
            outcome,
            seeds_run: self.seeds_done - before,
            seeds_done: self.seeds_done,
            seeds_total: self.seeds_total,
            passed: self.passed,
            elapsed: start.elapsed(),
            verified: self.verified,
            repairs: self.repairs.clone(),
        }
    }

    /// Do the rest of the work, then write the final files.
    pub fn run(
        mut self,
        opts: &RunOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<SweepSummary, SweepError> {
        let start = Instant::now();
        let before = self.seeds_done;
        if self.verified {
            return Ok(self.summary(Outcome::Complete, before, start));
        }
        progress(self.seeds_done, self.seeds_total);
        let plan = self.plan;
        let stop = opts.stop;
        if !self.rows_to_redo.is_empty() {
            self.redo_rows(opts.threads, stop)?;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                self.checkpoint(true)?;
                return Ok(self.summary(Outcome::Interrupted, before, start));
            }
        }
        if !self.is_complete() {
            let jobs = group_small(plan, self.pending_jobs());
            // A fresh folder's final files are written as its points close (see [`Stream`]).
            if self.fresh && self.stream.is_none() {
                self.stream = Some(self.start_stream()?);
                if plan.spec.per_seed != PerSeed::None && plan.spec.format.parquet() {
                    self.seeds_stream = Some(self.start_seeds_stream()?);
                }
            }
            let (share, rows) = (self.share, self.stream.is_some());
            let pool = self.seeds_stream.as_ref().map(|s| s.pool.clone());
            let typed = pool.is_some();
            self.background = Some(Background::start(&self.store)?);
            let ran = fanout::run_with_backlog(
                opts.threads,
                // A chunk's rows twice (CSV and typed) are ~3 MB: 4 waiting per worker at most.
                if typed {
                    TYPED_BACKLOG
                } else {
                    fanout::BACKLOG_PER_THREAD
                },
                stop,
                jobs,
                || match &pool {
                    Some(pool) => Worker::with_typed_rows(plan, pool.clone()),
                    None => Worker::default(),
                },
                |w, ids: Vec<u64>| {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return None;
                    }
                    let mode = |id| {
                        if share.owned(plan.chunk(id).0) == 1 {
                            Mode::Whole { rows }
                        } else {
                            Mode::Part
                        }
                    };
                    let done = engine::run_chunks(plan, &ids, w, stop, mode);
                    (!done.is_empty()).then_some(done)
                },
                |done| {
                    for r in done {
                        self.add(r)?;
                    }
                    progress(self.seeds_done, self.seeds_total);
                    Ok::<_, SweepError>(ControlFlow::Continue(()))
                },
            );
            let stopped = self.background.take().map_or(Ok(()), Background::stop);
            ran?;
            stopped?;
        }
        if self.is_complete() {
            self.finish()?;
            Ok(self.summary(Outcome::Complete, before, start))
        } else {
            self.checkpoint(true)?;
            Ok(self.summary(Outcome::Interrupted, before, start))
        }
    }

    /// The chunk ids still to run, in order (lazily: a seed range of 2^64 has 2^50 chunks).
    fn pending_jobs(&self) -> impl Iterator<Item = u64> + Send + use<'p> {
        let share = self.share;
        let n = self.plan.n_points();
        let complete = self.complete.clone();
        let open: BTreeMap<usize, RangeSet> = self
            .open
            .iter()
            .map(|(&p, o)| (p, o.done.clone()))
            .collect();
        let mut point = 0usize;
        let mut gaps: Vec<Range<u64>> = Vec::new();
        let mut gi = 0usize;
        std::iter::from_fn(move || {
            loop {
                if let Some(g) = gaps.get_mut(gi) {
                    if let Some(j) = g.next() {
                        return Some(share.id(point - 1, j));
                    }
                    gi += 1;
                    continue;
                }
                // Next point with work.
                while point < n && complete[point] {
                    point += 1;
                }
                if point >= n {
                    return None;
                }
                let m = share.owned(point);
                gaps = match open.get(&point) {
                    Some(done) => done.gaps(0..m).collect(),
                    None => std::iter::once(0..m).collect(),
                };
                gi = 0;
                point += 1;
            }
        })
    }

    /// Take a finished chunk: statistics merged into its point (closing it when it was the last),
    /// rows queued, checkpoint if due.
    fn add(&mut self, r: ChunkResult) -> Result<(), SweepError> {
        let p = r.point;
        let share = self.share;
        let j = share.index(p, r.id);
        let stats = match r.stats.expect("a sweep chunk collects statistics") {
            // The common case in grids: one chunk makes the whole point, closed by its worker.
            ChunkStats::Whole(c) => {
                self.passed += c.passed;
                self.seeds_done += c.seeds;
                self.chunks_done += 1;
                self.close_encoded(p, c)?;
                return self.chunk_rows(r.id, r.n_rows, r.rows, r.typed);
            }
            ChunkStats::Part(stats) => stats,
        };
        let seeds = stats.seeds;
        self.passed += stats.passed;
        self.seeds_done += seeds;
        self.chunks_done += 1;
        let closed = match self.open.get_mut(&p) {
            None if share.owned(p) == 1 => Some(stats),
            None => {
                let mut done = RangeSet::new();
                done.insert(j);
                self.open.insert(
                    p,
                    OpenPoint {
                        stats,
                        done,
                        remaining: share.owned(p) - 1,
                        dirty: true,
                    },
                );
                None
            }
            Some(entry) => {
                if !entry.done.insert(j) {
                    return Err(SweepError::Internal(format!("chunk {} done twice", r.id)));
                }
                entry.stats.merge(&stats);
                entry.remaining -= 1;
                entry.dirty = true;
                (entry.remaining == 0).then(|| self.open.remove(&p).expect("present").stats)
            }
        };
        if let Some(stats) = closed {
            self.close_point(p, &stats)?;
        }
        self.chunk_rows(r.id, r.n_rows, r.rows, r.typed)
    }

    /// Queue a finished chunk's seed rows; checkpoint if due.
    fn chunk_rows(
        &mut self,
        id: u64,
        n: u64,
        rows: Vec<u8>,
        typed: Option<Batch>,
    ) -> Result<(), SweepError> {
        if let Some(s) = &mut self.seeds_stream
            && let Err(e) = s.put(id, n, typed)
        {
            return Err(self.io_err("seeds.parquet", e));
        }
        if n > 0 {
            self.pending_bytes += rows.capacity();
            self.pending_rows.push((id, n, rows));
        }
        self.dirty = true;
        self.checkpoint(false)
    }

    fn io_err(&self, name: &str, e: std::io::Error) -> SweepError {
        write_err(self.store.dir(), name, e)
    }

    // ---- merge: records taken from finished shard folders ----------------------------------
}
