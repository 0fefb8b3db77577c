//! sbatchd's deterministic load-suspension core (daemon-behaviour.md §3.2, LSF's
//! "Automatic job suspension"; OpenLava `sbd.policy.c`).
//!
//! Owns: the decision which of a host's jobs to suspend or resume because of the
//! host's load, the queues' `STOP_COND`/`RESUME_COND` and the queues' run windows,
//! and the pacing of those decisions (one per `SBD_SLEEP_TIME`).
//!
//! Inputs ([`Policy::decide`]): the time (milliseconds, a parameter — the core has
//! no clock), the minute of the week in local time (for run windows), the host's
//! load as its LIM reports it ([`HostLoad`], raw run-queue lengths; the core
//! compares r15s/r1m/r15m as *effective* values, §2) and the jobs sbatchd runs on
//! the host ([`JobView`]). The policy itself ([`Policy`]) comes from the
//! configuration: per-queue and per-host `loadSched/loadStop` thresholds,
//! `STOP_COND`, `RESUME_COND`, `RUN_WINDOW`, `TERMINATE_WHEN`, `SBD_SLEEP_TIME`,
//! `PG_SUSP_IT`, `LSB_STOP_IGNORE_IT` ([`Policy::from_config`]).
//! Outputs: [`Action`]s — suspend (state SSUSP with LSF's reason bits and the
//! index as subreason), terminate instead of suspending (`TERMINATE_WHEN`), resume.
//! The runtime carries them out (signal the job's process group, report to mbatchd).
//! No I/O, no async, no OS calls.
//!
//! ## Rules
//!
//! * A job's thresholds are the stricter of its queue's and the host's (lsb.hosts),
//!   per index: the lower for increasing indices, the higher for decreasing ones
//!   (`it tmp swp mem`, and externals defined with `INCREASING = N`).
//! * **Stopping** ([`Policy::decide`], at most once per `SBD_SLEEP_TIME`): running
//!   jobs are visited lowest queue priority first, newest first within a
//!   priority; jobs started less than `SBD_SLEEP_TIME` ago and jobs forced with
//!   `brun` are skipped. The first index whose value is beyond the job's `loadStop`
//!   (`it ls ut pg io mem swp tmp r15s r1m r15m`, then externals, then
//!   `STOP_COND`) suspends it; `pg` is not checked when the host has been idle
//!   (`it`) longer than `PG_SUSP_IT`. A job is only suspended when more than one
//!   job is running on the host, or the host is used interactively (`it` < 1
//!   minute), or `LSB_STOP_IGNORE_IT` is set. One job per pass — except for the
//!   `it` and `ls` reasons, which suspend every job that qualifies at once. A host
//!   locked in LIM (`lsadmin limlock`: `SUSP_HOST_LOCK`; by the master LIM:
//!   `SUSP_HOST_LOCK_MASTER`) has every job suspended at once, the sole one too, and
//!   none resumed while the lock lasts.
//! * **Resuming** (at most once per `SBD_SLEEP_TIME`, and not in a pass that
//!   suspended): system-suspended jobs (not those stopped by a user, by a run
//!   window or locked by mbatchd) are visited highest priority first, oldest
//!   first; a job is resumed when its queue's `RESUME_COND` holds (when the queue
//!   has one), else when every index is back within `loadSched` (hysteresis: not
//!   merely below `loadStop`); a job suspended for paging stays while the host is
//!   not idle for `PG_SUSP_IT`. One job per pass. A job that stays gets its current
//!   blocking reason ([`Action::Reason`]) when it changed.
//! * **Run windows**: when all of a queue's run windows are closed, every running
//!   job of the queue (except `brun` ones) is suspended at once (`SUSP_QUEUE_WINDOW`,
//!   or terminated with `TERMINATE_WHEN = WINDOW`); when a window opens they are
//!   resumed at once.
//! * Host unavailable (no load from LIM): nothing is suspended, nothing resumed.

/// The condition language lives in basalt-config (lsb.queues is checked with it).
pub use basalt_config::cond;

use basalt_config::TimeWindow;
use basalt_config::batch::Threshold;
use basalt_core::job::susp;
use basalt_core::{BUILTIN_INDICES, LoadIndex};
pub use cond::{Cond, CondError};
use std::collections::{BTreeMap, BTreeSet};

/// Milliseconds (any epoch; only differences matter).
pub type Millis = i64;

/// A job on this host: (job id, array index, attempt).
pub type JobKey = (u64, u32, u32);

/// `loadSched` / `loadStop` per index name (absent = not checked).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thresholds {
    pub sched: BTreeMap<String, f64>,
    pub stop: BTreeMap<String, f64>,
}

impl Thresholds {
    /// From the configuration's threshold map.
    pub fn from_config(t: &BTreeMap<String, Threshold>) -> Thresholds {
        let mut out = Thresholds::default();
        for (k, v) in t {
            if let Some(s) = v.sched {
                out.sched.insert(k.clone(), s);
            }
            if let Some(s) = v.stop {
                out.stop.insert(k.clone(), s);
            }
        }
        out
    }

    /// The stricter of `self` and `other` per index (`increasing(name)`: a larger
    /// value means busier).
    pub fn stricter(&self, other: &Thresholds, increasing: &dyn Fn(&str) -> bool) -> Thresholds {
        let merge = |a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>| {
            let mut out = a.clone();
            for (k, v) in b {
                let up = increasing(k);
                out.entry(k.clone())
                    .and_modify(|cur| {
                        *cur = if up { cur.min(*v) } else { cur.max(*v) };
                    })
                    .or_insert(*v);
            }
            out
        };
        Thresholds {
            sched: merge(&self.sched, &other.sched),
            stop: merge(&self.stop, &other.stop),
        }
    }
}

/// What the policy knows about a queue.
#[derive(Debug, Clone, Default)]
pub struct QueuePolicy {
    pub name: String,
    pub priority: u32,
    pub thresholds: Thresholds,
    pub stop_cond: Option<Cond>,
    pub resume_cond: Option<Cond>,
    /// RUN_WINDOW (None = always open).
    pub run_window: Option<TimeWindow>,
    /// TERMINATE_WHEN = LOAD: kill instead of suspending for load.
    pub terminate_on_load: bool,
    /// TERMINATE_WHEN = WINDOW: kill instead of suspending when the run window closes.
    pub terminate_on_window: bool,
}

/// Cluster-wide parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// SBD_SLEEP_TIME in milliseconds.
    pub sleep_ms: Millis,
    /// PG_SUSP_IT in seconds.
    pub pg_susp_it_secs: u32,
    /// LSB_STOP_IGNORE_IT: the sole-job rule does not need an interactive user.
    pub stop_ignore_it: bool,
    /// External numeric indices in lsf.shared order (the subreason of a load
    /// suspension for external index i is 11 + i), with their direction.
    pub externals: Vec<(String, bool)>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            sleep_ms: 30_000,
            pg_susp_it_secs: 180,
            stop_ignore_it: false,
            externals: Vec::new(),
        }
    }
}

/// The host's load as its LIM reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostLoad {
    /// False when LIM has no load for the host (unavailable).
    pub available: bool,
    /// The host is locked (`lsadmin limlock`, or a LIM run window).
    pub lock: HostLock,
    pub ncpus: u32,
    pub cpu_factor: f64,
    /// Index name -> value; r15s/r1m/r15m raw (as plain `lsload` shows them).
    pub values: BTreeMap<String, f64>,
}

/// A LIM lock on the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HostLock {
    #[default]
    None,
    /// `lsadmin limlock` (lockU): SUSP_HOST_LOCK.
    User,
    /// Locked by the master LIM (a LIM run window, lockW): SUSP_HOST_LOCK_MASTER.
    Master,
}

impl HostLock {
    /// The suspending reason bit of the lock (0 when unlocked).
    pub fn reason(self) -> u32 {
        match self {
            HostLock::None => 0,
            HostLock::User => susp::HOST_LOCK,
            HostLock::Master => susp::HOST_LOCK_MASTER,
        }
    }
}

impl HostLoad {
    /// The value the thresholds are compared with: run-queue lengths effective.
    pub fn value(&self, name: &str) -> Option<f64> {
        let v = *self.values.get(name)?;
        if matches!(name, "r15s" | "r1m" | "r15m") {
            Some(basalt_core::effective_run_queue(
                v,
                self.ncpus.max(1),
                if self.cpu_factor > 0.0 {
                    self.cpu_factor
                } else {
                    1.0
                },
            ))
        } else {
            Some(v)
        }
    }
}

/// A job's state as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Running (not stopped).
    Run,
    /// Suspended by the system, with its reason bits and subreason.
    Ssusp { reasons: u32, subreasons: u32 },
    /// Suspended by a user (bstop): never touched here.
    Ususp,
}

/// A job sbatchd runs on this host.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    pub key: JobKey,
    pub queue: String,
    /// When it started (ms, same clock as `now`).
    pub start_time: Millis,
    pub state: JobState,
    /// Forced with brun: never suspended by load or windows.
    pub forced: bool,
}

/// What the runtime must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Stop the job (queue SUSPEND action, default SIGSTOP): state SSUSP.
    Suspend {
        key: JobKey,
        reasons: u32,
        subreasons: u32,
    },
    /// Kill the job instead (TERMINATE_WHEN): the queue TERMINATE action, default
    /// the kill sequence; `term_reason` is LSF's (`TERM_LOAD`, `TERM_WINDOW`).
    Terminate { key: JobKey, term_reason: String },
    /// Continue the job (queue RESUME action, default SIGCONT): state RUN.
    Resume { key: JobKey },
    /// The job stays suspended, now for this reason (report it).
    Reason {
        key: JobKey,
        reasons: u32,
        subreasons: u32,
    },
}

/// The policy of one host, and when it last acted.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub params: Params,
    /// The host's own thresholds (lsb.hosts).
    pub host: Thresholds,
    pub queues: BTreeMap<String, QueuePolicy>,
    last_stop_check: Option<Millis>,
    last_resume_check: Option<Millis>,
}

/// Why a job should stop: (reasons, subreasons, stop every job at once).
type StopWhy = (u32, u32, bool);

impl Policy {
    pub fn new(params: Params, host: Thresholds, queues: Vec<QueuePolicy>) -> Policy {
        Policy {
            params,
            host,
            queues: queues.into_iter().map(|q| (q.name.clone(), q)).collect(),
            last_stop_check: None,
            last_resume_check: None,
        }
    }

    /// The policy for `host` from the configuration: lsb.queues, the lsb.hosts row
    /// naming the host (else its model or type, else `default`), lsb.params and
    /// lsf.conf. Conditions that do not parse are left out and returned as errors.
    pub fn from_config(
        config: &basalt_config::Config,
        host: &str,
        model: &str,
        host_type: &str,
    ) -> (Policy, Vec<CondError>) {
        let mut errors = Vec::new();
        let b = &config.batch;
        let externals: Vec<(String, bool)> = config
            .shared
            .resources
            .iter()
            .filter(|r| r.kind == basalt_config::shared::ResourceKind::Numeric)
            .filter(|r| LoadIndex::from_name(&r.name).is_none())
            .map(|r| (r.name.clone(), r.increasing.unwrap_or(true)))
            .collect();
        let ignore_it = config.lsf_conf.get("LSB_STOP_IGNORE_IT").is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "y" | "yes" | "1" | "true"
            )
        });
        let params = Params {
            sleep_ms: Millis::from(b.params.sbd_sleep_time_secs.max(1)) * 1000,
            pg_susp_it_secs: b.params.pg_susp_it_secs,
            stop_ignore_it: ignore_it,
            externals,
        };
        let row = |name: &str| {
            b.hosts
                .iter()
                .find(|h| !name.is_empty() && basalt_core::same_host(&h.name, name))
        };
        let host_row = row(host)
            .or_else(|| {
                b.hosts
                    .iter()
                    .find(|h| !model.is_empty() && h.name.eq_ignore_ascii_case(model))
            })
            .or_else(|| {
                b.hosts
                    .iter()
                    .find(|h| !host_type.is_empty() && h.name.eq_ignore_ascii_case(host_type))
            })
            .or_else(|| {
                b.hosts
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("default"))
            });
        let host_t = host_row
            .map(|h| Thresholds::from_config(&h.thresholds))
            .unwrap_or_default();
        let mut cond = |s: &Option<String>| -> Option<Cond> {
            let s = s.as_deref()?.trim();
            if s.is_empty() {
                return None;
            }
            match Cond::parse(s) {
                Ok(c) => Some(c),
                Err(e) => {
                    errors.push(e);
                    None
                }
            }
        };
        let queues = b
            .queues
            .iter()
            .map(|q| QueuePolicy {
                name: q.name.clone(),
                priority: q.priority,
                thresholds: Thresholds::from_config(&q.thresholds),
                stop_cond: cond(&q.stop_cond),
                resume_cond: cond(&q.resume_cond),
                run_window: q.run_window.clone(),
                terminate_on_load: q.terminate_when.iter().any(|w| w == "LOAD"),
                terminate_on_window: q.terminate_when.iter().any(|w| w == "WINDOW"),
            })
            .collect();
        (Policy::new(params, host_t, queues), errors)
    }

    /// Does a larger value of `name` mean a busier host?
    pub fn increasing(&self, name: &str) -> bool {
        match LoadIndex::from_name(name) {
            Some(i) => i.increasing(),
            None => self
                .params
                .externals
                .iter()
                .find(|(n, _)| n == name)
                .is_none_or(|(_, up)| *up),
        }
    }

    /// The thresholds that apply to a job of `queue`: the stricter of queue and host.
    pub fn job_thresholds(&self, queue: &str) -> Thresholds {
        match self.queues.get(queue) {
            Some(q) => q.thresholds.stricter(&self.host, &|n| self.increasing(n)),
            None => self.host.clone(),
        }
    }

    /// The subreason LSF reports for an index: its number (built-ins 0..10,
    /// externals 11.. in lsf.shared order).
    pub fn index_number(&self, name: &str) -> u32 {
        match LoadIndex::from_name(name) {
            Some(i) => i.position() as u32,
            None => self
                .params
                .externals
                .iter()
                .position(|(n, _)| n == name)
                .map_or(BUILTIN_INDICES.len() as u32, |p| {
                    (BUILTIN_INDICES.len() + p) as u32
                }),
        }
    }

    fn priority(&self, queue: &str) -> u32 {
        self.queues.get(queue).map_or(0, |q| q.priority)
    }

    fn window_open(&self, queue: &str, minute_of_week: u32) -> bool {
        self.queues
            .get(queue)
            .and_then(|q| q.run_window.as_ref())
            .is_none_or(|w| w.is_open_at_week_minute(minute_of_week))
    }

    /// pg is ignored while the host has been idle longer than PG_SUSP_IT.
    fn pg_ignored(&self, load: &HostLoad) -> bool {
        load.value("it")
            .is_some_and(|it| it * 60.0 > f64::from(self.params.pg_susp_it_secs))
    }

    /// LSF's shouldStop for one job: the first threshold its load is beyond.
    fn should_stop(&self, queue: &str, load: &HostLoad) -> Option<StopWhy> {
        if load.lock != HostLock::None {
            return Some((load.lock.reason(), 0, true));
        }
        let t = self.job_thresholds(queue);
        let hit = |name: &str| -> Option<u32> {
            let limit = *t.stop.get(name)?;
            let v = load.value(name)?;
            let beyond = if self.increasing(name) {
                v >= limit
            } else {
                v <= limit
            };
            beyond.then(|| self.index_number(name))
        };
        if let Some(n) = hit("it") {
            return Some((susp::LOAD_REASON, n, true));
        }
        if let Some(n) = hit("ls") {
            return Some((susp::LOAD_REASON, n, true));
        }
        for name in ["ut", "pg", "io", "mem", "swp", "tmp", "r15s", "r1m", "r15m"] {
            if name == "pg" && self.pg_ignored(load) {
                continue;
            }
            if let Some(n) = hit(name) {
                return Some((susp::LOAD_REASON, n, false));
            }
        }
        for (name, _) in &self.params.externals {
            if let Some(n) = hit(name) {
                return Some((susp::LOAD_REASON, n, false));
            }
        }
        if let Some(c) = self.queues.get(queue).and_then(|q| q.stop_cond.as_ref())
            && c.holds(&|n| load.value(n))
        {
            return Some((susp::QUE_STOP_COND, 0, false));
        }
        None
    }

    /// Why a suspended job must stay suspended (None: it may resume).
    fn resume_blocker(
        &self,
        queue: &str,
        reasons: u32,
        subreasons: u32,
        load: &HostLoad,
    ) -> Option<(u32, u32)> {
        if load.lock != HostLock::None {
            return Some((load.lock.reason(), 0));
        }
        let t = self.job_thresholds(queue);
        let pg_no = LoadIndex::Pg.position() as u32;
        let for_paging =
            reasons & susp::PG_IT != 0 || (reasons & susp::LOAD_REASON != 0 && subreasons == pg_no);
        if for_paging && t.sched.contains_key("pg") && !self.pg_ignored(load) {
            return Some((susp::PG_IT, 0));
        }
        if let Some(c) = self.queues.get(queue).and_then(|q| q.resume_cond.as_ref()) {
            return if c.holds(&|n| load.value(n)) {
                None
            } else {
                Some((susp::QUE_RESUME_COND, 0))
            };
        }
        let order = [
            "r15m", "r1m", "r15s", "ut", "pg", "io", "ls", "it", "mem", "tmp", "swp",
        ];
        let externals = self.params.externals.iter().map(|(n, _)| n.as_str());
        for name in order.into_iter().chain(externals) {
            let Some(limit) = t.sched.get(name) else {
                continue;
            };
            let Some(v) = load.value(name) else {
                continue;
            };
            let within = if self.increasing(name) {
                v <= *limit
            } else {
                v >= *limit
            };
            if !within {
                return Some((susp::LOAD_REASON, self.index_number(name)));
            }
        }
        None
    }

    /// Decide what to do now. `minute_of_week` is local time (0 = Sunday 00:00).
    pub fn decide(
        &mut self,
        now: Millis,
        minute_of_week: u32,
        load: &HostLoad,
        jobs: &[JobView],
    ) -> Vec<Action> {
        let mut out = Vec::new();
        let mut touched: BTreeSet<JobKey> = BTreeSet::new();

        // Run windows, every job at once.
        for j in jobs {
            let open = self.window_open(&j.queue, minute_of_week);
            match j.state {
                JobState::Run if !open && !j.forced => {
                    let terminate = self
                        .queues
                        .get(&j.queue)
                        .is_some_and(|q| q.terminate_on_window);
                    out.push(if terminate {
                        Action::Terminate {
                            key: j.key,
                            term_reason: "TERM_WINDOW".to_owned(),
                        }
                    } else {
                        Action::Suspend {
                            key: j.key,
                            reasons: susp::QUEUE_WINDOW,
                            subreasons: 0,
                        }
                    });
                    touched.insert(j.key);
                }
                JobState::Ssusp { reasons, .. } if open && reasons & susp::QUEUE_WINDOW != 0 => {
                    out.push(Action::Resume { key: j.key });
                    touched.insert(j.key);
                }
                _ => {}
            }
        }

        if !load.available {
            return out;
        }

        // Lowest priority first, newest first within a priority.
        let mut order: Vec<&JobView> = jobs.iter().collect();
        order.sort_by(|a, b| {
            self.priority(&a.queue)
                .cmp(&self.priority(&b.queue))
                .then(b.start_time.cmp(&a.start_time))
                .then(b.key.cmp(&a.key))
        });

        let due = |last: Option<Millis>| last.is_none_or(|l| now - l >= self.params.sleep_ms);
        let mut stopped_any = false;
        if due(self.last_stop_check) {
            self.last_stop_check = Some(now);
            let mut running = jobs
                .iter()
                .filter(|j| j.state == JobState::Run && !touched.contains(&j.key))
                .count();
            let interactive = load.value("it").is_some_and(|it| it < 1.0);
            for j in &order {
                if j.state != JobState::Run
                    || j.forced
                    || touched.contains(&j.key)
                    || now - j.start_time < self.params.sleep_ms
                {
                    continue;
                }
                let Some((reasons, subreasons, stopmore)) = self.should_stop(&j.queue, load) else {
                    continue;
                };
                let lock = reasons & (susp::HOST_LOCK | susp::HOST_LOCK_MASTER) != 0;
                if !(lock || running > 1 || interactive || self.params.stop_ignore_it) {
                    continue;
                }
                let terminate = !lock
                    && self
                        .queues
                        .get(&j.queue)
                        .is_some_and(|q| q.terminate_on_load);
                out.push(if terminate {
                    Action::Terminate {
                        key: j.key,
                        term_reason: "TERM_LOAD".to_owned(),
                    }
                } else {
                    Action::Suspend {
                        key: j.key,
                        reasons,
                        subreasons,
                    }
                });
                touched.insert(j.key);
                running -= 1;
                stopped_any = true;
                if !stopmore {
                    break;
                }
            }
        }

        if !stopped_any && due(self.last_resume_check) {
            self.last_resume_check = Some(now);
            for j in order.iter().rev() {
                let JobState::Ssusp {
                    reasons,
                    subreasons,
                } = j.state
                else {
                    continue;
                };
                let locked =
                    susp::USER_STOP | susp::ADMIN_STOP | susp::QUEUE_WINDOW | susp::MBD_LOCK;
                if reasons & locked != 0 || touched.contains(&j.key) {
                    continue;
                }
                match self.resume_blocker(&j.queue, reasons, subreasons, load) {
                    None => {
                        out.push(Action::Resume { key: j.key });
                        break;
                    }
                    Some((r, s)) => {
                        if (r, s) != (reasons, subreasons) {
                            out.push(Action::Reason {
                                key: j.key,
                                reasons: r,
                                subreasons: s,
                            });
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
