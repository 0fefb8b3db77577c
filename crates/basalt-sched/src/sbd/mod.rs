//! What sbatchd and LIM say: host information, answers to dispatches, job reports, orders
//! to sbatchd, and the timers (silence, lost hosts, deadlines, CLEAN_PERIOD, MIG). The
//! hellos and their reconciliation are in [`crate::hello`].

mod report;

use crate::{
    Ack, Effect, Event, Job, JobKey, LimStatus, Millis, Report, ReportKind, SbdAction, Sched, Str,
    TERM_HOST_LOST, UNREACH_AFTER_HELLOS, Usage, secs, state_change,
};
use basalt_core::job::{JobState, KILLED_WAIT_STATUS, exit_reason, pend, status, sub};
use std::collections::BTreeMap;

/// How long (ms) state reports older than mbatchd's own order are ignored at most (a
/// confirmation that never comes does not freeze the job's state).
pub(crate) const AWAIT_CONFIRMATION: Millis = 10_000;

impl Sched {
    /// LIM's view of a host: static info and status, and its current load.
    pub fn lim_update(
        &mut self,
        host: &str,
        ncpus: u32,
        cpu_factor: f64,
        ok: bool,
        load: BTreeMap<String, f64>,
    ) {
        let Some(i) = self.host_idx(host) else {
            return;
        };
        let h = &mut self.hosts[i];
        let lim = if ok {
            LimStatus::Ok
        } else {
            LimStatus::Unavail
        };
        let mut changed = h.lim != lim || (ncpus > 0 && h.ncpus != ncpus);
        h.lim = lim;
        if ncpus > 0 {
            h.ncpus = ncpus;
        }
        h.cpu_factor = cpu_factor;
        h.load = load;
        // A load that crosses a scheduling threshold may let a pending job start.
        let now_ok = self.threshold_view(&self.hosts[i]);
        if self.hosts[i].thresholds_ok != now_ok && self.counts.any_pending() {
            changed = true;
        }
        self.hosts[i].thresholds_ok = now_ok;
        if changed {
            self.dirty = true;
            self.full_due = true;
        }
    }

    /// LIM's lock of a host (`lsadmin limlock`: lockU): a locked host is `closed_Lock`
    /// and gets no job (`Host is locked`); an unlock lets pending jobs go there.
    pub fn lim_lock(&mut self, host: &str, locked: bool) {
        let Some(i) = self.host_idx(host) else {
            return;
        };
        if self.hosts[i].lim_locked != locked {
            self.hosts[i].lim_locked = locked;
            self.dirty = true;
            self.full_due = true;
        }
    }

    /// The dispatch of `key` may or may not have reached sbatchd on `host` (the call
    /// failed after the request went out: a timeout, a broken connection). The job stays
    /// dispatched; the host's next hellos tell whether sbatchd has it (it runs) or not
    /// (back to PEND), and a host that stays silent is handled as a lost host. Requeueing
    /// at once could run the job twice.
    pub fn dispatch_uncertain(&mut self, key: JobKey, attempt: u32, host: &str) {
        self.dispatch_answered(key, attempt);
        if let Some(h) = self.host_mut(host) {
            h.sbd_failed = true;
        }
        self.dirty = true;
        self.full_due = true;
    }

    /// Timers: sbatchd silence, lost hosts, CLEAN_PERIOD.
    pub fn tick(&mut self, now: Millis) {
        let silence = UNREACH_AFTER_HELLOS * i64::from(self.cfg.hello_interval_secs) * 1000;
        for h in &mut self.hosts {
            if !h.sbd_failed && now - h.sbd_seen > silence {
                h.sbd_failed = true;
                self.dirty = true;
                self.full_due = true;
            }
        }
        // A pass stopped early left some pending jobs' reasons as they were: refresh
        // them within a second.
        if self.cut_short && now - self.last_full_pass >= crate::FULL_PASS_EVERY {
            self.dirty = true;
            self.full_due = true;
        }
        // A slot reservation whose time is up is given up by a pass.
        if self.slot_resv.values().any(|r| now >= r.expires) {
            self.dirty = true;
            self.full_due = true;
        }
        // Jobs whose pre-execution command failed are tried again after a scheduling
        // interval: a pass is due when the first one may go.
        if self.next_retry != 0 && now >= self.next_retry {
            self.next_retry = self
                .jobs
                .values()
                .filter_map(|j| j.requeues.as_ref().map(|r| r.not_before))
                .filter(|&t| t > now)
                .min()
                .unwrap_or(0);
            self.dirty = true;
            self.full_due = true;
        }
        // Periodic checkpoints.
        if !self.chk_periodic.is_empty() {
            self.periodic_checkpoints(now);
        }
        // MIG: rerunnable jobs suspended by the system for too long are migrated.
        if !self.ssusp_since.is_empty()
            && (self.cfg.queues.iter().any(|q| q.mig_minutes.is_some())
                || self.hosts.iter().any(|h| h.mig_minutes.is_some()))
        {
            self.auto_migrate(now);
        }
        // bresume'd jobs wait for their host's load, which changes without an event:
        // look at them on every tick (cheap: no full scheduling pass).
        if self.counts.any_ssusp() && self.jobs.values().any(|j| self.waits_for_resume(j)) {
            self.resume_pass(now);
        }
        // bsub -t: a job still pending at its termination time never starts (EXIT,
        // TERM_DEADLINE); a running one is ended by its sbatchd.
        let t = secs(now);
        // (From the counters' set of pending jobs with a termination time, checked
        // against the job itself.)
        let too_late: Vec<JobKey> = self
            .counts
            .deadlines
            .range(..=(t, (u64::MAX, u32::MAX)))
            .map(|&(_, key)| key)
            .filter(|key| {
                self.jobs.get(key).is_some_and(|j| {
                    j.state.is_pending() && j.sub.term_time > 0 && j.sub.term_time <= t
                })
            })
            .collect();
        for key in too_late {
            self.finish(t, key, status::EXIT, 0, 0, None, "TERM_DEADLINE".into());
        }
        self.mc_tick(now);
        let lost_after = silence + i64::from(self.cfg.host_lost_grace_secs) * 1000;
        let lost: Vec<String> = self
            .hosts
            .iter()
            .filter(|h| now - h.sbd_seen > lost_after)
            .map(|h| h.name.clone())
            .collect();
        for host in lost {
            self.give_up_host(now, &host);
        }
        let clean = i64::from(self.cfg.clean_period_secs);
        let t = secs(now);
        let old: Vec<(JobKey, Str)> = self
            .counts
            .finished
            .range(..=(t - clean, (u64::MAX, u32::MAX)))
            .filter_map(|(_, key)| self.jobs.get(key))
            .filter(|j| j.state.is_finished() && j.end_time + clean <= t)
            .map(|j| (j.key(), j.sub.job_file.clone()))
            .collect();
        for (key, file) in old {
            self.emit(Event::JobClean { time: t, key });
            // The elements of an array share one job file: it goes with the last of them.
            if self
                .jobs
                .range((key.0, 0)..=(key.0, u32::MAX))
                .next()
                .is_none()
            {
                self.effects.push(Effect::RemoveJobFile {
                    job_file: file.to_string(),
                });
            }
        }
    }

    /// Is the job rerunnable (`bsub -r`, or its queue has `RERUNNABLE = yes`)?
    pub fn rerunnable(&self, j: &Job) -> bool {
        j.sub.options & sub::RERUNNABLE != 0 || self.queue(&j.queue).is_some_and(|q| q.rerunnable)
    }

    /// The host's sbatchd has been silent for the unreach time plus `BASALT_HOST_LOST_GRACE`:
    /// mbatchd gives up on the jobs started there (on it as their first host). A job with a
    /// kill order ends EXIT with the kill's term reason; a rerunnable job — or a
    /// checkpointable one with a checkpoint, which restarts from it — is requeued to PEND
    /// (reason PEND_JOB_REQUEUED) at the top of its queue, to run again elsewhere with a
    /// new attempt number; any other job ends EXIT, TERM_REMOVE_HUNG_JOB, as if killed by
    /// signal 9. That holds for a job whose dispatch was never answered too: after a
    /// failover the answer may have been lost with the old mbatchd while the job ran, so
    /// it is not assumed to have never started (running it again would run it twice).
    /// If the host comes back, its sbatchd is told to kill the old copies
    /// ([`Sched::sbd_hello`]).
    pub(crate) fn give_up_host(&mut self, now: Millis, host: &str) {
        // (The host's started jobs from the counters: this runs on every tick for each
        // lost host, with a million jobs in the table.)
        let mut jobs: Vec<(i64, JobKey)> = self
            .started_on(host)
            .filter(|j| !self.in_flight.contains(&(j.key(), j.attempt)))
            .map(|j| (j.order, j.key()))
            .collect();
        // Reruns each go to the top of their queue: the latest first, so that they keep
        // their order among themselves.
        jobs.sort_unstable_by(|a, b| b.cmp(a));
        let t = secs(now);
        for (_, key) in jobs {
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            // Seed 001: jobs lost with their host are "rerun from the beginning or
            // restarted from a checkpoint on another host": rerunnable ones, and
            // checkpointable ones that have a checkpoint.
            let restartable = j.chk.as_ref().is_some_and(|c| c.count > 0) && self.checkpointable(j);
            let (kill, rerun) = (j.kill_ordered.clone(), self.rerunnable(j) || restartable);
            self.missing.remove(&key);
            if let Some(term) = kill {
                self.finish(t, key, status::EXIT, 0, 9, None, term.to_string());
            } else if rerun {
                self.emit(state_change(t, key, status::PEND, pend::REQUEUED, 0));
            } else {
                self.finish(t, key, status::EXIT, 0, 9, None, TERM_HOST_LOST.to_string());
            }
        }
    }

    /// A dispatch could not be delivered: the host is unreachable, the job goes back to
    /// pending.
    pub fn dispatch_failed(&mut self, now: Millis, key: JobKey, attempt: u32, host: &str) {
        self.dispatch_answered(key, attempt);
        if let Some(h) = self.host_mut(host) {
            h.sbd_failed = true;
        }
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        if j.attempt != attempt || j.state != JobState::Run || j.pid != 0 {
            return;
        }
        // Killed meanwhile: it ends rather than going back to PEND (its next dispatch
        // would run it).
        if let Some(term) = j.kill_ordered.clone() {
            let st = if j.kill_as_done {
                status::DONE
            } else {
                status::EXIT
            };
            return self.finish(
                secs(now),
                key,
                st,
                0,
                KILLED_WAIT_STATUS,
                None,
                term.to_string(),
            );
        }
        self.emit(state_change(
            secs(now),
            key,
            status::PEND,
            pend::SBD_UNREACH,
            0,
        ));
    }

    /// Send an order to sbatchd now, or — when sbatchd has not answered the dispatch
    /// yet — as soon as it does (a kill is never replaced by a later order).
    /// mbatchd logged the state of `key` as it ordered it (called after the order, which
    /// clears an earlier wait): state reports that contradict it are stale for [`AWAIT_CONFIRMATION`] or until one confirms it.
    pub(crate) fn await_confirmation(&mut self, now: Millis, key: JobKey) {
        if let Some(j) = self.jobs.get(&key) {
            self.awaiting
                .insert(key, (j.state.code(), now + AWAIT_CONFIRMATION));
        }
    }

    pub(crate) fn order_sbd(&mut self, key: JobKey, attempt: u32, host: String, action: SbdAction) {
        // A new order: what the job was waiting to see confirmed is no longer the last word.
        self.awaiting.remove(&key);
        // A job a remote cluster runs for us (MultiCluster): the order goes there.
        if let Some(cluster) = self.forwarded_to(key) {
            let signal = match action {
                SbdAction::Kill { .. } => "KILL".to_owned(),
                SbdAction::Stop { .. } => "STOP".to_owned(),
                SbdAction::Resume => "RESUME".to_owned(),
                SbdAction::Signal(s) => s,
                SbdAction::Limits(_) | SbdAction::Chkpnt { .. } => return,
            };
            self.effects.push(Effect::McControl {
                key,
                cluster,
                signal,
            });
            return;
        }
        if let Some(j) = self.jobs.get_mut(&key)
            && j.pid == 0
        {
            if !matches!(j.pending_action.as_deref(), Some(SbdAction::Kill { .. })) {
                j.pending_action = Some(Box::new(action));
            }
            return;
        }
        self.effects.push(Effect::Signal {
            key,
            attempt,
            host,
            action,
        });
    }

    pub(crate) fn flush_pending(&mut self, key: JobKey) {
        let Some(j) = self.jobs.get_mut(&key) else {
            return;
        };
        if j.pid == 0 {
            return;
        }
        let (Some(action), Some(host)) = (j.pending_action.take(), j.hosts.first().cloned()) else {
            return;
        };
        let attempt = j.attempt;
        self.effects.push(Effect::Signal {
            key,
            attempt,
            host,
            action: *action,
        });
    }

    /// sbatchd answered the dispatch with a refusal (the user does not exist there, the
    /// job file is unreadable, ...): the job exits (EXIT_INIT_ENVIRON).
    pub fn start_failed(&mut self, now: Millis, key: JobKey, attempt: u32) {
        self.dispatch_answered(key, attempt);
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        if j.attempt != attempt || !j.state.is_started() {
            return;
        }
        self.finish(
            secs(now),
            key,
            status::EXIT,
            exit_reason::INIT_ENVIRON,
            256,
            None,
            String::new(),
        );
    }

    /// sbatchd accepted a dispatch and answered with the job's pid.
    pub fn dispatch_accepted(
        &mut self,
        now: Millis,
        key: JobKey,
        attempt: u32,
        pid: u32,
        pgid: u32,
    ) {
        self.dispatch_answered(key, attempt);
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        if j.attempt != attempt || j.pid != 0 || !j.state.is_started() {
            return;
        }
        self.emit(Event::JobStartAccept {
            time: secs(now),
            key,
            pid,
            pgid,
        });
        self.flush_pending(key);
    }

    /// The post-execution commands of a job that ended `st` (DONE or EXIT) ran with wait
    /// status `p`: a second JOB_STATUS with JOB_STAT_PDONE or JOB_STAT_PERR, as LSF
    /// logs it.
    #[allow(clippy::too_many_arguments)]
    fn post_exec_done(
        &mut self,
        t: i64,
        key: JobKey,
        st: u32,
        exit_status: i32,
        cpu_time: f64,
        end: i64,
        p: i32,
    ) {
        let post = if p == 0 { status::PDONE } else { status::PERR };
        let mut ev = state_change(t, key, st | post, 0, 0);
        if let Event::JobStatus {
            exit_status: e,
            cpu_time: c,
            end_time,
            ..
        } = &mut ev
        {
            *e = exit_status;
            *c = cpu_time;
            *end_time = end;
        }
        self.emit(ev);
    }

    /// The job's pre-execution command failed (wait status `exit_status`): exit value 99
    /// ends the job (EXIT); past the queue's LOCAL_MAX_PREEXEC_RETRY the job is suspended
    /// (PSUSP) or, with LOCAL_MAX_PREEXEC_RETRY_ACTION = EXIT, ends; otherwise it goes back
    /// to PEND (reason PEND_JOB_PRE_EXEC) at the head of its queue, to be tried again at
    /// the next scheduling interval (MBD_SLEEP_TIME).
    fn pre_exec_failed(&mut self, t: i64, key: JobKey, exit_status: i32) {
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        // Killed before sbatchd saw the kill: its command never ran; it ends, not
        // requeued.
        if let Some(term) = j.kill_ordered.clone() {
            let st = if j.kill_as_done {
                status::DONE
            } else {
                status::EXIT
            };
            return self.finish(t, key, st, 0, KILLED_WAIT_STATUS, None, term.to_string());
        }
        let code = exit_code(exit_status);
        let failures = j.requeues.as_ref().map_or(0, |r| r.pre_exec_failures);
        let q = self.queue(&j.queue);
        let limit = q.and_then(|q| q.preexec_retry_limit);
        let exit_at_limit = q.is_some_and(|q| q.preexec_retry_exit);
        if code == Some(PRE_EXEC_EXIT_CODE) {
            return self.finish(
                t,
                key,
                status::EXIT,
                exit_reason::PRE_EXEC,
                exit_status,
                None,
                String::new(),
            );
        }
        // A job from another cluster: MAX_PREEXEC_RETRY attempts, then it goes back
        // there (a failed start).
        if self.came_from_remote(key) {
            let queue = j.queue.to_string();
            let limit = self
                .cfg
                .mc
                .preexec_retry
                .get(&queue)
                .copied()
                .unwrap_or(crate::mc::DEFAULT_MAX_PREEXEC_RETRY);
            if failures + 1 >= limit {
                return self.mc_give_back(t, key, crate::mc::TERM_MC_INITFAIL);
            }
            return self.emit(state_change(t, key, status::PEND, pend::PRE_EXEC, 0));
        }
        // LOCAL_MAX_PREEXEC_RETRY counts attempts: this failure is attempt failures + 1.
        if limit.is_some_and(|l| failures + 1 >= l) {
            if exit_at_limit {
                return self.finish(
                    t,
                    key,
                    status::EXIT,
                    exit_reason::PRE_EXEC,
                    exit_status,
                    None,
                    String::new(),
                );
            }
            return self.emit(state_change(t, key, status::PSUSP, pend::PRE_EXEC, 0));
        }
        self.emit(state_change(t, key, status::PEND, pend::PRE_EXEC, 0));
    }

    /// Is the job's exit value one of its SUCCESS_EXIT_VALUES (its application profile's,
    /// else its queue's)? Then it ends DONE.
    fn success_value(&self, key: JobKey, exit_status: i32) -> bool {
        let Some(code) = exit_code(exit_status).and_then(|c| u8::try_from(c).ok()) else {
            return false;
        };
        let Some(j) = self.jobs.get(&key) else {
            return false;
        };
        match self
            .app_of(&j.sub)
            .and_then(|a| a.success_exit_values.as_ref())
        {
            Some(v) => v.contains(&code),
            None => self
                .queue(&j.queue)
                .is_some_and(|q| q.success_exit_values.contains(&code)),
        }
    }

    /// Does the job's exit (wait status) requeue it by its queue's REQUEUE_EXIT_VALUES?
    /// Some(exclude) when it does (exclude: its host is excluded for it); None when it ends
    /// (no such value, killed by a signal, or MAX_JOB_REQUEUE requeues already).
    fn requeue_by_value(&self, key: JobKey, exit_status: i32) -> Option<bool> {
        let j = self.jobs.get(&key)?;
        let q = self.queue(&j.queue)?;
        // bsub -Q overrides the application profile's, which overrides the queue's.
        let own;
        let values = match j.sub.requeue_exit_values() {
            "" => self
                .app_of(&j.sub)
                .and_then(|a| a.requeue.as_ref())
                .unwrap_or(&q.requeue),
            v => {
                own = basalt_config::batch::RequeueValues::parse(v).ok()?;
                &own
            }
        };
        if values.is_empty() {
            return None;
        }
        let code = u8::try_from(exit_code(exit_status)?).ok()?;
        let exclude = values.requeue_for(code)?;
        let done = j.requeues.as_ref().map_or(0, |r| r.by_exit_value);
        if q.max_job_requeue.is_some_and(|m| done >= m) {
            return None;
        }
        Some(exclude)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish(
        &mut self,
        t: i64,
        key: JobKey,
        st: u32,
        reasons: u32,
        exit_status: i32,
        usage: Option<Usage>,
        term_reason: String,
    ) {
        self.awaiting.remove(&key);
        let cpu = usage.as_ref().map_or(0.0, |u| u.utime + u.stime);
        self.emit(Event::JobStatus {
            time: t,
            key,
            status: st,
            reasons,
            subreasons: 0,
            cpu_time: cpu,
            end_time: t,
            usage,
            exit_status,
            term_reason,
        });
    }
}

/// The exit value of a wait status (None: killed by a signal).
fn exit_code(wait_status: i32) -> Option<i32> {
    (wait_status & 0x7f == 0).then_some((wait_status >> 8) & 0xff)
}

/// A pre-execution command exiting with this value ends its job instead of requeueing it
/// (LSF).
pub const PRE_EXEC_EXIT_CODE: i32 = 99;

/// `subreasons` bits of Basalt's JOB_STATUS PEND events for a requeue by exit value
/// (REQUEUE_EXIT_VALUES; LSF logs 0 there): requeued by its exit value, and its host is
/// excluded for it (`EXCLUDE(...)`). Replay counts and excludes from them.
pub const REQUEUE_BY_VALUE: u32 = 0x1;
pub const REQUEUE_EXCLUDE: u32 = 0x2;

impl Sched {
    /// Every sbatchd counts as heard from at `now`: the silence that makes a host
    /// `unreach` (and later lost) is measured from here.
    pub fn all_sbd_seen(&mut self, now: Millis) {
        for h in &mut self.hosts {
            h.sbd_seen = now;
        }
    }

    /// The runtime saw the wall clock stepped (by more than
    /// [`basalt_core::clock::JUMP_MS`], either way) since its last reading: the
    /// silences of the sbatchds are measured again from `now`. Without this, a step
    /// forward of an hour would make every sbatchd look silent for an hour (every host
    /// unreach and lost at the next tick, its jobs given up), and a step back would hide
    /// a host that really goes silent until the clock has caught up. A host that was
    /// already silent before the step gets a whole silence more before it is lost.
    /// Likewise the time jobs have been suspended by the system, for queue and host
    /// `MIG`: a step forward must not migrate (kill and rerun) them early.
    pub fn wall_clock_jumped(&mut self, now: Millis) {
        self.all_sbd_seen(now);
        self.last_full_pass = now;
        let t = secs(now);
        for since in self.ssusp_since.values_mut() {
            *since = t;
        }
    }
}
