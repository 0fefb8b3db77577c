//! lsb.params: the cluster-wide batch parameters ([`BatchParams`]).

use std::collections::BTreeMap;

use crate::error::Ctx;
use crate::lexer::{self, Entry};
use crate::not_applied::{self, LSB_PARAMS};

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
    "PREEMPTION_WAIT_TIME",
    "NO_PREEMPT_RUN_TIME",
    "NO_PREEMPT_FINISH_TIME",
    "ACCT_ARCHIVE_SIZE",
    "ACCT_ARCHIVE_AGE",
    "MAX_ACCT_ARCHIVE_FILE",
    "RESOURCE_RESERVE_PER_SLOT",
    "BASALT_EVENT_SYNC",
    "BASALT_EVENT_LOCK_HEARTBEAT",
    "MAX_RSCHED_TIME",
    "MC_PLUGIN_SCHEDULE_ENHANCE",
    "MC_PLUGIN_UPDATE_INTERVAL",
];

/// Other lsb.params keys found in OpenLava/LSF configurations: accepted
/// without a warning and kept raw in [`BatchParams::other`].
pub const OTHER_KNOWN_BATCH_PARAMS: &[&str] = &[
    // Basalt: seconds between sbatchd hellos (host unreach after three missed ones).
    "BASALT_SBD_HELLO_INTERVAL",
    // Basalt: seconds a host stays unreach before mbatchd gives up on its jobs
    // (rerunnable ones are requeued, the others end EXIT); mbatchd reads it.
    "BASALT_HOST_LOST_GRACE",
    // Basalt: seconds a job requeued by its exit value (REQUEUE_EXIT_VALUES) waits before
    // its next dispatch (default MBD_SLEEP_TIME); mbatchd reads it.
    "BASALT_REQUEUE_DELAY",
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
    "MAX_PEND_SLOTS",
    "MAX_SBD_CONNS",
    "MAX_SCHED_STAY",
    "MAX_USER_PRIORITY",
    "MBD_REFRESH_TIME",
    "PARALLEL_SCHED_BY_SLOT",
    "SHARED_RESOURCE_UPDATE_FACTOR",
    "SUB_TRY_INTERVAL",
    "SYSTEM_MAPPING_ACCOUNT",
];

impl BatchParams {
    /// `MAX_SBD_CONNS`: the most connections mbatchd holds at once (commands' and
    /// sbatchds' together: they share its port), when set.
    pub fn max_sbd_conns(&self) -> Option<u64> {
        self.other
            .get("MAX_SBD_CONNS")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|n| *n > 0)
    }
}

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
    /// PREEMPT_FOR, parsed.
    pub preempt_for_keys: super::PreemptFor,
    /// MAX_JOB_PREEMPT.
    pub max_job_preempt: Option<u32>,
    /// PREEMPTION_WAIT_TIME (seconds; 300 when not set): a job whose victims are being
    /// killed (TERMINATE_WHEN = PREEMPT) preempts no more for this long.
    pub preemption_wait_time_secs: Option<u32>,
    /// NO_PREEMPT_RUN_TIME.
    pub no_preempt_run_time: Option<super::NoPreemptTime>,
    /// NO_PREEMPT_FINISH_TIME.
    pub no_preempt_finish_time: Option<super::NoPreemptTime>,
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
    /// MultiCluster MAX_RSCHED_TIME, in MBD_SLEEP_TIMEs: how long a forwarded job may
    /// stay dispatched but not started in the execution cluster before it returns to be
    /// rescheduled (`Some(20)` when unset, `None` for `infinit`).
    pub max_rsched_time: Option<u32>,
    /// MultiCluster MC_PLUGIN_SCHEDULE_ENHANCE (None when unset, and for
    /// DYN_CLUSTER_WEIGHTING, which Basalt does not support).
    pub mc_schedule_enhance: Option<super::McScheduleEnhance>,
    /// MultiCluster MC_PLUGIN_UPDATE_INTERVAL: seconds between refreshes of the remote
    /// clusters' resource information (None when unset).
    pub mc_plugin_update_interval: Option<u32>,
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
            preempt_for_keys: super::PreemptFor::default(),
            max_job_preempt: None,
            preemption_wait_time_secs: None,
            no_preempt_run_time: None,
            no_preempt_finish_time: None,
            acct_archive_size: None,
            acct_archive_age: None,
            max_acct_archive_file: None,
            resource_reserve_per_slot: false,
            event_sync: "fdatasync".to_owned(),
            event_lock_heartbeat_secs: 1,
            max_rsched_time: Some(super::DEFAULT_MAX_RSCHED_TIME),
            mc_schedule_enhance: None,
            mc_plugin_update_interval: None,
            other: BTreeMap::new(),
        }
    }
}

pub(super) fn set_u32(ctx: &mut Ctx<'_>, e: &Entry, key: &str, min: u32, slot: &mut u32) {
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

pub(super) fn set_f64(ctx: &mut Ctx<'_>, e: &Entry, key: &str, slot: &mut f64) {
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
pub(super) fn parse_params(ctx: &mut Ctx<'_>, text: &str) -> (BatchParams, usize) {
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
                "PREEMPT_FOR" => match super::PreemptFor::parse(&e.value) {
                    Ok(f) => {
                        p.preempt_for = Some(e.value.clone());
                        p.preempt_for_keys = f;
                    }
                    Err(err) => ctx.err(e.line, format!("PREEMPT_FOR: {err}")),
                },
                "PREEMPTION_WAIT_TIME" => {
                    p.preemption_wait_time_secs = ctx.uint(e.line, k, &e.value);
                }
                "NO_PREEMPT_RUN_TIME" => match super::NoPreemptTime::parse(&e.value) {
                    Ok(t) => p.no_preempt_run_time = Some(t),
                    Err(err) => ctx.err(e.line, format!("NO_PREEMPT_RUN_TIME: {err}")),
                },
                "NO_PREEMPT_FINISH_TIME" => match super::NoPreemptTime::parse(&e.value) {
                    Ok(t) => p.no_preempt_finish_time = Some(t),
                    Err(err) => ctx.err(e.line, format!("NO_PREEMPT_FINISH_TIME: {err}")),
                },
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
                "MAX_RSCHED_TIME" => match super::parse_count_or_infinit(&e.value) {
                    Ok(n) => p.max_rsched_time = n,
                    Err(err) => ctx.err(e.line, format!("MAX_RSCHED_TIME: {err}")),
                },
                "MC_PLUGIN_SCHEDULE_ENHANCE" => match super::McScheduleEnhance::parse(&e.value) {
                    // DYN_CLUSTER_WEIGHTING (Ok(None)): the read-but-not-applied
                    // warning above says Basalt does not support it.
                    Ok(m) => p.mc_schedule_enhance = m,
                    Err(err) => ctx.err(e.line, format!("MC_PLUGIN_SCHEDULE_ENHANCE: {err}")),
                },
                "MC_PLUGIN_UPDATE_INTERVAL" => {
                    let mut secs = 0;
                    set_u32(ctx, &e, k, 1, &mut secs);
                    if secs > 0 {
                        p.mc_plugin_update_interval = Some(secs);
                    }
                }
                "LOCAL_MAX_PREEXEC_RETRY"
                | "MAX_PREEXEC_RETRY"
                | "MAX_JOB_REQUEUE"
                | "MAX_PEND_JOBS"
                | "MAX_PEND_SLOTS"
                | "SUB_TRY_INTERVAL" => {
                    // Kept raw for basalt-sched, which reads them per queue too.
                    if ctx.uint(e.line, k, &e.value).is_some() {
                        p.other.insert(key.clone(), e.value.clone());
                    }
                }
                "JOB_INCLUDE_POSTPROC" | "JOB_POSTPROC_TIMEOUT" => {
                    // Kept raw for basalt-sched; an application profile's own wins.
                    if super::postproc_setting(ctx, e.line, k, &e.value) {
                        p.other
                            .insert(key.clone(), e.value.trim().to_ascii_uppercase());
                    }
                }
                "LOCAL_MAX_PREEXEC_RETRY_ACTION" => {
                    let u = e.value.trim().to_ascii_uppercase();
                    if matches!(u.as_str(), "SUSPEND" | "EXIT") {
                        p.other.insert(key.clone(), u);
                    } else {
                        ctx.err(
                            e.line,
                            format!(
                                "LOCAL_MAX_PREEXEC_RETRY_ACTION must be SUSPEND or EXIT, found `{}`",
                                e.value
                            ),
                        );
                    }
                }
                "MAX_SBD_CONNS" => {
                    // mbatchd's connection limit (basalt_runtime::serve): a positive count.
                    if let Some(n) = ctx.uint(e.line, k, &e.value) {
                        if n == 0 {
                            ctx.err(e.line, "MAX_SBD_CONNS must be a positive number".to_owned());
                        } else {
                            p.other.insert(key.clone(), e.value.trim().to_owned());
                        }
                    }
                }
                "BASALT_REQUEUE_DELAY" => {
                    // Kept raw for basalt-sched (SchedConfig); 0 would re-dispatch a
                    // requeued job at once, in a loop.
                    match ctx.uint(e.line, k, &e.value) {
                        Some(0) => ctx.err(
                            e.line,
                            "BASALT_REQUEUE_DELAY must be at least 1 second".to_owned(),
                        ),
                        Some(_) => {
                            p.other.insert(key.clone(), e.value.trim().to_owned());
                        }
                        None => {}
                    }
                }
                "BASALT_SBD_HELLO_INTERVAL" | "BASALT_HOST_LOST_GRACE" => {
                    // Kept raw for basalt-sched (SchedConfig), which falls back to its
                    // default on a value it cannot read: such a value is an error here,
                    // naming the file and line, instead of a silent default.
                    let _ = ctx.uint(e.line, k, &e.value);
                    p.other.insert(key.clone(), e.value.clone());
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
