//! `cavesweep merge`: finished shard folders into the files a one-machine run writes.
//!
//! Merge works from what each shard finished with: its store's point records and seed rows (not
//! its CSV files), and only from shards whose store says complete; missing and unfinished shards
//! are named together in one line. Inputs are opened read-only under a shared lock (no sweep can
//! start writing into them meanwhile) and are never written, with or without `--force`. A split
//! into thousands of shards (`merge --from DIR` reads every `DIR/shard-K`) is merged with a
//! bounded number of inputs open at once: beyond it, an input is closed between uses and checked
//! again when reopened. The output is an ordinary whole-sweep folder written through the
//! same store: killed midway, it is marked incomplete (rerunning the merge starts it over), and
//! it is marked complete only after every final file is written and recorded.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::shard::compact;
use super::state::{Share, SweepState};
use super::stats::PointStats;
use super::{Plan, RunOptions, Shard, SweepError};
use crate::error::{Param, Worded, Words};
use crate::store::Store;

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeReport {
    /// Shard folders merged.
    pub shards: usize,
    /// Caves the merged sweep covers (every grid point's seeds).
    pub caves: u64,
    /// The output was already the complete merge of these shards, its files intact.
    pub verified: bool,
}

/// Why shard folders could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No input folder was given.
    #[error("merge needs at least one shard folder")]
    NoInputs,
    /// A path could not be made absolute (to compare the output with the inputs).
    #[error("{}", .path.display())]
    Path {
        /// The path as given.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The folder whose `shard-K` folders were asked for could not be listed.
    #[error("cannot read {}", .dir.display())]
    List {
        /// The folder as given (`merge --from DIR`).
        dir: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// It holds no `shard-K` folder.
    #[error("{}", no_shards(.0, &Words::LIBRARY))]
    NoShards(PathBuf),
    /// The output is an input or inside one.
    #[error(
        "the output folder {} is (inside) the input folder {}: merge never writes into its inputs",
        out.display(),
        input.display()
    )]
    IntoInput {
        /// The output folder.
        out: PathBuf,
        /// The input folder it is, or is inside.
        input: PathBuf,
    },
    /// An input's store lacks a meta value.
    #[error(
        "{} is not a cavesweep shard folder (its store has no {key:?})",
        dir.display()
    )]
    NotAShard {
        /// The input folder.
        dir: PathBuf,
        /// The meta key its store lacks (`kind`, `fingerprint`, `shard`, ...).
        key: String,
    },
    /// An input holds a search.
    #[error("{} does not hold a sweep", .0.display())]
    NotASweep(PathBuf),
    /// An input's recorded definition cannot be read.
    #[error("{}: unreadable sweep definition ({why})", dir.display())]
    Definition {
        /// The input folder.
        dir: PathBuf,
        /// What is wrong with the recorded definition.
        why: String,
    },
    /// Two inputs hold different sweeps.
    #[error(
        "{} holds a different sweep than {}: refusing to merge",
        dir.display(),
        first.display()
    )]
    Different {
        /// The input whose sweep differs.
        dir: PathBuf,
        /// The first input given, whose sweep the others must match.
        first: PathBuf,
    },
    /// Two inputs are the same shard.
    #[error("{} and {} are both shard {shard}: give each shard once", a.display(), b.display())]
    Twice {
        /// The input given first with this shard.
        a: PathBuf,
        /// The input given later with the same shard.
        b: PathBuf,
        /// The shard both record.
        shard: Shard,
    },
    /// Inputs of splits into different numbers of shards.
    #[error(
        "{} is shard {shard} but {} is shard {other}: the shards of one split all have the same N",
        dir.display(),
        first.display()
    )]
    OtherSplit {
        /// The input of the other split.
        dir: PathBuf,
        /// The shard it records.
        shard: Shard,
        /// The first input given, whose split the others must share.
        first: PathBuf,
        /// The shard the first input records.
        other: Shard,
    },
    /// Shards missing or not finished.
    #[error("{}", incomplete(*n, missing, unfinished))]
    Incomplete {
        /// N, the number of shards of the split.
        n: u32,
        /// The shard numbers K no input holds, ascending.
        missing: Vec<u32>,
        /// `(shard number, folder)` of each unfinished input, in the order given.
        unfinished: Vec<(u32, PathBuf)>,
    },
    /// An input changed while it was merged.
    #[error(
        "{} changed while it was being merged (another process wrote it); rerun the merge",
        .0.display()
    )]
    Changed(PathBuf),
    /// A point record of an input is damaged or missing.
    #[error(
        "{}: the record of grid point {point} is unusable ({why}); rerun that shard's sweep command to repair it, then merge",
        dir.display()
    )]
    Record {
        /// The input folder.
        dir: PathBuf,
        /// The grid point's index.
        point: u64,
        /// What is wrong with the record (missing, fails its checksum, does not decode, ...).
        why: String,
    },
    /// A seed-row record of an input is damaged.
    #[error(
        "{}: the seed rows of chunk {chunk} are damaged; rerun that shard's sweep command to repair it, then merge",
        dir.display()
    )]
    Rows {
        /// The input folder.
        dir: PathBuf,
        /// The first bad chunk: its record fails its checksum, or the shard does not own it.
        chunk: u64,
    },
    /// The inputs' seed rows of a point do not add up to its caves.
    #[error(
        "the shards' seed rows of grid point {0} do not add up to its caves; rerun each shard's sweep command (it repairs its rows), then merge"
    )]
    RowsMismatch(u64),
}

fn no_shards(dir: &Path, w: &Words) -> String {
    format!(
        "{}: no shard-K folders in it (a sweep with {} and {} writes them)",
        dir.display(),
        w.with(Param::Shard, "K/N"),
        w.with(Param::Out, &format!("{}/shard-{{shard}}", dir.display()))
    )
}

impl Worded for MergeError {
    fn message(&self, w: &Words) -> String {
        match self {
            MergeError::NoShards(dir) => no_shards(dir, w),
            e => e.to_string(),
        }
    }
}

fn merge_err(e: MergeError) -> SweepError {
    e.into()
}

/// Absolute, symlink-free form of `p` (of its parent when `p` does not exist yet).
fn canonical(p: &Path) -> Result<PathBuf, SweepError> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let abs = std::path::absolute(p).map_err(|source| {
        merge_err(MergeError::Path {
            path: p.into(),
            source,
        })
    })?;
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => Ok(parent
            .canonicalize()
            .map(|c| c.join(name))
            .unwrap_or(abs.clone())),
        _ => Ok(abs),
    }
}

/// One input shard folder.
struct Input {
    dir: PathBuf,
    shard: Shard,
}

/// The input folders' stores, opened read-only on demand, at most `cap` at a time (a merge of
/// 10,000 shards would otherwise need 20,000 file descriptors). With no more inputs than `cap`,
/// every input stays open, under its shared lock, for the whole merge. With more, an input is
/// closed to make room and checked again (finished, same sweep, same shard) when reopened.
struct Inputs<'f> {
    list: Vec<Input>,
    open: Vec<Option<Store>>,
    order: VecDeque<usize>,
    cap: usize,
    fingerprint: &'f serde_json::Value,
}

impl Inputs<'_> {
    fn store(&mut self, i: usize) -> Result<&Store, SweepError> {
        if self.open[i].is_none() {
            while self.order.len() >= self.cap {
                let old = self.order.pop_front().expect("non-empty");
                self.open[old] = None;
            }
            let input = &self.list[i];
            let store = Store::open_input(&input.dir)?;
            let head = read_head(&store, &input.dir)?;
            if !head.complete || head.fingerprint != *self.fingerprint || head.shard != input.shard
            {
                return Err(merge_err(MergeError::Changed(input.dir.clone())));
            }
            self.open[i] = Some(store);
            self.order.push_back(i);
        }
        Ok(self.open[i].as_ref().expect("just opened"))
    }
}

/// What a shard folder's store says it is.
struct Head {
    complete: bool,
    fingerprint: serde_json::Value,
    command: String,
    shard: Shard,
}

fn read_head(store: &Store, d: &Path) -> Result<Head, SweepError> {
    let meta = |k: &str| -> Result<String, SweepError> {
        store.meta(k)?.ok_or_else(|| {
            merge_err(MergeError::NotAShard {
                dir: d.into(),
                key: k.into(),
            })
        })
    };
    if meta("kind")? != "sweep" {
        return Err(merge_err(MergeError::NotASweep(d.into())));
    }
    let fingerprint = serde_json::from_str(&meta("fingerprint")?).map_err(|e| {
        merge_err(MergeError::Definition {
            dir: d.into(),
            why: e.to_string(),
        })
    })?;
    Ok(Head {
        complete: meta("complete")? == "1",
        fingerprint,
        command: meta("command")?,
        shard: meta("shard")?.parse()?,
    })
}

/// How many input stores may be open at once. Each holds two file descriptors (its lock file
/// and its database); the soft limit on open files is raised to the hard one first (as Go's
/// runtime does), since the usual soft limit of 1024 would otherwise cap what can stay open at
/// about 300 inputs. Beyond the budget, inputs are reopened as needed (see [`Inputs`]).
fn open_budget() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain libc calls on a local struct.
    let soft = unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 64;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
        lim.rlim_cur
    };
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    // Room for the output store, its files, stdio and SQLite's temporaries.
    (soft.saturating_sub(64) / 3).clamp(4, MAX_OPEN_INPUTS)
}

/// The most input stores kept open at once, whatever the file limit: each costs ~150 KB (SQLite's
/// schema and page cache), and a merge of 10,000 one-point shards measured 172 MB peak RSS with
/// 1,024 open against 21 MB with 64, and was no faster.
const MAX_OPEN_INPUTS: usize = 256;

/// The `shard-K` folders directly in `dir` (what `sweep --shard ... --out DIR/shard-{shard}`
/// writes), in order of K. Other entries (`merged`, logs) are ignored.
pub fn shard_folders(dir: &Path) -> Result<Vec<PathBuf>, SweepError> {
    let list = |source| {
        merge_err(MergeError::List {
            dir: dir.into(),
            source,
        })
    };
    let entries = std::fs::read_dir(dir).map_err(list)?;
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(list)?;
        let name = entry.file_name();
        let Some(k) = name
            .to_str()
            .and_then(|n| n.strip_prefix("shard-"))
            .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|k| k.parse::<u64>().ok())
        else {
            continue;
        };
        if entry.path().is_dir() {
            found.push((k, entry.path()));
        }
    }
    if found.is_empty() {
        return Err(merge_err(MergeError::NoShards(dir.into())));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
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
        return Err(merge_err(MergeError::NoInputs));
    }
    refuse_into_inputs(dirs, out)?;
    let (list, open, fp, command, cap) = open_inputs(dirs)?;
    let n = list[0].shard.n;
    let order: VecDeque<usize> = (0..list.len()).filter(|&i| open[i].is_some()).collect();
    let mut inputs = Inputs {
        list,
        open,
        order,
        cap,
        fingerprint: &fp,
    };
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
            shards: inputs.list.len(),
            caves: plan.n_caves(),
            verified: true,
        });
    }
    st.reset()?;
    merge_points(&plan, &mut inputs, &mut st, progress)?;
    crate::failpoint::kill("merge:points");
    if plan.spec.per_seed != super::PerSeed::None {
        merge_rows(&mut inputs, &mut st, n, opts.threads)?;
    }
    crate::failpoint::kill("merge:rows");
    let caves = st.finish_merge()?;
    Ok(MergeReport {
        shards: inputs.list.len(),
        caves,
        verified: false,
    })
}

/// Refuse an output folder that is one of the inputs or inside one: merge never writes into
/// its inputs.
fn refuse_into_inputs(dirs: &[PathBuf], out: &Path) -> Result<(), SweepError> {
    let out_abs = canonical(out)?;
    for d in dirs {
        let d_abs = canonical(d)?;
        if out_abs == d_abs || out_abs.starts_with(&d_abs) {
            return Err(merge_err(MergeError::IntoInput {
                out: out.into(),
                input: d.clone(),
            }));
        }
    }
    Ok(())
}

/// The input folders' heads, checked: one sweep, each shard of one split once, every shard
/// there and finished. Returns the inputs, their stores (open while the budget lasts), the
/// sweep's fingerprint and recorded command, and the budget.
#[allow(clippy::type_complexity)]
fn open_inputs(
    dirs: &[PathBuf],
) -> Result<
    (
        Vec<Input>,
        Vec<Option<Store>>,
        serde_json::Value,
        String,
        usize,
    ),
    SweepError,
> {
    let cap = open_budget().min(dirs.len());
    let mut list: Vec<Input> = Vec::with_capacity(dirs.len());
    let mut open: Vec<Option<Store>> = Vec::with_capacity(dirs.len());
    let mut fingerprint: Option<(serde_json::Value, String)> = None;
    // Shards present, by K: the index of the input, or unfinished.
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    let mut unfinished: Vec<usize> = Vec::new();
    for d in dirs {
        let store = Store::open_input(d)?;
        let head = read_head(&store, d)?;
        match &fingerprint {
            None => fingerprint = Some((head.fingerprint, head.command)),
            Some((first, _)) if *first != head.fingerprint => {
                return Err(merge_err(MergeError::Different {
                    dir: d.clone(),
                    first: dirs[0].clone(),
                }));
            }
            Some(_) => {}
        }
        let shard = head.shard;
        if let Some(&other) = seen.get(&shard.k)
            && list[other].shard == shard
        {
            return Err(merge_err(MergeError::Twice {
                a: list[other].dir.clone(),
                b: d.clone(),
                shard,
            }));
        }
        if let Some(first) = list.first()
            && first.shard.n != shard.n
        {
            return Err(merge_err(MergeError::OtherSplit {
                dir: d.clone(),
                shard,
                first: first.dir.clone(),
                other: first.shard,
            }));
        }
        seen.insert(shard.k, list.len());
        if !head.complete {
            unfinished.push(list.len());
        }
        // Kept open while the budget lasts; the rest are reopened when needed.
        open.push((list.len() < cap && head.complete).then_some(store));
        list.push(Input {
            dir: d.clone(),
            shard,
        });
    }
    let (fp, command) = fingerprint.expect("at least one input");
    let n = list[0].shard.n;
    let missing: Vec<u32> = (1..=n).filter(|k| !seen.contains_key(k)).collect();
    if !missing.is_empty() || !unfinished.is_empty() {
        let unfinished = unfinished
            .iter()
            .map(|&i| (list[i].shard.k, list[i].dir.clone()))
            .collect();
        return Err(merge_err(MergeError::Incomplete {
            n,
            missing,
            unfinished,
        }));
    }
    Ok((list, open, fp, command, cap))
}

/// Statistics: point by point (in batches), the records of every shard that ran chunks of it,
/// checked (a finished shard has exactly the closed records of the points it owns chunks of)
/// and added up.
fn merge_points(
    plan: &Plan,
    inputs: &mut Inputs<'_>,
    st: &mut SweepState<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), SweepError> {
    let total = plan.n_caves();
    let mut done = 0u64;
    progress(0, total);
    let mut a = 0u64;
    while a < plan.n_points() as u64 {
        let b = (a + POINT_BATCH).min(plan.n_points() as u64);
        let mut merged: BTreeMap<u64, PointStats> = BTreeMap::new();
        for i in 0..inputs.list.len() {
            let shard = inputs.list[i].shard;
            let expect: Vec<u64> = (a..b)
                .filter(|&p| {
                    let r = plan.point_chunks(p as usize);
                    shard.owned_in(r.start, r.end) > 0
                })
                .collect();
            if expect.is_empty() {
                continue; // (not even opened: with many shards, most own none of a batch)
            }
            let records = inputs.store(i)?.points_in(a..b)?;
            let dir = &inputs.list[i].dir;
            let mut next = 0usize;
            for rec in records {
                let rec = rec.map_err(|(p, why)| damaged(dir, p, &why))?;
                let p = rec.point;
                match expect.get(next) {
                    Some(&q) if q < p => {
                        return Err(damaged(dir, q, "its record is missing"));
                    }
                    Some(&q) if q == p && rec.closed => next += 1,
                    _ => {
                        return Err(damaged(dir, p, "a record a finished shard cannot have"));
                    }
                }
                let seeds = Share { plan, shard }.point_seeds(p as usize);
                let stats = PointStats::decode(&rec.stats, plan.shape(p as usize), seeds)
                    .map_err(|why| damaged(dir, p, &why))?;
                merged
                    .entry(p)
                    .or_insert_with(|| PointStats::new(plan.shape(p as usize)))
                    .merge(&stats);
            }
            if let Some(&p) = expect.get(next) {
                return Err(damaged(dir, p, "its record is missing"));
            }
        }
        for (p, stats) in merged {
            done += stats.seeds;
            st.absorb_point(p as usize, stats)?;
        }
        progress(done, total);
        a = b;
    }
    Ok(())
}

/// Seed rows: every chunk's, from the shard that ran it. A whole folder (`n == 1`) dropped its
/// rows when it wrote its `seeds.csv`: they are regenerated (they depend only on the plan).
fn merge_rows(
    inputs: &mut Inputs<'_>,
    st: &mut SweepState<'_>,
    n: u32,
    threads: usize,
) -> Result<(), SweepError> {
    for i in 0..inputs.list.len() {
        let shard = inputs.list[i].shard;
        let mut rows: Vec<(u64, u64, Vec<u8>)> = Vec::new();
        let mut bad = None;
        inputs.store(i)?.rows(
            0..u64::MAX,
            |chunk, n, data, ok| -> Result<(), SweepError> {
                if !ok || !shard.owns(chunk) {
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
            return Err(merge_err(MergeError::Rows {
                dir: inputs.list[i].dir.clone(),
                chunk,
            }));
        }
        for (c, n, d) in rows {
            st.absorb_rows(c, n, d)?;
        }
    }
    let mismatch = st.rows_mismatch()?;
    if n == 1 && !mismatch.is_empty() {
        // One whole folder: it dropped its rows when it wrote its seeds.csv.
        st.regenerate_rows(mismatch, threads)?;
    } else if let Some(&p) = mismatch.first() {
        return Err(merge_err(MergeError::RowsMismatch(p as u64)));
    }
    Ok(())
}

/// Shards that are missing (no folder given) or not finished, named in one line.
fn incomplete(n: u32, missing: &[u32], unfinished: &[(u32, PathBuf)]) -> String {
    let dirs = |ix: &[(u32, PathBuf)]| {
        let mut v: Vec<String> = ix
            .iter()
            .take(3)
            .map(|(_, d)| d.display().to_string())
            .collect();
        if ix.len() > 3 {
            v.push(format!("... and {} more", ix.len() - 3));
        }
        v.join(", ")
    };
    let plural = |c: usize| if c > 1 { "s" } else { "" };
    let mut ks: Vec<u32> = unfinished.iter().map(|(k, _)| *k).collect();
    ks.sort_unstable();
    match (missing.len(), unfinished.len()) {
        (0, 1) => format!(
            "{} is not a finished shard: rerun its sweep command to finish it (it resumes), then merge",
            unfinished[0].1.display()
        ),
        (0, u) => format!(
            "{u} shards are not finished ({}: {}): rerun their sweep commands to finish them (they resume), then merge",
            compact(&ks, n),
            dirs(unfinished)
        ),
        (m, 0) => format!(
            "missing shard{} {} of {n}: run {} and merge all {n} folders",
            plural(m),
            compact(missing, n),
            if m > 1 { "them" } else { "it" },
        ),
        (m, u) => format!(
            "missing shard{} {} of {n}, and shard{} {} not finished ({}): run the missing, rerun the unfinished (they resume), then merge all {n}",
            plural(m),
            compact(missing, n),
            plural(u),
            compact(&ks, n),
            dirs(unfinished)
        ),
    }
}

fn damaged(dir: &Path, point: u64, why: &str) -> SweepError {
    merge_err(MergeError::Record {
        dir: dir.into(),
        point,
        why: why.into(),
    })
}
