//! sbatchd's reports on a job (started, executing, usage, state, finished, pre- and
//! post-execution, checkpoint, start failure), turned into the events they mean.

use super::*;

impl Sched {
    /// Apply one sbatchd report (idempotent for repeats).
    pub fn report(&mut self, now: Millis, r: Report) -> Ack {
        let Some(j) = self.jobs.get(&r.key) else {
            return Ack::NoJob;
        };
        if r.attempt != j.attempt {
            return Ack::StopJob;
        }
        if let ReportKind::PostExec { status: p } = r.kind {
            // JOB_INCLUDE_POSTPROC=N: the post-execution commands of a job that has
            // ended are done (logged once; a repeat or a requeued job changes nothing).
            let (st, exit_status, cpu_time, end) =
                (j.state.code(), j.exit_status, j.cpu_time, j.end_time);
            let logged = j.requeues.as_ref().is_some_and(|q| q.post_bits != 0);
            if j.state.is_finished() && !logged {
                let t = if r.time > 0 { r.time } else { secs(now) };
                self.post_exec_done(t, r.key, st, exit_status, cpu_time, end, p);
            }
            return Ack::Ok;
        }
        if j.state.is_finished() || j.state.is_pending() {
            // Removed (bkill -r) or requeued meanwhile: the copy must go.
            return if matches!(
                r.kind,
                ReportKind::Finished { .. } | ReportKind::StartFailed { .. }
            ) {
                Ack::Ok
            } else {
                Ack::StopJob
            };
        }
        if r.seq != 0 && r.seq <= j.last_seq {
            return Ack::Ok;
        }
        let key = r.key;
        let t = if r.time > 0 { r.time } else { secs(now) };
        if let Some(j) = self.jobs.get_mut(&key) {
            j.last_seq = r.seq;
        }
        match r.kind {
            ReportKind::Started { pid, pgid } => {
                if self.jobs.get(&key).is_some_and(|j| j.pid == 0) {
                    self.emit(Event::JobStartAccept {
                        time: t,
                        key,
                        pid,
                        pgid,
                    });
                    self.flush_pending(key);
                }
            }
            ReportKind::Executing {
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
            } => self.emit(Event::JobExecute {
                time: t,
                key,
                exec_uid,
                exec_user,
                exec_home,
                exec_cwd,
                pid,
            }),
            ReportKind::Usage(u) => {
                if let Some(j) = self.jobs.get_mut(&key) {
                    j.usage = Some(Box::new(Usage { time: t, ..u }));
                }
            }
            ReportKind::State {
                state,
                reasons,
                subreasons,
            } => self.report_state(now, t, key, (state, reasons, subreasons)),
            ReportKind::Finished {
                exit_status,
                usage,
                term_reason,
                post_exec,
            } => self.report_finished(now, t, key, exit_status, usage, term_reason, post_exec),
            ReportKind::PostExec { .. } => {}
            ReportKind::PreExecFailed { exit_status } => {
                self.pre_exec_failed(t, key, exit_status);
            }
            ReportKind::Chkpnt { ok, pid, message } => {
                self.chkpnt_report(t, key, ok, pid, message);
            }
            ReportKind::StartFailed {
                message,
                restart_failed,
            } => {
                if restart_failed {
                    self.restart_failed(t, key, message);
                    return Ack::Ok;
                }
                // A job from another cluster goes back there (MultiCluster).
                if self.came_from_remote(key) {
                    self.mc_give_back(t, key, crate::mc::TERM_MC_INITFAIL);
                    return Ack::Ok;
                }
                self.finish(
                    t,
                    key,
                    status::EXIT,
                    exit_reason::INIT_ENVIRON,
                    256,
                    None,
                    String::new(),
                );
            }
        }
        Ack::Ok
    }

    /// A started job's new state from sbatchd (suspended, resumed), unless it is older
    /// than mbatchd's own order or the state mbatchd logged when it ordered it.
    fn report_state(
        &mut self,
        now: Millis,
        t: i64,
        key: JobKey,
        (state, reasons, subreasons): (u32, u32, u32),
    ) {
        if let Some(&(ordered, until)) = self.awaiting.get(&key) {
            if now < until && state != ordered {
                // Older than mbatchd's own order: the confirmation comes next.
                return;
            }
            self.awaiting.remove(&key);
        }
        // A state mbatchd logged when it ordered it (preemption and the resume
        // of a preempted job) is not logged again when sbatchd confirms it.
        let same = self.jobs.get(&key).is_some_and(|j| {
            j.state.code() == state && j.reasons == reasons && j.subreasons == subreasons
        });
        if !same && JobState::from_code(state).is_some_and(|s| s.is_started()) {
            self.emit(state_change(t, key, state, reasons, subreasons));
        }
    }

    /// A job's end from sbatchd: requeued (brequeue, REQUEUE_EXIT_VALUES) or finished
    /// DONE or EXIT, with its post-execution status when it came along.
    #[allow(clippy::too_many_arguments)]
    fn report_finished(
        &mut self,
        now: Millis,
        t: i64,
        key: JobKey,
        exit_status: i32,
        usage: Usage,
        term_reason: String,
        post_exec: Option<i32>,
    ) {
        self.awaiting.remove(&key);
        let as_done = self.jobs.get(&key).is_some_and(|j| j.kill_as_done);
        let ordered = self.jobs.get(&key).and_then(|j| j.kill_ordered.clone());
        // Killed (bkill, preemption): it ends EXIT whatever sbatchd saw — its
        // command may never have run (killed during its pre-execution
        // commands: status 0), or it ended on its own before the kill reached
        // it. Neither a brequeue nor its exit value requeues it.
        let killed = ordered.is_some() && !as_done;
        // brequeue: back to PEND (or PSUSP) rather than ending.
        let (requeue_to, why) = self
            .jobs
            .get(&key)
            .and_then(|j| j.requeues.as_ref())
            .map_or((0, 0), |r| (r.requeue_to, r.requeue_reason));
        if requeue_to != 0 && !killed {
            let why = if why == 0 { pend::REQUEUED } else { why };
            let ev = state_change(t, key, requeue_to, why, 0);
            self.emit(with_end(ev, exit_status, usage));
            return;
        }
        let term = if term_reason.is_empty() {
            ordered
                .clone()
                .filter(|_| exit_status != 0 || killed)
                .map(String::from)
                .unwrap_or_default()
        } else {
            term_reason
        };
        if term.is_empty()
            && ordered.is_none()
            && let Some(exclude) = self.requeue_by_value(key, exit_status)
        {
            // REQUEUE_EXIT_VALUES: back to PEND at the head of the queue, to be
            // dispatched again once BASALT_REQUEUE_DELAY has passed since this
            // record (mbatchd's time, unless the host's clock is ahead of it: a
            // host's slow clock does not shorten the wait).
            let sub = REQUEUE_BY_VALUE | if exclude { REQUEUE_EXCLUDE } else { 0 };
            let at = t.max(secs(now));
            let ev = state_change(at, key, status::PEND, pend::REQUEUED, sub);
            self.emit(with_end(ev, exit_status, usage));
            return;
        }
        let st = if killed {
            status::EXIT
        } else if exit_status == 0 || as_done || self.success_value(key, exit_status) {
            status::DONE
        } else {
            status::EXIT
        };
        let exit_status = if killed && exit_status == 0 {
            KILLED_WAIT_STATUS
        } else {
            exit_status
        };
        let cpu_time = usage.utime + usage.stime;
        self.finish(t, key, st, 0, exit_status, Some(usage), term);
        if let Some(p) = post_exec {
            self.post_exec_done(t, key, st, exit_status, cpu_time, t, p);
        }
    }
}

/// A requeue's JOB_STATUS with the exit status and usage of the run that ended.
fn with_end(mut ev: Event, exit_status: i32, usage: Usage) -> Event {
    if let Event::JobStatus {
        exit_status: e,
        usage: u,
        ..
    } = &mut ev
    {
        *e = exit_status;
        *u = Some(usage);
    }
    ev
}
