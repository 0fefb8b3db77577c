//! Rows of the `jobs` table: a new job, its supervisor's identity, loading jobs
//! with their events, acknowledgements, abandonment and removal.

use super::{DbError, JobDb, Key, StoredJob, i, u32_of, u64_of};
use crate::state::{Launch, SupervisorId};
use basalt_proto::sbatchd::JobSpec;
use rusqlite::{OptionalExtension, params};

impl JobDb {
    /// Record a new job (not fsynced, see the module doc), with the supervisor it is
    /// about to be handed to when known. A leftover row of the same key and its events
    /// are replaced.
    pub fn insert_job(
        &mut self,
        key: Key,
        spec: &JobSpec,
        launch: &Launch,
        now: i64,
        supervisor: Option<&SupervisorId>,
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
        let tx = self.write_tx().map_err(err)?;
        let k = (i(key.0), i64::from(key.1), i64::from(key.2));
        tx.prepare_cached("DELETE FROM events WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3")
            .and_then(|mut st| st.execute(params![k.0, k.1, k.2]))
            .map_err(err)?;
        tx.prepare_cached("DELETE FROM jobs WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3")
            .and_then(|mut st| st.execute(params![k.0, k.1, k.2]))
            .map_err(err)?;
        let (sup_pid, sup_start, sup_boot) = match supervisor {
            Some(s) => (
                Some(i64::from(s.pid)),
                Some(i(s.start)),
                Some(s.boot.as_str()),
            ),
            None => (None, None, None),
        };
        tx.prepare_cached(
            "INSERT INTO jobs (job_id, idx, attempt, created, spec, launch,
                               sup_pid, sup_start, sup_boot)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .and_then(|mut st| {
            st.execute(params![
                k.0,
                k.1,
                k.2,
                now,
                spec_bytes,
                launch_json,
                sup_pid,
                sup_start,
                sup_boot
            ])
        })
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Record the job's supervisor (not durably: after a reboot it is gone anyway).
    pub fn set_supervisor(&mut self, key: Key, id: &SupervisorId) -> Result<(), DbError> {
        self.durability(false)?;
        let n = self
            .conn
            .prepare_cached(
                "UPDATE jobs SET sup_pid = ?4, sup_start = ?5, sup_boot = ?6
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            )
            .and_then(|mut st| {
                st.execute(params![
                    i(key.0),
                    key.1,
                    key.2,
                    i64::from(id.pid),
                    i(id.start),
                    id.boot
                ])
            })
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
            .prepare_cached(
                "SELECT sup_pid, sup_start, sup_boot FROM jobs
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            )
            .and_then(|mut st| {
                st.query_row(params![i(key.0), key.1, key.2], |r| {
                    Ok((
                        r.get::<_, Option<i64>>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                })
            })
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(row.and_then(sup_id))
    }

    /// One job, with its events.
    pub fn job(&self, key: Key) -> Result<Option<StoredJob>, DbError> {
        let row = self
            .conn
            .prepare_cached(SELECT_ONE_JOB)
            .and_then(|mut st| st.query_row(params![i(key.0), key.1, key.2], job_row))
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

    /// mbatchd acknowledged each job's events up to its `seq`: remember it and prune the
    /// acknowledged `rusage` events, for all of them in one transaction.
    pub fn ack_many(&mut self, acks: &[(Key, u64)]) -> Result<(), DbError> {
        if acks.is_empty() {
            return Ok(());
        }
        self.durability(false)?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.write_tx().map_err(err)?;
        for &(key, seq) in acks {
            tx.prepare_cached(
                "UPDATE jobs SET acked_seq = MAX(acked_seq, ?4)
                 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            )
            .and_then(|mut st| st.execute(params![i(key.0), key.1, key.2, i(seq)]))
            .map_err(err)?;
            tx.prepare_cached(
                "DELETE FROM events WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3
                 AND seq <= ?4 AND kind = 'rusage'",
            )
            .and_then(|mut st| st.execute(params![i(key.0), key.1, key.2, i(seq)]))
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// mbatchd does not know the job: report it no more.
    pub fn abandon(&mut self, key: Key) -> Result<(), DbError> {
        self.durability(false)?;
        self.conn
            .prepare_cached(
                "UPDATE jobs SET abandoned = 1 WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            )
            .and_then(|mut st| st.execute(params![i(key.0), key.1, key.2]))
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Forget these jobs and their events, in one transaction.
    pub fn remove_many(&mut self, keys: &[Key]) -> Result<(), DbError> {
        if keys.is_empty() {
            return Ok(());
        }
        self.durability(false)?;
        let path = self.path.clone();
        let err = |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.write_tx().map_err(err)?;
        for key in keys {
            for sql in [
                "DELETE FROM events WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
                "DELETE FROM jobs WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3",
            ] {
                tx.prepare_cached(sql)
                    .and_then(|mut st| st.execute(params![i(key.0), key.1, key.2]))
                    .map_err(err)?;
            }
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

macro_rules! select_job {
    () => {
        "SELECT job_id, idx, attempt, created, spec, launch, sup_pid, sup_start, sup_boot,
        state, pid, pgid, last_seq, acked_seq, abandoned FROM jobs"
    };
}
const SELECT_JOB: &str = select_job!();
/// One job by its key (a constant string, so that its statement is prepared once).
const SELECT_ONE_JOB: &str = concat!(
    select_job!(),
    " WHERE job_id = ?1 AND idx = ?2 AND attempt = ?3"
);

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
