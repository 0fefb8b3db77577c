//! Restarting a job from its checkpoint (`JobSpec.restart`: brestart, or a migrated
//! checkpointable job): after its pre-execution commands and before its own command, as
//! the job's user, the checkpoint directory of the job restarted (`restart_from_dir`)
//! is moved to the job's (`chkpnt_dir`, when that does not exist yet; brestart gives the
//! job a new id), then `erestart.<method> [-f] <chkpnt_dir>` runs
//! ([`super::method`]; the built-in `default` only checks that `chkpnt.done` is there).
//! When it fails the job does not run: its `start_failed` event is marked
//! `restart_failed` (mbatchd puts the job back to PEND). When it succeeds the job's top
//! process runs `LSB_RESTART_CMD` of `<chkpnt_dir>/.restart_cmd` (written by erestart)
//! with `/bin/sh -c`, else the job file again (the job sees `LSB_RESTART=Y`). A job
//! killed while erestart runs (its `ctl` socket is served meanwhile) does not run: erestart
//! is killed and the job's start fails (not marked `restart_failed`).

use super::chkpnt::DONE_FILE;
use super::env::chkpnt_method;
use super::method::{self, Method, Poll, Program, Run};
use super::{At, Phase, Supervisor};
use crate::state::{Event, EventKind};
use std::path::Path;
use std::time::Instant;

/// The file an erestart may write, with a line `LSB_RESTART_CMD=<command>`.
pub(super) const RESTART_CMD_FILE: &str = ".restart_cmd";

/// The command of a `.restart_cmd` text: its line `LSB_RESTART_CMD=<command>` (the
/// first one; quotes around the whole command are removed), None when it has none or
/// an empty one.
pub(super) fn restart_cmd(text: &str) -> Option<String> {
    let v = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("LSB_RESTART_CMD="))?
        .trim();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| {
            v.strip_prefix(*q)
                .and_then(|r| r.strip_suffix(*q))
                .filter(|r| !r.contains(*q))
        })
        .unwrap_or(v)
        .trim();
    (!unquoted.is_empty()).then(|| unquoted.to_owned())
}

/// The restart command in `<dir>/.restart_cmd`, read as the user (by the job's
/// launcher).
pub(super) fn read_restart_cmd(dir: &str) -> Option<String> {
    std::fs::read_to_string(Path::new(dir).join(RESTART_CMD_FILE))
        .ok()
        .and_then(|t| restart_cmd(&t))
}

/// As the user: move the checkpoint of the job restarted to this job's directory when
/// this one does not exist yet, leaving a symbolic link to it in its place (LSF: job 123
/// restarted as 456 has `dir/456` and `dir/123 -> dir/456`); the checkpoint directory
/// must then be there.
fn move_checkpoint(from: &str, dir: &str) -> Result<(), String> {
    let to = Path::new(dir);
    if !from.is_empty() && Path::new(from) != to && !to.exists() {
        if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::rename(from, to)
            .map_err(|e| format!("cannot move the checkpoint {from} to {dir}: {e}"))?;
        // As LSF: the old job's directory name stays, a symbolic link to the new one
        // (not having it takes nothing from the restart).
        let _ = std::os::unix::fs::symlink(to, from);
    }
    if !to.is_dir() {
        return Err(format!("no checkpoint directory {dir}"));
    }
    Ok(())
}

impl Supervisor {
    /// What follows the pre-execution commands: the restart, or the job itself.
    pub(super) fn main_step(&self) -> At {
        if self.spec.restart && !self.spec.chkpnt_dir.is_empty() {
            At::Restart
        } else {
            At::Job
        }
    }

    /// Start the restart: a thread moves the checkpoint and runs erestart as the user.
    pub(super) fn start_restart(&mut self) {
        let method = chkpnt_method(&self.spec).to_owned();
        let name = format!("erestart.{method}");
        let found = method::find("erestart", &method, &self.launch);
        if let Method::Missing(why) = found {
            return self.restart_failed(why);
        }
        let Some(ident) = self.ident.clone() else {
            return self.restart_failed(format!("{name}: the job's user is not known"));
        };
        let spec = &self.spec;
        let dir = spec.chkpnt_dir.clone();
        let from = spec.restart_from_dir.clone();
        let (output, kept_err) =
            method::output_for(self.launch.echkpnt_keep_output, &dir, "erestart");
        let run = match &found {
            Method::Program(path) => Some(Run {
                argv: method::erestart_argv(path, spec.restart_force, &dir),
                env: method::method_env(spec, &self.launch, &ident, false),
                cwd: crate::paths::job_cwd(
                    &spec.spec_cwd,
                    &spec.sub_cwd,
                    &ident.home,
                    spec.job_id,
                    spec.idx,
                ),
                output,
                umask: super::launch::job_umask(spec),
            }),
            _ => None,
        };
        let work = move || {
            move_checkpoint(&from, &dir)?;
            match run {
                Some(run) => Ok(Some(run)),
                None if Path::new(&dir).join(DONE_FILE).exists() => Ok(None),
                None => Err(format!("no checkpoint in {dir} ({DONE_FILE} is missing)")),
            }
        };
        let timeout = method::timeout_secs(&self.launch);
        match Program::start(name, timeout, &ident, self.notify.clone(), kept_err, work) {
            Ok(p) => {
                tracing::info!(
                    job = self.key.0,
                    idx = self.key.1,
                    "restarting from {} (method {method})",
                    self.spec.chkpnt_dir
                );
                self.restart = Some(p);
                self.phase = Phase::Restarting;
            }
            Err(why) => self.restart_failed(why),
        }
    }

    /// While the restart runs; returns when to look again (None: it ended, the job
    /// moved on).
    pub(super) fn restart_tick(&mut self, now: Instant) -> Option<Instant> {
        if self.kill_deadline.is_some() {
            // Killed (bkill) while restarting: erestart goes, and the job never runs
            // (a start failure not marked `restart_failed`: mbatchd ends the job).
            if let Some(p) = self.restart.take() {
                p.kill();
            }
            let reason = self.term_reason.clone().unwrap_or_else(|| "-".to_owned());
            self.start_failed(format!(
                "the job was killed ({reason}) while restarting from its checkpoint"
            ));
            return None;
        }
        let result = match self.restart.as_mut().map(|p| p.poll(now)) {
            Some(Poll::Pending(t)) => return Some(t),
            Some(Poll::Done(r)) => r,
            None => Ok(()),
        };
        self.restart = None;
        match result {
            Ok(()) => {
                self.at = At::Job;
                self.launch_step();
            }
            Err(why) => self.restart_failed(why),
        }
        None
    }

    /// The restart failed: the job does not run (mbatchd puts it back to PEND).
    fn restart_failed(&mut self, message: String) {
        tracing::warn!(
            job = self.key.0,
            idx = self.key.1,
            "restart failed: {message}"
        );
        self.close_ctl();
        self.emit(Event {
            kind: EventKind::StartFailed,
            message,
            restart_failed: true,
            ..Default::default()
        });
        self.phase = Phase::Ending;
    }

    /// Is `pid` the erestart process? Then take its end.
    pub(super) fn restart_reaped(&mut self, pid: nix::unistd::Pid, raw: i32) -> bool {
        match self.restart.as_mut() {
            Some(p) if p.owns(pid) => {
                p.reaped(raw);
                true
            }
            _ => false,
        }
    }

    /// Does the restart own process `pid`, or may it own one not known yet?
    pub(super) fn restart_owns(&self, pid: Option<nix::unistd::Pid>) -> bool {
        match (&self.restart, pid) {
            (Some(p), Some(pid)) => p.owns(pid),
            (Some(p), None) => p.starting(),
            _ => false,
        }
    }
}
