//! A job's life in the owner's table: StartJob, adoption of a job found at start,
//! its supervisor's events, mbatchd's acknowledgements and hello lists, and its
//! removal once everything is acknowledged.

use super::tasks::{Adopted, launch, record_and_hand_over, record_end, watch_events};
use super::{Key, Owner, RECENT_KEEP, to_report};
use crate::db::StoredJob;
use crate::state::{self, Event, EventKind, SupervisorId};
use basalt_core::job::status as jstat;
use basalt_proto::mbatchd::{AckKind, ReportKind, SbdJob};
use basalt_proto::sbatchd::JobSpec;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::oneshot;
use tonic::Status;
use tracing::{Instrument, debug, info, warn};

impl Owner {
    pub(super) fn start(
        &mut self,
        spec: JobSpec,
        reply: oneshot::Sender<Result<(u32, u32), Status>>,
    ) {
        let key = (spec.job_id, spec.idx, spec.attempt);
        if let Some(job) = self.jobs.get_mut(&key) {
            if let Some(e) = &job.start_error {
                let _ = reply.send(Err(Status::aborted(e.clone())));
            } else if job.pid != 0 {
                let _ = reply.send(Ok((job.pid, job.pgid)));
            } else {
                job.waiters.push(reply);
            }
            return;
        }
        if let Some((answer, _)) = self.recent.get(&key) {
            let _ = reply.send(answer.clone().map_err(Status::aborted));
            return;
        }
        // A newer attempt replaces an older copy still running here.
        let stale: Vec<Key> = self
            .jobs
            .iter()
            .filter(|(k, j)| k.0 == key.0 && k.1 == key.1 && k.2 < key.2 && j.running())
            .map(|(k, _)| *k)
            .collect();
        for k in stale {
            info!(
                "job {}[{}]: attempt {} replaces attempt {}; killing the old one",
                k.0, k.1, key.2, k.2
            );
            self.send_ctl(k, "KILL 0 -".to_owned(), None);
        }
        let ctl = state::ctl_socket(&self.shared.state_root, key);
        let job_file = spec.job_file.clone();
        let mut light = spec;
        light.job_file = Vec::new();
        let full = Arc::new(JobSpec {
            job_file,
            ..light.clone()
        });
        // On its way to the database's and the supervisor's threads first; the rest
        // (the log line among it) while they work.
        let recorded = record_and_hand_over(&self.shared, &self.db, key, full);
        info!(
            "job {} idx {} attempt {}: starting as user {}",
            key.0, key.1, key.2, light.user
        );
        let job = self.new_job(key, Arc::new(light), ctl);
        job.waiters.push(reply);
        let shared = self.shared.clone();
        let tx = self.tx.clone();
        let db = self.db.clone();
        tokio::spawn(launch(shared, db, tx, key, recorded).in_current_span());
    }

    /// Take over a job found in the database when sbatchd starts: resend what
    /// mbatchd has not acknowledged, and follow the supervisor if it still runs.
    pub(super) fn adopt(&mut self, f: StoredJob) {
        let key = f.key;
        let final_seq = f.events.iter().find(|e| e.kind.is_final()).map(|e| e.seq);
        let alive = f.supervisor.as_ref().is_some_and(SupervisorId::alive);
        // Of this boot: its supervisor's boot id says so, or (none recorded) the row
        // was written after the machine booted.
        let this_boot = match &f.supervisor {
            Some(s) => s.boot == state::boot_id(),
            None => procfs::boot_time_secs()
                .ok()
                .and_then(|b| i64::try_from(b).ok())
                .is_none_or(|booted| f.created >= booted),
        };
        info!(
            "job {} idx {} attempt {}: re-adopted ({}; {} event(s), {} acknowledged{})",
            key.0,
            key.1,
            key.2,
            if final_seq.is_some() {
                "finished"
            } else if alive {
                "supervisor alive"
            } else if f.supervisor.is_none() {
                "supervisor not recorded"
            } else {
                "supervisor gone"
            },
            f.last_seq,
            f.acked_seq,
            if f.abandoned {
                "; mbatchd does not know it"
            } else {
                ""
            }
        );
        let mut light = f.spec;
        light.job_file = Vec::new();
        // A job started by an older sbatchd has its socket in its own directory.
        let legacy = state::legacy_job_dir(&self.shared.state_root, key).join(state::CTL_SOCKET);
        let ctl = if legacy.exists() {
            legacy
        } else {
            state::ctl_socket(&self.shared.state_root, key)
        };
        let job = self.new_job(key, Arc::new(light), ctl);
        job.acked_seq = f.acked_seq;
        job.this_boot = this_boot;
        job.final_acked = final_seq.is_some_and(|s| s <= f.acked_seq);
        if f.abandoned {
            job.reports = None;
        }
        self.events(key, f.events);
        if let Some(job) = self.jobs.get_mut(&key)
            && job.last_seq < f.last_seq
        {
            // Pruned (acknowledged usage) events keep their numbers.
            job.last_seq = f.last_seq;
        }
        if final_seq.is_some() {
            self.watcher_done(key, true);
        } else if alive || (f.supervisor.is_none() && this_boot) {
            let tx = self.tx.clone();
            let db = self.db.clone();
            let last = f.last_seq;
            tokio::spawn(
                watch_events(db, tx, key, None, Adopted::Known(f.supervisor), last)
                    .in_current_span(),
            );
        } else {
            self.watcher_done(key, false);
        }
    }

    pub(super) fn events(&mut self, key: Key, events: Vec<Event>) {
        let host = self.shared.host.clone();
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        for ev in events {
            if ev.seq <= job.last_seq {
                continue;
            }
            job.last_seq = ev.seq;
            match ev.kind {
                EventKind::Started => {
                    job.pid = ev.pid;
                    job.pgid = ev.pgid;
                    job.state = jstat::RUN;
                    job.start_ms = ev.time.saturating_mul(1000);
                    for w in job.waiters.drain(..) {
                        let _ = w.send(Ok((ev.pid, ev.pgid)));
                    }
                }
                EventKind::Executing => {
                    job.out_path = ev.out_path.clone();
                    job.exec_uid = Some(ev.exec_uid);
                    if job.pid == 0 {
                        job.pid = ev.pid;
                        job.pgid = ev.pgid;
                    }
                }
                EventKind::Rusage => job.last_usage = Some(ev.clone()),
                EventKind::State => {
                    job.state = ev.state;
                    job.reasons = ev.reasons;
                    job.subreasons = ev.subreasons;
                }
                EventKind::Finished => {
                    job.state = ev.state;
                    job.final_seen = true;
                    info!(
                        "job {} idx {} attempt {}: finished, wait status {}{}",
                        key.0,
                        key.1,
                        key.2,
                        ev.exit_status,
                        if ev.term_reason.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", ev.term_reason)
                        }
                    );
                }
                EventKind::Ended => {
                    job.state = ev.state;
                    job.post_after_end = true;
                    info!(
                        "job {} idx {} attempt {}: ended, wait status {}; post-execution commands run",
                        key.0, key.1, key.2, ev.exit_status
                    );
                }
                EventKind::PostExec => {
                    job.final_seen = true;
                    info!(
                        "job {} idx {} attempt {}: post-execution commands done, wait status {}",
                        key.0,
                        key.1,
                        key.2,
                        ev.post_exec.unwrap_or(0)
                    );
                }
                EventKind::Chkpnt => {
                    if ev.chkpnt_ok {
                        info!(
                            "job {} idx {} attempt {}: checkpointed",
                            key.0, key.1, key.2
                        );
                    } else {
                        warn!(
                            "job {} idx {} attempt {}: checkpoint failed: {}",
                            key.0, key.1, key.2, ev.message
                        );
                    }
                }
                EventKind::StartFailed => {
                    job.final_seen = true;
                    job.state = jstat::EXIT;
                    warn!(
                        "job {} idx {} attempt {}: could not start: {}",
                        key.0, key.1, key.2, ev.message
                    );
                    job.start_error = Some(ev.message.clone());
                    for w in job.waiters.drain(..) {
                        let _ = w.send(Err(Status::aborted(ev.message.clone())));
                    }
                }
            }
            if ev.seq > job.acked_seq
                && let Some(r) = &job.reports
            {
                let _ = r.send(to_report(&host, key, &ev));
            }
        }
    }

    /// Compare the jobs mbatchd believes run here with ours. A job we run that two
    /// answers in a row do not list (mbatchd removed or requeued it while it could
    /// not reach us, or lost it) and that reports nothing new gets a probe: its
    /// newest acknowledged report again (a usage report, which changes nothing
    /// mbatchd has logged). mbatchd answers NO_JOB or STOP_JOB for a job that must
    /// not run here, and the usual handling kills it; a job it does run is answered
    /// OK and left alone. Jobs mbatchd acknowledged nothing of yet are not asked
    /// about (their start may be in flight).
    pub(super) fn reconcile(&mut self, theirs: &[SbdJob]) {
        let listed: std::collections::BTreeSet<Key> = theirs
            .iter()
            .filter_map(|j| j.id.as_ref().map(|id| (id.job_id, id.idx, j.attempt)))
            .collect();
        let host = self.shared.host.clone();
        for (key, job) in self.jobs.iter_mut() {
            let askable = job.running() && job.acked_seq > 0 && job.reports.is_some();
            if !askable || listed.contains(key) {
                job.unlisted = 0;
                continue;
            }
            job.unlisted += 1;
            if job.unlisted < 2 {
                continue;
            }
            job.unlisted = 0;
            info!(
                "job {} idx {} attempt {}: mbatchd does not list it as running here; asking about it",
                key.0, key.1, key.2
            );
            let probe = Event {
                seq: job.acked_seq,
                kind: EventKind::Rusage,
                time: self.shared.clock.now_secs(),
                pid: job.pid,
                pgid: job.pgid,
                state: job.state,
                ..job.last_usage.clone().unwrap_or_default()
            };
            if let Some(r) = &job.reports {
                let _ = r.send(to_report(&host, *key, &probe));
            }
        }
    }

    pub(super) fn watcher_done(&mut self, key: Key, final_seen: bool) {
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        job.watcher_done = true;
        if !final_seen && !job.final_seen && !job.ending {
            // The supervisor is gone without a final word: kill what may be left of
            // the job (when its processes are of this boot) and record it as killed.
            job.ending = true;
            let ev = if job.post_after_end {
                // Its end is reported; its post-execution commands ended with it.
                warn!(
                    "job {} idx {} attempt {}: its supervisor died during its post-execution commands",
                    key.0, key.1, key.2
                );
                Event {
                    kind: EventKind::PostExec,
                    time: self.shared.clock.now_secs(),
                    state: job.state,
                    post_exec: Some(nix::sys::signal::Signal::SIGKILL as i32),
                    message: "the job's supervisor died".to_owned(),
                    ..Default::default()
                }
            } else if job.pid != 0 {
                if job.this_boot && job.pgid > 1 {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(job.pgid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                warn!(
                    "job {} idx {} attempt {}: its supervisor died; job killed",
                    key.0, key.1, key.2
                );
                Event {
                    kind: EventKind::Finished,
                    time: self.shared.clock.now_secs(),
                    pid: job.pid,
                    pgid: job.pgid,
                    state: jstat::EXIT,
                    exit_status: nix::sys::signal::Signal::SIGKILL as i32,
                    message: "the job's supervisor died".to_owned(),
                    ..Default::default()
                }
            } else {
                Event {
                    kind: EventKind::StartFailed,
                    time: self.shared.clock.now_secs(),
                    message: "the job's supervisor ended before the job started".to_owned(),
                    ..Default::default()
                }
            };
            let (db, tx, last) = (self.db.clone(), self.tx.clone(), job.last_seq);
            let reboot = !job.this_boot;
            tokio::spawn(record_end(db, tx, key, ev, last, reboot).in_current_span());
        }
        self.maybe_remove(key);
    }

    pub(super) fn acked(&mut self, key: Key, seq: u64, kind: ReportKind, ack: AckKind) {
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        // An unspecified kind acknowledges nothing (mbd.rs sends the report again).
        if ack == AckKind::Unspecified {
            return;
        }
        let record_ack = ack != AckKind::NoJob && seq > job.acked_seq;
        if record_ack {
            job.acked_seq = seq;
        }
        match ack {
            AckKind::Unspecified => {}
            AckKind::Ok => {
                if is_final_report(job, kind) {
                    job.final_acked = true;
                }
            }
            AckKind::NoJob => {
                info!(
                    "job {} idx {} attempt {}: mbatchd does not know it; no more reports{}",
                    key.0,
                    key.1,
                    key.2,
                    if job.running() { ", killing it" } else { "" }
                );
                job.reports = None;
                self.db.send("recording NO_JOB", move |db| db.abandon(key));
                if job.running() {
                    self.send_ctl(key, "KILL 0 -".to_owned(), None);
                }
            }
            AckKind::StopJob => {
                if is_final_report(job, kind) {
                    job.final_acked = true;
                }
                if job.running() {
                    info!(
                        "job {} idx {} attempt {}: mbatchd says stop it; killing it",
                        key.0, key.1, key.2
                    );
                    let ti = self.shared.terminate_interval.load(Ordering::SeqCst);
                    self.send_ctl(key, format!("KILL {ti} -"), None);
                }
            }
        }
        // A job about to be forgotten needs no acknowledgement on record: its row goes.
        if record_ack && !self.removable(key) {
            let newest = self.pending_acks.entry(key).or_insert(seq);
            *newest = (*newest).max(seq);
        }
        self.maybe_remove(key);
    }

    /// Whether a job's story is over (see [`Owner::maybe_remove`]).
    fn removable(&self, key: Key) -> bool {
        self.jobs.get(&key).is_some_and(|job| {
            job.final_seen && job.watcher_done && (job.final_acked || job.reports.is_none())
        })
    }

    /// Drop a job whose story is over: the final report acknowledged (or reporting
    /// abandoned after NO_JOB) and its supervisor gone. Its row, events and
    /// directory go too.
    pub(super) fn maybe_remove(&mut self, key: Key) {
        if !self.removable(key) {
            return;
        }
        if let Some(job) = self.jobs.remove(&key) {
            self.pending_acks.remove(&key);
            let now = Instant::now();
            while let Some(&(t, old)) = self.recent_order.front() {
                if now.duration_since(t) < RECENT_KEEP {
                    break;
                }
                self.recent_order.pop_front();
                // A key remembered again later keeps its newer entry.
                if self.recent.get(&old).is_some_and(|(_, at)| *at == t) {
                    self.recent.remove(&old);
                }
            }
            let answer = match job.start_error {
                Some(e) => Err(e),
                None => Ok((job.pid, job.pgid)),
            };
            self.recent.insert(key, (answer, now));
            self.recent_order.push_back((now, key));
            self.pending_removals.push((key, job.ctl));
            if self.pending_removals.len() >= super::REMOVE_BATCH {
                self.flush_removals();
            }
            debug!("job {} idx {} attempt {}: forgotten", key.0, key.1, key.2);
        }
    }
}

/// Is a report of this kind the job's last one? A FINISHED report is, unless the job's
/// post-execution commands run after it (their POST_EXEC report is).
fn is_final_report(job: &super::Job, kind: ReportKind) -> bool {
    match kind {
        ReportKind::Finished => !job.post_after_end,
        ReportKind::StartFailed | ReportKind::PostExec => true,
        _ => false,
    }
}

/// Remove what is left of a forgotten job's control socket: the supervisor removed it
/// when the job's top process ended; this is for one it could not (or an older
/// sbatchd's job directory).
pub(super) fn remove_ctl(ctl: &std::path::Path) {
    let removed = if ctl.file_name().is_some_and(|n| n == state::CTL_SOCKET) {
        match ctl.parent() {
            Some(dir) => std::fs::remove_dir_all(dir),
            None => Ok(()),
        }
    } else {
        std::fs::remove_file(ctl)
    };
    if let Err(e) = removed
        && e.kind() != std::io::ErrorKind::NotFound
    {
        warn!("cannot remove {}: {e}", ctl.display());
    }
}
