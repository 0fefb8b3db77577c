//! The master batch daemon (mbatchd), run on the LIM master host by its sbatchd.
//!
//! Owns: all batch state, through the pure core `basalt-sched`, and the event log
//! (`lsb.events`, `lsb.acct`, spooled job files, the `#lsb.event.lock` lock).
//!
//! Shape (DESIGN.md rules 2–5): one *owner* thread holds the core and the journal. gRPC
//! handlers (`service`) turn requests into `msg::Msg`s and wait for the answer. The
//! owner takes every message that is waiting, applies them, runs a scheduling pass when
//! something changed, appends the resulting events to lsb.events with one fsync, and only
//! then answers the requests and sends dispatches and signals to the sbatchds (tokio
//! tasks that report back as messages). So an acknowledged job is durable, and a burst of
//! submissions costs one fsync.
//!
//! Rooms: `owner` (the owner thread's loop, its state and the handle to it), `inbox`
//! (the owner's channel: client requests bounded and answered "busy" past the bound,
//! internal messages always taken), `admit` (the bound on client requests in flight),
//! `tasks` (per-job and per-stream tasks, waited for or ended at exit), `msg`
//! (the messages, in domain types), `handlers` (what each message does to the core),
//! `dispatch` (orders to sbatchds and how their failures are classified),
//! `lim_poller` (hosts and load from the LIM master), `mc` (MultiCluster job
//! forwarding: links to the other clusters' mbatchds, the service they call, the key
//! both trust), `service` (gRPC: verify,
//! check, translate), [`journal`] (the event log). This file: [`run`], its options and
//! errors, and the report to the supervising sbatchd that this mbatchd serves
//! ([`NOTIFY_ENV`]: sbatchd restarts an mbatchd that had served at once when it dies).
//!
//! Inputs: the configuration, the host it plays, a bound listener, a shutdown future.
//! Outputs: the `basalt.mbatchd.v1.Mbatchd` service (and `MbatchdCluster` for other
//! clusters), RPCs to sbatchds and to remote clusters' mbatchds, the event log.

pub use basalt_wire as convert;
mod admit;
mod dispatch;
pub mod egroup;
mod handlers;
mod inbox;
pub mod journal;
mod lim_poller;
mod mc;
mod metrics;
mod msg;
mod owner;
#[cfg(test)]
mod queue_view_tests;
mod service;
mod tasks;
mod views;

use basalt_config::Config;
use basalt_proto::mbatchd as pb;
use basalt_sched::{Sched, SchedConfig};
use lim_poller::lim_poller;
use msg::Msg;
use owner::{Health, Owner, OwnerState};
use std::sync::Arc;
use std::sync::mpsc as stdmpsc;
use std::time::{Duration, SystemTime};
use thiserror::Error;
use tokio::sync::oneshot;
use tracing::{Instrument, error, info, info_span, warn};

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
    basalt_runtime::time::now_ms()
}

/// Local time (`TZ`, /etc/localtime) of `ms` as a minute of the week (0 = Sunday
/// 00:00), for queue run/dispatch windows and host dispatch windows.
pub fn local_week_minute(ms: i64) -> u32 {
    basalt_runtime::time::local_week_minute(ms.div_euclid(1000))
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

/// How often [`trim_freed_memory`] looks at the resident size.
const TRIM_EVERY: Duration = Duration::from_secs(10);

/// Growth of the resident size since the last trim past which the freed heap is given
/// back.
const TRIM_AFTER_GROWTH: u64 = 64 << 20;

/// Give freed heap back to the system when the resident size has grown by more than
/// [`TRIM_AFTER_GROWTH`] since the last time, looking every [`TRIM_EVERY`], on a thread
/// of its own until `stop`'s sender is dropped.
///
/// glibc keeps what a thread frees in that thread's arena, and returns only a free top
/// of the heap: after a burst (thousands of dispatches and their answers, a listing of
/// 10,000 hosts), most of a 10,000-host mbatchd's resident size was free heap — 81 MB in
/// use of 509 MB after 4,000 dispatches to 1,000 hosts (`malloc_stats`), 155 MB resident
/// after a `malloc_trim` (docs/performance.md, "Fourth round"). Growth that is real
/// (jobs submitted) costs a trim that finds little, at most every [`TRIM_EVERY`].
fn trim_freed_memory(stop: std::sync::mpsc::Receiver<()>) {
    let mut base = resident_bytes();
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(TRIM_EVERY) {
        let now = resident_bytes();
        if now > base.saturating_add(TRIM_AFTER_GROWTH) {
            let t = std::time::Instant::now();
            release_freed_memory();
            base = resident_bytes();
            tracing::debug!(
                before = now,
                after = base,
                took_us = t.elapsed().as_micros() as u64,
                "gave freed heap back to the system"
            );
        } else {
            base = base.min(now);
        }
    }
}

/// This process's resident size in bytes (0 when /proc cannot tell).
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
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
    // The span goes with the future (not entered across awaits, which would label other
    // tasks' lines on this thread, e.g. an in-process sbatchd's).
    let span = info_span!("mbatchd", host = %me);
    serve(config, me, listen.into(), shutdown, run_opts)
        .instrument(span)
        .await
}

/// The environment variable naming the socket the supervising sbatchd listens on for
/// this mbatchd's report that it serves (`@name`: an abstract Unix socket).
pub const NOTIFY_ENV: &str = "BASALT_MBD_NOTIFY_SOCKET";

/// Tell the supervising sbatchd (if any) that this mbatchd holds the event-log lock,
/// has replayed lsb.events and listens: `READY=1\nMAINPID=<pid>` (sd_notify's format)
/// to the socket [`NOTIFY_ENV`] names. sbatchd restarts an mbatchd that had served at
/// once when it dies, and one that never served with a back-off.
fn notify_serving() {
    let Some(target) = std::env::var_os(NOTIFY_ENV).filter(|t| !t.is_empty()) else {
        return;
    };
    let msg = format!("READY=1\nMAINPID={}\n", std::process::id());
    let sent = (|| -> std::io::Result<usize> {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::ffi::OsStrExt;
        let sock = std::os::unix::net::UnixDatagram::unbound()?;
        let bytes = target.as_bytes();
        match bytes.strip_prefix(b"@") {
            Some(name) => {
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
                sock.send_to_addr(msg.as_bytes(), &addr)
            }
            None => sock.send_to(msg.as_bytes(), &target),
        }
    })();
    if let Err(e) = sent {
        warn!("cannot tell sbatchd that mbatchd serves ({NOTIFY_ENV}={target:?}): {e}");
    }
}

/// [`run_with`] inside its span.
async fn serve(
    config: Arc<Config>,
    me: String,
    listen: Listen,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    run_opts: RunOptions,
) -> Result<(), MbdError> {
    let keys = basalt_runtime::cluster_keys(&config)?;
    let auth = basalt_runtime::daemon_auth(&config, &me, keys.clone());
    let verifier = basalt_runtime::verifier(&config, &me, "mbatchd", keys)?;
    let logdir = config.logdir();
    if let Some(problem) = &run_opts.config_problem {
        error!(
            "running on the last accepted configuration: the files on disk do not load:\n{problem}"
        );
    }
    let egroups = egroup::resolve(&config).await;
    let host_egroups = egroup::resolve_hosts(&config).await;
    let now = now_ms();
    let mut sched = Sched::new(
        SchedConfig::from_config_dynamic(&config, &egroups, &host_egroups),
        now,
    );
    let opts = journal::Options::from_config(&config);
    let (mut journal, replayed) = {
        let (logdir, me) = (logdir.clone(), me.clone());
        tokio::task::spawn_blocking(move || journal::open(&logdir, &me, opts))
            .await
            .map_err(|_| MbdError::OwnerGone)??
    };
    let listener = match listen {
        Listen::Bound(l) => l,
        Listen::AfterLock(addr) => tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| MbdError::Bind { addr, source })?,
    };
    let n = replayed.events.len();
    // The replay, and the lsb.acct records a stop between the two files' writes left out
    // (written now, or by the first commit when lsb.acct cannot take them yet).
    if let Err(e) = journal.restore(&mut sched, &replayed) {
        warn!("accounting records wait to be written: {e}");
    }
    // The spool keeps the job files of the jobs the log still has.
    journal.retain_spooled(|id| {
        sched
            .jobs()
            .range((id, 0)..=(id, u32::MAX))
            .next()
            .is_some()
    });
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
    // Dropped when `serve` returns: the trimming thread ends with it.
    let (_trim_stop, trim_rx) = stdmpsc::channel::<()>();
    std::thread::Builder::new()
        .name("mbatchd-trim".into())
        .spawn(move || trim_freed_memory(trim_rx))
        .map_err(|_| MbdError::OwnerGone)?;
    sched.start(now, &me);
    let hello = sched.config().hello_interval_secs;
    if hello > basalt_sched::DEFAULT_HELLO_INTERVAL {
        info!(
            hello_interval_secs = hello,
            "sbatchds say hello every {hello} s (BASALT_SBD_HELLO_INTERVAL, at least one {}th of the server hosts: mbatchd takes at most {} hellos a second); a host is unreach after three missed ones",
            basalt_sched::HELLOS_PER_SEC,
            basalt_sched::HELLOS_PER_SEC
        );
    }
    let epoch = sched.epoch();
    info!(
        epoch,
        "mbatchd serving on {}",
        listener
            .local_addr()
            .map_or_else(|_| "?".into(), |a| a.to_string())
    );
    notify_serving();

    // MultiCluster: the key other clusters must share, and a link to each of them.
    // (Their master candidates are resolved once, here.)
    let mc_servers = mc::remote_servers(&config);
    let mc_trust = match mc::McTrust::load(&config, &me, &mc_servers) {
        Ok(t) => t.map(Arc::new),
        Err(e) => {
            error!("MultiCluster job forwarding is off: {e}");
            None
        }
    };
    // Connections to sbatchds within a budget of the open-file limit (raised to its hard
    // limit by the server's limits below, which leave that budget out).
    let nofile = basalt_runtime::serve::raise_open_files(0).unwrap_or(1024);
    let peers = dispatch::Peers::new(dispatch::Peers::budget_for(nofile));
    let to_sbatchds = peers.most_connections();
    let (tx, rx) = inbox::inbox(inbox::CLIENT_BOUND);
    let (mc_links, mc_tasks) = mc::start_links(
        &config,
        mc_servers,
        mc_trust.clone(),
        auth.local_addr(),
        tx.clone(),
    );
    let (done_tx, done_rx) = oneshot::channel::<MbdError>();
    let handle = tokio::runtime::Handle::current();
    let orders = tasks::Spawned::default();
    let streams = tasks::Spawned::default();
    let health = Arc::new(Health::default());
    let metrics = metrics::MbdMetrics::default();
    let owner_state = OwnerState {
        config: config.clone(),
        auth: auth.clone(),
        me: me.clone(),
        sched,
        journal,
        tx: tx.clone(),
        rt: handle,
        orders: orders.clone(),
        started: SystemTime::now(),
        peaks: basalt_sched::Peaks::default(),
        health: health.clone(),
        backlog: Vec::new(),
        this_iteration: Vec::new(),
        spooled: Vec::new(),
        write_failure: None,
        last_probe: std::time::Instant::now(),
        term_epoch: epoch,
        switch_retry: None,
        egroups,
        host_egroups,
        config_problem: run_opts.config_problem.clone().unwrap_or_default(),
        peers,
        mc_links,
        metrics: metrics.clone(),
    };
    std::thread::Builder::new()
        .name("mbatchd-owner".into())
        .spawn(move || {
            let mut owner_state = owner_state;
            let err = owner_state.run(rx);
            // The event log (and its lock) is closed before the exit is told, the rest
            // freed after it: a million jobs take about a second to free, which a
            // restart (`badmin reconfig`) or a resignation need not wait for.
            drop(owner_state.journal);
            let _ = done_tx.send(err);
        })
        .map_err(|_| MbdError::OwnerGone)?;

    let poller = tokio::spawn(lim_poller(
        config.clone(),
        me.clone(),
        tx.clone(),
        auth.clone(),
    ));

    let owner = Owner {
        tx: tx.clone(),
        health,
        streams: streams.clone(),
    };
    let metrics_server = {
        let owner = owner.clone();
        let ip = listener
            .local_addr()
            .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |a| a.ip());
        basalt_runtime::metrics::start(
            "mbatchd",
            ip,
            config.lsf_conf.mbd_metrics_port(),
            move || {
                let (owner, metrics) = (owner.clone(), metrics.clone());
                async move {
                    let snap = owner
                        .ask(|reply| Msg::Metrics { reply })
                        .await
                        .unwrap_or_default();
                    metrics::render(&metrics, &snap)
                }
            },
        )
        .await
    };
    // Other clusters' mbatchds are verified with the MultiCluster key, and may connect
    // from their servers' addresses.
    let mut allowed = Some(basalt_runtime::serve::Allowed::hosts(
        basalt_runtime::host_table(&config),
    ));
    let verifier = match &mc_trust {
        Some(t) => {
            allowed = match (allowed, t.remote_addresses()) {
                (Some(a), Some(remote)) => Some(a.with(remote)),
                _ => None,
            };
            verifier.with_inter_cluster(t.verifier_trust())
        }
        None => verifier,
    };
    let mut limits = basalt_runtime::serve::ServeLimits::from_config(&config);
    match config.batch.params.max_sbd_conns() {
        Some(n) => limits.max_conns = n as usize,
        // The open files less what the connections to sbatchds may take.
        None => limits.max_conns = limits.max_conns.saturating_sub(to_sbatchds).max(64),
    }
    // The commands' requests in flight are bounded in number ([`admit`]).
    let serving = basalt_runtime::serve::Serving::admitting(
        verifier.clone(),
        limits,
        allowed,
        Some(admit::admission()),
    );
    let svc = MbatchdService::new(owner, verifier, basalt_auth::root_rex(&config), mc_trust);
    let router = serving
        .builder()
        .add_service(
            pb::mbatchd_server::MbatchdServer::new(svc.clone())
                .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
        )
        .add_service(
            pb::mbatchd_peer_server::MbatchdPeerServer::new(svc.clone())
                .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
        )
        .add_service(
            pb::mbatchd_cluster_server::MbatchdClusterServer::new(svc)
                .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
        );
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serving
            .serve(router, listener, async move {
                let _ = stop_rx.await;
            })
            .await
    });
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
    if let Some(m) = metrics_server {
        m.abort();
    }
    for t in mc_tasks {
        t.abort();
    }
    // The tracked tasks ([`tasks`]): orders already logged are given a moment to reach
    // their sbatchds, then ended; the streams are ended now (an sbatchd resends what was
    // not acknowledged; a paged listing's reader sees it end).
    streams.abort();
    let left = orders.wait(tasks::ORDERS_GRACE).await;
    if left > 0 {
        warn!(
            left,
            "orders to sbatchds still under way after {:?}: ended (the next mbatchd \
             settles them with the sbatchds' hellos)",
            tasks::ORDERS_GRACE
        );
    }
    orders.abort();
    let _ = stop_tx.send(());
    // In-flight answers (the `badmin reconfig` that asked for this exit) go out; the
    // sbatchds' long-lived streams would hold a graceful stop for its whole limit, so
    // the rest is cut after a moment (the listener closes with the task).
    let mut server = server;
    if tokio::time::timeout(Duration::from_millis(300), &mut server)
        .await
        .is_err()
    {
        server.abort();
    }
    result
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
