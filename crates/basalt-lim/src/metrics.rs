//! The LIM's Prometheus metrics (`GET /metrics` on `BASALT_LIM_METRICS_PORT`): the
//! heartbeat counters the owner task bumps as it goes, and, read from the election core
//! when a scrape asks (a [`crate::Msg::Metrics`] to the owner), whether this LIM is the
//! master and its hosts per status (the master's view is the cluster's; another LIM
//! knows little of the others).

use basalt_runtime::metrics::prometheus_client::metrics::counter::Counter;
use basalt_runtime::metrics::prometheus_client::metrics::family::Family;
use basalt_runtime::metrics::prometheus_client::metrics::gauge::Gauge;
use basalt_runtime::metrics::{Registry, encode};

/// Counters the owner task updates (clones share the values).
#[derive(Debug, Clone, Default)]
pub(crate) struct LimMetrics {
    /// Heartbeats received from other LIMs (this LIM as master).
    pub(crate) heartbeats_received: Counter,
    /// Heartbeats sent to the master.
    pub(crate) heartbeats_sent: Counter,
    /// Heartbeats sent that got no answer.
    pub(crate) heartbeats_failed: Counter,
}

/// The host statuses counted (lsload's ok, busy, unavail, and not yet known).
pub(crate) const HOST_STATUSES: [&str; 5] = ["ok", "busy", "unavail", "unknown", "lockU"];

/// What the owner reads from the core for a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) master: bool,
    pub(crate) epoch: u64,
    /// Hosts per status, in [`HOST_STATUSES`] order.
    pub(crate) hosts: [u32; 5],
}

type Labels = Vec<(&'static str, String)>;

/// The text exposition.
pub(crate) fn render(m: &LimMetrics, snap: &Snapshot) -> String {
    let mut r = Registry::with_prefix("basalt_lim");
    let master = Gauge::<i64>::default();
    master.set(i64::from(snap.master));
    r.register("master", "1 while this LIM is the master, else 0", master);
    let epoch = Gauge::<i64>::default();
    epoch.set(i64::try_from(snap.epoch).unwrap_or(i64::MAX));
    r.register(
        "master_epoch",
        "The epoch of the master term this LIM knows",
        epoch,
    );
    let hosts = Family::<Labels, Gauge>::default();
    for (status, n) in HOST_STATUSES.iter().zip(snap.hosts) {
        hosts
            .get_or_create(&vec![("status", (*status).into())])
            .set(i64::from(n));
    }
    r.register(
        "hosts",
        "Hosts per load status as this LIM sees them (the master's view is the cluster's)",
        hosts,
    );
    r.register(
        "heartbeats_received",
        "Heartbeats received from other LIMs",
        m.heartbeats_received.clone(),
    );
    r.register(
        "heartbeats_sent",
        "Heartbeats sent to the master",
        m.heartbeats_sent.clone(),
    );
    r.register(
        "heartbeats_failed",
        "Heartbeats sent to the master that got no answer",
        m.heartbeats_failed.clone(),
    );
    encode(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_every_metric() {
        let m = LimMetrics::default();
        m.heartbeats_received.inc_by(5);
        m.heartbeats_sent.inc();
        let text = render(
            &m,
            &Snapshot {
                master: true,
                epoch: 3,
                hosts: [2, 1, 0, 0, 1],
            },
        );
        for line in [
            "basalt_lim_master 1",
            "basalt_lim_master_epoch 3",
            r#"basalt_lim_hosts{status="ok"} 2"#,
            r#"basalt_lim_hosts{status="busy"} 1"#,
            r#"basalt_lim_hosts{status="unknown"} 0"#,
            r#"basalt_lim_hosts{status="lockU"} 1"#,
            "basalt_lim_heartbeats_received_total 5",
            "basalt_lim_heartbeats_sent_total 1",
            "basalt_lim_heartbeats_failed_total 0",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in:\n{text}"
            );
        }
    }
}
