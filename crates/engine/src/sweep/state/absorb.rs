//! The merge's side of a sweep folder: other shards' point records and seed rows taken in as
//! if this run had computed them (used by `sweep::merge`).

use super::*;

impl SweepState<'_> {
    /// Complete when opened, and every final file matched its record.
    pub(in crate::sweep) fn is_verified(&self) -> bool {
        self.verified
    }

    /// Forget every record (a merge into a folder holding an unfinished merge starts over).
    pub(in crate::sweep) fn reset(&mut self) -> Result<(), SweepError> {
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
    pub(in crate::sweep) fn absorb_point(
        &mut self,
        p: usize,
        stats: PointStats,
    ) -> Result<(), SweepError> {
        if self.complete[p] {
            return Err(SweepError::Internal(format!("grid point {p} merged twice")));
        }
        self.chunks_done += self.share.owned(p);
        self.seeds_done += stats.seeds;
        self.passed += stats.passed;
        self.close_point(p, &stats)?;
        self.dirty = true;
        self.checkpoint(false)
    }

    /// Take the seed rows of chunk `chunk`.
    pub(in crate::sweep) fn absorb_rows(
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
    pub(in crate::sweep) fn regenerate_rows(
        &mut self,
        points: Vec<usize>,
        threads: usize,
    ) -> Result<(), SweepError> {
        self.rows_to_redo = points;
        let never = AtomicBool::new(false);
        self.redo_rows(threads, &never)
    }

    /// After absorbing: the grid points whose rows do not add up (empty when all is well).
    pub(in crate::sweep) fn rows_mismatch(&mut self) -> Result<Vec<usize>, SweepError> {
        self.checkpoint(true)?;
        self.check_rows()?;
        self.repairs.clear();
        Ok(std::mem::take(&mut self.rows_to_redo))
    }

    /// Write and record the final files.
    pub(in crate::sweep) fn finish_merge(&mut self) -> Result<u64, SweepError> {
        if !self.is_complete() {
            return Err(SweepError::Internal(
                "merge left grid points without records".into(),
            ));
        }
        self.finish()?;
        Ok(self.seeds_done)
    }
}
