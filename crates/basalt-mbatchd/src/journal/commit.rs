//! One loop iteration made durable: its `Log` effects appended to every usable copy of
//! lsb.events with one fsync (or, for an iteration nothing waits on, written now and
//! synced by the next durable one), then its `Acct` effects to lsb.acct with one more;
//! and the write probe that tells when a full or failing disk takes writes again.

use super::{Journal, JournalError, finish_record, to_record};
use basalt_eventlog as el;
use basalt_sched::Effect;

impl Journal {
    /// Make the `Log` and `Acct` effects of one loop iteration durable: one write and
    /// one fsync per file and copy ([`Journal::commit_as`], then
    /// [`Journal::commit_acct`]). With a duplicate log, the iteration is durable when at
    /// least one copy took it; a copy that failed is marked broken and re-synchronised
    /// later ([`Journal::resync`]). Refuses (and writes nothing) once the lock is no
    /// longer ours.
    pub fn commit(&mut self, effects: &[Effect]) -> Result<(), JournalError> {
        self.commit_as(effects, true)?;
        self.commit_acct(effects)
    }

    /// Make the `Log` effects of one loop iteration durable (lsb.events, after the
    /// spooled job files), or with `durable` false, for an iteration that nothing waits
    /// on (no reply, no order to a host), write them without a sync: the next durable
    /// commit or [`Journal::sync`] makes them durable with its own fsync (the file is
    /// written in order). An iteration with `Acct` effects is always synced here, and
    /// its accounting records are written by [`Journal::commit_acct`] afterwards: the
    /// orders to hosts depend on lsb.events only and go out in between, the replies
    /// wait for both.
    pub fn commit_as(&mut self, effects: &[Effect], durable: bool) -> Result<(), JournalError> {
        let recs: Vec<_> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Log(ev) => Some(to_record(ev)),
                _ => None,
            })
            .collect();
        let durable = durable || effects.iter().any(|e| matches!(e, Effect::Acct(_)));
        self.sync_spool()?;
        if recs.is_empty() {
            return if durable { self.sync() } else { Ok(()) };
        }
        self.check_lock()?;
        self.on_every_copy(|events, _| {
            if durable {
                events.append(&recs)
            } else {
                events.append_deferred(&recs)
            }
        })?;
        if durable {
            self.deferred_since = None;
        } else {
            self.deferred_since
                .get_or_insert_with(std::time::Instant::now);
        }
        Ok(())
    }

    /// Append the accounting records (lsb.acct `JOB_FINISH`) of one loop iteration's
    /// `Acct` effects durably (one write, one fsync per copy), once its lsb.events
    /// records are ([`Journal::commit_as`]); the records still pending (rebuilt at
    /// replay, see [`Journal::restore`]) go first, so lsb.acct keeps the order of the
    /// ends. On failure nothing of the call stays in the file and the pending records
    /// stay pending.
    pub fn commit_acct(&mut self, effects: &[Effect]) -> Result<(), JournalError> {
        let mut acct = std::mem::take(&mut self.acct_pending);
        let pending = acct.len();
        acct.extend(effects.iter().filter_map(|e| match e {
            Effect::Acct(job) => Some(finish_record(job)),
            _ => None,
        }));
        if acct.is_empty() {
            return Ok(());
        }
        let res = self
            .check_lock()
            .and_then(|()| self.on_every_copy(|_, acct_log| acct_log.append(&acct)));
        if res.is_err() {
            acct.truncate(pending);
            self.acct_pending = acct;
        }
        res
    }

    /// Run `write` on every usable copy's logs; a copy it fails on is marked broken
    /// (re-synchronised later). Succeeds when at least one copy took it.
    fn on_every_copy(
        &mut self,
        mut write: impl FnMut(&mut el::EventLog, &mut el::AcctLog) -> Result<(), el::EventLogError>,
    ) -> Result<(), JournalError> {
        let mut ok = false;
        let mut first_err = None;
        for copy in &mut self.copies {
            if copy.broken.is_some() {
                continue;
            }
            let Some((events, acct_log)) = copy.logs.as_mut() else {
                continue;
            };
            match write(events, acct_log) {
                Ok(()) => ok = true,
                Err(e) => {
                    tracing::error!("event log copy in {}: {e}", copy.dir.display());
                    copy.broken = Some(e.to_string());
                    first_err.get_or_insert(e);
                }
            }
        }
        match (ok, first_err) {
            (true, _) => Ok(()),
            (false, Some(e)) => Err(e.into()),
            (false, None) => Err(JournalError::Log(el::EventLogError::Io {
                path: self.logdir.clone(),
                op: "append",
                source: std::io::Error::other("no usable copy of the event log"),
            })),
        }
    }

    /// Were events written without a sync ([`Journal::commit_as`])?
    pub fn unsynced(&self) -> bool {
        self.copies
            .iter()
            .any(|c| c.broken.is_none() && c.logs.as_ref().is_some_and(|(e, _)| e.unsynced()))
    }

    /// How long events have waited for a sync (None: none waits).
    pub fn unsynced_for(&self) -> Option<std::time::Duration> {
        self.deferred_since
            .filter(|_| self.unsynced())
            .map(|t| t.elapsed())
    }

    /// Make the events written without a sync durable (one fsync per copy that has
    /// some). Fails when no copy could.
    pub fn sync(&mut self) -> Result<(), JournalError> {
        if !self.unsynced() {
            self.deferred_since = None;
            return Ok(());
        }
        self.on_every_copy(|events, _| events.sync())?;
        self.deferred_since = None;
        Ok(())
    }

    /// Can the log directory take writes again? Writes and fsyncs a 64 KiB probe file
    /// (removed afterwards).
    pub fn probe(&self) -> Result<(), JournalError> {
        let path = self.logdir.join(".basalt-write-probe");
        let res = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&path)?;
            std::io::Write::write_all(&mut f, &[b'\n'; 64 * 1024])?;
            f.sync_all()
        })();
        let _ = std::fs::remove_file(&path);
        res.map_err(|source| JournalError::Probe { path, source })
    }
}
