//! The supervisor pool: one long-lived process per sbatchd that forks a job's
//! supervisor on request, so starting a job costs a `fork` of a small process instead
//! of a fresh `exec` of sbatchd's binary (its loading, relocation and start-up).
//!
//! sbatchd starts it once, as `sbatchd --job-supervisor <state root>` (the state root
//! instead of a job's directory), with a `SOCK_SEQPACKET` Unix socket as its stdin.
//! Each request is one message: the name of the job's directory under the state root
//! (`<jobId>.<idx>.<attempt>`) with one file descriptor attached (`SCM_RIGHTS`), the
//! write end of the pipe through which the supervisor wakes sbatchd. The pool forks;
//! the child puts that pipe on its stdout, closes everything of the pool's and becomes
//! the job's supervisor ([`super::main`]); the pool answers `OK <pid>` or `ERR
//! <reason>`. It reaps the supervisors that end, and exits when sbatchd closes the
//! socket (sbatchd stopped or died): supervisors already forked run on, as a
//! supervisor started by `exec` did, and the next sbatchd starts a new pool.
//!
//! The pool is single-threaded and holds nothing a child could inherit by mistake: no
//! database connection, no lock; between requests it only waits on the socket.

use crate::paths;
use crate::sys::{self, Disposition};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, send};
use nix::sys::wait::{WaitPidFlag, WaitStatus};
use std::io::IoSliceMut;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// The longest request: a directory name (three numbers and two dots).
const MAX_REQUEST: usize = 256;

/// One request read from sbatchd.
enum Request {
    /// Fork a supervisor for this job directory, waking sbatchd through `wake`.
    Start { name: String, wake: OwnedFd },
    /// A message that is not a valid request (answered with an error).
    Bad(String),
    /// Nothing to read after all.
    Nothing,
    /// sbatchd closed its end.
    Closed,
}

/// Entry point of pool mode; returns the process exit code. `root` is the state root;
/// stdin is the request socket.
///
/// # Safety
///
/// As for [`super::main`]: the process must be single-threaded and stay so (the pool
/// forks and runs a supervisor in the child). sbatchd's `main` calls this before it
/// starts anything else.
#[allow(unsafe_code)]
pub unsafe fn serve(root: &Path) -> i32 {
    // Out of sbatchd's session and process group: a signal to sbatchd's group (a
    // terminal's ^C) is not one to the pool; sbatchd's end is seen as end of file.
    let _ = nix::unistd::setsid();
    let _ = sys::set_disposition(Signal::SIGPIPE, Disposition::Ignore);
    let _ = sys::set_disposition(Signal::SIGHUP, Disposition::Ignore);
    // SAFETY: fd 0 is the request socket sbatchd gave this process as stdin; nothing
    // else in this process owns it.
    let sock = unsafe { OwnedFd::from_raw_fd(0) };
    // Ended supervisors are reaped as SIGCHLD arrives (through a signalfd, so no
    // handler runs); a supervisor blocks SIGCHLD for its own signalfd anyway.
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let sigfd = nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None)
        .and_then(|()| SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC));
    let sigfd = match sigfd {
        Ok(f) => f,
        Err(e) => {
            tracing::error!("job supervisor pool: signalfd: {e}");
            return 1;
        }
    };
    // Load once, here, what every supervisor needs and a child inherits: the name
    // service (nsswitch.conf and its modules, for the user, group and group-list
    // look-ups) and the time zone (the job report's dates).
    if let Ok(Some(me)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        let _ = nix::unistd::Group::from_gid(me.gid);
        if let Ok(name) = std::ffi::CString::new(me.name) {
            let _ = nix::unistd::getgrouplist(&name, me.gid);
        }
    }
    let _ = basalt_runtime::time::localtime(0);
    loop {
        while let Ok(Some(_)) = sigfd.read_signal() {}
        reap();
        let mut fds = [
            PollFd::new(sock.as_fd(), PollFlags::POLLIN),
            PollFd::new(sigfd.as_fd(), PollFlags::POLLIN),
        ];
        match nix::poll::poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::error!("job supervisor pool: poll: {e}");
                return 1;
            }
        }
        if !fds[0].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        }) {
            continue;
        }
        let answer = match read_request(sock.as_raw_fd()) {
            Request::Closed => return 0,
            Request::Nothing => continue,
            Request::Bad(why) => format!("ERR {why}"),
            Request::Start { name, wake } => {
                let dir = root.join(&name);
                // SAFETY: this process is single-threaded (see # Safety).
                match unsafe { sys::fork() } {
                    Ok(nix::unistd::ForkResult::Child) => {
                        drop(sock);
                        drop(sigfd);
                        // stdin is /dev/null again (SQLite would not use fd 0 for the
                        // database, and would open and close /dev/null itself).
                        if let Ok(null) = std::fs::File::open("/dev/null") {
                            let null = OwnedFd::from(null);
                            if null.as_raw_fd() != 0 {
                                // SAFETY: fd 0 was the request socket, just closed; it
                                // is replaced on purpose and no Rust object owns it.
                                unsafe { libc::dup2(null.as_raw_fd(), 0) };
                            } else {
                                std::mem::forget(null);
                            }
                        }
                        // SAFETY: still the same single thread, now in the child.
                        let code = unsafe { start_supervisor(&dir, wake) };
                        sys::exit_now(code);
                    }
                    Ok(nix::unistd::ForkResult::Parent { child }) => {
                        drop(wake);
                        format!("OK {child}")
                    }
                    Err(e) => format!("ERR fork: {e}"),
                }
            }
        };
        match send(sock.as_raw_fd(), answer.as_bytes(), MsgFlags::empty()) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return 0,
        }
    }
}

/// In the forked child: the wake pipe becomes stdout, then the supervisor runs.
///
/// # Safety
///
/// The process is single-threaded (a child of the single-threaded pool).
#[allow(unsafe_code)]
unsafe fn start_supervisor(dir: &Path, wake: OwnedFd) -> i32 {
    if wake.as_raw_fd() != 1 {
        let mut stdout = std::io::stdout();
        let _ = std::io::Write::flush(&mut stdout);
        // dup2 leaves close-on-exec off on the copy: the supervisor keeps stdout.
        // SAFETY: fd 1 is this process's stdout, which is replaced on purpose; no
        // Rust object owns fd 1.
        if unsafe { libc::dup2(wake.as_raw_fd(), 1) } < 0 {
            return 1;
        }
        drop(wake);
    }
    let code = unsafe { super::main(dir) };
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

/// Read one request (blocking: poll said there is one).
fn read_request(sock: RawFd) -> Request {
    let mut buf = [0u8; MAX_REQUEST];
    let mut cmsg = nix::cmsg_space!([RawFd; 1]);
    let (len, fds, truncated) = {
        let mut iov = [IoSliceMut::new(&mut buf)];
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
    let name = match std::str::from_utf8(&buf[..len]) {
        Ok(n) if paths::parse_state_dir_name(n).is_some() => n.to_owned(),
        _ => return Request::Bad("not a job directory name".to_owned()),
    };
    match (fds.pop(), fds.is_empty()) {
        (Some(wake), true) => Request::Start { name, wake },
        _ => Request::Bad("a request carries exactly one descriptor".to_owned()),
    }
}

/// Reap every supervisor that has ended.
fn reap() {
    loop {
        match nix::sys::wait::waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
            Err(Errno::EINTR) | Ok(_) => continue,
            Err(_) => return,
        }
    }
}
