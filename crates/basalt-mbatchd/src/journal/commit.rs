//! One loop iteration made durable: its `Log` and `Acct` effects appended to every usable
//! copy with one fsync each; and the write probe that tells when a full or failing disk
//! takes writes again.

use super::{Journal, JournalError, finish_record, to_record};
use basalt_eventlog as el;
use basalt_sched::{Effect, Sched};

impl Journal {
    /// Make the `Log` and `Acct` effects of one loop iteration durable: one write and
    /// one fsync per file and copy. With a duplicate log, the iteration is durable when at
    /// least one copy took it; a copy that failed is marked broken and re-synchronised
    /// later ([`Journal::resync`]). Refuses (and writes nothing) once the lock is no
    /// longer ours.
    pub fn commit(&mut self, sched: &Sched, effects: &[Effect]) -> Result<(), JournalError> {
        let mut recs = Vec::new();
        let mut acct = Vec::new();
        for e in effects {
            match e {
                Effect::Log(ev) => recs.push(to_record(ev)),
                Effect::Acct(key) => {
                    if let Some(j) = sched.jobs().get(key) {
                        acct.push(finish_record(j));
                    }
                }
                _ => {}
            }
        }
        self.sync_spool()?;
        if recs.is_empty() && acct.is_empty() {
            return Ok(());
        }
        self.check_lock()?;
        let mut ok = false;
        let mut first_err = None;
        for copy in &mut self.copies {
            if copy.broken.is_some() {
                continue;
            }
            let Some((events, acct_log)) = copy.logs.as_mut() else {
                continue;
            };
            let res = (|| -> Result<(), el::EventLogError> {
                if !recs.is_empty() {
                    events.append(&recs)?;
                }
                if !acct.is_empty() {
                    acct_log.append(&acct)?;
                }
                Ok(())
            })();
            match res {
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
