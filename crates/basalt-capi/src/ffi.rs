//! The C structures of `include/lsf/lsf.h` and `lsbatch.h`, field for field
//! (`#[repr(C)]`); `tests/c_layout.rs` compiles the headers and checks every size and
//! offset against these.

#![allow(non_camel_case_types, non_snake_case)]

use libc::{c_char, c_float, c_int, c_long, c_ushort, c_void, time_t};

pub const MAXHOSTNAMELEN: usize = 64;
pub const MAXLSFNAMELEN: usize = 40;
pub const MAXRESDESLEN: usize = 256;
pub const MAXTYPES: usize = 128;
pub const MAXMODELS: usize = 128;
pub const LSF_RLIM_NLIMITS: usize = 12;
pub const NUM_JGRP_COUNTERS: usize = 11;

#[repr(C)]
pub struct hostInfo {
    pub hostName: [c_char; MAXHOSTNAMELEN],
    pub hostType: *mut c_char,
    pub hostModel: *mut c_char,
    pub cpuFactor: c_float,
    pub maxCpus: c_int,
    pub maxMem: c_int,
    pub maxSwap: c_int,
    pub maxTmp: c_int,
    pub nDisks: c_int,
    pub nRes: c_int,
    pub resources: *mut *mut c_char,
    pub nDRes: c_int,
    pub DResources: *mut *mut c_char,
    pub windows: *mut c_char,
    pub numIndx: c_int,
    pub busyThreshold: *mut c_float,
    pub isServer: c_char,
    pub licensed: c_char,
    pub rexPriority: c_int,
    pub licFeaturesNeeded: c_int,
    pub licClass: c_int,
    pub cores: c_int,
    pub hostAddr: *mut c_char,
    pub pprocs: c_int,
    pub cores_per_proc: c_int,
    pub threads_per_core: c_int,
}

#[repr(C)]
pub struct hostLoad {
    pub hostName: [c_char; MAXHOSTNAMELEN],
    pub status: *mut c_int,
    pub li: *mut c_float,
}

#[repr(C)]
pub struct resItem {
    pub name: [c_char; MAXLSFNAMELEN],
    pub des: [c_char; MAXRESDESLEN],
    pub valueType: c_int,
    pub orderType: c_int,
    pub flags: c_int,
    pub interval: c_int,
}

#[repr(C)]
pub struct lsInfo {
    pub nRes: c_int,
    pub resTable: *mut resItem,
    pub nTypes: c_int,
    pub hostTypes: [[c_char; MAXLSFNAMELEN]; MAXTYPES],
    pub nModels: c_int,
    pub hostModels: [[c_char; MAXLSFNAMELEN]; MAXMODELS],
    pub hostArchs: [[c_char; MAXLSFNAMELEN]; MAXMODELS],
    pub modelRefs: [c_int; MAXMODELS],
    pub cpuFactor: [c_float; MAXMODELS],
    pub numIndx: c_int,
    pub numUsrIndx: c_int,
}

#[repr(C)]
pub struct config_param {
    pub paramName: *mut c_char,
    pub paramValue: *mut c_char,
}

#[repr(C)]
pub struct xFile {
    pub subFn: *mut c_char,
    pub execFn: *mut c_char,
    pub options: c_int,
}

#[repr(C)]
pub struct submit {
    pub options: c_int,
    pub options2: c_int,
    pub jobName: *mut c_char,
    pub queue: *mut c_char,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
    pub resReq: *mut c_char,
    pub rLimits: [c_int; LSF_RLIM_NLIMITS],
    pub hostSpec: *mut c_char,
    pub numProcessors: c_int,
    pub dependCond: *mut c_char,
    pub timeEvent: *mut c_char,
    pub beginTime: time_t,
    pub termTime: time_t,
    pub sigValue: c_int,
    pub inFile: *mut c_char,
    pub outFile: *mut c_char,
    pub errFile: *mut c_char,
    pub command: *mut c_char,
    pub newCommand: *mut c_char,
    pub chkpntPeriod: time_t,
    pub chkpntDir: *mut c_char,
    pub nxf: c_int,
    pub xf: *mut xFile,
    pub preExecCmd: *mut c_char,
    pub mailUser: *mut c_char,
    pub delOptions: c_int,
    pub delOptions2: c_int,
    pub projectName: *mut c_char,
    pub maxNumProcessors: c_int,
    pub loginShell: *mut c_char,
    pub userGroup: *mut c_char,
    pub exceptList: *mut c_char,
    pub userPriority: c_int,
    pub rsvId: *mut c_char,
    pub jobGroup: *mut c_char,
    pub sla: *mut c_char,
    pub extsched: *mut c_char,
    pub warningTimePeriod: c_int,
    pub warningAction: *mut c_char,
    pub licenseProject: *mut c_char,
    pub options3: c_int,
    pub delOptions3: c_int,
    pub app: *mut c_char,
    pub jsdlFlag: c_int,
    pub jsdlDoc: *mut c_char,
    pub correlator: *mut c_void,
    pub apsString: *mut c_char,
    pub postExecCmd: *mut c_char,
    pub cwd: *mut c_char,
    pub runtimeEstimation: c_int,
    pub requeueEValues: *mut c_char,
    pub initChkpntPeriod: c_int,
    pub migThreshold: c_int,
    pub notifyCmd: *mut c_char,
    pub jobDescription: *mut c_char,
    pub submitExt: *mut c_void,
}

#[repr(C)]
pub struct submitReply {
    pub queue: *mut c_char,
    pub badJobId: i64,
    pub badJobName: *mut c_char,
    pub badReqIndx: c_int,
}

#[repr(C)]
pub struct pidInfo {
    pub pid: c_int,
    pub ppid: c_int,
    pub pgid: c_int,
    pub jobid: c_int,
}

#[repr(C)]
pub struct jRusage {
    pub mem: c_int,
    pub swap: c_int,
    pub utime: c_int,
    pub stime: c_int,
    pub npids: c_int,
    pub pidInfo: *mut pidInfo,
    pub npgids: c_int,
    pub pgid: *mut c_int,
    pub nthreads: c_int,
}

#[repr(C)]
pub struct jobExternalMsgReply {
    pub jobId: i64,
    pub msgId: c_int,
    pub msgIdx: c_int,
    pub desc: *mut c_char,
    pub userId: c_int,
    pub dataSize: c_long,
    pub postTime: time_t,
    pub dataStatus: c_int,
    pub userName: *mut c_char,
}

#[repr(C)]
pub struct jobInfoEnt {
    pub jobId: i64,
    pub user: *mut c_char,
    pub status: c_int,
    pub reasonTb: *mut c_int,
    pub numReasons: c_int,
    pub reasons: c_int,
    pub subreasons: c_int,
    pub jobPid: c_int,
    pub submitTime: time_t,
    pub reserveTime: time_t,
    pub startTime: time_t,
    pub predictedStartTime: time_t,
    pub endTime: time_t,
    pub lastEvent: time_t,
    pub nextEvent: time_t,
    pub duration: c_int,
    pub cpuTime: c_float,
    pub umask: c_int,
    pub cwd: *mut c_char,
    pub subHomeDir: *mut c_char,
    pub fromHost: *mut c_char,
    pub exHosts: *mut *mut c_char,
    pub numExHosts: c_int,
    pub cpuFactor: c_float,
    pub nIdx: c_int,
    pub loadSched: *mut c_float,
    pub loadStop: *mut c_float,
    pub submit: submit,
    pub exitStatus: c_int,
    pub execUid: c_int,
    pub execHome: *mut c_char,
    pub execCwd: *mut c_char,
    pub execUsername: *mut c_char,
    pub jRusageUpdateTime: time_t,
    pub runRusage: jRusage,
    pub jType: c_int,
    pub parentGroup: *mut c_char,
    pub jName: *mut c_char,
    pub counter: [c_int; NUM_JGRP_COUNTERS],
    pub port: c_ushort,
    pub jobPriority: c_int,
    pub numExternalMsg: c_int,
    pub externalMsg: *mut *mut jobExternalMsgReply,
    pub clusterId: c_int,
    pub detailReason: *mut c_char,
    pub idleFactor: c_float,
    pub exceptMask: c_int,
    pub additionalInfo: *mut c_char,
    pub exitInfo: c_int,
    pub warningTimePeriod: c_int,
    pub warningAction: *mut c_char,
    pub chargedSAAP: *mut c_char,
    pub execRusage: *mut c_char,
    pub rsvInActive: time_t,
    pub numLicense: c_int,
    pub licenseNames: *mut *mut c_char,
    pub aps: c_float,
    pub adminAps: c_float,
    pub runTime: c_int,
    pub reserveCnt: c_int,
    pub adminFactorVal: c_float,
    pub resizeMin: c_int,
    pub resizeMax: c_int,
    pub resizeReqTime: time_t,
    pub jStartNumExHosts: c_int,
    pub jStartExHosts: *mut *mut c_char,
    pub lastResizeTime: time_t,
    pub maxMem: c_int,
    pub avgMem: c_int,
    pub app: *mut c_char,
    pub queue: *mut c_char,
    pub projectName: *mut c_char,
}

#[repr(C)]
pub struct jobInfoHead {
    pub numJobs: c_int,
    pub jobIds: *mut i64,
    pub numHosts: c_int,
    pub hostNames: *mut *mut c_char,
    pub numClusters: c_int,
    pub clusterNames: *mut *mut c_char,
    pub numRemoteHosts: *mut c_int,
    pub remoteHosts: *mut *mut *mut c_char,
}

#[repr(C)]
pub struct signalBulkJobs {
    pub signal: c_int,
    pub njobs: c_int,
    pub jobs: *mut i64,
    pub flags: c_int,
}

#[repr(C)]
pub struct jobrequeue {
    pub jobId: i64,
    pub status: c_int,
    pub options: c_int,
}

#[repr(C)]
pub struct submig {
    pub jobId: i64,
    pub options: c_int,
    pub numAskedHosts: c_int,
    pub askedHosts: *mut *mut c_char,
}

#[repr(C)]
pub struct loadIndexLog {
    pub nIdx: c_int,
    pub name: *mut *mut c_char,
}

/// `layout!(name: field, ...)`: a [`Layout`] of the `#[repr(C)]` struct `name` in scope.
macro_rules! layout {
    ($t:ident: $($f:ident),* $(,)?) => {
        (stringify!($t), std::mem::size_of::<$t>(),
         vec![$((stringify!($f), std::mem::offset_of!($t, $f))),*])
    };
}
#[allow(unused_imports)] // for the other modules' layouts (info.rs, events.rs)
pub(crate) use layout;

/// A structure's C name, size, and each field's name and offset.
pub type Layout = (&'static str, usize, Vec<(&'static str, usize)>);

/// Every structure of the library: its C name, size and each field's offset — what
/// `tests/c_layout.rs` compares with the C compiler's view of the headers.
pub fn all_layouts() -> Vec<Layout> {
    let mut v = layouts();
    v.extend(crate::info::layouts());
    v.extend(crate::events::layouts());
    v.extend(crate::lim::layouts());
    v
}

/// This module's structures (jobs, submission, errors' companions).
fn layouts() -> Vec<Layout> {
    vec![
        layout!(hostInfo: hostName, hostType, hostModel, cpuFactor, maxCpus, maxMem, maxSwap,
            maxTmp, nDisks, nRes, resources, nDRes, DResources, windows, numIndx, busyThreshold,
            isServer, licensed, rexPriority, licFeaturesNeeded, licClass, cores, hostAddr, pprocs,
            cores_per_proc, threads_per_core),
        layout!(hostLoad: hostName, status, li),
        layout!(resItem: name, des, valueType, orderType, flags, interval),
        layout!(lsInfo: nRes, resTable, nTypes, hostTypes, nModels, hostModels, hostArchs,
            modelRefs, cpuFactor, numIndx, numUsrIndx),
        layout!(config_param: paramName, paramValue),
        layout!(xFile: subFn, execFn, options),
        layout!(submit: options, options2, jobName, queue, numAskedHosts, askedHosts, resReq,
            rLimits, hostSpec, numProcessors, dependCond, timeEvent, beginTime, termTime,
            sigValue, inFile, outFile, errFile, command, newCommand, chkpntPeriod, chkpntDir,
            nxf, xf, preExecCmd, mailUser, delOptions, delOptions2, projectName,
            maxNumProcessors, loginShell, userGroup, exceptList, userPriority, rsvId, jobGroup,
            sla, extsched, warningTimePeriod, warningAction, licenseProject, options3,
            delOptions3, app, jsdlFlag, jsdlDoc, correlator, apsString, postExecCmd, cwd,
            runtimeEstimation, requeueEValues, initChkpntPeriod, migThreshold, notifyCmd,
            jobDescription, submitExt),
        layout!(submitReply: queue, badJobId, badJobName, badReqIndx),
        layout!(pidInfo: pid, ppid, pgid, jobid),
        layout!(jRusage: mem, swap, utime, stime, npids, pidInfo, npgids, pgid, nthreads),
        layout!(jobExternalMsgReply: jobId, msgId, msgIdx, desc, userId, dataSize, postTime,
            dataStatus, userName),
        layout!(jobInfoEnt: jobId, user, status, reasonTb, numReasons, reasons, subreasons,
            jobPid, submitTime, reserveTime, startTime, predictedStartTime, endTime, lastEvent,
            nextEvent, duration, cpuTime, umask, cwd, subHomeDir, fromHost, exHosts, numExHosts,
            cpuFactor, nIdx, loadSched, loadStop, submit, exitStatus, execUid, execHome,
            execCwd, execUsername, jRusageUpdateTime, runRusage, jType, parentGroup, jName,
            counter, port, jobPriority, numExternalMsg, externalMsg, clusterId, detailReason,
            idleFactor, exceptMask, additionalInfo, exitInfo, warningTimePeriod, warningAction,
            chargedSAAP, execRusage, rsvInActive, numLicense, licenseNames, aps, adminAps,
            runTime, reserveCnt, adminFactorVal, resizeMin, resizeMax, resizeReqTime,
            jStartNumExHosts, jStartExHosts, lastResizeTime, maxMem, avgMem, app, queue,
            projectName),
        layout!(jobInfoHead: numJobs, jobIds, numHosts, hostNames, numClusters, clusterNames,
            numRemoteHosts, remoteHosts),
        layout!(signalBulkJobs: signal, njobs, jobs, flags),
        layout!(jobrequeue: jobId, status, options),
        layout!(submig: jobId, options, numAskedHosts, askedHosts),
        layout!(loadIndexLog: nIdx, name),
    ]
}
