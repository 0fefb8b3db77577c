//! The master batch daemon (mbatchd), run on the LIM master host by its sbatchd.
//!
//! Owns: all batch state, through the pure core `basalt-sched`, and the event log
//! (`lsb.events`, `lsb.acct`, spooled job files, the `#lsb.event.lock` lock).
//!
//! Shape (DESIGN.md rules 2–5): one *owner* thread holds the core and the journal. gRPC
//! handlers ([`service`]) turn requests into [`Msg`]s and wait for the answer. The owner
//! takes every message that is waiting, applies them, runs a scheduling pass when
//! something changed, appends the resulting events to lsb.events with one fsync, and only
//! then answers the requests and sends dispatches and signals to the sbatchds (tokio
//! tasks that report back as messages). So an acknowledged job is durable, and a burst of
//! submissions costs one fsync.
//!
//! Inputs: the configuration, the host it plays, a bound listener, a shutdown future.
//! Outputs: the `basalt.mbatchd.v1.Mbatchd` service, RPCs to sbatchds, the event log.

pub mod convert;
pub mod egroup;
pub mod journal;
mod service;

use basalt_config::Config;
use basalt_proto::mbatchd as pb;
use basalt_proto::sbatchd as sbpb;
use basalt_sched::{Effect, Event, JobKey, SbdAction, Sched, SchedConfig, SchedError};
use journal::Journal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc as stdmpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use thiserror::Error;
use tokio::sync::oneshot;
use tracing::{debug, error, info, info_span, warn};

pub use service::MbatchdService;

/// mbatchd exit codes (LSF's).
pub const EXIT_RESIGN: i32 = 201;
pub const EXIT_RECONFIG: i32 = 202;
pub const EXIT_FATAL: i32 = 203;

/// Why mbatchd stopped.
#[derive(Debug, Error)]
pub enum MbdError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("event log: {0}")]
    Journal(#[from] journal::JournalError),
    #[error("gRPC server: {0}")]
    Serve(#[from] tonic::transport::Error),
    #[error("binding the mbatchd port {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("this host is no longer the master ({0})")]
    Resign(String),
    #[error("restart requested ({0})")]
    Reconfig(String),
    #[error("the owner thread stopped")]
    OwnerGone,
    #[error("stopped")]
    Stopped,
}

impl MbdError {
    /// The process exit code LSF uses for this reason.
    pub fn exit_code(&self) -> i32 {
        match self {
            MbdError::Resign(_) => EXIT_RESIGN,
            MbdError::Reconfig(_) => EXIT_RECONFIG,
            MbdError::Stopped => 0,
            _ => EXIT_FATAL,
        }
    }

    /// How loudly the exit is logged: a requested restart (`badmin reconfig`,
    /// `mbdrestart`), a resignation and a stop are the normal course (INFO), anything else
    /// is a failure (ERROR).
    pub fn level(&self) -> tracing::Level {
        match self {
            MbdError::Reconfig(_) | MbdError::Resign(_) | MbdError::Stopped => tracing::Level::INFO,
            _ => tracing::Level::ERROR,
        }
    }
}

/// Wall-clock milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Local time (`TZ`, /etc/localtime) of `ms` as a minute of the week (0 = Sunday
/// 00:00), for queue run/dispatch windows and host dispatch windows.
#[allow(unsafe_code)]
pub fn local_week_minute(ms: i64) -> u32 {
    let secs = ms.div_euclid(1000);
    let tt = secs as libc::time_t;
    // SAFETY: libc::tm is a plain C struct for which all-zero bytes are a valid value
    // (integers and a null tm_zone pointer).
    let mut out: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers refer to live, properly aligned locals for the duration of
    // the call; localtime_r writes only into `out` and is thread-safe.
    let p = unsafe { libc::localtime_r(&tt, &mut out) };
    if p.is_null() {
        let wday = (secs.div_euclid(86_400) + 4).rem_euclid(7) as u32;
        return wday * 1440 + (secs.rem_euclid(86_400) / 60) as u32;
    }
    out.tm_wday.clamp(0, 6) as u32 * 1440
        + out.tm_hour.clamp(0, 23) as u32 * 60
        + out.tm_min.clamp(0, 59) as u32
}

type Reply<T> = oneshot::Sender<T>;

/// Requests and results the owner thread serves.
#[derive(Debug)]
pub(crate) enum Msg {
    Submit {
        caller: basalt_sched::Caller,
        sub: Box<basalt_sched::Submission>,
        env: Vec<String>,
        is_script: bool,
        /// `bsub -app` ("" = none): checked against lsb.applications, not kept.
        app: String,
        reply: Reply<Result<pb::SubmitReply, SchedError>>,
    },
    Jobs {
        req: pb::JobsRequest,
        reply: Reply<pb::JobsReply>,
    },
    Signal {
        req: pb::SignalRequest,
        reply: Reply<pb::JobCtlReply>,
    },
    Switch {
        req: pb::SwitchRequest,
        reply: Reply<pb::JobCtlReply>,
    },
    Move {
        req: pb::MoveRequest,
        reply: Reply<pb::JobCtlReply>,
    },
    Force {
        req: pb::ForceRequest,
        reply: Reply<pb::JobCtlReply>,
    },
    Queues {
        req: pb::QueuesRequest,
        reply: Reply<pb::QueuesReply>,
    },
    Hosts {
        req: pb::HostsRequest,
        reply: Reply<pb::HostsReply>,
    },
    Params {
        reply: Reply<pb::ParamsReply>,
    },
    QueueCtl {
        req: pb::QueueCtlRequest,
        reply: Reply<pb::CtlReply>,
    },
    HostCtl {
        req: pb::HostCtlRequest,
        reply: Reply<pb::CtlReply>,
    },
    Reconfig {
        req: pb::ReconfigRequest,
        reply: Reply<Result<pb::CtlReply, SchedError>>,
    },
    Hello {
        req: pb::SbdHelloRequest,
        reply: Reply<pb::SbdHelloReply>,
    },
    Report {
        req: pb::JobReport,
        reply: Reply<pb::ReportAck>,
    },
    DispatchDone {
        key: JobKey,
        attempt: u32,
        host: String,
        result: Result<(u32, u32), DispatchError>,
    },
    Lim(Vec<LimHost>),
    Resign(String),
    /// Stop cleanly (SIGTERM): log MBD_DIE, release the lock.
    Shutdown,
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

/// What the LIM master says about one host.
#[derive(Debug, Clone)]
pub(crate) struct LimHost {
    name: String,
    ncpus: u32,
    cpu_factor: f64,
    ok: bool,
    load: std::collections::BTreeMap<String, f64>,
}

/// Whether mbatchd can write its event log. While it cannot, the owner answers queries
/// and refuses everything that would need a new event.
#[derive(Debug, Default)]
pub(crate) struct Health {
    degraded: std::sync::Mutex<Option<String>>,
}

impl Health {
    fn set(&self, reason: Option<String>) {
        *self
            .degraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = reason;
    }

    /// Why new work is refused, if it is.
    pub(crate) fn reason(&self) -> Option<String> {
        self.degraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// A handle gRPC handlers use to reach the owner.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    tx: stdmpsc::Sender<Msg>,
    health: Arc<Health>,
}

impl Owner {
    /// Send a request to the owner and wait for its answer. A request the owner drops
    /// unanswered was refused because the event log cannot be written
    /// (`RESOURCE_EXHAUSTED` with the reason), or mbatchd is stopping (`UNAVAILABLE`).
    pub(crate) async fn ask<T>(
        &self,
        make: impl FnOnce(Reply<T>) -> Msg,
    ) -> Result<T, tonic::Status> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(make(tx))
            .map_err(|_| tonic::Status::unavailable("mbatchd is shutting down"))?;
        rx.await.map_err(|_| match self.health.reason() {
            Some(r) => tonic::Status::resource_exhausted(r),
            None => tonic::Status::unavailable("mbatchd is shutting down"),
        })
    }
}

/// Give the memory freed after a replay (every record of lsb.events was held at once)
/// back to the system, so mbatchd's resident size is what its jobs take, not the peak
/// of reading the log. glibc keeps freed heap otherwise.
#[allow(unsafe_code)]
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no
    // pointers from us and is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Where mbatchd takes requests: a socket bound by the caller, or an address to bind
/// once the event-log lock is held and lsb.events replayed — so that while another
/// mbatchd still holds the lock (a partition, a slow takeover) connections are refused
/// at once instead of waiting in the listen backlog, to be acted on later when their
/// client has long given up and reported a failure.
#[derive(Debug)]
pub enum Listen {
    Bound(tokio::net::TcpListener),
    AfterLock(std::net::SocketAddr),
}

impl From<tokio::net::TcpListener> for Listen {
    fn from(l: tokio::net::TcpListener) -> Listen {
        Listen::Bound(l)
    }
}

/// Run mbatchd for `me` until `shutdown` resolves or it must stop (resign, reconfig,
/// a failed log write). Replays lsb.events before serving.
pub async fn run(
    config: Arc<Config>,
    me: &str,
    listen: impl Into<Listen>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), MbdError> {
    run_with(config, me, listen, shutdown, RunOptions::default()).await
}

/// How [`run_with`] starts.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// mbatchd runs on the last accepted configuration (the log directory's snapshot)
    /// because the files on disk do not load: their errors. Every `bqueues`, `bhosts`,
    /// `bparams` and `badmin showconf mbd` answer carries it, and it is logged loudly.
    pub config_problem: Option<String>,
}

/// [`run`] with options.
pub async fn run_with(
    config: Arc<Config>,
    me: &str,
    listen: impl Into<Listen>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    run_opts: RunOptions,
) -> Result<(), MbdError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("mbatchd", host = %me);
    let _enter = span.enter();
    let keys = basalt_runtime::cluster_keys(&config)?;
    let auth = basalt_runtime::daemon_auth(&config, &me, keys.clone());
    let verifier = basalt_runtime::verifier(&config, keys);
    let logdir = config.logdir();
    if let Some(problem) = &run_opts.config_problem {
        error!(
            "running on the last accepted configuration: the files on disk do not load:\n{problem}"
        );
    }
    let egroups = egroup::resolve(&config).await;
    let now = now_ms();
    let mut sched = Sched::new(
        SchedConfig::from_config_with_egroups(&config, &egroups),
        now,
    );
    let opts = journal::Options::from_config(&config);
    let (journal, replayed) = {
        let (logdir, me) = (logdir.clone(), me.clone());
        tokio::task::spawn_blocking(move || journal::open(&logdir, &me, opts))
            .await
            .map_err(|_| MbdError::OwnerGone)??
    };
    let listener = match listen.into() {
        Listen::Bound(l) => l,
        Listen::AfterLock(addr) => tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| MbdError::Bind { addr, source })?,
    };
    let n = replayed.events.len();
    sched.replay(&replayed.events);
    if let Some(t) = &replayed.torn_tail {
        warn!(
            offset = replayed.torn_offset,
            "lsb.events ended with a torn (incomplete) record at byte offset {}, cut off: {t:?}",
            replayed.torn_offset.unwrap_or(0)
        );
    }
    info!(
        events = n,
        jobs = sched.jobs().len(),
        "replayed {}",
        logdir.join("lsb.events").display()
    );
    drop(replayed);
    release_freed_memory();
    sched.start(now, &me);
    let epoch = sched.epoch();
    info!(
        epoch,
        "mbatchd serving on {}",
        listener
            .local_addr()
            .map_or_else(|_| "?".into(), |a| a.to_string())
    );

    let (tx, rx) = stdmpsc::channel::<Msg>();
    let (done_tx, done_rx) = oneshot::channel::<MbdError>();
    let handle = tokio::runtime::Handle::current();
    let health = Arc::new(Health::default());
    let owner_state = OwnerState {
        config: config.clone(),
        auth: auth.clone(),
        me: me.clone(),
        sched,
        journal,
        tx: tx.clone(),
        rt: handle,
        started: SystemTime::now(),
        health: health.clone(),
        backlog: Vec::new(),
        this_iteration: Vec::new(),
        spooled: Vec::new(),
        write_failure: None,
        last_probe: std::time::Instant::now(),
        term_epoch: epoch,
        switch_retry: None,
        egroups,
        config_problem: run_opts.config_problem.clone().unwrap_or_default(),
    };
    std::thread::Builder::new()
        .name("mbatchd-owner".into())
        .spawn(move || {
            let err = owner_state.run(rx);
            let _ = done_tx.send(err);
        })
        .map_err(|_| MbdError::OwnerGone)?;

    let poller = tokio::spawn(lim_poller(
        config.clone(),
        me.clone(),
        tx.clone(),
        auth.clone(),
    ));

    let svc = MbatchdService::new(
        Owner {
            tx: tx.clone(),
            health,
        },
        verifier,
        basalt_auth::root_rex(&config),
    );
    let router = tonic::transport::Server::builder().add_service(
        pb::mbatchd_server::MbatchdServer::new(svc)
            .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
    );
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(basalt_runtime::serve(router, listener, async move {
        let _ = stop_rx.await;
    }));
    let mut done_rx = done_rx;
    let result = tokio::select! {
        _ = shutdown => {
            // Let the owner log MBD_DIE and release the lock before we return.
            let _ = tx.send(Msg::Shutdown);
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut done_rx).await;
            Ok(())
        }
        e = &mut done_rx => match e {
            Ok(MbdError::Stopped) => Ok(()),
            Ok(e) => Err(e),
            Err(_) => Err(MbdError::OwnerGone),
        },
    };
    poller.abort();
    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    result
}

/// Ask the LIM master for host status and load every second; resign when another host
/// has been master for three polls in a row.
async fn lim_poller(
    config: Arc<Config>,
    me: String,
    tx: stdmpsc::Sender<Msg>,
    auth: basalt_runtime::Authenticator,
) {
    let mut not_master = 0u32;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let m = match basalt_runtime::find_master(&config, Duration::from_secs(2), &auth).await {
            Ok(m) => m,
            Err(e) => {
                debug!("no LIM answers: {e}");
                continue;
            }
        };
        if !basalt_core::same_host(&m.master, &me) {
            not_master += 1;
            if not_master >= 3 {
                let _ = tx.send(Msg::Resign(m.master.clone()));
                return;
            }
            continue;
        }
        not_master = 0;
        let mut client = m.client;
        let Ok(reply) = client
            .hosts(basalt_proto::lim::HostsRequest { hosts: vec![] })
            .await
        else {
            continue;
        };
        let hosts = reply
            .into_inner()
            .hosts
            .into_iter()
            .filter_map(|h| {
                let info = h.info?;
                let ok = matches!(
                    basalt_proto::lim::HostStatus::try_from(h.status),
                    Ok(basalt_proto::lim::HostStatus::Ok
                        | basalt_proto::lim::HostStatus::Busy
                        | basalt_proto::lim::HostStatus::LockedUser
                        | basalt_proto::lim::HostStatus::LockedWindow)
                );
                Some(LimHost {
                    name: info.name.clone(),
                    ncpus: if h.has_info { info.ncpus } else { 0 },
                    cpu_factor: info.cpu_factor,
                    ok,
                    load: h.load.into_iter().map(|l| (l.name, l.value)).collect(),
                })
            })
            .collect();
        if tx.send(Msg::Lim(hosts)).is_err() {
            return;
        }
    }
}

/// The owner thread's state.
struct OwnerState {
    config: Arc<Config>,
    /// This mbatchd's credentials towards sbatchds.
    auth: basalt_runtime::Authenticator,
    me: String,
    sched: Sched,
    journal: Journal,
    tx: stdmpsc::Sender<Msg>,
    rt: tokio::runtime::Handle,
    started: SystemTime,
    /// Shared with the gRPC side: set while the event log cannot be written.
    health: Arc<Health>,
    /// Results from sbatchds (dispatch answers) that arrived or were rolled back while the
    /// log could not be written; fed back once it can.
    backlog: Vec<Msg>,
    /// Copies of this iteration's dispatch answers, in case its commit fails.
    this_iteration: Vec<Msg>,
    /// Job files spooled in this iteration (removed again if its commit fails).
    spooled: Vec<String>,
    /// A write that failed during this iteration (a job file): the commit must not happen.
    write_failure: Option<journal::JournalError>,
    last_probe: std::time::Instant,
    /// This term's epoch (its MBD_START may have been rolled back with a failed write).
    term_epoch: u64,
    /// After a failed log switch: not before this.
    switch_retry: Option<std::time::Instant>,
    /// The members egroup gave the `(!)` user groups at start.
    egroups: std::collections::BTreeMap<String, Vec<String>>,
    /// See [`RunOptions::config_problem`] ("" = none).
    config_problem: String,
}

type Deferred = Box<dyn FnOnce() + Send>;

fn defer<T: Send + 'static>(reply: Reply<T>, value: T) -> Deferred {
    Box::new(move || {
        let _ = reply.send(value);
    })
}

impl OwnerState {
    fn run(mut self, rx: stdmpsc::Receiver<Msg>) -> MbdError {
        // A first pass, so the replayed pending jobs show their reasons (a dependency
        // that can never be met, an array's limit) from the first query on. Make it and
        // MBD_START durable before serving anybody.
        self.sched.set_week_minute(local_week_minute(now_ms()));
        self.sched.schedule(now_ms());
        let effects = self.sched.take_effects();
        match self.journal.commit(&self.sched, &effects) {
            Ok(()) => self.carry_out(effects),
            Err(e) => {
                if let Some(fatal) = self.write_failed(e) {
                    return fatal;
                }
            }
        }
        let tick = Duration::from_millis(500);
        let mut last_tick = now_ms();
        loop {
            let first = match rx.recv_timeout(tick) {
                Ok(m) => Some(m),
                Err(stdmpsc::RecvTimeoutError::Timeout) => None,
                Err(stdmpsc::RecvTimeoutError::Disconnected) => return MbdError::OwnerGone,
            };
            let mut deferred: Vec<Deferred> = Vec::new();
            let mut exit: Option<MbdError> = None;
            let batch = first.into_iter().chain(rx.try_iter().take(4096));
            for msg in batch {
                let msg = if self.health.reason().is_some() {
                    match self.while_degraded(msg) {
                        Some(m) => m,
                        None => continue,
                    }
                } else {
                    msg
                };
                if let Msg::DispatchDone {
                    key,
                    attempt,
                    host,
                    result,
                } = &msg
                {
                    self.this_iteration.push(Msg::DispatchDone {
                        key: *key,
                        attempt: *attempt,
                        host: host.clone(),
                        result: result.clone(),
                    });
                }
                match self.handle(msg, &mut deferred) {
                    Ok(()) => {}
                    Err(e) => {
                        exit = Some(e);
                        break;
                    }
                }
            }
            if let Err(e) = self.journal.heartbeat() {
                error!("{e}");
                return e.into();
            }
            if self.health.reason().is_none()
                && self.journal.needs_resync()
                && self.last_probe.elapsed() >= Duration::from_secs(1)
            {
                self.last_probe = std::time::Instant::now();
                if let Err(e) = self.journal.resync() {
                    debug!("a copy of the event log is still out of date: {e}");
                }
            }
            if self.health.reason().is_some() {
                // Only queries were answered; nothing to commit. Is there room again?
                for d in deferred {
                    d();
                }
                if let Some(e) = exit {
                    return e;
                }
                if self.last_probe.elapsed() >= Duration::from_secs(1) {
                    self.last_probe = std::time::Instant::now();
                    match self.journal.probe() {
                        Ok(()) => self.writable_again(),
                        Err(e) => debug!("event log still not writable: {e}"),
                    }
                }
                continue;
            }
            let now = now_ms();
            if now - last_tick >= 500 {
                last_tick = now;
                self.sched.set_week_minute(local_week_minute(now));
                self.sched.tick(now);
            }
            if self.sched.needs_pass() {
                self.sched.schedule(now);
            }
            let effects = self.sched.take_effects();
            let committed = match self.write_failure.take() {
                Some(e) => Err(e),
                None => self.journal.commit(&self.sched, &effects),
            };
            match committed {
                Ok(()) => {
                    self.this_iteration.clear();
                    self.spooled.clear();
                    for d in deferred {
                        d();
                    }
                    self.carry_out(effects);
                    self.maybe_switch();
                }
                Err(e) => {
                    // Nothing of this iteration is acknowledged: its replies are dropped
                    // (the callers hear why) and its effects are forgotten.
                    drop(effects);
                    if let Some(fatal) = self.write_failed(e) {
                        return fatal;
                    }
                    drop(deferred);
                }
            }
            if let Some(e) = exit {
                if self.health.reason().is_none()
                    && let MbdError::Resign(_) | MbdError::Reconfig(_) | MbdError::Stopped = e
                {
                    let die = Event::MbdDie {
                        time: basalt_sched::secs(now_ms()),
                        master: self.me.clone(),
                        exit_code: e.exit_code(),
                    };
                    let _ = self.journal.commit(&self.sched, &[Effect::Log(die)]);
                }
                return e;
            }
        }
    }

    /// A message that arrived while the log cannot be written: queries, LIM updates and
    /// stop requests are handled; dispatch answers wait in the backlog; everything that
    /// would need a new event is refused (its reply dropped, so the caller hears why).
    fn while_degraded(&mut self, msg: Msg) -> Option<Msg> {
        match msg {
            Msg::Jobs { .. }
            | Msg::Queues { .. }
            | Msg::Hosts { .. }
            | Msg::Params { .. }
            | Msg::Lim(_)
            | Msg::Resign(_)
            | Msg::Shutdown => Some(msg),
            Msg::DispatchDone { .. } => {
                self.backlog.push(msg);
                None
            }
            Msg::Submit { .. }
            | Msg::Signal { .. }
            | Msg::Switch { .. }
            | Msg::Move { .. }
            | Msg::Force { .. }
            | Msg::QueueCtl { .. }
            | Msg::HostCtl { .. }
            | Msg::Reconfig { .. }
            | Msg::Hello { .. }
            | Msg::Report { .. } => None,
        }
    }

    /// An append (or a job file) could not be written. Stop acknowledging new work, and
    /// roll the in-memory state back to what the log holds (the appender has cut its file
    /// back, so the durable content is exactly the acknowledged state). Returns the error
    /// to stop with when mbatchd cannot go on at all (the lock is lost, or the log cannot
    /// even be re-read).
    fn write_failed(&mut self, e: journal::JournalError) -> Option<MbdError> {
        if let journal::JournalError::LockLost { .. } = e {
            error!("{e}");
            return Some(e.into());
        }
        let reason = format!(
            "Cannot write the event log ({e}). mbatchd accepts no new work until it can \
             write again; queries still work"
        );
        error!("{reason}");
        self.health.set(Some(reason));
        for name in self.spooled.drain(..) {
            self.journal.remove_spooled(&name);
        }
        let now = now_ms();
        let replayed = match self.journal.reload() {
            Ok(r) => r,
            Err(e2) => {
                error!("cannot re-read the event log after a failed write: {e2}");
                return Some(e2.into());
            }
        };
        let mut sched = Sched::new(
            SchedConfig::from_config_with_egroups(&self.config, &self.egroups),
            now,
        );
        sched.replay(&replayed.events);
        sched.set_started_at(self.sched.started_at());
        sched.all_sbd_seen(now);
        info!(
            events = replayed.events.len(),
            jobs = sched.jobs().len(),
            "rolled back to the durable state of the event log"
        );
        self.sched = sched;
        self.backlog.append(&mut self.this_iteration);
        self.last_probe = std::time::Instant::now();
        None
    }

    /// Switch lsb.events once `MAX_JOB_NUM` finished jobs have been cleaned since the last
    /// switch (LSF's rule), so that a restart replays the live jobs, not the history.
    /// Called right after a commit, when no event is waiting. A failed switch changes
    /// nothing and is tried again a minute later.
    fn maybe_switch(&mut self) {
        if !self.sched.switch_due()
            || self
                .switch_retry
                .is_some_and(|t| t > std::time::Instant::now())
        {
            return;
        }
        let now = now_ms();
        let started = std::time::Instant::now();
        let co = self.sched.carry_over(now);
        match self
            .journal
            .switch(basalt_sched::secs(now), &co.carried, &co.appended)
        {
            Ok(r) => {
                self.sched.replay(&co.appended);
                self.switch_retry = None;
                info!(
                    carried = co.carried.len(),
                    archived_bytes = r.archived_bytes,
                    "switched lsb.events in {:?} ({} jobs in memory)",
                    started.elapsed(),
                    self.sched.jobs().len()
                );
            }
            Err(journal::JournalError::LockLost { .. }) => {
                // The next commit or heartbeat stops mbatchd.
                self.switch_retry = Some(std::time::Instant::now() + Duration::from_secs(60));
            }
            Err(e) => {
                warn!("cannot switch lsb.events: {e}; trying again in a minute");
                self.switch_retry = Some(std::time::Instant::now() + Duration::from_secs(60));
            }
        }
    }

    /// The probe succeeded: accept work again, and feed back what waited.
    fn writable_again(&mut self) {
        info!("the event log can be written again; accepting new work");
        self.health.set(None);
        let now = now_ms();
        self.sched.all_sbd_seen(now);
        if self.sched.epoch() < self.term_epoch {
            // This term's MBD_START never reached the disk: log it now.
            self.sched.start(now, &self.me);
            self.term_epoch = self.sched.epoch();
        }
        for m in self.backlog.drain(..) {
            let _ = self.tx.send(m);
        }
    }

    fn handle(&mut self, msg: Msg, deferred: &mut Vec<Deferred>) -> Result<(), MbdError> {
        let now = now_ms();
        match msg {
            Msg::Submit {
                caller,
                sub,
                env,
                is_script,
                app,
                reply,
            } => {
                let command = sub.command.clone();
                let token = sub.submit_token.clone();
                // A resent submission (the client lost the answer): the job it created.
                if let Some(id) = self.sched.known_submission(&token) {
                    let queue = self
                        .sched
                        .jobs()
                        .range((id, 0)..=(id, u32::MAX))
                        .next()
                        .map_or_else(String::new, |(_, j)| j.sub.queue.clone());
                    info!(
                        job = id,
                        "submission {token:?} was already accepted as job {id}"
                    );
                    deferred.push(defer(
                        reply,
                        Ok(pb::SubmitReply {
                            job_id: id,
                            queue,
                            default_queue: false,
                        }),
                    ));
                    return Ok(());
                }
                // -app and -G against lsb.applications and lsb.users (and the egroups),
                // which the core does not keep.
                if let Err(e) = basalt_sched::check_app_and_group(
                    &self.config.batch,
                    &self.egroups,
                    &caller.user,
                    &app,
                    &sub.user_group,
                ) {
                    deferred.push(defer(reply, Err(e)));
                    return Ok(());
                }
                match self.sched.submit(now, &caller, *sub) {
                    Ok((id, queue, default_queue)) => {
                        // An array's elements share one submission and one job file.
                        let submit_time = self
                            .sched
                            .jobs()
                            .range((id, 0)..=(id, u32::MAX))
                            .next()
                            .map_or(0, |(_, j)| j.sub.submit_time);
                        let text = basalt_core::jobfile::render(&env, &command, is_script);
                        match self.journal.spool(submit_time, id, text.as_bytes()) {
                            Ok(()) => self
                                .spooled
                                .push(basalt_eventlog::job_file_name(submit_time, id)),
                            Err(e) => {
                                if self.write_failure.is_none() {
                                    self.write_failure = Some(e);
                                }
                            }
                        }
                        deferred.push(defer(
                            reply,
                            Ok(pb::SubmitReply {
                                job_id: id,
                                queue,
                                default_queue,
                            }),
                        ));
                    }
                    Err(e) => deferred.push(defer(reply, Err(e))),
                }
            }
            Msg::Jobs { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let q = convert::query(&req, &caller);
                let (jobs, not_found) = self.sched.query(&q);
                let out = pb::JobsReply {
                    jobs: jobs
                        .into_iter()
                        .map(|j| convert::job_info(&self.sched, j))
                        .collect(),
                    not_found: not_found
                        .into_iter()
                        .map(|(id, idx)| pb::JobRef {
                            job_id: id,
                            idx: idx.unwrap_or(0),
                            has_idx: idx.is_some(),
                        })
                        .collect(),
                };
                // Answered with the iteration: never shows state that is not durable yet.
                deferred.push(defer(reply, out));
            }
            Msg::Signal { req, reply } => {
                let out = self.signal(now, &req);
                deferred.push(defer(reply, out));
            }
            Msg::Switch { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let ids: Vec<_> = req.ids.iter().map(convert::key_of).collect();
                let results = self.per_job(&ids, |s, key| {
                    s.switch(now, &caller, key, &req.queue)
                        .map(|()| req.queue.clone())
                });
                deferred.push(defer(reply, pb::JobCtlReply { results }));
            }
            Msg::Move { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let ids: Vec<_> = req.id.iter().map(convert::key_of).collect();
                let results = self.per_job(&ids, |s, key| {
                    s.move_job(now, &caller, key, req.position, req.from_bottom)
                        .map(|p| p.to_string())
                });
                deferred.push(defer(reply, pb::JobCtlReply { results }));
            }
            Msg::Force { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let ids: Vec<_> = req.id.iter().map(convert::key_of).collect();
                let results = self.per_job(&ids, |s, key| {
                    s.force(now, &caller, key, &req.hosts, req.force)
                        .map(|()| String::new())
                });
                deferred.push(defer(reply, pb::JobCtlReply { results }));
            }
            Msg::Queues { req, reply } => {
                let mut out = service::queues_reply(&self.sched, &req);
                out.config_problem = self.config_problem.clone();
                deferred.push(defer(reply, out));
            }
            Msg::Hosts { req, reply } => {
                let mut out = service::hosts_reply(&self.sched, &req);
                out.config_problem = self.config_problem.clone();
                deferred.push(defer(reply, out));
            }
            Msg::Params { reply } => {
                let mut out = service::params_reply(&self.config, &self.sched, self.started);
                out.config_problem = self.config_problem.clone();
                deferred.push(defer(reply, out));
            }
            Msg::QueueCtl { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let op = req.op as u32;
                let results = req
                    .queues
                    .iter()
                    .map(|q| {
                        let r = self.sched.queue_ctl(now, &caller, op, q, &req.message);
                        ctl_result(q, r)
                    })
                    .collect();
                deferred.push(defer(reply, pb::CtlReply { results }));
            }
            Msg::HostCtl { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                let op = req.op as u32;
                let results = req
                    .hosts
                    .iter()
                    .map(|h| {
                        let r = self.sched.host_ctl(now, &caller, op, h, &req.message);
                        ctl_result(h, r)
                    })
                    .collect();
                deferred.push(defer(reply, pb::CtlReply { results }));
            }
            Msg::Reconfig { req, reply } => {
                let caller = convert::caller(req.caller.as_ref());
                if caller.uid != 0 && !self.sched.config().admins.contains(&caller.user) {
                    deferred.push(defer(reply, Err(SchedError::Permission)));
                } else {
                    deferred.push(defer(reply, Ok(pb::CtlReply { results: vec![] })));
                    let what = if req.restart {
                        "badmin mbdrestart"
                    } else {
                        "badmin reconfig"
                    };
                    info!("{what} by {}: restarting with a full replay", caller.user);
                    return Err(MbdError::Reconfig(what.into()));
                }
            }
            Msg::Hello { req, reply } => {
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
                let theirs = self.sched.sbd_hello(now, &req.host, &jobs);
                let out = pb::SbdHelloReply {
                    epoch: self.sched.epoch(),
                    jobs: theirs
                        .into_iter()
                        .map(|j| pb::SbdJob {
                            id: Some(convert::job_ref(j.key, false)),
                            attempt: j.attempt,
                            state: j.state,
                            pid: j.pid,
                            pgid: j.pgid,
                        })
                        .collect(),
                    sbd_sleep_time: self.sched.config().sbd_sleep_time_secs,
                    job_terminate_interval: self.sched.config().job_terminate_interval_secs,
                    hello_interval: self.sched.config().hello_interval_secs,
                };
                deferred.push(defer(reply, out));
            }
            Msg::Report { req, reply } => {
                let ack = match convert::report(&req) {
                    Some(r) => match self.sched.report(now, r) {
                        basalt_sched::Ack::Ok => pb::AckKind::Ok,
                        basalt_sched::Ack::NoJob => pb::AckKind::NoJob,
                        basalt_sched::Ack::StopJob => pb::AckKind::StopJob,
                    },
                    None => pb::AckKind::Ok,
                };
                deferred.push(defer(
                    reply,
                    pb::ReportAck {
                        kind: ack as i32,
                        epoch: self.sched.epoch(),
                    },
                ));
            }
            Msg::DispatchDone {
                key,
                attempt,
                host,
                result,
            } => match result {
                Ok((pid, pgid)) => self.sched.dispatch_accepted(now, key, attempt, pid, pgid),
                Err(DispatchError::Unreachable(e)) => {
                    warn!(job = key.0, "dispatch to {host} failed: {e}");
                    self.sched.dispatch_failed(now, key, attempt, &host);
                }
                Err(DispatchError::Uncertain(e)) => {
                    warn!(
                        job = key.0,
                        "dispatch to {host} got no answer ({e}); its sbatchd's hellos will \
                         tell whether the job started"
                    );
                    self.sched.dispatch_uncertain(key, attempt, &host);
                }
                Err(DispatchError::Refused(e)) => {
                    warn!(job = key.0, "sbatchd on {host} cannot start the job: {e}");
                    self.sched.start_failed(now, key, attempt);
                }
            },
            Msg::Lim(hosts) => {
                for h in hosts {
                    self.sched
                        .lim_update(&h.name, h.ncpus, h.cpu_factor, h.ok, h.load);
                }
            }
            Msg::Resign(master) => {
                warn!("LIM names {master} as master; resigning");
                return Err(MbdError::Resign(master));
            }
            Msg::Shutdown => {
                info!("shutting down");
                return Err(MbdError::Stopped);
            }
        }
        Ok(())
    }

    /// Apply `f` to every job the ids name. A whole array (`123`) is answered once, as
    /// LSF does: success when any element accepted, else the first element's error.
    fn per_job(
        &mut self,
        ids: &[(u64, Option<u32>)],
        mut f: impl FnMut(&mut Sched, JobKey) -> Result<String, SchedError>,
    ) -> Vec<pb::JobResult> {
        let mut out = Vec::new();
        for &(id, idx) in ids {
            let keys = self.sched.expand(&[(id, idx)]);
            let whole_array =
                idx.is_none() && keys.iter().any(|k| matches!(k, Ok((_, i)) if *i > 0));
            if whole_array {
                let mut first_err = None;
                let mut ok = None;
                for key in keys.into_iter().flatten() {
                    match f(&mut self.sched, key) {
                        Ok(d) => {
                            ok.get_or_insert(d);
                        }
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                let r = match (ok, first_err) {
                    (Some(d), _) => Ok(d),
                    (None, Some(e)) => Err(e),
                    (None, None) => Err(SchedError::NoJob),
                };
                out.push(job_result((id, 0), r));
                continue;
            }
            for k in keys {
                out.push(match k {
                    Ok(key) => {
                        let r = f(&mut self.sched, key);
                        job_result(key, r)
                    }
                    Err(key) => job_result(key, Err(SchedError::NoJob)),
                });
            }
        }
        out
    }

    fn signal(&mut self, now: i64, req: &pb::SignalRequest) -> pb::JobCtlReply {
        let caller = convert::caller(req.caller.as_ref());
        let mut ids: Vec<(u64, Option<u32>)> = req.ids.iter().map(convert::key_of).collect();
        let kind = pb::SignalKind::try_from(req.kind).unwrap_or(pb::SignalKind::Kill);
        if ids.iter().any(|(id, _)| *id == 0) {
            // Job 0: every job of the caller (or of -u for administrators) the action
            // applies to.
            ids.retain(|(id, _)| *id != 0);
            let user = match req.user.as_str() {
                "" => Some(caller.user.clone()),
                "all" => None,
                u => Some(u.to_string()),
            };
            let q = basalt_sched::JobQuery {
                user,
                queue: (!req.queue.is_empty()).then(|| req.queue.clone()),
                host: (!req.host.is_empty()).then(|| req.host.clone()),
                job_name: (!req.job_name.is_empty()).then(|| req.job_name.clone()),
                ..Default::default()
            };
            let (jobs, _) = self.sched.query(&q);
            ids.extend(jobs.iter().map(|j| (j.id, Some(j.idx))));
        }
        let results = self.per_job(&ids, |s, key| match kind {
            pb::SignalKind::Kill => s
                .kill(now, &caller, key, req.remove, req.as_done)
                .map(|()| String::new()),
            pb::SignalKind::Stop => s.stop(now, &caller, key).map(|()| String::new()),
            pb::SignalKind::Resume => s.resume(now, &caller, key).map(|()| String::new()),
            pb::SignalKind::Signal => s
                .send_signal(now, &caller, key, &req.signal)
                .map(|()| String::new()),
        });
        pb::JobCtlReply { results }
    }

    /// Send dispatches and signals (after the events they depend on are durable).
    fn carry_out(&mut self, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Log(_) | Effect::Acct(_) => {}
                Effect::RemoveJobFile { job_file } => self.journal.remove_spooled(&job_file),
                Effect::Dispatch { key, attempt, host } => {
                    let Some(spec) = self.job_spec(key, attempt) else {
                        continue;
                    };
                    let path = self.journal.job_file_path(&spec.job_file_name);
                    let config = self.config.clone();
                    let auth = self.auth.clone();
                    let tx = self.tx.clone();
                    let epoch = self.sched.epoch();
                    self.rt.spawn(async move {
                        let result = dispatch(&config, &auth, &host, epoch, spec, path).await;
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
                    };
                    let req = sbpb::SignalJobRequest {
                        protocol: Some(basalt_proto::PROTOCOL),
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
                    };
                    let config = self.config.clone();
                    let auth = self.auth.clone();
                    self.rt.spawn(async move {
                        match basalt_runtime::sbatchd_channel(
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
        Some(sbpb::JobSpec {
            job_id: j.id,
            idx: j.idx,
            attempt,
            user: j.sub.user.clone(),
            uid: j.sub.uid,
            gid: 0,
            // An element gets the array's spec (`arr[1-10]%2`) and is_array: sbatchd makes
            // LSB_JOBNAME `arr[3]`, LSB_JOBINDEX and %I from them.
            job_name: if j.is_element() {
                j.sub.job_name.clone()
            } else {
                j.display_name()
            },
            queue: j.queue.clone(),
            exec_hosts: j.hosts.clone(),
            sub_cwd: j.sub.cwd.clone(),
            spec_cwd: j.sub.spec_cwd.clone(),
            in_file: j.sub.in_file.clone(),
            out_file: j.sub.out_file.clone(),
            err_file: j.sub.err_file.clone(),
            out_overwrite: j.sub.options2 & basalt_core::job::sub2::OUT_OVERWRITE != 0,
            err_overwrite: j.sub.options2 & basalt_core::job::sub2::ERR_OVERWRITE != 0,
            from_host: j.sub.from_host.clone(),
            sub_home: j.sub.sub_home_dir.clone(),
            submit_time: j.sub.submit_time,
            job_file_name: j.sub.job_file.clone(),
            job_file: Vec::new(),
            command: j.sub.command.clone(),
            // Its own limits, else its queue's (lsb.queues RUNLIMIT, MEMLIMIT, ...).
            rlimits: self.sched.effective_rlimits(j).to_vec(),
            umask: j.sub.umask,
            nice: q.and_then(|q| q.nice).unwrap_or(0),
            project: j.sub.project.clone(),
            cluster: self.sched.config().cluster.clone(),
            res_req: j.sub.res_req.clone(),
            login_shell: j.sub.login_shell.clone(),
            job_controls: q
                .map(|q| q.job_controls.clone().into_iter().collect())
                .unwrap_or_default(),
            queue_pre_exec: q.map(|q| q.pre_exec.clone()).unwrap_or_default(),
            queue_post_exec: q.map(|q| q.post_exec.clone()).unwrap_or_default(),
            pre_exec: j.sub.pre_exec.clone(),
            num_processors: j.hosts.len().max(1) as u32,
            max_processors: j.sub.max_processors,
            is_array: j.is_element(),
            // Only `brun -f` exempts a job from load suspension (seed 000).
            forced: j.no_stop,
            term_time: j.sub.term_time,
            mail_user: j.sub.mail_user.clone(),
        })
    }
}

async fn dispatch(
    config: &Config,
    auth: &basalt_runtime::Authenticator,
    host: &str,
    epoch: u64,
    mut spec: sbpb::JobSpec,
    job_file: PathBuf,
) -> Result<(u32, u32), DispatchError> {
    spec.job_file = tokio::fs::read(&job_file).await.map_err(|e| {
        DispatchError::Refused(format!(
            "cannot read the spooled job file {}: {e}",
            job_file.display()
        ))
    })?;
    let mut client = basalt_runtime::sbatchd_channel(config, host, Duration::from_secs(10), auth)
        .map_err(|e| DispatchError::Unreachable(e.to_string()))?;
    let reply = client
        .start_job(sbpb::StartJobRequest {
            protocol: Some(basalt_proto::PROTOCOL),
            epoch,
            job: Some(spec),
        })
        .await
        .map_err(|s| match s.code() {
            // An answer (it refuses orders now), or no connection at all: not started.
            tonic::Code::FailedPrecondition => DispatchError::Unreachable(s.message().to_string()),
            tonic::Code::Unavailable if never_connected(&s) => {
                DispatchError::Unreachable(s.message().to_string())
            }
            tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Unknown
            | tonic::Code::Cancelled => DispatchError::Uncertain(s.message().to_string()),
            _ => DispatchError::Refused(s.message().to_string()),
        })?
        .into_inner();
    Ok((reply.pid, reply.pgid))
}

/// Did the call fail before a connection existed (so the request was never sent)?
fn never_connected(s: &tonic::Status) -> bool {
    let text = format!("{s:?}").to_ascii_lowercase();
    text.contains("tcp connect error")
        || text.contains("connection refused")
        || text.contains("no route to host")
}

fn job_result(key: JobKey, r: Result<String, SchedError>) -> pb::JobResult {
    match r {
        Ok(detail) => pb::JobResult {
            id: Some(convert::job_ref(key, false)),
            ok: true,
            message: String::new(),
            detail,
        },
        Err(e) => pb::JobResult {
            id: Some(convert::job_ref(key, false)),
            ok: false,
            message: e.to_string(),
            detail: String::new(),
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30 item 13: `badmin reconfig` logs at INFO, not ERROR (a requested restart is
    /// not a failure); real failures still log at ERROR.
    #[test]
    fn a_requested_restart_is_logged_at_info() {
        assert_eq!(
            MbdError::Reconfig("badmin reconfig".into()).level(),
            tracing::Level::INFO
        );
        assert_eq!(
            MbdError::Reconfig("badmin mbdrestart".into()).level(),
            tracing::Level::INFO
        );
        assert_eq!(
            MbdError::Resign("lost the election".into()).level(),
            tracing::Level::INFO
        );
        assert_eq!(MbdError::OwnerGone.level(), tracing::Level::ERROR);
    }
}
