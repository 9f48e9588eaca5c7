//! The sweep's output folder: checkpoints, per-chunk seed rows, resume, final files, merge.
//!
//! ```text
//! DIR/state.json      checkpoint: the sweep's fingerprint, shard, chunks done, statistics
//! DIR/parts/N.csv     seeds.csv rows of chunk N (kept until the final seeds.csv is written;
//!                     a shard keeps them for `cavesweep merge`)
//! DIR/manifest.json  the sweep's definition, command, version and progress (every checkpoint)
//! DIR/summary.csv, trajectory.csv, components.csv, seeds.csv   when complete
//! ```
//!
//! Every file is written to a temporary name and renamed, so a kill at any instant leaves
//! either the old or the new version. A chunk counts as done only once its rows are on disk
//! and a checkpoint lists it; on resume, chunks not listed are simply run again, and since a
//! chunk's result depends only on its id, the final files are the same bytes as an
//! uninterrupted run.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::engine::{ChunkResult, empty_stats};
use super::output;
use super::stats::{PointFile, PointStats};
use super::vary::Vary;
use super::{PerSeed, Plan, Shard, SweepError, SweepSpec};
use crate::io::write_atomic;
use crate::measure::MetricSet;
use crate::query::Gate;
use crate::recipe::Recipe;

const STATE: &str = "state.json";
const PARTS: &str = "parts";
/// Files this tool writes in an output folder (and may replace with `--force`).
const OURS: [&str; 6] = [
    STATE,
    "manifest.json",
    "summary.csv",
    "trajectory.csv",
    "components.csv",
    "seeds.csv",
];
/// Minimum time between checkpoints.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

fn store_err(msg: impl std::fmt::Display) -> SweepError {
    SweepError::Store(msg.to_string())
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    format: u32,
    fingerprint: serde_json::Value,
    shard: String,
    chunks: usize,
    /// Done chunk ids as inclusive ranges `[a, b]`.
    done: Vec<(usize, usize)>,
    points: Vec<PointFile>,
}

fn to_ranges(done: &[bool]) -> Vec<(usize, usize)> {
    let mut r: Vec<(usize, usize)> = Vec::new();
    for (i, &d) in done.iter().enumerate() {
        if d {
            match r.last_mut() {
                Some((_, b)) if *b + 1 == i => *b = i,
                _ => r.push((i, i)),
            }
        }
    }
    r
}

/// Rebuild the sweep definition recorded in a checkpoint (used by `merge`).
pub fn plan_from_fingerprint(fp: &serde_json::Value) -> Result<Plan, SweepError> {
    let s = |k: &str| {
        fp.get(k)
            .and_then(|v| v.as_str())
            .ok_or_else(|| store_err(format!("checkpoint lacks {k:?}")))
    };
    let base = Recipe::from_toml(s("recipe")?)
        .map_err(|e| store_err(format!("checkpoint recipe: {e}")))?;
    let varies = fp
        .get("vary")
        .and_then(|v| v.as_array())
        .ok_or_else(|| store_err("checkpoint lacks \"vary\""))?
        .iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| store_err("bad vary"))?
                .parse::<Vary>()
                .map_err(store_err)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let gate: Gate = match s("gate")? {
        "" => Gate::default(),
        g => g.parse().map_err(store_err)?,
    };
    let spec = SweepSpec {
        base,
        varies,
        seeds: super::parse_seeds(s("seeds")?)?,
        gate,
        metrics: s("metrics")?.parse::<MetricSet>().map_err(store_err)?,
        per_seed: s("per_seed")?.parse::<PerSeed>()?,
        chunk: fp.get("chunk").and_then(|c| c.as_u64()),
    };
    let plan = Plan::new(spec)?;
    if &plan.fingerprint() != fp {
        return Err(store_err(
            "checkpoint fingerprint does not rebuild the same sweep",
        ));
    }
    Ok(plan)
}

/// An open output folder for one plan and shard.
pub struct Store<'p> {
    dir: PathBuf,
    plan: &'p Plan,
    shard: Shard,
    done: Vec<bool>,
    stats: Vec<PointStats>,
    /// When the last checkpoint was written; `None` until the first, which is written as soon
    /// as the first chunk is in, so even a short-lived run leaves something to resume.
    last_save: Option<Instant>,
    dirty: bool,
}

fn is_complete(done: &[bool], plan: &Plan, shard: Shard) -> bool {
    (0..plan.n_chunks()).all(|id| !shard.owns(id) || done[id])
}

impl<'p> Store<'p> {
    /// Open `dir` for `plan`: fresh, or resuming a checkpoint of the *same* sweep and shard.
    /// A folder holding another sweep, or other files, is refused unless `force`, which
    /// removes only the files cavesweep writes.
    pub fn open(
        dir: &Path,
        plan: &'p Plan,
        shard: Shard,
        force: bool,
    ) -> Result<Store<'p>, SweepError> {
        let fresh = |dir: &Path| -> Result<Store<'p>, SweepError> {
            Ok(Store {
                dir: dir.to_path_buf(),
                plan,
                shard,
                done: vec![false; plan.n_chunks()],
                stats: (0..plan.points.len())
                    .map(|p| empty_stats(plan, p))
                    .collect(),
                last_save: None,
                dirty: true,
            })
        };
        let state_path = dir.join(STATE);
        if force {
            remove_ours(dir)?;
        }
        if !dir.exists() {
            fs::create_dir_all(dir).map_err(|e| {
                store_err(format!(
                    "cannot create output folder {}: {e}",
                    dir.display()
                ))
            })?;
            return fresh(dir);
        }
        if !state_path.exists() {
            let entries = fs::read_dir(dir)
                .map_err(|e| {
                    store_err(format!("cannot read output folder {}: {e}", dir.display()))
                })?
                .count();
            if entries > 0 {
                return Err(store_err(format!(
                    "output folder {} is not empty and holds no cavesweep sweep; choose another --out (or --force to write into it)",
                    dir.display()
                )));
            }
            return fresh(dir);
        }
        let text = fs::read_to_string(&state_path)
            .map_err(|e| store_err(format!("cannot read {}: {e}", state_path.display())))?;
        let corrupt = |why: String| {
            store_err(format!(
                "cannot resume: {} is corrupt ({why}); rerun with --force to start over",
                state_path.display()
            ))
        };
        let state: StateFile = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        if state.fingerprint != plan.fingerprint() || state.shard != shard.to_string() {
            return Err(store_err(format!(
                "output folder {} holds a different sweep (recorded: {}, shard {}); use another --out, or --force to replace it",
                dir.display(),
                super::output_summary(&state.fingerprint),
                state.shard
            )));
        }
        if state.chunks != plan.n_chunks() || state.points.len() != plan.points.len() {
            return Err(corrupt("chunk or point count differs".into()));
        }
        let mut done = vec![false; plan.n_chunks()];
        for &(a, b) in &state.done {
            if a > b || b >= done.len() {
                return Err(corrupt(format!("chunk range {a}..={b} out of bounds")));
            }
            done[a..=b].iter_mut().for_each(|d| *d = true);
        }
        let stats = state
            .points
            .iter()
            .enumerate()
            .map(|(p, f)| f.to_stats(&empty_stats(plan, p)).map_err(&corrupt))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Store {
            dir: dir.to_path_buf(),
            plan,
            shard,
            done,
            stats,
            last_save: None,
            dirty: false,
        })
    }

    /// Chunk ids of this shard still to run, in order.
    pub fn pending(&self) -> Vec<usize> {
        (0..self.plan.n_chunks())
            .filter(|&id| self.shard.owns(id) && !self.done[id])
            .collect()
    }

    /// Seeds (x grid points) already done by this shard.
    pub fn seeds_done(&self) -> u64 {
        self.stats.iter().map(|s| s.seeds).sum()
    }

    /// Seeds (x grid points) this shard runs in all.
    pub fn seeds_total(&self) -> u64 {
        (0..self.plan.n_chunks())
            .filter(|&id| self.shard.owns(id))
            .map(|id| {
                let r = self.plan.chunk(id).1;
                r.end - r.start
            })
            .sum()
    }

    /// Caves that passed the gate so far.
    pub fn passed(&self) -> u64 {
        self.stats.iter().map(|s| s.passed).sum()
    }

    pub fn is_complete(&self) -> bool {
        is_complete(&self.done, self.plan, self.shard)
    }

    fn part_path(&self, id: usize) -> PathBuf {
        self.dir.join(PARTS).join(format!("{id:09}.csv"))
    }

    /// Take a finished chunk: its rows to disk, its statistics merged, checkpoint if due.
    pub fn add(&mut self, r: ChunkResult) -> Result<(), SweepError> {
        if !r.rows.is_empty() {
            let p = self.part_path(r.id);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| store_err(format!("cannot create {}: {e}", parent.display())))?;
            }
            write_atomic(&p, &r.rows)
                .map_err(|e| store_err(format!("cannot write {}: {e}", p.display())))?;
        }
        self.stats[r.point].merge(&r.stats);
        self.done[r.id] = true;
        self.dirty = true;
        if self
            .last_save
            .is_none_or(|t| t.elapsed() >= CHECKPOINT_EVERY)
        {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Persist the statistics and the list of done chunks.
    pub fn checkpoint(&mut self) -> Result<(), SweepError> {
        if !self.dirty {
            return Ok(());
        }
        let state = StateFile {
            format: 1,
            fingerprint: self.plan.fingerprint(),
            shard: self.shard.to_string(),
            chunks: self.plan.n_chunks(),
            done: to_ranges(&self.done),
            points: self.stats.iter().map(PointFile::from).collect(),
        };
        let bytes = serde_json::to_vec(&state).expect("state serialises");
        let p = self.dir.join(STATE);
        write_atomic(&p, &bytes)
            .map_err(|e| store_err(format!("cannot write {}: {e}", p.display())))?;
        // The manifest's progress block follows the checkpoint, so `cat DIR/manifest.json`
        // tells how far a running or interrupted sweep got.
        let p = self.dir.join("manifest.json");
        write_atomic(&p, &self.manifest())
            .map_err(|e| store_err(format!("cannot write {}: {e}", p.display())))?;
        self.last_save = Some(Instant::now());
        self.dirty = false;
        Ok(())
    }

    fn manifest(&self) -> Vec<u8> {
        let m = serde_json::json!({
            "cavesweep": env!("CARGO_PKG_VERSION"),
            "command": self.plan.command(),
            "shard": self.shard.to_string(),
            "sweep": self.plan.fingerprint(),
            "grid_points": self.plan.points.len(),
            "computed_metrics": self.plan.computed.to_string(),
            "progress": {
                "chunks_total": self.plan.n_chunks(),
                "chunks_done": self.done.iter().filter(|&&d| d).count(),
                "seeds_done": self.seeds_done(),
                "complete": self.is_complete(),
            },
            "files": {
                "summary.csv": "one row per grid point: parameters, recipe, seeds, passed, pass_rate, fail[clause] counts, <metric>_mean/_sd/_min/_p05/_p50/_p95/_max",
                "trajectory.csv": "one row per grid point and step (0 = after fill, then each pass application, then each post-step): wall-fraction n, mean, sd, min, p05, p50, p95, max",
                "components.csv": "distribution of the component count per grid point",
                "seeds.csv": "one row per cave kept by --per-seed: seed, parameters, metrics, passed",
                "quantiles": "p05/p50/p95 from an HDR histogram at 3 significant digits (fractions scaled by 1e6); mean and sd from exact fixed-point sums",
            },
        });
        let mut v = serde_json::to_vec_pretty(&m).expect("manifest serialises");
        v.push(b'\n');
        v
    }

    /// Write the final files (this shard's share when sharded) and, for a whole sweep, drop the
    /// parts now in `seeds.csv`.
    pub fn finish(&mut self) -> Result<(), SweepError> {
        self.checkpoint()?;
        self.write_outputs(std::slice::from_ref(&self.dir))?;
        if self.shard == Shard::WHOLE {
            let _ = fs::remove_dir_all(self.dir.join(PARTS));
        }
        Ok(())
    }

    /// Write summary/trajectory/components/seeds/manifest, taking chunk rows from the first of
    /// `part_dirs` that has them.
    fn write_outputs(&self, part_dirs: &[PathBuf]) -> Result<(), SweepError> {
        let plan = self.plan;
        let put = |name: &str, bytes: &[u8]| {
            let p = self.dir.join(name);
            write_atomic(&p, bytes)
                .map_err(|e| store_err(format!("cannot write {}: {e}", p.display())))
        };
        put("summary.csv", &output::summary_csv(plan, &self.stats))?;
        put("trajectory.csv", &output::trajectory_csv(plan, &self.stats))?;
        put("components.csv", &output::components_csv(plan, &self.stats))?;
        if plan.spec.per_seed != PerSeed::None {
            let path = self.dir.join("seeds.csv");
            let tmp = self
                .dir
                .join(format!("seeds.csv.tmp{}", std::process::id()));
            let write = || -> std::io::Result<()> {
                let mut w = BufWriter::new(fs::File::create(&tmp)?);
                w.write_all(&output::seeds_header(plan))?;
                for id in 0..plan.n_chunks() {
                    if !self.done[id] {
                        continue;
                    }
                    let name = PathBuf::from(PARTS).join(format!("{id:09}.csv"));
                    if let Some(p) = part_dirs.iter().map(|d| d.join(&name)).find(|p| p.exists()) {
                        w.write_all(&fs::read(p)?)?;
                    }
                }
                w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
                fs::rename(&tmp, &path)
            };
            write().map_err(|e| {
                let _ = fs::remove_file(&tmp);
                store_err(format!("cannot write {}: {e}", path.display()))
            })?;
        }
        put("manifest.json", &self.manifest())
    }
}

fn remove_ours(dir: &Path) -> Result<(), SweepError> {
    for name in OURS {
        let p = dir.join(name);
        if p.exists() {
            fs::remove_file(&p)
                .map_err(|e| store_err(format!("cannot remove {}: {e}", p.display())))?;
        }
    }
    let parts = dir.join(PARTS);
    if parts.exists() {
        fs::remove_dir_all(&parts)
            .map_err(|e| store_err(format!("cannot remove {}: {e}", parts.display())))?;
    }
    Ok(())
}

/// Merge shard folders into `out`, producing the files a single-machine run writes.
/// Refuses shards of different sweeps, overlapping shards and incomplete coverage.
pub fn merge(dirs: &[PathBuf], out: &Path, force: bool) -> Result<u64, SweepError> {
    if dirs.is_empty() {
        return Err(store_err("merge needs at least one shard folder"));
    }
    let mut states = Vec::new();
    for d in dirs {
        let p = d.join(STATE);
        let text = fs::read_to_string(&p)
            .map_err(|e| store_err(format!("cannot read {}: {e}", p.display())))?;
        let s: StateFile = serde_json::from_str(&text)
            .map_err(|e| store_err(format!("{} is corrupt: {e}", p.display())))?;
        states.push(s);
    }
    let fp = states[0].fingerprint.clone();
    for (s, d) in states.iter().zip(dirs) {
        if s.fingerprint != fp {
            return Err(store_err(format!(
                "{} holds a different sweep than {}: refusing to merge",
                d.display(),
                dirs[0].display()
            )));
        }
    }
    let plan = plan_from_fingerprint(&fp)?;
    let mut store = Store::open(out, &plan, Shard::WHOLE, force)?;
    if store.seeds_done() > 0 {
        return Err(store_err(format!(
            "{} already holds sweep results; merge into an empty folder (or --force)",
            out.display()
        )));
    }
    for (s, d) in states.iter().zip(dirs) {
        for &(a, b) in &s.done {
            if b >= plan.n_chunks() || a > b {
                return Err(store_err(format!(
                    "{}: chunk range out of bounds",
                    d.display()
                )));
            }
            for id in a..=b {
                if store.done[id] {
                    return Err(store_err(format!(
                        "chunk {id} is in more than one shard ({}): refusing to count it twice",
                        d.display()
                    )));
                }
                store.done[id] = true;
            }
        }
        for (p, f) in s.points.iter().enumerate() {
            let st = f
                .to_stats(&empty_stats(&plan, p))
                .map_err(|e| store_err(format!("{}: {e}", d.display())))?;
            store.stats[p].merge(&st);
        }
    }
    if !store.is_complete() {
        let missing = store.done.iter().filter(|&&d| !d).count();
        return Err(store_err(format!(
            "the shards cover {} of {} chunks ({missing} missing): run the missing shards first",
            plan.n_chunks() - missing,
            plan.n_chunks()
        )));
    }
    store.dirty = true;
    store.checkpoint()?;
    store.write_outputs(dirs)?;
    Ok(store.seeds_done())
}
