//! The batch files read by mbatchd: `lsb.params`, `lsb.queues`, `lsb.hosts`,
//! `lsb.users`, `lsb.resources` and `lsb.applications`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cluster::ClusterFile;
use crate::error::{Ctx, Diag};
use crate::lexer::{self, Entry, Section, Table};
use crate::not_applied::{self, LSB_APPLICATIONS, LSB_HOSTS, LSB_PARAMS, LSB_QUEUES, LSB_USERS};
use crate::shared::{Shared, check_columns};
use crate::timewindow::TimeWindow;

/// Everything from the `lsb.*` files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub params: BatchParams,
    /// Queues in file order.
    pub queues: Vec<Queue>,
    /// Host section of lsb.hosts.
    pub hosts: Vec<BatchHost>,
    /// HostGroup section of lsb.hosts.
    pub host_groups: Vec<Group>,
    /// User section of lsb.users.
    pub users: Vec<BatchUser>,
    /// UserGroup section of lsb.users.
    pub user_groups: Vec<Group>,
    /// Limit sections of lsb.resources.
    pub limits: Vec<Limit>,
    /// Application sections of lsb.applications.
    pub applications: Vec<Application>,
}

impl Batch {
    /// A queue by name.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.iter().find(|q| q.name == name)
    }
}

// ---------------------------------------------------------------- lsb.params

/// The lsb.params keys of the format reference (§6); all are typed in [`BatchParams`].
pub const BATCH_PARAMS: &[&str] = &[
    "DEFAULT_QUEUE",
    "MBD_SLEEP_TIME",
    "SBD_SLEEP_TIME",
    "JOB_ACCEPT_INTERVAL",
    "CLEAN_PERIOD",
    "MAX_JOB_NUM",
    "PG_SUSP_IT",
    "MAX_SBD_FAIL",
    "MAX_JOBID",
    "MAX_JOB_ARRAY_SIZE",
    "JOB_TERMINATE_INTERVAL",
    "DEFAULT_PROJECT",
    "RUSAGE_UPDATE_RATE",
    "RUSAGE_UPDATE_PERCENT",
    "MAX_PREEMPT_JOBS",
    "CPU_TIME_FACTOR",
    "RUN_TIME_FACTOR",
    "RUN_JOB_FACTOR",
    "HIST_HOURS",
    "COMMITTED_RUN_TIME_FACTOR",
    "FAIRSHARE_ADJUSTMENT_FACTOR",
    "PREEMPT_FOR",
    "MAX_JOB_PREEMPT",
    "ACCT_ARCHIVE_SIZE",
    "ACCT_ARCHIVE_AGE",
    "MAX_ACCT_ARCHIVE_FILE",
    "RESOURCE_RESERVE_PER_SLOT",
    "BASALT_EVENT_SYNC",
    "BASALT_EVENT_LOCK_HEARTBEAT",
];

/// Other lsb.params keys found in OpenLava/LSF configurations: accepted
/// without a warning and kept raw in [`BatchParams::other`].
pub const OTHER_KNOWN_BATCH_PARAMS: &[&str] = &[
    // Basalt: seconds between sbatchd hellos (host unreach after three missed ones).
    "BASALT_SBD_HELLO_INTERVAL",
    // Basalt: seconds a host stays unreach before mbatchd gives up on its jobs
    // (rerunnable ones are requeued, the others end EXIT); mbatchd reads it.
    "BASALT_HOST_LOST_GRACE",
    "DEFAULT_HOST_SPEC",
    "DEFAULT_USER_GROUP",
    "DISABLE_UACCT_MAP",
    "ENABLE_EVENT_STREAM",
    "EVENT_UPDATE_INTERVAL",
    "FRESH_PERIOD",
    "JOB_DEP_LAST_SUB",
    "JOB_PRIORITY_OVER_TIME",
    "JOB_SCHEDULING_INTERVAL",
    "JOB_SPOOL_DIR",
    "MAX_CONCURRENT_JOB_QUERY",
    "MAX_INFO_DIRS",
    "MAX_PEND_JOBS",
    "MAX_SBD_CONNS",
    "MAX_SCHED_STAY",
    "MAX_USER_PRIORITY",
    "MBD_REFRESH_TIME",
    "PARALLEL_SCHED_BY_SLOT",
    "PREEMPTION_WAIT_TIME",
    "SHARED_RESOURCE_UPDATE_FACTOR",
    "SUB_TRY_INTERVAL",
    "SYSTEM_MAPPING_ACCOUNT",
];

/// lsb.params. Defaults are LSF's.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchParams {
    /// DEFAULT_QUEUE (empty = not set).
    pub default_queue: Vec<String>,
    /// MBD_SLEEP_TIME (60).
    pub mbd_sleep_time_secs: u32,
    /// SBD_SLEEP_TIME (30).
    pub sbd_sleep_time_secs: u32,
    /// JOB_ACCEPT_INTERVAL, in MBD_SLEEP_TIMEs (1).
    pub job_accept_interval: u32,
    /// CLEAN_PERIOD (3600).
    pub clean_period_secs: u32,
    /// MAX_JOB_NUM (1000).
    pub max_job_num: u32,
    /// PG_SUSP_IT (180).
    pub pg_susp_it_secs: u32,
    /// MAX_SBD_FAIL (3).
    pub max_sbd_fail: u32,
    /// MAX_JOBID (999999).
    pub max_jobid: u32,
    /// MAX_JOB_ARRAY_SIZE (1000).
    pub max_job_array_size: u32,
    /// JOB_TERMINATE_INTERVAL (10).
    pub job_terminate_interval_secs: u32,
    /// DEFAULT_PROJECT (`default`).
    pub default_project: String,
    /// RUSAGE_UPDATE_RATE (1).
    pub rusage_update_rate: u32,
    /// RUSAGE_UPDATE_PERCENT (10).
    pub rusage_update_percent: f64,
    /// MAX_PREEMPT_JOBS (12, OpenLava).
    pub max_preempt_jobs: u32,
    /// CPU_TIME_FACTOR (0.7).
    pub cpu_time_factor: f64,
    /// RUN_TIME_FACTOR (0.7).
    pub run_time_factor: f64,
    /// RUN_JOB_FACTOR (3.0).
    pub run_job_factor: f64,
    /// HIST_HOURS (5).
    pub hist_hours: f64,
    /// COMMITTED_RUN_TIME_FACTOR (0).
    pub committed_run_time_factor: f64,
    /// FAIRSHARE_ADJUSTMENT_FACTOR (0).
    pub fairshare_adjustment_factor: f64,
    /// PREEMPT_FOR, raw.
    pub preempt_for: Option<String>,
    /// MAX_JOB_PREEMPT.
    pub max_job_preempt: Option<u32>,
    /// ACCT_ARCHIVE_SIZE (KB).
    pub acct_archive_size: Option<u64>,
    /// ACCT_ARCHIVE_AGE (days).
    pub acct_archive_age: Option<u32>,
    /// MAX_ACCT_ARCHIVE_FILE.
    pub max_acct_archive_file: Option<u32>,
    /// RESOURCE_RESERVE_PER_SLOT (N).
    pub resource_reserve_per_slot: bool,
    /// Basalt: BASALT_EVENT_SYNC, how lsb.events/lsb.acct appends reach the disk before
    /// anything depending on them is acknowledged: `fdatasync` (default), `fsync`, or
    /// `none` (unsafe: a machine crash can lose acknowledged work).
    pub event_sync: String,
    /// Basalt: BASALT_EVENT_LOCK_HEARTBEAT, seconds between refreshes of
    /// `#lsb.event.lock` (1). A waiting mbatchd checks twice per heartbeat and takes a
    /// lock over only after it has not changed for five checks in a row.
    pub event_lock_heartbeat_secs: u32,
    /// Every other parameter, raw, keyed in upper case.
    pub other: BTreeMap<String, String>,
}

impl Default for BatchParams {
    fn default() -> BatchParams {
        BatchParams {
            default_queue: Vec::new(),
            mbd_sleep_time_secs: 60,
            sbd_sleep_time_secs: 30,
            job_accept_interval: 1,
            clean_period_secs: 3600,
            max_job_num: 1000,
            pg_susp_it_secs: 180,
            max_sbd_fail: 3,
            max_jobid: 999_999,
            max_job_array_size: 1000,
            job_terminate_interval_secs: 10,
            default_project: "default".to_owned(),
            rusage_update_rate: 1,
            rusage_update_percent: 10.0,
            max_preempt_jobs: 12,
            cpu_time_factor: 0.7,
            run_time_factor: 0.7,
            run_job_factor: 3.0,
            hist_hours: 5.0,
            committed_run_time_factor: 0.0,
            fairshare_adjustment_factor: 0.0,
            preempt_for: None,
            max_job_preempt: None,
            acct_archive_size: None,
            acct_archive_age: None,
            max_acct_archive_file: None,
            resource_reserve_per_slot: false,
            event_sync: "fdatasync".to_owned(),
            event_lock_heartbeat_secs: 1,
            other: BTreeMap::new(),
        }
    }
}

fn set_u32(ctx: &mut Ctx<'_>, e: &Entry, key: &str, min: u32, slot: &mut u32) {
    if let Some(v) = ctx.uint(e.line, key, &e.value) {
        if v < min {
            ctx.err(
                e.line,
                format!("{key} must be at least {min}, found `{}`", e.value),
            );
        } else {
            *slot = v;
        }
    }
}

fn set_f64(ctx: &mut Ctx<'_>, e: &Entry, key: &str, slot: &mut f64) {
    if let Some(v) = ctx.float(e.line, key, &e.value) {
        if v < 0.0 {
            ctx.err(
                e.line,
                format!("{key} must not be negative, found `{}`", e.value),
            );
        } else {
            *slot = v;
        }
    }
}

/// Parse lsb.params; also returns the line of DEFAULT_QUEUE.
fn parse_params(ctx: &mut Ctx<'_>, text: &str) -> (BatchParams, usize) {
    let mut p = BatchParams::default();
    let mut dq_line = 0;
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Parameters") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        for e in lexer::vertical(ctx, &section) {
            let key = e.upper();
            if e.value.is_empty() {
                continue;
            }
            not_applied::check_entry(ctx, LSB_PARAMS, "Parameters", &e.key, &e.value, e.line);
            let k = key.as_str();
            match k {
                "DEFAULT_QUEUE" => {
                    p.default_queue = e.value.split_whitespace().map(str::to_owned).collect();
                    dq_line = e.line;
                }
                "MBD_SLEEP_TIME" => set_u32(ctx, &e, k, 1, &mut p.mbd_sleep_time_secs),
                "SBD_SLEEP_TIME" => set_u32(ctx, &e, k, 1, &mut p.sbd_sleep_time_secs),
                "JOB_ACCEPT_INTERVAL" => set_u32(ctx, &e, k, 0, &mut p.job_accept_interval),
                "CLEAN_PERIOD" => set_u32(ctx, &e, k, 1, &mut p.clean_period_secs),
                "MAX_JOB_NUM" => set_u32(ctx, &e, k, 1, &mut p.max_job_num),
                "PG_SUSP_IT" => set_u32(ctx, &e, k, 0, &mut p.pg_susp_it_secs),
                "MAX_SBD_FAIL" => set_u32(ctx, &e, k, 1, &mut p.max_sbd_fail),
                "MAX_JOBID" => set_u32(ctx, &e, k, 1, &mut p.max_jobid),
                "MAX_JOB_ARRAY_SIZE" => set_u32(ctx, &e, k, 1, &mut p.max_job_array_size),
                "JOB_TERMINATE_INTERVAL" => {
                    set_u32(ctx, &e, k, 0, &mut p.job_terminate_interval_secs);
                }
                "DEFAULT_PROJECT" => p.default_project = e.value.clone(),
                "RUSAGE_UPDATE_RATE" => set_u32(ctx, &e, k, 1, &mut p.rusage_update_rate),
                "RUSAGE_UPDATE_PERCENT" => set_f64(ctx, &e, k, &mut p.rusage_update_percent),
                "MAX_PREEMPT_JOBS" => set_u32(ctx, &e, k, 0, &mut p.max_preempt_jobs),
                "CPU_TIME_FACTOR" => set_f64(ctx, &e, k, &mut p.cpu_time_factor),
                "RUN_TIME_FACTOR" => set_f64(ctx, &e, k, &mut p.run_time_factor),
                "RUN_JOB_FACTOR" => set_f64(ctx, &e, k, &mut p.run_job_factor),
                "HIST_HOURS" => set_f64(ctx, &e, k, &mut p.hist_hours),
                "COMMITTED_RUN_TIME_FACTOR" => {
                    set_f64(ctx, &e, k, &mut p.committed_run_time_factor);
                }
                "FAIRSHARE_ADJUSTMENT_FACTOR" => {
                    set_f64(ctx, &e, k, &mut p.fairshare_adjustment_factor);
                }
                "PREEMPT_FOR" => p.preempt_for = Some(e.value.clone()),
                "MAX_JOB_PREEMPT" => p.max_job_preempt = ctx.uint(e.line, k, &e.value),
                "ACCT_ARCHIVE_SIZE" => {
                    p.acct_archive_size =
                        ctx.parse(e.line, k, &e.value, "a non-negative integer (KB)");
                }
                "ACCT_ARCHIVE_AGE" => p.acct_archive_age = ctx.uint(e.line, k, &e.value),
                "MAX_ACCT_ARCHIVE_FILE" => {
                    p.max_acct_archive_file = ctx.uint(e.line, k, &e.value);
                }
                "RESOURCE_RESERVE_PER_SLOT" => {
                    if let Some(b) = ctx.yes_no(e.line, k, &e.value) {
                        p.resource_reserve_per_slot = b;
                    }
                }
                "BASALT_EVENT_SYNC" => {
                    let v = e.value.trim().to_ascii_lowercase();
                    if matches!(v.as_str(), "fdatasync" | "fsync" | "none") {
                        p.event_sync = v;
                    } else {
                        ctx.err(
                            e.line,
                            format!(
                                "BASALT_EVENT_SYNC must be fdatasync, fsync or none, found `{}`",
                                e.value
                            ),
                        );
                    }
                }
                "BASALT_EVENT_LOCK_HEARTBEAT" => {
                    set_u32(ctx, &e, k, 1, &mut p.event_lock_heartbeat_secs);
                }
                _ => {
                    if !OTHER_KNOWN_BATCH_PARAMS.contains(&k) {
                        ctx.warn(e.line, format!("unknown parameter {} in lsb.params", e.key));
                    }
                    p.other.insert(key.clone(), e.value.clone());
                }
            }
        }
    }
    (p, dq_line)
}

// ---------------------------------------------------------------- lsb.queues

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
    "PREEMPTION",
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
];

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
    pub fairshare: Option<String>,
    pub preemption: Option<String>,
    /// INTERACTIVE (`YES`, `NO` or `ONLY`, upper case).
    pub interactive: Option<String>,
    pub rerunnable: bool,
    /// Every other keyword, raw, keyed in upper case.
    pub other: BTreeMap<String, String>,
    /// Line of the `Begin Queue`.
    pub line: usize,
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
            job_controls: BTreeMap::new(),
            terminate_when: Vec::new(),
            job_starter: None,
            pre_exec: None,
            post_exec: None,
            requeue_exit_values: None,
            limits: BTreeMap::new(),
            fairshare: None,
            preemption: None,
            interactive: None,
            rerunnable: false,
            other: BTreeMap::new(),
            line,
        }
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

fn list(v: &str) -> Vec<String> {
    v.split_whitespace().map(str::to_owned).collect()
}

fn window(ctx: &mut Ctx<'_>, line: usize, key: &str, v: &str) -> Option<TimeWindow> {
    match TimeWindow::parse(v) {
        Ok(w) => Some(w),
        Err(e) => {
            ctx.err(line, format!("{key}: {e}"));
            None
        }
    }
}

fn parse_queue(ctx: &mut Ctx<'_>, section: &Section, shared: &Shared) -> Option<Queue> {
    let mut q = Queue::new("", section.line);
    for e in lexer::vertical(ctx, section) {
        let key = e.upper();
        let v = e.value.as_str();
        let line = e.line;
        if v.is_empty() {
            continue;
        }
        not_applied::check_entry(ctx, LSB_QUEUES, "Queue", &e.key, v, line);
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
            "RES_REQ" => q.res_req = Some(v.to_owned()),
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
            "REQUEUE_EXIT_VALUES" => q.requeue_exit_values = Some(v.to_owned()),
            "FAIRSHARE" => q.fairshare = Some(v.to_owned()),
            "PREEMPTION" => q.preemption = Some(v.to_owned()),
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
            _ if QUEUE_LIMIT_KEYS.contains(&k) => {
                q.limits.insert(key.clone(), v.to_owned());
            }
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
    Some(q)
}

fn parse_queues(ctx: &mut Ctx<'_>, text: &str, shared: &Shared) -> Vec<Queue> {
    let mut queues: Vec<Queue> = Vec::new();
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Queue") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let Some(q) = parse_queue(ctx, &section, shared) else {
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

// ---------------------------------------------------------------- lsb.hosts

/// MXJ: the slot limit of a batch host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mxj {
    /// `!`: one slot per CPU.
    Ncpus,
    Slots(u32),
}

/// A Host row of lsb.hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchHost {
    /// A host, a host model or type, or `default`.
    pub name: String,
    pub mxj: Option<Mxj>,
    /// JL/U.
    pub jl_u: Option<u32>,
    /// Load thresholds by canonical index name.
    pub thresholds: BTreeMap<String, Threshold>,
    pub dispatch_window: Option<TimeWindow>,
    /// Other known columns (CHKPNT, EXIT_RATE, AFFINITY), raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

/// A HostGroup or UserGroup row.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    /// GROUP_MEMBER tokens (`all`, `!`, `~x`, names).
    pub members: Vec<String>,
    /// USER_SHARES, raw (without the outer parentheses).
    pub shares: Option<String>,
    pub line: usize,
}

enum HostCol {
    Name,
    Mxj,
    JlU,
    Window,
    Threshold(String),
    Other(String),
    Ignored,
}

fn batch_hosts(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    shared: &Shared,
) -> Vec<BatchHost> {
    let mut cols = Vec::new();
    for c in &table.columns {
        let u = c.to_ascii_uppercase();
        cols.push(match u.as_str() {
            "HOST_NAME" => HostCol::Name,
            "MXJ" => HostCol::Mxj,
            "JL/U" => HostCol::JlU,
            "DISPATCH_WINDOW" => HostCol::Window,
            "CHKPNT" | "EXIT_RATE" | "AFFINITY" => HostCol::Other(u),
            _ => match shared.threshold_index(c) {
                Some(i) => HostCol::Threshold(i),
                None => {
                    ctx.warn(
                        table.line,
                        format!("unknown column `{c}` in section {} ignored", section.name),
                    );
                    HostCol::Ignored
                }
            },
        });
    }
    if table.col("HOST_NAME").is_none() {
        ctx.err(
            table.line,
            "section Host: required column HOST_NAME is missing",
        );
        return Vec::new();
    }
    let mut out: Vec<BatchHost> = Vec::new();
    for row in &table.rows {
        let mut h = BatchHost {
            name: String::new(),
            mxj: None,
            jl_u: None,
            thresholds: BTreeMap::new(),
            dispatch_window: None,
            other: BTreeMap::new(),
            line: row.line,
        };
        for (col, field) in cols.iter().zip(&row.fields) {
            let Some(v) = field.as_deref() else {
                continue;
            };
            match col {
                HostCol::Name => h.name = v.to_owned(),
                HostCol::Mxj => {
                    if v == "!" {
                        h.mxj = Some(Mxj::Ncpus);
                    } else if let Some(n) = ctx.parse(row.line, "MXJ", v, "a slot count or `!`") {
                        h.mxj = Some(Mxj::Slots(n));
                    }
                }
                HostCol::JlU => h.jl_u = ctx.uint(row.line, "JL/U", v),
                HostCol::Window => h.dispatch_window = window(ctx, row.line, "DISPATCH_WINDOW", v),
                HostCol::Threshold(i) => match Threshold::parse(v) {
                    Ok(t) => {
                        h.thresholds.insert(i.clone(), t);
                    }
                    Err(e) => ctx.err(row.line, format!("{i}: {e}")),
                },
                HostCol::Other(k) => {
                    h.other.insert(k.clone(), v.to_owned());
                }
                HostCol::Ignored => {}
            }
        }
        if h.name.is_empty() {
            ctx.err(row.line, "missing HOST_NAME");
            continue;
        }
        if let Some(first) = out.iter().find(|x| x.name == h.name) {
            ctx.err(
                row.line,
                format!("duplicate host `{}` (first at line {})", h.name, first.line),
            );
            continue;
        }
        out.push(h);
    }
    out
}

/// HostGroup/UserGroup rows. `known` lists the accepted columns.
fn groups(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    known: &[&str],
    out: &mut Vec<Group>,
) {
    if !check_columns(ctx, section, table, known, &["GROUP_NAME", "GROUP_MEMBER"]) {
        return;
    }
    let (n, m, s) = (
        table.col("GROUP_NAME"),
        table.col("GROUP_MEMBER"),
        table.col("USER_SHARES"),
    );
    for row in &table.rows {
        let Some(name) = row.get(n) else {
            ctx.err(row.line, "missing GROUP_NAME");
            continue;
        };
        if let Some(first) = out.iter().find(|g| g.name == name) {
            ctx.err(
                row.line,
                format!("duplicate group `{name}` (first at line {})", first.line),
            );
            continue;
        }
        out.push(Group {
            name: name.to_owned(),
            members: row.get(m).map(list).unwrap_or_default(),
            shares: row.get(s).map(str::to_owned),
            line: row.line,
        });
    }
}

fn parse_hosts(ctx: &mut Ctx<'_>, text: &str, shared: &Shared, batch: &mut Batch) {
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
        match name.as_str() {
            "host" | "hostgroup" => {}
            "hostpartition" => {
                not_applied::check_section(
                    ctx,
                    LSB_HOSTS,
                    "HostPartition",
                    "HostPartition",
                    section.line,
                );
                continue;
            }
            _ => {
                ctx.warn(
                    section.line,
                    format!("unknown section {} ignored", section.name),
                );
                continue;
            }
        }
        let Some(table) = lexer::horizontal(ctx, &section) else {
            continue;
        };
        if name == "host" {
            let hosts = batch_hosts(ctx, &section, &table, shared);
            batch.hosts.extend(hosts);
            not_applied::check_columns(ctx, LSB_HOSTS, "Host", &table);
        } else {
            groups(
                ctx,
                &section,
                &table,
                &["GROUP_NAME", "GROUP_MEMBER", "CONDENSE", "GROUP_ADMIN"],
                &mut batch.host_groups,
            );
            not_applied::check_columns(ctx, LSB_HOSTS, "HostGroup", &table);
        }
    }
}

/// Warn about HostGroup members that are neither cluster hosts, groups nor special tokens.
fn check_host_groups(ctx: &mut Ctx<'_>, batch: &Batch, cluster: &ClusterFile) {
    for g in &batch.host_groups {
        for m in &g.members {
            let name = m.trim_end_matches('/');
            let special =
                name == "all" || name == "!" || name.starts_with('~') || name.contains(['*', '[']);
            let known = special
                || cluster.host(name).is_some()
                || batch.host_groups.iter().any(|x| x.name == name);
            if !known {
                ctx.warn(
                    g.line,
                    format!(
                        "host group `{}`: member `{m}` is not a host of the cluster or a host group",
                        g.name
                    ),
                );
            }
        }
    }
}

/// Warn about lsb.hosts rows whose settings mbatchd does not apply: it takes MXJ, JL/U,
/// DISPATCH_WINDOW and the loadSched thresholds only from the row naming a host of the
/// cluster, else from `default`; sbatchd also honours the loadStop thresholds of a row
/// naming the host's model or type. A row naming anything else (a host group, a host
/// outside the cluster) has no effect at all.
fn check_host_rows(ctx: &mut Ctx<'_>, batch: &Batch, cluster: &ClusterFile, shared: &Shared) {
    let Some(entry) = not_applied::custom(LSB_HOSTS, "Host", "HOST_NAME") else {
        return;
    };
    for h in &batch.hosts {
        if h.name == "default" || cluster.host(&h.name).is_some() {
            continue;
        }
        let sched = h.thresholds.values().any(|t| t.sched.is_some());
        let stop = h.thresholds.values().any(|t| t.stop.is_some());
        let for_mbatchd =
            h.mxj.is_some() || h.jl_u.is_some() || h.dispatch_window.is_some() || sched;
        let what = if shared.host_model(&h.name).is_some() {
            Some("a host model")
        } else if shared.has_host_type(&h.name) {
            Some("a host type")
        } else {
            None
        };
        match what {
            Some(what) if for_mbatchd => ctx.not_applied(
                h.line,
                entry.message(
                    &format!("HOST_NAME `{}` ({what})", h.name),
                    stop.then_some("only its loadStop thresholds apply (sbatchd)"),
                ),
            ),
            None if for_mbatchd || stop => ctx.not_applied(
                h.line,
                entry.message(
                    &format!(
                        "HOST_NAME `{}` (not a host of the cluster, a host model or a host type)",
                        h.name
                    ),
                    None,
                ),
            ),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- lsb.users

/// A User row of lsb.users.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchUser {
    /// A user, a group, `group@` (each member) or `default`.
    pub name: String,
    pub max_jobs: Option<u32>,
    /// JL/P.
    pub jl_p: Option<f64>,
    /// Other known columns (MAX_PEND_JOBS, MAX_PEND_SLOTS, PRIORITY), raw.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

fn batch_users(ctx: &mut Ctx<'_>, section: &Section, table: &Table, out: &mut Vec<BatchUser>) {
    const OTHER: &[&str] = &["MAX_PEND_JOBS", "MAX_PEND_SLOTS", "PRIORITY"];
    let mut known = vec!["USER_NAME", "MAX_JOBS", "JL/P"];
    known.extend_from_slice(OTHER);
    if !check_columns(ctx, section, table, &known, &["USER_NAME"]) {
        return;
    }
    let (n, mj, jp) = (
        table.col("USER_NAME"),
        table.col("MAX_JOBS"),
        table.col("JL/P"),
    );
    for row in &table.rows {
        let Some(name) = row.get(n) else {
            ctx.err(row.line, "missing USER_NAME");
            continue;
        };
        if let Some(first) = out.iter().find(|u| u.name == name) {
            ctx.err(
                row.line,
                format!("duplicate user `{name}` (first at line {})", first.line),
            );
            continue;
        }
        let mut u = BatchUser {
            name: name.to_owned(),
            max_jobs: row.get(mj).and_then(|v| ctx.uint(row.line, "MAX_JOBS", v)),
            jl_p: None,
            other: BTreeMap::new(),
            line: row.line,
        };
        if let Some(v) = row.get(jp) {
            match ctx.float(row.line, "JL/P", v) {
                Some(x) if x < 0.0 => ctx.err(row.line, "JL/P must not be negative"),
                x => u.jl_p = x,
            }
        }
        for o in OTHER {
            if let Some(v) = row.get(table.col(o)) {
                u.other.insert((*o).to_owned(), v.to_owned());
            }
        }
        out.push(u);
    }
}

fn parse_users(ctx: &mut Ctx<'_>, text: &str, batch: &mut Batch) {
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
        if name != "user" && name != "usergroup" {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let Some(table) = lexer::horizontal(ctx, &section) else {
            continue;
        };
        if name == "user" {
            batch_users(ctx, &section, &table, &mut batch.users);
            not_applied::check_columns(ctx, LSB_USERS, "User", &table);
        } else {
            groups(
                ctx,
                &section,
                &table,
                &[
                    "GROUP_NAME",
                    "GROUP_MEMBER",
                    "USER_SHARES",
                    "GROUP_ADMIN",
                    "PRIORITY",
                ],
                &mut batch.user_groups,
            );
            not_applied::check_columns(ctx, LSB_USERS, "UserGroup", &table);
        }
    }
}

// ---------------------------------------------------------------- lsb.resources

/// Limit keywords besides those typed in [`Limit`]; kept raw in [`Limit::other`].
pub const OTHER_LIMIT_KEYS: &[&str] = &[
    "MEM",
    "SWP",
    "TMP",
    "RESOURCE",
    "SLOTS_PER_PROCESSOR",
    "APPS",
    "PER_APP",
    "LIC_PROJECTS",
    "PER_LIC_PROJECT",
    "JOBS_PER_SCHED_CYCLE",
];

/// A Limit section of lsb.resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub name: String,
    pub users: Vec<String>,
    pub per_user: Vec<String>,
    pub queues: Vec<String>,
    pub per_queue: Vec<String>,
    pub hosts: Vec<String>,
    pub per_host: Vec<String>,
    pub projects: Vec<String>,
    pub per_project: Vec<String>,
    /// SLOTS.
    pub slots: Option<u32>,
    /// The time window of `SLOTS = n window` (None = always).
    pub slots_window: Option<TimeWindow>,
    /// JOBS.
    pub jobs: Option<u32>,
    /// Other keywords, raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    /// Line of the `Begin Limit` (vertical) or of the row (horizontal).
    pub line: usize,
}

fn limit_from(ctx: &mut Ctx<'_>, entries: &[Entry], line: usize) -> Option<Limit> {
    let mut l = Limit {
        name: String::new(),
        users: Vec::new(),
        per_user: Vec::new(),
        queues: Vec::new(),
        per_queue: Vec::new(),
        hosts: Vec::new(),
        per_host: Vec::new(),
        projects: Vec::new(),
        per_project: Vec::new(),
        slots: None,
        slots_window: None,
        jobs: None,
        other: BTreeMap::new(),
        line,
    };
    for e in entries {
        let key = e.upper();
        let Some(v) = lexer::field_value(&e.value) else {
            continue;
        };
        let v = v.as_str();
        match key.as_str() {
            "NAME" => l.name = v.to_owned(),
            "USERS" => l.users = list(v),
            "PER_USER" => l.per_user = list(v),
            "QUEUES" => l.queues = list(v),
            "PER_QUEUE" => l.per_queue = list(v),
            "HOSTS" => l.hosts = list(v),
            "PER_HOST" => l.per_host = list(v),
            "PROJECTS" => l.projects = list(v),
            "PER_PROJECT" => l.per_project = list(v),
            "SLOTS" => {
                let (n, w) = v.split_once(char::is_whitespace).unwrap_or((v, ""));
                l.slots = ctx.uint(e.line, "SLOTS", n);
                if !w.trim().is_empty() {
                    l.slots_window = window(ctx, e.line, "SLOTS", w);
                }
            }
            "JOBS" => l.jobs = ctx.uint(e.line, "JOBS", v),
            k => {
                if !OTHER_LIMIT_KEYS.contains(&k) {
                    ctx.warn(e.line, format!("unknown keyword {} in Limit", e.key));
                }
                l.other.insert(key.clone(), v.to_owned());
            }
        }
    }
    if l.name.is_empty() {
        ctx.err(line, "Limit without NAME");
        return None;
    }
    Some(l)
}

fn parse_resources(ctx: &mut Ctx<'_>, text: &str, out: &mut Vec<Limit>) {
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Limit") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let mut found = Vec::new();
        if section.looks_vertical() {
            let entries = lexer::vertical(ctx, &section);
            found.extend(limit_from(ctx, &entries, section.line));
        } else if let Some(table) = lexer::horizontal(ctx, &section) {
            for row in &table.rows {
                let entries: Vec<Entry> = table
                    .columns
                    .iter()
                    .zip(&row.fields)
                    .filter_map(|(c, f)| {
                        f.as_ref().map(|v| Entry {
                            key: c.clone(),
                            value: v.clone(),
                            line: row.line,
                        })
                    })
                    .collect();
                found.extend(limit_from(ctx, &entries, row.line));
            }
        }
        for l in found {
            if let Some(first) = out.iter().find(|x| x.name == l.name) {
                ctx.err(
                    l.line,
                    format!(
                        "duplicate Limit NAME `{}` (first at line {})",
                        l.name, first.line
                    ),
                );
            } else {
                not_applied::check_section(
                    ctx,
                    not_applied::LSB_RESOURCES,
                    "Limit",
                    &format!("Limit `{}`", l.name),
                    l.line,
                );
                out.push(l);
            }
        }
    }
}

// ---------------------------------------------------------------- lsb.applications

/// Application-profile keywords accepted without a warning.
pub const APPLICATION_KEYS: &[&str] = &[
    "NAME",
    "DESCRIPTION",
    "ABS_RUNLIMIT",
    "BIND_JOB",
    "CHKPNT_DIR",
    "CHKPNT_INITPERIOD",
    "CHKPNT_PERIOD",
    "CHKPNT_METHOD",
    "CORELIMIT",
    "CPULIMIT",
    "DATALIMIT",
    "ENV_VARS",
    "FILELIMIT",
    "JOB_CWD",
    "JOB_INCLUDE_POSTPROC",
    "JOB_POSTPROC_TIMEOUT",
    "JOB_STARTER",
    "LOCAL_MAX_PREEXEC_RETRY",
    "MAX_JOB_PREEMPT",
    "MAX_JOB_REQUEUE",
    "MAX_PREEXEC_RETRY",
    "MEMLIMIT",
    "MEMLIMIT_TYPE",
    "MIG",
    "NICE",
    "NO_PREEMPT_FINISH_TIME",
    "NO_PREEMPT_RUN_TIME",
    "POST_EXEC",
    "PRE_EXEC",
    "PROCESSLIMIT",
    "PROCLIMIT",
    "REQUEUE_EXIT_VALUES",
    "RERUNNABLE",
    "RES_REQ",
    "RESUME_CONTROL",
    "RUNLIMIT",
    "RUNTIME",
    "STACKLIMIT",
    "SUCCESS_EXIT_VALUES",
    "SUSPEND_CONTROL",
    "SWAPLIMIT",
    "TASKLIMIT",
    "TERMINATE_CONTROL",
    "THREADLIMIT",
];

/// An Application section of lsb.applications.
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    pub name: String,
    pub description: String,
    /// Every other keyword, raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

fn parse_applications(ctx: &mut Ctx<'_>, text: &str, out: &mut Vec<Application>) {
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Application") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let mut app = Application {
            name: String::new(),
            description: String::new(),
            other: BTreeMap::new(),
            line: section.line,
        };
        for e in lexer::vertical(ctx, &section) {
            let key = e.upper();
            match key.as_str() {
                "NAME" => app.name = e.value.clone(),
                "DESCRIPTION" => app.description = e.value.clone(),
                k => {
                    if APPLICATION_KEYS.contains(&k) {
                        not_applied::check_entry(
                            ctx,
                            LSB_APPLICATIONS,
                            "Application",
                            &e.key,
                            &e.value,
                            e.line,
                        );
                    } else {
                        ctx.warn(
                            e.line,
                            format!("unknown keyword {} in lsb.applications", e.key),
                        );
                    }
                    if !e.value.is_empty() {
                        app.other.insert(key.clone(), e.value.clone());
                    }
                }
            }
        }
        if app.name.is_empty() {
            ctx.err(section.line, "Application section without NAME");
        } else if let Some(first) = out.iter().find(|a| a.name == app.name) {
            ctx.err(
                app.line,
                format!(
                    "duplicate application `{}` (first at line {})",
                    app.name, first.line
                ),
            );
        } else {
            out.push(app);
        }
    }
}

// ---------------------------------------------------------------- loading

/// Read every lsb.* file in `dir`. lsb.params and lsb.queues are required.
pub(crate) fn load(diag: &mut Diag, dir: &Path, shared: &Shared, cluster: &ClusterFile) -> Batch {
    let mut batch = Batch::default();

    let params_path = dir.join("lsb.params");
    let mut dq_line = 0;
    if let Some(text) = crate::read_file(diag, &params_path, true) {
        let (p, l) = parse_params(&mut diag.file(&params_path), &text);
        batch.params = p;
        dq_line = l;
    }

    let queues_path = dir.join("lsb.queues");
    if let Some(text) = crate::read_file(diag, &queues_path, true) {
        batch.queues = parse_queues(&mut diag.file(&queues_path), &text, shared);
        let mut ctx = diag.file(&params_path);
        for q in &batch.params.default_queue {
            if batch.queue(q).is_none() {
                ctx.err(
                    dq_line,
                    format!("DEFAULT_QUEUE: queue `{q}` is not defined in lsb.queues"),
                );
            }
        }
    }

    let hosts_path = dir.join("lsb.hosts");
    if let Some(text) = crate::read_file(diag, &hosts_path, false) {
        let mut ctx = diag.file(&hosts_path);
        parse_hosts(&mut ctx, &text, shared, &mut batch);
        check_host_groups(&mut ctx, &batch, cluster);
        check_host_rows(&mut ctx, &batch, cluster, shared);
    }

    let users_path = dir.join("lsb.users");
    if let Some(text) = crate::read_file(diag, &users_path, false) {
        parse_users(&mut diag.file(&users_path), &text, &mut batch);
    }

    let resources_path = dir.join("lsb.resources");
    if let Some(text) = crate::read_file(diag, &resources_path, false) {
        parse_resources(&mut diag.file(&resources_path), &text, &mut batch.limits);
    }

    let apps_path = dir.join("lsb.applications");
    if let Some(text) = crate::read_file(diag, &apps_path, false) {
        parse_applications(&mut diag.file(&apps_path), &text, &mut batch.applications);
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::{HostModel, ResourceDef, ResourceKind};

    fn shared() -> Shared {
        Shared {
            clusters: vec!["c".into()],
            host_types: vec!["linux".into()],
            host_models: vec![HostModel {
                name: "m".into(),
                cpu_factor: 1.0,
                architecture: None,
            }],
            resources: vec![ResourceDef {
                name: "gpu".into(),
                kind: ResourceKind::Numeric,
                interval: Some(10),
                increasing: Some(true),
                description: String::new(),
            }],
        }
    }

    fn with_ctx<T>(f: impl FnOnce(&mut Ctx<'_>) -> T) -> (T, Diag) {
        let mut d = Diag::default();
        let path = Path::new("f");
        let t = f(&mut d.file(path));
        (t, d)
    }

    #[test]
    fn thresholds() {
        let t = |s| Threshold::parse(s).unwrap();
        assert_eq!(
            t("0.7/2.0"),
            Threshold {
                sched: Some(0.7),
                stop: Some(2.0)
            }
        );
        assert_eq!(
            t("4"),
            Threshold {
                sched: Some(4.0),
                stop: None
            }
        );
        assert_eq!(
            t("()/8"),
            Threshold {
                sched: None,
                stop: Some(8.0)
            }
        );
        assert_eq!(
            t("15/()"),
            Threshold {
                sched: Some(15.0),
                stop: None
            }
        );
        assert!(Threshold::parse("a/b").is_err());
        assert!(Threshold::parse("1/2/3").is_err());
    }

    #[test]
    fn job_controls() {
        let m = parse_job_controls(
            "SUSPEND[SIGTSTP] resume[SIGCONT] TERMINATE[kill -9 $LSB_JOBPGIDS; echo [x]]",
        )
        .unwrap();
        assert_eq!(m["SUSPEND"], "SIGTSTP");
        assert_eq!(m["RESUME"], "SIGCONT");
        assert_eq!(m["TERMINATE"], "kill -9 $LSB_JOBPGIDS; echo [x]");
        assert!(parse_job_controls("STOP[SIGSTOP]").is_err());
        assert!(parse_job_controls("SUSPEND[SIGSTOP").is_err());
        assert!(parse_job_controls("SUSPEND").is_err());
        assert!(parse_job_controls("SUSPEND[]").is_err());
    }

    #[test]
    fn queue_keywords() {
        let text = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 40\nPJOB_LIMIT = 1.5\nUJOB_LIMIT = 2\n\
                    USERS = all ~bob\nEXCLUSIVE = Y\nTERMINATE_WHEN = load window\nINTERACTIVE = no\n\
                    RERUNNABLE = yes\nRUNLIMIT = 10 60\nPROCLIMIT = 4\nBACKFILL = Y\ngpu = 1/2\n\
                    SWAP = 10/5\nDISPATCH_WINDOW = 8-17\nDESCRIPTION =\nEnd Queue\n";
        let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared()));
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        // Only PJOB_LIMIT, PROCLIMIT and BACKFILL = Y are read but not applied.
        let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
        assert_eq!(
            w,
            vec![(4, true), (12, true), (13, true)],
            "{:#?}",
            d.warnings
        );
        let q = &qs[0];
        assert_eq!(q.priority, 40);
        assert_eq!(q.pjob_limit, Some(1.5));
        assert_eq!(q.ujob_limit, Some(2));
        assert_eq!(q.users, vec!["all", "~bob"]);
        assert!(q.exclusive && q.rerunnable);
        assert_eq!(q.terminate_when, vec!["LOAD", "WINDOW"]);
        assert_eq!(q.interactive.as_deref(), Some("NO"));
        assert_eq!(q.limits["RUNLIMIT"], "10 60");
        assert_eq!(q.limits["PROCLIMIT"], "4");
        assert_eq!(q.other["BACKFILL"], "Y");
        assert_eq!(q.thresholds["gpu"].stop, Some(2.0));
        assert_eq!(q.thresholds["swp"].sched, Some(10.0));
        assert!(q.dispatch_window.is_some());
        assert_eq!(q.description, "");
        assert_eq!(q.line, 1);
    }

    #[test]
    fn stop_and_resume_conditions_are_checked() {
        let text = "Begin Queue\nQUEUE_NAME = q\nSTOP_COND = r1m > 2 && (ut > 0.9 || pg > 20)\n\
                    RESUME_COND = (r1m < 1\nEnd Queue\n";
        let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared()));
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        let lines: Vec<usize> = d.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![4], "{:?}", d.warnings);
        assert!(
            d.warnings[0].message.contains("RESUME_COND"),
            "{:?}",
            d.warnings
        );
        assert_eq!(
            qs[0].stop_cond.as_deref(),
            Some("r1m > 2 && (ut > 0.9 || pg > 20)")
        );
        assert_eq!(qs[0].resume_cond.as_deref(), Some("(r1m < 1"));
    }

    #[test]
    fn queue_errors() {
        let text = "Begin Queue\nPRIORITY = 1\nEnd Queue\n\
                    Begin Queue\nQUEUE_NAME = q\nNICE = x\nr1m = a/b\nEXCLUSIVE = maybe\n\
                    INTERACTIVE = sometimes\nTERMINATE_WHEN = NEVER\nJOB_CONTROLS = X[y]\nEnd Queue\n";
        let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared()));
        assert_eq!(qs.len(), 1);
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 6, 7, 8, 9, 10, 11], "{:#?}", d.errors);
    }

    #[test]
    fn host_lost_grace_is_known() {
        let text = "Begin Parameters\nBASALT_HOST_LOST_GRACE = 20\nEnd Parameters\n";
        let ((p, _), d) = with_ctx(|ctx| parse_params(ctx, text));
        assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
        assert_eq!(p.other["BASALT_HOST_LOST_GRACE"], "20");
    }

    #[test]
    fn params_defaults_and_errors() {
        let (p, d) = with_ctx(|ctx| parse_params(ctx, "Begin Parameters\nEnd Parameters\n"));
        assert!(d.errors.is_empty());
        assert_eq!(p.0, BatchParams::default());
        assert_eq!(p.0.mbd_sleep_time_secs, 60);
        assert_eq!(p.0.max_jobid, 999_999);

        let text = "Begin Parameters\nMBD_SLEEP_TIME = 0\nCLEAN_PERIOD = soon\nHIST_HOURS = -1\n\
                    RESOURCE_RESERVE_PER_SLOT = Y\nMAX_JOB_PREEMPT = 3\nJOB_SPOOL_DIR = /tmp\nEnd Parameters\n";
        let (p, d) = with_ctx(|ctx| parse_params(ctx, text));
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        // HIST_HOURS, RESOURCE_RESERVE_PER_SLOT = Y, MAX_JOB_PREEMPT and JOB_SPOOL_DIR are
        // read but not applied; MBD_SLEEP_TIME and CLEAN_PERIOD are applied.
        let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
        assert_eq!(
            w,
            vec![(4, true), (5, true), (6, true), (7, true)],
            "{d:#?}"
        );
        assert!(p.0.resource_reserve_per_slot);
        assert_eq!(p.0.max_job_preempt, Some(3));
        assert_eq!(p.0.other["JOB_SPOOL_DIR"], "/tmp");
        assert_eq!(p.0.event_sync, "fdatasync");

        let text = "Begin Parameters\nBASALT_EVENT_SYNC = FSYNC\nBASALT_EVENT_LOCK_HEARTBEAT = 3\n\
                    End Parameters\n";
        let (p, d) = with_ctx(|ctx| parse_params(ctx, text));
        assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
        assert_eq!(p.0.event_sync, "fsync");
        assert_eq!(p.0.event_lock_heartbeat_secs, 3);
        let text = "Begin Parameters\nBASALT_EVENT_SYNC = sometimes\nBASALT_EVENT_LOCK_HEARTBEAT = 0\n\
                    End Parameters\n";
        let (_, d) = with_ctx(|ctx| parse_params(ctx, text));
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3]);
    }

    #[test]
    fn hosts_and_groups() {
        let text = "Begin Host\nHOST_NAME MXJ JL/U gpu CHKPNT bogus\nh1 4 1 1/2 (/ckpt) x\n\
                    h2 many () () () ()\nh3 ! () () () () \nEnd Host\n\
                    Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ng1 (all)\ng2 (h1 g1 ~h2 !)\ng2 ()\nEnd HostGroup\n\
                    Begin HostPartition\nEnd HostPartition\n";
        let (b, d) = with_ctx(|ctx| {
            let mut b = Batch::default();
            parse_hosts(ctx, text, &shared(), &mut b);
            b
        });
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 11], "{:#?}", d.errors);
        let wl: Vec<(usize, bool)> = d.warnings.iter().map(|e| (e.line, e.not_applied)).collect();
        // The unknown column, then CHKPNT and HostPartition, read but not applied.
        assert_eq!(
            wl,
            vec![(2, false), (2, true), (13, true)],
            "{:#?}",
            d.warnings
        );
        assert!(
            d.warnings[1]
                .message
                .starts_with("CHKPNT is read but not applied yet")
        );
        assert_eq!(b.hosts[0].mxj, Some(Mxj::Slots(4)));
        assert_eq!(b.hosts[0].other["CHKPNT"], "/ckpt");
        assert_eq!(b.hosts[0].thresholds["gpu"].sched, Some(1.0));
        assert_eq!(b.hosts[2].mxj, Some(Mxj::Ncpus));
        assert_eq!(b.host_groups.len(), 2);
        assert_eq!(b.host_groups[1].members, vec!["h1", "g1", "~h2", "!"]);
    }

    #[test]
    fn limits_vertical_and_horizontal() {
        let text = "Begin Limit\nNAME = day\nUSERS = alice bob\nSLOTS = 10 8:00-18:00\nMEM = 100\nEnd Limit\n\
                    Begin Limit\nNAME PER_HOST SLOTS JOBS\nL1 (h1 h2) 4 -\nL2 () - 3\nEnd Limit\n\
                    Begin Limit\nNAME = bad\nSLOTS = 10 25:00-1\nJOBS = many\nWIDGETS = 1\nEnd Limit\n\
                    Begin Limit\nUSERS = x\nEnd Limit\n";
        let (limits, d) = with_ctx(|ctx| {
            let mut out = Vec::new();
            parse_resources(ctx, text, &mut out);
            out
        });
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![14, 15, 18], "{:#?}", d.errors);
        // WIDGETS is unknown; every Limit is read but not applied.
        let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
        assert_eq!(
            w,
            vec![(1, true), (9, true), (10, true), (16, false), (12, true)]
        );
        assert!(
            d.warnings[1]
                .message
                .starts_with("Limit `L1` is read but not applied yet")
        );
        assert_eq!(limits.len(), 4);
        assert_eq!(limits[0].users, vec!["alice", "bob"]);
        assert_eq!(limits[0].slots, Some(10));
        assert!(limits[0].slots_window.as_ref().unwrap().is_open(1, 9 * 60));
        assert_eq!(limits[0].other["MEM"], "100");
        assert_eq!(limits[1].name, "L1");
        assert_eq!(limits[1].per_host, vec!["h1", "h2"]);
        assert_eq!(limits[1].jobs, None);
        assert_eq!(limits[1].line, 9);
        assert_eq!(limits[2].jobs, Some(3));
        assert!(limits[2].per_host.is_empty());
    }

    #[test]
    fn users_and_applications() {
        let text = "Begin User\nUSER_NAME MAX_JOBS JL/P MAX_PEND_JOBS\nbob 10 0.5 100\nbob 1 1 1\namy x - -\nEnd User\n";
        let (b, d) = with_ctx(|ctx| {
            let mut b = Batch::default();
            parse_users(ctx, text, &mut b);
            b
        });
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 5]);
        assert_eq!(b.users[0].jl_p, Some(0.5));
        assert_eq!(b.users[0].other["MAX_PEND_JOBS"], "100");

        let text = "Begin Application\nNAME = a\nRUNLIMIT = 5\nFOO = 1\nEnd Application\n\
                    Begin Application\nDESCRIPTION = x\nEnd Application\n";
        let (apps, d) = with_ctx(|ctx| {
            let mut out = Vec::new();
            parse_applications(ctx, text, &mut out);
            out
        });
        assert_eq!(apps.len(), 1);
        assert_eq!(apps[0].other["RUNLIMIT"], "5");
        assert_eq!(d.errors.len(), 1);
        // RUNLIMIT is read but not applied; FOO is unknown.
        let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
        assert_eq!(w, vec![(3, true), (4, false)]);
    }
}
