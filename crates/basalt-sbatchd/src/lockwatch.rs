//! Watching the event-log lock from a master candidate (event-log.md §7), so that the
//! staleness proof a new mbatchd needs to take over the lock of a master host that died
//! runs while the LIMs are still detecting the loss, instead of after the election.
//!
//! While this host is not the master, its sbatchd reads `#lsb.event.lock` (content and
//! mtime) eight times per heartbeat and remembers since when (on its monotonic clock) the
//! file has been in the state it last saw. A look that finds another state, no file, or
//! comes more than a heartbeat after the previous one (sbatchd was held up) starts the
//! observation again. When sbatchd starts mbatchd it hands over what it saw in
//! [`LOCK_SEEN_ENV`]: that state and how long it has been unchanged. mbatchd credits that
//! time towards its proof (unchanged for two and a half heartbeats) only when the file is
//! still in exactly that state when it first looks; a live holder heartbeats every
//! heartbeat, so it is never seen unchanged for that long and never taken over.
//!
//! The hosts that watch: those of `LSF_MASTER_LIST` when it is set, else the first
//! [`WATCHERS`] server hosts of the cluster file (the likeliest successors; any other host
//! that becomes master waits for the whole proof, as before). Each reads one small file
//! on the shared log directory eight times a second (default heartbeat): the time a
//! new mbatchd still waits after the proof could have ended is at most that period.

use crate::Shared;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, UNIX_EPOCH};
use tokio::sync::watch;
use tracing::debug;

/// The environment variable mbatchd reads the observation from (`basalt-mbatchd`'s
/// `journal::LOCK_SEEN_ENV`): `<mtime in ns since the epoch> <unchanged in ms> <holder>`.
pub const LOCK_SEEN_ENV: &str = "BASALT_MBD_LOCK_SEEN";

/// Without `LSF_MASTER_LIST`, how many of the first server hosts watch the lock.
pub const WATCHERS: usize = 4;

/// How many times per heartbeat the lock is read.
pub const LOOKS_PER_HEARTBEAT: u32 = 8;

/// One state of the lock file: its content and mtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockState {
    pub holder: String,
    pub modified_ns: u128,
}

/// What has been seen of the lock file.
#[derive(Debug, Default)]
pub struct LockWatch {
    /// The state last seen, since when it has been seen, and when it was last looked at.
    seen: Option<(LockState, Instant, Instant)>,
    /// The largest gap between two looks that still continues an observation.
    max_gap: Duration,
}

impl LockWatch {
    pub fn new(max_gap: Duration) -> LockWatch {
        LockWatch {
            seen: None,
            max_gap,
        }
    }

    /// Record a look at `now` that found `state` (`None`: no lock file, or unreadable).
    pub fn look(&mut self, state: Option<LockState>, now: Instant) {
        self.seen = match (self.seen.take(), state) {
            (Some((old, since, last)), Some(new))
                if old == new && now.saturating_duration_since(last) <= self.max_gap =>
            {
                Some((old, since, now))
            }
            (_, Some(new)) => Some((new, now, now)),
            (_, None) => None,
        };
    }

    /// The [`LOCK_SEEN_ENV`] value for an mbatchd started at `now`: the state seen and for
    /// how long it has been unchanged, when the last look is recent (within the gap).
    pub fn handover(&self, now: Instant) -> Option<String> {
        let (state, since, last) = self.seen.as_ref()?;
        if now.saturating_duration_since(*last) > self.max_gap {
            return None;
        }
        let unchanged = now.saturating_duration_since(*since);
        Some(format!(
            "{} {} {}",
            state.modified_ns,
            unchanged.as_millis(),
            state.holder
        ))
    }
}

/// Is `shared.host` one of the hosts that watch the lock (see the module's comment)?
pub fn watches(shared: &Shared) -> bool {
    let list = shared.config.lsf_conf.master_list();
    if !list.is_empty() {
        return list.iter().any(|m| basalt_core::same_host(m, &shared.host));
    }
    shared
        .config
        .cluster
        .hosts
        .iter()
        .filter(|h| h.server)
        .take(WATCHERS)
        .any(|h| basalt_core::same_host(&h.name, &shared.host))
}

/// The lock's heartbeat (lsb.params `BASALT_EVENT_LOCK_HEARTBEAT`, whole seconds, at
/// least 1; mbatchd's `journal::Options` reads it the same way).
pub fn heartbeat(shared: &Shared) -> Duration {
    Duration::from_secs(u64::from(
        shared.config.batch.params.event_lock_heartbeat_secs.max(1),
    ))
}

fn read_state(logdir: &std::path::Path) -> Option<LockState> {
    match basalt_eventlog::EventLock::inspect(logdir) {
        Ok(Some(info)) => Some(LockState {
            holder: info.holder,
            modified_ns: info.modified.duration_since(UNIX_EPOCH).ok()?.as_nanos(),
        }),
        Ok(None) => None,
        Err(e) => {
            debug!("cannot read the event log lock: {e}");
            None
        }
    }
}

/// Look at the lock eight times per heartbeat until `stop`, recording into `watch`; not
/// while this host is the master (`master`): the observation then ages out (see
/// [`LockWatch::handover`]), and is not cleared under the feet of the mbatchd being
/// started for the new master.
pub async fn run(
    shared: Arc<Shared>,
    watch: Arc<Mutex<LockWatch>>,
    master: watch::Receiver<Option<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let every = heartbeat(&shared) / LOOKS_PER_HEARTBEAT;
    // How long one read may take before it counts as no answer (and is left to finish).
    let patience = heartbeat(&shared) / 2;
    let logdir = shared.config.logdir();
    // A look still running (a hung shared file system): no new one is started meanwhile.
    let mut pending: Option<tokio::task::JoinHandle<Option<LockState>>> = None;
    loop {
        let is_master = master
            .borrow()
            .as_deref()
            .is_some_and(|m| basalt_core::same_host(m, &shared.host));
        if !is_master {
            let dir = logdir.clone();
            let mut task = pending
                .take()
                .unwrap_or_else(|| tokio::task::spawn_blocking(move || read_state(&dir)));
            let state = match tokio::time::timeout(patience, &mut task).await {
                Ok(Ok(s)) => s,
                Ok(Err(_)) => None,
                Err(_) => {
                    pending = Some(task);
                    None
                }
            };
            watch
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .look(state, Instant::now());
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = crate::stopped(&mut stop) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: Duration = Duration::from_secs(1);

    fn st(holder: &str, ns: u128) -> Option<LockState> {
        Some(LockState {
            holder: holder.into(),
            modified_ns: ns,
        })
    }

    fn unchanged_ms(w: &LockWatch, now: Instant) -> Option<u64> {
        let v = w.handover(now)?;
        v.split(' ').nth(1)?.parse().ok()
    }

    #[test]
    fn an_unchanged_lock_is_handed_over_with_how_long_it_was_seen() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = LockWatch::new(GAP);
        assert_eq!(w.handover(t0), None);
        for i in 0..10 {
            w.look(st("hostA:42", 7), t0 + ms(250 * i));
        }
        let at = t0 + ms(2300);
        assert_eq!(w.handover(at).as_deref(), Some("7 2300 hostA:42"));
        // A stale observation (no look for over a heartbeat) is not handed over.
        assert_eq!(w.handover(t0 + ms(2250) + GAP + ms(1)), None);
    }

    #[test]
    fn a_change_a_missing_file_or_a_gap_starts_the_observation_again() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = LockWatch::new(GAP);
        w.look(st("hostA:42", 7), t0);
        w.look(st("hostA:42", 7), t0 + ms(250));
        // A heartbeat: new mtime.
        w.look(st("hostA:42", 8), t0 + ms(500));
        assert_eq!(unchanged_ms(&w, t0 + ms(600)), Some(100));
        // A new holder.
        w.look(st("hostB:1", 8), t0 + ms(750));
        assert_eq!(unchanged_ms(&w, t0 + ms(800)), Some(50));
        // No file.
        w.look(None, t0 + ms(1000));
        assert_eq!(w.handover(t0 + ms(1000)), None);
        // The same state, but after a gap longer than allowed: counted from the new look.
        w.look(st("hostB:1", 8), t0 + ms(1250));
        w.look(st("hostB:1", 8), t0 + ms(1250) + GAP + ms(1));
        assert_eq!(unchanged_ms(&w, t0 + ms(1250) + GAP + ms(1)), Some(0));
    }
}
