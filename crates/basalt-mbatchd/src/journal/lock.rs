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
//!   mbatchd on this one: only the staleness proof counts — the file (content and mtime)
//!   unchanged for [`stale_after`] (more than [`STALE_CHECKS`] half-heartbeats), seen by
//!   checks at most half a heartbeat apart. The time the sbatchd that started this
//!   mbatchd saw it unchanged before the election ([`LockSeen`]) counts when the file is
//!   still in exactly that state.

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

/// The environment variable in which sbatchd hands a new mbatchd what it saw of the lock
/// before the election ([`LockSeen`]).
pub const LOCK_SEEN_ENV: &str = "BASALT_MBD_LOCK_SEEN";

/// What the sbatchd of a master candidate saw of the lock file before it started this
/// mbatchd: the content and mtime it last read, and for how long (on its monotonic clock,
/// checked at most half a heartbeat apart) that state had not changed. Passed in
/// [`LOCK_SEEN_ENV`] as `<mtime in ns since the epoch> <unchanged in ms> <holder>`.
///
/// It only ever shortens the staleness proof by the time already observed: it counts
/// only when the lock file still has exactly that content and mtime when this mbatchd
/// first looks, so a holder that heartbeated in between (or a new holder) is never
/// credited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSeen {
    pub holder: String,
    pub modified_ns: u128,
    pub unchanged: Duration,
}

impl LockSeen {
    /// Parse the [`LOCK_SEEN_ENV`] form; `None` when malformed.
    pub fn parse(s: &str) -> Option<LockSeen> {
        let mut it = s.splitn(3, ' ');
        let modified_ns = it.next()?.parse().ok()?;
        let unchanged = Duration::from_millis(it.next()?.parse().ok()?);
        let holder = it.next()?.trim().to_owned();
        (!holder.is_empty()).then_some(LockSeen {
            holder,
            modified_ns,
            unchanged,
        })
    }

    /// The observation handed over in [`LOCK_SEEN_ENV`], if any (a malformed one is
    /// logged and ignored).
    pub fn from_env() -> Option<LockSeen> {
        let v = std::env::var(LOCK_SEEN_ENV).ok()?;
        let seen = LockSeen::parse(&v);
        if seen.is_none() {
            tracing::warn!("ignoring a malformed {LOCK_SEEN_ENV}={v:?}");
        }
        seen
    }

    /// Does `info` show exactly the state observed (same holder, same mtime)?
    fn matches(&self, info: &el::LockInfo) -> bool {
        info.holder == self.holder
            && info
                .modified
                .duration_since(std::time::UNIX_EPOCH)
                .is_ok_and(|d| d.as_nanos() == self.modified_ns)
    }
}

/// How long a lock held by someone else must stay unchanged before it is taken over:
/// more than [`STALE_CHECKS`] half-heartbeats, i.e. two and a half heartbeats.
pub fn stale_after(heartbeat: Duration) -> Duration {
    heartbeat / 2 * (STALE_CHECKS + 1)
}

/// The longest pause between two checks of a held lock: half a heartbeat (LSF:
/// MBD_SLEEP_TIME/2), and at most this, so that a released lock is taken soon.
const MAX_CHECK_EVERY: Duration = Duration::from_millis(50);

/// Take `logdir/#lsb.event.lock` for `me` (event-log.md §7); [`acquire_lock_seen`]
/// without an observation handed over.
pub fn acquire_lock(
    logdir: &Path,
    me: &str,
    heartbeat: Duration,
    wait: Duration,
) -> Result<el::EventLock, JournalError> {
    acquire_lock_seen(logdir, me, heartbeat, wait, None)
}

/// Take `logdir/#lsb.event.lock` for `me` (event-log.md §7): a free lock, or one naming
/// this host and a process that is not a live mbatchd (see `pid_alive`), is taken at once.
/// A lock held by someone else is checked at least twice per heartbeat (LSF: every
/// MBD_SLEEP_TIME/2); it is taken over only when its file (content and mtime) has not
/// changed for [`stale_after`] (two and a half heartbeats) of checks no more than half a
/// heartbeat apart. `seen` (sbatchd's observation before the election, see [`LockSeen`])
/// counts towards that time when the file is still in exactly the state it saw. Gives up
/// with [`JournalError::Held`] after `wait`.
pub fn acquire_lock_seen(
    logdir: &Path,
    me: &str,
    heartbeat: Duration,
    wait: Duration,
    seen: Option<&LockSeen>,
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
    let needed = stale_after(heartbeat);
    let check_every = (heartbeat / 2).min(MAX_CHECK_EVERY);
    // The state the file is in, since when this process has seen it so, and the time
    // credited from sbatchd's observation of that same state.
    let mut last: Option<(el::LockInfo, Instant, Duration)> = None;
    let mut seen = seen;
    let mut checked = Instant::now();
    loop {
        if checked.elapsed() > heartbeat {
            // This process was held up between two checks (stopped, starved): what it
            // saw before no longer counts.
            last = None;
        }
        checked = Instant::now();
        match el::EventLock::acquire(logdir, me, pid_alive) {
            Ok(l) => return Ok(l),
            Err(el::LockError::Held { holder, .. }) => {
                match el::EventLock::inspect(logdir)? {
                    None => continue,
                    Some(info) => {
                        if last.as_ref().is_none_or(|(l, _, _)| *l != info) {
                            // A first look, or a change: the proof starts again. Only the
                            // first look may take sbatchd's observation over.
                            let credit = seen
                                .take()
                                .filter(|s| s.matches(&info))
                                .map_or(Duration::ZERO, |s| s.unchanged);
                            if !credit.is_zero() {
                                tracing::info!(
                                    "{} names {}, unchanged for {credit:?} as sbatchd saw it \
                                     before this mbatchd started",
                                    logdir.join(el::LOCK_FILE).display(),
                                    info.holder
                                );
                            }
                            last = Some((info.clone(), Instant::now(), credit));
                        }
                        let unchanged =
                            last.as_ref().map_or(Duration::ZERO, |(_, since, credit)| {
                                *credit + since.elapsed()
                            });
                        if unchanged >= needed {
                            tracing::warn!(
                                "{} names {} and has not changed for {unchanged:.1?} (checked \
                                 at least every {:?}): taking it over",
                                logdir.join(el::LOCK_FILE).display(),
                                info.holder,
                                heartbeat / 2
                            );
                            match el::EventLock::take_over(logdir, me, &info) {
                                Ok(l) => return Ok(l),
                                Err(el::LockError::Held { .. }) => last = None,
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
                std::thread::sleep(check_every);
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
    /// Take the lock with a deadline of a quarter heartbeat: only an at-once takeover
    /// succeeds (the staleness proof needs two and a half heartbeats), whatever the
    /// machine's load does to the time it takes.
    fn take_quickly(dir: &Path) -> Result<el::EventLock, JournalError> {
        acquire_lock(dir, "me", HB, HB / 4)
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
        let lock = take_quickly(dir.path()).unwrap();
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
        let r = take_quickly(dir.path());
        assert!(r.is_ok(), "{r:?}");
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
        let r = take_quickly(dir.path());
        assert!(r.is_ok(), "{r:?}");
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
        let r = take_quickly(&logdir);
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
        let r = take_quickly(dir.path());
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");
        // Given the time, it is taken over once silent for more than STALE_CHECKS checks.
        let t = Instant::now();
        let lock = acquire_lock(dir.path(), "me", HB, HB * 20).unwrap();
        assert!(t.elapsed() >= HB / 2 * STALE_CHECKS, "{:?}", t.elapsed());
        assert!(lock.holder().starts_with("me:"));
    }

    /// sbatchd's observation of the lock file as it is now, unchanged for `unchanged`.
    fn seen_now(dir: &Path, unchanged: Duration) -> LockSeen {
        let info = el::EventLock::inspect(dir).unwrap().unwrap();
        LockSeen {
            holder: info.holder.clone(),
            modified_ns: info
                .modified
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos(),
            unchanged,
        }
    }

    #[test]
    fn the_handed_over_observation_parses() {
        let s = LockSeen::parse("1700000000123456789 2300 hostA:4242").unwrap();
        assert_eq!(s.modified_ns, 1_700_000_000_123_456_789);
        assert_eq!(s.unchanged, Duration::from_millis(2300));
        assert_eq!(s.holder, "hostA:4242");
        // A holder with blanks or colons is kept whole.
        assert_eq!(LockSeen::parse("1 2 a b:3").unwrap().holder, "a b:3");
        for bad in ["", "1", "1 2", "1 2 ", "x 2 h:1", "1 -2 h:1"] {
            assert_eq!(LockSeen::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_observation_is_credited_only_for_the_same_state() {
        // A heartbeat long enough that a loaded machine's scheduling delays do not
        // decide: each outcome is told by whether the lock is taken within a deadline
        // shorter than the whole proof, not by measuring a short time.
        const HB: Duration = Duration::from_secs(1);
        let dir = tempfile::tempdir().unwrap();
        lock_naming(dir.path(), "otherhost:1");
        // Seen unchanged for the whole proof: taken over within a quarter heartbeat,
        // which only the credit allows.
        let seen = seen_now(dir.path(), stale_after(HB));
        let lock = acquire_lock_seen(dir.path(), "me", HB, HB / 4, Some(&seen)).unwrap();
        drop(lock);

        // Another mtime (a heartbeat since) or another holder: no credit.
        lock_naming(dir.path(), "otherhost:1");
        let mut seen = seen_now(dir.path(), stale_after(HB) * 10);
        seen.modified_ns += 1;
        let r = acquire_lock_seen(dir.path(), "me", HB, HB, Some(&seen));
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");
        let mut seen = seen_now(dir.path(), stale_after(HB) * 10);
        seen.holder = "otherhost:2".into();
        let r = acquire_lock_seen(dir.path(), "me", HB, HB, Some(&seen));
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");

        // Part of the proof seen: the rest (a heartbeat) is waited for, no less; taken
        // within two heartbeats, which the whole proof (2.5) would not allow.
        let seen = seen_now(dir.path(), stale_after(HB) - HB);
        let t = Instant::now();
        acquire_lock_seen(dir.path(), "me", HB, HB * 2, Some(&seen)).unwrap();
        assert!(t.elapsed() >= HB, "{:?}", t.elapsed());
    }

    #[test]
    fn a_heartbeating_holder_is_never_taken_over_whatever_was_seen() {
        let dir = tempfile::tempdir().unwrap();
        lock_naming(dir.path(), "otherhost:1");
        // sbatchd saw it unchanged for ages, but the holder heartbeats from now on.
        let seen = seen_now(dir.path(), stale_after(HB) * 100);
        std::thread::sleep(Duration::from_millis(20));
        lock_naming(dir.path(), "otherhost:1");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let beat = {
            let (dir, stop) = (dir.path().to_path_buf(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(HB);
                    lock_naming(&dir, "otherhost:1");
                }
            })
        };
        let r = acquire_lock_seen(dir.path(), "me", HB, stale_after(HB) * 3, Some(&seen));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        beat.join().unwrap();
        assert!(matches!(r, Err(JournalError::Held { .. })), "{r:?}");
    }
}
