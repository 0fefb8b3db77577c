//! The supervisor process's entry and its request socket.
//!
//! sbatchd starts the supervisor once, as `sbatchd --job-supervisor <state root>`,
//! with a `SOCK_SEQPACKET` Unix socket as its stdin. Each request is one message: the
//! job's name (`<jobId>.<idx>.<attempt>`, as its control socket is named), followed by
//! the job as sbatchd just recorded it when it fits ([`crate::state::HandedJob`]), with
//! one file descriptor attached (`SCM_RIGHTS`), the write end of the pipe through
//! which the supervisor wakes sbatchd for that job. The supervisor takes the job
//! ([`super::runner`]) and answers `OK <pid>` (its own pid) or `ERR <reason>`. When
//! sbatchd closes the socket (sbatchd stopped or died, or stopped an idle
//! supervisor), it takes no new job and exits once the jobs it follows have ended;
//! the next sbatchd starts a new one.

use super::runner::Runner;
use crate::paths;
use crate::sys::{self, Disposition};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use std::io::IoSliceMut;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// The longest request: a job's name with the job ([`crate::state::HANDED_MAX`]).
const MAX_REQUEST: usize = crate::state::HANDED_MAX + 256;

/// One request read from sbatchd.
pub(super) enum Request {
    /// Follow the job of this name, waking sbatchd through `wake`; `job` is the job
    /// when sbatchd sent it along (else it is read from the job table).
    Start {
        name: String,
        wake: OwnedFd,
        job: Option<Box<crate::state::HandedJob>>,
    },
    /// A message that is not a valid request (answered with an error).
    Bad(String),
    /// Nothing to read after all.
    Nothing,
    /// sbatchd closed its end.
    Closed,
}

/// Entry point of supervisor mode; returns the process exit code. `root` is the
/// state root; stdin is the request socket.
///
/// # Safety
///
/// The process must be single-threaded when called, and start no thread but the
/// supervisor's launchers and report writers (the supervisor forks a mail helper and
/// runs code in it).
/// sbatchd's `main` calls this before it starts anything else.
#[allow(unsafe_code)]
pub unsafe fn serve(root: &Path) -> i32 {
    // Out of sbatchd's session and process group: a signal to sbatchd's group (a
    // terminal's ^C) is not one to the supervisor; sbatchd's end is seen as end of file.
    let _ = nix::unistd::setsid();
    // Orphans of the jobs come back to this process, so their end is seen and a job's
    // leftovers are found among its children.
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let _ = sys::set_disposition(Signal::SIGPIPE, Disposition::Ignore);
    let _ = sys::set_disposition(Signal::SIGHUP, Disposition::Ignore);
    // SAFETY: fd 0 is the request socket sbatchd gave this process as stdin; nothing
    // else in this process owns it.
    let sock = unsafe { OwnedFd::from_raw_fd(0) };
    // SIGCHLD arrives through a signalfd (no handler runs); the jobs' processes unblock
    // it before they exec.
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let sigfd = nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None)
        .and_then(|()| SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC));
    let sigfd = match sigfd {
        Ok(f) => f,
        Err(e) => {
            tracing::error!("job supervisor: signalfd: {e}");
            return 1;
        }
    };
    // Load once, here, what every job needs: the name service (nsswitch.conf and its
    // modules, for the user, group and group-list look-ups) and the time zone (the job
    // report's dates).
    if let Ok(Some(me)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        let _ = nix::unistd::Group::from_gid(me.gid);
        if let Ok(name) = std::ffi::CString::new(me.name) {
            let _ = nix::unistd::getgrouplist(&name, me.gid);
        }
    }
    let _ = basalt_runtime::time::localtime(0);
    // SAFETY: fork-safe (this function's # Safety).
    unsafe { Runner::new(root, sock, sigfd).run() }
}

/// A buffer for [`read_request`], allocated once by the supervisor's loop (a request
/// can carry a job of up to [`crate::state::HANDED_MAX`] bytes).
pub(super) fn request_buffer() -> Vec<u8> {
    vec![0u8; MAX_REQUEST]
}

/// Read one request (blocking: poll said there is one) into `buf`, a
/// [`request_buffer`].
pub(super) fn read_request(sock: RawFd, buf: &mut [u8]) -> Request {
    let mut cmsg = nix::cmsg_space!([RawFd; 1]);
    let (len, fds, truncated) = {
        let mut iov = [IoSliceMut::new(buf)];
        let received = loop {
            match recvmsg::<()>(sock, &mut iov, Some(&mut cmsg), MsgFlags::MSG_CMSG_CLOEXEC) {
                Err(Errno::EINTR) => continue,
                r => break r,
            }
        };
        let msg = match received {
            Ok(m) => m,
            Err(Errno::EAGAIN) => return Request::Nothing,
            Err(_) => return Request::Closed,
        };
        let mut fds = Vec::new();
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                if let ControlMessageOwned::ScmRights(r) = c {
                    fds.extend(r);
                }
            }
        }
        let truncated = msg
            .flags
            .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
        (msg.bytes, fds, truncated)
    };
    // SAFETY: the kernel installed these descriptors in this process for this message;
    // each is owned once, here.
    #[allow(unsafe_code)]
    let mut fds: Vec<OwnedFd> = fds
        .into_iter()
        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
        .collect();
    if len == 0 && fds.is_empty() {
        return Request::Closed;
    }
    if truncated {
        return Request::Bad("request too long".to_owned());
    }
    let (name, job) = crate::state::HandedJob::decode(&buf[..len]);
    let name = match name {
        Some(n) if paths::parse_state_dir_name(n).is_some() => n.to_owned(),
        _ => return Request::Bad("not a job name".to_owned()),
    };
    match (fds.pop(), fds.is_empty()) {
        (Some(wake), true) => Request::Start {
            name,
            wake,
            job: job.map(Box::new),
        },
        _ => Request::Bad("a request carries exactly one descriptor".to_owned()),
    }
}
