//! Slot reservation (lsb.queues `SLOT_RESERVE = MAX_RESERVE_TIME[n]`), each test named
//! after the sentence of seed 001 ("Processor Reservation") it checks. Two hosts of two
//! slots, a manual clock; MBD_SLEEP_TIME is 10 s, so MAX_RESERVE_TIME[5] is 50 s.

use super::*;
use crate::tests::expect::assert_effects;
use crate::tests::{T0, alice, bob, cfg, cmd, finish_at, hellos, up_with};

/// A core whose queue "normal" reserves slots for 5 cycles ("high" does not).
fn reserving() -> Sched {
    let mut c = cfg();
    c.queues[0].slot_reserve = Some(5);
    up_with(c)
}

fn parallel(n: u32) -> Submission {
    let mut s = cmd("mpirun a.out");
    s.num_processors = n;
    s.max_processors = n;
    s
}

fn in_queue(mut s: Submission, q: &str) -> Submission {
    s.queue = q.into();
    s
}

fn state(s: &Sched, id: u64) -> JobState {
    s.jobs[&(id, 0)].state
}

/// Job `id` finished at `now` (its host's report number `seq`).
fn end(s: &mut Sched, id: u64, now: Millis, seq: u64) {
    finish_at(s, (id, 0), 0, seq, now);
}

/// Slots reserved on each host (hostA, hostB).
fn rsv(s: &Sched) -> (u32, u32) {
    (s.hosts[0].rsv_slots, s.hosts[1].rsv_slots)
}

/// Three one-slot jobs (1, 2, 3) running, then the 4-slot job 4: one slot is free.
fn three_running_then_a_parallel_job(s: &mut Sched) {
    for _ in 0..3 {
        s.submit(T0, &alice(), cmd("sleep 600")).expect("submit");
    }
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 3 @0 on hostA",
            "Dispatch 3 -> hostA attempt 1",
        ],
    );
    s.submit(T0, &alice(), parallel(4)).expect("submit");
    s.schedule(T0);
    // It reserves hostB's free slot: nothing is logged, nothing starts.
    assert_effects(&s.take_effects(), &["Log JOB_NEW 4 @0"]);
    assert_eq!(state(s, 4), JobState::Pend);
}

/// "When a parallel job cannot be dispatched because there are not enough job slots to
/// satisfy its minimum processor requirements, the currently available slots will be
/// reserved for the job."
#[test]
fn the_currently_available_slots_are_reserved_for_a_parallel_job_that_cannot_be_dispatched() {
    let mut s = reserving();
    three_running_then_a_parallel_job(&mut s);
    assert_eq!(rsv(&s), (0, 1));
    let (hosts, since) = s.slot_reservation((4, 0)).expect("a reservation");
    assert_eq!((hosts, since), (vec!["hostB".to_string()], T0));
    assert_eq!(s.reserved_slots(|j| *j.queue == *"normal"), 1);
    // Its last slot reserved, hostB is full (bhosts: closed, NJOBS with RSV).
    assert_eq!(
        s.host_status(&s.hosts[1]),
        HostStatus::Closed(ClosedReason::Full)
    );
    // busers counts them too (RSV).
    assert_eq!(s.users_view(&["alice".into()], false)[0].slots.rsv, 1);
    // A one-slot job that cannot start reserves nothing.
    s.submit(T0, &alice(), parallel(1)).expect("submit");
    s.schedule(T0);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 5 @0"]);
    assert!(s.slot_reservation((5, 0)).is_none());
}

/// "These reserved job slots are accumulated until there are enough available to start
/// the job."
#[test]
fn reserved_slots_are_accumulated_until_there_are_enough_to_start_the_job() {
    let mut s = reserving();
    three_running_then_a_parallel_job(&mut s);
    // Each slot freed is reserved: the job ends, nothing starts.
    end(&mut s, 1, T0 + 1000, 1);
    s.schedule(T0 + 1000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @1 DONE end@1 usage",
            "Acct 1 DONE on hostA",
        ],
    );
    assert_eq!(rsv(&s).0 + rsv(&s).1, 2);
    assert_eq!(state(&s, 4), JobState::Pend);
    end(&mut s, 2, T0 + 2000, 2);
    s.schedule(T0 + 2000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 2 @2 DONE end@2 usage",
            "Acct 2 DONE on hostB",
        ],
    );
    assert_eq!(rsv(&s).0 + rsv(&s).1, 3);
    // The fourth: it starts on all four.
    end(&mut s, 3, T0 + 3000, 3);
    s.schedule(T0 + 3000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 3 @3 DONE end@3 usage",
            "Acct 3 DONE on hostA",
            "Log JOB_START 4 @3 on hostA,hostA,hostB,hostB",
            "Dispatch 4 -> hostA attempt 1",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
    assert_eq!(s.jobs[&(4, 0)].hosts.len(), 4);
    // Started: it reserves nothing any more.
    assert_eq!(rsv(&s), (0, 0));
    assert!(s.slot_reservation((4, 0)).is_none());
}

/// "When a slot is reserved for a job it is unavailable to any other job."
#[test]
fn a_reserved_slot_is_unavailable_to_any_other_job() {
    let mut s = reserving();
    three_running_then_a_parallel_job(&mut s);
    // A later job of the same queue, another user's, and one of a higher-priority queue.
    s.submit(T0, &alice(), cmd("one")).expect("submit");
    s.submit(T0, &bob(), cmd("two")).expect("submit");
    s.submit(T0, &bob(), in_queue(cmd("three"), "high"))
        .expect("submit");
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &["Log JOB_NEW 5 @0", "Log JOB_NEW 6 @0", "Log JOB_NEW 7 @0"],
    );
    for id in [5, 6, 7] {
        assert_eq!(state(&s, id), JobState::Pend, "job {id}");
        // hostB's last slot is reserved: it counts as taken, and the reason says so.
        let why = &s.jobs[&(id, 0)].pend_reasons;
        assert!(
            why.get(&basalt_core::job::pend::SLOTS_RESERVED)
                .is_some_and(|h| h.iter().any(|h| h == "hostB")),
            "job {id}: {why:?}"
        );
    }
    // A slot freed on hostA is not reserved yet: the higher-priority queue's job takes
    // it (queue order); the slot reserved on hostB stays unavailable to the others.
    end(&mut s, 1, T0 + 1000, 1);
    s.schedule(T0 + 1000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @1 DONE end@1 usage",
            "Acct 1 DONE on hostA",
            "Log JOB_START 7 @1 on hostA",
            "Dispatch 7 -> hostA attempt 1",
        ],
    );
    assert_eq!(state(&s, 7), JobState::Run);
    assert_eq!(s.jobs[&(7, 0)].hosts, ["hostA"]);
    for id in [5, 6] {
        assert_eq!(state(&s, id), JobState::Pend, "job {id}");
    }
    assert_eq!(rsv(&s), (0, 1));
    // The next slot freed is the reserving job's before the later jobs of its queue.
    end(&mut s, 2, T0 + 2000, 2);
    s.schedule(T0 + 2000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 2 @2 DONE end@2 usage",
            "Acct 2 DONE on hostB",
        ],
    );
    for id in [5, 6] {
        assert_eq!(state(&s, id), JobState::Pend, "job {id}");
    }
    assert_eq!(rsv(&s).0 + rsv(&s).1, 2);
}

/// "... the parallel job will give up the reserved job slots if it still cannot run
/// after the reservation period" (MAX_RESERVE_TIME[5] = 50 s here); it reserves nothing
/// in that pass, so other jobs can use the slots, and may reserve again afterwards.
#[test]
fn the_parallel_job_gives_up_the_reserved_slots_if_it_still_cannot_run_after_the_reservation_period()
 {
    let mut s = reserving();
    three_running_then_a_parallel_job(&mut s);
    s.submit(T0, &bob(), cmd("waits")).expect("submit");
    s.schedule(T0);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 5 @0"]);
    assert_eq!(state(&s, 5), JobState::Pend);
    // Within the period it keeps them (a pass at 49 s).
    hellos(&mut s, T0 + 49_000);
    s.tick(T0 + 49_000);
    s.schedule(T0 + 49_000);
    assert_effects(&s.take_effects(), &[]);
    assert_eq!(rsv(&s), (0, 1));
    assert_eq!(state(&s, 5), JobState::Pend);
    // The period is over: a pass is due, the slot is given up and the waiting job
    // takes it.
    hellos(&mut s, T0 + 50_000);
    s.schedule(T0 + 49_500);
    assert!(!s.needs_pass());
    s.tick(T0 + 50_000);
    assert!(s.needs_pass());
    s.schedule(T0 + 50_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 5 @50 on hostB",
            "Dispatch 5 -> hostB attempt 1",
        ],
    );
    assert_eq!(rsv(&s), (0, 0));
    assert!(s.slot_reservation((4, 0)).is_none());
    assert_eq!(state(&s, 5), JobState::Run);
    // A slot freed later is reserved again, with a new period.
    end(&mut s, 1, T0 + 60_000, 1);
    s.schedule(T0 + 60_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @60 DONE end@60 usage",
            "Acct 1 DONE on hostA",
        ],
    );
    let (hosts, since) = s.slot_reservation((4, 0)).expect("reserved again");
    assert_eq!((hosts.len(), since), (1, T0 + 60_000));
}

/// A queue without SLOT_RESERVE reserves nothing: a 2-slot job can wait behind a stream
/// of 1-slot jobs (daemon-behaviour.md: no slot reservation by default).
#[test]
fn without_slot_reserve_a_free_slot_goes_to_the_next_job_that_fits() {
    let mut s = reserving();
    for _ in 0..3 {
        s.submit(T0, &alice(), in_queue(cmd("sleep 600"), "high"))
            .expect("submit");
    }
    s.schedule(T0);
    s.submit(T0, &alice(), in_queue(parallel(2), "high"))
        .expect("submit");
    s.submit(T0, &alice(), in_queue(cmd("one"), "high"))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(rsv(&s), (0, 0));
    assert_eq!(state(&s, 4), JobState::Pend);
    assert_eq!(state(&s, 5), JobState::Run);
}

/// span[hosts=1]: the job reserves on one host only, the one it can fill most.
#[test]
fn a_span_hosts_1_job_reserves_on_one_host() {
    let mut s = reserving();
    // hostA: one slot taken; hostB: both free but the job needs 3 on one host (never),
    // so it reserves hostB's two.
    s.submit(T0, &alice(), cmd("sleep 600")).expect("submit");
    s.schedule(T0);
    let mut p = parallel(3);
    p.res_req = "span[hosts=1]".into();
    s.submit(T0, &alice(), p).expect("submit");
    s.schedule(T0);
    assert_eq!(state(&s, 2), JobState::Pend);
    assert_eq!(rsv(&s), (0, 2));
}
