//! Waiting for a cluster `up` started: its master elected, every host reporting,
//! mbatchd answering — asked with the cluster's own commands.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The master `lsid` of the cluster in `top` names (None: no answer, or no master).
fn lsid_master(top: &Path, envdir: &Path) -> Option<String> {
    let out = Command::new(top.join("bin").join("lsid"))
        .env("LSF_ENVDIR", envdir)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("My master name is ").map(str::to_owned))
}

/// Wait until the real hosts' LIMs have elected `first` (the first of
/// `LSF_MASTER_LIST`), as a site starts its master hosts before the others. Hollow hosts
/// started at once with the candidates register with whichever candidate wins first;
/// when the first of the list then takes the master role back, 10,000 hosts move to it
/// at once and on this machine's two shared CPUs the candidates flapped for minutes
/// (docs/performance.md, "Fourth round").
pub(crate) fn wait_master(top: &Path, envdir: &Path, first: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = None;
    loop {
        seen = lsid_master(top, envdir).or(seen);
        if seen.as_deref() == Some(first) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "the master candidates did not elect {first} within 30 s (last seen: {}); see the logs in {}",
                seen.as_deref().unwrap_or("no master"),
                top.join("log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Wait until the cluster in `top` answers: a master is elected, all `hosts` report,
/// and mbatchd (started by the master's sbatchd) answers. Its master.
pub(crate) fn wait_up(top: &Path, envdir: &Path, hosts: usize) -> Result<String> {
    let bin = top.join("bin");
    // 30 s, and two seconds more for every 100 hosts (hollow hosts start at
    // HOLLOW_START_RATE).
    let patience = Duration::from_secs(30 + (hosts / 50) as u64);
    let deadline = Instant::now() + patience;
    let master = loop {
        let master = lsid_master(top, envdir);
        let all_up = master.is_some()
            && Command::new(bin.join("lsload"))
                .env("LSF_ENVDIR", envdir)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .is_some_and(|o| {
                    let text = String::from_utf8_lossy(&o.stdout);
                    text.lines().skip(1).count() == hosts && !text.contains("unavail")
                });
        if all_up {
            break master.unwrap_or_default();
        }
        if Instant::now() > deadline {
            bail!(
                "the cluster did not come up within {} s; see the logs in {}",
                patience.as_secs(),
                top.join("log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };

    // And until mbatchd (started by the master's sbatchd) answers.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ok = Command::new(bin.join("bhosts"))
            .env("LSF_ENVDIR", envdir)
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "mbatchd did not answer within 30 s; see the logs in {}",
                top.join("log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(master)
}
