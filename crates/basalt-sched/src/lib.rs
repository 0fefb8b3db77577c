//! mbatchd's deterministic core: the batch state (jobs, queues, hosts), scheduling,
//! and job control.
//!
//! Inputs: the configuration ([`SchedConfig`]), time as a parameter (`now`, ms), requests
//! (submit, signal, switch, move, force, queue/host control), sbatchd hellos and reports,
//! LIM host information, and — on start — the events read back from lsb.events.
//! Outputs: [`Effect`]s the runtime must carry out (append to lsb.events / lsb.acct,
//! dispatch to or signal an sbatchd), answers, and read-only views for queries.
//!
//! Job arrays: a JOB_NEW whose job name is an array spec (`arr[1-10]%2`, see [`mod@array`])
//! creates the elements `(id, 1..n)` when applied, live and on replay alike; every later
//! event names one element. `-w` conditions are parsed by [`depend`] and evaluated each
//! scheduling pass to satisfied / not yet (reason 3) / never (reason 4).
//!
//! Log switching: the core counts the jobs purged from memory (LSF's numRemoveJobs) and
//! says when `MAX_JOB_NUM` is reached ([`Sched::switch_due`]); [`Sched::carry_over`] gives
//! the events a new lsb.events starts with — synthesized from the current state, so that
//! replaying the new file alone rebuilds it (see [`mod@switch`]).
//!
//! Lost hosts: a host whose sbatchd misses three hellos is `unreach` and its jobs show
//! `UNKWN`; once it has stayed so for `BASALT_HOST_LOST_GRACE` ([`SchedConfig`]),
//! [`Sched::tick`] gives up on its jobs — rerunnable ones (`bsub -r`, queue `RERUNNABLE`)
//! are requeued (JOB_STATUS PEND, PEND_JOB_REQUEUED) to the top of their queue, the
//! others end EXIT ([`TERM_HOST_LOST`]) — and [`Sched::sbd_hello`] orders a returning
//! sbatchd to kill the copies it still has.
//!
//! Rules (DESIGN.md 1–4): no I/O, no clocks, ordered collections only. Every change of
//! logged state is an [`Event`] applied by [`Sched::on_event`] — the same function replays
//! lsb.events on start — so a restarted mbatchd ends in the state it had. The runtime
//! makes each batch of `Log` effects durable before it carries out the other effects of
//! that batch or answers anybody.

pub mod array;
pub mod bounds;
mod config;
pub mod depend;
pub mod limits;
pub mod switch;
pub mod types;

pub use config::{DEFAULT_HOST_LOST_GRACE, SchedConfig, check_app_and_group};
pub use switch::CarryOver;
pub use types::*;

use basalt_core::job::{self as jobv, JobState, exit_reason, pend, status, sub, sub2, susp};
use depend::{Expr, IdxSel, Member, Target, Tri};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use thiserror::Error;

/// Pending reason: the array's `%k` limit of running elements is reached (LSF's
/// PEND_JOB_ARRAY_JLIMIT).
pub const PEND_ARRAY_LIMIT: u32 = 38;
/// Its text (basalt-core has no entry for it; mbatchd sends it as the reason's detail).
pub const PEND_ARRAY_LIMIT_TEXT: &str = "The job array has reached its running element limit";

/// How long the final state of a cleaned job is remembered for dependencies (seconds).
pub const GONE_KEEP_SECS: i64 = 7 * 24 * 3600;

/// A finished job purged from memory (JOB_CLEAN), kept for dependency conditions.
#[derive(Debug, Clone, PartialEq)]
pub struct Gone {
    pub user: String,
    pub job_name: String,
    pub seq: u64,
    pub state: JobState,
    pub exit_status: i32,
    /// When it was cleaned (seconds).
    pub cleaned: i64,
}

/// Why a request was refused; the texts are LSF's (without the trailing period).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchedError {
    #[error("Queue does not exist")]
    NoQueue,
    #[error("Queue has been closed")]
    QueueClosed,
    #[error("User cannot use the queue")]
    UserNotInQueue,
    #[error("Bad host name, host group name or cluster name")]
    BadHost,
    #[error("Bad argument")]
    BadArgument(String),
    #[error("User permission denied")]
    Permission,
    #[error("No matching job found")]
    NoJob,
    #[error("Job has already finished")]
    Finished,
    #[error("Job has already started")]
    Started,
    #[error("Job is not pending")]
    NotPending,
    #[error("No job slot available on the specified host(s)")]
    NoSlots,
    #[error("Bad dependency condition syntax")]
    BadDependency,
    #[error("Bad job name")]
    BadJobName,
    #[error("Bad resource requirement syntax")]
    BadResReq,
    #[error("Bad time specification")]
    BadTime,
    #[error("Start time is later than termination time")]
    StartAfterTerm,
    #[error("Too many processors requested")]
    TooManyProcessors,
    #[error("Cannot exceed queue's hard limit(s)")]
    OverLimit,
    #[error("Job array index error")]
    BadArrayIndex,
    #[error("Job array index too large")]
    ArrayTooLarge,
    /// Every id up to MAX_JOBID belongs to a job still in memory.
    #[error("No job ID available")]
    NoJobId,
    /// `bsub -app` of a profile lsb.applications does not define.
    #[error("Application profile does not exist")]
    NoApplication,
    /// `bsub -G` of a group lsb.users does not define.
    #[error("Bad user group name")]
    BadUserGroup,
    /// `bsub -G` of a group the user is not a member of.
    #[error("User not in the specified user group")]
    UserNotInGroup,
}

/// The answer for one job of a job-control request.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub key: JobKey,
    pub result: Result<String, SchedError>,
}

/// A job filter for queries (bjobs) and for `bkill 0`.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    /// Explicit jobs; (id, None) means every element of id.
    pub ids: Vec<(u64, Option<u32>)>,
    /// None = anybody; Some(user).
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    /// Pattern with `*` wildcards.
    pub job_name: Option<String>,
    /// LSF state bits; 0 = unfinished (plus finished for explicit ids).
    pub states: u32,
}

/// What sbatchd reported.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportKind {
    Started {
        pid: u32,
        pgid: u32,
    },
    Executing {
        exec_uid: u32,
        exec_user: String,
        exec_home: String,
        exec_cwd: String,
        pid: u32,
    },
    Usage(Usage),
    State {
        state: u32,
        reasons: u32,
        subreasons: u32,
    },
    Finished {
        exit_status: i32,
        usage: Usage,
        term_reason: String,
    },
    StartFailed {
        message: String,
    },
}

/// One sbatchd report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub host: String,
    pub key: JobKey,
    pub attempt: u32,
    pub seq: u64,
    /// Seconds since the epoch on the host.
    pub time: i64,
    pub kind: ReportKind,
}

/// mbatchd's answer to a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    Ok,
    NoJob,
    StopJob,
}

/// A job sbatchd says it holds, or mbatchd says is on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostJob {
    pub key: JobKey,
    pub attempt: u32,
    pub state: u32,
    pub pid: u32,
    pub pgid: u32,
}

/// How long sbatchd may stay silent before its host is `unreach` (ms), as a multiple of
/// the hello interval.
pub const UNREACH_AFTER_HELLOS: i64 = 3;

/// The term reason of a job that ended because its host was lost (LSF's code for jobs
/// removed from an unavailable host, REMOVE_HUNG_JOBS_FOR = host_unavail).
pub const TERM_HOST_LOST: &str = "TERM_REMOVE_HUNG_JOB";

/// The core.
#[derive(Debug)]
pub struct Sched {
    pub cfg: SchedConfig,
    pub jobs: BTreeMap<JobKey, Job>,
    pub queues: Vec<Queue>,
    pub hosts: Vec<Host>,
    /// The highest job id seen.
    pub last_job_id: u64,
    next_order: i64,
    /// JOB_NEW records applied (each job's [`Job::seq`]).
    next_seq: u64,
    /// Cleaned jobs' final states, for dependencies on them.
    pub gone: BTreeMap<JobKey, Gone>,
    gone_order: VecDeque<(i64, JobKey)>,
    /// The epoch of the last MBD_START seen (this term's after [`Sched::start`]).
    pub epoch: u64,
    /// When this mbatchd term started (ms).
    pub started_at: Millis,
    /// (time, master) of the last MBD_START applied.
    mbd_start: Option<(i64, String)>,
    /// LSF's numRemoveJobs: jobs purged from memory (JOB_CLEAN) since the last
    /// LOG_SWITCH (or since the start of the replayed log).
    num_remove_jobs: u64,
    /// Dispatches sent in this term whose answer has not come yet (not logged: a
    /// restarted mbatchd has none in flight).
    in_flight: BTreeSet<(JobKey, u32)>,
    /// Accepted jobs a host's sbatchd left out of its hellos, and how many times in a row.
    missing: BTreeMap<JobKey, u32>,
    effects: Vec<Effect>,
    /// Something changed that may let a job start.
    dirty: bool,
    /// The local minute of the week (0 = Sunday 00:00) for run and dispatch windows;
    /// None until the runtime sets it (windows are then taken as open).
    week_minute: Option<u32>,
}

impl Sched {
    pub fn new(cfg: SchedConfig, now: Millis) -> Sched {
        let queues = cfg.queues.clone();
        let hosts = cfg
            .hosts
            .iter()
            .map(|h| {
                let mut h = h.clone();
                h.sbd_seen = now;
                h
            })
            .collect();
        Sched {
            cfg,
            jobs: BTreeMap::new(),
            queues,
            hosts,
            last_job_id: 0,
            next_order: 0,
            next_seq: 0,
            gone: BTreeMap::new(),
            gone_order: VecDeque::new(),
            epoch: 0,
            started_at: now,
            mbd_start: None,
            num_remove_jobs: 0,
            in_flight: BTreeSet::new(),
            missing: BTreeMap::new(),
            effects: Vec::new(),
            dirty: true,
            week_minute: None,
        }
    }

    /// The local time as a minute of the week (0 = Sunday 00:00; the runtime converts
    /// its clock with the time zone). A window that opens or closes makes a pass due.
    pub fn set_week_minute(&mut self, minute: u32) {
        let before = self.week_minute.replace(minute);
        if before != Some(minute) {
            let any_window = self
                .queues
                .iter()
                .any(|q| q.run_windows.is_some() || q.dispatch_windows.is_some())
                || self.hosts.iter().any(|h| h.dispatch_window.is_some());
            if any_window {
                self.dirty = true;
            }
        }
    }

    fn window_open(&self, w: Option<&basalt_config::TimeWindow>) -> bool {
        match (w, self.week_minute) {
            (Some(w), Some(m)) => w.is_open_at_week_minute(m),
            _ => true,
        }
    }

    /// The queue dispatches now: its run and dispatch windows are open.
    pub fn queue_windows_open(&self, q: &Queue) -> bool {
        self.window_open(q.run_windows.as_ref()) && self.window_open(q.dispatch_windows.as_ref())
    }

    /// The effects produced since the last call, in order.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// Log and apply one event.
    fn emit(&mut self, ev: Event) {
        self.on_event(&ev);
        self.effects.push(Effect::Log(ev));
    }

    fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.iter().find(|q| q.name == name)
    }

    fn queue_mut(&mut self, name: &str) -> Option<&mut Queue> {
        self.queues.iter_mut().find(|q| q.name == name)
    }

    fn host_mut(&mut self, name: &str) -> Option<&mut Host> {
        self.hosts
            .iter_mut()
            .find(|h| basalt_core::same_host(&h.name, name))
    }

    /// The canonical name of a batch host.
    pub fn host_name(&self, name: &str) -> Option<String> {
        self.hosts
            .iter()
            .find(|h| basalt_core::same_host(&h.name, name))
            .map(|h| h.name.clone())
    }

    // ------------------------------------------------------------------ the one mutation path

    /// Apply a logged event. Used for live operation (through `emit`) and for replay.
    pub fn on_event(&mut self, ev: &Event) {
        self.dirty = true;
        match ev {
            Event::JobNew { time, job_id, sub } => {
                let _ = time;
                self.last_job_id = self.last_job_id.max(*job_id);
                self.next_seq += 1;
                // A reused id: what was remembered of the old job no longer applies.
                let old: Vec<JobKey> = self
                    .gone
                    .range((*job_id, 0)..=(*job_id, u32::MAX))
                    .map(|(k, _)| *k)
                    .collect();
                for k in old {
                    self.gone.remove(&k);
                }
                let hold = sub.options2 & sub2::HOLD != 0;
                let shared = Arc::new((**sub).clone());
                let dep = match depend::parse(&sub.depend_cond) {
                    Ok(e) => e.map(Arc::new),
                    // Accepted by another product or an older Basalt: never satisfied.
                    Err(_) => Some(Arc::new(Expr::Invalid)),
                };
                let (indices, limit) = elements_of(&sub.job_name);
                for idx in indices {
                    self.next_order += 1;
                    let job = Job {
                        id: *job_id,
                        idx,
                        sub: shared.clone(),
                        seq: self.next_seq,
                        array_limit: limit,
                        dep: dep.clone(),
                        state: if hold {
                            JobState::Psusp
                        } else {
                            JobState::Pend
                        },
                        queue: sub.queue.clone(),
                        order: self.next_order,
                        hosts: Vec::new(),
                        start_time: 0,
                        end_time: 0,
                        pid: 0,
                        pgid: 0,
                        exec_uid: 0,
                        exec_user: String::new(),
                        exec_home: String::new(),
                        exec_cwd: String::new(),
                        reasons: if hold { susp::USER_STOP } else { 0 },
                        subreasons: 0,
                        exit_status: 0,
                        cpu_time: 0.0,
                        term_reason: String::new(),
                        attempt: 0,
                        kill_as_done: false,
                        kill_ordered: None,
                        usage: Usage::default(),
                        pend_reasons: new_job_reasons(),
                        last_seq: 0,
                        resume_sent: false,
                        forced: false,
                        no_stop: false,
                        pending_action: None,
                    };
                    self.jobs.insert((*job_id, idx), job);
                }
            }
            Event::JobStart { time, key, hosts } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.state = JobState::Run;
                    j.hosts = hosts.clone();
                    j.start_time = *time;
                    j.attempt += 1;
                    j.pid = 0;
                    j.pgid = 0;
                    j.reasons = 0;
                    j.subreasons = 0;
                    j.last_seq = 0;
                    j.resume_sent = false;
                    j.kill_ordered = None;
                    j.pending_action = None;
                    j.pend_reasons = Arc::default();
                }
            }
            Event::JobStartAccept { key, pid, pgid, .. } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.pid = *pid;
                    j.pgid = *pgid;
                }
            }
            Event::JobExecute {
                key,
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
                ..
            } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.exec_uid = *exec_uid;
                    j.exec_user = exec_user.clone();
                    j.exec_home = exec_home.clone();
                    j.exec_cwd = exec_cwd.clone();
                    if *pid != 0 {
                        j.pid = *pid;
                    }
                }
            }
            Event::JobStatus {
                time,
                key,
                status: st,
                reasons,
                subreasons,
                cpu_time,
                end_time,
                usage,
                exit_status,
                term_reason,
            } => {
                let Some(j) = self.jobs.get_mut(key) else {
                    return;
                };
                let Some(new) = JobState::from_code(*st) else {
                    return;
                };
                j.reasons = *reasons;
                j.subreasons = *subreasons;
                if new.is_finished() {
                    j.end_time = if *end_time > 0 { *end_time } else { *time };
                    j.exit_status = *exit_status;
                    j.cpu_time = *cpu_time;
                    if let Some(u) = usage {
                        j.usage = u.clone();
                    }
                    let natural = new == JobState::Done && *exit_status == 0 && !j.kill_as_done;
                    j.term_reason = if !term_reason.is_empty() {
                        term_reason.clone()
                    } else if natural {
                        String::new()
                    } else {
                        j.kill_ordered.clone().unwrap_or_default()
                    };
                    j.pend_reasons = Arc::default();
                } else if new.is_pending() {
                    if j.state.is_started() {
                        // Requeued (dispatch failed or rerun): back to pending.
                        j.hosts.clear();
                        j.pid = 0;
                        j.pgid = 0;
                        j.start_time = 0;
                    }
                    if new == JobState::Pend && j.pend_reasons.is_empty() {
                        j.pend_reasons = new_job_reasons();
                    }
                }
                if new == JobState::Run {
                    j.resume_sent = false;
                }
                let rerun = is_rerun(j.state, new, *reasons);
                j.state = new;
                if rerun {
                    // A rerun goes before the jobs pending in its queue.
                    self.apply_move(*key, 1, 1);
                }
            }
            Event::JobSignal {
                key, signal, user, ..
            } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    match signal.as_str() {
                        "KILL" | "KILL_DONE" | "KILL_REMOVE" => {
                            if signal == "KILL_DONE" {
                                j.kill_as_done = true;
                            }
                            let term = if *user == j.sub.user {
                                "TERM_OWNER"
                            } else {
                                "TERM_ADMIN"
                            };
                            j.kill_ordered.get_or_insert_with(|| term.into());
                        }
                        "RESUME" => j.resume_sent = false,
                        _ => {}
                    }
                }
            }
            Event::JobSwitch { key, queue, .. } => {
                self.next_order += 1;
                let order = self.next_order;
                if let Some(j) = self.jobs.get_mut(key) {
                    j.queue = queue.clone();
                    j.order = order;
                    if j.state.is_pending() {
                        j.pend_reasons = Arc::new(BTreeMap::from([(pend::SWITCHED, Vec::new())]));
                    }
                }
            }
            Event::JobMove {
                key,
                position,
                base,
                ..
            } => self.apply_move(*key, *position, *base),
            Event::JobForce { key, no_stop, .. } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.forced = true;
                    j.no_stop = *no_stop;
                }
            }
            Event::JobClean { time, key } => {
                if let Some(j) = self.jobs.remove(key) {
                    self.num_remove_jobs += 1;
                    self.gone.insert(
                        *key,
                        Gone {
                            user: j.sub.user.clone(),
                            job_name: j.sub.job_name.clone(),
                            seq: j.seq,
                            state: j.state,
                            exit_status: j.exit_status,
                            cleaned: *time,
                        },
                    );
                    self.gone_order.push_back((*time, *key));
                }
                // Forget what is older than GONE_KEEP_SECS (decided by event times, so
                // replay forgets the same).
                while let Some(&(t, k)) = self.gone_order.front() {
                    if t >= *time - GONE_KEEP_SECS {
                        break;
                    }
                    self.gone_order.pop_front();
                    if self.gone.get(&k).is_some_and(|g| g.cleaned == t) {
                        self.gone.remove(&k);
                    }
                }
            }
            Event::QueueCtrl {
                op, queue, message, ..
            } => {
                if let Some(q) = self.queue_mut(queue) {
                    match op {
                        1 => q.open = true,
                        2 => q.open = false,
                        3 => q.active = true,
                        4 => q.active = false,
                        _ => {}
                    }
                    q.message = message.clone();
                }
            }
            Event::HostCtrl {
                op, host, message, ..
            } => {
                if let Some(h) = self.host_mut(host) {
                    match op {
                        1 => h.closed_adm = false,
                        2 => h.closed_adm = true,
                        _ => {}
                    }
                    h.message = message.clone();
                }
            }
            Event::MbdStart {
                time,
                master,
                epoch,
                ..
            } => {
                // Each MBD_START is a new term (the log need not carry the number).
                self.epoch = (self.epoch + 1).max(*epoch);
                self.mbd_start = Some((*time, master.clone()));
            }
            Event::MbdDie { .. } => {}
            Event::LogSwitch { last_job_id, .. } => {
                // The ids of jobs cleaned before the switch are never given out again.
                self.last_job_id = self.last_job_id.max(*last_job_id);
                self.num_remove_jobs = 0;
                // A switch carries only the cleaned jobs a dependency still names; the
                // rest are forgotten here, so the live core is what a replay of the new
                // file makes (and lsb.events does not grow with a week of cleaned jobs).
                let needed = self.gone_needed();
                self.gone.retain(|k, _| needed.contains(k));
                self.gone_order.retain(|(_, k)| needed.contains(k));
            }
        }
    }

    fn apply_move(&mut self, key: JobKey, position: u32, base: u32) {
        let Some(queue) = self.jobs.get(&key).map(|j| j.queue.clone()) else {
            return;
        };
        let mut pending: Vec<(i64, JobKey)> = self
            .jobs
            .values()
            .filter(|j| j.queue == queue && j.state.is_pending() && j.key() != key)
            .map(|j| (j.order, j.key()))
            .collect();
        pending.sort();
        let n = pending.len();
        let pos = (position.max(1) as usize - 1).min(n);
        let at = if base == 2 { n - pos } else { pos };
        let mut keys: Vec<JobKey> = pending.iter().map(|(_, k)| *k).collect();
        keys.insert(at, key);
        // Reuse the same set of order values, so jobs of other queues are unaffected.
        let mut orders: Vec<i64> = pending.iter().map(|(o, _)| *o).collect();
        if let Some(j) = self.jobs.get(&key) {
            orders.push(j.order);
        }
        orders.sort();
        for (k, o) in keys.into_iter().zip(orders) {
            if let Some(j) = self.jobs.get_mut(&k) {
                j.order = o;
            }
        }
    }

    // ------------------------------------------------------------------ start

    /// Called once after replay: logs MBD_START with a new epoch.
    pub fn start(&mut self, now: Millis, master: &str) {
        self.started_at = now;
        for h in &mut self.hosts {
            h.sbd_seen = now;
        }
        let ev = Event::MbdStart {
            time: secs(now),
            master: master.to_string(),
            cluster: self.cfg.cluster.clone(),
            num_hosts: self.hosts.len() as u32,
            num_queues: self.queues.len() as u32,
            epoch: self.epoch + 1,
        };
        self.emit(ev);
    }

    // ------------------------------------------------------------------ permissions

    fn is_admin(&self, c: &Caller) -> bool {
        c.uid == 0 || self.cfg.admins.iter().any(|a| a == &c.user)
    }

    /// The job's owner, a cluster administrator, or an administrator of the job's queue
    /// (lsb.queues ADMINISTRATORS) may control a job.
    fn may_control(&self, c: &Caller, j: &Job) -> bool {
        self.is_admin(c)
            || c.user == j.sub.user
            || self
                .queue(&j.sub.queue)
                .is_some_and(|q| q.administrators.iter().any(|a| a == &c.user))
    }

    // ------------------------------------------------------------------ submit

    /// bsub. On success the job exists and its JOB_NEW is among the effects; the caller
    /// answers only after the effects are durable. Returns (job id, queue, default queue).
    pub fn submit(
        &mut self,
        now: Millis,
        caller: &Caller,
        mut s: Submission,
    ) -> Result<(u64, String, bool), SchedError> {
        bounds::check_submission(&s)?;
        let default = s.queue.is_empty();
        if default {
            s.queue = self.cfg.default_queue.clone();
        }
        let Some(q) = self.queue(&s.queue) else {
            return Err(SchedError::NoQueue);
        };
        if !q.open {
            return Err(SchedError::QueueClosed);
        }
        if limits::exceeds(&s.rlimits, &q.rlimits) {
            return Err(SchedError::OverLimit);
        }
        if ((!q.users_all && !q.users.iter().any(|u| u == &caller.user))
            || q.users_except.iter().any(|u| u == &caller.user))
            && !self.is_admin(caller)
        {
            return Err(SchedError::UserNotInQueue);
        }
        let mut asked = Vec::new();
        for h in &s.asked_hosts {
            let name = h.trim_end_matches(|c: char| c == '+' || c.is_ascii_digit());
            let name = if name.is_empty() { h.as_str() } else { name };
            if name == "others" || name == "all" {
                continue;
            }
            match self.host_name(name) {
                Some(n) => asked.push(n),
                None => return Err(SchedError::BadHost),
            }
        }
        s.asked_hosts = asked;
        if s.max_processors != 0 && s.max_processors < s.num_processors {
            return Err(SchedError::BadArgument(
                "Bad argument for number of processors".into(),
            ));
        }
        s.num_processors = s.num_processors.max(1);
        s.max_processors = s.max_processors.max(s.num_processors);
        if let Some(spec) = array::parse(&s.job_name) {
            let spec = spec.map_err(|e| match e {
                array::ArrayError::BadIndex => SchedError::BadArrayIndex,
                array::ArrayError::TooLarge => SchedError::ArrayTooLarge,
            })?;
            if spec.count() > u64::from(self.cfg.max_job_array_size) {
                return Err(SchedError::ArrayTooLarge);
            }
        }
        if depend::parse(&s.depend_cond).is_err() {
            return Err(SchedError::BadDependency);
        }
        s.user = caller.user.clone();
        s.uid = caller.uid;
        if s.project.is_empty() {
            s.project = self.cfg.default_project.clone();
        }
        let time = secs(now);
        s.submit_time = time;
        let id = self.next_job_id().ok_or(SchedError::NoJobId)?;
        s.job_file = format!("{time}.{id}");
        let queue = s.queue.clone();
        self.emit(Event::JobNew {
            time,
            job_id: id,
            sub: Box::new(s),
        });
        Ok((id, queue, default))
    }

    /// The id the next submission gets: after the highest id seen, wrapping at
    /// MAX_JOBID and skipping ids still in use (None when every one is).
    fn next_job_id(&self) -> Option<u64> {
        let max = u64::from(self.cfg.max_jobid.max(1));
        let mut id = self.last_job_id % max + 1;
        for _ in 0..max {
            if self.jobs.range((id, 0)..=(id, u32::MAX)).next().is_none() {
                return Some(id);
            }
            id = id % max + 1;
        }
        None
    }

    // ------------------------------------------------------------------ queries

    /// The state a user sees: UNKWN for started jobs on hosts that cannot be reached.
    pub fn shown_state(&self, j: &Job) -> JobState {
        if j.state.is_started()
            && let Some(h) = j.hosts.first()
            && let Some(host) = self.hosts.iter().find(|x| &x.name == h)
            && matches!(
                self.host_status(host),
                HostStatus::Unreach | HostStatus::Unavail
            )
        {
            return JobState::Unkwn;
        }
        j.state
    }

    /// Jobs matching a query, in job-id order, and the explicit ids that matched nothing.
    pub fn query(&self, q: &JobQuery) -> (Vec<&Job>, Vec<(u64, Option<u32>)>) {
        let mut out = Vec::new();
        let mut not_found = Vec::new();
        let matches = |j: &Job, explicit: bool| -> bool {
            if let Some(u) = &q.user
                && &j.sub.user != u
            {
                return false;
            }
            if let Some(qn) = &q.queue
                && &j.queue != qn
            {
                return false;
            }
            if let Some(h) = &q.host
                && !j.hosts.iter().any(|x| basalt_core::same_host(x, h))
            {
                return false;
            }
            if let Some(p) = &q.job_name
                && !wildcard(p, &j.display_name())
                && !wildcard(p, &j.sub.job_name)
                && !(j.is_element() && wildcard(p, j.array_name()))
            {
                return false;
            }
            let st = self.shown_state(j);
            if q.states == 0 {
                explicit || !st.is_finished()
            } else {
                q.states & st.code() != 0
            }
        };
        if q.ids.is_empty() {
            for j in self.jobs.values() {
                if matches(j, false) {
                    out.push(j);
                }
            }
        } else {
            let mut seen = BTreeSet::new();
            for (id, idx) in &q.ids {
                let mut any = false;
                for j in self
                    .jobs
                    .range((*id, 0)..=(*id, u32::MAX))
                    .map(|(_, j)| j)
                    .filter(|j| idx.is_none_or(|i| j.idx == i))
                {
                    any = true;
                    if matches(j, true) && seen.insert(j.key()) {
                        out.push(j);
                    }
                }
                if !any {
                    not_found.push((*id, *idx));
                }
            }
        }
        self.listing_order(&mut out);
        (out, not_found)
    }

    /// LSF's bjobs order: started jobs, then pending jobs in the order they are considered
    /// for dispatch (queue priority, highest first, then queue name, then the position that
    /// submission, bswitch, btop and bbot give), then finished jobs; by job id within the
    /// started and the finished.
    pub fn listing_order(&self, jobs: &mut [&Job]) {
        let mut by_name: Vec<&Queue> = self.queues.iter().collect();
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        let qrank: HashMap<&str, (u32, usize)> = by_name
            .iter()
            .enumerate()
            .map(|(r, q)| (q.name.as_str(), (u32::MAX - q.priority, r)))
            .collect();
        jobs.sort_by_cached_key(|j| {
            if j.state.is_pending() {
                let (prio, name) = qrank
                    .get(j.queue.as_str())
                    .copied()
                    .unwrap_or((u32::MAX, usize::MAX));
                (1u8, prio, name, j.order, j.key())
            } else if j.state.is_finished() {
                (2, 0, 0, 0, j.key())
            } else {
                (0, 0, 0, 0, j.key())
            }
        });
    }

    /// The limits a job runs with: its own (`bsub -W -c -M ...`), else its queue's default,
    /// else its queue's maximum (lsb.queues `RUNLIMIT = [default] max` and the like).
    pub fn effective_rlimits(&self, j: &Job) -> [i64; 11] {
        match self.queue(&j.queue) {
            Some(q) => limits::effective(&j.sub.rlimits, &q.rlimits),
            None => j.sub.rlimits,
        }
    }

    /// Position (1-based) of a pending job in its queue.
    pub fn position(&self, j: &Job) -> u32 {
        if !j.state.is_pending() {
            return 0;
        }
        1 + self
            .jobs
            .values()
            .filter(|o| o.queue == j.queue && o.state.is_pending() && o.order < j.order)
            .count() as u32
    }

    /// Slots used on a host by started jobs.
    pub fn used_slots(&self, host: &str) -> u32 {
        self.jobs
            .values()
            .filter(|j| j.state.is_started())
            .map(|j| j.hosts.iter().filter(|h| *h == host).count() as u32)
            .sum()
    }

    /// (njobs, run, ssusp, ususp) slots on a host.
    pub fn host_counts(&self, host: &str) -> (u32, u32, u32, u32) {
        let mut c = (0, 0, 0, 0);
        for j in self.jobs.values().filter(|j| j.state.is_started()) {
            let n = j.hosts.iter().filter(|h| *h == host).count() as u32;
            if n == 0 {
                continue;
            }
            c.0 += n;
            match j.state {
                JobState::Run | JobState::Unkwn => c.1 += n,
                JobState::Ssusp => c.2 += n,
                JobState::Ususp => c.3 += n,
                _ => {}
            }
        }
        c
    }

    /// (njobs, pend, run, ssusp, ususp) slots of a queue.
    pub fn queue_counts(&self, queue: &str) -> (u32, u32, u32, u32, u32) {
        let mut c = (0, 0, 0, 0, 0);
        for j in self.jobs.values().filter(|j| j.queue == queue) {
            let n = j.slots();
            match j.state {
                JobState::Pend | JobState::Psusp => c.1 += n,
                JobState::Run | JobState::Unkwn => c.2 += n,
                JobState::Ssusp => c.3 += n,
                JobState::Ususp => c.4 += n,
                _ => continue,
            }
            c.0 += n;
        }
        c
    }

    /// bhosts status of a host.
    pub fn host_status(&self, h: &Host) -> HostStatus {
        if h.lim == LimStatus::Unavail {
            return HostStatus::Unavail;
        }
        if h.sbd_failed {
            return HostStatus::Unreach;
        }
        if h.closed_adm {
            return HostStatus::Closed(ClosedReason::Adm);
        }
        if h.lim == LimStatus::Unknown {
            return HostStatus::Closed(ClosedReason::Lim);
        }
        if self.jobs.values().any(|j| {
            j.state.is_started() && j.sub.options & sub::EXCLUSIVE != 0 && j.hosts.contains(&h.name)
        }) {
            return HostStatus::Closed(ClosedReason::Excl);
        }
        if !self.window_open(h.dispatch_window.as_ref()) {
            return HostStatus::Closed(ClosedReason::Wind);
        }
        if let Some(max) = h.max_slots()
            && self.used_slots(&h.name) >= max
        {
            return HostStatus::Closed(ClosedReason::Full);
        }
        if Self::beyond_sched(h, &h.load_sched).is_some() {
            return HostStatus::Closed(ClosedReason::Busy);
        }
        HostStatus::Ok
    }

    // ------------------------------------------------------------------ host information

    /// LIM's view of a host: static info and status, and its current load.
    pub fn lim_update(
        &mut self,
        host: &str,
        ncpus: u32,
        cpu_factor: f64,
        ok: bool,
        load: BTreeMap<String, f64>,
    ) {
        let mut changed = false;
        if let Some(h) = self.host_mut(host) {
            let lim = if ok {
                LimStatus::Ok
            } else {
                LimStatus::Unavail
            };
            changed = h.lim != lim || (ncpus > 0 && h.ncpus != ncpus);
            h.lim = lim;
            if ncpus > 0 {
                h.ncpus = ncpus;
            }
            h.cpu_factor = cpu_factor;
            h.load = load;
        }
        // A load that crosses a scheduling threshold may let a pending job start.
        if let Some(i) = self
            .hosts
            .iter()
            .position(|h| basalt_core::same_host(&h.name, host))
        {
            let now_ok = self.threshold_view(&self.hosts[i]);
            if self.hosts[i].thresholds_ok != now_ok
                && self.jobs.values().any(|j| j.state == JobState::Pend)
            {
                changed = true;
            }
            self.hosts[i].thresholds_ok = now_ok;
        }
        if changed {
            self.dirty = true;
        }
    }

    /// sbatchd said hello. Returns the jobs mbatchd believes run there. Every unfinished
    /// copy sbatchd lists of a job mbatchd gave up on (requeued, rerun, ended as lost,
    /// or cleaned since) or of an older attempt is ordered killed.
    pub fn sbd_hello(&mut self, now: Millis, host: &str, jobs: &[HostJob]) -> Vec<HostJob> {
        let Some(name) = self.host_name(host) else {
            return Vec::new();
        };
        let mut back = false;
        if let Some(h) = self.host_mut(&name) {
            back = h.sbd_failed;
            h.sbd_seen = now;
            h.sbd_failed = false;
        }
        if back {
            self.dirty = true;
        }
        self.reconcile(now, &name, jobs);
        // Kills that may not have arrived (the host was unreachable) are sent again;
        // sbatchd ignores a kill already in progress.
        let resend: Vec<Effect> = self
            .jobs
            .values()
            .filter(|j| j.state.is_started() && j.hosts.first() == Some(&name))
            .filter_map(|j| {
                j.kill_ordered.as_ref().map(|term| Effect::Signal {
                    key: j.key(),
                    attempt: j.attempt,
                    host: name.clone(),
                    action: SbdAction::Kill {
                        term_reason: term.clone(),
                    },
                })
            })
            .collect();
        self.effects.extend(resend);
        // Copies mbatchd gave up on (the host was lost: the job was requeued, rerun or
        // ended EXIT) or that an older attempt left behind must go. A copy of a job that
        // ended otherwise (bkill -r while the host was away) is answered StopJob when
        // sbatchd asks about it.
        let stale: Vec<Effect> = jobs
            .iter()
            .filter(|h| JobState::from_code(h.state).is_none_or(|st| !st.is_finished()))
            .filter(|h| match self.jobs.get(&h.key) {
                Some(j) => {
                    j.attempt != h.attempt
                        || j.state.is_pending()
                        || (j.state.is_finished() && j.term_reason == TERM_HOST_LOST)
                }
                None => self.gone.contains_key(&h.key),
            })
            .map(|h| Effect::Signal {
                key: h.key,
                attempt: h.attempt,
                host: name.clone(),
                action: SbdAction::Kill {
                    term_reason: TERM_HOST_LOST.to_string(),
                },
            })
            .collect();
        self.effects.extend(stale);
        self.jobs
            .values()
            .filter(|j| j.state.is_started() && j.hosts.first() == Some(&name))
            .map(|j| HostJob {
                key: j.key(),
                attempt: j.attempt,
                state: j.state.code(),
                pid: j.pid,
                pgid: j.pgid,
            })
            .collect()
    }

    /// Compare what mbatchd believes runs on `host` with what its sbatchd says it has.
    ///
    /// * A job dispatched by an earlier mbatchd term whose dispatch sbatchd never accepted
    ///   (mbatchd died between logging JOB_START and sending it) and that sbatchd does not
    ///   have was never started: it goes back to PEND (or ends, if a kill was ordered).
    ///   A dispatch of this term still in flight is left alone.
    /// * An accepted job that sbatchd leaves out of two hellos in a row is lost (sbatchd
    ///   lost its state): it ends as EXIT, killed by signal 9.
    fn reconcile(&mut self, now: Millis, host: &str, listed: &[HostJob]) {
        let listed: BTreeSet<(JobKey, u32)> = listed.iter().map(|h| (h.key, h.attempt)).collect();
        let ours: Vec<(JobKey, u32, bool, Option<String>)> = self
            .jobs
            .values()
            .filter(|j| j.state.is_started() && j.hosts.first().map(String::as_str) == Some(host))
            .map(|j| (j.key(), j.attempt, j.pid == 0, j.kill_ordered.clone()))
            .collect();
        let t = secs(now);
        for (key, attempt, unaccepted, kill) in ours {
            if listed.contains(&(key, attempt)) {
                self.missing.remove(&key);
                continue;
            }
            if unaccepted && self.in_flight.contains(&(key, attempt)) {
                continue;
            }
            // Missing from two hellos in a row: one hello may have been built just before
            // a dispatch arrived.
            let n = self.missing.entry(key).or_insert(0);
            *n += 1;
            if *n < 2 {
                continue;
            }
            self.missing.remove(&key);
            if unaccepted {
                match kill {
                    Some(term) => self.finish(t, key, status::EXIT, 0, 0, None, term),
                    None => self.emit(state_change(t, key, status::PEND, pend::SBD_UNREACH, 0)),
                }
                continue;
            }
            self.finish(t, key, status::EXIT, 0, 9, None, String::new());
        }
    }

    /// The dispatch of `key` may or may not have reached sbatchd on `host` (the call
    /// failed after the request went out: a timeout, a broken connection). The job stays
    /// dispatched; the host's next hellos tell whether sbatchd has it (it runs) or not
    /// (back to PEND), and a host that stays silent is handled as a lost host. Requeueing
    /// at once could run the job twice.
    pub fn dispatch_uncertain(&mut self, key: JobKey, attempt: u32, host: &str) {
        self.in_flight.remove(&(key, attempt));
        if let Some(h) = self.host_mut(host) {
            h.sbd_failed = true;
        }
        self.dirty = true;
    }

    /// Timers: sbatchd silence, lost hosts, CLEAN_PERIOD.
    pub fn tick(&mut self, now: Millis) {
        let silence = UNREACH_AFTER_HELLOS * i64::from(self.cfg.hello_interval_secs) * 1000;
        for h in &mut self.hosts {
            if !h.sbd_failed && now - h.sbd_seen > silence {
                h.sbd_failed = true;
                self.dirty = true;
            }
        }
        // bresume'd jobs wait for their host's load, which changes without an event:
        // look at them on every tick (cheap: no full scheduling pass).
        if self.jobs.values().any(|j| self.waits_for_resume(j)) {
            self.resume_pass(now);
        }
        // bsub -t: a job still pending at its termination time never starts (EXIT,
        // TERM_DEADLINE); a running one is ended by its sbatchd.
        let t = secs(now);
        let too_late: Vec<JobKey> = self
            .jobs
            .values()
            .filter(|j| j.state.is_pending() && j.sub.term_time > 0 && j.sub.term_time <= t)
            .map(|j| j.key())
            .collect();
        for key in too_late {
            self.finish(t, key, status::EXIT, 0, 0, None, "TERM_DEADLINE".into());
        }
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
        let old: Vec<(JobKey, String)> = self
            .jobs
            .values()
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
                self.effects.push(Effect::RemoveJobFile { job_file: file });
            }
        }
    }

    /// Is the job rerunnable (`bsub -r`, or its queue has `RERUNNABLE = yes`)?
    pub fn rerunnable(&self, j: &Job) -> bool {
        j.sub.options & sub::RERUNNABLE != 0 || self.queue(&j.queue).is_some_and(|q| q.rerunnable)
    }

    /// The host's sbatchd has been silent for the unreach time plus `BASALT_HOST_LOST_GRACE`:
    /// mbatchd gives up on the jobs started there (on it as their first host). A job with a
    /// kill order ends EXIT with the kill's term reason; a rerunnable job is requeued to PEND
    /// (reason PEND_JOB_REQUEUED) at the top of its queue, to run again elsewhere with a
    /// new attempt number; any other job ends EXIT, TERM_REMOVE_HUNG_JOB, as if killed by
    /// signal 9. That holds for a job whose dispatch was never answered too: after a
    /// failover the answer may have been lost with the old mbatchd while the job ran, so
    /// it is not assumed to have never started (running it again would run it twice).
    /// If the host comes back, its sbatchd is told to kill the old copies
    /// ([`Sched::sbd_hello`]).
    fn give_up_host(&mut self, now: Millis, host: &str) {
        let mut jobs: Vec<(i64, JobKey)> = self
            .jobs
            .values()
            .filter(|j| {
                j.state.is_started()
                    && j.hosts.first().map(String::as_str) == Some(host)
                    && !self.in_flight.contains(&(j.key(), j.attempt))
            })
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
            let (kill, rerun) = (j.kill_ordered.clone(), self.rerunnable(j));
            self.missing.remove(&key);
            if let Some(term) = kill {
                self.finish(t, key, status::EXIT, 0, 9, None, term);
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
        self.in_flight.remove(&(key, attempt));
        if let Some(h) = self.host_mut(host) {
            h.sbd_failed = true;
        }
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        if j.attempt != attempt || j.state != JobState::Run || j.pid != 0 {
            return;
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
    fn order_sbd(&mut self, key: JobKey, attempt: u32, host: String, action: SbdAction) {
        if let Some(j) = self.jobs.get_mut(&key)
            && j.pid == 0
        {
            if !matches!(j.pending_action, Some(SbdAction::Kill { .. })) {
                j.pending_action = Some(action);
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

    fn flush_pending(&mut self, key: JobKey) {
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
            action,
        });
    }

    /// sbatchd answered the dispatch with a refusal (the user does not exist there, the
    /// job file is unreadable, ...): the job exits (EXIT_INIT_ENVIRON).
    pub fn start_failed(&mut self, now: Millis, key: JobKey, attempt: u32) {
        self.in_flight.remove(&(key, attempt));
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
        self.in_flight.remove(&(key, attempt));
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

    // ------------------------------------------------------------------ reports

    /// Apply one sbatchd report (idempotent for repeats).
    pub fn report(&mut self, now: Millis, r: Report) -> Ack {
        let Some(j) = self.jobs.get(&r.key) else {
            return Ack::NoJob;
        };
        if r.attempt != j.attempt {
            return Ack::StopJob;
        }
        if j.state.is_finished() || j.state.is_pending() {
            // Removed (bkill -r) or requeued meanwhile: the copy must go.
            return if matches!(
                r.kind,
                ReportKind::Finished { .. } | ReportKind::StartFailed { .. }
            ) {
                Ack::Ok
            } else {
                Ack::StopJob
            };
        }
        if r.seq != 0 && r.seq <= j.last_seq {
            return Ack::Ok;
        }
        let key = r.key;
        let t = if r.time > 0 { r.time } else { secs(now) };
        if let Some(j) = self.jobs.get_mut(&key) {
            j.last_seq = r.seq;
        }
        match r.kind {
            ReportKind::Started { pid, pgid } => {
                if self.jobs.get(&key).is_some_and(|j| j.pid == 0) {
                    self.emit(Event::JobStartAccept {
                        time: t,
                        key,
                        pid,
                        pgid,
                    });
                    self.flush_pending(key);
                }
            }
            ReportKind::Executing {
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
            } => self.emit(Event::JobExecute {
                time: t,
                key,
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
            }),
            ReportKind::Usage(u) => {
                if let Some(j) = self.jobs.get_mut(&key) {
                    j.usage = Usage { time: t, ..u };
                }
            }
            ReportKind::State {
                state,
                reasons,
                subreasons,
            } => {
                if JobState::from_code(state).is_some_and(|s| s.is_started()) {
                    self.emit(state_change(t, key, state, reasons, subreasons));
                }
            }
            ReportKind::Finished {
                exit_status,
                usage,
                term_reason,
            } => {
                let as_done = self.jobs.get(&key).is_some_and(|j| j.kill_as_done);
                let ordered = self.jobs.get(&key).and_then(|j| j.kill_ordered.clone());
                let term = if term_reason.is_empty() {
                    ordered.filter(|_| exit_status != 0).unwrap_or_default()
                } else {
                    term_reason
                };
                let st = if exit_status == 0 || as_done {
                    status::DONE
                } else {
                    status::EXIT
                };
                self.finish(t, key, st, 0, exit_status, Some(usage), term);
            }
            ReportKind::StartFailed { message } => {
                let _ = message;
                self.finish(
                    t,
                    key,
                    status::EXIT,
                    exit_reason::INIT_ENVIRON,
                    256,
                    None,
                    String::new(),
                );
            }
        }
        Ack::Ok
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        t: i64,
        key: JobKey,
        st: u32,
        reasons: u32,
        exit_status: i32,
        usage: Option<Usage>,
        term_reason: String,
    ) {
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
        self.effects.push(Effect::Acct(key));
    }

    // ------------------------------------------------------------------ job control

    fn control_target(&self, caller: &Caller, key: JobKey) -> Result<&Job, SchedError> {
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
        let reasons = if caller.user == j.sub.user {
            susp::USER_STOP
        } else {
            susp::ADMIN_STOP
        };
        match j.state {
            JobState::Pend => {
                self.emit(state_change(t, key, status::PSUSP, reasons, 0));
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
    /// scheduling pass when the host's load allows.
    pub fn resume(&mut self, now: Millis, caller: &Caller, key: JobKey) -> Result<(), SchedError> {
        let j = self.control_target(caller, key)?;
        let t = secs(now);
        let (st, reasons) = match j.state {
            JobState::Psusp => (status::PEND, 0),
            JobState::Ususp => (status::SSUSP, susp::USER_RESUME),
            _ => return Ok(()),
        };
        self.emit(state_change(t, key, st, reasons, 0));
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
        if !self.is_admin(caller) {
            return Err(SchedError::Permission);
        }
        let name = self.host_name(host).ok_or(SchedError::BadHost)?;
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

    // ------------------------------------------------------------------ scheduling

    /// Whether a scheduling pass could do something (cleared by [`Sched::schedule`]).
    pub fn needs_pass(&self) -> bool {
        self.dirty
    }

    fn start_job(&mut self, now: Millis, key: JobKey, alloc: Vec<String>) {
        let idx: Vec<usize> = alloc
            .iter()
            .filter_map(|h| {
                self.hosts
                    .iter()
                    .position(|x| basalt_core::same_host(&x.name, h))
            })
            .collect();
        self.start_job_at(now, key, alloc, &idx);
    }

    /// [`Sched::start_job`] with the hosts' indices known.
    fn start_job_at(&mut self, now: Millis, key: JobKey, alloc: Vec<String>, idx: &[usize]) {
        let first = alloc[0].clone();
        self.emit(Event::JobStart {
            time: secs(now),
            key,
            hosts: alloc,
        });
        for &i in idx {
            if let Some(host) = self.hosts.get_mut(i) {
                host.last_dispatch = now;
            }
        }
        let attempt = self.jobs.get(&key).map_or(1, |j| j.attempt);
        self.in_flight.insert((key, attempt));
        self.effects.push(Effect::Dispatch {
            key,
            attempt,
            host: first,
        });
    }

    /// Within the queue's and the host's (lsb.hosts) loadSched thresholds? Run-queue
    /// lengths are compared as effective values. The error is the pending reason of
    /// the first index beyond a threshold.
    fn load_ok(&self, q: &Queue, h: &Host) -> Result<(), u32> {
        let q_bad = Self::beyond_sched(h, &q.load_sched);
        let h_bad = Self::beyond_sched(h, &h.load_sched);
        match q_bad.into_iter().chain(h_bad).min() {
            Some(i) => Err(pend::LOAD_BASE + i as u32),
            None => Ok(()),
        }
    }

    /// A host's load index as thresholds and conditions see it (run queues effective).
    fn load_value(h: &Host, name: &str) -> Option<f64> {
        let v = *h.load.get(name)?;
        Some(if matches!(name, "r15s" | "r1m" | "r15m") {
            basalt_core::effective_run_queue(v, h.ncpus.max(1), h.cpu_factor.max(0.01))
        } else {
            v
        })
    }

    /// Which scheduling thresholds (the host's own, then each queue's) the host's load
    /// is within now.
    fn threshold_view(&self, h: &Host) -> Vec<bool> {
        std::iter::once(&h.load_sched)
            .chain(self.queues.iter().map(|q| &q.load_sched))
            .filter(|t| !t.is_empty())
            .map(|t| Self::beyond_sched(h, t).is_none())
            .collect()
    }

    /// The first built-in index (LSF's number) whose load on `h` is beyond its
    /// loadSched in `sched`; run-queue lengths effective.
    fn beyond_sched(h: &Host, sched: &BTreeMap<String, f64>) -> Option<usize> {
        for (i, idx) in basalt_core::BUILTIN_INDICES.iter().enumerate() {
            let name = idx.name();
            let Some(limit) = sched.get(name) else {
                continue;
            };
            let Some(mut v) = h.load.get(name).copied() else {
                continue;
            };
            if matches!(name, "r15s" | "r1m" | "r15m") {
                v = basalt_core::effective_run_queue(v, h.ncpus.max(1), h.cpu_factor.max(0.01));
            }
            let bad = if idx.increasing() {
                v > *limit
            } else {
                v < *limit
            };
            if bad {
                return Some(i);
            }
        }
        None
    }

    /// One scheduling pass: resume user-resumed jobs whose host allows it, then visit
    /// pending jobs by queue priority and FCFS order and dispatch what fits.
    ///
    /// Hosts are evaluated by index. What depends only on (queue, host) — queue hosts,
    /// LIM and sbatchd status, closed, dispatch window, load thresholds — is computed once
    /// per queue per pass. The evaluation of every host for a job *shape* (queue, asked
    /// hosts, exclusive, slots, span, and the user when a host has a JL/U limit) is kept
    /// ([`Shape`]) until a placement changes what hosts hold: a placement for the same
    /// shape re-evaluates only the hosts it used, one for another shape invalidates it.
    /// So a pass costs about one host sweep per shape plus one per change, not one per
    /// job, and jobs that cannot start share one set of pending reasons.
    pub fn schedule(&mut self, now: Millis) {
        self.dirty = false;
        self.resume_pass(now);
        // Queue priority (highest first), then queue name, then submission order.
        let mut by_name: Vec<usize> = (0..self.queues.len()).collect();
        by_name.sort_by(|a, b| self.queues[*a].name.cmp(&self.queues[*b].name));
        let mut name_rank = vec![0usize; self.queues.len()];
        for (r, qi) in by_name.into_iter().enumerate() {
            name_rank[qi] = r;
        }
        let qindex: HashMap<&str, usize> = self
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| (q.name.as_str(), i))
            .collect();
        let nh = self.hosts.len();
        let index: HashMap<&str, usize> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i))
            .collect();
        let track_user = self.hosts.iter().any(|h| h.jl_u.is_some());
        let track_qhost = self.queues.iter().any(|q| q.hjob_limit.is_some());
        // Slots in use, by host index, kept up to date as jobs are placed in this pass.
        let mut st = PassState {
            used: vec![0; nh],
            excl: vec![false; nh],
            used_user: HashMap::new(),
            q_host: HashMap::new(),
        };
        let mut q_used: BTreeMap<String, u32> = BTreeMap::new();
        let mut q_user: BTreeMap<(String, String), u32> = BTreeMap::new();
        // Started elements of arrays with a %k limit.
        let mut array_started: BTreeMap<u64, u32> = BTreeMap::new();
        // One walk over the jobs: the pending ones in the order they are visited, what
        // the started ones hold.
        let mut order: Vec<PendRec> = Vec::new();
        for j in self.jobs.values() {
            if j.state == JobState::Pend {
                let Some(&qi) = qindex.get(j.queue.as_str()) else {
                    continue;
                };
                order.push(PendRec {
                    rank: (
                        u32::MAX - self.queues[qi].priority,
                        name_rank[qi],
                        j.order,
                        j.key(),
                    ),
                    qi,
                    sub: j.sub.clone(),
                    has_dep: j.dep.is_some(),
                    array_limit: j.array_limit,
                    need: j.slots(),
                });
            } else if j.state.is_started() {
                for h in &j.hosts {
                    let Some(&i) = index.get(h.as_str()) else {
                        continue;
                    };
                    st.take(i, &j.queue, &j.sub.user, track_user, track_qhost);
                    if j.sub.options & sub::EXCLUSIVE != 0 {
                        st.excl[i] = true;
                    }
                }
                *q_used.entry(j.queue.clone()).or_default() += j.slots();
                *q_user
                    .entry((j.queue.clone(), j.sub.user.clone()))
                    .or_default() += j.slots();
                if j.array_limit.is_some() {
                    *array_started.entry(j.id).or_default() += 1;
                }
            }
        }
        drop(index);
        drop(qindex);
        order.sort_unstable_by_key(|r| r.rank);
        // Dependencies are evaluated once, before this pass places anything; the elements
        // of an array share one value unless the condition names `[*]`.
        let mut deps: BTreeMap<JobKey, Tri> = BTreeMap::new();
        let mut per_array: BTreeMap<u64, Tri> = BTreeMap::new();
        for rec in order.iter().filter(|r| r.has_dep) {
            let key = rec.rank.3;
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let Some(e) = &j.dep else {
                continue;
            };
            let shared = j.is_element() && !e.uses_own_index();
            let cached = if shared {
                per_array.get(&j.id).copied()
            } else {
                None
            };
            let Some(t) = cached.or_else(|| self.dependency(j)) else {
                continue;
            };
            if shared {
                per_array.insert(j.id, t);
            }
            deps.insert(key, t);
        }
        let accept_ms = i64::from(self.cfg.job_accept_interval)
            * i64::from(self.cfg.mbd_sleep_time_secs)
            * 1000;
        let t = secs(now);
        // Per queue: the (queue, host) checks, and whether its windows are open.
        let mut statics: Vec<Option<(bool, Vec<StaticWhy>)>> = vec![None; self.queues.len()];
        let mut shapes: HashMap<ShapeKey, Shape> = HashMap::new();
        // Bumped by every placement: a shape evaluated at another generation is stale.
        let mut generation: u64 = 0;
        // Pending reasons to set, applied in one walk at the end.
        let mut assign: Vec<(JobKey, PendReasons)> = Vec::new();
        for rec in order {
            let (key, qi, need) = (rec.rank.3, rec.qi, rec.need);
            let sub = &rec.sub;
            if statics[qi].is_none() {
                let q = &self.queues[qi];
                let per_host = self.hosts.iter().map(|h| self.static_why(q, h)).collect();
                statics[qi] = Some((self.queue_windows_open(q), per_host));
            }
            let Some((windows_open, per_host)) = &statics[qi] else {
                continue;
            };
            let q = &self.queues[qi];
            let early = if !q.active {
                Some(pend::QUEUE_INACT)
            } else if !windows_open {
                Some(pend::QUEUE_WINDOW)
            } else if sub.begin_time > t {
                Some(pend::START_TIME)
            } else if let Some(d) = deps.get(&key).filter(|d| **d != Tri::Yes) {
                Some(if *d == Tri::Never {
                    pend::DEPEND_INVALID
                } else {
                    pend::DEPEND
                })
            } else if rec
                .array_limit
                .is_some_and(|k| array_started.get(&key.0).copied().unwrap_or(0) >= k)
            {
                Some(PEND_ARRAY_LIMIT)
            } else if q
                .qjob_limit
                .is_some_and(|l| q_used.get(&q.name).copied().unwrap_or(0) + need > l)
            {
                Some(pend::QUEUE_JOB_LIMIT)
            } else if q.ujob_limit.is_some_and(|l| {
                q_user
                    .get(&(q.name.clone(), sub.user.clone()))
                    .copied()
                    .unwrap_or(0)
                    + need
                    > l
            }) {
                Some(pend::QUEUE_USER_LIMIT)
            } else {
                None
            };
            if let Some(code) = early {
                assign.push((key, Arc::new(BTreeMap::from([(code, Vec::new())]))));
                continue;
            }
            let exclusive = sub.options & sub::EXCLUSIVE != 0 || q.exclusive;
            let span = span_of(&sub.res_req);
            // `-n min,max`: as many slots as are free up to max, within the queue's
            // QJOB_LIMIT and UJOB_LIMIT (the checks above leave room for at least min).
            let mut most = sub.max_processors.max(need);
            if let Some(l) = q.qjob_limit {
                most = most.min(l.saturating_sub(q_used.get(&q.name).copied().unwrap_or(0)));
            }
            if let Some(l) = q.ujob_limit {
                let u = q_user
                    .get(&(q.name.clone(), sub.user.clone()))
                    .copied()
                    .unwrap_or(0);
                most = most.min(l.saturating_sub(u));
            }
            let most = most.max(need);
            let shape_key = ShapeKey {
                queue: qi,
                user: track_user.then(|| sub.user.clone()),
                asked: sub.asked_hosts.clone(),
                exclusive,
                need,
                most,
                span,
            };
            let job = JobFit {
                queue: q,
                sub,
                exclusive,
                most,
            };
            let shape = shapes.entry(shape_key.clone()).or_insert_with(|| Shape {
                generation: u64::MAX,
                cands: BTreeSet::new(),
                cur: Vec::new(),
                why: Vec::new(),
                reasons: None,
            });
            if shape.generation != generation {
                shape.generation = generation;
                shape.cands.clear();
                shape.cur.clear();
                shape.cur.resize(nh, None);
                shape.why.clear();
                shape.why.resize(nh, None);
                shape.reasons = None;
                for i in 0..nh {
                    match self.host_fit(now, accept_ms, &job, &st, per_host, i) {
                        Ok(c) => {
                            shape.cands.insert(CandKey(c));
                            shape.cur[i] = Some(c);
                        }
                        Err(code) => shape.why[i] = Some(code),
                    }
                }
            }
            match allocate(shape.cands.iter().map(|c| &c.0), need, most, span) {
                Some(alloc) => {
                    let qname = q.name.clone();
                    for &i in &alloc {
                        st.take(i, &qname, &sub.user, track_user, track_qhost);
                        if exclusive {
                            st.excl[i] = true;
                        }
                    }
                    let taken = alloc.len() as u32;
                    *q_used.entry(qname.clone()).or_default() += taken;
                    *q_user.entry((qname.clone(), sub.user.clone())).or_default() += taken;
                    if rec.array_limit.is_some() {
                        *array_started.entry(key.0).or_default() += 1;
                    }
                    let names = alloc.iter().map(|&i| self.hosts[i].name.clone()).collect();
                    self.start_job_at(now, key, names, &alloc);
                    generation += 1;
                    // Only the hosts just used changed: bring this shape up to date.
                    let mut touched = alloc;
                    touched.sort_unstable();
                    touched.dedup();
                    let job = JobFit {
                        queue: &self.queues[qi],
                        sub,
                        exclusive,
                        most,
                    };
                    let Some(shape) = shapes.get_mut(&shape_key) else {
                        continue;
                    };
                    for i in touched {
                        if let Some(old) = shape.cur[i].take() {
                            shape.cands.remove(&CandKey(old));
                        }
                        shape.why[i] = None;
                        match self.host_fit(now, accept_ms, &job, &st, per_host, i) {
                            Ok(c) => {
                                shape.cands.insert(CandKey(c));
                                shape.cur[i] = Some(c);
                            }
                            Err(code) => shape.why[i] = Some(code),
                        }
                    }
                    shape.generation = generation;
                    shape.reasons = None;
                }
                None => {
                    let hosts = &self.hosts;
                    let reasons = shape
                        .reasons
                        .get_or_insert_with(|| {
                            let mut r: BTreeMap<u32, Vec<String>> = BTreeMap::new();
                            for (i, w) in shape.why.iter().enumerate() {
                                if let Some(code) = w {
                                    r.entry(*code).or_default().push(hosts[i].name.clone());
                                }
                            }
                            if !shape.cands.is_empty() {
                                let code = if span.is_some() {
                                    pend::SPAN
                                } else {
                                    pend::NOT_ENOUGH_SLOTS
                                };
                                r.entry(code)
                                    .or_default()
                                    .extend(shape.cands.iter().map(|c| hosts[c.0.3].name.clone()));
                            }
                            Arc::new(r)
                        })
                        .clone();
                    assign.push((key, reasons));
                }
            }
        }
        // Set the reasons in one ordered walk (mostly in key order already).
        assign.sort_unstable_by_key(|a| a.0);
        let mut next = assign.into_iter().peekable();
        if let Some((first, _)) = next.peek() {
            let first = *first;
            for (k, j) in self.jobs.range_mut(first..) {
                while next.peek().is_some_and(|(want, _)| want < k) {
                    next.next();
                }
                match next.peek() {
                    None => break,
                    Some((want, _)) if want == k => {
                        if let Some((_, r)) = next.next() {
                            j.pend_reasons = r;
                        }
                    }
                    Some(_) => {}
                }
            }
        }
    }

    /// The checks of host `h` that depend only on the queue: (not a queue host, LIM /
    /// sbatchd / closed / dispatch window, load beyond the thresholds).
    fn static_why(&self, q: &Queue, h: &Host) -> StaticWhy {
        let not_queue_host = !q.hosts.is_empty() && !q.hosts.contains(&h.name);
        let status = if h.lim != LimStatus::Ok {
            Some(pend::LIM_UNREACH)
        } else if h.sbd_failed {
            Some(pend::SBD_UNREACH)
        } else if h.closed_adm {
            Some(pend::HOST_CLOSED)
        } else if !self.window_open(h.dispatch_window.as_ref()) {
            Some(pend::DISPATCH_WINDOW)
        } else {
            None
        };
        StaticWhy {
            not_queue_host,
            status,
            load: self.load_ok(q, h).err(),
        }
    }

    /// Whether host `i` can take (part of) `job` now: (free slots, r15s × 100, rank,
    /// index), or the pending reason.
    fn host_fit(
        &self,
        now: Millis,
        accept_ms: i64,
        job: &JobFit,
        st: &PassState,
        statics: &[StaticWhy],
        i: usize,
    ) -> Result<Cand, u32> {
        let h = &self.hosts[i];
        let s = &statics[i];
        let u = st.used[i];
        if s.not_queue_host {
            return Err(pend::NOT_QUEUE_HOST);
        }
        if !job.sub.asked_hosts.is_empty() && !job.sub.asked_hosts.contains(&h.name) {
            return Err(pend::NOT_ASKED_HOST);
        }
        if let Some(code) = s.status {
            return Err(code);
        }
        if st.excl[i] {
            return Err(pend::EXCLUSIVE);
        }
        if job.exclusive && u > 0 {
            return Err(pend::NOT_ENOUGH_SLOTS);
        }
        if accept_ms > 0 && h.last_dispatch > 0 && now - h.last_dispatch < accept_ms {
            return Err(pend::JUST_STARTED);
        }
        if let Some(code) = s.load {
            return Err(code);
        }
        let mut free = match h.max_slots() {
            Some(m) => m.saturating_sub(u),
            None => u32::MAX / 4,
        };
        if let Some(jlu) = h.jl_u {
            let uu = st
                .used_user
                .get(&(i, job.sub.user.clone()))
                .copied()
                .unwrap_or(0);
            free = free.min(jlu.saturating_sub(uu));
            if free == 0 {
                return Err(pend::HOST_USER_LIMIT);
            }
        }
        if let Some(hl) = job.queue.hjob_limit {
            let qh = st
                .q_host
                .get(&(job.queue.name.clone(), i))
                .copied()
                .unwrap_or(0);
            free = free.min(hl.saturating_sub(qh));
            if free == 0 {
                return Err(pend::HOST_JOB_LIMIT);
            }
        }
        if free == 0 {
            return Err(pend::HOST_JOB_LIMIT);
        }
        if job.exclusive {
            free = free.min(job.most);
        }
        let r15s = (h.load.get("r15s").copied().unwrap_or(0.0) * 100.0) as i64;
        Ok((free, r15s, h.rank, i))
    }

    /// bresume'd jobs (SSUSP with SUSP_USER_RESUME) are resumed when their host's load
    /// is within the queue's and the host's loadSched thresholds — or, when the queue
    /// has a RESUME_COND, when that holds: highest queue priority first, then the
    /// oldest; at most one per host per SBD_SLEEP_TIME.
    fn resume_pass(&mut self, now: Millis) {
        let mut cands: Vec<(u32, i64, JobKey, u32, String, String)> = self
            .jobs
            .values()
            .filter(|j| self.waits_for_resume(j))
            .filter_map(|j| {
                let prio = self.queue(&j.queue).map_or(0, |q| q.priority);
                j.hosts.first().map(|h| {
                    (
                        u32::MAX - prio,
                        j.start_time,
                        j.key(),
                        j.attempt,
                        h.clone(),
                        j.queue.clone(),
                    )
                })
            })
            .collect();
        cands.sort();
        let period = i64::from(self.cfg.sbd_sleep_time_secs.max(1)) * 1000;
        for (_, _, key, attempt, host, queue) in cands {
            let ok = match (
                self.queue(&queue),
                self.hosts.iter().find(|h| h.name == host),
            ) {
                (Some(q), Some(h)) => {
                    let load_allows = match &q.resume_cond {
                        Some(c) => c.holds(&|n| Self::load_value(h, n)),
                        None => self.load_ok(q, h).is_ok(),
                    };
                    load_allows
                        && !h.sbd_failed
                        && (h.last_resume == 0 || now - h.last_resume >= period)
                }
                _ => false,
            };
            if ok {
                if let Some(j) = self.jobs.get_mut(&key) {
                    j.resume_sent = true;
                }
                if let Some(h) = self.host_mut(&host) {
                    h.last_resume = now;
                }
                self.order_sbd(key, attempt, host, SbdAction::Resume);
            }
        }
    }

    /// A bresume'd job waiting for its host's load (SSUSP with SUSP_USER_RESUME)?
    fn waits_for_resume(&self, j: &Job) -> bool {
        j.state == JobState::Ssusp && j.reasons & susp::USER_RESUME != 0 && !j.resume_sent
    }

    /// The state of a job's `-w` condition now (None: the job has none).
    pub fn dependency(&self, j: &Job) -> Option<Tri> {
        let e = j.dep.as_ref()?;
        Some(depend::eval(e, &mut |t| self.dep_members(j, t)))
    }

    /// The jobs a dependency target of `j` names: by id any job (but not `j`'s own array),
    /// by name the submitter's own jobs submitted before `j`; cleaned jobs count with the
    /// final state they had.
    fn dep_members(&self, j: &Job, t: &Target) -> Vec<Member> {
        let mut out = Vec::new();
        self.dep_matches(j, t, &mut |_, m, _| out.push(m));
        out
    }

    /// The cleaned jobs that a dependency of an unfinished job in memory still names: what
    /// a log switch must carry of the remembered cleaned jobs (the others are not carried,
    /// so lsb.events does not grow with every job cleaned in the last week).
    pub fn gone_needed(&self) -> BTreeSet<JobKey> {
        let mut out = BTreeSet::new();
        for j in self.jobs.values() {
            if j.state.is_finished() {
                continue;
            }
            let Some(dep) = &j.dep else {
                continue;
            };
            dep.for_each_target(&mut |t| {
                self.dep_matches(j, t, &mut |key, _, gone| {
                    if gone {
                        out.insert(key);
                    }
                });
            });
        }
        out
    }

    /// Each job a dependency target of `j` names: its key, state, and whether it is a
    /// remembered cleaned job.
    fn dep_matches(&self, j: &Job, t: &Target, found: &mut dyn FnMut(JobKey, Member, bool)) {
        let sel_ok = |sel: IdxSel, idx: u32| match sel {
            IdxSel::All => true,
            IdxSel::One(i) => idx == i,
            IdxSel::Same => j.idx == 0 || idx == j.idx,
        };
        let member = |state: JobState, exit_status: i32| Member {
            state,
            exit_code: jobv::wait_status_parts(exit_status).0,
        };
        match t {
            Target::Id(id, sel) => {
                if *id == j.id {
                    return;
                }
                let range = (*id, 0)..=(*id, u32::MAX);
                for o in self.jobs.range(range.clone()).map(|(_, o)| o) {
                    if sel_ok(*sel, o.idx) {
                        found(o.key(), member(o.state, o.exit_status), false);
                    }
                }
                for (k, g) in self.gone.range(range) {
                    if !self.jobs.contains_key(k) && sel_ok(*sel, k.1) {
                        found(*k, member(g.state, g.exit_status), true);
                    }
                }
            }
            Target::Name(pat, sel) => {
                let named = |name: &str, command: &str| {
                    let base = array::base_name(name);
                    if name.is_empty() {
                        wildcard(pat, command)
                    } else {
                        wildcard(pat, base) || wildcard(pat, name)
                    }
                };
                for o in self.jobs.values() {
                    if o.id != j.id
                        && o.seq < j.seq
                        && o.sub.user == j.sub.user
                        && sel_ok(*sel, o.idx)
                        && named(&o.sub.job_name, &o.sub.command)
                    {
                        found(o.key(), member(o.state, o.exit_status), false);
                    }
                }
                for (k, g) in &self.gone {
                    if k.0 != j.id
                        && g.seq < j.seq
                        && g.user == j.sub.user
                        && !self.jobs.contains_key(k)
                        && sel_ok(*sel, k.1)
                        && named(&g.job_name, "")
                    {
                        found(*k, member(g.state, g.exit_status), true);
                    }
                }
            }
        }
    }
}

/// The elements a JOB_NEW with this job name creates, and the array's `%k` limit: an array
/// spec gives its indices (1..n), anything else one job (index 0).
/// Does a JOB_STATUS from `from` to `to` with `reasons` requeue a job for a rerun (its
/// host was lost)? Such a job goes to the top of its queue's pending jobs.
fn is_rerun(from: JobState, to: JobState, reasons: u32) -> bool {
    from.is_started() && to == JobState::Pend && reasons == pend::REQUEUED
}

fn elements_of(job_name: &str) -> (Vec<u32>, Option<u32>) {
    match array::parse(job_name) {
        Some(Ok(spec)) => {
            let ix = spec.indices();
            if ix.is_empty() {
                (vec![0], None)
            } else {
                (ix, spec.limit)
            }
        }
        _ => (vec![0], None),
    }
}

/// span[] of a resource requirement: Some(None) = span[hosts=1] (all slots on one
/// host), Some(Some(n)) = span[ptile=n]. Public for the fuzz checks (`fuzz/src/resreq.rs`).
pub fn span_of(res_req: &str) -> Option<Option<u32>> {
    let p = res_req.find("span[")?;
    let rest = &res_req[p + 5..];
    let body = &rest[..rest.find(']')?];
    for part in body.split([':', ',', ' ']) {
        if let Some(v) = part.trim().strip_prefix("hosts=")
            && v.trim() == "1"
        {
            return Some(None);
        }
        if let Some(v) = part.trim().strip_prefix("ptile=")
            && let Ok(n) = v.trim().parse::<u32>()
            && n > 0
        {
            return Some(Some(n));
        }
    }
    None
}

/// Choose hosts for a job of `min` slots that takes up to `max` (`bsub -n min,max`) from
/// candidates (free, load, rank, name), best first: as many slots as are free up to
/// `max`, at least `min` (None when `min` do not fit), within span[].
fn allocate<'a, I>(cands: I, min: u32, max: u32, span: Option<Option<u32>>) -> Option<Vec<usize>>
where
    I: Iterator<Item = &'a Cand> + Clone,
{
    let max = max.max(min);
    match span {
        // The candidate with the most free slots comes first.
        Some(None) => { cands }
            .find(|c| c.0 >= min)
            .map(|c| vec![c.3; c.0.min(max) as usize]),
        Some(Some(ptile)) => {
            // ptile slots on each host, the remainder on the last one.
            let fill = |target: u32| {
                let mut out = Vec::new();
                for c in cands.clone() {
                    if out.len() as u32 >= target {
                        break;
                    }
                    let take = ptile.min(target - out.len() as u32);
                    if c.0 >= take {
                        out.extend(std::iter::repeat_n(c.3, take as usize));
                    }
                }
                out
            };
            let most = fill(max);
            if most.len() as u32 >= min {
                return Some(most);
            }
            // Aiming at max can skip a host whose few free slots complete min.
            let least = fill(min);
            (least.len() as u32 == min).then_some(least)
        }
        None => {
            let mut out = Vec::new();
            for c in cands {
                let take = c.0.min(max - out.len() as u32);
                out.extend(std::iter::repeat_n(c.3, take as usize));
                if out.len() as u32 == max {
                    break;
                }
            }
            (out.len() as u32 >= min).then_some(out)
        }
    }
}

/// A `JOB_STATUS` that only moves a job to `status` (nothing ended: no usage, no exit).
fn state_change(time: i64, key: JobKey, status: u32, reasons: u32, subreasons: u32) -> Event {
    Event::JobStatus {
        time,
        key,
        status,
        reasons,
        subreasons,
        cpu_time: 0.0,
        end_time: 0,
        usage: None,
        exit_status: 0,
        term_reason: String::new(),
    }
}

/// The pending reasons of a job no pass has looked at yet, one map shared by all.
fn new_job_reasons() -> Arc<BTreeMap<u32, Vec<String>>> {
    static NEW: std::sync::LazyLock<Arc<BTreeMap<u32, Vec<String>>>> =
        std::sync::LazyLock::new(|| Arc::new(BTreeMap::from([(pend::NEW_JOB, Vec::new())])));
    NEW.clone()
}

/// A candidate host of a scheduling pass: (free slots, r15s × 100, rank, host index).
type Cand = (u32, i64, usize, usize);

/// Most free slots first (spread), then least loaded, then file order.
fn cand_order(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.0.cmp(&a.0)
        .then(a.1.cmp(&b.1))
        .then(a.2.cmp(&b.2))
        .then(a.3.cmp(&b.3))
}

/// Pending reasons by code, with the hosts each applies to; shared between jobs.
type PendReasons = Arc<BTreeMap<u32, Vec<String>>>;

/// A [`Cand`] ordered by [`cand_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CandKey(Cand);

impl Ord for CandKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        cand_order(&self.0, &other.0)
    }
}

impl PartialOrd for CandKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A pending job as a pass visits it: its place in the order, and what the checks read.
struct PendRec {
    /// (u32::MAX − queue priority, queue name rank, submission order, key).
    rank: (u32, usize, i64, JobKey),
    /// Queue index.
    qi: usize,
    sub: Arc<Submission>,
    has_dep: bool,
    array_limit: Option<u32>,
    need: u32,
}

/// The (queue, host) checks of a pass, computed once per queue.
#[derive(Debug, Clone, Copy)]
struct StaticWhy {
    not_queue_host: bool,
    status: Option<u32>,
    load: Option<u32>,
}

/// What a pass has placed so far, by host index.
struct PassState {
    used: Vec<u32>,
    excl: Vec<bool>,
    /// (host, user) -> slots; kept only when some host has a JL/U limit.
    used_user: HashMap<(usize, String), u32>,
    /// (queue, host) -> slots; kept only when some queue has HJOB_LIMIT.
    q_host: HashMap<(String, usize), u32>,
}

impl PassState {
    fn take(&mut self, i: usize, queue: &str, user: &str, track_user: bool, track_qhost: bool) {
        self.used[i] += 1;
        if track_user {
            *self.used_user.entry((i, user.to_owned())).or_default() += 1;
        }
        if track_qhost {
            *self.q_host.entry((queue.to_owned(), i)).or_default() += 1;
        }
    }
}

/// The parts of a job a host evaluation looks at.
struct JobFit<'a> {
    queue: &'a Queue,
    /// Asked hosts and user are read from here.
    sub: &'a Submission,
    exclusive: bool,
    /// The most slots the job may take (`-n min,max`).
    most: u32,
}

/// Jobs whose host evaluation is the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShapeKey {
    /// Queue index.
    queue: usize,
    user: Option<String>,
    asked: Vec<String>,
    exclusive: bool,
    need: u32,
    most: u32,
    span: Option<Option<u32>>,
}

/// Every host evaluated for a shape, as of `generation`.
struct Shape {
    generation: u64,
    /// Hosts that can take the job, best first.
    cands: BTreeSet<CandKey>,
    /// Each host's entry in `cands`.
    cur: Vec<Option<Cand>>,
    /// Why each other host cannot.
    why: Vec<Option<u32>>,
    /// The pending reasons of a job of this shape that does not fit, once built.
    reasons: Option<Arc<BTreeMap<u32, Vec<String>>>>,
}

/// `*` wildcard match.
pub fn wildcard(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(pos) => rest = &rest[pos + p.len()..],
                None => return false,
            }
        }
    }
    true
}

#[cfg(test)]
mod host_loss_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod slots_tests;
#[cfg(test)]
mod switch_tests;
#[cfg(test)]
mod tests;
