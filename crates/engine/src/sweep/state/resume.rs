//! Verified resume: the store's records checked against the plan before they are trusted
//! (a damaged point is recomputed, damaged or missing seed rows regenerated) and a complete
//! folder's final files checked against their recorded size and CRC-32.

use super::*;

impl SweepState<'_> {
    /// Read and check every point record, then the seed rows and the final files.
    pub(super) fn load(&mut self) -> Result<(), SweepError> {
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
                    Some(rec) => files::matches(self.store.dir(), name, rec).map_err(|source| {
                        SweepError::Read {
                            path: self.store.dir().join(name),
                            source,
                        }
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
            let seeds = self.plan.spec.format.names("seeds");
            if seeds.iter().all(|n| self.intact.contains_key(n.as_str()))
                && self.share.shard == Shard::WHOLE
            {
                // A whole sweep needs its rows only to rewrite seeds.csv. A shard keeps them
                // for `merge`, so damaged or missing ones are regenerated even when its own
                // seeds.csv is intact.
                return Ok(());
            }
        }
        self.check_rows()
    }

    /// The final files this sweep writes.
    pub(super) fn outputs(&self) -> Vec<&'static str> {
        self.plan.outputs()
    }

    /// Take in one stored point record, or say why it cannot be trusted.
    pub(super) fn take_record(&mut self, rec: PointRecord) -> Result<(), String> {
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
    pub(super) fn expected_rows(&self, p: usize) -> Option<u64> {
        match self.plan.spec.per_seed {
            PerSeed::None => None,
            PerSeed::All => Some(self.point_seeds_done(p)),
            PerSeed::Kept => Some(self.point_passed(p)),
        }
    }

    pub(super) fn point_seeds_done(&self, p: usize) -> u64 {
        match self.open.get(&p) {
            Some(o) => o.stats.seeds,
            None if self.complete[p] && self.share.owned(p) > 0 => self.share.point_seeds(p),
            None => 0,
        }
    }

    pub(super) fn point_passed(&self, p: usize) -> u64 {
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
    pub(super) fn check_rows(&mut self) -> Result<(), SweepError> {
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
    pub(super) fn shard_rows_intact(&mut self) -> Result<bool, SweepError> {
        // Checksums and counts per point, as on resume.
        let before = self.repairs.len();
        self.check_rows()?;
        let intact = self.rows_to_redo.is_empty();
        self.repairs.truncate(before);
        self.rows_to_redo.clear();
        Ok(intact)
    }

    pub(super) fn is_complete(&self) -> bool {
        self.n_complete == self.plan.n_points()
    }
}
