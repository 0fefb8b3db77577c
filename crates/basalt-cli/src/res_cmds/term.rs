//! This command's terminal for a task under a pseudo-terminal (`lsrun -P`): its window
//! size, and raw mode while the task runs (restored when the guard goes).

#![allow(unsafe_code)]

use nix::sys::termios::{SetArg, Termios, cfmakeraw, tcgetattr, tcsetattr};
use std::os::fd::{AsRawFd, BorrowedFd};

/// The window size (rows, columns) of the terminal on `fd`, if it is one.
pub fn window_size(fd: BorrowedFd<'_>) -> Option<(u32, u32)> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize through the pointer, which points to one
    // that lives across the call; the descriptor is borrowed, so open.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_row > 0).then_some((u32::from(ws.ws_row), u32::from(ws.ws_col)))
}

/// The size of the terminal a remote pseudo-terminal copies (this command's standard
/// output's; 24 x 80 when that is no terminal).
pub fn size_here() -> (u32, u32) {
    use std::os::fd::AsFd;
    window_size(std::io::stdout().as_fd()).unwrap_or((24, 80))
}

/// Standard input in raw mode (the remote terminal does the line editing and echo)
/// until dropped.
pub struct RawMode {
    saved: Termios,
}

impl std::fmt::Debug for RawMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawMode")
    }
}

impl RawMode {
    /// Raw mode on standard input when it is a terminal (None when it is not).
    pub fn enter() -> Option<RawMode> {
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        cfmakeraw(&mut raw);
        tcsetattr(&stdin, SetArg::TCSANOW, &raw).ok()?;
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &self.saved);
    }
}
