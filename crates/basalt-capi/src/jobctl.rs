//! Job control: `lsb_signaljob`, `lsb_forcekilljob`, `lsb_deletejob`,
//! `lsb_killbulkjobs`, `lsb_requeuejob`, `lsb_mig`, `lsb_chkpntjob`, `lsb_switchjob`,
//! `lsb_movejob` — the requests of `bkill`, `bstop`, `bresume`, `brequeue`, `bmig`,
//! `bchkpnt`, `bswitch`, `btop`/`bbot`. Each returns 0, or -1 with `lsberrno` set from
//! mbatchd's answer for the job (`LSBE_NO_JOB`, `LSBE_JOB_FINISH`, `LSBE_PERMISSION`,
//! ...).

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::jobinfo::job_ref;
use crate::mem::{given, str_array};
use crate::session::{finish, with_mbatchd};
use basalt_proto::mbatchd::{
    JobCtlReply, JobRef, MoveRequest, SignalKind, SignalRequest, SwitchRequest,
};

/// The first job mbatchd refused, as LSF's error.
pub fn check(reply: JobCtlReply) -> Result<JobCtlReply, Fail> {
    if let Some(bad) = reply.results.iter().find(|r| !r.ok) {
        // Fail::from_status matches LSF's texts (and Basalt's words for them) first.
        return Err(Fail::from_status(&tonic::Status::failed_precondition(
            bad.message.clone(),
        )));
    }
    Ok(reply)
}

fn ids(id: i64) -> Result<Vec<JobRef>, Fail> {
    if id <= 0 {
        return Err(Fail::batch(LSBE_BAD_JOBID, ""));
    }
    Ok(vec![job_ref(id)])
}

fn signal(req: SignalRequest) -> Result<(), Fail> {
    with_mbatchd(|mut c, _| async move {
        let r = c.signal(req).await.map_err(|s| Fail::from_status(&s))?;
        check(r.into_inner()).map(|_| ())
    })
}

/// The request for a signal: SIGKILL is `bkill` (LSF's kill sequence), SIGSTOP/SIGTSTP
/// `bstop`, SIGCONT `bresume`, any other `bkill -s`.
fn signal_request(ids: Vec<JobRef>, sig: i32) -> Result<SignalRequest, Fail> {
    if !(1..=64).contains(&sig) {
        return Err(Fail::batch(LSBE_BAD_SIGNAL, ""));
    }
    let (kind, signal) = match sig {
        libc::SIGKILL => (SignalKind::Kill, String::new()),
        libc::SIGSTOP | libc::SIGTSTP => (SignalKind::Stop, String::new()),
        libc::SIGCONT => (SignalKind::Resume, String::new()),
        n => (SignalKind::Signal, n.to_string()),
    };
    Ok(SignalRequest {
        ids,
        kind: kind as i32,
        signal,
        ..Default::default()
    })
}

/// `int lsb_signaljob(LS_LONG_INT jobId, int sigValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_signaljob(job_id: i64, sig: libc::c_int) -> libc::c_int {
    let r = ids(job_id)
        .and_then(|ids| signal_request(ids, sig))
        .and_then(signal);
    finish(r.map(|()| 0), -1)
}

/// `int lsb_forcekilljob(LS_LONG_INT jobId)`: `bkill -r`, the job removed without
/// waiting for its host.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_forcekilljob(job_id: i64) -> libc::c_int {
    let r = ids(job_id).and_then(|ids| {
        signal(SignalRequest {
            ids,
            kind: SignalKind::Kill as i32,
            remove: true,
            ..Default::default()
        })
    });
    finish(r.map(|()| 0), -1)
}

/// `int lsb_deletejob(LS_LONG_INT jobId, int times, int options)`: kill the job
/// (`FORCE_KILL_JOB`: `bkill -r`). `times` is how often LSF would re-send the kill;
/// Basalt's kill sequence ends the job by itself, so any value is taken as once.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_deletejob(
    job_id: i64,
    _times: libc::c_int,
    options: libc::c_int,
) -> libc::c_int {
    let r = ids(job_id).and_then(|ids| {
        signal(SignalRequest {
            ids,
            kind: SignalKind::Kill as i32,
            remove: options & FORCE_KILL_JOB != 0,
            ..Default::default()
        })
    });
    finish(r.map(|()| 0), -1)
}

/// `int lsb_killbulkjobs(struct signalBulkJobs *)`: signal every listed job
/// (`signal` 0: SIGKILL); `KILL_ALL_JOBS` with no job listed: every job of the caller.
///
/// # Safety
/// `s` points to a valid `struct signalBulkJobs` whose `jobs` has `njobs` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_killbulkjobs(s: *mut ffi::signalBulkJobs) -> libc::c_int {
    // SAFETY: the caller's promise.
    let r = match unsafe { s.as_ref() } {
        None => Err(Fail::batch(LSBE_BAD_ARG, "no request")),
        Some(s) => {
            let list: Vec<JobRef> = if s.jobs.is_null() || s.njobs <= 0 {
                Vec::new()
            } else {
                // SAFETY: njobs entries.
                unsafe { std::slice::from_raw_parts(s.jobs, s.njobs as usize) }
                    .iter()
                    .map(|id| job_ref(*id))
                    .collect()
            };
            if list.is_empty() && s.flags & KILL_ALL_JOBS == 0 {
                Err(Fail::batch(
                    LSBE_BAD_ARG,
                    "no job listed and KILL_ALL_JOBS not set",
                ))
            } else {
                let list = if list.is_empty() {
                    vec![JobRef::default()]
                } else {
                    list
                };
                let sig = if s.signal == 0 {
                    libc::SIGKILL
                } else {
                    s.signal
                };
                signal_request(list, sig).and_then(|mut req| {
                    req.remove = s.flags & FORCE_KILL_JOB != 0;
                    signal(req)
                })
            }
        }
    };
    finish(r.map(|()| 0), -1)
}

/// `int lsb_requeuejob(struct jobrequeue *)`: `brequeue`; `status` JOB_STAT_PSUSP
/// requeues on hold (`-H`); `options` REQUEUE_DONE/EXIT/RUN choose the jobs (none: RUN
/// and EXIT... as brequeue's default: all three).
///
/// # Safety
/// `r` points to a valid `struct jobrequeue`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_requeuejob(r: *mut ffi::jobrequeue) -> libc::c_int {
    // SAFETY: the caller's promise.
    let res = match unsafe { r.as_ref() } {
        None => Err(Fail::batch(LSBE_BAD_ARG, "no request")),
        Some(q) => ids(q.jobId).and_then(|ids| {
            let o = if q.options == 0 {
                REQUEUE_DONE | REQUEUE_EXIT | REQUEUE_RUN
            } else {
                q.options
            };
            signal(SignalRequest {
                ids,
                kind: SignalKind::Requeue as i32,
                hold: q.status == JOB_STAT_PSUSP,
                requeue_done: o & REQUEUE_DONE != 0,
                requeue_exit: o & REQUEUE_EXIT != 0,
                requeue_running: o & REQUEUE_RUN != 0,
                ..Default::default()
            })
        }),
    };
    finish(res.map(|()| 0), -1)
}

/// `int lsb_mig(struct submig *, int *badHostIdx)`: `bmig [-m hosts]`.
///
/// # Safety
/// `m` points to a valid `struct submig`; `bad` is NULL or points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_mig(m: *mut ffi::submig, bad: *mut libc::c_int) -> libc::c_int {
    // SAFETY: the caller's promise.
    if let Some(b) = unsafe { bad.as_mut() } {
        *b = 0;
    }
    // SAFETY: the caller's promise.
    let r = match unsafe { m.as_ref() } {
        None => Err(Fail::batch(LSBE_BAD_ARG, "no request")),
        Some(m) => ids(m.jobId).and_then(|ids| {
            signal(SignalRequest {
                ids,
                kind: SignalKind::Migrate as i32,
                // SAFETY: askedHosts has numAskedHosts entries.
                migrate_hosts: unsafe { str_array(m.askedHosts, m.numAskedHosts) },
                chkpnt_force: m.options & LSB_CHKPNT_FORCE != 0,
                ..Default::default()
            })
        }),
    };
    finish(r.map(|()| 0), -1)
}

/// `int lsb_chkpntjob(LS_LONG_INT jobId, time_t period, int options)`: `bchkpnt`
/// (`period` > 0: the new period in seconds; `LSB_CHKPNT_KILL`, `LSB_CHKPNT_FORCE`).
#[unsafe(no_mangle)]
pub extern "C" fn lsb_chkpntjob(
    job_id: i64,
    period: libc::time_t,
    options: libc::c_int,
) -> libc::c_int {
    let r = ids(job_id).and_then(|ids| {
        signal(SignalRequest {
            ids,
            kind: SignalKind::Chkpnt as i32,
            chkpnt_kill: options & LSB_CHKPNT_KILL != 0,
            chkpnt_force: options & LSB_CHKPNT_FORCE != 0,
            chkpnt_period: (period > 0).then_some(period),
            ..Default::default()
        })
    });
    finish(r.map(|()| 0), -1)
}

/// `int lsb_switchjob(LS_LONG_INT jobId, char *queue)`: `bswitch`.
///
/// # Safety
/// `queue` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_switchjob(job_id: i64, queue: *const libc::c_char) -> libc::c_int {
    // SAFETY: the caller's promise.
    let q = unsafe { given(queue) };
    let r = match q {
        None => Err(Fail::batch(LSBE_BAD_QUEUE, "")),
        Some(queue) => ids(job_id).and_then(|ids| {
            with_mbatchd(|mut c, _| async move {
                let r = c
                    .switch(SwitchRequest { ids, queue })
                    .await
                    .map_err(|s| Fail::from_status(&s))?;
                check(r.into_inner()).map(|_| ())
            })
        }),
    };
    finish(r.map(|()| 0), -1)
}

/// `int lsb_movejob(LS_LONG_INT jobId, int *position, int opCode)`: `btop`
/// (`TO_TOP`) or `bbot` (`TO_BOTTOM`) to `*position` (1 = first); `*position` is set
/// to where the job is then.
///
/// # Safety
/// `position` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_movejob(
    job_id: i64,
    position: *mut libc::c_int,
    op: libc::c_int,
) -> libc::c_int {
    // SAFETY: the caller's promise.
    let pos = unsafe { position.as_mut() };
    let r = match (&pos, op) {
        (None, _) => Err(Fail::batch(LSBE_BAD_ARG, "no position")),
        (Some(p), _) if **p < 1 => Err(Fail::batch(LSBE_BAD_ARG, "position must be 1 or more")),
        (Some(_), o) if o != TO_TOP && o != TO_BOTTOM => Err(Fail::batch(
            LSBE_BAD_ARG,
            "opCode must be TO_TOP or TO_BOTTOM",
        )),
        (Some(p), o) => {
            let position = **p as u32;
            ids(job_id).and_then(|mut ids| {
                let id = ids.pop();
                with_mbatchd(|mut c, _| async move {
                    let r = c
                        .r#move(MoveRequest {
                            id,
                            position,
                            from_bottom: o == TO_BOTTOM,
                        })
                        .await
                        .map_err(|s| Fail::from_status(&s))?;
                    let r = check(r.into_inner())?;
                    Ok(r.results
                        .first()
                        .and_then(|x| x.detail.trim().parse::<i32>().ok()))
                })
            })
        }
    };
    let r = r.map(|new| {
        if let (Some(p), Some(n)) = (pos, new) {
            *p = n;
        }
        0
    });
    finish(r, -1)
}
