//! A job's execution hooks on a real cluster (issue 20, item 7): the queue's PRE_EXEC and
//! `bsub -E` run before the job, and a failing one puts the job back to PEND with LSF's
//! reason ("The job's pre-exec command exited with non-zero status") until it succeeds;
//! exit value 99 ends the job; the queue's POST_EXEC runs after the job with
//! LSB_JOBEXIT_STAT and `bjobs -l` shows its status; REQUEUE_EXIT_VALUES requeues a job
//! that exits with a listed value, up to MAX_JOB_REQUEUE; the queue's JOB_STARTER runs
//! the user's command in place of `%USRCMD`; `brequeue` kills a running job and runs it
//! again, and with `-d` a finished one. The daemons run in the test
//! process (`InProcessBatch`); one cluster serves every scenario.

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
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

fn cluster(dir_marker: &str) -> Result<(InProcessBatch, std::path::PathBuf)> {
    let c = InProcessBatch::start(
        "batch-hooks",
        &ClusterSpec::new(1),
        "MBD_SLEEP_TIME = 1\nLOCAL_MAX_PREEXEC_RETRY_ACTION = EXIT",
    )?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let w = work.display();
    c.append_queues(&format!(
        "
Begin Queue
QUEUE_NAME   = gated
PRIORITY     = 20
PRE_EXEC     = test -e {w}/{dir_marker} && pwd > {w}/pre.cwd
POST_EXEC    = echo \"$LSB_JOBEXIT_STAT\" > {w}/post.stat
DESCRIPTION  = pre-exec waits for a file; post-exec records the job's status
End Queue

Begin Queue
QUEUE_NAME   = requeue
PRIORITY     = 20
REQUEUE_EXIT_VALUES = 3
MAX_JOB_REQUEUE = 2
DESCRIPTION  = exit 3 requeues, twice at most
End Queue

Begin Queue
QUEUE_NAME   = starter
PRIORITY     = 20
JOB_STARTER  = echo started by the queue; %USRCMD
DESCRIPTION  = a job starter around the user's command
End Queue

Begin Queue
QUEUE_NAME   = slowpost
PRIORITY     = 20
POST_EXEC    = while [ ! -e {w}/release ]; do sleep 0.1; done
DESCRIPTION  = a post-exec that waits for a file
End Queue

Begin Queue
QUEUE_NAME   = retry
PRIORITY     = 20
PRE_EXEC     = false
LOCAL_MAX_PREEXEC_RETRY = 2
DESCRIPTION  = a pre-exec that always fails, tried twice
End Queue
"
    ))?;
    std::fs::write(
        c.queues_file().with_file_name("lsb.applications"),
        format!(
            "Begin Application\nNAME = tagged\nPRE_EXEC = touch {w}/app.pre\n\
             JOB_STARTER = echo app starter; %USRCMD\nEnd Application\n\
             Begin Application\nNAME = inclusive\nJOB_INCLUDE_POSTPROC = Y\nEnd Application\n"
        ),
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("bqueues to list the test queues", LONG, || {
        let out = c.stdout_ok("bqueues", &[]).unwrap_or_default();
        let ok = ["gated ", "requeue ", "retry ", "slowpost ", "starter "]
            .iter()
            .all(|q| out.lines().any(|l| l.starts_with(q)));
        (ok.then_some(()), out)
    })?;
    Ok((c, work))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn pre_exec_post_exec_and_requeue_exit_values() -> Result<()> {
    let (c, work) = cluster("go")?;
    let out = work.join("out");

    // "If a pre-execution command is specified, the job is held in the queue until the
    // specified pre-execution command returns a successful exit status (zero)."
    let gated = c.bsub(
        &work,
        &["-q", "gated", "-o", &out.display().to_string(), "echo ran"],
    )?;
    let pending = wait_long(
        &c,
        gated,
        "The job's pre-exec command exited with non-zero status",
    )?;
    assert!(pending.contains("PEND"), "{pending}");
    // "While the job is pending, other jobs can proceed ahead of the waiting job."
    let other = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    wait_stat(&c, other, "DONE")?;
    assert_eq!(stat(&c, gated), "PEND");
    std::fs::write(work.join("go"), "")?;
    wait_stat(&c, gated, "DONE")?;
    assert!(read(&out).contains("ran"), "{}", read(&out));
    // The queue's command ran in /tmp; the post-execution command after the job, with
    // its exit status.
    assert_eq!(read(&work.join("pre.cwd")).trim(), "/tmp");
    let long = wait_long(&c, gated, "Post job process done successfully.")?;
    assert!(long.contains("Done successfully."), "{long}");
    assert_eq!(read(&work.join("post.stat")).trim(), "0");

    // bsub -E: the job-level pre-execution command, after the queue's; exit 99 ends the
    // job instead of requeueing it.
    let ended = c.bsub(&work, &["-o", "/dev/null", "-E", "exit 99", "true"])?;
    wait_stat(&c, ended, "EXIT")?;
    let job_gate = work.join("go2");
    let e = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "-E",
            &format!("test -e {}", job_gate.display()),
            "true",
        ],
    )?;
    wait_long(
        &c,
        e,
        "The job's pre-exec command exited with non-zero status",
    )?;
    std::fs::write(&job_gate, "")?;
    wait_stat(&c, e, "DONE")?;

    // JOB_STARTER: "%USRCMD" stands for the user's command.
    let started_out = work.join("started.out");
    let s = c.bsub(
        &work,
        &[
            "-q",
            "starter",
            "-o",
            &started_out.display().to_string(),
            "echo 'the job'",
        ],
    )?;
    wait_stat(&c, s, "DONE")?;
    let text = read(&started_out);
    assert!(
        text.starts_with("started by the queue\nthe job\n"),
        "{text}"
    );

    // An application profile's PRE_EXEC and JOB_STARTER apply to its jobs (bsub -app).
    let app_out = work.join("app.out");
    let a = c.bsub(
        &work,
        &[
            "-app",
            "tagged",
            "-o",
            &app_out.display().to_string(),
            "echo job",
        ],
    )?;
    wait_stat(&c, a, "DONE")?;
    assert!(work.join("app.pre").exists());
    let text = read(&app_out);
    assert!(text.starts_with("app starter\njob\n"), "{text}");
    // bapp lists the profile (its job has ended: no slots); -l shows its parameters.
    let apps = c.ok("bapp", &[])?;
    let row: Vec<&str> = apps
        .lines()
        .find(|l| l.starts_with("tagged"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(row, vec!["tagged", "0", "0", "0", "0"], "{apps}");
    assert!(
        c.ok("bapp", &["-l", "tagged"])?
            .contains("JOB_STARTER: echo app starter")
    );
    assert_eq!(c.run("bapp", &["nosuch"])?.status.code(), Some(255));
    wait_long(&c, a, "Application <tagged>")?;

    // LOCAL_MAX_PREEXEC_RETRY = 2 with LOCAL_MAX_PREEXEC_RETRY_ACTION = EXIT (lsb.params):
    // the second failure ends the job.
    let retry = c.bsub(&work, &["-q", "retry", "-o", "/dev/null", "true"])?;
    wait_stat(&c, retry, "EXIT")?;

    // REQUEUE_EXIT_VALUES = 3: exits 3 twice (requeued each time), then 0.
    let count = work.join("runs");
    let script = format!(
        "echo x >> {f}; n=$(wc -l < {f}); [ $n -ge 3 ] && exit 0; exit 3",
        f = count.display()
    );
    let rq = c.bsub(&work, &["-q", "requeue", "-o", "/dev/null", &script])?;
    wait_stat(&c, rq, "DONE")?;
    assert_eq!(read(&count).lines().count(), 3);
    // MAX_JOB_REQUEUE = 2: a job that always exits 3 is requeued twice, then ends EXIT.
    let count2 = work.join("runs2");
    let always = format!("echo x >> {}; exit 3", count2.display());
    let rq2 = c.bsub(&work, &["-q", "requeue", "-o", "/dev/null", &always])?;
    wait_stat(&c, rq2, "EXIT")?;
    assert_eq!(read(&count2).lines().count(), 3);

    // bsub -Q: the job's own requeue exit values (the default queue has none).
    let count3 = work.join("runs3");
    let script = format!(
        "echo x >> {f}; n=$(wc -l < {f}); [ $n -ge 2 ] && exit 0; exit 5",
        f = count3.display()
    );
    let q = c.bsub(&work, &["-Q", "5", "-o", "/dev/null", &script])?;
    wait_stat(&c, q, "DONE")?;
    assert_eq!(read(&count3).lines().count(), 2);
    // bsub -Ep: the job's post-execution command, with the job's exit status.
    let ep_stat = work.join("ep.stat");
    let ep = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "-Ep",
            &format!("echo $LSB_JOBEXIT_STAT > {}", ep_stat.display()),
            "exit 2",
        ],
    )?;
    wait_stat(&c, ep, "EXIT")?;
    wait_long(&c, ep, "Post job process done successfully.")?;
    assert_eq!(read(&ep_stat).trim(), "512");

    // brequeue: the running job is killed and runs again; brequeue -d a finished one.
    let count4 = work.join("runs4");
    let script = format!(
        "echo x >> {f}; n=$(wc -l < {f}); [ $n -ge 2 ] && exit 0; sleep 60",
        f = count4.display()
    );
    let rq = c.bsub(&work, &["-o", "/dev/null", &script])?;
    wait_stat(&c, rq, "RUN")?;
    wait_for("the job's first run", LONG, || {
        let n = read(&count4).lines().count();
        ((n == 1).then_some(()), n.to_string())
    })?;
    let out = c.ok("brequeue", &[&rq.to_string()])?;
    assert_eq!(out, format!("Job <{rq}> is being requeued\n"));
    wait_stat(&c, rq, "DONE")?;
    assert_eq!(read(&count4).lines().count(), 2);
    let refused = c.run("brequeue", &["-e", &rq.to_string()])?;
    assert_eq!(refused.status.code(), Some(255));
    c.ok("brequeue", &["-d", &rq.to_string()])?;
    wait_for("the job's third run", LONG, || {
        let n = read(&count4).lines().count();
        ((n == 3).then_some(()), n.to_string())
    })?;
    wait_stat(&c, rq, "DONE")?;
    Ok(())
}

/// JOB_INCLUDE_POSTPROC=N (LSF's default): "a new job can start on the execution host
/// before post-execution processing finishes" — the job is DONE as it ends, its
/// post-execution status comes later. An application profile's JOB_INCLUDE_POSTPROC=Y
/// keeps the job (and its slot) until its post-execution processing has finished.
#[test]
fn post_execution_processing_is_outside_the_job_unless_job_include_postproc() -> Result<()> {
    let (c, work) = cluster("never")?;
    let outside = c.bsub(&work, &["-q", "slowpost", "-o", "/dev/null", "true"])?;
    wait_stat(&c, outside, "DONE")?;
    let inside = c.bsub(
        &work,
        &[
            "-q",
            "slowpost",
            "-app",
            "inclusive",
            "-o",
            "/dev/null",
            "true",
        ],
    )?;
    wait_stat(&c, inside, "RUN")?;
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(stat(&c, inside), "RUN", "held while its post-exec runs");
    let long = c.ok("bjobs", &["-l", &outside.to_string()])?;
    assert!(!long.contains("Post job process"), "{long}");
    std::fs::write(work.join("release"), "")?;
    wait_stat(&c, inside, "DONE")?;
    for id in [outside, inside] {
        wait_long(&c, id, "Post job process done successfully.")?;
    }
    Ok(())
}
