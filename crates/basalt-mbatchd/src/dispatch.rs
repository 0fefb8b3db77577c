//! Dispatch and signals to the sbatchds, carried out once the events they depend on are
//! durable: the start order (with the job's spec and spooled file; on the host's
//! long-lived `StartStream` once it is open, else a `StartJob` call), its outcome
//! classified for the core (not started / maybe started / refused), and `SignalJob`.
//!
//! A dispatch reuses the connection to a host's sbatchd only while it is proven: an
//! answer came on it within [`REUSE_WINDOW`] (a drain sends one dispatch after another
//! on one connection). Otherwise it makes a new one, so that a host cut off by a
//! partition is found unreachable when connecting (the job is requeued at once) rather
//! than after sending an order on a dead connection (which can only be classified
//! "maybe started").

use crate::msg::Msg;
use crate::owner::OwnerState;
use basalt_config::Config;
use basalt_proto::sbatchd as sbpb;
use basalt_sched::{Effect, JobKey, SbdAction};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tracing::warn;

/// How recent an answer on a kept connection must be for a dispatch to reuse it.
pub(crate) const REUSE_WINDOW: Duration = Duration::from_millis(500);

type PeerClient = sbpb::sbatchd_peer_client::SbatchdPeerClient<basalt_runtime::AuthChannel>;

/// One kept client per sbatchd host, with when an answer last came on it.
///
/// The connections to sbatchds are bounded by a budget taken from the open-file limit
/// ([`Peers::budget_for`]): at most `budget` kept, and at most `budget` more opened by
/// orders and signals under way (each waits for a permit of `conns` first). A burst of
/// dispatches to 10,000 hosts opened a connection to each at once, beside the
/// sbatchds' own 10,000 to mbatchd, and every call failed with "Too many open files"
/// (this machine caps a process at 20,000).
pub(crate) struct Peers {
    kept: HashMap<String, Kept>,
    /// When the kept clients were last swept of those no dispatch may reuse.
    swept: Option<Instant>,
    budget: usize,
    /// Connections opened by orders and signals under way, each held while its call is.
    conns: Arc<tokio::sync::Semaphore>,
}

/// A connection an order or a signal opens: taken before its call, given back after.
pub(crate) type ConnPermit = Option<tokio::sync::OwnedSemaphorePermit>;

/// Kept clients are swept of the unproven ones (a dispatch would make a new
/// connection anyway) once there are this many, at most every [`SWEEP_EVERY`]: a
/// connection to every host of a large cluster would double mbatchd's descriptors.
const SWEEP_ABOVE: usize = 256;
const SWEEP_EVERY: Duration = Duration::from_secs(1);

struct Kept {
    client: PeerClient,
    proof: Proof,
    /// The start orders' stream on this client's connection, once a dispatch on the
    /// proven connection asked for it.
    stream: Option<StartStream>,
}

/// When an answer last came on a kept client's connection; a dispatch's copy marks it
/// when its answer comes.
#[derive(Clone)]
pub(crate) struct Proof {
    /// Milliseconds after `base` of the newest answer (0: none yet).
    answered: Arc<AtomicU64>,
    base: Instant,
}

impl Proof {
    fn new(base: Instant) -> Proof {
        Proof {
            answered: Arc::new(AtomicU64::new(0)),
            base,
        }
    }

    fn answered(&self) {
        let ms = u64::try_from(self.base.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.answered.store(ms, Ordering::Release);
    }

    /// Did an answer come within [`REUSE_WINDOW`] before `now`?
    fn proven(&self, now: Instant) -> bool {
        let at = self.answered.load(Ordering::Acquire);
        at > 0
            && now.saturating_duration_since(self.base + Duration::from_millis(at)) < REUSE_WINDOW
    }
}

impl Peers {
    /// Peers within `budget` connections kept and `budget` more under way.
    pub(crate) fn new(budget: usize) -> Peers {
        Peers {
            kept: HashMap::new(),
            swept: None,
            budget: budget.max(1),
            conns: Arc::new(tokio::sync::Semaphore::new(budget.max(1))),
        }
    }

    /// The budget for an open-file limit of `nofile`: an eighth each for the kept
    /// connections and those under way, at least 32 (the rest is for the sbatchds' and
    /// the clients' connections to mbatchd, and its files).
    pub(crate) fn budget_for(nofile: u64) -> usize {
        usize::try_from(nofile / 8).unwrap_or(usize::MAX).max(32)
    }

    /// The connections to sbatchds mbatchd may hold at most (kept and under way).
    pub(crate) fn most_connections(&self) -> usize {
        self.budget.saturating_mul(2)
    }

    /// Wait for room for one more connection under way (see [`Peers`]).
    pub(crate) fn conn_slots(&self) -> Arc<tokio::sync::Semaphore> {
        self.conns.clone()
    }

    /// The client a dispatch to `host` uses: the kept one while proven, else a new one
    /// (kept from now on, unless `budget` clients are kept and proven: then it is for
    /// this order alone). The last item: whether the order opens a connection (it then
    /// takes a permit of [`Peers::conn_slots`] for its call).
    ///
    /// On a proven connection, its start stream too (opened when missing or closed;
    /// used once open). Must run inside the runtime (it may start the stream's task).
    fn client(
        &mut self,
        config: &Config,
        host: &str,
        auth: &basalt_runtime::Authenticator,
    ) -> Result<(PeerClient, Proof, Option<StartStream>, bool), String> {
        let now = Instant::now();
        if let Some(k) = self.kept.get_mut(host)
            && k.proof.proven(now)
        {
            if k.stream.as_ref().is_none_or(StartStream::closed) {
                k.stream = Some(StartStream::open(k.client.clone()));
            }
            return Ok((k.client.clone(), k.proof.clone(), k.stream.clone(), false));
        }
        let client = basalt_runtime::sbatchd_peer_channel(config, host, ORDER_TIMEOUT, auth)
            .map_err(|e| e.to_string())?;
        self.kept.remove(host);
        if (self.kept.len() >= SWEEP_ABOVE
            && self
                .swept
                .is_none_or(|t| now.saturating_duration_since(t) >= SWEEP_EVERY))
            || self.kept.len() >= self.budget
        {
            // (A dispatch under way holds its own copy of its client.)
            self.kept.retain(|_, k| k.proof.proven(now));
            self.swept = Some(now);
        }
        let proof = Proof::new(now);
        if self.kept.len() < self.budget {
            self.kept.insert(
                host.to_owned(),
                Kept {
                    client: client.clone(),
                    proof: proof.clone(),
                    stream: None,
                },
            );
        }
        Ok((client, proof, None, true))
    }

    /// How many clients are kept (tests).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.kept.len()
    }
}

/// Take a connection's permit (see [`Peers`]); the semaphore is never closed.
async fn conn_permit(slots: Arc<tokio::sync::Semaphore>) -> ConnPermit {
    slots.acquire_owned().await.ok()
}

/// How long a start order may wait for its answer (on a call or on the stream).
const ORDER_TIMEOUT: Duration = Duration::from_secs(10);

/// What became of an order given to a [`StartStream`].
enum StreamAnswer {
    /// sbatchd answered it.
    Reply(sbpb::StartJobReply),
    /// It went out and no answer came (the stream broke, or the answer is late): sbatchd
    /// may have started the job.
    Lost(String),
    /// It never went out (the stream is not open): the order, to send another way.
    NotSent(Box<sbpb::StartJobRequest>),
}

type StreamCall = (
    sbpb::StartJobRequest,
    tokio::sync::oneshot::Sender<StreamAnswer>,
);

const STREAM_OPENING: u8 = 0;
const STREAM_OPEN: u8 = 1;
const STREAM_CLOSED: u8 = 2;
const STREAM_UNSUPPORTED: u8 = 3;

/// The start orders to one sbatchd on one long-lived `StartStream` on the kept
/// connection (one HTTP/2 stream for all of them, instead of a call per job): each
/// order is tagged and its answer, which comes when the job has started, handed back by
/// its tag. Opened in the background; until it is open (and once it has closed, or if
/// sbatchd does not have it) dispatches use `StartJob`. When it breaks or an answer is
/// late, the orders that went out on it are "maybe started", as a call that got no
/// answer.
#[derive(Clone)]
pub(crate) struct StartStream {
    tx: tokio::sync::mpsc::UnboundedSender<StreamCall>,
    state: Arc<std::sync::atomic::AtomicU8>,
}

impl StartStream {
    /// Start the stream's task (inside the runtime); it ends once the stream breaks or
    /// every copy of the handle is dropped and the orders on it are answered.
    fn open(client: PeerClient) -> StartStream {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let state = Arc::new(std::sync::atomic::AtomicU8::new(STREAM_OPENING));
        tokio::spawn(start_stream(client, state.clone(), rx));
        StartStream { tx, state }
    }

    fn is_open(&self) -> bool {
        self.state.load(Ordering::Acquire) == STREAM_OPEN
    }

    /// Closed (broken, or never opened): a new one may be opened. Not when sbatchd does
    /// not have the call.
    fn closed(&self) -> bool {
        self.state.load(Ordering::Acquire) == STREAM_CLOSED
    }

    async fn call(&self, req: sbpb::StartJobRequest) -> StreamAnswer {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if let Err(e) = self.tx.send((req, tx)) {
            return StreamAnswer::NotSent(Box::new(e.0.0));
        }
        rx.await
            .unwrap_or_else(|_| StreamAnswer::Lost("the start stream stopped".into()))
    }
}

/// The task of a [`StartStream`].
async fn start_stream(
    mut client: PeerClient,
    state: Arc<std::sync::atomic::AtomicU8>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<StreamCall>,
) {
    let (out, out_rx) = tokio::sync::mpsc::unbounded_channel::<sbpb::StartJobRequest>();
    let opened = tokio::time::timeout(
        ORDER_TIMEOUT,
        client.start_stream(tokio_stream::wrappers::UnboundedReceiverStream::new(out_rx)),
    )
    .await;
    let mut inbound = match opened {
        Ok(Ok(r)) => r.into_inner(),
        Ok(Err(e)) => {
            let unsupported = e.code() == tonic::Code::Unimplemented;
            tracing::debug!("start stream not opened: {}", e.message());
            state.store(
                if unsupported {
                    STREAM_UNSUPPORTED
                } else {
                    STREAM_CLOSED
                },
                Ordering::Release,
            );
            return not_sent(rx);
        }
        Err(_) => {
            state.store(STREAM_CLOSED, Ordering::Release);
            return not_sent(rx);
        }
    };
    state.store(STREAM_OPEN, Ordering::Release);
    let mut waiting: std::collections::BTreeMap<
        u64,
        (
            tokio::time::Instant,
            tokio::sync::oneshot::Sender<StreamAnswer>,
        ),
    > = std::collections::BTreeMap::new();
    let mut next_tag: u64 = 1;
    let mut accepting = true;
    let broken = loop {
        let late = waiting
            .first_key_value()
            .map(|(_, (sent, _))| *sent + ORDER_TIMEOUT);
        tokio::select! {
            call = rx.recv(), if accepting => match call {
                Some((mut req, reply)) => {
                    req.tag = next_tag;
                    if let Err(e) = out.send(req) {
                        let _ = reply.send(StreamAnswer::NotSent(Box::new(e.0)));
                        break "the start stream broke".to_owned();
                    }
                    waiting.insert(next_tag, (tokio::time::Instant::now(), reply));
                    next_tag += 1;
                }
                None => {
                    accepting = false;
                    if waiting.is_empty() {
                        break String::new();
                    }
                }
            },
            answer = inbound.message() => match answer {
                Ok(Some(a)) => {
                    if let Some((_, reply)) = waiting.remove(&a.tag) {
                        let _ = reply.send(StreamAnswer::Reply(a));
                    }
                    if !accepting && waiting.is_empty() {
                        break String::new();
                    }
                }
                Ok(None) => break "sbatchd closed the start stream".to_owned(),
                Err(e) => break e.message().to_owned(),
            },
            _ = sleep_until_or_never(late) => break "a start order's answer is late".to_owned(),
        }
    };
    state.store(STREAM_CLOSED, Ordering::Release);
    if !broken.is_empty() {
        tracing::debug!("start stream closed: {broken}");
    }
    for (_, (_, reply)) in waiting {
        let _ = reply.send(StreamAnswer::Lost(broken.clone()));
    }
    not_sent(rx);
}

/// Hand back the orders queued on a stream that will not send them.
fn not_sent(mut rx: tokio::sync::mpsc::UnboundedReceiver<StreamCall>) {
    rx.close();
    while let Ok((req, reply)) = rx.try_recv() {
        let _ = reply.send(StreamAnswer::NotSent(Box::new(req)));
    }
}

async fn sleep_until_or_never(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a dispatch did not start the job.
#[derive(Debug, Clone)]
pub(crate) enum DispatchError {
    /// sbatchd could not be reached (no connection, or it answered that it refuses
    /// orders now): the job did not start there and is requeued.
    Unreachable(String),
    /// The call failed after the request went out (timeout, broken connection): sbatchd
    /// may have started the job. The host's hellos decide (see
    /// `Sched::dispatch_uncertain`).
    Uncertain(String),
    /// sbatchd answered and refused (unknown user, ...): the job cannot start there.
    Refused(String),
}

impl OwnerState {
    /// Send dispatches and signals (after the events they depend on are durable).
    pub(crate) fn carry_out(&mut self, effects: Vec<Effect>) {
        // The orders' events are durable now (the dispatch latency counts from here).
        let durable_at = Instant::now();
        for e in effects {
            match e {
                Effect::Log(_) | Effect::Acct(_) => {}
                e @ (Effect::McForward { .. } | Effect::McControl { .. }) => self.mc_carry(e),
                Effect::RemoveJobFile { job_file } => self.journal.remove_spooled(&job_file),
                Effect::Dispatch { key, attempt, host } => {
                    let Some(spec) = self.job_spec(key, attempt) else {
                        continue;
                    };
                    // Read here, like the owner's other work on the spool (which wrote it):
                    // a small record, and no hand-over to a blocking thread on the way to
                    // the host.
                    // bmod -Z: the spooled file keeps the submitted command; the new one
                    // goes in its place on the way out.
                    let new_command =
                        self.sched.jobs().get(&key).is_some_and(|j| {
                            j.sub.options2 & basalt_core::job::sub2::MODIFY_CMD != 0
                        });
                    let job_file = self
                        .journal
                        .job_file(&spec.job_file_name)
                        .and_then(|bytes| {
                            if !new_command {
                                return Ok(bytes);
                            }
                            std::str::from_utf8(&bytes)
                                .ok()
                                .and_then(|t| basalt_core::jobfile::with_command(t, &spec.command))
                                .map(String::into_bytes)
                                .ok_or_else(|| {
                                    format!(
                                        "job file {}: no place for the command bmod -Z gave",
                                        spec.job_file_name
                                    )
                                })
                        })
                        .map_err(DispatchError::Refused);
                    // A copy in info/ for LSF tools, once the order is on its way.
                    let info_copy = self.journal.in_spool(&spec.job_file_name).then(|| {
                        (
                            self.journal.logdir().to_path_buf(),
                            spec.job_file_name.clone(),
                        )
                    });
                    // A new channel starts its connection task on the runtime.
                    let client = {
                        let _in_runtime = self.rt.enter();
                        self.peers.client(&self.config, &host, &self.auth)
                    };
                    let tx = self.tx.clone();
                    let epoch = self.sched.epoch();
                    let latency = self.metrics.dispatch_latency.clone();
                    let slots = self.peers.conn_slots();
                    self.orders.spawn_on(&self.rt, async move {
                        let result = match (client, job_file) {
                            (_, Err(e)) => Err(e),
                            (Ok((client, proof, stream, opens)), Ok(bytes)) => {
                                let _permit = match opens {
                                    true => conn_permit(slots).await,
                                    false => None,
                                };
                                let copy = info_copy.map(|(dir, name)| (dir, name, bytes.clone()));
                                let r = dispatch(client, proof, stream, epoch, spec, bytes).await;
                                if let Some((dir, name, bytes)) = copy {
                                    crate::journal::place_info_copy(&dir, &name, &bytes);
                                }
                                r
                            }
                            (Err(e), Ok(_)) => Err(DispatchError::Unreachable(e)),
                        };
                        // sbatchd's answer: started or refused (not a lost call).
                        if matches!(result, Ok(_) | Err(DispatchError::Refused(_))) {
                            latency.observe(durable_at.elapsed().as_secs_f64());
                        }
                        let _ = tx.send(Msg::DispatchDone {
                            key,
                            attempt,
                            host,
                            result,
                        });
                    });
                }
                Effect::Signal {
                    key,
                    attempt,
                    host,
                    action,
                } => {
                    let mut rlimits = Vec::new();
                    let mut chk = (false, false, false);
                    let (action_pb, signal, stop_state, reasons, term) = match action {
                        SbdAction::Kill { term_reason } => {
                            (sbpb::SignalAction::Kill, String::new(), 0, 0, term_reason)
                        }
                        SbdAction::Stop { state, reasons } => (
                            sbpb::SignalAction::Stop,
                            String::new(),
                            state,
                            reasons,
                            String::new(),
                        ),
                        SbdAction::Resume => (
                            sbpb::SignalAction::Resume,
                            String::new(),
                            0,
                            0,
                            String::new(),
                        ),
                        SbdAction::Signal(s) => {
                            (sbpb::SignalAction::Signal, s, 0, 0, String::new())
                        }
                        SbdAction::Chkpnt {
                            kill,
                            force,
                            migrate,
                        } => {
                            chk = (kill, force, migrate);
                            (
                                sbpb::SignalAction::Chkpnt,
                                String::new(),
                                0,
                                0,
                                String::new(),
                            )
                        }
                        SbdAction::Limits(l) => {
                            rlimits = l.to_vec();
                            (
                                sbpb::SignalAction::Limits,
                                String::new(),
                                0,
                                0,
                                String::new(),
                            )
                        }
                    };
                    let req = sbpb::SignalJobRequest {
                        epoch: self.sched.epoch(),
                        job_id: key.0,
                        idx: key.1,
                        attempt,
                        action: action_pb as i32,
                        signal,
                        terminate_interval: self.sched.config().job_terminate_interval_secs,
                        stop_state,
                        reasons,
                        term_reason: term,
                        rlimits,
                        chkpnt_kill: chk.0,
                        chkpnt_force: chk.1,
                        chkpnt_migrate: chk.2,
                    };
                    let config = self.config.clone();
                    let auth = self.auth.clone();
                    let slots = self.peers.conn_slots();
                    self.orders.spawn_on(&self.rt, async move {
                        let _permit = conn_permit(slots).await;
                        match basalt_runtime::sbatchd_peer_channel(
                            &config,
                            &host,
                            Duration::from_secs(5),
                            &auth,
                        ) {
                            Ok(mut c) => {
                                if let Err(e) = c.signal_job(req).await {
                                    warn!(
                                        job = key.0,
                                        "signal to sbatchd on {host}: {}",
                                        e.message()
                                    );
                                }
                            }
                            Err(e) => warn!(job = key.0, "sbatchd on {host}: {e}"),
                        }
                    });
                }
            }
        }
    }

    fn job_spec(&self, key: JobKey, attempt: u32) -> Option<sbpb::JobSpec> {
        let j = self.sched.jobs().get(&key)?;
        let q = self.sched.queues().iter().find(|q| q.name == j.queue);
        let app = self.sched.app_of(&j.sub);
        let chk = self.sched.dispatch_chkpnt(key).unwrap_or_default();
        Some(sbpb::JobSpec {
            job_id: j.id,
            idx: j.idx,
            attempt,
            user: j.sub.user.to_string(),
            uid: j.sub.uid,
            gid: 0,
            // An element gets the array's spec (`arr[1-10]%2`) and is_array: sbatchd makes
            // LSB_JOBNAME `arr[3]`, LSB_JOBINDEX and %I from them.
            job_name: if j.is_element() {
                j.sub.job_name.to_string()
            } else {
                j.display_name()
            },
            queue: j.queue.to_string(),
            exec_hosts: j.hosts.clone(),
            sub_cwd: j.sub.cwd.to_string(),
            spec_cwd: j.sub.spec_cwd.to_string(),
            in_file: j.sub.in_file.to_string(),
            out_file: j.sub.out_file.to_string(),
            err_file: j.sub.err_file.to_string(),
            out_overwrite: j.sub.options2 & basalt_core::job::sub2::OUT_OVERWRITE != 0,
            err_overwrite: j.sub.options2 & basalt_core::job::sub2::ERR_OVERWRITE != 0,
            from_host: j.sub.from_host.to_string(),
            sub_home: j.sub.sub_home_dir.to_string(),
            submit_time: j.sub.submit_time,
            job_file_name: j.sub.job_file.to_string(),
            job_file: Vec::new(),
            command: j.sub.command.to_string(),
            // Its own limits, else its queue's (lsb.queues RUNLIMIT, MEMLIMIT, ...).
            rlimits: self.sched.effective_rlimits(j).to_vec(),
            umask: j.sub.umask,
            nice: q.and_then(|q| q.nice).unwrap_or(0),
            project: j.sub.project.to_string(),
            cluster: self.sched.config().cluster.clone(),
            res_req: j.sub.res_req.to_string(),
            login_shell: j.sub.login_shell.to_string(),
            job_controls: q
                .map(|q| q.job_controls.clone().into_iter().collect())
                .unwrap_or_default(),
            // The job's own -E / -Ep, else its application profile's PRE_EXEC / POST_EXEC.
            pre_exec: match (j.sub.pre_exec.as_str(), app) {
                ("", Some(a)) => a.pre_exec.clone(),
                (own, _) => own.to_owned(),
            },
            num_processors: j.hosts.len().max(1) as u32,
            max_processors: j.sub.max_processors,
            is_array: j.is_element(),
            // Only `brun -f` exempts a job from load suspension (seed 000).
            forced: j.no_stop,
            term_time: j.sub.term_time,
            mail_user: j.sub.mail_user.to_string(),
            queue_pre_cmd: q.map(|q| q.pre_exec.clone()).unwrap_or_default(),
            queue_post_cmd: q.map(|q| q.post_exec.clone()).unwrap_or_default(),
            pre_post_exec_user: q.map(|q| q.pre_post_exec_user.clone()).unwrap_or_default(),
            // The application profile's JOB_STARTER, else the queue's.
            job_starter: app
                .map(|a| a.job_starter.clone())
                .filter(|s| !s.is_empty())
                .or_else(|| q.map(|q| q.job_starter.clone()))
                .unwrap_or_default(),
            post_exec: match (j.sub.post_exec(), app) {
                ("", Some(a)) => a.post_exec.clone(),
                (own, _) => own.to_owned(),
            },
            eexec_input: j.sub.esub_output().to_owned(),
            // The application profile's JOB_INCLUDE_POSTPROC / JOB_POSTPROC_TIMEOUT, else
            // lsb.params' (the job's LSB_JOB_INCLUDE_POSTPROC wins; sbatchd reads it).
            include_postproc: app
                .and_then(|a| a.include_postproc)
                .unwrap_or(self.sched.config().include_postproc),
            files: j
                .sub
                .files()
                .iter()
                .map(|f| basalt_proto::mbatchd::FileTransfer {
                    local: f.local.clone(),
                    remote: f.remote.clone(),
                    ops: f.ops,
                })
                .collect(),
            postproc_timeout_secs: app
                .and_then(|a| a.postproc_timeout_mins)
                .or(self.sched.config().postproc_timeout_mins)
                .map_or(0, |m| m.saturating_mul(60)),
            interactive: basalt_core::job::interactive_mode(j.sub.options),
            chkpnt_dir: chk.dir,
            chkpnt_period: chk.period,
            chkpnt_method: chk.method,
            restart: chk.restart,
            restart_from_dir: chk.restart_from_dir,
            restart_old_job: chk.old_job,
            restart_force: chk.force,
        })
    }
}

/// Send one start order: on the start stream when it is open, else (or when it could
/// not go out on it) with a `StartJob` call.
async fn dispatch(
    mut client: PeerClient,
    proof: Proof,
    stream: Option<StartStream>,
    epoch: u64,
    mut spec: sbpb::JobSpec,
    job_file: Vec<u8>,
) -> Result<(u32, u32), DispatchError> {
    spec.job_file = job_file;
    let mut req = sbpb::StartJobRequest {
        epoch,
        job: Some(spec),
        tag: 0,
    };
    if let Some(stream) = stream.filter(StartStream::is_open) {
        match stream.call(req).await {
            StreamAnswer::Reply(r) => {
                proof.answered();
                if r.code == 0 {
                    return Ok((r.pid, r.pgid));
                }
                // A refusal: what StartJob would have answered with its status.
                let s = tonic::Status::new(tonic::Code::from_i32(r.code), r.message);
                return Err(classify(&s));
            }
            StreamAnswer::Lost(why) => return Err(DispatchError::Uncertain(why)),
            StreamAnswer::NotSent(r) => {
                req = *r;
                req.tag = 0;
            }
        }
    }
    let answer = client.start_job(req).await;
    let reply = match answer {
        Ok(r) => {
            proof.answered();
            r.into_inner()
        }
        Err(s) => {
            let e = classify(&s);
            if matches!(e, DispatchError::Refused(_)) || s.code() == tonic::Code::FailedPrecondition
            {
                // sbatchd answered: the connection works.
                proof.answered();
            }
            return Err(e);
        }
    };
    Ok((reply.pid, reply.pgid))
}

/// What a failed `StartJob` call means for the job, from the status code and the
/// error's type chain (never from its text).
fn classify(s: &tonic::Status) -> DispatchError {
    let message = s.message().to_string();
    match s.code() {
        // An answer (it refuses orders now), or no connection at all: not started.
        tonic::Code::FailedPrecondition => DispatchError::Unreachable(message),
        tonic::Code::Unavailable if never_connected(s) => DispatchError::Unreachable(message),
        tonic::Code::Unavailable
        | tonic::Code::DeadlineExceeded
        | tonic::Code::Unknown
        | tonic::Code::Cancelled => DispatchError::Uncertain(message),
        _ => DispatchError::Refused(message),
    }
}

/// Did the call fail before a connection existed (so the request was never sent)? Walks
/// the status's source chain: tonic wraps every failure of its connector (the TCP
/// connect, including its timeout) in [`tonic::ConnectError`]; an `io::Error` saying the
/// peer refused or cannot be routed to can only come from a connect as well.
fn never_connected(s: &tonic::Status) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = next {
        if e.is::<tonic::ConnectError>() {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
            )
        {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a fake sbatchd serves the start stream.
    #[derive(Clone, Copy, PartialEq)]
    enum StreamMode {
        /// Answers each order by its tag, the second of a pair before the first; a job
        /// id of 13 is refused in-band (FAILED_PRECONDITION), 14 (INVALID_ARGUMENT).
        Answer,
        /// Takes the first order, then ends the stream without answering it.
        Break,
        /// Has no StartStream (an sbatchd from before it).
        Missing,
    }

    #[derive(Clone)]
    struct FakeSbd {
        mode: StreamMode,
        /// StartJob calls taken.
        calls: Arc<AtomicU64>,
    }

    fn pid_of(r: &sbpb::StartJobRequest) -> u32 {
        r.job.as_ref().map_or(0, |j| 1000 + j.job_id as u32)
    }

    #[tonic::async_trait]
    impl sbpb::sbatchd_peer_server::SbatchdPeer for FakeSbd {
        async fn start_job(
            &self,
            request: tonic::Request<sbpb::StartJobRequest>,
        ) -> Result<tonic::Response<sbpb::StartJobReply>, tonic::Status> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let pid = pid_of(request.get_ref());
            Ok(tonic::Response::new(sbpb::StartJobReply {
                pid,
                pgid: pid,
                ..Default::default()
            }))
        }

        async fn signal_job(
            &self,
            _request: tonic::Request<sbpb::SignalJobRequest>,
        ) -> Result<tonic::Response<sbpb::SignalJobReply>, tonic::Status> {
            Err(tonic::Status::unimplemented("not here"))
        }

        type StartStreamStream = tokio_stream::wrappers::UnboundedReceiverStream<
            Result<sbpb::StartJobReply, tonic::Status>,
        >;

        async fn start_stream(
            &self,
            request: tonic::Request<tonic::Streaming<sbpb::StartJobRequest>>,
        ) -> Result<tonic::Response<Self::StartStreamStream>, tonic::Status> {
            if self.mode == StreamMode::Missing {
                return Err(tonic::Status::unimplemented("no StartStream here"));
            }
            let mode = self.mode;
            let mut inbound = request.into_inner();
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            tokio::spawn(async move {
                let mut held: Option<sbpb::StartJobRequest> = None;
                while let Ok(Some(r)) = inbound.message().await {
                    if mode == StreamMode::Break {
                        // The order is taken; the stream ends unanswered.
                        let _ = tx.send(Err(tonic::Status::unavailable("gone")));
                        return;
                    }
                    let answer = |r: &sbpb::StartJobRequest| {
                        let id = r.job.as_ref().map_or(0, |j| j.job_id);
                        let (code, message) = match id {
                            13 => (tonic::Code::FailedPrecondition as i32, "stale epoch"),
                            14 => (tonic::Code::InvalidArgument as i32, "unknown user"),
                            _ => (0, ""),
                        };
                        sbpb::StartJobReply {
                            pid: if code == 0 { pid_of(r) } else { 0 },
                            pgid: if code == 0 { pid_of(r) } else { 0 },
                            tag: r.tag,
                            code,
                            message: message.to_owned(),
                        }
                    };
                    match held.take() {
                        None => held = Some(r),
                        Some(first) => {
                            let _ = tx.send(Ok(answer(&r)));
                            let _ = tx.send(Ok(answer(&first)));
                        }
                    }
                }
            });
            Ok(tonic::Response::new(
                tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
            ))
        }
    }

    /// A fake sbatchd on a loopback port, and a client of it with a daemon's credentials.
    async fn fake_sbatchd(mode: StreamMode) -> (PeerClient, Arc<AtomicU64>, tempfile::TempDir) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let calls = Arc::new(AtomicU64::new(0));
        let fake = FakeSbd {
            mode,
            calls: calls.clone(),
        };
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(sbpb::sbatchd_peer_server::SbatchdPeerServer::new(fake))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("key");
        basalt_auth::key::create_key_file(&key).expect("key file");
        let keys = Arc::new(basalt_auth::key::KeySource::open(&key, false).expect("keys"));
        let auth = basalt_runtime::Authenticator::with_key(
            keys,
            basalt_auth::daemon_identity("h"),
            "c",
            None,
        );
        let client = sbpb::sbatchd_peer_client::SbatchdPeerClient::new(
            basalt_runtime::auth_channel(addr, "h", Duration::from_secs(5), &auth)
                .expect("channel"),
        );
        (client, calls, dir)
    }

    fn spec(job_id: u64) -> sbpb::JobSpec {
        sbpb::JobSpec {
            job_id,
            ..Default::default()
        }
    }

    /// Wait until the stream has left its opening state.
    async fn settled(stream: &StartStream) {
        let until = Instant::now() + Duration::from_secs(10);
        while stream.state.load(Ordering::Acquire) == STREAM_OPENING {
            assert!(Instant::now() < until, "the start stream never opened");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Orders on an open start stream are answered by their tags, whatever the order
    /// of the answers; a refusal comes in-band and is classified as StartJob's status
    /// would be (FAILED_PRECONDITION: not started; another: refused); no StartJob call.
    #[tokio::test]
    async fn orders_on_the_stream_are_answered_by_tag_and_refusals_classified() {
        let (client, calls, _dir) = fake_sbatchd(StreamMode::Answer).await;
        let stream = StartStream::open(client.clone());
        settled(&stream).await;
        assert!(stream.is_open());
        let proof = Proof::new(Instant::now());
        let go = |id: u64| {
            dispatch(
                client.clone(),
                proof.clone(),
                Some(stream.clone()),
                1,
                spec(id),
                Vec::new(),
            )
        };
        let (a, b) = tokio::join!(go(7), go(8));
        assert_eq!(a.expect("7 started"), (1007, 1007));
        assert_eq!(b.expect("8 started"), (1008, 1008));
        assert!(
            proof.proven(Instant::now()),
            "an answer on the stream proves it"
        );
        let (stale, bad) = tokio::join!(go(13), go(14));
        assert!(
            matches!(stale, Err(DispatchError::Unreachable(_))),
            "{stale:?}"
        );
        assert!(matches!(bad, Err(DispatchError::Refused(_))), "{bad:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 0, "all on the stream");
    }

    /// An order that went out on a stream that then broke is "maybe started"; the
    /// stream is closed, so the next one is opened anew.
    #[tokio::test]
    async fn an_order_on_a_broken_stream_is_maybe_started() {
        let (client, calls, _dir) = fake_sbatchd(StreamMode::Break).await;
        let stream = StartStream::open(client.clone());
        settled(&stream).await;
        let r = dispatch(
            client,
            Proof::new(Instant::now()),
            Some(stream.clone()),
            1,
            spec(7),
            Vec::new(),
        )
        .await;
        assert!(matches!(r, Err(DispatchError::Uncertain(_))), "{r:?}");
        assert!(stream.closed(), "a broken stream is closed");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "not sent again by StartJob"
        );
    }

    /// An sbatchd without the stream gets StartJob calls; the stream is not tried again.
    #[tokio::test]
    async fn an_sbatchd_without_the_stream_gets_start_job() {
        let (client, calls, _dir) = fake_sbatchd(StreamMode::Missing).await;
        let stream = StartStream::open(client.clone());
        settled(&stream).await;
        assert!(
            !stream.is_open() && !stream.closed(),
            "unsupported, not closed"
        );
        let r = dispatch(
            client,
            Proof::new(Instant::now()),
            Some(stream),
            1,
            spec(7),
            Vec::new(),
        )
        .await;
        assert_eq!(r.expect("started by StartJob"), (1007, 1007));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// An order handed to a stream that will not send it (its task is gone) comes back
    /// whole, to go another way.
    #[tokio::test]
    async fn an_order_a_stream_cannot_send_comes_back() {
        let (client, _calls, _dir) = fake_sbatchd(StreamMode::Missing).await;
        let stream = StartStream::open(client);
        settled(&stream).await;
        let req = sbpb::StartJobRequest {
            epoch: 3,
            job: Some(spec(9)),
            ..Default::default()
        };
        match stream.call(req).await {
            StreamAnswer::NotSent(back) => {
                assert_eq!((back.epoch, back.job.map(|j| j.job_id)), (3, Some(9)));
            }
            StreamAnswer::Reply(r) => panic!("answered: {r:?}"),
            StreamAnswer::Lost(why) => panic!("lost: {why}"),
        }
    }

    fn connect_failure(kind: std::io::ErrorKind) -> tonic::Status {
        let io = std::io::Error::new(kind, "connect");
        tonic::Status::from_error(Box::new(tonic::ConnectError(Box::new(io))))
    }

    /// A kept connection is reused only while an answer came on it within the window:
    /// never before its first answer, and not once the window has passed.
    #[tokio::test]
    async fn a_kept_connection_is_reused_only_while_proven() {
        let auth = basalt_runtime::Authenticator::unavailable("a test".to_owned());
        let addr = "127.0.0.1:1".parse().expect("addr");
        let client = sbpb::sbatchd_peer_client::SbatchdPeerClient::new(
            basalt_runtime::auth_channel(addr, "h", Duration::from_secs(1), &auth)
                .expect("channel"),
        );
        let base = Instant::now() - Duration::from_secs(10);
        let k = Kept {
            client,
            proof: Proof::new(base),
            stream: None,
        };
        let now = Instant::now();
        assert!(!k.proof.proven(now), "no answer yet");
        // A dispatch's copy marks the kept client's proof.
        let proof = k.proof.clone();
        proof.answered();
        assert!(k.proof.proven(Instant::now()), "just answered");
        assert!(
            !k.proof
                .proven(Instant::now() + REUSE_WINDOW + Duration::from_millis(1)),
            "the window passed"
        );
    }

    /// Connections to sbatchds stay within the budget: past `budget` kept and proven
    /// clients, a new one serves its order alone (not kept), and orders and signals
    /// that open a connection wait for one of `budget` permits.
    #[tokio::test]
    async fn connections_to_sbatchds_stay_within_the_budget() {
        use basalt_config::embedded::{DefaultCluster, DefaultHost};
        let dir = tempfile::tempdir().expect("tempdir");
        let hosts = ["hostA", "hostB", "hostC"]
            .iter()
            .enumerate()
            .map(|(i, h)| DefaultHost {
                name: (*h).into(),
                address: Some(std::net::IpAddr::from([127, 0, 0, i as u8 + 1])),
                server: true,
            })
            .collect();
        let envdir = DefaultCluster::new("basalt", "root", hosts)
            .write(dir.path())
            .expect("write the cluster");
        let config = basalt_config::load(&envdir).expect("loads").config;
        let auth = basalt_runtime::Authenticator::unavailable("a test".to_owned());
        let mut peers = Peers::new(2);
        assert_eq!(peers.most_connections(), 4);
        for host in ["hostA", "hostB", "hostC"] {
            let (_, proof, _, opens) = peers.client(&config, host, &auth).expect("client");
            assert!(opens, "{host}: a new connection");
            proof.answered();
        }
        // Two kept (both proven): hostC's client was for its order alone.
        assert_eq!(peers.kept(), 2);
        let (_, _, _, opens) = peers.client(&config, "hostA", &auth).expect("client");
        assert!(!opens, "hostA's kept connection is reused");
        let (_, _, _, opens) = peers.client(&config, "hostC", &auth).expect("client");
        assert!(opens, "hostC has none kept");
        assert_eq!(peers.kept(), 2);
        // Under way: two permits, the third waits until one is given back.
        let slots = peers.conn_slots();
        let first = conn_permit(slots.clone()).await;
        let _second = conn_permit(slots.clone()).await;
        let third = tokio::spawn(conn_permit(slots.clone()));
        tokio::task::yield_now().await;
        assert!(!third.is_finished());
        drop(first);
        assert!(third.await.expect("join").is_some());
        assert_eq!(Peers::budget_for(20_000), 2_500);
        assert_eq!(Peers::budget_for(64), 32);
    }

    #[test]
    fn a_failed_connect_is_unreachable_and_a_lost_call_uncertain() {
        for kind in [
            std::io::ErrorKind::ConnectionRefused,
            std::io::ErrorKind::HostUnreachable,
            std::io::ErrorKind::TimedOut,
        ] {
            let s = connect_failure(kind);
            assert_eq!(s.code(), tonic::Code::Unavailable);
            assert!(
                matches!(classify(&s), DispatchError::Unreachable(_)),
                "{s:?}"
            );
        }
        // A failure after the request went out (a reset connection): no connect error in
        // the chain.
        let reset = tonic::Status::from_error(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset",
        )));
        assert!(matches!(classify(&reset), DispatchError::Uncertain(_)));
        // The text alone proves nothing.
        let said = tonic::Status::unavailable("tcp connect error: connection refused");
        assert!(matches!(classify(&said), DispatchError::Uncertain(_)));
        let refusing = tonic::Status::failed_precondition("stale epoch");
        assert!(matches!(classify(&refusing), DispatchError::Unreachable(_)));
        let bad_user = tonic::Status::invalid_argument("unknown user");
        assert!(matches!(classify(&bad_user), DispatchError::Refused(_)));
        for s in [
            tonic::Status::deadline_exceeded("late"),
            tonic::Status::cancelled("timeout expired"),
            tonic::Status::unknown("?"),
        ] {
            assert!(matches!(classify(&s), DispatchError::Uncertain(_)), "{s:?}");
        }
    }

    /// A real refused connection (nothing listens on the port) through a tonic channel
    /// like the ones dispatch uses: the chain carries the connect error.
    #[tokio::test]
    async fn a_refused_connection_is_never_connected() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        let channel = basalt_runtime::channel(addr, Duration::from_secs(2), None).expect("channel");
        let mut client = sbpb::sbatchd_peer_client::SbatchdPeerClient::new(channel);
        let s = client
            .start_job(sbpb::StartJobRequest::default())
            .await
            .expect_err("nothing listens");
        assert!(never_connected(&s), "{s:?}");
        assert!(
            matches!(classify(&s), DispatchError::Unreachable(_)),
            "{s:?}"
        );
    }
}
