//! The key both clusters trust (lsf.conf `BASALT_MC_KEY`, else this cluster's own key
//! file): every request between mbatchds of two clusters carries an inter-cluster
//! credential — a ticket of the inter-cluster domain, whose key is derived from that
//! key file with its own label, so no user's or daemon's credential can pass for one
//! (basalt_auth::cred) — naming the sending cluster and its master host, sealed for the
//! one request. The receiver's authentication layer checks the signatures, the time, the
//! seal (target, method and body, nonce never seen), that the cluster is one of its
//! RemoteClusters and — when lsf.shared gives the sending cluster's server addresses —
//! that the request comes from one of them.

use basalt_auth::key::KeySource;
use basalt_auth::{Authenticator, Identity, InterClusterTrust, Kind};
use basalt_config::Config;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

/// The MultiCluster key and what a request from another cluster must show.
#[derive(Debug)]
pub(crate) struct McTrust {
    keys: Arc<KeySource>,
    /// This cluster and its master host (what our credentials say).
    cluster: String,
    host: String,
    /// The remote clusters, and the addresses their requests may come from (empty: any).
    remotes: BTreeMap<String, Vec<IpAddr>>,
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
            keys: Arc::new(keys),
            cluster: config.cluster_name.clone(),
            host: host.to_owned(),
            remotes,
        }))
    }

    /// The credentials of this cluster's mbatchd towards other clusters, sent from
    /// `local`.
    pub(crate) fn authenticator(&self, local: Option<IpAddr>) -> Authenticator {
        Authenticator::with_key(
            self.keys.clone(),
            Identity {
                kind: Kind::InterCluster,
                uid: 0,
                gid: 0,
                user: "mbatchd".into(),
                host: self.host.clone(),
            },
            &self.cluster,
            local,
        )
    }

    /// What this cluster's verifier needs to accept other clusters' requests.
    pub(crate) fn verifier_trust(&self) -> InterClusterTrust {
        InterClusterTrust {
            keys: self.keys.clone(),
            remotes: self.remotes.clone(),
        }
    }

    /// The addresses other clusters' requests may come from (none known: every address).
    pub(crate) fn remote_addresses(&self) -> Option<Vec<IpAddr>> {
        if self.remotes.values().any(Vec::is_empty) {
            return None;
        }
        Some(self.remotes.values().flatten().copied().collect())
    }
}
