//! Checkpointing (seed 001, "Checkpointing and Migration"; LSF 10.1's `bsub -k`,
//! `bchkpnt`, `brestart`, queue `CHKPNT` and application `CHKPNT_*`).
//!
//! A job is checkpointable when it asks for it (`bsub -k "dir [period] [method=m]"`), its
//! application profile has `CHKPNT_DIR`, or its queue has `CHKPNT = dir [period]` (in that
//! order). Its checkpoints go to `<dir>/<jobId>` (`<dir>/<jobId>_<index>` for an array
//! element). What the core decides, with time as an input:
//! - `bchkpnt` (and `-k`, `-p`) and the periodic checkpoints (`tick`) order sbatchd to
//!   checkpoint a started job ([`SbdAction::Chkpnt`]), logged first as JOB_SIGACT
//!   (`SIG_CHKPNT`, ACT_START; [`Event::ChkpntStart`]); sbatchd's answer is logged as
//!   CHKPNT ([`Event::ChkpntEnd`]). A checkpoint that fails leaves the job running.
//! - `bmig` and queue/host `MIG` of a checkpointable job: the job is checkpointed and
//!   killed (LSB_CHKPNT_KILL | LSB_CHKPNT_MIG), then goes back to PEND at the head of its
//!   queue (PEND_JOB_MIG) with its id; a failed migration checkpoint cancels the
//!   migration.
//! - A job with a checkpoint that goes back to PEND (migration, requeue, rerun after a
//!   host failure) restarts from it at its next dispatch, as does a `brestart` job (a
//!   new job with SUB_RESTART, from the old job's directory). A restart that fails
//!   (erestart) puts the job back to PEND with PEND_JOB_RESTART_FILE, tried again after
//!   a scheduling interval.

use crate::{Caller, Event, Job, JobKey, Millis, SbdAction, Sched, SchedError, secs};
use basalt_core::job::{JobState, pend, status, sub};

/// LSF's `LSB_CHKPNT_*` flags of a checkpoint (JOB_SIGACT / CHKPNT `flags`).
pub mod flags {
    /// Kill the job after the checkpoint (`bchkpnt -k`, migration).
    pub const KILL: u32 = 0x1;
    /// Checkpoint even when the method would refuse (`-f`).
    pub const FORCE: u32 = 0x2;
    /// A migration's checkpoint.
    pub const MIG: u32 = 0x4;
}

/// A checkpoint order not answered after this long (seconds) is taken as lost: another
/// may be ordered (sbatchd gives up on a method after BASALT_CHKPNT_TIMEOUT, 60 s by
/// default).
pub const IN_FLIGHT_STALE_SECS: i64 = 600;

/// A checkpoint setting: the directory, the period (seconds, 0 = none) and the method
/// ("" = the default one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChkCfg {
    pub dir: String,
    pub period: i64,
    pub method: String,
    /// The first periodic checkpoint this long (seconds) after the start (0 = after
    /// one period): `-k "... init=m"`, CHKPNT_INITPERIOD.
    pub init: i64,
}

impl ChkCfg {
    /// Queue `CHKPNT = dir [period]` (period in minutes); None when empty or malformed.
    pub fn parse_queue(v: &str) -> Option<ChkCfg> {
        let mut words = v.split_whitespace();
        let dir = words.next()?.to_owned();
        let period = match words.next() {
            Some(p) => p.parse::<i64>().ok().filter(|p| *p >= 0)? * 60,
            None => 0,
        };
        Some(ChkCfg {
            dir,
            period,
            method: String::new(),
            init: 0,
        })
    }
}

/// What a job has of checkpointing, from the log but for `in_flight`'s time base.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChkState {
    /// `bchkpnt -p`: the period (seconds) since set (None = as configured).
    pub period: Option<i64>,
    /// Checkpoints that succeeded, and when the last did (seconds; 0 = none).
    pub count: u32,
    pub last_ok: i64,
    /// Why the last checkpoint failed ("" = it did not).
    pub error: String,
    /// A checkpoint ordered and not answered: since when (seconds) and its flags.
    pub in_flight: Option<(i64, u32)>,
    /// The last checkpoint ordered (seconds): periodic checkpoints count from it.
    pub last_order: i64,
    /// Why the last restart failed ("" = it did not; not in the log).
    pub restart_error: String,
    /// `in_flight` was sent by this mbatchd (not in the log: after a restart the order
    /// may never have reached sbatchd, so it is sent again at the host's next hello).
    pub sent: bool,
}

/// What a dispatch carries of checkpointing (sbatchd's JobSpec fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchChk {
    /// `<dir>/<jobId>`: the job's checkpoint directory.
    pub dir: String,
    pub period: i64,
    pub method: String,
    /// Start from the checkpoint (erestart) rather than from the beginning.
    pub restart: bool,
    /// `brestart`: the restarted job's directory and id (LSB_OLD_JOBID).
    pub restart_from_dir: String,
    pub old_job: String,
    pub force: bool,
}

/// sbatchd's order for a checkpoint with LSB_CHKPNT_* `f`.
fn chkpnt_action(f: u32) -> SbdAction {
    SbdAction::Chkpnt {
        kill: f & flags::KILL != 0,
        force: f & flags::FORCE != 0,
        migrate: f & flags::MIG != 0,
    }
}

/// `<jobId>`, or `<jobId>_<index>` for an array element: the job's directory under its
/// checkpoint directory.
pub fn job_dir_name(key: JobKey) -> String {
    if key.1 == 0 {
        key.0.to_string()
    } else {
        format!("{}_{}", key.0, key.1)
    }
}

impl Sched {
    /// The job's checkpoint setting: its own (`bsub -k`), its application profile's
    /// (`CHKPNT_DIR`...), else its queue's (`CHKPNT`); None: not checkpointable.
    pub fn chkpnt_cfg(&self, j: &Job) -> Option<ChkCfg> {
        let app = self.app_of(&j.sub);
        let method = |own: &str| -> String {
            if !own.is_empty() {
                return own.to_owned();
            }
            app.map(|a| a.chkpnt_method.clone())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| self.cfg.chkpnt_method.clone())
        };
        if let Some(x) = j.sub.extras.as_deref()
            && !x.chkpnt_dir.is_empty()
        {
            let app_chk = app.and_then(|a| a.chkpnt.as_ref());
            let period = if j.sub.options & sub::CHKPNT_PERIOD != 0 {
                x.chkpnt_period
            } else {
                app_chk.map_or(0, |c| c.period)
            };
            let init = if x.chkpnt_init > 0 {
                x.chkpnt_init
            } else {
                app_chk.map_or(0, |c| c.init)
            };
            return Some(ChkCfg {
                dir: x.chkpnt_dir.clone(),
                period,
                method: method(&x.chkpnt_method),
                init,
            });
        }
        if let Some(c) = app.and_then(|a| a.chkpnt.as_ref()) {
            return Some(ChkCfg {
                method: method(""),
                ..c.clone()
            });
        }
        let q = self.queue(&j.queue)?.chkpnt.as_ref()?;
        Some(ChkCfg {
            method: method(""),
            ..q.clone()
        })
    }

    /// Is the job checkpointable?
    pub fn checkpointable(&self, j: &Job) -> bool {
        self.chkpnt_cfg(j).is_some()
    }

    /// The job's checkpoint period in force (seconds, 0 = none).
    pub fn chkpnt_period(&self, j: &Job) -> i64 {
        j.chk
            .as_ref()
            .and_then(|c| c.period)
            .or_else(|| self.chkpnt_cfg(j).map(|c| c.period))
            .unwrap_or(0)
    }

    /// What the dispatch of the job carries of checkpointing (None: not checkpointable).
    pub fn dispatch_chkpnt(&self, key: JobKey) -> Option<DispatchChk> {
        let j = self.jobs.get(&key)?;
        let cfg = self.chkpnt_cfg(j)?;
        let base = cfg.dir.trim_end_matches('/');
        let has_checkpoint = j.chk.as_ref().is_some_and(|c| c.count > 0);
        let restart_of = j
            .sub
            .restart_job()
            .filter(|_| j.sub.options & sub::RESTART != 0);
        Some(DispatchChk {
            dir: format!("{base}/{}", job_dir_name(key)),
            period: self.chkpnt_period(j),
            method: cfg.method,
            restart: has_checkpoint || restart_of.is_some(),
            restart_from_dir: restart_of
                .map(|old| format!("{base}/{}", job_dir_name(old)))
                .unwrap_or_default(),
            old_job: restart_of.map(job_dir_name).unwrap_or_default(),
            force: j.sub.options & sub::RESTART_FORCE != 0,
        })
    }

    /// `bchkpnt [-f] [-k] [-p period]`: checkpoint a started checkpointable job (killed
    /// after it with `kill`); `period` (seconds) becomes its checkpoint period.
    pub fn checkpoint(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        kill: bool,
        force: bool,
        period: Option<i64>,
    ) -> Result<(), SchedError> {
        let j = self.control_target(caller, key)?;
        if !self.checkpointable(j) || self.forwarded_to(key).is_some() {
            return Err(SchedError::NotCheckpointable);
        }
        if !j.state.is_started() {
            return Err(SchedError::NotStarted);
        }
        if j.kill_ordered.is_some() || j.requeues.as_ref().is_some_and(|r| r.requeue_to != 0) {
            return Err(SchedError::Migrating);
        }
        if period.is_some_and(|p| p < 0) {
            return Err(SchedError::BadArgument(
                "Bad checkpoint period value".to_owned(),
            ));
        }
        let f = if kill { flags::KILL } else { 0 } | if force { flags::FORCE } else { 0 };
        self.order_checkpoint(now, key, f, period);
        Ok(())
    }

    /// Log the order of a checkpoint and send it to the job's sbatchd.
    pub(crate) fn order_checkpoint(
        &mut self,
        now: Millis,
        key: JobKey,
        f: u32,
        period: Option<i64>,
    ) {
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        let (attempt, host) = (j.attempt, j.hosts.first().cloned());
        self.emit(Event::ChkpntStart {
            time: secs(now),
            key,
            flags: f,
            period,
        });
        if let Some(host) = host {
            self.order_sbd(key, attempt, host, chkpnt_action(f));
        }
        if let Some(c) = self.jobs.get_mut(&key).and_then(|j| j.chk.as_mut()) {
            c.sent = true;
        }
    }

    /// Checkpoint orders of jobs on `host` that this mbatchd replayed but never sent
    /// (it restarted after logging them): sent again, once. A repeat of one sbatchd did
    /// get is merged with it, or answered after its outcome, which comes first.
    pub(crate) fn resend_checkpoints(&mut self, host: &str) {
        let again: Vec<(JobKey, u32, u32)> = self
            .started_on(host)
            .filter_map(|j| {
                let c = j.chk.as_deref()?;
                let (_, f) = c.in_flight.filter(|_| !c.sent)?;
                Some((j.key(), j.attempt, f))
            })
            .collect();
        for (key, attempt, f) in again {
            self.order_sbd(key, attempt, host.to_owned(), chkpnt_action(f));
            if let Some(c) = self.jobs.get_mut(&key).and_then(|j| j.chk.as_mut()) {
                c.sent = true;
            }
        }
    }

    /// sbatchd's answer to a checkpoint: logged as CHKPNT with the order's flags.
    pub(crate) fn chkpnt_report(
        &mut self,
        t: i64,
        key: JobKey,
        ok: bool,
        pid: u32,
        message: String,
    ) {
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        let f = j
            .chk
            .as_ref()
            .and_then(|c| c.in_flight)
            .map_or(0, |(_, f)| f);
        let period = self.chkpnt_period(j);
        self.emit(Event::ChkpntEnd {
            time: t,
            key,
            ok,
            pid,
            flags: f,
            period,
            message,
        });
    }

    /// Apply JOB_SIGACT SIG_CHKPNT ACT_START.
    pub(crate) fn apply_chkpnt_start(
        &mut self,
        time: i64,
        key: JobKey,
        f: u32,
        period: Option<i64>,
    ) {
        let Some(j) = self.jobs.get_mut(&key) else {
            return;
        };
        let c = j.chk.get_or_insert_with(Default::default);
        c.in_flight = Some((time, f));
        c.last_order = time;
        if period.is_some() {
            c.period = period;
        }
        let periodic = period.is_some_and(|p| p > 0);
        if periodic && j.state.is_started() {
            self.chk_periodic.insert(key);
        }
    }

    /// Apply CHKPNT: count a success; a failed migration checkpoint cancels the
    /// migration (the job keeps running).
    pub(crate) fn apply_chkpnt_end(
        &mut self,
        time: i64,
        key: JobKey,
        ok: bool,
        f: u32,
        message: &str,
    ) {
        let Some(j) = self.jobs.get_mut(&key) else {
            return;
        };
        let c = j.chk.get_or_insert_with(Default::default);
        c.in_flight = None;
        if ok {
            c.count += 1;
            c.last_ok = time;
            c.error.clear();
        } else {
            // (A CHKPNT of another product's log names no reason.)
            c.error = message.to_owned();
            if f & flags::MIG != 0
                && let Some(r) = j.requeues.as_mut()
            {
                r.requeue_to = 0;
                r.requeue_reason = 0;
            }
        }
    }

    /// Periodic checkpoints: a started job whose period has passed since its start or
    /// its last checkpoint order is checkpointed (running jobs only: a suspended one
    /// waits until it runs again).
    pub(crate) fn periodic_checkpoints(&mut self, now: Millis) {
        let t = secs(now);
        let mut due = Vec::new();
        let mut gone = Vec::new();
        for key in &self.chk_periodic {
            let Some(j) = self.jobs.get(key).filter(|j| j.state.is_started()) else {
                gone.push(*key);
                continue;
            };
            let Some(at) = self.next_checkpoint_at(j) else {
                gone.push(*key);
                continue;
            };
            let busy = j
                .chk
                .as_deref()
                .and_then(|c| c.in_flight)
                .is_some_and(|(since, _)| t - since < IN_FLIGHT_STALE_SECS);
            if j.state == JobState::Run
                && !busy
                && j.pid != 0
                && j.kill_ordered.is_none()
                && j.requeues.as_ref().is_none_or(|r| r.requeue_to == 0)
                && t >= at
            {
                due.push(*key);
            }
        }
        for key in gone {
            self.chk_periodic.remove(&key);
        }
        for key in due {
            self.order_checkpoint(now, key, 0, None);
        }
    }

    /// When (seconds) the job's next periodic checkpoint is due: a period after the last
    /// checkpoint ordered since its start, the first one the initial period (else a
    /// period) after its start; None: no periodic checkpoints.
    fn next_checkpoint_at(&self, j: &Job) -> Option<i64> {
        let period = self.chkpnt_period(j);
        let ordered = j
            .chk
            .as_deref()
            .map(|c| c.last_order)
            .filter(|t| *t > 0 && *t >= j.start_time);
        if let Some(last) = ordered {
            return (period > 0).then_some(last + period);
        }
        let init = self.chkpnt_cfg(j).map_or(0, |c| c.init);
        if init > 0 {
            return Some(j.start_time + init);
        }
        (period > 0).then_some(j.start_time + period)
    }

    /// A started checkpointable job with a period (or an initial period) is followed by
    /// the periodic checkpoints (called as it starts).
    pub(crate) fn follow_periodic(&mut self, key: JobKey) {
        if let Some(j) = self.jobs.get(&key)
            && self.next_checkpoint_at(j).is_some()
        {
            self.chk_periodic.insert(key);
        }
    }

    /// sbatchd could not restart the job from its checkpoint: back to PEND
    /// (PEND_JOB_RESTART_FILE), tried again after a scheduling interval.
    pub(crate) fn restart_failed(&mut self, t: i64, key: JobKey, message: String) {
        if let Some(c) = self
            .jobs
            .get_mut(&key)
            .map(|j| j.chk.get_or_insert_with(Default::default))
        {
            c.restart_error = message;
        }
        self.emit(crate::state_change(
            t,
            key,
            status::PEND,
            pend::RESTART_FILE,
            0,
        ));
    }
}

impl Sched {
    /// `brestart`: the submission of a new job that restarts `old` from its checkpoint
    /// in `given`'s checkpoint directory: `old`'s submission, with what `given` sets
    /// (queue, hosts, begin time, dependency, run limit, -x -B -N) over it, options
    /// SUB_RESTART (and SUB_RESTART_FORCE with `force`). Only who may control `old` may
    /// restart it; it must be known to mbatchd (not yet cleaned).
    pub fn restart_submission(
        &self,
        caller: &Caller,
        old: JobKey,
        given: &crate::Submission,
        force: bool,
    ) -> Result<crate::Submission, SchedError> {
        let j = self.jobs.get(&old).ok_or(SchedError::NoJob)?;
        if !self.may_control(caller, j) {
            return Err(SchedError::Permission);
        }
        if j.state.is_pending() {
            return Err(SchedError::NotStarted);
        }
        let gx = given.extras.as_deref().cloned().unwrap_or_default();
        if gx.chkpnt_dir.is_empty() {
            return Err(SchedError::BadArgument(
                "Checkpoint directory is required".to_owned(),
            ));
        }
        let mut s = (*j.sub).clone();
        // An array element restarts as a job of its own, named after its array.
        if j.idx > 0 {
            s.job_name = crate::Str::from(j.array_name());
        }
        s.options |= sub::RESTART | sub::CHKPNT_DIR;
        if force {
            s.options |= sub::RESTART_FORCE;
        } else {
            s.options &= !sub::RESTART_FORCE;
        }
        s.options |= given.options & (sub::EXCLUSIVE | sub::NOTIFY_BEGIN | sub::NOTIFY_END);
        if !given.queue.is_empty() {
            s.queue = given.queue.clone();
        } else {
            s.queue = j.queue.clone();
        }
        if !given.asked_hosts.is_empty() {
            s.asked_hosts = given.asked_hosts.clone();
            s.options |= sub::HOST;
        }
        if given.begin_time != 0 {
            s.begin_time = given.begin_time;
        }
        if !given.depend_cond.is_empty() {
            s.depend_cond = given.depend_cond.clone();
            s.options |= sub::DEPEND_COND;
        } else {
            s.depend_cond = crate::Str::EMPTY;
            s.options &= !sub::DEPEND_COND;
        }
        if given.rlimits[crate::RLIMIT_RUN] >= 0 {
            let mut l = *s.rlimits;
            l[crate::RLIMIT_RUN] = given.rlimits[crate::RLIMIT_RUN];
            s.rlimits = std::sync::Arc::new(l);
        }
        s.submit_token = given.submit_token.clone();
        s.from_host = given.from_host.clone();
        let mut x = s.extras.take().map(|b| *b).unwrap_or_default();
        x.chkpnt_dir = gx.chkpnt_dir;
        if given.options & sub::CHKPNT_PERIOD != 0 {
            x.chkpnt_period = gx.chkpnt_period;
            s.options |= sub::CHKPNT_PERIOD;
        }
        if !gx.chkpnt_method.is_empty() {
            x.chkpnt_method = gx.chkpnt_method;
        }
        x.restart_job = Some(old);
        s.extras = Some(Box::new(x));
        Ok(s)
    }
}

impl Sched {
    /// What a log switch carries of a job's checkpoints (after its current attempt's
    /// JOB_START): that it has one (the last, as JOB_SIGACT then CHKPNT: the count
    /// starts again at 1), the period bchkpnt -p set, why the last one failed, the order
    /// under way; and a migration or brequeue waiting for sbatchd's kill.
    pub(crate) fn carry_chkpnt(&self, j: &Job, t: i64, out: &mut Vec<Event>) {
        let key = j.key();
        if let Some(c) = j.chk.as_deref() {
            let at = |x: i64| if x > 0 { x } else { t };
            let period = self.chkpnt_period(j);
            let end = |time: i64, ok: bool, message: &str| Event::ChkpntEnd {
                time,
                key,
                ok,
                pid: 0,
                flags: 0,
                period,
                message: message.to_owned(),
            };
            if c.count > 0 {
                out.push(Event::ChkpntStart {
                    time: at(c.last_ok),
                    key,
                    flags: 0,
                    period: c.period,
                });
                out.push(end(at(c.last_ok), true, ""));
            }
            let period_left = if c.count > 0 { None } else { c.period };
            if !c.error.is_empty() || period_left.is_some() {
                out.push(Event::ChkpntStart {
                    time: at(c.last_order),
                    key,
                    flags: 0,
                    period: period_left,
                });
                out.push(end(at(c.last_order), false, &c.error));
            }
            if let Some((since, f)) = c.in_flight {
                out.push(Event::ChkpntStart {
                    time: since,
                    key,
                    flags: f,
                    period: None,
                });
            }
        }
        if j.state.is_started()
            && let Some(r) = j.requeues.as_deref().filter(|r| r.requeue_to != 0)
        {
            let (uid, user) = self.switch_user(&j.sub.user);
            out.push(if r.requeue_reason == pend::MIG {
                Event::JobMigrate {
                    time: t,
                    key,
                    uid,
                    user,
                    hosts: Vec::new(),
                }
            } else {
                Event::JobSignal {
                    time: t,
                    key,
                    uid,
                    user,
                    signal: if r.requeue_to == status::PSUSP {
                        "REQUEUE_PSUSP"
                    } else {
                        "REQUEUE_PEND"
                    }
                    .to_owned(),
                }
            });
        }
    }
}
