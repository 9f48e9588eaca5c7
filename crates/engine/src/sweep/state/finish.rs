//! The final files: streamed as points close (a fresh folder) or formatted from the store (a
//! resumed one), `seeds.csv` from the stored or regenerated rows, then the manifest and the
//! completion mark.

use super::*;
use crate::store::files::Output;
use crate::store::parquet::{Batch, BatchPool, ParquetTable};
use crate::store::table::{Format, NamedError, TableOut};

/// The three per-point final files of a fresh sweep, written while it runs: each closed point's
/// rows (formatted by its worker) are appended in point order, the few that close early waiting
/// in memory for the points before them (work is handed out in point order, so only points in
/// flight are ever missing). When every point is written, [`SweepState::finish`] just makes the
/// files durable and renames them into place, instead of reading every record back from the
/// store and formatting it again (what a resumed sweep does). An interrupted run leaves only
/// temporaries, removed by the next run.
pub(super) struct Stream {
    outs: [TableOut; 3],
    /// The next point to write.
    next: usize,
    /// Rows of closed points after `next`.
    waiting: BTreeMap<usize, [Vec<u8>; 3]>,
}

impl Stream {
    /// Take point `p`'s rows and write every point now in order.
    pub(super) fn put(
        &mut self,
        share: Share,
        p: usize,
        rows: [Vec<u8>; 3],
    ) -> Result<(), NamedError> {
        if p == self.next && share.owned(p) > 0 {
            // The usual case: the next point in order, written without waiting in the map.
            self.write(&rows)?;
        } else {
            self.waiting.insert(p, rows);
        }
        self.advance(share)
    }

    pub(super) fn write(&mut self, rows: &[Vec<u8>; 3]) -> Result<(), NamedError> {
        for (out, bytes) in self.outs.iter_mut().zip(rows) {
            out.write_rows(bytes)?;
        }
        self.next += 1;
        Ok(())
    }

    pub(super) fn advance(&mut self, share: Share) -> Result<(), NamedError> {
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

/// `seeds.parquet` of a fresh sweep, written while it runs: each chunk's rows, built typed by
/// its worker ([`Worker::with_typed_rows`]), are appended in chunk order (the order work is
/// handed out; the few chunks that finish early wait in memory for those before them), a row
/// group written whenever one is full. So the file is made without parsing a row back, in
/// memory that stays flat, and [`SweepState::finish`] only writes its last row group and footer.
/// A resumed sweep writes it from the store's rows instead ([`SweepState::write_seeds`]): the
/// same values, so the same bytes. An interrupted run leaves only its temporary, removed by the
/// next run.
pub(super) struct SeedsStream<'p> {
    table: ParquetTable<Output>,
    /// The chunk ids still to come, in order, and the next one.
    order: Box<dyn Iterator<Item = u64> + Send + 'p>,
    next: Option<u64>,
    /// Typed rows of finished chunks after `next`.
    waiting: BTreeMap<u64, Option<Batch>>,
    /// A chunk came without its typed rows: the stream cannot be whole.
    broken: bool,
    /// Where written batches go back to, for the workers ([`Worker::with_typed_rows`]).
    pub(super) pool: BatchPool,
}

impl SeedsStream<'_> {
    /// Take chunk `id`'s `n` typed rows and write every chunk now in order.
    pub(super) fn put(&mut self, id: u64, n: u64, typed: Option<Batch>) -> std::io::Result<()> {
        if n > 0 && typed.as_ref().is_none_or(|b| b.rows() as u64 != n) {
            self.broken = true;
        }
        if self.broken {
            return Ok(());
        }
        self.waiting.insert(id, typed);
        while let Some(next) = self.next {
            let Some(b) = self.waiting.remove(&next) else {
                break;
            };
            if let Some(b) = b {
                self.table.write_batch(&b)?;
                self.pool.give(b);
            }
            self.next = self.order.next();
        }
        Ok(())
    }

    /// Every chunk written.
    fn is_whole(&self) -> bool {
        !self.broken && self.next.is_none() && self.waiting.is_empty()
    }
}

impl<'p> SweepState<'p> {
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
        let mut m = m;
        if self.plan.spec.format.parquet() {
            // Only for Parquet sweeps: a CSV sweep's manifest is what it was before Parquet.
            let files = &mut m["files"];
            if !self.plan.spec.format.csv() {
                for stem in super::TABLES {
                    files
                        .as_object_mut()
                        .expect("files is an object")
                        .remove(&format!("{stem}.csv"));
                }
            }
            for stem in super::TABLES {
                files[format!("{stem}.parquet")] = format!(
                    "{stem}.csv's rows as typed Parquet columns (zstd; seed and counts u64, metrics f64 with nulls for empty values, passed* booleans), the sweep's definition in the key-value metadata"
                )
                .into();
            }
        }
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
        let mut recorded: BTreeMap<String, FileRecord> = BTreeMap::new();
        let tables = match self.stream.take() {
            Some(stream) if stream.is_whole(plan) => stream.outs,
            partial => {
                // Dropped unfinished: its temporaries go.
                drop(partial);
                self.format_final()?
            }
        };
        for table in tables {
            for (name, rec) in table.finish().map_err(|(n, e)| self.io_err(&n, e))? {
                failpoint::kill(&format!("final:{name}"));
                recorded.insert(name, rec);
            }
        }
        if plan.spec.per_seed != PerSeed::None {
            let names = plan.spec.format.names("seeds");
            let intact: Vec<(String, FileRecord)> = names
                .iter()
                .filter_map(|n| self.intact.get(n.as_str()).map(|&r| (n.clone(), r)))
                .collect();
            let written = if intact.len() == names.len() {
                intact
            } else {
                // Dropped unless whole (its temporary goes): then written from the store.
                let stream = self.seeds_stream.take().filter(SeedsStream::is_whole);
                let mut written = self.write_seeds(stream.is_none())?;
                if let Some(s) = stream {
                    // As when written from the store: killed with the file half made.
                    failpoint::kill("seeds-partial");
                    let name = "seeds.parquet";
                    let rec = s
                        .table
                        .finish()
                        .and_then(Output::finish)
                        .map_err(|e| self.io_err(name, e))?;
                    written.push((name.to_string(), rec));
                }
                written
            };
            for (name, rec) in written {
                failpoint::kill(&format!("final:{name}"));
                recorded.insert(name, rec);
            }
        }
        let manifest = self.manifest(true)?;
        recorded.insert(
            "manifest.json".to_string(),
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
    pub(super) fn format_final(&mut self) -> Result<[TableOut; 3], SweepError> {
        let dir = self.store.dir().to_path_buf();
        let plan = self.plan;
        let [mut summary, mut traj, mut comps] = self.create_tables()?;
        let write_err = |(name, e): NamedError| write_err(&dir, &name, e);
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
                summary.write_rows(&s).map_err(write_err)?;
                traj.write_rows(&t).map_err(write_err)?;
                comps.write_rows(&c).map_err(write_err)?;
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
                return Err(self.io_err(&name, e));
            }
        }
        Ok(())
    }

    /// Open the final files for streaming, headers written.
    pub(super) fn start_stream(&self) -> Result<Stream, SweepError> {
        let outs = self.create_tables()?;
        let mut stream = Stream {
            outs,
            next: 0,
            waiting: BTreeMap::new(),
        };
        stream
            .advance(self.share)
            .map_err(|(name, e)| self.io_err(&name, e))?;
        Ok(stream)
    }

    /// The key-value metadata of this sweep's Parquet table `stem`: what it is, the recipe,
    /// the command that reproduces it, the sweep's definition and cavesweep's version. Nothing
    /// that differs between runs that write the same rows: no time, host or thread count, and
    /// no chunk size (`--chunk` is left out of the command and the definition), so the file is
    /// byte-identical whatever the threads, chunking, shards or interruptions.
    fn table_meta(&self, stem: &str) -> Result<Vec<(&'static str, String)>, SweepError> {
        let command = self.store.meta("command")?.unwrap_or_default();
        Ok(vec![
            ("cavesweep.table", stem.to_string()),
            ("cavesweep.version", env!("CARGO_PKG_VERSION").to_string()),
            (
                "cavesweep.command",
                crate::command::without_flag(&command, "--chunk"),
            ),
            ("cavesweep.recipe", self.plan.spec.base.to_toml()),
            ("cavesweep.shard", self.share.shard.to_string()),
            ("cavesweep.sweep", self.plan.table_definition().to_string()),
        ])
    }

    /// Open table `stem` in this sweep's format(s), its CSV header written.
    fn create_table(&self, stem: &str) -> Result<TableOut, SweepError> {
        self.create_table_as(stem, self.plan.spec.format)
    }

    /// Open table `stem` in `format`, its CSV header written.
    fn create_table_as(&self, stem: &str, format: Format) -> Result<TableOut, SweepError> {
        let plan = self.plan;
        TableOut::create(
            self.store.dir(),
            stem,
            format,
            &output::header(plan, stem),
            || output::columns(plan, stem),
            &self.table_meta(stem)?,
        )
        .map_err(|(name, e)| self.io_err(&name, e))
    }

    /// Open `seeds.parquet` for streaming ([`SeedsStream`]), expecting the chunks in the order
    /// they are handed out.
    pub(super) fn start_seeds_stream(&self) -> Result<SeedsStream<'p>, SweepError> {
        let name = "seeds.parquet";
        let out = Output::create(self.store.dir(), name).map_err(|e| self.io_err(name, e))?;
        let table = ParquetTable::new(
            out,
            &output::columns(self.plan, "seeds"),
            &self.table_meta("seeds")?,
        )
        .map_err(|e| self.io_err(name, e))?;
        let mut order: Box<dyn Iterator<Item = u64> + Send + 'p> = Box::new(self.pending_jobs());
        let next = order.next();
        Ok(SeedsStream {
            table,
            order,
            next,
            waiting: BTreeMap::new(),
            broken: false,
            pool: BatchPool::default(),
        })
    }

    /// The three per-point tables, opened.
    fn create_tables(&self) -> Result<[TableOut; 3], SweepError> {
        Ok([
            self.create_table("summary")?,
            self.create_table("trajectory")?,
            self.create_table("components")?,
        ])
    }

    /// `seeds.csv` (and/or `seeds.parquet`) from the stored rows, in chunk order; a chunk whose
    /// record fails its checksum is regenerated on the spot. The Parquet file's row groups are
    /// cut every [`crate::store::parquet::rows_per_group`] rows of this one ordered stream, so
    /// they fall where they fall whatever the chunking, threads or shards that made the rows.
    /// Without `parquet`, only `seeds.csv` (if the format has it): `seeds.parquet` was
    /// streamed ([`SeedsStream`]).
    pub(super) fn write_seeds(
        &mut self,
        parquet: bool,
    ) -> Result<Vec<(String, FileRecord)>, SweepError> {
        let dir = self.store.dir().to_path_buf();
        let plan = self.plan;
        let format = match (
            plan.spec.format.csv(),
            parquet && plan.spec.format.parquet(),
        ) {
            (true, true) => Format::Both,
            (true, false) => Format::Csv,
            (false, true) => Format::Parquet,
            (false, false) => return Ok(Vec::new()),
        };
        let mut out = self.create_table_as("seeds", format)?;
        let werr = |(name, e): NamedError| write_err(&dir, &name, e);
        let mut worker = Worker::default();
        let never = AtomicBool::new(false);
        let mut chunks = 0u64;
        self.store.rows(
            0..u64::MAX,
            |chunk, _, data, ok| -> Result<(), SweepError> {
                if ok {
                    out.write_rows(data).map_err(werr)?;
                } else {
                    let r = engine::run_chunk(plan, chunk, &mut worker, &never, Mode::RowsOnly)
                        .expect("never stopped");
                    out.write_rows(&r.rows).map_err(werr)?;
                }
                chunks += 1;
                if chunks == 1 {
                    failpoint::kill("seeds-partial");
                }
                Ok(())
            },
        )?;
        out.finish().map_err(|(name, e)| self.io_err(&name, e))
    }
}
