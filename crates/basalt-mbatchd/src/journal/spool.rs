//! Spooled job files (`info/`): written before their JOB_NEW is acknowledged, synced
//! with the iteration's commit, found for dispatch, removed after JOB_CLEAN.

use super::{Journal, JournalError};
use basalt_eventlog as el;
use std::path::PathBuf;

/// Up to this many job files spooled in one iteration are synced one by one; more with
/// one `syncfs`.
pub const PER_FILE_SYNC_MAX: usize = 8;

impl Journal {
    /// Spool a job file durably (before its JOB_NEW is acknowledged).
    pub fn spool(
        &mut self,
        submit_time: i64,
        job_id: u64,
        contents: &[u8],
    ) -> Result<(), JournalError> {
        // Into the shared directory; with a duplicate log, into the local one when the
        // shared one cannot take it (copied back by [`Journal::resync`]).
        let mut first_err = None;
        for copy in &self.copies {
            match el::spool_job_file_unsynced(&copy.dir, submit_time, job_id, contents) {
                Ok(path) => {
                    if !self.unsynced.contains(&copy.dir) {
                        self.unsynced.push(copy.dir.clone());
                    }
                    if self.unsynced_files.len() <= PER_FILE_SYNC_MAX {
                        self.unsynced_files.push(path);
                    }
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!("cannot spool job {job_id} in {}: {e}", copy.dir.display());
                    first_err.get_or_insert(e);
                }
            }
        }
        Err(first_err
            .unwrap_or_else(|| el::EventLogError::Io {
                path: self.logdir.clone(),
                op: "spool",
                source: std::io::Error::other("no log directory"),
            })
            .into())
    }

    /// Make the job files spooled since the last commit durable. A few (at most
    /// [`PER_FILE_SYNC_MAX`]) are synced one by one, then their directory: that costs
    /// what they cost, whatever else the file system is writing. More take one `syncfs`
    /// per file system instead of two fsyncs per file, so that a burst of submissions
    /// costs a couple of syncs, not one per job. Called by [`Journal::commit`] before the
    /// iteration's JOB_NEW records are appended.
    pub fn sync_spool(&mut self) -> Result<(), JournalError> {
        if self.unsynced.is_empty() {
            return Ok(());
        }
        let dirs = std::mem::take(&mut self.unsynced);
        let files = std::mem::take(&mut self.unsynced_files);
        if self.opts.sync == el::SyncPolicy::None {
            return Ok(());
        }
        let io = |path: PathBuf, op: &'static str| {
            move |source: std::io::Error| -> JournalError {
                el::EventLogError::Io { path, op, source }.into()
            }
        };
        if files.len() <= PER_FILE_SYNC_MAX {
            for f in files {
                std::fs::File::open(&f)
                    .and_then(|h| h.sync_all())
                    .map_err(io(f.clone(), "fsync job file"))?;
            }
            for dir in dirs {
                let info = dir.join(el::INFO_DIR);
                std::fs::File::open(&info)
                    .and_then(|h| h.sync_all())
                    .map_err(io(info.clone(), "fsync directory"))?;
            }
            return Ok(());
        }
        for dir in dirs {
            let info = dir.join(el::INFO_DIR);
            std::fs::File::open(&info)
                .and_then(|f| nix::unistd::syncfs(&f).map_err(std::io::Error::from))
                .map_err(io(info.clone(), "syncfs"))?;
        }
        Ok(())
    }

    /// Where a spooled job file is (the shared directory, else a copy that has it).
    pub fn job_file_path(&self, name: &str) -> PathBuf {
        self.copies
            .iter()
            .map(|c| c.dir.join(el::INFO_DIR).join(name))
            .find(|p| p.exists())
            .unwrap_or_else(|| self.logdir.join(el::INFO_DIR).join(name))
    }

    /// Forget a spooled job file (after JOB_CLEAN). Failures are only logged.
    pub fn remove_spooled(&mut self, name: &str) {
        for copy in &self.copies {
            if let Err(e) = el::remove_job_file(&copy.dir, name) {
                tracing::warn!("cannot remove spooled job file {name}: {e}");
            }
        }
    }
}
