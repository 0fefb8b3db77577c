//! The workload an event log recorded: every job's submission (its JOB_NEW, as the
//! scheduler replays it), when it was submitted, how long it ran and what happened to it
//! in reality (its last JOB_START, its end, how often it was preempted), and what users
//! and administrators did to pending work (bswitch, bmod, btop/bbot, queue control).
//!
//! A window (`--from`, `--to`) chooses the jobs reported, not the jobs simulated: every
//! job of the logs is simulated, so that the jobs before the window hold their slots and
//! satisfy the dependencies of the jobs in it as they would have.

use basalt_core::job::{JobState, status, susp};
use basalt_sched::{Event, JobKey, Submission};
use std::collections::BTreeMap;

/// What reality did with a job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Its first start (seconds; None: it never started).
    pub first_start: Option<i64>,
    /// Its last start: the run that ended it.
    pub last_start: Option<i64>,
    /// When it ended (None: not by the end of the log).
    pub end: Option<i64>,
    /// DONE or EXIT (None: not finished).
    pub state: Option<JobState>,
    pub exit_status: i32,
    pub cpu_time: f64,
    /// Times suspended for a higher-priority job (SUSP_MBD_PREEMPT).
    pub preempted: u32,
    /// Times suspended by the system otherwise (load, windows).
    pub suspended: u32,
    /// Slots it took (one per host entry of its last JOB_START).
    pub slots: u32,
}

/// One job (or array element) of the workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WJob {
    pub key: JobKey,
    /// Seconds since the epoch.
    pub submit: i64,
    pub user: String,
    pub queue: String,
    /// How long its run lasts in the simulation (seconds): its last run's length in
    /// reality (until the end of the log for one still running then).
    pub run: i64,
    /// It never started in reality and was killed while pending at this time: the
    /// simulation kills it then too (if it still waits).
    pub kill_at: Option<i64>,
    /// It never started and had not ended by the end of the log: it is not simulated.
    pub left_pending: bool,
    /// Submitted in the window: reported.
    pub in_window: bool,
    pub actual: Outcome,
}

/// The workload of one or more event logs.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// The JOB_NEW events to replay, in log order (an array's elements share one).
    pub news: Vec<Event>,
    /// What was done to the jobs and queues, replayed at its time, in log order:
    /// JOB_SWITCH, JOB_MODIFY2, JOB_MOVE and QUEUE_CTRL records.
    pub controls: Vec<Event>,
    pub jobs: BTreeMap<JobKey, WJob>,
    /// The first and last times in the log (seconds).
    pub first: i64,
    pub last: i64,
    /// The most slots each host ran at once in reality.
    pub host_peak: BTreeMap<String, u32>,
}

impl Workload {
    /// Read the workload of `events` (in log order); the jobs submitted in `[from, to)`
    /// (seconds; None: no bound) are the window's.
    pub fn from_events<'a>(
        events: impl IntoIterator<Item = &'a Event>,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Workload {
        let mut w = Workload {
            first: i64::MAX,
            last: i64::MIN,
            ..Default::default()
        };
        let mut running: BTreeMap<String, i64> = BTreeMap::new();
        let mut on_host: BTreeMap<JobKey, Vec<String>> = BTreeMap::new();
        let keep = |t: i64| from.is_none_or(|f| t >= f) && to.is_none_or(|e| t < e);
        for ev in events {
            let t = ev.time();
            if t > 0 {
                w.first = w.first.min(t);
                w.last = w.last.max(t);
            }
            match ev {
                Event::JobNew { time, job_id, sub } => {
                    w.news.push(ev.clone());
                    for idx in elements(sub) {
                        w.jobs.insert(
                            (*job_id, idx),
                            WJob {
                                key: (*job_id, idx),
                                submit: *time,
                                user: sub.user.to_string(),
                                queue: sub.queue.to_string(),
                                run: 0,
                                kill_at: None,
                                left_pending: false,
                                in_window: keep(*time),
                                actual: Outcome::default(),
                            },
                        );
                    }
                }
                Event::JobSwitch { key, queue, .. } => {
                    w.controls.push(ev.clone());
                    for j in jobs_of(&mut w.jobs, *key) {
                        j.queue = queue.clone();
                    }
                }
                Event::JobModify { .. } | Event::JobMove { .. } | Event::QueueCtrl { .. } => {
                    w.controls.push(ev.clone());
                }
                Event::JobStart {
                    time, key, hosts, ..
                } => {
                    if let Some(j) = w.jobs.get_mut(key) {
                        j.actual.first_start.get_or_insert(*time);
                        j.actual.last_start = Some(*time);
                        j.actual.slots = hosts.len().max(1) as u32;
                        for h in hosts {
                            let n = running.entry(h.clone()).or_default();
                            *n += 1;
                            let peak = w.host_peak.entry(h.clone()).or_default();
                            *peak = (*peak).max(u32::try_from(*n).unwrap_or(u32::MAX));
                        }
                        if let Some(old) = on_host.insert(*key, hosts.clone()) {
                            release(&mut running, &old);
                        }
                    }
                }
                Event::JobStatus {
                    time,
                    key,
                    status: st,
                    reasons,
                    end_time,
                    exit_status,
                    cpu_time,
                    ..
                } => {
                    let Some(j) = w.jobs.get_mut(key) else {
                        continue;
                    };
                    if *st & (status::DONE | status::EXIT) != 0 {
                        j.actual.end = Some(if *end_time > 0 { *end_time } else { *time });
                        j.actual.state = Some(if *st & status::DONE != 0 {
                            JobState::Done
                        } else {
                            JobState::Exit
                        });
                        j.actual.exit_status = *exit_status;
                        j.actual.cpu_time = *cpu_time;
                        if let Some(old) = on_host.remove(key) {
                            release(&mut running, &old);
                        }
                    } else if *st & status::SSUSP != 0 {
                        if *reasons & susp::MBD_PREEMPT != 0 {
                            j.actual.preempted += 1;
                        } else {
                            j.actual.suspended += 1;
                        }
                    } else if *st & status::PEND != 0
                        && let Some(old) = on_host.remove(key)
                    {
                        // Requeued: its next start is the run that counts.
                        release(&mut running, &old);
                    }
                }
                _ => {}
            }
        }
        if w.first > w.last {
            (w.first, w.last) = (0, 0);
        }
        let last = w.last;
        for j in w.jobs.values_mut() {
            match (j.actual.last_start, j.actual.end) {
                (Some(s), Some(e)) => j.run = (e - s).max(0),
                (Some(s), None) => j.run = (last - s).max(0),
                (None, Some(e)) => j.kill_at = Some(e),
                (None, None) => j.left_pending = true,
            }
        }
        w
    }

    /// Add a job by hand (benchmarks, tests): its submission at `time` as job `job_id`,
    /// running `run` seconds.
    pub fn add_job(&mut self, time: i64, job_id: u64, sub: Submission, run: i64) {
        let (user, queue) = (sub.user.to_string(), sub.queue.to_string());
        self.news.push(Event::JobNew {
            time,
            job_id,
            sub: Box::new(sub),
        });
        self.jobs.insert(
            (job_id, 0),
            WJob {
                key: (job_id, 0),
                submit: time,
                user,
                queue,
                run,
                kill_at: None,
                left_pending: false,
                in_window: true,
                actual: Outcome::default(),
            },
        );
        if self.news.len() == 1 {
            self.first = time;
        }
        self.first = self.first.min(time);
        self.last = self.last.max(time);
    }

    /// The jobs the simulation runs (not those still pending at the end of the log).
    pub fn simulated(&self) -> impl Iterator<Item = &WJob> {
        self.jobs.values().filter(|j| !j.left_pending)
    }

    /// The simulated jobs of the window: those reported.
    pub fn reported(&self) -> impl Iterator<Item = &WJob> {
        self.simulated().filter(|j| j.in_window)
    }
}

/// An array's elements (its indices), or 0 for an ordinary job.
fn elements(sub: &Submission) -> Vec<u32> {
    match basalt_sched::array::parse(&sub.job_name) {
        Some(Ok(spec)) => spec.indices(),
        _ => vec![0],
    }
}

/// The job `key` names: the element, or every element of an array (index 0).
fn jobs_of(jobs: &mut BTreeMap<JobKey, WJob>, key: JobKey) -> Vec<&mut WJob> {
    if key.1 != 0 || jobs.contains_key(&key) {
        return jobs.get_mut(&key).into_iter().collect();
    }
    jobs.range_mut((key.0, 0)..=(key.0, u32::MAX))
        .map(|(_, j)| j)
        .collect()
}

fn release(running: &mut BTreeMap<String, i64>, hosts: &[String]) {
    for h in hosts {
        if let Some(n) = running.get_mut(h) {
            *n = (*n - 1).max(0);
        }
    }
}
