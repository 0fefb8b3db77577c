//! LIM failover as real processes (issue 6): a hung master (SIGSTOP: its port
//! still accepts connections) is replaced within the configured timeouts; when
//! it runs again (SIGCONT) it catches up before it takes mastership back, and
//! the cluster settles on one master every LIM agrees on; `LSF_MASTER_LIST`
//! keeps hosts it leaves out from ever becoming master.
//!
//! What each LIM decided is read from its own log ("master changed" lines with
//! the master and epoch), what clients see from `lsid`.

use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for};
use std::time::{Duration, Instant};

/// One "master changed" line of a LIM log: (master, epoch, me_is_master).
type Change = (String, u64, bool);

fn log_path(c: &ProcessCluster, host: &str) -> std::path::PathBuf {
    c.dir.path().join("log").join(format!("lim.{host}.log"))
}

fn log_len(c: &ProcessCluster, host: &str) -> usize {
    std::fs::read(log_path(c, host)).map_or(0, |b| b.len())
}

/// The value of `key=` in a tracing line, quotes stripped.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}="))? + key.len() + 2;
    let rest = &line[start..];
    let end = rest.find(' ').unwrap_or(rest.len());
    Some(rest[..end].trim_matches('"'))
}

/// The master changes `host`'s LIM logged after byte `from` of its log.
fn changes(c: &ProcessCluster, host: &str, from: usize) -> Vec<Change> {
    let bytes = std::fs::read(log_path(c, host)).unwrap_or_default();
    let text = String::from_utf8_lossy(bytes.get(from..).unwrap_or_default());
    text.lines()
        .filter(|l| l.contains("master changed"))
        .filter_map(|l| {
            Some((
                field(l, "master")?.to_owned(),
                field(l, "epoch")?.parse().ok()?,
                field(l, "me_is_master")? == "true",
            ))
        })
        .collect()
}

/// `lsid` asking `host`'s LIM first (it falls back to the others when that LIM
/// does not answer or does not know the master).
fn lsid_via(c: &ProcessCluster, host: &str) -> Option<String> {
    let out = c.command("lsid").env("BASALT_HOST", host).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("My master name is ").map(str::to_owned))
}

fn lim_pid(c: &ProcessCluster, host: &str) -> anyhow::Result<i32> {
    let pids = c.pids_of("lim", host);
    match pids.as_slice() {
        [p] => Ok(*p),
        other => anyhow::bail!("expected one lim for {host}, found {other:?}"),
    }
}

/// Send `signal` (STOP, CONT) to `pid` with kill(1).
fn signal(pid: i32, signal: &str) -> anyhow::Result<()> {
    let st = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()?;
    anyhow::ensure!(st.success(), "kill -{signal} {pid}: {st}");
    Ok(())
}

/// Resumes a stopped LIM even when the test fails half-way.
struct Continue(i32);

impl Drop for Continue {
    fn drop(&mut self) {
        let _ = signal(self.0, "CONT");
    }
}

#[test]
fn hung_master_is_replaced_and_catches_up_before_taking_back() -> anyhow::Result<()> {
    // The embedded default timings: EXINTERVAL 1 s, MASTER_INACTIVITY_LIMIT 2,
    // PROBE_TIMEOUT 2 s.
    let spec = ClusterSpec {
        exinterval_secs: 1.0,
        master_inactivity_limit: 2,
        probe_timeout_secs: 2.0,
        ..ClusterSpec::new(3)
    };
    let c = ProcessCluster::start("lim-hung", &spec)?;
    c.wait_master("hostA", Duration::from_secs(20))?;
    wait_for(
        "hostB and hostC to follow hostA",
        Duration::from_secs(10),
        || {
            let seen = (lsid_via(&c, "hostB"), lsid_via(&c, "hostC"));
            let ok = seen.0.as_deref() == Some("hostA") && seen.1.as_deref() == Some("hostA");
            (ok.then_some(()), format!("{seen:?}"))
        },
    )?;

    // Hang hostA's LIM: its socket still accepts connections.
    let a = lim_pid(&c, "hostA")?;
    let guard = Continue(a);
    let stopped = Instant::now();
    signal(a, "STOP")?;
    wait_for(
        "hostB to take over from the hung hostA",
        Duration::from_secs(15),
        || {
            let m = lsid_via(&c, "hostB");
            (
                (m.as_deref() == Some("hostB")).then_some(()),
                format!("{m:?}"),
            )
        },
    )?;
    let failover = stopped.elapsed();
    eprintln!("hung master: hostB is master {failover:.2?} after SIGSTOP of hostA's LIM");
    assert!(
        failover < Duration::from_secs(10),
        "failover took {failover:?} with the default timings"
    );
    wait_for("hostC to follow hostB", Duration::from_secs(5), || {
        let m = lsid_via(&c, "hostC");
        (
            (m.as_deref() == Some("hostB")).then_some(()),
            format!("{m:?}"),
        )
    })?;
    // Plain lsid asks hostA first: the hung LIM costs its quick first-round timeout
    // (0.4 s), not the command's whole RPC timeout (5 s).
    let t = Instant::now();
    let plain = c.lsid_master();
    let took = t.elapsed();
    eprintln!("plain lsid (hostA asked first, hung): {plain:?} in {took:.2?}");
    assert_eq!(plain.as_deref(), Some("hostB"));
    assert!(
        took < Duration::from_secs(4),
        "lsid waited {took:?} on the hung LIM"
    );
    let e2 = changes(&c, "hostB", 0)
        .iter()
        .rev()
        .find(|(m, _, me)| m == "hostB" && *me)
        .map(|(_, e, _)| *e)
        .ok_or_else(|| anyhow::anyhow!("hostB logged no takeover"))?;

    // SIGCONT: hostA must catch up (follow hostB's term) before anything else.
    let marks: Vec<usize> = ["hostA", "hostB", "hostC"]
        .iter()
        .map(|h| log_len(&c, h))
        .collect();
    let resumed = Instant::now();
    signal(a, "CONT")?;
    drop(guard);
    // The handover waits MASTER_INACTIVITY_LIMIT intervals (2 s) in sync: until
    // then every answer through hostA names hostB.
    while resumed.elapsed() < Duration::from_millis(1200) {
        let m = lsid_via(&c, "hostA");
        assert_eq!(
            m.as_deref(),
            Some("hostB"),
            "{:.2?} after SIGCONT, lsid via hostA",
            resumed.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let a_changes = changes(&c, "hostA", marks[0]);
    assert!(
        matches!(a_changes.first(), Some((m, _, false)) if m == "-" || m == "hostB"),
        "hostA's first decision after SIGCONT must be to forget or follow: {a_changes:?}"
    );
    for (m, e, _) in &a_changes {
        assert!(
            !(m == "hostA" && *e <= e2),
            "hostA claimed mastership with the stale epoch {e} (hostB's is {e2}): {a_changes:?}"
        );
    }

    // The cluster settles on one master every LIM agrees on (the lower rank,
    // through a handover with a later epoch), and stays there.
    let hosts = ["hostA", "hostB", "hostC"];
    let settled = wait_for(
        "every LIM to agree on hostA as master",
        Duration::from_secs(15),
        || {
            let last: Vec<Option<Change>> = hosts
                .iter()
                .map(|h| changes(&c, h, 0).last().cloned())
                .collect();
            let views: Vec<Option<String>> = hosts.iter().map(|h| lsid_via(&c, h)).collect();
            let same_term = last.iter().all(|l| {
                l.as_ref().map(|(m, e, _)| (m, e)) == last[0].as_ref().map(|(m, e, _)| (m, e))
            });
            let out = last[0].clone().filter(|(m, _, _)| {
                same_term && m == "hostA" && views.iter().all(|v| v.as_deref() == Some("hostA"))
            });
            (out, format!("logs {last:?}, lsid {views:?}"))
        },
    )?;
    eprintln!(
        "settled on {} epoch {} {:.2?} after SIGCONT",
        settled.0,
        settled.1,
        resumed.elapsed()
    );
    assert!(settled.1 > e2, "the handover takes a later epoch than {e2}");
    let sample_from = Instant::now();
    while sample_from.elapsed() < Duration::from_secs(3) {
        for h in hosts {
            assert_eq!(lsid_via(&c, h).as_deref(), Some("hostA"), "lsid via {h}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // No flapping: hostB and hostC changed master once (hostB -> hostA).
    for (i, h) in hosts.iter().enumerate().skip(1) {
        let ch = changes(&c, h, marks[i]);
        assert_eq!(ch.len(), 1, "{h} after SIGCONT: {ch:?}");
    }
    Ok(())
}

#[test]
fn master_list_keeps_other_hosts_from_mastership() -> anyhow::Result<()> {
    let spec = ClusterSpec::new(3);
    let mut c = ProcessCluster::start("lim-master-list", &spec)?;
    // Restart every LIM with LSF_MASTER_LIST leaving hostB out.
    for h in c.hosts.clone() {
        c.kill9(&h)?;
    }
    let conf = c.envdir.join("lsf.conf");
    let mut text = std::fs::read_to_string(&conf)?;
    text.push_str("LSF_MASTER_LIST=\"hostA hostC\"\n");
    std::fs::write(&conf, text)?;
    let marks: Vec<usize> = c.hosts.iter().map(|h| log_len(&c, h)).collect();
    for h in c.hosts.clone() {
        c.start_lim(&h)?;
    }
    c.wait_master("hostA", Duration::from_secs(20))?;
    wait_for("hostB to follow hostA", Duration::from_secs(10), || {
        let m = lsid_via(&c, "hostB");
        (
            (m.as_deref() == Some("hostA")).then_some(()),
            format!("{m:?}"),
        )
    })?;
    let killed = Instant::now();
    c.kill9("hostA")?;
    c.wait_master("hostC", Duration::from_secs(15))?;
    eprintln!(
        "master list: hostC is master {:.2?} after kill -9 of hostA",
        killed.elapsed()
    );
    wait_for("hostB to follow hostC", Duration::from_secs(5), || {
        let m = lsid_via(&c, "hostB");
        (
            (m.as_deref() == Some("hostC")).then_some(()),
            format!("{m:?}"),
        )
    })?;
    let b = changes(&c, "hostB", marks[1]);
    assert!(
        b.iter().all(|(m, _, me)| m != "hostB" && !me),
        "hostB is not in LSF_MASTER_LIST: {b:?}"
    );
    assert!(b.iter().any(|(m, _, _)| m == "hostC"), "{b:?}");
    Ok(())
}
