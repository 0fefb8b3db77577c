//! bmod: changing what a job was submitted with (LSF's `lsb_modify`, logged as
//! `JOB_MODIFY2`).
//!
//! A request ([`Modify`]) names, for each option, whether it is kept, set to a new value
//! or reset to its default (`-Xn`). The change is applied to the job's submission
//! ([`Modify::apply_to`]) and the result is held to everything a submission is held to
//! (queue, hosts, limits, resource requirement, dependency, ...): a change that would not
//! be accepted at `bsub` is refused with the same message, and nothing is logged.
//!
//! Pending jobs take every change. Started jobs take, as LSF does, a new resource
//! requirement (its `rusage[]` is what the job reserves from then on) and, when
//! `LSB_MOD_ALL_JOBS=Y` in lsf.conf, a new output or error file and rerunnable flag
//! (for its next run) and new CPU, memory and run limits, which its sbatchd is told at
//! once ([`crate::SbdAction::Limits`]) and enforces from then on. Anything else is
//! refused with LSF's `Job parameters cannot be changed now; non-repetitive job is
//! running`.
//!
//! bmod of a whole array changes its pending elements (and, for a change a started job
//! takes, its started ones); `bmod "id[i]"` changes one element. `-J "%k"` of a whole
//! array (LSF's `-J "%job_limit"`) changes only its limit on running elements, for
//! every element whatever its state; it is logged as LSF logs it, a JOB_MODIFY2 whose
//! job name is `%k` ([`Modify::array_limit`]). For one element it is refused; for an
//! ordinary job `%k` is a name like any other.

use crate::{
    Caller, Event, Job, JobKey, Millis, RLIMIT_RUN, Sched, SchedError, Str, SubExtras, Submission,
    array, secs,
};
use basalt_core::job::{sub, sub2};
use basalt_core::rlimit;
use std::sync::Arc;

/// What a bmod request does to one option.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Change<T> {
    #[default]
    Keep,
    Set(T),
    /// `-Xn`: back to the default (none, unlimited, off).
    Reset,
}

impl<T> Change<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Change::Keep)
    }
}

/// A bmod request: every option `bsub` takes, each kept, set or reset.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Modify {
    pub job_name: Change<String>,
    pub queue: Change<String>,
    pub hosts: Change<Vec<String>>,
    pub res_req: Change<String>,
    /// In `basalt_core::rlimit` order.
    pub rlimits: [Change<i64>; rlimit::COUNT],
    pub depend_cond: Change<String>,
    pub in_file: Change<String>,
    /// (path, overwrite: `-oo`).
    pub out_file: Change<(String, bool)>,
    pub err_file: Change<(String, bool)>,
    pub pre_exec: Change<String>,
    pub post_exec: Change<String>,
    pub mail_user: Change<String>,
    pub project: Change<String>,
    pub login_shell: Change<String>,
    /// `-n min[,max]`.
    pub procs: Change<(u32, u32)>,
    pub begin_time: Change<i64>,
    pub term_time: Change<i64>,
    pub exclusive: Change<()>,
    pub rerunnable: Change<()>,
    pub notify_begin: Change<()>,
    pub notify_end: Change<()>,
    pub requeue_exit_values: Change<String>,
    pub app: Change<String>,
    /// `-cwd`.
    pub spec_cwd: Change<String>,
    pub user_group: Change<String>,
    /// `-Z`: the job's new command line (a pending job's; never reset).
    pub command: Change<String>,
}

/// Set or clear `bit` in `bits` as `c` says.
fn flag<T>(bits: &mut u32, bit: u32, c: &Change<T>) {
    match c {
        Change::Keep => {}
        Change::Set(_) => *bits |= bit,
        Change::Reset => *bits &= !bit,
    }
}

/// A string option: its new value and option bit.
fn text(field: &mut Str, bits: &mut u32, bit: u32, c: &Change<String>) {
    match c {
        Change::Keep => {}
        Change::Set(v) => {
            *field = Str::from(v.as_str());
            *bits |= bit;
        }
        Change::Reset => {
            *field = Str::EMPTY;
            *bits &= !bit;
        }
    }
}

/// A field of the rarer part of a submission.
fn extra(field: &mut String, c: &Change<String>) {
    match c {
        Change::Keep => {}
        Change::Set(v) => v.clone_into(field),
        Change::Reset => field.clear(),
    }
}

impl Modify {
    /// Nothing is changed.
    pub fn is_empty(&self) -> bool {
        *self == Modify::default()
    }

    /// Only what a started job may take (with `LSB_MOD_ALL_JOBS=Y` when `all_jobs`).
    pub fn started_ok(&self, all_jobs: bool) -> bool {
        let mut rest = self.clone();
        rest.res_req = Change::Keep;
        if all_jobs {
            rest.out_file = Change::Keep;
            rest.err_file = Change::Keep;
            rest.rerunnable = Change::Keep;
            for i in [rlimit::CPU, rlimit::RSS, RLIMIT_RUN] {
                rest.rlimits[i] = Change::Keep;
            }
        }
        rest.is_empty()
    }

    /// `-J`: a new name keeps the array's index spec (`name[1-10]%2`); `-Jn` leaves the
    /// spec alone; a `%limit` alone changes the array's limit.
    fn apply_job_name(&self, s: &Submission, n: &mut Submission) {
        match &self.job_name {
            Change::Keep => {}
            Change::Set(v) => match array_limit_name(&s.job_name, v) {
                Some(name) => n.job_name = Str::from(name),
                None => {
                    let spec = s.job_name.find('[').map_or("", |i| &s.job_name[i..]);
                    n.job_name = Str::from(format!("{v}{spec}"));
                    n.options |= sub::JOB_NAME;
                }
            },
            Change::Reset => {
                let spec = s.job_name.find('[').map_or("", |i| &s.job_name[i..]);
                n.job_name = Str::from(spec);
                n.options &= !sub::JOB_NAME;
            }
        }
    }

    /// The submission `s` with the change made (option bits included). `-J` of an array
    /// keeps the array's index list; `-J "%k"` of an array changes only its limit.
    pub fn apply_to(&self, s: &Submission) -> Submission {
        let mut n = s.clone();
        self.apply_job_name(s, &mut n);
        text(&mut n.queue, &mut n.options, sub::QUEUE, &self.queue);
        match &self.hosts {
            Change::Keep => {}
            Change::Set(h) => {
                n.asked_hosts = h.clone();
                n.options |= sub::HOST;
            }
            Change::Reset => {
                n.asked_hosts.clear();
                n.options &= !sub::HOST;
            }
        }
        text(&mut n.res_req, &mut n.options, sub::RES_REQ, &self.res_req);
        if self.rlimits.iter().any(|c| !c.is_keep()) {
            let mut l = *s.rlimits;
            for (i, c) in self.rlimits.iter().enumerate() {
                match c {
                    Change::Keep => {}
                    Change::Set(v) => l[i] = *v,
                    Change::Reset => l[i] = -1,
                }
            }
            n.rlimits = Arc::new(l);
        }
        text(
            &mut n.depend_cond,
            &mut n.options,
            sub::DEPEND_COND,
            &self.depend_cond,
        );
        text(&mut n.in_file, &mut n.options, sub::IN_FILE, &self.in_file);
        for (c, field, bit, over) in [
            (
                &self.out_file,
                &mut n.out_file,
                sub::OUT_FILE,
                sub2::OUT_OVERWRITE,
            ),
            (
                &self.err_file,
                &mut n.err_file,
                sub::ERR_FILE,
                sub2::ERR_OVERWRITE,
            ),
        ] {
            match c {
                Change::Keep => {}
                Change::Set((path, overwrite)) => {
                    *field = Str::from(path.as_str());
                    n.options |= bit;
                    if *overwrite {
                        n.options2 |= over;
                    } else {
                        n.options2 &= !over;
                    }
                }
                Change::Reset => {
                    *field = Str::EMPTY;
                    n.options &= !bit;
                    n.options2 &= !over;
                }
            }
        }
        text(
            &mut n.pre_exec,
            &mut n.options,
            sub::PRE_EXEC,
            &self.pre_exec,
        );
        text(
            &mut n.mail_user,
            &mut n.options,
            sub::MAIL_USER,
            &self.mail_user,
        );
        // Reset: the cluster's default project (set by the caller of apply_to).
        text(&mut n.project, &mut n.options, 0, &self.project);
        text(
            &mut n.login_shell,
            &mut n.options,
            sub::LOGIN_SHELL,
            &self.login_shell,
        );
        text(
            &mut n.user_group,
            &mut n.options,
            sub::USER_GROUP,
            &self.user_group,
        );
        text(&mut n.spec_cwd, &mut 0, 0, &self.spec_cwd);
        if let Change::Set(c) = &self.command {
            // The job file keeps the command it was submitted with; dispatch puts this
            // one in its place (SUB2_MODIFY_CMD).
            n.command = Str::from(c.as_str());
            n.options2 |= sub2::MODIFY_CMD;
        }
        match self.procs {
            Change::Keep => {}
            Change::Set((min, max)) => {
                n.num_processors = min;
                n.max_processors = max;
            }
            Change::Reset => {
                n.num_processors = 1;
                n.max_processors = 1;
            }
        }
        for (c, field) in [
            (&self.begin_time, &mut n.begin_time),
            (&self.term_time, &mut n.term_time),
        ] {
            match c {
                Change::Keep => {}
                Change::Set(t) => *field = *t,
                Change::Reset => *field = 0,
            }
        }
        flag(&mut n.options, sub::EXCLUSIVE, &self.exclusive);
        flag(&mut n.options, sub::RERUNNABLE, &self.rerunnable);
        flag(&mut n.options, sub::NOTIFY_BEGIN, &self.notify_begin);
        flag(&mut n.options, sub::NOTIFY_END, &self.notify_end);
        if [&self.post_exec, &self.requeue_exit_values, &self.app]
            .iter()
            .any(|c| !c.is_keep())
        {
            let mut e = n.extras.take().map(|b| *b).unwrap_or_default();
            extra(&mut e.post_exec, &self.post_exec);
            extra(&mut e.requeue_exit_values, &self.requeue_exit_values);
            extra(&mut e.app, &self.app);
            n.extras = (e != SubExtras::default()).then(|| Box::new(e));
        }
        n
    }
}

/// `Set(to)` when `to` differs from `from` (`Reset` when `to` is the default).
fn diff_text(from: &str, to: &str) -> Change<String> {
    if from == to {
        Change::Keep
    } else if to.is_empty() {
        Change::Reset
    } else {
        Change::Set(to.to_owned())
    }
}

/// The change of an option bit.
fn diff_flag(from: u32, to: u32, bit: u32) -> Change<()> {
    match (from & bit != 0, to & bit != 0) {
        (false, true) => Change::Set(()),
        (true, false) => Change::Reset,
        _ => Change::Keep,
    }
}

/// The name of array `array_name` after `-J value` when `value` is LSF's `-J "%k"` (a new
/// limit on its running elements, the name kept); None otherwise.
fn array_limit_name(array_name: &str, value: &str) -> Option<String> {
    let Some(Ok(k)) = array::limit_change(value) else {
        return None;
    };
    array::with_limit(array_name, k)
}

impl Modify {
    /// `-J "%k"` (LSF's `-J "%job_limit"`): the array's new limit on its running
    /// elements, when that is what this change's job name is (`Some(Err)`: a limit LSF
    /// refuses). For an ordinary job such a name is a name like any other.
    pub fn array_limit(&self) -> Option<Result<u32, array::ArrayError>> {
        match &self.job_name {
            Change::Set(v) => array::limit_change(v),
            _ => None,
        }
    }

    /// The change that turns submission `from` into `to` (both of the same job; the
    /// queue, which bmod leaves in the submission, is not compared): how a log switch
    /// carries an element changed on its own.
    pub fn between(from: &Submission, to: &Submission) -> Modify {
        let name = |s: &Submission| s.job_name.split('[').next().unwrap_or("").to_owned();
        let file = |f: &Str, opts2: u32, bit: u32| (f.to_string(), opts2 & bit != 0);
        let files = |a: (String, bool), b: (String, bool)| {
            if a == b {
                Change::Keep
            } else if b.0.is_empty() {
                Change::Reset
            } else {
                Change::Set(b)
            }
        };
        let mut rlimits: [Change<i64>; rlimit::COUNT] = Default::default();
        for (i, c) in rlimits.iter_mut().enumerate() {
            let (a, b) = (from.rlimits[i], to.rlimits[i]);
            if a != b {
                *c = if b < 0 { Change::Reset } else { Change::Set(b) };
            }
        }
        let time = |a: i64, b: i64| {
            if a == b {
                Change::Keep
            } else if b == 0 {
                Change::Reset
            } else {
                Change::Set(b)
            }
        };
        let hosts = if from.asked_hosts == to.asked_hosts {
            Change::Keep
        } else if to.asked_hosts.is_empty() {
            Change::Reset
        } else {
            Change::Set(to.asked_hosts.clone())
        };
        let limit = array::limit_of(&to.job_name);
        let job_name = match diff_text(&name(from), &name(to)) {
            Change::Keep if limit.is_some() && limit != array::limit_of(&from.job_name) => {
                Change::Set(format!("%{}", limit.unwrap_or_default()))
            }
            other => other,
        };
        Modify {
            job_name,
            queue: Change::Keep,
            hosts,
            res_req: diff_text(&from.res_req, &to.res_req),
            rlimits,
            depend_cond: diff_text(&from.depend_cond, &to.depend_cond),
            in_file: diff_text(&from.in_file, &to.in_file),
            out_file: files(
                file(&from.out_file, from.options2, sub2::OUT_OVERWRITE),
                file(&to.out_file, to.options2, sub2::OUT_OVERWRITE),
            ),
            err_file: files(
                file(&from.err_file, from.options2, sub2::ERR_OVERWRITE),
                file(&to.err_file, to.options2, sub2::ERR_OVERWRITE),
            ),
            pre_exec: diff_text(&from.pre_exec, &to.pre_exec),
            post_exec: diff_text(from.post_exec(), to.post_exec()),
            mail_user: diff_text(&from.mail_user, &to.mail_user),
            project: diff_text(&from.project, &to.project),
            login_shell: diff_text(&from.login_shell, &to.login_shell),
            procs: if (from.num_processors, from.max_processors)
                == (to.num_processors, to.max_processors)
            {
                Change::Keep
            } else {
                Change::Set((to.num_processors, to.max_processors))
            },
            begin_time: time(from.begin_time, to.begin_time),
            term_time: time(from.term_time, to.term_time),
            exclusive: diff_flag(from.options, to.options, sub::EXCLUSIVE),
            rerunnable: diff_flag(from.options, to.options, sub::RERUNNABLE),
            notify_begin: diff_flag(from.options, to.options, sub::NOTIFY_BEGIN),
            notify_end: diff_flag(from.options, to.options, sub::NOTIFY_END),
            requeue_exit_values: diff_text(from.requeue_exit_values(), to.requeue_exit_values()),
            app: diff_text(from.app(), to.app()),
            spec_cwd: diff_text(&from.spec_cwd, &to.spec_cwd),
            user_group: diff_text(&from.user_group, &to.user_group),
            command: if from.command == to.command {
                Change::Keep
            } else {
                Change::Set(to.command.to_string())
            },
        }
    }
}

impl Sched {
    /// bmod of one job or array element (`key`), or of a whole array (`key.1 == 0` for
    /// an array's id). On success the JOB_MODIFY2 is among the effects.
    pub fn modify(
        &mut self,
        now: Millis,
        caller: &Caller,
        key: JobKey,
        mut m: Modify,
    ) -> Result<(), SchedError> {
        if m.is_empty() {
            return Err(SchedError::BadArgument("No parameter is changed".into()));
        }
        // `-J "%k"` of an array: its limit on running elements, whatever state its
        // elements are in; the other options go on as for any bmod of the array.
        let limit = self.array_limit_change(caller, key, &m)?;
        if limit.is_some() {
            let rest = Modify {
                job_name: Change::Keep,
                ..m.clone()
            };
            if rest.is_empty() {
                let umask = self
                    .jobs
                    .range((key.0, 1)..=(key.0, u32::MAX))
                    .next()
                    .map_or(0, |(_, j)| j.sub.umask);
                self.emit(Event::JobModify {
                    time: secs(now),
                    key,
                    uid: caller.uid,
                    user: caller.user.clone(),
                    umask,
                    change: Box::new(m),
                });
                return Ok(());
            }
            m = rest;
        }
        // The jobs the change is for: the job, the element, or an array's unfinished
        // elements (its pending ones unless a started job takes the change).
        let targets = self.modify_targets(key, &m);
        let Some(&first) = targets.first() else {
            // An array with no element the change is for: finished, or started and the
            // change is not one a started job takes.
            let (mut any, mut started) = (false, false);
            for (_, j) in self.jobs.range((key.0, 0)..=(key.0, u32::MAX)) {
                if !self.may_control(caller, j) {
                    return Err(SchedError::Permission);
                }
                any = true;
                started |= j.state.is_started();
            }
            return Err(if !any {
                SchedError::NoJob
            } else if started {
                SchedError::ModifyRunning
            } else {
                SchedError::Finished
            });
        };
        let j = self.control_target(caller, first)?;
        if j.state.is_started() && !m.started_ok(self.cfg.mod_all_jobs) {
            return Err(SchedError::ModifyRunning);
        }
        // A started job of a compound or alternative requirement keeps the one it uses;
        // a started job cannot take one either (its slots are placed already).
        if j.state.is_started()
            && m.res_req != Change::Keep
            && (j.used_req.is_some()
                || matches!(&m.res_req, Change::Set(r) if basalt_config::compound::is_multi(r)))
        {
            return Err(SchedError::ModifyRunning);
        }
        if m.queue == Change::Reset {
            m.queue = Change::Set(self.cfg.default_queue.clone());
        }
        if let Change::Set(name) = &m.job_name
            && (name.contains('[') || name.contains(']'))
        {
            return Err(SchedError::BadJobName);
        }
        match &m.command {
            Change::Set(c) if c.trim().is_empty() => {
                return Err(SchedError::BadArgument("Bad argument".into()));
            }
            Change::Reset => m.command = Change::Keep,
            _ => {}
        }
        let mut new = m.apply_to(&j.sub);
        if m.project == Change::Reset {
            new.project = Str::from(&self.cfg.default_project);
        }
        // Checked in the queue the job will be in: the one -q names (which must take
        // it), else the one it is in now (bswitch may have moved it).
        let entering = !m.queue.is_keep();
        if !entering {
            new.queue = j.queue.clone();
        }
        self.check_changed(caller, j, entering, &mut new)?;
        // A new -w condition names jobs mbatchd holds, as at submission.
        if let Change::Set(cond) = &m.depend_cond {
            self.check_dependency_targets(&j.sub.user, Some(key.0), cond)?;
        }
        if new.begin_time != 0 && new.term_time != 0 && new.begin_time > new.term_time {
            return Err(SchedError::StartAfterTerm);
        }
        // The hosts as the scheduler knows them (groups expanded, names resolved).
        if !m.hosts.is_keep() {
            m.hosts = if new.asked_hosts.is_empty() {
                Change::Reset
            } else {
                Change::Set(new.asked_hosts.clone())
            };
        }
        if !m.procs.is_keep() {
            m.procs = Change::Set((new.num_processors, new.max_processors));
        }
        if m.project == Change::Reset {
            m.project = Change::Set(new.project.to_string());
        }
        let umask = j.sub.umask;
        let limits_changed = m.rlimits.iter().any(|c| !c.is_keep());
        if let Some(name) = limit {
            m.job_name = Change::Set(name);
        }
        self.emit(Event::JobModify {
            time: secs(now),
            key,
            uid: caller.uid,
            user: caller.user.clone(),
            umask,
            change: Box::new(m),
        });
        // A running job's sbatchd enforces its new limits from now on.
        if limits_changed {
            for k in targets {
                let Some(j) = self.jobs.get(&k).filter(|j| j.state.is_started()) else {
                    continue;
                };
                let Some(host) = j.hosts.first().cloned() else {
                    continue;
                };
                let (attempt, limits) = (j.attempt, self.effective_rlimits(j));
                self.order_sbd(k, attempt, host, crate::SbdAction::Limits(limits));
            }
        }
        Ok(())
    }

    /// `-J "%k"` of job `key` by `caller`: the job name to log (`%k`) when the change is
    /// a new limit on the running elements of array `key` (LSF changes nothing else for
    /// it: the array keeps its name). For one element it is refused, as LSF refuses it
    /// (LSBE_MOD_JOB_NAME: the limit is the array's); a limit of 0 is refused as bsub
    /// refuses it. None: not such a change (an ordinary job takes `%k` as its new name).
    fn array_limit_change(
        &self,
        caller: &Caller,
        key: JobKey,
        m: &Modify,
    ) -> Result<Option<String>, SchedError> {
        let Some(limit) = m.array_limit() else {
            return Ok(None);
        };
        if self.jobs.contains_key(&key) && key.1 == 0 {
            return Ok(None);
        }
        let range = if key.1 == 0 {
            (key.0, 1)..=(key.0, u32::MAX)
        } else {
            key..=key
        };
        let mut elements = self.jobs.range(range).map(|(_, j)| j).peekable();
        let Some(first) = elements.peek() else {
            return Err(SchedError::NoJob);
        };
        if !self.may_control(caller, first) {
            return Err(SchedError::Permission);
        }
        if key.1 != 0 {
            return Err(SchedError::ArrayNameChange);
        }
        if elements.all(|j| j.state.is_finished()) {
            return Err(SchedError::Finished);
        }
        match limit {
            Ok(k) => Ok(Some(format!("%{k}"))),
            Err(_) => Err(SchedError::BadArrayIndex),
        }
    }

    /// [`Sched::check_placement`] of `new`, job `j`'s submission changed by `caller`
    /// (bmod, bmig -m): for the job's owner, as an administrator when the caller or the
    /// owner is one.
    pub(crate) fn check_changed(
        &self,
        caller: &Caller,
        j: &Job,
        entering: bool,
        new: &mut Submission,
    ) -> Result<(), SchedError> {
        let owner = j.sub.user.to_string();
        let admin = self.is_admin(caller)
            || self.is_admin(&Caller {
                uid: j.sub.uid,
                user: owner.clone(),
                host: String::new(),
            });
        self.check_placement(&owner, admin, entering, new)
    }

    /// The jobs a change of `key` applies to (see [`Sched::modify`]).
    pub(crate) fn modify_targets(&self, key: JobKey, m: &Modify) -> Vec<JobKey> {
        if self.jobs.contains_key(&key) {
            return vec![key];
        }
        if key.1 != 0 {
            return Vec::new();
        }
        let started_too = m.started_ok(true);
        self.jobs
            .range((key.0, 1)..=(key.0, u32::MAX))
            .filter(|(_, j)| !j.state.is_finished() && (j.state.is_pending() || started_too))
            .map(|(k, _)| *k)
            .collect()
    }
}

impl Sched {
    /// Apply a logged JOB_MODIFY2 (live and in replay).
    pub(crate) fn apply_modify(&mut self, key: JobKey, m: &Modify) {
        let rest;
        let m = match m.array_limit() {
            // `-J "%k"` of an array: every element in memory takes the limit; the rest
            // of the change goes to the elements it is for.
            Some(Ok(k)) if !self.jobs.contains_key(&(key.0, 0)) => {
                self.apply_array_limit(key.0, k);
                rest = Modify {
                    job_name: Change::Keep,
                    ..m.clone()
                };
                if rest.is_empty() {
                    return;
                }
                &rest
            }
            _ => m,
        };
        // Elements sharing one submission keep sharing the changed one.
        let mut changed: Vec<(*const Submission, Arc<Submission>)> = Vec::new();
        for k in self.modify_targets(key, m) {
            let Some(old) = self.jobs.get(&k).map(|j| j.sub.clone()) else {
                continue;
            };
            let new = match changed.iter().find(|(p, _)| *p == Arc::as_ptr(&old)) {
                Some((_, n)) => n.clone(),
                None => {
                    // -q moves the job as bswitch does: the submission keeps the queue it
                    // was submitted to.
                    let mut n = m.apply_to(&old);
                    n.queue = old.queue.clone();
                    n.options = (n.options & !sub::QUEUE) | (old.options & sub::QUEUE);
                    let n = Arc::new(self.interned(&n));
                    changed.push((Arc::as_ptr(&old), n.clone()));
                    n
                }
            };
            let queue = match &m.queue {
                Change::Set(q) if self.jobs.get(&k).is_some_and(|j| j.queue != q.as_str()) => {
                    self.next_order += 1;
                    Some((self.queue_or_lost(q), self.next_order))
                }
                _ => None,
            };
            let Some(j) = self.jobs.get_mut(&k) else {
                continue;
            };
            self.counts.apply(j, false);
            if !m.depend_cond.is_keep() {
                j.dep = match crate::depend::parse(&new.depend_cond) {
                    Ok(e) => e.map(Arc::new),
                    Err(_) => Some(Arc::new(crate::depend::Expr::Invalid)),
                };
            }
            if let Some((q, order)) = queue {
                j.queue = q;
                j.order = order;
            }
            j.sub = new;
            self.counts.apply(j, true);
        }
    }

    /// Array `id`'s limit on running elements is now `limit` (bmod `-J "%k"`): each
    /// element in memory, whatever its state, counts it and its name shows it
    /// (`arr[1-10]%k`).
    fn apply_array_limit(&mut self, id: u64, limit: u32) {
        let keys: Vec<JobKey> = self
            .jobs
            .range((id, 1)..=(id, u32::MAX))
            .map(|(k, _)| *k)
            .collect();
        let mut changed: Vec<(*const Submission, Arc<Submission>)> = Vec::new();
        for k in keys {
            let Some(old) = self.jobs.get(&k).map(|j| j.sub.clone()) else {
                continue;
            };
            let new = match changed.iter().find(|(p, _)| *p == Arc::as_ptr(&old)) {
                Some((_, n)) => n.clone(),
                None => {
                    let mut n = (*old).clone();
                    if let Some(name) = array::with_limit(&old.job_name, limit) {
                        n.job_name = Str::from(name);
                    }
                    let n = Arc::new(self.interned(&n));
                    changed.push((Arc::as_ptr(&old), n.clone()));
                    n
                }
            };
            let Some(j) = self.jobs.get_mut(&k) else {
                continue;
            };
            self.counts.apply(j, false);
            j.array_limit = Some(limit);
            j.sub = new;
            self.counts.apply(j, true);
        }
    }
}
