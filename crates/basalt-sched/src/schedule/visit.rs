//! A pass's middle phases: the next pending job to visit ([`Sched::next_visit`]), why it
//! cannot start whatever the hosts ([`Sched::early_reason`]), and its placement: a
//! compound or alternative requirement part by part ([`Sched::place_compound`]), any
//! other on the hosts its shape allows ([`Sched::place_simple`], [`Sched::placed`]).

use super::fit::{JobFit, Shape, ShapeKey};
use super::pass::Pass;
use super::reserve::{add_amounts, pending_amounts, reserved_total};
use super::slot_resv::Backfill;
use super::walk::{PendReasons, PendRec};
use super::{allocate, alts, asked, compound, preempt, select};
use crate::depend::Tri;
use crate::reslimits::Consumer;
use crate::{JobKey, PEND_ARRAY_LIMIT, Sched, Str};
use basalt_core::job::{pend, sub};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a job's placement needs besides the pass: its record, the slots it asks for and
/// its resource requirement.
struct Visit<'r> {
    rec: &'r PendRec,
    key: JobKey,
    qi: usize,
    need: u32,
    rr: Str,
    /// A compound or alternative requirement (`2*{...} + {...}`, `{...} || {...}`).
    multi: bool,
    /// The `rusage[]` alternatives the limits that are not per host let it have, and
    /// their reason for the others.
    within: (u64, u32),
}

/// The shape of a job placed by [`Sched::place_simple`], for [`Sched::placed`].
struct Fitted<'s> {
    exclusive: bool,
    most: u32,
    sel: Option<Arc<select::Selects>>,
    local_host: Option<usize>,
    default_local: bool,
    shape_key: ShapeKey,
    backfill: Option<Backfill>,
    plan: Option<preempt::Plan>,
    victim_hosts: Vec<usize>,
    alts: &'s [select::Reserve],
}

impl Sched {
    /// The next pending job the pass visits, or None when it is over: a pass that need
    /// not visit every job stops once no host has a free slot (or as many start orders
    /// are under way as allowed), visiting then only the jobs submitted since the last
    /// pass.
    pub(super) fn next_visit(&mut self, p: &mut Pass) -> Option<PendRec> {
        loop {
            if let Some(r) = p.rest.as_mut() {
                return r.next();
            }
            // (Slots reserved for a job with a known start can still take a backfill
            // job.)
            let stop = !p.full
                && (self.dispatch_full()
                    || p.fullness.free == 0
                        && !p.resv.may_take_backfill()
                        && !p.pp.as_ref().is_some_and(|pp| {
                            pp.may_preempt(p.queue_order.get(p.walk.queue..).unwrap_or(&[]))
                        }));
            if !stop {
                return self.next_pending(p.now, &mut p.walk, &p.queue_order, &p.name_rank);
            }
            self.cut_short = true;
            self.dispatch_capped |= self.dispatch_full();
            let recs = self.fresh_recs(&p.fresh, &p.visited, &p.name_rank);
            p.rest = Some(recs.into_iter());
        }
    }

    /// Visit one pending job: start it if it fits, else give it its reasons.
    pub(super) fn visit(&mut self, p: &mut Pass, rec: PendRec) {
        let (key, qi, need) = (rec.rank.3, rec.qi, rec.need);
        #[cfg(test)]
        {
            p.visits += 1;
        }
        if !p.full {
            p.visited.insert(key);
        }
        let now = p.now;
        // Preempted jobs of queues of this priority or higher resume first when their
        // slots are free.
        if let Some(pp) = p.pp.as_mut().filter(|pp| !pp.waiting.is_empty()) {
            let prio = self.queues[qi].priority;
            let touched = self.resume_preempted(now, pp, prio, &mut p.st, p.counting.track_user);
            if !touched.is_empty() {
                p.generation += 1;
                p.fullness.refresh(&self.hosts, &p.st, &touched);
            }
        }
        // Its own reserved slots are free for it (and, if it does not reserve them again
        // below, for the jobs after it).
        let held = p.resv.take_own(key, &mut p.st);
        if let Some(r) = &held {
            p.generation += 1;
            p.fullness.refresh(&self.hosts, &p.st, &r.slots);
        }
        // Its -R, else its application profile's RES_REQ.
        let rr = self.job_res_req(&rec.sub);
        if p.statics[qi].is_none() {
            let q = &self.queues[qi];
            let per_host = self.hosts.iter().map(|h| self.static_why(q, h)).collect();
            p.statics[qi] = Some((self.queue_windows_open(q), per_host));
        }
        let multi = basalt_config::compound::is_multi(&rr);
        let mut v = Visit {
            rec: &rec,
            key,
            qi,
            need,
            rr,
            multi,
            within: (u64::MAX, 0),
        };
        if let Some(code) = self.early_reason(p, &mut v) {
            if code == pend::DELAY_SCHED {
                self.dispatch_capped = true;
            }
            p.assign
                .push((key, Arc::new(BTreeMap::from([(code, Vec::new())]))));
            return;
        }
        // A compound or alternative requirement (`2*{...} + {...}`, `{...} || {...}`):
        // placed part by part, all or nothing ([`compound`]).
        if v.multi {
            self.place_compound(p, &v);
        } else {
            self.place_simple(p, &v, held.map(|r| r.since));
        }
    }

    /// Why the job cannot start whatever the hosts hold, if so (its queue, its time, its
    /// dependency, its array's, queue's or user's limits, the start orders under way,
    /// the resource limits); sets the `rusage[]` alternatives the limits leave it.
    fn early_reason(&self, p: &mut Pass, v: &mut Visit<'_>) -> Option<u32> {
        let (rec, key, need) = (v.rec, v.key, v.need);
        let sub = &rec.sub;
        let (windows_open, _) = p.statics[v.qi].as_ref()?;
        let q = &self.queues[v.qi];
        let used = |p: &Pass| p.q_used.get(&q.name).copied().unwrap_or(0);
        if rec.forwarded {
            Some(pend::MC_FORWARDED)
        } else if !q.active {
            Some(pend::QUEUE_INACT)
        } else if !windows_open {
            Some(pend::QUEUE_WINDOW)
        } else if sub.begin_time > p.t {
            Some(pend::START_TIME)
        } else if let Some(r) = rec.requeues.as_ref().filter(|r| r.not_before > p.now) {
            Some(r.wait_reason)
        } else if let Some(d) = p.deps.get(&key).filter(|d| **d != Tri::Yes) {
            Some(if *d == Tri::Never {
                pend::DEPEND_INVALID
            } else {
                pend::DEPEND
            })
        } else if rec
            .array_limit
            .is_some_and(|k| p.array_started.get(&key.0).copied().unwrap_or(0) >= k)
        {
            Some(PEND_ARRAY_LIMIT)
        } else if q.qjob_limit.is_some_and(|l| used(p) + need > l) {
            Some(pend::QUEUE_JOB_LIMIT)
        } else if p.pool_targets[v.qi].is_some_and(|t| used(p) + need > t) {
            Some(pend::SLOT_POOL)
        } else if q.ujob_limit.is_some_and(|l| {
            p.q_user
                .get(&(q.name.clone(), sub.user.to_string()))
                .copied()
                .unwrap_or(0)
                + need
                > l
        }) {
            Some(pend::QUEUE_USER_LIMIT)
        } else if self.dispatch_full() {
            Some(pend::DELAY_SCHED)
        } else if p.counting.with_limits {
            // Within the limits with one of its alternatives at least.
            let alts: &[select::Reserve] = if p.counting.limit_amounts && !v.multi {
                p.reserves
                    .entry((Str::from(q.name.as_str()), v.rr.clone()))
                    .or_insert_with(|| self.reservations(q, &v.rr))
            } else {
                &[]
            };
            v.within = alts::within(alts, |r| {
                p.st.limits.job_reason(
                    &self.cfg.limits,
                    &p.st.limits_open,
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
            (v.within.0 == 0).then_some(v.within.1)
        } else {
            None
        }
    }

    /// Place a compound or alternative requirement, all or nothing.
    fn place_compound(&mut self, p: &mut Pass, v: &Visit<'_>) {
        let (rec, key, need) = (v.rec, v.key, v.need);
        let sub = &rec.sub;
        let q = &self.queues[v.qi];
        let ways = p
            .multi_ways
            .entry((v.rr.clone(), need))
            .or_insert_with(|| Arc::new(compound::ways(&v.rr, need)))
            .clone();
        let mj = compound::MultiJob {
            qi: v.qi,
            sub,
            exclusive: sub.options & sub::EXCLUSIVE != 0 && q.exclusive,
            excluded: rec.requeues.as_ref().map_or(&[], |r| &r.excluded),
            within: v.within,
            mixed_types: p.mixed_types,
        };
        let track = (p.counting.track_user, p.counting.track_qhost);
        let Some((_, per_host)) = &p.statics[v.qi] else {
            return;
        };
        let shared_of = |i: usize, name: &str| p.shared.of(i, name);
        let placed = self.place_multi(
            p.now,
            p.accept_ms,
            &mj,
            &ways,
            &p.st,
            per_host,
            track,
            &shared_of,
        );
        let compound::Placed::Yes {
            alloc,
            used,
            st: with_it,
            reserves,
        } = placed
        else {
            if let compound::Placed::No(why) = placed {
                p.assign.push((key, Arc::new(why)));
            }
            return;
        };
        p.st = *with_it;
        let qname = q.name.clone();
        p.took(rec, &qname, alloc.len() as u32);
        let names: Vec<String> = alloc.iter().map(|&i| self.hosts[i].name.clone()).collect();
        if p.counting.with_limits {
            let mut amounts: Vec<(String, f64)> = Vec::new();
            for (part, r) in reserves.iter().filter(|_| p.counting.limit_amounts) {
                let on: Vec<String> = part.iter().map(|&i| self.hosts[i].name.clone()).collect();
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
            p.st.limits.add(&self.cfg.limits, &c, &hosts, &amounts);
        }
        self.start_job_at(p.now, key, names, &alloc, used);
        p.placed = true;
        p.generation += 1;
        let touched: Vec<usize> = (0..p.nh).collect();
        p.fullness.refresh(&self.hosts, &p.st, &touched);
    }

    /// Place a job of a simple requirement on the hosts its shape allows (with the
    /// slots reserved for others it may backfill, or by preempting lower-priority
    /// jobs), else reserve slots for it (SLOT_RESERVE) and give it its reasons.
    fn place_simple(&mut self, p: &mut Pass, v: &Visit<'_>, held_since: Option<crate::Millis>) {
        let (rec, key, need, qi) = (v.rec, v.key, v.need, v.qi);
        let (now, accept_ms) = (p.now, p.accept_ms);
        let sub = &rec.sub;
        let (backfill, too_short) = self.open_backfill_for(p, qi, key, held_since);
        let q = &self.queues[qi];
        let c = p.counting;
        // Seed 001: exclusive only with -x in an exclusive queue.
        let exclusive = sub.options & sub::EXCLUSIVE != 0 && q.exclusive;
        let most = most_slots(p, q, sub, need);
        let rr = &v.rr;
        let sel = if rr.is_empty() && q.res_req.is_empty() {
            None
        } else {
            p.sel_cache
                .entry((qi, rr.clone()))
                .or_insert_with(|| self.selects(q, rr).map(Arc::new))
                .clone()
        };
        // The submission host, when its type or model decides.
        let (local_host, default_local) =
            self.local_host_of(sel.as_deref(), &sub.from_host, p.mixed_types);
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
            user: (c.track_user || c.with_limits).then(|| sub.user.to_string()),
            asked: sub.asked_hosts.clone(),
            exclusive,
            need,
            most,
            span: span.clone(),
            res_req: sel.as_ref().map(|_| rr.clone()),
            excluded: excluded.to_vec(),
            project: c.with_limits.then(|| sub.project.clone()),
            app: c.app_limits.then(|| sub.app().to_owned()),
            within: v.within,
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
            within: v.within,
            local: self.local_values(local_host),
            default_type: self.local_type(local_host, default_local),
        };
        let Some((_, per_host)) = &p.statics[qi] else {
            return;
        };
        let shape = p.shapes.entry(shape_key.clone()).or_insert_with(|| Shape {
            generation: u64::MAX,
            ..Shape::default()
        });
        if shape.generation != p.generation {
            shape.generation = p.generation;
            self.fill_shape(now, accept_ms, &job, &p.st, per_host, shape);
        }
        // same[]: the job's and its queue's resources all its hosts share (read once per
        // requirement, with its select parts).
        let same: &[String] = sel.as_ref().map_or(&[], |s| &s.same);
        let same_values = |i: usize| allocate::values_for_same(&self.hosts[i], same);
        let same_key: Option<&dyn Fn(usize) -> Vec<String>> =
            (!same.is_empty()).then_some(&same_values);
        let alts: &[select::Reserve] = sel.as_ref().map_or(&[], |s| &s.reserve);
        let mut placement = alts::place(shape, alts.len(), (need, most, tile), same_key);
        // Preemption: lower-priority running jobs give it their slots.
        let mut plan = None;
        if placement.is_none()
            && let Some(pp) = p.pp.as_mut()
        {
            let counts = p.st.susp;
            plan = self.try_preempt(
                now,
                accept_ms,
                (key, qi),
                pp,
                &job,
                shape,
                &mut p.st,
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
                let f = Fitted {
                    exclusive,
                    most,
                    sel: sel.clone(),
                    local_host,
                    default_local,
                    shape_key,
                    backfill,
                    plan,
                    victim_hosts,
                    alts,
                };
                self.placed(p, v, f, alloc, alt);
            }
            None => {
                if let Some(bf) = backfill {
                    let hosts = bf.hosts();
                    let max = |i: usize| self.hosts[i].max_slots();
                    p.resv.close_backfill(bf, None, max, &mut p.st);
                    p.generation += 1;
                    p.fullness.refresh(&self.hosts, &p.st, &hosts);
                }
                // SLOT_RESERVE: a parallel job reserves the free slots it could use.
                let job = (key, q, need, tile, held_since);
                if let Some(usable) = self.reserve_slots(job, shape, now, &mut p.resv, &mut p.st) {
                    p.generation += 1;
                    p.fullness.refresh(&self.hosts, &p.st, &usable);
                }
                let reasons = self.pending_reasons(shape, span.is_some(), &too_short);
                p.assign.push((key, reasons));
                // Victims to be killed for it (TERMINATE_WHEN = PREEMPT).
                if let Some(pl @ preempt::Plan::Kill(_)) = &plan {
                    self.preempt_victims(now, key, pl);
                }
            }
        }
    }

    /// BACKFILL: a job with a run limit may use the reserved slots of jobs that cannot
    /// start before it ends (not a job that held slots of its own).
    fn open_backfill_for(
        &self,
        p: &mut Pass,
        qi: usize,
        key: JobKey,
        held_since: Option<crate::Millis>,
    ) -> (Option<Backfill>, Vec<usize>) {
        if held_since.is_some() {
            return (None, Vec::new());
        }
        let (backfill, too_short) =
            self.open_backfill(&self.queues[qi], key, p.now, &mut p.resv, &mut p.st);
        if let Some(bf) = backfill.as_ref().filter(|bf| !bf.is_empty()) {
            p.generation += 1;
            p.fullness.refresh(&self.hosts, &p.st, &bf.hosts());
        }
        (backfill, too_short)
    }

    /// Why a job of `shape` waits (kept with the shape until a placement changes it),
    /// with the hosts whose reserved slots end too soon for a backfill job.
    fn pending_reasons(
        &self,
        shape: &mut Shape,
        spanned: bool,
        too_short: &[usize],
    ) -> PendReasons {
        let reasons = match &shape.reasons {
            Some(r) => r.clone(),
            None => {
                let r = Arc::new(self.shape_reasons(shape, spanned));
                shape.reasons = Some(r.clone());
                r
            }
        };
        if too_short.is_empty() {
            return reasons;
        }
        // A backfill job whose run limit is longer than the windows of the reserved
        // slots.
        let mut r = (*reasons).clone();
        r.entry(pend::LESS_DURATION)
            .or_default()
            .extend(too_short.iter().map(|&i| self.hosts[i].name.clone()));
        Arc::new(r)
    }

    /// A simple requirement placed on `alloc` (its `rusage[]` alternative `alt`): its
    /// slots taken, its reservations and limits counted, its start, and its shape
    /// brought up to date on the hosts that changed.
    fn placed(
        &mut self,
        p: &mut Pass,
        v: &Visit<'_>,
        f: Fitted<'_>,
        alloc: Vec<usize>,
        alt: usize,
    ) {
        let (rec, key, qi) = (v.rec, v.key, v.qi);
        let now = p.now;
        let sub = &rec.sub;
        let c = p.counting;
        let chosen = f.alts.get(alt);
        let qname = self.queues[qi].name.clone();
        for &i in &alloc {
            p.st.take(i, &qname, &sub.user, c.track_user, c.track_qhost);
            if f.exclusive {
                p.st.excl[i] = true;
            }
        }
        // Backfill: the reserved slots it did not take are held again (their hosts are
        // refreshed with the ones it used, below).
        let mut bf_hosts = Vec::new();
        if let Some(bf) = f.backfill {
            bf_hosts = bf.hosts();
            let max = |i: usize| self.hosts[i].max_slots();
            p.resv.close_backfill(bf, Some(&alloc), max, &mut p.st);
        }
        p.took(rec, &qname, alloc.len() as u32);
        let shared_of = |i: usize, name: &str| p.shared.of(i, name);
        if let Some(r) = chosen {
            p.st.reserve(
                alloc.iter().copied(),
                r,
                1.0,
                self.cfg.methods(),
                &shared_of,
            );
        }
        if c.with_limits {
            let hosts: Vec<&str> = alloc.iter().map(|&i| self.hosts[i].name.as_str()).collect();
            let amounts = match chosen {
                Some(r) if c.limit_amounts => {
                    let names: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
                    reserved_total(r, 1.0, &names, self.cfg.methods())
                }
                _ => Vec::new(),
            };
            let consumer = Consumer {
                user: &sub.user,
                queue: &qname,
                project: &sub.project,
                app: sub.app(),
            };
            p.st.limits
                .add(&self.cfg.limits, &consumer, &hosts, &amounts);
        }
        let names = alloc.iter().map(|&i| self.hosts[i].name.clone()).collect();
        let effective = alts::effective_text(f.alts, alt);
        // The victims' suspension is logged before its start.
        if let Some(pl) = &f.plan {
            self.preempt_victims(now, key, pl);
        }
        self.start_job_at(now, key, names, &alloc, effective);
        p.placed = true;
        p.generation += 1;
        // Only the hosts just used changed: bring this shape up to date.
        let mut touched = alloc;
        touched.extend(bf_hosts);
        touched.extend(f.victim_hosts);
        // A shared resource it reserves changed on every host sharing it.
        if let Some(r) = chosen {
            let mut more = Vec::new();
            for &i in &touched {
                for (name, _, _) in &r.amounts {
                    if let Some(k) = p.shared.of(i, name) {
                        more.extend((0..p.nh).filter(|&j| p.shared.holds(j, k)));
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
            touched = (0..p.nh).collect();
        }
        touched.sort_unstable();
        touched.dedup();
        p.fullness.refresh(&self.hosts, &p.st, &touched);
        let job = JobFit {
            queue: &self.queues[qi],
            sub,
            exclusive: f.exclusive,
            most: f.most,
            sel: f.sel.as_deref(),
            excluded: rec.requeues.as_ref().map_or(&[], |r| &r.excluded),
            asked: asked::Asked::of(&sub.asked_hosts),
            within: v.within,
            local: self.local_values(f.local_host),
            default_type: self.local_type(f.local_host, f.default_local),
        };
        let Some((_, per_host)) = &p.statics[qi] else {
            return;
        };
        let Some(shape) = p.shapes.get_mut(&f.shape_key) else {
            return;
        };
        self.refit(now, p.accept_ms, &job, &p.st, per_host, shape, &touched);
        shape.generation = p.generation;
        shape.reasons = None;
    }
}

/// `-n min,max`: as many slots as are free up to max, within the queue's QJOB_LIMIT and
/// UJOB_LIMIT (the early checks leave room for at least min).
fn most_slots(p: &Pass, q: &crate::Queue, sub: &crate::Submission, need: u32) -> u32 {
    let mut most = sub.max_processors.max(need);
    if let Some(l) = q.qjob_limit {
        most = most.min(l.saturating_sub(p.q_used.get(&q.name).copied().unwrap_or(0)));
    }
    if let Some(l) = q.ujob_limit {
        let u = p
            .q_user
            .get(&(q.name.clone(), sub.user.to_string()))
            .copied()
            .unwrap_or(0);
        most = most.min(l.saturating_sub(u));
    }
    most.max(need)
}
