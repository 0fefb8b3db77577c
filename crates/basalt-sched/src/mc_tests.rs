//! MultiCluster job forwarding (seed 004, "Job scheduling under the job forwarding
//! model") on a manual clock: the Phase II choice, and both sides of a forward. Test
//! names follow the seed's sentences.

use crate::mc::*;
use crate::tests::expect::assert_effects;
use crate::tests::*;
use crate::*;
use basalt_core::job::{pend, status};

fn rq(name: &str, impt: Option<u32>, pending: u32) -> RemoteQueue {
    RemoteQueue {
        name: name.into(),
        priority: 30,
        impt_jobbklg: impt,
        mc_pending: pending,
        free_slots: 0,
        preemptable_slots: 0,
        pending_slots: 0,
        hosts: vec![("LINUX".into(), vec![])],
    }
}

fn cands<'a>(qs: &'a [(&'a str, RemoteQueue)]) -> Vec<Candidate<'a>> {
    qs.iter()
        .map(|(c, q)| Candidate {
            cluster: c,
            queue: q,
            room: q.room(),
        })
        .collect()
}

// ---- Phase II: the choice -------------------------------------------------------------

/// "To find out how many additional MultiCluster jobs a queue can accept, subtract the
/// number of MultiCluster jobs already pending in the queue from the queue's pending
/// MultiCluster job threshold (IMPT_JOBBKLG)."
#[test]
fn room_is_impt_jobbklg_less_the_multicluster_jobs_pending() {
    assert_eq!(rq("r", Some(50), 8).room(), 42);
    assert_eq!(rq("r", Some(5), 9).room(), 0);
    assert_eq!(rq("r", None, 1000).room(), u32::MAX);
}

/// "All queues that will accept more MultiCluster jobs are candidates."
#[test]
fn only_queues_with_room_are_candidates() {
    let qs = [
        ("east", rq("full", Some(2), 2)),
        ("west", rq("r", Some(2), 1)),
    ];
    assert_eq!(choose(&cands(&qs), "", Policy::default()), Some(1));
    let full = [("east", rq("full", Some(2), 2))];
    assert_eq!(choose(&cands(&full), "", Policy::default()), None);
}

/// "By default, only queue capacity is considered and the first queue evaluated is the
/// one that has room to accept the most new MultiCluster jobs."
#[test]
fn by_default_the_queue_with_the_most_room_is_evaluated_first() {
    let qs = [
        ("east", rq("a", Some(10), 8)),
        ("west", rq("b", Some(10), 1)),
        ("north", rq("c", Some(10), 5)),
    ];
    assert_eq!(choose(&cands(&qs), "", Policy::default()), Some(1));
    // Equal room: SNDJOBS_TO order.
    let tie = [
        ("east", rq("a", Some(10), 5)),
        ("west", rq("b", Some(10), 5)),
    ];
    assert_eq!(choose(&cands(&tie), "", Policy::default()), Some(0));
    // Jobs sent earlier in the pass count against the room.
    let mut c = cands(&qs);
    c[1].room = 1;
    assert_eq!(choose(&c, "", Policy::default()), Some(2));
}

/// "When MC_PLUGIN_REMOTE_RESOURCE=Y is set, boolean resource requirements and available
/// remote resources are considered." "-R "type==type_name", -R "same[type]", and -R
/// "defined(resource_name)"" are supported.
#[test]
fn remote_resource_checks_type_same_type_and_defined() {
    let mut sparc = rq("s", Some(10), 0);
    sparc.hosts = vec![("SPARC".into(), vec!["fluent".into()])];
    let mut linux = rq("l", Some(10), 0);
    linux.hosts = vec![("LINUX".into(), vec![])];
    assert!(remote_fits("type==SPARC", &sparc));
    assert!(!remote_fits("type==SPARC", &linux));
    assert!(remote_fits("select[type==LINUX || type==SPARC]", &linux));
    assert!(remote_fits("defined(fluent)", &sparc));
    assert!(!remote_fits("defined(fluent)", &linux));
    assert!(!remote_fits("type==SPARC && defined(fluent)", &linux));
    assert!(remote_fits("same[type]", &linux));
    assert!(remote_fits("!defined(fluent)", &linux));
    // Other terms are the remote cluster's to decide.
    assert!(remote_fits("mem>100", &linux));
    let none = RemoteQueue {
        hosts: vec![],
        ..rq("n", Some(10), 0)
    };
    assert!(!remote_fits("type==LINUX", &none));
}

/// "If the first queue is not suitable, LSF considers the next queue."
#[test]
fn an_unsuitable_first_queue_gives_way_to_the_next() {
    let mut most_room = rq("a", Some(50), 0);
    most_room.hosts = vec![("LINUX".into(), vec![])];
    let mut sparc = rq("b", Some(10), 0);
    sparc.hosts = vec![("SPARC".into(), vec![])];
    let qs = [("east", most_room), ("west", sparc)];
    let on = Policy {
        remote_resource: true,
        enhance: None,
    };
    assert_eq!(choose(&cands(&qs), "type==SPARC", on), Some(1));
    // Without MC_PLUGIN_REMOTE_RESOURCE only capacity counts.
    assert_eq!(
        choose(&cands(&qs), "type==SPARC", Policy::default()),
        Some(0)
    );
    // Nothing suitable: none.
    assert_eq!(choose(&cands(&qs), "type==MIPS", on), None);
}

/// "When MC_PLUGIN_SCHEDULE_ENHANCE is defined, remote resources are considered as for
/// MC_PLUGIN_REMOTE_RESOURCE=Y, and the scheduler is enhanced to consider remote queue
/// preemptable jobs, queue priority, and queue workload".
#[test]
fn schedule_enhance_considers_preemptable_jobs_priority_and_workload() {
    let q = |name: &str, prio: u32, free: u32, preempt: u32, pending: u32| RemoteQueue {
        priority: prio,
        free_slots: free,
        preemptable_slots: preempt,
        pending_slots: pending,
        ..rq(name, Some(100), 0)
    };
    let qs = [
        ("east", q("a", 30, 4, 0, 0)),
        ("west", q("b", 50, 1, 6, 9)),
        ("north", q("c", 40, 2, 1, 1)),
    ];
    let with = |e: Enhance| Policy {
        remote_resource: false,
        enhance: Some(e),
    };
    // RESOURCE_ONLY: the most free slots.
    let ro = Enhance {
        resource_only: true,
        ..Default::default()
    };
    assert_eq!(choose(&cands(&qs), "", with(ro)), Some(0));
    // COUNT_PREEMPTABLE: free and preemptable slots.
    let cp = Enhance {
        count_preemptable: true,
        ..Default::default()
    };
    assert_eq!(choose(&cands(&qs), "", with(cp)), Some(1));
    // HIGH_QUEUE_PRIORITY first.
    let hp = Enhance {
        count_preemptable: true,
        high_queue_priority: true,
        ..Default::default()
    };
    assert_eq!(choose(&cands(&qs), "", with(hp)), Some(1));
    // PENDING_WORKLOAD: the least pending work first.
    let pw = Enhance {
        count_preemptable: true,
        pending_workload: true,
        ..Default::default()
    };
    assert_eq!(choose(&cands(&qs), "", with(pw)), Some(0));
    // Remote resources are checked too.
    assert_eq!(choose(&cands(&qs), "type==SPARC", with(ro)), None);
}

// ---- both sides ---------------------------------------------------------------------

/// A core whose `normal` queue sends to recv@east, and whose hostA is closed (hostB is
/// not in `normal`'s hosts): nothing local fits `normal`'s jobs unless hostA opens.
fn sender() -> Sched {
    let mut c = cfg();
    c.queues[0].hosts = vec!["hostA".into()];
    c.mc.send
        .insert("normal".into(), vec![("recv".into(), "east".into())]);
    c.mc.initfail_retry = 2;
    let mut s = up_with(c);
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("hclose");
    s.take_effects();
    s
}

fn east_room(s: &mut Sched, now: Millis, pending: u32) {
    s.mc_set_remote(now, "east", Some(vec![rq("recv", Some(10), pending)]));
}

fn forwards(eff: &[Effect]) -> Vec<(JobKey, String, String, u32)> {
    eff.iter()
        .filter_map(|e| match e {
            Effect::McForward {
                key,
                cluster,
                queue,
                attempt,
            } => Some((*key, cluster.clone(), queue.clone(), *attempt)),
            _ => None,
        })
        .collect()
}

fn remote(src: JobKey, attempt: u32, state: u32) -> RemoteJob {
    RemoteJob {
        src,
        attempt,
        remote_id: 7,
        state,
        ..Default::default()
    }
}

/// Phase I, 4: "If a suitable host is found, the job is dispatched locally."
#[test]
fn a_job_that_fits_a_local_host_is_dispatched_locally() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.host_ctl(T0, &admin(), 1, "hostA", "").expect("hopen");
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log HOST_CTRL hostA @0 op=1 by admin(1002) \"\"",
            "Log JOB_NEW 1 @0",
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
}

/// Phase I, 5 and Phase II, 2: "If the job cannot be placed locally ... the send-jobs
/// queue attempts to forward the job to another cluster"; "LSF forwards the job to that
/// queue" (JOB_FORWARD logged before the forward goes out).
#[test]
fn a_job_no_local_host_takes_is_forwarded() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_FORWARD 1 @0 -> recv@east",
            "McForward 1 -> recv@east attempt 1",
        ],
    );
    let j = s.job((1, 0)).expect("job");
    assert_eq!(j.state, JobState::Pend);
    assert!(j.pend_reasons.contains_key(&pend::MC_FORWARDED));
    // Forwarded once only.
    s.schedule(T0 + 1000);
    assert_effects(&s.take_effects(), &[]);
}

/// Phase II, 4: "If LSF cannot forward the job to any of the receive-jobs queues, the job
/// remains pending in the send-jobs cluster and is evaluated again during the next
/// scheduling cycle."
#[test]
fn a_job_no_remote_queue_takes_stays_pending_and_is_tried_again() {
    let mut s = sender();
    east_room(&mut s, T0, 10);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 1 @0"]);
    assert_eq!(s.job((1, 0)).map(|j| j.state), Some(JobState::Pend));
    // Room again: forwarded by the next pass.
    east_room(&mut s, T0 + 1000, 3);
    s.schedule(T0 + 1000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_FORWARD 1 @1 -> recv@east",
            "McForward 1 -> recv@east attempt 1",
        ],
    );
}

/// Jobs that wait for themselves (a start time, a dependency) are not forwarded.
#[test]
fn a_job_waiting_for_its_start_time_is_not_forwarded() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    let mut sub = cmd("x");
    sub.begin_time = T0 / 1000 + 3600;
    s.submit(T0, &alice(), sub).expect("submit");
    s.schedule(T0);
    assert_effects(&s.take_effects(), &["Log JOB_NEW 1 @0"]);
}

/// Phase III, 3: "If the job is rejected, it returns to the submission cluster."
#[test]
fn a_rejected_job_returns_and_that_queue_is_skipped_for_a_while() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    s.mc_forward_answer(T0 + 10, (1, 0), 1, Err("Queue does not exist".into()));
    // PEND with PEND_MC_RETURNED (91 = 0x5b), subreason RETURN_REJECTED (1).
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 1 @0 PEND reasons=0x5b sub=0x1"],
    );
    let j = s.job((1, 0)).expect("job");
    assert!(
        j.mc.as_ref()
            .is_some_and(|m| m.fwd_cluster.is_empty() && m.returns == 0)
    );
    s.schedule(T0 + 20);
    assert_effects(&s.take_effects(), &[]);
    // A scheduling interval (MBD_SLEEP_TIME 10 s) later it is tried again.
    s.tick(T0 + 11_000);
    s.schedule(T0 + 11_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_FORWARD 1 @11 -> recv@east",
            "McForward 1 -> recv@east attempt 2",
        ],
    );
}

/// Phase III, 4–5 seen from the submission cluster: the remote job's start and end are
/// logged here (exec hosts `host@cluster`) and its accounting flows back.
#[test]
fn the_remote_jobs_start_and_end_are_logged_in_the_submission_cluster() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    s.mc_forward_answer(T0, (1, 0), 1, Ok(7));
    assert_eq!(
        s.job((1, 0))
            .and_then(|j| j.mc.as_ref())
            .map(|m| m.remote_id),
        Some(7)
    );
    let mut r = remote((1, 0), 1, status::RUN);
    r.hosts = vec!["hostE".into()];
    r.start_time = T0 / 1000 + 1;
    s.mc_remote_jobs(T0 + 1000, "east", vec![r.clone()]);
    assert_effects(&s.take_effects(), &["Log JOB_START 1 @1 on hostE@east"]);
    assert_eq!(s.job((1, 0)).map(|j| j.state), Some(JobState::Run));
    // The same news again logs nothing.
    s.mc_remote_jobs(T0 + 2000, "east", vec![r.clone()]);
    assert_effects(&s.take_effects(), &[]);
    // Local hosts' slots are untouched by the remote run.
    assert_eq!(s.used_slots("hostA") + s.used_slots("hostB"), 0);
    r.state = status::DONE;
    r.end_time = T0 / 1000 + 5;
    r.cpu_time = 1.5;
    s.mc_remote_jobs(T0 + 6000, "east", vec![r]);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @5 DONE cpu=1.5 end@5",
            "Acct 1 DONE on hostE@east",
        ],
    );
    let j = s.job((1, 0)).expect("job");
    assert_eq!((j.state, j.cpu_time), (JobState::Done, 1.5));
}

/// Phase III, 6: "after LSB_MC_INITFAIL_RETRY tries to start the job (lsf.conf), LSF
/// suspends the job (PSUSP) in the submission cluster."
#[test]
fn after_initfail_retry_returns_the_job_is_psusp() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.take_effects();
    // Forward `attempt` at `now`, back not started a second later: the effects of both.
    let round = |s: &mut Sched, attempt: u32, now: Millis| {
        s.schedule(now);
        let forwarded = s.take_effects();
        let mut r = remote((1, 0), attempt, status::EXIT);
        r.returned = RETURN_NOT_STARTED;
        s.mc_remote_jobs(now + 1000, "east", vec![r]);
        (forwarded, s.take_effects())
    };
    // Back pending with PEND_MC_RETURNED (0x5b), subreason RETURN_NOT_STARTED (2).
    let (forwarded, back) = round(&mut s, 1, T0);
    assert_effects(
        &forwarded,
        &[
            "Log JOB_FORWARD 1 @0 -> recv@east",
            "McForward 1 -> recv@east attempt 1",
        ],
    );
    assert_effects(&back, &["Log JOB_STATUS 1 @1 PEND reasons=0x5b sub=0x2"]);
    // The second return: PSUSP (SUSP_ADMIN_STOP 0x4000, subreason PEND_MC_RETURNED).
    let (forwarded, back) = round(&mut s, 2, T0 + 1000);
    assert_effects(
        &forwarded,
        &[
            "Log JOB_FORWARD 1 @1 -> recv@east",
            "McForward 1 -> recv@east attempt 2",
        ],
    );
    assert_effects(
        &back,
        &[
            "Log JOB_STATUS 1 @2 PEND reasons=0x5b sub=0x2",
            "Log JOB_STATUS 1 @2 PSUSP reasons=0x4000 sub=0x5b",
        ],
    );
    let now = T0 + 2000;
    let j = s.job((1, 0)).expect("job");
    assert_eq!(j.state, JobState::Psusp);
    assert_eq!(j.mc.as_ref().map(|m| m.returns), Some(2));
    // bresume gives it its tries again.
    s.resume(now, &alice(), (1, 0)).expect("bresume");
    assert_eq!(
        s.job((1, 0)).and_then(|j| j.mc.as_ref()).map(|m| m.returns),
        Some(0)
    );
}

/// A job the remote cluster no longer knows comes back (not lost, not counted); a
/// forward it never confirmed is sent again.
#[test]
fn a_lost_remote_job_comes_back_and_an_unconfirmed_forward_is_resent() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    // Not confirmed, not listed: sent again after RESEND_AFTER.
    s.mc_remote_jobs(T0 + 1000, "east", vec![]);
    assert_effects(&s.take_effects(), &[]);
    s.mc_remote_jobs(T0 + RESEND_AFTER, "east", vec![]);
    assert_effects(&s.take_effects(), &["McForward 1 -> recv@east attempt 1"]);
    // Confirmed, then gone: back here.
    s.mc_forward_answer(T0 + RESEND_AFTER, (1, 0), 1, Ok(7));
    s.mc_remote_jobs(T0 + RESEND_AFTER + 1000, "east", vec![]);
    // PEND with PEND_MC_RETURNED (0x5b), subreason RETURN_LOST (4).
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 1 @6 PEND reasons=0x5b sub=0x4"],
    );
    assert_eq!(
        s.job((1, 0)).and_then(|j| j.mc.as_ref()).map(|m| m.returns),
        Some(0)
    );
}

/// bkill / bstop / bresume of a forwarded job act on the remote job.
#[test]
fn job_control_of_a_forwarded_job_goes_to_the_remote_cluster() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.submit(T0, &alice(), cmd("y")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    // Running there: stop and resume go there.
    let mut r = remote((1, 0), 1, status::RUN);
    r.hosts = vec!["hostE".into()];
    s.mc_remote_jobs(T0 + 1000, "east", vec![r, remote((2, 0), 1, status::PEND)]);
    s.take_effects();
    s.stop(T0 + 2000, &alice(), (1, 0)).expect("bstop");
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_SIGNAL 1 @2 STOP by alice(1000)",
            "McControl 1 @east STOP",
        ],
    );
    // Pending there: killed there, and ended here at once.
    s.kill(T0 + 2000, &alice(), (2, 0), false, false)
        .expect("bkill");
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_SIGNAL 2 @2 KILL by alice(1000)",
            "McControl 2 @east KILL",
            "Log JOB_STATUS 2 @2 EXIT end@2 TERM_OWNER",
            "Acct 2 EXIT TERM_OWNER",
        ],
    );
    assert_eq!(s.job((2, 0)).map(|j| j.state), Some(JobState::Exit));
    // If it still lives there, it is killed again. (Job 1, not in this list, is lost
    // there: it comes back pending, RETURN_LOST.)
    s.mc_remote_jobs(T0 + 3000, "east", vec![remote((2, 0), 1, status::RUN)]);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 1 @3 PEND reasons=0x5b sub=0x4",
            "McControl 2 @east KILL",
        ],
    );
}

// ---- the execution cluster ----------------------------------------------------------

fn receiver() -> Sched {
    let mut c = cfg();
    c.mc.recv
        .insert("normal".into(), (vec!["west".into()], Some(2)));
    c.mc.max_rsched_ms = Some(20_000);
    up_with(c)
}

/// A job of alice's forwarded by west: alice is uid 4242 there (this cluster never uses
/// that uid).
fn forwarded(q: &str) -> Submission {
    let mut sub = cmd("x");
    sub.queue = q.into();
    sub.asked_hosts = vec!["westhost".into()];
    sub.user = "alice".into();
    sub.uid = 4242;
    sub.from_host = "westhost".into();
    sub
}

/// The receiving cluster's password database holds `users` (name, uid); no
/// LSF_ROOT_REX; daemons run as root.
fn here(users: &[(&str, Option<u32>)]) -> McAccounts {
    McAccounts {
        found: users.iter().map(|(n, u)| ((*n).to_owned(), *u)).collect(),
        root_rex: false,
        only: None,
    }
}

/// alice is uid 1000 here.
fn alice_here() -> McAccounts {
    here(&[("alice", Some(1000))])
}

/// Phase III, 1–2 and 4: "The receive-jobs queue parameters affect whether or not the job
/// is accepted"; accepted, "it becomes pending in the receive-jobs queue with a new job
/// ID assigned by the execution cluster" (JOB_NEW, then JOB_ACCEPT).
#[test]
fn an_accepted_job_gets_an_execution_cluster_id() {
    let mut s = receiver();
    let (id, new) = s
        .mc_accept(T0, "west", (101, 0), 1, &alice_here(), forwarded("normal"))
        .expect("accepted");
    assert!(new);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 1 @0",
            "Log JOB_ACCEPT 1 @0 from 101@west attempt 1",
        ],
    );
    let j = s.job((id, 0)).expect("job");
    assert!(j.sub.asked_hosts.is_empty());
    assert_eq!(
        j.mc.as_ref().map(|m| (m.src_cluster.to_string(), m.src_id)),
        Some(("west".into(), 101))
    );
    // The same forward again: the same job, nothing logged.
    assert_eq!(
        s.mc_accept(T0, "west", (101, 0), 1, &alice_here(), forwarded("normal")),
        Ok((id, false))
    );
    assert_effects(&s.take_effects(), &[]);
    // And it is scheduled here.
    s.schedule(T0);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_START 1 @0 on hostA",
            "Dispatch 1 -> hostA attempt 1",
        ],
    );
    assert_eq!(s.mc_jobs_for("west")[0].state, status::RUN);
}

/// Phase III, 2: "a job that requires 100 MB memory will be rejected if queue-level
/// parameters specify a memory limit of only 50 MB"; and RCVJOBS_FROM, IMPT_JOBBKLG.
#[test]
fn the_receive_queue_applies_its_own_acceptance_rules() {
    let mut s = receiver();
    assert_eq!(
        s.mc_accept(T0, "east", (1, 0), 1, &alice_here(), forwarded("normal")),
        Err(SchedError::McNotReceiving)
    );
    assert_eq!(
        s.mc_accept(T0, "west", (1, 0), 1, &alice_here(), forwarded("high")),
        Err(SchedError::McNotReceiving)
    );
    assert_eq!(
        s.mc_accept(T0, "west", (1, 0), 1, &alice_here(), forwarded("nope")),
        Err(SchedError::NoQueue)
    );
    let mut c = s.config().clone();
    c.queues[0].rlimits[basalt_core::rlimit::RSS] = Some(crate::limits::QueueLimit {
        default: None,
        max: 50 * 1024,
    });
    let mut s = up_with(c);
    let mut big = forwarded("normal");
    let mut limits = [-1i64; 11];
    limits[basalt_core::rlimit::RSS] = 100 * 1024;
    big.rlimits = limits.into();
    assert_eq!(
        s.mc_accept(T0, "west", (1, 0), 1, &alice_here(), big),
        Err(SchedError::OverLimit)
    );
    // IMPT_JOBBKLG = 2: a third pending MultiCluster job is refused.
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("hclose");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("hclose");
    for id in 1..=2 {
        s.mc_accept(T0, "west", (id, 0), 1, &alice_here(), forwarded("normal"))
            .expect("room");
    }
    assert_eq!(s.mc_pending_in("normal"), 2);
    assert_eq!(
        s.mc_accept(T0, "west", (3, 0), 1, &alice_here(), forwarded("normal")),
        Err(SchedError::McBacklog)
    );
    assert_eq!(s.mc_info_for("west")[0].room(), 0);
}

/// Phase III, 6: "If the job is dispatched to the execution host but cannot start after
/// the time interval MAX_RSHED_TIME (lsb.params), it returns to the submission cluster".
#[test]
fn a_job_not_started_within_max_rsched_time_returns() {
    let mut s = receiver();
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("hclose");
    s.host_ctl(T0, &admin(), 2, "hostB", "").expect("hclose");
    let (id, _) = s
        .mc_accept(T0, "west", (101, 0), 1, &alice_here(), forwarded("normal"))
        .expect("accepted");
    s.take_effects();
    s.tick(T0 + 19_000);
    assert_effects(&s.take_effects(), &[]);
    // It ends here without an accounting record (the submission cluster keeps it).
    s.tick(T0 + 20_000);
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 1 @20 EXIT end@20 TERM_MC_RETURN"],
    );
    let j = s.job((id, 0)).expect("job");
    assert_eq!(
        (j.state, j.term_reason.as_str()),
        (JobState::Exit, TERM_MC_RETURN)
    );
    assert_eq!(s.mc_jobs_for("west")[0].returned, RETURN_NOT_STARTED);
}

/// A MultiCluster job whose start fails goes back at once (counted as a failed start).
#[test]
fn a_job_whose_start_fails_goes_back() {
    let mut s = receiver();
    let (id, _) = s
        .mc_accept(T0, "west", (101, 0), 1, &alice_here(), forwarded("normal"))
        .expect("accepted");
    s.schedule(T0);
    let (key, host) = dispatches(&s.take_effects())[0].clone();
    s.report(
        T0 + 100,
        Report {
            host,
            key,
            attempt: 1,
            seq: 1,
            time: 0,
            kind: ReportKind::StartFailed {
                message: "no such user".into(),
                restart_failed: false,
            },
        },
    );
    assert_eq!(
        s.job((id, 0)).map(|j| j.term_reason.to_string()),
        Some(TERM_MC_INITFAIL.into())
    );
    assert_eq!(s.mc_jobs_for("west")[0].returned, RETURN_START_FAILED);
}

/// Replay gives the same forwards and returns (the counts come from the log).
#[test]
fn replay_rebuilds_forwards_and_returns() {
    let mut s = sender();
    east_room(&mut s, T0, 0);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    let mut events = Vec::new();
    events.extend(logged(&s.take_effects()));
    s.schedule(T0);
    events.extend(logged(&s.take_effects()));
    let mut r = remote((1, 0), 1, status::EXIT);
    r.returned = RETURN_START_FAILED;
    s.mc_remote_jobs(T0 + 1000, "east", vec![r]);
    events.extend(logged(&s.take_effects()));
    s.schedule(T0 + 1000);
    events.extend(logged(&s.take_effects()));
    let mut again = Sched::new(s.config().clone(), T0);
    again.replay(&events);
    let m = |s: &Sched| s.job((1, 0)).and_then(|j| j.mc.as_deref().cloned());
    let (a, b) = (m(&s).expect("mc"), m(&again).expect("mc"));
    assert_eq!(
        (a.forwards, a.returns, a.fwd_cluster.clone()),
        (2, 1, "east".into())
    );
    assert_eq!(
        (b.forwards, b.returns, b.fwd_cluster),
        (a.forwards, a.returns, a.fwd_cluster)
    );
}

/// MAX_PREEXEC_RETRY (MultiCluster): a forwarded job's pre-execution command is
/// attempted that many times here, then the job goes back (a failed start).
#[test]
fn a_forwarded_jobs_pre_exec_is_tried_max_preexec_retry_times_then_it_goes_back() {
    let mut c = receiver().config().clone();
    c.mc.preexec_retry.insert("normal".into(), 2);
    let mut s = up_with(c);
    let (id, _) = s
        .mc_accept(T0, "west", (101, 0), 1, &alice_here(), forwarded("normal"))
        .expect("accepted");
    let mut now = T0;
    for round in 1..=2 {
        s.tick(now);
        s.schedule(now);
        let (key, host) = dispatches(&s.take_effects())[0].clone();
        let attempt = s.job(key).map_or(0, |j| j.attempt);
        s.report(
            now + 100,
            Report {
                host,
                key,
                attempt,
                seq: 1,
                time: 0,
                kind: ReportKind::PreExecFailed {
                    exit_status: 1 << 8,
                },
            },
        );
        let j = s.job((id, 0)).expect("job");
        if round == 1 {
            assert_eq!(j.state, JobState::Pend);
        } else {
            assert_eq!(j.term_reason.as_str(), TERM_MC_INITFAIL);
        }
        now += 11_000;
    }
    assert_eq!(s.mc_jobs_for("west")[0].returned, RETURN_START_FAILED);
}

/// RemoteClusters RECV_FROM = N: no queue takes that cluster's jobs.
#[test]
fn recv_from_n_refuses_that_clusters_jobs() {
    let mut c = receiver().config().clone();
    c.mc.no_recv.push("west".into());
    let mut s = up_with(c);
    assert_eq!(
        s.mc_accept(T0, "west", (1, 0), 1, &alice_here(), forwarded("normal")),
        Err(SchedError::McNotReceiving)
    );
}

// ---- who a forwarded job runs as (lsb.users UserMap; issue 49, item 1) ---------------

fn map_row(
    local: &[&str],
    remote: &[(&str, &str)],
    direction: basalt_config::batch::MapDirection,
) -> basalt_config::batch::UserMapRow {
    basalt_config::batch::UserMapRow {
        local: local.iter().map(|l| (*l).to_owned()).collect(),
        remote: remote
            .iter()
            .map(|(u, c)| basalt_config::batch::RemoteUser {
                user: (*u).to_owned(),
                cluster: (*c).to_owned(),
            })
            .collect(),
        direction,
        line: 1,
    }
}

/// A receiver whose lsb.users has `rows` as its UserMap.
fn receiver_mapping(rows: Vec<basalt_config::batch::UserMapRow>) -> Sched {
    let mut c = receiver().config().clone();
    c.mc.user_map.rows = rows;
    up_with(c)
}

/// The JOB_NEW the core logged: (user, uid).
fn job_new_owner(eff: &[Effect]) -> Option<(String, u32)> {
    logged(eff).into_iter().find_map(|e| match e {
        Event::JobNew { sub, .. } => Some((sub.user.to_string(), sub.uid)),
        _ => None,
    })
}

/// Without a mapping, a forwarded job runs as the user of the same name, with that
/// user's uid here: the forwarded record's uid (4242, or 0) is never used.
#[test]
fn a_forwarded_job_runs_as_the_user_of_the_same_name_with_the_local_uid() {
    let mut s = receiver();
    let (id, _) = s
        .mc_accept(T0, "west", (1, 0), 1, &alice_here(), forwarded("normal"))
        .expect("accepted");
    assert_eq!(
        job_new_owner(&s.take_effects()),
        Some(("alice".into(), 1000))
    );
    let j = s.job((id, 0)).expect("job");
    assert_eq!((j.sub.user.as_str(), j.sub.uid), ("alice", 1000));
    // A record that says uid 0 for alice: alice, uid 1000 all the same.
    let mut zero = forwarded("normal");
    zero.uid = 0;
    s.mc_accept(T0, "west", (2, 0), 1, &alice_here(), zero)
        .expect("accepted");
    assert_eq!(
        job_new_owner(&s.take_effects()),
        Some(("alice".into(), 1000))
    );
}

/// "import maps remote users to the local one for jobs received": bob of west runs as
/// carol here; bob of another cluster is not mapped.
#[test]
fn the_import_mapping_gives_the_local_user_for_the_remote_user_and_its_cluster() {
    use basalt_config::batch::MapDirection::Import;
    let mut c = receiver().config().clone();
    c.mc.user_map.rows = vec![map_row(&["carol"], &[("bob", "west")], Import)];
    c.mc.recv
        .insert("normal".into(), (vec!["west".into(), "north".into()], None));
    let mut s = up_with(c);
    let mut bob = forwarded("normal");
    bob.user = "bob".into();
    let users = here(&[("carol", Some(1001)), ("bob", Some(1002))]);
    let (id, _) = s
        .mc_accept(T0, "west", (1, 0), 1, &users, bob.clone())
        .expect("accepted");
    assert_eq!(
        job_new_owner(&s.take_effects()),
        Some(("carol".into(), 1001))
    );
    assert_eq!(s.job((id, 0)).map(|j| j.sub.uid), Some(1001));
    // From north, bob is bob.
    s.mc_accept(T0, "north", (1, 0), 1, &users, bob)
        .expect("accepted");
    assert_eq!(job_new_owner(&s.take_effects()), Some(("bob".into(), 1002)));
}

/// Several local users for one remote user: the first that exists here.
#[test]
fn of_several_mapped_local_users_the_first_that_exists_here_is_taken() {
    use basalt_config::batch::MapDirection::Import;
    let mut s = receiver_mapping(vec![map_row(
        &["user6", "user8"],
        &[("user3", "west")],
        Import,
    )]);
    let mut sub = forwarded("normal");
    sub.user = "user3".into();
    s.mc_accept(
        T0,
        "west",
        (1, 0),
        1,
        &here(&[("user6", None), ("user8", Some(1008))]),
        sub,
    )
    .expect("accepted");
    assert_eq!(
        job_new_owner(&s.take_effects()),
        Some(("user8".into(), 1008))
    );
}

/// "that user must exist in the receiving cluster's password database": refused (the
/// forward's answer says why), nothing logged; a mapped user who does not exist is not
/// replaced by the user of the same name.
#[test]
fn a_user_who_does_not_exist_here_is_refused() {
    use basalt_config::batch::MapDirection::Import;
    let mut s = receiver();
    let r = s.mc_accept(
        T0,
        "west",
        (1, 0),
        1,
        &here(&[("alice", None)]),
        forwarded("normal"),
    );
    assert_eq!(
        r,
        Err(SchedError::McNoUser {
            user: "alice".into(),
            cluster: "west".into(),
            tried: "alice".into()
        })
    );
    assert_eq!(
        r.map_err(|e| e.to_string()),
        Err(
            "User <alice> of cluster <west> has no account in this cluster (looked for: alice)"
                .into()
        )
    );
    assert!(logged(&s.take_effects()).is_empty());
    // Nothing looked up counts as nothing found.
    assert!(matches!(
        s.mc_accept(T0, "west", (1, 0), 1, &here(&[]), forwarded("normal")),
        Err(SchedError::McNoUser { .. })
    ));
    let mut s = receiver_mapping(vec![map_row(&["carol"], &[("alice", "west")], Import)]);
    let r = s.mc_accept(
        T0,
        "west",
        (1, 0),
        1,
        &here(&[("carol", None), ("alice", Some(1000))]),
        forwarded("normal"),
    );
    assert!(
        matches!(&r, Err(SchedError::McNoUser { tried, .. }) if tried == "carol"),
        "{r:?}"
    );
    assert!(s.jobs().is_empty());
}

/// "root (uid 0 locally, whatever name) is refused unless the receiving cluster's
/// lsf.conf sets LSF_ROOT_REX", like a local submission.
#[test]
fn root_here_is_refused_without_lsf_root_rex_whatever_its_name() {
    use basalt_config::batch::MapDirection::Import;
    let mut s = receiver();
    let mut root = forwarded("normal");
    root.user = "root".into();
    root.uid = 0;
    let r = s.mc_accept(
        T0,
        "west",
        (1, 0),
        1,
        &here(&[("root", Some(0))]),
        root.clone(),
    );
    assert_eq!(
        r,
        Err(SchedError::McRoot {
            user: "root".into()
        })
    );
    assert!(
        r.map_err(|e| e.to_string())
            .is_err_and(|e| e.starts_with("Root user's job submission rejected"))
    );
    // A user the submission cluster calls alice (uid 1000 there) who is uid 0 here.
    let mut s = receiver_mapping(vec![map_row(&["toor"], &[("alice", "west")], Import)]);
    assert_eq!(
        s.mc_accept(
            T0,
            "west",
            (1, 0),
            1,
            &here(&[("toor", Some(0))]),
            forwarded("normal")
        ),
        Err(SchedError::McRoot {
            user: "toor".into()
        })
    );
    assert!(s.jobs().is_empty());
    // With LSF_ROOT_REX, root's job is taken, as root.
    let mut s = receiver();
    let mut rex = here(&[("root", Some(0))]);
    rex.root_rex = true;
    s.mc_accept(T0, "west", (1, 0), 1, &rex, root)
        .expect("accepted");
    assert_eq!(job_new_owner(&s.take_effects()), Some(("root".into(), 0)));
}

/// A personal cluster (daemons not root) runs its owner's jobs only.
#[test]
fn a_personal_cluster_takes_only_its_owners_jobs() {
    let mut s = receiver();
    let mut mine = alice_here();
    mine.only = Some("bob".into());
    assert_eq!(
        s.mc_accept(T0, "west", (1, 0), 1, &mine, forwarded("normal")),
        Err(SchedError::McNotOwner {
            owner: "bob".into()
        })
    );
    mine.only = Some("alice".into());
    assert!(
        s.mc_accept(T0, "west", (1, 0), 1, &mine, forwarded("normal"))
            .is_ok()
    );
}

/// Job control from the submission cluster acts as the local user the job was taken as.
#[test]
fn a_forwarded_job_is_controlled_as_its_local_user() {
    use basalt_config::batch::MapDirection::Import;
    let mut s = receiver_mapping(vec![map_row(&["carol"], &[("alice", "west")], Import)]);
    let (id, _) = s
        .mc_accept(
            T0,
            "west",
            (7, 0),
            1,
            &here(&[("carol", Some(1001))]),
            forwarded("normal"),
        )
        .expect("accepted");
    assert_eq!(s.mc_job_from("west", (7, 0)), Some((id, 0)));
    let j = s.job((id, 0)).expect("job");
    let carol = Caller {
        uid: 1001,
        user: "carol".into(),
        host: "westhost".into(),
    };
    assert_eq!((j.sub.user.as_str(), j.sub.uid), ("carol", 1001));
    s.kill(T0, &carol, (id, 0), false, false)
        .expect("carol kills her job");
}

/// "export maps local users to remote ones for jobs sent": the forwarded JOB_NEW
/// carries the mapped name for that cluster only.
#[test]
fn the_export_mapping_names_the_user_a_forwarded_job_carries() {
    use basalt_config::batch::MapDirection::{Export, Import};
    let mut c = sender().config().clone();
    c.mc.user_map.rows = vec![
        map_row(&["bob"], &[("robert", "east")], Export),
        map_row(&["alice"], &[("ally", "north"), ("al", "east")], Export),
        // An import row says nothing of jobs sent.
        map_row(&["alice"], &[("alicia", "east")], Import),
    ];
    let mut s = up_with(c);
    s.submit(T0, &alice(), cmd("x")).expect("submit");
    s.submit(T0, &bob(), cmd("y")).expect("submit");
    s.submit(T0, &admin(), cmd("z")).expect("submit");
    let sent = |s: &Sched, id: u64, c: &str| {
        s.mc_forward_submission((id, 0), c)
            .map(|sub| (sub.user.to_string(), sub.uid))
    };
    assert_eq!(sent(&s, 1, "east"), Some(("al".into(), 1000)));
    assert_eq!(sent(&s, 1, "north"), Some(("ally".into(), 1000)));
    assert_eq!(sent(&s, 2, "east").map(|x| x.0), Some("robert".into()));
    assert_eq!(sent(&s, 2, "north").map(|x| x.0), Some("bob".into()));
    assert_eq!(sent(&s, 3, "east").map(|x| x.0), Some("admin".into()));
    assert_eq!(sent(&s, 9, "east"), None);
    // The job here keeps its user.
    assert_eq!(
        s.job((1, 0)).map(|j| j.sub.user.to_string()),
        Some("alice".into())
    );
}

// ---- issue 50 item 4: the room a forward takes ------------------------------------------

/// A sender whose `normal` queue sends to recv@east and recv@west (in that order), both
/// reported with the same room, and whose own host is closed.
fn two_receivers(impt: Option<u32>) -> Sched {
    let mut c = cfg();
    c.queues[0].hosts = vec!["hostA".into()];
    c.mc.send.insert(
        "normal".into(),
        vec![
            ("recv".into(), "east".into()),
            ("recv".into(), "west".into()),
        ],
    );
    let mut s = up_with(c);
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("hclose");
    s.take_effects();
    for cluster in ["east", "west"] {
        s.mc_set_remote(T0, cluster, Some(vec![rq("recv", impt, 0)]));
    }
    s
}

fn clusters_of(eff: &[Effect]) -> Vec<String> {
    forwards(eff).into_iter().map(|f| f.1).collect()
}

/// Phase II, 2.1: "the first queue evaluated is the one that has room to accept the most
/// new MultiCluster jobs", room being IMPT_JOBBKLG less the MultiCluster jobs already
/// pending there. A job this cluster has just forwarded is pending there before the
/// remote cluster next reports: it counts against that queue's room at once, in the pass
/// that sends it and in the passes after, until a report of the remote cluster counts it
/// (the remote cluster's list of our jobs names it). Four jobs submitted one after the
/// other, a pass after each (as mbatchd does), spread two and two over two queues of
/// equal room, with IMPT_JOBBKLG set or not.
#[test]
fn issue50_4_jobs_just_forwarded_count_against_the_room_of_their_queue() {
    for impt in [Some(10), None] {
        let mut s = two_receivers(impt);
        let mut sent = Vec::new();
        for i in 0..4 {
            let now = T0 + i * 100;
            s.submit(now, &alice(), cmd("x")).expect("submit");
            s.schedule(now);
            sent.extend(clusters_of(&s.take_effects()));
        }
        assert_eq!(
            sent,
            ["east", "west", "east", "west"],
            "IMPT_JOBBKLG {impt:?}"
        );

        // Four jobs found by one pass: the same.
        let mut s = two_receivers(impt);
        for _ in 0..4 {
            s.submit(T0, &alice(), cmd("x")).expect("submit");
        }
        s.schedule(T0);
        assert_eq!(
            clusters_of(&s.take_effects()),
            ["east", "west", "east", "west"],
            "IMPT_JOBBKLG {impt:?}"
        );
    }

    // Once a report counts a job, it is not counted twice: east reports its two jobs
    // pending (and lists them), west's report does not know its two yet. Both have
    // 10 - 2 = 8: the fifth job goes to the first, east.
    let mut s = two_receivers(Some(10));
    for i in 0..4 {
        let now = T0 + i * 100;
        s.submit(now, &alice(), cmd("x")).expect("submit");
        s.schedule(now);
    }
    let eff = s.take_effects();
    for (key, _, _, attempt) in forwards(&eff) {
        s.mc_forward_answer(T0 + 500, key, attempt, Ok(key.0 + 100));
    }
    let now = T0 + 1000;
    s.mc_set_remote(now, "east", Some(vec![rq("recv", Some(10), 2)]));
    s.mc_remote_jobs(
        now,
        "east",
        vec![
            remote((1, 0), 1, status::PEND),
            remote((3, 0), 1, status::PEND),
        ],
    );
    s.submit(now, &alice(), cmd("x")).expect("submit");
    s.schedule(now);
    assert_eq!(clusters_of(&s.take_effects()), ["east"]);
    // East's jobs start there (no longer pending anywhere): east has the most room.
    let now = T0 + 2000;
    s.mc_set_remote(now, "east", Some(vec![rq("recv", Some(10), 1)]));
    s.mc_remote_jobs(
        now,
        "east",
        vec![
            remote((1, 0), 1, status::RUN),
            remote((3, 0), 1, status::RUN),
            remote((5, 0), 1, status::PEND),
        ],
    );
    s.submit(now, &alice(), cmd("x")).expect("submit");
    s.schedule(now);
    assert_eq!(clusters_of(&s.take_effects()), ["east"]);
}

/// With MC_PLUGIN_SCHEDULE_ENHANCE=RESOURCE_ONLY the free slots decide: a job just
/// forwarded to a queue takes one of the free slots its cluster reported.
#[test]
fn issue50_4_a_job_just_forwarded_takes_a_reported_free_slot() {
    let mut s = two_receivers(Some(10));
    let mut c = s.config().clone();
    c.mc.policy.enhance = Some(Enhance {
        resource_only: true,
        ..Default::default()
    });
    s = Sched::new(c, T0);
    for h in ["hostA", "hostB"] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::new());
    }
    s.start(T0, "hostA");
    s.host_ctl(T0, &admin(), 2, "hostA", "").expect("hclose");
    s.take_effects();
    for cluster in ["east", "west"] {
        let mut q = rq("recv", Some(10), 0);
        q.free_slots = 2;
        s.mc_set_remote(T0, cluster, Some(vec![q]));
    }
    let mut sent = Vec::new();
    for i in 0..4 {
        let now = T0 + i * 100;
        s.submit(now, &alice(), cmd("x")).expect("submit");
        s.schedule(now);
        sent.extend(clusters_of(&s.take_effects()));
    }
    assert_eq!(sent, ["east", "west", "east", "west"]);
}
