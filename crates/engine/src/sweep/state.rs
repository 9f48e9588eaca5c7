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

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::{ControlFlow, Range};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::engine::{self, ChunkResult, ChunkStats, Closed, Mode, Worker};
use super::output;
use super::stats::PointStats;
use super::{Outcome, PerSeed, Plan, Report, RunOptions, Shard, SweepError};
use crate::failpoint;
use crate::fanout;
use crate::store::files::{self, FileRecord, Output};
use crate::store::{Identity, PointRecord, RangeSet, SideWriter, Store};

/// The final files of a sweep folder (`seeds.csv` only with `--per-seed all|kept`).
pub const OUTPUTS: [&str; 5] = [
    "summary.csv",
    "trajectory.csv",
    "components.csv",
    "seeds.csv",
    "manifest.json",
];
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

fn store_err(msg: impl std::fmt::Display) -> SweepError {
    SweepError::Store(msg.to_string())
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
        let full = (js.end - js.start) * self.plan.chunk;
        let last = self.plan.point_chunks(point).end - 1;
        // Only a point's last chunk can be short.
        if self.id(point, js.end - 1) == last {
            let short = self.plan.chunk_seeds(self.plan.chunks_per_point - 1);
            full - (self.plan.chunk - (short.end - short.start))
        } else {
            full
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
    /// The checkpoint thread, while [`SweepState::run`] runs its chunks.
    background: Option<Background>,
}

/// Checkpoints written on a thread of their own while a sweep runs, through a second connection
/// to the store. Why: a checkpoint of a 100,000-point grid stores ~20,000 closed points at once
/// (tens of MB, tens to hundreds of ms with its fsyncs); done on the collector thread, it left
/// the collector unable to take results, and the workers, their backlog full, waiting for it.
/// At most one checkpoint is in flight: while it is written, the next one waits (the collector
/// keeps gathering what changed) instead of blocking anybody.
struct Background {
    jobs: Option<mpsc::Sender<CheckpointJob>>,
    results: mpsc::Receiver<Result<(), SweepError>>,
    busy: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Everything one checkpoint writes: consistent as of the moment the collector made it.
struct CheckpointJob {
    points: Vec<PointRecord>,
    rows: Vec<(u64, u64, Vec<u8>)>,
    manifest: Vec<u8>,
}

impl Background {
    fn start(store: &Store) -> Result<Background, SweepError> {
        let mut side = store.side_writer()?;
        let dir = store.dir().to_path_buf();
        let (jobs, rx) = mpsc::channel::<CheckpointJob>();
        let (tx, results) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("cavesweep-checkpoint".into())
            .spawn(move || {
                for job in rx {
                    let r = write_checkpoint(&mut side, &dir, &job);
                    let failed = r.is_err();
                    if tx.send(r).is_err() || failed {
                        break;
                    }
                }
            })
            .map_err(|e| store_err(format!("cannot start the checkpoint thread: {e}")))?;
        Ok(Background {
            jobs: Some(jobs),
            results,
            busy: false,
            thread: Some(thread),
        })
    }

    /// Whether a checkpoint is still being written; the error of one that failed.
    fn poll(&mut self) -> Result<bool, SweepError> {
        if !self.busy {
            return Ok(false);
        }
        match self.results.try_recv() {
            Ok(r) => {
                self.busy = false;
                r.map(|()| false)
            }
            Err(mpsc::TryRecvError::Empty) => Ok(true),
            Err(mpsc::TryRecvError::Disconnected) => {
                Err(store_err("the checkpoint thread stopped unexpectedly"))
            }
        }
    }

    fn send(&mut self, job: CheckpointJob) -> Result<(), SweepError> {
        let sent = self.jobs.as_ref().map(|j| j.send(job).is_ok());
        if sent != Some(true) {
            return Err(store_err("the checkpoint thread stopped unexpectedly"));
        }
        self.busy = true;
        Ok(())
    }

    /// Wait for the checkpoint in flight and end the thread; its error, if it failed.
    fn stop(mut self) -> Result<(), SweepError> {
        drop(self.jobs.take());
        let r = if self.busy {
            self.results
                .recv()
                .unwrap_or_else(|_| Err(store_err("the checkpoint thread stopped unexpectedly")))
        } else {
            Ok(())
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        r
    }
}

/// One checkpoint's transaction, then the manifest that follows it (see
/// [`SweepState::checkpoint`]).
fn write_checkpoint(
    side: &mut SideWriter,
    dir: &Path,
    job: &CheckpointJob,
) -> Result<(), SweepError> {
    let batch = side.begin()?;
    for rec in &job.points {
        batch.put_point(rec)?;
    }
    for (id, n, data) in &job.rows {
        batch.put_rows(*id, *n, data)?;
    }
    batch.commit()?;
    failpoint::kill("checkpoint");
    files::write_output(dir, "manifest.json", |w| w.write_all(&job.manifest))
        .map(drop)
        .map_err(|e| {
            store_err(format!(
                "cannot write {}: {e}",
                dir.join("manifest.json").display()
            ))
        })
}

/// The three per-point final files of a fresh sweep, written while it runs: each closed point's
/// rows (formatted by its worker) are appended in point order, the few that close early waiting
/// in memory for the points before them (work is handed out in point order, so only points in
/// flight are ever missing). When every point is written, [`SweepState::finish`] just makes the
/// files durable and renames them into place, instead of reading every record back from the
/// store and formatting it again (what a resumed sweep does). An interrupted run leaves only
/// temporaries, removed by the next run.
struct Stream {
    outs: [Output; 3],
    /// The next point to write.
    next: usize,
    /// Rows of closed points after `next`.
    waiting: BTreeMap<usize, [Vec<u8>; 3]>,
}

impl Stream {
    const NAMES: [&str; 3] = ["summary.csv", "trajectory.csv", "components.csv"];

    /// Take point `p`'s rows and write every point now in order.
    fn put(
        &mut self,
        share: Share,
        p: usize,
        rows: [Vec<u8>; 3],
    ) -> Result<(), (&'static str, std::io::Error)> {
        if p == self.next && share.owned(p) > 0 {
            // The usual case: the next point in order, written without waiting in the map.
            self.write(&rows)?;
        } else {
            self.waiting.insert(p, rows);
        }
        self.advance(share)
    }

    fn write(&mut self, rows: &[Vec<u8>; 3]) -> Result<(), (&'static str, std::io::Error)> {
        for ((out, name), bytes) in self.outs.iter_mut().zip(Self::NAMES).zip(rows) {
            out.write_all(bytes).map_err(|e| (name, e))?;
        }
        self.next += 1;
        Ok(())
    }

    fn advance(&mut self, share: Share) -> Result<(), (&'static str, std::io::Error)> {
        let plan = share.plan;
        while self.next < plan.n_points() {
            let p = self.next;
            let rows = match self.waiting.remove(&p) {
                Some(rows) => rows,
                // A point this shard owns no chunk of is written empty, as `finish` would.
                None if share.owned(p) == 0 => {
                    output::point_rows(plan, &plan.params(p), &PointStats::new(plan.shape(p)))
                }
                None => break,
            };
            self.write(&rows)?;
        }
        Ok(())
    }

    /// Every point written.
    fn is_whole(&self, plan: &Plan) -> bool {
        self.next == plan.n_points() && self.waiting.is_empty()
    }
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

    /// Read and check every point record, then the seed rows and the final files.
    fn load(&mut self) -> Result<(), SweepError> {
        let mut damaged: Vec<(u64, String)> = Vec::new();
        let mut records = Vec::new();
        self.store.points(|r| -> Result<(), SweepError> {
            match r {
                Ok(rec) => records.push(rec),
                Err(bad) => damaged.push(bad),
            }
            Ok(())
        })?;
        // Decode one at a time (a record is dropped as soon as it is taken in).
        for rec in records {
            let p = rec.point;
            if let Err(why) = self.take_record(rec) {
                damaged.push((p, why));
            }
        }
        let was_complete = self.store.meta("complete")?.as_deref() == Some("1");
        if !damaged.is_empty() {
            let batch = self.store.begin()?;
            for (p, why) in &damaged {
                batch.delete_point(*p)?;
                if (*p as usize) < self.plan.n_points() {
                    batch.delete_rows(self.plan.point_chunks(*p as usize))?;
                    self.repairs.push(format!(
                        "grid point {p} ({}) had a damaged record ({why}): recomputing it",
                        self.plan.params(*p as usize).join(", ")
                    ));
                } else {
                    self.repairs.push(format!(
                        "removed a record of grid point {p}, which this sweep does not have"
                    ));
                }
            }
            batch.set_meta("complete", "0")?;
            batch.commit()?;
            return self.check_rows();
        }
        if was_complete {
            let recorded: BTreeMap<String, FileRecord> = self
                .store
                .meta("files")?
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default();
            let mut stale = Vec::new();
            for name in self.outputs() {
                let ok = match recorded.get(name) {
                    Some(rec) => files::matches(self.store.dir(), name, rec).map_err(|e| {
                        store_err(format!(
                            "cannot read {}: {e}",
                            self.store.dir().join(name).display()
                        ))
                    })?,
                    None => false,
                };
                if ok {
                    self.intact.insert(name, recorded[name]);
                } else {
                    stale.push(name);
                }
            }
            let shard_rows_ok = self.plan.spec.per_seed == PerSeed::None
                || self.share.shard == Shard::WHOLE
                || self.shard_rows_intact()?;
            if stale.is_empty() && shard_rows_ok {
                self.verified = true;
                if self.share.shard == Shard::WHOLE && self.store.has_rows()? {
                    // Killed after recording the files, before dropping the rows they hold.
                    self.store.drop_rows()?;
                }
                return Ok(());
            }
            if !stale.is_empty() {
                self.repairs.push(format!(
                    "{} did not match what was written (missing or changed): rewriting from the store",
                    stale.join(", ")
                ));
            }
            let batch = self.store.begin()?;
            batch.set_meta("complete", "0")?;
            batch.commit()?;
            if self.intact.contains_key("seeds.csv") && self.share.shard == Shard::WHOLE {
                // A whole sweep needs its rows only to rewrite seeds.csv. A shard keeps them
                // for `merge`, so damaged or missing ones are regenerated even when its own
                // seeds.csv is intact.
                return Ok(());
            }
        }
        self.check_rows()
    }

    /// The final files this sweep writes.
    fn outputs(&self) -> Vec<&'static str> {
        OUTPUTS
            .iter()
            .copied()
            .filter(|&n| n != "seeds.csv" || self.plan.spec.per_seed != PerSeed::None)
            .collect()
    }

    /// Take in one stored point record, or say why it cannot be trusted.
    fn take_record(&mut self, rec: PointRecord) -> Result<(), String> {
        let p = usize::try_from(rec.point)
            .ok()
            .filter(|&p| p < self.plan.n_points())
            .ok_or_else(|| "no such grid point".to_string())?;
        let m = self.share.owned(p);
        if m == 0 {
            return Err("a grid point this shard does not run".into());
        }
        if self.complete[p] || self.open.contains_key(&p) {
            return Err("a second record of the point".into());
        }
        let done = if rec.closed {
            if !rec.done.is_empty() {
                return Err("a closed point with a done list".into());
            }
            None
        } else {
            let done = RangeSet::from_ranges(rec.done, m)?;
            if done.is_empty() || done.len() >= m {
                return Err(format!(
                    "an open point with {} of its {m} chunks done",
                    done.len()
                ));
            }
            Some(done)
        };
        let seeds = match &done {
            None => self.share.point_seeds(p),
            Some(d) => d
                .ranges()
                .iter()
                .map(|&(a, b)| self.share.seeds_in(p, a..b))
                .sum(),
        };
        if rec.seeds != seeds {
            return Err(format!(
                "it counts {} caves, its done chunks hold {seeds}",
                rec.seeds
            ));
        }
        let stats = PointStats::decode(&rec.stats, self.plan.shape(p), seeds)?;
        if stats.passed != rec.passed {
            return Err("its pass count disagrees with its statistics".into());
        }
        self.seeds_done += seeds;
        self.passed += stats.passed;
        match done {
            None => {
                self.complete[p] = true;
                self.n_complete += 1;
                self.chunks_done += m;
            }
            Some(done) => {
                self.chunks_done += done.len();
                self.open.insert(
                    p,
                    OpenPoint {
                        stats,
                        remaining: m - done.len(),
                        done,
                        dirty: false,
                    },
                );
            }
        }
        Ok(())
    }

    /// The seed rows a point's done chunks must hold, per `--per-seed`.
    fn expected_rows(&self, p: usize) -> Option<u64> {
        match self.plan.spec.per_seed {
            PerSeed::None => None,
            PerSeed::All => Some(self.point_seeds_done(p)),
            PerSeed::Kept => Some(self.point_passed(p)),
        }
    }

    fn point_seeds_done(&self, p: usize) -> u64 {
        match self.open.get(&p) {
            Some(o) => o.stats.seeds,
            None if self.complete[p] && self.share.owned(p) > 0 => self.share.point_seeds(p),
            None => 0,
        }
    }

    fn point_passed(&self, p: usize) -> u64 {
        match self.open.get(&p) {
            Some(o) => o.stats.passed,
            None if self.complete[p] && self.share.owned(p) > 0 => self
                .store
                .point(p as u64)
                .ok()
                .flatten()
                .and_then(|r| r.ok())
                .map_or(u64::MAX, |r| r.passed),
            None => 0,
        }
    }

    /// Compare the stored seed rows with what each point's done chunks must hold; points whose
    /// rows disagree (missing, extra, miscounted) get their rows regenerated.
    fn check_rows(&mut self) -> Result<(), SweepError> {
        if self.plan.spec.per_seed == PerSeed::None {
            return Ok(());
        }
        let cpp = self.plan.chunks_per_point;
        let mut sums: BTreeMap<usize, u64> = BTreeMap::new();
        let mut stray = false;
        self.store.row_counts(|chunk, n| {
            let p = (chunk / cpp) as usize;
            if p < self.plan.n_points() {
                *sums.entry(p).or_insert(0) += n;
            } else {
                stray = true;
            }
        })?;
        let mut redo: Vec<usize> = Vec::new();
        for p in 0..self.plan.n_points() {
            let have = sums.get(&p).copied().unwrap_or(0);
            let want = self.expected_rows(p).unwrap_or(0);
            if have != want {
                redo.push(p);
            }
        }
        if self.share.shard != Shard::WHOLE {
            // A shard's rows go to `merge` as stored, so a record that fails its checksum is
            // regenerated here (a whole sweep regenerates it while writing seeds.csv).
            let mut bad: Vec<usize> = Vec::new();
            self.store
                .rows(0..u64::MAX, |chunk, _, _, ok| -> Result<(), SweepError> {
                    let p = (chunk / cpp) as usize;
                    if !ok && p < self.plan.n_points() && bad.last() != Some(&p) {
                        bad.push(p);
                    }
                    Ok(())
                })?;
            redo.extend(bad);
            redo.sort_unstable();
            redo.dedup();
        }
        if stray {
            let batch = self.store.begin()?;
            batch.delete_rows(self.plan.n_chunks()..u64::MAX)?;
            batch.commit()?;
        }
        if !redo.is_empty() && self.repairs.is_empty() {
            self.repairs.push(format!(
                "the seed rows of {} grid point(s) were missing or damaged: regenerating them",
                redo.len()
            ));
        }
        self.rows_to_redo = redo;
        Ok(())
    }

    /// A complete shard keeps its rows for `merge`: are they all readable?
    fn shard_rows_intact(&mut self) -> Result<bool, SweepError> {
        // Checksums and counts per point, as on resume.
        let before = self.repairs.len();
        self.check_rows()?;
        let intact = self.rows_to_redo.is_empty();
        self.repairs.truncate(before);
        self.rows_to_redo.clear();
        Ok(intact)
    }

    fn is_complete(&self) -> bool {
        self.n_complete == self.plan.n_points()
    }

    fn report(&self, outcome: Outcome, before: u64, start: Instant) -> Report {
        Report {
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
    ) -> Result<Report, SweepError> {
        let start = Instant::now();
        let before = self.seeds_done;
        if self.verified {
            return Ok(self.report(Outcome::Complete, before, start));
        }
        progress(self.seeds_done, self.seeds_total);
        let plan = self.plan;
        let stop = opts.stop;
        if !self.rows_to_redo.is_empty() {
            self.redo_rows(opts.threads, stop)?;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                self.checkpoint(true)?;
                return Ok(self.report(Outcome::Interrupted, before, start));
            }
        }
        if !self.is_complete() {
            let jobs = group_small(plan, self.pending_jobs());
            // A fresh folder's final files are written as its points close (see [`Stream`]).
            if self.fresh && self.stream.is_none() {
                self.stream = Some(self.start_stream()?);
            }
            let (share, rows) = (self.share, self.stream.is_some());
            self.background = Some(Background::start(&self.store)?);
            let ran = fanout::run(
                opts.threads,
                stop,
                jobs,
                Worker::default,
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
            Ok(self.report(Outcome::Complete, before, start))
        } else {
            self.checkpoint(true)?;
            Ok(self.report(Outcome::Interrupted, before, start))
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
                return self.chunk_rows(r.id, r.n_rows, r.rows);
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
                    return Err(store_err(format!(
                        "internal error: chunk {} done twice",
                        r.id
                    )));
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
        self.chunk_rows(r.id, r.n_rows, r.rows)
    }

    /// Queue a finished chunk's seed rows; checkpoint if due.
    fn chunk_rows(&mut self, id: u64, n: u64, rows: Vec<u8>) -> Result<(), SweepError> {
        if n > 0 {
            self.pending_bytes += rows.capacity();
            self.pending_rows.push((id, n, rows));
        }
        self.dirty = true;
        self.checkpoint(false)
    }

    /// Persist what changed since the last checkpoint, in one transaction. Unless `now`, only when
    /// a second has passed (or many rows are waiting) since the last one.
    fn checkpoint(&mut self, now: bool) -> Result<(), SweepError> {
        if !self.dirty {
            return Ok(());
        }
        let due = self
            .last_save
            .is_none_or(|t| t.elapsed() >= CHECKPOINT_EVERY)
            || self.pending_bytes >= FLUSH_BYTES;
        if !now && !due {
            return Ok(());
        }
        if let Some(mut bg) = self.background.take() {
            let r = self.checkpoint_in_background(&mut bg, now);
            self.background = Some(bg);
            return r;
        }
        let batch = self.store.begin()?;
        for rec in &self.pending_closed {
            batch.put_point(rec)?;
        }
        for rec in Self::dirty_open_records(&self.open) {
            batch.put_point(&rec)?;
        }
        for (id, n, data) in &self.pending_rows {
            batch.put_rows(*id, *n, data)?;
        }
        batch.commit()?;
        failpoint::kill("checkpoint");
        self.pending_closed.clear();
        self.pending_rows.clear();
        self.pending_bytes = 0;
        self.open.values_mut().for_each(|o| o.dirty = false);
        self.dirty = false;
        self.last_save = Some(Instant::now());
        // The manifest's progress block follows the checkpoint, so `cat DIR/manifest.json`
        // tells how far a running or interrupted sweep got.
        let manifest = self.manifest(false)?;
        files::write_output(self.store.dir(), "manifest.json", |w| {
            w.write_all(&manifest)
        })
        .map_err(|e| self.io_err("manifest.json", e))?;
        Ok(())
    }

    /// The records of the open points changed since the last checkpoint.
    fn dirty_open_records(
        open: &BTreeMap<usize, OpenPoint>,
    ) -> impl Iterator<Item = PointRecord> + '_ {
        open.iter()
            .filter(|(_, o)| o.dirty)
            .map(|(&p, o)| PointRecord {
                point: p as u64,
                closed: false,
                seeds: o.stats.seeds,
                passed: o.stats.passed,
                done: o.done.ranges().to_vec(),
                stats: o.stats.encode(),
            })
    }

    /// [`SweepState::checkpoint`] through the checkpoint thread: hand it what changed, unless
    /// the previous checkpoint is still being written (then later, or, when `now`, after it).
    fn checkpoint_in_background(
        &mut self,
        bg: &mut Background,
        now: bool,
    ) -> Result<(), SweepError> {
        if bg.poll()? {
            if !now && self.pending_bytes < BACKPRESSURE_BYTES {
                return Ok(());
            }
            bg.busy = true;
            let r = bg.results.recv();
            bg.busy = false;
            r.unwrap_or_else(|_| Err(store_err("the checkpoint thread stopped unexpectedly")))?;
        }
        let mut points = std::mem::take(&mut self.pending_closed);
        points.extend(Self::dirty_open_records(&self.open));
        let rows = std::mem::take(&mut self.pending_rows);
        self.pending_bytes = 0;
        self.open.values_mut().for_each(|o| o.dirty = false);
        self.dirty = false;
        self.last_save = Some(Instant::now());
        let manifest = self.manifest(false)?;
        bg.send(CheckpointJob {
            points,
            rows,
            manifest,
        })
    }

    fn io_err(&self, name: &str, e: std::io::Error) -> SweepError {
        store_err(format!(
            "cannot write {}: {e}",
            self.store.dir().join(name).display()
        ))
    }

    /// Regenerate the seed rows of `rows_to_redo`'s done chunks (statistics are kept).
    fn redo_rows(&mut self, threads: usize, stop: &AtomicBool) -> Result<(), SweepError> {
        let points = std::mem::take(&mut self.rows_to_redo);
        let batch = self.store.begin()?;
        for &p in &points {
            batch.delete_rows(self.plan.point_chunks(p))?;
        }
        batch.commit()?;
        let share = self.share;
        let done: Vec<(usize, Vec<Range<u64>>)> = points
            .iter()
            .map(|&p| {
                let ranges = match self.open.get(&p) {
                    Some(o) => o.done.ranges().iter().map(|&(a, b)| a..b).collect(),
                    None => std::iter::once(0..share.owned(p)).collect(),
                };
                (p, ranges)
            })
            .collect();
        let jobs = done
            .into_iter()
            .flat_map(move |(p, rs)| rs.into_iter().flatten().map(move |j| share.id(p, j)));
        let plan = self.plan;
        fanout::run(
            threads,
            stop,
            jobs,
            Worker::default,
            |w, id| engine::run_chunk(plan, id, w, stop, Mode::RowsOnly),
            |r| {
                if r.n_rows > 0 {
                    self.pending_bytes += r.rows.capacity();
                    self.pending_rows.push((r.id, r.n_rows, r.rows));
                }
                self.dirty = true;
                self.checkpoint(false)?;
                Ok::<_, SweepError>(ControlFlow::Continue(()))
            },
        )?;
        self.checkpoint(true)
    }

    /// `manifest.json`: the sweep's definition, the command, and how far it got (`last`: the one
    /// written with the final files, the only one that says complete).
    fn manifest(&self, last: bool) -> Result<Vec<u8>, SweepError> {
        let m = serde_json::json!({
            "cavesweep": env!("CARGO_PKG_VERSION"),
            "command": self.store.meta("command")?.unwrap_or_default(),
            "shard": self.share.shard.to_string(),
            "sweep": self.plan.fingerprint(),
            "grid_points": self.plan.n_points(),
            "computed_metrics": self.plan.computed.to_string(),
            "progress": {
                "chunks_total": self.chunks_total,
                "chunks_done": self.chunks_done,
                "seeds_total": self.seeds_total,
                "seeds_done": self.seeds_done,
                "complete": last,
            },
            "files": {
                "summary.csv": "one row per grid point: parameters, recipe, seeds, passed, pass_rate (the unnamed gate), pass_rate[NAME] per named gate, fail[clause] counts (caves on which the clause was false), <metric>_mean/_sd/_min/_p05/_p50/_p95/_max",
                "trajectory.csv": "one row per grid point and step (0 = after fill, then each pass application, then each post-step): wall-fraction n, mean, sd, min, p05, p50, p95, max",
                "components.csv": "distribution of the component count per grid point",
                "seeds.csv": "one row per cave kept by --per-seed: seed, parameters, metrics, passed (the unnamed gate), passed[NAME] per named gate",
                "cavesweep.sqlite": "the store this folder is resumed and merged from (SQLite): per-point statistics, per-chunk seed rows until seeds.csv is complete, the runs that wrote it",
                "quantiles": "p05/p50/p95 from an HDR histogram at 3 significant digits (fractions scaled by 1e6); mean and sd from exact fixed-point sums",
            },
        });
        let mut v = serde_json::to_vec_pretty(&m).expect("manifest serialises");
        v.push(b'\n');
        Ok(v)
    }

    /// Write the final files (this shard's share when sharded), record them, and for a whole
    /// sweep drop the seed rows now in `seeds.csv`.
    fn finish(&mut self) -> Result<(), SweepError> {
        self.checkpoint(true)?;
        let dir = self.store.dir().to_path_buf();
        let plan = self.plan;
        let mut recorded: BTreeMap<&str, FileRecord> = BTreeMap::new();
        let [summary, traj, comps] = match self.stream.take() {
            Some(stream) if stream.is_whole(plan) => stream.outs,
            partial => {
                // Dropped unfinished: its temporaries go.
                drop(partial);
                self.format_final()?
            }
        };
        for (name, out) in [
            ("summary.csv", summary),
            ("trajectory.csv", traj),
            ("components.csv", comps),
        ] {
            recorded.insert(name, out.finish().map_err(|e| self.io_err(name, e))?);
            failpoint::kill(&format!("final:{name}"));
        }
        if plan.spec.per_seed != PerSeed::None {
            let rec = match self.intact.get("seeds.csv") {
                Some(&rec) => rec,
                None => self.write_seeds()?,
            };
            recorded.insert("seeds.csv", rec);
            failpoint::kill("final:seeds.csv");
        }
        let manifest = self.manifest(true)?;
        recorded.insert(
            "manifest.json",
            files::write_output(&dir, "manifest.json", |w| w.write_all(&manifest))
                .map_err(|e| self.io_err("manifest.json", e))?,
        );
        failpoint::kill("final:manifest.json");
        let batch = self.store.begin()?;
        batch.set_meta(
            "files",
            &serde_json::to_string(&recorded).expect("records serialise"),
        )?;
        batch.set_meta("complete", "1")?;
        batch.commit()?;
        failpoint::kill("completed");
        if self.share.shard == Shard::WHOLE {
            // The rows are in seeds.csv now; a shard keeps them for `merge`.
            self.store.drop_rows()?;
        }
        Ok(())
    }

    /// The per-point final files formatted from the store's records (a resumed or merged sweep;
    /// a fresh one streams them, see [`Stream`]), ready to finish.
    fn format_final(&mut self) -> Result<[Output; 3], SweepError> {
        let dir = self.store.dir().to_path_buf();
        let plan = self.plan;
        let create = |name: &str| Output::create(&dir, name).map_err(|e| self.io_err(name, e));
        let (mut summary, mut traj, mut comps) = (
            create("summary.csv")?,
            create("trajectory.csv")?,
            create("components.csv")?,
        );
        let write_err = |name: &str, e: std::io::Error| {
            store_err(format!("cannot write {}: {e}", dir.join(name).display()))
        };
        summary
            .write_all(&output::summary_header(plan))
            .map_err(|e| write_err("summary.csv", e))?;
        traj.write_all(&output::trajectory_header(plan))
            .map_err(|e| write_err("trajectory.csv", e))?;
        comps
            .write_all(&output::components_header(plan))
            .map_err(|e| write_err("components.csv", e))?;
        // Points are read in batches and their rows formatted on every worker thread (the rows
        // of a 100,000-point grid are hundreds of MB of numbers), then written in order.
        let share = self.share;
        let pool = crate::fanout::pool(self.threads)?;
        let n = plan.n_points() as u64;
        let mut a = 0u64;
        while a < n {
            let b = (a + FINISH_BATCH).min(n);
            let mut recs: Vec<Option<Vec<u8>>> = vec![None; (b - a) as usize];
            for r in self.store.points_in(a..b)? {
                let rec = r.map_err(|(p, why)| {
                    store_err(format!(
                        "the record of grid point {p} was damaged while the sweep ran ({why}); rerun to recompute it"
                    ))
                })?;
                recs[(rec.point - a) as usize] = Some(rec.stats);
            }
            let rows: Vec<Result<[Vec<u8>; 3], SweepError>> = pool.install(|| {
                recs.into_par_iter()
                    .enumerate()
                    .map(|(i, bytes)| {
                        let p = (a as usize) + i;
                        let st = match bytes {
                            Some(bytes) => {
                                PointStats::decode(&bytes, plan.shape(p), share.point_seeds(p))
                                    .map_err(|why| store_err(format!("grid point {p}: {why}")))?
                            }
                            None => PointStats::new(plan.shape(p)),
                        };
                        Ok(output::point_rows(plan, &plan.params(p), &st))
                    })
                    .collect()
            });
            for r in rows {
                let [s, t, c] = r?;
                summary
                    .write_all(&s)
                    .map_err(|e| write_err("summary.csv", e))?;
                traj.write_all(&t)
                    .map_err(|e| write_err("trajectory.csv", e))?;
                comps
                    .write_all(&c)
                    .map_err(|e| write_err("components.csv", e))?;
            }
            a = b;
        }
        Ok([summary, traj, comps])
    }

    // ---- merge: records taken from finished shard folders ----------------------------------

    /// Complete when opened, and every final file matched its record.
    pub(super) fn is_verified(&self) -> bool {
        self.verified
    }

    /// Forget every record (a merge into a folder holding an unfinished merge starts over).
    pub(super) fn reset(&mut self) -> Result<(), SweepError> {
        let batch = self.store.begin()?;
        batch.clear_records()?;
        batch.set_meta("complete", "0")?;
        batch.commit()?;
        for p in 0..self.plan.n_points() {
            self.complete[p] = self.share.owned(p) == 0;
        }
        self.n_complete = self.complete.iter().filter(|&&c| c).count();
        self.open.clear();
        self.pending_closed.clear();
        self.pending_rows.clear();
        self.pending_bytes = 0;
        self.rows_to_redo.clear();
        self.repairs.clear();
        self.intact.clear();
        (self.chunks_done, self.seeds_done, self.passed) = (0, 0, 0);
        Ok(())
    }

    /// Take the finished statistics of grid point `p` (every chunk of it).
    pub(super) fn absorb_point(&mut self, p: usize, stats: PointStats) -> Result<(), SweepError> {
        if self.complete[p] {
            return Err(store_err(format!(
                "internal error: grid point {p} merged twice"
            )));
        }
        self.chunks_done += self.share.owned(p);
        self.seeds_done += stats.seeds;
        self.passed += stats.passed;
        self.close_point(p, &stats)?;
        self.dirty = true;
        self.checkpoint(false)
    }

    /// Mark grid point `p` complete and queue its closed record for the next commit (and its
    /// final rows for the stream, if one is open).
    fn close_point(&mut self, p: usize, stats: &PointStats) -> Result<(), SweepError> {
        let rows = self
            .stream
            .is_some()
            .then(|| output::point_rows(self.plan, &self.plan.params(p), stats));
        self.close_encoded(
            p,
            Closed {
                seeds: stats.seeds,
                passed: stats.passed,
                record: stats.encode(),
                rows,
            },
        )
    }

    /// [`SweepState::close_point`] for a point already encoded (and formatted) by its worker.
    fn close_encoded(&mut self, p: usize, c: Closed) -> Result<(), SweepError> {
        self.pending_bytes += c.record.capacity();
        self.pending_closed.push(PointRecord {
            point: p as u64,
            closed: true,
            seeds: c.seeds,
            passed: c.passed,
            done: Vec::new(),
            stats: c.record,
        });
        self.complete[p] = true;
        self.n_complete += 1;
        if let Some(stream) = &mut self.stream {
            let rows = c.rows.expect("rows are formatted while streaming");
            if let Err((name, e)) = stream.put(self.share, p, rows) {
                return Err(store_err(format!(
                    "cannot write {}: {e}",
                    self.store.dir().join(name).display()
                )));
            }
        }
        Ok(())
    }

    /// Open the final files for streaming, headers written.
    fn start_stream(&self) -> Result<Stream, SweepError> {
        let dir = self.store.dir();
        let plan = self.plan;
        let mut outs = Vec::new();
        for (name, header) in [
            ("summary.csv", output::summary_header(plan)),
            ("trajectory.csv", output::trajectory_header(plan)),
            ("components.csv", output::components_header(plan)),
        ] {
            let mut out = Output::create(dir, name).map_err(|e| self.io_err(name, e))?;
            out.write_all(&header).map_err(|e| self.io_err(name, e))?;
            outs.push(out);
        }
        let outs: [Output; 3] = outs.try_into().ok().expect("three files");
        let mut stream = Stream {
            outs,
            next: 0,
            waiting: BTreeMap::new(),
        };
        stream
            .advance(self.share)
            .map_err(|(name, e)| self.io_err(name, e))?;
        Ok(stream)
    }

    /// Take the seed rows of chunk `chunk`.
    pub(super) fn absorb_rows(
        &mut self,
        chunk: u64,
        n: u64,
        data: Vec<u8>,
    ) -> Result<(), SweepError> {
        self.pending_bytes += data.capacity();
        self.pending_rows.push((chunk, n, data));
        self.dirty = true;
        self.checkpoint(false)
    }

    /// Regenerate the seed rows of `points` (every chunk; statistics are kept). For `merge` of a
    /// whole folder (unsharded, or the only shard of a 1/1 split): a whole sweep drops its rows
    /// once `seeds.csv` holds them, and the rows depend only on the plan and the chunk.
    pub(super) fn regenerate_rows(
        &mut self,
        points: Vec<usize>,
        threads: usize,
    ) -> Result<(), SweepError> {
        self.rows_to_redo = points;
        let never = AtomicBool::new(false);
        self.redo_rows(threads, &never)
    }

    /// After absorbing: the grid points whose rows do not add up (empty when all is well).
    pub(super) fn rows_mismatch(&mut self) -> Result<Vec<usize>, SweepError> {
        self.checkpoint(true)?;
        self.check_rows()?;
        self.repairs.clear();
        Ok(std::mem::take(&mut self.rows_to_redo))
    }

    /// Write and record the final files.
    pub(super) fn finish_merge(&mut self) -> Result<u64, SweepError> {
        if !self.is_complete() {
            return Err(store_err(
                "internal error: merge left grid points without records",
            ));
        }
        self.finish()?;
        Ok(self.seeds_done)
    }

    /// `seeds.csv` from the stored rows, in chunk order; a chunk whose record fails its checksum
    /// is regenerated on the spot.
    fn write_seeds(&mut self) -> Result<FileRecord, SweepError> {
        let dir = self.store.dir().to_path_buf();
        let mut out = Output::create(&dir, "seeds.csv").map_err(|e| self.io_err("seeds.csv", e))?;
        let plan = self.plan;
        let werr = |e: std::io::Error| {
            store_err(format!(
                "cannot write {}: {e}",
                dir.join("seeds.csv").display()
            ))
        };
        out.write_all(&output::seeds_header(plan)).map_err(werr)?;
        let mut worker = Worker::default();
        let never = AtomicBool::new(false);
        let mut chunks = 0u64;
        self.store.rows(
            0..u64::MAX,
            |chunk, _, data, ok| -> Result<(), SweepError> {
                if ok {
                    out.write_all(data).map_err(werr)?;
                } else {
                    let r = engine::run_chunk(plan, chunk, &mut worker, &never, Mode::RowsOnly)
                        .expect("never stopped");
                    out.write_all(&r.rows).map_err(werr)?;
                }
                chunks += 1;
                if chunks == 1 {
                    failpoint::kill("seeds-partial");
                }
                Ok(())
            },
        )?;
        out.finish().map_err(|e| self.io_err("seeds.csv", e))
    }
}

/// The finished grid points of a sweep folder that is still running (or was interrupted), as
/// the CSV files it will write when done: `summary.csv`, `trajectory.csv` and `components.csv`
/// rows of the points whose every chunk is done (in this folder's shard), read from the store
/// without locking it.
pub struct Provisional {
    pub summary: Vec<u8>,
    pub trajectory: Vec<u8>,
    pub components: Vec<u8>,
    /// Grid points with rows, and in all.
    pub points_done: usize,
    pub points: usize,
    /// Chunks recorded in the store (closed points' and open points' done ones), and in all:
    /// fresher than the manifest's progress, which is written at checkpoints.
    pub chunks_done: u64,
    pub chunks_total: u64,
    /// Caves counted in the store's point records.
    pub seeds_done: u64,
    /// Points whose record fails its checksum or cannot be decoded: left out, and said so.
    pub damaged: Vec<u64>,
}

/// Read [`Provisional`] tables from `dir`'s store (see there).
pub fn provisional(dir: &Path) -> Result<Provisional, SweepError> {
    let store = Store::open_snapshot(dir)?;
    let meta = |k: &str| -> Result<String, SweepError> {
        store
            .meta(k)?
            .ok_or_else(|| store_err(format!("{}: the store has no {k:?}", dir.display())))
    };
    if meta("kind")? != "sweep" {
        return Err(store_err(format!(
            "{} does not hold a sweep",
            dir.display()
        )));
    }
    let fp: serde_json::Value = serde_json::from_str(&meta("fingerprint")?).map_err(|e| {
        store_err(format!(
            "{}: unreadable sweep definition ({e})",
            dir.display()
        ))
    })?;
    let plan = Plan::from_fingerprint(&fp)?;
    let shard: Shard = meta("shard")?.parse()?;
    let share = Share { plan: &plan, shard };
    let mut out = Provisional {
        summary: output::summary_header(&plan),
        trajectory: output::trajectory_header(&plan),
        components: output::components_header(&plan),
        points_done: 0,
        points: plan.n_points(),
        chunks_done: 0,
        chunks_total: (0..plan.n_points()).map(|p| share.owned(p)).sum(),
        seeds_done: 0,
        damaged: Vec::new(),
    };
    store.points(|r| -> Result<(), SweepError> {
        // A damaged record is left out and named: the resumed sweep recomputes it.
        let rec = match r {
            Ok(rec) => rec,
            Err((point, _)) => {
                out.damaged.push(point);
                return Ok(());
            }
        };
        let p = rec.point as usize;
        if p >= plan.n_points() {
            return Ok(());
        }
        out.seeds_done += rec.seeds;
        if !rec.closed {
            out.chunks_done += rec
                .done
                .iter()
                .map(|(a, b)| b.saturating_sub(*a))
                .sum::<u64>();
            return Ok(());
        }
        let Ok(st) = PointStats::decode(&rec.stats, plan.shape(p), share.point_seeds(p)) else {
            out.damaged.push(rec.point);
            return Ok(());
        };
        let params = plan.params(p);
        output::summary_row(&mut out.summary, &plan, &params, &st);
        output::trajectory_rows(&mut out.trajectory, &params, &st);
        output::components_rows(&mut out.components, &params, &st);
        out.points_done += 1;
        out.chunks_done += share.owned(p);
        Ok(())
    })?;
    Ok(out)
}
