//! Issue 50 item 5: the jobs of a queue removed from lsb.queues (found by the replay
//! that puts a reconfiguration in force) go to the queue `lost_and_found`, which LSF
//! creates for them; they wait there, and `bswitch` moves them on.

use super::tests::*;
use super::*;
use basalt_core::job::pend;

/// The configuration of the test before the change: `normal`, `high` and `doomed`.
fn with_doomed() -> SchedConfig {
    let mut c = cfg();
    c.queues.push(queue("doomed", 20));
    c
}

/// `cfg` (no `doomed`) put in force as `badmin reconfig` does: a new core replays the
/// log, then starts.
fn reconfigured(events: &[Event], now: Millis) -> Sched {
    let mut r = Sched::new(cfg(), now);
    r.replay(events.iter());
    for h in ["hostA", "hostB"] {
        r.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    r.start(now, "hostA");
    r
}

fn queue_of(s: &Sched, key: JobKey) -> String {
    s.jobs[&key].queue.to_string()
}

#[test]
fn issue50_5_a_deleted_queues_jobs_go_to_lost_and_found_and_bswitch_moves_them_on() {
    let mut s = up_with(with_doomed());
    let mut all = Vec::new();
    let mut in_doomed = cmd("sleep 100");
    in_doomed.queue = "doomed".into();
    s.submit(T0, &alice(), in_doomed.clone())
        .expect("a job that runs");
    s.schedule(T0);
    all.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    // Both hosts closed: the second job pends.
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    s.submit(T0, &alice(), in_doomed).expect("a job that pends");
    s.submit(T0, &bob(), cmd("elsewhere"))
        .expect("a job of normal");
    s.schedule(T0);
    all.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);

    // `doomed` is removed and the configuration reloaded.
    let t1 = T0 + 60_000;
    let mut r = reconfigured(&all, t1);
    all.extend(logged(&r.take_effects()));
    assert_eq!(queue_of(&r, (1, 0)), LOST_AND_FOUND);
    assert_eq!(queue_of(&r, (2, 0)), LOST_AND_FOUND);
    assert_eq!(queue_of(&r, (3, 0)), "normal");
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Run, "it keeps running");
    // The submission keeps the queue it was submitted to (bjobs -l, bhist).
    assert_eq!(r.jobs[&(2, 0)].sub.queue, "doomed");
    // bqueues shows it: closed and inactive, holding the two jobs.
    let v = r.queues_view(&[]);
    let lf = v
        .queues
        .iter()
        .find(|q| q.queue.name == LOST_AND_FOUND)
        .expect("bqueues lists lost_and_found");
    assert!(!lf.queue.open && !lf.queue.active, "{:?}", lf.queue);
    assert_eq!(lf.counts, (2, 1, 1, 0, 0));
    assert!(!lf.queue.description.is_empty());

    // It dispatches nothing, whatever the hosts: the job waits there for a reason
    // bjobs explains (not "New job is waiting for scheduling").
    r.host_ctl(t1, &admin(), 1, "hostA", "").expect("open");
    r.host_ctl(t1, &admin(), 1, "hostB", "").expect("open");
    hellos(&mut r, t1);
    r.schedule(t1);
    let eff = r.take_effects();
    let keys: Vec<JobKey> = dispatches(&eff).into_iter().map(|d| d.0).collect();
    assert_eq!(keys, vec![(3, 0)], "only normal's job");
    all.extend(logged(&eff));
    assert_eq!(pend_codes(&r, (2, 0)), vec![pend::QUEUE_INACT]);
    // Even activated by the administrator (its job limits are 0).
    r.queue_ctl(t1, &admin(), 3, LOST_AND_FOUND, "")
        .expect("badmin qact");
    r.schedule(t1 + 1000);
    let eff = r.take_effects();
    assert!(dispatches(&eff).is_empty(), "{:?}", dispatches(&eff));
    all.extend(logged(&eff));
    // No job goes in.
    assert_eq!(
        r.switch(t1, &bob(), (3, 0), LOST_AND_FOUND),
        Err(SchedError::QueueClosed)
    );

    // bswitch moves the pending job on: it runs.
    r.switch(t1 + 2000, &alice(), (2, 0), "normal")
        .expect("bswitch");
    r.schedule(t1 + 2000);
    let eff = r.take_effects();
    let keys: Vec<JobKey> = dispatches(&eff).into_iter().map(|d| d.0).collect();
    assert_eq!(keys, vec![(2, 0)]);
    all.extend(logged(&eff));
    assert_eq!(queue_of(&r, (2, 0)), "normal");
    // The running job ends there: lost_and_found holds no job, and bqueues no longer
    // shows it.
    finish_at(&mut r, (1, 0), 0, 1, t1 + 3000);
    all.extend(logged(&r.take_effects()));
    let v = r.queues_view(&[]);
    assert!(
        v.queues.iter().all(|q| q.queue.name != LOST_AND_FOUND),
        "{:?}",
        v.queues.iter().map(|q| &q.queue.name).collect::<Vec<_>>()
    );
    assert_eq!(
        r.queues_view(&[LOST_AND_FOUND.into()]).not_found,
        vec![LOST_AND_FOUND.to_string()]
    );

    // A later reconfiguration gives the same: the finished job in lost_and_found, the
    // switched one in normal, nothing shown.
    let mut r2 = reconfigured(&all, t1 + 10_000);
    r2.take_effects();
    assert_eq!(queue_of(&r2, (1, 0)), LOST_AND_FOUND);
    assert_eq!(r2.jobs[&(1, 0)].state, JobState::Done);
    assert_eq!(queue_of(&r2, (2, 0)), "normal");
    assert!(
        r2.queues_view(&[])
            .queues
            .iter()
            .all(|q| q.queue.name != LOST_AND_FOUND)
    );
    // A log switch carries the same.
    let carried = r2.carry_over(t1 + 20_000);
    let r3 = reconfigured(&carried.events().cloned().collect::<Vec<_>>(), t1 + 20_000);
    for k in [(1, 0), (2, 0), (3, 0)] {
        assert_eq!(queue_of(&r3, k), queue_of(&r2, k), "{k:?}");
    }
    // MBD_START counts the configured queues only.
    let starts: Vec<u32> = logged(&reconfigured(&all, t1 + 30_000).take_effects())
        .iter()
        .filter_map(|e| match e {
            Event::MbdStart { num_queues, .. } => Some(*num_queues),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![2]);
}
