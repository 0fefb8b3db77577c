//! mbatchd in-process on a loopback address, with a real LIM and a fake sbatchd that
//! "runs" jobs by reporting them started and finished: submission, dispatch, reports,
//! kill, the event log, and a restart that replays lsb.events into the same state.

use basalt_proto::mbatchd as pb;
use basalt_proto::sbatchd as sb;
use basalt_testkit::{ClusterSpec, InProcessCluster, wait_for_async};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tonic::{Request, Response, Status};

#[derive(Clone)]
struct FakeSbd {
    config: Arc<basalt_config::Config>,
}

impl FakeSbd {
    fn report(&self, mut r: pb::JobReport) {
        let config = self.config.clone();
        tokio::spawn(async move {
            r.protocol = Some(basalt_proto::PROTOCOL);
            r.host = "hostA".into();
            for _ in 0..100 {
                if let Ok(mut c) =
                    basalt_runtime::mbatchd_channel(&config, "hostA", Duration::from_secs(2))
                    && c.report_job(r.clone()).await.is_ok()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }
}

fn job_ref(id: u64, idx: u32) -> Option<pb::JobRef> {
    Some(pb::JobRef {
        job_id: id,
        idx,
        has_idx: false,
    })
}

#[tonic::async_trait]
impl sb::sbatchd_server::Sbatchd for FakeSbd {
    async fn start_job(
        &self,
        request: Request<sb::StartJobRequest>,
    ) -> Result<Response<sb::StartJobReply>, Status> {
        let req = request.into_inner();
        let job = req.job.ok_or_else(|| Status::invalid_argument("no job"))?;
        assert!(
            !job.job_file.is_empty(),
            "the spooled job file travels with the job"
        );
        let pid = 1000 + job.job_id as u32;
        let base = pb::JobReport {
            id: job_ref(job.job_id, job.idx),
            attempt: job.attempt,
            epoch: req.epoch,
            ..Default::default()
        };
        self.report(pb::JobReport {
            seq: 1,
            kind: pb::ReportKind::Started as i32,
            pid,
            pgid: pid,
            ..base.clone()
        });
        if !job.command.contains("long") {
            let exit = if job.command.contains("exit 3") {
                768
            } else {
                0
            };
            let me = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                me.report(pb::JobReport {
                    seq: 2,
                    kind: pb::ReportKind::Finished as i32,
                    exit_status: exit,
                    utime: 0.25,
                    max_mem_kb: 2048,
                    ..base
                });
            });
        }
        Ok(Response::new(sb::StartJobReply { pid, pgid: pid }))
    }

    async fn signal_job(
        &self,
        request: Request<sb::SignalJobRequest>,
    ) -> Result<Response<sb::SignalJobReply>, Status> {
        let req = request.into_inner();
        if req.action == sb::SignalAction::Kill as i32 {
            self.report(pb::JobReport {
                id: job_ref(req.job_id, req.idx),
                attempt: req.attempt,
                epoch: req.epoch,
                seq: 10,
                kind: pb::ReportKind::Finished as i32,
                exit_status: 130 << 8,
                term_reason: req.term_reason,
                ..Default::default()
            });
        }
        Ok(Response::new(sb::SignalJobReply { found: true }))
    }

    async fn peek(
        &self,
        _request: Request<sb::PeekRequest>,
    ) -> Result<Response<sb::PeekReply>, Status> {
        Err(Status::unimplemented("fake"))
    }

    async fn status(
        &self,
        _request: Request<sb::StatusRequest>,
    ) -> Result<Response<sb::StatusReply>, Status> {
        Err(Status::unimplemented("fake"))
    }
}

struct Mbd {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn start_mbd(config: Arc<basalt_config::Config>) -> anyhow::Result<Mbd> {
    let addr = basalt_runtime::mbd_addr(&config, "hostA")?;
    let mut listener = None;
    for _ in 0..100 {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => {
                listener = Some(l);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    let listener = listener.ok_or_else(|| anyhow::anyhow!("cannot bind {addr}"))?;
    let (stop, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let r = basalt_mbatchd::run(config, "hostA", listener, async move {
            let _ = rx.await;
        })
        .await;
        if let Err(e) = r {
            eprintln!("mbatchd: {e}");
        }
    });
    Ok(Mbd { stop, task })
}

fn caller() -> Option<pb::Caller> {
    Some(pb::Caller {
        uid: 0,
        gid: 0,
        user: "root".into(),
        host: "hostA".into(),
    })
}

async fn all_jobs(config: &basalt_config::Config) -> Option<Vec<pb::JobInfo>> {
    let mut c = basalt_runtime::mbatchd_channel(config, "hostA", Duration::from_secs(2)).ok()?;
    let r = c
        .jobs(pb::JobsRequest {
            caller: caller(),
            user: "all".into(),
            states: u32::MAX,
            ..Default::default()
        })
        .await
        .ok()?;
    Some(r.into_inner().jobs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_dispatch_finish_kill_and_replay() -> anyhow::Result<()> {
    let lims = InProcessCluster::start("mbd-inproc", &ClusterSpec::new(1)).await?;
    lims.wait_master("hostA", Duration::from_secs(20)).await?;
    let envdir = lims.dir.path().join("conf");
    let config = Arc::new(
        basalt_config::load(&envdir)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .config,
    );
    let sbd_addr = basalt_runtime::sbd_addr(&config, "hostA")?;
    let fake = FakeSbd {
        config: config.clone(),
    };
    let sbd_listener = tokio::net::TcpListener::bind(sbd_addr).await?;
    tokio::spawn(basalt_runtime::serve(
        tonic::transport::Server::builder()
            .add_service(sb::sbatchd_server::SbatchdServer::new(fake)),
        sbd_listener,
        std::future::pending(),
    ));

    let mbd = start_mbd(config.clone()).await?;
    let mut client = wait_for_async("mbatchd to answer", Duration::from_secs(20), || {
        let config = config.clone();
        async move {
            match all_jobs(&config).await {
                Some(_) => (
                    basalt_runtime::mbatchd_channel(&config, "hostA", Duration::from_secs(5)).ok(),
                    String::new(),
                ),
                None => (None, "no answer".into()),
            }
        }
    })
    .await?;

    let submit = |command: &str, queue: &str| pb::SubmitRequest {
        protocol: Some(basalt_proto::PROTOCOL),
        caller: caller(),
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
    // The spooled job file exists as soon as the job is acknowledged.
    let info = config.logdir().join("info");
    assert_eq!(std::fs::read_dir(&info)?.count(), 20);

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
            caller: caller(),
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
    // Another user may not kill root's job (and finished jobs say so).
    let r = client
        .signal(pb::SignalRequest {
            caller: Some(pb::Caller {
                uid: 4242,
                gid: 4242,
                user: "mallory".into(),
                host: "hostA".into(),
            }),
            ids: vec![pb::JobRef {
                job_id: 2,
                idx: 0,
                has_idx: false,
            }],
            ..Default::default()
        })
        .await?
        .into_inner();
    assert_eq!(r.results[0].message, "User permission denied");

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
