//! One parsed record (`basalt_eventlog::Record`) as LSF's `struct eventRec`: the
//! `EVENT_*` type and the union member of that type, its strings and arrays in the
//! returned value's arena.
//!
//! Conventions (LSF's): a string field the log line holds is a C string even when
//! empty (""); a field the line has no value for is NULL or 0; a host list of no hosts
//! is NULL with count 0; option bits are LSF's `SUB_*`, `SUB2_*`, `SUB3_*` (the log's
//! OpenLava `options2` bits and Basalt's own `bmod` bits are translated).

use super::jobs::{job_finish, job_mod, job_new};
use super::structs::*;
use crate::consts::*;
use crate::errno::Fail;
use crate::ffi::{LSF_RLIM_NLIMITS, loadIndexLog, xFile};
use crate::mem::{Arena, Held, fill, zeroed};
use basalt_core::job::sub2;
use basalt_eventlog::{self as el, Record};
use libc::{c_char, c_int};
use std::mem::ManuallyDrop;

/// A C `int` from any integer, saturating (the log's numbers are 64-bit).
pub(super) fn ci<T: Into<i128>>(v: T) -> c_int {
    v.into().clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as c_int
}

/// A count and `char **` of names (NULL when there are none).
pub(super) fn names(a: &mut Arena, v: &[String]) -> (c_int, *mut *mut c_char) {
    if v.is_empty() {
        (0, std::ptr::null_mut())
    } else {
        (ci(v.len() as u64), a.strv(v))
    }
}

/// The log's limits in `LSF_RLIMIT_*` order; the ones it has no field for
/// (`LSF_RLIMIT_THREAD`) are `DEFAULT_RLIMIT`.
pub(super) fn rlimits(v: &[i64]) -> [c_int; LSF_RLIM_NLIMITS] {
    let mut out = [DEFAULT_RLIMIT; LSF_RLIM_NLIMITS];
    for (o, v) in out.iter_mut().zip(v) {
        *o = ci(*v);
    }
    out
}

/// `bsub -f` transfers as an `xFile` array (NULL when there are none).
pub(super) fn xfiles(a: &mut Arena, v: &[el::XFile]) -> (c_int, *mut xFile) {
    if v.is_empty() {
        return (0, std::ptr::null_mut());
    }
    let mut out: Vec<xFile> = v
        .iter()
        .map(|x| xFile {
            subFn: a.s(&x.sub_fn),
            execFn: a.s(&x.exec_fn),
            options: x.options as c_int,
        })
        .collect();
    let p = out.as_mut_ptr();
    a.keep(out);
    (ci(v.len() as u64), p)
}

pub(super) fn rusage(r: &el::Rusage) -> lsfRusage {
    let v = r.to_array();
    lsfRusage {
        ru_utime: v[0],
        ru_stime: v[1],
        ru_maxrss: v[2],
        ru_ixrss: v[3],
        ru_ismrss: v[4],
        ru_idrss: v[5],
        ru_isrss: v[6],
        ru_minflt: v[7],
        ru_majflt: v[8],
        ru_nswap: v[9],
        ru_inblock: v[10],
        ru_oublock: v[11],
        ru_ioch: v[12],
        ru_msgsnd: v[13],
        ru_msgrcv: v[14],
        ru_nsignals: v[15],
        ru_nvcsw: v[16],
        ru_nivcsw: v[17],
        ru_exutime: v[18],
    }
}

/// LSF's `SUB2_*` bits of the log's `options2` (OpenLava's numbering, Basalt's
/// overwrite bits): bits up to SUB2_MODIFY_PEND_JOB are the same in both.
pub fn sub2_bits(o2: u32) -> c_int {
    let mut out = (o2 & 0x1fff) as c_int;
    for (ours, lsf) in [
        (sub2::JOB_GROUP, SUB2_JOB_GROUP),
        (sub2::OUT_OVERWRITE, SUB2_OVERWRITE_OUT_FILE),
        (sub2::ERR_OVERWRITE, SUB2_OVERWRITE_ERR_FILE),
    ] {
        if o2 & ours != 0 {
            out |= lsf;
        }
    }
    out
}

/// LSF's `TERM_*` number of a termination reason's name (Basalt's own names that LSF
/// has no number for, and "": `TERM_UNKNOWN`).
pub fn term_info(name: &str) -> c_int {
    const TABLE: &[(&str, c_int)] = &[
        ("TERM_PREEMPT", TERM_PREEMPT),
        ("TERM_WINDOW", TERM_WINDOW),
        ("TERM_LOAD", TERM_LOAD),
        ("TERM_OTHER", TERM_OTHER),
        ("TERM_RUNLIMIT", TERM_RUNLIMIT),
        ("TERM_DEADLINE", TERM_DEADLINE),
        ("TERM_PROCESSLIMIT", TERM_PROCESSLIMIT),
        ("TERM_FORCE_OWNER", TERM_FORCE_OWNER),
        ("TERM_FORCE_ADMIN", TERM_FORCE_ADMIN),
        ("TERM_REQUEUE_OWNER", TERM_REQUEUE_OWNER),
        ("TERM_REQUEUE_ADMIN", TERM_REQUEUE_ADMIN),
        ("TERM_CPULIMIT", TERM_CPULIMIT),
        ("TERM_CHKPNT", TERM_CHKPNT),
        ("TERM_OWNER", TERM_OWNER),
        ("TERM_ADMIN", TERM_ADMIN),
        ("TERM_MEMLIMIT", TERM_MEMLIMIT),
        ("TERM_EXTERNAL_SIGNAL", TERM_EXTERNAL_SIGNAL),
        ("TERM_RMS", TERM_RMS),
        ("TERM_ZOMBIE", TERM_ZOMBIE),
        ("TERM_SWAP", TERM_SWAP),
        ("TERM_THREADLIMIT", TERM_THREADLIMIT),
        ("TERM_SLURM", TERM_SLURM),
        ("TERM_BUCKET_KILL", TERM_BUCKET_KILL),
        ("TERM_CTRL_PID", TERM_CTRL_PID),
        ("TERM_CWD_NOTEXIST", TERM_CWD_NOTEXIST),
        ("TERM_REMOVE_HUNG_JOB", TERM_REMOVE_HUNG_JOB),
        ("TERM_ORPHAN_SYSTEM", TERM_ORPHAN_SYSTEM),
        ("TERM_PRE_EXEC_FAIL", TERM_PRE_EXEC_FAIL),
        ("TERM_DATA", TERM_DATA),
        ("TERM_MC_RECALL", TERM_MC_RECALL),
        ("TERM_REQUEUE_RC", TERM_REQUEUE_RC),
        ("TERM_CSM_ALLOC", TERM_CSM_ALLOC),
        ("TERM_KUBE", TERM_KUBE),
        ("TERM_RC", TERM_RC),
    ];
    TABLE
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(TERM_UNKNOWN, |(_, v)| *v)
}

fn job_start(a: &mut Arena, s: &el::JobStart) -> jobStartLog {
    let mut l = *zeroed::<jobStartLog>();
    l.jobId = ci(s.job_id);
    l.jStatus = s.j_status as c_int;
    l.jobPid = ci(s.job_pid);
    l.jobPGid = ci(s.job_pgid);
    l.hostFactor = s.host_factor as f32;
    (l.numExHosts, l.execHosts) = names(a, &s.exec_hosts);
    l.queuePreCmd = a.s(&s.queue_pre_cmd);
    l.queuePostCmd = a.s(&s.queue_post_cmd);
    l.jFlags = s.j_flags as c_int;
    l.userGroup = a.s(&s.user_group);
    l.idx = ci(s.idx);
    l.effectiveResReq = a.s(&s.effective_res_req);
    l
}

fn job_status(s: &el::JobStatus) -> jobStatusLog {
    let mut l = *zeroed::<jobStatusLog>();
    l.jobId = ci(s.job_id);
    l.jStatus = s.j_status as c_int;
    l.reason = s.reason as c_int;
    l.subreasons = s.subreasons as c_int;
    l.cpuTime = s.cpu_time as f32;
    l.endTime = s.end_time;
    if let Some(ru) = &s.rusage {
        l.ru = 1;
        l.lsfRusage = rusage(ru);
    }
    l.exitStatus = s.exit_status;
    l.idx = ci(s.idx);
    l.exitInfo = term_info(&s.term_reason);
    if let Some(m) = s.mem {
        l.maxMem = ci(m.max_mem);
        l.avgMem = ci(m.avg_mem);
    }
    l.maskedJStatus = l.jStatus;
    l
}

/// The record as an `eventRec`: `Err` (`LSBE_UNKNOWN_EVENT`, `LSBE_EVENT_FORMAT`) for
/// a record it cannot represent.
pub fn event_rec(rec: &Record) -> Result<Held<eventRec>, Fail> {
    let mut a = Arena::default();
    let mut e = zeroed::<eventRec>();
    let h = rec.header();
    fill(&mut e.version, &h.version);
    e.eventTime = h.time;
    let a = &mut a;
    let (t, log): (c_int, eventLog) = match rec {
        Record::JobNew(n) => (
            EVENT_JOB_NEW,
            eventLog {
                jobNewLog: job_new(a, n),
            },
        ),
        Record::JobModify(n) => (
            EVENT_JOB_MODIFY,
            eventLog {
                jobNewLog: job_new(a, n),
            },
        ),
        Record::JobModify2(m) => (
            EVENT_JOB_MODIFY2,
            eventLog {
                jobModLog: job_mod(a, m),
            },
        ),
        Record::JobStart(s) => (
            EVENT_JOB_START,
            eventLog {
                jobStartLog: job_start(a, s),
            },
        ),
        Record::PreExecStart(s) => (
            EVENT_PRE_EXEC_START,
            eventLog {
                jobStartLog: job_start(a, s),
            },
        ),
        Record::JobStartAccept(s) => {
            let mut l = *zeroed::<jobStartAcceptLog>();
            l.jobId = ci(s.job_id);
            l.jobPid = ci(s.job_pid);
            l.jobPGid = ci(s.job_pgid);
            l.idx = ci(s.idx);
            (
                EVENT_JOB_START_ACCEPT,
                eventLog {
                    jobStartAcceptLog: l,
                },
            )
        }
        Record::JobExecute(x) => {
            let mut l = *zeroed::<jobExecuteLog>();
            l.jobId = ci(x.job_id);
            l.execUid = ci(x.exec_uid);
            l.execHome = a.s(&x.exec_home);
            l.execCwd = a.s(&x.exec_cwd);
            l.jobPGid = ci(x.job_pgid);
            l.execUsername = a.s(&x.exec_username);
            l.jobPid = ci(x.job_pid);
            l.idx = ci(x.idx);
            (EVENT_JOB_EXECUTE, eventLog { jobExecuteLog: l })
        }
        Record::JobStatus(s) => (
            EVENT_JOB_STATUS,
            eventLog {
                jobStatusLog: job_status(s),
            },
        ),
        Record::JobSignal(s) => {
            let mut l = *zeroed::<signalLog>();
            l.userId = ci(s.user_id);
            l.jobId = ci(s.job_id);
            l.signalSymbol = a.s(&s.signal_symbol);
            l.runCount = ci(s.run_count);
            l.idx = ci(s.idx);
            fill(&mut l.userName, &s.user_name);
            (EVENT_JOB_SIGNAL, eventLog { signalLog: l })
        }
        Record::JobSwitch(s) => {
            let mut l = *zeroed::<jobSwitchLog>();
            l.userId = ci(s.user_id);
            l.jobId = ci(s.job_id);
            fill(&mut l.queue, &s.queue);
            l.idx = ci(s.idx);
            fill(&mut l.userName, &s.user_name);
            (EVENT_JOB_SWITCH, eventLog { jobSwitchLog: l })
        }
        Record::JobMove(m) => {
            let mut l = *zeroed::<jobMoveLog>();
            l.userId = ci(m.user_id);
            l.jobId = ci(m.job_id);
            l.position = ci(m.position);
            l.base = ci(m.base);
            l.idx = ci(m.idx);
            fill(&mut l.userName, &m.user_name);
            (EVENT_JOB_MOVE, eventLog { jobMoveLog: l })
        }
        Record::JobRequeue(r) => (
            EVENT_JOB_REQUEUE,
            eventLog {
                jobRequeueLog: jobRequeueLog {
                    jobId: ci(r.job_id),
                    idx: ci(r.idx),
                },
            },
        ),
        Record::JobClean(r) => (
            EVENT_JOB_CLEAN,
            eventLog {
                jobCleanLog: jobCleanLog {
                    jobId: ci(r.job_id),
                    idx: ci(r.idx),
                },
            },
        ),
        Record::JobForce(f) => {
            let mut l = *zeroed::<jobForceRequestLog>();
            l.userId = ci(f.user_id);
            (l.numExecHosts, l.execHosts) = names(a, &f.exec_hosts);
            l.jobId = ci(f.job_id);
            l.idx = ci(f.idx);
            l.options = f.options as c_int;
            fill(&mut l.userName, &f.user_name);
            (
                EVENT_JOB_FORCE,
                eventLog {
                    jobForceRequestLog: l,
                },
            )
        }
        Record::Mig(m) => {
            let mut l = *zeroed::<migLog>();
            l.jobId = ci(m.job_id);
            (l.numAskedHosts, l.askedHosts) = names(a, &m.asked_hosts);
            l.userId = ci(m.user_id);
            l.idx = ci(m.idx);
            fill(&mut l.userName, &m.user_name);
            (EVENT_MIG, eventLog { migLog: l })
        }
        Record::Chkpnt(c) => {
            let mut l = *zeroed::<chkpntLog>();
            l.jobId = ci(c.job_id);
            l.period = c.period;
            l.pid = ci(c.pid);
            l.ok = ci(c.ok);
            l.flags = ci(c.flags);
            l.idx = ci(c.idx);
            (EVENT_CHKPNT, eventLog { chkpntLog: l })
        }
        Record::JobSigact(s) => {
            let mut l = *zeroed::<sigactLog>();
            l.jobId = ci(s.job_id);
            l.period = s.period;
            l.pid = ci(s.pid);
            l.jStatus = s.j_status as c_int;
            l.reasons = s.reasons as c_int;
            l.flags = ci(s.flags);
            l.signalSymbol = a.s(&s.signal_symbol);
            l.actStatus = ci(s.act_status);
            l.idx = ci(s.idx);
            (EVENT_JOB_SIGACT, eventLog { sigactLog: l })
        }
        Record::JobForward(f) => {
            let mut l = *zeroed::<jobForwardLog>();
            l.jobId = ci(f.job_id);
            l.cluster = a.s(&f.cluster);
            l.numReserHosts = ci(f.num_reser_hosts);
            l.idx = ci(f.idx);
            l.jobRmtAttr = f.job_rmt_attr as c_int;
            (EVENT_JOB_FORWARD, eventLog { jobForwardLog: l })
        }
        Record::JobAccept(j) => {
            let mut l = *zeroed::<jobAcceptLog>();
            l.jobId = ci(j.job_id);
            l.remoteJid = crate::jobinfo::lsf_job_id(j.remote_jid, j.remote_idx);
            l.cluster = a.s(&j.cluster);
            l.idx = ci(j.idx);
            l.jobRmtAttr = j.job_rmt_attr as c_int;
            (EVENT_JOB_ACCEPT, eventLog { jobAcceptLog: l })
        }
        Record::QueueCtrl(q) => {
            let mut l = *zeroed::<queueCtrlLog>();
            l.opCode = ci(q.op_code);
            fill(&mut l.queue, &q.queue);
            l.userId = ci(q.user_id);
            fill(&mut l.userName, &q.user_name);
            fill(&mut l.message, &q.message);
            (EVENT_QUEUE_CTRL, eventLog { queueCtrlLog: l })
        }
        Record::HostCtrl(c) => {
            let mut l = *zeroed::<hostCtrlLog>();
            l.opCode = ci(c.op_code);
            fill(&mut l.host, &c.host);
            l.userId = ci(c.user_id);
            fill(&mut l.userName, &c.user_name);
            fill(&mut l.message, &c.message);
            (EVENT_HOST_CTRL, eventLog { hostCtrlLog: l })
        }
        Record::MbdStart(m) => {
            let mut l = *zeroed::<mbdStartLog>();
            fill(&mut l.master, &m.master);
            fill(&mut l.cluster, &m.cluster);
            l.numHosts = ci(m.num_hosts);
            l.numQueues = ci(m.num_queues);
            (EVENT_MBD_START, eventLog { mbdStartLog: l })
        }
        Record::MbdDie(m) => {
            let mut l = *zeroed::<mbdDieLog>();
            fill(&mut l.master, &m.master);
            l.numRemoveJobs = ci(m.num_remove_jobs);
            l.exitCode = ci(m.exit_code);
            fill(&mut l.message, &m.message);
            (EVENT_MBD_DIE, eventLog { mbdDieLog: l })
        }
        Record::LoadIndex(li) => {
            let (n, name) = names(a, &li.names);
            (
                EVENT_LOAD_INDEX,
                eventLog {
                    loadIndexLog: ManuallyDrop::new(loadIndexLog { nIdx: n, name }),
                },
            )
        }
        Record::LogSwitch(s) => (
            EVENT_LOG_SWITCH,
            eventLog {
                logSwitchLog: logSwitchLog {
                    lastJobId: ci(s.last_job_id),
                },
            },
        ),
        Record::JobFinish(f) => (
            EVENT_JOB_FINISH,
            eventLog {
                jobFinishLog: job_finish(a, f),
            },
        ),
        Record::Unknown { kind, .. } => {
            // A type this library models, whose line is not in a layout it reads (IBM
            // LSF's JOB_MODIFY2, ...), is a format error; any other type is unknown.
            let modelled = matches!(
                kind.as_str(),
                "JOB_MODIFY2" | "MIG" | "CHKPNT" | "JOB_NEW" | "JOB_FINISH"
            );
            return Err(if modelled {
                Fail::batch(
                    LSBE_EVENT_FORMAT,
                    format!("a {kind} record in a layout this library does not read"),
                )
            } else {
                Fail::batch(LSBE_UNKNOWN_EVENT, format!("record type {kind}"))
            });
        }
    };
    e.r#type = t;
    e.eventLog = log;
    Ok(Held {
        value: e,
        arena: std::mem::take(a),
    })
}
