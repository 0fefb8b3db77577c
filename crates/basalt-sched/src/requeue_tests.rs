//! Pre-execution failures and requeues by exit value (issue 20, item 7) on a manual
//! clock: a failed pre-execution command puts the job back to PEND (reason 6) at the head
//! of its queue, tried again after MBD_SLEEP_TIME; exit value 99 ends it; past
//! LOCAL_MAX_PREEXEC_RETRY it is suspended (or exits); REQUEUE_EXIT_VALUES requeues (with
//! EXCLUDE(...) never to the same host), up to MAX_JOB_REQUEUE; a POST_EXEC's status is
//! logged as JOB_STAT_PDONE or JOB_STAT_PERR. Replaying the log gives the same counts.

use super::tests::*;
use super::*;
use basalt_core::job::{exit_reason, pend, status};

use crate::tests::report_next as report;

fn pre_failed(s: &mut Sched, now: Millis, key: JobKey, code: i32) {
    report(
        s,
        now,
        key,
        ReportKind::PreExecFailed {
            exit_status: code << 8,
        },
    );
}

fn finished(s: &mut Sched, now: Millis, key: JobKey, code: i32, post: Option<i32>) {
    report(
        s,
        now,
        key,
        ReportKind::Finished {
            exit_status: code << 8,
            usage: Usage::default(),
            term_reason: String::new(),
            post_exec: post,
        },
    );
}

/// A core whose queue `normal` is set by `f`, one job submitted and started.
fn with_queue(f: impl Fn(&mut Queue)) -> (Sched, Vec<Event>) {
    let mut c = cfg();
    for q in &mut c.queues {
        f(q);
    }
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.submit(T0, &alice(), cmd("job")).expect("submit");
    s.schedule(T0);
    let log = logged(&s.take_effects());
    (s, log)
}

#[test]
fn a_failed_pre_exec_puts_the_job_back_to_pend_with_reason_6_and_retries_after_mbd_sleep_time() {
    let (mut s, _) = with_queue(|_| {});
    let key = (1, 0);
    assert!(s.jobs[&key].state.is_started());
    pre_failed(&mut s, T0 + 100, key, 1);
    let ev = logged(&s.take_effects());
    assert!(
        ev.iter().any(|e| matches!(
            e,
            Event::JobStatus { status: st, reasons, .. } if *st == status::PEND && *reasons == pend::PRE_EXEC
        )),
        "{ev:?}"
    );
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Pend);
    assert!(j.hosts.is_empty());
    // Not before MBD_SLEEP_TIME (10 s in cfg()): a pass shows reason 6.
    s.schedule(T0 + 1000);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert_eq!(pend_codes(&s, key), vec![pend::PRE_EXEC]);
    // Once it is due a tick makes a pass due, and the job is dispatched again.
    s.tick(T0 + 100 + 10_000);
    assert!(s.needs_pass());
    s.schedule(T0 + 100 + 10_000);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    assert_eq!(s.jobs[&key].attempt, 2);
}

#[test]
fn a_job_whose_pre_exec_fails_goes_to_the_head_of_its_queue() {
    let mut s = up();
    for i in 0..6 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    s.schedule(T0);
    s.take_effects();
    // Jobs 1..4 run on the 4 slots; 5 and 6 pend. Job 4's pre-exec fails.
    pre_failed(&mut s, T0 + 100, (4, 0), 1);
    s.take_effects();
    let first = s
        .jobs
        .values()
        .filter(|j| j.state == JobState::Pend)
        .min_by_key(|j| j.order)
        .map(|j| j.key());
    assert_eq!(first, Some((4, 0)));
}

#[test]
fn pre_exec_exit_99_ends_the_job() {
    let (mut s, _) = with_queue(|_| {});
    pre_failed(&mut s, T0 + 100, (1, 0), 99);
    let j = &s.jobs[&(1, 0)];
    assert_eq!(j.state, JobState::Exit);
    assert_eq!(j.reasons & exit_reason::PRE_EXEC, exit_reason::PRE_EXEC);
}

#[test]
fn local_max_preexec_retry_suspends_the_job_or_with_action_exit_ends_it() {
    for (exit, want) in [(false, JobState::Psusp), (true, JobState::Exit)] {
        let (mut s, _) = with_queue(|q| {
            q.preexec_retry_limit = Some(2);
            q.preexec_retry_exit = exit;
        });
        let key = (1, 0);
        pre_failed(&mut s, T0 + 100, key, 1);
        assert_eq!(s.jobs[&key].state, JobState::Pend);
        s.tick(T0 + 12_000);
        s.schedule(T0 + 12_000);
        assert!(
            s.jobs[&key].state.is_started(),
            "{:?} {:?}",
            s.jobs[&key].state,
            pend_codes(&s, key)
        );
        pre_failed(&mut s, T0 + 12_100, key, 1);
        assert_eq!(s.jobs[&key].state, want, "action exit {exit}");
    }
}

#[test]
fn requeue_exit_values_requeue_the_job_and_exclude_keeps_it_off_that_host() {
    let (mut s, mut log) = with_queue(|q| {
        q.requeue = basalt_config::batch::RequeueValues::parse("3 EXCLUDE(4)").expect("parse");
        q.max_job_requeue = Some(2);
    });
    let key = (1, 0);
    // Exit 3: requeued, to run anywhere (after the requeue delay, 10 s here).
    finished(&mut s, T0 + 100, key, 3, None);
    assert_eq!(s.jobs[&key].state, JobState::Pend);
    assert_eq!(s.jobs[&key].reasons, pend::REQUEUED);
    s.schedule(T0 + 10_200);
    log.extend(logged(&s.take_effects()));
    let first = s.jobs[&key].hosts[0].clone();
    // Exit 4 (EXCLUDE): requeued, never again on that host.
    finished(&mut s, T0 + 10_300, key, 4, None);
    assert_eq!(s.jobs[&key].state, JobState::Pend);
    s.schedule(T0 + 20_400);
    log.extend(logged(&s.take_effects()));
    let second = s.jobs[&key].hosts[0].clone();
    assert_ne!(first, second);
    // MAX_JOB_REQUEUE = 2 reached: exit 3 now ends the job.
    finished(&mut s, T0 + 20_500, key, 3, None);
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&key].state, JobState::Exit);
    // An exit value not listed ends a job at once (a fresh one).
    let r = s.jobs[&key].requeues.clone().expect("counted");
    assert_eq!((r.by_exit_value, r.excluded.clone()), (2, vec![first]));
    // Replay counts the same.
    let mut c = cfg();
    c.queues[0].requeue =
        basalt_config::batch::RequeueValues::parse("3 EXCLUDE(4)").expect("parse");
    let mut replayed = Sched::new(c, T0 + 1);
    for ev in &log {
        replayed.on_event(ev);
    }
    let rr = replayed.jobs[&key].requeues.clone().expect("replayed");
    assert_eq!((rr.by_exit_value, rr.excluded), (2, r.excluded));
}

#[test]
fn an_exit_value_not_listed_or_a_kill_ends_the_job() {
    let (mut s, _) = with_queue(|q| {
        q.requeue = basalt_config::batch::RequeueValues::parse("3").expect("parse");
    });
    finished(&mut s, T0 + 100, (1, 0), 2, None);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Exit);
}

#[test]
fn post_exec_status_is_logged_as_pdone_or_perr_after_the_end() {
    for (post, bit) in [(0, status::PDONE), (1 << 8, status::PERR)] {
        let (mut s, _) = with_queue(|_| {});
        finished(&mut s, T0 + 100, (1, 0), 0, Some(post));
        let ev = logged(&s.take_effects());
        let sts: Vec<u32> = ev
            .iter()
            .filter_map(|e| match e {
                Event::JobStatus { status, .. } => Some(*status),
                _ => None,
            })
            .collect();
        assert_eq!(sts, vec![status::DONE, status::DONE | bit]);
        let j = &s.jobs[&(1, 0)];
        assert_eq!(j.state, JobState::Done);
        assert_eq!(j.requeues.as_ref().map(|r| r.post_bits), Some(bit));
    }
}

/// JOB_INCLUDE_POSTPROC=N: the end comes first (DONE or EXIT, no post-execution bit),
/// the post-execution status later in its own report, logged once; a job requeued
/// meanwhile logs none.
#[test]
fn with_job_include_postproc_n_the_post_exec_status_follows_the_end_in_its_own_report() {
    for (code, end, post, bit) in [
        (0, status::DONE, 0, status::PDONE),
        (2, status::EXIT, 1 << 8, status::PERR),
    ] {
        let (mut s, _) = with_queue(|_| {});
        let key = (1, 0);
        finished(&mut s, T0 + 100, key, code, None);
        let sts = |ev: &[Event]| -> Vec<u32> {
            ev.iter()
                .filter_map(|e| match e {
                    Event::JobStatus { status, .. } => Some(*status),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(sts(&logged(&s.take_effects())), vec![end]);
        assert_eq!(s.jobs[&key].requeues.as_ref().map_or(0, |r| r.post_bits), 0);
        let ack = report(&mut s, T0 + 200, key, ReportKind::PostExec { status: post });
        assert_eq!(ack, Ack::Ok);
        let ev = logged(&s.take_effects());
        assert_eq!(sts(&ev), vec![end | bit]);
        match &ev[..] {
            [
                Event::JobStatus {
                    exit_status,
                    end_time,
                    ..
                },
            ] => {
                assert_eq!(*exit_status, code << 8, "the job's own exit status");
                assert_eq!(*end_time, secs(T0 + 100), "the job's end time");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            s.jobs[&key].requeues.as_ref().map(|r| r.post_bits),
            Some(bit)
        );
        // A repeat changes nothing.
        report(&mut s, T0 + 300, key, ReportKind::PostExec { status: post });
        assert!(logged(&s.take_effects()).is_empty());
    }
    // Requeued by its exit value: no post-execution status for it.
    let (mut s, _) = with_queue(|q| {
        q.requeue = basalt_config::batch::RequeueValues::parse("3").expect("parse");
    });
    finished(&mut s, T0 + 100, (1, 0), 3, None);
    assert!(s.jobs[&(1, 0)].state.is_pending());
    s.take_effects();
    report(&mut s, T0 + 200, (1, 0), ReportKind::PostExec { status: 0 });
    assert!(logged(&s.take_effects()).is_empty());
}

fn all_states() -> RequeueStates {
    RequeueStates {
        done: true,
        exit: true,
        running: true,
    }
}

#[test]
fn brequeue_kills_a_running_job_and_puts_it_back_to_pend_at_the_head_of_its_queue() {
    let (mut s, mut log) = with_queue(|_| {});
    let key = (1, 0);
    s.requeue(T0 + 50, &alice(), key, all_states(), false)
        .expect("requeue");
    let eff = s.take_effects();
    // The kill goes to sbatchd (once it has answered the dispatch).
    assert!(
        eff.iter()
            .any(|e| matches!(e, Effect::Signal { key: k, .. } if *k == key))
            || matches!(
                s.jobs[&key].pending_action.as_deref(),
                Some(SbdAction::Kill { .. })
            ),
        "{eff:?}"
    );
    log.extend(logged(&eff));
    // sbatchd reports the kill: the job is pending again, not ended.
    finished(&mut s, T0 + 100, key, 130, None);
    log.extend(logged(&s.take_effects()));
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.reasons), (JobState::Pend, pend::REQUEUED));
    s.schedule(T0 + 200);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    assert_eq!(s.jobs[&key].attempt, 2);
    // Replay gives the same.
    let mut r = Sched::new(cfg(), T0 + 1);
    for ev in &log {
        r.on_event(ev);
    }
    assert_eq!(r.jobs[&key].state, JobState::Pend);
}

#[test]
fn brequeue_h_holds_the_job_and_d_e_requeue_finished_jobs() {
    let (mut s, _) = with_queue(|_| {});
    let key = (1, 0);
    s.requeue(T0 + 50, &alice(), key, all_states(), true)
        .expect("requeue");
    s.take_effects();
    finished(&mut s, T0 + 100, key, 130, None);
    assert_eq!(s.jobs[&key].state, JobState::Psusp);

    let (mut s, _) = with_queue(|_| {});
    finished(&mut s, T0 + 100, key, 0, None);
    assert_eq!(s.jobs[&key].state, JobState::Done);
    let only_exit = RequeueStates {
        exit: true,
        ..Default::default()
    };
    assert_eq!(
        s.requeue(T0 + 150, &alice(), key, only_exit, false),
        Err(SchedError::Finished)
    );
    let only_done = RequeueStates {
        done: true,
        ..Default::default()
    };
    s.requeue(T0 + 150, &alice(), key, only_done, false)
        .expect("requeue done");
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.exit_status, j.end_time), (JobState::Pend, 0, 0));
    // Another user may not; a pending job has not started.
    assert_eq!(
        s.requeue(T0 + 160, &bob(), key, all_states(), false),
        Err(SchedError::Permission)
    );
    assert_eq!(
        s.requeue(T0 + 160, &alice(), key, all_states(), false),
        Err(SchedError::NotStarted)
    );
}

#[test]
fn success_exit_values_end_the_job_done() {
    let (mut s, _) = with_queue(|q| q.success_exit_values = vec![3]);
    finished(&mut s, T0 + 100, (1, 0), 3, None);
    let j = &s.jobs[&(1, 0)];
    assert_eq!((j.state, j.exit_status), (JobState::Done, 3 << 8));
    let (mut s, _) = with_queue(|q| q.success_exit_values = vec![3]);
    finished(&mut s, T0 + 100, (1, 0), 4, None);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Exit);
}

/// Seed 001, "Job migration": "If the job is checkpointable, the bmig command first
/// checkpoints it. Then LSF kills the running or suspended job, and restarts or reruns
/// the job on another host if one is available." A rerunnable job: killed, back to PEND
/// at the head of its queue (requeued "with a higher priority than any submitted job"),
/// then run again on the host bmig -m named, with the same job id.
#[test]
fn bmig_kills_a_rerunnable_job_and_reruns_it_on_the_asked_host_with_its_job_id() {
    let (mut s, mut log) = with_queue(|q| q.rerunnable = true);
    let key = (1, 0);
    let first = s.jobs[&key].hosts[0].clone();
    let other = if first == "hostA" { "hostB" } else { "hostA" };
    // Another job of the queue waits behind it: the migrated job goes first.
    s.submit(T0 + 10, &bob(), cmd("later")).expect("submit");
    s.submit(T0 + 10, &bob(), cmd("later")).expect("submit");
    s.submit(T0 + 10, &bob(), cmd("later")).expect("submit");
    s.schedule(T0 + 10);
    log.extend(logged(&s.take_effects()));
    s.migrate(T0 + 50, &alice(), key, &[other.to_owned()])
        .expect("bmig");
    let eff = s.take_effects();
    assert!(
        logged(&eff).iter().any(|e| matches!(e,
            Event::JobMigrate { key: k, hosts, user, .. }
                if *k == key && hosts == &[other.to_owned()] && user == "alice")),
        "{eff:?}"
    );
    assert!(
        eff.iter().any(|e| matches!(e,
            Effect::Signal { key: k, action: SbdAction::Kill { .. }, .. } if *k == key))
            || matches!(
                s.jobs[&key].pending_action.as_deref(),
                Some(SbdAction::Kill { .. })
            ),
        "{eff:?}"
    );
    log.extend(logged(&eff));
    // A second bmig before the kill is done.
    assert_eq!(
        s.migrate(T0 + 60, &alice(), key, &[]),
        Err(SchedError::Migrating)
    );
    // sbatchd reports the kill: pending again, with the new candidate host.
    finished(&mut s, T0 + 100, key, 130, None);
    log.extend(logged(&s.take_effects()));
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.reasons), (JobState::Pend, pend::MIG));
    assert_eq!(j.sub.asked_hosts, vec![other.to_owned()]);
    // A slot frees on the asked host: the migrated job, not a later one, takes it.
    let others: Vec<JobKey> = s
        .jobs
        .values()
        .filter(|j| j.state.is_started() && j.hosts[0] == other)
        .map(|j| j.key())
        .collect();
    if let Some(k) = others.first() {
        crate::tests::finish_at(&mut s, *k, 0, 9, T0 + 150);
    }
    s.schedule(T0 + 200);
    let d = dispatches(&s.take_effects());
    assert!(d.contains(&(key, other.to_owned())), "{d:?}");
    assert_eq!(s.jobs[&key].attempt, 2);
    // Replay: pending with the new hosts (the log ends before the second run).
    let mut r = Sched::new(cfg(), T0 + 1);
    for ev in &log {
        r.on_event(ev);
    }
    assert_eq!(r.jobs[&key].state, JobState::Pend);
    assert_eq!(r.jobs[&key].sub.asked_hosts, vec![other.to_owned()]);
}

/// "Check-pointable jobs and re-runable jobs can be migrated": any other job is refused
/// (LSF's `Job is not checkpointable`), as are a pending job, a bad host and someone
/// else's job.
#[test]
fn bmig_refuses_what_cannot_be_migrated() {
    let (mut s, _) = with_queue(|_| {});
    let key = (1, 0);
    assert_eq!(
        s.migrate(T0 + 50, &alice(), key, &[]),
        Err(SchedError::NotCheckpointable)
    );
    let (mut s, _) = with_queue(|q| q.rerunnable = true);
    assert_eq!(
        s.migrate(T0 + 50, &alice(), key, &["nosuchhost".to_owned()]),
        Err(SchedError::BadHost)
    );
    assert_eq!(
        s.migrate(T0 + 50, &bob(), key, &[]),
        Err(SchedError::Permission)
    );
    // Every slot taken (two hosts of two): the last one waits.
    let mut last = 0;
    for _ in 0..4 {
        last = s.submit(T0 + 60, &alice(), cmd("more")).expect("submit").0;
    }
    s.schedule(T0 + 60);
    assert!(s.jobs[&(last, 0)].state.is_pending());
    assert_eq!(
        s.migrate(T0 + 70, &alice(), (last, 0), &[]),
        Err(SchedError::NotStarted)
    );
    assert_eq!(
        s.migrate(T0 + 70, &alice(), (99, 0), &[]),
        Err(SchedError::NoJob)
    );
}

fn suspended(s: &mut Sched, now: Millis, key: JobKey, state: u32, reasons: u32) {
    report(
        s,
        now,
        key,
        ReportKind::State {
            state,
            reasons,
            subreasons: 0,
        },
    );
}

fn migrations(ev: &[Event]) -> Vec<(JobKey, String)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::JobMigrate { key, user, .. } => Some((*key, user.clone())),
            _ => None,
        })
        .collect()
}

/// Seed 001, "Automatic job migration": "Each host and queue can be configured so that
/// suspended checkpointable or rerunable jobs are automatically migrated to another
/// host." Queue MIG = 1: a rerunnable job suspended by the system (SSUSP, here by load)
/// is migrated once it has been so for a minute — by the primary administrator — and
/// not before; a job its user stopped (USUSP) is not. The suspension's time comes from
/// the log, so a replayed mbatchd migrates at the same moment.
#[test]
fn a_rerunnable_job_suspended_by_the_system_longer_than_mig_is_migrated() {
    let (mut s, mut log) = with_queue(|q| {
        q.rerunnable = true;
        q.mig_minutes = Some(1);
    });
    let key = (1, 0);
    let t = T0 + 1000;
    suspended(
        &mut s,
        t,
        key,
        status::SSUSP,
        basalt_core::job::susp::LOAD_REASON,
    );
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&key].state, JobState::Ssusp);
    // A replayed mbatchd knows since when.
    let mut r = Sched::new(s.config().clone(), t + 10);
    for ev in &log {
        r.on_event(ev);
    }
    s.tick(t + 59_000);
    assert!(migrations(&logged(&s.take_effects())).is_empty());
    r.tick(t + 59_000);
    assert!(migrations(&logged(&r.take_effects())).is_empty());
    s.tick(t + 61_000);
    let eff = s.take_effects();
    assert_eq!(migrations(&logged(&eff)), vec![(key, "admin".to_owned())]);
    // The kill goes to sbatchd (once it has answered the dispatch).
    assert!(
        eff.iter().any(|e| matches!(e,
            Effect::Signal { key: k, action: SbdAction::Kill { .. }, .. } if *k == key))
            || matches!(
                s.jobs[&key].pending_action.as_deref(),
                Some(SbdAction::Kill { .. })
            ),
        "{eff:?}"
    );
    r.tick(t + 61_000);
    assert_eq!(
        migrations(&logged(&r.take_effects())),
        vec![(key, "admin".to_owned())]
    );
    // Once: the next tick does not migrate it again.
    s.tick(t + 62_000);
    assert!(migrations(&logged(&s.take_effects())).is_empty());

    // A job its user stopped stays where it is.
    let (mut s, _) = with_queue(|q| {
        q.rerunnable = true;
        q.mig_minutes = Some(0);
    });
    suspended(
        &mut s,
        t,
        key,
        status::USUSP,
        basalt_core::job::susp::USER_STOP,
    );
    s.take_effects();
    s.tick(t + 600_000);
    assert!(migrations(&logged(&s.take_effects())).is_empty());
    // Nor is a job that is not rerunnable.
    let (mut s, _) = with_queue(|q| q.mig_minutes = Some(0));
    suspended(
        &mut s,
        t,
        key,
        status::SSUSP,
        basalt_core::job::susp::LOAD_REASON,
    );
    s.take_effects();
    s.tick(t + 600_000);
    assert!(migrations(&logged(&s.take_effects())).is_empty());
}

/// lsb.hosts MIG: "When a host migration threshold is specified, and is lower than the
/// value for the job, the queue, or the application, the host value is used" (LSF 10.1);
/// a host threshold alone applies too.
#[test]
fn a_host_mig_lower_than_the_queue_s_is_the_one_used() {
    for (queue_mig, host_mig) in [(Some(10), Some(1)), (None, Some(1))] {
        let (mut s, _) = with_queue(|q| {
            q.rerunnable = true;
            q.mig_minutes = queue_mig;
        });
        let key = (1, 0);
        let host = s.jobs[&key].hosts[0].clone();
        for h in s.hosts.iter_mut().filter(|h| h.name == host) {
            h.mig_minutes = host_mig;
        }
        let t = T0 + 1000;
        suspended(
            &mut s,
            t,
            key,
            status::SSUSP,
            basalt_core::job::susp::LOAD_REASON,
        );
        s.take_effects();
        s.tick(t + 59_000);
        assert!(migrations(&logged(&s.take_effects())).is_empty());
        s.tick(t + 61_000);
        assert_eq!(
            migrations(&logged(&s.take_effects())),
            vec![(key, "admin".to_owned())],
            "queue {queue_mig:?}, host {host_mig:?}"
        );
    }
}

/// Issue 50, item 2 ("Requeue by exit value re-dispatches in a tight loop"): a job that
/// always exits with a REQUEUE_EXIT_VALUES value, run by an sbatchd that answers and
/// reports at once, while mbatchd runs a pass every 40 ms for 16 s. It waits the requeue
/// delay (MBD_SLEEP_TIME when BASALT_REQUEUE_DELAY is not set: 10 s here) before each
/// next dispatch, with pending reason 23 meanwhile; each requeue cycle writes a fixed
/// number of lsb.events records (JOB_START, JOB_START_ACCEPT, JOB_EXECUTE and the
/// requeue's JOB_STATUS).
#[test]
fn requeue_by_exit_value_waits_before_its_next_dispatch_and_writes_four_records_a_cycle() {
    let (mut s, _) = with_queue(|q| {
        q.requeue = basalt_config::batch::RequeueValues::parse("3").expect("parse");
    });
    let key = (1, 0);
    let mut now = T0;
    let mut dispatch_times = vec![now];
    let mut records = 0;
    let mut per_cycle = Vec::new();
    while now < T0 + 16_000 {
        let (started, attempt) = (s.jobs[&key].state.is_started(), s.jobs[&key].attempt);
        if started {
            s.dispatch_accepted(now, key, attempt, 100, 100);
            report(
                &mut s,
                now,
                key,
                ReportKind::Executing {
                    exec_uid: 1000,
                    exec_user: "alice".into(),
                    exec_home: "/home/alice".into(),
                    exec_cwd: "/home/alice".into(),
                    pid: 100,
                },
            );
            finished(&mut s, now, key, 3, Some(0));
            assert_eq!(s.jobs[&key].state, JobState::Pend, "requeued");
        }
        now += 40;
        if (now - T0) % 1000 == 0 {
            hellos(&mut s, now);
        }
        s.tick(now);
        s.schedule(now);
        let eff = s.take_effects();
        records += logged(&eff).len();
        if !dispatches(&eff).is_empty() {
            dispatch_times.push(now);
            per_cycle.push(records);
            records = 0;
        } else if s.jobs[&key].state == JobState::Pend {
            assert_eq!(pend_codes(&s, key), vec![pend::REQUEUED], "at {}", now - T0);
        }
    }
    let offsets: Vec<Millis> = dispatch_times.iter().map(|t| t - T0).collect();
    assert_eq!(
        offsets.len(),
        2,
        "dispatches in 16 s, at (ms) {:?}...",
        &offsets[..offsets.len().min(6)]
    );
    assert!(offsets[1] >= 10_000, "{offsets:?}");
    assert_eq!(per_cycle, vec![4], "records written per requeue cycle");
    assert_eq!(
        s.jobs[&key].requeues.as_ref().map(|r| r.by_exit_value),
        Some(2)
    );
}

/// BASALT_REQUEUE_DELAY sets the wait (here 3 s, MBD_SLEEP_TIME being 10 s): not
/// dispatched before it, with reason 23, and a pass is due when it is over; an mbatchd
/// restarted meanwhile (its log replayed) waits the same.
#[test]
fn basalt_requeue_delay_sets_the_wait_and_a_restarted_mbatchd_keeps_it() {
    let set = |q: &mut Queue| {
        q.requeue = basalt_config::batch::RequeueValues::parse("3").expect("parse");
    };
    let mut c = cfg();
    c.requeue_delay_secs = 3;
    for q in &mut c.queues {
        set(q);
    }
    let mut s = up_with(c.clone());
    s.submit(T0, &alice(), cmd("job")).expect("submit");
    s.schedule(T0);
    let mut log = logged(&s.take_effects());
    let key = (1, 0);
    finished(&mut s, T0 + 100, key, 3, None);
    log.extend(logged(&s.take_effects()));
    s.schedule(T0 + 2_900);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert_eq!(pend_codes(&s, key), vec![pend::REQUEUED]);
    // A restart at T0 + 1 s: the replayed core waits until T0 + 3 s too.
    let mut r = Sched::new(c, T0 + 1_000);
    for h in ["hostA", "hostB"] {
        r.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    r.replay(&log);
    r.start(T0 + 1_000, "hostA");
    r.take_effects();
    for core in [&mut s, &mut r] {
        core.schedule(T0 + 2_900);
        assert!(dispatches(&core.take_effects()).is_empty());
        core.tick(T0 + 3_000);
        assert!(core.needs_pass());
        core.schedule(T0 + 3_000);
        assert_eq!(dispatches(&core.take_effects()).len(), 1);
        assert_eq!(core.jobs[&key].attempt, 2);
    }
}
