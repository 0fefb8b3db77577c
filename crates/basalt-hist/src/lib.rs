//! `bhist` and `bacct`: job history and accounting read straight from the event log
//! files, as LSF's commands do (cli-output.md §8, cli-contract.md rows 29/30).
//!
//! * [`history`] turns `lsb.events` records into one [`history::JobHistory`] per job (or
//!   array element) and computes the time spent in each state.
//! * [`bhist`] formats histories: the default summary table, `-l`/`-b` long formats.
//! * [`bacct`] formats `lsb.acct` `JOB_FINISH` records: the summary and `-l`.
//! * [`store`] is the history index (SQLite: job id, user, queue, finish time → file
//!   and byte offset), [`fast`] reads through it, giving the same records and warnings
//!   as reading the files line by line.
//! * [`bevents`] is the operator's tool: verify, dump and replay the event log.
//!
//! This crate (the commands' library; the binaries are `src/bin/{bhist,bacct,bevents}.rs`)
//! holds what they share: which files and which parts of them are read
//! ([`plan`], [`Part`]), how (line by line: [`read_plan`], [`read_event_records`],
//! [`read_finish_records`]; or through the indexes: [`read_history`], which also uses
//! `lsb.events.index` to leave out old files that hold none of the jobs asked for), and
//! the text pieces of the long formats (job header, submission line, dispatch line)
//! built on the same wrapping and time formats as `bjobs -l` ([`basalt_cli::batch::text`],
//! [`basalt_cli::batch::timefmt`]). The output never depends on whether an index was used.
//!
//! Inputs: `LSF_ENVDIR` (to find `LSB_SHAREDIR/<cluster>/logdir`), argv, the log files,
//! `BASALT_HIST_INDEX` ([`store`]). Outputs: stdout (the report), stderr (`No matching
//! job found`, unreadable lines), LSF's exit codes (0, or 255 when nothing matched); the
//! history index database (a cache).

pub mod bacct;
pub mod bevents;
pub mod bhist;
pub mod fast;
pub mod history;
pub mod store;

use basalt_cli::batch::bjobs::display_command;
use basalt_cli::batch::text::{host_words, wrap};
use basalt_cli::batch::timefmt::{self, ToTm};
use basalt_core::job::{sub, sub2};
use basalt_eventlog::{EventLogError, JobFinish, JobNew, Record};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, BufRead as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What both commands print when no job matched (on stderr, exit 255).
pub const NO_MATCH: &str = "No matching job found";

/// A line of 78 dashes: the separator between jobs.
pub fn dashes() -> String {
    "-".repeat(78)
}

/// How times and host lists are shown.
#[derive(Debug, Clone, Copy)]
pub struct Fx {
    /// Seconds -> broken-down time (local for the commands, UTC in tests).
    pub tm: ToTm,
    /// Now: unfinished jobs are accounted up to this time.
    pub now: i64,
    /// Group repeated hosts as `N*host` (`LSB_SHORT_HOSTLIST`, on unless set to N).
    pub short_hosts: bool,
}

impl Fx {
    /// `Sun Nov 22 09:25:35`.
    pub fn event_time(&self, t: i64) -> String {
        timefmt::event(&(self.tm)(t))
    }

    /// `Nov 22 09:25`.
    pub fn table_time(&self, t: i64) -> String {
        timefmt::table(&(self.tm)(t))
    }
}

// ------------------------------------------------------------------ reading the files

/// Which event files `bhist` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSource {
    /// `lsb.events` only, including the records a log switch carried over (LSF's default:
    /// every live job's history is in the current file).
    Current,
    /// The newest `n` files (`lsb.events`, `lsb.events.1`, ...); 0 = all of them.
    Newest(usize),
    /// One named file (`-f`).
    File(PathBuf),
}

/// Records read from the log files, and the problems met on the way (one line each,
/// for stderr; reading goes on past them as LSF's readers do).
#[derive(Debug)]
pub struct Loaded<T> {
    pub records: Vec<T>,
    pub warnings: Vec<String>,
}

impl<T> Default for Loaded<T> {
    fn default() -> Self {
        Loaded {
            records: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Which part of an event file a read covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every line.
    All,
    /// The records a log switch carried into the head of `lsb.events`: the complete lines
    /// that start between the header line and the byte offset the header names.
    Carried,
    /// The records new to `lsb.events`: the lines from the header's offset on (from the
    /// line after the header when the offset is not on a line boundary; every line when
    /// there is no header).
    New,
}

/// The reads `bhist` makes for one [`EventSource`], in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub reads: Vec<(PathBuf, Part)>,
    /// The records of the [`Part::Carried`] read are merged in front of the others with
    /// [`merge_carried`].
    pub merge: bool,
}

/// Which jobs' records a reader must return (records of other jobs may be left out:
/// a job's history depends only on its own records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// Every record.
    All,
    /// The records of these job ids.
    Jobs(BTreeSet<u64>),
    /// The records of the jobs that a `JOB_NEW` or `JOB_MODIFY` gives this user.
    User(String),
}

/// The reads for `source`: the older files oldest first, then the current `lsb.events`
/// (its carried-over head separately, to be merged in front).
pub fn plan(logdir: &Path, source: &EventSource) -> Result<Plan, EventLogError> {
    let current = logdir.join(basalt_eventlog::EVENTS_FILE);
    let files: Vec<PathBuf> = match source {
        EventSource::File(p) => {
            return Ok(Plan {
                reads: vec![(p.clone(), Part::All)],
                merge: false,
            });
        }
        EventSource::Current => {
            return Ok(Plan {
                reads: vec![(current.clone(), Part::Carried), (current, Part::New)],
                merge: true,
            });
        }
        EventSource::Newest(n) => {
            let mut all = basalt_eventlog::event_files(logdir)?;
            if *n > 0 {
                all.truncate(*n);
            }
            all
        }
    };
    let with_current = files.contains(&current);
    let mut reads: Vec<(PathBuf, Part)> = files
        .iter()
        .filter(|p| **p != current)
        .rev()
        .map(|p| (p.clone(), Part::All))
        .collect();
    if reads.is_empty() && !with_current {
        return Ok(Plan {
            reads,
            merge: false,
        });
    }
    if with_current {
        reads.push((current.clone(), Part::Carried));
        reads.push((current, Part::New));
    }
    Ok(Plan { reads, merge: true })
}

/// Leave out the old files (`lsb.events.N`, N ≥ 1) that `lsb.events.index` says hold
/// none of `ids`. Nothing is left out when the index is missing or stale.
pub fn narrow_by_index(plan: &mut Plan, logdir: &Path, ids: &BTreeSet<u64>) {
    let ids: Vec<u64> = ids.iter().copied().collect();
    let Ok(Some(keep)) = basalt_eventlog::index::lookup(logdir, &ids) else {
        return;
    };
    let Ok(old) = basalt_eventlog::index::old_event_files(logdir) else {
        return;
    };
    plan.reads
        .retain(|(p, _)| !old.iter().any(|(_, o)| o == p) || keep.contains(p));
}

pub(crate) fn describe(e: &EventLogError) -> String {
    match e {
        EventLogError::Damaged {
            path,
            line,
            message,
            ..
        } => format!("File {} at line {line}: {message}", path.display()),
        other => other.to_string(),
    }
}

fn is_not_found(e: &EventLogError) -> bool {
    matches!(e, EventLogError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
}

/// The warning for an incomplete last line.
pub(crate) fn torn_warning(path: &Path, tail: &str) -> String {
    format!(
        "File {}: incomplete last line ignored: {tail}",
        path.display()
    )
}

/// Does `keep` (None: everything) want this record?
fn kept(r: &Record, keep: Option<&BTreeSet<u64>>) -> bool {
    keep.is_none_or(|k| r.job_id().is_some_and(|id| k.contains(&id)))
}

/// Every readable record of one file; a missing file reads as empty.
fn read_file(
    path: &Path,
    skip_carried: bool,
    keep: Option<&BTreeSet<u64>>,
    out: &mut Vec<Record>,
    warnings: &mut Vec<String>,
) -> Result<(), EventLogError> {
    let reader = match basalt_eventlog::read_events(path) {
        Ok(r) => r,
        Err(e) if is_not_found(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut reader = if skip_carried {
        reader.skip_carried_over()?
    } else {
        reader
    };
    for item in reader.by_ref() {
        match item {
            Ok(r) => {
                if kept(&r, keep) {
                    out.push(r);
                }
            }
            Err(e @ EventLogError::Damaged { .. }) => warnings.push(describe(&e)),
            Err(e) => return Err(e),
        }
    }
    if let Some(tail) = reader.torn_tail() {
        warnings.push(torn_warning(path, tail));
    }
    Ok(())
}

/// The records a log switch carried into the head of `lsb.events`: the complete lines
/// between the header and the byte offset the header names.
fn read_carried(
    path: &Path,
    keep: Option<&BTreeSet<u64>>,
    out: &mut Vec<Record>,
    warnings: &mut Vec<String>,
) -> Result<(), EventLogError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(EventLogError::Io {
                path: path.to_owned(),
                op: "open",
                source: e,
            });
        }
    };
    let mut reader = io::BufReader::new(file);
    let mut line = Vec::new();
    let read_err = |e| EventLogError::Io {
        path: path.to_owned(),
        op: "read",
        source: e,
    };
    let mut pos = reader.read_until(b'\n', &mut line).map_err(read_err)? as u64;
    let Some(offset) = basalt_eventlog::parse_header(&String::from_utf8_lossy(&line)) else {
        return Ok(());
    };
    let mut number = 1;
    while pos < offset {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(read_err)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        pos += n as u64;
        number += 1;
        match basalt_eventlog::parse_line(&String::from_utf8_lossy(&line)) {
            Ok(Some(Record::Unknown { .. })) | Ok(None) => {}
            Ok(Some(r)) => {
                if kept(&r, keep) {
                    out.push(r);
                }
            }
            Err(e) => warnings.push(format!("File {} at line {number}: {e}", path.display())),
        }
    }
    Ok(())
}

/// Put the records of jobs that a log switch carried into `lsb.events` in front of the
/// records read from older files, unless those files already hold the job's `JOB_NEW`
/// (then the carried copies are duplicates). For a job whose older records were only
/// partly read, only the carried records older than the first one read are kept.
///
/// Records a switch carried only so that mbatchd remembers a cleaned job for the
/// dependencies that name it (the job's carried records include its JOB_CLEAN) are not
/// history and are left out: `bhist -a` does not list such jobs with made-up times.
pub fn merge_carried(carried: Vec<Record>, main: Vec<Record>) -> Vec<Record> {
    let cleaned: HashSet<(u64, u32)> = carried
        .iter()
        .filter(|r| matches!(r, Record::JobClean(_)))
        .filter_map(|r| Some((r.job_id()?, r.idx().unwrap_or(0))))
        .collect();
    let carried: Vec<Record> = carried
        .into_iter()
        .filter(|r| match r.job_id() {
            // A JOB_NEW stands for the whole job (index 0): left out only when the job
            // itself (not one element of an array) was cleaned.
            Some(id) if matches!(r, Record::JobNew(_)) => !cleaned.contains(&(id, 0)),
            Some(id) => !cleaned.contains(&(id, r.idx().unwrap_or(0))),
            None => true,
        })
        .collect();
    let mut has_new: HashSet<u64> = HashSet::new();
    let mut first_time: HashMap<u64, i64> = HashMap::new();
    for r in &main {
        let Some(id) = r.job_id() else { continue };
        if matches!(r, Record::JobNew(_)) {
            has_new.insert(id);
        }
        first_time.entry(id).or_insert_with(|| r.time());
    }
    let mut out: Vec<Record> = carried
        .into_iter()
        .filter(|r| match r.job_id() {
            None => false,
            Some(id) if has_new.contains(&id) => false,
            Some(id) => first_time.get(&id).is_none_or(|t| r.time() < *t),
        })
        .collect();
    out.extend(main);
    out
}

/// Carry out `plan` by reading the files line by line, keeping the records of the jobs in
/// `keep` (every record when `None`).
pub fn read_plan(
    plan: &Plan,
    keep: Option<&BTreeSet<u64>>,
) -> Result<Loaded<Record>, EventLogError> {
    let mut warnings = Vec::new();
    let mut main = Vec::new();
    let mut carried = Vec::new();
    for (path, part) in &plan.reads {
        match part {
            Part::All => read_file(path, false, keep, &mut main, &mut warnings)?,
            Part::New => read_file(path, true, keep, &mut main, &mut warnings)?,
            Part::Carried => read_carried(path, keep, &mut carried, &mut warnings)?,
        }
    }
    let records = if plan.merge {
        merge_carried(carried, main)
    } else {
        main
    };
    Ok(Loaded { records, warnings })
}

/// Read the event records `bhist` needs from `logdir`, oldest first (every record of the
/// files, without an index).
pub fn read_event_records(
    logdir: &Path,
    source: &EventSource,
) -> Result<Loaded<Record>, EventLogError> {
    read_plan(&plan(logdir, source)?, None)
}

/// Read the event records of the jobs `want` names, as [`read_event_records`] would
/// return them for those jobs: through the history index ([`store`]) when it can be
/// used, else by reading the files (only the old files `lsb.events.index` names for
/// job ids).
pub fn read_history(
    logdir: &Path,
    source: &EventSource,
    want: &Want,
) -> Result<Loaded<Record>, EventLogError> {
    let mut plan = plan(logdir, source)?;
    let by_file = matches!(source, EventSource::File(_));
    if let Want::Jobs(ids) = want
        && !by_file
    {
        narrow_by_index(&mut plan, logdir, ids);
    }
    if !by_file
        && *want != Want::All
        && let Some(loaded) = fast::events(logdir, &plan, want)
    {
        return Ok(loaded);
    }
    match want {
        Want::Jobs(ids) => read_plan(&plan, Some(ids)),
        _ => read_plan(&plan, None),
    }
}

/// Read `JOB_FINISH` records from accounting files, in file order (oldest file first).
pub fn read_finish_records(files: &[PathBuf]) -> Result<Loaded<JobFinish>, EventLogError> {
    let mut out = Loaded::default();
    for path in files.iter().rev() {
        let reader = match basalt_eventlog::read_acct(path) {
            Ok(r) => r,
            Err(e) if is_not_found(&e) => continue,
            Err(e) => return Err(e),
        };
        let mut reader = reader;
        for item in reader.by_ref() {
            match item {
                Ok(f) => out.records.push(f),
                Err(e @ EventLogError::Damaged { .. }) => out.warnings.push(describe(&e)),
                Err(e) => return Err(e),
            }
        }
        if let Some(tail) = reader.torn_tail() {
            out.warnings.push(torn_warning(path, tail));
        }
    }
    Ok(out)
}

/// The configuration's log directory, or LSF's complaint on stderr.
pub fn logdir(cmd: &str) -> Result<(PathBuf, bool), ExitCode> {
    let config = basalt_cli::load_config(cmd)?;
    let short_hosts = !matches!(
        config
            .lsf_conf
            .get("LSB_SHORT_HOSTLIST")
            .map(|v| v.trim().to_ascii_uppercase())
            .as_deref(),
        Some("0" | "N" | "NO")
    );
    Ok((config.logdir(), short_hosts))
}

/// The name of the user running the command.
pub fn caller_name() -> String {
    basalt_cli::batch::user_name(nix::unistd::getuid().as_raw())
}

// ------------------------------------------------------------------ job id selection

/// A job id argument: `123` (the job, or every element of array 123) or `123[4]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSel {
    pub job_id: u64,
    pub idx: Option<u32>,
}

impl IdSel {
    /// Does the job or element `(job_id, idx)` match?
    pub fn matches(&self, job_id: u64, idx: u32) -> bool {
        self.job_id == job_id && self.idx.is_none_or(|i| i == idx)
    }
}

/// Parse job id arguments (`123`, `123[4]`, `123[1-3,7]`); the first bad one is returned.
pub fn parse_ids(args: &[String]) -> Result<Vec<IdSel>, String> {
    let refs = basalt_cli::batch::parse_job_ids(args)?;
    Ok(refs
        .into_iter()
        .map(|r| IdSel {
            job_id: r.job_id,
            idx: r.has_idx.then_some(r.idx),
        })
        .collect())
}

// ------------------------------------------------------------------ text pieces

/// `123` or `123[4]`.
pub fn job_id_text(job_id: u64, idx: u32) -> String {
    if idx > 0 {
        format!("{job_id}[{idx}]")
    } else {
        job_id.to_string()
    }
}

/// The name an array element shows: `arr[1-3]` -> `arr[2]`.
pub fn element_name(name: &str, idx: u32) -> String {
    match name.find('[') {
        Some(p) if idx > 0 => format!("{}[{idx}]", &name[..p]),
        _ => name.to_owned(),
    }
}

/// The job name LSF shows: the `-J` name, else the command.
pub fn shown_name(job_name: &str, command: &str, idx: u32) -> String {
    if job_name.is_empty() {
        display_command(command)
    } else {
        element_name(job_name, idx)
    }
}

/// `CWD <...>` value: absolute as is, else under `$HOME`.
pub fn cwd_text(cwd: &str) -> String {
    if cwd.starts_with('/') {
        cwd.to_owned()
    } else if cwd.is_empty() {
        "$HOME".to_owned()
    } else {
        format!("$HOME/{cwd}")
    }
}

/// The fields of a job header line (`Job <101>, User <root>, Project <default>, ...`).
#[derive(Debug, Clone, Default)]
pub struct Header<'a> {
    pub id: String,
    /// Shown as `Job Name <...>` only when the job was named with `-J`.
    pub job_name: Option<String>,
    pub user: &'a str,
    pub project: &'a str,
    pub user_group: &'a str,
    pub mail_user: Option<&'a str>,
    /// `Status <S>, Queue <q>` (bacct; bhist leaves them out).
    pub status_queue: Option<(&'a str, &'a str)>,
    pub interactive: bool,
    pub command: String,
    pub spooled: bool,
}

impl<'a> Header<'a> {
    /// The header fields of a submission.
    pub fn of_new(n: &'a JobNew, idx: u32) -> Header<'a> {
        Header {
            id: job_id_text(n.job_id, idx),
            job_name: (n.options & sub::JOB_NAME != 0 && !n.job_name.is_empty())
                .then(|| element_name(&n.job_name, idx)),
            user: &n.user_name,
            project: &n.project_name,
            user_group: &n.user_group,
            mail_user: (n.options & sub::MAIL_USER != 0 && !n.mail_user.is_empty())
                .then_some(n.mail_user.as_str()),
            status_queue: None,
            interactive: n.options & sub::INTERACTIVE != 0,
            command: display_command(&n.command),
            spooled: n.options2 & sub2::JOB_CMD_SPOOL != 0,
        }
    }

    /// The header fields of an accounting record.
    pub fn of_finish(f: &'a JobFinish, status: &'a str) -> Header<'a> {
        Header {
            id: job_id_text(f.job_id, f.idx),
            job_name: (f.options & sub::JOB_NAME != 0 && !f.job_name.is_empty())
                .then(|| element_name(&f.job_name, f.idx)),
            user: &f.user_name,
            project: &f.project_name,
            user_group: "",
            mail_user: (f.options & sub::MAIL_USER != 0 && !f.mail_user.is_empty())
                .then_some(f.mail_user.as_str()),
            status_queue: Some((status, &f.queue)),
            interactive: f.options & sub::INTERACTIVE != 0,
            command: display_command(&f.command),
            spooled: false,
        }
    }

    /// The wrapped header line with its newline.
    pub fn render(&self) -> String {
        let mut l = format!("Job <{}>,", self.id);
        if let Some(n) = &self.job_name {
            let _ = write!(l, " Job Name <{n}>,");
        }
        let _ = write!(l, " User <{}>, Project <{}>,", self.user, self.project);
        if !self.user_group.is_empty() {
            let _ = write!(l, " User Group <{}>,", self.user_group);
        }
        if let Some(m) = self.mail_user {
            let _ = write!(l, " Mail <{m}>,");
        }
        if let Some((s, q)) = self.status_queue {
            let _ = write!(l, " Status <{s}>, Queue <{q}>,");
        }
        if self.interactive {
            l.push_str(" Interactive mode,");
        }
        let spooled = if self.spooled { "(Spooled)" } else { "" };
        let _ = write!(l, " Command{spooled} <{}>", self.command);
        let mut out = wrap(&l);
        out.push('\n');
        out
    }
}

/// `, Input File <...>, Output File <...>, Error File <...>` of a submission.
fn file_names(l: &mut String, in_file: &str, out_file: &str, err_file: &str, options2: u32) {
    if !in_file.is_empty() {
        let _ = write!(l, ", Input File <{in_file}>");
    }
    if !out_file.is_empty() {
        let ow = if options2 & sub2::OUT_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Output File{ow} <{out_file}>");
    }
    if !err_file.is_empty() {
        let ow = if options2 & sub2::ERR_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Error File{ow} <{err_file}>");
    }
}

/// The `Submitted from host` line of `bhist -l` (wrapped, with its newline), followed by
/// the run-limit table when the job has one. `details = false` is `bhist -b`.
pub fn submit_line_bhist(n: &JobNew, exec_host: Option<&str>, details: bool, fx: &Fx) -> String {
    let mut l = format!(
        "{}: Submitted from host <{}>",
        fx.event_time(n.submit_time),
        n.from_host
    );
    if n.options2 & sub2::HOLD != 0 {
        l.push_str(" on hold");
    }
    let _ = write!(l, ", to Queue <{}>", n.queue);
    if details && n.begin_time > 0 {
        let _ = write!(
            l,
            ", Specified Start Time <{}>",
            fx.event_time(n.begin_time)
        );
    }
    if details && n.term_time > 0 {
        let _ = write!(
            l,
            ", Specified Termination Time <{}>",
            fx.event_time(n.term_time)
        );
    }
    let _ = write!(l, ", CWD <{}>", cwd_text(&n.cwd));
    if details {
        if !n.specified_cwd.is_empty() {
            let _ = write!(l, ", Specified CWD <{}>", n.specified_cwd);
        }
        file_names(&mut l, &n.in_file, &n.out_file, &n.err_file, n.options2);
        if n.options & sub::EXCLUSIVE != 0 {
            l.push_str(", Exclusive Execution");
        }
        if n.options & sub::RERUNNABLE != 0 {
            l.push_str(", Re-runnable");
        }
        if n.num_processors > 1 || n.max_num_processors > 1 {
            if n.max_num_processors > n.num_processors {
                let _ = write!(
                    l,
                    ", {}-{} Processors Requested",
                    n.num_processors, n.max_num_processors
                );
            } else {
                let _ = write!(l, ", {} Processors Requested", n.num_processors);
            }
        }
        if !n.res_req.is_empty() {
            let _ = write!(l, ", Requested Resources <{}>", n.res_req);
        }
        if !n.depend_cond.is_empty() {
            let _ = write!(l, ", Dependency Condition <{}>", n.depend_cond);
        }
        if !n.login_shell.is_empty() {
            let _ = write!(l, ", Login Shell <{}>", n.login_shell);
        }
        if !n.asked_hosts.is_empty() {
            let hosts: Vec<String> = n.asked_hosts.iter().map(|h| format!("<{h}>")).collect();
            let _ = write!(l, ", Specified Hosts {}", hosts.join(", "));
        }
    }
    l.push(';');
    let mut out = wrap(&l);
    out.push('\n');
    let run_limit = n
        .rlimits
        .get(basalt_eventlog::rlimit::RUN)
        .copied()
        .unwrap_or(-1);
    if details && run_limit > 0 {
        let host = exec_host.unwrap_or(&n.from_host);
        let _ = write!(
            out,
            "\n RUNLIMIT\n {:5.1} min of {host}\n\n",
            run_limit as f64 / 60.0
        );
    }
    out
}

/// The `Submitted from host` line of `bacct -l` (host, CWD and files; wrapped, with its
/// newline).
pub fn submit_line_bacct(f: &JobFinish, fx: &Fx) -> String {
    let mut l = format!(
        "{}: Submitted from host <{}>, CWD <{}>",
        fx.event_time(f.submit_time),
        f.from_host,
        cwd_text(&f.cwd)
    );
    file_names(&mut l, &f.in_file, &f.out_file, &f.err_file, 0);
    l.push(';');
    let mut out = wrap(&l);
    out.push('\n');
    out
}

/// `Dispatched to <vm>` / `Dispatched to 4 Hosts/Processors <4*vm>` (`Started on` once the
/// pid is known), without the time and the `;`.
pub fn dispatch_text(hosts: &[String], pid: i64, short_hosts: bool) -> String {
    let verb = if pid > 0 {
        "Started on"
    } else {
        "Dispatched to"
    };
    let words: Vec<String> = host_words(hosts, short_hosts)
        .iter()
        .map(|h| format!("<{h}>"))
        .collect();
    if hosts.len() > 1 {
        format!(
            "{verb} {} Hosts/Processors {}",
            hosts.len(),
            words.join(" ")
        )
    } else {
        format!("{verb} {}", words.join(" "))
    }
}

/// One wrapped event line `<time>: <text>` with its newline.
pub fn event_line(t: i64, text: &str, fx: &Fx) -> String {
    let mut out = wrap(&format!("{}: {text}", fx.event_time(t)));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_eventlog::parse_line;

    fn rec(line: &str) -> Record {
        match parse_line(line) {
            Ok(Some(r)) => r,
            other => panic!("cannot parse {line}: {other:?}"),
        }
    }

    #[test]
    fn names_and_ids() {
        assert_eq!(job_id_text(101, 0), "101");
        assert_eq!(job_id_text(101, 3), "101[3]");
        assert_eq!(element_name("arr[1-3]", 2), "arr[2]");
        assert_eq!(element_name("arr[1-3]", 0), "arr[1-3]");
        assert_eq!(shown_name("", "sleep 30", 0), "sleep 30");
        assert_eq!(shown_name("myjob", "sleep 30", 0), "myjob");
        assert_eq!(cwd_text("/tmp"), "/tmp");
        assert_eq!(cwd_text(""), "$HOME");
        assert_eq!(cwd_text("run"), "$HOME/run");
        let ids = parse_ids(&["12".into(), "13[2]".into()]).unwrap_or_default();
        assert!(ids[0].matches(12, 0) && ids[0].matches(12, 5));
        assert!(ids[1].matches(13, 2) && !ids[1].matches(13, 0));
        assert_eq!(parse_ids(&["x1".into()]), Err("x1".to_string()));
    }

    #[test]
    fn dispatch_texts() {
        let one = vec!["vm".to_string()];
        assert_eq!(dispatch_text(&one, 0, true), "Dispatched to <vm>");
        assert_eq!(dispatch_text(&one, 25592, true), "Started on <vm>");
        let four: Vec<String> = ["a", "a", "a", "b"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            dispatch_text(&four, 0, true),
            "Dispatched to 4 Hosts/Processors <3*a> <b>"
        );
        assert_eq!(
            dispatch_text(&four, 0, false),
            "Dispatched to 4 Hosts/Processors <a> <a> <a> <b>"
        );
    }

    fn line_new(id: u64, t: i64) -> String {
        format!(
            "\"JOB_NEW\" \"40\" {t} {id} 0 2 1 {t} 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"{t}.{id}\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n"
        )
    }

    fn kinds(l: &Loaded<Record>) -> Vec<(String, u64)> {
        l.records
            .iter()
            .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
            .collect()
    }

    #[test]
    fn reading_the_current_and_older_event_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let logdir = dir.path();
        // Nothing there yet: no records, no error.
        let empty = read_event_records(logdir, &EventSource::Current);
        assert!(empty.is_ok_and(|l| l.records.is_empty() && l.warnings.is_empty()));

        let older = format!("#100\n{}{}", line_new(1, 100), line_new(2, 110));
        std::fs::write(logdir.join("lsb.events.2"), line_new(9, 50)).unwrap_or_default();
        std::fs::write(logdir.join("lsb.events.1"), older).unwrap_or_default();
        // Carried: job 2 (also in .1), a damaged line, job 3 (whose JOB_NEW is only here).
        let carried = format!("{}garbage\n{}", line_new(2, 110), line_new(3, 120));
        let header = format!("#{:<37}\n", 39 + carried.len());
        let fresh = format!(
            "\"JOB_STATUS\" \"40\" 130 2 64 0 0 0.0 130 0 0 0\n{}\"JOB_STA",
            line_new(4, 140)
        );
        std::fs::write(
            logdir.join("lsb.events"),
            format!("{header}{carried}{fresh}"),
        )
        .unwrap_or_default();

        let cur = read_event_records(logdir, &EventSource::Current).unwrap_or_default();
        let n = |k: &str, id: u64| (k.to_string(), id);
        assert_eq!(
            kinds(&cur),
            vec![
                n("JOB_NEW", 2),
                n("JOB_NEW", 3),
                n("JOB_STATUS", 2),
                n("JOB_NEW", 4)
            ]
        );
        assert_eq!(cur.warnings.len(), 2, "{:?}", cur.warnings);
        assert!(cur.warnings[0].contains("at line 3"), "{:?}", cur.warnings);
        assert!(
            cur.warnings[1].contains("incomplete last line"),
            "{:?}",
            cur.warnings
        );

        let two = read_event_records(logdir, &EventSource::Newest(2)).unwrap_or_default();
        assert_eq!(
            kinds(&two),
            vec![
                n("JOB_NEW", 3),
                n("JOB_NEW", 1),
                n("JOB_NEW", 2),
                n("JOB_STATUS", 2),
                n("JOB_NEW", 4)
            ]
        );
        assert!(two.warnings.iter().any(|w| w.contains("at line 3")));

        let all = read_event_records(logdir, &EventSource::Newest(0)).unwrap_or_default();
        assert_eq!(kinds(&all)[1], n("JOB_NEW", 9));
        assert_eq!(all.records.len(), 6);

        let one = read_event_records(logdir, &EventSource::File(logdir.join("lsb.events.2")))
            .unwrap_or_default();
        assert_eq!(kinds(&one), vec![n("JOB_NEW", 9)]);
    }

    /// Issue 30 item 8: a cleaned job a switch carried only for the dependencies that
    /// name it (its carried records end with JOB_CLEAN) is not listed by `bhist -a`.
    #[test]
    fn cleaned_jobs_carried_for_dependencies_are_not_history() {
        let new_7 = "\"JOB_NEW\" \"40\" 100 7 0 2 1 100 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"100.7\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";
        let new_8 = new_7.replace(" 7 0 2 ", " 8 0 2 ");
        let status_7 = "\"JOB_STATUS\" \"40\" 130 7 64 0 0 0.0 130 0 0 0";
        let clean_7 = "\"JOB_CLEAN\" \"40\" 140 7 0";
        // Job 7 was cleaned (a stub for a dependency); job 8 waits (only its JOB_NEW).
        let carried = vec![rec(new_7), rec(&new_8), rec(status_7), rec(clean_7)];
        let merged = merge_carried(carried, Vec::new());
        let got: Vec<(String, u64)> = merged
            .iter()
            .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
            .collect();
        assert_eq!(got, vec![("JOB_NEW".to_string(), 8)]);
    }

    #[test]
    fn carried_records_fill_in_jobs_missing_from_the_older_files() {
        let new_7 = "\"JOB_NEW\" \"40\" 100 7 0 2 1 100 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"100.7\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";
        let new_8 = new_7.replace(" 7 0 2 ", " 8 0 2 ");
        let start_7 = "\"JOB_START\" \"40\" 110 7 4 0 0 100.0 1 \"vm\" \"\" \"\" 0 0 \"\"";
        let start_8 = "\"JOB_START\" \"40\" 120 8 4 0 0 100.0 1 \"vm\" \"\" \"\" 0 0 \"\"";
        let status_8 = "\"JOB_STATUS\" \"40\" 130 8 64 0 0 0.0 130 0 0 0";
        // Job 7 was read from an older file: its carried copies are dropped. Job 8's JOB_NEW
        // is only in the carried part: it is kept, its carried JOB_START too because it is
        // older than the first record read for job 8.
        let carried = vec![rec(new_7), rec(&new_8), rec(start_8)];
        let main = vec![rec(new_7), rec(start_7), rec(status_8)];
        let merged = merge_carried(carried, main);
        let got: Vec<(String, u64)> = merged
            .iter()
            .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("JOB_NEW".to_string(), 8),
                ("JOB_START".to_string(), 8),
                ("JOB_NEW".to_string(), 7),
                ("JOB_START".to_string(), 7),
                ("JOB_STATUS".to_string(), 8),
            ]
        );
    }
}
