//! Queue-based fairshare (seed 003, lsb.queues `SLOT_POOL` and `SLOT_SHARE`): the queues
//! of a pool share the slots of its hosts by percentage instead of by priority.
//!
//! * **Pool size**: the slots of the hosts its queues use (their MXJ), in use or free.
//! * **Targets**: each pass gives every queue of a pool a number of slots — its share of
//!   the pool while the queues compete; a queue that needs less (its running and
//!   pending jobs' slots, within its QJOB_LIMIT) gets what it needs and the rest goes to
//!   the others by their shares ([`water_fill`]): an idle queue lends its slots, and
//!   gets them back as running jobs of the others end. A queue at its target starts no
//!   more jobs (pending reason `pend::SLOT_POOL`, 332).
//! * **Order**: the queues of a pool are visited by the slots they have used — their
//!   finished jobs' slot-hours, decayed with HIST_HOURS, and their running jobs' — per
//!   share, least first, in the places the pool's queues have in the priority order.
//!   Queues outside any pool keep their place and may use the pool's hosts.

use crate::{Millis, Sched};
use basalt_core::job::JobState;
use std::collections::BTreeMap;

/// Slots for queues with `(share, demand)` out of `size`: a queue whose demand is within
/// its share of what is left gets its demand; the others share the rest by their shares
/// (rounded down, the slots left over to the largest remainders, the first queue first
/// on ties).
pub fn water_fill(size: u32, queues: &[(u32, u32)]) -> Vec<u32> {
    let n = queues.len();
    let mut target = vec![0u32; n];
    let mut done = vec![false; n];
    let mut left = size;
    loop {
        let shares: u64 = (0..n)
            .filter(|&i| !done[i])
            .map(|i| u64::from(queues[i].0))
            .sum();
        if shares == 0 {
            break;
        }
        let fair = |i: usize| f64::from(left) * f64::from(queues[i].0) / shares as f64;
        let satisfied: Vec<usize> = (0..n)
            .filter(|&i| !done[i] && f64::from(queues[i].1) <= fair(i))
            .collect();
        if satisfied.is_empty() {
            let rest: Vec<usize> = (0..n).filter(|&i| !done[i]).collect();
            let mut given = 0;
            for &i in &rest {
                target[i] = fair(i).floor() as u32;
                given += target[i];
            }
            let mut by_frac = rest.clone();
            by_frac.sort_by(|&a, &b| {
                let fa = fair(a) - fair(a).floor();
                let fb = fair(b) - fair(b).floor();
                fb.total_cmp(&fa).then(a.cmp(&b))
            });
            for &i in by_frac.iter().take(left.saturating_sub(given) as usize) {
                if target[i] < queues[i].1 {
                    target[i] += 1;
                }
            }
            break;
        }
        for i in satisfied {
            target[i] = queues[i].1;
            done[i] = true;
            left = left.saturating_sub(queues[i].1);
        }
    }
    target
}

/// A pooled queue in bqueues -l.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolInfo {
    pub pool: String,
    /// SLOT_SHARE, percent.
    pub share: u32,
    /// The pool's slots.
    pub size: u32,
    /// The slots the queue may use now.
    pub target: u32,
    /// Its slots in use.
    pub used: u32,
    /// Its accumulated slot-hours (decayed).
    pub accumulated: f64,
}

impl Sched {
    /// Every pool: (name, its queues by index).
    fn pools(&self) -> BTreeMap<&str, Vec<usize>> {
        let mut pools: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (qi, q) in self.queues.iter().enumerate() {
            if !q.slot_pool.is_empty() && q.slot_share > 0 {
                pools.entry(q.slot_pool.as_str()).or_default().push(qi);
            }
        }
        pools
    }

    /// The slots of the hosts the queues `qis` use.
    fn pool_size(&self, qis: &[usize]) -> u32 {
        let mut used = vec![false; self.hosts.len()];
        for &qi in qis {
            let q = &self.queues[qi];
            if q.hosts.is_empty() {
                used.iter_mut().for_each(|u| *u = true);
            } else {
                for h in &q.hosts {
                    if let Some(i) = self.host_idx(h) {
                        used[i] = true;
                    }
                }
            }
        }
        self.hosts
            .iter()
            .zip(used)
            .filter(|(_, u)| *u)
            .map(|(h, _)| h.max_slots().unwrap_or(0))
            .sum()
    }

    /// Each queue's slots in use and pending slots (started and pending jobs' slots).
    fn queue_demand(&self, qi: usize) -> (u32, u32) {
        let name = &self.queues[qi].name;
        let (_, _, run, ssusp, ususp) = self.queue_counts(name);
        let mut pending = 0u32;
        if let Some(p) = self.counts.pending.get(name) {
            for (_, key) in p.iter_after(None) {
                if let Some(j) = self.jobs.get(key)
                    && j.state == JobState::Pend
                {
                    pending = pending.saturating_add(j.slots());
                }
            }
        }
        (run + ssusp + ususp, pending)
    }

    /// The slots each pooled queue may use in a pass at `now` (by queue index; None:
    /// not in a pool).
    pub(crate) fn pool_targets(&self) -> Vec<Option<u32>> {
        let mut out = vec![None; self.queues.len()];
        for qis in self.pools().values() {
            let size = self.pool_size(qis);
            let wants: Vec<(u32, u32)> = qis
                .iter()
                .map(|&qi| {
                    let q = &self.queues[qi];
                    let (used, pending) = self.queue_demand(qi);
                    let mut demand = used.saturating_add(pending);
                    if let Some(l) = q.qjob_limit {
                        demand = demand.min(l);
                    }
                    (q.slot_share, demand)
                })
                .collect();
            for (&qi, t) in qis.iter().zip(water_fill(size, &wants)) {
                out[qi] = Some(t);
            }
        }
        out
    }

    /// Queue `qi`'s accumulated slot-hours at `now`: its finished jobs' (decayed) and
    /// its running jobs'.
    pub(crate) fn pool_accumulated(&self, qi: usize, now: Millis) -> f64 {
        let q = &self.queues[qi];
        let hist = self
            .fs_hist
            .get(&(crate::Str::from(q.name.as_str()), crate::Str::EMPTY))
            .map_or(0.0, |h| h.at(now.max(h.at), &q.fs_factors).run_s);
        let running: f64 = self
            .counts
            .started
            .iter()
            .filter_map(|k| self.jobs.get(k))
            .filter(|j| *j.queue == *q.name)
            .map(|j| {
                f64::from(j.slots()) * ((now - j.start_time.saturating_mul(1000)) as f64 / 1000.0)
            })
            .sum();
        (hist + running.max(0.0)) / 3600.0
    }

    /// Put each pool's queues, in the places they have in `order`, in the order of their
    /// accumulated use per share (least first; then priority, then name).
    pub(crate) fn pool_order(&self, now: Millis, order: &mut [usize]) {
        for qis in self.pools().values() {
            let places: Vec<usize> = order
                .iter()
                .enumerate()
                .filter(|(_, qi)| qis.contains(qi))
                .map(|(p, _)| p)
                .collect();
            // In thousandths of a slot-hour per share point: use decayed to nothing ties.
            let mut ranked: Vec<(i64, usize)> = qis
                .iter()
                .map(|&qi| {
                    let share = f64::from(self.queues[qi].slot_share.max(1));
                    let per_share = self.pool_accumulated(qi, now) / share;
                    ((per_share * 1000.0).round() as i64, qi)
                })
                .collect();
            ranked.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then(self.queues[b.1].priority.cmp(&self.queues[a.1].priority))
                    .then(self.queues[a.1].name.cmp(&self.queues[b.1].name))
            });
            for (p, (_, qi)) in places.into_iter().zip(ranked) {
                order[p] = qi;
            }
        }
    }

    /// bqueues -l of the queue named `queue` when it is in a pool.
    pub fn pool_info_of(&self, queue: &str, now: Millis) -> Option<PoolInfo> {
        let qi = self.queues.iter().position(|q| q.name == queue)?;
        let q = &self.queues[qi];
        if q.slot_pool.is_empty() {
            return None;
        }
        let qis = self.pools().get(q.slot_pool.as_str())?.clone();
        let targets = self.pool_targets();
        Some(PoolInfo {
            pool: q.slot_pool.clone(),
            share: q.slot_share,
            size: self.pool_size(&qis),
            target: targets[qi].unwrap_or(0),
            used: self.queue_demand(qi).0,
            accumulated: self.pool_accumulated(qi, now),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::water_fill;

    #[test]
    fn shares_while_all_compete_and_what_is_not_needed_goes_to_the_others() {
        assert_eq!(
            water_fill(10, &[(50, 99), (30, 99), (20, 99)]),
            vec![5, 3, 2]
        );
        // An idle queue lends its slots.
        assert_eq!(
            water_fill(10, &[(50, 0), (30, 99), (20, 99)]),
            vec![0, 6, 4]
        );
        // A queue limit of 4 on the 50 % queue: the extra slot goes to the others.
        assert_eq!(
            water_fill(10, &[(50, 4), (30, 99), (20, 99)]),
            vec![4, 4, 2]
        );
        // Only one queue with work: it may use every slot.
        assert_eq!(
            water_fill(10, &[(50, 0), (30, 0), (20, 99)]),
            vec![0, 0, 10]
        );
        // Remainders go to the largest fractions.
        assert_eq!(
            water_fill(7, &[(50, 99), (30, 99), (20, 99)]),
            vec![4, 2, 1]
        );
        assert_eq!(water_fill(0, &[(50, 9)]), vec![0]);
    }
}
