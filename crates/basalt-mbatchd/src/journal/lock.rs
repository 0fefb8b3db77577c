//! The `#lsb.event.lock` lock: taking it (over a stale holder), its heartbeat, and the
//! check that it is still ours before anything is written.
//!
//! Two ways a holder is stale:
//! * It names **this host** and its process is gone: no such pid, a zombie, or a pid
//!   now used by a process that is not an mbatchd (its command name is neither
//!   `mbatchd` nor this process's own). The lock is taken over at once — this is what an
//!   mbatchd restarted by its sbatchd after a kill -9 finds, and it serves again without
//!   waiting for heartbeats to go stale.
//! * It names **another host** (whose processes cannot be seen from here), or a live
//!   mbatchd on this one: only the staleness proof counts — the file unchanged for more
//!   than [`STALE_CHECKS`] checks half a heartbeat apart.

use super::{Journal, JournalError, STALE_CHECKS};
use basalt_eventlog as el;
use std::path::Path;
use std::time::{Duration, Instant};

/// Is `pid` (named by a lock file as a holder on this host) a live mbatchd?
///
/// False when `/proc/<pid>` is gone, the process is a zombie or dead (state `Z`/`X`:
/// killed, not yet reaped), or its command name is neither `mbatchd` nor this process's
/// own (the pid was reused by something else). An unreadable entry (other than "not
/// found") counts as alive: nothing is proven.
pub(super) fn pid_alive(pid: u32) -> bool {
    let dir = Path::new("/proc").join(pid.to_string());
    let stat = match std::fs::read_to_string(dir.join("stat")) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    // `pid (comm) S ...`: the state follows the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    if matches!(state, Some('Z' | 'X' | 'x')) {
        return false;
    }
    let comm = |p: &Path| std::fs::read_to_string(p).map(|c| c.trim_end().to_owned());
    match comm(&dir.join("comm")) {
        Ok(c) => c == "mbatchd" || comm(Path::new("/proc/self/comm")).is_ok_and(|me| me == c),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// Take `logdir/#lsb.event.lock` for `me` (event-log.md §7): a free lock, or one naming
/// this host and a process that is not a live mbatchd (see `pid_alive`), is taken at once.
/// A lock held by someone else is checked twice per heartbeat (LSF: every
/// MBD_SLEEP_TIME/2); it is taken over only when its file has not changed (no heartbeat)
/// for more than [`STALE_CHECKS`] checks in a row, i.e. for at least two and a half
/// heartbeats. Gives up with [`JournalError::Held`] after `wait`.
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
    if let Ok(Some(info)) = el::EventLock::inspect(logdir)
        && let (Some(host), Some(pid)) = (info.host.as_deref(), info.pid)
        && basalt_core::same_host(host, me)
        && pid != std::process::id()
        && !pid_alive(pid)
    {
        tracing::info!(
            "{} names this host and pid {pid}, which is no longer a running mbatchd: \
             taking it over at once",
            logdir.join(el::LOCK_FILE).display()
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    const HB: Duration = Duration::from_millis(200);

    fn lock_naming(dir: &Path, holder: &str) {
        std::fs::write(dir.join(el::LOCK_FILE), holder).unwrap();
    }

    /// Take the lock with a wait shorter than the staleness proof (more than
    /// STALE_CHECKS checks half a heartbeat apart): only an at-once takeover succeeds.
    fn take_quickly(dir: &Path) -> (Result<el::EventLock, JournalError>, Duration) {
        let t = Instant::now();
        let r = acquire_lock(dir, "me", HB, HB);
        (r, t.elapsed())
    }

    fn state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?.1.trim_start().chars().next()
    }

    #[test]
    fn a_dead_holder_on_this_host_is_taken_over_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        assert!(!pid_alive(pid));
        lock_naming(dir.path(), &format!("me:{pid}"));
        let (r, took) = take_quickly(dir.path());
        let lock = r.unwrap();
        assert!(took < HB / 2, "took {took:?}");
        assert_eq!(lock.holder(), format!("me:{}", std::process::id()));
    }

    #[test]
    fn a_killed_unreaped_holder_and_a_reused_pid_are_taken_over_at_once() {
        // A zombie: killed, not yet waited for.
        let dir = tempfile::tempdir().unwrap();
        let mut zombie = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = zombie.id();
        zombie.kill().unwrap();
        let t = Instant::now();
        while state(pid) != Some('Z') && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(state(pid), Some('Z'));
        lock_naming(dir.path(), &format!("me:{pid}"));
        let (r, took) = take_quickly(dir.path());
        assert!(r.is_ok() && took < HB / 2, "{r:?} after {took:?}");
        zombie.wait().unwrap();

        // The pid now belongs to a live process that is not an mbatchd.
        let dir = tempfile::tempdir().unwrap();
        let mut other = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        assert!(!pid_alive(other.id()));
        lock_naming(dir.path(), &format!("me:{}", other.id()));
        let (r, took) = take_quickly(dir.path());
        assert!(r.is_ok() && took < HB / 2, "{r:?} after {took:?}");
        let _ = other.kill();
        let _ = other.wait();
    }

    #[test]
    fn a_live_mbatchd_on_this_host_is_not_taken_over_at_once() {
        // A process whose command name is `mbatchd` (a link to sleep).
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("mbatchd");
        std::os::unix::fs::symlink("/bin/sleep", &exe).unwrap();
        let mut mbd = Command::new(&exe).arg("30").spawn().unwrap();
        let t = Instant::now();
        while !pid_alive(mbd.id()) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(pid_alive(mbd.id()));
        // This very process (an in-process mbatchd of a test or a tool) is one too.
        assert!(pid_alive(std::process::id()));
        let logdir = dir.path().join("log");
        std::fs::create_dir_all(&logdir).unwrap();
        lock_naming(&logdir, &format!("me:{}", mbd.id()));
        let (r, _) = take_quickly(&logdir);
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");
        let _ = mbd.kill();
        let _ = mbd.wait();
    }

    #[test]
    fn a_dead_holder_on_another_host_still_needs_the_staleness_proof() {
        let dir = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        // The same dead pid, but on another host: its process cannot be seen from here.
        lock_naming(dir.path(), &format!("otherhost:{pid}"));
        let (r, _) = take_quickly(dir.path());
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");
        // Given the time, it is taken over once silent for more than STALE_CHECKS checks.
        let t = Instant::now();
        let lock = acquire_lock(dir.path(), "me", HB, HB * 20).unwrap();
        assert!(t.elapsed() >= HB / 2 * STALE_CHECKS, "{:?}", t.elapsed());
        assert!(lock.holder().starts_with("me:"));
    }
}
