//! The cluster path on a real Slurm: `scripts/slurm_sweep.sh` submitted as job arrays with
//! `sbatch`, `scripts/slurm_merge.sh` as the dependent merge job, through the real binary.
//!
//! The test uses a cluster that already answers `sinfo`, or starts a one-node cluster of its own
//! (munged, slurmctld, slurmd from Debian's `munge` and `slurm-wlm`; config, state, spool and
//! logs under the target folder; free ports) and stops those daemons, by their process ids,
//! when it ends. Where Slurm cannot be started (not installed, not root) it says SKIPPED loudly
//! on stderr; in CI (`CI` set) it fails instead. `.ci/run` installs the packages.
//!
//! Cases, submitted together so their jobs share the node:
//! - `--array=0-2` (arrays often start at 0) then the merge job: byte-identical to one machine;
//! - the same with task 1 requeued (`scontrol requeue JOB_1`) while it runs: the failpoint
//!   `chunk-start@3:hold` (set for that task's first run only) holds it mid-sweep until Slurm's
//!   SIGTERM arrives, so the requeue hits a running sweep every time, without timing races;
//! - `--array=1-7:3` with `--shard auto/6`: three tasks of two shards each;
//! - a task cancelled before it ran: the merge job fails with one line naming shard 3/3.
//!
//! Job ids and timings are written straight to stderr (past the test harness's capture), so CI
//! logs show them.

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_same_outputs, run, scratch, stderr};

/// The sweep every case runs: 2 grid points x 1200 seeds in chunks of 100 (24 chunks), with a
/// gate and per-seed rows, so every output file has content.
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
    "100",
];

/// How long the whole test may wait for Slurm before it fails with a diagnosis.
const BUDGET: Duration = Duration::from_secs(110);

/// A line on the real stderr (not captured by the test harness).
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "slurm test: {msg}");
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `prog` on PATH or in the sbin folders (daemons live there; not every PATH has them).
fn find(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// Run `c`, killing it after `secs` (a misconfigured Slurm client can hang on timeouts).
fn output_within(c: &mut Command, secs: u64) -> Option<Output> {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        if child.try_wait().ok()?.is_some() {
            return child.wait_with_output().ok();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A Slurm cluster to submit to: one that was already there, or one this test started.
struct Cluster {
    /// `SLURM_CONF` for every Slurm command (`None`: the ambient cluster's own configuration).
    conf: Option<PathBuf>,
    /// Daemons this test started, in start order; stopped in reverse order on drop.
    daemons: Vec<(&'static str, Child)>,
    pids_file: Option<PathBuf>,
}

impl Cluster {
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        if let Some(conf) = &self.conf {
            c.env("SLURM_CONF", conf);
        }
        c
    }

    /// Whether `sinfo` answers with a node that can run jobs.
    fn answers(&self) -> bool {
        output_within(self.cmd("sinfo").args(["-h", "-o", "%T"]), 20).is_some_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| ["idle", "mixed", "allocated", "completing"].contains(&l.trim()))
        })
    }

    /// Reuse a cluster that answers, or start one. `Err` says why Slurm cannot run here.
    fn start() -> Result<Cluster, String> {
        if find("sinfo").is_none() || find("sbatch").is_none() {
            return Err("Slurm is not installed (no sinfo/sbatch; .ci/run installs Debian's slurm-wlm and munge)".into());
        }
        let ambient = Cluster {
            conf: None,
            daemons: Vec::new(),
            pids_file: None,
        };
        if ambient.answers() {
            say("using the Slurm cluster that already answers sinfo");
            return Ok(ambient);
        }
        let bins: Vec<PathBuf> = ["munged", "slurmctld", "slurmd"]
            .iter()
            .map(|d| find(d).ok_or_else(|| format!("{d} is not installed")))
            .collect::<Result<_, _>>()?;
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            return Err("starting slurmd needs root (it runs jobs as their users)".into());
        }
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("slurm-cluster");
        let pids_file = dir.join("pids");
        stop_leftovers(&pids_file);
        let _ = fs::remove_dir_all(&dir);
        for sub in ["munge", "state", "spool", "log"] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        let mut cluster = Cluster {
            conf: Some(dir.join("slurm.conf")),
            daemons: Vec::new(),
            pids_file: Some(pids_file),
        };
        let started = Instant::now();
        // munged, with its own key and socket.
        let mut key = vec![0u8; 128];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
            .map_err(|e| format!("/dev/urandom: {e}"))?;
        let munge = dir.join("munge");
        let key_file = munge.join("munge.key");
        fs::write(&key_file, &key).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&key_file, fs::Permissions::from_mode(0o600))
            .map_err(|e| e.to_string())?;
        fs::set_permissions(&munge, fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        let socket = munge.join("sock");
        let p = |x: &Path| x.display().to_string();
        cluster.spawn(
            "munged",
            Command::new(&bins[0]).args([
                "-F",
                "-f",
                &format!("--key-file={}", p(&key_file)),
                &format!("--socket={}", p(&socket)),
                &format!("--pid-file={}", p(&munge.join("munged.pid"))),
                &format!("--log-file={}", p(&dir.join("log/munged.log"))),
                &format!("--seed-file={}", p(&munge.join("seed"))),
            ]),
            &dir,
        )?;
        cluster.wait_for("munged's socket", &dir, 15, |_| socket.exists())?;
        // slurm.conf: one node with this machine's CPUs, everything under `dir`.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (ctld_port, d_port) = (free_port()?, free_port()?);
        let d = p(&dir);
        let conf = format!(
            "# Written by tests/slurm.rs: a one-node test cluster.
ClusterName=cavesweeptest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also delays a requeued job's restart (default 120 s); 5 is the least Slurm takes.
AuthInfo=socket={socket},cred_expire=5
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=cs1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes=cs1 Default=YES MaxTime=INFINITE State=UP
",
            socket = p(&socket)
        );
        let conf_path = cluster.conf.clone().expect("ours");
        fs::write(&conf_path, conf).map_err(|e| e.to_string())?;
        let conf_arg = p(&conf_path);
        cluster.spawn(
            "slurmctld",
            Command::new(&bins[1]).args(["-D", "-i", "-f", &conf_arg]),
            &dir,
        )?;
        cluster.spawn(
            "slurmd",
            Command::new(&bins[2]).args(["-D", "-N", "cs1", "-f", &conf_arg]),
            &dir,
        )?;
        cluster.wait_for("the node to be idle", &dir, 40, |c| c.answers())?;
        say(&format!(
            "started a one-node cluster ({cpus} CPUs, slurmctld port {ctld_port}) in {:.1} s: {}",
            started.elapsed().as_secs_f64(),
            cluster
                .daemons
                .iter()
                .map(|(n, c)| format!("{n} pid {}", c.id()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(cluster)
    }

    fn spawn(&mut self, name: &'static str, c: &mut Command, dir: &Path) -> Result<(), String> {
        let log =
            fs::File::create(dir.join(format!("log/{name}.out"))).map_err(|e| e.to_string())?;
        let child = c
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.daemons.push((name, child));
        if let Some(f) = &self.pids_file {
            let pids: String = self
                .daemons
                .iter()
                .map(|(n, c)| format!("{n} {}\n", c.id()))
                .collect();
            fs::write(f, pids).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Poll `ok` until it holds; fail (with the daemons' logs) if a daemon exits or time runs out.
    fn wait_for(
        &mut self,
        what: &str,
        dir: &Path,
        secs: u64,
        ok: impl Fn(&Cluster) -> bool,
    ) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if ok(self) {
                return Ok(());
            }
            let dead = self
                .daemons
                .iter_mut()
                .find_map(|(n, c)| c.try_wait().ok().flatten().map(|_| *n));
            if dead.is_some() || start.elapsed() > Duration::from_secs(secs) {
                let logs: String = [
                    "munged.out",
                    "slurmctld.out",
                    "slurmd.out",
                    "slurmctld.log",
                    "slurmd.log",
                ]
                .iter()
                .map(|f| {
                    let t = fs::read_to_string(dir.join("log").join(f)).unwrap_or_default();
                    let tail: Vec<&str> = t.lines().rev().take(8).collect();
                    format!(
                        "--- {f}:\n{}\n",
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    )
                })
                .collect();
                return Err(match dead {
                    Some(n) => format!("{n} exited while waiting for {what}\n{logs}"),
                    None => format!("timed out after {secs} s waiting for {what}\n{logs}"),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `sbatch --parsable ARGS` in `cwd`; the job id.
    fn sbatch(&self, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
        let mut c = self.cmd("sbatch");
        c.current_dir(cwd).arg("--parsable").args(args);
        c.env_remove("CAVESWEEP_FAILPOINT");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = output_within(&mut c, 30).expect("sbatch answers");
        assert!(o.status.success(), "sbatch {args:?}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        out.trim().split(';').next().unwrap().to_string()
    }

    fn scontrol(&self, args: &[&str]) {
        let o = output_within(self.cmd("scontrol").args(args), 30).expect("scontrol answers");
        assert!(o.status.success(), "scontrol {args:?}: {}", text(&o));
    }

    fn scancel(&self, id: &str) {
        let o = output_within(self.cmd("scancel").arg(id), 30).expect("scancel answers");
        assert!(o.status.success(), "scancel {id}: {}", text(&o));
    }

    /// Every record `scontrol show job ID` gives (one per array task once they are split out):
    /// `(ArrayTaskId or JobId, JobState, ExitCode)`.
    fn job_states(&self, id: &str) -> Vec<(String, String, String)> {
        let Some(o) = output_within(self.cmd("scontrol").args(["-o", "show", "job", id]), 30)
        else {
            return Vec::new();
        };
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                let field = |k: &str| {
                    l.split_whitespace()
                        .find_map(|f| f.strip_prefix(k))
                        .unwrap_or("")
                        .to_string()
                };
                let task = match field("ArrayTaskId=") {
                    t if t.is_empty() => field("JobId="),
                    t => t,
                };
                (task, field("JobState="), field("ExitCode="))
            })
            .collect()
    }

    fn squeue(&self) -> String {
        output_within(self.cmd("squeue").args(["-o", "%i %T %r"]), 20)
            .map(|o| text(&o))
            .unwrap_or_default()
    }
}

/// States a job no longer leaves.
const TERMINAL: [&str; 9] = [
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
];

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut stopped = Vec::new();
        for (name, mut child) in self.daemons.drain(..).rev() {
            stop(&mut child);
            stopped.push(format!("{name} pid {}", child.id()));
        }
        if let Some(f) = &self.pids_file {
            let _ = fs::remove_file(f);
        }
        if !stopped.is_empty() {
            say(&format!("stopped {}", stopped.join(", ")));
        }
    }
}

/// SIGTERM, then SIGKILL if it has not exited within 10 s; reaped either way.
fn stop(child: &mut Child) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let start = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Daemons a previous, killed run of this test left behind (their pids recorded in `pids`),
/// stopped if they are still those daemons.
fn stop_leftovers(pids: &Path) {
    let Ok(list) = fs::read_to_string(pids) else {
        return;
    };
    for line in list.lines().rev() {
        let Some((name, pid)) = line.split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.trim().parse::<libc::pid_t>() else {
            continue;
        };
        let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == name {
            say(&format!("stopping {name} pid {pid} left by an earlier run"));
            // SAFETY: plain kill(2) on a process verified to be that daemon.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let start = Instant::now();
            while Path::new(&format!("/proc/{pid}")).exists()
                && start.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// One submitted sweep array and its merge job.
struct Case {
    name: &'static str,
    dir: PathBuf,
    array: String,
    merge: String,
}

impl Case {
    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }

    fn log(&self, task: u32) -> PathBuf {
        self.dir
            .join(format!("cavesweep-{}_{task}.log", self.array))
    }

    fn merge_log(&self) -> PathBuf {
        self.dir.join(format!("cavesweep-merge-{}.log", self.merge))
    }
}

/// The sbatch flags every job gets: one CPU (the script asks for 8), a short time limit.
const JOB_FLAGS: [&str; 2] = ["--cpus-per-task=1", "--time=00:10:00"];

/// Submit `slurm_sweep.sh` as an array (extra sbatch flags `sb`, extra sweep flags `sweep`) and
/// `slurm_merge.sh` after it; `between` runs after the array is submitted, before the merge.
fn submit(
    cluster: &Cluster,
    root: &Path,
    name: &'static str,
    sb: &[&str],
    sweep: &[&str],
    bin: &Path,
    between: impl FnOnce(&str),
) -> Case {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    let script = repo().join("scripts/slurm_sweep.sh");
    let merge_script = repo().join("scripts/slurm_merge.sh");
    let env = [("CAVESWEEP", bin.to_str().unwrap())];
    let mut args: Vec<&str> = JOB_FLAGS.to_vec();
    args.extend_from_slice(sb);
    args.push(script.to_str().unwrap());
    args.push("out");
    args.extend_from_slice(&FLAGS);
    args.extend_from_slice(sweep);
    let array = cluster.sbatch(&dir, &env, &args);
    between(&array);
    let dep = format!("--dependency=afterany:{array}");
    let mut margs: Vec<&str> = JOB_FLAGS.to_vec();
    margs.extend([dep.as_str(), merge_script.to_str().unwrap(), "out"]);
    let merge = cluster.sbatch(
        &dir,
        &[("CAVESWEEP", env!("CARGO_BIN_EXE_cavesweep"))],
        &margs,
    );
    say(&format!(
        "case {name}: sbatch job {array} ({}), merge job {merge} (afterany:{array})",
        sb.iter()
            .copied()
            .filter(|a| a.starts_with("--array"))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    Case {
        name,
        dir,
        array,
        merge,
    }
}

/// Wait until every record of job `id` is in a terminal state; those records.
fn wait_done(
    cluster: &Cluster,
    case: &Case,
    id: &str,
    start: Instant,
) -> Vec<(String, String, String)> {
    loop {
        let states = cluster.job_states(id);
        if !states.is_empty() && states.iter().all(|s| TERMINAL.contains(&s.1.as_str())) {
            return states;
        }
        if start.elapsed() > BUDGET {
            panic!(
                "case {}: job {id} not finished after {} s: {states:?}\nsqueue:\n{}\nlogs:\n{}",
                case.name,
                BUDGET.as_secs(),
                cluster.squeue(),
                logs(&case.dir)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every Slurm log in a case folder, for failure messages.
fn logs(dir: &Path) -> String {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v.iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            format!(
                "--- {}\n{}",
                p.display(),
                fs::read_to_string(p).unwrap_or_default()
            )
        })
        .collect()
}

/// The merge job ended as `state` with exit code `exit`.
fn assert_merge(cluster: &Cluster, case: &Case, start: Instant, state: &str, exit: &str) {
    let m = wait_done(cluster, case, &case.merge, start);
    let a = wait_done(cluster, case, &case.array, start);
    assert!(
        m.len() == 1 && m[0].1 == state && m[0].2 == exit,
        "case {}: merge job {} ended {m:?}, expected {state} {exit}; array {a:?}\n{}",
        case.name,
        case.merge,
        logs(&case.dir)
    );
}

#[test]
fn slurm_arrays_requeue_steps_and_missing_shards() {
    let start = Instant::now();
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the Slurm test, but Slurm cannot be started: {why}"
            );
            say(&format!(
                "SKIPPED: the Slurm cluster test did not run: {why}"
            ));
            return;
        }
    };
    let root = scratch("slurm-cases");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cavesweep"));
    // The requeue case's binary: task 1 holds mid-sweep on its first run only (Slurm sets
    // SLURM_RESTART_COUNT on a requeued run).
    let wrapper = root.join("hold-task-1.sh");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$SLURM_ARRAY_TASK_ID\" = 1 ] && [ \"${{SLURM_RESTART_COUNT:-0}}\" = 0 ]; then\n  export CAVESWEEP_FAILPOINT=chunk-start@3:hold\nfi\nexec '{}' \"$@\"\n",
            bin.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();

    let requeue = submit(
        &cluster,
        &root,
        "requeue",
        &["--array=0-2"],
        &[],
        &wrapper,
        |_| {},
    );
    let plain = submit(
        &cluster,
        &root,
        "array-0-2",
        &["--array=0-2"],
        &[],
        &bin,
        |_| {},
    );
    let step = submit(
        &cluster,
        &root,
        "step-1-7-3",
        &["--array=1-7:3"],
        &["--shard", "auto/6"],
        &bin,
        |_| {},
    );
    let missing = submit(
        &cluster,
        &root,
        "missing",
        &["--array=0-2", "--hold"],
        &[],
        &bin,
        |id| {
            // Task 2 never runs: cancelled while held, then the rest released.
            cluster.scancel(&format!("{id}_2"));
            cluster.scontrol(&["release", id]);
        },
    );

    // The reference, on this machine, while Slurm works.
    let single = root.join("single");
    let mut args = vec!["sweep"];
    args.extend_from_slice(&FLAGS);
    args.extend(["--out", single.to_str().unwrap(), "--threads", "1"]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));

    // Requeue task 1 of `requeue` once it holds mid-sweep.
    let held = requeue.log(1);
    loop {
        if fs::read_to_string(&held).is_ok_and(|t| t.contains("holding until stopped")) {
            break;
        }
        if start.elapsed() > BUDGET {
            panic!(
                "task 1 of job {} never reached its hold\nsqueue:\n{}\n{}",
                requeue.array,
                cluster.squeue(),
                logs(&requeue.dir)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let task = format!("{}_1", requeue.array);
    cluster.scontrol(&["requeue", &task]);
    say(&format!(
        "case requeue: scontrol requeue {task} at {:.1} s, while it was sweeping",
        start.elapsed().as_secs_f64()
    ));

    for case in [&plain, &requeue, &step] {
        assert_merge(&cluster, case, start, "COMPLETED", "0:0");
        assert_same_outputs(&single, &case.out().join("merged"));
        say(&format!(
            "case {}: merged output byte-identical to one machine ({:.1} s)",
            case.name,
            start.elapsed().as_secs_f64()
        ));
    }
    // Arrays starting at 0 and with a step still make shard-1..N.
    for k in 1..=3 {
        assert!(plain.out().join(format!("shard-{k}")).is_dir(), "shard-{k}");
    }
    for k in 1..=6 {
        assert!(step.out().join(format!("shard-{k}")).is_dir(), "shard-{k}");
    }
    let first = fs::read_to_string(step.log(1)).unwrap();
    assert!(first.contains("running 2 shards (1/6, 4/6)"), "{first}");
    // The requeued task was stopped by SIGTERM after a checkpoint and resumed when rerun.
    let t1 = fs::read_to_string(&held).unwrap();
    assert!(t1.contains("interrupted after"), "{t1}");
    assert!(t1.contains("resumed) in"), "{t1}");
    assert!(t1.contains("run 1 on"), "{t1}");

    // The merge fails, in one line, naming the missing shard.
    assert_merge(&cluster, &missing, start, "FAILED", "1:0");
    let log = fs::read_to_string(missing.merge_log()).unwrap();
    assert_eq!(log.trim_end().lines().count(), 1, "{log}");
    assert!(log.contains("missing shard 3/3 of 3"), "{log}");
    assert!(!missing.out().join("merged/summary.csv").exists());
    say(&format!(
        "case missing: merge job {} failed as it should: {}",
        missing.merge,
        log.trim()
    ));
    say(&format!(
        "all cases passed in {:.1} s",
        start.elapsed().as_secs_f64()
    ));
    drop(cluster);
}
