//! What the FSM keeps counted as jobs change, so that the query views cost O(1) or
//! O(log n) per row instead of a walk over every job: each queue's pending jobs in
//! dispatch order (a job's position in its queue is its rank there), and the slots of
//! started jobs per host and per queue (bhosts, bqueues, host status).
//!
//! Only `on_event` changes the fields these depend on (a job's state, queue, hosts,
//! order and submission); it takes a job's contribution back before changing it and adds
//! it again after. [`Counts::recount`] builds the same from scratch, for the tests.

use crate::{Job, JobKey, JobState};
use basalt_core::job::sub;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Elements per block of a [`RankSet`] (a block is split at twice this).
const BLOCK: usize = 512;

/// An ordered set that tells how many of its elements are below a value: sorted blocks
/// of at most 2 × [`BLOCK`] elements, so insert, remove and rank cost O(√n)-ish
/// (a binary search over the blocks, a move within one block, a sum of block sizes).
/// Blocks are ring buffers: a queue's pending jobs mostly come at its end (submission)
/// and leave at its front (dispatch), which then moves nothing.
#[derive(Debug, Clone)]
pub(crate) struct RankSet<T> {
    /// Non-empty, sorted, each block's elements below the next block's.
    blocks: Vec<VecDeque<T>>,
    len: usize,
}

impl<T> Default for RankSet<T> {
    fn default() -> Self {
        RankSet {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Ord + Copy> PartialEq for RankSet<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Ord + Copy> RankSet<T> {
    /// A set of `sorted` (ascending, no duplicates).
    pub(crate) fn from_sorted(sorted: Vec<T>) -> Self {
        let len = sorted.len();
        let blocks = sorted
            .chunks(BLOCK)
            .map(|c| c.iter().copied().collect())
            .collect();
        RankSet { blocks, len }
    }

    /// The index of the first block whose last element is not below `x`.
    fn first_block_not_below(&self, x: &T) -> usize {
        self.blocks
            .partition_point(|b| b.back().is_some_and(|last| last < x))
    }

    pub(crate) fn insert(&mut self, x: T) -> bool {
        if self.blocks.is_empty() {
            self.blocks.push(VecDeque::from([x]));
            self.len = 1;
            return true;
        }
        let bi = self.first_block_not_below(&x).min(self.blocks.len() - 1);
        let b = &mut self.blocks[bi];
        match b.binary_search(&x) {
            Ok(_) => return false,
            Err(p) => b.insert(p, x),
        }
        self.len += 1;
        if b.len() > 2 * BLOCK {
            let tail = b.split_off(BLOCK);
            self.blocks.insert(bi + 1, tail);
        }
        true
    }

    pub(crate) fn remove(&mut self, x: &T) -> bool {
        let bi = self.first_block_not_below(x);
        let Some(b) = self.blocks.get_mut(bi) else {
            return false;
        };
        let Ok(p) = b.binary_search(x) else {
            return false;
        };
        b.remove(p);
        self.len -= 1;
        if b.is_empty() {
            self.blocks.remove(bi);
        }
        true
    }

    /// How many elements are below `x`.
    pub(crate) fn rank(&self, x: &T) -> usize {
        let bi = self.first_block_not_below(x);
        let before: usize = self.blocks[..bi].iter().map(VecDeque::len).sum();
        before
            + self
                .blocks
                .get(bi)
                .map_or(0, |b| b.partition_point(|e| e < x))
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// The elements above `x`, in order (all of them when `x` is None).
    pub(crate) fn iter_after(&self, x: Option<&T>) -> impl Iterator<Item = &T> {
        let (bi, start) = match x {
            None => (0, 0),
            Some(x) => {
                let bi = self.first_block_not_below(x);
                let start = self
                    .blocks
                    .get(bi)
                    .map_or(0, |b| b.partition_point(|e| e <= x));
                (bi, start)
            }
        };
        self.blocks
            .iter()
            .skip(bi)
            .enumerate()
            .flat_map(move |(k, b)| b.iter().skip(if k == 0 { start } else { 0 }))
    }
}

/// Slots of started jobs on one host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HostTally {
    /// Every started job's slots (RUN, SSUSP, USUSP, UNKWN).
    pub(crate) used: u32,
    /// RUN and UNKWN.
    pub(crate) run: u32,
    pub(crate) ssusp: u32,
    pub(crate) ususp: u32,
    /// Started exclusive jobs (`bsub -x`) using the host (jobs, not slots).
    pub(crate) excl: u32,
}

/// Slots of one queue's jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct QueueTally {
    /// Pending, running and suspended.
    pub(crate) njobs: u32,
    /// PEND and PSUSP.
    pub(crate) pend: u32,
    /// RUN and UNKWN.
    pub(crate) run: u32,
    pub(crate) ssusp: u32,
    pub(crate) ususp: u32,
}

/// The counters and orders (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Counts {
    /// Per queue: (order, key) of its pending jobs (PEND, PSUSP).
    pub(crate) pending: BTreeMap<String, RankSet<(i64, JobKey)>>,
    /// Per host name, as jobs name their hosts.
    pub(crate) hosts: BTreeMap<String, HostTally>,
    /// Per queue name, as jobs name their queue.
    pub(crate) queues: BTreeMap<String, QueueTally>,
    /// The started jobs (RUN, SSUSP, USUSP, UNKWN): a scheduling pass visits these and
    /// the pending ones, not the finished ones kept until their clean period.
    pub(crate) started: BTreeSet<JobKey>,
    /// Pending jobs (PEND, PSUSP) with a dependency condition.
    pub(crate) pending_with_dep: usize,
    /// Per queue name: its started jobs.
    pub(crate) started_in: BTreeMap<String, BTreeSet<JobKey>>,
    /// Pending jobs with a termination time (`bsub -t`): (that time, key), so the
    /// timer finds those past it without a walk over every job.
    pub(crate) deadlines: BTreeSet<(i64, JobKey)>,
    /// Finished jobs by end time: (end time, key), for CLEAN_PERIOD.
    pub(crate) finished: BTreeSet<(i64, JobKey)>,
    /// Per first execution host (where its sbatchd runs the job), as jobs name it: its
    /// started jobs (an sbatchd's hello is reconciled with these, not with every job).
    pub(crate) started_on: BTreeMap<String, BTreeSet<JobKey>>,
    /// The started jobs a scheduling pass must look at one by one even when it takes
    /// host and queue slots from these counters ([`Counts::is_special`]).
    pub(crate) special: BTreeSet<JobKey>,
    /// Per settled inactive queue: the pending jobs counted in it (submitted, requeued,
    /// switched, modified, back from another cluster) or forwarded from it since a pass
    /// last walked it to its end ([`Touched`]): what a pass must look at again in a
    /// queue whose other jobs have their reason.
    pub(crate) pending_touched: BTreeMap<String, Touched>,
}

/// The pending jobs touched in one queue ([`Counts::pending_touched`]): their keys, up to
/// [`Touched::MAX`]; past it, only that there were more (a pass then walks the queue).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Touched {
    pub(crate) keys: Vec<JobKey>,
    pub(crate) overflow: bool,
}

impl Touched {
    /// How many keys are kept (a pass that visits them does not read more than a walk).
    pub(crate) const MAX: usize = 65_536;
}

fn bump(v: &mut u32, n: u32, add: bool) {
    *v = if add { *v + n } else { v.saturating_sub(n) };
}

/// The entry for `k`, made if missing (without allocating a key when it is there).
fn entry<'a, V: Default>(map: &'a mut BTreeMap<String, V>, k: &str) -> Option<&'a mut V> {
    if !map.contains_key(k) {
        map.insert(k.to_owned(), V::default());
    }
    map.get_mut(k)
}

impl Counts {
    /// Whether any started job is suspended by the system (SSUSP; bresume'd jobs wait
    /// for their host's load in that state): O(hosts), not O(jobs).
    pub(crate) fn any_ssusp(&self) -> bool {
        self.hosts.values().any(|t| t.ssusp > 0)
    }

    /// Something changed for the pending job `key` of `queue`
    /// ([`Counts::pending_touched`]).
    /// Only a queue with an entry (a settled inactive queue: the scheduler makes it) keeps
    /// them: the others cost a lookup (a replay touches every pending job).
    pub(crate) fn touch(&mut self, queue: &str, key: JobKey) {
        if let Some(t) = self.pending_touched.get_mut(queue)
            && !t.overflow
        {
            if t.keys.len() < Touched::MAX {
                t.keys.push(key);
            } else {
                t.keys = Vec::new();
                t.overflow = true;
            }
        }
    }

    /// Whether any job is pending (PEND or PSUSP): O(queues).
    pub(crate) fn any_pending(&self) -> bool {
        self.queues.values().any(|t| t.pend > 0)
    }

    /// Whether a started job holds more than its slots on its hosts and in its queue:
    /// it is suspended (a preempted job's slots are the preempting job's), it is an
    /// element of an array with a `%k` limit, or it may reserve resources (its own `-R`,
    /// or its application profile's).
    pub(crate) fn is_special(j: &Job) -> bool {
        matches!(j.state, JobState::Ssusp | JobState::Ususp)
            || j.array_limit.is_some()
            || !j.sub.res_req.is_empty()
            || !j.sub.app().is_empty()
    }

    /// Add a job's contribution (`add`), or take it back.
    pub(crate) fn apply(&mut self, j: &Job, add: bool) {
        if j.state.is_pending() && j.dep.is_some() {
            self.pending_with_dep = if add {
                self.pending_with_dep + 1
            } else {
                self.pending_with_dep.saturating_sub(1)
            };
        }
        if j.state.is_pending()
            && let Some(set) = entry(&mut self.pending, &j.queue)
        {
            if add {
                set.insert((j.order, j.key()));
            } else {
                set.remove(&(j.order, j.key()));
            }
        }
        if j.state.is_pending() && add {
            self.touch(&j.queue, j.key());
        }
        if j.state.is_pending() && j.sub.term_time > 0 {
            if add {
                self.deadlines.insert((j.sub.term_time, j.key()));
            } else {
                self.deadlines.remove(&(j.sub.term_time, j.key()));
            }
        }
        if j.state.is_finished() {
            if add {
                self.finished.insert((j.end_time, j.key()));
            } else {
                self.finished.remove(&(j.end_time, j.key()));
            }
        }
        if j.state.is_started() {
            let special = Counts::is_special(j);
            if let Some(first) = j.hosts.first()
                && let Some(on) = entry(&mut self.started_on, first)
            {
                if add {
                    on.insert(j.key());
                } else {
                    on.remove(&j.key());
                }
            }
            let in_queue = entry(&mut self.started_in, &j.queue);
            if add {
                self.started.insert(j.key());
                in_queue.map(|s| s.insert(j.key()));
                if special {
                    self.special.insert(j.key());
                }
            } else {
                self.started.remove(&j.key());
                in_queue.map(|s| s.remove(&j.key()));
                if special {
                    self.special.remove(&j.key());
                }
            }
        }
        if j.state.is_started() && !j.hosts.is_empty() {
            let exclusive = j.sub.options & sub::EXCLUSIVE != 0;
            for (i, h) in j.hosts.iter().enumerate() {
                let Some(t) = entry(&mut self.hosts, h) else {
                    continue;
                };
                bump(&mut t.used, 1, add);
                match j.state {
                    JobState::Run | JobState::Unkwn => bump(&mut t.run, 1, add),
                    JobState::Ssusp => bump(&mut t.ssusp, 1, add),
                    JobState::Ususp => bump(&mut t.ususp, 1, add),
                    _ => {}
                }
                // An exclusive job counts once per host it uses.
                if exclusive && !j.hosts[..i].contains(h) {
                    bump(&mut t.excl, 1, add);
                }
            }
        }
        let n = j.slots();
        let Some(t) = entry(&mut self.queues, &j.queue) else {
            return;
        };
        let counted = match j.state {
            JobState::Pend | JobState::Psusp => Some(&mut t.pend),
            JobState::Run | JobState::Unkwn => Some(&mut t.run),
            JobState::Ssusp => Some(&mut t.ssusp),
            JobState::Ususp => Some(&mut t.ususp),
            _ => None,
        };
        if let Some(c) = counted {
            bump(c, n, add);
            bump(&mut t.njobs, n, add);
        }
    }

    /// The same, counted from scratch.
    #[cfg(test)]
    pub(crate) fn recount<'a>(jobs: impl Iterator<Item = &'a Job>) -> Counts {
        let mut c = Counts::default();
        for j in jobs {
            c.apply(j, true);
        }
        c.without_empty()
    }

    /// Without the entries that count nothing (a queue or host once used keeps its entry,
    /// so that its name is not allocated again on the next job).
    #[cfg(test)]
    pub(crate) fn without_empty(&self) -> Counts {
        let mut c = self.clone();
        // (Changes, not jobs: a replay sees fewer.)
        c.pending_touched.clear();
        c.pending.retain(|_, set| !set.is_empty());
        c.hosts.retain(|_, t| *t != HostTally::default());
        c.queues.retain(|_, t| *t != QueueTally::default());
        c.started_in.retain(|_, set| !set.is_empty());
        c.started_on.retain(|_, set| !set.is_empty());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_set_agrees_with_a_sorted_vec() {
        let mut set = RankSet::default();
        let mut model: Vec<u64> = Vec::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 3000;
            if x.is_multiple_of(3) {
                let had = model.binary_search(&v).is_ok();
                assert_eq!(set.remove(&v), had);
                model.retain(|m| *m != v);
            } else {
                let fresh = model.binary_search(&v).is_err();
                assert_eq!(set.insert(v), fresh);
                if let Err(p) = model.binary_search(&v) {
                    model.insert(p, v);
                }
            }
            let probe = (x >> 20) % 3100;
            assert_eq!(set.rank(&probe), model.partition_point(|m| *m < probe));
        }
        assert!(set.iter().copied().eq(model.iter().copied()));
        assert_eq!(set, RankSet::from_sorted(model));
    }
}
