//! sbatchd's Prometheus metrics (`GET /metrics` on `BASALT_SBD_METRICS_PORT`): the
//! report and hello counters its tasks bump as they go, and the jobs per state, read
//! from the owner task's job table when a scrape asks (its `Status` message, as
//! `badmin` uses).

use basalt_core::job::status;
use basalt_runtime::metrics::prometheus_client::metrics::counter::Counter;
use basalt_runtime::metrics::prometheus_client::metrics::family::Family;
use basalt_runtime::metrics::prometheus_client::metrics::gauge::Gauge;
use basalt_runtime::metrics::{Registry, encode};

/// Counters and gauges sbatchd's tasks update (clones share the values).
#[derive(Debug, Clone, Default)]
pub struct SbdMetrics {
    /// Job reports mbatchd acknowledged.
    pub reports_sent: Counter,
    /// Calls carrying reports that got no answer (they go again).
    pub reports_failed: Counter,
    /// 1 while mbatchd answers this sbatchd's hellos.
    pub mbatchd_connected: Gauge,
    /// Hellos mbatchd did not answer.
    pub hellos_failed: Counter,
}

/// The job states counted.
const JOB_STATES: [&str; 6] = ["starting", "run", "ssusp", "ususp", "finished", "other"];

/// The label of a job's LSF state code (0: still starting).
fn state_index(code: u32) -> usize {
    match code {
        0 => 0,
        c if c & status::RUN != 0 => 1,
        c if c & status::SSUSP != 0 => 2,
        c if c & status::USUSP != 0 => 3,
        c if c & (status::DONE | status::EXIT) != 0 => 4,
        _ => 5,
    }
}

/// The text exposition, with the state codes of the jobs in the table.
pub fn render(m: &SbdMetrics, job_states: impl IntoIterator<Item = u32>, epoch: u64) -> String {
    let mut counts = [0i64; 6];
    for s in job_states {
        counts[state_index(s)] += 1;
    }
    let mut r = Registry::with_prefix("basalt_sbd");
    let jobs = Family::<Vec<(&'static str, String)>, Gauge>::default();
    for (state, n) in JOB_STATES.iter().zip(counts) {
        jobs.get_or_create(&vec![("state", (*state).into())]).set(n);
    }
    r.register(
        "jobs",
        "Jobs in this sbatchd's table per state (finished: not yet acknowledged by mbatchd)",
        jobs,
    );
    let e = Gauge::<i64>::default();
    e.set(i64::try_from(epoch).unwrap_or(i64::MAX));
    r.register("mbatchd_epoch", "The newest mbatchd epoch seen", e);
    r.register(
        "mbatchd_connected",
        "1 while mbatchd answers this sbatchd's hellos, else 0",
        m.mbatchd_connected.clone(),
    );
    r.register(
        "hellos_failed",
        "Hellos mbatchd did not answer",
        m.hellos_failed.clone(),
    );
    r.register(
        "reports_sent",
        "Job reports mbatchd acknowledged",
        m.reports_sent.clone(),
    );
    r.register(
        "reports_failed",
        "Calls carrying job reports that got no answer (the reports go again)",
        m.reports_failed.clone(),
    );
    encode(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_counts_jobs_per_state() {
        let m = SbdMetrics::default();
        m.reports_sent.inc_by(4);
        m.mbatchd_connected.set(1);
        let text = render(&m, [status::RUN, status::RUN, 0, status::DONE], 7);
        for line in [
            r#"basalt_sbd_jobs{state="run"} 2"#,
            r#"basalt_sbd_jobs{state="starting"} 1"#,
            r#"basalt_sbd_jobs{state="finished"} 1"#,
            r#"basalt_sbd_jobs{state="ssusp"} 0"#,
            "basalt_sbd_mbatchd_epoch 7",
            "basalt_sbd_mbatchd_connected 1",
            "basalt_sbd_reports_sent_total 4",
            "basalt_sbd_reports_failed_total 0",
            "basalt_sbd_hellos_failed_total 0",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in:\n{text}"
            );
        }
    }
}
