//! `lsb_parameterinfo`: lsb.params as `bparams -a` shows it (mbatchd's `Params`: every
//! parameter with its effective value), as LSF's `struct parameterInfo`.

use super::*;
use crate::session::{finish, with_mbatchd};
use basalt_proto::mbatchd::ParamsRequest;
use std::collections::HashMap;

static PARAMS: Slot<parameterInfo> = Slot::new();

/// `struct parameterInfo *lsb_parameterinfo(char **names, int *numUsers, int options)`:
/// the cluster's batch parameters. `names`, `numUsers` and `options` are reserved by
/// LSF ("supply NULL, NULL, 0") and not read.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_parameterinfo(
    _names: *mut *mut c_char,
    _num: *mut c_int,
    _options: c_int,
) -> *mut parameterInfo {
    let r = with_mbatchd(|mut c, _| async move {
        c.params(ParamsRequest {})
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| Fail::from_status(&s))
    })
    .map(|reply| {
        let kv: HashMap<String, String> = reply
            .params
            .into_iter()
            .map(|kv| (kv.key.to_ascii_uppercase(), kv.value))
            .collect();
        let mut a = Arena::default();
        let p = entry(&kv, &mut a);
        PARAMS.put(vec![p], a)
    });
    finish(r, std::ptr::null_mut())
}

/// An integer parameter: its (first) number; `-` (not set, or no limit) is -1.
fn int_value(v: &str) -> Option<c_int> {
    let w = v.split_whitespace().next()?;
    if w == "-" {
        return Some(-1);
    }
    w.parse::<i64>().ok().map(int)
}

fn float_value(v: &str) -> Option<f32> {
    v.split_whitespace().next()?.parse::<f32>().ok()
}

fn yes_value(v: &str) -> Option<c_int> {
    Some(c_int::from(matches!(
        v.trim().to_ascii_uppercase().as_str(),
        "Y" | "YES" | "ALL"
    )))
}

/// The parameters as LSF's structure: each field from its lsb.params keyword (mbatchd's
/// effective value); a field Basalt has no keyword for is 0 or "".
fn entry(kv: &HashMap<String, String>, a: &mut Arena) -> parameterInfo {
    let mut p = zero::<parameterInfo>();
    let get = |k: &str| kv.get(k).map(String::as_str);
    macro_rules! strings {
        ($($f:ident = $k:literal),* $(,)?) => { $(
            p.$f = a.s(get($k).unwrap_or(""));
        )* };
    }
    macro_rules! parsed {
        ($how:ident: $($f:ident = $k:literal),* $(,)?) => { $(
            if let Some(v) = get($k).and_then($how) {
                p.$f = v;
            }
        )* };
    }
    strings!(
        defaultQueues = "DEFAULT_QUEUE",
        defaultHostSpec = "DEFAULT_HOST_SPEC",
        defaultProject = "DEFAULT_PROJECT",
        pjobSpoolDir = "JOB_SPOOL_DIR",
        jobAttaDir = "JOB_ATTA_DIR",
        sysMapAcct = "SYSTEM_MAPPING_ACCOUNT",
        preemptResourceList = "PREEMPTABLE_RESOURCES",
        acctArchiveAt = "ACCT_ARCHIVE_TIME",
        mbdQueryCPUs = "MBD_QUERY_CPUS",
        defaultApp = "DEFAULT_APPLICATION",
        streamFile = "EVENT_STREAM_FILE",
        defaultJgrp = "DEFAULT_JOBGROUP",
        computeUnitTypes = "COMPUTE_UNIT_TYPES",
        preExecExitValues = "PREEXEC_EXCLUDE_HOST_EXIT_VALUES",
        defaultUserGroup = "DEFAULT_USER_GROUP",
        allowEventType = "ALLOW_EVENT_TYPE",
        groupPendJobsBy = "GROUP_PEND_JOBS_BY",
        pendingTimeRanking = "PENDING_TIME_RANKING",
    );
    // No lsb.params keyword of Basalt's sets these.
    for f in [
        &mut p.dbSelectLoad,
        &mut p.priorityMapping,
        &mut p.defaultSLA,
        &mut p.exitRateTypes,
        &mut p.sschedAcctDir,
        &mut p.mockParamB,
        &mut p.pendingReasonsExclude,
        &mut p.pendingReasonDir,
    ] {
        *f = a.s("");
    }
    parsed!(int_value:
        mbatchdInterval = "MBD_SLEEP_TIME",
        sbatchdInterval = "SBD_SLEEP_TIME",
        jobAcceptInterval = "JOB_ACCEPT_INTERVAL",
        maxSbdRetries = "MAX_SBD_FAIL",
        cleanPeriod = "CLEAN_PERIOD",
        maxNumJobs = "MAX_JOB_NUM",
        pgSuspendIt = "PG_SUSP_IT",
        maxPreExecRetry = "MAX_PREEXEC_RETRY",
        localMaxPreExecRetry = "LOCAL_MAX_PREEXEC_RETRY",
        rusageUpdateRate = "RUSAGE_UPDATE_RATE",
        rusageUpdatePercent = "RUSAGE_UPDATE_PERCENT",
        condCheckTime = "CONDITION_CHECK_TIME",
        maxSbdConnections = "MAX_SBD_CONNS",
        maxSchedStay = "MAX_SCHED_STAY",
        freshPeriod = "FRESH_PERIOD",
        maxJobArraySize = "MAX_JOB_ARRAY_SIZE",
        jobTerminateInterval = "JOB_TERMINATE_INTERVAL",
        maxUserPriority = "MAX_USER_PRIORITY",
        sharedResourceUpdFactor = "SHARED_RESOURCE_UPDATE_FACTOR",
        maxJobMsgNum = "MAX_JOB_MSG_NUM",
        maxJobAttaSize = "MAX_JOB_ATTA_SIZE",
        mbdRefreshTime = "MBD_REFRESH_TIME",
        updEventUpdateInterval = "EVENT_UPDATE_INTERVAL",
        maxJobId = "MAX_JOBID",
        preemptionWaitTime = "PREEMPTION_WAIT_TIME",
        maxAcctArchiveNum = "MAX_ACCT_ARCHIVE_FILE",
        acctArchiveInDays = "ACCT_ARCHIVE_AGE",
        acctArchiveInSize = "ACCT_ARCHIVE_SIZE",
        chunkJobDuration = "CHUNK_JOB_DURATION",
        noPreemptRunTime = "NO_PREEMPT_RUN_TIME",
        noPreemptFinishTime = "NO_PREEMPT_FINISH_TIME",
        jobSubRetryInterval = "SUB_TRY_INTERVAL",
        maxConcurrentJobQuery = "MAX_CONCURRENT_QUERY",
        minSwitchPeriod = "MIN_SWITCH_PERIOD",
        detectIdleJobAfter = "DETECT_IDLE_JOB_AFTER",
        maxInfoDirs = "MAX_INFO_DIRS",
        streamSize = "MAX_EVENT_STREAM_SIZE",
        jobRunlimitRatio = "JOB_RUNLIMIT_RATIO",
        jobPostprocTimeout = "JOB_POSTPROC_TIMEOUT",
        maxJobPreempt = "MAX_JOB_PREEMPT",
        maxJobRequeue = "MAX_JOB_REQUEUE",
        maxStreamFileNum = "MAX_EVENT_STREAM_FILE_NUMBER",
        advResUserLimit = "ADVRSV_USER_LIMIT",
        noPreemptInterval = "NO_PREEMPT_INTERVAL",
        maxTotalTimePreempt = "MAX_TOTAL_TIME_PREEMPT",
        jobPreprocTimeout = "JOB_PREPROC_TIMEOUT",
        runtimeLogInterval = "RUNTIME_LOG_INTERVAL",
    );
    parsed!(float_value:
        historyHours = "HIST_HOURS",
        runTimeFactor = "RUN_TIME_FACTOR",
        waitTimeFactor = "WAIT_TIME_FACTOR",
        runJobFactor = "RUN_JOB_FACTOR",
        cpuTimeFactor = "CPU_TIME_FACTOR",
        committedRunTimeFactor = "COMMITTED_RUN_TIME_FACTOR",
        fairAdjustFactor = "FAIRSHARE_ADJUSTMENT_FACTOR",
        globalJobExitRate = "GLOBAL_EXIT_RATE",
    );
    parsed!(yes_value:
        disableUAcctMap = "DISABLE_UACCT_MAP",
        enforceProjCheck = "ENFORCE_PROJECT_CHECK",
        resourceReservePerSlot = "RESOURCE_RESERVE_PER_TASK",
        enableHistRunTime = "ENABLE_HIST_RUN_TIME",
        absoluteRunLimit = "ABS_RUNLIMIT",
        condensePendingReasons = "CONDENSE_PENDING_REASONS",
        slotBasedParallelSched = "PARALLEL_SCHED_BY_SLOT",
        disableUserJobMovement = "JOB_POSITION_CONTROL_BY_ADMIN",
        enableStream = "ENABLE_EVENT_STREAM",
        newjobRefresh = "NEWJOB_REFRESH",
        jobIncludePostproc = "JOB_INCLUDE_POSTPROC",
        useSuspSlots = "USE_SUSP_SLOTS",
        enforceOneUGLimit = "ENFORCE_ONE_UG_LIMITS",
        extendJobException = "EXTEND_JOB_EXCEPTION_NOTIFY",
        enableRunTimeDecay = "RUN_TIME_DECAY",
        strictUGCtrl = "STRICT_UG_CONTROL",
        enforceUGTree = "ENFORCE_UG_TREE",
    );
    // JOB_PRIORITY_OVER_TIME = increment/interval.
    if let Some((v, t)) = get("JOB_PRIORITY_OVER_TIME").and_then(|v| v.trim().split_once('/')) {
        p.jobPriorityValue = int_value(v).unwrap_or(0);
        p.jobPriorityTime = int_value(t).unwrap_or(0);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn lsb_params_keywords_fill_lsfs_fields() {
        let kv: HashMap<String, String> = [
            ("DEFAULT_QUEUE", "normal idle"),
            ("MBD_SLEEP_TIME", "10"),
            ("SBD_SLEEP_TIME", "7"),
            ("JOB_ACCEPT_INTERVAL", "0"),
            ("CLEAN_PERIOD", "3600"),
            ("HIST_HOURS", "5"),
            ("MAX_JOB_PREEMPT", "-"),
            ("ABS_RUNLIMIT", "Y"),
            ("JOB_PRIORITY_OVER_TIME", "1/20"),
            ("DEFAULT_APPLICATION", "fluent"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut a = Arena::default();
        let p = entry(&kv, &mut a);
        // SAFETY: the arena's strings.
        unsafe {
            assert_eq!(CStr::from_ptr(p.defaultQueues).to_str(), Ok("normal idle"));
            assert_eq!(CStr::from_ptr(p.defaultApp).to_str(), Ok("fluent"));
            assert_eq!(CStr::from_ptr(p.defaultHostSpec).to_str(), Ok(""));
        }
        assert_eq!((p.mbatchdInterval, p.sbatchdInterval), (10, 7));
        assert_eq!((p.jobAcceptInterval, p.cleanPeriod), (0, 3600));
        assert_eq!(p.historyHours, 5.0);
        assert_eq!(p.maxJobPreempt, -1);
        assert_eq!(p.absoluteRunLimit, 1);
        assert_eq!((p.jobPriorityValue, p.jobPriorityTime), (1, 20));
        assert_eq!(p.maxNumJobs, 0, "not given: 0");
    }
}
