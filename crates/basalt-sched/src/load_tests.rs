//! Load thresholds in mbatchd's core: host (lsb.hosts) and queue scheduling
//! thresholds keep new jobs off a busy host, and bresume'd jobs (USUSP -> SSUSP with
//! SUSP_USER_RESUME) run again only when the load is within both, highest priority
//! first, one per host per SBD_SLEEP_TIME.

use super::*;
use crate::tests::{T0, alice, cfg, cmd, dispatches};

fn load(r1m: f64) -> BTreeMap<String, f64> {
    [("r1m".to_owned(), r1m)].into_iter().collect()
}

/// hostA only (1 CPU, so effective r1m = raw; no slot limit), hostB unavailable.
fn core(mut c: SchedConfig) -> Sched {
    c.hosts[0].mxj_ncpus = false;
    c.hosts[0].mxj = None;
    let mut s = Sched::new(c, T0);
    s.lim_update("hostA", 1, 1.0, true, load(0.0));
    s.lim_update("hostB", 1, 1.0, false, BTreeMap::new());
    s.start(T0, "hostA");
    s.take_effects();
    s
}

fn sbd_resumes(eff: &[Effect]) -> Vec<JobKey> {
    eff.iter()
        .filter_map(|e| match e {
            Effect::Signal {
                key,
                action: SbdAction::Resume,
                ..
            } => Some(*key),
            _ => None,
        })
        .collect()
}

/// Start job `key` on hostA and bring it to USUSP and then (bresume) SSUSP.
fn run_then_bresume(s: &mut Sched, key: JobKey, seq: u64) {
    let attempt = s.jobs[&key].attempt;
    s.dispatch_accepted(T0, key, attempt, 100 + key.0 as u32, 100 + key.0 as u32);
    s.stop(T0, &alice(), key).expect("stop");
    s.report(
        T0,
        Report {
            host: "hostA".into(),
            key,
            attempt,
            seq,
            time: 0,
            kind: ReportKind::State {
                state: status::USUSP,
                reasons: susp::USER_STOP,
                subreasons: 0,
            },
        },
    );
    s.resume(T0, &alice(), key).expect("resume");
    assert_eq!(s.jobs[&key].state, JobState::Ssusp);
    assert_eq!(s.jobs[&key].reasons, susp::USER_RESUME);
}

#[test]
fn host_scheduling_threshold_keeps_jobs_off_a_busy_host() {
    let mut c = cfg();
    c.hosts[0].load_sched.insert("r1m".into(), 0.5);
    let mut s = core(c);
    s.lim_update("hostA", 1, 1.0, true, load(0.8));
    assert_eq!(
        s.host_status(&s.hosts[0]).long(),
        "closed_Busy",
        "bhosts -l: beyond its own threshold"
    );
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert!(
        s.jobs[&(1, 0)]
            .pend_reasons
            .contains_key(&(pend::LOAD_BASE + 1)),
        "{:?}",
        s.jobs[&(1, 0)].pend_reasons
    );
    s.lim_update("hostA", 1, 1.0, true, load(0.7));
    assert!(!s.needs_pass(), "still beyond the threshold: nothing to do");
    s.lim_update("hostA", 1, 1.0, true, load(0.4));
    assert!(
        s.needs_pass(),
        "the load fell under the threshold: a pass is due"
    );
    assert_eq!(s.host_status(&s.hosts[0]), HostStatus::Ok);
    s.schedule(T0 + 1000);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
}

#[test]
fn bresumed_jobs_wait_for_host_and_queue_thresholds_one_per_period() {
    let mut c = cfg();
    c.hosts[0].load_sched.insert("r1m".into(), 1.0);
    c.queues[0].load_sched.insert("r1m".into(), 2.0); // normal, priority 30
    c.queues[1].load_sched.insert("r1m".into(), 2.0); // high, priority 40
    let mut s = core(c);
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    let mut hi = cmd("b");
    hi.queue = "high".into();
    s.submit(T0, &alice(), hi).expect("submit");
    s.schedule(T0);
    assert_eq!(dispatches(&s.take_effects()).len(), 2);
    run_then_bresume(&mut s, (1, 0), 1);
    run_then_bresume(&mut s, (2, 0), 1);
    s.take_effects();

    // Within the queue's threshold (2.0) but not the host's (1.0): both wait.
    s.lim_update("hostA", 1, 1.0, true, load(1.5));
    s.schedule(T0 + 1000);
    s.tick(T0 + 1500);
    assert!(sbd_resumes(&s.take_effects()).is_empty());

    // Idle (the load changes without any event; the tick sees it): the high-priority
    // job first, the other one SBD_SLEEP_TIME (7 s) later.
    s.lim_update("hostA", 1, 1.0, true, load(0.0));
    s.tick(T0 + 2000);
    assert_eq!(sbd_resumes(&s.take_effects()), vec![(2, 0)]);
    s.tick(T0 + 5000);
    s.schedule(T0 + 5000);
    assert!(sbd_resumes(&s.take_effects()).is_empty());
    s.tick(T0 + 9000);
    assert_eq!(sbd_resumes(&s.take_effects()), vec![(1, 0)]);
    s.tick(T0 + 20_000);
    assert!(
        sbd_resumes(&s.take_effects()).is_empty(),
        "each order is sent once"
    );
}

#[test]
fn run_and_dispatch_windows_gate_dispatch() {
    let tw = |s: &str| basalt_config::TimeWindow::parse(s).unwrap_or_else(|e| panic!("{e}"));
    let mut c = cfg();
    c.queues[0].run_windows = Some(tw("19:00-8:00"));
    c.queues[1].dispatch_windows = Some(tw("19:00-8:00"));
    let mut s = core(c);
    // Monday 12:00: both queues' windows are closed.
    let noon = 24 * 60 + 12 * 60;
    s.set_week_minute(noon);
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    let mut hi = cmd("b");
    hi.queue = "high".into();
    s.submit(T0, &alice(), hi).expect("submit");
    s.schedule(T0);
    assert!(dispatches(&s.take_effects()).is_empty());
    for k in [(1, 0), (2, 0)] {
        assert!(
            s.jobs[&k].pend_reasons.contains_key(&pend::QUEUE_WINDOW),
            "{:?}",
            s.jobs[&k].pend_reasons
        );
    }
    assert!(!s.queue_windows_open(&s.queues[0]));
    // 19:00: the windows open, a pass is due and both start.
    s.set_week_minute(24 * 60 + 19 * 60);
    assert!(s.needs_pass());
    s.schedule(T0 + 1000);
    assert_eq!(dispatches(&s.take_effects()).len(), 2);
}

#[test]
fn host_dispatch_window_closes_the_host() {
    let mut c = cfg();
    c.hosts[0].dispatch_window =
        Some(basalt_config::TimeWindow::parse("19:00-8:00").unwrap_or_else(|e| panic!("{e}")));
    let mut s = core(c);
    // Before the runtime gives the time, windows count as open.
    assert_eq!(s.host_status(&s.hosts[0]), HostStatus::Ok);
    s.set_week_minute(24 * 60 + 12 * 60);
    assert_eq!(s.host_status(&s.hosts[0]).long(), "closed_Wind");
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert_eq!(
        s.jobs[&(1, 0)].pend_reasons.get(&pend::DISPATCH_WINDOW),
        Some(&vec!["hostA".to_owned()])
    );
    s.set_week_minute(24 * 60 + 20 * 60);
    s.schedule(T0 + 1000);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
}

#[test]
fn resume_cond_alone_decides_for_bresumed_jobs() {
    let mut c = cfg();
    c.queues[0].load_sched.insert("r1m".into(), 0.5);
    c.queues[0].resume_cond =
        Some(basalt_susp_core::Cond::parse("ut < 0.3").unwrap_or_else(|e| panic!("{e}")));
    let mut s = core(c);
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    run_then_bresume(&mut s, (1, 0), 1);
    s.take_effects();
    // r1m within loadSched but ut too high: RESUME_COND is false, the job waits.
    let mut l = load(0.0);
    l.insert("ut".into(), 0.9);
    s.lim_update("hostA", 1, 1.0, true, l.clone());
    s.tick(T0 + 1000);
    assert!(sbd_resumes(&s.take_effects()).is_empty());
    // r1m beyond loadSched but RESUME_COND true: resumed.
    l.insert("r1m".into(), 3.0);
    l.insert("ut".into(), 0.1);
    s.lim_update("hostA", 1, 1.0, true, l);
    s.tick(T0 + 2000);
    assert_eq!(sbd_resumes(&s.take_effects()), vec![(1, 0)]);
}
