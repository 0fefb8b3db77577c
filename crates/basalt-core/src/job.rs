//! Batch job vocabulary shared by mbatchd, sbatchd, the event log and the commands:
//! job states with LSF's numeric codes, submit option bits, reason codes and texts.

use std::fmt;

/// A job state as LSF shows it. `code()` is the `jStatus` bit written to lsb.events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobState {
    Pend,
    Psusp,
    Run,
    Ssusp,
    Ususp,
    Exit,
    Done,
    Unkwn,
    Wait,
    Zombi,
}

/// jStatus bits (event-log.md §4.1).
pub mod status {
    pub const PEND: u32 = 0x1;
    pub const PSUSP: u32 = 0x2;
    pub const RUN: u32 = 0x4;
    pub const SSUSP: u32 = 0x8;
    pub const USUSP: u32 = 0x10;
    pub const EXIT: u32 = 0x20;
    pub const DONE: u32 = 0x40;
    pub const PDONE: u32 = 0x80;
    pub const PERR: u32 = 0x100;
    pub const WAIT: u32 = 0x200;
    pub const RUNKWN: u32 = 0x8000;
    pub const UNKWN: u32 = 0x10000;
    pub const PROV: u32 = 0x20000;
}

impl JobState {
    /// The LSF status bit.
    pub fn code(self) -> u32 {
        match self {
            JobState::Pend => status::PEND,
            JobState::Psusp => status::PSUSP,
            JobState::Run => status::RUN,
            JobState::Ssusp => status::SSUSP,
            JobState::Ususp => status::USUSP,
            JobState::Exit | JobState::Zombi => status::EXIT,
            JobState::Done => status::DONE,
            JobState::Unkwn => status::UNKWN,
            JobState::Wait => status::WAIT,
        }
    }

    /// The state for a status word (post-exec bits ignored). ZOMBI has no bit of its own
    /// (it is EXIT with `EXIT_ZOMBIE`), so `from_code` never returns it.
    pub fn from_code(code: u32) -> Option<JobState> {
        let c = code & !(status::PDONE | status::PERR);
        Some(match c {
            status::PEND => JobState::Pend,
            status::PSUSP => JobState::Psusp,
            status::RUN => JobState::Run,
            status::SSUSP => JobState::Ssusp,
            status::USUSP => JobState::Ususp,
            status::EXIT => JobState::Exit,
            status::DONE => JobState::Done,
            status::UNKWN => JobState::Unkwn,
            status::WAIT => JobState::Wait,
            _ => return None,
        })
    }

    /// The name bjobs prints.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Pend => "PEND",
            JobState::Psusp => "PSUSP",
            JobState::Run => "RUN",
            JobState::Ssusp => "SSUSP",
            JobState::Ususp => "USUSP",
            JobState::Exit => "EXIT",
            JobState::Done => "DONE",
            JobState::Unkwn => "UNKWN",
            JobState::Wait => "WAIT",
            JobState::Zombi => "ZOMBI",
        }
    }

    /// DONE or EXIT (ZOMBI counts as finished for the user).
    pub fn is_finished(self) -> bool {
        matches!(self, JobState::Done | JobState::Exit | JobState::Zombi)
    }

    /// PEND or PSUSP.
    pub fn is_pending(self) -> bool {
        matches!(self, JobState::Pend | JobState::Psusp)
    }

    /// RUN, SSUSP, USUSP or UNKWN: the job holds slots on its hosts.
    pub fn is_started(self) -> bool {
        matches!(
            self,
            JobState::Run | JobState::Ssusp | JobState::Ususp | JobState::Unkwn
        )
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Submit option bits (`options` in JOB_NEW, event-log.md §4.2).
pub mod sub {
    pub const JOB_NAME: u32 = 0x1;
    pub const QUEUE: u32 = 0x2;
    pub const HOST: u32 = 0x4;
    pub const IN_FILE: u32 = 0x8;
    pub const OUT_FILE: u32 = 0x10;
    pub const ERR_FILE: u32 = 0x20;
    pub const EXCLUSIVE: u32 = 0x40;
    pub const NOTIFY_END: u32 = 0x80;
    pub const NOTIFY_BEGIN: u32 = 0x100;
    pub const USER_GROUP: u32 = 0x200;
    pub const CHKPNT_PERIOD: u32 = 0x400;
    pub const CHKPNT_DIR: u32 = 0x800;
    pub const RESTART_FORCE: u32 = 0x1000;
    pub const RESTART: u32 = 0x2000;
    pub const RERUNNABLE: u32 = 0x4000;
    pub const WINDOW_SIG: u32 = 0x8000;
    pub const HOST_SPEC: u32 = 0x10000;
    pub const DEPEND_COND: u32 = 0x20000;
    pub const RES_REQ: u32 = 0x40000;
    pub const OTHER_FILES: u32 = 0x80000;
    pub const PRE_EXEC: u32 = 0x100000;
    pub const LOGIN_SHELL: u32 = 0x200000;
    pub const MAIL_USER: u32 = 0x400000;
    pub const MODIFY: u32 = 0x800000;
    pub const MODIFY_ONCE: u32 = 0x1000000;
    pub const PROJECT_NAME: u32 = 0x2000000;
    pub const INTERACTIVE: u32 = 0x4000000;
    pub const PTY: u32 = 0x8000000;
    pub const PTY_SHELL: u32 = 0x10000000;
}

/// An interactive batch job's mode from its `options` bits, as sbatchd's job spec
/// carries it: 0 a batch job, 1 `bsub -I`, 2 `-Ip`, 3 `-Is`.
pub fn interactive_mode(options: u32) -> u32 {
    if options & sub::INTERACTIVE == 0 {
        0
    } else if options & sub::PTY_SHELL != 0 {
        3
    } else if options & sub::PTY != 0 {
        2
    } else {
        1
    }
}

/// The usage of a job's tasks run through RES (`blaunch`), as `blaunch` appends it to
/// the job's `LSB_ACCT_FILE` (`/tmp/.<submit time>.<job id>.acct` on the first execution
/// host) and the job's supervisor adds it to the job's: one line per task, `<host> <user
/// CPU s> <system CPU s> <max resident KB>`.
pub mod task_usage {
    /// One task's line.
    pub fn line(host: &str, utime: f64, stime: f64, max_rss_kb: u64) -> String {
        format!("{host} {utime:.3} {stime:.3} {max_rss_kb}\n")
    }

    /// The sum over the file's lines (bad lines skipped): user and system CPU seconds,
    /// and the tasks' largest resident sets added up (they may have run at once), KB.
    pub fn sum(text: &str) -> (f64, f64, u64) {
        let mut total = (0.0, 0.0, 0u64);
        for l in text.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [_, u, s, kb] = f.as_slice() else {
                continue;
            };
            let (Ok(u), Ok(s), Ok(kb)) = (u.parse::<f64>(), s.parse::<f64>(), kb.parse::<u64>())
            else {
                continue;
            };
            if !(u.is_finite() && s.is_finite() && u >= 0.0 && s >= 0.0) {
                continue;
            }
            total.0 += u;
            total.1 += s;
            total.2 = total.2.saturating_add(kb);
        }
        total
    }
}

/// How `bjobs -l` and `bhist -l` name an interactive job's mode (after its queue):
/// `Interactive mode`, `Interactive pseudo-terminal mode` (`-Ip`) or `Interactive
/// pseudo-terminal shell mode` (`-Is`); None for a batch job.
pub fn interactive_label(options: u32) -> Option<&'static str> {
    match interactive_mode(options) {
        0 => None,
        1 => Some("Interactive mode"),
        2 => Some("Interactive pseudo-terminal mode"),
        _ => Some("Interactive pseudo-terminal shell mode"),
    }
}

/// Submit option bits (`options2`).
pub mod sub2 {
    pub const HOLD: u32 = 0x1;
    pub const MODIFY_CMD: u32 = 0x2;
    pub const BSUB_BLOCK: u32 = 0x4;
    pub const HOST_NT: u32 = 0x8;
    pub const HOST_UX: u32 = 0x10;
    pub const QUEUE_CHKPNT: u32 = 0x20;
    pub const QUEUE_RERUNNABLE: u32 = 0x40;
    pub const IN_FILE_SPOOL: u32 = 0x80;
    pub const JOB_CMD_SPOOL: u32 = 0x100;
    pub const JOB_PRIORITY: u32 = 0x200;
    pub const USE_DEF_PROCLIMIT: u32 = 0x400;
    pub const MODIFY_RUN_JOB: u32 = 0x800;
    pub const MODIFY_PEND_JOB: u32 = 0x1000;
    pub const JOB_GROUP: u32 = 0x2000;
    pub const JOB_DESC: u32 = 0x4000;
    /// Basalt: `-oo` (overwrite the output file).
    pub const OUT_OVERWRITE: u32 = 0x1000_0000;
    /// Basalt: `-eo` (overwrite the error file).
    pub const ERR_OVERWRITE: u32 = 0x2000_0000;
}

/// `bsub -f` transfer operations (a `JOB_NEW` xf entry's options, LSF's `XF_OP_*`).
pub mod xf {
    /// `>`: the submission host's file to the execution host before the job.
    pub const SUB2EXEC: u32 = 0x1;
    /// `<`: the execution host's file back to the submission host after the job.
    pub const EXEC2SUB: u32 = 0x2;
    /// `>>`: appended to the execution host's file before the job.
    pub const SUB2EXEC_APPEND: u32 = 0x4;
    /// `<<`: appended to the submission host's file after the job.
    pub const EXEC2SUB_APPEND: u32 = 0x8;

    /// The operation bits of a `bsub -f` operator (`>`, `<`, `<<`, `>>`, `><`, `<>`).
    pub fn of_operator(op: &str) -> Option<u32> {
        Some(match op {
            ">" => SUB2EXEC,
            "<" => EXEC2SUB,
            ">>" => SUB2EXEC_APPEND,
            "<<" => EXEC2SUB_APPEND,
            "><" | "<>" => SUB2EXEC | EXEC2SUB,
            _ => return None,
        })
    }
}

/// Suspend-reason bits.
pub mod susp {
    pub const USER_RESUME: u32 = 0x1;
    pub const USER_STOP: u32 = 0x2;
    pub const QUEUE_REASON: u32 = 0x4;
    pub const QUEUE_WINDOW: u32 = 0x8;
    pub const HOST_LOCK: u32 = 0x20;
    pub const LOAD_REASON: u32 = 0x40;
    /// SUSP_MBD_PREEMPT: suspended by mbatchd for a higher-priority job (seed 002).
    pub const MBD_PREEMPT: u32 = 0x80;
    pub const QUE_STOP_COND: u32 = 0x200;
    pub const QUE_RESUME_COND: u32 = 0x400;
    pub const PG_IT: u32 = 0x800;
    pub const REASON_RESET: u32 = 0x1000;
    pub const LOAD_UNAVAIL: u32 = 0x2000;
    pub const ADMIN_STOP: u32 = 0x4000;
    pub const RES_RESERVE: u32 = 0x8000;
    pub const MBD_LOCK: u32 = 0x10000;
    pub const RES_LIMIT: u32 = 0x20000;
    pub const SBD_STARTUP: u32 = 0x40000;
    pub const HOST_LOCK_MASTER: u32 = 0x80000;
}

/// Exit-reason bits.
pub mod exit_reason {
    pub const RESTART: u32 = 0x1;
    pub const ZOMBIE: u32 = 0x2;
    pub const KILL_ZOMBIE: u32 = 0x8;
    pub const ZOMBIE_JOB: u32 = 0x10;
    pub const RERUN: u32 = 0x20;
    pub const NO_MAPPING: u32 = 0x40;
    pub const INIT_ENVIRON: u32 = 0x100;
    pub const PRE_EXEC: u32 = 0x200;
    pub const REQUEUE: u32 = 0x400;
    pub const REMOVE: u32 = 0x800;
    pub const VALUE_REQUEUE: u32 = 0x1000;
}

/// Pending reason codes used by Basalt (cli-output.md §3.3).
pub mod pend {
    pub const NEW_JOB: u32 = 1;
    pub const START_TIME: u32 = 2;
    pub const DEPEND: u32 = 3;
    pub const DEPEND_INVALID: u32 = 4;
    /// PEND_JOB_MIG: a migrated job waits to be scheduled again.
    pub const MIG: u32 = 5;
    /// PEND_JOB_PRE_EXEC: a pre-execution command failed; tried again later.
    pub const PRE_EXEC: u32 = 6;
    /// PEND_JOB_RESTART_FILE: the job could not be restarted from its checkpoint;
    /// tried again later.
    pub const RESTART_FILE: u32 = 12;
    /// PEND_JOB_DELAY_SCHED: mbatchd has as many dispatches under way as it allows
    /// (lsf.conf `LSB_MAX_JOB_DISPATCH_PER_SESSION`).
    pub const DELAY_SCHED: u32 = 13;
    pub const SWITCHED: u32 = 14;
    pub const REQUEUED: u32 = 23;
    /// Basalt's (MultiCluster, seed 004): the job was forwarded to a remote cluster and
    /// waits there.
    pub const MC_FORWARDED: u32 = 90;
    /// Basalt's: the job came back from a remote cluster (refused there, not started in
    /// time, failed to start, or lost) and waits to be scheduled again.
    pub const MC_RETURNED: u32 = 91;
    pub const QUEUE_INACT: u32 = 301;
    pub const QUEUE_WINDOW: u32 = 302;
    pub const QUEUE_JOB_LIMIT: u32 = 303;
    pub const QUEUE_USER_LIMIT: u32 = 304;
    /// PEND_QUE_PJOB_LIMIT: the queue's PJOB_LIMIT.
    pub const QUEUE_PROC_LIMIT: u32 = 314;
    pub const SPAN: u32 = 312;
    /// Basalt's: the queue uses its share of its slot pool (SLOT_POOL, SLOT_SHARE) while
    /// the pool's other queues have work.
    pub const SLOT_POOL: u32 = 332;
    pub const USER_LIMIT: u32 = 601;
    /// PEND_USER_PJOB_LIMIT: lsb.users JL/P.
    pub const USER_PROC_LIMIT: u32 = 603;
    /// PEND_UGRP_PJOB_LIMIT: a user group's own JL/P row in lsb.users.
    pub const GROUP_PROC_LIMIT: u32 = 604;
    pub const USER_STOP: u32 = 607;
    pub const RES_REQ: u32 = 1001;
    /// PEND_HOST_NONEXCLUSIVE: an exclusive job (`bsub -x`) and a host running other
    /// jobs.
    pub const NONEXCLUSIVE: u32 = 1002;
    pub const HOST_CLOSED: u32 = 1301;
    pub const HOST_LOCKED: u32 = 1302;
    pub const NOT_ENOUGH_SLOTS: u32 = 1303;
    pub const DISPATCH_WINDOW: u32 = 1304;
    pub const HOST_JOB_LIMIT: u32 = 1305;
    pub const HOST_USER_LIMIT: u32 = 1309;
    pub const NOT_QUEUE_HOST: u32 = 1310;
    pub const NOT_ASKED_HOST: u32 = 1311;
    pub const JUST_STARTED: u32 = 1314;
    pub const LIM_UNREACH: u32 = 1316;
    pub const QUEUE_RES_REQ: u32 = 1318;
    pub const EXCLUSIVE: u32 = 1322;
    /// PEND_HOST_LESS_DURATION: the slots there are reserved for a parallel job that
    /// starts before this (backfill) job would end.
    pub const LESS_DURATION: u32 = 1329;
    /// Basalt's (LSF has no number of its own for it): the host's free slots are
    /// reserved for other pending jobs (SLOT_RESERVE).
    pub const SLOTS_RESERVED: u32 = 1390;
    pub const SBD_UNREACH: u32 = 1601;
    pub const LOAD_BASE: u32 = 2001;
    /// PEND_HOST_JOB_RUSAGE, 2601 + i: the host has not what the job reserves of
    /// resource i of the cluster's resource table (the built-in load indices first).
    pub const RESERVE_BASE: u32 = 2601;
    /// The first code past the reservation reasons (LSF's 2601–2900).
    pub const RESERVE_END: u32 = 2901;
}

/// The text of a pending-reason code (without the trailing `;` or host count).
pub fn pend_reason_text(code: u32) -> String {
    let fixed = match code {
        1 => "New job is waiting for scheduling",
        2 => "The job has a specified start time",
        3 => "Job dependency condition not satisfied",
        4 => "Dependency condition invalid or never satisfied",
        5 => "Migrating job is waiting for rescheduling",
        6 => "The job's pre-exec command exited with non-zero status",
        12 => "Unable to restart job from checkpoint",
        13 => "The schedule of the job is postponed for a while",
        14 => "Waiting for re-scheduling after switching queue",
        19 => "Waiting for re-scheduling after parameters have been changed",
        23 => "The job has been requeued",
        90 => "The job was forwarded to a remote cluster",
        91 => "The job was returned from a remote cluster",
        38 => "The job array has reached its running element limit",
        40 => "Preempted job is waiting to be resumed",
        301 => "The queue is inactivated by the administrator",
        302 => "The queue is inactivated by its time windows",
        303 => "The queue has reached its job slot limit",
        304 => "User has reached the per-user job slot limit of the queue",
        312 => "Not enough hosts to meet the job's spanning requirement",
        332 => "The queue has reached its share of its slot pool",
        314 => "The queue has reached its per-processor job slot limit",
        317 => "Not allowed due to resource limit.",
        601 => "The user has reached his/her job slot limit",
        603 => "The user has reached his/her per-processor job slot limit",
        604 => "One of the user's groups has reached its per-processor job slot limit",
        607 => "The job was suspended by the user while pending",
        1001 => "Job's resource requirements not satisfied",
        1002 => "Job's requirement for exclusive execution not satisfied",
        1301 => "Closed by LSF administrator",
        1302 => "Host is locked",
        1303 => "Not enough job slot(s)",
        1304 => "Dispatch windows closed",
        1305 => "Job slot limit reached",
        1309 => "Host's per-user job slot limit reached",
        1310 => "Not usable to the queue",
        1311 => "Not specified in job submission",
        1314 => "Just started a job recently",
        1316 => "LIM is unreachable now",
        1318 => "Queue's resource requirements not satisfied",
        1322 => "Running an exclusive job",
        1329 => "Not enough slots or resources for whole duration of the job",
        1390 => "Job slots are reserved for other jobs",
        1601 => "Unable to reach slave batch server",
        _ => "",
    };
    if !fixed.is_empty() {
        return fixed.to_string();
    }
    if (2001..2001 + 11).contains(&code) {
        // openlava:lsbatch/lib/lsb.reason.c getMsgByRes (PEND_HOST_LOAD).
        const LOAD_PEND: [&str; 11] = [
            "The 15s effective CPU queue length (r15s) is beyond threshold",
            "The 1 min effective CPU queue length (r1m) is beyond threshold",
            "The 15 min effective CPU queue length (r15m) is beyond threshold",
            "The CPU utilization (ut) is beyond threshold",
            "The paging rate (pg) is beyond threshold",
            "The disk IO rate (io) is beyond threshold",
            "There are too many login users (ls)",
            "The idle time (it) is not long enough",
            "The available /tmp space (tmp) is low",
            "The available swap space (swp) is low",
            "The available memory (mem) is low",
        ];
        return LOAD_PEND[(code - 2001) as usize].to_owned();
    }
    if let Some(idx) = code
        .checked_sub(2601)
        .and_then(|i| crate::BUILTIN_INDICES.get(i as usize))
    {
        return format!(
            "Job requirements for reserving resource ({}) not satisfied",
            idx.name()
        );
    }
    format!("Unknown pending reason {code}")
}

/// Long names of the built-in indices as used in reason texts.
pub const LOAD_INDEX_LONG: [&str; 11] = [
    "15-second CPU run queue length (r15s)",
    "1-minute CPU run queue length (r1m)",
    "15-minute CPU run queue length (r15m)",
    "1-minute CPU utilization (ut)",
    "Paging rate (pg)",
    "Disk IO rate (io)",
    "Number of login sessions (ls)",
    "Idle time (it)",
    "Available /tmp space (tmp)",
    "Available swap space (swp)",
    "Available memory (mem)",
];

/// Is a pending reason about hosts (shown as `<text>: N host(s);`)?
pub fn pend_reason_is_host(code: u32) -> bool {
    code >= 1001
}

/// The suspending-reason text (cli-output.md §3.3): first matching bit wins.
pub fn susp_reason_text(reasons: u32, subreasons: u32) -> String {
    use susp::*;
    if reasons & USER_STOP != 0 {
        return " The job was suspended by user;".into();
    }
    if reasons & ADMIN_STOP != 0 {
        return " The job was suspended by LSF admin or root;".into();
    }
    if reasons & MBD_PREEMPT != 0 {
        return " The job was preempted by a higher priority job;".into();
    }
    if reasons & QUEUE_WINDOW != 0 {
        return " The run windows of the queue are closed;".into();
    }
    if reasons & HOST_LOCK != 0 {
        return " The execution host is locked by LSF administrator now;".into();
    }
    if reasons & HOST_LOCK_MASTER != 0 {
        return " The execution host is locked by master LIM now;".into();
    }
    if reasons & USER_RESUME != 0 {
        return " Waiting for re-scheduling after being resumed by user;".into();
    }
    if reasons & QUE_STOP_COND != 0 {
        return " STOP_COND is true with current host load;".into();
    }
    if reasons & QUE_RESUME_COND != 0 {
        return " RESUME_COND is false with current host load;".into();
    }
    if reasons & RES_RESERVE != 0 {
        return " Job's requirements for resource reservation not satisfied;".into();
    }
    if reasons & PG_IT != 0 {
        return " Job was suspended due to paging rate (pg) and the host is not idle yet".into();
    }
    if reasons & LOAD_UNAVAIL != 0 {
        return " Load information on execution host(s) is unavailable".into();
    }
    if reasons & LOAD_REASON != 0 {
        let name = LOAD_INDEX_LONG.get(subreasons as usize).map_or_else(
            || format!("external load index {subreasons}"),
            |s| s.to_string(),
        );
        return format!(" Host load exceeded threshold:  {name}");
    }
    if reasons & RES_LIMIT != 0 {
        let what = match subreasons {
            0x1 => "RUNLIMIT",
            0x2 => "DEADLINE",
            0x4 => "PROCESSLIMIT",
            0x8 => "CPULIMIT",
            0x10 => "MEMLIMIT",
            _ => "A resource limit",
        };
        return format!(" {what} was reached;");
    }
    " Unknown suspending reason;".into()
}

/// Split a raw `wait()` status into (exit code, terminating signal).
pub fn wait_status_parts(status: i32) -> (i32, Option<i32>) {
    let sig = status & 0x7f;
    if sig == 0 {
        ((status >> 8) & 0xff, None)
    } else {
        (128 + sig, Some(sig))
    }
}

/// The wait status recorded for a dispatched job that a kill (bkill, preemption) ended
/// without a non-zero status of its own — its command never ran (killed during its
/// pre-execution commands, or before sbatchd had it), or it exited 0 as the kill came:
/// exit code 130 (128 + SIGINT, the first signal of the kill sequence), what LSF logs
/// for a job bkill ends (`JOB_STATUS` exitStatus 33280). A killed job ends EXIT, never
/// DONE; this is also the `LSB_JOBEXIT_STAT` its post-execution commands see.
pub const KILLED_WAIT_STATUS: i32 = 130 << 8;

/// Signal names accepted by `bkill -s` (without SIG), with their Linux numbers.
pub const SIGNALS: &[(&str, i32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// A signal by name (`TERM`, `SIGTERM`, case-insensitive) or number.
pub fn signal_number(s: &str) -> Option<i32> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let up = t.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    SIGNALS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The name (without SIG) of a signal number.
pub fn signal_name(n: i32) -> Option<&'static str> {
    SIGNALS.iter().find(|(_, v)| *v == n).map(|(k, _)| *k)
}

/// A job's command as LSF shows and logs it, on one line: a multi-line command (a
/// script given on standard input, spooled) has its lines joined by `;`, without the
/// final newline or carriage returns (`#!/bin/sh;echo hi`). lsb.events cannot hold a
/// line break (LSF deletes them from a record's strings, which would glue the lines
/// together), so the records carry this form.
pub fn one_line_command(cmd: &str) -> String {
    if !cmd.contains(['\n', '\r']) {
        return cmd.to_owned();
    }
    cmd.trim_end_matches(['\n', '\r'])
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_script_is_one_line_of_its_lines_joined_by_semicolons() {
        use super::one_line_command;
        assert_eq!(one_line_command("sleep 10"), "sleep 10");
        assert_eq!(
            one_line_command("#!/bin/sh\nn=0\r\nif [ $n ]; then\n  echo zero\nfi\n"),
            "#!/bin/sh;n=0;if [ $n ]; then;  echo zero;fi"
        );
    }

    #[test]
    fn task_usage_lines_add_up_and_bad_lines_are_skipped() {
        let text = format!(
            "{}{}garbage\nhostX 1 -2 3\nhostY nan 1 1\n",
            task_usage::line("hostB", 1.5, 0.25, 1000),
            task_usage::line("hostC", 0.5, 0.75, 2000)
        );
        assert_eq!(task_usage::sum(&text), (2.0, 1.0, 3000));
        assert_eq!(task_usage::sum(""), (0.0, 0.0, 0));
    }

    use super::*;

    #[test]
    fn codes_round_trip() {
        for s in [
            JobState::Pend,
            JobState::Psusp,
            JobState::Run,
            JobState::Ssusp,
            JobState::Ususp,
            JobState::Exit,
            JobState::Done,
            JobState::Unkwn,
            JobState::Wait,
        ] {
            assert_eq!(JobState::from_code(s.code()), Some(s));
        }
        assert_eq!(JobState::from_code(192), Some(JobState::Done));
        assert_eq!(JobState::from_code(3), None);
    }

    #[test]
    fn wait_status() {
        assert_eq!(wait_status_parts(0), (0, None));
        assert_eq!(wait_status_parts(256), (1, None));
        assert_eq!(wait_status_parts(33280), (130, None));
        assert_eq!(wait_status_parts(9), (137, Some(9)));
    }

    #[test]
    fn signals() {
        assert_eq!(signal_number("SIGTERM"), Some(15));
        assert_eq!(signal_number("usr1"), Some(10));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("FOO"), None);
        assert_eq!(signal_name(19), Some("STOP"));
    }

    #[test]
    fn reason_texts() {
        assert_eq!(pend_reason_text(1), "New job is waiting for scheduling");
        assert_eq!(
            pend_reason_text(pend::LOAD_BASE + 1),
            "The 1 min effective CPU queue length (r1m) is beyond threshold"
        );
        assert_eq!(
            pend_reason_text(pend::LOAD_BASE + 10),
            "The available memory (mem) is low"
        );
        assert_eq!(
            susp_reason_text(susp::LOAD_REASON, 1),
            " Host load exceeded threshold:  1-minute CPU run queue length (r1m)"
        );
        assert_eq!(
            susp_reason_text(susp::LOAD_REASON, 0),
            " Host load exceeded threshold:  15-second CPU run queue length (r15s)"
        );
        assert_eq!(
            susp_reason_text(susp::USER_STOP | susp::MBD_LOCK, 0),
            " The job was suspended by user;"
        );
    }
}
