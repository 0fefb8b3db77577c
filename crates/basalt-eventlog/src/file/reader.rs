//! The read-only readers used by `bhist` and `bacct` ([`EventReader`], [`AcctReader`])
//! and the listing of the numbered history files.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::record::{JobFinish, Record, parse_line};

use super::{ACCT_FILE, EVENTS_FILE, describe_cut, parse_header};

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

pub(super) fn numbered_files(dir: &Path, base: &str) -> Result<Vec<PathBuf>, EventLogError> {
    Ok(numbered(dir, base)?.into_iter().map(|(_, p)| p).collect())
}

/// `base` (key `None`) and `base.N` (key `Some(N)`), sorted by key.
pub(super) fn numbered(
    dir: &Path,
    base: &str,
) -> Result<Vec<(Option<u64>, PathBuf)>, EventLogError> {
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
