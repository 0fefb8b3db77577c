//! Unit tests of the core on a manual clock.

use super::*;

fn queue(name: &str, prio: u32) -> Queue {
    Queue {
        name: name.into(),
        description: String::new(),
        priority: prio,
        nice: None,
        open: true,
        active: true,
        qjob_limit: None,
        ujob_limit: None,
        hjob_limit: None,
        pjob_limit: None,
        hosts: vec![],
        users: vec![],
        administrators: vec![],
        res_req: String::new(),
        exclusive: false,
        rerunnable: false,
        load_sched: BTreeMap::new(),
        load_stop: BTreeMap::new(),
        job_controls: BTreeMap::new(),
        pre_exec: String::new(),
        post_exec: String::new(),
        settings: BTreeMap::new(),
        run_window: String::new(),
        dispatch_window: String::new(),
    }
}

fn host(name: &str, rank: usize) -> Host {
    Host {
        name: name.into(),
        mxj: None,
        mxj_ncpus: true,
        jl_u: None,
        closed_adm: false,
        message: String::new(),
        ncpus: 0,
        cpu_factor: 1.0,
        lim: LimStatus::Unknown,
        sbd_seen: 0,
        sbd_failed: false,
        load: BTreeMap::new(),
        last_dispatch: 0,
        rank,
    }
}

fn cfg() -> SchedConfig {
    SchedConfig {
        cluster: "c".into(),
        admins: vec!["admin".into()],
        default_queue: "normal".into(),
        default_project: "default".into(),
        clean_period_secs: 3600,
        job_accept_interval: 0,
        mbd_sleep_time_secs: 10,
        sbd_sleep_time_secs: 7,
        job_terminate_interval_secs: 10,
        max_jobid: 999_999,
        hello_interval_secs: 5,
        queues: vec![queue("normal", 30), queue("high", 40)],
        hosts: vec![host("hostA", 0), host("hostB", 1)],
    }
}

const T0: Millis = 1_800_000_000_000;

fn alice() -> Caller {
    Caller {
        uid: 1000,
        user: "alice".into(),
        host: "hostA".into(),
    }
}

fn bob() -> Caller {
    Caller {
        uid: 1001,
        user: "bob".into(),
        host: "hostA".into(),
    }
}

fn admin() -> Caller {
    Caller {
        uid: 1002,
        user: "admin".into(),
        host: "hostA".into(),
    }
}

fn cmd(c: &str) -> Submission {
    Submission {
        command: c.into(),
        rlimits: [-1; 11],
        ..Default::default()
    }
}

/// A core with both hosts up, 2 CPUs each, started.
fn up() -> Sched {
    let mut s = Sched::new(cfg(), T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    s
}

fn dispatches(effects: &[Effect]) -> Vec<(JobKey, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { key, host, .. } => Some((*key, host.clone())),
            _ => None,
        })
        .collect()
}

fn logged(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Log(ev) => Some(ev.clone()),
            _ => None,
        })
        .collect()
}

fn finish(s: &mut Sched, key: JobKey, exit: i32, seq: u64) -> Ack {
    let (attempt, host) = {
        let j = &s.jobs[&key];
        (j.attempt, j.hosts[0].clone())
    };
    s.report(
        T0 + 5000,
        Report {
            host,
            key,
            attempt,
            seq,
            time: 0,
            kind: ReportKind::Finished {
                exit_status: exit,
                usage: Usage::default(),
                term_reason: String::new(),
            },
        },
    )
}

#[test]
fn submit_logs_job_new_and_dispatches_at_once() {
    let mut s = up();
    let (id, q, default) = s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    assert_eq!((id, q.as_str(), default), (1, "normal", true));
    let eff = s.take_effects();
    assert!(matches!(
        &eff[0],
        Effect::Log(Event::JobNew { job_id: 1, .. })
    ));
    s.schedule(T0);
    let eff = s.take_effects();
    assert_eq!(dispatches(&eff), vec![((1, 0), "hostA".to_string())]);
    // The JOB_START is logged before the dispatch effect.
    assert!(matches!(&eff[0], Effect::Log(Event::JobStart { .. })));
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    assert_eq!(s.jobs[&(1, 0)].attempt, 1);
}

#[test]
fn unknown_queue_and_closed_queue_are_refused() {
    let mut s = up();
    let mut sub = cmd("x");
    sub.queue = "nope".into();
    assert_eq!(s.submit(T0, &alice(), sub), Err(SchedError::NoQueue));
    s.queue_ctl(T0, &admin(), 2, "normal", "").expect("close");
    assert_eq!(
        s.submit(T0, &alice(), cmd("x")),
        Err(SchedError::QueueClosed)
    );
    assert_eq!(
        s.queue_ctl(T0, &alice(), 1, "normal", ""),
        Err(SchedError::Permission)
    );
}

#[test]
fn slots_limit_dispatch_and_free_slots_are_reused() {
    let mut s = up();
    for i in 0..6 {
        s.submit(T0, &alice(), cmd(&format!("job{i}")))
            .expect("submit");
    }
    s.schedule(T0);
    let d = dispatches(&s.take_effects());
    assert_eq!(d.len(), 4, "2 hosts x 2 slots: {d:?}");
    let pending: Vec<_> = s
        .jobs
        .values()
        .filter(|j| j.state == JobState::Pend)
        .collect();
    assert_eq!(pending.len(), 2);
    assert!(pending[0].pend_reasons.contains_key(&pend::HOST_JOB_LIMIT));
    // Finish one job: the next pending one (FCFS: job 5) starts.
    assert_eq!(finish(&mut s, (1, 0), 0, 1), Ack::Ok);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Done);
    s.schedule(T0 + 6000);
    let d = dispatches(&s.take_effects());
    assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), vec![(5, 0)]);
}

#[test]
fn higher_priority_queue_goes_first() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    for i in 0..3 {
        s.submit(T0, &alice(), cmd(&format!("low{i}")))
            .expect("submit");
    }
    let mut hi = cmd("hi");
    hi.queue = "high".into();
    let (hid, _, _) = s.submit(T0, &alice(), hi).expect("submit");
    s.schedule(T0);
    let d = dispatches(&s.take_effects());
    assert_eq!(d[0].0, (hid, 0));
    assert_eq!(d.len(), 2);
}

#[test]
fn exit_code_gives_exit_and_acct() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("false")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    finish(&mut s, (1, 0), 256, 1);
    let eff = s.take_effects();
    assert!(eff.contains(&Effect::Acct((1, 0))));
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Exit);
    assert_eq!(s.jobs[&(1, 0)].exit_status, 256);
    // A repeated report is acknowledged and changes nothing.
    assert_eq!(finish(&mut s, (1, 0), 256, 1), Ack::Ok);
    assert!(s.take_effects().is_empty());
}

#[test]
fn kill_pending_and_running() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    s.kill(T0, &alice(), (1, 0), false, false).expect("kill");
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Exit);
    assert_eq!(s.jobs[&(1, 0)].term_reason, "TERM_OWNER");
    assert_eq!(
        s.kill(T0, &alice(), (1, 0), false, false),
        Err(SchedError::Finished)
    );
    s.host_ctl(T0, &admin(), 1, "hostA", "").expect("open");
    s.submit(T0, &alice(), cmd("b")).expect("submit");
    s.schedule(T0);
    s.dispatch_accepted(T0, (2, 0), 1, 200, 200);
    s.take_effects();
    assert_eq!(
        s.kill(T0, &bob(), (2, 0), false, false),
        Err(SchedError::Permission)
    );
    s.kill(T0, &alice(), (2, 0), false, false).expect("kill");
    let eff = s.take_effects();
    assert!(eff.iter().any(|e| matches!(
        e,
        Effect::Signal {
            action: SbdAction::Kill { .. },
            ..
        }
    )));
    // Still running until sbatchd reports the end.
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    finish(&mut s, (2, 0), 130 << 8, 1);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Exit);
    assert_eq!(s.jobs[&(2, 0)].term_reason, "TERM_OWNER");
    // The admin may kill anybody's job.
    s.submit(T0, &alice(), cmd("c")).expect("submit");
    s.kill(T0, &admin(), (3, 0), false, false)
        .expect("admin kill");
    assert_eq!(
        s.kill(T0, &alice(), (99, 0), false, false),
        Err(SchedError::NoJob)
    );
}

#[test]
fn kill_as_done_records_done() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.kill(T0, &alice(), (1, 0), false, true).expect("kill -d");
    finish(&mut s, (1, 0), 130 << 8, 1);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Done);
}

#[test]
fn stop_resume_cycle() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    // Stopped before sbatchd answered the dispatch: the order waits for the answer.
    s.stop(T0, &alice(), (1, 0)).expect("stop");
    assert!(
        !s.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Signal { .. }))
    );
    s.dispatch_accepted(T0, (1, 0), 1, 100, 100);
    let eff = s.take_effects();
    assert!(eff.iter().any(|e| matches!(
        e,
        Effect::Signal {
            action: SbdAction::Stop { state: 16, .. },
            ..
        }
    )));
    let attempt = s.jobs[&(1, 0)].attempt;
    s.report(
        T0,
        Report {
            host: "hostA".into(),
            key: (1, 0),
            attempt,
            seq: 1,
            time: 0,
            kind: ReportKind::State {
                state: status::USUSP,
                reasons: susp::USER_STOP,
                subreasons: 0,
            },
        },
    );
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Ususp);
    s.resume(T0, &alice(), (1, 0)).expect("resume");
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Ssusp);
    s.schedule(T0);
    let eff = s.take_effects();
    assert!(eff.iter().any(|e| matches!(
        e,
        Effect::Signal {
            action: SbdAction::Resume,
            ..
        }
    )));
    s.report(
        T0,
        Report {
            host: "hostA".into(),
            key: (1, 0),
            attempt,
            seq: 2,
            time: 0,
            kind: ReportKind::State {
                state: status::RUN,
                reasons: 0,
                subreasons: 0,
            },
        },
    );
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
}

#[test]
fn hold_psusp_and_release() {
    let mut s = up();
    let mut sub = cmd("a");
    sub.options2 |= sub2::HOLD;
    s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Psusp);
    s.resume(T0, &alice(), (1, 0)).expect("resume");
    s.schedule(T0);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
}

#[test]
fn switch_move_and_force() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    for i in 0..4 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    s.move_job(T0, &alice(), (4, 0), 1, false).expect("btop");
    let order = |s: &Sched| {
        let mut v: Vec<_> = s.jobs.values().map(|j| (s.position(j), j.id)).collect();
        v.sort();
        v.into_iter().map(|x| x.1).collect::<Vec<_>>()
    };
    assert_eq!(order(&s), vec![4, 1, 2, 3]);
    s.move_job(T0, &alice(), (4, 0), 1, true).expect("bbot");
    assert_eq!(order(&s), vec![1, 2, 3, 4]);
    s.switch(T0, &alice(), (2, 0), "high").expect("switch");
    assert_eq!(s.jobs[&(2, 0)].queue, "high");
    assert_eq!(
        s.switch(T0, &alice(), (2, 0), "nope"),
        Err(SchedError::NoQueue)
    );
    assert_eq!(
        s.force(T0, &alice(), (1, 0), &["hostA".into()], false),
        Err(SchedError::Permission)
    );
    s.force(T0, &admin(), (1, 0), &["hostA".into()], false)
        .expect("brun");
    let eff = s.take_effects();
    assert_eq!(dispatches(&eff), vec![((1, 0), "hostA".to_string())]);
    assert!(
        logged(&eff)
            .iter()
            .any(|e| matches!(e, Event::JobForce { .. }))
    );
}

#[test]
fn unreachable_host_shows_unknown_and_gets_no_jobs() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].hosts, vec!["hostA".to_string()]);
    // hostB says hello, hostA stays silent for more than 3 hello intervals.
    s.sbd_hello(T0 + 14_000, "hostB", &[]);
    s.tick(T0 + 16_000);
    let j = &s.jobs[&(1, 0)];
    assert_eq!(s.shown_state(j), JobState::Unkwn);
    let a = s.hosts.iter().find(|h| h.name == "hostA").expect("hostA");
    assert_eq!(s.host_status(a), HostStatus::Unreach);
    // It comes back: RUN again.
    let back = s.sbd_hello(T0 + 17_000, "hostA", &[]);
    assert_eq!(back.len(), 1);
    assert_eq!(s.shown_state(&s.jobs[&(1, 0)]), JobState::Run);
}

#[test]
fn dispatch_failure_requeues() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    s.dispatch_failed(T0, (1, 0), 1, "hostA");
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Pend);
    s.schedule(T0);
    let d = dispatches(&s.take_effects());
    assert_eq!(d, vec![((1, 0), "hostB".to_string())]);
    assert_eq!(s.jobs[&(1, 0)].attempt, 2);
    // A late report of the first attempt is told to stop.
    let r = s.report(
        T0,
        Report {
            host: "hostA".into(),
            key: (1, 0),
            attempt: 1,
            seq: 1,
            time: 0,
            kind: ReportKind::Started { pid: 5, pgid: 5 },
        },
    );
    assert_eq!(r, Ack::StopJob);
}

#[test]
fn clean_period_removes_finished_jobs() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    finish(&mut s, (1, 0), 0, 1);
    s.take_effects();
    s.tick(T0 + 3_000_000);
    assert!(s.jobs.contains_key(&(1, 0)));
    s.tick(T0 + 3_700_000);
    assert!(!s.jobs.contains_key(&(1, 0)));
    let eff = s.take_effects();
    assert!(
        logged(&eff)
            .iter()
            .any(|e| matches!(e, Event::JobClean { .. }))
    );
}

#[test]
fn span_and_parallel_jobs() {
    let mut s = up();
    let mut j = cmd("mpi");
    j.num_processors = 3;
    s.submit(T0, &alice(), j).expect("submit");
    let mut one = cmd("one");
    one.num_processors = 3;
    one.res_req = "span[hosts=1]".into();
    s.submit(T0, &alice(), one).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].hosts.len(), 3);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
    assert!(s.jobs[&(2, 0)].pend_reasons.contains_key(&pend::SPAN));
}

#[test]
fn dependencies() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    let mut b = cmd("b");
    b.depend_cond = "\"done(1)\"".into();
    s.submit(T0, &alice(), b).expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
    finish(&mut s, (1, 0), 0, 1);
    s.schedule(T0);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
}

#[test]
fn replay_rebuilds_the_same_state() {
    let mut s = Sched::new(cfg(), T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    let mut log = logged(&s.take_effects());
    for i in 0..5 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    s.schedule(T0);
    finish(&mut s, (1, 0), 0, 1);
    s.kill(T0, &alice(), (5, 0), false, false).expect("kill");
    s.stop(T0, &alice(), (2, 0)).expect("stop");
    s.switch(T0, &alice(), (3, 0), "high").expect("switch");
    s.host_ctl(T0, &admin(), 2, "hostB", "maint")
        .expect("close");
    log.extend(logged(&s.take_effects()));
    let mut r = Sched::new(cfg(), T0 + 1);
    for ev in &log {
        r.on_event(ev);
    }
    let view = |s: &Sched| {
        s.jobs
            .values()
            .map(|j| {
                (
                    j.key(),
                    j.state,
                    j.queue.clone(),
                    j.hosts.clone(),
                    j.attempt,
                    j.exit_status,
                    j.order,
                    j.term_reason.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(view(&s), view(&r));
    assert_eq!(r.last_job_id, 5);
    assert_eq!(r.epoch, 1);
    assert!(r.hosts.iter().any(|h| h.name == "hostB" && h.closed_adm));
    // A new term gets a new epoch and continues the id sequence.
    r.start(T0 + 2, "hostA");
    assert_eq!(r.epoch, 2);
    let (id, _, _) = r.submit(T0 + 3, &alice(), cmd("x")).expect("submit");
    assert_eq!(id, 6);
}

#[test]
fn wildcards() {
    assert!(wildcard("*abc*", "xxabcyy"));
    assert!(wildcard("a*", "abc"));
    assert!(!wildcard("a*c", "abd"));
    assert!(wildcard("exact", "exact"));
}
