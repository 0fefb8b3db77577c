//! Unit tests of the core on a manual clock.

use super::*;

/// Exact effect lists: [`expect::assert_effects`].
pub(crate) mod expect;
use expect::assert_effects;

pub(crate) fn queue(name: &str, prio: u32) -> Queue {
    Queue {
        name: name.into(),
        description: String::new(),
        priority: prio,
        nice: None,
        open: true,
        active: true,
        message: String::new(),
        qjob_limit: None,
        ujob_limit: None,
        hjob_limit: None,
        pjob_limit: None,
        hosts: vec![],
        users_all: true,
        users: vec![],
        users_except: vec![],
        administrators: vec![],
        res_req: String::new(),
        // Accepts bsub -x, like the embedded default configuration's queues.
        exclusive: true,
        slot_reserve: None,
        backfill: false,
        fairshare: String::new(),
        user_shares: Vec::new(),
        fs_factors: Default::default(),
        slot_pool: String::new(),
        slot_share: 0,
        preempt: Default::default(),
        preemption: String::new(),
        terminate_on_preempt: false,
        max_job_preempt: None,
        no_preempt_run_time: None,
        no_preempt_finish_time: None,
        rerunnable: false,
        interactive: String::new(),
        load_sched: BTreeMap::new(),
        load_stop: BTreeMap::new(),
        job_controls: BTreeMap::new(),
        pre_exec: String::new(),
        post_exec: String::new(),
        job_starter: String::new(),
        host_pref: BTreeMap::new(),
        others_pref: 0,
        pre_post_exec_user: String::new(),
        success_exit_values: Vec::new(),
        requeue: Default::default(),
        preexec_retry_limit: None,
        preexec_retry_exit: false,
        max_job_requeue: None,
        chkpnt: None,
        mig_minutes: None,
        job_accept_interval: None,
        settings: BTreeMap::new(),
        rlimits: [None; 11],
        run_window: String::new(),
        dispatch_window: String::new(),
        resume_cond: None,
        run_windows: None,
        dispatch_windows: None,
        shown: Default::default(),
    }
}

pub(crate) fn host(name: &str, rank: usize) -> Host {
    Host {
        name: name.into(),
        mxj: None,
        mxj_ncpus: true,
        jl_u: None,
        mig_minutes: None,
        closed_adm: false,
        message: String::new(),
        ncpus: 0,
        cpu_factor: 1.0,
        lim: LimStatus::Unknown,
        lim_locked: false,
        sbd_seen: 0,
        sbd_failed: false,
        load: BTreeMap::new(),
        last_dispatch: 0,
        dispatch_window: None,
        load_sched: BTreeMap::new(),
        load_stop: BTreeMap::new(),
        last_resume: 0,
        thresholds_ok: Vec::new(),
        rank,
        statics: basalt_config::select::HostValues {
            name: name.into(),
            ..Default::default()
        },
        reserved: BTreeMap::new(),
        rsv_slots: 0,
        lim_static: None,
    }
}

pub(crate) fn cfg() -> SchedConfig {
    SchedConfig {
        cluster: "c".into(),
        admins: vec!["admin".into()],
        default_queue: "normal".into(),
        default_project: "default".into(),
        clean_period_secs: 3600,
        max_job_num: 1000,
        job_accept_interval: 0,
        mbd_sleep_time_secs: 10,
        sbd_sleep_time_secs: 7,
        job_terminate_interval_secs: 10,
        max_jobid: 999_999,
        max_job_array_size: 1000,
        hello_interval_secs: 5,
        max_dispatch_in_flight: 3000,
        host_lost_grace_secs: 60,
        requeue_delay_secs: 10,
        queues: vec![queue("normal", 30), queue("high", 40)],
        hosts: vec![host("hostA", 0), host("hostB", 1)],
        res_kinds: BTreeMap::new(),
        res_increasing: Vec::new(),
        res_table: Vec::new(),
        unit_mb: 1.0,
        reserve_per_slot: false,
        reserve_methods: BTreeMap::new(),
        shared_flags: BTreeMap::new(),
        shared: Vec::new(),
        limits: Vec::new(),
        user_rows: BTreeMap::new(),
        max_pend_jobs: None,
        user_pend_limits: Vec::new(),
        max_pend_slots: None,
        user_pend_slot_limits: Vec::new(),
        sub_try_interval: 60,
        host_groups: BTreeMap::new(),
        mod_all_jobs: false,
        include_postproc: false,
        host_group_admins: BTreeMap::new(),
        postproc_timeout_mins: None,
        group_admins: BTreeMap::new(),
        user_groups: BTreeMap::new(),
        group_jl_p: Vec::new(),
        apps: BTreeMap::new(),
        group_shares: BTreeMap::new(),
        host_partitions: Vec::new(),
        fs_factors: Default::default(),
        mc: Default::default(),
        chkpnt_method: "default".into(),
        preempt: crate::PreemptParams {
            max_preempt_jobs: 12,
            wait_time_secs: 300,
            ..Default::default()
        },
    }
}

pub(crate) const T0: Millis = 1_800_000_000_000;

pub(crate) fn alice() -> Caller {
    Caller {
        uid: 1000,
        user: "alice".into(),
        host: "hostA".into(),
    }
}

pub(crate) fn bob() -> Caller {
    Caller {
        uid: 1001,
        user: "bob".into(),
        host: "hostA".into(),
    }
}

pub(crate) fn admin() -> Caller {
    Caller {
        uid: 1002,
        user: "admin".into(),
        host: "hostA".into(),
    }
}

pub(crate) fn cmd(c: &str) -> Submission {
    Submission {
        command: c.into(),
        rlimits: [-1; 11].into(),
        ..Default::default()
    }
}

/// A core with both hosts up, 2 CPUs each, started.
pub(crate) fn up() -> Sched {
    up_with(cfg())
}

/// A core of configuration `c` with every host up, 2 CPUs each, started.
pub(crate) fn up_with(c: SchedConfig) -> Sched {
    let names: Vec<String> = c.hosts.iter().map(|h| h.name.clone()).collect();
    let first = names.first().cloned().unwrap_or_default();
    let mut s = Sched::new(c, T0);
    for h in &names {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, &first);
    s.take_effects();
    s
}

/// Every host's sbatchd says hello at `now`, listing the jobs it runs (the clock can
/// move on without the hosts going unreachable).
pub(crate) fn hellos(s: &mut Sched, now: Millis) {
    let names: Vec<String> = s.hosts.iter().map(|h| h.name.clone()).collect();
    for h in names {
        let listed: Vec<HostJob> = s
            .jobs
            .values()
            .filter(|j| j.state == JobState::Run && j.hosts.first().is_some_and(|f| *f == h))
            .map(|j| HostJob {
                key: j.key(),
                attempt: j.attempt,
                state: basalt_core::job::status::RUN,
                pid: 100,
                pgid: 100,
            })
            .collect();
        s.sbd_hello(now, &h, &listed);
    }
}

pub(crate) fn dispatches(effects: &[Effect]) -> Vec<(JobKey, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { key, host, .. } => Some((*key, host.clone())),
            _ => None,
        })
        .collect()
}

/// The jobs whose accounting record `effects` ask for, in order.
pub(crate) fn acct_of(effects: &[Effect]) -> Vec<JobKey> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Acct(j) => Some(j.key()),
            _ => None,
        })
        .collect()
}

pub(crate) fn logged(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Log(ev) => Some(ev.clone()),
            _ => None,
        })
        .collect()
}

/// sbatchd's next report of the job's current attempt (from its first host).
pub(crate) fn report_next(s: &mut Sched, now: Millis, key: JobKey, kind: ReportKind) -> Ack {
    let (attempt, host) = {
        let j = &s.jobs[&key];
        (j.attempt, j.hosts.first().cloned().unwrap_or_default())
    };
    let seq = s.jobs[&key].last_seq + 1;
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

pub(crate) fn finish(s: &mut Sched, key: JobKey, exit: i32, seq: u64) -> Ack {
    finish_at(s, key, exit, seq, T0 + 5000)
}

/// Job `key` finished with `exit` at `now` (its host's report number `seq`).
pub(crate) fn finish_at(s: &mut Sched, key: JobKey, exit: i32, seq: u64, now: Millis) -> Ack {
    let (attempt, host) = {
        let j = &s.jobs[&key];
        (j.attempt, j.hosts[0].clone())
    };
    s.report(
        now,
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
                post_exec: None,
            },
        },
    )
}

#[test]
fn submit_logs_job_new_and_dispatches_at_once() {
    let mut s = up();
    let (id, q, default) = s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    assert_eq!((id, q.as_str(), default), (1, "normal", true));
    assert_effects(&s.take_effects(), &["Log JOB_NEW 1 @0"]);
    s.schedule(T0);
    // The JOB_START is logged before the dispatch effect.
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    assert_eq!(s.jobs[&(1, 0)].attempt, 1);
}

/// Issue 51: a pass due for submissions only visits the new jobs — not the thousand
/// pending in an inactive queue, which could not start before and still cannot — and
/// the new job starts; after any other event the next pass visits them all again.
#[test]
fn a_pass_after_submissions_only_visits_the_new_jobs() {
    let mut s = up();
    s.queue_ctl(T0, &admin(), 4, "high", "hold on")
        .expect("qinact");
    let mut held = cmd("sleep 1");
    held.queue = "high".into();
    for _ in 0..1000 {
        s.submit(T0, &alice(), held.clone()).expect("submit");
    }
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.last_visits, 1000);
    let (id, _, _) = s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    s.schedule(T0);
    assert_eq!(s.last_visits, 1);
    assert_eq!(id, 1001);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1001 @0",
            "Log JOB_START 1001 @0 on hostA",
            "Dispatch 1001 -> hostA attempt 1",
        ],
    );
    assert_eq!(
        s.jobs[&(1, 0)]
            .pend_reasons
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![pend::QUEUE_INACT]
    );
    // The job ends: its slot is free again, a full pass — but the thousand already
    // have the only reason their inactive queue can give them.
    finish(&mut s, (id, 0), 0, 1);
    s.schedule(T0 + 1000);
    assert_eq!(s.last_visits, 0);
}

fn reasons_of(s: &Sched, key: JobKey) -> Vec<u32> {
    s.jobs[&key].pend_reasons.keys().copied().collect()
}

/// Submits `n` jobs to the queue `high`, made inactive first, and gives them their reason.
fn held_in_inactive_queue(n: usize) -> Sched {
    let mut s = up();
    s.queue_ctl(T0, &admin(), 4, "high", "hold on")
        .expect("qinact");
    let mut held = cmd("sleep 1");
    held.queue = "high".into();
    for _ in 0..n {
        s.submit(T0, &alice(), held.clone()).expect("submit");
    }
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.last_visits, n);
    s
}

/// Issue 51: the jobs of an inactive queue that have their reason are not visited by a
/// full pass again while the queue stays inactive (a million of them took half a second
/// of every pass), and keep their reason.
#[test]
fn a_full_pass_skips_an_inactive_queue_whose_jobs_have_their_reason() {
    let mut s = held_in_inactive_queue(500);
    let (id, _, _) = s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    finish(&mut s, (id, 0), 0, 1);
    s.schedule(T0 + 1000);
    assert_eq!(s.last_visits, 0);
    assert_eq!(reasons_of(&s, (1, 0)), vec![pend::QUEUE_INACT]);
    assert_eq!(reasons_of(&s, (500, 0)), vec![pend::QUEUE_INACT]);
}

/// A job that enters the inactive queue (a submission, a `bswitch`) is visited and gets
/// its reason; the others are not visited again.
#[test]
fn a_job_entering_an_inactive_queue_gets_its_reason_alone() {
    let mut s = held_in_inactive_queue(500);
    let mut held = cmd("sleep 1");
    held.queue = "high".into();
    let (new, _, _) = s.submit(T0, &alice(), held).expect("submit");
    // A job pending in another queue, switched into the inactive one.
    let mut wide = cmd("sleep 1");
    wide.num_processors = 64;
    let (moved, _, _) = s.submit(T0, &alice(), wide).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert!(!reasons_of(&s, (moved, 0)).contains(&pend::QUEUE_INACT));
    s.switch(T0, &alice(), (moved, 0), "high").expect("switch");
    s.schedule(T0 + 1000);
    s.take_effects();
    assert_eq!(reasons_of(&s, (new, 0)), vec![pend::QUEUE_INACT]);
    assert_eq!(reasons_of(&s, (moved, 0)), vec![pend::QUEUE_INACT]);
    // Only the switched job was visited: the submitted one had its reason from the
    // pass after its submission.
    assert_eq!(s.last_visits, 1);
}

/// More jobs touched in a settled inactive queue than are kept one by one: the pass
/// walks the queue (and still visits only the jobs without their reason).
#[test]
fn an_inactive_queue_touched_past_the_kept_keys_is_walked() {
    let mut s = held_in_inactive_queue(3);
    for _ in 0..=crate::counts::Touched::MAX {
        s.counts.touch("high", (1, 0));
    }
    assert!(s.counts.pending_touched["high"].overflow);
    let mut held = cmd("sleep 1");
    held.queue = "high".into();
    let (id, _, _) = s.submit(T0, &alice(), held).expect("submit");
    s.full_due = true;
    s.schedule(T0 + 1000);
    assert_eq!(s.last_visits, 1);
    assert_eq!(reasons_of(&s, (id, 0)), vec![pend::QUEUE_INACT]);
    // Settled again, with nothing touched since.
    assert_eq!(
        s.counts.pending_touched["high"],
        crate::counts::Touched::default()
    );
}

/// A queue active again has every job visited (and dispatched); inactive once more,
/// every job gets the reason again.
#[test]
fn a_queue_active_again_is_walked_again() {
    let mut s = held_in_inactive_queue(50);
    s.queue_ctl(T0, &admin(), 3, "high", "").expect("qact");
    s.schedule(T0 + 1000);
    let eff = s.take_effects();
    assert!(!dispatches(&eff).is_empty());
    assert!(!reasons_of(&s, (50, 0)).contains(&pend::QUEUE_INACT));
    s.queue_ctl(T0, &admin(), 4, "high", "again")
        .expect("qinact");
    s.schedule(T0 + 2000);
    s.take_effects();
    assert_eq!(reasons_of(&s, (50, 0)), vec![pend::QUEUE_INACT]);
}

/// Seed 001 "Interactive Batch Job Support": "You can configure a queue to be
/// interactive only, batch only, or both interactive and batch" (INTERACTIVE = ONLY, NO,
/// YES).
#[test]
fn a_queue_is_interactive_only_batch_only_or_both() {
    let mut c = cfg();
    c.queues[0].interactive = "NO".into();
    c.queues[1].interactive = "ONLY".into();
    let mut s = Sched::new(c, T0);
    let interactive = |q: &str| {
        let mut sub = cmd("x");
        sub.queue = q.into();
        sub.options |= basalt_core::job::sub::INTERACTIVE;
        sub
    };
    let batch = |q: &str| {
        let mut sub = cmd("x");
        sub.queue = q.into();
        sub
    };
    assert_eq!(
        s.submit(T0, &alice(), interactive("normal")),
        Err(SchedError::NoInteractive)
    );
    assert!(s.submit(T0, &alice(), batch("normal")).is_ok());
    assert_eq!(
        s.submit(T0, &alice(), batch("high")),
        Err(SchedError::OnlyInteractive)
    );
    assert!(s.submit(T0, &alice(), interactive("high")).is_ok());
    // YES (or unset): both.
    let mut s = up();
    assert!(s.submit(T0, &alice(), interactive("normal")).is_ok());
    assert!(s.submit(T0, &alice(), batch("normal")).is_ok());
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

/// FCFS: six jobs on 2 hosts x 2 slots, the first four start in submission order
/// (hostA filled first); when job 1 ends, job 5 (not 6) takes its slot.
#[test]
fn slots_limit_dispatch_and_free_slots_are_reused() {
    let mut s = up();
    for i in 0..6 {
        s.submit(T0, &alice(), cmd(&format!("job{i}")))
            .expect("submit");
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
        ],
    );
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
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @5 DONE end@5 usage",
            "Acct 1 DONE on hostA",
        ],
    );
    s.schedule(T0 + 6000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 5 @6 on hostA",
            "Dispatch 5 -> hostA attempt 1",
        ],
    );
}

/// Queue priority: with one host open (2 slots), the job of the higher-priority queue
/// starts first though submitted last, then the first job of the lower one; the other
/// two wait.
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
    assert_eq!(hid, 4);
    s.take_effects();
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 4 @0 on hostA",
            "Dispatch 4 -> hostA attempt 1",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
}

#[test]
fn exit_code_gives_exit_and_acct() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("false")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    finish(&mut s, (1, 0), 256, 1);
    let eff = s.take_effects();
    assert_eq!(acct_of(&eff), [(1, 0)]);
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
    assert_effects(
        &s.take_effects(),
        &["Log JOB_SIGNAL 1 @0 STOP by alice(1000)"],
    );
    s.dispatch_accepted(T0, (1, 0), 1, 100, 100);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START_ACCEPT 1 @0 pid=100 pgid=100",
            "Signal 1 attempt 1 on hostA Stop USUSP USER_STOP|MBD_LOCK",
        ],
    );
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
    assert_effects(&s.take_effects(), &["Log JOB_STATUS 1 @0 USUSP USER_STOP"]);
    s.resume(T0, &alice(), (1, 0)).expect("resume");
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Ssusp);
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @0 SSUSP USER_RESUME",
            "Signal 1 attempt 1 on hostA Resume",
        ],
    );
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
    assert_effects(&s.take_effects(), &["Log JOB_NEW 1 @0"]);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Psusp);
    s.resume(T0, &alice(), (1, 0)).expect("resume");
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @0 PEND",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
}

/// Issue 50 item 13: `bresume` of a pending or running job is refused with LSF's `Job
/// has not been suspended` (it said nothing and "resumed" it), and changes nothing.
#[test]
fn bresume_of_a_job_not_suspended_is_refused() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Pend);
    assert_eq!(
        s.resume(T0, &alice(), (1, 0)),
        Err(SchedError::NotSuspended)
    );
    assert_eq!(
        SchedError::NotSuspended.to_string(),
        "Job has not been suspended"
    );
    s.schedule(T0);
    s.dispatch_accepted(T0, (1, 0), 1, 100, 100);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    assert_eq!(
        s.resume(T0, &alice(), (1, 0)),
        Err(SchedError::NotSuspended)
    );
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    assert!(s.take_effects().is_empty());
}

/// Issue 50 item 10: a host LIM says is locked (`lsadmin limlock`, lockU) is
/// `closed_Lock` and gets no job (`Host is locked`) until it is unlocked.
#[test]
fn a_host_locked_in_lim_gets_no_job_until_it_is_unlocked() {
    let mut s = up();
    let names: Vec<String> = s.hosts.iter().map(|h| h.name.clone()).collect();
    for h in &names {
        s.lim_lock(h, true);
    }
    let h = s.hosts[0].clone();
    assert_eq!(s.host_status(&h).long(), "closed_Lock");
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    assert!(dispatches(&s.take_effects()).is_empty());
    assert!(
        s.jobs[&(1, 0)]
            .pend_reasons
            .contains_key(&pend::HOST_LOCKED)
    );
    s.lim_lock(&names[0], false);
    let h = s.hosts[0].clone();
    assert_eq!(s.host_status(&h), HostStatus::Ok);
    s.schedule(T0 + 1_000);
    assert_eq!(
        dispatches(&s.take_effects()),
        vec![((1, 0), names[0].clone())]
    );
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
    s.take_effects();
    s.force(T0, &admin(), (1, 0), &["hostA".into()], false)
        .expect("brun");
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_FORCE 1 @0 on [hostA] by admin(1002)",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
}

/// Issue 30 item 1: "An egroup user group opens a queue to everyone" — a group that
/// cannot be resolved must deny, never allow.
#[test]
fn an_unresolved_egroup_denies_and_never_allows() {
    use basalt_config::batch::Group;
    let g = |name: &str, members: &[&str]| Group {
        name: name.into(),
        members: members.iter().map(|m| m.to_string()).collect(),
        shares: None,
        admins: vec![],
        line: 1,
    };
    let groups = vec![
        g("egrp", &["!"]),
        g("everyone", &["all"]),
        g("team", &["carol", "egrp"]),
    ];
    let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let none = BTreeMap::new();
    let unresolved = config::expand_users(&words(&["egrp"]), &groups, &none);
    assert!(!unresolved.all, "an unresolved egroup is not everyone");
    assert!(unresolved.names.is_empty());
    let egroups = BTreeMap::from([("egrp".to_string(), words(&["bob"]))]);
    let resolved = config::expand_users(&words(&["team"]), &groups, &egroups);
    assert_eq!(
        (resolved.all, resolved.names),
        (false, words(&["bob", "carol"]))
    );
    let all = config::expand_users(&words(&["everyone"]), &groups, &none);
    assert!(all.all);
    let but = config::expand_users(&words(&["all", "~egrp"]), &groups, &egroups);
    assert_eq!((but.all, but.except), (true, words(&["bob"])));
    assert!(
        config::expand_users(&[], &groups, &none).all,
        "no USERS: everyone"
    );

    // A queue open only to an unresolved group: nobody but the administrators.
    let mut c = cfg();
    let mut q = queue("egq", 30);
    q.users_all = false;
    q.users = unresolved.names;
    c.queues.push(q);
    let mut q = queue("allbut", 30);
    q.users_except = words(&["alice"]);
    c.queues.push(q);
    let mut s = Sched::new(c, T0);
    let to = |queue: &str| Submission {
        queue: queue.into(),
        ..cmd("true")
    };
    assert_eq!(
        s.submit(T0, &alice(), to("egq")).map(|_| ()),
        Err(SchedError::UserNotInQueue)
    );
    assert!(s.submit(T0, &admin(), to("egq")).is_ok());
    assert_eq!(
        s.submit(T0, &alice(), to("allbut")).map(|_| ()),
        Err(SchedError::UserNotInQueue)
    );
    assert!(s.submit(T0, &admin(), to("allbut")).is_ok());
}

/// Issue 30 item 5: queue RUNLIMIT/CPULIMIT/MEMLIMIT/FILELIMIT/... are enforced like
/// the job-level limits: a job's own limit may not exceed the queue's maximum, and a job
/// without one runs with the queue's default (or maximum).
#[test]
fn queue_limits_are_enforced_like_job_limits() {
    let mut c = cfg();
    let mut q = queue("short", 30);
    q.settings = BTreeMap::from([
        ("RUNLIMIT".to_string(), "10 60".to_string()),
        ("MEMLIMIT".to_string(), "1000".to_string()),
        ("FILELIMIT".to_string(), "50".to_string()),
        ("CPULIMIT".to_string(), "30".to_string()),
    ]);
    q.rlimits = limits::parse(&q.settings, "KB").0;
    c.queues.push(q);
    let mut s = Sched::new(c, T0);
    let with = |run: i64, mem: i64| {
        let mut sub = Submission {
            queue: "short".into(),
            ..cmd("true")
        };
        Arc::make_mut(&mut sub.rlimits)[limits::idx::RUN] = run;
        Arc::make_mut(&mut sub.rlimits)[limits::idx::RSS] = mem;
        sub
    };
    assert_eq!(
        s.submit(T0, &alice(), with(61 * 60, -1)).map(|_| ()),
        Err(SchedError::OverLimit)
    );
    assert_eq!(
        SchedError::OverLimit.to_string(),
        "Cannot exceed queue's hard limit(s)"
    );
    assert_eq!(
        s.submit(T0, &alice(), with(-1, 2000)).map(|_| ()),
        Err(SchedError::OverLimit)
    );
    let (own, ..) = s.submit(T0, &alice(), with(20 * 60, 500)).expect("within");
    let (none, ..) = s.submit(T0, &alice(), with(-1, -1)).expect("no limits");
    let e = s.effective_rlimits(&s.jobs[&(own, 0)]);
    assert_eq!((e[limits::idx::RUN], e[limits::idx::RSS]), (1200, 500));
    let e = s.effective_rlimits(&s.jobs[&(none, 0)]);
    assert_eq!(
        (
            e[limits::idx::RUN],
            e[limits::idx::RSS],
            e[limits::idx::FSIZE],
            e[limits::idx::CPU]
        ),
        (600, 1000, 50, 1800)
    );
    // bswitch into a queue whose maximum the job exceeds is refused too.
    let (big, ..) = s.submit(T0, &alice(), cmd("true")).expect("normal");
    if let Some(j) = s.jobs.get_mut(&(big, 0)) {
        let mut sub = (*j.sub).clone();
        Arc::make_mut(&mut sub.rlimits)[limits::idx::RUN] = 7200;
        j.sub = Arc::new(sub);
    }
    assert_eq!(
        s.switch(T0, &alice(), (big, 0), "short"),
        Err(SchedError::OverLimit)
    );
}

/// Issue 30 item 5: `bsub -t`: a job still pending at its termination time never starts;
/// it ends EXIT with TERM_DEADLINE.
#[test]
fn a_job_pending_at_its_termination_time_exits() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    let mut sub = cmd("true");
    sub.term_time = secs(T0) + 60;
    let (id, ..) = s.submit(T0, &alice(), sub).expect("submit");
    s.take_effects();
    s.tick(T0 + 59_000);
    assert!(s.jobs[&(id, 0)].state.is_pending());
    s.tick(T0 + 60_000);
    let j = &s.jobs[&(id, 0)];
    assert_eq!(j.state, JobState::Exit);
    assert_eq!(j.term_reason, "TERM_DEADLINE");
}

/// Issue 30 item 7: "btop/bbot change the order `bjobs -p` lists, as they change the
/// dispatch order" — a query lists started jobs, then pending jobs in dispatch order
/// (higher-priority queue first, then position), then finished ones.
#[test]
fn btop_and_bbot_change_the_order_bjobs_lists() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    for i in 0..4 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    let listed = |s: &Sched| {
        let q = JobQuery {
            states: u32::MAX,
            ..Default::default()
        };
        s.query(&q).0.iter().map(|j| j.id).collect::<Vec<_>>()
    };
    assert_eq!(listed(&s), vec![1, 2, 3, 4]);
    s.move_job(T0, &alice(), (3, 0), 1, false).expect("btop");
    assert_eq!(listed(&s), vec![3, 1, 2, 4]);
    s.move_job(T0, &alice(), (1, 0), 1, true).expect("bbot");
    assert_eq!(listed(&s), vec![3, 2, 4, 1]);
    // A job of a higher-priority queue comes first; a started job before every pending one.
    s.switch(T0, &alice(), (4, 0), "high").expect("switch");
    assert_eq!(listed(&s), vec![4, 3, 2, 1]);
    s.force(T0, &admin(), (2, 0), &["hostA".into()], false)
        .expect("brun");
    assert_eq!(listed(&s), vec![2, 4, 3, 1]);
}

/// Issue 30 item 6, seed 000: "LSF does not suspend a job: Forced to run with brun -f" —
/// only `brun -f`; a job started with plain `brun` is suspended by load like any other.
#[test]
fn only_brun_f_exempts_a_job_from_load_suspension() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    s.submit(T0, &alice(), named("a", "plain")).expect("submit");
    s.submit(T0, &alice(), named("b", "dash_f"))
        .expect("submit");
    s.take_effects();
    s.force(T0, &admin(), (1, 0), &["hostA".into()], false)
        .expect("brun");
    s.force(T0, &admin(), (2, 0), &["hostA".into()], true)
        .expect("brun -f");
    let eff = s.take_effects();
    let forced: Vec<(JobKey, bool)> = logged(&eff)
        .iter()
        .filter_map(|e| match e {
            Event::JobForce { key, no_stop, .. } => Some((*key, *no_stop)),
            _ => None,
        })
        .collect();
    assert_eq!(forced, vec![((1, 0), false), ((2, 0), true)]);
    let j1 = &s.jobs[&(1, 0)];
    let j2 = &s.jobs[&(2, 0)];
    assert!(j1.forced && !j1.no_stop, "plain brun: suspendable");
    assert!(j2.forced && j2.no_stop, "brun -f: never suspended by load");
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
fn hellos_reconcile_lost_dispatches_and_lost_jobs() {
    // Term 1 logs three dispatches to hostA; sbatchd accepts only the first, then mbatchd
    // dies before the others are sent.
    let mut s = up();
    for i in 0..3 {
        s.submit(T0, &alice(), cmd(&format!("j{i}")))
            .expect("submit");
    }
    s.schedule(T0);
    s.kill(T0, &alice(), (3, 0), false, false).expect("kill");
    let mut log = logged(&s.take_effects());
    s.dispatch_accepted(T0, (1, 0), 1, 77, 77);
    log.extend(logged(&s.take_effects()));
    let on_a: Vec<JobKey> = s
        .jobs
        .values()
        .filter(|j| j.hosts.first().map(String::as_str) == Some("hostA"))
        .map(|j| j.key())
        .collect();
    assert!(on_a.contains(&(1, 0)), "{on_a:?}");
    // While this term's dispatches are in flight, an empty hello changes nothing.
    s.sbd_hello(T0 + 10, "hostA", &[]);
    s.sbd_hello(T0 + 20, "hostB", &[]);
    assert!(logged(&s.take_effects()).is_empty());

    // Term 2 replays the log.
    let mut r = Sched::new(cfg(), T0 + 1000);
    for ev in &log {
        r.on_event(ev);
    }
    r.start(T0 + 1000, "hostA");
    r.take_effects();
    let listed = |r: &Sched, keys: &[JobKey]| -> Vec<HostJob> {
        keys.iter()
            .map(|k| HostJob {
                key: *k,
                attempt: r.jobs[k].attempt,
                state: r.jobs[k].state.code(),
                pid: r.jobs[k].pid,
                pgid: r.jobs[k].pgid,
            })
            .collect()
    };
    // sbatchds that have only the accepted job: the never-sent dispatches go back to
    // PEND, the killed one ends.
    let l = listed(&r, &[(1, 0)]);
    r.sbd_hello(T0 + 2000, "hostA", &l);
    r.sbd_hello(T0 + 2000, "hostB", &l);
    // Missing from one hello is not enough (it may have crossed the dispatch)...
    assert_eq!(r.jobs[&(2, 0)].state, JobState::Run);
    r.sbd_hello(T0 + 2500, "hostA", &l);
    r.sbd_hello(T0 + 2500, "hostB", &l);
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Run);
    assert_eq!(r.jobs[&(2, 0)].state, JobState::Pend);
    assert_eq!(r.jobs[&(3, 0)].state, JobState::Exit);
    assert_eq!(r.jobs[&(3, 0)].term_reason, "TERM_OWNER");
    r.take_effects();
    // The accepted job missing once is not enough (a hello may cross a dispatch)...
    let h1 = r.jobs[&(1, 0)].hosts[0].clone();
    r.sbd_hello(T0 + 3000, &h1, &[]);
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Run);
    r.sbd_hello(T0 + 4000, &h1, &l);
    r.sbd_hello(T0 + 5000, &h1, &[]);
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Run);
    // ...twice in a row is: sbatchd lost it.
    r.sbd_hello(T0 + 6000, &h1, &[]);
    assert_eq!(r.jobs[&(1, 0)].state, JobState::Exit);
    assert_eq!(r.jobs[&(1, 0)].exit_status, 9);
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

pub(crate) fn named(c: &str, name: &str) -> Submission {
    let mut s = cmd(c);
    s.job_name = name.into();
    s
}

pub(crate) fn started(s: &Sched, id: u64) -> usize {
    s.jobs
        .values()
        .filter(|j| j.id == id && j.state.is_started())
        .count()
}

pub(crate) fn pend_codes(s: &Sched, key: JobKey) -> Vec<u32> {
    s.jobs[&key].pend_reasons.keys().copied().collect()
}

#[test]
fn array_submission_is_one_job_new_with_elements() {
    let mut s = up();
    let (id, _, _) = s
        .submit(T0, &alice(), named("echo", "arr[1-5]"))
        .expect("submit");
    let eff = s.take_effects();
    let news = logged(&eff)
        .iter()
        .filter(|e| matches!(e, Event::JobNew { .. }))
        .count();
    assert_eq!(news, 1);
    let keys: Vec<JobKey> = s.jobs.keys().copied().collect();
    assert_eq!(keys, (1..=5).map(|i| (id, i)).collect::<Vec<_>>());
    assert_eq!(s.jobs[&(id, 3)].display_name(), "arr[3]");
    assert_eq!(s.jobs[&(id, 3)].sub.job_name, "arr[1-5]");
    // Every element shares the submission.
    assert!(Arc::ptr_eq(&s.jobs[&(id, 1)].sub, &s.jobs[&(id, 5)].sub));
    let (id2, _, _) = s
        .submit(T0, &alice(), named("x", "b[1-9:2]"))
        .expect("submit");
    let idx: Vec<u32> = s.jobs.keys().filter(|k| k.0 == id2).map(|k| k.1).collect();
    assert_eq!(idx, vec![1, 3, 5, 7, 9]);
    let (id3, _, _) = s
        .submit(T0, &alice(), named("x", "c[1,3,5-7:2]%1"))
        .expect("submit");
    let idx: Vec<u32> = s.jobs.keys().filter(|k| k.0 == id3).map(|k| k.1).collect();
    assert_eq!(idx, vec![1, 3, 5, 7]);
    assert_eq!(s.jobs[&(id3, 5)].array_limit, Some(1));
    // A bracket that is not an index list is part of an ordinary name.
    let (id4, _, _) = s
        .submit(T0, &alice(), named("x", "rule[x]"))
        .expect("submit");
    assert_eq!(s.jobs[&(id4, 0)].display_name(), "rule[x]");
    // Queries by the array's name find its elements.
    let (found, _) = s.query(&JobQuery {
        job_name: Some("arr".into()),
        ..Default::default()
    });
    assert_eq!(found.len(), 5);
}

#[test]
fn bad_and_oversized_arrays_are_refused() {
    let mut c = cfg();
    c.max_job_array_size = 10;
    let mut s = Sched::new(c, T0);
    for n in ["a[0-3]", "a[5-1]", "a[1-4:0]", "a[1-3]%0"] {
        assert_eq!(
            s.submit(T0, &alice(), named("x", n)),
            Err(SchedError::BadArrayIndex),
            "{n}"
        );
    }
    assert_eq!(
        s.submit(T0, &alice(), named("x", "a[1-11]")),
        Err(SchedError::ArrayTooLarge)
    );
    assert_eq!(
        SchedError::ArrayTooLarge.to_string(),
        "Job array index too large"
    );
    s.submit(T0, &alice(), named("x", "a[1-10]"))
        .expect("10 elements are allowed");
    s.submit(T0, &alice(), named("x", "a[1-100:10]"))
        .expect("10 elements spread out are allowed");
    assert!(s.take_effects().len() >= 2);
}

#[test]
fn array_limit_caps_running_elements() {
    let mut s = up();
    let (id, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-6]%2"))
        .expect("submit");
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_START 1[1] @0 on hostA",
            "Dispatch 1[1] -> hostA attempt 1",
            "Log JOB_START 1[2] @0 on hostB",
            "Dispatch 1[2] -> hostB attempt 1",
        ],
    );
    assert_eq!(pend_codes(&s, (id, 3)), vec![PEND_ARRAY_LIMIT]);
    let mut seq = 0;
    for round in 0..10 {
        let running: Vec<JobKey> = s
            .jobs
            .values()
            .filter(|j| j.state.is_started())
            .map(|j| j.key())
            .collect();
        assert!(running.len() <= 2, "round {round}: {running:?}");
        let Some(k) = running.first().copied() else {
            break;
        };
        seq += 1;
        finish(&mut s, k, 0, seq);
        s.schedule(T0 + 6000);
        assert!(started(&s, id) <= 2);
    }
    assert!(
        s.jobs
            .values()
            .all(|j| j.state == JobState::Done && j.idx > 0),
        "every element ran"
    );
}

#[test]
fn elements_are_controlled_one_by_one_or_together() {
    let mut s = up();
    let (id, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-6]"))
        .expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(started(&s, id), 4);
    assert_eq!(s.expand(&[(id, None)]).len(), 6);
    assert_eq!(s.expand(&[(id, Some(3))]), vec![Ok((id, 3))]);
    assert_eq!(s.expand(&[(id, Some(9))]), vec![Err((id, 9))]);
    // Kill element 5 (pending): only it ends.
    s.kill(T0, &alice(), (id, 5), false, false).expect("kill");
    assert_eq!(s.jobs[&(id, 5)].state, JobState::Exit);
    assert_eq!(s.jobs[&(id, 6)].state, JobState::Pend);
    // Stop element 2 (running): an order for that element only.
    s.dispatch_accepted(T0, (id, 2), 1, 300, 300);
    s.take_effects();
    s.stop(T0, &alice(), (id, 2)).expect("stop");
    let eff = s.take_effects();
    let signals: Vec<JobKey> = eff
        .iter()
        .filter_map(|e| match e {
            Effect::Signal { key, .. } => Some(*key),
            _ => None,
        })
        .collect();
    assert_eq!(signals, vec![(id, 2)]);
    let sig = logged(&eff);
    assert!(matches!(
        &sig[0],
        Event::JobSignal { key, .. } if *key == (id, 2)
    ));
    // Switch one element to another queue.
    s.switch(T0, &alice(), (id, 6), "high").expect("switch");
    assert_eq!(s.jobs[&(id, 6)].queue, "high");
    assert_eq!(s.jobs[&(id, 4)].queue, "normal");
    // Somebody else may not touch them.
    assert_eq!(
        s.kill(T0, &bob(), (id, 1), false, false),
        Err(SchedError::Permission)
    );
}

#[test]
fn cleaned_array_keeps_its_job_file_until_the_last_element_goes() {
    let mut s = up();
    let (id, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-2]"))
        .expect("submit");
    s.schedule(T0);
    finish(&mut s, (id, 1), 0, 1);
    s.take_effects();
    s.tick(T0 + 3_700_000);
    let eff = s.take_effects();
    assert!(
        !eff.iter()
            .any(|e| matches!(e, Effect::RemoveJobFile { .. }))
    );
    assert!(!s.jobs.contains_key(&(id, 1)));
    finish(&mut s, (id, 2), 0, 1);
    s.tick(T0 + 7_400_000);
    let eff = s.take_effects();
    assert_eq!(
        eff.iter()
            .filter(|e| matches!(e, Effect::RemoveJobFile { .. }))
            .count(),
        1
    );
}

pub(crate) fn dep(c: &str, cond: &str) -> Submission {
    let mut s = cmd(c);
    s.depend_cond = cond.into();
    s
}

#[test]
fn bad_dependency_syntax_is_refused() {
    let mut s = up();
    for bad in ["done(", "done(1) &&", "bogus(1)", "done(1))"] {
        assert_eq!(
            s.submit(T0, &alice(), dep("x", bad)),
            Err(SchedError::BadDependency),
            "{bad}"
        );
    }
    assert_eq!(
        SchedError::BadDependency.to_string(),
        "Bad dependency condition syntax"
    );
    assert!(s.jobs.is_empty());
}

#[test]
fn dependencies_by_name_and_invalid_ones() {
    let mut s = up();
    // 1: alice's "prep", 2: bob's "prep", 3: alice's "prep2".
    s.submit(T0, &alice(), named("a", "prep")).expect("submit");
    s.submit(T0, &bob(), named("b", "prep")).expect("submit");
    s.submit(T0, &alice(), named("c", "prep2")).expect("submit");
    let (d1, _, _) = s
        .submit(T0, &alice(), dep("d", "done(prep)"))
        .expect("submit");
    let (d2, _, _) = s
        .submit(T0, &alice(), dep("e", "ended(\"prep*\")"))
        .expect("submit");
    // A condition naming no job is refused (issue 50 item 7).
    for none in ["done(nosuchjob)", "done(99999)"] {
        assert_eq!(
            s.submit(T0, &alice(), dep("f", none)),
            Err(SchedError::NoJob),
            "{none}"
        );
    }
    let (d5, _, _) = s
        .submit(T0, &alice(), dep("h", "done(2) && !exit(3)"))
        .expect("submit");
    s.schedule(T0);
    s.take_effects();
    // Jobs 1, 2 and 3 run (4 slots).
    assert_eq!(pend_codes(&s, (d1, 0)), vec![pend::DEPEND]);
    assert_eq!(pend_codes(&s, (d2, 0)), vec![pend::DEPEND]);
    assert_eq!(
        basalt_core::job::pend_reason_text(pend::DEPEND_INVALID),
        "Dependency condition invalid or never satisfied"
    );
    // Alice's "prep" finishes; bob's is still running: done(prep) only looks at alice's.
    finish(&mut s, (1, 0), 0, 1);
    s.schedule(T0 + 1000);
    s.take_effects();
    assert!(s.jobs[&(d1, 0)].state.is_started(), "done(prep) met");
    // ended("prep*") also needs alice's prep2 (job 3), which now runs.
    assert_eq!(pend_codes(&s, (d2, 0)), vec![pend::DEPEND]);
    // Job 3 exits with 1: d5's `!exit(3)` can never hold any more.
    finish(&mut s, (3, 0), 256, 1);
    s.schedule(T0 + 2000);
    s.take_effects();
    assert!(s.jobs[&(d2, 0)].state.is_started(), "ended(prep*) met");
    assert_eq!(pend_codes(&s, (d5, 0)), vec![pend::DEPEND_INVALID]);
    // A job that exited can never be done.
    let (d6, _, _) = s.submit(T0, &alice(), dep("i", "done(3)")).expect("submit");
    s.schedule(T0 + 3000);
    assert_eq!(pend_codes(&s, (d6, 0)), vec![pend::DEPEND_INVALID]);
}

#[test]
fn dependencies_on_arrays_and_elements() {
    let mut s = up();
    let (arr, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-3]"))
        .expect("submit");
    let (all, _, _) = s
        .submit(T0, &alice(), dep("a", &format!("done({arr})")))
        .expect("submit");
    let (one, _, _) = s
        .submit(T0, &alice(), dep("b", &format!("done({arr}[2])")))
        .expect("submit");
    let (by_name, _, _) = s
        .submit(T0, &alice(), dep("c", "\"done(arr)\""))
        .expect("submit");
    let mut pairwise = named("d", "pair[1-3]");
    pairwise.depend_cond = "done(arr[*])".into();
    let (pair, _, _) = s.submit(T0, &alice(), pairwise).expect("submit");
    let mut whole = named("e", "waiter[1-2]");
    whole.depend_cond = "ended(arr)".into();
    let (waiter, _, _) = s.submit(T0, &alice(), whole).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(started(&s, arr), 3);
    finish(&mut s, (arr, 2), 0, 1);
    s.schedule(T0 + 1000);
    s.take_effects();
    assert!(s.jobs[&(one, 0)].state.is_started());
    assert_eq!(s.jobs[&(all, 0)].state, JobState::Pend);
    assert_eq!(s.jobs[&(by_name, 0)].state, JobState::Pend);
    // The dependent array waits as a whole.
    for i in [1, 2] {
        assert_eq!(pend_codes(&s, (waiter, i)), vec![pend::DEPEND]);
    }
    // Element 2 of the pairwise array follows element 2 of arr only.
    assert!(s.jobs[&(pair, 2)].state.is_started());
    assert_eq!(s.jobs[&(pair, 1)].state, JobState::Pend);
    finish(&mut s, (arr, 1), 0, 1);
    finish(&mut s, (arr, 3), 0, 1);
    s.schedule(T0 + 2000);
    s.take_effects();
    for i in [1, 2] {
        assert_eq!(s.dependency(&s.jobs[&(waiter, i)]), Some(Tri::Yes));
    }
    // Both whole-array conditions hold now (they run, or wait only for a slot).
    for k in [(all, 0), (by_name, 0)] {
        assert_eq!(s.dependency(&s.jobs[&k]), Some(Tri::Yes));
        assert!(!pend_codes(&s, k).contains(&pend::DEPEND));
    }
    assert_eq!(s.dependency(&s.jobs[&(one, 0)]), Some(Tri::Yes));
}

#[test]
fn dependencies_survive_the_clean_period() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    s.submit(T0, &alice(), named("a", "first")).expect("submit");
    s.submit(T0, &alice(), dep("b", "done(1) && done(first)"))
        .expect("submit");
    s.force(T0, &admin(), (1, 0), &["hostA".into()], true)
        .expect("brun");
    finish(&mut s, (1, 0), 0, 1);
    // Job 1 is purged from memory while job 2 still waits for a host.
    s.tick(T0 + 3_700_000);
    assert!(!s.jobs.contains_key(&(1, 0)));
    assert!(s.gone.contains_key(&(1, 0)));
    s.host_ctl(T0, &admin(), 1, "hostA", "").expect("open");
    s.sbd_hello(T0 + 3_700_000, "hostA", &[]);
    s.schedule(T0 + 3_700_000);
    assert!(s.jobs[&(2, 0)].state.is_started());
}

#[test]
fn replay_with_arrays_and_dependencies_rebuilds_the_same_state() {
    let mut s = Sched::new(cfg(), T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    let mut log = logged(&s.take_effects());
    let (arr, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-6]%3"))
        .expect("submit");
    s.submit(T0, &alice(), dep("y", "done(arr)"))
        .expect("submit");
    s.schedule(T0);
    finish(&mut s, (arr, 1), 0, 1);
    finish(&mut s, (arr, 2), 256, 1);
    s.kill(T0, &alice(), (arr, 6), false, false).expect("kill");
    s.stop(T0, &alice(), (arr, 3)).expect("stop");
    s.schedule(T0 + 1000);
    s.tick(T0 + 3_700_000);
    log.extend(logged(&s.take_effects()));
    assert_eq!(
        log.iter()
            .filter(|e| matches!(e, Event::JobNew { .. }))
            .count(),
        2
    );
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
                    j.display_name(),
                    j.state,
                    j.hosts.clone(),
                    j.attempt,
                    j.exit_status,
                    j.order,
                    j.seq,
                    j.array_limit,
                    j.term_reason.clone(),
                    s.dependency(j),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(view(&s), view(&r));
    assert_eq!(s.gone, r.gone);
    // The restarted core schedules the same way: never more than 3 elements running.
    r.schedule(T0 + 3_800_000);
    assert!(started(&r, arr) <= 3);
}

#[test]
fn queue_administrators_control_the_jobs_of_their_queue_only() {
    let mut c = cfg();
    c.queues[1].administrators = vec!["bob".into()];
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    let mut high = cmd("a");
    high.queue = "high".into();
    s.submit(T0, &alice(), high).expect("submit high");
    s.submit(T0, &alice(), cmd("b")).expect("submit normal");
    s.take_effects();
    // bob administers "high": he may kill alice's job there, not in "normal".
    assert_eq!(
        s.kill(T0, &bob(), (2, 0), false, false),
        Err(SchedError::Permission)
    );
    s.kill(T0, &bob(), (1, 0), false, false)
        .expect("queue admin kills");
}

/// lsb.hosts HostGroup GROUP_ADMIN: "Host group administrators have the ability to open
/// or close the member hosts for the group they are administering" — a user named, or
/// each user of a user group named; other hosts stay the cluster administrators'.
#[test]
fn host_group_administrators_open_and_close_the_hosts_of_their_group_only() {
    use basalt_config::batch::Group;
    let group = |name: &str, members: &[&str], admins: &[&str]| Group {
        name: name.into(),
        members: members.iter().map(|m| (*m).to_owned()).collect(),
        shares: None,
        admins: admins.iter().map(|a| (*a).to_owned()).collect(),
        line: 1,
    };
    let hosts = vec!["hostA".to_owned(), "hostB".to_owned()];
    let none = BTreeMap::new();
    let mut c = cfg();
    c.host_group_admins = crate::config::host_group_admins(
        &[group("left", &["hostA"], &["alice", "ops"])],
        &[group("ops", &["bob"], &[])],
        &hosts,
        &none,
        &none,
    );
    assert_eq!(c.host_group_admins["alice"], vec!["hostA".to_owned()]);
    assert_eq!(c.host_group_admins["bob"], vec!["hostA".to_owned()]);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    s.host_ctl(T0, &alice(), 2, "hostA", "")
        .expect("group admin closes");
    s.host_ctl(T0, &bob(), 1, "hostA", "")
        .expect("via the user group");
    assert_eq!(
        s.host_ctl(T0, &alice(), 2, "hostB", ""),
        Err(SchedError::Permission)
    );
    s.host_ctl(T0, &admin(), 2, "hostB", "")
        .expect("cluster admin");
}

#[test]
fn host_lookup_by_name_agrees_with_same_host_over_every_host() {
    let mut c = cfg();
    c.hosts = [
        "hostA",
        "hostB.example.org",
        "HOSTC",
        "hostB.other.org",
        "hostD.example.org",
        "hostD",
    ]
    .iter()
    .enumerate()
    .map(|(i, n)| host(n, i))
    .collect();
    let s = Sched::new(c, T0);
    let linear = |name: &str| {
        s.hosts()
            .iter()
            .position(|h| basalt_core::same_host(&h.name, name))
    };
    for name in [
        "hostA",
        "HOSTA",
        "hosta.example.org",
        "hostB",
        "hostB.example.org",
        "HOSTB.OTHER.ORG",
        "hostB.third.org",
        "hostc",
        "hostC.example.org",
        "hostD",
        "hostD.example.org",
        "hostD.other.org",
        "hostE",
        "",
        ".",
        "host",
    ] {
        assert_eq!(s.host_idx(name), linear(name), "{name}");
        assert_eq!(
            s.host_name(name),
            linear(name).map(|i| s.hosts()[i].name.clone()),
            "{name}"
        );
    }
}

/// A scheduling pass runs when something could start, not on every event: sbatchd's
/// accept and the job's execution details, a held submission, and the pass's own
/// JOB_STARTs make none due (unless a pending job's dependency may change).
#[test]
fn a_pass_is_due_only_when_something_could_start() {
    let mut s = up();
    s.schedule(T0);
    s.take_effects();
    assert!(!s.needs_pass());
    let mut held = cmd("held");
    held.options2 |= sub2::HOLD;
    s.submit(T0, &alice(), held).expect("submit");
    assert!(!s.needs_pass(), "a held job cannot start");
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    assert!(s.needs_pass(), "a pending job may start");
    s.schedule(T0);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    assert!(
        !s.needs_pass(),
        "the pass's own JOB_START needs no second pass"
    );
    let (attempt, host) = (s.jobs[&(2, 0)].attempt, s.jobs[&(2, 0)].hosts[0].clone());
    for (seq, kind) in [
        (1, ReportKind::Started { pid: 7, pgid: 7 }),
        (
            2,
            ReportKind::Executing {
                exec_uid: 1000,
                exec_user: "alice".into(),
                exec_home: "/home/alice".into(),
                exec_cwd: "/tmp".into(),
                pid: 7,
            },
        ),
    ] {
        s.report(
            T0 + 1000,
            Report {
                host: host.clone(),
                key: (2, 0),
                attempt,
                seq,
                time: 0,
                kind,
            },
        );
        assert!(!s.needs_pass(), "seq {seq}: nothing could start");
    }
    finish(&mut s, (2, 0), 0, 3);
    assert!(s.needs_pass(), "a finished job frees its slot");
    s.schedule(T0 + 5000);
    s.take_effects();

    // With a pending job waiting on a dependency, the pass's JOB_STARTs ask for another
    // (started() may now hold), and so does a held submission.
    let mut waiting = cmd("w");
    waiting.depend_cond = "started(1)".into();
    s.submit(T0 + 6000, &alice(), waiting).expect("submit");
    s.schedule(T0 + 6000);
    s.take_effects();
    s.submit(T0 + 6000, &alice(), cmd("b")).expect("submit");
    s.schedule(T0 + 6000);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    assert!(s.needs_pass(), "a dependency may have changed");
    s.schedule(T0 + 6000);
    s.take_effects();
    let mut held = cmd("held2");
    held.options2 |= sub2::HOLD;
    s.submit(T0 + 6000, &alice(), held).expect("submit");
    assert!(s.needs_pass(), "a dependency may name the new job");
}

/// Seed 001 "Exclusive Scheduling": "A job only runs exclusively if it is submitted to
/// an exclusive queue, and the job is submitted with the bsub -x option. An exclusive job
/// runs by itself on a host -- it is dispatched only to a host with no other batch jobs
/// running, and LSF does not send any other jobs to the host until the exclusive job
/// completes." A `-x` job to another queue is refused, as LSF does.
#[test]
fn a_job_only_runs_exclusively_in_an_exclusive_queue_with_bsub_x() {
    let mut c = cfg();
    c.queues[1].exclusive = false;
    let mut s = up_with(c);
    let on = |h: &str, mut sub: Submission| {
        sub.asked_hosts = vec![h.into()];
        sub
    };
    let exclusive = |mut sub: Submission| {
        sub.options |= basalt_core::job::sub::EXCLUSIVE;
        sub
    };
    // -x to a queue without EXCLUSIVE = Y: refused.
    let mut high = exclusive(cmd("x"));
    high.queue = "high".into();
    assert_eq!(
        s.submit(T0, &alice(), high).map(|_| ()),
        Err(SchedError::NotExclusiveQueue)
    );
    assert_eq!(
        SchedError::NotExclusiveQueue.to_string(),
        "Queue does not accept EXCLUSIVE jobs"
    );
    // In the exclusive queue without -x: not exclusive, hostA is shared.
    s.submit(T0, &alice(), on("hostA", cmd("plain")))
        .expect("submit");
    s.submit(T0, &alice(), on("hostA", cmd("plain too")))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    // -x in the exclusive queue: not dispatched to hostA, which runs jobs...
    s.submit(T0, &alice(), exclusive(on("hostA", cmd("alone"))))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(3, 0)].state, JobState::Pend);
    // ... but to hostB, which runs none; then no other job goes to hostB until it ends.
    s.submit(T0, &alice(), exclusive(on("hostB", cmd("alone"))))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(4, 0)].state, JobState::Run);
    s.submit(T0, &alice(), on("hostB", cmd("after")))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Pend);
    s.take_effects();
    finish(&mut s, (4, 0), 0, 1);
    s.schedule(T0 + 6000);
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Run);
}
