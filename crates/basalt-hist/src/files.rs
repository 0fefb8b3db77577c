//! Which files and parts of files are read ([`plan`], [`Part`]), and reading them: line by
//! line ([`read_plan`], [`read_event_records`], [`read_finish_records`]) or through the
//! indexes ([`read_history`]); carried-over heads, torn tails, the log directory.

use super::*;

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

pub(super) fn is_not_found(e: &EventLogError) -> bool {
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
pub(super) fn kept(r: &Record, keep: Option<&BTreeSet<u64>>) -> bool {
    keep.is_none_or(|k| r.job_id().is_some_and(|id| k.contains(&id)))
}

/// Every readable record of one file; a missing file reads as empty.
pub(super) fn read_file(
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
pub(super) fn read_carried(
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
