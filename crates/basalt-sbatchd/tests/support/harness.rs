// The test harness shared by the integration tests (`include!`d by each, so that its
// items stay private to the test crate): sbatchd in-process on a fresh loopback
// address, a real in-process LIM, a fake mbatchd that answers SbdHello and records
// ReportJob, and the real `sbatchd` binary as each job's supervisor.

use basalt_proto::mbatchd::mbatchd_peer_server::{MbatchdPeer, MbatchdPeerServer};
use basalt_proto::mbatchd::{self as mpb, AckKind, ReportKind};
use basalt_proto::sbatchd::sbatchd_client::SbatchdClient;
use basalt_proto::sbatchd::sbatchd_peer_client::SbatchdPeerClient;
use basalt_proto::sbatchd::{self as spb, JobSpec, SignalAction};
use basalt_runtime::AuthChannel as Channel;
use basalt_sbatchd::db::{DB_FILE, JobDb};
use basalt_testkit::{ClusterSpec, InProcessCluster, wait_for_async};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::{Request, Response, Status};

const DEADLINE: Duration = Duration::from_secs(30);
/// The supervisor pool's idle time in these tests (60 s by default).
const POOL_IDLE: Duration = Duration::from_secs(3);

#[derive(Debug, Default)]
struct Recorded {
    reports: Vec<mpb::JobReport>,
    hellos: Vec<mpb::SbdHelloRequest>,
    /// Acks to give per job id (default OK).
    acks: BTreeMap<u64, AckKind>,
    /// Jobs started and not finished (what a hello answer lists), by job id.
    running: BTreeMap<u64, mpb::SbdJob>,
    /// Jobs this mbatchd has forgotten: not listed, answered STOP_JOB.
    forgotten: std::collections::BTreeSet<u64>,
    /// Answer `ReportJobs` UNIMPLEMENTED (an mbatchd from before it).
    no_batches: bool,
    /// Answer `ReportStream` UNIMPLEMENTED (an mbatchd from before it).
    no_stream: bool,
    /// `ReportJobs` calls taken, and the most reports one carried.
    batches: usize,
    largest_batch: usize,
    /// Report streams opened, and the batches that came on them.
    streams: usize,
    stream_batches: usize,
}

#[derive(Debug, Clone)]
struct FakeMbd {
    epoch: u64,
    rec: Arc<Mutex<Recorded>>,
}

#[tonic::async_trait]
impl MbatchdPeer for FakeMbd {
    async fn sbd_hello(
        &self,
        request: Request<mpb::SbdHelloRequest>,
    ) -> Result<Response<mpb::SbdHelloReply>, Status> {
        let mut rec = self.rec.lock().expect("lock");
        rec.hellos.push(request.into_inner());
        let jobs = rec
            .running
            .iter()
            .filter(|(id, _)| !rec.forgotten.contains(id))
            .map(|(_, j)| *j)
            .collect();
        Ok(Response::new(mpb::SbdHelloReply {
            epoch: self.epoch,
            jobs,
            sbd_sleep_time: 1,
            job_terminate_interval: 2,
            hello_interval: 1,
        }))
    }
    async fn report_job(
        &self,
        request: Request<mpb::JobReport>,
    ) -> Result<Response<mpb::ReportAck>, Status> {
        let mut rec = self.rec.lock().expect("lock");
        Ok(Response::new(
            self.take_report(&mut rec, request.into_inner()),
        ))
    }

    async fn report_jobs(
        &self,
        request: Request<mpb::JobReports>,
    ) -> Result<Response<mpb::ReportAcks>, Status> {
        let mut rec = self.rec.lock().expect("lock");
        if rec.no_batches {
            return Err(Status::unimplemented("no ReportJobs here"));
        }
        let reports = request.into_inner().reports;
        rec.batches += 1;
        rec.largest_batch = rec.largest_batch.max(reports.len());
        let acks = reports
            .into_iter()
            .map(|r| self.take_report(&mut rec, r))
            .collect();
        Ok(Response::new(mpb::ReportAcks { acks }))
    }

    type ReportStreamStream =
        tokio_stream::wrappers::ReceiverStream<Result<mpb::ReportAcks, Status>>;

    /// Each batch answered in order; once `no_stream` is set, the stream ends
    /// UNIMPLEMENTED (and a new one is refused so).
    async fn report_stream(
        &self,
        request: Request<tonic::Streaming<mpb::JobReports>>,
    ) -> Result<Response<Self::ReportStreamStream>, Status> {
        {
            let mut rec = self.rec.lock().expect("lock");
            if rec.no_stream {
                return Err(Status::unimplemented("no ReportStream here"));
            }
            rec.streams += 1;
        }
        let mut inbound = request.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let me = self.clone();
        tokio::spawn(async move {
            while let Ok(Some(batch)) = inbound.message().await {
                let answer = {
                    let mut rec = me.rec.lock().expect("lock");
                    if rec.no_stream {
                        Err(Status::unimplemented("no ReportStream here"))
                    } else {
                        rec.stream_batches += 1;
                        rec.largest_batch = rec.largest_batch.max(batch.reports.len());
                        let acks = batch
                            .reports
                            .into_iter()
                            .map(|r| me.take_report(&mut rec, r))
                            .collect();
                        Ok(mpb::ReportAcks { acks })
                    }
                };
                let last = answer.is_err();
                if tx.send(answer).await.is_err() || last {
                    return;
                }
            }
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
    }
}

impl FakeMbd {
    fn take_report(&self, rec: &mut Recorded, r: mpb::JobReport) -> mpb::ReportAck {
        let job = r.id.as_ref().map_or(0, |i| i.job_id);
        let mut kind = rec.acks.get(&job).copied().unwrap_or(AckKind::Ok);
        if rec.forgotten.contains(&job) {
            kind = AckKind::StopJob;
        }
        if r.kind == ReportKind::Started as i32 {
            rec.running.insert(
                job,
                mpb::SbdJob {
                    id: r.id,
                    attempt: r.attempt,
                    state: 4,
                    pid: r.pid,
                    pgid: r.pgid,
                },
            );
        } else if r.kind == ReportKind::Finished as i32 || r.kind == ReportKind::StartFailed as i32
        {
            rec.running.remove(&job);
        }
        rec.reports.push(r);
        mpb::ReportAck {
            kind: kind as i32,
            epoch: self.epoch,
        }
    }
}

struct Harness {
    cluster: InProcessCluster,
    config: Arc<basalt_config::Config>,
    rec: Arc<Mutex<Recorded>>,
    sbd: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )>,
    work: PathBuf,
    state: PathBuf,
    /// A stand-in mbatchd executable for sbatchd to supervise (None: --no-mbatchd).
    mbatchd_exe: Option<PathBuf>,
}

const EPOCH: u64 = 5;

impl Harness {
    async fn start(name: &str) -> Harness {
        Harness::start_full(name, None, "").await
    }

    /// `mbatchd_script`: the text of a stand-in mbatchd (`@WORK@` = the work dir).
    async fn start_with(name: &str, mbatchd_script: Option<&str>) -> Harness {
        Harness::start_full(name, mbatchd_script, "").await
    }

    /// As [`Harness::start_with`], with `lsf_conf` (lines) added to lsf.conf for sbatchd.
    async fn start_full(name: &str, mbatchd_script: Option<&str>, lsf_conf: &str) -> Harness {
        let cluster = InProcessCluster::start(name, &ClusterSpec::new(1))
            .await
            .expect("cluster");
        cluster
            .wait_master("hostA", DEADLINE)
            .await
            .expect("LIM master");
        if !lsf_conf.is_empty() {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(cluster.config.envdir.join("lsf.conf"))
                .expect("lsf.conf");
            writeln!(f, "\n{lsf_conf}").expect("append to lsf.conf");
        }
        let config = Arc::new(
            basalt_config::load(&cluster.config.envdir)
                .expect("full configuration")
                .config,
        );
        let rec = Arc::new(Mutex::new(Recorded::default()));
        let mbd = FakeMbd {
            epoch: EPOCH,
            rec: rec.clone(),
        };
        // With a stand-in mbatchd for sbatchd to supervise, nothing else may hold
        // the mbatchd port (sbatchd does not start an mbatchd while one answers there).
        if mbatchd_script.is_none() {
            let mbd_addr = basalt_runtime::mbd_addr(&config, "hostA").expect("mbd addr");
            let listener = tokio::net::TcpListener::bind(mbd_addr)
                .await
                .expect("bind mbd");
            // A stand-in: it checks no credentials, so it is served without the layer.
            tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(MbatchdPeerServer::new(mbd))
                    .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
            );
        }
        let work = cluster.dir.path().join("work-jobs");
        std::fs::create_dir_all(&work).expect("work dir");
        let state = cluster.dir.path().join("sbd-state");
        let mbatchd_exe = mbatchd_script.map(|text| {
            use std::os::unix::fs::PermissionsExt;
            let p = cluster.dir.path().join("fake-mbatchd");
            std::fs::write(&p, text.replace("@WORK@", &work.to_string_lossy())).expect("script");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            p
        });
        let mut h = Harness {
            cluster,
            config,
            rec,
            sbd: None,
            work,
            state,
            mbatchd_exe,
        };
        h.start_sbd().await;
        h
    }

    async fn start_sbd(&mut self) {
        let addr = basalt_runtime::sbd_addr(&self.config, "hostA").expect("sbd addr");
        let listener = bind_retry(addr).await;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let opts = basalt_sbatchd::Options {
            supervise_mbatchd: self.mbatchd_exe.is_some(),
            state_dir: Some(self.state.clone()),
            supervisor_exe: Some(PathBuf::from(env!("CARGO_BIN_EXE_sbatchd"))),
            mbatchd_exe: self.mbatchd_exe.clone(),
            sample_ms: Some(300),
            pool_idle: POOL_IDLE,
            ..Default::default()
        };
        let config = self.config.clone();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            if let Err(e) =
                basalt_sbatchd::run_with(config, "hostA", listener, opts, shutdown).await
            {
                eprintln!("sbatchd: {e}");
            }
        });
        self.sbd = Some((tx, task));
        // Wait until it has said hello (so it knows the epoch).
        let client = self.client();
        let want = if self.mbatchd_exe.is_some() { 0 } else { EPOCH };
        wait_for_async("sbatchd to learn the epoch", DEADLINE, || {
            let mut c = client.clone();
            async move {
                let s = c
                    .status(spb::StatusRequest {})
                    .await
                    .map(|r| r.into_inner());
                match s {
                    Ok(s) if s.epoch == want => (Some(()), String::new()),
                    other => (None, format!("{other:?}")),
                }
            }
        })
        .await
        .expect("sbatchd up");
    }

    async fn stop_sbd(&mut self) {
        if let Some((tx, task)) = self.sbd.take() {
            let _ = tx.send(());
            tokio::time::timeout(DEADLINE, task)
                .await
                .expect("sbatchd stops")
                .expect("sbatchd task");
        }
    }

    /// A client with a user's credentials (signed with the cluster key, as hostA's LIM
    /// would sign them for that uid).
    fn client_as_user(&self, uid: u32) -> SbatchdClient<Channel> {
        let keys = basalt_runtime::cluster_keys(&self.config).expect("cluster key");
        let who = basalt_runtime::Identity {
            kind: basalt_auth::Kind::User,
            uid,
            gid: uid,
            user: format!("u{uid}"),
            host: "hostA".into(),
        };
        let auth = basalt_runtime::Authenticator::with_key(
            keys,
            who,
            &self.config.cluster_name,
            basalt_runtime::host_addr(&self.config, "hostA").ok(),
        );
        basalt_runtime::sbatchd_channel(&self.config, "hostA", Duration::from_secs(10), &auth)
            .expect("client")
    }

    /// A client of the commands' service, with this process's user's credentials.
    fn client(&self) -> SbatchdClient<Channel> {
        // The client service is the commands': a user's credentials.
        self.client_as_user(nix::unistd::getuid().as_raw())
    }

    /// A peer client with the credentials of hostA's daemons, for mbatchd's orders.
    fn peer(&self) -> SbatchdPeerClient<Channel> {
        let keys = basalt_runtime::cluster_keys(&self.config).expect("cluster key");
        let auth = basalt_runtime::daemon_auth(&self.config, "hostA", keys);
        basalt_runtime::sbatchd_peer_channel(&self.config, "hostA", Duration::from_secs(10), &auth)
            .expect("client")
    }

    fn spec(&self, job_id: u64, command: &str, is_script: bool, out: &str) -> JobSpec {
        let user = nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .expect("own user");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64;
        let env = vec![
            "PATH=/usr/local/bin:/usr/bin:/bin".to_string(),
            "BASALT_TEST_VAR=from submission".to_string(),
            "LSB_JOBID=999999".to_string(),
        ];
        JobSpec {
            job_id,
            idx: 0,
            attempt: 1,
            user: user.name.clone(),
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            job_name: format!("job{job_id}"),
            queue: "normal".into(),
            exec_hosts: vec!["hostA".into()],
            sub_cwd: self.work.to_string_lossy().into_owned(),
            out_file: out.to_owned(),
            from_host: "hostA".into(),
            sub_home: user.dir.to_string_lossy().into_owned(),
            submit_time: now,
            job_file_name: format!("{now}.{job_id}"),
            job_file: basalt_core::jobfile::render(&env, command, is_script).into_bytes(),
            command: command.to_owned(),
            rlimits: vec![-1; 11],
            umask: 0o022,
            cluster: "basalt".into(),
            num_processors: 1,
            max_processors: 1,
            ..Default::default()
        }
    }

    async fn start_job(&self, epoch: u64, spec: JobSpec) -> Result<(u32, u32), Status> {
        self.peer()
            .start_job(spb::StartJobRequest {
                epoch,
                job: Some(spec),
                tag: 0,
            })
            .await
            .map(|r| {
                let r = r.into_inner();
                (r.pid, r.pgid)
            })
    }

    /// Send sbatchd an order; whether it holds the job.
    async fn send_signal(&self, req: spb::SignalJobRequest) -> bool {
        self.peer()
            .signal_job(req)
            .await
            .expect("signal_job")
            .into_inner()
            .found
    }

    async fn signal(&self, job_id: u64, action: SignalAction, term_reason: &str) -> bool {
        self.send_signal(spb::SignalJobRequest {
                epoch: EPOCH,
                job_id,
                idx: 0,
                attempt: 1,
                action: action as i32,
                signal: String::new(),
                terminate_interval: 2,
                stop_state: 16,
                reasons: 2,
                term_reason: term_reason.into(),
                rlimits: Vec::new(),
                chkpnt_kill: false,
                chkpnt_force: false,
                chkpnt_migrate: false,
            })
            .await
    }

    fn reports(&self, job_id: u64) -> Vec<mpb::JobReport> {
        self.rec
            .lock()
            .expect("lock")
            .reports
            .iter()
            .filter(|r| r.id.as_ref().is_some_and(|i| i.job_id == job_id))
            .cloned()
            .collect()
    }

    async fn wait_report(&self, job_id: u64, kind: ReportKind) -> mpb::JobReport {
        wait_for_async(
            &format!("job {job_id} report {kind:?}"),
            DEADLINE,
            || async move {
                let all = self.reports(job_id);
                let found = all.iter().find(|r| r.kind == kind as i32).cloned();
                let seen = all
                    .iter()
                    .map(|r| format!("{}:{:?}", r.seq, ReportKind::try_from(r.kind)))
                    .collect::<Vec<_>>()
                    .join(" ");
                (found, seen)
            },
        )
        .await
        .expect("report")
    }

    /// Start job `job_id` running `true` and wait for its end: DONE, exit 0.
    async fn run_true(&self, job_id: u64) {
        self.start_job(EPOCH, self.spec(job_id, "true", false, ""))
            .await
            .expect("start");
        let fin = self.wait_report(job_id, ReportKind::Finished).await;
        assert_eq!((fin.state, fin.exit_status), (64, 0), "{fin:?}");
    }

    /// A job command that runs until the returned file exists.
    fn until_go(&self) -> (PathBuf, String) {
        let go = self.work.join("go");
        let cmd = format!("while [ ! -e {} ]; do sleep 0.1; done", go.display());
        (go, cmd)
    }
}

impl Drop for Harness {
    /// Jobs outlive sbatchd by design; a failed test must not leave them behind.
    fn drop(&mut self) {
        let Ok(db) = JobDb::open(&self.state.join(DB_FILE), false) else {
            return;
        };
        for j in db.load_all().unwrap_or_default() {
            let pgids = j.events.iter().map(|e| e.pgid).chain([j.pgid]);
            for pgid in pgids.filter(|p| *p > 1) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pgid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            if let Some(s) = j.supervisor.filter(|s| s.alive()) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(s.pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// Job rows in the database and job directories under the state root.
fn leftovers(state: &Path) -> Vec<String> {
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    // The state root keeps its lock, the job table, the directory of control sockets
    // and the credentials seen (replay); a job's socket goes with the job.
    let mut left: Vec<String> = names(state)
        .into_iter()
        .filter(|n| n != "sbatchd.lock" && n != "ctl" && n != "replay" && !n.starts_with(DB_FILE))
        .collect();
    left.extend(
        names(&state.join("ctl"))
            .into_iter()
            .map(|n| format!("ctl/{n}")),
    );
    if let Ok(db) = JobDb::open(&state.join(DB_FILE), false) {
        left.extend(
            db.load_all()
                .unwrap_or_default()
                .iter()
                .map(|j| format!("row {:?}", j.key)),
        );
    }
    left
}

async fn bind_retry(addr: std::net::SocketAddr) -> tokio::net::TcpListener {
    let end = std::time::Instant::now() + DEADLINE;
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) if std::time::Instant::now() > end => panic!("bind {addr}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

fn proc_state(pid: u32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = text.rsplit_once(')')?.1;
    after.trim_start().chars().next()
}

/// Wait until the process state of `pid` satisfies `ok` (signals are delivered
/// asynchronously, so the state may lag the signal for a moment).
async fn wait_state(pid: u32, ok: impl Fn(Option<char>) -> bool) {
    let ok = &ok;
    wait_for_async(&format!("state of pid {pid}"), DEADLINE, || async move {
        let s = proc_state(pid);
        (ok(s).then_some(()), format!("{s:?}"))
    })
    .await
    .expect("process state");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The line two lines above `Resource usage summary:` (what snakemake-lsf reads).
fn status_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .rposition(|l| *l == "Resource usage summary:")?;
    lines.get(i.checked_sub(2)?).map(|s| s.to_string())
}
