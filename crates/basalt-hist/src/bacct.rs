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
mod tests {
    use super::*;
    use basalt_cli::batch::timefmt;
    use basalt_eventlog::{Record, parse_line};

    fn fx() -> Fx {
        Fx {
            tm: timefmt::utc,
            now: 1_795_400_000,
            short_hosts: true,
        }
    }

    /// event-log.md §5: the OpenLava 4 lsb.acct record of job 102.
    const FINISH_102: &str = "\"JOB_FINISH\" \"40\" 1795339540 102 0 33554451 1 1795339535 0 0 1795339540 \"root\" \"normal\" \"\" \"\" \"\" \"vm\" \"/home/alice/run\" \"\" \"/home/alice/run/out.%J\" \"\" \"1795339535.102\" 0 1 \"vm\" 64 100.0 \"myjob\" \"env | grep -E \"\"^LSB_|^LSF_|^LS_\"\" | sort\" 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 \"\" \"default\" 0 1 \"\" 0 3976 11224 \"\" \"\"";

    fn finish(line: &str) -> JobFinish {
        match parse_line(line) {
            Ok(Some(Record::JobFinish(f))) => *f,
            other => panic!("cannot parse {line}: {other:?}"),
        }
    }

    /// Job 103: submitted at 09:25:35, started 09:25:45, exited with 3 at 09:27:15
    /// after 20 s of CPU, 200 MB of memory.
    fn exited_103() -> JobFinish {
        let mut f = finish(FINISH_102);
        f.job_id = 103;
        f.header.time = 1_795_339_635;
        f.start_time = 1_795_339_545;
        f.j_status = status::EXIT;
        f.exit_status = 3 << 8;
        f.options &= !basalt_core::job::sub::JOB_NAME;
        f.job_name = String::new();
        f.command = "sleep 100".into();
        f.out_file = String::new();
        f.rusage.utime = 15.0;
        f.rusage.stime = 5.0;
        f.max_rmem = 200 * 1024;
        f.max_rswap = 300 * 1024;
        f.user_name = "alice".into();
        f.queue = "short".into();
        f
    }

    fn all() -> Filter {
        Filter::new(
            &Args {
                user: Some("all".into()),
                ..Args::default()
            },
            Vec::new(),
            "root",
        )
    }

    #[test]
    fn accounting_figures() {
        let a = acct(&finish(FINISH_102));
        assert_eq!(a.wait, 5);
        assert_eq!(a.turnaround, 5);
        assert!(a.done);
        assert!((a.cpu - 0.023628).abs() < 1e-9);
        assert_eq!(a.mem_mb, 3);
        assert_eq!(a.swap_mb, 10);
        let b = acct(&exited_103());
        assert_eq!((b.wait, b.turnaround, b.done), (10, 100, false));
        assert!((b.hog - 0.2).abs() < 1e-12);
        // A job killed while pending waited until its end.
        let mut c = exited_103();
        c.start_time = 0;
        assert_eq!(acct(&c).wait, 100);
    }

    #[test]
    fn long_report_matches_lsf() {
        let recs = vec![finish(FINISH_102)];
        let ids = super::super::parse_ids(&["102".into()]).unwrap_or_default();
        let filter = Filter::new(&Args::default(), ids, "nobody");
        let text = report(&recs, true, &filter, &fx()).unwrap_or_default();
        let expected = "
Accounting information about jobs that are: 
  - submitted by all users.
  - accounted on all projects.
  - completed normally or exited
  - executed on all hosts.
  - submitted to all queues.
  - accounted on all service classes.
------------------------------------------------------------------------------

Job <102>, Job Name <myjob>, User <root>, Project <default>, Status <DONE>, Que
                     ue <normal>, Command <env | grep -E \"^LSB_|^LSF_|^LS_\" | s
                     ort>
Sun Nov 22 09:25:35: Submitted from host <vm>, CWD </home/alice/run>, Output Fi
                     le </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Completed <done>.

Accounting information about this job:
     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP
      0.02        5              5     done         0.0047     3M     10M
------------------------------------------------------------------------------

SUMMARY:      ( time unit: second ) 
 Total number of done jobs:       1      Total number of exited jobs:     0
 Total CPU time consumed:       0.0      Average CPU time consumed:     0.0
 Maximum CPU time of a job:     0.0      Minimum CPU time of a job:     0.0
 Total wait time in queues:     5.0
 Average wait time in queue:    5.0
 Maximum wait time in queue:    5.0      Minimum wait time in queue:    5.0
 Average turnaround time:         5 (seconds/job)
 Maximum turnaround time:         5      Minimum turnaround time:         5
 Average hog factor of a job:  0.00 ( cpu time / turnaround time )
 Maximum hog factor of a job:  0.00      Minimum hog factor of a job:  0.00

";
        assert_eq!(text, expected);
        assert!(text.contains("Completed <done>"));
    }

    #[test]
    fn summary_over_several_jobs_with_throughput() {
        let recs = vec![finish(FINISH_102), exited_103()];
        let text = report(&recs, false, &all(), &fx()).unwrap_or_default();
        let expected = "
Accounting information about jobs that are: 
  - submitted by all users.
  - accounted on all projects.
  - completed normally or exited
  - executed on all hosts.
  - submitted to all queues.
  - accounted on all service classes.
------------------------------------------------------------------------------

SUMMARY:      ( time unit: second ) 
 Total number of done jobs:       1      Total number of exited jobs:     1
 Total CPU time consumed:      20.0      Average CPU time consumed:    10.0
 Maximum CPU time of a job:    20.0      Minimum CPU time of a job:     0.0
 Total wait time in queues:    15.0
 Average wait time in queue:    7.5
 Maximum wait time in queue:   10.0      Minimum wait time in queue:    5.0
 Average turnaround time:        52 (seconds/job)
 Maximum turnaround time:       100      Minimum turnaround time:         5
 Average hog factor of a job:  0.10 ( cpu time / turnaround time )
 Maximum hog factor of a job:  0.20      Minimum hog factor of a job:  0.00
 Total throughput:            75.79 (jobs/hour)  during    0.03 hours
 Beginning time:       Nov 22 09:25      Ending time:          Nov 22 09:27

";
        assert_eq!(text, expected);
    }

    #[test]
    fn exited_job_block_and_selection_lines() {
        let recs = vec![finish(FINISH_102), exited_103()];
        let a = Args {
            user: Some("alice".into()),
            queue: Some("short".into()),
            exited: true,
            long: true,
            ..Args::default()
        };
        let filter = Filter::new(&a, Vec::new(), "root");
        let text = report(&recs, true, &filter, &fx()).unwrap_or_default();
        assert!(text.starts_with(
            "\nAccounting information about jobs that are: \n  - submitted by users alice, \n  - accounted on all projects.\n  - exited\n  - executed on all hosts.\n  - submitted to queues short, \n"
        ));
        assert!(text.contains(
            "\nJob <103>, User <alice>, Project <default>, Status <EXIT>, Queue <short>, Comma\n                     nd <sleep 100>\n"
        ));
        assert!(text.contains("Sun Nov 22 09:27:15: Completed <exit>.\n"));
        assert!(text.contains(
            "     20.00       10            100     exit         0.2000   200M    300M\n"
        ));
        assert!(!text.contains("Job <102>"));
    }

    #[test]
    fn selection() {
        let recs = vec![finish(FINISH_102), exited_103()];
        let pick = |a: &Args, ids: &[&str], caller: &str| -> Vec<u64> {
            let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            let f = Filter::new(a, super::super::parse_ids(&ids).unwrap_or_default(), caller);
            recs.iter()
                .filter(|r| f.matches(r))
                .map(|r| r.job_id)
                .collect()
        };
        let d = Args::default();
        assert_eq!(pick(&d, &[], "root"), vec![102]);
        assert_eq!(pick(&d, &[], "alice"), vec![103]);
        assert!(pick(&d, &[], "bob").is_empty());
        assert_eq!(pick(&d, &["103"], "bob"), vec![103]);
        let done = Args {
            user: Some("all".into()),
            done: true,
            ..Args::default()
        };
        assert_eq!(pick(&done, &[], "bob"), vec![102]);
        let named = Args {
            user: Some("all".into()),
            job_name: Some("sleep*".into()),
            ..Args::default()
        };
        assert_eq!(pick(&named, &[], "bob"), vec![103]);
        let host = Args {
            user: Some("all".into()),
            host: Some("other".into()),
            ..Args::default()
        };
        assert!(pick(&host, &[], "bob").is_empty());
        assert!(report(&recs, false, &Filter::new(&d, Vec::new(), "bob"), &fx()).is_none());
    }

    #[test]
    fn arguments() {
        let items = basalt_cli::batch::opts::parse(
            &["-l".into(), "-uall".into(), "7".into(), "8[2]".into()],
            &SPEC,
            false,
        )
        .unwrap_or_default();
        let a = args_from(items);
        assert!(a.long);
        assert_eq!(a.user.as_deref(), Some("all"));
        assert_eq!(a.ids, vec!["7".to_string(), "8[2]".to_string()]);
    }
}
