//! The link to one remote cluster: one task that finds its master (the first of its
//! lsf.shared Servers whose mbatchd answers), polls it every `BASALT_MC_POLL_MS` for its
//! receive-jobs queues and the jobs we forwarded there, and carries forwards and job
//! controls — in order, so a poll after a forward's answer always lists that job.

use super::trust::McTrust;
use super::{LinkCmd, LinkNews, job_from_pb, queue_from_pb};
use crate::msg::Msg;
use basalt_proto::mbatchd as pb;
use basalt_runtime::AuthChannel;
use pb::mbatchd_cluster_client::MbatchdClusterClient;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::Code;
use tracing::{debug, warn};

type Client = MbatchdClusterClient<AuthChannel>;

/// How long one call to the remote mbatchd may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Run the link to `cluster` until the owner goes away.
pub(super) async fn run(
    cluster: String,
    servers: Vec<(String, SocketAddr)>,
    local: Option<IpAddr>,
    trust: Arc<McTrust>,
    poll: Duration,
    mut rx: mpsc::UnboundedReceiver<LinkCmd>,
    tx: crate::inbox::Inbox,
) {
    let mut current: Option<(String, Client)> = None;
    let mut tick = tokio::time::interval(poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let news = |n: LinkNews| {
        tx.send(Msg::McLink {
            cluster: cluster.clone(),
            news: n,
        })
        .is_ok()
    };
    loop {
        tokio::select! {
            cmd = rx.recv() => {
                let Some(cmd) = cmd else { return };
                if current.is_none() {
                    current = find_master(&servers, local, &trust).await.ok();
                }
                let Some((_, client)) = current.as_mut() else {
                    // Unreachable: the forward is sent again once the cluster answers.
                    continue;
                };
                match carry(client, cmd).await {
                    Ok(Some(n)) => {
                        if !news(n) {
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        debug!(cluster = %cluster, "call failed: {e}");
                        current = None;
                    }
                }
            }
            _ = tick.tick() => {
                if current.is_none() {
                    match find_master(&servers, local, &trust).await {
                        Ok(c) => current = Some(c),
                        Err((status, detail)) => {
                            if !news(LinkNews::Down { status, detail }) {
                                return;
                            }
                            continue;
                        }
                    }
                }
                let Some((master, client)) = current.as_mut() else { continue };
                match poll_once(client).await {
                    Ok((queues, jobs)) => {
                        if !news(LinkNews::Polled { master: master.clone(), queues, jobs }) {
                            return;
                        }
                    }
                    Err(s) => {
                        current = None;
                        if !news(LinkNews::Down { status: status_of(&s), detail: s.message().to_owned() }) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// "reject" for a refusal (key, protocol, not a remote cluster), "disc" otherwise.
fn status_of(s: &tonic::Status) -> &'static str {
    match s.code() {
        Code::Unauthenticated | Code::PermissionDenied | Code::FailedPrecondition => "reject",
        _ => "disc",
    }
}

/// A client of the mbatchd of the remote host `host` at `addr`.
fn client_for(
    host: &str,
    addr: SocketAddr,
    local: Option<IpAddr>,
    trust: &Arc<McTrust>,
) -> Option<Client> {
    let ch = basalt_runtime::channel(addr, CALL_TIMEOUT, local).ok()?;
    Some(
        MbatchdClusterClient::new(basalt_runtime::AuthService::new(
            ch,
            trust.authenticator(local).towards(host),
        ))
        .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
    )
}

/// The first master candidate whose mbatchd answers (a refusal is reported as such).
async fn find_master(
    servers: &[(String, SocketAddr)],
    local: Option<IpAddr>,
    trust: &Arc<McTrust>,
) -> Result<(String, Client), (&'static str, String)> {
    let mut last = (
        "disc",
        "no master candidate (lsf.shared Servers)".to_owned(),
    );
    for (name, addr) in servers {
        let Some(mut c) = client_for(name, *addr, local, trust) else {
            continue;
        };
        match c.cluster_info(pb::McInfoRequest {}).await {
            Ok(_) => return Ok((name.clone(), c)),
            Err(s) => {
                let status = status_of(&s);
                last = (status, format!("{name} ({addr}): {}", s.message()));
                if status == "reject" {
                    warn!("{}", last.1);
                    return Err(last);
                }
            }
        }
    }
    Err(last)
}

async fn poll_once(
    c: &mut Client,
) -> Result<
    (
        Vec<basalt_sched::mc::RemoteQueue>,
        Vec<basalt_sched::mc::RemoteJob>,
    ),
    tonic::Status,
> {
    let info = c.cluster_info(pb::McInfoRequest {}).await?.into_inner();
    let jobs = c.remote_jobs(pb::McJobsRequest {}).await?.into_inner();
    Ok((
        info.queues.into_iter().map(queue_from_pb).collect(),
        jobs.jobs.into_iter().map(job_from_pb).collect(),
    ))
}

/// Carry one order; its news for the owner, if any. An error: the connection is suspect.
async fn carry(c: &mut Client, cmd: LinkCmd) -> Result<Option<LinkNews>, tonic::Status> {
    match cmd {
        LinkCmd::Forward {
            key,
            attempt,
            queue,
            job_new,
            job_file,
        } => {
            let r = c
                .forward_job(pb::McForwardRequest {
                    job_id: key.0,
                    idx: key.1,
                    attempt,
                    queue,
                    job_new,
                    job_file,
                })
                .await?
                .into_inner();
            let answer = if r.accepted {
                Ok(r.remote_job_id)
            } else {
                Err(r.reason)
            };
            Ok(Some(LinkNews::Forwarded {
                key,
                attempt,
                answer,
            }))
        }
        LinkCmd::Control { key, signal } => {
            let r = c
                .control_job(pb::McControlRequest {
                    job_id: key.0,
                    idx: key.1,
                    signal: signal.clone(),
                })
                .await?
                .into_inner();
            if !r.error.is_empty() {
                warn!(job = key.0, "remote {signal}: {}", r.error);
            }
            Ok(None)
        }
    }
}
