//! Decision tests on a manual clock.

use super::*;

const S: Millis = 1000;
/// Monday 12:00.
const NOON_MON: u32 = 24 * 60 + 12 * 60;

fn th(sched: &[(&str, f64)], stop: &[(&str, f64)]) -> Thresholds {
    Thresholds {
        sched: sched.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        stop: stop.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn queue(name: &str, priority: u32, t: Thresholds) -> QueuePolicy {
    QueuePolicy {
        name: name.to_owned(),
        priority,
        thresholds: t,
        ..Default::default()
    }
}

/// The seed's example: low r1m 0.25/1.75, high r1m 1.5 (no stop threshold).
fn seed_policy() -> Policy {
    Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![
            queue("low", 10, th(&[("r1m", 0.25)], &[("r1m", 1.75)])),
            queue("high", 40, th(&[("r1m", 1.5)], &[])),
        ],
    )
}

/// One CPU, so effective run-queue lengths equal raw ones; `it` large (idle console).
fn load(vals: &[(&str, f64)]) -> HostLoad {
    let mut values: BTreeMap<String, f64> = [("it".to_owned(), 1000.0)].into_iter().collect();
    for (k, v) in vals {
        values.insert(k.to_string(), *v);
    }
    HostLoad {
        available: true,
        lock: HostLock::None,
        ncpus: 1,
        cpu_factor: 1.0,
        values,
    }
}

fn job(id: u64, queue: &str, start: Millis, state: JobState) -> JobView {
    JobView {
        key: (id, 0, 1),
        queue: queue.to_owned(),
        start_time: start,
        state,
        forced: false,
    }
}

fn ssusp_load(sub: LoadIndex) -> JobState {
    JobState::Ssusp {
        reasons: susp::LOAD_REASON,
        subreasons: sub.position() as u32,
    }
}

fn suspend(id: u64, reasons: u32, sub: u32) -> Action {
    Action::Suspend {
        key: (id, 0, 1),
        reasons,
        subreasons: sub,
    }
}

fn resume(id: u64) -> Action {
    Action::Resume { key: (id, 0, 1) }
}

const R1M: u32 = 1;

#[test]
fn seed_example_low_job_stopped_high_runs_on_then_low_resumes() {
    let mut p = seed_policy();
    let t0 = 1_000 * S;
    // Low job alone, its own load 1.25: under 1.75, and the sole job anyway.
    let low = job(1, "low", t0, JobState::Run);
    assert!(
        p.decide(
            t0 + 20 * S,
            NOON_MON,
            &load(&[("r1m", 1.25)]),
            std::slice::from_ref(&low)
        )
        .is_empty()
    );
    // High job joins; run queue 2.25 > 1.75: the low job is stopped, high runs on.
    let high = job(2, "high", t0 + 30 * S, JobState::Run);
    let a = p.decide(
        t0 + 45 * S,
        NOON_MON,
        &load(&[("r1m", 2.25)]),
        &[low.clone(), high.clone()],
    );
    assert_eq!(a, vec![suspend(1, susp::LOAD_REASON, R1M)]);
    // The load stays above 0.25 while high runs: low stays stopped.
    let low_s = JobView {
        state: ssusp_load(LoadIndex::R1m),
        ..low.clone()
    };
    let a = p.decide(
        t0 + 60 * S,
        NOON_MON,
        &load(&[("r1m", 1.2)]),
        &[low_s.clone(), high.clone()],
    );
    assert!(a.is_empty(), "{a:?}");
    // High exits, the load falls to idle: low is resumed.
    let a = p.decide(t0 + 120 * S, NOON_MON, &load(&[("r1m", 0.1)]), &[low_s]);
    assert_eq!(a, vec![resume(1)]);
}

#[test]
fn effective_run_queue_is_compared() {
    let mut p = seed_policy();
    let jobs = [
        job(1, "low", 0, JobState::Run),
        job(2, "low", 0, JobState::Run),
    ];
    // Raw 3.0 on 2 CPUs is an effective 1.5: below 1.75.
    let mut l = load(&[("r1m", 3.0)]);
    l.ncpus = 2;
    assert!(p.decide(100 * S, NOON_MON, &l, &jobs).is_empty());
    // Raw 4.0 on 2 CPUs: effective 2.0.
    l.values.insert("r1m".into(), 4.0);
    assert_eq!(p.decide(200 * S, NOON_MON, &l, &jobs).len(), 1);
}

#[test]
fn thresholds_are_the_stricter_of_host_and_queue() {
    let q = th(
        &[("r1m", 1.0), ("mem", 100.0)],
        &[("r1m", 3.0), ("mem", 50.0)],
    );
    let h = th(
        &[("r1m", 0.5), ("mem", 200.0), ("ut", 0.9)],
        &[("r1m", 4.0), ("mem", 20.0)],
    );
    let p = Policy::new(Params::default(), h, vec![queue("q", 1, q)]);
    let t = p.job_thresholds("q");
    assert_eq!(t.sched["r1m"], 0.5);
    assert_eq!(
        t.sched["mem"], 200.0,
        "mem: less means busier, so the higher is stricter"
    );
    assert_eq!(t.sched["ut"], 0.9);
    assert_eq!(t.stop["r1m"], 3.0);
    assert_eq!(t.stop["mem"], 50.0);
}

#[test]
fn host_threshold_stops_jobs_of_a_queue_without_one() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        th(&[], &[("ut", 0.8)]),
        vec![queue("q", 1, Thresholds::default())],
    );
    let jobs = [
        job(1, "q", 0, JobState::Run),
        job(2, "q", 5 * S, JobState::Run),
    ];
    let a = p.decide(100 * S, NOON_MON, &load(&[("ut", 0.95)]), &jobs);
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, 3)]);
}

#[test]
fn a_job_is_stopped_only_for_its_own_thresholds() {
    // Loose low-priority queue: the high-priority job goes first (LSF's "not desirable" case).
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![
            queue("low", 1, th(&[], &[("r1m", 5.0)])),
            queue("high", 9, th(&[], &[("r1m", 2.0)])),
        ],
    );
    let jobs = [
        job(1, "low", 0, JobState::Run),
        job(2, "high", 0, JobState::Run),
    ];
    let a = p.decide(100 * S, NOON_MON, &load(&[("r1m", 3.0)]), &jobs);
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, R1M)]);
}

#[test]
fn lowest_priority_newest_first_one_per_period() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![
            queue("low", 1, th(&[("r1m", 0.5)], &[("r1m", 2.0)])),
            queue("mid", 5, th(&[("r1m", 0.5)], &[("r1m", 2.0)])),
        ],
    );
    let mut jobs = vec![
        job(1, "low", 0, JobState::Run),
        job(2, "low", 10 * S, JobState::Run),
        job(3, "mid", 20 * S, JobState::Run),
    ];
    let busy = load(&[("r1m", 3.0)]);
    let a = p.decide(100 * S, NOON_MON, &busy, &jobs);
    assert_eq!(
        a,
        vec![suspend(2, susp::LOAD_REASON, R1M)],
        "newest job of the lowest queue"
    );
    jobs[1].state = ssusp_load(LoadIndex::R1m);
    // Within the same period: nothing more.
    assert!(p.decide(105 * S, NOON_MON, &busy, &jobs).is_empty());
    // Next period: the older low job.
    let a = p.decide(110 * S, NOON_MON, &busy, &jobs);
    assert_eq!(a, vec![suspend(1, susp::LOAD_REASON, R1M)]);
    jobs[0].state = ssusp_load(LoadIndex::R1m);
    // The mid job is now the only one running: kept (sole-job rule, idle console).
    assert!(p.decide(120 * S, NOON_MON, &busy, &jobs).is_empty());
}

#[test]
fn recently_started_jobs_are_not_checked() {
    let mut p = seed_policy();
    let jobs = [
        job(1, "low", 95 * S, JobState::Run),
        job(2, "low", 0, JobState::Run),
    ];
    let a = p.decide(100 * S, NOON_MON, &load(&[("r1m", 3.0)]), &jobs);
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, R1M)]);
}

#[test]
fn sole_job_kept_unless_interactive_or_ignore_it() {
    let jobs = [job(1, "low", 0, JobState::Run)];
    let mut p = seed_policy();
    assert!(
        p.decide(100 * S, NOON_MON, &load(&[("r1m", 3.0)]), &jobs)
            .is_empty()
    );
    // An interactive user (it < 1 minute): suspended.
    let mut p = seed_policy();
    let a = p.decide(
        100 * S,
        NOON_MON,
        &load(&[("r1m", 3.0), ("it", 0.0)]),
        &jobs,
    );
    assert_eq!(a, vec![suspend(1, susp::LOAD_REASON, R1M)]);
    // LSB_STOP_IGNORE_IT.
    let mut p = seed_policy();
    p.params.stop_ignore_it = true;
    let a = p.decide(100 * S, NOON_MON, &load(&[("r1m", 3.0)]), &jobs);
    assert_eq!(a, vec![suspend(1, susp::LOAD_REASON, R1M)]);
}

#[test]
fn forced_jobs_are_never_stopped() {
    let mut p = seed_policy();
    let mut forced = job(2, "low", 10 * S, JobState::Run);
    forced.forced = true;
    let jobs = [job(1, "low", 0, JobState::Run), forced];
    // The newest (forced) job is skipped; the other one goes.
    let a = p.decide(100 * S, NOON_MON, &load(&[("r1m", 3.0)]), &jobs);
    assert_eq!(a, vec![suspend(1, susp::LOAD_REASON, R1M)]);
    let jobs = [
        JobView {
            state: ssusp_load(LoadIndex::R1m),
            ..jobs[0].clone()
        },
        jobs[1].clone(),
    ];
    assert!(
        p.decide(
            200 * S,
            NOON_MON,
            &load(&[("r1m", 3.0), ("it", 0.0)]),
            &jobs
        )
        .is_empty()
    );
}

#[test]
fn paging_ignored_when_idle_longer_than_pg_susp_it() {
    let qs = vec![queue("q", 1, th(&[("pg", 5.0)], &[("pg", 20.0)]))];
    let params = Params {
        sleep_ms: 10 * S,
        pg_susp_it_secs: 180,
        ..Default::default()
    };
    let jobs = [job(1, "q", 0, JobState::Run), job(2, "q", 0, JobState::Run)];
    // Idle 10 minutes > 3: pg not checked.
    let mut p = Policy::new(params.clone(), Thresholds::default(), qs.clone());
    assert!(
        p.decide(
            100 * S,
            NOON_MON,
            &load(&[("pg", 50.0), ("it", 10.0)]),
            &jobs
        )
        .is_empty()
    );
    // Idle 2 minutes: pg checked.
    let mut p = Policy::new(params, Thresholds::default(), qs);
    let a = p.decide(
        100 * S,
        NOON_MON,
        &load(&[("pg", 50.0), ("it", 2.0)]),
        &jobs,
    );
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, 4)]);
    // Suspended for paging: stays (SUSP_PG_IT) until the host has been idle PG_SUSP_IT,
    // even with pg back under loadSched.
    let s = [
        jobs[0].clone(),
        JobView {
            state: ssusp_load(LoadIndex::Pg),
            ..jobs[1].clone()
        },
    ];
    let a = p.decide(200 * S, NOON_MON, &load(&[("pg", 1.0), ("it", 2.0)]), &s);
    assert_eq!(
        a,
        vec![Action::Reason {
            key: (2, 0, 1),
            reasons: susp::PG_IT,
            subreasons: 0
        }]
    );
    let a = p.decide(300 * S, NOON_MON, &load(&[("pg", 1.0), ("it", 4.0)]), &s);
    assert_eq!(a, vec![resume(2)]);
}

#[test]
fn it_and_ls_stop_every_job_at_once() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![queue("q", 1, th(&[("it", 10.0)], &[("it", 5.0)]))],
    );
    let jobs = [
        job(1, "q", 0, JobState::Run),
        job(2, "q", 0, JobState::Run),
        job(3, "q", 0, JobState::Run),
    ];
    // Someone is typing (it 0): every job goes in one pass.
    let a = p.decide(100 * S, NOON_MON, &load(&[("it", 0.0)]), &jobs);
    let it = LoadIndex::It.position() as u32;
    assert_eq!(
        a,
        vec![
            suspend(3, susp::LOAD_REASON, it),
            suspend(2, susp::LOAD_REASON, it),
            suspend(1, susp::LOAD_REASON, it)
        ]
    );
    // ls: all but the last (it is 3 minutes: not interactive, the sole-job rule keeps one).
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![queue("q", 1, th(&[], &[("ls", 2.0)]))],
    );
    let a = p.decide(100 * S, NOON_MON, &load(&[("ls", 3.0), ("it", 3.0)]), &jobs);
    let ls = LoadIndex::Ls.position() as u32;
    assert_eq!(
        a,
        vec![
            suspend(3, susp::LOAD_REASON, ls),
            suspend(2, susp::LOAD_REASON, ls)
        ]
    );
}

#[test]
fn resume_needs_every_index_within_loadsched_hysteresis() {
    let mut p = seed_policy();
    let jobs = [
        job(1, "low", 0, ssusp_load(LoadIndex::R1m)),
        job(2, "high", 0, JobState::Run),
    ];
    // Below loadStop (1.75) but above loadSched (0.25): stays.
    assert!(
        p.decide(100 * S, NOON_MON, &load(&[("r1m", 1.0)]), &jobs)
            .is_empty()
    );
    assert!(
        p.decide(110 * S, NOON_MON, &load(&[("r1m", 0.26)]), &jobs)
            .is_empty()
    );
    assert_eq!(
        p.decide(120 * S, NOON_MON, &load(&[("r1m", 0.25)]), &jobs),
        vec![resume(1)]
    );
}

#[test]
fn resume_reports_the_index_that_blocks() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![queue(
            "q",
            1,
            th(&[("r1m", 0.5), ("ut", 0.5)], &[("r1m", 2.0)]),
        )],
    );
    let jobs = [job(1, "q", 0, ssusp_load(LoadIndex::R1m))];
    let a = p.decide(
        100 * S,
        NOON_MON,
        &load(&[("r1m", 0.1), ("ut", 0.9)]),
        &jobs,
    );
    assert_eq!(
        a,
        vec![Action::Reason {
            key: (1, 0, 1),
            reasons: susp::LOAD_REASON,
            subreasons: 3
        }]
    );
}

#[test]
fn resume_highest_priority_oldest_first_one_per_period() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![
            queue("low", 1, th(&[("r1m", 1.0)], &[("r1m", 2.0)])),
            queue("high", 5, th(&[("r1m", 1.0)], &[("r1m", 2.0)])),
        ],
    );
    let s = ssusp_load(LoadIndex::R1m);
    let mut jobs = vec![
        job(1, "low", 0, s),
        job(2, "high", 20 * S, s),
        job(3, "high", 10 * S, s),
    ];
    let idle = load(&[("r1m", 0.0)]);
    assert_eq!(p.decide(100 * S, NOON_MON, &idle, &jobs), vec![resume(3)]);
    jobs[2].state = JobState::Run;
    assert!(
        p.decide(105 * S, NOON_MON, &idle, &jobs).is_empty(),
        "one per period"
    );
    assert_eq!(p.decide(110 * S, NOON_MON, &idle, &jobs), vec![resume(2)]);
    jobs[1].state = JobState::Run;
    assert_eq!(p.decide(120 * S, NOON_MON, &idle, &jobs), vec![resume(1)]);
}

#[test]
fn user_stopped_window_and_locked_jobs_are_not_resumed_by_load() {
    let mut p = seed_policy();
    let jobs = [
        job(1, "low", 0, JobState::Ususp),
        job(
            2,
            "low",
            0,
            JobState::Ssusp {
                reasons: susp::USER_STOP,
                subreasons: 0,
            },
        ),
        job(
            3,
            "low",
            0,
            JobState::Ssusp {
                reasons: susp::LOAD_REASON | susp::MBD_LOCK,
                subreasons: 1,
            },
        ),
    ];
    assert!(
        p.decide(100 * S, NOON_MON, &load(&[("r1m", 0.0)]), &jobs)
            .is_empty()
    );
}

#[test]
fn stop_cond_and_resume_cond() {
    let mut q = queue("q", 1, Thresholds::default());
    q.stop_cond = Some(Cond::parse("r1m > 2 && ut > 0.5").unwrap_or_else(|e| panic!("{e}")));
    q.resume_cond = Some(Cond::parse("ut < 0.3").unwrap_or_else(|e| panic!("{e}")));
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![q],
    );
    let mut jobs = vec![job(1, "q", 0, JobState::Run), job(2, "q", 0, JobState::Run)];
    assert!(
        p.decide(
            100 * S,
            NOON_MON,
            &load(&[("r1m", 3.0), ("ut", 0.4)]),
            &jobs
        )
        .is_empty()
    );
    let a = p.decide(
        110 * S,
        NOON_MON,
        &load(&[("r1m", 3.0), ("ut", 0.6)]),
        &jobs,
    );
    assert_eq!(a, vec![suspend(2, susp::QUE_STOP_COND, 0)]);
    jobs[1].state = JobState::Ssusp {
        reasons: susp::QUE_STOP_COND,
        subreasons: 0,
    };
    // RESUME_COND alone decides: r1m is high but ut < 0.3 -> resume.
    let a = p.decide(
        120 * S,
        NOON_MON,
        &load(&[("r1m", 0.0), ("ut", 0.4)]),
        &jobs,
    );
    assert_eq!(
        a,
        vec![Action::Reason {
            key: (2, 0, 1),
            reasons: susp::QUE_RESUME_COND,
            subreasons: 0
        }]
    );
    let a = p.decide(
        130 * S,
        NOON_MON,
        &load(&[("r1m", 5.0), ("ut", 0.2)]),
        &jobs,
    );
    assert_eq!(a, vec![resume(2)]);
}

#[test]
fn run_windows_suspend_all_and_resume_all() {
    let mut q = queue("night", 1, Thresholds::default());
    q.run_window = Some(TimeWindow::parse("19:00-8:00").unwrap_or_else(|e| panic!("{e}")));
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![q, queue("day", 1, Thresholds::default())],
    );
    let mut forced = job(3, "night", 0, JobState::Run);
    forced.forced = true;
    let jobs = vec![
        job(1, "night", 0, JobState::Run),
        job(2, "night", 50 * S, JobState::Run),
        forced,
        job(4, "day", 0, JobState::Run),
    ];
    let mon_0700 = 24 * 60 + 7 * 60;
    let mon_0800 = 24 * 60 + 8 * 60;
    assert!(p.decide(100 * S, mon_0700, &load(&[]), &jobs).is_empty());
    let a = p.decide(101 * S, mon_0800, &load(&[]), &jobs);
    assert_eq!(
        a,
        vec![
            suspend(1, susp::QUEUE_WINDOW, 0),
            suspend(2, susp::QUEUE_WINDOW, 0)
        ]
    );
    let w = JobState::Ssusp {
        reasons: susp::QUEUE_WINDOW,
        subreasons: 0,
    };
    let mut later = jobs.clone();
    later[0].state = w;
    later[1].state = w;
    // Not resumed by load while the window is closed.
    assert!(p.decide(200 * S, NOON_MON, &load(&[]), &later).is_empty());
    let mon_1900 = 24 * 60 + 19 * 60;
    assert_eq!(
        p.decide(201 * S, mon_1900, &load(&[]), &later),
        vec![resume(1), resume(2)]
    );
    // Windows also act when LIM has no load for the host.
    let none = HostLoad::default();
    assert_eq!(p.decide(300 * S, mon_0800, &none, &jobs).len(), 2);
}

#[test]
fn terminate_when_load_and_window() {
    let mut q = queue("q", 1, th(&[], &[("r1m", 1.0)]));
    q.terminate_on_load = true;
    q.terminate_on_window = true;
    q.run_window = Some(TimeWindow::parse("19:00-8:00").unwrap_or_else(|e| panic!("{e}")));
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            ..Default::default()
        },
        Thresholds::default(),
        vec![q],
    );
    let jobs = [job(1, "q", 0, JobState::Run), job(2, "q", 0, JobState::Run)];
    let a = p.decide(100 * S, 20 * 60, &load(&[("r1m", 3.0)]), &jobs);
    assert_eq!(
        a,
        vec![Action::Terminate {
            key: (2, 0, 1),
            term_reason: "TERM_LOAD".into()
        }]
    );
    let a = p.decide(200 * S, NOON_MON, &load(&[]), &jobs);
    assert_eq!(a.len(), 2);
    assert!(a.iter().all(
        |x| matches!(x, Action::Terminate { term_reason, .. } if term_reason == "TERM_WINDOW")
    ));
}

#[test]
fn unavailable_host_changes_nothing_by_load() {
    let mut p = seed_policy();
    let jobs = [
        job(1, "low", 0, JobState::Run),
        job(2, "low", 0, ssusp_load(LoadIndex::R1m)),
    ];
    assert!(
        p.decide(100 * S, NOON_MON, &HostLoad::default(), &jobs)
            .is_empty()
    );
}

#[test]
fn external_indices_by_direction() {
    let mut p = Policy::new(
        Params {
            sleep_ms: 10 * S,
            externals: vec![("gpu".into(), true), ("scratch".into(), false)],
            ..Default::default()
        },
        Thresholds::default(),
        vec![queue(
            "q",
            1,
            th(&[("scratch", 100.0)], &[("gpu", 0.9), ("scratch", 10.0)]),
        )],
    );
    let jobs = [job(1, "q", 0, JobState::Run), job(2, "q", 0, JobState::Run)];
    let a = p.decide(
        100 * S,
        NOON_MON,
        &load(&[("gpu", 0.95), ("scratch", 500.0)]),
        &jobs,
    );
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, 11)]);
    let a = p.decide(
        110 * S,
        NOON_MON,
        &load(&[("gpu", 0.1), ("scratch", 5.0)]),
        &jobs,
    );
    assert_eq!(a, vec![suspend(2, susp::LOAD_REASON, 12)]);
}

/// Loading a configuration from files is the caller's job; the test writes the files.
#[test]
#[allow(clippy::disallowed_methods)]
fn from_config_reads_queues_hosts_and_params() {
    let dir = std::env::temp_dir().join(format!("basalt-susp-core-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let conf = dir.join("lsbatch/c1/configdir");
    std::fs::create_dir_all(&conf).unwrap_or_else(|e| panic!("{e}"));
    let w = |p: &std::path::Path, s: &str| std::fs::write(p, s).unwrap_or_else(|e| panic!("{e}"));
    w(
        &dir.join("lsf.conf"),
        "LSF_CONFDIR=.\nLSB_STOP_IGNORE_IT=Y\n",
    );
    w(
        &dir.join("lsf.shared"),
        "Begin Cluster\nClusterName\nc1\nEnd Cluster\nBegin Resource\nRESOURCENAME TYPE INTERVAL INCREASING DESCRIPTION\ngpu Numeric 10 Y (gpu)\nEnd Resource\n",
    );
    w(
        &dir.join("lsf.cluster.c1"),
        "Begin Cluster\nEnd Cluster\nBegin Host\nHOSTNAME model type server\nhostA ! ! 1\nEnd Host\n",
    );
    w(
        &conf.join("lsb.params"),
        "Begin Parameters\nSBD_SLEEP_TIME=2\nPG_SUSP_IT=60\nEnd Parameters\n",
    );
    w(
        &conf.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME=low\nPRIORITY=10\nr1m=0.25/1.75\nSTOP_COND=gpu > 3\nRESUME_COND=(gpu < 1\nTERMINATE_WHEN=LOAD\nEnd Queue\n",
    );
    w(
        &conf.join("lsb.hosts"),
        "Begin Host\nHOST_NAME MXJ r1m ut\ndefault ! 0.1/1.0 ()/0.9\nEnd Host\n",
    );
    let loaded = basalt_config::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let (p, errors) = Policy::from_config(&loaded.config, "hostA", "", "");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(errors.len(), 1, "the bad RESUME_COND: {errors:?}");
    assert_eq!(p.params.sleep_ms, 2000);
    assert_eq!(p.params.pg_susp_it_secs, 60);
    assert!(p.params.stop_ignore_it);
    assert_eq!(p.params.externals, vec![("gpu".to_owned(), true)]);
    let q = &p.queues["low"];
    assert_eq!(q.priority, 10);
    assert!(q.stop_cond.is_some() && q.resume_cond.is_none());
    assert!(q.terminate_on_load && !q.terminate_on_window);
    let t = p.job_thresholds("low");
    assert_eq!(t.sched["r1m"], 0.1);
    assert_eq!(t.stop["r1m"], 1.0);
    assert_eq!(t.stop["ut"], 0.9);
}

#[test]
fn a_locked_host_stops_every_job_and_resumes_none() {
    let mut p = seed_policy();
    let mut forced = job(3, "high", 0, JobState::Run);
    forced.forced = true;
    let jobs = [
        job(1, "low", 0, JobState::Run),
        job(2, "high", 0, JobState::Run),
        forced,
    ];
    let mut l = load(&[("r1m", 0.0)]);
    l.lock = HostLock::User;
    let a = p.decide(100 * S, NOON_MON, &l, &jobs);
    assert_eq!(
        a,
        vec![
            suspend(1, susp::HOST_LOCK, 0),
            suspend(2, susp::HOST_LOCK, 0)
        ],
        "every job at once (lowest priority first), the last one too; not the brun job"
    );
    let locked = JobState::Ssusp {
        reasons: susp::HOST_LOCK,
        subreasons: 0,
    };
    let s = [job(1, "low", 0, locked), job(2, "high", 0, locked)];
    l.lock = HostLock::Master;
    let a = p.decide(200 * S, NOON_MON, &l, &s);
    assert!(
        a.iter().all(
            |x| matches!(x, Action::Reason { reasons, .. } if *reasons == susp::HOST_LOCK_MASTER)
        ),
        "{a:?}"
    );
    l.lock = HostLock::None;
    assert_eq!(p.decide(300 * S, NOON_MON, &l, &s), vec![resume(2)]);
}

/// Issue 23 item 6 (preemption and load-based suspension together): a job suspended by
/// preemption (SUSP_MBD_PREEMPT with SUSP_MBD_LOCK) is not resumed by the load logic,
/// however idle the host — mbatchd resumes it when the preempting job's slots free up.
#[test]
fn a_preempted_job_is_not_resumed_by_load_while_the_preemptor_holds_its_slots() {
    let mut p = seed_policy();
    let preempted = JobState::Ssusp {
        reasons: susp::MBD_PREEMPT | susp::MBD_LOCK,
        subreasons: 0,
    };
    let jobs = [
        job(1, "low", 0, preempted),
        job(2, "high", 50 * S, JobState::Run),
    ];
    for t in [100, 200, 300] {
        let out = p.decide(t * S, NOON_MON, &load(&[("r1m", 0.0)]), &jobs);
        assert!(
            !out.iter().any(|a| matches!(a, Action::Resume { .. })),
            "{out:?}"
        );
    }
}
