//! Load-based suspension and resumption on a one-host cluster whose daemons run in the
//! test process (`InProcessBatch`; the jobs and the ELIM are processes) (issue 7; seed "Automatic job suspension", daemon-behaviour.md §3.2). The host's
//! `r1m` (and `it`) come from an ELIM that reads them from a file the test writes, so
//! the load is whatever the test says; r1m values are written raw (`ncpus` times the
//! effective value the thresholds are compared with). `SBD_SLEEP_TIME = 1`.
//!
//! * The seed's example: a low-priority queue (r1m 0.25/1.75) and a high-priority one
//!   (r1m 1.5, no suspending threshold). The low job waits while the host is busy
//!   (pending reason naming r1m) and starts once it is idle, the
//!   high job joins, the load rises past 1.75: the low job is stopped (its processes
//!   are in state `T`, bjobs says SSUSP with the r1m reason, lsb.events has the
//!   JOB_STATUS with reason SUSP_LOAD_REASON and subreason 1) while the high job runs
//!   on; a load back under 1.75 but above 0.25 does not resume it (hysteresis); when
//!   the high job exits and the load falls, the low job is resumed.
//! * A queue `JOB_CONTROLS` command replaces SIGSTOP/SIGCONT, and `bresume` of a
//!   USUSP job makes it SSUSP; it runs again once the load allows.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::procs::{self, group_states};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, event_fields, wait_for, work_dir};
use std::path::Path;
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(40);

/// The ELIM: r1m from `r1m.value` next to it, `it` from `it.value` (default 100
/// minutes: nobody at the console).
const ELIM: &str = r#"#!/bin/sh
while :; do
  r=$(cat "$LSF_SERVERDIR/r1m.value" 2>/dev/null)
  [ -n "$r" ] || r=0
  i=$(cat "$LSF_SERVERDIR/it.value" 2>/dev/null)
  [ -n "$i" ] || i=100
  echo "2 r1m $r it $i"
  sleep 0.2
done
"#;

fn queues(extra: &str) -> String {
    format!(
        "
Begin Queue
QUEUE_NAME   = low
PRIORITY     = 20
r1m          = 0.25/1.75
DESCRIPTION  = the seed's low-priority queue
End Queue

Begin Queue
QUEUE_NAME   = high
PRIORITY     = 40
r1m          = 1.5
DESCRIPTION  = the seed's high-priority queue
End Queue
{extra}"
    )
}

/// A one-host cluster with the ELIM and the test queues (lsb.queues is extended after
/// the start, then `badmin reconfig` makes mbatchd and sbatchd read it — sbatchd
/// without a restart: its load thresholds come from the new file).
fn cluster(name: &str, extra_queues: impl Fn(&Path) -> String) -> Result<InProcessBatch> {
    let spec = ClusterSpec::new(1).elim("elim.load", ELIM);
    let c = InProcessBatch::start(name, &spec, "SBD_SLEEP_TIME = 1")?;
    std::fs::write(c.dir.path().join("serverdir/r1m.value"), "0\n")?;
    c.append_queues(&queues(&extra_queues(c.dir.path())))?;
    let out = c.run("badmin", &["reconfig"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || err.contains("failed") {
        bail!("badmin reconfig: {err}");
    }
    wait_for("bqueues to list low and high", LONG, || {
        let out = c.stdout_ok("bqueues", &[]).unwrap_or_default();
        let ok = out.lines().any(|l| l.starts_with("low ")) && out.contains("\nhigh ");
        (ok.then_some(()), out)
    })?;
    Ok(c)
}

/// hostA's CPU count as lshosts shows it.
fn ncpus(c: &InProcessBatch) -> Result<f64> {
    let out = c.ok("lshosts", &[])?;
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let col = header
        .iter()
        .position(|h| *h == "ncpus")
        .ok_or_else(|| anyhow!("no ncpus column: {out}"))?;
    let row = lines
        .find(|l| l.starts_with("hostA"))
        .ok_or_else(|| anyhow!("no hostA row: {out}"))?;
    row.split_whitespace()
        .nth(col)
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|n| *n >= 1.0)
        .ok_or_else(|| anyhow!("bad ncpus in {row:?}"))
}

/// Make hostA's effective r1m `eff` (raw = eff * ncpus) and wait until lsload shows it.
fn set_load(c: &InProcessBatch, n: f64, eff: f64) -> Result<()> {
    let raw = eff * n;
    std::fs::write(
        c.dir.path().join("serverdir/r1m.value"),
        format!("{raw:.3}\n"),
    )?;
    wait_for(&format!("lsload to show r1m {raw:.1}"), LONG, || {
        let out = c.stdout_ok("lsload", &["-l"]).unwrap_or_default();
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
        let col = header.iter().position(|h| *h == "r1m");
        let v = lines
            .find(|l| l.starts_with("hostA"))
            .and_then(|l| l.split_whitespace().nth(col?).map(str::to_owned))
            .and_then(|v| v.trim_start_matches('*').parse::<f64>().ok());
        (
            v.filter(|v| (v - raw).abs() < 0.06).map(|_| ()),
            out.clone(),
        )
    })?;
    // mbatchd polls the master LIM: wait until it schedules with the new value too.
    wait_for(&format!("bhosts -l to show r1m {raw:.1}"), LONG, || {
        let out = c.stdout_ok("bhosts", &["-l", "hostA"]).unwrap_or_default();
        let v = out
            .lines()
            .skip_while(|l| !l.contains("CURRENT LOAD USED FOR SCHEDULING"))
            .find(|l| l.trim_start().starts_with("Total"))
            .and_then(|l| l.split_whitespace().nth(2).map(str::to_owned))
            .and_then(|v| v.parse::<f64>().ok());
        (
            v.filter(|v| (v - raw).abs() < 0.06).map(|_| ()),
            out.clone(),
        )
    })
}

/// Make hostA's idle time `it` minutes and wait until lsload shows it.
fn set_it(c: &InProcessBatch, it: u32) -> Result<()> {
    std::fs::write(c.dir.path().join("serverdir/it.value"), format!("{it}\n"))?;
    wait_for(&format!("lsload to show it {it}"), LONG, || {
        let out = c.stdout_ok("lsload", &["-l"]).unwrap_or_default();
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
        let col = header.iter().position(|h| *h == "it");
        let v = lines
            .find(|l| l.starts_with("hostA"))
            .and_then(|l| l.split_whitespace().nth(col?).map(str::to_owned))
            .and_then(|v| v.trim_start_matches('*').parse::<f64>().ok());
        (
            v.filter(|v| (v - f64::from(it)).abs() < 0.5).map(|_| ()),
            out.clone(),
        )
    })
}

fn stat(c: &InProcessBatch, id: u64) -> Option<String> {
    c.stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
        .and_then(|o| o.lines().next().map(|l| l.trim().to_owned()))
}

fn wait_stat(c: &InProcessBatch, id: u64, want: &str) -> Result<()> {
    wait_for(&format!("job {id} to be {want}"), LONG, || {
        let s = stat(c, id);
        ((s.as_deref() == Some(want)).then_some(()), format!("{s:?}"))
    })
}

/// Let the newest running job age past `SBD_SLEEP_TIME` (1 s) before a test raises the
/// load: a job started less than that ago is never suspended, so the next older one
/// would rightly go first (the race behind two CI failures). A job is RUN in bjobs only
/// after sbatchd started it, so this is counted from when its RUN state was seen.
fn past_sbd_sleep_time() {
    std::thread::sleep(Duration::from_millis(1500));
}

/// Submit a job that writes its process group id to `<name>.pgid` and sleeps.
fn submit(c: &InProcessBatch, work: &Path, queue: &str, name: &str) -> Result<u64> {
    c.bsub(
        work,
        &[
            "-q",
            queue,
            "-J",
            name,
            "-o",
            &format!("{name}.out"),
            &format!("echo $$ > {name}.pgid; sleep 600"),
        ],
    )
}

fn pgid_of(work: &Path, name: &str) -> Result<i32> {
    procs::wait_pgid_file(&work.join(format!("{name}.pgid")), LONG)
}

fn wait_group(pgid: i32, stopped: bool) -> Result<()> {
    procs::wait_group(pgid, stopped, LONG)
}

/// JOB_STATUS records of job `id` in lsb.events: (status, reasons, subreasons).
fn job_statuses(c: &InProcessBatch, id: u64) -> Vec<(u32, u32, u32)> {
    procs::job_statuses(&c.dir.path().join("work/basalt/logdir/lsb.events"), id)
}

/// `stat` stays `want` for `d` (used to check that something does not happen).
fn stays(c: &InProcessBatch, id: u64, want: &str, d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    while Instant::now() < end {
        let s = stat(c, id);
        if s.as_deref() != Some(want) {
            return Err(anyhow!("job {id} became {s:?}, expected it to stay {want}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

#[test]
fn seed_example_low_priority_job_stopped_and_resumed() -> Result<()> {
    let c = cluster("load-susp-seed", |_| String::new())?;
    let work = work_dir(c.dir.path())?;
    let n = ncpus(&c)?;

    // A busy host (r1m 1.0 > the low queue's loadSched 0.25) takes no low job; when
    // its load falls to idle the job starts.
    set_load(&c, n, 1.0)?;
    let low = submit(&c, &work, "low", "low")?;
    let p = wait_for("the load pending reason", LONG, || {
        let out = c
            .run("bjobs", &["-p", &low.to_string()])
            .map(|o| basalt_testkit::output_text(&o))
            .unwrap_or_default();
        (
            out.contains(" The 1 min effective CPU queue length (r1m) is beyond threshold")
                .then(|| out.clone()),
            out,
        )
    })?;
    assert!(p.contains("PEND"), "{p}");
    set_load(&c, n, 0.0)?;

    // The low job starts on the idle host and loads it to about 1.25.
    wait_stat(&c, low, "RUN")?;
    let low_pg = pgid_of(&work, "low")?;
    set_load(&c, n, 1.25)?;

    // The high-priority queue (scheduling threshold 1.5) sends a second job.
    let high = submit(&c, &work, "high", "high")?;
    wait_stat(&c, high, "RUN")?;
    let high_pg = pgid_of(&work, "high")?;
    stays(&c, low, "RUN", Duration::from_secs(3)).context("1.25 is under 1.75")?;

    // The run queue rises past 1.75: the low job is stopped, the high job runs on.
    set_load(&c, n, 2.25)?;
    wait_stat(&c, low, "SSUSP")?;
    wait_group(low_pg, true)?;
    assert_eq!(stat(&c, high).as_deref(), Some("RUN"));
    assert!(
        group_states(high_pg).iter().all(|(_, s)| *s != 'T'),
        "high job stopped: {:?}",
        group_states(high_pg)
    );
    let s = c.ok("bjobs", &["-s", &low.to_string()])?;
    assert!(
        s.contains(" Host load exceeded threshold:  1-minute CPU run queue length (r1m)"),
        "{s}"
    );
    let l = c.ok("bjobs", &["-l", &low.to_string()])?;
    assert!(l.contains(" SUSPENDING REASONS:"), "{l}");
    assert!(l.contains("1-minute CPU run queue length (r1m)"), "{l}");
    let sched = l
        .lines()
        .find(|x| x.starts_with(" loadSched"))
        .unwrap_or("");
    let stop = l.lines().find(|x| x.starts_with(" loadStop")).unwrap_or("");
    assert!(sched.contains("0.2") || sched.contains("0.3"), "{l}");
    assert!(stop.contains("1.8") || stop.contains("1.7"), "{l}");
    let ql = c.ok("bqueues", &["-l", "low"])?;
    let qstop = ql
        .lines()
        .find(|x| x.starts_with(" loadStop"))
        .unwrap_or("");
    assert!(qstop.contains("1.8") || qstop.contains("1.7"), "{ql}");
    let st = job_statuses(&c, low);
    assert!(
        st.contains(&(8, 0x40, 1)),
        "JOB_STATUS SSUSP SUSP_LOAD_REASON r1m: {st:?}"
    );

    // Back under 1.75 but above 0.25 while the high job runs: no resumption.
    set_load(&c, n, 1.2)?;
    stays(&c, low, "SSUSP", Duration::from_secs(4)).context("hysteresis")?;
    assert!(group_states(low_pg).iter().all(|(_, s)| *s == 'T'));

    // The high job exits and the load drops to idle: the low job is resumed.
    c.ok("bkill", &[&high.to_string()])?;
    wait_for(&format!("job {high} to end"), LONG, || {
        let s = stat(&c, high);
        (
            matches!(s.as_deref(), Some("EXIT" | "DONE")).then_some(()),
            format!("{s:?}"),
        )
    })?;
    set_load(&c, n, 0.1)?;
    wait_stat(&c, low, "RUN")?;
    wait_group(low_pg, false)?;
    let st = job_statuses(&c, low);
    assert!(
        st.last().is_some_and(|s| s.0 == 4),
        "last JOB_STATUS is RUN: {st:?}"
    );
    c.ok("bkill", &[&low.to_string()])?;
    Ok(())
}

#[test]
fn job_controls_command_and_bresume_to_ssusp_to_run() -> Result<()> {
    let extra = |top: &Path| {
        format!(
            "
Begin Queue
QUEUE_NAME   = ctl
PRIORITY     = 30
r1m          = 0.25/1.75
JOB_CONTROLS = SUSPEND[echo suspend $LSB_SUSP_REASONS $LSB_SUSP_SUBREASONS >> {log}; kill -STOP -$LSB_JOBPGIDS] RESUME[echo resume >> {log}; kill -CONT -$LSB_JOBPGIDS]
End Queue
",
            log = top.join("work-area/controls.log").display()
        )
    };
    let c = cluster("load-susp-ctl", extra)?;
    let log = c.dir.path().join("work-area/controls.log");
    let work = work_dir(c.dir.path())?;
    let n = ncpus(&c)?;
    set_load(&c, n, 0.0)?;

    let j1 = submit(&c, &work, "ctl", "j1")?;
    wait_stat(&c, j1, "RUN")?;
    let j2 = submit(&c, &work, "ctl", "j2")?;
    wait_stat(&c, j2, "RUN")?;
    let pg2 = pgid_of(&work, "j2")?;
    let pg1 = pgid_of(&work, "j1")?;
    past_sbd_sleep_time();

    // Overloaded: the newer job is suspended by the queue's SUSPEND command.
    set_load(&c, n, 2.5)?;
    wait_stat(&c, j2, "SSUSP")?;
    wait_group(pg2, true)?;
    let text = wait_for("the SUSPEND command to run", LONG, || {
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        (t.contains("suspend 64 1").then(|| t.clone()), t)
    })?;
    assert!(!text.contains("resume"), "{text}");

    // bstop j1 (USUSP), then bresume: SSUSP, waiting for the load.
    c.ok("bstop", &[&j1.to_string()])?;
    wait_stat(&c, j1, "USUSP")?;
    wait_group(pg1, true)?;
    c.ok("bresume", &[&j1.to_string()])?;
    wait_stat(&c, j1, "SSUSP")?;
    let s = c.ok("bjobs", &["-s", &j1.to_string()])?;
    assert!(
        s.contains("Waiting for re-scheduling after being resumed by user"),
        "{s}"
    );
    stays(&c, j1, "SSUSP", Duration::from_secs(3)).context("bresume'd job waits for load")?;

    // Idle again: both run, j2 through the RESUME command.
    set_load(&c, n, 0.0)?;
    wait_stat(&c, j1, "RUN")?;
    wait_stat(&c, j2, "RUN")?;
    wait_group(pg1, false)?;
    wait_group(pg2, false)?;
    wait_for("the RESUME command to run", LONG, || {
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        (t.contains("resume").then_some(()), t)
    })?;
    c.ok("bkill", &[&j1.to_string(), &j2.to_string()])?;
    Ok(())
}

#[test]
fn exceptions_sole_job_brun_forced_and_interactive_host() -> Result<()> {
    let c = cluster("load-susp-exc", |_| String::new())?;
    let work = work_dir(c.dir.path())?;
    let n = ncpus(&c)?;
    set_load(&c, n, 0.0)?;

    // A lone job is not suspended by load while nobody uses the host interactively.
    let a = submit(&c, &work, "low", "a")?;
    wait_stat(&c, a, "RUN")?;
    set_load(&c, n, 2.5)?;
    stays(&c, a, "RUN", Duration::from_secs(4)).context("sole-job rule")?;

    // A job forced with brun -f joins (the load keeps it from being dispatched):
    // it is the newer one, but it is never suspended, so the older job goes.
    let b = submit(&c, &work, "low", "b")?;
    stays(&c, b, "PEND", Duration::from_secs(2)).context("r1m above loadSched")?;
    c.ok("brun", &["-f", "-m", "hostA", &b.to_string()])?;
    wait_stat(&c, b, "RUN")?;
    wait_stat(&c, a, "SSUSP")?;
    let a_pg = pgid_of(&work, "a")?;
    wait_group(a_pg, true)?;
    set_it(&c, 0)?;
    stays(&c, b, "RUN", Duration::from_secs(3)).context("brun -f job")?;

    // The forced job leaves, the host is idle again: a resumes.
    c.ok("bkill", &[&b.to_string()])?;
    set_it(&c, 100)?;
    set_load(&c, n, 0.0)?;
    wait_stat(&c, a, "RUN")?;
    wait_group(a_pg, false)?;

    // Someone logs in and types (it 0): even a lone job is suspended.
    set_it(&c, 0)?;
    set_load(&c, n, 2.5)?;
    wait_stat(&c, a, "SSUSP")?;
    wait_group(a_pg, true)?;
    c.ok("bkill", &[&a.to_string()])?;
    Ok(())
}

/// JOB_STATUS records of job `id`: (time, status).
fn status_times(c: &InProcessBatch, id: u64) -> Vec<(i64, u32)> {
    let text = std::fs::read_to_string(c.dir.path().join("work/basalt/logdir/lsb.events"))
        .unwrap_or_default();
    text.lines()
        .map(event_fields)
        .filter(|f| f.first().map(String::as_str) == Some("JOB_STATUS"))
        .filter(|f| f.get(3).and_then(|v| v.parse::<u64>().ok()) == Some(id))
        .filter_map(|f| {
            Some((
                f.get(2)?.parse::<i64>().ok()?,
                f.get(4)?.parse::<u32>().ok()?,
            ))
        })
        .collect()
}

#[test]
fn one_job_per_period_newest_first_oldest_resumed_first() -> Result<()> {
    let c = cluster("load-susp-pace", |_| String::new())?;
    let work = work_dir(c.dir.path())?;
    let n = ncpus(&c)?;
    set_load(&c, n, 0.0)?;
    let mut ids = Vec::new();
    for name in ["p1", "p2"] {
        let id = submit(&c, &work, "low", name)?;
        wait_stat(&c, id, "RUN")?;
        ids.push(id);
    }
    past_sbd_sleep_time();
    // Someone at the console (so the last job is not kept) and the load too high: p2
    // (the newest) is suspended first, p1 a period later.
    set_it(&c, 0)?;
    set_load(&c, n, 3.0)?;
    wait_stat(&c, ids[1], "SSUSP")?;
    wait_stat(&c, ids[0], "SSUSP")?;
    let ssusp = |id: u64| {
        status_times(&c, id)
            .into_iter()
            .find(|(_, s)| *s == 8)
            .ok_or_else(|| anyhow!("no SSUSP record for {id}"))
    };
    let (first, second) = (ssusp(ids[1])?, ssusp(ids[0])?);
    assert!(
        second.0 > first.0,
        "one suspension per SBD_SLEEP_TIME, newest first: {first:?} then {second:?}"
    );
    // Idle again: resumed one per period, the oldest first (same queue).
    set_it(&c, 100)?;
    set_load(&c, n, 0.0)?;
    wait_stat(&c, ids[0], "RUN")?;
    wait_stat(&c, ids[1], "RUN")?;
    let run = |id: u64| {
        status_times(&c, id)
            .into_iter()
            .rfind(|(_, s)| *s == 4)
            .ok_or_else(|| anyhow!("no RUN record for {id}"))
    };
    let (r1, r2) = (run(ids[0])?, run(ids[1])?);
    assert!(
        r2.0 > r1.0,
        "oldest resumed first, a period apart: {r1:?} then {r2:?}"
    );
    c.ok("bkill", &["0"])?;
    Ok(())
}
