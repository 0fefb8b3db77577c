//! The C structures of the header's events section (`include/lsf/lsbatch.h`, between
//! `/* Events: begin */` and `/* Events: end */`), field for field: LSF's
//! `struct eventRec`, `union eventLog` and one structure per record type.

#![allow(non_camel_case_types, non_snake_case)]

use crate::ffi::{
    LSF_RLIM_NLIMITS, Layout, MAXHOSTNAMELEN, MAXLSFNAMELEN, layout, loadIndexLog, xFile,
};
use libc::{c_char, c_float, c_int, c_void, time_t};
use std::mem::ManuallyDrop;

pub const MAX_VERSION_LEN: usize = 12;
pub const MAX_LSB_NAME_LEN: usize = 60;
pub const MAXLINELEN: usize = 512;

/// `struct lsfRusage`: times in seconds, sizes in KB, -1 when not known.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct lsfRusage {
    pub ru_utime: f64,
    pub ru_stime: f64,
    pub ru_maxrss: f64,
    pub ru_ixrss: f64,
    pub ru_ismrss: f64,
    pub ru_idrss: f64,
    pub ru_isrss: f64,
    pub ru_minflt: f64,
    pub ru_majflt: f64,
    pub ru_nswap: f64,
    pub ru_inblock: f64,
    pub ru_oublock: f64,
    pub ru_ioch: f64,
    pub ru_msgsnd: f64,
    pub ru_msgrcv: f64,
    pub ru_nsignals: f64,
    pub ru_nvcsw: f64,
    pub ru_nivcsw: f64,
    pub ru_exutime: f64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobNewLog {
    pub jobId: c_int,
    pub userId: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub options: c_int,
    pub options2: c_int,
    pub numProcessors: c_int,
    pub submitTime: time_t,
    pub beginTime: time_t,
    pub termTime: time_t,
    pub sigValue: c_int,
    pub chkpntPeriod: c_int,
    pub restartPid: c_int,
    pub rLimits: [c_int; LSF_RLIM_NLIMITS],
    pub hostSpec: [c_char; MAXHOSTNAMELEN],
    pub hostFactor: c_float,
    pub umask: c_int,
    pub queue: [c_char; MAX_LSB_NAME_LEN],
    pub resReq: *mut c_char,
    pub fromHost: [c_char; MAXHOSTNAMELEN],
    pub cwd: *mut c_char,
    pub chkpntDir: *mut c_char,
    pub inFile: *mut c_char,
    pub outFile: *mut c_char,
    pub errFile: *mut c_char,
    pub inFileSpool: *mut c_char,
    pub commandSpool: *mut c_char,
    pub jobSpoolDir: *mut c_char,
    pub subHomeDir: *mut c_char,
    pub jobFile: *mut c_char,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
    pub dependCond: *mut c_char,
    pub timeEvent: *mut c_char,
    pub jobName: *mut c_char,
    pub command: *mut c_char,
    pub nxf: c_int,
    pub xf: *mut xFile,
    pub preExecCmd: *mut c_char,
    pub mailUser: *mut c_char,
    pub projectName: *mut c_char,
    pub niosPort: c_int,
    pub maxNumProcessors: c_int,
    pub schedHostType: *mut c_char,
    pub loginShell: *mut c_char,
    pub userGroup: *mut c_char,
    pub exceptList: *mut c_char,
    pub idx: c_int,
    pub userPriority: c_int,
    pub rsvId: *mut c_char,
    pub jobGroup: *mut c_char,
    pub extsched: *mut c_char,
    pub warningTimePeriod: c_int,
    pub warningAction: *mut c_char,
    pub sla: *mut c_char,
    pub SLArunLimit: c_int,
    pub licenseProject: *mut c_char,
    pub options3: c_int,
    pub app: *mut c_char,
    pub postExecCmd: *mut c_char,
    pub runtimeEstimation: c_int,
    pub requeueEValues: *mut c_char,
    pub initChkpntPeriod: c_int,
    pub migThreshold: c_int,
    pub notifyCmd: *mut c_char,
    pub jobDescription: *mut c_char,
    pub submitExt: *mut c_void,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub options4: c_int,
    pub numAskedClusters: c_int,
    pub askedClusters: *mut *mut c_char,
    pub flow_id: *mut c_char,
    pub subcwd: *mut c_char,
    pub outdir: *mut c_char,
    pub dcTmpls: *mut c_char,
    pub dcVmActions: *mut c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobModLog {
    pub jobIdStr: *mut c_char,
    pub options: c_int,
    pub options2: c_int,
    pub delOptions: c_int,
    pub delOptions2: c_int,
    pub userId: c_int,
    pub userName: *mut c_char,
    pub submitTime: c_int,
    pub umask: c_int,
    pub numProcessors: c_int,
    pub beginTime: c_int,
    pub termTime: c_int,
    pub sigValue: c_int,
    pub restartPid: c_int,
    pub jobName: *mut c_char,
    pub queue: *mut c_char,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
    pub resReq: *mut c_char,
    pub rLimits: [c_int; LSF_RLIM_NLIMITS],
    pub hostSpec: *mut c_char,
    pub dependCond: *mut c_char,
    pub timeEvent: *mut c_char,
    pub subHomeDir: *mut c_char,
    pub inFile: *mut c_char,
    pub outFile: *mut c_char,
    pub errFile: *mut c_char,
    pub command: *mut c_char,
    pub inFileSpool: *mut c_char,
    pub commandSpool: *mut c_char,
    pub chkpntPeriod: c_int,
    pub chkpntDir: *mut c_char,
    pub nxf: c_int,
    pub xf: *mut xFile,
    pub jobFile: *mut c_char,
    pub fromHost: *mut c_char,
    pub cwd: *mut c_char,
    pub preExecCmd: *mut c_char,
    pub mailUser: *mut c_char,
    pub projectName: *mut c_char,
    pub niosPort: c_int,
    pub maxNumProcessors: c_int,
    pub loginShell: *mut c_char,
    pub schedHostType: *mut c_char,
    pub userGroup: *mut c_char,
    pub exceptList: *mut c_char,
    pub userPriority: c_int,
    pub rsvId: *mut c_char,
    pub extsched: *mut c_char,
    pub warningTimePeriod: c_int,
    pub warningAction: *mut c_char,
    pub jobGroup: *mut c_char,
    pub sla: *mut c_char,
    pub licenseProject: *mut c_char,
    pub options3: c_int,
    pub delOptions3: c_int,
    pub app: *mut c_char,
    pub apsString: *mut c_char,
    pub postExecCmd: *mut c_char,
    pub runtimeEstimation: c_int,
    pub requeueEValues: *mut c_char,
    pub initChkpntPeriod: c_int,
    pub migThreshold: c_int,
    pub notifyCmd: *mut c_char,
    pub jobDescription: *mut c_char,
    pub submitExt: *mut c_void,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub options4: c_int,
    pub delOptions4: c_int,
    pub numAskedClusters: c_int,
    pub askedClusters: *mut *mut c_char,
    pub rmtJobCtrlStage: c_int,
    pub numRmtCtrlResult: c_int,
    pub rmtCtrlResult: *mut c_void,
    pub outdir: *mut c_char,
    pub dcTmpls: *mut c_char,
    pub dcVmActions: *mut c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobStartLog {
    pub jobId: c_int,
    pub jStatus: c_int,
    pub jobPid: c_int,
    pub jobPGid: c_int,
    pub hostFactor: c_float,
    pub numExHosts: c_int,
    pub execHosts: *mut *mut c_char,
    pub queuePreCmd: *mut c_char,
    pub queuePostCmd: *mut c_char,
    pub jFlags: c_int,
    pub userGroup: *mut c_char,
    pub idx: c_int,
    pub additionalInfo: *mut c_char,
    pub duration4PreemptBackfill: c_int,
    pub jFlags2: c_int,
    pub effectiveResReq: *mut c_char,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub num_network: c_int,
    pub networkAlloc: *mut c_void,
    pub affinity: *mut c_void,
    pub nextStatusNo: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobStartAcceptLog {
    pub jobId: c_int,
    pub jobPid: c_int,
    pub jobPGid: c_int,
    pub idx: c_int,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub nextStatusNo: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobExecuteLog {
    pub jobId: c_int,
    pub execUid: c_int,
    pub execHome: *mut c_char,
    pub execCwd: *mut c_char,
    pub jobPGid: c_int,
    pub execUsername: *mut c_char,
    pub jobPid: c_int,
    pub idx: c_int,
    pub additionalInfo: *mut c_char,
    pub SLAscaledRunLimit: c_int,
    pub position: c_int,
    pub execRusage: *mut c_char,
    pub duration4PreemptBackfill: c_int,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub outdir: *mut c_char,
    pub nextStatusNo: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobStatusLog {
    pub jobId: c_int,
    pub jStatus: c_int,
    pub reason: c_int,
    pub subreasons: c_int,
    pub cpuTime: c_float,
    pub endTime: time_t,
    pub ru: c_int,
    pub lsfRusage: lsfRusage,
    pub jFlags: c_int,
    pub exitStatus: c_int,
    pub idx: c_int,
    pub exitInfo: c_int,
    pub numhRusages: c_int,
    pub hostRusage: *mut c_void,
    pub maxMem: c_int,
    pub avgMem: c_int,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub maskedJStatus: c_int,
    pub nextStatusNo: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobSwitchLog {
    pub userId: c_int,
    pub jobId: c_int,
    pub queue: [c_char; MAX_LSB_NAME_LEN],
    pub idx: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub rmtJobCtrlStage: c_int,
    pub numRmtCtrlResult: c_int,
    pub rmtCtrlResult: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobMoveLog {
    pub userId: c_int,
    pub jobId: c_int,
    pub position: c_int,
    pub base: c_int,
    pub idx: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub rmtJobCtrlStage: c_int,
    pub numRmtCtrlResult: c_int,
    pub rmtCtrlResult: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct chkpntLog {
    pub jobId: c_int,
    pub period: time_t,
    pub pid: c_int,
    pub ok: c_int,
    pub flags: c_int,
    pub idx: c_int,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobRequeueLog {
    pub jobId: c_int,
    pub idx: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobCleanLog {
    pub jobId: c_int,
    pub idx: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct sigactLog {
    pub jobId: c_int,
    pub period: time_t,
    pub pid: c_int,
    pub jStatus: c_int,
    pub reasons: c_int,
    pub flags: c_int,
    pub signalSymbol: *mut c_char,
    pub actStatus: c_int,
    pub idx: c_int,
    pub rmtJobCtrlStage: c_int,
    pub numRmtCtrlResult: c_int,
    pub rmtCtrlResult: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct migLog {
    pub jobId: c_int,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
    pub userId: c_int,
    pub idx: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub sigFlag: c_int,
    pub acAction: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct signalLog {
    pub userId: c_int,
    pub jobId: c_int,
    pub signalSymbol: *mut c_char,
    pub runCount: c_int,
    pub idx: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct queueCtrlLog {
    pub opCode: c_int,
    pub queue: [c_char; MAX_LSB_NAME_LEN],
    pub userId: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub message: [c_char; MAXLINELEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct hostCtrlLog {
    pub opCode: c_int,
    pub host: [c_char; MAXHOSTNAMELEN],
    pub userId: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub message: [c_char; MAXLINELEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbdStartLog {
    pub master: [c_char; MAXHOSTNAMELEN],
    pub cluster: [c_char; MAXLSFNAMELEN],
    pub numHosts: c_int,
    pub numQueues: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbdDieLog {
    pub master: [c_char; MAXHOSTNAMELEN],
    pub numRemoveJobs: c_int,
    pub exitCode: c_int,
    pub message: [c_char; MAXLINELEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobFinishLog {
    pub jobId: c_int,
    pub userId: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub options: c_int,
    pub numProcessors: c_int,
    pub jStatus: c_int,
    pub submitTime: time_t,
    pub beginTime: time_t,
    pub termTime: time_t,
    pub startTime: time_t,
    pub endTime: time_t,
    pub queue: [c_char; MAX_LSB_NAME_LEN],
    pub resReq: *mut c_char,
    pub fromHost: [c_char; MAXHOSTNAMELEN],
    pub cwd: *mut c_char,
    pub inFile: *mut c_char,
    pub outFile: *mut c_char,
    pub errFile: *mut c_char,
    pub inFileSpool: *mut c_char,
    pub commandSpool: *mut c_char,
    pub jobFile: *mut c_char,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
    pub hostFactor: c_float,
    pub numExHosts: c_int,
    pub execHosts: *mut *mut c_char,
    pub cpuTime: c_float,
    pub jobName: *mut c_char,
    pub command: *mut c_char,
    pub lsfRusage: lsfRusage,
    pub dependCond: *mut c_char,
    pub timeEvent: *mut c_char,
    pub preExecCmd: *mut c_char,
    pub mailUser: *mut c_char,
    pub projectName: *mut c_char,
    pub exitStatus: c_int,
    pub maxNumProcessors: c_int,
    pub loginShell: *mut c_char,
    pub idx: c_int,
    pub maxRMem: c_int,
    pub maxRSwap: c_int,
    pub rsvId: *mut c_char,
    pub sla: *mut c_char,
    pub exceptMask: c_int,
    pub additionalInfo: *mut c_char,
    pub exitInfo: c_int,
    pub warningTimePeriod: c_int,
    pub warningAction: *mut c_char,
    pub chargedSAAP: *mut c_char,
    pub licenseProject: *mut c_char,
    pub app: *mut c_char,
    pub postExecCmd: *mut c_char,
    pub runtimeEstimation: c_int,
    pub jgroup: *mut c_char,
    pub options2: c_int,
    pub requeueEValues: *mut c_char,
    pub notifyCmd: *mut c_char,
    pub lastResizeTime: time_t,
    pub jobDescription: *mut c_char,
    pub submitExt: *mut c_void,
    pub numhRusages: c_int,
    pub hostRusage: *mut c_void,
    pub avgMem: c_int,
    pub effectiveResReq: *mut c_char,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
    pub forwardTime: time_t,
    pub runLimit: c_int,
    pub options3: c_int,
    pub flow_id: *mut c_char,
    pub acJobWaitTime: c_int,
    pub totalProvisionTime: c_int,
    pub outdir: *mut c_char,
    pub runTime: c_int,
    pub subcwd: *mut c_char,
    pub num_network: c_int,
    pub networkAlloc: *mut c_void,
    pub affinity: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobForwardLog {
    pub jobId: c_int,
    pub cluster: *mut c_char,
    pub numReserHosts: c_int,
    pub reserHosts: *mut *mut c_char,
    pub idx: c_int,
    pub jobRmtAttr: c_int,
    pub srcCluster: *mut c_char,
    pub srcJobId: i64,
    pub dstJobId: i64,
    pub effectiveResReq: *mut c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobAcceptLog {
    pub jobId: c_int,
    pub remoteJid: i64,
    pub cluster: *mut c_char,
    pub idx: c_int,
    pub jobRmtAttr: c_int,
    pub dstCluster: *mut c_char,
    pub dstJobId: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct jobForceRequestLog {
    pub userId: c_int,
    pub numExecHosts: c_int,
    pub execHosts: *mut *mut c_char,
    pub jobId: c_int,
    pub idx: c_int,
    pub options: c_int,
    pub userName: [c_char; MAX_LSB_NAME_LEN],
    pub queue: *mut c_char,
    pub rmtJobCtrlStage: c_int,
    pub numRmtCtrlResult: c_int,
    pub rmtCtrlResult: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct logSwitchLog {
    pub lastJobId: c_int,
}

/// `union eventLog` (`loadIndexLog`, declared elsewhere without `Copy`, is held in a
/// `ManuallyDrop`, which has the same layout).
#[repr(C)]
pub union eventLog {
    pub jobNewLog: jobNewLog,
    pub jobStartLog: jobStartLog,
    pub jobStatusLog: jobStatusLog,
    pub jobSwitchLog: jobSwitchLog,
    pub jobMoveLog: jobMoveLog,
    pub queueCtrlLog: queueCtrlLog,
    pub hostCtrlLog: hostCtrlLog,
    pub mbdStartLog: mbdStartLog,
    pub mbdDieLog: mbdDieLog,
    pub jobFinishLog: jobFinishLog,
    pub loadIndexLog: ManuallyDrop<loadIndexLog>,
    pub migLog: migLog,
    pub jobForwardLog: jobForwardLog,
    pub jobAcceptLog: jobAcceptLog,
    pub signalLog: signalLog,
    pub jobExecuteLog: jobExecuteLog,
    pub jobRequeueLog: jobRequeueLog,
    pub chkpntLog: chkpntLog,
    pub sigactLog: sigactLog,
    pub jobStartAcceptLog: jobStartAcceptLog,
    pub jobCleanLog: jobCleanLog,
    pub jobForceRequestLog: jobForceRequestLog,
    pub logSwitchLog: logSwitchLog,
    pub jobModLog: jobModLog,
}

/// `struct eventRec` (`type` is a Rust keyword: the field is `r#type`).
#[repr(C)]
pub struct eventRec {
    pub version: [c_char; MAX_VERSION_LEN],
    pub r#type: c_int,
    pub eventTime: time_t,
    pub eventLog: eventLog,
}

macro_rules! zero_ok {
    ($($t:ident),*) => { $(
        // SAFETY: integers, floats, raw pointers, arrays of them and unions of such
        // structures only: all-zero bytes are a valid value (0, 0.0, NULL).
        unsafe impl crate::mem::ZeroOk for $t {}
    )* };
}
zero_ok!(
    eventRec,
    lsfRusage,
    jobNewLog,
    jobModLog,
    jobStartLog,
    jobStartAcceptLog,
    jobExecuteLog,
    jobStatusLog,
    jobSwitchLog,
    jobMoveLog,
    chkpntLog,
    jobRequeueLog,
    jobCleanLog,
    sigactLog,
    migLog,
    signalLog,
    queueCtrlLog,
    hostCtrlLog,
    mbdStartLog,
    mbdDieLog,
    jobFinishLog,
    jobForwardLog,
    jobAcceptLog,
    jobForceRequestLog,
    logSwitchLog
);

/// The events section's structures, for the layout test. `union eventLog` is checked
/// through `eventRec` (its size and offset there); every member starts at 0.
pub fn layouts() -> Vec<Layout> {
    vec![
        layout!(lsfRusage: ru_utime, ru_stime, ru_maxrss, ru_ixrss, ru_ismrss, ru_idrss,
            ru_isrss, ru_minflt, ru_majflt, ru_nswap, ru_inblock, ru_oublock, ru_ioch,
            ru_msgsnd, ru_msgrcv, ru_nsignals, ru_nvcsw, ru_nivcsw, ru_exutime),
        layout!(jobNewLog: jobId, userId, userName, options, options2, numProcessors,
            submitTime, beginTime, termTime, sigValue, chkpntPeriod, restartPid, rLimits,
            hostSpec, hostFactor, umask, queue, resReq, fromHost, cwd, chkpntDir, inFile,
            outFile, errFile, inFileSpool, commandSpool, jobSpoolDir, subHomeDir, jobFile,
            numAskedHosts, askedHosts, dependCond, timeEvent, jobName, command, nxf, xf,
            preExecCmd, mailUser, projectName, niosPort, maxNumProcessors, schedHostType,
            loginShell, userGroup, exceptList, idx, userPriority, rsvId, jobGroup, extsched,
            warningTimePeriod, warningAction, sla, SLArunLimit, licenseProject, options3,
            app, postExecCmd, runtimeEstimation, requeueEValues, initChkpntPeriod,
            migThreshold, notifyCmd, jobDescription, submitExt, srcCluster, srcJobId,
            dstCluster, dstJobId, options4, numAskedClusters, askedClusters, flow_id, subcwd,
            outdir, dcTmpls, dcVmActions),
        layout!(jobModLog: jobIdStr, options, options2, delOptions, delOptions2, userId,
            userName, submitTime, umask, numProcessors, beginTime, termTime, sigValue,
            restartPid, jobName, queue, numAskedHosts, askedHosts, resReq, rLimits, hostSpec,
            dependCond, timeEvent, subHomeDir, inFile, outFile, errFile, command, inFileSpool,
            commandSpool, chkpntPeriod, chkpntDir, nxf, xf, jobFile, fromHost, cwd,
            preExecCmd, mailUser, projectName, niosPort, maxNumProcessors, loginShell,
            schedHostType, userGroup, exceptList, userPriority, rsvId, extsched,
            warningTimePeriod, warningAction, jobGroup, sla, licenseProject, options3,
            delOptions3, app, apsString, postExecCmd, runtimeEstimation, requeueEValues,
            initChkpntPeriod, migThreshold, notifyCmd, jobDescription, submitExt, srcCluster,
            srcJobId, dstCluster, dstJobId, options4, delOptions4, numAskedClusters,
            askedClusters, rmtJobCtrlStage, numRmtCtrlResult, rmtCtrlResult, outdir, dcTmpls,
            dcVmActions),
        layout!(jobStartLog: jobId, jStatus, jobPid, jobPGid, hostFactor, numExHosts,
            execHosts, queuePreCmd, queuePostCmd, jFlags, userGroup, idx, additionalInfo,
            duration4PreemptBackfill, jFlags2, effectiveResReq, srcCluster, srcJobId,
            dstCluster, dstJobId, num_network, networkAlloc, affinity, nextStatusNo),
        layout!(jobStartAcceptLog: jobId, jobPid, jobPGid, idx, srcCluster, srcJobId,
            dstCluster, dstJobId, nextStatusNo),
        layout!(jobExecuteLog: jobId, execUid, execHome, execCwd, jobPGid, execUsername,
            jobPid, idx, additionalInfo, SLAscaledRunLimit, position, execRusage,
            duration4PreemptBackfill, srcCluster, srcJobId, dstCluster, dstJobId, outdir,
            nextStatusNo),
        layout!(jobStatusLog: jobId, jStatus, reason, subreasons, cpuTime, endTime, ru,
            lsfRusage, jFlags, exitStatus, idx, exitInfo, numhRusages, hostRusage, maxMem,
            avgMem, srcCluster, srcJobId, dstCluster, dstJobId, maskedJStatus, nextStatusNo),
        layout!(jobSwitchLog: userId, jobId, queue, idx, userName, srcCluster, srcJobId,
            dstCluster, dstJobId, rmtJobCtrlStage, numRmtCtrlResult, rmtCtrlResult),
        layout!(jobMoveLog: userId, jobId, position, base, idx, userName, rmtJobCtrlStage,
            numRmtCtrlResult, rmtCtrlResult),
        layout!(chkpntLog: jobId, period, pid, ok, flags, idx, srcCluster, srcJobId,
            dstCluster, dstJobId),
        layout!(jobRequeueLog: jobId, idx),
        layout!(jobCleanLog: jobId, idx),
        layout!(sigactLog: jobId, period, pid, jStatus, reasons, flags, signalSymbol,
            actStatus, idx, rmtJobCtrlStage, numRmtCtrlResult, rmtCtrlResult),
        layout!(migLog: jobId, numAskedHosts, askedHosts, userId, idx, userName, srcCluster,
            srcJobId, dstCluster, dstJobId, sigFlag, acAction),
        layout!(signalLog: userId, jobId, signalSymbol, runCount, idx, userName, srcCluster,
            srcJobId, dstCluster, dstJobId),
        layout!(queueCtrlLog: opCode, queue, userId, userName, message),
        layout!(hostCtrlLog: opCode, host, userId, userName, message),
        layout!(mbdStartLog: master, cluster, numHosts, numQueues),
        layout!(mbdDieLog: master, numRemoveJobs, exitCode, message),
        layout!(jobFinishLog: jobId, userId, userName, options, numProcessors, jStatus,
            submitTime, beginTime, termTime, startTime, endTime, queue, resReq, fromHost, cwd,
            inFile, outFile, errFile, inFileSpool, commandSpool, jobFile, numAskedHosts,
            askedHosts, hostFactor, numExHosts, execHosts, cpuTime, jobName, command,
            lsfRusage, dependCond, timeEvent, preExecCmd, mailUser, projectName, exitStatus,
            maxNumProcessors, loginShell, idx, maxRMem, maxRSwap, rsvId, sla, exceptMask,
            additionalInfo, exitInfo, warningTimePeriod, warningAction, chargedSAAP,
            licenseProject, app, postExecCmd, runtimeEstimation, jgroup, options2,
            requeueEValues, notifyCmd, lastResizeTime, jobDescription, submitExt, numhRusages,
            hostRusage, avgMem, effectiveResReq, srcCluster, srcJobId, dstCluster, dstJobId,
            forwardTime, runLimit, options3, flow_id, acJobWaitTime, totalProvisionTime,
            outdir, runTime, subcwd, num_network, networkAlloc, affinity),
        layout!(jobForwardLog: jobId, cluster, numReserHosts, reserHosts, idx, jobRmtAttr,
            srcCluster, srcJobId, dstJobId, effectiveResReq),
        layout!(jobAcceptLog: jobId, remoteJid, cluster, idx, jobRmtAttr, dstCluster,
            dstJobId),
        layout!(jobForceRequestLog: userId, numExecHosts, execHosts, jobId, idx, options,
            userName, queue, rmtJobCtrlStage, numRmtCtrlResult, rmtCtrlResult),
        layout!(logSwitchLog: lastJobId),
        (
            "eventRec",
            std::mem::size_of::<eventRec>(),
            vec![
                ("version", std::mem::offset_of!(eventRec, version)),
                ("type", std::mem::offset_of!(eventRec, r#type)),
                ("eventTime", std::mem::offset_of!(eventRec, eventTime)),
                ("eventLog", std::mem::offset_of!(eventRec, eventLog)),
            ],
        ),
    ]
}
