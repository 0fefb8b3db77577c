//! Each host, queue and application profile of a loaded configuration as the core keeps
//! it ([`SchedConfig::from_config_dynamic`](super::SchedConfig) puts them together).

use super::*;

/// The members the `egroup` program gave, by group name.
type Members = BTreeMap<String, Vec<String>>;

/// Batch host `h` (rank `rank` in the cluster file) with its lsb.hosts row.
pub(super) fn host_row(
    c: &Config,
    b: &Batch,
    res_kinds: &BTreeMap<String, basalt_config::select::NameKind>,
    rank: usize,
    h: &basalt_config::cluster::ClusterHost,
) -> Host {
    let row = b
        .hosts
        .iter()
        .find(|r| basalt_core::same_host(&r.name, &h.name))
        .or_else(|| b.hosts.iter().find(|r| r.name == "default"));
    let (mxj, mxj_ncpus) = match row.and_then(|r| r.mxj) {
        Some(Mxj::Ncpus) => (None, true),
        Some(Mxj::Slots(n)) => (Some(n), false),
        None => (None, false),
    };
    Host {
        name: h.name.clone(),
        mxj,
        mxj_ncpus,
        jl_u: row.and_then(|r| r.jl_u),
        mig_minutes: row
            .and_then(|r| r.other.get("MIG"))
            .and_then(|v| v.trim().parse::<u32>().ok()),
        closed_adm: false,
        message: String::new(),
        ncpus: 0,
        cpu_factor: 1.0,
        lim: LimStatus::Unknown,
        lim_locked: false,
        sbd_seen: 0,
        sbd_failed: false,
        load: BTreeMap::new(),
        last_dispatch: 0,
        dispatch_window: row.and_then(|r| r.dispatch_window.clone()),
        load_sched: row
            .map(|r| {
                r.thresholds
                    .iter()
                    .filter_map(|(k, t)| t.sched.map(|v| (k.clone(), v)))
                    .collect()
            })
            .unwrap_or_default(),
        load_stop: row
            .map(|r| {
                r.thresholds
                    .iter()
                    .filter_map(|(k, t)| t.stop.map(|v| (k.clone(), v)))
                    .collect()
            })
            .unwrap_or_default(),
        last_resume: 0,
        thresholds_ok: Vec::new(),
        rank,
        statics: static_values(c, h, res_kinds),
        lim_static: None,
        reserved: BTreeMap::new(),
        rsv_slots: 0,
    }
}

/// Queue `q` of lsb.queues with its users and hosts expanded (`groups`: the members the
/// `egroup` program gave for user groups and for host groups).
pub(super) fn queue_row(
    b: &Batch,
    q: &basalt_config::batch::Queue,
    all_hosts: &[String],
    (egroups, host_egroups): (&Members, &Members),
    unit: &str,
) -> Queue {
    let p = &b.params;
    let mut load_sched = BTreeMap::new();
    let mut load_stop = BTreeMap::new();
    for (k, t) in &q.thresholds {
        if let Some(s) = t.sched {
            load_sched.insert(k.clone(), s);
        }
        if let Some(s) = t.stop {
            load_stop.insert(k.clone(), s);
        }
    }
    let users = expand_users(&q.users, &b.user_groups, egroups);
    Queue {
        name: q.name.clone(),
        description: q.description.clone(),
        priority: q.priority,
        nice: q.nice,
        open: true,
        active: true,
        message: String::new(),
        qjob_limit: q.qjob_limit,
        ujob_limit: q.ujob_limit,
        hjob_limit: q.hjob_limit,
        pjob_limit: q.pjob_limit,
        hosts: expand(&q.hosts, &b.host_groups, all_hosts, host_egroups),
        users_all: users.all,
        users: users.names,
        users_except: users.except,
        administrators: q.administrators.clone(),
        res_req: q.res_req.clone().unwrap_or_default(),
        exclusive: q.exclusive,
        slot_reserve: q.slot_reserve,
        backfill: q.backfill,
        fairshare: q.fairshare.clone().unwrap_or_default(),
        user_shares: q.user_shares.clone(),
        fs_factors: fs_factors(&q.other, p),
        slot_pool: q.slot_pool.clone().unwrap_or_default(),
        slot_share: q.slot_share.unwrap_or(0),
        preempt: q.preempt.clone(),
        preemption: q.preemption.clone().unwrap_or_default(),
        terminate_on_preempt: q.terminate_when.iter().any(|a| a == "PREEMPT"),
        max_job_preempt: q.max_job_preempt,
        no_preempt_run_time: q.no_preempt_run_time,
        no_preempt_finish_time: q.no_preempt_finish_time,
        rerunnable: q.rerunnable,
        interactive: q.interactive.clone().unwrap_or_default(),
        load_sched,
        load_stop,
        job_controls: q.job_controls.clone(),
        pre_exec: q.pre_exec.clone().unwrap_or_default(),
        post_exec: q.post_exec.clone().unwrap_or_default(),
        job_starter: q.job_starter.clone().unwrap_or_default(),
        host_pref: host_prefs(&q.hosts, &b.host_groups, all_hosts, host_egroups),
        others_pref: q
            .hosts
            .iter()
            .find_map(|t| t.strip_prefix("others+"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0),
        pre_post_exec_user: q
            .other
            .get("PRE_POST_EXEC_USER")
            .map(|u| u.trim().to_owned())
            .unwrap_or_default(),
        success_exit_values: q
            .other
            .get("SUCCESS_EXIT_VALUES")
            .and_then(|v| basalt_config::batch::parse_exit_values(v).ok())
            .unwrap_or_default(),
        requeue: q
            .requeue_exit_values
            .as_deref()
            .and_then(|v| RequeueValues::parse(v).ok())
            .unwrap_or_default(),
        preexec_retry_limit: setting(&q.other, &p.other, "LOCAL_MAX_PREEXEC_RETRY"),
        preexec_retry_exit: q
            .other
            .get("LOCAL_MAX_PREEXEC_RETRY_ACTION")
            .or_else(|| p.other.get("LOCAL_MAX_PREEXEC_RETRY_ACTION"))
            .is_some_and(|a| a.eq_ignore_ascii_case("EXIT")),
        max_job_requeue: setting(&q.other, &p.other, "MAX_JOB_REQUEUE"),
        chkpnt: q
            .other
            .get("CHKPNT")
            .and_then(|v| crate::chkpnt::ChkCfg::parse_queue(v)),
        mig_minutes: q
            .other
            .get("MIG")
            .and_then(|v| v.trim().parse::<u32>().ok()),
        job_accept_interval: q
            .other
            .get("JOB_ACCEPT_INTERVAL")
            .and_then(|v| v.trim().parse::<u32>().ok()),
        settings: q.limits.clone(),
        rlimits: crate::limits::parse(&q.limits, unit).0,
        run_window: q
            .run_window
            .as_ref()
            .map(|w| w.to_string())
            .unwrap_or_default(),
        dispatch_window: q
            .dispatch_window
            .as_ref()
            .map(|w| w.to_string())
            .unwrap_or_default(),
        resume_cond: q
            .resume_cond
            .as_deref()
            .and_then(|c| basalt_susp_core::Cond::parse(c).ok()),
        run_windows: q.run_window.clone(),
        dispatch_windows: q.dispatch_window.clone(),
        shown: QueueShown {
            users: configured(&q.users, |n| b.user_groups.iter().any(|g| g.name == n)),
            hosts: configured(&q.hosts, |n| b.host_groups.iter().any(|g| g.name == n)),
            requeue_exit_values: q.requeue_exit_values.clone().unwrap_or_default(),
            stop_cond: q.stop_cond.clone().unwrap_or_default(),
            resume_cond: q.resume_cond.clone().unwrap_or_default(),
            terminate_when: q.terminate_when.clone(),
        },
    }
}

/// Application profile `a` of lsb.applications, by name.
pub(super) fn app_profile(
    a: &basalt_config::batch::Application,
    unit: &str,
) -> (String, AppProfile) {
    let get = |k: &str| {
        a.other
            .get(k)
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let profile = AppProfile {
        name: a.name.clone(),
        description: a.description.clone(),
        res_req: get("RES_REQ"),
        pre_exec: get("PRE_EXEC"),
        post_exec: get("POST_EXEC"),
        job_starter: get("JOB_STARTER"),
        include_postproc: postproc(&a.other).0,
        postproc_timeout_mins: postproc(&a.other).1,
        success_exit_values: a
            .other
            .get("SUCCESS_EXIT_VALUES")
            .and_then(|v| basalt_config::batch::parse_exit_values(v).ok()),
        requeue: a
            .other
            .get("REQUEUE_EXIT_VALUES")
            .and_then(|v| RequeueValues::parse(v).ok()),
        rlimits: crate::limits::parse(&a.other, unit).0,
        max_job_preempt: a
            .other
            .get("MAX_JOB_PREEMPT")
            .and_then(|v| v.trim().parse().ok()),
        no_preempt_run_time: a
            .other
            .get("NO_PREEMPT_RUN_TIME")
            .and_then(|v| basalt_config::batch::NoPreemptTime::parse(v).ok()),
        no_preempt_finish_time: a
            .other
            .get("NO_PREEMPT_FINISH_TIME")
            .and_then(|v| basalt_config::batch::NoPreemptTime::parse(v).ok()),
        chkpnt: {
            let dir = get("CHKPNT_DIR");
            let minutes = |k: &str| get(k).parse::<i64>().unwrap_or(0).max(0) * 60;
            (!dir.is_empty()).then(|| crate::chkpnt::ChkCfg {
                dir,
                period: minutes("CHKPNT_PERIOD"),
                method: String::new(),
                init: minutes("CHKPNT_INITPERIOD"),
            })
        },
        chkpnt_method: get("CHKPNT_METHOD"),
        settings: a.other.clone(),
    };
    (a.name.clone(), profile)
}

/// JOB_INCLUDE_POSTPROC (Y: true) and JOB_POSTPROC_TIMEOUT (minutes) among lsb.params'
/// or an application profile's settings (None: not set).
pub(super) fn postproc(settings: &BTreeMap<String, String>) -> (Option<bool>, Option<u32>) {
    (
        settings
            .get("JOB_INCLUDE_POSTPROC")
            .map(|v| v.trim().eq_ignore_ascii_case("Y")),
        settings
            .get("JOB_POSTPROC_TIMEOUT")
            .and_then(|v| v.trim().parse::<u32>().ok()),
    )
}
