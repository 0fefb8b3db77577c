//! sbatchd and mbatchd restarts on a 2-host loopback cluster of real processes: a
//! kill -9'd sbatchd re-adopts its running jobs from its job table (jobs.db), and
//! a restarted mbatchd reconciles with the sbatchds (a finish it missed, a host whose
//! sbatchd is away). Driven through the real commands; job processes are found in
//! `/proc` by their `LSB_JOBID` and this cluster's `LSF_ENVDIR`.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, wait_for, work_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hellos every second so that a silent sbatchd is noticed within seconds.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

const LONG: Duration = Duration::from_secs(60);

fn cluster(name: &str) -> Result<ProcessCluster> {
    ProcessCluster::start_batch(name, &ClusterSpec::new(2), PARAMS)
}

/// A job command that waits until `file` exists, then exits with `code`.
fn wait_file_then_exit(file: &Path, code: u8) -> String {
    format!(
        "while [ ! -e {} ]; do sleep 0.1; done; exit {code}",
        file.display()
    )
}

fn touch(file: &Path) -> Result<()> {
    std::fs::write(file, b"go\n").with_context(|| format!("creating {}", file.display()))
}

fn logdir(c: &ProcessCluster) -> PathBuf {
    c.dir.path().join("work/basalt/logdir")
}

/// Wait until lsb.events holds a `kind` record for job `id` (field 4).
fn wait_event(c: &ProcessCluster, kind: &str, id: u64) -> Result<()> {
    let events = logdir(c).join("lsb.events");
    wait_for(&format!("{kind} of job {id}"), LONG, || {
        let text = std::fs::read_to_string(&events).unwrap_or_default();
        let seen = text.lines().any(|l| {
            let f = event_fields(l);
            f.first().map(String::as_str) == Some(kind) && f.get(3) == Some(&id.to_string())
        });
        (seen.then_some(()), String::new())
    })
}

/// (jStatus, exitStatus) of the job's JOB_FINISH record in lsb.acct (field
/// positions of event-log.md: after the asked and execution host lists come
/// jStatus hostFactor jobName command rusage×19 mailUser projectName exitStatus).
fn acct_finish(c: &ProcessCluster, id: u64) -> Result<(u32, i32)> {
    let acct = std::fs::read_to_string(logdir(c).join("lsb.acct"))?;
    let mut found = Vec::new();
    for f in acct.lines().map(event_fields) {
        if f.first().map(String::as_str) != Some("JOB_FINISH") || f.get(3) != Some(&id.to_string())
        {
            continue;
        }
        let num = |i: usize| -> Result<usize> {
            f.get(i)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| anyhow!("JOB_FINISH field {i} of job {id}: {f:?}"))
        };
        let asked = num(22)?;
        let exec_at = 23 + asked;
        let st_at = exec_at + 1 + num(exec_at)?;
        let jstatus = num(st_at)? as u32;
        let exit: i32 = f
            .get(st_at + 25)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow!("no exitStatus in {f:?}"))?;
        found.push((jstatus, exit));
    }
    match found.as_slice() {
        [one] => Ok(*one),
        _ => bail!("job {id}: JOB_FINISH records {found:?} in lsb.acct:\n{acct}"),
    }
}

/// `bhist -l` with its continuation lines joined back.
fn bhist(c: &ProcessCluster, id: u64) -> Result<String> {
    let out = c.ok("bhist", &["-l", &id.to_string()])?;
    let mut flat = String::new();
    for l in out.lines() {
        if l.starts_with("                     ") && !flat.is_empty() {
            flat.pop();
            flat.push_str(l.trim_start());
        } else {
            flat.push_str(l);
        }
        flat.push('\n');
    }
    Ok(flat)
}

/// Pids of the job's processes: every live process whose environment carries
/// `LSB_JOBID=<id>` and this cluster's `LSF_ENVDIR`.
fn job_pids(c: &ProcessCluster, id: u64) -> Vec<i32> {
    let want_job = format!("LSB_JOBID={id}");
    let want_env = format!("LSF_ENVDIR={}", c.envdir.display());
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let mut vars = env.split(|b| *b == 0);
        let ours = vars.clone().any(|v| v == want_env.as_bytes());
        if ours
            && vars.any(|v| v == want_job.as_bytes())
            && proc_state(pid).is_some_and(|s| s != 'Z')
        {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

/// The job's top process: the one of its processes that leads its process group.
fn job_leader(c: &ProcessCluster, id: u64) -> Result<i32> {
    let pids = job_pids(c, id);
    pids.iter()
        .copied()
        .find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|t| {
                    t.rsplit_once(')')
                        .and_then(|(_, r)| r.split_whitespace().nth(2).map(str::to_owned))
                })
                .is_some_and(|pgrp| pgrp == p.to_string())
        })
        .ok_or_else(|| anyhow!("job {id} has no process group leader among {pids:?}"))
}

fn proc_state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Wait until the job has processes and all of them satisfy `ok`.
fn wait_procs(
    c: &ProcessCluster,
    id: u64,
    what: &str,
    ok: impl Fn(char) -> bool,
) -> Result<Vec<i32>> {
    wait_for(&format!("job {id}'s processes {what}"), LONG, || {
        let pids = job_pids(c, id);
        let states: Vec<(i32, Option<char>)> = pids.iter().map(|p| (*p, proc_state(*p))).collect();
        let good = !pids.is_empty() && states.iter().all(|(_, s)| s.is_some_and(&ok));
        (good.then(|| pids.clone()), format!("{states:?}"))
    })
}

/// The one `daemon` process of `host`.
fn one_pid(c: &ProcessCluster, daemon: &str, host: &str) -> Result<i32> {
    match c.pids_of(daemon, host).as_slice() {
        [p] => Ok(*p),
        other => bail!("expected one {daemon} for {host}, found {other:?}"),
    }
}

fn log_of(c: &ProcessCluster, daemon: &str, host: &str) -> String {
    std::fs::read_to_string(c.dir.path().join(format!("log/{daemon}.{host}.log")))
        .unwrap_or_default()
}

/// Wait until the sbatchd of `host` logs that it re-adopted `ids` with their
/// supervisors alive.
fn wait_readopted(c: &ProcessCluster, host: &str, ids: &[u64]) -> Result<()> {
    wait_for(
        &format!("sbatchd on {host} to re-adopt {ids:?}"),
        LONG,
        || {
            let log = log_of(c, "sbatchd", host);
            let all = ids.iter().all(|id| {
                log.contains(&format!(
                    "job {id} idx 0 attempt 1: re-adopted (supervisor alive"
                ))
            });
            (all.then_some(()), String::new())
        },
    )
}

/// Wait until bhosts shows `host` with one of `statuses` (a host running as many
/// jobs as it has slots is `closed`).
fn wait_host(c: &ProcessCluster, host: &str, statuses: &[&str]) -> Result<()> {
    wait_for(&format!("{host} to be {statuses:?}"), LONG, || {
        let out = c.stdout_ok("bhosts", &[host]).unwrap_or_default();
        let seen = out.lines().any(|l| {
            let mut f = l.split_whitespace();
            f.next() == Some(host) && f.next().is_some_and(|s| statuses.contains(&s))
        });
        (seen.then_some(()), out)
    })
}

/// Back from unreach.
const REACHABLE: &[&str] = &["ok", "closed"];

/// `kill -<sig> <pid>`.
fn signal(pid: i32, sig: &str) -> Result<()> {
    let st = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()?;
    if !st.success() {
        bail!("kill -{sig} {pid}: {st}");
    }
    Ok(())
}

/// Sends SIGCONT to a stopped process when dropped (also when a test fails).
struct Continue(i32);

impl Drop for Continue {
    fn drop(&mut self) {
        let _ = signal(self.0, "CONT");
    }
}

/// kill -9 of sbatchd on a host without mbatchd: its two jobs keep running, and the
/// restarted sbatchd re-adopts them: still RUN, still controllable (bstop stops
/// every process, bresume resumes them, bkill ends the job), and the other job's
/// own `exit 3` is recorded in bjobs, bhist and lsb.acct.
#[test]
fn killed_sbatchd_readopts_its_running_jobs() -> Result<()> {
    let mut c = cluster("sbd-restart-readopt")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let ctl = c.bsub(&work, &["-m", "hostB", "-o", "ctl.%J", "sleep 300"])?;
    let own = c.bsub(
        &work,
        &["-m", "hostB", "-o", "own.%J", &wait_file_then_exit(&go, 3)],
    )?;
    for id in [ctl, own] {
        wait_state(&c, id, "RUN", LONG)?;
        // Killing sbatchd before its answer to the dispatch is logged would make
        // the dispatch fail and the job go back to PEND: not this test's subject.
        wait_event(&c, "JOB_START_ACCEPT", id)?;
    }
    let ctl_pids = wait_procs(&c, ctl, "running", |s| s != 'T')?;
    let own_leader = job_leader(&c, own)?;

    let old = one_pid(&c, "sbatchd", "hostB")?;
    c.kill9_daemon("sbatchd", "hostB")?;
    assert!(
        c.pids_of("sbatchd", "hostB").is_empty(),
        "sbatchd {old} gone"
    );
    for p in ctl_pids.iter().chain([&own_leader]) {
        assert!(proc_state(*p).is_some(), "job process {p} survives sbatchd");
    }

    c.start_daemon("sbatchd", "hostB")?;
    wait_readopted(&c, "hostB", &[ctl, own])?;
    wait_host(&c, "hostB", REACHABLE)?;
    for id in [ctl, own] {
        wait_state(&c, id, "RUN", LONG)?;
    }
    // The same processes run: re-adopted, not started again.
    assert_eq!(job_pids(&c, ctl), ctl_pids);
    assert_eq!(job_leader(&c, own)?, own_leader);

    c.ok("bstop", &[&ctl.to_string()])?;
    wait_state(&c, ctl, "USUSP", LONG)?;
    let stopped = wait_procs(&c, ctl, "stopped (T)", |s| s == 'T')?;
    assert_eq!(stopped, ctl_pids);
    c.ok("bresume", &[&ctl.to_string()])?;
    wait_state(&c, ctl, "RUN", LONG)?;
    wait_procs(&c, ctl, "running again", |s| s != 'T')?;
    c.ok("bkill", &[&ctl.to_string()])?;
    wait_state(&c, ctl, "EXIT", LONG)?;
    wait_for("the killed job's processes to be gone", LONG, || {
        let left = job_pids(&c, ctl);
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;

    touch(&go)?;
    let row = wait_state(&c, own, "EXIT", LONG)?;
    assert_eq!(row.exit_code, "3", "{row:?}");
    assert_eq!(row.exec_host, "hostB", "{row:?}");
    let hist = bhist(&c, own)?;
    assert!(hist.contains("Exited with exit code 3."), "{hist}");
    assert_eq!(acct_finish(&c, own)?, (32, 3 << 8));
    let (ctl_status, ctl_exit) = acct_finish(&c, ctl)?;
    assert_eq!(ctl_status, 32);
    assert_ne!(ctl_exit, 0);
    let hist = bhist(&c, ctl)?;
    assert!(
        hist.contains("Suspended by the user or administrator"),
        "{hist}"
    );
    assert!(
        hist.contains("Signal <KILL> requested by user or administrator"),
        "{hist}"
    );
    Ok(())
}

/// kill -9 of sbatchd on the master host: the mbatchd it started keeps serving and
/// the job it runs keeps running; the restarted sbatchd re-adopts the job, does not
/// start a second mbatchd, and starts a new one when the old one dies.
#[test]
fn killed_master_sbatchd_leaves_mbatchd_and_its_job_running() -> Result<()> {
    let mut c = cluster("sbd-restart-master")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let id = c.bsub(
        &work,
        &["-m", "hostA", "-o", "m.%J", &wait_file_then_exit(&go, 3)],
    )?;
    wait_state(&c, id, "RUN", LONG)?;
    wait_event(&c, "JOB_START_ACCEPT", id)?;
    let leader = job_leader(&c, id)?;
    let mbd = one_pid(&c, "mbatchd", "hostA")?;

    c.kill9_daemon("sbatchd", "hostA")?;
    // mbatchd still answers while its sbatchd is away.
    wait_state(&c, id, "RUN", LONG)?;
    assert_eq!(one_pid(&c, "mbatchd", "hostA")?, mbd);

    c.start_daemon("sbatchd", "hostA")?;
    wait_readopted(&c, "hostA", &[id])?;
    wait_host(&c, "hostA", REACHABLE)?;
    wait_state(&c, id, "RUN", LONG)?;
    assert_eq!(
        c.pids_of("mbatchd", "hostA"),
        vec![mbd],
        "no second mbatchd while the first serves"
    );
    assert_eq!(job_leader(&c, id)?, leader, "the job keeps running");

    // The orphaned mbatchd dies: the new sbatchd supervises a new one.
    assert_eq!(c.kill9_pids_of("mbatchd", "hostA"), 1);
    let new = wait_for("a new mbatchd", LONG, || {
        let p = c.pids_of("mbatchd", "hostA");
        (
            (p.len() == 1 && p[0] != mbd).then(|| p[0]),
            format!("{p:?}"),
        )
    })?;
    wait_state(&c, id, "RUN", LONG)?;
    touch(&go)?;
    let row = wait_state(&c, id, "EXIT", LONG)?;
    assert_eq!(row.exit_code, "3", "{row:?}");
    assert_eq!(acct_finish(&c, id)?, (32, 3 << 8));
    assert_eq!(one_pid(&c, "mbatchd", "hostA")?, new);
    Ok(())
}

/// mbatchd is killed (and kept down) while a job on the other host finishes with
/// exit code 7: sbatchd keeps the finish and reports it to the restarted mbatchd,
/// which records the real exit status.
#[test]
fn restarted_mbatchd_learns_a_finish_it_missed() -> Result<()> {
    let c = cluster("sbd-restart-missed")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let id = c.bsub(
        &work,
        &["-m", "hostB", "-o", "f.%J", &wait_file_then_exit(&go, 7)],
    )?;
    wait_state(&c, id, "RUN", LONG)?;
    wait_event(&c, "JOB_START_ACCEPT", id)?;

    // Hold the master's sbatchd so that it does not restart mbatchd before the job
    // has finished.
    let master_sbd = one_pid(&c, "sbatchd", "hostA")?;
    signal(master_sbd, "STOP")?;
    let held = Continue(master_sbd);
    assert_eq!(c.kill9_pids_of("mbatchd", "hostA"), 1);
    touch(&go)?;
    wait_for("the job to end on hostB", LONG, || {
        let log = log_of(&c, "sbatchd", "hostB");
        let line = format!("job {id} idx 0 attempt 1: finished, wait status 1792");
        (log.contains(&line).then_some(()), String::new())
    })?;
    assert!(job_pids(&c, id).is_empty());
    drop(held);

    let row = wait_state(&c, id, "EXIT", LONG)?;
    assert_eq!(row.exit_code, "7", "{row:?}");
    assert_eq!(acct_finish(&c, id)?, (32, 7 << 8));
    let hist = bhist(&c, id)?;
    assert!(hist.contains("Exited with exit code 7."), "{hist}");
    Ok(())
}

/// A host whose sbatchd is down while mbatchd restarts: its jobs are UNKWN until
/// the sbatchd is back; then the one still running is RUN again and the one that
/// finished meanwhile has its real exit status.
#[test]
fn jobs_of_an_absent_sbatchd_are_unknown_after_mbatchd_restart() -> Result<()> {
    let mut c = cluster("sbd-restart-unknown")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let runs = c.bsub(&work, &["-m", "hostB", "-o", "r.%J", "sleep 300"])?;
    let ends = c.bsub(
        &work,
        &["-m", "hostB", "-o", "e.%J", &wait_file_then_exit(&go, 5)],
    )?;
    for id in [runs, ends] {
        wait_state(&c, id, "RUN", LONG)?;
        wait_event(&c, "JOB_START_ACCEPT", id)?;
    }
    let pids = job_pids(&c, runs);

    c.kill9_daemon("sbatchd", "hostB")?;
    assert_eq!(c.kill9_pids_of("mbatchd", "hostA"), 1);
    // The master's sbatchd restarts mbatchd; it replays lsb.events and has not
    // heard from hostB.
    wait_host(&c, "hostB", &["unreach"])?;
    for id in [runs, ends] {
        wait_state(&c, id, "UNKWN", LONG)?;
    }
    touch(&go)?;
    wait_for("the job to end while nobody listens", LONG, || {
        let left = job_pids(&c, ends);
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;
    // Still unknown: nobody has told mbatchd.
    assert_eq!(jobs(&c)?.get(&ends).map(|r| r.stat.as_str()), Some("UNKWN"));

    c.start_daemon("sbatchd", "hostB")?;
    wait_host(&c, "hostB", REACHABLE)?;
    wait_state(&c, runs, "RUN", LONG)?;
    assert_eq!(job_pids(&c, runs), pids, "the same processes run");
    let row = wait_state(&c, ends, "EXIT", LONG)?;
    assert_eq!(row.exit_code, "5", "{row:?}");
    assert_eq!(acct_finish(&c, ends)?, (32, 5 << 8));

    c.ok("bkill", &[&runs.to_string()])?;
    wait_state(&c, runs, "EXIT", LONG)?;
    Ok(())
}

/// A job removed (`bkill -r`) while its host's sbatchd was away runs on there until
/// the sbatchd is back: mbatchd no longer lists it, sbatchd asks about it, and kills
/// it on mbatchd's STOP_JOB answer. The job is accounted once.
#[test]
fn job_removed_while_its_sbatchd_was_away_is_killed_when_it_returns() -> Result<()> {
    let mut c = cluster("sbd-restart-removed")?;
    let work = work_dir(c.dir.path())?;
    let id = c.bsub(&work, &["-m", "hostB", "-o", "x.%J", "sleep 300"])?;
    wait_state(&c, id, "RUN", LONG)?;
    wait_event(&c, "JOB_START_ACCEPT", id)?;
    // Once mbatchd has acknowledged the job's reports (started, executing, the
    // first usage sample; an idle `sleep` has no more) and sbatchd has recorded that
    // (acknowledgements are written once a second), a restarted sbatchd has nothing
    // to resend for it: only asking about it can end it.
    wait_for(
        "the job's reports to be acknowledged and recorded",
        LONG,
        || {
            let log = log_of(&c, "sbatchd", "hostB");
            let acked = format!("job {id} idx 0 attempt 1: report 3 (Rusage) acknowledged: Ok");
            let recorded = format!("job {id} idx 0 attempt 1: acknowledgement 3 recorded");
            (
                (log.contains(&acked) && log.contains(&recorded)).then_some(()),
                String::new(),
            )
        },
    )?;
    // The job's processes, taken once its shell has had the time to start `sleep`
    // (right at JOB_START_ACCEPT it may not have forked yet).
    let pids = job_pids(&c, id);
    assert!(!pids.is_empty());

    c.kill9_daemon("sbatchd", "hostB")?;
    wait_host(&c, "hostB", &["unreach"])?;
    c.ok("bkill", &["-r", &id.to_string()])?;
    wait_state(&c, id, "EXIT", LONG)?;
    assert_eq!(job_pids(&c, id), pids, "nobody could stop it yet");

    c.start_daemon("sbatchd", "hostB")?;
    wait_readopted(&c, "hostB", &[id])?;
    wait_for("the removed job's processes to end", LONG, || {
        let left = job_pids(&c, id);
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;
    let log = log_of(&c, "sbatchd", "hostB");
    assert!(
        log.contains(&format!(
            "job {id} idx 0 attempt 1: mbatchd does not list it as running here"
        )),
        "{log}"
    );
    wait_host(&c, "hostB", REACHABLE)?;
    assert_eq!(acct_finish(&c, id)?.0, 32);
    assert_eq!(jobs(&c)?.get(&id).map(|r| r.stat.as_str()), Some("EXIT"));
    Ok(())
}
