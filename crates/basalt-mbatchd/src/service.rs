//! The gRPC face of mbatchd: each call becomes a message to the owner thread; the
//! query answers (queues, hosts, params) are built here from the core's state.

use crate::{Msg, Owner, convert};
use basalt_config::Config;
use basalt_core::bounds;
use basalt_proto::mbatchd as pb;
use basalt_proto::mbatchd::mbatchd_server::Mbatchd;
use basalt_runtime::{Need, Verifier};
use basalt_sched::{Sched, SchedError};
use std::time::SystemTime;
use tonic::{Request, Response, Status};

/// The Mbatchd service.
#[derive(Debug, Clone)]
pub struct MbatchdService {
    owner: Owner,
    auth: Verifier,
    /// `LSF_ROOT_REX`: may root submit jobs?
    root_rex: bool,
}

impl MbatchdService {
    pub(crate) fn new(owner: Owner, auth: Verifier, root_rex: bool) -> MbatchdService {
        MbatchdService {
            owner,
            auth,
            root_rex,
        }
    }

    /// The proven caller of a user request (what the request itself says is ignored).
    async fn caller<T>(&self, request: &Request<T>) -> Result<pb::Caller, Status> {
        let who = self.auth.verify(request, Need::User).await?;
        Ok(pb::Caller {
            uid: who.uid,
            gid: who.gid,
            user: who.user,
            host: who.host,
        })
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
        e => Status::failed_precondition(e.to_string()),
    }
}

/// The longest `-app` name accepted (LSF's MAX_LSB_NAME_LEN is 60; names in
/// lsb.applications are shorter still, so a longer one is refused either way).
const MAX_APP_NAME: usize = 4096;

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

fn check_protocol(p: Option<&basalt_proto::common::ProtocolVersion>) -> Result<(), Status> {
    if p.is_none() || basalt_proto::compatible(p) {
        Ok(())
    } else {
        Err(Status::failed_precondition(
            "incompatible protocol version; upgrade the commands or daemons",
        ))
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
        let mut req = request.into_inner();
        req.caller = Some(caller);
        check_protocol(req.protocol.as_ref())?;
        let job = req
            .job
            .ok_or_else(|| Status::invalid_argument("No job specification"))?;
        if job.command.trim().is_empty() {
            return Err(Status::invalid_argument("Missing job command"));
        }
        let caller = convert::caller(req.caller.as_ref());
        let mut sub = Box::new(convert::submission(&job));
        // FROM_HOST is the host the credential proved, not what the client wrote.
        if !caller.host.is_empty() {
            sub.from_host = caller.host.clone();
        }
        if req.submit_token.len() > 256 {
            return Err(Status::invalid_argument("Submission token too long"));
        }
        sub.submit_token = req.submit_token;
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
        r.map(Response::new).map_err(refused)
    }

    async fn jobs(
        &self,
        request: Request<pb::JobsRequest>,
    ) -> Result<Response<pb::JobsReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_ids(&req.ids)?;
        bounded_filter(&req.user, &req.queue, &req.host, &req.job_name)?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Jobs { req, reply }).await?,
        ))
    }

    async fn signal(
        &self,
        request: Request<pb::SignalRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_ids(&req.ids)?;
        bounded_filter(&req.user, &req.queue, &req.host, &req.job_name)?;
        bounded("the signal", &req.signal, 64)?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Signal { req, reply }).await?,
        ))
    }

    async fn switch(
        &self,
        request: Request<pb::SwitchRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_ids(&req.ids)?;
        bounded("the queue name", &req.queue, bounds::MAX_NAME)?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Switch { req, reply }).await?,
        ))
    }

    async fn r#move(
        &self,
        request: Request<pb::MoveRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Move { req, reply }).await?,
        ))
    }

    async fn force(
        &self,
        request: Request<pb::ForceRequest>,
    ) -> Result<Response<pb::JobCtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Force { req, reply }).await?,
        ))
    }

    async fn queues(
        &self,
        request: Request<pb::QueuesRequest>,
    ) -> Result<Response<pb::QueuesReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_list(
            "queue names",
            req.queues.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Queues { req, reply }).await?,
        ))
    }

    async fn hosts(
        &self,
        request: Request<pb::HostsRequest>,
    ) -> Result<Response<pb::HostsReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Hosts { req, reply }).await?,
        ))
    }

    async fn params(
        &self,
        request: Request<pb::ParamsRequest>,
    ) -> Result<Response<pb::ParamsReply>, Status> {
        self.caller(&request).await?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Params { reply }).await?,
        ))
    }

    async fn queue_ctl(
        &self,
        request: Request<pb::QueueCtlRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_list(
            "queue names",
            req.queues.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        bounded("the message", &req.message, bounds::MAX_MESSAGE)?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::QueueCtl { req, reply }).await?,
        ))
    }

    async fn host_ctl(
        &self,
        request: Request<pb::HostCtlRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        bounded_list(
            "host names",
            req.hosts.iter(),
            bounds::MAX_ASKED_HOSTS,
            bounds::MAX_NAME,
        )?;
        bounded("the message", &req.message, bounds::MAX_MESSAGE)?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::HostCtl { req, reply }).await?,
        ))
    }

    async fn reconfig(
        &self,
        request: Request<pb::ReconfigRequest>,
    ) -> Result<Response<pb::CtlReply>, Status> {
        let caller = self.caller(&request).await?;
        let mut req = request.into_inner();
        req.caller = Some(caller);
        let r = self.owner.ask(|reply| Msg::Reconfig { req, reply }).await?;
        r.map(Response::new).map_err(refused)
    }

    async fn sbd_hello(
        &self,
        request: Request<pb::SbdHelloRequest>,
    ) -> Result<Response<pb::SbdHelloReply>, Status> {
        self.check_sbatchd(&request, &request.get_ref().host)
            .await?;
        let req = request.into_inner();
        check_protocol(req.protocol.as_ref())?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Hello { req, reply }).await?,
        ))
    }

    async fn report_job(
        &self,
        request: Request<pb::JobReport>,
    ) -> Result<Response<pb::ReportAck>, Status> {
        self.check_sbatchd(&request, &request.get_ref().host)
            .await?;
        let req = request.into_inner();
        check_protocol(req.protocol.as_ref())?;
        Ok(Response::new(
            self.owner.ask(|reply| Msg::Report { req, reply }).await?,
        ))
    }
}

fn limit(v: Option<u32>) -> i64 {
    v.map_or(-1, i64::from)
}

pub(crate) fn queues_reply(s: &Sched, req: &pb::QueuesRequest) -> pb::QueuesReply {
    let mut out = pb::QueuesReply::default();
    for name in &req.queues {
        if !s.queues().iter().any(|q| &q.name == name) {
            out.not_found.push(name.clone());
        }
    }
    let mut queues: Vec<&basalt_sched::Queue> = s
        .queues()
        .iter()
        .filter(|q| req.queues.is_empty() || req.queues.contains(&q.name))
        .collect();
    queues.sort_by_key(|q| std::cmp::Reverse(q.priority));
    for q in queues {
        let (njobs, pend, run, ssusp, ususp) = s.queue_counts(&q.name);
        out.queues.push(pb::QueueInfo {
            name: q.name.clone(),
            description: q.description.clone(),
            priority: q.priority,
            nice: q.nice.unwrap_or(0),
            open: q.open,
            active: q.active && s.queue_windows_open(q),
            inactive_reason: if !q.active {
                "Inact_Adm".into()
            } else if !s.queue_windows_open(q) {
                "Inact_Win".into()
            } else {
                String::new()
            },
            max_jobs: limit(q.qjob_limit),
            jl_u: limit(q.ujob_limit),
            jl_p: q.pjob_limit.unwrap_or(-1.0),
            jl_h: limit(q.hjob_limit),
            njobs,
            pend,
            run,
            ssusp,
            ususp,
            rsv: 0,
            is_default: q.name == s.config().default_queue,
            // bqueues prints an empty list as "all"; a restricted queue nobody may use
            // (its user group could not be resolved) says so.
            users: if q.users_all {
                if q.users_except.is_empty() {
                    Vec::new()
                } else {
                    std::iter::once("all".to_owned())
                        .chain(q.users_except.iter().map(|u| format!("~{u}")))
                        .collect()
                }
            } else if q.users.is_empty() {
                vec!["none".into()]
            } else {
                q.users.clone()
            },
            hosts: q.hosts.clone(),
            administrators: q.administrators.clone(),
            res_req: q.res_req.clone(),
            run_window: q.run_window.clone(),
            dispatch_window: q.dispatch_window.clone(),
            settings: q.settings.clone().into_iter().collect(),
            load_sched: q.load_sched.clone().into_iter().collect(),
            load_stop: q.load_stop.clone().into_iter().collect(),
        });
    }
    out
}

pub(crate) fn hosts_reply(s: &Sched, req: &pb::HostsRequest) -> pb::HostsReply {
    let mut out = pb::HostsReply::default();
    for name in &req.hosts {
        if s.host_name(name).is_none() {
            out.not_found.push(name.clone());
        }
    }
    for h in s.hosts().iter().filter(|h| {
        req.hosts.is_empty() || req.hosts.iter().any(|n| basalt_core::same_host(n, &h.name))
    }) {
        let status = s.host_status(h);
        let (njobs, run, ssusp, ususp) = s.host_counts(&h.name);
        out.hosts.push(pb::BatchHostInfo {
            name: h.name.clone(),
            status: status.short().into(),
            long_status: status.long().into(),
            jl_u: limit(h.jl_u),
            max: limit(h.max_slots()),
            njobs,
            run,
            ssusp,
            ususp,
            rsv: 0,
            message: h.message.clone(),
            cpu_factor: h.cpu_factor,
            load_sched: h.load_sched.clone().into_iter().collect(),
            load_stop: h.load_stop.clone().into_iter().collect(),
            load: h
                .load
                .iter()
                .map(|(k, v)| basalt_proto::common::LoadValue {
                    name: k.clone(),
                    value: *v,
                })
                .collect(),
            dispatch_window: String::new(),
        });
    }
    out
}

pub(crate) fn params_reply(c: &Config, s: &Sched, started: SystemTime) -> pb::ParamsReply {
    let p = &c.batch.params;
    let kv = |k: &str, v: String| pb::KeyValue {
        key: k.into(),
        value: v,
    };
    let opt = |v: Option<u32>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let mut params = vec![
        kv("DEFAULT_QUEUE", p.default_queue.join(" ")),
        kv("MBD_SLEEP_TIME", p.mbd_sleep_time_secs.to_string()),
        kv("SBD_SLEEP_TIME", p.sbd_sleep_time_secs.to_string()),
        kv("JOB_ACCEPT_INTERVAL", p.job_accept_interval.to_string()),
        kv("CLEAN_PERIOD", p.clean_period_secs.to_string()),
        kv("MAX_JOB_NUM", p.max_job_num.to_string()),
        kv("PG_SUSP_IT", p.pg_susp_it_secs.to_string()),
        kv("MAX_SBD_FAIL", p.max_sbd_fail.to_string()),
        kv("MAX_JOBID", p.max_jobid.to_string()),
        kv("MAX_JOB_ARRAY_SIZE", p.max_job_array_size.to_string()),
        kv(
            "JOB_TERMINATE_INTERVAL",
            p.job_terminate_interval_secs.to_string(),
        ),
        kv("DEFAULT_PROJECT", p.default_project.clone()),
        kv("RUSAGE_UPDATE_RATE", p.rusage_update_rate.to_string()),
        kv("RUSAGE_UPDATE_PERCENT", p.rusage_update_percent.to_string()),
        kv("MAX_PREEMPT_JOBS", p.max_preempt_jobs.to_string()),
        kv("CPU_TIME_FACTOR", p.cpu_time_factor.to_string()),
        kv("RUN_TIME_FACTOR", p.run_time_factor.to_string()),
        kv("RUN_JOB_FACTOR", p.run_job_factor.to_string()),
        kv("HIST_HOURS", p.hist_hours.to_string()),
        kv("MAX_JOB_PREEMPT", opt(p.max_job_preempt)),
        kv("MAX_ACCT_ARCHIVE_FILE", opt(p.max_acct_archive_file)),
    ];
    for (k, v) in &p.other {
        params.push(kv(k, v.clone()));
    }
    let mut mbd_conf: Vec<pb::KeyValue> = c
        .lsf_conf
        .iter()
        .map(|(k, v)| kv(k, v.to_string()))
        .collect();
    let ensure = |list: &mut Vec<pb::KeyValue>, k: &str, v: String| {
        if !list.iter().any(|x| x.key == k) {
            list.push(pb::KeyValue {
                key: k.into(),
                value: v,
            });
        }
    };
    ensure(
        &mut mbd_conf,
        "LSB_SHAREDIR",
        c.sharedir().display().to_string(),
    );
    ensure(
        &mut mbd_conf,
        "LSF_CONFDIR",
        c.confdir.display().to_string(),
    );
    ensure(&mut mbd_conf, "LSF_ENVDIR", c.envdir.display().to_string());
    ensure(&mut mbd_conf, "LSF_UNIT_FOR_LIMITS", "KB".into());
    pb::ParamsReply {
        params,
        default_queues: vec![s.config().default_queue.clone()],
        mbd_sleep_time: p.mbd_sleep_time_secs,
        sbd_sleep_time: p.sbd_sleep_time_secs,
        job_accept_interval: p.job_accept_interval,
        mbd_conf,
        started_at: started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
        config_problem: String::new(),
    }
}
