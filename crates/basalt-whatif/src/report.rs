//! What the simulation says against what happened (or against a baseline
//! configuration's simulation): per queue, per user and overall — jobs, wait-time
//! percentiles, bounded slowdown, utilisation, preemptions and suspensions — as a table
//! or JSON — and each side's timeline of slots pending and in use, for the plot.

use crate::sim::{Sample, SimResult};
use crate::workload::{WJob, Workload};
use basalt_sched::Event;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Run times shorter than this count as this long in the bounded slowdown.
pub const SLOWDOWN_BOUND_SECS: f64 = 10.0;

/// Figures of a set of jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub jobs: u32,
    /// Jobs that started.
    pub started: u32,
    /// Wait (submission to first start) of the jobs that started, seconds.
    pub wait_p50: f64,
    pub wait_p90: f64,
    pub wait_p99: f64,
    pub wait_max: f64,
    pub wait_mean: f64,
    /// Mean bounded slowdown: (wait + run) / max(run, 10 s).
    pub slowdown: f64,
    pub preempted: u32,
    pub suspended: u32,
    /// Slot-seconds run.
    pub slot_secs: f64,
}

/// One side of the comparison: what happened, or what a configuration would do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    pub label: String,
    pub all: Stats,
    pub queues: BTreeMap<String, Stats>,
    pub users: BTreeMap<String, Stats>,
    /// Slot-seconds run over the slots of the hosts times the span from the first
    /// submission to the last end.
    pub utilisation: f64,
    pub slots: u32,
    /// Slots pending and in use over time (about [`crate::SimOptions::samples`] points):
    /// the simulation's samples, or what the log recorded ([`recorded_timeline`]).
    pub timeline: Vec<Sample>,
}

/// A job as one side saw it: when it started (None: never), its slots, preemptions and
/// suspensions.
struct Seen {
    start: Option<i64>,
    slots: u32,
    preempted: u32,
    suspended: u32,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn stats<'a>(jobs: impl Iterator<Item = (&'a WJob, Seen)>) -> Stats {
    let mut st = Stats::default();
    let mut waits = Vec::new();
    let mut slow = 0.0;
    for (j, seen) in jobs {
        st.jobs += 1;
        st.preempted += seen.preempted;
        st.suspended += seen.suspended;
        let Some(start) = seen.start else { continue };
        st.started += 1;
        let wait = (start - j.submit).max(0) as f64;
        waits.push(wait);
        let run = j.run as f64;
        slow += (wait + run) / run.max(SLOWDOWN_BOUND_SECS);
        st.slot_secs += run * f64::from(seen.slots.max(1));
    }
    waits.sort_by(f64::total_cmp);
    if !waits.is_empty() {
        st.wait_p50 = percentile(&waits, 50.0);
        st.wait_p90 = percentile(&waits, 90.0);
        st.wait_p99 = percentile(&waits, 99.0);
        st.wait_max = waits[waits.len() - 1];
        st.wait_mean = waits.iter().sum::<f64>() / waits.len() as f64;
        st.slowdown = slow / waits.len() as f64;
    }
    st
}

fn side(label: &str, w: &Workload, slots: u32, seen: impl Fn(&WJob) -> Seen) -> Side {
    let jobs: Vec<&WJob> = w.reported().collect();
    let mut queues: BTreeMap<String, Vec<&WJob>> = BTreeMap::new();
    let mut users: BTreeMap<String, Vec<&WJob>> = BTreeMap::new();
    for j in &jobs {
        queues.entry(j.queue.clone()).or_default().push(j);
        users.entry(j.user.clone()).or_default().push(j);
    }
    let of = |js: &[&WJob]| stats(js.iter().map(|j| (*j, seen(j))));
    let all = of(&jobs);
    let first = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let last = jobs
        .iter()
        .filter_map(|j| seen(j).start.map(|s| s + j.run))
        .max()
        .unwrap_or(first);
    let span = (last - first).max(1) as f64;
    Side {
        label: label.to_owned(),
        utilisation: all.slot_secs / (f64::from(slots.max(1)) * span),
        queues: queues.iter().map(|(q, js)| (q.clone(), of(js))).collect(),
        users: users.iter().map(|(u, js)| (u.clone(), of(js))).collect(),
        all,
        slots,
        timeline: Vec::new(),
    }
}

/// What the log recorded, its timeline sampled at about `samples` points.
pub fn recorded(w: &Workload, samples: usize) -> Side {
    let slots = w.host_peak.values().sum();
    let mut s = side("recorded", w, slots, |j| Seen {
        start: j.actual.first_start,
        slots: j.actual.slots,
        preempted: j.actual.preempted,
        suspended: j.actual.suspended,
    });
    s.timeline = recorded_timeline(w, samples);
    s
}

/// The slots pending and in use that the log recorded, every `(last - first) / samples`
/// seconds (at least 1) from the log's first time to its last, as the simulation samples
/// its own: a sample at `t` counts what happened up to and including `t`. The jobs are
/// those the simulation runs ([`Workload::simulated`]). A job pends with the slots it
/// asked for from its submission to its first start (or its end, when it was killed
/// pending; or the end of the window), and runs on the slots of its start from its first
/// start to its end (or the end of the window).
pub fn recorded_timeline(w: &Workload, samples: usize) -> Vec<Sample> {
    let asked: HashMap<u64, u32> = w
        .news
        .iter()
        .filter_map(|ev| match ev {
            Event::JobNew { job_id, sub, .. } => Some((*job_id, sub.num_processors.max(1))),
            _ => None,
        })
        .collect();
    // (time, change of the pending slots, change of the running slots)
    let mut changes: Vec<(i64, i64, i64)> = Vec::new();
    for j in w.simulated() {
        let want = i64::from(asked.get(&j.key.0).copied().unwrap_or(1));
        let a = &j.actual;
        changes.push((j.submit, want, 0));
        if let Some(t) = a.first_start.or(a.end) {
            changes.push((t.max(j.submit), -want, 0));
        }
        if let Some(start) = a.first_start {
            let n = i64::from(a.slots.max(1));
            changes.push((start, 0, n));
            if let Some(end) = a.end {
                changes.push((end.max(start), 0, -n));
            }
        }
    }
    changes.sort_unstable_by_key(|c| c.0);
    let span = (w.last - w.first).max(1);
    let step = (span / samples.max(1) as i64).max(1);
    let count = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity((span / step) as usize + 1);
    let (mut pending, mut running, mut next) = (0i64, 0i64, 0usize);
    let mut t = w.first;
    while t <= w.last {
        while let Some(&(_, p, r)) = changes.get(next).filter(|c| c.0 <= t) {
            pending += p;
            running += r;
            next += 1;
        }
        out.push(Sample {
            t,
            pending: count(pending),
            running_slots: count(running),
        });
        t += step;
    }
    out
}

/// What a simulation did.
pub fn simulated(label: &str, w: &Workload, r: &SimResult) -> Side {
    let mut side = side(label, w, r.slots_total, |j| {
        let s = r.jobs.get(&j.key);
        Seen {
            start: s.and_then(|s| s.start),
            slots: s.map_or(1, |s| s.slots),
            preempted: s.map_or(0, |s| s.preempted),
            suspended: s.map_or(0, |s| s.suspended),
        }
    });
    side.timeline = r.samples.clone();
    side
}

/// How far a simulation of the unchanged configuration is from what the log recorded:
/// jobs whose start differs by more than a second, and by how much on average.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fidelity {
    pub compared: u32,
    pub differ: u32,
    pub mean_abs_secs: f64,
    pub same_order: bool,
}

pub fn fidelity(w: &Workload, r: &SimResult) -> Fidelity {
    let mut f = Fidelity::default();
    let mut total = 0.0;
    let mut recorded: Vec<(i64, u64, u32)> = Vec::new();
    for j in w.reported() {
        let (Some(a), Some(b)) = (
            j.actual.first_start,
            r.jobs.get(&j.key).and_then(|s| s.start),
        ) else {
            continue;
        };
        f.compared += 1;
        if (a - b).abs() > 1 {
            f.differ += 1;
        }
        total += (a - b).abs() as f64;
        recorded.push((a, j.key.0, j.key.1));
    }
    if f.compared > 0 {
        f.mean_abs_secs = total / f64::from(f.compared);
    }
    recorded.sort_unstable();
    let order: Vec<(u64, u32)> = recorded.iter().map(|&(_, id, idx)| (id, idx)).collect();
    let sim: Vec<(u64, u32)> = r
        .dispatch_order
        .iter()
        .copied()
        .filter(|k| order.contains(k))
        .collect();
    f.same_order = sim == order;
    f
}

/// The whole answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub before: Side,
    pub after: Side,
    pub jobs: u32,
    pub not_simulated: u32,
    pub remapped: BTreeMap<String, u32>,
    /// Jobs whose `-w` condition named a job the logs do not have (dropped).
    pub deps_dropped: u32,
    /// bswitch, bmod -q and queue-control records naming a queue the configuration does
    /// not have (not replayed).
    pub controls_skipped: u32,
    /// Against the log: how far the unchanged configuration would be (None when the
    /// comparison is against a baseline configuration).
    pub fidelity: Option<Fidelity>,
}

fn cell(a: f64, b: f64) -> String {
    format!("{} -> {}", round(a), round(b))
}

fn round(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn rows(out: &mut String, kind: &str, a: &BTreeMap<String, Stats>, b: &BTreeMap<String, Stats>) {
    for (name, x) in a {
        let y = b.get(name).cloned().unwrap_or_default();
        row(out, &format!("{kind} {name}"), x, &y);
    }
}

fn row(out: &mut String, name: &str, x: &Stats, y: &Stats) {
    let _ = writeln!(
        out,
        "{name:<18} {:>6} {:>15} {:>15} {:>17} {:>13} {:>9}",
        x.jobs,
        cell(x.wait_p50, y.wait_p50),
        cell(x.wait_p90, y.wait_p90),
        cell(x.wait_max, y.wait_max),
        cell(x.slowdown, y.slowdown),
        format!("{} -> {}", x.preempted, y.preempted),
    );
}

impl Comparison {
    /// The terminal table: waits in seconds, `before -> after`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} jobs compared ({} -> {}); waits in seconds, slowdown bounded at {} s",
            self.jobs, self.before.label, self.after.label, SLOWDOWN_BOUND_SECS
        );
        let _ = writeln!(
            out,
            "{:<18} {:>6} {:>15} {:>15} {:>17} {:>13} {:>9}",
            "", "JOBS", "WAIT_P50", "WAIT_P90", "WAIT_MAX", "SLOWDOWN", "PREEMPT"
        );
        row(&mut out, "all", &self.before.all, &self.after.all);
        rows(&mut out, "queue", &self.before.queues, &self.after.queues);
        rows(&mut out, "user", &self.before.users, &self.after.users);
        let _ = writeln!(
            out,
            "utilisation {:.1} % of {} slots -> {:.1} % of {} slots",
            self.before.utilisation * 100.0,
            self.before.slots,
            self.after.utilisation * 100.0,
            self.after.slots
        );
        if self.not_simulated > 0 {
            let _ = writeln!(
                out,
                "{} job(s) still pending at the end of the log are not simulated",
                self.not_simulated
            );
        }
        for (q, n) in &self.remapped {
            let _ = writeln!(
                out,
                "{n} job(s) of queue <{q}>, which the configuration does not have, ran in its default queue"
            );
        }
        if self.deps_dropped > 0 {
            let _ = writeln!(
                out,
                "{} job(s) depend on jobs older than the logs: their conditions were taken as satisfied",
                self.deps_dropped
            );
        }
        if self.controls_skipped > 0 {
            let _ = writeln!(
                out,
                "{} bswitch/bmod/queue-control record(s) name queues the configuration does not have: not replayed",
                self.controls_skipped
            );
        }
        if let Some(f) = &self.fidelity {
            let _ = writeln!(
                out,
                "the recorded configuration, replayed: {} of {} starts differ by more than 1 s \
                 (mean {:.1} s), dispatch order {}; differences come from timing (the log \
                 has seconds, the cluster reacts in milliseconds) and what the log does not \
                 record (load indices, host failures, sbatchd restarts)",
                f.differ,
                f.compared,
                f.mean_abs_secs,
                if f.same_order {
                    "the same"
                } else {
                    "different"
                }
            );
        }
        out
    }

    /// The same as JSON.
    pub fn json(&self) -> serde_json::Value {
        let st = |s: &Stats| {
            serde_json::json!({
                "jobs": s.jobs, "started": s.started,
                "wait_p50": s.wait_p50, "wait_p90": s.wait_p90, "wait_p99": s.wait_p99,
                "wait_max": s.wait_max, "wait_mean": s.wait_mean,
                "slowdown": s.slowdown, "preempted": s.preempted, "suspended": s.suspended,
                "slot_seconds": s.slot_secs,
            })
        };
        let side = |s: &Side| {
            serde_json::json!({
                "label": s.label,
                "all": st(&s.all),
                "queues": s.queues.iter().map(|(k, v)| (k.clone(), st(v))).collect::<serde_json::Map<_, _>>(),
                "users": s.users.iter().map(|(k, v)| (k.clone(), st(v))).collect::<serde_json::Map<_, _>>(),
                "utilisation": s.utilisation,
                "slots": s.slots,
            })
        };
        serde_json::json!({
            "jobs": self.jobs,
            "not_simulated": self.not_simulated,
            "remapped": self.remapped,
            "deps_dropped": self.deps_dropped,
            "controls_skipped": self.controls_skipped,
            "before": side(&self.before),
            "after": side(&self.after),
            "fidelity": self.fidelity.as_ref().map(|f| serde_json::json!({
                "compared": f.compared, "differ": f.differ,
                "mean_abs_seconds": f.mean_abs_secs, "same_order": f.same_order,
            })),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_sched::Submission;

    const T0: i64 = 1_800_000_000;

    /// (id, submit offset, slots asked, first start, end, slots of the start)
    type Job = (u64, i64, u32, Option<i64>, Option<i64>, u32);

    /// Jobs with a window of 300 s.
    fn workload(jobs: &[Job]) -> Workload {
        let mut w = Workload::default();
        for &(id, at, asked, start, end, slots) in jobs {
            let sub = Submission {
                user: "ann".into(),
                queue: "normal".into(),
                num_processors: asked,
                max_processors: asked,
                ..Default::default()
            };
            w.add_job(T0 + at, id, sub, 0);
            if let Some(j) = w.jobs.get_mut(&(id, 0)) {
                j.actual.first_start = start.map(|s| T0 + s);
                j.actual.last_start = j.actual.first_start;
                j.actual.end = end.map(|e| T0 + e);
                j.actual.slots = slots;
                j.left_pending = start.is_none() && end.is_none();
            }
        }
        w.first = T0;
        w.last = T0 + 300;
        w
    }

    /// Job 1 (2 slots) starts at once and ends at 100; job 2 waits from 10 to 50 and runs
    /// to 200; job 3 is killed pending at 80; job 4 waits from 30 to 150 and runs to the
    /// end of the log; job 5 is still pending at the end (not simulated, not counted).
    #[test]
    fn the_recorded_timeline_counts_the_slots_pending_and_running_at_each_sample() {
        let w = workload(&[
            (1, 0, 2, Some(0), Some(100), 2),
            (2, 10, 1, Some(50), Some(200), 1),
            (3, 20, 1, None, Some(80), 0),
            (4, 30, 1, Some(150), None, 1),
            (5, 40, 4, None, None, 0),
        ]);
        let tl = recorded_timeline(&w, 30);
        assert_eq!(tl.len(), 31, "every 10 s from 0 to 300 inclusive");
        let at = |off: i64| {
            let s = tl.iter().find(|s| s.t == T0 + off).expect("sample");
            (s.pending, s.running_slots)
        };
        assert_eq!(at(0), (0, 2));
        assert_eq!(at(10), (1, 2));
        assert_eq!(at(20), (2, 2));
        assert_eq!(at(40), (3, 2), "job 5 is not counted");
        assert_eq!(at(50), (2, 3));
        assert_eq!(at(70), (2, 3));
        assert_eq!(at(80), (1, 3), "job 3 killed");
        assert_eq!(at(100), (1, 1), "job 1 ended");
        assert_eq!(at(150), (0, 2));
        assert_eq!(at(200), (0, 1));
        assert_eq!(at(300), (0, 1), "job 4 still running at the end");
        // The recorded side carries it; fewer samples, a longer step.
        let side = recorded(&w, 3);
        assert_eq!(
            side.timeline.iter().map(|s| s.t - T0).collect::<Vec<_>>(),
            vec![0, 100, 200, 300]
        );
        assert_eq!(side.timeline[1].running_slots, 1);
        // A job asking for 2 slots pends with 2.
        let w = workload(&[(1, 0, 2, Some(60), Some(120), 2)]);
        let tl = recorded_timeline(&w, 300);
        assert_eq!(tl.len(), 301);
        assert_eq!((tl[59].pending, tl[59].running_slots), (2, 0));
        assert_eq!((tl[60].pending, tl[60].running_slots), (0, 2));
        assert_eq!((tl[120].pending, tl[120].running_slots), (0, 0));
    }
}
