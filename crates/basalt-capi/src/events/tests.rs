//! The record → `eventRec` conversion of every record type (lines written by
//! basalt-eventlog's writer, as mbatchd writes them, and lines of real OpenLava and
//! volclava logs from event-log.md §5), and `lsb_geteventrec` on a real `FILE *`.

use super::structs::*;
use super::*;
use basalt_eventlog::{self as el, Header, Record};
use libc::c_char;
use std::ffi::CStr;

/// The conversion of one line (which must hold a record).
fn rec(line: &str) -> Held<eventRec> {
    match parse(line.as_bytes()) {
        Ok(Some(h)) => h,
        Ok(None) => panic!("no record in {line:?}"),
        Err(e) => panic!("{line:?}: {e:?}"),
    }
}

fn written(r: impl Into<Record>) -> Held<eventRec> {
    rec(&r.into().to_line())
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn s(p: *const c_char) -> Option<String> {
    // SAFETY: the caller's promise.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn arr(a: &[c_char]) -> String {
    let bytes: Vec<u8> = a
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// # Safety
/// `p` is NULL or points to `n` strings.
unsafe fn strv(p: *mut *mut c_char, n: c_int) -> Vec<String> {
    // SAFETY: passed on.
    unsafe { crate::mem::str_array(p, n) }
}

fn h(t: i64) -> Header {
    Header::new(t)
}

// Lines of real logs (event-log.md §5).
const OL_JOB_NEW: &str = r#""JOB_NEW" "40" 1795339535 102 0 33554451 1 1795339535 0 0 -65535 0 0 "root" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" 100.00 18 "normal" "" "vm" "/home/alice/run" "" "" "/home/alice/run/out.%J" "" "/root" "1795339535.102" 0 "" "" "myjob" "env | grep -E ""^LSB_|^LSF_|^LS_"" | sort" 0 "" "default" 1 "linux" "" 7184 0 "" "" "" -1 "" -1 "" -1"#;
const OL_JOB_START: &str =
    r#""JOB_START" "40" 1795339540 101 4 0 0 100.0 1 "vm" "" "" 2097160 0 """#;
const OL_START_ACCEPT: &str = r#""JOB_START_ACCEPT" "40" 1795339540 101 25592 25592 0 2097152"#;
const OL_EXECUTE: &str =
    r#""JOB_EXECUTE" "40" 1795339540 101 0 25592 "/home/alice/run" "/root" "root" 25592 0"#;
const OL_STATUS_RU: &str = r#""JOB_STATUS" "40" 1795339586 105 32 0 0 0.0211 1795339586 1 0.005440 0.015618 4392 0 -1 0 0 782 0 0 0 32 -1 0 0 0 18 6 -1 33280 0"#;
const OL_STATUS_SUSP: &str = r#""JOB_STATUS" "40" 1795339582 104 16 65538 0 0.0000 0 0 0 0"#;
const OL_SIGNAL: &str = r#""JOB_SIGNAL" "40" 1795339586 105 0 1 "KILL" 0 "root""#;
const OL_HOST_CTRL: &str = r#""HOST_CTRL" "40" 1795339586 2 "vm" 0 "root" """#;
const OL_MODIFY2: &str = r#""JOB_MODIFY2" "40" 1795339586 "103" 8388609 4096 0 0 "root" 1795339586 18 2147483646 0 0 0 0 "newname" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "/root" "" "vm" "" 956046368 2147483646 "" 0"#;
const OL_MBD_DIE: &str = r#""MBD_DIE" "40" 1795339614 "vm" 0 202"#;
const OL_MBD_START: &str = r#""MBD_START" "40" 1795339510 "vm" "openlava" 0 1"#;
const OL_LOAD_INDEX: &str = r#""LOAD_INDEX" "40" 1795339510 11 "r15s" "r1m" "r15m" "ut" "pg" "io" "ls" "it" "tmp" "swp" "mem""#;
const OL_LOG_SWITCH: &str = r#""LOG_SWITCH" "40" 1795341347 623"#;
const OL_CLEAN: &str = r#""JOB_CLEAN" "40" 1795341358 521 0"#;
const OL_FINISH: &str = r#""JOB_FINISH" "40" 1795339540 102 0 33554451 1 1795339535 0 0 1795339540 "root" "normal" "" "" "" "vm" "/home/alice/run" "" "/home/alice/run/out.%J" "" "1795339535.102" 0 1 "vm" 64 100.0 "myjob" "env | grep -E ""^LSB_|^LSF_|^LS_"" | sort" 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 "" "default" 0 1 "" 0 3976 11224 "" """#;
const VC_SWITCH: &str = r#""JOB_SWITCH" "22" 1795342025 0 5 "lowq" 0 "root""#;
const VC_MOVE: &str = r#""JOB_MOVE" "22" 1795342025 0 6 1 1 0 "root""#;
const VC_QUEUE_CTRL: &str = r#""QUEUE_CTRL" "22" 1795342025 2 "lowq" 0 "root" """#;
const VC_FORCE: &str = r#""JOB_FORCE" "22" 1795342025 6 0 0 1 1  "vm" "root""#;
const VC_REQUEUE: &str = r#""JOB_REQUEUE" "22" 1795342036 6 0"#;

#[test]
fn job_new_of_openlava() {
    let r = rec(OL_JOB_NEW);
    let e = &*r.value;
    assert_eq!(e.r#type, EVENT_JOB_NEW);
    assert_eq!(arr(&e.version), "40");
    assert_eq!(e.eventTime, 1795339535);
    // SAFETY: EVENT_JOB_NEW's member; the strings live in r's arena.
    unsafe {
        let n = &e.eventLog.jobNewLog;
        assert_eq!(n.jobId, 102);
        assert_eq!(arr(&n.userName), "root");
        assert_eq!(n.options, 33554451);
        assert_eq!(n.sigValue, -65535);
        assert_eq!(n.rLimits, [-1; 12]);
        assert_eq!(n.hostFactor, 100.0);
        assert_eq!(n.umask, 18);
        assert_eq!(arr(&n.queue), "normal");
        assert_eq!(arr(&n.fromHost), "vm");
        assert_eq!(s(n.cwd).as_deref(), Some("/home/alice/run"));
        assert_eq!(s(n.outFile).as_deref(), Some("/home/alice/run/out.%J"));
        assert_eq!(s(n.inFile).as_deref(), Some(""));
        assert_eq!(s(n.jobFile).as_deref(), Some("1795339535.102"));
        assert_eq!(n.numAskedHosts, 0);
        assert!(n.askedHosts.is_null());
        assert_eq!(s(n.jobName).as_deref(), Some("myjob"));
        assert_eq!(
            s(n.command).as_deref(),
            Some(r#"env | grep -E "^LSB_|^LSF_|^LS_" | sort"#)
        );
        assert_eq!(s(n.projectName).as_deref(), Some("default"));
        assert_eq!(n.maxNumProcessors, 1);
        assert_eq!(s(n.schedHostType).as_deref(), Some("linux"));
        // options2 7184 = JOB_PRIORITY|USE_DEF_PROCLIMIT|MODIFY_RUN_JOB|MODIFY_PEND_JOB
        // in OpenLava's numbering, which LSF's shares for these bits.
        assert_eq!(n.options2, 7184 & 0x1fff);
        assert_eq!(n.idx, 0);
        assert!(n.timeEvent.is_null() && n.submitExt.is_null());
    }
}

#[test]
fn job_new_of_basalt_with_its_own_fields() {
    let mut sub = basalt_sched::Submission {
        user: "alice".into(),
        uid: 1000,
        options: SUB_QUEUE as u32 | SUB_HOST as u32,
        options2: basalt_core::job::sub2::OUT_OVERWRITE | basalt_core::job::sub2::HOLD,
        num_processors: 2,
        max_processors: 4,
        submit_time: 1700000000,
        queue: "normal".into(),
        cwd: "/home/alice".into(),
        asked_hosts: vec!["hostA".into(), "hostB".into()],
        job_name: "arr".into(),
        command: "sleep 1".into(),
        spec_cwd: "/scratch/%J".into(),
        ..Default::default()
    };
    let mut limits = [-1; 11];
    limits[9] = 600;
    sub.rlimits = limits.into();
    sub.extras = Some(Box::new(basalt_sched::SubExtras {
        post_exec: "echo post".into(),
        requeue_exit_values: "2 3".into(),
        app: "fluent".into(),
        files: vec![basalt_sched::FileTransfer {
            local: "in.dat".into(),
            remote: "/tmp/in.dat".into(),
            ops: 1,
        }],
        ..Default::default()
    }));
    let ev = basalt_sched::Event::JobNew {
        time: 1700000001,
        job_id: 4242,
        sub: Box::new(sub),
    };
    let r = written(basalt_records::to_record(&ev));
    let e = &*r.value;
    assert_eq!(e.r#type, EVENT_JOB_NEW);
    assert_eq!(arr(&e.version), "10.1");
    // SAFETY: EVENT_JOB_NEW's member, strings in r's arena.
    unsafe {
        let n = &e.eventLog.jobNewLog;
        assert_eq!(n.jobId, 4242);
        assert_eq!(n.userId, 1000);
        assert_eq!(arr(&n.userName), "alice");
        assert_eq!(n.options, SUB_QUEUE | SUB_HOST);
        assert_eq!(n.options2, SUB2_HOLD | SUB2_OVERWRITE_OUT_FILE);
        assert_eq!((n.numProcessors, n.maxNumProcessors), (2, 4));
        assert_eq!(n.rLimits[LSF_RLIMIT_RUN as usize], 600);
        assert_eq!(n.rLimits[LSF_RLIMIT_THREAD as usize], DEFAULT_RLIMIT);
        assert_eq!(strv(n.askedHosts, n.numAskedHosts), ["hostA", "hostB"]);
        assert_eq!(n.nxf, 1);
        assert_eq!(s((*n.xf).subFn).as_deref(), Some("in.dat"));
        assert_eq!(s((*n.xf).execFn).as_deref(), Some("/tmp/in.dat"));
        assert_eq!((*n.xf).options, 1);
        assert_eq!(
            n.options3,
            SUB3_POST_EXEC | SUB3_JOB_REQUEUE | SUB3_APP,
            "options3 {:#x}",
            n.options3
        );
        assert_eq!(s(n.postExecCmd).as_deref(), Some("echo post"));
        assert_eq!(s(n.requeueEValues).as_deref(), Some("2 3"));
        assert_eq!(s(n.app).as_deref(), Some("fluent"));
        assert_eq!(s(n.cwd).as_deref(), Some("/home/alice"));
    }
}

#[test]
fn job_modify_is_a_job_new_log() {
    let line = OL_JOB_NEW.replacen("\"JOB_NEW\"", "\"JOB_MODIFY\"", 1);
    let r = rec(&line);
    assert_eq!(r.value.r#type, EVENT_JOB_MODIFY);
    // SAFETY: JOB_MODIFY's member is jobNewLog.
    assert_eq!(unsafe { r.value.eventLog.jobNewLog.jobId }, 102);
}

#[test]
fn job_modify2_of_openlava_and_of_basalt() {
    let r = rec(OL_MODIFY2);
    assert_eq!(r.value.r#type, EVENT_JOB_MODIFY2);
    // SAFETY: EVENT_JOB_MODIFY2's member.
    unsafe {
        let m = &r.value.eventLog.jobModLog;
        assert_eq!(s(m.jobIdStr).as_deref(), Some("103"));
        assert_eq!(m.options, 8388609);
        assert_eq!(m.options2, 4096);
        assert_eq!(s(m.jobName).as_deref(), Some("newname"));
        assert_eq!(m.numProcessors, 2147483646);
        assert!(m.app.is_null());
    }

    let b = el::JobModify2 {
        header: h(1700000100),
        job_id_str: "77[2]".into(),
        options: SUB_QUEUE as u32,
        queue: "short".into(),
        user_id: 1000,
        user_name: "alice".into(),
        basalt_options: el::modify::APP
            | el::modify::POST_EXEC
            | el::modify::USER_GROUP_DEL
            | el::modify::REQUEUE_DEL,
        app: "fluent".into(),
        post_exec_cmd: "echo done".into(),
        ..Default::default()
    };
    let r = written(b);
    // SAFETY: as above.
    unsafe {
        let m = &r.value.eventLog.jobModLog;
        assert_eq!(s(m.jobIdStr).as_deref(), Some("77[2]"));
        assert_eq!(m.options, SUB_QUEUE);
        assert_eq!(s(m.queue).as_deref(), Some("short"));
        assert_eq!(m.options3, SUB3_APP | SUB3_POST_EXEC);
        assert_eq!(m.delOptions3, SUB3_JOB_REQUEUE);
        assert_eq!(m.delOptions, SUB_USER_GROUP);
        assert_eq!(s(m.app).as_deref(), Some("fluent"));
        assert_eq!(s(m.postExecCmd).as_deref(), Some("echo done"));
        assert!(m.userGroup.is_null() && m.requeueEValues.is_null());
        assert_eq!(s(m.userName).as_deref(), Some("alice"));
    }
}

#[test]
fn job_start_accept_and_execute() {
    let r = rec(OL_JOB_START);
    assert_eq!(r.value.r#type, EVENT_JOB_START);
    // SAFETY: each record's own member.
    unsafe {
        let l = &r.value.eventLog.jobStartLog;
        assert_eq!((l.jobId, l.jStatus, l.jFlags, l.idx), (101, 4, 2097160, 0));
        assert_eq!(strv(l.execHosts, l.numExHosts), ["vm"]);
        assert_eq!(l.hostFactor, 100.0);
    }
    let b = el::JobStart {
        header: h(5),
        job_id: 9,
        j_status: 4,
        exec_hosts: vec!["a".into(), "a".into(), "b".into()],
        idx: 3,
        effective_res_req: "rusage[mem=100]".into(),
        ..Default::default()
    };
    let r = written(Record::PreExecStart(b.clone()));
    assert_eq!(r.value.r#type, EVENT_PRE_EXEC_START);
    let r = written(b);
    assert_eq!(r.value.r#type, EVENT_JOB_START);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobStartLog;
        assert_eq!(strv(l.execHosts, l.numExHosts), ["a", "a", "b"]);
        assert_eq!(l.idx, 3);
        assert_eq!(s(l.effectiveResReq).as_deref(), Some("rusage[mem=100]"));
    }

    let r = rec(OL_START_ACCEPT);
    assert_eq!(r.value.r#type, EVENT_JOB_START_ACCEPT);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobStartAcceptLog;
        assert_eq!(
            (l.jobId, l.jobPid, l.jobPGid, l.idx),
            (101, 25592, 25592, 0)
        );
    }
    let r = rec(OL_EXECUTE);
    assert_eq!(r.value.r#type, EVENT_JOB_EXECUTE);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobExecuteLog;
        assert_eq!(
            (l.jobId, l.execUid, l.jobPGid, l.jobPid),
            (101, 0, 25592, 25592)
        );
        assert_eq!(s(l.execCwd).as_deref(), Some("/home/alice/run"));
        assert_eq!(s(l.execHome).as_deref(), Some("/root"));
        assert_eq!(s(l.execUsername).as_deref(), Some("root"));
    }
}

#[test]
fn job_status_with_usage_reason_and_basalt_term_reason() {
    let r = rec(OL_STATUS_RU);
    // SAFETY: EVENT_JOB_STATUS's member.
    unsafe {
        let l = &r.value.eventLog.jobStatusLog;
        assert_eq!(r.value.r#type, EVENT_JOB_STATUS);
        assert_eq!((l.jobId, l.jStatus, l.ru), (105, JOB_STAT_EXIT, 1));
        assert_eq!(l.exitStatus, 33280);
        assert_eq!(l.lsfRusage.ru_maxrss, 4392.0);
        assert_eq!(l.lsfRusage.ru_ixrss, 0.0);
        assert_eq!(l.lsfRusage.ru_ismrss, -1.0);
        assert_eq!(l.endTime, 1795339586);
        assert_eq!(l.exitInfo, TERM_UNKNOWN);
    }
    let r = rec(OL_STATUS_SUSP);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobStatusLog;
        assert_eq!((l.jStatus, l.reason, l.ru), (JOB_STAT_USUSP, 65538, 0));
    }
    let b = el::JobStatus {
        header: h(10),
        job_id: 12,
        j_status: JOB_STAT_EXIT as u32,
        exit_status: 9,
        idx: 1,
        mem: Some(el::MemUsage {
            max_mem: 2048,
            avg_mem: 1024,
        }),
        term_reason: "TERM_RUNLIMIT".into(),
        ..Default::default()
    };
    let r = written(b);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobStatusLog;
        assert_eq!(l.exitInfo, TERM_RUNLIMIT);
        assert_eq!((l.maxMem, l.avgMem), (2048, 1024));
        assert_eq!(
            (l.exitStatus, l.idx, l.maskedJStatus),
            (9, 1, JOB_STAT_EXIT)
        );
    }
}

#[test]
fn signal_switch_move_requeue_clean_force() {
    let r = rec(OL_SIGNAL);
    // SAFETY: each record's own member.
    unsafe {
        let l = &r.value.eventLog.signalLog;
        assert_eq!(r.value.r#type, EVENT_JOB_SIGNAL);
        assert_eq!((l.jobId, l.userId, l.runCount), (105, 0, 1));
        assert_eq!(s(l.signalSymbol).as_deref(), Some("KILL"));
        assert_eq!(arr(&l.userName), "root");
    }
    let r = rec(VC_SWITCH);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobSwitchLog;
        assert_eq!(r.value.r#type, EVENT_JOB_SWITCH);
        assert_eq!((l.userId, l.jobId), (0, 5));
        assert_eq!(arr(&l.queue), "lowq");
    }
    let r = rec(VC_MOVE);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobMoveLog;
        assert_eq!(r.value.r#type, EVENT_JOB_MOVE);
        assert_eq!((l.jobId, l.position, l.base), (6, 1, TO_TOP));
    }
    let r = rec(VC_REQUEUE);
    assert_eq!(r.value.r#type, EVENT_JOB_REQUEUE);
    // SAFETY: as above.
    assert_eq!(unsafe { r.value.eventLog.jobRequeueLog.jobId }, 6);
    let r = rec(OL_CLEAN);
    assert_eq!(r.value.r#type, EVENT_JOB_CLEAN);
    // SAFETY: as above.
    assert_eq!(unsafe { r.value.eventLog.jobCleanLog.jobId }, 521);
    let r = rec(VC_FORCE);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobForceRequestLog;
        assert_eq!(r.value.r#type, EVENT_JOB_FORCE);
        assert_eq!((l.jobId, l.options), (6, 1));
        assert_eq!(strv(l.execHosts, l.numExecHosts), ["vm"]);
        assert_eq!(arr(&l.userName), "root");
    }
}

#[test]
fn mig_chkpnt_sigact_forward_accept() {
    let r = written(el::Mig {
        header: h(1),
        job_id: 31,
        asked_hosts: vec!["h2".into()],
        user_id: 7,
        idx: 0,
        user_name: "bob".into(),
    });
    // SAFETY: each record's own member.
    unsafe {
        let l = &r.value.eventLog.migLog;
        assert_eq!(r.value.r#type, EVENT_MIG);
        assert_eq!((l.jobId, l.userId), (31, 7));
        assert_eq!(strv(l.askedHosts, l.numAskedHosts), ["h2"]);
        assert_eq!(arr(&l.userName), "bob");
    }
    let r = written(el::Chkpnt {
        header: h(2),
        job_id: 31,
        period: 600,
        pid: 4000,
        ok: 1,
        flags: LSB_CHKPNT_KILL as i64,
        idx: 0,
        message: String::new(),
    });
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.chkpntLog;
        assert_eq!(r.value.r#type, EVENT_CHKPNT);
        assert_eq!(
            (l.jobId, l.period, l.pid, l.ok, l.flags),
            (31, 600, 4000, 1, 1)
        );
    }
    let r = written(el::JobSigact {
        header: h(3),
        job_id: 31,
        period: -1,
        j_status: 4,
        act_status: 1,
        signal_symbol: "SIG_CHKPNT".into(),
        ..Default::default()
    });
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.sigactLog;
        assert_eq!(r.value.r#type, EVENT_JOB_SIGACT);
        assert_eq!((l.jobId, l.period, l.jStatus, l.actStatus), (31, -1, 4, 1));
        assert_eq!(s(l.signalSymbol).as_deref(), Some("SIG_CHKPNT"));
    }
    let r = written(el::JobForward {
        header: h(4),
        job_id: 50,
        cluster: "east".into(),
        job_rmt_attr: 1,
        queue: "recv".into(),
        ..Default::default()
    });
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobForwardLog;
        assert_eq!(r.value.r#type, EVENT_JOB_FORWARD);
        assert_eq!((l.jobId, l.jobRmtAttr, l.numReserHosts), (50, 1, 0));
        assert_eq!(s(l.cluster).as_deref(), Some("east"));
    }
    let r = written(el::JobAccept {
        header: h(5),
        job_id: 8,
        remote_jid: 50,
        cluster: "west".into(),
        job_rmt_attr: 4,
        remote_idx: 2,
        ..Default::default()
    });
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobAcceptLog;
        assert_eq!(r.value.r#type, EVENT_JOB_ACCEPT);
        assert_eq!(l.jobId, 8);
        assert_eq!(l.remoteJid, (2i64 << 32) | 50);
        assert_eq!(s(l.cluster).as_deref(), Some("west"));
    }
}

#[test]
fn queue_host_and_mbatchd_records() {
    let r = rec(VC_QUEUE_CTRL);
    // SAFETY: each record's own member.
    unsafe {
        let l = &r.value.eventLog.queueCtrlLog;
        assert_eq!(r.value.r#type, EVENT_QUEUE_CTRL);
        assert_eq!(
            (l.opCode, arr(&l.queue), arr(&l.userName)),
            (2, "lowq".into(), "root".into())
        );
    }
    let r = written(el::HostCtrl {
        header: h(6),
        op_code: 2,
        host: "hostA".into(),
        user_id: 0,
        user_name: "root".into(),
        message: "disk swap".into(),
    });
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.hostCtrlLog;
        assert_eq!(r.value.r#type, EVENT_HOST_CTRL);
        assert_eq!((l.opCode, arr(&l.host)), (2, "hostA".into()));
        assert_eq!(arr(&l.message), "disk swap");
    }
    let r = rec(OL_HOST_CTRL);
    // SAFETY: as above.
    assert_eq!(unsafe { arr(&r.value.eventLog.hostCtrlLog.host) }, "vm");
    let r = rec(OL_MBD_START);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.mbdStartLog;
        assert_eq!(r.value.r#type, EVENT_MBD_START);
        assert_eq!(
            (arr(&l.master), arr(&l.cluster)),
            ("vm".into(), "openlava".into())
        );
        assert_eq!((l.numHosts, l.numQueues), (0, 1));
    }
    let r = rec(OL_MBD_DIE);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.mbdDieLog;
        assert_eq!(r.value.r#type, EVENT_MBD_DIE);
        assert_eq!((arr(&l.master), l.exitCode), ("vm".into(), MASTER_RECONFIG));
    }
    let r = rec(OL_LOAD_INDEX);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.loadIndexLog;
        assert_eq!(r.value.r#type, EVENT_LOAD_INDEX);
        assert_eq!(l.nIdx, 11);
        assert_eq!(strv(l.name, l.nIdx)[10], "mem");
    }
    let r = rec(OL_LOG_SWITCH);
    assert_eq!(r.value.r#type, EVENT_LOG_SWITCH);
    // SAFETY: as above.
    assert_eq!(unsafe { r.value.eventLog.logSwitchLog.lastJobId }, 623);
}

#[test]
fn job_finish_of_openlava_and_of_basalt() {
    let r = rec(OL_FINISH);
    // SAFETY: EVENT_JOB_FINISH's member.
    unsafe {
        let l = &r.value.eventLog.jobFinishLog;
        assert_eq!(r.value.r#type, EVENT_JOB_FINISH);
        assert_eq!((l.jobId, l.jStatus, l.exitStatus), (102, JOB_STAT_DONE, 0));
        assert_eq!(arr(&l.userName), "root");
        assert_eq!(arr(&l.queue), "normal");
        assert_eq!(
            (l.submitTime, l.startTime, l.endTime),
            (1795339535, 1795339540, 1795339540)
        );
        assert_eq!(strv(l.execHosts, l.numExHosts), ["vm"]);
        assert_eq!(s(l.jobName).as_deref(), Some("myjob"));
        assert_eq!(l.lsfRusage.ru_maxrss, 3976.0);
        assert!((l.cpuTime - 0.023628).abs() < 1e-4, "{}", l.cpuTime);
        assert_eq!((l.maxRMem, l.maxRSwap), (3976, 11224));
        assert_eq!(s(l.projectName).as_deref(), Some("default"));
        assert_eq!(l.exitInfo, TERM_UNKNOWN);
    }
    let b = el::JobFinish {
        header: h(1700000300),
        job_id: 88,
        user_id: 1000,
        user_name: "alice".into(),
        start_time: 1700000100,
        submit_time: 1700000000,
        queue: "normal".into(),
        exec_hosts: vec!["h1".into(), "h2".into()],
        j_status: JOB_STAT_EXIT as u32,
        exit_status: 3 << 8,
        idx: 4,
        ..Default::default()
    };
    let r = written(b);
    // SAFETY: as above.
    unsafe {
        let l = &r.value.eventLog.jobFinishLog;
        assert_eq!((l.jobId, l.idx, l.exitStatus >> 8), (88, 4, 3));
        assert_eq!(l.runTime, 200);
        assert_eq!(l.endTime, 1700000300);
        assert_eq!(l.lsfRusage.ru_utime, -1.0);
        assert_eq!(strv(l.execHosts, l.numExHosts), ["h1", "h2"]);
    }
}

#[test]
fn records_it_cannot_represent_and_malformed_lines_are_lsf_errors() {
    let code = |line: &str| match parse(line.as_bytes()) {
        Err(Fail::Batch(c, _)) => c,
        other => panic!("{line}: {:?}", other.map(|o| o.is_some())),
    };
    assert_eq!(
        code(r#""UNFULFILL" "10.1" 1700000000 5 0 0 0 0 0 0 0 0"#),
        LSBE_UNKNOWN_EVENT
    );
    // IBM LSF's JOB_MODIFY2 (a dotted version without Basalt's mark).
    assert_eq!(
        code(r#""JOB_MODIFY2" "10.108" 1700000000 "103" 2 0 0 0 "root" 1 18 0 0 0 0 0 "q" "#),
        LSBE_EVENT_FORMAT
    );
    assert_eq!(
        code(r#""JOB_CLEAN" "10.1" 1700000000 abc 0"#),
        LSBE_EVENT_FORMAT
    );
    assert_eq!(code("not a record"), LSBE_EVENT_FORMAT);
    assert!(matches!(parse(b"# a comment"), Ok(None)));
    assert!(matches!(parse(b""), Ok(None)));
}

#[test]
fn term_reasons_and_options2_use_lsf_numbers() {
    assert_eq!(convert::term_info("TERM_OWNER"), 14);
    assert_eq!(convert::term_info("TERM_ORPHAN_SYSTEM"), 27);
    assert_eq!(convert::term_info("TERM_MC_RETURN"), TERM_UNKNOWN);
    assert_eq!(convert::term_info(""), TERM_UNKNOWN);
    use basalt_core::job::sub2;
    assert_eq!(convert::sub2_bits(sub2::JOB_GROUP), SUB2_JOB_GROUP);
    assert_eq!(
        convert::sub2_bits(sub2::ERR_OVERWRITE),
        SUB2_OVERWRITE_ERR_FILE
    );
    assert_eq!(convert::sub2_bits(sub2::JOB_CMD_SPOOL), SUB2_JOB_CMD_SPOOL);
}

/// `lsb_geteventrec`'s one record slot is per process: its tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct CFile(*mut libc::FILE);

impl CFile {
    fn open(path: &std::path::Path) -> CFile {
        let p = crate::mem::cstring(&path.to_string_lossy());
        // SAFETY: valid C strings.
        let fp = unsafe { libc::fopen(p.as_ptr(), c"r".as_ptr()) };
        assert!(!fp.is_null(), "fopen {}", path.display());
        CFile(fp)
    }
}

impl Drop for CFile {
    fn drop(&mut self) {
        // SAFETY: opened by fopen, closed once.
        unsafe { libc::fclose(self.0) };
    }
}

/// This thread's `lsberrno`.
fn thread_lsberrno() -> c_int {
    // SAFETY: the thread's own error cell.
    unsafe { *crate::errno::lsb_errno() }
}

/// The next record's type, or the error code, and `*lineNum` after the call.
fn next_of(f: &CFile, line: &mut c_int) -> Result<c_int, c_int> {
    // SAFETY: an open stream and a valid int.
    let p = unsafe { lsb_geteventrec(f.0, line) };
    // SAFETY: a non-NULL result is the library's record, valid until the next call.
    match unsafe { p.as_ref() } {
        Some(e) => Ok(e.r#type),
        None => Err(thread_lsberrno()),
    }
}

#[test]
fn lsb_geteventrec_counts_lines_reports_errors_and_goes_on() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("lsb.events");
    let text = format!(
        "{}{OL_MBD_START}\n\n# comment\n{OL_JOB_NEW}\n\"JOB_CLEAN\" \"10.1\" 5 x 0\n\"JOB_MSG\" \"10.1\" 5 1 2\n{OL_CLEAN}\n",
        basalt_eventlog::fresh_header()
    );
    std::fs::write(&path, text).expect("write");
    let f = CFile::open(&path);
    let mut line: c_int = 0;
    assert_eq!(next_of(&f, &mut line), Ok(EVENT_MBD_START));
    assert_eq!(line, 2);
    assert_eq!(next_of(&f, &mut line), Ok(EVENT_JOB_NEW));
    assert_eq!(line, 5);
    assert_eq!(next_of(&f, &mut line), Err(LSBE_EVENT_FORMAT));
    assert_eq!(line, 6);
    assert!(
        crate::errno::batch_text().contains("line 6"),
        "{}",
        crate::errno::batch_text()
    );
    assert_eq!(next_of(&f, &mut line), Err(LSBE_UNKNOWN_EVENT));
    assert_eq!(line, 7);
    assert_eq!(next_of(&f, &mut line), Ok(EVENT_JOB_CLEAN));
    assert_eq!(line, 8);
    assert_eq!(next_of(&f, &mut line), Err(LSBE_EOF));
    assert_eq!(line, 8);
    assert_eq!(next_of(&f, &mut line), Err(LSBE_EOF));
}

#[test]
fn an_incomplete_last_line_waits_for_its_end() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("lsb.acct");
    let (head, tail) = OL_FINISH.split_at(60);
    std::fs::write(&path, format!("{OL_CLEAN}\n{head}")).expect("write");
    let f = CFile::open(&path);
    let mut line: c_int = 0;
    assert_eq!(next_of(&f, &mut line), Ok(EVENT_JOB_CLEAN));
    assert_eq!(next_of(&f, &mut line), Err(LSBE_EOF));
    assert_eq!(line, 1);
    use std::io::Write as _;
    let mut w = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("append");
    writeln!(w, "{tail}").expect("write");
    drop(w);
    assert_eq!(next_of(&f, &mut line), Ok(EVENT_JOB_FINISH));
    assert_eq!(line, 2);
}

#[test]
fn lsb_geteventrecbyline_fills_the_callers_record() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = crate::mem::zeroed::<eventRec>();
    let line = crate::mem::cstring(OL_SIGNAL);
    // SAFETY: a C string and the caller's record.
    let rc = unsafe { lsb_geteventrecbyline(line.as_ptr() as *mut c_char, &mut *out) };
    assert_eq!(rc, 0);
    assert_eq!(out.r#type, EVENT_JOB_SIGNAL);
    // SAFETY: the signal record's member; strings valid until the next call.
    assert_eq!(
        unsafe { s(out.eventLog.signalLog.signalSymbol) }.as_deref(),
        Some("KILL")
    );
    let comment = crate::mem::cstring("#80");
    // SAFETY: as above.
    let rc = unsafe { lsb_geteventrecbyline(comment.as_ptr() as *mut c_char, &mut *out) };
    assert_eq!(rc, -1);
    assert_eq!(thread_lsberrno(), LSBE_EVENT_FORMAT);
}
