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
//! event names one element; `bmod -J "%k"` changes an array's `%k` limit only (see
//! [`mod@modify`]). `-w` conditions are parsed by [`depend`] and evaluated each
//! scheduling pass to satisfied / not yet (reason 3) / never (reason 4).
//!
//! Log switching: the core counts the jobs purged from memory (LSF's numRemoveJobs) and
//! says when `MAX_JOB_NUM` is reached ([`Sched::switch_due`]); [`Sched::carry_over`] gives
//! the events a new lsb.events starts with — synthesized from the current state, so that
//! replaying the new file alone rebuilds it (see [`mod@logswitch`]).
//!
//! Deleted queues: an event replayed with a configuration that no longer has the queue
//! it names puts the job in `lost_and_found` (see [`mod@lost_found`]).
//!
//! Lost hosts: a host whose sbatchd misses three hellos is `unreach` and its jobs show
//! `UNKWN`; once it has stayed so for `BASALT_HOST_LOST_GRACE` ([`SchedConfig`]),
//! [`Sched::tick`] gives up on its jobs — rerunnable ones (`bsub -r`, queue `RERUNNABLE`)
//! are requeued (JOB_STATUS PEND, PEND_JOB_REQUEUED) to the top of their queue, the
//! others end EXIT ([`TERM_HOST_LOST`]) — and [`Sched::sbd_hello`] orders a returning
//! sbatchd to kill the copies it still has.
//!
//! Policy (issue 20): resource requirements and reservations (`schedule/select.rs`,
//! shared resources such as licence counts counted per ResourceMap instance), resource
//! allocation limits ([`mod@reslimits`]), and requeues: a failed pre-execution command
//! (PEND reason 6, tried again after MBD_SLEEP_TIME, [`Requeues`]), REQUEUE_EXIT_VALUES /
//! `bsub -Q` (with `EXCLUDE(...)` hosts and MAX_JOB_REQUEUE; dispatched again after
//! `BASALT_REQUEUE_DELAY`, PEND reason 23 meanwhile), `brequeue` — all derived from the
//! log, so a replay counts (and waits) the same.
//!
//! Kills: a job with a kill order (bkill, `TERMINATE_WHEN = PREEMPT`) ends EXIT with the
//! kill's term reason whatever sbatchd then reports — its command may never have run
//! (killed during its pre-execution commands, or before sbatchd accepted it), or it may
//! have ended on its own first — and is neither requeued by its exit value nor by a
//! brequeue; a dispatched one without a non-zero status of its own gets
//! [`basalt_core::job::KILLED_WAIT_STATUS`] (exit code 130). Only `bkill -d` ends DONE.
//!
//! Preemption (seed 002, `schedule/preempt.rs`): a job of a queue that may preempt
//! another suspends lower-priority running jobs for their slots (JOB_STATUS SSUSP with
//! SUSP_MBD_PREEMPT | SUSP_MBD_LOCK, logged before its JOB_START) — or kills them
//! (`TERMINATE_WHEN = PREEMPT`) — and a preempted job resumes as soon as its slots are
//! free; how often each job was preempted comes from those records (MAX_JOB_PREEMPT).
//!
//! Fairshare ([`mod@fairshare`], `schedule/pool.rs`): FAIRSHARE queues and host partitions
//! order pending jobs by share tree and LSF's dynamic priority, with a history of
//! finished jobs' usage derived from the log (and carried by log switches); slot pools
//! (SLOT_POOL / SLOT_SHARE) give each queue of a pool its share of the pool's slots.
//!
//! Checkpointing (seed 001, [`mod@chkpnt`]): bchkpnt and periodic checkpoints are orders to
//! sbatchd logged as JOB_SIGACT `SIG_CHKPNT`, their outcomes as CHKPNT; a checkpointable
//! job migrates through a checkpoint and restarts from it at its next dispatch.
//!
//! MultiCluster job forwarding (seed 004, [`mod@mc`]): Phase II after each pass sends
//! what no local host takes to a remote receive-jobs queue (JOB_FORWARD); the remote
//! cluster's reports come back as JOB_START (`host@cluster`) and JOB_STATUS; Phase III
//! takes other clusters' jobs (JOB_NEW + JOB_ACCEPT) and gives back those not started
//! within MAX_RSCHED_TIME.
//!
//! Memory: a job's strings are [`Str`]s (16 bytes, "" unallocated); those many jobs repeat
//! (user, queue, host, directories, project...) and their limits are kept once through
//! the core's pool (`strs.rs`); jobs are boxed in their map, and what only a started job
//! has (usage, an order waiting for sbatchd) is boxed until it comes.
//!
//! Rules (DESIGN.md 1–4): no I/O, no clocks, ordered collections only. Every change of
//! logged state is an [`Event`] applied by one function — live, and by [`Sched::replay`] of
//! lsb.events on start — so a restarted mbatchd ends in the state it had. The runtime
//! makes each batch of `Log` effects durable before it carries out the other effects of
//! that batch or answers anybody.

pub mod acct;
pub mod array;
pub mod bounds;
pub mod chkpnt;
mod config;
mod control;
mod counts;
pub mod depend;
mod deps;
pub mod fairshare;
mod fsm;
mod hello;
mod hosts_queues;
pub mod limits;
pub mod logswitch;
pub mod lost_found;
pub mod mc;
pub mod modify;
mod query;
pub mod reslimits;
mod sbd;
mod schedule;
mod showstatus;
mod strs;
mod submit;
pub mod types;
pub mod views;

pub use config::{
    AppProfile, DEFAULT_HELLO_INTERVAL, DEFAULT_HOST_LOST_GRACE, HELLOS_PER_SEC, HostPart,
    PreemptParams, SchedConfig, SharedRes, check_app_and_group, hello_interval,
};
pub use logswitch::CarryOver;
pub use lost_found::LOST_AND_FOUND;
pub use modify::{Change, Modify};
pub use query::wildcard;
pub use schedule::allocate::{Span, span_of};
pub use schedule::select::LimStatic;
pub use showstatus::StatusView;
pub use types::*;
pub use views::{HostView, HostsView, JobView, JobsView, ParamsView, Peaks, QueueView, QueuesView};

use counts::Counts;
use fsm::{elements_of, is_rerun};

use basalt_core::job::JobState;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
// What the unit tests (`use super::*`) name besides the crate's own items.
use thiserror::Error;
#[cfg(test)]
use {
    basalt_core::job::{pend, status, sub, sub2, susp},
    depend::Tri,
    std::sync::Arc,
};

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
    /// An interactive job (bsub -I) to a queue with INTERACTIVE = NO.
    #[error("Queue does not accept interactive jobs")]
    NoInteractive,
    /// A batch job to a queue with INTERACTIVE = ONLY.
    #[error("Queue only accepts interactive jobs")]
    OnlyInteractive,
    /// An exclusive job (bsub -x) to a queue without EXCLUSIVE = Y.
    #[error("Queue does not accept EXCLUSIVE jobs")]
    NotExclusiveQueue,
    #[error("Queue has been closed")]
    QueueClosed,
    #[error("User cannot use the queue")]
    UserNotInQueue,
    #[error("Bad host name, host group name or cluster name")]
    BadHost,
    /// `bsub -m` (bmod -m, brestart -m) naming a host or host group the queue does not
    /// use (LSBE_QUEUE_HOST): the name as given, which LSF prints before the reason.
    #[error("{0}: Host or host group is not used by the queue")]
    QueueHost(String),
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
    #[error("Job has not started yet")]
    NotStarted,
    /// `bresume` of a job that is neither PSUSP, USUSP nor SSUSP (LSBE_JOB_NOT_SUSP).
    #[error("Job has not been suspended")]
    NotSuspended,
    /// `bmig` of a job that is neither checkpointable nor rerunnable (LSBE_J_UNCHKPNTABLE).
    #[error("Job is not checkpointable")]
    NotCheckpointable,
    /// `bmig` of a job whose migration is under way (LSBE_MIGRATION).
    #[error("Job is already being migrated")]
    Migrating,
    /// lsb.params MAX_PEND_JOBS: the cluster's pending jobs are at the limit; try again
    /// in `retry_secs` (SUB_TRY_INTERVAL).
    #[error("Pending job threshold reached")]
    PendLimit { retry_secs: u32 },
    /// lsb.users MAX_PEND_JOBS: the user's (or group's) pending jobs are at the limit.
    #[error("User's pending job threshold reached")]
    UserPendLimit { retry_secs: u32 },
    /// lsb.params MAX_PEND_SLOTS: the cluster's pending job slots are at the limit.
    #[error("Pending job slot threshold reached")]
    PendSlotLimit { retry_secs: u32 },
    /// lsb.users MAX_PEND_SLOTS: the user's (or group's) pending job slots are at the
    /// limit.
    #[error("User's pending job slot threshold reached")]
    UserPendSlotLimit { retry_secs: u32 },
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
    /// bmod of a started job with a change only a pending job takes (LSBE_JOB_MODIFY).
    #[error("Job parameters cannot be changed now; non-repetitive job is running")]
    ModifyRunning,
    #[error("Too many processors requested")]
    TooManyProcessors,
    #[error("Cannot exceed queue's hard limit(s)")]
    OverLimit,
    /// bmod `-J "%k"` of one element of an array (LSBE_MOD_JOB_NAME): the running-element
    /// limit is the whole array's.
    #[error("Change job name is not allowed for job array")]
    ArrayNameChange,
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
    /// MultiCluster: a forward to a queue that does not take this cluster's jobs
    /// (RCVJOBS_FROM).
    #[error("The queue does not receive jobs from this cluster")]
    McNotReceiving,
    /// MultiCluster: the receive-jobs queue has IMPT_JOBBKLG MultiCluster jobs pending.
    #[error("The queue's pending MultiCluster job threshold (IMPT_JOBBKLG) is reached")]
    McBacklog,
    /// MultiCluster: no user of this cluster for the forwarded job's user (UserMap
    /// import, else the same name).
    #[error(
        "User <{user}> of cluster <{cluster}> has no account in this cluster (looked for: {tried})"
    )]
    McNoUser {
        user: String,
        cluster: String,
        tried: String,
    },
    /// MultiCluster: the forwarded job would run as root here, and LSF_ROOT_REX is not
    /// set.
    #[error(
        "Root user's job submission rejected: <{user}> is uid 0 in this cluster and LSF_ROOT_REX is not set"
    )]
    McRoot { user: String },
    /// MultiCluster: a personal cluster runs its owner's jobs only.
    #[error("User permission denied: this cluster runs only the jobs of its owner <{owner}>")]
    McNotOwner { owner: String },
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
        /// The wait status of the queue's POST_EXEC, which ran after the job (None: none).
        post_exec: Option<i32>,
    },
    StartFailed {
        message: String,
        /// The job was to restart from its checkpoint and erestart failed: it goes back
        /// to PEND (PEND_JOB_RESTART_FILE) rather than ending.
        restart_failed: bool,
    },
    /// A checkpoint ended (`ok`), by the echkpnt process `pid` (0: the built-in
    /// method); `message` says why it failed.
    Chkpnt {
        ok: bool,
        pid: u32,
        message: String,
    },
    /// The post-execution commands of a job whose end was reported before them
    /// (JOB_INCLUDE_POSTPROC=N) ended with this wait status.
    PostExec {
        status: i32,
    },
    /// A pre-execution command (the queue's PRE_EXEC, then `bsub -E`) failed with this wait
    /// status: the job never ran.
    PreExecFailed {
        exit_status: i32,
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

/// How often, at least, a pass visits every pending job when passes that stopped early
/// left some reasons as they were ([`Sched::schedule`]).
pub(crate) const FULL_PASS_EVERY: Millis = 1000;

/// The core.
#[derive(Debug)]
pub struct Sched {
    cfg: SchedConfig,
    /// Boxed: a map's nodes are about half full, so a job's own bytes are not repeated
    /// in their empty room.
    jobs: BTreeMap<JobKey, Box<Job>>,
    queues: Vec<Queue>,
    hosts: Vec<Host>,
    /// Each host's index by its exact name (the hosts are fixed for the core's life).
    pass_index: schedule::FastMap<String, usize>,
    /// How many hosts are of each type (kept as LIM's static information changes a
    /// host's type).
    host_types: schedule::HostTypes,
    /// `hosts` by lower-cased short name (`hosta` for `hostA.example.org`): the indices,
    /// ascending, of the hosts a name can match ([`basalt_core::same_host`] needs equal
    /// short names). Fixed with `hosts`, which never change after [`Sched::new`].
    host_index: BTreeMap<String, Vec<usize>>,
    /// The highest job id seen.
    last_job_id: u64,
    next_order: i64,
    /// JOB_NEW records applied (each job's [`Job::seq`]).
    next_seq: u64,
    /// Cleaned jobs' final states, for dependencies on them.
    gone: BTreeMap<JobKey, Gone>,
    gone_order: VecDeque<(i64, JobKey)>,
    /// Submission tokens of the JOB_NEWs applied, each in its scope (the submitting
    /// user, or the cluster that forwarded the job) -> the job it created (a resent bsub
    /// gets the job its first attempt created); pruned to known jobs by LOG_SWITCH.
    tokens: BTreeMap<fsm::TokenKey, fsm::TokenEntry>,
    /// Per-queue pending order and slot counters, kept by `on_event`.
    counts: Counts,
    /// The pool the jobs' repeated strings (user, queue, cwd...) are shared through.
    strs: strs::Interner,
    /// The epoch of the last MBD_START seen (this term's after [`Sched::start`]).
    epoch: u64,
    /// When this mbatchd term started (ms).
    started_at: Millis,
    /// (time, master) of the last MBD_START applied.
    mbd_start: Option<(i64, String)>,
    /// LSF's numRemoveJobs: jobs purged from memory (JOB_CLEAN) since the last
    /// LOG_SWITCH (or since the start of the replayed log).
    num_remove_jobs: u64,
    /// Dispatches sent in this term whose answer has not come yet (not logged: a
    /// restarted mbatchd has none in flight).
    in_flight: BTreeSet<(JobKey, u32)>,
    /// A pass stopped placing jobs at the bound on start orders under way
    /// ([`SchedConfig::max_dispatch_in_flight`]): the next answer makes a pass due.
    dispatch_capped: bool,
    /// Accepted jobs a host's sbatchd left out of its hellos, and how many times in a row.
    missing: BTreeMap<JobKey, u32>,
    /// Jobs whose state mbatchd changed and logged itself as it ordered sbatchd to
    /// carry it out (a preemption's stop, a preempted job's resume): the state ordered
    /// and until when state reports that contradict it are older than the order (sent
    /// before sbatchd carried it out, delivered late — after an mbatchd restart, say)
    /// and are not applied. The report that confirms the state ends the wait.
    awaiting: BTreeMap<JobKey, (u32, Millis)>,
    /// Jobs the system has suspended (SSUSP) and since when (seconds, the event's time,
    /// so replay gives the same): queue MIG migrates them after a while.
    ssusp_since: BTreeMap<JobKey, i64>,
    /// Started jobs with a checkpoint period: the periodic checkpoints look at these.
    chk_periodic: std::collections::BTreeSet<JobKey>,
    effects: Vec<Effect>,
    /// Something changed that may let a job start.
    dirty: bool,
    /// Something changed that may change why pending jobs wait (not only a job's end
    /// freeing slots, a submission or a start): the next pass visits every pending job.
    /// Otherwise a pass stops once no host has a free slot (see [`Sched::schedule`]).
    full_due: bool,
    /// Pending jobs submitted since the last pass (their reasons are set even by a pass
    /// that stops early).
    fresh: BTreeSet<JobKey>,
    /// By host index, the shared resource instances ([`SchedConfig::shared`]) the host is
    /// in.
    host_shared: Vec<Vec<usize>>,
    /// By shared resource instance, what running jobs reserve of it as of the last pass.
    shared_reserved: Vec<f64>,
    /// What the resource allocation limits count, as of the last pass (blimits).
    limit_usage: std::collections::HashMap<reslimits::CountKey, reslimits::Used>,
    /// What the jobs of each count reserve, as of the last pass.
    limit_amounts: std::collections::HashMap<reslimits::CountKey, BTreeMap<String, f64>>,
    /// The earliest time a job whose pre-execution command failed may be tried again
    /// (0 = none waits): a pass is due then ([`Requeues::not_before`]).
    next_retry: Millis,
    /// Slots reserved by pending parallel jobs (SLOT_RESERVE), as of the last pass.
    slot_resv: BTreeMap<JobKey, schedule::slot_resv::SlotResv>,
    /// Pending jobs whose victims are being killed for them (TERMINATE_WHEN =
    /// PREEMPT): until when they preempt no more, and the victims.
    preempt_wait: BTreeMap<JobKey, (Millis, Vec<JobKey>)>,
    /// Fairshare: each user's finished jobs' usage in each fairshare queue (queue, user),
    /// decayed ([`fairshare::FsHist`]); rebuilt by replay from the jobs' ends.
    fs_hist: BTreeMap<(Str, Str), fairshare::FsHist>,
    /// MultiCluster: what each remote cluster last reported (not in the log).
    mc_remote: BTreeMap<String, mc::Remote>,
    /// A pass stopped early since the last full one.
    cut_short: bool,
    /// The next pass is due for submissions only (nothing else changed since the last
    /// one): it visits the jobs submitted since, not every pending job — the others
    /// could not start then and nothing has changed for them (one `bsub` with a million
    /// jobs pending, issue 51).
    fresh_only: bool,
    /// Inactive queues whose pending jobs a pass has all given their reason (inactive
    /// queue, or forwarded): while such a queue stays inactive, a pass visits only its
    /// jobs touched since ([`counts::Counts::pending_touched`]) — a million jobs held in
    /// an inactive queue took half a second of every full pass.
    inact_settled: BTreeSet<String>,
    /// How many pending jobs the last pass visited (tests).
    #[cfg(test)]
    pub(crate) last_visits: usize,
    /// When the last full pass ran.
    last_full_pass: Millis,
    /// Events are being replayed ([`Sched::replay`]).
    replaying: bool,
    /// The local minute of the week (0 = Sunday 00:00) for run and dispatch windows;
    /// None until the runtime sets it (windows are then taken as open).
    week_minute: Option<u32>,
}

impl Sched {
    pub fn new(cfg: SchedConfig, now: Millis) -> Sched {
        let queues = cfg.queues.clone();
        let hosts: Vec<Host> = cfg
            .hosts
            .iter()
            .map(|h| {
                let mut h = h.clone();
                h.sbd_seen = now;
                h
            })
            .collect();
        let mut host_index: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, h) in hosts.iter().enumerate() {
            host_index.entry(short_key(&h.name)).or_default().push(i);
        }
        let host_shared = hosts
            .iter()
            .map(|h| {
                cfg.shared
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.hosts.iter().any(|x| basalt_core::same_host(x, &h.name)))
                    .map(|(k, _)| k)
                    .collect()
            })
            .collect();
        Sched {
            pass_index: schedule::pass_index(&hosts),
            host_types: schedule::HostTypes::of(&hosts),
            cfg,
            jobs: BTreeMap::new(),
            queues,
            hosts,
            host_index,
            host_shared,
            shared_reserved: Vec::new(),
            limit_usage: Default::default(),
            limit_amounts: Default::default(),
            last_job_id: 0,
            next_order: 0,
            next_seq: 0,
            gone: BTreeMap::new(),
            gone_order: VecDeque::new(),
            tokens: BTreeMap::new(),
            counts: Counts::default(),
            strs: strs::Interner::default(),
            epoch: 0,
            started_at: now,
            mbd_start: None,
            num_remove_jobs: 0,
            in_flight: BTreeSet::new(),
            dispatch_capped: false,
            missing: BTreeMap::new(),
            awaiting: BTreeMap::new(),
            ssusp_since: BTreeMap::new(),
            chk_periodic: Default::default(),
            effects: Vec::new(),
            dirty: true,
            full_due: true,
            fresh: BTreeSet::new(),
            next_retry: 0,
            slot_resv: BTreeMap::new(),
            preempt_wait: BTreeMap::new(),
            fs_hist: BTreeMap::new(),
            mc_remote: BTreeMap::new(),
            cut_short: false,
            fresh_only: false,
            inact_settled: BTreeSet::new(),
            #[cfg(test)]
            last_visits: 0,
            last_full_pass: now,
            replaying: false,
            week_minute: None,
        }
    }

    /// The configuration the core runs with.
    pub fn config(&self) -> &SchedConfig {
        &self.cfg
    }

    /// Every job in memory (unfinished, and finished but not yet cleaned), by key.
    pub fn jobs(&self) -> &BTreeMap<JobKey, Box<Job>> {
        &self.jobs
    }

    /// One job in memory.
    pub fn job(&self, key: JobKey) -> Option<&Job> {
        self.jobs.get(&key).map(|j| &**j)
    }

    /// The queues, in lsb.queues order.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// The batch hosts, in lsb.hosts order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The highest job id seen.
    pub fn last_job_id(&self) -> u64 {
        self.last_job_id
    }

    /// What is remembered of cleaned jobs (for dependencies on them).
    pub fn gone(&self) -> &BTreeMap<JobKey, Gone> {
        &self.gone
    }

    /// The epoch of the last MBD_START seen (this term's after [`Sched::start`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// When this mbatchd term started (ms).
    pub fn started_at(&self) -> Millis {
        self.started_at
    }

    /// Keep the start of the term a rebuilt core continues (ms).
    pub fn set_started_at(&mut self, at: Millis) {
        self.started_at = at;
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
                self.full_due = true;
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

    /// Log and apply one event, with the job's accounting record when the event ends
    /// one (see [`mod@acct`]).
    fn emit(&mut self, ev: Event) {
        self.emit_with_acct(ev);
    }

    fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.iter().find(|q| q.name == name)
    }

    fn queue_mut(&mut self, name: &str) -> Option<&mut Queue> {
        self.queues.iter_mut().find(|q| q.name == name)
    }

    /// The index in `hosts` of the first host that is `name` ([`basalt_core::same_host`]):
    /// a look-up in `host_index`, not a walk over every host.
    pub(crate) fn host_idx(&self, name: &str) -> Option<usize> {
        self.host_index
            .get(&short_key(name))?
            .iter()
            .copied()
            .find(|&i| basalt_core::same_host(&self.hosts[i].name, name))
    }

    fn host_mut(&mut self, name: &str) -> Option<&mut Host> {
        let i = self.host_idx(name)?;
        self.hosts.get_mut(i)
    }

    /// The canonical name of a batch host.
    pub fn host_name(&self, name: &str) -> Option<String> {
        self.host_idx(name).map(|i| self.hosts[i].name.clone())
    }
}

/// A host name's key in `Sched::host_index`: its short name, lower-cased.
fn short_key(name: &str) -> String {
    name.split('.').next().unwrap_or(name).to_ascii_lowercase()
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

#[cfg(test)]
mod backfill_tests;
#[cfg(test)]
mod chkpnt_tests;
#[cfg(test)]
mod clock_jump_tests;
#[cfg(test)]
mod compound_tests;
#[cfg(test)]
mod fairshare_tests;
#[cfg(test)]
mod fsm_tests;
#[cfg(test)]
mod host_loss_tests;
#[cfg(test)]
mod kill_moment_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod logswitch_tests;
#[cfg(test)]
mod lost_found_tests;
#[cfg(test)]
mod mc_tests;
#[cfg(test)]
mod modify_tests;
#[cfg(test)]
mod pass_tests;
#[cfg(test)]
mod pend_reason_tests;
#[cfg(test)]
mod pool_tests;
#[cfg(test)]
mod preempt_tests;
#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod requeue_tests;
#[cfg(test)]
mod reslimit_tests;
#[cfg(test)]
mod rusage_alt_tests;
#[cfg(test)]
mod select_tests;
#[cfg(test)]
mod slot_resv_tests;
#[cfg(test)]
mod slots_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod views_tests;
