//! `rusage[]` alternatives (issue 20 item 1, LSF 10.1's `rusage[a || b]`): the first
//! alternative a host can satisfy is reserved there; the job keeps reserving it across a
//! replay and a log switch; a job no alternative fits pends with the rusage reason.

use super::*;
use crate::reslimits::{RES_LIMIT_REASON, ResLimit};
use crate::tests::{T0, alice, cfg, cmd, dispatches, logged};
use basalt_core::job::pend;

/// Both hosts up with 2 CPUs and the free memory (MB) given; the events logged so far.
fn core_mem(c: SchedConfig, mem_a: f64, mem_b: f64) -> (Sched, Vec<Event>) {
    let mut s = Sched::new(c, T0);
    load(&mut s, mem_a, mem_b);
    s.start(T0, "hostA");
    let log = logged(&s.take_effects());
    (s, log)
}

fn load(s: &mut Sched, mem_a: f64, mem_b: f64) {
    for (h, mem) in [("hostA", mem_a), ("hostB", mem_b)] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::from([("mem".to_owned(), mem)]));
    }
}

fn asking(res_req: &str) -> Submission {
    Submission {
        res_req: res_req.into(),
        ..cmd("true")
    }
}

/// Submit, run a pass, add what was logged to `log`; where the job went.
fn placed(s: &mut Sched, log: &mut Vec<Event>, sub: Submission) -> (JobKey, Option<String>) {
    let (id, _, _) = s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0 + 10);
    let eff = s.take_effects();
    log.extend(logged(&eff));
    let host = dispatches(&eff)
        .into_iter()
        .find(|(k, _)| k.0 == id)
        .map(|(_, h)| h);
    ((id, 0), host)
}

/// The JOB_START logged for `key`: its effectiveResReq.
fn effective(log: &[Event], key: JobKey) -> Option<&str> {
    log.iter().rev().find_map(|e| match e {
        Event::JobStart {
            key: k,
            effective_res_req,
            ..
        } if *k == key => Some(effective_res_req.as_str()),
        _ => None,
    })
}

fn reserved(s: &Sched, host: &str) -> Option<f64> {
    let i = s.host_idx(host).expect("host");
    s.hosts[i].reserved.get("mem").copied()
}

fn mem_reserve_reason() -> u32 {
    let mem = basalt_core::BUILTIN_INDICES
        .iter()
        .position(|i| i.name() == "mem")
        .expect("mem is a built-in index");
    pend::RESERVE_BASE + mem as u32
}

const ALTS: &str = "rusage[mem=20000 || mem=10000]";

#[test]
fn a_host_short_of_the_first_alternative_takes_the_second_and_reserves_it() {
    let (mut s, mut log) = core_mem(cfg(), 15_000.0, 1_000.0);
    let (key, host) = placed(&mut s, &mut log, asking(ALTS));
    assert_eq!(host.as_deref(), Some("hostA"));
    assert_eq!(s.jobs[&key].rusage_alt, 1);
    assert_eq!(reserved(&s, "hostA"), Some(10_000.0));
    assert_eq!(effective(&log, key), Some("rusage[mem=10000MB]"));
    // 5000 MB left on hostA, 1000 on hostB: 6000 fit nowhere...
    let (late, host) = placed(&mut s, &mut log, asking("rusage[mem=6000]"));
    assert_eq!(host, None);
    let r = &s.jobs[&late].pend_reasons;
    assert_eq!(r.get(&mem_reserve_reason()).map(Vec::len), Some(2), "{r:?}");
    // ...4000 do (the second alternative's 10000 are reserved, not the first's 20000).
    let (_, host) = placed(&mut s, &mut log, asking("rusage[mem=4000]"));
    assert_eq!(host.as_deref(), Some("hostA"));
}

#[test]
fn the_first_alternative_is_used_where_it_fits() {
    let (mut s, mut log) = core_mem(cfg(), 30_000.0, 1_000.0);
    let (key, host) = placed(&mut s, &mut log, asking(ALTS));
    assert_eq!(host.as_deref(), Some("hostA"));
    assert_eq!(s.jobs[&key].rusage_alt, 0);
    assert_eq!(reserved(&s, "hostA"), Some(20_000.0));
    assert_eq!(effective(&log, key), Some("rusage[mem=20000MB]"));
    assert_eq!(
        placed(&mut s, &mut log, asking("rusage[mem=11000]")).1,
        None
    );
    // A job without alternatives logs no effectiveResReq.
    let (plain, host) = placed(&mut s, &mut log, asking("rusage[mem=500]"));
    assert!(host.is_some());
    assert_eq!(effective(&log, plain), Some(""));
}

#[test]
fn a_job_no_alternative_fits_pends_with_the_rusage_reason() {
    let (mut s, mut log) = core_mem(cfg(), 5_000.0, 5_000.0);
    let (key, host) = placed(&mut s, &mut log, asking(ALTS));
    assert_eq!(host, None);
    let r = &s.jobs[&key].pend_reasons;
    assert_eq!(
        r.keys().copied().collect::<Vec<_>>(),
        vec![mem_reserve_reason()]
    );
    assert_eq!(r.get(&mem_reserve_reason()).map(Vec::len), Some(2), "{r:?}");
}

#[test]
fn each_alternative_keeps_its_own_duration() {
    let mut c = cfg();
    c.hello_interval_secs = 3600;
    let (mut s, mut log) = core_mem(c, 15_000.0, 1_000.0);
    let (_, host) = placed(
        &mut s,
        &mut log,
        asking("rusage[mem=20000 || mem=10000:duration=1]"),
    );
    assert_eq!(host.as_deref(), Some("hostA"));
    assert_eq!(reserved(&s, "hostA"), Some(10_000.0));
    // Two minutes on, the second alternative's reservation is over.
    let later = T0 + 2 * 60_000;
    s.tick(later);
    s.schedule(later);
    s.take_effects();
    assert_eq!(reserved(&s, "hostA"), None);
}

/// A fresh core rebuilt from `events`, with the same hosts and load.
fn rebuilt(c: SchedConfig, events: &[Event], mem_a: f64, mem_b: f64) -> Sched {
    let mut r = Sched::new(c, T0 + 20);
    r.replay(events.iter());
    load(&mut r, mem_a, mem_b);
    r.start(T0 + 20, "hostA");
    r.take_effects();
    r
}

/// After a restart, what fits on hostA next to the started job: (6000 MB, 4000 MB).
fn fits_after(r: &mut Sched) -> (bool, bool) {
    let mut log = Vec::new();
    let six = placed(r, &mut log, asking("rusage[mem=6000]")).1.is_some();
    let four = placed(r, &mut log, asking("rusage[mem=4000]")).1.is_some();
    (six, four)
}

#[test]
fn a_restarted_core_keeps_the_started_job_reserving_its_alternative() {
    let (mut s, mut log) = core_mem(cfg(), 15_000.0, 1_000.0);
    let (key, _) = placed(&mut s, &mut log, asking(ALTS));
    assert_eq!(s.jobs[&key].rusage_alt, 1);
    let mut r = rebuilt(cfg(), &log, 15_000.0, 1_000.0);
    assert_eq!(r.jobs[&key].state, JobState::Run);
    assert_eq!(r.jobs[&key].rusage_alt, 1);
    assert_eq!(fits_after(&mut r), (false, true));
    assert_eq!(reserved(&r, "hostA"), Some(14_000.0));
    // A log written before the alternative was kept (no effectiveResReq) replays as the
    // first: 20000 MB held on hostA, nothing more fits there.
    let old: Vec<Event> = log
        .iter()
        .map(|e| match e {
            Event::JobStart {
                time, key, hosts, ..
            } => Event::JobStart {
                time: *time,
                key: *key,
                hosts: hosts.clone(),
                effective_res_req: String::new(),
            },
            other => other.clone(),
        })
        .collect();
    let mut r = rebuilt(cfg(), &old, 15_000.0, 1_000.0);
    assert_eq!(r.jobs[&key].rusage_alt, 0);
    assert_eq!(fits_after(&mut r), (false, false));
    // An effectiveResReq that names none of its alternatives: the first, too.
    let odd: Vec<Event> = log
        .iter()
        .map(|e| match e {
            Event::JobStart {
                time, key, hosts, ..
            } => Event::JobStart {
                time: *time,
                key: *key,
                hosts: hosts.clone(),
                effective_res_req: "select[type==any] rusage[mem=123]".into(),
            },
            other => other.clone(),
        })
        .collect();
    let r = rebuilt(cfg(), &odd, 15_000.0, 1_000.0);
    assert_eq!(r.jobs[&key].rusage_alt, 0);
}

#[test]
fn a_log_switch_carries_the_alternative_over() {
    let (mut s, mut log) = core_mem(cfg(), 15_000.0, 1_000.0);
    let (key, _) = placed(&mut s, &mut log, asking(ALTS));
    let co = s.carry_over(T0 + 15);
    let carried = co.carried.iter().find_map(|e| match e {
        Event::JobStart {
            key: k,
            effective_res_req,
            ..
        } if *k == key => Some(effective_res_req.clone()),
        _ => None,
    });
    assert_eq!(carried.as_deref(), Some("rusage[mem=10000MB]"));
    let events: Vec<Event> = co.carried.iter().chain(&co.appended).cloned().collect();
    let mut r = rebuilt(cfg(), &events, 15_000.0, 1_000.0);
    assert_eq!(r.jobs[&key].rusage_alt, 1);
    assert_eq!(fits_after(&mut r), (false, true));
}

#[test]
fn a_job_on_several_hosts_uses_one_alternative_on_all_of_them() {
    // hostA fits both alternatives, hostB only the second: both reserve the second.
    let (mut s, mut log) = core_mem(cfg(), 30_000.0, 15_000.0);
    let two = Submission {
        num_processors: 2,
        max_processors: 2,
        ..asking("rusage[mem=20000 || mem=10000] span[ptile=1]")
    };
    let (key, host) = placed(&mut s, &mut log, two);
    assert!(host.is_some());
    let mut hosts = s.jobs[&key].hosts.clone();
    hosts.sort();
    assert_eq!(hosts, vec!["hostA", "hostB"]);
    assert_eq!(s.jobs[&key].rusage_alt, 1);
    assert_eq!(reserved(&s, "hostA"), Some(10_000.0));
    assert_eq!(reserved(&s, "hostB"), Some(10_000.0));
}

#[test]
fn a_job_whose_hosts_share_no_alternative_pends() {
    // hostA has the memory of the first alternative only, hostB the swap of the second.
    let mut s = Sched::new(cfg(), T0);
    for (h, mem, swp) in [("hostA", 30_000.0, 0.0), ("hostB", 100.0, 30_000.0)] {
        let l = BTreeMap::from([("mem".to_owned(), mem), ("swp".to_owned(), swp)]);
        s.lim_update(h, 2, 1.0, true, l);
    }
    s.start(T0, "hostA");
    s.take_effects();
    let mut log = Vec::new();
    let two = Submission {
        num_processors: 2,
        max_processors: 2,
        ..asking("rusage[mem=20000 || swp=10000] span[ptile=1]")
    };
    let (key, host) = placed(&mut s, &mut log, two);
    assert_eq!(host, None, "{:?}", s.jobs[&key].hosts);
    // One slot each, on a host of its own: it runs there.
    let (one, host) = placed(&mut s, &mut log, asking("rusage[mem=20000 || swp=10000]"));
    assert!(host.is_some());
    let alt = if host.as_deref() == Some("hostA") {
        0
    } else {
        1
    };
    assert_eq!(s.jobs[&one].rusage_alt, alt);
}

#[test]
fn an_alternative_over_a_mem_limit_gives_way_to_the_next() {
    let mut c = cfg();
    c.limits = vec![ResLimit {
        amounts: vec![("mem".into(), 12_000.0)],
        ..crate::reslimit_tests::limit("mem")
    }];
    let (mut s, mut log) = core_mem(c, 30_000.0, 30_000.0);
    let (key, host) = placed(&mut s, &mut log, asking(ALTS));
    assert!(host.is_some());
    assert_eq!(s.jobs[&key].rusage_alt, 1);
    // 2000 MB of the limit left: every alternative of another such job goes over it.
    let (late, host) = placed(&mut s, &mut log, asking(ALTS));
    assert_eq!(host, None);
    assert_eq!(
        s.jobs[&late]
            .pend_reasons
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![RES_LIMIT_REASON]
    );
    let (_, host) = placed(&mut s, &mut log, asking("rusage[mem=3000 || mem=2000]"));
    assert!(host.is_some());
}

#[test]
fn a_malformed_alternative_is_refused_at_submission() {
    let (mut s, _) = core_mem(cfg(), 1.0, 1.0);
    for bad in [
        "rusage[mem=1 || mem]",
        "rusage[mem=1 ||]",
        "rusage[mem=1 || decay=5]",
    ] {
        assert_eq!(
            s.submit(T0, &alice(), asking(bad)).err(),
            Some(SchedError::BadResReq),
            "{bad}"
        );
    }
}
