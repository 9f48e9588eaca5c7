//! `cavesweep merge`: finished shard folders into the files a one-machine run writes.
//!
//! Merge works from what each shard finished with: its store's point records and seed rows (not
//! its CSV files), and only from shards whose store says complete. Inputs are opened read-only
//! under a shared lock (no sweep can start writing into them meanwhile) and are never written,
//! with or without `--force`. The output is an ordinary whole-sweep folder written through the
//! same store: killed midway, it is marked incomplete (rerunning the merge starts it over), and
//! it is marked complete only after every final file is written and recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::state::{Share, SweepState};
use super::stats::PointStats;
use super::{Plan, RunOptions, Shard, SweepError};
use crate::store::Store;

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeReport {
    pub shards: usize,
    pub caves: u64,
    /// The output was already the complete merge of these shards, its files intact.
    pub verified: bool,
}

fn merge_err(msg: impl std::fmt::Display) -> SweepError {
    SweepError::Store(msg.to_string())
}

/// Absolute, symlink-free form of `p` (of its parent when `p` does not exist yet).
fn canonical(p: &Path) -> Result<PathBuf, SweepError> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let abs = std::path::absolute(p).map_err(|e| merge_err(format!("{}: {e}", p.display())))?;
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => Ok(parent
            .canonicalize()
            .map(|c| c.join(name))
            .unwrap_or(abs.clone())),
        _ => Ok(abs),
    }
}

/// One input shard folder, open read-only.
struct Input {
    dir: PathBuf,
    store: Store,
    shard: Shard,
}

/// Grid points read per query from each input.
const POINT_BATCH: u64 = 1024;

/// Merge the shard folders `dirs` into `out`. See the module docs.
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    force: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<MergeReport, SweepError> {
    if dirs.is_empty() {
        return Err(merge_err("merge needs at least one shard folder"));
    }
    let out_abs = canonical(out)?;
    for d in dirs {
        let d_abs = canonical(d)?;
        if out_abs == d_abs || out_abs.starts_with(&d_abs) {
            return Err(merge_err(format!(
                "--out {} is (inside) the input folder {}: merge never writes into its inputs; choose another --out",
                out.display(),
                d.display()
            )));
        }
    }
    let mut inputs: Vec<Input> = Vec::new();
    let mut fingerprint: Option<(serde_json::Value, String)> = None;
    for d in dirs {
        let store = Store::open_input(d)?;
        let meta = |k: &str| -> Result<String, SweepError> {
            store.meta(k)?.ok_or_else(|| {
                merge_err(format!(
                    "{} is not a cavesweep shard folder (its store has no {k:?})",
                    d.display()
                ))
            })
        };
        if meta("kind")? != "sweep" {
            return Err(merge_err(format!("{} does not hold a sweep", d.display())));
        }
        if meta("complete")? != "1" {
            return Err(merge_err(format!(
                "{} is not a finished shard: rerun its sweep command to finish it, then merge",
                d.display()
            )));
        }
        let fp: serde_json::Value = serde_json::from_str(&meta("fingerprint")?).map_err(|e| {
            merge_err(format!(
                "{}: unreadable sweep definition ({e})",
                d.display()
            ))
        })?;
        match &fingerprint {
            None => fingerprint = Some((fp, meta("command")?)),
            Some((first, _)) if *first != fp => {
                return Err(merge_err(format!(
                    "{} holds a different sweep than {}: refusing to merge",
                    d.display(),
                    dirs[0].display()
                )));
            }
            Some(_) => {}
        }
        let shard: Shard = meta("shard")?.parse()?;
        if let Some(other) = inputs.iter().find(|i| i.shard == shard) {
            return Err(merge_err(format!(
                "{} and {} are both shard {shard}: give each shard once",
                other.dir.display(),
                d.display()
            )));
        }
        if let Some(first) = inputs.first()
            && first.shard.n != shard.n
        {
            return Err(merge_err(format!(
                "{} is shard {shard} but {} is shard {}: the shards of one split all have the same N",
                d.display(),
                first.dir.display(),
                first.shard
            )));
        }
        inputs.push(Input {
            dir: d.clone(),
            store,
            shard,
        });
    }
    let (fp, command) = fingerprint.expect("at least one input");
    let n = inputs[0].shard.n;
    let missing: Vec<String> = (1..=n)
        .filter(|k| !inputs.iter().any(|i| i.shard.k == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(merge_err(format!(
            "missing shard{} {} of {n}: run {} and merge all {n} folders",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            if missing.len() > 1 { "them" } else { "it" },
        )));
    }
    let plan = Plan::from_fingerprint(&fp)?;
    let never = AtomicBool::new(false);
    let opts = RunOptions {
        shard: Shard::WHOLE,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        force,
        command: &command,
        stop: &never,
    };
    let mut st = SweepState::open(&plan, out, &opts)?;
    if st.is_verified() {
        return Ok(MergeReport {
            shards: inputs.len(),
            caves: plan.n_caves(),
            verified: true,
        });
    }
    st.reset()?;
    // Statistics: point by point, the records of every shard that ran chunks of it.
    let total = plan.n_caves();
    let mut done = 0u64;
    progress(0, total);
    let mut a = 0u64;
    while a < plan.n_points() as u64 {
        let b = (a + POINT_BATCH).min(plan.n_points() as u64);
        let mut merged: BTreeMap<u64, PointStats> = BTreeMap::new();
        for input in &inputs {
            let share_owns = |p: u64| {
                let r = plan.point_chunks(p as usize);
                input.shard.owned_in(r.start, r.end) > 0
            };
            let expect: Vec<u64> = (a..b).filter(|&p| share_owns(p)).collect();
            let mut next = 0usize;
            for rec in input.store.points_in(a..b)? {
                let rec = rec.map_err(|(p, why)| damaged(&input.dir, p, &why))?;
                let p = rec.point;
                match expect.get(next) {
                    Some(&q) if q < p => {
                        return Err(damaged(&input.dir, q, "its record is missing"));
                    }
                    Some(&q) if q == p && rec.closed => next += 1,
                    _ => {
                        return Err(damaged(
                            &input.dir,
                            p,
                            "a record a finished shard cannot have",
                        ));
                    }
                }
                let seeds = Share {
                    plan: &plan,
                    shard: input.shard,
                }
                .point_seeds(p as usize);
                let stats = PointStats::decode(&rec.stats, plan.shape(p as usize), seeds)
                    .map_err(|why| damaged(&input.dir, p, &why))?;
                merged
                    .entry(p)
                    .or_insert_with(|| PointStats::new(plan.shape(p as usize)))
                    .merge(&stats);
            }
            if let Some(&p) = expect.get(next) {
                return Err(damaged(&input.dir, p, "its record is missing"));
            }
        }
        for (p, stats) in merged {
            done += stats.seeds;
            st.absorb_point(p as usize, stats)?;
        }
        progress(done, total);
        a = b;
    }
    crate::failpoint::kill("merge:points");
    // Seed rows: every chunk's, from the shard that ran it.
    if plan.spec.per_seed != super::PerSeed::None {
        for input in &inputs {
            let mut rows: Vec<(u64, u64, Vec<u8>)> = Vec::new();
            let mut bad = None;
            input.store.rows(
                0..u64::MAX,
                |chunk, n, data, ok| -> Result<(), SweepError> {
                    if !ok || !input.shard.owns(chunk) {
                        bad.get_or_insert(chunk);
                    }
                    rows.push((chunk, n, data.to_vec()));
                    if rows.len() >= 256 {
                        for (c, n, d) in rows.drain(..) {
                            st.absorb_rows(c, n, d)?;
                        }
                    }
                    Ok(())
                },
            )?;
            if let Some(chunk) = bad {
                return Err(merge_err(format!(
                    "{}: the seed rows of chunk {chunk} are damaged; rerun that shard's sweep command to repair it, then merge",
                    input.dir.display()
                )));
            }
            for (c, n, d) in rows {
                st.absorb_rows(c, n, d)?;
            }
        }
        let mismatch = st.rows_mismatch()?;
        if let Some(&p) = mismatch.first() {
            return Err(merge_err(format!(
                "the shards' seed rows of grid point {p} do not add up to its caves; rerun each shard's sweep command (it repairs its rows), then merge"
            )));
        }
    }
    crate::failpoint::kill("merge:rows");
    let caves = st.finish_merge()?;
    Ok(MergeReport {
        shards: inputs.len(),
        caves,
        verified: false,
    })
}

fn damaged(dir: &Path, point: u64, why: &str) -> SweepError {
    merge_err(format!(
        "{}: the record of grid point {point} is unusable ({why}); rerun that shard's sweep command to repair it, then merge",
        dir.display()
    ))
}
