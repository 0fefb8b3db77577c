//! The seam between sbatchd and what runs its jobs ([`crate::Options::runner`]).
//!
//! Everything of a job's life in sbatchd — the job table, StartJob's answer, the
//! reports to mbatchd and their acknowledgements, requeue, kill, removal — is the
//! owner's ([`crate::owner`]) and the same on every host. What runs the job is behind
//! three calls, and only these differ:
//!
//! * [`Runner::hand_over`], made on the job database's thread right after the job is
//!   recorded: the job is given to what runs it;
//! * [`HandOver::answer`]: where the job's recorded events come from ([`Wake`]): a
//!   line on a wake-up pipe for each batch the runner committed to the job table (the
//!   events themselves when they fit, [`crate::state::wake_line`]), or the batch itself
//!   on a channel; the end of either, without a final event, means the runner is gone;
//! * [`Runner::control`]: one command of the job's control protocol (`KILL`, `STOP`,
//!   `RESUME`, `SIG`, `REASON`, `LIMITS`, `CHKPNT`; see [`crate::supervisor`]), answered
//!   with its reply line.
//!
//! [`Runner::Supervisor`] is a real host's: the job supervisor process ([`crate::pool`],
//! [`crate::supervisor`]), the wake-up pipe and the job's control socket.
//! [`Runner::Hollow`] runs no process ([`crate::hollow`]): each job is a tokio task that
//! records the same events (started with a pid, executing, a usage sample, state
//! changes, finished with a wait status) in the same job table, for hollow hosts of a
//! scale test.

use crate::db::{DbHandle, Key};
use crate::state::{Event, Launch, SupervisorId};
use basalt_proto::sbatchd::JobSpec;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What runs this sbatchd's jobs.
#[derive(Debug, Clone)]
pub enum Runner {
    /// The job supervisor process (a real host).
    Supervisor(crate::pool::Pool),
    /// Hollow jobs: no process, a timer each ([`crate::hollow`]).
    Hollow(crate::hollow::Hollow),
}

/// A job handed over ([`Runner::hand_over`]): its events to come.
#[derive(Debug)]
pub enum HandOver {
    Supervisor(crate::pool::HandOver),
    Hollow(mpsc::UnboundedReceiver<Vec<Event>>),
}

/// Where a job's events come from once it is handed over.
#[derive(Debug)]
pub enum Wake {
    /// The read end of the job's wake-up pipe (the supervisor's).
    Pipe(OwnedFd),
    /// Each batch of events recorded, numbered, in order; the sender dropped after the
    /// final one (or when the runner is gone).
    Events(mpsc::UnboundedReceiver<Vec<Event>>),
}

impl HandOver {
    /// Wait for the outcome of the hand-over.
    pub async fn answer(self) -> Result<Wake, String> {
        match self {
            HandOver::Supervisor(h) => h.answer().await.map(Wake::Pipe),
            HandOver::Hollow(rx) => Ok(Wake::Events(rx)),
        }
    }
}

impl Runner {
    /// The supervisor that takes new jobs now, recorded with each job (None: none runs
    /// yet, or a hollow host).
    pub fn current(&self) -> Option<SupervisorId> {
        match self {
            Runner::Supervisor(pool) => pool.current(),
            Runner::Hollow(_) => None,
        }
    }

    /// Give the job `key`, just recorded as created at `created` with `supervisor`,
    /// to what runs it. Called on the job database's thread; `db` is the handle a
    /// runner in this process records the job's events through.
    pub fn hand_over(
        &self,
        key: Key,
        created: i64,
        supervisor: Option<&SupervisorId>,
        launch: &Launch,
        spec: Arc<JobSpec>,
        db: &DbHandle,
    ) -> Result<HandOver, String> {
        match self {
            Runner::Supervisor(pool) => {
                let name = crate::paths::state_dir_name(key.0, key.1, key.2);
                // The job goes with its name: the supervisor need not read it back.
                let body = crate::state::encode_handed(&name, created, supervisor, launch, &spec);
                pool.hand_over(name, body).map(HandOver::Supervisor)
            }
            Runner::Hollow(h) => Ok(HandOver::Hollow(h.start(key, spec, launch, db.clone()))),
        }
    }

    /// One control command for job `key` (whose control socket is `ctl`); its reply
    /// line (`OK`, `ERR <why>`).
    pub async fn control(&self, key: Key, ctl: &Path, cmd: &str) -> Result<String, String> {
        match self {
            Runner::Supervisor(_) => crate::owner::ctl_call(ctl, cmd).await,
            Runner::Hollow(h) => h.control(key, cmd).await,
        }
    }

    /// sbatchd is stopping. The supervisor follows its jobs on (a later sbatchd
    /// re-adopts them); hollow jobs end with their sbatchd, recording nothing more (as
    /// on a host that went down).
    pub fn stop(&self) {
        if let Runner::Hollow(h) = self {
            h.stop();
        }
    }
}
