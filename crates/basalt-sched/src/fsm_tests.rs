//! Tests of what the FSM derives from the log: submission tokens (and, below, the
//! incremental pending order and slot counters against a recount).

use super::*;
use crate::tests::{T0, admin, alice, bob, cfg, cmd, logged, up_with};

fn with_token(c: &str, token: &str) -> Submission {
    Submission {
        submit_token: token.into(),
        ..cmd(c)
    }
}

#[test]
fn a_submission_token_names_its_job_until_the_job_is_forgotten() {
    let mut s = Sched::new(cfg(), T0);
    s.start(T0, "hostA");
    let mut log = logged(&s.take_effects());
    let (id, _, _) = s
        .submit(T0, &alice(), with_token("sleep 1", "tok-1"))
        .expect("submit");
    let (other, _, _) = s.submit(T0, &alice(), cmd("sleep 2")).expect("submit");
    log.extend(logged(&s.take_effects()));
    let known = |s: &Sched, t: &str| s.known_submission("alice", t).map(|k| k.0);
    assert_eq!(known(&s, "tok-1"), Some(id));
    assert_eq!(known(&s, "tok-2"), None);
    assert_eq!(known(&s, ""), None);
    // A reload knows the same.
    let mut r = Sched::new(cfg(), T0);
    r.replay(&log);
    assert_eq!(known(&r, "tok-1"), Some(id));
    // Killed and cleaned: remembered as gone, the token still answers.
    s.kill(T0 + 1000, &admin(), (id, 0), false, false)
        .expect("kill");
    s.kill(T0 + 1000, &admin(), (other, 0), false, false)
        .expect("kill");
    s.tick(T0 + 1000 + 3_600_000 + 1000);
    log.extend(logged(&s.take_effects()));
    assert!(s.job((id, 0)).is_none());
    assert_eq!(known(&s, "tok-1"), Some(id));
    // A log switch forgets cleaned jobs no dependency names, and their tokens with them.
    let co = s.carry_over(T0 + 3_700_000);
    s.replay(&co.appended);
    assert_eq!(known(&s, "tok-1"), None);
    let mut switched = Sched::new(cfg(), T0);
    switched.replay(co.events());
    assert_eq!(known(&switched, "tok-1"), None);
    assert_eq!(switched.tokens, s.tokens);
}

/// Issue 49 item 3: a token is looked up in its scope. Another user's submission with the
/// same token is a submission of its own, each user's resend gets their own job — after a
/// replay of the log too — and the answer repeats the first one's queue and whether it was
/// the default. A forwarded job's token (`mc:<cluster>:...`) cannot be sent by a user, and
/// a local job can never answer for a forward, or the other way round.
#[test]
fn issue49_item3_tokens_are_scoped_by_user_and_cluster_and_survive_replay() {
    let mut c = cfg();
    c.mc.recv
        .insert("normal".into(), (vec!["west".into()], None));
    let mut s = up_with(c.clone());
    let mut log = logged(&s.take_effects());
    let (a, queue, default) = s
        .submit(T0, &alice(), with_token("sleep 1", "same"))
        .expect("alice");
    assert!(default);
    log.extend(logged(&s.take_effects()));
    // Bob sends alice's token: nothing of alice's answers him.
    assert_eq!(s.known_submission("bob", "same"), None);
    let (b, _, _) = s
        .submit(T0, &bob(), with_token("sleep 2", "same"))
        .expect("bob");
    assert_ne!(a, b);
    let mut high = with_token("sleep 3", "other");
    high.queue = "normal".into();
    let (h, _, hdefault) = s.submit(T0, &alice(), high).expect("alice -q");
    assert!(!hdefault);
    log.extend(logged(&s.take_effects()));
    // A user cannot send a forwarded job's token.
    let forged = format!("{}west:101.0:1", crate::mc::MC_TOKEN_PREFIX);
    assert!(matches!(
        s.submit(T0, &alice(), with_token("x", &forged)),
        Err(SchedError::BadArgument(_))
    ));
    // The forward of west's job 101 is a job of its own, whoever it runs as, and its
    // repeat gets that job, not a local one.
    let fwd = Submission {
        queue: "normal".into(),
        user: "alice".into(),
        ..cmd("y")
    };
    let here = crate::mc::McAccounts {
        found: vec![("alice".into(), Some(alice().uid))],
        ..Default::default()
    };
    let (f, new) = s
        .mc_accept(T0, "west", (101, 0), 1, &here, fwd.clone())
        .expect("accepted");
    assert!(new);
    assert_eq!(
        s.mc_accept(T0, "west", (101, 0), 1, &here, fwd),
        Ok((f, false))
    );
    assert_eq!(s.known_submission("alice", &forged), None);
    log.extend(logged(&s.take_effects()));

    let mut r = up_with(c);
    r.take_effects();
    r.replay(&log);
    for core in [&s, &r] {
        assert_eq!(
            core.known_submission("alice", "same"),
            Some((a, queue.clone(), true))
        );
        assert_eq!(
            core.known_submission("bob", "same"),
            Some((b, queue.clone(), true))
        );
        assert_eq!(
            core.known_submission("alice", "other"),
            Some((h, "normal".into(), false))
        );
        assert_eq!(core.known_submission("bob", "other"), None);
        assert_eq!(core.known_submission("alice", &forged), None);
        assert_eq!(core.forwarded_submission("west", &forged), Some(f));
        assert_eq!(core.forwarded_submission("east", &forged), None);
    }
    assert_eq!(r.tokens, s.tokens);
}

/// The incremental counters equal a recount from scratch, and every view built on them
/// answers what the former walks over every job answered.
pub(crate) fn check_counts(s: &Sched, ctx: &str) {
    assert_eq!(
        s.counts.without_empty(),
        Counts::recount(s.jobs.values().map(|j| &**j)),
        "{ctx}: counters vs recount"
    );
    for j in s.jobs.values() {
        let walk = if j.state.is_pending() {
            1 + s
                .jobs
                .values()
                .filter(|o| o.queue == j.queue && o.state.is_pending() && o.order < j.order)
                .count() as u32
        } else {
            0
        };
        assert_eq!(s.position(j), walk, "{ctx}: position of {:?}", j.key());
    }
    let mut names: BTreeSet<String> = s.hosts.iter().map(|h| h.name.clone()).collect();
    names.extend(s.jobs.values().flat_map(|j| j.hosts.iter().cloned()));
    for host in &names {
        let mut c = (0, 0, 0, 0);
        for j in s.jobs.values().filter(|j| j.state.is_started()) {
            let n = j.hosts.iter().filter(|h| *h == host).count() as u32;
            c.0 += n;
            match j.state {
                JobState::Run | JobState::Unkwn => c.1 += n,
                JobState::Ssusp => c.2 += n,
                JobState::Ususp => c.3 += n,
                _ => {}
            }
        }
        assert_eq!(s.host_counts(host), c, "{ctx}: host_counts({host})");
        assert_eq!(s.used_slots(host), c.0, "{ctx}: used_slots({host})");
        let excl = s.jobs.values().any(|j| {
            j.state.is_started()
                && j.sub.options & basalt_core::job::sub::EXCLUSIVE != 0
                && j.hosts.contains(host)
        });
        assert_eq!(
            s.counts.hosts.get(host).is_some_and(|t| t.excl > 0),
            excl,
            "{ctx}: exclusive job on {host}"
        );
    }
    let mut queues: BTreeSet<String> = s.queues.iter().map(|q| q.name.clone()).collect();
    queues.extend(s.jobs.values().map(|j| j.queue.to_string()));
    for queue in &queues {
        let mut c = (0, 0, 0, 0, 0);
        for j in s.jobs.values().filter(|j| &j.queue == queue) {
            let n = j.slots();
            match j.state {
                JobState::Pend | JobState::Psusp => c.1 += n,
                JobState::Run | JobState::Unkwn => c.2 += n,
                JobState::Ssusp => c.3 += n,
                JobState::Ususp => c.4 += n,
                _ => continue,
            }
            c.0 += n;
        }
        assert_eq!(s.queue_counts(queue), c, "{ctx}: queue_counts({queue})");
    }
}

#[test]
fn counters_follow_submit_start_suspend_move_switch_finish_and_clean() {
    let mut s = Sched::new(cfg(), T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    let mut log = logged(&s.take_effects());
    let mut ids = Vec::new();
    for i in 0..8 {
        let mut sub = cmd(&format!("j{i}"));
        if i == 5 {
            sub.job_name = "arr[1-3]".into();
        }
        if i == 6 {
            sub.options |= basalt_core::job::sub::EXCLUSIVE;
        }
        if i % 3 == 0 {
            sub.queue = "high".into();
        }
        ids.push(s.submit(T0, &alice(), sub).expect("submit").0);
        check_counts(&s, "submit");
    }
    s.schedule(T0 + 1000);
    check_counts(&s, "schedule");
    let started: Vec<JobKey> = s
        .jobs
        .values()
        .filter(|j| j.state.is_started())
        .map(|j| j.key())
        .collect();
    assert!(!started.is_empty());
    s.stop(T0 + 2000, &alice(), started[0]).expect("stop");
    let pending: Vec<JobKey> = s
        .jobs
        .values()
        .filter(|j| j.state.is_pending())
        .map(|j| j.key())
        .collect();
    s.stop(T0 + 2000, &alice(), pending[0])
        .expect("stop pending");
    check_counts(&s, "stop");
    s.move_job(T0 + 2000, &alice(), pending[pending.len() - 1], 1, false)
        .expect("btop");
    s.move_job(T0 + 2000, &alice(), pending[1], 1, true)
        .expect("bbot");
    check_counts(&s, "move");
    s.switch(T0 + 2000, &alice(), pending[2], "high")
        .expect("switch");
    check_counts(&s, "switch");
    for key in &started {
        s.kill(T0 + 3000, &admin(), *key, true, false)
            .expect("kill");
    }
    check_counts(&s, "kill");
    s.tick(T0 + 3000 + 3_600_000 + 1000);
    check_counts(&s, "clean");
    log.extend(logged(&s.take_effects()));
    let mut r = Sched::new(cfg(), T0);
    r.replay(&log);
    check_counts(&r, "replayed");
    assert_eq!(r.counts.without_empty(), s.counts.without_empty());
    let _ = ids;
}
