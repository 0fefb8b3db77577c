//! The Remote Execution Server (RES) daemon, one per host.
//!
//! Owns: the tasks it runs for the cluster's users (`lsrun`, `lsgrun`, `lsrcp`,
//! `blaunch`), each in its own session, as the user the request's credential proves
//! (uid, gid, supplementary groups), with the submitter's environment, working directory
//! and umask; and the relay of interactive batch jobs' streams (`bsub -I`, `-Ip`, `-Is`),
//! which the job's sbatchd supervisor on this host hands over ([`attach`]).
//!
//! Two processes ([`worker`]): `res` takes the connections and hands each to its
//! worker, `res --worker`, which serves them. A RES that stops or restarts only stops
//! taking connections: its worker goes on with the running tasks and their streams
//! until they end, as LSF's RES does. `lsadmin resshutdown` / `resrestart` reach the
//! worker (DaemonControl on the RES port), which passes them on to `res` (SIGTERM, or
//! SIGUSR1: restart in place); `resstartup` is asked of the host's LIM or sbatchd.
//!
//! Inputs: the loaded configuration, the host it plays, a bound TCP listener
//! (`LSF_RES_PORT` on the host's address), how to start the worker and a shutdown
//! future ([`run`]); the worker's end of its socket ([`run_worker`]); per task a
//! `basalt.res.v1.Res/Run` stream: the start, then standard input, signals and window
//! sizes; per `Attach` stream the job to attach to, then the same. Outputs: per task the
//! pid, standard output and error as they come, and the task's raw wait status last (an
//! attached job's stream ends with its output); tracing logs.
//!
//! A client that goes away (the stream breaks) takes its task with it: the task's
//! process group is killed (an `lsrcp` copy gets SIGTERM first and SIGKILL 2 s later, so
//! that it removes the temporary file it was writing). Root's tasks run only when lsf.conf sets `LSF_ROOT_REX`; a
//! RES that does not run as root (a personal cluster) runs only its owner's tasks.

mod attach;
mod service;
mod sys;
mod task;
mod worker;

pub use service::{LiveTasks, ResService};
pub use task::{Spawned, TaskError, TaskUsage, UserTask, wait_task};
pub use worker::{IDLE_EXIT, WorkerCommand, serve_connection, serve_worker};

use basalt_config::Config;
use std::sync::Arc;
use thiserror::Error;
use tracing::{Instrument, info, info_span, warn};

/// Errors that stop a RES or its worker.
#[derive(Debug, Error)]
pub enum ResError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("the worker's socket: {0}")]
    Io(#[from] std::io::Error),
}

/// Pass the action asked of `control` (`lsadmin resshutdown` / `resrestart`) on to the
/// listening RES `front`: SIGTERM to stop, SIGUSR1 to restart in place. Only while it is
/// this worker's parent (a pid that has become another process's is left alone).
async fn pass_on(control: basalt_runtime::control::Control, front: u32) {
    use basalt_runtime::control::Action;
    use nix::sys::signal::Signal;
    control.requested().await;
    let signal = match control.action() {
        Some(Action::Restart) => Signal::SIGUSR1,
        _ => Signal::SIGTERM,
    };
    let parent = nix::unistd::getppid().as_raw();
    if i64::from(parent) != i64::from(front) {
        warn!(
            front,
            parent, "the listening RES is gone: nothing to {signal}"
        );
        return;
    }
    info!(front, %signal, "passing the request on to the listening RES");
    if let Err(e) = nix::sys::signal::kill(nix::unistd::Pid::from_raw(parent), signal) {
        warn!(front, "signalling the listening RES: {e}");
    }
}

/// Take connections for host `me` on `listener` until `shutdown`, handing each to
/// the worker (started with `worker` at the first one). The worker is not waited for.
pub async fn run(
    config: Arc<Config>,
    me: &str,
    listener: tokio::net::TcpListener,
    worker: WorkerCommand,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ResError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("res", host = %me);
    async move {
        // The worker could not check a credential without the cluster key: say so now.
        basalt_runtime::cluster_keys(&config)?;
        info!(
            "RES serving on {}",
            listener
                .local_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string())
        );
        let mut handoff = worker::Handoff::new(worker);
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                a = listener.accept() => a,
            };
            match accepted {
                Ok((conn, peer)) => {
                    // Small request/response exchanges: never wait for Nagle's algorithm.
                    let _ = conn.set_nodelay(true);
                    match conn.into_std() {
                        Ok(conn) => handoff.hand(&conn, peer),
                        Err(e) => warn!(%peer, "taking the connection: {e}"),
                    }
                }
                Err(e) => {
                    // Out of descriptors, most likely: let connections end first.
                    warn!("accepting a connection: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
        info!("RES stopped; its worker goes on until its tasks end");
        Ok(())
    }
    .instrument(span)
    .await
}

/// The worker of the RES of host `me`: serve the connections that come on `channel`
/// ([`serve_worker`]) until `stop`, or the RES is gone and they have ended, or it has
/// had nothing to serve for `idle_exit`. With `front_pid` (the listening RES, its
/// parent) it also serves DaemonControl: `lsadmin resshutdown` / `resrestart` are passed
/// on to that RES as SIGTERM / SIGUSR1.
pub async fn run_worker(
    config: Arc<Config>,
    me: &str,
    channel: std::os::fd::OwnedFd,
    idle_exit: std::time::Duration,
    front_pid: Option<u32>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), ResError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("res", host = %me, worker = std::process::id());
    async move {
        let keys = basalt_runtime::cluster_keys(&config)?;
        // Every worker of this host's RES keeps the nonces it accepts in one directory,
        // so a worker that takes over from a retired one still refuses them.
        let verifier = basalt_runtime::verifier(&config, &me, "res", keys)?;
        let serving = basalt_runtime::serving(&config, verifier.clone());
        let service = ResService::new(
            me.clone(),
            Arc::new(verifier.clone()),
            basalt_auth::root_rex(&config),
            basalt_runtime::sbd_state_root(&config, &me).join(basalt_runtime::SBD_CTL_DIR),
            config.serverdir(),
        );
        let control = front_pid.map(|front| {
            // The worker's own handle: what is asked of "res" goes to the listening RES.
            let control = basalt_runtime::control::Control::default();
            tokio::spawn(pass_on(control.clone(), front));
            basalt_runtime::control::ControlService::new(
                basalt_proto::common::Daemon::Res,
                &me,
                config.clone(),
                verifier.clone(),
                control,
                Arc::new(basalt_runtime::control::check_lim_files),
            )
        });
        serve_worker(
            Arc::new(service),
            control,
            serving,
            channel,
            idle_exit,
            stop,
        )
        .await?;
        Ok(())
    }
    .instrument(span)
    .await
}
