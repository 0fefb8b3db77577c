//! The workload phases of `cargo xtask scale` (what each measures: the parent module) on
//! a cluster `up` started: the real commands from `<top>/bin`, and mbatchd's gRPC API
//! for the large submissions (bench's [`Api`]: a token per submission, each
//! acknowledged only once durable). Jobs go in as arrays of [`ARRAY`], as LSF sites
//! submit large numbers of jobs; the `pending` jobs wait in queue [`PENDING_QUEUE`],
//! inactivated first, the others run in [`RUN_QUEUE`].

use super::{Probe, Row};
use crate::bench::failover::{command_on, listens};
use crate::bench::submit::{Api, BsubOpts, submission_with};
use crate::bench::{LineCounter, percentile, rss_kib, wait_every};
use crate::down::{self, Daemon};
use anyhow::{Context, Result, anyhow, bail};
use basalt_config::embedded::DefaultCluster;
use basalt_testkit::acct;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The first master candidate (the master at start), and the next one.
const MASTER: &str = "hostA";
const NEXT: &str = "hostB";
/// Elements per array (MAX_JOB_ARRAY_SIZE's default).
const ARRAY: usize = 1000;
/// Slots of a hollow host (`basalt-hollow --ncpus` 4, MXJ `!`).
const HOLLOW_SLOTS: usize = 4;
/// Concurrent API connections of a submission.
const CLIENTS: usize = 8;
/// The queue the pending jobs wait in (inactivated: nothing is dispatched from it).
const PENDING_QUEUE: &str = "idle";
/// The queue the jobs that run are in.
const RUN_QUEUE: &str = "normal";
/// The throughput phase gives up when no job has finished for this long.
const STALL: Duration = Duration::from_secs(180);
/// `bsub` calls timed in a row (after two not timed).
const BSUB_CALLS: usize = 20;
/// A reconfiguration is over once the command loops have answered for this long since
/// their last failure.
const SETTLE: f64 = 3.0;

/// A cluster of `cargo xtask scale`, started by `up` in `top`.
pub(super) struct Scaled {
    top: PathBuf,
    envdir: PathBuf,
    bin: PathBuf,
    config: basalt_config::Config,
    /// The hollow hosts in the process of their own (`up`'s `hollow_apart`), and its pid.
    apart: Vec<String>,
    /// The processes that run them (several when there are more than one takes).
    apart_pids: Vec<i32>,
}

impl Scaled {
    /// The cluster of `hollow` hollow hosts in `top`, the last `apart` of them in a
    /// process of their own.
    pub(super) fn new(top: &Path, hollow: usize, apart: usize) -> Result<Scaled> {
        let envdir = DefaultCluster::envdir(top);
        let config = basalt_config::load(&envdir)
            .map(|l| l.config)
            .map_err(|e| anyhow!("the configuration in {}: {e}", envdir.display()))?;
        let names: Vec<String> = crate::hollow_hosts(hollow)?
            .into_iter()
            .map(|h| h.name)
            .collect();
        let groups = crate::hollow_groups(&names, apart);
        let first = groups.len() - crate::apart_groups(names.len(), apart);
        let mut hosts = Vec::new();
        let mut pids = Vec::new();
        for (k, group) in groups.iter().enumerate().skip(first) {
            let file = down::pid_dir(top).join(format!("{}.group{k}.pid", crate::HOLLOW));
            let pid: i32 = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?
                .trim()
                .parse()
                .with_context(|| format!("the pid in {}", file.display()))?;
            hosts.extend(group.iter().cloned());
            pids.push(pid);
        }
        Ok(Scaled {
            top: top.to_path_buf(),
            envdir,
            bin: top.join("bin"),
            config,
            apart: hosts,
            apart_pids: pids,
        })
    }

    /// A command of the cluster, run from this machine.
    fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.env("LSF_ENVDIR", &self.envdir)
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("BASALT_MBD_ADDR")
            .env_remove("BASALT_HOST")
            .stdin(Stdio::null());
        c
    }

    /// Run a command; its stdout, or an error with its stderr.
    fn ok(&self, name: &str, args: &[&str]) -> Result<String> {
        let o = self
            .cmd(name)
            .args(args)
            .output()
            .with_context(|| format!("running {name}"))?;
        if !o.status.success() {
            bail!(
                "{name} {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Run a command; its wall time in ms.
    fn timed_ms(&self, name: &str, args: &[&str]) -> Result<f64> {
        let t = Instant::now();
        self.ok(name, args)?;
        Ok(t.elapsed().as_secs_f64() * 1000.0)
    }

    fn daemons(&self) -> Vec<Daemon> {
        down::find(std::slice::from_ref(&self.top))
    }

    fn mbatchd(&self) -> Option<Daemon> {
        self.daemons().into_iter().find(|d| d.name == "mbatchd")
    }

    fn mbatchd_rss_mb(&self) -> Option<f64> {
        Some(rss_kib(self.mbatchd()?.pid)? as f64 / 1024.0)
    }

    /// Submit `total` jobs of `command` with `opts` through `api` as arrays `name[1-1000]`
    /// (the last one smaller); (array id, size) of each.
    fn submit_arrays(
        &self,
        api: &Api,
        name: &str,
        total: usize,
        opts: &BsubOpts,
        command: &str,
    ) -> Result<Vec<(u64, u32)>> {
        let job = |size: usize| {
            let mut o = opts.clone();
            o.job_name = Some(format!("{name}[1-{size}]"));
            submission_with(MASTER, command, &o)
        };
        let (full, rest) = (total / ARRAY, total % ARRAY);
        let mut out: Vec<(u64, u32)> = api
            .submit_all_ids(&job(ARRAY), full)?
            .into_iter()
            .map(|(id, _)| (id, ARRAY as u32))
            .collect();
        if rest > 0 {
            out.push((api.submit_one(&job(rest))?, rest as u32));
        }
        Ok(out)
    }

    /// `--jobs` jobs of `sleep 1` on the hollow hosts: first submission to last finish,
    /// and each once in lsb.acct.
    pub(super) fn throughput(&self, jobs: usize, row: &mut Row) -> Result<()> {
        // The jobs run on the hollow hosts, not as processes on the master candidates.
        self.ok("badmin", &["hclose", MASTER, NEXT])?;
        let logdir = self.config.logdir();
        let mut acct = LineCounter::new(logdir.join(basalt_eventlog::ACCT_FILE), b"\"JOB_FINISH\"");
        let before = acct.poll()?;
        let api = Api::connect_to(&self.config, MASTER, CLIENTS)?;
        let opts = BsubOpts {
            queue: Some(RUN_QUEUE.into()),
            out: Some(("/dev/null".into(), false)),
            ..BsubOpts::default()
        };
        let t = Instant::now();
        let arrays = self.submit_arrays(&api, "tput", jobs, &opts, "sleep 1")?;
        row.tput_jobs = Some(jobs);
        row.tput_submit_secs = Some(t.elapsed().as_secs_f64());
        let mut samples: Vec<(f64, usize)> = Vec::new();
        let mut last_change = Instant::now();
        loop {
            let done = acct.poll()? - before;
            if samples.last().is_none_or(|&(_, n)| n != done) {
                samples.push((t.elapsed().as_secs_f64(), done));
                last_change = Instant::now();
            }
            if done >= jobs {
                break;
            }
            if last_change.elapsed() > STALL {
                bail!(
                    "stalled: no job finished for {STALL:?}; {done} of {jobs} finished in {:.0} s",
                    t.elapsed().as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let secs = t.elapsed().as_secs_f64();
        row.tput_secs = Some(secs);
        row.tput_rate = Some(jobs as f64 / secs);
        row.tput_sustained_rate = sustained_rate(&samples, jobs, 0.1, 0.9);
        let check = acct::exactly_once(&acct::finishes(&logdir)?, acct::array_elements(&arrays));
        row.tput_acct_ok = Some(check.ok());
        row.tput_acct = Some(check.summary());
        Ok(())
    }

    /// The hosts apart lost at once with their jobs: until they are all `unreach` or
    /// `unavail`, and their jobs handled.
    pub(super) fn hostloss(&self, row: &mut Row) -> Result<()> {
        if self.apart.is_empty() || self.apart_pids.is_empty() {
            bail!("no hollow process apart to kill");
        }
        let lost = &self.apart;
        for &pid in &self.apart_pids {
            if !down::is_ours(pid, &self.top) {
                bail!("the hollow process apart (pid {pid}) is not running");
            }
        }
        // Every slot of the hosts apart busy.
        let n = lost.len() * HOLLOW_SLOTS;
        let api = Api::connect_to(&self.config, MASTER, CLIENTS)?;
        let opts = BsubOpts {
            queue: Some(RUN_QUEUE.into()),
            out: Some(("/dev/null".into(), false)),
            hosts: Some(lost.clone()),
            ..BsubOpts::default()
        };
        let arrays = self.submit_arrays(&api, "lost", n, &opts, "sleep 3600")?;
        drop(api);
        let ids: Vec<String> = arrays.iter().map(|(id, _)| id.to_string()).collect();
        let stats = || -> BTreeMap<String, usize> {
            let mut args = vec!["-a", "-noheader", "-o", "stat"];
            args.extend(ids.iter().map(String::as_str));
            let mut m = BTreeMap::new();
            for s in self
                .ok("bjobs", &args)
                .unwrap_or_default()
                .split_whitespace()
            {
                *m.entry(s.to_owned()).or_insert(0) += 1;
            }
            m
        };
        let mut seen = BTreeMap::new();
        wait_every(
            "the jobs to run on every slot of the hosts apart",
            Duration::from_secs(300),
            Duration::from_millis(500),
            || {
                seen = stats();
                seen.get("RUN") == Some(&n)
            },
        )
        .with_context(|| format!("{n} jobs submitted, by state: {seen:?}"))?;
        row.lost_hosts = Some(lost.len());
        row.lost_running = Some(n);

        for &pid in &self.apart_pids {
            kill(Pid::from_raw(pid), Signal::SIGKILL)
                .with_context(|| format!("killing the hollow process apart (pid {pid})"))?;
        }
        let t = Instant::now();
        let lost_set: BTreeSet<&str> = lost.iter().map(String::as_str).collect();
        let mut disturbed: BTreeSet<String> = BTreeSet::new();
        let mut jobs: BTreeMap<String, usize> = BTreeMap::new();
        let r = wait_every(
            "the hosts apart to be lost and their jobs handled",
            Duration::from_secs(300),
            Duration::from_millis(250),
            || {
                let now = t.elapsed().as_secs_f64();
                let b = columns(&self.ok("bhosts", &["-w"]).unwrap_or_default());
                let gone = |s: &str| s == "unreach" || s == "unavail";
                if row.lost_bhosts_secs.is_none()
                    && lost.iter().all(|h| b.get(h).is_some_and(|s| gone(s)))
                {
                    row.lost_bhosts_secs = Some(now);
                }
                for (h, s) in &b {
                    if !lost_set.contains(h.as_str()) && !undisturbed(s) {
                        disturbed.insert(format!("{h} {s}"));
                    }
                }
                if row.lost_lsload_secs.is_none() {
                    let l = columns(&self.ok("lsload", &["-w"]).unwrap_or_default());
                    if lost
                        .iter()
                        .all(|h| l.get(h).is_some_and(|s| s == "unavail"))
                    {
                        row.lost_lsload_secs = Some(now);
                    }
                }
                if row.lost_jobs_secs.is_none() {
                    jobs = stats();
                    let ended = jobs.get("EXIT").copied().unwrap_or(0);
                    let requeued = jobs.get("PEND").copied().unwrap_or(0);
                    if ended + requeued == n {
                        row.lost_jobs_secs = Some(now);
                        row.lost_jobs_exit = Some(ended);
                        row.lost_jobs_requeued = Some(requeued);
                    }
                }
                row.lost_bhosts_secs.is_some()
                    && row.lost_lsload_secs.is_some()
                    && row.lost_jobs_secs.is_some()
            },
        );
        row.lost_others_disturbed = Some(
            disturbed
                .iter()
                .filter_map(|d| d.split(' ').next())
                .collect::<BTreeSet<_>>()
                .len(),
        );
        row.lost_others_seen = disturbed.into_iter().take(10).collect();
        if row.lost_jobs_requeued.unwrap_or(0) > 0 {
            // Requeued jobs asking for the lost hosts would wait for ever.
            let args: Vec<&str> = ids.iter().map(String::as_str).collect();
            let _ = self.ok("bkill", &args);
        }
        r.with_context(|| format!("their {n} jobs by state: {jobs:?}"))
    }

    /// `--pending` jobs waiting in an inactive queue; the commands with them.
    pub(super) fn pending(&self, pending: usize, row: &mut Row) -> Result<()> {
        self.ok("badmin", &["qinact", PENDING_QUEUE])?;
        row.mbatchd_rss_before_mb = self.mbatchd_rss_mb();
        let api = Api::connect_to(&self.config, MASTER, CLIENTS)?;
        let opts = BsubOpts {
            queue: Some(PENDING_QUEUE.into()),
            out: Some(("/dev/null".into(), false)),
            ..BsubOpts::default()
        };
        let t = Instant::now();
        self.submit_arrays(&api, "pend", pending, &opts, "sleep 1")?;
        row.pending_submit_secs = Some(t.elapsed().as_secs_f64());
        row.pending_jobs = Some(pending);
        drop(api);
        row.mbatchd_rss_pending_mb = self.mbatchd_rss_mb();
        row.bqueues_pending_ms = Some(self.timed_ms("bqueues", &[])?);
        let (first, all, lines) = self.bjobs_all()?;
        row.bjobs_first_secs = Some(first);
        row.bjobs_all_secs = Some(all);
        row.bjobs_lines = Some(lines);
        let mut ms = Vec::new();
        for i in 0..BSUB_CALLS + 2 {
            let took =
                self.timed_ms("bsub", &["-q", PENDING_QUEUE, "-o", "/dev/null", "sleep 1"])?;
            if i >= 2 {
                ms.push(took);
            }
        }
        row.bsub_p50_ms = Some(percentile(&ms, 50.0));
        row.bsub_p90_ms = Some(percentile(&ms, 90.0));
        Ok(())
    }

    /// `bjobs -u all` read as it comes: seconds to its first line, to its end, and its
    /// lines.
    fn bjobs_all(&self) -> Result<(f64, f64, usize)> {
        let t = Instant::now();
        let mut child = self
            .cmd("bjobs")
            .args(["-u", "all"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("running bjobs")?;
        let mut out = child.stdout.take().context("bjobs' stdout")?;
        let mut buf = vec![0u8; 1 << 16];
        let (mut first, mut lines) = (None, 0);
        loop {
            let k = out.read(&mut buf).context("reading bjobs' output")?;
            if k == 0 {
                break;
            }
            let nl = buf[..k].iter().filter(|&&b| b == b'\n').count();
            if nl > 0 && first.is_none() {
                first = Some(t.elapsed().as_secs_f64());
            }
            lines += nl;
        }
        let o = child.wait_with_output().context("waiting for bjobs")?;
        let all = t.elapsed().as_secs_f64();
        if !o.status.success() {
            bail!(
                "bjobs -u all failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok((first.unwrap_or(all), all, lines))
    }

    /// `badmin reconfig` while a `bqueues` loop and a `bsub` loop run, until both have
    /// answered for [`SETTLE`] since their last failure.
    pub(super) fn reconfig(&self, row: &mut Row) -> Result<()> {
        let t = Instant::now();
        let now = || t.elapsed().as_secs_f64();
        let stop = AtomicBool::new(false);
        let calls: [Mutex<Vec<Call>>; 2] = Default::default();
        let looped = |k: usize, name: &str, args: &[&str]| {
            while !stop.load(Ordering::Relaxed) {
                let s = now();
                let ok = self
                    .cmd(name)
                    .args(args)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|st| st.success());
                let mut c = calls[k].lock().unwrap_or_else(PoisonError::into_inner);
                c.push((s, now(), ok));
            }
        };
        let copy = |k: usize| {
            calls[k]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        };
        let (t0, t1, done, settled) = std::thread::scope(|s| {
            s.spawn(|| looped(0, "bqueues", &[]));
            s.spawn(|| {
                looped(
                    1,
                    "bsub",
                    &["-q", PENDING_QUEUE, "-o", "/dev/null", "sleep 1"],
                )
            });
            std::thread::sleep(Duration::from_secs(1));
            let t0 = now();
            let done = self.ok("badmin", &["reconfig"]);
            let t1 = now();
            let settled = wait_every(
                "mbatchd to answer the command loops again after the reconfig",
                Duration::from_secs(300),
                Duration::from_millis(100),
                || {
                    (0..2)
                        .all(|k| answering_since(&copy(k), t1).is_some_and(|e| now() - e >= SETTLE))
                },
            );
            stop.store(true, Ordering::Relaxed);
            (t0, t1, done, settled)
        });
        let (bq, bs) = (copy(0), copy(1));
        done?;
        row.reconfig_secs = Some(t1 - t0);
        settled?;
        // Both loops answer again (and went on answering).
        let back = [&bq, &bs]
            .iter()
            .filter_map(|c| answering_since(c, t1))
            .fold(t1, f64::max);
        row.reconfig_done_secs = Some(back - t0);
        row.reconfig_bqueues = Some(probe_summary(&bq, t0, back));
        row.reconfig_bsub = Some(probe_summary(&bs, t0, back));
        Ok(())
    }

    /// mbatchd killed: until a submission is acknowledged again.
    pub(super) fn mbdkill(&self, row: &mut Row) -> Result<()> {
        let mbd = self.mbatchd().context("no mbatchd running")?;
        let host = mbd.host.clone().unwrap_or_else(|| MASTER.to_owned());
        let addr = basalt_runtime::mbd_addr(&self.config, &host)?;
        let t = Instant::now();
        kill(Pid::from_raw(mbd.pid), Signal::SIGKILL).context("killing mbatchd")?;
        // Its port is closed once it is dead: a listener after that is its successor.
        wait_every(
            "the killed mbatchd to die",
            Duration::from_secs(10),
            Duration::from_millis(5),
            || !down::alive(mbd.pid),
        )?;
        row.mbdkill_secs = Some(self.acknowledged(t, &host, addr)?);
        Ok(())
    }

    /// The master host's daemons killed: until hostB's mbatchd acknowledges a submission.
    pub(super) fn failover(&self, row: &mut Row) -> Result<()> {
        // sbatchd first: it would start another mbatchd.
        let order = ["sbatchd", "mbatchd", "lim", "res"];
        let mut doomed: Vec<Daemon> = self
            .daemons()
            .into_iter()
            .filter(|d| d.host.as_deref() == Some(MASTER) && order.contains(&d.name.as_str()))
            .collect();
        doomed.sort_by_key(|d| order.iter().position(|o| *o == d.name));
        if !doomed.iter().any(|d| d.name == "lim") {
            bail!("{MASTER}'s lim is not running");
        }
        let addr = basalt_runtime::mbd_addr(&self.config, NEXT)?;
        let t = Instant::now();
        for d in &doomed {
            let _ = kill(Pid::from_raw(d.pid), Signal::SIGKILL);
        }
        row.failover_secs = Some(self.acknowledged(t, NEXT, addr)?);
        Ok(())
    }

    /// Seconds from `t` until a submission sent to the mbatchd of `host` at `addr` is
    /// acknowledged: its port polled until it listens (as bench's failover does), then
    /// `bsub`.
    fn acknowledged(&self, t: Instant, host: &str, addr: SocketAddr) -> Result<f64> {
        wait_every(
            &format!("{host}'s mbatchd to listen"),
            Duration::from_secs(300),
            Duration::from_millis(20),
            || listens(addr),
        )?;
        let o = command_on(
            &self.bin,
            &self.envdir,
            host,
            "bsub",
            Some(&addr.to_string()),
        )
        .args(["-q", PENDING_QUEUE, "-o", "/dev/null", "sleep 1"])
        .output()
        .context("running bsub")?;
        if !o.status.success() {
            bail!(
                "bsub to {host}'s mbatchd failed although it listens: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(t.elapsed().as_secs_f64())
    }
}

/// A `bhosts -w` status of a host the loss of others leaves alone: `ok`, or closed by
/// the administrator (the master candidates, after the throughput phase) or full.
fn undisturbed(status: &str) -> bool {
    matches!(status, "ok" | "closed" | "closed_Adm" | "closed_Full")
}

/// The first two columns of `bhosts -w` or `lsload -w`: host -> status.
fn columns(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .skip(1)
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.to_owned()))
        })
        .collect()
}

/// The finish rate between the moments the `lo` and `hi` fractions of `total` had
/// finished, from (seconds, finished so far) samples in time order (None: not reached,
/// or at the same moment).
fn sustained_rate(samples: &[(f64, usize)], total: usize, lo: f64, hi: f64) -> Option<f64> {
    let at = |f: f64| {
        let n = (f * total as f64).ceil() as usize;
        samples.iter().find(|(_, c)| *c >= n).copied()
    };
    let ((t0, c0), (t1, c1)) = (at(lo)?, at(hi)?);
    (t1 > t0).then(|| (c1 - c0) as f64 / (t1 - t0))
}

/// One command of a loop: (start, end, answered), seconds.
type Call = (f64, f64, bool);

/// The end of the first answer, among the calls of a loop that started at or after
/// `after`, that follows their last failure (None: no such answer yet).
fn answering_since(calls: &[Call], after: f64) -> Option<f64> {
    let from = calls
        .iter()
        .filter(|c| c.0 >= after && !c.2)
        .map(|c| c.1)
        .fold(after, f64::max);
    calls
        .iter()
        .filter(|c| c.0 >= from && c.2)
        .map(|c| c.1)
        .reduce(f64::min)
}

/// A loop of calls seen over the window `t0..t1`: the calls that overlap it, answered
/// or failed, and the longest time in it without an answer (from `t0` or an answer to
/// the next answer, the first answer after `t1` included).
fn probe_summary(calls: &[Call], t0: f64, t1: f64) -> Probe {
    let mut p = Probe::default();
    for &(s, e, ok) in calls {
        if s <= t1 && e >= t0 {
            if ok {
                p.answered += 1;
            } else {
                p.failed += 1;
            }
        }
    }
    let mut ends: Vec<f64> = calls
        .iter()
        .filter(|c| c.2 && c.1 > t0)
        .map(|c| c.1)
        .collect();
    ends.sort_by(f64::total_cmp);
    let mut prev = t0;
    for e in ends {
        p.longest_secs = p.longest_secs.max(e - prev);
        prev = e;
        if e >= t1 {
            return p;
        }
    }
    // No answer after the window: count until its end.
    p.longest_secs = p.longest_secs.max(t1 - prev);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sustained_rate_leaves_out_the_start_and_the_tail() {
        // 100 jobs: nothing for 5 s, then 10 a second, the last 10 slowly.
        let mut s = vec![(5.0, 0)];
        for k in 1..=9 {
            s.push((5.0 + k as f64, 10 * k));
        }
        s.push((30.0, 100));
        assert_eq!(sustained_rate(&s, 100, 0.1, 0.9), Some(10.0));
        assert_eq!(sustained_rate(&s[..5], 100, 0.1, 0.9), None);
        assert_eq!(sustained_rate(&[(1.0, 100)], 100, 0.1, 0.9), None);
    }

    #[test]
    fn a_probe_counts_the_calls_of_the_window_and_its_longest_silence() {
        let calls = [
            (0.0, 0.1, true),
            (0.1, 0.2, true),
            // The window is 0.25 .. 1.0: a failure, a slow answer, then quick ones.
            (0.2, 0.3, false),
            (0.3, 0.9, true),
            (0.9, 1.0, true),
            (1.0, 1.1, true),
            (1.1, 1.2, true),
        ];
        let p = probe_summary(&calls, 0.25, 1.0);
        assert_eq!((p.answered, p.failed), (3, 1));
        assert!((p.longest_secs - 0.65).abs() < 1e-9, "{p:?}");
        // Nothing answered after the window's start: silent to its end.
        let p = probe_summary(&calls[..3], 0.25, 1.0);
        assert_eq!((p.answered, p.failed), (0, 1));
        assert!((p.longest_secs - 0.75).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn the_service_is_back_at_the_first_answer_after_the_last_failure() {
        let calls = [
            (0.0, 0.1, true),
            // badmin returned at 0.15; an answer, then failures, then answers.
            (0.1, 0.2, true),
            (0.2, 0.3, false),
            (0.3, 0.4, false),
            (0.4, 0.6, true),
            (0.6, 0.7, true),
        ];
        assert_eq!(answering_since(&calls, 0.15), Some(0.6));
        assert_eq!(answering_since(&calls[..4], 0.15), None);
        // No failure: the first answer to a call started after.
        assert_eq!(answering_since(&calls[..2], 0.05), Some(0.2));
        // A slow answer to a call in flight at `after` does not count; the next does.
        let slow = [(0.0, 2.5, true), (2.5, 2.6, true)];
        assert_eq!(answering_since(&slow, 0.1), Some(2.6));
    }

    #[test]
    fn host_statuses_are_read_from_the_first_two_columns() {
        let out =
            "HOST_NAME          STATUS       JL/U    MAX\nhostA ok - 4\nhv00001 unreach - 4\n";
        let c = columns(out);
        assert_eq!(c.get("hv00001").map(String::as_str), Some("unreach"));
        assert_eq!(c.len(), 2);
    }
}
