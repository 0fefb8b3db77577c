//! mbatchd in-process on a loopback address, with a real LIM and a fake sbatchd that
//! "runs" jobs by reporting them started and finished: submission, dispatch, reports,
//! kill, the event log, and a restart that replays lsb.events into the same state.

mod common;

use basalt_proto::mbatchd as pb;
use basalt_proto::sbatchd as sb;
use basalt_testkit::wait_for_async;
use common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_and_dependencies_through_grpc() -> anyhow::Result<()> {
    let Setup {
        lims: _lims,
        config,
        fake,
        mbd,
        mut client,
    } = setup("mbd-arrays").await?;
    let r = client
        .submit(submission("true", "arr[1-10]%2", ""))
        .await?
        .into_inner();
    let id = r.job_id;
    // Waits for every element of the array, by the array's name.
    let after = client
        .submit(submission("true", "after", "done(arr)"))
        .await?
        .into_inner();
    // Refusals carry LSF's texts.
    for (name, dep, want) in [
        ("big[1-1001]", "", "Job array index too large"),
        ("bad[0-3]", "", "Job array index error"),
        ("x", "done(1", "Bad dependency condition syntax"),
        // A dependency on no job mbatchd knows (issue 50, item 7).
        ("x", "done(nosuchname)", "No matching job found"),
    ] {
        let e = client.submit(submission("true", name, dep)).await;
        assert_eq!(
            e.err().map(|s| s.message().to_string()).as_deref(),
            Some(want)
        );
    }
    // A condition that `after`'s end (DONE) makes impossible.
    let never = client
        .submit(submission("true", "never", "exit(after)"))
        .await?
        .into_inner();
    let jobs = wait_jobs(&config, "the array and its dependent to finish", |jobs| {
        jobs.iter()
            .filter(|j| j.job_id == id || j.job_id == after.job_id)
            .all(|j| j.state == 64)
            && jobs.iter().filter(|j| j.job_id == id).count() == 10
            && jobs.iter().any(|j| j.job_id == after.job_id)
    })
    .await?;
    let elems: Vec<&pb::JobInfo> = jobs.iter().filter(|j| j.job_id == id).collect();
    assert_eq!(
        elems.iter().map(|j| j.idx).collect::<Vec<_>>(),
        (1..=10).collect::<Vec<u32>>()
    );
    for j in &elems {
        assert_eq!(j.job_name, format!("arr[{}]", j.idx));
    }
    let never_row = jobs
        .iter()
        .find(|j| j.job_id == never.job_id)
        .ok_or_else(|| anyhow::anyhow!("job {} missing", never.job_id))?;
    assert_eq!(never_row.state, 1);
    assert_eq!(
        never_row
            .pend_reasons
            .iter()
            .map(|r| r.code)
            .collect::<Vec<_>>(),
        vec![basalt_core::job::pend::DEPEND_INVALID]
    );
    let (max, specs) = fake.seen(|s| (s.max_running, s.specs.clone()));
    assert!(max <= 2, "at most 2 elements at once, saw {max}");
    let arr_specs: Vec<&sb::JobSpec> = specs.iter().filter(|s| s.job_id == id).collect();
    assert_eq!(arr_specs.len(), 10);
    for s in &arr_specs {
        assert!(s.is_array);
        assert_eq!(s.job_name, "arr[1-10]%2");
        assert!(s.idx >= 1 && s.idx <= 10);
    }

    // A running array (hostA has 2 slots): kill one element, then the rest at once.
    let long = client
        .submit(submission("long sleep", "hold[1-3]", ""))
        .await?
        .into_inner();
    wait_jobs(&config, "2 long elements to run", |jobs| {
        jobs.iter()
            .filter(|j| j.job_id == long.job_id && j.state == 4 && j.pid != 0)
            .count()
            == 2
    })
    .await?;
    // The third element waits for a slot on hostA: a host-level pending reason, counted
    // unless the request asks for the hosts' names (bjobs -l).
    for reason_hosts in [false, true] {
        let third = |jobs: &[pb::JobInfo]| {
            jobs.iter()
                .find(|j| j.job_id == long.job_id && j.idx == 3)
                .map(|j| j.pend_reasons.clone())
        };
        let reasons = wait_for_async(
            "the third element's reasons",
            Duration::from_secs(20),
            || {
                let mut c = client.clone();
                async move {
                    let r = c
                        .jobs(pb::JobsRequest {
                            user: "all".into(),
                            reason_hosts,
                            ..Default::default()
                        })
                        .await
                        .map(|r| r.into_inner().jobs);
                    match r.as_deref().ok().and_then(third) {
                        Some(rs) if rs.iter().any(|r| r.num_hosts > 0) => (Some(rs), String::new()),
                        other => (None, format!("{other:?}")),
                    }
                }
            },
        )
        .await?;
        for r in reasons.iter().filter(|r| r.num_hosts > 0) {
            let want: Vec<String> = if reason_hosts {
                vec!["hostA".into()]
            } else {
                Vec::new()
            };
            assert_eq!((r.num_hosts, &r.hosts), (1, &want), "{r:?}");
        }
    }
    let kill = |ids: Vec<pb::JobRef>| pb::SignalRequest {
        ids,
        kind: pb::SignalKind::Kill as i32,
        ..Default::default()
    };
    let one = pb::JobRef {
        job_id: long.job_id,
        idx: 2,
        has_idx: true,
    };
    // A job report of unspecified kind is refused, not acknowledged as applied.
    let mut peer = basalt_runtime::mbatchd_peer_channel(
        &config,
        "hostA",
        Duration::from_secs(5),
        &daemon_auth(&config),
    )?;
    let bad = pb::JobReport {
        host: "hostA".into(),
        id: Some(one),
        attempt: 1,
        seq: 1_000_000,
        ..Default::default()
    };
    let e = peer
        .report_job(bad.clone())
        .await
        .expect_err("a report of unspecified kind is refused");
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    // In a ReportJobs call too; and a call carrying another host's report is refused
    // as a whole (nothing of it applied); an empty call is answered with no ack.
    let e = peer
        .report_jobs(pb::JobReports {
            reports: vec![bad.clone(), bad.clone()],
        })
        .await
        .expect_err("a batch with a report of unspecified kind is refused");
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    let other_host = pb::JobReport {
        host: "hostB".into(),
        kind: pb::ReportKind::Rusage as i32,
        ..bad.clone()
    };
    let e = peer
        .report_jobs(pb::JobReports {
            reports: vec![
                pb::JobReport {
                    kind: pb::ReportKind::Rusage as i32,
                    ..bad.clone()
                },
                other_host,
            ],
        })
        .await
        .expect_err("a batch with another host's report is refused");
    assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e:?}");
    let none = peer
        .report_jobs(pb::JobReports { reports: vec![] })
        .await?
        .into_inner();
    assert!(none.acks.is_empty(), "{none:?}");
    // On the report stream, a refused batch (a report of unspecified kind, another
    // host's report) is answered with no acknowledgement and the stream goes on; the
    // answers come in the order of the batches.
    // (Of a job mbatchd does not have: NO_JOB; the sequence numbers of the jobs that
    // run are not disturbed.)
    let rusage = pb::JobReport {
        kind: pb::ReportKind::Rusage as i32,
        id: Some(pb::JobRef {
            job_id: 999_999,
            idx: 0,
            has_idx: false,
        }),
        ..bad.clone()
    };
    let batches = vec![
        pb::JobReports {
            reports: vec![bad.clone(), bad.clone()],
        },
        pb::JobReports {
            reports: vec![
                rusage.clone(),
                pb::JobReport {
                    host: "hostB".into(),
                    ..rusage.clone()
                },
            ],
        },
        pb::JobReports { reports: vec![] },
        pb::JobReports {
            reports: vec![
                rusage.clone(),
                pb::JobReport {
                    seq: 1_000_001,
                    ..rusage
                },
            ],
        },
    ];
    let mut answers = peer
        .report_stream(tokio_stream::iter(batches))
        .await?
        .into_inner();
    let mut got = Vec::new();
    while let Some(a) = answers.message().await? {
        got.push(a.acks);
    }
    assert_eq!(
        got.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![0, 0, 0, 2],
        "{got:?}"
    );
    assert!(
        got[3]
            .iter()
            .all(|a| a.kind != pb::AckKind::Unspecified as i32),
        "{got:?}"
    );
    // A request without a kind is refused, not taken for a kill (nor is an unknown kind).
    for kind in [0, 99] {
        let e = client
            .signal(pb::SignalRequest {
                kind,
                ..kill(vec![one])
            })
            .await
            .expect_err("a signal request without a kind is refused");
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains("kind"), "{e:?}");
    }
    let r = client.signal(kill(vec![one])).await?.into_inner();
    assert_eq!(r.results.len(), 1);
    assert!(r.results[0].ok, "{r:?}");
    assert_eq!(r.results[0].id, Some(one));
    // Element 2 exits, element 3 takes its slot, element 1 runs on.
    wait_jobs(&config, "element 2 to exit and 3 to run", |jobs| {
        let st = |i: u32| {
            jobs.iter()
                .find(|j| j.job_id == long.job_id && j.idx == i)
                .map(|j| (j.state, j.pid != 0))
        };
        st(1) == Some((4, true)) && st(2).map(|s| s.0) == Some(32) && st(3) == Some((4, true))
    })
    .await?;
    let whole = pb::JobRef {
        job_id: long.job_id,
        idx: 0,
        has_idx: false,
    };
    let r = client.signal(kill(vec![whole])).await?.into_inner();
    assert_eq!(r.results.len(), 1, "a whole array is answered once: {r:?}");
    assert!(r.results[0].ok, "{r:?}");
    assert_eq!(r.results[0].id, Some(whole));
    let jobs = wait_jobs(&config, "the whole array to exit", |jobs| {
        jobs.iter()
            .filter(|j| j.job_id == long.job_id && j.state == 32)
            .count()
            == 3
    })
    .await?;
    for j in jobs.iter().filter(|j| j.job_id == long.job_id) {
        assert_eq!(j.term_reason, "TERM_OWNER");
    }

    // One JOB_NEW per submission, per-element records with idx.
    let mut new_names = Vec::new();
    let mut start_idx = Vec::new();
    for rec in basalt_eventlog::read_events(&config.logdir().join("lsb.events"))? {
        match rec? {
            basalt_eventlog::Record::JobNew(n) => new_names.push(n.job_name.clone()),
            basalt_eventlog::Record::JobStart(s) if s.job_id == id => start_idx.push(s.idx),
            basalt_eventlog::Record::JobStatus(s)
                if s.job_id == long.job_id && s.j_status == 32 =>
            {
                assert_eq!(s.term_reason, "TERM_OWNER", "logged with the element");
                assert!(s.idx >= 1);
            }
            _ => {}
        }
    }
    assert_eq!(
        new_names,
        vec!["arr[1-10]%2", "after", "never", "hold[1-3]"]
    );
    start_idx.sort_unstable();
    assert_eq!(start_idx, (1..=10).collect::<Vec<u32>>());
    let kinds = count_records(&config)?;
    assert_eq!(kinds.get("JOB_NEW"), Some(&4), "{kinds:?}");

    // A restart replays the one JOB_NEW into the same elements and states.
    let before = all_jobs(&config).await.unwrap_or_default();
    let _ = mbd.stop.send(());
    mbd.task.await?;
    let mbd2 = start_mbd(config.clone()).await?;
    let after_restart = wait_jobs(&config, "mbatchd to answer after restart", |j| {
        !j.is_empty()
    })
    .await?;
    assert_eq!(before, after_restart);
    let _ = mbd2.stop.send(());
    let _ = mbd2.task.await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_dispatch_finish_kill_and_replay() -> anyhow::Result<()> {
    let Setup {
        lims: _lims,
        config,
        fake: _,
        mbd,
        mut client,
    } = setup("mbd-inproc").await?;

    let submit = |command: &str, queue: &str| pb::SubmitRequest {
        submit_token: String::new(),
        job: Some(pb::JobSubmission {
            command: command.into(),
            queue: queue.into(),
            cwd: "/tmp".into(),
            env: vec!["PATH=/usr/bin:/bin".into(), "FOO=bar baz".into()],
            rlimits: vec![-1; 11],
            from_host: "hostA".into(),
            ..Default::default()
        }),
    };
    let mut ids = Vec::new();
    for i in 0..20 {
        let cmd = if i % 4 == 0 { "exit 3" } else { "true" };
        let r = client.submit(submit(cmd, "")).await?.into_inner();
        assert_eq!(r.queue, "normal");
        assert!(r.default_queue);
        ids.push(r.job_id);
    }
    assert_eq!(ids, (1..=20).collect::<Vec<u64>>());
    // The spooled job file exists as soon as the job is acknowledged (in the spool).
    assert_eq!(basalt_eventlog::JobSpool::list(&config.logdir())?.len(), 20);

    let bad = client.submit(submit("true", "nosuchqueue")).await;
    assert_eq!(
        bad.err().map(|s| s.message().to_string()).as_deref(),
        Some("Queue does not exist")
    );

    let done = wait_for_async("20 jobs to finish", Duration::from_secs(30), || {
        let config = config.clone();
        async move {
            let jobs = all_jobs(&config).await.unwrap_or_default();
            let fin = jobs
                .iter()
                .filter(|j| j.state == 32 || j.state == 64)
                .count();
            (
                (fin == 20).then_some(jobs.clone()),
                format!("{fin} finished"),
            )
        }
    })
    .await?;
    // Each dispatched job's file has a copy in info/ for LSF tools.
    let info = config.logdir().join(basalt_eventlog::INFO_DIR);
    wait_for_async(
        "a copy of each job file in info/",
        Duration::from_secs(10),
        || {
            let info = info.clone();
            async move {
                let n = std::fs::read_dir(&info).map_or(0, |d| d.count());
                (
                    (n == 20).then_some(()),
                    format!("{n} in {}", info.display()),
                )
            }
        },
    )
    .await?;
    for j in &done {
        let want = if (j.job_id - 1) % 4 == 0 { 32 } else { 64 };
        assert_eq!(j.state, want, "job {}", j.job_id);
        assert_eq!(j.exec_hosts, vec!["hostA".to_string()]);
        if want == 32 {
            assert_eq!(j.exit_code, 3);
        }
    }

    // A long job is killed: EXIT with TERM_OWNER.
    let long = client
        .submit(submit("long sleep", "priority"))
        .await?
        .into_inner();
    wait_for_async("the long job to run", Duration::from_secs(20), || {
        let config = config.clone();
        async move {
            let jobs = all_jobs(&config).await.unwrap_or_default();
            let j = jobs.iter().find(|j| j.job_id == long.job_id).cloned();
            (
                j.as_ref()
                    .filter(|j| j.state == 4 && j.pid != 0)
                    .map(|_| ()),
                format!("{j:?}"),
            )
        }
    })
    .await?;
    let r = client
        .signal(pb::SignalRequest {
            ids: vec![pb::JobRef {
                job_id: long.job_id,
                idx: 0,
                has_idx: false,
            }],
            kind: pb::SignalKind::Kill as i32,
            ..Default::default()
        })
        .await?
        .into_inner();
    assert!(r.results[0].ok, "{r:?}");
    let killed = wait_for_async("the long job to exit", Duration::from_secs(20), || {
        let config = config.clone();
        async move {
            let jobs = all_jobs(&config).await.unwrap_or_default();
            let j = jobs.iter().find(|j| j.job_id == long.job_id).cloned();
            (j.clone().filter(|j| j.state == 32), format!("{j:?}"))
        }
    })
    .await?;
    assert_eq!(killed.term_reason, "TERM_OWNER");
    // Another user may not kill the job (and finished jobs say so): the credential says
    // mallory.
    let r = client_as(&config, 4242, "mallory")?
        .signal(pb::SignalRequest {
            ids: vec![pb::JobRef {
                job_id: 2,
                idx: 0,
                has_idx: false,
            }],
            kind: pb::SignalKind::Kill as i32,
            ..Default::default()
        })
        .await;
    match r {
        // A root cluster: mbatchd hears mallory and refuses the job to her.
        Ok(r) => assert_eq!(r.into_inner().results[0].message, "User permission denied"),
        // A personal cluster (tests not run as root): mallory may not ask at all.
        Err(s) => assert_eq!(s.message(), "User permission denied"),
    }
    // Nor does a request that claims to come from root in the `caller` field requests had
    // before protocol 2.0 (now reserved): the credential says mallory, so `badmin
    // reconfig` is refused (issue 18: identity only from the credential).
    let e = legacy_root_reconfig(&config, 4242, "mallory")
        .await
        .expect_err("mallory is no administrator");
    assert_eq!(e.message(), "User permission denied");

    // Restart: replay ends in the same state.
    let before = all_jobs(&config).await.unwrap_or_default();
    let _ = mbd.stop.send(());
    mbd.task.await?;
    let mbd2 = start_mbd(config.clone()).await?;
    let after = wait_for_async(
        "mbatchd to answer after restart",
        Duration::from_secs(20),
        || {
            let config = config.clone();
            async move {
                let j = all_jobs(&config).await;
                (j.clone().filter(|j| !j.is_empty()), format!("{j:?}"))
            }
        },
    )
    .await?;
    assert_eq!(before, after);

    // The event log has what happened, in LSF's format.
    let reader = basalt_eventlog::read_events(&config.logdir().join("lsb.events"))?;
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for rec in reader {
        *kinds.entry(rec?.kind().to_string()).or_default() += 1;
    }
    assert_eq!(kinds.get("JOB_NEW"), Some(&21), "{kinds:?}");
    assert_eq!(kinds.get("JOB_START"), Some(&21), "{kinds:?}");
    assert_eq!(kinds.get("MBD_START"), Some(&2), "{kinds:?}");
    assert!(kinds.contains_key("JOB_SIGNAL"), "{kinds:?}");
    let acct = basalt_eventlog::read_acct(&config.logdir().join("lsb.acct"))?;
    assert_eq!(acct.count(), 21);
    let _ = mbd2.stop.send(());
    let _ = mbd2.task.await;
    Ok(())
}

/// The `Caller` message requests carried before protocol 2.0.
#[derive(Clone, PartialEq, prost::Message)]
struct LegacyCaller {
    #[prost(uint32, tag = "1")]
    uid: u32,
    #[prost(uint32, tag = "2")]
    gid: u32,
    #[prost(string, tag = "3")]
    user: String,
    #[prost(string, tag = "4")]
    host: String,
}

/// A `ReconfigRequest` as an old client encoded it: field 1 was `Caller caller`.
#[derive(Clone, PartialEq, prost::Message)]
struct LegacyReconfigRequest {
    #[prost(message, optional, tag = "1")]
    caller: Option<LegacyCaller>,
    #[prost(bool, tag = "2")]
    restart: bool,
}

/// `badmin reconfig` sent by `user` (its credential) in a request whose old `caller`
/// field claims root.
async fn legacy_root_reconfig(
    config: &basalt_config::Config,
    uid: u32,
    user: &str,
) -> Result<pb::CtlReply, tonic::Status> {
    let auth = auth_as(config, uid, user).map_err(|e| tonic::Status::internal(e.to_string()))?;
    let addr = basalt_runtime::mbd_addr(config, "hostA")
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    let ch = basalt_runtime::auth_channel(addr, "hostA", Duration::from_secs(5), &auth)
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    let mut g = tonic::client::Grpc::new(ch);
    g.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let req = LegacyReconfigRequest {
        caller: Some(LegacyCaller {
            uid: 0,
            gid: 0,
            user: "root".into(),
            host: "hostA".into(),
        }),
        restart: false,
    };
    let path =
        tonic::codegen::http::uri::PathAndQuery::from_static("/basalt.mbatchd.v1.Mbatchd/Reconfig");
    g.unary(
        tonic::Request::new(req),
        path,
        tonic_prost::ProstCodec::default(),
    )
    .await
    .map(|r| r.into_inner())
}
