//! Preemptive scheduling (seed 002, lsb.queues `PREEMPTION`): a pending job of a
//! queue that may preempt another that cannot start for want of slots suspends
//! running jobs of the lower-priority queues and starts in their slots.
//!
//! * Queue A may preempt queue B when A's priority is higher and A is `PREEMPTIVE`
//!   (without a list, or with B in it) or B is `PREEMPTABLE` (without a list, or with A
//!   in it).
//! * Victims: running jobs of such queues on the hosts the job could use, not preempted
//!   more than MAX_JOB_PREEMPT times (application profile over queue over lsb.params),
//!   not run for NO_PREEMPT_RUN_TIME yet, not ending within NO_PREEMPT_FINISH_TIME. They
//!   are taken from the least-loaded host first, then from the queue with the highest
//!   preference level (`PREEMPTIVE[q+n]`), the lowest priority, and the most recently
//!   started (PREEMPT_FOR=LEAST_RUN_TIME: the shortest run; OPTIMAL_MINI_JOB: the
//!   largest job first) until the job fits; those on hosts it does not use are spared
//!   (MINI_JOB, OPTIMAL_MINI_JOB: also those it does not need). At most
//!   MAX_PREEMPT_JOBS victims per pass.
//! * A victim is suspended: JOB_STATUS SSUSP with SUSP_MBD_PREEMPT | SUSP_MBD_LOCK is
//!   logged before the preempting job's JOB_START (replay gives the same state), then
//!   sbatchd stops it (the queue's JOB_CONTROLS SUSPEND applies); SUSP_MBD_LOCK keeps
//!   sbatchd's load policy from resuming it. Its host slots no longer count, its other
//!   counts follow PREEMPT_FOR. A victim of a `TERMINATE_WHEN = PREEMPT` queue is killed
//!   instead (TERM_PREEMPT); the job then waits for its slots, and preempts no more for
//!   PREEMPTION_WAIT_TIME.
//! * A preempted job resumes as soon as its hosts have the slots free again, visited
//!   at its queue's priority before that queue's pending jobs — not necessarily when
//!   the job that preempted it ends.

use super::alts;
use super::fit::{JobFit, PassState, Shape, StaticWhy};
use crate::{JobKey, Millis, Queue, SbdAction, Sched, secs, state_change};
use basalt_core::job::{JobState, pend, status, susp};
use std::collections::VecDeque;

/// Whether queue `hi` may preempt queue `lo`, and the preference level of `lo` in
/// `hi`'s PREEMPTIVE list (0 when not given).
pub(crate) fn preempts(hi: &Queue, lo: &Queue) -> Option<u32> {
    if hi.priority <= lo.priority || hi.name == lo.name {
        return None;
    }
    let by_hi = match &hi.preempt.preemptive {
        Some(list) if list.is_empty() => Some(0),
        Some(list) => list.iter().find(|(q, _)| *q == lo.name).map(|(_, p)| *p),
        None => None,
    };
    let by_lo = match &lo.preempt.preemptable {
        Some(list) => (list.is_empty() || list.contains(&hi.name)).then_some(0),
        None => None,
    };
    by_hi.or(by_lo)
}

/// A running job that a job of another queue may preempt.
#[derive(Debug, Clone)]
pub(crate) struct Victim {
    pub(crate) key: JobKey,
    pub(crate) qi: usize,
    /// Host indices, one per slot.
    pub(crate) slots: Vec<usize>,
    pub(crate) user: String,
    pub(crate) exclusive: bool,
    pub(crate) start_ms: Millis,
    /// Its queue kills preempted jobs (TERMINATE_WHEN = PREEMPT).
    pub(crate) kill: bool,
    pub(crate) taken: bool,
}

/// What preemption decided for a job.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// It starts on `alloc` (with its `rusage[]` alternative `alt`); `victims` are
    /// suspended; `hosts` are theirs.
    Start {
        alloc: Vec<usize>,
        alt: usize,
        hosts: Vec<usize>,
        victims: Vec<JobKey>,
    },
    /// These victims are killed (TERMINATE_WHEN = PREEMPT); it waits for their slots.
    Kill(Vec<JobKey>),
}

/// A pass's view of preemption.
pub(crate) struct PassPreempt {
    /// By queue index: the queues its jobs may preempt, with their preference level.
    pub(crate) may: Vec<Vec<(usize, u32)>>,
    pub(crate) victims: Vec<Victim>,
    /// Jobs it may still preempt in this pass (MAX_PREEMPT_JOBS).
    pub(crate) budget: u32,
    /// Preempted jobs waiting for their slots: (queue priority, key), highest priority
    /// then earliest start first.
    pub(crate) waiting: VecDeque<(u32, JobKey)>,
}

impl PassPreempt {
    /// Could a pending job of the queues `rest` (indices; those the walk has not left
    /// yet) still preempt in this pass? (A pass with no free slot must then not stop
    /// early.)
    pub(crate) fn may_preempt(&self, rest: &[usize]) -> bool {
        self.budget > 0
            && rest.iter().any(|&qi| !self.may[qi].is_empty())
            && self.victims.iter().any(|v| !v.taken)
    }
}

/// The counting of a suspended job's slots that PREEMPT_FOR changes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SuspCounts {
    /// Preemption is configured: suspended jobs' per-user slots are kept apart.
    pub(crate) on: bool,
    pub(crate) host_jlu: bool,
    pub(crate) user_jlp: bool,
    pub(crate) group_jlp: bool,
}

impl Sched {
    /// Preemption's start of a pass: None when no queue can preempt another.
    pub(crate) fn begin_preemption(&self, now: Millis) -> Option<PassPreempt> {
        if !self.preemption_configured() {
            return None;
        }
        let n = self.queues.len();
        let mut may: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
        for (a, qa) in self.queues.iter().enumerate() {
            for (b, qb) in self.queues.iter().enumerate() {
                if let Some(p) = preempts(qa, qb) {
                    may[a].push((b, p));
                }
            }
        }
        let preemptable: Vec<bool> = (0..n)
            .map(|b| may.iter().any(|m| m.iter().any(|(x, _)| *x == b)))
            .collect();
        let qidx = |name: &str| self.queues.iter().position(|q| q.name == name);
        let mut victims = Vec::new();
        let mut waiting: Vec<(u32, i64, JobKey)> = Vec::new();
        for key in &self.counts.started {
            let Some(j) = self.jobs.get(key) else {
                continue;
            };
            let Some(qi) = qidx(&j.queue) else {
                continue;
            };
            let q = &self.queues[qi];
            if j.state == JobState::Ssusp && j.reasons & susp::MBD_PREEMPT != 0 {
                waiting.push((q.priority, j.start_time, *key));
                continue;
            }
            if j.state != JobState::Run
                || !preemptable[qi]
                || j.kill_ordered.is_some()
                || j.forced
                || !self.may_be_preempted(j, q, now)
            {
                continue;
            }
            let slots: Vec<usize> = j.hosts.iter().filter_map(|h| self.host_idx(h)).collect();
            if slots.is_empty() {
                continue;
            }
            victims.push(Victim {
                key: *key,
                qi,
                slots,
                user: j.sub.user.to_string(),
                exclusive: j.sub.options & basalt_core::job::sub::EXCLUSIVE != 0 && q.exclusive,
                start_ms: j.start_time.saturating_mul(1000),
                kill: q.terminate_on_preempt,
                taken: false,
            });
        }
        waiting.sort_by_key(|&(p, start, key)| (u32::MAX - p, start, key));
        Some(PassPreempt {
            may,
            victims,
            budget: self.cfg.preempt.max_preempt_jobs,
            waiting: waiting.into_iter().map(|(p, _, k)| (p, k)).collect(),
        })
    }

    /// MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME (its application
    /// profile's over its queue's over lsb.params') let job `j` be preempted now.
    pub(crate) fn may_be_preempted(&self, j: &crate::Job, q: &Queue, now: Millis) -> bool {
        let app = self.cfg.apps.get(j.sub.app());
        let p = &self.cfg.preempt;
        let max = app
            .and_then(|a| a.max_job_preempt)
            .or(q.max_job_preempt)
            .or(p.max_job_preempt);
        if max.is_some_and(|m| j.preempt_count >= m) {
            return false;
        }
        let run_time = app
            .and_then(|a| a.no_preempt_run_time)
            .or(q.no_preempt_run_time)
            .or(p.no_preempt_run_time);
        let finish_time = app
            .and_then(|a| a.no_preempt_finish_time)
            .or(q.no_preempt_finish_time)
            .or(p.no_preempt_finish_time);
        if run_time.is_none() && finish_time.is_none() {
            return true;
        }
        let limit = self.effective_rlimits(j)[crate::RLIMIT_RUN];
        let limit_ms = (limit > 0).then(|| limit.saturating_mul(1000));
        let ran = now - j.start_time.saturating_mul(1000);
        if let Some(t) = run_time.and_then(|t| t.millis(limit_ms))
            && ran >= t
        {
            return false;
        }
        if let (Some(t), Some(l)) = (finish_time.and_then(|t| t.millis(limit_ms)), limit_ms)
            && l - ran <= t
        {
            return false;
        }
        true
    }

    /// Does some queue take part in preemption (PREEMPTION)?
    fn preemption_configured(&self) -> bool {
        self.queues.iter().any(|q| !q.preempt.is_none())
    }

    /// How suspended jobs' per-user slots count in this pass (PREEMPT_FOR).
    pub(crate) fn susp_counts(&self) -> SuspCounts {
        let f = &self.cfg.preempt.preempt_for;
        SuspCounts {
            on: self.preemption_configured(),
            host_jlu: f.host_jlu,
            user_jlp: f.user_jlp,
            group_jlp: f.group_jlp,
        }
    }

    /// Whether a suspended job's slots count against limit `l` (lsb.users MAX_JOBS and
    /// lsb.resources Limits) while preemption is configured: a user's own total never
    /// counts them; a group's total (GROUP_MAX), per-processor limits (USER_JLP,
    /// GROUP_JLP) and per-host user limits (HOST_JLU) do unless PREEMPT_FOR says.
    pub(crate) fn limit_counts_suspended(&self, l: &crate::reslimits::ResLimit) -> bool {
        use crate::reslimits::Scope;
        let f = &self.cfg.preempt.preempt_for;
        let group = match &l.users {
            Scope::Any => return true,
            Scope::Together(m) => {
                m.all || m.names.len() != 1 || self.cfg.user_groups.contains_key(&l.name)
            }
            Scope::Each(_) => false,
        };
        if l.reason == pend::USER_LIMIT {
            return group && !f.group_max;
        }
        if l.slots_per_cpu.is_some() {
            return !(if group { f.group_jlp } else { f.user_jlp });
        }
        if matches!(l.hosts, Scope::Each(_)) {
            return !f.host_jlu;
        }
        !(group && f.group_max)
    }

    /// Resume the preempted jobs of queues of priority `min_prio` or more whose hosts
    /// have their slots free again; the hosts that changed.
    pub(crate) fn resume_preempted(
        &mut self,
        now: Millis,
        pp: &mut PassPreempt,
        min_prio: u32,
        st: &mut PassState,
        track_user: bool,
    ) -> Vec<usize> {
        let mut touched = Vec::new();
        while pp.waiting.front().is_some_and(|(p, _)| *p >= min_prio) {
            let Some((_, key)) = pp.waiting.pop_front() else {
                break;
            };
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let idx: Vec<usize> = j.hosts.iter().filter_map(|h| self.host_idx(h)).collect();
            let mut need: Vec<(usize, u32)> = Vec::new();
            for &i in &idx {
                match need.iter_mut().find(|(h, _)| *h == i) {
                    Some((_, n)) => *n += 1,
                    None => need.push((i, 1)),
                }
            }
            let fits = need.iter().all(|&(i, n)| {
                !st.excl[i]
                    && self.hosts[i]
                        .max_slots()
                        .is_none_or(|m| st.used[i] + n <= m)
            });
            if !fits {
                continue;
            }
            let user = j.sub.user.to_string();
            let (attempt, host) = (j.attempt, j.hosts.first().cloned());
            for &i in &idx {
                st.used[i] += 1;
                if track_user {
                    st.unsuspend_user(i, &user);
                }
            }
            touched.extend(idx);
            self.emit(state_change(secs(now), key, status::RUN, 0, 0));
            if let Some(host) = host {
                self.order_sbd(key, attempt, host, SbdAction::Resume);
            }
            self.await_confirmation(now, key);
        }
        touched
    }

    /// The job (`key`, of queue `qi`) does not fit on `shape`: the victims whose slots
    /// would let it start ([`Plan`]), their slots given to the pass (kept when they are
    /// to be killed). None: preemption cannot start it now.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn try_preempt(
        &self,
        now: Millis,
        accept_ms: i64,
        (key, qi): (JobKey, usize),
        pp: &mut PassPreempt,
        job: &JobFit,
        shape: &Shape,
        st: &mut PassState,
        statics: &[StaticWhy],
        n_alts: usize,
        n: (u32, u32, Option<super::allocate::Tile<'_>>),
        same: Option<&dyn Fn(usize) -> Vec<String>>,
        sc_counts: SuspCounts,
    ) -> Option<Plan> {
        if pp.may[qi].is_empty() || pp.budget == 0 {
            return None;
        }
        // Victims being killed for it: it waits for their slots.
        if let Some((until, victims)) = self.preempt_wait.get(&key)
            && now < *until
            && victims
                .iter()
                .any(|v| self.jobs.get(v).is_some_and(|j| j.state.is_started()))
        {
            return None;
        }
        let f = self.cfg.preempt.preempt_for;
        let order = self.victim_order(now, qi, pp, shape);
        if order.is_empty() {
            return None;
        }
        let mut sc = shape.clone();
        let mut chosen: Vec<usize> = Vec::new();
        let mut placed = None;
        for (vi, _) in order.iter().take(pp.budget as usize) {
            release(&pp.victims[*vi], st, sc_counts);
            chosen.push(*vi);
            self.refit(
                now,
                accept_ms,
                job,
                st,
                statics,
                &mut sc,
                &pp.victims[*vi].slots,
            );
            if let Some(p) = alts::place(&sc, n_alts, n, same) {
                placed = Some(p);
                break;
            }
        }
        let Some((mut alloc, mut alt)) = placed else {
            for &vi in &chosen {
                retake(&pp.victims[vi], st, sc_counts);
            }
            return None;
        };
        // Spare the victims on hosts it does not use; with MINI_JOB or OPTIMAL_MINI_JOB
        // also those it does not need (the last taken first).
        let mut keep: Vec<usize> = Vec::new();
        for &vi in chosen.iter().rev() {
            let v = &pp.victims[vi];
            if !v.slots.iter().any(|i| alloc.contains(i)) {
                retake(v, st, sc_counts);
                self.refit(now, accept_ms, job, st, statics, &mut sc, &v.slots);
                continue;
            }
            if f.mini_job || f.optimal_mini_job {
                retake(v, st, sc_counts);
                self.refit(now, accept_ms, job, st, statics, &mut sc, &v.slots);
                if let Some((a, b)) = alts::place(&sc, n_alts, n, same) {
                    alloc = a;
                    alt = b;
                    continue;
                }
                release(v, st, sc_counts);
                self.refit(now, accept_ms, job, st, statics, &mut sc, &v.slots);
            }
            keep.push(vi);
        }
        if keep.iter().any(|&vi| pp.victims[vi].kill) {
            // TERMINATE_WHEN = PREEMPT: the victims are killed; the job starts once
            // they are gone (their slots stay counted until then).
            let mut killed = Vec::new();
            for &vi in &keep {
                let v = &pp.victims[vi];
                retake(v, st, sc_counts);
                if v.kill {
                    killed.push(v.key);
                }
            }
            for &vi in &keep {
                pp.victims[vi].taken = true;
            }
            pp.budget = pp.budget.saturating_sub(killed.len() as u32);
            return Some(Plan::Kill(killed));
        }
        let mut hosts = Vec::new();
        let mut victims = Vec::new();
        for &vi in &keep {
            let v = &mut pp.victims[vi];
            v.taken = true;
            hosts.extend(v.slots.iter().copied());
            victims.push(v.key);
        }
        pp.budget = pp.budget.saturating_sub(keep.len() as u32);
        hosts.sort_unstable();
        hosts.dedup();
        Some(Plan::Start {
            alloc,
            alt,
            hosts,
            victims,
        })
    }

    /// The victims job of queue `qi` may take, in LSF's order (with their queue's
    /// preference): each holds a slot of a host the job could use but for its slots.
    fn victim_order(
        &self,
        now: Millis,
        qi: usize,
        pp: &PassPreempt,
        shape: &Shape,
    ) -> Vec<(usize, u32)> {
        let f = self.cfg.preempt.preempt_for;
        let nh = shape.why.len();
        let usable: Vec<bool> = (0..nh)
            .map(|i| {
                shape.cur[i].is_some()
                    || matches!(
                        shape.why[i],
                        Some(
                            pend::HOST_JOB_LIMIT
                                | pend::NOT_ENOUGH_SLOTS
                                | pend::SLOTS_RESERVED
                                | pend::NONEXCLUSIVE
                                | pend::HOST_USER_LIMIT
                                | pend::USER_PROC_LIMIT
                                | pend::GROUP_PROC_LIMIT
                                | pend::EXCLUSIVE
                        )
                    )
            })
            .collect();
        let load =
            |i: usize| (self.hosts[i].load.get("r15s").copied().unwrap_or(0.0) * 100.0) as i64;
        let mut order: Vec<(usize, u32)> = pp
            .victims
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.taken && v.slots.iter().any(|&i| usable[i]))
            .filter_map(|(vi, v)| {
                pp.may[qi]
                    .iter()
                    .find(|(b, _)| *b == v.qi)
                    .map(|(_, pref)| (vi, *pref))
            })
            .collect();
        order.sort_by_cached_key(|&(vi, pref)| {
            let v = &pp.victims[vi];
            let host = v
                .slots
                .iter()
                .copied()
                .filter(|&i| usable[i])
                .map(load)
                .min();
            let size = if f.optimal_mini_job {
                u32::MAX - v.slots.len() as u32
            } else {
                0
            };
            // LSF's order: the preferred queue, the lowest priority, the most recently
            // started; LEAST_RUN_TIME: the shortest run (wall clock) whatever its queue.
            let rest = if f.least_run_time {
                (now - v.start_ms, 0, 0)
            } else {
                (
                    i64::from(u32::MAX - pref),
                    self.queues[v.qi].priority,
                    -v.start_ms,
                )
            };
            (size, host, rest, std::cmp::Reverse(v.key))
        });
        order
    }

    /// Carry out the victims' part of a [`Plan`] for job `key`: suspend them (logged
    /// before its JOB_START) or order them killed and let it wait.
    pub(crate) fn preempt_victims(&mut self, now: Millis, key: JobKey, plan: &Plan) {
        match plan {
            Plan::Start { victims, .. } => {
                for v in victims {
                    self.suspend_for_preemption(now, *v, key);
                }
            }
            Plan::Kill(victims) => {
                for v in victims {
                    self.kill_for_preemption(now, *v);
                }
                let wait = i64::from(self.cfg.preempt.wait_time_secs) * 1000;
                self.preempt_wait.insert(key, (now + wait, victims.clone()));
            }
        }
    }

    /// Suspend `victim` for `by`: logged now (before `by`'s JOB_START), then ordered.
    fn suspend_for_preemption(&mut self, now: Millis, victim: JobKey, by: JobKey) {
        let Some(j) = self.jobs.get(&victim) else {
            return;
        };
        let (attempt, host) = (j.attempt, j.hosts.first().cloned());
        let reasons = susp::MBD_PREEMPT | susp::MBD_LOCK;
        self.emit(state_change(secs(now), victim, status::SSUSP, reasons, 0));
        if let Some(j) = self.jobs.get_mut(&victim) {
            j.preempted_by = Some(by);
        }
        if let Some(host) = host {
            self.order_sbd(
                victim,
                attempt,
                host,
                SbdAction::Stop {
                    state: status::SSUSP,
                    reasons,
                },
            );
        }
        self.await_confirmation(now, victim);
    }

    /// Kill `victim` for a higher-priority job (TERMINATE_WHEN = PREEMPT).
    fn kill_for_preemption(&mut self, now: Millis, victim: JobKey) {
        let Some(j) = self.jobs.get(&victim) else {
            return;
        };
        let (attempt, host) = (j.attempt, j.hosts.first().cloned());
        self.emit(crate::Event::JobSignal {
            time: secs(now),
            key: victim,
            uid: 0,
            user: "root".into(),
            signal: "KILL_PREEMPT".into(),
        });
        if let Some(host) = host {
            self.order_sbd(
                victim,
                attempt,
                host,
                SbdAction::Kill {
                    term_reason: "TERM_PREEMPT".into(),
                },
            );
        }
    }
}

/// A victim's slots given to the pass (as if suspended).
fn release(v: &Victim, st: &mut PassState, c: SuspCounts) {
    for &i in &v.slots {
        st.used[i] = st.used[i].saturating_sub(1);
        if c.on {
            st.suspend_user(i, &v.user);
        }
        if v.exclusive {
            st.excl[i] = false;
        }
    }
}

/// A victim's slots taken back (it keeps running).
fn retake(v: &Victim, st: &mut PassState, c: SuspCounts) {
    for &i in &v.slots {
        st.used[i] += 1;
        if c.on {
            st.unsuspend_user(i, &v.user);
        }
        if v.exclusive {
            st.excl[i] = true;
        }
    }
}
