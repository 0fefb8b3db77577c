//! Resource allocation limits on a real cluster (issue 20, item 4): an lsb.resources
//! Limit with `PER_USER = all` and `SLOTS = 1` runs one job of a user at a time, the
//! next pending with "Not allowed due to resource limit." until the first ends, and
//! `blimits` shows the count in use; `busers` the user's slots by state. The daemons run in the test process
//! (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

fn stat(c: &InProcessBatch, id: u64) -> String {
    c.stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn wait_stat(c: &InProcessBatch, id: u64, want: &str) -> Result<()> {
    wait_for(&format!("job {id} to be {want}"), LONG, || {
        let s = stat(c, id);
        ((s == want).then_some(()), s)
    })
}

#[test]
fn a_per_user_slot_limit_runs_one_job_of_the_user_and_blimits_shows_it() -> Result<()> {
    let c = InProcessBatch::start("batch-reslimits", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    // No limit configured yet.
    assert_eq!(c.ok("blimits", &[])?, "No resource limits defined.\n");
    let file = c
        .dir
        .path()
        .join("conf/lsbatch/basalt/configdir/lsb.resources");
    std::fs::write(
        &file,
        "Begin Limit\nNAME     = perUser\nPER_USER = all\nSLOTS    = 1\nEnd Limit\n",
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("blimits to see the limit", LONG, || {
        let out = c.stdout_ok("blimits", &[]).unwrap_or_default();
        (
            out.starts_with("No resource usage found.").then_some(()),
            out,
        )
    })?;

    let gate = work.join("gate");
    let hold = format!("while [ ! -e {} ]; do sleep 0.1; done", gate.display());
    let first = c.bsub(&work, &["-o", "/dev/null", &hold])?;
    let second = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    wait_stat(&c, first, "RUN")?;
    let why = wait_for("the second job's limit reason", LONG, || {
        let out = c
            .stdout_ok("bjobs", &["-p", &second.to_string()])
            .unwrap_or_default();
        (
            out.contains("Not allowed due to resource limit.")
                .then(|| out.clone()),
            out,
        )
    })?;
    assert!(why.contains("PEND"), "{why}");
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())?
        .map(|u| u.name)
        .unwrap_or_default();
    let limits = c.ok("blimits", &[])?;
    let row: Vec<&str> = limits
        .lines()
        .find(|l| l.trim_start().starts_with("perUser"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(
        row,
        vec![
            "perUser",
            user.as_str(),
            "-",
            "-",
            "-",
            "1/1",
            "-",
            "-",
            "-",
            "-"
        ],
        "{limits}"
    );
    // busers: the user's slots by state.
    let users = c.ok("busers", &[])?;
    let row: Vec<&str> = users
        .lines()
        .nth(1)
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(
        row,
        vec![user.as_str(), "-", "-", "2", "1", "1", "0", "0", "0"],
        "{users}"
    );
    std::fs::write(&gate, "")?;
    wait_stat(&c, first, "DONE")?;
    wait_stat(&c, second, "DONE")?;
    Ok(())
}

/// lsb.params MAX_PEND_JOBS: a submission past the cluster's pending threshold is
/// refused; bsub says so and tries again every SUB_TRY_INTERVAL seconds, LSB_NTRIES
/// times in all, then gives up.
#[test]
fn max_pend_jobs_makes_bsub_retry_then_give_up_after_lsb_ntries() -> Result<()> {
    let c = InProcessBatch::start(
        "batch-pendlimit",
        &ClusterSpec::new(1),
        "MAX_PEND_JOBS = 1\nSUB_TRY_INTERVAL = 1",
    )?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    // A held job stays pending (PSUSP).
    let held = c.bsub(&work, &["-H", "-o", "/dev/null", "true"])?;
    let out = c
        .command("bsub")
        .current_dir(&work)
        .env("LSB_NTRIES", "2")
        .args(["-o", "/dev/null", "true"])
        .output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err}");
    assert_eq!(
        err,
        "Pending job threshold reached. Retrying in 1 seconds...\n\
         Pending job threshold reached. Job not submitted.\n"
    );
    // Once the held job is gone, the next submission is accepted.
    c.ok("bkill", &[&held.to_string()])?;
    c.bsub(&work, &["-o", "/dev/null", "true"])?;
    Ok(())
}
