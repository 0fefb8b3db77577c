//! lsb.queues: one [`Queue`] per Queue section, with its thresholds and job controls.

use std::collections::BTreeMap;

use crate::cluster::ClusterFile;
use crate::error::Ctx;
use crate::lexer::{self, Section};
use crate::not_applied::{self, LSB_QUEUES};
use crate::shared::Shared;
use crate::timewindow::TimeWindow;

use super::multicluster::{self, ALL_CLUSTERS, DEFAULT_IMPT_JOBBKLG};
use super::{list, window};

/// Every lsb.queues keyword of the format reference (§7), besides load indices.
pub const QUEUE_KEYS: &[&str] = &[
    "QUEUE_NAME",
    "DESCRIPTION",
    "PRIORITY",
    "NICE",
    "ADMINISTRATORS",
    "QJOB_LIMIT",
    "UJOB_LIMIT",
    "PJOB_LIMIT",
    "HJOB_LIMIT",
    "PROCLIMIT",
    "USERS",
    "HOSTS",
    "RUN_WINDOW",
    "DISPATCH_WINDOW",
    "RES_REQ",
    "STOP_COND",
    "RESUME_COND",
    "EXCLUSIVE",
    "JOB_CONTROLS",
    "TERMINATE_WHEN",
    "JOB_STARTER",
    "PRE_EXEC",
    "POST_EXEC",
    "PRE_POST_EXEC_USER",
    "REQUEUE_EXIT_VALUES",
    "CPULIMIT",
    "RUNLIMIT",
    "MEMLIMIT",
    "SWAPLIMIT",
    "PROCESSLIMIT",
    "FILELIMIT",
    "DATALIMIT",
    "STACKLIMIT",
    "CORELIMIT",
    "DEFAULT_HOST_SPEC",
    "FAIRSHARE",
    "SLOT_POOL",
    "SLOT_SHARE",
    "PREEMPTION",
    "MAX_JOB_PREEMPT",
    "NO_PREEMPT_RUN_TIME",
    "NO_PREEMPT_FINISH_TIME",
    "NEW_JOB_SCHED_DELAY",
    "JOB_ACCEPT_INTERVAL",
    "SLOT_RESERVE",
    "BACKFILL",
    "POLICIES",
    "OWNERSHIP",
    "INTERACTIVE",
    "CHKPNT",
    "RERUNNABLE",
    "MIG",
    "IGNORE_DEADLINE",
    "CPU_TIME_FACTOR",
    "RUN_TIME_FACTOR",
    "RUN_JOB_FACTOR",
    "HIST_HOURS",
    "COMMITTED_RUN_TIME_FACTOR",
    "FAIRSHARE_ADJUSTMENT_FACTOR",
    "LOCAL_MAX_PREEXEC_RETRY",
    "LOCAL_MAX_PREEXEC_RETRY_ACTION",
    "MAX_PREEXEC_RETRY",
    "MAX_JOB_REQUEUE",
    "SUCCESS_EXIT_VALUES",
];

/// `SUCCESS_EXIT_VALUES = code ...` (lsb.queues, lsb.applications): exit values that mean
/// the job succeeded (DONE) besides 0.
pub fn parse_exit_values(v: &str) -> Result<Vec<u8>, String> {
    v.split_whitespace()
        .map(|t| {
            t.parse::<u8>()
                .map_err(|_| format!("`{t}` is not an exit value (0-255)"))
        })
        .collect()
}

/// `REQUEUE_EXIT_VALUES = [exit_code ...] [EXCLUDE(exit_code ...)]` (lsb.queues, and
/// `bsub -Q`, LSF 10.1): a job that exits with one of `requeue` goes back to PEND at the
/// head of its queue; one of `exclude` too, and is never dispatched again to the host it
/// exited on. `all` stands for every non-zero exit value (a job that succeeded is done),
/// `~n` leaves one out of `all`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequeueValues {
    pub requeue: Vec<u8>,
    pub exclude: Vec<u8>,
    pub all: bool,
    pub except: Vec<u8>,
}

impl RequeueValues {
    /// Parse the value; exit codes are 0–255.
    pub fn parse(v: &str) -> Result<RequeueValues, String> {
        let mut out = RequeueValues::default();
        let mut rest = v.trim();
        let code = |t: &str| -> Result<u8, String> {
            t.parse::<u8>()
                .map_err(|_| format!("`{t}` is not an exit value (0-255)"))
        };
        while !rest.is_empty() {
            let upper = rest.to_ascii_uppercase();
            if upper.starts_with("EXCLUDE") {
                let after = rest["EXCLUDE".len()..].trim_start();
                let Some(inner) = after.strip_prefix('(') else {
                    return Err("EXCLUDE must be followed by (exit_code ...)".to_owned());
                };
                let Some(end) = inner.find(')') else {
                    return Err("EXCLUDE( has no closing parenthesis".to_owned());
                };
                for t in inner[..end].split_whitespace() {
                    out.exclude.push(code(t)?);
                }
                rest = inner[end + 1..].trim_start();
                continue;
            }
            let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
            let word = &rest[..end];
            if word.eq_ignore_ascii_case("all") {
                out.all = true;
            } else if let Some(n) = word.strip_prefix('~') {
                out.except.push(code(n)?);
            } else {
                out.requeue.push(code(word)?);
            }
            rest = rest[end..].trim_start();
        }
        if !out.except.is_empty() && !out.all {
            return Err("~exit_code is only meaningful after all".to_owned());
        }
        Ok(out)
    }

    /// Nothing requeues.
    pub fn is_empty(&self) -> bool {
        self.requeue.is_empty() && self.exclude.is_empty() && !self.all
    }

    /// What a job that exited with `code` does: None (it ends), Some(false) (requeued),
    /// Some(true) (requeued, its host excluded).
    pub fn requeue_for(&self, code: u8) -> Option<bool> {
        if self.exclude.contains(&code) {
            Some(true)
        } else if self.requeue.contains(&code)
            || (self.all && code != 0 && !self.except.contains(&code))
        {
            Some(false)
        } else {
            None
        }
    }
}

/// Queue keywords kept in [`Queue::limits`].
pub const QUEUE_LIMIT_KEYS: &[&str] = &[
    "CPULIMIT",
    "RUNLIMIT",
    "MEMLIMIT",
    "SWAPLIMIT",
    "PROCESSLIMIT",
    "FILELIMIT",
    "DATALIMIT",
    "STACKLIMIT",
    "CORELIMIT",
    "PROCLIMIT",
];

/// A load threshold `loadSched/loadStop`; either side may be unset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Threshold {
    pub sched: Option<f64>,
    pub stop: Option<f64>,
}

impl Threshold {
    /// Parse `a/b`, `a`, `()/b`, `a/()` (`-` also means unset).
    pub fn parse(s: &str) -> Result<Threshold, String> {
        let side = |x: &str| -> Result<Option<f64>, String> {
            let x = x.trim();
            if x.is_empty() || x == "()" || x == "-" {
                return Ok(None);
            }
            x.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(Some)
                .ok_or_else(|| {
                    format!("expected loadSched/loadStop (numbers or `()`), found `{s}`")
                })
        };
        let (a, b) = match s.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        Ok(Threshold {
            sched: side(a)?,
            stop: b.map(side).transpose()?.flatten(),
        })
    }
}

/// One Queue section.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub name: String,
    pub description: String,
    /// PRIORITY (default 1; higher dispatches first).
    pub priority: u32,
    pub nice: Option<i32>,
    pub administrators: Vec<String>,
    pub qjob_limit: Option<u32>,
    pub ujob_limit: Option<u32>,
    pub pjob_limit: Option<f64>,
    pub hjob_limit: Option<u32>,
    /// USERS tokens, raw (`all`, users, groups, `~x`).
    pub users: Vec<String>,
    /// HOSTS tokens, raw (`all`, hosts, groups, `none`, `~x`, `host+pref`).
    pub hosts: Vec<String>,
    pub run_window: Option<TimeWindow>,
    pub dispatch_window: Option<TimeWindow>,
    /// Load thresholds by canonical index name.
    pub thresholds: BTreeMap<String, Threshold>,
    pub res_req: Option<String>,
    pub stop_cond: Option<String>,
    pub resume_cond: Option<String>,
    pub exclusive: bool,
    /// `SLOT_RESERVE = MAX_RESERVE_TIME[n]`: a parallel job that cannot start reserves the
    /// free slots it could use, for at most n scheduling cycles (MBD_SLEEP_TIME each).
    pub slot_reserve: Option<u32>,
    /// BACKFILL = Y: its jobs with a run limit may use slots reserved for parallel jobs
    /// when they end before those jobs can start.
    pub backfill: bool,
    /// JOB_CONTROLS: SUSPEND/RESUME/TERMINATE -> signal name or command.
    pub job_controls: BTreeMap<String, String>,
    /// TERMINATE_WHEN actions, upper case (LOAD, WINDOW, PREEMPT).
    pub terminate_when: Vec<String>,
    pub job_starter: Option<String>,
    pub pre_exec: Option<String>,
    pub post_exec: Option<String>,
    pub requeue_exit_values: Option<String>,
    /// CPULIMIT, RUNLIMIT, MEMLIMIT, … and PROCLIMIT, raw, keyed in upper case.
    pub limits: BTreeMap<String, String>,
    /// FAIRSHARE as written (for bqueues -l) and its USER_SHARES (empty: the queue is
    /// first come, first served).
    pub fairshare: Option<String>,
    pub user_shares: Vec<super::ShareEntry>,
    /// SLOT_POOL and SLOT_SHARE (seed 003, queue-based fairshare): the pool of queues it
    /// is in and its share of the pool's slots, in percent.
    pub slot_pool: Option<String>,
    pub slot_share: Option<u32>,
    /// PREEMPTION, raw (for bqueues -l).
    pub preemption: Option<String>,
    /// PREEMPTION, parsed (none when not set).
    pub preempt: super::Preemption,
    /// MAX_JOB_PREEMPT: how often one of its jobs may be preempted (over lsb.params').
    pub max_job_preempt: Option<u32>,
    /// NO_PREEMPT_RUN_TIME: its jobs that have run this long are not preempted.
    pub no_preempt_run_time: Option<super::NoPreemptTime>,
    /// NO_PREEMPT_FINISH_TIME: its jobs that end within this time are not preempted.
    pub no_preempt_finish_time: Option<super::NoPreemptTime>,
    /// INTERACTIVE (`YES`, `NO` or `ONLY`, upper case).
    pub interactive: Option<String>,
    pub rerunnable: bool,
    /// MultiCluster SNDJOBS_TO: the remote receive-jobs queues this send-jobs queue
    /// forwards to, as (queue, cluster), in order.
    pub snd_jobs_to: Vec<(String, String)>,
    /// MultiCluster RCVJOBS_FROM: the clusters whose jobs this receive-jobs queue takes
    /// (the single entry `allclusters` for every one); see [`Queue::receives_from`].
    pub rcv_jobs_from: Vec<String>,
    /// MultiCluster IMPT_JOBBKLG: how many forwarded jobs may pend in this receive-jobs
    /// queue (`Some(50)` when unset, `None` for `infinit`).
    pub impt_jobbklg: Option<u32>,
    /// Every other keyword, raw, keyed in upper case.
    pub other: BTreeMap<String, String>,
    /// Line of the `Begin Queue`.
    pub line: usize,
    /// The line of each keyword set (upper case): what a check made once the other
    /// files are read names (HOSTS, USERS).
    pub lines: BTreeMap<String, usize>,
}

impl Queue {
    /// A queue with every setting at its default.
    pub fn new(name: &str, line: usize) -> Queue {
        Queue {
            name: name.to_owned(),
            description: String::new(),
            priority: 1,
            nice: None,
            administrators: Vec::new(),
            qjob_limit: None,
            ujob_limit: None,
            pjob_limit: None,
            hjob_limit: None,
            users: Vec::new(),
            hosts: Vec::new(),
            run_window: None,
            dispatch_window: None,
            thresholds: BTreeMap::new(),
            res_req: None,
            stop_cond: None,
            resume_cond: None,
            exclusive: false,
            slot_reserve: None,
            backfill: false,
            job_controls: BTreeMap::new(),
            terminate_when: Vec::new(),
            job_starter: None,
            pre_exec: None,
            post_exec: None,
            requeue_exit_values: None,
            limits: BTreeMap::new(),
            fairshare: None,
            user_shares: Vec::new(),
            slot_pool: None,
            slot_share: None,
            preemption: None,
            preempt: super::Preemption::default(),
            max_job_preempt: None,
            no_preempt_run_time: None,
            no_preempt_finish_time: None,
            interactive: None,
            rerunnable: false,
            snd_jobs_to: Vec::new(),
            rcv_jobs_from: Vec::new(),
            impt_jobbklg: Some(DEFAULT_IMPT_JOBBKLG),
            other: BTreeMap::new(),
            line,
            lines: BTreeMap::new(),
        }
    }

    /// Does this queue take jobs forwarded from cluster `cluster` (RCVJOBS_FROM names it
    /// or is `allclusters`)?
    pub fn receives_from(&self, cluster: &str) -> bool {
        self.rcv_jobs_from
            .iter()
            .any(|c| c == ALL_CLUSTERS || c == cluster)
    }
}

/// Parse `SUSPEND[SIGTSTP] RESUME[SIGCONT] TERMINATE[kill -9 ...]`.
pub fn parse_job_controls(s: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let Some(open) = rest.find('[') else {
            return Err(format!(
                "expected ACTION[signal or command], found `{rest}`"
            ));
        };
        let action = rest[..open].trim().to_ascii_uppercase();
        if !matches!(action.as_str(), "SUSPEND" | "RESUME" | "TERMINATE") {
            return Err(format!(
                "unknown action `{}` (expected SUSPEND, RESUME or TERMINATE)",
                rest[..open].trim()
            ));
        }
        let mut depth = 0usize;
        let mut close = None;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return Err(format!("unclosed `[` after {action}"));
        };
        let body = rest[open + 1..close].trim();
        if body.is_empty() {
            return Err(format!("{action}[] needs a signal or a command"));
        }
        out.insert(action, body.to_owned());
        rest = rest[close + 1..].trim_start();
    }
    Ok(out)
}

pub(super) fn parse_queue(
    ctx: &mut Ctx<'_>,
    section: &Section,
    shared: &Shared,
    cluster: &ClusterFile,
) -> Option<Queue> {
    let mut q = Queue::new("", section.line);
    // Lines of SNDJOBS_TO and RCVJOBS_FROM, checked once the queue's name is known.
    let mut mc_lines = (0, 0);
    for e in lexer::vertical(ctx, section) {
        let key = e.upper();
        let v = e.value.as_str();
        let line = e.line;
        if v.is_empty() {
            continue;
        }
        not_applied::check_entry(ctx, LSB_QUEUES, "Queue", &e.key, v, line);
        q.lines.insert(key.clone(), line);
        let k = key.as_str();
        match k {
            "QUEUE_NAME" => q.name = v.to_owned(),
            "DESCRIPTION" => q.description = v.to_owned(),
            "PRIORITY" => {
                if let Some(p) = ctx.uint(line, k, v) {
                    q.priority = p;
                }
            }
            "NICE" => q.nice = ctx.parse(line, k, v, "an integer"),
            "ADMINISTRATORS" => q.administrators = list(v),
            "QJOB_LIMIT" => q.qjob_limit = ctx.uint(line, k, v),
            "UJOB_LIMIT" => q.ujob_limit = ctx.uint(line, k, v),
            "HJOB_LIMIT" => q.hjob_limit = ctx.uint(line, k, v),
            "PJOB_LIMIT" => match ctx.float(line, k, v) {
                Some(x) if x < 0.0 => ctx.err(line, format!("{k} must not be negative")),
                x => q.pjob_limit = x,
            },
            "USERS" => q.users = list(v),
            "HOSTS" => q.hosts = list(v),
            "RUN_WINDOW" => q.run_window = window(ctx, line, k, v),
            "DISPATCH_WINDOW" => q.dispatch_window = window(ctx, line, k, v),
            "RES_REQ" => {
                // LSF 9.1's compound and 10.1's alternative forms are for jobs (bsub -R,
                // an application profile's RES_REQ), not for queues here.
                match crate::compound::form(v) {
                    Ok(crate::compound::Form::Simple) => q.res_req = Some(v.to_owned()),
                    Ok(_) => ctx.err(
                        line,
                        format!(
                            "{k}: a compound or alternative resource requirement is not supported at the queue level (give it with bsub -R or an application profile's RES_REQ)"
                        ),
                    ),
                    Err(why) => ctx.err(line, format!("{k}: bad resource requirement: {why}")),
                }
            }
            "STOP_COND" | "RESUME_COND" => {
                if let Err(e) = crate::cond::Cond::parse(v) {
                    ctx.warn(
                        line,
                        format!("{k}: {}; the condition is not evaluated", e.why),
                    );
                }
                if k == "STOP_COND" {
                    q.stop_cond = Some(v.to_owned());
                } else {
                    q.resume_cond = Some(v.to_owned());
                }
            }
            "EXCLUSIVE" => {
                if v.to_ascii_uppercase().starts_with("CU[") {
                    q.exclusive = true;
                } else if let Some(b) = ctx.yes_no(line, k, v) {
                    q.exclusive = b;
                }
            }
            "BACKFILL" => {
                if let Some(b) = ctx.yes_no(line, k, v) {
                    q.backfill = b;
                }
            }
            "SLOT_RESERVE" => match parse_slot_reserve(v) {
                Some(n) => q.slot_reserve = Some(n),
                None => ctx.warn(
                    line,
                    format!(
                        "SLOT_RESERVE = {v}: expected MAX_RESERVE_TIME[n], n a positive number of scheduling cycles; ignored"
                    ),
                ),
            },
            "JOB_CONTROLS" => match parse_job_controls(v) {
                Ok(m) => q.job_controls = m,
                Err(err) => ctx.err(line, format!("JOB_CONTROLS: {err}")),
            },
            "TERMINATE_WHEN" => {
                for a in v.split_whitespace() {
                    let a = a.to_ascii_uppercase();
                    if matches!(a.as_str(), "LOAD" | "WINDOW" | "PREEMPT") {
                        q.terminate_when.push(a);
                    } else {
                        ctx.err(
                            line,
                            format!(
                                "TERMINATE_WHEN: unknown action `{a}` (expected LOAD, WINDOW or PREEMPT)"
                            ),
                        );
                    }
                }
            }
            "JOB_STARTER" => q.job_starter = Some(v.to_owned()),
            "PRE_EXEC" => q.pre_exec = Some(v.to_owned()),
            "POST_EXEC" => q.post_exec = Some(v.to_owned()),
            "REQUEUE_EXIT_VALUES" => match RequeueValues::parse(v) {
                Ok(_) => q.requeue_exit_values = Some(v.to_owned()),
                Err(err) => ctx.err(line, format!("REQUEUE_EXIT_VALUES: {err}")),
            },
            "SUCCESS_EXIT_VALUES" => match parse_exit_values(v) {
                Ok(_) => {
                    q.other.insert(key.clone(), v.to_owned());
                }
                Err(err) => ctx.err(line, format!("SUCCESS_EXIT_VALUES: {err}")),
            },
            "LOCAL_MAX_PREEXEC_RETRY" | "MAX_PREEXEC_RETRY" | "MAX_JOB_REQUEUE" | "MIG" => {
                if ctx.uint(line, k, v).is_some() {
                    q.other.insert(key.clone(), v.to_owned());
                }
            }
            "LOCAL_MAX_PREEXEC_RETRY_ACTION" => {
                let u = v.to_ascii_uppercase();
                if matches!(u.as_str(), "SUSPEND" | "EXIT") {
                    q.other.insert(key.clone(), u);
                } else {
                    ctx.err(
                        line,
                        format!(
                            "LOCAL_MAX_PREEXEC_RETRY_ACTION: expected SUSPEND or EXIT, found `{v}`"
                        ),
                    );
                }
            }
            "FAIRSHARE" => match super::parse_fairshare(v) {
                Ok(list) => {
                    q.fairshare = Some(v.to_owned());
                    q.user_shares = list;
                }
                Err(e) => ctx.err(line, format!("FAIRSHARE: {e}")),
            },
            "PREEMPTION" => match super::Preemption::parse(v) {
                Ok(p) => {
                    q.preemption = Some(v.to_owned());
                    q.preempt = p;
                }
                Err(e) => ctx.err(line, format!("PREEMPTION: {e}")),
            },
            "MAX_JOB_PREEMPT" => q.max_job_preempt = ctx.uint(line, k, v),
            "SLOT_POOL" => {
                if v.split_whitespace().count() == 1 {
                    q.slot_pool = Some(v.trim().to_owned());
                } else {
                    ctx.err(line, format!("SLOT_POOL: one pool name, found `{v}`"));
                }
            }
            "SLOT_SHARE" => match ctx.uint(line, k, v) {
                Some(n) if (1..=100).contains(&n) => q.slot_share = Some(n),
                Some(_) => ctx.err(line, format!("SLOT_SHARE: a percentage from 1 to 100, found `{v}`")),
                None => {}
            },
            "NO_PREEMPT_RUN_TIME" => match super::NoPreemptTime::parse(v) {
                Ok(t) => q.no_preempt_run_time = Some(t),
                Err(e) => ctx.err(line, format!("NO_PREEMPT_RUN_TIME: {e}")),
            },
            "NO_PREEMPT_FINISH_TIME" => match super::NoPreemptTime::parse(v) {
                Ok(t) => q.no_preempt_finish_time = Some(t),
                Err(e) => ctx.err(line, format!("NO_PREEMPT_FINISH_TIME: {e}")),
            },
            "INTERACTIVE" => {
                let u = v.to_ascii_uppercase();
                if matches!(u.as_str(), "YES" | "NO" | "ONLY") {
                    q.interactive = Some(u);
                } else {
                    ctx.err(
                        line,
                        format!("INTERACTIVE: expected YES, NO or ONLY, found `{v}`"),
                    );
                }
            }
            "RERUNNABLE" => {
                if let Some(b) = ctx.yes_no(line, k, v) {
                    q.rerunnable = b;
                }
            }
            "SNDJOBS_TO" => match multicluster::parse_snd_jobs_to(v) {
                Ok(to) => {
                    q.snd_jobs_to = to;
                    mc_lines.0 = line;
                }
                Err(e) => ctx.err(line, format!("SNDJOBS_TO: {e}")),
            },
            "RCVJOBS_FROM" => match multicluster::parse_rcv_jobs_from(v) {
                Ok(from) => {
                    q.rcv_jobs_from = from;
                    mc_lines.1 = line;
                }
                Err(e) => ctx.err(line, format!("RCVJOBS_FROM: {e}")),
            },
            "IMPT_JOBBKLG" => match multicluster::parse_count_or_infinit(v) {
                Ok(n) => q.impt_jobbklg = n,
                Err(e) => ctx.err(line, format!("IMPT_JOBBKLG: {e}")),
            },
            _ if QUEUE_LIMIT_KEYS.contains(&k) => match super::rlimits::check(k, v) {
                Ok(()) => {
                    q.limits.insert(key.clone(), v.to_owned());
                }
                Err(e) => ctx.err(line, e),
            },
            _ if QUEUE_KEYS.contains(&k) => {
                q.other.insert(key.clone(), v.to_owned());
            }
            _ => match shared.threshold_index(&e.key) {
                Some(idx) => match Threshold::parse(v) {
                    Ok(t) => {
                        q.thresholds.insert(idx, t);
                    }
                    Err(err) => ctx.err(line, format!("{}: {err}", e.key)),
                },
                None => {
                    ctx.warn(line, format!("unknown keyword {} in lsb.queues", e.key));
                    q.other.insert(key.clone(), v.to_owned());
                }
            },
        }
    }
    if q.name.is_empty() {
        ctx.err(section.line, "Queue section without QUEUE_NAME");
        return None;
    }
    if !q.snd_jobs_to.is_empty() {
        multicluster::check_snd_jobs_to(ctx, mc_lines.0, &q.name, &q.snd_jobs_to, shared, cluster);
    }
    multicluster::check_rcv_jobs_from(ctx, mc_lines.1, &q.name, &q.rcv_jobs_from, shared, cluster);
    Some(q)
}

pub(super) fn parse_queues(
    ctx: &mut Ctx<'_>,
    text: &str,
    shared: &Shared,
    cluster: &ClusterFile,
) -> Vec<Queue> {
    let mut queues: Vec<Queue> = Vec::new();
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Queue") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let Some(q) = parse_queue(ctx, &section, shared, cluster) else {
            continue;
        };
        if q.name.eq_ignore_ascii_case("default") {
            ctx.err(q.line, "the queue name `default` is reserved");
            continue;
        }
        if let Some(first) = queues.iter().find(|x| x.name == q.name) {
            ctx.err(
                q.line,
                format!(
                    "duplicate QUEUE_NAME `{}` (first defined at line {})",
                    q.name, first.line
                ),
            );
            continue;
        }
        queues.push(q);
    }
    queues
}

/// `MAX_RESERVE_TIME[n]` (n > 0; keyword case-insensitive, blanks allowed).
pub fn parse_slot_reserve(v: &str) -> Option<u32> {
    let v = v.trim();
    let (key, rest) = v.split_once('[')?;
    if !key.trim().eq_ignore_ascii_case("MAX_RESERVE_TIME") {
        return None;
    }
    let n = rest.strip_suffix(']')?.trim().parse::<u32>().ok()?;
    (n > 0).then_some(n)
}

#[cfg(test)]
mod slot_reserve_tests {
    use super::parse_slot_reserve;

    #[test]
    fn slot_reserve_takes_max_reserve_time_of_a_positive_count() {
        assert_eq!(parse_slot_reserve("MAX_RESERVE_TIME[5]"), Some(5));
        assert_eq!(parse_slot_reserve(" max_reserve_time[ 12 ] "), Some(12));
        for bad in [
            "",
            "5",
            "MAX_RESERVE_TIME[0]",
            "MAX_RESERVE_TIME[x]",
            "MAX_RESERVE_TIME[5",
            "RESERVE[5]",
        ] {
            assert_eq!(parse_slot_reserve(bad), None, "{bad:?}");
        }
    }
}
