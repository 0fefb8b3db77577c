//! `lsb_submit`: LSF's `struct submit` read into the same options `bsub` builds from
//! its command line ([`basalt_cli::batch::bsub::BsubOpts`]), then the same path: the
//! esubs, the submitter's environment and directory, mbatchd's bounds, the submission
//! token and its retries. What `bsub` accepts and ignores is accepted and ignored here
//! (job groups, service classes, license projects, user priority, runtime estimates,
//! thread limits); what `bsub` refuses as not supported is refused with the option's
//! name in `lsb_sysmsg()` (`LSBE_BAD_ARG`). mbatchd's answer is awaited as bsub awaits
//! it (the submission token makes a resend safe), bounded by `LSB_NTRIES` /
//! `BASALT_CMD_TIMEOUT`, else 60 s: never reached, `LSBE_CONN_REFUSED`; sent but not
//! answered, `LSBE_CONN_TIMEOUT` with the token in `lsb_sysmsg()`.

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::mem::{given, str_array};
use basalt_cli::batch::bsub::{BsubOpts, Chkpnt, JobCommand};
use std::sync::Mutex;

/// Read a `struct submit` into bsub's options and the job's command.
///
/// # Safety
/// `r`'s pointers are NULL or valid as LSF documents each field.
pub unsafe fn read(r: &ffi::submit) -> Result<(BsubOpts, JobCommand), Fail> {
    // SAFETY: passed on.
    unsafe { read_for(r, true) }
}

/// [`read`]; `need_command` false for a change (`lsb_modify`), whose command is
/// `newCommand` when `SUB2_MODIFY_CMD` says so.
///
/// # Safety
/// As [`read`].
pub unsafe fn read_for(
    r: &ffi::submit,
    need_command: bool,
) -> Result<(BsubOpts, JobCommand), Fail> {
    let bad = |what: &str| Fail::batch(LSBE_BAD_ARG, what.to_owned());
    let (o1, o2, o3) = (r.options, r.options2, r.options3);
    let has = |v: i32, bit: i32| v & bit != 0;
    let mut o = BsubOpts::default();
    // SAFETY (for the whole function): the caller's promise on r's fields.
    unsafe {
        let command = if need_command {
            given(r.command).ok_or_else(|| bad("no command (submit.command)"))?
        } else {
            String::new()
        };
        let not_supported: &[(i32, i32, &str)] = &[
            (o1, SUB_INTERACTIVE, "SUB_INTERACTIVE (-I)"),
            (o1, SUB_PTY, "SUB_PTY (-Ip)"),
            (o1, SUB_PTY_SHELL, "SUB_PTY_SHELL (-Is)"),
            (o1, SUB_WINDOW_SIG, "SUB_WINDOW_SIG (-s)"),
            (o1, SUB_HOST_SPEC, "SUB_HOST_SPEC (-c/-W host_spec)"),
            (o1, SUB_RESTART, "SUB_RESTART (use brestart)"),
            (o1, SUB_RESTART_FORCE, "SUB_RESTART_FORCE (use brestart)"),
            (o1, SUB_MODIFY, "SUB_MODIFY (use lsb_modify)"),
            (o1, SUB_MODIFY_ONCE, "SUB_MODIFY_ONCE (use lsb_modify)"),
            (o1, SUB_EXCEPT, "SUB_EXCEPT (-X)"),
            (o1, SUB_TIME_EVENT, "SUB_TIME_EVENT (-wt)"),
            (o2, SUB2_BSUB_BLOCK, "SUB2_BSUB_BLOCK (-K)"),
            (o2, SUB2_IN_FILE_SPOOL, "SUB2_IN_FILE_SPOOL (-is)"),
            (
                o2,
                SUB2_WARNING_TIME_PERIOD,
                "SUB2_WARNING_TIME_PERIOD (-wt)",
            ),
            (o2, SUB2_WARNING_ACTION, "SUB2_WARNING_ACTION (-wa)"),
            (o2, SUB2_MODIFY_CMD, "SUB2_MODIFY_CMD (use lsb_modify)"),
            (o2, SUB2_TSJOB, "SUB2_TSJOB"),
            (o2, SUB2_LSF2TP, "SUB2_LSF2TP"),
            (o3, SUB3_MIG_THRESHOLD, "SUB3_MIG_THRESHOLD (-mig)"),
        ];
        if let Some((_, _, name)) = not_supported.iter().find(|(v, bit, _)| has(*v, *bit)) {
            return Err(bad(&format!(
                "{name}: this LSF option is not supported by Basalt yet"
            )));
        }
        if r.jsdlFlag != 0 || given(r.jsdlDoc).is_some() {
            return Err(bad(
                "jsdlDoc (-jsdl): this LSF option is not supported by Basalt yet",
            ));
        }
        let text = |set: bool, p: *mut libc::c_char, what: &str| -> Result<Option<String>, Fail> {
            if !set {
                return Ok(None);
            }
            given(p)
                .map(Some)
                .ok_or_else(|| bad(&format!("{what} is set but empty")))
        };
        o.job_name = text(has(o1, SUB_JOB_NAME), r.jobName, "SUB_JOB_NAME")?;
        o.queue = text(has(o1, SUB_QUEUE), r.queue, "SUB_QUEUE")?;
        if has(o1, SUB_HOST) {
            let hosts = str_array(r.askedHosts, r.numAskedHosts);
            if hosts.is_empty() {
                return Err(bad("SUB_HOST is set but askedHosts is empty"));
            }
            o.hosts = Some(hosts);
        }
        o.in_file = text(has(o1, SUB_IN_FILE), r.inFile, "SUB_IN_FILE")?;
        o.out = text(has(o1, SUB_OUT_FILE), r.outFile, "SUB_OUT_FILE")?
            .map(|p| (p, has(o2, SUB2_OVERWRITE_OUT_FILE)));
        o.err = text(has(o1, SUB_ERR_FILE), r.errFile, "SUB_ERR_FILE")?
            .map(|p| (p, has(o2, SUB2_OVERWRITE_ERR_FILE)));
        o.exclusive = has(o1, SUB_EXCLUSIVE);
        o.notify_end = has(o1, SUB_NOTIFY_END);
        o.notify_begin = has(o1, SUB_NOTIFY_BEGIN);
        o.user_group = text(has(o1, SUB_USER_GROUP), r.userGroup, "SUB_USER_GROUP")?;
        if has(o1, SUB_CHKPNT_DIR) {
            let dir = text(true, r.chkpntDir, "SUB_CHKPNT_DIR")?.unwrap_or_default();
            let period =
                (has(o1, SUB_CHKPNT_PERIOD) && r.chkpntPeriod > 0).then_some(r.chkpntPeriod);
            let init = (has(o3, SUB3_INIT_CHKPNT_PERIOD) && r.initChkpntPeriod > 0)
                .then_some(i64::from(r.initChkpntPeriod));
            o.chkpnt = Some(Chkpnt {
                dir,
                period,
                init,
                method: None,
            });
        } else if has(o1, SUB_CHKPNT_PERIOD) {
            return Err(bad("SUB_CHKPNT_PERIOD without SUB_CHKPNT_DIR"));
        }
        o.rerunnable = has(o1, SUB_RERUNNABLE) && !has(o3, SUB3_NOT_RERUNNABLE);
        o.depend = text(has(o1, SUB_DEPEND_COND), r.dependCond, "SUB_DEPEND_COND")?;
        if let Some(rr) = text(has(o1, SUB_RES_REQ), r.resReq, "SUB_RES_REQ")? {
            o.res_req.push(rr);
        }
        if has(o1, SUB_OTHER_FILES) {
            o.files = read_files(r)?;
        }
        o.pre_exec = text(has(o1, SUB_PRE_EXEC), r.preExecCmd, "SUB_PRE_EXEC")?;
        o.post_exec = text(has(o3, SUB3_POST_EXEC), r.postExecCmd, "SUB3_POST_EXEC")?;
        o.login_shell = text(has(o1, SUB_LOGIN_SHELL), r.loginShell, "SUB_LOGIN_SHELL")?;
        o.mail_user = text(has(o1, SUB_MAIL_USER), r.mailUser, "SUB_MAIL_USER")?;
        o.project = text(has(o1, SUB_PROJECT_NAME), r.projectName, "SUB_PROJECT_NAME")?;
        o.app = text(has(o3, SUB3_APP), r.app, "SUB3_APP")?;
        o.cwd = text(has(o3, SUB3_CWD), r.cwd, "SUB3_CWD")?;
        o.requeue_values = text(
            has(o3, SUB3_JOB_REQUEUE),
            r.requeueEValues,
            "SUB3_JOB_REQUEUE",
        )?;
        if let Some(v) = &o.requeue_values {
            basalt_config::batch::RequeueValues::parse(v)
                .map_err(|_| bad(&format!("SUB3_JOB_REQUEUE: bad exit values {v}")))?;
        }
        o.hold = has(o2, SUB2_HOLD);
        if r.numProcessors > 0 || r.maxNumProcessors > 0 {
            let min = r.numProcessors.max(1) as u32;
            let max = (r.maxNumProcessors.max(0) as u32).max(min);
            o.procs = Some((min, max));
        } else if r.numProcessors < 0 || r.maxNumProcessors < 0 {
            return Err(bad("numProcessors and maxNumProcessors cannot be negative"));
        }
        for (i, v) in r.rLimits.iter().enumerate() {
            if *v == DEFAULT_RLIMIT || i >= basalt_core::rlimit::COUNT {
                continue;
            }
            if *v < 0 {
                return Err(bad(&format!(
                    "rLimits[{i}] = {v}: a limit cannot be negative"
                )));
            }
            o.limits[i] = Some(i64::from(*v));
        }
        if r.beginTime > 0 {
            o.begin = Some(r.beginTime);
        }
        if r.termTime > 0 {
            o.term = Some(r.termTime);
        }
        // Accepted and ignored, as bsub accepts and ignores -g -sla -ext -Lp -sp -We -ul -Zs -U -T.
        for (set, name) in [
            (has(o2, SUB2_JOB_GROUP), "-g"),
            (has(o2, SUB2_SLA), "-sla"),
            (has(o2, SUB2_EXTSCHED), "-ext"),
            (has(o2, SUB2_LICENSE_PROJECT), "-Lp"),
            (has(o2, SUB2_JOB_PRIORITY), "-sp"),
            (has(o2, SUB2_USE_RSV), "-U"),
            (has(o2, SUB2_JOB_CMD_SPOOL), "-Zs"),
            (has(o3, SUB3_RUNTIME_ESTIMATION), "-We"),
            (has(o3, SUB3_USER_SHELL_LIMITS), "-ul"),
            (
                r.rLimits[LSF_RLIMIT_THREAD as usize] != DEFAULT_RLIMIT,
                "-T",
            ),
        ] {
            if set {
                o.ignored.push(name.to_owned());
            }
        }
        let is_script = command.contains('\n');
        Ok((
            o,
            JobCommand {
                text: command,
                is_script,
                script_name: None,
            },
        ))
    }
}

/// `submit.xf[0..nxf]`: `bsub -f` transfers.
///
/// # Safety
/// `r.xf` is NULL or has `r.nxf` entries whose names are NULL or strings.
unsafe fn read_files(r: &ffi::submit) -> Result<Vec<(String, String, u32)>, Fail> {
    let mut out = Vec::new();
    if r.xf.is_null() || r.nxf <= 0 {
        return Err(Fail::batch(
            LSBE_BAD_ARG,
            "SUB_OTHER_FILES is set but nxf is 0",
        ));
    }
    for i in 0..r.nxf as usize {
        // SAFETY: within nxf entries.
        let x = unsafe { &*r.xf.add(i) };
        // SAFETY: the names are NULL or strings.
        let (sub, exec) = unsafe { (given(x.subFn), given(x.execFn)) };
        let Some(sub) = sub else {
            return Err(Fail::batch(LSBE_BAD_ARG, format!("xf[{i}].subFn is empty")));
        };
        let ops = x.options as u32 & 0xf;
        if ops == 0 {
            return Err(Fail::batch(
                LSBE_BAD_ARG,
                format!("xf[{i}].options has no XF_OP_*"),
            ));
        }
        out.push((sub.clone(), exec.unwrap_or(sub), ops));
    }
    Ok(out)
}

/// How long `lsb_submit` keeps trying to get mbatchd's answer when neither
/// `LSB_NTRIES` nor `BASALT_CMD_TIMEOUT` says (bsub, a command, waits without bound; a
/// library call returns).
const SUBMIT_BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// The queue of the last submission, for `submitReply.queue`.
static REPLY_QUEUE: Mutex<Option<std::ffi::CString>> = Mutex::new(None);

fn submit_job(r: &ffi::submit) -> Result<(u64, String), Fail> {
    // SAFETY: lsb_submit's contract on the request.
    let (mut opts, mut cmd) = unsafe { read(r) }?;
    let config = crate::session::config()?;
    let job = basalt_cli::batch::bsub::submission_for(&config, &mut opts, &mut cmd, true).map_err(
        |e| {
            let text = e.trim_end_matches('.').to_owned();
            match crate::errtab::LSBE.iter().find(|c| c.message == text) {
                Some(c) => Fail::batch(c.value, ""),
                None if text.starts_with(basalt_cli::batch::bsub::ABORTED) => {
                    Fail::batch(LSBE_ESUB_ABORT, "")
                }
                None => Fail::batch(LSBE_BAD_ARG, text),
            }
        },
    )?;
    let token = basalt_cli::batch::bsub::chosen_or_new_token()
        .map_err(|e| Fail::batch(LSBE_SYS_CALL, e))?;
    let req = basalt_proto::mbatchd::SubmitRequest {
        job: Some(job),
        submit_token: token,
    };
    use basalt_cli::batch::bsub::Outcome;
    crate::session::block_on(async {
        match basalt_cli::batch::bsub::submit_outcome(&config, &req, Some(SUBMIT_BOUND)).await {
            Outcome::Accepted((reply, _)) => Ok((reply.job_id, reply.queue)),
            Outcome::Refused(s) => Err(Fail::from_status(&s)),
            Outcome::Unreachable(why) => Err(Fail::batch(LSBE_CONN_REFUSED, why)),
            Outcome::Unknown { why, .. } => Err(Fail::batch(
                LSBE_CONN_TIMEOUT,
                format!(
                    "{why}; the job may have been submitted (submission token {})",
                    req.submit_token
                ),
            )),
        }
    })?
}

/// `LS_LONG_INT lsb_submit(struct submit *, struct submitReply *)`: the job id, or -1
/// with `lsberrno` set.
///
/// # Safety
/// `req` points to a valid `struct submit`; `reply` is NULL or points to a
/// `struct submitReply`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_submit(req: *mut ffi::submit, reply: *mut ffi::submitReply) -> i64 {
    // SAFETY: the caller's promise.
    let (req, reply) = unsafe { (req.as_ref(), reply.as_mut()) };
    let r = match req {
        None => Err(Fail::batch(LSBE_BAD_ARG, "no submit request")),
        Some(req) => submit_job(req),
    };
    if let Some(reply) = reply {
        reply.badJobId = 0;
        reply.badJobName = std::ptr::null_mut();
        reply.badReqIndx = 0;
        reply.queue = std::ptr::null_mut();
        if let Ok((_, q)) = &r
            && let Ok(mut slot) = REPLY_QUEUE.lock()
        {
            let c = slot.insert(crate::mem::cstring(q));
            reply.queue = c.as_ptr() as *mut libc::c_char;
        }
    }
    crate::session::finish(r.map(|(id, _)| id as i64), -1)
}
