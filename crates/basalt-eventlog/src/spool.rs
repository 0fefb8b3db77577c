//! The job-file spool `logdir/info/<submitTime>.<jobId>` (event-log.md §9).
//!
//! mbatchd writes the rendered job file (`basalt_core::jobfile`) here before it logs the
//! job's `JOB_NEW`, so that a logged job always has its file. The write is durable:
//! temporary file, fsync, rename, fsync of the directory.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::EventLogError;

/// The spool directory's name under the log directory.
pub const INFO_DIR: &str = "info";

/// The job file's name, `"<submitTime>.<jobId>"` (also `JOB_NEW`'s `jobFile` field).
pub fn job_file_name(submit_time: i64, job_id: u64) -> String {
    format!("{submit_time}.{job_id}")
}

fn check_name(name: &str) -> Result<(), EventLogError> {
    let bad = name.is_empty()
        || name.starts_with('.')
        || name.contains('/')
        || name.contains('\0')
        || name.len() > 255;
    if bad {
        return Err(EventLogError::InvalidJobFileName {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// Write `logdir/info/<submitTime>.<jobId>` durably and return its path. The directory is
/// created (mode 0700) when missing; the file is mode 0600 (it holds the submitter's
/// environment). An existing file of the same name is replaced.
pub fn spool_job_file(
    logdir: &Path,
    submit_time: i64,
    job_id: u64,
    contents: &[u8],
) -> Result<PathBuf, EventLogError> {
    write_job_file(logdir, &job_file_name(submit_time, job_id), contents, true)
}

/// Like [`spool_job_file`], by the job file's name (`<submitTime>.<jobId>`), without any
/// fsync: the file is written to a temporary name and renamed into place, and the caller
/// makes the directory durable for a whole group of job files at once (mbatchd: one
/// `syncfs` per scheduling-loop iteration, before the group's JOB_NEW records are
/// logged).
pub fn spool_job_file_unsynced(
    logdir: &Path,
    name: &str,
    contents: &[u8],
) -> Result<PathBuf, EventLogError> {
    check_name(name)?;
    write_job_file(logdir, name, contents, false)
}

fn write_job_file(
    logdir: &Path,
    name: &str,
    contents: &[u8],
    durable: bool,
) -> Result<PathBuf, EventLogError> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = logdir.join(INFO_DIR);
    let existed = dir.is_dir();
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| EventLogError::io(&dir, "create directory", e))?;
    if !existed && durable {
        sync_dir(logdir)?;
    }
    let path = dir.join(name);
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(contents)?;
        if durable {
            f.sync_all()?;
        }
        fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(EventLogError::io(&path, "write job file", e));
    }
    if durable {
        sync_dir(&dir)?;
    }
    Ok(path)
}

/// Place a copy of a job file at `logdir/info/<name>` (mode 0600, not synced) unless a
/// file of that name is there already; returns whether it wrote one. For LSF tools that
/// read `info/`: the durable job file is in the sequential spool ([`crate::JobSpool`]).
pub fn place_job_file(logdir: &Path, name: &str, contents: &[u8]) -> Result<bool, EventLogError> {
    check_name(name)?;
    let dir = logdir.join(INFO_DIR);
    let path = dir.join(name);
    let open = || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
    };
    let mut f = match open() {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|e| EventLogError::io(&dir, "create directory", e))?;
            match open() {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
                Err(e) => return Err(EventLogError::io(&path, "write job file", e)),
            }
        }
        Err(e) => return Err(EventLogError::io(&path, "write job file", e)),
    };
    if let Err(e) = f.write_all(contents) {
        drop(f);
        let _ = fs::remove_file(&path);
        return Err(EventLogError::io(&path, "write job file", e));
    }
    Ok(true)
}

/// Read a spooled job file by name (`"<submitTime>.<jobId>"`).
pub fn read_job_file(logdir: &Path, name: &str) -> Result<Vec<u8>, EventLogError> {
    check_name(name)?;
    let path = logdir.join(INFO_DIR).join(name);
    fs::read(&path).map_err(|e| EventLogError::io(&path, "read job file", e))
}

/// Remove a spooled job file. Returns `false` when it did not exist. The removal is not
/// fsynced: a file that reappears after a crash is harmless and removed again later.
pub fn remove_job_file(logdir: &Path, name: &str) -> Result<bool, EventLogError> {
    check_name(name)?;
    let path = logdir.join(INFO_DIR).join(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(EventLogError::io(&path, "remove job file", e)),
    }
}

fn sync_dir(dir: &Path) -> Result<(), EventLogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| EventLogError::io(dir, "fsync directory", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn spool_read_remove() {
        let dir = tempfile::tempdir().unwrap();
        let logdir = dir.path().join("logdir");
        let p = spool_job_file(&logdir, 1795339535, 102, b"#! /bin/sh\necho hi\n").unwrap();
        assert_eq!(p, logdir.join("info/1795339535.102"));
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            read_job_file(&logdir, "1795339535.102").unwrap(),
            b"#! /bin/sh\necho hi\n"
        );
        // Replacing keeps one file and no temporaries.
        spool_job_file(&logdir, 1795339535, 102, b"v2").unwrap();
        let names: Vec<_> = fs::read_dir(logdir.join("info"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["1795339535.102"]);
        assert_eq!(read_job_file(&logdir, "1795339535.102").unwrap(), b"v2");
        assert!(remove_job_file(&logdir, "1795339535.102").unwrap());
        assert!(!remove_job_file(&logdir, "1795339535.102").unwrap());
        assert!(read_job_file(&logdir, "1795339535.102").is_err());
    }

    #[test]
    fn names_cannot_escape_the_spool() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "../lsb.events", "a/b", ".hidden", ".."] {
            assert!(
                matches!(
                    read_job_file(dir.path(), bad),
                    Err(EventLogError::InvalidJobFileName { .. })
                ),
                "{bad:?}"
            );
            assert!(remove_job_file(dir.path(), bad).is_err(), "{bad:?}");
        }
    }
}
