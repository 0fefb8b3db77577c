//! `lsb_openjobinfo`, `lsb_openjobinfo_a`, `lsb_readjobinfo`, `lsb_closejobinfo`: the
//! jobs mbatchd lists (as `bjobs` asks for them), read one at a time as LSF's `struct
//! jobInfoEnt`. One listing is open per process, as in LSF; the entry `lsb_readjobinfo`
//! returns is valid until the next `lsb_readjobinfo` or `lsb_closejobinfo`.
//!
//! Like LSF's, a listing keeps its connection to mbatchd open until it is closed, and
//! reads mbatchd's pages as the program reads the jobs: `lsb_openjobinfo` returns the
//! count mbatchd gives with the first page, and only about two pages are held at a time,
//! so listing a million jobs holds no million jobs in the program. (Jobs cleaned while
//! the listing is read are left out: the reads may end before the count. An mbatchd that
//! gives no count is read whole at open.)

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::mem::{Arena, Held, given, zeroed};
use basalt_proto::mbatchd::{JobInfo, JobRef, JobsRequest};
use std::collections::VecDeque;
use std::sync::Mutex;

/// The open listing: the pages still to read come from `stream`, driven by `rt` (a
/// current-thread runtime: nothing runs between the program's calls).
struct Listing {
    jobs: VecDeque<JobInfo>,
    /// How many jobs are still to be read (mbatchd's count less those read).
    left: usize,
    stream: Option<tonic::Streaming<basalt_proto::mbatchd::JobsReply>>,
    client:
        Option<basalt_proto::mbatchd::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>>,
    rt: Option<tokio::runtime::Runtime>,
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

/// Open a listing: the first page (and the count), or every page from an mbatchd that
/// gives no count, or for `last_only`. `Err(LSBE_NO_JOB)` when nothing matches.
fn open_listing(req: JobsRequest, last_only: bool) -> Result<Listing, Fail> {
    let config = crate::session::config()?;
    let rt = crate::session::runtime()?;
    let (client, mut stream, first) = rt.block_on(async {
        let mut client = crate::session::mbatchd(&config).await?;
        let mut stream = client
            .jobs_pages(req)
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        let first = stream.message().await.map_err(|s| Fail::from_status(&s))?;
        Ok::<_, Fail>((client, stream, first))
    })?;
    let first = first.unwrap_or_default();
    let mut jobs: VecDeque<JobInfo> = first.jobs.into();
    let (left, stream) = match first.total {
        Some(total) if !last_only => (total as usize, Some(stream)),
        _ => {
            // Read it whole: no count to return otherwise.
            rt.block_on(async {
                while let Some(page) = stream.message().await.map_err(|s| Fail::from_status(&s))? {
                    jobs.extend(page.jobs);
                }
                Ok::<_, Fail>(())
            })?;
            if last_only && let Some(last) = jobs.iter().map(|j| j.submit_time).max() {
                jobs.retain(|j| j.submit_time == last);
                jobs.truncate(1);
            }
            (jobs.len(), None)
        }
    };
    if left == 0 {
        return Err(Fail::batch(LSBE_NO_JOB, ""));
    }
    Ok(Listing {
        jobs,
        left,
        stream,
        client: Some(client),
        rt: Some(rt),
        head: None,
        current: None,
    })
}

impl Listing {
    /// The next job, reading the next page when the held ones are used up.
    fn next(&mut self) -> Result<Option<JobInfo>, Fail> {
        loop {
            if let Some(j) = self.jobs.pop_front() {
                self.left = self.left.saturating_sub(1);
                return Ok(Some(j));
            }
            let (Some(stream), Some(rt)) = (self.stream.as_mut(), self.rt.as_ref()) else {
                return Ok(None);
            };
            match rt
                .block_on(stream.message())
                .map_err(|s| Fail::from_status(&s))?
            {
                Some(page) => self.jobs.extend(page.jobs),
                None => {
                    self.stream = None;
                    self.left = 0;
                    return Ok(None);
                }
            }
        }
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        // The stream and the client before the runtime they were made on.
        self.stream = None;
        self.client = None;
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
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
    // One listing per process: opening another closes the one open.
    lsb_closejobinfo();
    let listing = open_listing(req, options & LAST_JOB != 0)?;
    let n = listing.left;
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
        let l = g
            .as_mut()
            .ok_or_else(|| Fail::batch(LSBE_NO_JOB, "no job listing is open"))?;
        // The ids need every job: read the rest of the pages now.
        let mut all: VecDeque<JobInfo> = VecDeque::new();
        while let Some(j) = l.next()? {
            all.push_back(j);
        }
        l.left = all.len();
        let mut head = zeroed::<ffi::jobInfoHead>();
        let mut arena = Arena::default();
        head.numJobs = all.len() as i32;
        head.jobIds = arena.longs(all.iter().map(|j| lsf_job_id(j.job_id, j.idx)).collect());
        l.jobs = all;
        let h = l.head.insert(Held { value: head, arena });
        Ok(&mut *h.value as *mut ffi::jobInfoHead)
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
        let j = l.next()?.ok_or_else(|| Fail::batch(LSBE_EOF, ""))?;
        let held = l.current.insert(entry(&j));
        Ok((&mut *held.value as *mut ffi::jobInfoEnt, l.left))
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
