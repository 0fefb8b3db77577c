//! The job table: one SQLite database per state root (`<state root>/jobs.db`),
//! written by sbatchd and by every job's supervisor (separate processes).
//!
//! ## Schema (version [`SCHEMA_VERSION`], in `PRAGMA user_version`)
//!
//! ```sql
//! CREATE TABLE jobs (
//!     job_id    INTEGER NOT NULL,
//!     idx       INTEGER NOT NULL,          -- array index, 0 for an ordinary job
//!     attempt   INTEGER NOT NULL,          -- dispatch attempt (a rerun gets a new one)
//!     created   INTEGER NOT NULL,          -- seconds since the epoch
//!     spec      BLOB    NOT NULL,          -- basalt.sbatchd.v1.JobSpec (protobuf), job file included
//!     launch    TEXT    NOT NULL,          -- what sbatchd adds (state::Launch) as JSON
//!     sup_pid   INTEGER,                   -- the job's supervisor: pid,
//!     sup_start INTEGER,                   --   start time (clock ticks after boot),
//!     sup_boot  TEXT,                      --   and the boot it runs in (kernel boot_id)
//!     state     INTEGER NOT NULL DEFAULT 0, -- LSF state code of the newest event (0: starting)
//!     pid       INTEGER NOT NULL DEFAULT 0, -- the job's top process (= pgid = sid)
//!     pgid      INTEGER NOT NULL DEFAULT 0,
//!     last_seq  INTEGER NOT NULL DEFAULT 0, -- sequence number of the newest event
//!     acked_seq INTEGER NOT NULL DEFAULT 0, -- newest event mbatchd acknowledged
//!     abandoned INTEGER NOT NULL DEFAULT 0, -- mbatchd answered NO_JOB: report no more
//!     PRIMARY KEY (job_id, idx, attempt));
//! CREATE TABLE events (                    -- each event is one ReportJob to mbatchd
//!     job_id INTEGER NOT NULL, idx INTEGER NOT NULL, attempt INTEGER NOT NULL,
//!     seq    INTEGER NOT NULL,             -- 1, 2, ... per job; never reused
//!     kind   TEXT    NOT NULL,             -- started executing rusage state finished start_failed
//!     time   INTEGER NOT NULL,
//!     body   TEXT    NOT NULL,             -- the whole state::Event as JSON
//!     PRIMARY KEY (job_id, idx, attempt, seq));
//! ```
//!
//! Schemas only grow: a later version adds tables or columns (with defaults) in a
//! new migration step and bumps `user_version`; nothing is renamed or dropped. A
//! database from a newer sbatchd is refused rather than guessed at.
//!
//! ## Who writes what
//!
//! * sbatchd inserts a job's row before it starts the supervisor, records what
//!   mbatchd acknowledged (`acked_seq`, `abandoned`), appends an event itself only
//!   when no supervisor can (it never started, or died without its final word),
//!   and deletes the job once mbatchd acknowledged its final report (with the
//!   acknowledgements of the same second, in one transaction). It prunes
//!   acknowledged `rusage` events (only the newest usage matters).
//! * The supervisor records its identity and appends the job's events. The
//!   sequence number comes from the job's `last_seq`, updated in the same
//!   transaction, so two writers never reuse one and a pruned event's number is
//!   never given out again (mbatchd ignores a number it has seen).
//!
//! ## Durability
//!
//! WAL journal, every write in a `BEGIN IMMEDIATE` transaction (writers queue on
//! the lock instead of failing on an upgrade), and a busy handler that retries
//! every 0.2 ms at first, then every 5 ms, for up to [`BUSY_TIMEOUT`] (SQLite's
//! own sleeps 1, 2, 5, 10 ... ms, which would put milliseconds on a job's start).
//!
//! A committed transaction survives a crash of the process that wrote it (kill -9
//! of sbatchd or of a supervisor) at any `synchronous` level: that is what job
//! re-adoption needs, so rows, acknowledgements and most events are written with
//! `synchronous=NORMAL` (no fsync). A job's final event (`finished`,
//! `start_failed`) is fsynced: sbatchd's own with `synchronous=FULL` (the WAL is
//! fsynced before the commit returns); the supervisor's without waiting at the
//! commit ([`JobDb::append_events_then_sync`]) but with one `fdatasync` of the WAL
//! ([`JobDb::sync_log`]) right after it wakes sbatchd, so the disk and the report
//! to mbatchd proceed together instead of one after the other. That fsync covers
//! every earlier frame of the WAL too (one file, written in order; a checkpoint
//! fsyncs the WAL before copying it and the database after). So a job costs one
//! fsync, as LSF's and OpenLava's sbatchd do. Should the machine crash in the
//! millisecond between a report and its fsync, the end mbatchd logged stands: the
//! end sbatchd records after the reboot is numbered past it (below) and changes
//! nothing.
//!
//! A crash of the machine can lose the newest unsynced transactions (never
//! corrupt the file). Jobs die with the machine anyway; what matters is what was
//! reported: an intermediate event mbatchd saw may be lost, so the end sbatchd
//! records for a job of an earlier boot is numbered [`REBOOT_SEQ_GAP`] past the
//! last recorded event, above any number mbatchd can have seen. A job row lost
//! that way (a job started after the last fsync) is not reported by anyone: its
//! host's restarted sbatchd does not list it, and mbatchd has to treat it as lost.
//!
//! All functions block: sbatchd calls them on its database thread ([`DbHandle`]);
//! the supervisor uses its connection from its one loop.

//!
//! The pieces: [`schema`] (migrations, the busy handler), [`jobs`] (rows of
//! `jobs`: insert, supervisor, load, ack, abandon, remove), [`events`] (rows of
//! `events`: append, read) and [`handle`] (sbatchd's database thread).

mod events;
mod handle;
mod jobs;
mod schema;
#[cfg(test)]
mod tests;

pub use handle::{Asked, DbHandle};

use crate::state::{Event, EventKind, Launch, SupervisorId};
use basalt_proto::sbatchd::JobSpec;
use rusqlite::{Connection, OpenFlags};
use schema::{Migrate, busy_retry, migrate};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// (job id, array index, attempt).
pub type Key = (u64, u32, u32);

/// The database file under the state root.
pub const DB_FILE: &str = "jobs.db";

/// The schema version this sbatchd writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How far past the last recorded event the end of a job of an earlier boot is
/// numbered (see the module doc).
pub const REBOOT_SEQ_GAP: u64 = 1 << 32;

/// Errors of the job database.
#[derive(Debug, Error)]
pub enum DbError {
    #[error("job database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "job database {path}: schema version {found} is newer than this sbatchd's {known}; run the newer sbatchd, or move the file away (the jobs it lists are then not re-adopted)"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("job database {path}: job {key:?} is not in the table")]
    NoJob { path: PathBuf, key: Key },
    #[error("job database {path}: job {key:?}: {what}")]
    Corrupt {
        path: PathBuf,
        key: Key,
        what: String,
    },
    #[error("job database {path}: job {key:?} already has its final event")]
    Finished { path: PathBuf, key: Key },
    #[error("job database {path}: syncing its write-ahead log: {source}")]
    Sync {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("job database: its thread is gone")]
    Closed,
    #[error("job database: cannot start its thread: {0}")]
    Thread(String),
}

/// One job as stored, with the events still kept for it.
#[derive(Debug, Clone)]
pub struct StoredJob {
    pub key: Key,
    pub created: i64,
    pub spec: JobSpec,
    pub launch: Launch,
    pub supervisor: Option<SupervisorId>,
    pub state: u32,
    pub pid: u32,
    pub pgid: u32,
    pub last_seq: u64,
    pub acked_seq: u64,
    pub abandoned: bool,
    /// In sequence order. Acknowledged `rusage` events are pruned.
    pub events: Vec<Event>,
}

/// A connection to the job database.
#[derive(Debug)]
pub struct JobDb {
    conn: Connection,
    path: PathBuf,
    /// The `synchronous` level set on the connection (true = FULL).
    full: bool,
    /// The write-ahead log, opened by [`JobDb::sync_log`] (with its inode, to notice a
    /// new file).
    wal: Option<(u64, std::fs::File)>,
}

/// A write transaction begun and committed with cached statements (rusqlite's
/// `Transaction` parses `BEGIN IMMEDIATE` and `COMMIT` again each time); rolled back
/// when dropped uncommitted.
pub(crate) struct Tx<'a> {
    conn: &'a Connection,
    open: bool,
}

impl<'a> Tx<'a> {
    fn begin(conn: &'a Connection) -> rusqlite::Result<Tx<'a>> {
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        Ok(Tx { conn, open: true })
    }

    pub(crate) fn commit(mut self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn u64_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn u32_of(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Started => "started",
        EventKind::Executing => "executing",
        EventKind::Rusage => "rusage",
        EventKind::State => "state",
        EventKind::Finished => "finished",
        EventKind::StartFailed => "start_failed",
        EventKind::Ended => "ended",
        EventKind::PostExec => "post_exec",
        EventKind::Chkpnt => "chkpnt",
    }
}

/// How many prepared statements a connection keeps.
const STATEMENT_CACHE: usize = 64;

impl JobDb {
    /// Open (and with `create`, create) the database at `path`, bring its schema up
    /// to [`SCHEMA_VERSION`], and set WAL mode, the busy timeout and
    /// `synchronous=NORMAL` (FULL is set for final events).
    pub fn open(path: &Path, create: bool) -> Result<JobDb, DbError> {
        let err = |source| DbError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut conn = Connection::open_with_flags(path, flags).map_err(err)?;
        conn.busy_handler(Some(busy_retry)).map_err(err)?;
        // Every statement is cached (some twenty); rusqlite keeps 16 by default, and a
        // statement pushed out is parsed and planned again at its next use.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // journal_mode is persistent in the file: set only when it is not WAL yet (a new
        // file), read otherwise.
        let mut mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            mode = conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
                .map_err(err)?;
        }
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(
                "job database {}: journal mode {mode}, not WAL",
                path.display()
            );
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        migrate(&mut conn).map_err(|e| match e {
            Migrate::Sqlite(s) => err(s),
            Migrate::TooNew(found) => DbError::TooNew {
                path: path.to_path_buf(),
                found,
                known: SCHEMA_VERSION,
            },
        })?;
        Ok(JobDb {
            conn,
            path: path.to_path_buf(),
            full: false,
            wal: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: rusqlite::Error) -> DbError {
        DbError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Begin a write transaction (`BEGIN IMMEDIATE`).
    fn write_tx(&self) -> rusqlite::Result<Tx<'_>> {
        Tx::begin(&self.conn)
    }

    /// Make every commit so far durable: `fdatasync` of the write-ahead log, which
    /// holds them (WAL mode; see [`JobDb::append_events_then_sync`]).
    pub fn sync_log(&mut self) -> Result<(), DbError> {
        use std::os::unix::fs::MetadataExt;
        let mut wal_path = self.path.clone().into_os_string();
        wal_path.push("-wal");
        let io = |source| DbError::Sync {
            path: self.path.clone(),
            source,
        };
        let ino = std::fs::metadata(&wal_path).map_err(io)?.ino();
        if self.wal.as_ref().is_none_or(|(i, _)| *i != ino) {
            self.wal = Some((ino, std::fs::File::open(&wal_path).map_err(io)?));
        }
        match &self.wal {
            Some((_, f)) => f.sync_data().map_err(io),
            None => Ok(()),
        }
    }

    /// Set `synchronous` for the next transactions (outside a transaction).
    fn durability(&mut self, full: bool) -> Result<(), DbError> {
        if self.full != full {
            // A cached statement: a job's final event sets FULL and the next commit
            // NORMAL again, so these are run twice per job.
            self.conn
                .prepare_cached(if full {
                    "PRAGMA synchronous = FULL"
                } else {
                    "PRAGMA synchronous = NORMAL"
                })
                .and_then(|mut st| st.execute([]))
                .map_err(|e| self.err(e))?;
            self.full = full;
        }
        Ok(())
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))
    }
}
