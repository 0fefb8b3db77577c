//! Preemptive scheduling on a 2-host cluster of real processes (issue 23, seed 002):
//! jobs of the low-priority `low` queue fill every slot; a job of a `PREEMPTIVE`
//! queue starts within a second by suspending the most recently started of them (by
//! the queue's `JOB_CONTROLS SUSPEND` action: its processes are stopped, state `T`;
//! bjobs -l and lsb.events say why); a 2-slot job
//! preempts two more; kill -9 of mbatchd replays lsb.events to the same state; when the
//! preempting jobs end, the preempted ones resume (processes running again).

use anyhow::{Context, Result};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::procs::{group_states, job_statuses, wait_group, wait_pgid_file};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, wait_for, work_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);
/// Hellos every second; kills in steps of a second; the preemption parameters bparams
/// shows (MINI_JOB does not change which jobs this test preempts).
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 1\n\
                      PREEMPT_FOR = MINI_JOB\nMAX_JOB_PREEMPT = 5\nNO_PREEMPT_RUN_TIME = 90%";
/// SUSP_MBD_PREEMPT | SUSP_MBD_LOCK.
const PREEMPTED: u32 = 0x80 | 0x10000;
const SSUSP: u32 = 0x8;
const RUN: u32 = 0x4;

fn events(c: &ProcessCluster) -> PathBuf {
    c.dir.path().join("work/basalt/logdir/lsb.events")
}

/// The seconds from job `id`'s JOB_NEW to its JOB_START in lsb.events.
fn submit_to_start(c: &ProcessCluster, id: u64) -> Option<i64> {
    let text = std::fs::read_to_string(events(c)).ok()?;
    let at = |kind: &str| {
        text.lines().map(event_fields).find_map(|f| {
            (f.first().map(String::as_str) == Some(kind)
                && f.get(3).and_then(|v| v.parse::<u64>().ok()) == Some(id))
            .then(|| f.get(2).and_then(|v| v.parse::<i64>().ok()))
            .flatten()
        })
    };
    Some(at("JOB_START")? - at("JOB_NEW")?)
}

/// Jobs in SSUSP with the preemption reason in lsb.events' last JOB_STATUS.
fn preempted(c: &ProcessCluster, ids: &[u64]) -> Vec<u64> {
    ids.iter()
        .copied()
        .filter(|id| {
            job_statuses(&events(c), *id)
                .last()
                .is_some_and(|&(st, r, _)| st == SSUSP && r == PREEMPTED)
        })
        .collect()
}

/// Submit a job to `queue` that writes its process group id to `<name>.pgid`.
fn submit(c: &ProcessCluster, work: &Path, queue: &str, name: &str, more: &[&str]) -> Result<u64> {
    let cmd = format!("echo $$ > {name}.pgid; sleep 600");
    let mut args = vec!["-q", queue, "-J", name, "-o", "/dev/null"];
    args.extend_from_slice(more);
    args.push(&cmd);
    c.bsub(work, &args)
}

#[test]
fn a_preemptive_job_suspends_low_priority_jobs_and_they_resume_when_slots_free() -> Result<()> {
    let c = ProcessCluster::start_batch("preempt", &ClusterSpec::new(2), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    // The low queue's JOB_CONTROLS SUSPEND applies to preemption: it notes the reasons
    // it was given, then stops the job.
    c.append_batch_file(
        "lsb.queues",
        &format!(
            "\nBegin Queue\nQUEUE_NAME = low\nPRIORITY = 10\n\
         JOB_CONTROLS = SUSPEND[echo $LSB_SUSP_REASONS > {}/susp.$LSB_JOBID; \
         kill -STOP -$LSB_JOBPGIDS]\nEnd Queue\n\
         \nBegin Queue\nQUEUE_NAME = urgent\nPRIORITY = 70\nPREEMPTION = PREEMPTIVE\n\
         DESCRIPTION = preempts any lower-priority queue\nEnd Queue\n",
            work.display()
        ),
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("bqueues -l to show the urgent queue", LONG, || {
        let out = c
            .stdout_ok("bqueues", &["-l", "urgent"])
            .unwrap_or_default();
        let ok = out.contains("PREEMPTION = PREEMPTIVE") && out.contains("PREEMPTS QUEUES:");
        (ok.then_some(()), out)
    })?;

    let params = c.ok("bparams", &["-a"])?;
    for kv in [
        "PREEMPT_FOR = MINI_JOB",
        "MAX_JOB_PREEMPT = 5",
        "PREEMPTION_WAIT_TIME = 300",
        "NO_PREEMPT_RUN_TIME = 90%",
    ] {
        assert!(params.contains(kv), "{kv}: {params}");
    }
    let low_q = c.ok("bqueues", &["-l", "low"])?;
    assert!(
        low_q.contains("PREEMPTED BY QUEUES:  urgent\nMAX_JOB_PREEMPT:  5\n"),
        "{low_q}"
    );

    // Low-priority jobs on every slot.
    let slots: usize = c
        .ok("bhosts", &[])?
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_whitespace()
                .nth(3)
                .and_then(|v| v.parse::<usize>().ok())
        })
        .sum();
    assert!(slots >= 2, "bhosts MAX: {slots}");
    let mut low = Vec::new();
    for i in 0..slots {
        low.push(submit(&c, &work, "low", &format!("low{i}"), &[])?);
        // Started a second apart at most: the newest is clear.
        wait_state(&c, low[i], "RUN", LONG)?;
    }
    let mut pgid = Vec::new();
    for i in 0..slots {
        pgid.push(wait_pgid_file(&work.join(format!("low{i}.pgid")), LONG)?);
    }

    // A one-slot preemptive job starts at once in the newest low job's slot.
    let urgent = submit(&c, &work, "urgent", "urgent", &[])?;
    wait_state(&c, urgent, "RUN", LONG)?;
    let took = submit_to_start(&c, urgent).context("JOB_NEW and JOB_START")?;
    assert!(took <= 1, "the preemptive job took {took} s to start");
    // One victim (the most recently started on the least-loaded host).
    let first = preempted(&c, &low);
    assert_eq!(first.len(), 1, "{first:?}");
    let victim = first[0];
    let vi = low
        .iter()
        .position(|id| *id == victim)
        .context("the victim")?;
    wait_state(&c, victim, "SSUSP", LONG)?;
    wait_group(pgid[vi], true, LONG)?;
    // Logged once, when mbatchd decided (sbatchd's confirmation adds no record).
    let statuses = job_statuses(&events(&c), victim);
    assert_eq!(statuses, vec![(SSUSP, PREEMPTED, 0)], "{statuses:?}");
    let noted = wait_pgid_file(&work.join(format!("susp.{victim}")), LONG)?;
    assert_eq!(
        noted as u32, PREEMPTED,
        "LSB_SUSP_REASONS of the SUSPEND action"
    );
    let long = c.ok("bjobs", &["-l", &victim.to_string()])?;
    assert!(
        long.contains(" The job was preempted by a higher priority job;"),
        "{long}"
    );
    assert!(
        long.contains(" Preempted <1> time; last by job <"),
        "{long}"
    );
    // The others run on.
    for (i, p) in pgid.iter().enumerate() {
        if i != vi {
            assert!(group_states(*p).iter().all(|(_, s)| *s != 'T'));
        }
    }

    // A 2-slot job on one host preempts the two jobs there it needs.
    let big = submit(
        &c,
        &work,
        "urgent",
        "big",
        &["-n", "2", "-R", "span[hosts=1]"],
    )?;
    wait_state(&c, big, "RUN", LONG)?;
    let took = submit_to_start(&c, big).context("JOB_NEW and JOB_START of the 2-slot job")?;
    assert!(took <= 1, "the 2-slot job took {took} s to start");
    // Two more: the host with the first victim has one low job left at most.
    let now_preempted = preempted(&c, &low);
    assert_eq!(now_preempted.len(), 3, "{now_preempted:?}");
    for (i, id) in low.iter().enumerate() {
        if now_preempted.contains(id) {
            wait_group(pgid[i], true, LONG)?;
        }
    }

    // kill -9 of mbatchd: the replayed state is the same.
    let snapshot = |c: &ProcessCluster| -> Result<String> {
        let o = c.run(
            "bjobs",
            &[
                "-a",
                "-u",
                "all",
                "-json",
                "-o",
                "jobid stat queue exec_host",
            ],
        )?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let before = snapshot(&c)?;
    assert_eq!(c.kill9_pids_of("mbatchd", "hostA"), 1);
    let after = wait_for("mbatchd to answer again", LONG, || match snapshot(&c) {
        Ok(s) if s.contains("RECORDS") => (Some(s), String::new()),
        Ok(s) => (None, s),
        Err(e) => (None, e.to_string()),
    })?;
    assert_eq!(before, after);

    // The preempting jobs end: every preempted job resumes, its processes run again.
    c.ok("bkill", &[&urgent.to_string(), &big.to_string()])?;
    for (i, id) in low.iter().enumerate() {
        wait_state(&c, *id, "RUN", LONG)?;
        wait_group(pgid[i], false, LONG)?;
    }
    let m = jobs(&c)?;
    for id in &low {
        assert_eq!(m[id].stat, "RUN", "{:?}", m[id]);
    }
    // The first victim's history: preempted once, resumed once — neither logged twice.
    let statuses = job_statuses(&events(&c), victim);
    assert_eq!(statuses, vec![(SSUSP, PREEMPTED, 0), (RUN, 0, 0)]);
    c.ok("bkill", &["0"])?;
    Ok(())
}
