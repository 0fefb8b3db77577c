//! A job's pre- and post-execution commands and eexec ([`Hook`]s): which it has
//! ([`Supervisor::plan_hooks`]: the queue's PRE_EXEC, `bsub -E`, eexec START before the
//! job; eexec END, `bsub -Ep`, the queue's POST_EXEC after it), starting each in turn
//! with the launcher ([`Supervisor::launch_step`]), and what each one's end means: the
//! next step, a failed pre-execution command (the job is requeued by mbatchd), or the
//! job's report once the post-execution commands are done. With JOB_INCLUDE_POSTPROC=N
//! (LSF's default) the job's end is recorded first (`ended`) and the post-execution
//! commands run after it ([`Supervisor::post_after_report`]), their status last
//! (`post_exec`); JOB_POSTPROC_TIMEOUT bounds them ([`Supervisor::hook_tick`]).

use super::launch::{self, Hook, Step, start_launcher};
use super::{At, FINISH_HELPER_LIMIT, Phase, Supervisor, now_secs};
use crate::state::{Event, EventKind};
use basalt_core::job::status as jstat;
use std::time::{Duration, Instant};

impl Supervisor {
    /// The job's pre- and post-execution commands, from its spec.
    pub(super) fn plan_hooks(&mut self) -> Result<(), String> {
        let spec = &self.spec;
        let user = match spec.pre_post_exec_user.trim() {
            "" => None,
            name => Some(launch::hook_identity(name, &self.launch.host)?),
        };
        let queue_hook = |cmd: &str| Hook {
            user: user.clone(),
            ..Hook::new(cmd, true, true)
        };
        // LSF_SERVERDIR/eexec, run as the job starts (LS_EXEC_T=START, after the
        // pre-execution commands) and ends (END, before the post-execution commands), as
        // the user or lsf.sudoers' LSF_EEXEC_USER, its standard input what the esubs
        // printed; the job waits for it, whatever its exit status.
        let eexec = self
            .launch
            .serverdir
            .as_deref()
            .map(|d| std::path::Path::new(d).join("eexec"))
            .filter(|p| basalt_config::is_executable(p));
        let eexec_hook = |path: &std::path::Path, when: &str| -> Result<Hook, String> {
            let user = match crate::sudoers::setting("LSF_EEXEC_USER") {
                Some(name) => Some(launch::hook_identity(&name, &self.launch.host)?),
                None => None,
            };
            Ok(Hook {
                user,
                env: vec![("LS_EXEC_T".to_owned(), when.to_owned())],
                checked: false,
                input: Some(spec.eexec_input.clone()),
                // The shell that invokes eexec stays its parent (LS_JOBPID is its pid).
                ..Hook::new(
                    &format!(
                        "{}; exit $?",
                        basalt_core::jobfile::sh_quote(&path.to_string_lossy())
                    ),
                    false,
                    false,
                )
            })
        };
        if !spec.queue_pre_cmd.trim().is_empty() {
            self.pre.push(queue_hook(&spec.queue_pre_cmd));
        }
        if !spec.pre_exec.trim().is_empty() {
            self.pre.push(Hook::new(&spec.pre_exec, false, false));
        }
        if let Some(p) = &eexec {
            self.pre.push(eexec_hook(p, "START")?);
            self.post.push(eexec_hook(p, "END")?);
        }
        // The job's own post-execution command (bsub -Ep) first, then the queue's.
        if !spec.post_exec.trim().is_empty() {
            self.post.push(Hook::new(&spec.post_exec, false, true));
        }
        if !spec.queue_post_cmd.trim().is_empty() {
            self.post.push(queue_hook(&spec.queue_post_cmd));
        }
        // JOB_INCLUDE_POSTPROC: the job's own LSB_JOB_INCLUDE_POSTPROC (exported by its
        // job file), else what mbatchd sent (the application profile's, else
        // lsb.params').
        // (The job file is read only for a job with post-execution commands.)
        let include = || {
            std::str::from_utf8(&spec.job_file)
                .ok()
                .and_then(|t| basalt_core::jobfile::exported(t, "LSB_JOB_INCLUDE_POSTPROC"))
                .and_then(|v| match v.trim().to_ascii_uppercase().as_str() {
                    "Y" => Some(true),
                    "N" => Some(false),
                    _ => None,
                })
                .unwrap_or(spec.include_postproc)
        };
        self.post_after_end = self.post.iter().any(|h| h.checked) && !include();
        Ok(())
    }

    /// A job whose end was just recorded (JOB_INCLUDE_POSTPROC=N): the `ended` event
    /// (mbatchd logs DONE or EXIT and frees its slot), then its post-execution commands.
    pub(super) fn post_after_report(&mut self, finished: Box<Event>) {
        let mut ended = (*finished).clone();
        ended.kind = EventKind::Ended;
        self.emit(ended);
        self.held_end = Some(finished);
        self.at = At::Post(0);
        self.job = None;
        self.main_status = None;
        self.launch_step();
    }

    /// While a pre- or post-execution command runs: the job's watch (limits, usage)
    /// and JOB_POSTPROC_TIMEOUT, which kills the post-execution commands (their status
    /// is then a failure, SIGKILL). After a reported end only the timeout is watched.
    pub(super) fn hook_tick(&mut self, now: Instant) -> Option<Instant> {
        let in_post = matches!(self.at, At::Post(_));
        if in_post
            && !self.post_timed_out
            && let Some(d) = self.post_deadline
            && now >= d
        {
            tracing::warn!(
                job = self.key.0,
                idx = self.key.1,
                "post-execution commands still running at JOB_POSTPROC_TIMEOUT; killed"
            );
            self.post_timed_out = true;
            self.post_status = Some(nix::sys::signal::Signal::SIGKILL as i32);
            if let Some(g) = self.job {
                let _ = nix::sys::signal::killpg(g, nix::sys::signal::Signal::SIGKILL);
            }
        }
        let deadline = self
            .post_deadline
            .filter(|_| in_post && !self.post_timed_out);
        if in_post && self.post_after_end {
            return deadline;
        }
        let next = self.running_tick(now);
        match (next, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Start the launcher for where the job is ([`At`]): a hook or the job itself.
    pub(super) fn launch_step(&mut self) {
        let step = match self.at {
            At::Pre(i) => self.pre.get(i).cloned().map(|mut h| {
                h.append = self.pre[..i].iter().any(|p| !p.quiet);
                Step::Hook(Box::new(h))
            }),
            At::Post(i) => self.post.get(i).cloned().map(|mut h| {
                if self.post_deadline.is_none() && self.spec.postproc_timeout_secs > 0 {
                    let limit = u64::from(self.spec.postproc_timeout_secs);
                    self.post_deadline = Some(Instant::now() + Duration::from_secs(limit));
                }
                h.append = true;
                let status = self.held_end.as_ref().map_or(0, |e| e.exit_status);
                h.env
                    .push(("LSB_JOBEXIT_STAT".to_owned(), status.to_string()));
                Step::Hook(Box::new(h))
            }),
            At::Restart => return self.start_restart(),
            At::Job => Some(Step::Job {
                append: self.pre.iter().any(|h| !h.quiet),
            }),
        };
        let (Some(step), Some(ident)) = (step, self.ident.as_ref()) else {
            return self.start_failed("no step to launch".to_owned());
        };
        match start_launcher(&self.spec, &self.launch, ident, step, self.notify.clone()) {
            Ok(rx) => self.phase = Phase::Launching { rx },
            Err(msg) if matches!(self.at, At::Post(_)) => {
                tracing::warn!(job = self.key.0, "post-execution command: {msg}");
                self.post_status = Some(127 << 8);
                self.end_after_post();
            }
            Err(msg) => self.start_failed(msg),
        }
    }

    /// A pre- or post-execution command ended with wait status `status`: the next step.
    pub(super) fn hook_ended(&mut self, status: i32, now: Instant) {
        match self.at {
            At::Pre(i) => {
                let killed = self.kill_deadline.is_some() || self.term_reason.is_some();
                if killed {
                    // Killed while its pre-execution ran: the job ends as killed.
                    self.close_ctl();
                    self.phase = Phase::Leftovers { until: now };
                    return;
                }
                if status != 0 && self.pre.get(i).is_none_or(|h| h.checked) {
                    return self.pre_exec_failed(status, now);
                }
                self.job = None;
                self.main_status = None;
                self.at = if i + 1 < self.pre.len() {
                    At::Pre(i + 1)
                } else {
                    self.main_step()
                };
                self.launch_step();
            }
            At::Post(i) => {
                let checked = self.post.get(i).is_some_and(|h| h.checked);
                if checked && !self.post_timed_out && (status != 0 || self.post_status.is_none()) {
                    self.post_status = Some(status);
                }
                self.job = None;
                self.main_status = None;
                if i + 1 < self.post.len() && !self.post_timed_out {
                    self.at = At::Post(i + 1);
                    self.launch_step();
                } else {
                    self.end_after_post();
                }
            }
            At::Restart | At::Job => {}
        }
    }

    /// A pre-execution command failed: the job did not run. Its files go (as the user),
    /// then the `finished` event says so (mbatchd requeues the job).
    fn pre_exec_failed(&mut self, status: i32, now: Instant) {
        tracing::info!(
            job = self.key.0,
            idx = self.key.1,
            "pre-execution command failed, wait status {status}"
        );
        self.close_ctl();
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        let finished = Event {
            kind: EventKind::Finished,
            time: now_secs(),
            pid,
            pgid: pid,
            state: jstat::EXIT,
            exit_status: status,
            pre_exec_failed: true,
            ..Default::default()
        };
        self.start_cleanup();
        self.phase = Phase::Reporting {
            until: now + FINISH_HELPER_LIMIT,
            finished: Box::new(finished),
        };
    }

    /// The post-execution commands are done: the job's report, then its end.
    pub(super) fn end_after_post(&mut self) {
        let Some(mut finished) = self.held_end.take() else {
            return;
        };
        if self.post_after_end {
            // The end is on record already: only the post-execution status is new.
            self.emit(Event {
                kind: EventKind::PostExec,
                state: finished.state,
                exit_status: finished.exit_status,
                post_exec: Some(self.post_status.unwrap_or(0)),
                ..Default::default()
            });
            self.phase = Phase::Ending;
            return;
        }
        finished.post_exec = self.post_status;
        if let Some(p) = self.pid_of(&finished) {
            self.job = Some(p);
        }
        self.start_report(&finished);
        self.phase = Phase::Reporting {
            until: Instant::now() + FINISH_HELPER_LIMIT,
            finished,
        };
    }

    fn pid_of(&self, e: &Event) -> Option<nix::unistd::Pid> {
        (e.pid != 0).then(|| nix::unistd::Pid::from_raw(e.pid as i32))
    }
}
