//! Issue 53 item 5, on a real mbatchd: a flood of authenticated requests — 100,000 from
//! 500 connections at once, 200 in flight on each — leaves mbatchd's memory bounded and
//! every request answered: served, or told to try again ("mbatchd is busy",
//! `RESOURCE_EXHAUSTED` with `basalt-retry-secs`). No other outcome is accepted: no
//! request lost, timed out or refused for another reason.
//!
//! Most requests are the queue listing (a cheap query the owner thread answers); one in
//! fifty is a submission (`-H`, held: nothing runs), so the flood also carries commits.

use anyhow::{Context, Result, anyhow};
use basalt_proto::mbatchd as pb;
use basalt_testkit::{ClusterSpec, ProcessCluster};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const CONNECTIONS: usize = 500;
const PER_CONNECTION: usize = 200;
/// One request in this many is a submission.
const SUBMIT_EVERY: usize = 50;

/// The bound on mbatchd's resident size during the flood, above its size before it.
///
/// What may be held at once: 2,048 client requests in flight (mbatchd's admission bound,
/// about 33 KB each in a debug build: the stream, the credential's check, the answer
/// held until the client reads it), the streams refused "busy" on their way out, and the
/// 2,000 jobs submitted. Measured: 149 MB of growth (docs/architecture.md, "The owner's
/// inbox and the requests in flight"). Without the bounds mbatchd held every request of
/// the flood: 845 to 929 MB.
const RSS_GROWTH_BOUND_KIB: u64 = 256 * 1024;

/// Resident memory of `pid` in KiB.
fn rss_kb(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// What one request came to.
#[derive(Debug)]
enum Outcome {
    Served,
    Retry,
    Other(String),
}

fn outcome<T>(r: Result<T, tonic::Status>) -> Outcome {
    match r {
        Ok(_) => Outcome::Served,
        Err(s)
            if s.code() == tonic::Code::ResourceExhausted
                && std::error::Error::source(&s).is_none()
                && s.metadata()
                    .get(basalt_proto::RETRY_SECS_METADATA)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok())
                    .is_some() =>
        {
            Outcome::Retry
        }
        Err(s) => Outcome::Other(format!("{:?}: {}", s.code(), s.message())),
    }
}

#[test]
fn a_flood_of_requests_is_served_or_told_to_retry_in_bounded_memory() -> Result<()> {
    let c = ProcessCluster::start_batch("mbd-flood", &ClusterSpec::new(1), "")?;
    let cfg = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow!("{e}"))?
        .config;
    let pid = *c
        .pids_of("mbatchd", "hostA")
        .first()
        .ok_or_else(|| anyhow!("no mbatchd"))?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    // Once through the commands, so the queues and the first job exist.
    c.bsub(&work, &["-H", "true"])?;
    let before = rss_kb(pid).ok_or_else(|| anyhow!("no RSS of {pid}"))?;
    let peak = Arc::new(AtomicU64::new(before));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                if let Some(r) = rss_kb(pid) {
                    peak.fetch_max(r, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let cwd = work.to_string_lossy().into_owned();
    let outcomes = rt.block_on(async {
        // As the commands authenticate: the user's credentials from hostA's LIM.
        let auth = basalt_runtime::user_auth(&cfg);
        anyhow::ensure!(
            auth.host() == Some("hostA"),
            "no user credentials: {:?}",
            auth.unavailable_reason()
        );
        // Each client its own channel: its own TCP connection, opened before the flood.
        let mut clients = Vec::with_capacity(CONNECTIONS);
        for _ in 0..CONNECTIONS {
            let mut client =
                basalt_runtime::mbatchd_channel(&cfg, "hostA", Duration::from_secs(120), &auth)?;
            client
                .params(pb::ParamsRequest::default())
                .await
                .context("a connection's first request")?;
            clients.push(client);
        }
        let mut flood = tokio::task::JoinSet::new();
        for (conn, client) in clients.into_iter().enumerate() {
            for i in 0..PER_CONNECTION {
                let mut client = client.clone();
                let cwd = cwd.clone();
                flood.spawn(async move {
                    if (conn * PER_CONNECTION + i).is_multiple_of(SUBMIT_EVERY) {
                        let req = pb::SubmitRequest {
                            job: Some(pb::JobSubmission {
                                command: "true".into(),
                                cwd,
                                from_host: "hostA".into(),
                                options2: basalt_core::job::sub2::HOLD,
                                ..Default::default()
                            }),
                            ..Default::default()
                        };
                        outcome(client.submit(req).await)
                    } else {
                        outcome(client.queues(pb::QueuesRequest::default()).await)
                    }
                });
            }
        }
        let (mut served, mut retry, mut other) = (0u64, 0u64, Vec::new());
        while let Some(r) = flood.join_next().await {
            match r? {
                Outcome::Served => served += 1,
                Outcome::Retry => retry += 1,
                Outcome::Other(e) => other.push(e),
            }
        }
        anyhow::Ok((served, retry, other))
    });
    sampling.store(false, Ordering::Relaxed);
    let _ = sampler.join();
    let (served, retry, other) = outcomes?;
    let peak = peak.load(Ordering::Relaxed);
    eprintln!(
        "flood: {served} served, {retry} told to retry, {} otherwise; mbatchd {before} -> \
         {peak} KiB at most",
        other.len()
    );
    assert!(
        other.is_empty(),
        "{} requests neither served nor told to retry, e.g. {:?}",
        other.len(),
        &other[..other.len().min(5)]
    );
    assert_eq!(served + retry, (CONNECTIONS * PER_CONNECTION) as u64);
    assert!(served > 0, "nothing was served");
    assert!(
        peak < before + RSS_GROWTH_BOUND_KIB,
        "mbatchd grew from {before} to {peak} KiB (bound: {RSS_GROWTH_BOUND_KIB} KiB more)"
    );
    // mbatchd still serves.
    c.ok("bqueues", &[])?;
    Ok(())
}
