//! `lsb_openjobinfo`, `lsb_openjobinfo_a`, `lsb_readjobinfo`, `lsb_closejobinfo`: the
//! jobs mbatchd lists (as `bjobs` asks for them, page by page), read one at a time as
//! LSF's `struct jobInfoEnt`. One listing is open per process, as in LSF; the entry
//! `lsb_readjobinfo` returns is valid until the next `lsb_readjobinfo` or
//! `lsb_closejobinfo`.

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::mem::{Arena, Held, given, zeroed};
use basalt_proto::mbatchd::{JobInfo, JobRef, JobsRequest};
use std::collections::VecDeque;
use std::sync::Mutex;

#[derive(Default)]
struct Listing {
    jobs: VecDeque<JobInfo>,
    head: Option<Held<ffi::jobInfoHead>>,
    current: Option<Held<ffi::jobInfoEnt>>,
}

static LISTING: Mutex<Option<Listing>> = Mutex::new(None);

/// LSF's job id of a job or array element: the index in the upper 32 bits.
pub fn lsf_job_id(job_id: u64, idx: u32) -> i64 {
    ((u64::from(idx) << 32) | (job_id & 0xffff_ffff)) as i64
}

/// A job reference from LSF's 64-bit id (`LSB_ARRAY_IDX` / `LSB_ARRAY_JOBID`).
pub fn job_ref(id: i64) -> JobRef {
    let idx = ((id as u64) >> 32) as u32 & 0xffff;
    JobRef {
        job_id: (id as u64) & 0xffff_ffff,
        idx,
        has_idx: idx != 0,
    }
}

/// The state bits of JobsRequest.states for lsb_openjobinfo's options.
fn states(options: i32) -> u32 {
    use basalt_core::job::status as stat;
    let mut s = 0;
    if options & ALL_JOB != 0 {
        return stat::PEND
            | stat::PSUSP
            | stat::RUN
            | stat::SSUSP
            | stat::USUSP
            | stat::EXIT
            | stat::DONE
            | stat::UNKWN;
    }
    if options & DONE_JOB != 0 {
        s |= stat::EXIT | stat::DONE;
    }
    if options & PEND_JOB != 0 {
        s |= stat::PEND | stat::PSUSP;
    }
    if options & SUSP_JOB != 0 {
        s |= stat::PSUSP | stat::SSUSP | stat::USUSP;
    }
    if options & RUN_JOB != 0 {
        s |= stat::RUN;
    }
    if options & CUR_JOB != 0 && s != 0 {
        s |= stat::PEND | stat::PSUSP | stat::RUN | stat::SSUSP | stat::USUSP | stat::UNKWN;
    }
    s
}

/// Ask mbatchd for the jobs; `Err(LSBE_NO_JOB)` when none match.
fn fetch(req: JobsRequest, last_only: bool) -> Result<Vec<JobInfo>, Fail> {
    let mut jobs = crate::session::with_mbatchd(|mut client, _| async move {
        let mut out = Vec::new();
        let mut stream = client
            .jobs_pages(req)
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        while let Some(page) = stream.message().await.map_err(|s| Fail::from_status(&s))? {
            out.extend(page.jobs);
        }
        Ok(out)
    })?;
    if last_only && let Some(last) = jobs.iter().map(|j| j.submit_time).max() {
        jobs.retain(|j| j.submit_time == last);
        jobs.truncate(1);
    }
    if jobs.is_empty() {
        return Err(Fail::batch(LSBE_NO_JOB, ""));
    }
    Ok(jobs)
}

/// # Safety
/// The strings are NULL or NUL-terminated.
unsafe fn open(
    job_id: i64,
    name: *const libc::c_char,
    user: *const libc::c_char,
    queue: *const libc::c_char,
    host: *const libc::c_char,
    options: i32,
) -> Result<usize, Fail> {
    if job_id < 0 {
        return Err(Fail::batch(LSBE_BAD_JOBID, ""));
    }
    // SAFETY: the caller's promise.
    let (name, user, queue, host) =
        unsafe { (given(name), given(user), given(queue), given(host)) };
    let req = JobsRequest {
        ids: if job_id == 0 {
            Vec::new()
        } else {
            vec![job_ref(job_id)]
        },
        user: user.unwrap_or_default(),
        queue: queue.unwrap_or_default(),
        host: host.unwrap_or_default(),
        job_name: name.unwrap_or_default(),
        states: states(options),
        reason_hosts: false,
    };
    let jobs = fetch(req, options & LAST_JOB != 0)?;
    let n = jobs.len();
    let mut head = zeroed::<ffi::jobInfoHead>();
    let mut arena = Arena::default();
    head.numJobs = n as i32;
    head.jobIds = arena.longs(jobs.iter().map(|j| lsf_job_id(j.job_id, j.idx)).collect());
    let listing = Listing {
        jobs: jobs.into(),
        head: Some(Held { value: head, arena }),
        current: None,
    };
    *LISTING
        .lock()
        .map_err(|_| Fail::batch(LSBE_SYS_CALL, "job listing lock poisoned"))? = Some(listing);
    Ok(n)
}

/// `int lsb_openjobinfo(jobId, jobName, userName, queueName, hostName, options)`: how
/// many jobs match (read them with `lsb_readjobinfo`), or -1 (`LSBE_NO_JOB` when none).
/// `userName` NULL is the caller, `"all"` everybody; `jobId` 0 any job.
///
/// # Safety
/// The strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_openjobinfo(
    job_id: i64,
    name: *const libc::c_char,
    user: *const libc::c_char,
    queue: *const libc::c_char,
    host: *const libc::c_char,
    options: libc::c_int,
) -> libc::c_int {
    // SAFETY: passed on.
    let r = unsafe { open(job_id, name, user, queue, host, options) };
    crate::session::finish(r.map(|n| n as i32), -1)
}

/// `struct jobInfoHead *lsb_openjobinfo_a(...)`: as `lsb_openjobinfo`, with the ids of
/// the jobs; valid until `lsb_closejobinfo`. NULL on failure.
///
/// # Safety
/// The strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_openjobinfo_a(
    job_id: i64,
    name: *const libc::c_char,
    user: *const libc::c_char,
    queue: *const libc::c_char,
    host: *const libc::c_char,
    options: libc::c_int,
) -> *mut ffi::jobInfoHead {
    // SAFETY: passed on.
    let r = unsafe { open(job_id, name, user, queue, host, options) }.and_then(|_| {
        let mut g = LISTING
            .lock()
            .map_err(|_| Fail::batch(LSBE_SYS_CALL, "job listing lock poisoned"))?;
        Ok(g.as_mut()
            .and_then(|l| l.head.as_mut())
            .map_or(std::ptr::null_mut(), |h| &mut *h.value as *mut _))
    });
    crate::session::finish(r, std::ptr::null_mut())
}

/// `struct jobInfoEnt *lsb_readjobinfo(int *more)`: the next job of the open listing
/// (`*more`: how many are left after it), or NULL (`LSBE_EOF` at the end,
/// `LSBE_NO_JOB` when nothing is open).
///
/// # Safety
/// `more` is NULL or points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_readjobinfo(more: *mut libc::c_int) -> *mut ffi::jobInfoEnt {
    let r = (|| {
        let mut g = LISTING
            .lock()
            .map_err(|_| Fail::batch(LSBE_SYS_CALL, "job listing lock poisoned"))?;
        let l = g
            .as_mut()
            .ok_or_else(|| Fail::batch(LSBE_NO_JOB, "no job listing is open"))?;
        let j = l
            .jobs
            .pop_front()
            .ok_or_else(|| Fail::batch(LSBE_EOF, ""))?;
        let held = l.current.insert(entry(&j));
        Ok((&mut *held.value as *mut ffi::jobInfoEnt, l.jobs.len()))
    })();
    // SAFETY: the caller's promise.
    if let Some(m) = unsafe { more.as_mut() } {
        *m = r.as_ref().map_or(0, |(_, left)| *left as i32);
    }
    crate::session::finish(r.map(|(p, _)| p), std::ptr::null_mut())
}

/// `void lsb_closejobinfo(void)`: free the listing.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_closejobinfo() {
    if let Ok(mut g) = LISTING.lock() {
        *g = None;
    }
}

/// A job as LSF's `jobInfoEnt`.
pub fn entry(j: &JobInfo) -> Held<ffi::jobInfoEnt> {
    let mut a = Arena::default();
    let mut e = zeroed::<ffi::jobInfoEnt>();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    e.jobId = lsf_job_id(j.job_id, j.idx);
    e.user = a.s(&j.user);
    e.status = status_word(j);
    let reasons = crate::reasons::reason_table(j);
    e.numReasons = reasons.len() as i32;
    e.reasonTb = a.ints(reasons);
    e.reasons = j.reasons as i32;
    e.subreasons = j.subreasons as i32;
    e.jobPid = j.pid as i32;
    e.submitTime = j.submit_time;
    e.reserveTime = j.reserve_time;
    e.startTime = j.start_time;
    e.endTime = j.end_time;
    let ran = if j.start_time > 0 {
        let until = if j.end_time > 0 { j.end_time } else { now };
        (until - j.start_time).max(0)
    } else {
        0
    };
    e.runTime = ran as i32;
    e.duration = (ran / 60) as i32;
    e.cpuTime = j.cpu_time as f32;
    e.cwd = a.s(&j.cwd);
    e.subHomeDir = a.s(&j.exec_home);
    e.fromHost = a.s(&j.from_host);
    e.numExHosts = j.exec_hosts.len() as i32;
    e.exHosts = if j.exec_hosts.is_empty() {
        std::ptr::null_mut()
    } else {
        a.strv(&j.exec_hosts)
    };
    e.cpuFactor = 1.0;
    fill_submit(&mut e.submit, j, &mut a);
    e.exitStatus = j.exit_status;
    e.execUid = j.uid as i32;
    e.execHome = a.s(&j.exec_home);
    e.execCwd = a.s(&j.exec_cwd);
    e.execUsername = a.s(if j.exec_user.is_empty() {
        &j.user
    } else {
        &j.exec_user
    });
    e.jRusageUpdateTime = j.rusage_time;
    e.runRusage.mem = clamp_kb(j.mem_kb);
    e.runRusage.swap = clamp_kb(j.swap_kb);
    e.runRusage.utime = j.cpu_time as i32;
    e.runRusage.stime = 0;
    e.runRusage.npids = j.pids.len() as i32;
    if !j.pids.is_empty() {
        let mut pids: Vec<ffi::pidInfo> = j
            .pids
            .iter()
            .map(|p| ffi::pidInfo {
                pid: *p as i32,
                ppid: 0,
                pgid: j.pgid as i32,
                jobid: j.job_id as i32,
            })
            .collect();
        e.runRusage.pidInfo = pids.as_mut_ptr();
        a.keep(pids);
    }
    if j.pgid != 0 {
        e.runRusage.npgids = 1;
        e.runRusage.pgid = a.ints(vec![j.pgid as i32]);
    }
    e.jType = JGRP_NODE_JOB;
    e.jName = a.s(&j.job_name);
    e.maxMem = clamp_kb(j.max_mem_kb);
    e.avgMem = clamp_kb(j.avg_mem_kb);
    e.app = a.s_or_null(&j.app);
    e.queue = a.s(&j.queue);
    e.projectName = a.s_or_null(&j.project);
    Held { value: e, arena: a }
}

fn clamp_kb(v: u64) -> i32 {
    v.min(i32::MAX as u64) as i32
}

/// LSF's status word: the state, plus PDONE/PERR for a finished job's post-execution.
fn status_word(j: &JobInfo) -> i32 {
    (j.state | j.post_exec_status) as i32
}

/// The job's `submit` part: what it was submitted with, in the header's option bits.
fn fill_submit(s: &mut ffi::submit, j: &JobInfo, a: &mut Arena) {
    use basalt_core::job::sub2;
    // options: Basalt keeps LSF's SUB_* bits as they are.
    s.options = j.options as i32;
    let mut o2 = 0;
    for (bit, ours) in [
        (SUB2_HOLD, sub2::HOLD),
        (SUB2_JOB_CMD_SPOOL, sub2::JOB_CMD_SPOOL),
        (SUB2_IN_FILE_SPOOL, sub2::IN_FILE_SPOOL),
        (SUB2_OVERWRITE_OUT_FILE, sub2::OUT_OVERWRITE),
        (SUB2_OVERWRITE_ERR_FILE, sub2::ERR_OVERWRITE),
    ] {
        if j.options2 & ours != 0 {
            o2 |= bit;
        }
    }
    s.options2 = o2;
    let mut o3 = 0;
    if !j.app.is_empty() {
        o3 |= SUB3_APP;
    }
    if !j.spec_cwd.is_empty() {
        o3 |= SUB3_CWD;
    }
    s.options3 = o3;
    s.jobName = a.s_or_null(&j.job_name);
    s.queue = a.s(&j.queue);
    s.numAskedHosts = j.asked_hosts.len() as i32;
    s.askedHosts = if j.asked_hosts.is_empty() {
        std::ptr::null_mut()
    } else {
        a.strv(&j.asked_hosts)
    };
    s.resReq = a.s_or_null(&j.res_req);
    s.rLimits = [DEFAULT_RLIMIT; ffi::LSF_RLIM_NLIMITS];
    if j.run_limit >= 0 {
        s.rLimits[LSF_RLIMIT_RUN as usize] = j.run_limit.min(i64::from(i32::MAX)) as i32;
    }
    s.numProcessors = j.num_processors as i32;
    s.maxNumProcessors = j.max_processors as i32;
    s.dependCond = a.s_or_null(&j.depend_cond);
    s.beginTime = j.begin_time;
    s.termTime = j.term_time;
    s.inFile = a.s_or_null(&j.in_file);
    s.outFile = a.s_or_null(&j.out_file);
    s.errFile = a.s_or_null(&j.err_file);
    s.command = a.s(&j.command);
    s.chkpntDir = a.s_or_null(&j.chkpnt_dir);
    s.chkpntPeriod = j.chkpnt_period;
    s.projectName = a.s_or_null(&j.project);
    s.loginShell = a.s_or_null(&j.login_shell);
    s.userGroup = a.s_or_null(&j.user_group);
    s.app = a.s_or_null(&j.app);
    s.cwd = a.s_or_null(&j.spec_cwd);
}
