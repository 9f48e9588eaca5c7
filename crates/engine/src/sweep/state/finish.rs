//! The final files: streamed as points close (a fresh folder) or formatted from the store (a
//! resumed one), `seeds.csv` from the stored or regenerated rows, then the manifest and the
//! completion mark.

use super::*;

/// The three per-point final files of a fresh sweep, written while it runs: each closed point's
/// rows (formatted by its worker) are appended in point order, the few that close early waiting
/// in memory for the points before them (work is handed out in point order, so only points in
/// flight are ever missing). When every point is written, [`SweepState::finish`] just makes the
/// files durable and renames them into place, instead of reading every record back from the
/// store and formatting it again (what a resumed sweep does). An interrupted run leaves only
/// temporaries, removed by the next run.
pub(super) struct Stream {
    outs: [Output; 3],
    /// The next point to write.
    next: usize,
    /// Rows of closed points after `next`.
    waiting: BTreeMap<usize, [Vec<u8>; 3]>,
}

impl Stream {
    const NAMES: [&str; 3] = ["summary.csv", "trajectory.csv", "components.csv"];

    /// Take point `p`'s rows and write every point now in order.
    pub(super) fn put(
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

    pub(super) fn write(
        &mut self,
        rows: &[Vec<u8>; 3],
    ) -> Result<(), (&'static str, std::io::Error)> {
        for ((out, name), bytes) in self.outs.iter_mut().zip(Self::NAMES).zip(rows) {
            out.write_all(bytes).map_err(|e| (name, e))?;
        }
        self.next += 1;
        Ok(())
    }

    pub(super) fn advance(&mut self, share: Share) -> Result<(), (&'static str, std::io::Error)> {
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
    pub(super) fn is_whole(&self, plan: &Plan) -> bool {
        self.next == plan.n_points() && self.waiting.is_empty()
    }
}

impl SweepState<'_> {
    /// Regenerate the seed rows of `rows_to_redo`'s done chunks (statistics are kept).
    pub(super) fn redo_rows(
        &mut self,
        threads: usize,
        stop: &AtomicBool,
    ) -> Result<(), SweepError> {
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
    pub(super) fn manifest(&self, last: bool) -> Result<Vec<u8>, SweepError> {
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
    pub(super) fn finish(&mut self) -> Result<(), SweepError> {
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
    pub(super) fn format_final(&mut self) -> Result<[Output; 3], SweepError> {
        let dir = self.store.dir().to_path_buf();
        let plan = self.plan;
        let create = |name: &str| Output::create(&dir, name).map_err(|e| self.io_err(name, e));
        let (mut summary, mut traj, mut comps) = (
            create("summary.csv")?,
            create("trajectory.csv")?,
            create("components.csv")?,
        );
        let write_err = |name: &str, e: std::io::Error| write_err(&dir, name, e);
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
                let rec = r.map_err(|(point, why)| SweepError::Damaged { point, why })?;
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
                                    .map_err(|why| SweepError::Damaged {
                                        point: p as u64,
                                        why,
                                    })?
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

    /// Mark grid point `p` complete and queue its closed record for the next commit (and its
    /// final rows for the stream, if one is open).
    pub(super) fn close_point(&mut self, p: usize, stats: &PointStats) -> Result<(), SweepError> {
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
    pub(super) fn close_encoded(&mut self, p: usize, c: Closed) -> Result<(), SweepError> {
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
                return Err(self.io_err(name, e));
            }
        }
        Ok(())
    }

    /// Open the final files for streaming, headers written.
    pub(super) fn start_stream(&self) -> Result<Stream, SweepError> {
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

    /// `seeds.csv` from the stored rows, in chunk order; a chunk whose record fails its checksum
    /// is regenerated on the spot.
    pub(super) fn write_seeds(&mut self) -> Result<FileRecord, SweepError> {
        let dir = self.store.dir().to_path_buf();
        let mut out = Output::create(&dir, "seeds.csv").map_err(|e| self.io_err("seeds.csv", e))?;
        let plan = self.plan;
        let werr = |e: std::io::Error| write_err(&dir, "seeds.csv", e);
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
