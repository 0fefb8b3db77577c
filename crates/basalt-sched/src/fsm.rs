//! The event FSM: [`Sched::replay`], the one fold over lsb.events, and the step it folds
//! (`on_event`), the one function that changes logged state — live (through `emit`) and
//! on replay alike; what is derived from the log (submission tokens, per-queue pending
//! order, slot counters) is kept here too. [`Sched::start`] opens a term.

use crate::counts::RankSet;
use crate::depend::Expr;
use crate::{
    Event, GONE_KEEP_SECS, Gone, Job, JobKey, Millis, Sched, Str, Submission, array, depend, secs,
};
use basalt_core::job::{JobState, pend, status, sub2, susp};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Whose a submission token is. A token answers only requests of its own scope, so one
/// user's token (guessed, or reused by mistake) never gives another user their job, and
/// no local submission can pass for a forwarded one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TokenScope {
    /// A submission of this cluster's user (`JOB_NEW`'s user: the identity mbatchd
    /// proved, never what the request said).
    User(Str),
    /// A job the named cluster forwarded (MultiCluster): its token is
    /// `mc:<cluster>:<job>.<index>:<attempt>` ([`crate::mc::MC_TOKEN_PREFIX`]), a form
    /// mbatchd refuses from users ([`crate::bounds::check_submit_token`]).
    Cluster(Str),
}

/// A token in its scope.
pub(crate) type TokenKey = (TokenScope, Str);

/// What a token answers: the job, and the queue it went to as the first answer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenEntry {
    pub(crate) id: u64,
    pub(crate) queue: Str,
    /// No queue was asked for (`SUB_QUEUE` clear): "submitted to default queue".
    pub(crate) default_queue: bool,
}

/// The scope of a logged submission's token: a forwarding cluster's for the tokens
/// [`Sched::mc_accept`] makes, else the submitting user's.
fn token_scope(sub: &Submission) -> TokenScope {
    match crate::mc::forwarded_token_cluster(&sub.submit_token) {
        Some(cluster) => TokenScope::Cluster(Str::from(cluster)),
        None => TokenScope::User(sub.user.clone()),
    }
}

impl Sched {
    /// Apply logged events in order: mbatchd's reload of lsb.events, a rollback to the
    /// durable log, the records a log switch appends, `bevents replay`. Changes nothing
    /// but logged state; no effects are produced.
    pub fn replay<'a, I>(&mut self, events: I)
    where
        I: IntoIterator<Item = &'a Event>,
    {
        // A replay is followed by a full pass: nothing to remember as fresh.
        self.replaying = true;
        for ev in events {
            self.on_event(ev);
        }
        self.replaying = false;
        self.full_due = true;
    }

    /// Apply one logged event as it was applied live, with the pass it makes due (a
    /// submission: only the new job is visited) rather than a replay's full pass: a
    /// what-if simulation feeds a log's submissions in at their times this way.
    pub fn apply_logged(&mut self, ev: &Event) {
        self.on_event(ev);
    }

    /// The job that `user`'s submission token (a resent `bsub`'s) already created, if
    /// that job is still in memory or remembered as cleaned: (job id, queue, whether the
    /// queue was the default one), as [`Sched::submit`] answered the first time. A
    /// token only ever names a job of the user who sent it: the same token from another
    /// user is another submission.
    pub fn known_submission(&self, user: &str, token: &str) -> Option<(u64, String, bool)> {
        let e = self.token_entry(TokenScope::User(Str::from(user)), token)?;
        Some((e.id, e.queue.to_string(), e.default_queue))
    }

    /// The job that `cluster`'s forward with this token (see [`crate::mc`]) created.
    pub(crate) fn forwarded_submission(&self, cluster: &str, token: &str) -> Option<u64> {
        Some(
            self.token_entry(TokenScope::Cluster(Str::from(cluster)), token)?
                .id,
        )
    }

    fn token_entry(&self, scope: TokenScope, token: &str) -> Option<&TokenEntry> {
        if token.is_empty() {
            return None;
        }
        let e = self.tokens.get(&(scope, Str::from(token)))?;
        self.id_known(e.id).then_some(e)
    }

    /// Some element of job `id` is in memory or remembered as cleaned.
    fn id_known(&self, id: u64) -> bool {
        self.jobs.range((id, 0)..=(id, u32::MAX)).next().is_some()
            || self.gone.range((id, 0)..=(id, u32::MAX)).next().is_some()
    }

    /// The submission a job keeps: `sub` with the strings many jobs repeat (user, queue,
    /// hosts, directories, files, project...) taken from the pool, so each is kept once.
    /// Its own strings are copied, not shared with the event: a replay frees the events
    /// it read once applied, and what a job kept of them would pin their pages.
    pub(crate) fn interned(&mut self, sub: &Submission) -> Submission {
        let mut s = sub.clone();
        s.rlimits = self.strs.limits(&s.rlimits);
        for own in [
            &mut s.job_file,
            &mut s.depend_cond,
            &mut s.job_name,
            &mut s.command,
            &mut s.submit_token,
        ] {
            *own = Str::from(own.as_str());
        }
        self.strs.intern_all([
            &mut s.user,
            &mut s.queue,
            &mut s.res_req,
            &mut s.from_host,
            &mut s.cwd,
            &mut s.in_file,
            &mut s.out_file,
            &mut s.err_file,
            &mut s.sub_home_dir,
            &mut s.pre_exec,
            &mut s.mail_user,
            &mut s.project,
            &mut s.login_shell,
            &mut s.spec_cwd,
            &mut s.user_group,
        ]);
        s
    }

    /// Apply a logged event. Used for live operation (through `emit`) and for replay.
    pub(crate) fn on_event(&mut self, ev: &Event) {
        // sbatchd's accept and the job's execution details change nothing a scheduling
        // pass looks at (slots, pending jobs, dependencies): no pass for them. Nor does a
        // held submission (`bsub -H`), unless a pending job's dependency may name it.
        let passless = match ev {
            Event::JobStartAccept { .. } | Event::JobExecute { .. } => true,
            Event::JobNew { sub, .. } => {
                sub.options2 & sub2::HOLD != 0 && self.counts.pending_with_dep == 0
            }
            _ => false,
        };
        if !passless {
            // Submissions alone since the last pass (see `fresh_only`).
            self.fresh_only =
                matches!(ev, Event::JobNew { .. }) && (!self.dirty || self.fresh_only);
            self.dirty = true;
            // What leaves every other pending job's reasons as they are, as long as no
            // pending job has a dependency: a submission (the new job is visited), a
            // start, a job's end (its slots are taken again by the pass, or a host has a
            // free slot and the pass visits everything), a clean.
            let cheap = self.counts.pending_with_dep == 0
                && match ev {
                    Event::JobNew { .. } | Event::JobStart { .. } | Event::JobClean { .. } => true,
                    Event::JobStatus { status, .. } => {
                        *status == basalt_core::job::status::DONE
                            || *status == basalt_core::job::status::EXIT
                    }
                    _ => false,
                };
            if !cheap {
                self.full_due = true;
            }
        }

        match ev {
            Event::JobNew { time, job_id, sub } => {
                let _ = time;
                self.last_job_id = self.last_job_id.max(*job_id);
                self.next_seq += 1;
                // A reused id: what was remembered of the old job no longer applies.
                let old: Vec<JobKey> = self
                    .gone
                    .range((*job_id, 0)..=(*job_id, u32::MAX))
                    .map(|(k, _)| *k)
                    .collect();
                for k in old {
                    self.gone.remove(&k);
                }
                let hold = sub.options2 & sub2::HOLD != 0;
                let shared = Arc::new(self.interned(sub));
                if !shared.submit_token.is_empty() {
                    self.tokens.insert(
                        (token_scope(&shared), shared.submit_token.clone()),
                        TokenEntry {
                            id: *job_id,
                            queue: shared.queue.clone(),
                            default_queue: shared.options & basalt_core::job::sub::QUEUE == 0,
                        },
                    );
                }
                let dep = match depend::parse(&sub.depend_cond) {
                    Ok(e) => e.map(Arc::new),
                    // Accepted by another product or an older Basalt: never satisfied.
                    Err(_) => Some(Arc::new(Expr::Invalid)),
                };
                // A queue the configuration no longer has: lost_and_found.
                let queue = self.queue_or_lost(&shared.queue);
                let (indices, limit) = elements_of(&sub.job_name);
                for idx in indices {
                    self.next_order += 1;
                    let job = Job {
                        id: *job_id,
                        idx,
                        sub: shared.clone(),
                        seq: self.next_seq,
                        array_limit: limit,
                        dep: dep.clone(),
                        state: if hold {
                            JobState::Psusp
                        } else {
                            JobState::Pend
                        },
                        queue: queue.clone(),
                        order: self.next_order,
                        hosts: Vec::new(),
                        start_time: 0,
                        end_time: 0,
                        pid: 0,
                        pgid: 0,
                        exec_uid: 0,
                        exec_user: Str::EMPTY,
                        exec_home: Str::EMPTY,
                        exec_cwd: Str::EMPTY,
                        reasons: if hold { susp::USER_STOP } else { 0 },
                        subreasons: 0,
                        exit_status: 0,
                        cpu_time: 0.0,
                        term_reason: Str::EMPTY,
                        attempt: 0,
                        rusage_alt: 0,
                        used_req: None,
                        kill_as_done: false,
                        kill_ordered: None,
                        usage: None,
                        pend_reasons: new_job_reasons(),
                        last_seq: 0,
                        resume_sent: false,
                        forced: false,
                        no_stop: false,
                        pending_action: None,
                        requeues: None,
                        preempt_count: 0,
                        preempted_by: None,
                        mc: None,
                        chk: None,
                    };
                    self.counts.apply(&job, true);
                    if !hold && !self.replaying {
                        self.fresh.insert((*job_id, idx));
                    }
                    if let Some(old) = self.jobs.insert((*job_id, idx), Box::new(job)) {
                        self.counts.apply(&old, false);
                    }
                }
            }
            Event::JobStart {
                time,
                key,
                hosts,
                effective_res_req,
            } => {
                // The alternative of its rusage[] it reserves (only a job with several
                // logs one).
                // A compound or alternative requirement logs the one it uses.
                let multi = self
                    .jobs
                    .get(key)
                    .is_some_and(|j| basalt_config::compound::is_multi(&self.job_res_req(&j.sub)));
                let alt = match self.jobs.get(key) {
                    Some(j) if !multi && !effective_res_req.is_empty() => {
                        self.rusage_alt_of(j, effective_res_req)
                    }
                    _ => 0,
                };
                let used_req = (multi && !effective_res_req.is_empty())
                    .then(|| Box::from(effective_res_req.as_str()));
                if let Some(j) = self.jobs.get_mut(key) {
                    self.counts.apply(j, false);
                    j.state = JobState::Run;
                    j.hosts = hosts.clone();
                    j.rusage_alt = alt;
                    j.used_req = used_req;
                    j.start_time = *time;
                    j.attempt += 1;
                    j.pid = 0;
                    j.pgid = 0;
                    j.reasons = 0;
                    j.subreasons = 0;
                    j.last_seq = 0;
                    j.resume_sent = false;
                    j.kill_ordered = None;
                    j.pending_action = None;
                    j.pend_reasons = Arc::default();
                    // An order to an earlier attempt is answered by nobody.
                    if let Some(c) = j.chk.as_mut() {
                        c.in_flight = None;
                    }
                    self.counts.apply(j, true);
                }
                self.follow_periodic(*key);
            }
            Event::JobStartAccept { key, pid, pgid, .. } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.pid = *pid;
                    j.pgid = *pgid;
                }
            }
            Event::JobExecute {
                key,
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
                ..
            } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.exec_uid = *exec_uid;
                    j.exec_user = self.strs.intern_text(exec_user);
                    j.exec_home = self.strs.intern_text(exec_home);
                    j.exec_cwd = self.strs.intern_text(exec_cwd);
                    if *pid != 0 {
                        j.pid = *pid;
                    }
                }
            }
            Event::JobStatus {
                time,
                key,
                status: st,
                reasons,
                subreasons,
                cpu_time,
                end_time,
                usage,
                exit_status,
                term_reason,
            } => {
                // (Only an end feeds the fairshare history.)
                let keep_fs = *st & (status::DONE | status::EXIT) != 0 && self.fs_history_kept();
                let Some(j) = self.jobs.get_mut(key) else {
                    return;
                };
                let Some(new) = JobState::from_code(*st) else {
                    return;
                };
                let post = *st & (status::PDONE | status::PERR);
                if post != 0 && j.state.is_finished() {
                    // The post-execution status of a job that has ended.
                    j.requeues.get_or_insert_with(Default::default).post_bits = post;
                    return;
                }
                self.counts.apply(j, false);
                // (A preempted job bstopped and bresumed is still the same preemption.)
                let was_preempted = matches!(j.state, JobState::Ssusp | JobState::Ususp)
                    && j.reasons & susp::MBD_PREEMPT != 0;
                j.reasons = *reasons;
                j.subreasons = *subreasons;
                if new.is_finished() {
                    j.end_time = if *end_time > 0 { *end_time } else { *time };
                    j.exit_status = *exit_status;
                    j.cpu_time = *cpu_time;
                    if let Some(u) = usage {
                        j.usage = Some(Box::new(u.clone()));
                    }
                    let natural = new == JobState::Done && *exit_status == 0 && !j.kill_as_done;
                    j.term_reason = if !term_reason.is_empty() {
                        Str::from(term_reason)
                    } else if natural {
                        Str::EMPTY
                    } else {
                        j.kill_ordered.clone().unwrap_or_default()
                    };
                    j.pend_reasons = Arc::default();
                } else if new.is_pending() {
                    if let Some(r) = j.requeues.as_mut() {
                        r.requeue_to = 0;
                        r.requeue_reason = 0;
                    }
                    if j.state.is_finished() {
                        // brequeue of a finished job: it runs again from the start.
                        j.hosts.clear();
                        j.pid = 0;
                        j.pgid = 0;
                        j.start_time = 0;
                        j.end_time = 0;
                        j.exit_status = 0;
                        j.cpu_time = 0.0;
                        j.usage = None;
                        j.term_reason = Str::EMPTY;
                        j.kill_ordered = None;
                        j.kill_as_done = false;
                    }
                    if j.state.is_started() {
                        // A failed pre-execution command or a requeue by exit value:
                        // counted (their limits), the host excluded (EXCLUDE(...)) and the
                        // next try delayed by a scheduling interval (pre-execution).
                        if *reasons == pend::PRE_EXEC || *reasons == pend::RESTART_FILE {
                            let r = j.requeues.get_or_insert_with(Default::default);
                            if *reasons == pend::PRE_EXEC {
                                r.pre_exec_failures += 1;
                            }
                            r.not_before =
                                *time * 1000 + i64::from(self.cfg.mbd_sleep_time_secs) * 1000;
                            r.wait_reason = pend::PRE_EXEC;
                            if self.next_retry == 0 || r.not_before < self.next_retry {
                                self.next_retry = r.not_before;
                            }
                        } else if *reasons == pend::REQUEUED
                            && *subreasons & crate::sbd::REQUEUE_BY_VALUE != 0
                        {
                            let r = j.requeues.get_or_insert_with(Default::default);
                            r.by_exit_value += 1;
                            if *subreasons & crate::sbd::REQUEUE_EXCLUDE != 0
                                && let Some(h) = j.hosts.first()
                                && !r.excluded.contains(h)
                            {
                                r.excluded.push(h.clone());
                            }
                            // Not dispatched again before BASALT_REQUEUE_DELAY (from the
                            // logged time: a replay waits the same).
                            r.not_before =
                                *time * 1000 + i64::from(self.cfg.requeue_delay_secs) * 1000;
                            r.wait_reason = pend::REQUEUED;
                            if self.next_retry == 0 || r.not_before < self.next_retry {
                                self.next_retry = r.not_before;
                            }
                        }
                        // Requeued (dispatch failed or rerun): back to pending.
                        j.hosts.clear();
                        j.pid = 0;
                        j.pgid = 0;
                        j.start_time = 0;
                    }
                    if new == JobState::Pend && j.pend_reasons.is_empty() {
                        j.pend_reasons = new_job_reasons();
                    }
                    // MultiCluster: back from the remote cluster (counted when it could
                    // not start there); a PSUSP job bresume'd gets its tries again.
                    if let Some(m) = j.mc.as_mut() {
                        if *reasons == crate::mc::PEND_MC_RETURNED && new == JobState::Pend {
                            m.fwd_cluster = Str::EMPTY;
                            m.fwd_queue = Str::EMPTY;
                            m.remote_id = 0;
                            if crate::mc::counted(*subreasons) {
                                m.returns += 1;
                            }
                            j.pend_reasons = Arc::new(BTreeMap::from([(
                                crate::mc::PEND_MC_RETURNED,
                                Vec::new(),
                            )]));
                        } else if j.state == JobState::Psusp && new == JobState::Pend {
                            m.returns = 0;
                        }
                    }
                }
                if new == JobState::Run {
                    j.resume_sent = false;
                }
                // Preempted (seed 002): counted once per suspension, for MAX_JOB_PREEMPT.
                if new == JobState::Ssusp && *reasons & susp::MBD_PREEMPT != 0 && !was_preempted {
                    j.preempt_count += 1;
                }
                if *reasons & susp::MBD_PREEMPT == 0 {
                    j.preempted_by = None;
                }
                let rerun = is_rerun(j.state, new, *reasons);
                // Fairshare: a started job's end adds its CPU and run time to its user's
                // history in its queue.
                let fs_end =
                    (new.is_finished() && !j.state.is_finished() && j.start_time > 0 && keep_fs)
                        .then(|| {
                            (
                                j.queue.clone(),
                                j.sub.user.clone(),
                                j.hosts.first().cloned(),
                                j.end_time.saturating_mul(1000),
                                (
                                    j.cpu_time,
                                    (j.end_time - j.start_time).max(0) as f64,
                                    j.slots(),
                                ),
                            )
                        });
                let was_ssusp = j.state == JobState::Ssusp;
                j.state = new;
                self.counts.apply(j, true);
                // Since when the system has suspended it (automatic migration, MIG).
                if new == JobState::Ssusp {
                    if !was_ssusp {
                        self.ssusp_since.insert(*key, *time);
                    }
                } else if was_ssusp {
                    self.ssusp_since.remove(key);
                }
                if let Some((queue, user, host, at, used)) = fs_end {
                    self.fs_account_finish((&queue, &user, host.as_deref()), at, used);
                }
                if rerun {
                    // A rerun goes before the jobs pending in its queue.
                    self.apply_move(*key, 1, 1);
                }
            }
            Event::JobSignal {
                key, signal, user, ..
            } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    match signal.as_str() {
                        "KILL" | "KILL_DONE" | "KILL_REMOVE" => {
                            if signal == "KILL_DONE" {
                                j.kill_as_done = true;
                            }
                            let term = if *user == j.sub.user {
                                "TERM_OWNER"
                            } else {
                                "TERM_ADMIN"
                            };
                            j.kill_ordered.get_or_insert_with(|| term.into());
                        }
                        // Killed for a higher-priority job (TERMINATE_WHEN = PREEMPT).
                        "KILL_PREEMPT" => {
                            j.kill_ordered.get_or_insert_with(|| "TERM_PREEMPT".into());
                        }
                        "RESUME" => j.resume_sent = false,
                        "REQUEUE_PEND" | "REQUEUE_PSUSP" if j.state.is_started() => {
                            j.requeues.get_or_insert_with(Default::default).requeue_to =
                                if signal == "REQUEUE_PSUSP" {
                                    status::PSUSP
                                } else {
                                    status::PEND
                                };
                        }
                        _ => {}
                    }
                }
            }
            Event::JobSwitch { key, queue, .. } => {
                self.next_order += 1;
                let order = self.next_order;
                let queue = self.queue_or_lost(queue);
                if let Some(j) = self.jobs.get_mut(key) {
                    self.counts.apply(j, false);
                    j.queue = queue;
                    j.order = order;
                    if j.state.is_pending() {
                        j.pend_reasons = Arc::new(BTreeMap::from([(pend::SWITCHED, Vec::new())]));
                    }
                    self.counts.apply(j, true);
                }
            }
            Event::JobModify { key, change, .. } => self.apply_modify(*key, change),
            Event::JobForward {
                time,
                key,
                cluster,
                queue,
            } => self.apply_forward(*time, *key, cluster, queue),
            Event::JobAccept {
                time,
                key,
                cluster,
                src,
                attempt,
            } => self.apply_accept(*time, *key, cluster, *src, *attempt),
            Event::JobMove {
                key,
                position,
                base,
                ..
            } => self.apply_move(*key, *position, *base),
            Event::JobMigrate { key, hosts, .. } => {
                // Back to PEND once sbatchd has killed it (as brequeue; a checkpointable
                // job after its checkpoint), with its new candidate hosts.
                if let Some(j) = self.jobs.get_mut(key)
                    && j.state.is_started()
                {
                    let r = j.requeues.get_or_insert_with(Default::default);
                    r.requeue_to = status::PEND;
                    r.requeue_reason = pend::MIG;
                }
                if !hosts.is_empty() {
                    let m = crate::Modify {
                        hosts: crate::modify::Change::Set(hosts.clone()),
                        ..Default::default()
                    };
                    self.apply_modify(*key, &m);
                }
            }
            Event::ChkpntStart {
                time,
                key,
                flags,
                period,
            } => self.apply_chkpnt_start(*time, *key, *flags, *period),
            Event::ChkpntEnd {
                time,
                key,
                ok,
                flags,
                message,
                ..
            } => self.apply_chkpnt_end(*time, *key, *ok, *flags, message),
            Event::JobForce { key, no_stop, .. } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.forced = true;
                    j.no_stop = *no_stop;
                }
            }
            Event::JobClean { time, key } => {
                if let Some(j) = self.jobs.remove(key) {
                    self.counts.apply(&j, false);
                    self.num_remove_jobs += 1;
                    self.gone.insert(
                        *key,
                        Gone {
                            user: j.sub.user.to_string(),
                            job_name: j.sub.job_name.to_string(),
                            seq: j.seq,
                            state: j.state,
                            exit_status: j.exit_status,
                            cleaned: *time,
                        },
                    );
                    self.gone_order.push_back((*time, *key));
                }
                // Forget what is older than GONE_KEEP_SECS (decided by event times, so
                // replay forgets the same).
                while let Some(&(t, k)) = self.gone_order.front() {
                    if t >= *time - GONE_KEEP_SECS {
                        break;
                    }
                    self.gone_order.pop_front();
                    if self.gone.get(&k).is_some_and(|g| g.cleaned == t) {
                        self.gone.remove(&k);
                    }
                }
            }
            Event::QueueCtrl {
                op, queue, message, ..
            } => {
                if let Some(q) = self.queue_mut(queue) {
                    match op {
                        1 => q.open = true,
                        2 => q.open = false,
                        3 => q.active = true,
                        4 => q.active = false,
                        _ => {}
                    }
                    q.message = message.clone();
                }
            }
            Event::HostCtrl {
                op, host, message, ..
            } => {
                if let Some(h) = self.host_mut(host) {
                    match op {
                        1 => h.closed_adm = false,
                        2 => h.closed_adm = true,
                        _ => {}
                    }
                    h.message = message.clone();
                }
            }
            Event::MbdStart {
                time,
                master,
                epoch,
                ..
            } => {
                // Each MBD_START is a new term (the log need not carry the number).
                self.epoch = (self.epoch + 1).max(*epoch);
                self.mbd_start = Some((*time, master.clone()));
            }
            Event::MbdDie { .. } => {}
            Event::LogSwitch {
                time,
                last_job_id,
                fairshare,
            } => {
                // The ids of jobs cleaned before the switch are never given out again.
                self.last_job_id = self.last_job_id.max(*last_job_id);
                // The fairshare history it carries replaces what the carried jobs' ends
                // gave (it counts them already).
                if !fairshare.is_empty() {
                    self.fs_hist = fairshare
                        .iter()
                        .map(|(q, u, cpu, run)| {
                            let h = crate::fairshare::FsHist {
                                cpu_s: *cpu,
                                run_s: *run,
                                at: time.saturating_mul(1000),
                            };
                            ((Str::from(q.as_str()), Str::from(u.as_str())), h)
                        })
                        .collect();
                }
                self.num_remove_jobs = 0;
                // A switch carries only the cleaned jobs a dependency still names; the
                // rest are forgotten here, so the live core is what a replay of the new
                // file makes (and lsb.events does not grow with a week of cleaned jobs).
                let needed = self.gone_needed();
                self.gone.retain(|k, _| needed.contains(k));
                self.gone_order.retain(|(_, k)| needed.contains(k));
                // Tokens of jobs no longer known are not carried either.
                let tokens = std::mem::take(&mut self.tokens);
                self.tokens = tokens
                    .into_iter()
                    .filter(|(_, e)| self.id_known(e.id))
                    .collect();
            }
        }
    }

    pub(crate) fn apply_move(&mut self, key: JobKey, position: u32, base: u32) {
        let Some(queue) = self.jobs.get(&key).map(|j| j.queue.clone()) else {
            return;
        };
        // The queue's pending jobs in order (kept by the FSM), but the one that moves.
        let pending: Vec<(i64, JobKey)> = self
            .counts
            .pending
            .get(queue.as_str())
            .map(|set| set.iter().filter(|(_, k)| *k != key).copied().collect())
            .unwrap_or_default();
        let n = pending.len();
        let pos = (position.max(1) as usize - 1).min(n);
        let at = if base == 2 { n - pos } else { pos };
        let mut keys: Vec<JobKey> = pending.iter().map(|(_, k)| *k).collect();
        keys.insert(at, key);
        // Reuse the same set of order values, so jobs of other queues are unaffected.
        let mut orders: Vec<i64> = pending.iter().map(|(o, _)| *o).collect();
        if let Some(j) = self.jobs.get(&key) {
            orders.push(j.order);
        }
        orders.sort();
        let mut now_pending = Vec::with_capacity(keys.len());
        for (k, o) in keys.into_iter().zip(orders) {
            if let Some(j) = self.jobs.get_mut(&k) {
                j.order = o;
                if j.state.is_pending() {
                    now_pending.push((o, k));
                }
            }
        }
        now_pending.sort_unstable();
        self.counts
            .pending
            .insert(queue.to_string(), RankSet::from_sorted(now_pending));
    }

    /// Called once after replay: logs MBD_START with a new epoch.
    pub fn start(&mut self, now: Millis, master: &str) {
        self.started_at = now;
        for h in &mut self.hosts {
            h.sbd_seen = now;
        }
        let ev = Event::MbdStart {
            time: secs(now),
            master: master.to_string(),
            cluster: self.cfg.cluster.clone(),
            num_hosts: self.hosts.len() as u32,
            num_queues: self.cfg.queues.len() as u32,
            epoch: self.epoch + 1,
        };
        self.emit(ev);
    }
}

/// Does a JOB_STATUS from `from` to `to` with `reasons` requeue a job for a rerun (its
/// host was lost)? Such a job goes to the top of its queue's pending jobs.
/// A started job that goes back to PEND to run again — rerun after its host was lost,
/// requeued by exit value, or its pre-execution command failed — goes to the head of its
/// queue.
pub(crate) fn is_rerun(from: JobState, to: JobState, reasons: u32) -> bool {
    (from.is_started() || (from.is_finished() && reasons == pend::REQUEUED))
        && to == JobState::Pend
        && (reasons == pend::REQUEUED || reasons == pend::PRE_EXEC)
}

/// The elements a JOB_NEW with this job name creates, and the array's `%k` limit: an array
/// spec gives its indices (1..n), anything else one job (index 0).
pub(crate) fn elements_of(job_name: &str) -> (Vec<u32>, Option<u32>) {
    match array::parse(job_name) {
        Some(Ok(spec)) => {
            let ix = spec.indices();
            if ix.is_empty() {
                (vec![0], None)
            } else {
                (ix, spec.limit)
            }
        }
        _ => (vec![0], None),
    }
}

/// The pending reasons of a job no pass has looked at yet, one map shared by all.
pub(crate) fn new_job_reasons() -> Arc<BTreeMap<u32, Vec<String>>> {
    static NEW: std::sync::LazyLock<Arc<BTreeMap<u32, Vec<String>>>> =
        std::sync::LazyLock::new(|| Arc::new(BTreeMap::from([(pend::NEW_JOB, Vec::new())])));
    NEW.clone()
}
