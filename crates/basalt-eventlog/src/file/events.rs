//! [`EventLog`], the durable writer of `lsb.events`: open and replay, group-commit
//! appends, and the log switch.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::record::{Record, parse_line};

use super::reader::numbered;
use super::{
    AppendStats, Appender, EVENTS_FILE, FRESH_HEADER_LEN, SyncPolicy, create_logdir, cut,
    describe_cut, fresh_header, fsync_dir, lines, open_for_append, parse_header,
};

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
    /// Number of records before the header's offset (carried over by a log switch).
    pub carried: usize,
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
        EventLog::open_with_carried(logdir, |r, _| visit(r))
    }

    /// Like [`EventLog::open_with`], telling `visit` whether each record lies before the
    /// header's offset (carried over by a log switch). The flag is given as the record is
    /// read, before the offset is known to fall on a line boundary; when it does not
    /// (OpenLava 4's bare `#80`), no record counts as carried after all and
    /// [`OpenInfo::carried`] is 0.
    pub fn open_with_carried(
        logdir: &Path,
        mut visit: impl FnMut(Record, bool),
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
                    let carried = header_len.is_some() && pos < info.header_offset;
                    if carried {
                        info.carried += 1;
                    }
                    visit(rec, carried);
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
            info.carried = 0;
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
        let buf = lines(records, 200, Record::write_line);
        self.inner.append(buf.as_bytes(), records.len())
    }

    /// Append `records` with one `write` and no sync: they are durable once a later
    /// [`EventLog::append`] or [`EventLog::sync`] returns (mbatchd writes so the events
    /// of a loop iteration that nothing waits on: no reply, no dispatch).
    pub fn append_deferred(&mut self, records: &[Record]) -> Result<(), EventLogError> {
        let buf = lines(records, 200, Record::write_line);
        self.inner.append_deferred(buf.as_bytes(), records.len())
    }

    /// Make every record written so far durable (nothing to do when the last write
    /// was synced).
    pub fn sync(&mut self) -> Result<(), EventLogError> {
        self.inner.sync()
    }

    /// Are there records written without a sync?
    pub fn unsynced(&self) -> bool {
        self.inner.unsynced()
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
    /// maintained; readers go through all files from [`event_files`](super::event_files).
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
        // What was written without a sync goes to the disk before it is archived.
        self.inner.sync()?;
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
pub(super) fn switched_header(value: impl std::fmt::Display) -> String {
    format!("#{value:<37}\n")
}
