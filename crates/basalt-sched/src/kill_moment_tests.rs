//! Issue 50, item 1 ("A killed job can end DONE"): `bkill` at every step of a job's
//! dispatch → start → finish sequence, and at every step of a requeue by exit value and
//! the dispatch after it, on a manual clock. Whatever sbatchd reports after the kill (its
//! command never ran and the report says 0; the job ended on its own before the kill
//! reached it; a requeue exit value; a failed pre-execution command; a refused start; a
//! dispatch that never arrived), the job ends EXIT with TERM_ADMIN — never DONE — with a
//! non-zero exit status when it had been dispatched; one EXIT accounting record; a
//! `done(1)` dependent is never released and an `exit(1)` one is. It holds as well when
//! mbatchd restarts (replays its log) after any step and the sequence goes on with the
//! replayed core.

use super::tests::*;
use super::*;
use basalt_core::job::{pend, status};

/// The job killed; a job waiting for its `done`; a job waiting for its `exit`.
const JOB: JobKey = (1, 0);
const DONE_DEP: JobKey = (2, 0);
const EXIT_DEP: JobKey = (3, 0);

/// What sbatchd reports at the end of an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    /// The job's end: its wait status and the term reason sbatchd knew of.
    Finished(i32, &'static str),
    /// A pre-execution command failed (wait status).
    PreExecFailed(i32),
    /// The supervisor could not start the job.
    StartFailed,
}

/// One input of the sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// A scheduling pass: the job is dispatched (JOB_START).
    Pass,
    /// sbatchd answers the dispatch with the job's pid (JOB_START_ACCEPT); to a
    /// restarted mbatchd the answer went to its predecessor: the report stream says it.
    Accept,
    /// The job's report stream says it started before the dispatch's answer came.
    StartedReport,
    /// The dispatch could not be delivered.
    DispatchFailed,
    /// The job's command runs as its user (JOB_EXECUTE).
    Execute,
    /// sbatchd's end report.
    End(End),
    /// The requeue delay passes (a timer tick).
    Wait,
}

/// sbatchd's end reports after a kill, whenever the kill reached it.
const ENDS: [End; 7] = [
    // Killed while its pre-execution command ran: its command never ran, 0 (the report
    // of the issue).
    End::Finished(0, "TERM_ADMIN"),
    // Ended on its own before the kill reached sbatchd.
    End::Finished(0, ""),
    // The kill sequence's SIGINT: the shell exits 130.
    End::Finished(130 << 8, "TERM_ADMIN"),
    End::Finished(9, "TERM_ADMIN"),
    // A requeue exit value before the kill reached sbatchd.
    End::Finished(3 << 8, ""),
    End::PreExecFailed(1 << 8),
    End::StartFailed,
];

/// The core, the clock, and what was written and sent.
struct Sim {
    s: Sched,
    now: Millis,
    /// lsb.events as written so far (every term's).
    log: Vec<Event>,
    /// Every effect so far (every term's).
    effects: Vec<Effect>,
    /// The attempt of JOB sbatchd holds (its hellos list it), if any.
    on_host: Option<u32>,
}

fn config() -> SchedConfig {
    let mut c = cfg();
    c.queues[0].requeue = basalt_config::batch::RequeueValues::parse("3").expect("parse");
    c
}

impl Sim {
    fn new() -> Sim {
        let mut s = up_with(config());
        s.submit(T0, &alice(), cmd("job")).expect("submit");
        s.submit(T0, &alice(), dep("after done", "done(1)"))
            .expect("submit");
        s.submit(T0, &alice(), dep("after exit", "exit(1)"))
            .expect("submit");
        let mut sim = Sim {
            s,
            now: T0,
            log: Vec::new(),
            effects: Vec::new(),
            on_host: None,
        };
        sim.collect();
        sim
    }

    fn collect(&mut self) {
        let eff = self.s.take_effects();
        self.log.extend(logged(&eff));
        self.effects.extend(eff);
    }

    /// mbatchd restarts: a new core replays the log written so far.
    fn restarted(&self) -> Sim {
        let mut s = Sched::new(config(), self.now);
        for h in ["hostA", "hostB"] {
            s.lim_update(h, 2, 1.0, true, BTreeMap::new());
        }
        s.replay(&self.log);
        s.start(self.now, "hostA");
        let mut sim = Sim {
            s,
            now: self.now,
            log: self.log.clone(),
            effects: self.effects.clone(),
            on_host: self.on_host,
        };
        sim.collect();
        sim
    }

    fn kill(&mut self) {
        self.now += 500;
        self.s
            .kill(self.now, &admin(), JOB, false, false)
            .expect("kill");
        self.collect();
    }

    fn job(&self) -> &Job {
        &self.s.jobs[&JOB]
    }

    fn apply(&mut self, step: Step) {
        self.now += if step == Step::Wait { 11_000 } else { 1_000 };
        let now = self.now;
        let (attempt, started, pid, host) = {
            let j = self.job();
            let host = j.hosts.first().cloned().unwrap_or_default();
            (j.attempt, j.state.is_started(), j.pid, host)
        };
        // A dispatch of this mbatchd's (its answer comes to it), not of its predecessor.
        let ours = self.s.in_flight.contains(&(JOB, attempt));
        let s = &mut self.s;
        match step {
            Step::Pass => s.schedule(now),
            Step::Wait => s.tick(now),
            Step::Accept | Step::StartedReport if started && pid == 0 => {
                if step == Step::Accept && ours {
                    s.dispatch_accepted(now, JOB, attempt, 100, 100);
                } else {
                    report_next(
                        s,
                        now,
                        JOB,
                        ReportKind::Started {
                            pid: 100,
                            pgid: 100,
                        },
                    );
                }
                self.on_host = Some(attempt);
            }
            Step::DispatchFailed if started && pid == 0 => {
                // (The failure of a predecessor's dispatch is not told to this mbatchd:
                // sbatchd's hellos show it does not have the job.)
                if ours {
                    s.dispatch_failed(now, JOB, attempt, &host);
                }
                self.on_host = None;
            }
            Step::Execute if started && self.on_host == Some(attempt) => {
                report_next(
                    s,
                    now,
                    JOB,
                    ReportKind::Executing {
                        exec_uid: 1000,
                        exec_user: "alice".into(),
                        exec_home: "/home/alice".into(),
                        exec_cwd: "/home/alice".into(),
                        pid: 100,
                    },
                );
            }
            Step::End(end) if started && self.on_host == Some(attempt) => {
                let kind = match end {
                    End::Finished(exit_status, term) => ReportKind::Finished {
                        exit_status,
                        usage: Usage::default(),
                        term_reason: term.into(),
                        post_exec: None,
                    },
                    End::PreExecFailed(exit_status) => ReportKind::PreExecFailed { exit_status },
                    End::StartFailed => ReportKind::StartFailed {
                        message: "no such user".into(),
                        restart_failed: false,
                    },
                };
                report_next(s, now, JOB, kind);
                self.on_host = None;
            }
            _ => {}
        }
        self.collect();
    }

    /// Every sbatchd's hello: the jobs it holds (JOB only while it has it).
    fn hellos(&mut self) {
        for h in ["hostA", "hostB"] {
            let listed: Vec<HostJob> = self
                .s
                .jobs
                .values()
                .filter(|j| j.state.is_started() && j.hosts.first().is_some_and(|f| f == h))
                .filter(|j| j.key() != JOB || self.on_host == Some(j.attempt))
                .map(|j| HostJob {
                    key: j.key(),
                    attempt: j.attempt,
                    state: status::RUN,
                    pid: j.pid,
                    pgid: j.pgid,
                })
                .collect();
            self.s.sbd_hello(self.now, h, &listed);
        }
        self.collect();
    }

    /// Time goes on: hellos, timers and passes; a new dispatch of JOB is accepted and
    /// JOB, if still running, ends on its own with 0 (the worst case for a kill).
    fn drain(&mut self) {
        for _ in 0..4 {
            self.now += 11_000;
            self.hellos();
            self.s.tick(self.now);
            self.s.schedule(self.now);
            self.collect();
            let (attempt, started, pid) = {
                let j = self.job();
                (j.attempt, j.state.is_started(), j.pid)
            };
            if started && pid == 0 && self.s.in_flight.contains(&(JOB, attempt)) {
                self.apply(Step::Accept);
            }
            self.apply(Step::End(End::Finished(0, "")));
        }
    }

    /// The job ended EXIT, killed by an administrator, never DONE; its dependents.
    fn check(&self, ctx: &str, started_at_kill: bool) {
        let j = self.job();
        assert_eq!(j.state, JobState::Exit, "{ctx}: state");
        assert_eq!(j.term_reason.as_str(), "TERM_ADMIN", "{ctx}: term reason");
        if started_at_kill {
            assert_ne!(j.exit_status, 0, "{ctx}: exit status of a dispatched job");
        }
        let done = self.log.iter().any(|e| {
            matches!(e, Event::JobStatus { key, status: st, .. }
                if *key == JOB && *st & status::DONE != 0)
        });
        assert!(!done, "{ctx}: a DONE record");
        let accts: Vec<(JobState, Str)> = self
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Acct(a) if a.key() == JOB => Some((a.state, a.term_reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            accts,
            vec![(JobState::Exit, Str::from("TERM_ADMIN"))],
            "{ctx}: accounting"
        );
        let d = &self.s.jobs[&DONE_DEP];
        assert_eq!(d.state, JobState::Pend, "{ctx}: done(1) dependent");
        assert_eq!(
            pend_codes(&self.s, DONE_DEP),
            vec![pend::DEPEND_INVALID],
            "{ctx}: done(1) dependent's reason"
        );
        assert!(
            self.s.jobs[&EXIT_DEP].state.is_started(),
            "{ctx}: exit(1) dependent released"
        );
        // The log says the same to a restarted mbatchd.
        let again = self.restarted();
        let r = again.job();
        assert_eq!(
            (r.state, r.term_reason.as_str(), r.exit_status),
            (j.state, j.term_reason.as_str(), j.exit_status),
            "{ctx}: replayed"
        );
    }
}

/// Run `steps` with the kill before step `kill_at` (after the last when it equals the
/// length), and with mbatchd restarted after input `restart_after` (None: never;
/// counting the kill as an input).
fn run(steps: &[Step], kill_at: usize, restart_after: Option<usize>) {
    let ctx =
        format!("{steps:?}, kill before step {kill_at}, restart after input {restart_after:?}");
    let mut sim = Sim::new();
    let mut inputs = 0;
    let mut started_at_kill = false;
    let restart = |sim: &mut Sim, inputs: &mut usize| {
        if restart_after == Some(*inputs) {
            *sim = sim.restarted();
        }
        *inputs += 1;
    };
    for (i, step) in steps.iter().enumerate() {
        if i == kill_at {
            started_at_kill = sim.job().state.is_started();
            sim.kill();
            restart(&mut sim, &mut inputs);
        }
        sim.apply(*step);
        restart(&mut sim, &mut inputs);
    }
    if kill_at == steps.len() {
        if sim.job().state.is_finished() {
            // Ended before the kill: nothing to kill.
            return;
        }
        started_at_kill = sim.job().state.is_started();
        sim.kill();
        restart(&mut sim, &mut inputs);
    }
    sim.drain();
    sim.check(&ctx, started_at_kill);
}

/// Every kill moment of `steps`, each without a restart and with one after every input.
fn every_moment(steps: &[Step]) {
    for kill_at in 0..=steps.len() {
        for restart_after in std::iter::once(None).chain((0..=steps.len()).map(Some)) {
            run(steps, kill_at, restart_after);
        }
    }
}

#[test]
fn a_killed_job_ends_exit_term_admin_whatever_the_step_of_dispatch_start_and_finish() {
    for answer in [Step::Accept, Step::StartedReport, Step::DispatchFailed] {
        for end in ENDS {
            every_moment(&[Step::Pass, answer, Step::Execute, Step::End(end)]);
        }
    }
    // A job killed before sbatchd's answer, which then starts it: the job's command
    // never ran when the kill reaches it.
    every_moment(&[Step::Pass, Step::Accept, Step::End(ENDS[0])]);
}

#[test]
fn a_killed_job_ends_exit_term_admin_whatever_the_step_of_a_requeue_by_exit_value() {
    for end in ENDS {
        every_moment(&[
            Step::Pass,
            Step::Accept,
            Step::Execute,
            Step::End(End::Finished(3 << 8, "")),
            Step::Wait,
            Step::Pass,
            Step::Accept,
            Step::Execute,
            Step::End(end),
        ]);
    }
}
