//! Checkpointing, restart and the migration of checkpointable jobs (issue 27; seed 001,
//! "Checkpointing and Migration", "Job migration", "Automatic job migration") on a manual
//! clock: who is checkpointable (bsub -k, the application profile, the queue's CHKPNT),
//! bchkpnt and its log records, periodic checkpoints, a failed checkpoint, bmig and MIG of
//! a checkpointable job, restart from the checkpoint, a failed restart, brestart, replay.

use super::tests::*;
use super::*;
use crate::chkpnt::{ChkCfg, flags};
use basalt_core::job::{pend, status, sub};

use crate::tests::report_next as report;

/// `bsub -k "dir [period]"` (period in minutes).
fn ckpt(c: &str, dir: &str, period_min: i64) -> Submission {
    let mut s = cmd(c);
    s.options |= sub::CHKPNT_DIR;
    if period_min > 0 {
        s.options |= sub::CHKPNT_PERIOD;
    }
    s.extras = Some(Box::new(SubExtras {
        chkpnt_dir: dir.to_owned(),
        chkpnt_period: period_min * 60,
        ..Default::default()
    }));
    s
}

/// An application profile `sim` of `c` with CHKPNT_DIR /appckpt, CHKPNT_PERIOD and
/// CHKPNT_INITPERIOD (seconds) and CHKPNT_METHOD; a job of it.
fn app_job(c: &mut SchedConfig, period: i64, init: i64, method: &str) -> Submission {
    c.apps.insert(
        "sim".into(),
        AppProfile {
            name: "sim".into(),
            chkpnt: Some(ChkCfg {
                dir: "/appckpt".into(),
                period,
                method: String::new(),
                init,
            }),
            chkpnt_method: method.into(),
            ..Default::default()
        },
    );
    let mut j = cmd("app job");
    j.extras = Some(Box::new(SubExtras {
        app: "sim".into(),
        ..Default::default()
    }));
    j
}

/// A core with hostA and hostB (2 slots each), `sub` submitted, started and accepted
/// (pid 100); the log so far.
fn running(c: SchedConfig, sub: Submission) -> (Sched, Vec<Event>, JobKey) {
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0);
    let key = (1, 0);
    report(
        &mut s,
        T0 + 10,
        key,
        ReportKind::Started {
            pid: 100,
            pgid: 100,
        },
    );
    let log = logged(&s.take_effects());
    (s, log, key)
}

fn chk_orders(eff: &[Effect]) -> Vec<(JobKey, bool, bool)> {
    eff.iter()
        .filter_map(|e| match e {
            Effect::Signal {
                key,
                action: SbdAction::Chkpnt { kill, migrate, .. },
                ..
            } => Some((*key, *kill, *migrate)),
            _ => None,
        })
        .collect()
}

fn chkpnt_done(s: &mut Sched, now: Millis, key: JobKey, ok: bool, message: &str) {
    report(
        s,
        now,
        key,
        ReportKind::Chkpnt {
            ok,
            pid: 4242,
            message: message.to_owned(),
        },
    );
}

fn killed(s: &mut Sched, now: Millis, key: JobKey, term: &str) {
    report(
        s,
        now,
        key,
        ReportKind::Finished {
            exit_status: 9,
            usage: Usage::default(),
            term_reason: term.to_owned(),
            post_exec: None,
        },
    );
}

fn replayed(c: SchedConfig, log: &[Event], now: Millis) -> Sched {
    let mut r = Sched::new(c, now);
    for ev in log {
        r.on_event(ev);
    }
    r
}

/// "Batch jobs can be checkpointed": bsub -k makes a job checkpointable; its checkpoints
/// go to `<dir>/<jobId>`. The application profile's CHKPNT_DIR, else the queue's
/// CHKPNT, does the same for jobs that do not ask; a job's own -k comes first.
#[test]
fn bsub_k_the_application_profile_and_queue_chkpnt_make_a_job_checkpointable() {
    let (s, _, key) = running(cfg(), ckpt("job", "/ckpt", 10));
    let d = s.dispatch_chkpnt(key).expect("checkpointable");
    assert_eq!((d.dir.as_str(), d.period), ("/ckpt/1", 600));
    assert_eq!(d.method, "default");
    assert!(!d.restart);

    let (s, _, key) = running(cfg(), cmd("plain"));
    assert_eq!(s.dispatch_chkpnt(key), None);

    let mut c = cfg();
    for q in &mut c.queues {
        q.chkpnt = ChkCfg::parse_queue("/qckpt 5");
    }
    let (s, _, key) = running(c.clone(), cmd("plain"));
    let d = s.dispatch_chkpnt(key).expect("queue CHKPNT");
    assert_eq!((d.dir.as_str(), d.period), ("/qckpt/1", 300));
    let (s, _, key) = running(c.clone(), ckpt("own", "/mine", 0));
    assert_eq!(
        s.dispatch_chkpnt(key).map(|d| d.dir),
        Some("/mine/1".into())
    );

    let j = app_job(&mut c, 120, 0, "criu");
    let (s, _, key) = running(c, j);
    let d = s.dispatch_chkpnt(key).expect("application CHKPNT_DIR");
    assert_eq!(
        (d.dir.as_str(), d.period, d.method.as_str()),
        ("/appckpt/1", 120, "criu")
    );
    assert_eq!(ChkCfg::parse_queue("/d x"), None);
    assert_eq!(ChkCfg::parse_queue(""), None);
}

/// bchkpnt: the checkpoint is ordered to sbatchd, logged first as JOB_SIGACT
/// (ChkpntStart) and its outcome as CHKPNT (ChkpntEnd); the job keeps running.
#[test]
fn bchkpnt_checkpoints_a_running_job_logged_as_sigact_then_chkpnt() {
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.checkpoint(T0 + 100, &alice(), key, false, false, None)
        .expect("bchkpnt");
    let eff = s.take_effects();
    assert!(logged(&eff).iter().any(|e| matches!(e,
        Event::ChkpntStart { key: k, flags: 0, period: None, .. } if *k == key)));
    assert_eq!(chk_orders(&eff), vec![(key, false, false)]);
    chkpnt_done(&mut s, T0 + 2000, key, true, "");
    let ev = logged(&s.take_effects());
    assert!(ev.iter().any(|e| matches!(e,
        Event::ChkpntEnd { key: k, ok: true, pid: 4242, .. } if *k == key)));
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Run);
    let c = j.chk.as_deref().expect("chk");
    assert_eq!(
        (c.count, c.last_ok, c.in_flight),
        (1, secs(T0 + 2000), None)
    );
}

/// Who may not: a job that is not checkpointable ("Job is not checkpointable"), one not
/// started yet, another user's job.
#[test]
fn bchkpnt_refuses_a_job_not_checkpointable_not_started_or_not_yours() {
    let (mut s, _, key) = running(cfg(), cmd("plain"));
    assert_eq!(
        s.checkpoint(T0 + 100, &alice(), key, false, false, None),
        Err(SchedError::NotCheckpointable)
    );
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    assert_eq!(
        s.checkpoint(T0 + 100, &bob(), key, false, false, None),
        Err(SchedError::Permission)
    );
    s.submit(T0 + 200, &alice(), ckpt("a", "/c", 0))
        .expect("submit");
    s.submit(T0 + 200, &alice(), ckpt("b", "/c", 0))
        .expect("submit");
    s.submit(T0 + 200, &alice(), ckpt("c", "/c", 0))
        .expect("submit");
    s.submit(T0 + 200, &alice(), ckpt("d", "/c", 0))
        .expect("submit");
    s.schedule(T0 + 200);
    let pending = s
        .jobs
        .values()
        .find(|j| j.state.is_pending())
        .map(|j| j.key())
        .expect("one waits: 4 slots");
    assert_eq!(
        s.checkpoint(T0 + 300, &alice(), pending, false, false, None),
        Err(SchedError::NotStarted)
    );
}

/// "A checkpoint that fails leaves the job running and says why": the reason is logged
/// (CHKPNT's Basalt field) and kept for bjobs -l.
#[test]
fn a_checkpoint_that_fails_leaves_the_job_running_and_says_why() {
    let (mut s, mut log, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.checkpoint(T0 + 100, &alice(), key, true, false, None)
        .expect("bchkpnt -k");
    log.extend(logged(&s.take_effects()));
    let why = "the job did not write /ckpt/1/chkpnt.done within 60 s of SIGWINCH";
    chkpnt_done(&mut s, T0 + 61_000, key, false, why);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    assert!(logged(&eff).iter().any(|e| matches!(e,
        Event::ChkpntEnd { ok: false, message, flags, .. } if message == why && *flags == flags::KILL)));
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Run);
    assert_eq!(j.chk.as_deref().map(|c| c.error.as_str()), Some(why));
    assert!(j.kill_ordered.is_none());
    // Replay says the same.
    let r = replayed(cfg(), &log, T0 + 62_000);
    assert_eq!(
        r.jobs[&key].chk.as_deref().map(|c| c.error.as_str()),
        Some(why)
    );
}

/// bchkpnt -k: sbatchd kills the job after a successful checkpoint (TERM_CHKPNT): it
/// ends EXIT.
#[test]
fn bchkpnt_k_kills_the_job_after_its_checkpoint() {
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.checkpoint(T0 + 100, &alice(), key, true, false, None)
        .expect("bchkpnt -k");
    assert_eq!(chk_orders(&s.take_effects()), vec![(key, true, false)]);
    chkpnt_done(&mut s, T0 + 1000, key, true, "");
    killed(&mut s, T0 + 1100, key, "TERM_CHKPNT");
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Exit);
    assert_eq!(j.term_reason.as_str(), "TERM_CHKPNT");
}

/// Periodic checkpoints: every period from the start (bsub -k "dir 1": a minute), not
/// while one is under way; bchkpnt -p changes the period (0 stops them), and replay
/// keeps the change.
#[test]
fn periodic_checkpoints_follow_the_period_and_bchkpnt_p_changes_it() {
    let (mut s, mut log, key) = running(cfg(), ckpt("job", "/ckpt", 1));
    s.tick(T0 + 59_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
    s.tick(T0 + 60_500);
    let eff = s.take_effects();
    assert_eq!(chk_orders(&eff), vec![(key, false, false)]);
    log.extend(logged(&eff));
    // Under way: no second order.
    s.tick(T0 + 125_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
    chkpnt_done(&mut s, T0 + 126_000, key, true, "");
    log.extend(logged(&s.take_effects()));
    // The next one counts from the last order (T0 + 60 s): due at T0 + 120 s, so now.
    s.tick(T0 + 126_500);
    let eff = s.take_effects();
    assert_eq!(chk_orders(&eff), vec![(key, false, false)]);
    log.extend(logged(&eff));
    chkpnt_done(&mut s, T0 + 127_000, key, true, "");
    log.extend(logged(&s.take_effects()));
    // bchkpnt -p 5: checkpoints now and every 5 minutes.
    s.checkpoint(T0 + 130_000, &alice(), key, false, false, Some(300))
        .expect("bchkpnt -p 5");
    let eff = s.take_effects();
    assert!(logged(&eff).iter().any(|e| matches!(
        e,
        Event::ChkpntStart {
            period: Some(300),
            ..
        }
    )));
    log.extend(logged(&eff));
    chkpnt_done(&mut s, T0 + 131_000, key, true, "");
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.chkpnt_period(&s.jobs[&key]), 300);
    s.tick(T0 + 200_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
    s.tick(T0 + 430_500);
    assert_eq!(chk_orders(&s.take_effects()).len(), 1);
    let r = replayed(cfg(), &log, T0 + 132_000);
    assert_eq!(r.chkpnt_period(&r.jobs[&key]), 300);
    assert_eq!(r.jobs[&key].chk.as_deref().map(|c| c.count), Some(3));
    // -p 0: no more periodic checkpoints.
    chkpnt_done(&mut s, T0 + 431_000, key, true, "");
    s.checkpoint(T0 + 432_000, &alice(), key, false, false, Some(0))
        .expect("bchkpnt -p 0");
    chkpnt_done(&mut s, T0 + 433_000, key, true, "");
    s.take_effects();
    s.tick(T0 + 2_000_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
}

/// Seed 001, "Job migration": "If the job is checkpointable, the bmig command first
/// checkpoints it. Then LSF kills the running or suspended job, and restarts ... the job
/// on another host if one is available" — requeued "with a higher priority than any
/// submitted job", keeping its job id; its next start restarts from the checkpoint.
#[test]
fn bmig_checkpoints_a_checkpointable_job_then_restarts_it_on_the_asked_host_with_its_id() {
    let (mut s, mut log, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    let first = s.jobs[&key].hosts[0].clone();
    let other = if first == "hostA" { "hostB" } else { "hostA" };
    // Others wait behind it.
    for _ in 0..4 {
        s.submit(T0 + 20, &bob(), cmd("later")).expect("submit");
    }
    s.schedule(T0 + 20);
    log.extend(logged(&s.take_effects()));
    s.migrate_job(T0 + 50, &alice(), key, &[other.to_owned()], false)
        .expect("bmig");
    let eff = s.take_effects();
    assert!(logged(&eff).iter().any(|e| matches!(e,
        Event::ChkpntStart { flags: f, .. } if *f == flags::KILL | flags::MIG)));
    assert_eq!(chk_orders(&eff), vec![(key, true, true)]);
    assert!(!eff.iter().any(|e| matches!(
        e,
        Effect::Signal {
            action: SbdAction::Kill { .. },
            ..
        }
    )));
    log.extend(logged(&eff));
    assert_eq!(
        s.migrate(T0 + 60, &alice(), key, &[]),
        Err(SchedError::Migrating)
    );
    chkpnt_done(&mut s, T0 + 1000, key, true, "");
    killed(&mut s, T0 + 1100, key, "TERM_CHKPNT");
    log.extend(logged(&s.take_effects()));
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.reasons), (JobState::Pend, pend::MIG));
    let d = s.dispatch_chkpnt(key).expect("checkpointable");
    assert!(d.restart, "restarts from its checkpoint");
    assert_eq!(d.dir, "/ckpt/1");
    // A slot on the asked host: the migrated job goes first.
    if let Some(k) = s
        .jobs
        .values()
        .find(|j| j.state.is_started() && j.hosts[0] == other)
        .map(|j| j.key())
    {
        finish_at(&mut s, k, 0, 9, T0 + 1500);
    }
    s.schedule(T0 + 2000);
    let d = dispatches(&s.take_effects());
    assert!(d.contains(&(key, other.to_owned())), "{d:?}");
    assert_eq!(s.jobs[&key].attempt, 2);
    // Replay (before the second start): pending, to restart from the checkpoint.
    let r = replayed(cfg(), &log, T0 + 1200);
    assert_eq!(r.jobs[&key].state, JobState::Pend);
    assert!(r.dispatch_chkpnt(key).is_some_and(|d| d.restart));
}

/// A migration whose checkpoint fails is given up: the job keeps running where it is.
#[test]
fn a_failed_migration_checkpoint_leaves_the_job_running_where_it_is() {
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.migrate_job(T0 + 50, &alice(), key, &[], true)
        .expect("bmig -f");
    let eff = s.take_effects();
    assert!(eff.iter().any(|e| matches!(
        e,
        Effect::Signal {
            action: SbdAction::Chkpnt {
                kill: true,
                force: true,
                migrate: true
            },
            ..
        }
    )));
    chkpnt_done(
        &mut s,
        T0 + 1000,
        key,
        false,
        "echkpnt.default exited with status 1",
    );
    s.take_effects();
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Run);
    assert!(j.requeues.as_ref().is_none_or(|r| r.requeue_to == 0));
    // It may be migrated again.
    s.migrate(T0 + 2000, &alice(), key, &[])
        .expect("bmig again");
}

/// "A restart that fails goes back to pending with a reason": PEND_JOB_RESTART_FILE,
/// not dispatched again before a scheduling interval.
#[test]
fn a_restart_that_fails_goes_back_to_pending_with_a_reason() {
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.migrate(T0 + 50, &alice(), key, &[]).expect("bmig");
    chkpnt_done(&mut s, T0 + 1000, key, true, "");
    killed(&mut s, T0 + 1100, key, "TERM_CHKPNT");
    s.schedule(T0 + 1200);
    assert_eq!(s.jobs[&key].state, JobState::Run);
    s.take_effects();
    let why = "no checkpoint in /ckpt/1 (chkpnt.done is missing)";
    report(
        &mut s,
        T0 + 1300,
        key,
        ReportKind::StartFailed {
            message: why.to_owned(),
            restart_failed: true,
        },
    );
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.reasons), (JobState::Pend, pend::RESTART_FILE));
    assert_eq!(
        j.chk.as_deref().map(|c| c.restart_error.as_str()),
        Some(why)
    );
    s.take_effects();
    s.schedule(T0 + 1400);
    assert!(dispatches(&s.take_effects()).is_empty(), "not at once");
    let later = T0 + 1300 + i64::from(s.config().mbd_sleep_time_secs) * 1000 + 10;
    s.tick(later);
    s.schedule(later);
    assert_eq!(dispatches(&s.take_effects()).len(), 1, "tried again");
}

/// Queue MIG: a checkpointable job the system suspended for MIG minutes is migrated by
/// checkpoint (not killed outright).
#[test]
fn mig_migrates_a_suspended_checkpointable_job_through_its_checkpoint() {
    let mut c = cfg();
    for q in &mut c.queues {
        q.mig_minutes = Some(1);
    }
    let (mut s, _, key) = running(c, ckpt("job", "/ckpt", 0));
    report(
        &mut s,
        T0 + 1000,
        key,
        ReportKind::State {
            state: status::SSUSP,
            reasons: basalt_core::job::susp::LOAD_REASON,
            subreasons: 0,
        },
    );
    s.take_effects();
    s.tick(T0 + 30_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
    s.tick(T0 + 62_000);
    let eff = s.take_effects();
    assert_eq!(chk_orders(&eff), vec![(key, true, true)]);
    assert!(
        logged(&eff)
            .iter()
            .any(|e| matches!(e, Event::JobMigrate { user, .. } if user == "admin"))
    );
}

/// brestart: a new job with the old job's submission (and what brestart changes), which
/// restarts from the old job's directory; only who may control the old job may.
#[test]
fn brestart_makes_a_new_job_that_restarts_from_the_old_jobs_checkpoint() {
    let (mut s, _, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    s.checkpoint(T0 + 100, &alice(), key, true, false, None)
        .expect("bchkpnt -k");
    chkpnt_done(&mut s, T0 + 1000, key, true, "");
    killed(&mut s, T0 + 1100, key, "TERM_CHKPNT");
    s.take_effects();
    let mut given = cmd("");
    given.options = sub::RESTART | sub::CHKPNT_DIR;
    given.queue = Str::EMPTY;
    given.asked_hosts = vec!["hostB".into()];
    given.extras = Some(Box::new(SubExtras {
        chkpnt_dir: "/ckpt".into(),
        restart_job: Some(key),
        ..Default::default()
    }));
    assert_eq!(
        s.restart_submission(&bob(), key, &given, false).err(),
        Some(SchedError::Permission)
    );
    let new = s
        .restart_submission(&alice(), key, &given, true)
        .expect("restart");
    assert_eq!(new.command.as_str(), "job");
    assert_eq!(new.asked_hosts, vec!["hostB".to_owned()]);
    assert_ne!(new.options & sub::RESTART_FORCE, 0);
    let (id, _, _) = s.submit(T0 + 2000, &alice(), new).expect("submit");
    assert_ne!(id, key.0);
    let d = s.dispatch_chkpnt((id, 0)).expect("checkpointable");
    assert!(d.restart && d.force);
    assert_eq!(d.dir, format!("/ckpt/{id}"));
    assert_eq!(
        (d.restart_from_dir.as_str(), d.old_job.as_str()),
        ("/ckpt/1", "1")
    );
    s.schedule(T0 + 2000);
    assert_eq!(
        dispatches(&s.take_effects()),
        vec![((id, 0), "hostB".to_owned())]
    );
}

/// mbatchd killed after logging a migration's checkpoint order: the replayed mbatchd
/// sends the order again at the host's next hello (once), and the migration completes.
#[test]
fn a_checkpoint_order_logged_before_a_crash_is_sent_again_at_the_next_hello() {
    let (mut s, mut log, key) = running(cfg(), ckpt("job", "/ckpt", 0));
    let host = s.jobs[&key].hosts[0].clone();
    s.migrate(T0 + 50, &alice(), key, &[]).expect("bmig");
    log.extend(logged(&s.take_effects()));
    // A new mbatchd: replayed, nothing sent yet.
    let mut r = replayed(cfg(), &log, T0 + 100);
    r.start(T0 + 100, "hostA");
    r.take_effects();
    let listed = [HostJob {
        key,
        attempt: 1,
        state: status::RUN,
        pid: 100,
        pgid: 100,
    }];
    r.sbd_hello(T0 + 200, &host, &listed);
    assert_eq!(chk_orders(&r.take_effects()), vec![(key, true, true)]);
    r.sbd_hello(T0 + 1200, &host, &listed);
    assert!(chk_orders(&r.take_effects()).is_empty(), "once");
    // The live mbatchd does not send its own order twice.
    s.sbd_hello(T0 + 200, &host, &listed);
    assert!(chk_orders(&s.take_effects()).is_empty());
    chkpnt_done(&mut r, T0 + 2000, key, true, "");
    killed(&mut r, T0 + 2100, key, "TERM_CHKPNT");
    assert_eq!(
        (r.jobs[&key].state, r.jobs[&key].reasons),
        (JobState::Pend, pend::MIG)
    );
}

/// `bsub -k "dir init=2 1"`: the first periodic checkpoint two minutes after the start,
/// then every minute; an application profile's CHKPNT_INITPERIOD does the same for its
/// jobs.
#[test]
fn the_initial_period_delays_the_first_periodic_checkpoint() {
    let mut j = ckpt("job", "/ckpt", 1);
    if let Some(x) = j.extras.as_mut() {
        x.chkpnt_init = 120;
    }
    let (mut s, _, key) = running(cfg(), j);
    s.tick(T0 + 61_000);
    assert!(
        chk_orders(&s.take_effects()).is_empty(),
        "not after one period"
    );
    s.tick(T0 + 120_500);
    assert_eq!(chk_orders(&s.take_effects()).len(), 1);
    chkpnt_done(&mut s, T0 + 121_000, key, true, "");
    s.tick(T0 + 170_000);
    assert!(chk_orders(&s.take_effects()).is_empty());
    s.tick(T0 + 180_500);
    assert_eq!(chk_orders(&s.take_effects()).len(), 1, "then every period");

    let mut c = cfg();
    let j = app_job(&mut c, 600, 60, "");
    let (mut s, _, _) = running(c, j);
    s.tick(T0 + 60_500);
    assert_eq!(chk_orders(&s.take_effects()).len(), 1, "CHKPNT_INITPERIOD");
}

/// A core with hostA and hostB (a slot each), a checkpointable job started on hostB
/// (checkpointed once with `checkpointed`); then hostB falls silent while hostA says
/// hello, past the unreach time (15 s) and BASALT_HOST_LOST_GRACE (60 s).
fn lost_on_host_b(checkpointed: bool) -> (Sched, JobKey) {
    let mut s = Sched::new(cfg(), T0);
    s.lim_update("hostA", 1, 1.0, true, BTreeMap::new());
    s.lim_update("hostB", 1, 1.0, true, BTreeMap::new());
    s.start(T0, "hostA");
    let mut a = ckpt("job", "/ckpt", 0);
    a.asked_hosts = vec!["hostB".into()];
    s.submit(T0, &alice(), a).expect("submit");
    s.schedule(T0);
    let key = (1, 0);
    s.dispatch_accepted(T0 + 10, key, 1, 100, 100);
    if checkpointed {
        s.checkpoint(T0 + 100, &alice(), key, false, false, None)
            .expect("bchkpnt");
        chkpnt_done(&mut s, T0 + 1000, key, true, "");
    }
    s.take_effects();
    let mut now = T0 + 1000;
    while now < T0 + 80_000 {
        now += 1000;
        s.sbd_hello(now, "hostA", &[]);
        s.tick(now);
    }
    (s, key)
}

/// Seed 001: "LSF Batch jobs can be submitted so that they are automatically rerun from
/// the beginning or restarted from a checkpoint on another host if they are lost because
/// of a host failure." A checkpointable job with a checkpoint, lost with its silent
/// host, goes back to PEND and restarts from its checkpoint; one without a checkpoint
/// (and not rerunnable) ends as before.
#[test]
fn a_checkpointed_job_lost_with_its_host_is_restarted_from_its_checkpoint_elsewhere() {
    let (s, key) = lost_on_host_b(true);
    let j = &s.jobs[&key];
    assert_eq!((j.state, j.reasons), (JobState::Pend, pend::REQUEUED));
    assert!(s.dispatch_chkpnt(key).is_some_and(|d| d.restart));
    let (s, key) = lost_on_host_b(false);
    assert_eq!(s.jobs[&key].state, JobState::Exit);
}

/// A log switch carries what the log said of a job's checkpoints: that it has one (a
/// migrated job pending to restart from it), the period bchkpnt -p set, why the last
/// checkpoint failed, an order under way, and a migration waiting for sbatchd's kill.
#[test]
fn a_log_switch_keeps_checkpoints_periods_failures_and_migrations_under_way() {
    use crate::logswitch_tests::replay;
    let mut s = Sched::new(cfg(), T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    for c in ["a", "b", "c", "d"] {
        s.submit(T0, &alice(), ckpt(c, "/ckpt", 0)).expect("submit");
    }
    s.schedule(T0);
    for id in 1..=4 {
        report(
            &mut s,
            T0 + 10,
            (id, 0),
            ReportKind::Started {
                pid: 100,
                pgid: 100,
            },
        );
    }
    // 1: migrated after a checkpoint, pending to restart. 2: bchkpnt -p 5, then a failed
    // checkpoint. 3: a checkpoint under way. 4: a migration waiting for its checkpoint.
    s.migrate(T0 + 100, &alice(), (1, 0), &[]).expect("bmig");
    chkpnt_done(&mut s, T0 + 200, (1, 0), true, "");
    killed(&mut s, T0 + 300, (1, 0), "TERM_CHKPNT");
    s.checkpoint(T0 + 100, &alice(), (2, 0), false, false, Some(300))
        .expect("-p 5");
    chkpnt_done(&mut s, T0 + 200, (2, 0), false, "no room");
    s.checkpoint(T0 + 400, &alice(), (3, 0), false, false, None)
        .expect("bchkpnt");
    s.migrate(T0 + 500, &alice(), (4, 0), &[]).expect("bmig");
    s.take_effects();
    let co = s.carry_over(T0 + 1000);
    let r = replay(s.config().clone(), T0 + 1000, co.events());
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Pend);
    assert!(r.dispatch_chkpnt((1, 0)).is_some_and(|d| d.restart));
    assert_eq!(r.chkpnt_period(&r.jobs[&(2, 0)]), 300);
    let c2 = r.jobs[&(2, 0)].chk.as_deref().expect("chk");
    assert_eq!((c2.count, c2.error.as_str()), (0, "no room"));
    assert!(!r.dispatch_chkpnt((2, 0)).is_some_and(|d| d.restart));
    assert!(
        r.jobs[&(3, 0)]
            .chk
            .as_deref()
            .is_some_and(|c| c.in_flight.is_some())
    );
    let j4 = &r.jobs[&(4, 0)];
    assert_eq!(
        j4.requeues
            .as_ref()
            .map(|q| (q.requeue_to, q.requeue_reason)),
        Some((status::PEND, pend::MIG))
    );
    assert_eq!(
        j4.chk.as_deref().and_then(|c| c.in_flight).map(|(_, f)| f),
        Some(flags::KILL | flags::MIG)
    );
}
