//! The host and queue records the core keeps: a batch host's status, configuration and
//! load as mbatchd sees it, and a queue's resolved configuration.

use crate::Millis;
use std::collections::BTreeMap;

/// Status of a batch host as bhosts shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStatus {
    Ok,
    Unavail,
    Unreach,
    Closed(ClosedReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedReason {
    Adm,
    Excl,
    Full,
    Lim,
    /// The host's DISPATCH_WINDOW is closed.
    Wind,
    /// The host's load is beyond one of its own scheduling thresholds (lsb.hosts).
    Busy,
    /// Its LIM is locked (`lsadmin limlock`): LIM shows it `lockU`.
    Lock,
}

impl HostStatus {
    pub fn short(self) -> &'static str {
        match self {
            HostStatus::Ok => "ok",
            HostStatus::Unavail => "unavail",
            HostStatus::Unreach => "unreach",
            HostStatus::Closed(_) => "closed",
        }
    }
    pub fn long(self) -> &'static str {
        match self {
            HostStatus::Closed(ClosedReason::Adm) => "closed_Adm",
            HostStatus::Closed(ClosedReason::Excl) => "closed_Excl",
            HostStatus::Closed(ClosedReason::Full) => "closed_Full",
            HostStatus::Closed(ClosedReason::Lim) => "closed_LIM",
            HostStatus::Closed(ClosedReason::Busy) => "closed_Busy",
            HostStatus::Closed(ClosedReason::Wind) => "closed_Wind",
            HostStatus::Closed(ClosedReason::Lock) => "closed_Lock",
            s => s.short(),
        }
    }
}

/// LIM's view of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimStatus {
    /// No answer from LIM about it yet.
    Unknown,
    Ok,
    Unavail,
}

/// A batch host.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    pub name: String,
    /// Slot limit; None = unlimited. `MXJ = !` is resolved with ncpus.
    pub mxj: Option<u32>,
    pub mxj_ncpus: bool,
    /// lsb.hosts MIG (minutes): the automatic-migration threshold of the jobs running
    /// here; lower than the queue's, it is the one used.
    pub mig_minutes: Option<u32>,
    pub jl_u: Option<u32>,
    pub closed_adm: bool,
    pub message: String,
    pub ncpus: u32,
    pub cpu_factor: f64,
    pub lim: LimStatus,
    /// LIM says the host is locked (`lsadmin limlock`, `lockU`): no job goes there.
    pub lim_locked: bool,
    /// When sbatchd last said hello (ms).
    pub sbd_seen: Millis,
    /// sbatchd could not be reached on the last dispatch.
    pub sbd_failed: bool,
    pub load: BTreeMap<String, f64>,
    /// Last dispatch to this host (ms), for JOB_ACCEPT_INTERVAL.
    pub last_dispatch: Millis,
    /// DISPATCH_WINDOW of lsb.hosts (None = always open).
    pub dispatch_window: Option<basalt_config::TimeWindow>,
    /// The host's loadSched / loadStop thresholds (lsb.hosts), per index.
    pub load_sched: BTreeMap<String, f64>,
    pub load_stop: BTreeMap<String, f64>,
    /// Last resume of a bresume'd job on this host (ms): one per SBD_SLEEP_TIME.
    pub last_resume: Millis,
    /// Which scheduling thresholds the load was within at the last LIM update (a
    /// change makes a scheduling pass due).
    pub thresholds_ok: Vec<bool>,
    /// Rank in the cluster file.
    pub rank: usize,
    /// What a resource requirement's select part sees of the host besides its load,
    /// ncpus and cpuf: its name, and its type, model and resources from the cluster
    /// file.
    pub statics: basalt_config::select::HostValues,
    /// What the host's LIM last said of it that [`Host::statics`] was built from (a poll
    /// that says the same again changes nothing).
    pub lim_static: Option<crate::LimStatic>,
    /// What the jobs running here reserve (`rusage[]`), as of the last scheduling pass:
    /// resource -> amount (`mem`, `swp`, `tmp` in MB).
    pub reserved: BTreeMap<String, f64>,
    /// Slots pending parallel jobs reserve here (SLOT_RESERVE), as of the last pass.
    pub rsv_slots: u32,
}

impl Host {
    /// The host's slot limit now (None = unlimited).
    pub fn max_slots(&self) -> Option<u32> {
        if self.mxj_ncpus {
            Some(self.ncpus.max(1))
        } else {
            self.mxj
        }
    }
}

/// A queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub name: String,
    pub description: String,
    pub priority: u32,
    pub nice: Option<i32>,
    pub open: bool,
    pub active: bool,
    /// The message of the last queue control (`badmin qclose -C "..."`).
    pub message: String,
    pub qjob_limit: Option<u32>,
    pub ujob_limit: Option<u32>,
    pub hjob_limit: Option<u32>,
    pub pjob_limit: Option<f64>,
    /// Host names the queue may use (empty = all).
    pub hosts: Vec<String>,
    /// USERS is `all` (or not set): everyone may submit.
    pub users_all: bool,
    /// Otherwise the users who may (resolved from names and user groups; may be empty: an
    /// unresolvable group denies).
    pub users: Vec<String>,
    /// With `users_all`: the users excluded with `~name` (`USERS = all ~bob`).
    pub users_except: Vec<String>,
    pub administrators: Vec<String>,
    pub res_req: String,
    pub exclusive: bool,
    /// `SLOT_RESERVE = MAX_RESERVE_TIME[n]`: how many scheduling cycles (MBD_SLEEP_TIME
    /// each) a parallel job that cannot start may hold the free slots it reserves.
    pub slot_reserve: Option<u32>,
    /// BACKFILL = Y: its jobs with a run limit may use slots reserved for parallel jobs
    /// when they end before those jobs can start.
    pub backfill: bool,
    /// FAIRSHARE as written ("" = none), its USER_SHARES (empty: first come, first
    /// served) and the queue's fairshare factors.
    pub fairshare: String,
    pub user_shares: Vec<basalt_config::batch::ShareEntry>,
    pub fs_factors: crate::fairshare::FsFactors,
    /// SLOT_POOL ("" = none) and SLOT_SHARE (percent) (seed 003).
    pub slot_pool: String,
    pub slot_share: u32,
    /// PREEMPTION (seed 002), parsed; `preemption` as written, for bqueues -l.
    pub preempt: basalt_config::batch::Preemption,
    pub preemption: String,
    /// TERMINATE_WHEN = PREEMPT: its jobs are killed, not suspended, when preempted.
    pub terminate_on_preempt: bool,
    /// MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME, NO_PREEMPT_FINISH_TIME of the queue (over
    /// lsb.params'; an application profile's win).
    pub max_job_preempt: Option<u32>,
    pub no_preempt_run_time: Option<basalt_config::batch::NoPreemptTime>,
    pub no_preempt_finish_time: Option<basalt_config::batch::NoPreemptTime>,
    pub rerunnable: bool,
    /// INTERACTIVE: `YES` (or unset: both kinds of job), `NO` or `ONLY`.
    pub interactive: String,
    /// loadSched / loadStop per index.
    pub load_sched: BTreeMap<String, f64>,
    pub load_stop: BTreeMap<String, f64>,
    pub job_controls: BTreeMap<String, String>,
    pub pre_exec: String,
    pub post_exec: String,
    /// JOB_STARTER ("" = none).
    pub job_starter: String,
    /// HOSTS preference levels (`hostA+2`, a group's for its hosts); hosts not named get
    /// `others_pref` (`others+N`, else 0). Higher first.
    pub host_pref: BTreeMap<String, i64>,
    pub others_pref: i64,
    /// PRE_POST_EXEC_USER: who the queue's PRE_EXEC and POST_EXEC run as ("" = the job's
    /// user).
    pub pre_post_exec_user: String,
    /// SUCCESS_EXIT_VALUES: exit values besides 0 that end a job DONE.
    pub success_exit_values: Vec<u8>,
    /// REQUEUE_EXIT_VALUES, read.
    pub requeue: basalt_config::batch::RequeueValues,
    /// What a failing pre-execution command may cost: LOCAL_MAX_PREEXEC_RETRY (queue,
    /// else lsb.params; None = unlimited) and what happens once it is reached
    /// (LOCAL_MAX_PREEXEC_RETRY_ACTION = EXIT: the job exits; else it is suspended, PSUSP).
    pub preexec_retry_limit: Option<u32>,
    pub preexec_retry_exit: bool,
    /// MAX_JOB_REQUEUE (queue, else lsb.params; None = unlimited): requeues by exit value a
    /// job may have; the next such exit ends it.
    pub max_job_requeue: Option<u32>,
    /// CHKPNT = dir [period]: the queue's jobs are checkpointable (period in seconds).
    pub chkpnt: Option<crate::chkpnt::ChkCfg>,
    /// MIG (minutes): a rerunnable job of this queue suspended by the system (SSUSP)
    /// for longer is migrated automatically, as `bmig` would (seed 001, "Automatic job
    /// migration"); 0 = at once.
    pub mig_minutes: Option<u32>,
    /// JOB_ACCEPT_INTERVAL of the queue (in MBD_SLEEP_TIMEs), over lsb.params' for its
    /// jobs.
    pub job_accept_interval: Option<u32>,
    /// Other settings for bqueues -l (RUNLIMIT ...), upper-case keys.
    pub settings: BTreeMap<String, String>,
    /// The resource limits of `settings`, read (`CPULIMIT RUNLIMIT MEMLIMIT ...`).
    pub rlimits: crate::limits::QueueLimits,
    pub run_window: String,
    pub dispatch_window: String,
    /// RESUME_COND, parsed: when set it alone decides when a bresume'd job resumes.
    pub resume_cond: Option<basalt_susp_core::Cond>,
    /// RUN_WINDOW and DISPATCH_WINDOW, parsed (None = always open).
    pub run_windows: Option<basalt_config::TimeWindow>,
    pub dispatch_windows: Option<basalt_config::TimeWindow>,
    /// What bqueues -l shows of its configuration as written.
    pub shown: QueueShown,
}

/// What bqueues -l shows of a queue's configuration as written (issue 50 item 11), where
/// the core keeps it resolved or parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueShown {
    /// USERS and HOSTS as configured (`all` when not set), user and host groups named
    /// with LSF's trailing `/` (`eng/`, `hg_ab/`, `hg_ab/+2`).
    pub users: Vec<String>,
    pub hosts: Vec<String>,
    /// REQUEUE_EXIT_VALUES, STOP_COND and RESUME_COND as written ("" = none).
    pub requeue_exit_values: String,
    pub stop_cond: String,
    pub resume_cond: String,
    /// TERMINATE_WHEN actions (LOAD, WINDOW, PREEMPT).
    pub terminate_when: Vec<String>,
}

impl Queue {
    /// Does the queue dispatch to `host` (its HOSTS, or every host when it has none)?
    pub fn uses_host(&self, host: &str) -> bool {
        self.hosts.is_empty() || self.hosts.iter().any(|h| h == host)
    }
}
