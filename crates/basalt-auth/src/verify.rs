//! The server side: every daemon checks each request before acting on it.
//!
//! The checks are made by the authentication layer ([`crate::layer`]) in front of a
//! daemon's services, in two steps: [`Verifier::check_headers`] on the request's
//! metadata alone, before a byte of its body is read (a request without a good
//! credential costs the daemon no memory), then [`Verifier::finish`] with the body's
//! binding, which also takes the seal's nonce into the replay cache. The layer gives the
//! outcome to the handler ([`Verified`] in the request's extensions), which asks for it
//! with [`Verifier::verify`].

use crate::cred::{self, kind_name};
use crate::eauth::EauthServer;
use crate::key::KeySource;
use crate::replay::ReplayCache;
use crate::{AuthError, CRED_METADATA, EAUTH_METADATA, Identity, Kind, PERMISSION_DENIED};
use basalt_proto::common::EauthData;
use prost::Message;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tonic::metadata::MetadataMap;
use tonic::{Request, Status};

/// What a request must prove: which credential domains an endpoint accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A user of the cluster (the commands' services).
    User,
    /// A daemon of the host it claims to be (the peer services).
    Daemon,
    /// A user or a daemon (what both ask: the LIM's cluster and host information).
    UserOrDaemon,
    /// Another cluster's mbatchd (the MultiCluster service).
    InterCluster,
}

impl Need {
    /// The credential kinds this need accepts.
    pub fn kinds(self) -> &'static [Kind] {
        match self {
            Need::User => &[Kind::User],
            Need::Daemon => &[Kind::Daemon],
            Need::UserOrDaemon => &[Kind::User, Kind::Daemon],
            Need::InterCluster => &[Kind::InterCluster],
        }
    }

    /// Does a proven identity of `kind` satisfy this need?
    pub fn accepts(self, kind: Kind) -> bool {
        self.kinds().contains(&kind)
    }
}

/// Who may speak for another cluster (MultiCluster): the key both clusters trust
/// (lsf.conf `BASALT_MC_KEY`, else the cluster's own key file: its inter-cluster domain
/// key is never a user's or a daemon's) and, for each remote cluster, the addresses its
/// requests may come from (empty: any).
#[derive(Debug)]
pub struct InterClusterTrust {
    pub keys: Arc<KeySource>,
    pub remotes: BTreeMap<String, Vec<IpAddr>>,
}

#[derive(Debug)]
struct Inner {
    keys: Arc<KeySource>,
    cluster: String,
    /// The host this daemon serves: a seal must name it.
    host: String,
    hosts: Arc<crate::HostTable>,
    ticket_ttl_ms: u64,
    seal_ttl_ms: u64,
    replay: Mutex<ReplayCache>,
    owner_only: Option<u32>,
    eauth: Option<EauthServer>,
    inter_cluster: Option<InterClusterTrust>,
}

/// Checks credentials; cheap to clone (one replay cache per daemon).
#[derive(Debug, Clone)]
pub struct Verifier {
    inner: Arc<Inner>,
}

/// A request that passed its checks: who asks, and for an inter-cluster request the
/// cluster it speaks for. The authentication layer puts it into the request's
/// extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub identity: Identity,
    /// The remote cluster of an inter-cluster credential (empty otherwise).
    pub cluster: String,
}

/// The outcome of [`Verifier::check_headers`]: good so far; the body's binding and the
/// nonce are still to be checked.
#[derive(Debug)]
pub struct Pending {
    verified: Verified,
    /// None for eauth, which binds nothing (replay is eauth's business).
    seal: Option<PendingSeal>,
}

#[derive(Debug)]
struct PendingSeal {
    binding: Vec<u8>,
    nonce: Vec<u8>,
    expires_ms: u64,
}

impl Pending {
    /// Who the credential names (not yet final: see [`Verifier::finish`]).
    pub fn who(&self) -> &Identity {
        &self.verified.identity
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl Verifier {
    /// `host`: the host whose daemon checks (what request seals must name). `hosts`:
    /// every cluster host and its address. `owner_only`: the uid of a personal cluster's
    /// owner (None when the daemons run as root). `eauth`: the `eauth -s` that vouches
    /// for users when `LSF_AUTH=eauth`. Replays are remembered in memory only until
    /// [`Verifier::remember_in`].
    pub fn new(
        keys: Arc<KeySource>,
        cluster: &str,
        host: &str,
        hosts: Arc<crate::HostTable>,
        owner_only: Option<u32>,
        eauth: Option<EauthServer>,
    ) -> Verifier {
        Verifier {
            inner: Arc::new(Inner {
                keys,
                cluster: cluster.to_owned(),
                host: host.to_owned(),
                hosts,
                ticket_ttl_ms: crate::TICKET_TTL.as_millis() as u64,
                seal_ttl_ms: crate::SEAL_TTL.as_millis() as u64,
                replay: Mutex::new(ReplayCache::default()),
                owner_only,
                eauth,
                inter_cluster: None,
            }),
        }
    }

    fn inner_mut(&mut self) -> &mut Inner {
        // Only called while building, before the verifier is cloned or shared.
        Arc::get_mut(&mut self.inner)
            .unwrap_or_else(|| unreachable!("a verifier is configured before it is shared"))
    }

    /// Keep the nonces of accepted seals in `dir` (a local directory of this daemon's),
    /// so that a restarted daemon, or another process of it, still refuses them
    /// ([`ReplayCache::persistent`]). Call before the verifier is cloned.
    pub fn remember_in(mut self, dir: &Path) -> Result<Verifier, AuthError> {
        let cache = ReplayCache::persistent(dir, cred::now_ms())?;
        *self
            .inner_mut()
            .replay
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = cache;
        Ok(self)
    }

    /// How long a request seal stays good either side of this host's clock (default
    /// [`crate::SEAL_TTL`]). Call before the verifier is cloned.
    pub fn with_seal_ttl(mut self, ttl: std::time::Duration) -> Verifier {
        self.inner_mut().seal_ttl_ms = ttl.as_millis() as u64;
        self
    }

    /// Accept inter-cluster credentials (MultiCluster) as `trust` says. Call before the
    /// verifier is cloned.
    pub fn with_inter_cluster(mut self, trust: InterClusterTrust) -> Verifier {
        self.inner_mut().inter_cluster = Some(trust);
        self
    }

    /// The host this verifier serves.
    pub fn host(&self) -> &str {
        &self.inner.host
    }

    fn host_addr(&self, host: &str) -> Option<IpAddr> {
        self.inner.hosts.addr_of(host)
    }

    fn host_at(&self, ip: IpAddr) -> Option<&str> {
        self.inner.hosts.host_at(ip)
    }

    fn owner_check(&self, who: &Identity) -> Result<(), AuthError> {
        match self.inner.owner_only {
            Some(o) if who.uid != o && who.kind == Kind::User => Err(AuthError::Refused(format!(
                "user {} (uid {}) is not the owner (uid {o}) of this personal cluster",
                who.user, who.uid
            ))),
            _ => Ok(()),
        }
    }

    /// Check the credential in `md` of a request from `peer` at `now_ms`, as far as it can
    /// be checked without the body: signatures, domain (`need`), cluster, time, host and
    /// address, target, personal-cluster owner.
    pub fn check_credential(
        &self,
        md: &MetadataMap,
        peer: Option<SocketAddr>,
        need: Need,
        now_ms: u64,
    ) -> Result<Pending, AuthError> {
        let raw = md
            .get_bin(CRED_METADATA)
            .ok_or_else(|| AuthError::Refused("no credential".into()))?
            .to_bytes()
            .map_err(|_| AuthError::Refused("credential not in base64".into()))?;
        let inter = need == Need::InterCluster;
        let keys = if inter {
            match &self.inner.inter_cluster {
                Some(t) => &t.keys,
                None => {
                    return Err(AuthError::Refused(
                        "an inter-cluster request, and this cluster has no RemoteClusters".into(),
                    ));
                }
            }
        } else {
            &self.inner.keys
        };
        let claimed = cred::peek(&raw).map(|c| c.cluster).unwrap_or_default();
        let opened = cred::open(&keys.current(), &raw, need.kinds()).map_err(|e| {
            // A signature that does not verify: the clusters hold different keys (a
            // credential of another kind is refused for its kind, before any key).
            let key_problem = matches!(&e, AuthError::Refused(r)
                if r.contains("signature") || r.contains("key this host does not have"));
            if inter && key_problem {
                AuthError::Refused(format!(
                    "cluster <{claimed}> is not trusted: {e} (both clusters need the same key, lsf.conf BASALT_MC_KEY)"
                ))
            } else if inter {
                AuthError::Refused(format!("cluster <{claimed}>: {e}"))
            } else {
                e
            }
        })?;
        let c = &opened.ticket;
        let who = cred::identity(c, opened.kind);
        let mut cluster = String::new();
        if inter {
            let remotes = self
                .inner
                .inter_cluster
                .as_ref()
                .map(|t| &t.remotes)
                .ok_or_else(|| AuthError::Refused("no MultiCluster trust".into()))?;
            let Some(addrs) = remotes.get(&c.cluster) else {
                return Err(AuthError::Refused(format!(
                    "cluster <{}> is not a remote cluster of <{}> (lsf.cluster RemoteClusters)",
                    c.cluster, self.inner.cluster
                )));
            };
            if !addrs.is_empty()
                && let Some(ip) = peer.map(|p| canonical(p.ip()))
                && !addrs.iter().any(|a| canonical(*a) == ip)
            {
                return Err(AuthError::Refused(format!(
                    "request of cluster <{}> from {ip}, which is none of its servers (lsf.shared)",
                    c.cluster
                )));
            }
            cluster = c.cluster.clone();
        } else {
            if c.cluster != self.inner.cluster {
                return Err(AuthError::Refused(format!(
                    "credential of cluster {:?}, not {:?}",
                    c.cluster, self.inner.cluster
                )));
            }
            let addr = self.host_addr(&who.host).ok_or_else(|| {
                AuthError::Refused(format!("host {} is not in the cluster", who.host))
            })?;
            let Some(peer) = peer else {
                return Err(AuthError::Refused("request without a peer address".into()));
            };
            if canonical(peer.ip()) != addr {
                return Err(AuthError::Refused(format!(
                    "credential of host {} ({addr}) sent from {}",
                    who.host,
                    peer.ip()
                )));
            }
        }
        if !cred::fresh(c.issued_ms, now_ms, self.inner.ticket_ttl_ms) {
            return Err(AuthError::Refused(format!(
                "stale {} ticket of {} (issued {} ms from now; clocks more than {} s apart?)",
                kind_name(opened.kind),
                who.user,
                c.issued_ms as i128 - now_ms as i128,
                self.inner.ticket_ttl_ms / 1000
            )));
        }
        let s = &opened.seal;
        if !cred::fresh(s.issued_ms, now_ms, self.inner.seal_ttl_ms) {
            return Err(AuthError::Refused(format!(
                "stale request seal of {} (sealed {} ms from now; a request is good for {} s: clocks apart?)",
                who.user,
                s.issued_ms as i128 - now_ms as i128,
                self.inner.seal_ttl_ms / 1000
            )));
        }
        if !s.target.eq_ignore_ascii_case(&self.inner.host) {
            return Err(AuthError::Refused(format!(
                "credential of {} for host {:?}, sent to {}",
                who.user, s.target, self.inner.host
            )));
        }
        self.owner_check(&who)?;
        Ok(Pending {
            verified: Verified {
                identity: who,
                cluster,
            },
            seal: Some(PendingSeal {
                binding: s.binding.clone(),
                nonce: s.nonce.clone(),
                expires_ms: s.issued_ms.saturating_add(self.inner.seal_ttl_ms),
            }),
        })
    }

    /// Check `md`/`peer` as far as the headers go: a credential, or eauth data when
    /// `LSF_AUTH=eauth` (users only).
    pub async fn check_headers(
        &self,
        md: &MetadataMap,
        peer: Option<SocketAddr>,
        need: Need,
    ) -> Result<Pending, AuthError> {
        if md.get_bin(CRED_METADATA).is_some() || !need.accepts(Kind::User) {
            return self.check_credential(md, peer, need, cred::now_ms());
        }
        let (Some(server), Some(raw)) = (&self.inner.eauth, md.get_bin(EAUTH_METADATA)) else {
            return Err(AuthError::Refused("no credential".into()));
        };
        let raw = raw
            .to_bytes()
            .map_err(|_| AuthError::Refused("eauth data not in base64".into()))?;
        if raw.len() > crate::eauth::MAX_DATA + 1024 {
            return Err(AuthError::Refused("eauth data too large".into()));
        }
        let d = EauthData::decode(&raw[..])
            .map_err(|_| AuthError::Refused("malformed eauth data".into()))?;
        let peer =
            peer.ok_or_else(|| AuthError::Refused("request without a peer address".into()))?;
        let host = self
            .host_at(peer.ip())
            .ok_or_else(|| AuthError::Refused(format!("{} is not a cluster host", peer.ip())))?
            .to_owned();
        let ok = server
            .check(
                d.uid,
                d.gid,
                &d.user,
                &canonical(peer.ip()).to_string(),
                peer.port(),
                &d.data,
            )
            .await?;
        if !ok {
            return Err(AuthError::Refused(format!(
                "eauth -s refused user {} (uid {})",
                d.user, d.uid
            )));
        }
        let who = Identity {
            kind: Kind::User,
            uid: d.uid,
            gid: d.gid,
            user: d.user,
            host,
        };
        self.owner_check(&who)?;
        Ok(Pending {
            verified: Verified {
                identity: who,
                cluster: String::new(),
            },
            seal: None,
        })
    }

    /// The last checks, once the body is known: the seal's binding must be `binding`
    /// ([`cred::binding`] of the request's path and body), and its nonce must never have
    /// been accepted before (it is remembered from now on).
    pub fn finish(
        &self,
        pending: Pending,
        binding: &[u8; 32],
        now_ms: u64,
    ) -> Result<Verified, AuthError> {
        let Some(seal) = pending.seal else {
            return Ok(pending.verified);
        };
        if seal.binding[..] != binding[..] {
            return Err(AuthError::Refused(format!(
                "credential of {} sealed for another request (method or body differ)",
                pending.verified.identity.user
            )));
        }
        let mut rc = match self.inner.replay.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        rc.admit(&seal.nonce, seal.expires_ms, now_ms)?;
        Ok(pending.verified)
    }

    /// The identity the authentication layer proved for `req`, if it satisfies `need`;
    /// otherwise `User permission denied` (and the reason in the log). A request that did
    /// not pass the layer (a service served without it) is refused.
    ///
    /// The layer has already checked the protocol version ([`basalt_proto::PROTOCOL_METADATA`]).
    pub async fn verify<T>(&self, req: &Request<T>, need: Need) -> Result<Identity, Status> {
        Ok(self.verified(req, need)?.identity)
    }

    /// [`Verifier::verify`], with the remote cluster of an inter-cluster request.
    pub fn verified<T>(&self, req: &Request<T>, need: Need) -> Result<Verified, Status> {
        let peer = req.remote_addr();
        let Some(v) = req.extensions().get::<Verified>() else {
            tracing::error!(peer = ?peer, "request refused: not checked by the authentication layer");
            return Err(Status::permission_denied(PERMISSION_DENIED));
        };
        if !need.accepts(v.identity.kind) {
            tracing::warn!(
                peer = ?peer,
                user = %v.identity.user,
                "request refused: a {} credential where {need:?} is needed",
                kind_name(v.identity.kind)
            );
            return Err(Status::permission_denied(PERMISSION_DENIED));
        }
        Ok(v.clone())
    }
}

#[cfg(test)]
mod tests;
