//! RES's `unsafe` calls: what a task's child process does between `fork` and `exec`
//! (its session and controlling terminal, identity, umask and working directory), and
//! a terminal's window size.

#![allow(unsafe_code)]

use crate::task::Become;
use nix::unistd::{Gid, Uid};
use std::ffi::CString;

/// Make `cmd`'s child leave RES's session (its pid becomes its session and process
/// group; with `tty`, the terminal on its standard input becomes its controlling
/// terminal), take the user's groups, gid and uid (when `become_user`), its umask, and
/// change to `cwd` as the user.
pub(crate) fn in_own_session_as(
    cmd: &mut std::process::Command,
    become_user: Option<Become>,
    umask: u32,
    cwd: CString,
    tty: bool,
    fd3: Option<std::os::fd::RawFd>,
) {
    let ids = become_user.map(|b| {
        (
            b.groups.into_iter().map(Gid::from_raw).collect::<Vec<_>>(),
            Gid::from_raw(b.gid),
            Uid::from_raw(b.uid),
        )
    });
    let mask = nix::sys::stat::Mode::from_bits_truncate(umask as libc::mode_t);
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe work is allowed: it makes plain system calls (setsid, the
    // TIOCSCTTY ioctl on its own standard input, setgroups, setgid, setuid, umask, chdir) on data built before the fork, allocates nothing and
    // takes no lock. The child has one thread, so glibc's set*id need not signal others.
    use std::os::unix::process::CommandExt;
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            if let Some(fd) = fd3
                && libc::dup2(fd, 3) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if tty && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((groups, gid, uid)) = &ids {
                nix::unistd::setgroups(groups)?;
                nix::unistd::setgid(*gid)?;
                nix::unistd::setuid(*uid)?;
            }
            nix::sys::stat::umask(mask);
            nix::unistd::chdir(cwd.as_c_str())?;
            Ok(())
        });
    }
}

/// Set the window size of the terminal whose master is `master`.
pub(crate) fn set_window(
    master: std::os::fd::BorrowedFd<'_>,
    rows: u16,
    cols: u16,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads a winsize from the pointer, which points to one that lives
    // across the call; the descriptor is borrowed, so open.
    let r = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// One message from the unix socket `fd` with up to `max_fds` descriptors passed
/// along (`SCM_RIGHTS`, received close-on-exec): its bytes and the descriptors.
pub(crate) fn recv_with_fds(
    fd: std::os::fd::RawFd,
    max_fds: usize,
) -> std::io::Result<(Vec<u8>, Vec<std::os::fd::OwnedFd>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    use std::os::fd::FromRawFd;
    let mut buf = vec![0u8; 256];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 8]);
    let mut iov = [std::io::IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)
        .map_err(std::io::Error::from)?;
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            for r in raw {
                // SAFETY: the kernel just installed `r` in this process for this
                // message; nothing else owns it.
                let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(r) };
                if fds.len() < max_fds {
                    fds.push(owned);
                }
            }
        }
    }
    let n = msg.bytes;
    buf.truncate(n);
    Ok((buf, fds))
}

/// Reap child `pid`: its raw wait status and resource usage (`wait4`, retried on EINTR).
pub(crate) fn wait4(pid: u32) -> std::io::Result<(i32, crate::task::TaskUsage)> {
    let pid = i32::try_from(pid).map_err(std::io::Error::other)?;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 writes one int and one rusage through pointers to locals that
        // live across the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((
        status,
        crate::task::TaskUsage {
            utime: secs(ru.ru_utime),
            stime: secs(ru.ru_stime),
            max_rss_kb: u64::try_from(ru.ru_maxrss).unwrap_or(0),
        },
    ))
}

/// Send `fd` with a one-byte message on `sock` (SCM_RIGHTS), without waiting: a full
/// socket is an error (`WouldBlock`).
pub(crate) fn send_fd(
    sock: std::os::fd::BorrowedFd<'_>,
    fd: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<()> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    use std::os::fd::AsRawFd;
    let fds = [fd.as_raw_fd()];
    let iov = [std::io::IoSlice::new(b"c")];
    sendmsg::<()>(
        sock.as_raw_fd(),
        &iov,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT,
        None,
    )
    .map(drop)
    .map_err(std::io::Error::from)
}
