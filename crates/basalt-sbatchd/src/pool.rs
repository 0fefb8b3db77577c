//! sbatchd's side of the job supervisor ([`crate::supervisor`]).
//!
//! One thread owns the supervisor process and its socket; the job database's thread
//! hands it a job's name (`<jobId>.<idx>.<attempt>`) once the job is recorded, with the
//! job itself when it fits one request ([`crate::state::HandedJob`]), and the
//! launch task gets back the read end of the job's wake-up pipe (the
//! supervisor writes a line on it for each batch of the job's events it recorded — the
//! events themselves when they fit, see [`crate::state::wake_line`] —
//! and closes it when the job's end is on record; end of file without a final event
//! means the supervisor is gone). The supervisor is started at the first job, started
//! again when it is found dead, and let go after [`IDLE_STOP`] without a new job: its
//! socket is closed, so it takes no new job and exits once the jobs it follows have
//! ended (an idle host keeps no supervisor; the first job after a pause pays one
//! `exec`). Only this thread starts and lets go of it, between requests, so no request
//! meets a supervisor on its way out. A supervisor let go of is never waited for nor
//! killed here (it may still follow jobs): this thread reaps it when it has exited.
//!
//! A request is never sent twice: once the supervisor has the request, a second one
//! could start the job a second time. When the supervisor fails after taking a
//! request, the caller still gets the pipe: if the job was not taken, the pipe's end
//! of file comes at once, and the job is recorded as never started (as for a
//! supervisor that died before it started the job).

use crate::state::SupervisorId;
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, UnixAddr, recv, sendmsg,
    setsockopt, socketpair, sockopt,
};
use std::ffi::OsString;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc as stdmpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::{debug, warn};

/// How long the supervisor may take to answer a request.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// How often supervisors let go of are checked for their exit (to reap them).
const RETIRED_CHECK: Duration = Duration::from_secs(5);

/// A supervisor given no new job for this long is let go of (the default of
/// [`crate::Options::pool_idle`]).
pub const IDLE_STOP: Duration = Duration::from_secs(60);

/// What a launch asks for.
struct Request {
    name: String,
    /// The request's bytes: the job's name, and the job itself when it fits
    /// ([`crate::state::HandedJob`]).
    body: Vec<u8>,
    reply: oneshot::Sender<Result<OwnedFd, String>>,
}

/// The handle the launch tasks and the job database's thread use.
#[derive(Debug, Clone)]
pub struct Pool {
    tx: stdmpsc::Sender<Request>,
    /// The supervisor that takes new jobs now, if one runs.
    current: Arc<Mutex<Option<SupervisorId>>>,
}

impl Pool {
    /// Start the thread that owns the supervisor (the process itself starts at the
    /// first job). `exe` is sbatchd's executable, `root` the state root.
    pub fn start(
        exe: PathBuf,
        root: PathBuf,
        env: Vec<(OsString, OsString)>,
        idle: Duration,
    ) -> std::io::Result<Pool> {
        let (tx, rx) = stdmpsc::channel::<Request>();
        let current = Arc::new(Mutex::new(None));
        let current_here = current.clone();
        std::thread::Builder::new()
            .name("sbd-supervisor-pool".to_owned())
            .spawn(move || {
                let mut owner = Owner {
                    exe,
                    root,
                    env,
                    proc: None,
                    retired: Vec::new(),
                    current: current_here,
                };
                let mut last_job = std::time::Instant::now();
                loop {
                    match rx.recv_timeout(idle.min(RETIRED_CHECK)) {
                        Ok(req) => {
                            let r = owner.start_supervisor(&req.name, &req.body);
                            let _ = req.reply.send(r);
                            last_job = std::time::Instant::now();
                        }
                        Err(stdmpsc::RecvTimeoutError::Timeout) => {
                            if owner.proc.is_some() && last_job.elapsed() >= idle {
                                debug!("no job for {idle:?}: letting the job supervisor go");
                                owner.retire();
                            }
                        }
                        Err(stdmpsc::RecvTimeoutError::Disconnected) => break,
                    }
                    owner.reap_retired();
                }
                // sbatchd is stopping: closing the socket tells the supervisor (it
                // follows its jobs to their end). Those still running are waited for
                // by a thread of their own, so none is left a zombie while this
                // process lives on (an sbatchd inside a test, say).
                owner.retire();
                let left = std::mem::take(&mut owner.retired);
                if !left.is_empty() {
                    let _ = std::thread::Builder::new()
                        .name("sbd-supervisor-reaper".to_owned())
                        .spawn(move || {
                            for mut c in left {
                                let _ = c.wait();
                            }
                        });
                }
            })?;
        Ok(Pool { tx, current })
    }

    /// The supervisor that takes new jobs now (None before the first job, or after it
    /// was let go of).
    pub fn current(&self) -> Option<SupervisorId> {
        self.current.lock().ok().and_then(|c| c.clone())
    }

    /// Ask the pool's thread to hand the job named `name` to the supervisor, without
    /// waiting (callable from any thread: the job database's thread asks right after
    /// it recorded the job, so the request goes straight from one thread to the
    /// other); [`HandOver::answer`] waits for the outcome.
    pub fn hand_over(&self, name: String, body: Option<Vec<u8>>) -> Result<HandOver, String> {
        let (reply, rx) = oneshot::channel();
        let body = body.unwrap_or_else(|| name.clone().into_bytes());
        self.tx
            .send(Request { name, body, reply })
            .map_err(|_| "the job supervisor thread is stopped".to_owned())?;
        Ok(HandOver(rx))
    }
}

/// A hand-over asked of the pool's thread ([`Pool::hand_over`]).
#[derive(Debug)]
pub struct HandOver(oneshot::Receiver<Result<OwnedFd, String>>);

impl HandOver {
    /// The outcome: the read end of the job's wake-up pipe.
    pub async fn answer(self) -> Result<OwnedFd, String> {
        self.0
            .await
            .map_err(|_| "the job supervisor thread is stopped".to_owned())?
    }
}

struct Proc {
    child: Child,
    sock: OwnedFd,
}

struct Owner {
    exe: PathBuf,
    root: PathBuf,
    env: Vec<(OsString, OsString)>,
    proc: Option<Proc>,
    /// Supervisors let go of that have not exited yet.
    retired: Vec<Child>,
    /// Shared with [`Pool::current`].
    current: Arc<Mutex<Option<SupervisorId>>>,
}

impl Owner {
    fn spawn_pool(&self) -> Result<Proc, String> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| format!("socketpair: {e}"))?;
        let timeout = nix::sys::time::TimeVal::new(ANSWER_LIMIT.as_secs() as _, 0);
        setsockopt(&ours, sockopt::ReceiveTimeout, &timeout)
            .map_err(|e| format!("setsockopt: {e}"))?;
        let child = Command::new(&self.exe)
            .arg(crate::supervisor::FLAG)
            .arg(&self.root)
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the job supervisor {}: {e}",
                    self.exe.display()
                )
            })?;
        debug!("job supervisor started (pid {})", child.id());
        self.set_current(SupervisorId::of(child.id()));
        Ok(Proc { child, sock: ours })
    }

    /// Let the supervisor go: its socket is closed (it takes no new job and exits
    /// when its jobs have ended); it is reaped later.
    fn set_current(&self, id: Option<SupervisorId>) {
        if let Ok(mut c) = self.current.lock() {
            *c = id;
        }
    }

    fn retire(&mut self) {
        self.set_current(None);
        if let Some(p) = self.proc.take() {
            drop(p.sock);
            self.retired.push(p.child);
        }
        self.reap_retired();
    }

    /// Reap the supervisors let go of that have exited.
    fn reap_retired(&mut self) {
        self.retired
            .retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_)) | Err(_)));
    }
    fn start_supervisor(&mut self, name: &str, body: &[u8]) -> Result<OwnedFd, String> {
        let (rfd, wfd) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"))?;
        // A supervisor found dead is replaced once; the request goes only to one that
        // takes it.
        let mut tries = 0;
        loop {
            tries += 1;
            if self.proc.is_none() {
                self.proc = Some(self.spawn_pool()?);
            }
            let Some(p) = self.proc.as_mut() else {
                return Err("no job supervisor".to_owned());
            };
            let fds = [wfd.as_raw_fd()];
            let send = |bytes: &[u8]| {
                sendmsg::<UnixAddr>(
                    p.sock.as_raw_fd(),
                    &[IoSlice::new(bytes)],
                    &[ControlMessage::ScmRights(&fds)],
                    MsgFlags::MSG_NOSIGNAL,
                    None,
                )
            };
            let mut sent = send(body);
            if sent == Err(nix::errno::Errno::EMSGSIZE) {
                // Larger than the socket takes (a small socket buffer): nothing was
                // sent; the name alone, and the supervisor reads the job's row.
                sent = send(name.as_bytes());
            }
            match sent {
                Ok(_) => break,
                Err(e) => {
                    warn!("the job supervisor is gone ({e}); starting a new one");
                    self.retire();
                    if tries >= 2 {
                        return Err(format!("cannot reach the job supervisor: {e}"));
                    }
                }
            }
        }
        drop(wfd);
        let mut buf = [0u8; 512];
        let answer = match self.proc.as_ref() {
            Some(p) => recv(p.sock.as_raw_fd(), &mut buf, MsgFlags::empty()),
            None => Ok(0),
        };
        match answer {
            Ok(n) if n > 0 => {
                let text = String::from_utf8_lossy(&buf[..n]);
                match text.strip_prefix("ERR ") {
                    Some(why) => Err(format!("the job supervisor: {why}")),
                    None => Ok(rfd),
                }
            }
            other => {
                // The supervisor took the request and then failed (or is stuck):
                // whether it took the job is told by the pipe (see the module's
                // documentation). It is not killed: it may follow jobs.
                warn!("the job supervisor did not answer ({other:?}); starting a new one");
                self.retire();
                Ok(rfd)
            }
        }
    }
}
