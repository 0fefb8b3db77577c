//! Daemon log files on real processes (issue 26 item 4): with `LSF_LOGDIR` set, lim,
//! sbatchd and mbatchd each write `LSF_LOGDIR/<daemon>.log.<host>` (LSF's names) at the
//! `LSF_LOG_MASK` level (the test harness's `BASALT_LOG=debug` overrides it here), and
//! reopen it on SIGHUP, so a rotated file (logrotate's `mv`
//! then `kill -HUP`) is left to its new name and a new one is started; the daemon keeps
//! running.

use anyhow::Result;
use basalt_testkit::{ClusterSpec, ProcessCluster, host_name, wait_for};
use std::time::Duration;

#[test]
fn daemons_log_in_lsf_logdir_and_reopen_on_sighup() -> Result<()> {
    // The test cluster's lsf.conf: LSF_LOGDIR=<dir>/log, LSF_LOG_MASK=LOG_INFO.
    let c = ProcessCluster::start_batch("daemon-logs", &ClusterSpec::new(1), "")?;
    let host = host_name(0);
    let logdir = c.dir.path().join("log");
    for daemon in ["lim", "sbatchd", "mbatchd"] {
        let path = logdir.join(format!("{daemon}.log.{host}"));
        wait_for(
            &format!("{} to have INFO lines", path.display()),
            Duration::from_secs(30),
            || {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                (text.contains(" INFO ").then_some(()), text)
            },
        )?;
    }

    let path = logdir.join(format!("lim.log.{host}"));
    let rotated = logdir.join(format!("lim.log.{host}.1"));
    std::fs::rename(&path, &rotated)?;
    let pids = c.pids_of("lim", &host);
    assert_eq!(pids.len(), 1, "one lim: {pids:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGHUP,
    )?;
    wait_for(
        "the LIM to start a new log file",
        Duration::from_secs(30),
        || {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            (text.contains("SIGHUP: reopened").then_some(()), text)
        },
    )?;
    assert_eq!(
        c.pids_of("lim", &host),
        pids,
        "the LIM lives on after SIGHUP"
    );
    assert!(std::fs::metadata(&rotated)?.len() > 0);
    let lsid = c.stdout_ok("lsid", &[]).unwrap_or_default();
    assert!(lsid.contains(&host), "the LIM still answers: {lsid}");
    Ok(())
}
