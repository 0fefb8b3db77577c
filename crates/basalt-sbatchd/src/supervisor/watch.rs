//! A running job's timers (usage samples, the run limit, whole-job memory/CPU limits,
//! the kill sequence, `bsub -t`) and, at its end, killing what is left of it.

use super::limits::{limit, limit_value};
use super::usage;
use super::{Supervisor, now_secs};
use crate::state::{Event, EventKind};
use basalt_core::job::status as jstat;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::time::{Duration, Instant};

impl Supervisor {
    pub(super) fn sample(&mut self) {
        let Some(sid) = self.job else { return };
        let mut s = usage::sample_session(sid.as_raw());
        let (tasks_u, tasks_s, _) = self.remote_tasks();
        s.utime += self.reaped.utime + tasks_u;
        s.stime += self.reaped.stime + tasks_s;
        self.tracker.add(s);
        let pid = sid.as_raw() as u32;
        if self.tracker.worth_reporting() && self.main_status.is_none() {
            self.tracker.mark_reported();
            let t = &self.tracker;
            let e = Event {
                kind: EventKind::Rusage,
                pid,
                pgid: pid,
                state: if self.stopped { 0 } else { jstat::RUN },
                utime: t.last.utime,
                stime: t.last.stime,
                mem_kb: t.last.mem_kb,
                swap_kb: t.last.swap_kb,
                max_mem_kb: t.max_mem_kb,
                avg_mem_kb: t.avg_mem_kb(),
                pids: t.last.pids.clone(),
                ..Default::default()
            };
            self.emit(e);
        }
        // Whole-job limits sbatchd enforces.
        if self.kill_deadline.is_none() {
            let ti = self.launch.terminate_interval;
            if self.launch.enforce_memlimit
                && let Some(lim) = limit_value(&self.spec, limit::RSS)
                && self.tracker.last.mem_kb > lim
            {
                self.start_kill(ti, "TERM_MEMLIMIT");
            } else if let Some(lim) = limit_value(&self.spec, limit::CPU)
                && self.tracker.last.utime + self.tracker.last.stime > lim as f64
            {
                self.start_kill(ti, "TERM_CPULIMIT");
            }
        }
    }

    /// The timers of a running job; returns when they are next due.
    pub(super) fn running_tick(&mut self, now: Instant) -> Option<Instant> {
        let run_limit = limit_value(&self.spec, limit::RUN).map(Duration::from_secs);
        let deadline_next = self.check_deadline(now_secs(), now);
        let attach_next = self.check_attach(now);
        let chkpnt_next = self.chkpnt_tick(now);
        if let Some(d) = self.kill_deadline
            && now >= d
        {
            self.signal_group(Signal::SIGKILL);
            // Keep killing newcomers every second until the job is gone.
            self.kill_deadline = Some(now + Duration::from_secs(1));
        }
        if let Some(lim) = run_limit
            && self.kill_deadline.is_none()
            && self.run_time() >= lim
        {
            let ti = self.launch.terminate_interval;
            self.start_kill(ti, "TERM_RUNLIMIT");
        }
        if now >= self.next_sample {
            self.sample();
            self.next_sample = Instant::now() + self.sample_every;
        }
        let mut wake_at = self.next_sample;
        if let Some(d) = self.kill_deadline {
            wake_at = wake_at.min(d);
        }
        if let Some(d) = deadline_next {
            wake_at = wake_at.min(d);
        }
        if let Some(d) = attach_next {
            wake_at = wake_at.min(d);
        }
        if let Some(d) = chkpnt_next {
            wake_at = wake_at.min(d);
        }
        if let Some(lim) = run_limit
            && self.run_clock.running()
        {
            let left = lim.saturating_sub(self.run_time());
            wake_at = wake_at.min(now + left);
        }
        Some(wake_at)
    }

    /// Serve the `ctl` connections waiting on the job's socket.
    pub(super) fn serve_ctl(&mut self) {
        loop {
            let accepted = match &self.listener {
                Some(l) => l.accept(),
                None => return,
            };
            match accepted {
                Ok((stream, _)) => self.serve_one(stream),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Kill whatever is left of the job once its top process ended: its process group
    /// and, when a child of the supervisor is still in the job's session, everything
    /// in that session.
    ///
    /// Every process of the job descends from the supervisor (the job's top process is
    /// its child, and it is a child subreaper, so orphans come back to it): when none
    /// of its children is in the job's session once the top process is reaped, nothing
    /// is left there, and the walk over every process in `/proc` is skipped. A process
    /// that left the job's session (`setsid`) is not followed.
    /// Returns whether anything was left (then it is being killed).
    pub(super) fn kill_leftovers(&mut self) -> bool {
        let Some(g) = self.job else { return false };
        let _ = nix::sys::signal::killpg(g, Signal::SIGKILL);
        let left = self.leftover_children();
        if left.is_empty() {
            return false;
        }
        for pid in usage::sample_session(g.as_raw()).pids {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        for pid in left {
            let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
        }
        true
    }

    /// Does a child of the supervisor in the job's session remain?
    pub(super) fn leftovers_remain(&self) -> bool {
        !self.leftover_children().is_empty()
    }

    /// The supervisor's live children in the job's session (not its report helper).
    fn leftover_children(&self) -> Vec<Pid> {
        let Some(g) = self.job else {
            return Vec::new();
        };
        own_children()
            .into_iter()
            .map(Pid::from_raw)
            .filter(|p| Some(*p) != self.helper && session_of(*p) == Some(g.as_raw()))
            .collect()
    }
}

/// The session of a process (None when it is gone or already reaped).
pub(super) fn session_of(pid: Pid) -> Option<i32> {
    let stat = procfs::process::Process::new(pid.as_raw())
        .ok()?
        .stat()
        .ok()?;
    Some(stat.session)
}

/// Direct children of this process (from `/proc/self/task/*/children`).
pub(super) fn own_children() -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}
