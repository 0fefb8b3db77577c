//! Ending quietly when the reader of a command's output goes away (`bjobs -u all |
//! head -1`), as LSF's C commands do.
//!
//! Rust ignores SIGPIPE, so a write to a pipe whose reader has gone returns `EPIPE`, and
//! `println!` turns that into a panic (a backtrace and exit 101). LSF's commands keep
//! SIGPIPE's default action and die by it, silently. Restoring the default action for
//! the whole process would also kill a command silently when a *daemon's* connection
//! breaks under a write (gRPC writes sockets with `writev`, which raises SIGPIPE too),
//! where it must say which daemon did not answer. So [`install`] catches SIGPIPE with a
//! handler that looks at the command's own output: when standard output or standard
//! error is a pipe (or socket) whose reader has gone, the command dies by SIGPIPE — the
//! exit status LSF's commands have (128 + 13 in a shell); otherwise the handler returns
//! and the write fails with `EPIPE` as before, reported as an error by whoever made it.
//!
//! Every command's `main` calls [`install`] first (`tests/tests/lsf_commands.rs` runs
//! each command binary into a closed pipe). Daemons do not: their output is a log.
#![allow(unsafe_code)]

/// Is `fd` a pipe or socket whose reader has gone? (`poll` reports POLLERR on the
/// writing end of a pipe without readers, POLLHUP on a socket whose peer closed.)
/// Async-signal-safe.
fn reader_gone(fd: libc::c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd for the duration of the call; poll(2) is
    // async-signal-safe and does not block with a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

extern "C" fn on_sigpipe(_: libc::c_int) {
    if reader_gone(libc::STDOUT_FILENO) || reader_gone(libc::STDERR_FILENO) {
        // SAFETY: signal(2) and raise(3) are async-signal-safe. SIGPIPE is blocked while
        // this handler runs, so the raised one is delivered, with its default action
        // (end the process), as soon as the handler returns.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
    }
}

/// Make this command end quietly, by SIGPIPE, when the reader of its standard output
/// or standard error goes away (see the module docs). Call it first in `main`.
pub fn install() {
    // SAFETY: a zeroed sigaction is a valid value to fill in; the handler is an
    // `extern "C"` function that only makes async-signal-safe calls. Installing it
    // before any other thread exists races with nothing.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigpipe as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGPIPE, &sa, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_pipe_without_reader_is_seen_as_gone_and_one_with_a_reader_is_not() {
        let (r, w) = nix::unistd::pipe().expect("pipe");
        assert!(!reader_gone(w.as_raw_fd()));
        drop(r);
        assert!(reader_gone(w.as_raw_fd()));
        // A regular file never is.
        let f = tempfile::tempfile().expect("file");
        assert!(!reader_gone(f.as_raw_fd()));
    }
}
