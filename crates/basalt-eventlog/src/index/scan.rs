//! Scanning the old event files for the index: their `#<time>` header and the job id of
//! each record line, read without parsing whole records.

use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use crate::file::{EVENTS_FILE, event_files};

use super::{IndexError, IndexRow, io_err};

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

pub(super) fn parse_time_header(b: &[u8]) -> i64 {
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
pub(super) struct Fields<'a> {
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
