//! The daemons' Prometheus endpoints on real processes (issue 26 item 4): with
//! `BASALT_{MBD,LIM,SBD}_METRICS_PORT` set, mbatchd, the LIM and sbatchd answer
//! `GET /metrics` on their host's address; mbatchd's job counts per queue and state
//! agree with bqueues, its histograms (dispatch latency, event-log commit, scheduling
//! pass) have counted, and the LIM and sbatchd report the master and the running job.

use anyhow::{Context, Result, anyhow};
use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for};
use std::net::SocketAddr;
use std::time::Duration;

const MBD_PORT: u16 = 19181;
const LIM_PORT: u16 = 19182;
const SBD_PORT: u16 = 19183;

/// `GET /metrics` on `addr`: the body of a 200 answer.
fn scrape(addr: SocketAddr) -> Result<String> {
    let (code, body) = basalt_runtime::metrics::http_get(addr, "/metrics")
        .with_context(|| format!("GET http://{addr}/metrics"))?;
    if code != 200 {
        return Err(anyhow!("GET http://{addr}/metrics: HTTP {code}: {body}"));
    }
    Ok(body)
}

/// The value of the sample `series` (name with its labels, as printed) in `text`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(series)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

/// bqueues' (PEND, RUN) of `queue`.
fn bqueues(c: &ProcessCluster, queue: &str) -> Option<(f64, f64)> {
    let out = c.stdout_ok("bqueues", &[queue])?;
    let header: Vec<&str> = out.lines().next()?.split_whitespace().collect();
    let row: Vec<&str> = out.lines().nth(1)?.split_whitespace().collect();
    let col = |name: &str| {
        let i = header.iter().position(|h| *h == name)?;
        row.get(i)?.parse::<f64>().ok()
    };
    Some((col("PEND")?, col("RUN")?))
}

#[test]
fn mbatchd_lim_and_sbatchd_serve_prometheus_metrics() -> Result<()> {
    let mut spec = ClusterSpec::new(1);
    spec.lsf_conf_extra = format!(
        "BASALT_MBD_METRICS_PORT={MBD_PORT}\nBASALT_LIM_METRICS_PORT={LIM_PORT}\n\
         BASALT_SBD_METRICS_PORT={SBD_PORT}\n"
    );
    let c = ProcessCluster::start_batch("metrics", &spec, "")?;
    let ip = c.addrs[0];
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;

    let running = c.bsub(&work, &["-q", "normal", "sleep 600"])?;
    let held = c.bsub(&work, &["-q", "priority", "-H", "sleep 1"])?;
    basalt_testkit::jobs::wait_state(&c, running, "RUN", Duration::from_secs(60))?;
    basalt_testkit::jobs::wait_state(&c, held, "PSUSP", Duration::from_secs(60))?;

    // mbatchd: the per-queue counts are bqueues'; the histograms have counted.
    let mbd = SocketAddr::new(ip, MBD_PORT);
    let text = wait_for(
        "mbatchd's metrics to show the dispatch answered",
        Duration::from_secs(30),
        || match scrape(mbd) {
            Ok(t) => {
                let answered = value(&t, "basalt_mbd_dispatch_latency_seconds_count")
                    .is_some_and(|n| n >= 1.0);
                let run = value(&t, r#"basalt_mbd_jobs{queue="normal",state="run"}"#);
                ((answered && run == Some(1.0)).then(|| t.clone()), t)
            }
            Err(e) => (None, e.to_string()),
        },
    )?;
    assert_eq!(
        value(&text, r#"basalt_mbd_jobs{queue="priority",state="pend"}"#),
        Some(1.0),
        "{text}"
    );
    for queue in ["normal", "priority", "idle"] {
        let (pend, run) = bqueues(&c, queue).ok_or_else(|| anyhow!("bqueues {queue}"))?;
        let series = |state: &str| format!(r#"basalt_mbd_jobs{{queue="{queue}",state="{state}"}}"#);
        assert_eq!(value(&text, &series("pend")), Some(pend), "{queue}: {text}");
        assert_eq!(value(&text, &series("run")), Some(run), "{queue}: {text}");
    }
    for h in [
        "basalt_mbd_event_commit_seconds_count",
        "basalt_mbd_sched_pass_seconds_count",
        "basalt_mbd_events_appended_total",
    ] {
        assert!(value(&text, h).is_some_and(|n| n >= 1.0), "{h}: {text}");
    }
    assert!(
        text.contains(r#"basalt_mbd_dispatch_latency_seconds_bucket{le="+Inf"}"#),
        "{text}"
    );
    let hosts: f64 = ["ok", "closed", "unavail", "unreach"]
        .iter()
        .filter_map(|s| value(&text, &format!(r#"basalt_mbd_hosts{{status="{s}"}}"#)))
        .sum();
    assert_eq!(hosts, 1.0, "{text}");
    assert_eq!(
        value(&text, "basalt_mbd_event_log_writable"),
        Some(1.0),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");

    // The LIM: the master, its one host.
    let lim = scrape(SocketAddr::new(ip, LIM_PORT))?;
    assert_eq!(value(&lim, "basalt_lim_master"), Some(1.0), "{lim}");
    let lim_hosts: f64 = ["ok", "busy", "unavail", "unknown", "lockU"]
        .iter()
        .filter_map(|s| value(&lim, &format!(r#"basalt_lim_hosts{{status="{s}"}}"#)))
        .sum();
    assert_eq!(lim_hosts, 1.0, "{lim}");
    assert!(
        value(&lim, "basalt_lim_heartbeats_sent_total").is_some(),
        "{lim}"
    );

    // sbatchd: the running job, mbatchd connected, its start reported.
    let sbd = SocketAddr::new(ip, SBD_PORT);
    wait_for(
        "sbatchd's metrics to show the running job reported",
        Duration::from_secs(30),
        || match scrape(sbd) {
            Ok(t) => {
                let ok = value(&t, r#"basalt_sbd_jobs{state="run"}"#) == Some(1.0)
                    && value(&t, "basalt_sbd_mbatchd_connected") == Some(1.0)
                    && value(&t, "basalt_sbd_reports_sent_total").is_some_and(|n| n >= 1.0);
                (ok.then_some(()), t)
            }
            Err(e) => (None, e.to_string()),
        },
    )?;

    // Anything but /metrics is not found.
    let (code, _) = basalt_runtime::metrics::http_get(mbd, "/")?;
    assert_eq!(code, 404);
    let _ = c.run("bkill", &[&running.to_string(), &held.to_string()]);
    Ok(())
}
