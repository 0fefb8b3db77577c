//! Log switching (event-log.md §6): when to start a new lsb.events, and what it holds.
//!
//! LSF switches lsb.events once `MAX_JOB_NUM` finished jobs have been purged from memory
//! (JOB_CLEAN) since the last switch. The new file starts with the records of every job
//! still in memory (before the header's offset), then the current queue and host control
//! state and `LOG_SWITCH <lastJobId>` (after it). mbatchd replays only the current file,
//! so what is carried over must rebuild the whole state.
//!
//! [`Sched::carry_over`] does not keep raw history: it synthesizes, from the current
//! state, the events that rebuild it through `Sched::on_event` — the one mutation path —
//! in a fresh core built with the same configuration. What is rebuilt exactly: every job
//! in memory (its submission, array elements and `%k`, dependency, state and reasons,
//! queue, position in its queue, hosts, start and end times, pid/pgid, execution user,
//! exit status, cpu time, final usage, term reason, attempt number, kill orders, brun),
//! what is remembered of the cleaned jobs that a waiting job's dependency names (with the relative
//! submission order that `-w` by name relies on), the job-id counter, the epoch, and the
//! queue/host control state with its messages. What is not: state that is not logged
//! anyway (load, sbatchd contact, pending reasons of the last pass, reports in flight).
//!
//! Synthesized records keep the times the core knows (submit, start, end, clean times);
//! a record whose own time is not kept gets the job's latest known time before it, so each
//! job's history stays in order. The requester of a synthesized switch or move is the job's
//! owner; of brun and control records a cluster administrator; of a kill the owner or an
//! administrator, as the kill's term reason (TERM_OWNER / TERM_ADMIN) requires.

use crate::{Event, Job, JobKey, Millis, Sched, Str, Submission, elements_of, secs};
use basalt_core::job::{JobState, sub2, susp};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many MBD_START records are carried for the epoch (see
/// [`Sched::carry_over`]); an epoch counts mbatchd terms, so this is never reached.
const MAX_EPOCH_RECORDS: u64 = 100_000;

/// The records of a log switch, in the order they are written to the new lsb.events.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CarryOver {
    /// Before the new file's header offset: MBD_START records for the epoch, then the
    /// history of every job in memory and of the cleaned jobs still remembered.
    pub carried: Vec<Event>,
    /// After the header offset: the current queue and host control state (QUEUE_CTRL,
    /// HOST_CTRL), then `LOG_SWITCH <lastJobId>` (last).
    pub appended: Vec<Event>,
}

impl CarryOver {
    /// Every event, carried first: what a replay of the new file applies.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.carried.iter().chain(&self.appended)
    }
}

impl Sched {
    /// LSF's numRemoveJobs: finished jobs purged from memory (each JOB_CLEAN applied)
    /// since the last LOG_SWITCH, or since the start of the log replayed.
    pub fn num_remove_jobs(&self) -> u64 {
        self.num_remove_jobs
    }

    /// Time to switch lsb.events: `MAX_JOB_NUM` jobs purged since the last switch.
    pub fn switch_due(&self) -> bool {
        self.num_remove_jobs >= u64::from(self.cfg.max_job_num.max(1))
    }

    /// The contents of a new lsb.events (event-log.md §6): `carried` goes before the new
    /// header offset, `appended` after it. Replaying both ([`Sched::replay`]) into
    /// a fresh core built with the same configuration rebuilds this core's logged state.
    ///
    /// Call it only when every event applied so far is durable in the current file and no
    /// effect is waiting to be logged (right after a commit), so that nothing is both
    /// carried and appended later. Once the new file is in place, apply `appended` to this
    /// core with [`Sched::replay`] (it changes nothing but the purge count, which the
    /// LOG_SWITCH resets); never apply `carried` — it restates what this core holds.
    ///
    /// The epoch is carried as one MBD_START per term (epochs 1..=epoch), since a replayed
    /// MBD_START record counts one term whether or not it names its epoch.
    pub fn carry_over(&self, now: Millis) -> CarryOver {
        debug_assert!(
            self.effects.is_empty(),
            "carry_over with effects not yet logged"
        );
        let now_s = secs(now);
        let mut out = Vec::new();
        self.carry_terms(now_s, &mut out);
        // Of the cleaned jobs remembered, only those a dependency still names.
        let needed = self.gone_needed();
        let gone = || self.gone.iter().filter(|(k, _)| needed.contains(k));

        // Every job id that is remembered: its JOB_NEW position (seq) and submission.
        let mut groups: BTreeMap<u64, (u64, Submission)> = BTreeMap::new();
        for j in self.jobs.values() {
            groups
                .entry(j.id)
                .or_insert_with(|| (j.seq, (*j.sub).clone()));
        }
        for (k, g) in gone() {
            groups.entry(k.0).or_insert_with(|| {
                // Only the user and the name matter for a job that is cleaned again at
                // once; the rest is what a plain submission carries.
                let sub = Submission {
                    user: Str::from(&g.user),
                    job_name: Str::from(&g.job_name),
                    queue: Str::from(&self.cfg.default_queue),
                    num_processors: 1,
                    max_processors: 1,
                    rlimits: [-1; 11].into(),
                    submit_time: g.cleaned,
                    ..Default::default()
                };
                (g.seq, sub)
            });
        }
        let mut order: Vec<(u64, u64)> = groups.iter().map(|(id, (seq, _))| (*seq, *id)).collect();
        order.sort_unstable();

        // 1. JOB_NEW in submission order, with the JOB_SWITCHes of switched jobs placed
        //    where their position in the new queue comes out right. `fresh` is the order
        //    in which the replay gives the jobs in memory their queue positions.
        // (A job in lost_and_found because the configuration lost the queue it was
        // submitted to gets there again from its JOB_NEW: no JOB_SWITCH, so that it is
        // back in that queue if the queue comes back.)
        let mut switched: Vec<&Job> = self
            .jobs
            .values()
            .map(|j| &**j)
            .filter(|j| j.queue != j.sub.queue && !self.lost_by_config(j))
            .collect();
        switched.sort_by_key(|j| (j.order, j.key()));
        let mut next_switch = 0;
        let mut announced: BTreeSet<u64> = BTreeSet::new();
        let mut fresh = Stamps::default();
        let switch = |j: &Job, out: &mut Vec<Event>, fresh: &mut Stamps| {
            out.push(Event::JobSwitch {
                time: j.sub.submit_time,
                key: j.key(),
                uid: j.sub.uid,
                user: j.sub.user.to_string(),
                queue: j.queue.to_string(),
            });
            fresh.stamp(j.key());
        };
        for &(_, id) in &order {
            let Some((_, sub)) = groups.get(&id) else {
                continue;
            };
            let native = self
                .jobs
                .range((id, 0)..=(id, u32::MAX))
                .map(|(_, j)| j)
                .filter(|j| j.queue == j.sub.queue)
                .map(|j| j.order)
                .min();
            if let Some(stamp) = native {
                while let Some(j) = switched.get(next_switch)
                    && j.order < stamp
                    && announced.contains(&j.id)
                {
                    switch(j, &mut out, &mut fresh);
                    next_switch += 1;
                }
            }
            out.push(Event::JobNew {
                time: sub.submit_time,
                job_id: id,
                sub: Box::new(sub.clone()),
            });
            announced.insert(id);
            for idx in elements_of(&sub.job_name).0 {
                if self.jobs.contains_key(&(id, idx)) {
                    fresh.stamp((id, idx));
                }
            }
            // Elements bmod changed on their own (the group's submission is the first
            // element's).
            for (key, j) in self.jobs.range((id, 0)..=(id, u32::MAX)) {
                if *j.sub != *sub {
                    out.push(Event::JobModify {
                        time: sub.submit_time,
                        key: *key,
                        uid: j.sub.uid,
                        user: j.sub.user.to_string(),
                        umask: j.sub.umask,
                        change: Box::new(crate::Modify::between(sub, &j.sub)),
                    });
                }
            }
        }
        for j in &switched[next_switch.min(switched.len())..] {
            switch(j, &mut out, &mut fresh);
        }

        self.carry_cleaned(now_s, &order, &groups, &needed, &mut out);

        self.carry_positions(&fresh, &mut out);

        // 4. What became of each job in memory.
        for j in self.jobs.values() {
            self.job_history(j, &mut out);
        }

        // After the header offset: control state, then LOG_SWITCH.
        let appended = self.carry_controls(now_s);
        CarryOver {
            carried: out,
            appended,
        }
    }

    /// Cleaned elements (step 2): their final state and JOB_CLEAN, in the order they were
    /// cleaned. Elements cleaned so long ago that they are forgotten are cleaned first, at
    /// time 0, so that the first real JOB_CLEAN forgets them again.
    fn carry_cleaned(
        &self,
        now_s: i64,
        order: &[(u64, u64)],
        groups: &BTreeMap<u64, (u64, Submission)>,
        needed: &BTreeSet<JobKey>,
        out: &mut Vec<Event>,
    ) {
        let gone = || self.gone.iter().filter(|(k, _)| needed.contains(k));
        let mut forgotten: Vec<JobKey> = Vec::new();
        for &(_, id) in order {
            let Some((_, sub)) = groups.get(&id) else {
                continue;
            };
            for idx in elements_of(&sub.job_name).0 {
                let key = (id, idx);
                if self.jobs.contains_key(&key) {
                    continue;
                }
                match self.gone.get(&key).filter(|_| needed.contains(&key)) {
                    Some(g) => out.push(Event::JobStatus {
                        time: g.cleaned,
                        key,
                        status: g.state.code(),
                        reasons: 0,
                        subreasons: 0,
                        cpu_time: 0.0,
                        end_time: g.cleaned,
                        usage: None,
                        exit_status: g.exit_status,
                        term_reason: String::new(),
                    }),
                    None => forgotten.push(key),
                }
            }
        }
        for key in &forgotten {
            out.push(Event::JobClean { time: 0, key: *key });
        }
        let mut cleaned: BTreeSet<JobKey> = BTreeSet::new();
        for (t, k) in &self.gone_order {
            if needed.contains(k)
                && self.gone.get(k).is_some_and(|g| g.cleaned == *t)
                && cleaned.insert(*k)
            {
                out.push(Event::JobClean { time: *t, key: *k });
            }
        }
        for (k, g) in gone() {
            if cleaned.insert(*k) {
                out.push(Event::JobClean {
                    time: g.cleaned,
                    key: *k,
                });
            }
        }
        if needed.is_empty()
            && let Some(key) = forgotten.first()
        {
            // Nothing real is cleaned after them: one more JOB_CLEAN forgets them.
            out.push(Event::JobClean {
                time: now_s.max(crate::GONE_KEEP_SECS + 1),
                key: *key,
            });
        }
    }

    /// Positions (step 3): every job is still pending in the replay here, so JOB_MOVEs put
    /// each queue in its order; jobs already in order stay where they are.
    fn carry_positions(&self, fresh: &Stamps, out: &mut Vec<Event>) {
        let mut by_queue: BTreeMap<&str, Vec<&Job>> = BTreeMap::new();
        for j in self.jobs.values() {
            by_queue.entry(j.queue.as_str()).or_default().push(j);
        }
        for js in by_queue.values_mut() {
            js.sort_by_key(|j| (j.order, j.key()));
            let target: Vec<JobKey> = js.iter().map(|j| j.key()).collect();
            let mut now_order: Vec<JobKey> = target.clone();
            now_order.sort_by_key(|k| fresh.0.get(k).copied().unwrap_or(u64::MAX));
            let rank: BTreeMap<JobKey, usize> =
                target.iter().enumerate().map(|(i, k)| (*k, i)).collect();
            let ranks: Vec<usize> = now_order
                .iter()
                .map(|k| rank.get(k).copied().unwrap_or(0))
                .collect();
            let keep: BTreeSet<JobKey> = longest_increasing(&ranks)
                .into_iter()
                .map(|i| now_order[i])
                .collect();
            for (i, key) in target.iter().enumerate() {
                if keep.contains(key) {
                    continue;
                }
                now_order.retain(|k| k != key);
                let at = match i.checked_sub(1) {
                    None => 0,
                    Some(p) => {
                        now_order
                            .iter()
                            .position(|k| *k == target[p])
                            .unwrap_or(now_order.len())
                            + 1
                    }
                };
                now_order.insert(at.min(now_order.len()), *key);
                let j = js[i];
                out.push(Event::JobMove {
                    time: j.sub.submit_time,
                    key: *key,
                    uid: j.sub.uid,
                    user: j.sub.user.to_string(),
                    position: u32::try_from(at + 1).unwrap_or(u32::MAX),
                    base: 1,
                });
            }
        }
    }

    /// What follows the carried events in the new file: the queues' and hosts' control
    /// state, then LOG_SWITCH.
    fn carry_controls(&self, now_s: i64) -> Vec<Event> {
        let mut appended = Vec::new();
        let (uid, user) = self.switch_user("");
        for q in &self.queues {
            let mut ctl = |op: u32| {
                appended.push(Event::QueueCtrl {
                    time: now_s,
                    op,
                    queue: q.name.clone(),
                    uid,
                    user: user.clone(),
                    message: q.message.clone(),
                })
            };
            // What differs from the state a replay gives the queue: open and active, or
            // closed and inactive for the core's lost_and_found.
            let lf = self.is_lost_and_found(q);
            if q.open == lf {
                ctl(if q.open { 1 } else { 2 });
            }
            if q.active == lf {
                ctl(if q.active { 3 } else { 4 });
            }
            if q.open != lf && q.active != lf && !q.message.is_empty() {
                ctl(if q.open { 1 } else { 2 });
            }
        }
        for h in &self.hosts {
            if h.closed_adm || !h.message.is_empty() {
                appended.push(Event::HostCtrl {
                    time: now_s,
                    op: if h.closed_adm { 2 } else { 1 },
                    host: h.name.clone(),
                    uid,
                    user: user.clone(),
                    message: h.message.clone(),
                });
            }
        }
        appended.push(Event::LogSwitch {
            time: now_s,
            last_job_id: self.last_job_id,
            fairshare: self.fs_history(now_s * 1000),
        });
        appended
    }

    /// MBD_START records that make a replay arrive at this core's epoch.
    fn carry_terms(&self, now_s: i64, out: &mut Vec<Event>) {
        if self.epoch == 0 {
            return;
        }
        let (time, master) = self
            .mbd_start
            .clone()
            .unwrap_or_else(|| (now_s, String::new()));
        let first = self.epoch.saturating_sub(MAX_EPOCH_RECORDS - 1).max(1);
        for epoch in first..=self.epoch {
            out.push(Event::MbdStart {
                time,
                master: master.clone(),
                cluster: self.cfg.cluster.clone(),
                num_hosts: u32::try_from(self.hosts.len()).unwrap_or(u32::MAX),
                num_queues: u32::try_from(self.cfg.queues.len()).unwrap_or(u32::MAX),
                epoch,
            });
        }
    }

    /// Who a synthesized administrative record names: a cluster administrator (else
    /// root), never `not` (a kill by someone else than the owner must stay TERM_ADMIN).
    pub(crate) fn switch_user(&self, not: &str) -> (u32, String) {
        let name = self
            .cfg
            .admins
            .iter()
            .map(String::as_str)
            .chain(["root", "lsfadmin"])
            .find(|n| *n != not)
            .unwrap_or("root");
        (0, name.to_string())
    }

    /// The events after its JOB_NEW (and any JOB_SWITCH/JOB_MOVE) that bring a job to
    /// its current state. They are chosen against what `Sched::on_event` does: a
    /// JOB_START clears the pid, reasons and kill order and counts an attempt; a pending
    /// JOB_STATUS after a start is a requeue; a finishing JOB_STATUS derives the term
    /// reason from a kill order when it names none.
    fn job_history(&self, j: &Job, out: &mut Vec<Event>) {
        let s = &j.sub;
        let key = j.key();
        let hold = s.options2 & sub2::HOLD != 0;
        // (state, reasons, subreasons) the replay has at each step.
        let mut cur = if hold {
            (JobState::Psusp, susp::USER_STOP, 0)
        } else {
            (JobState::Pend, 0, 0)
        };
        // Is the job still in (or finished from) its last dispatch, or was it requeued?
        let dispatched = j.state.is_started()
            || (!j.state.is_pending()
                && (!j.hosts.is_empty() || j.start_time != 0 || j.pid != 0 || j.pgid != 0));
        let in_attempt = j.attempt > 0 && dispatched;
        let prior = j.attempt - u32::from(in_attempt);
        let executed = j.exec_uid != 0
            || !j.exec_user.is_empty()
            || !j.exec_home.is_empty()
            || !j.exec_cwd.is_empty();
        let mut t = s.submit_time;
        let status = |time: i64, st: (JobState, u32, u32)| Event::JobStatus {
            time,
            key,
            status: st.0.code(),
            reasons: st.1,
            subreasons: st.2,
            cpu_time: 0.0,
            end_time: 0,
            usage: None,
            exit_status: 0,
            term_reason: String::new(),
        };
        let signal = |time: i64, uid: u32, user: String, sig: &str| Event::JobSignal {
            time,
            key,
            uid,
            user,
            signal: sig.into(),
        };
        let execute = |time: i64, pid: u32| Event::JobExecute {
            time,
            key,
            exec_uid: j.exec_uid,
            exec_user: j.exec_user.to_string(),
            exec_home: j.exec_home.to_string(),
            exec_cwd: j.exec_cwd.to_string(),
            pid,
        };
        // Its preemptions (MAX_JOB_PREEMPT counts them from the log): each a suspension
        // for preemption and a resume, in the last dispatch; a job preempted now gets its
        // last one from its current state.
        let preempted_now =
            in_attempt && j.state == JobState::Ssusp && j.reasons & susp::MBD_PREEMPT != 0;
        let preemptions = j.preempt_count - u32::from(preempted_now && j.preempt_count > 0);
        let preempt_pairs = |out: &mut Vec<Event>, time: i64| {
            for _ in 0..preemptions {
                out.push(status(
                    time,
                    (JobState::Ssusp, susp::MBD_PREEMPT | susp::MBD_LOCK, 0),
                ));
                out.push(status(time, (JobState::Run, 0, 0)));
            }
        };
        // bkill -d whose kill order a later dispatch cleared: given before that dispatch.
        let early_kill_done = j.kill_as_done && j.kill_ordered.is_none();
        let admin = || self.switch_user(&s.user);
        if j.forced {
            let mut hosts: Vec<String> = Vec::new();
            for h in &j.hosts {
                if !hosts.contains(h) {
                    hosts.push(h.clone());
                }
            }
            let (uid, user) = admin();
            out.push(Event::JobForce {
                time: if in_attempt { j.start_time } else { t },
                key,
                uid,
                user,
                hosts,
                no_stop: j.no_stop,
            });
        }
        // Earlier attempts: dispatched, then requeued.
        for a in 1..=prior {
            let last = a == prior && !in_attempt;
            if early_kill_done && last {
                let (uid, user) = admin();
                out.push(signal(t, uid, user, "KILL_DONE"));
            }
            out.push(Event::JobStart {
                time: t,
                key,
                hosts: Vec::new(),
                effective_res_req: String::new(),
            });
            if executed && last {
                out.push(execute(t, 0));
            }
            if last {
                preempt_pairs(out, t);
            }
            // A rerun's requeue would put the job at the top of its queue again, after
            // the positions were set: it is requeued plainly, its reason set below.
            cur = if last
                && j.state.is_pending()
                && !crate::is_rerun(JobState::Run, j.state, j.reasons)
            {
                (j.state, j.reasons, j.subreasons)
            } else {
                (JobState::Pend, 0, 0)
            };
            out.push(status(t, cur));
        }
        if in_attempt {
            if early_kill_done {
                let (uid, user) = admin();
                out.push(signal(t, uid, user, "KILL_DONE"));
            }
            t = j.start_time;
            out.push(Event::JobStart {
                time: t,
                key,
                hosts: j.hosts.clone(),
                effective_res_req: self.effective_rusage(j),
            });
            cur = (JobState::Run, 0, 0);
            if j.pid != 0 || j.pgid != 0 {
                out.push(Event::JobStartAccept {
                    time: t,
                    key,
                    pid: j.pid,
                    pgid: j.pgid,
                });
            }
            if executed {
                out.push(execute(t, j.pid));
            }
            preempt_pairs(out, t);
        }
        let kill = j.kill_ordered.as_ref().map(|term| {
            let (uid, user) = if term == "TERM_OWNER" {
                (s.uid, s.user.to_string())
            } else {
                admin()
            };
            let sig = if term == "TERM_PREEMPT" {
                "KILL_PREEMPT"
            } else if j.kill_as_done {
                "KILL_DONE"
            } else {
                "KILL"
            };
            (uid, user, sig)
        });
        if j.state.is_finished() {
            // A finish naming no term reason would take it from a kill order given
            // before it: then the order follows the finish.
            let kill_first = !j.term_reason.is_empty();
            if kill_first && let Some((uid, user, sig)) = &kill {
                out.push(signal(j.end_time, *uid, user.clone(), sig));
            }
            out.push(Event::JobStatus {
                time: j.end_time,
                key,
                status: j.state.code(),
                reasons: j.reasons,
                subreasons: j.subreasons,
                cpu_time: j.cpu_time,
                end_time: j.end_time,
                usage: j
                    .usage
                    .as_deref()
                    .filter(|u| **u != crate::Usage::default())
                    .cloned(),
                exit_status: j.exit_status,
                term_reason: j.term_reason.to_string(),
            });
            if !kill_first && let Some((uid, user, sig)) = kill {
                out.push(signal(j.end_time, uid, user, sig));
            }
        } else {
            if let Some((uid, user, sig)) = kill {
                out.push(signal(t, uid, user, sig));
            }
            let want = (j.state, j.reasons, j.subreasons);
            if want != cur {
                out.push(status(t, want));
            }
        }
        self.carry_chkpnt(j, t, out);
    }
}

/// The order in which a replay gives jobs their queue positions (JOB_NEW and JOB_SWITCH
/// each take the next one).
#[derive(Default)]
struct Stamps(BTreeMap<JobKey, u64>, u64);

impl Stamps {
    fn stamp(&mut self, key: JobKey) {
        self.1 += 1;
        self.0.insert(key, self.1);
    }
}

/// Indices of one longest strictly increasing subsequence of `v`.
fn longest_increasing(v: &[usize]) -> Vec<usize> {
    // tails[k]: index of the smallest tail of an increasing run of length k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; v.len()];
    for i in 0..v.len() {
        let k = tails.partition_point(|&t| v[t] < v[i]);
        if k > 0 {
            prev[i] = Some(tails[k - 1]);
        }
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        out.push(i);
        at = prev[i];
    }
    out.reverse();
    out
}
