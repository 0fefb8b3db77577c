//! The Remote Execution Server (RES) daemon, one per host.
//!
//! Owns: the tasks it runs for the cluster's users (`lsrun`, `lsgrun`, `lsrcp`,
//! `blaunch`), each in its own session, as the user the request's credential proves
//! (uid, gid, supplementary groups), with the submitter's environment, working directory
//! and umask; and the relay of interactive batch jobs' streams (`bsub -I`, `-Ip`, `-Is`),
//! which the job's sbatchd supervisor on this host hands over ([`attach`]).
//!
//! Inputs: the loaded configuration, the host it plays, a bound TCP listener
//! (`LSF_RES_PORT` on the host's address) and a shutdown future; per task a
//! `basalt.res.v1.Res/Run` stream: the start, then standard input, signals and window
//! sizes; per `Attach` stream the job to attach to, then the same. Outputs: per task the
//! pid, standard output and error as they come, and the task's raw wait status last (an
//! attached job's stream ends with its output); tracing logs.
//!
//! A client that goes away (the stream breaks) takes its task with it: the task's
//! process group is killed. Root's tasks run only when lsf.conf sets `LSF_ROOT_REX`; a
//! RES that does not run as root (a personal cluster) runs only its owner's tasks.

mod attach;
mod service;
mod sys;
mod task;

pub use service::ResService;
pub use task::{Spawned, TaskError, TaskUsage, UserTask, wait_task};

use basalt_config::Config;
use std::sync::Arc;
use thiserror::Error;
use tracing::{Instrument, info, info_span};

/// Errors that stop a RES from starting.
#[derive(Debug, Error)]
pub enum ResError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("serving: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// Serve the `Res` service for host `me` on `listener` until `shutdown`.
pub async fn run(
    config: Arc<Config>,
    me: &str,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ResError> {
    let me = basalt_runtime::canonical_host(&config, me)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(me.to_owned()))?;
    let span = info_span!("res", host = %me);
    async move {
        let keys = basalt_runtime::cluster_keys(&config)?;
        let verifier = basalt_runtime::verifier(&config, keys);
        let service = ResService::new(
            me.clone(),
            Arc::new(verifier),
            basalt_auth::root_rex(&config),
            basalt_runtime::sbd_state_root(&config, &me).join(basalt_runtime::SBD_CTL_DIR),
            config.serverdir(),
        );
        info!(
            "RES serving on {}",
            listener
                .local_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string())
        );
        let router = tonic::transport::Server::builder()
            .add_service(basalt_proto::res::res_server::ResServer::new(service));
        basalt_runtime::serve(router, listener, shutdown).await?;
        info!("RES stopped");
        Ok(())
    }
    .instrument(span)
    .await
}
