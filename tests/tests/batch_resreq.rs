//! Resource requirements' select parts on a real cluster (issue 20, item 1): a job's
//! `-R select[...]` is evaluated against what the host's LIM reports (load, maxmem,
//! type, ...); a requirement no host satisfies leaves the job pending with LSF's reason
//! (`bjobs -p`: "Job's resource requirements not satisfied"); a malformed one, or one
//! naming a resource the cluster does not define, is refused by `bsub` with LSF's
//! message; a running job's `rusage[mem=...]` reservation keeps the next one waiting
//! with "Job requirements for reserving resource (mem) not satisfied" until it ends.
//! The daemons run in the test process (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

fn stat(c: &InProcessBatch, id: u64) -> String {
    c.stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Wait until job `id` is in state `want`.
fn wait_stat(c: &InProcessBatch, id: u64, want: &str) -> Result<()> {
    wait_for(
        &format!("job {id} to be {want}"),
        Duration::from_secs(60),
        || {
            let s = stat(c, id);
            ((s == want).then_some(()), s)
        },
    )
}

/// Wait until `bjobs -p` gives job `id` the pending reason `reason`; its output.
fn wait_reason(c: &InProcessBatch, id: u64, reason: &str) -> Result<String> {
    wait_for(
        &format!("job {id}'s pending reason {reason:?}"),
        Duration::from_secs(30),
        || {
            let out = c
                .stdout_ok("bjobs", &["-p", &id.to_string()])
                .unwrap_or_default();
            (out.contains(reason).then(|| out.clone()), out)
        },
    )
}

#[test]
fn select_requirements_choose_hosts_and_what_no_host_has_pends_with_lsf_reason() -> Result<()> {
    let c = InProcessBatch::start("batch-resreq", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;

    // 100 TB of free memory (mem is in MB): no host has it.
    let big = c.bsub(
        &work,
        &["-o", "/dev/null", "-R", "select[mem>100000000]", "true"],
    )?;
    // What the host has (its LIM's maxmem and type): runs.
    let fits = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "-R",
            "select[maxmem>1 && type==any] order[r15s]",
            "true",
        ],
    )?;
    wait_stat(&c, fits, "DONE")?;
    let reason = wait_reason(&c, big, "Job's resource requirements not satisfied")?;
    assert!(reason.contains("PEND"), "{reason}");
    assert_eq!(stat(&c, big), "PEND");

    // Refused at submission, with LSF's message: bad syntax, an unknown resource.
    for bad in ["select[mem>>1]", "select[nosuchresource>1]"] {
        let out = c.run("bsub", &["-o", "/dev/null", "-R", bad, "true"])?;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "-R {bad} accepted");
        assert!(
            err.contains("Bad resource requirement syntax"),
            "-R {bad}: {err}"
        );
    }
    c.ok("bkill", &[&big.to_string()])?;

    // rusage[]: a running job's reservation leaves less for the next one. Each asks 60 %
    // of the host's available memory: the second waits with LSF's reason.
    let avail_mb = std::fs::read_to_string("/proc/meminfo")?
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(1024, |kb| kb / 1024);
    let ask = format!("rusage[mem={}MB]", avail_mb * 6 / 10);
    let first = c.bsub(&work, &["-o", "/dev/null", "-R", &ask, "sleep 300"])?;
    wait_stat(&c, first, "RUN")?;
    let second = c.bsub(&work, &["-o", "/dev/null", "-R", &ask, "true"])?;
    wait_reason(
        &c,
        second,
        "Job requirements for reserving resource (mem) not satisfied",
    )?;
    // bhosts -l shows the reservation under the host's load.
    let long = c.ok("bhosts", &["-l"])?;
    let reserved = long
        .lines()
        .find(|l| l.starts_with(" Reserved"))
        .unwrap_or_default();
    assert!(
        reserved.starts_with(" Reserved") && !reserved.trim_end().ends_with(" 0M"),
        "{long}"
    );
    // Once the first ends, its reservation goes and the second runs.
    c.ok("bkill", &[&first.to_string()])?;
    wait_stat(&c, second, "DONE")?;
    Ok(())
}

/// Issue 50, item 9: compound and alternative resource requirements through the real
/// commands. bsub takes them; the job runs with the requirement it used, which `bjobs -l`
/// shows ("Effective"); an alternative no host can have gives way to the next; a
/// malformed one is refused with LSF's message, and one merged with another `-R` too.
#[test]
fn issue_50_item_9_compound_and_alternative_requirements_run_and_bjobs_l_shows_the_one_used()
-> Result<()> {
    let c = InProcessBatch::start("batch-compound", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;

    let comp = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "-R",
            "1*{select[type==any]} + 1*{select[maxmem>1] rusage[mem=1]}",
            "sleep 300",
        ],
    )?;
    wait_stat(&c, comp, "RUN")?;
    let long = c.ok("bjobs", &["-l", &comp.to_string()])?;
    assert!(
        long.contains(
            "\n RESOURCE REQUIREMENT DETAILS:\n Combined: 1*{select[type==any]} + 1*{select[maxmem>1] rusage[mem=1]}\n Effective: 1*{select[type==any]} + 1*{select[maxmem>1] rusage[mem=1]}\n"
        ),
        "{long}"
    );
    // Two slots: one per term.
    let slots = c.ok(
        "bjobs",
        &["-o", "nalloc_slot", "-noheader", &comp.to_string()],
    )?;
    assert_eq!(slots.trim(), "2", "{long}");
    c.ok("bkill", &[&comp.to_string()])?;

    // 100 TB of memory weighs more but no host has it: the other alternative is used.
    let alt = c.bsub(
        &work,
        &[
            "-o",
            "/dev/null",
            "-R",
            "{select[mem>100000000]}@5 || {select[type==any]}",
            "true",
        ],
    )?;
    wait_stat(&c, alt, "DONE")?;
    let long = c.ok("bjobs", &["-l", &alt.to_string()])?;
    assert!(long.contains("\n Effective: select[type==any]\n"), "{long}");

    for (args, want) in [
        (
            vec!["-R", "2*{select[type==any]"],
            "Bad resource requirement syntax. Job not submitted.",
        ),
        (
            vec![
                "-R",
                "{select[type==any]} || {select[maxmem>1]}",
                "-R",
                "select[maxmem>1]",
            ],
            "cannot be combined with another -R",
        ),
    ] {
        let mut all = vec!["-o", "/dev/null"];
        all.extend(args);
        all.push("true");
        let out = c.run("bsub", &all)?;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: {err}");
    }
    Ok(())
}
