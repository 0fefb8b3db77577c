//! sbatchd's side of the job supervisor pool ([`crate::supervisor::pool`]).
//!
//! One thread owns the pool process and its socket; the launch tasks hand it a job
//! directory's name and get back the read end of the job's wake-up pipe (the
//! supervisor writes a newline on it for each batch of events it recorded; end of file
//! means the supervisor is gone). The pool is started at the first job, started again
//! when it is found dead, and stopped after [`IDLE_STOP`] without a job (an idle host
//! keeps no pool; the first job after a pause pays one `exec`). Only this thread starts
//! and stops it, between requests, so no request meets a pool on its way out.
//!
//! A request is never sent twice: once the pool has the request, a second pool could
//! start a second supervisor for the same job. When the pool fails after taking a
//! request, the caller still gets the pipe: if no supervisor was forked, the pipe's
//! end of file comes at once, and the job is recorded as never started (as for a
//! supervisor that died before it started the job).

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
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::{debug, warn};

/// How long the pool may take to answer a request.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// A pool with no job to start for this long is stopped (the default of
/// [`crate::Options::pool_idle`]).
pub const IDLE_STOP: Duration = Duration::from_secs(60);

/// What a launch asks for.
struct Request {
    name: String,
    reply: oneshot::Sender<Result<OwnedFd, String>>,
}

/// The handle launch tasks use.
#[derive(Debug, Clone)]
pub struct Pool {
    tx: stdmpsc::Sender<Request>,
}

impl Pool {
    /// Start the thread that owns the pool (the pool process itself starts at the first
    /// job). `exe` is sbatchd's executable, `root` the state root.
    pub fn start(
        exe: PathBuf,
        root: PathBuf,
        env: Vec<(OsString, OsString)>,
        idle: Duration,
    ) -> std::io::Result<Pool> {
        let (tx, rx) = stdmpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("sbd-supervisor-pool".to_owned())
            .spawn(move || {
                let mut owner = Owner {
                    exe,
                    root,
                    env,
                    proc: None,
                };
                loop {
                    match rx.recv_timeout(idle) {
                        Ok(req) => {
                            let r = owner.start_supervisor(&req.name);
                            let _ = req.reply.send(r);
                        }
                        Err(stdmpsc::RecvTimeoutError::Timeout) => {
                            if owner.proc.is_some() {
                                debug!("no job for {idle:?}: stopping the job supervisor pool");
                                owner.stop();
                            }
                        }
                        Err(stdmpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
                // sbatchd is stopping: closing the socket ends the pool (its
                // supervisors run on).
                owner.stop();
            })?;
        Ok(Pool { tx })
    }

    /// Have the pool fork the supervisor of the job whose directory is `name` (under
    /// the state root). Returns the read end of its wake-up pipe.
    pub async fn start_supervisor(&self, name: String) -> Result<OwnedFd, String> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request { name, reply })
            .map_err(|_| "the job supervisor pool is stopped".to_owned())?;
        rx.await
            .map_err(|_| "the job supervisor pool is stopped".to_owned())?
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
                    "cannot start the job supervisor pool {}: {e}",
                    self.exe.display()
                )
            })?;
        debug!("job supervisor pool started (pid {})", child.id());
        Ok(Proc { child, sock: ours })
    }

    fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            drop(p.sock);
            let _ = p.child.wait();
        }
    }

    /// Forget a pool that failed: it is killed and reaped (its supervisors run on).
    fn discard(&mut self) {
        if let Some(mut p) = self.proc.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    fn start_supervisor(&mut self, name: &str) -> Result<OwnedFd, String> {
        let (rfd, wfd) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"))?;
        // A pool found dead is replaced once; the request goes only to a pool that
        // takes it.
        let mut tries = 0;
        loop {
            tries += 1;
            if self.proc.is_none() {
                self.proc = Some(self.spawn_pool()?);
            }
            let Some(p) = self.proc.as_mut() else {
                return Err("no job supervisor pool".to_owned());
            };
            let fds = [wfd.as_raw_fd()];
            let sent = sendmsg::<UnixAddr>(
                p.sock.as_raw_fd(),
                &[IoSlice::new(name.as_bytes())],
                &[ControlMessage::ScmRights(&fds)],
                MsgFlags::MSG_NOSIGNAL,
                None,
            );
            match sent {
                Ok(_) => break,
                Err(e) => {
                    warn!("the job supervisor pool is gone ({e}); starting a new one");
                    self.discard();
                    if tries >= 2 {
                        return Err(format!("cannot reach the job supervisor pool: {e}"));
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
                    Some(why) => Err(format!("the job supervisor pool: {why}")),
                    None => Ok(rfd),
                }
            }
            other => {
                // The pool took the request and then failed: whether it forked is
                // told by the pipe (see the module's documentation).
                warn!("the job supervisor pool did not answer ({other:?}); starting a new one");
                self.discard();
                Ok(rfd)
            }
        }
    }
}
