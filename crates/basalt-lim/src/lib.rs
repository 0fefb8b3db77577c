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

pub mod elim;
pub mod sample;
mod server;
pub mod utmp;

use basalt_config::Config;
use basalt_core::{HostInfo, LoadIndex, LoadVector};
use basalt_lim_core::{CoreConfig, Effect, HostEntry, LimCore, Timing};
use basalt_proto::lim::lim_client::LimClient;
use basalt_runtime::AuthChannel as Channel;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot};
use tracing::{Instrument, debug, info, info_span, warn};

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
        reply: oneshot::Sender<basalt_lim_core::HeartbeatReply>,
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
}

/// A handle on a running LIM's owner task (used by the gRPC service).
#[derive(Debug, Clone)]
pub(crate) struct Handle {
    pub tx: mpsc::Sender<Msg>,
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
}

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
/// (`LSF_MASTER_LIST`'s when set), busy thresholds.
pub fn core_config(config: &Config, me: &str) -> CoreConfig {
    let master_list = master_list(config);
    let compute_only = config
        .lsf_conf
        .get("LIM_COMPUTE_ONLY")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "y" | "yes" | "1"));
    let hosts = config
        .cluster
        .hosts
        .iter()
        .map(|h| {
            let listed = master_list.is_empty()
                || master_list
                    .iter()
                    .any(|m| basalt_core::same_host(m, &h.name));
            let excluded = compute_only && basalt_core::same_host(&h.name, me);
            HostEntry {
                name: h.name.clone(),
                server: h.server,
                candidate: h.server && listed && !excluded,
                busy_thresholds: h.busy_thresholds.clone(),
            }
        })
        .collect();
    let decreasing_externals = config
        .shared
        .resources
        .iter()
        .filter(|r| r.increasing == Some(false))
        .map(|r| r.name.clone())
        .collect();
    CoreConfig {
        me: me.to_owned(),
        hosts,
        timing: timing_from(config),
        decreasing_externals,
        master_order: master_list,
    }
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

/// Static information for this host: the machine's numbers plus the model,
/// type and resources the cluster file gives it.
pub fn local_host_info(config: &Config, me: &str) -> HostInfo {
    let (ncpus, max_mem_mb, max_swp_mb, max_tmp_mb) = sample::read_static();
    let entry = config
        .cluster
        .hosts
        .iter()
        .find(|h| basalt_core::same_host(&h.name, me));
    let arch = std::env::consts::ARCH;
    let model = entry
        .and_then(|h| h.model.clone())
        .or_else(|| {
            config
                .shared
                .host_models
                .iter()
                .find(|m| {
                    m.architecture
                        .as_deref()
                        .is_some_and(|a| a.split_whitespace().any(|a| a.eq_ignore_ascii_case(arch)))
                })
                .map(|m| m.name.clone())
        })
        .unwrap_or_else(|| "UNKNOWN_AUTO_DETECT".to_owned());
    let cpu_factor = config.shared.cpu_factor(&model).unwrap_or(1.0);
    let host_type = entry
        .and_then(|h| h.host_type.clone())
        .or_else(|| config.shared.host_types.first().cloned())
        .unwrap_or_else(|| "LINUX".to_owned());
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

/// Run a LIM for host `me` on `listener` until `shutdown` resolves.
pub async fn run(
    config: Arc<Config>,
    me: &str,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), LimError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("lim", host = %me);
    async move {
        let core =
            LimCore::new(core_config(&config, &me)).map_err(|e| LimError::Core(e.to_string()))?;
        let info = local_host_info(&config, &me);
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
        let settings = Settings {
            timing: timing_from(&config),
            config: config.clone(),
            me: me.clone(),
            info,
            elim_names,
            auth: basalt_runtime::daemon_auth(&config, &me, keys.clone()),
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

        let service = LimService::new(
            Handle { tx: tx.clone() },
            basalt_runtime::verifier(&config, keys),
        );
        let router = tonic::transport::Server::builder().add_service(
            basalt_proto::lim::lim_server::LimServer::new(service)
                .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
        );
        let mut server_stop = stop_rx.clone();
        let server = tokio::spawn(basalt_runtime::serve(router, listener, async move {
            let _ = server_stop.wait_for(|s| *s).await;
        }));

        let sampler = tokio::spawn(sampler(tx.clone(), sample_interval(&config)));
        let elims = start_elims(&config, &me, tx.clone());

        info!(pid = std::process::id(), "LIM started");
        let owner = Owner::new(core, settings, tx);
        tokio::select! {
            _ = owner.run(rx) => {},
            _ = shutdown => info!("LIM shutting down"),
        }
        let _ = stop_tx.send(true);
        sampler.abort();
        socket.abort();
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

/// The owner of the election core and of this host's load.
struct Owner {
    core: LimCore,
    s: Settings,
    tx: mpsc::Sender<Msg>,
    origin: Instant,
    sampled: LoadVector,
    elim_values: BTreeMap<String, Vec<(String, f64)>>,
    warned_names: BTreeSet<String>,
    clients: BTreeMap<String, LimClient<Channel>>,
}

impl Owner {
    fn new(core: LimCore, s: Settings, tx: mpsc::Sender<Msg>) -> Owner {
        Owner {
            core,
            s,
            tx,
            origin: Instant::now(),
            sampled: LoadVector::default(),
            elim_values: BTreeMap::new(),
            warned_names: BTreeSet::new(),
            clients: BTreeMap::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Msg>) {
        let now = self.now();
        let effects = self.core.start(now);
        self.perform(effects);
        let every = Duration::from_millis((self.s.timing.exinterval_ms / 4).max(5));
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(msg) => self.handle(msg),
                    None => return,
                },
                _ = ticker.tick() => {
                    let now = self.now();
                    let effects = self.core.tick(now);
                    self.perform(effects);
                }
            }
        }
    }

    fn handle(&mut self, msg: Msg) {
        let now = self.now();
        // A LIM that was stopped catches up before it answers anything.
        let effects = self.core.wake(now);
        self.perform(effects);
        match msg {
            Msg::Heartbeat {
                from,
                load,
                info,
                reply,
            } => {
                let (r, effects) = self.core.on_heartbeat(now, &from, load, info);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::Announce { from, epoch, reply } => {
                let (r, effects) = self.core.on_announce(now, &from, epoch);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::Probe { from, reply } => {
                let (r, effects) = self.core.on_probe(now, &from);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::ClusterInfo { reply } => {
                let _ = reply.send(self.cluster_info());
            }
            Msg::Hosts { filter, reply } => {
                let _ = reply.send(server::hosts_reply(&self.core, &filter, now));
            }
            Msg::HeartbeatResult(r) => {
                let effects = match r {
                    Some(r) => self.core.on_heartbeat_reply(now, r),
                    None => self.core.on_heartbeat_failed(now),
                };
                self.perform(effects);
            }
            Msg::AnnounceResult { to, reply } => {
                if let Some(reply) = reply {
                    let effects = self.core.on_announce_reply(now, &to, reply);
                    self.perform(effects);
                }
            }
            Msg::ProbeResults { id, results } => {
                let effects = self.core.on_probe_results(now, id, results);
                self.perform(effects);
            }
            Msg::Sample(load) => {
                self.sampled = load;
                self.publish_local(now);
            }
            Msg::Elim(elim::ElimEvent::Values { elim, values }) => {
                let mut accepted = Vec::new();
                for v in values {
                    if !self.s.elim_names.contains(&v.name) {
                        if self.warned_names.insert(v.name.clone()) {
                            warn!(%elim, name = %v.name, "ELIM reports an index that is neither built in nor a Numeric resource in lsf.shared; ignored");
                        }
                        continue;
                    }
                    if let Some(value) = v.value {
                        accepted.push((v.name, value));
                    }
                }
                debug!(%elim, ?accepted, "ELIM values");
                self.elim_values.insert(elim, accepted);
                self.publish_local(now);
            }
            Msg::Elim(elim::ElimEvent::Exited { elim }) => {
                self.elim_values.remove(&elim);
                self.publish_local(now);
            }
        }
    }

    /// The local load is the sampled vector with every ELIM's values applied.
    fn publish_local(&mut self, now: u64) {
        let mut load = self.sampled.clone();
        for values in self.elim_values.values() {
            load.apply_overrides(values.iter().map(|(n, v)| (n.as_str(), *v)));
        }
        // ELIMs may not override what is static.
        load.builtin[LoadIndex::R15s.position()] =
            load.builtin[LoadIndex::R15s.position()].map(|v| v.max(0.0));
        let effects = self.core.set_local(now, load, self.s.info.clone());
        self.perform(effects);
    }

    fn cluster_info(&self) -> basalt_proto::lim::ClusterInfoReply {
        let c = &self.s.config;
        basalt_proto::lim::ClusterInfoReply {
            cluster: c.cluster_name.clone(),
            master: self.core.master().unwrap_or_default().to_owned(),
            epoch: self.core.epoch(),
            host: self.s.me.clone(),
            admins: c.cluster.admins.clone(),
            hosts: u32::try_from(c.cluster.hosts.len()).unwrap_or(u32::MAX),
            servers: u32::try_from(c.cluster.hosts.iter().filter(|h| h.server).count())
                .unwrap_or(u32::MAX),
            version: basalt_core::version::product_line(),
        }
    }

    fn client(&mut self, host: &str) -> Option<LimClient<Channel>> {
        if let Some(c) = self.clients.get(host) {
            return Some(c.clone());
        }
        let timeout = Duration::from_millis(self.s.timing.probe_timeout_ms);
        match basalt_runtime::lim_channel(&self.s.config, host, timeout, &self.s.auth) {
            Ok(c) => {
                self.clients.insert(host.to_owned(), c.clone());
                Some(c)
            }
            Err(e) => {
                warn!(%host, "cannot address LIM: {e}");
                None
            }
        }
    }

    fn perform(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::SendHeartbeat { to, load, info } => {
                    let Some(mut client) = self.client(&to) else {
                        continue;
                    };
                    let tx = self.tx.clone();
                    let req = basalt_proto::lim::HeartbeatRequest {
                        protocol: Some(basalt_proto::PROTOCOL),
                        host: self.s.me.clone(),
                        info: Some(basalt_proto::host_info_to_wire(&info)),
                        load: basalt_proto::load_to_wire(&load),
                    };
                    tokio::spawn(async move {
                        let r = client.heartbeat(req).await.ok().map(|r| {
                            let r = r.into_inner();
                            basalt_lim_core::HeartbeatReply {
                                accepted: r.accepted,
                                master: non_empty(r.master),
                                epoch: r.epoch,
                            }
                        });
                        let _ = tx.send(Msg::HeartbeatResult(r)).await;
                    });
                }
                Effect::Announce { to, epoch } => {
                    for host in to {
                        let Some(mut client) = self.client(&host) else {
                            continue;
                        };
                        let tx = self.tx.clone();
                        let req = basalt_proto::lim::AnnounceRequest {
                            protocol: Some(basalt_proto::PROTOCOL),
                            master: self.s.me.clone(),
                            epoch,
                        };
                        tokio::spawn(async move {
                            let reply = client.announce(req).await.ok().map(|r| {
                                let r = r.into_inner();
                                basalt_lim_core::AnnounceReply {
                                    accepted: r.accepted,
                                    master: non_empty(r.master),
                                    epoch: r.epoch,
                                }
                            });
                            let _ = tx.send(Msg::AnnounceResult { to: host, reply }).await;
                        });
                    }
                }
                Effect::Probe { id, hosts } => {
                    debug!(id, ?hosts, "probing");
                    let targets: Vec<_> = hosts
                        .into_iter()
                        .map(|h| {
                            // A fresh channel: a cached one to a host that just
                            // died may sit in reconnect back-off and turn a
                            // refused connection into a full PROBE_TIMEOUT wait.
                            let timeout = Duration::from_millis(self.s.timing.probe_timeout_ms);
                            let c = basalt_runtime::lim_channel(
                                &self.s.config,
                                &h,
                                timeout,
                                &self.s.auth,
                            )
                            .ok();
                            (h, c)
                        })
                        .collect();
                    let tx = self.tx.clone();
                    let me = self.s.me.clone();
                    let deadline = Duration::from_millis(self.s.timing.probe_timeout_ms);
                    tokio::spawn(async move {
                        let probes = targets.into_iter().map(|(host, client)| {
                            let me = me.clone();
                            async move {
                                let Some(mut client) = client else {
                                    return (host, None);
                                };
                                let req = basalt_proto::lim::ProbeRequest {
                                    protocol: Some(basalt_proto::PROTOCOL),
                                    from: me,
                                };
                                // An application-level health call with a deadline,
                                // answered by the owner task: a hung LIM whose socket
                                // still accepts connections does not answer it.
                                let mut req = tonic::Request::new(req);
                                req.set_timeout(deadline);
                                let r = tokio::time::timeout(deadline, client.probe(req))
                                    .await
                                    .ok()
                                    .and_then(Result::ok)
                                    .map(|r| {
                                        let r = r.into_inner();
                                        basalt_lim_core::ProbeReply {
                                            host: r.host,
                                            is_master: r.is_master,
                                            master: non_empty(r.master),
                                            epoch: r.epoch,
                                            master_heard_ago_ms: r.master_heard_ago_ms,
                                        }
                                    });
                                (host, r)
                            }
                        });
                        let results = futures_join_all(probes).await;
                        let _ = tx.send(Msg::ProbeResults { id, results }).await;
                    });
                }
                Effect::MasterChanged {
                    master,
                    epoch,
                    me_is_master,
                } => {
                    info!(
                        master = master.as_deref().unwrap_or("-"),
                        epoch, me_is_master, "master changed"
                    );
                }
                Effect::CatchingUp { silent_ms } => {
                    warn!(
                        silent_ms,
                        "this LIM did not run for a while (stopped or starved): forgetting the master and catching up"
                    );
                }
                Effect::HostStatusChanged { host, status } => {
                    info!(%host, ?status, "host status changed");
                }
            }
        }
    }
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Await every future concurrently, keeping their order.
async fn futures_join_all<F>(futs: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        if let Ok(v) = h.await {
            out.push(v);
        }
    }
    out
}
