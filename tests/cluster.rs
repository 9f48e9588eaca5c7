//! The cluster path without a scheduler: `--shard auto` from the environment variables a
//! scheduler sets, several shards per process, `merge --from` of many shard folders with few file
//! descriptors, the Kubernetes example's own command run as its pods would run it, and the GNU
//! parallel script retrying only its failed shards, the Slurm script run with an array task's
//! variables set by hand (one split per OUT). (The real Slurm is in tests/slurm.rs.)

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_one_line_error, assert_same_outputs, bin, scratch, stderr};

/// 2 grid points x 1200 seeds in chunks of 50: 48 chunks, so up to 48 shards.
const FLAGS: [&str; 12] = [
    "--preset",
    "chapter-strict",
    "--seeds",
    "0..1200",
    "--vary",
    "fill=0.45,0.5",
    "--gate",
    "connected_fraction>=0.999 && components<=1",
    "--per-seed",
    "all",
    "--chunk",
    "50",
];

const SCHEDULER_VARS: [&str; 7] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_JOB_ID",
    "JOB_COMPLETION_INDEX",
];

/// The binary with no scheduler variables inherited (the tests may run inside a Slurm job).
fn clean() -> Command {
    let mut c = bin();
    for v in SCHEDULER_VARS {
        c.env_remove(v);
    }
    c.env_remove("CAVESWEEP_FAILPOINT");
    c
}

fn sweep(out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = clean();
    c.arg("sweep")
        .args(FLAGS)
        .args(["--out", out.to_str().unwrap()])
        .args(extra);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn single(d: &Path) -> PathBuf {
    let s = d.join("single");
    let o = sweep(&s, &[], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    s
}

fn slurm_env(id: u32, min: u32, max: u32, step: u32, count: u32) -> Vec<(String, String)> {
    SCHEDULER_VARS[..5]
        .iter()
        .zip([id, min, max, step, count])
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn pairs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

#[test]
fn slurm_variables_pick_the_shards_of_any_array() {
    let d = scratch("cluster-auto");
    let reference = single(&d);
    // --array=3-15:4 (3, 7, 11, 15) with 8 shards: two per task.
    let out = d.join("stepped");
    let pattern = out.join("shard-{shard}");
    for id in [3, 7, 11, 15] {
        let env = slurm_env(id, 3, 15, 4, 4);
        let o = sweep(
            &pattern,
            &["--shard", "auto/8", "--threads", "1"],
            &pairs(&env),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let k = (id - 3) / 4 + 1;
        assert!(
            stderr(&o).contains(&format!("running 2 shards ({k}/8, {}/8)", k + 4)),
            "{}",
            stderr(&o)
        );
    }
    let merged = d.join("merged");
    let o = clean()
        .args(["merge", "--from", out.to_str().unwrap(), "--out"])
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference, &merged);
    // Rerunning a task (a requeue) verifies its finished shards instead of redoing them.
    let env = slurm_env(7, 3, 15, 4, 4);
    let o = sweep(&pattern, &["--shard", "auto/8"], &pairs(&env));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("already complete").count(),
        2,
        "{}",
        stderr(&o)
    );
}

#[test]
fn shard_misuse_is_a_one_line_error() {
    let d = scratch("cluster-misuse");
    let pattern = d.join("shard-{shard}");
    let plain = d.join("plain");
    let o = sweep(&pattern, &["--shard", "auto"], &[]);
    assert_one_line_error(&o, "SLURM_ARRAY_TASK_ID");
    assert!(
        stderr(&o).contains("JOB_COMPLETION_INDEX"),
        "{}",
        stderr(&o)
    );
    // --array=1,5,6 (a list: Slurm says min 1, max 6, step 1, count 3).
    let env = slurm_env(5, 1, 6, 1, 3);
    assert_one_line_error(
        &sweep(&pattern, &["--shard", "auto"], &pairs(&env)),
        "not a range with a step",
    );
    let env = slurm_env(0, 0, 2, 1, 3);
    assert_one_line_error(
        &sweep(&plain, &["--shard", "auto"], &pairs(&env)),
        "put {shard} in --out",
    );
    assert_one_line_error(
        &sweep(&plain, &["--shard", "1,3/4"], &[]),
        "put {shard} in --out",
    );
    assert_one_line_error(&sweep(&pattern, &[], &[]), "no --shard was given");
    assert_one_line_error(
        &sweep(
            &pattern,
            &["--shard", "auto"],
            &[("JOB_COMPLETION_INDEX", "2")],
        ),
        "auto/N",
    );
    assert_one_line_error(
        &sweep(&pattern, &["--shard", "1/100"], &[]),
        "--chunk 24 (or less)",
    );
    // A flag value clap rejects: its usual error (exit 2), naming the problem.
    let o = sweep(&pattern, &["--shard", "2-3,3/4"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a shard is named twice"),
        "{}",
        stderr(&o)
    );
    let empty = d.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let o = clean()
        .args(["merge", "--from", empty.to_str().unwrap(), "--out"])
        .arg(d.join("m"))
        .output()
        .unwrap();
    assert_one_line_error(&o, "no shard-K folders");
    // Nothing was written by any of them.
    let left: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["empty"], "{left:?}");
}

/// 40 shard folders (written by one process running all 40) merged with 40 file descriptors:
/// every input is opened, closed and reopened as needed instead of being held open (which would
/// need 80). Missing and unfinished shards are named together.
#[test]
fn many_shards_merge_with_few_open_files() {
    let d = scratch("cluster-many");
    let reference = single(&d);
    let out = d.join("split");
    let o = sweep(&out.join("shard-{shard}"), &["--shard", "1-40/40"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merge_limited = |from: &Path, to: &Path| -> Output {
        Command::new("bash")
            .arg("-c")
            .arg("ulimit -n 40 && exec \"$0\" merge --from \"$1\" --out \"$2\"")
            .arg(env!("CARGO_BIN_EXE_cavesweep"))
            .arg(from)
            .arg(to)
            .output()
            .unwrap()
    };
    let merged = d.join("merged");
    let o = merge_limited(&out, &merged);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference, &merged);
    // Shards 5-7 and 12 gone, 20 unfinished: one line names them all.
    for k in [5, 6, 7, 12] {
        fs::rename(out.join(format!("shard-{k}")), d.join(format!("away-{k}"))).unwrap();
    }
    fs::remove_dir_all(out.join("shard-20")).unwrap();
    let o = clean()
        .arg("sweep")
        .args(FLAGS)
        .args(["--shard", "20/40", "--out"])
        .arg(out.join("shard-20"))
        .env("CAVESWEEP_FAILPOINT", "final:summary.csv")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let o = merge_limited(&out, &d.join("m2"));
    assert_one_line_error(
        &o,
        "missing shards 5-7/40, 12/40 of 40, and shard 20/40 not finished",
    );
}

/// The Kubernetes example's container command, run as its pods would run it (index 0..N-1 in
/// JOB_COMPLETION_INDEX), with a smaller seed range and grid and a local folder for /data.
#[test]
fn kubernetes_example_runs_as_an_indexed_job() {
    let d = scratch("cluster-k8s");
    let yaml = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/k8s-indexed-job.yaml"),
    )
    .unwrap();
    let field = |k: &str| -> String {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in the manifest"))
            .trim()
            .to_string()
    };
    let completions: u32 = field("completions:").parse().unwrap();
    assert_eq!(field("completionMode:"), "Indexed");
    // The container's command: the `- ` items after `command:`.
    let command: Vec<String> = yaml
        .lines()
        .skip_while(|l| l.trim() != "command:")
        .skip(1)
        .map_while(|l| l.trim().strip_prefix("- ").map(str::to_string))
        .collect();
    assert_eq!(command[..2], ["cavesweep", "sweep"], "{command:?}");
    assert!(
        command.contains(&format!("--shard=auto/{completions}")),
        "the manifest's --shard must match its completions: {command:?}"
    );
    let data = d.join("data");
    let args: Vec<String> = command[1..]
        .iter()
        .map(|a| {
            if a.starts_with("--seeds=") {
                "--seeds=0..1200".into()
            } else if a.starts_with("--vary=") {
                "--vary=fill=0.45,0.5".into()
            } else {
                a.replace("/data", data.to_str().unwrap())
            }
        })
        .collect();
    let strip = |a: &String| !a.starts_with("--shard=") && !a.starts_with("--out=");
    let whole: Vec<&String> = args.iter().filter(|a| strip(a)).collect();
    let reference = d.join("single");
    let o = clean()
        .args(&whole)
        .arg("--out")
        .arg(&reference)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 0..completions {
        let o = clean()
            .args(&args)
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "pod {i}: {}", stderr(&o));
    }
    let run = data.join("run1");
    let merged = run.join("merged");
    let o = clean()
        .args(["merge", "--from", run.to_str().unwrap(), "--out"])
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference, &merged);
}

/// `scripts/parallel_sweep.sh`: a shard that dies is reported and the merge is not run; the same
/// command again reruns only that shard (parallel's --joblog/--resume-failed), then merges.
#[test]
fn parallel_script_retries_only_failed_shards() {
    let has_parallel = Command::new("parallel")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_parallel {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install GNU parallel (.ci/run does)"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED: parallel_script_retries_only_failed_shards: GNU parallel is not installed"
        );
        return;
    }
    let d = scratch("cluster-parallel");
    let reference = single(&d);
    // Shard 2 is killed at its first checkpoint, the first time only.
    let wrapper = d.join("flaky.sh");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *' 2/3 '*) if [ ! -e '{m}' ]; then touch '{m}'; export CAVESWEEP_FAILPOINT=checkpoint; fi;; esac\nexec '{b}' \"$@\"\n",
            m = d.join("failed-once").display(),
            b = env!("CARGO_BIN_EXE_cavesweep")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/parallel_sweep.sh");
    let out = d.join("par");
    let run = |flags: &[&str]| {
        Command::new("bash")
            .arg(&script)
            .args(["3", out.to_str().unwrap()])
            .args(flags)
            .env("CAVESWEEP", &wrapper)
            .output()
            .unwrap()
    };
    let o = run(&FLAGS);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 shard(s) failed"), "{}", stderr(&o));
    assert!(!out.join("merged").exists());
    let o = run(&FLAGS);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&reference, &out.join("merged"));
    // The joblog: a header, three first runs, one retry (shard 2's, which resumed).
    let log = fs::read_to_string(out.join("parallel.joblog")).unwrap();
    assert_eq!(log.lines().count(), 5, "{log}");
    assert!(log.lines().last().unwrap().contains("2/3"), "{log}");
    // Another command into the same folder is refused (the joblog would not fit it).
    let mut other = FLAGS.to_vec();
    other[3] = "0..600";
    let o = run(&other);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("another command"), "{}", stderr(&o));
}

/// `scripts/slurm_sweep.sh` as an array task runs it (the SLURM_ARRAY_TASK_* variables set by
/// hand, no scheduler): a user's `--threads` wins over SLURM_CPUS_PER_TASK; resubmitting the
/// same split with another range only verifies; a task of another split (another task count,
/// other flags) into the same OUT is refused before it writes a shard folder, one shard of the
/// same split named with `--shard K/N` is not; a task id outside its array is a one-line error
/// from cavesweep.
#[test]
fn slurm_script_keeps_one_split_per_out() {
    let d = scratch("cluster-slurm-script");
    let out = d.join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm_sweep.sh");
    let task = |env: &[(String, String)], flags: &[&str]| -> Output {
        let mut c = Command::new("bash");
        c.arg(&script).arg(&out).args(flags);
        for v in SCHEDULER_VARS {
            c.env_remove(v);
        }
        c.env_remove("CAVESWEEP_FAILPOINT")
            .env("CAVESWEEP", env!("CARGO_BIN_EXE_cavesweep"))
            .env("SLURM_CPUS_PER_TASK", "2")
            .envs(env.iter().map(|(k, v)| (k, v)));
        c.output().unwrap()
    };
    let mut flags = FLAGS.to_vec();
    flags.extend(["--threads", "1"]);
    // --array=0-2, task 0: shard 1 of 3, on the user's one thread.
    let o = task(&slurm_env(0, 0, 2, 1, 3), &flags);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("on 1 thread,"), "{}", stderr(&o));
    assert!(out.join("shard-1").is_dir());
    // Resubmitted as --array=1-3 (same three tasks): the same split, shard 1 only verified.
    let o = task(&slurm_env(1, 1, 3, 1, 3), &flags);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("already complete"), "{}", stderr(&o));
    // --array=0-3 into the same OUT: another split (4 shards), refused.
    let o = task(&slurm_env(3, 0, 3, 1, 4), &flags);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let last = stderr(&o);
    assert!(last.contains("holds another split"), "{last}");
    assert_eq!(last.trim_end().lines().count(), 1, "{last}");
    // Other sweep flags, same task count: refused too.
    let o = task(&slurm_env(2, 0, 2, 1, 3), &FLAGS[..4]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // --array=5 alone (one task) would make it shard 1/1: refused, not run.
    let o = task(&slurm_env(5, 5, 5, 1, 1), &flags);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let mut dirs: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["shard-1", "slurm-split"]);
    // One shard of the same split given explicitly (outside an array, `--shard=K/N` or
    // `--shard K/N`) is welcome.
    let mut one = flags.clone();
    one.push("--shard=3/3");
    let o = task(&[], &one);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("shard-3").is_dir());
    let mut one = flags.clone();
    one.extend(["--shard", "2/3"]);
    let o = task(&slurm_env(5, 5, 5, 1, 1), &one);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = d.join("merged");
    let o = clean()
        .args(["merge", "--from", out.to_str().unwrap(), "--out"])
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(&single(&d), &merged);
    // A task id outside the array: the script's info line, then cavesweep's one-line error.
    let o = task(&slurm_env(7, 0, 2, 1, 3), &flags);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.trim_end().lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("cavesweep: task 7 of array"), "{err}");
    assert!(
        lines[1].starts_with("cavesweep: error: --shard auto: SLURM_ARRAY_TASK_ID=7 is outside"),
        "{err}"
    );
}
