//! lsb.events switching on real processes (event-log.md §6): with `CLEAN_PERIOD = 1` and
//! `MAX_JOB_NUM = 3`, cleaned jobs make mbatchd switch the log; the history moves to
//! `lsb.events.1`, `lsb.events.index` names its jobs, `bhist` still shows a switched-out
//! job, the new lsb.events carries only the job still running, and an mbatchd killed
//! afterwards comes back from it with the running job and without reusing an id.

use anyhow::{Result, anyhow};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, wait_for};
use std::time::Duration;

fn stat(c: &ProcessCluster, id: u64) -> Option<String> {
    let out = c.stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])?;
    out.lines().next().map(|l| l.trim().to_string())
}

#[test]
fn cleaned_jobs_switch_the_log_and_bhist_still_finds_them() -> Result<()> {
    let mut c = ProcessCluster::start_batch(
        "log-switch",
        &ClusterSpec::new(1),
        "CLEAN_PERIOD = 1\nMAX_JOB_NUM = 3",
    )?;
    let logdir = c.dir.path().join("work/basalt/logdir");
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;

    let long = c.bsub(&work, &["-J", "stays", "sleep 600"])?;
    let mut short = Vec::new();
    for i in 0..4 {
        short.push(c.bsub(&work, &["-J", &format!("short{i}"), "exit 3"])?);
    }
    wait_for("the long job to run", Duration::from_secs(60), || {
        let s = stat(&c, long);
        (
            s.as_deref().filter(|s| *s == "RUN").map(|_| ()),
            format!("{s:?}"),
        )
    })?;

    // The short jobs finish, are cleaned a second later, and the third clean switches.
    // (lsb.events.1 appears first; the new lsb.events, ending with LOG_SWITCH, replaces
    // the old one last.)
    let one = logdir.join("lsb.events.1");
    let events = logdir.join("lsb.events");
    wait_for("lsb.events to be switched", Duration::from_secs(90), || {
        let text = std::fs::read_to_string(&events).unwrap_or_default();
        let done = one.exists() && text.contains("\"LOG_SWITCH\"");
        (
            done.then_some(()),
            format!("lsb.events.1 exists: {}", one.exists()),
        )
    })?;

    let old = std::fs::read_to_string(&one)?;
    assert!(old.starts_with('#'), "lsb.events.1 has a #<time> header");
    assert!(
        old.contains("\"JOB_NEW\" \"10.1\"") && old.contains("\"JOB_CLEAN\""),
        "the history moved to lsb.events.1"
    );
    let current = std::fs::read_to_string(logdir.join("lsb.events"))?;
    let offset: usize = current
        .lines()
        .next()
        .and_then(|h| h.trim_start_matches('#').trim().parse().ok())
        .ok_or_else(|| anyhow!("no header offset"))?;
    let carried = &current[..offset.min(current.len())];
    assert!(
        carried.contains("\"JOB_NEW\" \"10.1\""),
        "the running job is carried over:\n{current}"
    );
    let new_ids: Vec<u64> = carried
        .lines()
        .filter(|l| l.starts_with("\"JOB_NEW\""))
        .filter_map(|l| l.split(' ').nth(3).and_then(|v| v.parse().ok()))
        .collect();
    assert!(new_ids.contains(&long), "{new_ids:?}");
    // Cleaned jobs are carried only as remembered end states for dependencies on them
    // (JOB_NEW, the final JOB_STATUS, JOB_CLEAN), and are cleaned again on replay. A short
    // job that ended less than CLEAN_PERIOD before the switch is not cleaned yet and is
    // carried whole, ending in its final JOB_STATUS (EXIT). No carried job but the long
    // one is still running.
    let carried_fields: Vec<Vec<String>> = carried.lines().map(event_fields).collect();
    for id in new_ids.iter().filter(|&&id| id != long) {
        let id = id.to_string();
        let ended = carried_fields.iter().any(|f| {
            f.get(3) == Some(&id)
                && match f.first().map(String::as_str) {
                    Some("JOB_CLEAN") => true,
                    // EXIT (32) or DONE (64).
                    Some("JOB_STATUS") => {
                        matches!(f.get(4).map(String::as_str), Some("32" | "64"))
                    }
                    _ => false,
                }
        });
        assert!(ended, "job {id} is carried as a live job:\n{carried}");
    }
    assert!(current.contains("\"LOG_SWITCH\""), "{current}");

    // mbatchd brings lsb.events.index up to date right after the new lsb.events is in
    // place (readers that find no index scan every file), so it may lag the switch a bit.
    let index_file = logdir.join("lsb.events.index");
    let index = wait_for(
        &format!("lsb.events.index to name job {}", short[0]),
        Duration::from_secs(30),
        || {
            let text = std::fs::read_to_string(&index_file).unwrap_or_default();
            let names = text.split_whitespace().any(|w| w == short[0].to_string());
            (names.then(|| text.clone()), text)
        },
    )?;
    assert!(index.starts_with("#LSF_JOBID_INDEX_FILE"), "{index}");

    // bhist of a switched-out job.
    let o = c.run("bhist", &["-l", &short[0].to_string()])?;
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "bhist: {text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains(&format!("Job <{}>", short[0])), "{text}");
    assert!(text.contains("Exited with exit code 3"), "{text}");

    // An mbatchd killed now replays the switched log: the long job is still there and
    // running, and ids go on.
    assert!(
        c.kill9_pids_of("mbatchd", "hostA") > 0,
        "no mbatchd to kill"
    );
    wait_for(
        "the restarted mbatchd to show the long job",
        Duration::from_secs(60),
        || {
            let s = stat(&c, long);
            (
                s.as_deref().filter(|s| *s == "RUN").map(|_| ()),
                format!("{s:?}"),
            )
        },
    )?;
    let next = c.bsub(&work, &["-J", "after", "true"])?;
    assert!(
        next > *short.iter().max().unwrap_or(&long),
        "job id {next} reused"
    );
    let o = c.run("bkill", &[&long.to_string()])?;
    assert!(o.status.success());
    let _ = c.kill9_daemon("sbatchd", "hostA");
    Ok(())
}
