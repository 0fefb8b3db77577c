//! Batch jobs on a 3-host loopback cluster of real processes (lim and sbatchd on every
//! host, mbatchd started by the master's sbatchd) when a daemon process is killed
//! (kill -9 of mbatchd, of an sbatchd). The scenarios that need no process are in
//! batch_inprocess.rs.

use anyhow::Result;
use basalt_testkit::jobs::{jobs, wait_finished, wait_state};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, wait_for, work_dir};
use std::time::Duration;

/// Hellos every second so that a silent sbatchd is noticed within seconds.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

fn cluster(name: &str) -> Result<ProcessCluster> {
    ProcessCluster::start_batch(name, &ClusterSpec::new(3), PARAMS)
}

#[test]
fn mbatchd_killed_mid_workload_loses_nothing() -> Result<()> {
    let c = cluster("batch-mbd-kill")?;
    let work = work_dir(c.dir.path())?;
    let mut ids = Vec::new();
    for i in 0..30 {
        ids.push(c.bsub(&work, &["-o", "k.%J", &format!("sleep 1; echo {i}")])?);
    }
    let long = c.bsub(&work, &["-o", "/dev/null", "sleep 8"])?;
    wait_state(&c, long, "RUN", Duration::from_secs(30))?;
    let before = jobs(&c)?;
    let killed = c.kill9_pids_of("mbatchd", "hostA");
    assert_eq!(killed, 1, "exactly one mbatchd runs on the master");
    // sbatchd restarts it; it replays lsb.events and knows every acknowledged job.
    let after = wait_for(
        "mbatchd to come back",
        Duration::from_secs(30),
        || match jobs(&c) {
            Ok(m) if !m.is_empty() => (Some(m), String::new()),
            Ok(_) => (None, "empty".into()),
            Err(e) => (None, e.to_string()),
        },
    )?;
    for id in before.keys() {
        assert!(after.contains_key(id), "job {id} lost after the restart");
    }
    ids.push(long);
    let m = wait_finished(&c, &ids, Duration::from_secs(90))?;
    for id in &ids {
        assert_eq!(m[id].stat, "DONE", "job {id}: {:?}", m[id]);
    }
    // At rest, a restart ends in the same state: bjobs -a -json is the same.
    let snapshot = |c: &ProcessCluster| -> Result<String> {
        let o = c.run("bjobs", &["-a", "-u", "all", "-json"])?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let s1 = snapshot(&c)?;
    c.kill9_pids_of("mbatchd", "hostA");
    let s2 = wait_for(
        "mbatchd to answer again",
        Duration::from_secs(30),
        || match snapshot(&c) {
            Ok(s) if s.contains("RECORDS") => (Some(s), String::new()),
            Ok(s) => (None, s),
            Err(e) => (None, e.to_string()),
        },
    )?;
    assert_eq!(s1, s2);
    Ok(())
}

#[test]
fn lost_sbatchd_makes_host_unreach_and_jobs_unknown() -> Result<()> {
    let mut c = cluster("batch-unreach")?;
    let work = work_dir(c.dir.path())?;
    let id = c.bsub(&work, &["-m", "hostC", "-o", "/dev/null", "sleep 60"])?;
    wait_state(&c, id, "RUN", Duration::from_secs(30))?;
    // Wait until sbatchd's answer to the dispatch is logged (JOB_START_ACCEPT): killing
    // sbatchd before that makes the dispatch fail and the job go back to PEND.
    let events = c.dir.path().join("work/basalt/logdir/lsb.events");
    wait_for(
        "JOB_START_ACCEPT of the job",
        Duration::from_secs(30),
        || {
            let text = std::fs::read_to_string(&events).unwrap_or_default();
            let seen = text.lines().any(|l| {
                let f = event_fields(l);
                f.first().map(String::as_str) == Some("JOB_START_ACCEPT")
                    && f.get(3) == Some(&id.to_string())
            });
            (seen.then_some(()), String::new())
        },
    )?;
    c.kill9_daemon("sbatchd", "hostC")?;
    wait_for("hostC to be unreach", Duration::from_secs(30), || {
        let out = c.stdout_ok("bhosts", &["hostC"]).unwrap_or_default();
        (out.contains("unreach").then_some(()), out)
    })?;
    wait_state(&c, id, "UNKWN", Duration::from_secs(10))?;
    c.start_daemon("sbatchd", "hostC")?;
    wait_state(&c, id, "RUN", Duration::from_secs(30))?;
    c.run("bkill", &[&id.to_string()])?;
    wait_state(&c, id, "EXIT", Duration::from_secs(30))?;
    Ok(())
}
