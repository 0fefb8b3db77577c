//! The event FSM: [`Sched::replay`], the one fold over lsb.events, and the step it folds
//! (`on_event`), the one function that changes logged state — live (through `emit`) and
//! on replay alike; what is derived from the log (submission tokens, per-queue pending
//! order, slot counters) is kept here too. [`Sched::start`] opens a term.

mod control;
mod job;
mod job_status;

use crate::counts::RankSet;

use crate::{Event, JobKey, Millis, Sched, Str, Submission, array, secs};
use basalt_core::job::{JobState, pend, sub2};
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

    /// Apply a logged event. Used for live operation (through `emit`) and for replay:
    /// what it makes due ([`Sched::note_pass_due`]), then one function per kind.
    pub(crate) fn on_event(&mut self, ev: &Event) {
        self.note_pass_due(ev);
        match ev {
            Event::JobNew { .. } => self.apply_job_new(ev),
            Event::JobStart { .. } => self.apply_job_start(ev),
            Event::JobStartAccept { key, pid, pgid, .. } => {
                if let Some(j) = self.jobs.get_mut(key) {
                    j.pid = *pid;
                    j.pgid = *pgid;
                }
            }
            Event::JobExecute { .. } => self.apply_job_execute(ev),
            Event::JobStatus { .. } => self.apply_job_status(ev),
            Event::JobSignal { .. } => self.apply_job_signal(ev),
            Event::JobSwitch { .. } => self.apply_job_switch(ev),
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
            Event::JobMigrate { .. } => self.apply_job_migrate(ev),
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
            Event::JobClean { .. } => self.apply_job_clean(ev),
            Event::QueueCtrl { .. } => self.apply_queue_ctrl(ev),
            Event::HostCtrl { .. } => self.apply_host_ctrl(ev),
            Event::MbdStart { .. } => self.apply_mbd_start(ev),
            Event::MbdDie { .. } => {}
            Event::LogSwitch { .. } => self.apply_log_switch(ev),
        }
    }

    /// What `ev` makes due: a pass (unless it changes nothing a pass looks at), and
    /// whether that pass must visit every pending job.
    fn note_pass_due(&mut self, ev: &Event) {
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
