//! Hollow hosts (issue 51): a cluster of 2 real hosts (their lim, sbatchd and mbatchd
//! processes) and many hollow ones (`basalt-hollow`: each hollow host's real LIM and
//! sbatchd in processes of their own, the load simulated). Every host comes `ok`; jobs
//! spread over them finish exactly once (lsb.acct); a kill -9 of the master host's
//! daemons fails over to hostB; a hollow process killed at once loses its hosts, whose
//! jobs are handled as a real host loss, and no other host is disturbed.

use anyhow::{Context, Result, anyhow};
use basalt_testkit::{ClusterSpec, ProcessCluster, acct, wait_for, work_dir};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Hollow hosts in the test.
const HOLLOW: usize = 300;
/// Hellos every 3 s (unreach after 9 s), jobs of a lost host given up 10 s later.
const PARAMS: &str =
    "BASALT_SBD_HELLO_INTERVAL = 3\nJOB_TERMINATE_INTERVAL = 2\nBASALT_HOST_LOST_GRACE = 10";

fn logdir(c: &ProcessCluster) -> std::path::PathBuf {
    c.dir.path().join("work/basalt/logdir")
}

/// `bhosts` rows: host -> status.
fn bhosts(c: &ProcessCluster) -> BTreeMap<String, String> {
    c.stdout_ok("bhosts", &["-w"])
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.to_owned()))
        })
        .collect()
}

/// lsb.acct's JOB_FINISH records: (job id, index) -> their jStatus, one per record.
fn finishes(c: &ProcessCluster) -> BTreeMap<(u64, u32), Vec<u32>> {
    acct::finishes(&logdir(c)).unwrap_or_default()
}

#[test]
fn hollow_hosts_come_ok_run_jobs_once_fail_over_and_are_lost_together() -> Result<()> {
    let mut spec = ClusterSpec::new(2).with_hollow(HOLLOW);
    // The production exchange interval (the test default is 0.2 s).
    spec.exinterval_secs = 1.0;
    spec.master_inactivity_limit = 2;
    spec.hollow_processes = 3;
    let mut c = ProcessCluster::start_batch("hollow-hosts", &spec, PARAMS)?;
    let all = bhosts(&c);
    assert_eq!(all.len(), 2 + HOLLOW, "{all:?}");
    assert!(all.values().all(|s| s == "ok"), "{all:?}");
    // lsload and lshosts list them all too.
    let lsload = c.ok("lsload", &["-w"])?;
    assert_eq!(lsload.lines().count(), 1 + 2 + HOLLOW, "{lsload}");

    // 3,000 jobs in three arrays, spread over the hosts.
    let work = work_dir(c.dir.path())?;
    let mut arrays = Vec::new();
    for name in ["a", "b", "c"] {
        arrays.push(c.bsub(
            &work,
            &["-J", &format!("{name}[1-1000]"), "-o", "/dev/null", "true"],
        )?);
    }
    wait_for("3,000 jobs to finish", Duration::from_secs(240), || {
        let n: usize = finishes(&c).values().map(Vec::len).sum();
        ((n >= 3000).then_some(()), format!("{n} finished"))
    })?;
    let done = c.ok(
        "bjobs",
        &["-a", "-noheader", "-o", "jobid jobindex stat exec_host"],
    )?;
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut hosts_used: BTreeSet<String> = BTreeSet::new();
    for l in done.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let [id, idx, stat, host] = w[..] else {
            return Err(anyhow!("bjobs line {l:?}"));
        };
        assert_eq!(stat, "DONE", "{l}");
        assert!(seen.insert((id.to_owned(), idx.to_owned())), "twice: {l}");
        hosts_used.insert(host.to_owned());
    }
    assert_eq!(seen.len(), 3000);
    // Exactly once in lsb.acct: one DONE record per element of the three arrays.
    let f = finishes(&c);
    let sizes: Vec<(u64, u32)> = arrays.iter().map(|&a| (a, 1000)).collect();
    let once = acct::exactly_once(&f, acct::array_elements(&sizes));
    assert!(once.ok(), "{}", once.summary());
    assert_eq!(f.len(), 3000);
    assert!(
        hosts_used.iter().filter(|h| h.starts_with("hv")).count() > HOLLOW / 2,
        "{hosts_used:?}"
    );

    // A hollow process killed: its hosts are lost together, their jobs given up on, no
    // other host disturbed. Long jobs first, one on each host.
    let long = c.bsub(
        &work,
        &[
            "-J",
            &format!("long[1-{}]", 2 + HOLLOW),
            "-o",
            "/dev/null",
            "sleep 600",
        ],
    )?;
    let lost: Vec<String> = c.hollow_group(2).to_vec();
    wait_for(
        "long jobs to run on the lost group",
        Duration::from_secs(60),
        || {
            let out = c
                .stdout_ok(
                    "bjobs",
                    &["-noheader", "-o", "exec_host", "-r", &long.to_string()],
                )
                .unwrap_or_default();
            let on: BTreeSet<&str> = out.split_whitespace().collect();
            let n = lost.iter().filter(|h| on.contains(h.as_str())).count();
            (
                (n >= lost.len() / 2).then_some(()),
                format!("{n} on the lost group"),
            )
        },
    )?;
    c.kill9_daemon("basalt-hollow", "group2")?;
    wait_for(
        "the lost group to be unreach",
        Duration::from_secs(30),
        || {
            let b = bhosts(&c);
            let gone = lost
                .iter()
                .filter(|h| b.get(*h).is_some_and(|s| s == "unreach" || s == "unavail"))
                .count();
            (
                (gone == lost.len()).then_some(()),
                format!("{gone} of {}", lost.len()),
            )
        },
    )?;
    let b = bhosts(&c);
    let others_ok = b
        .iter()
        .filter(|(h, _)| !lost.contains(h))
        .all(|(_, s)| s == "ok" || s == "closed");
    assert!(others_ok, "{b:?}");
    // Their jobs are given up on (EXIT), the others run on.
    wait_for(
        "the lost hosts' jobs to end",
        Duration::from_secs(60),
        || {
            let out = c
                .stdout_ok(
                    "bjobs",
                    &["-a", "-noheader", "-o", "stat exec_host", &long.to_string()],
                )
                .unwrap_or_default();
            let mut left = 0;
            for l in out.lines() {
                let w: Vec<&str> = l.split_whitespace().collect();
                if let [stat, host] = w[..]
                    && lost.iter().any(|h| h == host)
                    && stat != "EXIT"
                {
                    left += 1;
                }
            }
            ((left == 0).then_some(()), format!("{left} not ended"))
        },
    )?;

    // The master host's daemons killed: hostB takes over and takes a submission.
    for d in ["mbatchd", "sbatchd", "lim"] {
        if d == "mbatchd" {
            c.kill9_pids_of("mbatchd", "hostA");
        } else {
            c.kill9_daemon(d, "hostA").context(d)?;
        }
    }
    wait_for(
        "hostB's mbatchd to take a job",
        Duration::from_secs(60),
        || {
            let out = c.run("bsub", &["-o", "/dev/null", "true"]);
            let ok = out.as_ref().is_ok_and(|o| o.status.success());
            (ok.then_some(()), format!("{out:?}"))
        },
    )?;
    assert_eq!(c.lsid_master().as_deref(), Some("hostB"));
    Ok(())
}
