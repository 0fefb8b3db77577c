//! Talking to mbatchd: finding the master through the LIMs, the `SbdHello`
//! heartbeat, and the per-job reporters that deliver a job's reports in order (those
//! waiting together in one batch; a job's start waits a few milliseconds for its end),
//! retrying with back-off until each is acknowledged. The batches of all the jobs go on
//! one long-lived `ReportStream` per master ([`ReportStream`]), or by `ReportJobs` /
//! `ReportJob` calls to an mbatchd without it.

use crate::Shared;
use crate::owner::{Key, Msg};
use basalt_proto::mbatchd::mbatchd_peer_client::MbatchdPeerClient;
use basalt_proto::mbatchd::{
    AckKind, JobReport, JobReports, ReportAck, ReportAcks, ReportKind, SbdHelloRequest,
};
use basalt_runtime::AuthChannel as Channel;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{Instrument, debug, info, warn};

/// An mbatchd peer client (hello, job reports) and the report stream on its
/// connection.
#[derive(Clone)]
pub struct Client {
    rpc: MbatchdPeerClient<Channel>,
    stream: ReportStream,
}

impl Client {
    fn new(rpc: MbatchdPeerClient<Channel>) -> Client {
        Client {
            stream: ReportStream::open(rpc.clone()),
            rpc,
        }
    }
}

/// A batch of reports for the report stream and where its acknowledgements go.
type StreamCall = (
    JobReports,
    oneshot::Sender<Result<ReportAcks, tonic::Status>>,
);

/// The job reports of this host on one long-lived `ReportStream` to mbatchd (one
/// HTTP/2 stream for all of them, instead of a call per batch). Its task opens the
/// stream when the first batch comes, sends the batches in the order they come and
/// hands each acknowledgement to its batch's sender, in the same order. When the stream
/// breaks or an answer is late (over [`RPC_TIMEOUT`]), the batches waiting fail (their
/// reporters send them again) and the next batch opens a new stream; when mbatchd does
/// not have the call (UNIMPLEMENTED), every batch fails with that answer and its
/// reporter uses the one-call-per-batch `ReportJobs`.
#[derive(Clone)]
struct ReportStream {
    tx: mpsc::UnboundedSender<StreamCall>,
}

impl ReportStream {
    /// Start the stream's task; it ends once every copy of the handle is dropped.
    fn open(rpc: MbatchdPeerClient<Channel>) -> ReportStream {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(report_stream(rpc, rx).in_current_span());
        ReportStream { tx }
    }

    /// Send `batch` on the stream and wait for its acknowledgements.
    async fn call(&self, batch: JobReports) -> Result<ReportAcks, tonic::Status> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send((batch, tx))
            .map_err(|_| tonic::Status::unavailable("the report stream has stopped"))?;
        rx.await
            .map_err(|_| tonic::Status::unavailable("the report stream has stopped"))?
    }
}

/// The batches sent on the report stream whose acknowledgements are awaited, oldest
/// first, with when each was sent.
type Awaited = std::collections::VecDeque<(
    tokio::time::Instant,
    oneshot::Sender<Result<ReportAcks, tonic::Status>>,
)>;

/// The report stream's task (see [`ReportStream`]).
async fn report_stream(
    mut rpc: MbatchdPeerClient<Channel>,
    mut rx: mpsc::UnboundedReceiver<StreamCall>,
) {
    let mut unsupported = false;
    while let Some((first, reply)) = rx.recv().await {
        if unsupported {
            let _ = reply.send(Err(tonic::Status::unimplemented("no ReportStream")));
            continue;
        }
        // Unbounded: each reporter has one batch in flight at most, and a sender that
        // waited here would stop reading the acknowledgements that free mbatchd's side.
        let (out, out_rx) = mpsc::unbounded_channel::<JobReports>();
        // Queued before the stream opens: it goes with the stream's first frames.
        let _ = out.send(first);
        let opened = tokio::time::timeout(
            RPC_TIMEOUT,
            rpc.report_stream(tokio_stream::wrappers::UnboundedReceiverStream::new(out_rx)),
        )
        .await;
        let mut inbound = match opened {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(e)) => {
                if e.code() == tonic::Code::Unimplemented {
                    debug!("mbatchd has no ReportStream: one call per batch");
                    unsupported = true;
                }
                let _ = reply.send(Err(e));
                continue;
            }
            Err(_) => {
                let _ = reply.send(Err(tonic::Status::deadline_exceeded(
                    "opening the report stream timed out",
                )));
                continue;
            }
        };
        let mut awaited: Awaited = std::collections::VecDeque::new();
        awaited.push_back((tokio::time::Instant::now(), reply));
        let broken = loop {
            let late = awaited
                .front()
                .map(|(sent, _)| *sent + RPC_TIMEOUT)
                .unwrap_or_else(|| tokio::time::Instant::now() + IDLE_STREAM);
            tokio::select! {
                call = rx.recv() => match call {
                    Some((batch, reply)) => {
                        if out.send(batch).is_err() {
                            let _ = reply.send(Err(tonic::Status::unavailable("the report stream broke")));
                            break tonic::Status::unavailable("the report stream broke");
                        }
                        awaited.push_back((tokio::time::Instant::now(), reply));
                    }
                    None => return,
                },
                acks = inbound.message() => match acks {
                    Ok(Some(acks)) => match awaited.pop_front() {
                        Some((_, reply)) => {
                            let _ = reply.send(Ok(acks));
                        }
                        None => break tonic::Status::internal("an acknowledgement nobody waits for"),
                    },
                    Ok(None) => break tonic::Status::unavailable("mbatchd closed the report stream"),
                    Err(e) => break e,
                },
                _ = tokio::time::sleep_until(late) => {
                    if awaited.is_empty() {
                        // Idle for a long time: close it (mbatchd frees its side); the
                        // next batch opens a new one.
                        break tonic::Status::cancelled("idle");
                    }
                    break tonic::Status::deadline_exceeded("an acknowledgement is late");
                }
            }
        };
        debug!("report stream: {}", broken.message());
        for (_, reply) in awaited {
            let _ = reply.send(Err(broken.clone()));
        }
    }
}

/// How long an idle report stream stays open.
const IDLE_STREAM: Duration = Duration::from_secs(300);

const RPC_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_HELLO: Duration = Duration::from_secs(5);

/// How often [`master_watch`] asks the LIMs who the master is while its own LIM's master
/// watch socket does not answer (the LIM is starting or restarting).
pub const MASTER_POLL: Duration = Duration::from_millis(100);

/// Follow the master host: wait on the local LIM's master watch socket, which answers
/// the moment the LIM follows another master (no request at all while nothing changes
/// but one every [`basalt_auth::socket::MASTER_WATCH_MAX`]); while that socket does not
/// answer, ask the local LIM — else any LIM — every [`MASTER_POLL`]. Publish the
/// master's name when it changes (a LIM that knows none leaves the last one published).
pub async fn master_watch(
    shared: Arc<Shared>,
    tx: watch::Sender<Option<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let timeout = Duration::from_secs(1);
    let watch_socket = basalt_runtime::lim_addr(&shared.config, &shared.host)
        .ok()
        .map(|a| basalt_auth::socket::master_watch_name(&basalt_auth::socket::name(a)));
    let mut local =
        basalt_runtime::lim_channel(&shared.config, &shared.host, timeout, &shared.auth).ok();
    // What the local LIM last said (None: no master, or not asked yet).
    let mut lim_said: Option<String> = None;
    loop {
        let mut master = None;
        let mut watched = false;
        if let Some(name) = &watch_socket {
            let limit = basalt_auth::socket::MASTER_WATCH_MAX + Duration::from_secs(5);
            let r = tokio::select! {
                r = basalt_auth::socket::watch_master(name, &[], lim_said.as_deref(), limit) => r,
                _ = crate::stopped(&mut stop) => return,
            };
            if let Ok(said) = r {
                watched = true;
                lim_said = said.clone();
                master = said;
            }
        }
        if !watched {
            if let Some(lim) = local.as_mut()
                && let Ok(Ok(r)) = tokio::time::timeout(
                    timeout,
                    lim.cluster_info(basalt_proto::lim::ClusterInfoRequest {}),
                )
                .await
            {
                let r = r.into_inner();
                if !r.master.is_empty() {
                    master = Some(r.master);
                }
            }
            if master.is_none()
                && let Ok(m) =
                    basalt_runtime::find_master(&shared.config, timeout, &shared.auth).await
            {
                master = Some(m.master);
            }
        }
        if let Some(m) = master {
            let m = basalt_runtime::canonical_host(&shared.config, &m).unwrap_or(m);
            tx.send_if_modified(|cur| {
                if cur.as_deref() == Some(m.as_str()) {
                    false
                } else {
                    info!("master host is {m}");
                    *cur = Some(m);
                    true
                }
            });
        }
        if !watched {
            tokio::select! {
                _ = tokio::time::sleep(MASTER_POLL) => {}
                _ = crate::stopped(&mut stop) => return,
            }
        }
    }
}

/// The heartbeat: `SbdHello` to the master's mbatchd at start (`restarted`) and then
/// every `hello_interval`. The client is published for reporters once a hello to
/// the current master succeeded (so reports carry its epoch).
pub async fn hello_loop(
    shared: Arc<Shared>,
    owner: mpsc::Sender<Msg>,
    mut master: watch::Receiver<Option<String>>,
    clients: watch::Sender<Option<Client>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut restarted = true;
    let mut current: Option<(String, Client, bool)> = None;
    let mut failures: u32 = 0;
    // The interval the last master asked for (a large cluster's is longer).
    let mut asked = DEFAULT_HELLO;
    loop {
        let wanted = master.borrow_and_update().clone();
        if wanted.as_deref() != current.as_ref().map(|c| c.0.as_str()) {
            // A new master: its mbatchd is likely still starting; retry quickly.
            failures = 0;
            let had_master = current.is_some();
            current = wanted.and_then(|m| {
                basalt_runtime::mbatchd_peer_channel(&shared.config, &m, RPC_TIMEOUT, &shared.auth)
                    .ok()
                    .map(|c| (m, Client::new(c), false))
            });
            clients.send_replace(None);
            // In a large cluster every sbatchd meets the new master at once: each says
            // its first hello at its own phase of the interval instead.
            let wait = spread_phase(&shared.host, asked);
            if had_master && !wait.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = crate::stopped(&mut stop) => return,
                }
            }
        }
        let mut interval = Duration::from_secs(1);
        if let Some((m, client, published)) = current.as_mut() {
            let (jtx, jrx) = oneshot::channel();
            let jobs = if owner.send(Msg::HelloJobs { reply: jtx }).await.is_ok() {
                jrx.await.unwrap_or_default()
            } else {
                Vec::new()
            };
            let req = SbdHelloRequest {
                host: shared.host.clone(),
                restarted,
                jobs,
            };
            match tokio::time::timeout(RPC_TIMEOUT, client.rpc.sbd_hello(req)).await {
                Ok(Ok(reply)) => {
                    let r = reply.into_inner();
                    if restarted || failures > 0 || !*published {
                        info!("mbatchd on {m} answered; epoch {}", r.epoch);
                    }
                    restarted = false;
                    failures = 0;
                    shared.metrics.mbatchd_connected.set(1);
                    let _ = owner
                        .send(Msg::Hello {
                            epoch: r.epoch,
                            terminate_interval: r.job_terminate_interval,
                            jobs: r.jobs,
                        })
                        .await;
                    if !*published {
                        *published = true;
                        clients.send_replace(Some(client.clone()));
                    }
                    interval = if r.hello_interval > 0 {
                        Duration::from_secs(u64::from(r.hello_interval))
                    } else {
                        DEFAULT_HELLO
                    };
                    asked = interval;
                }
                Ok(Err(e)) => {
                    failures += 1;
                    shared.metrics.mbatchd_connected.set(0);
                    shared.metrics.hellos_failed.inc();
                    hello_failed(m, failures, e.message());
                    interval = retry_after(failures, &shared.host, asked);
                }
                Err(_) => {
                    failures += 1;
                    shared.metrics.mbatchd_connected.set(0);
                    shared.metrics.hellos_failed.inc();
                    hello_failed(m, failures, "timed out");
                    interval = retry_after(failures, &shared.host, asked);
                }
            }
        } else {
            // No master known (or no channel to it).
            shared.metrics.mbatchd_connected.set(0);
        }
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            r = master.changed() => {
                if r.is_err() {
                    tokio::time::sleep(interval).await;
                }
            }
            _ = shared.relocate.notified() => {
                // A reporter could not reach mbatchd: say hello again soon (in a large
                // cluster at this host's phase, as after a failed hello).
                tokio::time::sleep(retry_after(1, &shared.host, asked)).await;
            }
            _ = crate::stopped(&mut stop) => return,
        }
    }
}

/// When to say hello again after `failures` failed hellos in a row to the current
/// master (counted from 0 again when the master changes): every 200 ms for the first
/// [`QUICK_HELLOS`] failures (2 s), then every second. After a failover the new
/// master's mbatchd starts serving within a second or so of the election (once it
/// holds the event-log lock and has replayed the log): the quick hellos reach it within
/// 200 ms rather than up to a whole second later, and reports waiting for it (they go
/// only after a hello succeeded) go with them. A master whose mbatchd stays away gets
/// one hello a second, as before: what a cluster of many hosts sends to a port nobody
/// listens on does not grow past those first 2 s.
pub(crate) fn hello_retry(failures: u32) -> Duration {
    if failures <= QUICK_HELLOS {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(1)
    }
}

/// When to say hello again after `failures` failed hellos in a row, in a cluster whose
/// master asked for hellos every `asked`: [`hello_retry`] in a cluster small enough for
/// the default interval; in a larger one (mbatchd takes at most
/// `basalt_sched::HELLOS_PER_SEC` hellos a second, so it asked for a longer interval)
/// the first retry comes at this host's phase of that interval ([`spread_phase`]) and
/// the next ones every second. After an mbatchd restart (kill -9, `badmin reconfig`)
/// 10,000 sbatchds retrying every 200 ms were 50,000 connections a second to a port not
/// yet listening, then 10,000 hellos at once to the mbatchd that had just started.
pub(crate) fn retry_after(failures: u32, host: &str, asked: Duration) -> Duration {
    if asked <= DEFAULT_HELLO {
        hello_retry(failures)
    } else if failures <= 1 {
        spread_phase(host, asked).max(Duration::from_millis(200))
    } else {
        Duration::from_secs(1)
    }
}

/// This host's phase of `asked` when that is longer than the default interval (zero
/// otherwise): a fixed fraction of it from a hash of the host's name, so that a large
/// cluster's sbatchds come back to a new or restarted mbatchd spread over one interval,
/// at the rate it asked for, rather than all at once.
pub(crate) fn spread_phase(host: &str, asked: Duration) -> Duration {
    if asked <= DEFAULT_HELLO {
        return Duration::ZERO;
    }
    // FNV-1a: stable across runs and builds (std's hasher is seeded).
    let h = host.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let ms = u64::try_from(asked.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(h % ms.max(1))
}

/// Failed hellos to a new master retried after 200 ms ([`hello_retry`]).
const QUICK_HELLOS: u32 = 10;

/// Failed hellos in a row before one is logged as a warning: 2 s of [`hello_retry`]
/// (10 × 0.2 s), as long as 3 hellos a second apart took before.
const WARN_AFTER_FAILURES: u32 = QUICK_HELLOS + 1;

/// Log a failed hello: quietly at first (mbatchd may be starting), then as a
/// warning after a few seconds and every minute or so after that.
fn hello_failed(master: &str, failures: u32, why: &str) {
    if failures == WARN_AFTER_FAILURES || failures.is_multiple_of(60) {
        warn!("SbdHello to mbatchd on {master}: {why} ({failures} failures)");
    } else {
        debug!("SbdHello to mbatchd on {master}: {why}");
    }
}

/// The most reports of one job sent in one `ReportJobs` call.
const MAX_BATCH: usize = 64;

/// How long the reports of a job's start wait for more of the job's reports before
/// they are sent: a short job's start and end then take one call and one mbatchd
/// commit instead of two. mbatchd has the job running from its dispatch on; what
/// comes later is its pid and execution details (`JOB_EXECUTE`).
const START_COALESCE: Duration = Duration::from_millis(10);

/// Are these only the reports of a job's start (`Started`, `Executing`)?
fn only_start(reports: &[JobReport]) -> bool {
    reports.iter().all(|r| {
        matches!(
            ReportKind::try_from(r.kind),
            Ok(ReportKind::Started | ReportKind::Executing)
        )
    })
}

/// What delivering a report (or a batch) came to.
enum Delivered {
    /// Acknowledged; reporting goes on.
    Acked,
    /// `NO_JOB`: reporting ends for this job.
    NoJob,
    /// Not acknowledged (no answer, an error, an unknown kind): send again later.
    Again,
}

/// Deliver one job's reports in order. The reports waiting together go in one
/// `ReportJobs` call (one by one with `ReportJob` when mbatchd does not have it). Each
/// is retried (back-off 100 ms doubling to 5 s) until mbatchd acknowledges it;
/// `NO_JOB` ends reporting for the job.
pub async fn reporter(
    shared: Arc<Shared>,
    key: Key,
    mut rx: mpsc::UnboundedReceiver<JobReport>,
    owner: mpsc::Sender<Msg>,
    mut clients: watch::Receiver<Option<Client>>,
) {
    let mut pending: Vec<JobReport> = Vec::new();
    loop {
        if pending.is_empty() {
            match rx.recv().await {
                Some(r) => pending.push(r),
                None => return,
            }
        }
        gather(&mut rx, &mut pending, START_COALESCE).await;
        let mut backoff = Duration::from_millis(100);
        while !pending.is_empty() {
            let client = clients.borrow_and_update().clone();
            if let Some(c) = client {
                let epoch = shared.epoch();
                for r in &mut pending {
                    r.epoch = epoch;
                }
                let (done, outcome) = deliver(&shared, key, &pending, c, &owner).await;
                shared.metrics.reports_sent.inc_by(done as u64);
                pending.drain(..done);
                match outcome {
                    Delivered::NoJob => return,
                    Delivered::Acked => continue,
                    Delivered::Again => {}
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                r = clients.changed() => {
                    if r.is_err() {
                        tokio::time::sleep(backoff).await;
                    }
                }
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }
}

/// Add the reports waiting in `rx` to `pending` (up to [`MAX_BATCH`]). When they are
/// only a job's start, wait up to `window` for more: a job that has just started may
/// end within a few milliseconds.
async fn gather(
    rx: &mut mpsc::UnboundedReceiver<JobReport>,
    pending: &mut Vec<JobReport>,
    window: Duration,
) {
    while pending.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(r) => pending.push(r),
            Err(_) => break,
        }
    }
    if !only_start(pending) {
        return;
    }
    let until = tokio::time::Instant::now() + window;
    while pending.len() < MAX_BATCH && only_start(pending) {
        match tokio::time::timeout_at(until, rx.recv()).await {
            Ok(Some(r)) => pending.push(r),
            Ok(None) | Err(_) => return,
        }
    }
}

/// Send `reports` (in order): on the report stream, else (mbatchd does not have it) in
/// one `ReportJobs` call, else (nor that) one `ReportJob` call each. Returns how many
/// of them were acknowledged and what the last answer came to.
async fn deliver(
    shared: &Shared,
    key: Key,
    reports: &[JobReport],
    mut c: Client,
    owner: &mpsc::Sender<Msg>,
) -> (usize, Delivered) {
    let batch = || JobReports {
        reports: reports.to_vec(),
    };
    let mut answer = tokio::time::timeout(RPC_TIMEOUT, c.stream.call(batch())).await;
    if reports.len() > 1 && matches!(&answer, Ok(Err(e)) if e.code() == tonic::Code::Unimplemented)
    {
        answer = tokio::time::timeout(RPC_TIMEOUT, c.rpc.report_jobs(batch()))
            .await
            .map(|r| r.map(tonic::Response::into_inner));
    }
    match answer {
        Ok(Ok(acks)) => {
            let mut done = 0;
            for (report, ack) in reports.iter().zip(acks.acks) {
                match acknowledged(key, report, ack, owner).await {
                    Delivered::Acked => done += 1,
                    other => return (done, other),
                }
            }
            // Fewer acknowledgements than reports: the rest go again.
            let outcome = if done == reports.len() {
                Delivered::Acked
            } else {
                Delivered::Again
            };
            return (done, outcome);
        }
        Ok(Err(e)) if e.code() == tonic::Code::Unimplemented => {
            debug!("mbatchd has neither ReportStream nor ReportJobs: reporting one by one");
        }
        Ok(Err(e)) => {
            let what = format!("{} reports", reports.len());
            return (0, no_answer(shared, key, &what, e.message()));
        }
        Err(_) => {
            let what = format!("{} reports", reports.len());
            return (0, no_answer(shared, key, &what, "timed out"));
        }
    }
    let mut done = 0;
    for report in reports {
        match tokio::time::timeout(RPC_TIMEOUT, c.rpc.report_job(report.clone())).await {
            Ok(Ok(ack)) => match acknowledged(key, report, ack.into_inner(), owner).await {
                Delivered::Acked => done += 1,
                other => return (done, other),
            },
            Ok(Err(e)) => {
                let what = format!("report {}", report.seq);
                return (done, no_answer(shared, key, &what, e.message()));
            }
            Err(_) => {
                let what = format!("report {}", report.seq);
                return (done, no_answer(shared, key, &what, "timed out"));
            }
        }
    }
    (done, Delivered::Acked)
}

/// A call that got no answer (an error, a time-out): mbatchd may have moved, so the
/// master is looked for again, and the reports go again later.
fn no_answer(shared: &Shared, key: Key, what: &str, why: &str) -> Delivered {
    debug!("job {}: {what}: {why}", key.0);
    shared.metrics.reports_failed.inc();
    shared.relocate.notify_one();
    Delivered::Again
}

/// Tell the owner what mbatchd answered to `report`.
async fn acknowledged(
    key: Key,
    report: &JobReport,
    ack: ReportAck,
    owner: &mpsc::Sender<Msg>,
) -> Delivered {
    let kind = ReportKind::try_from(report.kind).unwrap_or(ReportKind::Unspecified);
    // A missing or unknown kind acknowledges nothing: send again.
    let ack_kind = match AckKind::try_from(ack.kind) {
        Ok(AckKind::Unspecified) | Err(_) => None,
        Ok(k) => Some(k),
    };
    let Some(ack_kind) = ack_kind else {
        warn!(
            "job {}: report {}: acknowledgement of unknown kind {}; sending it again",
            key.0, report.seq, ack.kind
        );
        return Delivered::Again;
    };
    debug!(
        "job {} idx {} attempt {}: report {} ({kind:?}) acknowledged: {ack_kind:?}",
        key.0, key.1, key.2, report.seq
    );
    let _ = owner
        .send(Msg::Acked {
            key,
            seq: report.seq,
            kind,
            ack: ack_kind,
            epoch: ack.epoch,
        })
        .await;
    if ack_kind == AckKind::NoJob {
        Delivered::NoJob
    } else {
        Delivered::Acked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(kind: ReportKind, seq: u64) -> JobReport {
        JobReport {
            kind: kind as i32,
            seq,
            ..Default::default()
        }
    }

    fn kinds(v: &[JobReport]) -> Vec<i32> {
        v.iter().map(|r| r.kind).collect()
    }

    /// A job's start waits up to the window for the job's end, and goes with it when
    /// the end comes in time.
    /// After a failover the new master's mbatchd serves within a second or so of the
    /// election, after sbatchd learnt the master (issue 49, item 10): the hellos that
    /// fail meanwhile are retried every 200 ms for 2 s, then every second.
    #[test]
    fn a_large_clusters_hellos_to_a_new_mbatchd_are_spread_over_its_interval() {
        let asked = Duration::from_secs(10);
        let phases: Vec<Duration> = (0..2000)
            .map(|i| spread_phase(&format!("hv{i:05}"), asked))
            .collect();
        assert!(phases.iter().all(|p| *p < asked));
        // Spread: about a tenth of the hosts in each tenth of the interval.
        for k in 0..10u32 {
            let lo = asked * k / 10;
            let hi = asked * (k + 1) / 10;
            let n = phases.iter().filter(|p| **p >= lo && **p < hi).count();
            assert!((120..=280).contains(&n), "{n} hosts in tenth {k}");
        }
        // The same host always has the same phase.
        assert_eq!(spread_phase("hv00001", asked), phases[1]);
        // A small cluster's (the default interval) is not spread: retries as before.
        assert_eq!(spread_phase("hv00001", DEFAULT_HELLO), Duration::ZERO);
        for f in 1..=12 {
            assert_eq!(retry_after(f, "hv00001", DEFAULT_HELLO), hello_retry(f));
        }
        // A large one's first retry comes at the host's phase, the next every second.
        assert_eq!(
            retry_after(1, "hv00001", asked),
            phases[1].max(Duration::from_millis(200))
        );
        assert_eq!(retry_after(2, "hv00001", asked), Duration::from_secs(1));
    }

    #[test]
    fn failed_hellos_are_retried_quickly_then_every_second() {
        let ms = Duration::from_millis;
        let waits: Vec<_> = (1..=12).map(hello_retry).collect();
        let mut expected = vec![ms(200); 10];
        expected.extend([ms(1000), ms(1000)]);
        assert_eq!(waits, expected);
        assert_eq!(hello_retry(u32::MAX), ms(1000));
        // The warning comes after 2 s of failures.
        let before_warning: Duration = (1..WARN_AFTER_FAILURES).map(hello_retry).sum();
        assert_eq!(before_warning, ms(2000));
    }

    #[tokio::test(start_paused = true)]
    async fn a_start_waits_for_an_end_within_the_window() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        tx.send(report(ReportKind::Started, 1)).expect("send");
        tx.send(report(ReportKind::Executing, 2)).expect("send");
        let late = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(4)).await;
            late.send(report(ReportKind::Finished, 3)).expect("send");
        });
        let mut pending = vec![rx.recv().await.expect("first")];
        let t = tokio::time::Instant::now();
        gather(&mut rx, &mut pending, Duration::from_millis(10)).await;
        assert_eq!(
            kinds(&pending),
            vec![
                ReportKind::Started as i32,
                ReportKind::Executing as i32,
                ReportKind::Finished as i32
            ]
        );
        assert_eq!(
            t.elapsed(),
            Duration::from_millis(4),
            "sent as soon as the end came"
        );
    }

    /// A start goes alone once the window has passed without the end.
    #[tokio::test(start_paused = true)]
    async fn a_start_goes_alone_after_the_window() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        tx.send(report(ReportKind::Started, 1)).expect("send");
        tx.send(report(ReportKind::Executing, 2)).expect("send");
        let mut pending = vec![rx.recv().await.expect("first")];
        let t = tokio::time::Instant::now();
        gather(&mut rx, &mut pending, Duration::from_millis(10)).await;
        assert_eq!(pending.len(), 2);
        assert_eq!(t.elapsed(), Duration::from_millis(10));
        drop(tx);
    }

    /// Other reports (a suspension, usage, an end) do not wait.
    #[tokio::test(start_paused = true)]
    async fn other_reports_do_not_wait() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for (kind, seq) in [(ReportKind::State, 4), (ReportKind::Rusage, 5)] {
            tx.send(report(kind, seq)).expect("send");
            let mut pending = vec![rx.recv().await.expect("first")];
            let t = tokio::time::Instant::now();
            gather(&mut rx, &mut pending, Duration::from_millis(10)).await;
            assert_eq!(pending.len(), 1);
            assert_eq!(t.elapsed(), Duration::ZERO, "{kind:?}");
        }
    }
}
