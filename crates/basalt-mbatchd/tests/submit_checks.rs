//! Issue 30 item 9c through mbatchd's gRPC service: `bsub -app` of a profile
//! lsb.applications does not define and `bsub -G` of a group lsb.users does not define, or
//! one the user is not in, are refused with LSF's messages before anything is logged.

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_applications_and_user_groups_are_refused() -> anyhow::Result<()> {
    let Setup {
        lims: _lims,
        config,
        fake: _fake,
        mbd: _mbd,
        mut client,
    } = setup_with("mbd-appgrp", |envdir| {
        let dir = envdir.join("lsbatch/basalt/configdir");
        std::fs::write(
            dir.join("lsb.applications"),
            "Begin Application\nNAME = fluent\nDESCRIPTION = CFD\nEnd Application\n",
        )?;
        std::fs::write(
            dir.join("lsb.users"),
            "Begin UserGroup\nGROUP_NAME   GROUP_MEMBER\neveryone     (all)\n\
             outsiders    (zz_nobody1 zz_nobody2)\nEnd UserGroup\n",
        )?;
        Ok(())
    })
    .await?;
    let with = |app: &str, group: &str| {
        let mut s = submission("true", "j", "");
        if let Some(j) = s.job.as_mut() {
            j.app = app.into();
            j.user_group = group.into();
        }
        s
    };
    let e = client
        .submit(with("cfx", ""))
        .await
        .expect_err("an application lsb.applications does not define");
    assert_eq!(e.message(), "Application profile does not exist");
    let e = client
        .submit(with("", "chemistry"))
        .await
        .expect_err("a group lsb.users does not define");
    assert_eq!(e.message(), "Bad user group name");
    let e = client
        .submit(with("", "outsiders"))
        .await
        .expect_err("a group the user is not in");
    assert_eq!(e.message(), "User not in the specified user group");
    // Nothing refused reached the event log.
    let job_new = || -> anyhow::Result<usize> {
        Ok(count_records(&config)?.get("JOB_NEW").copied().unwrap_or(0))
    };
    assert_eq!(job_new()?, 0);

    let ok = client
        .submit(with("fluent", "everyone"))
        .await?
        .into_inner()
        .job_id;
    let jobs = all_jobs(&config).await.unwrap_or_default();
    let job = jobs.iter().find(|j| j.job_id == ok);
    assert_eq!(job.map(|j| j.user_group.as_str()), Some("everyone"));
    assert_eq!(job_new()?, 1);
    Ok(())
}
