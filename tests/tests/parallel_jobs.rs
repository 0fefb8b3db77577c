//! Parallel jobs, slot reservation and backfill on a 3-host loopback cluster (issue 22):
//! a 4-slot job across two hosts sees LSF's variables (`LSB_HOSTS`, `LSB_MCPU_HOSTS`,
//! `LSB_DJOB_NUMPROC`) and starts a `blaunch` task per slot on both hosts; a queue with
//! `SLOT_RESERVE` and `BACKFILL`: a job needing every slot reserves the free one
//! (`bhosts` RSV, `bjobs -l`, `bslots` its window), a short job backfills the reserved slot and is done
//! before the big job starts, which then gets every slot. The daemons run in the test
//! process (`InProcessBatch`, the built `res` as RES worker); the commands are the real
//! binaries.

use anyhow::{Context as _, Result};
use basalt_testkit::jobs::{wait_finished, wait_state};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for, work_dir};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

/// bhosts' MAX and RSV columns of every host.
fn max_and_rsv(c: &InProcessBatch) -> Result<Vec<(u32, u32)>> {
    let out = c.ok("bhosts", &[])?;
    out.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| -> Result<u32> {
                f.get(i)
                    .and_then(|v| v.parse().ok())
                    .with_context(|| format!("column {i} of {l:?}"))
            };
            Ok((n(3)?, n(8)?))
        })
        .collect()
}

#[test]
fn parallel_jobs_reserve_slots_and_short_jobs_backfill_them() -> Result<()> {
    let c = InProcessBatch::start("parallel", &ClusterSpec::new(3), "")?;
    let work = work_dir(c.dir.path())?;
    let path = c.path_with_commands();

    // A 4-slot job, two slots a host: its variables, and a blaunch task per slot.
    let out = work.join("par.out");
    let o = c
        .command("bsub")
        .env("PATH", &path)
        .current_dir(&work)
        .args([
            "-K",
            "-n",
            "4",
            "-R",
            "span[ptile=2]",
            "-o",
            &out.to_string_lossy(),
            "echo \"H=$LSB_HOSTS\"; echo \"M=$LSB_MCPU_HOSTS\"; echo \"N=$LSB_DJOB_NUMPROC\"; \
             blaunch sh -c 'echo task'",
        ])
        .output()?;
    let job_out = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{job_out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let var = |k: &str| {
        job_out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(str::to_owned)
            .unwrap_or_default()
    };
    let hosts: Vec<String> = var("H").split_whitespace().map(str::to_owned).collect();
    assert_eq!(hosts.len(), 4, "{job_out}");
    let mut distinct = hosts.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "{job_out}");
    assert_eq!(
        var("M"),
        format!("{} 2 {} 2", distinct[0], distinct[1]),
        "{job_out}"
    );
    assert_eq!(var("N"), "4", "{job_out}");
    assert_eq!(
        job_out.lines().filter(|l| *l == "task").count(),
        4,
        "{job_out}"
    );

    // A queue that reserves slots for parallel jobs and backfills them.
    c.add_queues(
        "\nBegin Queue\nQUEUE_NAME = par\nPRIORITY = 50\n\
         SLOT_RESERVE = MAX_RESERVE_TIME[100]\nBACKFILL = Y\nEnd Queue\n",
    )?;
    let slots: u32 = max_and_rsv(&c)?.iter().map(|(m, _)| m).sum();

    // Every slot but one taken by jobs that run 10 s within a 2-minute run limit.
    let mut fillers = Vec::new();
    for _ in 1..slots {
        fillers.push(c.bsub(&work, &["-q", "par", "-W", "2", "sleep", "10"])?);
    }
    for id in &fillers {
        wait_state(&c, *id, "RUN", LONG)?;
    }
    // The job needing every slot reserves the free one.
    let n = slots.to_string();
    let big = c.bsub(&work, &["-q", "par", "-n", &n, "-o", "/dev/null", "true"])?;
    wait_for("the free slot to be reserved", LONG, || {
        match max_and_rsv(&c) {
            Ok(v) => {
                let rsv: u32 = v.iter().map(|(_, r)| r).sum();
                ((rsv == 1).then_some(()), format!("{v:?}"))
            }
            Err(e) => (None, e.to_string()),
        }
    })?;
    let long = c.ok("bjobs", &["-l", &big.to_string()])?;
    assert!(
        long.replace("\n                     ", "")
            .contains("Reserved <1> job slot on host <"),
        "{long}"
    );
    // bslots: that slot is there for a job of at most a minute and some seconds (the
    // fillers' limits end within two minutes of their start); not for a job of two.
    let slots_out = c.ok("bslots", &[])?;
    let lines: Vec<&str> = slots_out.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"SLOTS          RUNTIME"),
        "{slots_out}"
    );
    let window: Vec<&str> = lines
        .get(1)
        .map_or(vec![], |l| l.split_whitespace().collect());
    assert!(
        lines.len() == 2
            && window.len() == 5
            && window[0] == "1"
            && window[1] == "1"
            && window[2] == "minutes"
            && window[4] == "seconds",
        "{slots_out}"
    );
    let long = c.ok("bslots", &["-l"])?;
    assert!(long.contains("SLOTS: 1\nRUNTIME: 1 minutes "), "{long}");
    assert!(long.contains("HOSTS: 1*"), "{long}");
    // Nothing for a job of two minutes, or on hosts -R does not select. (balsam runs
    // `bslots -R"select[...]"`, quotes included, and looks for "No backfill window
    // meets" when bslots fails.)
    for args in [&["-W", "2"][..], &["-R\"select[hname==nosuch]\""][..]] {
        let o = c.run("bslots", args)?;
        assert_eq!(o.status.code(), Some(255), "{args:?} {o:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "No backfill window meets the specified requirements\n"
        );
    }
    // A bad -R is an error.
    let o = c.run("bslots", &["-R", "select[(((]"])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("Bad resource requirement syntax"),
        "{o:?}"
    );
    // A job of at most a minute ends before the fillers' run limits let the big job
    // start: it backfills the reserved slot, and is done while the big job waits.
    let done = work.join("backfilled");
    let short = c.bsub(
        &work,
        &[
            "-q",
            "par",
            "-W",
            "1",
            "-o",
            "/dev/null",
            &format!("touch {}", done.display()),
        ],
    )?;
    wait_finished(&c, &[short], LONG)?;
    assert!(done.exists());
    let rows = basalt_testkit::jobs::jobs(&c)?;
    assert_eq!(rows[&big].stat, "PEND", "{rows:?}");
    assert!(fillers.iter().all(|f| rows[f].stat == "RUN"), "{rows:?}");
    // The fillers end: the big job gets every slot.
    let rows = wait_finished(&c, &[big], LONG)?;
    assert_eq!(rows[&big].stat, "DONE", "{rows:?}");
    let long = c.ok("bjobs", &["-l", &big.to_string()])?;
    assert!(
        long.replace("\n                     ", "")
            .contains(&format!("Started {n} Task(s) on Host(s)")),
        "{long}"
    );
    Ok(())
}
