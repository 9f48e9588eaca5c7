//! Checkpoints: what changed since the last one, written atomically through the store on a
//! thread of its own while the sweep runs, then the manifest.

use super::*;

/// Checkpoints written on a thread of their own while a sweep runs, through a second connection
/// to the store. Why: a checkpoint of a 100,000-point grid stores ~20,000 closed points at once
/// (tens of MB, tens to hundreds of ms with its fsyncs); done on the collector thread, it left
/// the collector unable to take results, and the workers, their backlog full, waiting for it.
/// At most one checkpoint is in flight: while it is written, the next one waits (the collector
/// keeps gathering what changed) instead of blocking anybody.
pub(super) struct Background {
    jobs: Option<mpsc::Sender<CheckpointJob>>,
    results: mpsc::Receiver<Result<(), SweepError>>,
    busy: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Everything one checkpoint writes: consistent as of the moment the collector made it.
pub(super) struct CheckpointJob {
    points: Vec<PointRecord>,
    rows: Vec<(u64, u64, Vec<u8>)>,
    manifest: Vec<u8>,
}

impl Background {
    pub(super) fn start(store: &Store) -> Result<Background, SweepError> {
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
            .map_err(SweepError::CheckpointThread)?;
        Ok(Background {
            jobs: Some(jobs),
            results,
            busy: false,
            thread: Some(thread),
        })
    }

    /// Whether a checkpoint is still being written; the error of one that failed.
    pub(super) fn poll(&mut self) -> Result<bool, SweepError> {
        if !self.busy {
            return Ok(false);
        }
        match self.results.try_recv() {
            Ok(r) => {
                self.busy = false;
                r.map(|()| false)
            }
            Err(mpsc::TryRecvError::Empty) => Ok(true),
            Err(mpsc::TryRecvError::Disconnected) => Err(SweepError::CheckpointThreadStopped),
        }
    }

    pub(super) fn send(&mut self, job: CheckpointJob) -> Result<(), SweepError> {
        let sent = self.jobs.as_ref().map(|j| j.send(job).is_ok());
        if sent != Some(true) {
            return Err(SweepError::CheckpointThreadStopped);
        }
        self.busy = true;
        Ok(())
    }

    /// Wait for the checkpoint in flight and end the thread; its error, if it failed.
    pub(super) fn stop(mut self) -> Result<(), SweepError> {
        drop(self.jobs.take());
        let r = if self.busy {
            self.results
                .recv()
                .unwrap_or_else(|_| Err(SweepError::CheckpointThreadStopped))
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
pub(super) fn write_checkpoint(
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
        .map_err(|e| write_err(dir, "manifest.json", e))
}

impl SweepState<'_> {
    /// Persist what changed since the last checkpoint, in one transaction. Unless `now`, only when
    /// a second has passed (or many rows are waiting) since the last one.
    pub(super) fn checkpoint(&mut self, now: bool) -> Result<(), SweepError> {
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
    pub(super) fn dirty_open_records(
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
    pub(super) fn checkpoint_in_background(
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
            r.unwrap_or_else(|_| Err(SweepError::CheckpointThreadStopped))?;
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
}
