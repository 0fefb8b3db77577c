//! bmod in the core (issue 20 item 9): what a pending and a started job take, what is
//! refused with LSF's messages, arrays, and that the logged change rebuilds the same job
//! on replay and across a log switch.

use super::tests::*;
use super::*;
use basalt_core::job::sub as subopt;

fn closed() -> Sched {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("close");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    s.take_effects();
    s
}

fn replayed(s: &Sched, events: &[Event]) -> Sched {
    let mut r = Sched::new(s.config().clone(), T0);
    r.replay(events.iter());
    r
}

fn set<T>(v: T) -> Change<T> {
    Change::Set(v)
}

#[test]
fn a_pending_job_takes_every_change_and_replay_gives_the_same_job() {
    let mut s = closed();
    let mut all = logged(&s.take_effects());
    s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    all.extend(logged(&s.take_effects()));
    let mut m = Modify {
        job_name: set("renamed".into()),
        queue: set("high".into()),
        res_req: set("select[type==any]".into()),
        out_file: set(("out.%J".into(), true)),
        procs: set((1, 2)),
        exclusive: set(()),
        post_exec: set("echo post".into()),
        ..Default::default()
    };
    m.rlimits[RLIMIT_RUN] = set(600);
    s.modify(T0 + 1000, &alice(), (1, 0), m).expect("bmod");
    let ev = logged(&s.take_effects());
    assert!(matches!(&ev[..], [Event::JobModify { key: (1, 0), .. }]));
    all.extend(ev);
    let j = &s.jobs[&(1, 0)];
    assert_eq!(j.sub.job_name, "renamed");
    assert_eq!(j.queue, "high");
    // -q moves the job as bswitch does; the submission keeps its queue.
    assert_eq!(j.sub.queue, "normal");
    assert_eq!(j.sub.res_req, "select[type==any]");
    assert_eq!(j.sub.out_file, "out.%J");
    assert_ne!(j.sub.options2 & basalt_core::job::sub2::OUT_OVERWRITE, 0);
    assert_eq!((j.sub.num_processors, j.sub.max_processors), (1, 2));
    assert_ne!(j.sub.options & subopt::EXCLUSIVE, 0);
    assert_eq!(j.sub.rlimits[RLIMIT_RUN], 600);
    assert_eq!(j.sub.post_exec(), "echo post");

    let r = replayed(&s, &all);
    let (a, b) = (&s.jobs[&(1, 0)], &r.jobs[&(1, 0)]);
    assert_eq!((&a.sub, &a.queue), (&b.sub, &b.queue));
}

/// bmod -Z: a pending job gets a new command line (marked SUB2_MODIFY_CMD, for dispatch
/// to put in its job file), kept on replay; a started job refuses it; an empty one is a
/// bad argument.
#[test]
fn bmod_z_gives_a_pending_job_a_new_command_and_a_started_one_refuses_it() {
    let mut s = closed();
    let mut all = logged(&s.take_effects());
    s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    all.extend(logged(&s.take_effects()));
    let m = Modify {
        command: set("echo replaced".into()),
        ..Default::default()
    };
    s.modify(T0 + 1000, &alice(), (1, 0), m).expect("bmod -Z");
    all.extend(logged(&s.take_effects()));
    let j = &s.jobs[&(1, 0)];
    assert_eq!(j.sub.command, "echo replaced");
    assert_ne!(j.sub.options2 & basalt_core::job::sub2::MODIFY_CMD, 0);
    let r = replayed(&s, &all);
    assert_eq!(r.jobs[&(1, 0)].sub, s.jobs[&(1, 0)].sub);
    let blank = Modify {
        command: set("  ".into()),
        ..Default::default()
    };
    assert!(matches!(
        s.modify(T0, &alice(), (1, 0), blank),
        Err(SchedError::BadArgument(_))
    ));

    let mut s = up();
    s.submit(T0, &alice(), cmd("sleep 1")).expect("submit");
    s.schedule(T0 + 10);
    assert!(s.jobs[&(1, 0)].state.is_started());
    let m = Modify {
        command: set("echo late".into()),
        ..Default::default()
    };
    assert_eq!(
        s.modify(T0 + 20, &alice(), (1, 0), m),
        Err(SchedError::ModifyRunning)
    );
}

#[test]
fn resetting_options_gives_back_their_defaults() {
    let mut s = closed();
    let mut sub = cmd("x");
    sub.job_name = "named".into();
    sub.options |= subopt::JOB_NAME | subopt::OUT_FILE | subopt::RERUNNABLE;
    sub.out_file = "o".into();
    sub.rlimits = [-1, -1, -1, -1, -1, -1, -1, -1, -1, 60, -1].into();
    s.submit(T0, &alice(), sub).expect("submit");
    let mut m = Modify {
        job_name: Change::Reset,
        out_file: Change::Reset,
        rerunnable: Change::Reset,
        ..Default::default()
    };
    m.rlimits[RLIMIT_RUN] = Change::Reset;
    s.modify(T0, &alice(), (1, 0), m).expect("bmod");
    let j = &s.jobs[&(1, 0)];
    assert_eq!(j.sub.job_name, "");
    assert_eq!(j.sub.out_file, "");
    assert_eq!(j.sub.options & (subopt::JOB_NAME | subopt::OUT_FILE), 0);
    assert_eq!(j.sub.options & subopt::RERUNNABLE, 0);
    assert_eq!(j.sub.rlimits[RLIMIT_RUN], -1);
}

#[test]
fn a_change_bsub_would_refuse_is_refused_and_nothing_is_logged() {
    let mut s = closed();
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.take_effects();
    let cases: Vec<(Modify, SchedError)> = vec![
        (
            Modify {
                queue: set("nope".into()),
                ..Default::default()
            },
            SchedError::NoQueue,
        ),
        (
            Modify {
                hosts: set(vec!["nohost".into()]),
                ..Default::default()
            },
            SchedError::BadHost,
        ),
        (
            Modify {
                depend_cond: set("done(".into()),
                ..Default::default()
            },
            SchedError::BadDependency,
        ),
        (
            Modify {
                res_req: set("select[nosuchres>1]".into()),
                ..Default::default()
            },
            SchedError::BadResReq,
        ),
        (
            Modify {
                job_name: set("a[1-3]".into()),
                ..Default::default()
            },
            SchedError::BadJobName,
        ),
        (
            Modify {
                begin_time: set(2_000_000_000),
                term_time: set(1_900_000_000),
                ..Default::default()
            },
            SchedError::StartAfterTerm,
        ),
    ];
    for (m, want) in cases {
        assert_eq!(
            s.modify(T0, &alice(), (1, 0), m.clone()),
            Err(want),
            "{m:?}"
        );
    }
    assert_eq!(
        s.modify(T0, &alice(), (1, 0), Modify::default()),
        Err(SchedError::BadArgument("No parameter is changed".into()))
    );
    assert!(logged(&s.take_effects()).is_empty());
    assert_eq!(s.jobs[&(1, 0)].queue, "normal");
}

#[test]
fn only_the_owner_or_an_administrator_may_modify_and_not_a_finished_job() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    let m = Modify {
        job_name: set("n".into()),
        ..Default::default()
    };
    assert_eq!(
        s.modify(T0, &bob(), (1, 0), m.clone()),
        Err(SchedError::Permission)
    );
    s.modify(T0, &admin(), (1, 0), m.clone()).expect("admin");
    assert_eq!(
        s.modify(T0, &alice(), (9, 0), m.clone()),
        Err(SchedError::NoJob)
    );
    s.schedule(T0);
    s.take_effects();
    finish(&mut s, (1, 0), 0, 1);
    assert_eq!(s.modify(T0, &alice(), (1, 0), m), Err(SchedError::Finished));
}

#[test]
fn a_started_job_takes_a_new_resource_requirement_and_with_lsb_mod_all_jobs_its_limits() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Run);
    let rusage = Modify {
        res_req: set("rusage[mem=10]".into()),
        ..Default::default()
    };
    s.modify(T0, &alice(), (1, 0), rusage)
        .expect("-R on a running job");
    assert_eq!(s.jobs[&(1, 0)].sub.res_req, "rusage[mem=10]");
    let mut run = Modify::default();
    run.rlimits[RLIMIT_RUN] = set(60);
    for m in [
        run.clone(),
        Modify {
            queue: set("high".into()),
            ..Default::default()
        },
    ] {
        assert_eq!(
            s.modify(T0, &alice(), (1, 0), m),
            Err(SchedError::ModifyRunning)
        );
    }
    assert_eq!(
        SchedError::ModifyRunning.to_string(),
        "Job parameters cannot be changed now; non-repetitive job is running"
    );
    s.cfg.mod_all_jobs = true;
    // sbatchd has answered the dispatch (else the order waits for its answer).
    let attempt = s.jobs[&(1, 0)].attempt;
    s.report(
        T0 + 100,
        Report {
            host: "hostA".into(),
            key: (1, 0),
            attempt,
            seq: 1,
            time: 0,
            kind: ReportKind::Started { pid: 42, pgid: 42 },
        },
    );
    s.take_effects();
    s.modify(T0, &alice(), (1, 0), run)
        .expect("-W with LSB_MOD_ALL_JOBS");
    assert_eq!(s.jobs[&(1, 0)].sub.rlimits[RLIMIT_RUN], 60);
    // Its sbatchd is told the limits in force from now on.
    let told: Vec<_> = s
        .take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Signal {
                key,
                host,
                action: SbdAction::Limits(l),
                ..
            } => Some((key, host, l[RLIMIT_RUN])),
            _ => None,
        })
        .collect();
    assert_eq!(told, vec![((1, 0), "hostA".to_string(), 60)]);
}

#[test]
fn bmod_of_an_array_changes_its_pending_elements_and_an_element_alone() {
    let mut s = up();
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("close");
    let mut sub = cmd("x");
    sub.job_name = "arr[1-4]".into();
    s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0);
    let mut all = logged(&s.take_effects());
    // hostA has 2 CPUs: elements 1 and 2 run.
    assert_eq!(s.jobs[&(1, 1)].state, JobState::Run);
    assert_eq!(s.jobs[&(1, 3)].state, JobState::Pend);
    s.modify(
        T0,
        &alice(),
        (1, 0),
        Modify {
            job_name: set("big".into()),
            queue: set("high".into()),
            ..Default::default()
        },
    )
    .expect("whole array");
    s.modify(
        T0,
        &alice(),
        (1, 4),
        Modify {
            mail_user: set("carol".into()),
            ..Default::default()
        },
    )
    .expect("one element");
    all.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&(1, 1)].sub.job_name, "arr[1-4]");
    assert_eq!(s.jobs[&(1, 1)].queue, "normal");
    assert_eq!(s.jobs[&(1, 3)].sub.job_name, "big[1-4]");
    assert_eq!(s.jobs[&(1, 3)].queue, "high");
    assert_eq!(s.jobs[&(1, 4)].sub.mail_user, "carol");
    assert_eq!(s.jobs[&(1, 3)].sub.mail_user, "");
    // Elements changed together still share one submission.
    assert!(Arc::ptr_eq(&s.jobs[&(1, 2)].sub, &s.jobs[&(1, 1)].sub));

    let r = replayed(&s, &all);
    for k in [(1, 1), (1, 2), (1, 3), (1, 4)] {
        assert_eq!(s.jobs[&k].sub, r.jobs[&k].sub, "{k:?}");
        assert_eq!(s.jobs[&k].queue, r.jobs[&k].queue, "{k:?}");
    }
    // A log switch carries the elements changed on their own.
    let carried = s.carry_over(T0 + 10_000);
    let c = replayed(&s, &carried.events().cloned().collect::<Vec<_>>());
    for k in [(1, 1), (1, 2), (1, 3), (1, 4)] {
        assert_eq!(s.jobs[&k].sub, c.jobs[&k].sub, "{k:?}");
        assert_eq!(s.jobs[&k].queue, c.jobs[&k].queue, "{k:?}");
    }
    // Every element started: a pending-only change has nothing to change.
    s.host_ctl(T0, &admin(), 1, "hostB", "").expect("open");
    s.schedule(T0 + 20_000);
    assert!(s.jobs.values().all(|j| j.state.is_started()));
    assert_eq!(
        s.modify(
            T0,
            &alice(),
            (1, 0),
            Modify {
                queue: set("normal".into()),
                ..Default::default()
            }
        ),
        Err(SchedError::ModifyRunning)
    );
}

#[test]
fn between_rebuilds_a_submission_from_another() {
    let mut a = cmd("x");
    a.job_name = "j[1-2]".into();
    a.options |= subopt::JOB_NAME;
    let mut m = Modify {
        job_name: set("k".into()),
        depend_cond: set("done(1)".into()),
        err_file: set(("e".into(), false)),
        notify_end: set(()),
        app: set("prof".into()),
        spec_cwd: set("/tmp".into()),
        term_time: set(1_900_000_000),
        ..Default::default()
    };
    m.rlimits[0] = set(5);
    let b = m.apply_to(&a);
    assert_eq!(Modify::between(&a, &b).apply_to(&a), b);
    assert_eq!(Modify::between(&b, &a).apply_to(&b), a);
    assert!(Modify::between(&a, &a).is_empty());
}

/// lsb.users GROUP_ADMIN: a user group's administrators control its members' jobs (bmod,
/// bkill, ...), an administrator named as a group is each of its users, and
/// `[usershares]` administrators get no job rights.
#[test]
fn a_user_group_administrator_controls_the_members_jobs() {
    use basalt_config::batch::Group;
    let g = |name: &str, members: &[&str], admins: &[&str]| Group {
        name: name.into(),
        members: members.iter().map(|m| m.to_string()).collect(),
        shares: None,
        admins: admins.iter().map(|m| m.to_string()).collect(),
        line: 1,
    };
    let groups = vec![
        g("leads", &["bob"], &[]),
        g("team", &["alice", "dave"], &["leads", "erin[usershares]"]),
    ];
    let mut c = crate::tests::cfg();
    c.group_admins = crate::config::group_admins(&groups, &BTreeMap::new());
    let mut s = Sched::new(c, T0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    let rename = Modify {
        job_name: set("by-lead".into()),
        ..Default::default()
    };
    s.modify(T0, &bob(), (1, 0), rename.clone())
        .expect("bob administers team through leads");
    assert_eq!(s.jobs[&(1, 0)].sub.job_name, "by-lead");
    let erin = Caller {
        uid: 1005,
        user: "erin".into(),
        host: "hostA".into(),
    };
    assert_eq!(
        s.modify(T0, &erin, (1, 0), rename),
        Err(SchedError::Permission)
    );
    assert!(s.kill(T0, &bob(), (1, 0), false, false).is_ok());
}

/// A change that does not name a queue is checked in the queue the job is in now (not
/// the one it was submitted to), and a closed queue does not stop it; `-q` must name a
/// queue that takes the job.
#[test]
fn a_change_is_checked_in_the_jobs_current_queue() {
    let mut s = closed();
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.switch(T0, &alice(), (1, 0), "high").expect("bswitch");
    s.queue_ctl(T0, &admin(), 2, "normal", "")
        .expect("close normal");
    s.queue_ctl(T0, &admin(), 2, "high", "")
        .expect("close high");
    s.modify(
        T0,
        &alice(),
        (1, 0),
        Modify {
            job_name: set("renamed".into()),
            ..Default::default()
        },
    )
    .expect("a closed queue does not stop a change that stays in it");
    assert_eq!(
        s.modify(
            T0,
            &alice(),
            (1, 0),
            Modify {
                queue: set("normal".into()),
                ..Default::default()
            }
        ),
        Err(SchedError::QueueClosed)
    );
    assert_eq!(s.jobs[&(1, 0)].queue, "high");
}

/// Issue 50 item 3: `bmod -J "%k" <array>` changes only the array's limit on elements
/// running at once (LSF's bmod `-J "%job_limit"`): the name, the element names and a
/// `done(name)` dependency stay; the limit applies to the started elements too and
/// survives replay and a log switch. On one element it is refused (the limit is the
/// array's), as LSF refuses it.
#[test]
fn issue50_3_bmod_j_percent_changes_only_the_array_limit() {
    let mut s = up();
    let mut all = logged(&s.take_effects());
    let (id, _, _) = s
        .submit(T0, &alice(), named("x", "arr[1-6]%3"))
        .expect("submit");
    let mut after = cmd("y");
    after.depend_cond = "done(arr)".into();
    s.submit(T0, &alice(), after).expect("dependent job");
    s.schedule(T0);
    all.extend(logged(&s.take_effects()));
    assert_eq!(started(&s, id), 3);
    let limit = |k: &str| Modify {
        job_name: set(k.into()),
        ..Default::default()
    };
    // Three elements run, three pend: the change is taken.
    s.modify(T0 + 1000, &alice(), (id, 0), limit("%1"))
        .expect("bmod -J %1");
    all.extend(logged(&s.take_effects()));
    for (k, j) in s.jobs.range((id, 1)..=(id, 6)) {
        assert_eq!(j.array_limit, Some(1), "{k:?}");
        assert_eq!(j.array_name(), "arr", "{k:?}");
        assert_eq!(j.sub.job_name, "arr[1-6]%1", "{k:?}");
    }
    assert_eq!(s.jobs[&(id, 3)].display_name(), "arr[3]");
    // The three started elements end: only one more starts.
    for (n, idx) in [1, 2, 3].into_iter().enumerate() {
        finish(&mut s, (id, idx), 0, n as u64 + 1);
    }
    s.schedule(T0 + 10_000);
    all.extend(logged(&s.take_effects()));
    assert_eq!(started(&s, id), 1);
    assert_eq!(pend_codes(&s, (id, 5)), vec![crate::PEND_ARRAY_LIMIT]);
    // done(arr) still names the array: waiting on it, not invalid.
    assert_eq!(
        pend_codes(&s, (id + 1, 0)),
        vec![basalt_core::job::pend::DEPEND]
    );

    // Every unfinished element started: the limit is still the array's to change.
    finish(&mut s, (id, 4), 0, 4);
    s.schedule(T0 + 11_000);
    s.modify(T0 + 11_000, &alice(), (id, 0), limit("%2"))
        .expect("bmod -J %2");
    s.schedule(T0 + 12_000);
    all.extend(logged(&s.take_effects()));
    assert_eq!(started(&s, id), 2);
    assert!(
        s.jobs
            .range((id, 1)..=(id, 6))
            .all(|(_, j)| !j.state.is_pending())
    );
    s.modify(T0 + 13_000, &alice(), (id, 0), limit("%3"))
        .expect("the limit of an array with no pending element");
    all.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&(id, 6)].array_limit, Some(3));
    // One element: refused, nothing changed.
    assert_eq!(
        s.modify(T0, &alice(), (id, 6), limit("%4")),
        Err(SchedError::ArrayNameChange)
    );
    assert!(s.take_effects().is_empty());
    // %0 is no limit LSF's bsub takes either.
    assert_eq!(
        s.modify(T0, &alice(), (id, 0), limit("%0")),
        Err(SchedError::BadArrayIndex)
    );

    // The logged JOB_MODIFY2s (job name "%k") rebuild it; so does a log switch.
    let r = replayed(&s, &all);
    for k in (1..=6).map(|i| (id, i)) {
        assert_eq!(r.jobs[&k].array_limit, Some(3), "{k:?}");
        assert_eq!(r.jobs[&k].sub.job_name, "arr[1-6]%3", "{k:?}");
    }
    let carried = s.carry_over(T0 + 20_000);
    let c = replayed(&s, &carried.events().cloned().collect::<Vec<_>>());
    for (k, j) in s.jobs.range((id, 1)..=(id, 6)) {
        assert_eq!(c.jobs[k].array_limit, Some(3), "{k:?}");
        assert_eq!(c.jobs[k].sub, j.sub, "{k:?}");
    }
}
