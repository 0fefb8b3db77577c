//! `down` ends the cluster's jobs before it stops the daemons (unless `--keep-jobs`,
//! LSF's behaviour: jobs outlive their sbatchd).
//!
//! How the jobs are found: every process of a job carries the job environment sbatchd
//! gives it, with `LSF_ENVDIR` (this cluster's `<dir>/conf`, unique per cluster
//! directory) and `LSB_JOBID`; `/proc/<pid>/environ` shows the environment a process
//! was started with. So a process whose environment has this cluster's `LSF_ENVDIR` and
//! a `LSB_JOBID` is one of its jobs' processes, and its process group is what to signal.
//! This is preferred over reading sbatchd's job table (`jobs.db`): the table holds the
//! pgid recorded at start, which can be stale (the group emptied, its number reused by
//! another program) and belongs to sbatchd's schema; the environment is checked on the
//! live process itself, and it also finds processes a job moved into a process group
//! of their own (they keep the environment) and jobs of every host of the cluster at
//! once. What it cannot see: a process that was exec'd with a cleared environment — it
//! is still in its job's process group, which is signalled as a whole. /proc environ is
//! readable for our own user's processes (a personal cluster's jobs run as its user)
//! and for every process as root.
//!
//! Each group found is sent SIGCONT first (a stopped job — bstop, suspended by load —
//! would otherwise hold SIGTERM pending forever), then SIGTERM, and after a grace period
//! SIGKILL. The daemons are still running meanwhile, so the jobs' ends are recorded
//! (the jobs finish as killed) before the daemons stop.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A process of a job: its job (`LSB_JOBID`, `LSB_JOBINDEX`) and process group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobProcess {
    pub pid: i32,
    pub pgid: i32,
    pub job: (String, String),
}

/// The value of `key` in a NUL-separated environment block.
pub(crate) fn env_value<'a>(environ: &'a [u8], key: &str) -> Option<&'a [u8]> {
    environ.split(|b| *b == 0).find_map(|kv| {
        kv.strip_prefix(key.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
    })
}

/// The job (id, index) of a process whose environment is `environ`, when it is one of
/// the jobs of the cluster whose `LSF_ENVDIR` is one of `envdirs`.
pub(crate) fn job_of(environ: &[u8], envdirs: &[PathBuf]) -> Option<(String, String)> {
    let envdir = env_value(environ, "LSF_ENVDIR")?;
    let envdir = Path::new(std::str::from_utf8(envdir).ok()?);
    if !envdirs.iter().any(|d| d == envdir) {
        return None;
    }
    let id = env_value(environ, "LSB_JOBID")?;
    let idx = env_value(environ, "LSB_JOBINDEX").unwrap_or(b"0");
    Some((
        String::from_utf8_lossy(id).into_owned(),
        String::from_utf8_lossy(idx).into_owned(),
    ))
}

/// (pgid, state) from `/proc/<pid>/stat`.
fn stat_of(pid: i32) -> Option<(i32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    let pgid = f.next()?.parse().ok()?;
    Some((pgid, state))
}

/// The live processes of the jobs of the clusters of `envdirs`.
pub(crate) fn find(envdirs: &[PathBuf]) -> Vec<JobProcess> {
    let me = std::process::id() as i32;
    let my_pgid = nix::unistd::getpgrp().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.filter_map(Result::ok) {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let Some(job) = job_of(&environ, envdirs) else {
            continue;
        };
        let Some((pgid, state)) = stat_of(pid) else {
            continue;
        };
        // Never our own group (down run from inside a job), init's, or a zombie's.
        if pgid <= 1 || pgid == my_pgid || state == 'Z' {
            continue;
        }
        out.push(JobProcess { pid, pgid, job });
    }
    out
}

/// Is any process of `pgid` alive (not a zombie)?
fn group_alive(pgid: i32, pids: &[i32]) -> bool {
    pids.iter()
        .any(|p| stat_of(*p).is_some_and(|(g, s)| g == pgid && s != 'Z'))
        || killpg(Pid::from_raw(pgid), None).is_ok() && group_has_live_member(pgid)
}

/// A scan of /proc for a live member of `pgid`.
fn group_has_live_member(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .any(|p| stat_of(p).is_some_and(|(g, s)| g == pgid && s != 'Z'))
}

/// A job: (`LSB_JOBID`, `LSB_JOBINDEX`).
type Job = (String, String);
/// Process groups: the pids seen in each and the jobs they belong to.
type Groups = BTreeMap<i32, (Vec<i32>, BTreeSet<Job>)>;

/// End the jobs of the clusters whose `LSF_ENVDIR` is one of `envdirs`: SIGCONT and
/// SIGTERM to each job's process group, SIGKILL to those left after `grace`. How many
/// jobs were ended, and how many of them needed SIGKILL.
pub(crate) fn end_jobs(envdirs: &[PathBuf], grace: Duration) -> (usize, usize) {
    let procs = find(envdirs);
    if procs.is_empty() {
        return (0, 0);
    }
    // Process groups, with the pids seen in them, and the jobs they belong to.
    let mut groups: Groups = BTreeMap::new();
    for p in &procs {
        let g = groups.entry(p.pgid).or_default();
        g.0.push(p.pid);
        g.1.insert(p.job.clone());
    }
    let jobs: BTreeSet<_> = procs.iter().map(|p| p.job.clone()).collect();
    for pgid in groups.keys() {
        let g = Pid::from_raw(*pgid);
        let _ = killpg(g, Signal::SIGCONT);
        let _ = killpg(g, Signal::SIGTERM);
    }
    let alive = |groups: &Groups| {
        groups
            .iter()
            .filter(|(g, (pids, _))| group_alive(**g, pids))
            .map(|(g, (_, jobs))| (*g, jobs.clone()))
            .collect::<Vec<_>>()
    };
    let deadline = Instant::now() + grace;
    let mut left = alive(&groups);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = alive(&groups);
    }
    let mut killed: BTreeSet<(String, String)> = BTreeSet::new();
    for (pgid, jobs) in &left {
        let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        killed.extend(jobs.iter().cloned());
    }
    // Processes that left their group but kept the environment (found again by it).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let rest = find(envdirs);
        if rest.is_empty() || Instant::now() > deadline {
            break;
        }
        for p in rest {
            let _ = killpg(Pid::from_raw(p.pgid), Signal::SIGKILL);
            killed.insert(p.job);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (jobs.len(), killed.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_recognised_by_their_environment() {
        let dirs = vec![PathBuf::from("/tmp/a/conf")];
        let env = b"PATH=/bin\0LSF_ENVDIR=/tmp/a/conf\0LSB_JOBID=12\0LSB_JOBINDEX=3\0";
        assert_eq!(job_of(env, &dirs), Some(("12".into(), "3".into())));
        // Another cluster's job, a command (no LSB_JOBID), a prefix of the directory.
        assert_eq!(
            job_of(b"LSF_ENVDIR=/tmp/b/conf\0LSB_JOBID=12\0", &dirs),
            None
        );
        assert_eq!(job_of(b"LSF_ENVDIR=/tmp/a/conf\0PATH=/bin\0", &dirs), None);
        assert_eq!(
            job_of(b"LSF_ENVDIR=/tmp/a/confx\0LSB_JOBID=1\0", &dirs),
            None
        );
        assert_eq!(
            job_of(b"XLSF_ENVDIR=/tmp/a/conf\0LSB_JOBID=1\0", &dirs),
            None
        );
        assert_eq!(
            job_of(b"LSB_JOBID=7\0LSF_ENVDIR=/tmp/a/conf", &dirs),
            Some(("7".into(), "0".into()))
        );
    }

    /// A stopped process group with the environment of a job is ended: SIGCONT makes
    /// the SIGTERM land.
    #[test]
    fn a_stopped_job_is_ended() {
        use std::os::unix::process::CommandExt;
        let envdir = std::env::temp_dir().join(format!("xtask-jobs-{}/conf", std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .env("LSF_ENVDIR", &envdir)
            .env("LSB_JOBID", "41")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Wait until the exec is done (the environment is the job's).
        let deadline = Instant::now() + Duration::from_secs(10);
        while find(std::slice::from_ref(&envdir)).is_empty() {
            assert!(Instant::now() < deadline, "the test job never showed up");
            std::thread::sleep(Duration::from_millis(20));
        }
        nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
        let (ended, killed) = end_jobs(std::slice::from_ref(&envdir), Duration::from_secs(5));
        assert_eq!((ended, killed), (1, 0));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc_sigterm()));
        assert!(find(std::slice::from_ref(&envdir)).is_empty());
    }

    fn libc_sigterm() -> i32 {
        Signal::SIGTERM as i32
    }
}
