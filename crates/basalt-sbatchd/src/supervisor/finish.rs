//! The end of a job: its final `finished` event, LSF's job report (appended to the
//! output or mailed, in a child running as the user), the `TERM_*` line and the
//! removal of the job file.

use super::launch::{ChildInfo, Identity, switch_identity};
use super::limits::{limit, limit_value};
use super::report::{self, ReportInput};
use super::{Supervisor, now_secs, start_worker};
use crate::state::{Event, EventKind};
use crate::{mail, paths, sys};
use basalt_core::job::status as jstat;
use nix::sys::signal::Signal;
use std::io::Write;
use std::path::Path;

impl Supervisor {
    /// The usage of the job's tasks through RES ([`super::usage::remote_tasks`]).
    pub(super) fn remote_tasks(&self) -> (f64, f64, u64) {
        let uid = self
            .ident
            .as_ref()
            .map_or(self.spec.uid, |i| i.uid.as_raw());
        super::usage::remote_tasks(&super::env::acct_file(&self.spec), uid)
    }

    /// The job's `finished` event, from its top process's status and its usage.
    pub(super) fn finished_event(&mut self) -> Event {
        // Killed before its command ran (during its pre-execution commands): what ended
        // was a pre-execution command, whose status (0 if it exited on the signal) is
        // not the job's; the job's is that of a killed job.
        let killed = self.kill_deadline.is_some() || self.term_reason.is_some();
        let status = if killed && matches!(self.at, super::At::Pre(_)) {
            basalt_core::job::KILLED_WAIT_STATUS
        } else {
            self.main_status.unwrap_or(0)
        };
        let end_time = now_secs();
        // Its tasks through RES (blaunch) count too; their record goes with the job.
        let (tasks_u, tasks_s, tasks_kb) = self.remote_tasks();
        let _ = std::fs::remove_file(super::env::acct_file(&self.spec));
        let utime = self.reaped.utime + tasks_u;
        let stime = self.reaped.stime + tasks_s;
        let max_mem_kb = self
            .tracker
            .max_mem_kb
            .max(self.reaped.max_rss_kb)
            .saturating_add(tasks_kb);
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
        let mailing = info.spool && mail.prog.is_some();
        if mailing {
            self.start_mail_helper(text, finished.term_reason.clone(), mail);
        } else {
            self.start_writer(text, finished.term_reason.clone());
        }
    }

    /// A job that did not run (its pre-execution command failed): remove its job file,
    /// host file and spool file as its user, in a thread (bounded like a report).
    pub(super) fn start_cleanup(&mut self) {
        let (Some(ident), Some(info)) = (self.ident.clone(), self.info.clone()) else {
            return;
        };
        let spawned = start_worker("sbd-report", WRITER_STACK, self.notify.clone(), move || {
            take_fs_identity(&ident).map(|()| {
                let jf = &info.job_file;
                let mut remove = vec![jf.clone(), format!("{jf}.shell"), format!("{jf}.hostfile")];
                if info.spool {
                    remove.push(info.out_path.clone());
                }
                for p in remove {
                    let _ = std::fs::remove_file(p);
                }
            })
        });
        match spawned {
            Ok(rx) => self.writer = Some(rx),
            Err(e) => tracing::error!(
                "job {}: cannot start the thread removing the job's files: {e}",
                self.spec.job_id
            ),
        }
    }

    /// Write the report in a thread of the supervisor's that takes the user's file
    /// system identity (no process to fork, no address space to copy). The thread is
    /// the only thing that waits on the output's file system: a hung one holds up this
    /// job's end until the report is abandoned, not the supervisor's loop.
    fn start_writer(&mut self, text: String, term_reason: String) {
        let (Some(ident), Some(info)) = (self.ident.clone(), self.info.clone()) else {
            return;
        };
        let spawned = start_worker("sbd-report", WRITER_STACK, self.notify.clone(), move || {
            take_fs_identity(&ident).and_then(|()| deliver(&info, &text, &term_reason, false))
        });
        match spawned {
            Ok(rx) => self.writer = Some(rx),
            Err(e) => tracing::error!(
                "job {}: cannot start the thread writing the job report: {e}",
                self.spec.job_id
            ),
        }
    }

    /// Mail the output with the report (the mail program runs as the user), in a child
    /// process running as the user that the supervisor waits for (bounded).
    fn start_mail_helper(&mut self, text: String, term_reason: String, mail: Mail) {
        let (Some(ident), Some(info)) = (self.ident.as_ref(), self.info.as_ref()) else {
            return;
        };
        // SAFETY: the supervisor's other threads (launchers, report writers) take no lock that
        // this child uses (see `super::runner`); the child only writes files and spawns
        // the mail program before `_exit`.
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
                let code = match mail_as_user(ident, info, &text, &term_reason, &mail) {
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

/// The stack of a report-writing thread (it opens, appends to and removes files).
const WRITER_STACK: usize = 128 * 1024;

/// Make the calling thread act on files as the job's user: its supplementary groups,
/// file-system gid and uid (when the supervisor is root). Linux keeps credentials per
/// thread; these raw system calls change only this thread's (glibc's `setgroups` would
/// change every thread's), and a file-system uid other than 0 drops the capabilities
/// that bypass permissions, so the kernel (and a root-squashing NFS server) sees the
/// user. The thread ends after the report, taking the identity with it.
pub(super) fn take_fs_identity(ident: &Identity) -> Result<(), String> {
    if !ident.switch {
        return Ok(());
    }
    let groups: Vec<libc::gid_t> = ident.groups.iter().map(|g| g.as_raw()).collect();
    // SAFETY: a valid pointer to `groups.len()` gids that outlive the call.
    #[allow(unsafe_code)]
    let r = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    if r != 0 {
        return Err(format!("setgroups: {}", nix::errno::Errno::last()));
    }
    let (uid, gid) = (ident.uid.as_raw(), ident.gid.as_raw());
    // setfsgid/setfsuid return the previous value and report no error: asking again with
    // an invalid id (-1 changes nothing) returns the one in force.
    // SAFETY: integer arguments only.
    #[allow(unsafe_code)]
    let (fsgid, fsuid) = unsafe {
        libc::syscall(libc::SYS_setfsgid, gid);
        let fsgid = libc::syscall(libc::SYS_setfsgid, u32::MAX);
        libc::syscall(libc::SYS_setfsuid, uid);
        let fsuid = libc::syscall(libc::SYS_setfsuid, u32::MAX);
        (fsgid, fsuid)
    };
    if fsgid != i64::from(gid) || fsuid != i64::from(uid) {
        return Err(format!(
            "cannot act as uid {uid} gid {gid} (file-system ids {fsuid}/{fsgid})"
        ));
    }
    Ok(())
}

/// Where the output of a job without `-o` goes.
struct Mail {
    prog: Option<String>,
    to: String,
}

/// The mail helper's work, in a child running as the job's user: mail the output with
/// the report; when it cannot be mailed it stays in the spool file, with the report.
fn mail_as_user(
    ident: &Identity,
    info: &ChildInfo,
    text: &str,
    term_reason: &str,
    mail: &Mail,
) -> Result<(), String> {
    switch_identity(ident)?;
    let mailed = match &mail.prog {
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
    deliver(info, text, term_reason, mailed)
}

/// The end of a job's files, done as its user: the report appended to the output
/// (unless it was `mailed`), the `TERM_*` line to a separate error file, and the job
/// file and its companions (and a mailed spool file) removed.
pub(super) fn deliver(
    info: &ChildInfo,
    text: &str,
    term_reason: &str,
    mailed: bool,
) -> Result<(), String> {
    let mut problems = Vec::new();
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
