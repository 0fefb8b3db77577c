//! Checkpointing a running job (the `ctl` socket's `CHKPNT <kill> <force> <migrate>`,
//! mbatchd's CHKPNT action): one checkpoint at a time per job, run without holding up
//! the loop; a request while one runs is merged into it (a kill asked by any of them is
//! done after it succeeds).
//!
//! The method ([`super::method`]): `echkpnt.<method> [-f] [-k] -d <chkpnt_dir> <pgid>`
//! as the job's user in the job's working directory, exit 0 meaning success; or, for
//! `default` without such a program, Basalt's built-in application-level method: the
//! job's process group gets `BASALT_CHKPNT_SIGNAL` (default SIGWINCH, ignored by
//! default, so a job that does not take part is not harmed; a stopped job gets SIGCONT
//! after it and SIGSTOP again afterwards unless it is killed), and the checkpoint
//! succeeds once the job has created `<chkpnt_dir>/chkpnt.done` (removed first). Both
//! are bounded by `BASALT_CHKPNT_TIMEOUT` (60 s).
//!
//! The outcome is a `chkpnt` event (a CHKPNT report: `chkpnt_ok`, the echkpnt pid, the
//! failure's reason). A successful checkpoint asked with kill starts the kill sequence
//! (`TERM_CHKPNT`); a failed one leaves the job as it was.

use super::env::chkpnt_method;
use super::method::{self, Method, Poll, Program, Run};
use super::{Phase, Supervisor};
use crate::state::{Event, EventKind};
use nix::sys::signal::Signal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The file a job taking part in the built-in method creates once its state is saved.
pub(super) const DONE_FILE: &str = "chkpnt.done";

/// How often the built-in method looks for [`DONE_FILE`].
const DONE_POLL: Duration = Duration::from_millis(100);

/// The built-in method's signal: `BASALT_CHKPNT_SIGNAL` (a name with or without `SIG`,
/// or a number), SIGWINCH when not set.
pub(super) fn parse_signal(v: Option<&str>) -> Result<Signal, String> {
    let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Signal::SIGWINCH);
    };
    basalt_core::job::signal_number(v)
        .and_then(|n| Signal::try_from(n).ok())
        .filter(|s| !matches!(s, Signal::SIGKILL | Signal::SIGSTOP))
        .ok_or_else(|| format!("BASALT_CHKPNT_SIGNAL={v}: not a signal a job can handle"))
}

/// One checkpoint request (merged while a checkpoint runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) kill: bool,
    pub(super) force: bool,
    pub(super) migrate: bool,
}

impl Request {
    /// The numbers after `CHKPNT` (`1` = yes), absent ones no.
    pub(super) fn parse<'a>(mut words: impl Iterator<Item = &'a str>) -> Request {
        let mut flag = || words.next().is_some_and(|w| w == "1");
        Request {
            kill: flag(),
            force: flag(),
            migrate: flag(),
        }
    }
}

/// The checkpoint a job is at.
#[derive(Debug)]
pub(super) struct Chkpnt {
    req: Request,
    how: How,
}

#[derive(Debug)]
enum How {
    /// `LSF_SERVERDIR/eexec` with `LS_EXEC_T=CHKPNT` first (seed 001: "eexec is run at
    /// job start-up and completion time, and when checkpointing is initiated"); the
    /// method follows whatever its exit status.
    Eexec(Program),
    Program(Program),
    Builtin {
        signal: Signal,
        done: PathBuf,
        until: Instant,
        timeout_secs: u64,
        /// The job was stopped: it got SIGCONT, and gets SIGSTOP again.
        stopped: bool,
    },
}

impl Supervisor {
    /// `CHKPNT`: checkpoint the job, or merge `req` into the checkpoint under way.
    pub(super) fn chkpnt_request(&mut self, req: Request) {
        if let Some(c) = self.chkpnt.as_mut() {
            c.req.kill |= req.kill;
            c.req.force |= req.force;
            c.req.migrate |= req.migrate;
            return;
        }
        let refused = if self.spec.chkpnt_dir.is_empty() {
            Some("the job is not checkpointable")
        } else if !matches!(self.phase, Phase::Running)
            || self.main_status.is_some()
            || self.job.is_none()
        {
            Some("the job is not running")
        } else if self.kill_deadline.is_some() {
            Some("the job is being killed")
        } else {
            None
        };
        if let Some(why) = refused {
            return self.chkpnt_outcome(0, Err(why.to_owned()));
        }
        tracing::info!(
            job = self.key.0,
            idx = self.key.1,
            "checkpointing (method {}{})",
            chkpnt_method(&self.spec),
            if req.kill { ", then killed" } else { "" }
        );
        let eexec = self.launch.serverdir.as_deref().and_then(|d| {
            let p = Path::new(d).join("eexec");
            basalt_config::is_executable(&p).then_some(p)
        });
        let started = match eexec {
            Some(path) => match self.start_eexec(&path) {
                Ok(p) => Ok(How::Eexec(p)),
                Err(e) => {
                    tracing::warn!(job = self.key.0, "eexec (CHKPNT): {e}");
                    self.start_method(req)
                }
            },
            None => self.start_method(req),
        };
        match started {
            Ok(how) => self.chkpnt = Some(Box::new(Chkpnt { req, how })),
            Err(why) => self.chkpnt_outcome(0, Err(why)),
        }
    }

    /// Where a checkpoint method or eexec runs: the job's working directory.
    fn method_cwd(&self) -> PathBuf {
        PathBuf::from(self.info.as_ref().map_or("/tmp", |i| i.cwd.as_str()))
    }

    /// The checkpoint method itself: `echkpnt.<method>`, or the built-in one.
    fn start_method(&mut self, req: Request) -> Result<How, String> {
        let method = chkpnt_method(&self.spec).to_owned();
        match method::find("echkpnt", &method, &self.launch) {
            Method::Missing(why) => Err(why),
            Method::Program(path) => self.start_echkpnt(&method, &path, req).map(How::Program),
            Method::Builtin => self.start_builtin(),
        }
    }

    /// eexec with `LS_EXEC_T=CHKPNT`, as the job's user (or lsf.sudoers'
    /// `LSF_EEXEC_USER`), with the methods' environment and, on its standard input, what
    /// the submission's esubs printed.
    fn start_eexec(&self, path: &Path) -> Result<Program, String> {
        let ident = match crate::sudoers::setting("LSF_EEXEC_USER") {
            Some(name) => super::launch::hook_identity(&name, &self.launch.host)?,
            None => self
                .ident
                .clone()
                .ok_or_else(|| "eexec: the job's user is not known".to_owned())?,
        };
        let mut env = method::method_env(&self.spec, &self.launch, &ident, false);
        env.push(("LS_EXEC_T".to_owned(), "CHKPNT".to_owned()));
        env.push((
            "BASALT_EEXEC_INPUT".to_owned(),
            self.spec.eexec_input.clone(),
        ));
        let run = Run {
            argv: vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                "printf '%s' \"$BASALT_EEXEC_INPUT\" | (unset BASALT_EEXEC_INPUT; exec \"$0\")"
                    .to_owned(),
                path.to_string_lossy().into_owned(),
            ],
            env,
            cwd: self.method_cwd(),
            output: method::Output::Capture,
            umask: super::launch::job_umask(&self.spec),
        };
        Program::start(
            "eexec".to_owned(),
            method::timeout_secs(&self.launch),
            &ident,
            self.notify.clone(),
            None,
            move || Ok(Some(run)),
        )
    }

    fn start_echkpnt(&self, method: &str, path: &Path, req: Request) -> Result<Program, String> {
        let name = format!("echkpnt.{method}");
        let ident = self
            .ident
            .as_ref()
            .ok_or_else(|| format!("{name}: the job's user is not known"))?;
        let pgid = self.pgid().map_or(0, |p| p.as_raw());
        let dir = &self.spec.chkpnt_dir;
        let (output, kept_err) =
            method::output_for(self.launch.echkpnt_keep_output, dir, "echkpnt");
        let run = Run {
            argv: method::echkpnt_argv(path, req.force, req.kill, dir, pgid),
            env: method::method_env(&self.spec, &self.launch, ident, req.migrate),
            cwd: self.method_cwd(),
            output,
            umask: super::launch::job_umask(&self.spec),
        };
        Program::start(
            name,
            method::timeout_secs(&self.launch),
            ident,
            self.notify.clone(),
            kept_err,
            move || Ok(Some(run)),
        )
    }

    /// The built-in method: remove `chkpnt.done`, signal the job (and continue it when
    /// stopped, so that it can act on the signal).
    fn start_builtin(&mut self) -> Result<How, String> {
        let signal = match parse_signal(self.launch.chkpnt_signal.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("{e}; SIGWINCH is used");
                Signal::SIGWINCH
            }
        };
        let done = Path::new(&self.spec.chkpnt_dir).join(DONE_FILE);
        match std::fs::remove_file(&done) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", done.display())),
        }
        self.signal_group(signal);
        if self.stopped {
            self.signal_group(Signal::SIGCONT);
        }
        let timeout_secs = method::timeout_secs(&self.launch);
        Ok(How::Builtin {
            signal,
            done,
            until: Instant::now() + Duration::from_secs(timeout_secs),
            timeout_secs,
            stopped: self.stopped,
        })
    }

    /// While the job runs: where the checkpoint is; returns when to look again.
    pub(super) fn chkpnt_tick(&mut self, now: Instant) -> Option<Instant> {
        let c = self.chkpnt.as_mut()?;
        let (pid, result) = match &mut c.how {
            How::Eexec(p) => match p.poll(now) {
                Poll::Pending(t) => return Some(t),
                Poll::Done(r) => {
                    if let Err(e) = r {
                        tracing::info!(job = self.key.0, "eexec (CHKPNT): {e}");
                    }
                    let req = c.req;
                    return match self.start_method(req) {
                        Ok(how) => {
                            if let Some(c) = self.chkpnt.as_mut() {
                                c.how = how;
                            }
                            Some(now)
                        }
                        Err(why) => {
                            self.chkpnt_finish(0, Err(why), false);
                            None
                        }
                    };
                }
            },
            How::Program(p) => match p.poll(now) {
                Poll::Pending(t) => return Some(t),
                Poll::Done(r) => (p.pid(), r),
            },
            How::Builtin {
                signal,
                done,
                until,
                timeout_secs,
                ..
            } => {
                if done.exists() {
                    (0, Ok(()))
                } else if now >= *until {
                    let message = format!(
                        "the job did not write {} within {timeout_secs} s of {}",
                        done.display(),
                        signal.as_str()
                    );
                    (0, Err(message))
                } else {
                    return Some((now + DONE_POLL).min(*until));
                }
            }
        };
        self.chkpnt_finish(pid, result, false);
        None
    }

    /// The job's top process ended: the checkpoint under way ends before the job's end
    /// is recorded (an echkpnt still running is waited for, within its time). Returns
    /// when to look again while it runs.
    pub(super) fn chkpnt_at_end(&mut self, now: Instant) -> Option<Instant> {
        let c = self.chkpnt.as_mut()?;
        let (pid, result) = match &mut c.how {
            How::Eexec(p) => {
                p.kill();
                (
                    0,
                    Err("the job ended before its checkpoint started".to_owned()),
                )
            }
            How::Program(p) => match p.poll(now) {
                Poll::Pending(t) => return Some(t),
                Poll::Done(r) => (p.pid(), r),
            },
            How::Builtin { done, .. } => {
                if done.exists() {
                    (0, Ok(()))
                } else {
                    (
                        0,
                        Err("the job ended before writing its checkpoint".to_owned()),
                    )
                }
            }
        };
        self.chkpnt_finish(pid, result, true);
        None
    }

    /// The checkpoint ended: put a stopped job back as it was, record the outcome, and
    /// kill the job when asked to and it succeeded.
    fn chkpnt_finish(&mut self, pid: u32, result: Result<(), String>, ended: bool) {
        let Some(c) = self.chkpnt.take() else { return };
        let kill = c.req.kill && result.is_ok();
        if let How::Builtin { stopped: true, .. } = c.how
            && !kill
            && !ended
        {
            self.signal_group(Signal::SIGSTOP);
        }
        match &result {
            Ok(()) => tracing::info!(job = self.key.0, idx = self.key.1, "checkpointed"),
            Err(e) => tracing::warn!(job = self.key.0, idx = self.key.1, "checkpoint failed: {e}"),
        }
        self.chkpnt_outcome(pid, result);
        if kill {
            if ended {
                // (echkpnt -k killed it.)
                if self.term_reason.is_none() {
                    self.term_reason = Some("TERM_CHKPNT".to_owned());
                }
            } else {
                let ti = self.launch.terminate_interval;
                self.start_kill(ti, "TERM_CHKPNT");
            }
        }
    }

    /// Record a checkpoint's outcome (a CHKPNT report).
    pub(super) fn chkpnt_outcome(&mut self, pid: u32, result: Result<(), String>) {
        let (chkpnt_ok, message) = match result {
            Ok(()) => (true, String::new()),
            Err(m) => (false, m),
        };
        self.emit(Event {
            kind: EventKind::Chkpnt,
            pid,
            chkpnt_ok,
            message,
            ..Default::default()
        });
    }

    /// Is `pid` the echkpnt process? Then take its end.
    pub(super) fn chkpnt_reaped(&mut self, pid: nix::unistd::Pid, raw: i32) -> bool {
        match self.chkpnt.as_mut().map(|c| &mut c.how) {
            Some(How::Program(p) | How::Eexec(p)) if p.owns(pid) => {
                p.reaped(raw);
                true
            }
            _ => false,
        }
    }

    /// Does the checkpoint own process `pid`, or may it own one not known yet?
    pub(super) fn chkpnt_owns(&self, pid: Option<nix::unistd::Pid>) -> bool {
        match self.chkpnt.as_deref().map(|c| &c.how) {
            Some(How::Program(p) | How::Eexec(p)) => match pid {
                Some(pid) => p.owns(pid),
                None => p.starting(),
            },
            _ => false,
        }
    }
}
