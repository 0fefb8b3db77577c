//! Parallel jobs: `lsb_getalloc` (the job's slots, one host name per slot, from
//! `LSB_MCPU_HOSTS`, else `LSB_HOSTS`) and `lsb_launch` (tasks started on the job's
//! hosts through their RES, as `blaunch` starts them: the job's environment and
//! directory, `LSF_PM_TASKID` numbering the tasks from 1).

use crate::consts::*;
use crate::errno::Fail;
use crate::mem::null_terminated;
use crate::session::{block_on, config, finish};

/// `int lsb_getalloc(char ***hostlist)`: the number of slots, `*hostlist` a `malloc`'ed
/// array of `malloc`'ed host names (one per slot) the caller frees; -1
/// (`LSBE_DJOB_VALIDATION_BAD_JOBID`) outside a batch job.
///
/// # Safety
/// `hostlist` points to a `char **`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_getalloc(hostlist: *mut *mut *mut libc::c_char) -> libc::c_int {
    let slots = basalt_cli::res_cmds::blaunch::job_slots(
        std::env::var("LSB_MCPU_HOSTS").ok().as_deref(),
        std::env::var("LSB_HOSTS").ok().as_deref(),
    );
    let r = if hostlist.is_null() {
        Err(Fail::batch(LSBE_BAD_ARG, "hostlist is NULL"))
    } else if std::env::var_os("LSB_JOBID").is_none() || slots.is_empty() {
        Err(Fail::batch(
            LSBE_DJOB_VALIDATION_BAD_JOBID,
            "not in a batch job (LSB_JOBID, LSB_MCPU_HOSTS and LSB_HOSTS are not set)",
        ))
    } else {
        // SAFETY: malloc of n+1 pointers; each element a strdup'ed string; the caller
        // frees them with free(), as LSF documents.
        unsafe {
            let n = slots.len();
            let arr = libc::malloc((n + 1) * std::mem::size_of::<*mut libc::c_char>())
                as *mut *mut libc::c_char;
            if arr.is_null() {
                Err(Fail::batch(LSBE_NO_MEM, ""))
            } else {
                for (i, h) in slots.iter().enumerate() {
                    let c = crate::mem::cstring(h);
                    *arr.add(i) = libc::strdup(c.as_ptr());
                }
                *arr.add(n) = std::ptr::null_mut();
                *hostlist = arr;
                Ok(n as i32)
            }
        }
    };
    finish(r, -1)
}

/// `int lsb_launch(char **where, char **argv, int options, char **envp)`: start `argv`
/// on each host of `where` (NULL-terminated; NULL: one task per slot of the job) and,
/// without `LSF_DJOB_NOWAIT`, wait for them all. `envp` is added to the job's
/// environment (`LSF_DJOB_REPLACE_ENV`: replaces it); `LSF_DJOB_DISABLE_STDIN` gives
/// the tasks no standard input. The number of tasks started, or -1
/// (`LSBE_DJOB_VALIDATION_BAD_HOST` for a host the job was not given,
/// `LSBE_DJOB_EXECUTE_TASK` when a task failed).
///
/// # Safety
/// `where_`, `argv` and `envp` are NULL or NULL-terminated arrays of strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_launch(
    where_: *mut *mut libc::c_char,
    argv: *mut *mut libc::c_char,
    options: libc::c_int,
    envp: *mut *mut libc::c_char,
) -> libc::c_int {
    // SAFETY: the caller's promise.
    let (hosts, argv, envp) = unsafe {
        (
            null_terminated(where_),
            null_terminated(argv),
            null_terminated(envp),
        )
    };
    let r = launch(hosts, argv, options, envp);
    finish(r, -1)
}

fn launch(
    hosts: Vec<String>,
    argv: Vec<String>,
    options: i32,
    envp: Vec<String>,
) -> Result<i32, Fail> {
    if argv.is_empty() {
        return Err(Fail::batch(LSBE_BAD_ARG, "argv is empty"));
    }
    if std::env::var_os("LSB_JOBID").is_none() {
        return Err(Fail::batch(
            LSBE_DJOB_VALIDATION_BAD_JOBID,
            "not in a batch job (LSB_JOBID is not set)",
        ));
    }
    let slots = basalt_cli::res_cmds::blaunch::job_slots(
        std::env::var("LSB_MCPU_HOSTS").ok().as_deref(),
        std::env::var("LSB_HOSTS").ok().as_deref(),
    );
    let hosts = if hosts.is_empty() {
        slots.clone()
    } else {
        hosts
    };
    if let Some(h) = hosts
        .iter()
        .find(|h| !slots.iter().any(|s| basalt_core::same_host(s, h)))
    {
        return Err(Fail::batch(
            LSBE_DJOB_VALIDATION_BAD_HOST,
            format!("host <{h}> is not allocated to this job"),
        ));
    }
    if hosts.is_empty() {
        return Err(Fail::batch(
            LSBE_DJOB_VALIDATION_BAD_HOST,
            "the job has no hosts",
        ));
    }
    let mut setup = basalt_cli::res_cmds::TaskSetup::here(
        hosts.len() == 1 && options & LSF_DJOB_DISABLE_STDIN == 0,
    );
    if options & LSF_DJOB_REPLACE_ENV != 0 {
        setup.env = envp;
    } else {
        for v in envp {
            let key = v.split('=').next().unwrap_or("").to_owned();
            setup
                .env
                .retain(|e| e.split('=').next() != Some(key.as_str()));
            setup.env.push(v);
        }
    }
    let config = config()?;
    let n = hosts.len() as i32;
    if options & LSF_DJOB_NOWAIT != 0 {
        std::thread::Builder::new()
            .name("lsb_launch".into())
            .spawn(move || {
                let _ = block_on(basalt_cli::res_cmds::blaunch::launch(
                    &config,
                    hosts,
                    &argv,
                    &setup,
                    "lsb_launch",
                ));
            })
            .map_err(|e| Fail::batch(LSBE_SYS_CALL, format!("cannot start a thread: {e}")))?;
        return Ok(n);
    }
    let code = block_on(basalt_cli::res_cmds::blaunch::launch(
        &config,
        hosts,
        &argv,
        &setup,
        "lsb_launch",
    ))?;
    if code != 0 {
        return Err(Fail::batch(
            LSBE_DJOB_EXECUTE_TASK,
            format!("a task exited with {code}"),
        ));
    }
    Ok(n)
}
