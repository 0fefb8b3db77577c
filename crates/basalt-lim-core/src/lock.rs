//! `lsadmin limlock [-l seconds]` / `limunlock`: the lock of this LIM's host, and how the
//! master shows a locked host (`lockU`, [`HostStatus::LockedUser`]).
//!
//! A lock holds until it is unlocked or, with a duration, until its end (the time is the
//! core's input: a lock for a while simply stops being in force). A slave tells its lock
//! to the master with each heartbeat (at once when it changes); the master's own lock is
//! its own. A LIM that restarts starts unlocked, as LSF's.
//!
//! [`HostStatus::LockedUser`]: crate::HostStatus::LockedUser

use crate::{Effect, LimCore, Role};

/// This host's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    Unlocked,
    /// Until this time (ms, core clock).
    Until(u64),
    /// Until `limunlock`.
    Indefinite,
}

/// Why a lock or an unlock was refused (LSF's `ls_lockhost` / `ls_unlockhost` errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockError {
    AlreadyLocked,
    NotLocked,
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LockError::AlreadyLocked => "Host is already locked",
            LockError::NotLocked => "Host is not locked",
        })
    }
}

impl std::error::Error for LockError {}

impl LimCore {
    /// Is this host locked at `now`?
    pub fn is_locked(&self, now: u64) -> bool {
        match self.lock {
            Lock::Unlocked => false,
            Lock::Until(end) => now < end,
            Lock::Indefinite => true,
        }
    }

    /// Lock this host at `now`, for `for_ms` (None: until [`LimCore::unlock`]).
    pub fn lock(&mut self, now: u64, for_ms: Option<u64>) -> Result<Vec<Effect>, LockError> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if self.is_locked(now) {
            return Err(LockError::AlreadyLocked);
        }
        self.lock = match for_ms {
            Some(ms) => Lock::Until(now.saturating_add(ms)),
            None => Lock::Indefinite,
        };
        self.lock_changed(now, &mut fx);
        Ok(fx)
    }

    /// Unlock this host at `now`.
    pub fn unlock(&mut self, now: u64) -> Result<Vec<Effect>, LockError> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if !self.is_locked(now) {
            return Err(LockError::NotLocked);
        }
        self.lock = Lock::Unlocked;
        self.lock_changed(now, &mut fx);
        Ok(fx)
    }

    /// The master shows the change at once; a slave tells its master now rather than at
    /// its next heartbeat.
    fn lock_changed(&mut self, now: u64, fx: &mut Vec<Effect>) {
        match (self.role, self.master) {
            (Role::Master, _) => self.refresh(self.me, now, fx),
            (Role::Slave, Some(m)) if m != self.me => self.heartbeat(now, m, fx),
            _ => {}
        }
    }
}
