//! The job database's schema: the migration steps (the schema only grows) and
//! SQLite's busy handler.

use super::{BUSY_TIMEOUT, SCHEMA_VERSION};
use rusqlite::{Connection, TransactionBehavior};
use std::time::Duration;

/// SQLite's busy handler: true = try again. Short sleeps first (a writer holds the
/// lock for microseconds, or for one fsync), then 5 ms ones, up to [`BUSY_TIMEOUT`].
pub(super) fn busy_retry(attempt: i32) -> bool {
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

pub(super) enum Migrate {
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
pub(super) fn migrate(conn: &mut Connection) -> Result<(), Migrate> {
    // The common case, a database already at this version, needs no write lock: the
    // version only grows, so one read decides it (each job's supervisor opens the
    // database, and the lock would make them queue behind each other).
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if v == SCHEMA_VERSION {
        return Ok(());
    }
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
