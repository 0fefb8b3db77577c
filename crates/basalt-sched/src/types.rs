//! The values the core takes and returns: submissions, logged events, effects, and the
//! job records it keeps (the host and queue records are in [`crate::hosts_queues`]).

use crate::depend::Expr;
pub use crate::hosts_queues::{ClosedReason, Host, HostStatus, LimStatus, Queue, QueueShown};
pub use crate::strs::Str;
use basalt_core::job::JobState;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A job or an array element: (job id, array index; 0 for an ordinary job).
pub type JobKey = (u64, u32);

/// Milliseconds since the Unix epoch: the core's clock input.
pub type Millis = i64;

/// Seconds of a millisecond time (what the event log records).
pub fn secs(now: Millis) -> i64 {
    now.div_euclid(1000)
}

/// Who asks for something.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    pub uid: u32,
    pub user: String,
    pub host: String,
}

/// Everything a `JOB_NEW` record carries about a submission.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Submission {
    pub user: Str,
    pub uid: u32,
    /// LSF option bits (`basalt_core::job::sub`, `sub2`).
    pub options: u32,
    pub options2: u32,
    pub num_processors: u32,
    pub max_processors: u32,
    /// Seconds since the epoch.
    pub submit_time: i64,
    pub begin_time: i64,
    pub term_time: i64,
    /// The 11 LSF limits, -1 = unlimited (shared: most jobs ask for the same).
    pub rlimits: Arc<[i64; 11]>,
    pub umask: u32,
    /// The queue the job was submitted to (its current queue is [`Job::queue`]).
    pub queue: Str,
    pub res_req: Str,
    pub from_host: Str,
    pub cwd: Str,
    pub in_file: Str,
    pub out_file: Str,
    pub err_file: Str,
    pub sub_home_dir: Str,
    /// `<submitTime>.<jobId>`: the spooled job file in `logdir/info/`.
    pub job_file: Str,
    pub asked_hosts: Vec<String>,
    pub depend_cond: Str,
    pub pre_exec: Str,
    /// As given with -J ("" = none; bjobs then shows the command).
    pub job_name: Str,
    pub command: Str,
    pub mail_user: Str,
    pub project: Str,
    pub login_shell: Str,
    /// -cwd as given.
    pub spec_cwd: Str,
    pub user_group: Str,
    /// Basalt: the client's token for this submission ("" = none). mbatchd answers a
    /// repeated submission with the same token with the job it already created, so a
    /// client may retry after losing the answer (logged at the end of JOB_NEW).
    pub submit_token: Str,
    /// What few jobs ask for (boxed: one pointer in every other job).
    pub extras: Option<Box<SubExtras>>,
}

/// The rarer parts of a submission, logged after the submission token at the end of
/// JOB_NEW (Basalt's fields).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubExtras {
    /// `bsub -Ep`: the job's post-execution command ("" = none).
    pub post_exec: String,
    /// `bsub -Q`: the job's requeue exit values (overrides its queue's
    /// REQUEUE_EXIT_VALUES; "" = none).
    pub requeue_exit_values: String,
    /// What the submission's esubs printed, for the job's eexec ("" = nothing).
    pub esub_output: String,
    /// `bsub -app`: its application profile of lsb.applications ("" = none).
    pub app: String,
    /// `bsub -f`: files copied between the submission and execution hosts.
    pub files: Vec<FileTransfer>,
    /// `bsub -k "dir [period] [method=name]"` (options SUB_CHKPNT_DIR,
    /// SUB_CHKPNT_PERIOD): the checkpoint directory ("" = none), the period in seconds
    /// (0 = none) and the method ("" = the profile's, lsf.conf's or `default`). For
    /// `brestart`, the directory the restarted job was checkpointed to.
    pub chkpnt_dir: String,
    pub chkpnt_period: i64,
    pub chkpnt_method: String,
    /// `-k "... init=minutes"`: the first periodic checkpoint this long (seconds) after
    /// the start (0 = after one period).
    pub chkpnt_init: i64,
    /// `brestart` (options SUB_RESTART): the job whose checkpoint this job restarts from.
    pub restart_job: Option<JobKey>,
}

/// One `bsub -f "local op remote"`: the submission host's file (absolute), the
/// execution host's (relative to the job's working directory, or absolute), and the
/// operations (`basalt_core::job::xf`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileTransfer {
    pub local: String,
    pub remote: String,
    pub ops: u32,
}

impl Submission {
    /// `bsub -Ep` ("" = none).
    pub fn post_exec(&self) -> &str {
        self.extras.as_ref().map_or("", |e| e.post_exec.as_str())
    }

    /// `bsub -Q` ("" = none).
    pub fn requeue_exit_values(&self) -> &str {
        self.extras
            .as_ref()
            .map_or("", |e| e.requeue_exit_values.as_str())
    }

    /// What the esubs printed for eexec ("" = nothing).
    pub fn esub_output(&self) -> &str {
        self.extras.as_ref().map_or("", |e| e.esub_output.as_str())
    }

    /// `bsub -app` ("" = none).
    pub fn app(&self) -> &str {
        self.extras.as_ref().map_or("", |e| e.app.as_str())
    }

    /// `bsub -f` (none: empty).
    pub fn files(&self) -> &[FileTransfer] {
        self.extras.as_ref().map_or(&[], |e| e.files.as_slice())
    }

    /// `bsub -k` / `brestart`: the checkpoint directory ("" = none).
    pub fn chkpnt_dir(&self) -> &str {
        self.extras.as_ref().map_or("", |e| e.chkpnt_dir.as_str())
    }

    /// `brestart`: the job restarted from its checkpoint.
    pub fn restart_job(&self) -> Option<JobKey> {
        self.extras.as_ref().and_then(|e| e.restart_job)
    }
}

/// Index of the RUN limit in [`Submission::rlimits`].
pub const RLIMIT_RUN: usize = basalt_core::rlimit::RUN;

/// Resource usage of a job as sbatchd reports it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Usage {
    pub utime: f64,
    pub stime: f64,
    pub mem_kb: u64,
    pub swap_kb: u64,
    pub max_mem_kb: u64,
    pub avg_mem_kb: u64,
    pub pids: Vec<u32>,
    pub pgid: u32,
    /// Seconds since the epoch of the report (0 = none yet).
    pub time: i64,
}

/// A state change of mbatchd: one record of lsb.events. Live operation and replay both
/// apply these through the same function ([`crate::Sched::replay`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    JobNew {
        time: i64,
        job_id: u64,
        sub: Box<Submission>,
    },
    /// Dispatched to `hosts` (one entry per slot); the attempt is the number of starts.
    JobStart {
        time: i64,
        key: JobKey,
        hosts: Vec<String>,
        /// The `rusage[]` alternative it reserves, as the record's `effectiveResReq`
        /// (`rusage[mem=10000MB]`); empty for a job without `||` alternatives (and in a
        /// log written before they were kept): the first.
        effective_res_req: String,
    },
    JobStartAccept {
        time: i64,
        key: JobKey,
        pid: u32,
        pgid: u32,
    },
    JobExecute {
        time: i64,
        key: JobKey,
        exec_uid: u32,
        exec_user: String,
        exec_home: String,
        exec_cwd: String,
        pid: u32,
    },
    /// A new state (an LSF status code) with its reasons; for finished jobs the exit
    /// status and usage.
    JobStatus {
        time: i64,
        key: JobKey,
        status: u32,
        reasons: u32,
        subreasons: u32,
        cpu_time: f64,
        end_time: i64,
        usage: Option<Usage>,
        exit_status: i32,
        /// Basalt: TERM_OWNER, TERM_RUNLIMIT... for LSF-initiated ends ("" otherwise).
        term_reason: String,
    },
    /// A signal requested by a user: "KILL", "STOP", "RESUME", "KILL_DONE" (bkill -d),
    /// "KILL_REMOVE" (bkill -r) or a signal name.
    JobSignal {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        signal: String,
    },
    JobSwitch {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        queue: String,
    },
    /// bmod (JOB_MODIFY2): `key` is a job, an element, or an array's id with index 0
    /// (the array's elements the change is for, see [`crate::Sched::modify`]).
    JobModify {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        /// The job's umask (JOB_MODIFY2 carries one).
        umask: u32,
        change: Box<crate::Modify>,
    },
    /// btop (base 1) / bbot (base 2) to `position`.
    JobMove {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        position: u32,
        base: u32,
    },
    /// `bmig` (LSF's and OpenLava's MIG record): the job is killed and goes back to PEND
    /// at the head of its queue, to run again on `hosts` (none: where its submission
    /// allows), as the scheduler names them (host groups expanded).
    JobMigrate {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        hosts: Vec<String>,
    },
    /// A checkpoint was ordered (JOB_SIGACT, signal SIG_CHKPNT, ACT_START): `flags` are
    /// LSF's LSB_CHKPNT_* bits ([`crate::chkpnt::flags`]); `period` (seconds) is the
    /// job's checkpoint period from now on, when bchkpnt -p set it.
    ChkpntStart {
        time: i64,
        key: JobKey,
        flags: u32,
        period: Option<i64>,
    },
    /// A checkpoint ended (CHKPNT): `ok`, the echkpnt process, its flags, the period in
    /// force, and why it failed (a Basalt field; "" = it did not).
    ChkpntEnd {
        time: i64,
        key: JobKey,
        ok: bool,
        pid: u32,
        flags: u32,
        period: i64,
        message: String,
    },
    JobForce {
        time: i64,
        key: JobKey,
        uid: u32,
        user: String,
        hosts: Vec<String>,
        /// `brun -f` (LSF's RUNJOB_OPT_NOSTOP): never suspended because of load or run
        /// windows. Plain `brun` only starts the job.
        no_stop: bool,
    },
    JobClean {
        time: i64,
        key: JobKey,
    },
    /// MultiCluster, submission side (JOB_FORWARD): forwarded to `queue@cluster`; the
    /// job stays pending here until the remote cluster says it started (seed 004).
    JobForward {
        time: i64,
        key: JobKey,
        cluster: String,
        queue: String,
    },
    /// MultiCluster, execution side (JOB_ACCEPT): job `key` here was accepted from
    /// `cluster`, where it is `src` (forward `attempt` of it).
    JobAccept {
        time: i64,
        key: JobKey,
        cluster: String,
        src: JobKey,
        attempt: u32,
    },
    /// op: 1 open, 2 close, 3 activate, 4 inactivate.
    QueueCtrl {
        time: i64,
        op: u32,
        queue: String,
        uid: u32,
        user: String,
        message: String,
    },
    /// op: 1 open, 2 close.
    HostCtrl {
        time: i64,
        op: u32,
        host: String,
        uid: u32,
        user: String,
        message: String,
    },
    MbdStart {
        time: i64,
        master: String,
        cluster: String,
        num_hosts: u32,
        num_queues: u32,
        /// Basalt: the epoch of this mbatchd term.
        epoch: u64,
    },
    MbdDie {
        time: i64,
        master: String,
        exit_code: i32,
    },
    /// LSF's `LOG_SWITCH lastJobId`: written after the carried-over records of a new
    /// lsb.events (see [`crate::Sched::carry_over`]). Applying it keeps the job-id counter
    /// at least `last_job_id` and starts a new count of purged jobs.
    LogSwitch {
        time: i64,
        last_job_id: u64,
        /// The fairshare history carried into the new file (queue, user, CPU seconds,
        /// run seconds, decayed as of `time`); empty: none (the history is left as is).
        fairshare: Vec<(String, String, f64, f64)>,
    },
}

impl Event {
    /// The event time, seconds.
    pub fn time(&self) -> i64 {
        match self {
            Event::JobNew { time, .. }
            | Event::JobStart { time, .. }
            | Event::JobStartAccept { time, .. }
            | Event::JobExecute { time, .. }
            | Event::JobStatus { time, .. }
            | Event::JobSignal { time, .. }
            | Event::JobSwitch { time, .. }
            | Event::JobModify { time, .. }
            | Event::JobMove { time, .. }
            | Event::JobForce { time, .. }
            | Event::JobMigrate { time, .. }
            | Event::ChkpntStart { time, .. }
            | Event::ChkpntEnd { time, .. }
            | Event::JobClean { time, .. }
            | Event::JobForward { time, .. }
            | Event::JobAccept { time, .. }
            | Event::QueueCtrl { time, .. }
            | Event::HostCtrl { time, .. }
            | Event::MbdStart { time, .. }
            | Event::MbdDie { time, .. }
            | Event::LogSwitch { time, .. } => *time,
        }
    }
}

/// What sbatchd is asked to do with a running job.
#[derive(Debug, Clone, PartialEq)]
pub enum SbdAction {
    /// SIGINT, SIGTERM, SIGKILL; the report carries `term_reason`.
    Kill {
        term_reason: String,
    },
    /// SIGSTOP; the job becomes `state` (USUSP/SSUSP) with `reasons`.
    Stop {
        state: u32,
        reasons: u32,
    },
    Resume,
    Signal(String),
    /// bmod of a running job's CPU, memory or run limit: the job's limits in force from
    /// now on (its own, its application profile's and its queue's, as at dispatch).
    Limits([i64; 11]),
    /// Checkpoint the job (echkpnt); kill it after a successful checkpoint with `kill`.
    Chkpnt {
        kill: bool,
        force: bool,
        migrate: bool,
    },
}

/// What the runtime must do after an input. `Log` and `Acct` effects must be durable
/// before any other effect of the same batch is carried out or any reply is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Append to lsb.events.
    Log(Event),
    /// Append the job's JOB_FINISH record to lsb.acct: the job as the event that ended
    /// it left it (see [`mod@crate::acct`]).
    Acct(Box<Job>),
    /// Send the job (this attempt) to its first host's sbatchd.
    Dispatch {
        key: JobKey,
        attempt: u32,
        host: String,
    },
    /// Order sbatchd on `host` to act on the job.
    Signal {
        key: JobKey,
        attempt: u32,
        host: String,
        action: SbdAction,
    },
    /// The job's spooled file is no longer needed.
    RemoveJobFile { job_file: String },
    /// MultiCluster: send the job to `queue@cluster` (its JOB_FORWARD is logged; the
    /// answer comes back through [`crate::Sched::mc_forward_answer`]). `attempt`: which
    /// forward of the job this is.
    McForward {
        key: JobKey,
        cluster: String,
        queue: String,
        attempt: u32,
    },
    /// MultiCluster: act on the job the remote cluster runs for us ("KILL", "STOP",
    /// "RESUME" or a signal name).
    McControl {
        key: JobKey,
        cluster: String,
        signal: String,
    },
}

/// A job as the core keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: u64,
    /// Array index (1.. for an element of an array, 0 for an ordinary job).
    pub idx: u32,
    /// Shared by every element of an array.
    pub sub: Arc<Submission>,
    /// Submission order (the JOB_NEW's position in the log; elements share it).
    pub seq: u64,
    /// `%k` of an array: at most k elements started at once.
    pub array_limit: Option<u32>,
    /// The parsed `-w` condition (shared by the elements of an array).
    pub dep: Option<Arc<Expr>>,
    /// Logged state (what lsb.events says).
    pub state: JobState,
    /// The queue it is in now.
    pub queue: Str,
    /// FCFS order within its queue (btop/bbot rewrite it).
    pub order: i64,
    /// One entry per slot.
    pub hosts: Vec<String>,
    pub start_time: i64,
    pub end_time: i64,
    pub pid: u32,
    pub pgid: u32,
    pub exec_uid: u32,
    pub exec_user: Str,
    pub exec_home: Str,
    pub exec_cwd: Str,
    pub reasons: u32,
    pub subreasons: u32,
    pub exit_status: i32,
    pub cpu_time: f64,
    pub term_reason: Str,
    /// Number of dispatches so far (the current attempt).
    pub attempt: u32,
    /// The `rusage[]` alternative (`||`) its current attempt reserves: an index, 0 for
    /// the first (or a job without alternatives); from its JOB_START.
    pub rusage_alt: u32,
    /// The compound or alternative resource requirement its current attempt uses
    /// (`2*{...} + 3*{...}`, or one simple alternative): its JOB_START's
    /// `effectiveResReq`. None for a job of a simple requirement.
    pub used_req: Option<Box<str>>,
    /// bkill -d was asked: record DONE once it ended.
    pub kill_as_done: bool,
    /// A kill was ordered (term reason to report).
    pub kill_ordered: Option<Str>,
    // ---- transient (not in the log) ----
    /// The last usage sbatchd reported (None = none yet: [`Job::usage`] is all zero).
    pub usage: Option<Box<Usage>>,
    /// Pending reasons of the last scheduling pass: code -> hosts.
    /// Shared between jobs that pend for the same reasons (one pass builds it once).
    pub pend_reasons: std::sync::Arc<BTreeMap<u32, Vec<String>>>,
    /// Last report sequence number applied (sbatchd retries).
    pub last_seq: u64,
    /// A resume order is in flight (SSUSP after bresume).
    pub resume_sent: bool,
    /// The job has been forced with brun (ignore limits).
    pub forced: bool,
    /// ... with `brun -f`: load and run windows never suspend it (seed 000: "LSF does not
    /// suspend a job forced to run with brun -f").
    pub no_stop: bool,
    /// An order for sbatchd given before it answered the dispatch (sent once it does).
    pub pending_action: Option<Box<SbdAction>>,
    /// Requeues by pre-execution failure and exit value (None = none yet; boxed: rare).
    pub requeues: Option<Box<Requeues>>,
    /// Times it has been preempted (suspended with SUSP_MBD_PREEMPT): counted from the
    /// log's JOB_STATUS records, so replay, failover and reconfig keep it.
    pub preempt_count: u32,
    /// The job that preempted it last (not in the log: unknown after a restart).
    pub preempted_by: Option<JobKey>,
    /// MultiCluster (seed 004): where it was forwarded, or where it came from (None: a
    /// local job never forwarded; boxed: rare).
    pub mc: Option<Box<McJob>>,
    /// Its checkpoints (None: none ordered yet; boxed: rare).
    pub chk: Option<Box<crate::chkpnt::ChkState>>,
}

/// What a job has of MultiCluster job forwarding (seed 004), on either side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McJob {
    // ---- submission side ----
    /// The cluster and receive-jobs queue it is forwarded to now ("" = not forwarded),
    /// and since when (seconds): its last JOB_FORWARD.
    pub fwd_cluster: Str,
    pub fwd_queue: Str,
    pub fwd_time: i64,
    /// JOB_FORWARD records applied for it: the current forward's attempt number.
    pub forwards: u32,
    /// Times it came back because it could not start there (not started within
    /// MAX_RSCHED_TIME, or failed to start): counted from the log (JOB_STATUS PEND with
    /// [`crate::mc::PEND_MC_RETURNED`] and a counted cause).
    pub returns: u32,
    /// Its id in the execution cluster (0 = not confirmed yet; not in the log: the
    /// remote cluster's list gives it again after a restart).
    pub remote_id: u64,
    /// Remote queues that refused it, and until when they are not asked again (ms; not
    /// in the log).
    pub refused: Vec<(Str, Str, Millis)>,
    /// When the forward was last sent (ms, not in the log; 0 = not since this mbatchd
    /// started): resent when the remote cluster does not list it.
    pub sent_at: Millis,
    /// The remote cluster's last list of our jobs named this forward (not in the log):
    /// its last report of its queues counts the job. Until then Phase II counts it
    /// against the room of the queue it went to itself.
    pub listed: bool,
    // ---- execution side ----
    /// The cluster it was forwarded from ("" = submitted here), its id and index there,
    /// and that cluster's forward attempt: from its JOB_ACCEPT.
    pub src_cluster: Str,
    pub src_id: u64,
    pub src_idx: u32,
    pub src_attempt: u32,
    /// When it was accepted here (seconds).
    pub accepted_at: i64,
}

/// What requeues left on a job: counted from the log (replay gives the same counts), and
/// when the job may be dispatched again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requeues {
    /// Times its pre-execution command failed (JOB_STATUS PEND, reason 6).
    pub pre_exec_failures: u32,
    /// Times it was requeued for its exit value (REQUEUE_EXIT_VALUES).
    pub by_exit_value: u32,
    /// Hosts it exited on with an EXCLUDE(...) value: never dispatched there again.
    pub excluded: Vec<String>,
    /// Not dispatched before this time (ms; 0 = at once): a failed pre-execution command
    /// is tried again at the next scheduling interval (MBD_SLEEP_TIME), a job requeued by
    /// its exit value after BASALT_REQUEUE_DELAY, not in a loop.
    pub not_before: crate::Millis,
    /// The pending reason a pass gives it until `not_before` (PEND_JOB_PRE_EXEC, or
    /// PEND_JOB_REQUEUED after a requeue by exit value).
    pub wait_reason: u32,
    /// The post-execution status bits of its end (PDONE or PERR; 0 = none ran).
    pub post_bits: u32,
    /// brequeue of a running job: the state it goes to once sbatchd has killed it (PEND,
    /// or PSUSP with -H); 0 = none asked.
    pub requeue_to: u32,
    /// ... and the pending reason it then has (0: PEND_JOB_REQUEUED; bmig:
    /// PEND_JOB_MIG).
    pub requeue_reason: u32,
}

/// Which jobs `brequeue` acts on (its `-d -e -r -a` options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequeueStates {
    pub done: bool,
    pub exit: bool,
    pub running: bool,
}

impl Job {
    /// Name bjobs shows: -J, else the command; `name[idx]` for an array element.
    pub fn display_name(&self) -> String {
        if self.idx > 0 {
            format!("{}[{}]", self.array_name(), self.idx)
        } else if self.sub.job_name.is_empty() {
            self.sub.command.to_string()
        } else {
            self.sub.job_name.to_string()
        }
    }

    /// The job name without an array's index spec (`arr` of `arr[1-10]%2`).
    pub fn array_name(&self) -> &str {
        crate::array::base_name(&self.sub.job_name)
    }

    /// An element of a job array?
    pub fn is_element(&self) -> bool {
        self.idx > 0
    }

    /// Slots the job takes: once dispatched, one per host entry (an `-n min,max` job
    /// may have more than min); while pending, the minimum it asks for (at least 1).
    pub fn slots(&self) -> u32 {
        if self.state.is_pending() || self.hosts.is_empty() {
            self.sub.num_processors.max(1)
        } else {
            self.hosts.len() as u32
        }
    }

    pub fn key(&self) -> JobKey {
        (self.id, self.idx)
    }

    /// The last usage sbatchd reported (all zero before the first).
    pub fn usage(&self) -> &Usage {
        static NONE: Usage = Usage {
            utime: 0.0,
            stime: 0.0,
            mem_kb: 0,
            swap_kb: 0,
            max_mem_kb: 0,
            avg_mem_kb: 0,
            pids: Vec::new(),
            pgid: 0,
            time: 0,
        };
        self.usage.as_deref().unwrap_or(&NONE)
    }
}
