//! Shared daemon and client plumbing for Basalt.
//!
//! Owns nothing mutable itself. It gives every daemon and command the same
//! answers to the same questions:
//! * where the configuration is (`LSF_ENVDIR`, default `/etc`) — [`envdir`];
//! * which host this process plays and at what address each host lives
//!   ([`local_host`], [`host_addr`]: the Basalt `ADDRESS` column of
//!   `lsf.cluster.<cluster>`, else name resolution);
//! * how daemons log ([`init_tracing`]: `tracing` to stderr, filter from
//!   `BASALT_LOG`, else from `LSF_LOG_MASK`; [`init_daemon_tracing`]: also to
//!   `LSF_LOGDIR/<daemon>.log.<host>`, reopened on SIGHUP — [`logfile`]);
//! * when to stop ([`shutdown_signal`]: SIGTERM or SIGINT);
//! * how to serve gRPC on an already bound listener, within bounds and behind the
//!   authentication layer ([`serve`]: [`serve::Serving`]);
//! * how to reach LIMs and find the master ([`lim_channel`], [`find_master`]), and how a
//!   connection leaves from the host's own address ([`connect`]);
//! * what time it is ([`time`]: one [`time::Clock`], system or manual, and the one
//!   `localtime_r`/`mktime` wrapper);
//! * how a daemon starts ([`daemon`]: the common flags and start-up of the daemon
//!   `main`s);
//! * how `LSF_SERVERDIR/egroup` is asked for the members of a `(!)` group ([`egroup`]);
//! * how a daemon serves its Prometheus metrics ([`metrics`]);
//! * how administrators start, stop, restart and reconfigure daemons through the
//!   daemons themselves ([`control`]).

pub mod connect;
pub mod control;
pub mod daemon;
pub mod egroup;
pub mod logfile;
pub mod metrics;
pub mod serve;
pub mod time;

pub use basalt_auth::{Authenticator, Identity, Need, Verifier};

use basalt_auth::HostTable;
use basalt_auth::key::KeySource;
use basalt_config::Config;
use basalt_proto::lim::lim_client::LimClient;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tonic::transport::{Channel, Endpoint};

pub use basalt_auth::channel::AuthService;

/// A channel whose every request carries its own credential.
pub type AuthChannel = AuthService<Channel>;

/// The largest request or reply a Basalt service accepts (bigger ones are refused with
/// `RESOURCE_EXHAUSTED` and the service keeps serving). Job files travel in requests.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The largest listing a command takes in one answer (`bjobs -u all` of a million jobs
/// is about 140 MB).
pub const MAX_LISTING_BYTES: usize = 1024 * 1024 * 1024;

/// Errors a daemon or command can meet before it talks to anyone.
#[derive(Debug, Error)]
pub enum RuntimeError {
    #[error("host <{0}> is not defined in the cluster file")]
    UnknownHost(String),
    #[error(
        "cannot tell which host this is: the local host name <{0}> is not in the cluster file (use -H <host>)"
    )]
    LocalHostNotInCluster(String),
    #[error("cannot resolve the address of host <{host}>: {reason}")]
    Unresolvable { host: String, reason: String },
    #[error("invalid endpoint {0}")]
    Endpoint(String),
    #[error("LIM is down; try later")]
    NoLim,
    /// A daemon refused who we are.
    #[error("{0}")]
    Permission(String),
    #[error(transparent)]
    Auth(#[from] basalt_auth::AuthError),
}

/// The configuration directory: `$LSF_ENVDIR`, else `/etc` (LSF's rule).
pub fn envdir() -> PathBuf {
    std::env::var_os("LSF_ENVDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc"))
}

/// Is `name` a user the password database knows (getpwnam)? What the configuration
/// check of a queue's USERS asks ([`basalt_config::load_with_users`]). A lookup that
/// fails (the database cannot be asked) counts as known: a queue is never dropped
/// because a directory service was down.
pub fn user_known(name: &str) -> bool {
    !matches!(nix::unistd::User::from_name(name), Ok(None))
}

/// The whole configuration as mbatchd and `badmin ckconfig` check it: every file, with a
/// queue's USERS judged against the password database ([`user_known`]).
pub fn load_batch_config(
    envdir: &std::path::Path,
) -> Result<basalt_config::Loaded, basalt_config::ConfigErrors> {
    basalt_config::load_with_users(envdir, &user_known)
}

/// The tracing level of an `LSF_LOG_MASK` value (LSF's syslog priorities: LOG_ERR,
/// LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG, LOG_DEBUG1..3).
pub fn log_mask_level(mask: &str) -> &'static str {
    match mask.trim() {
        "LOG_EMERG" | "LOG_ALERT" | "LOG_CRIT" | "LOG_ERR" => "error",
        "LOG_WARNING" | "LOG_NOTICE" => "warn",
        "LOG_DEBUG" => "debug",
        m if m.starts_with("LOG_DEBUG") => "trace",
        _ => "info",
    }
}

/// The daemons' log filter: `BASALT_LOG` (tracing's env-filter syntax), else
/// `LSF_LOG_MASK` in lsf.conf ([`log_mask_level`]), else `info`.
fn log_filter(config: Option<&Config>) -> tracing_subscriber::EnvFilter {
    use tracing_subscriber::EnvFilter;
    let from_mask = config
        .and_then(|c| c.lsf_conf.get("LSF_LOG_MASK"))
        .map(log_mask_level);
    std::env::var("BASALT_LOG")
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(from_mask.unwrap_or("info")))
}

/// Start logging for a daemon, to stderr, with [`log_filter`]'s filter. Safe to call
/// more than once.
pub fn init_tracing(config: Option<&Config>) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_filter(config))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

/// The log file of `daemon` for `host` (default: this machine's name) in `LSF_LOGDIR`:
/// `<LSF_LOGDIR>/<daemon>.log.<host>`, LSF's name. None without `LSF_LOGDIR`.
pub fn daemon_log_path(config: &Config, daemon: &str, host: Option<&str>) -> Option<PathBuf> {
    let dir = config
        .lsf_conf
        .get("LSF_LOGDIR")
        .map(str::trim)
        .filter(|d| !d.is_empty())?;
    let host = match host {
        Some(h) => h.to_owned(),
        None => nix::unistd::gethostname().ok()?.into_string().ok()?,
    };
    Some(PathBuf::from(dir).join(format!("{daemon}.log.{host}")))
}

/// Start logging for a daemon: to stderr (the journal under systemd) and, when lsf.conf
/// sets `LSF_LOGDIR`, also to [`daemon_log_path`], reopened on SIGHUP (rotation). Both
/// with [`log_filter`]'s filter (`LSF_LOG_MASK`). A log file that cannot be opened is
/// reported on stderr and the daemon logs to stderr only. Safe to call more than once.
pub fn init_daemon_tracing(config: &Config, daemon: &str, host: Option<&str>) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let file = daemon_log_path(config, daemon, host).and_then(|path| {
        let opened = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| logfile::LogFile::open(&path));
        match opened {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!(
                    "{daemon}: cannot open the log file {} ({e}); logging to stderr only",
                    path.display()
                );
                None
            }
        }
    });
    let Some(file) = file else {
        return init_tracing(Some(config));
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let to_file = tracing_subscriber::fmt::layer()
        .with_writer(file.clone())
        .with_ansi(false)
        .with_target(false);
    if tracing_subscriber::registry()
        .with(log_filter(Some(config)))
        .with(stderr)
        .with(to_file)
        .try_init()
        .is_ok()
        && let Err(e) = file.reopen_on_sighup()
    {
        tracing::warn!("no log reopening on SIGHUP: {e}");
    }
}

/// Resolves when the process receives SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
        }
        _ => {
            // Without signal handlers we can only wait for ctrl-c.
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The canonical name (as written in the cluster file) of `host`.
pub fn canonical_host(config: &Config, host: &str) -> Option<String> {
    cluster_host(config, host).map(|h| h.name.clone())
}

/// The cluster file's hosts by [`basalt_core::host_key`], built once per loaded
/// configuration ([`Config::derived`]): a name is found without a scan of thousands.
struct HostIndex(std::collections::HashMap<String, Vec<usize>>);

/// The cluster file's entry of `host` (names compare as [`basalt_core::same_host`]).
pub fn cluster_host<'a>(
    config: &'a Config,
    host: &str,
) -> Option<&'a basalt_config::cluster::ClusterHost> {
    let index = config.derived(|c| {
        let mut m: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::with_capacity(c.cluster.hosts.len());
        for (i, h) in c.cluster.hosts.iter().enumerate() {
            m.entry(basalt_core::host_key(&h.name)).or_default().push(i);
        }
        HostIndex(m)
    });
    let hosts = &config.cluster.hosts;
    index
        .0
        .get(&basalt_core::host_key(host))?
        .iter()
        .filter_map(|&i| hosts.get(i))
        .find(|h| basalt_core::same_host(&h.name, host))
}

/// The host this process plays: `explicit` (`-H host`) if given, else the
/// machine's host name; either must be in the cluster file.
pub fn local_host(config: &Config, explicit: Option<&str>) -> Result<String, RuntimeError> {
    match explicit {
        Some(h) => canonical_host(config, h).ok_or_else(|| RuntimeError::UnknownHost(h.into())),
        None => {
            let name = machine_hostname();
            canonical_host(config, &name).ok_or(RuntimeError::LocalHostNotInCluster(name))
        }
    }
}

/// The machine's own host name (empty if it cannot be read).
pub fn machine_hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

/// The address a host's daemons listen on: the Basalt `ADDRESS` column of the
/// cluster file when present, else the first address the name resolves to.
pub fn host_addr(config: &Config, host: &str) -> Result<IpAddr, RuntimeError> {
    let entry = cluster_host(config, host).ok_or_else(|| RuntimeError::UnknownHost(host.into()))?;
    entry_addr(entry, host)
}

/// The address of the cluster file's host `entry` (`host`: the name asked for, for the
/// error).
fn entry_addr(
    entry: &basalt_config::cluster::ClusterHost,
    host: &str,
) -> Result<IpAddr, RuntimeError> {
    if let Some(addr) = entry.address {
        return Ok(addr);
    }
    (entry.name.as_str(), 0)
        .to_socket_addrs()
        .map_err(|e| RuntimeError::Unresolvable {
            host: host.into(),
            reason: e.to_string(),
        })?
        .map(|sa| sa.ip())
        .next()
        .ok_or_else(|| RuntimeError::Unresolvable {
            host: host.into(),
            reason: "no address".into(),
        })
}

/// The LIM socket address of a host.
pub fn lim_addr(config: &Config, host: &str) -> Result<SocketAddr, RuntimeError> {
    Ok(SocketAddr::new(
        host_addr(config, host)?,
        config.lsf_conf.lim_port(),
    ))
}

/// A lazily connecting channel to `addr` with a connect timeout and a
/// per-request deadline. Connection failures surface on the first request.
/// The connection leaves from `local` when given (the host's own address, so the
/// receiver sees which host is calling).
pub fn channel(
    addr: SocketAddr,
    timeout: Duration,
    local: Option<IpAddr>,
) -> Result<Channel, RuntimeError> {
    let uri = format!("http://{addr}");
    let endpoint = Endpoint::from_shared(uri.clone())
        .map_err(|_| RuntimeError::Endpoint(uri))?
        .timeout(timeout)
        .tcp_nodelay(true);
    Ok(match local {
        // The port is chosen at connect time ([`connect`]), the timeout applied there.
        Some(from) => {
            endpoint.connect_with_connector_lazy(connect::FromAddress::new(addr, from, timeout))
        }
        None => endpoint.connect_timeout(timeout).connect_lazy(),
    })
}

/// A channel to `addr` (a daemon of `host`) whose requests carry `auth`'s credentials.
pub fn auth_channel(
    addr: SocketAddr,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<AuthChannel, RuntimeError> {
    Ok(AuthService::new(
        channel(addr, timeout, auth.local_addr())?,
        auth.towards(host),
    ))
}

/// A peer client for the LIM on `host` (what LIMs ask each other: heartbeat, announce,
/// probe).
pub fn lim_peer_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::lim::lim_peer_client::LimPeerClient<AuthChannel>, RuntimeError> {
    Ok(
        basalt_proto::lim::lim_peer_client::LimPeerClient::new(auth_channel(
            lim_addr(config, host)?,
            host,
            timeout,
            auth,
        )?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// A LIM client for `host`.
pub fn lim_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<LimClient<AuthChannel>, RuntimeError> {
    Ok(
        LimClient::new(auth_channel(lim_addr(config, host)?, host, timeout, auth)?)
            .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// The order in which a command tries LIMs: `LSF_SERVER_HOSTS` if set, else the
/// local host first (when it is in the cluster) and then every host in file order.
pub fn lim_contact_order(config: &Config) -> Vec<String> {
    lim_contacts(config).collect()
}

/// [`lim_contact_order`] as it is walked: a name is copied only when it is reached. A
/// daemon looking for the master (a starting sbatchd, every 100 ms until its LIM knows
/// one) reaches the first few; the whole list was 10,000 names copied each time, most of
/// the hollow hosts' CPU while 10,000 of them started.
pub fn lim_contacts(config: &Config) -> impl Iterator<Item = String> + '_ {
    let servers = config.lsf_conf.server_hosts();
    let local = if servers.is_empty() {
        std::env::var("BASALT_HOST")
            .ok()
            .and_then(|h| canonical_host(config, &h))
            .or_else(|| canonical_host(config, &machine_hostname()))
    } else {
        None
    };
    let hosts: &[basalt_config::ClusterHost] = if servers.is_empty() {
        &config.cluster.hosts
    } else {
        &[]
    };
    servers.into_iter().chain(local_then_all(hosts, local))
}

/// `first` (when given), then every host of `hosts` in its order but `first` (the
/// cluster file's names are unique: no other check, which at 10,000 hosts was a scan per
/// host, a quarter of a second for every command); a name is copied when reached.
fn local_then_all(
    hosts: &[basalt_config::ClusterHost],
    first: Option<String>,
) -> impl Iterator<Item = String> + '_ {
    let skip = first.clone();
    first.into_iter().chain(
        hosts
            .iter()
            .filter(move |h| skip.as_ref() != Some(&h.name))
            .map(|h| h.name.clone()),
    )
}

/// What a command learns from the first LIM that answers.
#[derive(Debug, Clone)]
pub struct MasterLim {
    /// The master's host name.
    pub master: String,
    /// The master's client.
    pub client: LimClient<AuthChannel>,
    /// The answer of the LIM that told us (cluster name, admins, counts).
    pub info: basalt_proto::lim::ClusterInfoReply,
}

/// Ask LIMs in [`lim_contact_order`] until one answers, then return a client for
/// the master it names. Fails with [`RuntimeError::NoLim`] when no LIM answers
/// or none knows a master.
pub async fn find_master(
    config: &Config,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<MasterLim, RuntimeError> {
    // A first quick round over the first few LIMs, so that one hung LIM (stopped, but
    // its port still accepting connections) costs a fraction of a second instead of the
    // whole timeout; then a patient round over all of them.
    let quick = QUICK_LIM_TIMEOUT.min(timeout);
    if quick < timeout {
        for host in lim_contacts(config).take(QUICK_LIM_HOSTS) {
            if let Some(m) = ask_lim(config, &host, quick, timeout, auth).await? {
                return Ok(m);
            }
        }
    }
    for host in lim_contacts(config) {
        if let Some(m) = ask_lim(config, &host, timeout, timeout, auth).await? {
            return Ok(m);
        }
    }
    Err(RuntimeError::NoLim)
}

/// The master host's name, as [`find_master`] would find it, but first asked on the
/// master socket of the LIM that gives this command its credentials (one local round
/// trip instead of a gRPC connection to a LIM). That shortcut is skipped when
/// `LSF_SERVER_HOSTS` says which LIMs to ask, and when the local LIM knows no master or
/// does not answer (then the LIMs are asked as [`find_master`] does).
pub async fn find_master_name(
    config: &Config,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<String, RuntimeError> {
    if config.lsf_conf.server_hosts().is_empty()
        && let Some(m) = auth.local_master(QUICK_LIM_TIMEOUT.min(timeout))
        && config
            .cluster
            .hosts
            .iter()
            .any(|h| basalt_core::same_host(&h.name, &m))
    {
        return Ok(m);
    }
    find_master(config, timeout, auth).await.map(|m| m.master)
}

/// The per-LIM timeout of [`find_master`]'s first round.
const QUICK_LIM_TIMEOUT: Duration = Duration::from_millis(400);
/// How many LIMs [`find_master`]'s first round asks.
const QUICK_LIM_HOSTS: usize = 8;

/// Ask the LIM of `host` who the master is, within `timeout` (`None`: no answer, or it
/// does not know); the master's client is made with `client_timeout`.
async fn ask_lim(
    config: &Config,
    host: &str,
    timeout: Duration,
    client_timeout: Duration,
    auth: &Authenticator,
) -> Result<Option<MasterLim>, RuntimeError> {
    let Ok(mut client) = lim_channel(config, host, timeout, auth) else {
        return Ok(None);
    };
    let reply = match client
        .cluster_info(basalt_proto::lim::ClusterInfoRequest {})
        .await
    {
        Ok(r) => r,
        Err(s)
            if matches!(
                s.code(),
                tonic::Code::PermissionDenied | tonic::Code::Unauthenticated
            ) =>
        {
            return Err(RuntimeError::Permission(s.message().to_owned()));
        }
        Err(_) => return Ok(None),
    };
    let info = reply.into_inner();
    if info.master.is_empty() {
        return Ok(None);
    }
    let master_client = if basalt_core::same_host(&info.master, host) && timeout == client_timeout {
        client
    } else {
        lim_channel(config, &info.master, client_timeout, auth)?
    };
    Ok(Some(MasterLim {
        master: info.master.clone(),
        client: master_client,
        info,
    }))
}

/// The mbatchd socket address on `host` (`LSB_MBD_PORT`).
pub fn mbd_addr(config: &Config, host: &str) -> Result<SocketAddr, RuntimeError> {
    Ok(SocketAddr::new(
        host_addr(config, host)?,
        config.lsf_conf.mbd_port(),
    ))
}

/// sbatchd's state root for `host` when none is given: `BASALT_SBD_STATEDIR/<host>` from
/// lsf.conf, else `/tmp/.<cluster>.sbd/<host>.<hash>` where the hash (FNV-1a of
/// `LSF_ENVDIR`) keeps two clusters with the same names on one machine (tests) apart
/// while a restarted sbatchd of the same cluster finds its jobs again. RES finds the
/// jobs' control sockets under it ([`SBD_CTL_DIR`]).
pub fn sbd_state_root(config: &Config, host: &str) -> std::path::PathBuf {
    match config
        .lsf_conf
        .get("BASALT_SBD_STATEDIR")
        .filter(|v| !v.trim().is_empty())
    {
        Some(d) => config.resolve_path(d.trim()).join(host),
        None => {
            let mut h: u32 = 0x811c_9dc5;
            for b in config.envdir.as_os_str().as_encoded_bytes() {
                h ^= u32::from(*b);
                h = h.wrapping_mul(0x0100_0193);
            }
            std::path::PathBuf::from(format!("/tmp/.{}.sbd", config.cluster_name))
                .join(format!("{host}.{h:08x}"))
        }
    }
}

/// The directory of the jobs' control sockets under sbatchd's state root; a job's is
/// named `<jobId>.<idx>.<attempt>`.
pub const SBD_CTL_DIR: &str = "ctl";

/// The RES socket address of `host` (`LSF_RES_PORT`).
pub fn res_addr(config: &Config, host: &str) -> Result<SocketAddr, RuntimeError> {
    Ok(SocketAddr::new(
        host_addr(config, host)?,
        config.lsf_conf.res_port(),
    ))
}

/// A client for the RES on `host`.
pub fn res_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::res::res_client::ResClient<AuthChannel>, RuntimeError> {
    Ok(basalt_proto::res::res_client::ResClient::new(auth_channel(
        res_addr(config, host)?,
        host,
        timeout,
        auth,
    )?)
    .max_decoding_message_size(MAX_MESSAGE_BYTES))
}

/// The sbatchd socket address of `host` (`LSB_SBD_PORT`).
pub fn sbd_addr(config: &Config, host: &str) -> Result<SocketAddr, RuntimeError> {
    Ok(SocketAddr::new(
        host_addr(config, host)?,
        config.lsf_conf.sbd_port(),
    ))
}

/// An mbatchd client for the mbatchd on `host`.
pub fn mbatchd_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::mbatchd::mbatchd_client::MbatchdClient<AuthChannel>, RuntimeError> {
    Ok(
        basalt_proto::mbatchd::mbatchd_client::MbatchdClient::new(auth_channel(
            mbd_addr(config, host)?,
            host,
            timeout,
            auth,
        )?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// A peer client for the mbatchd on `host` (what an sbatchd asks: hello, job reports).
pub fn mbatchd_peer_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::mbatchd::mbatchd_peer_client::MbatchdPeerClient<AuthChannel>, RuntimeError>
{
    Ok(
        basalt_proto::mbatchd::mbatchd_peer_client::MbatchdPeerClient::new(auth_channel(
            mbd_addr(config, host)?,
            host,
            timeout,
            auth,
        )?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// A peer client for the sbatchd on `host` (what mbatchd orders: start, signal).
pub fn sbatchd_peer_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::sbatchd::sbatchd_peer_client::SbatchdPeerClient<AuthChannel>, RuntimeError>
{
    Ok(
        basalt_proto::sbatchd::sbatchd_peer_client::SbatchdPeerClient::new(auth_channel(
            sbd_addr(config, host)?,
            host,
            timeout,
            auth,
        )?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// An sbatchd client for the sbatchd on `host`.
pub fn sbatchd_channel(
    config: &Config,
    host: &str,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<basalt_proto::sbatchd::sbatchd_client::SbatchdClient<AuthChannel>, RuntimeError> {
    Ok(
        basalt_proto::sbatchd::sbatchd_client::SbatchdClient::new(auth_channel(
            sbd_addr(config, host)?,
            host,
            timeout,
            auth,
        )?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// Find the master host through the LIMs and return a client for its mbatchd
/// (connected lazily: a down mbatchd shows on the first request).
pub async fn find_mbatchd(
    config: &Config,
    timeout: Duration,
    auth: &Authenticator,
) -> Result<
    (
        String,
        basalt_proto::mbatchd::mbatchd_client::MbatchdClient<AuthChannel>,
    ),
    RuntimeError,
> {
    let master = find_master_name(config, timeout, auth).await?;
    let client = mbatchd_channel(config, &master, timeout, auth)?;
    Ok((master, client))
}

// ------------------------------------------------------------------ who is asking

/// The cluster key of `config` (lsf.conf `BASALT_CLUSTER_KEY`, default
/// `LSF_ENVDIR/basalt.key`), which must be private to this user or root.
pub fn cluster_keys(config: &Config) -> Result<Arc<KeySource>, RuntimeError> {
    Ok(Arc::new(KeySource::open(
        &basalt_auth::key_path(config),
        true,
    )?))
}

/// Every cluster host with its address; a host whose address cannot be found is left
/// out (nothing can come from it), with a warning. Built once per loaded configuration
/// and shared by every daemon that holds it ([`Config::derived`]).
pub fn host_table(config: &Config) -> Arc<HostTable> {
    config.derived(|config| {
        HostTable::new(
            config
                .cluster
                .hosts
                .iter()
                .filter_map(|h| match entry_addr(h, &h.name) {
                    Ok(a) => Some((h.name.clone(), a)),
                    Err(e) => {
                        tracing::warn!("{e}; requests from it will be refused");
                        None
                    }
                })
                .collect(),
        )
    })
}

/// This process's credentials as a daemon of `host`.
pub fn daemon_auth(config: &Config, host: &str, keys: Arc<KeySource>) -> Authenticator {
    Authenticator::with_key(
        keys,
        basalt_auth::daemon_identity(host),
        &config.cluster_name,
        host_addr(config, host).ok(),
    )
}

/// How the daemon `daemon` of `host` checks requests: the cluster key, the cluster's
/// hosts, its owner when it does not run as root (a personal cluster serves only that
/// user), `eauth -s` when `LSF_AUTH=eauth` (run as the primary cluster administrator
/// when the daemon is root), lsf.conf `BASALT_CRED_TTL`, and the nonces of the
/// credentials it accepted kept in [`replay_dir`] (so a restart does not forget them).
pub fn verifier(
    config: &Config,
    host: &str,
    daemon: &str,
    keys: Arc<KeySource>,
) -> Result<Verifier, RuntimeError> {
    verifier_in(config, host, keys, &replay_dir(config, host, daemon))
}

/// [`verifier`], keeping the nonces it accepts in `replay` (a daemon with a state
/// directory of its own: sbatchd).
pub fn verifier_in(
    config: &Config,
    host: &str,
    keys: Arc<KeySource>,
    replay: &std::path::Path,
) -> Result<Verifier, RuntimeError> {
    let me = nix::unistd::geteuid();
    let owner_only = (!me.is_root()).then_some(me.as_raw());
    let eauth = basalt_auth::uses_eauth(config).then(|| {
        let run_as = if me.is_root() {
            config
                .cluster
                .admins
                .first()
                .and_then(|a| nix::unistd::User::from_name(a).ok().flatten())
                .filter(|u| !u.uid.is_root())
                .map(|u| (u.uid.as_raw(), u.gid.as_raw()))
        } else {
            None
        };
        basalt_auth::eauth::EauthServer::new(basalt_auth::eauth_program(config), run_as)
    });
    let mut v = Verifier::new(
        keys,
        &config.cluster_name,
        host,
        host_table(config),
        owner_only,
        eauth,
    );
    if let Some(s) = config.lsf_conf.cred_ttl() {
        v = v.with_seal_ttl(Duration::from_secs(s));
    }
    Ok(v.remember_in(replay)?)
}

/// Where the daemon `daemon` of `host` keeps the nonces of the credentials it accepted:
/// `<sbatchd's state root>/replay/<daemon>` ([`sbd_state_root`]: a directory local to
/// the host, which the host's daemons own).
pub fn replay_dir(config: &Config, host: &str, daemon: &str) -> PathBuf {
    sbd_state_root(config, host).join("replay").join(daemon)
}

/// How the daemon of `host` serves: `verifier`'s checks, lsf.conf's limits, and
/// connections from the cluster's hosts only.
pub fn serving(config: &Config, verifier: Verifier) -> serve::Serving {
    serve::Serving::new(
        verifier,
        serve::ServeLimits::from_config(config),
        Some(serve::Allowed::hosts(host_table(config))),
    )
}

/// Can this process send from `ip` (is it an address of this machine)?
fn bindable(ip: IpAddr) -> bool {
    std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// The cluster host this command runs on: `BASALT_HOST` or the machine's name when in
/// the cluster, else the first cluster host whose address belongs to this machine.
fn command_host(config: &Config) -> Option<String> {
    let named = std::env::var("BASALT_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(machine_hostname);
    canonical_host(config, &named).or_else(|| {
        config
            .cluster
            .hosts
            .iter()
            .find(|h| host_addr(config, &h.name).is_ok_and(bindable))
            .map(|h| h.name.clone())
    })
}

/// Credentials for the user running a command:
/// * `LSF_AUTH=eauth`: `LSF_SERVERDIR/eauth -c <host>` for each request;
/// * else from the credential socket of a LIM on this machine (this host's first);
/// * else, for a user who can read the cluster key (root; the owner of a personal
///   cluster), signed here;
/// * else none: every request fails with `User permission denied` and the reason.
pub fn user_auth(config: &Config) -> Authenticator {
    let here = command_host(config);
    let local = |h: &str| host_addr(config, h).ok().filter(|a| bindable(*a));
    if basalt_auth::uses_eauth(config) {
        return Authenticator::eauth(
            basalt_auth::eauth_program(config),
            here.as_deref().and_then(local),
        );
    }
    let key_path = basalt_auth::key_path(config);
    let key_owner = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&key_path).ok().map(|m| m.uid())
    };
    let order: Vec<String> = local_then_all(&config.cluster.hosts, here.clone()).collect();
    let mut why = String::from("no LIM runs on this machine");
    // A LIM answers in well under a millisecond; a hung one (stopped, its socket still
    // accepting) must not hold the command up, so first a quick round over every LIM on
    // this machine, then a patient one.
    for timeout in [Duration::from_millis(500), Duration::from_secs(5)] {
        for h in &order {
            let Ok(addr) = lim_addr(config, h) else {
                continue;
            };
            match Authenticator::from_socket(
                &basalt_auth::socket::name(addr),
                key_owner.into_iter().collect(),
                timeout,
                local,
            ) {
                Ok(a) => return a,
                Err(e @ basalt_auth::AuthError::NoCredential(_)) => {
                    why = e.to_string();
                    break;
                }
                Err(e) => {
                    if !matches!(&e, basalt_auth::AuthError::Socket { reason, .. }
                        if reason.contains("refused") || reason.contains("No such"))
                    {
                        why = e.to_string();
                    }
                }
            }
        }
        if why.starts_with("no LIM") || why.starts_with("cannot get a credential") {
            break;
        }
    }
    let uid = nix::unistd::getuid().as_raw();
    if let (Ok(keys), Some(host)) = (KeySource::open(&key_path, true), here) {
        let who = Identity {
            kind: basalt_auth::Kind::User,
            uid,
            gid: nix::unistd::getgid().as_raw(),
            user: basalt_auth::user_name(uid).unwrap_or_else(|| uid.to_string()),
            host: host.clone(),
        };
        return Authenticator::with_key(Arc::new(keys), who, &config.cluster_name, local(&host));
    }
    Authenticator::unavailable(why)
}

#[cfg(test)]
mod order_tests;
