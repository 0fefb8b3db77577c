//! The end of a job: its final `finished` event, LSF's job report (appended to the
//! output or mailed, in a child running as the user), the `TERM_*` line and the
//! removal of the job file.

use super::launch::{ChildInfo, Identity, switch_identity};
use super::limits::{limit, limit_value};
use super::report::{self, ReportInput};
use super::{Supervisor, now_secs};
use crate::state::{Event, EventKind};
use crate::{mail, paths, sys};
use basalt_core::job::status as jstat;
use nix::sys::signal::Signal;
use std::io::Write;
use std::path::Path;

impl Supervisor {
    /// The job's `finished` event, from its top process's status and its usage.
    pub(super) fn finished_event(&mut self) -> Event {
        let status = self.main_status.unwrap_or(0);
        let end_time = now_secs();
        let utime = self.reaped.utime;
        let stime = self.reaped.stime;
        let max_mem_kb = self.tracker.max_mem_kb.max(self.reaped.max_rss_kb);
        let avg_mem_kb = match self.tracker.avg_mem_kb() {
            0 => max_mem_kb,
            a => a,
        };
        if self.term_reason.is_none()
            && limit_value(&self.spec, limit::CPU).is_some()
            && (status & 0x7f == Signal::SIGXCPU as i32
                || report::exit_code(status) == 128 + Signal::SIGXCPU as i32)
        {
            self.term_reason = Some("TERM_CPULIMIT".to_owned());
        }
        let term_reason = self.term_reason.clone().unwrap_or_default();
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        Event {
            kind: EventKind::Finished,
            time: end_time,
            pid,
            pgid: pid,
            state: if status == 0 && term_reason.is_empty() {
                jstat::DONE
            } else {
                jstat::EXIT
            },
            exit_status: status,
            utime,
            stime,
            mem_kb: 0,
            max_mem_kb,
            avg_mem_kb,
            swap_kb: self.tracker.max_swap_kb,
            term_reason,
            ..Default::default()
        }
    }

    /// Start the helper that appends LSF's job report to the output (or mails it),
    /// writes the TERM line to the error file and removes the job file and its
    /// companions — as the user, in a child the supervisor waits for (bounded).
    pub(super) fn start_report(&mut self, finished: &Event) {
        let (Some(ident), Some(info)) = (self.ident.as_ref(), self.info.as_ref()) else {
            return;
        };
        let spec = &self.spec;
        let input = ReportInput {
            job_id: spec.job_id,
            idx: spec.idx,
            is_array: spec.is_array,
            job_name: paths::element_name(&spec.job_name, spec.is_array, spec.idx, &spec.command),
            cluster: self.launch.cluster.clone(),
            sender: self.launch.sender.clone(),
            user: ident.name.clone(),
            from_host: spec.from_host.clone(),
            exec_hosts: if spec.exec_hosts.is_empty() {
                vec![self.launch.host.clone()]
            } else {
                spec.exec_hosts.clone()
            },
            queue: spec.queue.clone(),
            submit_time: if spec.submit_time > 0 {
                spec.submit_time
            } else {
                self.start_time
            },
            start_time: self.start_time,
            end_time: finished.time,
            home: ident.home.clone(),
            cwd: info.cwd.clone(),
            command: spec.command.clone(),
            exit_status: finished.exit_status,
            term_reason: finished.term_reason.clone(),
            cpu_secs: finished.utime + finished.stime,
            max_mem_kb: finished.max_mem_kb,
            avg_mem_kb: finished.avg_mem_kb,
            max_swap_kb: self.tracker.max_swap_kb,
            max_procs: self.tracker.max_procs,
            max_threads: self.tracker.max_threads,
        };
        let text = report::job_report(&input);
        let mail = Mail {
            prog: self.launch.mail_prog.clone(),
            to: mail::recipient(
                &self.spec.mail_user,
                self.launch.mail_to.as_deref(),
                &ident.name,
            ),
        };
        // SAFETY: the supervisor process is single-threaded (see `super::runner`); the
        // child only writes files (and may spawn the mail program) before `_exit`.
        #[allow(unsafe_code)]
        let forked = unsafe { sys::fork() };
        match forked {
            Ok(nix::unistd::ForkResult::Child) => {
                // Nothing of the supervisor's (the database, other jobs' pipes and
                // sockets, the request socket) stays open in a process of the user's.
                // SAFETY: closes descriptors only; no Rust object of this child uses
                // them again before `_exit`.
                #[allow(unsafe_code)]
                unsafe {
                    libc::close_range(3, libc::c_uint::MAX, 0);
                }
                let code = match finish_as_user(ident, info, &text, &finished.term_reason, &mail) {
                    Ok(()) => 0,
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "sbatchd job supervisor: {e}");
                        1
                    }
                };
                sys::exit_now(code);
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => self.helper = Some(child),
            Err(e) => tracing::error!("job {}: fork for the job report: {e}", self.spec.job_id),
        }
    }
}

/// Where the output of a job without `-o` goes.
struct Mail {
    prog: Option<String>,
    to: String,
}

/// The finishing work, in a child running as the job's user.
fn finish_as_user(
    ident: &Identity,
    info: &ChildInfo,
    text: &str,
    term_reason: &str,
    mail: &Mail,
) -> Result<(), String> {
    switch_identity(ident)?;
    let mut problems = Vec::new();
    // No -o: the output is mailed (LSF); without a working mail program it is kept in
    // the spool file, with the report, where the user can read it.
    let mailed = info.spool
        && match &mail.prog {
            Some(prog) => match mail::send(prog, &mail.to, text, Path::new(&info.out_path)) {
                Ok(()) => true,
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "mailing the output to {}: {e}; it is kept in {}",
                        mail.to,
                        info.out_path
                    );
                    false
                }
            },
            None => false,
        };
    let keep_output = !mailed;
    if keep_output && !info.out_path.is_empty() {
        match std::fs::OpenOptions::new()
            .append(true)
            .open(&info.out_path)
        {
            Ok(mut f) => {
                if let Err(e) = f.write_all(text.as_bytes()) {
                    problems.push(format!("{}: {e}", info.out_path));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", info.out_path)),
        }
    }
    if let Some(line) = report::term_reason_line(term_reason)
        && !info.err_path.is_empty()
        && info.err_path != info.out_path
    {
        match std::fs::OpenOptions::new()
            .append(true)
            .open(&info.err_path)
        {
            Ok(mut f) => {
                let _ = writeln!(f, "{line}");
            }
            Err(e) => problems.push(format!("{}: {e}", info.err_path)),
        }
    }
    let jf = &info.job_file;
    let mut remove = vec![jf.clone(), format!("{jf}.shell"), format!("{jf}.hostfile")];
    if mailed {
        remove.push(info.out_path.clone());
    }
    for p in remove {
        let _ = std::fs::remove_file(p);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "cannot write the job report: {}",
            problems.join("; ")
        ))
    }
}
