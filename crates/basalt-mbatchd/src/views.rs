//! The query views built from the core's state on the owner thread: `bqueues`,
//! `bhosts` and `bparams`/`badmin showconf` answers, as wire replies.

use basalt_config::Config;
use basalt_proto::mbatchd as pb;
use basalt_sched::Sched;
use std::time::SystemTime;

fn limit(v: Option<u32>) -> i64 {
    v.map_or(-1, i64::from)
}

pub(crate) fn queues_reply(s: &Sched, names: &[String]) -> pb::QueuesReply {
    let mut out = pb::QueuesReply::default();
    for name in names {
        if !s.queues().iter().any(|q| &q.name == name) {
            out.not_found.push(name.clone());
        }
    }
    let mut queues: Vec<&basalt_sched::Queue> = s
        .queues()
        .iter()
        .filter(|q| names.is_empty() || names.contains(&q.name))
        .collect();
    queues.sort_by_key(|q| std::cmp::Reverse(q.priority));
    for q in queues {
        let (njobs, pend, run, ssusp, ususp) = s.queue_counts(&q.name);
        out.queues.push(pb::QueueInfo {
            name: q.name.clone(),
            description: q.description.clone(),
            priority: q.priority,
            nice: q.nice.unwrap_or(0),
            open: q.open,
            active: q.active && s.queue_windows_open(q),
            inactive_reason: if !q.active {
                "Inact_Adm".into()
            } else if !s.queue_windows_open(q) {
                "Inact_Win".into()
            } else {
                String::new()
            },
            max_jobs: limit(q.qjob_limit),
            jl_u: limit(q.ujob_limit),
            jl_p: q.pjob_limit.unwrap_or(-1.0),
            jl_h: limit(q.hjob_limit),
            njobs,
            pend,
            run,
            ssusp,
            ususp,
            rsv: 0,
            is_default: q.name == s.config().default_queue,
            // bqueues prints an empty list as "all"; a restricted queue nobody may use
            // (its user group could not be resolved) says so.
            users: if q.users_all {
                if q.users_except.is_empty() {
                    Vec::new()
                } else {
                    std::iter::once("all".to_owned())
                        .chain(q.users_except.iter().map(|u| format!("~{u}")))
                        .collect()
                }
            } else if q.users.is_empty() {
                vec!["none".into()]
            } else {
                q.users.clone()
            },
            hosts: q.hosts.clone(),
            administrators: q.administrators.clone(),
            res_req: q.res_req.clone(),
            run_window: q.run_window.clone(),
            dispatch_window: q.dispatch_window.clone(),
            settings: q.settings.clone().into_iter().collect(),
            load_sched: q.load_sched.clone().into_iter().collect(),
            load_stop: q.load_stop.clone().into_iter().collect(),
        });
    }
    out
}

pub(crate) fn hosts_reply(s: &Sched, names: &[String]) -> pb::HostsReply {
    let mut out = pb::HostsReply::default();
    for name in names {
        if s.host_name(name).is_none() {
            out.not_found.push(name.clone());
        }
    }
    for h in s
        .hosts()
        .iter()
        .filter(|h| names.is_empty() || names.iter().any(|n| basalt_core::same_host(n, &h.name)))
    {
        let status = s.host_status(h);
        let (njobs, run, ssusp, ususp) = s.host_counts(&h.name);
        out.hosts.push(pb::BatchHostInfo {
            name: h.name.clone(),
            status: status.short().into(),
            long_status: status.long().into(),
            jl_u: limit(h.jl_u),
            max: limit(h.max_slots()),
            njobs,
            run,
            ssusp,
            ususp,
            rsv: 0,
            message: h.message.clone(),
            cpu_factor: h.cpu_factor,
            load_sched: h.load_sched.clone().into_iter().collect(),
            load_stop: h.load_stop.clone().into_iter().collect(),
            load: h
                .load
                .iter()
                .map(|(k, v)| basalt_proto::common::LoadValue {
                    name: k.clone(),
                    value: *v,
                })
                .collect(),
            dispatch_window: String::new(),
        });
    }
    out
}

pub(crate) fn params_reply(c: &Config, s: &Sched, started: SystemTime) -> pb::ParamsReply {
    let p = &c.batch.params;
    let kv = |k: &str, v: String| pb::KeyValue {
        key: k.into(),
        value: v,
    };
    let opt = |v: Option<u32>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let mut params = vec![
        kv("DEFAULT_QUEUE", p.default_queue.join(" ")),
        kv("MBD_SLEEP_TIME", p.mbd_sleep_time_secs.to_string()),
        kv("SBD_SLEEP_TIME", p.sbd_sleep_time_secs.to_string()),
        kv("JOB_ACCEPT_INTERVAL", p.job_accept_interval.to_string()),
        kv("CLEAN_PERIOD", p.clean_period_secs.to_string()),
        kv("MAX_JOB_NUM", p.max_job_num.to_string()),
        kv("PG_SUSP_IT", p.pg_susp_it_secs.to_string()),
        kv("MAX_SBD_FAIL", p.max_sbd_fail.to_string()),
        kv("MAX_JOBID", p.max_jobid.to_string()),
        kv("MAX_JOB_ARRAY_SIZE", p.max_job_array_size.to_string()),
        kv(
            "JOB_TERMINATE_INTERVAL",
            p.job_terminate_interval_secs.to_string(),
        ),
        kv("DEFAULT_PROJECT", p.default_project.clone()),
        kv("RUSAGE_UPDATE_RATE", p.rusage_update_rate.to_string()),
        kv("RUSAGE_UPDATE_PERCENT", p.rusage_update_percent.to_string()),
        kv("MAX_PREEMPT_JOBS", p.max_preempt_jobs.to_string()),
        kv("CPU_TIME_FACTOR", p.cpu_time_factor.to_string()),
        kv("RUN_TIME_FACTOR", p.run_time_factor.to_string()),
        kv("RUN_JOB_FACTOR", p.run_job_factor.to_string()),
        kv("HIST_HOURS", p.hist_hours.to_string()),
        kv("MAX_JOB_PREEMPT", opt(p.max_job_preempt)),
        kv("MAX_ACCT_ARCHIVE_FILE", opt(p.max_acct_archive_file)),
    ];
    for (k, v) in &p.other {
        params.push(kv(k, v.clone()));
    }
    let mut mbd_conf: Vec<pb::KeyValue> = c
        .lsf_conf
        .iter()
        .map(|(k, v)| kv(k, v.to_string()))
        .collect();
    let ensure = |list: &mut Vec<pb::KeyValue>, k: &str, v: String| {
        if !list.iter().any(|x| x.key == k) {
            list.push(pb::KeyValue {
                key: k.into(),
                value: v,
            });
        }
    };
    ensure(
        &mut mbd_conf,
        "LSB_SHAREDIR",
        c.sharedir().display().to_string(),
    );
    ensure(
        &mut mbd_conf,
        "LSF_CONFDIR",
        c.confdir.display().to_string(),
    );
    ensure(&mut mbd_conf, "LSF_ENVDIR", c.envdir.display().to_string());
    ensure(&mut mbd_conf, "LSF_UNIT_FOR_LIMITS", "KB".into());
    pb::ParamsReply {
        params,
        default_queues: vec![s.config().default_queue.clone()],
        mbd_sleep_time: p.mbd_sleep_time_secs,
        sbd_sleep_time: p.sbd_sleep_time_secs,
        job_accept_interval: p.job_accept_interval,
        mbd_conf,
        started_at: started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
        config_problem: String::new(),
    }
}
