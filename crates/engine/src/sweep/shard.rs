//! Which shards of a sweep this process runs: `--shard K/N`, a list (`3,7,11/16`, `1-4,9/16`),
//! or `auto` / `auto/N`, read from the environment a scheduler gives an array task.
//!
//! A sweep cut into N shards has one folder per shard (`OUT/shard-K`, through the `{shard}`
//! placeholder in `--out`); a process may run several of them, one after another, each an
//! ordinary shard folder resumable on its own. That is how a 10,000-way split fits under a
//! site's 1,000-task array limit.
//!
//! `auto` asks the scheduler which task this is, as index t (from 0) among T tasks:
//! - Slurm job arrays: `SLURM_ARRAY_TASK_ID`, `_MIN`, `_MAX`, `_STEP`, `_COUNT`, with
//!   t = (ID - MIN) / STEP and T = COUNT, so any range and step works (`--array=0-15`, `1-16`,
//!   `1-61:4`); an array given as an irregular list (`--array=1,5,6`) has no such numbering and
//!   is refused;
//! - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` is t; a pod cannot see the Job's
//!   completion count, so `auto/N` must give it (T = N, one shard per pod).
//!
//! The N shards (`auto` means N = T) are dealt round robin over the T tasks: task t runs shards
//! t+1, t+1+T, t+1+2T, ... up to N. `--array=0-999` with `--shard auto/10000` gives every task
//! ten shards.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::Shard;
use crate::error::{Param, Worded, Words};
use cavesweep_core::quote::quote;

/// The Slurm variables `auto` reads, in the order they are named in errors.
pub const SLURM_VARS: [&str; 5] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
];
/// The Kubernetes Indexed Job variable `auto` reads.
pub const K8S_VAR: &str = "JOB_COMPLETION_INDEX";
/// The placeholder in `--out` replaced by each shard's number K.
pub const PLACEHOLDER: &str = "{shard}";

/// Why the shards to run could not be worked out. One line each; the data is kept so a caller
/// can act on the case, not only print it. Messages name settings through [`Words`]
/// ([`Worded`]); `Display` is the library's words.
#[derive(Debug)]
pub enum ShardError {
    /// Shard text that is not K/N, a list, `auto` or `auto/N`.
    Syntax(String),
    /// A list names a shard twice.
    Twice(String),
    /// `JOB_COMPLETION_INDEX` is not a whole number.
    K8sIndex(String),
    /// No scheduler variable is set; `in_slurm_job`: in a Slurm job that is not an array.
    NoTask {
        /// `SLURM_JOB_ID` is set: a Slurm job, but not an array (the message says to submit one).
        in_slurm_job: bool,
    },
    /// `SLURM_ARRAY_TASK_ID` is set but these others are not.
    SlurmMissing(Vec<&'static str>),
    /// A Slurm variable that is not a whole number.
    SlurmNumber {
        /// The variable.
        name: &'static str,
        /// Its value.
        text: String,
    },
    /// The task id is outside the array's range.
    OutsideArray {
        /// `SLURM_ARRAY_TASK_ID`.
        id: u64,
        /// `SLURM_ARRAY_TASK_MIN`.
        min: u64,
        /// `SLURM_ARRAY_TASK_MAX`.
        max: u64,
    },
    /// The array is an irregular list, so its tasks have no numbering 1..count.
    IrregularArray {
        /// `SLURM_ARRAY_TASK_ID`.
        id: u64,
        /// `SLURM_ARRAY_TASK_MIN`.
        min: u64,
        /// `SLURM_ARRAY_TASK_MAX`.
        max: u64,
        /// `SLURM_ARRAY_TASK_STEP`.
        step: u64,
        /// `SLURM_ARRAY_TASK_COUNT` (a range with a step has `(max - min) / step + 1`).
        count: u64,
    },
    /// The scheduler does not tell the task count and `auto/N` did not give it.
    CountUnknown {
        /// The scheduler, for the message (`Kubernetes Indexed Job`).
        scheduler: &'static str,
    },
    /// More tasks than a sweep can have shards.
    TooManyTasks(u64),
    /// More tasks than shards: some tasks would idle.
    MoreTasksThanShards {
        /// The shards the sweep is split into (`auto/N`).
        n: u32,
        /// The scheduler's task count.
        count: u64,
        /// The scheduler, for the message (`Slurm array`).
        scheduler: &'static str,
    },
    /// The task index is past the last task.
    PastLastTask {
        /// The shards the sweep is split into (`auto/N`).
        n: u32,
        /// The task's 0-based index.
        index: u64,
        /// The task count (N itself when the scheduler does not say).
        count: u64,
    },
    /// More shards than chunks.
    MoreShardsThanChunks {
        /// The shards asked for.
        n: u64,
        /// The sweep's chunks, over all its grid points.
        chunks: u64,
        /// Seeds per chunk.
        chunk: u64,
        /// The way to cut finer.
        finer: Finer,
    },
    /// An output path with the placeholder that is not UTF-8.
    OutNotUtf8(String),
    /// The placeholder without a shard setting.
    PlaceholderWithoutShard(String),
    /// Several shards (or `auto`) need the placeholder in the output path.
    NeedsPlaceholder {
        /// The shard setting as given.
        arg: String,
        /// Shards this process runs (`None`: chosen by `auto`).
        runs: Option<u64>,
        /// The output path given, its trailing `/` trimmed: the message suggests
        /// `OUT/shard-{shard}`.
        out: String,
    },
}

/// How a sweep with more shards than chunks can be cut finer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finer {
    /// Chunks of at most this many seeds give every shard one.
    Chunk(u64),
    /// It cannot: the sweep has only this many caves.
    TooFewCaves(u64),
}

impl Worded for ShardError {
    fn message(&self, w: &Words) -> String {
        let shard = w.name(Param::Shard);
        let auto = w.with(Param::Shard, "auto");
        let give_kn = w.with(Param::Shard, "K/N");
        match self {
            ShardError::Syntax(s) => format!(
                "{}: expected K/N with 1 <= K <= N, a list of K like 3,7,11/16 or 1-4/16, auto or auto/N",
                w.given(Param::Shard, s)
            ),
            ShardError::Twice(s) => {
                format!("{}: a shard is named twice", w.with(Param::Shard, s))
            }
            ShardError::K8sIndex(v) => format!(
                "{auto}: {K8S_VAR}={} is not a task index (a whole number from 0)",
                quote(v)
            ),
            ShardError::NoTask { in_slurm_job } => format!(
                "{auto}: no scheduler task found{}: none of {}, {K8S_VAR} is set; run it as a Slurm array task or a Kubernetes Indexed Job, or give {give_kn}",
                if *in_slurm_job {
                    " (this Slurm job is not an array: submit it with sbatch --array=...)"
                } else {
                    ""
                },
                SLURM_VARS.join(", ")
            ),
            ShardError::SlurmMissing(vars) => format!(
                "{auto}: SLURM_ARRAY_TASK_ID is set but {} {} not (Slurm sets them all for an array task; is this Slurm older than 15.08?); give {give_kn}",
                vars.join(", "),
                if vars.len() > 1 { "are" } else { "is" }
            ),
            ShardError::SlurmNumber { name, text } => {
                format!("{auto}: {name}={} is not a whole number", quote(text))
            }
            ShardError::OutsideArray { id, min, max } => format!(
                "{auto}: SLURM_ARRAY_TASK_ID={id} is outside the array's range {min}-{max} (SLURM_ARRAY_TASK_MIN, _MAX): not a task of this array; give {give_kn}"
            ),
            ShardError::IrregularArray {
                id,
                min,
                max,
                step,
                count,
            } => format!(
                "{auto}: this Slurm array (task {id}, min {min}, max {max}, step {step}, count {count}) is not a range with a step, so its tasks cannot be numbered 1..{count}; submit the whole array as --array=A-B or --array=A-B:S (finished shards only verify their files when rerun), or give {give_kn}"
            ),
            ShardError::CountUnknown { scheduler } => format!(
                "{auto}: a {scheduler} does not say how many tasks it has; give {} with N its completion count",
                w.with(Param::Shard, "auto/N")
            ),
            ShardError::TooManyTasks(n) => {
                format!("{auto}: {n} tasks is more shards than a sweep can have")
            }
            ShardError::MoreTasksThanShards {
                n,
                count,
                scheduler,
            } => format!(
                "{}: the {scheduler} has {count} tasks but the sweep only {n} shards, so some tasks would have nothing to do; use at most {n} tasks or {}",
                w.with(Param::Shard, &format!("auto/{n}")),
                w.with(Param::Shard, &format!("auto/{count}"))
            ),
            ShardError::PastLastTask { n, index, count } => format!(
                "{}: task index {index} is past the last of {count} tasks",
                w.with(Param::Shard, &format!("auto/{n}"))
            ),
            ShardError::MoreShardsThanChunks {
                n,
                chunks,
                chunk,
                finer,
            } => {
                let s = if *chunks == 1 { "" } else { "s" };
                let how = match finer {
                    Finer::Chunk(max) => format!(
                        ", or {} (or less) to cut it finer",
                        w.with(Param::Chunk, &max.to_string())
                    ),
                    Finer::TooFewCaves(caves) => format!(" (it has only {caves} caves)"),
                };
                format!(
                    "{shard}: {n} shards, but this sweep has only {chunks} chunk{s} ({chunk} seeds each), so some shards would have nothing to do; use at most {chunks} shard{s}{how}"
                )
            }
            ShardError::OutNotUtf8(out) => format!(
                "{}: a path with {PLACEHOLDER} must be valid UTF-8",
                w.with(Param::Out, out)
            ),
            ShardError::PlaceholderWithoutShard(out) => format!(
                "{} contains {PLACEHOLDER} but no {shard} was given; {PLACEHOLDER} names the folder of each shard of a split run",
                w.with(Param::Out, out)
            ),
            ShardError::NeedsPlaceholder { arg, runs, out } => format!(
                "{}{}; put {PLACEHOLDER} in {} (replaced by the shard number K), e.g. {}",
                w.with(Param::Shard, arg),
                match runs {
                    None => ": every task of an array needs its own folder".to_string(),
                    Some(n) => format!(" runs {n} shards, each in its own folder"),
                },
                w.name(Param::Out),
                w.with(Param::Out, &format!("{out}/shard-{PLACEHOLDER}"))
            ),
        }
    }
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&Words::LIBRARY))
    }
}

impl std::error::Error for ShardError {}

/// `--shard` as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardArg {
    /// Shards named explicitly: inclusive ranges of K (a single K is `K..=K`) of N.
    List {
        /// The ranges `(first, last)` of K, in the order given, none overlapping.
        ranges: Vec<(u32, u32)>,
        /// N, the shards the sweep is split into.
        n: u32,
    },
    /// From the scheduler's environment, with N given (`auto/N`) or the task count (`auto`).
    Auto {
        /// N from `auto/N`; `None` for `auto` (N is the task count).
        n: Option<u32>,
    },
}

impl FromStr for ShardArg {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<ShardArg, ShardError> {
        let err = || ShardError::Syntax(s.into());
        let (ks, n) = match s.split_once('/') {
            Some((ks, n)) => (ks.trim(), Some(n.trim())),
            None => (s.trim(), None),
        };
        let n: Option<u32> = match n {
            Some(n) => Some(n.parse().ok().filter(|&n| n > 0).ok_or_else(err)?),
            None => None,
        };
        if ks == "auto" {
            return Ok(ShardArg::Auto { n });
        }
        let n = n.ok_or_else(err)?;
        let k = |t: &str| -> Result<u32, ShardError> {
            t.trim()
                .parse()
                .ok()
                .filter(|&k| (1..=n).contains(&k))
                .ok_or_else(err)
        };
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for part in ks.split(',') {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (k(a)?, k(b)?),
                None => (k(part)?, k(part)?),
            };
            if a > b {
                return Err(err());
            }
            ranges.push((a, b));
        }
        let mut sorted = ranges.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[1].0 <= w[0].1) {
            return Err(ShardError::Twice(s.to_string()));
        }
        Ok(ShardArg::List { ranges, n })
    }
}

impl fmt::Display for ShardArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardArg::Auto { n: None } => f.write_str("auto"),
            ShardArg::Auto { n: Some(n) } => write!(f, "auto/{n}"),
            ShardArg::List { ranges, n } => {
                for (i, &(a, b)) in ranges.iter().enumerate() {
                    let sep = if i > 0 { "," } else { "" };
                    if a == b {
                        write!(f, "{sep}{a}")?;
                    } else {
                        write!(f, "{sep}{a}-{b}")?;
                    }
                }
                write!(f, "/{n}")
            }
        }
    }
}

impl From<Shard> for ShardArg {
    fn from(s: Shard) -> ShardArg {
        ShardArg::List {
            ranges: vec![(s.k, s.k)],
            n: s.n,
        }
    }
}

/// An array task, as the scheduler describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// 0-based index among the tasks.
    pub index: u64,
    /// Number of tasks, when the scheduler says it.
    pub count: Option<u64>,
    /// The scheduler, for messages: `Slurm array` or `Kubernetes Indexed Job`.
    pub scheduler: &'static str,
}

impl Task {
    /// The task this process is, from the scheduler's variables (`var` looks one up).
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<Task, ShardError> {
        if var(SLURM_VARS[0]).is_some() {
            return slurm_task(var);
        }
        if let Some(i) = var(K8S_VAR) {
            let index = i
                .trim()
                .parse()
                .map_err(|_| ShardError::K8sIndex(i.clone()))?;
            return Ok(Task {
                index,
                count: None,
                scheduler: "Kubernetes Indexed Job",
            });
        }
        Err(ShardError::NoTask {
            in_slurm_job: var("SLURM_JOB_ID").is_some(),
        })
    }
}

/// A Slurm array task: t = (ID - MIN) / STEP, T = COUNT, checked for consistency (an array given
/// as an irregular list cannot be numbered this way).
fn slurm_task(var: &dyn Fn(&str) -> Option<String>) -> Result<Task, ShardError> {
    let missing: Vec<&str> = SLURM_VARS
        .iter()
        .copied()
        .filter(|v| var(v).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(ShardError::SlurmMissing(missing));
    }
    let mut v = [0u64; 5];
    for (slot, name) in v.iter_mut().zip(SLURM_VARS) {
        let text = var(name).unwrap_or_default();
        *slot = text.trim().parse().map_err(|_| ShardError::SlurmNumber {
            name,
            text: text.clone(),
        })?;
    }
    let [id, min, max, step, count] = v;
    if id < min || id > max {
        return Err(ShardError::OutsideArray { id, min, max });
    }
    let regular = step >= 1
        && min <= id
        && id <= max
        && (id - min) % step == 0
        && (max - min) / step + 1 == count
        && (max - min) % step == 0;
    if !regular {
        return Err(ShardError::IrregularArray {
            id,
            min,
            max,
            step,
            count,
        });
    }
    Ok(Task {
        index: (id - min) / step,
        count: Some(count),
        scheduler: "Slurm array",
    })
}

/// The shards one process runs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shards {
    n: u32,
    /// Inclusive K ranges, each run with stride `stride`.
    ranges: Vec<(u32, u32)>,
    stride: u32,
    /// Chosen by `auto` (every task of an array shares one `--out`, so `{shard}` is needed).
    auto: bool,
}

impl Shards {
    /// The whole sweep (no `--shard`).
    pub fn whole() -> Shards {
        Shards {
            n: 1,
            ranges: vec![(1, 1)],
            stride: 1,
            auto: false,
        }
    }

    /// Resolve `--shard`; `var` looks up an environment variable (for `auto`).
    pub fn resolve(
        arg: &ShardArg,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shards, ShardError> {
        match arg {
            ShardArg::List { ranges, n } => Ok(Shards {
                n: *n,
                ranges: ranges.clone(),
                stride: 1,
                auto: false,
            }),
            ShardArg::Auto { n } => {
                let task = Task::from_env(var)?;
                Shards::for_task(task, *n)
            }
        }
    }

    /// Deal `n` shards (default: one per task) round robin over the scheduler's tasks and take
    /// `task`'s share.
    pub fn for_task(task: Task, n: Option<u32>) -> Result<Shards, ShardError> {
        let count = match (task.count, n) {
            (Some(c), _) => c,
            (None, Some(n)) => n as u64,
            (None, None) => {
                return Err(ShardError::CountUnknown {
                    scheduler: task.scheduler,
                });
            }
        };
        let n = match n {
            Some(n) => n,
            None => u32::try_from(count).map_err(|_| ShardError::TooManyTasks(count))?,
        };
        if count > n as u64 {
            return Err(ShardError::MoreTasksThanShards {
                n,
                count,
                scheduler: task.scheduler,
            });
        }
        if task.index >= count {
            return Err(ShardError::PastLastTask {
                n,
                index: task.index,
                count,
            });
        }
        let first = task.index as u32 + 1;
        let stride = count as u32;
        let last = first + (n - first) / stride * stride;
        Ok(Shards {
            n,
            ranges: vec![(first, last)],
            stride,
            auto: true,
        })
    }

    /// N, the number of shards of the split.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// How many shards this process runs.
    pub fn len(&self) -> u64 {
        self.ranges
            .iter()
            .map(|&(a, b)| ((b - a) / self.stride) as u64 + 1)
            .sum()
    }

    /// Always false: at least one shard is run.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The shards, in order.
    pub fn iter(&self) -> impl Iterator<Item = Shard> + '_ {
        let (n, stride) = (self.n, self.stride as usize);
        self.ranges
            .iter()
            .flat_map(move |&(a, b)| (a..=b).step_by(stride).map(move |k| Shard { k, n }))
    }

    /// A split into more shards than the sweep has chunks would leave shards with nothing to do
    /// (a chunk is the unit of work a shard owns): refused, saying how to cut finer.
    pub fn check_plan(&self, plan: &super::Plan) -> Result<(), ShardError> {
        let chunks = plan.n_chunks();
        let n = self.n as u64;
        if n <= chunks {
            return Ok(());
        }
        // Seeds per chunk that give every shard a chunk: ceil(n / points) chunks per point.
        let per_point = n.div_ceil(plan.n_points() as u64);
        let max = plan.n_seeds() / per_point;
        let finer = if max == 0 {
            Finer::TooFewCaves(plan.n_caves())
        } else {
            Finer::Chunk(max)
        };
        Err(ShardError::MoreShardsThanChunks {
            n,
            chunks,
            chunk: plan.chunk,
            finer,
        })
    }

    /// The output folder of `shard`: `out` with `{shard}` replaced by K. Call
    /// [`Shards::check_out`] first.
    pub fn dir(&self, out: &Path, shard: Shard) -> PathBuf {
        match out.to_str() {
            Some(s) if s.contains(PLACEHOLDER) => {
                PathBuf::from(s.replace(PLACEHOLDER, &shard.k.to_string()))
            }
            _ => out.to_path_buf(),
        }
    }

    /// Every shard needs its own folder: `{shard}` must be in `out` when several shards run or
    /// when `auto` chose them (the tasks of an array share one command line), and makes no
    /// sense without `--shard`.
    pub fn check_out(&self, out: &Path, given: Option<&ShardArg>) -> Result<(), ShardError> {
        let text = out.to_string_lossy();
        let has = text.contains(PLACEHOLDER);
        if has && out.to_str().is_none() {
            return Err(ShardError::OutNotUtf8(text.to_string()));
        }
        let parent = || text.trim_end_matches('/').to_string();
        match given {
            None if has => Err(ShardError::PlaceholderWithoutShard(text.to_string())),
            Some(arg) if !has && self.auto => Err(ShardError::NeedsPlaceholder {
                arg: arg.to_string(),
                runs: None,
                out: parent(),
            }),
            Some(arg) if !has && self.len() > 1 => Err(ShardError::NeedsPlaceholder {
                arg: arg.to_string(),
                runs: Some(self.len()),
                out: parent(),
            }),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Shards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ks: Vec<u32> = self.iter().map(|s| s.k).collect();
        f.write_str(&compact(&ks, self.n))
    }
}

/// Shard numbers as short text: `2/16, 5-9/16`. Runs of three or more become ranges; past
/// twenty items, the rest is counted (`... and 812 more`), so the text stays one short line
/// even for a 10,000-way split.
pub fn compact(ks: &[u32], n: u32) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            items.push(format!("{}-{}/{n}", ks[i], ks[j]));
            i = j + 1;
        } else {
            items.push(format!("{}/{n}", ks[i]));
            i += 1;
        }
    }
    const SHOWN: usize = 20;
    if items.len() > SHOWN {
        let rest = items.len() - SHOWN;
        items.truncate(SHOWN);
        items.push(format!("... and {rest} more"));
    }
    items.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn slurm(
        id: u64,
        min: u64,
        max: u64,
        step: u64,
        count: u64,
    ) -> impl Fn(&str) -> Option<String> {
        let v = [id, min, max, step, count].map(|x| x.to_string());
        let pairs: Vec<(&str, &str)> = SLURM_VARS
            .iter()
            .copied()
            .zip(v.iter().map(String::as_str))
            .collect();
        env(&pairs)
    }

    fn ks(arg: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Vec<(u32, u32)>, String> {
        let arg: ShardArg = arg.parse().map_err(|e: ShardError| e.to_string())?;
        let s = Shards::resolve(&arg, var).map_err(|e| e.to_string())?;
        Ok(s.iter().map(|s| (s.k, s.n)).collect())
    }

    #[test]
    fn lists_and_ranges_parse_and_print() {
        let none = env(&[]);
        assert_eq!(ks("3/16", &none).unwrap(), [(3, 16)]);
        assert_eq!(
            ks("3,7,11/16", &none).unwrap(),
            [(3, 16), (7, 16), (11, 16)]
        );
        assert_eq!(
            ks("1-3,9/16", &none).unwrap(),
            [(1, 16), (2, 16), (3, 16), (9, 16)]
        );
        for bad in [
            "0/3", "4/3", "3", "a/3", "1,,2/3", "3-1/4", "1-5/4", "1/0", "/3", "auto/0", "auto/x",
        ] {
            assert!(bad.parse::<ShardArg>().is_err(), "{bad}");
        }
        let twice = "1-3,2/4".parse::<ShardArg>().unwrap_err().to_string();
        assert!(twice.contains("named twice"), "{twice}");
        for s in ["3/16", "1-3,9/16", "auto", "auto/40"] {
            assert_eq!(s.parse::<ShardArg>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn slurm_arrays_of_any_range_and_step() {
        // --array=0-2: tasks 0, 1, 2 are shards 1, 2, 3 of 3.
        for id in 0..3 {
            assert_eq!(
                ks("auto", &slurm(id, 0, 2, 1, 3)).unwrap(),
                [(id as u32 + 1, 3)]
            );
        }
        // --array=1-16:4 (1, 5, 9, 13).
        for (i, id) in [1, 5, 9, 13].into_iter().enumerate() {
            assert_eq!(
                ks("auto", &slurm(id, 1, 13, 4, 4)).unwrap(),
                [(i as u32 + 1, 4)]
            );
        }
        // --array=1-7:3 with six shards: every task runs two.
        assert_eq!(
            ks("auto/6", &slurm(1, 1, 7, 3, 3)).unwrap(),
            [(1, 6), (4, 6)]
        );
        assert_eq!(
            ks("auto/6", &slurm(4, 1, 7, 3, 3)).unwrap(),
            [(2, 6), (5, 6)]
        );
        assert_eq!(
            ks("auto/6", &slurm(7, 1, 7, 3, 3)).unwrap(),
            [(3, 6), (6, 6)]
        );
        // A 10,000-way split over 1,000 tasks, uneven splits too: every shard exactly once.
        for (tasks, n) in [(1000u64, 10_000u32), (3, 7), (5, 5), (1, 4)] {
            let mut seen = vec![0u32; n as usize + 1];
            for id in 0..tasks {
                let s = Shards::resolve(
                    &ShardArg::Auto { n: Some(n) },
                    &slurm(id + 100, 100, 100 + tasks - 1, 1, tasks),
                )
                .unwrap();
                assert_eq!(s.len(), s.iter().count() as u64);
                for sh in s.iter() {
                    assert_eq!(sh.n, n);
                    seen[sh.k as usize] += 1;
                }
            }
            assert!(
                seen[1..].iter().all(|&c| c == 1),
                "{tasks} tasks, {n} shards"
            );
        }
    }

    #[test]
    fn slurm_misuse_is_one_line_naming_the_problem() {
        let e = |arg: &str, var: &dyn Fn(&str) -> Option<String>| {
            let e = ks(arg, var).unwrap_err();
            assert_eq!(e.lines().count(), 1, "{e}");
            e
        };
        // --array=1,5,6: MIN 1, MAX 6, STEP 1, COUNT 3 (what Slurm 22.05 sets).
        let irregular = e("auto", &slurm(5, 1, 6, 1, 3));
        assert!(irregular.contains("not a range with a step"), "{irregular}");
        let more_tasks = e("auto/2", &slurm(0, 0, 2, 1, 3));
        assert!(
            more_tasks.contains("3 tasks but the sweep only 2 shards"),
            "{more_tasks}"
        );
        let partial = e("auto", &env(&[("SLURM_ARRAY_TASK_ID", "3")]));
        assert!(partial.contains("SLURM_ARRAY_TASK_MIN"), "{partial}");
        let junk = e(
            "auto",
            &env(&[
                ("SLURM_ARRAY_TASK_ID", "x"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "1"),
                ("SLURM_ARRAY_TASK_STEP", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ]),
        );
        assert!(junk.contains("SLURM_ARRAY_TASK_ID=\"x\""), "{junk}");
        let outside = e("auto", &slurm(9, 0, 2, 1, 3));
        assert!(
            outside.contains("outside the array's range 0-2"),
            "{outside}"
        );
        let nothing = e("auto", &env(&[]));
        for v in SLURM_VARS.iter().chain([&K8S_VAR]) {
            assert!(nothing.contains(v), "{nothing} lacks {v}");
        }
        let not_array = e("auto", &env(&[("SLURM_JOB_ID", "12")]));
        assert!(not_array.contains("not an array"), "{not_array}");
    }

    #[test]
    fn kubernetes_indexed_jobs_need_n() {
        let pod = |i: &str| env(&[(K8S_VAR, i)]);
        assert_eq!(ks("auto/4", &pod("0")).unwrap(), [(1, 4)]);
        assert_eq!(ks("auto/4", &pod("3")).unwrap(), [(4, 4)]);
        assert!(
            ks("auto/4", &pod("4"))
                .unwrap_err()
                .contains("past the last")
        );
        assert!(ks("auto", &pod("0")).unwrap_err().contains("auto/N"));
        assert!(ks("auto/4", &pod("-1")).unwrap_err().contains(K8S_VAR));
    }

    #[test]
    fn every_shard_gets_its_own_folder() {
        let none = env(&[]);
        let arg = |s: &str| s.parse::<ShardArg>().unwrap();
        let out = Path::new("runs/a/shard-{shard}");
        let list = Shards::resolve(&arg("3,7/16"), &none).unwrap();
        list.check_out(out, Some(&arg("3,7/16"))).unwrap();
        let dirs: Vec<PathBuf> = list.iter().map(|s| list.dir(out, s)).collect();
        assert_eq!(
            dirs,
            [
                PathBuf::from("runs/a/shard-3"),
                PathBuf::from("runs/a/shard-7")
            ]
        );
        let plain = Path::new("runs/a");
        let e = list
            .check_out(plain, Some(&arg("3,7/16")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("runs/a/shard-{shard}"), "{e}");
        let one = Shards::resolve(&arg("3/16"), &none).unwrap();
        one.check_out(plain, Some(&arg("3/16"))).unwrap();
        assert_eq!(one.dir(plain, Shard { k: 3, n: 16 }), plain);
        let auto = Shards::resolve(&arg("auto"), &slurm(0, 0, 1, 1, 2)).unwrap();
        assert!(auto.check_out(plain, Some(&arg("auto"))).is_err());
        auto.check_out(out, Some(&arg("auto"))).unwrap();
        assert!(Shards::whole().check_out(out, None).is_err());
        Shards::whole().check_out(plain, None).unwrap();
    }

    #[test]
    fn compact_lists_stay_short() {
        assert_eq!(compact(&[2, 3], 3), "2/3, 3/3");
        assert_eq!(compact(&[1, 5, 6, 7, 8, 12], 16), "1/16, 5-8/16, 12/16");
        let many: Vec<u32> = (1..=10_000).step_by(2).collect();
        let s = compact(&many, 10_000);
        assert!(s.ends_with("... and 4980 more"), "{s}");
        assert!(s.len() < 300);
    }
}
