//! The files: the durable appenders for `lsb.events` ([`EventLog`], `events`) and
//! `lsb.acct` ([`AcctLog`], `acct`), and the read-only readers used by `bhist` and `bacct`
//! (`reader`). This module owns the file names and header lines, the sync policy and the
//! append-with-rollback shared by both writers.

mod acct;
mod events;
mod reader;

pub use acct::{AcctLog, AcctMatch, EndKey, acct_tail};
pub use events::{EventLog, OpenInfo, Replay, SwitchReport};
pub use reader::{AcctReader, EventReader, acct_files, event_files, read_acct, read_events};

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;

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

/// `records` as the lines of a log file (each written by `write_line`, then `\n`);
/// `per_record` is a guess at a line's length.
pub(crate) fn lines<R>(
    records: &[R],
    per_record: usize,
    write_line: impl Fn(&R, &mut String),
) -> String {
    let mut buf = String::with_capacity(records.len() * per_record);
    for r in records {
        write_line(r, &mut buf);
        buf.push('\n');
    }
    buf
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
    /// Lines were written without a sync since the last one ([`Appender::append_deferred`]).
    unsynced: bool,
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
            unsynced: false,
        }
    }

    /// Write `buf` (whole lines) with one write and one fdatasync. On failure the file is
    /// cut back to its previous length, so no partial line stays behind; if even that
    /// fails, the appender refuses further appends ([`EventLogError::Poisoned`]).
    pub(crate) fn append(&mut self, buf: &[u8], records: usize) -> Result<(), EventLogError> {
        self.write(buf, records, true)
    }

    /// Write `buf` (whole lines) with one write and no sync: durable at the next
    /// [`Appender::append`] or [`Appender::sync`] (the file is written in order, so
    /// that sync covers these lines too). For lines nothing waits on yet.
    pub(crate) fn append_deferred(
        &mut self,
        buf: &[u8],
        records: usize,
    ) -> Result<(), EventLogError> {
        self.write(buf, records, false)
    }

    /// Make the lines written by [`Appender::append_deferred`] durable. A failed sync
    /// poisons the appender: what it wrote may not be on disk, and it cannot be cut
    /// back any more.
    pub(crate) fn sync(&mut self) -> Result<(), EventLogError> {
        self.usable()?;
        if !self.unsynced {
            return Ok(());
        }
        match self.sync_sink() {
            Ok(()) => Ok(()),
            Err((op, e)) => {
                self.broken = Some(format!("{op} of deferred lines failed ({e})"));
                Err(EventLogError::io(&self.path, op, e))
            }
        }
    }

    /// Refuse when an earlier failure left the file in a state that cannot be undone.
    fn usable(&self) -> Result<(), EventLogError> {
        match &self.broken {
            Some(reason) => Err(EventLogError::Poisoned {
                path: self.path.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Sync the file as the policy says; on success everything written is durable.
    fn sync_sink(&mut self) -> Result<(), (&'static str, std::io::Error)> {
        match self.sync {
            SyncPolicy::Fdatasync => self.sink.sync_data().map_err(|e| ("fdatasync", e))?,
            SyncPolicy::Fsync => self.sink.sync_all().map_err(|e| ("fsync", e))?,
            SyncPolicy::None => {}
        }
        if self.sync != SyncPolicy::None {
            self.stats.syncs += 1;
        }
        self.unsynced = false;
        Ok(())
    }

    /// Are there lines written without a sync?
    pub(crate) fn unsynced(&self) -> bool {
        self.unsynced
    }

    fn write(&mut self, buf: &[u8], records: usize, sync: bool) -> Result<(), EventLogError> {
        self.usable()?;
        if buf.is_empty() {
            return Ok(());
        }
        let res = match self.sink.write_all(buf) {
            Ok(()) if !sync => {
                self.unsynced = true;
                Ok(())
            }
            Ok(()) => self.sync_sink(),
            Err(e) => Err(("write", e)),
        };
        match res {
            Ok(()) => {
                self.len += buf.len() as u64;
                self.stats.appends += 1;
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

#[cfg(test)]
mod tests;
