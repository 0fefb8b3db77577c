//! Issue 30 item 5 through mbatchd's gRPC service: a queue's RUNLIMIT/MEMLIMIT reach the
//! sbatchd of a job that set none (MEMLIMIT in LSF_UNIT_FOR_LIMITS, MB here) (so sbatchd enforces them like job-level limits), a
//! job's own limit over the queue's maximum is refused, and `bsub -t` travels with the job.

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_limits_and_termination_time_reach_sbatchd() -> anyhow::Result<()> {
    let Setup {
        lims: _lims,
        config,
        fake,
        mbd: _mbd,
        mut client,
    } = setup_with("mbd-qlimits", |envdir| {
        let path = envdir.join("lsbatch/basalt/configdir/lsb.queues");
        let text = std::fs::read_to_string(&path)?;
        let text = text.replacen(
            "QUEUE_NAME   = normal\n",
            "QUEUE_NAME   = normal\nRUNLIMIT     = 10 60\nMEMLIMIT     = 4096\n",
            1,
        );
        std::fs::write(&path, text)?;
        Ok(())
    })
    .await?;
    // Over the queue's maximum run limit (60 minutes): refused before anything is logged.
    let mut over = submission("true", "over", "");
    if let Some(j) = over.job.as_mut() {
        j.rlimits[9] = 61 * 60;
    }
    let e = client
        .submit(over)
        .await
        .expect_err("over the queue's limit");
    assert_eq!(e.message(), "Cannot exceed queue's hard limit(s)");

    let mut own = submission("true", "own", "");
    if let Some(j) = own.job.as_mut() {
        j.rlimits[9] = 1200;
        j.term_time = 2_000_000_000;
    }
    let own = client.submit(own).await?.into_inner().job_id;
    let plain = client
        .submit(submission("true", "plain", ""))
        .await?
        .into_inner()
        .job_id;
    wait_jobs(&config, "both jobs to finish", |jobs| {
        jobs.iter()
            .filter(|j| j.job_id == own || j.job_id == plain)
            .filter(|j| j.state == 64)
            .count()
            == 2
    })
    .await?;
    let specs = fake.seen(|s| s.specs.clone());
    let spec = |id: u64| {
        specs
            .iter()
            .find(|s| s.job_id == id)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no JobSpec for job {id}"))
    };
    let own = spec(own)?;
    assert_eq!((own.rlimits[9], own.rlimits[5]), (1200, 4096 * 1024));
    assert_eq!(own.term_time, 2_000_000_000);
    let plain = spec(plain)?;
    assert_eq!((plain.rlimits[9], plain.rlimits[5]), (600, 4096 * 1024));
    assert_eq!(plain.term_time, 0);
    Ok(())
}
