//! [`InProcessCluster`]: each host's daemons as tasks of the test's own tokio
//! runtime, bound to the host's loopback address. The LIMs and RESs are here; sbatchd
//! and mbatchd (feature `batch`) are in `batch.rs`.

use crate::config::{ClusterSpec, host_name, write_config};
use crate::dirs::TestDir;
use crate::process::bin_dir;
use crate::subnet::{Subnet, fresh_subnet};
use crate::wait::wait_for_async;
use anyhow::{Context, Result, anyhow};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A running daemon task: its shutdown trigger and its handle.
pub(crate) type Running = (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
);

/// A cluster whose daemons run as tasks of the calling tokio runtime: LIMs
/// ([`InProcessCluster::start`]), and with the `batch` feature sbatchd on every host
/// and mbatchd on the master (`InProcessCluster::start_batch`).
#[derive(Debug)]
pub struct InProcessCluster {
    pub dir: TestDir,
    pub config: Arc<basalt_config::Config>,
    pub hosts: Vec<String>,
    pub subnet: Subnet,
    /// LSF_ENVDIR of the cluster (what the command binaries are given).
    pub envdir: PathBuf,
    /// (daemon, host) -> its task.
    pub(crate) running: BTreeMap<(String, String), Running>,
}

impl InProcessCluster {
    pub async fn start(name: &str, spec: &ClusterSpec) -> Result<InProcessCluster> {
        let dir = TestDir::new(name)?;
        let subnet = fresh_subnet(7869);
        let envdir = write_config(spec, subnet, dir.path())?;
        let config = basalt_config::load_lim(&envdir)
            .map_err(|e| anyhow!("{e}"))?
            .config;
        let mut c = InProcessCluster {
            dir,
            config: Arc::new(config),
            hosts: (0..spec.hosts).map(host_name).collect(),
            subnet,
            envdir,
            running: BTreeMap::new(),
        };
        for h in c.hosts.clone() {
            c.start_host(&h).await?;
            c.start_res(&h).await?;
        }
        Ok(c)
    }

    /// Start the RES of `host` on its address; its worker is a process of the built
    /// `res` binary ([`bin_dir`]), as the real daemon's.
    pub async fn start_res(&mut self, host: &str) -> Result<()> {
        self.start_res_with(host, None).await
    }

    /// [`InProcessCluster::start_res`] with its worker staying `idle_exit` with
    /// nothing to serve (default [`basalt_res::IDLE_EXIT`]).
    pub async fn start_res_with(&mut self, host: &str, idle_exit: Option<Duration>) -> Result<()> {
        let addr = basalt_runtime::res_addr(&self.config, host)?;
        // Without built binaries only the tests that connect to a RES fail (its
        // worker cannot start).
        let exe = bin_dir().unwrap_or_default().join("res");
        let mut worker = basalt_res::WorkerCommand::new(exe, host, &self.envdir);
        let logs = self.dir.path().join("log");
        std::fs::create_dir_all(&logs)?;
        worker.log = Some(logs.join(format!("res.{host}.log")));
        worker.idle_exit = idle_exit;
        self.spawn_daemon(
            "res",
            host,
            addr,
            |config, me, listener, shutdown| async move {
                basalt_res::run(config, &me, listener, worker, shutdown)
                    .await
                    .map_err(|e| e.to_string())
            },
        )
        .await
    }

    /// Start the LIM of `host` on its address.
    pub async fn start_host(&mut self, host: &str) -> Result<()> {
        let addr = basalt_runtime::lim_addr(&self.config, host)?;
        self.spawn_daemon(
            "lim",
            host,
            addr,
            |config, me, listener, shutdown| async move {
                basalt_lim::run(config, &me, listener, shutdown)
                    .await
                    .map_err(|e| e.to_string())
            },
        )
        .await
    }

    /// Bind `addr` (retrying while a previous test's socket lingers) and run daemon
    /// `kind` of `host` there as a task, until its entry in `running` is stopped.
    async fn spawn_daemon<F, Fut>(
        &mut self,
        kind: &str,
        host: &str,
        addr: std::net::SocketAddr,
        serve: F,
    ) -> Result<()>
    where
        F: FnOnce(
                std::sync::Arc<basalt_config::Config>,
                String,
                tokio::net::TcpListener,
                std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
            ) -> Fut
            + Send
            + 'static,
        Fut: std::future::Future<Output = std::result::Result<(), String>> + Send + 'static,
    {
        let listener = bind_retry(addr).await?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let config = self.config.clone();
        let me = host.to_owned();
        let what = kind.to_uppercase();
        let task = tokio::spawn(async move {
            let shutdown: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> =
                Box::pin(async move {
                    let _ = rx.await;
                });
            if let Err(e) = serve(config, me.clone(), listener, shutdown).await {
                eprintln!("in-process {what} {me}: {e}");
            }
        });
        self.running
            .insert((kind.to_owned(), host.to_owned()), (tx, task));
        Ok(())
    }

    /// Stop the LIM of `host` abruptly: its task is aborted, its socket closed.
    pub async fn kill_host(&mut self, host: &str) -> Result<()> {
        let (_, task) = self
            .running
            .remove(&("lim".to_owned(), host.to_owned()))
            .ok_or_else(|| anyhow!("{host} is not running"))?;
        task.abort();
        let _ = task.await;
        Ok(())
    }

    /// Credentials of the test's user (from an in-process LIM's credential socket, else
    /// signed with the cluster key).
    pub fn auth(&self) -> basalt_runtime::Authenticator {
        basalt_runtime::user_auth(&self.config)
    }

    /// The master as the first answering LIM sees it.
    pub async fn master(&self) -> Option<String> {
        basalt_runtime::find_master(&self.config, Duration::from_secs(1), &self.auth())
            .await
            .ok()
            .map(|m| m.master)
    }

    /// The master's host table.
    pub async fn hosts_table(&self) -> Option<basalt_proto::lim::HostsReply> {
        let mut m = basalt_runtime::find_master(&self.config, Duration::from_secs(1), &self.auth())
            .await
            .ok()?;
        m.client
            .hosts(basalt_proto::lim::HostsRequest {
                hosts: vec![],
                ..Default::default()
            })
            .await
            .ok()
            .map(|r| r.into_inner())
            .filter(|r| r.is_master)
    }

    /// Wait until the first answering LIM names `host` as master.
    pub async fn wait_master(&self, host: &str, deadline: Duration) -> Result<()> {
        wait_for_async(&format!("{host} to be master"), deadline, || async {
            let m = self.master().await;
            ((m.as_deref() == Some(host)).then_some(()), format!("{m:?}"))
        })
        .await
    }
}

impl Drop for InProcessCluster {
    fn drop(&mut self) {
        for (_, (_, task)) in std::mem::take(&mut self.running) {
            task.abort();
        }
        // Job supervisors and jobs an in-process sbatchd started.
        crate::process::kill_leftovers(&self.envdir);
    }
}

/// Bind, retrying briefly: a just-closed listener of a killed host may linger.
pub(crate) async fn bind_retry(addr: std::net::SocketAddr) -> Result<tokio::net::TcpListener> {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => return Ok(l),
            Err(e) if Instant::now() > end => {
                return Err(e).with_context(|| format!("binding {addr}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
