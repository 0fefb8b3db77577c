//! Shared resources and an ELIM-provided index on a 3-host cluster (issue 20, items 1–3):
//! a licence count of 2 (`licence (2@[all])` in the ResourceMap) runs 2 of 5 jobs that
//! each reserve one (`rusage[licence=1]`), the others pending with LSF's reason naming
//! the resource ("Job requirements for reserving resource (licence) not satisfied") until
//! a licence is back; `bhosts -s` shows the count and what is reserved; a `select[]` on the
//! ELIM's `scratch` index places a job that asks for what the hosts have and leaves one
//! asking for more pending; a dynamic shared resource the ELIM reports (`dlic`, 1) runs
//! one job reserving it and keeps the next pending; a static Boolean shared resource on
//! hostB (`fastnet`) sends a `select[fastnet]` job there. The daemons run in the test process (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

const ELIM: &str = "#!/bin/sh\nwhile :; do echo \"2 scratch 100 dlic 1\"; sleep 0.2; done\n";

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

fn wait_reason(c: &InProcessBatch, id: u64, reason: &str) -> Result<String> {
    wait_for(
        &format!("job {id}'s pending reason {reason:?}"),
        LONG,
        || {
            let out = c
                .stdout_ok("bjobs", &["-p", &id.to_string()])
                .unwrap_or_default();
            (out.contains(reason).then(|| out.clone()), out)
        },
    )
}

#[test]
fn a_licence_count_of_2_runs_2_of_5_jobs_and_select_uses_the_elim_index() -> Result<()> {
    let mut spec = ClusterSpec::new(3)
        .shared_resource("licence", "(2@[all])")
        .numeric_resource("scratch", false)
        .numeric_resource("dlic", false)
        .elim("elim.scratch", ELIM);
    // A dynamic shared resource: its value is what the ELIM reports (1).
    spec.resource_map
        .push(("dlic".to_owned(), "([all])".to_owned()));
    // A static Boolean shared resource on hostB only.
    spec.extra_resources
        .push(basalt_config::embedded::ExtraResource {
            name: "fastnet".into(),
            kind: "Boolean".into(),
            interval: None,
            increasing: None,
            description: "fast network".into(),
        });
    spec.resource_map
        .push(("fastnet".to_owned(), "([hostB])".to_owned()));
    let c = InProcessBatch::start("batch-shared", &spec, "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let gate = work.join("gate");
    let hold = format!("while [ ! -e {} ]; do sleep 0.1; done", gate.display());

    let mut jobs = Vec::new();
    for _ in 0..5 {
        jobs.push(c.bsub(
            &work,
            &["-o", "/dev/null", "-R", "rusage[licence=1]", &hold],
        )?);
    }
    wait_stat(&c, jobs[0], "RUN")?;
    wait_stat(&c, jobs[1], "RUN")?;
    // Issue 50 item 12: the reason names the resource (on each of the 3 hosts).
    for &id in &jobs[2..] {
        let why = wait_reason(
            &c,
            id,
            "Job requirements for reserving resource (licence) not satisfied: 3 hosts;",
        )?;
        assert!(why.contains("PEND"), "{why}");
    }
    // Three hosts, six slots: only the licences keep them pending.
    let running = jobs.iter().filter(|&&id| stat(&c, id) == "RUN").count();
    assert_eq!(running, 2);
    // bhosts -s: the count, what the running jobs reserve of it, where it is.
    let shared = wait_for("bhosts -s to show 2 licences reserved", LONG, || {
        let out = c.stdout_ok("bhosts", &["-s"]).unwrap_or_default();
        let row = out
            .lines()
            .find(|l| l.starts_with("licence"))
            .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
        (
            row.filter(|r| {
                r.get(1).map(String::as_str) == Some("2")
                    && r.get(2).map(String::as_str) == Some("2.0")
            })
            .map(|_| out.clone()),
            out,
        )
    })?;
    assert!(shared.starts_with("RESOURCE"), "{shared}");
    assert!(shared.contains("hostA hostB hostC"), "{shared}");

    // select[] on the ELIM's index: what the hosts have runs, more pends.
    let fits = c.bsub(
        &work,
        &["-o", "/dev/null", "-R", "select[scratch>50]", "true"],
    )?;
    let more = c.bsub(
        &work,
        &["-o", "/dev/null", "-R", "select[scratch>500]", "true"],
    )?;
    wait_stat(&c, fits, "DONE")?;
    wait_reason(&c, more, "Job's resource requirements not satisfied")?;
    c.ok("bkill", &[&more.to_string()])?;

    // select[] on the Boolean shared resource: only hostB has it.
    let fast = c.bsub(&work, &["-o", "/dev/null", "-R", "select[fastnet]", "true"])?;
    wait_stat(&c, fast, "DONE")?;
    let on = c
        .stdout_ok(
            "bjobs",
            &["-o", "exec_host", "-noheader", &fast.to_string()],
        )
        .unwrap_or_default();
    assert!(on.contains("hostB"), "{on}");

    // The dynamic licence the ELIM reports (1): one job takes it, the next waits.
    let d1 = c.bsub(&work, &["-o", "/dev/null", "-R", "rusage[dlic=1]", &hold])?;
    wait_stat(&c, d1, "RUN")?;
    let d2 = c.bsub(&work, &["-o", "/dev/null", "-R", "rusage[dlic=1]", &hold])?;
    wait_reason(
        &c,
        d2,
        "Job requirements for reserving resource (dlic) not satisfied",
    )?;
    jobs.extend([d1, d2]);

    // The licences come back as the jobs end: every job runs.
    std::fs::write(&gate, "")?;
    for &id in &jobs {
        wait_stat(&c, id, "DONE")?;
    }
    Ok(())
}
