//! Issue 50, item 12: pending reasons as specific as LSF's. A job short of a resource it
//! reserves (`rusage[verilog=1]`) names the resource; a host whose free slots another
//! job reserves (SLOT_RESERVE) says so; an exclusive job (`bsub -x`) waiting for an
//! occupied host gives the exclusive-execution reason. Two hosts of two slots, a manual
//! clock.

use super::*;
use crate::tests::{T0, alice, bob, cfg, cmd, dispatches, up_with};
use basalt_config::select::NameKind;
use basalt_core::job::{pend, pend_reason_text};

/// The hosts a pending job's reason `code` names (empty: it does not give it).
fn hosts_of(s: &Sched, id: u64, code: u32) -> Vec<String> {
    s.jobs[&(id, 0)]
        .pend_reasons
        .get(&code)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn issue_50_item_12_an_rusage_shortfall_names_the_resource() {
    // One verilog licence shared by both hosts (lsf.shared: `verilog Numeric`, the
    // cluster's ResourceMap: `verilog (1@[all])`), after a resource defined before it.
    let mut c = cfg();
    c.res_kinds.insert("verilog".into(), NameKind::Numeric);
    c.res_table = vec!["scratch".into(), "verilog".into()];
    c.shared.push(crate::SharedRes {
        name: "verilog".into(),
        value: Some(1.0),
        hosts: vec!["hostA".into(), "hostB".into()],
    });
    let mut s = up_with(c);
    let rusage = |c: &str| Submission {
        res_req: "rusage[verilog=1]".into(),
        ..cmd(c)
    };
    s.submit(T0, &alice(), rusage("sim one")).expect("submit");
    s.submit(T0, &alice(), rusage("sim two")).expect("submit");
    s.schedule(T0 + 10);
    assert_eq!(dispatches(&s.take_effects()).len(), 1);
    // LSF's PEND_HOST_JOB_RUSAGE + the resource's index in the cluster's resource
    // table: the 11 built-in load indices, then lsf.shared's resources in order.
    let code = pend::RESERVE_BASE + 11 + 1;
    assert_eq!(
        hosts_of(&s, 2, code),
        vec!["hostA".to_string(), "hostB".to_string()],
        "{:?}",
        s.jobs[&(2, 0)].pend_reasons
    );
    assert!(!s.jobs[&(2, 0)].pend_reasons.contains_key(&pend::RES_REQ));
    // The name goes with the code to bjobs (the view carries the table).
    assert_eq!(
        s.jobs_view(&JobQuery::default()).resource_of(code),
        Some("verilog")
    );
    // A built-in index keeps its own number and text.
    assert_eq!(
        pend_reason_text(pend::RESERVE_BASE + 10),
        "Job requirements for reserving resource (mem) not satisfied"
    );
}

#[test]
fn issue_50_item_12_a_host_blocked_by_another_jobs_reservation_says_so() {
    let mut c = cfg();
    c.queues[0].slot_reserve = Some(5);
    let mut s = up_with(c);
    // Three one-slot jobs take hostA's two slots and one of hostB's; a 4-slot job
    // reserves hostB's last slot.
    for _ in 0..3 {
        s.submit(T0, &alice(), cmd("sleep 600")).expect("submit");
    }
    s.schedule(T0);
    let mut parallel = cmd("mpirun a.out");
    parallel.num_processors = 4;
    parallel.max_processors = 4;
    s.submit(T0, &alice(), parallel).expect("submit");
    s.schedule(T0);
    assert_eq!(s.hosts[1].rsv_slots, 1);
    // Another user's one-slot job: hostA is full of running jobs, hostB's free slot is
    // reserved for job 4.
    s.submit(T0, &bob(), cmd("short")).expect("submit");
    s.schedule(T0 + 10);
    assert_eq!(s.jobs[&(5, 0)].state, JobState::Pend);
    assert_eq!(
        hosts_of(&s, 5, pend::SLOTS_RESERVED),
        vec!["hostB".to_string()],
        "{:?}",
        s.jobs[&(5, 0)].pend_reasons
    );
    assert_eq!(
        hosts_of(&s, 5, pend::HOST_JOB_LIMIT),
        vec!["hostA".to_string()]
    );
    assert_eq!(
        pend_reason_text(pend::SLOTS_RESERVED),
        "Job slots are reserved for other jobs"
    );
}

#[test]
fn issue_50_item_12_an_exclusive_job_waiting_for_an_occupied_host_gives_the_exclusive_reason() {
    let mut s = up_with(cfg());
    // One job on each host (most free slots first): neither host is empty.
    s.submit(T0, &alice(), cmd("sleep 600")).expect("submit");
    s.submit(T0, &alice(), cmd("sleep 600")).expect("submit");
    s.schedule(T0);
    assert_eq!(dispatches(&s.take_effects()).len(), 2);
    let exclusive = Submission {
        options: basalt_core::job::sub::EXCLUSIVE,
        ..cmd("whole host")
    };
    s.submit(T0, &bob(), exclusive).expect("submit");
    s.schedule(T0 + 10);
    assert_eq!(s.jobs[&(3, 0)].state, JobState::Pend);
    assert_eq!(
        hosts_of(&s, 3, pend::NONEXCLUSIVE),
        vec!["hostA".to_string(), "hostB".to_string()],
        "{:?}",
        s.jobs[&(3, 0)].pend_reasons
    );
    assert_eq!(
        pend_reason_text(pend::NONEXCLUSIVE),
        "Job's requirement for exclusive execution not satisfied"
    );
}
