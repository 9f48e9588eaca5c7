//! The read side of a sweep folder for a report of a run still in progress: the finished grid
//! points' rows, read from the store without locking it.

use super::*;

/// The finished grid points of a sweep folder that is still running (or was interrupted), as
/// the CSV files it will write when done: `summary.csv`, `trajectory.csv` and `components.csv`
/// rows of the points whose every chunk is done (in this folder's shard), read from the store
/// without locking it.
pub struct Provisional {
    /// `summary.csv` so far: its header, then the rows of the finished points.
    pub summary: Vec<u8>,
    /// `trajectory.csv` so far: its header, then the rows of the finished points.
    pub trajectory: Vec<u8>,
    /// `components.csv` so far: its header, then the rows of the finished points.
    pub components: Vec<u8>,
    /// Grid points with rows, and in all.
    pub points_done: usize,
    /// Grid points of the sweep.
    pub points: usize,
    /// Chunks recorded in the store (closed points' and open points' done ones), and in all:
    /// fresher than the manifest's progress, which is written at checkpoints.
    pub chunks_done: u64,
    /// Chunks of this folder's shard in all.
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
        store.meta(k)?.ok_or_else(|| SweepError::NotASweep {
            dir: dir.into(),
            key: Some(k.into()),
        })
    };
    if meta("kind")? != "sweep" {
        return Err(SweepError::NotASweep {
            dir: dir.into(),
            key: None,
        });
    }
    let fp: serde_json::Value =
        serde_json::from_str(&meta("fingerprint")?).map_err(|e| SweepError::Definition {
            dir: Some(dir.into()),
            why: e.to_string(),
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
