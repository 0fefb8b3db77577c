//! What the simulation says against what happened (or against a baseline
//! configuration's simulation): per queue, per user and overall — jobs, wait-time
//! percentiles, bounded slowdown, utilisation, preemptions and suspensions — as a table
//! or JSON.

use crate::sim::SimResult;
use crate::workload::{WJob, Workload};
use std::collections::BTreeMap;
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
    let jobs: Vec<&WJob> = w.simulated().collect();
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
    }
}

/// What the log recorded.
pub fn recorded(w: &Workload) -> Side {
    let slots = w.host_peak.values().sum();
    side("recorded", w, slots, |j| Seen {
        start: j.actual.first_start,
        slots: j.actual.slots,
        preempted: j.actual.preempted,
        suspended: j.actual.suspended,
    })
}

/// What a simulation did.
pub fn simulated(label: &str, w: &Workload, r: &SimResult) -> Side {
    side(label, w, r.slots_total, |j| {
        let s = r.jobs.get(&j.key);
        Seen {
            start: s.and_then(|s| s.start),
            slots: s.map_or(1, |s| s.slots),
            preempted: s.map_or(0, |s| s.preempted),
            suspended: s.map_or(0, |s| s.suspended),
        }
    })
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
    for j in w.simulated() {
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
            "before": side(&self.before),
            "after": side(&self.after),
            "fidelity": self.fidelity.as_ref().map(|f| serde_json::json!({
                "compared": f.compared, "differ": f.differ,
                "mean_abs_seconds": f.mean_abs_secs, "same_order": f.same_order,
            })),
        })
    }
}
