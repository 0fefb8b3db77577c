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
pub mod pool;
pub(crate) mod preempt;
mod reserve;
mod resume;
pub(crate) mod select;
pub(crate) mod slot_resv;
mod start;
mod started;
pub(crate) use started::{HostTypes, pass_index};
pub(crate) mod walk;

use crate::depend::Tri;
use crate::reslimits::Consumer;
use crate::{JobKey, Millis, PEND_ARRAY_LIMIT, Sched, Str, secs};
use basalt_core::job::{JobState, pend, sub, susp};
use fit::{JobFit, PassState, Shape, ShapeKey, StaticWhy};
pub(crate) use reserve::Methods;
use reserve::{add_amounts, pending_amounts, reserved_total};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use walk::{FullHosts, Walk};
pub(crate) use walk::{PendReasons, PendRec};

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
        let nh = self.hosts.len();
        let index = &self.pass_index;
        // Per (host, user) slots: for lsb.hosts JL/U and lsb.users JL/P (users' and
        // groups' rows); per (queue, host): for HJOB_LIMIT and PJOB_LIMIT.
        let track_user = self.hosts.iter().any(|h| h.jl_u.is_some())
            || self.cfg.user_rows.values().any(Option::is_some)
            || !self.cfg.group_jl_p.is_empty();
        let track_qhost = self
            .queues
            .iter()
            .any(|q| q.hjob_limit.is_some() || q.pjob_limit.is_some());
        // Slots in use, by host index, kept up to date as jobs are placed in this pass.
        let mut st = PassState {
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
        };
        let with_limits = !self.cfg.limits.is_empty();
        // A limit counts by application profile: jobs of different profiles differ.
        let app_limits = self
            .cfg
            .limits
            .iter()
            .any(|l| !matches!(l.apps, crate::reslimits::Scope::Any));
        // Some limit counts reserved amounts (MEM, SWP, TMP, RESOURCE; in MB or a share of
        // each host's size).
        let limit_amounts = self
            .cfg
            .limits
            .iter()
            .any(|l| !l.amounts.is_empty() || !l.amount_pcts.is_empty());
        // Which shared resource instance a host's amount of `name` comes from (a copy:
        // the pass changes the core as it places jobs).
        let host_shared: Vec<Vec<usize>> = if self.cfg.shared.is_empty() {
            Vec::new()
        } else {
            self.host_shared.clone()
        };
        let shared_names: Vec<String> = self.cfg.shared.iter().map(|r| r.name.clone()).collect();
        let shared_of = |i: usize, name: &str| -> Option<usize> {
            host_shared
                .get(i)?
                .iter()
                .copied()
                .find(|&k| shared_names[k] == name)
        };
        // What started jobs reserve (`rusage[]`), by (queue, resource requirement); the
        // queues with a RES_REQ (a job of theirs may reserve without its own `-R`).
        let mut reserves: FastMap<(Str, Str), Vec<select::Reserve>> = fast_map();
        let rr_queues: Vec<String> = self
            .queues
            .iter()
            .filter(|q| !q.res_req.is_empty())
            .map(|q| q.name.clone())
            .collect();
        let mut q_used: BTreeMap<String, u32> = BTreeMap::new();
        let mut q_user: BTreeMap<(String, String), u32> = BTreeMap::new();
        // Started elements of arrays with a %k limit.
        let mut array_started: BTreeMap<u64, u32> = BTreeMap::new();
        // What the started jobs hold; finished jobs are not visited. Without per-user,
        // per-(queue, host) or limit counts, the slots every started job holds on its
        // hosts and in its queue come from the FSM's counters, and only the jobs that
        // hold more are visited ([`started_to_visit`]): a pass costs O(hosts), not
        // O(running jobs).
        let visit_all = track_user || track_qhost || with_limits;
        // Exclusive started jobs per host (from the counters, less the preempted ones).
        let mut excl_jobs: Vec<u32> = Vec::new();
        if !visit_all {
            excl_jobs = vec![0; nh];
            for (name, t) in &self.counts.hosts {
                if let Some(&i) = index.get(name.as_str()) {
                    st.used[i] = t.used;
                    excl_jobs[i] = t.excl;
                }
            }
            for (q, t) in &self.counts.queues {
                let n = t.run + t.ssusp + t.ususp;
                if n > 0 {
                    q_used.insert(q.clone(), n);
                }
            }
        }
        for key in self.started_to_visit(visit_all) {
            let Some(j) = self.jobs.get(key) else {
                continue;
            };
            // Preemption (seed 002): a preempted job's host slots are the preempting
            // job's; a suspended job's per-user slots are counted apart (PREEMPT_FOR).
            let preempted = matches!(j.state, JobState::Ssusp | JobState::Ususp)
                && j.reasons & susp::MBD_PREEMPT != 0;
            let suspended = st.susp.on && matches!(j.state, JobState::Ssusp | JobState::Ususp);
            let exclusive = j.sub.options & sub::EXCLUSIVE != 0;
            for (k, h) in j.hosts.iter().enumerate() {
                let Some(&i) = index.get(h.as_str()) else {
                    continue;
                };
                if visit_all {
                    st.take(i, &j.queue, &j.sub.user, track_user, track_qhost);
                }
                if suspended && track_user {
                    st.suspend_user(i, &j.sub.user);
                }
                if preempted {
                    st.used[i] -= 1;
                    if !visit_all && exclusive && !j.hosts[..k].contains(h) {
                        excl_jobs[i] = excl_jobs[i].saturating_sub(1);
                    }
                } else if exclusive && visit_all {
                    st.excl[i] = true;
                }
            }
            if visit_all {
                *q_used.entry(j.queue.to_string()).or_default() += j.slots();
            }
            *q_user
                .entry((j.queue.to_string(), j.sub.user.to_string()))
                .or_default() += j.slots();
            if j.array_limit.is_some() {
                *array_started.entry(j.id).or_default() += 1;
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
            if let Some(parts) = parts {
                let q = self.queue(&j.queue);
                for (simple, first, n) in parts {
                    let Some(r) = q.and_then(|q| self.reservations(q, &simple).into_iter().next())
                    else {
                        continue;
                    };
                    let hosts = &j.hosts[first..first + n];
                    let share = r.share(now - j.start_time.saturating_mul(1000));
                    if limit_amounts {
                        let more = reserved_total(&r, share, hosts, self.cfg.methods());
                        add_amounts(&mut job_amounts, more);
                    }
                    let slots = hosts.iter().filter_map(|h| index.get(h.as_str()).copied());
                    st.reserve(slots, &r, share, self.cfg.methods(), &shared_of);
                }
            } else if !j_rr.is_empty() || rr_queues.iter().any(|q| **q == *j.queue) {
                let alts = reserves
                    .entry((j.queue.clone(), j_rr.clone()))
                    .or_insert_with(|| {
                        self.queue(&j.queue)
                            .map(|q| self.reservations(q, &j_rr))
                            .unwrap_or_default()
                    });
                // The alternative it was dispatched with (logged in its JOB_START).
                if let Some(r) = alts.get(j.rusage_alt as usize).or(alts.first()) {
                    let share = r.share(now - j.start_time.saturating_mul(1000));
                    if limit_amounts {
                        job_amounts = reserved_total(r, share, &j.hosts, self.cfg.methods());
                    }
                    let slots = j
                        .hosts
                        .iter()
                        .filter_map(|h| index.get(h.as_str()).copied());
                    st.reserve(slots, r, share, self.cfg.methods(), &shared_of);
                }
            }
            if with_limits {
                let hosts: Vec<&str> = j.hosts.iter().map(String::as_str).collect();
                let c = Consumer {
                    user: &j.sub.user,
                    queue: &j.queue,
                    project: &j.sub.project,
                    app: j.sub.app(),
                };
                if suspended {
                    let counts = |l: &crate::reslimits::ResLimit| self.limit_counts_suspended(l);
                    st.limits
                        .add_where(&self.cfg.limits, &c, &hosts, &job_amounts, counts);
                } else {
                    st.limits.add(&self.cfg.limits, &c, &hosts, &job_amounts);
                }
            }
        }
        for (i, n) in excl_jobs.into_iter().enumerate() {
            st.excl[i] = n > 0;
        }
        #[cfg(test)]
        if !visit_all {
            self.check_counted_slots(&st.used, &st.excl, &q_used);
        }
        // Slot reservations (SLOT_RESERVE) of pending jobs, counted as used.
        let mut resv = self.begin_reservations(now, &mut st);
        // Preemption: who may preempt whom, the victims, the preempted jobs waiting.
        let mut pp = self.begin_preemption(now);
        // Hosts with a free slot that take jobs at all (a closed or unreachable one's
        // idle slots are no use). When none is left, no pending job can start: a pass
        // that need not refresh every pending job's reasons stops there (the jobs
        // submitted since the last pass still get theirs).
        let mut fullness = FullHosts::new(&self.hosts, &st, |i| {
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
        let mut walk = Walk::new();
        let any_dep = self.counts.pending_with_dep > 0;
        let mut placed = false;
        // Dependencies are evaluated once, before this pass places anything; the elements
        // of an array share one value unless the condition names `[*]`.
        let mut deps: BTreeMap<JobKey, Tri> = BTreeMap::new();
        let mut per_array: BTreeMap<u64, Tri> = BTreeMap::new();
        if any_dep {
            let with_dep: Vec<JobKey> = queue_order
                .iter()
                .filter_map(|&qi| self.counts.pending.get(&self.queues[qi].name))
                .flat_map(|p| p.iter().map(|(_, k)| *k))
                .filter(|k| {
                    self.jobs
                        .get(k)
                        .is_some_and(|j| j.state == JobState::Pend && j.dep.is_some())
                })
                .collect();
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
        }
        let accept_ms = i64::from(self.cfg.job_accept_interval)
            * i64::from(self.cfg.mbd_sleep_time_secs)
            * 1000;
        let t = secs(now);
        // Per queue: the (queue, host) checks, and whether its windows are open.
        let mut statics: Vec<Option<(bool, Vec<StaticWhy>)>> = vec![None; self.queues.len()];
        let mut shapes: FastMap<ShapeKey, Shape> = fast_map();
        // The select parts of (queue, the job's resource requirement), parsed once a pass.
        let mut sel_cache: FastMap<(usize, Str), Option<Arc<select::Selects>>> = fast_map();
        // The ways to place a compound or alternative requirement, by (it, slots).
        let mut multi_ways: FastMap<(Str, u32), Arc<Vec<compound::Way>>> = fast_map();
        // Hosts of more than one type: a job's default `type==local` (the submission
        // host's type) can leave some out.
        let mixed_types = self.host_types.mixed();
        // Bumped by every placement: a shape evaluated at another generation is stale.
        let mut generation: u64 = 0;
        // Pending reasons to set, applied in one walk at the end.
        let mut assign: Vec<(JobKey, PendReasons)> = Vec::new();
        // After an early stop: the jobs submitted since the last pass that were not
        // visited (none of them can start: no host has a free slot).
        let mut rest: Option<std::vec::IntoIter<PendRec>> = None;
        let mut visited: BTreeSet<JobKey> = BTreeSet::new();
        #[cfg(test)]
        let mut visits = 0usize;
        // Only submissions since the last pass, in plain queue order (no fairshare
        // tree, no slot pool, no slot reserved for a job with a known start): the new
        // jobs alone are visited, in the pass's order.
        if fresh_only
            && self.slot_resv.is_empty()
            && pool_targets.iter().all(Option::is_none)
            && (0..self.queues.len())
                .all(|qi| self.queues[qi].user_shares.is_empty() && self.partition_of(qi).is_none())
        {
            let mut recs = self.fresh_recs(&fresh, &visited, &name_rank);
            recs.sort_by_key(|r| r.rank);
            rest = Some(recs.into_iter());
        }
        loop {
            let rec = match rest.as_mut() {
                Some(r) => match r.next() {
                    Some(rec) => rec,
                    None => break,
                },
                // (Slots reserved for a job with a known start can still take a
                // backfill job.) Nor when as many start orders are under way as allowed.
                None if !full
                    && (self.dispatch_full()
                        || fullness.free == 0
                            && !resv.may_take_backfill()
                            && !pp.as_ref().is_some_and(|p| {
                                p.may_preempt(queue_order.get(walk.queue..).unwrap_or(&[]))
                            })) =>
                {
                    self.cut_short = true;
                    self.dispatch_capped |= self.dispatch_full();
                    let recs = self.fresh_recs(&fresh, &visited, &name_rank);
                    rest = Some(recs.into_iter());
                    continue;
                }
                None => match self.next_pending(now, &mut walk, &queue_order, &name_rank) {
                    Some(rec) => rec,
                    None => break,
                },
            };
            let (key, qi, need) = (rec.rank.3, rec.qi, rec.need);
            #[cfg(test)]
            {
                visits += 1;
            }
            if !full {
                visited.insert(key);
            }
            // Preempted jobs of queues of this priority or higher resume first when
            // their slots are free.
            if let Some(p) = pp.as_mut().filter(|p| !p.waiting.is_empty()) {
                let prio = self.queues[qi].priority;
                let touched = self.resume_preempted(now, p, prio, &mut st, track_user);
                if !touched.is_empty() {
                    generation += 1;
                    fullness.refresh(&self.hosts, &st, &touched);
                }
            }
            // Its own reserved slots are free for it (and, if it does not reserve them
            // again below, for the jobs after it).
            let held = resv.take_own(key, &mut st);
            if let Some(r) = &held {
                generation += 1;
                fullness.refresh(&self.hosts, &st, &r.slots);
            }
            let sub = &rec.sub;
            // Its -R, else its application profile's RES_REQ.
            let rr = self.job_res_req(sub);
            // Compound or alternative (`2*{...} + {...}`, `{...} || {...}`).
            let multi = basalt_config::compound::is_multi(&rr);
            if statics[qi].is_none() {
                let q = &self.queues[qi];
                let per_host = self.hosts.iter().map(|h| self.static_why(q, h)).collect();
                statics[qi] = Some((self.queue_windows_open(q), per_host));
            }
            let Some((windows_open, per_host)) = &statics[qi] else {
                continue;
            };
            let q = &self.queues[qi];
            // The alternatives of its rusage[] the limits that are not per host let it
            // have, and their reason for the others.
            let mut within = (u64::MAX, 0);
            let early = if rec.forwarded {
                Some(pend::MC_FORWARDED)
            } else if !q.active {
                Some(pend::QUEUE_INACT)
            } else if !windows_open {
                Some(pend::QUEUE_WINDOW)
            } else if sub.begin_time > t {
                Some(pend::START_TIME)
            } else if let Some(r) = rec.requeues.as_ref().filter(|r| r.not_before > now) {
                Some(r.wait_reason)
            } else if let Some(d) = deps.get(&key).filter(|d| **d != Tri::Yes) {
                Some(if *d == Tri::Never {
                    pend::DEPEND_INVALID
                } else {
                    pend::DEPEND
                })
            } else if rec
                .array_limit
                .is_some_and(|k| array_started.get(&key.0).copied().unwrap_or(0) >= k)
            {
                Some(PEND_ARRAY_LIMIT)
            } else if q
                .qjob_limit
                .is_some_and(|l| q_used.get(&q.name).copied().unwrap_or(0) + need > l)
            {
                Some(pend::QUEUE_JOB_LIMIT)
            } else if pool_targets[qi]
                .is_some_and(|t| q_used.get(&q.name).copied().unwrap_or(0) + need > t)
            {
                Some(pend::SLOT_POOL)
            } else if q.ujob_limit.is_some_and(|l| {
                q_user
                    .get(&(q.name.clone(), sub.user.to_string()))
                    .copied()
                    .unwrap_or(0)
                    + need
                    > l
            }) {
                Some(pend::QUEUE_USER_LIMIT)
            } else if self.dispatch_full() {
                Some(pend::DELAY_SCHED)
            } else if with_limits {
                // Within the limits with one of its alternatives at least.
                let alts: &[select::Reserve] = if limit_amounts && !multi {
                    reserves
                        .entry((Str::from(q.name.as_str()), rr.clone()))
                        .or_insert_with(|| self.reservations(q, &rr))
                } else {
                    &[]
                };
                within = alts::within(alts, |r| {
                    st.limits.job_reason(
                        &self.cfg.limits,
                        &st.limits_open,
                        &Consumer {
                            user: &sub.user,
                            queue: &q.name,
                            project: &sub.project,
                            app: sub.app(),
                        },
                        need,
                        &pending_amounts(r, need, self.cfg.methods()),
                    )
                });
                (within.0 == 0).then_some(within.1)
            } else {
                None
            };
            if let Some(code) = early {
                if code == pend::DELAY_SCHED {
                    self.dispatch_capped = true;
                }
                assign.push((key, Arc::new(BTreeMap::from([(code, Vec::new())]))));
                continue;
            }
            // A compound or alternative requirement: placed part by part, all or nothing
            // ([`compound`]).
            if multi {
                let ways = multi_ways
                    .entry((rr.clone(), need))
                    .or_insert_with(|| Arc::new(compound::ways(&rr, need)))
                    .clone();
                let mj = compound::MultiJob {
                    qi,
                    sub,
                    exclusive: sub.options & sub::EXCLUSIVE != 0 && q.exclusive,
                    excluded: rec.requeues.as_ref().map_or(&[], |r| &r.excluded),
                    within,
                    mixed_types,
                };
                let track = (track_user, track_qhost);
                match self.place_multi(now, accept_ms, &mj, &ways, &st, per_host, track, &shared_of)
                {
                    compound::Placed::No(why) => assign.push((key, Arc::new(why))),
                    compound::Placed::Yes {
                        alloc,
                        used,
                        st: with_it,
                        reserves,
                    } => {
                        st = *with_it;
                        let qname = q.name.clone();
                        let taken = alloc.len() as u32;
                        if let (Some(account), Some(tree)) = (rec.account, walk.fair.as_mut()) {
                            tree.placed(account, taken);
                        }
                        *q_used.entry(qname.clone()).or_default() += taken;
                        *q_user
                            .entry((qname.clone(), sub.user.to_string()))
                            .or_default() += taken;
                        if rec.array_limit.is_some() {
                            *array_started.entry(key.0).or_default() += 1;
                        }
                        let names: Vec<String> =
                            alloc.iter().map(|&i| self.hosts[i].name.clone()).collect();
                        if with_limits {
                            let mut amounts: Vec<(String, f64)> = Vec::new();
                            for (part, r) in reserves.iter().filter(|_| limit_amounts) {
                                let on: Vec<String> =
                                    part.iter().map(|&i| self.hosts[i].name.clone()).collect();
                                let more = reserved_total(r, 1.0, &on, self.cfg.methods());
                                add_amounts(&mut amounts, more);
                            }
                            let hosts: Vec<&str> = names.iter().map(String::as_str).collect();
                            let c = Consumer {
                                user: &sub.user,
                                queue: &qname,
                                project: &sub.project,
                                app: sub.app(),
                            };
                            st.limits.add(&self.cfg.limits, &c, &hosts, &amounts);
                        }
                        self.start_job_at(now, key, names, &alloc, used);
                        placed = true;
                        generation += 1;
                        let touched: Vec<usize> = (0..nh).collect();
                        fullness.refresh(&self.hosts, &st, &touched);
                    }
                }
                continue;
            }
            // BACKFILL: a job with a run limit may use the reserved slots of jobs that
            // cannot start before it ends.
            let (backfill, too_short) = if held.is_none() {
                self.open_backfill(q, key, now, &mut resv, &mut st)
            } else {
                (None, Vec::new())
            };
            if let Some(bf) = backfill.as_ref().filter(|bf| !bf.is_empty()) {
                generation += 1;
                fullness.refresh(&self.hosts, &st, &bf.hosts());
            }
            // Seed 001: exclusive only with -x in an exclusive queue.
            let exclusive = sub.options & sub::EXCLUSIVE != 0 && q.exclusive;
            // `-n min,max`: as many slots as are free up to max, within the queue's
            // QJOB_LIMIT and UJOB_LIMIT (the checks above leave room for at least min).
            let mut most = sub.max_processors.max(need);
            if let Some(l) = q.qjob_limit {
                most = most.min(l.saturating_sub(q_used.get(&q.name).copied().unwrap_or(0)));
            }
            if let Some(l) = q.ujob_limit {
                let u = q_user
                    .get(&(q.name.clone(), sub.user.to_string()))
                    .copied()
                    .unwrap_or(0);
                most = most.min(l.saturating_sub(u));
            }
            let most = most.max(need);
            let sel = if rr.is_empty() && q.res_req.is_empty() {
                None
            } else {
                sel_cache
                    .entry((qi, rr.clone()))
                    .or_insert_with(|| self.selects(q, &rr).map(Arc::new))
                    .clone()
            };
            // The submission host, when its type or model decides.
            let (local_host, default_local) =
                self.local_host_of(sel.as_deref(), &sub.from_host, mixed_types);
            // span[]: the job's, else its queue's RES_REQ's (read once per requirement).
            let span = sel
                .as_ref()
                .and_then(|s| s.span.clone())
                .filter(|s| *s != allocate::Span::Free);
            // Each host's tile of the job's slots.
            let tile_of = |i: usize| span.as_ref().and_then(|s| self.tile_on(s, i));
            let tile = allocate::Tile::of(span.as_ref(), &tile_of);
            let excluded: &[String] = rec.requeues.as_ref().map_or(&[], |r| &r.excluded);
            let shape_key = ShapeKey {
                queue: qi,
                user: (track_user || with_limits).then(|| sub.user.to_string()),
                asked: sub.asked_hosts.clone(),
                exclusive,
                need,
                most,
                span: span.clone(),
                res_req: sel.as_ref().map(|_| rr.clone()),
                excluded: excluded.to_vec(),
                project: with_limits.then(|| sub.project.clone()),
                app: app_limits.then(|| sub.app().to_owned()),
                within,
                local_host,
            };
            let job = JobFit {
                queue: q,
                sub,
                exclusive,
                most,
                sel: sel.as_deref(),
                excluded,
                asked: asked::Asked::of(&sub.asked_hosts),
                within,
                local: self.local_values(local_host),
                default_type: self.local_type(local_host, default_local),
            };
            let shape = shapes.entry(shape_key.clone()).or_insert_with(|| Shape {
                generation: u64::MAX,
                ..Shape::default()
            });
            if shape.generation != generation {
                shape.generation = generation;
                self.fill_shape(now, accept_ms, &job, &st, per_host, shape);
            }
            // same[]: the job's and its queue's resources all its hosts share (read once
            // per requirement, with its select parts).
            let same: &[String] = sel.as_ref().map_or(&[], |s| &s.same);
            let same_values = |i: usize| allocate::values_for_same(&self.hosts[i], same);
            let same_key: Option<&dyn Fn(usize) -> Vec<String>> =
                (!same.is_empty()).then_some(&same_values);
            let alts: &[select::Reserve] = sel.as_ref().map_or(&[], |s| &s.reserve);
            let mut placement = alts::place(shape, alts.len(), (need, most, tile), same_key);
            // Preemption: lower-priority running jobs give it their slots.
            let mut plan = None;
            if placement.is_none()
                && let Some(p) = pp.as_mut()
            {
                let counts = st.susp;
                plan = self.try_preempt(
                    now,
                    accept_ms,
                    (key, qi),
                    p,
                    &job,
                    shape,
                    &mut st,
                    per_host,
                    alts.len(),
                    (need, most, tile),
                    same_key,
                    counts,
                );
            }
            let mut victim_hosts = Vec::new();
            if let Some(preempt::Plan::Start {
                alloc, alt, hosts, ..
            }) = &plan
            {
                placement = Some((alloc.clone(), *alt));
                victim_hosts = hosts.clone();
            }
            match placement {
                Some((alloc, alt)) => {
                    let chosen = alts.get(alt);
                    let qname = q.name.clone();
                    for &i in &alloc {
                        st.take(i, &qname, &sub.user, track_user, track_qhost);
                        if exclusive {
                            st.excl[i] = true;
                        }
                    }
                    // Backfill: the reserved slots it did not take are held again (their
                    // hosts are refreshed with the ones it used, below).
                    let mut bf_hosts = Vec::new();
                    if let Some(bf) = backfill {
                        bf_hosts = bf.hosts();
                        let max = |i: usize| self.hosts[i].max_slots();
                        resv.close_backfill(bf, Some(&alloc), max, &mut st);
                    }
                    let taken = alloc.len() as u32;
                    // Fairshare: its account holds these slots for the next choice.
                    if let (Some(account), Some(tree)) = (rec.account, walk.fair.as_mut()) {
                        tree.placed(account, taken);
                    }
                    *q_used.entry(qname.clone()).or_default() += taken;
                    *q_user
                        .entry((qname.clone(), sub.user.to_string()))
                        .or_default() += taken;
                    if rec.array_limit.is_some() {
                        *array_started.entry(key.0).or_default() += 1;
                    }
                    if let Some(r) = chosen {
                        st.reserve(
                            alloc.iter().copied(),
                            r,
                            1.0,
                            self.cfg.methods(),
                            &shared_of,
                        );
                    }
                    if with_limits {
                        let hosts: Vec<&str> =
                            alloc.iter().map(|&i| self.hosts[i].name.as_str()).collect();
                        let amounts = match chosen {
                            Some(r) if limit_amounts => {
                                let names: Vec<String> =
                                    hosts.iter().map(|h| (*h).to_owned()).collect();
                                reserved_total(r, 1.0, &names, self.cfg.methods())
                            }
                            _ => Vec::new(),
                        };
                        let c = Consumer {
                            user: &sub.user,
                            queue: &qname,
                            project: &sub.project,
                            app: sub.app(),
                        };
                        st.limits.add(&self.cfg.limits, &c, &hosts, &amounts);
                    }
                    let names = alloc.iter().map(|&i| self.hosts[i].name.clone()).collect();
                    let effective = alts::effective_text(alts, alt);
                    // The victims' suspension is logged before its start.
                    if let Some(p) = &plan {
                        self.preempt_victims(now, key, p);
                    }
                    self.start_job_at(now, key, names, &alloc, effective);
                    placed = true;
                    generation += 1;
                    // Only the hosts just used changed: bring this shape up to date.
                    let mut touched = alloc;
                    touched.extend(bf_hosts);
                    touched.extend(victim_hosts);
                    // A shared resource it reserves changed on every host sharing it.
                    if let Some(r) = chosen {
                        let mut more = Vec::new();
                        for &i in &touched {
                            for (name, _, _) in &r.amounts {
                                if let Some(k) = shared_of(i, name) {
                                    more.extend((0..nh).filter(|&j| host_shared[j].contains(&k)));
                                }
                            }
                        }
                        touched.extend(more);
                    }
                    // A limit shared by a list of hosts changed on each of them.
                    if self
                        .cfg
                        .limits
                        .iter()
                        .any(|l| matches!(l.hosts, crate::reslimits::Scope::Together(_)))
                    {
                        touched = (0..nh).collect();
                    }
                    touched.sort_unstable();
                    touched.dedup();
                    fullness.refresh(&self.hosts, &st, &touched);
                    let job = JobFit {
                        queue: &self.queues[qi],
                        sub,
                        exclusive,
                        most,
                        sel: sel.as_deref(),
                        excluded,
                        asked: asked::Asked::of(&sub.asked_hosts),
                        within,
                        local: self.local_values(local_host),
                        default_type: self.local_type(local_host, default_local),
                    };
                    let Some(shape) = shapes.get_mut(&shape_key) else {
                        continue;
                    };
                    self.refit(now, accept_ms, &job, &st, per_host, shape, &touched);
                    shape.generation = generation;
                    shape.reasons = None;
                }
                None => {
                    if let Some(bf) = backfill {
                        let hosts = bf.hosts();
                        let max = |i: usize| self.hosts[i].max_slots();
                        resv.close_backfill(bf, None, max, &mut st);
                        generation += 1;
                        fullness.refresh(&self.hosts, &st, &hosts);
                    }
                    // SLOT_RESERVE: a parallel job reserves the free slots it could use.
                    let since = held.as_ref().map(|r| r.since);
                    let job = (key, q, need, tile, since);
                    if let Some(usable) = self.reserve_slots(job, shape, now, &mut resv, &mut st) {
                        generation += 1;
                        fullness.refresh(&self.hosts, &st, &usable);
                    }
                    let reasons = match &shape.reasons {
                        Some(r) => r.clone(),
                        None => {
                            let r = Arc::new(self.shape_reasons(shape, span.is_some()));
                            shape.reasons = Some(r.clone());
                            r
                        }
                    };
                    // A backfill job whose run limit is longer than the windows of the
                    // reserved slots.
                    let reasons = if too_short.is_empty() {
                        reasons
                    } else {
                        let mut r = (*reasons).clone();
                        r.entry(pend::LESS_DURATION)
                            .or_default()
                            .extend(too_short.iter().map(|&i| self.hosts[i].name.clone()));
                        Arc::new(r)
                    };
                    assign.push((key, reasons));
                }
            }
            // Victims to be killed for it (TERMINATE_WHEN = PREEMPT).
            if let Some(p @ preempt::Plan::Kill(_)) = &plan {
                self.preempt_victims(now, key, p);
            }
        }
        // Preempted jobs of the lowest priorities, after every pending job.
        if let Some(p) = pp.as_mut() {
            self.resume_preempted(now, p, 0, &mut st, track_user);
        }
        // The pass's own JOB_STARTs need no second pass: it counted what they hold as it
        // placed them. Only a dependency (`started()`, ...) evaluated before them may
        // change, so a pass follows when jobs started and some pending job has one.
        self.dirty = placed && any_dep;
        // The reservations, for the next pass and for bhosts/bqueues/bjobs.
        for (h, n) in self.hosts.iter_mut().zip(resv.per_host(nh)) {
            h.rsv_slots = n;
        }
        self.slot_resv = resv.resv;
        if full {
            self.last_full_pass = now;
            self.cut_short = false;
        }
        // What is reserved on each host now, for bhosts -l (cleared once nothing is).
        if !st.reserved.is_empty() || self.hosts.iter().any(|h| !h.reserved.is_empty()) {
            for (i, h) in self.hosts.iter_mut().enumerate() {
                h.reserved = st
                    .reserved
                    .get(i)
                    .map(|m| m.iter().map(|(k, (v, _))| (k.clone(), *v)).collect())
                    .unwrap_or_default();
            }
        }
        // What is reserved of each shared resource instance, for bhosts -s; what the
        // limits count, for blimits.
        self.shared_reserved = st.shared_reserved;
        self.limit_usage = st.limits.counts;
        self.limit_amounts = st.limits.amounts;
        self.set_reasons(assign);
        // The inactive queues walked to their end have all their reasons now; a queue
        // active again is walked again (what touched an active queue does not matter).
        for name in walk.settled {
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
            self.last_visits = visits;
        }
        // MultiCluster Phase II: what no local host could take goes to another cluster.
        self.forward_pass(now);
    }
}

/// The pass's own hash maps: foldhash with a fixed seed (fast on short keys, and the same
/// layout on every run; a pass never depends on their order).
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

pub(crate) fn fast_map<K, V>() -> FastMap<K, V> {
    HashMap::with_hasher(foldhash::fast::FixedState::default())
}
