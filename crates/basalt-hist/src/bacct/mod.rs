//! `bacct`: accounting of finished jobs, read from `lsb.acct` (cli-output.md §8).
//!
//! The report is IBM LSF's: the `Accounting information about jobs that are:` block
//! naming the selection, for `-l` one block per job (header, submission, dispatch,
//! `Completed <done>.` / `Completed <exit>.`, and the `CPU_T WAIT TURNAROUND STATUS
//! HOG_FACTOR MEM SWAP` table), then `SUMMARY:` with counts, CPU, wait, turnaround and
//! hog-factor statistics. Layouts were taken from captured LSF 7–9 output; inferred
//! details are marked in the code: the selection lines other than `submitted by users`,
//! the throughput lines (shown, as LSF does, only when the jobs finished over a
//! non-zero period, between the first and the last completion).
//!
//! Jobs: the caller's by default; `-u user|all`, `-q`, `-m`, `-J`, `-P`, `-d` (done
//! only), `-e` (exited only); job ids select those jobs for every user. Files:
//! `lsb.acct`, every `lsb.acct.N` too when job ids are given, `-f file` one file.

use super::fast::AcctSelection;
use super::{Fx, Header, IdSel, NO_MATCH, dashes, dispatch_text, event_line};
use basalt_cli::batch::opts::{Item, Spec};
use basalt_cli::batch::text::wildcard_match;
use basalt_core::job::status;
use basalt_eventlog::JobFinish;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// bacct's usage text.
pub const USAGE: &str = "Usage: bacct [-h] [-V] [-l] [-d] [-e] [-f logfile_name]
             [-q queue_name] [-m host_name] [-J job_name] [-P project_name]
             [-u user_name | -u all] [job_ID | \"job_ID[index]\" ...]
";

const SPEC: Spec = Spec {
    flags: &["h", "V", "l", "d", "e"],
    valued: &["u", "q", "m", "J", "P", "f"],
};

/// The column header of a job's accounting line.
pub const ACCT_HEADER: &str =
    "     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP";

/// The accounting figures of one finished job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Acct {
    /// user + system CPU seconds.
    pub cpu: f64,
    /// Seconds from submission to start (to the end for a job that never started).
    pub wait: i64,
    /// Seconds from submission to the end.
    pub turnaround: i64,
    /// CPU time / turnaround time.
    pub hog: f64,
    /// Maximum memory and swap, MB.
    pub mem_mb: i64,
    pub swap_mb: i64,
    /// DONE (else EXIT).
    pub done: bool,
    /// The end time.
    pub end: i64,
}

/// What the accounting figures are computed from: the fields of a `JOB_FINISH` record
/// that [`acct_of`] reads (the history index stores exactly these).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AcctInput {
    /// The record's time: when the job ended.
    pub end_time: i64,
    pub submit_time: i64,
    pub start_time: i64,
    /// `rusage` user + system time.
    pub cpu: f64,
    /// `rusage` maxrss (KB).
    pub maxrss: f64,
    /// maxRMem, maxRSwap (KB).
    pub max_rmem: i64,
    pub max_rswap: i64,
    pub j_status: u32,
}

impl AcctInput {
    /// The fields of `f`.
    pub fn of(f: &JobFinish) -> AcctInput {
        AcctInput {
            end_time: f.header.time,
            submit_time: f.submit_time,
            start_time: f.start_time,
            cpu: f.rusage.cpu_time(),
            maxrss: f.rusage.maxrss,
            max_rmem: f.max_rmem,
            max_rswap: f.max_rswap,
            j_status: f.j_status,
        }
    }
}

/// The figures of `f`.
pub fn acct(f: &JobFinish) -> Acct {
    acct_of(&AcctInput::of(f))
}

/// The figures of a record's accounting fields.
pub fn acct_of(x: &AcctInput) -> Acct {
    let end = x.end_time;
    let turnaround = (end - x.submit_time).max(0);
    let wait = if x.start_time > 0 {
        (x.start_time - x.submit_time).max(0)
    } else {
        turnaround
    };
    let cpu = x.cpu;
    let mem_kb = if x.max_rmem > 0 {
        x.max_rmem
    } else {
        x.maxrss.max(0.0) as i64
    };
    Acct {
        cpu,
        wait,
        turnaround,
        hog: if turnaround > 0 {
            cpu / turnaround as f64
        } else {
            0.0
        },
        mem_mb: mem_kb.max(0) / 1024,
        swap_mb: x.max_rswap.max(0) / 1024,
        done: x.j_status & status::DONE != 0,
        end,
    }
}

// ------------------------------------------------------------------ the report

/// What the report says it covers.
fn selection_block(filter: &Filter) -> String {
    let mut out = String::from("\nAccounting information about jobs that are: \n");
    match &filter.user {
        None => out.push_str("  - submitted by all users.\n"),
        Some(u) => {
            let _ = writeln!(out, "  - submitted by users {u}, ");
        }
    }
    // Inferred: the non-default forms follow the `submitted by users` one.
    match &filter.project {
        None => out.push_str("  - accounted on all projects.\n"),
        Some(p) => {
            let _ = writeln!(out, "  - accounted on projects {p}, ");
        }
    }
    out.push_str(match (filter.done, filter.exited) {
        (true, false) => "  - completed normally\n",
        (false, true) => "  - exited\n",
        _ => "  - completed normally or exited\n",
    });
    match &filter.host {
        None => out.push_str("  - executed on all hosts.\n"),
        Some(h) => {
            let _ = writeln!(out, "  - executed on hosts {h}, ");
        }
    }
    match &filter.queue {
        None => out.push_str("  - submitted to all queues.\n"),
        Some(q) => {
            let _ = writeln!(out, "  - submitted to queues {q}, ");
        }
    }
    out.push_str("  - accounted on all service classes.\n");
    out.push_str(&dashes());
    out.push_str("\n\n");
    out
}

/// One job of `bacct -l`: header, submission, dispatch, completion and the accounting
/// table, closed by 78 dashes and a blank line.
pub fn long_job(f: &JobFinish, fx: &Fx) -> String {
    let a = acct(f);
    let state = if a.done { "DONE" } else { "EXIT" };
    let mut out = Header::of_finish(f, state).render();
    out.push_str(&super::submit_line_bacct(f, fx));
    if f.start_time > 0 && !f.exec_hosts.is_empty() {
        let text = format!("{};", dispatch_text(&f.exec_hosts, 0, fx.short_hosts));
        out.push_str(&event_line(f.start_time, &text, fx));
    }
    let done = if a.done { "done" } else { "exit" };
    out.push_str(&event_line(a.end, &format!("Completed <{done}>."), fx));
    out.push_str("\nAccounting information about this job:\n");
    out.push_str(ACCT_HEADER);
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>10.2}{:>9}{:>15}{:>9}{:>15.4}{:>6}M{:>7}M",
        a.cpu, a.wait, a.turnaround, done, a.hog, a.mem_mb, a.swap_mb
    );
    out.push_str(&dashes());
    out.push_str("\n\n");
    out
}

fn min_max(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let min = v.clone().fold(f64::INFINITY, f64::min);
    let max = v.fold(f64::NEG_INFINITY, f64::max);
    if min.is_finite() {
        (min, max)
    } else {
        (0.0, 0.0)
    }
}

/// The `SUMMARY:` block of `jobs` (not empty).
pub fn summary(jobs: &[JobFinish], fx: &Fx) -> String {
    let a: Vec<Acct> = jobs.iter().map(acct).collect();
    summary_of(&a, fx)
}

/// The `SUMMARY:` block of the figures of the selected jobs (not empty).
pub fn summary_of(a: &[Acct], fx: &Fx) -> String {
    let n = a.len().max(1) as f64;
    let done = a.iter().filter(|x| x.done).count();
    let exited = a.len() - done;
    let cpu_total: f64 = a.iter().map(|x| x.cpu).sum();
    let (cpu_min, cpu_max) = min_max(a.iter().map(|x| x.cpu));
    let wait_total: f64 = a.iter().map(|x| x.wait as f64).sum();
    let (wait_min, wait_max) = min_max(a.iter().map(|x| x.wait as f64));
    let turn_total: f64 = a.iter().map(|x| x.turnaround as f64).sum();
    let (turn_min, turn_max) = min_max(a.iter().map(|x| x.turnaround as f64));
    let hog_total: f64 = a.iter().map(|x| x.hog).sum();
    let (hog_min, hog_max) = min_max(a.iter().map(|x| x.hog));

    let mut out = String::from("SUMMARY:      ( time unit: second ) \n");
    let _ = writeln!(
        out,
        " Total number of done jobs:{done:>8}      Total number of exited jobs:{exited:>6}"
    );
    let _ = writeln!(
        out,
        " Total CPU time consumed:{cpu_total:>10.1}      Average CPU time consumed:{:>8.1}",
        cpu_total / n
    );
    let _ = writeln!(
        out,
        " Maximum CPU time of a job:{cpu_max:>8.1}      Minimum CPU time of a job:{cpu_min:>8.1}"
    );
    let _ = writeln!(out, " Total wait time in queues:{wait_total:>8.1}");
    let _ = writeln!(out, " Average wait time in queue:{:>7.1}", wait_total / n);
    let _ = writeln!(
        out,
        " Maximum wait time in queue:{wait_max:>7.1}      Minimum wait time in queue:{wait_min:>7.1}"
    );
    let _ = writeln!(
        out,
        " Average turnaround time:{:>10.0} (seconds/job)",
        turn_total / n
    );
    let _ = writeln!(
        out,
        " Maximum turnaround time:{turn_max:>10.0}      Minimum turnaround time:{turn_min:>10.0}"
    );
    let _ = writeln!(
        out,
        " Average hog factor of a job:{:>6.2} ( cpu time / turnaround time )",
        hog_total / n
    );
    let _ = writeln!(
        out,
        " Maximum hog factor of a job:{hog_max:>6.2}      Minimum hog factor of a job:{hog_min:>6.2}"
    );
    let first = a.iter().map(|x| x.end).min().unwrap_or(0);
    let last = a.iter().map(|x| x.end).max().unwrap_or(0);
    if last > first {
        // Inferred: the period runs from the first to the last completion.
        let hours = (last - first) as f64 / 3600.0;
        let _ = writeln!(
            out,
            " Total throughput:{:>17.2} (jobs/hour)  during{hours:>8.2} hours",
            a.len() as f64 / hours
        );
        let _ = writeln!(
            out,
            " Beginning time:{:>19}      Ending time:{:>22}",
            fx.table_time(first),
            fx.table_time(last)
        );
    }
    out.push('\n');
    out
}

/// The whole report for the jobs of `finishes` that `filter` selects (`None` when
/// nothing matched).
pub fn report(finishes: &[JobFinish], long: bool, filter: &Filter, fx: &Fx) -> Option<String> {
    let jobs: Vec<JobFinish> = finishes
        .iter()
        .filter(|f| filter.matches(f))
        .cloned()
        .collect();
    report_selected(&jobs, long, filter, fx)
}

/// The whole report for `jobs`, already selected by `filter`.
pub fn report_selected(jobs: &[JobFinish], long: bool, filter: &Filter, fx: &Fx) -> Option<String> {
    if jobs.is_empty() {
        return None;
    }
    let mut out = selection_block(filter);
    if long {
        for f in jobs {
            out.push_str(&long_job(f, fx));
        }
    }
    out.push_str(&summary(jobs, fx));
    Some(out)
}

/// The report without `-l` from the figures of the selected jobs.
pub fn report_figures(a: &[Acct], filter: &Filter, fx: &Fx) -> Option<String> {
    if a.is_empty() {
        return None;
    }
    let mut out = selection_block(filter);
    out.push_str(&summary_of(a, fx));
    Some(out)
}

// ------------------------------------------------------------------ selection

/// Parsed bacct arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub long: bool,
    pub done: bool,
    pub exited: bool,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub file: Option<String>,
    pub ids: Vec<String>,
}

/// Fill [`Args`] from parsed items.
pub fn args_from(items: Vec<Item>) -> Args {
    let mut a = Args::default();
    for it in items {
        match it {
            Item::Arg(s) => a.ids.push(s),
            Item::Opt(n, v) => match (n.as_str(), v) {
                ("l", _) => a.long = true,
                ("d", _) => a.done = true,
                ("e", _) => a.exited = true,
                ("u", v) => a.user = v,
                ("q", v) => a.queue = v,
                ("m", v) => a.host = v,
                ("J", v) => a.job_name = v,
                ("P", v) => a.project = v,
                ("f", v) => a.file = v,
                _ => {}
            },
        }
    }
    a
}

/// Which finished jobs to account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `None`: every user.
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub ids: Vec<IdSel>,
    pub done: bool,
    pub exited: bool,
}

impl Filter {
    /// The filter of `a` for the user `caller` (job ids select every user).
    pub fn new(a: &Args, ids: Vec<IdSel>, caller: &str) -> Filter {
        let user = match a.user.as_deref() {
            _ if !ids.is_empty() => None,
            Some("all") => None,
            Some(u) => Some(u.to_owned()),
            None => Some(caller.to_owned()),
        };
        Filter {
            user,
            queue: a.queue.clone(),
            host: a.host.clone(),
            job_name: a.job_name.clone(),
            project: a.project.clone(),
            ids,
            done: a.done,
            exited: a.exited,
        }
    }

    /// Is `f` selected?
    pub fn matches(&self, f: &JobFinish) -> bool {
        if !self.ids.is_empty() && !self.ids.iter().any(|s| s.matches(f.job_id, f.idx)) {
            return false;
        }
        if self.user.as_ref().is_some_and(|u| *u != f.user_name)
            || self.queue.as_ref().is_some_and(|q| *q != f.queue)
            || self.project.as_ref().is_some_and(|p| *p != f.project_name)
            || self
                .host
                .as_ref()
                .is_some_and(|h| !f.exec_hosts.iter().any(|e| e == h))
        {
            return false;
        }
        if let Some(pat) = &self.job_name {
            let name = super::shown_name(&f.job_name, &f.command, f.idx);
            if !wildcard_match(pat, &name) && !wildcard_match(pat, &f.job_name) {
                return false;
            }
        }
        self.state_ok(f.j_status)
    }

    fn state_ok(&self, j_status: u32) -> bool {
        let done = j_status & status::DONE != 0;
        match (self.done, self.exited) {
            (true, false) => done,
            (false, true) => !done,
            _ => true,
        }
    }

    /// Does a record that already matches the user, queue and project conditions (and
    /// that needs no host or name check: see [`Filter::needs_records`]) pass the others?
    pub fn matches_figures(&self, job_id: u64, idx: u32, j_status: u32) -> bool {
        (self.ids.is_empty() || self.ids.iter().any(|s| s.matches(job_id, idx)))
            && self.state_ok(j_status)
    }

    /// Conditions that only a whole record can answer (`-m`, `-J`).
    pub fn needs_records(&self) -> bool {
        self.host.is_some() || self.job_name.is_some()
    }
}

/// `bacct`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match basalt_cli::batch::parse_args("bacct", &args, &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = args_from(items);
    let ids = match super::parse_ids(&a.ids) {
        Ok(ids) => ids,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return basalt_cli::fail();
        }
    };
    let (logdir, short_hosts) = match super::logdir("bacct") {
        Ok(l) => l,
        Err(code) => return code,
    };
    let files: Vec<PathBuf> = match (&a.file, ids.is_empty()) {
        (Some(f), _) => vec![PathBuf::from(f)],
        (None, true) => vec![logdir.join(basalt_eventlog::ACCT_FILE)],
        (None, false) => match basalt_eventlog::acct_files(&logdir) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("bacct: {e}");
                return basalt_cli::fail();
            }
        },
    };
    let fx = Fx {
        tm: basalt_cli::batch::timefmt::local,
        now: basalt_cli::batch::timefmt::now(),
        short_hosts,
    };
    let filter = Filter::new(&a, ids, &super::caller_name());
    let need_records = a.long || filter.needs_records();
    let indexed = if a.file.is_none() {
        super::fast::acct(&logdir, &files, &filter, need_records)
    } else {
        None
    };
    let (warnings, text) = match indexed {
        Some(AcctSelection::Records(l)) => (
            l.warnings,
            report_selected(&l.records, a.long, &filter, &fx),
        ),
        Some(AcctSelection::Figures(l)) => (l.warnings, report_figures(&l.records, &filter, &fx)),
        None => match super::read_finish_records(&files) {
            Ok(l) => (l.warnings, report(&l.records, a.long, &filter, &fx)),
            Err(e) => {
                eprintln!("bacct: {e}");
                return basalt_cli::fail();
            }
        },
    };
    for w in &warnings {
        eprintln!("{w}");
    }
    match text {
        Some(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("{NO_MATCH}");
            basalt_cli::fail()
        }
    }
}

#[cfg(test)]
mod tests;
