//! `lsb_appInfo`, `lsb_freeAppInfoEnts`: the application profiles of lsb.applications
//! as `bapp -l` shows them (mbatchd's `Apps`: each profile's counts and its settings as
//! written), as LSF's `struct appInfoEnt`.

use super::*;
use crate::session::{finish, setting, with_mbatchd};
use basalt_proto::mbatchd::{AppInfo, AppsRequest, ParamsRequest};
use std::collections::BTreeMap;

static APPS: Slot<appInfoEnt> = Slot::new();

/// `struct appInfoEnt *lsb_appInfo(int *numEnt)`: every application profile
/// (`*numEnt` their number); NULL with `LSBE_APP_NULL` when none is configured.
///
/// # Safety
/// `numEnt` is NULL or points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_appInfo(num: *mut c_int) -> *mut appInfoEnt {
    let r = query();
    // SAFETY: the caller's promise.
    unsafe { set_count(num, r.as_ref().map_or(0, |(items, _)| items.len())) };
    let r = r.map(|(items, arena)| APPS.put(items, arena));
    finish(r, std::ptr::null_mut())
}

/// `void lsb_freeAppInfoEnts(int numEnt, struct appInfoEnt *appInfoEnts)`: release
/// what `lsb_appInfo` returned now rather than at its next call (a pointer that is not
/// its last answer is left alone: the library owns it).
#[unsafe(no_mangle)]
pub extern "C" fn lsb_freeAppInfoEnts(_num: c_int, ents: *mut appInfoEnt) {
    APPS.release(ents);
}

fn query() -> Result<(Vec<appInfoEnt>, Arena), Fail> {
    let (apps, default_app, config) = with_mbatchd(|mut c, config| async move {
        let apps = c
            .apps(AppsRequest { names: Vec::new() })
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner()
            .apps;
        let params = c
            .params(ParamsRequest {})
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        let default_app = params
            .params
            .iter()
            .find(|kv| kv.key == "DEFAULT_APPLICATION")
            .map(|kv| kv.value.trim().to_owned())
            .unwrap_or_default();
        Ok((apps, default_app, config))
    })?;
    if apps.is_empty() {
        return Err(Fail::batch(
            LSBE_APP_NULL,
            "no application profile is configured",
        ));
    }
    let unit = setting(&config, "LSF_UNIT_FOR_LIMITS").unwrap_or_else(|| "KB".into());
    let mut a = Arena::default();
    let items = apps
        .iter()
        .map(|p| entry(p, p.name == default_app, &unit, &mut a))
        .collect();
    Ok((items, a))
}

fn yes(v: &str) -> bool {
    matches!(v.trim().to_ascii_uppercase().as_str(), "Y" | "YES")
}

/// The signal or command JOB_CONTROLS gives `action` (`SUSPEND[SIGTSTP] RESUME[...]`).
fn job_control(controls: &str, action: &str) -> String {
    let Some(start) = controls.find(&format!("{action}[")) else {
        return String::new();
    };
    let rest = &controls[start + action.len() + 1..];
    // The bracket that closes this one (a command may hold brackets of its own).
    let mut depth = 0usize;
    for (i, ch) in rest.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' if depth == 0 => return rest[..i].trim().to_owned(),
            ']' => depth -= 1,
            _ => {}
        }
    }
    rest.trim().to_owned()
}

/// A profile as LSF's entry. Its limits (`defLimits`) are what its jobs get: the default
/// of `[default] maximum` when one is given, else the maximum.
fn entry(p: &AppInfo, is_default: bool, unit: &str, a: &mut Arena) -> appInfoEnt {
    let mut e = zero::<appInfoEnt>();
    let settings: BTreeMap<String, String> = p
        .settings
        .iter()
        .map(|kv| (kv.key.to_ascii_uppercase(), kv.value.clone()))
        .collect();
    let get = |k: &str| settings.get(k).map_or("", String::as_str);
    let num = |k: &str, none: c_int| {
        settings
            .get(k)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .map_or(none, int)
    };
    e.name = a.s(&p.name);
    e.description = a.s(&p.description);
    e.numJobs = int(p.njobs);
    e.numPEND = int(p.pend);
    e.numRUN = int(p.run);
    e.numSSUSP = int(p.ssusp);
    e.numUSUSP = int(p.ususp);
    e.numRESERVE = int(p.rsv);
    let mut attr = 0;
    if let Some(v) = settings.get("RERUNNABLE") {
        attr |= if yes(v) {
            A_ATTRIB_RERUNNABLE
        } else {
            A_ATTRIB_NONRERUNNABLE
        };
    }
    if is_default {
        attr |= A_ATTRIB_DEFAULT;
    }
    if yes(get("ABS_RUNLIMIT")) {
        attr |= A_ATTRIB_ABS_RUNLIMIT;
    }
    if !get("CHKPNT_DIR").is_empty() {
        attr |= A_ATTRIB_CHKPNT;
    }
    if yes(get("RESIZABLE_JOBS")) {
        attr |= A_ATTRIB_RESIZABLE;
    } else if get("RESIZABLE_JOBS").trim().eq_ignore_ascii_case("auto") {
        attr |= A_ATTRIB_RESIZABLE | A_ATTRIB_AUTO_RESIZABLE;
    }
    e.aAttrib = attr;
    e.chunkJobSize = num("CHUNK_JOB_SIZE", -1);
    e.requeueEValues = a.s(get("REQUEUE_EXIT_VALUES"));
    e.successEValues = a.s(get("SUCCESS_EXIT_VALUES"));
    e.preCmd = a.s(get("PRE_EXEC"));
    e.postCmd = a.s(get("POST_EXEC"));
    e.jobStarter = a.s(get("JOB_STARTER"));
    let controls = get("JOB_CONTROLS");
    e.suspendActCmd = a.s(&job_control(controls, "SUSPEND"));
    e.resumeActCmd = a.s(&job_control(controls, "RESUME"));
    e.terminateActCmd = a.s(&job_control(controls, "TERMINATE"));
    let (limits, _) = basalt_config::batch::rlimits::parse(&settings, unit);
    e.defLimits = [DEFAULT_RLIMIT; crate::ffi::LSF_RLIM_NLIMITS];
    for (i, l) in limits.iter().enumerate() {
        if let Some(l) = l {
            e.defLimits[i] = int(l.default.unwrap_or(l.max));
        }
    }
    e.hostSpec = a.s(&super::queues::host_spec(&settings));
    e.resReq = a.s(get("RES_REQ"));
    let (min, dflt, max) = super::queues::proc_limits(
        settings
            .get("PROCLIMIT")
            .or_else(|| settings.get("TASKLIMIT")),
    );
    e.minProcLimit = min;
    e.defProcLimit = dflt;
    e.maxProcLimit = max;
    e.runTime = -1;
    e.jobIncludePostProc = c_int::from(yes(get("JOB_INCLUDE_POSTPROC")));
    e.jobPostProcTimeOut = num("JOB_POSTPROC_TIMEOUT", -1);
    e.rTaskGoneAction = a.s(get("RTASK_GONE_ACTION"));
    e.djobEnvScript = a.s(get("DJOB_ENV_SCRIPT"));
    e.djobRuInterval = num("DJOB_RU_INTERVAL", -1);
    e.djobHbInterval = num("DJOB_HB_INTERVAL", -1);
    e.djobCommfailAction = a.s(get("DJOB_COMMFAIL_ACTION"));
    e.djobDisabled = c_int::from(yes(get("DJOB_DISABLED")));
    e.djobResizeGracePeriod = num("DJOB_RESIZE_GRACE_PERIOD", -1);
    e.chkpntDir = a.s(get("CHKPNT_DIR"));
    e.chkpntMethod = a.s(get("CHKPNT_METHOD"));
    e.chkpntPeriod = num("CHKPNT_PERIOD", -1);
    e.initChkpntPeriod = num("CHKPNT_INITPERIOD", -1);
    e.migThreshold = num("MIG", -1);
    e.maxJobPreempt = num("MAX_JOB_PREEMPT", -1);
    e.maxPreExecRetry = num("MAX_PREEXEC_RETRY", -1);
    e.localMaxPreExecRetry = num("LOCAL_MAX_PREEXEC_RETRY", -1);
    e.maxJobRequeue = num("MAX_JOB_REQUEUE", -1);
    e.noPreemptRunTime = -1;
    e.noPreemptFinishTime = -1;
    e.noPreemptRunTimePercent = -1;
    e.noPreemptFinishTimePercent = -1;
    e.persistHostOrder = c_int::from(yes(get("PERSISTENT_HOST_ORDER")));
    e.resizeNotifyCmd = a.s(get("RESIZE_NOTIFY_CMD"));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_proto::mbatchd::KeyValue;
    use std::ffi::CStr;

    fn text(p: *mut c_char) -> String {
        // SAFETY: the arena's string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn a_profile_becomes_lsfs_entry() {
        let kv = |k: &str, v: &str| KeyValue {
            key: k.into(),
            value: v.into(),
        };
        let p = AppInfo {
            name: "fluent".into(),
            description: "CFD".into(),
            njobs: 4,
            pend: 1,
            run: 3,
            settings: vec![
                kv("RUNLIMIT", "30 60/hostA"),
                kv("MEMLIMIT", "1G"),
                kv("RERUNNABLE", "y"),
                kv("PRE_EXEC", "/bin/true"),
                kv(
                    "JOB_CONTROLS",
                    "SUSPEND[kill -STOP $LSB_JOBPIDS] TERMINATE[SIGKILL]",
                ),
                kv("PROCLIMIT", "2 8"),
                kv("SUCCESS_EXIT_VALUES", "3 4"),
            ],
            ..Default::default()
        };
        let mut a = Arena::default();
        let e = entry(&p, true, "KB", &mut a);
        assert_eq!(text(e.name), "fluent");
        assert_eq!(text(e.description), "CFD");
        assert_eq!((e.numJobs, e.numPEND, e.numRUN), (4, 1, 3));
        assert_eq!(e.aAttrib, A_ATTRIB_RERUNNABLE | A_ATTRIB_DEFAULT);
        assert_eq!(e.defLimits[LSF_RLIMIT_RUN as usize], 30 * 60);
        assert_eq!(e.defLimits[LSF_RLIMIT_RSS as usize], 1024 * 1024);
        assert_eq!(e.defLimits[LSF_RLIMIT_CPU as usize], DEFAULT_RLIMIT);
        assert_eq!(text(e.hostSpec), "hostA");
        assert_eq!(text(e.preCmd), "/bin/true");
        assert_eq!(text(e.postCmd), "");
        assert_eq!(text(e.suspendActCmd), "kill -STOP $LSB_JOBPIDS");
        assert_eq!(text(e.resumeActCmd), "");
        assert_eq!(text(e.terminateActCmd), "SIGKILL");
        assert_eq!((e.minProcLimit, e.maxProcLimit), (2, 8));
        assert_eq!(text(e.successEValues), "3 4");
        assert_eq!(e.chunkJobSize, -1);
    }
}
