//! Building the [`JobSubmission`] sent to mbatchd from the options, the command and the
//! submitter, checking mbatchd's bounds first; the `Job <n> is submitted` and rejection lines.

use super::*;

/// What the job runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCommand {
    pub text: String,
    pub is_script: bool,
    /// For `bsub file`: the file as given (the default job name).
    pub script_name: Option<String>,
}

/// The submitter's side of a submission.
#[derive(Debug, Clone, Default)]
pub struct Submitter {
    pub cwd: String,
    pub home: String,
    pub umask: u32,
    pub from_host: String,
    pub vars: Vec<(String, String)>,
}

/// Build the submission from merged options.
pub fn build(o: &BsubOpts, cmd: &JobCommand, who: &Submitter) -> JobSubmission {
    let mut options = sub::PROJECT_NAME;
    let mut options2 = 0;
    let flag = |set: bool, bit: u32, acc: &mut u32| {
        if set {
            *acc |= bit;
        }
    };
    flag(o.job_name.is_some(), sub::JOB_NAME, &mut options);
    flag(o.queue.is_some(), sub::QUEUE, &mut options);
    flag(o.out.is_some(), sub::OUT_FILE, &mut options);
    flag(o.err.is_some(), sub::ERR_FILE, &mut options);
    flag(o.in_file.is_some(), sub::IN_FILE, &mut options);
    flag(o.hosts.is_some(), sub::HOST, &mut options);
    flag(
        o.exclusive || o.nnodes.is_some(),
        sub::EXCLUSIVE,
        &mut options,
    );
    flag(o.rerunnable, sub::RERUNNABLE, &mut options);
    flag(o.chkpnt.is_some(), sub::CHKPNT_DIR, &mut options);
    flag(
        o.chkpnt.as_ref().is_some_and(|c| c.period.is_some()),
        sub::CHKPNT_PERIOD,
        &mut options,
    );
    flag(o.user_group.is_some(), sub::USER_GROUP, &mut options);
    flag(o.depend.is_some(), sub::DEPEND_COND, &mut options);
    flag(o.pre_exec.is_some(), sub::PRE_EXEC, &mut options);
    flag(o.login_shell.is_some(), sub::LOGIN_SHELL, &mut options);
    flag(o.mail_user.is_some(), sub::MAIL_USER, &mut options);
    flag(o.notify_begin, sub::NOTIFY_BEGIN, &mut options);
    flag(o.notify_end, sub::NOTIFY_END, &mut options);
    flag(o.interactive != 0, sub::INTERACTIVE, &mut options);
    flag(o.interactive == 2, sub::PTY, &mut options);
    flag(o.interactive == 3, sub::PTY | sub::PTY_SHELL, &mut options);
    flag(o.hold, sub2::HOLD, &mut options2);
    flag(cmd.is_script, sub2::JOB_CMD_SPOOL, &mut options2);
    flag(
        o.out.as_ref().is_some_and(|(_, ow)| *ow),
        sub2::OUT_OVERWRITE,
        &mut options2,
    );
    flag(
        o.err.as_ref().is_some_and(|(_, ow)| *ow),
        sub2::ERR_OVERWRITE,
        &mut options2,
    );

    // -nnodes N: N whole hosts, exclusively; the slots spread evenly over them.
    let (mut nmin, mut nmax) = o.procs.unwrap_or((1, 1));
    let mut res_reqs = o.res_req.clone();
    if let Some(nodes) = o.nnodes {
        if o.procs.is_none() {
            nmin = nodes;
            nmax = nodes;
        }
        let has_span = res_reqs.iter().any(|r| r.contains("span["));
        if !has_span {
            let ptile = nmin.div_ceil(nodes).max(1);
            res_reqs.push(format!("span[ptile={ptile}]"));
        }
    }
    let res_req = resreq::merge(&res_reqs);
    flag(!res_req.is_empty(), sub::RES_REQ, &mut options);

    let mut rlimits = vec![-1i64; rlimit::COUNT];
    for (i, l) in o.limits.iter().enumerate() {
        if let Some(v) = l {
            rlimits[i] = *v;
        }
    }
    JobSubmission {
        queue: o.queue.clone().unwrap_or_default(),
        job_name: o
            .job_name
            .clone()
            .or_else(|| cmd.script_name.clone())
            .unwrap_or_default(),
        command: cmd.text.clone(),
        is_script: cmd.is_script,
        cwd: who.cwd.clone(),
        spec_cwd: o.cwd.clone().unwrap_or_default(),
        in_file: o.in_file.clone().unwrap_or_default(),
        out_file: o.out.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(),
        err_file: o.err.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(),
        num_processors: nmin,
        max_processors: nmax,
        asked_hosts: o.hosts.clone().unwrap_or_default(),
        res_req,
        project: o.project.clone().unwrap_or_default(),
        user_group: o.user_group.clone().unwrap_or_default(),
        begin_time: o.begin.unwrap_or(0),
        term_time: o.term.unwrap_or(0),
        rlimits,
        env: resolve_env(&o.env, &who.vars),
        login_shell: o.login_shell.clone().unwrap_or_default(),
        depend_cond: o.depend.clone().unwrap_or_default(),
        pre_exec: o.pre_exec.clone().unwrap_or_default(),
        post_exec: o.post_exec.clone().unwrap_or_default(),
        requeue_exit_values: o.requeue_values.clone().unwrap_or_default(),
        // Set after the esubs ran (esub | eexec).
        esub_output: String::new(),
        mail_user: o.mail_user.clone().unwrap_or_default(),
        app: o.app.clone().unwrap_or_default(),
        umask: who.umask,
        home_dir: who.home.clone(),
        from_host: who.from_host.clone(),
        options: if o.files.is_empty() {
            options
        } else {
            options | sub::OTHER_FILES
        },
        options2,
        // The submission host's files absolute (from the submission directory).
        files: o
            .files
            .iter()
            .map(|(local, remote, ops)| basalt_proto::mbatchd::FileTransfer {
                local: if local.starts_with('/') {
                    local.clone()
                } else {
                    format!("{}/{local}", who.cwd.trim_end_matches('/'))
                },
                remote: remote.clone(),
                ops: *ops,
            })
            .collect(),
        // A relative checkpoint directory is the submission directory's.
        chkpnt_dir: o
            .chkpnt
            .as_ref()
            .map(|c| {
                if c.dir.starts_with('/') {
                    c.dir.clone()
                } else {
                    format!("{}/{}", who.cwd.trim_end_matches('/'), c.dir)
                }
            })
            .unwrap_or_default(),
        chkpnt_period: o.chkpnt.as_ref().and_then(|c| c.period).unwrap_or(0),
        // The method: -k's, else the submitter's LSB_ECHKPNT_METHOD (LSF reads it from
        // the environment too).
        chkpnt_method: o
            .chkpnt
            .as_ref()
            .and_then(|c| {
                c.method.clone().or_else(|| {
                    who.vars
                        .iter()
                        .find(|(k, _)| k == "LSB_ECHKPNT_METHOD")
                        .map(|(_, v)| v.trim().to_owned())
                        .filter(|v| !v.is_empty() && !v.contains('/'))
                })
            })
            .unwrap_or_default(),
        chkpnt_init_period: o.chkpnt.as_ref().and_then(|c| c.init).unwrap_or(0),
        restart_job: None,
    }
}

/// The bounds mbatchd holds a submission to (`basalt_sched::bounds`), checked before it is
/// sent: the refusal text, LSF's message where LSF has one.
pub fn check_bounds(job: &JobSubmission) -> Result<(), String> {
    let sub = basalt_wire::submission(job);
    basalt_sched::bounds::check_submission(&sub)
        .and_then(|()| basalt_sched::bounds::check_env(&job.env))
        .map_err(|e| match e {
            basalt_sched::SchedError::BadArgument(m) => m,
            e => e.to_string(),
        })
}

/// The success line.
pub fn submitted_line(job_id: u64, queue: &str, default_queue: bool) -> String {
    if default_queue {
        format!("Job <{job_id}> is submitted to default queue <{queue}>.")
    } else {
        format!("Job <{job_id}> is submitted to queue <{queue}>.")
    }
}

/// The rejection line: LSF's reason, then `. Job not submitted.`
pub fn rejected_line(reason: &str) -> String {
    let r = reason.trim().trim_end_matches('.');
    format!("{r}. Job not submitted.")
}
