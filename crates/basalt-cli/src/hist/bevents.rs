//! `bevents`: the operator's tool for the event log, working on the files alone (no
//! daemon is asked, nothing is written).
//!
//! * `bevents verify [--json] [LOGFILE ... | -d LOGDIR]`: checks the header line, that
//!   every record parses, and whether the file ends with an incomplete record (a torn
//!   write); each damaged record is reported with its file, line and byte offset. With
//!   `-d` (or the configuration's log directory) every `lsb.events*` and `lsb.acct*`
//!   file is checked, and `lsb.events.index` against them. Exit 0 when clean, 1 when a
//!   problem was found.
//! * `bevents json [--type T,...] [--job ID,...] [LOGFILE ... | -d LOGDIR]`: the records
//!   as JSON lines (file, line, offset, type, version, time, job id, array index, and the
//!   record's fields in order), oldest file first; the records a log switch carried over
//!   into `lsb.events` are marked `"carried": true`.
//! * `bevents replay [-l] [--json] [--until TIME] [-d LOGDIR]`: applies the records
//!   through the same path mbatchd uses on start ([`basalt_mbatchd::journal::from_record`]
//!   and [`basalt_sched::Sched::on_event`]) and prints the resulting state: jobs per state
//!   and per queue, the next job id, the epoch, closed queues and hosts, and with `-l` one
//!   line per job. Without `--until` it reads the current `lsb.events` as mbatchd does;
//!   with `--until TIME` it stops at the first record after TIME, reading the older files
//!   too when TIME is before the last log switch. TIME is seconds since the epoch or
//!   `[[yyyy/]mm/dd/]HH:MM` (local time; the latest such moment not in the future).
//!
//! The scheduler's configuration comes from the cluster's when `LSF_ENVDIR` is set, else
//! from Basalt's embedded default configuration with every queue and host the log names.
//!
//! Inputs: argv, `LSF_ENVDIR`, the log files. Outputs: stdout (the report), stderr
//! (problems), exit codes 0 (clean), 1 (problems found), 255 (usage or I/O errors).

use crate::batch::timefmt;
use basalt_eventlog::{Field, Record};
use basalt_sched::{Sched, SchedConfig};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// bevents' usage text.
pub const USAGE: &str = "Usage: bevents [-h] [-V]
       bevents verify [--json] [LOGFILE ... | -d LOGDIR]
       bevents json [--type TYPE[,TYPE...]] [--job ID[,ID...]] [LOGFILE ... | -d LOGDIR]
       bevents replay [-l] [--json] [--until TIME] [-d LOGDIR]
  TIME: seconds since the epoch, or [[yyyy/]mm/dd/]HH:MM
";

/// Exit code: problems found.
const PROBLEMS: u8 = 1;

// ------------------------------------------------------------------ arguments

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd {
    Verify,
    Json,
    Replay,
}

/// Parsed arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub cmd: Cmd,
    pub logdir: Option<PathBuf>,
    pub files: Vec<PathBuf>,
    pub json: bool,
    pub long: bool,
    pub types: BTreeSet<String>,
    pub jobs: BTreeSet<u64>,
    pub until: Option<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Run(Args),
    Help,
    Version,
}

/// Parse `args` (without the program name).
pub fn parse_args(args: &[String]) -> Result<Parsed, String> {
    let mut it = args.iter();
    let mut cmd = None;
    let mut a = Args {
        cmd: Cmd::Verify,
        logdir: None,
        files: Vec::new(),
        json: false,
        long: false,
        types: BTreeSet::new(),
        jobs: BTreeSet::new(),
        until: None,
    };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| -> Result<String, String> {
            it.next()
                .cloned()
                .ok_or_else(|| format!("option requires an argument -- {name}"))
        };
        // `--opt=value` is accepted too.
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value_of = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => value(name),
            }
        };
        match name {
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            "-d" | "--logdir" => a.logdir = Some(PathBuf::from(value_of("d")?)),
            "-l" | "--long" => a.long = true,
            "--json" | "-json" => a.json = true,
            "--type" | "-t" => {
                for t in value_of("type")?.split(',').filter(|t| !t.is_empty()) {
                    a.types.insert(t.trim().to_ascii_uppercase());
                }
            }
            "--job" | "-j" => {
                for j in value_of("job")?.split(',').filter(|j| !j.is_empty()) {
                    let id = j
                        .trim()
                        .split('[')
                        .next()
                        .and_then(|v| v.parse::<u64>().ok())
                        .ok_or_else(|| format!("{j}: Illegal job ID."))?;
                    a.jobs.insert(id);
                }
            }
            "--until" | "-u" => a.until = Some(value_of("until")?),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("illegal option -- {}", s.trim_start_matches('-')));
            }
            _ if cmd.is_none() => {
                cmd = Some(match arg.as_str() {
                    "verify" => Cmd::Verify,
                    "json" | "dump" => Cmd::Json,
                    "replay" => Cmd::Replay,
                    other => return Err(format!("unknown subcommand {other:?}")),
                })
            }
            _ => a.files.push(PathBuf::from(arg)),
        }
    }
    a.cmd = cmd.ok_or_else(|| "a subcommand is needed (verify, json or replay)".to_owned())?;
    if a.logdir.is_some() && !a.files.is_empty() {
        return Err("give log files or -d LOGDIR, not both".into());
    }
    match a.cmd {
        Cmd::Replay if !a.files.is_empty() => {
            return Err("replay reads a log directory (-d LOGDIR), not single files".into());
        }
        Cmd::Verify | Cmd::Json if a.until.is_some() => {
            return Err("--until is an option of replay".into());
        }
        Cmd::Verify | Cmd::Replay if !a.types.is_empty() || !a.jobs.is_empty() => {
            return Err("--type and --job are options of json".into());
        }
        _ => {}
    }
    Ok(Parsed::Run(a))
}

/// `[[yyyy/]mm/dd/]HH:MM` or seconds since the epoch, as of `now`: a time without a
/// date is today's (yesterday's when that is still to come), a date without a year this
/// year's (last year's when still to come). `to_epoch` converts a local wall-clock time
/// (year, month 0-11, day, hour, minute).
pub fn parse_time(
    v: &str,
    now: i64,
    today: (i32, u32, u32),
    to_epoch: impl Fn(i32, i32, i32, i32, i32) -> Option<i64>,
) -> Result<i64, String> {
    let v = v.trim();
    let bad =
        || format!("{v:?} is not a time: use seconds since the epoch or [[yyyy/]mm/dd/]HH:MM");
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse().map_err(|_| bad());
    }
    let parts: Vec<&str> = v.split('/').collect();
    let (hm, date) = parts.split_last().ok_or_else(bad)?;
    let (h, m) = hm.split_once(':').ok_or_else(bad)?;
    let num = |s: &str| -> Result<i32, String> { s.trim().parse::<i32>().map_err(|_| bad()) };
    let (hour, min) = (num(h)?, num(m)?);
    if !(0..=23).contains(&hour) || !(0..=59).contains(&min) {
        return Err(bad());
    }
    let (ty, tm, td) = today;
    let (year, mon, day, implied) = match date {
        [] => (ty, tm as i32 + 1, td as i32, Implied::Day),
        [mo, d] => (ty, num(mo)?, num(d)?, Implied::Year),
        [y, mo, d] => (num(y)?, num(mo)?, num(d)?, Implied::Nothing),
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&mon) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let t = to_epoch(year, mon - 1, day, hour, min).ok_or_else(bad)?;
    if t <= now {
        return Ok(t);
    }
    match implied {
        Implied::Day => to_epoch(year, mon - 1, day - 1, hour, min).ok_or_else(bad),
        Implied::Year => to_epoch(year - 1, mon - 1, day, hour, min).ok_or_else(bad),
        Implied::Nothing => Ok(t),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Implied {
    Day,
    Year,
    Nothing,
}

// ------------------------------------------------------------------ reading lines

/// One line of a log file.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based.
    pub number: usize,
    /// Byte offset of its first character.
    pub offset: u64,
    /// Without the newline.
    pub text: String,
    /// Ended by a newline (false only for a torn last line).
    pub complete: bool,
}

/// Call `f` on every line of `path`.
pub fn for_each_line(path: &Path, mut f: impl FnMut(Line) -> io::Result<()>) -> io::Result<()> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut buf = Vec::with_capacity(4096);
    let mut offset = 0u64;
    let mut number = 0usize;
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let complete = buf.last() == Some(&b'\n');
        let body = if complete { &buf[..n - 1] } else { &buf[..] };
        let text = String::from_utf8_lossy(body)
            .trim_end_matches('\r')
            .to_owned();
        f(Line {
            number,
            offset,
            text,
            complete,
        })?;
        offset += n as u64;
    }
}

/// At most 200 characters of a line, for messages.
fn excerpt(s: &str) -> String {
    const MAX: usize = 200;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}... ({} bytes)", s.len())
    }
}

/// What kind of log file a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The current `lsb.events` (header `#<offset>`).
    Current,
    /// `lsb.events.N` (header `#<time>`).
    Old,
    /// `lsb.acct*` or anything else (no header expected).
    Other,
}

/// The kind of `path` by its name.
pub fn kind_of(path: &Path) -> FileKind {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == basalt_eventlog::EVENTS_FILE {
        FileKind::Current
    } else if name
        .strip_prefix("lsb.events.")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    {
        FileKind::Old
    } else {
        FileKind::Other
    }
}

// ------------------------------------------------------------------ verify

/// One problem found by [`verify_file`].
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub line: usize,
    pub offset: u64,
    pub what: String,
    pub text: String,
}

/// What [`verify_file`] found in one file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileReport {
    pub path: PathBuf,
    pub records: usize,
    /// Records of types Basalt does not model (kept, skipped on replay).
    pub unknown: BTreeMap<String, usize>,
    /// The header's value (`#<offset>` or `#<time>`), if the file has one.
    pub header: Option<u64>,
    /// Records before the header's offset (carried over by a switch), current file only.
    pub carried: usize,
    pub damaged: Vec<Problem>,
    pub torn: Option<Problem>,
    /// Header problems and remarks that are not damage.
    pub notes: Vec<String>,
    /// A header problem that is damage.
    pub header_problem: Option<String>,
}

impl FileReport {
    /// Number of problems (damaged lines, torn tail, header problem).
    pub fn problems(&self) -> usize {
        self.damaged.len()
            + usize::from(self.torn.is_some())
            + usize::from(self.header_problem.is_some())
    }
}

/// Check one file.
pub fn verify_file(path: &Path) -> io::Result<FileReport> {
    let kind = kind_of(path);
    let mut rep = FileReport {
        path: path.to_owned(),
        ..FileReport::default()
    };
    let mut boundary = false;
    let mut first_len = 0u64;
    for_each_line(path, |l| {
        if let (FileKind::Current, Some(off)) = (kind, rep.header)
            && l.offset == off
        {
            boundary = true;
        }
        if !l.complete {
            rep.torn = Some(Problem {
                line: l.number,
                offset: l.offset,
                what: format!(
                    "incomplete last line ({} bytes): a torn write",
                    l.text.len()
                ),
                text: excerpt(&l.text),
            });
            return Ok(());
        }
        if l.number == 1 {
            first_len = l.text.len() as u64 + 1;
            if let Some(v) = basalt_eventlog::parse_header(&l.text) {
                rep.header = Some(v);
                if kind == FileKind::Current && v == first_len {
                    boundary = true;
                }
                return Ok(());
            }
        }
        match basalt_eventlog::parse_line(&l.text) {
            Ok(None) => {}
            Ok(Some(r)) => {
                rep.records += 1;
                if let Record::Unknown { kind, .. } = &r {
                    *rep.unknown.entry(kind.clone()).or_default() += 1;
                }
                if kind == FileKind::Current
                    && let Some(off) = rep.header
                    && l.offset < off
                {
                    rep.carried += 1;
                }
            }
            Err(e) => rep.damaged.push(Problem {
                line: l.number,
                offset: l.offset,
                what: format!("damaged record: {e}"),
                text: excerpt(&l.text),
            }),
        }
        Ok(())
    })?;
    let len = std::fs::metadata(path)?.len();
    let complete_len = rep.torn.as_ref().map_or(len, |t| t.offset);
    match (kind, rep.header) {
        (FileKind::Current, None) if len > 0 => {
            rep.header_problem =
                Some("no #<offset> header line (every record is taken as new)".into());
        }
        (FileKind::Current, Some(off)) => {
            if off == complete_len {
                boundary = true;
            }
            if !boundary {
                rep.notes.push(format!(
                    "the header's offset {off} is not on a line boundary (OpenLava 4's bare \"#80\"?): every record is taken as new"
                ));
                rep.carried = 0;
            }
        }
        (FileKind::Old, None) if len > 0 => {
            rep.notes
                .push("no #<time> header line (its switch time is unknown)".into());
        }
        _ => {}
    }
    for (k, n) in &rep.unknown {
        rep.notes.push(format!(
            "{n} {k} record(s) of a type Basalt does not replay (kept, skipped)"
        ));
    }
    Ok(rep)
}

/// The files `verify` checks in a log directory: the event files oldest first, then the
/// accounting files oldest first.
pub fn logdir_files(logdir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut ev = basalt_eventlog::event_files(logdir).map_err(|e| e.to_string())?;
    ev.reverse();
    let mut acct = basalt_eventlog::acct_files(logdir).map_err(|e| e.to_string())?;
    acct.reverse();
    ev.extend(acct);
    Ok(ev)
}

/// The state of `lsb.events.index` in `logdir`: `Ok(None)` when it matches the files,
/// `Ok(Some(note))` when it is missing or stale (a remark, not damage), `Err` when it
/// exists but cannot be read as an index (damage).
pub fn check_index(logdir: &Path) -> Result<Option<String>, String> {
    use basalt_eventlog::index::{self, JobIdIndex};
    let idx = match JobIdIndex::read(logdir) {
        Ok(Some(i)) => i,
        Ok(None) => {
            let olds = index::old_event_files(logdir).map_err(|e| e.to_string())?;
            return Ok((!olds.is_empty()).then(|| {
                format!(
                    "{}: missing (bhist reads every old event file until mbatchd's next log switch writes it)",
                    logdir.join(basalt_eventlog::INDEX_FILE).display()
                )
            }));
        }
        Err(e) => return Err(e.to_string()),
    };
    let mut stamps = Vec::new();
    for (n, p) in index::old_event_files(logdir).map_err(|e| e.to_string())? {
        stamps.push((n, index::header_time(&p).map_err(|e| e.to_string())?));
    }
    Ok(idx.assign(&stamps).is_none().then(|| {
        format!(
            "{}: stale ({} rows for {} old event files, or their switch times differ); bhist reads every old file until mbatchd's next log switch rewrites it",
            logdir.join(basalt_eventlog::INDEX_FILE).display(),
            idx.rows.len(),
            stamps.len()
        )
    }))
}

fn report_text(r: &FileReport) -> String {
    let mut out = String::new();
    let p = r.path.display();
    let mut head = format!("{p}: {} records", r.records);
    match (kind_of(&r.path), r.header) {
        (FileKind::Current, Some(off)) => {
            let _ = write!(head, ", header offset {off} ({} carried over)", r.carried);
        }
        (FileKind::Old, Some(t)) => {
            let _ = write!(head, ", switched at {t}");
        }
        _ => {}
    }
    head.push_str(if r.problems() == 0 {
        ": OK"
    } else {
        ": DAMAGED"
    });
    out.push_str(&head);
    out.push('\n');
    if let Some(h) = &r.header_problem {
        let _ = writeln!(out, "{p}:1: offset 0: {h}");
    }
    for d in &r.damaged {
        let _ = writeln!(out, "{p}:{}: offset {}: {}", d.line, d.offset, d.what);
        let _ = writeln!(out, "    {}", d.text);
    }
    if let Some(t) = &r.torn {
        let _ = writeln!(out, "{p}:{}: offset {}: {}", t.line, t.offset, t.what);
        let _ = writeln!(out, "    {}", t.text);
    }
    for n in &r.notes {
        let _ = writeln!(out, "{p}: note: {n}");
    }
    out
}

fn report_json(r: &FileReport) -> Value {
    let problem =
        |d: &Problem| json!({"line": d.line, "offset": d.offset, "error": d.what, "text": d.text});
    json!({
        "file": r.path.display().to_string(),
        "records": r.records,
        "header": r.header,
        "carried": r.carried,
        "ok": r.problems() == 0,
        "header_problem": r.header_problem,
        "damaged": r.damaged.iter().map(problem).collect::<Vec<_>>(),
        "torn_tail": r.torn.as_ref().map(problem),
        "unknown_types": r.unknown,
        "notes": r.notes,
    })
}

fn verify(a: &Args, files: &[PathBuf], logdir: Option<&Path>) -> ExitCode {
    let mut problems = 0;
    let mut out = String::new();
    let mut reports = Vec::new();
    for f in files {
        match verify_file(f) {
            Ok(r) => {
                problems += r.problems();
                if a.json {
                    reports.push(report_json(&r));
                } else {
                    out.push_str(&report_text(&r));
                }
            }
            Err(e) => {
                eprintln!("bevents: {}: {e}", f.display());
                return crate::fail();
            }
        }
    }
    let mut index_note = None;
    let mut index_error = None;
    if let Some(d) = logdir {
        match check_index(d) {
            Ok(n) => index_note = n,
            Err(e) => {
                problems += 1;
                index_error = Some(e);
            }
        }
    }
    if a.json {
        let v = json!({
            "files": reports,
            "index": {"note": index_note, "error": index_error},
            "problems": problems,
        });
        println!("{v}");
    } else {
        if let Some(n) = &index_note {
            let _ = writeln!(out, "note: {n}");
        }
        if let Some(e) = &index_error {
            let _ = writeln!(out, "{e}");
        }
        let _ = writeln!(out, "{} problem(s) in {} file(s)", problems, files.len());
        print!("{out}");
    }
    if problems > 0 {
        ExitCode::from(PROBLEMS)
    } else {
        ExitCode::SUCCESS
    }
}

// ------------------------------------------------------------------ json

fn field_json(f: &Field) -> Value {
    match f {
        Field::Str(s) => Value::String(s.clone()),
        Field::Num(s) => {
            if let Ok(i) = s.parse::<i64>() {
                Value::from(i)
            } else if let Some(n) = s.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Value::Number(n)
            } else {
                Value::String(s.clone())
            }
        }
    }
}

/// One record as a JSON object.
pub fn record_json(path: &Path, line: &Line, rec: &Record, carried: bool) -> Value {
    let mut m = Map::new();
    m.insert("file".into(), json!(path.display().to_string()));
    m.insert("line".into(), json!(line.number));
    m.insert("offset".into(), json!(line.offset));
    m.insert("type".into(), json!(rec.kind()));
    m.insert("version".into(), json!(rec.header().version));
    m.insert("time".into(), json!(rec.time()));
    if let Some(id) = rec.job_id() {
        m.insert("job_id".into(), json!(id));
        m.insert("idx".into(), json!(rec.idx().unwrap_or(0)));
    }
    if carried {
        m.insert("carried".into(), json!(true));
    }
    let fields: Vec<Value> = basalt_eventlog::split_fields(&line.text)
        .map(|f| f.iter().skip(3).map(field_json).collect())
        .unwrap_or_default();
    m.insert("fields".into(), Value::Array(fields));
    Value::Object(m)
}

fn dump(a: &Args, files: &[PathBuf]) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut problems = 0usize;
    for path in files {
        let kind = kind_of(path);
        let mut header: Option<u64> = None;
        let res = for_each_line(path, |l| {
            if !l.complete {
                problems += 1;
                eprintln!(
                    "{}:{}: offset {}: incomplete last line ignored: {}",
                    path.display(),
                    l.number,
                    l.offset,
                    excerpt(&l.text)
                );
                return Ok(());
            }
            if l.number == 1
                && let Some(h) = basalt_eventlog::parse_header(&l.text)
            {
                header = Some(h);
                return Ok(());
            }
            match basalt_eventlog::parse_line(&l.text) {
                Ok(None) => Ok(()),
                Ok(Some(rec)) => {
                    if !a.types.is_empty() && !a.types.contains(rec.kind()) {
                        return Ok(());
                    }
                    if !a.jobs.is_empty() && !rec.job_id().is_some_and(|id| a.jobs.contains(&id)) {
                        return Ok(());
                    }
                    let carried = kind == FileKind::Current && header.is_some_and(|h| l.offset < h);
                    writeln!(out, "{}", record_json(path, &l, &rec, carried))
                }
                Err(e) => {
                    problems += 1;
                    eprintln!(
                        "{}:{}: offset {}: damaged record: {e}",
                        path.display(),
                        l.number,
                        l.offset
                    );
                    Ok(())
                }
            }
        });
        if let Err(e) = res {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("bevents: {}: {e}", path.display());
            return crate::fail();
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("bevents: {e}");
        return crate::fail();
    }
    if problems > 0 {
        ExitCode::from(PROBLEMS)
    } else {
        ExitCode::SUCCESS
    }
}

// ------------------------------------------------------------------ replay

/// Which files a replay reads, and from where in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPlan {
    /// (file, skip the records before the header's offset).
    pub files: Vec<(PathBuf, bool)>,
    /// The history of the older files is replayed (the time is before the last switch).
    pub history: bool,
}

/// The files to replay for `until`: the current `lsb.events` alone (as mbatchd does)
/// unless `until` is before the last log switch (the `#<time>` header of
/// `lsb.events.1`); then every old file, oldest first, and the records new to the
/// current file.
pub fn replay_plan(logdir: &Path, until: Option<i64>) -> Result<ReplayPlan, String> {
    let current = logdir.join(basalt_eventlog::EVENTS_FILE);
    let olds = basalt_eventlog::index::old_event_files(logdir).map_err(|e| e.to_string())?;
    let last_switch = match olds.iter().find(|(n, _)| *n == 1) {
        Some((_, p)) => Some(basalt_eventlog::index::header_time(p).map_err(|e| e.to_string())?),
        None => None,
    };
    match (until, last_switch) {
        (Some(t), Some(sw)) if t < sw => {
            let mut files: Vec<(PathBuf, bool)> =
                olds.into_iter().map(|(_, p)| (p, false)).collect();
            files.push((current, true));
            Ok(ReplayPlan {
                files,
                history: true,
            })
        }
        _ => Ok(ReplayPlan {
            files: vec![(current, false)],
            history: false,
        }),
    }
}

/// The state after a replay.
#[derive(Debug)]
pub struct Replayed {
    pub sched: Sched,
    pub files: Vec<PathBuf>,
    /// Records applied.
    pub applied: usize,
    /// Records read but not replayed (types mbatchd does not replay).
    pub skipped: usize,
    /// Damaged lines met (skipped), and a torn tail.
    pub problems: Vec<String>,
    /// Time of the last record applied.
    pub last_time: Option<i64>,
    /// Records naming a job whose JOB_NEW was not seen (its history starts in a file that
    /// is no longer there).
    pub orphans: usize,
    pub until: Option<i64>,
}

/// Replay `plan` into a fresh core configured with `cfg`, stopping before the first
/// record after `until`.
pub fn replay(cfg: SchedConfig, plan: &ReplayPlan, until: Option<i64>) -> io::Result<Replayed> {
    let mut sched = Sched::new(cfg, 0);
    let files: Vec<PathBuf> = plan.files.iter().map(|(p, _)| p.clone()).collect();
    let mut r = Tally::default();
    let mut known: BTreeSet<u64> = BTreeSet::new();
    let mut stopped = false;
    for (path, skip_carried) in &plan.files {
        if stopped {
            break;
        }
        let mut header: Option<u64> = None;
        let res = for_each_line(path, |l| {
            if stopped {
                return Ok(());
            }
            if !l.complete {
                r.problems.push(format!(
                    "{}:{}: offset {}: incomplete last line ignored",
                    path.display(),
                    l.number,
                    l.offset
                ));
                return Ok(());
            }
            if l.number == 1
                && let Some(h) = basalt_eventlog::parse_header(&l.text)
            {
                header = Some(h);
                return Ok(());
            }
            if *skip_carried && header.is_some_and(|h| l.offset < h) {
                return Ok(());
            }
            match basalt_eventlog::parse_line(&l.text) {
                Ok(None) => {}
                Ok(Some(rec)) => {
                    if until.is_some_and(|t| rec.time() > t) {
                        stopped = true;
                        return Ok(());
                    }
                    if let Some(id) = rec.job_id() {
                        if matches!(rec, Record::JobNew(_)) {
                            known.insert(id);
                        } else if !known.contains(&id) && plan.history {
                            r.orphans += 1;
                        }
                    }
                    match basalt_mbatchd::journal::from_record(&rec) {
                        Some(ev) => {
                            sched.replay([&ev]);
                            r.applied += 1;
                            r.last_time = Some(rec.time());
                        }
                        None => r.skipped += 1,
                    }
                }
                Err(e) => r.problems.push(format!(
                    "{}:{}: offset {}: damaged record skipped: {e}",
                    path.display(),
                    l.number,
                    l.offset
                )),
            }
            Ok(())
        });
        match res {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && files.len() == 1 => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
    // The replay path's effects (none are carried out here) are dropped.
    let _ = sched.take_effects();
    Ok(Replayed {
        sched,
        files,
        applied: r.applied,
        skipped: r.skipped,
        problems: r.problems,
        last_time: r.last_time,
        orphans: r.orphans,
        until,
    })
}

#[derive(Default)]
struct Tally {
    applied: usize,
    skipped: usize,
    problems: Vec<String>,
    last_time: Option<i64>,
    orphans: usize,
}

/// The next job id mbatchd would give (after the highest seen, wrapping at MAX_JOBID,
/// skipping ids still in use).
pub fn next_job_id(s: &Sched) -> u64 {
    let max = u64::from(s.config().max_jobid.max(1));
    let mut id = s.last_job_id() % max + 1;
    let mut tries = 0;
    while s.jobs().keys().any(|(j, _)| *j == id) && tries < max {
        id = id % max + 1;
        tries += 1;
    }
    id
}

const STATES: [&str; 10] = [
    "PEND", "PSUSP", "RUN", "SSUSP", "USUSP", "WAIT", "UNKWN", "ZOMBI", "DONE", "EXIT",
];

fn state_index(name: &str) -> usize {
    STATES.iter().position(|s| *s == name).unwrap_or(0)
}

fn job_id_text(id: u64, idx: u32) -> String {
    super::job_id_text(id, idx)
}

/// The replay summary as text.
pub fn summary_text(r: &Replayed, long: bool, tm: timefmt::ToTm) -> String {
    let s = &r.sched;
    let mut out = String::new();
    let names: Vec<String> = r.files.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(out, "Replayed: {}", names.join(", "));
    let _ = writeln!(
        out,
        "Records: {} applied, {} not replayed",
        r.applied, r.skipped
    );
    if let Some(t) = r.until {
        let _ = writeln!(out, "Until: {} ({t})", timefmt::ctime(&tm(t)));
    }
    if let Some(t) = r.last_time {
        let _ = writeln!(out, "Last record: {} ({t})", timefmt::ctime(&tm(t)));
    }
    if r.orphans > 0 {
        let _ = writeln!(
            out,
            "Incomplete history: {} record(s) of jobs whose JOB_NEW is in a file no longer present",
            r.orphans
        );
    }
    let _ = writeln!(out, "Epoch: {}", s.epoch());
    let _ = writeln!(out, "Next job id: {}", next_job_id(s));
    let mut by_state = [0usize; STATES.len()];
    let mut by_queue: BTreeMap<&str, [usize; STATES.len()]> = BTreeMap::new();
    for j in s.jobs().values() {
        let k = state_index(j.state.name());
        by_state[k] += 1;
        by_queue
            .entry(j.queue.as_str())
            .or_insert([0; STATES.len()])[k] += 1;
    }
    let _ = write!(out, "Jobs: {}", s.jobs().len());
    for (i, n) in by_state.iter().enumerate() {
        if *n > 0 {
            let _ = write!(out, "  {} {n}", STATES[i]);
        }
    }
    out.push('\n');
    for q in s.queues() {
        by_queue.entry(q.name.as_str()).or_insert([0; STATES.len()]);
    }
    let _ = writeln!(
        out,
        "\nQUEUE_NAME      STATUS          PEND  PSUSP    RUN  SSUSP  USUSP   DONE   EXIT  TOTAL"
    );
    for (name, counts) in &by_queue {
        let status = match s.queues().iter().find(|q| q.name == *name) {
            Some(q) => format!(
                "{}:{}",
                if q.open { "Open" } else { "Closed" },
                if q.active { "Active" } else { "Inact" }
            ),
            None => "(not configured)".to_owned(),
        };
        let c = |st: &str| counts[state_index(st)];
        let _ = writeln!(
            out,
            "{:<15} {:<15} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            name,
            status,
            c("PEND"),
            c("PSUSP"),
            c("RUN") + c("WAIT") + c("UNKWN") + c("ZOMBI"),
            c("SSUSP"),
            c("USUSP"),
            c("DONE"),
            c("EXIT"),
            counts.iter().sum::<usize>()
        );
    }
    let closed_q: Vec<String> = s
        .queues()
        .iter()
        .filter(|q| !q.open || !q.active)
        .map(|q| q.name.clone())
        .collect();
    let closed_h: Vec<String> = s
        .hosts()
        .iter()
        .filter(|h| h.closed_adm)
        .map(|h| {
            if h.message.is_empty() {
                h.name.clone()
            } else {
                format!("{} ({})", h.name, h.message)
            }
        })
        .collect();
    let none = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(out, "\nClosed or inactive queues: {}", none(&closed_q));
    let _ = writeln!(out, "Closed hosts: {}", none(&closed_h));
    if long {
        let _ = writeln!(
            out,
            "\nJOBID          USER        STAT   QUEUE        SUBMIT_TIME   EXEC_HOST    JOB_NAME"
        );
        for j in s.jobs().values() {
            let name = super::shown_name(&j.sub.job_name, &j.sub.command, j.idx);
            let _ = writeln!(
                out,
                "{:<14} {:<11} {:<6} {:<12} {:<13} {:<12} {}",
                job_id_text(j.id, j.idx),
                j.sub.user,
                j.state.name(),
                j.queue,
                timefmt::table(&tm(j.sub.submit_time)),
                j.hosts.first().map_or("-", String::as_str),
                name
            );
        }
    }
    for p in &r.problems {
        let _ = writeln!(out, "problem: {p}");
    }
    out
}

/// The replay summary as JSON.
pub fn summary_json(r: &Replayed, long: bool) -> Value {
    let s = &r.sched;
    let mut by_state: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_queue: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for j in s.jobs().values() {
        *by_state.entry(j.state.name()).or_default() += 1;
        *by_queue
            .entry(j.queue.as_str())
            .or_default()
            .entry(j.state.name())
            .or_default() += 1;
    }
    let queues: Vec<Value> = s
        .queues()
        .iter()
        .map(|q| {
            json!({
                "name": q.name,
                "open": q.open,
                "active": q.active,
                "jobs": by_queue.get(q.name.as_str()).cloned().unwrap_or_default(),
            })
        })
        .chain(
            by_queue
                .iter()
                .filter(|(n, _)| !s.queues().iter().any(|q| q.name == **n))
                .map(|(n, c)| json!({"name": n, "configured": false, "jobs": c})),
        )
        .collect();
    let mut v = json!({
        "files": r.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "records_applied": r.applied,
        "records_not_replayed": r.skipped,
        "until": r.until,
        "last_record_time": r.last_time,
        "orphan_records": r.orphans,
        "epoch": s.epoch(),
        "next_job_id": next_job_id(s),
        "last_job_id": s.last_job_id(),
        "jobs_total": s.jobs().len(),
        "jobs_by_state": by_state,
        "queues": queues,
        "closed_queues": s.queues().iter().filter(|q| !q.open).map(|q| q.name.clone()).collect::<Vec<_>>(),
        "inactive_queues": s.queues().iter().filter(|q| !q.active).map(|q| q.name.clone()).collect::<Vec<_>>(),
        "closed_hosts": s.hosts().iter().filter(|h| h.closed_adm).map(|h| h.name.clone()).collect::<Vec<_>>(),
        "problems": r.problems,
    });
    if long && let Value::Object(m) = &mut v {
        let jobs: Vec<Value> = s
            .jobs()
            .values()
            .map(|j| {
                json!({
                    "job_id": j.id,
                    "idx": j.idx,
                    "user": j.sub.user,
                    "state": j.state.name(),
                    "queue": j.queue,
                    "submit_time": j.sub.submit_time,
                    "start_time": j.start_time,
                    "end_time": j.end_time,
                    "exec_hosts": j.hosts,
                    "job_name": j.sub.job_name,
                    "exit_status": j.exit_status,
                })
            })
            .collect();
        m.insert("jobs".into(), Value::Array(jobs));
    }
    v
}

/// Queue and host names the records of `plan` mention.
fn names_in(plan: &ReplayPlan) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut queues = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for (p, _) in &plan.files {
        let _ = for_each_line(p, |l| {
            if let Ok(Some(r)) = basalt_eventlog::parse_line(&l.text) {
                match r {
                    Record::JobNew(n) | Record::JobModify(n) => {
                        queues.insert(n.queue.clone());
                    }
                    Record::JobSwitch(s) => {
                        queues.insert(s.queue.clone());
                    }
                    Record::QueueCtrl(q) => {
                        queues.insert(q.queue.clone());
                    }
                    Record::HostCtrl(h) => {
                        hosts.insert(h.host.clone());
                    }
                    Record::JobStart(s) | Record::PreExecStart(s) => {
                        hosts.extend(s.exec_hosts.iter().cloned());
                    }
                    _ => {}
                }
            }
            Ok(())
        });
    }
    queues.retain(|q| !q.is_empty() && q.bytes().all(|b| b.is_ascii_graphic()));
    hosts.retain(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()));
    (queues, hosts)
}

/// Basalt's embedded default configuration, with the queues and hosts the log names.
fn default_config(plan: &ReplayPlan) -> Result<SchedConfig, String> {
    use basalt_config::embedded::{DefaultCluster, DefaultHost};
    let (queues, mut hosts) = names_in(plan);
    if hosts.is_empty() {
        hosts.insert("localhost".into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let top = std::env::temp_dir().join(format!("bevents-{}-{nanos}", std::process::id()));
    let result = (|| -> Result<SchedConfig, String> {
        let spec = DefaultCluster::new(
            "basalt",
            "root",
            hosts
                .iter()
                .map(|h| DefaultHost {
                    name: h.clone(),
                    address: Some(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
                    server: true,
                })
                .collect(),
        );
        let envdir = spec.write(&top).map_err(|e| e.to_string())?;
        let loaded = basalt_config::load(&envdir).map_err(|e| e.to_string())?;
        let qfile = loaded.config.batch_confdir().join("lsb.queues");
        let mut text = std::fs::read_to_string(&qfile).map_err(|e| e.to_string())?;
        let mut added = false;
        for q in &queues {
            if !loaded.config.batch.queues.iter().any(|c| &c.name == q) {
                let _ = write!(text, "\nBegin Queue\nQUEUE_NAME = {q}\nEnd Queue\n");
                added = true;
            }
        }
        let config = if added {
            std::fs::write(&qfile, text).map_err(|e| e.to_string())?;
            basalt_config::load(&envdir)
                .map_err(|e| e.to_string())?
                .config
        } else {
            loaded.config
        };
        Ok(SchedConfig::from_config(&config))
    })();
    let _ = std::fs::remove_dir_all(&top);
    result
}

fn run_replay(a: &Args, logdir: &Path, config: Option<&basalt_config::Config>) -> ExitCode {
    let now = timefmt::now();
    let until = match &a.until {
        None => None,
        Some(v) => {
            let t = timefmt::local(now);
            match parse_time(v, now, (t.year, t.mon, t.mday), timefmt::local_to_epoch) {
                Ok(t) => Some(t),
                Err(e) => {
                    eprintln!("bevents: {e}");
                    return crate::fail();
                }
            }
        }
    };
    let plan = match replay_plan(logdir, until) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bevents: {e}");
            return crate::fail();
        }
    };
    let cfg = match config {
        Some(c) => SchedConfig::from_config(c),
        None => match default_config(&plan) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("bevents: cannot build the default configuration: {e}");
                return crate::fail();
            }
        },
    };
    let r = match replay(cfg, &plan, until) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bevents: {e}");
            return crate::fail();
        }
    };
    if a.json {
        println!("{}", summary_json(&r, a.long));
    } else {
        print!("{}", summary_text(&r, a.long, timefmt::local));
    }
    if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(PROBLEMS)
    }
}

// ------------------------------------------------------------------ main

/// `bevents`.
pub fn main(args: Vec<String>) -> ExitCode {
    let a = match parse_args(&args) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            eprint!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => return crate::print_version(),
        Err(e) => {
            eprintln!("bevents: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    // The configuration: needed for the default log directory, and for replay's queues
    // and hosts when LSF_ENVDIR is set.
    let env_set = std::env::var_os("LSF_ENVDIR").is_some_and(|v| !v.is_empty());
    let config = if env_set && (a.cmd == Cmd::Replay || (a.logdir.is_none() && a.files.is_empty()))
    {
        let envdir = basalt_runtime::envdir();
        match basalt_config::load(&envdir) {
            Ok(l) => Some(l.config),
            Err(e) => {
                eprintln!(
                    "bevents: cannot read the configuration in {}:\n{e}",
                    envdir.display()
                );
                return crate::fail();
            }
        }
    } else {
        None
    };
    let logdir = match (&a.logdir, &config) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(c)) if a.files.is_empty() => Some(c.logdir()),
        _ => None,
    };
    if a.files.is_empty() && logdir.is_none() {
        eprintln!("bevents: no log directory: give -d LOGDIR or set LSF_ENVDIR");
        return crate::fail();
    }
    if let Some(d) = &logdir
        && !d.is_dir()
    {
        eprintln!("bevents: {}: not a directory", d.display());
        return crate::fail();
    }
    match a.cmd {
        Cmd::Replay => match &logdir {
            Some(d) => run_replay(&a, d, config.as_ref()),
            None => crate::fail(),
        },
        Cmd::Verify | Cmd::Json => {
            let files = if a.files.is_empty() {
                let d = logdir.as_deref().unwrap_or(Path::new("."));
                match logdir_files(d) {
                    Ok(f) if a.cmd == Cmd::Json => f
                        .into_iter()
                        .filter(|p| kind_of(p) != FileKind::Other)
                        .collect(),
                    Ok(f) => f,
                    Err(e) => {
                        eprintln!("bevents: {e}");
                        return crate::fail();
                    }
                }
            } else {
                a.files.clone()
            };
            if a.cmd == Cmd::Verify {
                let dir = if a.files.is_empty() {
                    logdir.as_deref()
                } else {
                    None
                };
                verify(&a, &files, dir)
            } else {
                dump(&a, &files)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let Ok(Parsed::Run(a)) = parse_args(&s(&[
            "json",
            "--type",
            "job_new,JOB_STATUS",
            "--job=12",
            "-j",
            "13[2]",
            "-d",
            "/x",
        ])) else {
            panic!("not parsed");
        };
        assert_eq!(a.cmd, Cmd::Json);
        assert_eq!(a.logdir.as_deref(), Some(Path::new("/x")));
        assert_eq!(
            a.types.iter().cloned().collect::<Vec<_>>(),
            vec!["JOB_NEW", "JOB_STATUS"]
        );
        assert_eq!(a.jobs.iter().copied().collect::<Vec<_>>(), vec![12, 13]);
        assert_eq!(parse_args(&s(&["-h"])), Ok(Parsed::Help));
        assert_eq!(parse_args(&s(&["replay", "-V"])), Ok(Parsed::Version));
        let Ok(Parsed::Run(a)) = parse_args(&s(&["replay", "-l", "--json", "--until", "12:30"]))
        else {
            panic!("not parsed");
        };
        assert!(a.long && a.json && a.until.as_deref() == Some("12:30"));
        let Ok(Parsed::Run(a)) = parse_args(&s(&["verify", "a", "b"])) else {
            panic!("not parsed");
        };
        assert_eq!(a.files, vec![PathBuf::from("a"), PathBuf::from("b")]);
        for bad in [
            vec![],
            vec!["frobnicate"],
            vec!["verify", "-Z"],
            vec!["verify", "-d"],
            vec!["verify", "a", "-d", "/x"],
            vec!["replay", "file"],
            vec!["verify", "--until", "5"],
            vec!["replay", "--type", "JOB_NEW"],
            vec!["json", "--job", "x1"],
        ] {
            assert!(parse_args(&s(&bad)).is_err(), "{bad:?}");
        }
    }

    /// A wall clock in UTC for the tests.
    fn utc_epoch(y: i32, mon0: i32, d: i32, h: i32, m: i32) -> Option<i64> {
        // days_from_civil (proleptic Gregorian), months normalised like mktime.
        let (y, mon0) = (y + mon0.div_euclid(12), mon0.rem_euclid(12));
        let (yy, mm) = if mon0 < 2 {
            (y - 1, mon0 + 13)
        } else {
            (y, mon0 + 1)
        };
        let era = yy.div_euclid(400);
        let yoe = yy - era * 400;
        let doy = (153 * (mm - 3) + 2) / 5;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = i64::from(era) * 146_097 + i64::from(doe) - 719_468 + i64::from(d) - 1;
        Some(days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60)
    }

    #[test]
    fn times() {
        // Now: Sun Nov 22 09:25:35 2026 UTC.
        let now = 1_795_339_535;
        let tm = timefmt::utc(now);
        let today = (tm.year, tm.mon, tm.mday);
        let p = |v: &str| parse_time(v, now, today, utc_epoch);
        assert_eq!(p("1795339000"), Ok(1_795_339_000));
        assert_eq!(p("09:25"), Ok(1_795_339_500));
        // Later today -> yesterday.
        assert_eq!(p("10:00"), Ok(1_795_341_600 - 86_400));
        assert_eq!(p("11/22/09:00"), Ok(1_795_338_000));
        // A date later this year -> last year.
        assert_eq!(
            p("12/01/00:00"),
            utc_epoch(2025, 11, 1, 0, 0).ok_or(String::new())
        );
        assert_eq!(p("2026/11/22/09:00"), Ok(1_795_338_000));
        for bad in [
            "",
            "9:",
            "25:00",
            "09:60",
            "13/01/00:00",
            "x:y",
            "2026/1/2/3/04:00",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of(Path::new("/l/lsb.events")), FileKind::Current);
        assert_eq!(kind_of(Path::new("/l/lsb.events.12")), FileKind::Old);
        assert_eq!(kind_of(Path::new("/l/lsb.events.index")), FileKind::Other);
        assert_eq!(kind_of(Path::new("/l/lsb.acct")), FileKind::Other);
    }

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    const NEW_101: &str = "\"JOB_NEW\" \"40\" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.101\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";

    #[test]
    fn verify_reports_line_offset_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("lsb.events");
        let header = format!("#{:<78}\n", 80);
        let bad = "\"JOB_STATUS\" \"40\" 1795339540 abc 64 0 0 0.0 0 0 0 0";
        write(
            &p,
            &format!("{header}{NEW_101}\n{bad}\n\"JOB_CLEAN\" \"40\" 1795339600 101 0\n\"JOB_STA"),
        );
        let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.records, 2);
        assert_eq!(r.header, Some(80));
        assert_eq!(r.damaged.len(), 1);
        assert_eq!(r.damaged[0].line, 3);
        assert_eq!(r.damaged[0].offset, 80 + NEW_101.len() as u64 + 1);
        assert!(r.damaged[0].what.contains("jobId"), "{:?}", r.damaged);
        let torn = r.torn.clone().unwrap_or_else(|| panic!("no torn tail"));
        assert_eq!(torn.line, 5);
        assert_eq!(torn.text, "\"JOB_STA");
        assert_eq!(r.problems(), 2);
        let text = report_text(&r);
        assert!(text.contains(":3: offset "), "{text}");
        assert!(text.contains("DAMAGED"), "{text}");

        // A clean file, and a current file without a header.
        write(&p, &format!("{header}{NEW_101}\n"));
        let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.problems(), 0, "{r:?}");
        write(&p, &format!("{NEW_101}\n"));
        let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.header_problem.is_some());
        // OpenLava 4's bare "#80": a note, not damage.
        write(&p, &format!("#80\n{NEW_101}\n"));
        let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.problems(), 0);
        assert!(r.notes.iter().any(|n| n.contains("line boundary")), "{r:?}");
    }

    #[test]
    fn json_records() {
        let line = Line {
            number: 2,
            offset: 80,
            text: NEW_101.to_owned(),
            complete: true,
        };
        let rec = match basalt_eventlog::parse_line(NEW_101) {
            Ok(Some(r)) => r,
            other => panic!("{other:?}"),
        };
        let v = record_json(Path::new("/l/lsb.events"), &line, &rec, true);
        assert_eq!(v["type"], "JOB_NEW");
        assert_eq!(v["job_id"], 101);
        assert_eq!(v["idx"], 0);
        assert_eq!(v["time"], 1_795_339_535_i64);
        assert_eq!(v["line"], 2);
        assert_eq!(v["offset"], 80);
        assert_eq!(v["carried"], true);
        assert_eq!(v["fields"][0], 101);
        assert_eq!(v["fields"][10], "root");
        assert_eq!(v["fields"][23], 100.0);
    }
}
