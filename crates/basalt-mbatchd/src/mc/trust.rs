//! The key both clusters trust (lsf.conf `BASALT_MC_KEY`, else this cluster's own key):
//! every request between mbatchds of two clusters carries a credential sealed with it
//! (gRPC metadata `basalt-mc-cred-bin`) naming the sending cluster and its master host.
//! The receiver checks the seal, the time (5 minutes either side), that the nonce is new,
//! that the cluster is one of its RemoteClusters, and — when lsf.shared gives the sending
//! cluster's server addresses — that the request comes from one of them.

use basalt_auth::cred::{self, ReplayCache};
use basalt_auth::key::KeySource;
use basalt_auth::{CRED_TTL, Identity, Kind};
use basalt_config::Config;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Mutex;
use tonic::metadata::{BinaryMetadataValue, MetadataMap};

/// gRPC metadata entry carrying the sealed MultiCluster credential.
pub(crate) const MC_CRED_METADATA: &str = "basalt-mc-cred-bin";

/// The MultiCluster key and what a request from another cluster must show.
#[derive(Debug)]
pub(crate) struct McTrust {
    keys: KeySource,
    /// This cluster and its master host (what our credentials say).
    cluster: String,
    host: String,
    /// The remote clusters, and the addresses their requests may come from (empty: any).
    remotes: BTreeMap<String, Vec<IpAddr>>,
    replay: Mutex<ReplayCache>,
}

impl McTrust {
    /// The trust of `config` for master `host`, given the remote clusters' master
    /// candidates ([`super::remote_servers`]); None when it has no RemoteClusters.
    pub(crate) fn load(
        config: &Config,
        host: &str,
        servers: &[super::RemoteServers],
    ) -> Result<Option<McTrust>, String> {
        if config.cluster.remote_clusters.is_empty() {
            return Ok(None);
        }
        let path =
            basalt_config::mc_key_path(config).unwrap_or_else(|| basalt_auth::key_path(config));
        let keys = KeySource::open(&path, true).map_err(|e| format!("MultiCluster key: {e}"))?;
        let remotes = servers
            .iter()
            .map(|(c, s)| (c.clone(), s.iter().map(|(_, a)| a.ip()).collect()))
            .collect();
        Ok(Some(McTrust {
            keys,
            cluster: config.cluster_name.clone(),
            host: host.to_owned(),
            remotes,
            replay: Mutex::new(ReplayCache::default()),
        }))
    }

    /// Put a fresh credential of this cluster into `md`.
    pub(crate) fn stamp(&self, md: &mut MetadataMap) -> Result<(), String> {
        let who = Identity {
            kind: Kind::Daemon,
            uid: 0,
            gid: 0,
            user: "mbatchd".into(),
            host: self.host.clone(),
        };
        let c = cred::mint(&who, &self.cluster, cred::now_ms()).map_err(|e| e.to_string())?;
        let bytes = cred::seal(&self.keys.current(), &c).map_err(|e| e.to_string())?;
        md.insert_bin(MC_CRED_METADATA, BinaryMetadataValue::from_bytes(&bytes));
        if let Ok(v) = basalt_proto::protocol_text().parse() {
            md.insert(basalt_proto::PROTOCOL_METADATA, v);
        }
        Ok(())
    }

    /// The cluster a request comes from, or why it is refused.
    pub(crate) fn verify(&self, md: &MetadataMap, from: Option<IpAddr>) -> Result<String, String> {
        let bytes = md
            .get_bin(MC_CRED_METADATA)
            .and_then(|v| v.to_bytes().ok())
            .ok_or("no MultiCluster credential")?;
        let claimed = cred::peek(&bytes).map(|c| c.cluster).unwrap_or_default();
        let c = cred::open(&self.keys.current(), &bytes).map_err(|e| {
            format!(
                "cluster <{claimed}> is not trusted: {e} (both clusters need the same key, lsf.conf BASALT_MC_KEY)"
            )
        })?;
        let now = cred::now_ms();
        let ttl = CRED_TTL.as_millis() as u64;
        if !cred::fresh(c.issued_ms, now, ttl) {
            return Err(format!(
                "credential of cluster <{}> is {} s off this host's clock",
                c.cluster,
                c.issued_ms.abs_diff(now) / 1000
            ));
        }
        let Some(addrs) = self.remotes.get(&c.cluster) else {
            return Err(format!(
                "cluster <{}> is not a remote cluster of <{}> (lsf.cluster RemoteClusters)",
                c.cluster, self.cluster
            ));
        };
        if !addrs.is_empty()
            && let Some(ip) = from
            && !addrs.contains(&ip)
        {
            return Err(format!(
                "request of cluster <{}> from {ip}, which is none of its servers (lsf.shared)",
                c.cluster
            ));
        }
        let mut replay = match self.replay.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        replay
            .admit(&c.nonce, c.issued_ms.saturating_add(ttl), now)
            .map_err(|e| e.to_string())?;
        Ok(c.cluster)
    }
}

/// A tonic interceptor stamping every request with the MultiCluster credential.
#[derive(Debug, Clone)]
pub(crate) struct McStamp(pub(crate) std::sync::Arc<McTrust>);

impl tonic::service::Interceptor for McStamp {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        self.0
            .stamp(req.metadata_mut())
            .map_err(|e| tonic::Status::unauthenticated(format!("User permission denied: {e}")))?;
        Ok(req)
    }
}
