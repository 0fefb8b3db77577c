//! A real network partition (issue 6, network-namespace tier; runs only with
//! `BASALT_TEST_NETNS=1`, as root): hostA, hostB and hostC each live in their own network
//! namespace on a bridge, sharing the file system (LSF's shared log directory). hostA —
//! master, running mbatchd — is cut off. Each side then has a master LIM (hostA alone,
//! hostB for hostB+hostC), but only the side holding the event-log lock runs batch service:
//! hostA's mbatchd keeps serving its side, hostB's never takes the lock nor binds its port,
//! and a `bsub` on hostB's side fails with a clear error and never becomes a job. After
//! the partition heals the cluster settles on one master and one mbatchd (hostA again:
//! the lower rank wins); every
//! acknowledged job ends DONE, each ran exactly once, and lsb.events has one JOB_START
//! per job.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, netns, output_text, wait_for};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// `bjobs -a -json` as seen from `host`'s namespace (root namespace when `None`):
/// id -> (stat, exec host, name).
fn jobs(c: &ProcessCluster, host: Option<&str>) -> Option<Jobs> {
    let args = [
        "-a",
        "-u",
        "all",
        "-o",
        "jobid stat exec_host job_name",
        "-json",
    ];
    let o = match host {
        Some(h) => c.run_on(h, "bjobs", &args).ok()?,
        None => c.run("bjobs", &args).ok()?,
    };
    if !o.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
    let mut m = BTreeMap::new();
    for r in v.get("RECORDS")?.as_array()? {
        let id: u64 = r.get("JOBID")?.as_str()?.parse().ok()?;
        let field = |k: &str| r.get(k).and_then(|x| x.as_str()).unwrap_or("").to_owned();
        m.insert(id, (field("STAT"), field("EXEC_HOST"), field("JOB_NAME")));
    }
    Some(m)
}

/// The cluster's hosts, in rank order.
const HOSTS: [&str; 3] = ["hostA", "hostB", "hostC"];

/// Jobs as seen from `host`'s namespace (root namespace when `None`).
type Jobs = BTreeMap<u64, (String, String, String)>;

/// Wait until every job of `ids` has status `stat` as seen from `host`'s namespace; the
/// jobs then.
fn wait_stat(
    c: &ProcessCluster,
    host: Option<&str>,
    ids: &[u64],
    stat: &str,
    deadline: Duration,
) -> Result<Jobs> {
    wait_for(&format!("jobs {ids:?} {stat}"), deadline, || {
        let j = jobs(c, host).unwrap_or_default();
        let ok = ids.iter().all(|id| j.get(id).is_some_and(|r| r.0 == stat));
        (ok.then_some(j.clone()), format!("{j:?}"))
    })
}

/// The master `lsid` names in each host's namespace, in [`HOSTS`] order.
fn masters(c: &ProcessCluster) -> Vec<Option<String>> {
    HOSTS.iter().map(|h| lsid_on(c, h)).collect()
}

/// The master `lsid` names when run in `host`'s namespace.
fn lsid_on(c: &ProcessCluster, host: &str) -> Option<String> {
    let o = c.run_on(host, "lsid", &[]).ok()?;
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("My master name is ").map(str::to_owned))
}

/// bsub from `host`'s namespace; the job id when acknowledged, else the whole output.
fn bsub_on(
    c: &ProcessCluster,
    host: Option<&str>,
    cwd: &Path,
    timeout_secs: &str,
    args: &[&str],
) -> Result<std::result::Result<u64, String>> {
    let mut cmd = match host {
        Some(h) => c.command_on(h, "bsub")?,
        None => c.command("bsub"),
    };
    let o = cmd
        .env("BASALT_CMD_TIMEOUT", timeout_secs)
        .current_dir(cwd)
        .args(args)
        .output()
        .context("running bsub")?;
    let out = String::from_utf8_lossy(&o.stdout);
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("Job <"))
        .and_then(|r| r.split('>').next())
        .and_then(|n| n.parse::<u64>().ok());
    Ok(match id {
        Some(id) if o.status.success() => Ok(id),
        _ => Err(output_text(&o)),
    })
}

/// The `kind` records of lsb.events (every record for ""), as fields.
fn event_lines(c: &ProcessCluster, kind: &str) -> Vec<Vec<String>> {
    let path = c.dir.path().join("work/basalt/logdir/lsb.events");
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map(event_fields)
        .filter(|f| kind.is_empty() || f.first().map(String::as_str) == Some(kind))
        .collect()
}

/// A three-host cluster in network namespaces, a work directory and the file every job
/// appends its id to; `None` (the test is skipped) without `BASALT_TEST_NETNS=1`.
struct Lab {
    c: ProcessCluster,
    work: std::path::PathBuf,
    runs: std::path::PathBuf,
}

fn lab(name: &str) -> Result<Option<Lab>> {
    if !netns::enabled() {
        basalt_testkit::skip(
            name,
            &format!(
                "set {}=1, as root with iproute2, to run the network-namespace tier",
                netns::ENV
            ),
        );
        return Ok(None);
    }
    let c = ProcessCluster::start_batch_netns(
        name,
        &ClusterSpec::new(3),
        "BASALT_SBD_HELLO_INTERVAL = 1",
    )?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let runs = work.join("runs");
    Ok(Some(Lab { c, work, runs }))
}

#[test]
fn partition_runs_batch_service_on_one_side_only() -> Result<()> {
    let Some(Lab { c, work, runs }) = lab("netns-partition")? else {
        return Ok(());
    };
    let record = |secs: u32| format!("echo $LSB_JOBID >> {}; sleep {secs}", runs.display());
    let logdir = c.dir.path().join("work/basalt/logdir");
    if !logdir.join("lsb.events").exists() {
        bail!("no lsb.events under {}", logdir.display());
    }

    // One long job on each host: they run across the partition.
    let mut acked: Vec<u64> = Vec::new();
    for h in HOSTS {
        acked.push(c.bsub(&work, &["-m", h, "-J", &format!("long{h}"), &record(12)])?);
    }
    wait_stat(&c, None, &acked, "RUN", Duration::from_secs(30))?;
    let starts_before = event_lines(&c, "MBD_START").len();

    // Cut hostA (master, with mbatchd) off.
    let cut_at = Instant::now();
    c.cut("hostA")?;
    wait_for(
        "hostB's side to elect hostB",
        Duration::from_secs(20),
        || {
            let m = c.lsid_master();
            (
                (m.as_deref() == Some("hostB")).then_some(()),
                format!("{m:?}"),
            )
        },
    )?;
    eprintln!(
        "netns_partition: hostB master on its side {:?} after the cut",
        cut_at.elapsed()
    );
    let on_a = lsid_on(&c, "hostA");
    assert_eq!(on_a.as_deref(), Some("hostA"), "hostA's side keeps hostA");

    // hostA's side keeps batch service: a submission is acknowledged and runs there.
    let a_job = bsub_on(&c, Some("hostA"), &work, "10", &["-J", "sideA", &record(0)])?
        .map_err(|e| anyhow!("bsub on hostA's side: {e}"))?;
    acked.push(a_job);
    let on_a = wait_stat(&c, Some("hostA"), &[a_job], "DONE", Duration::from_secs(30))?;
    assert_eq!(on_a[&a_job].1, "hostA");

    // hostB's side has no batch service: bsub fails clearly and is not acknowledged.
    let b_try = bsub_on(&c, None, &work, "3", &["-J", "sideB", &record(0)])?;
    let b_err = match b_try {
        Ok(id) => bail!("bsub on hostB's side was acknowledged as job {id} during the partition"),
        Err(e) => e,
    };
    assert!(
        b_err.contains("Cannot connect to mbatchd") || b_err.contains("LSF is down"),
        "{b_err}"
    );

    // Hold the partition well past the lock takeover time: still only hostA's mbatchd
    // has the lock, no MBD_START was logged, hostB's side still answers no bjobs.
    while cut_at.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(500));
    }
    let lock = std::fs::read_to_string(logdir.join("#lsb.event.lock")).unwrap_or_default();
    assert!(
        lock.contains("hostA"),
        "lock during the partition: {lock:?}"
    );
    assert_eq!(
        event_lines(&c, "MBD_START").len(),
        starts_before,
        "an mbatchd started serving during the partition"
    );
    assert!(jobs(&c, None).is_none(), "hostB's side answered bjobs");
    assert!(
        jobs(&c, Some("hostA")).is_some(),
        "hostA's side stopped answering"
    );

    // Heal: one master everywhere, one mbatchd serving, every job done once.
    c.heal("hostA")?;
    let healed = Instant::now();
    let master = wait_for(
        "one master named on every host after healing",
        Duration::from_secs(60),
        || {
            let ms = masters(&c);
            let one = ms[0].is_some() && ms.iter().all(|m| *m == ms[0]);
            let serving = one && jobs(&c, None).is_some();
            (serving.then(|| ms[0].clone()).flatten(), format!("{ms:?}"))
        },
    )?;
    eprintln!(
        "netns_partition: healed; {master} master with a serving mbatchd after {:?}",
        healed.elapsed()
    );
    let all = wait_stat(&c, None, &acked, "DONE", Duration::from_secs(90))?;
    assert!(
        !all.values().any(|r| r.2 == "sideB"),
        "the refused submission became a job: {all:?}"
    );
    for (h, id) in HOSTS.iter().zip(&acked) {
        assert_eq!(all[id].1, *h, "long job {id} ran on {h}");
    }
    let ran = runs_of(&runs);
    for id in &acked {
        assert_eq!(
            ran.get(id),
            Some(&1),
            "job {id} ran {:?} times",
            ran.get(id)
        );
    }
    assert_eq!(ran.len(), acked.len(), "runs: {ran:?}");
    // Lower rank wins once healed: hostA is master again, on every host.
    wait_for(
        "hostA named master on every host",
        Duration::from_secs(60),
        || {
            let ms = masters(&c);
            let ok = ms.iter().all(|m| m.as_deref() == Some("hostA"));
            (ok.then_some(()), format!("{ms:?}"))
        },
    )?;
    let terms: Vec<String> = event_lines(&c, "MBD_START")
        .iter()
        .filter_map(|f| f.get(3).cloned())
        .collect();
    eprintln!("netns_partition: MBD_START records name {terms:?}");
    // One delivered dispatch per job: a JOB_START counts unless the dispatch could not be
    // delivered and the job went straight back to PEND ("Unable to reach slave batch
    // server", 1601) — hostA's mbatchd may try a host of the far side before it notices
    // the cut.
    let mut starts = BTreeMap::<String, usize>::new();
    for f in event_lines(&c, "") {
        let (Some(kind), Some(id)) = (f.first(), f.get(3)) else {
            continue;
        };
        let undelivered = kind == "JOB_STATUS"
            && f.get(4).map(String::as_str) == Some("1")
            && f.get(5).map(String::as_str) == Some("1601");
        if kind == "JOB_START" {
            *starts.entry(id.clone()).or_default() += 1;
        } else if undelivered && let Some(n) = starts.get_mut(id) {
            *n -= 1;
        }
    }
    for id in &acked {
        assert_eq!(
            starts.get(&id.to_string()),
            Some(&1),
            "delivered dispatches of job {id}: {starts:?}"
        );
    }
    Ok(())
}

/// How many times each acknowledged job ran (lines of the `runs` file).
fn runs_of(runs: &Path) -> BTreeMap<u64, usize> {
    let text = std::fs::read_to_string(runs).unwrap_or_default();
    let mut ran = BTreeMap::<u64, usize>::new();
    for l in text.lines() {
        if let Ok(id) = l.trim().parse::<u64>() {
            *ran.entry(id).or_default() += 1;
        }
    }
    ran
}

/// A partial partition: only the link between hostA (master) and hostB is cut; hostC
/// reaches both. hostB stops hearing hostA, but hostC witnesses that hostA lives, so
/// hostB does not start a second term: every host names hostA for the whole cut (no
/// flapping), no other mbatchd starts, and the job running on hostB reports back once
/// the link returns.
#[test]
fn partial_partition_keeps_one_master() -> Result<()> {
    let Some(Lab { c, work, runs }) = lab("netns-partial")? else {
        return Ok(());
    };
    let record = |secs: u32| format!("echo $LSB_JOBID >> {}; sleep {secs}", runs.display());
    let on_b = c.bsub(&work, &["-m", "hostB", "-J", "onB", &record(8)])?;
    wait_stat(&c, None, &[on_b], "RUN", Duration::from_secs(30))?;
    let starts_before = event_lines(&c, "MBD_START").len();

    c.cut_link("hostA", "hostB")?;
    let cut_at = Instant::now();
    let mut seen = Vec::new();
    // Well past hostB's takeover time (3 intervals of 0.2 s plus a 1 s probe).
    while cut_at.elapsed() < Duration::from_secs(6) {
        for (h, m) in HOSTS.iter().zip(masters(&c)) {
            if m.as_deref() != Some("hostA") {
                seen.push((cut_at.elapsed(), h, m));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        seen.is_empty(),
        "hosts named another master during the partial partition: {seen:?}"
    );
    assert_eq!(
        event_lines(&c, "MBD_START").len(),
        starts_before,
        "another mbatchd started"
    );
    // Batch service goes on: a job submitted on hostC's side runs (not on hostB).
    let on_c = bsub_on(&c, Some("hostC"), &work, "10", &["-J", "onC", &record(0)])?
        .map_err(|e| anyhow!("bsub on hostC: {e}"))?;

    c.heal_link("hostA", "hostB")?;
    let all = wait_stat(&c, None, &[on_b, on_c], "DONE", Duration::from_secs(60))?;
    assert_eq!(all[&on_b].1, "hostB");
    assert_ne!(all[&on_c].1, "hostB");
    let ran = runs_of(&runs);
    assert_eq!(ran.get(&on_b), Some(&1), "{ran:?}");
    assert_eq!(ran.get(&on_c), Some(&1), "{ran:?}");
    assert_eq!(c.lsid_master().as_deref(), Some("hostA"));
    Ok(())
}
