//! Translations between mbatchd's wire messages (`basalt-proto`) and the batch core's
//! values (`basalt-sched`): submissions, job references, queries, job info, reports.
//! There is deliberately no conversion of a request's `caller` field: mbatchd takes the
//! caller only from the verified credential.
//! Its own crate so `bsub` can check a submission's bounds without linking mbatchd.

use basalt_core::job::{JobState, wait_status_parts};
use basalt_proto::mbatchd as pb;
use basalt_sched::{Caller, Job, JobKey, JobQuery, Sched, Submission};

pub fn key_of(r: &pb::JobRef) -> (u64, Option<u32>) {
    (r.job_id, r.has_idx.then_some(r.idx))
}

pub fn job_ref(k: JobKey, has_idx: bool) -> pb::JobRef {
    pb::JobRef {
        job_id: k.0,
        idx: k.1,
        has_idx: has_idx || k.1 != 0,
    }
}

pub fn submission(s: &pb::JobSubmission) -> Submission {
    let mut rlimits = [-1i64; 11];
    for (i, v) in s.rlimits.iter().take(11).enumerate() {
        rlimits[i] = *v;
    }
    Submission {
        user: String::new(),
        uid: 0,
        options: s.options,
        options2: s.options2,
        num_processors: s.num_processors,
        max_processors: s.max_processors,
        submit_time: 0,
        begin_time: s.begin_time,
        term_time: s.term_time,
        rlimits,
        umask: s.umask,
        queue: s.queue.clone(),
        res_req: s.res_req.clone(),
        from_host: s.from_host.clone(),
        cwd: s.cwd.clone(),
        in_file: s.in_file.clone(),
        out_file: s.out_file.clone(),
        err_file: s.err_file.clone(),
        sub_home_dir: s.home_dir.clone(),
        job_file: String::new(),
        asked_hosts: s.asked_hosts.clone(),
        depend_cond: s.depend_cond.clone(),
        pre_exec: s.pre_exec.clone(),
        job_name: s.job_name.clone(),
        command: s.command.clone(),
        mail_user: s.mail_user.clone(),
        project: s.project.clone(),
        login_shell: s.login_shell.clone(),
        spec_cwd: s.spec_cwd.clone(),
        user_group: s.user_group.clone(),
        // Carried by the SubmitRequest, set by the service.
        submit_token: String::new(),
    }
}

pub fn query(r: &pb::JobsRequest, caller: &Caller) -> JobQuery {
    let user = match r.user.as_str() {
        "" if r.ids.is_empty() => Some(caller.user.clone()),
        "" | "all" => None,
        u => Some(u.to_string()),
    };
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    JobQuery {
        ids: r.ids.iter().map(key_of).collect(),
        user,
        queue: nonempty(&r.queue),
        host: nonempty(&r.host),
        job_name: nonempty(&r.job_name),
        states: r.states,
    }
}

pub fn job_info(s: &Sched, j: &Job) -> pb::JobInfo {
    let state = s.shown_state(j);
    let finished = state.is_finished();
    let exit_code = if finished {
        wait_status_parts(j.exit_status).0
    } else {
        -1
    };
    let pend_reasons = if state == JobState::Psusp {
        vec![pb::PendReason {
            code: basalt_core::job::pend::USER_STOP,
            hosts: Vec::new(),
            detail: String::new(),
        }]
    } else if state.is_pending() {
        j.pend_reasons
            .iter()
            .map(|(code, hosts)| pb::PendReason {
                code: *code,
                hosts: hosts.clone(),
                // basalt-core has no text for this one; bjobs shows the detail.
                detail: if *code == basalt_sched::PEND_ARRAY_LIMIT {
                    basalt_sched::PEND_ARRAY_LIMIT_TEXT.to_string()
                } else {
                    String::new()
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
        user: j.sub.user.clone(),
        uid: j.sub.uid,
        state: state.code(),
        queue: j.queue.clone(),
        from_host: j.sub.from_host.clone(),
        exec_hosts: j.hosts.clone(),
        job_name: j.display_name(),
        command: j.sub.command.clone(),
        submit_time: j.sub.submit_time,
        start_time: j.start_time,
        end_time: j.end_time,
        cwd: j.sub.cwd.clone(),
        spec_cwd: j.sub.spec_cwd.clone(),
        in_file: j.sub.in_file.clone(),
        out_file: j.sub.out_file.clone(),
        err_file: j.sub.err_file.clone(),
        project: j.sub.project.clone(),
        num_processors: j.sub.num_processors,
        max_processors: j.sub.max_processors,
        res_req: j.sub.res_req.clone(),
        asked_hosts: j.sub.asked_hosts.clone(),
        exit_status: j.exit_status,
        exit_code,
        reasons,
        subreasons: j.subreasons,
        pend_reasons,
        term_reason: j.term_reason.clone(),
        cpu_time: if finished {
            j.cpu_time
        } else {
            j.usage.utime + j.usage.stime
        },
        mem_kb: j.usage.mem_kb,
        swap_kb: j.usage.swap_kb,
        max_mem_kb: j.usage.max_mem_kb,
        avg_mem_kb: j.usage.avg_mem_kb,
        pids: j.usage.pids.clone(),
        pgid: j.pgid,
        exec_home: j.exec_home.clone(),
        exec_cwd: j.exec_cwd.clone(),
        exec_user: j.exec_user.clone(),
        exclusive: j.sub.options & basalt_core::job::sub::EXCLUSIVE != 0,
        rerunnable: j.sub.options & basalt_core::job::sub::RERUNNABLE != 0,
        depend_cond: j.sub.depend_cond.clone(),
        user_group: j.sub.user_group.clone(),
        login_shell: j.sub.login_shell.clone(),
        rusage_time: j.usage.time,
        options: j.sub.options,
        options2: j.sub.options2,
        hold: j.sub.options2 & basalt_core::job::sub2::HOLD != 0,
        position: s.position(j),
        run_limit: j.sub.rlimits[basalt_sched::RLIMIT_RUN],
        begin_time: j.sub.begin_time,
        term_time: j.sub.term_time,
        pid: j.pid,
    }
}

pub fn report(r: &pb::JobReport) -> Option<basalt_sched::Report> {
    use basalt_sched::{ReportKind, Usage};
    let id = r.id.as_ref()?;
    let usage = || Usage {
        utime: r.utime,
        stime: r.stime,
        mem_kb: r.mem_kb,
        swap_kb: r.swap_kb,
        max_mem_kb: r.max_mem_kb,
        avg_mem_kb: r.avg_mem_kb,
        pids: r.pids.clone(),
        pgid: r.pgid,
        time: r.time,
    };
    let kind = match pb::ReportKind::try_from(r.kind).ok()? {
        pb::ReportKind::Unspecified => return None,
        pb::ReportKind::Started => ReportKind::Started {
            pid: r.pid,
            pgid: r.pgid,
        },
        pb::ReportKind::Executing => ReportKind::Executing {
            exec_uid: r.exec_uid,
            exec_user: r.exec_user.clone(),
            exec_home: r.exec_home.clone(),
            exec_cwd: r.exec_cwd.clone(),
            pid: r.pid,
        },
        pb::ReportKind::Rusage => ReportKind::Usage(usage()),
        pb::ReportKind::State => ReportKind::State {
            state: r.state,
            reasons: r.reasons,
            subreasons: r.subreasons,
        },
        pb::ReportKind::Finished => ReportKind::Finished {
            exit_status: r.exit_status,
            usage: usage(),
            term_reason: r.term_reason.clone(),
        },
        pb::ReportKind::StartFailed => ReportKind::StartFailed {
            message: r.message.clone(),
        },
    };
    Some(basalt_sched::Report {
        host: r.host.clone(),
        key: (id.job_id, id.idx),
        attempt: r.attempt,
        seq: r.seq,
        time: r.time,
        kind,
    })
}
