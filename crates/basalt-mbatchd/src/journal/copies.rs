//! The duplicate event log (`LSB_LOCALDIR`): bringing the shared and the local copy in
//! line on open (the newest intact one wins), and re-synchronising a copy that fell
//! behind.

use super::reload::open_logs;
use super::{Copy, Journal, JournalError, Options, Replayed};
use basalt_eventlog as el;
use std::path::{Path, PathBuf};

/// Bring the copies in line (the newest intact one wins, see [`sync_copies`]), open each,
/// and replay from the first that opens.
pub(super) fn open_copies(
    dirs: &[PathBuf],
    opts: &Options,
) -> Result<(Vec<Copy>, Replayed), JournalError> {
    if dirs.len() > 1 {
        sync_copies(&dirs[0], &dirs[1]);
    }
    let mut copies = Vec::new();
    let mut replayed = None;
    let mut first_err = None;
    for dir in dirs {
        match open_logs(dir, opts) {
            Ok((events, acct, r)) => {
                if replayed.is_none() {
                    replayed = Some(r);
                }
                copies.push(Copy {
                    dir: dir.clone(),
                    logs: Some((events, acct)),
                    broken: None,
                });
            }
            Err(e) => {
                // A damaged log is never skipped over: the administrator must recover it.
                if let JournalError::Log(el::EventLogError::Damaged { .. }) = e {
                    return Err(e);
                }
                tracing::error!("event log copy in {} is unusable: {e}", dir.display());
                copies.push(Copy {
                    dir: dir.clone(),
                    logs: None,
                    broken: Some(e.to_string()),
                });
                first_err.get_or_insert(e);
            }
        }
    }
    match (replayed, first_err) {
        (Some(r), _) => Ok((copies, r)),
        (None, Some(e)) => Err(e),
        (None, None) => Err(JournalError::Log(el::EventLogError::Io {
            path: PathBuf::new(),
            op: "open",
            source: std::io::Error::other("no event log directory"),
        })),
    }
}

/// The complete lines of a file's content (a torn tail left out).
pub(super) fn complete(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &[],
    }
}

/// Does every complete line parse?
pub(super) fn intact(bytes: &[u8]) -> bool {
    complete(bytes)
        .split(|&b| b == b'\n')
        .all(|l| l.is_empty() || el::parse_line(&String::from_utf8_lossy(l)).is_ok())
}

/// The event time of the last complete record (0 if none).
pub(super) fn last_time(bytes: &[u8]) -> i64 {
    complete(bytes)
        .split(|&b| b == b'\n')
        .rev()
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .find_map(|l| {
            el::parse_line(&String::from_utf8_lossy(l))
                .ok()
                .flatten()
                .map(|r| r.time())
        })
        .unwrap_or(0)
}

/// Which of two copies of a file to keep: `true` for `a`. The intact one; else the one
/// the other is a prefix of (it has everything the other has, and more); else the one
/// whose last record is newer; else the longer.
pub(super) fn prefer_first(a: &[u8], b: &[u8], check_records: bool) -> bool {
    if check_records {
        match (intact(a), intact(b)) {
            (true, false) => return true,
            (false, true) => return false,
            _ => {}
        }
    }
    let (ca, cb) = (complete(a), complete(b));
    if ca.starts_with(cb) {
        return true;
    }
    if cb.starts_with(ca) {
        return false;
    }
    let (ta, tb) = if check_records {
        (last_time(a), last_time(b))
    } else {
        (0, 0)
    };
    if ta != tb {
        return ta > tb;
    }
    ca.len() >= cb.len()
}

/// Make the shared and the local copy of lsb.events and lsb.acct equal, keeping the newer
/// intact one of each (LSF's duplicate event log: whichever side was written while the
/// other was unreachable wins). Problems are logged; a copy that cannot be read or written
/// is left as it is and marked broken when opened.
pub fn sync_copies(shared: &Path, local: &Path) {
    for (name, records) in [(el::EVENTS_FILE, true), (el::ACCT_FILE, false)] {
        let read = |dir: &Path| match std::fs::read(dir.join(name)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        };
        let (a, b) = match (read(shared), read(local)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) => {
                tracing::warn!("cannot read {}: {e}", shared.join(name).display());
                continue;
            }
            (_, Err(e)) => {
                tracing::warn!("cannot read {}: {e}", local.join(name).display());
                continue;
            }
        };
        let (from, to, bytes) = match (&a, &b) {
            (None, None) => continue,
            (Some(a), None) => (shared, local, a),
            (None, Some(b)) => (local, shared, b),
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => {
                if prefer_first(a, b, records) {
                    (shared, local, a)
                } else {
                    (local, shared, b)
                }
            }
        };
        match write_copy(to, name, bytes) {
            Ok(()) => tracing::info!(
                "{} brought up to date from {}",
                to.join(name).display(),
                from.join(name).display()
            ),
            Err(e) => tracing::warn!("cannot update {}: {e}", to.join(name).display()),
        }
    }
}

/// Replace `dir/name` with `bytes` crash-safely (temporary file, fsync, rename, fsync of
/// the directory).
pub(super) fn write_copy(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{name}.sync.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut f, bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(name))?;
    std::fs::File::open(dir)?.sync_all()
}

/// Copy the job files of `from/info` that `to/info` lacks (spooled while `to` was
/// unusable). Problems are logged.
pub(super) fn copy_job_files(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from.join(el::INFO_DIR)) else {
        return;
    };
    for entry in entries.flatten() {
        let target = to.join(el::INFO_DIR).join(entry.file_name());
        if target.exists() {
            continue;
        }
        let res = std::fs::create_dir_all(to.join(el::INFO_DIR))
            .and_then(|()| std::fs::read(entry.path()))
            .and_then(|b| {
                write_copy(
                    &to.join(el::INFO_DIR),
                    &entry.file_name().to_string_lossy(),
                    &b,
                )
            });
        if let Err(e) = res {
            tracing::warn!("cannot copy job file to {}: {e}", target.display());
        }
    }
}

impl Journal {
    /// Is a copy of the log out of date?
    pub fn needs_resync(&self) -> bool {
        self.copies.iter().any(|c| c.broken.is_some())
    }

    /// Bring broken copies up to date from a good one and write to them again.
    pub fn resync(&mut self) -> Result<(), JournalError> {
        let Some(good) = self.copies.iter().position(|c| c.broken.is_none()) else {
            return Ok(());
        };
        let from = self.copies[good].dir.clone();
        for i in 0..self.copies.len() {
            if self.copies[i].broken.is_none() {
                continue;
            }
            let to = self.copies[i].dir.clone();
            for name in [el::EVENTS_FILE, el::ACCT_FILE] {
                let bytes = match std::fs::read(from.join(name)) {
                    Ok(b) => b,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(el::EventLogError::Io {
                            path: from.join(name),
                            op: "read",
                            source: e,
                        }
                        .into());
                    }
                };
                write_copy(&to, name, &bytes).map_err(|e| el::EventLogError::Io {
                    path: to.join(name),
                    op: "write",
                    source: e,
                })?;
            }
            copy_job_files(&from, &to);
            let (events, acct, _) = open_logs(&to, &self.opts)?;
            self.copies[i].logs = Some((events, acct));
            self.copies[i].broken = None;
            tracing::info!(
                "event log copy in {} re-synchronised from {}",
                to.display(),
                from.display()
            );
        }
        Ok(())
    }
}
