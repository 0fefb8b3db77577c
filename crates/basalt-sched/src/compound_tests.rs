//! Issue 50, item 9: compound (`2*{select[bigmem]} + 2*{select[fs]}`) and alternative
//! (`{select[bigmem]} || {select[fs]}`) resource requirements (LSF 9.1 and 10.1). Each
//! term is placed on hosts its own requirement selects, all terms or none; each reserves
//! its own `rusage[]`; alternatives are tried heaviest first; the requirement used is
//! logged in the JOB_START, kept while the job runs and rebuilt by a replay. Four hosts
//! of two slots, a manual clock.

use super::*;
use crate::logswitch_tests::replay;
use crate::tests::{T0, alice, cfg, cmd, host, logged};
use basalt_config::select::NameKind;

/// hostA, hostB have `bigmem`; hostC, hostD have `fs`; each up with 2 CPUs and 1000 MB
/// of free memory. The events logged so far.
fn four() -> (Sched, Vec<Event>) {
    let mut c = cfg();
    c.hosts = vec![
        host("hostA", 0),
        host("hostB", 1),
        host("hostC", 2),
        host("hostD", 3),
    ];
    for (i, h) in c.hosts.iter_mut().enumerate() {
        let flag = if i < 2 { "bigmem" } else { "fs" };
        h.statics.booleans.push(flag.into());
    }
    c.res_kinds.insert("bigmem".into(), NameKind::Boolean);
    c.res_kinds.insert("fs".into(), NameKind::Boolean);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB", "hostC", "hostD"] {
        let load = BTreeMap::from([("mem".to_owned(), 1000.0)]);
        s.lim_update(h, 2, 1.0, true, load);
    }
    s.start(T0, "hostA");
    let log = logged(&s.take_effects());
    (s, log)
}

fn asking(res_req: &str, n: u32) -> Submission {
    Submission {
        res_req: res_req.into(),
        num_processors: n,
        max_processors: n,
        ..cmd("mpirun a.out")
    }
}

/// Submit, run a pass, add what was logged to `log`; the job's key.
fn submit(s: &mut Sched, log: &mut Vec<Event>, sub: Submission) -> JobKey {
    let (id, _, _) = s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0 + 10);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    (id, 0)
}

/// The JOB_START logged for `key`: its hosts and effectiveResReq.
fn start_of(log: &[Event], key: JobKey) -> Option<(Vec<String>, String)> {
    log.iter().rev().find_map(|e| match e {
        Event::JobStart {
            key: k,
            hosts,
            effective_res_req,
            ..
        } if *k == key => Some((hosts.clone(), effective_res_req.clone())),
        _ => None,
    })
}

fn reserved_mem(s: &Sched, host: &str) -> f64 {
    let i = s.host_idx(host).expect("host");
    s.hosts[i].reserved.get("mem").copied().unwrap_or(0.0)
}

#[test]
fn issue_50_item_9_a_compound_requirement_places_each_term_on_the_hosts_it_selects() {
    let (mut s, mut log) = four();
    let k = submit(
        &mut s,
        &mut log,
        asking("2*{select[bigmem]} + 2*{select[fs]}", 0),
    );
    let (hosts, used) = start_of(&log, k).expect("started");
    assert_eq!(hosts.len(), 4, "{hosts:?}");
    assert!(
        hosts[..2].iter().all(|h| h == "hostA" || h == "hostB"),
        "{hosts:?}"
    );
    assert!(
        hosts[2..].iter().all(|h| h == "hostC" || h == "hostD"),
        "{hosts:?}"
    );
    assert_eq!(used, "2*{select[bigmem]} + 2*{select[fs]}");
    // -n is the terms' sum.
    assert_eq!(s.jobs[&k].sub.num_processors, 4);
    assert_eq!(s.jobs[&k].slots(), 4);
    assert_eq!(
        s.jobs[&k].used_req.as_deref(),
        Some("2*{select[bigmem]} + 2*{select[fs]}")
    );
    // Each term with its own span: two slots on one bigmem host, one on each fs host;
    // the last term takes what -n leaves.
    let (mut s, mut log) = four();
    let k = submit(
        &mut s,
        &mut log,
        asking(
            "2*{select[bigmem] span[hosts=1]} + {select[fs] span[ptile=1]}",
            4,
        ),
    );
    let (hosts, used) = start_of(&log, k).expect("started");
    assert_eq!(hosts[0], hosts[1], "{hosts:?}");
    let mut fs = hosts[2..].to_vec();
    fs.sort();
    assert_eq!(fs, ["hostC", "hostD"], "{hosts:?}");
    assert_eq!(
        used,
        "2*{select[bigmem] span[hosts=1]} + 2*{select[fs] span[ptile=1]}"
    );
}

#[test]
fn issue_50_item_9_a_compound_job_starts_with_all_its_terms_or_none() {
    let (mut s, mut log) = four();
    // The fs hosts are full.
    for _ in 0..4 {
        submit(&mut s, &mut log, asking("select[fs]", 1));
    }
    let k = submit(
        &mut s,
        &mut log,
        asking("2*{select[bigmem]} + 1*{select[fs]}", 0),
    );
    assert_eq!(s.jobs[&k].state, JobState::Pend);
    assert!(start_of(&log, k).is_none());
    // It gives the fs hosts' reason; it holds no bigmem slot: a job wanting all four
    // starts.
    let reasons = &s.jobs[&k].pend_reasons;
    assert!(
        reasons.values().flatten().any(|h| h == "hostC"),
        "{reasons:?}"
    );
    let all = submit(&mut s, &mut log, asking("select[bigmem]", 4));
    assert_eq!(s.jobs[&all].state, JobState::Run);
    assert_eq!(s.jobs[&k].state, JobState::Pend);
}

#[test]
fn issue_50_item_9_each_term_reserves_its_own_rusage() {
    let (mut s, mut log) = four();
    let k = submit(
        &mut s,
        &mut log,
        asking(
            "2*{select[bigmem] rusage[mem=300] span[hosts=1]} + 1*{select[fs] rusage[mem=100]}",
            0,
        ),
    );
    let (hosts, _) = start_of(&log, k).expect("started");
    let big = hosts[0].clone();
    let fs = hosts[2].clone();
    s.schedule(T0 + 20);
    let on_big = reserved_mem(&s, &big);
    let on_fs = reserved_mem(&s, &fs);
    assert!(on_big >= 300.0, "{on_big}");
    assert_eq!(on_fs, 100.0);
    let other_big = if big == "hostA" { "hostB" } else { "hostA" };
    assert_eq!(reserved_mem(&s, other_big), 0.0);
    // A core rebuilt from the log reserves the same on the same hosts.
    let mut r = replay(s.cfg.clone(), T0 + 20, &log);
    for h in ["hostA", "hostB", "hostC", "hostD"] {
        let load = BTreeMap::from([("mem".to_owned(), 1000.0)]);
        r.lim_update(h, 2, 1.0, true, load);
    }
    r.schedule(T0 + 20);
    assert_eq!(reserved_mem(&r, &big), on_big);
    assert_eq!(reserved_mem(&r, &fs), on_fs);
    // What is left of a host's memory is what the next job sees: 1000 − 300 on the
    // bigmem host cannot give 800 more.
    let next = submit(
        &mut s,
        &mut log,
        Submission {
            asked_hosts: vec![big.clone()],
            ..asking("rusage[mem=800]", 1)
        },
    );
    assert_eq!(s.jobs[&next].state, JobState::Pend);
}

#[test]
fn issue_50_item_9_an_alternative_requirement_uses_the_heaviest_that_fits() {
    let (mut s, mut log) = four();
    let alt = "{select[bigmem]}@1 || {select[fs]}@2";
    // The fs hosts weigh more.
    let a = submit(&mut s, &mut log, asking(alt, 4));
    let (hosts, used) = start_of(&log, a).expect("started");
    assert!(
        hosts.iter().all(|h| h == "hostC" || h == "hostD"),
        "{hosts:?}"
    );
    assert_eq!(used, "select[fs]");
    // They are full: the next uses the bigmem hosts.
    let b = submit(&mut s, &mut log, asking(alt, 4));
    let (hosts, used) = start_of(&log, b).expect("started");
    assert!(
        hosts.iter().all(|h| h == "hostA" || h == "hostB"),
        "{hosts:?}"
    );
    assert_eq!(used, "select[bigmem]");
    // Neither fits now: it waits.
    let c = submit(&mut s, &mut log, asking(alt, 1));
    assert_eq!(s.jobs[&c].state, JobState::Pend);
    // Without weights the first written that fits; a compound alternative in braces.
    let (mut s, mut log) = four();
    let k = submit(
        &mut s,
        &mut log,
        asking(
            "{select[bigmem] span[hosts=1]} || {1*{select[bigmem]} + {select[fs]}}",
            3,
        ),
    );
    let (hosts, used) = start_of(&log, k).expect("started");
    assert_eq!(used, "1*{select[bigmem]} + 2*{select[fs]}", "{hosts:?}");
}

#[test]
fn issue_50_item_9_the_requirement_used_is_fixed_while_running_and_replayed() {
    let (mut s, mut log) = four();
    let alt = "{select[bigmem]} || {select[fs]}";
    // bigmem hosts full: it takes fs.
    submit(&mut s, &mut log, asking("select[bigmem]", 4));
    let k = submit(&mut s, &mut log, asking(alt, 2));
    assert_eq!(s.jobs[&k].used_req.as_deref(), Some("select[fs]"));
    // The bigmem hosts free up: the running job keeps what it uses.
    let first = (1, 0);
    crate::tests::finish(&mut s, first, 0, 1);
    s.schedule(T0 + 6000);
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.jobs[&k].used_req.as_deref(), Some("select[fs]"));
    assert_eq!(s.jobs[&k].hosts.len(), 2);
    // A replay of the log gives it the same.
    let r = replay(s.cfg.clone(), T0 + 6000, &log);
    assert_eq!(r.jobs[&k].used_req.as_deref(), Some("select[fs]"));
    assert_eq!(r.jobs[&k].hosts, s.jobs[&k].hosts);
    // So does a log switch: its JOB_START is carried with the requirement used.
    let co = s.carry_over(T0 + 6000);
    let carried = replay(s.cfg.clone(), T0 + 6000, co.events());
    assert_eq!(carried.jobs[&k].used_req.as_deref(), Some("select[fs]"));
}

#[test]
fn issue_50_item_9_bad_compound_and_alternative_requirements_are_refused() {
    let (mut s, _) = four();
    let refused = |s: &mut Sched, rr: &str, n: (u32, u32)| {
        let sub = Submission {
            res_req: rr.into(),
            num_processors: n.0,
            max_processors: n.1,
            ..cmd("true")
        };
        s.submit(T0, &alice(), sub).expect_err(rr)
    };
    for bad in [
        "2*{select[bigmem]",
        "2*{select[bigmem]} + ",
        "x*{select[bigmem]}",
        "2*{select[nosuch]} + {select[fs]}",
        "2*{select[bigmem]} + 2*{select[fs]} || {select[fs]}",
    ] {
        assert!(
            matches!(refused(&mut s, bad, (0, 0)), SchedError::BadResReq),
            "{bad}"
        );
    }
    // rusage alternatives inside a term, a -n that is not the terms' sum, a range,
    // a last term left no slots.
    for (bad, n, why) in [
        (
            "2*{select[bigmem] rusage[mem=1||mem=2]} + {select[fs]}",
            (0, 0),
            "Alternative rusage",
        ),
        (
            "2*{select[bigmem]} + 2*{select[fs]}",
            (6, 6),
            "does not match",
        ),
        ("{select[bigmem]} || {select[fs]}", (2, 4), "range"),
        ("3*{select[bigmem]} + {select[fs]}", (2, 2), "no slots"),
    ] {
        match refused(&mut s, bad, n) {
            SchedError::BadArgument(m) => assert!(m.contains(why), "{bad}: {m}"),
            e => panic!("{bad}: {e:?}"),
        }
    }
    assert!(s.jobs.is_empty());
}

/// bmod -R cannot give a started job a compound or alternative requirement, nor change
/// the one a started job uses; a pending job takes one (checked as a submission is).
#[test]
fn issue_50_item_9_bmod_keeps_a_started_jobs_requirement_and_checks_a_pending_ones() {
    use crate::modify::{Change, Modify};
    let (mut s, mut log) = four();
    let comp = submit(
        &mut s,
        &mut log,
        asking("1*{select[bigmem]} + 1*{select[fs]}", 0),
    );
    let simple = submit(&mut s, &mut log, asking("select[fs]", 1));
    assert_eq!(s.jobs[&comp].state, JobState::Run);
    assert_eq!(s.jobs[&simple].state, JobState::Run);
    let set = |r: &str| Modify {
        res_req: Change::Set(r.into()),
        ..Default::default()
    };
    for (key, rr) in [
        (comp, "select[fs]"),
        (simple, "{select[bigmem]} || {select[fs]}"),
    ] {
        assert!(
            matches!(
                s.modify(T0 + 100, &alice(), key, set(rr)),
                Err(SchedError::ModifyRunning)
            ),
            "{rr}"
        );
    }
    assert_eq!(
        s.jobs[&comp].used_req.as_deref(),
        Some("1*{select[bigmem]} + 1*{select[fs]}")
    );
    // A pending one: a malformed requirement is refused, a good one taken.
    let mut hold = asking("select[fs]", 8);
    hold.options2 |= basalt_core::job::sub2::HOLD;
    let (id, _, _) = s.submit(T0, &alice(), hold).expect("submit");
    assert!(
        s.modify(T0 + 100, &alice(), (id, 0), set("2*{select[fs]"))
            .is_err()
    );
    s.modify(
        T0 + 100,
        &alice(),
        (id, 0),
        set("{select[bigmem]} || {select[fs]}"),
    )
    .expect("bmod");
    assert_eq!(
        s.jobs[&(id, 0)].sub.res_req,
        "{select[bigmem]} || {select[fs]}"
    );
}
