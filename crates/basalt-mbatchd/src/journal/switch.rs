//! The lsb.events switch: history to `lsb.events.1`, the live jobs carried into a new file.

use super::copies::write_copy;
use super::reload::open_logs;
use super::{Journal, JournalError, to_record};
use basalt_eventlog as el;
use basalt_sched::Event;

impl Journal {
    /// Switch lsb.events (event-log.md §6): the history moves to `lsb.events.1` (older
    /// files shift up), the new file holds `carried` (what rebuilds every job still in
    /// memory) before its header offset and `appended` (control state, LOG_SWITCH) after
    /// it; `lsb.events.index` is brought up to date. Done in the shared directory; a local
    /// duplicate gets a copy of the new file. Refused while a copy is out of date.
    pub fn switch(
        &mut self,
        time: i64,
        carried: &[Event],
        appended: &[Event],
    ) -> Result<el::SwitchReport, JournalError> {
        self.check_lock()?;
        if !self.acct_pending.is_empty() {
            // What the new file carries over must have its accounting records (the
            // rebuild at replay looks after the header offset only).
            return Err(el::EventLogError::Io {
                path: self.logdir.join(el::ACCT_FILE),
                op: "switch",
                source: std::io::Error::other(
                    "accounting records wait to be written; switch postponed",
                ),
            }
            .into());
        }
        if let Some(c) = self.copies.iter().find(|c| c.broken.is_some()) {
            return Err(el::EventLogError::Io {
                path: c.dir.join(el::EVENTS_FILE),
                op: "switch",
                source: std::io::Error::other(
                    "a copy of the event log is out of date; switch postponed",
                ),
            }
            .into());
        }
        let carried: Vec<el::Record> = carried.iter().map(to_record).collect();
        let appended: Vec<el::Record> = appended.iter().map(to_record).collect();
        let Some((events, _)) = self.copies.first_mut().and_then(|c| c.logs.as_mut()) else {
            return Err(el::EventLogError::Io {
                path: self.logdir.join(el::EVENTS_FILE),
                op: "switch",
                source: std::io::Error::other("the event log is not open"),
            }
            .into());
        };
        let report = events.switch(time, &carried, &appended)?;
        if let Err(e) = el::index::update_after_switch(&self.logdir) {
            tracing::warn!(
                "cannot update {}: {e}",
                self.logdir.join(el::index::INDEX_FILE).display()
            );
        }
        // The duplicate gets the new file as it is.
        for i in 1..self.copies.len() {
            let dir = self.copies[i].dir.clone();
            let res = std::fs::read(self.logdir.join(el::EVENTS_FILE))
                .and_then(|b| write_copy(&dir, el::EVENTS_FILE, &b))
                .map_err(|e| e.to_string())
                .and_then(|()| open_logs(&dir, &self.opts).map_err(|e| e.to_string()));
            match res {
                Ok((events, acct, _)) => self.copies[i].logs = Some((events, acct)),
                Err(e) => {
                    tracing::error!("event log copy in {}: {e}", dir.display());
                    self.copies[i].broken = Some(e);
                }
            }
        }
        Ok(report)
    }
}
