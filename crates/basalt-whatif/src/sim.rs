//! The simulation: a workload run through the production scheduler
//! ([`basalt_sched::Sched`], no copy) on a simulated clock. Submissions are the log's
//! JOB_NEW records replayed at their times; each dispatch is accepted at once and the job
//! ends its recorded run time later; jobs never started in reality and killed while
//! pending are killed then; preemption's suspensions pause a job's remaining run time.
//! Nothing else of the real cluster is simulated: hosts are always up and report no
//! load (load indices are not in the log).

use crate::workload::Workload;
use basalt_core::job::{status, susp};
use basalt_sched::{
    Caller, Effect, Event, JobKey, Millis, Report, ReportKind, SbdAction, Sched, SchedConfig, Usage,
};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// What a simulated job did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimJob {
    /// Its first start (seconds; None: never started).
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// Slots it took (its first start's).
    pub slots: u32,
    pub preempted: u32,
    pub suspended: u32,
}

/// One point of the timeline: slots pending and slots in use at time `t` (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    pub t: i64,
    pub pending: u32,
    pub running_slots: u32,
}

/// The outcome of a simulation.
#[derive(Debug, Clone, Default)]
pub struct SimResult {
    pub jobs: BTreeMap<JobKey, SimJob>,
    /// Jobs in the order they were dispatched (a job once, at its first start).
    pub dispatch_order: Vec<JobKey>,
    /// Slots of the simulated hosts.
    pub slots_total: u32,
    /// The timeline, sampled.
    pub samples: Vec<Sample>,
    /// Jobs of queues the configuration does not have, moved to its default queue:
    /// queue -> count.
    pub remapped: BTreeMap<String, u32>,
    /// Every event the scheduler logged, when asked for (`keep_log`).
    pub log: Vec<Event>,
    /// Jobs whose `-w` condition names a job the logs do not have (submitted before the
    /// oldest log given): their condition is dropped, as if it were satisfied.
    pub deps_dropped: u32,
    /// Records not replayed because they name a queue the configuration does not have
    /// (bswitch, bmod -q, queue control).
    pub controls_skipped: u32,
}

/// How to simulate.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// The hosts and their slots.
    pub hosts: Vec<(String, u32)>,
    /// While jobs wait, the scheduler is woken at least this often (seconds): start
    /// times, run windows and retries are decided on the clock.
    pub wake_secs: i64,
    /// Keep every logged event (tests, `--log`).
    pub keep_log: bool,
    /// About this many timeline samples.
    pub samples: usize,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            hosts: Vec::new(),
            wake_secs: 60,
            keep_log: false,
            samples: 500,
        }
    }
}

/// A job running in the simulation: when it ends, and which of its runs this is.
#[derive(Debug, Clone, Copy)]
struct Running {
    end: Millis,
    attempt: u32,
    /// Bumped at each suspension, so that the heap's older entries are stale.
    generation: u32,
    /// While suspended: the run time left (ms).
    paused: Option<Millis>,
}

/// Run `w` through the scheduler configured by `cfg`.
pub fn simulate(cfg: &SchedConfig, w: &Workload, opts: &SimOptions) -> SimResult {
    let mut cfg = cfg.clone();
    // Hosts never fall silent and are never lost in the simulation.
    cfg.hello_interval_secs = u32::MAX / 4000;
    cfg.host_lost_grace_secs = u32::MAX / 4000;
    let t0: Millis = w.first.saturating_mul(1000);
    let mut s = Sched::new(cfg.clone(), t0);
    for (h, n) in &opts.hosts {
        s.lim_update(h, *n, 1.0, true, BTreeMap::new());
    }
    let master = opts.hosts.first().map_or("", |(h, _)| h.as_str());
    s.start(t0, master);
    let mut out = SimResult {
        slots_total: opts.hosts.iter().map(|(_, n)| *n).sum(),
        ..Default::default()
    };
    keep(&mut out, s.take_effects(), opts.keep_log);

    // Submissions (their queue moved to the default one when the configuration has no
    // such queue), kills of jobs that never started, and their run times.
    let queues: Vec<String> = s.queues().iter().map(|q| q.name.clone()).collect();
    // The log's own events, but for those whose queue is moved (not a copy of all).
    let mut news: Vec<Cow<'_, Event>> = Vec::with_capacity(w.news.len());
    for ev in &w.news {
        let Event::JobNew { time, job_id, sub } = ev else {
            continue;
        };
        let simulated = w
            .jobs
            .range((*job_id, 0)..=(*job_id, u32::MAX))
            .any(|(_, j)| !j.left_pending);
        if !simulated {
            continue;
        }
        let unknown_queue = !queues.iter().any(|q| q == sub.queue.as_str());
        let lost_dep = names_missing_job(w, &sub.depend_cond);
        if unknown_queue || lost_dep {
            let mut changed = sub.clone();
            if unknown_queue {
                if !sub.queue.is_empty() {
                    *out.remapped.entry(sub.queue.to_string()).or_default() += 1;
                }
                changed.queue = cfg.default_queue.as_str().into();
            }
            if lost_dep {
                out.deps_dropped += 1;
                changed.depend_cond = Default::default();
            }
            news.push(Cow::Owned(Event::JobNew {
                time: *time,
                job_id: *job_id,
                sub: changed,
            }));
        } else {
            news.push(Cow::Borrowed(ev));
        }
    }
    // What users and administrators did, but for what names a queue not configured.
    let known = |q: &str| queues.iter().any(|x| x == q);
    let controls: Vec<&Event> = w
        .controls
        .iter()
        .filter(|ev| {
            let ok = match ev {
                Event::JobSwitch { queue, .. } | Event::QueueCtrl { queue, .. } => known(queue),
                Event::JobModify { change, .. } => match &change.queue {
                    basalt_sched::Change::Set(q) => known(q),
                    _ => true,
                },
                _ => true,
            };
            if !ok {
                out.controls_skipped += 1;
            }
            ok
        })
        .collect();
    let mut kills: Vec<(Millis, JobKey)> = w
        .simulated()
        .filter_map(|j| j.kill_at.map(|t| (t * 1000, j.key)))
        .collect();
    kills.sort_unstable();
    let run_of = |key: JobKey| w.jobs.get(&key).map_or(0, |j| j.run) * 1000;
    let exit_of = |key: JobKey| w.jobs.get(&key).map_or(0, |j| j.actual.exit_status);
    let admin = Caller {
        uid: 0,
        user: "root".to_owned(),
        host: master.to_owned(),
    };

    let mut heap: BinaryHeap<Reverse<(Millis, JobKey, u32)>> = BinaryHeap::new();
    let mut running: BTreeMap<JobKey, Running> = BTreeMap::new();
    let (mut next_new, mut next_kill, mut next_control) = (0usize, 0usize, 0usize);
    let span = (w.last - w.first).max(1);
    let sample_every = (span / opts.samples.max(1) as i64).max(1) * 1000;
    let mut next_sample = t0;
    let mut now = t0;
    let mut next_tick = t0;
    let mut pending_left = 0u32;
    loop {
        let wake = (pending_left > 0).then(|| now + opts.wake_secs.max(1) * 1000);
        let next = [
            news.get(next_new).map(|e| e.time() * 1000),
            kills.get(next_kill).map(|k| k.0),
            controls.get(next_control).map(|e| e.time() * 1000),
            heap.peek().map(|Reverse((t, _, _))| *t),
            wake,
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else { break };
        // Nothing left but waiting jobs that nothing will ever let start.
        if next_new >= news.len()
            && next_kill >= kills.len()
            && next_control >= controls.len()
            && heap.is_empty()
            && now - t0 > (w.last - w.first + 30 * 86_400) * 1000
        {
            break;
        }
        now = next.max(now);
        while let Some(ev) = news.get(next_new).filter(|e| e.time() * 1000 <= now) {
            // Applied as mbatchd applies a logged submission (its id kept).
            s.apply_logged(ev);
            if opts.keep_log {
                out.log.push(ev.clone().into_owned());
            }
            next_new += 1;
        }
        while let Some(ev) = controls
            .get(next_control)
            .filter(|e| e.time() * 1000 <= now)
        {
            s.apply_logged(ev);
            if opts.keep_log {
                out.log.push((*ev).clone());
            }
            next_control += 1;
        }
        while let Some(&(t, key)) = kills.get(next_kill).filter(|k| k.0 <= now) {
            let _ = t;
            if s.jobs().get(&key).is_some_and(|j| j.state.is_pending()) {
                let _ = s.kill(now, &admin, key, false, false);
            }
            next_kill += 1;
        }
        while let Some(Reverse((t, key, generation))) = heap.peek().copied() {
            if t > now {
                break;
            }
            heap.pop();
            let Some(r) = running.get(&key).copied() else {
                continue;
            };
            if r.generation != generation || r.paused.is_some() {
                continue;
            }
            running.remove(&key);
            let host = s
                .jobs()
                .get(&key)
                .and_then(|j| j.hosts.first().cloned())
                .unwrap_or_default();
            s.report(
                now,
                Report {
                    host,
                    key,
                    attempt: r.attempt,
                    seq: 0,
                    time: now / 1000,
                    kind: ReportKind::Finished {
                        exit_status: exit_of(key),
                        usage: Usage::default(),
                        term_reason: String::new(),
                        post_exec: None,
                    },
                },
            );
        }
        // The scheduler's timers every `wake_secs` (mbatchd ticks twice a second; its
        // timers — CLEAN_PERIOD, retries, MIG, deadlines — are minutes apart), its
        // passes, and what they order, until it settles.
        if now >= next_tick {
            s.tick(now);
            next_tick = now + opts.wake_secs.max(1) * 1000;
        }
        for _ in 0..8 {
            // A pass with no job pending places nothing (nor preempts): skipped.
            if s.needs_pass() && pending_slots(&s, &queues) > 0 {
                s.schedule(now);
            }
            let effects = s.take_effects();
            if effects.is_empty() {
                break;
            }
            for e in &effects {
                match e {
                    Effect::Dispatch { key, attempt, .. } => {
                        s.dispatch_accepted(now, *key, *attempt, 1, 1);
                        let end = now + run_of(*key);
                        let generation = running.get(key).map_or(0, |r| r.generation + 1);
                        running.insert(
                            *key,
                            Running {
                                end,
                                attempt: *attempt,
                                generation,
                                paused: None,
                            },
                        );
                        heap.push(Reverse((end, *key, generation)));
                        let j = out.jobs.entry(*key).or_default();
                        if j.start.is_none() {
                            j.start = Some(now / 1000);
                            j.slots = s.jobs().get(key).map_or(1, |x| x.slots());
                            out.dispatch_order.push(*key);
                        }
                    }
                    Effect::Signal {
                        key,
                        attempt,
                        action,
                        host,
                    } => act(
                        &mut s,
                        now,
                        *key,
                        *attempt,
                        host,
                        action,
                        &mut running,
                        &mut heap,
                    ),
                    Effect::Log(Event::JobStatus {
                        key,
                        status: st,
                        reasons,
                        time,
                        ..
                    }) => {
                        let j = out.jobs.entry(*key).or_default();
                        if *st & (status::DONE | status::EXIT) != 0 {
                            j.end = Some(*time);
                            running.remove(key);
                        } else if *st & status::SSUSP != 0 {
                            if *reasons & susp::MBD_PREEMPT != 0 {
                                j.preempted += 1;
                            } else {
                                j.suspended += 1;
                            }
                        }
                    }
                    _ => {}
                }
            }
            keep(&mut out, effects, opts.keep_log);
        }
        // Slots pending and running, from the scheduler's counters (O(queues)).
        let (pend, run) = slot_counts(&s, &queues);
        pending_left = pend;
        while next_sample <= now {
            out.samples.push(Sample {
                t: next_sample / 1000,
                pending: pend,
                running_slots: run,
            });
            next_sample += sample_every;
        }
    }
    out
}

/// Whether `-w` condition `cond` names by id a job the workload does not have (its
/// logs began after that job's submission).
fn names_missing_job(w: &Workload, cond: &str) -> bool {
    if cond.is_empty() {
        return false;
    }
    let Ok(Some(expr)) = basalt_sched::depend::parse(cond) else {
        return false;
    };
    let mut missing = false;
    expr.for_each_target(&mut |t| {
        if let basalt_sched::depend::Target::Id(id, _) = t {
            missing |= w.jobs.range((*id, 0)..=(*id, u32::MAX)).next().is_none();
        }
    });
    missing
}

/// Slots pending and running in the scheduler's counters (O(queues)).
fn slot_counts(s: &Sched, queues: &[String]) -> (u32, u32) {
    queues.iter().fold((0u32, 0u32), |(p, r), q| {
        let (_, qp, qr, _, _) = s.queue_counts(q);
        (p + qp, r + qr)
    })
}

fn pending_slots(s: &Sched, queues: &[String]) -> u32 {
    slot_counts(s, queues).0
}

/// sbatchd's side of an order: a kill ends the job now; a stop pauses its run time, a
/// resume goes on with what was left.
#[allow(clippy::too_many_arguments)]
fn act(
    s: &mut Sched,
    now: Millis,
    key: JobKey,
    attempt: u32,
    host: &str,
    action: &SbdAction,
    running: &mut BTreeMap<JobKey, Running>,
    heap: &mut BinaryHeap<Reverse<(Millis, JobKey, u32)>>,
) {
    match action {
        SbdAction::Kill { term_reason } => {
            running.remove(&key);
            s.report(
                now,
                Report {
                    host: host.to_owned(),
                    key,
                    attempt,
                    seq: 0,
                    time: now / 1000,
                    kind: ReportKind::Finished {
                        exit_status: 9,
                        usage: Usage::default(),
                        term_reason: term_reason.clone(),
                        post_exec: None,
                    },
                },
            );
        }
        SbdAction::Stop { .. } => {
            if let Some(r) = running.get_mut(&key)
                && r.paused.is_none()
            {
                r.paused = Some((r.end - now).max(0));
                r.generation += 1;
            }
        }
        SbdAction::Resume => {
            if let Some(r) = running.get_mut(&key)
                && let Some(left) = r.paused.take()
            {
                r.end = now + left;
                r.generation += 1;
                heap.push(Reverse((r.end, key, r.generation)));
            }
        }
        _ => {}
    }
}

fn keep(out: &mut SimResult, effects: Vec<Effect>, keep_log: bool) {
    if keep_log {
        out.log.extend(effects.into_iter().filter_map(|e| match e {
            Effect::Log(ev) => Some(ev),
            _ => None,
        }));
    }
}
