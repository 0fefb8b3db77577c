//! Log switching: replaying [`Sched::carry_over`] into a fresh core rebuilds the state, and
//! the rebuilt core decides exactly as one rebuilt from the whole history.

use super::*;
use crate::tests::{T0, admin, alice, bob, cfg, cmd, dep, host, logged, named};

/// A fresh core after `events`.
pub(crate) fn replay<'a>(
    cfg: SchedConfig,
    now: Millis,
    events: impl IntoIterator<Item = &'a Event>,
) -> Sched {
    let mut s = Sched::new(cfg, now);
    for e in events {
        s.on_event(e);
    }
    s
}

/// Everything the log decides about a job, comparable between two cores (orders as
/// ranks: the numbers themselves are private to each core).
#[derive(Debug, PartialEq)]
struct JobView {
    key: JobKey,
    display: String,
    sub: Submission,
    seq_rank: usize,
    array_limit: Option<u32>,
    dep: Option<depend::Expr>,
    dependency: Option<Tri>,
    state: JobState,
    queue: String,
    queue_rank: usize,
    position: u32,
    hosts: Vec<String>,
    start_time: i64,
    end_time: i64,
    pid: u32,
    pgid: u32,
    exec: (u32, String, String, String),
    reasons: u32,
    subreasons: u32,
    exit_status: i32,
    cpu_time: f64,
    term_reason: String,
    attempt: u32,
    kill_as_done: bool,
    kill_ordered: Option<String>,
    forced: bool,
    no_stop: bool,
    /// Usage is logged only when a job finishes.
    final_usage: Option<Usage>,
    /// Times preempted (counted from the log's JOB_STATUS records).
    preempt_count: u32,
}

#[derive(Debug, PartialEq)]
struct View {
    jobs: Vec<JobView>,
    /// key, user, name, seq rank, state, exit status, cleaned.
    gone: Vec<(JobKey, String, String, usize, JobState, i32, i64)>,
    last_job_id: u64,
    next_job_id: Option<u64>,
    epoch: u64,
    mbd_start: Option<(i64, String)>,
    /// name, open, active, message.
    queues: Vec<(String, bool, bool, String)>,
    /// name, closed, message.
    hosts: Vec<(String, bool, String)>,
}

fn view(s: &Sched) -> View {
    // A switch carries only the cleaned jobs a dependency still names.
    let needed = s.gone_needed();
    let gone: Vec<(&JobKey, &crate::Gone)> =
        s.gone.iter().filter(|(k, _)| needed.contains(k)).collect();
    let mut seqs: Vec<u64> = s
        .jobs
        .values()
        .map(|j| j.seq)
        .chain(gone.iter().map(|(_, g)| g.seq))
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    let seq_rank = |q: u64| seqs.binary_search(&q).unwrap_or(usize::MAX);
    let jobs = s
        .jobs
        .values()
        .map(|j| JobView {
            key: j.key(),
            display: j.display_name(),
            sub: (*j.sub).clone(),
            seq_rank: seq_rank(j.seq),
            array_limit: j.array_limit,
            dep: j.dep.as_deref().cloned(),
            // Only an unfinished job's dependency still matters (a switch carries only the
            // cleaned jobs such dependencies name).
            dependency: if j.state.is_finished() {
                None
            } else {
                s.dependency(j)
            },
            state: j.state,
            queue: j.queue.to_string(),
            queue_rank: s
                .jobs
                .values()
                .filter(|o| o.queue == j.queue && (o.order, o.key()) < (j.order, j.key()))
                .count(),
            position: s.position(j),
            hosts: j.hosts.clone(),
            start_time: j.start_time,
            end_time: j.end_time,
            pid: j.pid,
            pgid: j.pgid,
            exec: (
                j.exec_uid,
                j.exec_user.to_string(),
                j.exec_home.to_string(),
                j.exec_cwd.to_string(),
            ),
            reasons: j.reasons,
            subreasons: j.subreasons,
            exit_status: j.exit_status,
            cpu_time: j.cpu_time,
            term_reason: j.term_reason.to_string(),
            attempt: j.attempt,
            kill_as_done: j.kill_as_done,
            kill_ordered: j.kill_ordered.clone().map(String::from),
            forced: j.forced,
            no_stop: j.no_stop,
            final_usage: j.state.is_finished().then(|| j.usage().clone()),
            preempt_count: j.preempt_count,
        })
        .collect();
    View {
        jobs,
        gone: gone
            .iter()
            .map(|(k, g)| {
                (
                    **k,
                    g.user.clone(),
                    g.job_name.clone(),
                    seq_rank(g.seq),
                    g.state,
                    g.exit_status,
                    g.cleaned,
                )
            })
            .collect(),
        last_job_id: s.last_job_id,
        next_job_id: s.next_job_id(),
        epoch: s.epoch,
        mbd_start: s.mbd_start.clone(),
        queues: s
            .queues
            .iter()
            .map(|q| (q.name.clone(), q.open, q.active, q.message.clone()))
            .collect(),
        hosts: s
            .hosts
            .iter()
            .map(|h| (h.name.clone(), h.closed_adm, h.message.clone()))
            .collect(),
    }
}

/// The two cores hold the same logged state (job by job, for readable failures).
fn assert_same(a: &Sched, b: &Sched, ctx: &str) {
    let (va, vb) = (view(a), view(b));
    let ka: Vec<JobKey> = va.jobs.iter().map(|j| j.key).collect();
    let kb: Vec<JobKey> = vb.jobs.iter().map(|j| j.key).collect();
    assert_eq!(ka, kb, "{ctx}: jobs in memory");
    for (x, y) in va.jobs.iter().zip(&vb.jobs) {
        assert_eq!(x, y, "{ctx}: job {:?}", x.key);
    }
    assert_eq!(va.gone, vb.gone, "{ctx}: cleaned jobs remembered");
    assert_eq!(
        (va.last_job_id, va.next_job_id, va.epoch, &va.mbd_start),
        (vb.last_job_id, vb.next_job_id, vb.epoch, &vb.mbd_start),
        "{ctx}: last id, next id, epoch, MBD_START"
    );
    assert_eq!(va.queues, vb.queues, "{ctx}: queues");
    assert_eq!(va.hosts, vb.hosts, "{ctx}: hosts");
}

/// LIM and every sbatchd report in, as they would after a restart; each sbatchd lists
/// the jobs mbatchd started on its host.
fn hosts_up(s: &mut Sched, now: Millis) {
    let names: Vec<String> = s.hosts.iter().map(|h| h.name.clone()).collect();
    for h in &names {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
        let jobs: Vec<crate::HostJob> = s
            .jobs
            .values()
            .filter(|j| j.state.is_started() && j.hosts.first() == Some(h))
            .map(|j| crate::HostJob {
                key: j.key(),
                attempt: j.attempt,
                state: j.state.code(),
                pid: j.pid,
                pgid: j.pgid,
            })
            .collect();
        s.sbd_hello(now, h, &jobs);
    }
}

/// Pending reasons of the jobs a pass considered.
fn pend_view(s: &Sched) -> Vec<(JobKey, BTreeMap<u32, Vec<String>>)> {
    s.jobs
        .values()
        .filter(|j| j.state == JobState::Pend)
        .map(|j| (j.key(), (*j.pend_reasons).clone()))
        .collect()
}

/// Apply the same input to both cores and compare what they answer and do.
fn same_step(
    a: &mut Sched,
    b: &mut Sched,
    ctx: &str,
    what: &str,
    f: &dyn Fn(&mut Sched) -> String,
) {
    assert_eq!(f(a), f(b), "{ctx}: answer to {what}");
    assert_eq!(
        a.take_effects(),
        b.take_effects(),
        "{ctx}: effects of {what}"
    );
}

/// Two restarted cores, given the same inputs, do the same things.
fn assert_same_decisions(mut a: Sched, mut b: Sched, now: Millis, ctx: &str) {
    let (a, b) = (&mut a, &mut b);
    same_step(a, b, ctx, "hosts coming up", &|s| {
        hosts_up(s, now);
        String::new()
    });
    same_step(a, b, ctx, "a pass", &|s| {
        s.schedule(now);
        String::new()
    });
    assert_eq!(pend_view(a), pend_view(b), "{ctx}: pending reasons");
    let later = now + 60_000;
    same_step(a, b, ctx, "a later pass", &|s| {
        hosts_up(s, later);
        s.schedule(later);
        String::new()
    });
    let clean = later + (i64::from(a.cfg.clean_period_secs) + 1) * 1000;
    same_step(a, b, ctx, "the clean period", &|s| {
        hosts_up(s, clean);
        s.tick(clean);
        String::new()
    });
    same_step(a, b, ctx, "a submission and a pass", &|s| {
        let r = s.submit(clean, &alice(), dep("after", "ended(first) || done(1)"));
        s.schedule(clean);
        format!("{r:?}")
    });
    assert_same(a, b, &format!("{ctx}, after the same inputs"));
}

/// A configuration with a third host.
fn cfg3() -> SchedConfig {
    let mut c = cfg();
    c.hosts.push(host("hostC", 2));
    c
}

/// A started core on `c`, and the events it logged.
fn started_core(c: SchedConfig, terms: u32) -> (Sched, Vec<Event>) {
    let mut s = Sched::new(c, T0);
    hosts_up(&mut s, T0);
    for _ in 0..terms {
        s.start(T0, "hostA");
    }
    let log = logged(&s.take_effects());
    (s, log)
}

fn report(s: &mut Sched, now: Millis, key: JobKey, seq: u64, kind: ReportKind) -> Ack {
    let (attempt, host) = {
        let j = &s.jobs[&key];
        (j.attempt, j.hosts.first().cloned().unwrap_or_default())
    };
    s.report(
        now,
        Report {
            host,
            key,
            attempt,
            seq,
            time: 0,
            kind,
        },
    )
}

fn keys_in(s: &Sched, st: JobState) -> Vec<JobKey> {
    s.jobs
        .values()
        .filter(|j| j.state == st)
        .map(|j| j.key())
        .collect()
}

/// Replay `carry_over` and compare: with the live core, with a core rebuilt from the
/// whole history, and in what the rebuilt cores decide next.
pub(crate) fn check_switch(live: &Sched, history: &[Event], now: Millis, ctx: &str) -> CarryOver {
    let co = live.carry_over(now);
    assert!(
        matches!(co.appended.last(), Some(Event::LogSwitch { last_job_id, .. }) if *last_job_id == live.last_job_id),
        "{ctx}: LOG_SWITCH last"
    );
    let switched = replay(live.cfg.clone(), now, co.events());
    crate::fsm_tests::check_counts(&switched, &format!("{ctx}: switched"));
    assert_same(live, &switched, &format!("{ctx}: live vs switched log"));
    assert_eq!(switched.num_remove_jobs(), 0, "{ctx}: count restarts");
    let mut full = replay(live.cfg.clone(), now, history);
    assert_same(
        &full,
        &switched,
        &format!("{ctx}: whole history vs switched log"),
    );
    // The live core applies what follows the new header (LOG_SWITCH last), as the new
    // file's replay did: from then on both decide alike.
    for ev in &co.appended {
        full.on_event(ev);
    }
    assert_same_decisions(full, switched, now + 1000, ctx);
    co
}

#[test]
fn a_rich_state_survives_the_switch() {
    let (mut s, mut log) = started_core(cfg3(), 3);
    let mut t = T0;
    macro_rules! logit {
        () => {
            log.extend(logged(&s.take_effects()))
        };
    }
    let mut held = cmd("held");
    held.options2 |= sub2::HOLD;
    let (j1, _, _) = s.submit(t, &alice(), cmd("a")).expect("submit");
    let (j2, _, _) = s.submit(t, &bob(), held).expect("submit");
    let (arr, _, _) = s
        .submit(t, &alice(), named("x", "arr[1-6]%2"))
        .expect("submit");
    let (j4, _, _) = s.submit(t, &alice(), dep("d", "done(1)")).expect("submit");
    let mut first = named("f", "first");
    first.queue = "high".into();
    let (j5, _, _) = s.submit(t, &alice(), first).expect("submit");
    let (j6, _, _) = s
        .submit(t, &alice(), dep("e", "ended(first) && exit(arr[2])"))
        .expect("submit");
    let mut wide = cmd("wide");
    wide.num_processors = 2;
    wide.res_req = "span[hosts=1]".into();
    let (j7, _, _) = s.submit(t, &bob(), wide).expect("submit");
    let fillers: Vec<u64> = (0..5)
        .map(|i| {
            s.submit(t, &bob(), cmd(&format!("fill{i}")))
                .expect("submit")
                .0
        })
        .collect();
    logit!();
    t += 1000;
    s.schedule(t);
    logit!();
    let running = keys_in(&s, JobState::Run);
    assert!(running.len() >= 4, "{running:?}");
    for (n, key) in running.iter().enumerate() {
        s.dispatch_accepted(t, *key, 1, 100 + n as u32, 100 + n as u32);
    }
    report(
        &mut s,
        t,
        (j1, 0),
        1,
        ReportKind::Executing {
            exec_uid: 1000,
            exec_user: "alice".into(),
            exec_home: "/home/alice".into(),
            exec_cwd: "/home/alice/run".into(),
            pid: 100,
        },
    );
    // bstop, the stop arriving, bresume (SSUSP with SUSP_USER_RESUME).
    s.stop(t, &alice(), (j1, 0)).expect("stop");
    report(
        &mut s,
        t,
        (j1, 0),
        2,
        ReportKind::State {
            state: status::USUSP,
            reasons: susp::USER_STOP | susp::MBD_LOCK,
            subreasons: 0,
        },
    );
    s.resume(t, &alice(), (j1, 0)).expect("resume");
    // Two elements end, one well and one badly.
    for (idx, exit) in [(1, 0), (2, 256)] {
        let usage = Usage {
            utime: 1.5,
            stime: 0.25,
            max_mem_kb: 2048,
            avg_mem_kb: 1024,
            ..Default::default()
        };
        report(
            &mut s,
            t,
            (arr, idx),
            1,
            ReportKind::Finished {
                exit_status: exit,
                usage,
                term_reason: String::new(),
                post_exec: None,
            },
        );
    }
    logit!();
    t += 1000;
    s.schedule(t);
    logit!();
    // A kill on its way to a running element; bkill -d by an administrator; bkill -r.
    let started: Vec<JobKey> = keys_in(&s, JobState::Run);
    let elem = *started
        .iter()
        .find(|k| k.0 == arr && s.jobs[k].pid == 0)
        .expect("a new element");
    s.dispatch_accepted(t, elem, 1, 300, 300);
    s.kill(t, &alice(), elem, false, false).expect("kill");
    let bobs: Vec<JobKey> = started
        .iter()
        .copied()
        .filter(|k| s.jobs[k].sub.user == "bob" && s.jobs[k].state == JobState::Run)
        .collect();
    assert!(bobs.len() >= 2, "{bobs:?}");
    s.kill(t, &admin(), bobs[0], false, true).expect("kill -d");
    s.kill(t, &admin(), bobs[1], true, false).expect("kill -r");
    // A pending job killed by an administrator, one switched, moves to top and bottom.
    let pending: Vec<JobKey> = keys_in(&s, JobState::Pend)
        .into_iter()
        .filter(|k| fillers.contains(&k.0))
        .collect();
    assert!(pending.len() >= 3, "{pending:?}");
    s.kill(t, &admin(), pending[0], false, false).expect("kill");
    s.switch(t, &bob(), pending[1], "high").expect("switch");
    s.move_job(t, &bob(), pending[2], 1, false).expect("btop");
    s.move_job(t, &alice(), (arr, 6), 1, true).expect("bbot");
    // A running job switched, a pending one stopped by an administrator.
    s.switch(t, &alice(), (j1, 0), "high").expect("switch");
    s.stop(t, &admin(), (j4, 0)).expect("stop pending");
    logit!();
    // brun ignoring limits, and a dispatch that could not be delivered (requeued).
    s.force(t, &admin(), (j7, 0), &["hostC".into()], true)
        .expect("brun");
    s.dispatch_failed(t, (j7, 0), 1, "hostC");
    hosts_up(&mut s, t);
    // Control state with messages.
    s.queue_ctl(t, &admin(), 2, "normal", "maintenance")
        .expect("qclose");
    s.queue_ctl(t, &admin(), 4, "high", "hold on")
        .expect("qinact");
    s.host_ctl(t, &admin(), 2, "hostB", "disk").expect("hclose");
    s.host_ctl(t, &admin(), 1, "hostC", "back").expect("hopen");
    logit!();
    // After CLEAN_PERIOD the finished jobs are purged; more happens afterwards.
    t += 3_700_000;
    hosts_up(&mut s, t);
    s.tick(t);
    logit!();
    assert!(s.num_remove_jobs() >= 4, "{}", s.num_remove_jobs());
    assert!(!s.gone.is_empty());
    s.resume(t, &bob(), (j2, 0)).expect("release the hold");
    report(
        &mut s,
        t,
        elem,
        2,
        ReportKind::Finished {
            exit_status: 33280,
            usage: Usage::default(),
            term_reason: String::new(),
            post_exec: None,
        },
    );
    s.queue_ctl(t, &admin(), 3, "high", "").expect("qact");
    s.schedule(t);
    logit!();
    assert!(s.jobs.values().any(|j| j.state.is_finished()));
    assert!(s.jobs.values().any(|j| j.state == JobState::Ssusp));
    assert!(s.jobs.values().any(|j| j.state == JobState::Psusp));
    assert!(s.jobs.values().any(|j| j.forced));
    assert!(s.jobs.values().any(|j| j.kill_ordered.is_some()));
    assert!(s.jobs.values().any(|j| j.queue != j.sub.queue));
    let _ = (j5, j6);
    let co = check_switch(&s, &log, t, "rich state");
    // The switched log is what LSF writes: MBD_STARTs and job records before the offset,
    // control state and LOG_SWITCH after it.
    assert!(co.carried.iter().all(|e| !matches!(
        e,
        Event::QueueCtrl { .. } | Event::HostCtrl { .. } | Event::LogSwitch { .. }
    )));
    assert_eq!(
        co.carried
            .iter()
            .filter(|e| matches!(e, Event::MbdStart { .. }))
            .count(),
        3
    );
    assert!(co.appended.contains(&Event::HostCtrl {
        time: secs(t),
        op: 2,
        host: "hostB".into(),
        uid: 0,
        user: "admin".into(),
        message: "disk".into(),
    }));
    // One JOB_NEW per array, however many of its elements are left.
    assert_eq!(
        co.carried
            .iter()
            .filter(|e| matches!(e, Event::JobNew { job_id, .. } if *job_id == arr))
            .count(),
        1
    );
}

#[test]
fn cleaned_highest_id_is_not_reused() {
    let (mut s, mut log) = started_core(cfg(), 1);
    for i in 0..3 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    // Job 3 is cleaned, and forgotten when job 2 is cleaned a week later.
    s.kill(T0, &alice(), (3, 0), false, false).expect("kill");
    s.schedule(T0);
    let t1 = T0 + 3_700_000;
    hosts_up(&mut s, t1);
    s.tick(t1);
    let t2 = t1 + (GONE_KEEP_SECS + 10) * 1000;
    s.kill(t2, &alice(), (2, 0), true, false).expect("kill -r");
    let t3 = t2 + 3_700_000;
    hosts_up(&mut s, t3);
    s.tick(t3);
    log.extend(logged(&s.take_effects()));
    assert!(!s.jobs.contains_key(&(3, 0)) && !s.gone.contains_key(&(3, 0)));
    let co = check_switch(&s, &log, t3, "highest id cleaned");
    // Without the LOG_SWITCH, id 2 (cleaned, not named by any dependency, so not carried)
    // and id 3 would come again.
    let carried_only = replay(cfg(), t3, &co.carried);
    assert_eq!(carried_only.next_job_id(), Some(2));
    let mut r = replay(cfg(), t3, co.events());
    assert_eq!(r.submit(t3, &alice(), cmd("next")).map(|x| x.0), Ok(4));
}

#[test]
fn no_job_id_left() {
    let mut c = cfg();
    c.max_jobid = 3;
    let (mut s, _) = started_core(c, 1);
    for _ in 0..3 {
        s.submit(T0, &alice(), cmd("x")).expect("submit");
    }
    assert_eq!(s.submit(T0, &alice(), cmd("x")), Err(SchedError::NoJobId));
    s.kill(T0, &alice(), (2, 0), false, false).expect("kill");
    s.tick(T0 + 3_700_000);
    assert_eq!(s.submit(T0, &alice(), cmd("x")).map(|x| x.0), Ok(2));
}

#[test]
fn purge_count_and_switch_due() {
    let mut c = cfg();
    c.max_job_num = 2;
    let (mut s, _) = started_core(c, 1);
    for i in 0..3 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    for i in 1..=3 {
        s.kill(T0, &alice(), (i, 0), false, false).expect("kill");
    }
    assert!(!s.switch_due());
    let t = T0 + 3_700_000;
    s.tick(t);
    s.take_effects();
    assert_eq!(s.num_remove_jobs(), 3);
    assert!(s.switch_due());
    let co = s.carry_over(t);
    for e in &co.appended {
        s.on_event(e);
    }
    assert_eq!(s.num_remove_jobs(), 0);
    assert!(!s.switch_due());
    // A replay of the old log counts its JOB_CLEANs, one of the new log starts at 0.
    let r = replay(s.cfg.clone(), t, co.events());
    assert_eq!(r.num_remove_jobs(), 0);
}

#[test]
fn the_epoch_survives_a_log_that_does_not_name_it() {
    let (mut s, _) = started_core(cfg(), 4);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.take_effects();
    let co = s.carry_over(T0);
    // LSF's MBD_START record has no epoch: what a replay of the written file sees.
    let unnamed: Vec<Event> = co
        .events()
        .map(|e| match e {
            Event::MbdStart {
                time,
                master,
                cluster,
                num_hosts,
                num_queues,
                ..
            } => Event::MbdStart {
                time: *time,
                master: master.clone(),
                cluster: cluster.clone(),
                num_hosts: *num_hosts,
                num_queues: *num_queues,
                epoch: 0,
            },
            e => e.clone(),
        })
        .collect();
    let mut r = replay(cfg(), T0, &unnamed);
    assert_eq!(r.epoch, 4);
    r.start(T0 + 1000, "hostB");
    assert_eq!(r.epoch, 5);
}

#[test]
fn queue_positions_after_switches_and_moves() {
    let (mut s, mut log) = started_core(cfg(), 1);
    // Nothing can start: the order of the queues is all there is.
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    let mut high = cmd("h");
    high.queue = "high".into();
    s.submit(T0, &alice(), high.clone()).expect("submit"); // 1 (high)
    for i in 0..4 {
        s.submit(T0, &alice(), cmd(&format!("n{i}")))
            .expect("submit"); // 2..=5
    }
    s.switch(T0, &alice(), (1, 0), "normal").expect("switch"); // after 5
    s.submit(T0, &alice(), cmd("n4")).expect("submit"); // 6, after 1
    s.switch(T0, &alice(), (3, 0), "high").expect("switch");
    s.switch(T0, &alice(), (3, 0), "normal")
        .expect("switch back"); // after 6
    s.submit(T0, &alice(), high).expect("submit"); // 7 (high)
    s.switch(T0, &alice(), (7, 0), "normal").expect("switch"); // after 3
    s.move_job(T0, &alice(), (5, 0), 1, false).expect("btop");
    s.move_job(T0, &alice(), (2, 0), 1, true).expect("bbot");
    s.move_job(T0, &alice(), (6, 0), 3, false).expect("btop 3");
    log.extend(logged(&s.take_effects()));
    let order = |s: &Sched| {
        let mut v: Vec<(i64, u64)> = s
            .jobs
            .values()
            .filter(|j| j.queue == "normal")
            .map(|j| (j.order, j.id))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    };
    assert_eq!(order(&s), vec![5, 4, 6, 1, 3, 7, 2]);
    let co = check_switch(&s, &log, T0, "positions");
    assert_eq!(order(&replay(cfg(), T0, co.events())), order(&s));
    // Jobs placed by their JOB_SWITCH need no JOB_MOVE: only the three moved with
    // btop/bbot, and job 3, switched away and back, need one.
    let moves = co
        .carried
        .iter()
        .filter(|e| matches!(e, Event::JobMove { .. }))
        .count();
    assert!(moves <= 4, "{moves} moves");
}

#[test]
fn a_switched_job_needs_no_move() {
    let (mut s, mut log) = started_core(cfg(), 1);
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    let mut high = cmd("h");
    high.queue = "high".into();
    s.submit(T0, &alice(), high).expect("submit");
    s.submit(T0, &alice(), cmd("2")).expect("submit");
    s.submit(T0, &alice(), cmd("3")).expect("submit");
    s.switch(T0, &alice(), (1, 0), "normal").expect("switch");
    s.submit(T0, &alice(), cmd("4")).expect("submit");
    log.extend(logged(&s.take_effects()));
    let co = check_switch(&s, &log, T0, "switched");
    assert!(
        !co.carried
            .iter()
            .any(|e| matches!(e, Event::JobMove { .. })),
        "{:?}",
        co.carried
    );
    let r = replay(cfg(), T0, co.events());
    let positions: Vec<(u64, u32)> = r.jobs.values().map(|j| (j.id, r.position(j))).collect();
    assert_eq!(positions, vec![(1, 3), (2, 1), (3, 2), (4, 4)]);
}

#[test]
fn forgotten_elements_of_a_live_array_stay_gone() {
    let (mut s, mut log) = started_core(cfg(), 1);
    let (arr, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-4]"))
        .expect("submit");
    // Element 4 stays pending (stopped) all along.
    s.stop(T0, &alice(), (arr, 4)).expect("stop");
    s.schedule(T0);
    let end = |s: &mut Sched, now: Millis, idx: u32, exit: i32| {
        report(
            s,
            now,
            (arr, idx),
            1,
            ReportKind::Finished {
                exit_status: exit,
                usage: Usage::default(),
                term_reason: String::new(),
                post_exec: None,
            },
        )
    };
    let week = (GONE_KEEP_SECS + 10) * 1000;
    let clean = 3_700_000;
    end(&mut s, T0, 1, 0);
    let t1 = T0 + clean;
    hosts_up(&mut s, t1);
    s.tick(t1);
    // Element 2 ends a week after element 1 was cleaned: cleaning it forgets element 1.
    let t2 = t1 + week;
    end(&mut s, t2, 2, 256);
    let t3 = t2 + clean;
    hosts_up(&mut s, t3);
    s.tick(t3);
    log.extend(logged(&s.take_effects()));
    assert!(s.gone.contains_key(&(arr, 2)) && !s.gone.contains_key(&(arr, 1)));
    check_switch(&s, &log, t3, "one element forgotten");
    // The same a week later again with element 3.
    let t4 = t3 + week;
    end(&mut s, t4, 3, 0);
    let t5 = t4 + clean;
    hosts_up(&mut s, t5);
    s.tick(t5);
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.gone.keys().copied().collect::<Vec<_>>(), vec![(arr, 3)]);
    assert_eq!(s.jobs.keys().copied().collect::<Vec<_>>(), vec![(arr, 4)]);
    let co = check_switch(&s, &log, t5, "two elements forgotten");
    // The forgotten elements are never pending again.
    let r = replay(cfg(), t5, co.events());
    assert_eq!(r.jobs.keys().copied().collect::<Vec<_>>(), vec![(arr, 4)]);
}

/// States only a log written by someone else (or an older Basalt) leads to: the switch
/// must rebuild them too, since it rebuilds whatever `on_event` produced.
#[test]
fn states_from_foreign_logs_survive_the_switch() {
    let (mut s, mut log) = started_core(cfg(), 1);
    for i in 0..5 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    log.extend(logged(&s.take_effects()));
    let t = secs(T0);
    let status = |key: JobKey, st: u32, exit_status: i32| Event::JobStatus {
        time: t + 5,
        key,
        status: st,
        reasons: 0,
        subreasons: 0,
        cpu_time: 0.25,
        end_time: 0,
        usage: None,
        exit_status,
        term_reason: String::new(),
    };
    let kill = |key: JobKey, user: &str, signal: &str| Event::JobSignal {
        time: t + 6,
        key,
        uid: 0,
        user: user.into(),
        signal: signal.into(),
    };
    let start = |key: JobKey| Event::JobStart {
        time: t + 1,
        key,
        hosts: vec!["hostA".into()],
        effective_res_req: String::new(),
    };
    let foreign = vec![
        // A job that exited with no term reason, and a kill logged after it.
        start((1, 0)),
        status((1, 0), status::EXIT, 256),
        kill((1, 0), "admin", "KILL"),
        // bkill -d, then a requeue and a new dispatch (which clears the kill order).
        start((2, 0)),
        kill((2, 0), "alice", "KILL_DONE"),
        status((2, 0), status::PEND, 0),
        start((2, 0)),
        // Executed, requeued, started again and accepted.
        start((3, 0)),
        Event::JobExecute {
            time: t + 2,
            key: (3, 0),
            exec_uid: 1000,
            exec_user: "alice".into(),
            exec_home: "/home/alice".into(),
            exec_cwd: "/tmp".into(),
            pid: 0,
        },
        status((3, 0), status::PEND, 0),
        // A finish reported with an end time of its own.
        start((4, 0)),
        Event::JobStatus {
            time: t + 5,
            key: (4, 0),
            status: status::DONE,
            reasons: 0,
            subreasons: 0,
            cpu_time: 1.0,
            end_time: t + 3,
            usage: None,
            exit_status: 0,
            term_reason: String::new(),
        },
        // Dispatched to no host (a record without execution hosts), accepted, finished.
        Event::JobStart {
            time: t + 1,
            key: (5, 0),
            hosts: vec![],
            effective_res_req: String::new(),
        },
        Event::JobStartAccept {
            time: t + 2,
            key: (5, 0),
            pid: 77,
            pgid: 77,
        },
        status((5, 0), status::DONE, 0),
    ];
    for e in &foreign {
        s.on_event(e);
    }
    log.extend(foreign);
    assert!(s.jobs[&(1, 0)].term_reason.is_empty() && s.jobs[&(1, 0)].kill_ordered.is_some());
    assert!(s.jobs[&(2, 0)].kill_as_done && s.jobs[&(2, 0)].kill_ordered.is_none());
    assert_eq!(s.jobs[&(3, 0)].exec_user, "alice");
    check_switch(&s, &log, T0 + 10_000, "foreign log");
}

// ------------------------------------------------------------------ random operations

/// xorshift64*: a tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        if v.is_empty() {
            None
        } else {
            v.get(self.below(v.len() as u64) as usize)
        }
    }
}

/// One random case: a live core, every event it logged, and the current log file (what
/// the last switch wrote, then every event since).
struct Case {
    rng: Rng,
    s: Sched,
    now: Millis,
    history: Vec<Event>,
    file: Vec<Event>,
    report_seq: u64,
    switches: u32,
    ctx: String,
}

impl Case {
    fn new(seed: u64) -> Case {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut c = cfg3();
        c.max_job_num = 1 + rng.below(6) as u32;
        if rng.chance(30) {
            c.max_jobid = 12 + rng.below(10) as u32;
        }
        if rng.chance(50) {
            c.queues[0].ujob_limit = Some(3);
        }
        if rng.chance(30) {
            c.queues[1].rerunnable = true;
        }
        let (s, history) = started_core(c, 1 + rng.below(3) as u32);
        let file = history.clone();
        Case {
            rng,
            s,
            now: T0,
            history,
            file,
            report_seq: 0,
            switches: 0,
            ctx: format!("seed {seed}"),
        }
    }

    fn caller(&mut self, owner: &str) -> Caller {
        match (self.rng.below(4), owner) {
            (0, _) => admin(),
            (_, "bob") => bob(),
            _ => alice(),
        }
    }

    fn jobs_where(&self, f: impl Fn(&Job) -> bool) -> Vec<JobKey> {
        self.s
            .jobs
            .values()
            .filter(|j| f(j))
            .map(|j| j.key())
            .collect()
    }

    fn submission(&mut self) -> (Caller, Submission) {
        let caller = if self.rng.chance(50) { alice() } else { bob() };
        let mut sub = cmd(&format!("cmd{}", self.rng.below(100)));
        sub.queue = ["", "normal", "high"][self.rng.below(3) as usize].into();
        if self.rng.chance(10) {
            sub.options2 |= sub2::HOLD;
        }
        match self.rng.below(10) {
            0 | 1 => {
                let n = 1 + self.rng.below(5);
                sub.job_name = if self.rng.chance(50) {
                    format!("arr[1-{n}]%{}", 1 + self.rng.below(2)).into()
                } else {
                    format!("arr[1-{n}]").into()
                };
            }
            2 | 3 => sub.job_name = ["first", "second", "third"][self.rng.below(3) as usize].into(),
            _ => {}
        }
        if self.rng.chance(20) {
            let id = 1 + self.rng.below(self.s.last_job_id.max(1));
            sub.depend_cond = match self.rng.below(5) {
                0 => format!("done({id})").into(),
                1 => format!("ended({id})").into(),
                2 => format!("exit({id}) || started(first)").into(),
                3 => "done(arr) && ended(second)".into(),
                _ => format!("numdone({id}, *) || ended(arr[1])").into(),
            };
        }
        if self.rng.chance(10) {
            sub.options |= basalt_core::job::sub::EXCLUSIVE;
        }
        if self.rng.chance(30) {
            sub.options |= basalt_core::job::sub::RERUNNABLE;
        }
        if self.rng.chance(10) {
            sub.num_processors = 2;
            sub.res_req = "span[hosts=1]".into();
        }
        if self.rng.chance(5) {
            sub.asked_hosts = vec!["hostB".into()];
        }
        (caller, sub)
    }

    fn step(&mut self) {
        let now = self.now;
        let r = self.rng.below(100);
        match r {
            0..=24 => {
                let (caller, sub) = self.submission();
                let _ = self.s.submit(now, &caller, sub);
            }
            25..=36 => {
                if self.rng.chance(80) {
                    hosts_up(&mut self.s, now);
                }
                self.s.schedule(now);
            }
            37..=44 => {
                let keys = self.jobs_where(|j| j.state == JobState::Run && j.pid == 0);
                if let Some(&key) = self.rng.pick(&keys) {
                    let attempt = self.s.jobs[&key].attempt;
                    let pid = 1000 + key.0 as u32 * 10 + key.1;
                    self.s.dispatch_accepted(now, key, attempt, pid, pid);
                }
            }
            45..=59 => {
                // Mostly jobs sbatchd has answered for; some reports overtake the answer.
                let keys = if self.rng.chance(85) {
                    self.jobs_where(|j| j.state.is_started() && j.pid != 0)
                } else {
                    self.jobs_where(|j| j.state.is_started())
                };
                if let Some(&key) = self.rng.pick(&keys) {
                    self.report_seq += 1;
                    let kind = match self.rng.below(6) {
                        0 => ReportKind::Executing {
                            exec_uid: 1000,
                            exec_user: self.s.jobs[&key].sub.user.to_string(),
                            exec_home: "/home/x".into(),
                            exec_cwd: "/tmp".into(),
                            pid: if self.rng.chance(80) {
                                self.s.jobs[&key].pid
                            } else {
                                0
                            },
                        },
                        1 => ReportKind::State {
                            state: status::SSUSP,
                            reasons: susp::LOAD_REASON,
                            subreasons: self.rng.below(3) as u32,
                        },
                        2 => ReportKind::State {
                            state: status::USUSP,
                            reasons: susp::USER_STOP | susp::MBD_LOCK,
                            subreasons: 0,
                        },
                        3 => ReportKind::State {
                            state: status::RUN,
                            reasons: susp::USER_RESUME,
                            subreasons: 0,
                        },
                        _ => ReportKind::Finished {
                            exit_status: [0, 256, 33280][self.rng.below(3) as usize],
                            usage: Usage {
                                utime: self.rng.below(10) as f64,
                                stime: 0.5,
                                max_mem_kb: self.rng.below(5000),
                                avg_mem_kb: 100,
                                ..Default::default()
                            },
                            term_reason: if self.rng.chance(20) {
                                "TERM_RUNLIMIT".into()
                            } else {
                                String::new()
                            },
                            post_exec: None,
                        },
                    };
                    let seq = self.report_seq;
                    report(&mut self.s, now, key, seq, kind);
                }
            }
            60..=61 => {
                let keys = self.jobs_where(|j| j.state == JobState::Run && j.pid == 0);
                if let Some(&key) = self.rng.pick(&keys) {
                    let (attempt, host) = {
                        let j = &self.s.jobs[&key];
                        (j.attempt, j.hosts[0].clone())
                    };
                    if self.rng.chance(70) {
                        self.s.dispatch_failed(now, key, attempt, &host);
                    } else {
                        self.s.start_failed(now, key, attempt);
                    }
                }
            }
            62..=67 => {
                let keys = self.jobs_where(|j| !j.state.is_finished());
                if let Some(&key) = self.rng.pick(&keys) {
                    let owner = self.s.jobs[&key].sub.user.clone();
                    let caller = self.caller(&owner);
                    let (remove, done) = (self.rng.chance(20), self.rng.chance(20));
                    let _ = self.s.kill(now, &caller, key, remove, done);
                }
            }
            68..=73 => {
                let keys = self.jobs_where(|j| !j.state.is_finished());
                if let Some(&key) = self.rng.pick(&keys) {
                    let owner = self.s.jobs[&key].sub.user.clone();
                    let caller = self.caller(&owner);
                    let _ = if self.rng.chance(50) {
                        self.s.stop(now, &caller, key)
                    } else {
                        self.s.resume(now, &caller, key)
                    };
                }
            }
            74..=77 => {
                let keys = self.jobs_where(|j| !j.state.is_finished());
                if let Some(&key) = self.rng.pick(&keys) {
                    let owner = self.s.jobs[&key].sub.user.clone();
                    let caller = self.caller(&owner);
                    let q = ["normal", "high"][self.rng.below(2) as usize];
                    let _ = self.s.switch(now, &caller, key, q);
                }
            }
            78..=82 => {
                let keys = self.jobs_where(|j| j.state.is_pending());
                if let Some(&key) = self.rng.pick(&keys) {
                    let owner = self.s.jobs[&key].sub.user.clone();
                    let caller = self.caller(&owner);
                    let pos = 1 + self.rng.below(4) as u32;
                    let bottom = self.rng.chance(50);
                    let _ = self.s.move_job(now, &caller, key, pos, bottom);
                }
            }
            83..=84 => {
                let keys = self.jobs_where(|j| j.state.is_pending());
                if let Some(&key) = self.rng.pick(&keys) {
                    let h = ["hostA", "hostB", "hostC"][self.rng.below(3) as usize];
                    let _ = self.s.force(now, &admin(), key, &[h.into()], true);
                }
            }
            85..=87 => {
                let q = ["normal", "high"][self.rng.below(2) as usize];
                let op = 1 + self.rng.below(4) as u32;
                let msg = ["", "maintenance", "back soon"][self.rng.below(3) as usize];
                let _ = self.s.queue_ctl(now, &admin(), op, q, msg);
            }
            88..=89 => {
                let h = ["hostA", "hostB", "hostC"][self.rng.below(3) as usize];
                let op = 1 + self.rng.below(2) as u32;
                let msg = ["", "disk", "reboot"][self.rng.below(3) as usize];
                let _ = self.s.host_ctl(now, &admin(), op, h, msg);
            }
            90..=97 => {
                let step = [1_000, 600_000, 3_700_000, (GONE_KEEP_SECS + 60) * 1000]
                    [self.rng.below(4) as usize];
                self.now += step;
                if self.rng.chance(90) {
                    hosts_up(&mut self.s, self.now);
                }
                self.s.tick(self.now);
            }
            _ => self.switch(),
        }
        crate::fsm_tests::check_counts(&self.s, &self.ctx);
        let evs = logged(&self.s.take_effects());
        self.history.extend(evs.iter().cloned());
        self.file.extend(evs);
        if self.s.switch_due() {
            self.switch();
        }
    }

    /// Switch the log as mbatchd does, checking the new file first.
    fn switch(&mut self) {
        self.switches += 1;
        let ctx = format!("{}, switch {}", self.ctx, self.switches);
        // The current file rebuilds the core (a switch of a switched log included).
        let from_file = replay(self.s.cfg.clone(), self.now, &self.file);
        assert_same(&self.s, &from_file, &format!("{ctx}: live vs current file"));
        let co = check_switch(&self.s, &self.history, self.now, &ctx);
        for e in &co.appended {
            self.s.on_event(e);
        }
        self.history.extend(co.appended.iter().cloned());
        self.file = co.events().cloned().collect();
    }
}

#[test]
fn random_operations_survive_switching() {
    let mut switches = 0;
    let mut cleaned = 0;
    let mut reruns = 0;
    for seed in 1..=240u64 {
        let mut case = Case::new(seed);
        let steps = 40 + case.rng.below(120);
        for _ in 0..steps {
            case.step();
        }
        cleaned += case.s.gone.len();
        reruns += case
            .history
            .iter()
            .filter(|e| matches!(e, Event::JobStatus { status: 1, reasons, .. } if *reasons == pend::REQUEUED))
            .count();
        case.switch();
        switches += case.switches;
    }
    // The cases did reach the states that matter.
    assert!(switches > 400, "{switches} switches");
    assert!(cleaned > 100, "{cleaned} cleaned jobs remembered");
    assert!(reruns > 20, "{reruns} jobs rerun after their host was lost");
}

/// Issue 18: the per-queue pending order and the slot counters the FSM keeps equal a
/// recount from scratch after random submits, starts, suspensions, moves, switches,
/// kills, host losses, cleans and log switches (checked after every step, see
/// `Case::step`).
#[test]
fn incremental_counters_match_a_recount_after_random_operations() {
    for seed in 1000..=1060u64 {
        let mut case = Case::new(seed);
        for _ in 0..(60 + case.rng.below(200)) {
            case.step();
        }
        case.switch();
        crate::fsm_tests::check_counts(&case.s, &case.ctx);
    }
}

/// Issue 30 item 8: after a log switch, cleaned jobs are not carried as stub records —
/// lsb.events does not grow with every job cleaned in the last week — except those a
/// dependency of a job still waiting names (so `-w` keeps working across the switch).
#[test]
fn cleaned_jobs_are_carried_only_when_a_dependency_names_them() {
    let (mut s, mut log) = started_core(cfg(), 1);
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    // 20 jobs end and are cleaned; job 21 waits for job 5 and for "named".
    let mut ids = Vec::new();
    for i in 0..20 {
        let sub = if i == 7 {
            named("n", "named")
        } else {
            cmd(&format!("j{i}"))
        };
        ids.push(s.submit(T0, &alice(), sub).expect("submit").0);
    }
    for id in &ids {
        s.kill(T0, &alice(), (*id, 0), false, false).expect("kill");
    }
    let (waiter, ..) = s
        .submit(T0, &alice(), dep("w", "done(5) || ended(named)"))
        .expect("submit");
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.schedule(T0);
    let t1 = T0 + 3_700_000;
    hosts_up(&mut s, t1);
    s.tick(t1);
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.gone.len(), 20);
    assert_eq!(
        s.gone_needed().into_iter().collect::<Vec<_>>(),
        vec![(5, 0), (8, 0)]
    );
    let co = check_switch(&s, &log, t1, "cleaned jobs");
    let carried_ids: BTreeSet<u64> = co
        .carried
        .iter()
        .filter_map(|e| match e {
            Event::JobNew { job_id, .. } => Some(*job_id),
            _ => None,
        })
        .collect();
    assert_eq!(carried_ids, BTreeSet::from([5, 8, waiter]));
    // The live core forgets the others when it applies the LOG_SWITCH, like a replay.
    for ev in &co.appended {
        s.on_event(ev);
    }
    assert_eq!(
        s.gone.keys().copied().collect::<Vec<_>>(),
        vec![(5, 0), (8, 0)]
    );
    assert_eq!(s.dependency(&s.jobs[&(waiter, 0)]), Some(Tri::Yes));
}
