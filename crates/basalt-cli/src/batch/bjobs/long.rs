//! The long format of `bjobs -l` (cli-output.md §3.4): one block per job, with the
//! queue's load thresholds, memory and termination reason texts.

use super::*;

pub(super) const INDEX_NAMES: [&str; 11] = [
    "r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem",
];

pub(super) fn threshold_cells(values: &HashMap<String, f64>) -> String {
    let mut out = String::new();
    for name in INDEX_NAMES {
        let v = values.get(name).copied().filter(|v| v.is_finite());
        let cell = match (name, v) {
            ("r15s" | "r1m" | "r15m", Some(v)) => format!("{v:5.1} "),
            ("r15s" | "r1m" | "r15m", None) => "   -  ".into(),
            ("ut", Some(v)) => format!(" {v:3.1} "),
            ("ut" | "ls", None) => "   - ".into(),
            ("pg", Some(v)) => format!("{v:7.1} "),
            ("pg", None) => "      - ".into(),
            ("io" | "it", Some(v)) => format!("{v:5.0} "),
            ("io" | "it", None) => "    - ".into(),
            ("ls", Some(v)) => format!(" {v:3.0} "),
            (_, Some(v)) => format!("{v:5.0}M "),
            (_, None) => "    -  ".into(),
        };
        out.push_str(&cell);
    }
    out
}

/// The loadSched/loadStop table of the long formats.
pub fn thresholds(sched: &HashMap<String, f64>, stop: &HashMap<String, f64>) -> String {
    format!(
        "           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem\n loadSched{}\n loadStop {}\n",
        threshold_cells(sched),
        threshold_cells(stop)
    )
}

/// `3 Mbytes` (above 1024 KB) or `512 Kbytes`.
pub fn mem_text(kb: u64) -> String {
    if kb > 1024 {
        format!("{} Mbytes", kb / 1024)
    } else {
        format!("{kb} Kbytes")
    }
}

/// The text after a `TERM_...` code, as the job report and bjobs show it.
pub fn term_reason_text(code: &str) -> String {
    let why = match code {
        "TERM_OWNER" => "job killed by owner",
        "TERM_ADMIN" => "job killed by root or LSF administrator",
        "TERM_RUNLIMIT" => "job killed after reaching LSF run time limit",
        "TERM_MEMLIMIT" => "job killed after reaching LSF memory usage limit",
        "TERM_CPULIMIT" => "job killed after reaching LSF CPU usage limit",
        "TERM_SWAP" => "job killed after reaching LSF swap usage limit",
        "TERM_PROCESSLIMIT" => "job killed after reaching LSF process limit",
        "TERM_FORCE_OWNER" => "job killed by owner without time for cleanup",
        "TERM_FORCE_ADMIN" => "job killed by root or LSF administrator without time for cleanup",
        "TERM_REQUEUE_OWNER" => "job killed and requeued by owner",
        "TERM_REQUEUE_ADMIN" => "job killed and requeued by root or LSF administrator",
        "TERM_LOAD" => "job killed after load exceeds threshold",
        "TERM_PREEMPT" => "job killed after preemption",
        "TERM_WINDOW" => "job killed after queue run window closed",
        "TERM_DEADLINE" => "job killed after deadline expires",
        "TERM_ZOMBIE" => "job exited while LSF is not available",
        "TERM_REMOVE_HUNG_JOB" => "job removed from LSF system",
        _ => "job killed",
    };
    format!("{code}: {why}")
}

pub(super) fn host_list_words(hosts: &[String], short: bool) -> String {
    host_words(hosts, short)
        .iter()
        .map(|h| format!("<{h}>"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The MultiCluster lines after `Submitted from host`: where a job came from (execution
/// side), where and when it was forwarded (submission side), and how often it came back
/// without starting.
pub fn mc_lines(j: &JobInfo, fx: &Fx) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&wrap(&l));
        out.push('\n');
    };
    if !j.source_cluster.is_empty() {
        let mut l = format!(" Forwarded from cluster <{}>", j.source_cluster);
        if j.source_job_id > 0 {
            let _ = write!(l, ", job ID <{}>", j.source_job_id);
        }
        l.push(';');
        line(l);
    }
    if !j.forward_cluster.is_empty() {
        let mut l = if j.forward_time > 0 {
            format!("{}: ", event_time(j.forward_time, fx))
        } else {
            " ".to_owned()
        };
        let _ = write!(l, "Forwarded job to cluster <{}>", j.forward_cluster);
        if !j.forward_queue.is_empty() {
            let _ = write!(l, ", queue <{}>", j.forward_queue);
        }
        if j.remote_job_id > 0 {
            let _ = write!(l, ", remote job ID <{}>", j.remote_job_id);
        }
        l.push(';');
        line(l);
    }
    if j.mc_returns > 0 {
        line(format!(
            " The job returned <{}> time(s) from remote clusters without starting;",
            j.mc_returns
        ));
    }
    out
}

/// One job in the long format (a block starting with a blank line).
pub fn long_job(j: &JobInfo, queue: Option<&QueueInfo>, fx: &Fx) -> String {
    let mut out = String::from("\n");
    let state = state_of(j);

    // 1. Identity.
    let mut l = format!("Job <{}>,", job_id_str(j));
    if j.options & sub::JOB_NAME != 0 && !j.job_name.is_empty() {
        let _ = write!(l, " Job Name <{}>,", j.job_name);
    }
    let _ = write!(l, " User <{}>, Project <{}>,", j.user, j.project);
    if !j.app.is_empty() {
        let _ = write!(l, " Application <{}>,", j.app);
    }
    if !j.user_group.is_empty() {
        let _ = write!(l, " User Group <{}>,", j.user_group);
    }
    let _ = write!(l, " Status <{}>, Queue <{}>,", state_name(j), j.queue);
    if let Some(mode) = basalt_core::job::interactive_label(j.options) {
        let _ = write!(l, " {mode},");
    }
    let spooled = if j.options2 & sub2::JOB_CMD_SPOOL != 0 {
        "(Spooled)"
    } else {
        ""
    };
    let _ = write!(l, " Command{spooled} <{}>", display_command(&j.command));
    out.push_str(&wrap(&l));
    out.push('\n');

    // 2. Submission.
    let mut l = format!(
        "{}: Submitted from host <{}>",
        event_time(j.submit_time, fx),
        from_host_name(j)
    );
    if j.options2 & sub2::HOLD != 0 {
        l.push_str(" on hold");
    }
    if j.begin_time > 0 {
        let _ = write!(
            l,
            ", Specified Start Time <{}>",
            event_time(j.begin_time, fx)
        );
    }
    if j.term_time > 0 {
        let _ = write!(
            l,
            ", Specified Termination Time <{}>",
            event_time(j.term_time, fx)
        );
    }
    let cwd = if j.cwd.starts_with('/') {
        j.cwd.clone()
    } else if j.cwd.is_empty() {
        "$HOME".to_owned()
    } else {
        format!("$HOME/{}", j.cwd)
    };
    let _ = write!(l, ", CWD <{cwd}>");
    if !j.spec_cwd.is_empty() {
        let _ = write!(l, ", Specified CWD <{}>", j.spec_cwd);
    }
    if !j.in_file.is_empty() {
        let _ = write!(l, ", Input File <{}>", j.in_file);
    }
    if !j.out_file.is_empty() {
        let ow = if j.options2 & sub2::OUT_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Output File{ow} <{}>", j.out_file);
    }
    if !j.err_file.is_empty() {
        let ow = if j.options2 & sub2::ERR_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Error File{ow} <{}>", j.err_file);
    }
    if j.exclusive {
        l.push_str(", Exclusive Execution");
    }
    if j.rerunnable {
        l.push_str(", Re-runnable");
    }
    if !j.chkpnt_dir.is_empty() {
        if j.chkpnt_period > 0 {
            let _ = write!(l, ", Checkpoint period {} min.", j.chkpnt_period / 60);
        }
        let _ = write!(l, ", Checkpoint directory <{}>", j.chkpnt_dir);
    }
    if j.num_processors > 1 || j.max_processors > 1 {
        if j.max_processors > j.num_processors {
            let _ = write!(
                l,
                ", {}-{} Processors Requested",
                j.num_processors, j.max_processors
            );
        } else {
            let _ = write!(l, ", {} Processors Requested", j.num_processors);
        }
    }
    if !j.res_req.is_empty() {
        let _ = write!(l, ", Requested Resources <{}>", j.res_req);
    }
    if !j.depend_cond.is_empty() {
        let _ = write!(l, ", Dependency Condition <{}>", j.depend_cond);
    }
    if !j.login_shell.is_empty() {
        let _ = write!(l, ", Login Shell <{}>", j.login_shell);
    }
    if !j.asked_hosts.is_empty() {
        let hosts: Vec<String> = j.asked_hosts.iter().map(|h| format!("<{h}>")).collect();
        let _ = write!(l, ", Specified Hosts {}", hosts.join(", "));
    }
    l.push(';');
    out.push_str(&wrap(&l));
    out.push('\n');

    // 2'. MultiCluster.
    out.push_str(&mc_lines(j, fx));

    if j.run_limit > 0 {
        let host = j.exec_hosts.first().unwrap_or(&j.from_host);
        let _ = write!(
            out,
            "\n RUNLIMIT\n {:5.1} min of {host}\n\n",
            j.run_limit as f64 / 60.0
        );
    }

    // 3. Start.
    if j.start_time > 0 && !is_pending(j) && !j.exec_hosts.is_empty() {
        let n = j.exec_hosts.len();
        let hosts = host_list_words(&j.exec_hosts, fx.short_hosts);
        // A job running in another cluster (MultiCluster) has no pid or home here.
        let verb = if j.pid == 0
            && j.exec_home.is_empty()
            && !is_finished(j)
            && j.forward_cluster.is_empty()
        {
            "Dispatched"
        } else {
            "Started"
        };
        let mut l = format!(
            "{}: {verb} {n} Task(s) on Host(s) {hosts}, Allocated {n} Slot(s) on Host(s) {hosts}",
            event_time(j.start_time, fx)
        );
        if !j.exec_home.is_empty() {
            let _ = write!(l, ", Execution Home <{}>", j.exec_home);
        }
        if !j.exec_cwd.is_empty() {
            let _ = write!(l, ", Execution CWD <{}>", j.exec_cwd);
        }
        l.push(';');
        out.push_str(&wrap(&l));
        out.push('\n');
    }

    // 3'. Pending with reserved slots (SLOT_RESERVE).
    if is_pending(j) && !j.reserved_hosts.is_empty() && j.reserve_time > 0 {
        let n = j.reserved_hosts.len();
        let hosts = host_list_words(&j.reserved_hosts, fx.short_hosts);
        let what = if n > 1 {
            "job slots on host(s)"
        } else {
            "job slot on host"
        };
        let l = format!(
            "{}: Reserved <{n}> {what} {hosts};",
            event_time(j.reserve_time, fx)
        );
        out.push_str(&wrap(&l));
        out.push('\n');
    }

    // 4. Running or suspended: resource usage.
    let started = state.is_some_and(JobState::is_started);
    if started
        && j.rusage_time > 0
        && (j.cpu_time > 0.0 || j.mem_kb > 0 || j.swap_kb > 0 || j.pgid > 0)
    {
        let pad = " ".repeat(21);
        let _ = writeln!(
            out,
            "{}: Resource usage collected.",
            event_time(j.rusage_time, fx)
        );
        if j.cpu_time > 0.0 {
            let _ = writeln!(
                out,
                "{pad}The CPU time used is {} seconds.",
                j.cpu_time as i64
            );
        }
        match (j.mem_kb > 0, j.swap_kb > 0) {
            (true, true) => {
                let _ = writeln!(
                    out,
                    "{pad}MEM: {};  SWAP: {}",
                    mem_text(j.mem_kb),
                    mem_text(j.swap_kb)
                );
            }
            (true, false) => {
                let _ = writeln!(out, "{pad}MEM: {}", mem_text(j.mem_kb));
            }
            (false, true) => {
                let _ = writeln!(out, "{pad}SWAP: {}", mem_text(j.swap_kb));
            }
            (false, false) => {}
        }
        if j.pgid > 0 {
            let pids: Vec<String> = j.pids.iter().map(u32::to_string).collect();
            let _ = writeln!(out, "{pad}PGID: {};  PIDs: {}", j.pgid, pids.join(" "));
        }
    }

    // 5. Finished.
    if is_finished(j) {
        let how = if state == Some(JobState::Done) {
            "Done successfully.".to_owned()
        } else if j.exit_status != 0 {
            match basalt_core::job::wait_status_parts(j.exit_status) {
                (_, Some(sig)) => format!("Exited by signal {sig}."),
                (code, None) => format!("Exited with exit code {code}."),
            }
        } else {
            "Exited.".to_owned()
        };
        let mut l = format!("{}: {how}", event_time(j.end_time, fx));
        if !j.exec_hosts.is_empty() {
            let _ = write!(l, " The CPU time used is {:.1} seconds.", j.cpu_time);
        }
        out.push_str(&wrap(&l));
        out.push('\n');
        if !j.term_reason.is_empty() {
            let l = format!(
                "{}: Completed <exit>; {}.",
                event_time(j.end_time, fx),
                term_reason_text(&j.term_reason)
            );
            out.push_str(&wrap(&l));
            out.push('\n');
        }
        let post = match j.post_exec_status {
            s if s & basalt_core::job::status::PDONE != 0 => "Post job process done successfully.",
            s if s & basalt_core::job::status::PERR != 0 => "Post job process failed.",
            _ => "",
        };
        if !post.is_empty() {
            let l = format!("{}: {post}", event_time(j.end_time, fx));
            out.push_str(&wrap(&l));
            out.push('\n');
        }
    }

    if j.max_mem_kb > 0 && (started || is_finished(j)) {
        let _ = write!(
            out,
            "\n MEMORY USAGE:\n MAX MEM: {};  AVG MEM: {}\n",
            mem_text(j.max_mem_kb),
            mem_text(j.avg_mem_kb)
        );
    }

    // 6. Reasons.
    if is_pending(j) {
        out.push_str(" PENDING REASONS:\n");
        out.push_str(&pend_reason_lines(j, true));
    } else if matches!(state, Some(JobState::Ssusp | JobState::Ususp)) {
        out.push_str(" SUSPENDING REASONS:\n");
        out.push_str(&susp_reason_line(j));
    }

    // 6'. Preemption (seed 002): how often, and by which job last.
    if j.preempt_count > 0 {
        out.push_str("\n PREEMPTION:\n");
        let times = if j.preempt_count == 1 {
            "time"
        } else {
            "times"
        };
        let _ = write!(out, " Preempted <{}> {times}", j.preempt_count);
        if !j.preempted_by.is_empty() {
            let _ = write!(out, "; last by job <{}>", j.preempted_by);
        }
        out.push_str(".\n");
    }

    // 6'''. Requeues by exit value (REQUEUE_EXIT_VALUES, bsub -Q): how often. (No LSF
    // text for this is known: Basalt's own line.)
    if j.requeue_count > 0 {
        let times = if j.requeue_count == 1 {
            "time"
        } else {
            "times"
        };
        let _ = write!(
            out,
            "\n REQUEUE:\n Requeued <{}> {times} for its exit value (REQUEUE_EXIT_VALUES).\n",
            j.requeue_count
        );
    }

    // 6''. Checkpoints: how many, and why the last checkpoint or restart failed.
    if j.chkpnt_count > 0 || !j.chkpnt_error.is_empty() || !j.restart_error.is_empty() {
        out.push_str("\n CHECKPOINT:\n");
        if j.chkpnt_count > 0 {
            let _ = write!(out, " Checkpointed <{}> time(s)", j.chkpnt_count);
            if j.chkpnt_time > 0 {
                let _ = write!(out, ", last at {}", event_time(j.chkpnt_time, fx));
            }
            out.push_str(";\n");
        }
        if !j.chkpnt_error.is_empty() {
            let _ = writeln!(out, " Last checkpoint failed: {};", j.chkpnt_error);
        }
        if !j.restart_error.is_empty() {
            let _ = writeln!(out, " Last restart failed: {};", j.restart_error);
        }
    }

    // 7. Thresholds.
    out.push_str("\n SCHEDULING PARAMETERS:\n");
    let empty = HashMap::new();
    match queue {
        Some(q) => out.push_str(&thresholds(&q.load_sched, &q.load_stop)),
        None => out.push_str(&thresholds(&empty, &empty)),
    }

    // 8. A compound or alternative resource requirement: the one its attempt used.
    if !j.effective_res_req.is_empty() {
        let _ = write!(
            out,
            "\n RESOURCE REQUIREMENT DETAILS:\n Combined: {}\n Effective: {}\n",
            j.res_req, j.effective_res_req
        );
    }
    out
}

/// `bjobs -l`: every job's block, separated by a line of 78 dashes, then a blank line.
pub fn long(jobs: &[JobInfo], queues: &[QueueInfo], fx: &Fx) -> String {
    long_with_hosts(jobs, queues, &[], fx)
}

/// `bjobs -l` where the thresholds shown for a started job are the stricter of its
/// queue's and its execution host's (lsb.hosts): lower for indices where more means
/// busier, higher for `it tmp swp mem`.
pub fn long_with_hosts(
    jobs: &[JobInfo],
    queues: &[QueueInfo],
    hosts: &[BatchHostInfo],
    fx: &Fx,
) -> String {
    let mut out = String::new();
    for (i, j) in jobs.iter().enumerate() {
        if i > 0 {
            out.push_str(&"-".repeat(78));
            out.push('\n');
        }
        let q = queues.iter().find(|q| q.name == j.queue);
        // Another cluster's host (`host@cluster`) has no thresholds here.
        let h = j
            .exec_hosts
            .first()
            .filter(|e| !is_remote_host(e))
            .and_then(|e| hosts.iter().find(|h| basalt_core::same_host(&h.name, e)));
        match (q, h) {
            (Some(q), Some(h)) => {
                let mut merged = q.clone();
                stricter(&mut merged.load_sched, &h.load_sched);
                stricter(&mut merged.load_stop, &h.load_stop);
                out.push_str(&long_job(j, Some(&merged), fx));
            }
            _ => out.push_str(&long_job(j, q, fx)),
        }
    }
    out.push('\n');
    out
}

/// Merge `other` into `into`, keeping the stricter threshold per index.
pub fn stricter(into: &mut HashMap<String, f64>, other: &HashMap<String, f64>) {
    for (k, v) in other {
        let decreasing = matches!(k.as_str(), "it" | "tmp" | "swp" | "mem");
        into.entry(k.clone())
            .and_modify(|cur| {
                *cur = if decreasing { cur.max(*v) } else { cur.min(*v) };
            })
            .or_insert(*v);
    }
}
