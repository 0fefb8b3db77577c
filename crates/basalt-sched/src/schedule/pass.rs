//! A pass's working state ([`Pass`]) and its first and last phases: [`Sched::begin_pass`]
//! (what the pass needs to know before it visits a job: what the started jobs hold, the
//! reservations, the preemption, the queue order, the dependencies) and
//! [`Sched::finish_pass`] (what the pass leaves for the next one and for the queries).

use super::fit::{PassState, Shape, ShapeKey, StaticWhy};
use super::preempt::PassPreempt;
use super::reserve::{add_amounts, reserved_total};
use super::slot_resv::PassResv;
use super::walk::{FullHosts, PendReasons, PendRec, Walk};
use super::{FastMap, compound, fast_map, select};
use crate::depend::Tri;
use crate::reslimits::Consumer;
use crate::{JobKey, Millis, Sched, Str, secs};
use basalt_core::job::{JobState, sub, susp};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// Which shared resource instance a host's amount of a resource comes from (a copy: the
/// pass changes the core as it places jobs).
pub(super) struct SharedOf {
    host_shared: Vec<Vec<usize>>,
    names: Vec<String>,
}

impl SharedOf {
    /// The instance of `name` host `i` is in.
    pub(super) fn of(&self, i: usize, name: &str) -> Option<usize> {
        self.host_shared
            .get(i)?
            .iter()
            .copied()
            .find(|&k| self.names[k] == name)
    }

    /// Is host `j` in instance `k`?
    pub(super) fn holds(&self, j: usize, k: usize) -> bool {
        self.host_shared.get(j).is_some_and(|s| s.contains(&k))
    }
}

/// What the configuration asks a pass to count (fixed for the pass).
#[derive(Clone, Copy)]
pub(super) struct Counting {
    /// Per (host, user) slots: for lsb.hosts JL/U and lsb.users JL/P.
    pub(super) track_user: bool,
    /// Per (queue, host) slots: for HJOB_LIMIT and PJOB_LIMIT.
    pub(super) track_qhost: bool,
    /// Resource allocation limits (lsb.resources).
    pub(super) with_limits: bool,
    /// A limit counts by application profile.
    pub(super) app_limits: bool,
    /// Some limit counts reserved amounts (MEM, SWP, TMP, RESOURCE).
    pub(super) limit_amounts: bool,
}

/// What the started jobs hold, as [`Sched::count_started`] adds it up.
struct Held {
    st: PassState,
    q_used: BTreeMap<String, u32>,
    q_user: BTreeMap<(String, String), u32>,
    /// Started elements of arrays with a %k limit.
    array_started: BTreeMap<u64, u32>,
    /// What started jobs reserve (`rusage[]`), by (queue, resource requirement).
    reserves: FastMap<(Str, Str), Vec<select::Reserve>>,
}

/// One scheduling pass's working state, from [`Sched::begin_pass`] to
/// [`Sched::finish_pass`].
pub(super) struct Pass {
    pub(super) now: Millis,
    /// The pass visits every pending job (not only until no host has a free slot).
    pub(super) full: bool,
    /// The jobs submitted since the last pass.
    pub(super) fresh: BTreeSet<JobKey>,
    /// Each queue's rank by name (the order between queues of one priority).
    pub(super) name_rank: Vec<usize>,
    pub(super) nh: usize,
    pub(super) counting: Counting,
    pub(super) shared: SharedOf,
    /// Slots in use, by host index, kept up to date as jobs are placed in this pass.
    pub(super) st: PassState,
    pub(super) q_used: BTreeMap<String, u32>,
    pub(super) q_user: BTreeMap<(String, String), u32>,
    pub(super) array_started: BTreeMap<u64, u32>,
    pub(super) reserves: FastMap<(Str, Str), Vec<select::Reserve>>,
    /// Slot reservations (SLOT_RESERVE) of pending jobs, counted as used.
    pub(super) resv: PassResv,
    /// Preemption: who may preempt whom, the victims, the preempted jobs waiting.
    pub(super) pp: Option<PassPreempt>,
    /// Hosts with a free slot that take jobs at all.
    pub(super) fullness: FullHosts,
    pub(super) queue_order: Vec<usize>,
    /// Queue-based fairshare (SLOT_POOL): the slots each queue may use in this pass.
    pub(super) pool_targets: Vec<Option<u32>>,
    pub(super) walk: Walk,
    pub(super) any_dep: bool,
    pub(super) placed: bool,
    /// Dependencies, evaluated once before this pass places anything.
    pub(super) deps: BTreeMap<JobKey, Tri>,
    pub(super) accept_ms: i64,
    /// `now` in seconds.
    pub(super) t: i64,
    /// Per queue: the (queue, host) checks, and whether its windows are open.
    pub(super) statics: Vec<Option<(bool, Vec<StaticWhy>)>>,
    pub(super) shapes: FastMap<ShapeKey, Shape>,
    /// The select parts of (queue, the job's resource requirement), parsed once a pass.
    pub(super) sel_cache: FastMap<(usize, Str), Option<Arc<select::Selects>>>,
    /// The ways to place a compound or alternative requirement, by (it, slots).
    pub(super) multi_ways: FastMap<(Str, u32), Arc<Vec<compound::Way>>>,
    /// Hosts of more than one type: a job's default `type==local` can leave some out.
    pub(super) mixed_types: bool,
    /// Bumped by every placement: a shape evaluated at another generation is stale.
    pub(super) generation: u64,
    /// Pending reasons to set, applied in one walk at the end.
    pub(super) assign: Vec<(JobKey, PendReasons)>,
    /// After an early stop, or for a pass due for submissions only: the jobs submitted
    /// since the last pass that were not visited.
    pub(super) rest: Option<std::vec::IntoIter<PendRec>>,
    pub(super) visited: BTreeSet<JobKey>,
    #[cfg(test)]
    pub(super) visits: usize,
}

impl Pass {
    /// Job `rec` placed on `taken` slots of queue `qname`: its fairshare account holds
    /// them for the next choice, its queue's, its user's and its array's counts grow.
    pub(super) fn took(&mut self, rec: &PendRec, qname: &str, taken: u32) {
        if let (Some(account), Some(tree)) = (rec.account, self.walk.fair.as_mut()) {
            tree.placed(account, taken);
        }
        *self.q_used.entry(qname.to_owned()).or_default() += taken;
        *self
            .q_user
            .entry((qname.to_owned(), rec.sub.user.to_string()))
            .or_default() += taken;
        if rec.array_limit.is_some() {
            *self.array_started.entry(rec.rank.3.0).or_default() += 1;
        }
    }
}

impl Sched {
    /// The first phase of a pass: what it needs before it visits a pending job.
    pub(super) fn begin_pass(&mut self, now: Millis) -> Pass {
        self.dirty = false;
        let full = std::mem::replace(&mut self.full_due, false);
        let fresh = std::mem::take(&mut self.fresh);
        let fresh_only = std::mem::take(&mut self.fresh_only) && !full;
        self.resume_pass(now);
        // Queue priority (highest first), then queue name, then submission order.
        let mut by_name: Vec<usize> = (0..self.queues.len()).collect();
        by_name.sort_by(|a, b| self.queues[*a].name.cmp(&self.queues[*b].name));
        let mut name_rank = vec![0usize; self.queues.len()];
        for (r, qi) in by_name.into_iter().enumerate() {
            name_rank[qi] = r;
        }
        let counting = self.counting();
        let shared = SharedOf {
            host_shared: if self.cfg.shared.is_empty() {
                Vec::new()
            } else {
                self.host_shared.clone()
            },
            names: self.cfg.shared.iter().map(|r| r.name.clone()).collect(),
        };
        let held = self.count_started(now, counting, &shared);
        let Held {
            mut st,
            q_used,
            q_user,
            array_started,
            reserves,
        } = held;
        let resv = self.begin_reservations(now, &mut st);
        let pp = self.begin_preemption(now);
        // Hosts with a free slot that take jobs at all (a closed or unreachable one's
        // idle slots are no use). When none is left, no pending job can start: a pass
        // that need not refresh every pending job's reasons stops there (the jobs
        // submitted since the last pass still get theirs).
        let fullness = FullHosts::new(&self.hosts, &st, |i| {
            self.shut_why(&self.hosts[i]).is_some()
        });
        // The pending jobs are visited in order (each queue's pending order is kept by
        // the counters: queues by priority then name, jobs by submission order), a few
        // at a time, so that a pass that stops early reads no more of them.
        let mut queue_order: Vec<usize> = (0..self.queues.len()).collect();
        queue_order.sort_by_key(|&qi| (u32::MAX - self.queues[qi].priority, name_rank[qi]));
        // Queue-based fairshare (SLOT_POOL): a pool's queues by their use per share, and
        // the slots each may use in this pass.
        let pool_targets = self.pool_targets();
        self.pool_order(now, &mut queue_order);
        let any_dep = self.counts.pending_with_dep > 0;
        let deps = if any_dep {
            self.pass_dependencies(&queue_order)
        } else {
            BTreeMap::new()
        };
        let accept_ms = i64::from(self.cfg.job_accept_interval)
            * i64::from(self.cfg.mbd_sleep_time_secs)
            * 1000;
        let mut pass = Pass {
            now,
            full,
            fresh,
            name_rank,
            nh: self.hosts.len(),
            counting,
            shared,
            st,
            q_used,
            q_user,
            array_started,
            reserves,
            resv,
            pp,
            fullness,
            queue_order,
            pool_targets,
            walk: Walk::new(),
            any_dep,
            placed: false,
            deps,
            accept_ms,
            t: secs(now),
            statics: vec![None; self.queues.len()],
            shapes: fast_map(),
            sel_cache: fast_map(),
            multi_ways: fast_map(),
            mixed_types: self.host_types.mixed(),
            generation: 0,
            assign: Vec::new(),
            rest: None,
            visited: BTreeSet::new(),
            #[cfg(test)]
            visits: 0,
        };
        // Only submissions since the last pass, in plain queue order (no fairshare
        // tree, no slot pool, no slot reserved for a job with a known start): the new
        // jobs alone are visited, in the pass's order.
        if fresh_only
            && self.slot_resv.is_empty()
            && pass.pool_targets.iter().all(Option::is_none)
            && (0..self.queues.len())
                .all(|qi| self.queues[qi].user_shares.is_empty() && self.partition_of(qi).is_none())
        {
            let mut recs = self.fresh_recs(&pass.fresh, &pass.visited, &pass.name_rank);
            recs.sort_by_key(|r| r.rank);
            pass.rest = Some(recs.into_iter());
        }
        pass
    }

    /// What the configuration asks a pass to count.
    fn counting(&self) -> Counting {
        let limits = &self.cfg.limits;
        Counting {
            track_user: self.hosts.iter().any(|h| h.jl_u.is_some())
                || self.cfg.user_rows.values().any(Option::is_some)
                || !self.cfg.group_jl_p.is_empty(),
            track_qhost: self
                .queues
                .iter()
                .any(|q| q.hjob_limit.is_some() || q.pjob_limit.is_some()),
            with_limits: !limits.is_empty(),
            app_limits: limits
                .iter()
                .any(|l| !matches!(l.apps, crate::reslimits::Scope::Any)),
            limit_amounts: limits
                .iter()
                .any(|l| !l.amounts.is_empty() || !l.amount_pcts.is_empty()),
        }
    }

    /// The pending jobs' dependencies, evaluated once, before the pass places anything;
    /// the elements of an array share one value unless the condition names `[*]`.
    fn pass_dependencies(&self, queue_order: &[usize]) -> BTreeMap<JobKey, Tri> {
        let mut deps: BTreeMap<JobKey, Tri> = BTreeMap::new();
        let mut per_array: BTreeMap<u64, Tri> = BTreeMap::new();
        let with_dep = queue_order
            .iter()
            .filter_map(|&qi| self.counts.pending.get(&self.queues[qi].name))
            .flat_map(|p| p.iter().map(|(_, k)| *k))
            .filter(|k| {
                self.jobs
                    .get(k)
                    .is_some_and(|j| j.state == JobState::Pend && j.dep.is_some())
            });
        for key in with_dep {
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let Some(e) = &j.dep else {
                continue;
            };
            let shared = j.is_element() && !e.uses_own_index();
            let cached = if shared {
                per_array.get(&j.id).copied()
            } else {
                None
            };
            let Some(t) = cached.or_else(|| self.dependency(j)) else {
                continue;
            };
            if shared {
                per_array.insert(j.id, t);
            }
            deps.insert(key, t);
        }
        deps
    }

    /// What the started jobs hold; finished jobs are not visited. Without per-user,
    /// per-(queue, host) or limit counts, the slots every started job holds on its hosts
    /// and in its queue come from the FSM's counters, and only the jobs that hold more
    /// are visited ([`Sched::started_to_visit`]): a pass costs O(hosts), not O(running
    /// jobs).
    fn count_started(&self, now: Millis, c: Counting, shared: &SharedOf) -> Held {
        let nh = self.hosts.len();
        let index = &self.pass_index;
        let mut h = Held {
            st: PassState {
                used: vec![0; nh],
                rsv: vec![0; nh],
                excl: vec![false; nh],
                used_user: HashMap::new(),
                susp_user: HashMap::new(),
                susp: self.susp_counts(),
                q_host: HashMap::new(),
                reserved: Vec::new(),
                shared_reserved: vec![0.0; self.cfg.shared.len()],
                shared_value: self.shared_values(),
                limits: Default::default(),
                limits_open: self
                    .cfg
                    .limits
                    .iter()
                    .map(|l| self.window_open(l.slots_window.as_ref()))
                    .collect(),
            },
            q_used: BTreeMap::new(),
            q_user: BTreeMap::new(),
            array_started: BTreeMap::new(),
            reserves: fast_map(),
        };
        let visit_all = c.track_user || c.track_qhost || c.with_limits;
        // Exclusive started jobs per host (from the counters, less the preempted ones).
        let mut excl_jobs: Vec<u32> = Vec::new();
        if !visit_all {
            excl_jobs = vec![0; nh];
            for (name, t) in &self.counts.hosts {
                if let Some(&i) = index.get(name.as_str()) {
                    h.st.used[i] = t.used;
                    excl_jobs[i] = t.excl;
                }
            }
            for (q, t) in &self.counts.queues {
                let n = t.run + t.ssusp + t.ususp;
                if n > 0 {
                    h.q_used.insert(q.clone(), n);
                }
            }
        }
        for key in self.started_to_visit(visit_all) {
            if let Some(j) = self.jobs.get(key) {
                self.count_one_started(now, c, shared, j, &mut h, &mut excl_jobs);
            }
        }
        for (i, n) in excl_jobs.into_iter().enumerate() {
            h.st.excl[i] = n > 0;
        }
        #[cfg(test)]
        if !visit_all {
            self.check_counted_slots(&h.st.used, &h.st.excl, &h.q_used);
        }
        h
    }

    /// What one started job holds (see [`Sched::count_started`]).
    fn count_one_started(
        &self,
        now: Millis,
        c: Counting,
        shared: &SharedOf,
        j: &crate::Job,
        h: &mut Held,
        excl_jobs: &mut [u32],
    ) {
        let index = &self.pass_index;
        let visit_all = c.track_user || c.track_qhost || c.with_limits;
        let shared_of = |i: usize, name: &str| shared.of(i, name);
        let st = &mut h.st;
        // Preemption (seed 002): a preempted job's host slots are the preempting job's;
        // a suspended job's per-user slots are counted apart (PREEMPT_FOR).
        let preempted = matches!(j.state, JobState::Ssusp | JobState::Ususp)
            && j.reasons & susp::MBD_PREEMPT != 0;
        let suspended = st.susp.on && matches!(j.state, JobState::Ssusp | JobState::Ususp);
        let exclusive = j.sub.options & sub::EXCLUSIVE != 0;
        for (k, host) in j.hosts.iter().enumerate() {
            let Some(&i) = index.get(host.as_str()) else {
                continue;
            };
            if visit_all {
                st.take(i, &j.queue, &j.sub.user, c.track_user, c.track_qhost);
            }
            if suspended && c.track_user {
                st.suspend_user(i, &j.sub.user);
            }
            if preempted {
                st.used[i] -= 1;
                if !visit_all && exclusive && !j.hosts[..k].contains(host) {
                    excl_jobs[i] = excl_jobs[i].saturating_sub(1);
                }
            } else if exclusive && visit_all {
                st.excl[i] = true;
            }
        }
        if visit_all {
            *h.q_used.entry(j.queue.to_string()).or_default() += j.slots();
        }
        *h.q_user
            .entry((j.queue.to_string(), j.sub.user.to_string()))
            .or_default() += j.slots();
        if j.array_limit.is_some() {
            *h.array_started.entry(j.id).or_default() += 1;
        }
        let mut job_amounts: Vec<(String, f64)> = Vec::new();
        // A compound requirement: each term reserves on its own hosts (its used
        // requirement names each term's slots, in the order of its hosts).
        let parts = j
            .used_req
            .as_deref()
            .and_then(|u| compound::used_parts(u, j.hosts.len()));
        // A simple alternative: the one it uses.
        let j_rr = match &j.used_req {
            Some(u) if parts.is_none() => Str::from(&**u),
            _ => self.job_res_req(&j.sub),
        };
        let rr_queue = self.queue(&j.queue).is_some_and(|q| !q.res_req.is_empty());
        if let Some(parts) = parts {
            let q = self.queue(&j.queue);
            for (simple, first, n) in parts {
                let Some(r) = q.and_then(|q| self.reservations(q, &simple).into_iter().next())
                else {
                    continue;
                };
                let hosts = &j.hosts[first..first + n];
                let share = r.share(now - j.start_time.saturating_mul(1000));
                if c.limit_amounts {
                    let more = reserved_total(&r, share, hosts, self.cfg.methods());
                    add_amounts(&mut job_amounts, more);
                }
                let slots = hosts.iter().filter_map(|h| index.get(h.as_str()).copied());
                st.reserve(slots, &r, share, self.cfg.methods(), &shared_of);
            }
        } else if !j_rr.is_empty() || rr_queue {
            let alts = h
                .reserves
                .entry((j.queue.clone(), j_rr.clone()))
                .or_insert_with(|| {
                    self.queue(&j.queue)
                        .map(|q| self.reservations(q, &j_rr))
                        .unwrap_or_default()
                });
            // The alternative it was dispatched with (logged in its JOB_START).
            if let Some(r) = alts.get(j.rusage_alt as usize).or(alts.first()) {
                let share = r.share(now - j.start_time.saturating_mul(1000));
                if c.limit_amounts {
                    job_amounts = reserved_total(r, share, &j.hosts, self.cfg.methods());
                }
                let slots = j
                    .hosts
                    .iter()
                    .filter_map(|h| index.get(h.as_str()).copied());
                st.reserve(slots, r, share, self.cfg.methods(), &shared_of);
            }
        }
        if c.with_limits {
            let hosts: Vec<&str> = j.hosts.iter().map(String::as_str).collect();
            let consumer = Consumer {
                user: &j.sub.user,
                queue: &j.queue,
                project: &j.sub.project,
                app: j.sub.app(),
            };
            if suspended {
                let counts = |l: &crate::reslimits::ResLimit| self.limit_counts_suspended(l);
                st.limits
                    .add_where(&self.cfg.limits, &consumer, &hosts, &job_amounts, counts);
            } else {
                st.limits
                    .add(&self.cfg.limits, &consumer, &hosts, &job_amounts);
            }
        }
    }

    /// The last phase of a pass: what it leaves for the next pass and for the queries.
    pub(super) fn finish_pass(&mut self, mut p: Pass) {
        let now = p.now;
        // Preempted jobs of the lowest priorities, after every pending job.
        if let Some(pp) = p.pp.as_mut() {
            self.resume_preempted(now, pp, 0, &mut p.st, p.counting.track_user);
        }
        // The pass's own JOB_STARTs need no second pass: it counted what they hold as it
        // placed them. Only a dependency (`started()`, ...) evaluated before them may
        // change, so a pass follows when jobs started and some pending job has one.
        self.dirty = p.placed && p.any_dep;
        // The reservations, for the next pass and for bhosts/bqueues/bjobs.
        for (h, n) in self.hosts.iter_mut().zip(p.resv.per_host(p.nh)) {
            h.rsv_slots = n;
        }
        self.slot_resv = p.resv.resv;
        if p.full {
            self.last_full_pass = now;
            self.cut_short = false;
        }
        // What is reserved on each host now, for bhosts -l (cleared once nothing is).
        if !p.st.reserved.is_empty() || self.hosts.iter().any(|h| !h.reserved.is_empty()) {
            for (i, h) in self.hosts.iter_mut().enumerate() {
                h.reserved =
                    p.st.reserved
                        .get(i)
                        .map(|m| m.iter().map(|(k, (v, _))| (k.clone(), *v)).collect())
                        .unwrap_or_default();
            }
        }
        // What is reserved of each shared resource instance, for bhosts -s; what the
        // limits count, for blimits.
        self.shared_reserved = p.st.shared_reserved;
        self.limit_usage = p.st.limits.counts;
        self.limit_amounts = p.st.limits.amounts;
        self.set_reasons(p.assign);
        // The inactive queues walked to their end have all their reasons now; a queue
        // active again is walked again (what touched an active queue does not matter).
        for name in p.walk.settled {
            self.counts
                .pending_touched
                .insert(name.clone(), crate::counts::Touched::default());
            self.inact_settled.insert(name);
        }
        for q in &self.queues {
            if q.active {
                self.inact_settled.remove(&q.name);
                self.counts.pending_touched.remove(&q.name);
            }
        }
        #[cfg(test)]
        {
            self.last_visits = p.visits;
        }
        // MultiCluster Phase II: what no local host could take goes to another cluster.
        self.forward_pass(now);
    }
}
