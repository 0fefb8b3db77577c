//! The few system calls that need `unsafe`, each in the smallest wrapper, and each
//! with its precondition where the compiler sees it: [`fork`] is an `unsafe fn` (only
//! a process whose other threads hold no lock the child needs may call it, and only
//! the job supervisor does), and
//! [`set_disposition`] takes a [`Disposition`], which cannot name a handler, so it is
//! safe. Crate-private: nothing outside sbatchd forks through these. A job's top
//! process is not forked but cloned sharing the supervisor's memory ([`crate::spawn`]).

use nix::sys::signal::{SigHandler, Signal};
use nix::unistd::ForkResult;

/// `fork(2)`.
///
/// # Safety
///
/// The calling process's other threads, if any, must never take a lock the child may
/// need (a logger's, the environment's, a standard stream's; none started by a
/// library or an async runtime). The child then may allocate (glibc keeps `malloc`
/// consistent across `fork`) and run ordinary code. The job supervisor is such a
/// process: one synchronous loop, and launchers and report writers that only work on
/// files and start a job's process (see [`crate::supervisor`]'s `runner`).
#[allow(unsafe_code)]
pub(crate) unsafe fn fork() -> nix::Result<ForkResult> {
    // SAFETY: the caller guarantees no other thread holds a lock the child needs.
    unsafe { nix::unistd::fork() }
}

/// `_exit(2)`: leave a forked child without running exit handlers or flushing
/// buffers copied from the parent.
#[allow(unsafe_code)]
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// What a signal is set to by [`set_disposition`]: never a handler function, so
/// there is no async-signal-safety requirement to meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// `SIG_IGN`.
    Ignore,
}

/// Set a signal to its default action or to ignored.
#[allow(unsafe_code)]
pub(crate) fn set_disposition(sig: Signal, disposition: Disposition) -> nix::Result<()> {
    let handler = match disposition {
        Disposition::Ignore => SigHandler::SigIgn,
    };
    // SAFETY: SigIgn installs no Rust handler (the type allows nothing
    // else), so no signal-safety requirement applies.
    unsafe { nix::sys::signal::signal(sig, handler) }.map(|_| ())
}

/// `prlimit(2)` of another process's CPU-time limit: set its soft limit to `soft`
/// seconds (None: as high as its hard limit allows), its hard limit unchanged. How bmod
/// moves a running job's CPU limit (the SIGXCPU of its top process).
#[allow(unsafe_code)]
pub(crate) fn set_cpu_soft_limit(pid: nix::unistd::Pid, soft: Option<u64>) -> nix::Result<()> {
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a null new limit only reads; `cur` is a valid, writable rlimit.
    let r = unsafe { libc::prlimit(pid.as_raw(), libc::RLIMIT_CPU, std::ptr::null(), &mut cur) };
    nix::errno::Errno::result(r)?;
    let new = libc::rlimit {
        rlim_cur: soft.map_or(cur.rlim_max, |s| s.min(cur.rlim_max)),
        rlim_max: cur.rlim_max,
    };
    // SAFETY: `new` is a valid rlimit; the old value is not asked for.
    let r = unsafe { libc::prlimit(pid.as_raw(), libc::RLIMIT_CPU, &new, std::ptr::null_mut()) };
    nix::errno::Errno::result(r).map(|_| ())
}
