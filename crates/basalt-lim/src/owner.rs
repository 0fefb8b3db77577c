//! The LIM's owner task: holds the election core (`basalt-lim-core`) and this
//! host's load, serves the messages of the gRPC handlers, the sampler and the ELIMs,
//! and performs the core's effects (heartbeats, announcements, probes to other LIMs).

use crate::{Msg, Settings, elim, server};
use basalt_core::{LoadIndex, LoadVector};
use basalt_lim_core::{Effect, LimCore};
use basalt_proto::lim::lim_peer_client::LimPeerClient;
use basalt_runtime::AuthChannel as Channel;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tracing::{debug, info, warn};

/// The owner of the election core and of this host's load.
pub(crate) struct Owner {
    core: LimCore,
    s: Settings,
    tx: mpsc::Sender<Msg>,
    origin: Instant,
    sampled: LoadVector,
    elim_values: BTreeMap<String, Vec<(String, f64)>>,
    warned_names: BTreeSet<String>,
    clients: BTreeMap<String, LimPeerClient<Channel>>,
}

impl Owner {
    pub(crate) fn new(core: LimCore, s: Settings, tx: mpsc::Sender<Msg>) -> Owner {
        Owner {
            core,
            s,
            tx,
            origin: Instant::now(),
            sampled: LoadVector::default(),
            elim_values: BTreeMap::new(),
            warned_names: BTreeSet::new(),
            clients: BTreeMap::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<Msg>) {
        let now = self.now();
        let effects = self.core.start(now);
        self.perform(effects);
        let every = Duration::from_millis(self.core.tick_interval_ms());
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(msg) => self.handle(msg),
                    None => return,
                },
                _ = ticker.tick() => {
                    let now = self.now();
                    let effects = self.core.tick(now);
                    self.perform(effects);
                }
            }
        }
    }

    fn handle(&mut self, msg: Msg) {
        let now = self.now();
        // A LIM that was stopped catches up before it answers anything.
        let effects = self.core.wake(now);
        self.perform(effects);
        match msg {
            Msg::Heartbeat {
                from,
                load,
                info,
                locked,
                reply,
            } => {
                self.s.metrics.heartbeats_received.inc();
                let (r, effects) = self.core.on_heartbeat(now, &from, load, info, locked);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::Announce { from, epoch, reply } => {
                let (r, effects) = self.core.on_announce(now, &from, epoch);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::Probe { from, reply } => {
                let (r, effects) = self.core.on_probe(now, &from);
                let _ = reply.send(r);
                self.perform(effects);
            }
            Msg::ClusterInfo { reply } => {
                let _ = reply.send(self.cluster_info());
            }
            Msg::Hosts {
                filter,
                since,
                reply,
            } => {
                let _ = reply.send(server::hosts_reply(&self.core, &filter, since, now));
            }
            Msg::Metrics { reply } => {
                let _ = reply.send(self.metrics_snapshot());
            }
            Msg::Lock { seconds, reply } => {
                let r = match seconds {
                    Some(0) => self.core.lock(now, None),
                    Some(s) => self.core.lock(now, Some(u64::from(s) * 1000)),
                    None => self.core.unlock(now),
                };
                match r {
                    Ok(effects) => {
                        match seconds {
                            Some(s) => info!(seconds = s, "host locked (lsadmin limlock)"),
                            None => info!("host unlocked (lsadmin limunlock)"),
                        }
                        let _ = reply.send(Ok(()));
                        self.perform(effects);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
            Msg::HeartbeatResult(r) => {
                if r.is_none() {
                    self.s.metrics.heartbeats_failed.inc();
                }
                let effects = match r {
                    Some(r) => self.core.on_heartbeat_reply(now, r),
                    None => self.core.on_heartbeat_failed(now),
                };
                self.perform(effects);
            }
            Msg::AnnounceResult { to, reply } => {
                if let Some(reply) = reply {
                    let effects = self.core.on_announce_reply(now, &to, reply);
                    self.perform(effects);
                }
            }
            Msg::ProbeResults { id, results } => {
                let effects = self.core.on_probe_results(now, id, results);
                self.perform(effects);
            }
            Msg::Sample(load) => {
                self.sampled = load;
                self.publish_local(now);
            }
            Msg::Elim(elim::ElimEvent::Values { elim, values }) => {
                let mut accepted = Vec::new();
                for v in values {
                    if !self.s.elim_names.contains(&v.name) {
                        if self.warned_names.insert(v.name.clone()) {
                            warn!(%elim, name = %v.name, "ELIM reports an index that is neither built in nor a Numeric resource in lsf.shared; ignored");
                        }
                        continue;
                    }
                    if let Some(value) = v.value {
                        accepted.push((v.name, value));
                    }
                }
                debug!(%elim, ?accepted, "ELIM values");
                self.elim_values.insert(elim, accepted);
                self.publish_local(now);
            }
            Msg::Elim(elim::ElimEvent::Exited { elim }) => {
                self.elim_values.remove(&elim);
                self.publish_local(now);
            }
        }
    }

    /// The local load is the sampled vector with every ELIM's values applied.
    fn publish_local(&mut self, now: u64) {
        let mut load = self.sampled.clone();
        for values in self.elim_values.values() {
            load.apply_overrides(values.iter().map(|(n, v)| (n.as_str(), *v)));
        }
        // ELIMs may not override what is static.
        load.builtin[LoadIndex::R15s.position()] =
            load.builtin[LoadIndex::R15s.position()].map(|v| v.max(0.0));
        let effects = self.core.set_local(now, load, self.s.info.clone());
        self.perform(effects);
    }

    fn metrics_snapshot(&self) -> crate::metrics::Snapshot {
        use basalt_lim_core::HostStatus;
        let mut hosts = [0u32; 5];
        for h in self.core.hosts() {
            let i = match h.status {
                HostStatus::Ok => 0,
                HostStatus::Busy => 1,
                HostStatus::Unavail => 2,
                HostStatus::Unknown => 3,
                HostStatus::LockedUser => 4,
            };
            hosts[i] += 1;
        }
        crate::metrics::Snapshot {
            master: self.core.is_master(),
            epoch: self.core.epoch(),
            hosts,
        }
    }

    fn cluster_info(&self) -> basalt_proto::lim::ClusterInfoReply {
        let c = &self.s.config;
        basalt_proto::lim::ClusterInfoReply {
            cluster: c.cluster_name.clone(),
            master: self.core.master().unwrap_or_default().to_owned(),
            epoch: self.core.epoch(),
            host: self.s.me.clone(),
            admins: c.cluster.admins.clone(),
            hosts: u32::try_from(c.cluster.hosts.len()).unwrap_or(u32::MAX),
            servers: u32::try_from(c.cluster.hosts.iter().filter(|h| h.server).count())
                .unwrap_or(u32::MAX),
            version: basalt_core::version::product_line(),
        }
    }

    fn client(&mut self, host: &str) -> Option<LimPeerClient<Channel>> {
        if let Some(c) = self.clients.get(host) {
            return Some(c.clone());
        }
        let timeout = Duration::from_millis(self.s.timing.probe_timeout_ms);
        match basalt_runtime::lim_peer_channel(&self.s.config, host, timeout, &self.s.auth) {
            Ok(c) => {
                // In a large cluster a master does not hold a connection to each of
                // the hosts it announces to once a minute: ten thousand of them would
                // double its descriptors and memory.
                if self.core.keeps_contact(host) {
                    self.clients.insert(host.to_owned(), c.clone());
                }
                Some(c)
            }
            Err(e) => {
                warn!(%host, "cannot address LIM: {e}");
                None
            }
        }
    }

    fn perform(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::SendHeartbeat {
                    to,
                    load,
                    info,
                    locked,
                } => {
                    let Some(mut client) = self.client(&to) else {
                        continue;
                    };
                    self.s.metrics.heartbeats_sent.inc();
                    let tx = self.tx.clone();
                    let req = basalt_proto::lim::HeartbeatRequest {
                        host: self.s.me.clone(),
                        info: Some(basalt_proto::host_info_to_wire(&info)),
                        load: basalt_proto::load_to_wire(&load),
                        locked,
                    };
                    tokio::spawn(async move {
                        let r = client.heartbeat(req).await.ok().map(|r| {
                            let r = r.into_inner();
                            basalt_lim_core::HeartbeatReply {
                                accepted: r.accepted,
                                master: non_empty(r.master),
                                epoch: r.epoch,
                            }
                        });
                        let _ = tx.send(Msg::HeartbeatResult(r)).await;
                    });
                }
                Effect::Announce { to, epoch } => {
                    for host in to {
                        let Some(mut client) = self.client(&host) else {
                            continue;
                        };
                        let tx = self.tx.clone();
                        let req = basalt_proto::lim::AnnounceRequest {
                            master: self.s.me.clone(),
                            epoch,
                        };
                        tokio::spawn(async move {
                            let reply = client.announce(req).await.ok().map(|r| {
                                let r = r.into_inner();
                                basalt_lim_core::AnnounceReply {
                                    accepted: r.accepted,
                                    master: non_empty(r.master),
                                    epoch: r.epoch,
                                }
                            });
                            let _ = tx.send(Msg::AnnounceResult { to: host, reply }).await;
                        });
                    }
                }
                Effect::Probe { id, hosts } => {
                    debug!(id, ?hosts, "probing");
                    let full = Duration::from_millis(self.s.timing.probe_timeout_ms);
                    // The master this slave follows has been silent for the takeover
                    // limit (or, in a handover, is ranked after us): its answer gets a
                    // shorter deadline (see `silent_master_deadline`).
                    let silent_master = (!self.core.is_master())
                        .then(|| self.core.master())
                        .flatten()
                        .filter(|m| !basalt_core::same_host(m, self.core.me()))
                        .map(str::to_owned);
                    let short = silent_master_deadline(&self.s.timing);
                    let targets: Vec<_> = hosts
                        .into_iter()
                        .map(|h| {
                            let deadline = if silent_master
                                .as_deref()
                                .is_some_and(|m| basalt_core::same_host(m, &h))
                            {
                                short
                            } else {
                                full
                            };
                            // A fresh channel: a cached one to a host that just
                            // died may sit in reconnect back-off and turn a
                            // refused connection into a full PROBE_TIMEOUT wait.
                            let c = basalt_runtime::lim_peer_channel(
                                &self.s.config,
                                &h,
                                deadline,
                                &self.s.auth,
                            )
                            .ok();
                            (h, c, deadline)
                        })
                        .collect();
                    let tx = self.tx.clone();
                    let me = self.s.me.clone();
                    tokio::spawn(async move {
                        let probes = targets.into_iter().map(|(host, client, deadline)| {
                            let me = me.clone();
                            async move {
                                let Some(mut client) = client else {
                                    return (host, None);
                                };
                                let req = basalt_proto::lim::ProbeRequest { from: me };
                                // An application-level health call with a deadline,
                                // answered by the owner task: a hung LIM whose socket
                                // still accepts connections does not answer it.
                                let mut req = tonic::Request::new(req);
                                req.set_timeout(deadline);
                                let r = tokio::time::timeout(deadline, client.probe(req))
                                    .await
                                    .ok()
                                    .and_then(Result::ok)
                                    .map(|r| {
                                        let r = r.into_inner();
                                        basalt_lim_core::ProbeReply {
                                            host: r.host,
                                            is_master: r.is_master,
                                            master: non_empty(r.master),
                                            epoch: r.epoch,
                                            master_heard_ago_ms: r.master_heard_ago_ms,
                                        }
                                    });
                                (host, r)
                            }
                        });
                        let results = futures_join_all(probes).await;
                        let _ = tx.send(Msg::ProbeResults { id, results }).await;
                    });
                }
                Effect::MasterChanged {
                    master,
                    epoch,
                    me_is_master,
                } => {
                    info!(
                        master = master.as_deref().unwrap_or("-"),
                        epoch, me_is_master, "master changed"
                    );
                    self.s.master.send_replace(master);
                }
                Effect::CatchingUp { silent_ms } => {
                    warn!(
                        silent_ms,
                        "this LIM did not run for a while (stopped or starved): forgetting the master and catching up"
                    );
                }
                Effect::Stalled { silent_ms } => {
                    warn!(
                        silent_ms,
                        "this LIM did not run for a while (stopped or starved); it cannot be master, so it keeps its master"
                    );
                }
                Effect::HostStatusChanged { host, status } => {
                    info!(%host, ?status, "host status changed");
                }
            }
        }
    }
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Await every future concurrently, keeping their order.
async fn futures_join_all<F>(futs: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        if let Ok(v) = h.await {
            out.push(v);
        }
    }
    out
}

/// The probe deadline for the master a slave follows when it probes (the takeover
/// probe, after `MASTER_INACTIVITY_LIMIT` intervals without an announcement from it or an
/// answer to our heartbeats): a quarter of an exchange interval (at least 200 ms), at most
/// `PROBE_TIMEOUT`. A running LIM's core answers a probe in milliseconds; this master has
/// already been silent for the whole takeover limit, so waiting the full `PROBE_TIMEOUT`
/// for it only delays the failover from a hung master (its port still accepts
/// connections). The other hosts keep the full deadline: their answers (a live
/// lower-ranked candidate, a witness that heard the master recently) are what stop a
/// takeover when the master lives and only our link to it is down.
pub(crate) fn silent_master_deadline(t: &basalt_lim_core::Timing) -> Duration {
    let quarter = Duration::from_millis(t.exinterval_ms / 4).max(Duration::from_millis(200));
    quarter.min(Duration::from_millis(t.probe_timeout_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_silent_master_gets_a_quarter_interval_within_the_probe_timeout() {
        let ms = Duration::from_millis;
        let t = |ex, probe| basalt_lim_core::Timing {
            exinterval_ms: ex,
            probe_timeout_ms: probe,
            ..basalt_lim_core::Timing::default()
        };
        // Defaults (EXINTERVAL 1 s, PROBE_TIMEOUT 2 s).
        assert_eq!(
            silent_master_deadline(&basalt_lim_core::Timing::default()),
            ms(250)
        );
        // Short intervals: at least 200 ms; never over PROBE_TIMEOUT.
        assert_eq!(silent_master_deadline(&t(200, 1000)), ms(200));
        assert_eq!(silent_master_deadline(&t(2000, 300)), ms(300));
        assert_eq!(silent_master_deadline(&t(100, 150)), ms(150));
    }
}
