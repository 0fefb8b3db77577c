//! Batch daemons in-process (feature `batch`): [`InProcessCluster::start_batch`] runs
//! sbatchd on every host and mbatchd on the master as tasks next to the LIMs, and
//! [`InProcessBatch`] gives a plain `#[test]` such a cluster on a runtime of its own,
//! to drive with the real command binaries ([`Commands`]).
//!
//! What stays a process: sbatchd starts its supervisor pool (`sbatchd
//! --job-supervisor <state root>`, which forks each job's supervisor; a supervisor
//! calls `setsid` and becomes a subreaper) as a child process, here too, from the
//! built `sbatchd` binary; the daemons themselves cannot
//! be `kill -9`ed, stopped with SIGSTOP or restarted as processes — such tests use
//! [`crate::ProcessCluster`].

use crate::commands::Commands;
use crate::config::{ClusterSpec, add_lsb_params, batch_dir, host_name, write_config};
use crate::dirs::TestDir;
use crate::inprocess::{InProcessCluster, bind_retry};
use crate::process::bin_dir;
use crate::subnet::fresh_subnet;
use crate::wait::wait_for;
use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// Load the whole configuration (what sbatchd and mbatchd read at start).
fn load_config(envdir: &Path) -> Result<basalt_config::Loaded> {
    basalt_config::load(envdir).map_err(|e| anyhow!("configuration errors:\n{e}"))
}

impl InProcessCluster {
    /// Like [`InProcessCluster::start`] with `lsb_params` lines appended to lsb.params,
    /// then sbatchd on every host and mbatchd on the first; returns once mbatchd
    /// answers `bhosts` with every host ok.
    pub async fn start_batch(
        name: &str,
        spec: &ClusterSpec,
        lsb_params: &str,
    ) -> Result<InProcessCluster> {
        let dir = TestDir::new(name)?;
        let subnet = fresh_subnet(7869);
        let envdir = write_config(spec, subnet, dir.path())?;
        add_lsb_params(dir.path(), &spec.cluster, lsb_params)?;
        let config = load_config(&envdir)?.config;
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
        let master = host_name(0);
        c.wait_master(&master, Duration::from_secs(30)).await?;
        c.start_mbatchd(&master)?;
        for h in c.hosts.clone() {
            c.start_sbatchd(&h).await?;
        }
        let n = c.hosts.len();
        let cmds = c.commands()?;
        tokio::task::spawn_blocking(move || {
            wait_for(
                "mbatchd to serve bhosts with every host ok",
                Duration::from_secs(60),
                || {
                    let text = cmds
                        .run("bhosts", &[])
                        .map(|o| {
                            format!(
                                "{}{}",
                                String::from_utf8_lossy(&o.stdout),
                                String::from_utf8_lossy(&o.stderr)
                            )
                        })
                        .unwrap_or_else(|e| e.to_string());
                    let ok = text
                        .lines()
                        .filter(|l| l.split_whitespace().nth(1) == Some("ok"))
                        .count();
                    ((ok == n).then_some(()), text)
                },
            )
        })
        .await??;
        Ok(c)
    }

    /// Start sbatchd for `host` (as `sbatchd -H host --no-mbatchd` would run), with
    /// the built `sbatchd` binary as job supervisor.
    pub async fn start_sbatchd(&mut self, host: &str) -> Result<()> {
        self.start_sbatchd_with(host, basalt_sbatchd::JobRunner::Supervisor)
            .await
    }

    /// [`InProcessCluster::start_sbatchd`] with `runner` running its jobs
    /// (`JobRunner::Hollow`: a hollow host, whose jobs run no process).
    pub async fn start_sbatchd_with(
        &mut self,
        host: &str,
        runner: basalt_sbatchd::JobRunner,
    ) -> Result<()> {
        let addr = basalt_runtime::sbd_addr(&self.config, host)?;
        let listener = bind_retry(addr).await?;
        let opts = basalt_sbatchd::Options {
            supervise_mbatchd: false,
            supervisor_exe: match runner {
                basalt_sbatchd::JobRunner::Supervisor => Some(bin_dir()?.join("sbatchd")),
                basalt_sbatchd::JobRunner::Hollow => None,
            },
            runner,
            ..Default::default()
        };
        let config = Arc::new(load_config(&self.envdir)?.config);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let me = host.to_owned();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            if let Err(e) = basalt_sbatchd::run_with(config, &me, listener, opts, shutdown).await {
                eprintln!("in-process sbatchd {me}: {e}");
            }
        });
        self.running
            .insert(("sbatchd".to_owned(), host.to_owned()), (tx, task));
        Ok(())
    }

    /// Start mbatchd for `host`, and start it again whenever it stops (reconfiguration,
    /// `badmin mbdrestart`) the way sbatchd does, re-reading the configuration, until
    /// [`InProcessCluster::stop_daemon`].
    pub fn start_mbatchd(&mut self, host: &str) -> Result<()> {
        let addr = basalt_runtime::mbd_addr(&self.config, host)?;
        let envdir = self.envdir.clone();
        let me = host.to_owned();
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            loop {
                match load_config(&envdir) {
                    Ok(loaded) => {
                        write_snapshot(&loaded);
                        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
                        let run = basalt_mbatchd::run(
                            Arc::new(loaded.config),
                            &me,
                            basalt_mbatchd::Listen::AfterLock(addr),
                            async move {
                                let _ = stop_rx.await;
                            },
                        );
                        tokio::pin!(run);
                        tokio::select! {
                            r = &mut run => {
                                if let Err(e) = r {
                                    eprintln!("in-process mbatchd {me}: {e}");
                                }
                            }
                            _ = &mut rx => {
                                let _ = stop_tx.send(());
                                let _ = run.await;
                                return;
                            }
                        }
                    }
                    Err(e) => eprintln!("in-process mbatchd {me}: {e}"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = &mut rx => return,
                }
            }
        });
        self.running
            .insert(("mbatchd".to_owned(), host.to_owned()), (tx, task));
        Ok(())
    }

    /// Stop `daemon` ("lim", "sbatchd", "mbatchd") of `host` the polite way (its
    /// shutdown future resolves), waiting up to 10 s for it to return.
    pub async fn stop_daemon(&mut self, daemon: &str, host: &str) -> Result<()> {
        let (tx, task) = self
            .running
            .remove(&(daemon.to_owned(), host.to_owned()))
            .ok_or_else(|| anyhow!("no {daemon} running for {host}"))?;
        let _ = tx.send(());
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .with_context(|| format!("{daemon} of {host} did not stop within 10 s"))?
            .with_context(|| format!("{daemon} of {host}"))?;
        Ok(())
    }

    /// Stop every daemon politely: sbatchds, then mbatchd, then the LIMs.
    pub async fn shutdown(&mut self) {
        for daemon in ["sbatchd", "mbatchd", "res", "lim"] {
            let keys: Vec<_> = self
                .running
                .keys()
                .filter(|(d, _)| d == daemon)
                .cloned()
                .collect();
            for (d, h) in keys {
                if let Err(e) = self.stop_daemon(&d, &h).await {
                    eprintln!("{e:#}");
                }
            }
        }
    }

    /// The command binaries against this cluster, as a value that can move to another
    /// thread.
    pub fn commands(&self) -> Result<InProcessCommands> {
        Ok(InProcessCommands {
            bin: bin_dir()?,
            envdir: self.envdir.clone(),
        })
    }
}

/// Keep the configuration mbatchd starts on, as the mbatchd binary does (its fallback
/// when a later configuration does not load).
fn write_snapshot(loaded: &basalt_config::Loaded) {
    let path = loaded.config.logdir().join(basalt_config::snapshot::FILE);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let snap = basalt_config::snapshot::Snapshot::of(loaded, now);
    let same =
        basalt_config::snapshot::Snapshot::read(&path).is_ok_and(|old| old.files == snap.files);
    if !same && let Err(e) = snap.write_atomic(&path) {
        eprintln!(
            "cannot keep the accepted configuration in {}: {e}",
            path.display()
        );
    }
}

/// The command binaries of the build run against an in-process cluster.
#[derive(Debug, Clone)]
pub struct InProcessCommands {
    pub bin: PathBuf,
    pub envdir: PathBuf,
}

impl Commands for InProcessCommands {
    fn command(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_HOST")
            .env_remove("LSF_SERVER_HOSTS");
        c
    }
}

/// An [`InProcessCluster`] with batch daemons on a tokio runtime of its own, for a
/// plain `#[test]` that drives it with the command binaries: it derefs to the
/// cluster, runs commands ([`Commands`]) and async calls ([`InProcessBatch::block_on`]).
/// Dropping it stops the daemons politely, then the runtime, then kills what its
/// sbatchds left running.
#[derive(Debug)]
pub struct InProcessBatch {
    cluster: Option<InProcessCluster>,
    cmds: InProcessCommands,
    rt: Option<tokio::runtime::Runtime>,
}

impl InProcessBatch {
    /// [`InProcessCluster::start_batch`] on a new 4-thread runtime.
    pub fn start(name: &str, spec: &ClusterSpec, lsb_params: &str) -> Result<InProcessBatch> {
        // Several daemons share it (each daemon binary has 2 workers of its own).
        // Every thread of it logs (BASALT_LOG, default debug, as ProcessCluster's
        // daemons do) to the cluster's log/daemons.log.
        let sink = LogSink::default();
        let thread_sink = sink.clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .on_thread_start(move || {
                let filter = std::env::var("BASALT_LOG")
                    .ok()
                    .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
                    .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("debug"));
                let subscriber = tracing_subscriber::fmt()
                    .with_env_filter(filter)
                    .with_writer(thread_sink.clone())
                    .with_ansi(false)
                    .finish();
                // The thread's default for as long as the thread lives.
                std::mem::forget(tracing::subscriber::set_default(subscriber));
            })
            .build()
            .context("starting the async runtime")?;
        let cluster = match rt.block_on(InProcessCluster::start_batch(name, spec, lsb_params)) {
            Ok(c) => c,
            Err(e) => {
                let log = sink.take_buffer();
                let tail = &log[log.len().saturating_sub(20_000)..];
                bail!(
                    "{e:#}\nthe daemons' log (end):\n{}",
                    String::from_utf8_lossy(tail)
                );
            }
        };
        sink.to_file(&cluster.dir.path().join("log").join("daemons.log"))?;
        let cmds = cluster.commands()?;
        Ok(InProcessBatch {
            cluster: Some(cluster),
            cmds,
            rt: Some(rt),
        })
    }

    /// Run `f` on the cluster's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match &self.rt {
            Some(rt) => rt.block_on(f),
            None => unreachable!("the runtime lives as long as the cluster"),
        }
    }

    /// Stop sbatchd of `host` politely and start it again (it re-reads the
    /// configuration), as a restarted sbatchd process would.
    pub fn restart_sbatchd(&mut self, host: &str) -> Result<()> {
        self.restart_sbatchd_with(host, basalt_sbatchd::JobRunner::Supervisor)
    }

    /// [`InProcessBatch::restart_sbatchd`] with `runner` running its jobs from now on
    /// (`JobRunner::Hollow` makes `host` a hollow host).
    pub fn restart_sbatchd_with(
        &mut self,
        host: &str,
        runner: basalt_sbatchd::JobRunner,
    ) -> Result<()> {
        let (Some(rt), Some(c)) = (&self.rt, &mut self.cluster) else {
            unreachable!("the cluster and its runtime are taken only when dropped")
        };
        rt.block_on(async {
            c.stop_daemon("sbatchd", host).await?;
            c.start_sbatchd_with(host, runner).await
        })
    }

    /// This cluster's lsb.queues.
    pub fn queues_file(&self) -> PathBuf {
        batch_dir(self.dir.path(), &self.config.cluster_name).join("lsb.queues")
    }

    /// Append `sections` (`Begin Queue` ... `End Queue`) to lsb.queues.
    pub fn append_queues(&self, sections: &str) -> Result<()> {
        let file = self.queues_file();
        let mut text = std::fs::read_to_string(&file)?;
        text.push_str(sections);
        std::fs::write(&file, text)?;
        Ok(())
    }

    /// [`InProcessBatch::append_queues`], then `badmin reconfig` and wait until bqueues
    /// lists every queue the sections name.
    pub fn add_queues(&self, sections: &str) -> Result<()> {
        self.append_queues(sections)?;
        self.ok("badmin", &["reconfig"])?;
        let names: Vec<String> = sections
            .lines()
            .filter_map(|l| l.trim().strip_prefix("QUEUE_NAME"))
            .filter_map(|l| l.trim().strip_prefix('='))
            .map(|n| format!("{} ", n.trim()))
            .collect();
        wait_for(
            "bqueues to list the new queues",
            Duration::from_secs(60),
            || {
                let out = self.stdout_ok("bqueues", &[]).unwrap_or_default();
                let ok = names.iter().all(|n| out.lines().any(|l| l.starts_with(n)));
                (ok.then_some(()), out)
            },
        )
    }

    /// `PATH` with this cluster's command directory first (what a job finds `blaunch`
    /// and the other commands in, as LSF_BINDIR on the submitter's PATH).
    pub fn path_with_commands(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// Stop the RES of `host` politely and start it again, as `systemctl restart
    /// basalt-res` would (the old one's worker goes on with what it serves); its new
    /// worker stays `idle_exit` with nothing to serve (`None`: the default).
    pub fn restart_res(&mut self, host: &str, idle_exit: Option<Duration>) -> Result<()> {
        let (Some(rt), Some(c)) = (&self.rt, &mut self.cluster) else {
            unreachable!("the cluster and its runtime are taken only when dropped")
        };
        rt.block_on(async {
            c.stop_daemon("res", host).await?;
            c.start_res_with(host, idle_exit).await
        })
    }
}

impl std::ops::Deref for InProcessBatch {
    type Target = InProcessCluster;
    fn deref(&self) -> &InProcessCluster {
        match &self.cluster {
            Some(c) => c,
            None => unreachable!("the cluster is taken only when dropped"),
        }
    }
}

impl Commands for InProcessBatch {
    fn command(&self, name: &str) -> Command {
        self.cmds.command(name)
    }
}

impl Drop for InProcessBatch {
    fn drop(&mut self) {
        if let (Some(mut cluster), Some(rt)) = (self.cluster.take(), self.rt.take()) {
            rt.block_on(cluster.shutdown());
            rt.shutdown_timeout(Duration::from_secs(5));
            // Its Drop kills the leftovers; its TestDir goes last.
            drop(cluster);
        }
    }
}

/// Where the in-process daemons' log goes: memory until the cluster's directory exists,
/// then `log/daemons.log` in it.
#[derive(Debug, Clone, Default)]
struct LogSink(Arc<std::sync::Mutex<Sink>>);

#[derive(Debug, Default)]
enum Sink {
    #[default]
    Empty,
    Buffer(Vec<u8>),
    File(std::fs::File),
}

impl LogSink {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What was logged before a file was set.
    fn take_buffer(&self) -> Vec<u8> {
        match std::mem::take(&mut *self.lock()) {
            Sink::Buffer(b) => b,
            _ => Vec::new(),
        }
    }

    /// From now on write to `path` (created, or appended to), starting with what was
    /// buffered.
    fn to_file(&self, path: &Path) -> Result<()> {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let mut sink = self.lock();
        if let Sink::Buffer(b) = &*sink {
            file.write_all(b)?;
        }
        *sink = Sink::File(file);
        Ok(())
    }
}

impl std::io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut sink = self.lock();
        match &mut *sink {
            Sink::File(f) => f.write_all(buf)?,
            Sink::Buffer(b) => b.extend_from_slice(buf),
            Sink::Empty => *sink = Sink::Buffer(buf.to_vec()),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut *self.lock() {
            Sink::File(f) => f.flush(),
            _ => Ok(()),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogSink {
    type Writer = LogSink;
    fn make_writer(&'a self) -> LogSink {
        self.clone()
    }
}
