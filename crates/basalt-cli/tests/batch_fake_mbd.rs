//! The batch commands against a fake in-process mbatchd (a tonic server on
//! 127.0.0.1:0 reached through `BASALT_MBD_ADDR`): what they send, what they print,
//! and their exit codes; plus mbatchd and LIM being down.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_proto::mbatchd::mbatchd_server::{Mbatchd, MbatchdServer};
use basalt_proto::mbatchd::*;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::{Request, Response, Status};

const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

#[derive(Default)]
struct Seen {
    submits: Vec<SubmitRequest>,
    signals: Vec<SignalRequest>,
    jobs: Vec<JobsRequest>,
    host_ctl: Vec<HostCtlRequest>,
    modifies: Vec<ModifyRequest>,
    hosts: Vec<HostsRequest>,
}

#[derive(Clone, Default)]
struct FakeMbd {
    seen: Arc<Mutex<Seen>>,
    /// `Clusters` answers a cluster without MultiCluster queues or links.
    no_mc: bool,
}

fn running_job() -> JobInfo {
    JobInfo {
        job_id: 101,
        user: "alice".into(),
        state: 4,
        queue: "normal".into(),
        from_host: "hostA".into(),
        exec_hosts: vec!["hostA".into()],
        job_name: "sleep 30".into(),
        command: "sleep 30".into(),
        submit_time: T0,
        start_time: T0 + 5,
        project: "default".into(),
        exit_code: -1,
        run_limit: -1,
        num_processors: 1,
        max_processors: 1,
        ..Default::default()
    }
}

fn pending_job() -> JobInfo {
    JobInfo {
        job_id: 103,
        state: 1,
        exec_hosts: vec![],
        job_name: "sleep 20".into(),
        command: "sleep 20".into(),
        start_time: 0,
        ..running_job()
    }
}

/// MultiCluster, submission side: job 201 of queue `send`, forwarded to cluster `east`
/// (queue `recv`), where it is job 5 and runs on three slots of two hosts.
fn forwarded_job() -> JobInfo {
    JobInfo {
        job_id: 201,
        queue: "send".into(),
        exec_hosts: vec![
            "hostA@east".into(),
            "hostA@east".into(),
            "hostB@east".into(),
        ],
        job_name: "mc_job".into(),
        command: "mc_job".into(),
        num_processors: 3,
        max_processors: 3,
        forward_cluster: "east".into(),
        forward_queue: "recv".into(),
        forward_time: T0 + 2,
        remote_job_id: 5,
        ..running_job()
    }
}

/// MultiCluster, submission side: job 202, came back once from `east` without
/// starting and forwarded there again, pending (its id there not known yet).
fn reforwarded_pending_job() -> JobInfo {
    JobInfo {
        job_id: 202,
        state: 1,
        exec_hosts: vec![],
        start_time: 0,
        forward_time: T0 + 60,
        remote_job_id: 0,
        mc_returns: 1,
        ..forwarded_job()
    }
}

/// MultiCluster, execution side: job 5 of queue `recv`, forwarded here from cluster
/// `west`, where it is job 201 submitted from hostW.
fn received_job() -> JobInfo {
    JobInfo {
        job_id: 5,
        queue: "recv".into(),
        from_host: "hostW".into(),
        job_name: "mc_job".into(),
        command: "mc_job".into(),
        source_cluster: "west".into(),
        source_job_id: 201,
        pid: 4242,
        exec_home: "/home/alice".into(),
        ..running_job()
    }
}

/// What `Clusters` answers: cluster `west` sends from `send` to `recv@east` and from
/// `long_send_queue_name` to a queue of an unreachable cluster, and takes jobs from
/// `east` into `recv`.
fn clusters_reply() -> ClustersReply {
    ClustersReply {
        cluster: "west".into(),
        links: vec![
            ClusterLink {
                cluster: "east".into(),
                status: "ok".into(),
                detail: String::new(),
                master: "hostE".into(),
                last_contact: T0,
            },
            ClusterLink {
                cluster: "faraway_cluster".into(),
                status: "disc".into(),
                detail: "Cannot reach the master of cluster faraway_cluster".into(),
                master: String::new(),
                last_contact: 0,
            },
        ],
        queues: vec![
            QueueLink {
                local_queue: "send".into(),
                flow: "send".into(),
                remote_queue: "recv".into(),
                cluster: "east".into(),
                status: "ok".into(),
                impt_jobbklg: 10,
                mc_pending: 3,
                free_slots: 4,
                priority: 40,
                ..Default::default()
            },
            QueueLink {
                local_queue: "long_send_queue_name".into(),
                flow: "send".into(),
                remote_queue: "far_queue_name".into(),
                cluster: "faraway_cluster".into(),
                status: "disc".into(),
                impt_jobbklg: -1,
                ..Default::default()
            },
            QueueLink {
                local_queue: "recv".into(),
                flow: "recv".into(),
                remote_queue: "-".into(),
                cluster: "east".into(),
                status: "ok".into(),
                pend: 1,
                run: 2,
                ..Default::default()
            },
        ],
    }
}

fn lock(seen: &Arc<Mutex<Seen>>) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(|e| e.into_inner())
}

#[tonic::async_trait]
impl Mbatchd for FakeMbd {
    async fn submit(&self, r: Request<SubmitRequest>) -> Result<Response<SubmitReply>, Status> {
        let req = r.into_inner();
        lock(&self.seen).submits.push(req.clone());
        let job = req.job.unwrap_or_default();
        if job.queue == "nosuch" {
            return Err(Status::not_found("Queue does not exist"));
        }
        Ok(Response::new(SubmitReply {
            job_id: 101,
            queue: if job.queue.is_empty() {
                "normal".into()
            } else {
                job.queue.clone()
            },
            default_queue: job.queue.is_empty(),
        }))
    }

    type JobsPagesStream =
        std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<JobsReply, Status>> + Send>>;

    /// An mbatchd from before `JobsPages`: bjobs asks `Jobs` instead (every bjobs test
    /// here goes that way).
    async fn jobs_pages(
        &self,
        _: Request<JobsRequest>,
    ) -> Result<Response<Self::JobsPagesStream>, Status> {
        Err(Status::unimplemented("JobsPages"))
    }

    async fn jobs(&self, r: Request<JobsRequest>) -> Result<Response<JobsReply>, Status> {
        let req = r.into_inner();
        lock(&self.seen).jobs.push(req.clone());
        let all = vec![running_job(), pending_job()];
        if req.ids.is_empty() {
            let jobs = if req.job_name == "nomatch" {
                vec![]
            } else {
                all
            };
            return Ok(Response::new(JobsReply {
                jobs,
                not_found: vec![],
                total: None,
            }));
        }
        let mut reply = JobsReply::default();
        // The MultiCluster jobs only when asked for by id.
        let mc = [forwarded_job(), reforwarded_pending_job(), received_job()];
        for id in req.ids {
            match all.iter().chain(&mc).find(|j| j.job_id == id.job_id) {
                Some(j) => reply.jobs.push(j.clone()),
                None => reply.not_found.push(id),
            }
        }
        Ok(Response::new(reply))
    }

    async fn signal(&self, r: Request<SignalRequest>) -> Result<Response<JobCtlReply>, Status> {
        let req = r.into_inner();
        lock(&self.seen).signals.push(req.clone());
        let results = req
            .ids
            .iter()
            .map(|id| JobResult {
                id: Some(*id),
                ok: id.job_id == 101,
                message: if id.job_id == 101 {
                    String::new()
                } else {
                    "No matching job found".into()
                },
                detail: String::new(),
            })
            .collect();
        Ok(Response::new(JobCtlReply { results }))
    }

    async fn modify(&self, r: Request<ModifyRequest>) -> Result<Response<JobCtlReply>, Status> {
        let req = r.into_inner();
        lock(&self.seen).modifies.push(req.clone());
        let id = req.job.unwrap_or_default();
        let (ok, message) = if id.job_id == 999 {
            (false, "Job has already finished".to_string())
        } else {
            (true, String::new())
        };
        Ok(Response::new(JobCtlReply {
            results: vec![JobResult {
                id: Some(id),
                ok,
                message,
                detail: String::new(),
            }],
        }))
    }

    async fn switch(&self, r: Request<SwitchRequest>) -> Result<Response<JobCtlReply>, Status> {
        let req = r.into_inner();
        Ok(Response::new(JobCtlReply {
            results: req
                .ids
                .iter()
                .map(|id| JobResult {
                    id: Some(*id),
                    ok: true,
                    message: String::new(),
                    detail: req.queue.clone(),
                })
                .collect(),
        }))
    }

    async fn r#move(&self, r: Request<MoveRequest>) -> Result<Response<JobCtlReply>, Status> {
        let req = r.into_inner();
        Ok(Response::new(JobCtlReply {
            results: vec![JobResult {
                id: req.id,
                ok: true,
                message: String::new(),
                detail: req.position.max(1).to_string(),
            }],
        }))
    }

    async fn force(&self, r: Request<ForceRequest>) -> Result<Response<JobCtlReply>, Status> {
        let req = r.into_inner();
        Ok(Response::new(JobCtlReply {
            results: vec![JobResult {
                id: req.id,
                ok: !req.hosts.is_empty(),
                message: String::new(),
                detail: String::new(),
            }],
        }))
    }

    async fn queues(&self, _r: Request<QueuesRequest>) -> Result<Response<QueuesReply>, Status> {
        Ok(Response::new(QueuesReply {
            queues: vec![QueueInfo {
                name: "normal".into(),
                priority: 30,
                open: true,
                active: true,
                max_jobs: -1,
                jl_u: -1,
                jl_p: -1.0,
                jl_h: -1,
                is_default: true,
                ..Default::default()
            }],
            not_found: vec![],
            ..Default::default()
        }))
    }

    async fn hosts(&self, r: Request<HostsRequest>) -> Result<Response<HostsReply>, Status> {
        lock(&self.seen).hosts.push(r.into_inner());
        Ok(Response::new(HostsReply {
            hosts: vec![BatchHostInfo {
                name: "hostA".into(),
                status: "ok".into(),
                long_status: "ok".into(),
                jl_u: -1,
                max: 2,
                ..Default::default()
            }],
            not_found: vec![],
            ..Default::default()
        }))
    }

    async fn apps(
        &self,
        _r: Request<basalt_proto::mbatchd::AppsRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::AppsReply>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn clusters(
        &self,
        _r: Request<basalt_proto::mbatchd::ClustersRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::ClustersReply>, Status> {
        if self.no_mc {
            return Ok(Response::new(ClustersReply {
                cluster: "basalt".into(),
                ..Default::default()
            }));
        }
        Ok(Response::new(clusters_reply()))
    }

    async fn host_partitions(
        &self,
        _r: Request<basalt_proto::mbatchd::HostPartitionsRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::HostPartitionsReply>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn slots(
        &self,
        _r: Request<basalt_proto::mbatchd::SlotsRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::SlotsReply>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn users(
        &self,
        _r: Request<basalt_proto::mbatchd::UsersRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::UsersReply>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn limits(
        &self,
        _r: Request<basalt_proto::mbatchd::LimitsRequest>,
    ) -> Result<Response<basalt_proto::mbatchd::LimitsReply>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn params(&self, _r: Request<ParamsRequest>) -> Result<Response<ParamsReply>, Status> {
        Ok(Response::new(ParamsReply {
            params: vec![KeyValue {
                key: "DEFAULT_QUEUE".into(),
                value: "normal".into(),
            }],
            default_queues: vec!["normal".into()],
            mbd_sleep_time: 10,
            sbd_sleep_time: 7,
            job_accept_interval: 0,
            mbd_conf: vec![KeyValue {
                key: "LSB_SHAREDIR".into(),
                value: "/srv/work".into(),
            }],
            started_at: T0,
            config_problem: String::new(),
            ..Default::default()
        }))
    }

    async fn queue_ctl(&self, r: Request<QueueCtlRequest>) -> Result<Response<CtlReply>, Status> {
        let req = r.into_inner();
        Ok(Response::new(CtlReply {
            results: req
                .queues
                .iter()
                .map(|q| CtlResult {
                    name: q.clone(),
                    ok: true,
                    message: String::new(),
                })
                .collect(),
        }))
    }

    async fn host_ctl(&self, r: Request<HostCtlRequest>) -> Result<Response<CtlReply>, Status> {
        let req = r.into_inner();
        lock(&self.seen).host_ctl.push(req.clone());
        Ok(Response::new(CtlReply {
            results: req
                .hosts
                .iter()
                .map(|h| CtlResult {
                    name: h.clone(),
                    ok: true,
                    message: String::new(),
                })
                .collect(),
        }))
    }

    async fn reconfig(&self, _r: Request<ReconfigRequest>) -> Result<Response<CtlReply>, Status> {
        Ok(Response::new(CtlReply { results: vec![] }))
    }
}

/// Start the fake on 127.0.0.1:0 in a thread of its own; it lives until the process ends.
fn start_fake() -> (SocketAddr, Arc<Mutex<Seen>>) {
    start_fake_with(FakeMbd::default())
}

/// Start `fake` as [`start_fake`] does.
fn start_fake_with(fake: FakeMbd) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let seen = fake.seen.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(_) => return,
        };
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
                return;
            };
            let Ok(addr) = listener.local_addr() else {
                return;
            };
            let _ = tx.send(addr);
            let router = tonic::transport::Server::builder().add_service(MbatchdServer::new(fake));
            let _ = router
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
                .await;
        });
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("fake mbatchd did not start: {e}"));
    (addr, seen)
}

fn write_config(top: &Path) -> PathBuf {
    let host = DefaultHost {
        name: "hostA".into(),
        // Nothing listens here: a loopback address no test uses.
        address: Some(IpAddr::V4(Ipv4Addr::new(127, 78, 5, 1))),
        server: true,
    };
    let mut spec = DefaultCluster::new("basalt", "nobody", vec![host]);
    spec.lim_port = 17871;
    spec.write(top)
        .unwrap_or_else(|e| panic!("write configuration: {e}"))
}

struct Env {
    _dir: tempfile::TempDir,
    envdir: PathBuf,
    mbd: Option<SocketAddr>,
    cwd: PathBuf,
}

impl Env {
    fn new(mbd: Option<SocketAddr>) -> Env {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let envdir = write_config(dir.path());
        let cwd = dir.path().join("run");
        std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("mkdir: {e}"));
        Env {
            _dir: dir,
            envdir,
            mbd,
            cwd,
        }
    }

    fn command(&self, exe: &str, args: &[&str]) -> Command {
        let mut c = Command::new(exe);
        c.args(args)
            .current_dir(&self.cwd)
            .env("LSF_ENVDIR", &self.envdir)
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("LSB_BJOBS_FORMAT")
            .env("BASALT_HOST", "hostA")
            .env("BASALT_CMD_TIMEOUT", "1")
            .env("TZ", "UTC")
            .env("BASALT_TEST_MARKER", "x=1");
        match self.mbd {
            Some(a) => c.env("BASALT_MBD_ADDR", a.to_string()),
            None => c.env_remove("BASALT_MBD_ADDR"),
        };
        c
    }

    fn run(&self, exe: &str, args: &[&str]) -> Output {
        self.command(exe, args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {exe}: {e}"))
    }

    fn run_stdin(&self, exe: &str, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command(exe, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {exe}: {e}"));
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(input.as_bytes())
                .unwrap_or_else(|e| panic!("write stdin: {e}"));
        }
        child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("wait {exe}: {e}"))
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const BSUB: &str = env!("CARGO_BIN_EXE_bsub");
const BJOBS: &str = env!("CARGO_BIN_EXE_bjobs");
const BKILL: &str = env!("CARGO_BIN_EXE_bkill");

#[test]
fn bsub_stdin_script_is_parsed_and_spooled() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    let script = "#!/usr/bin/env bash\n#BSUB -J dask-worker\n#BSUB -o %J.out\n#BSUB -q ignored\n#BSUB -M 2000\n#BSUB -W 00:10\n#BSUB -R \"span[hosts=1]\"\necho hi\n";
    let out = env.run_stdin(BSUB, &["-q", "normal", "-R", "rusage[mem=10]"], script);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Job <101> is submitted to queue <normal>.\n"
    );
    let seen = lock(&seen);
    let req = seen.submits.last().cloned().unwrap_or_default();
    let job = req.job.unwrap_or_default();
    assert!(job.is_script);
    assert_eq!(job.command, script);
    assert_eq!(job.queue, "normal");
    assert_eq!(job.job_name, "dask-worker");
    assert_eq!(job.out_file, "%J.out");
    assert_eq!(job.rlimits.len(), 11);
    assert_eq!(
        job.rlimits[5],
        2000 * 1024,
        "-M 2000 in MB (LSF_UNIT_FOR_LIMITS=MB)"
    );
    assert_eq!(job.rlimits[9], 600);
    assert_eq!(job.res_req, "rusage[mem=10] span[hosts=1]");
    assert_eq!(job.from_host, "hostA");
    assert_eq!(job.cwd, env.cwd.display().to_string());
    assert!(job.env.iter().any(|e| e == "BASALT_TEST_MARKER=x=1"));
    use basalt_core::job::{sub, sub2};
    assert_ne!(job.options & sub::PROJECT_NAME, 0);
    assert_ne!(job.options & sub::QUEUE, 0);
    assert_ne!(job.options2 & sub2::JOB_CMD_SPOOL, 0);
}

#[test]
fn bsub_script_file_argument_and_command_words() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    let file = env.cwd.join("job.sh");
    std::fs::write(
        &file,
        "\n#!/bin/sh\n#BSUB -n 4\n#BSUB -env \"none\"\ntrue\n",
    )
    .unwrap_or_else(|e| panic!("write: {e}"));
    let out = env.run(BSUB, &["job.sh"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Job <101> is submitted to default queue <normal>.\n"
    );
    let out = env.run(BSUB, &["-o", "l", "-J", "n", "sh", "-c", "echo $HOME"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen = lock(&seen);
    let file_job = seen.submits[0].job.clone().unwrap_or_default();
    assert!(file_job.is_script);
    assert_eq!(file_job.num_processors, 4);
    assert!(file_job.env.is_empty());
    assert!(file_job.command.contains("#BSUB -n 4"));
    let words = seen.submits[1].job.clone().unwrap_or_default();
    assert!(!words.is_script);
    assert_eq!(words.command, "sh -c echo $HOME");
    assert_eq!(words.job_name, "n");
}

#[test]
fn bsub_refusals_and_bad_options() {
    let (addr, _seen) = start_fake();
    let env = Env::new(Some(addr));
    let out = env.run(BSUB, &["-q", "nosuch", "true"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "Queue does not exist. Job not submitted.\n"
    );
    let out = env.run(BSUB, &["-W", "abc", "true"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stderr).ends_with(". Job not submitted.\n"));
    let out = env.run(BSUB, &["-Z", "true"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stderr).contains("illegal option"));
    let out = env.run_stdin(BSUB, &[], "");
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stderr).contains("Missing command"));
}

#[test]
fn bjobs_tables_messages_and_exit_codes() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    let out = env.run(BJOBS, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
101     alice   RUN   normal     hostA       hostA       sleep 30   Nov 22 09:25  \n\
103     alice   PEND  normal     hostA                   sleep 20   Nov 22 09:25  \n"
    );
    let out = env.run(BJOBS, &["101", "999"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stdout).contains("\n101     alice   RUN"));
    assert_eq!(text(&out.stderr), "Job <999> is not found\n");
    let out = env.run(BJOBS, &["-o", "stat", "-noheader", "999"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    let out = env.run(
        BJOBS,
        &["-json", "-o", "jobid stat exit_reason", "101", "999"],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(v["JOBS"], 2);
    assert_eq!(v["RECORDS"][0]["EXIT_REASON"], "");
    assert_eq!(v["RECORDS"][1]["ERROR"], "Job <999> is not found");
    let out = env.run(BJOBS, &["-aJ", "nomatch"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "Job <nomatch> is not found\n");
    let out = env.run(BJOBS, &["abc"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "abc: Illegal job ID.\n");
    let seen = lock(&seen);
    // Explicit ids are looked up for every user; -a asks for finished jobs too.
    assert!(
        seen.jobs
            .iter()
            .any(|r| r.user == "all" && !r.ids.is_empty())
    );
    assert!(
        seen.jobs
            .iter()
            .any(|r| r.states & 0x40 != 0 && r.job_name == "nomatch")
    );
}

#[test]
fn job_control_lines() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    let out = env.run(BKILL, &["101", "102"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stdout), "Job <101> is being terminated\n");
    assert_eq!(text(&out.stderr), "Job <102>: No matching job found\n");
    let out = env.run(BKILL, &["-s", "USR1", "101"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "Job <101> is being signaled\n");
    let out = env.run(env!("CARGO_BIN_EXE_bstop"), &["101"]);
    assert_eq!(text(&out.stdout), "Job <101> is being stopped\n");
    let out = env.run(env!("CARGO_BIN_EXE_bresume"), &["101"]);
    assert_eq!(text(&out.stdout), "Job <101> is being resumed\n");
    let out = env.run(env!("CARGO_BIN_EXE_bswitch"), &["lowq", "5"]);
    assert_eq!(text(&out.stdout), "Job <5> is switched to queue <lowq>\n");
    let out = env.run(env!("CARGO_BIN_EXE_btop"), &["6"]);
    assert_eq!(
        text(&out.stdout),
        "Job <6> has been moved to position 1 from top.\n"
    );
    let out = env.run(env!("CARGO_BIN_EXE_bbot"), &["6", "2"]);
    assert_eq!(
        text(&out.stdout),
        "Job <6> has been moved to position 2 from bottom.\n"
    );
    let out = env.run(env!("CARGO_BIN_EXE_brun"), &["-m", "hostA", "6"]);
    assert_eq!(text(&out.stdout), "Job <6> is being forced to run.\n");
    let out = env.run(BKILL, &["-s", "NOSUCH", "101"]);
    assert_eq!(out.status.code(), Some(255));
    let bmod = env!("CARGO_BIN_EXE_bmod");
    let out = env.run(bmod, &["-q", "short", "-Wn", "103"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "Parameters of job <103> are being changed\n"
    );
    let out = env.run(bmod, &["-J", "x", "999"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "Job has already finished. Job not modified.\n"
    );
    let out = env.run(bmod, &["-W", "1O", "103"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "1O: Bad argument for option -W. Job not modified.\n"
    );
    let seen = lock(&seen);
    let m = &seen.modifies[0];
    assert_eq!(
        (m.set.clone(), m.reset.clone()),
        (vec!["q".to_string()], vec!["W".to_string()])
    );
    assert_eq!(m.values.as_ref().map(|v| v.queue.as_str()), Some("short"));
    assert_eq!(seen.modifies.len(), 2);
    let sig = seen
        .signals
        .iter()
        .find(|s| s.kind == SignalKind::Signal as i32)
        .cloned()
        .unwrap_or_default();
    assert_eq!(sig.signal, "USR1");
}

#[test]
fn queue_host_params_and_admin_reports() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    let out = env.run(env!("CARGO_BIN_EXE_bqueues"), &[]);
    assert_eq!(
        text(&out.stdout),
        "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n\
normal           30  Open:Active       -    -    -    -     0     0     0     0\n"
    );
    let out = env.run(env!("CARGO_BIN_EXE_bhosts"), &[]);
    assert_eq!(
        text(&out.stdout),
        "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV \n\
hostA              ok              -      2      0      0      0      0      0\n"
    );
    let out = env.run(env!("CARGO_BIN_EXE_bparams"), &["-a"]);
    assert_eq!(
        text(&out.stdout),
        "lsb.params configuration at Sun Nov 22 09:25:35 2026\n    DEFAULT_QUEUE = normal\n"
    );
    let badmin = env!("CARGO_BIN_EXE_badmin");
    let out = env.run(badmin, &["showconf", "mbd"]);
    let conf = text(&out.stdout);
    let mut lines = conf.lines();
    assert_eq!(
        lines.next(),
        Some("MBD configuration at Sun Nov 22 09:25:35 2026")
    );
    let rest: Vec<&str> = lines.collect();
    assert!(
        rest.iter()
            .all(|l| l.starts_with("    ") && l.contains(" = "))
    );
    for key in [
        "LSB_SHAREDIR = /srv/work",
        "LSF_CONFDIR = ",
        "LSF_UNIT_FOR_LIMITS = MB",
    ] {
        assert!(rest.iter().any(|l| l.contains(key)), "{key} in {conf}");
    }
    let out = env.run(badmin, &["hclose", "-C", "maint", "hostA"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "Close <hostA> ...... done\n");
    let out = env.run(badmin, &["qclose", "normal"]);
    assert_eq!(text(&out.stdout), "Queue <normal> is closed\n");
    let out = env.run(badmin, &["reconfig"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The check, then mbatchd's answer; no sbatchd runs here, so the reconfiguration
    // of hostA's says it could not reach it.
    let err = text(&out.stderr);
    assert!(
        err.starts_with("Checking configuration files ...\n\nNo errors found.\n"),
        "{err}"
    );
    assert!(
        err.contains("Reconfigure slave batch daemon on <hostA> ...... failed : sbatchd on hostA does not answer"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "Reconfiguration initiated\n");
    let seen = lock(&seen);
    assert_eq!(seen.host_ctl[0].message, "maint");
}

#[test]
fn mbatchd_or_lim_down() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let env = Env::new(Some(closed));
    let out = env.run(BJOBS, &[]);
    assert_eq!(out.status.code(), Some(255));
    let err = text(&out.stderr);
    assert!(
        err.contains("batch system daemon not responding ... still trying"),
        "{err}"
    );
    assert!(err.contains("Cannot connect to mbatchd: "), "{err}");
    let out = env.run(BCLUSTERS, &[]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("Cannot connect to mbatchd: "),
        "{}",
        text(&out.stderr)
    );
    let env = Env::new(None);
    let out = env.run(BSUB, &["true"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("LSF is down; try later"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_command_prints_its_version() {
    let env = Env::new(None);
    for exe in [
        BSUB,
        BJOBS,
        BKILL,
        env!("CARGO_BIN_EXE_bstop"),
        env!("CARGO_BIN_EXE_bresume"),
        env!("CARGO_BIN_EXE_bqueues"),
        env!("CARGO_BIN_EXE_bhosts"),
        env!("CARGO_BIN_EXE_bswitch"),
        env!("CARGO_BIN_EXE_bmod"),
        env!("CARGO_BIN_EXE_btop"),
        env!("CARGO_BIN_EXE_bbot"),
        env!("CARGO_BIN_EXE_brun"),
        env!("CARGO_BIN_EXE_bpeek"),
        env!("CARGO_BIN_EXE_bparams"),
        env!("CARGO_BIN_EXE_badmin"),
        BCLUSTERS,
    ] {
        let out = env.run(exe, &["-V"]);
        assert_eq!(out.status.code(), Some(0), "{exe} -V");
        assert!(text(&out.stderr).contains("10.1.0.13"), "{exe}");
        let out = env.run(exe, &["-h"]);
        assert_eq!(out.status.code(), Some(0), "{exe} -h");
        assert!(text(&out.stderr).starts_with("Usage: "), "{exe}");
    }
}

/// A fake sbatchd (reached through `BASALT_SBD_ADDR`) answering bpeek: the output so
/// far, or, with `refuse`, sbatchd's refusal of a user who does not own the job.
#[derive(Clone)]
struct FakeSbd {
    refuse: bool,
}

#[tonic::async_trait]
impl basalt_proto::sbatchd::sbatchd_server::Sbatchd for FakeSbd {
    async fn peek(
        &self,
        _r: Request<basalt_proto::sbatchd::PeekRequest>,
    ) -> Result<Response<basalt_proto::sbatchd::PeekReply>, Status> {
        if self.refuse {
            return Err(Status::permission_denied("User permission denied"));
        }
        Ok(Response::new(basalt_proto::sbatchd::PeekReply {
            output: b"line one\n".to_vec(),
            path: "/home/alice/.lsbatch/1795339535.101.out".into(),
        }))
    }

    async fn status(
        &self,
        _r: Request<basalt_proto::sbatchd::StatusRequest>,
    ) -> Result<Response<basalt_proto::sbatchd::StatusReply>, Status> {
        Err(Status::unimplemented("not a real sbatchd"))
    }
}

/// Start a fake sbatchd on 127.0.0.1:0 in a thread of its own.
fn start_fake_sbd(refuse: bool) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(_) => return,
        };
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
                return;
            };
            let Ok(addr) = listener.local_addr() else {
                return;
            };
            let _ = tx.send(addr);
            let router = tonic::transport::Server::builder().add_service(
                basalt_proto::sbatchd::sbatchd_server::SbatchdServer::new(FakeSbd { refuse }),
            );
            let _ = router
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
                .await;
        });
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("fake sbatchd did not start: {e}"))
}

#[test]
fn bpeek_of_another_users_job_prints_only_the_refusal() {
    let (addr, _seen) = start_fake();
    let env = Env::new(Some(addr));
    let bpeek = env!("CARGO_BIN_EXE_bpeek");
    let refusing = start_fake_sbd(true);
    let out = env
        .command(bpeek, &["101"])
        .env("BASALT_SBD_ADDR", refusing.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run bpeek: {e}"));
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stdout),
        "",
        "nothing on stdout, not even the header"
    );
    assert_eq!(text(&out.stderr), "Job <101>: User permission denied\n");
    // The owner gets the header, then the output.
    let answering = start_fake_sbd(false);
    let out = env
        .command(bpeek, &["101"])
        .env("BASALT_SBD_ADDR", answering.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run bpeek: {e}"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "<< output from stdout >>\nline one\n");
    assert_eq!(text(&out.stderr), "");
}

const BCLUSTERS: &str = env!("CARGO_BIN_EXE_bclusters");

#[test]
fn bclusters_shows_forwarding_queues_links_and_capacity() {
    let (addr, _seen) = start_fake();
    let env = Env::new(Some(addr));
    let out = env.run(BCLUSTERS, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(
        text(&out.stdout),
        "[Job Forwarding Information ]\n\
         \n\
         LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS\n\
         send            send       recv       east       ok\n\
         *end_queue_name send       *ueue_name *y_cluster disc\n\
         recv            recv       -          east       ok\n\
         \n\
         [Resource Lease Information ]\n\
         No resources have been exported or borrowed\n"
    );
    let out = env.run(BCLUSTERS, &["-w"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains("\nlong_send_queue_name send       far_queue_name faraway_cluster disc\n"),
        "{}",
        text(&out.stdout)
    );
    let out = env.run(BCLUSTERS, &["-l"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[Job Forwarding Information ]\n\
         \n\
         LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS\n\
         send            send       recv       east       ok\n\
         *end_queue_name send       *ueue_name *y_cluster disc\n\
         recv            recv       -          east       ok\n\
         \n\
         [Remote Cluster Links ]\n\
         \n\
         CLUSTER         STATUS     MASTER          LAST_CONTACT\n\
         east            ok         hostE           Nov 22 09:25\n\
         faraway_cluster disc       -               -\n\
         \x20Cannot reach the master of cluster faraway_cluster\n\
         \n\
         [Remote Queue Capacity ]\n\
         \n\
         LOCAL_QUEUE     REMOTE     CLUSTER    PRIORITY IMPT_JOBBKLG MC_PEND   ROOM FREE_SLOTS\n\
         send            recv       east             40           10       3      7          4\n\
         *end_queue_name *ueue_name *y_cluster        0            -       0      -          0\n\
         \n\
         [Resource Lease Information ]\n\
         No resources have been exported or borrowed\n"
    );
    // -lw: the same blocks, nothing cut.
    let out = env.run(BCLUSTERS, &["-lw"]);
    assert!(
        text(&out.stdout).contains(
            "\nlong_send_queue_name far_queue_name faraway_cluster        0            -       0      -          0\n"
        ),
        "{}",
        text(&out.stdout)
    );
    // Unknown options and arguments: the complaint and the usage, exit 255.
    let out = env.run(BCLUSTERS, &["-x"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "bclusters: illegal option -- x\nUsage: bclusters [-h] [-V] [-w] [-l]\n"
    );
    let out = env.run(BCLUSTERS, &["east"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "bclusters: illegal argument -- east\nUsage: bclusters [-h] [-V] [-w] [-l]\n"
    );
}

#[test]
fn bclusters_without_multicluster_queues() {
    let (addr, _seen) = start_fake_with(FakeMbd {
        no_mc: true,
        ..Default::default()
    });
    let env = Env::new(Some(addr));
    let out = env.run(BCLUSTERS, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[Job Forwarding Information ]\n\
         No job forwarding queues are configured\n\
         \n\
         [Resource Lease Information ]\n\
         No resources have been exported or borrowed\n"
    );
    let out = env.run(BCLUSTERS, &["-l"]);
    assert_eq!(
        text(&out.stdout),
        "[Job Forwarding Information ]\n\
         No job forwarding queues are configured\n\
         \n\
         [Remote Cluster Links ]\n\
         No remote clusters are configured\n\
         \n\
         [Resource Lease Information ]\n\
         No resources have been exported or borrowed\n"
    );
}

#[test]
fn bjobs_shows_forwarded_jobs_in_both_clusters() {
    let (addr, seen) = start_fake();
    let env = Env::new(Some(addr));
    // 201 was forwarded to east and runs there on hostA (2 slots) and hostB; 5 is a job
    // forwarded here from west; 202 waits in east after coming back once.
    let out = env.run(BJOBS, &["201", "5", "202"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
201     alice   RUN   send       hostA       *hostA@east mc_job     Nov 22 09:25  \n\
\x20                                            hostB@east\n\
5       alice   RUN   recv       hostW@west  hostA       mc_job     Nov 22 09:25  \n\
202     alice   PEND  send       hostA                   mc_job     Nov 22 09:25  \n"
    );
    let out = env.run(BJOBS, &["-w", "201", "5"]);
    assert_eq!(
        text(&out.stdout),
        "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
201     alice   RUN   send       hostA       2*hostA@east:hostB@east mc_job     Nov 22 09:25\n\
5       alice   RUN   recv       hostW@west  hostA       mc_job     Nov 22 09:25\n"
    );

    // -l, submission side.
    let out = env.run(BJOBS, &["-l", "201"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let long = text(&out.stdout);
    assert!(
        long.starts_with(
            "\nJob <201>, User <alice>, Project <default>, Status <RUN>, Queue <send>, Command\n\
             \x20                    <mc_job>\n\
             Sun Nov 22 09:25:35: Submitted from host <hostA>, CWD <$HOME>, 3 Processors Req\n\
             \x20                    uested;\n\
             Sun Nov 22 09:25:37: Forwarded job to cluster <east>, queue <recv>, remote job \n\
             \x20                    ID <5>;\n\
             Sun Nov 22 09:25:40: Started 3 Task(s) on Host(s) <2*hostA@east> <hostB@east>, \n\
             \x20                    Allocated 3 Slot(s) on Host(s) <2*hostA@east> <hostB@east>\n\
             \x20                    ;\n\
             \n\
             \x20SCHEDULING PARAMETERS:\n"
        ),
        "{long}"
    );
    assert!(!long.contains("returned"), "{long}");
    // -l, a pending job that came back once.
    let out = env.run(BJOBS, &["-l", "202"]);
    let long = text(&out.stdout);
    assert!(
        long.contains(
            "uested;\n\
             Sun Nov 22 09:26:35: Forwarded job to cluster <east>, queue <recv>;\n\
             \x20The job returned <1> time(s) from remote clusters without starting;\n\
             \x20PENDING REASONS:\n"
        ),
        "{long}"
    );
    // -l, execution side.
    let out = env.run(BJOBS, &["-l", "5"]);
    let long = text(&out.stdout);
    assert!(
        long.contains(
            "\nSun Nov 22 09:25:35: Submitted from host <hostW@west>, CWD <$HOME>;\n\
             \x20Forwarded from cluster <west>, job ID <201>;\n\
             Sun Nov 22 09:25:40: Started 1 Task(s) on Host(s) <hostA>, "
        ),
        "{long}"
    );
    // Only this cluster's hosts are asked for their thresholds.
    {
        let seen = lock(&seen);
        assert!(
            seen.hosts
                .iter()
                .all(|r| r.hosts.iter().all(|h| !h.contains('@'))),
            "{:?}",
            seen.hosts
                .iter()
                .map(|r| r.hosts.clone())
                .collect::<Vec<_>>()
        );
        assert!(seen.hosts.iter().any(|r| r.hosts == ["hostA"]));
    }

    // -o: LSF's MultiCluster fields and their aliases.
    let out = env.run(
        BJOBS,
        &[
            "-o",
            "jobid forward_cluster fwd_time srcjobid dstjobid source_cluster srcluster: from_host",
            "201",
            "5",
            "202",
            "103",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "JOBID FORWARD_CLUSTER FORWARD_TIME SRCJOBID DSTJOBID SOURCE_CLUSTER SOURCE_CLUSTER  FROM_HOST\n\
201 east Nov 22 09:25 - 5 - -               hostA\n\
5 - - 201 - west west            hostW@west\n\
202 east Nov 22 09:26 - - - -               hostA\n\
103 - - - - - -               hostA\n"
    );
    let out = env.run(
        BJOBS,
        &[
            "-json",
            "-o",
            "jobid forward_cluster forward_time srcjobid dstjobid source_cluster from_host",
            "201",
            "5",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(
        v["RECORDS"][0],
        serde_json::json!({"JOBID": "201", "FORWARD_CLUSTER": "east",
            "FORWARD_TIME": "Nov 22 09:25", "SRCJOBID": "", "DSTJOBID": "5",
            "SOURCE_CLUSTER": "", "FROM_HOST": "hostA"})
    );
    assert_eq!(
        v["RECORDS"][1],
        serde_json::json!({"JOBID": "5", "FORWARD_CLUSTER": "", "FORWARD_TIME": "",
            "SRCJOBID": "201", "DSTJOBID": "", "SOURCE_CLUSTER": "west",
            "FROM_HOST": "hostW@west"})
    );

    // -sum: the forwarded pending job's slots are FWD_PEND.
    let out = env.run(BJOBS, &["-sum", "201", "202", "103"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
3          0          0          0          1          3          \n"
    );

    // bpeek: a job running in another cluster is peeked at there.
    let out = env.run(env!("CARGO_BIN_EXE_bpeek"), &["201"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "Job <201>: Job is running in remote cluster <east> as job <5>; run bpeek there\n"
    );
}
