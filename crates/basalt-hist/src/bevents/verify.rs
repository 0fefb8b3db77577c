//! `bevents verify`: every line of every file parses; torn tails, bad lines, headers and
//! the job id index checked; text and `-json` reports.

use super::*;

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

pub(super) fn report_text(r: &FileReport) -> String {
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

pub(super) fn report_json(r: &FileReport) -> Value {
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

pub(super) fn verify(a: &Args, files: &[PathBuf], logdir: Option<&Path>) -> ExitCode {
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
                return basalt_cli::fail();
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
