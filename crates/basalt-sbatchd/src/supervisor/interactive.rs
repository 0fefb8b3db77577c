//! Interactive batch jobs (`bsub -I`, `-Ip`, `-Is`): the job's standard streams that
//! no file takes (`-i`, `-o`, `-e`) are pipes, or one pseudo-terminal (its controlling
//! terminal), whose other ends the supervisor holds until the job's user attaches.
//!
//! The host's RES attaches for bsub: it sends `ATTACH <user>` on the job's control
//! socket and gets, once, `OK <pgid> <mask>` with the ends as `SCM_RIGHTS` descriptors
//! (mask bits [`STDIN`], [`STDOUT`], [`STDERR`] for pipes, or [`PTY`] for the terminal's
//! master, in that order); it relays them to bsub. Before that the job runs without
//! its input (a read waits) and its output waits in the pipe (a full pipe holds the
//! job up): nothing is lost, and a job that ends before the attach keeps its end
//! unrecorded (its output in the pipes) until then. `WAIT` answers while the job's
//! pre-execution commands run; a job nobody attached to within [`ATTACH_WAIT`] of its
//! start is killed, or its end recorded, without its output (its bsub is gone).

use super::Supervisor;
use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
use std::fs::File;
use std::io::{IoSlice, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// The ends handed over: the write end of the job's standard input, the read ends of
/// its standard output and error, or the master of its pseudo-terminal.
pub(super) const STDIN: u8 = 1;
pub(super) const STDOUT: u8 = 2;
pub(super) const STDERR: u8 = 4;
pub(super) const PTY: u8 = 8;

/// How long an interactive job waits for its user to attach before it is killed.
pub(super) const ATTACH_WAIT: Duration = Duration::from_secs(120);

/// The supervisor's ends of an interactive job's streams, until handed over.
#[derive(Debug)]
pub(super) struct JobIo {
    /// (mask bit, descriptor), in the order of the bits.
    pub(super) ends: Vec<(u8, OwnedFd)>,
    /// When the job's user must have attached ([`ATTACH_WAIT`] after its start).
    by: Instant,
}

/// The job's streams being set up: the child's ends per stream (taken by the launcher
/// unless a file takes the stream), and the supervisor's.
#[derive(Debug)]
pub(super) struct Terminal {
    child: [Option<File>; 3],
    ends: Vec<(u8, OwnedFd)>,
    pty: bool,
    taken: [bool; 3],
}

fn cloexec(fd: &OwnedFd) -> Result<(), String> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map(|_| ())
        .map_err(|e| format!("fcntl: {e}"))
}

impl Terminal {
    /// Pipes (`mode` 1, `bsub -I`) or a pseudo-terminal (2 `-Ip`, 3 `-Is`); every
    /// descriptor close-on-exec (the child's are `dup2`ed onto 0, 1, 2).
    pub(super) fn open(mode: u32) -> Result<Terminal, String> {
        if mode >= 2 {
            // 24x80 until bsub attaches with its terminal's size.
            let size = nix::pty::Winsize {
                ws_row: 24,
                ws_col: 80,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            let pty = nix::pty::openpty(&size, None)
                .map_err(|e| format!("cannot open a pseudo-terminal: {e}"))?;
            cloexec(&pty.master)?;
            cloexec(&pty.slave)?;
            let slave = File::from(pty.slave);
            let dup = |f: &File| f.try_clone().map_err(|e| format!("dup: {e}"));
            let child = [Some(dup(&slave)?), Some(dup(&slave)?), Some(slave)];
            return Ok(Terminal {
                child,
                ends: vec![(PTY, pty.master)],
                pty: true,
                taken: [false; 3],
            });
        }
        let pipe =
            || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"));
        let (in_r, in_w) = pipe()?;
        let (out_r, out_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        Ok(Terminal {
            child: [
                Some(File::from(in_r)),
                Some(File::from(out_w)),
                Some(File::from(err_w)),
            ],
            ends: vec![(STDIN, in_w), (STDOUT, out_r), (STDERR, err_r)],
            pty: false,
            taken: [false; 3],
        })
    }

    /// The child's end for stream `i` (0, 1, 2).
    pub(super) fn take(&mut self, i: usize) -> Option<File> {
        let f = self.child.get_mut(i)?.take()?;
        self.taken[i] = true;
        Some(f)
    }

    /// The stream (0, 1, 2) that is the controlling terminal, if any.
    pub(super) fn ctty(&self) -> Option<RawFd> {
        if !self.pty {
            return None;
        }
        self.taken.iter().position(|t| *t).map(|i| i as RawFd)
    }

    /// The supervisor's ends of the streams the job got (None: files took them all).
    pub(super) fn finish(self) -> Option<JobIo> {
        let taken = self.taken;
        let ends: Vec<(u8, OwnedFd)> = self
            .ends
            .into_iter()
            .filter(|(bit, _)| match *bit {
                STDIN => taken[0],
                STDOUT => taken[1],
                STDERR => taken[2],
                _ => taken.iter().any(|t| *t),
            })
            .collect();
        (!ends.is_empty()).then(|| JobIo {
            ends,
            by: Instant::now() + ATTACH_WAIT,
        })
    }
}

impl Supervisor {
    /// `ATTACH <user>` on the control socket: hand the job's ends over, once, to the
    /// job's user (or root).
    pub(super) fn attach(&mut self, stream: &UnixStream, user: &str) {
        let reply = |text: &str| {
            let _ = (&*stream).write_all(text.as_bytes());
        };
        if self.spec.interactive == 0 {
            return reply("ERR not an interactive job\n");
        }
        if user != self.spec.user && user != "root" {
            return reply("ERR permission\n");
        }
        let Some(io) = self.io.take() else {
            if self.io_handed || self.main_status.is_some() {
                return reply("ERR already attached or ended\n");
            }
            // Its pre-execution commands run, or the launcher is at work.
            return reply("WAIT\n");
        };
        let pgid = self.job.map_or(0, |p| p.as_raw());
        let mask: u8 = io.ends.iter().fold(0, |m, (b, _)| m | b);
        let text = format!("OK {pgid} {mask}\n");
        let fds: Vec<RawFd> = io.ends.iter().map(|(_, fd)| fd.as_raw_fd()).collect();
        let sent = sendmsg::<()>(
            stream.as_raw_fd(),
            &[IoSlice::new(text.as_bytes())],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        );
        match sent {
            Ok(_) => {
                // Our copies go: the job's streams are RES's now.
                self.io_handed = true;
                tracing::debug!(job = self.key.0, "interactive job attached by {user}");
            }
            Err(e) => {
                tracing::warn!(job = self.key.0, "handing the job's streams over: {e}");
                self.io = Some(io);
            }
        }
    }

    /// A job nobody attached to within [`ATTACH_WAIT`]: its ends go and it is killed.
    /// Returns when to look again.
    pub(super) fn check_attach(&mut self, now: Instant) -> Option<Instant> {
        let by = self.io.as_ref()?.by;
        if now < by {
            return Some(by);
        }
        tracing::warn!(
            job = self.key.0,
            "interactive job: nobody attached within {} s; killing it",
            ATTACH_WAIT.as_secs()
        );
        self.io = None;
        if self.main_status.is_none() {
            let ti = self.launch.terminate_interval;
            self.start_kill(ti, "-");
        }
        None
    }
}
