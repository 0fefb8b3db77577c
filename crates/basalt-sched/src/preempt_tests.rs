//! Preemptive scheduling (seed 002): each test is named after the sentence (or the
//! parameter) it checks. Two hosts of two slots, a manual clock; queues `low` (20),
//! `normal` (30) and `high` (40).

use super::tests::expect::assert_effects;
use super::tests::*;
use super::*;
use basalt_config::batch::{NoPreemptTime, Preemption};
use basalt_core::job::{status, susp};

const PREEMPTED: u32 = susp::MBD_PREEMPT | susp::MBD_LOCK;

fn preemptive(list: &[(&str, u32)]) -> Preemption {
    Preemption {
        preemptive: Some(list.iter().map(|(q, p)| ((*q).to_owned(), *p)).collect()),
        preemptable: None,
    }
}

fn preemptable(list: &[&str]) -> Preemption {
    Preemption {
        preemptive: None,
        preemptable: Some(list.iter().map(|q| (*q).to_owned()).collect()),
    }
}

/// The test configuration with a `low` queue; `set` changes it.
fn config(set: impl FnOnce(&mut SchedConfig)) -> SchedConfig {
    let mut c = cfg();
    c.queues.push(crate::tests::queue("low", 20));
    set(&mut c);
    c
}

fn q<'a>(c: &'a mut SchedConfig, name: &str) -> &'a mut Queue {
    c.queues
        .iter_mut()
        .find(|q| q.name == name)
        .unwrap_or_else(|| panic!("queue {name}"))
}

/// `high` preempts any lower-priority queue.
fn high_preemptive() -> SchedConfig {
    config(|c| q(c, "high").preempt = preemptive(&[]))
}

fn in_queue(c: &str, queue: &str) -> Submission {
    let mut s = cmd(c);
    s.queue = queue.into();
    s
}

fn slots(mut s: Submission, n: u32) -> Submission {
    s.num_processors = n;
    s.max_processors = n;
    s
}

/// Submit and schedule at `now`; sbatchd accepts what was dispatched. The job's id.
fn run(s: &mut Sched, now: Millis, who: &Caller, sub: Submission) -> u64 {
    let id = s.submit(now, who, sub).expect("submit").0;
    s.schedule(now);
    accept_all(s, now);
    id
}

/// sbatchd accepts every dispatched job (its pid known: orders go out at once).
fn accept_all(s: &mut Sched, now: Millis) {
    let started: Vec<(JobKey, u32)> = s
        .jobs
        .values()
        .filter(|j| j.state.is_started() && j.pid == 0)
        .map(|j| (j.key(), j.attempt))
        .collect();
    for (k, a) in started {
        s.dispatch_accepted(now, k, a, 100 + k.0 as u32, 100 + k.0 as u32);
    }
}

/// Four one-slot jobs of `queue` fill both hosts (ids 1-4, started a second apart,
/// spread: 1 and 3 on hostA, 2 and 4 on hostB).
fn fill(s: &mut Sched, queue: &str) {
    for i in 0..4 {
        let id = s.submit(T0 + i * 1000, &alice(), in_queue("sleep 1000", queue));
        id.expect("submit");
        s.schedule(T0 + i * 1000);
        accept_all(s, T0 + i * 1000);
    }
    s.take_effects();
    for id in 1..=4 {
        assert_eq!(state(s, id), JobState::Run, "job {id}");
    }
}

/// [`fill`] with `full`'s jobs on a core of `c`, then job 5 arrives in `queue` 10 s later.
fn arrives(c: SchedConfig, full: &str, queue: &str) -> Sched {
    let mut s = up_with(c);
    fill(&mut s, full);
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", queue));
    s
}

fn state(s: &Sched, id: u64) -> JobState {
    s.jobs[&(id, 0)].state
}

fn preempted(s: &Sched) -> Vec<u64> {
    s.jobs
        .values()
        .filter(|j| j.state == JobState::Ssusp && j.reasons & susp::MBD_PREEMPT != 0)
        .map(|j| j.id)
        .collect()
}

/// sbatchd reports job `id` in `state` with `reasons`.
fn confirm(s: &mut Sched, now: Millis, id: u64, state: u32, reasons: u32) -> Ack {
    let host = host_of(s, id);
    s.report(
        now,
        Report {
            host,
            key: (id, 0),
            attempt: 1,
            seq: 9,
            time: 0,
            kind: ReportKind::State {
                state,
                reasons,
                subreasons: 0,
            },
        },
    )
}

fn host_of(s: &Sched, id: u64) -> String {
    s.jobs[&(id, 0)].hosts[0].clone()
}

/// hostA busier than hostB (r15s).
fn loads(s: &mut Sched, a: f64, b: f64) {
    for (h, v) in [("hostA", a), ("hostB", b)] {
        s.lim_update(h, 2, 1.0, true, BTreeMap::from([("r15s".to_string(), v)]));
    }
}

/// "If a high-priority job is pending, LSF can suspend a lower-priority job that is
/// running, and then start the high-priority job instead."
#[test]
fn a_pending_high_priority_job_suspends_a_lower_priority_running_job_and_starts_instead() {
    let mut s = up_with(high_preemptive());
    fill(&mut s, "normal");
    let now = T0 + 10_000;
    s.submit(now, &bob(), in_queue("sleep 10", "high"))
        .expect("submit");
    s.schedule(now);
    let fx = s.take_effects();
    assert_eq!(state(&s, 5), JobState::Run);
    // The most recently started job (4, on hostB) is the victim.
    assert_eq!(preempted(&s), vec![4]);
    assert_eq!(host_of(&s, 5), host_of(&s, 4));
    let j4 = &s.jobs[&(4, 0)];
    assert_eq!((j4.preempt_count, j4.preempted_by), (1, Some((5, 0))));
    // SSUSP with LSF's preemption reason, logged before the preempting job starts;
    // sbatchd is told to stop it (and SUSP_MBD_LOCK keeps its load policy off it).
    assert_eq!(PREEMPTED, susp::MBD_PREEMPT | susp::MBD_LOCK);
    assert_effects(
        &fx,
        &[
            "Log JOB_NEW 5 @10",
            "Log JOB_STATUS 4 @10 SSUSP MBD_PREEMPT|MBD_LOCK",
            "Signal 4 attempt 1 on hostB Stop SSUSP MBD_PREEMPT|MBD_LOCK",
            "Log JOB_START 5 @10 on hostB",
            "Dispatch 5 -> hostB attempt 1",
        ],
    );
    assert_eq!(
        basalt_core::job::susp_reason_text(PREEMPTED, 0),
        " The job was preempted by a higher priority job;"
    );
}

/// "Preemptive scheduling takes effect when two jobs compete for the same job slots":
/// with a free slot nothing is preempted.
#[test]
fn nothing_is_preempted_when_a_free_slot_is_left() {
    let mut s = up_with(high_preemptive());
    for i in 0..3 {
        run(&mut s, T0 + i, &alice(), in_queue("sleep 1000", "normal"));
    }
    run(&mut s, T0 + 10, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(state(&s, 4), JobState::Run);
    assert!(preempted(&s).is_empty());
}

/// "The high-priority job must be pending in a preemptive queue ... or the low-priority
/// job must belong to a preemptable queue": neither, no preemption.
#[test]
fn without_a_preemptive_or_preemptable_queue_nothing_is_preempted() {
    let s = arrives(config(|_| {}), "normal", "high");
    assert_eq!(state(&s, 5), JobState::Pend);
    assert!(preempted(&s).is_empty());
}

/// "Jobs in a preemptive queue can preempt jobs in any queue of lower priority, even if
/// the lower-priority queues are not specified as preemptable."
#[test]
fn a_preemptive_queue_preempts_any_lower_priority_queue_not_specified_as_preemptable() {
    let s = arrives(high_preemptive(), "low", "high");
    assert_eq!(state(&s, 5), JobState::Run);
    assert_eq!(preempted(&s), vec![4]);
    // ... but not a queue of the same or a higher priority.
    let s = arrives(
        config(|c| q(c, "normal").preempt = preemptive(&[])),
        "high",
        "normal",
    );
    assert_eq!(state(&s, 5), JobState::Pend);
}

/// "Jobs in a preemptable queue can be preempted by jobs from any queue of a higher
/// priority, even if the higher-priority queues are not specified as preemptive."
#[test]
fn a_preemptable_queue_is_preempted_by_any_higher_priority_queue_not_specified_as_preemptive() {
    let s = arrives(
        config(|c| q(c, "low").preempt = preemptable(&[])),
        "low",
        "normal",
    );
    assert_eq!(state(&s, 5), JobState::Run);
    assert_eq!(preempted(&s), vec![4]);
    // A queue of lower priority than the preemptable one does not preempt it.
    let s = arrives(
        config(|c| q(c, "normal").preempt = preemptable(&[])),
        "normal",
        "low",
    );
    assert_eq!(state(&s, 5), JobState::Pend);
}

/// "Based on a preferred order—the PREEMPTION parameter defines queues that can preempt
/// other queues, in a preferred order": `PREEMPTIVE[low+1 normal+2]` takes normal's jobs
/// first although low's priority is lower; a queue it does not name is not preempted.
#[test]
fn preemptive_with_a_list_preempts_those_queues_in_the_preferred_order() {
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[("low", 1), ("normal", 2)]);
    }));
    run(&mut s, T0, &alice(), in_queue("sleep 1000", "low"));
    run(
        &mut s,
        T0 + 1000,
        &alice(),
        in_queue("sleep 1000", "normal"),
    );
    run(&mut s, T0 + 2000, &alice(), in_queue("sleep 1000", "low"));
    run(
        &mut s,
        T0 + 3000,
        &alice(),
        in_queue("sleep 1000", "normal"),
    );
    s.take_effects();
    // Same load everywhere: the normal job started last goes (job 4, hostB).
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(preempted(&s), vec![4]);
    // PREEMPTIVE[low] only: normal's jobs are left alone.
    let s = arrives(
        config(|c| q(c, "high").preempt = preemptive(&[("low", 0)])),
        "normal",
        "high",
    );
    assert_eq!(state(&s, 5), JobState::Pend);
}

/// "Explicitly, by specific queues—the PREEMPTION parameter defines queues that can be
/// preempted, and by which queues": `PREEMPTABLE[high]` on low lets high preempt it,
/// not normal.
#[test]
fn preemptable_with_a_list_is_preempted_only_by_those_queues() {
    let mut s = arrives(
        config(|c| q(c, "low").preempt = preemptable(&["high"])),
        "low",
        "normal",
    );
    assert_eq!(state(&s, 5), JobState::Pend);
    run(&mut s, T0 + 11_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(state(&s, 6), JobState::Run);
    assert_eq!(preempted(&s), vec![4]);
}

/// "Preemption does not actually occur until at least one queue is assigned a higher
/// relative priority than another queue."
#[test]
fn preemption_does_not_occur_between_queues_of_the_same_priority() {
    let mut s = up_with(config(|c| {
        q(c, "low").priority = 40;
        q(c, "high").preempt = preemptive(&[]);
    }));
    fill(&mut s, "low");
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(state(&s, 5), JobState::Pend);
}

/// "If multiple slots are required, LSF can preempt multiple jobs until sufficient
/// slots are available."
#[test]
fn multiple_jobs_are_preempted_for_a_job_that_needs_multiple_slots() {
    let mut s = up_with(high_preemptive());
    fill(&mut s, "normal");
    let mut big = slots(in_queue("mpirun a.out", "high"), 2);
    big.res_req = "span[hosts=1]".into();
    run(&mut s, T0 + 10_000, &bob(), big);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 5 @10",
            "Log JOB_STATUS 2 @10 SSUSP MBD_PREEMPT|MBD_LOCK",
            "Signal 2 attempt 1 on hostB Stop SSUSP MBD_PREEMPT|MBD_LOCK",
            "Log JOB_STATUS 4 @10 SSUSP MBD_PREEMPT|MBD_LOCK",
            "Signal 4 attempt 1 on hostB Stop SSUSP MBD_PREEMPT|MBD_LOCK",
            "Log JOB_START 5 @10 on hostB,hostB",
            "Dispatch 5 -> hostB attempt 1",
            "Log JOB_START_ACCEPT 5 @10 pid=105 pgid=105",
        ],
    );
    assert_eq!(state(&s, 5), JobState::Run);
    // Both jobs of one host (hostB: 4, the newest, then 3 on hostA — spared, the job
    // does not use hostA — then 2).
    let mut p = preempted(&s);
    p.sort_unstable();
    assert_eq!(p, vec![2, 4]);
    assert_eq!(s.jobs[&(5, 0)].hosts, vec!["hostB", "hostB"]);
    // A 4-slot job preempts the other two as well.
    run(
        &mut s,
        T0 + 20_000,
        &bob(),
        slots(in_queue("mpirun", "high"), 4),
    );
    assert_effects(&s.take_effects(), &["Log JOB_NEW 6 @20"]);
    assert_eq!(state(&s, 6), JobState::Pend);
}

/// "When multiple preemptable jobs exist (low-priority jobs holding the required
/// slots), and preemption occurs, LSF preempts a job from the least-loaded host."
#[test]
fn a_job_is_preempted_from_the_least_loaded_host() {
    let mut s = up_with(high_preemptive());
    fill(&mut s, "normal");
    // hostB is the busier one now: the victim is on hostA although hostB's job 4 is
    // the most recently started.
    loads(&mut s, 0.1, 3.0);
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 5 @10",
            "Log JOB_STATUS 3 @10 SSUSP MBD_PREEMPT|MBD_LOCK",
            "Signal 3 attempt 1 on hostA Stop SSUSP MBD_PREEMPT|MBD_LOCK",
            "Log JOB_START 5 @10 on hostA",
            "Dispatch 5 -> hostA attempt 1",
            "Log JOB_START_ACCEPT 5 @10 pid=105 pgid=105",
        ],
    );
    assert_eq!(preempted(&s), vec![3]);
    assert_eq!(host_of(&s, 5), "hostA");
}

/// Among the candidates of one host: the lowest priority queue first, then the most
/// recently started.
#[test]
fn victims_are_the_lowest_priority_then_the_most_recently_started() {
    let mut s = up_with(high_preemptive());
    run(&mut s, T0, &alice(), in_queue("sleep 1000", "low"));
    run(
        &mut s,
        T0 + 1000,
        &alice(),
        in_queue("sleep 1000", "normal"),
    );
    run(&mut s, T0 + 2000, &alice(), in_queue("sleep 1000", "low"));
    run(
        &mut s,
        T0 + 3000,
        &alice(),
        in_queue("sleep 1000", "normal"),
    );
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    // Low's jobs (1, 3) before normal's (2, 4), the newer of them first.
    assert_eq!(preempted(&s), vec![3]);
}

/// "A preempted job is resumed as soon as more job slots become available; it does not
/// necessarily have to wait for the preempting job to finish."
#[test]
fn a_preempted_job_resumes_as_soon_as_slots_free_before_the_preempting_job_ends() {
    let mut s = arrives(high_preemptive(), "normal", "high");
    assert_eq!(preempted(&s), vec![4]);
    s.take_effects();
    // Job 2 (hostB) ends: 4 resumes in its slot while 5 still runs.
    let now = T0 + 20_000;
    finish_at(&mut s, (2, 0), 0, 1, now);
    s.schedule(now);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 2 @20 DONE end@20 usage",
            "Acct 2 DONE on hostB",
            "Log JOB_STATUS 4 @20 RUN",
            "Signal 4 attempt 1 on hostB Resume",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
    assert_eq!(state(&s, 5), JobState::Run);
    // sbatchd's confirmation logs nothing more.
    assert_eq!(confirm(&mut s, now, 4, status::RUN, 0), Ack::Ok);
    assert_effects(&s.take_effects(), &[]);
}

/// ... and when the preempting job ends, the preempted one has its slot again before a
/// pending job of its own (or a lower) queue.
#[test]
fn a_preempted_job_resumes_when_the_preempting_job_ends_before_pending_jobs_of_its_queue() {
    let mut s = arrives(high_preemptive(), "normal", "high");
    run(
        &mut s,
        T0 + 11_000,
        &alice(),
        in_queue("sleep 10", "normal"),
    );
    assert_eq!(state(&s, 6), JobState::Pend);
    s.take_effects();
    let now = T0 + 20_000;
    finish_at(&mut s, (5, 0), 0, 1, now);
    s.schedule(now);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 5 @20 DONE end@20 usage",
            "Acct 5 DONE on hostB",
            "Log JOB_STATUS 4 @20 RUN",
            "Signal 4 attempt 1 on hostB Resume",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
    assert_eq!(state(&s, 6), JobState::Pend);
}

/// "Preemptive queues are more aggressive at scheduling jobs because a slot that is not
/// available to a low-priority queue may be available by preemption to a high-priority
/// queue."
#[test]
fn a_slot_not_available_to_a_low_priority_queue_is_available_by_preemption_to_a_high_one() {
    let mut s = up_with(high_preemptive());
    fill(&mut s, "normal");
    run(&mut s, T0 + 10_000, &alice(), in_queue("sleep 10", "low"));
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(state(&s, 5), JobState::Pend);
    assert_eq!(state(&s, 6), JobState::Run);
}

/// "MAX_JOB_PREEMPT in lsb.applications overrides lsb.queues, and lsb.queues overrides
/// lsb.params configuration."
#[test]
fn max_job_preempt_application_overrides_queue_overrides_params() {
    let limit_of = |params: Option<u32>, queue: Option<u32>, app: Option<u32>| {
        let c = config(|c| {
            q(c, "high").preempt = preemptive(&[]);
            c.preempt.max_job_preempt = params;
            q(c, "normal").max_job_preempt = queue;
            c.apps.insert(
                "sim".into(),
                AppProfile {
                    name: "sim".into(),
                    max_job_preempt: app,
                    ..Default::default()
                },
            );
        });
        let mut s = up_with(c);
        let mut sub = in_queue("sleep 1000", "normal");
        sub.extras = Some(Box::new(crate::SubExtras {
            app: "sim".into(),
            ..Default::default()
        }));
        let id = run(&mut s, T0, &alice(), sub);
        // How many times it may be preempted: the effective MAX_JOB_PREEMPT.
        let q = s.queue("normal").cloned().expect("normal");
        let mut allowed = 0;
        for n in 0..5 {
            if let Some(j) = s.jobs.get_mut(&(id, 0)) {
                j.preempt_count = n;
            }
            let j = s.jobs[&(id, 0)].clone();
            if s.may_be_preempted(&j, &q, T0) {
                allowed = n + 1;
            }
        }
        allowed
    };
    assert_eq!(limit_of(None, None, None), 5);
    assert_eq!(limit_of(Some(3), None, None), 3);
    assert_eq!(limit_of(Some(3), Some(2), None), 2);
    assert_eq!(limit_of(Some(3), Some(2), Some(1)), 1);
    assert_eq!(limit_of(Some(1), Some(2), None), 2);
}

/// "When the number of preemption times exceeds MAX_JOB_PREEMPT, the job will run to
/// completion and cannot be preempted again." "The job preemption limit times is
/// recovered when LSF is restarted or reconfigured" (the count comes back from the log).
#[test]
fn a_job_preempted_max_job_preempt_times_runs_to_completion_and_the_count_is_recovered() {
    let c = config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        c.preempt.max_job_preempt = Some(1);
        c.hosts.truncate(1);
    });
    let mut s = up_with(c);
    let mut all = Vec::new();
    run(&mut s, T0, &alice(), in_queue("sleep 1000", "normal"));
    run(
        &mut s,
        T0 + 1000,
        &alice(),
        in_queue("sleep 1000", "normal"),
    );
    all.extend(logged(&s.take_effects()));
    // Job 3 preempts 2, which resumes when 3 ends.
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 1", "high"));
    assert_eq!(preempted(&s), vec![2]);
    finish_at(&mut s, (3, 0), 0, 1, T0 + 20_000);
    s.schedule(T0 + 20_000);
    assert_eq!(state(&s, 2), JobState::Run);
    all.extend(logged(&s.take_effects()));
    // Job 2 was preempted once: job 1 (older) goes next time.
    run(&mut s, T0 + 30_000, &bob(), in_queue("sleep 1", "high"));
    assert_eq!(preempted(&s), vec![1]);
    all.extend(logged(&s.take_effects()));
    // After a restart (replay) the counts are the same, so a third high job cannot
    // preempt either.
    let mut r = Sched::new(s.config().clone(), T0);
    r.replay(all.iter());
    assert_eq!(r.jobs[&(1, 0)].preempt_count, 1);
    assert_eq!(r.jobs[&(2, 0)].preempt_count, 1);
    assert_eq!(preempted(&r), vec![1]);
    r.lim_update("hostA", 2, 1.0, true, BTreeMap::new());
    r.start(T0 + 40_000, "hostA");
    let listed: Vec<HostJob> = r
        .jobs
        .values()
        .filter(|j| j.state.is_started())
        .map(|j| HostJob {
            key: j.key(),
            attempt: j.attempt,
            state: j.state.code(),
            pid: 100 + j.id as u32,
            pgid: 100 + j.id as u32,
        })
        .collect();
    r.sbd_hello(T0 + 40_000, "hostA", &listed);
    r.take_effects();
    let id = r
        .submit(T0 + 40_000, &bob(), in_queue("sleep 1", "high"))
        .expect("submit")
        .0;
    r.schedule(T0 + 40_000);
    assert_eq!(r.jobs[&(id, 0)].state, JobState::Pend);
    assert_eq!(r.jobs[&(2, 0)].state, JobState::Run);
}

/// TERMINATE_WHEN = PREEMPT: the victim is killed (TERM_PREEMPT) instead of suspended;
/// the job starts once its slot is free, and preempts no more meanwhile
/// (PREEMPTION_WAIT_TIME).
#[test]
fn terminate_when_preempt_kills_the_victim_and_the_job_waits_for_its_slot() {
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        q(c, "normal").terminate_on_preempt = true;
        c.preempt.wait_time_secs = 60;
    }));
    fill(&mut s, "normal");
    let now = T0 + 10_000;
    run(&mut s, now, &bob(), in_queue("sleep 10", "high"));
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 5 @10",
            "Log JOB_SIGNAL 4 @10 KILL_PREEMPT by root(0)",
            "Signal 4 attempt 1 on hostB Kill TERM_PREEMPT",
        ],
    );
    assert_eq!(state(&s, 5), JobState::Pend);
    assert_eq!(
        s.jobs[&(4, 0)].kill_ordered.as_deref(),
        Some("TERM_PREEMPT")
    );
    // The next pass kills nobody else while 4 is still ending.
    s.schedule(now + 5000);
    assert_effects(&s.take_effects(), &[]);
    // 4 ends: 5 starts in its slot.
    finish_at(&mut s, (4, 0), 143, 1, now + 8000);
    s.schedule(now + 8000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 4 @18 EXIT exit=143 end@18 usage TERM_PREEMPT",
            "Acct 4 EXIT exit=143 TERM_PREEMPT on hostB",
            "Log JOB_START 5 @18 on hostB",
            "Dispatch 5 -> hostB attempt 1",
        ],
    );
    assert_eq!(state(&s, 5), JobState::Run);
    assert_eq!(s.jobs[&(4, 0)].term_reason.as_ref(), "TERM_PREEMPT");
}

/// PREEMPTION_WAIT_TIME: once it has passed and the killed victim is still there, the
/// job may preempt another.
#[test]
fn after_preemption_wait_time_the_job_may_preempt_again() {
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        q(c, "normal").terminate_on_preempt = true;
        c.preempt.wait_time_secs = 60;
    }));
    fill(&mut s, "normal");
    let now = T0 + 10_000;
    run(&mut s, now, &bob(), in_queue("sleep 10", "high"));
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_NEW 5 @10",
            "Log JOB_SIGNAL 4 @10 KILL_PREEMPT by root(0)",
            "Signal 4 attempt 1 on hostB Kill TERM_PREEMPT",
        ],
    );
    s.schedule(now + 61_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_SIGNAL 3 @71 KILL_PREEMPT by root(0)",
            "Signal 3 attempt 1 on hostA Kill TERM_PREEMPT",
        ],
    );
}

/// MAX_PREEMPT_JOBS: at most this many victims per scheduling pass.
#[test]
fn max_preempt_jobs_caps_the_victims_of_one_pass() {
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        c.preempt.max_preempt_jobs = 1;
    }));
    fill(&mut s, "normal");
    let now = T0 + 10_000;
    for _ in 0..2 {
        s.submit(now, &bob(), in_queue("sleep 10", "high"))
            .expect("submit");
    }
    s.schedule(now);
    accept_all(&mut s, now);
    assert_eq!(
        (state(&s, 5), state(&s, 6)),
        (JobState::Run, JobState::Pend)
    );
    s.schedule(now + 1);
    assert_eq!(state(&s, 6), JobState::Run);
    assert_eq!(preempted(&s).len(), 2);
}

/// NO_PREEMPT_RUN_TIME: a job that has run this long is not preempted;
/// NO_PREEMPT_FINISH_TIME: nor one that ends within this time of its run limit.
#[test]
fn no_preempt_run_time_and_no_preempt_finish_time_protect_jobs() {
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        c.preempt.no_preempt_run_time = Some(NoPreemptTime::Minutes(10));
    }));
    fill(&mut s, "normal");
    // Eleven minutes later every victim has run 10 minutes.
    run(&mut s, T0 + 660_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(state(&s, 5), JobState::Pend);
    // A percentage of the run limit (a 20-minute limit: 50% = 10 minutes).
    let mut s = up_with(config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        q(c, "normal").no_preempt_finish_time = Some(NoPreemptTime::Percent(50.0));
    }));
    for i in 0..4 {
        let mut sub = in_queue("sleep 1000", "normal");
        std::sync::Arc::make_mut(&mut sub.rlimits)[crate::RLIMIT_RUN] =
            if i == 3 { 1200 } else { -1 };
        run(&mut s, T0 + i * 1000, &alice(), sub);
    }
    // Job 4 (the most recent) ends within 10 minutes of its limit after 11: spared.
    run(&mut s, T0 + 663_000, &bob(), in_queue("sleep 10", "high"));
    assert_eq!(preempted(&s), vec![3]);
}

/// PREEMPT_FOR=LEAST_RUN_TIME: the job that has run the shortest time goes, whatever its
/// queue's priority.
#[test]
fn preempt_for_least_run_time_takes_the_shortest_run_first() {
    let setup = |least: bool| {
        let mut s = up_with(config(|c| {
            q(c, "high").preempt = preemptive(&[]);
            c.preempt.preempt_for.least_run_time = least;
        }));
        run(&mut s, T0, &alice(), in_queue("sleep 1000", "normal"));
        run(
            &mut s,
            T0 + 1000,
            &alice(),
            in_queue("sleep 1000", "normal"),
        );
        run(&mut s, T0 + 2000, &alice(), in_queue("sleep 1000", "low"));
        run(
            &mut s,
            T0 + 3000,
            &alice(),
            in_queue("sleep 1000", "normal"),
        );
        run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
        preempted(&s)
    };
    // hostB runs 3 (low) and 4 (normal, newer).
    assert_eq!(setup(false), vec![3]);
    assert_eq!(setup(true), vec![4]);
}

/// One host of four slots running a 2-slot job (1) and two 1-slot jobs (2, 3, the
/// newest), all of `normal`; with `PREEMPT_FOR` as `set` makes it, a high job of `n`
/// slots arrives: the jobs it preempted.
fn preempted_for_a_parallel_job(
    set: impl FnOnce(&mut basalt_config::batch::PreemptFor),
    n: u32,
) -> Vec<u64> {
    let mut c = config(|c| {
        q(c, "high").preempt = preemptive(&[]);
        set(&mut c.preempt.preempt_for);
        c.hosts.truncate(1);
    });
    c.hosts[0].mxj = Some(4);
    c.hosts[0].mxj_ncpus = false;
    let mut s = up_with(c);
    run(&mut s, T0, &alice(), slots(in_queue("mpirun", "normal"), 2));
    for t in [1000, 2000] {
        run(&mut s, T0 + t, &alice(), in_queue("sleep 1000", "normal"));
    }
    run(
        &mut s,
        T0 + 10_000,
        &bob(),
        slots(in_queue("mpirun", "high"), n),
    );
    let mut p = preempted(&s);
    p.sort_unstable();
    p
}

/// PREEMPT_FOR=MINI_JOB: only as many jobs as the preempting job needs; without it the
/// jobs taken in order until it fits all go.
#[test]
fn preempt_for_mini_job_preempts_only_the_jobs_needed() {
    // 3 slots: newest first, 3 (1 free), 2 (2 free), 1 (4 free) are taken; 2 is not
    // needed.
    assert_eq!(preempted_for_a_parallel_job(|_| {}, 3), vec![1, 2, 3]);
    assert_eq!(
        preempted_for_a_parallel_job(|f| f.mini_job = true, 3),
        vec![1, 3]
    );
}

/// PREEMPT_FOR=OPTIMAL_MINI_JOB: as few jobs as possible — the largest first.
#[test]
fn preempt_for_optimal_mini_job_preempts_the_fewest_jobs() {
    assert_eq!(preempted_for_a_parallel_job(|_| {}, 2), vec![2, 3]);
    assert_eq!(
        preempted_for_a_parallel_job(|f| f.optimal_mini_job = true, 2),
        vec![1]
    );
}

/// "The PREEMPT_FOR parameter is used to change the calculation of job slot usage,
/// ignoring suspended jobs in the calculation. This ensures that if a limit is met, the
/// preempting job can actually run." HOST_JLU: lsb.hosts JL/U counts only running
/// jobs.
#[test]
fn preempt_for_host_jlu_ignores_suspended_jobs_in_a_per_host_user_limit() {
    let setup = |host_jlu: bool| {
        let mut c = config(|c| {
            q(c, "high").preempt = preemptive(&[]);
            c.preempt.preempt_for.host_jlu = host_jlu;
            c.hosts.truncate(1);
        });
        c.hosts[0].jl_u = Some(1);
        let mut s = up_with(c);
        run(&mut s, T0, &alice(), in_queue("sleep 1000", "normal"));
        run(&mut s, T0 + 1000, &bob(), in_queue("sleep 1000", "normal"));
        // alice's high job: her own running job holds her JL/U.
        run(&mut s, T0 + 10_000, &alice(), in_queue("sleep 10", "high"));
        (state(&s, 3), preempted(&s))
    };
    assert_eq!(setup(false), (JobState::Pend, vec![]));
    let (st, mut p) = setup(true);
    p.sort_unstable();
    assert_eq!((st, p), (JobState::Run, vec![1, 2]));
}

/// PREEMPT_FOR=USER_JLP: lsb.users JL/P counts only running jobs.
#[test]
fn preempt_for_user_jlp_ignores_suspended_jobs_in_a_per_processor_user_limit() {
    let setup = |user_jlp: bool| {
        let mut c = config(|c| {
            q(c, "high").preempt = preemptive(&[]);
            c.preempt.preempt_for.user_jlp = user_jlp;
            c.preempt.preempt_for.mini_job = true;
            c.hosts.truncate(1);
        });
        c.user_rows.insert("alice".into(), Some(0.5));
        let mut s = up_with(c);
        run(&mut s, T0, &alice(), in_queue("sleep 1000", "normal"));
        run(&mut s, T0 + 1000, &bob(), in_queue("sleep 1000", "normal"));
        run(&mut s, T0 + 10_000, &alice(), in_queue("sleep 10", "high"));
        (state(&s, 3), preempted(&s))
    };
    assert_eq!(setup(false), (JobState::Pend, vec![]));
    assert_eq!(setup(true), (JobState::Run, vec![1]));
}

/// A user's total job slot limit (lsb.users MAX_JOBS) never counts suspended jobs
/// while preemption is configured; a group's only with PREEMPT_FOR=GROUP_MAX.
#[test]
fn preempt_for_group_max_ignores_suspended_jobs_in_a_group_total() {
    use crate::reslimits::{Members, ResLimit, Scope};
    let setup = |group_max: bool| {
        let mut c = config(|c| {
            q(c, "high").preempt = preemptive(&[]);
            q(c, "normal").priority = 35;
            c.preempt.preempt_for.group_max = group_max;
            c.hosts.truncate(1);
        });
        let members = Members {
            all: false,
            names: vec!["alice".into(), "bob".into()],
            except: vec![],
            shown: String::new(),
        };
        c.user_groups.insert(
            "team".into(),
            (
                crate::config::UserList {
                    all: false,
                    names: members.names.clone(),
                    except: vec![],
                },
                None,
            ),
        );
        c.limits.push(ResLimit {
            name: "team".into(),
            users: Scope::Together(members),
            queues: Scope::Any,
            hosts: Scope::Any,
            projects: Scope::Any,
            apps: Scope::Any,
            slots: Some(2),
            slots_per_cpu: None,
            slots_window: None,
            jobs: None,
            amounts: vec![],
            reason: basalt_core::job::pend::USER_LIMIT,
            amount_pcts: vec![],
        });
        let mut s = up_with(c);
        // The team fills its limit (and the host) in low; admin's high job preempts.
        run(&mut s, T0, &alice(), in_queue("sleep 1000", "low"));
        run(&mut s, T0 + 1000, &bob(), in_queue("sleep 1000", "low"));
        run(&mut s, T0 + 10_000, &admin(), in_queue("sleep 10", "high"));
        assert_eq!(preempted(&s), vec![2]);
        // High ends; alice's normal job (before low's preempted job) counts the team's
        // slots: with GROUP_MAX only job 1 counts, so it starts.
        run(
            &mut s,
            T0 + 11_000,
            &alice(),
            in_queue("sleep 10", "normal"),
        );
        finish_at(&mut s, (3, 0), 0, 1, T0 + 20_000);
        s.schedule(T0 + 20_000);
        (state(&s, 4), state(&s, 2))
    };
    assert_eq!(setup(false), (JobState::Pend, JobState::Run));
    assert_eq!(setup(true), (JobState::Run, JobState::Ssusp));
}

/// A preempted job its user stops (bstop) and resumes (bresume) stays preempted: it
/// waits for its slots again (counted once), it does not run beside its preemptor.
#[test]
fn a_preempted_job_stopped_and_resumed_by_its_user_waits_for_its_slots() {
    let mut s = arrives(high_preemptive(), "normal", "high");
    assert_eq!(preempted(&s), vec![4]);
    s.take_effects();
    s.stop(T0 + 11_000, &alice(), (4, 0)).expect("bstop");
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_SIGNAL 4 @11 STOP by alice(1000)",
            "Signal 4 attempt 1 on hostB Stop USUSP USER_STOP|MBD_PREEMPT|MBD_LOCK",
        ],
    );
    let reasons = susp::USER_STOP | susp::MBD_PREEMPT | susp::MBD_LOCK;
    confirm(&mut s, T0 + 11_000, 4, status::USUSP, reasons);
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 4 @11 USUSP USER_STOP|MBD_PREEMPT|MBD_LOCK"],
    );
    assert_eq!(state(&s, 4), JobState::Ususp);
    // bresume: back to SSUSP, preempted; not resumed on its host.
    s.resume(T0 + 12_000, &alice(), (4, 0)).expect("bresume");
    s.schedule(T0 + 12_000);
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 4 @12 SSUSP MBD_PREEMPT|MBD_LOCK"],
    );
    let j = &s.jobs[&(4, 0)];
    assert_eq!(
        (j.state, j.reasons, j.preempt_count),
        (JobState::Ssusp, PREEMPTED, 1)
    );
    finish_at(&mut s, (5, 0), 0, 1, T0 + 20_000);
    s.schedule(T0 + 20_000);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 5 @20 DONE end@20 usage",
            "Acct 5 DONE on hostB",
            "Log JOB_STATUS 4 @20 RUN",
            "Signal 4 attempt 1 on hostB Resume",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
}

/// A log switch carries every job's preemptions: a replay of the new lsb.events counts
/// them as the whole history does (MAX_JOB_PREEMPT keeps holding after the switch).
#[test]
fn preemption_counts_survive_a_log_switch() {
    let mut s = up_with(high_preemptive());
    let mut all = Vec::new();
    let step = |s: &mut Sched, all: &mut Vec<Event>| all.extend(logged(&s.take_effects()));
    fill(&mut s, "normal");
    // `fill` dropped its effects: the history starts from the state it left, as a log
    // switch would have written it.
    let base = s.carry_over(T0 + 5000);
    all.extend(base.events().cloned());
    // Job 4 preempted by 5, resumed when 5 ends, preempted again by 6; job 2 preempted
    // by 7, then stopped by its owner.
    run(&mut s, T0 + 10_000, &bob(), in_queue("sleep 10", "high"));
    step(&mut s, &mut all);
    finish_at(&mut s, (5, 0), 0, 1, T0 + 20_000);
    s.schedule(T0 + 20_000);
    step(&mut s, &mut all);
    run(&mut s, T0 + 30_000, &bob(), in_queue("sleep 10", "high"));
    run(&mut s, T0 + 31_000, &bob(), in_queue("sleep 10", "high"));
    step(&mut s, &mut all);
    let mut p = preempted(&s);
    p.sort_unstable();
    assert_eq!(p, vec![3, 4]);
    s.stop(T0 + 32_000, &alice(), (3, 0)).expect("bstop");
    let reasons = susp::USER_STOP | susp::MBD_PREEMPT | susp::MBD_LOCK;
    confirm(&mut s, T0 + 32_000, 3, status::USUSP, reasons);
    step(&mut s, &mut all);
    assert_eq!(s.jobs[&(4, 0)].preempt_count, 2);
    assert_eq!(s.jobs[&(3, 0)].preempt_count, 1);
    let co = crate::logswitch_tests::check_switch(&s, &all, T0 + 40_000, "preemption");
    let r = crate::logswitch_tests::replay(s.config().clone(), T0 + 40_000, co.events());
    assert_eq!(r.jobs[&(4, 0)].preempt_count, 2);
    assert_eq!(r.jobs[&(3, 0)].preempt_count, 1);
    assert_eq!(r.jobs[&(3, 0)].state, JobState::Ususp);
}

/// sbatchd reports job `id` in `state` with `reasons` as its report number `seq`.
fn state_report(s: &mut Sched, now: Millis, id: u64, seq: u64, state: u32, reasons: u32) -> Ack {
    let host = host_of(s, id);
    s.report(
        now,
        Report {
            host,
            key: (id, 0),
            attempt: 1,
            seq,
            time: 0,
            kind: ReportKind::State {
                state,
                reasons,
                subreasons: 0,
            },
        },
    )
}

/// A preempted job's stop, reported by sbatchd but delivered only after mbatchd has
/// resumed the job (the report waited for a restarted mbatchd): it is older than the
/// resume and changes nothing; the resume's confirmation ends the wait, and a later
/// suspension (by load) is applied as usual. (CI once saw SSUSP, RUN, SSUSP, RUN.)
#[test]
fn a_stop_report_delivered_after_the_preempted_job_was_resumed_is_stale() {
    let mut s = arrives(high_preemptive(), "normal", "high");
    assert_eq!(preempted(&s), vec![4]);
    s.take_effects();
    let now = T0 + 20_000;
    finish_at(&mut s, (2, 0), 0, 1, now);
    s.schedule(now);
    assert_effects(
        &s.take_effects(),
        &[
            "Log JOB_STATUS 2 @20 DONE end@20 usage",
            "Acct 2 DONE on hostB",
            "Log JOB_STATUS 4 @20 RUN",
            "Signal 4 attempt 1 on hostB Resume",
        ],
    );
    assert_eq!(state(&s, 4), JobState::Run);
    // The stop's report, late.
    assert_eq!(
        state_report(&mut s, now + 100, 4, 3, status::SSUSP, PREEMPTED),
        Ack::Ok
    );
    assert_eq!(state(&s, 4), JobState::Run);
    assert_effects(&s.take_effects(), &[]);
    // The resume's confirmation; then the load suspends the job: that is applied.
    assert_eq!(
        state_report(&mut s, now + 200, 4, 4, status::RUN, 0),
        Ack::Ok
    );
    assert_effects(&s.take_effects(), &[]);
    assert_eq!(
        state_report(&mut s, now + 300, 4, 5, status::SSUSP, susp::LOAD_REASON),
        Ack::Ok
    );
    assert_effects(
        &s.take_effects(),
        &["Log JOB_STATUS 4 @20 SSUSP LOAD_REASON"],
    );
    assert_eq!(state(&s, 4), JobState::Ssusp);
}

/// A confirmation that never comes does not freeze the job: after
/// AWAIT_CONFIRMATION, sbatchd's reports are applied again.
#[test]
fn a_resume_never_confirmed_lets_reports_through_after_a_while() {
    let mut s = arrives(high_preemptive(), "normal", "high");
    s.take_effects();
    let now = T0 + 20_000;
    finish_at(&mut s, (2, 0), 0, 1, now);
    s.schedule(now);
    s.take_effects();
    let later = now + crate::sbd::AWAIT_CONFIRMATION;
    assert_eq!(
        state_report(&mut s, later, 4, 3, status::SSUSP, susp::LOAD_REASON),
        Ack::Ok
    );
    assert_eq!(state(&s, 4), JobState::Ssusp);
}
