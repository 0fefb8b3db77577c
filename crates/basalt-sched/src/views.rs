//! Snapshots of the core's state for the query commands (bjobs, bqueues, bhosts,
//! bparams): plain values taken on the owner thread, so that whoever answers the client
//! (mbatchd's gRPC service, through `basalt-wire`) reads no `Sched`. Each view holds every
//! value its answer needs from the core, already decided (shown state, position, window
//! state, slot counts, host status); no formatting happens here.

use crate::{Host, HostStatus, Job, JobKey, JobQuery, Millis, Queue, Sched};
use basalt_config::LsfConf;
use basalt_config::batch::BatchParams;
use basalt_core::job::JobState;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One job as bjobs sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    /// The job itself (its submission and pending reasons are shared, not copied).
    pub job: Job,
    /// [`Sched::shown_state`].
    pub state: JobState,
    /// [`Sched::position`].
    pub position: u32,
    /// The slots it reserves (SLOT_RESERVE): hosts, one per slot, and since when (ms).
    pub reserved: Option<(Vec<String>, Millis)>,
    /// Its checkpointing ([`Sched::dispatch_chkpnt`]; None: not checkpointable).
    pub chk: Option<crate::chkpnt::DispatchChk>,
}

/// The answer to a job query: the jobs in listing order and the ids that matched nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobsView {
    pub jobs: Vec<JobView>,
    pub not_found: Vec<(u64, Option<u32>)>,
    /// The cluster's resource table after the built-in indices
    /// ([`crate::SchedConfig::res_table`]): what the pending reasons of `rusage[]`
    /// shortfalls name ([`JobsView::resource_of`]).
    pub res_table: Vec<String>,
}

impl JobsView {
    /// The resource a pending reason of a reservation shortfall (LSF's
    /// PEND_HOST_JOB_RUSAGE + index) names, when it is not a built-in index (those have
    /// their text in basalt-core).
    pub fn resource_of(&self, code: u32) -> Option<&str> {
        let builtin = basalt_core::BUILTIN_INDICES.len() as u32;
        let i = code.checked_sub(basalt_core::job::pend::RESERVE_BASE + builtin)?;
        if code >= basalt_core::job::pend::RESERVE_END {
            return None;
        }
        self.res_table.get(i as usize).map(String::as_str)
    }
}

/// One queue as bqueues sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueView {
    pub queue: Queue,
    /// [`Sched::queue_windows_open`].
    pub windows_open: bool,
    /// (njobs, pend, run, ssusp, ususp) slots: [`Sched::queue_counts`].
    pub counts: (u32, u32, u32, u32, u32),
    /// Slots its pending jobs reserve (SLOT_RESERVE).
    pub rsv: u32,
    /// It is the default queue.
    pub is_default: bool,
    /// The queues whose jobs its jobs may preempt, and those whose jobs may preempt
    /// its jobs (seed 002).
    pub preempts: Vec<String>,
    pub preempted_by: Vec<String>,
    /// MAX_JOB_PREEMPT: the queue's, else lsb.params'.
    pub max_job_preempt: Option<u32>,
    /// A fairshare queue's accounts (set by the runtime with the time:
    /// [`Sched::share_info_of`]).
    pub share_info: Vec<crate::fairshare::ShareInfo>,
    /// Its slot pool (SLOT_POOL; set by the runtime: [`Sched::pool_info_of`]).
    pub pool: Option<crate::schedule::pool::PoolInfo>,
    /// SLOT_RESERVE's MAX_RESERVE_TIME and the queue's JOB_ACCEPT_INTERVAL in seconds
    /// (cycles of MBD_SLEEP_TIME; None: not set).
    pub slot_reserve_secs: Option<i64>,
    pub accept_interval_secs: Option<i64>,
}

/// The answer to bqueues: the queues asked for, highest priority first, and the names
/// that matched none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueuesView {
    pub queues: Vec<QueueView>,
    pub not_found: Vec<String>,
    /// Set by the runtime (the core does not know it): why the configuration last read
    /// was not taken ("" = it was).
    pub config_problem: String,
}

/// One host as bhosts sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostView {
    pub host: Host,
    /// [`Sched::host_status`].
    pub status: HostStatus,
    /// (njobs, run, ssusp, ususp) slots: [`Sched::host_counts`].
    pub counts: (u32, u32, u32, u32),
}

/// Slots a backfill job could use now on one host (bslots): free slots (`runtime` None:
/// for any run time), or slots reserved for a parallel job that cannot start for
/// `runtime` more seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotWindow {
    pub host: String,
    pub runtime: Option<i64>,
    pub slots: u32,
}

/// The answer to bhosts: the hosts asked for, in configuration order, and the names that
/// matched none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostsView {
    pub hosts: Vec<HostView>,
    pub not_found: Vec<String>,
    /// The numeric shared resource instances: (resource, hosts, reserved by running jobs).
    pub shared: Vec<(String, Vec<String>, f64)>,
    /// As in [`QueuesView::config_problem`].
    pub config_problem: String,
}

/// The answer to bparams and `badmin showconf mbd`: the configuration mbatchd runs with.
/// Built by the runtime, which holds the configuration files' values.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamsView {
    /// lsb.params.
    pub params: BatchParams,
    /// lsf.conf.
    pub lsf_conf: LsfConf,
    /// `LSB_SHAREDIR`, `LSF_CONFDIR`, `LSF_ENVDIR` as resolved.
    pub sharedir: PathBuf,
    pub confdir: PathBuf,
    pub envdir: PathBuf,
    /// The core's default queue.
    pub default_queue: String,
    /// When this mbatchd started (seconds since the epoch).
    pub started_at: i64,
    /// As in [`QueuesView::config_problem`].
    pub config_problem: String,
    /// `badmin showstatus`: mbatchd's process id, what the core counts now, and the
    /// peaks since mbatchd started.
    pub pid: u32,
    pub status: crate::StatusView,
    pub peaks: Peaks,
}

/// `badmin showstatus`: the available hosts (clients: lsf.cluster's hosts that are no
/// batch server), CPUs and slots now and at most since mbatchd started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peaks {
    pub clients: u32,
    pub clients_peak: u32,
    pub servers_peak: u32,
    pub cpus_peak: u32,
    pub slots_peak: u32,
}

impl Peaks {
    /// Take `v`'s counts (and `clients` now) into the peaks.
    pub fn see(&mut self, clients: u32, v: &crate::StatusView) {
        self.clients = clients;
        self.clients_peak = self.clients_peak.max(clients);
        self.servers_peak = self.servers_peak.max(v.servers);
        self.cpus_peak = self.cpus_peak.max(v.cpus);
        self.slots_peak = self.slots_peak.max(v.slots);
    }
}

impl Sched {
    /// The jobs a query finds, as [`Sched::query`] lists them.
    pub fn jobs_view(&self, q: &JobQuery) -> JobsView {
        let (jobs, not_found) = self.query(q);
        JobsView {
            jobs: jobs.into_iter().map(|j| self.job_view(j)).collect(),
            not_found,
            res_table: self.cfg.res_table.clone(),
        }
    }

    /// The keys of the jobs a query finds, in [`Sched::query`]'s order, and the ids it
    /// did not find: a listing sent in pages ([`Sched::jobs_page`]).
    pub fn job_keys(&self, q: &JobQuery) -> (Vec<JobKey>, Vec<(u64, Option<u32>)>) {
        let (jobs, not_found) = self.query(q);
        (jobs.into_iter().map(Job::key).collect(), not_found)
    }

    /// The jobs of one page of [`Sched::job_keys`] as they are now (a job cleaned away
    /// since is left out).
    pub fn jobs_page(&self, keys: &[JobKey]) -> JobsView {
        JobsView {
            jobs: keys
                .iter()
                .filter_map(|k| self.jobs.get(k))
                .map(|j| self.job_view(j))
                .collect(),
            not_found: Vec::new(),
            res_table: self.cfg.res_table.clone(),
        }
    }

    /// One job's view.
    pub fn job_view(&self, j: &Job) -> JobView {
        JobView {
            job: j.clone(),
            state: self.shown_state(j),
            position: self.position(j),
            reserved: self.slot_reservation(j.key()),
            chk: self.dispatch_chkpnt(j.key()),
        }
    }

    /// The queues named (empty: all), highest priority first.
    pub fn queues_view(&self, names: &[String]) -> QueuesView {
        let mut out = QueuesView::default();
        // The core's lost_and_found holding no job is as if it did not exist.
        let shown = |q: &&Queue| !self.queue_hidden(q);
        for name in names {
            if !self.queues().iter().filter(shown).any(|q| &q.name == name) {
                out.not_found.push(name.clone());
            }
        }
        let mut queues: Vec<&Queue> = self
            .queues()
            .iter()
            .filter(shown)
            .filter(|q| names.is_empty() || names.contains(&q.name))
            .collect();
        queues.sort_by_key(|q| std::cmp::Reverse(q.priority));
        for q in queues {
            out.queues.push(QueueView {
                queue: q.clone(),
                windows_open: self.queue_windows_open(q),
                counts: self.queue_counts(&q.name),
                rsv: self.reserved_slots(|j| *j.queue == *q.name),
                is_default: q.name == self.config().default_queue,
                preempts: self
                    .queues()
                    .iter()
                    .filter(|o| crate::schedule::preempt::preempts(q, o).is_some())
                    .map(|o| o.name.clone())
                    .collect(),
                preempted_by: self
                    .queues()
                    .iter()
                    .filter(|o| crate::schedule::preempt::preempts(o, q).is_some())
                    .map(|o| o.name.clone())
                    .collect(),
                max_job_preempt: q.max_job_preempt.or(self.config().preempt.max_job_preempt),
                share_info: Vec::new(),
                pool: None,
                slot_reserve_secs: q.slot_reserve.map(|n| {
                    crate::schedule::slot_resv::period(n, self.cfg.mbd_sleep_time_secs) / 1000
                }),
                accept_interval_secs: q
                    .job_accept_interval
                    .map(|n| i64::from(n) * i64::from(self.cfg.mbd_sleep_time_secs)),
            });
        }
        out
    }

    /// The backfill windows at `now` (bslots), by host in configuration order, the
    /// unlimited ones first on each host. Only usable hosts count; reserved slots only
    /// when some queue backfills and their job's start is estimated.
    ///
    /// `res_req` (bslots -R): only the hosts its select part accepts; a select part that
    /// does not parse is refused.
    pub fn slot_windows(
        &self,
        now: Millis,
        res_req: &str,
    ) -> Result<Vec<SlotWindow>, crate::SchedError> {
        let sel = match self.select_part(res_req) {
            Some(crate::schedule::select::Part::Bad) => {
                return Err(crate::SchedError::BadResReq);
            }
            other => other,
        };
        let backfill = self.queues().iter().any(|q| q.backfill);
        let mut out: Vec<SlotWindow> = Vec::new();
        for (i, h) in self.hosts().iter().enumerate() {
            if sel
                .as_ref()
                .is_some_and(|p| !p.holds(&crate::schedule::select::values_of(h), None))
            {
                continue;
            }
            if !matches!(
                self.host_status(h),
                HostStatus::Ok | HostStatus::Closed(crate::ClosedReason::Full)
            ) {
                continue;
            }
            let Some(max) = h.max_slots() else {
                continue;
            };
            let used = self.host_counts(&h.name).0 + h.rsv_slots;
            let free = max.saturating_sub(used);
            if free > 0 {
                out.push(SlotWindow {
                    host: h.name.clone(),
                    runtime: None,
                    slots: free,
                });
            }
            if !backfill {
                continue;
            }
            let mut windows: BTreeMap<i64, u32> = BTreeMap::new();
            for r in self.slot_resv.values() {
                let Some(t) = r.start_est.filter(|t| *t > now) else {
                    continue;
                };
                let n = r.slots.iter().filter(|&&s| s == i).count() as u32;
                if n > 0 {
                    *windows.entry((t - now) / 1000).or_default() += n;
                }
            }
            for (secs, n) in windows.into_iter().rev() {
                out.push(SlotWindow {
                    host: h.name.clone(),
                    runtime: Some(secs),
                    slots: n,
                });
            }
        }
        Ok(out)
    }

    /// The hosts named (empty: all), in configuration order.
    pub fn hosts_view(&self, names: &[String]) -> HostsView {
        let mut out = HostsView::default();
        for name in names {
            if self.host_name(name).is_none() {
                out.not_found.push(name.clone());
            }
        }
        for h in self.hosts().iter().filter(|h| {
            names.is_empty() || names.iter().any(|n| basalt_core::same_host(n, &h.name))
        }) {
            out.hosts.push(HostView {
                host: h.clone(),
                status: self.host_status(h),
                counts: self.host_counts(&h.name),
            });
        }
        out.shared = self
            .cfg
            .shared
            .iter()
            .enumerate()
            .map(|(k, r)| {
                (
                    r.name.clone(),
                    r.hosts.clone(),
                    self.shared_reserved.get(k).copied().unwrap_or(0.0),
                )
            })
            .collect();
        out
    }
}

/// One row of `blimits`: a limit's count that is in use.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRow {
    pub name: String,
    /// USERS, QUEUES, HOSTS, PROJECTS, APPS as blimits shows them.
    pub consumers: [String; 5],
    /// (used, limit) of SLOTS and JOBS (None: the limit does not set it).
    pub slots: Option<(u32, u32)>,
    pub jobs: Option<(u32, u32)>,
    /// (name, reserved, limit) of its MEM, SWP, TMP and RESOURCE limits.
    pub amounts: Vec<(String, f64, f64)>,
}

impl Sched {
    /// How many resource allocation limits are configured for blimits: lsb.resources'
    /// Limit sections (lsb.users' MAX_JOBS rows are limits too, but not blimits').
    pub fn limit_sections(&self) -> usize {
        self.cfg
            .limits
            .iter()
            .filter(|l| l.is_limit_section())
            .count()
    }

    /// The counts in use of lsb.resources' Limit sections as of the last pass, by limit
    /// then consumers (lsb.users' MAX_JOBS rows are busers', not blimits').
    pub fn limits_view(&self) -> Vec<LimitRow> {
        let mut rows: Vec<(usize, LimitRow)> = self
            .limit_usage
            .iter()
            .filter(|(_, u)| u.slots > 0 || u.jobs > 0)
            .filter_map(|((i, key), u)| {
                let l = self.cfg.limits.get(*i).filter(|l| l.is_limit_section())?;
                Some((
                    *i,
                    LimitRow {
                        name: l.name.clone(),
                        consumers: l.columns(key),
                        slots: l.slots.map(|s| (u.slots, s)),
                        jobs: l.jobs.map(|j| (u.jobs, j)),
                        amounts: l
                            .amounts
                            .iter()
                            .map(|(n, max)| {
                                let used = self
                                    .limit_amounts
                                    .get(&(*i, key.clone()))
                                    .and_then(|m| m.get(n))
                                    .copied()
                                    .unwrap_or(0.0);
                                (n.clone(), used, *max)
                            })
                            .collect(),
                    },
                ))
            })
            .collect();
        rows.sort_by(|a, b| (a.0, &a.1.consumers).cmp(&(b.0, &b.1.consumers)));
        rows.into_iter().map(|(_, r)| r).collect()
    }
}

/// Job slots of unfinished jobs by state (busers, bapp): NJOBS is their sum, PEND
/// counts PSUSP too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StateSlots {
    pub njobs: u32,
    pub pend: u32,
    pub run: u32,
    pub ssusp: u32,
    pub ususp: u32,
    /// Slots its pending jobs reserve (SLOT_RESERVE), as of the last pass.
    pub rsv: u32,
}

impl StateSlots {
    /// Count `j`'s slots (nothing for a finished job); `rsv` it reserves.
    fn add(&mut self, j: &Job, rsv: u32) {
        let n = j.slots();
        self.rsv += rsv;
        match j.state {
            JobState::Pend | JobState::Psusp => self.pend += n,
            JobState::Run => self.run += n,
            JobState::Ssusp => self.ssusp += n,
            JobState::Ususp => self.ususp += n,
            _ => return,
        }
        self.njobs += n;
    }
}

/// One row of `busers`: a user's job slots by state and limits.
#[derive(Debug, Clone, PartialEq)]
pub struct UserRow {
    pub name: String,
    /// lsb.users JL/P (users', group@ and default rows).
    pub jl_p: Option<f64>,
    /// lsb.users MAX_JOBS (the tightest row that covers the user).
    pub max: Option<u32>,
    pub slots: StateSlots,
}

impl Sched {
    /// busers: the rows of `names` (users), or with `all` of every user who has an
    /// unfinished job or a row of their own in lsb.users; by name.
    pub fn users_view(&self, names: &[String], all: bool) -> Vec<UserRow> {
        let mut wanted: Vec<String> = names.to_vec();
        if all {
            wanted.extend(
                self.jobs
                    .values()
                    .filter(|j| !j.state.is_finished())
                    .map(|j| j.sub.user.to_string()),
            );
            wanted.extend(
                self.cfg
                    .user_rows
                    .keys()
                    .filter(|k| k.as_str() != "default")
                    .cloned(),
            );
        }
        wanted.sort();
        wanted.dedup();
        let mut rows: BTreeMap<String, UserRow> = wanted
            .into_iter()
            .map(|name| {
                let group = self.cfg.user_groups.get(&name);
                // A user: the MAX_JOBS rows that cover them; a group: its own row's.
                let max = self
                    .cfg
                    .limits
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.reason == basalt_core::job::pend::USER_LIMIT)
                    .filter(|(i, l)| match group {
                        Some(_) => l.name == name,
                        None => {
                            let c = crate::reslimits::Consumer {
                                user: &name,
                                queue: "",
                                project: "",
                                app: "",
                            };
                            l.count_key(*i, &c, "").is_some()
                        }
                    })
                    .filter_map(|(_, l)| l.slots)
                    .min();
                let jl_p = match group {
                    Some((_, jl_p)) => *jl_p,
                    None => self
                        .cfg
                        .user_rows
                        .get(&name)
                        .or_else(|| self.cfg.user_rows.get("default"))
                        .copied()
                        .flatten(),
                };
                let row = UserRow {
                    jl_p,
                    max,
                    slots: StateSlots::default(),
                    name: name.clone(),
                };
                (name, row)
            })
            .collect();
        // A group's row sums its members' jobs.
        let groups: Vec<(&String, &crate::config::UserList)> = rows
            .keys()
            .filter_map(|n| self.cfg.user_groups.get_key_value(n))
            .map(|(n, (members, _))| (n, members))
            .collect();
        for j in self.jobs.values() {
            let rsv = self.reserved_of(j);
            let user = j.sub.user.as_str();
            // A user's own row (a name that is a group's is the group's row).
            if !self.cfg.user_groups.contains_key(user)
                && let Some(r) = rows.get_mut(user)
            {
                r.slots.add(j, rsv);
            }
            for (g, members) in &groups {
                if members.covers(user)
                    && let Some(r) = rows.get_mut(g.as_str())
                {
                    r.slots.add(j, rsv);
                }
            }
        }
        rows.into_values().collect()
    }
}

/// One row of `bapp`: an application profile and its jobs' slots by state.
#[derive(Debug, Clone, PartialEq)]
pub struct AppRow {
    pub profile: crate::AppProfile,
    pub slots: StateSlots,
}

impl Sched {
    /// bapp: the profiles named (every one when `names` is empty) with their unfinished
    /// jobs' slots by state; and the names lsb.applications does not define.
    pub fn apps_view(&self, names: &[String]) -> (Vec<AppRow>, Vec<String>) {
        let not_found: Vec<String> = names
            .iter()
            .filter(|n| !self.cfg.apps.contains_key(n.as_str()))
            .cloned()
            .collect();
        let mut rows: BTreeMap<String, AppRow> = self
            .cfg
            .apps
            .values()
            .filter(|a| names.is_empty() || names.contains(&a.name))
            .map(|a| {
                let row = AppRow {
                    profile: a.clone(),
                    slots: StateSlots::default(),
                };
                (a.name.clone(), row)
            })
            .collect();
        if !rows.is_empty() {
            for j in self.jobs.values() {
                let rsv = self.reserved_of(j);
                if let Some(r) = rows.get_mut(j.sub.app()) {
                    r.slots.add(j, rsv);
                }
            }
        }
        (rows.into_values().collect(), not_found)
    }
}
