//! Slot reservation (lsb.queues `SLOT_RESERVE = MAX_RESERVE_TIME[n]`, seed 001
//! "Processor Reservation"): a parallel job of such a queue that cannot start for want
//! of slots reserves the free slots it could use; they are unavailable to any other job,
//! and the job gathers more as they free up until it can start. A reservation lasts at
//! most n scheduling cycles (`MBD_SLEEP_TIME` each) from the job's first reserved slot:
//! then the job gives its slots up and reserves nothing in that pass, so that other jobs
//! can use them; in the next pass it may reserve again.
//!
//! Reservations are kept between passes ([`crate::Sched`]); a pass counts them as used
//! slots (and apart, [`PassState::rsv`], so that a host kept from a job only by others'
//! reservations gives "Job slots are reserved for other jobs"), gives a job its own back
//! when it visits it, and takes them again (with the slots freed since) when the job
//! still cannot start.
//!
//! Backfill (lsb.queues `BACKFILL = Y`, seed 001 "Backfilling"): each reservation has
//! the earliest time its job could start — when enough of the slots of the hosts it
//! could use are free, counting the running jobs' ends from their run limits (a job
//! without one never ends, as far as this estimate knows; with too few known ends there
//! is no estimate). A job of a backfill queue whose run limit ends before that time may
//! use the reservation's slots: it is gone by the time they are needed, so it cannot
//! delay the reserving job. Without an estimate nothing backfills the reservation.

use super::allocate::Tile;
use super::fit::{Cand, PassState, Shape};
use crate::{JobKey, Millis, Queue, Sched};
use basalt_core::job::{JobState, pend};
use std::collections::{BTreeMap, BTreeSet};

/// The slots a pending job reserves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotResv {
    /// Host indices, one per slot.
    pub slots: Vec<usize>,
    /// When it first reserved (the reservation period runs from then).
    pub since: Millis,
    /// When it must give its slots up.
    pub expires: Millis,
    /// The earliest time its job could start (backfill windows end there); None: not
    /// known.
    pub start_est: Option<Millis>,
}

/// The reservations during a pass.
#[derive(Debug, Default)]
pub(crate) struct PassResv {
    pub(crate) resv: BTreeMap<JobKey, SlotResv>,
    /// Jobs whose reservation expired in this pass: they reserve nothing in it.
    pub(crate) expired: BTreeSet<JobKey>,
    /// By host: when its running jobs' slots are expected to free up (those with a run
    /// limit). Kept only when some queue backfills.
    pub(crate) slot_ends: Vec<Vec<Millis>>,
    /// Some queue backfills.
    pub(crate) backfill: bool,
}

impl PassResv {
    /// Start a pass with the reservations kept from the last one: those `keep` does not
    /// keep go; those whose time is up at `now` go and are noted as expired; the rest
    /// are counted as used slots.
    pub(crate) fn begin(
        mut resv: BTreeMap<JobKey, SlotResv>,
        keep: impl Fn(&JobKey) -> bool,
        now: Millis,
        st: &mut PassState,
    ) -> PassResv {
        let mut expired = BTreeSet::new();
        resv.retain(|k, r| {
            if !keep(k) {
                return false;
            }
            if now >= r.expires {
                expired.insert(*k);
                return false;
            }
            true
        });
        for r in resv.values() {
            hold(st, r);
        }
        PassResv {
            resv,
            expired,
            slot_ends: Vec::new(),
            backfill: false,
        }
    }

    /// Whether a backfill job could still start in reserved slots (a reservation whose
    /// job's start is estimated): a pass with no free slot left must not stop early.
    pub(crate) fn may_take_backfill(&self) -> bool {
        self.backfill && self.resv.values().any(|r| r.start_est.is_some())
    }

    /// A job's own reservation, given back to the pass (its slots free again).
    pub(crate) fn take_own(&mut self, key: JobKey, st: &mut PassState) -> Option<SlotResv> {
        let r = self.resv.remove(&key)?;
        give_back(st, &r);
        Some(r)
    }

    /// Job `key` still cannot start: reserve `slots` for it (from `since`, the start of
    /// its reservation; for `cycles` cycles of `sleep_secs`), with its estimated start
    /// from the slots of `hosts` (the hosts it could use) freeing up.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reserve(
        &mut self,
        key: JobKey,
        slots: Vec<usize>,
        need: u32,
        hosts: &[usize],
        since: Millis,
        now: Millis,
        (cycles, sleep_secs): (u32, u32),
        st: &mut PassState,
    ) {
        let start_est = earliest_start(now, need, slots.len() as u32, hosts, &self.slot_ends);
        let r = SlotResv {
            slots,
            since,
            expires: since + period(cycles, sleep_secs),
            start_est,
        };
        hold(st, &r);
        self.resv.insert(key, r);
    }

    /// A job that runs at most `run_ms` is visited (of a backfill queue): the
    /// reservations it may use (it ends before their job could start) are given back to
    /// the pass for it; the hosts of those whose window is too short are returned too.
    pub(crate) fn open_backfill(
        &mut self,
        now: Millis,
        run_ms: Millis,
        st: &mut PassState,
    ) -> (Backfill, Vec<usize>) {
        let mut bf = Backfill::default();
        let mut short: Vec<usize> = Vec::new();
        for (k, r) in &self.resv {
            match r.start_est {
                Some(t) if now + run_ms <= t => bf.keys.push(*k),
                _ => short.extend(r.slots.iter().copied()),
            }
        }
        for k in &bf.keys {
            if let Some(r) = self.resv.get(k) {
                for &i in &r.slots {
                    if !bf.used_before.iter().any(|(h, _)| *h == i) {
                        bf.used_before
                            .push((i, st.used.get(i).copied().unwrap_or(0)));
                    }
                }
                give_back(st, r);
            }
        }
        short.sort_unstable();
        short.dedup();
        (bf, short)
    }

    /// The backfill job was placed on `alloc` (or not: None): the reserved slots it took
    /// (beyond the slots that were free anyway) leave their reservations; the others
    /// are counted as used again. `max_slots(i)`: host i's slot count.
    pub(crate) fn close_backfill(
        &mut self,
        bf: Backfill,
        alloc: Option<&[usize]>,
        max_slots: impl Fn(usize) -> Option<u32>,
        st: &mut PassState,
    ) {
        if let Some(alloc) = alloc {
            for &(i, before) in &bf.used_before {
                let placed = alloc.iter().filter(|&&h| h == i).count() as u32;
                let free = max_slots(i).map_or(u32::MAX, |m| m.saturating_sub(before));
                let mut taken = placed.saturating_sub(free);
                for k in &bf.keys {
                    if taken == 0 {
                        break;
                    }
                    let Some(r) = self.resv.get_mut(k) else {
                        continue;
                    };
                    while taken > 0
                        && let Some(p) = r.slots.iter().position(|&h| h == i)
                    {
                        r.slots.remove(p);
                        taken -= 1;
                    }
                }
            }
        }
        // A reservation left without slots stays: its job keeps its reservation period.
        for k in &bf.keys {
            if let Some(r) = self.resv.get(k) {
                hold(st, r);
            }
        }
    }

    /// Slots reserved on each of `nh` hosts.
    pub(crate) fn per_host(&self, nh: usize) -> Vec<u32> {
        let mut rsv = vec![0u32; nh];
        for r in self.resv.values() {
            for &i in &r.slots {
                if let Some(n) = rsv.get_mut(i) {
                    *n += 1;
                }
            }
        }
        rsv
    }
}

impl Sched {
    /// A pass's reservations: those kept from the last pass whose job is still pending
    /// in a queue that reserves, counted as used in `st` (those whose time is up at
    /// `now` go, noted as expired); with a backfill queue, the running jobs' expected
    /// ends (their run limits).
    pub(super) fn begin_reservations(&mut self, now: Millis, st: &mut PassState) -> PassResv {
        let kept = std::mem::take(&mut self.slot_resv);
        let keep = |k: &JobKey| {
            self.jobs.get(k).is_some_and(|j| {
                j.state == JobState::Pend
                    && self
                        .queue(&j.queue)
                        .is_some_and(|q| q.slot_reserve.is_some())
            })
        };
        let mut resv = PassResv::begin(kept, keep, now, st);
        resv.backfill = self.queues.iter().any(|q| q.backfill);
        if resv.backfill && self.queues.iter().any(|q| q.slot_reserve.is_some()) {
            resv.slot_ends = vec![Vec::new(); self.hosts.len()];
            for key in &self.counts.started {
                let Some(j) = self.jobs.get(key) else {
                    continue;
                };
                let run = self.effective_rlimits(j)[crate::RLIMIT_RUN];
                if run <= 0 {
                    continue;
                }
                let end = j.start_time.saturating_add(run).saturating_mul(1000);
                for h in &j.hosts {
                    if let Some(i) = self.host_idx(h) {
                        resv.slot_ends[i].push(end);
                    }
                }
            }
        }
        resv
    }

    /// Job `key` of queue `q` is visited: when the queue backfills and the job has a run
    /// limit, the reservations it may use are given back for it ([`PassResv::open_backfill`]).
    pub(super) fn open_backfill(
        &self,
        q: &Queue,
        key: JobKey,
        now: Millis,
        resv: &mut PassResv,
        st: &mut PassState,
    ) -> (Option<Backfill>, Vec<usize>) {
        if !q.backfill || resv.resv.is_empty() {
            return (None, Vec::new());
        }
        let run = self
            .jobs
            .get(&key)
            .map_or(-1, |j| self.effective_rlimits(j)[crate::RLIMIT_RUN]);
        if run <= 0 {
            return (None, Vec::new());
        }
        let (bf, short) = resv.open_backfill(now, run.saturating_mul(1000), st);
        (Some(bf), short)
    }

    /// A job that cannot start (`(key, queue, its minimum slots, its tile, the start
    /// of the reservation it held)`) reserves the free slots its `shape` offers, when its
    /// queue reserves and it is a parallel job not expired in this pass; the hosts whose
    /// slots changed, when it did.
    pub(super) fn reserve_slots(
        &self,
        (key, q, need, tile, since): (JobKey, &Queue, u32, Option<Tile<'_>>, Option<Millis>),
        shape: &Shape,
        now: Millis,
        resv: &mut PassResv,
        st: &mut PassState,
    ) -> Option<Vec<usize>> {
        let cycles = q.slot_reserve.filter(|_| need > 1)?;
        if resv.expired.contains(&key) {
            return None;
        }
        let slots = choose(shape.cands.iter().map(|c| &c.0), need, tile);
        if slots.is_empty() {
            return None;
        }
        // The hosts it could use: free now, or full of running jobs.
        let mut usable: Vec<usize> = slots.clone();
        usable.extend(shape.cands.iter().map(|c| c.0.3));
        usable.extend(shape.why.iter().enumerate().filter_map(|(i, w)| {
            matches!(
                *w,
                Some(
                    pend::HOST_JOB_LIMIT
                        | pend::NOT_ENOUGH_SLOTS
                        | pend::SLOTS_RESERVED
                        | pend::NONEXCLUSIVE
                )
            )
            .then_some(i)
        }));
        usable.sort_unstable();
        usable.dedup();
        resv.reserve(
            key,
            slots,
            need,
            &usable,
            since.unwrap_or(now),
            now,
            (cycles, self.cfg.mbd_sleep_time_secs),
            st,
        );
        Some(usable)
    }
}

/// The reservations a backfill job may use, given back for its visit.
#[derive(Debug, Default)]
pub(crate) struct Backfill {
    keys: Vec<JobKey>,
    /// The used slots of their hosts before they were given back.
    used_before: Vec<(usize, u32)>,
}

impl Backfill {
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The hosts of the reservations given back.
    pub(crate) fn hosts(&self) -> Vec<usize> {
        self.used_before.iter().map(|(h, _)| *h).collect()
    }
}

/// The earliest time a job of `need` slots that holds `have` could start, from the
/// expected ends of the running slots of `hosts`; None when too few ends are known.
pub(crate) fn earliest_start(
    now: Millis,
    need: u32,
    have: u32,
    hosts: &[usize],
    slot_ends: &[Vec<Millis>],
) -> Option<Millis> {
    if have >= need {
        return Some(now);
    }
    let mut ends: Vec<Millis> = hosts
        .iter()
        .filter_map(|&i| slot_ends.get(i))
        .flatten()
        .copied()
        .collect();
    ends.sort_unstable();
    ends.get((need - have - 1) as usize).map(|&t| t.max(now))
}

/// The slots a job of `need` slots (its minimum) reserves among its candidate hosts
/// (best first, free slots counted with its own reservation given back), within its
/// span[]: at most `need`; with `span[hosts=1]` on one host only (the one with the most
/// free slots, the first in order among equals), with `span[ptile=p]` at most p on a
/// host. Empty: nothing free.
pub(crate) fn choose<'a>(
    cands: impl Iterator<Item = &'a Cand> + Clone,
    need: u32,
    span: Option<Tile<'_>>,
) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    match span {
        Some(Tile::OneHost) => {
            let mut best: Option<&Cand> = None;
            for c in cands {
                if c.0 > 0 && best.is_none_or(|b| c.0 > b.0) {
                    best = Some(c);
                }
            }
            if let Some(c) = best {
                out.extend(std::iter::repeat_n(c.3, c.0.min(need) as usize));
            }
        }
        Some(Tile::Each(tile)) => {
            for c in cands {
                let left = need - out.len() as u32;
                if left == 0 {
                    break;
                }
                let Some(t) = tile(c.3) else {
                    continue;
                };
                out.extend(std::iter::repeat_n(c.3, c.0.min(t).min(left) as usize));
            }
        }
        None => {
            for c in cands {
                let left = need - out.len() as u32;
                if left == 0 {
                    break;
                }
                out.extend(std::iter::repeat_n(c.3, c.0.min(left) as usize));
            }
        }
    }
    out
}

/// Count the slots of `r` as used in this pass.
pub(crate) fn hold(st: &mut PassState, r: &SlotResv) {
    for &i in &r.slots {
        if let Some(u) = st.used.get_mut(i) {
            *u += 1;
        }
        if let Some(n) = st.rsv.get_mut(i) {
            *n += 1;
        }
    }
}

/// Give the slots of `r` back (free again in this pass).
pub(crate) fn give_back(st: &mut PassState, r: &SlotResv) {
    for &i in &r.slots {
        if let Some(u) = st.used.get_mut(i) {
            *u = u.saturating_sub(1);
        }
        if let Some(n) = st.rsv.get_mut(i) {
            *n = n.saturating_sub(1);
        }
    }
}

/// How long a reservation of a queue with `MAX_RESERVE_TIME[cycles]` lasts.
pub(crate) fn period(cycles: u32, mbd_sleep_time_secs: u32) -> Millis {
    i64::from(cycles) * i64::from(mbd_sleep_time_secs.max(1)) * 1000
}

impl Sched {
    /// The slots reserved (SLOT_RESERVE) by the pending jobs `which` picks, as of the
    /// last pass.
    pub fn reserved_slots(&self, which: impl Fn(&crate::Job) -> bool) -> u32 {
        self.slot_resv
            .iter()
            .filter(|(k, _)| self.jobs.get(k).is_some_and(|j| which(j)))
            .map(|(_, r)| r.slots.len() as u32)
            .sum()
    }

    /// The slots job `j` reserves (SLOT_RESERVE), as of the last pass.
    pub fn reserved_of(&self, j: &crate::Job) -> u32 {
        self.slot_resv
            .get(&j.key())
            .map_or(0, |r| r.slots.len() as u32)
    }

    /// The hosts (one per slot) job `key` reserves and since when (ms), if it does.
    pub fn slot_reservation(&self, key: JobKey) -> Option<(Vec<String>, Millis)> {
        let r = self.slot_resv.get(&key).filter(|r| !r.slots.is_empty())?;
        let hosts = r
            .slots
            .iter()
            .filter_map(|&i| self.hosts.get(i).map(|h| h.name.clone()))
            .collect();
        Some((hosts, r.since))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(free: u32, host: usize) -> Cand {
        (
            free,
            0,
            host,
            host,
            [0; super::super::select::ORDER_KEYS],
            0,
            0,
        )
    }

    #[test]
    fn a_reservation_takes_free_slots_up_to_the_minimum_within_span() {
        let cands = [cand(1, 0), cand(2, 1), cand(2, 2)];
        assert_eq!(choose(cands.iter(), 4, None), vec![0, 1, 1, 2]);
        assert_eq!(choose(cands.iter(), 2, None), vec![0, 1]);
        assert_eq!(choose(cands.iter(), 8, None), vec![0, 1, 1, 2, 2]);
        // span[hosts=1]: one host, the one with the most free slots.
        assert_eq!(choose(cands.iter(), 4, Some(Tile::OneHost)), vec![1, 1]);
        // span[ptile=1]: one a host.
        let one = |_: usize| Some(1);
        assert_eq!(
            choose(cands.iter(), 4, Some(Tile::Each(&one))),
            vec![0, 1, 2]
        );
        let none = [cand(0, 0), cand(0, 1)];
        assert!(choose(none.iter(), 2, None).is_empty());
        assert!(choose(none.iter(), 2, Some(Tile::OneHost)).is_empty());
    }

    #[test]
    fn the_reservation_period_is_cycles_of_mbd_sleep_time() {
        assert_eq!(period(5, 10), 50_000);
        assert_eq!(period(1, 0), 1000);
    }
}
