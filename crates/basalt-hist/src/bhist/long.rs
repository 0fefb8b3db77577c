//! The long formats `-l` and `-b`: one block per job, one line per event.

use super::*;

pub(super) fn with_semicolon(mut s: String) -> String {
    if !s.ends_with(';') {
        s.push(';');
    }
    s
}

/// The text of a `JOB_STATUS` record (without the time).
pub(super) fn status_text(s: &basalt_eventlog::JobStatus, started: bool) -> String {
    let st = s.j_status;
    if st & status::PDONE != 0 {
        return "Post job process done successfully;".into();
    }
    if st & status::PERR != 0 {
        return "Post job process failed;".into();
    }
    let cpu = || {
        if !started {
            String::new()
        } else if s.cpu_time < 0.0 {
            ". The CPU time used is unknown".to_owned()
        } else {
            format!(". The CPU time used is {:.1} seconds", s.cpu_time)
        }
    };
    let base = base_state(st);
    match base {
        status::PEND => match s.reason {
            0 => "Pending;".to_owned(),
            r => format!("Pending: {};", pend_reason_text(r)),
        },
        status::PSUSP => "Suspended by the user or administrator while pending;".to_owned(),
        status::RUN => "Running;".to_owned(),
        x if x == status::RUN | status::WAIT || x == status::WAIT => "Waiting;".to_owned(),
        status::SSUSP => {
            let what = if s.reason & susp::RES_LIMIT != 0 {
                "Terminated"
            } else {
                "Suspended"
            };
            with_semicolon(format!(
                "{what}:{}",
                susp_reason_text(s.reason & !susp::MBD_LOCK, s.subreasons)
            ))
        }
        status::USUSP => "Suspended by the user or administrator;".to_owned(),
        x if x & (status::UNKWN | status::RUNKWN) != 0 => {
            "Unknown; unable to reach the execution host;".to_owned()
        }
        status::DONE => format!("Done successfully{};", cpu()),
        status::EXIT => {
            let r = s.reason;
            if r & exit_reason::ZOMBIE != 0 {
                "Execution host unavailable; job is killed;".to_owned()
            } else if r & exit_reason::KILL_ZOMBIE != 0 {
                "Termination request issued; but unable to reach the execution host;".to_owned()
            } else if r & exit_reason::ZOMBIE_JOB != 0 {
                "sbatchd startup; kill ZOMBIE job;".to_owned()
            } else if r & exit_reason::RERUN != 0 {
                "Exited; job will be requeued and rerun;".to_owned()
            } else if r & exit_reason::PRE_EXEC != 0 {
                "Exited; remote job's pre-exec command failed;".to_owned()
            } else if r & exit_reason::REMOVE != 0 {
                "Exited; job has been forced to exit;".to_owned()
            } else {
                let code = match basalt_core::job::wait_status_parts(s.exit_status) {
                    _ if s.exit_status == 0 => String::new(),
                    (_, Some(sig)) => format!(" by signal {sig}"),
                    (code, None) => format!(" with exit code {code}"),
                };
                format!("Exited{code}{};", cpu())
            }
        }
        _ => "Unknown;".to_owned(),
    }
}

/// The event text of one history record (without the time), or `None` for records that
/// are not shown (the submission, which has its own line). `JOB_MODIFY2` needs the time
/// format: see [`event_text`].
pub fn record_text(
    rec: &Record,
    j: &JobHistory,
    started: bool,
    short_hosts: bool,
) -> Option<String> {
    Some(match rec {
        Record::JobNew(_) => return None,
        Record::JobModify(n) => {
            let mut l = format!(
                "Parameters are modified to:  Project <{}>, Queue <{}>",
                n.project_name, n.queue
            );
            if n.options & basalt_core::job::sub::JOB_NAME != 0 && !n.job_name.is_empty() {
                let _ = write!(l, ", Job Name <{}>", n.job_name);
            }
            l.push(';');
            l
        }
        Record::JobStart(s) => format!("{};", dispatch_text(&s.exec_hosts, s.job_pid, short_hosts)),
        Record::PreExecStart(s) => {
            let hosts: Vec<String> =
                basalt_cli::batch::text::host_words(&s.exec_hosts, short_hosts)
                    .iter()
                    .map(|h| format!("<{h}>"))
                    .collect();
            format!("The pre-exec command is started on {};", hosts.join(" "))
        }
        Record::JobStartAccept(a) => format!("Starting (Pid {});", a.job_pid),
        Record::JobExecute(x) => {
            let mut l = format!(
                "Running with execution home <{}>, Execution CWD <{}>, Execution Pid <{}>",
                x.exec_home, x.exec_cwd, x.job_pid
            );
            if !x.exec_username.is_empty() && x.exec_username != j.sub.user_name {
                let _ = write!(l, ", Execution user name <{}>", x.exec_username);
            }
            l.push(';');
            l
        }
        Record::JobStatus(s) => status_text(s, started),
        Record::JobSignal(s) if s.signal_symbol == "DELETEJOB" => {
            let mut l = format!(
                "Delete requested by user or administrator <{}>",
                s.user_name
            );
            if s.run_count > 0 {
                let _ = write!(l, "; Running times is {}", s.run_count);
            }
            l.push(';');
            l
        }
        // Killed for a higher-priority job (TERMINATE_WHEN = PREEMPT).
        Record::JobSignal(s) if s.signal_symbol == "KILL_PREEMPT" => {
            "Signal <KILL> requested to preempt the job for a higher priority job;".to_owned()
        }
        Record::JobSignal(s) => format!(
            "Signal <{}> requested by user or administrator <{}>;",
            s.signal_symbol, s.user_name
        ),
        Record::JobSwitch(s) => format!(
            "Switched to Queue <{}> by user or administrator <{}>;",
            s.queue, s.user_name
        ),
        Record::JobMove(m) => format!(
            "Job moved to position {} relative to <{}> of the queue by user or administrator <{}>;",
            m.position,
            if m.base == 1 { "top" } else { "bottom" },
            m.user_name
        ),
        Record::JobForce(f) => format!(
            "Job is forced to run by user or administrator <{}>;",
            f.user_name
        ),
        Record::JobRequeue(_) => "Pending: Job has been requeued;".to_owned(),
        // bmig (OpenLava's and LSF's MIG record).
        Record::Mig(m) => {
            let mut t = if m.user_name.is_empty() {
                "Migration requested by unknown user".to_owned()
            } else {
                format!(
                    "Migration requested by user or administrator <{}>",
                    m.user_name
                )
            };
            if !m.asked_hosts.is_empty() {
                let hosts: Vec<String> = m.asked_hosts.iter().map(|h| format!("<{h}>")).collect();
                t.push_str(&format!("; Specified Hosts {}", hosts.join(", ")));
            }
            t.push(';');
            t
        }
        // Checkpoints (OpenLava's bhist): the order (JOB_SIGACT SIG_CHKPNT) and its end
        // (CHKPNT, with Basalt's reason of a failure).
        Record::JobSigact(a)
            if a.signal_symbol == basalt_records::SIG_CHKPNT
                && a.act_status == basalt_records::ACT_START =>
        {
            let what = if a.flags & i64::from(basalt_sched::chkpnt::flags::MIG) != 0 {
                "Migration checkpoint"
            } else {
                "Checkpoint"
            };
            let mut t = format!("{what} initiated (actpid {})", a.pid);
            if a.period > 0 {
                t.push_str(&format!(
                    "; checkpoint period is set to {} minutes",
                    a.period / 60
                ));
            } else if a.period == 0 {
                t.push_str("; periodic checkpointing is stopped");
            }
            t.push(';');
            t
        }
        Record::Chkpnt(c) if c.ok != 0 => format!("Checkpoint succeeded (actpid {});", c.pid),
        Record::Chkpnt(c) if c.message.is_empty() => {
            format!("Checkpoint failed (actpid {});", c.pid)
        }
        Record::Chkpnt(c) => format!("Checkpoint failed (actpid {}): {};", c.pid, c.message),
        // MultiCluster (seed 004).
        Record::JobForward(f) if f.queue.is_empty() => {
            format!("Forwarded job to cluster <{}>;", f.cluster)
        }
        Record::JobForward(f) => format!(
            "Forwarded job to cluster <{}>, queue <{}>;",
            f.cluster, f.queue
        ),
        Record::JobAccept(a) => format!(
            "Job accepted from cluster <{}>, job ID <{}>;",
            a.cluster,
            if a.remote_idx > 0 {
                format!("{}[{}]", a.remote_jid, a.remote_idx)
            } else {
                a.remote_jid.to_string()
            }
        ),
        _ => return None,
    })
}

/// The event text of one history record (without the time), or `None` for records that
/// are not shown: [`record_text`], and `bmod`'s `JOB_MODIFY2` ([`modify2_text`], several
/// lines).
pub fn event_text(rec: &Record, j: &JobHistory, started: bool, fx: &Fx) -> Option<String> {
    match rec {
        Record::JobModify2(m) => Some(modify2_text(m, fx)),
        _ => record_text(rec, j, started, fx.short_hosts),
    }
}

/// One job of `bhist -l` (`details = false`: `bhist -b`): a block starting with a blank
/// line, ending with the time summary.
pub fn long_job(j: &JobHistory, details: bool, fx: &Fx) -> String {
    let mut out = String::from("\n");
    out.push_str(&Header::of_new(&j.sub, j.idx).render());
    // The submission is shown as first submitted (a later JOB_MODIFY has its own line).
    let first = match j.records.first() {
        Some(Record::JobNew(n)) => n.as_ref(),
        _ => j.sub.as_ref(),
    };
    out.push_str(&super::super::submit_line_bhist(
        first,
        j.exec_hosts.first().map(String::as_str),
        details,
        fx,
    ));
    let mut started = false;
    for rec in &j.records {
        if matches!(rec, Record::JobStart(_) | Record::PreExecStart(_)) {
            started = true;
        }
        if let Some(text) = event_text(rec, j, started, fx) {
            out.push_str(&event_line(rec.time(), &text, fx));
        }
    }
    let (t, by) = j.state_times(fx.now);
    let _ = write!(
        out,
        "\nSummary of time in seconds spent in various states by  {}\n",
        fx.event_time(by)
    );
    out.push_str("  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL\n");
    let _ = writeln!(out, "  {}", numbers(&t, 9, 12));
    out
}

/// `bhist -l` / `-b`: every job's block, separated by 78 dashes, then a blank line.
pub fn long(jobs: &[JobHistory], details: bool, fx: &Fx) -> String {
    let mut out = String::new();
    for (i, j) in jobs.iter().enumerate() {
        if i > 0 {
            out.push_str(&dashes());
            out.push('\n');
        }
        out.push_str(&long_job(j, details, fx));
    }
    out.push('\n');
    out
}
