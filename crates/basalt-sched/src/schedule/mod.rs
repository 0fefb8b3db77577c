//! The scheduling pass: visit pending jobs by queue priority and FCFS order, or by share
//! tree in a fairshare queue ([`walk`]), evaluate hosts per job shape ([`fit`]), choose
//! hosts ([`allocate`]), and dispatch ([`start`]); a parallel job that cannot start
//! reserves slots, a backfill job may use them ([`slot_resv`]); a job of a preemptive
//! queue takes lower-priority jobs' slots ([`preempt`]); slot pools cap their queues
//! ([`pool`]); bresume'd jobs are resumed first ([`resume`]). What started jobs hold is
//! taken from the counters, visiting only the jobs that hold more ([`started`]); a shape's
//! candidate hosts are kept best first ([`cands`]).

pub(crate) mod allocate;
pub(crate) mod alts;
pub mod asked;
pub(crate) mod cands;
pub(crate) mod compound;
pub(crate) mod fit;
mod pass;
pub mod pool;
pub(crate) mod preempt;
mod reserve;
mod resume;
pub(crate) mod select;
pub(crate) mod slot_resv;
mod start;
mod started;
mod visit;
pub(crate) use started::{HostTypes, pass_index};
pub(crate) mod walk;

use crate::{Millis, Sched};
pub(crate) use reserve::Methods;
use std::collections::HashMap;
#[cfg(test)]
pub(crate) use walk::PendReasons;

impl Sched {
    /// One scheduling pass: resume user-resumed jobs whose host allows it, then visit
    /// pending jobs by queue priority and FCFS order and dispatch what fits.
    ///
    /// Hosts are evaluated by index. What depends only on (queue, host) — queue hosts,
    /// LIM and sbatchd status, closed, dispatch window, load thresholds — is computed once
    /// per queue per pass. The evaluation of every host for a job *shape* (queue, asked
    /// hosts, exclusive, slots, span, and the user when a host has a JL/U limit) is kept
    /// ([`Shape`]) until a placement changes what hosts hold: a placement for the same
    /// shape re-evaluates only the hosts it used, one for another shape invalidates it.
    /// So a pass costs about one host sweep per shape plus one per change, not one per
    /// job, and jobs that cannot start share one set of pending reasons.
    pub fn schedule(&mut self, now: Millis) {
        let mut pass = self.begin_pass(now);
        while let Some(rec) = self.next_visit(&mut pass) {
            self.visit(&mut pass, rec);
        }
        self.finish_pass(pass);
    }
}

/// The pass's own hash maps: foldhash with a fixed seed (fast on short keys, and the same
/// layout on every run; a pass never depends on their order).
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

pub(crate) fn fast_map<K, V>() -> FastMap<K, V> {
    HashMap::with_hasher(foldhash::fast::FixedState::default())
}
