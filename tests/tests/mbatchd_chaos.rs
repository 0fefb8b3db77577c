//! Issue 29, "Recovery in seconds": mbatchd is killed with SIGKILL 50 times in a row on a
//! 2-host process cluster of the real binaries, with submissions running, and the
//! master's sbatchd restarts it (no `--no-mbatchd`: its own restart policy is what is
//! measured). An mbatchd that had served is restarted at once, and its successor takes
//! the event-log lock of the dead process over without waiting for staleness.
//!
//! Each cycle: the mbatchd serving is found, left serving 100–400 ms while two threads
//! keep submitting, then SIGKILLed — at once, after the first 100 ms, when lsb.events
//! shows a job's end whose `JOB_FINISH` lsb.acct does not have yet (the files are
//! watched every half millisecond: a kill between the two writes); a probe `bsub` is started at once (bsub keeps trying
//! while mbatchd is down) and the time from the kill to its acknowledgement is the
//! cycle's kill-to-serving time.
//!
//! Checked afterwards:
//! * 0 acknowledged jobs lost: every job id a `bsub` printed exists, under its name;
//! * 0 jobs run twice: each job appends `$LSB_JOBID` to one file, every id is there at
//!   most once (and every DONE job once);
//! * 0 `bsub` calls that exited non-zero although their job exists (found by its unique
//!   name): a user who resubmits on failure would run it twice;
//! * every killed mbatchd was restarted by sbatchd at once (its log says why), none
//!   with the start-up back-off;
//! * kill-to-serving p100 under 3 s;
//! * issue 49, item 4: each job runs `echo` and ends at once, so jobs end all through
//!   the kills, and a kill often falls between an iteration's lsb.events write and its
//!   lsb.acct write: every finished job has exactly one `JOB_FINISH` in lsb.acct (none
//!   missing, none twice, none for a job that did not end), and `bacct -l -u all`
//!   reports each once.
//!
//! The figures (p50/p100 kill-to-serving, counts) are printed on stderr with the prefix
//! `mbatchd_chaos:`; `cargo test -p basalt-tests --test mbatchd_chaos -- --nocapture`
//! shows them.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, Commands, CommandsAt, ProcessCluster, wait_for};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KILLS: usize = 50;
/// Background submitters.
const THREADS: usize = 2;
/// The goal: from the kill to the next acknowledged submission.
const GOAL: Duration = Duration::from_secs(3);
/// No single command or wait may take longer than this.
const DEADLINE: Duration = Duration::from_secs(30);

/// One `bsub` call and how it ended.
#[derive(Debug, Clone)]
struct Submit {
    name: String,
    /// The id it printed, when it exited 0 with the success line.
    acked: Option<u64>,
    /// Exit status and output, for messages.
    out: String,
}

/// How to run the commands without borrowing the cluster.
#[derive(Debug, Clone)]
struct Tools(CommandsAt);

impl Tools {
    fn command(&self, name: &str) -> Command {
        let mut c = self.0.command(name);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    }

    /// Run `name args` to its end, killing it after [`DEADLINE`]; (exit code, stdout,
    /// stderr). The end is noticed within 2 ms, so that times measured with it are
    /// the command's.
    fn run(&self, name: &str, args: &[&str]) -> Result<(Option<i32>, String, String)> {
        let mut child = self
            .command(name)
            .args(args)
            .spawn()
            .with_context(|| format!("running {name}"))?;
        let (mut out, mut err) = (String::new(), String::new());
        let (so, se) = (child.stdout.take(), child.stderr.take());
        // Outputs are small; read them on threads so that a full pipe cannot block it.
        let ro = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = so {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let re = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = se {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let end = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break Some(s);
            }
            if Instant::now() > end {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        if let Ok(s) = ro.join() {
            out = s;
        }
        if let Ok(s) = re.join() {
            err = s;
        }
        match status {
            Some(s) => Ok((s.code(), out, err)),
            None => bail!("{name} {args:?} did not end within {DEADLINE:?}: {out} {err}"),
        }
    }

    /// `bsub -J name -o /dev/null "echo $LSB_JOBID >> runs"`.
    fn submit(&self, name: &str, runs: &Path) -> Submit {
        let cmd = format!("echo $LSB_JOBID >> {}", runs.display());
        match self.run("bsub", &["-J", name, "-o", "/dev/null", &cmd]) {
            Ok((code, out, err)) => Submit {
                name: name.to_owned(),
                acked: (code == Some(0)).then(|| job_id(&out)).flatten(),
                out: format!("exit {code:?}; stdout {out:?}; stderr {err:?}"),
            },
            Err(e) => Submit {
                name: name.to_owned(),
                acked: None,
                out: format!("{e:#}"),
            },
        }
    }
}

/// The job id in `Job <N> is submitted ...`.
fn job_id(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find(|l| l.starts_with("Job <") && l.contains("> is submitted to "))?
        .split(['<', '>'])
        .nth(1)?
        .parse()
        .ok()
}

/// Every job as `bjobs -a -json`: id -> (stat, name).
fn all_jobs(tools: &Tools) -> Result<BTreeMap<u64, (String, String)>> {
    let (code, out, err) = tools.run(
        "bjobs",
        &["-a", "-u", "all", "-o", "jobid stat job_name", "-json"],
    )?;
    if code != Some(0) && out.is_empty() {
        bail!("bjobs failed: {err}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("bjobs -json: {out} {err}"))?;
    let mut m = BTreeMap::new();
    for r in v["RECORDS"].as_array().cloned().unwrap_or_default() {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_owned();
        let id: u64 = s("JOBID")
            .parse()
            .with_context(|| format!("bad JOBID in {r}"))?;
        m.insert(id, (s("STAT"), s("JOB_NAME")));
    }
    Ok(m)
}

/// lsb.acct's `JOB_FINISH` records, read independently (event-log.md: the record type,
/// the version, the event time, then the job id): job id -> how many.
fn acct_records(logdir: &Path) -> Result<BTreeMap<u64, usize>> {
    let path = logdir.join("lsb.acct");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("\"JOB_FINISH\" ")) {
        let id: u64 = l
            .split_whitespace()
            .nth(3)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("no job id in {l}"))?;
        *out.entry(id).or_default() += 1;
    }
    Ok(out)
}

/// The jobs `bacct -l -u all` reports: job id -> how many times.
fn bacct_jobs(tools: &Tools) -> Result<BTreeMap<u64, usize>> {
    let (code, out, err) = tools.run("bacct", &["-l", "-u", "all"])?;
    if code != Some(0) {
        bail!("bacct -l -u all exited {code:?}: {err}");
    }
    let mut m = BTreeMap::new();
    for l in out.lines() {
        if let Some(rest) = l.trim_start().strip_prefix("Job <")
            && let Some(id) = rest.split('>').next().and_then(|s| s.parse::<u64>().ok())
        {
            *m.entry(id).or_default() += 1;
        }
    }
    Ok(m)
}

/// The `q`-quantile of sorted durations (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// A duration as `{:?}` prints it (`102.3ms`, `1.2s`, `950µs`).
fn parse_duration(s: &str) -> Option<Duration> {
    let (num, unit) = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|i| s.split_at(i))?;
    let v: f64 = num.parse().ok()?;
    let secs = match unit {
        "s" => v,
        "ms" => v / 1e3,
        "µs" | "us" => v / 1e6,
        "ns" => v / 1e9,
        _ => return None,
    };
    Some(Duration::from_secs_f64(secs))
}

/// From the master's sbatchd log: how long each mbatchd took from its start to its
/// `READY=1` report, how many exits were restarted at once, and how many were taken
/// for start-up failures (back-off).
fn sbatchd_view(log: &str) -> (Vec<Duration>, usize, usize) {
    let mut ready = Vec::new();
    for l in log.lines() {
        if let Some(rest) = l.split(" serves (").nth(1)
            && let Some(d) = rest.split(" after its start)").next()
            && let Some(d) = parse_duration(d)
        {
            ready.push(d);
        }
    }
    let at_once = log
        .lines()
        .filter(|l| l.contains("served: restarting at once"))
        .count();
    let backoff = log
        .lines()
        .filter(|l| l.contains("it never served"))
        .count();
    ready.sort();
    (ready, at_once, backoff)
}

/// Watches lsb.events and lsb.acct as they grow, read independently (event-log.md:
/// `"JOB_STATUS" "<version>" <time> <jobId> <jStatus> ...`, `"JOB_FINISH" "<version>"
/// <time> <jobId> ...`): which jobs' ends (DONE or EXIT, without the post-execution
/// bits) lsb.events has and lsb.acct does not.
struct Watch {
    logdir: std::path::PathBuf,
    /// How far each file was read, and the incomplete line at its end.
    events: (u64, Vec<u8>),
    acct: (u64, Vec<u8>),
    ended: BTreeSet<u64>,
    recorded: BTreeSet<u64>,
}

impl Watch {
    fn new(logdir: std::path::PathBuf) -> Watch {
        Watch {
            logdir,
            events: (0, Vec::new()),
            acct: (0, Vec::new()),
            ended: BTreeSet::new(),
            recorded: BTreeSet::new(),
        }
    }

    /// The complete lines `name` got since the last call.
    fn new_lines(path: &Path, at: &mut (u64, Vec<u8>)) -> Vec<String> {
        use std::io::{Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return Vec::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len < at.0 {
            // Rewritten (a log switch): read it again from the top.
            *at = (0, Vec::new());
        }
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(at.0)).is_err() || f.read_to_end(&mut buf).is_err() {
            return Vec::new();
        }
        at.0 += buf.len() as u64;
        at.1.extend_from_slice(&buf);
        let Some(end) = at.1.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let done: Vec<u8> = at.1.drain(..=end).collect();
        String::from_utf8_lossy(&done)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Read what the files got; the jobs whose end lsb.events has and lsb.acct not.
    fn unrecorded(&mut self) -> BTreeSet<u64> {
        for l in Self::new_lines(&self.logdir.join("lsb.events"), &mut self.events) {
            if !l.starts_with("\"JOB_STATUS\" ") {
                continue;
            }
            let f: Vec<&str> = l.split_whitespace().collect();
            if let (Some(id), Some(st)) = (
                f.get(3).and_then(|s| s.parse::<u64>().ok()),
                f.get(4).and_then(|s| s.parse::<u32>().ok()),
            ) && st & 0x60 != 0
                && st & 0x180 == 0
            {
                self.ended.insert(id);
            }
        }
        for l in Self::new_lines(&self.logdir.join("lsb.acct"), &mut self.acct) {
            if let Some(id) = l
                .starts_with("\"JOB_FINISH\" ")
                .then(|| l.split_whitespace().nth(3))
                .flatten()
                .and_then(|s| s.parse::<u64>().ok())
            {
                self.recorded.insert(id);
            }
        }
        self.ended.difference(&self.recorded).copied().collect()
    }
}

/// splitmix64, to vary how long each mbatchd serves before its kill.
fn next_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn mbatchd_killed_50_times_serves_again_within_3_s_and_loses_nothing() -> Result<()> {
    let t0 = Instant::now();
    let c = ProcessCluster::start_batch(
        "mbd-chaos",
        &ClusterSpec::new(2),
        "BASALT_SBD_HELLO_INTERVAL = 1",
    )?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let runs = work.join("runs");
    let tools = Tools(CommandsAt::new(&c, work.clone()));
    eprintln!("mbatchd_chaos: cluster up in {:.1?}", t0.elapsed());

    let stop = Arc::new(AtomicBool::new(false));
    let subs: Arc<Mutex<Vec<Submit>>> = Arc::default();
    let mut threads = Vec::new();
    for t in 0..THREADS {
        let (stop, subs, tools, runs) = (stop.clone(), subs.clone(), tools.clone(), runs.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let s = tools.submit(&format!("s{t}n{n}"), &runs);
                if let Ok(mut v) = subs.lock() {
                    v.push(s);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }));
    }

    let mut rng = std::process::id() as u64;
    let mut watch = Watch::new(c.dir.path().join("work/basalt/logdir"));
    // Kills that came while lsb.events had an end lsb.acct had not.
    let mut between = 0usize;
    let mut times = Vec::new();
    let mut probes = Vec::new();
    let t_kills = Instant::now();
    let result = (|| -> Result<()> {
        for k in 0..KILLS {
            let pid = wait_for(
                &format!("one serving mbatchd on hostA before kill {}", k + 1),
                DEADLINE,
                || {
                    let p = c.pids_of("mbatchd", "hostA");
                    ((p.len() == 1).then(|| p[0]), format!("{p:?}"))
                },
            )?;
            let serve = Duration::from_millis(100 + next_rand(&mut rng) % 300);
            let since = Instant::now();
            let before = watch.unrecorded();
            std::thread::sleep(Duration::from_millis(100));
            while since.elapsed() < serve {
                if watch.unrecorded().difference(&before).next().is_some() {
                    between += 1;
                    break;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            )
            .with_context(|| format!("kill -9 {pid}"))?;
            let killed = Instant::now();
            // The next acknowledged submission: bsub keeps trying while mbatchd is down;
            // should one give up, another is started, until the deadline.
            let took = loop {
                let s = tools.submit(&format!("p{k}n{}", probes.len()), &runs);
                let acked = s.acked.is_some();
                probes.push(s);
                if acked {
                    break killed.elapsed();
                }
                if killed.elapsed() > DEADLINE {
                    bail!(
                        "kill {}: no submission acknowledged within {DEADLINE:?} of the kill: {}",
                        k + 1,
                        probes.last().map_or("", |s| s.out.as_str())
                    );
                }
            };
            times.push(took);
        }
        Ok(())
    })();
    let kills_took = t_kills.elapsed();
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
    result?;

    let mut all: Vec<Submit> = subs.lock().map_err(|_| anyhow!("poisoned"))?.clone();
    all.extend(probes);
    let acked: BTreeMap<u64, String> = all
        .iter()
        .filter_map(|s| s.acked.map(|id| (id, s.name.clone())))
        .collect();
    let n_acked = all.iter().filter(|s| s.acked.is_some()).count();
    let failed: Vec<&Submit> = all.iter().filter(|s| s.acked.is_none()).collect();

    // Every acknowledged job exists and ends (each runs `echo`); wait for them all.
    let jobs = wait_for(
        "every acknowledged job to exist and to have ended",
        Duration::from_secs(180),
        || match all_jobs(&tools) {
            Ok(jobs) => {
                let missing = acked.keys().filter(|id| !jobs.contains_key(id)).count();
                let busy = jobs
                    .values()
                    .filter(|(s, _)| s != "DONE" && s != "EXIT")
                    .count();
                (
                    (missing == 0 && busy == 0).then_some(jobs),
                    format!("{missing} acknowledged jobs missing, {busy} not ended"),
                )
            }
            Err(e) => (None, format!("{e:#}")),
        },
    );
    let jobs = match jobs {
        Ok(j) => j,
        // Report which ones, from what is there now.
        Err(e) => {
            let now = all_jobs(&tools).unwrap_or_default();
            let lost: Vec<_> = acked
                .iter()
                .filter(|(id, _)| !now.contains_key(id))
                .collect();
            bail!("{e:#}\nacknowledged jobs not found: {lost:?}");
        }
    };
    let by_name: BTreeMap<&str, u64> = jobs
        .iter()
        .map(|(id, (_, name))| (name.as_str(), *id))
        .collect();

    let lost: Vec<(u64, &String)> = acked
        .iter()
        .filter(|(id, name)| jobs.get(id).is_none_or(|(_, n)| n != *name))
        .map(|(id, n)| (*id, n))
        .collect();
    let text = std::fs::read_to_string(&runs).unwrap_or_default();
    let mut ran = BTreeMap::<u64, usize>::new();
    for l in text.lines() {
        if let Ok(id) = l.trim().parse::<u64>() {
            *ran.entry(id).or_default() += 1;
        }
    }
    let twice: Vec<u64> = ran
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    let done_not_run: Vec<u64> = jobs
        .iter()
        .filter(|(id, (s, _))| s == "DONE" && !ran.contains_key(id))
        .map(|(id, _)| *id)
        .collect();
    let failed_but_exists: Vec<(&str, u64, &str)> = failed
        .iter()
        .filter_map(|s| {
            by_name
                .get(s.name.as_str())
                .map(|id| (s.name.as_str(), *id, s.out.as_str()))
        })
        .collect();
    let ids: BTreeSet<u64> = acked.keys().copied().collect();

    // Accounting: one record per finished job.
    let ended: BTreeSet<u64> = jobs
        .iter()
        .filter(|(_, (s, _))| s == "DONE" || s == "EXIT")
        .map(|(id, _)| *id)
        .collect();
    let acct = acct_records(&c.dir.path().join("work/basalt/logdir"))?;
    let no_record: Vec<u64> = ended
        .iter()
        .filter(|id| !acct.contains_key(id))
        .copied()
        .collect();
    let acct_twice: Vec<u64> = acct
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    let acct_not_ended: Vec<u64> = acct
        .keys()
        .filter(|id| !ended.contains(id))
        .copied()
        .collect();
    let in_bacct = bacct_jobs(&tools)?;
    let bacct_wrong: Vec<(u64, usize)> = ended
        .iter()
        .map(|id| (*id, in_bacct.get(id).copied().unwrap_or(0)))
        .filter(|(_, n)| *n != 1)
        .collect();

    let mut sorted = times.clone();
    sorted.sort();
    let (p50, p90, p100) = (
        quantile(&sorted, 0.5),
        quantile(&sorted, 0.9),
        quantile(&sorted, 1.0),
    );
    eprintln!(
        "mbatchd_chaos: {KILLS} kill -9 of mbatchd in {kills_took:.1?}; kill to next \
         acknowledged submission: p50 {p50:.2?}, p90 {p90:.2?}, p100 {p100:.2?} \
         (min {:.2?}); goal p100 < {GOAL:?}",
        sorted.first().copied().unwrap_or_default()
    );
    eprintln!(
        "mbatchd_chaos: {} bsub calls, {n_acked} acknowledged ({} distinct ids), {} \
         exited non-zero ({} of them although their job exists); {} acknowledged jobs \
         lost; {} jobs ran, {} twice, {} DONE without running",
        all.len(),
        ids.len(),
        failed.len(),
        failed_but_exists.len(),
        lost.len(),
        ran.len(),
        twice.len(),
        done_not_run.len()
    );
    eprintln!(
        "mbatchd_chaos: {between} of the {KILLS} kills came while lsb.events had a job's end \
         lsb.acct had not yet; {} jobs ended; lsb.acct: {} records, {} ended jobs without \
         one, {} jobs with more than one, {} records of jobs that did not end; bacct: {} \
         ended jobs not reported exactly once",
        ended.len(),
        acct.values().sum::<usize>(),
        no_record.len(),
        acct_twice.len(),
        acct_not_ended.len(),
        bacct_wrong.len()
    );
    eprintln!(
        "mbatchd_chaos: kill-to-serving per kill (ms): {:?}",
        times.iter().map(|t| t.as_millis()).collect::<Vec<_>>()
    );
    let log = std::fs::read_to_string(c.dir.path().join("log/sbatchd.hostA.log"))
        .context("reading hostA's sbatchd log")?;
    let (ready, at_once, backoff) = sbatchd_view(&log);
    eprintln!(
        "mbatchd_chaos: hostA's sbatchd: {at_once} exits restarted at once, {backoff} \
         backed off; a new mbatchd reported serving p50 {:.2?}, max {:.2?} after its \
         start ({} reports)",
        quantile(&ready, 0.5),
        quantile(&ready, 1.0),
        ready.len()
    );
    for (name, id, out) in failed_but_exists.iter().take(10) {
        eprintln!("mbatchd_chaos: bsub {name} failed but job {id} exists: {out}");
    }

    assert_eq!(ids.len(), n_acked, "a job id was acknowledged twice");
    assert!(lost.is_empty(), "acknowledged jobs lost: {lost:?}");
    assert!(twice.is_empty(), "jobs ran twice: {twice:?}");
    assert!(
        done_not_run.is_empty(),
        "DONE without running: {done_not_run:?}"
    );
    assert!(
        at_once >= KILLS && backoff == 0,
        "sbatchd restarted {at_once} of the {KILLS} killed mbatchds at once, {backoff} with \
         a back-off"
    );
    assert!(
        p100 < GOAL,
        "kill to serving p100 {p100:?} is not under {GOAL:?}: {times:?}"
    );
    assert!(
        no_record.is_empty() && acct_twice.is_empty() && acct_not_ended.is_empty(),
        "lsb.acct: finished jobs without a JOB_FINISH: {no_record:?}; with more than one: \
         {acct_twice:?}; records of jobs that did not end: {acct_not_ended:?}"
    );
    assert!(
        bacct_wrong.is_empty(),
        "bacct does not report these finished jobs exactly once (job, times): {bacct_wrong:?}"
    );
    assert!(
        failed_but_exists.is_empty(),
        "{} bsub calls exited non-zero although their job exists: {failed_but_exists:?}",
        failed_but_exists.len()
    );
    Ok(())
}
