//! `scale.md`: the figures as a Markdown table, one column per size, with the growth
//! from the previous size where a line has one number, and each failed phase's reason
//! below it.

use super::{Probe, Row};
use crate::bench::fmt_num;
use std::fmt::Write as _;

/// One value of a cell.
enum Val {
    /// A number and its unit.
    Num(Option<f64>, &'static str),
    /// A count (a whole number).
    Count(Option<usize>),
    Text(Option<String>),
}

fn num(v: Option<f64>, unit: &'static str) -> Val {
    Val::Num(v, unit)
}

fn count(v: Option<usize>) -> Val {
    Val::Count(v)
}

fn probe(p: &Option<Probe>) -> Val {
    Val::Text(p.as_ref().map(|p| {
        format!(
            "{} answered, {} failed, longest {} s without an answer",
            p.answered,
            p.failed,
            fmt_num(p.longest_secs)
        )
    }))
}

impl Val {
    fn text(&self) -> Option<String> {
        match self {
            Val::Num(v, unit) => v.map(|v| format!("{} {unit}", fmt_num(v))),
            // Thousands separators from 10,000 (fmt_num), never decimals.
            Val::Count(n) => n.map(|n| {
                if n >= 10_000 {
                    fmt_num(n as f64)
                } else {
                    n.to_string()
                }
            }),
            Val::Text(t) => t.clone(),
        }
    }
}

type Get = fn(&Row) -> Vec<Val>;

/// (line, the phase that measures it, its values).
const LINES: &[(&str, &str, Get)] = &[
    ("master LIM CPU, idle", "idle", |r| {
        vec![num(r.lim_cpu_pct, "%")]
    }),
    ("mbatchd CPU, idle", "idle", |r| {
        vec![num(r.mbatchd_cpu_pct, "%")]
    }),
    ("hollow processes' CPU, idle", "idle", |r| {
        vec![num(r.hollow_cpu_pct, "%")]
    }),
    ("master LIM / mbatchd RSS, idle", "idle", |r| {
        vec![num(r.lim_rss_mb, "MB"), num(r.mbatchd_rss_mb, "MB")]
    }),
    ("hollow processes' RSS", "idle", |r| {
        vec![num(r.hollow_rss_mb, "MB")]
    }),
    ("`lsload` / `lshosts`", "idle", |r| {
        vec![num(r.lsload_ms, "ms"), num(r.lshosts_ms, "ms")]
    }),
    ("`bhosts`", "idle", |r| vec![num(r.bhosts_ms, "ms")]),
    (
        "throughput: jobs of `sleep 1` (arrays of 1,000)",
        "throughput",
        |r| vec![count(r.tput_jobs)],
    ),
    ("throughput: their submission", "throughput", |r| {
        vec![num(r.tput_submit_secs, "s")]
    }),
    (
        "throughput: first submission → last finish",
        "throughput",
        |r| vec![num(r.tput_secs, "s")],
    ),
    (
        "throughput: rate over it (goal ≥ 5,000 at 10,000)",
        "throughput",
        |r| vec![num(r.tput_rate, "jobs/s")],
    ),
    (
        "throughput: sustained rate (10 % → 90 % of finishes)",
        "throughput",
        |r| vec![num(r.tput_sustained_rate, "jobs/s")],
    ),
    (
        "throughput: lsb.acct, each once and DONE",
        "throughput",
        |r| {
            vec![Val::Text(r.tput_acct.as_ref().map(|s| {
                if r.tput_acct_ok == Some(true) {
                    format!("ok: {s}")
                } else {
                    format!("FAILED: {s}")
                }
            }))]
        },
    ),
    (
        "host loss: hosts lost at once / jobs running on them",
        "hostloss",
        |r| vec![count(r.lost_hosts), count(r.lost_running)],
    ),
    (
        "host loss: all `unreach`/`unavail` in `bhosts` (goal ≤ 30 s)",
        "hostloss",
        |r| vec![num(r.lost_bhosts_secs, "s")],
    ),
    ("host loss: all `unavail` in `lsload`", "hostloss", |r| {
        vec![num(r.lost_lsload_secs, "s")]
    }),
    (
        "host loss: none of their jobs `RUN`/`UNKWN` (after BASALT_HOST_LOST_GRACE, 60 s)",
        "hostloss",
        |r| vec![num(r.lost_jobs_secs, "s")],
    ),
    ("host loss: their jobs `EXIT` / requeued", "hostloss", |r| {
        vec![count(r.lost_jobs_exit), count(r.lost_jobs_requeued)]
    }),
    ("host loss: other hosts disturbed", "hostloss", |r| {
        let mut v = vec![count(r.lost_others_disturbed)];
        if !r.lost_others_seen.is_empty() {
            v.push(Val::Text(Some(r.lost_others_seen.join(", "))));
        }
        v
    }),
    (
        "pending jobs (arrays of 1,000, queue inactive)",
        "pending",
        |r| vec![count(r.pending_jobs)],
    ),
    (
        "pending: submission (goal ≤ 60 s for 1,000,000)",
        "pending",
        |r| vec![num(r.pending_submit_secs, "s")],
    ),
    (
        "mbatchd RSS before / with them (goal ≤ 1,200 MB)",
        "pending",
        |r| {
            vec![
                num(r.mbatchd_rss_before_mb, "MB"),
                num(r.mbatchd_rss_pending_mb, "MB"),
            ]
        },
    ),
    ("`bjobs -u all` first line (goal ≤ 1 s)", "pending", |r| {
        vec![num(r.bjobs_first_secs, "s")]
    }),
    (
        "`bjobs -u all` whole listing (goal ≤ 15 s) / its lines",
        "pending",
        |r| vec![num(r.bjobs_all_secs, "s"), count(r.bjobs_lines)],
    ),
    ("`bqueues` with them (goal ≤ 200 ms)", "pending", |r| {
        vec![num(r.bqueues_pending_ms, "ms")]
    }),
    (
        "`bsub` p50 (goal ≤ 20 ms) / p90, with them",
        "pending",
        |r| vec![num(r.bsub_p50_ms, "ms"), num(r.bsub_p90_ms, "ms")],
    ),
    (
        "`badmin reconfig` returns / mbatchd answers again (goal done ≤ 10 s)",
        "reconfig",
        |r| vec![num(r.reconfig_secs, "s"), num(r.reconfig_done_secs, "s")],
    ),
    (
        "`bqueues` in a loop from `badmin reconfig` until answered again",
        "reconfig",
        |r| vec![probe(&r.reconfig_bqueues)],
    ),
    ("`bsub` in a loop likewise", "reconfig", |r| {
        vec![probe(&r.reconfig_bsub)]
    }),
    (
        "mbatchd kill -9 → submission acknowledged (goal ≤ 5 s)",
        "mbdkill",
        |r| vec![num(r.mbdkill_secs, "s")],
    ),
    (
        "master host kill -9 → submission acknowledged by hostB (goal ≤ 5 s)",
        "failover",
        |r| vec![num(r.failover_secs, "s")],
    ),
];

/// A cell: its values joined by " / ", "—" for those not measured, and why when none
/// was: the phase failed or did not run.
fn cell(r: &Row, phase: &str, vals: &[Val]) -> String {
    if vals.iter().all(|v| v.text().is_none()) {
        return if r.up_secs.is_none() {
            "—".into()
        } else if r.failed.contains_key(phase) || r.failed.contains_key("workload") {
            "— (failed)".into()
        } else if r.skipped.contains(&phase) {
            "— (not run)".into()
        } else {
            "—".into()
        };
    }
    vals.iter()
        .map(|v| v.text().unwrap_or_else(|| "—".into()))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The growth of a line of one measured number from the previous size: ` (×2.5)`
/// (not of counts: sizes the options set).
fn growth(prev: Option<&Row>, r: &Row, get: Get) -> String {
    let one = |r: &Row| match get(r).as_slice() {
        [Val::Num(Some(v), _)] => Some(*v),
        _ => None,
    };
    match (prev.and_then(one), one(r)) {
        (Some(a), Some(b)) if a > 0.0 => format!(" (×{})", fmt_num(b / a)),
        _ => String::new(),
    }
}

/// The results as a Markdown table, one column per size, then the failures.
pub(super) fn table(rows: &[Row]) -> String {
    let mut s = String::from("| hollow hosts |");
    for r in rows {
        let _ = write!(s, " {} |", r.hollow);
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(rows.len()));
    s.push('\n');
    s.push_str("| `up` until every host is `ok` |");
    for r in rows {
        let v = r.up_secs.map_or_else(
            || format!("not up: {}", r.why_not.as_deref().unwrap_or("?")),
            |v| format!("{} s", fmt_num(v)),
        );
        let _ = write!(s, " {} |", v.replace('|', "/").replace('\n', " "));
    }
    s.push('\n');
    for (name, phase, get) in LINES {
        let _ = write!(s, "| {name} |");
        for (i, r) in rows.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| &rows[p]);
            let v = cell(r, phase, &get(r)) + &growth(prev, r, *get);
            let _ = write!(s, " {} |", v.replace('|', "/").replace('\n', " "));
        }
        s.push('\n');
    }
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r.failed.iter().map(move |(phase, why)| {
                format!(
                    "* {} hollow hosts, {phase}: {}",
                    r.hollow,
                    why.replace('\n', " ")
                )
            })
        })
        .collect();
    if !failures.is_empty() {
        s.push_str("\nFailed phases:\n\n");
        for f in failures {
            s.push_str(&f);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_column_per_size_its_growth_and_says_why_a_figure_is_missing() {
        let mut failed = std::collections::BTreeMap::new();
        failed.insert(
            "hostloss",
            "timed out after 120s waiting for the lost hosts".to_owned(),
        );
        let rows = vec![
            Row {
                hollow: 100,
                up_secs: Some(1.04),
                lim_cpu_pct: Some(4.0),
                lsload_ms: Some(16.2),
                tput_rate: Some(400.0),
                tput_jobs: Some(5000),
                tput_acct_ok: Some(true),
                tput_acct: Some("5000 of 5000 finished exactly once, DONE".into()),
                skipped: vec!["failover"],
                reconfig_bqueues: Some(Probe {
                    answered: 40,
                    failed: 0,
                    longest_secs: 0.25,
                }),
                ..Row::default()
            },
            Row {
                hollow: 300,
                up_secs: Some(2.0),
                lim_cpu_pct: Some(10.0),
                tput_rate: Some(1000.0),
                tput_jobs: Some(20_000),
                tput_acct_ok: Some(false),
                tput_acct: Some(
                    "4999 of 5000 finished exactly once, DONE; 1 never finished (3[7])".into(),
                ),
                failed,
                ..Row::default()
            },
            Row {
                hollow: 1000,
                why_not: Some("the cluster did not come up within 40 s".into()),
                ..Row::default()
            },
        ];
        let t = table(&rows);
        assert!(
            t.starts_with("| hollow hosts | 100 | 300 | 1000 |\n|---|---|---|---|\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "| `up` until every host is `ok` | 1.04 s | 2.00 s | not up: the cluster did not come up within 40 s |"
            ),
            "{t}"
        );
        assert!(
            t.contains("| master LIM CPU, idle | 4.00 % | 10.0 % (×2.50) | — |"),
            "{t}"
        );
        assert!(
            t.contains("| throughput: rate over it (goal ≥ 5,000 at 10,000) | 400 jobs/s | 1000 jobs/s (×2.50) | — |"),
            "{t}"
        );
        assert!(
            t.contains("| throughput: jobs of `sleep 1` (arrays of 1,000) | 5000 | 20,000 | — |"),
            "{t}"
        );
        assert!(
            t.contains("| throughput: lsb.acct, each once and DONE | ok: 5000 of 5000 finished exactly once, DONE | FAILED: 4999 of 5000 finished exactly once, DONE; 1 never finished (3[7]) | — |"),
            "{t}"
        );
        assert!(
            t.contains("| `lsload` / `lshosts` | 16.2 ms / — | — | — |"),
            "{t}"
        );
        assert!(
            t.contains("| host loss: all `unavail` in `lsload` | — | — (failed) | — |"),
            "{t}"
        );
        assert!(
            t.contains("| master host kill -9 → submission acknowledged by hostB (goal ≤ 5 s) | — (not run) | — | — |"),
            "{t}"
        );
        assert!(
            t.contains("| `bqueues` in a loop from `badmin reconfig` until answered again | 40 answered, 0 failed, longest 0.250 s without an answer | — | — |"),
            "{t}"
        );
        assert!(
            t.ends_with("Failed phases:\n\n* 300 hollow hosts, hostloss: timed out after 120s waiting for the lost hosts\n"),
            "{t}"
        );
    }
}
