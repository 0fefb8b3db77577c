//! Backfill (lsb.queues `BACKFILL = Y`), each test named after the sentence of seed 001
//! ("Processor Reservation and Backfilling") or of issue 22 it checks. Two hosts of two
//! slots, a manual clock; queue "normal" reserves slots (SLOT_RESERVE) and backfills,
//! queue "high" (higher priority) does neither.

use super::*;
use crate::tests::expect::assert_effects;
use crate::tests::{T0, alice, bob, cfg, cmd, finish_at, hellos, up_with};
use basalt_core::job::pend;

fn core() -> Sched {
    let mut c = cfg();
    c.queues[0].slot_reserve = Some(100);
    c.queues[0].backfill = true;
    up_with(c)
}

/// A one-slot job with a run limit (`bsub -W`, in seconds; None: no limit).
fn job(run_secs: Option<i64>) -> Submission {
    let mut s = cmd("short");
    if let Some(r) = run_secs {
        let mut l = *s.rlimits;
        l[RLIMIT_RUN] = r;
        s.rlimits = l.into();
    }
    s
}

fn parallel(n: u32) -> Submission {
    let mut s = cmd("mpirun a.out");
    s.num_processors = n;
    s.max_processors = n;
    s
}

fn state(s: &Sched, id: u64) -> JobState {
    s.jobs[&(id, 0)].state
}

fn reserved(s: &Sched) -> u32 {
    s.hosts.iter().map(|h| h.rsv_slots).sum()
}

/// Jobs 1 and 2 run on hostA (run limit `run`), then the 4-slot job 3 reserves hostB's
/// two slots; its earliest start is when jobs 1 and 2 end (T0 + run).
fn reserve_hostb(s: &mut Sched, run: Option<i64>) {
    for _ in 0..2 {
        let mut j = job(run);
        j.asked_hosts = vec!["hostA".into()];
        s.submit(T0, &alice(), j).expect("submit");
    }
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostA",
            "Dispatch 2 -> hostA attempt 1",
        ],
    );
    s.submit(T0, &alice(), parallel(4)).expect("submit");
    s.schedule(T0);
    // It reserves hostB's two slots: nothing is logged but its JOB_NEW.
    assert_effects(&s.take_effects(), &["Log JOB_NEW 3 @0"]);
    assert_eq!(state(s, 3), JobState::Pend);
    assert_eq!((s.hosts[0].rsv_slots, s.hosts[1].rsv_slots), (0, 2));
}

/// "Backfilling is the execution of a job that is short enough to fit into the time slot
/// during which the processors are reserved" — "short jobs are said to backfill
/// processors reserved for large jobs."
#[test]
fn a_job_short_enough_to_fit_into_the_reserved_time_slot_backfills_the_reserved_processors() {
    let mut s = core();
    reserve_hostb(&mut s, Some(100));
    // 10 s later, a job of at most 50 s ends before the big job can start (T0 + 100 s).
    s.submit(T0 + 10_000, &bob(), job(Some(50)))
        .expect("submit");
    s.schedule(T0 + 10_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 4 @10",
            "Log JOB_START 4 @10 on hostB",
            "Dispatch 4 -> hostB attempt 1",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
    assert_eq!(s.jobs[&(4, 0)].hosts, ["hostB"]);
    // It took one of the reserved slots; the big job keeps the other.
    assert_eq!(reserved(&s), 1);
    assert_eq!(state(&s, 3), JobState::Pend);
}

/// Issue 22: "a backfill job cannot delay the reserving job" — one whose run limit
/// reaches past the reserving job's start waits, with LSF's reason.
#[test]
fn a_backfill_job_that_would_delay_the_reserving_job_is_refused() {
    let mut s = core();
    reserve_hostb(&mut s, Some(100));
    s.submit(T0 + 10_000, &bob(), job(Some(200)))
        .expect("submit");
    s.schedule(T0 + 10_000);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 4 @10"]);
    assert_eq!(state(&s, 4), JobState::Pend);
    let why = &s.jobs[&(4, 0)].pend_reasons;
    assert!(
        why.get(&pend::LESS_DURATION)
            .is_some_and(|h| h.iter().any(|h| h == "hostB")),
        "{why:?}"
    );
    assert_eq!(
        basalt_core::job::pend_reason_text(pend::LESS_DURATION),
        "Not enough slots or resources for whole duration of the job"
    );
    assert_eq!(reserved(&s), 2);
}

/// "Backfilling requires that users specify how long each job will run so that LSF
/// Batch can estimate when it will start and complete": a job without a run limit does
/// not backfill, and nothing backfills a reservation whose start cannot be estimated
/// (the running jobs have no run limit).
#[test]
fn backfilling_requires_run_limits_to_estimate_when_jobs_start_and_complete() {
    let mut s = core();
    reserve_hostb(&mut s, Some(100));
    s.submit(T0 + 10_000, &bob(), job(None)).expect("submit");
    s.schedule(T0 + 10_000);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 4 @10"]);
    assert_eq!(state(&s, 4), JobState::Pend);

    let mut s = core();
    reserve_hostb(&mut s, None);
    s.submit(T0 + 10_000, &bob(), job(Some(1))).expect("submit");
    s.schedule(T0 + 10_000);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 4 @10"]);
    assert_eq!(state(&s, 4), JobState::Pend);
    assert!(
        s.jobs[&(4, 0)]
            .pend_reasons
            .contains_key(&pend::LESS_DURATION)
    );
}

/// A queue without BACKFILL does not backfill, even with a short job.
#[test]
fn a_queue_without_backfill_does_not_use_reserved_slots() {
    let mut s = core();
    reserve_hostb(&mut s, Some(100));
    let mut short = job(Some(10));
    short.queue = "high".into();
    s.submit(T0 + 10_000, &bob(), short).expect("submit");
    s.schedule(T0 + 10_000);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 4 @10"]);
    assert_eq!(state(&s, 4), JobState::Pend);
    assert_eq!(reserved(&s), 2);
}

/// Issue 22, item 4 and its acceptance: "a large parallel job in a busy cluster of small
/// jobs is never starved: with reservation on, it starts within a bound that depends
/// only on the run limits of the jobs ahead of it." 4 hosts × 2 slots; 1,000 one-slot
/// jobs with run limits of 10–60 s (each ends somewhere within its limit) arrive one a
/// second in a backfill queue, and at 30 s an 8-slot job comes to a higher-priority queue
/// that reserves slots. Ahead of it are only the jobs running then, so it starts within
/// the longest run limit (60 s) of its submission. Without reservation it waits for the
/// stream to dry up.
#[test]
fn a_large_parallel_job_among_1000_small_jobs_starts_within_the_run_limits_of_the_jobs_ahead() {
    let with = simulate(true);
    assert!(
        with <= 30_000 + 60_000,
        "started {} s after T0",
        with / 1000
    );
    let without = simulate(false);
    assert!(
        without > 30_000 + 60_000,
        "without reservation: {} s",
        without / 1000
    );
}

/// When (ms after T0) the big job starts, with or without slot reservation in its queue.
fn simulate(reserve: bool) -> Millis {
    let mut c = cfg();
    c.hosts = (0..4)
        .map(|i| crate::tests::host(&format!("host{i}"), i))
        .collect();
    c.queues[0].backfill = true;
    c.queues[1].slot_reserve = reserve.then_some(1000);
    let mut s = up_with(c);
    // A fixed pseudo-random sequence (an LCG): the same run every time.
    let mut seed: u64 = 42;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut ends: BTreeMap<JobKey, Millis> = BTreeMap::new();
    let mut runs: BTreeMap<u64, Millis> = BTreeMap::new();
    let (mut submitted, mut seq) = (0u32, 0u64);
    let mut big: Option<u64> = None;
    let mut now = T0;
    loop {
        // Arrivals due by now: a small job a second, the big one at 30 s.
        while submitted < 1000 && T0 + i64::from(submitted) * 1000 <= now {
            let limit = 10 + next(51) as i64;
            let (id, _, _) = s.submit(now, &alice(), job(Some(limit))).expect("submit");
            runs.insert(id, (1 + next(limit as u64) as i64) * 1000);
            submitted += 1;
        }
        if big.is_none() && now >= T0 + 30_000 {
            let mut p = parallel(8);
            p.queue = "high".into();
            big = Some(s.submit(now, &bob(), p).expect("submit").0);
        }
        // Ends due by now.
        let due: Vec<JobKey> = ends
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(k, _)| *k)
            .collect();
        for key in due {
            ends.remove(&key);
            seq += 1;
            finish_at(&mut s, key, 0, seq, now);
        }
        hellos(&mut s, now);
        s.tick(now);
        s.schedule(now);
        s.take_effects();
        if let Some(b) = big
            && s.jobs[&(b, 0)].state == JobState::Run
        {
            return now - T0;
        }
        // The jobs that just started end after their own run time (within the limit).
        for j in s.jobs.values() {
            if j.state == JobState::Run && !ends.contains_key(&j.key()) && Some(j.id) != big {
                let run = runs.get(&j.id).copied().unwrap_or(1000);
                ends.insert(j.key(), j.start_time * 1000 + run);
            }
        }
        let next_arrival = (submitted < 1000).then(|| T0 + i64::from(submitted) * 1000);
        let next_end = ends.values().min().copied();
        now = match (next_arrival, next_end) {
            (Some(a), Some(e)) => a.min(e).max(now + 1),
            (Some(a), None) => a.max(now + 1),
            (None, Some(e)) => e.max(now + 1),
            (None, None) => return Millis::MAX,
        };
        assert!(now < T0 + 100_000_000, "the simulation does not end");
    }
}

/// bslots' windows: free slots for any run time, reserved ones until their job's
/// estimated start (issue 22: "`bslots` shows the backfill window").
#[test]
fn slot_windows_show_free_slots_and_the_reserved_slots_backfill_window() {
    let mut s = core();
    reserve_hostb(&mut s, Some(100));
    let ws = s.slot_windows(T0 + 10_000, "").expect("windows");
    assert_eq!(
        ws,
        vec![crate::views::SlotWindow {
            host: "hostB".into(),
            runtime: Some(90),
            slots: 2
        }]
    );
    // Without a backfill queue there is no window in reserved slots.
    let mut c = cfg();
    c.queues[0].slot_reserve = Some(100);
    let mut s = up_with(c);
    assert_eq!(
        s.slot_windows(T0, "").expect("windows"),
        vec![
            crate::views::SlotWindow {
                host: "hostA".into(),
                runtime: None,
                slots: 2
            },
            crate::views::SlotWindow {
                host: "hostB".into(),
                runtime: None,
                slots: 2
            }
        ]
    );
    // -R: only the hosts its select part accepts; a bad one is refused.
    let named = s.slot_windows(T0, "select[hname==hostB]").expect("windows");
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].host, "hostB");
    assert_eq!(
        s.slot_windows(T0, "select[(((]"),
        Err(crate::SchedError::BadResReq)
    );
    reserve_hostb(&mut s, Some(100));
    assert!(s.slot_windows(T0 + 10_000, "").expect("windows").is_empty());
}
