//! Issue 30 item 9a through mbatchd: a `bsub -n 2,8` job on a host with 4 free slots
//! gets all 4 — the JOB_START record names them (numExHosts/execHosts), sbatchd is told
//! 4 processors on `hostA` x4 (so LSB_DJOB_NUMPROC=4, LSB_MCPU_HOSTS="hostA 4") and bjobs
//! lists the 4 slots.

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_min_max_job_gets_every_free_slot_up_to_max() -> anyhow::Result<()> {
    let Setup {
        lims: _lims,
        config,
        fake,
        mbd: _mbd,
        mut client,
    } = setup_with("mbd-minmax", |envdir| {
        let path = envdir.join("lsbatch/basalt/configdir/lsb.hosts");
        let text = std::fs::read_to_string(&path)?;
        // Four slots on hostA whatever its CPU count.
        let text = text.replacen("default     !", "default     4", 1);
        std::fs::write(&path, text)?;
        Ok(())
    })
    .await?;
    let mut req = submission("long mpirun", "mpi", "");
    if let Some(j) = req.job.as_mut() {
        j.num_processors = 2;
        j.max_processors = 8;
    }
    let id = client.submit(req).await?.into_inner().job_id;
    let jobs = wait_jobs(&config, "the job to run", |jobs| {
        jobs.iter().any(|j| j.job_id == id && j.state == 4)
    })
    .await?;
    let job = jobs
        .iter()
        .find(|j| j.job_id == id)
        .ok_or_else(|| anyhow::anyhow!("job {id} not listed"))?;
    assert_eq!(job.exec_hosts, vec!["hostA"; 4], "bjobs shows the slots");
    // RUN shows from the JOB_START commit; the dispatch reaches sbatchd just after.
    let spec = basalt_testkit::wait_for_async(
        "the dispatch to reach sbatchd",
        std::time::Duration::from_secs(30),
        || {
            let found = fake.seen(|s| s.specs.iter().find(|s| s.job_id == id).cloned());
            async move { (found, format!("no JobSpec for job {id} yet")) }
        },
    )
    .await?;
    assert_eq!(spec.num_processors, 4, "LSB_DJOB_NUMPROC");
    assert_eq!(spec.exec_hosts, vec!["hostA"; 4], "LSB_MCPU_HOSTS");
    assert_eq!(spec.max_processors, 8);
    let reader = basalt_eventlog::read_events(&config.logdir().join("lsb.events"))?;
    let mut started = Vec::new();
    for rec in reader {
        if let basalt_eventlog::Record::JobStart(s) = rec? {
            started.push((s.job_id, s.exec_hosts));
        }
    }
    assert_eq!(started, vec![(id, vec!["hostA".to_string(); 4])]);
    Ok(())
}
