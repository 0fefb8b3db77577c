//! The files: the durable appenders for `lsb.events` ([`EventLog`]) and `lsb.acct`
//! ([`AcctLog`]), and the read-only readers used by `bhist` and `bacct`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::record::{JobFinish, Record, parse_line};

/// The current event log's file name.
pub const EVENTS_FILE: &str = "lsb.events";
/// The accounting log's file name.
pub const ACCT_FILE: &str = "lsb.acct";
/// Length of the header line of a fresh `lsb.events` (newline included); the offset it
/// holds is this length, i.e. just past the header.
pub const FRESH_HEADER_LEN: u64 = 80;

/// The header line of a fresh `lsb.events`: `#80`, space-padded to 79 characters, and a
/// newline (80 bytes, volclava's format).
pub fn fresh_header() -> String {
    format!(
        "#{:<width$}\n",
        FRESH_HEADER_LEN,
        width = FRESH_HEADER_LEN as usize - 2
    )
}

/// The offset held by a header line (`#<offset>` followed by spaces), if it is one.
pub fn parse_header(line: &str) -> Option<u64> {
    let rest = line.strip_prefix('#')?;
    let digits = rest.trim_end_matches(['\n', '\r', ' ', '\t']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Counters of an appender, for metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendStats {
    /// Successful `append` calls that wrote something.
    pub appends: u64,
    /// Records written.
    pub records: u64,
    /// `fdatasync` calls that succeeded.
    pub syncs: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// How an append reaches the disk before it returns (lsb.params `BASALT_EVENT_SYNC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// `fdatasync` after every group of records (the default: the data and the file size
    /// are durable, which is all a reader needs).
    #[default]
    Fdatasync,
    /// `fsync` after every group (also flushes timestamps; slower on some filesystems).
    Fsync,
    /// No sync: the records are in the page cache only. A machine crash can lose
    /// acknowledged jobs. For benchmarks and throw-away clusters only.
    None,
}

impl SyncPolicy {
    /// The keyword as written in lsb.params.
    pub fn keyword(self) -> &'static str {
        match self {
            SyncPolicy::Fdatasync => "fdatasync",
            SyncPolicy::Fsync => "fsync",
            SyncPolicy::None => "none",
        }
    }
}

impl std::str::FromStr for SyncPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fdatasync" | "y" | "yes" => Ok(SyncPolicy::Fdatasync),
            "fsync" => Ok(SyncPolicy::Fsync),
            "none" | "n" | "no" => Ok(SyncPolicy::None),
            other => Err(format!(
                "{other:?} is not a sync policy (fdatasync, fsync or none)"
            )),
        }
    }
}

/// What the appender needs from a file; a trait so that tests can inject failures.
pub(crate) trait Sink {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    fn sync_data(&mut self) -> io::Result<()>;
    fn sync_all(&mut self) -> io::Result<()> {
        self.sync_data()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl Sink for File {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        Write::write_all(self, buf)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn sync_all(&mut self) -> io::Result<()> {
        File::sync_all(self)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

/// Append-with-rollback, shared by both logs.
pub(crate) struct Appender<S: Sink> {
    path: PathBuf,
    sink: S,
    /// Length of the file's durable, complete content.
    len: u64,
    broken: Option<String>,
    stats: AppendStats,
    sync: SyncPolicy,
}

impl<S: Sink> Appender<S> {
    pub(crate) fn new(path: PathBuf, sink: S, len: u64) -> Self {
        Appender {
            path,
            sink,
            len,
            broken: None,
            stats: AppendStats::default(),
            sync: SyncPolicy::default(),
        }
    }

    /// Write `buf` (whole lines) with one write and one fdatasync. On failure the file is
    /// cut back to its previous length, so no partial line stays behind; if even that
    /// fails, the appender refuses further appends ([`EventLogError::Poisoned`]).
    pub(crate) fn append(&mut self, buf: &[u8], records: usize) -> Result<(), EventLogError> {
        if let Some(reason) = &self.broken {
            return Err(EventLogError::Poisoned {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        if buf.is_empty() {
            return Ok(());
        }
        let res = match self.sink.write_all(buf) {
            Ok(()) => match self.sync {
                SyncPolicy::Fdatasync => self.sink.sync_data().map_err(|e| ("fdatasync", e)),
                SyncPolicy::Fsync => self.sink.sync_all().map_err(|e| ("fsync", e)),
                SyncPolicy::None => Ok(()),
            },
            Err(e) => Err(("write", e)),
        };
        match res {
            Ok(()) => {
                self.len += buf.len() as u64;
                self.stats.appends += 1;
                if self.sync != SyncPolicy::None {
                    self.stats.syncs += 1;
                }
                self.stats.records += records as u64;
                self.stats.bytes += buf.len() as u64;
                Ok(())
            }
            Err((op, e)) => {
                let undo = self
                    .sink
                    .set_len(self.len)
                    .and_then(|()| self.sink.sync_data());
                if let Err(e2) = undo {
                    self.broken = Some(format!(
                        "{op} failed ({e}) and cutting the file back to {} bytes failed ({e2})",
                        self.len
                    ));
                }
                Err(EventLogError::io(&self.path, op, e))
            }
        }
    }
}

fn fsync_dir(dir: &Path) -> Result<(), EventLogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| EventLogError::io(dir, "fsync directory", e))
}

fn create_logdir(logdir: &Path) -> Result<(), EventLogError> {
    fs::create_dir_all(logdir).map_err(|e| EventLogError::io(logdir, "create directory", e))
}

fn open_for_append(path: &Path) -> Result<File, EventLogError> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| EventLogError::io(path, "open", e))
}

/// A readable rendering of bytes cut from a torn tail (bounded in size).
fn describe_cut(bytes: &[u8]) -> String {
    const MAX: usize = 4096;
    let shown = &bytes[..bytes.len().min(MAX)];
    let mut s = String::from_utf8_lossy(shown).into_owned();
    if bytes.len() > MAX {
        s.push_str(&format!("... ({} bytes in all)", bytes.len()));
    }
    s
}

/// Cut `file` back to `len` durably.
fn cut(file: &File, path: &Path, len: u64) -> Result<(), EventLogError> {
    file.set_len(len)
        .and_then(|()| file.sync_all())
        .map_err(|e| EventLogError::io(path, "truncate torn tail", e))
}

// ----------------------------------------------------------------------------- EventLog

/// What [`EventLog::open`] found in the existing file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// Every record of the file, in order (unknown types included as
    /// [`Record::Unknown`]).
    pub records: Vec<Record>,
    /// The text of an incomplete last line (a crash in the middle of a write) that was cut
    /// off the file, if any.
    pub torn_tail: Option<String>,
    /// The byte offset at which the torn tail began (the file's new length).
    pub torn_offset: Option<u64>,
    /// The header's offset: where the events new to this file begin (records before it were
    /// carried over by a log switch). 0 when the file has no header.
    pub header_offset: u64,
    /// The file was missing or empty and a fresh header was written.
    pub fresh: bool,
}

/// Like [`Replay`] without the records, for [`EventLog::open_with`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenInfo {
    /// Number of records passed to the visitor.
    pub records: usize,
    pub torn_tail: Option<String>,
    /// The byte offset at which the torn tail began (the file's new length).
    pub torn_offset: Option<u64>,
    pub header_offset: u64,
    pub fresh: bool,
}

/// The writer of `lsb.events`: mbatchd's durable state.
///
/// Open it (after taking the [`crate::EventLock`]) with [`EventLog::open`], which returns
/// the records to replay, then call [`EventLog::append`] once per scheduling-loop iteration
/// with the records of that iteration: they reach the disk with one `write` and one
/// `fdatasync` (group commit) before the call returns.
pub struct EventLog {
    inner: Appender<File>,
    header_offset: u64,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog")
            .field("path", &self.inner.path)
            .field("len", &self.inner.len)
            .field("header_offset", &self.header_offset)
            .finish()
    }
}

impl EventLog {
    /// Open `logdir/lsb.events` for appending, creating `logdir` and the file (with a fresh
    /// header) when missing, and read every record in it.
    ///
    /// An incomplete last line is cut off and reported in [`Replay::torn_tail`]. A complete
    /// line that does not parse is an [`EventLogError::Damaged`] error naming the file and
    /// line: the caller must not start over it.
    pub fn open(logdir: &Path) -> Result<(EventLog, Replay), EventLogError> {
        let mut records = Vec::new();
        let (log, info) = EventLog::open_with(logdir, |r| records.push(r))?;
        Ok((
            log,
            Replay {
                records,
                torn_tail: info.torn_tail,
                torn_offset: info.torn_offset,
                header_offset: info.header_offset,
                fresh: info.fresh,
            },
        ))
    }

    /// Like [`EventLog::open`], handing each record to `visit` instead of collecting them
    /// (replay of a large log without holding it in memory).
    pub fn open_with(
        logdir: &Path,
        mut visit: impl FnMut(Record),
    ) -> Result<(EventLog, OpenInfo), EventLogError> {
        create_logdir(logdir)?;
        let path = logdir.join(EVENTS_FILE);
        let file = open_for_append(&path)?;
        let mut info = OpenInfo::default();

        let mut reader = BufReader::with_capacity(1 << 16, &file);
        reader
            .seek(SeekFrom::Start(0))
            .map_err(|e| EventLogError::io(&path, "seek", e))?;
        let mut buf = Vec::with_capacity(1024);
        let mut pos: u64 = 0;
        let mut line_no = 0usize;
        // The header's offset is honoured only if it falls on a line boundary (OpenLava 4
        // writes a bare "#80" whose offset is wrong until the first switch).
        let mut header_len: Option<u64> = None;
        let mut offset_ok = false;
        loop {
            if header_len.is_some() && pos == info.header_offset {
                offset_ok = true;
            }
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| EventLogError::io(&path, "read", e))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if buf.last() != Some(&b'\n') {
                // A crash in the middle of a write: cut the partial line off.
                info.torn_tail = Some(describe_cut(&buf));
                info.torn_offset = Some(pos);
                cut(&file, &path, pos)?;
                break;
            }
            let text = String::from_utf8_lossy(&buf);
            if line_no == 1
                && let Some(off) = parse_header(&text)
            {
                info.header_offset = off;
                header_len = Some(n as u64);
            }
            match parse_line(&text) {
                Ok(Some(rec)) => {
                    info.records += 1;
                    visit(rec);
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(EventLogError::Damaged {
                        path,
                        line: line_no,
                        offset: pos,
                        message: e.to_string(),
                    });
                }
            }
            pos += n as u64;
        }
        drop(reader);
        if let Some(hl) = header_len
            && !offset_ok
        {
            info.header_offset = hl;
        }

        let mut file = file;
        if pos == 0 {
            let header = fresh_header();
            Write::write_all(&mut file, header.as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| EventLogError::io(&path, "write header", e))?;
            fsync_dir(logdir)?;
            pos = header.len() as u64;
            info.header_offset = FRESH_HEADER_LEN;
            info.fresh = true;
        }
        let header_offset = info.header_offset;
        Ok((
            EventLog {
                inner: Appender::new(path, file, pos),
                header_offset,
            },
            info,
        ))
    }

    /// Append `records` durably: one `write` of all their lines, then one `fdatasync`.
    /// On error nothing of this call stays in the file (it is cut back), and the records
    /// must be treated as not logged.
    pub fn append(&mut self, records: &[Record]) -> Result<(), EventLogError> {
        let mut buf = String::with_capacity(records.len() * 200);
        for r in records {
            r.write_line(&mut buf);
            buf.push('\n');
        }
        self.inner.append(buf.as_bytes(), records.len())
    }

    /// Start a new `lsb.events` (event-log.md §6).
    ///
    /// The history (the bytes from the header's offset to the end) becomes
    /// `lsb.events.1` with a `#<now>` header, older files move up (`.N` → `.N+1`), and the
    /// new `lsb.events` holds `carried` (the records of every job still in memory, and the
    /// LOG_SWITCH/LOAD_INDEX records, chosen by the caller) before its header's offset,
    /// then `appended` (the current host/queue control state and `LOG_SWITCH
    /// <lastJobId>`). The new file replaces the old one by an atomic rename.
    ///
    /// The order is crash-safe: the history is archived and rotated before the current
    /// file is replaced, so a crash at any point loses nothing (at worst `bhist` sees the
    /// archived history twice until the next switch). `lsb.events.index` is not
    /// maintained; readers go through all files from [`event_files`].
    pub fn switch(
        &mut self,
        now: i64,
        carried: &[Record],
        appended: &[Record],
    ) -> Result<SwitchReport, EventLogError> {
        if let Some(reason) = &self.inner.broken {
            return Err(EventLogError::Poisoned {
                path: self.inner.path.clone(),
                reason: reason.clone(),
            });
        }
        let path = self.inner.path.clone();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };

        // 1. The history, into lsb.events.0.
        let len = self.inner.len;
        let start = self.header_offset.min(len);
        let zero = dir.join(format!("{EVENTS_FILE}.0"));
        let archived = (|| -> io::Result<()> {
            let mut out = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&zero)?;
            Write::write_all(&mut out, switched_header(now).as_bytes())?;
            let mut buf = vec![0u8; 1 << 20];
            let mut pos = start;
            while pos < len {
                let n = ((len - pos) as usize).min(buf.len());
                self.inner.sink.read_exact_at(&mut buf[..n], pos)?;
                Write::write_all(&mut out, &buf[..n])?;
                pos += n as u64;
            }
            out.sync_all()
        })();
        archived.map_err(|e| EventLogError::io(&zero, "archive history", e))?;

        // 2. Rotation: .N -> .N+1 (highest first), then .0 -> .1.
        let mut rotated = 0;
        let mut olds: Vec<u64> = numbered(&dir, EVENTS_FILE)?
            .into_iter()
            .filter_map(|(k, _)| k.filter(|&n| n > 0))
            .collect();
        olds.sort_unstable_by(|a, b| b.cmp(a));
        for n in olds {
            let from = dir.join(format!("{EVENTS_FILE}.{n}"));
            let to = dir.join(format!("{EVENTS_FILE}.{}", n + 1));
            fs::rename(&from, &to).map_err(|e| EventLogError::io(&from, "rotate", e))?;
            rotated += 1;
        }
        let one = dir.join(format!("{EVENTS_FILE}.1"));
        fs::rename(&zero, &one).map_err(|e| EventLogError::io(&zero, "rotate", e))?;
        fsync_dir(&dir)?;

        // 3. The new lsb.events, written aside and renamed over the old one.
        let mut body = String::with_capacity((carried.len() + appended.len()) * 200);
        for r in carried {
            r.write_line(&mut body);
            body.push('\n');
        }
        let offset = switched_header(0).len() as u64 + body.len() as u64;
        let mut content = switched_header(offset);
        content.push_str(&body);
        for r in appended {
            r.write_line(&mut content);
            content.push('\n');
        }
        let tmp = dir.join(format!("{EVENTS_FILE}.tmp"));
        let written = (|| -> io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            Write::write_all(&mut f, content.as_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(EventLogError::io(&tmp, "write new event log", e));
        }
        fs::rename(&tmp, &path).map_err(|e| EventLogError::io(&path, "replace", e))?;

        // 4. From here on the old handle points at the replaced file: any failure must stop
        //    further appends through it.
        let reopened = fsync_dir(&dir).and_then(|()| open_for_append(&path));
        match reopened {
            Ok(file) => {
                let stats = self.inner.stats;
                self.inner = Appender::new(path, file, content.len() as u64);
                self.inner.stats = stats;
                self.header_offset = offset;
                Ok(SwitchReport {
                    archived_bytes: len - start,
                    rotated,
                    header_offset: offset,
                })
            }
            Err(e) => {
                self.inner.broken = Some(format!("reopening after a log switch failed: {e}"));
                Err(e)
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Size of the file's complete content in bytes.
    pub fn size(&self) -> u64 {
        self.inner.len
    }

    /// The header's offset (see [`Replay::header_offset`]).
    pub fn header_offset(&self) -> u64 {
        self.header_offset
    }

    /// Counters since open.
    pub fn stats(&self) -> AppendStats {
        self.inner.stats
    }

    /// How appends reach the disk (default [`SyncPolicy::Fdatasync`]).
    pub fn set_sync(&mut self, sync: SyncPolicy) {
        self.inner.sync = sync;
    }

    /// Why the log accepts no more appends (a failed append could not be undone), if so.
    pub fn broken(&self) -> Option<&str> {
        self.inner.broken.as_deref()
    }
}

/// What [`EventLog::switch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchReport {
    /// Bytes of history moved to `lsb.events.1`.
    pub archived_bytes: u64,
    /// Older files renamed `.N` → `.N+1`.
    pub rotated: usize,
    /// The new file's header offset (where the records new to it begin).
    pub header_offset: u64,
}

/// The header line written by a switch: `#<value>` padded to 38 characters and a newline
/// (an offset in `lsb.events`, a timestamp in `lsb.events.N`).
fn switched_header(value: impl std::fmt::Display) -> String {
    format!("#{value:<37}\n")
}

// ------------------------------------------------------------------------------ AcctLog

/// The writer of `lsb.acct`: `JOB_FINISH` records only, no header line, append-only.
pub struct AcctLog {
    inner: Appender<File>,
}

impl std::fmt::Debug for AcctLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcctLog")
            .field("path", &self.inner.path)
            .field("len", &self.inner.len)
            .finish()
    }
}

impl AcctLog {
    /// Open `logdir/lsb.acct` for appending (creating it when missing). The file is not
    /// read except for its end: an incomplete last line is cut off and returned.
    pub fn open(logdir: &Path) -> Result<(AcctLog, Option<String>), EventLogError> {
        create_logdir(logdir)?;
        let path = logdir.join(ACCT_FILE);
        let file = open_for_append(&path)?;
        let len = file
            .metadata()
            .map_err(|e| EventLogError::io(&path, "stat", e))?
            .len();
        if len == 0 {
            fsync_dir(logdir)?;
        }
        let mut torn = None;
        let mut complete = len;
        if len > 0 {
            let mut last = [0u8; 1];
            file.read_exact_at(&mut last, len - 1)
                .map_err(|e| EventLogError::io(&path, "read", e))?;
            if last[0] != b'\n' {
                complete = last_line_end(&file, &path, len)?;
                let shown = (len - complete).min(8192) as usize;
                let mut cutbytes = vec![0u8; shown];
                file.read_exact_at(&mut cutbytes, complete)
                    .map_err(|e| EventLogError::io(&path, "read", e))?;
                let mut text = describe_cut(&cutbytes);
                if len - complete > shown as u64 {
                    text.push_str(&format!("... ({} bytes in all)", len - complete));
                }
                torn = Some(text);
                cut(&file, &path, complete)?;
            }
        }
        Ok((
            AcctLog {
                inner: Appender::new(path, file, complete),
            },
            torn,
        ))
    }

    /// Append `records` durably (one write, one fdatasync); see [`EventLog::append`].
    pub fn append(&mut self, records: &[JobFinish]) -> Result<(), EventLogError> {
        let mut buf = String::with_capacity(records.len() * 400);
        for r in records {
            r.write_line(&mut buf);
            buf.push('\n');
        }
        self.inner.append(buf.as_bytes(), records.len())
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Size of the file's complete content in bytes.
    pub fn size(&self) -> u64 {
        self.inner.len
    }

    pub fn stats(&self) -> AppendStats {
        self.inner.stats
    }

    /// How appends reach the disk (default [`SyncPolicy::Fdatasync`]).
    pub fn set_sync(&mut self, sync: SyncPolicy) {
        self.inner.sync = sync;
    }
}

/// Offset just past the last newline before `len` (0 when there is none).
fn last_line_end(file: &File, path: &Path, len: u64) -> Result<u64, EventLogError> {
    const BLOCK: u64 = 64 * 1024;
    let mut end = len;
    let mut block = vec![0u8; BLOCK as usize];
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let chunk = &mut block[..(end - start) as usize];
        file.read_exact_at(chunk, start)
            .map_err(|e| EventLogError::io(path, "read", e))?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

// ------------------------------------------------------------------------------ readers

/// A read-only reader of an event or accounting file (`bhist`, `bacct`), yielding records
/// in file order. It never modifies the file: an incomplete last line (a writer crashed or
/// is in the middle of a write) is skipped and available from
/// [`EventReader::torn_tail`]. A damaged line yields an [`EventLogError::Damaged`] item
/// and reading continues with the next line. Unknown record types are skipped unless
/// [`EventReader::include_unknown`] is set.
pub struct EventReader {
    path: PathBuf,
    reader: BufReader<File>,
    buf: Vec<u8>,
    line: usize,
    include_unknown: bool,
    finished: bool,
    torn_tail: Option<String>,
    /// Bytes consumed so far.
    pos: u64,
    /// Where the line of the last item began.
    last_offset: u64,
}

impl std::fmt::Debug for EventReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventReader")
            .field("path", &self.path)
            .field("line", &self.line)
            .finish()
    }
}

impl EventReader {
    /// Open a file for reading.
    pub fn open(path: &Path) -> Result<EventReader, EventLogError> {
        let file = File::open(path).map_err(|e| EventLogError::io(path, "open", e))?;
        Ok(EventReader {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 16, file),
            buf: Vec::with_capacity(1024),
            line: 0,
            include_unknown: false,
            finished: false,
            torn_tail: None,
            pos: 0,
            last_offset: 0,
        })
    }

    /// Also yield [`Record::Unknown`] records.
    pub fn include_unknown(mut self, yes: bool) -> Self {
        self.include_unknown = yes;
        self
    }

    /// Skip the records a log switch carried over into the current `lsb.events` (those
    /// before its header's offset). Use it for the current file when reading history over
    /// several files: the carried-over records are also in `lsb.events.1`. Not for
    /// `lsb.events.N`, whose header holds a timestamp rather than an offset.
    pub fn skip_carried_over(mut self) -> Result<Self, EventLogError> {
        let Some(first) = self.read_raw_line()? else {
            return Ok(self);
        };
        let Some(offset) = parse_header(&String::from_utf8_lossy(&first)) else {
            // No header: nothing is known to be carried over. Start again from the top.
            self.reader
                .seek(SeekFrom::Start(0))
                .map_err(|e| EventLogError::io(&self.path, "seek", e))?;
            self.line = 0;
            self.pos = 0;
            return Ok(self);
        };
        let first_len = first.len() as u64;
        let mut pos = first_len;
        while pos < offset {
            match self.read_raw_line()? {
                Some(l) if l.last() == Some(&b'\n') => pos += l.len() as u64,
                _ => break,
            }
        }
        if pos != offset {
            // Not on a line boundary (OpenLava 4's bare "#80"): the offset is meaningless,
            // so every record is taken as new.
            self.reader
                .seek(SeekFrom::Start(first_len))
                .map_err(|e| EventLogError::io(&self.path, "seek", e))?;
            self.line = 1;
            self.pos = first_len;
        }
        Ok(self)
    }

    /// The incomplete last line seen, if any (after iteration has reached it).
    pub fn torn_tail(&self) -> Option<&str> {
        self.torn_tail.as_deref()
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The byte offset of the line the last item came from (a record, a damaged line or
    /// the torn tail).
    pub fn offset(&self) -> u64 {
        self.last_offset
    }

    /// The 1-based line number of the last item.
    pub fn line(&self) -> usize {
        self.line
    }

    fn read_raw_line(&mut self) -> Result<Option<Vec<u8>>, EventLogError> {
        let mut v = Vec::new();
        let n = self
            .reader
            .read_until(b'\n', &mut v)
            .map_err(|e| EventLogError::io(&self.path, "read", e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.pos += n as u64;
        Ok(Some(v))
    }
}

impl Iterator for EventReader {
    type Item = Result<Record, EventLogError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.finished {
                return None;
            }
            self.buf.clear();
            let n = match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(e) => {
                    self.finished = true;
                    return Some(Err(EventLogError::io(&self.path, "read", e)));
                }
            };
            if n == 0 {
                self.finished = true;
                return None;
            }
            self.line += 1;
            self.last_offset = self.pos;
            self.pos += n as u64;
            if self.buf.last() != Some(&b'\n') {
                self.torn_tail = Some(describe_cut(&self.buf));
                self.finished = true;
                return None;
            }
            let text = String::from_utf8_lossy(&self.buf);
            match parse_line(&text) {
                Ok(None) => {}
                Ok(Some(Record::Unknown { .. })) if !self.include_unknown => {}
                Ok(Some(r)) => return Some(Ok(r)),
                Err(e) => {
                    return Some(Err(EventLogError::Damaged {
                        path: self.path.clone(),
                        line: self.line,
                        offset: self.last_offset,
                        message: e.to_string(),
                    }));
                }
            }
        }
    }
}

/// Read an event file (`lsb.events`, `lsb.events.N`): every record of a known type.
pub fn read_events(path: &Path) -> Result<EventReader, EventLogError> {
    EventReader::open(path)
}

/// A reader of `lsb.acct` yielding its `JOB_FINISH` records (other types are skipped).
#[derive(Debug)]
pub struct AcctReader(EventReader);

impl AcctReader {
    /// The incomplete last line seen, if any.
    pub fn torn_tail(&self) -> Option<&str> {
        self.0.torn_tail()
    }
}

impl Iterator for AcctReader {
    type Item = Result<JobFinish, EventLogError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.0.next()? {
                Ok(Record::JobFinish(f)) => return Some(Ok(*f)),
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Read an accounting file (`lsb.acct`, `lsb.acct.N`).
pub fn read_acct(path: &Path) -> Result<AcctReader, EventLogError> {
    Ok(AcctReader(EventReader::open(path)?))
}

/// The event files to read for history, newest first: `lsb.events`, then `lsb.events.0`
/// (only left behind by an interrupted switch), `lsb.events.1`, `lsb.events.2`, ...
/// A missing `logdir` gives an empty list.
pub fn event_files(logdir: &Path) -> Result<Vec<PathBuf>, EventLogError> {
    numbered_files(logdir, EVENTS_FILE)
}

/// The accounting files, newest first: `lsb.acct`, `lsb.acct.1`, ...
pub fn acct_files(logdir: &Path) -> Result<Vec<PathBuf>, EventLogError> {
    numbered_files(logdir, ACCT_FILE)
}

fn numbered_files(dir: &Path, base: &str) -> Result<Vec<PathBuf>, EventLogError> {
    Ok(numbered(dir, base)?.into_iter().map(|(_, p)| p).collect())
}

/// `base` (key `None`) and `base.N` (key `Some(N)`), sorted by key.
fn numbered(dir: &Path, base: &str) -> Result<Vec<(Option<u64>, PathBuf)>, EventLogError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EventLogError::io(dir, "read directory", e)),
    };
    let mut found: Vec<(Option<u64>, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| EventLogError::io(dir, "read directory", e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let key = if name == base {
            None
        } else if let Some(n) = name
            .strip_prefix(base)
            .and_then(|r| r.strip_prefix('.'))
            .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|r| r.parse::<u64>().ok())
        {
            Some(n)
        } else {
            continue;
        };
        found.push((key, entry.path()));
    }
    found.sort_by_key(|(k, _)| *k);
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that accepts `room` bytes and then fails, optionally also failing truncation.
    struct Flaky {
        data: Vec<u8>,
        room: usize,
        fail_sync: bool,
        fail_truncate: bool,
        syncs: usize,
    }

    impl Sink for Flaky {
        fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
            let n = buf.len().min(self.room.saturating_sub(self.data.len()));
            self.data.extend_from_slice(&buf[..n]);
            if n < buf.len() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            Ok(())
        }
        fn sync_data(&mut self) -> io::Result<()> {
            if self.fail_sync {
                return Err(io::Error::other("EIO"));
            }
            self.syncs += 1;
            Ok(())
        }
        fn set_len(&mut self, len: u64) -> io::Result<()> {
            if self.fail_truncate {
                return Err(io::Error::other("EROFS"));
            }
            self.data.truncate(len as usize);
            Ok(())
        }
    }

    fn flaky(room: usize) -> Appender<Flaky> {
        Appender::new(
            PathBuf::from("/x/lsb.events"),
            Flaky {
                data: Vec::new(),
                room,
                fail_sync: false,
                fail_truncate: false,
                syncs: 0,
            },
            0,
        )
    }

    #[test]
    fn failed_write_is_cut_back() {
        let mut a = flaky(30);
        a.append(b"line one\nline two\n", 2).unwrap();
        assert_eq!(a.sink.syncs, 1);
        let e = a.append(b"line three\nline four\n", 2).unwrap_err();
        assert!(matches!(e, EventLogError::Io { op: "write", .. }), "{e}");
        assert_eq!(a.sink.data, b"line one\nline two\n");
        assert_eq!(a.len, 18);
        // Still usable.
        a.sink.room = 1000;
        a.append(b"line five\n", 1).unwrap();
        assert_eq!(a.sink.data, b"line one\nline two\nline five\n");
        assert_eq!(a.stats.records, 3);
        assert_eq!(a.stats.syncs, 2);
    }

    #[test]
    fn failed_sync_is_cut_back() {
        let mut a = flaky(1000);
        a.append(b"a\n", 1).unwrap();
        a.sink.fail_sync = true;
        let e = a.append(b"b\n", 1).unwrap_err();
        assert!(
            matches!(
                e,
                EventLogError::Io {
                    op: "fdatasync",
                    ..
                }
            ),
            "{e}"
        );
        // The cut back itself needs a sync, which fails here too: the appender is poisoned.
        assert!(a.broken.is_some());
        a.sink.fail_sync = false;
        let e = a.append(b"c\n", 1).unwrap_err();
        assert!(matches!(e, EventLogError::Poisoned { .. }), "{e}");
    }

    #[test]
    fn failed_cut_back_poisons() {
        let mut a = flaky(3);
        a.sink.fail_truncate = true;
        assert!(a.append(b"abcdef\n", 1).is_err());
        let e = a.append(b"x\n", 1).unwrap_err();
        assert!(e.to_string().contains("restart mbatchd"), "{e}");
    }

    #[test]
    fn sync_policies() {
        let mut a = flaky(1000);
        a.sync = SyncPolicy::None;
        a.append(b"a\n", 1).unwrap();
        assert_eq!((a.sink.syncs, a.stats.syncs), (0, 0));
        a.sync = SyncPolicy::Fsync;
        a.append(b"b\n", 1).unwrap();
        assert_eq!((a.sink.syncs, a.stats.syncs), (1, 1));
        assert_eq!("FSYNC".parse::<SyncPolicy>(), Ok(SyncPolicy::Fsync));
        assert_eq!("none".parse::<SyncPolicy>(), Ok(SyncPolicy::None));
        assert_eq!("".parse::<SyncPolicy>().ok(), None);
        assert!("sometimes".parse::<SyncPolicy>().is_err());
    }

    #[test]
    fn header_format() {
        let h = fresh_header();
        assert_eq!(h.len(), 80);
        assert!(h.starts_with("#80 "));
        assert!(h.ends_with(" \n"));
        assert_eq!(parse_header(&h), Some(80));
        assert_eq!(
            parse_header("#168                                  "),
            Some(168)
        );
        assert_eq!(parse_header("#80\n"), Some(80));
        assert_eq!(parse_header("# comment"), None);
        assert_eq!(parse_header("\"JOB_NEW\""), None);
    }
}
