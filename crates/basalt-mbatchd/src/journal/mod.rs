//! mbatchd's journal: lsb.events (every state change), lsb.acct (JOB_FINISH), spooled
//! job files and the `#lsb.event.lock` lock, all through `basalt-eventlog`. The records
//! themselves come from `basalt-records` (Event ⇄ Record).
//!
//! Rooms: `lock` (taking, heartbeating and checking the lock), `reload` (open and
//! replay, re-read after a failed write), `acct` (the replay, and the lsb.acct records a
//! crash between the two files' writes left out, rebuilt from it), `commit` (one durable
//! append per loop iteration, the write probe), `switch` (the lsb.events switch), `copies` (the
//! `LSB_LOCALDIR` duplicate and its re-synchronisation), `spool` (job files: the
//! sequential spool `spool/<n>.seg`, `info/` for LSF tools and as the fallback).

mod acct;
mod commit;
mod copies;
mod lock;
mod reload;
mod spool;
mod switch;

pub use basalt_records::{finish_record, from_record, to_record};
pub use copies::sync_copies;
pub use lock::{LOCK_SEEN_ENV, LockSeen, acquire_lock, acquire_lock_seen, stale_after};
pub use reload::{open, read_events};
pub use spool::place_info_copy;

use basalt_eventlog as el;
use basalt_sched::Event;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum JournalError {
    #[error(transparent)]
    Log(#[from] el::EventLogError),
    #[error(transparent)]
    Lock(#[from] el::LockError),
    #[error("another mbatchd holds {path}: {holder}")]
    Held { path: PathBuf, holder: String },
    #[error(
        "{path} is no longer this mbatchd's lock (another mbatchd took it over); \
         stopping without writing"
    )]
    LockLost { path: PathBuf },
    #[error("{path}: write probe failed: {source}")]
    Probe {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What was read back on open.
#[derive(Debug, Default)]
pub struct Replayed {
    pub events: Vec<Event>,
    /// How many of `events` come before the header offset (carried over by a log switch).
    pub carried: usize,
    pub torn_tail: Option<String>,
    /// Where the torn tail began (the file's length after the cut).
    pub torn_offset: Option<u64>,
    /// Records of types Basalt does not replay (kept in the file, skipped).
    pub skipped: usize,
}

/// How the journal writes and guards the log (lsb.params `BASALT_EVENT_*`).
#[derive(Debug, Clone)]
pub struct Options {
    pub sync: el::SyncPolicy,
    /// Heartbeat of `#lsb.event.lock`; a waiting mbatchd checks twice as often and takes
    /// a lock over after more than [`STALE_CHECKS`] checks without a heartbeat.
    pub lock_heartbeat: Duration,
    /// `LSB_LOCALDIR`: a second copy of lsb.events and lsb.acct on the master's local disk.
    pub local_dir: Option<PathBuf>,
    /// What sbatchd saw of the lock before it started this mbatchd ([`LOCK_SEEN_ENV`]):
    /// time already observed towards the staleness proof.
    pub lock_seen: Option<LockSeen>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            sync: el::SyncPolicy::Fdatasync,
            lock_heartbeat: Duration::from_secs(1),
            local_dir: None,
            lock_seen: None,
        }
    }
}

impl Options {
    /// The options of `config`, with the lock observation sbatchd handed over in
    /// [`LOCK_SEEN_ENV`], if any.
    pub fn from_config(config: &basalt_config::Config) -> Options {
        let p = &config.batch.params;
        Options {
            sync: p.event_sync.parse().unwrap_or_default(),
            lock_heartbeat: Duration::from_secs(u64::from(p.event_lock_heartbeat_secs.max(1))),
            local_dir: config.local_logdir(),
            lock_seen: LockSeen::from_env(),
        }
    }
}

/// More than this many checks half a heartbeat apart without a change of the lock file make
/// its owner stale (LSF: 4 checks of MBD_SLEEP_TIME/2).
pub const STALE_CHECKS: u32 = 4;

/// One copy of lsb.events + lsb.acct: the shared log directory, or the local duplicate.
#[derive(Debug)]
struct Copy {
    dir: PathBuf,
    logs: Option<(el::EventLog, el::AcctLog)>,
    /// Why this copy is out of date (a failed write or open); it is re-synchronised from
    /// a good copy before it is written again.
    broken: Option<String>,
}

/// lsb.events + lsb.acct (with an optional local duplicate) + the spool directory, held
/// under the lock.
#[derive(Debug)]
pub struct Journal {
    logdir: PathBuf,
    /// The shared copy first, then the `LSB_LOCALDIR` duplicate if configured.
    copies: Vec<Copy>,
    lock: el::EventLock,
    opts: Options,
    last_touch: Instant,
    /// Log directories holding job files written since the last commit, not yet synced.
    unsynced: Vec<PathBuf>,
    /// Those job files (up to [`spool::PER_FILE_SYNC_MAX`] + 1 are remembered).
    unsynced_files: Vec<PathBuf>,
    /// The sequential job-file spool of the shared log directory (None when it could
    /// not be opened: job files then go to `info/` one by one, as before it existed).
    jobs: Option<el::JobSpool>,
    /// When events were first written without a sync since the last sync.
    deferred_since: Option<Instant>,
    /// Accounting records due but not yet written (rebuilt at replay, or left by a failed
    /// write): written first by the next [`Journal::commit_acct`].
    acct_pending: Vec<el::JobFinish>,
}

impl Journal {
    /// The log directory.
    pub fn logdir(&self) -> &Path {
        &self.logdir
    }

    /// Release the lock (clean stop).
    pub fn release(self) {
        if let Err(e) = self.lock.release() {
            tracing::warn!("releasing the event log lock: {e}");
        }
    }
}

#[cfg(test)]
mod acct_tests;
#[cfg(test)]
mod tests;
