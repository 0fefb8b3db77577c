//! mbatchd's Prometheus metrics (`GET /metrics` on `BASALT_MBD_METRICS_PORT`).
//!
//! Two kinds, so that the job path pays nothing it does not already do:
//! * histograms and a counter the owner thread (and the dispatch tasks) update as they
//!   go ([`MbdMetrics`]): a few atomic adds per loop iteration;
//! * gauges read from the core only when a scrape asks: the endpoint sends the owner a
//!   [`crate::msg::Msg::Metrics`] like any query, the owner answers with a [`Snapshot`]
//!   of the core's counters (per-queue slot counts, host statuses, MultiCluster links),
//!   and the text is rendered off the owner thread ([`render`]).

use basalt_runtime::metrics::prometheus_client::metrics::counter::Counter;
use basalt_runtime::metrics::prometheus_client::metrics::family::Family;
use basalt_runtime::metrics::prometheus_client::metrics::gauge::Gauge;
use basalt_runtime::metrics::prometheus_client::metrics::histogram::Histogram;
use basalt_runtime::metrics::{Registry, encode, latency_buckets};

/// The metrics updated as mbatchd works (clones share the same values).
#[derive(Debug, Clone)]
pub(crate) struct MbdMetrics {
    /// From a job's JOB_START being durable to sbatchd's answer to the start order.
    pub(crate) dispatch_latency: Histogram,
    /// One append of an iteration's events to lsb.events (with its fsync when synced).
    pub(crate) commit_latency: Histogram,
    /// One scheduling pass (`Sched::schedule`).
    pub(crate) sched_pass: Histogram,
    /// Events appended to lsb.events.
    pub(crate) events_appended: Counter,
}

impl Default for MbdMetrics {
    fn default() -> Self {
        MbdMetrics {
            dispatch_latency: Histogram::new(latency_buckets()),
            commit_latency: Histogram::new(latency_buckets()),
            sched_pass: Histogram::new(latency_buckets()),
            events_appended: Counter::default(),
        }
    }
}

/// The job states of the per-queue counts, in `Sched::queue_counts` order after NJOBS.
pub(crate) const JOB_STATES: [&str; 4] = ["pend", "run", "ssusp", "ususp"];

/// The bhosts statuses counted (every closed reason is `closed`).
pub(crate) const HOST_STATUSES: [&str; 4] = ["ok", "closed", "unavail", "unreach"];

/// What the owner reads from the core for a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// Each queue with its (pend, run, ssusp, ususp) slots, as bqueues counts them.
    pub(crate) queues: Vec<(String, [u32; 4])>,
    /// Hosts per status, in [`HOST_STATUSES`] order.
    pub(crate) hosts: [u32; 4],
    /// Each remote cluster and whether its link is up.
    pub(crate) mc_links: Vec<(String, bool)>,
    /// Jobs held in memory (pending, started and finished ones not yet cleaned).
    pub(crate) jobs_in_memory: u64,
    /// Whether lsb.events can be written (new work is accepted).
    pub(crate) log_writable: bool,
}

type Labels = Vec<(&'static str, String)>;

/// The text exposition of `m` and `snap`.
pub(crate) fn render(m: &MbdMetrics, snap: &Snapshot) -> String {
    let mut r = Registry::with_prefix("basalt_mbd");
    let jobs = Family::<Labels, Gauge>::default();
    for (queue, counts) in &snap.queues {
        for (state, n) in JOB_STATES.iter().zip(counts) {
            jobs.get_or_create(&vec![("queue", queue.clone()), ("state", (*state).into())])
                .set(i64::from(*n));
        }
    }
    r.register(
        "jobs",
        "Jobs per queue and state, counted in slots as bqueues counts them (PEND RUN SSUSP USUSP)",
        jobs,
    );
    let hosts = Family::<Labels, Gauge>::default();
    for (status, n) in HOST_STATUSES.iter().zip(snap.hosts) {
        hosts
            .get_or_create(&vec![("status", (*status).into())])
            .set(i64::from(n));
    }
    r.register("hosts", "Batch hosts per bhosts status", hosts);
    let in_memory = Gauge::<i64>::default();
    in_memory.set(i64::try_from(snap.jobs_in_memory).unwrap_or(i64::MAX));
    r.register(
        "jobs_in_memory",
        "Jobs mbatchd holds (pending, started, and finished ones not yet cleaned)",
        in_memory,
    );
    let writable = Gauge::<i64>::default();
    writable.set(i64::from(snap.log_writable));
    r.register(
        "event_log_writable",
        "1 while lsb.events can be written and new work is accepted, else 0",
        writable,
    );
    if !snap.mc_links.is_empty() {
        let links = Family::<Labels, Gauge>::default();
        for (cluster, up) in &snap.mc_links {
            links
                .get_or_create(&vec![("cluster", cluster.clone())])
                .set(i64::from(*up));
        }
        r.register(
            "mc_link_up",
            "MultiCluster: 1 while the link to the remote cluster is up, else 0",
            links,
        );
    }
    r.register(
        "dispatch_latency_seconds",
        "From a job's JOB_START being durable to sbatchd's answer to the start order",
        m.dispatch_latency.clone(),
    );
    r.register(
        "event_commit_seconds",
        "Appending one loop iteration's events to lsb.events (with the fsync when synced)",
        m.commit_latency.clone(),
    );
    r.register(
        "sched_pass_seconds",
        "One scheduling pass",
        m.sched_pass.clone(),
    );
    r.register(
        "events_appended",
        "Events appended to lsb.events",
        m.events_appended.clone(),
    );
    encode(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_every_metric_with_its_labels() {
        let m = MbdMetrics::default();
        m.dispatch_latency.observe(0.002);
        m.commit_latency.observe(0.0004);
        m.commit_latency.observe(0.0006);
        m.sched_pass.observe(0.00001);
        m.events_appended.inc_by(3);
        let snap = Snapshot {
            queues: vec![("normal".into(), [2, 1, 0, 0]), ("night".into(), [0; 4])],
            hosts: [1, 2, 0, 1],
            mc_links: vec![("east".into(), true)],
            jobs_in_memory: 3,
            log_writable: true,
        };
        let text = render(&m, &snap);
        for line in [
            "# TYPE basalt_mbd_jobs gauge",
            r#"basalt_mbd_jobs{queue="normal",state="pend"} 2"#,
            r#"basalt_mbd_jobs{queue="normal",state="run"} 1"#,
            r#"basalt_mbd_jobs{queue="night",state="ususp"} 0"#,
            r#"basalt_mbd_hosts{status="ok"} 1"#,
            r#"basalt_mbd_hosts{status="closed"} 2"#,
            r#"basalt_mbd_hosts{status="unavail"} 0"#,
            r#"basalt_mbd_hosts{status="unreach"} 1"#,
            "basalt_mbd_jobs_in_memory 3",
            "basalt_mbd_event_log_writable 1",
            r#"basalt_mbd_mc_link_up{cluster="east"} 1"#,
            "# TYPE basalt_mbd_dispatch_latency_seconds histogram",
            "basalt_mbd_dispatch_latency_seconds_count 1",
            "basalt_mbd_event_commit_seconds_count 2",
            "basalt_mbd_event_commit_seconds_sum 0.001",
            r#"basalt_mbd_event_commit_seconds_bucket{le="+Inf"} 2"#,
            "basalt_mbd_sched_pass_seconds_count 1",
            r#"basalt_mbd_sched_pass_seconds_bucket{le="0.00005"} 1"#,
            "# TYPE basalt_mbd_events_appended counter",
            "basalt_mbd_events_appended_total 3",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in:\n{text}"
            );
        }
        // No link, no MultiCluster gauge.
        let text = render(&m, &Snapshot::default());
        assert!(!text.contains("mc_link_up"), "{text}");
    }
}
