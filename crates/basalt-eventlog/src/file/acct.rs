//! [`AcctLog`], the append-only writer of `lsb.acct`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::EventLogError;
use crate::record::JobFinish;

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
