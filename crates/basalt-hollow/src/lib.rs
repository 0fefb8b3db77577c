//! Hollow hosts: the scale harness's hosts (issue 51), as Kubernetes' kubemark does it.
//!
//! One process runs many hosts. Each is the **real** LIM ([`basalt_lim::run_with`]) and
//! the real sbatchd ([`basalt_sbatchd::run_with`]) of a host named in the cluster's
//! configuration, bound to that host's own address (its `ADDRESS` in
//! `lsf.cluster.<cluster>`, anywhere in 127/8) and speaking the real protocol to the
//! real master LIM and mbatchd. Only two things are simulated, each behind its daemon's
//! seam: the load ([`load`]: a [`Pattern`] and the host's static sizes, the LIM's
//! [`basalt_lim::LoadSource`]) and how jobs run (sbatchd's
//! [`basalt_sbatchd::JobRunner::Hollow`]: a job "runs" for its `sleep N` or run limit
//! and exits as it asks, with no process — given in [`HollowOptions::sbatchd`]).
//!
//! Inputs: the configuration, the host names, the options, a shutdown future. Output:
//! the hosts' daemons as tasks of the calling tokio runtime until the shutdown. A real
//! deployment never runs this; it is a test and benchmark tool (`cargo xtask up
//! --hollow N`, `cargo xtask scale`, the 300-host test).

pub mod load;

pub use load::{HollowLoad, Pattern};

use basalt_config::Config;
use std::future::Future;
use std::sync::Arc;
use thiserror::Error;
use tokio::sync::watch;
use tracing::{info, warn};

/// Hollow hosts a process starts a second by default ([`HollowOptions::start_rate`]).
pub const START_RATE: usize = 250;
/// The pause between two batches of starts (a tenth of the rate each).
pub const START_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// Why hollow hosts cannot start.
#[derive(Debug, Error)]
pub enum HollowError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("binding {what} of hollow host {host} at {addr}: {source}")]
    Bind {
        what: &'static str,
        host: String,
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("{0} is a master candidate (LSF_MASTER_LIST): a hollow host never is")]
    MasterCandidate(String),
    #[error(
        "lsf.conf has no LSF_MASTER_LIST: every host would be a master candidate, and a hollow host never is one"
    )]
    NoMasterList,
}

/// How hollow hosts run.
#[derive(Debug, Clone)]
pub struct HollowOptions {
    /// Their load and static sizes.
    pub load: HollowLoad,
    /// Their sbatchd's options (the state directory is each host's own default; give
    /// a job runner here).
    pub sbatchd: basalt_sbatchd::Options,
    /// Hosts started a second ([`START_RATE`]); the processes of one cluster share
    /// the machine, so each takes its part of what the machine can start.
    pub start_rate: usize,
}

/// Run hollow hosts `hosts` of `config` until `shutdown` resolves: each host's LIM
/// and sbatchd as tasks of the current runtime. Every address is bound before any
/// daemon starts (an error names the host); a host that is a master candidate is
/// refused (hollow hosts must never be elected: give LSF_MASTER_LIST).
pub async fn run_hosts(
    config: Arc<Config>,
    hosts: &[String],
    opts: &HollowOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), HollowError> {
    let candidates = basalt_lim::master_list(&config);
    if candidates.is_empty() {
        return Err(HollowError::NoMasterList);
    }
    let mut bound = Vec::with_capacity(hosts.len());
    for h in hosts {
        let me = basalt_runtime::canonical_host(&config, h)
            .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(h.clone()))?;
        if candidates.iter().any(|c| basalt_core::same_host(c, &me)) {
            return Err(HollowError::MasterCandidate(me));
        }
        let lim = bind(&config, &me, "the LIM port", basalt_runtime::lim_addr).await?;
        let sbd = bind(&config, &me, "the sbatchd port", basalt_runtime::sbd_addr).await?;
        bound.push((me, lim, sbd));
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let source: Arc<dyn basalt_lim::LoadSource> = Arc::new(opts.load.clone());
    let mut tasks = tokio::task::JoinSet::new();
    let batch = opts.start_rate.div_ceil(10).max(1);
    for (k, (me, lim, sbd)) in bound.into_iter().enumerate() {
        // Start a batch at a time: a daemon's start costs some CPU (keys, its replay
        // cache, its job table), and hundreds of starts at once would keep the hosts
        // already running from their timers for seconds — each LIM would then take
        // itself for stalled and catch up (a probe each), a storm no real cluster has.
        if k > 0 && k % batch == 0 {
            tokio::time::sleep(START_PAUSE).await;
        }
        let lim_opts = basalt_lim::Options {
            load: Some(source.clone()),
        };
        let (config_l, me_l, stop_l) = (config.clone(), me.clone(), stopped(stop_rx.clone()));
        tasks.spawn(async move {
            if let Err(e) = basalt_lim::run_with(config_l, &me_l, lim, lim_opts, stop_l).await {
                warn!(host = %me_l, "hollow LIM: {e}");
            }
        });
        let mut sbd_opts = opts.sbatchd.clone();
        sbd_opts.supervise_mbatchd = false;
        let (config_s, stop_s) = (config.clone(), stopped(stop_rx.clone()));
        tasks.spawn(async move {
            if let Err(e) = basalt_sbatchd::run_with(config_s, &me, sbd, sbd_opts, stop_s).await {
                warn!(host = %me, "hollow sbatchd: {e}");
            }
        });
    }
    info!(hosts = hosts.len(), "hollow hosts started");
    shutdown.await;
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    info!("hollow hosts stopped");
    Ok(())
}

async fn bind(
    config: &Config,
    me: &str,
    what: &'static str,
    addr_of: fn(&Config, &str) -> Result<std::net::SocketAddr, basalt_runtime::RuntimeError>,
) -> Result<tokio::net::TcpListener, HollowError> {
    let addr = addr_of(config, me)?;
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| HollowError::Bind {
            what,
            host: me.to_owned(),
            addr,
            source,
        })
}
