//! `bjobs`: job listings — default and `-w` tables (cli-output.md §3.1–3.2), pending
//! and suspending reasons (`-p`, `-s`, §3.3), the long format (`-l`, §3.4), custom
//! columns (`-o`, cli-contract.md §4.3), JSON (`-json`, §4.4), the job-array summary
//! (`-A`, §3.1) and the job-slot summary (`-sum`, LSF 10.1); messages and exit codes of
//! cli-contract.md §6.
//!
//! Repeated execution hosts are shown as `N*host` (LSF 10's short host lists, which
//! clients expect) unless lsf.conf sets `LSB_SHORT_HOSTLIST=0`/`N`; then every slot's
//! host is listed (one per line in the default table). `LSB_BJOBS_FORMAT` supplies a
//! default `-o`; `LSB_BJOBS_CONSISTENT_EXIT_CODE=Y` makes "no job" exit 255.

use super::opts::{Item, Spec};
use super::text::{col, host_words, star_cut, wrap};
use super::timefmt::{self, ToTm};
use super::{job_id_str, job_ref_str, state_name, state_of};
use basalt_core::job::{
    JobState, pend_reason_is_host, pend_reason_text, status, sub, sub2, susp_reason_text,
};
use basalt_proto::mbatchd::{
    BatchHostInfo, HostsRequest, JobInfo, JobRef, JobsRequest, PendReason, QueueInfo, QueuesRequest,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;

/// bjobs's usage text.
pub const USAGE: &str = "Usage: bjobs [-h] [-V] [-w | -l] [-A] [-a] [-d] [-p] [-r] [-s] [-sum]
             [-u user_name | -u all] [-q queue_name] [-m host_name] [-J job_name]
             [-o \"field[:[-]width] ... [delimiter='c']\"] [-noheader] [-json]
             [job_ID | \"job_ID[index]\" ...]
";

const SPEC: Spec = Spec {
    flags: &[
        "h", "V", "A", "a", "d", "p", "r", "s", "l", "w", "noheader", "json", "sum",
    ],
    valued: &["u", "q", "m", "J", "o"],
};

/// The header of the default and `-w` tables.
pub const HEADER: &str =
    "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME";

/// What to show and how.
#[derive(Debug, Clone, Copy)]
pub struct Fx {
    /// Seconds -> broken-down time (local for the command, UTC in tests).
    pub tm: ToTm,
    /// Group repeated hosts as `N*host`.
    pub short_hosts: bool,
    /// Now, for run times.
    pub now: i64,
}

fn is_pending(j: &JobInfo) -> bool {
    state_of(j).is_some_and(JobState::is_pending)
}

fn is_finished(j: &JobInfo) -> bool {
    state_of(j).is_some_and(JobState::is_finished)
}

fn is_suspended(j: &JobInfo) -> bool {
    matches!(
        state_of(j),
        Some(JobState::Ssusp | JobState::Ususp | JobState::Psusp)
    )
}

fn table_time(t: i64, fx: &Fx) -> String {
    if t > 0 {
        timefmt::table(&(fx.tm)(t))
    } else {
        String::new()
    }
}

fn event_time(t: i64, fx: &Fx) -> String {
    timefmt::event(&(fx.tm)(t))
}

/// A spooled script's command as one line: its lines joined by `;`.
pub fn display_command(cmd: &str) -> String {
    if !cmd.contains('\n') {
        return cmd.to_owned();
    }
    cmd.trim_end_matches('\n')
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect::<Vec<_>>()
        .join(";")
}

// ------------------------------------------------------------------ default and -w

/// One job of the default (`wide = false`) or `-w` table, with its continuation lines.
pub fn row(j: &JobInfo, wide: bool, fx: &Fx) -> String {
    let pending = is_pending(j);
    let hosts = host_words(&j.exec_hosts, fx.short_hosts);
    let submit = table_time(j.submit_time, fx);
    if wide {
        let exec = if pending || hosts.is_empty() {
            "-".to_owned()
        } else {
            hosts.join(":")
        };
        return format!(
            "{:<7} {:<7} {:<5.5} {:<10} {:<11} {:<11} {:<10} {}\n",
            j.job_id,
            j.user,
            state_name(j),
            j.queue,
            j.from_host,
            exec,
            j.job_name,
            submit
        );
    }
    let first = if pending {
        String::new()
    } else {
        hosts
            .first()
            .cloned()
            .unwrap_or_else(|| "   -   ".to_owned())
    };
    let mut out = format!(
        "{:<7} {} {} {} {} {} {} {}\n",
        j.job_id,
        col(&j.user, 7),
        col(state_name(j), 5),
        col(&j.queue, 10),
        col(&j.from_host, 11),
        col(&first, 11),
        col(&j.job_name, 10),
        col(&submit, 14)
    );
    if !pending {
        for h in hosts.iter().skip(1) {
            let _ = writeln!(out, "{:45}{}", "", star_cut(h, 11));
        }
    }
    out
}

fn reason_text(r: &PendReason) -> String {
    if r.code >= 2001 && !r.detail.is_empty() {
        let builtin = (2001..2012).contains(&r.code);
        if !builtin && r.code < 2601 {
            return format!("External load index ({}) is beyond threshold", r.detail);
        }
        if r.code >= 2601 {
            return format!(
                "Job requirements for reserving resource ({}) not satisfied",
                r.detail
            );
        }
    }
    let text = pend_reason_text(r.code);
    if text.starts_with("Unknown pending reason") && !r.detail.is_empty() {
        // A reason basalt-core has no text for (mbatchd sends it, e.g. an array's
        // running-element limit).
        return r.detail.clone();
    }
    text
}

/// The pending-reason lines of a job (each starting with a space). Host-level
/// reasons are counted (` <text>: 2 hosts;`), or name their hosts with `long`.
pub fn pend_reason_lines(j: &JobInfo, long: bool) -> String {
    let mut out = String::new();
    for r in &j.pend_reasons {
        let text = reason_text(r);
        if pend_reason_is_host(r.code) {
            if long && !r.hosts.is_empty() {
                let _ = writeln!(out, " {text}: {};", r.hosts.join(", "));
            } else {
                let n = r.hosts.len().max(1);
                let _ = writeln!(out, " {text}: {n} host{};", if n == 1 { "" } else { "s" });
            }
        } else {
            let _ = writeln!(out, " {text};");
        }
    }
    out
}

/// The suspending-reason line of a suspended job.
pub fn susp_reason_line(j: &JobInfo) -> String {
    if j.reasons == 0 {
        return if state_of(j) == Some(JobState::Psusp) {
            pend_reason_lines(j, false)
        } else {
            String::new()
        };
    }
    format!("{}\n", susp_reason_text(j.reasons, j.subreasons))
}

/// Table options.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableOpts {
    pub wide: bool,
    pub noheader: bool,
    /// `-p`: pending reasons after each pending job.
    pub pend_reasons: bool,
    /// `-s`: suspending reasons after each suspended job.
    pub susp_reasons: bool,
}

/// The default or `-w` table.
pub fn table(jobs: &[JobInfo], o: &TableOpts, fx: &Fx) -> String {
    let mut out = String::new();
    if !o.noheader {
        out.push_str(HEADER);
        out.push('\n');
    }
    for j in jobs {
        out.push_str(&row(j, o.wide, fx));
        if o.pend_reasons && is_pending(j) {
            out.push_str(&pend_reason_lines(j, false));
        } else if o.susp_reasons && is_suspended(j) {
            out.push_str(&susp_reason_line(j));
        }
    }
    out
}

// ------------------------------------------------------------------ -A

/// The header of `bjobs -A`.
pub const ARRAY_HEADER: &str =
    "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP";

/// `1,2,3,5,7-9` → `1-3,5,7-9`.
fn index_ranges(idx: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let start = idx[i];
        let mut end = start;
        while i + 1 < idx.len() && idx[i + 1] == end + 1 {
            i += 1;
            end = idx[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The `-A` summary: one row per job array (elements grouped by job id, in id order).
/// `all` keeps arrays whose elements have all finished.
pub fn array_summary(jobs: &[JobInfo], all: bool, noheader: bool) -> String {
    let mut arrays: Vec<(u64, Vec<&JobInfo>)> = Vec::new();
    for j in jobs.iter().filter(|j| j.idx > 0) {
        match arrays.iter_mut().find(|(id, _)| *id == j.job_id) {
            Some((_, v)) => v.push(j),
            None => arrays.push((j.job_id, vec![j])),
        }
    }
    arrays.sort_by_key(|(id, _)| *id);
    let mut out = String::new();
    for (id, mut elems) in arrays {
        if !all && elems.iter().all(|j| is_finished(j)) {
            continue;
        }
        elems.sort_by_key(|j| j.idx);
        let idx: Vec<u32> = elems.iter().map(|j| j.idx).collect();
        let first = elems[0];
        let suffix = format!("[{}]", first.idx);
        let base = first
            .job_name
            .strip_suffix(&suffix)
            .unwrap_or(&first.job_name);
        let spec = format!("{base}[{}]", index_ranges(&idx));
        let n = |st: JobState| elems.iter().filter(|j| state_of(j) == Some(st)).count();
        let run = n(JobState::Run) + n(JobState::Unkwn);
        let _ = writeln!(
            out,
            "{:<7}  {:<8.8} {:>8.8}   {:>5} {:>4} {:>4} {:>4} {:>4} {:>5} {:>5} {:>5}",
            id,
            spec,
            first.user,
            elems.len(),
            n(JobState::Pend),
            n(JobState::Done),
            run,
            n(JobState::Exit),
            n(JobState::Ssusp),
            n(JobState::Ususp),
            n(JobState::Psusp),
        );
    }
    if out.is_empty() || noheader {
        return out;
    }
    format!("{ARRAY_HEADER}\n{out}")
}

// ------------------------------------------------------------------ -l

const INDEX_NAMES: [&str; 11] = [
    "r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem",
];

fn threshold_cells(values: &HashMap<String, f64>) -> String {
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

fn host_list_words(hosts: &[String], short: bool) -> String {
    host_words(hosts, short)
        .iter()
        .map(|h| format!("<{h}>"))
        .collect::<Vec<_>>()
        .join(" ")
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
    if !j.user_group.is_empty() {
        let _ = write!(l, " User Group <{}>,", j.user_group);
    }
    let _ = write!(l, " Status <{}>, Queue <{}>,", state_name(j), j.queue);
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
        j.from_host
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
        let verb = if j.pid == 0 && j.exec_home.is_empty() && !is_finished(j) {
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

    // 7. Thresholds.
    out.push_str("\n SCHEDULING PARAMETERS:\n");
    let empty = HashMap::new();
    match queue {
        Some(q) => out.push_str(&thresholds(&q.load_sched, &q.load_stop)),
        None => out.push_str(&thresholds(&empty, &empty)),
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
        let h = j
            .exec_hosts
            .first()
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

// ------------------------------------------------------------------ -o and -json

/// A field `bjobs -o` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// Canonical name (lower case).
    pub name: &'static str,
    /// Header / JSON key.
    pub header: &'static str,
    /// Recommended width (`name:`).
    pub width: usize,
    pub aliases: &'static [&'static str],
}

const fn f(
    name: &'static str,
    header: &'static str,
    width: usize,
    aliases: &'static [&'static str],
) -> FieldDef {
    FieldDef {
        name,
        header,
        width,
        aliases,
    }
}

/// The fields of `-o` (LSF 10 names, headers and recommended widths).
pub const FIELDS: &[FieldDef] = &[
    f("jobid", "JOBID", 7, &["id"]),
    f("jobindex", "JOBINDEX", 8, &[]),
    f("stat", "STAT", 5, &["st"]),
    f("user", "USER", 7, &[]),
    f("user_group", "USER_GROUP", 15, &["ugroup"]),
    f("queue", "QUEUE", 10, &[]),
    f("job_name", "JOB_NAME", 10, &["name"]),
    f("proj_name", "PROJ_NAME", 11, &["proj", "project"]),
    f("dependency", "DEPENDENCY", 15, &[]),
    f("pend_reason", "PEND_REASON", 11, &[]),
    f("command", "COMMAND", 15, &["cmd"]),
    f("pids", "PIDS", 20, &[]),
    f("exit_code", "EXIT_CODE", 10, &[]),
    f("exit_reason", "EXIT_REASON", 50, &[]),
    f("kill_reason", "KILL_REASON", 50, &[]),
    f("suspend_reason", "SUSPEND_REASON", 50, &[]),
    f("from_host", "FROM_HOST", 11, &[]),
    f("first_host", "FIRST_HOST", 11, &[]),
    f("exec_host", "EXEC_HOST", 11, &[]),
    f("nexec_host", "NEXEC_HOST", 10, &[]),
    f("nreq_slot", "NREQ_SLOT", 10, &[]),
    f("nalloc_slot", "NALLOC_SLOT", 10, &[]),
    f("slots", "SLOTS", 5, &[]),
    f("exclusive", "EXCLUSIVE", 13, &[]),
    f("submit_time", "SUBMIT_TIME", 15, &[]),
    f("start_time", "START_TIME", 15, &[]),
    f("finish_time", "FINISH_TIME", 16, &[]),
    f("cpu_used", "CPU_USED", 10, &[]),
    f("run_time", "RUN_TIME", 15, &[]),
    f("mem", "MEM", 15, &[]),
    f("max_mem", "MAX_MEM", 15, &[]),
    f("avg_mem", "AVG_MEM", 15, &[]),
    f("swap", "SWAP", 15, &[]),
    f("runtimelimit", "RUNTIMELIMIT", 12, &[]),
    f("min_req_proc", "MIN_REQ_PROC", 12, &[]),
    f("max_req_proc", "MAX_REQ_PROC", 12, &[]),
    f(
        "effective_resreq",
        "EFFECTIVE_RESREQ",
        17,
        &["combined_resreq"],
    ),
    f("input_file", "INPUT_FILE", 10, &[]),
    f("output_file", "OUTPUT_FILE", 11, &[]),
    f("error_file", "ERROR_FILE", 10, &[]),
    f("sub_cwd", "SUB_CWD", 10, &["cwd"]),
    f("exec_home", "EXEC_HOME", 10, &[]),
    f("exec_cwd", "EXEC_CWD", 10, &[]),
];

/// The fields `-json` shows without `-o`.
pub const DEFAULT_JSON_FIELDS: [&str; 8] = [
    "jobid",
    "user",
    "stat",
    "queue",
    "from_host",
    "exec_host",
    "job_name",
    "submit_time",
];

/// Look a field up by name or alias (case-insensitive).
pub fn field(name: &str) -> Option<&'static FieldDef> {
    let n = name.to_ascii_lowercase();
    FIELDS
        .iter()
        .find(|f| f.name == n || f.aliases.contains(&n.as_str()))
}

/// One requested column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub def: &'static FieldDef,
    /// None = un-sized (value + one space).
    pub width: Option<usize>,
    /// `name:-N`: right-aligned.
    pub right: bool,
}

/// A parsed `-o` string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Format {
    pub columns: Vec<Column>,
    pub delimiter: Option<String>,
}

/// Parse `-o "jobid stat:7 name:-10 delimiter=','"`.
pub fn parse_format(s: &str) -> Result<Format, String> {
    let mut fmt = Format::default();
    let mut rest = s.trim();
    // delimiter='c' may contain a blank, so find it first.
    if let Some(pos) = rest.to_ascii_lowercase().find("delimiter=") {
        let value = rest[pos + "delimiter=".len()..].trim();
        let d = if let Some(q) = value.chars().next().filter(|c| *c == '\'' || *c == '"') {
            let inner = &value[1..];
            let end = inner
                .find(q)
                .ok_or_else(|| format!("unterminated delimiter: {value}"))?;
            &inner[..end]
        } else {
            value.split_whitespace().next().unwrap_or("")
        };
        if d.is_empty() {
            return Err("empty delimiter".into());
        }
        fmt.delimiter = Some(d.to_owned());
        rest = rest[..pos].trim();
    }
    for spec in rest.split_whitespace() {
        let (name, width) = match spec.split_once(':') {
            Some((n, w)) => (n, Some(w)),
            None => (spec, None),
        };
        let def = field(name).ok_or_else(|| format!("unknown field name <{name}>"))?;
        let (width, right) = match width {
            None => (None, false),
            Some("") => (Some(def.width), false),
            Some(w) => {
                let (digits, right) = match w.strip_prefix('-') {
                    Some(d) => (d, true),
                    None => (w, false),
                };
                // LSF allows a unit after a second colon (mem:10:G); the width is first.
                let digits = digits.split(':').next().unwrap_or(digits);
                let n: usize = digits
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("bad width in <{spec}>"))?;
                (Some(n), right)
            }
        };
        fmt.columns.push(Column { def, width, right });
    }
    if fmt.columns.is_empty() {
        return Err("no field names".into());
    }
    Ok(fmt)
}

fn secs_text(secs: f64) -> String {
    format!("{secs:.1} second(s)")
}

/// A field's value ("" when it has none).
pub fn field_value(j: &JobInfo, name: &str, fx: &Fx) -> String {
    let started = j.start_time > 0 && !j.exec_hosts.is_empty() && !is_pending(j);
    match name {
        "jobid" => j.job_id.to_string(),
        "jobindex" => j.idx.to_string(),
        "stat" => state_name(j).to_owned(),
        "user" => j.user.clone(),
        "user_group" => j.user_group.clone(),
        "queue" => j.queue.clone(),
        "job_name" => j.job_name.clone(),
        "proj_name" => j.project.clone(),
        "dependency" => j.depend_cond.clone(),
        "pend_reason" if is_pending(j) => pend_reason_lines(j, false)
            .lines()
            .map(|l| l.trim().trim_end_matches(';'))
            .collect::<Vec<_>>()
            .join("; "),
        "command" => display_command(&j.command),
        "pids" => j
            .pids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        "exit_code" if j.exit_code >= 0 => j.exit_code.to_string(),
        "exit_reason" if !j.term_reason.is_empty() => term_reason_text(&j.term_reason),
        "suspend_reason" if is_suspended(j) => susp_reason_line(j)
            .lines()
            .map(|l| l.trim().trim_end_matches(';'))
            .collect::<Vec<_>>()
            .join("; "),
        "from_host" => j.from_host.clone(),
        "first_host" if started => j.exec_hosts.first().cloned().unwrap_or_default(),
        "exec_host" if started => host_words(&j.exec_hosts, true).join(":"),
        "nexec_host" if started => super::text::group_hosts(&j.exec_hosts)
            .iter()
            .map(|(h, _)| h)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            .to_string(),
        "nreq_slot" => j.num_processors.max(1).to_string(),
        "nalloc_slot" if started => j.exec_hosts.len().to_string(),
        "slots" => {
            if started {
                j.exec_hosts.len().to_string()
            } else {
                j.num_processors.max(1).to_string()
            }
        }
        "exclusive" => if j.exclusive { "Y" } else { "N" }.to_owned(),
        "submit_time" => table_time(j.submit_time, fx),
        "start_time" if j.start_time > 0 => table_time(j.start_time, fx),
        "finish_time" if is_finished(j) => table_time(j.end_time, fx),
        "cpu_used" => secs_text(j.cpu_time),
        "run_time" if j.start_time > 0 => {
            let end = if is_finished(j) && j.end_time > 0 {
                j.end_time
            } else {
                fx.now
            };
            format!("{} second(s)", (end - j.start_time).max(0))
        }
        "mem" if j.mem_kb > 0 => mem_text(j.mem_kb),
        "max_mem" if j.max_mem_kb > 0 => mem_text(j.max_mem_kb),
        "avg_mem" if j.avg_mem_kb > 0 => mem_text(j.avg_mem_kb),
        "swap" if j.swap_kb > 0 => mem_text(j.swap_kb),
        "runtimelimit" if j.run_limit > 0 => format!("{:.1}", j.run_limit as f64 / 60.0),
        "min_req_proc" => j.num_processors.max(1).to_string(),
        "max_req_proc" => j.max_processors.max(j.num_processors).max(1).to_string(),
        "effective_resreq" => j.res_req.clone(),
        "input_file" => j.in_file.clone(),
        "output_file" => j.out_file.clone(),
        "error_file" => j.err_file.clone(),
        "sub_cwd" => j.cwd.clone(),
        "exec_home" => j.exec_home.clone(),
        "exec_cwd" => j.exec_cwd.clone(),
        _ => String::new(),
    }
}

fn header_cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{value:>w$.w$}"),
        Some(w) => format!("{value:<w$.w$}"),
    }
}

fn cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{:>w$}", star_cut(value, w)),
        Some(w) => format!("{:<w$}", star_cut(value, w)),
    }
}

fn join_cells(cells: Vec<String>, fmt: &Format) -> String {
    match &fmt.delimiter {
        Some(d) => cells.join(d),
        None => cells.join(" ").trim_end_matches(' ').to_owned(),
    }
}

/// `bjobs -o`: a header (unless `noheader`) and one line per job.
pub fn custom(jobs: &[JobInfo], fmt: &Format, noheader: bool, fx: &Fx) -> String {
    let mut out = String::new();
    if !noheader {
        let cells = fmt
            .columns
            .iter()
            .map(|c| header_cell(c.def.header, c))
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    for j in jobs {
        let cells = fmt
            .columns
            .iter()
            .map(|c| {
                let v = field_value(j, c.def.name, fx);
                cell(if v.is_empty() { "-" } else { &v }, c)
            })
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    out
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// `bjobs -json`: `{"COMMAND":"bjobs","JOBS":n,"RECORDS":[...]}`, all values strings,
/// unknown ids as `{"JOBID":"N","ERROR":"Job <N> is not found"}`.
pub fn json(jobs: &[JobInfo], not_found: &[JobRef], fields: &[&FieldDef], fx: &Fx) -> String {
    let mut records: Vec<String> = Vec::new();
    for j in jobs {
        let kv: Vec<String> = fields
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    json_str(f.header),
                    json_str(&field_value(j, f.name, fx))
                )
            })
            .collect();
        records.push(format!("{{{}}}", kv.join(",")));
    }
    for r in not_found {
        let id = job_ref_str(r);
        records.push(format!(
            "{{\"JOBID\":{},\"ERROR\":{}}}",
            json_str(&id),
            json_str(&format!("Job <{id}> is not found"))
        ));
    }
    if records.is_empty() {
        return "{\"COMMAND\":\"bjobs\",\"JOBS\":0,\"RECORDS\":[]}\n".to_owned();
    }
    let body: Vec<String> = records.iter().map(|r| format!("  {r}")).collect();
    format!(
        "{{\"COMMAND\":\"bjobs\",\"JOBS\":{},\"RECORDS\":[\n{}]}}\n",
        records.len(),
        body.join(",\n")
    )
}

// ------------------------------------------------------------------ -sum

/// The job slots a job holds (once started: one per execution-host entry, so an
/// `-n min,max` job counts what it got) or asks for (pending: its minimum).
pub fn job_slots(j: &JobInfo) -> u32 {
    if !is_pending(j) && !j.exec_hosts.is_empty() {
        j.exec_hosts.len() as u32
    } else {
        j.num_processors.max(1)
    }
}

/// `bjobs -sum` (LSF 10.1): the job slots of the unfinished jobs listed, by state.
/// PSUSP and WAIT jobs count as pending; FWD_PEND (jobs forwarded to another cluster)
/// is 0, Basalt forwards none. ZOMBI and states Basalt does not know count as UNKNOWN.
pub fn sum(jobs: &[JobInfo]) -> String {
    // RUN SSUSP USUSP UNKNOWN PEND FWD_PEND
    let mut c = [0u64; 6];
    for j in jobs {
        let i = match state_of(j) {
            Some(JobState::Run) => 0,
            Some(JobState::Ssusp) => 1,
            Some(JobState::Ususp) => 2,
            Some(JobState::Unkwn | JobState::Zombi) | None => 3,
            Some(JobState::Pend | JobState::Psusp | JobState::Wait) => 4,
            Some(JobState::Done | JobState::Exit) => continue,
        };
        c[i] += u64::from(job_slots(j));
    }
    let mut out = String::new();
    for h in ["RUN", "SSUSP", "USUSP", "UNKNOWN", "PEND", "FWD_PEND"] {
        let _ = write!(out, "{h:<10} ");
    }
    out.push('\n');
    for n in c {
        let _ = write!(out, "{n:<10} ");
    }
    out.push('\n');
    out
}

// ------------------------------------------------------------------ command

/// Parsed bjobs arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub all: bool,
    pub done: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
    pub long: bool,
    pub wide: bool,
    pub noheader: bool,
    pub json: bool,
    /// `-A`: the job-array summary.
    pub arrays: bool,
    /// `-sum`: the job-slot summary.
    pub sum: bool,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub format: Option<String>,
    pub ids: Vec<String>,
}

/// Fill [`Args`] from parsed items.
pub fn args_from(items: Vec<Item>) -> Args {
    let mut a = Args::default();
    for it in items {
        match it {
            Item::Arg(s) => a.ids.push(s),
            Item::Opt(n, v) => match (n.as_str(), v) {
                ("A", _) => a.arrays = true,
                ("a", _) => a.all = true,
                ("d", _) => a.done = true,
                ("p", _) => a.pend = true,
                ("r", _) => a.run = true,
                ("s", _) => a.susp = true,
                ("l", _) => a.long = true,
                ("w", _) => a.wide = true,
                ("noheader", _) => a.noheader = true,
                ("json", _) => a.json = true,
                ("sum", _) => a.sum = true,
                ("u", v) => a.user = v,
                ("q", v) => a.queue = v,
                ("m", v) => a.host = v,
                ("J", v) => a.job_name = v,
                ("o", v) => a.format = v,
                _ => {}
            },
        }
    }
    a
}

/// The state bits to ask for (0 = mbatchd's default: unfinished, plus finished ones
/// for explicit ids).
pub fn state_bits(a: &Args) -> u32 {
    let unfinished = status::PEND
        | status::PSUSP
        | status::RUN
        | status::SSUSP
        | status::USUSP
        | status::UNKWN
        | status::WAIT
        | status::PROV
        | status::RUNKWN;
    if a.sum {
        // -sum counts unfinished jobs only, also those named by id.
        return unfinished;
    }
    let mut bits = 0;
    if a.pend {
        bits |= status::PEND | status::PSUSP;
    }
    if a.run {
        bits |= status::RUN;
    }
    if a.susp {
        bits |= status::PSUSP | status::SSUSP | status::USUSP;
    }
    if a.done {
        bits |= status::DONE | status::EXIT;
    }
    if a.all {
        bits |= unfinished | status::DONE | status::EXIT;
    }
    bits
}

/// The stderr message when nothing matched.
pub fn nothing_message(a: &Args) -> &'static str {
    match (a.all, a.pend, a.run, a.susp, a.done) {
        (true, ..) => "No job found",
        (false, true, false, false, false) => "No pending job found",
        (false, false, true, false, false) => "No running job found",
        (false, false, false, true, false) => "No suspended job found",
        (false, false, false, false, true) => "No done job found",
        _ => "No unfinished job found",
    }
}

/// `bjobs`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match super::parse_args("bjobs", &args, &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = args_from(items);
    let refs = match super::parse_job_ids(&a.ids) {
        Ok(r) => r,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return crate::fail();
        }
    };
    let config = match super::load_config("bjobs") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let format_text = a.format.clone().or_else(|| {
        std::env::var("LSB_BJOBS_FORMAT")
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    let format = match format_text.as_deref().map(parse_format) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            eprintln!("bjobs: Invalid format specified: {e}");
            return crate::fail();
        }
    };
    let short_hosts = !matches!(
        config
            .lsf_conf
            .get("LSB_SHORT_HOSTLIST")
            .map(|v| v.trim().to_ascii_uppercase())
            .as_deref(),
        Some("0" | "N" | "NO")
    );
    let consistent_exit = config
        .lsf_conf
        .get("LSB_BJOBS_CONSISTENT_EXIT_CODE")
        .or(std::env::var("LSB_BJOBS_CONSISTENT_EXIT_CODE")
            .ok()
            .as_deref())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("y"));
    let fx = Fx {
        tm: timefmt::local,
        short_hosts,
        now: timefmt::now(),
    };
    let caller = super::caller(&config);
    let user = match &a.user {
        Some(u) => u.clone(),
        None if !refs.is_empty() => "all".to_owned(),
        None => String::new(),
    };
    let req = JobsRequest {
        caller: Some(caller.clone()),
        ids: refs.clone(),
        user,
        queue: a.queue.clone().unwrap_or_default(),
        host: a.host.clone().unwrap_or_default(),
        job_name: a.job_name.clone().unwrap_or_default(),
        // -A counts every element of an array, finished ones too.
        states: if a.arrays { u32::MAX } else { state_bits(&a) },
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client.jobs(req).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        if a.sum {
            print!("{}", sum(&reply.jobs));
            for r in &reply.not_found {
                eprintln!("Job <{}> is not found", job_ref_str(r));
            }
            return if reply.not_found.is_empty() {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            };
        }
        if a.json {
            let fields: Vec<&FieldDef> = match &format {
                Some(f) => f.columns.iter().map(|c| c.def).collect(),
                None => DEFAULT_JSON_FIELDS
                    .iter()
                    .filter_map(|n| field(n))
                    .collect(),
            };
            print!("{}", json(&reply.jobs, &reply.not_found, &fields, &fx));
            return ExitCode::SUCCESS;
        }
        if a.arrays {
            let text = array_summary(&reply.jobs, a.all || !refs.is_empty(), a.noheader);
            if text.is_empty() && reply.not_found.is_empty() {
                eprintln!("{}", nothing_message(&a));
                return if consistent_exit {
                    crate::fail()
                } else {
                    ExitCode::SUCCESS
                };
            }
            print!("{text}");
            for r in &reply.not_found {
                eprintln!("Job <{}> is not found", job_ref_str(r));
            }
            return if reply.not_found.is_empty() {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            };
        }
        if reply.jobs.is_empty() && reply.not_found.is_empty() {
            if let (Some(pat), true) = (&a.job_name, refs.is_empty()) {
                eprintln!("Job <{pat}> is not found");
                return crate::fail();
            }
            eprintln!("{}", nothing_message(&a));
            return if consistent_exit {
                crate::fail()
            } else {
                ExitCode::SUCCESS
            };
        }
        let text = if let Some(f) = &format {
            if reply.jobs.is_empty() {
                String::new()
            } else {
                custom(&reply.jobs, f, a.noheader, &fx)
            }
        } else if a.long {
            let mut names: Vec<String> = reply.jobs.iter().map(|j| j.queue.clone()).collect();
            names.sort();
            names.dedup();
            let queues = client
                .queues(QueuesRequest {
                    caller: Some(caller.clone()),
                    queues: names,
                })
                .await
                .map(|r| r.into_inner().queues)
                .unwrap_or_default();
            let mut exec: Vec<String> = reply
                .jobs
                .iter()
                .filter_map(|j| j.exec_hosts.first().cloned())
                .collect();
            exec.sort();
            exec.dedup();
            let hosts = if exec.is_empty() {
                Vec::new()
            } else {
                client
                    .hosts(HostsRequest {
                        caller: Some(caller.clone()),
                        hosts: exec,
                    })
                    .await
                    .map(|r| r.into_inner().hosts)
                    .unwrap_or_default()
            };
            if reply.jobs.is_empty() {
                String::new()
            } else {
                long_with_hosts(&reply.jobs, &queues, &hosts, &fx)
            }
        } else if reply.jobs.is_empty() {
            String::new()
        } else {
            let o = TableOpts {
                wide: a.wide,
                noheader: a.noheader,
                pend_reasons: a.pend,
                susp_reasons: a.susp,
            };
            table(&reply.jobs, &o, &fx)
        };
        print!("{text}");
        for r in &reply.not_found {
            eprintln!("Job <{}> is not found", job_ref_str(r));
        }
        if reply.not_found.is_empty() {
            ExitCode::SUCCESS
        } else {
            crate::fail()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::job::{pend, susp};

    const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

    fn fx() -> Fx {
        Fx {
            tm: timefmt::utc,
            short_hosts: true,
            now: T0 + 100,
        }
    }

    fn job(id: u64, state: u32, name: &str, hosts: &[&str]) -> JobInfo {
        JobInfo {
            job_id: id,
            user: "root".into(),
            state,
            queue: "normal".into(),
            from_host: "vm".into(),
            exec_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            job_name: name.into(),
            command: name.into(),
            submit_time: T0,
            start_time: if hosts.is_empty() { 0 } else { T0 + 5 },
            project: "default".into(),
            exit_code: -1,
            num_processors: 1,
            max_processors: 1,
            run_limit: -1,
            ..Default::default()
        }
    }

    #[test]
    fn default_table_matches_the_reference() {
        let jobs = vec![
            job(101, status::RUN, "sleep 30", &["vm"]),
            job(103, status::PEND, "sleep 20", &[]),
            job(106, status::PEND, "arr[1]", &[]),
            job(521, status::PEND, "long_name_for_test", &[]),
        ];
        let mut jobs = jobs;
        jobs[2].submit_time = T0 + 60;
        jobs[3].submit_time = T0 + 30 * 60;
        let got = table(&jobs, &TableOpts::default(), &fx());
        let want = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
101     root    RUN   normal     vm          vm          sleep 30   Nov 22 09:25  \n\
103     root    PEND  normal     vm                      sleep 20   Nov 22 09:25  \n\
106     root    PEND  normal     vm                      arr[1]     Nov 22 09:26  \n\
521     root    PEND  normal     vm                      *_for_test Nov 22 09:55  \n";
        assert_eq!(got, want);
        let noheader = table(
            &jobs[..1],
            &TableOpts {
                noheader: true,
                ..Default::default()
            },
            &fx(),
        );
        assert!(noheader.starts_with("101 "));
    }

    #[test]
    fn parallel_jobs_show_more_hosts() {
        let j = job(
            7,
            status::RUN,
            "mpi",
            &["hostA", "hostA", "hostA", "hostA", "hostB"],
        );
        let got = row(&j, false, &fx());
        assert_eq!(
            got,
            "7       root    RUN   normal     vm          4*hostA     mpi        Nov 22 09:25  \n\
\x20                                            hostB\n"
        );
        let long_list = Fx {
            short_hosts: false,
            ..fx()
        };
        let got = row(&job(8, status::RUN, "p", &["a", "b"]), false, &long_list);
        assert!(got.ends_with(&format!("\n{}b\n", " ".repeat(45))));
        // A started job without hosts.
        let mut j = job(9, status::RUN, "x", &[]);
        j.start_time = T0;
        assert!(row(&j, false, &fx()).contains("vm             -        x"));
    }

    #[test]
    fn wide_rows_never_truncate() {
        let mut j = job(
            1234567,
            status::RUN,
            "a_very_long_job_name",
            &["hostA", "hostA", "hostB"],
        );
        j.user = "someverylonguser".into();
        let got = row(&j, true, &fx());
        assert_eq!(
            got,
            "1234567 someverylonguser RUN   normal     vm          2*hostA:hostB a_very_long_job_name Nov 22 09:25\n"
        );
        let p = row(&job(5, status::PEND, "x", &[]), true, &fx());
        assert_eq!(
            p,
            "5       root    PEND  normal     vm          -           x          Nov 22 09:25\n"
        );
    }

    #[test]
    fn pending_and_suspending_reasons() {
        let mut p = job(103, status::PEND, "sleep 20", &[]);
        p.pend_reasons = vec![
            PendReason {
                code: pend::HOST_JOB_LIMIT,
                hosts: vec!["vm".into()],
                detail: String::new(),
            },
            PendReason {
                code: pend::NEW_JOB,
                hosts: vec![],
                detail: String::new(),
            },
            PendReason {
                code: pend::NOT_ENOUGH_SLOTS,
                hosts: vec!["a".into(), "b".into(), "c".into()],
                detail: String::new(),
            },
        ];
        let mut s = job(310, status::SSUSP, "burn", &["vm"]);
        s.queue = "lowq".into();
        s.submit_time = T0 + 25 * 60;
        s.reasons = susp::LOAD_REASON;
        s.subreasons = 0;
        let o = TableOpts {
            pend_reasons: true,
            susp_reasons: true,
            noheader: true,
            ..Default::default()
        };
        let got = table(&[p.clone(), s], &o, &fx());
        assert_eq!(
            got,
            "103     root    PEND  normal     vm                      sleep 20   Nov 22 09:25  \n\
\x20Job slot limit reached: 1 host;\n\
\x20New job is waiting for scheduling;\n\
\x20Not enough job slot(s): 3 hosts;\n\
310     root    SSUSP lowq       vm          vm          burn       Nov 22 09:50  \n\
\x20Host load exceeded threshold:  15-second CPU run queue length (r15s)\n"
        );
        assert_eq!(
            pend_reason_lines(&p, true),
            " Job slot limit reached: vm;\n New job is waiting for scheduling;\n Not enough job slot(s): a, b, c;\n"
        );
    }

    #[test]
    fn long_format_matches_the_reference() {
        let mut j = job(101, status::RUN, "sleep 30", &["vm"]);
        j.command = "sleep 30".into();
        j.cwd = "/home/alice/run".into();
        j.out_file = "/home/alice/run/out.%J".into();
        j.exec_home = "/root".into();
        j.exec_cwd = "/home/alice/run".into();
        j.pid = 25592;
        j.pgid = 25592;
        j.pids = vec![25592, 25593];
        j.rusage_time = T0 + 15;
        j.cpu_time = 2.0;
        j.mem_kb = 3 * 1024 + 10;
        j.swap_kb = 10 * 1024 + 10;
        j.max_mem_kb = 3 * 1024 + 10;
        j.avg_mem_kb = 2 * 1024 + 10;
        j.options = sub::OUT_FILE | sub::PROJECT_NAME;
        let got = long(&[j], &[], &fx());
        let want = "
Job <101>, User <root>, Project <default>, Status <RUN>, Queue <normal>, Comman
                     d <sleep 30>
Sun Nov 22 09:25:35: Submitted from host <vm>, CWD </home/alice/run>, Output Fi
                     le </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Started 1 Task(s) on Host(s) <vm>, Allocated 1 Slot(s) on 
                     Host(s) <vm>, Execution Home </root>, Execution CWD </home
                     /alice/run>;
Sun Nov 22 09:25:50: Resource usage collected.
                     The CPU time used is 2 seconds.
                     MEM: 3 Mbytes;  SWAP: 10 Mbytes
                     PGID: 25592;  PIDs: 25592 25593

 MEMORY USAGE:
 MAX MEM: 3 Mbytes;  AVG MEM: 2 Mbytes

 SCHEDULING PARAMETERS:
           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem
 loadSched   -     -     -     -       -     -    -     -     -      -      -  
 loadStop    -     -     -     -       -     -    -     -     -      -      -  

";
        assert_eq!(got, want);
    }

    #[test]
    fn long_format_pending_finished_and_separators() {
        let mut p = job(5, status::PEND, "pj", &[]);
        p.cwd = "run".into();
        p.options = sub::JOB_NAME;
        p.options2 = sub2::HOLD | sub2::JOB_CMD_SPOOL;
        p.command = "#!/bin/sh\necho hi\n".into();
        p.pend_reasons = vec![PendReason {
            code: pend::NEW_JOB,
            hosts: vec![],
            detail: String::new(),
        }];
        let mut d = job(6, status::EXIT, "x", &["vm"]);
        d.end_time = T0 + 10;
        d.exit_status = 3 << 8;
        d.cpu_time = 0.1;
        d.term_reason = "TERM_OWNER".into();
        d.max_mem_kb = 500;
        d.avg_mem_kb = 400;
        let mut q = QueueInfo {
            name: "normal".into(),
            ..Default::default()
        };
        q.load_sched.insert("r1m".into(), 0.3);
        q.load_stop.insert("r1m".into(), 1.0);
        q.load_sched.insert("mem".into(), 100.0);
        q.load_sched.insert("ut".into(), 0.5);
        let got = long(&[p, d], &[q], &fx());
        assert!(got.contains(
            "Job <5>, Job Name <pj>, User <root>, Project <default>, Status <PEND>, Queue <n"
        ));
        assert!(got.contains("Command(Spooled) <#!/bin/sh;echo hi>"));
        assert!(got.contains("Submitted from host <vm> on hold, CWD <$HOME/run>;\n"));
        assert!(got.contains(" PENDING REASONS:\n New job is waiting for scheduling;\n"));
        assert!(got.contains(&format!("\n{}\n\nJob <6>", "-".repeat(78))));
        assert!(got.contains(
            "Sun Nov 22 09:25:45: Exited with exit code 3. The CPU time used is 0.1 seconds.\n"
        ));
        assert!(
            got.contains(
                "Sun Nov 22 09:25:45: Completed <exit>; TERM_OWNER: job killed by owner.\n"
            )
        );
        assert!(got.contains(" MAX MEM: 500 Kbytes;  AVG MEM: 400 Kbytes\n"));
        assert!(got.contains(
            " loadSched   -    0.3    -   0.5       -     -    -     -     -      -    100M \n loadStop    -    1.0    -  "
        ));
        assert!(got.ends_with("\n\n"));
        let mut done = job(7, status::DONE, "ok", &["vm"]);
        done.end_time = T0 + 1;
        assert!(
            long(&[done], &[], &fx())
                .contains(": Done successfully. The CPU time used is 0.0 seconds.\n")
        );
    }

    #[test]
    fn long_thresholds_are_the_stricter_of_queue_and_exec_host() {
        let mut r = job(8, status::SSUSP, "burn", &["vm"]);
        r.reasons = susp::LOAD_REASON;
        r.subreasons = 1;
        let mut q = QueueInfo {
            name: "normal".into(),
            ..Default::default()
        };
        q.load_sched.insert("r1m".into(), 0.3);
        q.load_stop.insert("r1m".into(), 1.8);
        q.load_sched.insert("mem".into(), 100.0);
        let mut h = BatchHostInfo {
            name: "vm".into(),
            ..Default::default()
        };
        h.load_sched.insert("r1m".into(), 0.5);
        h.load_stop.insert("r1m".into(), 1.2);
        h.load_sched.insert("mem".into(), 200.0);
        h.load_sched.insert("ut".into(), 0.5);
        let got = long_with_hosts(&[r], &[q], &[h], &fx());
        assert!(got.contains(
            " SUSPENDING REASONS:\n Host load exceeded threshold:  1-minute CPU run queue length (r1m)\n"
        ), "{got}");
        assert!(got.contains(
            " loadSched   -    0.3    -   0.5       -     -    -     -     -      -    200M \n loadStop    -    1.2    -  "
        ), "{got}");
    }

    #[test]
    fn custom_format_without_and_with_delimiter() {
        let jobs = vec![
            job(101, status::RUN, "sleep 30", &["hostA", "hostA", "hostB"]),
            job(103, status::PEND, "p", &[]),
        ];
        let f = parse_format("jobID st queue exec_host").unwrap_or_default();
        assert_eq!(
            custom(&jobs, &f, false, &fx()),
            "JOBID STAT QUEUE EXEC_HOST\n101 RUN normal 2*hostA:hostB\n103 PEND normal -\n"
        );
        let f = parse_format("id stat").unwrap_or_default();
        assert_eq!(custom(&jobs, &f, true, &fx()), "101 RUN\n103 PEND\n");
        let f = parse_format("jobid: stat:7 job_name:-6 delimiter=','").unwrap_or_default();
        assert_eq!(f.delimiter.as_deref(), Some(","));
        assert_eq!(
            custom(&jobs, &f, false, &fx()),
            "JOBID  ,STAT   ,JOB_NA\n101    ,RUN    ,*ep 30\n103    ,PEND   ,     p\n"
        );
        let f =
            parse_format("jobid stat submit_time start_time exit_code exit_reason delimiter='|'")
                .unwrap_or_default();
        assert_eq!(
            custom(&jobs[1..], &f, true, &fx()),
            "103|PEND|Nov 22 09:25|-|-|-\n"
        );
        let f = parse_format("user queue").unwrap_or_default();
        // Un-sized: one space between values and none at the end.
        assert_eq!(custom(&jobs[..1], &f, true, &fx()), "root normal\n");
        assert!(parse_format("jobid bogus").is_err());
        assert!(parse_format("").is_err());
        assert!(parse_format("jobid:x").is_err());
    }

    #[test]
    fn json_output() {
        let mut done = job(101, status::EXIT, "x", &["vm"]);
        done.exit_code = 3;
        let fields: Vec<&FieldDef> = [
            "jobid",
            "stat",
            "exit_reason",
            "kill_reason",
            "suspend_reason",
        ]
        .iter()
        .filter_map(|n| field(n))
        .collect();
        let nf = vec![JobRef {
            job_id: 999,
            idx: 0,
            has_idx: false,
        }];
        let got = json(&[done.clone()], &nf, &fields, &fx());
        assert_eq!(
            got,
            "{\"COMMAND\":\"bjobs\",\"JOBS\":2,\"RECORDS\":[\n  {\"JOBID\":\"101\",\"STAT\":\"EXIT\",\"EXIT_REASON\":\"\",\"KILL_REASON\":\"\",\"SUSPEND_REASON\":\"\"},\n  {\"JOBID\":\"999\",\"ERROR\":\"Job <999> is not found\"}]}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&got).unwrap_or_default();
        assert_eq!(parsed["JOBS"], 2);
        let defaults: Vec<&FieldDef> = DEFAULT_JSON_FIELDS
            .iter()
            .filter_map(|n| field(n))
            .collect();
        assert_eq!(defaults.len(), 8);
        let got = json(&[job(5, status::PEND, "a\"b", &[])], &[], &defaults, &fx());
        assert!(got.contains("{\"JOBID\":\"5\",\"USER\":\"root\",\"STAT\":\"PEND\",\"QUEUE\":\"normal\",\"FROM_HOST\":\"vm\",\"EXEC_HOST\":\"\",\"JOB_NAME\":\"a\\\"b\",\"SUBMIT_TIME\":\"Nov 22 09:25\"}"));
        assert_eq!(
            json(&[], &[], &defaults, &fx()),
            "{\"COMMAND\":\"bjobs\",\"JOBS\":0,\"RECORDS\":[]}\n"
        );
        // An LSF kill has an exit reason starting with its TERM_ code.
        done.term_reason = "TERM_RUNLIMIT".into();
        assert!(field_value(&done, "exit_reason", &fx()).starts_with("TERM_RUNLIMIT"));
    }

    #[test]
    fn argument_handling() {
        let items = super::super::opts::parse(
            &[
                "-aJ".into(),
                "*x*".into(),
                "-pr".into(),
                "-u".into(),
                "all".into(),
                "12".into(),
            ],
            &SPEC,
            false,
        )
        .unwrap_or_default();
        let a = args_from(items);
        assert!(a.all && a.pend && a.run);
        assert_eq!(a.job_name.as_deref(), Some("*x*"));
        assert_eq!(a.user.as_deref(), Some("all"));
        assert_eq!(a.ids, vec!["12".to_string()]);
        let pr = Args {
            pend: true,
            run: true,
            ..Default::default()
        };
        assert_eq!(state_bits(&pr), status::PEND | status::PSUSP | status::RUN);
        assert_eq!(state_bits(&Args::default()), 0);
        assert_eq!(nothing_message(&Args::default()), "No unfinished job found");
        assert_eq!(
            nothing_message(&Args {
                all: true,
                ..Default::default()
            }),
            "No job found"
        );
    }

    #[test]
    fn array_summary_and_array_limit_reason() {
        let mut jobs = Vec::new();
        for (i, st) in [
            status::DONE,
            status::DONE,
            status::RUN,
            status::RUN,
            status::PEND,
            status::EXIT,
            status::PSUSP,
            status::PEND,
        ]
        .into_iter()
        .enumerate()
        {
            let idx = [1, 2, 3, 4, 5, 7, 8, 9][i];
            let mut j = job(106, st, &format!("arr[{idx}]"), &[]);
            j.idx = idx;
            jobs.push(j);
        }
        // An ordinary job and a finished array are left out (the latter without -a).
        jobs.push(job(107, status::RUN, "plain", &["vm"]));
        let mut fin = job(108, status::DONE, "old[1]", &[]);
        fin.idx = 1;
        jobs.push(fin);
        let want = "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n\
106      arr[1-5,     root       8    2    2    2    1     0     0     1\n";
        assert_eq!(array_summary(&jobs, false, false), want);
        let with_all = array_summary(&jobs, true, true);
        assert_eq!(with_all.lines().count(), 2, "{with_all}");
        assert!(
            with_all
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("108      old[1]"))
        );
        assert_eq!(array_summary(&jobs[8..9], false, false), "");
        assert_eq!(index_ranges(&[1, 2, 3, 5, 7, 8, 9]), "1-3,5,7-9");
        // A reason code basalt-core has no text for shows mbatchd's detail.
        let mut p = job(106, status::PEND, "arr[9]", &[]);
        p.pend_reasons = vec![PendReason {
            code: 38,
            hosts: vec![],
            detail: "The job array has reached its running element limit".into(),
        }];
        assert_eq!(
            pend_reason_lines(&p, false),
            " The job array has reached its running element limit;\n"
        );
    }

    #[test]
    fn sum_is_its_own_option_not_s_u_m() {
        let items = super::super::opts::parse(&["-sum".into()], &SPEC, false).unwrap_or_default();
        let a = args_from(items);
        assert!(a.sum);
        assert!(!a.susp);
        assert_eq!(a.user, None);
        assert_eq!(a.host, None);
        // Unfinished jobs only, whatever else is asked.
        assert_eq!(state_bits(&a) & (status::DONE | status::EXIT), 0);
        assert_ne!(state_bits(&a) & status::PEND, 0);
        assert_ne!(state_bits(&a) & status::USUSP, 0);
    }

    #[test]
    fn sum_counts_job_slots_of_unfinished_jobs_by_state() {
        // A 2,4 job that got 4 slots, a pending 3-slot job, a PSUSP job, suspended ones.
        let mut run = job(1, status::RUN, "mpi", &["a", "a", "b", "b"]);
        run.num_processors = 2;
        run.max_processors = 4;
        let mut pend = job(2, status::PEND, "p", &[]);
        pend.num_processors = 3;
        let jobs = vec![
            run,
            pend,
            job(3, status::PSUSP, "h", &[]),
            job(4, status::SSUSP, "s", &["a", "b"]),
            job(5, status::USUSP, "u", &["a"]),
            job(6, status::UNKWN, "k", &["b"]),
            job(7, status::DONE, "d", &["a"]),
        ];
        assert_eq!(
            sum(&jobs),
            "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
             4          2          1          1          4          0          \n"
        );
        assert_eq!(
            sum(&[]),
            "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
             0          0          0          0          0          0          \n"
        );
    }
}
