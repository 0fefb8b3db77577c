//! bsub: checking a submission and giving it a job id.
//!
//! A submission is refused with LSF's reason (`SchedError`) when it cannot run as asked:
//! among others a queue that does not exist, is closed or does not take the user (its
//! USERS, and a fairshare queue's share list: a user with no share is refused), a `-m`
//! host or host group the queue does not use (`H: Host or host group is not used by the
//! queue`), a resource requirement that does not parse (an unclosed `[` included) and a
//! `-w` condition naming a job mbatchd does not hold (`No matching job found`).

use crate::{
    Caller, Event, Millis, Sched, SchedError, Str, Submission, array, bounds, depend, limits, secs,
};

impl Sched {
    /// bsub. On success the job exists and its JOB_NEW is among the effects; the caller
    /// answers only after the effects are durable. Returns (job id, queue, default queue).
    /// The submission token must be one a user may send
    /// ([`bounds::check_submit_token`]); a known one is the caller's business
    /// ([`Sched::known_submission`]), checked before.
    pub fn submit(
        &mut self,
        now: Millis,
        caller: &Caller,
        s: Submission,
    ) -> Result<(u64, String, bool), SchedError> {
        bounds::check_submit_token(&s.submit_token)?;
        self.submit_any_token(now, caller, s)
    }

    /// [`Sched::submit`] with any token (a forwarded job's, [`Sched::mc_accept`]).
    pub(crate) fn submit_any_token(
        &mut self,
        now: Millis,
        caller: &Caller,
        mut s: Submission,
    ) -> Result<(u64, String, bool), SchedError> {
        let default = s.queue.is_empty();
        if default {
            s.queue = Str::from(&self.cfg.default_queue);
        }
        // SUB_QUEUE says whether a queue was asked for, as in LSF's JOB_NEW: what a
        // resent submission's answer is built from, here and after a replay.
        if default {
            s.options &= !basalt_core::job::sub::QUEUE;
        } else {
            s.options |= basalt_core::job::sub::QUEUE;
        }
        let admin = self.is_admin(caller);
        self.check_placement(&caller.user, admin, true, &mut s)?;
        self.check_dependency_targets(&caller.user, None, &s.depend_cond)?;
        if let Some(spec) = array::parse(&s.job_name) {
            let spec = spec.map_err(|e| match e {
                array::ArrayError::BadIndex => SchedError::BadArrayIndex,
                array::ArrayError::TooLarge => SchedError::ArrayTooLarge,
            })?;
            if spec.count() > u64::from(self.cfg.max_job_array_size) {
                return Err(SchedError::ArrayTooLarge);
            }
        }
        self.check_pend_limits(&caller.user, &s)?;
        s.user = Str::from(&caller.user);
        s.uid = caller.uid;
        if s.project.is_empty() {
            s.project = Str::from(&self.cfg.default_project);
        }
        let time = secs(now);
        s.submit_time = time;
        let id = self.next_job_id().ok_or(SchedError::NoJobId)?;
        s.job_file = format!("{time}.{id}").into();
        let queue = s.queue.to_string();
        self.emit(Event::JobNew {
            time,
            job_id: id,
            sub: Box::new(s),
        });
        Ok((id, queue, default))
    }

    /// What a submission (or a job's submission changed by bmod) must satisfy to be
    /// accepted for `user` (`admin`: a cluster administrator): its bounds, its resource
    /// requirement, its queue (existing, open, taking the user, its limits over the job's),
    /// its hosts (host groups expanded, `+N` stripped, names resolved; rewritten in `s`),
    /// its processors (min filled in) and its dependency condition. `s.queue` is set.
    /// `entering`: the job comes into `s.queue` (a submission, bmod -q), which must then
    /// be open and take the user; a job staying in its queue is not asked that again.
    pub(crate) fn check_placement(
        &self,
        user: &str,
        admin: bool,
        entering: bool,
        s: &mut Submission,
    ) -> Result<(), SchedError> {
        bounds::check_submission(s)?;
        // A select part that names no known resource or does not parse (issue 20).
        // A compound or alternative requirement is checked term by term below.
        let multi = basalt_config::compound::is_multi(&s.res_req);
        if !multi && !self.select_ok(&s.res_req) {
            return Err(SchedError::BadResReq);
        }
        let Some(q) = self.queue(&s.queue) else {
            return Err(SchedError::NoQueue);
        };
        if entering && !q.open {
            return Err(SchedError::QueueClosed);
        }
        if limits::exceeds(&s.rlimits, &q.rlimits) {
            return Err(SchedError::OverLimit);
        }
        // INTERACTIVE = NO / ONLY (lsb.queues).
        let interactive = s.options & basalt_core::job::sub::INTERACTIVE != 0;
        match (q.interactive.as_str(), interactive) {
            ("NO", true) => return Err(SchedError::NoInteractive),
            ("ONLY", false) => return Err(SchedError::OnlyInteractive),
            _ => {}
        }
        // Seed 001: "A job only runs exclusively if it is submitted to an exclusive
        // queue, and the job is submitted with the bsub -x option"; LSF refuses `-x` to
        // another queue.
        if s.options & basalt_core::job::sub::EXCLUSIVE != 0 && !q.exclusive {
            return Err(SchedError::NotExclusiveQueue);
        }
        if entering
            && ((!q.users_all && !q.users.iter().any(|u| u == user))
                || q.users_except.iter().any(|u| u == user))
            && !admin
        {
            return Err(SchedError::UserNotInQueue);
        }
        // A fairshare queue takes only the users its share list gives a share (LSF:
        // "Even cluster and queue administrators cannot submit jobs to a fair share
        // queue if they do not have a share assignment").
        if entering
            && !q.user_shares.is_empty()
            && self
                .share_path_of(&q.user_shares, user, &s.user_group)
                .is_none()
        {
            return Err(SchedError::UserNotInQueue);
        }
        // Each entry resolved to a host name (a host group to its hosts), its `+N`
        // preference level kept; `others` (or `all`) for every host not named.
        let mut asked: Vec<String> = Vec::new();
        let mut push = |name: String, level: Option<i64>| {
            if !asked
                .iter()
                .any(|e| crate::schedule::asked::split(e).0 == name)
            {
                asked.push(match level {
                    Some(l) => format!("{name}+{l}"),
                    None => name,
                });
            }
        };
        // A host or host group the queue does not use is refused (LSBE_QUEUE_HOST), with
        // the name as given; a group is when the queue uses none of its hosts.
        for h in &s.asked_hosts {
            let (name, level) = crate::schedule::asked::split(h);
            if name == "others" || name == "all" {
                push("others".to_owned(), level);
                continue;
            }
            // A host group of lsb.hosts stands for its hosts.
            if let Some(members) = self.cfg.host_groups.get(name) {
                let hosts: Vec<String> = members.iter().filter_map(|m| self.host_name(m)).collect();
                if hosts.is_empty() {
                    return Err(SchedError::BadHost);
                }
                if !hosts.iter().any(|n| q.uses_host(n)) {
                    return Err(SchedError::QueueHost(name.to_owned()));
                }
                for n in hosts {
                    push(n, level);
                }
                continue;
            }
            match self.host_name(name) {
                Some(n) if q.uses_host(&n) => push(n, level),
                Some(_) => return Err(SchedError::QueueHost(name.to_owned())),
                None => return Err(SchedError::BadHost),
            }
        }
        s.asked_hosts = asked;
        if s.max_processors != 0 && s.max_processors < s.num_processors {
            return Err(SchedError::BadArgument(
                "Bad argument for number of processors".into(),
            ));
        }
        s.num_processors = s.num_processors.max(1);
        s.max_processors = s.max_processors.max(s.num_processors);
        if multi {
            self.check_multi(s)?;
        }
        if depend::parse(&s.depend_cond).is_err() {
            return Err(SchedError::BadDependency);
        }
        Ok(())
    }

    /// The jobs a `-w` condition of `user` names must be jobs mbatchd holds (LSF refuses
    /// one that names none: "No matching job found"; a job cleaned from memory is not
    /// found either). `own`: the id of the job whose condition this is (bmod -w), which
    /// it cannot name. Checked at submission and bmod only: a logged condition is
    /// replayed as it was accepted, whatever became of the jobs it names.
    pub(crate) fn check_dependency_targets(
        &self,
        user: &str,
        own: Option<u64>,
        cond: &str,
    ) -> Result<(), SchedError> {
        let Ok(Some(expr)) = depend::parse(cond) else {
            return Ok(());
        };
        let mut missing = false;
        expr.for_each_target(&mut |t| {
            missing = missing || !self.dep_target_found(user, own, t);
        });
        if missing {
            return Err(SchedError::NoJob);
        }
        Ok(())
    }

    /// The id the next submission gets: after the highest id seen, wrapping at
    /// MAX_JOBID and skipping ids still in use (None when every one is).
    pub(crate) fn next_job_id(&self) -> Option<u64> {
        let max = u64::from(self.cfg.max_jobid.max(1));
        let mut id = self.last_job_id % max + 1;
        for _ in 0..max {
            if self.jobs.range((id, 0)..=(id, u32::MAX)).next().is_none() {
                return Some(id);
            }
            id = id % max + 1;
        }
        None
    }

    /// MAX_PEND_JOBS and MAX_PEND_SLOTS of lsb.params (the cluster's pending jobs and
    /// job slots) and of lsb.users (a user's, a group's): may `user` add the jobs of `s`
    /// (an array: its elements, each taking its `-n` minimum of slots)? The cluster's job
    /// total is O(queues); the other counts walk the pending jobs, and only when such a
    /// limit is set.
    fn check_pend_limits(&self, user: &str, s: &Submission) -> Result<(), SchedError> {
        let c = &self.cfg;
        if c.max_pend_jobs.is_none()
            && c.user_pend_limits.is_empty()
            && c.max_pend_slots.is_none()
            && c.user_pend_slot_limits.is_empty()
        {
            return Ok(());
        }
        let retry_secs = c.sub_try_interval;
        let adding = match array::parse(&s.job_name) {
            Some(Ok(spec)) => spec.count(),
            _ => 1,
        };
        let adding_slots = adding.saturating_mul(u64::from(s.num_processors.max(1)));
        let pending = || {
            self.counts
                .pending
                .values()
                .flat_map(|p| p.iter())
                .filter_map(|(_, k)| self.jobs.get(k).map(|j| &**j))
        };
        let slots = |j: &crate::Job| u64::from(j.sub.num_processors.max(1));
        if let Some(max) = c.max_pend_jobs {
            let n: usize = self.counts.pending.values().map(|p| p.len()).sum();
            if (n as u64).saturating_add(adding) > u64::from(max) {
                return Err(SchedError::PendLimit { retry_secs });
            }
        }
        if let Some(max) = c.max_pend_slots {
            let n: u64 = pending().map(slots).sum();
            if n.saturating_add(adding_slots) > u64::from(max) {
                return Err(SchedError::PendSlotLimit { retry_secs });
            }
        }
        // A user's own row counts their jobs; a group's row its members' together.
        let theirs = |scope: &crate::reslimits::Scope, alone: bool, j: &crate::Job| {
            if alone {
                j.sub.user == user
            } else {
                scope.has_member(&j.sub.user)
            }
        };
        for (scope, max) in &c.user_pend_limits {
            let Some(alone) = scope.covers(user) else {
                continue;
            };
            let n = pending().filter(|j| theirs(scope, alone, j)).count() as u64;
            if n.saturating_add(adding) > u64::from(*max) {
                return Err(SchedError::UserPendLimit { retry_secs });
            }
        }
        for (scope, max) in &c.user_pend_slot_limits {
            let Some(alone) = scope.covers(user) else {
                continue;
            };
            let n: u64 = pending()
                .filter(|j| theirs(scope, alone, j))
                .map(slots)
                .sum();
            if n.saturating_add(adding_slots) > u64::from(*max) {
                return Err(SchedError::UserPendSlotLimit { retry_secs });
            }
        }
        Ok(())
    }
}
