//! Job files: written before their JOB_NEW is acknowledged, synced with the iteration's
//! commit, found for dispatch, removed after JOB_CLEAN.
//!
//! They go to the sequential spool of the shared log directory (`spool/<n>.seg`,
//! [`el::JobSpool`]): one write and one `fdatasync` for all the job files of an
//! iteration, no file per job. A dispatched job's file is also placed in
//! `info/<submitTime>.<jobId>` (not synced: a copy for LSF tools that look there),
//! removed with the job. When the spool cannot take a job file (it could not be opened,
//! or its disk refuses the write), the job file goes to `info/` of the first copy of the
//! log that takes it, durably, as before the spool existed; such files, and those of
//! jobs submitted before it existed, are still found there.

use super::{Journal, JournalError};
use basalt_eventlog as el;
use std::path::{Path, PathBuf};

/// Up to this many job files spooled in one iteration are synced one by one; more with
/// one `syncfs`.
pub const PER_FILE_SYNC_MAX: usize = 8;

/// Open the sequential spool of `logdir` (None, logged, when it cannot be read: job files
/// then go to `info/`).
pub(super) fn open_spool(logdir: &Path) -> Option<el::JobSpool> {
    match el::JobSpool::open(logdir) {
        Ok((mut spool, _)) => {
            log_notes(&mut spool);
            Some(spool)
        }
        Err(e) => {
            tracing::error!(
                "cannot open the job-file spool in {}: {e}; job files go to {} one by one",
                logdir.display(),
                logdir.join(el::INFO_DIR).display()
            );
            None
        }
    }
}

/// Log what the spool worked around (a torn tail cut off, a segment not removed).
fn log_notes(spool: &mut el::JobSpool) {
    for note in spool.take_notes() {
        tracing::warn!("job-file spool: {note}");
    }
}

impl Journal {
    /// Spool a job file (durable with the iteration's commit, before its JOB_NEW is
    /// logged).
    pub fn spool(
        &mut self,
        submit_time: i64,
        job_id: u64,
        contents: &[u8],
    ) -> Result<(), JournalError> {
        let name = el::job_file_name(submit_time, job_id);
        if let Some(jobs) = self.jobs.as_mut() {
            match jobs.append(&name, contents) {
                Ok(replaced) => {
                    if replaced {
                        // A new command for a job that may have run before: the copy
                        // placed in info/ at its dispatch is out of date.
                        self.remove_info_copies(&name);
                    }
                    return Ok(());
                }
                Err(e) => tracing::warn!(
                    "cannot append job {job_id} to the job-file spool: {e}; writing it to {}",
                    el::INFO_DIR
                ),
            }
        }
        self.spool_to_info(&name, contents)
    }

    /// Spool a job file to `info/` (made durable by [`Journal::sync_spool`]).
    fn spool_to_info(&mut self, name: &str, contents: &[u8]) -> Result<(), JournalError> {
        // Into the shared directory; with a duplicate log, into the local one when the
        // shared one cannot take it (copied back by [`Journal::resync`]).
        let mut first_err = None;
        for copy in &self.copies {
            match el::spool_job_file_unsynced(&copy.dir, name, contents) {
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
                    tracing::warn!(
                        "cannot spool job file {name} in {}: {e}",
                        copy.dir.display()
                    );
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

    /// Make the job files spooled since the last commit durable: the spool's in one
    /// write and one `fdatasync`; those that went to `info/` (see the module's
    /// documentation), a few (at most [`PER_FILE_SYNC_MAX`]) one by one, then their
    /// directory, more with one `syncfs` per file system. Called by [`Journal::commit`]
    /// before the iteration's JOB_NEW records are appended.
    pub fn sync_spool(&mut self) -> Result<(), JournalError> {
        let durable = self.opts.sync != el::SyncPolicy::None;
        if let Some(jobs) = self.jobs.as_mut()
            && let Err(e) = jobs.flush(durable)
        {
            // The spool's disk refuses (full, failing): this iteration's job files go to
            // info/ of a copy that takes them, and the spool is read again from disk.
            let unwritten = jobs.unwritten();
            tracing::warn!(
                "job-file spool: {e}; writing {} job file(s) to {} instead",
                unwritten.len(),
                el::INFO_DIR
            );
            self.reopen_spool();
            for (name, body) in unwritten {
                self.spool_to_info(&name, &body)?;
            }
        }
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

    /// A job file's contents (by name, `<submitTime>.<jobId>`): from the spool, else
    /// from `info/` of the shared directory or of a copy that has it.
    pub fn job_file(&self, name: &str) -> Result<Vec<u8>, String> {
        if let Some(jobs) = self.jobs.as_ref() {
            match jobs.read(name) {
                Ok(Some(bytes)) => return Ok(bytes),
                Ok(None) => {}
                Err(e) => return Err(format!("cannot read the spooled job file {name}: {e}")),
            }
        }
        let path = self.job_file_path(name);
        std::fs::read(&path)
            .map_err(|e| format!("cannot read the spooled job file {}: {e}", path.display()))
    }

    /// Where a job file spooled to `info/` is (the shared directory, else a copy that
    /// has it).
    pub fn job_file_path(&self, name: &str) -> PathBuf {
        self.copies
            .iter()
            .map(|c| c.dir.join(el::INFO_DIR).join(name))
            .find(|p| p.exists())
            .unwrap_or_else(|| self.logdir.join(el::INFO_DIR).join(name))
    }

    /// Does the sequential spool hold this job file (then a copy of it is placed in
    /// `info/` when its job is dispatched, [`place_info_copy`])?
    pub fn in_spool(&self, name: &str) -> bool {
        self.jobs.as_ref().is_some_and(|j| j.contains(name))
    }

    /// Forget a job file (after JOB_CLEAN): its record in the spool and its files in
    /// `info/`. Failures are only logged.
    pub fn remove_spooled(&mut self, name: &str) {
        if let Some(jobs) = self.jobs.as_mut() {
            jobs.remove(name);
            log_notes(jobs);
        }
        self.remove_info_copies(name);
    }

    /// Keep in the spool only the job files of the job ids `wanted` says yes to (after a
    /// replay: those of jobs that are still known).
    pub fn retain_spooled(&mut self, wanted: impl Fn(u64) -> bool) {
        let Some(jobs) = self.jobs.as_mut() else {
            return;
        };
        let before = jobs.len();
        jobs.retain(wanted);
        let forgotten = before - jobs.len();
        if forgotten > 0 {
            tracing::info!(
                "job-file spool: {forgotten} job file(s) of jobs no longer known forgotten"
            );
        }
        log_notes(jobs);
    }

    /// Read the spool again from disk (after a failed write: what reached the disk is
    /// the truth), keeping only the job files it held before (one forgotten since is not
    /// brought back).
    pub(super) fn reopen_spool(&mut self) {
        let before = self.jobs.as_ref().map(el::JobSpool::job_ids);
        self.jobs = open_spool(&self.logdir);
        if let (Some(jobs), Some(ids)) = (self.jobs.as_mut(), before) {
            jobs.retain(|id| ids.binary_search(&id).is_ok());
        }
    }

    fn remove_info_copies(&self, name: &str) {
        for copy in &self.copies {
            if let Err(e) = el::remove_job_file(&copy.dir, name) {
                tracing::warn!("cannot remove spooled job file {name}: {e}");
            }
        }
    }
}

/// Place a copy of a dispatched job's file in `logdir/info/` for LSF tools that look
/// there (not synced: the spool holds the durable one; an existing file is left as it
/// is). Failures are only logged.
pub fn place_info_copy(logdir: &Path, name: &str, contents: &[u8]) {
    if let Err(e) = el::place_job_file(logdir, name, contents) {
        tracing::debug!("cannot place a copy of job file {name} in info/: {e}");
    }
}
