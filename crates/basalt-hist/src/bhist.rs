//! `bhist`: the history of jobs, read from `lsb.events` (cli-output.md §8).
//!
//! * default: `Summary of time in seconds spent in various states:` and one row per job
//!   (`%-7.7s %-7.7s %-9.9s %-8.0f…%-10.0f`, the job name cut to 8 with `*`; `-w`
//!   whole);
//! * `-l` (and `-b`, without the submission details): per job a header, one line per
//!   history record, and `Summary of time in seconds spent in various states by  <time>`;
//!   jobs separated by 78 dashes.
//!
//! Jobs: the caller's unfinished ones by default; `-a` all, `-d` finished, `-e` exited,
//! `-p` pending, `-r` running, `-s` suspended; `-u user|all`, `-q`, `-m`, `-J`, `-P`;
//! job ids select those jobs whatever their owner and state. Files: `lsb.events` by
//! default, every `lsb.events.N` too when job ids are given, `-n N` the newest N
//! (0 = all), `-f file` one file.

use super::history::{self, JobHistory, StateTimes, base_state};
use super::{EventSource, Fx, Header, IdSel, NO_MATCH, Want, dashes, dispatch_text, event_line};
use basalt_cli::batch::opts::{Item, Spec};
use basalt_cli::batch::text::{star_cut, wildcard_match};
use basalt_core::job::{exit_reason, pend_reason_text, status, susp, susp_reason_text};
use basalt_eventlog::Record;
use std::fmt::Write as _;
use std::process::ExitCode;

/// bhist's usage text.
pub const USAGE: &str = "Usage: bhist [-h] [-V] [-l | -b | -w] [-a] [-d] [-e] [-p] [-r] [-s]
             [-f logfile_name | -n num_logfiles]
             [-q queue_name] [-m host_name] [-J job_name] [-P project_name]
             [-u user_name | -u all] [job_ID | \"job_ID[index]\" ...]
";

const SPEC: Spec = Spec {
    flags: &["h", "V", "a", "d", "e", "p", "r", "s", "l", "b", "w"],
    valued: &["u", "q", "m", "J", "P", "n", "f"],
};

/// The header of the default table.
pub const TABLE_HEADER: &str =
    "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL";

// ------------------------------------------------------------------ the table

/// `%-W.Ws`: cut to `w` characters, padded to `w`.
fn cut(s: &str, w: usize) -> String {
    let t: String = s.chars().take(w).collect();
    format!("{t:<w$}")
}

fn numbers(t: &StateTimes, w: usize, last: usize) -> String {
    format!(
        "{:<w$}{:<w$}{:<w$}{:<w$}{:<w$}{:<w$}{:<last$}",
        t.pend,
        t.psusp,
        t.run,
        t.ususp,
        t.ssusp,
        t.unkwn,
        t.total()
    )
}

/// The job id, user and name a job shows.
fn identity(j: &JobHistory) -> (String, String, String) {
    (
        super::job_id_text(j.job_id, j.idx),
        j.sub.user_name.clone(),
        super::shown_name(&j.sub.job_name, &j.sub.command, j.idx),
    )
}

/// One row of the default (`wide = false`) or `-w` table, with its newline.
pub fn row(j: &JobHistory, wide: bool, fx: &Fx) -> String {
    let (id, user, name) = identity(j);
    let (t, _) = j.state_times(fx.now);
    if wide {
        format!("{id:<7} {user:<7} {name:<9} {}\n", numbers(&t, 8, 10))
    } else {
        format!(
            "{} {} {} {}\n",
            cut(&id, 7),
            cut(&user, 7),
            cut(&star_cut(&name, 8), 9),
            numbers(&t, 8, 10)
        )
    }
}

/// The default (or `-w`) report: the summary table and a closing blank line.
pub fn table(jobs: &[JobHistory], wide: bool, fx: &Fx) -> String {
    let mut out = String::from("Summary of time in seconds spent in various states:\n");
    out.push_str(TABLE_HEADER);
    out.push('\n');
    for j in jobs {
        out.push_str(&row(j, wide, fx));
    }
    out.push('\n');
    out
}

// ------------------------------------------------------------------ the long format

fn with_semicolon(mut s: String) -> String {
    if !s.ends_with(';') {
        s.push(';');
    }
    s
}

/// The text of a `JOB_STATUS` record (without the time).
fn status_text(s: &basalt_eventlog::JobStatus, started: bool) -> String {
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
/// are not shown (the submission, which has its own line).
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
        _ => return None,
    })
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
    out.push_str(&super::submit_line_bhist(
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
        if let Some(text) = record_text(rec, j, started, fx.short_hosts) {
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

// ------------------------------------------------------------------ selection

/// Parsed bhist arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub all: bool,
    pub done: bool,
    pub exited: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
    pub long: bool,
    pub brief: bool,
    pub wide: bool,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub num_files: Option<String>,
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
                ("a", _) => a.all = true,
                ("d", _) => a.done = true,
                ("e", _) => a.exited = true,
                ("p", _) => a.pend = true,
                ("r", _) => a.run = true,
                ("s", _) => a.susp = true,
                ("l", _) => a.long = true,
                ("b", _) => a.brief = true,
                ("w", _) => a.wide = true,
                ("u", v) => a.user = v,
                ("q", v) => a.queue = v,
                ("m", v) => a.host = v,
                ("J", v) => a.job_name = v,
                ("P", v) => a.project = v,
                ("n", v) => a.num_files = v,
                ("f", v) => a.file = v,
                _ => {}
            },
        }
    }
    a
}

/// Which jobs to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `None`: every user.
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub ids: Vec<IdSel>,
    pub all: bool,
    pub done: bool,
    pub exited: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
}

impl Filter {
    /// The filter of `a` for the user `caller`. Job ids select every user and state, and
    /// override the queue and host filters (as LSF's bhist does).
    pub fn new(a: &Args, ids: Vec<IdSel>, caller: &str) -> Filter {
        let by_id = !ids.is_empty();
        let user = match a.user.as_deref() {
            _ if by_id => None,
            Some("all") => None,
            Some(u) => Some(u.to_owned()),
            None => Some(caller.to_owned()),
        };
        Filter {
            user,
            queue: if by_id { None } else { a.queue.clone() },
            host: if by_id { None } else { a.host.clone() },
            job_name: a.job_name.clone(),
            project: a.project.clone(),
            ids,
            all: a.all || by_id,
            done: a.done,
            exited: a.exited,
            pend: a.pend,
            run: a.run,
            susp: a.susp,
        }
    }

    fn state_ok(&self, j: &JobHistory) -> bool {
        if self.all {
            return true;
        }
        let st = base_state(j.state().0);
        if !(self.done || self.exited || self.pend || self.run || self.susp) {
            return st & (status::DONE | status::EXIT) == 0;
        }
        (self.done && st & (status::DONE | status::EXIT) != 0)
            || (self.exited && st & status::EXIT != 0)
            || (self.pend && st & (status::PEND | status::PSUSP) != 0)
            || (self.run && st & status::RUN != 0 && st & status::WAIT == 0)
            || (self.susp && st & (status::SSUSP | status::USUSP) != 0)
    }

    /// Is `j` selected?
    pub fn matches(&self, j: &JobHistory) -> bool {
        if !self.ids.is_empty() && !self.ids.iter().any(|s| s.matches(j.job_id, j.idx)) {
            return false;
        }
        if self.user.as_ref().is_some_and(|u| *u != j.sub.user_name) {
            return false;
        }
        if self
            .project
            .as_ref()
            .is_some_and(|p| *p != j.sub.project_name)
        {
            return false;
        }
        if self.queue.as_ref().is_some_and(|q| *q != j.queue) {
            return false;
        }
        if self
            .host
            .as_ref()
            .is_some_and(|h| !j.exec_hosts.iter().any(|e| e == h))
        {
            return false;
        }
        if let Some(pat) = &self.job_name {
            let name = super::shown_name(&j.sub.job_name, &j.sub.command, j.idx);
            if !wildcard_match(pat, &name) && !wildcard_match(pat, &j.sub.job_name) {
                return false;
            }
        }
        self.state_ok(j)
    }
}

/// The records `filter` needs: those of its job ids, else those of its user's jobs, else
/// all.
pub fn want_of(filter: &Filter) -> Want {
    if !filter.ids.is_empty() {
        Want::Jobs(filter.ids.iter().map(|s| s.job_id).collect())
    } else if let Some(u) = &filter.user {
        Want::User(u.clone())
    } else {
        Want::All
    }
}

/// Which files to read for `a`.
pub fn source(a: &Args, by_id: bool) -> Result<EventSource, String> {
    if let Some(f) = &a.file {
        if a.num_files.is_some() {
            return Err("Cannot use option '-f' together with '-n'.".into());
        }
        return Ok(EventSource::File(f.into()));
    }
    match &a.num_files {
        Some(n) => n
            .trim()
            .parse::<usize>()
            .map(EventSource::Newest)
            .map_err(|_| "The number of event log files must be a positive integer.".into()),
        None if by_id => Ok(EventSource::Newest(0)),
        None => Ok(EventSource::Current),
    }
}

/// The whole report for the selected jobs (`None` when nothing matched).
pub fn report(histories: Vec<JobHistory>, a: &Args, filter: &Filter, fx: &Fx) -> Option<String> {
    let jobs: Vec<JobHistory> = histories
        .into_iter()
        .filter(|j| filter.matches(j))
        .collect();
    if jobs.is_empty() {
        return None;
    }
    Some(if a.long || a.brief {
        long(&jobs, a.long, fx)
    } else {
        table(&jobs, a.wide, fx)
    })
}

/// `bhist`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match basalt_cli::batch::parse_args("bhist", &args, &SPEC, USAGE) {
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
    let src = match source(&a, !ids.is_empty()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bhist: {e}");
            return basalt_cli::fail();
        }
    };
    let (logdir, short_hosts) = match super::logdir("bhist") {
        Ok(l) => l,
        Err(code) => return code,
    };
    let filter = Filter::new(&a, ids, &super::caller_name());
    let want = want_of(&filter);
    let loaded = match super::read_history(&logdir, &src, &want) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bhist: {e}");
            return basalt_cli::fail();
        }
    };
    for w in &loaded.warnings {
        eprintln!("{w}");
    }
    let fx = Fx {
        tm: basalt_cli::batch::timefmt::local,
        now: basalt_cli::batch::timefmt::now(),
        short_hosts,
    };
    match report(history::build(loaded.records), &a, &filter, &fx) {
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
    use basalt_eventlog::parse_line;

    const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

    fn fx(now: i64) -> Fx {
        Fx {
            tm: timefmt::utc,
            now,
            short_hosts: true,
        }
    }

    fn rec(line: &str) -> Record {
        match parse_line(line) {
            Ok(Some(r)) => r,
            other => panic!("cannot parse {line}: {other:?}"),
        }
    }

    /// event-log.md §5 (OpenLava 4.0dev4), job 101 and 102, plus a finish for 101.
    fn sample() -> Vec<Record> {
        [
            "\"LOAD_INDEX\" \"40\" 1795339510 11 \"r15s\" \"r1m\" \"r15m\" \"ut\" \"pg\" \"io\" \"ls\" \"it\" \"tmp\" \"swp\" \"mem\"",
            "\"MBD_START\" \"40\" 1795339510 \"vm\" \"openlava\" 0 1",
            "\"JOB_NEW\" \"40\" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.101\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1",
            "\"JOB_NEW\" \"40\" 1795339535 102 0 33554451 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"/home/alice/run/out.%J\" \"\" \"/root\" \"1795339535.102\" 0 \"\" \"\" \"myjob\" \"env | grep -E \"\"^LSB_|^LSF_|^LS_\"\" | sort\" 0 \"\" \"default\" 1 \"linux\" \"\" 7184 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1",
            "\"JOB_START\" \"40\" 1795339540 101 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"",
            "\"JOB_START_ACCEPT\" \"40\" 1795339540 101 25592 25592 0 2097152",
            "\"JOB_EXECUTE\" \"40\" 1795339540 101 0 25592 \"/home/alice/run\" \"/root\" \"root\" 25592 0",
            "\"JOB_START\" \"40\" 1795339540 102 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"",
            "\"JOB_STATUS\" \"40\" 1795339540 102 64 0 0 0.0236 1795339540 1 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 0 0",
            "\"JOB_STATUS\" \"40\" 1795339540 102 192 0 0 0.0236 1795339540 0 0 0",
            "\"JOB_SIGNAL\" \"40\" 1795339560 101 0 1 \"STOP\" 0 \"root\"",
            "\"JOB_STATUS\" \"40\" 1795339560 101 16 65538 0 0.0000 0 0 0 0",
            "\"JOB_STATUS\" \"40\" 1795339562 101 4 65537 0 0.0000 0 0 0 0",
        ]
        .iter()
        .map(|l| rec(l))
        .collect()
    }

    fn all_args() -> Args {
        Args {
            all: true,
            ..Args::default()
        }
    }

    #[test]
    fn default_table_matches_the_reference() {
        let jobs = history::build(sample());
        let a = all_args();
        let f = Filter::new(&a, Vec::new(), "root");
        let text = report(jobs, &a, &f, &fx(T0 + 35)).unwrap_or_default();
        assert_eq!(
            text,
            "Summary of time in seconds spent in various states:\n\
             JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n\
             101     root    sleep 30  5       0       28      2       0       0       35        \n\
             102     root    myjob     5       0       0       0       0       0       5         \n\
             \n"
        );
    }

    #[test]
    fn long_names_are_cut_unless_wide() {
        let mut jobs = history::build(sample());
        jobs.truncate(1);
        jobs[0].sub.job_name = "long_name_for_test".into();
        jobs[0].sub.user_name = "administrator".into();
        let f = fx(T0 + 35);
        assert_eq!(
            row(&jobs[0], false, &f),
            "101     adminis *or_test  5       0       28      2       0       0       35        \n"
        );
        assert_eq!(
            row(&jobs[0], true, &f),
            "101     administrator long_name_for_test 5       0       28      2       0       0       35        \n"
        );
    }

    #[test]
    fn long_format_matches_the_reference() {
        let jobs = history::build(sample());
        let text = long(&jobs, true, &fx(T0 + 35));
        let expected = "
Job <101>, User <root>, Project <default>, Command <sleep 30>
Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al
                     ice/run>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Starting (Pid 25592);
Sun Nov 22 09:25:40: Running with execution home </root>, Execution CWD </home/
                     alice/run>, Execution Pid <25592>;
Sun Nov 22 09:26:00: Signal <STOP> requested by user or administrator <root>;
Sun Nov 22 09:26:00: Suspended by the user or administrator;
Sun Nov 22 09:26:02: Running;

Summary of time in seconds spent in various states by  Sun Nov 22 09:26:10
  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL
  5        0        28       2        0        0        35          
------------------------------------------------------------------------------

Job <102>, Job Name <myjob>, User <root>, Project <default>, Command <env | gre
                     p -E \"^LSB_|^LSF_|^LS_\" | sort>
Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al
                     ice/run>, Output File </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Done successfully. The CPU time used is 0.0 seconds;
Sun Nov 22 09:25:40: Post job process done successfully;

Summary of time in seconds spent in various states by  Sun Nov 22 09:25:40
  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL
  5        0        0        0        0        0        5           

";
        assert_eq!(text, expected);
        // snakemake greps `Project <...>` out of `bhist -l -a`.
        assert!(text.contains("Project <default>"));
    }

    #[test]
    fn brief_format_leaves_out_the_details() {
        let jobs = history::build(sample());
        let text = long(&jobs[1..], false, &fx(T0 + 35));
        assert!(text.contains(
            "Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al\n                     ice/run>;\n"
        ));
        assert!(!text.contains("Output File"));
    }

    #[test]
    fn event_texts_for_every_record_kind() {
        let jobs = history::build(sample());
        let j = &jobs[0];
        let text = |line: &str, started: bool| {
            record_text(&rec(line), j, started, true).unwrap_or_default()
        };
        assert_eq!(
            text(
                "\"JOB_SWITCH\" \"22\" 1795342025 0 101 \"lowq\" 0 \"root\"",
                false
            ),
            "Switched to Queue <lowq> by user or administrator <root>;"
        );
        assert_eq!(
            text("\"JOB_MOVE\" \"22\" 1795342025 0 101 1 1 0 \"root\"", false),
            "Job moved to position 1 relative to <top> of the queue by user or administrator <root>;"
        );
        assert_eq!(
            text(
                "\"JOB_MOVE\" \"22\" 1795342025 0 101 2 2 0 \"alice\"",
                false
            ),
            "Job moved to position 2 relative to <bottom> of the queue by user or administrator <alice>;"
        );
        assert_eq!(
            text(
                "\"JOB_FORCE\" \"22\" 1795342025 101 0 0 1 1  \"vm\" \"root\"",
                false
            ),
            "Job is forced to run by user or administrator <root>;"
        );
        assert_eq!(
            text(
                "\"JOB_SIGNAL\" \"40\" 1795339586 101 0 1 \"KILL\" 0 \"root\"",
                true
            ),
            "Signal <KILL> requested by user or administrator <root>;"
        );
        assert_eq!(
            text(
                "\"JOB_SIGNAL\" \"40\" 1795339586 101 0 0 \"DELETEJOB\" 0 \"bob\"",
                true
            ),
            "Delete requested by user or administrator <bob>;"
        );
        assert_eq!(
            text("\"JOB_REQUEUE\" \"22\" 1795342036 101 0", true),
            "Pending: Job has been requeued;"
        );
        // Exits: code, signal, no CPU time before a start.
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795339586 101 32 0 0 0.1000 1795339586 0 768 0",
                true
            ),
            "Exited with exit code 3. The CPU time used is 0.1 seconds;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795339586 105 32 0 0 0.0211 1795339586 1 0.005440 0.015618 4392 0 -1 0 0 782 0 0 0 32 -1 0 0 0 18 6 -1 9 0",
                true
            ),
            "Exited by signal 9. The CPU time used is 0.0 seconds;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795339586 101 32 0 0 0.0000 1795339586 0 0 0",
                false
            ),
            "Exited;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 8 64 0 0.0000 0 0 0 0",
                true
            ),
            "Suspended: Host load exceeded threshold:  15-second CPU run queue length (r15s);"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 8 65537 0 0.0000 0 0 0 0",
                true
            ),
            "Suspended: Waiting for re-scheduling after being resumed by user;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 1 1601 0 0.0000 0 0 0 0",
                true
            ),
            "Pending: Unable to reach slave batch server;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 2 2 0 0.0000 0 0 0 0",
                false
            ),
            "Suspended by the user or administrator while pending;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 65536 0 0 0.0000 0 0 0 0",
                true
            ),
            "Unknown; unable to reach the execution host;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"40\" 1795340840 101 32 2 0 0.0000 0 0 0 0",
                true
            ),
            "Execution host unavailable; job is killed;"
        );
        assert_eq!(
            text(
                "\"JOB_STATUS\" \"22\" 1795340840 101 320 0 0 0.0000 0 0 0 0",
                true
            ),
            "Post job process failed;"
        );
        assert_eq!(
            text(
                "\"JOB_START\" \"40\" 1795339590 101 4 0 0 100.0 4 \"a\" \"a\" \"a\" \"b\" \"\" \"\" 0 0 \"\"",
                false
            ),
            "Dispatched to 4 Hosts/Processors <3*a> <b>;"
        );
        assert_eq!(
            text(
                "\"JOB_EXECUTE\" \"40\" 1795339540 101 500 25592 \"/tmp\" \"/home/bob\" \"bob\" 25592 0",
                true
            ),
            "Running with execution home </home/bob>, Execution CWD </tmp>, Execution Pid <25592>, Execution user name <bob>;"
        );
        assert!(
            record_text(&rec("\"JOB_CLEAN\" \"40\" 1795341358 101 0"), j, true, true).is_none()
        );
    }

    #[test]
    fn selection() {
        let jobs = history::build(sample());
        let pick = |a: &Args, ids: Vec<IdSel>, caller: &str| -> Vec<u64> {
            let f = Filter::new(a, ids, caller);
            jobs.iter()
                .filter(|j| f.matches(j))
                .map(|j| j.job_id)
                .collect()
        };
        // Default: the caller's unfinished jobs.
        assert_eq!(pick(&Args::default(), Vec::new(), "root"), vec![101]);
        assert!(pick(&Args::default(), Vec::new(), "alice").is_empty());
        let a = |f: fn(&mut Args)| {
            let mut a = Args::default();
            f(&mut a);
            a
        };
        assert_eq!(
            pick(&a(|a| a.all = true), Vec::new(), "root"),
            vec![101, 102]
        );
        assert_eq!(pick(&a(|a| a.done = true), Vec::new(), "root"), vec![102]);
        assert!(pick(&a(|a| a.exited = true), Vec::new(), "root").is_empty());
        assert_eq!(pick(&a(|a| a.run = true), Vec::new(), "root"), vec![101]);
        assert!(pick(&a(|a| a.pend = true), Vec::new(), "root").is_empty());
        assert!(pick(&a(|a| a.susp = true), Vec::new(), "root").is_empty());
        assert_eq!(
            pick(
                &a(|a| {
                    a.all = true;
                    a.user = Some("all".into())
                }),
                Vec::new(),
                "alice"
            ),
            vec![101, 102]
        );
        // Job ids: any user, any state.
        let ids = super::super::parse_ids(&["102".into()]).unwrap_or_default();
        assert_eq!(pick(&Args::default(), ids, "alice"), vec![102]);
        assert_eq!(
            pick(
                &a(|a| {
                    a.all = true;
                    a.job_name = Some("my*".into())
                }),
                Vec::new(),
                "root"
            ),
            vec![102]
        );
        assert!(
            pick(
                &a(|a| {
                    a.all = true;
                    a.queue = Some("other".into())
                }),
                Vec::new(),
                "root"
            )
            .is_empty()
        );
        assert_eq!(
            pick(
                &a(|a| {
                    a.all = true;
                    a.host = Some("vm".into())
                }),
                Vec::new(),
                "root"
            ),
            vec![101, 102]
        );
    }

    #[test]
    fn file_sources() {
        let a = Args::default();
        assert_eq!(source(&a, false), Ok(EventSource::Current));
        assert_eq!(source(&a, true), Ok(EventSource::Newest(0)));
        let n = Args {
            num_files: Some("2".into()),
            ..Args::default()
        };
        assert_eq!(source(&n, true), Ok(EventSource::Newest(2)));
        let bad = Args {
            num_files: Some("x".into()),
            ..Args::default()
        };
        assert!(source(&bad, false).is_err());
        let f = Args {
            file: Some("/tmp/lsb.events.3".into()),
            ..Args::default()
        };
        assert_eq!(
            source(&f, false),
            Ok(EventSource::File("/tmp/lsb.events.3".into()))
        );
    }

    #[test]
    fn arguments() {
        let items = basalt_cli::batch::opts::parse(
            &[
                "-la".into(),
                "-u".into(),
                "all".into(),
                "-n0".into(),
                "101".into(),
            ],
            &SPEC,
            false,
        )
        .unwrap_or_default();
        let a = args_from(items);
        assert!(a.long && a.all);
        assert_eq!(a.user.as_deref(), Some("all"));
        assert_eq!(a.num_files.as_deref(), Some("0"));
        assert_eq!(a.ids, vec!["101".to_string()]);
    }
}
