//! Limits a job asks for are enforced by sbatchd: `-M` (memory of the whole process
//! group, LSB_JOB_MEMLIMIT=Y in the default lsf.conf, LSF_UNIT_FOR_LIMITS=MB) and `-W`
//! (run time) end the job EXIT with TERM_MEMLIMIT / TERM_RUNLIMIT, shown by `bjobs -l`,
//! `bjobs -o exit_reason` and the job report. The daemons run in the test process
//! (`InProcessBatch`); the jobs under real job supervisors.

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

/// (stat, exit_reason) of a job.
fn stat(c: &InProcessBatch, id: u64) -> Option<(String, String)> {
    let out = c.stdout_ok(
        "bjobs",
        &[
            "-o",
            "stat exit_reason delimiter='|'",
            "-noheader",
            &id.to_string(),
        ],
    )?;
    let line = out.lines().next()?.to_string();
    let (s, r) = line.split_once('|')?;
    Some((s.to_string(), r.to_string()))
}

fn wait_exit(c: &InProcessBatch, id: u64, deadline: Duration) -> Result<String> {
    wait_for(&format!("job {id} to exit"), deadline, || {
        let s = stat(c, id);
        (
            s.clone().filter(|(st, _)| st == "EXIT").map(|(_, r)| r),
            format!("{s:?}"),
        )
    })
}

#[test]
fn memory_and_run_limits_end_jobs_with_lsf_reasons() -> Result<()> {
    let c = InProcessBatch::start("batch-limits", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    // 64 MB limit; the job holds ~300 MB (a shell variable doubled until big) for a while.
    let mem = c.bsub(
        &work,
        &[
            "-M",
            "64",
            "-o",
            "mem.%J",
            "python3 -c 'import time; a = bytearray(300 * 1024 * 1024); time.sleep(60)' \
             || (x=x; while :; do x=$x$x; done)",
        ],
    )?;
    let runl = c.bsub(&work, &["-W", "1", "-o", "run.%J", "sleep 300"])?;

    let reason = wait_exit(&c, mem, Duration::from_secs(60))?;
    assert!(
        reason.starts_with("TERM_MEMLIMIT"),
        "exit reason {reason:?}"
    );
    let l = c
        .stdout_ok("bjobs", &["-l", &mem.to_string()])
        .unwrap_or_default();
    assert!(l.contains("TERM_MEMLIMIT"), "{l}");
    let report = std::fs::read_to_string(work.join(format!("mem.{mem}")))?;
    assert!(report.contains("TERM_MEMLIMIT"), "{report}");

    let reason = wait_exit(&c, runl, Duration::from_secs(120))?;
    assert!(
        reason.starts_with("TERM_RUNLIMIT"),
        "exit reason {reason:?}"
    );
    let report = std::fs::read_to_string(work.join(format!("run.{runl}")))?;
    assert!(report.contains("TERM_RUNLIMIT"), "{report}");
    Ok(())
}
