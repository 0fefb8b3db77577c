//! Issue 29, item 5, "clock jumps of ±1 h": the wall clock stepped an hour forward or
//! back must not make mbatchd declare hosts unreach or lost (no job given up, killed or
//! rerun), and a host that really goes silent after a step back is still found lost
//! after the usual silence, not an hour later. The loop here is mbatchd's owner loop
//! (`basalt-mbatchd/src/owner.rs`): a manual wall clock and a manual monotonic clock,
//! a [`JumpWatch`] reading both before each tick.

use super::*;
use crate::tests::{T0, alice, cfg, cmd, logged};
use basalt_core::clock::JumpWatch;
use basalt_core::job::status as jstat;

/// hostA and hostB; one job running on hostB (pid 200).
fn running_on_b(c: SchedConfig) -> (Sched, JobKey) {
    let mut s = Sched::new(c, T0);
    s.lim_update("hostA", 2, 1.0, true, BTreeMap::new());
    s.lim_update("hostB", 3, 1.0, true, BTreeMap::new());
    s.start(T0, "hostA");
    s.host_ctl(T0, &crate::tests::admin(), 2, "hostA", "")
        .expect("close hostA");
    s.submit(T0, &alice(), cmd("sleep 100000")).expect("submit");
    s.schedule(T0);
    let key = (1, 0);
    let attempt = s.jobs[&key].attempt;
    s.dispatch_accepted(T0 + 10, key, attempt, 200, 200);
    s.host_ctl(T0 + 20, &crate::tests::admin(), 1, "hostA", "")
        .expect("open hostA");
    s.take_effects();
    assert_eq!(s.jobs[&key].state, JobState::Run);
    assert_eq!(s.jobs[&key].hosts, ["hostB".to_string()]);
    (s, key)
}

/// mbatchd's loop with its clocks: `wall` and `mono` in ms.
struct Loop {
    s: Sched,
    key: JobKey,
    /// The job's attempt number at its start (a rerun would change it).
    attempt: u32,
    watch: JumpWatch,
    wall: Millis,
    mono: Millis,
    /// Tell the core about jumps (what the runtime does); off to show what happens
    /// without.
    notice: bool,
    /// Hosts whose sbatchd says hello (every `BASALT_SBD_HELLO_INTERVAL`, 5 s here).
    alive: Vec<&'static str>,
    effects: Vec<Effect>,
}

impl Loop {
    fn new(notice: bool) -> Loop {
        Loop::with(notice, cfg())
    }

    fn with(notice: bool, c: SchedConfig) -> Loop {
        let (s, key) = running_on_b(c);
        let attempt = s.jobs[&key].attempt;
        let mut watch = JumpWatch::new();
        watch.observe(T0 + 20, 0);
        Loop {
            s,
            key,
            attempt,
            watch,
            wall: T0 + 20,
            mono: 0,
            notice,
            alive: vec!["hostA", "hostB"],
            effects: Vec::new(),
        }
    }

    /// Run `secs` seconds: a tick every second, hellos from the live hosts every 5 s.
    fn run(&mut self, secs: i64) {
        for _ in 0..secs {
            self.wall += 1000;
            self.mono += 1000;
            let hellos = if self.mono % 5000 == 0 {
                self.alive.clone()
            } else {
                Vec::new()
            };
            for h in hellos {
                let jobs: Vec<HostJob> = if h == "hostB" {
                    let j = &self.s.jobs[&self.key];
                    vec![HostJob {
                        key: self.key,
                        attempt: j.attempt,
                        state: if j.state == JobState::Ssusp {
                            jstat::SSUSP
                        } else {
                            jstat::RUN
                        },
                        pid: 200,
                        pgid: 200,
                    }]
                } else {
                    Vec::new()
                };
                // A hello can come between the step and the loop's next reading.
                self.s.sbd_hello(self.wall, h, &jobs);
            }
            if let Some(_by) = self.watch.observe(self.wall, self.mono)
                && self.notice
            {
                self.s.wall_clock_jumped(self.wall);
            }
            self.s.tick(self.wall);
            self.effects.extend(self.s.take_effects());
        }
    }

    /// The wall clock is stepped by `by` ms (no time passes).
    fn step(&mut self, by: Millis) {
        self.wall += by;
    }

    fn job_untouched(&self) {
        let j = &self.s.jobs[&self.key];
        assert_eq!(
            (j.state, self.s.shown_state(j), j.attempt),
            (JobState::Run, JobState::Run, self.attempt)
        );
        assert!(
            self.s.hosts.iter().all(|h| !h.sbd_failed),
            "a host is unreach"
        );
        let logged = logged(&self.effects);
        assert!(
            !logged
                .iter()
                .any(|e| matches!(e, Event::JobStatus { .. } | Event::JobSignal { .. })),
            "{logged:?}"
        );
        assert!(
            !self
                .effects
                .iter()
                .any(|e| matches!(e, Effect::Signal { .. } | Effect::Acct(_))),
            "{:?}",
            self.effects
        );
    }
}

#[test]
fn a_wall_clock_step_of_an_hour_forward_loses_no_host_and_no_job() {
    let mut l = Loop::new(true);
    l.run(10);
    l.step(3_600_000);
    // The hellos keep coming; the step alone is no silence.
    l.run(100);
    l.job_untouched();

    // Without telling the core, the same step gives the host up at the first tick
    // before its next hello (this is what the runtime's JumpWatch prevents).
    let mut blind = Loop::new(false);
    blind.run(10);
    blind.step(3_600_000);
    blind.run(1);
    assert_ne!(
        blind.s.jobs[&blind.key].state,
        JobState::Run,
        "the unnoticed step was not taken for an hour of silence"
    );
}

#[test]
fn a_wall_clock_step_of_an_hour_back_loses_no_host_and_still_finds_a_silent_one() {
    let mut l = Loop::new(true);
    l.run(10);
    l.step(-3_600_000);
    l.run(100);
    l.job_untouched();
    // hostB's sbatchd goes silent for good: unreach after three missed hellos (15 s),
    // lost after the grace (60 s more), as without any step.
    l.alive = vec!["hostA"];
    l.run(14);
    l.job_untouched();
    l.run(2);
    assert!(
        l.s.hosts.iter().any(|h| h.name == "hostB" && h.sbd_failed),
        "hostB unreach"
    );
    l.run(60);
    let j = &l.s.jobs[&l.key];
    assert_eq!(
        (j.state, j.term_reason.as_str()),
        (JobState::Exit, TERM_HOST_LOST),
        "hostB lost within the usual silence"
    );

    // Without telling the core, hostB's silence would not count for an hour.
    let mut blind = Loop::new(false);
    blind.run(10);
    blind.step(-3_600_000);
    blind.alive = vec!["hostA"];
    blind.run(120);
    assert!(
        blind.s.hosts.iter().all(|h| !h.sbd_failed),
        "the step back hid the silence"
    );
}

/// Queue `MIG = 30`: a rerunnable job suspended by the system (load) for 10 s is not
/// migrated (killed and rerun) because the clock was stepped an hour forward.
#[test]
fn a_wall_clock_step_of_an_hour_forward_migrates_no_suspended_job() {
    let mig = |notice: bool| {
        let mut c = cfg();
        c.queues[0].rerunnable = true;
        c.queues[0].mig_minutes = Some(30);
        let mut l = Loop::with(notice, c);
        let key = l.key;
        crate::tests::report_next(
            &mut l.s,
            l.wall,
            key,
            ReportKind::State {
                state: jstat::SSUSP,
                reasons: basalt_core::job::susp::LOAD_REASON,
                subreasons: 0,
            },
        );
        l.s.take_effects();
        assert_eq!(l.s.jobs[&key].state, JobState::Ssusp);
        l.run(10);
        l.step(3_600_000);
        l.run(10);
        let migrated = logged(&l.effects)
            .iter()
            .any(|e| matches!(e, Event::JobMigrate { .. }));
        (migrated, l.s.jobs[&key].state)
    };
    assert_eq!(mig(true), (false, JobState::Ssusp));
    // Without telling the core, the step counts as an hour of suspension.
    assert!(mig(false).0, "the unnoticed step did not migrate the job");
}
