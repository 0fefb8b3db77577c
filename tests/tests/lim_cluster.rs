//! LIM clusters as real processes: election, failover and return of the
//! master, host and load tables, ELIM indices — driven through the real
//! commands (`lsid`, `lshosts`, `lsload`).

use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for};
use std::time::Duration;

/// Longest a takeover may take with the test timings: the master's silence
/// (MASTER_INACTIVITY_LIMIT x EXINTERVAL) plus a probe, with generous slack
/// for a loaded CI machine.
fn takeover_deadline(spec: &ClusterSpec) -> Duration {
    let silence = spec.exinterval_secs * f64::from(spec.master_inactivity_limit + 2);
    Duration::from_secs_f64(silence + spec.probe_timeout_secs + 10.0)
}

fn machine_ncpus() -> u32 {
    nix_ncpus().unwrap_or(1)
}

fn nix_ncpus() -> Option<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    // e.g. "0-1" or "0,2-3"
    let mut n = 0;
    for part in text.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => n += b.parse::<u32>().ok()? - a.parse::<u32>().ok()? + 1,
            None => n += 1,
        }
    }
    Some(n)
}

fn machine_mem_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

/// The rows of a table output, keyed by first column.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[test]
fn three_hosts_elect_fail_over_and_return() -> anyhow::Result<()> {
    let spec = ClusterSpec::new(3);
    let mut c = ProcessCluster::start("failover", &spec)?;
    c.wait_master("hostA", Duration::from_secs(20))?;

    let lsid = c.stdout_ok("lsid", &[]).unwrap_or_default();
    assert!(lsid.contains("My cluster name is basalt"), "{lsid}");
    let first = lsid.lines().next().unwrap_or("");
    assert!(first.contains("10.1"), "version line: {first}");

    // lshosts: 3 hosts with the machine's real ncpus and maxmem.
    let ncpus = machine_ncpus().to_string();
    let mem = machine_mem_mb();
    let hosts = wait_for(
        "lshosts to list 3 hosts with static info",
        Duration::from_secs(20),
        || {
            let out = c.stdout_ok("lshosts", &[]).unwrap_or_default();
            let r = rows(&out);
            let ok = r.len() == 3 && r.iter().all(|row| row.get(4) == Some(&ncpus));
            (ok.then(|| out.clone()), out)
        },
    )?;
    let r = rows(&hosts);
    assert_eq!(
        r.iter().map(|row| row[0].as_str()).collect::<Vec<_>>(),
        ["hostA", "hostB", "hostC"]
    );
    for row in &r {
        let maxmem: u64 = row[5].trim_end_matches('M').parse()?;
        assert!(
            maxmem.abs_diff(mem) <= mem / 50 + 1,
            "maxmem {maxmem} vs {mem}"
        );
        assert_eq!(row[7], "Yes");
    }

    // lsload: live values for every host.
    wait_for(
        "lsload to show live values for 3 hosts",
        Duration::from_secs(20),
        || {
            let out = c.stdout_ok("lsload", &[]).unwrap_or_default();
            let r = rows(&out);
            let live = r.len() == 3
                && r.iter()
                    .all(|row| row.len() == 12 && row[1] == "ok" && row[11].ends_with(['M', 'G']));
            (live.then_some(()), out)
        },
    )?;
    let json = c.stdout_ok("lsload", &["-json"]).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&json)?;
    assert_eq!(v["HOSTS"], 3);
    // Numbers are JSON numbers (issue 30 item 12).
    assert!(v["RECORDS"][0]["r15s"].is_number(), "{json}");
    let json = c.stdout_ok("lshosts", &["-json"]).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&json)?;
    assert!(v["RECORDS"][0]["ncpus"].is_u64(), "{json}");
    assert!(v["RECORDS"][0]["cpuf"].is_f64(), "{json}");
    assert!(v["RECORDS"][0]["maxmem"].is_u64(), "{json}");

    // kill -9 the master: the next host in order takes over.
    c.kill9("hostA")?;
    c.wait_master("hostB", takeover_deadline(&spec))?;
    wait_for(
        "lsload to mark hostA unavailable",
        Duration::from_secs(20),
        || {
            let out = c.stdout_ok("lsload", &[]).unwrap_or_default();
            let down = out
                .lines()
                .any(|l| l.starts_with("hostA") && l.contains("unavail"));
            (down.then_some(()), out)
        },
    )?;

    // hostA comes back: it is master again.
    c.start_lim("hostA")?;
    c.wait_master("hostA", takeover_deadline(&spec))?;
    // And every LIM agrees (ask each host's LIM through BASALT_HOST).
    for h in ["hostA", "hostB", "hostC"] {
        wait_for(
            &format!("{h} to follow hostA"),
            Duration::from_secs(10),
            || {
                let out = c
                    .command("lsid")
                    .env("BASALT_HOST", h)
                    .output()
                    .ok()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default();
                (out.contains("My master name is hostA").then_some(()), out)
            },
        )?;
    }
    Ok(())
}

#[test]
fn elim_adds_an_index_and_overrides_a_builtin() -> anyhow::Result<()> {
    let script = r#"#!/bin/sh
# Test ELIM: only hostB reports; it adds gpu_util and overrides r1m.
[ "$BASALT_HOST" = hostB ] || exec sleep 3600
while :; do
  echo "2 gpu_util 42 r1m 9.5"
  sleep 0.2
done
"#;
    let spec = ClusterSpec::new(2)
        .numeric_resource("gpu_util", true)
        .elim("elim.test", script);
    let c = ProcessCluster::start("elim", &spec)?;
    c.wait_master("hostA", Duration::from_secs(20))?;
    let out = wait_for(
        "lsload -l to show gpu_util on hostB",
        Duration::from_secs(20),
        || {
            let out = c.stdout_ok("lsload", &["-l"]).unwrap_or_default();
            let ok = out
                .lines()
                .any(|l| l.starts_with("hostB") && l.trim_end().ends_with("42.0"));
            (ok.then(|| out.clone()), out)
        },
    )?;
    let header = out.lines().next().unwrap_or("");
    assert!(header.trim_end().ends_with("gpu_util"), "{header}");
    let host_a = out.lines().find(|l| l.starts_with("hostA")).unwrap_or("");
    assert!(
        host_a.trim_end().ends_with('-'),
        "hostA has no gpu_util: {host_a}"
    );
    // The built-in r1m of hostB is the ELIM's value.
    let r1m = c
        .stdout_ok("lsload", &["-I", "r1m", "hostB"])
        .unwrap_or_default();
    assert!(
        r1m.lines()
            .nth(1)
            .is_some_and(|l| l.trim_end().ends_with("9.5")),
        "{r1m}"
    );
    // Issue 30 item 10: -R selects hosts on the ELIM's index and on static values, and
    // lshosts -l prints a block per host.
    let selected = c.ok("lsload", &["-R", "select[gpu_util > 40]"])?;
    let hosts: Vec<&str> = selected
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(hosts, vec!["hostB"], "{selected}");
    let selected = c.ok("lshosts", &["-R", "hname == hostA && ncpus >= 1"])?;
    let hosts: Vec<&str> = selected
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(hosts, vec!["hostA"], "{selected}");
    let long = c.ok("lshosts", &["-l", "hostB"])?;
    assert!(long.starts_with("\nHOST_NAME:  hostB\n"), "{long}");
    assert!(long.contains("\nLOAD_THRESHOLDS:\n"), "{long}");
    Ok(())
}
