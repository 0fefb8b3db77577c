//! [`AcctLog`], the append-only writer of `lsb.acct`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::EventLogError;
use crate::record::{JobFinish, Record, parse_line};

use super::{
    ACCT_FILE, AppendStats, Appender, SyncPolicy, create_logdir, cut, describe_cut, fsync_dir,
    lines, open_for_append,
};

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

    /// Append `records` durably (one write, one fdatasync); see
    /// [`EventLog::append`](super::EventLog::append).
    pub fn append(&mut self, records: &[JobFinish]) -> Result<(), EventLogError> {
        let buf = lines(records, 400, JobFinish::write_line);
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

/// What tells one end of a job from another in lsb.acct: the job and element, its
/// submission, start and end times, final status and exit status.
pub type EndKey = (u64, u32, i64, i64, i64, u32, i32);

impl JobFinish {
    /// The record's [`EndKey`].
    pub fn end_key(&self) -> EndKey {
        (
            self.job_id,
            self.idx,
            self.submit_time,
            self.start_time,
            self.header.time,
            self.j_status,
            self.exit_status,
        )
    }
}

/// Tells, as an event log is replayed, which of the job ends it asks accounting records
/// for lsb.acct already holds. Records are appended in the order of their ends, after
/// the events, so after a crash lsb.acct holds the ends due up to some point and lacks
/// the rest: the ends due up to the last one at which lsb.acct's last records (`tail`,
/// [`AcctMatch::TAIL`] of them, [`acct_tail`]) end with the ends due so far.
#[derive(Debug, Clone, Default)]
pub struct AcctMatch {
    tail: Vec<EndKey>,
    /// The last ends due (at most `TAIL`), oldest first.
    recent: std::collections::VecDeque<EndKey>,
}

impl AcctMatch {
    /// How many of lsb.acct's last records are compared.
    pub const TAIL: usize = 64;

    /// `tail`: the keys of lsb.acct's last records, oldest first.
    pub fn new(mut tail: Vec<EndKey>) -> AcctMatch {
        if tail.len() > Self::TAIL {
            tail.drain(..tail.len() - Self::TAIL);
        }
        AcctMatch {
            tail,
            recent: std::collections::VecDeque::with_capacity(Self::TAIL),
        }
    }

    /// Read the last records of `logdir`'s accounting files.
    pub fn read(logdir: &Path) -> Result<AcctMatch, EventLogError> {
        let tail = acct_tail(logdir, Self::TAIL)?;
        Ok(AcctMatch::new(
            tail.iter().map(JobFinish::end_key).collect(),
        ))
    }

    /// The next end due, in log order. True when lsb.acct ends with the ends due so far
    /// (as far as its last records tell): this end and those before it are there.
    pub fn push(&mut self, end: EndKey) -> bool {
        if self.recent.len() == Self::TAIL {
            self.recent.pop_front();
        }
        self.recent.push_back(end);
        self.tail.last() == Some(&end)
            && self
                .recent
                .iter()
                .rev()
                .zip(self.tail.iter().rev())
                .all(|(a, b)| a == b)
    }
}

/// The last `n` `JOB_FINISH` records of the accounting files of `logdir` (`lsb.acct`,
/// then `lsb.acct.1`, ... while there are fewer), oldest first. The files are read
/// backwards from their ends, so what it costs depends on `n`, not on their size. An
/// incomplete last line is left out; a line that does not parse is an error.
pub fn acct_tail(logdir: &Path, n: usize) -> Result<Vec<JobFinish>, EventLogError> {
    const BLOCK: u64 = 64 * 1024;
    let mut out: Vec<JobFinish> = Vec::new();
    if n == 0 {
        return Ok(out);
    }
    for path in super::acct_files(logdir)? {
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(EventLogError::io(&path, "open", e)),
        };
        let len = file
            .metadata()
            .map_err(|e| EventLogError::io(&path, "stat", e))?
            .len();
        // `pending` holds the bytes from `pos` to the end of the complete lines not yet
        // taken, ending with a newline; its first line may be incomplete while pos > 0.
        let mut pos = last_line_end(&file, &path, len)?;
        let mut pending: Vec<u8> = Vec::new();
        while out.len() < n && (pos > 0 || !pending.is_empty()) {
            let body = pending.len().saturating_sub(1);
            let line_start = match pending[..body].iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None if pos == 0 => 0,
                None => {
                    let start = pos.saturating_sub(BLOCK);
                    let mut block = vec![0u8; (pos - start) as usize];
                    file.read_exact_at(&mut block, start)
                        .map_err(|e| EventLogError::io(&path, "read", e))?;
                    block.extend_from_slice(&pending);
                    pending = block;
                    pos = start;
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&pending[line_start..]);
            match parse_line(&text) {
                Ok(Some(Record::JobFinish(f))) => out.push(*f),
                Ok(_) => {}
                Err(e) => {
                    let at = pos + line_start as u64;
                    return Err(EventLogError::io(
                        &path,
                        "read back",
                        std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("damaged record at byte offset {at}: {e}"),
                        ),
                    ));
                }
            }
            pending.truncate(line_start);
        }
        if out.len() >= n {
            break;
        }
    }
    out.reverse();
    Ok(out)
}

/// Offset just past the last newline before `len` (0 when there is none).
pub(super) fn last_line_end(file: &File, path: &Path, len: u64) -> Result<u64, EventLogError> {
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
