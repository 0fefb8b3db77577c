//! Whether a host can take a job: load thresholds, the per-(queue, host) checks of a
//! pass, and the per-host evaluation with what the pass has placed so far.

use crate::reslimits::per_processor;
use crate::{Host, LimStatus, Millis, Queue, Sched, Submission};
use basalt_core::job::pend;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

impl Sched {
    /// Within the queue's and the host's (lsb.hosts) loadSched thresholds? Run-queue
    /// lengths are compared as effective values. The error is the pending reason of
    /// the first index beyond a threshold.
    pub(crate) fn load_ok(&self, q: &Queue, h: &Host) -> Result<(), u32> {
        let q_bad = Self::beyond_sched(h, &q.load_sched);
        let h_bad = Self::beyond_sched(h, &h.load_sched);
        match q_bad.into_iter().chain(h_bad).min() {
            Some(i) => Err(pend::LOAD_BASE + i as u32),
            None => Ok(()),
        }
    }

    /// A host's load index as thresholds and conditions see it (run queues effective).
    pub(crate) fn load_value(h: &Host, name: &str) -> Option<f64> {
        let v = *h.load.get(name)?;
        Some(if matches!(name, "r15s" | "r1m" | "r15m") {
            basalt_core::effective_run_queue(v, h.ncpus.max(1), h.cpu_factor.max(0.01))
        } else {
            v
        })
    }

    /// Which scheduling thresholds (the host's own, then each queue's) the host's load
    /// is within now.
    pub(crate) fn threshold_view(&self, h: &Host) -> Vec<bool> {
        std::iter::once(&h.load_sched)
            .chain(self.queues.iter().map(|q| &q.load_sched))
            .filter(|t| !t.is_empty())
            .map(|t| Self::beyond_sched(h, t).is_none())
            .collect()
    }

    /// The first built-in index (LSF's number) whose load on `h` is beyond its
    /// loadSched in `sched`; run-queue lengths effective.
    pub(crate) fn beyond_sched(h: &Host, sched: &BTreeMap<String, f64>) -> Option<usize> {
        for (i, idx) in basalt_core::BUILTIN_INDICES.iter().enumerate() {
            let name = idx.name();
            let Some(limit) = sched.get(name) else {
                continue;
            };
            let Some(mut v) = h.load.get(name).copied() else {
                continue;
            };
            if matches!(name, "r15s" | "r1m" | "r15m") {
                v = basalt_core::effective_run_queue(v, h.ncpus.max(1), h.cpu_factor.max(0.01));
            }
            let bad = if idx.increasing() {
                v > *limit
            } else {
                v < *limit
            };
            if bad {
                return Some(i);
            }
        }
        None
    }

    /// The checks of host `h` that depend only on the queue: (not a queue host, LIM /
    /// sbatchd / closed / dispatch window, load beyond the thresholds).
    pub(crate) fn static_why(&self, q: &Queue, h: &Host) -> StaticWhy {
        StaticWhy {
            not_queue_host: !q.uses_host(&h.name),
            status: self.shut_why(h),
            load: self.load_ok(q, h).err(),
        }
    }

    /// Why host `h` takes no job of any queue now (its LIM, its sbatchd, closed by an
    /// administrator, locked, outside its dispatch window), if it does not.
    pub(crate) fn shut_why(&self, h: &Host) -> Option<u32> {
        if h.lim != LimStatus::Ok {
            Some(pend::LIM_UNREACH)
        } else if h.sbd_failed {
            Some(pend::SBD_UNREACH)
        } else if h.closed_adm {
            Some(pend::HOST_CLOSED)
        } else if h.lim_locked {
            Some(pend::HOST_LOCKED)
        } else if !self.window_open(h.dispatch_window.as_ref()) {
            Some(pend::DISPATCH_WINDOW)
        } else {
            None
        }
    }

    /// Whether host `i` can take (part of) `job` now: (free slots, r15s × 100, rank,
    /// index), or the pending reason.
    /// Bring `shape` up to date on `hosts` (their slots changed): each is evaluated
    /// again for `job`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn refit(
        &self,
        now: Millis,
        accept_ms: i64,
        job: &JobFit,
        st: &PassState,
        statics: &[StaticWhy],
        shape: &mut Shape,
        hosts: &[usize],
    ) {
        for &i in hosts {
            if let Some(old) = shape.cur[i].take() {
                shape.cands.remove(&CandKey(old));
            }
            shape.why[i] = None;
            match self.host_fit(now, accept_ms, job, st, statics, i) {
                Ok(c) => {
                    shape.cands.insert(CandKey(c));
                    shape.cur[i] = Some(c);
                }
                Err(code) => shape.why[i] = Some(code),
            }
        }
    }

    /// Evaluate every host for `job` into `shape`: its candidates best first, each
    /// host's entry, why each other host cannot take it.
    pub(crate) fn fill_shape(
        &self,
        now: Millis,
        accept_ms: i64,
        job: &JobFit,
        st: &PassState,
        statics: &[StaticWhy],
        shape: &mut Shape,
    ) {
        let nh = self.hosts.len();
        shape.cur.clear();
        shape.cur.resize(nh, None);
        shape.why.clear();
        shape.why.resize(nh, None);
        shape.reasons = None;
        let mut cands = Vec::with_capacity(nh);
        for i in 0..nh {
            match self.host_fit(now, accept_ms, job, st, statics, i) {
                Ok(c) => {
                    cands.push(CandKey(c));
                    shape.cur[i] = Some(c);
                }
                Err(code) => shape.why[i] = Some(code),
            }
        }
        shape.cands = super::cands::Cands::from_unsorted(cands);
    }

    /// The pending reasons of a job of `shape` that did not fit: each other host's, and
    /// for the candidates too few slots (`spanned`: its `span[]` could not be met).
    pub(crate) fn shape_reasons(&self, shape: &Shape, spanned: bool) -> BTreeMap<u32, Vec<String>> {
        let mut r: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for (i, w) in shape.why.iter().enumerate() {
            if let Some(code) = w {
                r.entry(*code).or_default().push(self.hosts[i].name.clone());
            }
        }
        if !shape.cands.is_empty() {
            let code = if spanned {
                pend::SPAN
            } else {
                pend::NOT_ENOUGH_SLOTS
            };
            r.entry(code)
                .or_default()
                .extend(shape.cands.iter().map(|c| self.hosts[c.0.3].name.clone()));
        }
        r
    }

    /// The submission host when its values decide for a job of select parts `sel` (a
    /// part compares with `local`, or the job's default `type==local` can matter: hosts
    /// of several types, and no type or other string or Boolean resource named), and
    /// whether that default applies.
    pub(crate) fn local_host_of(
        &self,
        sel: Option<&super::select::Selects>,
        from_host: &str,
        mixed_types: bool,
    ) -> (Option<usize>, bool) {
        let default_local = mixed_types && !sel.is_some_and(|s| s.names_type);
        let local = if default_local || sel.is_some_and(|s| s.uses_local) {
            self.host_idx(from_host)
        } else {
            None
        };
        (local, default_local)
    }

    /// Host `i`'s tile of a job's slots under `span`.
    pub(crate) fn tile_on(&self, span: &super::allocate::Span, i: usize) -> Option<u32> {
        let h = &self.hosts[i];
        span.tile(
            h.statics.strings.get("type").map(String::as_str),
            h.max_slots(),
        )
    }

    pub(crate) fn host_fit(
        &self,
        now: Millis,
        accept_ms: i64,
        job: &JobFit,
        st: &PassState,
        statics: &[StaticWhy],
        i: usize,
    ) -> Result<Cand, u32> {
        let h = &self.hosts[i];
        let s = &statics[i];
        let u = st.used[i];
        if s.not_queue_host {
            return Err(pend::NOT_QUEUE_HOST);
        }
        if job.asked.as_ref().is_some_and(|a| !a.allows(&h.name)) {
            return Err(pend::NOT_ASKED_HOST);
        }
        if job.excluded.contains(&h.name) {
            // Excluded for this job by its exit value there (REQUEUE_EXIT_VALUES): as if
            // left out of its -m list.
            return Err(pend::NOT_ASKED_HOST);
        }
        if let Some(code) = s.status {
            return Err(code);
        }
        if st.excl[i] {
            return Err(pend::EXCLUSIVE);
        }
        // Slots other jobs reserve: a host they alone keep from the job says so.
        let reserved = st.rsv.get(i).copied().unwrap_or(0);
        if job.exclusive && u > 0 {
            return Err(if u == reserved {
                pend::SLOTS_RESERVED
            } else {
                pend::NONEXCLUSIVE
            });
        }
        // The queue's JOB_ACCEPT_INTERVAL over lsb.params'.
        let accept_ms = job.queue.job_accept_interval.map_or(accept_ms, |n| {
            i64::from(n) * i64::from(self.cfg.mbd_sleep_time_secs) * 1000
        });
        if accept_ms > 0 && h.last_dispatch > 0 && now - h.last_dispatch < accept_ms {
            return Err(pend::JUST_STARTED);
        }
        if let Some(code) = s.load {
            return Err(code);
        }
        // LSF's default `type==local`: a host of another known type is not for it.
        if let Some(t) = job.default_type
            && h.statics.strings.get("type").is_some_and(|ht| ht != t)
        {
            return Err(pend::RES_REQ);
        }
        // The job's `rusage[]` alternatives this host has enough for (bit 0 alone when
        // it reserves nothing), and its place in the job's `order[]`.
        let (fits, order) = match job.sel {
            Some(sel) => self.select_fits(job, sel, st, i)?,
            None => (1u64, [0i64; super::select::ORDER_KEYS]),
        };
        let mut free = self.slot_room(job, st, i, reserved)?;
        let fits = if self.cfg.limits.is_empty() {
            fits
        } else {
            let (within, room) = self.limits_room(job, st, h, fits)?;
            if let Some(r) = room {
                free = free.min(r);
            }
            within
        };
        if job.exclusive {
            free = free.min(job.most);
        }
        let r15s = (h.load.get("r15s").copied().unwrap_or(0.0) * 100.0) as i64;
        let pref = match job.asked.as_ref().and_then(|a| a.level(&h.name)) {
            Some(level) => level,
            None => job
                .queue
                .host_pref
                .get(&h.name)
                .copied()
                .unwrap_or(job.queue.others_pref),
        };
        Ok((free, r15s, h.rank, i, order, -pref, fits))
    }

    /// The `rusage[]` alternatives of the job host `i` has enough for, and the host's
    /// place in its `order[]`; else why its select or `rusage[]` refuses the host.
    fn select_fits(
        &self,
        job: &JobFit,
        sel: &super::select::Selects,
        st: &PassState,
        i: usize,
    ) -> Result<(u64, [i64; super::select::ORDER_KEYS]), u32> {
        let h = &self.hosts[i];
        let mut values = super::select::values_of(h);
        // The Boolean and String shared resources of the instances the host is in.
        for (name, value) in self.cfg.shared_flags.get(&h.name).into_iter().flatten() {
            match value {
                None => values.booleans.push(name.clone()),
                Some(v) => {
                    values.strings.insert(name.clone(), v.clone());
                }
            }
        }
        if let Some(r) = st.reserved.get(i) {
            super::select::apply_reserved(&mut values, r);
        }
        // A shared resource's value on this host: its instance's, less what jobs
        // reserve of it.
        for &k in self.host_shared.get(i).map_or(&[][..], |v| v.as_slice()) {
            let r = &self.cfg.shared[k];
            match st.shared_value.get(k).copied().flatten() {
                Some(v) => {
                    let taken = st.shared_reserved.get(k).copied().unwrap_or(0.0);
                    values.numbers.insert(r.name.clone(), v - taken);
                }
                // Unknown: no host of the instance sees any of it.
                None => {
                    values.numbers.remove(&r.name);
                }
            }
        }
        if let Some(code) = sel.refuses(&values, job.local) {
            return Err(code);
        }
        let fits = sel.reserve_fits(&values)? & job.within.0;
        if fits == 0 {
            return Err(job.within.1);
        }
        Ok((fits, sel.order_key(&values)))
    }

    /// The slots host `i` has for the job: its free ones within the host's, the user's,
    /// the user group's and the queue's per-host limits; else the limit that leaves none.
    fn slot_room(&self, job: &JobFit, st: &PassState, i: usize, reserved: u32) -> Result<u32, u32> {
        let h = &self.hosts[i];
        let u = st.used[i];
        let mut free = match h.max_slots() {
            Some(m) => m.saturating_sub(u),
            None => u32::MAX / 4,
        };
        if free == 0
            && reserved > 0
            && h.max_slots()
                .is_some_and(|m| u.saturating_sub(reserved) < m)
        {
            return Err(pend::SLOTS_RESERVED);
        }
        if let Some(jlu) = h.jl_u {
            let uu = st.user_slots(i, &job.sub.user, st.susp.host_jlu);
            free = free.min(jlu.saturating_sub(uu));
            if free == 0 {
                return Err(pend::HOST_USER_LIMIT);
            }
        }
        // lsb.users JL/P: the user's slots on a host, per processor of the host.
        let jl_p = self
            .cfg
            .user_rows
            .get(job.sub.user.as_str())
            .or_else(|| self.cfg.user_rows.get("default"))
            .copied()
            .flatten();
        if let Some(per_cpu) = jl_p {
            let cap = per_processor(per_cpu, h.ncpus);
            let uu = st.user_slots(i, &job.sub.user, st.susp.user_jlp);
            free = free.min(cap.saturating_sub(uu));
            if free == 0 {
                return Err(pend::USER_PROC_LIMIT);
            }
        }
        // lsb.users JL/P of a group's own row: its members' slots on a host together.
        for (members, per_cpu) in &self.cfg.group_jl_p {
            if !members.covers(&job.sub.user) {
                continue;
            }
            let cap = per_processor(*per_cpu, h.ncpus);
            let mut used: u32 = st
                .used_user
                .iter()
                .filter(|((hi, u), _)| *hi == i && members.covers(u))
                .map(|(_, n)| *n)
                .sum();
            if !st.susp.group_jlp {
                used += st
                    .susp_user
                    .iter()
                    .filter(|((hi, u), _)| *hi == i && members.covers(u))
                    .map(|(_, n)| *n)
                    .sum::<u32>();
            }
            free = free.min(cap.saturating_sub(used));
            if free == 0 {
                return Err(pend::GROUP_PROC_LIMIT);
            }
        }
        // The queue's PJOB_LIMIT: its slots on a host, per processor of the host.
        if let Some(per_cpu) = job.queue.pjob_limit {
            let cap = per_processor(per_cpu, h.ncpus);
            let qh = st
                .q_host
                .get(&(job.queue.name.clone(), i))
                .copied()
                .unwrap_or(0);
            free = free.min(cap.saturating_sub(qh));
            if free == 0 {
                return Err(pend::QUEUE_PROC_LIMIT);
            }
        }
        if let Some(hl) = job.queue.hjob_limit {
            let qh = st
                .q_host
                .get(&(job.queue.name.clone(), i))
                .copied()
                .unwrap_or(0);
            free = free.min(hl.saturating_sub(qh));
            if free == 0 {
                return Err(pend::HOST_JOB_LIMIT);
            }
        }
        if free == 0 {
            return Err(pend::HOST_JOB_LIMIT);
        }
        Ok(free)
    }

    /// Within the resource allocation limits on host `h`: each alternative that fits
    /// (`fits`) must also be within them; the first left decides the room.
    fn limits_room(
        &self,
        job: &JobFit,
        st: &PassState,
        h: &Host,
        fits: u64,
    ) -> Result<(u64, Option<u32>), u32> {
        // Each alternative that fits must also be within the limits; the first left
        // decides the room.
        let alts = job.sel.map_or(&[][..], |s| s.reserve.as_slice());
        let (mut within, mut room, mut why) = (0u64, None, None);
        for a in 0..alts.len().clamp(1, super::alts::MAX_ALTS) {
            if fits >> a & 1 == 0 {
                continue;
            }
            let wants: Vec<(String, f64)> = alts
                .get(a)
                .map(|r| r.amounts.iter().map(|(n, x, _)| (n.clone(), *x)).collect())
                .unwrap_or_default();
            match st.limits.host_room(
                &self.cfg.limits,
                &st.limits_open,
                &crate::reslimits::Consumer {
                    user: &job.sub.user,
                    queue: &job.queue.name,
                    project: &job.sub.project,
                    app: job.sub.app(),
                },
                &h.name,
                h.ncpus,
                &|name| {
                    let s = h.lim_static.as_ref()?;
                    let mb = match name {
                        "mem" => s.max_mem_mb,
                        "swp" => s.max_swp_mb,
                        "tmp" => s.max_tmp_mb,
                        _ => return None,
                    };
                    (mb > 0).then_some(mb as f64)
                },
                &wants,
            ) {
                Err(code) => {
                    why.get_or_insert(code);
                }
                Ok(r) => {
                    within |= 1 << a;
                    room.get_or_insert(r);
                }
            }
        }
        if let Some(code) = why.filter(|_| within == 0) {
            return Err(code);
        }
        Ok((within, room.flatten()))
    }
}

/// A candidate host of a scheduling pass: (free slots, r15s × 100, rank, host index,
/// its place in the job's `order[]`, all zeros without one).
/// Then: the host's preference level (the job's `-m`, else the queue's HOSTS:
/// `hostA+2`), negated; the job's `rusage[]` alternatives the host fits (bit per
/// alternative, [`super::alts`]).
pub(crate) type Cand = (
    u32,
    i64,
    usize,
    usize,
    [i64; super::select::ORDER_KEYS],
    i64,
    u64,
);

/// The host preference first (the job's `-m host+N`, else its queue's HOSTS `host+N`:
/// higher first); then the job's
/// `order[]` when it has one; then most free slots first (spread), then least loaded,
/// then file order.
pub(crate) fn cand_order(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    a.5.cmp(&b.5)
        .then_with(|| a.4.cmp(&b.4))
        .then_with(|| b.0.cmp(&a.0))
        .then_with(|| a.1.cmp(&b.1))
        .then_with(|| a.2.cmp(&b.2))
        .then_with(|| a.3.cmp(&b.3))
}

/// A [`Cand`] ordered by [`cand_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CandKey(pub(crate) Cand);

impl Ord for CandKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        cand_order(&self.0, &other.0)
    }
}

impl PartialOrd for CandKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The (queue, host) checks of a pass, computed once per queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StaticWhy {
    pub(crate) not_queue_host: bool,
    pub(crate) status: Option<u32>,
    pub(crate) load: Option<u32>,
}

/// What a pass has placed so far, by host index.
#[derive(Clone)]
pub(crate) struct PassState {
    pub(crate) used: Vec<u32>,
    /// Of `used`, the slots pending jobs reserve (SLOT_RESERVE) on each host.
    pub(crate) rsv: Vec<u32>,
    pub(crate) excl: Vec<bool>,
    /// (host, user) -> slots; kept only when some host has a JL/U limit.
    pub(crate) used_user: HashMap<(usize, String), u32>,
    /// (host, user) -> slots of suspended jobs, kept apart from `used_user` while
    /// preemption is configured (PREEMPT_FOR decides which limits count them).
    pub(crate) susp_user: HashMap<(usize, String), u32>,
    /// PREEMPT_FOR: which per-user checks ignore suspended jobs.
    pub(crate) susp: super::preempt::SuspCounts,
    /// (queue, host) -> slots; kept only when some queue has HJOB_LIMIT.
    pub(crate) q_host: HashMap<(String, usize), u32>,
    /// By host index, what jobs reserve there (`rusage[]`): resource -> (amount, a
    /// larger value is better). Empty when no job reserves anything.
    pub(crate) reserved: Vec<BTreeMap<String, (f64, bool)>>,
    /// By shared resource instance ([`crate::SchedConfig::shared`]), what jobs reserve of
    /// it.
    pub(crate) shared_reserved: Vec<f64>,
    /// By shared resource instance: its value in this pass — configured (`2@[all]`), or
    /// for a dynamic one what an ELIM on one of its hosts reports (its first host whose
    /// LIM answers with that index); None: unknown, so it satisfies nothing.
    pub(crate) shared_value: Vec<Option<f64>>,
    /// What started and placed jobs use of the resource allocation limits, and whether
    /// each limit's SLOTS window is open (empty without limits).
    pub(crate) limits: crate::reslimits::Usage,
    pub(crate) limits_open: Vec<bool>,
}

impl PassState {
    /// Add `share` of what `r` reserves to the hosts (by index) of a job's slots: once
    /// per slot when reservations are per slot, else once per host.
    ///
    /// An amount of a shared resource (`shared_of(host, name)` gives the instance the
    /// host is in) is taken from the instance instead: once per job, or once per slot.
    pub(crate) fn reserve(
        &mut self,
        hosts: impl IntoIterator<Item = usize>,
        r: &super::select::Reserve,
        share: f64,
        methods: super::Methods<'_>,
        shared_of: &dyn Fn(usize, &str) -> Option<usize>,
    ) {
        use basalt_config::batch::ReserveMethod as M;
        let nh = self.used.len();
        if share <= 0.0 {
            return;
        }
        let mut seen: Vec<usize> = Vec::new();
        let mut seen_shared: Vec<usize> = Vec::new();
        let mut first_slot = true;
        for i in hosts {
            if i >= nh {
                continue;
            }
            let first_on_host = !seen.contains(&i);
            if first_on_host {
                seen.push(i);
            }
            for (name, amount, larger_better) in &r.amounts {
                let method = methods.of(name);
                if let Some(k) = shared_of(i, name) {
                    // A shared instance: once per task, once per instance (per host), or
                    // once for the job.
                    let take = match method {
                        M::PerTask => true,
                        M::PerHost => !seen_shared.contains(&k),
                        M::PerJob => first_slot,
                    };
                    if take {
                        seen_shared.push(k);
                        if let Some(x) = self.shared_reserved.get_mut(k) {
                            *x += amount * share;
                        }
                    }
                    continue;
                }
                let take = match method {
                    M::PerTask => true,
                    M::PerHost => first_on_host,
                    M::PerJob => first_slot,
                };
                if !take {
                    continue;
                }
                if self.reserved.is_empty() {
                    self.reserved = vec![BTreeMap::new(); nh];
                }
                let e = self.reserved[i]
                    .entry(name.clone())
                    .or_insert((0.0, *larger_better));
                e.0 += amount * share;
            }
            first_slot = false;
        }
    }

    /// Does host `i` (`host`) have no free slot left in this pass? (A host without a
    /// slot limit always has one.)
    pub(crate) fn host_full(&self, host: &crate::Host, i: usize) -> bool {
        host.max_slots().is_some_and(|m| self.used[i] >= m)
    }

    /// A suspended job's slot on host `i` of `user`, counted apart.
    pub(crate) fn suspend_user(&mut self, i: usize, user: &str) {
        if let Some(n) = self.used_user.get_mut(&(i, user.to_owned())) {
            *n = n.saturating_sub(1);
        }
        *self.susp_user.entry((i, user.to_owned())).or_default() += 1;
    }

    /// A resumed job's slot on host `i` of `user`, counted as running again.
    pub(crate) fn unsuspend_user(&mut self, i: usize, user: &str) {
        if let Some(n) = self.susp_user.get_mut(&(i, user.to_owned())) {
            *n = n.saturating_sub(1);
        }
        *self.used_user.entry((i, user.to_owned())).or_default() += 1;
    }

    /// The slots of `user` on host `i` a per-user check counts: running ones, and
    /// suspended ones unless `ignore_suspended` (PREEMPT_FOR).
    pub(crate) fn user_slots(&self, i: usize, user: &str, ignore_suspended: bool) -> u32 {
        let key = (i, user.to_owned());
        let run = self.used_user.get(&key).copied().unwrap_or(0);
        if ignore_suspended {
            run
        } else {
            run + self.susp_user.get(&key).copied().unwrap_or(0)
        }
    }

    pub(crate) fn take(
        &mut self,
        i: usize,
        queue: &str,
        user: &str,
        track_user: bool,
        track_qhost: bool,
    ) {
        self.used[i] += 1;
        if track_user {
            *self.used_user.entry((i, user.to_owned())).or_default() += 1;
        }
        if track_qhost {
            *self.q_host.entry((queue.to_owned(), i)).or_default() += 1;
        }
    }
}

/// The parts of a job a host evaluation looks at.
pub(crate) struct JobFit<'a> {
    pub(crate) queue: &'a Queue,
    /// Asked hosts and user are read from here.
    pub(crate) sub: &'a Submission,
    pub(crate) exclusive: bool,
    /// The most slots the job may take (`-n min,max`).
    pub(crate) most: u32,
    /// The select parts of the queue's and the job's resource requirements.
    pub(crate) sel: Option<&'a super::select::Selects>,
    /// Hosts excluded for it (REQUEUE_EXIT_VALUES' EXCLUDE(...)).
    pub(crate) excluded: &'a [String],
    /// Its `-m` list (None: any host).
    pub(crate) asked: Option<super::asked::Asked>,
    /// The `rusage[]` alternatives the limits that are not per host let it have (a bit
    /// each), and their reason for the others.
    pub(crate) within: (u64, u32),
    /// The submission host's values, for `type==local` and `model==local`.
    pub(crate) local: Option<&'a basalt_config::select::HostValues>,
    /// Its type, when the job's default `type==local` applies.
    pub(crate) default_type: Option<&'a str>,
}

impl Sched {
    /// The submission host's values (`local_host`, see [`JobFit::local`]).
    pub(crate) fn local_values(
        &self,
        local_host: Option<usize>,
    ) -> Option<&basalt_config::select::HostValues> {
        local_host.map(|i| &self.hosts[i].statics)
    }

    /// Its type when the job's default `type==local` applies ([`JobFit::default_type`]).
    pub(crate) fn local_type(
        &self,
        local_host: Option<usize>,
        default_local: bool,
    ) -> Option<&str> {
        self.local_values(local_host)
            .filter(|_| default_local)
            .and_then(|v| v.strings.get("type"))
            .map(String::as_str)
    }
}

/// Jobs whose host evaluation is the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ShapeKey {
    /// Queue index.
    pub(crate) queue: usize,
    pub(crate) user: Option<String>,
    pub(crate) asked: Vec<String>,
    pub(crate) exclusive: bool,
    pub(crate) need: u32,
    pub(crate) most: u32,
    pub(crate) span: Option<super::allocate::Span>,
    /// The job's resource requirement, when it or its queue's has a select part.
    pub(crate) res_req: Option<crate::Str>,
    pub(crate) excluded: Vec<String>,
    /// The job's project, when resource allocation limits may count by project.
    pub(crate) project: Option<crate::Str>,
    /// Its application profile, likewise.
    pub(crate) app: Option<String>,
    /// [`JobFit::within`]: what the limits let its `rusage[]` alternatives have.
    pub(crate) within: (u64, u32),
    /// The submission host, when its type or model decides ([`JobFit::local`]).
    pub(crate) local_host: Option<usize>,
}

/// Every host evaluated for a shape, as of `generation`.
#[derive(Clone, Default)]
pub(crate) struct Shape {
    pub(crate) generation: u64,
    /// Hosts that can take the job, best first.
    pub(crate) cands: super::cands::Cands,
    /// Each host's entry in `cands`.
    pub(crate) cur: Vec<Option<Cand>>,
    /// Why each other host cannot.
    pub(crate) why: Vec<Option<u32>>,
    /// The pending reasons of a job of this shape that does not fit, once built.
    pub(crate) reasons: Option<Arc<BTreeMap<u32, Vec<String>>>>,
}
