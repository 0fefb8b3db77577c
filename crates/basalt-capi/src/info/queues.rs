//! `lsb_queueinfo`: the queues as `bqueues -l` shows them (mbatchd's `Queues`), as
//! LSF's `struct queueInfoEnt`.

use super::*;
use crate::mem::given;
use crate::session::{finish, setting, with_mbatchd};
use basalt_proto::mbatchd::{HostsRequest, QueueInfo, QueuesRequest};
use std::collections::{BTreeMap, HashMap};

static QUEUES: Slot<queueInfoEnt> = Slot::new();

/// The options lsb_queueinfo knows. `ALL_QUEUE` asks for every queue and `DFT_QUEUE` for
/// the default one; the others shape LSF's own output and change nothing here (every
/// field is filled, host names are the cluster's, every Basalt queue is a batch queue).
const KNOWN_OPTIONS: c_int = ALL_QUEUE
    | DFT_QUEUE
    | CHECK_HOST
    | CHECK_USER
    | SORT_HOST
    | QUEUE_SHORT_FORMAT
    | EXPAND_HOSTNAME
    | RETRIEVE_BATCH;

/// `struct queueInfoEnt *lsb_queueinfo(char **queues, int *numQueues, char *hostName,
/// char *userName, int options)`: the queues named (`*numQueues` 0: all; `queues` NULL
/// and `*numQueues` 1: the default queue), only those `hostName` may run jobs of and
/// `userName` may submit to when given.
///
/// # Safety
/// `numQueues` points to an int; `queues` is NULL or has `*numQueues` strings;
/// `hostName` and `userName` are NULL or strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_queueinfo(
    queues: *mut *mut c_char,
    num: *mut c_int,
    host: *mut c_char,
    user: *mut c_char,
    options: c_int,
) -> *mut queueInfoEnt {
    // SAFETY: passed on.
    let r = unsafe { query(queues, num, host, user, options) }.map(|(items, arena)| {
        let n = items.len();
        // SAFETY: the caller's promise.
        unsafe { set_count(num, n) };
        QUEUES.put(items, arena)
    });
    finish(r, std::ptr::null_mut())
}

/// # Safety
/// As [`lsb_queueinfo`].
unsafe fn query(
    queues: *mut *mut c_char,
    num: *mut c_int,
    host: *mut c_char,
    user: *mut c_char,
    options: c_int,
) -> Result<(Vec<queueInfoEnt>, Arena), Fail> {
    if options & !KNOWN_OPTIONS != 0 {
        return Err(bad_arg(format!(
            "lsb_queueinfo options {:#x} are not LSF's",
            options & !KNOWN_OPTIONS
        )));
    }
    // SAFETY: the caller's promise.
    let mut want = unsafe { asked(queues, num) }?;
    if options & ALL_QUEUE != 0 {
        want = Asked::All;
    } else if options & DFT_QUEUE != 0 {
        want = Asked::Own;
    }
    // SAFETY: the caller's promise.
    let (host, user) = unsafe { (given(host), given(user)) };
    let user = user.filter(|u| u != "all");
    if let Some(u) = &user
        && !user_known(u)
    {
        return Err(Fail::batch(LSBE_BAD_USER, u.clone()));
    }
    let names = match &want {
        Asked::Names(n) => n.clone(),
        _ => Vec::new(),
    };
    let asked_host = host.clone();
    let (reply, host_unknown, config) = with_mbatchd(|mut c, config| async move {
        let reply = c
            .queues(QueuesRequest { queues: names })
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        let host_unknown = match asked_host {
            Some(h) => {
                let r = c
                    .hosts(HostsRequest { hosts: vec![h] })
                    .await
                    .map_err(|s| Fail::from_status(&s))?
                    .into_inner();
                !r.not_found.is_empty()
            }
            None => false,
        };
        Ok((reply, host_unknown, config))
    })?;
    if host_unknown {
        return Err(Fail::batch(LSBE_BAD_HOST, host.unwrap_or_default()));
    }
    let mut shown: Vec<&QueueInfo> = match &want {
        Asked::Names(n) => {
            if let Some((i, name)) = first_unknown(n, &reply.not_found) {
                // SAFETY: the caller's promise.
                unsafe { set_count(num, i) };
                return Err(Fail::batch(LSBE_BAD_QUEUE, name));
            }
            n.iter()
                .filter_map(|name| reply.queues.iter().find(|q| &q.name == name))
                .collect()
        }
        Asked::Own => reply
            .queues
            .iter()
            .filter(|q| q.is_default)
            .take(1)
            .collect(),
        Asked::All => reply.queues.iter().collect(),
    };
    if want == Asked::Own && shown.is_empty() {
        return Err(Fail::batch(
            LSBE_BAD_QUEUE,
            "no default queue is configured",
        ));
    }
    if let Some(h) = &host {
        shown.retain(|q| host_may_run(q, h));
    }
    if let Some(u) = &user {
        shown.retain(|q| user_may_submit(q, u));
    }
    if shown.is_empty() {
        return Err(Fail::batch(
            LSBE_BAD_QUEUE,
            "no queue is enabled for the host or user given",
        ));
    }
    let unit = setting(&config, "LSF_UNIT_FOR_LIMITS").unwrap_or_else(|| "KB".into());
    let idx = index_names(
        shown
            .iter()
            .flat_map(|q| q.load_sched.keys().chain(q.load_stop.keys())),
    );
    let mut a = Arena::default();
    let items = shown
        .iter()
        .map(|q| entry(q, &idx, &unit, Some(&config), &mut a))
        .collect();
    Ok((items, a))
}

/// May `host` run the queue's jobs (HOSTS empty or `all`: every host)?
fn host_may_run(q: &QueueInfo, host: &str) -> bool {
    q.hosts.is_empty()
        || q.hosts
            .iter()
            .any(|h| h == "all" || basalt_core::same_host(h, host))
}

/// May `user` (a user, or a user group as USERS names it) submit to the queue?
fn user_may_submit(q: &QueueInfo, user: &str) -> bool {
    let group = format!("{user}/");
    if q.users_configured.iter().any(|u| u == user || *u == group) {
        return true;
    }
    match q.users.first().map(String::as_str) {
        None => true,
        Some("none") => false,
        Some("all") => !q.users.iter().any(|u| u.strip_prefix('~') == Some(user)),
        Some(_) => q.users.iter().any(|u| u == user),
    }
}

/// The queue's limits: rLimits (maxima) and defLimits (defaults) in LSF_RLIMIT order,
/// -1 when not set; and the host spec of CPULIMIT / RUNLIMIT ("" when none).
fn limits(
    settings: &HashMap<String, String>,
    unit: &str,
) -> (
    [c_int; crate::ffi::LSF_RLIM_NLIMITS],
    [c_int; crate::ffi::LSF_RLIM_NLIMITS],
    String,
) {
    let upper: BTreeMap<String, String> = settings
        .iter()
        .map(|(k, v)| (k.to_ascii_uppercase(), v.clone()))
        .collect();
    let (parsed, _) = basalt_config::batch::rlimits::parse(&upper, unit);
    let mut max = [DEFAULT_RLIMIT; crate::ffi::LSF_RLIM_NLIMITS];
    let mut def = [DEFAULT_RLIMIT; crate::ffi::LSF_RLIM_NLIMITS];
    for (i, l) in parsed.iter().enumerate() {
        if let Some(l) = l {
            max[i] = int(l.max);
            if let Some(d) = l.default {
                def[i] = int(d);
            }
        }
    }
    (max, def, host_spec(&upper))
}

/// The host spec of CPULIMIT or RUNLIMIT (`[hour:]minute/host_spec`; "" when none), of
/// settings by upper-case keyword.
pub(super) fn host_spec(settings: &BTreeMap<String, String>) -> String {
    ["CPULIMIT", "RUNLIMIT"]
        .iter()
        .filter_map(|k| settings.get(*k))
        .filter_map(|v| v.split_whitespace().last())
        .find_map(|w| w.split_once('/').map(|(_, s)| s.to_owned()))
        .unwrap_or_default()
}

/// PROCLIMIT (or TASKLIMIT) `[minimum [default]] maximum`: (minimum, default, maximum),
/// -1 when not set.
pub(super) fn proc_limits(value: Option<&String>) -> (c_int, c_int, c_int) {
    let words: Vec<c_int> = value
        .map(|v| {
            v.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    match words[..] {
        [max] => (-1, -1, max),
        [min, max] => (min, -1, max),
        [min, def, max] => (min, def, max),
        _ => (-1, -1, -1),
    }
}

/// The queue's status bits: OPEN, ACTIVE (not inactivated by an administrator), RUN
/// (its windows are open), RUNWIN_CLOSE (closed by its run window).
fn status(q: &QueueInfo) -> c_int {
    let by_window = q.inactive_reason == "Inact_Win";
    let mut s = 0;
    if q.open {
        s |= QUEUE_STAT_OPEN;
    }
    if q.active || by_window {
        s |= QUEUE_STAT_ACTIVE;
    }
    if !by_window {
        s |= QUEUE_STAT_RUN;
    } else if !q.run_window.is_empty() && q.dispatch_window.is_empty() {
        s |= QUEUE_STAT_RUNWIN_CLOSE;
    }
    s
}

/// The queue's attribute bits.
fn attributes(q: &QueueInfo) -> c_int {
    let preemption = q.preemption.to_ascii_uppercase();
    [
        (q.exclusive, Q_ATTRIB_EXCLUSIVE),
        (q.is_default, Q_ATTRIB_DEFAULT),
        (!q.fairshare.is_empty(), Q_ATTRIB_FAIRSHARE),
        (preemption.contains("PREEMPTIVE"), Q_ATTRIB_PREEMPTIVE),
        (preemption.contains("PREEMPTABLE"), Q_ATTRIB_PREEMPTABLE),
        (q.backfill, Q_ATTRIB_BACKFILL),
        (q.interactive == "NO", Q_ATTRIB_NO_INTERACTIVE),
        (q.interactive == "ONLY", Q_ATTRIB_ONLY_INTERACTIVE),
        (!q.chkpnt_dir.is_empty(), Q_ATTRIB_CHKPNT),
        (q.rerunnable, Q_ATTRIB_RERUNNABLE),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |s, (_, bit)| s | bit)
}

/// The fairshare accounts, each with its path below the queue (`user`, `group/user`).
fn share_accounts(q: &QueueInfo, a: &mut Arena) -> (c_int, *mut shareAcctInfoEnt) {
    let mut v: Vec<shareAcctInfoEnt> = Vec::new();
    for si in &q.share_info {
        let below = si.path.split_once('/').map_or("", |(_, rest)| rest);
        for r in &si.rows {
            let mut e = zero::<shareAcctInfoEnt>();
            e.shareAcctPath = a.s(&format!("{below}{}", r.name));
            e.shares = int(r.shares);
            e.priority = r.priority as f32;
            e.numStartJobs = int(r.started);
            e.histCpuTime = r.cpu_time as f32;
            e.numReserveJobs = int(r.reserved);
            e.runTime = r.run_time.min(f64::from(c_int::MAX)) as c_int;
            e.shareAdjustment = r.adjust as f32;
            v.push(e);
        }
    }
    if v.is_empty() {
        return (0, std::ptr::null_mut());
    }
    let n = int(v.len());
    let p = v.as_mut_ptr();
    a.keep(v);
    (n, p)
}

/// A queue as LSF's entry; `idx` names the load indices of loadSched / loadStop.
fn entry(
    q: &QueueInfo,
    idx: &[String],
    unit: &str,
    config: Option<&basalt_config::Config>,
    a: &mut Arena,
) -> queueInfoEnt {
    let mut e = zero::<queueInfoEnt>();
    let set = |k: &str| q.settings.get(k).cloned().unwrap_or_default();
    let num = |k: &str, none: c_int| {
        q.settings
            .get(k)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .map_or(none, int)
    };
    e.queue = a.s(&q.name);
    e.description = a.s(&q.description);
    e.priority = int(q.priority);
    e.nice = i16::try_from(q.nice).unwrap_or(0);
    let users = basalt_cli::batch::bqueues::list_text(&q.users_configured, &q.users);
    let hosts = basalt_cli::batch::bqueues::list_text(&q.hosts_configured, &q.hosts);
    e.userList = a.s(&users);
    e.hostList = a.s(&hosts);
    e.hostStr = a.s(&hosts);
    e.nIdx = int(idx.len());
    e.loadSched = a.floats(thresholds(idx, |n| q.load_sched.get(n), config));
    e.loadStop = a.floats(thresholds(idx, |n| q.load_stop.get(n), config));
    e.userJobLimit = limit_int(q.jl_u);
    e.procJobLimit = if q.jl_p < 0.0 {
        INFINIT_FLOAT
    } else {
        q.jl_p as f32
    };
    e.windows = a.s(&q.run_window);
    let (max, def, spec) = limits(&q.settings, unit);
    e.rLimits = max;
    e.defLimits = def;
    e.hostSpec = a.s(if spec.is_empty() {
        q.settings
            .get("DEFAULT_HOST_SPEC")
            .map_or("", String::as_str)
    } else {
        &spec
    });
    e.qAttrib = attributes(q);
    e.qStatus = status(q);
    e.maxJobs = limit_int(q.max_jobs);
    e.numJobs = int(q.njobs);
    e.numPEND = int(q.pend);
    e.numRUN = int(q.run);
    e.numSSUSP = int(q.ssusp);
    e.numUSUSP = int(q.ususp);
    e.mig = q.mig_minutes.map_or(INFINIT_INT, limit_int);
    e.acceptIntvl = q.accept_interval_secs.map_or(INFINIT_INT, limit_int);
    e.windowsD = a.s(&q.dispatch_window);
    e.nqsQueues = a.s("");
    let shares = q
        .fairshare
        .trim()
        .strip_prefix("USER_SHARES[")
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(q.fairshare.trim());
    e.userShares = a.s(shares);
    e.defaultHostSpec = a.s(&set("DEFAULT_HOST_SPEC"));
    let (min, dflt, maxp) = proc_limits(
        q.settings
            .get("PROCLIMIT")
            .or_else(|| q.settings.get("TASKLIMIT")),
    );
    e.procLimit = maxp;
    e.minProcLimit = min;
    e.defProcLimit = dflt;
    e.admins = a.s(&q.administrators.join(" "));
    e.preCmd = a.s(&q.pre_exec);
    e.postCmd = a.s(&q.post_exec);
    e.requeueEValues = a.s(&q.requeue_exit_values);
    e.hostJobLimit = limit_int(q.jl_h);
    e.resReq = a.s(&q.res_req);
    e.numRESERVE = int(q.rsv);
    e.slotHoldTime = int(q.slot_reserve_secs);
    e.sndJobsTo = a.s("");
    e.rcvJobsFrom = a.s("");
    e.resumeCond = a.s(&q.resume_cond);
    e.stopCond = a.s(&q.stop_cond);
    e.jobStarter = a.s(&q.job_starter);
    let action = |k: &str| q.job_controls.get(k).cloned().unwrap_or_default();
    e.suspendActCmd = a.s(&action("SUSPEND"));
    e.resumeActCmd = a.s(&action("RESUME"));
    e.terminateActCmd = a.s(&action("TERMINATE"));
    e.preemption = a.s(&q.preemption);
    (e.numOfSAccts, e.shareAccts) = share_accounts(q, a);
    e.chkpntDir = a.s(&q.chkpnt_dir);
    e.chkpntPeriod = int(q.chkpnt_period / 60);
    e.chunkJobSize = num("CHUNK_JOB_SIZE", -1);
    e.fairshareQueues = a.s(&set("FAIRSHARE_QUEUES"));
    e.defExtSched = a.s("");
    e.mandExtSched = a.s("");
    e.slotShare = int(q.slot_share);
    e.slotPool = a.s(&q.slot_pool);
    e.underRCond = num("JOB_UNDERRUN", -1);
    e.overRCond = num("JOB_OVERRUN", -1);
    e.idleCond = q
        .settings
        .get("JOB_IDLE")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1.0);
    e.warningTimePeriod = -1;
    e.warningAction = a.s("");
    e.qCtrlMsg = a.s(&q.admin_comment);
    e.acResReq = a.s("");
    e.cpuReq = a.s("");
    e.servicePreemption = a.s("");
    e.queueGroup = a.s("");
    e.maxJobPreempt = limit_int(q.max_job_preempt);
    e.maxPreExecRetry = num("MAX_PREEXEC_RETRY", -1);
    e.localMaxPreExecRetry = num("LOCAL_MAX_PREEXEC_RETRY", -1);
    e.maxJobRequeue = num("MAX_JOB_REQUEUE", -1);
    e.cu_str_exclusive = a.s("");
    e.resRsvLimit = a.s("");
    e.mockParamB = a.s("");
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(p: *mut c_char) -> String {
        assert!(!p.is_null());
        // SAFETY: the arena's string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    fn queue() -> QueueInfo {
        QueueInfo {
            name: "idle".into(),
            description: "Idle hosts only.".into(),
            priority: 20,
            nice: 5,
            open: true,
            active: false,
            inactive_reason: "Inact_Adm".into(),
            max_jobs: -1,
            jl_u: 4,
            jl_p: -1.0,
            jl_h: -1,
            njobs: 3,
            pend: 1,
            run: 2,
            is_default: true,
            users_configured: vec!["eng/".into(), "bob".into()],
            users: vec!["ann".into(), "bob".into()],
            settings: [
                ("RUNLIMIT".to_owned(), "10 1:30/hostA".to_owned()),
                ("MEMLIMIT".to_owned(), "2M".to_owned()),
                ("PROCLIMIT".to_owned(), "2 4".to_owned()),
            ]
            .into(),
            load_sched: [("r15s".to_owned(), 0.3)].into(),
            load_stop: [("r15s".to_owned(), 1.0)].into(),
            exclusive: true,
            chkpnt_dir: "/ck".into(),
            chkpnt_period: 600,
            job_controls: [("SUSPEND".to_owned(), "SIGTSTP".to_owned())].into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_queue_becomes_lsfs_entry() {
        let mut a = Arena::default();
        let q = queue();
        let idx = index_names(q.load_sched.keys());
        let e = entry(&q, &idx, "KB", None, &mut a);
        assert_eq!(text(e.queue), "idle");
        assert_eq!(text(e.description), "Idle hosts only.");
        assert_eq!((e.priority, e.nice), (20, 5));
        assert_eq!(text(e.userList), "eng/ bob");
        assert_eq!(text(e.hostList), "all");
        assert_eq!(e.nIdx, 11);
        // SAFETY: nIdx floats each.
        let (sched, stop) = unsafe {
            (
                std::slice::from_raw_parts(e.loadSched, 11),
                std::slice::from_raw_parts(e.loadStop, 11),
            )
        };
        assert_eq!(sched[R15S as usize], 0.3);
        assert_eq!(stop[R15S as usize], 1.0);
        assert_eq!(sched[R1M as usize], INFINIT_LOAD);
        assert_eq!(stop[MEM as usize], -INFINIT_LOAD);
        assert_eq!(e.userJobLimit, 4);
        assert_eq!(e.procJobLimit, INFINIT_FLOAT);
        assert_eq!((e.maxJobs, e.hostJobLimit), (INFINIT_INT, INFINIT_INT));
        // RUNLIMIT 10 1:30/hostA: default 10 minutes, maximum 90, in seconds.
        assert_eq!(e.rLimits[LSF_RLIMIT_RUN as usize], 90 * 60);
        assert_eq!(e.defLimits[LSF_RLIMIT_RUN as usize], 10 * 60);
        assert_eq!(e.rLimits[LSF_RLIMIT_RSS as usize], 2048);
        assert_eq!(e.rLimits[LSF_RLIMIT_CPU as usize], DEFAULT_RLIMIT);
        assert_eq!(text(e.hostSpec), "hostA");
        assert_eq!((e.minProcLimit, e.defProcLimit, e.procLimit), (2, -1, 4));
        assert_eq!(
            e.qAttrib,
            Q_ATTRIB_EXCLUSIVE | Q_ATTRIB_DEFAULT | Q_ATTRIB_CHKPNT
        );
        // Inactivated by an administrator, windows open.
        assert_eq!(e.qStatus, QUEUE_STAT_OPEN | QUEUE_STAT_RUN);
        assert_eq!((e.numJobs, e.numPEND, e.numRUN), (3, 1, 2));
        assert_eq!(e.chkpntPeriod, 10);
        assert_eq!(text(e.suspendActCmd), "SIGTSTP");
        assert_eq!(text(e.resumeActCmd), "");
        assert_eq!(text(e.nqsQueues), "");
        assert_eq!(e.mig, INFINIT_INT);
    }

    #[test]
    fn status_bits_say_who_inactivated_the_queue() {
        let mut q = queue();
        q.open = false;
        q.active = true;
        q.inactive_reason.clear();
        assert_eq!(status(&q), QUEUE_STAT_ACTIVE | QUEUE_STAT_RUN);
        q.active = false;
        q.inactive_reason = "Inact_Win".into();
        q.run_window = "8:00-18:00".into();
        assert_eq!(status(&q), QUEUE_STAT_ACTIVE | QUEUE_STAT_RUNWIN_CLOSE);
    }

    #[test]
    fn users_and_hosts_filter_as_bqueues_u_and_m() {
        let mut q = queue();
        assert!(user_may_submit(&q, "ann"));
        assert!(user_may_submit(&q, "eng"));
        assert!(!user_may_submit(&q, "carl"));
        q.users_configured.clear();
        q.users = vec!["all".into(), "~carl".into()];
        assert!(user_may_submit(&q, "dave") && !user_may_submit(&q, "carl"));
        q.users = vec!["none".into()];
        assert!(!user_may_submit(&q, "dave"));
        assert!(host_may_run(&q, "hostB"));
        q.hosts = vec!["hostA".into()];
        assert!(host_may_run(&q, "HOSTA") && !host_may_run(&q, "hostB"));
    }

    #[test]
    fn fairshare_accounts_keep_their_place_in_the_tree() {
        use basalt_proto::mbatchd::{ShareInfo, ShareRow};
        let mut q = queue();
        q.share_info = vec![
            ShareInfo {
                path: "idle/".into(),
                rows: vec![ShareRow {
                    name: "eng".into(),
                    shares: 10,
                    priority: 3.5,
                    started: 2,
                    ..Default::default()
                }],
            },
            ShareInfo {
                path: "idle/eng/".into(),
                rows: vec![ShareRow {
                    name: "ann".into(),
                    shares: 1,
                    ..Default::default()
                }],
            },
        ];
        let mut a = Arena::default();
        let (n, p) = share_accounts(&q, &mut a);
        assert_eq!(n, 2);
        // SAFETY: n entries.
        let v = unsafe { std::slice::from_raw_parts(p, 2) };
        assert_eq!(text(v[0].shareAcctPath), "eng");
        assert_eq!((v[0].shares, v[0].numStartJobs), (10, 2));
        assert_eq!(v[0].priority, 3.5);
        assert_eq!(text(v[1].shareAcctPath), "eng/ann");
    }
}
