//! Issue 50 item 7: submissions LSF refuses that Basalt accepted, the job then pending
//! forever: `-m` naming a host the queue does not use, `-w` naming no job mbatchd holds,
//! an unclosed bracket in `-R`, and a user with no share in a fairshare queue.

use super::tests::*;
use super::*;
use crate::config::UserList;
use basalt_config::batch::parse_share_list;
use basalt_config::select::NameKind;

fn to(queue: &str, hosts: &[&str]) -> Submission {
    let mut s = cmd("x");
    s.queue = queue.into();
    s.asked_hosts = hosts.iter().map(|h| (*h).to_owned()).collect();
    s
}

/// `bsub -q Q -m H` with H not in Q's HOSTS: LSF's `H: Host or host group is not used by
/// the queue. Job not submitted.` (a host group is refused when the queue uses none of
/// its hosts); the queue's own hosts, `others` and a queue of every host are accepted.
#[test]
fn item7_a_host_the_queue_does_not_use_is_refused() {
    let mut c = cfg();
    c.queues[1].hosts = vec!["hostA".into()];
    c.host_groups.insert("onlyB".into(), vec!["hostB".into()]);
    c.host_groups
        .insert("both".into(), vec!["hostA".into(), "hostB".into()]);
    let mut s = up_with(c);
    for (hosts, bad) in [
        (&["hostB"][..], "hostB"),
        (&["hostA+1", "hostB"][..], "hostB"),
        (&["onlyB"][..], "onlyB"),
    ] {
        assert_eq!(
            s.submit(T0, &alice(), to("high", hosts)),
            Err(SchedError::QueueHost(bad.into())),
            "{hosts:?}"
        );
    }
    assert_eq!(
        SchedError::QueueHost("hostB".into()).to_string(),
        "hostB: Host or host group is not used by the queue"
    );
    // An administrator is held to it too (it is where the job could run, not a right).
    assert_eq!(
        s.submit(T0, &admin(), to("high", &["hostB"])),
        Err(SchedError::QueueHost("hostB".into()))
    );
    assert!(s.jobs.is_empty());
    for hosts in [&["hostA"][..], &["both"], &["hostA", "others"], &["others"]] {
        s.submit(T0, &alice(), to("high", hosts))
            .unwrap_or_else(|e| panic!("{hosts:?}: {e}"));
    }
    s.submit(T0, &alice(), to("normal", &["hostB"]))
        .expect("a queue without HOSTS uses every host");
    // bmod -m to a host the job's queue does not use: refused the same way.
    let (id, _, _) = s.submit(T0, &alice(), to("high", &[])).expect("submit");
    let m = crate::modify::Modify {
        hosts: crate::modify::Change::Set(vec!["hostB".into()]),
        ..Default::default()
    };
    assert_eq!(
        s.modify(T0, &alice(), (id, 0), m),
        Err(SchedError::QueueHost("hostB".into()))
    );
}

/// `bsub -w "done(99999)"` or `-w "exit(nosuchname)"`: LSF's `No matching job found. Job
/// not submitted.` A job id names any job mbatchd holds (finished ones until they are
/// cleaned), an element `id[i]` or `name[i]` that element, a name the submitter's own
/// jobs; every job the condition names must be found.
#[test]
fn item7_a_dependency_naming_no_job_is_refused() {
    let mut s = up();
    s.submit(T0, &alice(), named("a", "prep")).expect("submit"); // 1
    s.submit(T0, &alice(), named("b", "arr[1-3]"))
        .expect("submit"); // 2
    s.submit(T0, &bob(), named("c", "bobs")).expect("submit"); // 3
    for bad in [
        "done(99999)",
        "exit(nosuchname)",
        "ended(prep) && done(99999)",
        "done(1) || exit(nosuchname)",
        "done(arr[7])",
        "done(2[9])",
        "done(\"pr*x\")",
        "done(bobs)",
        "!started(9999)",
    ] {
        assert_eq!(
            s.submit(T0, &alice(), dep("x", bad)),
            Err(SchedError::NoJob),
            "{bad}"
        );
    }
    assert_eq!(SchedError::NoJob.to_string(), "No matching job found");
    assert_eq!(s.jobs.len(), 5, "no job was added");
    for good in [
        "done(1)",
        "done(prep)",
        "exit(pre*)",
        "ended(\"prep\")",
        "done(arr[2])",
        "ended(arr)",
        "done(2[3])",
        "done(2)",
        "done(3)",
        "started(1) && !exit(2[1])",
    ] {
        s.submit(T0, &alice(), dep("x", good))
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    // `[*]` names the elements of an array job of the same size.
    let mut pair = dep("y", "done(arr[*])");
    pair.job_name = "pair[1-3]".into();
    s.submit(T0, &alice(), pair).expect("done(arr[*])");

    // A job cleaned from memory (CLEAN_PERIOD) is no longer found, as in LSF.
    s.schedule(T0);
    finish(&mut s, (1, 0), 0, 1);
    s.tick(T0 + 3_700_000);
    assert!(!s.jobs.contains_key(&(1, 0)));
    assert_eq!(
        s.submit(T0 + 3_700_000, &alice(), dep("late", "done(1)")),
        Err(SchedError::NoJob)
    );

    // bmod -w is held to the same rule.
    let (id, _, _) = s
        .submit(T0 + 3_700_000, &alice(), cmd("m"))
        .expect("submit");
    let m = crate::modify::Modify {
        depend_cond: crate::modify::Change::Set("done(99999)".into()),
        ..Default::default()
    };
    assert_eq!(
        s.modify(T0 + 3_700_000, &alice(), (id, 0), m),
        Err(SchedError::NoJob)
    );
}

/// Refusal happens at submission only: a logged JOB_NEW whose condition names a job
/// that is gone (cleaned since, or never known here) is replayed as it was accepted.
#[test]
fn item7_the_replay_takes_logged_dependencies_on_jobs_that_are_gone() {
    let mut s = up();
    let mut log = logged(&s.take_effects());
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.submit(T0, &alice(), dep("b", "done(1)")).expect("submit");
    s.schedule(T0);
    finish(&mut s, (1, 0), 0, 1);
    log.extend(logged(&s.take_effects()));
    // An older mbatchd accepted a condition naming no job: its record is replayed too.
    let Some(Event::JobNew { sub, .. }) = log
        .iter()
        .find(|e| matches!(e, Event::JobNew { job_id: 2, .. }))
        .cloned()
    else {
        panic!("JOB_NEW of job 2 in {log:?}");
    };
    let mut old = sub.clone();
    old.depend_cond = "done(99999)".into();
    log.push(Event::JobNew {
        time: secs(T0),
        job_id: 3,
        sub: old,
    });
    let mut r = Sched::new(cfg(), T0 + 5_000_000);
    for ev in &log {
        r.on_event(ev);
    }
    assert!(r.jobs.contains_key(&(2, 0)) && r.jobs.contains_key(&(3, 0)));
    // Job 1 is cleaned: job 2's condition still holds from what was remembered of it.
    r.tick(T0 + 5_000_000);
    assert!(!r.jobs.contains_key(&(1, 0)));
    assert!(r.jobs.contains_key(&(2, 0)));
}

/// `-R "select[bigmem"`: LSF's `Bad resource requirement syntax`; Basalt ran it as if
/// the bracket were closed. A bracket of any section must be closed, and closed once.
#[test]
fn item7_an_unclosed_bracket_in_a_resource_requirement_is_refused() {
    let mut c = cfg();
    c.res_kinds.insert("bigmem".into(), NameKind::Boolean);
    let mut s = up_with(c);
    let req = |r: &str| {
        let mut sub = cmd("x");
        sub.res_req = r.into();
        sub
    };
    for bad in [
        "select[bigmem",
        "select[bigmem] rusage[mem=10",
        "select[bigmem]]",
        "bigmem]",
        "order[r15s",
        "span[hosts=1",
    ] {
        assert_eq!(
            s.submit(T0, &alice(), req(bad)),
            Err(SchedError::BadResReq),
            "{bad}"
        );
    }
    for good in [
        "select[bigmem]",
        "bigmem",
        "select[bigmem] rusage[mem=10] span[hosts=1]",
        "select[bigmem && (mem > 1)] order[r15s]",
    ] {
        s.submit(T0, &alice(), req(good))
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// A fairshare queue whose USER_SHARES has no `default` (nor `others`, `all`, a group
/// of the user): LSF refuses a user it gives no share ("User cannot use the queue", at
/// bsub and bmod -q), administrators too (LSF: "Even cluster and queue administrators cannot submit jobs
/// to a fair share queue if they do not have a share assignment").
#[test]
fn item7_a_user_with_no_share_in_a_fairshare_queue_is_refused() {
    let fair = |list: &str| {
        let mut c = cfg();
        c.queues[0].user_shares = parse_share_list(list).unwrap_or_else(|e| panic!("{list}: {e}"));
        c.queues[0].fairshare = format!("USER_SHARES[{list}]");
        c.user_groups.insert(
            "team".into(),
            (
                UserList {
                    all: false,
                    names: vec!["bob".into()],
                    except: vec![],
                },
                None,
            ),
        );
        up_with(c)
    };
    let mut s = fair("[alice, 2]");
    assert_eq!(
        s.submit(T0, &bob(), cmd("b")),
        Err(SchedError::UserNotInQueue)
    );
    assert_eq!(
        s.submit(T0, &admin(), cmd("b")),
        Err(SchedError::UserNotInQueue)
    );
    s.submit(T0, &alice(), cmd("a")).expect("alice has a share");
    let mut high = cmd("h");
    high.queue = "high".into();
    s.submit(T0, &bob(), high)
        .expect("a queue without FAIRSHARE");
    for list in [
        "[alice, 2] [default, 1]",
        "[alice, 2] [team, 1]",
        "[team@, 1]",
        "[all, 1]",
        "[alice, 1] [others, 1]",
    ] {
        let mut s = fair(list);
        s.submit(T0, &bob(), cmd("b"))
            .unwrap_or_else(|e| panic!("{list}: {e}"));
    }
    // bmod -q into the queue is held to it too.
    let mut s = fair("[alice, 2]");
    let mut high = cmd("h");
    high.queue = "high".into();
    let (id, _, _) = s.submit(T0, &bob(), high).expect("submit");
    let m = crate::modify::Modify {
        queue: crate::modify::Change::Set("normal".into()),
        ..Default::default()
    };
    assert_eq!(
        s.modify(T0, &bob(), (id, 0), m),
        Err(SchedError::UserNotInQueue)
    );
}
