//! The cluster path on a real Slurm: `scripts/slurm_sweep.sh` submitted as job arrays with
//! `sbatch`, `scripts/slurm_merge.sh` as the dependent merge job, through the real binary.
//!
//! Which cluster. By default the test starts a private one-node cluster of its own (munged,
//! slurmctld, slurmd from Debian's `munge` and `slurm-wlm`, as root): its own `slurm.conf`, MUNGE
//! key and socket, free ports, state, spool and logs, all in `slurm-runs/PID/` under cargo's
//! test scratch folder (`target/tmp`), and every Slurm command it runs gets `SLURM_CONF` naming
//! that config (the caller's other `SLURM_*`/`SBATCH_*` variables removed). A cluster already on
//! the machine (the site's cluster seen from a login node, a stock one-node Slurm) is neither
//! submitted to nor disturbed. The test stops exactly the daemons it started, by their process
//! ids, also when a case fails (a drop guard, which first cancels the test's unfinished jobs);
//! daemons and jobs left by a run that was killed carry its folder in their environment
//! (`CAVESWEEP_SLURM_TEST_RUN`) and are stopped by the next run. Where Slurm cannot be started
//! (not installed, not root) it says SKIPPED loudly on stderr; in CI (`CI` set) it fails
//! instead. `.ci/run` installs the packages.
//!
//! `CAVESWEEP_SLURM_PARTITION=NAME` opts in to the cluster the Slurm commands reach as they are
//! (their `SLURM_CONF`, `SBATCH_ACCOUNT` and so on): every job goes to partition NAME, under the
//! caller's account, and nothing is started. The worktree must then be on a filesystem the
//! partition's nodes share. Jobs the test submitted that have not finished when it ends, passed
//! or failed, are cancelled.
//!
//! Waits follow Slurm's job states, never a fixed time. A wait fails when nothing changed for
//! three minutes, except while Slurm holds a job until a time it names: a requeued task is
//! `PENDING (BeginTime)` until its `EligibleTime` (in Slurm 22.05 the credential lifetime,
//! `AuthInfo` `cred_expire`, plus 1 s: 121 s on a stock config; the private cluster's config
//! sets 5), and that time is read from `scontrol show job` and waited for. Every wait also ends
//! after `CAVESWEEP_SLURM_WAIT` seconds (default 1200; a busy site's queue may need more). A
//! failed wait names what it waited for, each job's state and reason, and any hold.
//!
//! Cases, submitted together so their jobs share the node:
//! - `--array=0-2` (arrays often start at 0) then the merge job: byte-identical to one machine;
//! - the same with task 1 requeued (`scontrol requeue JOB_1`) while it runs: the failpoint
//!   `chunk-start@3:hold` (set for that task's first run only) holds it mid-sweep until Slurm's
//!   SIGTERM arrives, so the requeue hits a running sweep every time, without timing races;
//! - `--array=1-7:3` with `--shard auto/6`: three tasks of two shards each;
//! - a task cancelled before it ran: the merge job fails with one line naming shard 3/3.
//!
//! Job ids, holds and timings are written straight to stderr (past the test harness's capture),
//! so CI logs show them.

mod common;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::{assert_same_outputs, run, stderr};

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

/// A wait fails once the jobs' states have not changed for this long (and no job is held until
/// a time still to come). Every job here runs for seconds once it starts.
const STALL: Duration = Duration::from_secs(180);

/// The opt-in: submit to this partition of the cluster the Slurm commands already reach.
const PARTITION_VAR: &str = "CAVESWEEP_SLURM_PARTITION";

/// The bound on every wait, in seconds.
const WAIT_VAR: &str = "CAVESWEEP_SLURM_WAIT";

/// Set (to the run's folder) in the environment of every process the test starts: the private
/// cluster's daemons, and through `sbatch` its jobs. A later run stops what a killed one left.
const MARKER: &str = "CAVESWEEP_SLURM_TEST_RUN";

/// Variables that would point the private cluster's commands elsewhere or change their jobs.
const SLURM_PREFIXES: [&str; 8] = [
    "SLURM_",
    "SBATCH_",
    "SALLOC_",
    "SRUN_",
    "SQUEUE_",
    "SINFO_",
    "SCONTROL_",
    "SCANCEL_",
];

/// A line on the real stderr (not captured by the test harness).
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "slurm test: {msg}");
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `CAVESWEEP_SLURM_WAIT`, or 20 minutes.
fn overall() -> Duration {
    match std::env::var(WAIT_VAR) {
        Err(_) => Duration::from_secs(1200),
        Ok(s) => Duration::from_secs(
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{WAIT_VAR}={s:?}: expected whole seconds")),
        ),
    }
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

/// One record of `scontrol -o show job ID` (one per array task once they are split out).
#[derive(Clone, Debug, PartialEq)]
struct Rec {
    /// ArrayTaskId, or JobId for a job that is not an array.
    task: String,
    state: String,
    exit: String,
    reason: String,
    /// Until when Slurm holds the job (`Reason=BeginTime`): the later of its `EligibleTime`
    /// and its expected `StartTime`.
    held_until: Option<SystemTime>,
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

impl Rec {
    fn terminal(&self) -> bool {
        TERMINAL.contains(&self.state.as_str())
    }

    fn show(&self) -> String {
        let mut s = format!(
            "{} {} ({}) exit {}",
            self.task, self.state, self.reason, self.exit
        );
        if let Some(t) = self.held_until {
            s += &format!(", held until {}", utc(t));
        }
        s
    }
}

/// `t` as Slurm prints it with `TZ=UTC`, marked UTC.
fn utc(t: SystemTime) -> String {
    let s = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} UTC", s.trim_end_matches('Z').replacen('T', " ", 1))
}

/// A Slurm cluster to submit to: the private one this test started, or the opted-in one.
struct Cluster {
    /// This run's folder (the cases, and the private cluster in `cluster/`).
    run: PathBuf,
    /// The private cluster's config; `None` on the opted-in cluster.
    conf: Option<PathBuf>,
    /// The opted-in partition, given to every `sbatch`.
    partition: Option<String>,
    /// Daemons this test started, in start order; stopped in reverse order on drop.
    daemons: Vec<(&'static str, Child)>,
    /// Every job id this test submitted, cancelled on drop if unfinished.
    submitted: RefCell<Vec<String>>,
}

impl Cluster {
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        if let Some(conf) = &self.conf {
            for (k, _) in std::env::vars_os() {
                if let Some(k) = k.to_str()
                    && SLURM_PREFIXES.iter().any(|p| k.starts_with(p))
                {
                    c.env_remove(k);
                }
            }
            c.env("SLURM_CONF", conf).env(MARKER, &self.run);
        }
        c
    }

    /// Whether `sinfo` answers with a node (of the partition, if one is given) that can run jobs.
    fn answers(&self) -> bool {
        let mut c = self.cmd("sinfo");
        c.args(["-h", "-o", "%T"]);
        if let Some(p) = &self.partition {
            c.args(["-p", p]);
        }
        output_within(&mut c, 20).is_some_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| ["idle", "mixed", "allocated", "completing"].contains(&l.trim()))
        })
    }

    /// The opted-in cluster, or a private one started in `run/cluster`. `Err` says why Slurm
    /// cannot run here (the test is then skipped, or fails in CI); an opted-in cluster that does
    /// not answer fails the test.
    fn start(run: &Path) -> Result<Cluster, String> {
        let partition = std::env::var(PARTITION_VAR).ok().filter(|p| !p.is_empty());
        if find("sinfo").is_none() || find("sbatch").is_none() {
            let why = "Slurm is not installed (no sinfo/sbatch; .ci/run installs Debian's slurm-wlm and munge)";
            // Asked for by name, the cluster must be there.
            assert!(partition.is_none(), "{PARTITION_VAR} is set, but {why}");
            return Err(why.into());
        }
        let mut cluster = Cluster {
            run: run.to_path_buf(),
            conf: None,
            partition: None,
            daemons: Vec::new(),
            submitted: RefCell::new(Vec::new()),
        };
        if let Some(p) = partition {
            cluster.partition = Some(p.clone());
            assert!(
                cluster.answers(),
                "{PARTITION_VAR}={p}: `sinfo -p {p}` shows no node that can run jobs"
            );
            say(&format!(
                "{PARTITION_VAR}={p}: submitting to partition {p} of the cluster the Slurm commands reach, under this account"
            ));
            return Ok(cluster);
        }
        let bins: Vec<PathBuf> = ["munged", "slurmctld", "slurmd"]
            .iter()
            .map(|d| find(d).ok_or_else(|| format!("{d} is not installed")))
            .collect::<Result<_, _>>()?;
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            return Err(format!(
                "starting a private cluster needs root (slurmd runs jobs as their users); to run it on an existing cluster instead, set {PARTITION_VAR}=PARTITION"
            ));
        }
        let dir = run.join("cluster");
        for sub in ["munge", "state", "spool", "log"] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        cluster.conf = Some(dir.join("slurm.conf"));
        let started = Instant::now();
        // munged, with its own key and socket.
        let mut key = vec![0u8; 128];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
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
        cluster.wait_up("munged's socket", &dir, 15, |_| socket.exists())?;
        // slurm.conf: one node with this machine's CPUs, everything under `dir`.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (ctld_port, d_port) = free_ports()?;
        let d = p(&dir);
        let conf = format!(
            "# Written by tests/slurm.rs: its private one-node test cluster (own ports, MUNGE
# socket, state and spool), so no other cluster on this machine is used or disturbed.
ClusterName=cavesweeptest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire is the credential lifetime, and Slurm 22.05 holds a requeued job PENDING
# (BeginTime) for that plus 1 s before it may run again: 121 s by default. 5 is the least it
# takes, so a requeue here reruns within seconds (the test still reads and waits for the hold).
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
        let conf_path = cluster.conf.clone().expect("set above");
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
        cluster.wait_up("the node to be idle", &dir, 40, |c| c.answers())?;
        say(&format!(
            "started a private one-node cluster ({cpus} CPUs, slurmctld port {ctld_port}, slurmd port {d_port}, {}) in {:.1} s: {}",
            conf_path.display(),
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

    /// Start daemon `name` (marked, with the private config in its environment), its output in
    /// `dir/log/NAME.out`.
    fn spawn(&mut self, name: &'static str, c: &mut Command, dir: &Path) -> Result<(), String> {
        let log =
            fs::File::create(dir.join(format!("log/{name}.out"))).map_err(|e| e.to_string())?;
        let conf = self.conf.clone().expect("private cluster");
        let child = c
            .env("SLURM_CONF", conf)
            .env(MARKER, &self.run)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.daemons.push((name, child));
        Ok(())
    }

    /// Poll `ok` until it holds; fail (with the daemons' logs) if a daemon exits or `secs` pass.
    fn wait_up(
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

    /// `sbatch --parsable ARGS` in `cwd` (to the opted-in partition, if any); the job id.
    fn sbatch(&self, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
        let mut c = self.cmd("sbatch");
        c.current_dir(cwd).arg("--parsable");
        if let Some(p) = &self.partition {
            c.arg(format!("--partition={p}"));
        }
        c.args(args);
        c.env_remove("CAVESWEEP_FAILPOINT");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = output_within(&mut c, 30).expect("sbatch answers");
        assert!(o.status.success(), "sbatch {args:?}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let id = out.trim().split(';').next().unwrap().to_string();
        self.submitted.borrow_mut().push(id.clone());
        id
    }

    fn scontrol(&self, args: &[&str]) {
        let o = output_within(self.cmd("scontrol").args(args), 30).expect("scontrol answers");
        assert!(o.status.success(), "scontrol {args:?}: {}", text(&o));
    }

    fn scancel(&self, id: &str) {
        let o = output_within(self.cmd("scancel").arg(id), 30).expect("scancel answers");
        assert!(o.status.success(), "scancel {id}: {}", text(&o));
    }

    /// Every record of job `id`; `None` if scontrol did not answer, empty if Slurm no longer
    /// knows the job. Times are read in UTC (`TZ=UTC`).
    fn records(&self, id: &str) -> Option<Vec<Rec>> {
        let o = output_within(
            self.cmd("scontrol")
                .env("TZ", "UTC")
                .args(["-o", "show", "job", id]),
            30,
        )?;
        if !o.status.success() {
            return text(&o).contains("Invalid job id").then(Vec::new);
        }
        Some(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains("JobId="))
                .map(parse_record)
                .collect(),
        )
    }

    fn squeue(&self) -> String {
        let mut c = self.cmd("squeue");
        c.args(["-o", "%i %T %r %S"]).env("TZ", "UTC");
        if let Some(p) = &self.partition {
            c.args(["-p", p]);
        }
        output_within(&mut c, 20)
            .map(|o| text(&o))
            .unwrap_or_default()
    }

    /// Poll jobs `ids` until `done` holds for their latest records (a job's records are kept
    /// once all are terminal); those records. Panics, naming `what`, each job's state and
    /// reason and the holds seen, when nothing changed for `STALL` past the last hold Slurm
    /// announced, or after `overall()`.
    fn wait_jobs(
        &self,
        what: &str,
        ids: &[&str],
        mut done: impl FnMut(&BTreeMap<String, Vec<Rec>>) -> bool,
        diag: &dyn Fn() -> String,
    ) -> BTreeMap<String, Vec<Rec>> {
        let start = Instant::now();
        let bound = overall();
        let mut last_change = Instant::now();
        let mut seen: BTreeMap<String, Vec<Rec>> = BTreeMap::new();
        let mut holds: BTreeMap<String, SystemTime> = BTreeMap::new();
        loop {
            let mut changed = false;
            for id in ids {
                if seen
                    .get(*id)
                    .is_some_and(|r| !r.is_empty() && r.iter().all(Rec::terminal))
                {
                    continue;
                }
                let Some(recs) = self.records(id) else {
                    continue;
                };
                if recs.is_empty() && seen.get(*id).is_some_and(|r| !r.is_empty()) {
                    panic!(
                        "waiting for {what}: Slurm no longer knows job {id} (purged after MinJobAge?); last seen {:?}",
                        seen[*id]
                    );
                }
                for r in &recs {
                    if let Some(t) = r.held_until {
                        let key = if r.task == *id || id.ends_with(&format!("_{}", r.task)) {
                            id.to_string()
                        } else {
                            format!("{id}_{}", r.task)
                        };
                        if holds.insert(key.clone(), t) != Some(t) {
                            let left = t
                                .duration_since(SystemTime::now())
                                .map_or(0, |d| d.as_secs());
                            say(&format!(
                                "waiting for {what}: Slurm holds job {key} {} ({}) until {} ({left} s from now)",
                                r.state,
                                r.reason,
                                utc(t)
                            ));
                        }
                    }
                }
                if seen.get(*id) != Some(&recs) {
                    changed = true;
                    seen.insert(id.to_string(), recs);
                }
            }
            if done(&seen) {
                return seen;
            }
            let now = SystemTime::now();
            let held = seen
                .values()
                .flatten()
                .filter_map(|r| r.held_until)
                .any(|t| t > now);
            if changed || held {
                last_change = Instant::now();
            }
            let stalled = last_change.elapsed() > STALL;
            if stalled || start.elapsed() > bound {
                let why = if stalled {
                    format!(
                        "no job changed state for {} s and Slurm named no hold still to come",
                        STALL.as_secs()
                    )
                } else {
                    format!("the bound of {} s ({WAIT_VAR}) passed", bound.as_secs())
                };
                let jobs: Vec<String> = ids
                    .iter()
                    .map(|id| match seen.get(*id) {
                        None => format!("job {id}: no answer from scontrol"),
                        Some(r) => format!(
                            "job {id}: {}",
                            r.iter().map(Rec::show).collect::<Vec<_>>().join("; ")
                        ),
                    })
                    .collect();
                let held: Vec<String> = holds
                    .iter()
                    .map(|(k, t)| format!("{k} until {}", utc(*t)))
                    .collect();
                panic!(
                    "gave up waiting for {what} after {:.0} s: {why}\nholds Slurm announced: {}\n{}\nsqueue:\n{}\n{}",
                    start.elapsed().as_secs_f64(),
                    if held.is_empty() {
                        "none".to_string()
                    } else {
                        held.join(", ")
                    },
                    jobs.join("\n"),
                    self.squeue(),
                    diag()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// One line of `scontrol -o show job` as a record.
fn parse_record(l: &str) -> Rec {
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
    let (state, reason) = (field("JobState="), field("Reason="));
    let time = |k: &str| humantime::parse_rfc3339_weak(&field(k)).ok();
    let held_until = (state == "PENDING" && reason == "BeginTime")
        .then(|| time("EligibleTime=").max(time("StartTime=")))
        .flatten();
    Rec {
        task,
        state,
        exit: field("ExitCode="),
        reason,
        held_until,
    }
}

impl Drop for Cluster {
    /// Cancel the test's unfinished jobs; on the private cluster wait for them to end, stop the
    /// daemons (by pid, in reverse start order) and any job process left (marked with this run).
    fn drop(&mut self) {
        let ids = self.submitted.borrow().clone();
        let live: Vec<&String> = ids
            .iter()
            .filter(|id| {
                self.records(id)
                    .is_none_or(|r| r.iter().any(|r| !r.terminal()))
            })
            .collect();
        for id in &live {
            let _ = output_within(self.cmd("scancel").arg(id), 30);
        }
        if !live.is_empty() {
            say(&format!(
                "cancelled the test's unfinished jobs {}",
                live.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.daemons.is_empty() {
            return;
        }
        let start = Instant::now();
        while !live.is_empty()
            && start.elapsed() < Duration::from_secs(30)
            && live.iter().any(|id| {
                self.records(id)
                    .is_some_and(|r| r.iter().any(|r| !r.terminal()))
            })
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        let mut stopped = Vec::new();
        for (name, mut child) in self.daemons.drain(..).rev() {
            stop(&mut child);
            stopped.push(format!("{name} pid {}", child.id()));
        }
        let stray = stop_marked(&self.run);
        say(&format!(
            "stopped {}{}",
            stopped.join(", "),
            if stray > 0 {
                format!(" and {stray} leftover job processes")
            } else {
                String::new()
            }
        ));
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

/// Up to 1 MiB of `/proc/PID/NAME` (environ, cmdline, stat), or empty.
fn proc_file(pid: libc::pid_t, name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    if let Ok(f) = fs::File::open(format!("/proc/{pid}/{name}")) {
        let _ = f.take(1 << 20).read_to_end(&mut v);
    }
    v
}

/// A process's start time (field 22 of `/proc/PID/stat`), which tells it from a later process
/// given the same pid.
fn start_time(pid: libc::pid_t) -> Option<u64> {
    let stat = String::from_utf8(proc_file(pid, "stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether process `pid` was started by the run in `run`: its environment carries the run's
/// marker, or it is a Slurm or MUNGE daemon whose command line or open files name the run's
/// folder (daemons rewrite their environment for their process title; a `slurmstepd` keeps the
/// private cluster's slurmd log open).
fn marked(pid: libc::pid_t, run: &Path) -> bool {
    let tag = format!("{MARKER}={}", run.display());
    if proc_file(pid, "environ")
        .split(|&b| b == 0)
        .any(|v| v == tag.as_bytes())
    {
        return true;
    }
    let comm = String::from_utf8_lossy(&proc_file(pid, "comm"))
        .trim()
        .to_string();
    if ![
        "munged",
        "slurmctld",
        "slurmscriptd",
        "slurmd",
        "slurmstepd",
    ]
    .contains(&comm.as_str())
    {
        return false;
    }
    let inside = format!("{}/", run.display());
    String::from_utf8_lossy(&proc_file(pid, "cmdline")).contains(&inside)
        || fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|d| {
            d.flatten().any(|e| {
                fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with(&inside))
            })
        })
}

/// SIGTERM every process (other than this one) that the run in `run` started, SIGKILL those
/// still there after 10 s; how many there were.
fn stop_marked(run: &Path) -> usize {
    let me = std::process::id() as libc::pid_t;
    let find = || -> Vec<libc::pid_t> {
        fs::read_dir("/proc")
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .filter(|&p| p != me && marked(p, run))
                    .collect()
            })
            .unwrap_or_default()
    };
    let pids = find();
    for &p in &pids {
        // SAFETY: plain kill(2) on a process shown to be this run's.
        unsafe {
            libc::kill(p, libc::SIGTERM);
        }
    }
    let start = Instant::now();
    while !pids.is_empty() && start.elapsed() < Duration::from_secs(10) {
        let left = find();
        if left.is_empty() {
            return pids.len();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for p in find() {
        // SAFETY: as above, checked again just now.
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
    }
    pids.len()
}

/// This run's folder, `slurm-runs/PID` (its `owner` file holds PID and start time). Folders of
/// earlier runs whose process is gone are removed, after stopping what those runs started;
/// folders of runs still going (another copy of the test) are left alone.
fn run_folder() -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("slurm-runs");
    let me = std::process::id() as libc::pid_t;
    let owner = |pid: libc::pid_t| format!("{pid} {}", start_time(pid).unwrap_or(0));
    if let Ok(d) = fs::read_dir(&base) {
        for e in d.flatten() {
            let dir = e.path();
            let alive = fs::read_to_string(dir.join("owner")).is_ok_and(|o| {
                o.split_once(' ')
                    .and_then(|(p, _)| p.parse().ok())
                    .is_some_and(|p| owner(p) == o.trim())
            });
            if alive || !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let n = stop_marked(&dir);
            if n > 0 {
                say(&format!(
                    "stopped {n} processes left by an earlier, killed run ({})",
                    dir.display()
                ));
            }
            let _ = fs::remove_dir_all(&dir);
        }
    }
    let run = base.join(me.to_string());
    fs::create_dir_all(&run).unwrap();
    fs::write(run.join("owner"), owner(me)).unwrap();
    run
}

/// Two distinct free TCP ports on the loopback address.
fn free_ports() -> Result<(u16, u16), String> {
    let bind =
        || std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"));
    let (a, b) = (bind()?, bind()?);
    let port = |l: &std::net::TcpListener| {
        l.local_addr()
            .map(|a| a.port())
            .map_err(|e| format!("no free port: {e}"))
    };
    Ok((port(&a)?, port(&b)?))
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

/// Every Slurm log in a case folder, for failure messages.
fn logs(dir: &Path) -> String {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| r.filter_map(|e| Some(e.ok()?.path())).collect())
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

/// The merge job ended as `state` with exit code `exit` (from the final records `done`).
fn assert_merge(done: &BTreeMap<String, Vec<Rec>>, case: &Case, state: &str, exit: &str) {
    let (m, a) = (&done[&case.merge], &done[&case.array]);
    assert!(
        m.len() == 1 && m[0].state == state && m[0].exit == exit,
        "case {}: merge job {} ended {m:?}, expected {state} {exit}; array {a:?}\n{}",
        case.name,
        case.merge,
        logs(&case.dir)
    );
}

#[test]
fn slurm_arrays_requeue_steps_and_missing_shards() {
    let start = Instant::now();
    let run_dir = run_folder();
    let cluster = match Cluster::start(&run_dir) {
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
    let root = run_dir.join("cases");
    fs::create_dir_all(&root).unwrap();
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
    let cases = [&plain, &requeue, &step, &missing];

    // The reference, on this machine, while Slurm works.
    let single = root.join("single");
    let mut args = vec!["sweep"];
    args.extend_from_slice(&FLAGS);
    args.extend(["--out", single.to_str().unwrap(), "--threads", "1"]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));

    // Requeue task 1 of `requeue` once it holds mid-sweep.
    let held = requeue.log(1);
    let holding = || fs::read_to_string(&held).is_ok_and(|t| t.contains("holding until stopped"));
    cluster.wait_jobs(
        &format!(
            "task 1 of job {} to reach its hold mid-sweep",
            requeue.array
        ),
        &[&requeue.array],
        |_| holding(),
        &|| logs(&requeue.dir),
    );
    let task = format!("{}_1", requeue.array);
    cluster.scontrol(&["requeue", &task]);
    let requeued = Instant::now();
    say(&format!(
        "case requeue: scontrol requeue {task} at {:.1} s, while it was sweeping",
        start.elapsed().as_secs_f64()
    ));
    // Until it runs again: Slurm holds it (BeginTime) for its requeue delay, and says until when.
    let rerun = || fs::read_to_string(&held).is_ok_and(|t| t.contains("run 1 on"));
    let mut hold = None;
    cluster.wait_jobs(
        &format!("the requeued task {task} to run again"),
        &[&task],
        |s| {
            let r = s.get(&task).into_iter().flatten();
            hold = hold.or(r.clone().find_map(|r| r.held_until));
            rerun() || r.clone().any(Rec::terminal)
        },
        &|| logs(&requeue.dir),
    );
    say(&format!(
        "case requeue: {task} ran again {:.1} s after the requeue; {}",
        requeued.elapsed().as_secs_f64(),
        match hold {
            Some(t) => format!("Slurm had held it (BeginTime) until {}", utc(t)),
            None => "no BeginTime hold was seen".to_string(),
        }
    ));

    let ids: Vec<&str> = cases
        .iter()
        .flat_map(|c| [c.array.as_str(), c.merge.as_str()])
        .collect();
    let done = cluster.wait_jobs(
        &format!("the {} jobs of the 4 cases to finish", ids.len()),
        &ids,
        |s| {
            ids.iter().all(|id| {
                s.get(*id)
                    .is_some_and(|r| !r.is_empty() && r.iter().all(Rec::terminal))
            })
        },
        &|| cases.iter().map(|c| logs(&c.dir)).collect(),
    );
    say(&format!(
        "all jobs finished at {:.1} s",
        start.elapsed().as_secs_f64()
    ));

    for case in [&plain, &requeue, &step] {
        assert_merge(&done, case, "COMPLETED", "0:0");
        assert_same_outputs(&single, &case.out().join("merged"));
        say(&format!(
            "case {}: merged output byte-identical to one machine",
            case.name
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
    assert_merge(&done, &missing, "FAILED", "1:0");
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
