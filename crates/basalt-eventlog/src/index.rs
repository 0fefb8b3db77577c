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

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::file::{EVENTS_FILE, event_files};
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

// ------------------------------------------------------------------------------ scanning

/// The old event files of `logdir`: `(n, path)` of every `lsb.events.<n>` with n ≥ 1,
/// highest n (oldest) first.
pub fn old_event_files(logdir: &Path) -> Result<Vec<(u64, PathBuf)>, IndexError> {
    let mut out: Vec<(u64, PathBuf)> = event_files(logdir)?
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let n: u64 = name
                .strip_prefix(EVENTS_FILE)?
                .strip_prefix('.')?
                .parse()
                .ok()?;
            (n >= 1).then_some((n, p))
        })
        .collect();
    out.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    Ok(out)
}

/// The time stamp in the `#<time>` header line of an old event file (0 when the first
/// line is not such a header, as LSF's reader does).
pub fn header_time(path: &Path) -> Result<i64, IndexError> {
    let mut f = File::open(path).map_err(|e| io_err(path, "open", e))?;
    let mut buf = [0u8; 64];
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(path, "read", e)),
        }
    }
    Ok(parse_time_header(&buf[..got]))
}

fn parse_time_header(b: &[u8]) -> i64 {
    let Some(rest) = b.strip_prefix(b"#") else {
        return 0;
    };
    let rest = rest
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t'))
        .map_or(&rest[rest.len()..], |i| &rest[i..]);
    let (neg, digits) = match rest.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, rest),
    };
    let end = digits
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = std::str::from_utf8(&digits[..end])
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or(0);
    if neg { -v } else { v }
}

/// A cursor over the first fields of a record line (bytes; no allocation).
struct Fields<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Fields<'a> {
    fn skip_sep(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t') {
            self.i += 1;
        }
    }

    /// A quoted string's raw bytes (doubled quotes left doubled).
    fn quoted(&mut self) -> Option<&'a [u8]> {
        self.skip_sep();
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let mut j = start;
        loop {
            match self.b.get(j)? {
                b'"' if self.b.get(j + 1) == Some(&b'"') => j += 2,
                b'"' => break,
                _ => j += 1,
            }
        }
        self.i = j + 1;
        Some(&self.b[start..j])
    }

    /// An unquoted token.
    fn token(&mut self) -> Option<&'a [u8]> {
        self.skip_sep();
        let start = self.i;
        while self.i < self.b.len() && !matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }

    fn int(&mut self) -> Option<u64> {
        let t = self.token()?;
        std::str::from_utf8(t).ok()?.parse().ok()
    }
}

/// The job id of a record line as LSF's index writer sees it (`getJobIdFromEvent`):
/// `None` for comments, records that are not about a job, and lines it cannot read.
pub fn line_job_id(line: &[u8]) -> Option<u64> {
    let mut f = Fields { b: line, i: 0 };
    f.skip_sep();
    if f.b.get(f.i) == Some(&b'#') {
        return None;
    }
    let kind = f.quoted()?;
    f.quoted()?; // version
    f.token()?; // event time
    let id = match kind {
        b"JOB_NEW" | b"JOB_MODIFY" | b"PRE_EXEC_START" | b"JOB_START" | b"JOB_START_ACCEPT"
        | b"JOB_STATUS" | b"SBD_JOB_STATUS" | b"JOB_FINISH" | b"CHKPNT" | b"MIG"
        | b"JOB_ATTR_SET" | b"JOB_SIGNAL" | b"JOB_EXECUTE" | b"JOB_MSG" | b"JOB_MSG_ACK"
        | b"JOB_SIGACT" | b"JOB_REQUEUE" | b"JOB_CLEAN" | b"JOB_FORCE" => f.int()?,
        b"JOB_MODIFY2" => {
            let s = f.quoted()?;
            let end = s
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(s.len());
            std::str::from_utf8(&s[..end]).ok()?.parse().ok()?
        }
        b"JOB_SWITCH" | b"JOB_MOVE" => {
            f.token()?; // userId
            f.int()?
        }
        _ => return None,
    };
    (id != 0).then_some(id)
}

/// Scan one old event file: its header time stamp and the ids of every job it mentions.
pub fn scan_event_file(path: &Path) -> Result<IndexRow, IndexError> {
    let data = fs::read(path).map_err(|e| io_err(path, "read", e))?;
    let time_stamp = parse_time_header(&data);
    let mut ids = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        if let Some(id) = line_job_id(line) {
            ids.push(id);
        }
    }
    Ok(IndexRow::new(time_stamp, ids))
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
mod tests {
    use super::*;
    use crate::record::parse_line;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
    }

    fn write(path: &Path, text: &str) {
        fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    fn job_new(id: u64, t: i64) -> String {
        format!(
            "\"JOB_NEW\" \"40\" {t} {id} 0 2 1 {t} 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"{t}.{id}\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n"
        )
    }

    /// An old event file with a `#<time>` header and jobs `ids`.
    fn old_file(t: i64, ids: &[u64]) -> String {
        let mut s = format!("#{t:<37}\n");
        for id in ids {
            s.push_str(&job_new(*id, t - 10));
            s.push_str(&format!("\"JOB_CLEAN\" \"40\" {t} {id} 0\n"));
        }
        s.push_str(&format!("\"LOG_SWITCH\" \"40\" {t} 999\n"));
        s
    }

    #[test]
    fn job_ids_of_every_job_record_kind() {
        let lines = [
            (job_new(101, 5), Some(101)),
            (
                "\"JOB_START\" \"40\" 1795339540 102 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\""
                    .to_owned(),
                Some(102),
            ),
            (
                "\"JOB_SWITCH\" \"22\" 1795342025 0 5 \"lowq\" 0 \"root\"".to_owned(),
                Some(5),
            ),
            (
                "\"JOB_MOVE\" \"22\" 1795342025 0 6 1 1 0 \"root\"".to_owned(),
                Some(6),
            ),
            (
                "\"JOB_FORCE\" \"22\" 1795342025 7 0 0 1 1  \"vm\" \"root\"".to_owned(),
                Some(7),
            ),
            (
                "\"JOB_MODIFY2\" \"40\" 1795339586 \"103[1-3]\" 8388609 4096 0 0 \"root\""
                    .to_owned(),
                Some(103),
            ),
            ("\"CHKPNT\" \"40\" 1795339586 104 1 2".to_owned(), Some(104)),
            (
                "\"JOB_CLEAN\" \"40\" 1795341358 521 0".to_owned(),
                Some(521),
            ),
            ("\"LOG_SWITCH\" \"40\" 1795341347 623".to_owned(), None),
            (
                "\"QUEUE_CTRL\" \"40\" 1795342025 2 \"lowq\" 0 \"root\" \"\"".to_owned(),
                None,
            ),
            ("#168                                  ".to_owned(), None),
            ("garbage".to_owned(), None),
            ("\"JOB_STATUS\" \"40\" 1795339540".to_owned(), None),
            ("\"JOB_CLEAN\" \"40\" 1795341358 0 0".to_owned(), None),
        ];
        for (line, want) in &lines {
            assert_eq!(line_job_id(line.as_bytes()), *want, "{line}");
            // Agrees with the full parser wherever the full parser knows the type.
            if let Ok(Some(r)) = parse_line(line)
                && !matches!(r, crate::Record::Unknown { .. })
                && want.is_some()
            {
                assert_eq!(r.job_id(), *want, "{line}");
            }
        }
    }

    #[test]
    fn text_round_trip_and_layout() {
        let rows = vec![
            IndexRow::new(1_795_341_347, (101..=122).rev()),
            IndexRow::new(1_795_341_359, [522, 521, 420, 419, 521]),
            IndexRow::new(0, []),
        ];
        let index = JobIdIndex::new(1_795_341_360, rows);
        let text = index.to_text();
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first.len(), HEADER_LEN - 1);
        assert!(first.starts_with("#LSF_JOBID_INDEX_FILE 10.1 3 1795341360 "));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "#1795341347 22 101 122");
        assert_eq!(lines[2], "122 121 120 119 118 117 116 115 114 113");
        assert_eq!(lines[4], "102 101");
        assert_eq!(lines[5], "#1795341359 4 419 522");
        assert_eq!(lines[6], "522 521 420 419");
        assert_eq!(lines[7], "#0 0 0 0");
        assert_eq!(lines.len(), 8);
        assert_eq!(JobIdIndex::parse(&text), Ok(index));
    }

    #[test]
    fn reads_openlava_files_and_rejects_broken_ones() {
        // OpenLava's min/max bug (both the same) and its integer version.
        let text = "#LSF_JOBID_INDEX_FILE 40 1 1795341359                                        \n#1795341347 3 101 101\n522 521 101\n";
        let index = JobIdIndex::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(index.version, "40");
        assert!(index.rows[0].contains(521) && index.rows[0].contains(101));
        assert!(!index.rows[0].contains(102));
        assert_eq!(
            (index.rows[0].min_job_id(), index.rows[0].max_job_id()),
            (101, 522)
        );
        for (bad, line) in [
            ("", 1),
            ("#LSF_JOBID_INDEX 40 1 5\n", 1),
            ("#LSF_JOBID_INDEX_FILE 40 x 5\n", 1),
            ("#LSF_JOBID_INDEX_FILE 40 1 5\n1 2 3\n", 2),
            ("#LSF_JOBID_INDEX_FILE 40 1 5\n#7 2 1 2\n1 x\n", 3),
            ("#LSF_JOBID_INDEX_FILE 40 1 5\n#7 2 1 2\n1 2 3\n", 3),
            ("#LSF_JOBID_INDEX_FILE 40 2 5\n#7 0 0 0\n", 3),
        ] {
            match JobIdIndex::parse(bad) {
                Err((l, _)) => assert_eq!(l, line, "{bad:?}"),
                Ok(i) => panic!("{bad:?} parsed as {i:?}"),
            }
        }
    }

    #[test]
    fn rebuild_writes_one_row_per_old_file_oldest_first() {
        let dir = tmp();
        let d = dir.path();
        write(
            &d.join("lsb.events"),
            &format!("#{:<37}\n{}", 39, job_new(9, 1)),
        );
        write(&d.join("lsb.events.2"), &old_file(1000, &[1, 2, 3]));
        write(&d.join("lsb.events.1"), &old_file(2000, &[3, 4]));
        write(&d.join("lsb.events.0"), &old_file(3000, &[5]));
        let report = rebuild_at(d, 4000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            report,
            IndexReport {
                rows: 2,
                scanned: 2,
                incremental: false
            }
        );
        let text = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
        assert!(text.starts_with("#LSF_JOBID_INDEX_FILE 10.1 2 4000 "));
        assert!(text.contains("\n#1000 3 1 3\n3 2 1\n#2000 2 3 4\n4 3\n"));
        assert!(!d.join("lsb.events.index.tmp").exists());

        assert_eq!(
            lookup(d, &[4]).unwrap_or_default(),
            Some(vec![d.join("lsb.events.1")])
        );
        assert_eq!(
            lookup(d, &[3]).unwrap_or_default(),
            Some(vec![d.join("lsb.events.2"), d.join("lsb.events.1")])
        );
        assert_eq!(lookup(d, &[9]).unwrap_or_default(), Some(vec![]));
    }

    #[test]
    fn gaps_get_empty_rows() {
        let dir = tmp();
        let d = dir.path();
        write(&d.join("lsb.events.3"), &old_file(1000, &[1]));
        write(&d.join("lsb.events.1"), &old_file(3000, &[3]));
        rebuild_at(d, 4000).unwrap_or_else(|e| panic!("{e}"));
        let index = JobIdIndex::read(d)
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("no index"));
        assert_eq!(index.rows.len(), 3);
        assert_eq!(index.rows[1], IndexRow::default());
        assert_eq!(
            lookup(d, &[1, 3]).unwrap_or_default(),
            Some(vec![d.join("lsb.events.3"), d.join("lsb.events.1")])
        );
    }

    #[test]
    fn incremental_update_after_a_switch() {
        let dir = tmp();
        let d = dir.path();
        write(&d.join("lsb.events.1"), &old_file(1000, &[1, 2]));
        rebuild_at(d, 1001).unwrap_or_else(|e| panic!("{e}"));
        // A switch: .1 -> .2, a new .1.
        fs::rename(d.join("lsb.events.1"), d.join("lsb.events.2")).unwrap_or_default();
        write(&d.join("lsb.events.1"), &old_file(2000, &[2, 3]));
        let r = update_after_switch_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.incremental && r.scanned == 1 && r.rows == 2, "{r:?}");
        let incremental = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
        rebuild_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
        let full = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
        assert_eq!(incremental, full);

        // A switch the index missed: two new files at once -> full rebuild.
        fs::rename(d.join("lsb.events.2"), d.join("lsb.events.4")).unwrap_or_default();
        fs::rename(d.join("lsb.events.1"), d.join("lsb.events.3")).unwrap_or_default();
        write(&d.join("lsb.events.2"), &old_file(3000, &[4]));
        write(&d.join("lsb.events.1"), &old_file(4000, &[5]));
        let r = update_after_switch_at(d, 4001).unwrap_or_else(|e| panic!("{e}"));
        assert!(!r.incremental && r.scanned == 4, "{r:?}");

        // A row whose time stamp no longer matches its file -> full rebuild.
        fs::rename(d.join("lsb.events.4"), d.join("lsb.events.5")).unwrap_or_default();
        fs::rename(d.join("lsb.events.3"), d.join("lsb.events.4")).unwrap_or_default();
        fs::rename(d.join("lsb.events.2"), d.join("lsb.events.3")).unwrap_or_default();
        write(&d.join("lsb.events.2"), &old_file(4500, &[5]));
        write(&d.join("lsb.events.1"), &old_file(5000, &[6]));
        let r = update_after_switch_at(d, 5001).unwrap_or_else(|e| panic!("{e}"));
        assert!(!r.incremental, "{r:?}");
        assert_eq!(
            lookup(d, &[5]).unwrap_or_default(),
            Some(vec![d.join("lsb.events.2")])
        );

        // A damaged index is rebuilt.
        write(&d.join(INDEX_FILE), "junk\n");
        assert!(JobIdIndex::read(d).is_err());
        assert_eq!(lookup(d, &[5]).unwrap_or_default(), None);
        let r = update_after_switch_at(d, 6000).unwrap_or_else(|e| panic!("{e}"));
        assert!(!r.incremental && r.rows == 5, "{r:?}");
    }

    #[test]
    fn lookup_needs_an_index_that_matches_the_files() {
        let dir = tmp();
        let d = dir.path();
        assert_eq!(lookup(d, &[1]).unwrap_or_default(), None);
        write(&d.join("lsb.events.2"), &old_file(1000, &[1]));
        write(&d.join("lsb.events.1"), &old_file(2000, &[2]));
        rebuild_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
        assert!(lookup(d, &[1]).unwrap_or_default().is_some());
        // A switch without an index update: the rows no longer match.
        fs::rename(d.join("lsb.events.2"), d.join("lsb.events.3")).unwrap_or_default();
        fs::rename(d.join("lsb.events.1"), d.join("lsb.events.2")).unwrap_or_default();
        write(&d.join("lsb.events.1"), &old_file(3000, &[3]));
        assert_eq!(lookup(d, &[1]).unwrap_or_default(), None);

        // Rows newest first (event-log.md's wording) are understood too.
        let rows = vec![
            IndexRow::new(3000, [3]),
            IndexRow::new(2000, [2]),
            IndexRow::new(1000, [1]),
        ];
        JobIdIndex::new(3001, rows)
            .write(d)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            lookup(d, &[1]).unwrap_or_default(),
            Some(vec![d.join("lsb.events.3")])
        );
    }

    #[test]
    fn lookup_reads_only_the_rows_that_can_hold_the_ids() {
        let wanted = |v: &[u64]| v.iter().copied().collect::<BTreeSet<u64>>();
        // OpenLava's min == max: the ids are read.
        let ol = "#LSF_JOBID_INDEX_FILE 40 2 9\n#5 3 101 101\n522 521 101\n#6 0 0 0\n";
        let rows = scan_for(ol, &wanted(&[521])).unwrap_or_default();
        assert_eq!(
            rows,
            vec![
                RowHit {
                    time_stamp: 5,
                    nonempty: true,
                    hit: true
                },
                RowHit {
                    time_stamp: 6,
                    nonempty: false,
                    hit: false
                }
            ]
        );
        // Basalt's rows: a row whose range excludes the ids is skipped unread (a bad id
        // there is not even seen), a row whose range includes them is read.
        let b = "#LSF_JOBID_INDEX_FILE 10.1 2 9\n#5 2 1 2\n2 x\n#6 2 10 12\n12 10\n";
        let rows = scan_for(b, &wanted(&[10])).unwrap_or_default();
        assert_eq!(
            rows.iter().map(|r| r.hit).collect::<Vec<_>>(),
            vec![false, true]
        );
        assert_eq!(scan_for(b, &wanted(&[1])), None);
        let rows = scan_for(b, &wanted(&[11])).unwrap_or_default();
        assert_eq!(
            rows.iter().map(|r| r.hit).collect::<Vec<_>>(),
            vec![false, false]
        );
        assert_eq!(
            scan_for("#LSF_JOBID_INDEX_FILE 10.1 3 9\n#5 0 0 0\n", &wanted(&[1])),
            None
        );
    }

    #[test]
    fn header_times() {
        assert_eq!(
            parse_time_header(b"#1795341359                       \n"),
            1_795_341_359
        );
        assert_eq!(parse_time_header(b"#80\n"), 80);
        assert_eq!(parse_time_header(b"\"JOB_NEW\""), 0);
        assert_eq!(parse_time_header(b""), 0);
    }
}
