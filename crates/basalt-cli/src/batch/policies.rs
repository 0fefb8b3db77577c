//! bqueues -l's scheduling policies of a queue: preemption (seed 002), user-based
//! fairshare with LSF's `SHARE_INFO_FOR` tables (also bhpart's), and its slot pool
//! (seed 003).

use basalt_proto::mbatchd::QueueInfo;
use std::fmt::Write as _;

/// Every policy block of queue `q` (nothing for a queue without any); `recursive`
/// (`bqueues -r`): every level of a fairshare queue's share tree, else its top.
pub(crate) fn lines(q: &QueueInfo, recursive: bool) -> String {
    let mut out = preemption_lines(q);
    out.push_str(&fairshare_lines(q, recursive));
    out.push_str(&pool_lines(q));
    out
}

/// bqueues -l: LSF's `SCHEDULING POLICIES:` line (FAIRSHARE, PREEMPTIVE, PREEMPTABLE,
/// BACKFILL, EXCLUSIVE, NO_INTERACTIVE or ONLY_INTERACTIVE, those in force) and the
/// queue's preemption (seed 002) — its PREEMPTION as written, the queues it preempts and
/// those that preempt it (from PREEMPTION and the priorities), MAX_JOB_PREEMPT; nothing
/// for a queue with none of them.
fn preemption_lines(q: &QueueInfo) -> String {
    let mut out = String::new();
    let mut policies = Vec::new();
    if !q.fairshare.is_empty() {
        policies.push("FAIRSHARE");
    }
    if !q.preempts.is_empty() {
        policies.push("PREEMPTIVE");
    }
    if !q.preempted_by.is_empty() {
        policies.push("PREEMPTABLE");
    }
    if q.backfill {
        policies.push("BACKFILL");
    }
    if q.exclusive {
        policies.push("EXCLUSIVE");
    }
    match q.interactive.as_str() {
        "NO" => policies.push("NO_INTERACTIVE"),
        "ONLY" => policies.push("ONLY_INTERACTIVE"),
        _ => {}
    }
    if !policies.is_empty() {
        let _ = writeln!(out, "\nSCHEDULING POLICIES:  {}", policies.join("  "));
    }
    if !q.preemption.is_empty() {
        let _ = writeln!(out, "PREEMPTION = {}", q.preemption);
    }
    if !q.preempts.is_empty() {
        let _ = writeln!(out, "PREEMPTS QUEUES:  {}", q.preempts.join(" "));
    }
    if !q.preempted_by.is_empty() {
        let _ = writeln!(out, "PREEMPTED BY QUEUES:  {}", q.preempted_by.join(" "));
    }
    if q.max_job_preempt >= 0 && !(q.preempts.is_empty() && q.preempted_by.is_empty()) {
        let _ = writeln!(out, "MAX_JOB_PREEMPT:  {}", q.max_job_preempt);
    }
    out
}

/// bqueues -l of a queue in a slot pool (queue-based fairshare): its pool and share, and
/// how many of the pool's slots it may use now, uses, and has used.
fn pool_lines(q: &QueueInfo) -> String {
    if q.slot_pool.is_empty() {
        return String::new();
    }
    format!(
        "\nSLOT_POOL: {}\nSLOT_SHARE: {}%\nPOOL_SLOTS: {}  SLOTS_ALLOWED: {}  SLOTS_IN_USE: {}  ACCUMULATED: {:.1} slot-hours\n",
        q.slot_pool, q.slot_share, q.pool_slots, q.pool_target, q.pool_used, q.pool_accumulated
    )
}

/// bqueues -l of a fairshare queue: its USER_SHARES, then LSF's SHARE_INFO_FOR table of
/// the accounts under the top of its share tree; `recursive` (`bqueues -r`): also the
/// table under each group with a tree of its own, depth first.
fn fairshare_lines(q: &QueueInfo, recursive: bool) -> String {
    if q.fairshare.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let shares = q
        .fairshare
        .trim()
        .split_once('[')
        .and_then(|(_, rest)| rest.trim_end().strip_suffix(']'))
        .map_or(q.fairshare.trim(), str::trim);
    let _ = writeln!(out, "USER_SHARES:  {shares}");
    let levels = if recursive { q.share_info.len() } else { 1 };
    for info in q.share_info.iter().take(levels) {
        out.push_str(&share_table(info));
    }
    out
}

/// LSF's `SHARE_INFO_FOR` table of one node of a share tree (bqueues -l, bhpart); a
/// USER/GROUP wider than 12 characters is cut to `*` and its last 11.
pub(crate) fn share_table(info: &basalt_proto::mbatchd::ShareInfo) -> String {
    let mut out = format!(
        "\nSHARE_INFO_FOR: {}\n USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST\n",
        info.path
    );
    for r in &info.rows {
        // A name wider than its column is cut with LSF's `*`: the numbers stay under
        // their titles.
        let _ = writeln!(
            out,
            " {} {:>6} {:>9.3} {:>8} {:>9} {:>9.1} {:>9.0} {:>8.3}",
            super::text::col(&r.name, 12),
            r.shares,
            r.priority,
            r.started,
            r.reserved,
            r.cpu_time,
            r.run_time,
            r.adjust
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::batch::bqueues::tests::normal;
    use crate::batch::bqueues::{queues_long, queues_recursive};
    use basalt_proto::mbatchd::{ShareInfo, ShareRow};

    /// Issue 23: bqueues -l shows the preemption relationships.
    #[test]
    fn long_shows_the_preemption_relationships() {
        let mut high = normal();
        high.name = "high".into();
        high.preemption = "PREEMPTIVE[normal+1]".into();
        high.preempts = vec!["normal".into()];
        high.max_job_preempt = -1;
        let mut low = normal();
        low.preempted_by = vec!["high".into(), "normal".into()];
        low.max_job_preempt = 3;
        let got = queues_long(&[high, low]);
        assert!(
            got.contains(
                "\nSCHEDULING POLICIES:  PREEMPTIVE\nPREEMPTION = PREEMPTIVE[normal+1]\nPREEMPTS QUEUES:  normal\n"
            ),
            "{got}"
        );
        assert!(
            got.contains(
                "\nSCHEDULING POLICIES:  PREEMPTABLE\nPREEMPTED BY QUEUES:  high normal\nMAX_JOB_PREEMPT:  3\n"
            ),
            "{got}"
        );
        assert!(!queues_long(&[normal()]).contains("PREEMPT"));
    }

    /// Issue 24: bqueues -l of a queue in a slot pool.
    #[test]
    fn long_shows_a_pooled_queues_pool() {
        let mut q = normal();
        q.slot_pool = "p".into();
        q.slot_share = 50;
        q.pool_slots = 10;
        q.pool_target = 5;
        q.pool_used = 4;
        q.pool_accumulated = 1.25;
        let got = queues_long(&[q]);
        assert!(
            got.contains(
                "\nSLOT_POOL: p\nSLOT_SHARE: 50%\nPOOL_SLOTS: 10  SLOTS_ALLOWED: 5  SLOTS_IN_USE: 4  ACCUMULATED: 1.2 slot-hours\n"
            ),
            "{got}"
        );
        assert!(!queues_long(&[normal()]).contains("SLOT_POOL"));
    }

    /// Issue 24: bqueues -r of a fairshare queue — its policy, its USER_SHARES and LSF's
    /// SHARE_INFO_FOR table of each level of its share tree; issue 50 item 10: -l shows
    /// the top level only, as LSF's.
    #[test]
    fn long_shows_the_share_info_of_a_fairshare_queue() {
        let mut q = normal();
        q.fairshare = "USER_SHARES[[alice, 2] [team, 1]]".into();
        let row = |name: &str, shares, priority, started, cpu, run| ShareRow {
            name: name.into(),
            shares,
            priority,
            started,
            reserved: 0,
            cpu_time: cpu,
            run_time: run,
            adjust: 0.0,
        };
        q.share_info = vec![
            ShareInfo {
                path: "normal/".into(),
                rows: vec![
                    row("alice", 2, 0.222, 2, 12.5, 7200.0),
                    row("team", 1, 0.333, 0, 0.0, 0.0),
                ],
            },
            ShareInfo {
                path: "normal/team/".into(),
                rows: vec![row("bo", 1, 0.333, 0, 0.0, 0.0)],
            },
        ];
        let got = queues_recursive(&[q.clone()]);
        let want = "\nSCHEDULING POLICIES:  FAIRSHARE\nUSER_SHARES:  [alice, 2] [team, 1]\n\
            \nSHARE_INFO_FOR: normal/\n\
            \x20USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST\n\
            \x20alice             2     0.222        2         0      12.5      7200    0.000\n\
            \x20team              1     0.333        0         0       0.0         0    0.000\n\
            \nSHARE_INFO_FOR: normal/team/\n\
            \x20USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST\n\
            \x20bo                1     0.333        0         0       0.0         0    0.000\n";
        assert!(got.contains(want), "{got}");
        let long = queues_long(&[q]);
        assert!(long.contains("SHARE_INFO_FOR: normal/\n"), "{long}");
        assert!(!long.contains("SHARE_INFO_FOR: normal/team/"), "{long}");
        assert!(got.starts_with(&long[..long.find("SHARE_INFO_FOR").unwrap_or(0)]));
    }

    /// Issue 50 item 7: a row whose name is wider than the USER/GROUP column (the
    /// `(no share)` row of a user without a share, a long user name) pushed its numbers
    /// out from under their titles; the name is cut with LSF's `*` instead.
    #[test]
    fn item7_share_rows_line_up_under_their_titles_whatever_the_name() {
        let row = |name: &str, shares| ShareRow {
            name: name.into(),
            shares,
            priority: 0.5,
            started: 1,
            reserved: 0,
            cpu_time: 1.0,
            run_time: 2.0,
            adjust: 0.0,
        };
        let info = ShareInfo {
            path: "normal/".into(),
            rows: vec![
                row("al", 2),
                row("bob (no share)", 0),
                row("averyverylongname", 1),
            ],
        };
        let t = super::share_table(&info);
        let lines: Vec<&str> = t.lines().collect();
        let header = lines[2];
        assert!(header.starts_with(" USER/GROUP"), "{t}");
        // Each column's value ends where its title ends.
        let ends: Vec<usize> = header
            .match_indices(|c: char| c != ' ')
            .filter(|(i, _)| header[i + 1..].starts_with(' ') || i + 1 == header.len())
            .map(|(i, _)| i)
            .collect();
        for line in &lines[3..] {
            assert_eq!(line.len(), header.len(), "{t}");
            for &e in &ends[1..] {
                assert_ne!(line.as_bytes()[e], b' ', "column ending at {e}:\n{t}");
                assert!(
                    e + 1 == line.len() || line.as_bytes()[e + 1] == b' ',
                    "column ending at {e}:\n{t}"
                );
            }
        }
        assert!(lines[5].starts_with(" *erylongname "), "{t}");
    }
}
