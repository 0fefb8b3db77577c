//! Issue 27, the first slice: `bmig` of rerunnable jobs (seed 001, "Job migration") on a
//! 2-host cluster whose daemons run in the test process (`InProcessBatch`). A
//! rerunnable job running on hostA, migrated with `bmig -m hostB`, is killed and runs
//! again on hostB with the same job id; `bhist -l` shows the migration; a job that is
//! not rerunnable is refused with LSF's message. (Checkpointing comes later.)

use anyhow::Result;
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, output_text, wait_for};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

#[test]
fn bmig_reruns_a_rerunnable_job_on_the_asked_host_with_its_job_id() -> Result<()> {
    let c = InProcessBatch::start("migration", &ClusterSpec::new(2), "MBD_SLEEP_TIME = 1")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let runs = work.join("runs");
    // Each run appends the host it runs on, then waits.
    let script = format!(
        "echo $(hostname -s 2>/dev/null) $LSB_HOSTS >> {}; sleep 600",
        runs.display()
    );
    let id = c.bsub(&work, &["-r", "-m", "hostA", "-o", "/dev/null", &script])?;
    let row = wait_state(&c, id, "RUN", LONG)?;
    assert!(row.exec_host.contains("hostA"), "{row:?}");
    wait_for("the first run", LONG, || {
        let n = std::fs::read_to_string(&runs).unwrap_or_default();
        ((n.lines().count() == 1).then_some(()), n)
    })?;

    let out = c.ok("bmig", &["-m", "hostB", &id.to_string()])?;
    assert_eq!(out, format!("Job <{id}> is being migrated\n"));
    let row = wait_for("the job to run again on hostB", LONG, || match jobs(&c) {
        Ok(m) => {
            let r = m.get(&id).cloned();
            (
                r.clone()
                    .filter(|r| r.stat == "RUN" && r.exec_host.contains("hostB")),
                format!("{r:?}"),
            )
        }
        Err(e) => (None, e.to_string()),
    })?;
    assert!(row.exec_host.contains("hostB"), "{row:?}");
    wait_for("the second run", LONG, || {
        let n = std::fs::read_to_string(&runs).unwrap_or_default();
        ((n.lines().count() == 2).then_some(()), n)
    })?;
    let lines: Vec<String> = std::fs::read_to_string(&runs)?
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(lines[1].contains("hostB"), "{lines:?}");
    let hist = c
        .ok("bhist", &["-l", &id.to_string()])?
        .replace("\n                     ", "");
    assert!(
        hist.contains("Migration requested by user or administrator <")
            && hist.contains("Specified Hosts <hostB>"),
        "{hist}"
    );

    // Not rerunnable: LSF's message, exit 255.
    let plain = c.bsub(&work, &["-o", "/dev/null", "sleep 600"])?;
    wait_state(&c, plain, "RUN", LONG)?;
    let o = c.run("bmig", &[&plain.to_string()])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&format!("Job <{plain}>: Job is not checkpointable")),
        "{}",
        output_text(&o)
    );
    c.ok("bkill", &[&id.to_string(), &plain.to_string()])?;
    Ok(())
}
