//! Job, queue and host control (bkill, bstop, bresume, bswitch, btop/bbot, brun, badmin
//! q*/h*) and who may do it.

use crate::Effect;
use crate::{
    Caller, Event, HostStatus, Job, JobKey, Millis, RequeueStates, SbdAction, Sched, SchedError,
    limits, secs, state_change,
};
use basalt_core::job::{self as jobv, JobState, exit_reason, pend, status, susp};

impl Sched {
    pub(crate) fn is_admin(&self, c: &Caller) -> bool {
        c.uid == 0 || self.cfg.admins.iter().any(|a| a == &c.user)
    }

    /// The job's owner, a cluster administrator, an administrator of the job's queue
    /// (lsb.queues ADMINISTRATORS), or an administrator of a user group the owner is in
    /// (lsb.users GROUP_ADMIN) may control a job.
    pub(crate) fn may_control(&self, c: &Caller, j: &Job) -> bool {
        self.is_admin(c)
            || c.user == j.sub.user
            || self
                .queue(&j.sub.queue)
                .is_some_and(|q| q.administrators.iter().any(|a| a == &c.user))
            || self
                .cfg
                .group_admins
                .get(&c.user)
                .is_some_and(|groups| groups.iter().any(|g| g.covers(&j.sub.user)))
    }

    pub(crate) fn control_target(&self, caller: &Caller, key: JobKey) -> Result<&Job, SchedError> {
        let j = self.jobs.get(&key).ok_or(SchedError::NoJob)?;
        if !self.may_control(caller, j) {
            return Err(SchedError::Permission);
        }
        if j.state.is_finished() {
            return Err(SchedError::Finished);
        }
        Ok(j)
    }

    /// Expand request ids ((id, None) = every element) into keys; unknown ids give
    /// NoJob results.
    pub fn expand(&self, ids: &[(u64, Option<u32>)]) -> Vec<Result<JobKey, JobKey>> {
        let mut out = Vec::new();
        for (id, idx) in ids {
            let keys: Vec<JobKey> = self
                .jobs
                .range((*id, 0)..=(*id, u32::MAX))
                .map(|(k, _)| *k)
                .filter(|k| idx.is_none_or(|i| k.1 == i))
                .collect();
            if keys.is_empty() {
                out.push(Err((*id, idx.unwrap_or(0))));
            } else {
                out.extend(keys.into_iter().map(Ok));
            }
        }
        out
    }

    /// bkill: `remove` = -r, `as_done` = -d.
    pub fn kill(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        remove: bool,
        as_done: bool,
    ) -> Result<(), SchedError> {
        let j = self.control_target(caller, key)?;
        let t = secs(now);
        let state = j.state;
        let attempt = j.attempt;
        let host = j.hosts.first().cloned();
        let term = if caller.user == j.sub.user {
            "TERM_OWNER"
        } else {
            "TERM_ADMIN"
        };
        let signal = if remove {
            "KILL_REMOVE"
        } else if as_done {
            "KILL_DONE"
        } else {
            "KILL"
        };
        self.emit(Event::JobSignal {
            time: t,
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            signal: signal.into(),
        });
        // Forwarded and waiting in a remote cluster: killed there too.
        if state.is_pending()
            && let Some(cluster) = self.forwarded_to(key)
        {
            self.effects.push(Effect::McControl {
                key,
                cluster,
                signal: "KILL".into(),
            });
        }
        if state.is_pending() || remove {
            let st = if as_done { status::DONE } else { status::EXIT };
            let reasons = if remove { exit_reason::REMOVE } else { 0 };
            self.finish(t, key, st, reasons, 0, None, term.into());
        }
        if state.is_started()
            && let Some(host) = host
        {
            self.order_sbd(
                key,
                attempt,
                host,
                SbdAction::Kill {
                    term_reason: term.into(),
                },
            );
        }
        Ok(())
    }

    /// brequeue: a running (or suspended) job is killed and goes back to PEND — PSUSP with
    /// `hold` — at the head of its queue once sbatchd has killed it; a finished one
    /// (DONE with `-d`, EXIT with `-e`) goes back at once. Logged as JOB_SIGNAL
    /// `REQUEUE_PEND` / `REQUEUE_PSUSP`, then the JOB_STATUS of the requeue (reason
    /// PEND_JOB_REQUEUED).
    pub fn requeue(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        states: RequeueStates,
        hold: bool,
    ) -> Result<(), SchedError> {
        let j = self.jobs.get(&key).ok_or(SchedError::NoJob)?;
        if !self.may_control(caller, j) {
            return Err(SchedError::Permission);
        }
        let (state, attempt, host) = (j.state, j.attempt, j.hosts.first().cloned());
        let owner = caller.user == j.sub.user;
        let wanted = match state {
            JobState::Done => states.done,
            JobState::Exit => states.exit,
            s if s.is_started() => states.running,
            _ => false,
        };
        if !wanted {
            return Err(if state.is_pending() {
                SchedError::NotStarted
            } else if state.is_finished() {
                SchedError::Finished
            } else {
                SchedError::Started
            });
        }
        let t = secs(now);
        let to = if hold { status::PSUSP } else { status::PEND };
        self.emit(Event::JobSignal {
            time: t,
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            signal: if hold {
                "REQUEUE_PSUSP"
            } else {
                "REQUEUE_PEND"
            }
            .into(),
        });
        if state.is_finished() {
            self.emit(state_change(t, key, to, pend::REQUEUED, 0));
            return Ok(());
        }
        self.kill_to_requeue(key, attempt, host, owner);
        Ok(())
    }

    /// bmig (seed 001, "Job migration"), see [`Sched::migrate_job`].
    pub fn migrate(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        hosts: &[String],
    ) -> Result<(), SchedError> {
        self.migrate_job(now, caller, key, hosts, false)
    }

    /// bmig [-f] (seed 001, "Job migration"): "If the job is checkpointable, the bmig
    /// command first checkpoints it. Then LSF kills the running or suspended job, and
    /// restarts or reruns the job on another host": a checkpointable job is checkpointed
    /// and killed by sbatchd (`force`: echkpnt -f), a rerunnable one killed; it goes back
    /// to PEND at the head of its queue (PEND_JOB_MIG), with `hosts` (when given) as its
    /// candidate hosts from then on, keeps its job id and restarts from its checkpoint.
    /// Logged as MIG (`JobMigrate`; and the checkpoint's JOB_SIGACT / CHKPNT), then the
    /// JOB_STATUS of the requeue. A job neither checkpointable nor rerunnable is refused
    /// (`Job is not checkpointable`); a failed migration checkpoint leaves it running.
    pub fn migrate_job(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        hosts: &[String],
        force: bool,
    ) -> Result<(), SchedError> {
        let j = self.jobs.get(&key).ok_or(SchedError::NoJob)?;
        if !self.may_control(caller, j) {
            return Err(SchedError::Permission);
        }
        if j.state.is_finished() {
            return Err(SchedError::Finished);
        }
        if !j.state.is_started() {
            return Err(SchedError::NotStarted);
        }
        let checkpointable = self.checkpointable(j);
        if !checkpointable && !self.rerunnable(j) {
            return Err(SchedError::NotCheckpointable);
        }
        if j.requeues.as_ref().is_some_and(|r| r.requeue_to != 0) || j.kill_ordered.is_some() {
            return Err(SchedError::Migrating);
        }
        let (attempt, host) = (j.attempt, j.hosts.first().cloned());
        let owner = caller.user == j.sub.user;
        // The hosts as the scheduler knows them (groups expanded, names checked), as bmod
        // -m has them.
        let hosts = if hosts.is_empty() {
            Vec::new()
        } else {
            let m = crate::Modify {
                hosts: crate::modify::Change::Set(hosts.to_vec()),
                ..Default::default()
            };
            let mut new = m.apply_to(&j.sub);
            new.queue = j.queue.clone();
            self.check_changed(caller, j, false, &mut new)?;
            new.asked_hosts
        };
        self.emit(Event::JobMigrate {
            time: secs(now),
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            hosts,
        });
        if checkpointable {
            use crate::chkpnt::flags;
            let f = flags::KILL | flags::MIG | if force { flags::FORCE } else { 0 };
            self.order_checkpoint(now, key, f, None);
        } else {
            self.kill_to_requeue(key, attempt, host, owner);
        }
        Ok(())
    }

    /// Queue MIG (seed 001, "Automatic job migration"): a checkpointable or rerunnable job the system has
    /// suspended (SSUSP: load, run window, preemption) for MIG minutes or more is
    /// migrated as `bmig` does, by the cluster's primary administrator. A job its user
    /// stopped (USUSP) is not, nor one already being migrated.
    pub(crate) fn auto_migrate(&mut self, now: Millis) {
        let t = secs(now);
        let due: Vec<JobKey> = self
            .ssusp_since
            .iter()
            .filter_map(|(key, since)| {
                let j = self.jobs.get(key)?;
                // The queue's threshold, or the host's where lower (or the only one).
                let queue = self.queue(&j.queue).and_then(|q| q.mig_minutes);
                let host = j
                    .hosts
                    .first()
                    .and_then(|h| self.hosts.iter().find(|x| &x.name == h))
                    .and_then(|h| h.mig_minutes);
                let mig = match (queue, host) {
                    (Some(q), Some(h)) => q.min(h),
                    (q, h) => q.or(h)?,
                };
                let ready = j.state == JobState::Ssusp
                    && t - since >= i64::from(mig) * 60
                    && (self.rerunnable(j) || self.checkpointable(j))
                    && j.mc.is_none()
                    && j.kill_ordered.is_none()
                    && j.requeues.as_ref().is_none_or(|r| r.requeue_to == 0);
                ready.then_some(*key)
            })
            .collect();
        if due.is_empty() {
            return;
        }
        let admin = Caller {
            uid: 0,
            user: self
                .cfg
                .admins
                .first()
                .cloned()
                .unwrap_or_else(|| "root".to_owned()),
            host: String::new(),
        };
        for key in due {
            // (Each was checked above: the migration is taken.)
            let _ = self.migrate(now, &admin, key, &[]);
        }
    }

    /// The kill of a job that goes back to its queue (brequeue, bmig): its end is
    /// TERM_REQUEUE_OWNER or TERM_REQUEUE_ADMIN, after who asked.
    fn kill_to_requeue(&mut self, key: JobKey, attempt: u32, host: Option<String>, owner: bool) {
        let Some(host) = host else {
            return;
        };
        let term = if owner {
            "TERM_REQUEUE_OWNER"
        } else {
            "TERM_REQUEUE_ADMIN"
        };
        self.order_sbd(
            key,
            attempt,
            host,
            SbdAction::Kill {
                term_reason: term.into(),
            },
        );
    }

    /// bkill -s SIG.
    pub fn send_signal(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        signal: &str,
    ) -> Result<(), SchedError> {
        let n = jobv::signal_number(signal)
            .ok_or_else(|| SchedError::BadArgument(format!("{signal}: Illegal signal value")))?;
        let name = jobv::signal_name(n).unwrap_or(signal).to_string();
        if matches!(name.as_str(), "KILL" | "TERM" | "INT") {
            // LSF treats these like bkill for a pending job.
            let j = self.control_target(caller, key)?;
            if j.state.is_pending() {
                return self.kill(now, caller, key, false, false);
            }
        }
        if name == "STOP" || name == "TSTP" {
            return self.stop(now, caller, key);
        }
        if name == "CONT" {
            return self.resume(now, caller, key);
        }
        let j = self.control_target(caller, key)?;
        if j.state.is_pending() {
            return Err(SchedError::NotPending);
        }
        let (attempt, host) = (j.attempt, j.hosts.first().cloned());
        self.emit(Event::JobSignal {
            time: secs(now),
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            signal: name.clone(),
        });
        if let Some(host) = host {
            self.order_sbd(key, attempt, host, SbdAction::Signal(name));
        }
        Ok(())
    }

    /// bstop.
    pub fn stop(&mut self, now: Millis, caller: &Caller, key: JobKey) -> Result<(), SchedError> {
        let j = self.control_target(caller, key)?;
        let t = secs(now);
        let mut reasons = if caller.user == j.sub.user {
            susp::USER_STOP
        } else {
            susp::ADMIN_STOP
        };
        // A preempted job stopped by its user stays preempted: bresume gives it back
        // to the preemption logic, which resumes it when its slots are free.
        if j.state == JobState::Ssusp && j.reasons & susp::MBD_PREEMPT != 0 {
            reasons |= susp::MBD_PREEMPT;
        }
        match j.state {
            JobState::Pend => {
                self.emit(state_change(t, key, status::PSUSP, reasons, 0));
                if let Some(cluster) = self.forwarded_to(key) {
                    self.effects.push(Effect::McControl {
                        key,
                        cluster,
                        signal: "STOP".into(),
                    });
                }
            }
            JobState::Psusp | JobState::Ususp => {}
            _ => {
                let (attempt, host) = (j.attempt, j.hosts.first().cloned());
                self.emit(Event::JobSignal {
                    time: t,
                    key,
                    uid: caller.uid,
                    user: caller.user.clone(),
                    signal: "STOP".into(),
                });
                if let Some(host) = host {
                    self.order_sbd(
                        key,
                        attempt,
                        host,
                        SbdAction::Stop {
                            state: status::USUSP,
                            reasons: reasons | susp::MBD_LOCK,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// bresume: PSUSP -> PEND; USUSP -> SSUSP (SUSP_USER_RESUME), resumed by the next
    /// scheduling pass when the host's load allows. A job suspended by the system
    /// (SSUSP) is left to it; a pending or running job is refused (`Job has not been
    /// suspended`).
    pub fn resume(&mut self, now: Millis, caller: &Caller, key: JobKey) -> Result<(), SchedError> {
        let j = self.control_target(caller, key)?;
        let t = secs(now);
        // A job a remote cluster runs for us resumes there; its state comes back.
        if j.state.is_started()
            && let Some(cluster) = self.forwarded_to(key)
        {
            self.effects.push(Effect::McControl {
                key,
                cluster,
                signal: "RESUME".into(),
            });
            return Ok(());
        }
        let (st, reasons) = match j.state {
            JobState::Psusp => (status::PEND, 0),
            JobState::Ususp if j.reasons & susp::MBD_PREEMPT != 0 => {
                (status::SSUSP, susp::MBD_PREEMPT | susp::MBD_LOCK)
            }
            JobState::Ususp => (status::SSUSP, susp::USER_RESUME),
            JobState::Ssusp => return Ok(()),
            _ => return Err(SchedError::NotSuspended),
        };
        let psusp = j.state == JobState::Psusp;
        self.emit(state_change(t, key, st, reasons, 0));
        if psusp && let Some(cluster) = self.forwarded_to(key) {
            self.effects.push(Effect::McControl {
                key,
                cluster,
                signal: "RESUME".into(),
            });
        }
        Ok(())
    }

    /// bswitch.
    pub fn switch(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        queue: &str,
    ) -> Result<(), SchedError> {
        let Some(q) = self.queue(queue) else {
            return Err(SchedError::NoQueue);
        };
        if !q.open {
            return Err(SchedError::QueueClosed);
        }
        let qlimits = q.rlimits;
        let j = self.control_target(caller, key)?;
        if j.queue == queue {
            return Ok(());
        }
        if limits::exceeds(&j.sub.rlimits, &qlimits) {
            return Err(SchedError::OverLimit);
        }
        self.emit(Event::JobSwitch {
            time: secs(now),
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            queue: queue.to_string(),
        });
        Ok(())
    }

    /// btop / bbot. Returns the new position.
    pub fn move_job(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        position: u32,
        from_bottom: bool,
    ) -> Result<u32, SchedError> {
        let j = self.control_target(caller, key)?;
        if !j.state.is_pending() {
            return Err(SchedError::Started);
        }
        let position = position.max(1);
        self.emit(Event::JobMove {
            time: secs(now),
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            position,
            base: if from_bottom { 2 } else { 1 },
        });
        Ok(position)
    }

    /// brun: start a pending job on `hosts` now (administrators only).
    pub fn force(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        hosts: &[String],
        ignore_limits: bool,
    ) -> Result<(), SchedError> {
        if !self.is_admin(caller) {
            return Err(SchedError::Permission);
        }
        let j = self.control_target(caller, key)?;
        if !j.state.is_pending() {
            return Err(SchedError::Started);
        }
        let slots = j.slots() as usize;
        let mut names = Vec::new();
        for h in hosts {
            names.push(self.host_name(h).ok_or(SchedError::BadHost)?);
        }
        if names.is_empty() {
            return Err(SchedError::BadHost);
        }
        // One slot per named host, round robin, until the job has its slots.
        let mut alloc = Vec::new();
        for i in 0..slots {
            alloc.push(names[i % names.len()].clone());
        }
        if !ignore_limits {
            for n in &names {
                let host = self.hosts.iter().find(|h| &h.name == n);
                let Some(host) = host else {
                    return Err(SchedError::BadHost);
                };
                if matches!(
                    self.host_status(host),
                    HostStatus::Unavail | HostStatus::Unreach
                ) {
                    return Err(SchedError::NoSlots);
                }
            }
        }
        let t = secs(now);
        self.emit(Event::JobForce {
            time: t,
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            hosts: names,
            no_stop: ignore_limits,
        });
        self.start_job(now, key, alloc);
        Ok(())
    }

    /// badmin qopen/qclose/qact/qinact.
    pub fn queue_ctl(
        &mut self,
        now: Millis,
        caller: &Caller,
        op: u32,
        queue: &str,
        message: &str,
    ) -> Result<(), SchedError> {
        let Some(q) = self.queue(queue) else {
            return Err(SchedError::NoQueue);
        };
        if !self.is_admin(caller) && !q.administrators.contains(&caller.user) {
            return Err(SchedError::Permission);
        }
        if !(1..=4).contains(&op) {
            return Err(SchedError::BadArgument("bad queue operation".into()));
        }
        self.emit(Event::QueueCtrl {
            time: secs(now),
            op,
            queue: queue.to_string(),
            uid: caller.uid,
            user: caller.user.clone(),
            message: message.to_string(),
        });
        Ok(())
    }

    /// badmin hopen/hclose.
    pub fn host_ctl(
        &mut self,
        now: Millis,
        caller: &Caller,
        op: u32,
        host: &str,
        message: &str,
    ) -> Result<(), SchedError> {
        let name = self.host_name(host).ok_or(SchedError::BadHost)?;
        // A host group's administrators open and close its hosts (lsb.hosts GROUP_ADMIN).
        let group_admin = self
            .cfg
            .host_group_admins
            .get(&caller.user)
            .is_some_and(|hosts| hosts.iter().any(|h| basalt_core::same_host(h, &name)));
        if !self.is_admin(caller) && !group_admin {
            return Err(SchedError::Permission);
        }
        if !(1..=2).contains(&op) {
            return Err(SchedError::BadArgument("bad host operation".into()));
        }
        self.emit(Event::HostCtrl {
            time: secs(now),
            op,
            host: name,
            uid: caller.uid,
            user: caller.user.clone(),
            message: message.to_string(),
        });
        Ok(())
    }
}
