//! `lsb_modify`: a change to a submitted job, as `bmod` sends it. The `options*` bits
//! name the fields given a new value (read as `lsb_submit` reads them); `delOptions*`
//! bits, `DELETE_NUMBER` in a limit or a begin/termination time, and `DEL_NUMPRO` in
//! `numProcessors` reset an option to its default (`bmod -Jn`, `-Wn`, `-bn`, `-nn`);
//! `SUB2_MODIFY_CMD` with `newCommand` changes the command (`bmod -Z`).

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::jobinfo::job_ref;
use crate::mem::given;
use crate::session::{finish, with_mbatchd};
use basalt_cli::batch::bsub::{JobCommand, Submitter};
use basalt_proto::mbatchd::ModifyRequest;

/// The option bits and the names mbatchd knows them by (bmod's).
const NAMED: &[(usize, i32, &str)] = &[
    (1, SUB_JOB_NAME, "J"),
    (1, SUB_QUEUE, "q"),
    (1, SUB_HOST, "m"),
    (1, SUB_RES_REQ, "R"),
    (1, SUB_DEPEND_COND, "w"),
    (1, SUB_IN_FILE, "i"),
    (1, SUB_OUT_FILE, "o"),
    (1, SUB_ERR_FILE, "e"),
    (1, SUB_PRE_EXEC, "E"),
    (3, SUB3_POST_EXEC, "Ep"),
    (1, SUB_MAIL_USER, "u"),
    (1, SUB_PROJECT_NAME, "P"),
    (1, SUB_LOGIN_SHELL, "L"),
    (1, SUB_USER_GROUP, "G"),
    (1, SUB_EXCLUSIVE, "x"),
    (1, SUB_RERUNNABLE, "r"),
    (1, SUB_NOTIFY_END, "N"),
    (1, SUB_NOTIFY_BEGIN, "B"),
    (3, SUB3_JOB_REQUEUE, "Q"),
    (3, SUB3_APP, "app"),
    (3, SUB3_CWD, "cwd"),
];

/// The limits by `LSF_RLIMIT_*` position and bmod's names for them.
const LIMITS: &[(i32, &str)] = &[
    (LSF_RLIMIT_CPU, "c"),
    (LSF_RLIMIT_RUN, "W"),
    (LSF_RLIMIT_RSS, "M"),
    (LSF_RLIMIT_VMEM, "v"),
    (LSF_RLIMIT_FSIZE, "F"),
    (LSF_RLIMIT_DATA, "D"),
    (LSF_RLIMIT_STACK, "S"),
    (LSF_RLIMIT_CORE, "C"),
    (LSF_RLIMIT_PROCESS, "p"),
];

/// The request for a change of `job`.
///
/// # Safety
/// `r`'s pointers are valid as LSF documents each field.
unsafe fn request(r: &ffi::submit, job: i64) -> Result<ModifyRequest, Fail> {
    if job <= 0 {
        return Err(Fail::batch(LSBE_BAD_JOBID, ""));
    }
    let mut set: Vec<String> = Vec::new();
    let mut reset: Vec<String> = Vec::new();
    let opt = |n: usize| match n {
        1 => r.options,
        2 => r.options2,
        _ => r.options3,
    };
    let del = |n: usize| match n {
        1 => r.delOptions,
        2 => r.delOptions2,
        _ => r.delOptions3,
    };
    // A copy with the resets taken out, read as a submission is.
    let mut copy = ffi::submit { ..*r };
    copy.options &= !(SUB_MODIFY | SUB_MODIFY_ONCE);
    copy.options2 &= !SUB2_MODIFY_CMD;
    for (n, bit, name) in NAMED {
        let on = opt(*n) & bit != 0;
        if del(*n) & bit != 0 {
            if on {
                return Err(Fail::batch(
                    LSBE_MOD_MIX_OPTS,
                    format!("-{name} and -{name}n cannot be used together"),
                ));
            }
            reset.push((*name).to_owned());
        } else if on {
            let name = match (*name, r.options2) {
                ("o", o2) if o2 & SUB2_OVERWRITE_OUT_FILE != 0 => "oo",
                ("e", o2) if o2 & SUB2_OVERWRITE_ERR_FILE != 0 => "eo",
                (n, _) => n,
            };
            set.push(name.to_owned());
        }
    }
    for (i, name) in LIMITS {
        let v = &mut copy.rLimits[*i as usize];
        if *v == DELETE_NUMBER {
            reset.push((*name).to_owned());
            *v = DEFAULT_RLIMIT;
        } else if *v != DEFAULT_RLIMIT {
            set.push((*name).to_owned());
        }
    }
    for (field, name) in [(&mut copy.beginTime, "b"), (&mut copy.termTime, "t")] {
        if *field == libc::time_t::from(DELETE_NUMBER) {
            reset.push(name.to_owned());
            *field = 0;
        } else if *field > 0 {
            set.push(name.to_owned());
        }
    }
    if r.numProcessors == DEL_NUMPRO {
        reset.push("n".to_owned());
        copy.numProcessors = 0;
        copy.maxNumProcessors = 0;
    } else if r.numProcessors > 0 {
        set.push("n".to_owned());
    }
    // SAFETY: the caller's promise.
    let (opts, _) = unsafe { crate::submit::read_for(&copy, false) }?;
    // SAFETY: the caller's promise.
    let new_command = unsafe { given(r.newCommand) };
    let command = if r.options2 & SUB2_MODIFY_CMD != 0 {
        set.push("Z".to_owned());
        Some(new_command.ok_or_else(|| {
            Fail::batch(
                LSBE_BAD_CMD,
                "SUB2_MODIFY_CMD is set but newCommand is empty",
            )
        })?)
    } else {
        None
    };
    if set.is_empty() && reset.is_empty() {
        return Err(Fail::batch(LSBE_BAD_ARG, "no option to change"));
    }
    let cmd = JobCommand {
        text: command.unwrap_or_default(),
        is_script: false,
        script_name: None,
    };
    let who = Submitter {
        umask: 0o022,
        ..Default::default()
    };
    Ok(ModifyRequest {
        job: Some(job_ref(job)),
        values: Some(basalt_cli::batch::bsub::build(&opts, &cmd, &who)),
        set,
        reset,
    })
}

/// `LS_LONG_INT lsb_modify(struct submit *, struct submitReply *, LS_LONG_INT jobId)`:
/// the job's id, or -1 with `lsberrno` (mbatchd's reason: `LSBE_NO_JOB`,
/// `LSBE_PERMISSION`, `LSBE_JOB_STARTED` for a change a started job cannot take, ...).
///
/// # Safety
/// `req` points to a valid `struct submit`; `reply` is NULL or a `struct submitReply`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_modify(
    req: *mut ffi::submit,
    reply: *mut ffi::submitReply,
    job: i64,
) -> i64 {
    // SAFETY: the caller's promise.
    if let Some(reply) = unsafe { reply.as_mut() } {
        reply.queue = std::ptr::null_mut();
        reply.badJobId = 0;
        reply.badJobName = std::ptr::null_mut();
        reply.badReqIndx = 0;
    }
    // SAFETY: the caller's promise.
    let r = match unsafe { req.as_ref() } {
        None => Err(Fail::batch(LSBE_BAD_ARG, "no request")),
        // SAFETY: the caller's promise.
        Some(req) => unsafe { request(req, job) }.and_then(|m| {
            with_mbatchd(|mut c, _| async move {
                let r = c.modify(m).await.map_err(|s| Fail::from_status(&s))?;
                crate::jobctl::check(r.into_inner()).map(|_| job)
            })
        }),
    };
    finish(r, -1)
}
