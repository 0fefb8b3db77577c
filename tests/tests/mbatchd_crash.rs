//! Issue 5, "Nothing acknowledged is ever lost": mbatchd is killed with SIGKILL at
//! random moments while concurrent `bsub` (and some `bkill`) calls hammer it, 50 times,
//! on a 2-host process cluster of the real binaries.
//!
//! Checked after the cycles:
//! * every `bsub` that printed `Job <N> is submitted ...` exited 0 with that one line,
//!   every failed one printed nothing on stdout;
//! * every acknowledged job exists with the name, command and hold flag it was submitted
//!   with, acknowledged ids are distinct, no job id has two `JOB_NEW` records, no
//!   submission (acknowledged or not) exists twice;
//! * every acknowledged `bkill` took effect;
//! * the final state `bjobs -a` reports for every job (state, exit code of finished jobs,
//!   name, command, queue) equals an independent replay of `lsb.events` written here from
//!   event-log.md §3–4 (not basalt-eventlog or basalt-sched), also after one more
//!   kill -9 and a pure replay at rest; and each acknowledged job ended as its command
//!   says (held jobs PSUSP, `true` DONE, `exit 3` EXIT with code 3).
//!
//! Each cycle: 8 threads run `bsub` in a loop (3 in 4 jobs held with `-H`, the others
//! `true` or `exit 3`, so dispatches and finish reports are interrupted too; thread 0
//! also `bkill`s held jobs of earlier cycles), mbatchd is SIGKILLed 0–300 ms into the
//! burst, stays down 0–500 ms, is started again, and the cycle ends when it answers and
//! every command of the burst has returned.
//!
//! The mbatchd restart is done by the test like the master's sbatchd does, but without
//! its back-off (1, 2, 4 ... 30 s after quick exits, which would make 50 cycles take half
//! an hour): hostA's sbatchd runs with `--no-mbatchd`. sbatchd's own restart of mbatchd
//! is covered by batch_cluster.rs. The seed is printed; `BASALT_CRASH_SEED=<n>` replays
//! the same delays and job mix (the timing of the processes still varies).

use anyhow::{Context, Result, bail};
use basalt_testkit::{
    ClusterSpec, Commands, CommandsAt, HostDaemons, ProcessCluster, event_fields, wait_for,
};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const CYCLES: usize = 50;
/// Concurrent submitters per cycle.
const THREADS: usize = 8;
/// At most this many commands per thread and cycle (bounds the number of jobs).
const MAX_PER_THREAD: usize = 12;
/// The kill comes 0..=MAX_DELAY_MS after the burst starts.
const MAX_DELAY_MS: u64 = 300;
/// mbatchd stays down 0..=MAX_DOWN_MS before the test starts it again.
const MAX_DOWN_MS: u64 = 500;
/// Hellos every second, so that hosts are seen soon after each restart.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

/// splitmix64: small, seedable, good enough to pick delays and job kinds.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What a submitted job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `bsub -H`: stays PSUSP.
    Held,
    /// `true`: runs and ends DONE.
    Done,
    /// `exit 3`: runs and ends EXIT with exit code 3.
    Exit3,
}

impl Kind {
    fn command(self) -> &'static str {
        match self {
            Kind::Held => "sleep 1000",
            Kind::Done => "true",
            Kind::Exit3 => "exit 3",
        }
    }
}

/// One `bsub` call and what it printed.
#[derive(Debug, Clone)]
struct Submit {
    cycle: usize,
    name: String,
    kind: Kind,
    acked: Option<u64>,
    out: String,
}

/// One `bkill` call of a held job.
#[derive(Debug, Clone)]
struct Kill {
    cycle: usize,
    id: u64,
    acked: bool,
    out: String,
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}; stdout {:?}; stderr {:?}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The job id of a successful `bsub`, None for a clean failure, Err for output that
/// breaks the contract (success line with a failure exit, two lines, ...).
fn submit_result(o: &Output) -> Result<Option<u64>, String> {
    let out = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        if out.is_empty() {
            return Ok(None);
        }
        return Err(format!("bsub failed but printed on stdout: {}", text(o)));
    }
    let mut lines = out.lines();
    let (Some(line), None) = (lines.next(), lines.next()) else {
        return Err(format!(
            "bsub succeeded without exactly one line: {}",
            text(o)
        ));
    };
    if !out.ends_with('\n') || !line.contains("> is submitted to ") {
        return Err(format!(
            "bsub succeeded without the success line: {}",
            text(o)
        ));
    }
    line.strip_prefix("Job <")
        .and_then(|r| r.split('>').next())
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|id| *id > 0)
        .map(Some)
        .ok_or_else(|| format!("no job id in the success line: {}", text(o)))
}

/// One submitter thread of one cycle.
fn submitter(
    tools: &CommandsAt,
    cycle: usize,
    t: usize,
    seed: u64,
    stop: &AtomicBool,
    killable: &Mutex<Vec<u64>>,
) -> (Vec<Submit>, Vec<Kill>, Vec<String>) {
    let mut rng = Rng(seed ^ ((cycle * THREADS + t) as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let (mut subs, mut kills, mut bad) = (Vec::new(), Vec::new(), Vec::new());
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) && n < MAX_PER_THREAD {
        n += 1;
        // Thread 0 kills an acknowledged held job of an earlier cycle every third time.
        if t == 0 && n % 3 == 0 {
            let target = killable.lock().ok().and_then(|mut v| v.pop());
            if let Some(id) = target {
                let o = match tools.run("bkill", &[&id.to_string()]) {
                    Ok(o) => o,
                    Err(e) => {
                        bad.push(format!("cycle {cycle}: cannot run bkill: {e}"));
                        continue;
                    }
                };
                let out = String::from_utf8_lossy(&o.stdout).into_owned();
                let acked = o.status.success();
                if acked && out != format!("Job <{id}> is being terminated\n") {
                    bad.push(format!(
                        "cycle {cycle}: bkill {id} exited 0 with {}",
                        text(&o)
                    ));
                }
                if !acked && !out.is_empty() {
                    bad.push(format!(
                        "cycle {cycle}: bkill {id} failed but printed {}",
                        text(&o)
                    ));
                }
                kills.push(Kill {
                    cycle,
                    id,
                    acked,
                    out: text(&o),
                });
                continue;
            }
        }
        let kind = match rng.below(8) {
            0 => Kind::Exit3,
            1 | 2 => Kind::Done,
            _ => Kind::Held,
        };
        let name = format!("c{cycle}t{t}n{n}");
        let mut args = vec!["-J", name.as_str(), "-o", "/dev/null"];
        if kind == Kind::Held {
            args.push("-H");
        }
        args.push(kind.command());
        let o = match tools.run("bsub", &args) {
            Ok(o) => o,
            Err(e) => {
                bad.push(format!("cycle {cycle}: cannot run bsub: {e}"));
                continue;
            }
        };
        let acked = match submit_result(&o) {
            Ok(a) => a,
            Err(e) => {
                bad.push(format!("cycle {cycle} {name}: {e}"));
                None
            }
        };
        subs.push(Submit {
            cycle,
            name,
            kind,
            acked,
            out: text(&o),
        });
    }
    (subs, kills, bad)
}

/// Does mbatchd answer a query?
fn serving(tools: &CommandsAt) -> (Option<()>, String) {
    match tools.run("bparams", &[]) {
        Ok(o) if o.status.success() => (Some(()), String::new()),
        Ok(o) => (None, text(&o)),
        Err(e) => (None, e.to_string()),
    }
}

/// A job as `bjobs -a -json` shows it.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    stat: String,
    exit_code: String,
    name: String,
    command: String,
    queue: String,
}

fn bjobs(tools: &CommandsAt) -> Result<BTreeMap<u64, Shown>> {
    let o = tools.run(
        "bjobs",
        &[
            "-a",
            "-u",
            "all",
            "-json",
            "-o",
            "jobid stat exit_code job_name command queue",
        ],
    )?;
    if !o.status.success() && !o.stdout.is_empty() {
        bail!("bjobs failed: {}", text(&o));
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("bjobs -json: {}", text(&o)))?;
    let mut m = BTreeMap::new();
    for r in v["RECORDS"].as_array().cloned().unwrap_or_default() {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let id: u64 = s("JOBID")
            .parse()
            .with_context(|| format!("bad JOBID in {r}"))?;
        let shown = Shown {
            stat: s("STAT"),
            exit_code: s("EXIT_CODE"),
            name: s("JOB_NAME"),
            command: s("COMMAND"),
            queue: s("QUEUE"),
        };
        if m.insert(id, shown).is_some() {
            bail!("bjobs shows job {id} twice");
        }
    }
    Ok(m)
}

/// A job as the independent replay of lsb.events sees it.
#[derive(Debug, Clone)]
struct LogJob {
    name: String,
    command: String,
    queue: String,
    hold: bool,
    state: &'static str,
    /// Raw wait status of the last finishing JOB_STATUS.
    exit_status: i64,
    signals: Vec<String>,
}

impl LogJob {
    fn finished(&self) -> bool {
        self.state == "DONE" || self.state == "EXIT"
    }

    /// The exit code bjobs shows for a finished job: WEXITSTATUS, or 128 + signal.
    fn exit_code(&self) -> i64 {
        let sig = self.exit_status & 0x7f;
        if sig == 0 {
            (self.exit_status >> 8) & 0xff
        } else {
            128 + sig
        }
    }
}

/// A state name from a `jStatus` value (event-log.md §4.1), ignoring the post-exec bits.
fn state_of(j_status: i64) -> Option<&'static str> {
    Some(match j_status & !(0x80 | 0x100) {
        0x1 => "PEND",
        0x2 => "PSUSP",
        0x4 => "RUN",
        0x8 => "SSUSP",
        0x10 => "USUSP",
        0x20 => "EXIT",
        0x40 => "DONE",
        0x200 => "WAIT",
        0x10000 => "UNKWN",
        _ => return None,
    })
}

/// The result of replaying lsb.events.
#[derive(Debug, Default)]
struct Replay {
    jobs: BTreeMap<u64, LogJob>,
    /// Things that must never be in the log (a second JOB_NEW for an id, a record for a
    /// job never submitted, a finished job starting again, ...).
    anomalies: Vec<String>,
    counts: BTreeMap<String, usize>,
    mbd_starts: usize,
}

fn num(f: &[String], i: usize) -> Option<i64> {
    f.get(i).and_then(|v| v.parse::<i64>().ok())
}

/// Replay lsb.events (event-log.md §3 field order, §4 codes) into each job's state.
fn replay(text: &str) -> Replay {
    let mut r = Replay::default();
    let complete = text.ends_with('\n') || text.is_empty();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let at = n + 1;
        if line.starts_with('#') {
            continue;
        }
        if n + 1 == lines.len() && !complete {
            r.anomalies
                .push(format!("line {at}: torn last record at rest: {line:?}"));
            continue;
        }
        let f = event_fields(line);
        let kind = f.first().cloned().unwrap_or_default();
        *r.counts.entry(kind.clone()).or_default() += 1;
        let mut bad = |what: &str| r.anomalies.push(format!("line {at}: {what}: {line}"));
        // Every job record names a job id and an array index; this test has no arrays.
        let job_at = match kind.as_str() {
            "JOB_NEW" | "JOB_START" | "JOB_START_ACCEPT" | "JOB_EXECUTE" | "JOB_STATUS"
            | "JOB_SIGNAL" | "JOB_CLEAN" | "JOB_REQUEUE" | "JOB_FORCE" => Some(3),
            "JOB_SWITCH" | "JOB_MOVE" => Some(4),
            "MBD_START" | "MBD_DIE" | "LOAD_INDEX" | "HOST_CTRL" | "QUEUE_CTRL" | "LOG_SWITCH" => {
                None
            }
            _ => {
                bad("record type this replay does not know");
                continue;
            }
        };
        if kind == "MBD_START" {
            r.mbd_starts += 1;
        }
        let Some(job_at) = job_at else { continue };
        let Some(id) = num(&f, job_at).and_then(|v| u64::try_from(v).ok()) else {
            bad("no job id");
            continue;
        };
        if kind == "JOB_NEW" {
            // $39 numAskedHosts, then the hosts, dependCond, preExecCmd, jobName, command,
            // nxf [3 fields per xf], mailUser, projectName, [niosPort if interactive],
            // maxNumProcessors, schedHostType, loginShell, options2, idx.
            let (Some(options), Some(asked)) = (num(&f, 5), num(&f, 38)) else {
                bad("JOB_NEW without options/numAskedHosts");
                continue;
            };
            let asked = asked.max(0) as usize;
            let name_at = 41 + asked;
            let cmd_at = name_at + 1;
            let nxf = num(&f, cmd_at + 1).unwrap_or(0).max(0) as usize;
            let interactive = usize::from(options & 0x400_0000 != 0);
            let options2_at = cmd_at + 2 + 3 * nxf + 2 + interactive + 3;
            let (Some(options2), Some(idx)) = (num(&f, options2_at), num(&f, options2_at + 1))
            else {
                bad("JOB_NEW too short for options2 and idx");
                continue;
            };
            if idx != 0 {
                bad("array JOB_NEW in a test without arrays");
            }
            let hold = options2 & 0x1 != 0;
            let job = LogJob {
                name: f[name_at].clone(),
                command: f[cmd_at].clone(),
                queue: f[28].clone(),
                hold,
                state: if hold { "PSUSP" } else { "PEND" },
                exit_status: 0,
                signals: Vec::new(),
            };
            if r.jobs.insert(id, job).is_some() {
                bad("second JOB_NEW for one job id (id reused)");
            }
            continue;
        }
        // The idx field of each record type, to refuse array elements.
        let idx_at = match kind.as_str() {
            "JOB_START" => num(&f, 8).map(|n| 9 + n.max(0) as usize + 3),
            "JOB_START_ACCEPT" => Some(6),
            "JOB_EXECUTE" => Some(10),
            "JOB_STATUS" => num(&f, 9).map(|ru| if ru == 1 { 11 + 19 } else { 11 }),
            "JOB_SIGNAL" => Some(7),
            "JOB_CLEAN" | "JOB_REQUEUE" => Some(4),
            "JOB_FORCE" => Some(5),
            "JOB_SWITCH" => Some(6),
            "JOB_MOVE" => Some(7),
            _ => None,
        };
        if idx_at.and_then(|i| num(&f, i)) != Some(0) {
            bad("record without idx 0");
            continue;
        }
        let Some(j) = r.jobs.get_mut(&id) else {
            bad("record for a job without JOB_NEW");
            continue;
        };
        match kind.as_str() {
            "JOB_START" => {
                if j.finished() {
                    bad("finished job started again");
                }
                j.state = "RUN";
            }
            "JOB_STATUS" => {
                let Some(st) = num(&f, 4).and_then(state_of) else {
                    bad("unknown jStatus");
                    continue;
                };
                let ru = num(&f, 9);
                let exit_at = if ru == Some(1) { 10 + 19 } else { 10 };
                let Some(exit_status) = num(&f, exit_at) else {
                    bad("JOB_STATUS without exitStatus");
                    continue;
                };
                let finishing = st == "DONE" || st == "EXIT";
                if j.finished() {
                    // Only the post-exec record (192/320, §4.1) may follow a finish.
                    if st != j.state {
                        bad("finished job changed state");
                        j.state = st;
                    }
                } else {
                    j.state = st;
                    if finishing {
                        j.exit_status = exit_status;
                    }
                }
            }
            "JOB_SIGNAL" => j.signals.push(f[6].clone()),
            "JOB_REQUEUE" => j.state = "PEND",
            "JOB_CLEAN" => {
                if !j.finished() {
                    bad("unfinished job cleaned");
                }
                r.jobs.remove(&id);
            }
            "JOB_SWITCH" => j.queue = f[5].clone(),
            // Pid/host bookkeeping and queue order: no state change.
            _ => {}
        }
    }
    r
}

/// Compare bjobs with the replay; the differences, one line each.
fn compare(shown: &BTreeMap<u64, Shown>, log: &Replay) -> Vec<String> {
    let mut diff = Vec::new();
    for (id, j) in &log.jobs {
        let Some(s) = shown.get(id) else {
            diff.push(format!(
                "job {id} ({}) is in lsb.events but not in bjobs",
                j.name
            ));
            continue;
        };
        let mut want = Shown {
            stat: j.state.to_owned(),
            exit_code: s.exit_code.clone(),
            name: j.name.clone(),
            command: j.command.clone(),
            queue: j.queue.clone(),
        };
        if j.finished() {
            want.exit_code = j.exit_code().to_string();
        }
        if *s != want {
            diff.push(format!(
                "job {id}: bjobs {s:?}, replay {want:?} (signals {:?})",
                j.signals
            ));
        }
    }
    for (id, s) in shown {
        if !log.jobs.contains_key(id) {
            diff.push(format!("job {id} is in bjobs but not in lsb.events: {s:?}"));
        }
    }
    diff
}

/// Wait until mbatchd answers and every host is ok in bhosts.
fn wait_cluster_ok(tools: &CommandsAt, deadline: Duration) -> Result<()> {
    wait_for("bhosts with both hosts ok or closed", deadline, || {
        match tools.run("bhosts", &[]) {
            Ok(o) => {
                let out = String::from_utf8_lossy(&o.stdout).into_owned();
                // "closed" is a full host (its slots may be held by stuck jobs).
                let ok = out
                    .lines()
                    .filter(|l| matches!(l.split_whitespace().nth(1), Some("ok" | "closed")))
                    .count();
                ((ok == 2).then_some(()), text(&o))
            }
            Err(e) => (None, e.to_string()),
        }
    })
}

fn seed() -> u64 {
    std::env::var("BASALT_CRASH_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                ^ u64::from(std::process::id())
        })
}

#[test]
fn mbatchd_sigkilled_during_concurrent_bsub_loses_no_acknowledged_job() -> Result<()> {
    let seed = seed();
    eprintln!("mbatchd_crash: seed {seed} (BASALT_CRASH_SEED={seed} to repeat)");
    let mut c = ProcessCluster::start("mbd-crash", &ClusterSpec::new(2))?;
    // Fail by panicking while the cluster lives, so that its directory (logs, lsb.events)
    // is kept and printed.
    if let Err(e) = scenario(&mut c, seed) {
        panic!("seed {seed}: {e:#}");
    }
    Ok(())
}

fn scenario(c: &mut ProcessCluster, seed: u64) -> Result<()> {
    let t0 = Instant::now();
    let mut rng = Rng(seed);
    // The LIMs run; now lsb.params, sbatchd on both hosts (hostA's without mbatchd), and
    // mbatchd run by the test.
    let params = c
        .dir
        .path()
        .join("conf/lsbatch/basalt/configdir/lsb.params");
    let ptext = std::fs::read_to_string(&params)?;
    std::fs::write(
        &params,
        ptext.replace("End Parameters", &format!("{PARAMS}\nEnd Parameters")),
    )?;
    // Six slots per host: jobs are cheap, and more dispatches get interrupted.
    let hosts = c.dir.path().join("conf/lsbatch/basalt/configdir/lsb.hosts");
    let htext = std::fs::read_to_string(&hosts)?;
    let htext = htext.replace("default     !  ", "default     6  ");
    if !htext.contains("default     6  ") {
        bail!("unexpected lsb.hosts:\n{htext}");
    }
    std::fs::write(&hosts, htext)?;
    c.wait_master("hostA", Duration::from_secs(30))?;
    let work = c.dir.path().join("work-area");
    std::fs::create_dir_all(&work)?;
    let tools = CommandsAt::new(c, work);
    let mut d = HostDaemons::new(c, "hostA");
    d.start_sbatchd()?;
    c.start_daemon("sbatchd", "hostB")?;
    d.start_mbatchd()?;
    wait_cluster_ok(&tools, Duration::from_secs(60))?;
    let logdir = c.dir.path().join("work/basalt/logdir");
    let events_path = logdir.join("lsb.events");
    eprintln!("mbatchd_crash: cluster up in {:.1?}", t0.elapsed());

    let killable: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let mut subs: Vec<Submit> = Vec::new();
    let mut kills: Vec<Kill> = Vec::new();
    let mut bad: Vec<String> = Vec::new();
    let mut restart_times = Vec::new();
    let t_cycles = Instant::now();
    for cycle in 0..CYCLES {
        let delay = Duration::from_millis(rng.below(MAX_DELAY_MS + 1));
        // Down for a while sometimes, so that bsub's connection retries are exercised.
        let down = Duration::from_millis(rng.below(MAX_DOWN_MS + 1));
        let stop = AtomicBool::new(false);
        let pids = c.pids_of("mbatchd", "hostA");
        if pids.len() != 1 {
            bail!(
                "cycle {cycle}: {} mbatchd processes run: {pids:?}",
                pids.len()
            );
        }
        let (tools_ref, stop_ref, killable_ref) = (&tools, &stop, &killable);
        let restart = std::thread::scope(|s| -> Result<Duration> {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(move || submitter(tools_ref, cycle, t, seed, stop_ref, killable_ref))
                })
                .collect();
            std::thread::sleep(delay);
            let killed = d.kill9_mbatchd();
            stop.store(true, Ordering::SeqCst);
            std::thread::sleep(down);
            let restarted = Instant::now();
            let started = killed.and_then(|()| d.start_mbatchd());
            let served = started.and_then(|()| {
                wait_for(
                    &format!("the new mbatchd to serve (cycle {cycle})"),
                    Duration::from_secs(30),
                    || serving(&tools),
                )
            });
            let took = restarted.elapsed();
            for h in handles {
                match h.join() {
                    Ok((s1, k1, b1)) => {
                        subs.extend(s1);
                        kills.extend(k1);
                        bad.extend(b1);
                    }
                    Err(_) => bad.push(format!("cycle {cycle}: a submitter thread panicked")),
                }
            }
            served.map(|()| took)
        })?;
        restart_times.push(restart);
        // Held jobs acknowledged in this cycle may be killed in the next ones.
        if let Ok(mut k) = killable.lock() {
            k.extend(
                subs.iter()
                    .filter(|s| s.cycle == cycle && s.kind == Kind::Held)
                    .filter_map(|s| s.acked),
            );
        }
    }
    let cycles_took = t_cycles.elapsed();
    let retried = subs
        .iter()
        .filter(|s| s.acked.is_some() && s.out.contains("still trying"))
        .count();
    let acked: Vec<&Submit> = subs.iter().filter(|s| s.acked.is_some()).collect();
    // How the unacknowledged ones failed: stderr with the numbers taken out.
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for s in subs.iter().filter(|s| s.acked.is_none()) {
        let key: String = s.out.chars().filter(|c| !c.is_ascii_digit()).collect();
        *failures.entry(key).or_default() += 1;
    }
    for (how, n) in &failures {
        eprintln!("mbatchd_crash: {n} x {how}");
    }
    eprintln!(
        "mbatchd_crash: {CYCLES} kills in {cycles_took:.1?}: {} bsub ({} acknowledged, {retried} of them after \"still trying\", {} failed), {} bkill ({} acknowledged); restart to serving max {:.1?}",
        subs.len(),
        acked.len(),
        subs.len() - acked.len(),
        kills.len(),
        kills.iter().filter(|k| k.acked).count(),
        restart_times.iter().max().copied().unwrap_or_default(),
    );

    // At rest: nothing pending or running any more (held jobs stay PSUSP). Jobs that
    // never get there are a finding; the checks below still run on what is there.
    let busy = |m: &BTreeMap<u64, Shown>| -> Vec<String> {
        m.iter()
            .filter(|(_, s)| !matches!(s.stat.as_str(), "DONE" | "EXIT" | "PSUSP"))
            .map(|(id, s)| format!("{id} {} {}", s.stat, s.name))
            .collect()
    };
    let t_rest = Instant::now();
    let rest = wait_for(
        "every job to be finished or held",
        Duration::from_secs(60),
        || match bjobs(&tools) {
            Ok(m) if busy(&m).is_empty() => (Some(()), String::new()),
            Ok(m) => (None, format!("still busy: {:?}", busy(&m))),
            Err(e) => (None, e.to_string()),
        },
    );
    eprintln!(
        "mbatchd_crash: waited {:.1?} for the jobs to finish",
        t_rest.elapsed()
    );
    let shown = bjobs(&tools)?;
    if let Err(e) = rest {
        bad.push(format!("jobs never finish: {e:#}"));
    }
    let events = std::fs::read_to_string(&events_path)?;
    let shown_again = bjobs(&tools)?;
    if shown_again != shown {
        bad.push("bjobs changed at rest".into());
    }
    if logdir.join("lsb.events.1").exists() {
        bad.push("lsb.events was switched; this replay reads only the current file".into());
    }
    let log = replay(&events);
    eprintln!(
        "mbatchd_crash: lsb.events {} bytes, {} jobs, {} MBD_START, records {:?}",
        events.len(),
        log.jobs.len(),
        log.mbd_starts,
        log.counts
    );
    bad.extend(log.anomalies.iter().cloned());

    // Acknowledged submissions: distinct ids, each job exactly as submitted.
    let mut ids = BTreeSet::new();
    for s in &acked {
        let Some(id) = s.acked else { continue };
        if !ids.insert(id) {
            bad.push(format!("job id {id} acknowledged twice ({})", s.name));
        }
        match log.jobs.get(&id) {
            None => bad.push(format!(
                "acknowledged job {id} ({}, cycle {}) is not in lsb.events: {}",
                s.name, s.cycle, s.out
            )),
            Some(j) if j.name != s.name || j.command != s.kind.command() => bad.push(format!(
                "acknowledged job {id} is {:?}/{:?} in lsb.events, submitted as {:?}/{:?}",
                j.name,
                j.command,
                s.name,
                s.kind.command()
            )),
            Some(j) if j.hold != (s.kind == Kind::Held) => {
                bad.push(format!("job {id}: hold flag {} in lsb.events", j.hold))
            }
            Some(_) => {}
        }
        if !shown.contains_key(&id) {
            bad.push(format!(
                "acknowledged job {id} ({}, cycle {}) is not in bjobs",
                s.name, s.cycle
            ));
        }
    }
    // No submission exists twice, acknowledged or not; count the unacknowledged that exist.
    let mut by_name: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (id, j) in &log.jobs {
        by_name.entry(j.name.as_str()).or_default().push(*id);
    }
    let mut unacked_present = 0;
    for s in &subs {
        let found = by_name.get(s.name.as_str()).cloned().unwrap_or_default();
        if found.len() > 1 {
            bad.push(format!("submission {} exists as jobs {found:?}", s.name));
        }
        if s.acked.is_none() && !found.is_empty() {
            unacked_present += 1;
        }
    }
    let known: BTreeSet<&str> = subs.iter().map(|s| s.name.as_str()).collect();
    for (name, ids) in &by_name {
        if !known.contains(name) {
            bad.push(format!("jobs {ids:?} named {name:?} were never submitted"));
        }
    }
    // Each acknowledged job ended as its command says; acknowledged kills took effect.
    let killed_acked: BTreeSet<u64> = kills.iter().filter(|k| k.acked).map(|k| k.id).collect();
    let killed_any: BTreeSet<u64> = kills.iter().map(|k| k.id).collect();
    for k in kills.iter().filter(|k| k.acked) {
        if log.jobs.get(&k.id).map(|j| j.state) != Some("EXIT") {
            bad.push(format!(
                "acknowledged bkill of {} (cycle {}) did not end the job: {:?}; {}",
                k.id,
                k.cycle,
                log.jobs.get(&k.id),
                k.out
            ));
        }
    }
    for s in &acked {
        let Some(id) = s.acked else { continue };
        let Some(j) = log.jobs.get(&id) else { continue };
        let ok = match s.kind {
            Kind::Held if killed_acked.contains(&id) => j.state == "EXIT",
            Kind::Held if killed_any.contains(&id) => j.state == "EXIT" || j.state == "PSUSP",
            Kind::Held => j.state == "PSUSP",
            Kind::Done => j.state == "DONE" && j.exit_code() == 0,
            Kind::Exit3 => j.state == "EXIT" && j.exit_code() == 3,
        };
        if !ok {
            bad.push(format!(
                "acknowledged job {id} ({}, {:?}) ended {} with exit code {} (signals {:?})",
                s.name,
                s.kind,
                j.state,
                j.exit_code(),
                j.signals
            ));
        }
    }
    // The final state equals the replay.
    let diff = compare(&shown, &log);
    bad.extend(diff.iter().map(|d| format!("live mbatchd vs replay: {d}")));

    // One more kill -9 at rest: a pure replay must show the same.
    d.kill9_mbatchd()?;
    d.start_mbatchd()?;
    wait_cluster_ok(&tools, Duration::from_secs(60))?;
    let after = bjobs(&tools)?;
    let log2 = replay(&std::fs::read_to_string(&events_path)?);
    bad.extend(
        compare(&after, &log2)
            .iter()
            .map(|d| format!("replayed mbatchd vs replay: {d}")),
    );
    if after != shown {
        bad.push("bjobs differs after a restart at rest".into());
    }

    eprintln!(
        "mbatchd_crash: seed {seed}; {} acknowledged jobs all checked, {unacked_present} unacknowledged submissions exist; total {:.1?}",
        acked.len(),
        t0.elapsed()
    );
    if !bad.is_empty() {
        let show: Vec<&String> = bad.iter().take(60).collect();
        bail!(
            "{} problems (first {}):\n{}",
            bad.len(),
            show.len(),
            show.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok(())
}

#[test]
fn replay_reads_the_spec_examples() {
    // event-log.md §5 (OpenLava 4): job 101 runs, 102 finishes DONE with the post-exec
    // record, 105 is killed (exit 130 as a raw wait status), 521 is cleaned.
    let log = "#80\n\
\"JOB_NEW\" \"40\" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.101\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n\
\"JOB_NEW\" \"40\" 1795339535 102 0 33554451 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"/home/alice/run/out.%J\" \"\" \"/root\" \"1795339535.102\" 0 \"\" \"\" \"myjob\" \"env | grep -E \"\"^LSB_|^LSF_|^LS_\"\" | sort\" 0 \"\" \"default\" 1 \"linux\" \"\" 7185 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n\
\"JOB_START\" \"40\" 1795339540 101 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"\n\
\"JOB_START_ACCEPT\" \"40\" 1795339540 101 25592 25592 0 2097152\n\
\"JOB_EXECUTE\" \"40\" 1795339540 101 0 25592 \"/home/alice/run\" \"/root\" \"root\" 25592 0\n\
\"JOB_STATUS\" \"40\" 1795339540 102 64 0 0 0.0236 1795339540 1 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 0 0\n\
\"JOB_STATUS\" \"40\" 1795339540 102 192 0 0 0.0236 1795339540 0 0 0\n\
\"JOB_NEW\" \"40\" 1795339535 105 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.105\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n\
\"JOB_START\" \"40\" 1795339590 105 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"\n\
\"JOB_SIGNAL\" \"40\" 1795339586 105 0 1 \"KILL\" 0 \"root\"\n\
\"JOB_STATUS\" \"40\" 1795339586 105 32 0 0 0.0211 1795339586 1 0.005440 0.015618 4392 0 -1 0 0 782 0 0 0 32 -1 0 0 0 18 6 -1 33280 0\n\
\"HOST_CTRL\" \"40\" 1795339586 2 \"vm\" 0 \"root\" \"\"\n\
\"MBD_DIE\" \"40\" 1795339614 \"vm\" 0 202\n";
    let r = replay(log);
    assert!(r.anomalies.is_empty(), "{:?}", r.anomalies);
    assert_eq!(r.jobs.len(), 3);
    assert_eq!(r.jobs[&101].state, "RUN");
    assert_eq!(r.jobs[&101].command, "sleep 30");
    // options2 7185 has SUB2_HOLD: a held job that was later finished.
    assert!(r.jobs[&102].hold);
    assert_eq!(r.jobs[&102].name, "myjob");
    assert_eq!(
        r.jobs[&102].command,
        "env | grep -E \"^LSB_|^LSF_|^LS_\" | sort"
    );
    assert_eq!((r.jobs[&102].state, r.jobs[&102].exit_code()), ("DONE", 0));
    assert_eq!(
        (r.jobs[&105].state, r.jobs[&105].exit_code()),
        ("EXIT", 130)
    );
    assert_eq!(r.jobs[&105].signals, vec!["KILL".to_string()]);

    // A second JOB_NEW for an id, a record for an unknown job and a torn tail are caught.
    let first = log.lines().nth(1).unwrap_or_default();
    let twice = format!("{first}\n{first}\n\"JOB_CLEAN\" \"40\" 1 999 0\n\"JOB_ST");
    let r = replay(&twice);
    assert_eq!(r.anomalies.len(), 3, "{:?}", r.anomalies);
}
