//! The supervisor's loop while the job's top process runs: reaping, usage samples,
//! the run limit and whole-job memory/CPU limits, and killing what is left at the end.

use super::limits::{limit, limit_value};
use super::usage;
use super::{Supervisor, now_secs};
use crate::state::{Event, EventKind};
use basalt_core::job::status as jstat;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use nix::sys::signalfd::SignalFd;
use nix::unistd::Pid;
use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

impl Supervisor {
    pub(super) fn sample(&mut self) {
        let Some(sid) = self.job else { return };
        let mut s = usage::sample_session(sid.as_raw());
        if let Ok(ru) = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        {
            s.utime += tv_secs(ru.user_time());
            s.stime += tv_secs(ru.system_time());
        }
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

    /// The loop while the job's top process runs.
    pub(super) fn supervise(&mut self, sigfd: &SignalFd, listener: &UnixListener) {
        let run_limit = limit_value(&self.spec, limit::RUN).map(Duration::from_secs);
        loop {
            self.reap();
            if self.main_status.is_some() {
                return;
            }
            let now = Instant::now();
            let deadline_next = self.check_deadline(now_secs(), now);
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
            if let Some(lim) = run_limit
                && self.running_since.is_some()
            {
                let left = lim.saturating_sub(self.run_time());
                wake_at = wake_at.min(Instant::now() + left);
            }
            let ms = wake_at
                .saturating_duration_since(Instant::now())
                .as_millis()
                .clamp(1, 60_000) as u16;
            let (sig_ready, conn_ready) = {
                let mut fds = [
                    PollFd::new(sigfd.as_fd(), PollFlags::POLLIN),
                    PollFd::new(listener.as_fd(), PollFlags::POLLIN),
                ];
                let _ = nix::poll::poll(&mut fds, PollTimeout::from(ms));
                (fds[0].any().unwrap_or(false), fds[1].any().unwrap_or(false))
            };
            if sig_ready {
                while let Ok(Some(_)) = sigfd.read_signal() {}
            }
            if conn_ready {
                while let Ok((stream, _)) = listener.accept() {
                    self.serve_one(stream);
                }
            }
        }
    }

    /// Kill whatever is left of the job: its process group, its session, and any
    /// other process reparented to us.
    ///
    /// Every process of the job descends from this supervisor (the job's top process
    /// is its child, and it is a child subreaper, so orphans come back to it): when it
    /// has no child left once the top process is reaped, nothing is left of the job,
    /// and the walk over every process in `/proc` (its session) is skipped.
    pub(super) fn kill_leftovers(&mut self, sigfd: &SignalFd) {
        let Some(g) = self.job else { return };
        let _ = nix::sys::signal::killpg(g, Signal::SIGKILL);
        self.reap();
        if own_children().is_empty() {
            return;
        }
        for pid in usage::sample_session(g.as_raw()).pids {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        for pid in own_children() {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        // Reap them (bounded).
        let end = Instant::now() + Duration::from_secs(2);
        while Instant::now() < end {
            self.reap();
            if own_children().is_empty() {
                break;
            }
            let mut fds = [PollFd::new(sigfd.as_fd(), PollFlags::POLLIN)];
            let _ = nix::poll::poll(&mut fds, PollTimeout::from(50u16));
            while let Ok(Some(_)) = sigfd.read_signal() {}
        }
    }
}

pub(super) fn tv_secs(tv: nix::sys::time::TimeVal) -> f64 {
    tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6
}

/// Direct children of this process (from `/proc/self/task/*/children`).
fn own_children() -> Vec<i32> {
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
