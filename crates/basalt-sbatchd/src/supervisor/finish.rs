//! The end of a job: LSF's job report (appended to the output or mailed, in a child
//! running as the user), the `TERM_*` line, removal of the job file, and the final
//! `finished` event.

use super::launch::{ChildInfo, Identity, switch_identity};
use super::limits::{limit, limit_value};
use super::report::{self, ReportInput};
use super::watch::tv_secs;
use super::{FINISH_HELPER_LIMIT, Supervisor, now_secs};
use crate::state::{Event, EventKind};
use crate::{mail, paths, sys};
use basalt_core::job::status as jstat;
use nix::sys::signal::Signal;
use nix::sys::signalfd::SignalFd;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

impl Supervisor {
    pub(super) fn finish(&mut self, sigfd: &SignalFd, ident: &Identity, info: &ChildInfo) {
        let status = self.main_status.unwrap_or(0);
        let end_time = now_secs();
        self.steps.mark("run");
        self.kill_leftovers(sigfd);
        self.steps.mark("leftovers");
        let ru = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok();
        let utime = ru.as_ref().map_or(0.0, |r| tv_secs(r.user_time()));
        let stime = ru.as_ref().map_or(0.0, |r| tv_secs(r.system_time()));
        let maxrss_kb = ru.as_ref().map_or(0, |r| r.max_rss().max(0) as u64);
        let max_mem_kb = self.tracker.max_mem_kb.max(maxrss_kb);
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
            end_time,
            home: ident.home.clone(),
            cwd: info.cwd.clone(),
            command: spec.command.clone(),
            exit_status: status,
            term_reason: term_reason.clone(),
            cpu_secs: utime + stime,
            max_mem_kb,
            avg_mem_kb,
            max_swap_kb: self.tracker.max_swap_kb,
            max_procs: self.tracker.max_procs,
            max_threads: self.tracker.max_threads,
        };
        let text = report::job_report(&input);
        self.run_finish_helper(sigfd, ident, info, &text, &term_reason);
        self.steps.mark("report");
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
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
        });
        self.steps.mark("final");
    }

    /// Append the report, write the TERM line to the error file, remove the job
    /// file and its companions — as the user, in a child we wait for (bounded).
    pub(super) fn run_finish_helper(
        &mut self,
        sigfd: &SignalFd,
        ident: &Identity,
        info: &ChildInfo,
        text: &str,
        term_reason: &str,
    ) {
        // SAFETY: supervisor mode is single-threaded: `super::main`'s caller
        // guarantees it (see its # Safety) and the supervisor starts no thread.
        #[allow(unsafe_code)]
        let forked = unsafe { sys::fork() };
        match forked {
            Ok(nix::unistd::ForkResult::Child) => {
                let mail = Mail {
                    prog: self.launch.mail_prog.clone(),
                    to: mail::recipient(
                        &self.spec.mail_user,
                        self.launch.mail_to.as_deref(),
                        &ident.name,
                    ),
                };
                let code = match finish_as_user(ident, info, text, term_reason, &mail) {
                    Ok(()) => 0,
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "sbatchd job supervisor: {e}");
                        1
                    }
                };
                sys::exit_now(code);
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => {
                self.helper = Some(child);
                if !self.wait_for(sigfd, child, FINISH_HELPER_LIMIT) {
                    tracing::warn!(
                        "job {}: writing the job report took longer than {:?}; abandoned",
                        self.spec.job_id,
                        FINISH_HELPER_LIMIT
                    );
                    let _ = nix::sys::signal::kill(child, Signal::SIGKILL);
                    self.wait_for(sigfd, child, Duration::from_secs(2));
                }
            }
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
