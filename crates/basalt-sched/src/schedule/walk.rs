//! The pass's walk over the pending jobs: in queue priority and FCFS order, a few at a
//! time ([`Walk`]); which hosts still have a free slot ([`FullHosts`], the walk stops
//! early when none does); and the pending reasons it found, set at its end.

use crate::{JobKey, Sched, Submission};
use basalt_core::job::{JobState, pend};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a pass's walk over the pending jobs is: the queue (index into the pass's queue
/// order), the last job visited in it, and the next few jobs read.
pub(super) struct Walk {
    pub(super) queue: usize,
    pub(super) after: Option<(i64, JobKey)>,
    pub(super) buf: std::collections::VecDeque<PendRec>,
    /// The fairshare queue being walked: its share tree with its pending jobs
    /// ([`crate::fairshare`]).
    pub(super) fair: Option<crate::fairshare::FsTree<PendRec>>,
    /// The inactive queues walked to their end (the pass records them once their
    /// reasons are set: [`Sched::inact_settled`]).
    pub(super) settled: Vec<String>,
    /// The inactive queue whose touched jobs are in `buf`: settled once they are all
    /// visited.
    pub(super) settling: Option<String>,
}

impl Walk {
    pub(super) fn new() -> Walk {
        Walk {
            queue: 0,
            after: None,
            buf: std::collections::VecDeque::new(),
            fair: None,
            settled: Vec::new(),
            settling: None,
        }
    }
}

/// How many pending jobs a pass reads at a time.
const WALK_CHUNK: usize = 32;

impl Sched {
    /// A pending job as a pass visits it.
    pub(super) fn pend_rec(&self, j: &crate::Job, qi: usize, name_rank: &[usize]) -> PendRec {
        PendRec {
            rank: (
                u32::MAX - self.queues[qi].priority,
                name_rank[qi],
                j.order,
                j.key(),
            ),
            qi,
            sub: j.sub.clone(),
            array_limit: j.array_limit,
            need: j.slots(),
            requeues: j.requeues.clone(),
            account: None,
            forwarded: crate::mc::is_forwarded(j),
        }
    }

    /// The records of the jobs submitted since the last pass (`fresh`) that are still
    /// pending and not `visited`, in job-id order.
    pub(super) fn fresh_recs(
        &self,
        fresh: &std::collections::BTreeSet<crate::JobKey>,
        visited: &std::collections::BTreeSet<crate::JobKey>,
        name_rank: &[usize],
    ) -> Vec<PendRec> {
        fresh
            .iter()
            .filter(|key| !visited.contains(key))
            .filter_map(|key| self.jobs.get(key))
            .filter(|j| j.state == JobState::Pend)
            .filter_map(|j| {
                let qi = self.queues.iter().position(|q| q.name == *j.queue)?;
                Some(self.pend_rec(j, qi, name_rank))
            })
            .collect()
    }

    /// The next pending job in the pass's order (queues by priority then name, each
    /// queue's jobs by submission order), read [`WALK_CHUNK`] at a time after the last
    /// one visited (the pass's own starts leave the pending sets as it goes).
    pub(super) fn next_pending(
        &self,
        now: crate::Millis,
        walk: &mut Walk,
        queue_order: &[usize],
        name_rank: &[usize],
    ) -> Option<PendRec> {
        loop {
            if let Some(rec) = walk.buf.pop_front() {
                return Some(rec);
            }
            if let Some(name) = walk.settling.take() {
                walk.settled.push(name);
            }
            // A fairshare queue: its jobs in the order of its share tree.
            if let Some(tree) = walk.fair.as_mut() {
                if let Some((account, mut rec)) = tree.next() {
                    rec.account = Some(account);
                    return Some(rec);
                }
                walk.fair = None;
                walk.queue += 1;
                walk.after = None;
                continue;
            }
            let &qi = queue_order.get(walk.queue)?;
            let q = &self.queues[qi];
            let inactive = !q.active;
            // An inactive queue whose jobs all have their reason: only the jobs touched
            // since are visited (none, mostly).
            if inactive && walk.after.is_none() && self.inact_settled.contains(&q.name) {
                let touched = self.counts.pending_touched.get(&q.name);
                if !touched.is_some_and(|t| t.overflow) {
                    let mut recs: Vec<PendRec> = touched
                        .map(|t| t.keys.as_slice())
                        .unwrap_or_default()
                        .iter()
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter()
                        .filter_map(|key| self.jobs.get(key))
                        .filter(|j| {
                            j.state == JobState::Pend
                                && j.queue == q.name
                                && !settled_in_inactive(j)
                        })
                        .map(|j| self.pend_rec(j, qi, name_rank))
                        .collect();
                    recs.sort_by_key(|r| r.rank);
                    walk.buf.extend(recs);
                    walk.settling = Some(q.name.clone());
                    walk.queue += 1;
                    continue;
                }
            }
            // A fairshare queue, or one whose hosts are all in a host partition.
            let scope = if !self.queues[qi].user_shares.is_empty() {
                Some(crate::fairshare::FsScope::Queue(qi))
            } else {
                self.partition_of(qi)
                    .map(crate::fairshare::FsScope::Partition)
            };
            if let Some(scope) = scope {
                let mut tree = self.share_tree(scope, qi, now);
                if let Some(pending) = self.counts.pending.get(&self.queues[qi].name) {
                    for &(_, key) in pending.iter_after(None) {
                        let Some(j) = self.jobs.get(&key) else {
                            continue;
                        };
                        if j.state != JobState::Pend {
                            continue;
                        }
                        let who = (j.sub.user.clone(), j.sub.user_group.clone());
                        let n = match tree.users.get(&who) {
                            Some(&n) => n,
                            None => continue,
                        };
                        tree.push_job(n, self.pend_rec(j, qi, name_rank));
                    }
                }
                walk.fair = Some(tree);
                continue;
            }
            if let Some(pending) = self.counts.pending.get(&self.queues[qi].name) {
                // (Where the read stopped: the next read goes on from there.)
                let mut read_to = None;
                for &(order, key) in pending.iter_after(walk.after.as_ref()) {
                    read_to = Some((order, key));
                    let Some(j) = self.jobs.get(&key) else {
                        continue;
                    };
                    if j.state != JobState::Pend {
                        continue;
                    }
                    // In an inactive queue, a job that already has the only reason
                    // the pass could give it is not visited.
                    if inactive && settled_in_inactive(j) {
                        continue;
                    }
                    walk.buf.push_back(self.pend_rec(j, qi, name_rank));
                    if walk.buf.len() >= WALK_CHUNK {
                        break;
                    }
                }
                if read_to.is_some() {
                    walk.after = read_to;
                }
            }
            if walk.buf.is_empty() {
                // This queue is done: the next one, from its start.
                if inactive {
                    walk.settled.push(q.name.clone());
                }
                walk.queue += 1;
                walk.after = None;
            }
        }
    }
}

/// Whether a pending job of an inactive queue already has the reason a pass would give
/// it: forwarded to another cluster, else the queue's inactivity.
fn settled_in_inactive(j: &crate::Job) -> bool {
    let only =
        |code| j.pend_reasons.len() == 1 && j.pend_reasons.get(&code).is_some_and(Vec::is_empty);
    if crate::mc::is_forwarded(j) {
        only(pend::MC_FORWARDED)
    } else {
        only(pend::QUEUE_INACT)
    }
}

/// Pending reasons by code, with the hosts each applies to; shared between jobs.
pub(crate) type PendReasons = Arc<BTreeMap<u32, Vec<String>>>;

/// A pending job as a pass visits it: its place in the order, and what the checks read.
pub(crate) struct PendRec {
    /// (u32::MAX − queue priority, queue name rank, submission order, key).
    pub(crate) rank: (u32, usize, i64, JobKey),
    /// Queue index.
    pub(crate) qi: usize,
    pub(crate) sub: Arc<Submission>,
    pub(crate) array_limit: Option<u32>,
    pub(crate) need: u32,
    /// Its requeues (a retry time, excluded hosts), when it had any.
    pub(crate) requeues: Option<Box<crate::Requeues>>,
    /// Its account in its queue's share tree (a fairshare queue's walk).
    pub(crate) account: Option<usize>,
    /// Forwarded to a remote cluster (MultiCluster): it waits there, not here.
    pub(crate) forwarded: bool,
}

/// Which hosts have no free slot in the pass (used or reserved), and how many have one.
pub(super) struct FullHosts {
    full: Vec<bool>,
    /// Hosts that take no job in this pass whatever their slots (closed, unreachable,
    /// locked, outside their dispatch window): counted full.
    shut: Vec<bool>,
    /// Hosts with a free slot that may take a job.
    pub(super) free: usize,
}

impl FullHosts {
    /// `shut(i)`: host `i` takes no job of any queue in this pass.
    pub(super) fn new(
        hosts: &[crate::Host],
        st: &super::fit::PassState,
        shut: impl Fn(usize) -> bool,
    ) -> FullHosts {
        let shut: Vec<bool> = (0..hosts.len()).map(shut).collect();
        let full: Vec<bool> = (0..hosts.len())
            .map(|i| shut[i] || st.host_full(&hosts[i], i))
            .collect();
        let free = full.iter().filter(|f| !**f).count();
        FullHosts { full, shut, free }
    }

    /// Whether each of `touched` is full now (a placement fills hosts, a reservation
    /// given back frees them).
    pub(super) fn refresh(
        &mut self,
        hosts: &[crate::Host],
        st: &super::fit::PassState,
        touched: &[usize],
    ) {
        for &i in touched {
            let full = self.shut[i] || st.host_full(&hosts[i], i);
            if full != self.full[i] {
                self.full[i] = full;
                if full {
                    self.free -= 1;
                } else {
                    self.free += 1;
                }
            }
        }
    }
}

impl Sched {
    /// Give the visited pending jobs the reasons the pass found for them.
    pub(super) fn set_reasons(&mut self, mut assign: Vec<(JobKey, PendReasons)>) {
        // Set the reasons: a few (a pass that stopped early) one by one, many in one
        // ordered walk (mostly in key order already).
        if assign.len().saturating_mul(16) < self.jobs.len() {
            for (k, r) in assign {
                if let Some(j) = self.jobs.get_mut(&k) {
                    j.pend_reasons = r;
                }
            }
            return;
        }
        assign.sort_unstable_by_key(|a| a.0);
        let mut next = assign.into_iter().peekable();
        if let Some((first, _)) = next.peek() {
            let first = *first;
            for (k, j) in self.jobs.range_mut(first..) {
                while next.peek().is_some_and(|(want, _)| want < k) {
                    next.next();
                }
                match next.peek() {
                    None => break,
                    Some((want, _)) if want == k => {
                        if let Some((_, r)) = next.next() {
                            j.pend_reasons = r;
                        }
                    }
                    Some(_) => {}
                }
            }
        }
    }
}
