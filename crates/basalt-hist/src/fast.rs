//! Reading through the history index ([`super::store`]): the same records and the same
//! warnings as reading the files line by line, from the lines the index points at.
//!
//! Every function returns `None` when the index cannot be used (no place for it, a
//! database error, a file changed under it); the caller then reads the files. A line the
//! index points at is checked before it is used — it must start right after a newline,
//! end with one and hold a record of the job expected — and a file whose index fails
//! the check is forgotten, to be indexed again by the next command.

use super::bacct::{self, Acct};
use super::store::{AcctQuery, FileState, Kind, LineReader, Store, StoreError};
use super::{Loaded, Part, Plan, Want, merge_carried, torn_warning};
use basalt_eventlog::{JobFinish, Record};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// How an event-file read maps onto line offsets: lines starting in `[lo, hi)`.
fn range(st: &FileState, part: Part) -> (u64, u64) {
    match (part, st.header) {
        (Part::All, _) | (Part::New, None) => (0, u64::MAX),
        (Part::Carried, None) => (0, 0),
        (Part::Carried, Some((off, len))) => (len, off),
        (Part::New, Some((off, len))) => {
            if st.offset_on_boundary() {
                (off, u64::MAX)
            } else {
                (len, u64::MAX)
            }
        }
    }
}

/// The same text as `describe_cut` of basalt-eventlog: at most 4 KiB of an incomplete
/// line, and its length when longer.
pub fn describe_cut(bytes: &[u8]) -> String {
    const MAX: usize = 4096;
    let shown = &bytes[..bytes.len().min(MAX)];
    let mut s = String::from_utf8_lossy(shown).into_owned();
    if bytes.len() > MAX {
        s.push_str(&format!("... ({} bytes in all)", bytes.len()));
    }
    s
}

/// The warning for the damaged line at `off`, which must still not parse.
fn damaged_warning(
    lines: &mut LineReader,
    path: &Path,
    off: u64,
    line_no: u64,
    buf: &mut Vec<u8>,
) -> Result<String, StoreError> {
    lines.line_at(off, buf)?;
    match basalt_eventlog::parse_line(&String::from_utf8_lossy(buf)) {
        Err(e) => Ok(format!("File {} at line {line_no}: {e}", path.display())),
        Ok(_) => Err(StoreError::Stale {
            path: path.to_owned(),
        }),
    }
}

/// Read `plan` for the jobs of `want` through the index (see the module documentation).
pub fn events(logdir: &Path, plan: &Plan, want: &Want) -> Option<Loaded<Record>> {
    if *want == Want::All {
        return None;
    }
    let mut store = Store::open(logdir)?;
    let mut stale = None;
    let out = events_with(&mut store, logdir, plan, want, &mut stale);
    if let Some(id) = stale {
        let _ = store.forget(id);
    }
    out.ok()
}

fn events_with(
    store: &mut Store,
    logdir: &Path,
    plan: &Plan,
    want: &Want,
    stale: &mut Option<i64>,
) -> Result<Loaded<Record>, StoreError> {
    let all = basalt_eventlog::event_files(logdir)?;
    let mut wanted: Vec<PathBuf> = Vec::new();
    for (p, _) in &plan.reads {
        if !wanted.contains(p) {
            wanted.push(p.clone());
        }
    }
    let states = store.refresh(Kind::Events, &all, &wanted)?;
    let ids: Vec<i64> = wanted
        .iter()
        .filter_map(|p| states.get(p).map(|s| s.id))
        .collect();
    let jobs: BTreeSet<u64> = match want {
        Want::Jobs(j) => j.clone(),
        Want::User(u) => store.jobs_of_user(&ids, u)?,
        Want::All => BTreeSet::new(),
    };
    let offsets = store.event_offsets(&jobs, &ids)?;

    let mut warnings = Vec::new();
    let mut main = Vec::new();
    let mut carried = Vec::new();
    let mut buf = Vec::with_capacity(4096);
    for (path, part) in &plan.reads {
        let Some(st) = states.get(path) else { continue };
        let (lo, hi) = range(st, *part);
        let in_range = |off: &u64| *off >= lo && *off < hi;
        let bad: Vec<(u64, u64)> = store
            .bad_lines(st.id)?
            .into_iter()
            .filter(|(off, _)| in_range(off))
            .collect();
        let recs: Vec<u64> = offsets
            .get(&st.id)
            .map(|v| v.iter().copied().filter(in_range).collect())
            .unwrap_or_default();
        let out = if *part == Part::Carried {
            &mut carried
        } else {
            &mut main
        };
        if !bad.is_empty() || !recs.is_empty() {
            let mut lines = LineReader::open(path)?;
            let (mut b, mut r) = (bad.iter().peekable(), recs.iter().peekable());
            loop {
                let take_bad = match (b.peek(), r.peek()) {
                    (Some((bo, _)), Some(ro)) => bo < *ro,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                let result = if take_bad {
                    let Some(&(off, line_no)) = b.next() else {
                        break;
                    };
                    damaged_warning(&mut lines, path, off, line_no, &mut buf)
                        .map(|w| warnings.push(w))
                } else {
                    let Some(&off) = r.next() else { break };
                    lines.line_at(off, &mut buf).and_then(|()| {
                        match basalt_eventlog::parse_line(&String::from_utf8_lossy(&buf)) {
                            Ok(Some(Record::Unknown { .. })) => Ok(()),
                            Ok(Some(rec)) if rec.job_id().is_some_and(|id| jobs.contains(&id)) => {
                                out.push(rec);
                                Ok(())
                            }
                            _ => Err(StoreError::Stale { path: path.clone() }),
                        }
                    })
                };
                if let Err(e) = result {
                    if matches!(e, StoreError::Stale { .. }) {
                        *stale = Some(st.id);
                    }
                    return Err(e);
                }
            }
        }
        if *part != Part::Carried
            && let Some(tail) = &st.tail
        {
            // A file holding only an incomplete header line: the reader that skips the
            // carried-over records takes that line as the header and reports nothing.
            let header_only = *part == Part::New
                && st.done == 0
                && basalt_eventlog::parse_header(&String::from_utf8_lossy(tail)).is_some();
            if !header_only {
                warnings.push(torn_warning(path, &describe_cut(tail)));
            }
        }
    }
    let records = if plan.merge {
        merge_carried(carried, main)
    } else {
        main
    };
    Ok(Loaded { records, warnings })
}

/// What `bacct` gets back from the index: whole records (for `-l` and the filters that
/// need them) or only the accounting figures of the selected jobs.
#[derive(Debug)]
pub enum AcctSelection {
    Records(Loaded<JobFinish>),
    Figures(Loaded<Acct>),
}

/// The `JOB_FINISH` records of `files` (newest first, as [`basalt_eventlog::acct_files`]
/// lists them) that `filter` selects, through the index. With `need_records` the records
/// themselves are read and checked with [`bacct::Filter::matches`]; without, only the
/// figures the summary needs come from the index.
pub fn acct(
    logdir: &Path,
    files: &[PathBuf],
    filter: &bacct::Filter,
    need_records: bool,
) -> Option<AcctSelection> {
    let mut store = Store::open(logdir)?;
    let mut stale = None;
    let out = acct_with(&mut store, logdir, files, filter, need_records, &mut stale);
    if let Some(id) = stale {
        let _ = store.forget(id);
    }
    out.ok()
}

fn acct_with(
    store: &mut Store,
    logdir: &Path,
    files: &[PathBuf],
    filter: &bacct::Filter,
    need_records: bool,
    stale: &mut Option<i64>,
) -> Result<AcctSelection, StoreError> {
    let all = basalt_eventlog::acct_files(logdir)?;
    let states: HashMap<PathBuf, FileState> = store.refresh(Kind::Acct, &all, files)?;
    let q = AcctQuery {
        jobs: (!filter.ids.is_empty()).then(|| filter.ids.iter().map(|s| s.job_id).collect()),
        user: filter.user.clone(),
        queue: filter.queue.clone(),
        project: filter.project.clone(),
    };
    let mut warnings = Vec::new();
    let mut records = Vec::new();
    let mut figures = Vec::new();
    let mut buf = Vec::with_capacity(4096);
    for path in files.iter().rev() {
        let Some(st) = states.get(path) else { continue };
        let bad = store.bad_lines(st.id)?;
        let rows = store.acct_rows(st.id, &q)?;
        let mut lines = None;
        let reader = || -> Result<LineReader, StoreError> { LineReader::open(path) };
        let result = (|| -> Result<(), StoreError> {
            for (off, line_no) in &bad {
                let l = match &mut lines {
                    Some(l) => l,
                    None => lines.insert(reader()?),
                };
                warnings.push(damaged_warning(l, path, *off, *line_no, &mut buf)?);
            }
            for row in rows {
                if need_records {
                    let l = match &mut lines {
                        Some(l) => l,
                        None => lines.insert(reader()?),
                    };
                    l.line_at(row.off, &mut buf)?;
                    match basalt_eventlog::parse_line(&String::from_utf8_lossy(&buf)) {
                        Ok(Some(Record::JobFinish(f))) if f.job_id == row.job_id => {
                            if filter.matches(&f) {
                                records.push(*f);
                            }
                        }
                        _ => return Err(StoreError::Stale { path: path.clone() }),
                    }
                } else if filter.matches_figures(row.job_id, row.idx, row.input.j_status) {
                    figures.push(bacct::acct_of(&row.input));
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            if matches!(e, StoreError::Stale { .. }) {
                *stale = Some(st.id);
            }
            return Err(e);
        }
        if let Some(tail) = &st.tail {
            warnings.push(torn_warning(path, &describe_cut(tail)));
        }
    }
    Ok(if need_records {
        AcctSelection::Records(Loaded { records, warnings })
    } else {
        AcctSelection::Figures(Loaded {
            records: figures,
            warnings,
        })
    })
}
