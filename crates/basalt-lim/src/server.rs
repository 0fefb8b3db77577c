//! The `basalt.lim.v1.Lim` (commands) and `LimPeer` (other LIMs) gRPC services:
//! translate requests into messages for the owner task and wait for its answer.

use crate::{Handle, Msg};
use basalt_lim_core::{HostStatus, LimCore};
use basalt_proto::lim::{self as pb, lim_peer_server::LimPeer, lim_server::Lim};
use basalt_runtime::Need;
use tokio::sync::oneshot;
use tonic::{Request, Response, Status};

/// The LIM gRPC service.
#[derive(Debug, Clone)]
pub struct LimService {
    handle: Handle,
    auth: basalt_runtime::Verifier,
}

impl LimService {
    pub(crate) fn new(handle: Handle, auth: basalt_runtime::Verifier) -> LimService {
        LimService { handle, auth }
    }

    /// The request must come from the LIM of host `claimed`.
    async fn check_lim<T>(&self, request: &Request<T>, claimed: &str) -> Result<(), Status> {
        let who = self.auth.verify(request, Need::Daemon).await?;
        if !basalt_core::same_host(&who.host, claimed) {
            tracing::warn!(from = %who.host, %claimed, "LIM request claims another host");
            return Err(Status::permission_denied(basalt_auth::PERMISSION_DENIED));
        }
        Ok(())
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Msg) -> Result<T, Status> {
        let (tx, rx) = oneshot::channel();
        self.handle
            .tx
            .send(make(tx))
            .await
            .map_err(|_| Status::unavailable("LIM is shutting down"))?;
        rx.await
            .map_err(|_| Status::unavailable("LIM is shutting down"))
    }
}

fn check_protocol(p: Option<&basalt_proto::common::ProtocolVersion>) -> Result<(), Status> {
    if basalt_proto::compatible(p) {
        Ok(())
    } else {
        Err(Status::failed_precondition(format!(
            "incompatible protocol version {:?}; this LIM speaks {}.{}",
            p.map(|p| (p.major, p.minor)),
            basalt_proto::PROTOCOL.major,
            basalt_proto::PROTOCOL.minor
        )))
    }
}

/// What LIMs ask each other (daemon credentials only).
#[tonic::async_trait]
impl LimPeer for LimService {
    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        self.check_lim(&request, &request.get_ref().host).await?;
        let r = request.into_inner();
        check_protocol(r.protocol.as_ref())?;
        let info = r
            .info
            .as_ref()
            .map(basalt_proto::host_info_from_wire)
            .ok_or_else(|| Status::invalid_argument("heartbeat without host information"))?;
        let load = basalt_proto::load_from_wire(&r.load);
        let reply = self
            .ask(|reply| Msg::Heartbeat {
                from: r.host,
                load,
                info,
                locked: r.locked,
                reply,
            })
            .await?;
        Ok(Response::new(pb::HeartbeatReply {
            accepted: reply.accepted,
            master: reply.master.unwrap_or_default(),
            epoch: reply.epoch,
        }))
    }

    async fn announce(
        &self,
        request: Request<pb::AnnounceRequest>,
    ) -> Result<Response<pb::AnnounceReply>, Status> {
        self.check_lim(&request, &request.get_ref().master).await?;
        let r = request.into_inner();
        check_protocol(r.protocol.as_ref())?;
        let reply = self
            .ask(|reply| Msg::Announce {
                from: r.master,
                epoch: r.epoch,
                reply,
            })
            .await?;
        Ok(Response::new(pb::AnnounceReply {
            accepted: reply.accepted,
            master: reply.master.unwrap_or_default(),
            epoch: reply.epoch,
        }))
    }

    async fn probe(
        &self,
        request: Request<pb::ProbeRequest>,
    ) -> Result<Response<pb::ProbeReply>, Status> {
        self.check_lim(&request, &request.get_ref().from).await?;
        let r = request.into_inner();
        check_protocol(r.protocol.as_ref())?;
        let reply = self
            .ask(|reply| Msg::Probe {
                from: r.from,
                reply,
            })
            .await?;
        Ok(Response::new(pb::ProbeReply {
            host: reply.host,
            is_master: reply.is_master,
            master: reply.master.unwrap_or_default(),
            epoch: reply.epoch,
            master_heard_ago_ms: reply.master_heard_ago_ms,
        }))
    }
}

/// What commands ask.
#[tonic::async_trait]
impl Lim for LimService {
    async fn cluster_info(
        &self,
        request: Request<pb::ClusterInfoRequest>,
    ) -> Result<Response<pb::ClusterInfoReply>, Status> {
        self.auth.verify(&request, Need::UserOrDaemon).await?;
        Ok(Response::new(
            self.ask(|reply| Msg::ClusterInfo { reply }).await?,
        ))
    }

    async fn hosts(
        &self,
        request: Request<pb::HostsRequest>,
    ) -> Result<Response<pb::HostsReply>, Status> {
        self.auth.verify(&request, Need::UserOrDaemon).await?;
        let filter = request.into_inner().hosts;
        Ok(Response::new(
            self.ask(|reply| Msg::Hosts { filter, reply }).await?,
        ))
    }
}

/// The master's host table as a reply; a non-master answers with the master's name only.
pub(crate) fn hosts_reply(core: &LimCore, filter: &[String], now: u64) -> pb::HostsReply {
    if !core.is_master() {
        return pb::HostsReply {
            is_master: false,
            master: core.master().unwrap_or_default().to_owned(),
            hosts: Vec::new(),
        };
    }
    let hosts = core
        .hosts()
        .filter(|h| filter.is_empty() || filter.iter().any(|f| basalt_core::same_host(f, &h.name)))
        .map(|h| pb::HostRecord {
            has_info: h.info.is_some(),
            info: Some(
                h.info
                    .as_ref()
                    .map(basalt_proto::host_info_to_wire)
                    .unwrap_or_else(|| basalt_proto::common::HostInfo {
                        name: h.name.clone(),
                        ..Default::default()
                    }),
            ),
            load: h
                .load
                .as_ref()
                .map(basalt_proto::load_to_wire)
                .unwrap_or_default(),
            status: match h.status {
                HostStatus::Ok => pb::HostStatus::Ok,
                HostStatus::Busy => pb::HostStatus::Busy,
                HostStatus::Unavail => pb::HostStatus::Unavail,
                HostStatus::Unknown => pb::HostStatus::Unknown,
                HostStatus::LockedUser => pb::HostStatus::LockedUser,
            } as i32,
            busy: h.busy.clone(),
            thresholds: core
                .busy_thresholds(&h.name)
                .map(|t| {
                    t.iter()
                        .map(|(name, value)| basalt_proto::common::LoadValue {
                            name: name.clone(),
                            value: *value,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            age_ms: h.last_heard_ms.map(|t| now.saturating_sub(t)).unwrap_or(0),
        })
        .collect();
    pb::HostsReply {
        is_master: true,
        master: core.master().unwrap_or_default().to_owned(),
        hosts,
    }
}
