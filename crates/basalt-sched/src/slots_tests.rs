//! `bsub -n min,max`: a job gets as many slots as are free when it is dispatched, at
//! least min and at most max, within span[] and the queue's slot limits (LSF: "the job
//! runs if at least min slots are available, and uses up to max").

use super::*;
use crate::tests::{T0, alice, cfg, cmd, logged, up};

fn min_max(min: u32, max: u32) -> Submission {
    let mut s = cmd("mpirun a.out");
    s.num_processors = min;
    s.max_processors = max;
    s
}

fn start_hosts(eff: &[Effect], key: JobKey) -> Option<Vec<String>> {
    logged(eff).into_iter().find_map(|e| match e {
        Event::JobStart { key: k, hosts, .. } if k == key => Some(hosts),
        _ => None,
    })
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn a_min_max_job_takes_every_free_slot_up_to_max() {
    let mut s = up();
    s.submit(T0, &alice(), min_max(2, 4)).expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    // 2 hosts x 2 slots are free: the job gets all 4, and JOB_START names them.
    let hosts = start_hosts(&eff, (1, 0)).expect("JOB_START");
    assert_eq!(sorted(hosts), ["hostA", "hostA", "hostB", "hostB"]);
    assert_eq!(s.jobs[&(1, 0)].hosts.len(), 4);
    assert_eq!(s.jobs[&(1, 0)].slots(), 4);
}

#[test]
fn a_min_max_job_takes_no_more_than_max() {
    let mut s = up();
    s.submit(T0, &alice(), min_max(1, 3)).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].hosts.len(), 3);
    // The fourth slot is still free for another job.
    s.submit(T0, &alice(), cmd("one")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
}

#[test]
fn a_min_max_job_takes_the_free_slots_when_fewer_than_max_are_free() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("one")).expect("submit");
    s.schedule(T0);
    s.submit(T0, &alice(), min_max(2, 4)).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    assert_eq!(s.jobs[&(2, 0)].hosts.len(), 3);
}

#[test]
fn a_min_max_job_pends_while_fewer_than_min_slots_are_free() {
    let mut s = up();
    for i in 0..3 {
        s.submit(T0, &alice(), cmd(&format!("one{i}")))
            .expect("submit");
    }
    s.schedule(T0);
    s.submit(T0, &alice(), min_max(2, 4)).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(4, 0)].state, JobState::Pend);
    assert_eq!(s.jobs[&(4, 0)].slots(), 2);
}

#[test]
fn span_hosts_1_keeps_a_min_max_job_on_one_host() {
    let mut s = up();
    let mut j = min_max(1, 4);
    j.res_req = "span[hosts=1]".into();
    s.submit(T0, &alice(), j).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].hosts, ["hostA", "hostA"]);
}

#[test]
fn span_ptile_caps_a_min_max_job_per_host() {
    let mut s = up();
    let mut j = min_max(1, 4);
    j.res_req = "span[ptile=1]".into();
    s.submit(T0, &alice(), j).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(sorted(s.jobs[&(1, 0)].hosts.clone()), ["hostA", "hostB"]);
}

#[test]
fn a_ptile_min_max_job_still_starts_with_min_when_max_cannot_be_placed() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("one")).expect("submit");
    s.schedule(T0);
    // hostB has 2 free slots, hostA 1: ptile=2 cannot reach 4, but 2 + 1 makes min 3.
    let mut j = min_max(3, 4);
    j.res_req = "span[ptile=2]".into();
    s.submit(T0, &alice(), j).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    assert_eq!(
        sorted(s.jobs[&(2, 0)].hosts.clone()),
        ["hostA", "hostB", "hostB"]
    );
}

#[test]
fn queue_slot_limits_cap_what_a_min_max_job_takes() {
    let mut c = cfg();
    c.queues[0].qjob_limit = Some(3);
    let mut s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.submit(T0, &alice(), min_max(2, 4)).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(1, 0)].hosts.len(), 3);
    assert_eq!(s.queue_counts("normal").2, 3);
}

#[test]
fn the_slots_a_min_max_job_got_count_on_its_hosts_and_queue() {
    let mut s = up();
    s.submit(T0, &alice(), min_max(2, 4)).expect("submit");
    s.schedule(T0);
    s.take_effects();
    // (njobs, pend, run, ssusp, ususp) and (njobs, run, ssusp, ususp)
    assert_eq!(s.queue_counts("normal"), (4, 0, 4, 0, 0));
    assert_eq!(s.host_counts("hostA"), (2, 2, 0, 0));
    // No slot is left: a one-slot job waits.
    s.submit(T0, &alice(), cmd("one")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
}

/// A core of hostA (type LINUX) and hostB (type SGI), 2 slots each.
fn two_types() -> Sched {
    let mut c = cfg();
    for (h, t) in c.hosts.iter_mut().zip(["LINUX", "SGI"]) {
        h.statics.strings.insert("type".into(), t.into());
    }
    crate::tests::up_with(c)
}

fn spanned(n: u32, res_req: &str) -> Submission {
    let mut s = min_max(n, n);
    s.res_req = res_req.into();
    s
}

/// `span[ptile='!']`: each host takes as many slots as it has.
#[test]
fn ptile_bang_takes_each_hosts_slot_count() {
    let mut s = up();
    s.submit(T0, &alice(), spanned(4, "span[ptile='!']"))
        .expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    let hosts = start_hosts(&eff, (1, 0)).expect("JOB_START");
    assert_eq!(sorted(hosts), ["hostA", "hostA", "hostB", "hostB"]);
    // With one slot taken on hostA, hostA cannot take its tile of 2: 4 slots wait.
    let mut s = up();
    let mut one = cmd("one");
    one.asked_hosts = vec!["hostA".into()];
    s.submit(T0, &alice(), one).expect("submit");
    s.schedule(T0);
    s.submit(T0, &alice(), spanned(4, "span[ptile='!']"))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
    assert!(
        s.jobs[&(2, 0)]
            .pend_reasons
            .contains_key(&basalt_core::job::pend::SPAN)
    );
}

/// `span[ptile=LINUX:1,SGI:2]`: a tile per host type; `span[ptile=LINUX:1]` uses only
/// the hosts of the types it names; `'!'` gives the others their slot count.
#[test]
fn ptile_per_host_type_lays_slots_by_type() {
    let mut s = two_types();
    s.submit(
        T0,
        &alice(),
        spanned(3, "select[type==any] span[ptile=LINUX:1,SGI:2]"),
    )
    .expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    let hosts = start_hosts(&eff, (1, 0)).expect("JOB_START");
    assert_eq!(sorted(hosts), ["hostA", "hostB", "hostB"]);

    let mut s = two_types();
    s.submit(
        T0,
        &alice(),
        spanned(2, "select[type==any] span[ptile=LINUX:1]"),
    )
    .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Pend);
    s.submit(
        T0,
        &alice(),
        spanned(1, "select[type==any] span[ptile=LINUX:1]"),
    )
    .expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    assert_eq!(start_hosts(&eff, (2, 0)), Some(vec!["hostA".to_string()]));

    let mut s = two_types();
    s.submit(
        T0,
        &alice(),
        spanned(3, "select[type==any] span[ptile='!',LINUX:1]"),
    )
    .expect("submit");
    s.schedule(T0);
    let eff = s.take_effects();
    let hosts = start_hosts(&eff, (1, 0)).expect("JOB_START");
    assert_eq!(sorted(hosts), ["hostA", "hostB", "hostB"]);
}

/// `span[hosts=-1]` in the job: the queue's span[] does not apply.
#[test]
fn span_hosts_minus_1_lifts_the_queues_span() {
    let mut c = cfg();
    c.queues[0].res_req = "span[hosts=1]".into();
    let mut s = crate::tests::up_with(c);
    // 3 slots on one host do not fit: pending under the queue's span.
    s.submit(T0, &alice(), spanned(3, "")).expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(1, 0)].state, JobState::Pend);
    s.submit(T0, &alice(), spanned(3, "span[hosts=-1]"))
        .expect("submit");
    s.schedule(T0);
    assert_eq!(s.jobs[&(2, 0)].state, JobState::Run);
    assert_eq!(s.jobs[&(2, 0)].hosts.len(), 3);
}
