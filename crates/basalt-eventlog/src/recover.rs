//! Explicit recovery of a corrupt `lsb.events` (`mbatchd --recover`).
//!
//! [`crate::EventLog::open`] refuses a file with a damaged complete line, because
//! replaying past a lost record would silently forget or corrupt jobs. The administrator
//! decides to go on with [`recover_events`]: every intact record is kept in order, the
//! damaged lines (and a torn tail) are moved to `lsb.events.damaged.<time>` next to the log
//! so nothing is destroyed, and the header's offset is corrected for the bytes removed
//! before it. The new file is written aside, fsynced and renamed over the old one.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;
use crate::file::{EVENTS_FILE, parse_header};
use crate::record::parse_line;

/// One line [`recover_events`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedLine {
    /// 1-based line number in the original file.
    pub line: usize,
    /// Byte offset of the line in the original file.
    pub offset: u64,
    /// The line (lossily decoded, without its newline, at most 4 KiB shown).
    pub text: String,
    /// Why it was dropped.
    pub error: String,
}

/// What [`recover_events`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverReport {
    /// The log that was checked.
    pub path: PathBuf,
    /// Records kept.
    pub kept: usize,
    /// Complete lines that did not parse, removed.
    pub dropped: Vec<DroppedLine>,
    /// An incomplete last line, removed.
    pub torn_tail: Option<DroppedLine>,
    /// Where the removed lines were saved (None when nothing was removed).
    pub saved_to: Option<PathBuf>,
}

impl RecoverReport {
    /// Nothing had to be removed.
    pub fn clean(&self) -> bool {
        self.dropped.is_empty() && self.torn_tail.is_none()
    }
}

fn shown(bytes: &[u8]) -> String {
    const MAX: usize = 4096;
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut s = String::from_utf8_lossy(&body[..body.len().min(MAX)]).into_owned();
    if body.len() > MAX {
        s.push_str(&format!("... ({} bytes in all)", body.len()));
    }
    s
}

/// Keep every intact record of `logdir/lsb.events`, move the damaged lines and a torn
/// tail to `logdir/lsb.events.damaged.<now>`, and report what was dropped. The caller must
/// hold the [`crate::EventLock`]. A missing file is reported as clean with 0 records.
pub fn recover_events(logdir: &Path, now: i64) -> Result<RecoverReport, EventLogError> {
    let path = logdir.join(EVENTS_FILE);
    let mut report = RecoverReport {
        path: path.clone(),
        kept: 0,
        dropped: Vec::new(),
        torn_tail: None,
        saved_to: None,
    };
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(EventLogError::io(&path, "open", e)),
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut kept: Vec<u8> = Vec::new();
    let mut removed: Vec<u8> = Vec::new();
    // The header: (its length, the offset it holds).
    let mut header: Option<(usize, u64)> = None;
    // Bytes removed before the header's offset.
    let mut removed_before_offset = 0u64;
    let mut offset_on_boundary = false;
    let mut pos = 0u64;
    let mut line_no = 0usize;
    let mut buf = Vec::with_capacity(1024);
    loop {
        if let Some((_, off)) = header
            && pos == off
        {
            offset_on_boundary = true;
        }
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| EventLogError::io(&path, "read", e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let line_at = pos;
        pos += n as u64;
        if buf.last() != Some(&b'\n') {
            report.torn_tail = Some(DroppedLine {
                line: line_no,
                offset: line_at,
                text: shown(&buf),
                error: "incomplete last line (a torn write)".into(),
            });
            removed.extend_from_slice(&buf);
            removed.push(b'\n');
            break;
        }
        let text = String::from_utf8_lossy(&buf);
        if line_no == 1
            && let Some(off) = parse_header(&text)
        {
            header = Some((n, off));
            kept.extend_from_slice(&buf);
            continue;
        }
        match parse_line(&text) {
            Ok(Some(_)) => {
                report.kept += 1;
                kept.extend_from_slice(&buf);
            }
            Ok(None) => kept.extend_from_slice(&buf),
            Err(e) => {
                if let Some((_, off)) = header
                    && line_at < off
                {
                    removed_before_offset += n as u64;
                }
                report.dropped.push(DroppedLine {
                    line: line_no,
                    offset: line_at,
                    text: shown(&buf),
                    error: e.to_string(),
                });
                removed.extend_from_slice(&buf);
            }
        }
    }
    if report.clean() {
        return Ok(report);
    }

    // Correct the header's offset (keeping the header line's length, so the offset stays
    // a byte position).
    if let Some((hlen, off)) = header
        && offset_on_boundary
        && removed_before_offset > 0
        && hlen >= 2
    {
        let value = off - removed_before_offset;
        let new = format!("#{value:<width$}\n", width = hlen - 2);
        if new.len() == hlen {
            kept[..hlen].copy_from_slice(new.as_bytes());
        }
    }

    let saved = logdir.join(format!("{EVENTS_FILE}.damaged.{now}"));
    write_durably(&saved, &removed, true)?;
    let tmp = logdir.join(format!("{EVENTS_FILE}.recover.tmp"));
    write_durably(&tmp, &kept, false)?;
    fs::rename(&tmp, &path).map_err(|e| EventLogError::io(&path, "replace", e))?;
    File::open(logdir)
        .and_then(|d| d.sync_all())
        .map_err(|e| EventLogError::io(logdir, "fsync directory", e))?;
    report.saved_to = Some(saved);
    Ok(report)
}

fn write_durably(path: &Path, bytes: &[u8], append: bool) -> Result<(), EventLogError> {
    let mut opts = OpenOptions::new();
    opts.create(true).write(true);
    if append {
        opts.append(true);
    } else {
        opts.truncate(true);
    }
    opts.open(path)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .map_err(|e| EventLogError::io(path, "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::EventLog;
    use crate::record::{JobClean, Record};

    fn clean(t: i64, id: u64) -> Record {
        Record::JobClean(JobClean {
            header: crate::record::Header::new(t),
            job_id: id,
            idx: 0,
        })
    }

    #[test]
    fn keeps_intact_records_and_saves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = EventLog::open(dir.path()).unwrap();
        log.append(&[clean(1, 1), clean(2, 2), clean(3, 3)])
            .unwrap();
        drop(log);
        let path = dir.path().join(EVENTS_FILE);
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let damaged = format!(
            "{}\n\"JOB_CLEAN\" \"10.1\" 2 zz 0\n{}\n{}\n\"JOB_",
            lines[0], lines[1], lines[3]
        );
        fs::write(&path, &damaged).unwrap();
        assert!(EventLog::open(dir.path()).is_err());

        let r = recover_events(dir.path(), 77).unwrap();
        assert_eq!(r.kept, 2);
        assert_eq!(r.dropped.len(), 1);
        assert_eq!(r.dropped[0].line, 2);
        assert_eq!(r.dropped[0].offset, 80);
        assert!(r.dropped[0].text.contains("zz"));
        assert_eq!(r.torn_tail.as_ref().map(|t| t.line), Some(5));
        let saved = fs::read_to_string(dir.path().join("lsb.events.damaged.77")).unwrap();
        assert_eq!(saved, "\"JOB_CLEAN\" \"10.1\" 2 zz 0\n\"JOB_\n");

        let (_, replay) = EventLog::open(dir.path()).unwrap();
        assert_eq!(replay.records, vec![clean(1, 1), clean(3, 3)]);
        assert_eq!(replay.header_offset, 80);
        // A second run finds nothing to do.
        assert!(recover_events(dir.path(), 78).unwrap().clean());
    }

    #[test]
    fn header_offset_is_corrected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(EVENTS_FILE);
        let a = "\"JOB_CLEAN\" \"10.1\" 1 1 0\n";
        let bad = "\"JOB_CLEAN\" \"10.1\" 1 x 0\n";
        let b = "\"JOB_CLEAN\" \"10.1\" 2 2 0\n";
        let off = 39 + a.len() + bad.len();
        let content = format!("#{off:<37}\n{a}{bad}{b}");
        fs::write(&path, content).unwrap();
        let r = recover_events(dir.path(), 1).unwrap();
        assert_eq!(r.kept, 2);
        let (_, replay) = EventLog::open(dir.path()).unwrap();
        assert_eq!(replay.header_offset, (39 + a.len()) as u64);
        assert_eq!(replay.records.len(), 2);
    }

    #[test]
    fn missing_file_is_clean() {
        let dir = tempfile::tempdir().unwrap();
        let r = recover_events(dir.path(), 1).unwrap();
        assert!(r.clean());
        assert_eq!(r.kept, 0);
    }
}
