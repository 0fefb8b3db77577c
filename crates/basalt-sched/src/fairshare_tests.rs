//! User-based fairshare in a queue (issue 24 item 1; seed 001 "Fairshare in Queues"):
//! a manual clock, queue `normal` with FAIRSHARE; two hosts of 20 slots where shares are
//! compared (the formula's `1 + job_slots` makes few slots a coarse measure).

use super::tests::expect::assert_effects;
use super::tests::*;
use super::*;
use crate::config::UserList;
use crate::fairshare::{FsFactors, FsHist};
use basalt_config::batch::{ShareEntry, parse_share_list};

fn who(user: &str) -> Caller {
    Caller {
        uid: 2000 + user.len() as u32,
        user: user.into(),
        host: "hostA".into(),
    }
}

fn shares(list: &str) -> Vec<ShareEntry> {
    parse_share_list(list).unwrap_or_else(|e| panic!("{list}: {e}"))
}

/// The test configuration with `normal`'s USER_SHARES `list` and these user groups
/// (name, members, their own USER_SHARES).
fn fair(list: &str, groups: &[(&str, &[&str], &str)]) -> Sched {
    fair_on(list, groups, 2)
}

/// [`fair`] with `slots` slots a host.
fn fair_on(list: &str, groups: &[(&str, &[&str], &str)], slots: u32) -> Sched {
    let mut c = cfg();
    for h in &mut c.hosts {
        h.mxj = Some(slots);
        h.mxj_ncpus = false;
    }
    c.queues[0].user_shares = shares(list);
    c.queues[0].fairshare = format!("USER_SHARES[{list}]");
    for (g, members, sub) in groups {
        c.user_groups.insert(
            (*g).into(),
            (
                UserList {
                    all: false,
                    names: members.iter().map(|m| (*m).to_owned()).collect(),
                    except: vec![],
                },
                None,
            ),
        );
        if !sub.is_empty() {
            c.group_shares.insert((*g).into(), shares(sub));
        }
    }
    up_with(c)
}

/// Submit `n` one-slot jobs for each user (all of the first user's first).
fn submit_all(s: &mut Sched, users: &[&str], n: usize, now: Millis) {
    for u in users {
        for _ in 0..n {
            s.submit(now, &who(u), cmd("sleep 10")).expect("submit");
        }
    }
}

/// Run `rounds` rounds of an hour: schedule, then every running job ends an hour
/// later. The users of the jobs started, in order.
fn rounds(s: &mut Sched, from: Millis, rounds: usize) -> Vec<String> {
    const HOUR: Millis = 3_600_000;
    let mut started = Vec::new();
    let mut seq = 1;
    for r in 0..rounds {
        let now = from + r as i64 * HOUR;
        s.schedule(now);
        let fx = s.take_effects();
        for (key, _) in dispatches(&fx) {
            started.push(s.jobs[&key].sub.user.to_string());
        }
        let running: Vec<JobKey> = s
            .jobs
            .values()
            .filter(|j| j.state == JobState::Run)
            .map(|j| j.key())
            .collect();
        for k in running {
            s.dispatch_accepted(now, k, 1, 100, 100);
            finish_at(s, k, 0, seq, now + HOUR);
            seq += 1;
        }
        s.take_effects();
    }
    started
}

fn count(v: &[String], u: &str) -> usize {
    v.iter().filter(|x| *x == u).count()
}

/// "Fairshare scheduling divides the processing power of the LSF cluster among users
/// and groups": shares 2:1 give 2:1 of the dispatches over time, although the first
/// user's jobs were all submitted first.
#[test]
fn two_users_with_shares_2_to_1_get_2_to_1_of_the_dispatches() {
    let mut s = fair_on("[alice, 2] [bob, 1]", &[], 20);
    submit_all(&mut s, &["alice", "bob"], 400, T0);
    let started = rounds(&mut s, T0, 10);
    assert_eq!(started.len(), 400);
    let (a, b) = (count(&started, "alice"), count(&started, "bob"));
    let ratio = a as f64 / b as f64;
    assert!((1.85..=2.15).contains(&ratio), "{a}:{b}");
    // Each hour too, not only in total.
    for hour in started.chunks(40) {
        let a = count(hour, "alice");
        assert!((25..=29).contains(&a), "{a} of 40");
    }
    // Without FAIRSHARE the queue is first come, first served.
    let mut c = cfg();
    for h in &mut c.hosts {
        h.mxj = Some(20);
        h.mxj_ncpus = false;
    }
    let mut s = up_with(c);
    submit_all(&mut s, &["alice", "bob"], 400, T0);
    let started = rounds(&mut s, T0, 10);
    assert_eq!(count(&started, "bob"), 0);
}

/// A user's finished jobs count against them, less and less: after HIST_HOURS an hour
/// counts a tenth.
#[test]
fn historical_usage_decays_with_hist_hours() {
    let f = FsFactors::default();
    assert!((f.decay(5 * 3_600_000) - 0.1).abs() < 1e-9);
    assert!((f.decay(10 * 3_600_000) - 0.01).abs() < 1e-9);
    let h = FsHist {
        cpu_s: 36_000.0,
        run_s: 7200.0,
        at: T0,
    };
    let later = h.at(T0 + 5 * 3_600_000, &f);
    assert!((later.cpu_s - 3600.0).abs() < 1e-6 && (later.run_s - 720.0).abs() < 1e-6);

    // alice ran a 10-hour job just now: bob (same shares, submitted later) takes every
    // slot.
    let mut s = fair("[alice, 1] [bob, 1]", &[]);
    s.fs_account_finish(
        (&"normal".into(), &"alice".into(), None),
        T0,
        (36_000.0, 36_000.0, 1),
    );
    submit_all(&mut s, &["alice", "bob"], 4, T0);
    let started = rounds(&mut s, T0, 1);
    assert_eq!(count(&started, "bob"), 4, "{started:?}");
    // Fifty hours later it has decayed away: they share again, 2:2.
    let mut s = fair("[alice, 1] [bob, 1]", &[]);
    s.fs_account_finish(
        (&"normal".into(), &"alice".into(), None),
        T0,
        (36_000.0, 36_000.0, 1),
    );
    let later = T0 + 50 * 3_600_000;
    submit_all(&mut s, &["alice", "bob"], 4, later);
    let started = rounds(&mut s, later, 1);
    assert_eq!((count(&started, "alice"), count(&started, "bob")), (2, 2));
}

/// "Hierarchical fairshare allows resources to be allocated to users in a hierarchical
/// manner ... Groups of users can collectively be allocated a share, and that share can
/// be further subdivided": two teams of one share each, team A split 3:1.
#[test]
fn a_hierarchical_share_tree_divides_a_groups_share_among_its_members() {
    let mut s = fair_on(
        "[teamA, 1] [teamB, 1]",
        &[
            ("teamA", &["ann", "al"], "[ann, 3] [al, 1]"),
            ("teamB", &["bo"], ""),
        ],
        20,
    );
    submit_all(&mut s, &["ann", "al", "bo"], 400, T0);
    let started = rounds(&mut s, T0, 10);
    assert_eq!(started.len(), 400);
    let (ann, al, bo) = (
        count(&started, "ann"),
        count(&started, "al"),
        count(&started, "bo"),
    );
    assert!((190..=210).contains(&bo), "teams {ann}+{al} : {bo}");
    let ratio = ann as f64 / al as f64;
    assert!((2.6..=3.4).contains(&ratio), "{ann}:{al}");
}

/// `[group@, n]` gives each member an account of n shares, `[default, n]` every user
/// not named, `[others, n]` every user not named together; a user with no share cannot
/// submit (issue 50 item 7), and one whose share a new list took away (the jobs of the
/// log, replayed on it) is served after every account, in a row of 0 shares under their
/// own name.
#[test]
fn group_at_default_and_users_without_a_share() {
    let s = fair("[dev@, 2] [default, 1]", &[("dev", &["dan", "dee"], "")]);
    let q = &s.queues[0].user_shares;
    assert_eq!(s.share_path_of(q, "dan", ""), Some(vec![("dan".into(), 2)]));
    assert_eq!(s.share_path_of(q, "dee", ""), Some(vec![("dee".into(), 2)]));
    assert_eq!(s.share_path_of(q, "zed", ""), Some(vec![("zed".into(), 1)]));
    let s = fair("[alice, 1] [others, 3]", &[]);
    let q = &s.queues[0].user_shares;
    assert_eq!(
        s.share_path_of(q, "alice", ""),
        Some(vec![("alice".into(), 1)])
    );
    assert_eq!(
        s.share_path_of(q, "zed", ""),
        Some(vec![("others".into(), 3)])
    );
    let mut s = fair("[alice, 1]", &[]);
    assert_eq!(s.share_path_of(&s.queues[0].user_shares, "bob", ""), None);
    assert_eq!(
        s.submit(T0, &who("bob"), cmd("b")),
        Err(SchedError::UserNotInQueue)
    );
    let mut s = fair("[alice, 1] [bob, 1]", &[]);
    let mut log = logged(&s.take_effects());
    submit_all(&mut s, &["bob", "alice"], 4, T0);
    log.extend(logged(&s.take_effects()));
    let mut r = fair("[alice, 1]", &[]);
    r.replay(log.iter());
    let started = rounds(&mut r, T0, 1);
    assert_eq!(started, vec!["alice"; 4]);
    let rows = r.share_info(0, T0);
    assert!(
        rows[0]
            .rows
            .iter()
            .any(|row| row.name == "bob" && row.shares == 0),
        "{rows:?}"
    );
}

/// The history is taken from the jobs' ends in lsb.events: a replay rebuilds it.
#[test]
fn the_fairshare_history_is_rebuilt_by_replay() {
    let mut s = fair("[alice, 2] [bob, 1]", &[]);
    let mut all = logged(&s.take_effects());
    submit_all(&mut s, &["alice", "bob"], 6, T0);
    all.extend(logged(&s.take_effects()));
    for r in 0..3 {
        let now = T0 + r * 10_000;
        s.schedule(now);
        let running: Vec<JobKey> = s
            .jobs
            .values()
            .filter(|j| j.state == JobState::Run)
            .map(|j| j.key())
            .collect();
        for (i, k) in running.into_iter().enumerate() {
            s.dispatch_accepted(now, k, 1, 100, 100);
            finish_at(&mut s, k, 0, 100 + r as u64 * 10 + i as u64, now + 10_000);
        }
        all.extend(logged(&s.take_effects()));
    }
    assert!(!s.fs_hist.is_empty());
    let mut r = Sched::new(s.config().clone(), T0);
    r.replay(all.iter());
    assert_eq!(r.fs_hist, s.fs_hist);
}

/// A log switch carries the history (LOG_SWITCH's appended fields): the new file's
/// replay has the same usage, decayed to the switch, and the finished jobs carried with
/// it are not counted twice.
#[test]
fn the_fairshare_history_survives_a_log_switch() {
    let mut s = fair_on("[alice, 2] [bob, 1]", &[], 4);
    submit_all(&mut s, &["alice", "bob"], 20, T0);
    rounds(&mut s, T0, 3);
    let now = T0 + 4 * 3_600_000;
    let co = s.carry_over(now);
    let Some(Event::LogSwitch { fairshare, .. }) = co.appended.last() else {
        panic!("LOG_SWITCH last");
    };
    assert_eq!(fairshare.len(), 2);
    let r = crate::logswitch_tests::replay(s.config().clone(), now, co.events());
    let f = FsFactors::default();
    for (k, h) in &s.fs_hist {
        let (a, b) = (h.at(now, &f), r.fs_hist[k].at(now, &f));
        assert!(
            (a.cpu_s - b.cpu_s).abs() < 0.01 && (a.run_s - b.run_s).abs() < 0.01,
            "{k:?}: {a:?} vs {b:?}"
        );
    }
    assert_eq!(r.fs_hist.len(), s.fs_hist.len());
}

/// `bsub -G group`: the job is charged to that group's share (when the list has one and
/// the group has the user); without it, to the first group that has the user.
#[test]
fn bsub_g_charges_the_job_to_the_group_it_names() {
    let s = fair(
        "[chem, 1] [phys, 1]",
        &[("chem", &["cy"], ""), ("phys", &["cy"], "")],
    );
    let q = &s.queues[0].user_shares;
    assert_eq!(s.share_path_of(q, "cy", ""), Some(vec![("chem".into(), 1)]));
    assert_eq!(
        s.share_path_of(q, "cy", "phys"),
        Some(vec![("phys".into(), 1)])
    );
    // A group that does not have the user, or is not in the list: the default choice.
    assert_eq!(
        s.share_path_of(q, "cy", "bio"),
        Some(vec![("chem".into(), 1)])
    );
    // Jobs of both accounts: they share the slots 1:1 although all of chem's came first.
    let mut s = s;
    for g in ["chem", "phys"] {
        for _ in 0..4 {
            let mut sub = cmd("sleep 10");
            sub.user_group = g.into();
            s.submit(T0, &who("cy"), sub).expect("submit");
        }
    }
    s.take_effects();
    s.schedule(T0);
    // chem's jobs are 1-4, phys's 5-8: the accounts take turns.
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
            "Log JOB_START 5 @0 on hostB",
            "Dispatch 5 -> hostB attempt 1",
            "Log JOB_START 2 @0 on hostA",
            "Dispatch 2 -> hostA attempt 1",
            "Log JOB_START 6 @0 on hostB",
            "Dispatch 6 -> hostB attempt 1",
        ],
    );
}

/// bqueues -l's SHARE_INFO_FOR: every account the list names (a group's own tree under
/// it), with its slots and priority.
#[test]
fn share_info_lists_each_level_of_the_tree() {
    let mut s = fair_on(
        "[teamA, 1] [teamB, 1] [default, 1]",
        &[
            ("teamA", &["ann", "al"], "[ann, 3] [al, 1]"),
            ("teamB", &["bo"], ""),
        ],
        4,
    );
    submit_all(&mut s, &["ann", "zed"], 1, T0);
    s.schedule(T0);
    let info = s.share_info_of("normal", T0);
    let paths: Vec<&str> = info.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(paths, vec!["normal/", "normal/teamA/"]);
    let names = |i: usize| -> Vec<(String, u32, u32)> {
        info[i]
            .rows
            .iter()
            .map(|r| (r.name.clone(), r.shares, r.started))
            .collect()
    };
    assert_eq!(
        names(0),
        vec![
            ("teamA".to_string(), 1, 1),
            ("zed".to_string(), 1, 1),
            ("teamB".to_string(), 1, 0)
        ]
    );
    assert_eq!(
        names(1),
        vec![("ann".to_string(), 3, 1), ("al".to_string(), 1, 0)]
    );
    // 1 share over (1 + 1 slot) × RUN_JOB_FACTOR 3, plus a little run time.
    assert!((info[0].rows[0].priority - 1.0 / 6.0).abs() < 1e-6);
    assert!(s.share_info_of("high", T0).is_empty());
}

/// "Host partition provides fairshare policy at the host level ... it applies to all
/// queues that use hosts in the host partition": a plain queue on the partition's hosts
/// dispatches by the partition's shares, with its users' usage counted across queues.
#[test]
fn a_host_partition_applies_its_shares_to_the_queues_on_its_hosts() {
    let setup = |hosts: Vec<String>| {
        let mut c = cfg();
        for h in &mut c.hosts {
            h.mxj = Some(20);
            h.mxj_ncpus = false;
        }
        c.host_partitions.push(crate::HostPart {
            name: "part1".into(),
            hosts,
            user_shares: shares("[alice, 2] [bob, 1]"),
        });
        up_with(c)
    };
    let mut s = setup(vec!["hostA".into(), "hostB".into()]);
    assert_eq!(s.partition_of(0), Some(0));
    submit_all(&mut s, &["alice", "bob"], 400, T0);
    let started = rounds(&mut s, T0, 10);
    let ratio = count(&started, "alice") as f64 / count(&started, "bob") as f64;
    assert!((1.85..=2.15).contains(&ratio), "{ratio}");
    // Its history is the partition's, not the queue's.
    assert!(
        s.fs_hist
            .keys()
            .any(|(k, u)| &**k == "/part1" && &**u == "bob")
    );
    let info = s.partition_share_info(0, T0 + 10 * 3_600_000);
    assert_eq!(info[0].path, "part1/");
    assert_eq!(info[0].rows.len(), 2);
    // "Fairshare scheduling at the level of queues and host partitions are mutually
    // exclusive": a queue with FAIRSHARE of its own keeps it.
    let mut c = s.config().clone();
    c.queues[0].user_shares = shares("[bob, 1]");
    let s2 = up_with(c);
    assert_eq!(s2.partition_of(0), None);
    // A partition without every host of the queue does not order it.
    let mut s = setup(vec!["hostA".into()]);
    assert_eq!(s.partition_of(0), None);
    submit_all(&mut s, &["alice", "bob"], 40, T0);
    let started = rounds(&mut s, T0, 1);
    assert_eq!(count(&started, "bob"), 0);
}

/// "LSF allows fairshare policies to be defined at the queue level so that different
/// queues can have different sharing policies": the same two users with opposite shares
/// in two queues get opposite halves of the slots.
#[test]
fn different_queues_can_have_different_sharing_policies() {
    for (queue, alice_more) in [("normal", true), ("high", false)] {
        let mut c = cfg();
        for h in &mut c.hosts {
            h.mxj = Some(20);
            h.mxj_ncpus = false;
        }
        c.queues[0].user_shares = shares("[alice, 2] [bob, 1]");
        c.queues[1].user_shares = shares("[alice, 1] [bob, 2]");
        let mut s = up_with(c);
        for u in ["alice", "bob"] {
            for _ in 0..40 {
                let mut sub = cmd("sleep 100");
                sub.queue = queue.into();
                s.submit(T0, &who(u), sub).expect("submit");
            }
        }
        s.schedule(T0);
        let running = |u: &str| {
            s.jobs
                .values()
                .filter(|j| j.state == JobState::Run && *j.sub.user == *u)
                .count()
        };
        let (more, less) = if alice_more {
            (running("alice"), running("bob"))
        } else {
            (running("bob"), running("alice"))
        };
        assert_eq!(more + less, 40);
        assert!(
            (25..=28).contains(&more) && (12..=15).contains(&less),
            "{queue}: {more}:{less}"
        );
    }
}
