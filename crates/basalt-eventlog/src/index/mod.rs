//! `lsb.events.index`: which job ids each old event file (`lsb.events.1` … `.N`) holds,
//! so that `bhist` opens only the files that can hold the jobs it is asked about
//! (event-log.md §6).
//!
//! # Format
//!
//! The layout is OpenLava's (`lsbatch/lib/lsb.log.c`, `updateJobIdIndexFile`):
//!
//! ```text
//! #LSF_JOBID_INDEX_FILE <version> <rows> <lastUpdate>      (padded to 80 bytes)
//! #<timeStamp> <numJobIds> <minJobId> <maxJobId>
//! <id> <id> ... (ten per line, highest first)
//! #<timeStamp> ...
//! ```
//!
//! One row per old event file. `timeStamp` is the file's `#<time>` header line (the time
//! of the switch that archived it; 0 when the file has none); the ids are the distinct job
//! ids of its job records (`JOB_NEW` … `JOB_CLEAN`, the id of `JOB_MODIFY2`'s job id
//! string, the second field of `JOB_SWITCH` / `JOB_MOVE`), highest first.
//!
//! **Row order.** OpenLava writes the rows oldest first — `lsb.events.N` first and
//! `lsb.events.1` last — and, after a switch, appends one row for the new `lsb.events.1`
//! (so that the row of file `.k` is always the k-th row from the end). Basalt writes the
//! same order. event-log.md §6 says "newest first"; the reader accepts either order by
//! matching every row's time stamp with its file's header ([`JobIdIndex::assign`]).
//! OpenLava prints `minJobId` and `maxJobId` through one static buffer, so both show the
//! same value; the reader therefore trusts the id list, not those two numbers.
//!
//! # Writing
//!
//! [`rebuild`] scans every `lsb.events.N` and writes the index crash-safely (a temporary
//! file, fsync, rename over the old index, fsync of the directory): a reader sees the old
//! index or the new one, never a mix. [`update_after_switch`] is the cheap variant mbatchd
//! calls right after [`crate::EventLog::switch`]: only the new `lsb.events.1` is scanned,
//! the other rows are kept (each file moved up by one), after checking that their time
//! stamps still match the files; anything unexpected falls back to a full rebuild.
//!
//! # Reading
//!
//! [`lookup`] answers "which old files may hold these job ids", or `None` when the index
//! is missing or does not describe the files present (every file must then be read).

mod scan;

pub use scan::{header_time, line_job_id, old_event_files, scan_event_file};

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::record::BASALT_EVENT_VERSION;

/// The index file's name, in the log directory.
pub const INDEX_FILE: &str = "lsb.events.index";
/// The tag that starts the index file.
pub const INDEX_TAG: &str = "#LSF_JOBID_INDEX_FILE";
/// Length of the header line, newline included (OpenLava reserves 80 bytes for it).
const HEADER_LEN: usize = 80;
/// Job ids per line.
const IDS_PER_LINE: usize = 10;

/// Errors of the index file.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A system call failed.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// The index file is not in the expected format.
    #[error("{}:{line}: not a job id index file: {message}", path.display())]
    Format {
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        message: String,
    },
    /// Listing the event files failed.
    #[error(transparent)]
    Log(#[from] EventLogError),
}

fn io_err(path: &Path, op: &'static str, source: io::Error) -> IndexError {
    IndexError::Io {
        path: path.to_owned(),
        op,
        source,
    }
}

// ------------------------------------------------------------------------------ rows

/// One old event file's entry: its header time stamp and the job ids it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexRow {
    /// The `#<time>` header of the event file (0 when it has none).
    pub time_stamp: i64,
    /// Distinct job ids, highest first.
    job_ids: Vec<u64>,
}

impl IndexRow {
    /// A row from any collection of ids (sorted highest first, duplicates and 0 dropped).
    pub fn new(time_stamp: i64, ids: impl IntoIterator<Item = u64>) -> IndexRow {
        let mut job_ids: Vec<u64> = ids.into_iter().filter(|&id| id != 0).collect();
        job_ids.sort_unstable_by(|a, b| b.cmp(a));
        job_ids.dedup();
        IndexRow {
            time_stamp,
            job_ids,
        }
    }

    /// The job ids, highest first.
    pub fn job_ids(&self) -> &[u64] {
        &self.job_ids
    }

    /// The lowest id (0 for an empty row).
    pub fn min_job_id(&self) -> u64 {
        self.job_ids.last().copied().unwrap_or(0)
    }

    /// The highest id (0 for an empty row).
    pub fn max_job_id(&self) -> u64 {
        self.job_ids.first().copied().unwrap_or(0)
    }

    /// Does the file hold records of job `id`?
    pub fn contains(&self, id: u64) -> bool {
        self.job_ids.binary_search_by(|p| id.cmp(p)).is_ok()
    }

    fn write_to(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "#{} {} {} {}",
            self.time_stamp,
            self.job_ids.len(),
            self.min_job_id(),
            self.max_job_id()
        );
        for chunk in self.job_ids.chunks(IDS_PER_LINE) {
            for (i, id) in chunk.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{id}");
            }
            out.push('\n');
        }
    }
}

// ------------------------------------------------------------------------------ index

/// The contents of `lsb.events.index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobIdIndex {
    /// The version written in the header (Basalt writes [`BASALT_EVENT_VERSION`]).
    pub version: String,
    /// When the index was last written (seconds since the epoch).
    pub last_update: i64,
    /// One row per old event file, in file order (oldest first when Basalt wrote it).
    pub rows: Vec<IndexRow>,
}

/// Which row describes which file, as found by [`JobIdIndex::assign`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOrder {
    /// OpenLava's order: the first row is `lsb.events.N`, the last `lsb.events.1`.
    OldestFirst,
    /// event-log.md's wording: the first row is `lsb.events.1`.
    NewestFirst,
}

impl JobIdIndex {
    /// An index of `rows` (oldest file first), stamped `last_update`.
    pub fn new(last_update: i64, rows: Vec<IndexRow>) -> JobIdIndex {
        JobIdIndex {
            version: BASALT_EVENT_VERSION.to_owned(),
            last_update,
            rows,
        }
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let ids: usize = self.rows.iter().map(|r| r.job_ids.len()).sum();
        let mut out = String::with_capacity(HEADER_LEN + self.rows.len() * 40 + ids * 8);
        let header = format!(
            "{INDEX_TAG} {} {} {}",
            self.version,
            self.rows.len(),
            self.last_update
        );
        out.push_str(&format!("{header:<width$}\n", width = HEADER_LEN - 1));
        for r in &self.rows {
            r.write_to(&mut out);
        }
        out
    }

    /// Parse the file's text. Errors carry the 1-based line number and a message.
    pub fn parse(text: &str) -> Result<JobIdIndex, (usize, String)> {
        let eof = text.lines().count() + 1;
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let (_, header) = lines
            .next()
            .ok_or_else(|| (1, "the file is empty".to_owned()))?;
        let mut words = header.split_whitespace();
        if words.next() != Some(INDEX_TAG) {
            return Err((1, format!("the first line does not start with {INDEX_TAG}")));
        }
        let version = words
            .next()
            .ok_or_else(|| (1, "no version".to_owned()))?
            .to_owned();
        let rows_n: usize = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| (1, "no row count".to_owned()))?;
        let last_update: i64 = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| (1, "no last update time".to_owned()))?;
        let mut rows = Vec::with_capacity(rows_n.min(1 << 16));
        let mut ids: Vec<u64> = Vec::new();
        for _ in 0..rows_n {
            let (no, line) = lines
                .next()
                .ok_or_else(|| (eof, format!("{rows_n} rows announced, fewer found")))?;
            let mut w = line
                .strip_prefix('#')
                .ok_or_else(|| (no, "a row must start with #<timeStamp>".to_owned()))?
                .split_whitespace();
            let mut num = |what: &str| -> Result<i64, (usize, String)> {
                w.next()
                    .and_then(|v| v.parse::<i64>().ok())
                    .ok_or_else(|| (no, format!("row without a valid {what}")))
            };
            let time_stamp = num("time stamp")?;
            let count = usize::try_from(num("job id count")?)
                .map_err(|_| (no, "negative job id count".to_owned()))?;
            // minJobId and maxJobId are not trusted (see the module documentation).
            num("minimum job id")?;
            num("maximum job id")?;
            ids.clear();
            while ids.len() < count {
                let (no, line) = lines
                    .next()
                    .ok_or_else(|| (eof, format!("{count} job ids announced, fewer found")))?;
                for v in line.split_whitespace() {
                    let id: u64 = v
                        .parse()
                        .map_err(|_| (no, format!("{v:?} is not a job id")))?;
                    ids.push(id);
                }
                if ids.len() > count {
                    return Err((no, format!("more than the {count} job ids announced")));
                }
            }
            rows.push(IndexRow::new(time_stamp, ids.iter().copied()));
        }
        Ok(JobIdIndex {
            version,
            last_update,
            rows,
        })
    }

    /// Read `logdir/lsb.events.index`; `Ok(None)` when there is none.
    pub fn read(logdir: &Path) -> Result<Option<JobIdIndex>, IndexError> {
        let path = logdir.join(INDEX_FILE);
        let text = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path, "read", e)),
        };
        let text = String::from_utf8_lossy(&text);
        JobIdIndex::parse(&text)
            .map(Some)
            .map_err(|(line, message)| IndexError::Format {
                path,
                line,
                message,
            })
    }

    /// Write `logdir/lsb.events.index` crash-safely: `lsb.events.index.tmp` is written and
    /// fsynced, renamed over the index, and the directory is fsynced.
    pub fn write(&self, logdir: &Path) -> Result<(), IndexError> {
        let path = logdir.join(INDEX_FILE);
        let tmp = logdir.join(format!("{INDEX_FILE}.tmp"));
        let text = self.to_text();
        let written = (|| -> io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_err(&tmp, "write", e));
        }
        fs::rename(&tmp, &path).map_err(|e| io_err(&path, "rename", e))?;
        File::open(logdir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err(logdir, "fsync directory", e))
    }

    /// The row of `lsb.events.<n>` (n ≥ 1) when the rows are in `order`.
    pub fn row_of_file(&self, n: u64, order: RowOrder) -> Option<&IndexRow> {
        self.rows.get(row_pos(self.rows.len(), n, order)?)
    }

    /// Match the rows with the old event files `files` (`(n, header time)` of each
    /// `lsb.events.<n>`, n ≥ 1, any order): the index describes them when there is one
    /// row per file number 1..=N and each row's time stamp is its file's header time (a
    /// missing number must have an empty row). OpenLava's order is tried first.
    pub fn assign(&self, files: &[(u64, i64)]) -> Option<RowOrder> {
        let rows: Vec<(i64, bool)> = self
            .rows
            .iter()
            .map(|r| (r.time_stamp, !r.job_ids.is_empty()))
            .collect();
        assign_rows(&rows, files)
    }
}

/// The position of `lsb.events.<n>`'s row among `len` rows in `order`.
fn row_pos(len: usize, n: u64, order: RowOrder) -> Option<usize> {
    let n = usize::try_from(n).ok().filter(|&n| n >= 1 && n <= len)?;
    Some(match order {
        RowOrder::OldestFirst => len - n,
        RowOrder::NewestFirst => n - 1,
    })
}

/// [`JobIdIndex::assign`] on (time stamp, has ids) of each row.
fn assign_rows(rows: &[(i64, bool)], files: &[(u64, i64)]) -> Option<RowOrder> {
    let n = files.iter().map(|(n, _)| *n).max().unwrap_or(0);
    if usize::try_from(n).ok()? != rows.len() {
        return None;
    }
    [RowOrder::OldestFirst, RowOrder::NewestFirst]
        .into_iter()
        .find(|&order| {
            (1..=n).all(|k| {
                let Some((stamp, nonempty)) = row_pos(rows.len(), k, order).map(|i| rows[i]) else {
                    return false;
                };
                match files.iter().find(|(f, _)| *f == k) {
                    Some((_, t)) => stamp == *t,
                    None => !nonempty,
                }
            })
        })
}

/// One row as [`lookup`] reads it: time stamp, whether it has ids, whether it holds one of
/// the ids looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RowHit {
    time_stamp: i64,
    nonempty: bool,
    hit: bool,
}

/// Read the rows of an index text for `wanted` without parsing the ids of rows whose
/// `[minJobId, maxJobId]` cannot hold any of them (OpenLava's rows, whose min and max are
/// equal because of a shared buffer, are read in full).
fn scan_for(text: &str, wanted: &BTreeSet<u64>) -> Option<Vec<RowHit>> {
    let mut lines = text.lines();
    let mut words = lines.next()?.split_whitespace();
    if words.next() != Some(INDEX_TAG) {
        return None;
    }
    words.next()?;
    let rows_n: usize = words.next()?.parse().ok()?;
    let mut out = Vec::with_capacity(rows_n.min(1 << 16));
    for _ in 0..rows_n {
        let mut w = lines.next()?.strip_prefix('#')?.split_whitespace();
        let time_stamp: i64 = w.next()?.parse().ok()?;
        let count: usize = w.next()?.parse().ok()?;
        let min: u64 = w.next()?.parse().ok()?;
        let max: u64 = w.next()?.parse().ok()?;
        let id_lines = count.div_ceil(IDS_PER_LINE);
        let trusted = count <= 1 || min < max;
        let mut hit = false;
        if trusted && !wanted.range(min..=max).any(|_| true) {
            for _ in 0..id_lines {
                lines.next()?;
            }
        } else {
            let mut seen = 0;
            for _ in 0..id_lines {
                for v in lines.next()?.split_whitespace() {
                    let id: u64 = v.parse().ok()?;
                    seen += 1;
                    hit |= wanted.contains(&id);
                }
            }
            if seen != count {
                return None;
            }
        }
        out.push(RowHit {
            time_stamp,
            nonempty: count > 0,
            hit,
        });
    }
    Some(out)
}

// ------------------------------------------------------------------------------ building

/// What [`rebuild`] or [`update_after_switch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexReport {
    /// Rows written (old event files, counting gaps in the numbering).
    pub rows: usize,
    /// Event files scanned to do it.
    pub scanned: usize,
    /// Only the new `lsb.events.1` was scanned.
    pub incremental: bool,
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Scan every `lsb.events.N` of `logdir` and write `lsb.events.index` (see
/// [`JobIdIndex::write`]), stamped with the current time.
pub fn rebuild(logdir: &Path) -> Result<IndexReport, IndexError> {
    rebuild_at(logdir, now_secs())
}

/// [`rebuild`] with the time stamp given.
pub fn rebuild_at(logdir: &Path, now: i64) -> Result<IndexReport, IndexError> {
    let files = old_event_files(logdir)?;
    let n = files.first().map_or(0, |(n, _)| *n);
    let mut rows = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    // Oldest first; a number missing from the sequence gets an empty row so that the
    // position of every row still says which file it describes.
    for k in (1..=n).rev() {
        match files.iter().find(|(f, _)| *f == k) {
            Some((_, p)) => rows.push(scan_event_file(p)?),
            None => rows.push(IndexRow::default()),
        }
    }
    let index = JobIdIndex::new(now, rows);
    index.write(logdir)?;
    Ok(IndexReport {
        rows: index.rows.len(),
        scanned: files.len(),
        incremental: false,
    })
}

/// Bring `lsb.events.index` up to date right after a log switch: scan only the new
/// `lsb.events.1` and keep the other rows (each file moved up by one). Falls back to
/// [`rebuild`] when the index is missing, unreadable, or does not match the files (for
/// instance a switch happened without an index update).
pub fn update_after_switch(logdir: &Path) -> Result<IndexReport, IndexError> {
    update_after_switch_at(logdir, now_secs())
}

/// [`update_after_switch`] with the time stamp given.
pub fn update_after_switch_at(logdir: &Path, now: i64) -> Result<IndexReport, IndexError> {
    let old = match JobIdIndex::read(logdir) {
        Ok(Some(i)) => i,
        Ok(None) | Err(IndexError::Format { .. }) => return rebuild_at(logdir, now),
        Err(e) => return Err(e),
    };
    let files = old_event_files(logdir)?;
    let n = files.first().map_or(0, |(n, _)| *n);
    let contiguous = usize::try_from(n).is_ok_and(|n| n == files.len());
    if !contiguous || n == 0 || old.rows.len() + 1 != files.len() {
        return rebuild_at(logdir, now);
    }
    // The old rows must describe .2 ... .N (what were .1 ... .N-1), oldest first.
    let mut stamps = Vec::with_capacity(files.len());
    for (k, p) in &files {
        if *k >= 2 {
            stamps.push((*k - 1, header_time(p)?));
        }
    }
    if old.assign(&stamps) != Some(RowOrder::OldestFirst) {
        return rebuild_at(logdir, now);
    }
    let Some((_, newest)) = files.iter().find(|(k, _)| *k == 1) else {
        return rebuild_at(logdir, now);
    };
    let mut rows = old.rows;
    rows.push(scan_event_file(newest)?);
    let index = JobIdIndex::new(now, rows);
    index.write(logdir)?;
    Ok(IndexReport {
        rows: index.rows.len(),
        scanned: 1,
        incremental: true,
    })
}

// ------------------------------------------------------------------------------ lookup

/// The old event files (`lsb.events.N`, N ≥ 1) that may hold records of any of
/// `job_ids`, highest N first; `Ok(None)` when `lsb.events.index` is missing, unreadable
/// or does not describe the files present, so that every file must be read. The current
/// `lsb.events` and a left-over `lsb.events.0` are never in the index: read them always.
pub fn lookup(logdir: &Path, job_ids: &[u64]) -> Result<Option<Vec<PathBuf>>, IndexError> {
    let path = logdir.join(INDEX_FILE);
    let text = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path, "read", e)),
    };
    let wanted: BTreeSet<u64> = job_ids.iter().copied().collect();
    let Some(rows) = scan_for(&String::from_utf8_lossy(&text), &wanted) else {
        return Ok(None);
    };
    let files = old_event_files(logdir)?;
    let mut stamps = Vec::with_capacity(files.len());
    for (k, p) in &files {
        stamps.push((*k, header_time(p)?));
    }
    let shape: Vec<(i64, bool)> = rows.iter().map(|r| (r.time_stamp, r.nonempty)).collect();
    let Some(order) = assign_rows(&shape, &stamps) else {
        return Ok(None);
    };
    Ok(Some(
        files
            .into_iter()
            .filter(|(k, _)| row_pos(rows.len(), *k, order).is_some_and(|i| rows[i].hit))
            .map(|(_, p)| p)
            .collect(),
    ))
}

#[cfg(test)]
mod tests;
