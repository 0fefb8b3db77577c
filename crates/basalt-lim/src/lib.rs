//! The Load Information Manager (LIM) daemon, one per host.
//!
//! Owns: this host's load sampling, its ELIM children, and the driver of the
//! election core (`basalt-lim-core`). One task (the *owner*) holds the core;
//! gRPC handlers, the sampler, ELIM readers and outgoing RPCs talk to it over a
//! channel, so no lock is ever held across an await.
//!
//! Inputs: the loaded configuration (lsf.conf, lsf.shared, lsf.cluster), the
//! host it plays, a bound TCP listener and a shutdown future. Outputs: the
//! `basalt.lim.v1.Lim` gRPC service, heartbeats/announcements/probes to the
//! other LIMs, and tracing logs.
//!
//! `main` (the `lim` binary) parses flags, loads the configuration, binds the
//! host's address and `LSF_LIM_PORT`, and calls [`run`].
//!
//! The load source is a seam ([`Options::load`], a [`LoadSource`]): by default the
//! machine itself (`/proc`, `statvfs`, utmp: [`sample`]) and the ELIMs of
//! `LSF_SERVERDIR`; a hollow host (`basalt-hollow`, the scale harness) gives its own,
//! and everything else — the election, heartbeats, the host table — is this code.

pub mod elim;
mod metrics;
mod owner;
pub mod sample;
mod server;
pub mod utmp;

use basalt_config::Config;
use basalt_core::{HostInfo, LoadVector};
use basalt_lim_core::{CoreConfig, CoreError, CoreHosts, HostEntry, LimCore, Timing};
use basalt_proto::common::Daemon;
use basalt_runtime::control::{Control, ControlService};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot};
use tracing::{Instrument, info, info_span, warn};

use owner::Owner;
pub use server::LimService;

/// Errors that stop a LIM from starting.
#[derive(Debug, Error)]
pub enum LimError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("election core: {0}")]
    Core(String),
    #[error("gRPC server: {0}")]
    Serve(#[from] tonic::transport::Error),
    #[error(transparent)]
    Auth(#[from] basalt_auth::AuthError),
}

/// Requests the owner task serves.
#[derive(Debug)]
pub(crate) enum Msg {
    Heartbeat {
        from: String,
        load: LoadVector,
        info: HostInfo,
        locked: bool,
        reply: oneshot::Sender<basalt_lim_core::HeartbeatReply>,
    },
    /// `lsadmin limlock` (Some(seconds), 0 = until unlocked) / `limunlock` (None).
    Lock {
        seconds: Option<u32>,
        reply: oneshot::Sender<Result<(), basalt_lim_core::LockError>>,
    },
    Announce {
        from: String,
        epoch: u64,
        reply: oneshot::Sender<basalt_lim_core::AnnounceReply>,
    },
    Probe {
        from: String,
        reply: oneshot::Sender<basalt_lim_core::ProbeReply>,
    },
    ClusterInfo {
        reply: oneshot::Sender<basalt_proto::lim::ClusterInfoReply>,
    },
    Hosts {
        filter: Vec<String>,
        /// (table, version) a poller saw: only the hosts changed since (None: all).
        since: Option<(u64, u64)>,
        reply: oneshot::Sender<basalt_proto::lim::HostsReply>,
    },
    HeartbeatResult(Option<basalt_lim_core::HeartbeatReply>),
    AnnounceResult {
        to: String,
        reply: Option<basalt_lim_core::AnnounceReply>,
    },
    ProbeResults {
        id: u64,
        results: Vec<(String, Option<basalt_lim_core::ProbeReply>)>,
    },
    Sample(LoadVector),
    Elim(elim::ElimEvent),
    /// A scrape of `GET /metrics`.
    Metrics {
        reply: oneshot::Sender<metrics::Snapshot>,
    },
}

/// A handle on a running LIM's owner task (used by the gRPC service).
#[derive(Debug, Clone)]
pub(crate) struct Handle {
    pub tx: mpsc::Sender<Msg>,
}

impl Handle {
    /// `lsadmin limlock`/`limunlock` through the owner (from a blocking thread: the
    /// DaemonControl service runs it on one).
    fn lock(&self, seconds: Option<u32>) -> Result<(), String> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.tx
            .blocking_send(Msg::Lock { seconds, reply })
            .map_err(|_| "the LIM is shutting down".to_owned())?;
        rx.blocking_recv()
            .map_err(|_| "the LIM is shutting down".to_owned())?
            .map_err(|e| e.to_string())
    }

    /// The master this LIM knows (for the master socket); None when it knows none or is
    /// shutting down.
    async fn master(&self) -> Option<String> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.tx.send(Msg::ClusterInfo { reply }).await.ok()?;
        let info = rx.await.ok()?;
        (!info.master.is_empty()).then_some(info.master)
    }
}

/// Static settings the owner needs besides the core.
struct Settings {
    config: Arc<Config>,
    me: String,
    info: HostInfo,
    timing: Timing,
    /// Names ELIMs may report: built-ins and lsf.shared Numeric resources.
    elim_names: BTreeSet<String>,
    /// This LIM's credentials towards other LIMs.
    auth: basalt_runtime::Authenticator,
    /// The counters of `GET /metrics`.
    metrics: metrics::LimMetrics,
    /// The master this LIM follows, for the master watch socket.
    master: tokio::sync::watch::Sender<Option<String>>,
}

pub use basalt_auth::socket::MASTER_WATCH_MAX;

/// The election timing from lsf.cluster's Parameters section.
pub fn timing_from(config: &Config) -> Timing {
    let p = &config.cluster.params;
    Timing {
        exinterval_ms: secs_to_ms(p.exinterval_secs).max(10),
        master_inactivity_limit: p.master_inactivity_limit,
        host_inactivity_limit: p.host_inactivity_limit,
        retry_limit: p.retry_limit,
        probe_timeout_ms: secs_to_ms(p.probe_timeout_secs).max(10),
    }
}

fn secs_to_ms(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        (s * 1000.0).round() as u64
    } else {
        0
    }
}

/// Build the election core's view of the cluster: hosts in file order, which
/// of them may be master (server hosts, restricted by `LSF_MASTER_LIST` when
/// set, minus this host when `LIM_COMPUTE_ONLY` is set), the election order
/// (`LSF_MASTER_LIST`'s when set), busy thresholds. The host table is built once per
/// loaded configuration and shared by every LIM that holds it ([`Config::derived`]).
pub fn core_config(config: &Config, me: &str) -> Result<CoreConfig, CoreError> {
    let compute_only = config
        .lsf_conf
        .get("LIM_COMPUTE_ONLY")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "y" | "yes" | "1"));
    let hosts = config.derived(|config| LimHosts(core_hosts(config)));
    let hosts = hosts.0.clone()?;
    let decreasing_externals = config
        .shared
        .resources
        .iter()
        .filter(|r| r.increasing == Some(false))
        .map(|r| r.name.clone())
        .collect();
    Ok(CoreConfig {
        me: me.to_owned(),
        hosts,
        me_candidate: !compute_only,
        timing: timing_from(config),
        decreasing_externals,
        load_reports_per_sec: basalt_lim_core::DEFAULT_LOAD_REPORTS_PER_SEC,
    })
}

/// The election's host table of a configuration (see [`core_config`]).
struct LimHosts(Result<Arc<CoreHosts>, CoreError>);

fn core_hosts(config: &Config) -> Result<Arc<CoreHosts>, CoreError> {
    let master_list = master_list(config);
    let hosts = config
        .cluster
        .hosts
        .iter()
        .map(|h| {
            let listed = master_list.is_empty()
                || master_list
                    .iter()
                    .any(|m| basalt_core::same_host(m, &h.name));
            HostEntry {
                name: h.name.clone(),
                server: h.server,
                candidate: h.server && listed,
                busy_thresholds: h.busy_thresholds.clone(),
            }
        })
        .collect();
    CoreHosts::new(hosts, &master_list).map(Arc::new)
}

/// `LSF_MASTER_LIST` from lsf.conf: the master candidates in election order
/// (blank-separated host names; empty when unset). Names are canonicalised to
/// the cluster file's; a name the cluster file lacks, or a repeated name, is
/// dropped with a warning.
pub fn master_list(config: &Config) -> Vec<String> {
    let Some(raw) = config.lsf_conf.get("LSF_MASTER_LIST") else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for name in raw
        .split_whitespace()
        .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
        .filter(|t| !t.is_empty())
    {
        match config
            .cluster
            .hosts
            .iter()
            .find(|h| basalt_core::same_host(&h.name, name))
        {
            Some(h) if out.contains(&h.name) => {
                warn!(host = %name, "LSF_MASTER_LIST names a host twice; the first place counts");
            }
            Some(h) if !h.server => {
                warn!(host = %name, "LSF_MASTER_LIST names a client host; it cannot become master");
            }
            Some(h) => out.push(h.name.clone()),
            None => {
                warn!(host = %name, "LSF_MASTER_LIST names a host that is not in the cluster file; ignored");
            }
        }
    }
    out
}

/// Where a LIM's load indices and static sizes come from, when not from the machine it
/// runs on (see [`Options::load`]).
pub trait LoadSource: Send + Sync + 'static {
    /// The host's static sizes: (ncpus, maxmem MB, maxswp MB, maxtmp MB).
    fn static_sizes(&self, host: &str) -> (u32, u64, u64, u64);
    /// Its load indices `t` seconds after its LIM started (called every sampling
    /// interval, `ELIM_POLL_INTERVAL` at most 5 s).
    fn sample(&self, host: &str, t: f64) -> LoadVector;
}

/// What a LIM runs with besides its configuration.
#[derive(Clone, Default)]
pub struct Options {
    /// Its load source: None for the machine itself and the ELIMs of `LSF_SERVERDIR`;
    /// a given source stands for both (no ELIM is started).
    pub load: Option<Arc<dyn LoadSource>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("load", &self.load.as_ref().map(|_| "custom"))
            .finish()
    }
}

/// Static information for this host: the machine's numbers plus the model,
/// type and resources the cluster file gives it.
pub fn local_host_info(config: &Config, me: &str) -> HostInfo {
    host_info_with(config, me, sample::read_static())
}

/// [`local_host_info`] with the static sizes given: (ncpus, maxmem, maxswp, maxtmp MB).
pub fn host_info_with(config: &Config, me: &str, sizes: (u32, u64, u64, u64)) -> HostInfo {
    let (ncpus, max_mem_mb, max_swp_mb, max_tmp_mb) = sizes;
    let entry = config
        .cluster
        .hosts
        .iter()
        .find(|h| basalt_core::same_host(&h.name, me));
    let model = config.host_model_of(me, std::env::consts::ARCH);
    let cpu_factor = config.shared.cpu_factor(&model).unwrap_or(1.0);
    let host_type = config.host_type_of(me);
    HostInfo {
        name: me.to_owned(),
        host_type,
        model,
        cpu_factor,
        ncpus,
        max_mem_mb,
        max_swp_mb,
        max_tmp_mb,
        server: entry.is_none_or(|h| h.server),
        resources: entry.map(|h| h.resources.clone()).unwrap_or_default(),
    }
}

/// Run a LIM for host `me` on `listener` until `shutdown` resolves, sampling the
/// machine it runs on.
pub async fn run(
    config: Arc<Config>,
    me: &str,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), LimError> {
    run_with(config, me, listener, Options::default(), shutdown).await
}

/// [`run`] with [`Options`] (a load source of its own).
pub async fn run_with(
    config: Arc<Config>,
    me: &str,
    listener: tokio::net::TcpListener,
    opts: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), LimError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("lim", host = %me);
    async move {
        let core = core_config(&config, &me)
            .and_then(LimCore::new)
            .map_err(|e| LimError::Core(e.to_string()))?;
        let ex = core.timing().exinterval_ms;
        if core.report_interval_ms() > ex {
            // Said once per LIM so that an administrator who set EXINTERVAL sees why
            // the hosts that cannot be master report less often.
            info!(
                exinterval_ms = ex,
                report_ms = core.report_interval_ms(),
                "the hosts that can never be master report their load every {} ms, not every EXINTERVAL ({} ms): the master takes at most {} load reports a second",
                core.report_interval_ms(),
                ex,
                basalt_lim_core::DEFAULT_LOAD_REPORTS_PER_SEC
            );
        }
        let info = match &opts.load {
            None => local_host_info(&config, &me),
            Some(src) => host_info_with(&config, &me, src.static_sizes(&me)),
        };
        let mut elim_names: BTreeSet<String> = basalt_core::BUILTIN_INDICES
            .iter()
            .map(|i| i.name().to_owned())
            .collect();
        elim_names.extend(
            config
                .shared
                .resources
                .iter()
                .filter(|r| r.kind == basalt_config::ResourceKind::Numeric)
                .map(|r| r.name.clone()),
        );
        let keys = basalt_runtime::cluster_keys(&config)?;
        let (master_tx, master_rx) = tokio::sync::watch::channel(None::<String>);
        let settings = Settings {
            timing: timing_from(&config),
            config: config.clone(),
            me: me.clone(),
            info,
            elim_names,
            auth: basalt_runtime::daemon_auth(&config, &me, keys.clone()),
            metrics: metrics::LimMetrics::default(),
            master: master_tx,
        };
        let (tx, rx) = mpsc::channel(1024);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);

        // The credential socket: users of this host get their credentials here.
        let lim_addr = listener.local_addr().map_err(|e| {
            LimError::Runtime(basalt_runtime::RuntimeError::Endpoint(e.to_string()))
        })?;
        let cred_socket = basalt_auth::socket::bind(&basalt_auth::socket::name(lim_addr))?;
        let me_uid = nix::unistd::geteuid();
        let minter = basalt_auth::socket::Minter {
            keys: keys.clone(),
            host: me.clone(),
            cluster: config.cluster_name.clone(),
            owner_only: (!me_uid.is_root()).then_some(me_uid.as_raw()),
        };
        let mut socket_stop = stop_rx.clone();
        let socket = tokio::spawn(basalt_auth::socket::serve(
            cred_socket,
            minter,
            async move {
                let _ = socket_stop.wait_for(|s| *s).await;
            },
        ));

        // The master socket: commands on this host ask it who the master is.
        let master_socket = basalt_auth::socket::bind(&basalt_auth::socket::master_name(
            &basalt_auth::socket::name(lim_addr),
        ))?;
        let mut master_stop = stop_rx.clone();
        let handle = Handle { tx: tx.clone() };
        let master = tokio::spawn(basalt_auth::socket::serve_master(
            master_socket,
            move || {
                let handle = handle.clone();
                async move { handle.master().await }
            },
            async move {
                let _ = master_stop.wait_for(|s| *s).await;
            },
        ));

        // The master watch socket: local daemons (sbatchd) learn of a new master there.
        let watch_socket = basalt_auth::socket::bind(&basalt_auth::socket::master_watch_name(
            &basalt_auth::socket::name(lim_addr),
        ))?;
        let mut watch_stop = stop_rx.clone();
        let watcher = tokio::spawn(basalt_auth::socket::serve_master_watch(
            watch_socket,
            master_rx,
            MASTER_WATCH_MAX,
            async move {
                let _ = watch_stop.wait_for(|s| *s).await;
            },
        ));

        let verifier = basalt_runtime::verifier(&config, &me, "lim", keys)?;
        let serving = basalt_runtime::serving(&config, verifier.clone());
        let control = Control::current();
        let control_service = ControlService::new(
            Daemon::Lim,
            &me,
            config.clone(),
            verifier.clone(),
            control.clone(),
            Arc::new(basalt_runtime::control::check_lim_files),
        )
        .with_lock({
            let handle = Handle { tx: tx.clone() };
            Arc::new(move |seconds| handle.lock(seconds))
        });
        let service = LimService::new(Handle { tx: tx.clone() }, verifier);
        let router = serving
            .builder()
            .add_service(control_service.server())
            .add_service(
                basalt_proto::lim::lim_server::LimServer::new(service.clone())
                    .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
            )
            .add_service(
                basalt_proto::lim::lim_peer_server::LimPeerServer::new(service)
                    .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
            );
        let mut server_stop = stop_rx.clone();
        let server = tokio::spawn(async move {
            serving
                .serve(router, listener, async move {
                    let _ = server_stop.wait_for(|s| *s).await;
                })
                .await
        });

        let metrics_server = {
            let (tx, counters) = (tx.clone(), settings.metrics.clone());
            basalt_runtime::metrics::start(
                "lim",
                lim_addr.ip(),
                config.lsf_conf.lim_metrics_port(),
                move || {
                    let (tx, counters) = (tx.clone(), counters.clone());
                    async move {
                        let (reply, rx) = oneshot::channel();
                        let snap = match tx.send(Msg::Metrics { reply }).await {
                            Ok(()) => rx.await.unwrap_or_default(),
                            Err(_) => metrics::Snapshot::default(),
                        };
                        metrics::render(&counters, &snap)
                    }
                },
            )
            .await
        };
        let (sampler, elims) = match &opts.load {
            None => (
                tokio::spawn(sampler(tx.clone(), sample_interval(&config))),
                start_elims(&config, &me, tx.clone()),
            ),
            Some(src) => (
                tokio::spawn(sample_from(
                    src.clone(),
                    me.clone(),
                    tx.clone(),
                    sample_interval(&config),
                )),
                Vec::new(),
            ),
        };

        info!(pid = std::process::id(), "LIM started");
        let owner = Owner::new(core, settings, tx);
        tokio::select! {
            _ = owner.run(rx) => {},
            _ = control.or_shutdown(shutdown) => info!("LIM shutting down"),
        }
        let _ = stop_tx.send(true);
        sampler.abort();
        if let Some(m) = metrics_server {
            m.abort();
        }
        socket.abort();
        master.abort();
        watcher.abort();
        for e in elims {
            e.abort();
        }
        match server.await {
            Ok(r) => r?,
            Err(e) => warn!("server task: {e}"),
        }
        Ok(())
    }
    .instrument(span)
    .await
}

/// How often the built-in indices are sampled: `ELIM_POLL_INTERVAL`, at most 5 s.
fn sample_interval(config: &Config) -> Duration {
    let s = config.cluster.params.elim_poll_interval_secs;
    let s = if s.is_finite() && s > 0.0 {
        s.min(5.0)
    } else {
        5.0
    };
    Duration::from_secs_f64(s.max(0.05))
}

async fn sampler(tx: mpsc::Sender<Msg>, every: Duration) {
    let origin = Instant::now();
    let mut smoother = sample::Smoother::default();
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut first = true;
    loop {
        ticker.tick().await;
        let t = origin.elapsed().as_secs_f64();
        // Filesystem probes (statvfs on /tmp) can hang on a sick mount: never
        // block the runtime on them, and give up on a reading that takes too long.
        let read = tokio::task::spawn_blocking(move || sample::read_raw(t));
        let raw = match tokio::time::timeout(every.max(Duration::from_secs(1)), read).await {
            Ok(Ok(raw)) => raw,
            Ok(Err(e)) => {
                warn!("load sampler failed: {e}");
                continue;
            }
            Err(_) => {
                warn!("load sampling timed out");
                continue;
            }
        };
        let load = smoother.update(&raw);
        if tx.send(Msg::Sample(load)).await.is_err() {
            return;
        }
        if first {
            // A second reading soon after the first gives the rate indices a value.
            first = false;
            tokio::time::sleep(Duration::from_millis(200).min(every)).await;
            ticker.reset_immediately();
        }
    }
}

/// The sampler of a given load source: its reading every `every`.
async fn sample_from(src: Arc<dyn LoadSource>, me: String, tx: mpsc::Sender<Msg>, every: Duration) {
    let origin = Instant::now();
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let load = src.sample(&me, origin.elapsed().as_secs_f64());
        if tx.send(Msg::Sample(load)).await.is_err() {
            return;
        }
    }
}

fn start_elims(
    config: &Config,
    me: &str,
    tx: mpsc::Sender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let Some(serverdir) = config.lsf_conf.get("LSF_SERVERDIR") else {
        return Vec::new();
    };
    let serverdir = config.resolve_path(serverdir);
    let found = elim::discover(&serverdir);
    if found.is_empty() {
        return Vec::new();
    }
    let params = &config.cluster.params.other;
    let settings = elim::ElimSettings {
        args: params
            .get("ELIMARGS")
            .map(|a| a.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default(),
        env: vec![
            ("LSF_ENVDIR".into(), config.envdir.display().to_string()),
            ("LSF_SERVERDIR".into(), serverdir.display().to_string()),
            ("LSF_HOSTNAME".into(), me.to_owned()),
            ("BASALT_HOST".into(), me.to_owned()),
        ],
        max_restarts: params
            .get("LSF_ELIM_RESTARTS")
            .and_then(|v| v.trim().parse().ok()),
    };
    let (etx, mut erx) = mpsc::channel(64);
    let mut tasks: Vec<_> = found
        .into_iter()
        .map(|p| elim::spawn(p, settings.clone(), etx.clone()))
        .collect();
    tasks.push(tokio::spawn(async move {
        while let Some(ev) = erx.recv().await {
            if tx.send(Msg::Elim(ev)).await.is_err() {
                return;
            }
        }
    }));
    tasks
}
