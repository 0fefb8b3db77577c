//! Queue-based fairshare on a 2-host cluster of real processes (issue 24, seed 003):
//! three queues in one slot pool with shares 50/25/25 run their shares of the pool's
//! slots while all have work (bqueues' RUN column); when one of them has no more jobs,
//! its slots go to the others; bqueues -l shows each queue's pool. A user-based
//! fairshare queue (FAIRSHARE) shows its SHARE_INFO_FOR table, and bhpart a host
//! partition's.

use anyhow::{Context, Result};
use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for, work_dir};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 1";

/// bqueues' RUN column by queue name.
fn run_by_queue(c: &ProcessCluster) -> Result<BTreeMap<String, u32>> {
    let out = c.ok("bqueues", &[])?;
    let mut m = BTreeMap::new();
    for l in out.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let (Some(name), Some(run)) = (f.first(), f.get(9)) {
            m.insert((*name).to_owned(), run.parse::<u32>().context("RUN")?);
        }
    }
    Ok(m)
}

fn wait_runs(c: &ProcessCluster, want: &[(&str, u32)]) -> Result<()> {
    wait_for(
        &format!("bqueues RUN to be {want:?}"),
        LONG,
        || match run_by_queue(c) {
            Ok(m) => {
                let ok = want.iter().all(|(q, n)| m.get(*q) == Some(n));
                (ok.then_some(()), format!("{m:?}"))
            }
            Err(e) => (None, e.to_string()),
        },
    )
}

fn submit(c: &ProcessCluster, work: &Path, queue: &str, n: usize) -> Result<Vec<u64>> {
    (0..n)
        .map(|_| c.bsub(work, &["-q", queue, "-o", "/dev/null", "sleep 600"]))
        .collect()
}

#[test]
fn pooled_queues_run_their_shares_and_an_idle_queue_lends_its_slots() -> Result<()> {
    let c = ProcessCluster::start_batch("fairshare", &ClusterSpec::new(2), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let mut text = String::new();
    for (name, share) in [("pa", 50), ("pb", 25), ("pc", 25)] {
        text.push_str(&format!(
            "\nBegin Queue\nQUEUE_NAME = {name}\nPRIORITY = 35\nSLOT_POOL = pool1\n\
             SLOT_SHARE = {share}\nEnd Queue\n"
        ));
    }
    text.push_str(
        "\nBegin Queue\nQUEUE_NAME = fair\nPRIORITY = 5\n\
         FAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n",
    );
    c.append_batch_file("lsb.queues", &text)?;
    // A host partition over both hosts (its shares order the plain queues' jobs).
    c.append_batch_file(
        "lsb.hosts",
        &format!(
            "\nBegin HostPartition\nHPART_NAME = part1\nHOSTS = {}\n\
             USER_SHARES = [default, 1]\nEnd HostPartition\n",
            c.hosts.join(" ")
        ),
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("bqueues to list the pool", LONG, || {
        let out = c.stdout_ok("bqueues", &["-l", "pa"]).unwrap_or_default();
        (out.contains("SLOT_POOL: pool1").then_some(()), out)
    })?;
    let slots: u32 = c
        .ok("bhosts", &[])?
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_whitespace()
                .nth(3)
                .and_then(|v| v.parse::<u32>().ok())
        })
        .sum();
    assert_eq!(
        slots % 4,
        0,
        "two hosts of an even number of slots: {slots}"
    );

    // All three have work: 50 / 25 / 25 of the pool. (The hosts are closed while the
    // jobs are submitted: a queue alone with work would rightly take every slot.)
    let hosts: Vec<&str> = c.hosts.iter().map(String::as_str).collect();
    let mut close = vec!["hclose"];
    close.extend(&hosts);
    c.ok("badmin", &close)?;
    let pa = submit(&c, &work, "pa", slots as usize)?;
    submit(&c, &work, "pb", slots as usize)?;
    submit(&c, &work, "pc", slots as usize)?;
    let mut open = vec!["hopen"];
    open.extend(&hosts);
    c.ok("badmin", &open)?;
    let (half, quarter) = (slots / 2, slots / 4);
    wait_runs(&c, &[("pa", half), ("pb", quarter), ("pc", quarter)])?;
    let long = c.ok("bqueues", &["-l", "pa"])?;
    assert!(
        long.contains(&format!(
            "SLOT_SHARE: 50%\nPOOL_SLOTS: {slots}  SLOTS_ALLOWED: {half}  SLOTS_IN_USE: {half}"
        )),
        "{long}"
    );
    let pend = c.ok("bjobs", &["-p", "-q", "pa"])?;
    assert!(
        pend.contains("The queue has reached its share of its slot pool"),
        "{pend}"
    );

    // pa has no more work: its slots go to pb and pc.
    let ids: Vec<String> = pa.iter().map(u64::to_string).collect();
    let mut args: Vec<&str> = ids.iter().map(String::as_str).collect();
    args.insert(0, "-r");
    c.ok("bkill", &args)?;
    wait_runs(&c, &[("pa", 0), ("pb", half), ("pc", half)])?;

    // A user-based fairshare queue: bqueues -l shows its accounts.
    c.ok("bkill", &["-q", "pb", "0"])?;
    c.ok("bkill", &["-q", "pc", "0"])?;
    submit(&c, &work, "fair", 1)?;
    wait_runs(&c, &[("fair", 1)])?;
    let long = c.ok("bqueues", &["-l", "fair"])?;
    assert!(long.contains("SCHEDULING POLICIES:  FAIRSHARE"), "{long}");
    assert!(long.contains("USER_SHARES:  [default, 1]"), "{long}");
    assert!(
        long.contains("SHARE_INFO_FOR: fair/\n USER/GROUP   SHARES  PRIORITY  STARTED"),
        "{long}"
    );
    let me = c
        .ok("bjobs", &["-q", "fair", "-o", "user", "-noheader"])?
        .trim()
        .to_owned();
    assert!(
        long.lines()
            .any(|l| l.trim_start().starts_with(&me) && l.contains("  1 ")),
        "{me}: {long}"
    );
    // bhpart: the partition, its hosts and its accounts.
    let part = c.ok("bhpart", &[])?;
    assert!(
        part.contains(&format!(
            "HOST_PARTITION_NAME: part1\nHOSTS: {}\n\nSHARE_INFO_FOR: part1/\n",
            c.hosts.join(" ")
        )),
        "{part}"
    );
    assert!(part.contains(&format!("\n {me:<12}      1 ")), "{part}");
    let o = c.run("bhpart", &["nosuch"])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch: Host partition does not exist"));
    c.ok("bkill", &["0"])?;
    Ok(())
}
