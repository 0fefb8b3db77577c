//! The gRPC face of mbatchd, `Mbatchd` (the commands) and `MbatchdPeer` (the sbatchds)
//! on one port: each call is verified (the caller is the identity its
//! credential proves, never what the request says), its bounds checked, and translated
//! into a domain message ([`crate::msg`]) for the owner thread; the owner's domain answer
//! is translated back into the wire reply.

use crate::msg::{CtlOutcome, JobIds, JobOutcome, JobSignal, Msg};
use crate::owner::Owner;
use basalt_core::bounds;
use basalt_proto::mbatchd as pb;
use basalt_proto::mbatchd::mbatchd_peer_server::MbatchdPeer;
use basalt_proto::mbatchd::mbatchd_server::Mbatchd;
use basalt_runtime::{Need, Verifier};
use basalt_sched::{Caller, JobKey, JobQuery, SchedError};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

mod pages;
mod reports;
use pages::send_pages;
use reports::{
    REPORT_STREAM_DEPTH, answer_reports, checked_report, report_ack, send_reports,
    serve_report_stream,
};

/// The Mbatchd service.
#[derive(Debug, Clone)]
pub struct MbatchdService {
    owner: Owner,
    auth: Verifier,
    /// `LSF_ROOT_REX`: may root submit jobs?
    root_rex: bool,
    /// MultiCluster: the key other clusters' requests are checked with (None: this
    /// cluster has no RemoteClusters).
    mc: Option<std::sync::Arc<crate::mc::McTrust>>,
}

impl MbatchdService {
    pub(crate) fn new(
        owner: Owner,
        auth: Verifier,
        root_rex: bool,
        mc: Option<std::sync::Arc<crate::mc::McTrust>>,
    ) -> MbatchdService {
        MbatchdService {
            owner,
            auth,
            root_rex,
            mc,
        }
    }

    pub(crate) fn mc_trust(&self) -> Option<&crate::mc::McTrust> {
        self.mc.as_deref()
    }

    pub(crate) fn owner(&self) -> &Owner {
        &self.owner
    }

    pub(crate) fn auth(&self) -> &Verifier {
        &self.auth
    }

    /// The proven caller of a user request: the identity its credential proves. A request
    /// without a valid credential is refused here; the `caller` field a request carries
    /// is never read.
    async fn caller<T>(&self, request: &Request<T>) -> Result<Caller, Status> {
        let who = self.auth.verify(request, Need::User).await?;
        Ok(Caller {
            uid: who.uid,
            user: who.user,
            host: who.host,
        })
    }

    /// A job listing's query (`Jobs`, `JobsPages`), for the verified caller, its ids and
    /// filters bounded; and the request.
    async fn job_query(
        &self,
        request: Request<pb::JobsRequest>,
    ) -> Result<(JobQuery, pb::JobsRequest), Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_ids(&req.ids)?;
        bounded_filter(&req.user, &req.queue, &req.host, &req.job_name)?;
        Ok((basalt_wire::query(&req, &caller), req))
    }

    /// The request must come from the sbatchd of host `claimed`.
    async fn check_sbatchd<T>(&self, request: &Request<T>, claimed: &str) -> Result<(), Status> {
        let who = self.auth.verify(request, Need::Daemon).await?;
        if !basalt_core::same_host(&who.host, claimed) {
            tracing::warn!(from = %who.host, %claimed, "sbatchd request claims another host");
            return Err(Status::permission_denied(basalt_auth::PERMISSION_DENIED));
        }
        Ok(())
    }
}

fn refused(e: SchedError) -> Status {
    match e {
        SchedError::Permission => Status::permission_denied(e.to_string()),
        SchedError::NoJob => Status::not_found(e.to_string()),
        SchedError::BadArgument(m) => Status::invalid_argument(m),
        // MAX_PEND_JOBS: bsub tries again later.
        SchedError::PendLimit { retry_secs }
        | SchedError::UserPendLimit { retry_secs }
        | SchedError::PendSlotLimit { retry_secs }
        | SchedError::UserPendSlotLimit { retry_secs } => {
            let mut s = Status::resource_exhausted(e.to_string());
            if let Ok(v) = retry_secs.to_string().parse() {
                s.metadata_mut()
                    .insert(basalt_proto::RETRY_SECS_METADATA, v);
            }
            s
        }
        e => Status::failed_precondition(e.to_string()),
    }
}

/// The longest `-app` name accepted (LSF's MAX_LSB_NAME_LEN is 60; names in
/// lsb.applications are shorter still, so a longer one is refused either way).
const MAX_APP_NAME: usize = 4096;

/// At most this many options in one bmod request (bsub has fewer than 100).
const MAX_MODIFY_OPTIONS: usize = 128;

/// A request's strings and lists held to `basalt_core::bounds` before the owner sees them.
fn bounded(what: &str, v: &str, max: usize) -> Result<(), Status> {
    if v.len() > max {
        return Err(Status::invalid_argument(format!(
            "Bad argument: {what} is longer than {max} characters"
        )));
    }
    Ok(())
}

fn bounded_list<'a>(
    what: &str,
    v: impl ExactSizeIterator<Item = &'a String>,
    max_count: usize,
    max_len: usize,
) -> Result<(), Status> {
    if v.len() > max_count {
        return Err(Status::invalid_argument(format!(
            "Bad argument: more than {max_count} {what}"
        )));
    }
    for s in v {
        bounded(what, s, max_len)?;
    }
    Ok(())
}

fn bounded_ids(ids: &[pb::JobRef]) -> Result<(), Status> {
    if ids.len() > bounds::MAX_JOB_IDS {
        return Err(Status::invalid_argument(format!(
            "Bad argument: more than {} job ids",
            bounds::MAX_JOB_IDS
        )));
    }
    Ok(())
}

/// The filters a query or a job-control request may carry.
fn bounded_filter(user: &str, queue: &str, host: &str, job_name: &str) -> Result<(), Status> {
    bounded("the user name", user, bounds::MAX_NAME)?;
    bounded("the queue name", queue, bounds::MAX_NAME)?;
    bounded("the host name", host, bounds::MAX_NAME)?;
    bounded("the job name", job_name, bounds::MAX_JOB_NAME)
}

fn keys(ids: &[pb::JobRef]) -> JobIds {
    ids.iter().map(basalt_wire::key_of).collect()
}

fn job_result(key: JobKey, r: Result<String, SchedError>) -> pb::JobResult {
    match r {
        Ok(detail) => pb::JobResult {
            id: Some(basalt_wire::job_ref(key, false)),
            ok: true,
            message: String::new(),
            detail,
        },
        Err(e) => pb::JobResult {
            id: Some(basalt_wire::job_ref(key, false)),
            ok: false,
            message: e.to_string(),
            detail: String::new(),
        },
    }
}

fn job_ctl_reply(outcomes: Vec<JobOutcome>) -> pb::JobCtlReply {
    pb::JobCtlReply {
        results: outcomes
            .into_iter()
            .map(|(key, r)| job_result(key, r))
            .collect(),
    }
}

fn ctl_result(name: &str, r: Result<(), SchedError>) -> pb::CtlResult {
    match r {
        Ok(()) => pb::CtlResult {
            name: name.to_string(),
            ok: true,
            message: String::new(),
        },
        Err(e) => pb::CtlResult {
            name: name.to_string(),
            ok: false,
            message: e.to_string(),
        },
    }
}

fn ctl_reply(outcomes: Vec<CtlOutcome>) -> pb::CtlReply {
    pb::CtlReply {
        results: outcomes
            .into_iter()
            .map(|(name, r)| ctl_result(&name, r))
            .collect(),
    }
}

/// What a `SignalRequest` asks for; a missing (unspecified) or unknown kind is refused
/// rather than taken for a kill.
fn job_signal(req: &pb::SignalRequest) -> Result<JobSignal, Status> {
    Ok(match pb::SignalKind::try_from(req.kind) {
        Ok(pb::SignalKind::Kill) => JobSignal::Kill {
            remove: req.remove,
            as_done: req.as_done,
        },
        Ok(pb::SignalKind::Stop) => JobSignal::Stop,
        Ok(pb::SignalKind::Resume) => JobSignal::Resume,
        Ok(pb::SignalKind::Signal) => JobSignal::Signal(req.signal.clone()),
        Ok(pb::SignalKind::Requeue) => JobSignal::Requeue {
            states: basalt_sched::RequeueStates {
                done: req.requeue_done,
                exit: req.requeue_exit,
                running: req.requeue_running,
            },
            hold: req.hold,
        },
        Ok(pb::SignalKind::Migrate) => JobSignal::Migrate {
            hosts: req.migrate_hosts.clone(),
            force: req.chkpnt_force,
        },
        Ok(pb::SignalKind::Chkpnt) => JobSignal::Chkpnt {
            kill: req.chkpnt_kill,
            force: req.chkpnt_force,
            period: req.chkpnt_period,
        },
        Ok(pb::SignalKind::Unspecified) => {
            return Err(Status::invalid_argument(
                "signal request without a kind (kill, stop, resume or signal)",
            ));
        }
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "signal request of unknown kind {}",
                req.kind
            )));
        }
    })
}

/// Job 0 in a `SignalRequest`: every job of the caller (or of `user` for
/// administrators), filtered by queue, host and job name; for `bresume 0` the suspended
/// ones only (LSF's bresume selects those: a running job is not told it is not
/// suspended).
fn all_jobs(req: &pb::SignalRequest, caller: &Caller, signal: &JobSignal) -> JobQuery {
    let user = match req.user.as_str() {
        "" => Some(caller.user.clone()),
        "all" => None,
        u => Some(u.to_string()),
    };
    JobQuery {
        user,
        queue: (!req.queue.is_empty()).then(|| req.queue.clone()),
        host: (!req.host.is_empty()).then(|| req.host.clone()),
        job_name: (!req.job_name.is_empty()).then(|| req.job_name.clone()),
        states: if matches!(signal, JobSignal::Resume) {
            basalt_core::job::status::PSUSP
                | basalt_core::job::status::USUSP
                | basalt_core::job::status::SSUSP
        } else {
            0
        },
        ..Default::default()
    }
}

#[tonic::async_trait]
impl Mbatchd for MbatchdService {
    async fn submit(
        &self,
        request: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitReply>, Status> {
        let caller = self.caller(&request).await?;
        if caller.uid == 0 && !self.root_rex {
            tracing::warn!("root's job submission refused (LSF_ROOT_REX is not set)");
            return Err(Status::permission_denied(basalt_auth::PERMISSION_DENIED));
        }
        let req = request.into_inner();
        let job = req
            .job
            .ok_or_else(|| Status::invalid_argument("No job specification"))?;
        if job.command.trim().is_empty() && job.restart_job.is_none() {
            return Err(Status::invalid_argument("Missing job command"));
        }
        let mut sub = Box::new(basalt_wire::submission(&job));
        // FROM_HOST is the host the credential proved, not what the client wrote.
        if !caller.host.is_empty() {
            sub.from_host = caller.host.as_str().into();
        }
        // A token is the caller's own (mbatchd looks it up under the proven user); one
        // of the form a forwarded job's carries is refused.
        basalt_sched::bounds::check_submit_token(&req.submit_token).map_err(refused)?;
        sub.submit_token = req.submit_token.into();
        // Every bound before the owner sees it (and so before anything is logged); the
        // core checks the submission again itself.
        basalt_sched::bounds::check_submission(&sub).map_err(refused)?;
        basalt_sched::bounds::check_env(&job.env).map_err(refused)?;
        bounded("the application profile name", &job.app, MAX_APP_NAME)?;
        let r = self
            .owner
            .ask(|reply| Msg::Submit {
                caller,
                sub,
                env: job.env,
                is_script: job.is_script,
                app: job.app,
                reply,
            })
            .await?;
        r.map(|s| {
            Response::new(pb::SubmitReply {
                job_id: s.job_id,
                queue: s.queue,
                default_queue: s.default_queue,
            })
        })
        .map_err(refused)
    }

    async fn jobs(
        &self,
        request: Request<pb::JobsRequest>,
    ) -> Result<Response<pb::JobsReply>, Status> {
        let (query, req) = self.job_query(request).await?;
        let view = self.owner.ask(|reply| Msg::Jobs { query, reply }).await?;
        Ok(Response::new(basalt_wire::jobs_reply(
            &view,
            req.reason_hosts,
        )))
    }

    type JobsPagesStream = ReceiverStream<Result<pb::JobsReply, Status>>;

    async fn jobs_pages(
        &self,
        request: Request<pb::JobsRequest>,
    ) -> Result<Response<Self::JobsPagesStream>, Status> {
        let (query, req) = self.job_query(request).await?;
        let (keys, not_found) = self
            .owner
            .ask(|reply| Msg::JobKeys { query, reply })
            .await?;
        // (Two pages ahead of the reader at most: a slow one holds no more.)
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        self.owner.streams.spawn(send_pages(
            self.owner.clone(),
            keys,
            not_found,
            req.reason_hosts,
            tx,
        ));
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn signal(
        &self,
        request: Request<pb::SignalRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_ids(&req.ids)?;
        bounded_filter(&req.user, &req.queue, &req.host, &req.job_name)?;
        bounded("the signal", &req.signal, 64)?;
        let signal = job_signal(&req)?;
        let mut ids = keys(&req.ids);
        let all = ids
            .iter()
            .any(|(id, _)| *id == 0)
            .then(|| all_jobs(&req, &caller, &signal));
        ids.retain(|(id, _)| *id != 0);
        let out = self
            .owner
            .ask(|reply| Msg::Signal {
                caller,
                ids,
                all,
                signal,
                reply,
            })
            .await?;
        Ok(Response::new(job_ctl_reply(out)))
    }

    async fn switch(
        &self,
        request: Request<pb::SwitchRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_ids(&req.ids)?;
        bounded("the queue name", &req.queue, bounds::MAX_NAME)?;
        let ids = keys(&req.ids);
        let out = self
            .owner
            .ask(|reply| Msg::Switch {
                caller,
                ids,
                queue: req.queue,
                reply,
            })
            .await?;
        Ok(Response::new(job_ctl_reply(out)))
    }

    async fn modify(
        &self,
        request: Request<pb::ModifyRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        let Some(job) = req.job.as_ref() else {
            return Err(Status::invalid_argument("No job specified"));
        };
        if req.set.len() + req.reset.len() > MAX_MODIFY_OPTIONS
            || req.set.iter().chain(&req.reset).any(|n| n.len() > 16)
        {
            return Err(Status::invalid_argument("Too many options"));
        }
        let id = basalt_wire::key_of(job);
        let change = basalt_wire::modify(&req)
            .map_err(|o| Status::invalid_argument(format!("{o}: not an option of bmod")))?;
        if let Some(v) = &req.values {
            basalt_sched::bounds::check_submission(&basalt_wire::submission(v)).map_err(refused)?;
            bounded("the application profile name", &v.app, MAX_APP_NAME)?;
        }
        let (key, r) = self
            .owner
            .ask(|reply| Msg::Modify {
                caller,
                id,
                change: Box::new(change),
                reply,
            })
            .await?;
        Ok(Response::new(job_ctl_reply(vec![(key, r)])))
    }

    async fn r#move(
        &self,
        request: Request<pb::MoveRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        let ids = req.id.iter().map(basalt_wire::key_of).collect();
        let out = self
            .owner
            .ask(|reply| Msg::Move {
                caller,
                ids,
                position: req.position,
                from_bottom: req.from_bottom,
                reply,
            })
            .await?;
        Ok(Response::new(job_ctl_reply(out)))
    }

    async fn force(
        &self,
        request: Request<pb::ForceRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let ids = req.id.iter().map(basalt_wire::key_of).collect();
        let out = self
            .owner
            .ask(|reply| Msg::Force {
                caller,
                ids,
                hosts: req.hosts,
                force: req.force,
                reply,
            })
            .await?;
        Ok(Response::new(job_ctl_reply(out)))
    }

    async fn queues(
        &self,
        request: Request<pb::QueuesRequest>,
    ) -> Result<Response<pb::QueuesReply>, Status> {
        self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "queue names",
            req.queues.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let names = req.queues;
        let view = self.owner.ask(|reply| Msg::Queues { names, reply }).await?;
        Ok(Response::new(basalt_wire::queues_reply(&view)))
    }

    async fn hosts(
        &self,
        request: Request<pb::HostsRequest>,
    ) -> Result<Response<pb::HostsReply>, Status> {
        self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let names = req.hosts;
        let view = self.owner.ask(|reply| Msg::Hosts { names, reply }).await?;
        Ok(Response::new(basalt_wire::hosts_reply(&view)))
    }

    async fn params(
        &self,
        request: Request<pb::ParamsRequest>,
    ) -> Result<Response<pb::ParamsReply>, Status> {
        self.caller(&request).await?;
        let view = self.owner.ask(|reply| Msg::Params { reply }).await?;
        Ok(Response::new(basalt_wire::params_reply(&view)))
    }

    async fn slots(
        &self,
        request: Request<pb::SlotsRequest>,
    ) -> Result<Response<pb::SlotsReply>, Status> {
        self.caller(&request).await?;
        let res_req = request.into_inner().res_req;
        if res_req.len() > bounds::MAX_RES_REQ {
            return Err(Status::invalid_argument("resource requirement too long"));
        }
        let windows = self
            .owner
            .ask(|reply| Msg::Slots { res_req, reply })
            .await?
            .map_err(refused)?;
        Ok(Response::new(pb::SlotsReply {
            windows: windows
                .into_iter()
                .map(|w| pb::SlotWindow {
                    host: w.host,
                    runtime: w.runtime.unwrap_or(-1),
                    slots: w.slots,
                })
                .collect(),
        }))
    }

    async fn host_partitions(
        &self,
        request: Request<pb::HostPartitionsRequest>,
    ) -> Result<Response<pb::HostPartitionsReply>, Status> {
        self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "host partition names",
            req.names.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let names = req.names;
        let (parts, not_found) = self
            .owner
            .ask(|reply| Msg::HostPartitions { names, reply })
            .await?;
        Ok(Response::new(basalt_wire::partitions_reply(
            &parts, not_found,
        )))
    }

    async fn apps(
        &self,
        request: Request<pb::AppsRequest>,
    ) -> Result<Response<pb::AppsReply>, Status> {
        self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "application names",
            req.names.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let names = req.names;
        let (rows, not_found) = self.owner.ask(|reply| Msg::Apps { names, reply }).await?;
        Ok(Response::new(basalt_wire::apps_reply(&rows, not_found)))
    }

    async fn users(
        &self,
        request: Request<pb::UsersRequest>,
    ) -> Result<Response<pb::UsersReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "user names",
            req.users.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        let all = req.users.iter().any(|u| u == "all");
        let mut names: Vec<String> = req.users.into_iter().filter(|u| u != "all").collect();
        if names.is_empty() && !all {
            names.push(caller.user.clone());
        }
        let rows = self
            .owner
            .ask(|reply| Msg::Users { names, all, reply })
            .await?;
        Ok(Response::new(basalt_wire::users_reply(&rows)))
    }

    async fn limits(
        &self,
        request: Request<pb::LimitsRequest>,
    ) -> Result<Response<pb::LimitsReply>, Status> {
        self.caller(&request).await?;
        let (rows, configured) = self.owner.ask(|reply| Msg::Limits { reply }).await?;
        Ok(Response::new(basalt_wire::limits_reply(&rows, configured)))
    }

    async fn queue_ctl(
        &self,
        request: Request<pb::QueueCtlRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "queue names",
            req.queues.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        bounded("the message", &req.message, bounds::MAX_MESSAGE)?;
        let out = self
            .owner
            .ask(|reply| Msg::QueueCtl {
                caller,
                op: req.op as u32,
                queues: req.queues,
                message: req.message,
                reply,
            })
            .await?;
        Ok(Response::new(ctl_reply(out)))
    }

    async fn host_ctl(
        &self,
        request: Request<pb::HostCtlRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let req = request.into_inner();
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        bounded("the message", &req.message, bounds::MAX_MESSAGE)?;
        let out = self
            .owner
            .ask(|reply| Msg::HostCtl {
                caller,
                op: req.op as u32,
                hosts: req.hosts,
                message: req.message,
                reply,
            })
            .await?;
        Ok(Response::new(ctl_reply(out)))
    }

    async fn reconfig(
        &self,
        request: Request<pb::ReconfigRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let restart = request.get_ref().restart;
        let r = self
            .owner
            .ask(|reply| Msg::Reconfig {
                caller,
                restart,
                reply,
            })
            .await?;
        r.map(|()| Response::new(pb::CtlReply { results: vec![] }))
            .map_err(refused)
    }

    async fn clusters(
        &self,
        request: Request<pb::ClustersRequest>,
    ) -> Result<Response<pb::ClustersReply>, Status> {
        self.caller(&request).await?;
        self.owner
            .ask(|reply| Msg::Clusters { reply })
            .await
            .map(Response::new)
    }
}

/// What the sbatchds ask (daemon credentials of the host they name only).
#[tonic::async_trait]
impl MbatchdPeer for MbatchdService {
    async fn sbd_hello(
        &self,
        request: Request<pb::SbdHelloRequest>,
    ) -> Result<Response<pb::SbdHelloReply>, Status> {
        self.check_sbatchd(&request, &request.get_ref().host)
            .await?;
        let req = request.into_inner();
        let jobs: Vec<basalt_sched::HostJob> = req
            .jobs
            .iter()
            .filter_map(|j| {
                j.id.as_ref().map(|id| basalt_sched::HostJob {
                    key: (id.job_id, id.idx),
                    attempt: j.attempt,
                    state: j.state,
                    pid: j.pid,
                    pgid: j.pgid,
                })
            })
            .collect();
        let a = self
            .owner
            .ask(|reply| Msg::Hello {
                host: req.host,
                jobs,
                reply,
            })
            .await?;
        Ok(Response::new(pb::SbdHelloReply {
            epoch: a.epoch,
            jobs: a
                .jobs
                .into_iter()
                .map(|j| pb::SbdJob {
                    id: Some(basalt_wire::job_ref(j.key, false)),
                    attempt: j.attempt,
                    state: j.state,
                    pid: j.pid,
                    pgid: j.pgid,
                })
                .collect(),
            sbd_sleep_time: a.sbd_sleep_time,
            job_terminate_interval: a.job_terminate_interval,
            hello_interval: a.hello_interval,
        }))
    }

    async fn report_job(
        &self,
        request: Request<pb::JobReport>,
    ) -> Result<Response<pb::ReportAck>, Status> {
        self.check_sbatchd(&request, &request.get_ref().host)
            .await?;
        let report = checked_report(&request.into_inner())?;
        let (ack, epoch) = self
            .owner
            .ask(|reply| Msg::Report {
                report: Some(report),
                reply,
            })
            .await?;
        Ok(Response::new(report_ack(ack, epoch)))
    }

    async fn report_jobs(
        &self,
        request: Request<pb::JobReports>,
    ) -> Result<Response<pb::ReportAcks>, Status> {
        let Some(first) = request.get_ref().reports.first() else {
            return Ok(Response::new(pb::ReportAcks::default()));
        };
        let host = first.host.clone();
        self.check_sbatchd(&request, &host).await?;
        let answers = send_reports(&self.owner, &host, &request.into_inner().reports)?;
        Ok(Response::new(answer_reports(&self.owner, answers).await?))
    }

    type ReportStreamStream = ReceiverStream<Result<pb::ReportAcks, Status>>;

    async fn report_stream(
        &self,
        request: Request<Streaming<pb::JobReports>>,
    ) -> Result<Response<Self::ReportStreamStream>, Status> {
        let who = self.auth.verify(&request, Need::Daemon).await?;
        let (tx, rx) = tokio::sync::mpsc::channel(REPORT_STREAM_DEPTH);
        self.owner.streams.spawn(serve_report_stream(
            self.owner.clone(),
            who.host,
            request.into_inner(),
            tx,
        ));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
