//! Queue-based fairshare (seed 003, `SLOT_POOL` / `SLOT_SHARE`), each test named after
//! the statement it checks: a pool of queues `qa` (50 %), `qb` (30 %), `qc` (20 %) on two
//! hosts of five slots, a manual clock.

use super::tests::expect::assert_effects;
use super::tests::*;
use super::*;

/// The pool queues (all of priority 30 unless `prio` says) on 2 × `slots` slots.
fn pooled(slots: u32, shares: &[(&str, u32, u32)]) -> Sched {
    let mut c = cfg();
    for h in &mut c.hosts {
        h.mxj = Some(slots);
        h.mxj_ncpus = false;
    }
    for (name, share, prio) in shares {
        let mut q = crate::tests::queue(name, *prio);
        q.slot_pool = "p".into();
        q.slot_share = *share;
        c.queues.push(q);
    }
    up_with(c)
}

fn seed_pool() -> Sched {
    pooled(5, &[("qa", 50, 30), ("qb", 30, 30), ("qc", 20, 30)])
}

fn submit_to(s: &mut Sched, queue: &str, n: usize, now: Millis) {
    for _ in 0..n {
        let mut sub = cmd("sleep 100");
        sub.queue = queue.into();
        s.submit(now, &alice(), sub).expect("submit");
    }
}

/// Running slots of each queue named.
fn running(s: &Sched, queues: &[&str]) -> Vec<u32> {
    queues
        .iter()
        .map(|q| {
            s.jobs
                .values()
                .filter(|j| j.state == JobState::Run && *j.queue == **q)
                .map(|j| j.slots())
                .sum()
        })
        .collect()
}

const ABC: [&str; 3] = ["qa", "qb", "qc"];

/// End one running job of `queue` at `now`.
fn end_one(s: &mut Sched, queue: &str, now: Millis, seq: u64) {
    let key = s
        .jobs
        .values()
        .find(|j| j.state == JobState::Run && *j.queue == *queue)
        .map(|j| j.key())
        .expect("a running job");
    s.dispatch_accepted(now, key, 1, 100, 100);
    finish_at(s, key, 0, seq, now);
}

/// [`end_one`] of `queue` at `now`, then a pass: the effects of both.
fn end_and_pass(s: &mut Sched, queue: &str, now: Millis, seq: u64) -> Vec<Effect> {
    end_one(s, queue, now, seq);
    s.schedule(now);
    s.take_effects()
}

/// "When queues compete, the allocated slots per queue are kept within the limits of
/// the configured share": 50/30/20 over 10 slots run 5/3/2 while all have work.
#[test]
fn competing_queues_run_their_shares_of_the_pool() {
    let mut s = seed_pool();
    for q in ABC {
        submit_to(&mut s, q, 20, T0);
    }
    s.take_effects();
    s.schedule(T0);
    // qa's jobs are 1-20, qb's 21-40, qc's 41-60: each queue in turn up to its share.
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 3 @0 on hostA",
            "Dispatch 3 -> hostA attempt 1",
            "Log JOB_START 4 @0 on hostB",
            "Dispatch 4 -> hostB attempt 1",
            "Log JOB_START 5 @0 on hostA",
            "Dispatch 5 -> hostA attempt 1",
            "Log JOB_START 21 @0 on hostB",
            "Dispatch 21 -> hostB attempt 1",
            "Log JOB_START 22 @0 on hostA",
            "Dispatch 22 -> hostA attempt 1",
            "Log JOB_START 23 @0 on hostB",
            "Dispatch 23 -> hostB attempt 1",
            "Log JOB_START 41 @0 on hostA",
            "Dispatch 41 -> hostA attempt 1",
            "Log JOB_START 42 @0 on hostB",
            "Dispatch 42 -> hostB attempt 1",
        ],
    );
    assert_eq!(running(&s, &ABC), vec![5, 3, 2]);
    // The others pend with the pool's reason.
    let k = s
        .jobs
        .values()
        .find(|j| j.state == JobState::Pend && *j.queue == *"qa")
        .map(|j| j.key())
        .expect("a pending qa job");
    assert!(pend_codes(&s, k).contains(&basalt_core::job::pend::SLOT_POOL));
}

/// "If only one queue in the pool has jobs, that queue can use all the available
/// resources."
#[test]
fn a_queue_alone_with_jobs_uses_every_slot_of_the_pool() {
    let mut s = seed_pool();
    submit_to(&mut s, "qc", 20, T0);
    s.take_effects();
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 3 @0 on hostA",
            "Dispatch 3 -> hostA attempt 1",
            "Log JOB_START 4 @0 on hostB",
            "Dispatch 4 -> hostB attempt 1",
            "Log JOB_START 5 @0 on hostA",
            "Dispatch 5 -> hostA attempt 1",
            "Log JOB_START 6 @0 on hostB",
            "Dispatch 6 -> hostB attempt 1",
            "Log JOB_START 7 @0 on hostA",
            "Dispatch 7 -> hostA attempt 1",
            "Log JOB_START 8 @0 on hostB",
            "Dispatch 8 -> hostB attempt 1",
            "Log JOB_START 9 @0 on hostA",
            "Dispatch 9 -> hostA attempt 1",
            "Log JOB_START 10 @0 on hostB",
            "Dispatch 10 -> hostB attempt 1",
        ],
    );
    assert_eq!(running(&s, &ABC), vec![0, 0, 10]);
}

/// "When a queue has no pending jobs, leftover slots are redistributed to other queues
/// in the pool with jobs pending" — and the idle queue gets its share back as jobs
/// arrive and the others' running jobs end.
#[test]
fn an_idle_queues_slots_are_redistributed_and_reclaimed_as_jobs_arrive() {
    let mut s = seed_pool();
    submit_to(&mut s, "qb", 20, T0);
    submit_to(&mut s, "qc", 20, T0);
    s.take_effects();
    s.schedule(T0);
    // qb's jobs are 1-20, qc's 21-40.
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 3 @0 on hostA",
            "Dispatch 3 -> hostA attempt 1",
            "Log JOB_START 4 @0 on hostB",
            "Dispatch 4 -> hostB attempt 1",
            "Log JOB_START 5 @0 on hostA",
            "Dispatch 5 -> hostA attempt 1",
            "Log JOB_START 6 @0 on hostB",
            "Dispatch 6 -> hostB attempt 1",
            "Log JOB_START 21 @0 on hostA",
            "Dispatch 21 -> hostA attempt 1",
            "Log JOB_START 22 @0 on hostB",
            "Dispatch 22 -> hostB attempt 1",
            "Log JOB_START 23 @0 on hostA",
            "Dispatch 23 -> hostA attempt 1",
            "Log JOB_START 24 @0 on hostB",
            "Dispatch 24 -> hostB attempt 1",
        ],
    );
    assert_eq!(running(&s, &ABC), vec![0, 6, 4]);
    submit_to(&mut s, "qa", 20, T0 + 1000);
    s.take_effects();
    s.schedule(T0 + 1000);
    // Nothing is taken back from running jobs (qa's are 41-60)...
    assert_effects(&s.take_effects(), &[]);
    assert_eq!(running(&s, &ABC), vec![0, 6, 4]);
    // ...but every slot that frees up goes to qa until the shares hold again.
    let fx = end_and_pass(&mut s, "qb", T0 + 2000, 1);
    assert_effects(
        &fx,
        &[
            "Log JOB_START_ACCEPT 1 @2 pid=100 pgid=100",
            "Log JOB_STATUS 1 @2 DONE end@2 usage",
            "Acct 1 DONE on hostA",
            "Log JOB_START 41 @2 on hostA",
            "Dispatch 41 -> hostA attempt 1",
        ],
    );
    let fx = end_and_pass(&mut s, "qb", T0 + 3000, 2);
    assert_effects(
        &fx,
        &[
            "Log JOB_START_ACCEPT 2 @3 pid=100 pgid=100",
            "Log JOB_STATUS 2 @3 DONE end@3 usage",
            "Acct 2 DONE on hostB",
            "Log JOB_START 42 @3 on hostB",
            "Dispatch 42 -> hostB attempt 1",
        ],
    );
    let fx = end_and_pass(&mut s, "qb", T0 + 4000, 3);
    assert_effects(
        &fx,
        &[
            "Log JOB_START_ACCEPT 3 @4 pid=100 pgid=100",
            "Log JOB_STATUS 3 @4 DONE end@4 usage",
            "Acct 3 DONE on hostA",
            "Log JOB_START 43 @4 on hostA",
            "Dispatch 43 -> hostA attempt 1",
        ],
    );
    let fx = end_and_pass(&mut s, "qc", T0 + 5000, 4);
    assert_effects(
        &fx,
        &[
            "Log JOB_START_ACCEPT 21 @5 pid=100 pgid=100",
            "Log JOB_STATUS 21 @5 DONE end@5 usage",
            "Acct 21 DONE on hostA",
            "Log JOB_START 44 @5 on hostA",
            "Dispatch 44 -> hostA attempt 1",
        ],
    );
    let fx = end_and_pass(&mut s, "qc", T0 + 6000, 5);
    assert_effects(
        &fx,
        &[
            "Log JOB_START_ACCEPT 22 @6 pid=100 pgid=100",
            "Log JOB_STATUS 22 @6 DONE end@6 usage",
            "Acct 22 DONE on hostB",
            "Log JOB_START 45 @6 on hostB",
            "Dispatch 45 -> hostB attempt 1",
        ],
    );
    assert_eq!(running(&s, &ABC), vec![5, 3, 2]);
}

/// "If LSF determines that a queue is eligible to run 50 jobs, but the queue has a job
/// limit of 40 jobs, no more than 40 jobs will run. The remaining 10 job slots are
/// redistributed among other queues belonging to the same pool": a limit of 4 on the
/// 50 % queue gives its fifth slot to the others.
#[test]
fn a_queue_job_limit_gives_the_slots_it_leaves_to_the_other_queues() {
    let mut c = cfg();
    for h in &mut c.hosts {
        h.mxj = Some(5);
        h.mxj_ncpus = false;
    }
    for (name, share) in [("qa", 50), ("qb", 30), ("qc", 20)] {
        let mut q = crate::tests::queue(name, 30);
        q.slot_pool = "p".into();
        q.slot_share = share;
        if name == "qa" {
            q.qjob_limit = Some(4);
        }
        c.queues.push(q);
    }
    let mut s = up_with(c);
    for q in ABC {
        submit_to(&mut s, q, 20, T0);
    }
    s.take_effects();
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 3 @0 on hostA",
            "Dispatch 3 -> hostA attempt 1",
            "Log JOB_START 4 @0 on hostB",
            "Dispatch 4 -> hostB attempt 1",
            "Log JOB_START 21 @0 on hostA",
            "Dispatch 21 -> hostA attempt 1",
            "Log JOB_START 22 @0 on hostB",
            "Dispatch 22 -> hostB attempt 1",
            "Log JOB_START 23 @0 on hostA",
            "Dispatch 23 -> hostA attempt 1",
            "Log JOB_START 24 @0 on hostB",
            "Dispatch 24 -> hostB attempt 1",
            "Log JOB_START 41 @0 on hostA",
            "Dispatch 41 -> hostA attempt 1",
            "Log JOB_START 42 @0 on hostB",
            "Dispatch 42 -> hostB attempt 1",
        ],
    );
    assert_eq!(running(&s, &ABC), vec![4, 4, 2]);
}

/// "The accumulation of slots in use by the queue is used in ordering the queues for
/// dispatch ... LSF accumulates the slots each queue has used and decays this value
/// over time": with one free slot, the queue that has used less (per share) gets it,
/// whatever the priorities; once that use has decayed, priority decides again.
#[test]
fn accumulated_decayed_use_decides_which_queue_goes_first() {
    let setup = |history_age_h: i64| {
        // qb (priority 40) and qa (30), 50/50, on 2 × 1 slots; a job of a queue
        // outside the pool holds one slot.
        let mut s = pooled(1, &[("qa", 50, 30), ("qb", 50, 40)]);
        let mut sub = cmd("sleep 100");
        sub.queue = "normal".into();
        s.submit(T0, &alice(), sub).expect("submit");
        s.schedule(T0);
        // qb ran 10 slots for 10 hours, `history_age_h` hours ago.
        let then = T0 - history_age_h * 3_600_000;
        s.fs_account_finish(
            (&"qb".into(), &"alice".into(), None),
            then,
            (0.0, 36_000.0, 10),
        );
        submit_to(&mut s, "qa", 2, T0);
        submit_to(&mut s, "qb", 2, T0);
        s.schedule(T0);
        running(&s, &["qa", "qb"])
    };
    assert_eq!(setup(0), vec![1, 0]);
    assert_eq!(setup(100), vec![0, 1]);
}

/// Queues outside any pool keep their place and share the pool's hosts ("There can be
/// queues in the cluster that do not belong to any pool yet share some hosts used by a
/// pool").
#[test]
fn a_queue_outside_the_pool_shares_its_hosts() {
    let mut s = seed_pool();
    let mut sub = cmd("sleep 100");
    sub.queue = "high".into();
    for _ in 0..3 {
        s.submit(T0, &alice(), sub.clone()).expect("submit");
    }
    for q in ABC {
        submit_to(&mut s, q, 20, T0);
    }
    s.schedule(T0);
    // high (priority 40) first; the pool's queues keep to their targets in the rest.
    assert_eq!(running(&s, &["high"]), vec![3]);
    let r = running(&s, &ABC);
    assert_eq!(r.iter().sum::<u32>(), 7);
    assert!(r[0] <= 5 && r[1] <= 3 && r[2] <= 2, "{r:?}");
}

/// bqueues -l: a pooled queue's pool, share, the pool's size, its target and use.
#[test]
fn pool_info_for_bqueues() {
    let mut s = seed_pool();
    for q in ABC {
        submit_to(&mut s, q, 20, T0);
    }
    s.schedule(T0);
    let i = s.pool_info_of("qb", T0).expect("pooled");
    assert_eq!(
        (i.pool.as_str(), i.share, i.size, i.target, i.used),
        ("p", 30, 10, 3, 3)
    );
    assert!(s.pool_info_of("normal", T0).is_none());
}
