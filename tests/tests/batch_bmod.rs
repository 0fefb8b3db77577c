//! bmod on a real cluster (issue 20, item 9): a pending job takes new options (name,
//! queue, run limit, resource requirement, a new command with -Z, which it runs), bjobs and bhist -l show them, the change is
//! in lsb.events as JOB_MODIFY2 and survives an mbatchd restart (replay); a refused change
//! leaves the job as it was; a running job refuses a pending-only change with LSF's
//! message; a finished job cannot be modified. The daemons run in the test process
//! (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

fn field(c: &InProcessBatch, id: u64, what: &str) -> String {
    c.stdout_ok("bjobs", &["-o", what, "-noheader", &id.to_string()])
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn wait_field(c: &InProcessBatch, id: u64, what: &str, want: &str) -> Result<()> {
    wait_for(&format!("job {id}'s {what} to be {want}"), LONG, || {
        let s = field(c, id, what);
        ((s == want).then_some(()), s)
    })
}

fn bmod(c: &InProcessBatch, args: &[&str]) -> Result<(Option<i32>, String, String)> {
    let o = c.run("bmod", args)?;
    Ok((
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    ))
}

#[test]
fn bmod_changes_a_pending_job_durably_and_refuses_what_lsf_refuses() -> Result<()> {
    let c = InProcessBatch::start("batch-bmod", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    c.ok("badmin", &["hclose", "hostA"])?;
    let id = c.bsub(&work, &["-J", "before", "-o", "/dev/null", "sleep 600"])?;
    let sid = id.to_string();
    wait_field(&c, id, "stat", "PEND")?;

    let (code, out, err) = bmod(
        &c,
        &[
            "-J",
            "after",
            "-q",
            "priority",
            "-W",
            "10",
            "-R",
            "select[type==any]",
            &sid,
        ],
    )?;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, format!("Parameters of job <{id}> are being changed\n"));
    assert_eq!(field(&c, id, "job_name"), "after");
    assert_eq!(field(&c, id, "queue"), "priority");
    let long = c.ok("bjobs", &["-l", &sid])?;
    assert!(long.contains("10.0 min"), "{long}");

    // Refused: nothing changes.
    let (code, _, err) = bmod(&c, &["-q", "nosuch", &sid])?;
    assert_eq!(code, Some(255));
    assert_eq!(err, "Queue does not exist. Job not modified.\n");
    let (code, _, err) = bmod(&c, &["-m", "nohost", &sid])?;
    assert_eq!(code, Some(255));
    assert!(err.ends_with("Job not modified.\n"), "{err}");
    assert_eq!(field(&c, id, "queue"), "priority");
    // -Z: a new command line, which the job runs when it starts (after the restart).
    let z_out = work.join("z.out");
    let new_cmd = format!("echo replaced > {}; sleep 600", z_out.display());
    let (code, _, err) = bmod(&c, &["-Z", &new_cmd, &sid])?;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(field(&c, id, "cmd"), new_cmd);

    // lsb.events has the change; bhist -l shows it.
    let events = std::fs::read_to_string(c.dir.path().join("work/basalt/logdir/lsb.events"))?;
    let line = events
        .lines()
        .find(|l| l.starts_with("\"JOB_MODIFY2\""))
        .unwrap_or_default();
    assert!(line.contains(&format!("\"{id}\"")), "{events}");
    assert!(line.contains("\"after\""), "{line}");
    let hist = c.ok("bhist", &["-l", &sid])?;
    assert!(hist.contains("Parameters of Job are changed"), "{hist}");

    // Replayed by a restarted mbatchd.
    c.ok("badmin", &["mbdrestart"])?;
    wait_for("mbatchd to answer again with the change", LONG, || {
        let n = field(&c, id, "job_name");
        ((n == "after").then_some(()), n)
    })?;
    assert_eq!(field(&c, id, "queue"), "priority");

    // Running: a new queue is refused, a new resource requirement is taken.
    c.ok("badmin", &["hopen", "hostA"])?;
    wait_field(&c, id, "stat", "RUN")?;
    wait_for("the job to run the command bmod -Z gave", LONG, || {
        let out = std::fs::read_to_string(&z_out).unwrap_or_default();
        ((out == "replaced\n").then_some(()), out)
    })?;
    assert!(c.ok("bhist", &["-l", &sid])?.contains("Command changes to"));
    let (code, _, err) = bmod(&c, &["-q", "normal", &sid])?;
    assert_eq!(code, Some(255));
    assert_eq!(
        err,
        "Job parameters cannot be changed now; non-repetitive job is running. Job not modified.\n"
    );
    let (code, _, err) = bmod(&c, &["-R", "rusage[mem=1]", &sid])?;
    assert_eq!(code, Some(0), "{err}");

    // Finished.
    c.ok("bkill", &[&sid])?;
    wait_field(&c, id, "stat", "EXIT")?;
    let (code, _, err) = bmod(&c, &["-J", "late", &sid])?;
    assert_eq!(code, Some(255));
    assert_eq!(err, "Job has already finished. Job not modified.\n");
    Ok(())
}

/// With `LSB_MOD_ALL_JOBS=Y`, bmod of a running job's memory limit reaches its sbatchd at
/// once: the job, over the new limit, ends EXIT with TERM_MEMLIMIT.
#[test]
fn a_running_jobs_new_memory_limit_is_enforced_at_once() -> Result<()> {
    let mut spec = ClusterSpec::new(1);
    spec.lsf_conf_extra.push_str("LSB_MOD_ALL_JOBS=Y\n");
    let c = InProcessBatch::start("batch-bmod-run", &spec, "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    // ~300 MB held for a minute (LSF_UNIT_FOR_LIMITS=MB in the default lsf.conf).
    let id = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "python3 -c 'import time; a = bytearray(300 * 1024 * 1024); time.sleep(60)' \
             || (x=x; while :; do x=$x$x; done)",
        ],
    )?;
    let sid = id.to_string();
    wait_field(&c, id, "stat", "RUN")?;
    let (code, out, err) = bmod(&c, &["-M", "64", &sid])?;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, format!("Parameters of job <{id}> are being changed\n"));
    let reason = wait_for("the job to end over its new limit", LONG, || {
        let r = field(&c, id, "stat exit_reason delimiter='|'");
        (r.starts_with("EXIT|").then(|| r.clone()), r)
    })?;
    assert!(reason.contains("TERM_MEMLIMIT"), "{reason}");
    Ok(())
}
