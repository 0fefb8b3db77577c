//! User-based fairshare in a queue (seed 001 "Fairshare in Queues", daemon-behaviour.md
//! §5): lsb.queues `FAIRSHARE = USER_SHARES[...]` with the share trees of lsb.users
//! (`USER_SHARES` of a UserGroup) decides which pending job of the queue a pass visits
//! next, instead of first come, first served.
//!
//! * **Accounts.** `[user, n]` is the user's; `[group, n]` is the group's — its members
//!   together, or, when the group has a `USER_SHARES` tree in lsb.users, that tree
//!   below it (hierarchical fairshare); `[group@, n]` and `[default, n]` give each user
//!   they cover (`default`: every user not otherwise named) an account of n shares;
//!   `[all, n]` is every user together, `[others, n]` every user not otherwise named
//!   together. A user the list gives no share to cannot submit to the queue (LSF's `User
//!   cannot use the queue`); one left with jobs in it by a change of the list is served
//!   last, under an account of 0 shares named after them.
//! * **Dynamic priority** of an account (a group's counts its members'):
//!   `shares / (cpu_time × CPU_TIME_FACTOR + run_time × RUN_TIME_FACTOR + (1 + job_slots)
//!   × RUN_JOB_FACTOR + committed × COMMITTED_RUN_TIME_FACTOR)`, with the CPU and run
//!   time in hours — those of its running jobs plus its finished jobs' in the queue,
//!   decayed so that an hour counts a tenth after `HIST_HOURS` — `job_slots` the slots
//!   its jobs hold, `committed` the run limit its running jobs have left. Factors from
//!   the queue, else lsb.params.
//! * **Order.** From the top of the tree, the sibling of highest priority with pending
//!   jobs is taken, down to an account, whose oldest pending job is visited next; a job
//!   placed adds its slots to its accounts before the next choice. Within an account:
//!   first come, first served.
//!
//! The finished jobs' usage ([`FsHist`]) is taken from the JOB_STATUS that ends each
//! job, at its time: a replay of lsb.events gives the same values.

use crate::config::UserList;
use crate::{Millis, Sched, Str};
use basalt_config::batch::ShareEntry;
use std::collections::{BTreeMap, VecDeque};

/// The fairshare factors of a queue (its own, else lsb.params').
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsFactors {
    pub cpu_time: f64,
    pub run_time: f64,
    pub run_job: f64,
    pub committed_run_time: f64,
    pub hist_hours: f64,
}

impl Default for FsFactors {
    fn default() -> FsFactors {
        FsFactors {
            cpu_time: 0.7,
            run_time: 0.7,
            run_job: 3.0,
            committed_run_time: 0.0,
            hist_hours: 5.0,
        }
    }
}

impl FsFactors {
    /// The decay of `dt_ms` of time: an hour's usage counts a tenth after HIST_HOURS.
    pub fn decay(&self, dt_ms: Millis) -> f64 {
        if dt_ms <= 0 || self.hist_hours <= 0.0 {
            return 1.0;
        }
        let hours = dt_ms as f64 / 3_600_000.0;
        0.1f64.powf(hours / self.hist_hours)
    }
}

/// A user's finished jobs' usage in a queue, decayed as of `at`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FsHist {
    /// CPU seconds.
    pub cpu_s: f64,
    /// Run (wall-clock) seconds.
    pub run_s: f64,
    pub at: Millis,
}

impl FsHist {
    /// This usage as of `now`.
    pub fn at(&self, now: Millis, f: &FsFactors) -> FsHist {
        let d = f.decay(now - self.at);
        FsHist {
            cpu_s: self.cpu_s * d,
            run_s: self.run_s * d,
            at: now,
        }
    }
}

/// What an account uses now.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FsUsage {
    pub cpu_s: f64,
    pub run_s: f64,
    pub slots: u32,
    pub committed_s: f64,
}

impl FsUsage {
    fn add(&mut self, o: &FsUsage) {
        self.cpu_s += o.cpu_s;
        self.run_s += o.run_s;
        self.slots += o.slots;
        self.committed_s += o.committed_s;
    }

    /// The dynamic priority of an account of `shares` using this.
    pub fn priority(&self, shares: u32, f: &FsFactors) -> f64 {
        let d = self.cpu_s / 3600.0 * f.cpu_time
            + self.run_s / 3600.0 * f.run_time
            + (1.0 + f64::from(self.slots)) * f.run_job
            + self.committed_s / 3600.0 * f.committed_run_time;
        f64::from(shares) / d.max(1e-9)
    }
}

/// bqueues -l: the accounts under one node of a queue's share tree (`SHARE_INFO_FOR:
/// normal/` for the top, `normal/group/` for a group's own tree).
#[derive(Debug, Clone, PartialEq)]
pub struct ShareInfo {
    pub path: String,
    pub rows: Vec<ShareRow>,
}

/// One account in [`ShareInfo`]: its shares, dynamic priority, slots of its started
/// jobs, CPU and run time (seconds; finished jobs' decayed).
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    pub name: String,
    pub shares: u32,
    pub priority: f64,
    pub started: u32,
    pub cpu_time: f64,
    pub run_time: f64,
}

/// A host partition as bhpart shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionView {
    pub name: String,
    /// Host names (empty: every host).
    pub hosts: Vec<String>,
    pub share_info: Vec<ShareInfo>,
}

/// What a share tree is of: a fairshare queue, or a host partition (by index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FsScope {
    Queue(usize),
    Partition(usize),
}

/// The history key of host partition `name` (no queue has a name with `/`).
pub(crate) fn partition_key(name: &str) -> Str {
    Str::from(format!("/{name}").as_str())
}

/// One node of a queue's share tree in a pass.
#[derive(Debug, Clone)]
pub(crate) struct FsNode {
    pub(crate) label: String,
    pub(crate) shares: u32,
    pub(crate) parent: Option<usize>,
    pub(crate) children: Vec<usize>,
    pub(crate) usage: FsUsage,
    /// Pending jobs below it (itself included) not visited yet.
    pub(crate) pending: u32,
}

/// A queue's share tree, with the accounts' pending jobs (`T`: what the pass visits).
#[derive(Debug, Clone)]
pub(crate) struct FsTree<T> {
    pub(crate) nodes: Vec<FsNode>,
    /// By account node: its pending jobs, oldest first.
    pub(crate) jobs: BTreeMap<usize, VecDeque<T>>,
    pub(crate) factors: FsFactors,
    /// Each (user, `bsub -G` group) account node.
    pub(crate) users: BTreeMap<(Str, Str), usize>,
}

impl<T> FsTree<T> {
    pub(crate) fn new(factors: FsFactors) -> FsTree<T> {
        FsTree {
            nodes: vec![FsNode {
                label: String::new(),
                shares: 0,
                parent: None,
                children: Vec::new(),
                usage: FsUsage::default(),
                pending: 0,
            }],
            jobs: BTreeMap::new(),
            factors,
            users: BTreeMap::new(),
        }
    }

    /// The account node of `path` ((label, shares) from the top), made when new.
    pub(crate) fn node(&mut self, path: &[(String, u32)]) -> usize {
        let mut at = 0;
        for (label, shares) in path {
            let found = self.nodes[at]
                .children
                .iter()
                .copied()
                .find(|&c| self.nodes[c].label == *label);
            at = match found {
                Some(c) => c,
                None => {
                    let id = self.nodes.len();
                    self.nodes.push(FsNode {
                        label: label.clone(),
                        shares: *shares,
                        parent: Some(at),
                        children: Vec::new(),
                        usage: FsUsage::default(),
                        pending: 0,
                    });
                    self.nodes[at].children.push(id);
                    id
                }
            };
        }
        at
    }

    /// Add `u` to account `n` and the groups above it.
    pub(crate) fn add_usage(&mut self, n: usize, u: &FsUsage) {
        let mut at = Some(n);
        while let Some(i) = at {
            self.nodes[i].usage.add(u);
            at = self.nodes[i].parent;
        }
    }

    /// Queue a pending job of account `n` (after those queued before it).
    pub(crate) fn push_job(&mut self, n: usize, job: T) {
        self.jobs.entry(n).or_default().push_back(job);
        let mut at = Some(n);
        while let Some(i) = at {
            self.nodes[i].pending += 1;
            at = self.nodes[i].parent;
        }
    }

    /// The next job to visit: down from the top, the child of highest priority with
    /// pending jobs, to the account whose oldest job it is; with its account.
    pub(crate) fn next(&mut self) -> Option<(usize, T)> {
        if self.nodes[0].pending == 0 {
            return None;
        }
        let mut at = 0;
        loop {
            let own = self.jobs.get(&at).is_some_and(|q| !q.is_empty());
            let f = self.factors;
            let best = self.nodes[at]
                .children
                .iter()
                .copied()
                .filter(|&c| self.nodes[c].pending > 0)
                .max_by(|&a, &b| {
                    let (na, nb) = (&self.nodes[a], &self.nodes[b]);
                    na.usage
                        .priority(na.shares, &f)
                        .total_cmp(&nb.usage.priority(nb.shares, &f))
                        .then(na.shares.cmp(&nb.shares))
                        .then(nb.label.cmp(&na.label))
                });
            match best {
                Some(c) if !own => at = c,
                _ => break,
            }
        }
        let job = self.jobs.get_mut(&at)?.pop_front()?;
        let mut up = Some(at);
        while let Some(i) = up {
            self.nodes[i].pending = self.nodes[i].pending.saturating_sub(1);
            up = self.nodes[i].parent;
        }
        Some((at, job))
    }

    /// A job of account `n` was placed on `slots` slots.
    pub(crate) fn placed(&mut self, n: usize, slots: u32) {
        self.add_usage(
            n,
            &FsUsage {
                slots,
                ..Default::default()
            },
        );
    }
}

impl Sched {
    /// The account path of `user` in a share list — (label, shares) from the top; None
    /// when the list gives the user no share — for a job submitted with `bsub -G group`
    /// ("" = none): that group's share when the list has one for it and the group has
    /// the user, else the first group that has the user.
    pub(crate) fn share_path_of(
        &self,
        entries: &[ShareEntry],
        user: &str,
        group: &str,
    ) -> Option<Vec<(String, u32)>> {
        self.share_path_at(entries, user, group, 0)
    }

    fn share_path_at(
        &self,
        entries: &[ShareEntry],
        user: &str,
        group: &str,
        depth: u32,
    ) -> Option<Vec<(String, u32)>> {
        if depth > 8 {
            return None;
        }
        if let Some(e) = entries.iter().find(|e| e.name == user) {
            return Some(vec![(user.to_owned(), e.shares)]);
        }
        let covers = |g: &str| {
            self.cfg
                .user_groups
                .get(g)
                .is_some_and(|(m, _): &(UserList, _)| m.covers(user))
        };
        // The group `bsub -G` names, else the first that has the user.
        let chosen = entries
            .iter()
            .find(|e| !group.is_empty() && e.name == group && covers(&e.name))
            .or_else(|| {
                entries
                    .iter()
                    .find(|e| !e.name.ends_with('@') && covers(&e.name))
            });
        if let Some(e) = chosen {
            let mut path = vec![(e.name.clone(), e.shares)];
            if let Some(sub) = self.cfg.group_shares.get(&e.name) {
                path.extend(self.share_path_at(sub, user, group, depth + 1)?);
            }
            return Some(path);
        }
        if let Some(e) = entries
            .iter()
            .find(|e| e.name.strip_suffix('@').is_some_and(covers))
        {
            return Some(vec![(user.to_owned(), e.shares)]);
        }
        if let Some(e) = entries.iter().find(|e| e.name == "all") {
            return Some(vec![("all".to_owned(), e.shares)]);
        }
        // `others`: every user not otherwise named, together.
        if let Some(e) = entries.iter().find(|e| e.name == "others") {
            return Some(vec![("others".to_owned(), e.shares)]);
        }
        entries
            .iter()
            .find(|e| e.name == "default")
            .map(|e| vec![(user.to_owned(), e.shares)])
    }

    /// What a share tree is made of: its list, its factors, the key of its history and
    /// which started jobs count in it.
    fn scope_parts(&self, scope: FsScope) -> (&[ShareEntry], FsFactors, Str) {
        match scope {
            FsScope::Queue(qi) => {
                let q = &self.queues[qi];
                (&q.user_shares, q.fs_factors, Str::from(q.name.as_str()))
            }
            FsScope::Partition(pi) => {
                let p = &self.cfg.host_partitions[pi];
                (&p.user_shares, self.cfg.fs_factors, partition_key(&p.name))
            }
        }
    }

    /// Does started job `j` count in `scope`: a job of the queue; a job on a host of the
    /// partition, of a queue without FAIRSHARE of its own.
    fn in_scope(&self, scope: FsScope, j: &crate::Job) -> bool {
        match scope {
            FsScope::Queue(qi) => *j.queue == *self.queues[qi].name,
            FsScope::Partition(pi) => {
                self.queue(&j.queue)
                    .is_some_and(|q| q.user_shares.is_empty())
                    && j.hosts
                        .first()
                        .is_some_and(|h| self.cfg.host_partitions[pi].has(h))
            }
        }
    }

    /// The host partition whose fairshare orders queue `qi`'s jobs: one that has every
    /// host the queue may use, when the queue has no FAIRSHARE of its own.
    pub(crate) fn partition_of(&self, qi: usize) -> Option<usize> {
        let q = &self.queues[qi];
        if !q.user_shares.is_empty() {
            return None;
        }
        self.cfg.host_partitions.iter().position(|p| {
            if q.hosts.is_empty() {
                self.hosts.iter().all(|h| p.has(&h.name))
            } else {
                q.hosts.iter().all(|h| p.has(h))
            }
        })
    }

    /// The share tree of `scope` at `now`, with every user's usage in it (finished jobs'
    /// decayed, running jobs'), and the accounts of queue `pending_of`'s pending jobs;
    /// users with no share under a node of 0 shares.
    pub(crate) fn share_tree<T>(
        &self,
        scope: FsScope,
        pending_of: usize,
        now: Millis,
    ) -> FsTree<T> {
        let (entries, factors, key) = self.scope_parts(scope);
        let mut tree = FsTree::new(factors);
        // A job's account: by its user and its `bsub -G` group (the history of finished
        // jobs is kept by user: it goes to the account without a group).
        let account = |tree: &mut FsTree<T>, user: &Str, group: &Str| -> usize {
            let key = (user.clone(), group.clone());
            if let Some(&n) = tree.users.get(&key) {
                return n;
            }
            let path = self
                .share_path_of(entries, user, group)
                .unwrap_or_else(|| vec![(user.to_string(), 0)]);
            let n = tree.node(&path);
            tree.users.insert(key, n);
            n
        };
        for ((queue, user), h) in self.fs_hist.range((key.clone(), Str::EMPTY)..) {
            if **queue != *key {
                break;
            }
            // (User "" holds a slot pool's accumulated use, not an account.)
            if user.is_empty() {
                continue;
            }
            let n = account(&mut tree, user, &Str::EMPTY);
            let h = h.at(now, &factors);
            tree.add_usage(
                n,
                &FsUsage {
                    cpu_s: h.cpu_s,
                    run_s: h.run_s,
                    ..Default::default()
                },
            );
        }
        for key in &self.counts.started {
            let Some(j) = self.jobs.get(key) else {
                continue;
            };
            if !self.in_scope(scope, j) {
                continue;
            }
            let n = account(&mut tree, &j.sub.user, &j.sub.user_group);
            let run_s = ((now - j.start_time.saturating_mul(1000)) as f64 / 1000.0).max(0.0);
            let limit = self.effective_rlimits(j)[crate::RLIMIT_RUN];
            tree.add_usage(
                n,
                &FsUsage {
                    cpu_s: j.usage().utime + j.usage().stime,
                    run_s,
                    slots: j.slots(),
                    committed_s: if limit > 0 {
                        (limit as f64 - run_s).max(0.0)
                    } else {
                        0.0
                    },
                },
            );
        }
        let pending = self
            .queues
            .get(pending_of)
            .and_then(|q| self.counts.pending.get(&q.name));
        if let Some(p) = pending {
            for (_, key) in p.iter_after(None) {
                if let Some(j) = self.jobs.get(key) {
                    account(&mut tree, &j.sub.user, &j.sub.user_group);
                }
            }
        }
        tree
    }

    /// bqueues -l of fairshare queue `qi` at `now`: for the top of its share tree and
    /// each group with a tree of its own, the accounts below it (those the lists name,
    /// and every user with jobs or history under `default` or `group@`).
    pub fn share_info(&self, qi: usize, now: Millis) -> Vec<ShareInfo> {
        let q = &self.queues[qi];
        let tree: FsTree<()> = self.share_tree(FsScope::Queue(qi), qi, now);
        self.share_info_rows(tree, &q.user_shares, &q.name)
    }

    /// bhpart: the host partitions named (empty: all) — (name, hosts, accounts) — and
    /// the names that are none.
    pub fn partitions_view(
        &self,
        names: &[String],
        now: Millis,
    ) -> (Vec<PartitionView>, Vec<String>) {
        let parts = &self.cfg.host_partitions;
        let not_found = names
            .iter()
            .filter(|n| !parts.iter().any(|p| p.name == **n))
            .cloned()
            .collect();
        let out = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| names.is_empty() || names.contains(&p.name))
            .map(|(pi, p)| PartitionView {
                name: p.name.clone(),
                hosts: p.hosts.clone(),
                share_info: self.partition_share_info(pi, now),
            })
            .collect();
        (out, not_found)
    }

    /// bhpart: host partition `pi`'s accounts at `now`, as [`Sched::share_info`].
    pub fn partition_share_info(&self, pi: usize, now: Millis) -> Vec<ShareInfo> {
        let p = &self.cfg.host_partitions[pi];
        // (No queue's pending jobs: the accounts with jobs, history or a name.)
        let tree: FsTree<()> = self.share_tree(FsScope::Partition(pi), usize::MAX, now);
        self.share_info_rows(tree, &p.user_shares, &p.name)
    }

    fn share_info_rows(
        &self,
        mut tree: FsTree<()>,
        entries: &[ShareEntry],
        top: &str,
    ) -> Vec<ShareInfo> {
        self.name_entries(&mut tree, entries, &mut Vec::new(), 0);
        let mut out = Vec::new();
        let mut stack = vec![(0usize, format!("{top}/"))];
        while let Some((n, path)) = stack.pop() {
            let mut rows = Vec::new();
            let mut groups = Vec::new();
            for &c in &tree.nodes[n].children {
                let node = &tree.nodes[c];
                rows.push(ShareRow {
                    name: node.label.clone(),
                    shares: node.shares,
                    priority: node.usage.priority(node.shares, &tree.factors),
                    started: node.usage.slots,
                    cpu_time: node.usage.cpu_s,
                    run_time: node.usage.run_s,
                });
                if !node.children.is_empty() {
                    groups.push((c, format!("{path}{}/", node.label)));
                }
            }
            stack.extend(groups.into_iter().rev());
            out.push(ShareInfo { path, rows });
        }
        out
    }

    /// [`Sched::share_info`] of the queue named `queue` (empty: not a fairshare queue).
    pub fn share_info_of(&self, queue: &str, now: Millis) -> Vec<ShareInfo> {
        match self.queues.iter().position(|q| q.name == queue) {
            Some(qi) if !self.queues[qi].user_shares.is_empty() => self.share_info(qi, now),
            _ => Vec::new(),
        }
    }

    /// Make the nodes of the users and groups `entries` name (a group's own tree too).
    fn name_entries(
        &self,
        tree: &mut FsTree<()>,
        entries: &[ShareEntry],
        above: &mut Vec<(String, u32)>,
        depth: u32,
    ) {
        if depth > 8 {
            return;
        }
        for e in entries {
            if e.name.ends_with('@') || e.name == "default" {
                continue;
            }
            above.push((e.name.clone(), e.shares));
            tree.node(above);
            if let Some(sub) = self.cfg.group_shares.get(&e.name) {
                self.name_entries(tree, sub, above, depth + 1);
            }
            above.pop();
        }
    }

    /// Is any history kept: a FAIRSHARE queue, a slot pool or a host partition?
    pub(crate) fn fs_history_kept(&self) -> bool {
        !self.cfg.host_partitions.is_empty()
            || self
                .queues
                .iter()
                .any(|q| !q.user_shares.is_empty() || !q.slot_pool.is_empty())
    }

    /// The fairshare history as of `now` (queue, user, CPU seconds, run seconds), for a
    /// log switch to carry.
    pub(crate) fn fs_history(&self, now: Millis) -> Vec<(String, String, f64, f64)> {
        self.fs_hist
            .iter()
            .map(|((q, u), h)| {
                let f = self
                    .queues
                    .iter()
                    .find(|x| *x.name == **q)
                    .map_or_else(FsFactors::default, |x| x.fs_factors);
                let h = h.at(now.max(h.at), &f);
                (q.to_string(), u.to_string(), h.cpu_s, h.run_s)
            })
            .collect()
    }

    /// A job of fairshare queue `queue` ended at `t_ms` after `run_s` seconds, having
    /// used `cpu_s`: its user's history there.
    ///
    /// A job of a slot pool's queue (SLOT_POOL) adds its slot-seconds to the queue's
    /// accumulated use, kept under the user "" (no user has that name).
    ///
    /// A job of a queue without FAIRSHARE that ran on a host of a host partition adds its
    /// usage to its user's history in the partition.
    pub(crate) fn fs_account_finish(
        &mut self,
        (queue, user, host): (&Str, &Str, Option<&str>),
        t_ms: Millis,
        (cpu_s, run_s, slots): (f64, f64, u32),
    ) {
        let Some(q) = self.queues.iter().find(|q| *q.name == **queue) else {
            return;
        };
        let (fair, pooled, f) = (
            !q.user_shares.is_empty(),
            !q.slot_pool.is_empty(),
            q.fs_factors,
        );
        let partition = match host {
            Some(h) if !fair => self
                .cfg
                .host_partitions
                .iter()
                .find(|p| p.has(h))
                .map(|p| partition_key(&p.name)),
            _ => None,
        };
        let params = self.cfg.fs_factors;
        let mut add = |key: Str, who: &Str, f: &FsFactors, cpu: f64, run: f64| {
            let h = self.fs_hist.entry((key, who.clone())).or_default();
            let mut now = h.at(t_ms.max(h.at), f);
            now.cpu_s += cpu.max(0.0);
            now.run_s += run.max(0.0);
            *h = now;
        };
        if fair {
            add(queue.clone(), user, &f, cpu_s, run_s);
        }
        if pooled {
            add(
                queue.clone(),
                &Str::EMPTY,
                &f,
                0.0,
                run_s * f64::from(slots),
            );
        }
        if let Some(key) = partition {
            add(key, user, &params, cpu_s, run_s);
        }
    }
}
