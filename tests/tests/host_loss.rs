//! Lost hosts on a 2-host loopback cluster of real processes (mbatchd on hostA): hostB
//! dies (its lim, sbatchd, job supervisors and jobs are killed -9). Once hostB has been
//! unreach for `BASALT_HOST_LOST_GRACE`, mbatchd gives up on its jobs: the rerunnable
//! one (`bsub -r`) is requeued and reruns on hostA to DONE, the other ends EXIT. When
//! hostB comes back nothing runs or is accounted twice. A second test keeps hostB's
//! jobs alive while its sbatchd is away (a partition): the returning sbatchd is told to
//! kill the copies mbatchd gave up on.

use anyhow::{Context, Result, anyhow};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, holds_for, wait_for, work_dir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hellos every second (unreach after 3 s), jobs given up 3 s later.
const PARAMS: &str =
    "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2\nBASALT_HOST_LOST_GRACE = 3";

const LONG: Duration = Duration::from_secs(30);

fn cluster(name: &str) -> Result<ProcessCluster> {
    ProcessCluster::start_batch(name, &ClusterSpec::new(2), PARAMS)
}

fn logdir(c: &ProcessCluster) -> PathBuf {
    c.dir.path().join("work/basalt/logdir")
}

/// The `kind` records of job `id` in lsb.events (fields).
fn events_of(c: &ProcessCluster, kind: &str, id: u64) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(logdir(c).join("lsb.events")).unwrap_or_default();
    text.lines()
        .map(event_fields)
        .filter(|f| {
            f.first().map(String::as_str) == Some(kind) && f.get(3) == Some(&id.to_string())
        })
        .collect()
}

fn wait_event(c: &ProcessCluster, kind: &str, id: u64) -> Result<()> {
    wait_for(&format!("{kind} of job {id}"), LONG, || {
        (
            (!events_of(c, kind, id).is_empty()).then_some(()),
            String::new(),
        )
    })
}

/// jStatus of every JOB_FINISH record of job `id` in lsb.acct (after the asked and
/// execution host lists, event-log.md).
fn acct_finishes(c: &ProcessCluster, id: u64) -> Result<Vec<u32>> {
    let acct = std::fs::read_to_string(logdir(c).join("lsb.acct")).unwrap_or_default();
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
        let exec_at = 23 + num(22)?;
        let st_at = exec_at + 1 + num(exec_at)?;
        found.push(num(st_at)? as u32);
    }
    Ok(found)
}

fn proc_stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = text.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid))
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
            && proc_stat(pid).is_some_and(|(s, _)| s != 'Z')
        {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

/// The job's top process: the one of its processes that leads its process group.
fn job_leader(c: &ProcessCluster, id: u64) -> Option<i32> {
    job_pids(c, id).into_iter().find(|p| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|t| {
                t.rsplit_once(')')
                    .and_then(|(_, r)| r.split_whitespace().nth(2).map(str::to_owned))
            })
            .is_some_and(|pgrp| pgrp == p.to_string())
    })
}

/// Is `pid` still one of the job's processes?
fn alive(c: &ProcessCluster, id: u64, pid: i32) -> bool {
    job_pids(c, id).contains(&pid)
}

/// The job supervisors (`sbatchd --job-supervisor ...`) that are parents of the job's
/// processes.
fn supervisors(pids: &[i32]) -> Vec<i32> {
    let mut out: Vec<i32> = pids
        .iter()
        .filter_map(|p| proc_stat(*p).map(|(_, ppid)| ppid))
        .filter(|pp| {
            std::fs::read(format!("/proc/{pp}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"--job-supervisor"))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn kill9(pids: &[i32]) -> Result<()> {
    if pids.is_empty() {
        return Ok(());
    }
    let mut cmd = std::process::Command::new("kill");
    cmd.arg("-KILL");
    for p in pids {
        cmd.arg(p.to_string());
    }
    cmd.status().context("running kill")?;
    Ok(())
}

/// Wait until bhosts shows `host` with one of `statuses`.
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

/// A rerunnable job and a plain one, both running on hostB (hostA is closed while they
/// are dispatched) and accepted by its sbatchd. The rerunnable one waits for `go`.
fn two_jobs_on_host_b(c: &ProcessCluster, work: &Path, go: &Path) -> Result<(u64, u64)> {
    c.ok("badmin", &["hclose", "hostA"])?;
    let cmd = format!(
        "while [ ! -e {} ]; do sleep 0.1; done; echo done on $LSB_HOSTS",
        go.display()
    );
    let rerun = c.bsub(work, &["-r", "-o", "rerun.%J", &cmd])?;
    let plain = c.bsub(work, &["-o", "plain.%J", "sleep 300"])?;
    for id in [rerun, plain] {
        let r = wait_state(c, id, "RUN", LONG)?;
        assert_eq!(r.exec_host, "hostB", "job {id}");
        wait_event(c, "JOB_START_ACCEPT", id)?;
    }
    c.ok("badmin", &["hopen", "hostA"])?;
    Ok((rerun, plain))
}

/// mbatchd's records of the give-up: the rerun started twice, on hostB then hostA, with
/// a requeue (JOB_STATUS PEND, PEND_JOB_REQUEUED) between; the other ended EXIT.
fn check_records(c: &ProcessCluster, rerun: u64, plain: u64) -> Result<()> {
    let starts = events_of(c, "JOB_START", rerun);
    let hosts: Vec<&str> = starts
        .iter()
        .map(|f| f.get(9).map(String::as_str).unwrap_or(""))
        .collect();
    assert_eq!(hosts, vec!["hostB", "hostA"], "{starts:?}");
    let requeue = events_of(c, "JOB_STATUS", rerun).into_iter().any(|f| {
        f.get(4).map(String::as_str) == Some("1") && f.get(5).map(String::as_str) == Some("23")
    });
    assert!(requeue, "{:?}", events_of(c, "JOB_STATUS", rerun));
    assert_eq!(events_of(c, "JOB_START", plain).len(), 1);
    assert_eq!(
        acct_finishes(c, rerun)?,
        vec![64],
        "rerun: one JOB_FINISH, DONE"
    );
    assert_eq!(
        acct_finishes(c, plain)?,
        vec![32],
        "plain: one JOB_FINISH, EXIT"
    );
    let hist = c.ok("bhist", &["-l", &rerun.to_string()])?;
    assert!(hist.contains("hostB") && hist.contains("hostA"), "{hist}");
    let long = c.ok("bjobs", &["-l", &plain.to_string()])?;
    // bjobs -l folds its lines at 80 columns, mid-word, with an indented continuation.
    let unfolded: String = long.lines().map(str::trim_start).collect();
    assert!(
        unfolded.contains("TERM_REMOVE_HUNG_JOB: job removed from LSF system"),
        "{long}"
    );
    Ok(())
}

#[test]
fn a_rerunnable_job_on_a_dead_host_reruns_elsewhere() -> Result<()> {
    let mut c = cluster("host-loss-dead")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let (rerun, plain) = two_jobs_on_host_b(&c, &work, &go)?;

    // hostB dies: every process of it.
    let pids: Vec<i32> = [rerun, plain]
        .iter()
        .flat_map(|id| job_pids(&c, *id))
        .collect();
    let sups = supervisors(&pids);
    assert_eq!(
        sups.len(),
        1,
        "one supervisor follows the host's jobs: {sups:?} of {pids:?}"
    );
    c.kill9_daemon("sbatchd", "hostB")?;
    c.kill9("hostB")?;
    kill9(&sups)?;
    kill9(&pids)?;
    std::fs::write(&go, b"go\n")?;

    // UNKWN while hostB may come back, then given up.
    wait_host(&c, "hostB", &["unreach", "unavail"])?;
    let r = wait_state(&c, rerun, "DONE", LONG)?;
    assert_eq!(r.exec_host, "hostA");
    wait_state(&c, plain, "EXIT", LONG)?;
    let out = std::fs::read_to_string(work.join(format!("rerun.{rerun}")))?;
    assert_eq!(out.matches("done on host").count(), 1, "{out}");
    assert!(out.contains("done on hostA"), "{out}");
    check_records(&c, rerun, plain)?;

    // hostB comes back: nothing changes, nothing is accounted twice.
    c.start_lim("hostB")?;
    c.start_daemon("sbatchd", "hostB")?;
    wait_host(&c, "hostB", &["ok"])?;
    holds_for(
        "the rerun job DONE and the plain one EXIT after hostB's return",
        Duration::from_secs(3),
        || match jobs(&c) {
            Ok(m) => (
                m.get(&rerun).map(|r| r.stat.as_str()) == Some("DONE")
                    && m.get(&plain).map(|r| r.stat.as_str()) == Some("EXIT"),
                format!("{:?} {:?}", m.get(&rerun), m.get(&plain)),
            ),
            Err(e) => (false, e.to_string()),
        },
    )?;
    let m = jobs(&c)?;
    assert_eq!(m.get(&rerun).map(|r| r.stat.as_str()), Some("DONE"));
    assert_eq!(m.get(&plain).map(|r| r.stat.as_str()), Some("EXIT"));
    check_records(&c, rerun, plain)?;
    Ok(())
}

#[test]
fn a_returning_sbatchd_is_told_to_kill_what_mbatchd_gave_up_on() -> Result<()> {
    let mut c = cluster("host-loss-partition")?;
    let work = work_dir(c.dir.path())?;
    let go = work.join("go");
    let (rerun, plain) = two_jobs_on_host_b(&c, &work, &go)?;
    let mut old: BTreeMap<u64, i32> = BTreeMap::new();
    for id in [rerun, plain] {
        let leader = job_leader(&c, id).ok_or_else(|| anyhow!("job {id} has no leader"))?;
        old.insert(id, leader);
    }

    // Only hostB's sbatchd goes away: its jobs keep running, unseen.
    c.kill9_daemon("sbatchd", "hostB")?;
    wait_state(&c, plain, "EXIT", LONG)?;
    let r = wait_state(&c, rerun, "RUN", LONG)?;
    assert_eq!(r.exec_host, "hostA");
    for (id, pid) in &old {
        assert!(alive(&c, *id, *pid), "job {id}'s copy on hostB runs on");
    }

    // It comes back: the old copies are killed (ordered on its hello, or answered
    // StopJob on its reports), before the rerun is let finish.
    c.start_daemon("sbatchd", "hostB")?;
    wait_for("the given-up copies on hostB to end", LONG, || {
        let left: Vec<i32> = old
            .iter()
            .filter(|(id, pid)| alive(&c, **id, **pid))
            .map(|(_, pid)| *pid)
            .collect();
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;
    std::fs::write(&go, b"go\n")?;
    wait_state(&c, rerun, "DONE", LONG)?;
    let out = std::fs::read_to_string(work.join(format!("rerun.{rerun}")))?;
    assert_eq!(out.matches("done on host").count(), 1, "{out}");
    assert!(out.contains("done on hostA"), "{out}");
    wait_host(&c, "hostB", &["ok"])?;
    check_records(&c, rerun, plain)?;
    Ok(())
}
