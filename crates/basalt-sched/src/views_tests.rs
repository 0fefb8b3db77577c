//! The query views hold what the core decides for each row: shown state, position, window
//! state, slot counts, host status; and list what `query` and the configuration list.

use super::tests::{T0, alice, cmd, up};
use super::*;

/// Six jobs submitted and scheduled (one runs), and a query of three of them and an id
/// that does not exist, out of listing order.
fn six_jobs_and_a_query() -> (Sched, JobQuery) {
    let mut s = up();
    for c in ["a", "b", "c", "d", "e", "f"] {
        s.submit(T0, &alice(), cmd(c)).expect("submit");
    }
    s.schedule(T0);
    s.take_effects();
    let q = JobQuery {
        ids: vec![(6, None), (5, None), (1, None), (99, Some(2))],
        ..Default::default()
    };
    (s, q)
}

#[test]
fn jobs_view_carries_state_and_position_in_listing_order() {
    let (s, q) = six_jobs_and_a_query();
    let v = s.jobs_view(&q);
    let rows: Vec<(u64, JobState, u32)> = v
        .jobs
        .iter()
        .map(|r| (r.job.id, r.state, r.position))
        .collect();
    assert_eq!(
        rows,
        vec![
            (1, JobState::Run, 0),
            (5, JobState::Pend, 1),
            (6, JobState::Pend, 2),
        ]
    );
    assert_eq!(v.not_found, vec![(99, Some(2))]);
    for r in &v.jobs {
        assert_eq!(r.state, s.shown_state(&s.jobs[&r.job.key()]));
        assert_eq!(r.job, *s.jobs[&r.job.key()]);
    }
}

/// A listing in pages (`JobsPages`): the keys in listing order with the ids not found,
/// then each page as the jobs are when it is made — the same rows as `jobs_view`, and a
/// job gone since left out.
#[test]
fn job_keys_and_pages_list_what_jobs_view_lists() {
    let (mut s, q) = six_jobs_and_a_query();
    let (keys, not_found) = s.job_keys(&q);
    assert_eq!(keys, vec![(1, 0), (5, 0), (6, 0)]);
    assert_eq!(not_found, vec![(99, Some(2))]);
    let row = |r: &JobView| (r.job.id, r.state, r.position);
    let whole: Vec<_> = s.jobs_view(&q).jobs.iter().map(row).collect();
    let paged: Vec<_> = keys
        .chunks(2)
        .flat_map(|page| s.jobs_page(page).jobs)
        .map(|r| row(&r))
        .collect();
    assert_eq!(paged, whole);
    // Job 5 is cleaned away between two pages: the second page leaves it out.
    s.jobs.remove(&(5, 0));
    let second: Vec<u64> = s
        .jobs_page(&keys[1..])
        .jobs
        .iter()
        .map(|r| r.job.id)
        .collect();
    assert_eq!(second, vec![6]);
}

#[test]
fn queues_view_by_priority_with_counts_and_unknown_names() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    let v = s.queues_view(&[]);
    let names: Vec<&str> = v.queues.iter().map(|q| q.queue.name.as_str()).collect();
    assert_eq!(names, vec!["high", "normal"]);
    let normal = &v.queues[1];
    assert!(normal.is_default && normal.windows_open);
    assert_eq!(normal.counts, s.queue_counts("normal"));
    assert_eq!(normal.counts.0, 1);
    assert!(!v.queues[0].is_default);
    let v = s.queues_view(&["normal".to_string(), "nosuch".to_string()]);
    assert_eq!(v.queues.len(), 1);
    assert_eq!(v.not_found, vec!["nosuch".to_string()]);
    assert_eq!(v.config_problem, "");
}

#[test]
fn hosts_view_carries_status_and_counts() {
    let mut s = up();
    s.submit(T0, &alice(), cmd("a")).expect("submit");
    s.schedule(T0);
    s.take_effects();
    s.sbd_hello(T0 + 14_000, "hostB", &[]);
    s.tick(T0 + 16_000);
    let v = s.hosts_view(&[]);
    let rows: Vec<(&str, HostStatus)> = v
        .hosts
        .iter()
        .map(|h| (h.host.name.as_str(), h.status))
        .collect();
    assert_eq!(
        rows,
        vec![("hostA", HostStatus::Unreach), ("hostB", HostStatus::Ok)]
    );
    assert_eq!(v.hosts[0].counts, s.host_counts("hostA"));
    assert_eq!(v.hosts[0].counts.0, 1);
    let v = s.hosts_view(&["hostb".to_string(), "nosuch".to_string()]);
    assert_eq!(v.hosts.len(), 1);
    assert_eq!(v.not_found, vec!["nosuch".to_string()]);
}
