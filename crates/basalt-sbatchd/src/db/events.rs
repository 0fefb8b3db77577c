//! Rows of the `events` table: appending a job's events (one final event per job,
//! fsynced at once or by the caller) and reading those after a sequence number.

use super::{DbError, JobDb, Key, REBOOT_SEQ_GAP, i, kind_name, u32_of, u64_of};
use crate::state::{Event, EventKind};
use rusqlite::{OptionalExtension, params};

impl JobDb {
    /// Append events to a job's history in one transaction, fsynced when it holds
    /// a final event. Each gets the next sequence number (written into it); the
    /// job's state, pid and pgid follow. Returns the last sequence number given.
    /// Refused ([`DbError::Finished`]) once the job has its final event, so a job's
    /// end is recorded once.
    pub fn append_events(&mut self, key: Key, events: &mut [Event]) -> Result<u64, DbError> {
        self.append_inner(key, events, 0, true)
    }

    /// Append events as [`JobDb::append_events`] does, but commit even a final event
    /// without waiting for the disk: the caller makes it durable with
    /// [`JobDb::sync_log`] right after waking sbatchd, so a job's end goes to the disk
    /// while sbatchd reports it instead of before (the job supervisor does this). A
    /// killed process loses nothing (the commit is in the page cache); a crash of the
    /// host within that millisecond may lose it, as it may lose a job that has just
    /// ended and whose end is not committed yet.
    pub fn append_events_then_sync(
        &mut self,
        key: Key,
        events: &mut [Event],
    ) -> Result<u64, DbError> {
        self.append_inner(key, events, 0, false)
    }

    /// Append the end of a job of an earlier boot: numbered [`REBOOT_SEQ_GAP`]
    /// past the last recorded event.
    pub fn append_after_reboot(&mut self, key: Key, event: &mut Event) -> Result<u64, DbError> {
        self.append_inner(key, std::slice::from_mut(event), REBOOT_SEQ_GAP - 1, true)
    }

    fn append_inner(
        &mut self,
        key: Key,
        events: &mut [Event],
        gap: u64,
        sync_final: bool,
    ) -> Result<u64, DbError> {
        self.durability(
            sync_final
                && events
                    .iter()
                    .any(|e| e.kind.is_final() || e.kind == EventKind::Ended),
        )?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.write_tx().map_err(err)?;
        let k = (i(key.0), i64::from(key.1), i64::from(key.2));
        let row: Option<(i64, i64, i64, i64)> = tx
            .prepare_cached(
                "SELECT last_seq, state, pid, pgid FROM jobs
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            )
            .and_then(|mut st| {
                st.query_row(params![k.0, k.1, k.2], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
            })
            .optional()
            .map_err(err)?;
        let Some((last, state, pid, pgid)) = row else {
            return Err(DbError::NoJob { path, key });
        };
        // A job's story has one end: nothing follows a final event.
        let ended: bool = tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM events WHERE job_id = ?1 AND idx = ?2
                 AND attempt = ?3 AND kind IN ('finished', 'start_failed', 'post_exec'))",
            )
            .and_then(|mut st| st.query_row(params![k.0, k.1, k.2], |r| r.get(0)))
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
                EventKind::Rusage | EventKind::Chkpnt => {}
                EventKind::State | EventKind::Finished | EventKind::Ended | EventKind::PostExec => {
                    state = ev.state
                }
                EventKind::StartFailed => state = basalt_core::job::status::EXIT,
            }
            let body = serde_json::to_string(&*ev).map_err(|e| DbError::Corrupt {
                path: path.clone(),
                key,
                what: format!("event {seq}: {e}"),
            })?;
            tx.prepare_cached(
                "INSERT INTO events (job_id, idx, attempt, seq, kind, time, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    k.0,
                    k.1,
                    k.2,
                    i(seq),
                    kind_name(ev.kind),
                    ev.time,
                    body
                ])
            })
            .map_err(err)?;
        }
        tx.prepare_cached(
            "UPDATE jobs SET last_seq = ?4, state = ?5, pid = ?6, pgid = ?7
             WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
        )
        .and_then(|mut st| {
            st.execute(params![
                k.0,
                k.1,
                k.2,
                i(seq),
                i64::from(state),
                i64::from(pid),
                i64::from(pgid)
            ])
        })
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
}
