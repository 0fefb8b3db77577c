//! Hollow hosts (issue 51): an sbatchd whose jobs run no process
//! (`basalt_sbatchd::JobRunner::Hollow`), next to a real host, on an in-process cluster
//! driven with the real commands through the real mbatchd. The same jobs go to both
//! hosts and must end the same way: what differs is only that the hollow host's jobs
//! have fake pids and forked nothing.

use anyhow::{Result, anyhow};
use basalt_sbatchd::JobRunner;
use basalt_sbatchd::hollow::FIRST_PID;
use basalt_testkit::jobs::{wait_finished, wait_state};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, event_fields, work_dir};
use std::collections::BTreeMap;
use std::time::Duration;

/// Hellos every second; a bkill's SIGKILL after 2 s.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

const DEADLINE: Duration = Duration::from_secs(60);

/// The records of `file` in the cluster's log directory whose type is `kind`, by job id.
fn records(c: &InProcessBatch, file: &str, kind: &str) -> Result<BTreeMap<u64, Vec<Vec<String>>>> {
    let path = c.dir.path().join("work/basalt/logdir").join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut m: BTreeMap<u64, Vec<Vec<String>>> = BTreeMap::new();
    for f in text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(event_fields)
        .filter(|f| f.first().is_some_and(|t| t == kind))
    {
        if let Some(id) = f.get(3).and_then(|v| v.parse().ok()) {
            m.entry(id).or_default().push(f);
        }
    }
    Ok(m)
}

/// A field of a record as a number.
fn num(f: &[String], i: usize) -> i64 {
    f.get(i).and_then(|v| v.parse().ok()).unwrap_or(-1)
}

#[test]
fn a_hollow_host_ends_jobs_as_a_real_host_does_without_a_process() -> Result<()> {
    let mut c = InProcessBatch::start("hollow-host", &ClusterSpec::new(2), PARAMS)?;
    let real = c.hosts[0].clone();
    let hollow = c.hosts[1].clone();
    c.restart_sbatchd_with(&hollow, JobRunner::Hollow)?;
    let work = work_dir(c.dir.path())?;

    let jobs = [
        ("short", "sleep 1"),
        ("exit3", "exit 3"),
        ("long", "sleep 100"),
    ];
    let mut ids: BTreeMap<(String, &str), u64> = BTreeMap::new();
    for h in [&real, &hollow] {
        for (what, cmd) in jobs {
            let id = c.bsub(&work, &["-m", h, "-o", "/dev/null", cmd])?;
            ids.insert((h.clone(), what), id);
        }
    }
    for h in [&real, &hollow] {
        let long = ids[&(h.clone(), "long")];
        wait_state(&c, long, "RUN", DEADLINE)?;
        c.ok("bkill", &[&long.to_string()])?;
    }
    let all: Vec<u64> = ids.values().copied().collect();
    let rows = wait_finished(&c, &all, DEADLINE)?;
    let row = |h: &String, what: &str| rows[&ids[&(h.clone(), what)]].clone();

    let accepted = records(&c, "lsb.events", "JOB_START_ACCEPT")?;
    let finished = records(&c, "lsb.acct", "JOB_FINISH")?;
    for h in [&real, &hollow] {
        let short = row(h, "short");
        assert_eq!(
            (short.stat.as_str(), short.exec_host.as_str()),
            ("DONE", h.as_str()),
            "{h}: {short:?}"
        );
        let exit3 = row(h, "exit3");
        assert_eq!(
            (exit3.stat.as_str(), exit3.exit_code.as_str()),
            ("EXIT", "3"),
            "{h}: {exit3:?}"
        );
        let long = row(h, "long");
        assert_eq!(long.stat, "EXIT", "{h}: {long:?}");
        let id = ids[&(h.clone(), "long")];
        let l = c
            .stdout_ok("bjobs", &["-l", &id.to_string()])
            .unwrap_or_default();
        assert!(l.contains("TERM_OWNER"), "{h}: bjobs -l {id}:\n{l}");

        for (what, _) in jobs {
            let id = ids[&(h.clone(), what)];
            // One record in lsb.acct, however the job ended.
            let fins = finished.get(&id).map_or(0, Vec::len);
            assert_eq!(fins, 1, "{h} {what} (job {id}): {fins} JOB_FINISH records");
            // The pid sbatchd reported: a real process's on the real host, a fake one
            // (no process has it) on the hollow host.
            let pids: Vec<i64> = accepted
                .get(&id)
                .map(|v| v.iter().map(|f| num(f, 4)).collect())
                .unwrap_or_default();
            assert_eq!(pids.len(), 1, "{h} {what} (job {id}): {pids:?}");
            let fake = pids[0] >= i64::from(FIRST_PID);
            assert_eq!(fake, *h == hollow, "{h} {what} (job {id}): pid {}", pids[0]);
        }
        // `sleep 1` ran for a second at least: from its start (taken at dispatch, before
        // it ran) to its end (after it).
        let id = ids[&(h.clone(), "short")];
        let f = &finished[&id][0];
        let (start, end) = (num(f, 10), num(f, 2));
        assert!(
            start > 0 && end - start >= 1,
            "{h}: job {id} ran from {start} to {end}"
        );
    }
    // The same jobs end the same way on both hosts (the killed one with the signal the
    // kill sequence's first signal gives a job).
    for (what, _) in jobs {
        let (r, h) = (row(&real, what), row(&hollow, what));
        assert_eq!(
            (r.stat.as_str(), r.exit_code.as_str()),
            (h.stat.as_str(), h.exit_code.as_str()),
            "{what}: real {r:?}, hollow {h:?}"
        );
    }
    Ok(())
}
