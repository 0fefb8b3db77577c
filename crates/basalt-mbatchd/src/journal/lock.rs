//! The `#lsb.event.lock` lock: taking it (over a stale holder), its heartbeat, and the
//! check that it is still ours before anything is written.

use super::{Journal, JournalError, STALE_CHECKS};
use basalt_eventlog as el;
use std::path::Path;
use std::time::{Duration, Instant};

pub(super) fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Take `logdir/#lsb.event.lock` for `me` (event-log.md §7): a free lock, or one naming
/// this host and a dead process, is taken at once. A lock held by someone else is checked
/// twice per heartbeat (LSF: every MBD_SLEEP_TIME/2); it is taken over only when its file
/// has not changed (no heartbeat) for more than [`STALE_CHECKS`] checks in a row, i.e.
/// for at least two and a half heartbeats. Gives up with [`JournalError::Held`]
/// after `wait`.
pub fn acquire_lock(
    logdir: &Path,
    me: &str,
    heartbeat: Duration,
    wait: Duration,
) -> Result<el::EventLock, JournalError> {
    std::fs::create_dir_all(logdir).map_err(|e| {
        JournalError::Log(el::EventLogError::Io {
            path: logdir.to_path_buf(),
            op: "create directory",
            source: e,
        })
    })?;
    let deadline = Instant::now() + wait;
    let mut last: Option<el::LockInfo> = None;
    let mut unchanged = 0u32;
    loop {
        match el::EventLock::acquire(logdir, me, pid_alive) {
            Ok(l) => return Ok(l),
            Err(el::LockError::Held { holder, .. }) => {
                match el::EventLock::inspect(logdir)? {
                    None => continue,
                    Some(info) => {
                        if last.as_ref() == Some(&info) {
                            unchanged += 1;
                        } else {
                            unchanged = 0;
                            last = Some(info.clone());
                        }
                        if unchanged > STALE_CHECKS {
                            tracing::warn!(
                                "{} names {} and has not changed for {unchanged} checks \
                                 {:?} apart: taking it over",
                                logdir.join(el::LOCK_FILE).display(),
                                info.holder,
                                heartbeat / 2
                            );
                            match el::EventLock::take_over(logdir, me, &info) {
                                Ok(l) => return Ok(l),
                                Err(el::LockError::Held { .. }) => {
                                    unchanged = 0;
                                    last = None;
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                }
                if Instant::now() >= deadline {
                    return Err(JournalError::Held {
                        path: logdir.join(el::LOCK_FILE),
                        holder,
                    });
                }
                std::thread::sleep(heartbeat / 2);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl Journal {
    /// Fail with [`JournalError::LockLost`] when the lock file is provably no longer ours
    /// (another file is in its place, or it is gone). An unreadable lock directory (the
    /// shared file server is down) proves nothing and is only logged.
    pub fn check_lock(&self) -> Result<(), JournalError> {
        match self.lock.still_held() {
            Ok(true) => Ok(()),
            Ok(false) => Err(JournalError::LockLost {
                path: self.lock.path().to_path_buf(),
            }),
            Err(e) => {
                tracing::warn!("cannot check the event log lock: {e}");
                Ok(())
            }
        }
    }

    /// Refresh the lock's heartbeat when one is due.
    pub fn heartbeat(&mut self) -> Result<(), JournalError> {
        if self.last_touch.elapsed() >= self.opts.lock_heartbeat {
            self.last_touch = Instant::now();
            match self.lock.touch() {
                Ok(()) => {}
                Err(el::LockError::Lost { path }) => return Err(JournalError::LockLost { path }),
                Err(e) => tracing::warn!("cannot refresh the event log lock: {e}"),
            }
        }
        Ok(())
    }
}
