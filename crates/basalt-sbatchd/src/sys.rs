//! The few system calls that need `unsafe`, each in the smallest wrapper.
//! Only the single-threaded supervisor process uses [`fork`].

use nix::sys::signal::{SigHandler, Signal};
use nix::unistd::ForkResult;

/// `fork(2)`.
///
/// Only call this from a single-threaded process (the job supervisor is one: it
/// never starts a thread), so the child may allocate and run ordinary code.
#[allow(unsafe_code)]
pub fn fork() -> nix::Result<ForkResult> {
    // SAFETY: callers are single-threaded (documented above), so no lock held by
    // another thread can be left locked in the child.
    unsafe { nix::unistd::fork() }
}

/// `_exit(2)`: leave a forked child without running exit handlers or flushing
/// buffers copied from the parent.
#[allow(unsafe_code)]
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// Set a signal to its default action or to ignored.
#[allow(unsafe_code)]
pub fn set_disposition(sig: Signal, handler: SigHandler) -> nix::Result<()> {
    debug_assert!(matches!(handler, SigHandler::SigDfl | SigHandler::SigIgn));
    // SAFETY: SigDfl and SigIgn install no Rust handler, so no signal-safety
    // requirement applies.
    unsafe { nix::sys::signal::signal(sig, handler) }.map(|_| ())
}

/// `setpriority(PRIO_PROCESS, 0, nice)`: the calling process's nice value.
#[allow(unsafe_code)]
pub fn set_nice(nice: i32) -> nix::Result<()> {
    // SAFETY: plain system call on the calling process; no pointers involved.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if r == -1 {
        Err(nix::errno::Errno::last())
    } else {
        Ok(())
    }
}
