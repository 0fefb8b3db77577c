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

/// What LIMs ask each other (daemon credentials only).
#[tonic::async_trait]
impl LimPeer for LimService {
    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        self.check_lim(&request, &request.get_ref().host).await?;
        let r = request.into_inner();
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
        let r = request.into_inner();
        let since = (r.since_version > 0).then_some((r.since_table, r.since_version));
        let filter = r.hosts;
        Ok(Response::new(
            self.ask(|reply| Msg::Hosts {
                filter,
                since,
                reply,
            })
            .await?,
        ))
    }
}

/// The master's host table as a reply — with `since` (the table and version a poller
/// saw) only the hosts changed after it, when the table is still the same (this
/// term's: its id is the epoch); a non-master answers with the master's name only.
pub(crate) fn hosts_reply(
    core: &LimCore,
    filter: &[String],
    since: Option<(u64, u64)>,
    now: u64,
) -> pb::HostsReply {
    if !core.is_master() {
        return pb::HostsReply {
            is_master: false,
            master: core.master().unwrap_or_default().to_owned(),
            ..Default::default()
        };
    }
    let table = core.epoch();
    let delta = since.and_then(|(t, v)| (t == table && v <= core.table_version()).then_some(v));
    let views: Box<dyn Iterator<Item = &basalt_lim_core::HostView>> = match delta {
        Some(v) => Box::new(core.changed_since(v)),
        None => Box::new(core.hosts()),
    };
    let hosts = views
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
        version: core.table_version(),
        table,
        complete: delta.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::{HostInfo, LoadVector};
    use basalt_lim_core::{CoreConfig, CoreHosts, Effect, HostEntry, Timing};
    use std::sync::Arc;

    fn info(name: &str) -> HostInfo {
        HostInfo {
            name: name.into(),
            ncpus: 2,
            server: true,
            ..Default::default()
        }
    }

    /// hostA, master of hostA and hostB.
    fn master() -> LimCore {
        let entry = |name: &str, candidate| HostEntry {
            name: name.into(),
            server: true,
            candidate,
            busy_thresholds: Default::default(),
        };
        let hosts =
            CoreHosts::new(vec![entry("hostA", true), entry("hostB", false)], &[]).expect("hosts");
        let mut core = LimCore::new(CoreConfig {
            me: "hostA".into(),
            hosts: Arc::new(hosts),
            me_candidate: true,
            timing: Timing::default(),
            decreasing_externals: Default::default(),
            load_reports_per_sec: basalt_lim_core::DEFAULT_LOAD_REPORTS_PER_SEC,
        })
        .expect("core");
        core.set_local(0, LoadVector::default(), info("hostA"));
        let id = core
            .start(0)
            .into_iter()
            .find_map(|e| match e {
                Effect::Probe { id, .. } => Some(id),
                _ => None,
            })
            .expect("a probe");
        core.on_probe_results(0, id, vec![("hostB".into(), None)]);
        assert!(core.is_master());
        core
    }

    /// Issue 51: mbatchd's poll gives the table and version it saw and gets only the
    /// hosts changed since; another table (another term) gets every host.
    #[test]
    fn a_poll_since_a_version_gets_only_the_hosts_changed_since() {
        let mut core = master();
        let all = hosts_reply(&core, &[], None, 0);
        assert!(all.complete && all.is_master);
        assert_eq!(all.hosts.len(), 2);
        assert_eq!(all.table, core.epoch());
        let none = hosts_reply(&core, &[], Some((all.table, all.version)), 0);
        assert!(!none.complete);
        assert!(none.hosts.is_empty());
        let (reply, _) =
            core.on_heartbeat(100, "hostB", LoadVector::default(), info("hostB"), false);
        assert!(reply.accepted);
        let one = hosts_reply(&core, &[], Some((all.table, all.version)), 100);
        assert!(!one.complete);
        let names: Vec<&str> = one
            .hosts
            .iter()
            .filter_map(|h| h.info.as_ref().map(|i| i.name.as_str()))
            .collect();
        assert_eq!(names, vec!["hostB"]);
        assert!(one.version > all.version);
        let other = hosts_reply(&core, &[], Some((all.table + 1, one.version)), 100);
        assert!(other.complete);
        assert_eq!(other.hosts.len(), 2);
    }
}
