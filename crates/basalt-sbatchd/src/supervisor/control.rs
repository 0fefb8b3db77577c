//! What the supervisor does when told: the `ctl` socket's commands (kill, stop,
//! resume, signal, reason, limits, checkpoint), the queue's `JOB_CONTROLS` actions, the kill sequence and
//! the termination time of `bsub -t`.

use super::launch::resolve_identity;
use super::{DEADLINE_GRACE, Supervisor};
use crate::state::{Event, EventKind};
use basalt_core::job::status as jstat;
use nix::sys::signal::Signal;
use std::io::{BufRead, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Where a job is with its termination time.
#[derive(Debug, Default)]
pub(super) struct Deadline {
    /// SIGUSR2 was sent.
    pub(super) signalled: bool,
}

/// A `JOB_CONTROLS` action: a signal, or a command.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Control {
    Signal(Signal),
    Command(String),
}

impl Control {
    /// `SIGTSTP`, `TSTP` or a number is a signal; anything else a command.
    pub(super) fn parse(v: &str) -> Control {
        let single = !v.contains(char::is_whitespace);
        match basalt_core::job::signal_number(v)
            .filter(|_| single)
            .and_then(|n| Signal::try_from(n).ok())
        {
            Some(sig) => Control::Signal(sig),
            None => Control::Command(v.to_owned()),
        }
    }
}

impl Supervisor {
    /// The kill sequence: SIGINT and SIGTERM now (SIGCONT too if stopped, so they
    /// are acted on), SIGKILL after `interval` seconds. A repeated kill keeps the
    /// earlier deadline unless the new one is sooner.
    pub(super) fn start_kill(&mut self, interval: u32, reason: &str) {
        if self.term_reason.is_none() && !reason.is_empty() && reason != "-" {
            self.term_reason = Some(reason.to_owned());
        }
        let deadline = Instant::now() + Duration::from_secs(u64::from(interval));
        match self.kill_deadline {
            Some(d) if d <= deadline => return,
            Some(_) => {
                self.kill_deadline = Some(deadline);
            }
            None => {
                if self.stopped {
                    self.signal_group(Signal::SIGCONT);
                }
                match self.job_control("TERMINATE") {
                    Some(c) => self.run_control(&c, 0, 0),
                    None => {
                        self.signal_group(Signal::SIGINT);
                        self.signal_group(Signal::SIGTERM);
                    }
                }
                self.kill_deadline = Some(deadline);
            }
        }
        if interval == 0 {
            self.signal_group(Signal::SIGKILL);
        }
    }

    /// A process of the job (a pre-execution command, or the job itself) that its
    /// launcher started after a kill came (nothing could be signalled then): it gets
    /// the kill sequence's first signals now; SIGKILL follows at the kill's deadline.
    pub(super) fn kill_newcomer(&mut self) {
        if self.kill_deadline.is_none() {
            return;
        }
        match self.job_control("TERMINATE") {
            Some(c) => self.run_control(&c, 0, 0),
            None => {
                self.signal_group(Signal::SIGINT);
                self.signal_group(Signal::SIGTERM);
            }
        }
    }

    /// The queue's `JOB_CONTROLS` action for `SUSPEND`, `RESUME` or `TERMINATE`.
    pub(super) fn job_control(&self, action: &str) -> Option<Control> {
        let v = self.spec.job_controls.get(action)?.trim();
        if v.is_empty() {
            return None;
        }
        Some(Control::parse(v))
    }

    /// Carry out a `JOB_CONTROLS` action: a signal to the job's process group, or a
    /// command run with `/bin/sh -c` as the job's user, with LSF's `LSB_JOBPGIDS`,
    /// `LSB_JOBPIDS`, `LSB_JOBID`, `LSB_SUSP_REASONS` and `LSB_SUSP_SUBREASONS`. The
    /// command runs in the background (reaped with the supervisor's other children).
    pub(super) fn run_control(&mut self, c: &Control, reasons: u32, subreasons: u32) {
        match c {
            Control::Signal(sig) => self.signal_group(*sig),
            Control::Command(cmd) => {
                use std::os::unix::process::CommandExt;
                let pgid = self.pgid().map_or(0, |p| p.as_raw());
                let pids = self
                    .tracker
                    .last
                    .pids
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut command = std::process::Command::new("/bin/sh");
                command
                    .arg("-c")
                    .arg(cmd)
                    .env("LSB_JOBPGIDS", pgid.to_string())
                    .env(
                        "LSB_JOBPIDS",
                        if pids.is_empty() {
                            pgid.to_string()
                        } else {
                            pids
                        },
                    )
                    .env("LSB_JOBID", self.key.0.to_string())
                    .env("LSB_JOBINDEX", self.key.1.to_string())
                    .env("LSB_SUSP_REASONS", reasons.to_string())
                    .env("LSB_SUSP_SUBREASONS", subreasons.to_string())
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                match resolve_identity(&self.spec, &self.launch) {
                    Ok(ident) => {
                        if ident.switch {
                            command.uid(ident.uid.as_raw()).gid(ident.gid.as_raw());
                        }
                        if !ident.home.is_empty() {
                            command.current_dir(&ident.home).env("HOME", &ident.home);
                        }
                        command.env("USER", &ident.name);
                    }
                    Err(e) => {
                        tracing::warn!("job control `{cmd}`: {e}; not run");
                        return;
                    }
                }
                match command.spawn() {
                    // Reaped with the supervisor's other children; its usage is the job's.
                    Ok(child) => self
                        .commands
                        .push(nix::unistd::Pid::from_raw(child.id() as i32)),
                    Err(e) => tracing::warn!("job control `{cmd}`: {e}"),
                }
            }
        }
    }

    pub(super) fn stop(&mut self, state: u32, reasons: u32, subreasons: u32) {
        match self.job_control("SUSPEND") {
            Some(c) => self.run_control(&c, reasons, subreasons),
            None => self.signal_group(Signal::SIGSTOP),
        }
        self.run_clock.stop(Instant::now());
        self.stopped = true;
        let state = if state == 0 { jstat::USUSP } else { state };
        let reasons = if reasons == 0 && state == jstat::USUSP {
            basalt_core::job::susp::USER_STOP
        } else {
            reasons
        };
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
            kind: EventKind::State,
            pid,
            pgid: pid,
            state,
            reasons,
            subreasons,
            ..Default::default()
        });
    }

    pub(super) fn resume(&mut self) {
        match self.job_control("RESUME") {
            Some(c) => self.run_control(&c, 0, 0),
            None => self.signal_group(Signal::SIGCONT),
        }
        self.run_clock.start(Instant::now());
        self.stopped = false;
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
            kind: EventKind::State,
            pid,
            pgid: pid,
            state: jstat::RUN,
            ..Default::default()
        });
    }

    /// One control command; returns the reply line.
    pub(super) fn command(&mut self, line: &str) -> String {
        let mut it = line.split_whitespace();
        let verb = it.next().unwrap_or("");
        let mut num =
            |default: u32| -> u32 { it.next().and_then(|v| v.parse().ok()).unwrap_or(default) };
        match verb {
            "PING" => "OK\n".to_owned(),
            "KILL" => {
                let interval = num(10);
                let reason = line.split_whitespace().nth(2).unwrap_or("-").to_owned();
                self.start_kill(interval, &reason);
                "OK\n".to_owned()
            }
            "STOP" => {
                let state = num(jstat::USUSP);
                let reasons = num(0);
                let subreasons = num(0);
                self.stop(state, reasons, subreasons);
                "OK\n".to_owned()
            }
            "RESUME" => {
                self.resume();
                "OK\n".to_owned()
            }
            "LIMITS" => {
                let values: Vec<i64> = line
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|v| v.parse().ok())
                    .collect();
                match <[i64; 11]>::try_from(values) {
                    Ok(l) => {
                        self.set_limits(l);
                        "OK\n".to_owned()
                    }
                    Err(_) => "ERR LIMITS takes 11 numbers\n".to_owned(),
                }
            }
            "CHKPNT" => {
                // The outcome comes later, as a `chkpnt` event.
                let req = super::chkpnt::Request::parse(line.split_whitespace().skip(1));
                self.chkpnt_request(req);
                "OK\n".to_owned()
            }
            "REASON" => {
                // Still suspended, for another reason (sbatchd's load policy).
                let state = num(jstat::SSUSP);
                let reasons = num(0);
                let subreasons = num(0);
                if self.stopped {
                    let pid = self.job.map_or(0, |p| p.as_raw() as u32);
                    self.emit(Event {
                        kind: EventKind::State,
                        pid,
                        pgid: pid,
                        state,
                        reasons,
                        subreasons,
                        ..Default::default()
                    });
                }
                "OK\n".to_owned()
            }
            "SIG" => {
                let n = num(0) as i32;
                match Signal::try_from(n) {
                    Ok(Signal::SIGSTOP) | Ok(Signal::SIGTSTP) => {
                        self.stop(jstat::USUSP, basalt_core::job::susp::USER_STOP, 0);
                        "OK\n".to_owned()
                    }
                    Ok(Signal::SIGCONT) => {
                        self.resume();
                        "OK\n".to_owned()
                    }
                    Ok(sig) => {
                        self.signal_group(sig);
                        "OK\n".to_owned()
                    }
                    Err(_) => format!("ERR invalid signal {n}\n"),
                }
            }
            _ => format!("ERR unknown command {verb}\n"),
        }
    }

    pub(super) fn serve_one(&mut self, stream: UnixStream) {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let mut line = String::new();
        let mut reader = std::io::BufReader::new((&stream).take(1024));
        if reader.read_line(&mut line).is_err() || line.is_empty() {
            return;
        }
        if let Some(user) = line.trim().strip_prefix("ATTACH ") {
            return self.attach(&stream, user.trim());
        }
        let reply = self.command(line.trim());
        let _ = (&stream).write_all(reply.as_bytes());
    }

    /// bsub -t: at the termination time the job gets SIGUSR2; if it still runs
    /// [`DEADLINE_GRACE`] later, the kill sequence ends it (TERM_DEADLINE). Returns when
    /// this should be looked at next.
    pub(super) fn check_deadline(&mut self, now_epoch: i64, now: Instant) -> Option<Instant> {
        let term = self.spec.term_time;
        if term <= 0 || self.kill_deadline.is_some() {
            return None;
        }
        let at =
            |epoch: i64| now + Duration::from_secs(epoch.saturating_sub(now_epoch).max(0) as u64);
        if now_epoch < term {
            return Some(at(term));
        }
        if !self.deadline.signalled {
            self.deadline.signalled = true;
            if self.term_reason.is_none() {
                self.term_reason = Some("TERM_DEADLINE".to_owned());
            }
            self.signal_group(Signal::SIGUSR2);
        }
        let kill_at = term.saturating_add(DEADLINE_GRACE.as_secs() as i64);
        if now_epoch >= kill_at {
            let ti = self.launch.terminate_interval;
            self.start_kill(ti, "TERM_DEADLINE");
            return None;
        }
        Some(at(kill_at))
    }
}
