//! Resource allocation limits in the pass (issue 20, item 4): lsb.resources' Limit
//! sections (`USERS`/`PER_USER`, `QUEUES`, `HOSTS`/`PER_HOST`, `PROJECTS`; `SLOTS`,
//! `JOBS`) and lsb.users' MAX_JOBS hold back the jobs that would go over them, with
//! their pending reasons, and blimits' view shows what each count uses.

use super::*;
use crate::reslimits::{Members, RES_LIMIT_REASON, ResLimit, Scope};
use crate::tests::expect::assert_effects;
use crate::tests::{T0, alice, bob, cfg, cmd, dispatches};
use basalt_core::job::pend;

fn names(n: &[&str]) -> Members {
    Members {
        names: n.iter().map(|s| (*s).to_owned()).collect(),
        ..Default::default()
    }
}

fn everyone() -> Members {
    Members {
        all: true,
        ..Default::default()
    }
}

/// A limit named `name` that covers everyone and limits nothing yet.
pub(crate) fn limit(name: &str) -> ResLimit {
    ResLimit {
        name: name.into(),
        users: Scope::Any,
        queues: Scope::Any,
        hosts: Scope::Any,
        projects: Scope::Any,
        apps: Scope::Any,
        slots: None,
        slots_per_cpu: None,
        slots_window: None,
        jobs: None,
        amounts: Vec::new(),
        reason: RES_LIMIT_REASON,
        amount_pcts: Vec::new(),
    }
}

fn core(limits: Vec<ResLimit>) -> Sched {
    let mut c = cfg();
    c.limits = limits;
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    s
}

/// Submit `n` jobs as `who`; their keys.
fn submit(s: &mut Sched, who: &Caller, n: usize) -> Vec<JobKey> {
    (0..n)
        .map(|_| (s.submit(T0, who, cmd("true")).expect("submit").0, 0))
        .collect()
}

fn pass(s: &mut Sched) -> Vec<(JobKey, String)> {
    s.schedule(T0 + 10);
    dispatches(&s.take_effects())
}

/// A scheduling pass: every effect since the last take (the submissions' JOB_NEW too).
fn step(s: &mut Sched) -> Vec<Effect> {
    s.schedule(T0 + 10);
    s.take_effects()
}

fn reasons(s: &Sched, k: JobKey) -> Vec<u32> {
    s.jobs[&k].pend_reasons.keys().copied().collect()
}

#[test]
fn per_user_slots_limit_each_user_separately_with_the_resource_limit_reason() {
    let mut s = core(vec![ResLimit {
        users: Scope::Each(everyone()),
        slots: Some(1),
        ..limit("perUser")
    }]);
    let a = submit(&mut s, &alice(), 2);
    let b = submit(&mut s, &bob(), 1);
    assert_eq!((a[0], b[0]), ((1, 0), (3, 0)));
    // alice's second job (2) is held back; bob's first (3) starts.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 3 @0 on hostB",
            "Dispatch 3 -> hostB attempt 1",
        ],
    );
    assert_eq!(reasons(&s, a[1]), vec![RES_LIMIT_REASON]);
    assert_eq!(
        basalt_core::job::pend_reason_text(RES_LIMIT_REASON),
        "Not allowed due to resource limit."
    );
    let view = s.limits_view();
    assert_eq!(view.len(), 2, "{view:?}");
    assert_eq!(view[0].consumers[0], "alice");
    assert_eq!(view[0].slots, Some((1, 1)));
}

#[test]
fn users_listed_together_share_one_count() {
    let mut s = core(vec![ResLimit {
        users: Scope::Together(names(&["alice", "bob"])),
        slots: Some(2),
        ..limit("pair")
    }]);
    let a = submit(&mut s, &alice(), 2);
    let b = submit(&mut s, &bob(), 1);
    assert_eq!(a, vec![(1, 0), (2, 0)]);
    // alice's two take the pair's two slots; bob's (3) waits.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
        ],
    );
    assert_eq!(reasons(&s, b[0]), vec![RES_LIMIT_REASON]);
    assert_eq!(s.limits_view()[0].consumers[0], "alice bob");
}

#[test]
fn per_host_slots_leave_each_host_its_own_count() {
    let mut s = core(vec![ResLimit {
        hosts: Scope::Each(everyone()),
        slots: Some(1),
        ..limit("perHost")
    }]);
    let jobs = submit(&mut s, &alice(), 3);
    // One job on each host; the third waits.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
        ],
    );
    assert_eq!(s.jobs[&jobs[2]].state, JobState::Pend);
    assert!(reasons(&s, jobs[2]).contains(&RES_LIMIT_REASON));
}

#[test]
fn a_jobs_limit_on_a_queue_counts_started_jobs_and_zero_forbids() {
    let mut s = core(vec![
        ResLimit {
            queues: Scope::Together(names(&["normal"])),
            jobs: Some(1),
            ..limit("oneJob")
        },
        ResLimit {
            queues: Scope::Together(names(&["high"])),
            slots: Some(0),
            ..limit("closed")
        },
    ]);
    let jobs = submit(&mut s, &alice(), 2);
    let high = s
        .submit(
            T0,
            &alice(),
            Submission {
                queue: "high".into(),
                ..cmd("true")
            },
        )
        .expect("submit")
        .0;
    assert_eq!((jobs[0], high), ((1, 0), 3));
    // Only job 1 starts: normal's one job, high's zero slots.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
    assert_eq!(reasons(&s, jobs[1]), vec![RES_LIMIT_REASON]);
    assert_eq!(reasons(&s, (high, 0)), vec![RES_LIMIT_REASON]);
    // The first job ends: the second starts.
    crate::tests::finish(&mut s, jobs[0], 0, 1);
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_STATUS 1 @5 DONE end@5 usage",
            "Acct 1 DONE on hostA",
            "Log JOB_START 2 @0 on hostA",
            "Dispatch 2 -> hostA attempt 1",
        ],
    );
}

#[test]
fn lsb_users_max_jobs_is_a_users_slot_limit_with_its_reason() {
    let mut s = core(vec![ResLimit {
        users: Scope::Each(names(&["alice"])),
        slots: Some(1),
        reason: pend::USER_LIMIT,
        amount_pcts: Vec::new(),
        ..limit("alice")
    }]);
    let a = submit(&mut s, &alice(), 2);
    let b = submit(&mut s, &bob(), 2);
    assert_eq!((a[1], b[1]), ((2, 0), (4, 0)));
    // alice's second job (2) is held back; both of bob's start.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_NEW 4 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 3 @0 on hostB",
            "Dispatch 3 -> hostB attempt 1",
            "Log JOB_START 4 @0 on hostA",
            "Dispatch 4 -> hostA attempt 1",
        ],
    );
    assert_eq!(reasons(&s, a[1]), vec![pend::USER_LIMIT]);
}

#[test]
fn busers_counts_a_users_slots_by_state_with_the_max_jobs_that_covers_them() {
    let mut s = core(vec![ResLimit {
        users: Scope::Each(names(&["alice"])),
        slots: Some(1),
        reason: pend::USER_LIMIT,
        amount_pcts: Vec::new(),
        ..limit("alice")
    }]);
    submit(&mut s, &alice(), 2);
    pass(&mut s);
    let rows = s.users_view(&["alice".to_owned(), "bob".to_owned()], false);
    let alice_row = &rows[0];
    assert_eq!(alice_row.name, "alice");
    assert_eq!(
        (
            alice_row.max,
            alice_row.slots.njobs,
            alice_row.slots.pend,
            alice_row.slots.run
        ),
        (Some(1), 2, 1, 1)
    );
    assert_eq!(
        (rows[1].name.as_str(), rows[1].max, rows[1].slots.njobs),
        ("bob", None, 0)
    );
    // `all`: the users with unfinished jobs.
    let all = s.users_view(&[], true);
    assert_eq!(all.len(), 1);
}

/// busers of a user group: its members' jobs summed, its own MAX_JOBS row and JL/P.
#[test]
fn busers_of_a_group_sums_its_members() {
    let mut c = cfg();
    c.limits = vec![ResLimit {
        users: Scope::Together(names(&["alice", "bob"])),
        slots: Some(3),
        reason: pend::USER_LIMIT,
        amount_pcts: Vec::new(),
        ..limit("team")
    }];
    c.user_groups.insert(
        "team".into(),
        (
            crate::config::UserList {
                names: vec!["alice".into(), "bob".into()],
                ..Default::default()
            },
            Some(2.0),
        ),
    );
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    submit(&mut s, &alice(), 2);
    submit(&mut s, &bob(), 2);
    pass(&mut s);
    let rows = s.users_view(&["team".to_owned(), "alice".to_owned()], false);
    let team = rows.iter().find(|r| r.name == "team").expect("team row");
    assert_eq!(
        (
            team.max,
            team.jl_p,
            team.slots.njobs,
            team.slots.run,
            team.slots.pend
        ),
        (Some(3), Some(2.0), 4, 3, 1)
    );
    let alice_row = rows.iter().find(|r| r.name == "alice").expect("alice row");
    assert_eq!(alice_row.slots.njobs, 2);
}

/// MAX_PEND_JOBS: lsb.params' for the cluster, lsb.users' for a user; an array's elements
/// count one each; a refused submission creates nothing.
#[test]
fn max_pend_jobs_refuses_submissions_past_the_pending_threshold() {
    let mut c = cfg();
    c.max_pend_jobs = Some(3);
    c.user_pend_limits = vec![(Scope::Each(names(&["alice"])), 1)];
    // No host is up: every job stays pending.
    let mut s = Sched::new(c, T0);
    s.start(T0, "hostA");
    s.take_effects();
    assert!(s.submit(T0, &alice(), cmd("a")).is_ok());
    assert_eq!(
        s.submit(T0, &alice(), cmd("a2")).map(|r| r.0),
        Err(SchedError::UserPendLimit { retry_secs: 60 })
    );
    assert!(s.submit(T0, &bob(), cmd("b")).is_ok());
    let array = Submission {
        job_name: "arr[1-2]".into(),
        ..cmd("x")
    };
    assert_eq!(
        s.submit(T0, &bob(), array).map(|r| r.0),
        Err(SchedError::PendLimit { retry_secs: 60 })
    );
    assert!(s.submit(T0, &bob(), cmd("b2")).is_ok());
    assert_eq!(
        s.submit(T0, &bob(), cmd("b3")).map(|r| r.0),
        Err(SchedError::PendLimit { retry_secs: 60 })
    );
    assert_eq!(s.jobs.len(), 3);
}

/// MAX_PEND_SLOTS: lsb.params' for the cluster, lsb.users' for a user; a job counts its
/// `-n` minimum, an array each element's.
#[test]
fn max_pend_slots_counts_the_pending_jobs_slots() {
    let mut c = cfg();
    c.max_pend_slots = Some(6);
    c.user_pend_slot_limits = vec![(Scope::Each(names(&["alice"])), 3)];
    let mut s = Sched::new(c, T0);
    s.start(T0, "hostA");
    s.take_effects();
    let procs = |n: u32| Submission {
        num_processors: n,
        max_processors: n,
        ..cmd("p")
    };
    assert!(s.submit(T0, &alice(), procs(2)).is_ok());
    assert_eq!(
        s.submit(T0, &alice(), procs(2)).map(|r| r.0),
        Err(SchedError::UserPendSlotLimit { retry_secs: 60 })
    );
    assert!(s.submit(T0, &alice(), procs(1)).is_ok());
    let array = Submission {
        job_name: "arr[1-2]".into(),
        ..procs(2)
    };
    // 3 pending slots + 2 x 2 > 6.
    assert_eq!(
        s.submit(T0, &bob(), array).map(|r| r.0),
        Err(SchedError::PendSlotLimit { retry_secs: 60 })
    );
    assert!(s.submit(T0, &bob(), procs(3)).is_ok());
    assert_eq!(s.jobs.len(), 3);
}

/// `bsub -m` takes lsb.hosts' host groups (their hosts) and `host+N` preferences; a
/// host name's own trailing digits are part of it.
#[test]
fn bsub_m_takes_host_groups_and_preferences() {
    let mut c = cfg();
    c.host_groups
        .insert("both".into(), vec!["hostA".into(), "hostB".into()]);
    let mut s = Sched::new(c, T0);
    s.start(T0, "hostA");
    s.take_effects();
    let asking = |hosts: &[&str]| Submission {
        asked_hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        ..cmd("true")
    };
    let (id, _, _) = s.submit(T0, &alice(), asking(&["both"])).expect("group");
    assert_eq!(s.jobs[&(id, 0)].sub.asked_hosts, vec!["hostA", "hostB"]);
    let (id, _, _) = s
        .submit(T0, &alice(), asking(&["hostB+2", "hostA"]))
        .expect("preference");
    // The preference level is kept (the pass orders the hosts by it).
    assert_eq!(s.jobs[&(id, 0)].sub.asked_hosts, vec!["hostB+2", "hostA"]);
    assert_eq!(
        s.submit(T0, &alice(), asking(&["hostA1"])).map(|r| r.0),
        Err(SchedError::BadHost)
    );
}

/// Queue HOSTS `host+N`: the preferred host is used first, whatever the load or order.
#[test]
fn queue_host_preference_puts_the_preferred_host_first() {
    let mut c = cfg();
    c.queues[0].host_pref = BTreeMap::from([("hostB".to_owned(), 2)]);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    submit(&mut s, &alice(), 3);
    let d = pass(&mut s);
    let on_b = d.iter().filter(|(_, h)| h == "hostB").count();
    // hostB's 2 slots are taken first; the third job goes to hostA.
    assert_eq!(on_b, 2, "{d:?}");
    assert_eq!(d.len(), 3);
    assert!(d.iter().take(2).all(|(_, h)| h == "hostB"), "{d:?}");
}

/// MEM (and SWP, TMP, RESOURCE[...]) limits count what the started jobs reserve
/// (`rusage[]`): a job whose reservation would go over pends.
#[test]
fn a_mem_limit_counts_what_the_users_running_jobs_reserve() {
    let mut c = cfg();
    c.limits = vec![ResLimit {
        users: Scope::Each(everyone()),
        amounts: vec![("mem".into(), 100.0)],
        ..limit("memPerUser")
    }];
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(
            h,
            2,
            1.0,
            true,
            BTreeMap::from([("mem".to_owned(), 10_000.0)]),
        );
    }
    s.start(T0, "hostA");
    s.take_effects();
    let wants = |who: &Caller, s: &mut Sched| {
        let sub = Submission {
            res_req: "rusage[mem=60]".into(),
            ..cmd("true")
        };
        (s.submit(T0, who, sub).expect("submit").0, 0)
    };
    let a1 = wants(&alice(), &mut s);
    let a2 = wants(&alice(), &mut s);
    let b1 = wants(&bob(), &mut s);
    let d = pass(&mut s);
    let started: Vec<JobKey> = d.iter().map(|(k, _)| *k).collect();
    assert!(started.contains(&a1) && started.contains(&b1), "{d:?}");
    assert!(!started.contains(&a2));
    assert_eq!(reasons(&s, a2), vec![RES_LIMIT_REASON]);
}

#[test]
fn limit_amounts_are_read_from_mem_swp_tmp_and_resource() {
    let l = basalt_config::batch::Limit {
        name: "l".into(),
        users: vec![],
        per_user: vec![],
        queues: vec![],
        per_queue: vec![],
        hosts: vec![],
        per_host: vec![],
        projects: vec![],
        per_project: vec![],
        slots: None,
        slots_window: None,
        jobs: None,
        other: BTreeMap::from([
            ("MEM".to_owned(), "512".to_owned()),
            ("TMP".to_owned(), "10%".to_owned()),
            ("RESOURCE".to_owned(), "[licA, 2] [licB,1]".to_owned()),
        ]),
        line: 1,
    };
    assert_eq!(
        crate::reslimits::limit_amounts(&l),
        vec![
            ("mem".to_owned(), 512.0),
            ("licA".to_owned(), 2.0),
            ("licB".to_owned(), 1.0)
        ]
    );
}

/// lsb.resources SLOTS_PER_PROCESSOR with PER_HOST: on each host, the slots per
/// processor of the host (here 0.5 x 2 CPUs: one job per host).
#[test]
fn slots_per_processor_caps_each_host_by_its_processors() {
    let l = basalt_config::batch::Limit {
        name: "perCpu".into(),
        users: vec![],
        per_user: vec![],
        queues: vec![],
        per_queue: vec![],
        hosts: vec![],
        per_host: vec!["all".into()],
        projects: vec![],
        per_project: vec![],
        slots: None,
        slots_window: None,
        jobs: None,
        other: BTreeMap::from([("SLOTS_PER_PROCESSOR".to_owned(), "0.5".to_owned())]),
        line: 1,
    };
    let mut b = basalt_config::batch::Batch::default();
    b.limits.push(l);
    let hosts = vec!["hostA".to_owned(), "hostB".to_owned()];
    let limits = crate::reslimits::resolve(&b, &hosts, &BTreeMap::new(), &BTreeMap::new());
    assert_eq!(limits[0].slots_per_cpu, Some(0.5));
    let mut s = core(limits);
    let jobs = submit(&mut s, &alice(), 3);
    let d = pass(&mut s);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_ne!(d[0].1, d[1].1);
    assert!(reasons(&s, jobs[2]).contains(&RES_LIMIT_REASON));
}

/// A PER_HOST limit's `MEM = 50%`: on each host, half its maxmem for what the jobs
/// reserve there.
#[test]
fn a_percentage_mem_limit_is_a_share_of_each_hosts_memory() {
    let l = basalt_config::batch::Limit {
        name: "halfMem".into(),
        users: vec![],
        per_user: vec![],
        queues: vec![],
        per_queue: vec![],
        hosts: vec![],
        per_host: vec!["all".into()],
        projects: vec![],
        per_project: vec![],
        slots: None,
        slots_window: None,
        jobs: None,
        other: BTreeMap::from([("MEM".to_owned(), "50%".to_owned())]),
        line: 1,
    };
    let mut b = basalt_config::batch::Batch::default();
    b.limits.push(l);
    let hosts = vec!["hostA".to_owned(), "hostB".to_owned()];
    let limits = crate::reslimits::resolve(&b, &hosts, &BTreeMap::new(), &BTreeMap::new());
    assert_eq!(limits[0].amount_pcts, vec![("mem".to_owned(), 50.0)]);
    let mut c = cfg();
    c.limits = limits;
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(
            h,
            4,
            1.0,
            true,
            BTreeMap::from([("mem".to_owned(), 100_000.0)]),
        );
        s.lim_static(
            h,
            &crate::LimStatic {
                max_mem_mb: 1000,
                ..Default::default()
            },
        );
    }
    s.start(T0, "hostA");
    s.take_effects();
    let mem = |n: &str| Submission {
        res_req: format!("rusage[mem={n}]").into(),
        ..cmd("m")
    };
    let mut keys = Vec::new();
    for _ in 0..3 {
        keys.push(s.submit(T0, &alice(), mem("300")).expect("submit").0);
    }
    let d = pass(&mut s);
    // 300 fits under 500 on each host; a second 300 on the same host does not.
    assert_eq!(d.len(), 2, "{d:?}");
    assert_ne!(d[0].1, d[1].1);
    assert!(reasons(&s, (keys[2], 0)).contains(&RES_LIMIT_REASON));
}

/// Per-processor slot limits: the queue's PJOB_LIMIT and lsb.users' JL/P, times the
/// host's processors (2 here).
#[test]
fn per_processor_limits_cap_a_queue_and_a_user_on_each_host() {
    let mut c = cfg();
    c.queues[0].pjob_limit = Some(0.5);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    let jobs = submit(&mut s, &alice(), 3);
    // PJOB_LIMIT 0.5 x 2 processors: one job a host; the third waits.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
        ],
    );
    assert!(reasons(&s, jobs[2]).contains(&pend::QUEUE_PROC_LIMIT));

    let mut c = cfg();
    c.user_rows.insert("alice".into(), Some(0.5));
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    let a = submit(&mut s, &alice(), 3);
    let b = submit(&mut s, &bob(), 1);
    assert_eq!((a[2], b[0]), ((3, 0), (4, 0)));
    // JL/P 0.5: one of alice's a host; her third (3) waits, bob's (4) starts.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_NEW 4 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 4 @0 on hostA",
            "Dispatch 4 -> hostA attempt 1",
        ],
    );
    assert!(reasons(&s, a[2]).contains(&pend::USER_PROC_LIMIT));
    assert_eq!(
        basalt_core::job::pend_reason_text(pend::USER_PROC_LIMIT),
        "The user has reached his/her per-processor job slot limit"
    );
}

/// lsb.queues' QJOB_LIMIT and UJOB_LIMIT: the queue's slots (3) and each user's (2) hold
/// back the jobs past them with LSF's reasons; a slot freed lets the next job of the
/// same user in.
#[test]
fn queue_and_user_slot_limits_of_a_queue_hold_jobs_back() {
    let mut c = cfg();
    c.queues[0].qjob_limit = Some(3);
    c.queues[0].ujob_limit = Some(2);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    let a = submit(&mut s, &alice(), 3);
    let b = submit(&mut s, &bob(), 2);
    assert_eq!((a[2], b[1]), ((3, 0), (5, 0)));
    // alice's first two (UJOB_LIMIT 2), bob's first (QJOB_LIMIT 3); 4 slots were free.
    assert_effects(
        &step(&mut s),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_NEW 2 @0",
            "Log JOB_NEW 3 @0",
            "Log JOB_NEW 4 @0",
            "Log JOB_NEW 5 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 2 @0 on hostB",
            "Dispatch 2 -> hostB attempt 1",
            "Log JOB_START 4 @0 on hostA",
            "Dispatch 4 -> hostA attempt 1",
        ],
    );
    assert_eq!(reasons(&s, a[2]), vec![pend::QUEUE_USER_LIMIT]);
    assert_eq!(reasons(&s, b[1]), vec![pend::QUEUE_JOB_LIMIT]);
    // alice's first ends: her third takes the queue's slot, not bob's second.
    crate::tests::finish(&mut s, a[0], 0, 1);
    s.schedule(T0 + 6000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @5 DONE end@5 usage",
            "Acct 1 DONE on hostA",
            "Log JOB_START 3 @6 on hostA",
            "Dispatch 3 -> hostA attempt 1",
        ],
    );
    assert_eq!(reasons(&s, b[1]), vec![pend::QUEUE_JOB_LIMIT]);
}

/// lsb.users JL/P of a user group's own row: the members together, on each host, per
/// processor; past it a member's job pends with reason 604.
#[test]
fn a_groups_own_jl_p_row_caps_its_members_together_on_each_host() {
    let mut c = cfg();
    c.group_jl_p = vec![(
        crate::config::UserList {
            names: vec!["alice".into(), "bob".into()],
            ..Default::default()
        },
        0.5,
    )];
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    // 0.5 x 2 CPUs: one slot of the group per host.
    let a = submit(&mut s, &alice(), 2);
    let b = submit(&mut s, &bob(), 1);
    let carol = Caller {
        uid: 1010,
        user: "carol".into(),
        host: "hostA".into(),
    };
    let c = submit(&mut s, &carol, 1);
    let d = pass(&mut s);
    let started: Vec<JobKey> = d.iter().map(|(k, _)| *k).collect();
    assert_eq!(started.len(), 3, "{d:?}");
    assert!(started.contains(&c[0]), "carol is not in the group");
    assert!(
        reasons(&s, b[0]).contains(&pend::GROUP_PROC_LIMIT),
        "{:?}",
        reasons(&s, b[0])
    );
    assert!(started.contains(&a[0]) && started.contains(&a[1]));
    assert_eq!(
        basalt_core::job::pend_reason_text(pend::GROUP_PROC_LIMIT),
        "One of the user's groups has reached its per-processor job slot limit"
    );
}

/// Submit one job as alice with application profile `app` ("" = none); its key.
fn submit_app(s: &mut Sched, app: &str) -> JobKey {
    let sub = Submission {
        extras: (!app.is_empty()).then(|| {
            Box::new(crate::SubExtras {
                app: app.into(),
                ..Default::default()
            })
        }),
        ..cmd("true")
    };
    (s.submit(T0, &alice(), sub).expect("submit").0, 0)
}

/// `PER_APP`: each application profile named has a count of its own; `APPS`: the
/// profiles named share one; a job of another profile, or of none, is outside the
/// limit.
#[test]
fn per_app_and_apps_limits_count_jobs_by_application_profile() {
    let mut s = core(vec![ResLimit {
        apps: Scope::Each(names(&["fluent", "star"])),
        jobs: Some(1),
        ..limit("perApp")
    }]);
    let f1 = submit_app(&mut s, "fluent");
    let f2 = submit_app(&mut s, "fluent");
    let st = submit_app(&mut s, "star");
    let other = submit_app(&mut s, "blast");
    let none = submit_app(&mut s, "");
    let started: Vec<JobKey> = pass(&mut s).into_iter().map(|(k, _)| k).collect();
    assert_eq!(started, vec![f1, st, other, none]);
    assert_eq!(reasons(&s, f2), vec![RES_LIMIT_REASON]);
    let rows = s.limits_view();
    let apps: Vec<&str> = rows.iter().map(|r| r.consumers[4].as_str()).collect();
    assert_eq!(apps, vec!["fluent", "star"]);

    let mut s = core(vec![ResLimit {
        apps: Scope::Together(names(&["fluent", "star"])),
        jobs: Some(1),
        ..limit("apps")
    }]);
    let f1 = submit_app(&mut s, "fluent");
    let st = submit_app(&mut s, "star");
    let none = submit_app(&mut s, "");
    let started: Vec<JobKey> = pass(&mut s).into_iter().map(|(k, _)| k).collect();
    assert_eq!(started, vec![f1, none]);
    assert_eq!(reasons(&s, st), vec![RES_LIMIT_REASON]);
    assert_eq!(s.limits_view()[0].consumers[4], "fluent star");
}

/// Issue 50 item 11: blimits names user and host groups as configured (`eng/`,
/// `hg_ab/`, LSF's trailing slash), not their members; lsb.users' MAX_JOBS is no Limit
/// section, so it is neither a blimits row nor counted as one configured.
#[test]
fn issue_50_item_11_blimits_names_groups_as_configured_and_leaves_out_max_jobs() {
    use basalt_config::batch::{BatchUser, Group, Limit};
    let group = |name: &str, members: &[&str]| Group {
        name: name.into(),
        members: members.iter().map(|m| (*m).to_owned()).collect(),
        shares: None,
        admins: Vec::new(),
        line: 1,
    };
    let mut b = basalt_config::batch::Batch::default();
    b.user_groups.push(group("eng", &["alice", "bob"]));
    b.host_groups.push(group("hg_ab", &["hostA", "hostB"]));
    b.users.push(BatchUser {
        name: "alice".into(),
        max_jobs: Some(10),
        jl_p: None,
        other: BTreeMap::new(),
        line: 1,
    });
    b.limits.push(Limit {
        name: "engSlots".into(),
        users: vec!["eng".into(), "carol".into()],
        per_user: vec![],
        queues: vec![],
        per_queue: vec![],
        hosts: vec!["hg_ab".into()],
        per_host: vec![],
        projects: vec![],
        per_project: vec![],
        slots: Some(4),
        slots_window: None,
        jobs: None,
        other: BTreeMap::new(),
        line: 1,
    });
    let hosts = vec!["hostA".to_owned(), "hostB".to_owned()];
    let limits = crate::reslimits::resolve(&b, &hosts, &BTreeMap::new(), &BTreeMap::new());
    let mut s = core(limits);
    submit(&mut s, &alice(), 1);
    assert_eq!(pass(&mut s).len(), 1);
    let view = s.limits_view();
    assert_eq!(view.len(), 1, "{view:?}");
    assert_eq!(view[0].name, "engSlots");
    assert_eq!(view[0].consumers[0], "eng/ carol");
    assert_eq!(view[0].consumers[2], "hg_ab/");
    assert_eq!(view[0].slots, Some((1, 4)));
    assert_eq!(s.limit_sections(), 1);
    // The MAX_JOBS row still holds alice to 10 jobs (busers shows it).
    assert_eq!(s.users_view(&["alice".into()], false)[0].max, Some(10));
}
