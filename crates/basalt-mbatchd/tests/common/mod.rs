//! The shared harness of mbatchd's in-process tests: a real LIM, a fake sbatchd that
//! "runs" jobs by reporting them started and finished (a command containing `long` keeps
//! running), and mbatchd itself, all in the test process on a fresh loopback subnet.
#![allow(dead_code)]

use basalt_proto::mbatchd as pb;
use basalt_proto::sbatchd as sb;
use basalt_testkit::{ClusterSpec, InProcessCluster, wait_for_async};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tonic::{Request, Response, Status};

/// What the fake sbatchd saw: elements running now, the most at once, each JobSpec.
#[derive(Default)]
pub struct Seen {
    pub running: u32,
    pub max_running: u32,
    pub specs: Vec<sb::JobSpec>,
    /// (job id, index) -> attempt of the jobs this fake sbatchd has and has not ended.
    pub live: std::collections::BTreeMap<(u64, u32), u32>,
}

#[derive(Clone)]
pub struct FakeSbd {
    config: Arc<basalt_config::Config>,
    seen: Arc<std::sync::Mutex<Seen>>,
}

impl FakeSbd {
    pub fn seen<T>(&self, f: impl FnOnce(&mut Seen) -> T) -> T {
        let mut g = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }
}

impl FakeSbd {
    /// A start order: the job "runs" (reported started, and finished 100 ms later
    /// unless its command says `long`).
    fn start(&self, req: sb::StartJobRequest) -> Result<sb::StartJobReply, Status> {
        let job = req.job.ok_or_else(|| Status::invalid_argument("no job"))?;
        assert!(
            !job.job_file.is_empty(),
            "the spooled job file travels with the job"
        );
        let pid = 1000 + job.job_id as u32 * 100 + job.idx;
        self.seen(|s| {
            s.live.insert((job.job_id, job.idx), job.attempt);
            s.running += 1;
            s.max_running = s.max_running.max(s.running);
            s.specs.push(sb::JobSpec {
                job_file: Vec::new(),
                ..job.clone()
            });
        });
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
                me.seen(|s| {
                    s.running -= 1;
                    s.live.remove(&(job.job_id, job.idx));
                });
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
        Ok(sb::StartJobReply {
            pid,
            pgid: pid,
            ..Default::default()
        })
    }

    fn report(&self, mut r: pb::JobReport) {
        let config = self.config.clone();
        tokio::spawn(async move {
            r.host = "hostA".into();
            for _ in 0..100 {
                if let Ok(mut c) = basalt_runtime::mbatchd_peer_channel(
                    &config,
                    "hostA",
                    Duration::from_secs(2),
                    &daemon_auth(&config),
                ) && c.report_job(r.clone()).await.is_ok()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }
}

pub fn job_ref(id: u64, idx: u32) -> Option<pb::JobRef> {
    Some(pb::JobRef {
        job_id: id,
        idx,
        has_idx: false,
    })
}

#[tonic::async_trait]
impl sb::sbatchd_peer_server::SbatchdPeer for FakeSbd {
    async fn start_job(
        &self,
        request: Request<sb::StartJobRequest>,
    ) -> Result<Response<sb::StartJobReply>, Status> {
        self.start(request.into_inner()).map(Response::new)
    }

    type StartStreamStream =
        tokio_stream::wrappers::UnboundedReceiverStream<Result<sb::StartJobReply, Status>>;

    /// Each order answered as StartJob would, by its tag (a refusal in-band).
    async fn start_stream(
        &self,
        request: Request<tonic::Streaming<sb::StartJobRequest>>,
    ) -> Result<Response<Self::StartStreamStream>, Status> {
        let mut inbound = request.into_inner();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let me = self.clone();
        tokio::spawn(async move {
            while let Ok(Some(req)) = inbound.message().await {
                let tag = req.tag;
                let reply = me.start(req).unwrap_or_else(|s| sb::StartJobReply {
                    code: s.code() as i32,
                    message: s.message().to_owned(),
                    ..Default::default()
                });
                if tx.send(Ok(sb::StartJobReply { tag, ..reply })).is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
        ))
    }

    async fn signal_job(
        &self,
        request: Request<sb::SignalJobRequest>,
    ) -> Result<Response<sb::SignalJobReply>, Status> {
        let req = request.into_inner();
        if req.action == sb::SignalAction::Kill as i32 {
            self.seen(|s| {
                s.running = s.running.saturating_sub(1);
                s.live.remove(&(req.job_id, req.idx));
            });
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
}

pub struct Mbd {
    pub stop: oneshot::Sender<()>,
    pub task: tokio::task::JoinHandle<()>,
}

pub async fn start_mbd(config: Arc<basalt_config::Config>) -> anyhow::Result<Mbd> {
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

/// The credentials of hostA's daemons (what the fake sbatchd sends).
pub fn daemon_auth(config: &basalt_config::Config) -> basalt_runtime::Authenticator {
    match basalt_runtime::cluster_keys(config) {
        Ok(keys) => basalt_runtime::daemon_auth(config, "hostA", keys),
        Err(e) => basalt_runtime::Authenticator::unavailable(e.to_string()),
    }
}

/// An mbatchd client acting as another user (`uid`, `user` on hostA): credentials signed
/// with the cluster key, which the test can read.
/// The credentials of user `user` (`uid`) on hostA.
pub fn auth_as(
    config: &basalt_config::Config,
    uid: u32,
    user: &str,
) -> anyhow::Result<basalt_runtime::Authenticator> {
    let keys = basalt_runtime::cluster_keys(config)?;
    let who = basalt_runtime::Identity {
        kind: basalt_auth::Kind::User,
        uid,
        gid: uid,
        user: user.to_owned(),
        host: "hostA".into(),
    };
    Ok(basalt_runtime::Authenticator::with_key(
        keys,
        who,
        &config.cluster_name,
        basalt_runtime::host_addr(config, "hostA").ok(),
    ))
}

pub fn client_as(
    config: &basalt_config::Config,
    uid: u32,
    user: &str,
) -> anyhow::Result<pb::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>> {
    let auth = auth_as(config, uid, user)?;
    Ok(basalt_runtime::mbatchd_channel(
        config,
        "hostA",
        Duration::from_secs(5),
        &auth,
    )?)
}

/// An mbatchd client with the test user's credentials.
pub fn user_client(
    config: &basalt_config::Config,
    timeout: Duration,
) -> Option<pb::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>> {
    basalt_runtime::mbatchd_channel(config, "hostA", timeout, &basalt_runtime::user_auth(config))
        .ok()
}

pub async fn all_jobs(config: &basalt_config::Config) -> Option<Vec<pb::JobInfo>> {
    let mut c = user_client(config, Duration::from_secs(2))?;
    let r = c
        .jobs(pb::JobsRequest {
            user: "all".into(),
            states: u32::MAX,
            ..Default::default()
        })
        .await
        .ok()?;
    Some(r.into_inner().jobs)
}

pub struct Setup {
    pub lims: InProcessCluster,
    pub config: Arc<basalt_config::Config>,
    pub fake: FakeSbd,
    pub mbd: Mbd,
    pub client: pb::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>,
}

/// A one-host cluster: a real LIM, the fake sbatchd and mbatchd, all in this process.
pub async fn setup(name: &str) -> anyhow::Result<Setup> {
    setup_with(name, |_| Ok(())).await
}

/// [`setup`], calling `before` with the configuration directory (LSF_ENVDIR) before the
/// configuration is loaded and mbatchd starts.
pub async fn setup_with(
    name: &str,
    before: impl FnOnce(&std::path::Path) -> anyhow::Result<()>,
) -> anyhow::Result<Setup> {
    basalt_runtime::init_tracing(None);
    let lims = InProcessCluster::start(name, &ClusterSpec::new(1)).await?;
    lims.wait_master("hostA", Duration::from_secs(20)).await?;
    let envdir = lims.dir.path().join("conf");
    before(&envdir)?;
    let config = Arc::new(
        basalt_config::load(&envdir)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .config,
    );
    let sbd_addr = basalt_runtime::sbd_addr(&config, "hostA")?;
    let fake = FakeSbd {
        config: config.clone(),
        seen: Arc::default(),
    };
    let sbd_listener = tokio::net::TcpListener::bind(sbd_addr).await?;
    // A stand-in: it checks no credentials, so it is served without the layer.
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(sb::sbatchd_peer_server::SbatchdPeerServer::new(
                fake.clone(),
            ))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(sbd_listener)),
    );

    // The fake sbatchd says hello like a real one (listing its jobs), so hostA never
    // looks unreachable.
    let hello_config = config.clone();
    let hello_fake = fake.clone();
    tokio::spawn(async move {
        loop {
            let jobs: Vec<pb::SbdJob> = hello_fake.seen(|s| {
                s.live
                    .iter()
                    .map(|(&(id, idx), &attempt)| pb::SbdJob {
                        id: job_ref(id, idx),
                        attempt,
                        ..Default::default()
                    })
                    .collect()
            });
            if let Ok(mut c) = basalt_runtime::mbatchd_peer_channel(
                &hello_config,
                "hostA",
                Duration::from_secs(2),
                &daemon_auth(&hello_config),
            ) {
                let _ = c
                    .sbd_hello(pb::SbdHelloRequest {
                        host: "hostA".into(),
                        jobs,
                        ..Default::default()
                    })
                    .await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mbd = start_mbd(config.clone()).await?;
    let client = wait_for_async("mbatchd to answer", Duration::from_secs(20), || {
        let config = config.clone();
        async move {
            match all_jobs(&config).await {
                Some(_) => (user_client(&config, Duration::from_secs(5)), String::new()),
                None => (None, "no answer".into()),
            }
        }
    })
    .await?;
    Ok(Setup {
        lims,
        config,
        fake,
        mbd,
        client,
    })
}

pub fn submission(command: &str, job_name: &str, depend_cond: &str) -> pb::SubmitRequest {
    pb::SubmitRequest {
        submit_token: String::new(),
        job: Some(pb::JobSubmission {
            command: command.into(),
            job_name: job_name.into(),
            depend_cond: depend_cond.into(),
            cwd: "/tmp".into(),
            env: vec!["PATH=/usr/bin:/bin".into()],
            rlimits: vec![-1; 11],
            from_host: "hostA".into(),
            ..Default::default()
        }),
    }
}

/// Wait until `pred` holds for the job list.
pub async fn wait_jobs(
    config: &Arc<basalt_config::Config>,
    what: &str,
    pred: impl Fn(&[pb::JobInfo]) -> bool,
) -> anyhow::Result<Vec<pb::JobInfo>> {
    let pred = &pred;
    wait_for_async(what, Duration::from_secs(30), || {
        let config = config.clone();
        async move {
            let jobs = all_jobs(&config).await.unwrap_or_default();
            let ok = pred(&jobs);
            let text = jobs
                .iter()
                .map(|j| format!("{}[{}]={}", j.job_id, j.idx, j.state))
                .collect::<Vec<_>>()
                .join(" ");
            (ok.then_some(jobs), text)
        }
    })
    .await
}

pub fn count_records(
    config: &basalt_config::Config,
) -> anyhow::Result<std::collections::BTreeMap<String, usize>> {
    let reader = basalt_eventlog::read_events(&config.logdir().join("lsb.events"))?;
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for rec in reader {
        *kinds.entry(rec?.kind().to_string()).or_default() += 1;
    }
    Ok(kinds)
}

/// The configuration in `envdir`.
pub fn load_config(envdir: &std::path::Path) -> anyhow::Result<basalt_config::Config> {
    Ok(basalt_config::load(envdir)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .config)
}
