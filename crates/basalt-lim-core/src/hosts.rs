//! The master's host table: each host's status ([`HostStatus`], [`HostView`]) and busy
//! indices from its load and thresholds.

use std::collections::{BTreeMap, BTreeSet};

use basalt_core::{HostInfo, LoadIndex, LoadVector};

use crate::{Effect, LimCore, Seen};

/// A host's status in the master's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HostStatus {
    /// Reporting, no threshold exceeded.
    Ok,
    /// Reporting, at least one busy threshold exceeded.
    Busy,
    /// Silent for `HOST_INACTIVITY_LIMIT` intervals (or never heard).
    Unavail,
    /// Not heard yet, master too young to tell.
    Unknown,
    /// Reporting, and locked by `lsadmin limlock` (lsload's `lockU`).
    LockedUser,
}

/// A host as the master sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostView {
    pub name: String,
    pub info: Option<HostInfo>,
    pub load: Option<LoadVector>,
    pub status: HostStatus,
    /// The indices whose busy threshold is exceeded.
    pub busy: Vec<String>,
    /// When the host's load last arrived (ms, core clock).
    pub last_heard_ms: Option<u64>,
}

impl LimCore {
    /// Build the master's table (once: a LIM that leads again keeps it).
    pub(crate) fn table(&mut self, now: u64) {
        if !self.seen.is_empty() {
            return;
        }
        self.seen = self
            .hosts
            .entries
            .iter()
            .map(|e| Seen {
                view: HostView {
                    name: e.name.clone(),
                    info: None,
                    load: None,
                    status: HostStatus::Unknown,
                    busy: Vec::new(),
                    last_heard_ms: None,
                },
                locked: false,
                changed: 0,
            })
            .collect();
        let me = &mut self.seen[self.me].view;
        if let Some(info) = &self.local_info {
            me.info = Some(info.clone());
            me.load = Some(self.local_load.clone());
            me.last_heard_ms = Some(now);
        }
    }

    pub(crate) fn refresh_all(&mut self, now: u64, fx: &mut Vec<Effect>) {
        for i in 0..self.seen.len() {
            self.refresh(i, now, fx);
        }
    }

    /// How long host `i` may be silent before it is unavailable (see
    /// [`LimCore::host_inactivity_ms`]).
    pub(crate) fn inactivity_limit(&self, i: usize) -> u64 {
        let t = self.timing;
        let limit = u64::from(t.host_inactivity_limit) * t.exinterval_ms;
        if self.rank_of(i).is_some() {
            limit
        } else {
            limit.max(2 * self.report_ms + t.exinterval_ms)
        }
    }

    /// Recompute host `i`'s status and busy list (master only).
    pub(crate) fn refresh(&mut self, i: usize, now: u64, fx: &mut Vec<Effect>) {
        let limit = self.inactivity_limit(i);
        let decreasing = &self.decreasing_externals;
        let me = self.me;
        let became_master = self.became_master;
        let my_lock = self.is_locked(now);
        let entry = &self.hosts.entries[i];
        let Some(h) = self.seen.get_mut(i) else {
            return;
        };
        let locked = if i == me { my_lock } else { h.locked };
        let (status, busy) = match h.view.last_heard_ms {
            Some(t) if i == me || now.saturating_sub(t) < limit => {
                let busy = match (&h.view.load, &h.view.info) {
                    (Some(load), info) => {
                        busy_indices(&entry.busy_thresholds, load, info.as_ref(), decreasing)
                    }
                    (None, _) => Vec::new(),
                };
                let status = if locked {
                    HostStatus::LockedUser
                } else if busy.is_empty() {
                    HostStatus::Ok
                } else {
                    HostStatus::Busy
                };
                (status, busy)
            }
            Some(_) => (HostStatus::Unavail, Vec::new()),
            None if !entry.server || now.saturating_sub(became_master) >= limit => {
                (HostStatus::Unavail, Vec::new())
            }
            None => (HostStatus::Unknown, Vec::new()),
        };
        if h.view.busy != busy || h.view.status != status {
            self.version += 1;
            h.changed = self.version;
        }
        h.view.busy = busy;
        if h.view.status != status {
            h.view.status = status;
            fx.push(Effect::HostStatusChanged {
                host: entry.name.clone(),
                status,
            });
        }
    }
}

/// The indices of `load` beyond their busy thresholds. Run-queue indices are
/// compared as effective run-queue lengths (daemon-behaviour.md §2).
pub fn busy_indices(
    thresholds: &BTreeMap<String, f64>,
    load: &LoadVector,
    info: Option<&HostInfo>,
    decreasing_externals: &BTreeSet<String>,
) -> Vec<String> {
    let mut busy = Vec::new();
    for (name, &threshold) in thresholds {
        let Some(value) = load.get_by_name(name) else {
            continue;
        };
        let (value, increasing) = match LoadIndex::from_name(name) {
            Some(ix) if ix.is_run_queue() => {
                let v = info.map_or(value, |i| {
                    basalt_core::effective_run_queue(value, i.ncpus, i.cpu_factor)
                });
                (v, true)
            }
            Some(ix) => (value, ix.increasing()),
            None => (value, !decreasing_externals.contains(name)),
        };
        let over = if increasing {
            value > threshold
        } else {
            value < threshold
        };
        if over {
            busy.push(name.clone());
        }
    }
    busy
}
