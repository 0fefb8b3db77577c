//! A scheduling pass costs what changed, not what exists (issue 19): after a job's end
//! or a submission, a pass stops once no host has a free slot, so a drain of 10,000
//! pending jobs costs per job what one of 1,000 does; the jobs it did not visit keep
//! the reasons they had, refreshed by a full pass within [`crate::FULL_PASS_EVERY`] or
//! at once after any other change.

use super::*;
use crate::tests::expect::assert_effects;
use crate::tests::{T0, alice, cmd, finish, finish_at, up};

/// `up()`'s two hosts have 2 slots each: 4 jobs run, the rest of `n` pend.
fn busy(n: usize) -> Sched {
    let mut s = up();
    for i in 0..n {
        s.submit(T0, &alice(), cmd(&format!("job {i}")))
            .expect("submit");
    }
    s.schedule(T0);
    s.take_effects();
    s
}

fn reasons(s: &Sched, key: JobKey) -> crate::schedule::PendReasons {
    s.jobs[&key].pend_reasons.clone()
}

fn running(s: &Sched) -> Vec<JobKey> {
    s.jobs
        .values()
        .filter(|j| j.state == JobState::Run)
        .map(|j| j.key())
        .collect()
}

#[test]
fn after_a_job_end_the_pass_starts_the_next_job_in_order_and_visits_no_further() {
    let mut s = busy(1000);
    assert_eq!(running(&s), vec![(1, 0), (2, 0), (3, 0), (4, 0)]);
    let far = (900, 0);
    let before = reasons(&s, far);
    assert!(before.contains_key(&basalt_core::job::pend::HOST_JOB_LIMIT));
    // First come, first served: the oldest pending job takes the freed slot.
    let end_and_pass = |s: &mut Sched, key: JobKey| {
        finish(s, key, 0, 1);
        s.schedule(T0 + 5000);
        s.take_effects()
    };
    assert_effects(
        &end_and_pass(&mut s, (1, 0)),
        &[
            "Log JOB_STATUS 1 @5 DONE end@5 usage",
            "Acct 1 DONE on hostA",
            "Log JOB_START 5 @5 on hostA",
            "Dispatch 5 -> hostA attempt 1",
        ],
    );
    assert_effects(
        &end_and_pass(&mut s, (2, 0)),
        &[
            "Log JOB_STATUS 2 @5 DONE end@5 usage",
            "Acct 2 DONE on hostB",
            "Log JOB_START 6 @5 on hostB",
            "Dispatch 6 -> hostB attempt 1",
        ],
    );
    assert_effects(
        &end_and_pass(&mut s, (5, 0)),
        &[
            "Log JOB_STATUS 5 @5 DONE end@5 usage",
            "Acct 5 DONE on hostA",
            "Log JOB_START 7 @5 on hostA",
            "Dispatch 7 -> hostA attempt 1",
        ],
    );
    // The pass stopped once every slot was taken again: the far job was not visited.
    assert!(Arc::ptr_eq(&before, &reasons(&s, far)));
}

#[test]
fn a_job_submitted_while_every_slot_is_taken_gets_its_reasons_from_the_next_pass() {
    let mut s = busy(10);
    let (id, _, _) = s.submit(T0, &alice(), cmd("late")).expect("submit");
    s.schedule(T0 + 1);
    s.take_effects();
    let r = reasons(&s, (id, 0));
    let hosts = r
        .get(&basalt_core::job::pend::HOST_JOB_LIMIT)
        .expect("every host full");
    assert_eq!(hosts.len(), 2, "{r:?}");
    assert_eq!(s.jobs[&(id, 0)].state, JobState::Pend);
}

#[test]
fn reasons_a_pass_left_as_they_were_are_refreshed_within_a_second() {
    let mut s = busy(100);
    let far = (90, 0);
    let before = reasons(&s, far);
    finish(&mut s, (1, 0), 0, 1);
    s.schedule(T0 + 5000);
    s.take_effects();
    assert!(Arc::ptr_eq(&before, &reasons(&s, far)));
    // Nothing else happens; the tick a second later makes a full pass due.
    s.tick(T0 + 5000 + FULL_PASS_EVERY);
    assert!(s.needs_pass());
    s.schedule(T0 + 5000 + FULL_PASS_EVERY);
    s.take_effects();
    assert!(!Arc::ptr_eq(&before, &reasons(&s, far)), "visited again");
    // And after a full pass, no more until something happens.
    s.tick(T0 + 5000 + 3 * FULL_PASS_EVERY);
    assert!(!s.needs_pass());
}

#[test]
fn a_change_other_than_an_end_a_submission_or_a_start_makes_the_next_pass_visit_every_job() {
    let mut s = busy(100);
    let far = (90, 0);
    let before = reasons(&s, far);
    // hostB's sbatchd falls silent: its slots are no use, every reason changes.
    s.sbd_hello(T0 + 1000, "hostA", &[]);
    let silent = T0 + 1000 + 4 * 5 * 1000;
    s.sbd_hello(silent - 1, "hostA", &[]);
    s.tick(silent);
    assert!(s.needs_pass());
    s.schedule(silent);
    s.take_effects();
    let after = reasons(&s, far);
    assert!(!Arc::ptr_eq(&before, &after));
    assert!(
        after
            .values()
            .any(|hosts| hosts.iter().any(|h| h == "hostB")),
        "{after:?}"
    );
}

#[test]
fn with_a_dependency_pending_every_pass_visits_every_job() {
    let mut s = busy(20);
    let mut dep = cmd("after");
    dep.depend_cond = "done(1)".into();
    let (id, _, _) = s.submit(T0, &alice(), dep).expect("submit");
    s.schedule(T0 + 1);
    s.take_effects();
    let far = (15, 0);
    let before = reasons(&s, far);
    // Job 1 ends: job 5 takes its slot, and the dependent job's reason changes from
    // "dependency" to a host's; the pass visits everything.
    finish(&mut s, (1, 0), 0, 1);
    s.schedule(T0 + 5000);
    s.take_effects();
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Run);
    assert!(!Arc::ptr_eq(&before, &reasons(&s, far)));
    let r = reasons(&s, (id, 0));
    assert!(!r.contains_key(&basalt_core::job::pend::DEPEND), "{r:?}");
}

/// A host that takes no job at all (closed, unreachable, locked, outside its dispatch
/// window) has no free slot for the early stop: a site always has some, and a pass that
/// counted their idle slots as free visited every pending job after each end (at 1,000
/// hollow hosts with the two master candidates closed: 25,000 jobs a pass, most of
/// mbatchd's owner thread).
#[test]
fn a_closed_host_with_idle_slots_does_not_keep_the_pass_going() {
    let mut s = busy(1000);
    let on = |s: &Sched, host: &str| -> Vec<JobKey> {
        running(s)
            .into_iter()
            .filter(|k| s.jobs[k].hosts.first().is_some_and(|h| h == host))
            .collect()
    };
    s.host_ctl(T0, &crate::tests::admin(), 2, "hostB", "")
        .expect("hclose");
    // One of hostB's jobs ends: hostB has an idle slot, but it is closed.
    let b = on(&s, "hostB")[0];
    finish_at(&mut s, b, 0, 1, T0 + 4000);
    s.schedule(T0 + 4000);
    s.take_effects();
    let far = (900, 0);
    let before = reasons(&s, far);
    assert!(
        before.contains_key(&basalt_core::job::pend::HOST_CLOSED),
        "{before:?}"
    );
    // One of hostA's ends: the next job takes its slot and the pass stops there.
    let a = on(&s, "hostA")[0];
    finish_at(&mut s, a, 0, 2, T0 + 5000);
    s.schedule(T0 + 5000);
    s.take_effects();
    assert_eq!(on(&s, "hostA").len(), 2);
    assert!(Arc::ptr_eq(&before, &reasons(&s, far)), "far job visited");
}

fn dispatched(effects: &[Effect]) -> Vec<JobKey> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { key, .. } => Some(*key),
            _ => None,
        })
        .collect()
}

/// lsf.conf `LSB_MAX_JOB_DISPATCH_PER_SESSION`: no more start orders under way at once
/// than it says (a pass that placed 40,000 jobs on 10,000 hollow hosts at once sent
/// 40,000 orders, most of which timed out); the others wait with LSF's
/// PEND_JOB_DELAY_SCHED, and an answer makes the next pass place more.
#[test]
fn start_orders_under_way_stay_within_lsb_max_job_dispatch_per_session() {
    let mut c = crate::tests::cfg();
    c.max_dispatch_in_flight = 2;
    let mut s = crate::tests::up_with(c);
    for i in 0..6 {
        s.submit(T0, &alice(), cmd(&format!("job {i}")))
            .expect("submit");
    }
    s.schedule(T0);
    // Four slots are free; two orders go out.
    assert_eq!(dispatched(&s.take_effects()), vec![(1, 0), (2, 0)]);
    let r = reasons(&s, (3, 0));
    assert_eq!(
        r.keys().copied().collect::<Vec<_>>(),
        vec![basalt_core::job::pend::DELAY_SCHED],
        "{r:?}"
    );
    assert!(!s.needs_pass());
    // Job 1's order is answered: one more may go.
    s.dispatch_accepted(T0 + 10, (1, 0), 1, 100, 100);
    assert!(s.needs_pass());
    s.schedule(T0 + 10);
    assert_eq!(dispatched(&s.take_effects()), vec![(3, 0)]);
    // Job 2's order fails (host unreachable): it pends again, and the next pass sends two.
    let host = s.jobs[&(2, 0)].hosts[0].clone();
    s.dispatch_failed(T0 + 20, (2, 0), 1, &host);
    assert!(s.needs_pass());
}
