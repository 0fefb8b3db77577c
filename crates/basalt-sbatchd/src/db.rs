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
//!   and deletes the job once mbatchd acknowledged its final report. It prunes
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
//! `start_failed`) is written with `synchronous=FULL`: the WAL is fsynced before
//! the commit returns — before sbatchd can read, let alone report, the job's end —
//! and that fsync covers every earlier frame of the WAL too (one file, written in
//! order; a checkpoint fsyncs the WAL before copying it and the database after).
//! So a job costs one fsync, as LSF's and OpenLava's sbatchd do.
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
//! the supervisor is single-threaded and synchronous anyway.

use crate::state::{Event, EventKind, Launch, SupervisorId};
use basalt_proto::sbatchd::JobSpec;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
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

/// SQLite's busy handler: true = try again. Short sleeps first (a writer holds the
/// lock for microseconds, or for one fsync), then 5 ms ones, up to [`BUSY_TIMEOUT`].
fn busy_retry(attempt: i32) -> bool {
    const FAST: i32 = 100;
    const FAST_SLEEP: Duration = Duration::from_micros(200);
    const SLOW_SLEEP: Duration = Duration::from_millis(5);
    let slow_tries = (BUSY_TIMEOUT.as_millis() / SLOW_SLEEP.as_millis()) as i32;
    if attempt < FAST {
        std::thread::sleep(FAST_SLEEP);
        true
    } else if attempt < FAST + slow_tries {
        std::thread::sleep(SLOW_SLEEP);
        true
    } else {
        false
    }
}

/// Migration steps: `MIGRATIONS[n]` brings version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1
    "CREATE TABLE jobs (
        job_id    INTEGER NOT NULL,
        idx       INTEGER NOT NULL,
        attempt   INTEGER NOT NULL,
        created   INTEGER NOT NULL,
        spec      BLOB    NOT NULL,
        launch    TEXT    NOT NULL,
        sup_pid   INTEGER,
        sup_start INTEGER,
        sup_boot  TEXT,
        state     INTEGER NOT NULL DEFAULT 0,
        pid       INTEGER NOT NULL DEFAULT 0,
        pgid      INTEGER NOT NULL DEFAULT 0,
        last_seq  INTEGER NOT NULL DEFAULT 0,
        acked_seq INTEGER NOT NULL DEFAULT 0,
        abandoned INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (job_id, idx, attempt)
    );
    CREATE TABLE events (
        job_id  INTEGER NOT NULL,
        idx     INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        seq     INTEGER NOT NULL,
        kind    TEXT    NOT NULL,
        time    INTEGER NOT NULL,
        body    TEXT    NOT NULL,
        PRIMARY KEY (job_id, idx, attempt, seq)
    );",
];

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
    }
}

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
        // journal_mode is persistent in the file; setting it again is a no-op.
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(err)?;
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

    /// Set `synchronous` for the next transactions (outside a transaction).
    fn durability(&mut self, full: bool) -> Result<(), DbError> {
        if self.full != full {
            self.conn
                .pragma_update(None, "synchronous", if full { "FULL" } else { "NORMAL" })
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

    /// Record a new job (not fsynced, see the module doc). A leftover row of the
    /// same key and its events are replaced.
    pub fn insert_job(
        &mut self,
        key: Key,
        spec: &JobSpec,
        launch: &Launch,
        now: i64,
    ) -> Result<(), DbError> {
        use prost::Message;
        let launch_json = serde_json::to_string(launch).map_err(|e| DbError::Corrupt {
            path: self.path.clone(),
            key,
            what: format!("launch information: {e}"),
        })?;
        let spec_bytes = spec.encode_to_vec();
        self.durability(false)?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let k = (i(key.0), i64::from(key.1), i64::from(key.2));
        tx.execute(
            "DELETE FROM events WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            params![k.0, k.1, k.2],
        )
        .map_err(err)?;
        tx.execute(
            "DELETE FROM jobs WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            params![k.0, k.1, k.2],
        )
        .map_err(err)?;
        tx.execute(
            "INSERT INTO jobs (job_id, idx, attempt, created, spec, launch)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![k.0, k.1, k.2, now, spec_bytes, launch_json],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Record the job's supervisor (not durably: after a reboot it is gone anyway).
    pub fn set_supervisor(&mut self, key: Key, id: &SupervisorId) -> Result<(), DbError> {
        self.durability(false)?;
        let n = self
            .conn
            .execute(
                "UPDATE jobs SET sup_pid = ?4, sup_start = ?5, sup_boot = ?6
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
                params![
                    i(key.0),
                    key.1,
                    key.2,
                    i64::from(id.pid),
                    i(id.start),
                    id.boot
                ],
            )
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(DbError::NoJob {
                path: self.path.clone(),
                key,
            });
        }
        Ok(())
    }

    /// The recorded supervisor of a job, if any.
    pub fn supervisor(&self, key: Key) -> Result<Option<SupervisorId>, DbError> {
        let row = self
            .conn
            .query_row(
                "SELECT sup_pid, sup_start, sup_boot FROM jobs
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
                params![i(key.0), key.1, key.2],
                |r| {
                    Ok((
                        r.get::<_, Option<i64>>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(row.and_then(sup_id))
    }

    /// Append events to a job's history in one transaction, fsynced when it holds
    /// a final event. Each gets the next sequence number (written into it); the
    /// job's state, pid and pgid follow. Returns the last sequence number given.
    /// Refused ([`DbError::Finished`]) once the job has its final event, so a job's
    /// end is recorded once.
    pub fn append_events(&mut self, key: Key, events: &mut [Event]) -> Result<u64, DbError> {
        self.append_inner(key, events, 0)
    }

    /// Append the end of a job of an earlier boot: numbered [`REBOOT_SEQ_GAP`]
    /// past the last recorded event.
    pub fn append_after_reboot(&mut self, key: Key, event: &mut Event) -> Result<u64, DbError> {
        self.append_inner(key, std::slice::from_mut(event), REBOOT_SEQ_GAP - 1)
    }

    fn append_inner(&mut self, key: Key, events: &mut [Event], gap: u64) -> Result<u64, DbError> {
        self.durability(events.iter().any(|e| e.kind.is_final()))?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let k = (i(key.0), i64::from(key.1), i64::from(key.2));
        let row: Option<(i64, i64, i64, i64)> = tx
            .query_row(
                "SELECT last_seq, state, pid, pgid FROM jobs
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
                params![k.0, k.1, k.2],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(err)?;
        let Some((last, state, pid, pgid)) = row else {
            return Err(DbError::NoJob { path, key });
        };
        // A job's story has one end: nothing follows a final event.
        let ended: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM events WHERE job_id = ?1 AND idx = ?2
                 AND attempt = ?3 AND kind IN ('finished', 'start_failed'))",
                params![k.0, k.1, k.2],
                |r| r.get(0),
            )
            .map_err(err)?;
        if ended {
            return Err(DbError::Finished { path, key });
        }
        let (mut seq, mut state, mut pid, mut pgid) = (
            u64_of(last).saturating_add(gap),
            u32_of(state),
            u32_of(pid),
            u32_of(pgid),
        );
        for ev in events.iter_mut() {
            seq += 1;
            ev.seq = seq;
            match ev.kind {
                EventKind::Started => {
                    pid = ev.pid;
                    pgid = ev.pgid;
                    state = ev.state;
                }
                EventKind::Executing => {
                    if pid == 0 {
                        pid = ev.pid;
                        pgid = ev.pgid;
                    }
                }
                EventKind::Rusage => {}
                EventKind::State | EventKind::Finished => state = ev.state,
                EventKind::StartFailed => state = basalt_core::job::status::EXIT,
            }
            let body = serde_json::to_string(&*ev).map_err(|e| DbError::Corrupt {
                path: path.clone(),
                key,
                what: format!("event {seq}: {e}"),
            })?;
            tx.execute(
                "INSERT INTO events (job_id, idx, attempt, seq, kind, time, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![k.0, k.1, k.2, i(seq), kind_name(ev.kind), ev.time, body],
            )
            .map_err(err)?;
        }
        tx.execute(
            "UPDATE jobs SET last_seq = ?4, state = ?5, pid = ?6, pgid = ?7
             WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            params![
                k.0,
                k.1,
                k.2,
                i(seq),
                i64::from(state),
                i64::from(pid),
                i64::from(pgid)
            ],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(seq)
    }

    /// Append one event (see [`JobDb::append_events`]).
    pub fn append_event(&mut self, key: Key, event: &mut Event) -> Result<u64, DbError> {
        self.append_events(key, std::slice::from_mut(event))
    }

    /// The job's events with a sequence number above `after`, in order.
    pub fn events_after(&self, key: Key, after: u64) -> Result<Vec<Event>, DbError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, body FROM events
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3 AND seq > ?4
                 ORDER BY seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![i(key.0), key.1, key.2, i(after)], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(|e| self.err(e))?;
            match serde_json::from_str::<Event>(&body) {
                Ok(mut ev) => {
                    ev.seq = u64_of(seq);
                    out.push(ev);
                }
                Err(e) => tracing::warn!(
                    "job database {}: job {key:?} event {seq} unreadable ({e}); skipped",
                    self.path.display()
                ),
            }
        }
        Ok(out)
    }

    /// One job, with its events.
    pub fn job(&self, key: Key) -> Result<Option<StoredJob>, DbError> {
        let row = self
            .conn
            .query_row(
                &format!("{SELECT_JOB} WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3"),
                params![i(key.0), key.1, key.2],
                job_row,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        match row {
            None => Ok(None),
            Some(r) => self.complete(r).map(Some),
        }
    }

    /// Every job in the table, in key order, with its events. A row that cannot be
    /// decoded is reported and left out.
    pub fn load_all(&self) -> Result<Vec<StoredJob>, DbError> {
        let rows: Vec<JobRow> = {
            let mut stmt = self
                .conn
                .prepare(&format!("{SELECT_JOB} ORDER BY job_id, idx, attempt"))
                .map_err(|e| self.err(e))?;
            let it = stmt.query_map([], job_row).map_err(|e| self.err(e))?;
            it.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        let mut out = Vec::new();
        for r in rows {
            match self.complete(r) {
                Ok(j) => out.push(j),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        Ok(out)
    }

    fn complete(&self, r: JobRow) -> Result<StoredJob, DbError> {
        use prost::Message;
        let key = r.key;
        let corrupt = |what: String| DbError::Corrupt {
            path: self.path.clone(),
            key,
            what,
        };
        let spec =
            JobSpec::decode(r.spec.as_slice()).map_err(|e| corrupt(format!("job spec: {e}")))?;
        let launch: Launch = serde_json::from_str(&r.launch)
            .map_err(|e| corrupt(format!("launch information: {e}")))?;
        let events = self.events_after(key, 0)?;
        Ok(StoredJob {
            key,
            created: r.created,
            spec,
            launch,
            supervisor: r.supervisor,
            state: r.state,
            pid: r.pid,
            pgid: r.pgid,
            last_seq: r.last_seq,
            acked_seq: r.acked_seq,
            abandoned: r.abandoned,
            events,
        })
    }

    /// mbatchd acknowledged the job's events up to `seq`: remember it and prune the
    /// acknowledged `rusage` events.
    pub fn ack(&mut self, key: Key, seq: u64) -> Result<(), DbError> {
        self.durability(false)?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        tx.execute(
            "UPDATE jobs SET acked_seq = MAX(acked_seq, ?4)
             WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            params![i(key.0), key.1, key.2, i(seq)],
        )
        .map_err(err)?;
        tx.execute(
            "DELETE FROM events WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3
             AND seq <= ?4 AND kind = 'rusage'",
            params![i(key.0), key.1, key.2, i(seq)],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// mbatchd does not know the job: report it no more.
    pub fn abandon(&mut self, key: Key) -> Result<(), DbError> {
        self.durability(false)?;
        self.conn
            .execute(
                "UPDATE jobs SET abandoned = 1 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
                params![i(key.0), key.1, key.2],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Forget a job and its events.
    pub fn remove(&mut self, key: Key) -> Result<(), DbError> {
        self.durability(false)?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        for table in ["events", "jobs"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3"),
                params![i(key.0), key.1, key.2],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Copy what the WAL holds into the database file and empty the WAL (at start
    /// and at a clean stop; a busy database is left for SQLite's own checkpoints).
    pub fn checkpoint(&self) {
        if let Err(e) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            tracing::debug!("job database {}: checkpoint: {e}", self.path.display());
        }
    }
}

const SELECT_JOB: &str =
    "SELECT job_id, idx, attempt, created, spec, launch, sup_pid, sup_start, sup_boot,
        state, pid, pgid, last_seq, acked_seq, abandoned FROM jobs";

struct JobRow {
    key: Key,
    created: i64,
    spec: Vec<u8>,
    launch: String,
    supervisor: Option<SupervisorId>,
    state: u32,
    pid: u32,
    pgid: u32,
    last_seq: u64,
    acked_seq: u64,
    abandoned: bool,
}

fn job_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRow> {
    Ok(JobRow {
        key: (u64_of(r.get(0)?), u32_of(r.get(1)?), u32_of(r.get(2)?)),
        created: r.get(3)?,
        spec: r.get(4)?,
        launch: r.get(5)?,
        supervisor: sup_id((r.get(6)?, r.get(7)?, r.get(8)?)),
        state: u32_of(r.get(9)?),
        pid: u32_of(r.get(10)?),
        pgid: u32_of(r.get(11)?),
        last_seq: u64_of(r.get(12)?),
        acked_seq: u64_of(r.get(13)?),
        abandoned: r.get::<_, i64>(14)? != 0,
    })
}

fn sup_id((pid, start, boot): (Option<i64>, Option<i64>, Option<String>)) -> Option<SupervisorId> {
    Some(SupervisorId {
        pid: u32::try_from(pid?).ok()?,
        start: u64::try_from(start?).ok()?,
        boot: boot.unwrap_or_default(),
    })
}

enum Migrate {
    Sqlite(rusqlite::Error),
    TooNew(i64),
}

impl From<rusqlite::Error> for Migrate {
    fn from(e: rusqlite::Error) -> Migrate {
        Migrate::Sqlite(e)
    }
}

/// Bring the schema up to date, one step per transaction (checked again under the
/// write lock, so two processes opening a fresh file do not both create it).
fn migrate(conn: &mut Connection) -> Result<(), Migrate> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let v: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if v > SCHEMA_VERSION {
            return Err(Migrate::TooNew(v));
        }
        if v == SCHEMA_VERSION {
            return Ok(());
        }
        let step = MIGRATIONS
            .get(usize::try_from(v).unwrap_or(usize::MAX))
            .ok_or(Migrate::TooNew(v))?;
        tx.execute_batch(step)?;
        tx.pragma_update(None, "user_version", v + 1)?;
        tx.commit()?;
    }
}

/// sbatchd's access to the database: one thread owns the connection and runs the
/// calls in the order they were made, so the owner task never blocks on SQLite and
/// fire-and-forget writes (acknowledgements, removals) stay ordered.
#[derive(Debug, Clone)]
pub struct DbHandle {
    tx: std::sync::mpsc::Sender<Call>,
}

type Call = Box<dyn FnOnce(&mut JobDb) + Send>;

impl DbHandle {
    /// Start the database thread on an open connection.
    pub fn spawn(mut db: JobDb) -> Result<DbHandle, DbError> {
        let (tx, rx) = std::sync::mpsc::channel::<Call>();
        std::thread::Builder::new()
            .name("sbatchd-db".into())
            .spawn(move || {
                while let Ok(call) = rx.recv() {
                    call(&mut db);
                }
                db.checkpoint();
            })
            .map_err(|e| DbError::Thread(e.to_string()))?;
        Ok(DbHandle { tx })
    }

    /// Run `f` on the database thread and wait for its answer.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut JobDb) -> R + Send + 'static,
    ) -> Result<R, DbError> {
        let (otx, orx) = tokio::sync::oneshot::channel();
        self.tx
            .send(Box::new(move |db: &mut JobDb| {
                let _ = otx.send(f(db));
            }))
            .map_err(|_| DbError::Closed)?;
        orx.await.map_err(|_| DbError::Closed)
    }

    /// Run `f` on the database thread without waiting; a failure is logged.
    pub fn send(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut JobDb) -> Result<(), DbError> + Send + 'static,
    ) {
        let sent = self.tx.send(Box::new(move |db: &mut JobDb| {
            if let Err(e) = f(db) {
                tracing::warn!("{what}: {e}");
            }
        }));
        if sent.is_err() {
            tracing::warn!("{what}: the job database thread is gone");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::job::status as jstat;

    fn spec(job_id: u64) -> JobSpec {
        JobSpec {
            job_id,
            attempt: 1,
            user: "u".into(),
            job_file: b"#!/bin/sh\ntrue\n".to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn schema_is_created_versioned_and_in_wal_mode() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join(DB_FILE);
        assert!(JobDb::open(&p, false).is_err(), "no file without create");
        let db = JobDb::open(&p, true).expect("open");
        assert_eq!(db.schema_version().expect("version"), SCHEMA_VERSION);
        let mode: String = db
            .conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .expect("mode");
        assert_eq!(mode, "wal");
        drop(db);
        // Opening again changes nothing.
        let db = JobDb::open(&p, false).expect("reopen");
        assert_eq!(db.schema_version().expect("version"), SCHEMA_VERSION);
        // A newer schema is refused.
        db.conn
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .expect("bump");
        drop(db);
        match JobDb::open(&p, false) {
            Err(DbError::TooNew { found, .. }) => assert_eq!(found, SCHEMA_VERSION + 1),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn jobs_events_acks_and_removal() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join(DB_FILE);
        let mut a = JobDb::open(&p, true).expect("open");
        // A second connection, like a supervisor's.
        let mut b = JobDb::open(&p, false).expect("open b");
        let key = (7, 0, 1);
        let launch = Launch {
            host: "hostA".into(),
            sample_ms: 300,
            ..Default::default()
        };
        a.insert_job(key, &spec(7), &launch, 100).expect("insert");
        let me = SupervisorId::of(std::process::id()).expect("own id");
        b.set_supervisor(key, &me).expect("sup");
        assert_eq!(a.supervisor(key).expect("read"), Some(me.clone()));
        assert!(b.set_supervisor((8, 0, 1), &me).is_err(), "unknown job");

        let mut first = [
            Event {
                kind: EventKind::Started,
                pid: 42,
                pgid: 42,
                state: jstat::RUN,
                ..Default::default()
            },
            Event {
                kind: EventKind::Executing,
                pid: 42,
                pgid: 42,
                state: jstat::RUN,
                out_path: "/tmp/o".into(),
                ..Default::default()
            },
        ];
        assert_eq!(b.append_events(key, &mut first).expect("append"), 2);
        assert_eq!((first[0].seq, first[1].seq), (1, 2));
        let mut usage = Event {
            kind: EventKind::Rusage,
            mem_kb: 10,
            ..Default::default()
        };
        assert_eq!(b.append_event(key, &mut usage).expect("usage"), 3);
        let got = a.events_after(key, 1).expect("read");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].out_path, "/tmp/o");
        assert_eq!(got[1].seq, 3);

        // Acknowledged usage is pruned, but its number is never given again.
        a.ack(key, 3).expect("ack");
        a.ack(key, 2).expect("an older ack changes nothing");
        let mut stop = Event {
            kind: EventKind::State,
            state: jstat::USUSP,
            ..Default::default()
        };
        assert_eq!(a.append_event(key, &mut stop).expect("state"), 4);
        let all = a.load_all().expect("load");
        assert_eq!(all.len(), 1);
        let j = &all[0];
        assert_eq!(j.key, key);
        assert_eq!(j.spec, spec(7));
        assert_eq!(j.launch.host, "hostA");
        assert_eq!((j.pid, j.pgid, j.state), (42, 42, jstat::USUSP));
        assert_eq!((j.last_seq, j.acked_seq), (4, 3));
        assert!(!j.abandoned);
        assert_eq!(
            j.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 2, 4]
        );
        a.abandon(key).expect("abandon");
        assert!(a.job(key).expect("job").is_some_and(|j| j.abandoned));

        // Replacing a leftover of the same key starts its history afresh.
        a.insert_job(key, &spec(7), &launch, 200).expect("again");
        let j = a.job(key).expect("job").expect("there");
        assert_eq!((j.last_seq, j.events.len(), j.created), (0, 0, 200));
        assert_eq!(j.supervisor, None);

        a.remove(key).expect("remove");
        assert!(a.job(key).expect("job").is_none());
        assert!(a.load_all().expect("load").is_empty());
        assert!(b.append_event(key, &mut stop).is_err(), "no job, no event");

        // One end per job: whoever records it first (supervisor or sbatchd) wins.
        a.insert_job(key, &spec(7), &launch, 300).expect("insert");
        let mut end = Event {
            kind: EventKind::Finished,
            state: jstat::EXIT,
            exit_status: 9,
            ..Default::default()
        };
        assert_eq!(b.append_event(key, &mut end).expect("end"), 1);
        let mut other = Event {
            kind: EventKind::StartFailed,
            ..Default::default()
        };
        assert!(matches!(
            a.append_event(key, &mut other),
            Err(DbError::Finished { .. })
        ));
        let j = a.job(key).expect("job").expect("there");
        assert_eq!((j.state, j.last_seq, j.events.len()), (jstat::EXIT, 1, 1));

        // The end of a job of an earlier boot jumps past any number lost with it.
        a.insert_job(key, &spec(7), &launch, 400).expect("insert");
        let mut first = Event {
            kind: EventKind::Started,
            ..Default::default()
        };
        a.append_event(key, &mut first).expect("started");
        let mut end = Event {
            kind: EventKind::Finished,
            ..Default::default()
        };
        let seq = a.append_after_reboot(key, &mut end).expect("end");
        assert_eq!(seq, 1 + REBOOT_SEQ_GAP);
        assert_eq!(end.seq, seq);
    }
}
