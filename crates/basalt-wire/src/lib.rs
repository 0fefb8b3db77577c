//! Translations between mbatchd's wire messages (`basalt-proto`) and the batch core's
//! values (`basalt-sched`): submissions, job references, queries, reports; and the query
//! answers from the core's views ([`mod@views`]).
//! No request carries its caller (the old `caller` fields are reserved): mbatchd takes
//! the caller only from the verified credential.
//! Its own crate so `bsub` can check a submission's bounds without linking mbatchd.

use basalt_proto::mbatchd as pb;
use basalt_sched::{Caller, JobKey, JobQuery, Submission};

mod modify;
mod views;
pub use modify::{limit_of, modify};
pub use views::{
    apps_reply, hosts_reply, job_info, jobs_reply, limits_reply, params_reply, partitions_reply,
    queues_reply, users_reply,
};

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
        user: Default::default(),
        uid: 0,
        options: s.options,
        options2: s.options2,
        num_processors: s.num_processors,
        max_processors: s.max_processors,
        submit_time: 0,
        begin_time: s.begin_time,
        term_time: s.term_time,
        rlimits: rlimits.into(),
        umask: s.umask,
        queue: s.queue.as_str().into(),
        res_req: s.res_req.as_str().into(),
        from_host: s.from_host.as_str().into(),
        cwd: s.cwd.as_str().into(),
        in_file: s.in_file.as_str().into(),
        out_file: s.out_file.as_str().into(),
        err_file: s.err_file.as_str().into(),
        sub_home_dir: s.home_dir.as_str().into(),
        job_file: Default::default(),
        asked_hosts: s.asked_hosts.clone(),
        depend_cond: s.depend_cond.as_str().into(),
        pre_exec: s.pre_exec.as_str().into(),
        job_name: s.job_name.as_str().into(),
        command: s.command.as_str().into(),
        mail_user: s.mail_user.as_str().into(),
        project: s.project.as_str().into(),
        login_shell: s.login_shell.as_str().into(),
        spec_cwd: s.spec_cwd.as_str().into(),
        user_group: s.user_group.as_str().into(),
        // Carried by the SubmitRequest, set by the service.
        submit_token: Default::default(),
        extras: (!s.post_exec.is_empty()
            || !s.requeue_exit_values.is_empty()
            || !s.esub_output.is_empty()
            || !s.app.is_empty()
            || !s.files.is_empty()
            || !s.chkpnt_dir.is_empty()
            || !s.chkpnt_method.is_empty()
            || s.chkpnt_init_period > 0
            || s.restart_job.is_some())
        .then(|| {
            Box::new(basalt_sched::SubExtras {
                post_exec: s.post_exec.clone(),
                requeue_exit_values: s.requeue_exit_values.clone(),
                esub_output: s.esub_output.clone(),
                app: s.app.clone(),
                chkpnt_dir: s.chkpnt_dir.clone(),
                chkpnt_period: s.chkpnt_period,
                chkpnt_method: s.chkpnt_method.clone(),
                chkpnt_init: s.chkpnt_init_period.max(0),
                restart_job: s.restart_job.as_ref().map(|r| (r.job_id, r.idx)),
                files: s
                    .files
                    .iter()
                    .map(|f| basalt_sched::FileTransfer {
                        local: f.local.clone(),
                        remote: f.remote.clone(),
                        ops: f.ops,
                    })
                    .collect(),
            })
        }),
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
        pb::ReportKind::Finished if r.pre_exec_failed => ReportKind::PreExecFailed {
            exit_status: r.exit_status,
        },
        pb::ReportKind::Finished => ReportKind::Finished {
            exit_status: r.exit_status,
            usage: usage(),
            term_reason: r.term_reason.clone(),
            post_exec: r.has_post_exec.then_some(r.post_exec_status),
        },
        pb::ReportKind::StartFailed => ReportKind::StartFailed {
            message: r.message.clone(),
            restart_failed: r.restart_failed,
        },
        pb::ReportKind::Chkpnt => ReportKind::Chkpnt {
            ok: r.chkpnt_ok,
            pid: r.pid,
            message: r.message.clone(),
        },
        pb::ReportKind::PostExec => ReportKind::PostExec {
            status: r.post_exec_status,
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
