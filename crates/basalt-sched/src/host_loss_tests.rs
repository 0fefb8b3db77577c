//! Lost hosts: after the unreach time plus `BASALT_HOST_LOST_GRACE`, mbatchd gives up on
//! a silent host's jobs (reruns the rerunnable ones first in their queue, ends the
//! others), a returning sbatchd is told to kill the copies, and a log switch keeps it all.

use super::*;
use crate::logswitch_tests::{check_switch, replay};
use crate::tests::{T0, acct_of, admin, alice, cfg, cmd, logged};

/// hostB silent from T0: unreach after 15 s, lost after 15 + 60 s.
const LOST_AT: Millis = T0 + 75_000;

fn rerunnable(c: &str) -> Submission {
    let mut s = cmd(c);
    s.options |= sub::RERUNNABLE;
    s
}

/// A started core whose queue `high` is RERUNNABLE = yes, hostA with 2 slots, hostB 3.
fn core() -> (Sched, Vec<Event>) {
    let mut c = cfg();
    c.queues[1].rerunnable = true;
    let mut s = Sched::new(c, T0);
    s.lim_update("hostA", 2, 1.0, true, BTreeMap::new());
    s.lim_update("hostB", 3, 1.0, true, BTreeMap::new());
    s.start(T0, "hostA");
    let log = logged(&s.take_effects());
    (s, log)
}

/// Accept every dispatch of `eff` (pid = 100 + job id).
fn accept(s: &mut Sched, now: Millis, eff: &[Effect]) {
    for e in eff {
        if let Effect::Dispatch { key, attempt, .. } = e {
            let pid = 100 + key.0 as u32;
            s.dispatch_accepted(now, *key, *attempt, pid, pid);
        }
    }
}

fn kills(eff: &[Effect]) -> Vec<(JobKey, u32, String)> {
    eff.iter()
        .filter_map(|e| match e {
            Effect::Signal {
                key,
                attempt,
                host,
                action: SbdAction::Kill { .. },
            } => Some((*key, *attempt, host.clone())),
            _ => None,
        })
        .collect()
}

/// Jobs 2 (-r), 3 (plain) and 4 (queue high, rerunnable) run on hostB; 1 (held) and 5
/// wait in `normal`.
fn scenario() -> (Sched, Vec<Event>) {
    let (mut s, mut log) = core();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    let mut held = cmd("held");
    held.options2 |= sub2::HOLD;
    s.submit(T0, &alice(), held).expect("submit");
    s.submit(T0, &alice(), rerunnable("sleep 3; echo done"))
        .expect("submit");
    s.submit(T0, &alice(), cmd("plain")).expect("submit");
    let mut hi = cmd("high");
    hi.queue = "high".into();
    s.submit(T0, &alice(), hi).expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    accept(&mut s, T0 + 10, &eff);
    s.submit(T0 + 20, &alice(), cmd("later")).expect("submit");
    s.host_ctl(T0 + 20, &admin(), 1, "hostA", "").expect("open");
    log.extend(logged(&s.take_effects()));
    for k in [2, 3, 4] {
        assert_eq!(s.jobs[&(k, 0)].state, JobState::Run, "job {k}");
        assert_eq!(s.jobs[&(k, 0)].hosts, vec!["hostB".to_string()]);
    }
    (s, log)
}

/// hostA says hello at `now`; then a tick.
fn tick(s: &mut Sched, now: Millis, log: &mut Vec<Event>) -> Vec<Effect> {
    s.sbd_hello(now, "hostA", &[]);
    s.tick(now);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    eff
}

#[test]
fn jobs_wait_as_unknown_during_the_grace_then_rerun_or_exit() {
    let (mut s, mut log) = scenario();
    // Unreach after three missed hellos: UNKWN, nothing given up yet.
    for now in [T0 + 16_000, T0 + 40_000, LOST_AT] {
        let eff = tick(&mut s, now, &mut log);
        assert!(logged(&eff).is_empty(), "{eff:?}");
        for k in [2, 3, 4] {
            let j = &s.jobs[&(k, 0)];
            assert_eq!(
                (j.state, s.shown_state(j)),
                (JobState::Run, JobState::Unkwn)
            );
        }
    }
    // The grace is over.
    let eff = tick(&mut s, LOST_AT + 1, &mut log);
    let j2 = &s.jobs[&(2, 0)];
    assert_eq!(
        (j2.state, j2.reasons, j2.attempt),
        (JobState::Pend, pend::REQUEUED, 1)
    );
    assert!(j2.hosts.is_empty() && j2.pid == 0);
    // Before the jobs that were pending in its queue, the older one included.
    assert_eq!(s.position(j2), 1);
    assert_eq!(s.position(&s.jobs[&(1, 0)]), 2);
    assert_eq!(s.position(&s.jobs[&(5, 0)]), 3);
    // RERUNNABLE = yes in the queue.
    let j4 = &s.jobs[&(4, 0)];
    assert_eq!((j4.state, j4.reasons), (JobState::Pend, pend::REQUEUED));
    // Not rerunnable: EXIT, as killed by signal 9, with a term reason; in lsb.acct.
    let j3 = &s.jobs[&(3, 0)];
    assert_eq!(j3.state, JobState::Exit);
    assert_eq!(
        (j3.exit_status, j3.term_reason.as_str()),
        (9, TERM_HOST_LOST)
    );
    assert_eq!(j3.end_time, secs(LOST_AT + 1));
    assert_eq!(acct_of(&eff), [(3, 0)]);
    // Given up once.
    assert!(logged(&tick(&mut s, LOST_AT + 5_000, &mut log)).is_empty());

    // The reruns go first, on hostA, with a new attempt; the newer job waits.
    s.schedule(LOST_AT + 6_000);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    let d = crate::tests::dispatches(&eff);
    assert_eq!(
        d,
        vec![((4, 0), "hostA".to_string()), ((2, 0), "hostA".to_string())]
    );
    assert_eq!(s.jobs[&(2, 0)].attempt, 2);
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Pend);
    accept(&mut s, LOST_AT + 6_100, &eff);
    log.extend(logged(&s.take_effects()));

    // The same history replayed gives the same state; so does a switched log.
    let now = LOST_AT + 7_000;
    check_switch(&s, &log, now, "after the rerun");

    // hostB comes back with its old copies: each is ordered killed, none is counted.
    let listed: Vec<HostJob> = [2, 3, 4]
        .iter()
        .map(|&k| HostJob {
            key: (k, 0),
            attempt: 1,
            state: status::RUN,
            pid: 100 + k as u32,
            pgid: 100 + k as u32,
        })
        .collect();
    let theirs = s.sbd_hello(now, "hostB", &listed);
    assert!(theirs.is_empty(), "{theirs:?}");
    let eff = s.take_effects();
    assert!(logged(&eff).is_empty(), "{eff:?}");
    let mut k = kills(&eff);
    k.sort();
    assert_eq!(
        k,
        vec![
            ((2, 0), 1, "hostB".to_string()),
            ((3, 0), 1, "hostB".to_string()),
            ((4, 0), 1, "hostB".to_string())
        ]
    );
    // Their reports are answered StopJob (older attempt) or ignored (ended).
    let r = |key: JobKey, kind: ReportKind| Report {
        host: "hostB".into(),
        key,
        attempt: 1,
        seq: 9,
        time: 0,
        kind,
    };
    assert_eq!(
        s.report(now, r((2, 0), ReportKind::Usage(Usage::default()))),
        Ack::StopJob
    );
    let fin = ReportKind::Finished {
        exit_status: 0,
        usage: Usage::default(),
        term_reason: String::new(),
        post_exec: None,
    };
    assert_eq!(s.report(now, r((2, 0), fin.clone())), Ack::StopJob);
    assert_eq!(s.report(now, r((3, 0), fin)), Ack::Ok);
    assert!(s.take_effects().is_empty());
    assert_eq!(s.jobs[&(3, 0)].state, JobState::Exit);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);

    // The rerun ends DONE on hostA.
    let done = Report {
        host: "hostA".into(),
        key: (2, 0),
        attempt: 2,
        seq: 1,
        time: 0,
        kind: ReportKind::Finished {
            exit_status: 0,
            usage: Usage::default(),
            term_reason: String::new(),
            post_exec: None,
        },
    };
    assert_eq!(s.report(now + 3_000, done), Ack::Ok);
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Done);
    check_switch(&s, &log, now + 4_000, "after the rerun ended");
    let full = replay(s.cfg.clone(), now, &log);
    assert_eq!(full.jobs[&(2, 0)].attempt, 2);
}

#[test]
fn the_requeue_is_replayed_to_the_same_place_before_and_after_a_switch() {
    let (mut s, mut log) = scenario();
    tick(&mut s, LOST_AT + 1, &mut log);
    // Still pending when the log is switched, second since a btop of job 5.
    s.move_job(LOST_AT + 1_000, &alice(), (5, 0), 1, false)
        .expect("btop");
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.position(&s.jobs[&(2, 0)]), 2);
    let co = check_switch(&s, &log, LOST_AT + 2_000, "requeued, pending");
    let switched = replay(s.cfg.clone(), LOST_AT + 2_000, co.events());
    assert_eq!(switched.position(&switched.jobs[&(2, 0)]), 2);
    assert_eq!(switched.jobs[&(2, 0)].reasons, pend::REQUEUED);
}

#[test]
fn a_kill_ordered_while_the_host_was_unreach_ends_the_job() {
    let (mut s, mut log) = scenario();
    tick(&mut s, T0 + 20_000, &mut log);
    s.kill(T0 + 20_000, &alice(), (2, 0), false, false)
        .expect("bkill");
    log.extend(logged(&s.take_effects()));
    tick(&mut s, LOST_AT + 1, &mut log);
    let j = &s.jobs[&(2, 0)];
    assert_eq!(
        (j.state, j.term_reason.as_str()),
        (JobState::Exit, "TERM_OWNER")
    );
    check_switch(&s, &log, LOST_AT + 2_000, "killed on a lost host");
}

#[test]
fn an_unanswered_dispatch_on_a_lost_host_is_not_run_again() {
    let (mut s, mut log) = core();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    // The dispatch of this term is in flight (no answer yet): left alone.
    tick(&mut s, LOST_AT + 1, &mut log);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    // An mbatchd restarted meanwhile has nothing in flight; the grace restarts with it.
    let mut r = replay(s.cfg.clone(), LOST_AT + 2_000, &log);
    r.start(LOST_AT + 2_000, "hostA");
    log.extend(logged(&r.take_effects()));
    tick(&mut r, LOST_AT + 2_000 + 75_000, &mut log);
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Run);
    // The answer may have been lost with the old mbatchd while the job ran: it is not
    // requeued (that could run it twice) but ends like any job of a lost host.
    tick(&mut r, LOST_AT + 2_000 + 75_001, &mut log);
    let j = &r.jobs[&(1, 0)];
    assert_eq!(j.state, JobState::Exit);
    assert_eq!(j.term_reason, TERM_HOST_LOST);
    check_switch(&r, &log, LOST_AT + 80_000, "unanswered dispatch");
}

#[test]
fn a_host_that_answers_keeps_its_jobs() {
    let (mut s, mut log) = scenario();
    let listed: Vec<HostJob> = s
        .jobs
        .values()
        .filter(|j| j.state.is_started())
        .map(|j| HostJob {
            key: j.key(),
            attempt: j.attempt,
            state: j.state.code(),
            pid: j.pid,
            pgid: j.pgid,
        })
        .collect();
    for now in (1..20).map(|i| T0 + i * 5_000) {
        s.sbd_hello(now, "hostB", &listed);
        let eff = tick(&mut s, now, &mut log);
        assert!(kills(&eff).is_empty() && logged(&eff).is_empty(), "{eff:?}");
    }
    assert!(
        [2, 3, 4]
            .iter()
            .all(|&k| s.jobs[&(k, 0)].state == JobState::Run)
    );
}

#[test]
fn hello_orders_kills_only_for_copies_mbatchd_gave_up_on() {
    let (mut s, mut log) = scenario();
    tick(&mut s, LOST_AT + 1, &mut log);
    let hj = |id: u64, attempt: u32, state: u32| HostJob {
        key: (id, 0),
        attempt,
        state,
        pid: 1,
        pgid: 1,
    };
    // A copy that sbatchd already saw end is not killed; nor a job it never had from
    // this mbatchd (unknown to it).
    s.sbd_hello(
        LOST_AT + 2_000,
        "hostB",
        &[hj(3, 1, status::EXIT), hj(77, 1, status::RUN)],
    );
    assert!(kills(&s.take_effects()).is_empty());
    // A job that ended otherwise is left to the report path (StopJob when asked).
    s.kill(LOST_AT + 2_500, &alice(), (5, 0), true, false)
        .expect("bkill -r");
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Exit);
    s.take_effects();
    s.sbd_hello(LOST_AT + 2_500, "hostB", &[hj(5, 0, status::RUN)]);
    assert!(kills(&s.take_effects()).is_empty());
    // The held job was never started: a copy of it is stale.
    s.sbd_hello(LOST_AT + 3_000, "hostB", &[hj(1, 0, status::RUN)]);
    assert_eq!(
        kills(&s.take_effects()),
        vec![((1, 0), 0, "hostB".to_string())]
    );
}

#[test]
fn grace_comes_from_lsb_params() {
    let (mut s, mut log) = scenario();
    s.cfg.host_lost_grace_secs = 5;
    tick(&mut s, T0 + 20_000, &mut log);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    tick(&mut s, T0 + 20_001, &mut log);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
}
