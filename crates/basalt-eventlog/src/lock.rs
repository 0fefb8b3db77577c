//! The single-writer lock `logdir/#lsb.event.lock` (event-log.md §7).
//!
//! The file is created with `O_CREAT|O_EXCL` and holds `<host>:<pid>`. Its owner rewrites
//! one byte every `MBD_SLEEP_TIME` ([`EventLock::touch`]) so that its mtime advances.
//! [`EventLock::acquire`] takes a free lock, or a lock naming this host and a dead pid;
//! otherwise it reports [`LockError::Held`]. The waiting policy (re-check every
//! `MBD_SLEEP_TIME/2`, take over after more than 4 checks without an mtime change, stay
//! the LIM master meanwhile) belongs to mbatchd, which uses [`EventLock::inspect`] and
//! [`EventLock::take_over`] for it.
//!
//! Replacing a stale lock renames it aside, checks that what was moved is exactly the file
//! judged stale (same inode, content and mtime), and only then creates the new lock with
//! `O_EXCL`, so two starters cannot both win and a live owner's heartbeat is never lost to
//! a takeover decided on old information.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use crate::error::LockError;

/// The lock file's name in the log directory.
pub const LOCK_FILE: &str = "#lsb.event.lock";

/// Locks held by this process (so that a lock naming our own pid is recognised as ours
/// rather than as a stale file from an earlier process that had the same pid).
fn held() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    static HELD: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    HELD.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a lock file says and when it was last touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockInfo {
    /// The raw content, normally `host:pid`.
    pub holder: String,
    /// The host part, when the content has the `host:pid` form.
    pub host: Option<String>,
    /// The pid part, when the content has the `host:pid` form.
    pub pid: Option<u32>,
    /// Last modification (the owner's heartbeat).
    pub modified: SystemTime,
    dev: u64,
    ino: u64,
}

impl LockInfo {
    /// Time since the last heartbeat (0 if the clock went backwards).
    pub fn age(&self) -> Duration {
        SystemTime::now()
            .duration_since(self.modified)
            .unwrap_or(Duration::ZERO)
    }

    fn same_file_state(&self, other: &LockInfo) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.holder == other.holder
            && self.modified == other.modified
    }
}

fn read_info(path: &Path) -> Result<Option<LockInfo>, LockError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LockError::io(path, "open", e)),
    };
    let md = file
        .metadata()
        .map_err(|e| LockError::io(path, "stat", e))?;
    let bytes = fs::read(path).map_err(|e| LockError::io(path, "read", e))?;
    let holder = String::from_utf8_lossy(&bytes).trim().to_owned();
    let (host, pid) = match holder.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (Some(h.to_owned()), p.trim().parse().ok()),
        _ => (None, None),
    };
    Ok(Some(LockInfo {
        holder,
        host,
        pid,
        modified: md.modified().map_err(|e| LockError::io(path, "stat", e))?,
        dev: md.dev(),
        ino: md.ino(),
    }))
}

/// The held lock. Dropping it releases it (errors ignored); [`EventLock::release`] reports
/// them.
#[derive(Debug)]
pub struct EventLock {
    path: PathBuf,
    file: File,
    holder: String,
    dev: u64,
    ino: u64,
    released: bool,
}

enum Replace {
    Done(EventLock),
    /// The file changed since it was judged stale (or vanished, or a new one appeared).
    Changed,
}

impl EventLock {
    /// Take the lock for `host` (this process's pid).
    ///
    /// If the file exists and names `host` (compared like LSF host names) with a pid for
    /// which `is_pid_alive` is false, or with this process's own pid while this process
    /// does not hold it (a previous incarnation in the same pid namespace), the stale lock
    /// is taken over at once. Otherwise [`LockError::Held`] says who holds it and how old
    /// its heartbeat is; the caller decides whether to wait.
    pub fn acquire(
        logdir: &Path,
        host: &str,
        is_pid_alive: impl Fn(u32) -> bool,
    ) -> Result<EventLock, LockError> {
        fs::create_dir_all(logdir).map_err(|e| LockError::io(logdir, "create directory", e))?;
        let path = lock_path(logdir)?;
        let me = std::process::id();
        let mut last = None;
        for _ in 0..5 {
            if let Some(lock) = create(&path, host)? {
                return Ok(lock);
            }
            let Some(info) = read_info(&path)? else {
                continue; // Released in between: try again.
            };
            let this_host = info
                .host
                .as_deref()
                .is_some_and(|h| basalt_core::same_host(h, host));
            let stale = match info.pid {
                Some(pid) if this_host && pid == me => !held().contains(&path),
                Some(pid) if this_host => !is_pid_alive(pid),
                _ => false,
            };
            if !stale {
                return Err(held_error(info));
            }
            match replace(&path, host, &info)? {
                Replace::Done(lock) => return Ok(lock),
                Replace::Changed => last = Some(info),
            }
        }
        // The file kept changing under us: someone else is acquiring it.
        match read_info(&path)?.or(last) {
            Some(info) => Err(held_error(info)),
            None => Err(LockError::io(
                &path,
                "acquire",
                io::Error::other("the lock file kept appearing and disappearing"),
            )),
        }
    }

    /// What the lock file currently says (`None` when there is no lock file).
    pub fn inspect(logdir: &Path) -> Result<Option<LockInfo>, LockError> {
        read_info(&logdir.join(LOCK_FILE))
    }

    /// Take over a lock judged stale by the caller's waiting policy. Succeeds only if the
    /// lock file is still exactly `stale` (same file, content and mtime: no heartbeat since)
    /// or has disappeared; otherwise returns [`LockError::Held`] with the current state.
    pub fn take_over(logdir: &Path, host: &str, stale: &LockInfo) -> Result<EventLock, LockError> {
        let path = lock_path(logdir)?;
        match read_info(&path)? {
            None => match create(&path, host)? {
                Some(lock) => Ok(lock),
                None => Err(current_held(&path)?),
            },
            Some(now) if now.same_file_state(stale) => match replace(&path, host, stale)? {
                Replace::Done(lock) => Ok(lock),
                Replace::Changed => Err(current_held(&path)?),
            },
            Some(now) => Err(held_error(now)),
        }
    }

    /// The heartbeat: rewrite one byte of the file so that its mtime advances. Fails with
    /// [`LockError::Lost`] if the file is no longer this lock.
    pub fn touch(&mut self) -> Result<(), LockError> {
        if !self.still_held()? {
            return Err(LockError::Lost {
                path: self.path.clone(),
            });
        }
        let first = self.holder.as_bytes().first().copied().unwrap_or(b' ');
        self.file
            .write_all_at(&[first], 0)
            .and_then(|()| self.file.set_modified(SystemTime::now()))
            .map_err(|e| LockError::io(&self.path, "touch", e))
    }

    /// Time since the lock file was last modified.
    pub fn mtime_age(&self) -> Result<Duration, LockError> {
        let md = fs::metadata(&self.path).map_err(|e| LockError::io(&self.path, "stat", e))?;
        let m = md
            .modified()
            .map_err(|e| LockError::io(&self.path, "stat", e))?;
        Ok(SystemTime::now()
            .duration_since(m)
            .unwrap_or(Duration::ZERO))
    }

    /// True while the lock file at the path is still the one this lock created.
    pub fn still_held(&self) -> Result<bool, LockError> {
        match fs::metadata(&self.path) {
            Ok(md) => Ok(md.dev() == self.dev && md.ino() == self.ino),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(LockError::io(&self.path, "stat", e)),
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The content written, `host:pid`.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Remove the lock file (if it is still ours).
    pub fn release(mut self) -> Result<(), LockError> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<(), LockError> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        held().remove(&self.path);
        if self.still_held()? {
            match fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(LockError::io(&self.path, "remove", e)),
            }
        }
        Ok(())
    }
}

impl Drop for EventLock {
    fn drop(&mut self) {
        let _ = self.release_inner();
    }
}

fn lock_path(logdir: &Path) -> Result<PathBuf, LockError> {
    let dir = fs::canonicalize(logdir).map_err(|e| LockError::io(logdir, "resolve", e))?;
    Ok(dir.join(LOCK_FILE))
}

fn held_error(info: LockInfo) -> LockError {
    LockError::Held {
        holder: info.holder.clone(),
        age: info.age(),
        info: Box::new(info),
    }
}

fn current_held(path: &Path) -> Result<LockError, LockError> {
    match read_info(path)? {
        Some(info) => Ok(held_error(info)),
        None => Ok(LockError::io(
            path,
            "take over",
            io::Error::other("the lock file disappeared while being taken over; try again"),
        )),
    }
}

/// `O_CREAT|O_EXCL` the lock file; `None` if it already exists.
fn create(path: &Path, host: &str) -> Result<Option<EventLock>, LockError> {
    let mut file = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(LockError::io(path, "create", e)),
    };
    let holder = format!("{host}:{}", std::process::id());
    let written = file
        .write_all(holder.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| file.metadata());
    let md = match written {
        Ok(md) => md,
        Err(e) => {
            let _ = fs::remove_file(path);
            return Err(LockError::io(path, "write", e));
        }
    };
    if let Some(dir) = path.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| LockError::io(dir, "fsync directory", e))?;
    }
    held().insert(path.to_owned());
    Ok(Some(EventLock {
        path: path.to_owned(),
        file,
        holder,
        dev: md.dev(),
        ino: md.ino(),
        released: false,
    }))
}

/// Replace the lock file if it is still exactly `stale`.
fn replace(path: &Path, host: &str, stale: &LockInfo) -> Result<Replace, LockError> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let aside = path.with_file_name(format!(
        "{LOCK_FILE}.stale.{}.{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    match fs::rename(path, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Replace::Changed),
        Err(e) => return Err(LockError::io(path, "move stale lock aside", e)),
    }
    let moved = read_info(&aside)?;
    if !moved.as_ref().is_some_and(|m| m.same_file_state(stale)) {
        // We moved a lock that is not the one judged stale: put it back (without
        // clobbering a lock created meanwhile) and let the caller look again.
        let _ = fs::hard_link(&aside, path);
        let _ = fs::remove_file(&aside);
        return Ok(Replace::Changed);
    }
    let _ = fs::remove_file(&aside);
    match create(path, host)? {
        Some(lock) => Ok(Replace::Done(lock)),
        None => Ok(Replace::Changed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(LOCK_FILE);
        fs::write(&p, "vm:25321").unwrap();
        let i = read_info(&p).unwrap().unwrap();
        assert_eq!(i.host.as_deref(), Some("vm"));
        assert_eq!(i.pid, Some(25321));
        fs::write(&p, "garbage").unwrap();
        let i = read_info(&p).unwrap().unwrap();
        assert_eq!((i.host, i.pid), (None, None));
        assert!(read_info(&dir.path().join("nope")).unwrap().is_none());
    }
}
