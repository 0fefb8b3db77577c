//! Batch information and administration: `lsb_queueinfo`, `lsb_hostinfo`,
//! `lsb_hostinfo_ex`, `lsb_hostgrpinfo`, `lsb_usergrpinfo`, `lsb_userinfo`,
//! `lsb_appInfo` (and `lsb_freeAppInfoEnts`), `lsb_parameterinfo`, `lsb_queuecontrol`,
//! `lsb_hostcontrol`, `lsb_reconfig` — what `bqueues`, `bhosts`, `bmgroup`, `bugroup`,
//! `busers`, `bapp`, `bparams` and `badmin` show and do, from the same requests to
//! mbatchd (groups from lsb.hosts and lsb.users, as `bmgroup`/`bugroup` read them).
//!
//! LSF's conventions, kept here:
//! - A query's `char **names` with `*numX` names: `*numX == 0` asks for every one (the
//!   groups: also `GRP_ALL`); `names == NULL` with `*numX == 1` for the default queue
//!   (`lsb_queueinfo`), the local host (`lsb_hostinfo`), the caller (`lsb_userinfo`).
//!   On success `*numX` is the number of entries returned.
//! - A name that is not one: NULL, `lsberrno` `LSBE_BAD_QUEUE`, `LSBE_BAD_HOST` or
//!   `LSBE_BAD_USER`, and `*numX` the index of that name. The group calls return the
//!   groups before the first unknown one (NULL when it is the first) with
//!   `LSBE_BAD_GROUP` and `*numX` its index, as LSF documents; no group configured at
//!   all is `LSBE_NO_HOST_GROUP` / `LSBE_NO_USER_GROUP`.
//! - The returned array is the library's, valid until the next call of the same
//!   function (`lsb_freeAppInfoEnts` releases `lsb_appInfo`'s at once).
//! - Strings are never NULL (`""` when Basalt has nothing to say, as LSF's decoded
//!   replies are); a limit that is not set is `INFINIT_INT` / `INFINIT_FLOAT` (job and
//!   slot limits), `-1` (`rLimits`, `defLimits`, processor limits); a load threshold that
//!   is not set is `INFINIT_LOAD` (`-INFINIT_LOAD` for indices where less is busier);
//!   a number Basalt does not keep is 0.
//! - The control calls go to mbatchd as `badmin` does; who may do what is mbatchd's
//!   decision (`LSBE_PERMISSION` for others).

mod admin;
mod apps;
mod groups;
mod hosts;
mod params;
mod queues;
pub mod structs;
mod users;

pub use structs::*;

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi::{Layout, layout};
use crate::mem::Arena;
use libc::{c_char, c_int};
use std::sync::Mutex;

/// `INFINIT_LOAD` of lsf.h: `(float)(0x7fffffff)`.
pub const INFINIT_LOAD: f32 = 0x7fff_ffff as f32;
/// `INFINIT_FLOAT` of lsf.h.
pub const INFINIT_FLOAT: f32 = 0x7fff_ffff as f32;

/// This module's C structures, for the layout test.
pub fn layouts() -> Vec<Layout> {
    vec![
        layout!(shareAcctInfoEnt: shareAcctPath, shares, priority, numStartJobs, histCpuTime,
            numReserveJobs, runTime, shareAdjustment),
        layout!(apsFactorInfo: name, weight, limit, gracePeriod),
        layout!(apsFactorMap: factorName, subFactorNames),
        layout!(apsLongNameMap: shortName, longName),
        layout!(fsFactors: runTimeFactor, cpuTimeFactor, runJobFactor, histHours,
            committedRunTimeFactor, fairAdjustFactor, enableHistRunTime, enableRunTimeDecay),
        layout!(queueInfoEnt: queue, description, priority, nice, userList, hostList, hostStr,
            nIdx, loadSched, loadStop, userJobLimit, procJobLimit, windows, rLimits, hostSpec,
            qAttrib, qStatus, maxJobs, numJobs, numPEND, numRUN, numSSUSP, numUSUSP, mig,
            schedDelay, acceptIntvl, windowsD, nqsQueues, userShares, defaultHostSpec,
            procLimit, admins, preCmd, postCmd, requeueEValues, hostJobLimit, resReq,
            numRESERVE, slotHoldTime, sndJobsTo, rcvJobsFrom, resumeCond, stopCond, jobStarter,
            suspendActCmd, resumeActCmd, terminateActCmd, sigMap, preemption, maxRschedTime,
            numOfSAccts, shareAccts, chkpntDir, chkpntPeriod, imptJobBklg, defLimits,
            chunkJobSize, minProcLimit, defProcLimit, fairshareQueues, defExtSched,
            mandExtSched, slotShare, slotPool, underRCond, overRCond, idleCond, underRJobs,
            overRJobs, idleJobs, warningTimePeriod, warningAction, qCtrlMsg, acResReq,
            symJobLimit, cpuReq, proAttr, lendLimit, hostReallocInterval, numCPURequired,
            numCPUAllocated, numCPUBorrowed, numCPULent, schGranularity, symTaskGracePeriod,
            minOfSsm, maxOfSsm, numOfAllocSlots, servicePreemption, provisionStatus,
            minTimeSlice, queueGroup, numApsFactors, apsFactorInfoList, apsFactorMaps,
            apsLongNames, maxJobPreempt, maxPreExecRetry, localMaxPreExecRetry, maxJobRequeue,
            usePam, cu_type_exclusive, cu_str_exclusive, resRsvLimit, fairFactors,
            maxSlotsInPool, usePriorityInPool, noPreemptInterval, maxTotalTimePreempt,
            qAttrib2, mockParamA, mockParamB, mockParamC, preemptDelayTime),
        layout!(hostInfoEnt: host, hStatus, busySched, busyStop, cpuFactor, nIdx, load,
            loadSched, loadStop, windows, userJobLimit, maxJobs, numJobs, numRUN, numSSUSP,
            numUSUSP, mig, attr, realLoad, numRESERVE, chkSig, cnsmrUsage, prvdrUsage,
            cnsmrAvail, prvdrAvail, maxAvail, maxExitRate, numExitRate, hCtrlMsg),
        layout!(userShares: user, shares),
        layout!(groupInfoEnt: group, memberList, adminMemberList, numUserShares, userShares,
            hostStr, options, pattern, neg_pattern, cu_type),
        layout!(userInfoEnt: user, procJobLimit, maxJobs, numStartJobs, numJobs, numPEND,
            numRUN, numSSUSP, numUSUSP, numRESERVE, maxPendJobs),
        layout!(appInfoEnt: name, description, numJobs, numPEND, numRUN, numSSUSP, numUSUSP,
            numRESERVE, aAttrib, chunkJobSize, requeueEValues, successEValues, preCmd, postCmd,
            jobStarter, suspendActCmd, resumeActCmd, terminateActCmd, memLimitType, defLimits,
            hostSpec, resReq, maxProcLimit, defProcLimit, minProcLimit, runTime,
            jobIncludePostProc, jobPostProcTimeOut, rTaskGoneAction, djobEnvScript,
            djobRuInterval, djobHbInterval, djobCommfailAction, djobDisabled,
            djobResizeGracePeriod, chkpntDir, chkpntMethod, chkpntPeriod, initChkpntPeriod,
            migThreshold, maxJobPreempt, maxPreExecRetry, localMaxPreExecRetry, maxJobRequeue,
            noPreemptRunTime, noPreemptFinishTime, noPreemptRunTimePercent,
            noPreemptFinishTimePercent, usePam, bindingOption, persistHostOrder,
            resizeNotifyCmd),
        layout!(parameterInfo: defaultQueues, defaultHostSpec, mbatchdInterval,
            sbatchdInterval, jobAcceptInterval, maxDispRetries, maxSbdRetries, preemptPeriod,
            cleanPeriod, maxNumJobs, historyHours, pgSuspendIt, defaultProject, retryIntvl,
            nqsQueuesFlags, nqsRequestsFlags, maxPreExecRetry, localMaxPreExecRetry,
            eventWatchTime, runTimeFactor, waitTimeFactor, runJobFactor, eEventCheckIntvl,
            rusageUpdateRate, rusageUpdatePercent, condCheckTime, maxSbdConnections,
            rschedInterval, maxSchedStay, freshPeriod, preemptFor, adminSuspend,
            userReservation, cpuTimeFactor, fyStart, maxJobArraySize, exceptReplayPeriod,
            jobTerminateInterval, disableUAcctMap, enforceFSProj, enforceProjCheck,
            jobRunTimes, dbDefaultIntval, dbHjobCountIntval, dbQjobCountIntval,
            dbUjobCountIntval, dbJobResUsageIntval, dbLoadIntval, dbJobInfoIntval,
            jobDepLastSub, maxJobNameDep, dbSelectLoad, jobSynJgrp, pjobSpoolDir,
            maxUserPriority, jobPriorityValue, jobPriorityTime, enableAutoAdjust,
            autoAdjustAtNumPend, autoAdjustAtPercent, sharedResourceUpdFactor, scheRawLoad,
            jobAttaDir, maxJobMsgNum, maxJobAttaSize, mbdRefreshTime, updJobRusageInterval,
            sysMapAcct, preExecDelay, updEventUpdateInterval, resourceReservePerSlot,
            maxJobId, preemptResourceList, preemptionWaitTime, maxAcctArchiveNum,
            acctArchiveInDays, acctArchiveInSize, committedRunTimeFactor, enableHistRunTime,
            nqsUpdateInterval, mcbOlmReclaimTimeDelay, chunkJobDuration, sessionInterval,
            publishReasonJobNum, publishReasonInterval, publishReason4AllJobInterval,
            mcUpdPendingReasonInterval, mcUpdPendingReasonPkgSize, noPreemptRunTime,
            noPreemptFinishTime, acctArchiveAt, absoluteRunLimit, lsbExitRateDuration,
            lsbTriggerDuration, maxJobinfoQueryPeriod, jobSubRetryInterval,
            pendingJobThreshold, maxConcurrentJobQuery, minSwitchPeriod,
            condensePendingReasons, slotBasedParallelSched, disableUserJobMovement,
            detectIdleJobAfter, useSymbolPriority, JobPriorityRound, priorityMapping,
            maxInfoDirs, minMbdRefreshTime, enableStopAskingLicenses2LS, expiredTime,
            mbdQueryCPUs, defaultApp, enableStream, streamFile, streamSize,
            syncUpHostStatusWithLIM, defaultSLA, slaTimer, mbdEgoTtl, mbdEgoConnTimeout,
            mbdEgoReadTimeout, mbdUseEgoMXJ, mbdEgoReclaimByQueue, defaultSLAvelocity,
            exitRateTypes, globalJobExitRate, enableJobExitRatePerSlot, enableMetric,
            schMetricsSample, maxApsValue, newjobRefresh, preemptJobType, defaultJgrp,
            jobRunlimitRatio, jobIncludePostproc, jobPostprocTimeout,
            sschedUpdateSummaryInterval, sschedUpdateSummaryByTask, sschedRequeueLimit,
            sschedRetryLimit, sschedMaxTasks, sschedMaxRuntime, sschedAcctDir, jgrpAutoDel,
            maxJobPreempt, maxJobRequeue, noPreemptRunTimePercent, noPreemptFinishTimePercent,
            slotReserveQueueLimit, maxJobPercentagePerSession, useSuspSlots, maxStreamFileNum,
            privilegedUserForceBkill, mcSchedulingEnhance, mcUpdateInterval,
            intersectCandidateHosts, enforceOneUGLimit, logRuntimeESTExceeded,
            computeUnitTypes, fairAdjustFactor, simEnableCpuFactor, extendJobException,
            preExecExitValues, enableRunTimeDecay, advResUserLimit, noPreemptInterval,
            maxTotalTimePreempt, strictUGCtrl, defaultUserGroup, enforceUGTree, mockParamA,
            mockParamB, mockParamC, preemptDelayTime, jobPreprocTimeout, allowEventType,
            runtimeLogInterval, groupPendJobsBy, pendingReasonsExclude, pendingTimeRanking,
            includeDetailReasons, pendingReasonDir),
        layout!(queueCtrlReq: queue, opCode, message),
        layout!(hostCtrlReq: host, opCode, message),
        layout!(mbdCtrlReq: opCode, name, message),
    ]
}

macro_rules! zero_ok {
    ($($t:ident),*) => { $(
        // SAFETY: integers, floats, raw pointers and arrays of them only.
        unsafe impl crate::mem::ZeroOk for $t {}
    )* };
}
zero_ok!(
    shareAcctInfoEnt,
    queueInfoEnt,
    hostInfoEnt,
    userShares,
    groupInfoEnt,
    userInfoEnt,
    appInfoEnt,
    parameterInfo
);

/// An all-zero C structure by value.
fn zero<T: crate::mem::ZeroOk>() -> T {
    *crate::mem::zeroed::<T>()
}

/// The entries one call returned and what they point into.
struct Rows<T> {
    items: Vec<T>,
    _arena: Arena,
}

// SAFETY: the entries point only into their own arena (or to static data), which moves
// with them; the slot holding them is behind a Mutex.
unsafe impl<T> Send for Rows<T> {}

/// Where a function keeps what it returned, until its next call.
pub(crate) struct Slot<T>(Mutex<Option<Rows<T>>>);

impl<T> Slot<T> {
    pub(crate) const fn new() -> Slot<T> {
        Slot(Mutex::new(None))
    }

    /// Keep `items` (and `arena`, which they point into) in place of the last call's;
    /// a pointer to the first (NULL when there is none).
    fn put(&self, items: Vec<T>, arena: Arena) -> *mut T {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let rows = g.insert(Rows {
            items,
            _arena: arena,
        });
        if rows.items.is_empty() {
            std::ptr::null_mut()
        } else {
            rows.items.as_mut_ptr()
        }
    }

    /// Release what the last call returned when `first` points to it; whether it did.
    fn release(&self, first: *const T) -> bool {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let ours = g
            .as_ref()
            .is_some_and(|r| !first.is_null() && std::ptr::eq(r.items.as_ptr(), first));
        if ours {
            *g = None;
        }
        ours
    }
}

/// What a query's `char **names` and `*numX` ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asked {
    /// `*numX == 0`: every one.
    All,
    /// `names == NULL`, `*numX == 1`: the default queue, the local host, the caller.
    Own,
    /// These names, in order.
    Names(Vec<String>),
}

fn bad_arg(what: impl Into<String>) -> Fail {
    Fail::batch(LSBE_BAD_ARG, what)
}

/// Read a query's names.
///
/// # Safety
/// `num` is NULL or points to an int; `names` is NULL or has `*num` elements, each NULL
/// or a NUL-terminated string.
unsafe fn asked(names: *const *mut c_char, num: *const c_int) -> Result<Asked, Fail> {
    // SAFETY: the caller's promise.
    let Some(&n) = (unsafe { num.as_ref() }) else {
        return Err(bad_arg("the count of names is a NULL pointer"));
    };
    if n < 0 {
        return Err(bad_arg(format!("the count of names is {n}")));
    }
    if n == 0 {
        return Ok(Asked::All);
    }
    if names.is_null() {
        return if n == 1 {
            Ok(Asked::Own)
        } else {
            Err(bad_arg(format!("no names given for a count of {n}")))
        };
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        // SAFETY: within the caller's `n` elements.
        match unsafe { crate::mem::opt_str(*names.add(i)) } {
            Some(s) => out.push(s),
            None => return Err(bad_arg(format!("name {i} is a NULL pointer"))),
        }
    }
    Ok(Asked::Names(out))
}

/// Set `*num` (when `num` is not NULL).
///
/// # Safety
/// `num` is NULL or points to an int.
unsafe fn set_count(num: *mut c_int, n: usize) {
    // SAFETY: the caller's promise.
    if let Some(p) = unsafe { num.as_mut() } {
        *p = c_int::try_from(n).unwrap_or(c_int::MAX);
    }
}

/// The index in `asked` of the first name `unknown` lists, with that name.
fn first_unknown(asked: &[String], unknown: &[String]) -> Option<(usize, String)> {
    asked
        .iter()
        .enumerate()
        .find(|(_, n)| unknown.contains(n))
        .map(|(i, n)| (i, n.clone()))
}

/// A refusal mbatchd gave as text (a control result): LSF's code for it.
fn fail_from_text(text: &str) -> Fail {
    let text = text.trim().trim_end_matches('.');
    match crate::errtab::LSBE.iter().find(|e| e.message == text) {
        Some(e) => Fail::batch(e.value, ""),
        None => Fail::from_status(&tonic::Status::failed_precondition(text)),
    }
}

/// `n` for C, `INFINIT_INT` when negative (no limit) or too large.
fn limit_int(n: i64) -> c_int {
    if n < 0 {
        INFINIT_INT
    } else {
        c_int::try_from(n).unwrap_or(INFINIT_INT)
    }
}

/// `n` for C, saturating.
fn int(n: impl TryInto<c_int>) -> c_int {
    n.try_into().unwrap_or(c_int::MAX)
}

/// Is `name` a user of this system (the password database)?
fn system_user(name: &str) -> bool {
    matches!(nix::unistd::User::from_name(name), Ok(Some(_)))
}

/// The batch configuration as the commands read it (groups, users): lsb.* under
/// `LSF_ENVDIR`, read afresh.
fn batch_config() -> Result<basalt_config::Config, Fail> {
    let envdir = basalt_runtime::envdir();
    basalt_config::load(&envdir)
        .map(|l| l.config)
        .map_err(|e| Fail::batch(LSBE_CONF_FATAL, format!("{}: {e}", envdir.display())))
}

/// Is `name` a user of the system or a user group of lsb.users?
fn user_known(name: &str) -> bool {
    system_user(name)
        || batch_config().is_ok_and(|c| c.batch.user_groups.iter().any(|g| g.name == name))
}

/// The load index names `nIdx` counts: the built-in ones in LSF's order, then `extra`
/// (external indices) sorted, each once.
fn index_names<'a>(extra: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut names: Vec<String> = basalt_core::BUILTIN_INDICES
        .iter()
        .map(|i| i.name().to_owned())
        .collect();
    let mut ext: Vec<String> = extra
        .filter(|n| basalt_core::LoadIndex::from_name(n).is_none())
        .cloned()
        .collect();
    ext.sort();
    ext.dedup();
    names.extend(ext);
    names
}

/// Does a larger value of index `name` mean a busier host? (the built-in ones as LSF;
/// an external one as lsf.shared's INCREASING says, else yes).
fn increasing(name: &str, config: Option<&basalt_config::Config>) -> bool {
    match basalt_core::LoadIndex::from_name(name) {
        Some(i) => i.increasing(),
        None => config
            .and_then(|c| c.shared.resource(name))
            .and_then(|r| r.increasing)
            .unwrap_or(true),
    }
}

/// A threshold vector over `names`: the values `set` gives, else "not set"
/// (`INFINIT_LOAD`, `-INFINIT_LOAD` where less is busier).
fn thresholds<'a>(
    names: &[String],
    set: impl Fn(&str) -> Option<&'a f64>,
    config: Option<&basalt_config::Config>,
) -> Vec<f32> {
    names
        .iter()
        .map(|n| match set(n) {
            Some(v) => *v as f32,
            None if increasing(n, config) => INFINIT_LOAD,
            None => -INFINIT_LOAD,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_count_and_null_follow_lsfs_rules() {
        let mut n = 0;
        // SAFETY: a valid count and no names.
        assert_eq!(
            unsafe { asked(std::ptr::null(), &n) },
            Ok(Asked::All),
            "count 0: all"
        );
        n = 1;
        // SAFETY: as above.
        assert_eq!(unsafe { asked(std::ptr::null(), &n) }, Ok(Asked::Own));
        n = 2;
        // SAFETY: as above.
        assert!(matches!(
            unsafe { asked(std::ptr::null(), &n) },
            Err(Fail::Batch(c, _)) if c == LSBE_BAD_ARG
        ));
        let a = crate::mem::cstring("normal");
        let b = crate::mem::cstring("idle");
        let v = [a.as_ptr() as *mut c_char, b.as_ptr() as *mut c_char];
        // SAFETY: two valid strings.
        assert_eq!(
            unsafe { asked(v.as_ptr(), &n) },
            Ok(Asked::Names(vec!["normal".into(), "idle".into()]))
        );
        let with_null = [a.as_ptr() as *mut c_char, std::ptr::null_mut()];
        // SAFETY: two elements, one NULL.
        assert!(unsafe { asked(with_null.as_ptr(), &n) }.is_err());
        n = -1;
        // SAFETY: a valid count.
        assert!(unsafe { asked(v.as_ptr(), &n) }.is_err());
        // SAFETY: NULL count pointer.
        assert!(unsafe { asked(v.as_ptr(), std::ptr::null()) }.is_err());
    }

    #[test]
    fn the_first_unknown_name_is_found_by_its_position() {
        let asked = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        assert_eq!(
            first_unknown(&asked, &["c".into(), "b".into()]),
            Some((1, "b".into()))
        );
        assert_eq!(first_unknown(&asked, &[]), None);
    }

    #[test]
    fn control_refusals_become_lsf_codes() {
        for (text, code) in [
            ("User permission denied", LSBE_PERMISSION),
            ("Queue does not exist", LSBE_BAD_QUEUE),
            (
                "Bad host name, host group name or cluster name",
                LSBE_BAD_HOST,
            ),
        ] {
            assert!(
                matches!(fail_from_text(text), Fail::Batch(c, _) if c == code),
                "{text}"
            );
        }
    }

    #[test]
    fn unset_thresholds_are_infinite_in_the_busy_direction() {
        let names = index_names([&"gpu".to_owned()].into_iter());
        assert_eq!(names.len(), 12);
        assert_eq!(names[0], "r15s");
        assert_eq!(names[11], "gpu");
        let set: std::collections::HashMap<String, f64> = [("r1m".to_owned(), 0.5)].into();
        let t = thresholds(&names, |n| set.get(n), None);
        assert_eq!(t[R1M as usize], 0.5);
        assert_eq!(t[R15S as usize], INFINIT_LOAD);
        assert_eq!(t[MEM as usize], -INFINIT_LOAD);
        assert_eq!(t[11], INFINIT_LOAD);
        assert_eq!(limit_int(-1), INFINIT_INT);
        assert_eq!(limit_int(7), 7);
    }
}
