//! The scenarios run on the simulated network: election, failover, partitions, stalls
//! and host status.

use std::collections::{BTreeMap, BTreeSet};

use basalt_core::LoadIndex;

use super::*;

#[test]
fn first_host_is_master_at_boot() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.assert_all_follow("hostA");
    assert_eq!(sim.epoch_of("hostB"), sim.epoch_of("hostA"));
}

#[test]
fn master_table_fills_with_every_host() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    let a = &sim.nodes["hostA"];
    let statuses: Vec<_> = a.hosts().map(|h| (h.name.clone(), h.status)).collect();
    assert_eq!(
        statuses,
        vec![
            ("hostA".to_owned(), HostStatus::Ok),
            ("hostB".to_owned(), HostStatus::Ok),
            ("hostC".to_owned(), HostStatus::Ok)
        ]
    );
    assert!(a.hosts().all(|h| h.info.is_some() && h.load.is_some()));
}

#[test]
fn rank_one_takes_over_after_the_inactivity_limit_and_probe() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    let e1 = sim.epoch_of("hostA");
    sim.kill("hostA");
    let killed_at = sim.now;
    // Before MASTER_INACTIVITY_LIMIT intervals nothing changes.
    sim.advance(150);
    assert_eq!(sim.master_of("hostB").as_deref(), Some("hostA"));
    // Takeover needs at most limit (200) + an interval of jitter + probe timeout (200).
    sim.advance(450);
    assert_eq!(sim.masters(), vec!["hostB".to_owned()]);
    assert_eq!(sim.master_of("hostC").as_deref(), Some("hostB"));
    assert!(sim.epoch_of("hostB") > e1, "a new term has a later epoch");
    let took_over = sim
        .changes
        .iter()
        .find(|(_, h, m, _)| h == "hostB" && m.as_deref() == Some("hostB"))
        .map(|(t, _, _, _)| *t)
        .expect("hostB became master");
    let waited = took_over - killed_at;
    assert!((200..=500).contains(&waited), "took over after {waited} ms");
}

#[test]
fn returning_first_host_becomes_master_again() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.kill("hostA");
    sim.advance(800);
    sim.assert_all_follow("hostB");
    let eb = sim.epoch_of("hostB");
    sim.boot("hostA");
    sim.advance(300);
    sim.assert_all_follow("hostA");
    assert!(sim.epoch_of("hostA") > eb, "epochs only grow");
    assert_eq!(sim.epoch_of("hostC"), sim.epoch_of("hostA"));
}

#[test]
fn second_failure_moves_mastership_down_the_list() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC", "hostD"]);
    sim.advance(300);
    sim.kill("hostA");
    sim.advance(800);
    sim.assert_all_follow("hostB");
    sim.kill("hostB");
    sim.advance(1200);
    sim.assert_all_follow("hostC");
}

#[test]
fn rank_two_waits_for_a_live_rank_one() {
    // hostC's longer timeout lets hostB win; hostC never claims mastership.
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.kill("hostA");
    sim.advance(1500);
    assert!(
        !sim.changes
            .iter()
            .any(|(_, h, m, _)| h == "hostC" && m.as_deref() == Some("hostC")),
        "hostC must not take over while hostB lives"
    );
}

#[test]
fn boot_without_first_host_elects_second() {
    let names = ["hostA", "hostB", "hostC"];
    let configs = names
        .iter()
        .map(|n| ((*n).to_owned(), config(n, &names)))
        .collect();
    let mut sim = Sim {
        now: 0,
        names: names.iter().map(|n| (*n).to_owned()).collect(),
        configs,
        nodes: BTreeMap::new(),
        down: ["hostA".to_owned()].into(),
        paused: BTreeSet::new(),
        cut: BTreeSet::new(),
        delayed: Vec::new(),
        changes: Vec::new(),
        heartbeats: Vec::new(),
        announcements: Vec::new(),
    };
    sim.boot("hostB");
    sim.boot("hostC");
    sim.advance(600);
    sim.assert_all_follow("hostB");
}

#[test]
fn later_started_lower_rank_takes_mastership() {
    let names = ["hostA", "hostB"];
    let configs = names
        .iter()
        .map(|n| ((*n).to_owned(), config(n, &names)))
        .collect();
    let mut sim = Sim {
        now: 0,
        names: names.iter().map(|n| (*n).to_owned()).collect(),
        configs,
        nodes: BTreeMap::new(),
        down: ["hostA".to_owned()].into(),
        paused: BTreeSet::new(),
        cut: BTreeSet::new(),
        delayed: Vec::new(),
        changes: Vec::new(),
        heartbeats: Vec::new(),
        announcements: Vec::new(),
    };
    sim.boot("hostB");
    sim.advance(500);
    sim.assert_all_follow("hostB");
    let eb = sim.epoch_of("hostB");
    sim.boot("hostA");
    // hostA first catches up (follows hostB), then takes over once in sync.
    sim.advance(20);
    assert_eq!(sim.master_of("hostA").as_deref(), Some("hostB"));
    sim.advance(600);
    sim.assert_all_follow("hostA");
    assert!(sim.epoch_of("hostA") > eb);
}

#[test]
fn partition_elects_on_each_side_and_heals_to_the_lowest_rank() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.partition(&["hostA"]);
    sim.advance(1000);
    assert!(sim.nodes["hostA"].is_master());
    assert!(sim.nodes["hostB"].is_master());
    assert_eq!(sim.master_of("hostC").as_deref(), Some("hostB"));
    sim.heal();
    // Following hostB in sync for the inactivity limit, then probing: about 310 ms.
    sim.advance(400);
    sim.assert_all_follow("hostA");
}

#[test]
fn hung_master_is_replaced() {
    // A hung LIM answers nothing (not even probes): modelled as unreachable.
    let mut sim = Sim::new(&["hostA", "hostB"]);
    sim.advance(300);
    sim.partition(&["hostA"]);
    sim.advance(700);
    assert!(sim.nodes["hostB"].is_master());
}

#[test]
fn non_candidate_never_becomes_master_but_finds_it() {
    let names = ["hostA", "hostB", "hostC"];
    // hostB is no candidate.
    let configs: BTreeMap<String, CoreConfig> = names
        .iter()
        .map(|n| {
            let c = config_with(n, &names, &[], |h| h[1].candidate = false);
            ((*n).to_owned(), c)
        })
        .collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(300);
    sim.assert_all_follow("hostA");
    sim.kill("hostA");
    sim.advance(1500);
    sim.assert_all_follow("hostC");
    assert!(
        !sim.changes
            .iter()
            .any(|(_, h, m, _)| h == "hostB" && m.as_deref() == Some("hostB"))
    );
}

#[test]
fn silent_host_becomes_unavailable_and_recovers() {
    let mut sim = Sim::new(&["hostA", "hostB"]);
    sim.advance(300);
    sim.kill("hostB");
    sim.advance(400);
    assert_eq!(
        sim.nodes["hostA"].host("hostB").map(|h| h.status),
        Some(HostStatus::Ok)
    );
    sim.advance(200);
    assert_eq!(
        sim.nodes["hostA"].host("hostB").map(|h| h.status),
        Some(HostStatus::Unavail)
    );
    sim.boot("hostB");
    sim.advance(200);
    assert_eq!(
        sim.nodes["hostA"].host("hostB").map(|h| h.status),
        Some(HostStatus::Ok)
    );
}

#[test]
fn heartbeat_to_a_non_master_is_refused_and_redirected() {
    let mut b = LimCore::new(config("hostB", &["hostA", "hostB", "hostC"])).expect("core");
    let _ = b.set_local(0, LoadVector::default(), info("hostB"));
    let _ = b.start(0);
    let _ = b.on_announce(5, "hostA", 1);
    let (reply, _) = b.on_heartbeat(10, "hostC", LoadVector::default(), info("hostC"), false);
    assert_eq!(
        reply,
        HeartbeatReply {
            accepted: false,
            master: Some("hostA".into()),
            epoch: 1
        }
    );
}

#[test]
fn announcement_from_a_higher_rank_is_refused_unless_a_later_term() {
    let mut a = LimCore::new(config("hostA", &["hostA", "hostB"])).expect("core");
    let _ = a.set_local(0, LoadVector::default(), info("hostA"));
    let fx = a.start(0);
    assert!(!a.is_master(), "a starting LIM catches up first");
    let Some(Effect::Probe { id, hosts }) = fx.first().cloned() else {
        panic!("expected a probe, got {fx:?}");
    };
    assert_eq!(hosts, vec!["hostB".to_owned()]);
    let fx = a.on_probe_results(5, id, vec![("hostB".into(), None)]);
    assert!(a.is_master());
    assert!(fx.iter().any(|e| matches!(
        e,
        Effect::MasterChanged {
            me_is_master: true,
            ..
        }
    )));
    let (reply, _) = a.on_announce(10, "hostB", 1);
    assert!(!reply.accepted);
    assert_eq!(reply.master.as_deref(), Some("hostA"));
    assert!(a.is_master());
    // A later term wins whatever its rank: hostA catches up (a handover follows).
    let (reply, _) = a.on_announce(20, "hostB", 7);
    assert!(reply.accepted);
    assert!(!a.is_master());
    assert_eq!((a.master(), a.epoch()), (Some("hostB"), 7));
}

#[test]
fn busy_thresholds_use_effective_run_queue_and_direction() {
    let mut t = BTreeMap::new();
    t.insert("r1m".to_owned(), 1.5);
    t.insert("mem".to_owned(), 100.0);
    t.insert("gpu".to_owned(), 0.5);
    t.insert("licenses".to_owned(), 2.0);
    let mut load = LoadVector::default();
    load.set(LoadIndex::R1m, 2.1); // 2 CPUs: effective ≈ 1.0
    load.set(LoadIndex::Mem, 50.0);
    load.external.insert("gpu".into(), 0.9);
    load.external.insert("licenses".into(), 1.0);
    let dec: BTreeSet<String> = ["licenses".to_owned()].into();
    let busy = busy_indices(&t, &load, Some(&info("h")), &dec);
    assert_eq!(
        busy,
        vec!["gpu".to_owned(), "licenses".to_owned(), "mem".to_owned()]
    );
}

#[test]
fn config_errors() {
    assert_eq!(
        LimCore::new(config("hostZ", &["hostA"])).err(),
        Some(CoreError::UnknownHost("hostZ".into()))
    );
    let entry = |n: &str, candidate: bool| HostEntry {
        name: n.into(),
        server: true,
        candidate,
        busy_thresholds: BTreeMap::new(),
    };
    assert_eq!(
        CoreHosts::new(vec![entry("hostA", true), entry("HOSTA", true)], &[]).err(),
        Some(CoreError::DuplicateHost("HOSTA".into()))
    );
    assert_eq!(
        CoreHosts::new(vec![entry("hostA", false)], &[]).err(),
        Some(CoreError::NoCandidate)
    );
    // The only candidate, LIM_COMPUTE_ONLY on itself.
    let mut c = config("hostA", &["hostA", "hostB"]);
    c.hosts = Arc::new(
        CoreHosts::new(vec![entry("hostA", true), entry("hostB", false)], &[]).expect("hosts"),
    );
    c.me_candidate = false;
    assert_eq!(LimCore::new(c).err(), Some(CoreError::NoCandidate));
}

#[test]
fn fresh_lower_master_is_kept_against_a_higher_announcer() {
    let mut c = LimCore::new(config("hostC", &["hostA", "hostB", "hostC"])).expect("core");
    let _ = c.set_local(0, LoadVector::default(), info("hostC"));
    let _ = c.start(0);
    let (r, _) = c.on_announce(10, "hostA", 1);
    assert!(r.accepted);
    // hostB, cut off from hostA, claims mastership while hostC still hears hostA.
    // (hostB never probed hostC: hostC cannot tell that hostA is silent for others.)
    let (r, _) = c.on_announce(50, "hostB", 2);
    assert_eq!(
        (r.accepted, r.master.as_deref(), r.epoch),
        (false, Some("hostA"), 1)
    );
    // Once hostA has been silent past the takeover limit, hostB is followed.
    for t in (100..500).step_by(50) {
        let _ = c.tick(t);
    }
    let (r, fx) = c.on_announce(500, "hostB", 2);
    assert!(r.accepted);
    assert!(fx.contains(&Effect::MasterChanged {
        master: Some("hostB".into()),
        epoch: 2,
        me_is_master: false
    }));
}

/// hostB's probe asked hostC about hostA before hostB announced a later term: if hostC
/// has not heard hostA since, it follows hostB at once; if it has (hostA lives, and only
/// hostB's link to it is down), it keeps hostA until its own limit, as without a probe.
#[test]
fn a_higher_announcer_is_followed_at_once_only_if_the_master_was_silent_since_its_probe() {
    let core = || {
        let mut c = LimCore::new(config("hostC", &["hostA", "hostB", "hostC"])).expect("core");
        let _ = c.set_local(0, LoadVector::default(), info("hostC"));
        let _ = c.start(0);
        let (r, _) = c.on_announce(10, "hostA", 1);
        assert!(r.accepted);
        let (p, _) = c.on_probe(60, "hostB");
        assert_eq!(
            (p.master.as_deref(), p.master_heard_ago_ms),
            (Some("hostA"), Some(50))
        );
        c
    };
    // Silent since the probe: hostB's term is followed at once.
    let mut c = core();
    let (r, fx) = c.on_announce(90, "hostB", 2);
    assert_eq!(
        (r.accepted, r.master.as_deref(), r.epoch),
        (true, Some("hostB"), 2)
    );
    assert!(fx.contains(&Effect::MasterChanged {
        master: Some("hostB".into()),
        epoch: 2,
        me_is_master: false
    }));
    // Heard after the probe: hostA is kept.
    let mut c = core();
    let (r, _) = c.on_announce(70, "hostA", 1);
    assert!(r.accepted);
    let (r, _) = c.on_announce(90, "hostB", 2);
    assert_eq!(
        (r.accepted, r.master.as_deref(), r.epoch),
        (false, Some("hostA"), 1)
    );
    // A probe from another host says nothing about hostB's decision.
    let mut c = LimCore::new(config("hostC", &["hostA", "hostB", "hostC", "hostD"])).expect("core");
    let _ = c.set_local(0, LoadVector::default(), info("hostC"));
    let _ = c.start(0);
    let _ = c.on_announce(10, "hostA", 1);
    let _ = c.on_probe(60, "hostD");
    let (r, _) = c.on_announce(90, "hostB", 2);
    assert!(!r.accepted);
}

/// The witness race: hostA announces to everyone at 1000 ms, hostC's heartbeat reply
/// comes back from it at 1070 ms (each slave's heartbeat has its own phase), and hostA
/// dies (or hangs) at 1080 ms. When hostB's takeover probe asks hostC, hostC's latest
/// word from hostA is 70 ms newer than hostB's — but both last heard the same
/// announcement round, so it is no sign that hostA lives: hostB takes over at once
/// instead of waiting another takeover limit (one more interval of 2 s at the defaults).
#[test]
fn a_witness_heartbeat_reply_after_the_last_announcement_does_not_hold_a_takeover_up() {
    let names = ["hostA", "hostB", "hostC"];
    let core = |me: &str| {
        let mut c = LimCore::new(config(me, &names)).expect("core");
        let _ = c.set_local(0, LoadVector::default(), info(me));
        let _ = c.start(0);
        let (r, _) = c.on_announce(1000, "hostA", 1);
        assert!(r.accepted);
        c
    };
    let (mut b, mut c) = (core("hostB"), core("hostC"));
    let _ = c.on_heartbeat_reply(
        1070,
        HeartbeatReply {
            accepted: true,
            master: Some("hostA".into()),
            epoch: 1,
        },
    );
    // hostA is gone from 1080 ms on: hostB's takeover limit (2 intervals) runs out.
    let mut probe = None;
    for t in (1010..=1250).step_by(10) {
        if let Some(Effect::Probe { id, hosts }) = b
            .tick(t)
            .into_iter()
            .find(|e| matches!(e, Effect::Probe { .. }))
        {
            probe = Some((t, id, hosts));
            break;
        }
    }
    let (t, id, hosts) = probe.expect("hostB probes after the takeover limit");
    assert_eq!(hosts, vec!["hostA".to_owned(), "hostC".to_owned()]);
    let (witness, _) = c.on_probe(t, "hostB");
    let _ = b.on_probe_results(
        t + 30,
        id,
        vec![("hostA".into(), None), ("hostC".into(), Some(witness))],
    );
    assert!(
        b.is_master(),
        "hostB waits although hostA is silent for all"
    );
}

/// hostA's LIM is stopped (SIGSTOP) while master, hostB takes over; when hostA
/// runs again it catches up before anything else and takes mastership back
/// only through a handover with a later epoch.
#[test]
fn stopped_master_catches_up_before_taking_back() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.assert_all_follow("hostA");
    let e1 = sim.epoch_of("hostA");
    sim.pause("hostA");
    sim.advance(1000);
    assert_eq!(sim.masters(), vec!["hostA".to_owned(), "hostB".to_owned()]);
    assert_eq!(sim.master_of("hostC").as_deref(), Some("hostB"));
    let e2 = sim.epoch_of("hostB");
    assert!(e2 > e1);
    let resumed_at = sim.now;
    let seen = sim.changes.len();
    sim.resume("hostA");
    sim.advance(20);
    // At its first input hostA noticed the stall and forgot its term.
    assert!(!sim.nodes["hostA"].is_master());
    assert_eq!(sim.master_of("hostA").as_deref(), Some("hostB"));
    assert_eq!(sim.epoch_of("hostA"), e2);
    assert_eq!(sim.masters(), vec!["hostB".to_owned()]);
    // In sync for MASTER_INACTIVITY_LIMIT intervals, then a handover.
    sim.advance(150);
    assert_eq!(sim.masters(), vec!["hostB".to_owned()]);
    sim.advance(500);
    sim.assert_all_follow("hostA");
    let e3 = sim.epoch_of("hostA");
    assert!(e3 > e2);
    let after: Vec<_> = sim.changes[seen..].to_vec();
    for (t, host, master, epoch) in &after {
        assert!(
            !(master.as_deref() == Some("hostA") && *epoch <= e2),
            "at {t} ms {host} followed hostA with the stale epoch {epoch}"
        );
    }
    // No flapping: hostB and hostC changed master once (hostB -> hostA).
    for host in ["hostB", "hostC"] {
        let n = after.iter().filter(|(_, h, _, _)| h == host).count();
        assert_eq!(n, 1, "{host} changes after {resumed_at} ms: {after:?}");
    }
    sim.advance(1000);
    sim.assert_all_follow("hostA");
    assert_eq!(sim.epoch_of("hostA"), e3);
}

#[test]
fn stale_announcement_is_refused_whatever_the_rank() {
    let mut c = LimCore::new(config("hostC", &["hostA", "hostB", "hostC"])).expect("core");
    let _ = c.set_local(0, LoadVector::default(), info("hostC"));
    let _ = c.start(0);
    let (r, _) = c.on_announce(10, "hostB", 2);
    assert!(r.accepted);
    let (r, fx) = c.on_announce(20, "hostA", 1);
    assert_eq!(
        (r.accepted, r.master.as_deref(), r.epoch),
        (false, Some("hostB"), 2)
    );
    assert!(fx.is_empty());
    assert_eq!(c.master(), Some("hostB"));
}

#[test]
fn master_refused_with_a_later_epoch_steps_down() {
    let mut a = LimCore::new(config("hostA", &["hostA", "hostB", "hostC"])).expect("core");
    let _ = a.set_local(0, LoadVector::default(), info("hostA"));
    let fx = a.start(0);
    let Some(Effect::Probe { id, .. }) = fx.first().cloned() else {
        panic!("expected a probe, got {fx:?}");
    };
    let _ = a.on_probe_results(5, id, vec![("hostB".into(), None), ("hostC".into(), None)]);
    assert!(a.is_master());
    assert_eq!(a.epoch(), 1);
    let reply = AnnounceReply {
        accepted: false,
        master: Some("hostB".into()),
        epoch: 4,
    };
    let fx = a.on_announce_reply(10, "hostC", reply);
    assert!(!a.is_master());
    assert_eq!((a.master(), a.epoch()), (Some("hostB"), 4));
    assert!(fx.contains(&Effect::MasterChanged {
        master: Some("hostB".into()),
        epoch: 4,
        me_is_master: false
    }));
}

#[test]
fn stalled_master_nobody_replaced_resumes_its_term() {
    let mut a = LimCore::new(config("hostA", &["hostA", "hostB"])).expect("core");
    let _ = a.set_local(0, LoadVector::default(), info("hostA"));
    let fx = a.start(0);
    let Some(Effect::Probe { id, .. }) = fx.first().cloned() else {
        panic!("expected a probe, got {fx:?}");
    };
    let _ = a.on_probe_results(5, id, vec![("hostB".into(), None)]);
    assert!(a.is_master());
    let _ = a.tick(50);
    // 300 ms without running (limit: 2 intervals of 100 ms).
    let fx = a.wake(350);
    assert!(!a.is_master());
    assert_eq!(a.master(), None);
    assert!(fx.contains(&Effect::CatchingUp { silent_ms: 300 }));
    let Some(Effect::Probe { id, hosts }) = fx
        .iter()
        .find(|e| matches!(e, Effect::Probe { .. }))
        .cloned()
    else {
        panic!("expected a probe, got {fx:?}");
    };
    assert_eq!(hosts, vec!["hostB".to_owned()]);
    let (p, _) = a.on_probe(352, "hostB");
    assert_eq!((p.is_master, p.master, p.epoch), (false, None, 1));
    let b_says = ProbeReply {
        host: "hostB".into(),
        is_master: false,
        master: Some("hostA".into()),
        epoch: 1,
        master_heard_ago_ms: Some(300),
    };
    let _ = a.on_probe_results(360, id, vec![("hostB".into(), Some(b_says))]);
    assert!(a.is_master());
    assert_eq!(a.epoch(), 1);
}

#[test]
fn results_of_an_older_probe_are_ignored() {
    let mut a = LimCore::new(config("hostA", &["hostA", "hostB"])).expect("core");
    let _ = a.set_local(0, LoadVector::default(), info("hostA"));
    let fx = a.start(0);
    let Some(Effect::Probe { id, .. }) = fx.first().cloned() else {
        panic!("expected a probe, got {fx:?}");
    };
    let _ = a.on_probe_results(5, id + 1, vec![("hostB".into(), None)]);
    assert!(!a.is_master());
    let _ = a.on_probe_results(6, id, vec![("hostB".into(), None)]);
    assert!(a.is_master());
}

#[test]
fn master_list_sets_the_election_order_and_excludes_others() {
    let names = ["hostA", "hostB", "hostC"];
    // LSF_MASTER_LIST="hostC hostA": hostB is no candidate, hostC ranks first.
    let configs: BTreeMap<String, CoreConfig> = names
        .iter()
        .map(|n| {
            let c = config_with(n, &names, &["hostC", "hostA"], |h| h[1].candidate = false);
            ((*n).to_owned(), c)
        })
        .collect();
    let core = LimCore::new(configs["hostA"].clone()).expect("core");
    assert_eq!(core.rank(), Some(1));
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(300);
    sim.assert_all_follow("hostC");
    sim.kill("hostC");
    sim.advance(1000);
    sim.assert_all_follow("hostA");
    assert!(
        !sim.changes
            .iter()
            .any(|(_, h, m, _)| h == "hostB" && m.as_deref() == Some("hostB"))
    );
}

/// hostB takes over from a dead hostA while hostC (rank 2, longer limit) still
/// counts hostA as fresh: hostC's refusal names hostA with the older epoch, and
/// hostB keeps its term instead of giving in to the dead host.
#[test]
fn new_master_keeps_its_term_against_a_refusal_naming_the_older_one() {
    let names = ["hostA", "hostB", "hostC"];
    let configs = names
        .iter()
        .map(|n| {
            let mut c = config(n, &names);
            // hostC counts a silent master fresh for 7 intervals, hostB for 2.
            c.timing.retry_limit = 5;
            ((*n).to_owned(), c)
        })
        .collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(300);
    sim.kill("hostA");
    sim.advance(1200);
    sim.assert_all_follow("hostB");
    let b_changes: Vec<_> = sim
        .changes
        .iter()
        .filter(|(_, h, _, _)| h == "hostB")
        .map(|(_, _, m, e)| (m.clone(), *e))
        .collect();
    // Catching up at boot, following hostA, taking over: no flap back to hostA.
    assert_eq!(
        b_changes,
        vec![(Some("hostA".to_owned()), 1), (Some("hostB".to_owned()), 2)]
    );
}

/// A partial partition: hostA and hostB cannot reach each other, hostC reaches
/// both. hostB stops hearing its master, but hostC — a witness that heard hostA
/// more recently — says it lives: hostB does not take over, so nobody flaps; hostA
/// stays master throughout, and once the link is back hostB hears it again.
#[test]
fn partial_partition_does_not_flap() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.assert_all_follow("hostA");
    let changes_before = sim.changes.len();
    sim.cut.insert(("hostA".to_owned(), "hostB".to_owned()));
    for _ in 0..40 {
        sim.advance(100);
        assert_eq!(sim.masters(), vec!["hostA".to_owned()], "one master");
        assert_eq!(sim.master_of("hostC").as_deref(), Some("hostA"));
        assert_eq!(sim.master_of("hostB").as_deref(), Some("hostA"));
    }
    assert_eq!(sim.epoch_of("hostA"), 1);
    assert_eq!(sim.changes.len(), changes_before, "{:?}", sim.changes);
    sim.heal();
    sim.advance(500);
    sim.assert_all_follow("hostA");
    assert_eq!(sim.epoch_of("hostB"), 1);
}

/// The witness rule does not hold up a real failover: when the master dies, the
/// others' news of it is as old as ours, and rank 1 takes over as before.
#[test]
fn witnesses_with_stale_news_do_not_block_a_takeover() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC", "hostD"]);
    sim.advance(300);
    sim.kill("hostA");
    sim.advance(600);
    sim.assert_all_follow("hostB");
    assert_eq!(sim.epoch_of("hostB"), 2);
}

/// hostB, cut off from hostA only, keeps following it on hostC's word; when hostA
/// then dies, hostC's news of it stops getting fresher and hostB takes over like
/// after any failure: a witness delays a takeover only while its news is new.
#[test]
fn witness_news_ages_and_the_takeover_follows() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    sim.cut.insert(("hostA".to_owned(), "hostB".to_owned()));
    sim.advance(1000);
    assert_eq!(sim.masters(), vec!["hostA".to_owned()]);
    sim.kill("hostA");
    sim.advance(1000);
    sim.assert_all_follow("hostB");
    assert_eq!(sim.epoch_of("hostB"), 2);
}

/// Issue 49, item 10: when the master is lost (killed, or hung: its LIM stopped), the
/// hosts that are neither the old nor the new master follow the new master at its
/// takeover — its first announcement — not when their own, longer, limit runs out; and
/// their first heartbeat at once puts them in the new master's table. hostC and hostD
/// answered the takeover probe of hostB, and have heard nothing of hostA since: the
/// probe found hostA silent for them too.
#[test]
fn every_host_follows_the_new_master_at_its_takeover() {
    let names = ["hostA", "hostB", "hostC", "hostD"];
    for hung in [false, true] {
        let configs = names
            .iter()
            .map(|n| {
                // hostC would wait 2 + 5 intervals of silence by its own clock, hostD
                // (no candidate) 2; hostB (rank 1) takes over after 2 and a probe.
                let mut c = config_with(n, &names, &[], |h| h[3].candidate = false);
                c.timing.retry_limit = 5;
                ((*n).to_owned(), c)
            })
            .collect();
        let mut sim = Sim::with_configs(&names, configs);
        sim.advance(300);
        sim.assert_all_follow("hostA");
        if hung {
            sim.pause("hostA");
        } else {
            sim.kill("hostA");
        }
        let lost_at = sim.now;
        let took_over = loop {
            sim.advance(10);
            if sim.nodes["hostB"].is_master() {
                break sim.now;
            }
            assert!(sim.now < lost_at + 2000, "hostB never took over");
        };
        for h in ["hostC", "hostD"] {
            assert_eq!(
                sim.master_of(h).as_deref(),
                Some("hostB"),
                "hung {hung}: at hostB's takeover ({} ms after the loss) {h} follows {:?}",
                took_over - lost_at,
                sim.master_of(h)
            );
            assert_eq!(sim.epoch_of(h), sim.epoch_of("hostB"));
            assert_eq!(
                sim.nodes["hostB"].host(h).map(|v| v.status),
                Some(HostStatus::Ok),
                "hung {hung}: {h} in the new master's table"
            );
        }
        // And it stays so: no host goes back to the old master or flaps.
        let seen = sim.changes.len();
        sim.advance(1000);
        let after: Vec<_> = sim.changes[seen..]
            .iter()
            .filter(|(_, h, _, _)| h != "hostA")
            .collect();
        assert!(after.is_empty(), "hung {hung}: {after:?}");
    }
}

/// Issue 50 item 10: `lsadmin limlock` on a slave shows it `lockU` on the master at once
/// and for as long as it is locked (its heartbeats say so); `limunlock` ends it; a lock
/// for a while ends by itself; a second lock, or an unlock of an unlocked host, is
/// refused.
#[test]
fn a_locked_host_is_lock_u_on_the_master_until_unlocked_or_its_time_is_up() {
    let mut sim = Sim::new(&["hostA", "hostB", "hostC"]);
    sim.advance(300);
    let status = |sim: &Sim, h: &str| sim.nodes["hostA"].host(h).map(|v| v.status);
    let now = sim.now;
    let fx = sim
        .nodes
        .get_mut("hostB")
        .expect("hostB")
        .lock(now, None)
        .expect("lock hostB");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::SendHeartbeat { locked: true, .. }))
    );
    sim.run("hostB", fx);
    assert_eq!(status(&sim, "hostB"), Some(HostStatus::LockedUser));
    sim.advance(1_000);
    assert_eq!(status(&sim, "hostB"), Some(HostStatus::LockedUser));
    assert_eq!(status(&sim, "hostC"), Some(HostStatus::Ok));
    let b = sim.nodes.get_mut("hostB").expect("hostB");
    assert_eq!(b.lock(sim.now, Some(10)), Err(LockError::AlreadyLocked));
    let fx = b.unlock(sim.now).expect("unlock hostB");
    sim.run("hostB", fx);
    assert_eq!(status(&sim, "hostB"), Some(HostStatus::Ok));
    let now = sim.now;
    assert_eq!(
        sim.nodes.get_mut("hostB").expect("hostB").unlock(now),
        Err(LockError::NotLocked)
    );
    // The master's own lock, for 500 ms: in force, then gone without an unlock.
    let fx = sim
        .nodes
        .get_mut("hostA")
        .expect("hostA")
        .lock(now, Some(500))
        .expect("lock hostA");
    assert!(fx.contains(&Effect::HostStatusChanged {
        host: "hostA".into(),
        status: HostStatus::LockedUser
    }));
    sim.run("hostA", fx);
    sim.advance(400);
    assert_eq!(status(&sim, "hostA"), Some(HostStatus::LockedUser));
    sim.advance(200);
    assert_eq!(status(&sim, "hostA"), Some(HostStatus::Ok));
    let now = sim.now;
    let a = sim.nodes.get_mut("hostA").expect("hostA");
    assert!(!a.is_locked(now));
    assert_eq!(a.unlock(now), Err(LockError::NotLocked));
    // A slave's lock for a while ends on the master with its next heartbeat.
    let fx = sim
        .nodes
        .get_mut("hostC")
        .expect("hostC")
        .lock(now, Some(300))
        .expect("lock hostC");
    sim.run("hostC", fx);
    assert_eq!(status(&sim, "hostC"), Some(HostStatus::LockedUser));
    sim.advance(600);
    assert_eq!(status(&sim, "hostC"), Some(HostStatus::Ok));
}

/// Issue 51: at a cold boot of a large cluster with LSF_MASTER_LIST, a host probes the
/// candidates and at most MAX_WITNESSES others (not every host: hosts² requests), a
/// host that can never lead the candidates only;
/// the election still ends with everyone following the first candidate, and a
/// takeover still happens when it dies.
#[test]
fn a_probe_asks_the_candidates_and_a_bounded_set_of_witnesses() {
    let owned: Vec<String> = (0..60).map(|i| format!("h{i:02}")).collect();
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let configs: BTreeMap<String, CoreConfig> = names
        .iter()
        .map(|n| ((*n).to_owned(), two_candidates(n, &names)))
        .collect();
    let first_probe = |me: &str| -> Vec<String> {
        let mut core = LimCore::new(configs[me].clone()).expect("core");
        let mut fx = core.set_local(0, LoadVector::default(), info(me));
        fx.extend(core.start(0));
        fx.iter()
            .find_map(|e| match e {
                Effect::Probe { hosts, .. } => Some(hosts.clone()),
                _ => None,
            })
            .expect("a probe at start")
    };
    // A candidate's first probe: the other candidate and 16 witnesses.
    let probed = first_probe("h01");
    assert_eq!(probed.len(), 1 + MAX_WITNESSES, "{probed:?}");
    assert!(probed.contains(&"h00".to_owned()));
    // The witnesses are the hosts after it, in file order.
    assert!(probed.contains(&"h02".to_owned()) && probed.contains(&"h17".to_owned()));
    assert!(!probed.contains(&"h01".to_owned()) && !probed.contains(&"h18".to_owned()));
    // A host that can never lead asks the candidates only (issue 51).
    assert_eq!(first_probe("h30"), vec!["h00".to_owned(), "h01".to_owned()]);
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(300);
    sim.assert_all_follow("h00");
    sim.kill("h00");
    sim.advance(1500);
    sim.assert_all_follow("h01");
}

/// A cluster of `n` hosts h00.. of which the first two are the master candidates, the
/// master taking `reports_per_sec` load reports a second from the others.
fn large_cluster(n: usize, reports_per_sec: u64) -> (Vec<String>, BTreeMap<String, CoreConfig>) {
    let owned: Vec<String> = (0..n).map(|i| format!("h{i:02}")).collect();
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let configs: BTreeMap<String, CoreConfig> = names
        .iter()
        .map(|n| {
            let mut c = two_candidates(n, &names);
            c.load_reports_per_sec = reports_per_sec;
            ((*n).to_owned(), c)
        })
        .collect();
    (owned, configs)
}

/// A config of `names` whose first two hosts are the candidates (LSF_MASTER_LIST).
fn two_candidates(me: &str, names: &[&str]) -> CoreConfig {
    config_with(me, names, &names[..2], |h| {
        for e in h.iter_mut().skip(2) {
            e.candidate = false;
        }
    })
}

/// Heartbeats `from` sent to `to` in [t0, t1).
fn heartbeats(sim: &Sim, from: &str, to: &str, t0: u64, t1: u64) -> usize {
    sim.heartbeats
        .iter()
        .filter(|(t, f, d)| *t >= t0 && *t < t1 && f == from && d == to)
        .count()
}

/// Issue 51: past the master's budget of load reports, the hosts that can never be
/// master report every few intervals (58 hosts at 10 reports an interval: every 6
/// intervals); the candidates still report every interval. A cluster within the
/// budget is unchanged.
#[test]
fn hosts_that_cannot_be_master_report_less_often_past_the_masters_budget() {
    let (owned, configs) = large_cluster(60, 100);
    let core = LimCore::new(configs["h30"].clone()).expect("core");
    assert_eq!(core.report_interval_ms(), 600);
    assert_eq!(core.host_inactivity_ms("h30"), Some(1300));
    assert_eq!(core.host_inactivity_ms("h01"), Some(500));
    let within = LimCore::new(large_cluster(60, 1000).1["h30"].clone()).expect("core");
    assert_eq!(within.report_interval_ms(), 100);
    assert_eq!(within.host_inactivity_ms("h30"), Some(500));

    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(1000);
    sim.assert_all_follow("h00");
    let (t0, t1) = (sim.now, sim.now + 3000);
    sim.advance(3000);
    // 3 s: a candidate reports 30 times, another host 5 times.
    let b = heartbeats(&sim, "h01", "h00", t0, t1);
    assert!((29..=31).contains(&b), "h01 sent {b}");
    for far in ["h02", "h30", "h59"] {
        let n = heartbeats(&sim, far, "h00", t0, t1);
        assert!((4..=6).contains(&n), "{far} sent {n}");
    }
    let reports = sim
        .heartbeats
        .iter()
        .filter(|(t, _, _)| *t >= t0 && *t < t1)
        .count();
    // At most the budget (10 an interval from the 58 others) and the candidate's.
    assert!(reports <= 30 * 10 + 31, "{reports} reports in 30 intervals");
    // Every host still ok in the master's table.
    for h in &names {
        assert_eq!(
            sim.nodes["h00"].host(h).map(|v| v.status),
            Some(HostStatus::Ok),
            "{h}"
        );
    }
}

/// Issue 51: the master announces every interval to the candidates and to the hosts
/// their probes ask as witnesses, to the others once every FAR_ANNOUNCE_REPORTS report
/// intervals, spread over the ticks.
#[test]
fn the_master_announces_to_candidates_and_witnesses_every_interval_to_the_others_in_turn() {
    let (owned, configs) = large_cluster(60, 100);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(1000);
    sim.assert_all_follow("h00");
    let t0 = sim.now;
    let window = FAR_ANNOUNCE_REPORTS * 600;
    sim.advance(window);
    let heard = |h: &str| {
        sim.announcements
            .iter()
            .filter(|(t, f, d)| *t >= t0 && f == "h00" && d == h)
            .count() as u64
    };
    let intervals = window / 100;
    // h01 is a candidate; h02..h17 witness h01's probes, h01's (after h00: h02..)
    // and h00's own.
    for near in ["h01", "h02", "h17"] {
        let n = heard(near);
        assert!((intervals - 1..=intervals + 1).contains(&n), "{near}: {n}");
    }
    for far in ["h18", "h30", "h59"] {
        let n = heard(far);
        assert!((1..=2).contains(&n), "{far}: {n}");
    }
    // Spread: no tick announces to many more than its share of the far hosts.
    let mut per_tick: BTreeMap<u64, usize> = BTreeMap::new();
    for (t, _, d) in &sim.announcements {
        if *t >= t0 && d.as_str() >= "h18" {
            *per_tick.entry(*t).or_default() += 1;
        }
    }
    let most = per_tick.values().copied().max().unwrap_or(0);
    assert!(most <= 42usize.div_ceil(36) + 1, "{per_tick:?}");
}

/// Issue 51: a host that reports every 6 intervals is marked unavailable after two
/// missed reports (and an interval), not after HOST_INACTIVITY_LIMIT intervals.
#[test]
fn a_host_that_reports_less_often_is_unavailable_after_two_missed_reports() {
    let (owned, configs) = large_cluster(60, 100);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(2000);
    sim.assert_all_follow("h00");
    sim.kill("h30");
    let status = |sim: &Sim| sim.nodes["h00"].host("h30").map(|v| v.status);
    // Its last report came at most one report interval (600 ms) before the kill.
    sim.advance(650);
    assert_eq!(status(&sim), Some(HostStatus::Ok));
    sim.advance(700);
    assert_eq!(status(&sim), Some(HostStatus::Unavail));
    sim.boot("h30");
    sim.advance(700);
    assert_eq!(status(&sim), Some(HostStatus::Ok));
}

/// Issue 51: failover keeps its timing in a large cluster (the candidates report and
/// are announced to every interval), every host follows the new master at its
/// takeover announcement, and the hosts' first reports to it are spread over their
/// report interval rather than all in one tick.
#[test]
fn failover_in_a_large_cluster_keeps_its_timing_and_spreads_the_first_reports() {
    let (owned, configs) = large_cluster(60, 100);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(1000);
    sim.assert_all_follow("h00");
    sim.kill("h00");
    let killed = sim.now;
    sim.advance(600);
    let took = sim
        .changes
        .iter()
        .find(|(_, h, m, _)| h == "h01" && m.as_deref() == Some("h01"))
        .map(|(t, _, _, _)| *t - killed)
        .expect("h01 took over");
    assert!(took <= 500, "took {took} ms");
    sim.advance(10);
    sim.assert_all_follow("h01");
    sim.advance(1000);
    let first: Vec<u64> = names[2..]
        .iter()
        .map(|h| {
            sim.heartbeats
                .iter()
                .find(|(t, f, d)| *t >= killed && f == h && d == "h01")
                .map(|(t, _, _)| *t)
                .expect("a report to the new master")
        })
        .collect();
    let mut per_tick: BTreeMap<u64, usize> = BTreeMap::new();
    for t in &first {
        *per_tick.entry(*t).or_default() += 1;
    }
    assert!(per_tick.len() >= 6, "{per_tick:?}");
    assert!(per_tick.values().all(|&n| n <= 10), "{per_tick:?}");
    for h in &names[1..] {
        assert_eq!(
            sim.nodes["h01"].host(h).map(|v| v.status),
            Some(HostStatus::Ok),
            "{h}"
        );
    }
}

/// Issue 51: the host table is the master's; a LIM that never led holds none (in a
/// process of thousands of hollow hosts a table each would cost hosts² memory), and
/// the cores of a process share one `CoreHosts`.
#[test]
fn only_a_lim_that_leads_holds_a_host_table() {
    let (owned, configs) = large_cluster(20, 1000);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(500);
    sim.assert_all_follow("h00");
    assert_eq!(sim.nodes["h00"].hosts().count(), 20);
    assert_eq!(sim.nodes["h05"].hosts().count(), 0);
    assert_eq!(sim.nodes["h01"].hosts().count(), 0);
    sim.kill("h00");
    sim.advance(1000);
    sim.assert_all_follow("h01");
    assert_eq!(sim.nodes["h01"].hosts().count(), 20);
    assert_eq!(
        sim.nodes["h01"].host("h05").map(|v| v.status),
        Some(HostStatus::Ok)
    );
}

/// Issue 51: a host that can never be master and was starved (a hollow-host process
/// under load) keeps its master instead of forgetting it and probing the candidates
/// and 16 witnesses; it still finds a master that took over while it was away.
#[test]
fn a_starved_host_that_cannot_lead_keeps_its_master_and_does_not_probe() {
    let (owned, configs) = large_cluster(20, 1000);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(500);
    sim.assert_all_follow("h00");
    sim.pause("h07");
    sim.advance(500);
    sim.resume("h07");
    let probes_before = sim.nodes["h00"].probed_me_at.get(&7).copied();
    sim.advance(300);
    sim.assert_all_follow("h00");
    assert_eq!(
        sim.nodes["h00"].probed_me_at.get(&7).copied(),
        probes_before
    );
    // Away while the master died and h01 took over: it follows h01 once back.
    sim.pause("h07");
    sim.kill("h00");
    sim.advance(1500);
    sim.resume("h07");
    sim.advance(800);
    sim.assert_all_follow("h01");
}

/// Issue 51: the master's table has a version that every change of a host's record
/// raises; a poller that saw a version is given only the hosts changed since (mbatchd
/// polls every second; at 10,000 hosts a tenth of them report in that time).
#[test]
fn the_master_table_says_which_hosts_changed_since_a_version() {
    let (owned, configs) = large_cluster(20, 1000);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(1000);
    let master = &sim.nodes["h00"];
    let v = master.table_version();
    assert!(v > 0);
    assert_eq!(master.changed_since(0).count(), 20);
    assert_eq!(master.changed_since(v).count(), 0);
    // One report: that host only.
    let load = LoadVector::default();
    let (reply, _) = sim.nodes.get_mut("h00").expect("master").on_heartbeat(
        sim.now,
        "h05",
        load,
        info("h05"),
        false,
    );
    assert!(reply.accepted);
    let master = &sim.nodes["h00"];
    let changed: Vec<&str> = master.changed_since(v).map(|h| h.name.as_str()).collect();
    assert_eq!(changed, vec!["h05"]);
    assert!(master.table_version() > v);
    // A host that goes silent changes when it becomes unavailable.
    let v = master.table_version();
    sim.kill("h07");
    sim.advance(700);
    let changed: Vec<String> = sim.nodes["h00"]
        .changed_since(v)
        .filter(|h| h.status == HostStatus::Unavail)
        .map(|h| h.name.clone())
        .collect();
    assert_eq!(changed, vec!["h07".to_owned()]);
}

/// Issue 51: in a cluster past the report budget a LIM keeps in touch (a connection, for
/// its runtime) with the candidates, and the master also with their witnesses — not
/// with every host; within the budget, with every host as before.
#[test]
fn a_large_clusters_lims_keep_contact_with_the_candidates_and_witnesses_only() {
    let (owned, configs) = large_cluster(60, 100);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut sim = Sim::with_configs(&names, configs);
    sim.advance(1000);
    let master = &sim.nodes["h00"];
    assert!(master.keeps_contact("h01") && master.keeps_contact("h17"));
    assert!(!master.keeps_contact("h30"));
    let far = &sim.nodes["h30"];
    assert!(far.keeps_contact("h00") && far.keeps_contact("h01"));
    assert!(!far.keeps_contact("h05") && !far.keeps_contact("h31"));
    let (owned, configs) = large_cluster(20, 1000);
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut small = Sim::with_configs(&names, configs);
    small.advance(500);
    assert!(small.nodes["h00"].keeps_contact("h15"));
    assert!(small.nodes["h15"].keeps_contact("h16"));
}
