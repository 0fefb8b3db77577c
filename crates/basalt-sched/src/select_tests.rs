//! Resource requirements' select parts in the pass (issue 20, item 1): the job's `-R`
//! and the queue's `RES_REQ` keep the hosts whose values satisfy them; a requirement no
//! host satisfies pends with LSF's reason; one that does not parse is refused.

use super::*;
use crate::tests::{T0, alice, cfg, cmd, dispatches};
use basalt_config::select::NameKind;
use basalt_core::job::pend;

/// hostA: type LINUX; hostB: type SUN with the boolean resource `spice`. Both up, 2
/// CPUs, with the load given.
fn core_with(c: SchedConfig, load_a: &[(&str, f64)], load_b: &[(&str, f64)]) -> Sched {
    let mut s = Sched::new(c, T0);
    for (h, load) in [("hostA", load_a), ("hostB", load_b)] {
        let load = load.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        s.lim_update(h, 2, 1.0, true, load);
    }
    s.start(T0, "hostA");
    s.take_effects();
    s
}

fn typed() -> SchedConfig {
    let mut c = cfg();
    c.hosts[0]
        .statics
        .strings
        .insert("type".into(), "LINUX".into());
    c.hosts[1]
        .statics
        .strings
        .insert("type".into(), "SUN".into());
    c.hosts[1].statics.booleans.push("spice".into());
    c.res_kinds.insert("spice".into(), NameKind::Boolean);
    c
}

fn asking(res_req: &str) -> Submission {
    Submission {
        res_req: res_req.into(),
        ..cmd("true")
    }
}

/// Submit, run a pass; where the job was dispatched (None: it pends).
fn placed(s: &mut Sched, sub: Submission) -> (JobKey, Option<String>) {
    let (id, _, _) = s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0 + 10);
    let d = dispatches(&s.take_effects());
    (
        (id, 0),
        d.into_iter().find(|(k, _)| k.0 == id).map(|(_, h)| h),
    )
}

#[test]
fn a_job_asking_more_memory_than_any_host_has_pends_with_the_job_resource_reason() {
    let mem = [("mem", 16_000.0)];
    let mut s = core_with(typed(), &mem, &mem);
    // 100 TB, in MB as mem is.
    let (key, host) = placed(&mut s, asking("select[mem>100000000]"));
    assert_eq!(host, None);
    let j = &s.jobs[&key];
    assert_eq!(j.state, JobState::Pend);
    let hosts = j
        .pend_reasons
        .get(&pend::RES_REQ)
        .expect("the job's reason");
    assert_eq!(hosts.len(), 2, "{:?}", j.pend_reasons);
    // A job asking what the hosts have runs.
    let (_, host) = placed(&mut s, asking("select[mem>1000]"));
    assert!(host.is_some());
}

#[test]
fn select_places_the_job_on_the_host_whose_type_or_resource_satisfies_it() {
    let mut s = core_with(typed(), &[], &[]);
    let (_, host) = placed(&mut s, asking("select[type==SUN]"));
    assert_eq!(host.as_deref(), Some("hostB"));
    let (_, host) = placed(&mut s, asking("select[type==LINUX]"));
    assert_eq!(host.as_deref(), Some("hostA"));
    // The old syntax, a boolean resource alone.
    let (_, host) = placed(&mut s, asking("spice"));
    assert_eq!(host.as_deref(), Some("hostB"));
    let (_, host) = placed(&mut s, asking("select[!spice && hname==hostA]"));
    assert_eq!(host.as_deref(), Some("hostA"));
}

#[test]
fn the_queue_res_req_keeps_jobs_off_hosts_it_refuses_with_the_queue_reason() {
    let mut c = typed();
    c.queues[0].res_req = "select[r1m<0.5]".into();
    // hostA busy (20 processes on 2 CPUs), hostB idle.
    let mut s = core_with(c, &[("r1m", 20.0)], &[("r1m", 0.0)]);
    let (_, host) = placed(&mut s, cmd("true"));
    assert_eq!(host.as_deref(), Some("hostB"));
    // The job's own select and the queue's both hold: only on a host both accept.
    let (key, host) = placed(&mut s, asking("select[type==LINUX]"));
    assert_eq!(host, None);
    let r = &s.jobs[&key].pend_reasons;
    assert_eq!(r.get(&pend::QUEUE_RES_REQ).map(Vec::len), Some(1), "{r:?}");
    assert_eq!(r.get(&pend::RES_REQ).map(Vec::len), Some(1), "{r:?}");
}

#[test]
fn a_select_that_does_not_parse_or_names_an_unknown_resource_is_refused_at_submission() {
    let mut s = core_with(typed(), &[], &[]);
    for bad in [
        "select[mem>>1]",
        "select[nosuch>1]",
        "select[(mem>1]",
        "select[type==]",
    ] {
        assert_eq!(
            s.submit(T0, &alice(), asking(bad)).err(),
            Some(SchedError::BadResReq),
            "{bad}"
        );
    }
    // Sections other than select are not filtered on here.
    assert!(
        s.submit(T0, &alice(), asking("order[r15s] rusage[mem=10]"))
            .is_ok()
    );
}

#[test]
fn a_job_waiting_for_its_select_starts_once_the_load_satisfies_it() {
    let mut s = core_with(typed(), &[("mem", 100.0)], &[("mem", 100.0)]);
    let (key, host) = placed(&mut s, asking("select[mem>500]"));
    assert_eq!(host, None);
    s.lim_update("hostB", 2, 1.0, true, [("mem".to_owned(), 4000.0)].into());
    // Within the next full pass (a tick makes one due every FULL_PASS_EVERY).
    let later = T0 + 10 + FULL_PASS_EVERY;
    s.tick(later);
    s.schedule(later);
    let d = dispatches(&s.take_effects());
    assert_eq!(d, vec![(key, "hostB".to_owned())]);
}

#[test]
fn what_a_hosts_lim_reports_replaces_the_cluster_files_values_for_select() {
    let mut s = core_with(typed(), &[], &[]);
    s.lim_static(
        "hostB",
        &LimStatic {
            host_type: "X86_64".into(),
            model: "Opteron".into(),
            max_mem_mb: 64_000,
            max_swp_mb: 0,
            max_tmp_mb: 10_000,
            resources: vec!["fast".into()],
        },
    );
    let (_, host) = placed(&mut s, asking("select[maxmem>32000]"));
    assert_eq!(host.as_deref(), Some("hostB"));
    let (_, host) = placed(&mut s, asking("select[type==X86_64 && model==Opteron]"));
    assert_eq!(host.as_deref(), Some("hostB"));
    // hostA's LIM has not reported: no maxmem there, so only hostB qualifies.
    let (key, host) = placed(&mut s, asking("select[maxmem>100000]"));
    assert_eq!(host, None);
    assert_eq!(
        s.jobs[&key].pend_reasons.get(&pend::RES_REQ).map(Vec::len),
        Some(2)
    );
    // `type==any` holds on every host that has a type.
    let (_, host) = placed(&mut s, asking("select[type==any]"));
    assert!(host.is_some());
}

#[test]
fn order_puts_the_host_best_by_its_items_first() {
    let a = [("mem", 1000.0), ("r15s", 6.0)];
    let b = [("mem", 8000.0), ("r15s", 0.0)];
    let mut s = core_with(typed(), &a, &b);
    // Free memory: more is better; reversed, less is.
    let (_, host) = placed(&mut s, asking("order[mem]"));
    assert_eq!(host.as_deref(), Some("hostB"));
    let (_, host) = placed(&mut s, asking("order[-mem]"));
    assert_eq!(host.as_deref(), Some("hostA"));
    // A run queue: less is better; reversed, more is.
    let (_, host) = placed(&mut s, asking("select[type==any] order[-r15s:mem]"));
    assert_eq!(host.as_deref(), Some("hostA"));
}

#[test]
fn the_queue_order_applies_to_jobs_without_their_own() {
    let mut c = typed();
    c.queues[0].res_req = "order[-mem]".into();
    let mut s = core_with(c, &[("mem", 1000.0)], &[("mem", 8000.0)]);
    let (_, host) = placed(&mut s, cmd("true"));
    assert_eq!(host.as_deref(), Some("hostA"));
    let (_, host) = placed(&mut s, asking("order[mem]"));
    assert_eq!(host.as_deref(), Some("hostB"));
}

#[test]
fn an_order_that_is_not_a_list_of_names_is_refused_at_submission() {
    let mut s = core_with(typed(), &[], &[]);
    assert_eq!(
        s.submit(T0, &alice(), asking("order[r15s:>]")).err(),
        Some(SchedError::BadResReq)
    );
}

/// mem reserved by `rusage[]`'s reason (2601 + mem's index).
fn mem_reserve_reason() -> u32 {
    let mem = basalt_core::BUILTIN_INDICES
        .iter()
        .position(|i| i.name() == "mem")
        .expect("mem is a built-in index");
    pend::RESERVE_BASE + mem as u32
}

#[test]
fn rusage_reserves_memory_so_the_next_job_goes_elsewhere_or_waits_with_lsf_reason() {
    let mem = [("mem", 1000.0)];
    let mut s = core_with(typed(), &mem, &mem);
    let (_, first) = placed(&mut s, asking("rusage[mem=800]"));
    let (_, second) = placed(&mut s, asking("rusage[mem=800]"));
    let (a, b) = (first.expect("placed"), second.expect("placed"));
    assert_ne!(a, b, "the first job's 800 MB are reserved on {a}");
    let (key, third) = placed(&mut s, asking("rusage[mem=800]"));
    assert_eq!(third, None);
    let r = &s.jobs[&key].pend_reasons;
    assert_eq!(r.get(&mem_reserve_reason()).map(Vec::len), Some(2), "{r:?}");
    assert_eq!(
        basalt_core::job::pend_reason_text(mem_reserve_reason()),
        "Job requirements for reserving resource (mem) not satisfied"
    );
    // bhosts -l shows what is reserved on each host.
    for h in ["hostA", "hostB"] {
        let i = s.host_idx(h).expect("host");
        assert_eq!(s.hosts[i].reserved.get("mem"), Some(&800.0), "{h}");
    }
    // A job that reserves nothing still gets a free slot.
    let (_, other) = placed(&mut s, cmd("true"));
    assert!(other.is_some());
    // Select sees what is left: 200 MB on each host.
    let (_, host) = placed(&mut s, asking("select[mem>500]"));
    assert_eq!(host, None);
}

#[test]
fn a_reservation_for_a_duration_ends_with_it_and_a_decaying_one_shrinks() {
    let mem = [("mem", 1000.0)];
    // Hosts stay reachable across the minutes the test skips without hellos.
    let mut c = typed();
    c.hello_interval_secs = 3600;
    let mut s = core_with(c, &mem, &mem);
    placed(&mut s, asking("rusage[mem=800:duration=1]"));
    placed(&mut s, asking("rusage[mem=800:duration=10:decay=1]"));
    let (late, host) = placed(&mut s, asking("rusage[mem=500]"));
    assert_eq!(host, None);
    // Five minutes on: the first reservation is over (1 minute), the decaying one is
    // at half (400 of 800 MB): 600 MB free on its host, 1000 on the other.
    let later = T0 + 5 * 60_000;
    s.tick(later);
    s.schedule(later);
    let d = dispatches(&s.take_effects());
    assert_eq!(d.len(), 1, "{d:?}: {:?}", s.jobs[&late].pend_reasons);
    assert_eq!(d[0].0, late);
    let (_, host) = placed(&mut s, asking("rusage[mem=700]"));
    assert_eq!(host, None, "500 MB reserved on one host, 400 on the other");
}

#[test]
fn the_queue_rusage_is_merged_with_the_jobs() {
    let mut c = typed();
    c.queues[0].res_req = "rusage[mem=600]".into();
    let mem = [("mem", 1000.0)];
    let mut s = core_with(c, &mem, &mem);
    // The queue's amount for jobs without their own...
    assert!(placed(&mut s, cmd("true")).1.is_some());
    assert!(placed(&mut s, cmd("true")).1.is_some());
    assert_eq!(placed(&mut s, cmd("true")).1, None);
    // ...and the job's own amount wins.
    assert!(placed(&mut s, asking("rusage[mem=100]")).1.is_some());
}

#[test]
fn per_slot_reservation_multiplies_by_the_slots_on_the_host() {
    let mut c = typed();
    c.reserve_per_slot = true;
    let mem = [("mem", 1000.0)];
    let mut s = core_with(c, &mem, &[("mem", 100.0)]);
    let two = Submission {
        num_processors: 2,
        max_processors: 2,
        ..asking("rusage[mem=400] span[hosts=1]")
    };
    let (_, host) = placed(&mut s, two);
    assert_eq!(host.as_deref(), Some("hostA"));
    // 800 of hostA's 1000 MB reserved: 300 more do not fit.
    assert_eq!(placed(&mut s, asking("rusage[mem=300]")).1, None);
}

#[test]
fn a_malformed_rusage_is_refused_at_submission() {
    let mut s = core_with(typed(), &[], &[]);
    for bad in ["rusage[mem]", "rusage[mem=lots]", "rusage[decay=2]"] {
        assert_eq!(
            s.submit(T0, &alice(), asking(bad)).err(),
            Some(SchedError::BadResReq),
            "{bad}"
        );
    }
}

/// A licence count: the numeric shared resource `licence`, 2 of it shared by both hosts
/// (lsf.cluster `Begin ResourceMap` / `licence (2@[all])`).
fn licensed(per_slot: bool) -> Sched {
    let mut c = cfg();
    c.res_kinds.insert("licence".into(), NameKind::Numeric);
    c.shared.push(crate::SharedRes {
        name: "licence".into(),
        value: Some(2.0),
        hosts: vec!["hostA".into(), "hostB".into()],
    });
    c.reserve_per_slot = per_slot;
    core_with(c, &[], &[])
}

#[test]
fn a_licence_count_of_2_runs_2_of_5_jobs_and_the_next_when_one_ends() {
    let mut s = licensed(false);
    for _ in 0..5 {
        s.submit(T0, &alice(), asking("rusage[licence=1]"))
            .expect("submit");
    }
    // One pass: the 4 slots would take 4 jobs; the licences allow 2.
    s.schedule(T0 + 10);
    let d = dispatches(&s.take_effects());
    assert_eq!(d.len(), 2, "{d:?}");
    for id in 3..=5 {
        assert_eq!(s.jobs[&(id, 0)].state, JobState::Pend);
        assert!(
            s.jobs[&(id, 0)].pend_reasons.contains_key(&pend::RES_REQ),
            "{:?}",
            s.jobs[&(id, 0)].pend_reasons
        );
    }
    // A job ends: its licence goes to the next.
    let first = d[0].0;
    crate::tests::finish(&mut s, first, 0, 1);
    s.schedule(T0 + 20);
    let d = dispatches(&s.take_effects());
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, (3, 0));
    // select[] sees what is left of the count.
    let (_, host) = placed(&mut s, asking("select[licence>0]"));
    assert_eq!(host, None);
}

#[test]
fn a_shared_resource_is_reserved_once_per_job_or_once_per_slot() {
    // Per job: a 2-slot job takes 1 of the 2 licences; another fits.
    let mut s = licensed(false);
    let two = Submission {
        num_processors: 2,
        max_processors: 2,
        ..asking("rusage[licence=1]")
    };
    assert!(placed(&mut s, two.clone()).1.is_some());
    assert!(placed(&mut s, asking("rusage[licence=1]")).1.is_some());
    // Per slot (RESOURCE_RESERVE_PER_SLOT): the 2-slot job takes both.
    let mut s = licensed(true);
    assert!(placed(&mut s, two).1.is_some());
    assert_eq!(placed(&mut s, asking("rusage[licence=1]")).1, None);
}

/// lsb.resources ReservationUsage: each resource is reserved by its own METHOD, over
/// RESOURCE_RESERVE_PER_SLOT.
#[test]
fn reservation_usage_methods_decide_per_resource() {
    use basalt_config::batch::ReserveMethod;
    let two = |rr: &str| Submission {
        num_processors: 2,
        max_processors: 2,
        ..asking(&format!("{rr} span[hosts=1]"))
    };
    // PER_TASK for mem alone: 2 x 400 of hostA's 1000 MB, while the default (per host)
    // still applies to the licence.
    let mut c = typed();
    c.res_kinds.insert("licence".into(), NameKind::Numeric);
    c.shared.push(crate::SharedRes {
        name: "licence".into(),
        value: Some(2.0),
        hosts: vec!["hostA".into(), "hostB".into()],
    });
    c.reserve_methods
        .insert("mem".into(), ReserveMethod::PerTask);
    let mut s = core_with(c.clone(), &[("mem", 1000.0)], &[("mem", 100.0)]);
    let (_, host) = placed(&mut s, two("rusage[mem=400,licence=1]"));
    assert_eq!(host.as_deref(), Some("hostA"));
    assert_eq!(
        placed(&mut s, asking("rusage[mem=300] select[hname==hostA]")).1,
        None
    );
    assert!(placed(&mut s, asking("rusage[licence=1]")).1.is_some());
    // PER_JOB over RESOURCE_RESERVE_PER_SLOT=Y: a 2-slot job takes one licence.
    c.reserve_per_slot = true;
    c.reserve_methods
        .insert("licence".into(), ReserveMethod::PerJob);
    let mut s = core_with(c, &[("mem", 10_000.0)], &[("mem", 100.0)]);
    assert!(placed(&mut s, two("rusage[licence=1]")).1.is_some());
    assert!(placed(&mut s, asking("rusage[licence=1]")).1.is_some());
    assert_eq!(placed(&mut s, asking("rusage[licence=1]")).1, None);
}

/// An application profile (`bsub -app`) applies its RES_REQ to a job without its own
/// `-R`, its limits between the job's and the queue's, and its REQUEUE_EXIT_VALUES.
#[test]
fn an_application_profiles_res_req_limits_and_requeue_values_apply_to_its_jobs() {
    let mut c = typed();
    let mut settings = BTreeMap::new();
    settings.insert("RUNLIMIT".to_owned(), "10".to_owned());
    c.apps.insert(
        "sun".into(),
        crate::AppProfile {
            name: "sun".into(),
            res_req: "select[type==SUN]".into(),
            requeue: basalt_config::batch::RequeueValues::parse("7").ok(),
            rlimits: crate::limits::parse(&settings, "MB").0,
            settings,
            ..Default::default()
        },
    );
    let mut s = core_with(c, &[], &[]);
    let with_app = |res_req: &str| Submission {
        extras: Some(Box::new(crate::SubExtras {
            app: "sun".into(),
            ..Default::default()
        })),
        ..asking(res_req)
    };
    let (key, host) = placed(&mut s, with_app(""));
    assert_eq!(host.as_deref(), Some("hostB"));
    // RUNLIMIT 10 minutes from the profile.
    assert_eq!(s.effective_rlimits(&s.jobs[&key])[crate::RLIMIT_RUN], 600);
    // Its own -R wins.
    let (_, host) = placed(&mut s, with_app("select[type==LINUX]"));
    assert_eq!(host.as_deref(), Some("hostA"));
    // Exit 7 requeues (the profile's REQUEUE_EXIT_VALUES).
    crate::tests::finish(&mut s, key, 7 << 8, 1);
    assert_eq!(s.jobs[&key].state, JobState::Pend);
}

/// `bsub -m "host+N ..."`: the job's preference levels order its hosts (over the queue's
/// HOSTS levels); `others` lets it use the hosts it does not name.
#[test]
fn bsub_m_preference_levels_and_others() {
    let mut s = core_with(typed(), &[], &[]);
    let on = |hosts: &[&str]| Submission {
        asked_hosts: hosts.iter().map(|h| h.to_string()).collect(),
        ..asking("")
    };
    // hostA is first in file order; the level sends the job to hostB.
    assert_eq!(
        placed(&mut s, on(&["hostA", "hostB+2"])).1.as_deref(),
        Some("hostB")
    );
    assert_eq!(
        placed(&mut s, on(&["hostA+", "hostB"])).1.as_deref(),
        Some("hostA")
    );
    // A host that is not named, without `others`, is not a candidate.
    assert_eq!(
        s.submit(T0, &alice(), on(&["nohost"])).err(),
        Some(SchedError::BadHost)
    );
    // `others+1` over a plain name: an unnamed host is preferred.
    assert_eq!(
        placed(&mut s, on(&["hostA", "others+1"])).1.as_deref(),
        Some("hostB")
    );
    // As logged: names resolved, levels kept, `all` read as `others`.
    let (id, _, _) = s
        .submit(T0, &alice(), on(&["hostB+3", "all"]))
        .expect("submit");
    assert_eq!(s.jobs[&(id, 0)].sub.asked_hosts, vec!["hostB+3", "others"]);
}

/// JOB_ACCEPT_INTERVAL: a host that took a job takes no other for the interval (in
/// MBD_SLEEP_TIMEs); a queue's own value applies to its jobs over lsb.params'.
#[test]
fn a_queues_job_accept_interval_overrides_lsb_params() {
    let mut c = cfg();
    c.job_accept_interval = 0;
    c.mbd_sleep_time_secs = 10;
    // hostB is closed: everything goes to hostA (2 slots).
    c.queues[1].job_accept_interval = Some(1);
    let mut s = core_with(c, &[], &[]);
    s.host_ctl(T0, &crate::tests::admin(), 2, "hostB", "")
        .expect("close");
    s.take_effects();
    let high = |c: &str| Submission {
        queue: "high".into(),
        ..cmd(c)
    };
    // Queue "high" (interval 1 x 10 s): one job on hostA, the next waits.
    assert!(placed(&mut s, high("a")).1.is_some());
    let (key, host) = placed(&mut s, high("b"));
    assert_eq!(host, None);
    assert!(s.jobs[&key].pend_reasons.contains_key(&pend::JUST_STARTED));
    // Queue "normal" (lsb.params: 0) is not held back: it takes hostA's second slot.
    assert_eq!(placed(&mut s, cmd("c")).1.as_deref(), Some("hostA"));
}

/// same[type] in the pass: a job on 2 hosts, one slot each, only goes where two hosts of
/// one type are free; the queue's RES_REQ span applies to a job without its own.
#[test]
fn same_type_keeps_a_job_on_hosts_of_one_type_and_the_queues_span_applies() {
    let mut c = typed();
    c.hosts.push(crate::tests::host("hostC", 2));
    c.hosts[2].statics.strings = c.hosts[0].statics.strings.clone();
    c.queues[1].res_req = "span[ptile=1]".into();
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB", "hostC"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.take_effects();
    let two = |rr: &str| Submission {
        num_processors: 2,
        max_processors: 2,
        queue: "high".into(),
        ..asking(rr)
    };
    let (id, _, _) = s.submit(T0, &alice(), two("same[type]")).expect("submit");
    s.schedule(T0 + 10);
    s.take_effects();
    // hostA and hostC share a type; one slot each (the queue's ptile=1).
    let mut on = s.jobs[&(id, 0)].hosts.clone();
    on.sort();
    assert_eq!(on, vec!["hostA", "hostC"]);
    // Without same[]: the first two hosts in order, of different types.
    let (id, _, _) = s.submit(T0, &alice(), two("")).expect("submit");
    s.schedule(T0 + 20);
    let mut on = s.jobs[&(id, 0)].hosts.clone();
    on.sort();
    assert_eq!(on.len(), 2);
    assert!(on.contains(&"hostB".to_string()), "{on:?}");
}

/// A dynamic shared resource (an ELIM reports it on a host of its instance): its value is
/// what that host's LIM reports, less what running jobs reserve, on every host of the
/// instance; unreported, it satisfies nothing.
#[test]
fn a_dynamic_shared_resource_takes_its_value_from_the_elim() {
    let mut c = cfg();
    c.res_kinds.insert("licence".into(), NameKind::Numeric);
    c.shared.push(crate::SharedRes {
        name: "licence".into(),
        value: None,
        hosts: vec!["hostA".into(), "hostB".into()],
    });
    // Nobody reports it yet: a job asking for one waits.
    let mut s = core_with(c.clone(), &[], &[]);
    assert_eq!(placed(&mut s, asking("rusage[licence=1]")).1, None);
    // hostB's ELIM reports 1 free licence: one job (on either host), not two.
    let mut s = core_with(c, &[], &[("licence", 1.0)]);
    assert!(placed(&mut s, asking("rusage[licence=1]")).1.is_some());
    assert_eq!(placed(&mut s, asking("rusage[licence=1]")).1, None);
    assert_eq!(placed(&mut s, asking("select[licence>0]")).1, None);
}

/// Static Boolean and String shared resources (ResourceMap): select sees them on the
/// hosts of their instance.
#[test]
fn boolean_and_string_shared_resources_are_seen_by_select() {
    let mut c = cfg();
    c.res_kinds.insert("fastnet".into(), NameKind::Boolean);
    c.res_kinds.insert("os".into(), NameKind::String);
    c.shared_flags
        .insert("hostB".into(), vec![("fastnet".into(), None)]);
    c.shared_flags
        .insert("hostA".into(), vec![("os".into(), Some("rhel8".into()))]);
    let mut s = core_with(c, &[], &[]);
    assert_eq!(
        placed(&mut s, asking("select[fastnet]")).1.as_deref(),
        Some("hostB")
    );
    assert_eq!(
        placed(&mut s, asking("select[os=='rhel8']")).1.as_deref(),
        Some("hostA")
    );
    assert_eq!(placed(&mut s, asking("select[os=='sles']")).1, None);
}

fn from(host: &str, res_req: &str) -> Submission {
    Submission {
        from_host: host.into(),
        ..asking(res_req)
    }
}

/// "If no type is specified, the default depends on the command. For bsub ... the
/// default is type==local": with hosts of two types a job runs only on hosts of its
/// submission host's type, and pends with the job's resource reason for the others.
#[test]
fn without_a_type_a_job_runs_on_hosts_of_its_submission_hosts_type() {
    let mut s = core_with(typed(), &[], &[]);
    assert_eq!(
        placed(&mut s, from("hostA", "")).1.as_deref(),
        Some("hostA")
    );
    let mut on_b = Vec::new();
    for _ in 0..2 {
        on_b.push(placed(&mut s, from("hostB", "select[ncpus>=1]")).1);
    }
    assert_eq!(on_b, vec![Some("hostB".to_owned()); 2]);
    // hostB is full; hostA has a free slot but is of another type.
    let (key, host) = placed(&mut s, from("hostB", ""));
    assert_eq!(host, None);
    let r = &s.jobs[&key].pend_reasons;
    assert_eq!(
        r.get(&pend::RES_REQ),
        Some(&vec!["hostA".to_owned()]),
        "{r:?}"
    );
    // A submission host the cluster does not know (a client): any type.
    assert_eq!(
        placed(&mut s, from("client9", "")).1.as_deref(),
        Some("hostA")
    );
}

/// "... unless a string or Boolean resource is specified, in which case it is
/// type==any"; `type==any` says so; `type==local` asks the submission host's type.
#[test]
fn type_any_a_string_or_boolean_resource_lift_the_default_and_type_local_asks_it() {
    let mut s = core_with(typed(), &[], &[]);
    // Jobs from hostB naming a string or Boolean resource may run on hostA (LINUX).
    assert_eq!(
        placed(&mut s, from("hostB", "select[hname==hostA]"))
            .1
            .as_deref(),
        Some("hostA")
    );
    assert_eq!(
        placed(&mut s, from("hostB", "select[!spice]")).1.as_deref(),
        Some("hostA")
    );
    let mut s = core_with(typed(), &[], &[]);
    for _ in 0..2 {
        assert_eq!(
            placed(&mut s, from("hostB", "type==local")).1.as_deref(),
            Some("hostB")
        );
    }
    let (key, host) = placed(&mut s, from("hostB", "select[type==local]"));
    assert_eq!(host, None, "hostB is full and hostA is LINUX");
    assert!(s.jobs[&key].pend_reasons.contains_key(&pend::RES_REQ));
    assert_eq!(
        placed(&mut s, from("hostB", "type==any")).1.as_deref(),
        Some("hostA")
    );
    // The queue's RES_REQ naming a type lifts it too.
    let mut c = typed();
    c.queues[0].res_req = "select[type==LINUX || type==SUN]".into();
    let mut s = core_with(c, &[], &[]);
    for _ in 0..2 {
        placed(&mut s, from("hostB", ""));
    }
    assert_eq!(
        placed(&mut s, from("hostB", "")).1.as_deref(),
        Some("hostA")
    );
}

/// Issue 51: whether the hosts are of more than one type follows LIM's static
/// information as it changes each host's type (counted per type, not rescanned).
#[test]
fn the_hosts_types_are_mixed_as_lim_reports_them() {
    let mut s = core_with(cfg(), &[], &[]);
    let info = |t: &str| LimStatic {
        host_type: t.into(),
        model: "m".into(),
        ..Default::default()
    };
    s.lim_static("hostA", &info("LINUX"));
    s.lim_static("hostB", &info("LINUX"));
    assert!(!s.host_types.mixed());
    s.lim_static("hostB", &info("SUN"));
    assert!(s.host_types.mixed());
    // The same information again changes nothing.
    s.lim_static("hostB", &info("SUN"));
    assert!(s.host_types.mixed());
    s.lim_static("hostA", &info("SUN"));
    assert!(!s.host_types.mixed());
    // As counted afresh from the hosts.
    assert_eq!(
        crate::schedule::HostTypes::of(&s.hosts).mixed(),
        s.host_types.mixed()
    );
    // With the default type==local, a job from hostA now runs anywhere of its type.
    assert!(placed(&mut s, from("hostA", "")).1.is_some());
}
