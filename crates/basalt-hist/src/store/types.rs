//! The index's errors and types: file states, accounting rows and queries, [`Store`].

use super::*;

/// Why the index could not be used (the commands then read the files).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("history index: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("history index: {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A line the index points at is not what it says (the file was changed in place).
    #[error("history index: {} changed under the index", path.display())]
    Stale { path: PathBuf },
    #[error("history index: {0}")]
    Log(#[from] EventLogError),
}

pub(super) fn io_err(path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The two kinds of files indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `lsb.acct`, `lsb.acct.N`: `JOB_FINISH` records.
    Acct = 1,
    /// `lsb.events`, `lsb.events.N`.
    Events = 2,
}

/// What the index knows about a file after [`Store::refresh`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// The file's row.
    pub id: i64,
    pub path: PathBuf,
    /// The end of the last complete line (everything before it is indexed).
    pub done: u64,
    /// The bytes after `done` (an incomplete last line), if any.
    pub tail: Option<Vec<u8>>,
    /// The `#<offset>` header line of an event file: (offset, length of the line).
    pub header: Option<(u64, u64)>,
    /// Whether a complete line starts exactly at the header's offset (`None`: the file
    /// ends before the offset, or exactly at it).
    pub aligned: Option<bool>,
}

impl FileState {
    /// Is the header's offset on a line boundary (so that the records before it are the
    /// carried-over ones)?
    pub fn offset_on_boundary(&self) -> bool {
        match (self.header, self.aligned) {
            (Some(_), Some(a)) => a,
            (Some((off, _)), None) => off == self.done,
            (None, _) => false,
        }
    }
}

/// The accounting figures of one indexed `JOB_FINISH` record.
#[derive(Debug, Clone, PartialEq)]
pub struct AcctRow {
    pub off: u64,
    pub job_id: u64,
    pub idx: u32,
    pub input: super::super::bacct::AcctInput,
}

/// Which `JOB_FINISH` records to return (all conditions must hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcctQuery {
    /// These job ids (any array index).
    pub jobs: Option<BTreeSet<u64>>,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub project: Option<String>,
}

/// An open history index.
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}
