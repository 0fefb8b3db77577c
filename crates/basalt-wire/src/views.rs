//! The query answers on the wire: bjobs, bqueues, bhosts and bparams replies built from
//! the core's views (`basalt_sched::views`), which the owner thread takes. Every string
//! and wire message of these answers is made here, off the owner thread.

use basalt_core::job::{JobState, wait_status_parts};
use basalt_proto::mbatchd as pb;
use basalt_sched::{HostsView, JobView, JobsView, ParamsView, QueuesView};

fn limit(v: Option<u32>) -> i64 {
    v.map_or(-1, i64::from)
}

/// The bjobs reply; `reason_hosts`: name the hosts of host-level pending reasons
/// (`JobsRequest.reason_hosts`), else only count them.
pub fn jobs_reply(v: &JobsView, reason_hosts: bool) -> pb::JobsReply {
    pb::JobsReply {
        jobs: v
            .jobs
            .iter()
            .map(|j| job_info(j, reason_hosts, &|code| v.resource_of(code)))
            .collect(),
        not_found: v
            .not_found
            .iter()
            .map(|&(id, idx)| pb::JobRef {
                job_id: id,
                idx: idx.unwrap_or(0),
                has_idx: idx.is_some(),
            })
            .collect(),
        total: None,
    }
}

/// One job's bjobs record (`reason_hosts` as for [`jobs_reply`]); `resource_of` names
/// the resource of a reservation-shortfall reason ([`JobsView::resource_of`]).
pub fn job_info<'a>(
    v: &JobView,
    reason_hosts: bool,
    resource_of: &dyn Fn(u32) -> Option<&'a str>,
) -> pb::JobInfo {
    let j = &v.job;
    let state = v.state;
    let finished = state.is_finished();
    let exit_code = if finished {
        wait_status_parts(j.exit_status).0
    } else {
        -1
    };
    let pend_reasons = if state == JobState::Psusp {
        vec![pb::PendReason {
            code: basalt_core::job::pend::USER_STOP,
            ..Default::default()
        }]
    } else if state.is_pending() {
        j.pend_reasons
            .iter()
            .map(|(code, hosts)| pb::PendReason {
                code: *code,
                hosts: if reason_hosts {
                    hosts.clone()
                } else {
                    Vec::new()
                },
                num_hosts: u32::try_from(hosts.len()).unwrap_or(u32::MAX),
                // basalt-core has no text for these; bjobs shows the detail (the
                // resource a reservation lacks: "Job requirements for reserving
                // resource (verilog) not satisfied").
                detail: if *code == basalt_sched::PEND_ARRAY_LIMIT {
                    basalt_sched::PEND_ARRAY_LIMIT_TEXT.to_string()
                } else {
                    resource_of(*code).unwrap_or_default().to_owned()
                },
            })
            .collect()
    } else {
        Vec::new()
    };
    let reasons = if state == JobState::Psusp && j.reasons == 0 {
        basalt_core::job::susp::USER_STOP
    } else {
        j.reasons
    };
    pb::JobInfo {
        job_id: j.id,
        idx: j.idx,
        user: j.sub.user.to_string(),
        uid: j.sub.uid,
        state: state.code(),
        queue: j.queue.to_string(),
        from_host: j.sub.from_host.to_string(),
        exec_hosts: j.hosts.clone(),
        job_name: j.display_name(),
        command: j.sub.command.to_string(),
        submit_time: j.sub.submit_time,
        start_time: j.start_time,
        end_time: j.end_time,
        cwd: j.sub.cwd.to_string(),
        spec_cwd: j.sub.spec_cwd.to_string(),
        in_file: j.sub.in_file.to_string(),
        out_file: j.sub.out_file.to_string(),
        err_file: j.sub.err_file.to_string(),
        project: j.sub.project.to_string(),
        num_processors: j.sub.num_processors,
        max_processors: j.sub.max_processors,
        res_req: j.sub.res_req.to_string(),
        asked_hosts: j.sub.asked_hosts.clone(),
        exit_status: j.exit_status,
        exit_code,
        reasons,
        subreasons: j.subreasons,
        pend_reasons,
        term_reason: j.term_reason.to_string(),
        cpu_time: if finished {
            j.cpu_time
        } else {
            j.usage().utime + j.usage().stime
        },
        mem_kb: j.usage().mem_kb,
        swap_kb: j.usage().swap_kb,
        max_mem_kb: j.usage().max_mem_kb,
        avg_mem_kb: j.usage().avg_mem_kb,
        pids: j.usage().pids.clone(),
        pgid: j.pgid,
        exec_home: j.exec_home.to_string(),
        exec_cwd: j.exec_cwd.to_string(),
        exec_user: j.exec_user.to_string(),
        exclusive: j.sub.options & basalt_core::job::sub::EXCLUSIVE != 0,
        rerunnable: j.sub.options & basalt_core::job::sub::RERUNNABLE != 0,
        depend_cond: j.sub.depend_cond.to_string(),
        user_group: j.sub.user_group.to_string(),
        login_shell: j.sub.login_shell.to_string(),
        rusage_time: j.usage().time,
        options: j.sub.options,
        options2: j.sub.options2,
        hold: j.sub.options2 & basalt_core::job::sub2::HOLD != 0,
        position: v.position,
        run_limit: j.sub.rlimits[basalt_sched::RLIMIT_RUN],
        begin_time: j.sub.begin_time,
        term_time: j.sub.term_time,
        pid: j.pid,
        post_exec_status: j.requeues.as_ref().map_or(0, |r| r.post_bits),
        requeue_count: j.requeues.as_ref().map_or(0, |r| r.by_exit_value),
        effective_res_req: j
            .used_req
            .as_deref()
            .filter(|_| !j.state.is_pending())
            .unwrap_or_default()
            .to_owned(),
        app: j.sub.app().to_owned(),
        chkpnt_dir: v.chk.as_ref().map(|c| c.dir.clone()).unwrap_or_default(),
        chkpnt_period: v.chk.as_ref().map_or(0, |c| c.period),
        chkpnt_method: v.chk.as_ref().map(|c| c.method.clone()).unwrap_or_default(),
        chkpnt_count: j.chk.as_ref().map_or(0, |c| c.count),
        chkpnt_time: j.chk.as_ref().map_or(0, |c| c.last_ok),
        chkpnt_error: j.chk.as_ref().map(|c| c.error.clone()).unwrap_or_default(),
        restart: v.chk.as_ref().is_some_and(|c| c.restart),
        restart_error: j
            .chk
            .as_ref()
            .map(|c| c.restart_error.clone())
            .unwrap_or_default(),
        reserved_hosts: v
            .reserved
            .as_ref()
            .map(|(h, _)| h.clone())
            .unwrap_or_default(),
        reserve_time: v.reserved.as_ref().map_or(0, |(_, t)| t / 1000),
        preempt_count: j.preempt_count,
        preempted_by: j
            .preempted_by
            .map(|(id, idx)| {
                if idx > 0 {
                    format!("{id}[{idx}]")
                } else {
                    id.to_string()
                }
            })
            .unwrap_or_default(),
        forward_cluster: j
            .mc
            .as_ref()
            .map(|m| m.fwd_cluster.to_string())
            .unwrap_or_default(),
        forward_queue: j
            .mc
            .as_ref()
            .map(|m| m.fwd_queue.to_string())
            .unwrap_or_default(),
        forward_time: j.mc.as_ref().map_or(0, |m| m.fwd_time),
        remote_job_id: j.mc.as_ref().map_or(0, |m| m.remote_id),
        mc_returns: j.mc.as_ref().map_or(0, |m| m.returns),
        source_cluster: j
            .mc
            .as_ref()
            .map(|m| m.src_cluster.to_string())
            .unwrap_or_default(),
        source_job_id: j.mc.as_ref().map_or(0, |m| m.src_id),
    }
}

/// The bqueues reply.
pub fn queues_reply(v: &QueuesView) -> pb::QueuesReply {
    let mut out = pb::QueuesReply {
        not_found: v.not_found.clone(),
        config_problem: v.config_problem.clone(),
        ..Default::default()
    };
    for qv in &v.queues {
        let q = &qv.queue;
        let (njobs, pend, run, ssusp, ususp) = qv.counts;
        out.queues.push(pb::QueueInfo {
            name: q.name.clone(),
            description: q.description.clone(),
            priority: q.priority,
            nice: q.nice.unwrap_or(0),
            open: q.open,
            active: q.active && qv.windows_open,
            inactive_reason: if !q.active {
                "Inact_Adm".into()
            } else if !qv.windows_open {
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
            rsv: qv.rsv,
            is_default: qv.is_default,
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
            preemption: q.preemption.clone(),
            preempts: qv.preempts.clone(),
            preempted_by: qv.preempted_by.clone(),
            max_job_preempt: limit(qv.max_job_preempt),
            fairshare: q.fairshare.clone(),
            slot_pool: qv.pool.as_ref().map(|p| p.pool.clone()).unwrap_or_default(),
            slot_share: qv.pool.as_ref().map_or(0, |p| p.share),
            pool_slots: qv.pool.as_ref().map_or(0, |p| p.size),
            pool_target: qv.pool.as_ref().map_or(0, |p| p.target),
            pool_used: qv.pool.as_ref().map_or(0, |p| p.used),
            pool_accumulated: qv.pool.as_ref().map_or(0.0, |p| p.accumulated),
            share_info: share_info(&qv.share_info),
            users_configured: q.shown.users.clone(),
            hosts_configured: q.shown.hosts.clone(),
            pre_exec: q.pre_exec.clone(),
            post_exec: q.post_exec.clone(),
            job_starter: q.job_starter.clone(),
            requeue_exit_values: q.shown.requeue_exit_values.clone(),
            rerunnable: q.rerunnable,
            chkpnt_dir: q.chkpnt.as_ref().map(|c| c.dir.clone()).unwrap_or_default(),
            chkpnt_period: q.chkpnt.as_ref().map_or(0, |c| c.period),
            backfill: q.backfill,
            exclusive: q.exclusive,
            // YES (or unset) is LSF's default: both kinds of job.
            interactive: match q.interactive.as_str() {
                "NO" | "ONLY" => q.interactive.clone(),
                _ => String::new(),
            },
            slot_reserve_secs: qv.slot_reserve_secs.unwrap_or(0),
            resume_cond: q.shown.resume_cond.clone(),
            stop_cond: q.shown.stop_cond.clone(),
            job_controls: q.job_controls.clone().into_iter().collect(),
            terminate_when: q.shown.terminate_when.clone(),
            admin_comment: q.message.clone(),
            pre_post_exec_user: q.pre_post_exec_user.clone(),
            mig_minutes: q.mig_minutes.map(i64::from),
            accept_interval_secs: qv.accept_interval_secs,
        });
    }
    out
}

/// The bhosts reply.
pub fn hosts_reply(v: &HostsView) -> pb::HostsReply {
    let mut out = pb::HostsReply {
        not_found: v.not_found.clone(),
        config_problem: v.config_problem.clone(),
        shared: v
            .shared
            .iter()
            .map(|(resource, hosts, reserved)| pb::SharedReserved {
                resource: resource.clone(),
                hosts: hosts.clone(),
                reserved: *reserved,
            })
            .collect(),
        ..Default::default()
    };
    for hv in &v.hosts {
        let h = &hv.host;
        let status = hv.status;
        let (njobs, run, ssusp, ususp) = hv.counts;
        // LSF's NJOBS counts reserved slots too.
        let njobs = njobs + h.rsv_slots;
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
            rsv: h.rsv_slots,
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
            reserved: h
                .reserved
                .iter()
                .map(|(k, v)| basalt_proto::common::LoadValue {
                    name: k.clone(),
                    value: *v,
                })
                .collect(),
        });
    }
    out
}

/// SHARE_INFO_FOR tables on the wire.
fn share_info(v: &[basalt_sched::fairshare::ShareInfo]) -> Vec<pb::ShareInfo> {
    v.iter()
        .map(|i| pb::ShareInfo {
            path: i.path.clone(),
            rows: i
                .rows
                .iter()
                .map(|r| pb::ShareRow {
                    name: r.name.clone(),
                    shares: r.shares,
                    priority: r.priority,
                    started: r.started,
                    reserved: 0,
                    cpu_time: r.cpu_time,
                    run_time: r.run_time,
                    adjust: 0.0,
                })
                .collect(),
        })
        .collect()
}

/// The bhpart reply.
pub fn partitions_reply(
    parts: &[basalt_sched::fairshare::PartitionView],
    not_found: Vec<String>,
) -> pb::HostPartitionsReply {
    pb::HostPartitionsReply {
        partitions: parts
            .iter()
            .map(|p| pb::HostPartitionInfo {
                name: p.name.clone(),
                hosts: p.hosts.clone(),
                share_info: share_info(&p.share_info),
            })
            .collect(),
        not_found,
    }
}

/// The bparams (and `badmin showconf mbd`) reply.
pub fn params_reply(v: &ParamsView) -> pb::ParamsReply {
    let p = &v.params;
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
        kv(
            "PREEMPT_FOR",
            p.preempt_for.clone().unwrap_or_else(|| "-".into()),
        ),
        kv(
            "PREEMPTION_WAIT_TIME",
            p.preemption_wait_time_secs.unwrap_or(300).to_string(),
        ),
        kv(
            "NO_PREEMPT_RUN_TIME",
            p.no_preempt_run_time
                .map_or_else(|| "-".into(), |t| t.to_string()),
        ),
        kv(
            "NO_PREEMPT_FINISH_TIME",
            p.no_preempt_finish_time
                .map_or_else(|| "-".into(), |t| t.to_string()),
        ),
        kv("MAX_ACCT_ARCHIVE_FILE", opt(p.max_acct_archive_file)),
    ];
    for (k, v) in &p.other {
        params.push(kv(k, v.clone()));
    }
    let mut mbd_conf: Vec<pb::KeyValue> = v
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
        v.sharedir.display().to_string(),
    );
    ensure(
        &mut mbd_conf,
        "LSF_CONFDIR",
        v.confdir.display().to_string(),
    );
    ensure(&mut mbd_conf, "LSF_ENVDIR", v.envdir.display().to_string());
    ensure(&mut mbd_conf, "LSF_UNIT_FOR_LIMITS", "KB".into());
    pb::ParamsReply {
        params,
        default_queues: vec![v.default_queue.clone()],
        mbd_sleep_time: p.mbd_sleep_time_secs,
        sbd_sleep_time: p.sbd_sleep_time_secs,
        job_accept_interval: p.job_accept_interval,
        mbd_conf,
        started_at: v.started_at,
        config_problem: v.config_problem.clone(),
        mbd_pid: v.pid,
        status: Some(mbd_status(&v.status, &v.peaks)),
    }
}

/// `badmin showstatus`'s counts.
fn mbd_status(s: &basalt_sched::StatusView, p: &basalt_sched::Peaks) -> pb::MbdStatus {
    pb::MbdStatus {
        clients: p.clients,
        clients_peak: p.clients_peak,
        servers: s.servers,
        servers_peak: p.servers_peak.max(s.servers),
        cpus: s.cpus,
        cpus_peak: p.cpus_peak.max(s.cpus),
        slots: s.slots,
        slots_peak: p.slots_peak.max(s.slots),
        hosts_ok: s.hosts_ok,
        hosts_closed: s.hosts_closed,
        hosts_unreach: s.hosts_unreach,
        hosts_unavail: s.hosts_unavail,
        jobs_run: s.jobs_run,
        jobs_susp: s.jobs_susp,
        jobs_pend: s.jobs_pend,
        jobs_finished: s.jobs_finished,
        users: s.users,
        user_groups: s.user_groups,
        active_users: s.active_users,
    }
}

/// The blimits reply: each count in use, and how many limits are configured.
pub fn limits_reply(rows: &[basalt_sched::views::LimitRow], configured: usize) -> pb::LimitsReply {
    pb::LimitsReply {
        limits: rows
            .iter()
            .map(|r| {
                let [users, queues, hosts, projects, apps] = r.consumers.clone();
                pb::LimitUsage {
                    name: r.name.clone(),
                    users,
                    queues,
                    hosts,
                    projects,
                    apps,
                    has_slots: r.slots.is_some(),
                    slots_used: r.slots.map_or(0, |s| s.0),
                    slots_limit: r.slots.map_or(0, |s| s.1),
                    has_jobs: r.jobs.is_some(),
                    jobs_used: r.jobs.map_or(0, |j| j.0),
                    jobs_limit: r.jobs.map_or(0, |j| j.1),
                    amounts: r
                        .amounts
                        .iter()
                        .map(|(name, used, limit)| pb::LimitAmount {
                            name: name.clone(),
                            used: *used,
                            limit: *limit,
                        })
                        .collect(),
                }
            })
            .collect(),
        configured: u32::try_from(configured).unwrap_or(u32::MAX),
    }
}

/// The busers reply (JL/P and MAX -1 when not set).
pub fn users_reply(rows: &[basalt_sched::views::UserRow]) -> pb::UsersReply {
    pb::UsersReply {
        users: rows
            .iter()
            .map(|r| pb::UserInfo {
                name: r.name.clone(),
                jl_p: r.jl_p.unwrap_or(-1.0),
                max: r.max.map_or(-1, |m| i32::try_from(m).unwrap_or(i32::MAX)),
                njobs: r.slots.njobs,
                pend: r.slots.pend,
                run: r.slots.run,
                ssusp: r.slots.ssusp,
                ususp: r.slots.ususp,
                rsv: r.slots.rsv,
            })
            .collect(),
    }
}

/// The bapp reply: each profile with its jobs' slots and settings; the unknown names.
pub fn apps_reply(rows: &[basalt_sched::views::AppRow], not_found: Vec<String>) -> pb::AppsReply {
    pb::AppsReply {
        apps: rows
            .iter()
            .map(|r| pb::AppInfo {
                name: r.profile.name.clone(),
                description: r.profile.description.clone(),
                njobs: r.slots.njobs,
                pend: r.slots.pend,
                run: r.slots.run,
                ssusp: r.slots.ssusp,
                ususp: r.slots.ususp,
                rsv: r.slots.rsv,
                settings: r
                    .profile
                    .settings
                    .iter()
                    .map(|(k, v)| pb::KeyValue {
                        key: k.clone(),
                        value: v.clone(),
                    })
                    .collect(),
            })
            .collect(),
        not_found,
    }
}
