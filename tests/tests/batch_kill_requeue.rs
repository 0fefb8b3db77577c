//! Issue 50, items 1 and 2, on a real cluster (daemons in the test process,
//! `InProcessBatch`; one cluster for both scenarios).
//!
//! 1. A job killed while its pre-execution command runs — one that exits 0 when
//!    interrupted, so its command never ran — ends EXIT with exit code 130 and the
//!    kill's term reason, never DONE: `bjobs -l` says so, its POST_EXEC sees
//!    LSB_JOBEXIT_STAT=33280, a `done(id)` dependent is never released and an `exit(id)`
//!    one runs.
//! 2. A job that always exits with a REQUEUE_EXIT_VALUES value waits
//!    BASALT_REQUEUE_DELAY (2 s here, MBD_SLEEP_TIME being 1 s) after each requeue before
//!    its next dispatch — each JOB_START is logged at least that long after the requeue's
//!    JOB_STATUS — writes four lsb.events records per requeue cycle, and `bjobs -l`
//!    shows how many times it was requeued.

use anyhow::{Context, Result};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, event_fields, wait_for};
use std::path::Path;
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

fn wait_long(c: &InProcessBatch, id: u64, text: &str) -> Result<String> {
    wait_for(&format!("bjobs -l {id} to say {text:?}"), LONG, || {
        let out = c
            .stdout_ok("bjobs", &["-l", &id.to_string()])
            .unwrap_or_default()
            .replace("\n                     ", "");
        (out.contains(text).then(|| out.clone()), out)
    })
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The lsb.events records of job `id` (fields; the record type first).
fn job_events(c: &InProcessBatch, id: u64) -> Result<Vec<Vec<String>>> {
    let path = c.dir.path().join("work/basalt/logdir/lsb.events");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(event_fields)
        .filter(|f| f[0].starts_with("JOB_") && f.get(3).is_some_and(|j| *j == id.to_string()))
        .collect())
}

#[test]
fn a_killed_job_ends_exit_and_a_requeued_job_waits_before_its_next_dispatch() -> Result<()> {
    let c = InProcessBatch::start(
        "batch-kill-requeue",
        &ClusterSpec::new(1),
        "MBD_SLEEP_TIME = 1\nBASALT_REQUEUE_DELAY = 2",
    )?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let w = work.display();
    c.add_queues(&format!(
        "
Begin Queue
QUEUE_NAME   = killpre
PRIORITY     = 20
PRE_EXEC     = trap 'exit 0' INT TERM; touch {w}/pre.ran; while true; do sleep 0.1; done
POST_EXEC    = echo \"$LSB_JOBEXIT_STAT\" > {w}/post.stat
DESCRIPTION  = a pre-exec that runs until interrupted, then exits 0
End Queue

Begin Queue
QUEUE_NAME   = requeue
PRIORITY     = 20
REQUEUE_EXIT_VALUES = 3
MAX_JOB_REQUEUE = 3
DESCRIPTION  = exit 3 requeues, three times at most
End Queue
"
    ))?;

    // 1. Killed during its pre-execution command.
    let ran = work.join("job.ran");
    let k = c.bsub(
        &work,
        &[
            "-q",
            "killpre",
            "-o",
            "/dev/null",
            &format!("touch {}", ran.display()),
        ],
    )?;
    let after_done = c.bsub(
        &work,
        &["-w", &format!("done({k})"), "-o", "/dev/null", "true"],
    )?;
    let after_exit = c.bsub(
        &work,
        &["-w", &format!("exit({k})"), "-o", "/dev/null", "true"],
    )?;
    wait_for("the pre-execution command to run", LONG, || {
        (work.join("pre.ran").exists().then_some(()), String::new())
    })?;
    c.ok("bkill", &[&k.to_string()])?;
    wait_stat(&c, k, "EXIT")?;
    let long = wait_long(&c, k, "Exited with exit code 130.")?;
    assert!(long.contains("TERM_OWNER: job killed by owner"), "{long}");
    assert!(!long.contains("Done successfully"), "{long}");
    wait_for("the post-execution command's status", LONG, || {
        let s = read(&work.join("post.stat"));
        ((s.trim() == "33280").then_some(()), s)
    })?;
    assert!(!ran.exists(), "the job's command never ran");
    wait_stat(&c, after_exit, "DONE")?;
    let pending = wait_long(
        &c,
        after_done,
        "Dependency condition invalid or never satisfied",
    )?;
    assert!(pending.contains("Status <PEND>"), "{pending}");
    let records = job_events(&c, k)?;
    assert!(
        !records
            .iter()
            .any(|f| f[0] == "JOB_STATUS" && f[4].parse::<u32>().is_ok_and(|s| s & 0x40 != 0)),
        "a DONE record: {records:?}"
    );

    // 2. Requeued by its exit value three times, each after BASALT_REQUEUE_DELAY.
    let runs = work.join("runs");
    let r = c.bsub(
        &work,
        &[
            "-q",
            "requeue",
            "-o",
            "/dev/null",
            &format!("echo x >> {}; exit 3", runs.display()),
        ],
    )?;
    wait_stat(&c, r, "EXIT")?;
    assert_eq!(read(&runs).lines().count(), 4);
    let long = wait_long(
        &c,
        r,
        "Requeued <3> times for its exit value (REQUEUE_EXIT_VALUES).",
    )?;
    assert!(long.contains("Exited with exit code 3."), "{long}");
    let records = job_events(&c, r)?;
    let kinds: Vec<&str> = records.iter().map(|f| f[0].as_str()).collect();
    // Each cycle: JOB_START, JOB_START_ACCEPT, JOB_EXECUTE, then the requeue's
    // JOB_STATUS (PEND, reason 23).
    let cycle = ["JOB_START", "JOB_START_ACCEPT", "JOB_EXECUTE", "JOB_STATUS"];
    let mut want = vec!["JOB_NEW"];
    for _ in 0..4 {
        want.extend(cycle);
    }
    assert_eq!(kinds, want, "{records:?}");
    let time = |f: &Vec<String>| f[2].parse::<i64>().unwrap_or(0);
    for n in 0..3 {
        let requeue = &records[1 + 4 * n + 3];
        assert_eq!(
            (requeue[4].as_str(), requeue[5].as_str()),
            ("1", "23"),
            "{requeue:?}"
        );
        let next = &records[1 + 4 * (n + 1)];
        assert!(
            time(next) >= time(requeue) + 2,
            "dispatched {} s after the requeue: {records:?}",
            time(next) - time(requeue)
        );
    }
    Ok(())
}
