//! The batch service follows the master (issue 6): the master host's lim, sbatchd and
//! mbatchd are killed with SIGKILL while users keep submitting; the LIMs elect the next
//! host, its sbatchd starts an mbatchd that takes the event-log lock over, replays
//! lsb.events and serves. Three failovers in a row: every acknowledged job is still there,
//! none runs twice, and the time from the kill to a serving mbatchd is printed.

use anyhow::{Result, anyhow};
use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The job id in `Job <N> is submitted ...`.
fn job_id(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find(|l| l.starts_with("Job <"))?
        .split(['<', '>'])
        .nth(1)?
        .parse()
        .ok()
}

fn bsub_cmd(bin: &Path, envdir: &Path, work: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin.join("bsub"));
    c.env("LSF_ENVDIR", envdir)
        .env_remove("BASALT_HOST")
        .env_remove("LSF_SERVER_HOSTS")
        .current_dir(work)
        .args(args);
    c
}

/// Kill a host the hard way: its lim, its sbatchd and the mbatchd running there.
fn kill_host(c: &mut ProcessCluster, host: &str) -> Result<()> {
    c.kill9_daemon("lim", host)?;
    c.kill9_daemon("sbatchd", host)?;
    c.kill9_pids_of("mbatchd", host);
    Ok(())
}

fn restart_host(c: &mut ProcessCluster, host: &str) -> Result<()> {
    c.start_lim(host)?;
    c.start_daemon("sbatchd", host)
}

/// All jobs as `bjobs -a -json`: id -> (stat, name).
fn all_jobs(c: &ProcessCluster) -> Option<BTreeMap<u64, (String, String)>> {
    let out = c.stdout_ok(
        "bjobs",
        &["-a", "-u", "all", "-o", "jobid stat job_name", "-json"],
    )?;
    let v: serde_json::Value = serde_json::from_str(&out).ok()?;
    let mut m = BTreeMap::new();
    for r in v.get("RECORDS")?.as_array()? {
        let id: u64 = r.get("JOBID")?.as_str()?.parse().ok()?;
        let stat = r.get("STAT")?.as_str()?.to_string();
        let name = r.get("JOB_NAME")?.as_str()?.to_string();
        m.insert(id, (stat, name));
    }
    Some(m)
}

/// Wait until 10 more submissions than now are acknowledged (the submitters get
/// through to the current master).
fn submissions_go_on(acked: &Mutex<Vec<(u64, String)>>) -> Result<()> {
    let count = || acked.lock().map(|a| a.len()).unwrap_or(0);
    let from = count();
    wait_for(
        &format!("10 more acknowledged submissions than {from}"),
        Duration::from_secs(60),
        || {
            let n = count();
            ((n >= from + 10).then_some(()), format!("{n} acknowledged"))
        },
    )
}

#[test]
fn three_failovers_under_continuous_submission() -> Result<()> {
    let mut c = ProcessCluster::start_batch(
        "batch-failover",
        &ClusterSpec::new(3),
        "BASALT_SBD_HELLO_INTERVAL = 1",
    )?;
    let work: PathBuf = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let runs = work.join("runs");

    // Submitters: one thread submits held jobs, one short jobs that record each run.
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<(u64, String)>>> = Arc::default();
    let failed = Arc::new(Mutex::new(0usize));
    let mut threads = Vec::new();
    for kind in ["held", "runs"] {
        let (stop, acked, failed) = (stop.clone(), acked.clone(), failed.clone());
        let (bin, envdir, work, runs) =
            (c.bin.clone(), c.envdir.clone(), work.clone(), runs.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let name = format!("{kind}{n}");
                let cmd = format!("echo $LSB_JOBID >> {}", runs.display());
                let args: Vec<&str> = if kind == "held" {
                    vec!["-H", "-J", &name, "true"]
                } else {
                    vec!["-J", &name, &cmd]
                };
                match bsub_cmd(&bin, &envdir, &work, &args).output() {
                    Ok(o) => match job_id(&String::from_utf8_lossy(&o.stdout)) {
                        Some(id) if o.status.success() => {
                            if let Ok(mut a) = acked.lock() {
                                a.push((id, name));
                            }
                        }
                        _ => {
                            if let Ok(mut f) = failed.lock() {
                                *f += 1;
                            }
                        }
                    },
                    Err(_) => break,
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }));
    }

    // Three failovers: kill whoever is master (hostA, then hostB with hostA still dead,
    // then — after both came back — the master the cluster settled on).
    let mut times = Vec::new();
    let mut dead_hosts: Vec<String> = Vec::new();
    for i in 0..3 {
        if i == 2 {
            for h in std::mem::take(&mut dead_hosts) {
                restart_host(&mut c, &h)?;
            }
            wait_for(
                "the cluster to settle with a serving mbatchd",
                Duration::from_secs(60),
                || {
                    let m = c.lsid_master();
                    let ok = m
                        .as_ref()
                        .is_some_and(|m| !c.pids_of("mbatchd", m).is_empty())
                        && all_jobs(&c).is_some();
                    (ok.then_some(()), format!("{m:?}"))
                },
            )?;
        }
        submissions_go_on(&acked)?;
        let dead = c
            .lsid_master()
            .ok_or_else(|| anyhow!("no master before failover {}", i + 1))?;
        let before = acked.lock().map(|a| a.len()).unwrap_or(0);
        let t = Instant::now();
        kill_host(&mut c, &dead)?;
        dead_hosts.push(dead.clone());
        let next = wait_for("another master", Duration::from_secs(60), || {
            let m = c.lsid_master();
            (m.clone().filter(|m| *m != dead), format!("{m:?}"))
        })?;
        let lim_time = t.elapsed();
        wait_for(
            &format!("an mbatchd on {next} to serve"),
            Duration::from_secs(60),
            || {
                let serving = !c.pids_of("mbatchd", &next).is_empty() && all_jobs(&c).is_some();
                (serving.then_some(()), String::new())
            },
        )?;
        let mbd_time = t.elapsed();
        eprintln!(
            "batch_failover: failover {} ({dead} -> {next}): new master after {lim_time:?}, \
             mbatchd serving after {mbd_time:?} ({before} jobs acknowledged so far)",
            i + 1
        );
        times.push(mbd_time);
    }
    submissions_go_on(&acked)?;
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }

    let acked = acked.lock().map_err(|_| anyhow!("poisoned"))?.clone();
    let failed = *failed.lock().map_err(|_| anyhow!("poisoned"))?;
    eprintln!(
        "batch_failover: {} acknowledged submissions, {failed} refused or failed, failover times {times:?}",
        acked.len()
    );
    assert!(acked.len() > 20, "too few submissions went through");
    let ids: BTreeSet<u64> = acked.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), acked.len(), "a job id was acknowledged twice");

    // Every acknowledged job is known, under its name; short ones finish, once.
    let runners: BTreeSet<u64> = acked
        .iter()
        .filter(|(_, n)| n.starts_with("runs"))
        .map(|(id, _)| *id)
        .collect();
    let jobs = wait_for(
        "every acknowledged job, the short ones ended",
        Duration::from_secs(90),
        || {
            let Some(jobs) = all_jobs(&c) else {
                return (None, "bjobs failed".into());
            };
            let missing: Vec<u64> = ids
                .iter()
                .filter(|id| !jobs.contains_key(id))
                .copied()
                .collect();
            let running: Vec<u64> = runners
                .iter()
                .filter(|id| {
                    jobs.get(id)
                        .is_some_and(|(s, _)| s != "DONE" && s != "EXIT")
                })
                .copied()
                .collect();
            let ok = missing.is_empty() && running.is_empty();
            (
                ok.then_some(jobs),
                format!("missing {missing:?}, not ended {running:?}"),
            )
        },
    )?;
    for (id, name) in &acked {
        let (stat, n) = &jobs[id];
        assert_eq!(n, name, "job {id}");
        if name.starts_with("held") {
            assert_eq!(stat, "PSUSP", "held job {id}");
        }
    }
    let text = std::fs::read_to_string(&runs).unwrap_or_default();
    let mut seen = BTreeMap::<u64, usize>::new();
    for l in text.lines() {
        if let Ok(id) = l.trim().parse::<u64>() {
            *seen.entry(id).or_default() += 1;
        }
    }
    let twice: Vec<u64> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    assert!(twice.is_empty(), "jobs ran twice: {twice:?}");
    let done_not_run: Vec<u64> = runners
        .iter()
        .filter(|id| jobs[id].0 == "DONE" && !seen.contains_key(id))
        .copied()
        .collect();
    assert!(
        done_not_run.is_empty(),
        "DONE without running: {done_not_run:?}"
    );
    Ok(())
}

/// A hung master (issue 29): only the master's LIM is stopped (SIGSTOP); its mbatchd
/// still runs and heartbeats the event-log lock. The LIMs elect hostB; hostA's mbatchd
/// sees it and resigns (releasing the lock), hostB's takes the lock and serves the
/// jobs of the log. The time from the stop to a submission acknowledged by hostB's
/// mbatchd is printed.
#[test]
fn a_hung_master_lim_hands_the_batch_service_over() -> Result<()> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let c = ProcessCluster::start_batch("batch-hung-master", &ClusterSpec::new(2), "")?;
    let work: PathBuf = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let held = c.bsub(&work, &["-H", "true"])?;
    let config = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow!("{e}"))?
        .config;
    let hostb_mbd = basalt_runtime::mbd_addr(&config, "hostB")?.to_string();
    let old_mbd = c.pids_of("mbatchd", "hostA");
    assert_eq!(old_mbd.len(), 1, "{old_mbd:?}");
    let lim_a = c.pids_of("lim", "hostA");
    assert_eq!(lim_a.len(), 1, "{lim_a:?}");
    let lim_a = Pid::from_raw(lim_a[0]);
    // Let the lock's heartbeats and hostB's watch of it run a little.
    std::thread::sleep(Duration::from_secs(2));
    let t = Instant::now();
    kill(lim_a, Signal::SIGSTOP)?;
    // Sent to hostB's mbatchd only, not to the old master's, which serves until it
    // resigns.
    let to_b = |args: &[&str]| {
        let mut cmd = bsub_cmd(&c.bin, &c.envdir, &work, args);
        cmd.env("BASALT_HOST", "hostB")
            .env("BASALT_MBD_ADDR", &hostb_mbd)
            .output()
    };
    let outcome = wait_for(
        "hostB's mbatchd to acknowledge a submission",
        Duration::from_secs(60),
        || {
            let o = to_b(&["-H", "true"]);
            let id = o
                .as_ref()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| job_id(&String::from_utf8_lossy(&o.stdout)));
            (id, format!("{o:?}"))
        },
    );
    let took = t.elapsed();
    let _ = kill(lim_a, Signal::SIGCONT);
    let new_id = outcome?;
    eprintln!(
        "hung master: a submission acknowledged by hostB {took:.2?} after SIGSTOP of hostA's LIM"
    );
    assert!(
        took < Duration::from_secs(15),
        "hostB served only {took:?} after the stop"
    );
    // The old mbatchd resigned rather than being killed or left running.
    wait_for("hostA's mbatchd to resign", Duration::from_secs(10), || {
        let left = c.pids_of("mbatchd", "hostA");
        (
            left.iter().all(|p| !old_mbd.contains(p)).then_some(()),
            format!("{left:?}"),
        )
    })?;
    // It resigned (exit 201), or hostA's sbatchd, having learnt the new master first,
    // stopped it: either way it did not go on serving.
    let sbd_log = c.dir.path().join("log").join("sbatchd.hostA.log");
    let sbd_a = wait_for(
        "hostA's sbatchd to log the end of its mbatchd",
        Duration::from_secs(10),
        || {
            let log = std::fs::read_to_string(&sbd_log).unwrap_or_default();
            let done = log.contains("resigned") || log.contains("is master now: stopping");
            (done.then(|| log.clone()), log)
        },
    )?;
    eprintln!(
        "hostA's sbatchd: {}",
        sbd_a
            .lines()
            .filter(|l| l.contains("resigned") || l.contains("is master now"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let jobs = wait_for("both jobs in bjobs", Duration::from_secs(30), || {
        let j = all_jobs(&c);
        (
            j.clone()
                .filter(|j| j.contains_key(&held) && j.contains_key(&new_id)),
            format!("{j:?}"),
        )
    })?;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    Ok(())
}
