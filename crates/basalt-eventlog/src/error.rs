//! Error types: [`ParseError`] for one line, [`EventLogError`] for files, [`LockError`] for
//! the `#lsb.event.lock` file.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// A line that is not a valid event record.
///
/// `field` is the 1-based position of the offending field in awk terms (`$1` is the record
/// type, `$2` the version, `$3` the event time, `$4` the first type-specific field); when a
/// field is missing it is the position where it was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field ${field}: {message}")]
pub struct ParseError {
    /// 1-based field position (`$n`).
    pub field: usize,
    /// What was wrong, e.g. `jobId: expected an integer, found "abc"`.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(field: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            field,
            message: message.into(),
        }
    }
}

/// Errors of the event-log files (`lsb.events`, `lsb.acct`, the `info/` spool).
#[derive(Debug, thiserror::Error)]
pub enum EventLogError {
    /// A system call failed. `op` says what was being done ("open", "fsync", ...).
    #[error("{}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// A complete line of the file is not a valid record. mbatchd refuses to start over it:
    /// replaying past a lost record would silently forget or corrupt jobs.
    #[error(
        "{}:{line}: damaged event record at byte offset {offset}: {message}\n\
         The line is complete, so this is not a torn write but a corrupt file, and \
         mbatchd will not start over it. To recover, run `mbatchd --recover`: it keeps every intact \
         record, moves the damaged lines to lsb.events.damaged.<time> in the same \
         directory and prints what was dropped (`bevents verify` lists the damaged lines \
         first). Or edit line {line} by hand (keep a copy of the file first).",
        path.display()
    )]
    Damaged {
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Byte offset of the line's first character.
        offset: u64,
        message: String,
    },
    /// An earlier append failed and could not be rolled back, so the end of the file is in
    /// an unknown state; no further appends are accepted through this handle.
    #[error(
        "{}: the log is unusable after a failed append that could not be undone ({reason}); \
         restart mbatchd so that the file is re-read and its torn tail cut",
        path.display()
    )]
    Poisoned { path: PathBuf, reason: String },
    /// A job-file name that is not `<submitTime>.<jobId>`-like (contains `/`, is empty, ...).
    #[error("invalid job file name {name:?}")]
    InvalidJobFileName { name: String },
}

impl EventLogError {
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: io::Error) -> Self {
        EventLogError::Io {
            path: path.into(),
            op,
            source,
        }
    }
}

/// Errors of [`crate::EventLock`].
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another mbatchd (or a stale file that cannot be proven stale) holds the lock.
    /// `holder` is the file's content (`host:pid`), `age` the time since its last
    /// modification (the holder's heartbeat advances it).
    #[error("the event log lock is held by {holder:?} (last heartbeat {}s ago)", age.as_secs())]
    Held {
        holder: String,
        age: Duration,
        /// Everything known about the file, for [`crate::EventLock::take_over`].
        info: Box<crate::lock::LockInfo>,
    },
    /// The lock file is no longer ours: it was removed or replaced by someone else.
    #[error("{}: the event log lock was removed or taken over by another process", path.display())]
    Lost { path: PathBuf },
    /// A system call failed.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },
}

impl LockError {
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: io::Error) -> Self {
        LockError::Io {
            path: path.into(),
            op,
            source,
        }
    }
}

/// Shorten a text for an error message.
pub(crate) fn excerpt(s: &str) -> impl fmt::Display + '_ {
    struct Ex<'a>(&'a str);
    impl fmt::Display for Ex<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            const MAX: usize = 40;
            if self.0.chars().count() <= MAX {
                write!(f, "{:?}", self.0)
            } else {
                let s: String = self.0.chars().take(MAX).collect();
                write!(f, "{s:?}...")
            }
        }
    }
    Ex(s)
}
