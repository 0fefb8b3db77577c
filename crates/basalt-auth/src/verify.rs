//! The server side: every daemon checks each request before acting on it.

use crate::cred::{self, ReplayCache};
use crate::eauth::EauthServer;
use crate::key::KeySource;
use crate::{AuthError, CRED_METADATA, EAUTH_METADATA, Identity, Kind, PERMISSION_DENIED};
use basalt_proto::common::EauthData;
use prost::Message;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use tonic::metadata::MetadataMap;
use tonic::{Request, Status};

/// What a request must prove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A user (or a daemon) of the cluster.
    User,
    /// A daemon of the host it claims to be.
    Daemon,
}

#[derive(Debug)]
struct Inner {
    keys: Arc<KeySource>,
    cluster: String,
    hosts: Vec<(String, IpAddr)>,
    ttl_ms: u64,
    replay: Mutex<ReplayCache>,
    owner_only: Option<u32>,
    eauth: Option<EauthServer>,
}

/// Checks credentials; cheap to clone (one replay cache per daemon).
#[derive(Debug, Clone)]
pub struct Verifier {
    inner: Arc<Inner>,
}

fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl Verifier {
    /// `hosts`: every cluster host and its address. `owner_only`: the uid of a personal
    /// cluster's owner (None when the daemons run as root). `eauth`: the `eauth -s` that
    /// vouches for users when `LSF_AUTH=eauth`.
    pub fn new(
        keys: Arc<KeySource>,
        cluster: &str,
        hosts: Vec<(String, IpAddr)>,
        owner_only: Option<u32>,
        eauth: Option<EauthServer>,
    ) -> Verifier {
        Verifier {
            inner: Arc::new(Inner {
                keys,
                cluster: cluster.to_owned(),
                hosts: hosts.into_iter().map(|(h, a)| (h, canonical(a))).collect(),
                ttl_ms: crate::CRED_TTL.as_millis() as u64,
                replay: Mutex::new(ReplayCache::default()),
                owner_only,
                eauth,
            }),
        }
    }

    fn host_addr(&self, host: &str) -> Option<IpAddr> {
        self.inner
            .hosts
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case(host))
            .map(|(_, a)| *a)
    }

    fn host_at(&self, ip: IpAddr) -> Option<&str> {
        let ip = canonical(ip);
        self.inner
            .hosts
            .iter()
            .find(|(_, a)| *a == ip)
            .map(|(h, _)| h.as_str())
    }

    fn owner_check(&self, who: &Identity) -> Result<(), AuthError> {
        match self.inner.owner_only {
            Some(o) if who.uid != o => Err(AuthError::Refused(format!(
                "user {} (uid {}) is not the owner (uid {o}) of this personal cluster",
                who.user, who.uid
            ))),
            _ => Ok(()),
        }
    }

    /// Check a cluster-key credential in `md` from `peer` at `now_ms`.
    pub fn check_credential(
        &self,
        md: &MetadataMap,
        peer: Option<SocketAddr>,
        need: Need,
        now_ms: u64,
    ) -> Result<Identity, AuthError> {
        let raw = md
            .get_bin(CRED_METADATA)
            .ok_or_else(|| AuthError::Refused("no credential".into()))?
            .to_bytes()
            .map_err(|_| AuthError::Refused("credential not in base64".into()))?;
        let c = cred::open(&self.inner.keys.current(), &raw)?;
        if c.cluster != self.inner.cluster {
            return Err(AuthError::Refused(format!(
                "credential of cluster {:?}, not {:?}",
                c.cluster, self.inner.cluster
            )));
        }
        if !cred::fresh(c.issued_ms, now_ms, self.inner.ttl_ms) {
            return Err(AuthError::Refused(format!(
                "stale credential (issued {} ms from now; clocks more than {} s apart?)",
                c.issued_ms as i128 - now_ms as i128,
                self.inner.ttl_ms / 1000
            )));
        }
        let who = cred::identity(&c)?;
        if need == Need::Daemon && who.kind != Kind::Daemon {
            return Err(AuthError::Refused(format!(
                "user {} asked for what only daemons may",
                who.user
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
        self.owner_check(&who)?;
        let expires = c.issued_ms.max(now_ms) + self.inner.ttl_ms;
        let mut rc = match self.inner.replay.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        rc.admit(&c.nonce, expires, now_ms)?;
        Ok(who)
    }

    /// Check `md`/`peer`: a cluster-key credential, or eauth data when `LSF_AUTH=eauth`.
    pub async fn check(
        &self,
        md: &MetadataMap,
        peer: Option<SocketAddr>,
        need: Need,
    ) -> Result<Identity, AuthError> {
        if md.get_bin(CRED_METADATA).is_some() || need == Need::Daemon {
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
        Ok(who)
    }

    /// Check a request; a refusal is logged with its reason and answered with
    /// `User permission denied`.
    ///
    /// Then the request's protocol version ([`basalt_proto::PROTOCOL_METADATA`]) must be in
    /// this build's `PROTOCOL_MIN..=PROTOCOL` window; otherwise the answer is
    /// `FailedPrecondition` with both versions named.
    pub async fn verify<T>(&self, req: &Request<T>, need: Need) -> Result<Identity, Status> {
        let peer = req.remote_addr();
        let who = self.check(req.metadata(), peer, need).await.map_err(|e| {
            tracing::warn!(peer = ?peer, "request refused: {e}");
            Status::permission_denied(PERMISSION_DENIED)
        })?;
        let version = req
            .metadata()
            .get(basalt_proto::PROTOCOL_METADATA)
            .and_then(|v| v.to_str().ok());
        basalt_proto::check_protocol_text(version).map_err(|e| {
            tracing::warn!(peer = ?peer, user = %who.user, "request refused: {e}");
            Status::failed_precondition(e)
        })?;
        Ok(who)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Authenticator;
    use std::os::unix::fs::PermissionsExt;
    use tonic::metadata::BinaryMetadataValue;

    const KEY: &str = "00112233445566778899aabbccddeeff\n";

    fn keys(dir: &std::path::Path, text: &str) -> Arc<KeySource> {
        let p = dir.join(format!("k{}", text.len()));
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        Arc::new(KeySource::open(&p, true).unwrap())
    }

    fn hosts() -> Vec<(String, IpAddr)> {
        vec![
            ("hostA".into(), "127.0.0.1".parse().unwrap()),
            ("hostB".into(), "127.0.0.2".parse().unwrap()),
        ]
    }

    fn who(kind: Kind, uid: u32, user: &str, host: &str) -> Identity {
        Identity {
            kind,
            uid,
            gid: uid,
            user: user.into(),
            host: host.into(),
        }
    }

    fn md(a: &Authenticator) -> MetadataMap {
        let mut m = MetadataMap::new();
        a.stamp(&mut m).unwrap();
        m
    }

    fn from(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().unwrap(), 40000))
    }

    /// A request as a server sees it: `md` as metadata, sent from `peer`.
    fn request(md: MetadataMap, peer: &str) -> Request<()> {
        let mut r = Request::new(());
        *r.metadata_mut() = md;
        r.extensions_mut()
            .insert(tonic::transport::server::TcpConnectInfo {
                local_addr: None,
                remote_addr: from(peer),
            });
        r
    }

    #[tokio::test]
    async fn every_request_carries_a_protocol_version_in_the_served_window() {
        let d = tempfile::tempdir().unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(k.clone(), "basalt", hosts(), None, None);
        let a = Authenticator::with_key(k, who(Kind::User, 1001, "alice", "hostB"), "basalt", None);
        // Stamped by the Authenticator: credential and this build's version.
        let m = md(&a);
        assert_eq!(
            m.get(basalt_proto::PROTOCOL_METADATA)
                .and_then(|v| v.to_str().ok()),
            Some(basalt_proto::protocol_text().as_str())
        );
        let id = v
            .verify(&request(m, "127.0.0.2"), Need::User)
            .await
            .unwrap();
        assert_eq!(id.user, "alice");
        // Without the version, or with one outside PROTOCOL_MIN..=PROTOCOL: refused, and the
        // message names the versions.
        let mut m = md(&a);
        m.remove(basalt_proto::PROTOCOL_METADATA);
        let e = v
            .verify(&request(m, "127.0.0.2"), Need::User)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition);
        assert!(e.message().contains("no protocol version"), "{e:?}");
        let mut m = md(&a);
        m.insert(basalt_proto::PROTOCOL_METADATA, "99.0".parse().unwrap());
        let e = v
            .verify(&request(m, "127.0.0.2"), Need::User)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition);
        assert!(e.message().contains("\"99.0\""), "{e:?}");
        // A bad credential is refused as such, whatever the version.
        let mut m = md(&a);
        m.remove(basalt_proto::PROTOCOL_METADATA);
        let e = v
            .verify(&request(m, "127.0.0.9"), Need::User)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
    }

    #[test]
    fn a_signed_credential_is_accepted_once_from_its_host() {
        let d = tempfile::tempdir().unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(k.clone(), "basalt", hosts(), None, None);
        let a = Authenticator::with_key(k, who(Kind::User, 1001, "alice", "hostB"), "basalt", None);
        let now = cred::now_ms();
        let m = md(&a);
        let id = v
            .check_credential(&m, from("127.0.0.2"), Need::User, now)
            .unwrap();
        assert_eq!(
            (id.uid, id.user.as_str(), id.host.as_str()),
            (1001, "alice", "hostB")
        );
        // The same credential again: a replay.
        let e = v
            .check_credential(&m, from("127.0.0.2"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("replayed"), "{e}");
        // From another address than its host's.
        let e = v
            .check_credential(&md(&a), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("sent from 127.0.0.1"), "{e}");
        // From a non-cluster address.
        let e = v
            .check_credential(&md(&a), from("127.0.0.99"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("sent from"), "{e}");
        // A user credential where a daemon is needed.
        let e = v
            .check_credential(&md(&a), from("127.0.0.2"), Need::Daemon, now)
            .unwrap_err();
        assert!(e.to_string().contains("only daemons"), "{e}");
        // Stale (older than the TTL) and from the far future.
        let ttl = crate::CRED_TTL.as_millis() as u64;
        let e = v
            .check_credential(&md(&a), from("127.0.0.2"), Need::User, now + ttl + 5_000)
            .unwrap_err();
        assert!(e.to_string().contains("stale"), "{e}");
        let e = v
            .check_credential(&md(&a), from("127.0.0.2"), Need::User, now - ttl - 5_000)
            .unwrap_err();
        assert!(e.to_string().contains("stale"), "{e}");
    }

    #[test]
    fn forged_foreign_and_missing_credentials_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(k.clone(), "basalt", hosts(), None, None);
        let now = cred::now_ms();
        // No credential at all (a hand-made request claiming root in its body).
        let e = v
            .check_credential(&MetadataMap::new(), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("no credential"), "{e}");
        // Signed with another key.
        let other = keys(d.path(), "ffeeddccbbaa99887766554433221100ff\n");
        let a = Authenticator::with_key(other, who(Kind::User, 0, "root", "hostA"), "basalt", None);
        let e = v
            .check_credential(&md(&a), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("key"), "{e}");
        // Garbage.
        let mut m = MetadataMap::new();
        m.insert_bin(
            CRED_METADATA,
            BinaryMetadataValue::from_bytes(b"\x01\x02garbage"),
        );
        assert!(
            v.check_credential(&m, from("127.0.0.1"), Need::User, now)
                .is_err()
        );
        // Another cluster's credential.
        let a = Authenticator::with_key(k.clone(), who(Kind::User, 5, "u", "hostA"), "other", None);
        let e = v
            .check_credential(&md(&a), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("cluster"), "{e}");
        // A host that is not in the cluster.
        let a =
            Authenticator::with_key(k, who(Kind::Daemon, 0, "root", "intruder"), "basalt", None);
        let e = v
            .check_credential(&md(&a), from("127.0.0.1"), Need::Daemon, now)
            .unwrap_err();
        assert!(e.to_string().contains("not in the cluster"), "{e}");
    }

    #[test]
    fn a_credential_without_a_kind_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(k.clone(), "basalt", hosts(), None, None);
        let now = cred::now_ms();
        // Properly signed, but the kind is missing (0): neither user nor daemon.
        let a = Authenticator::with_key(
            k.clone(),
            who(Kind::Unspecified, 1001, "alice", "hostA"),
            "basalt",
            None,
        );
        let e = v
            .check_credential(&md(&a), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("unspecified kind"), "{e}");
        // An unknown kind number: refused too.
        let c = basalt_proto::common::Credential {
            kind: 7,
            uid: 1001,
            gid: 1001,
            user: "alice".into(),
            host: "hostA".into(),
            cluster: "basalt".into(),
            issued_ms: now,
            nonce: cred::nonce().unwrap(),
        };
        let e = cred::identity(&c).unwrap_err();
        assert!(e.to_string().contains("unknown kind 7"), "{e}");
    }

    #[test]
    fn a_personal_cluster_accepts_only_its_owner() {
        let d = tempfile::tempdir().unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(k.clone(), "basalt", hosts(), Some(1001), None);
        let now = cred::now_ms();
        let owner = Authenticator::with_key(
            k.clone(),
            who(Kind::User, 1001, "o", "hostA"),
            "basalt",
            None,
        );
        assert!(
            v.check_credential(&md(&owner), from("127.0.0.1"), Need::User, now)
                .is_ok()
        );
        let other = Authenticator::with_key(k, who(Kind::User, 1002, "x", "hostA"), "basalt", None);
        let e = v
            .check_credential(&md(&other), from("127.0.0.1"), Need::User, now)
            .unwrap_err();
        assert!(e.to_string().contains("personal cluster"), "{e}");
    }

    #[tokio::test]
    async fn eauth_vouches_for_users_from_cluster_hosts_only() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("eauth");
        std::fs::write(
            &prog,
            "#!/bin/sh\nif [ \"$1\" = -c ]; then printf 'ok-%s' \"$2\"; exit 0; fi\n\
             while read uid gid user addr port len data; do\n\
             if [ \"$data\" = ok-hostA ] && [ \"$addr\" = 127.0.0.2 ]; then echo 1; else echo 0; fi\ndone\n",
        )
        .unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        let k = keys(d.path(), KEY);
        let v = Verifier::new(
            k,
            "basalt",
            hosts(),
            None,
            Some(EauthServer::new(prog.clone(), None)),
        );
        let a = Authenticator::eauth(prog, None).towards("hostA");
        let id = v
            .check(&md(&a), from("127.0.0.2"), Need::User)
            .await
            .unwrap();
        assert_eq!(id.host, "hostB");
        assert_eq!(id.uid, nix::unistd::getuid().as_raw());
        // eauth says no (wrong target in the data).
        let b = Authenticator::eauth(d.path().join("eauth"), None).towards("hostB");
        assert!(
            v.check(&md(&b), from("127.0.0.2"), Need::User)
                .await
                .is_err()
        );
        // Not from a cluster host.
        let e = v
            .check(&md(&a), from("127.0.0.9"), Need::User)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("not a cluster host"), "{e}");
        // eauth never vouches for daemons.
        assert!(
            v.check(&md(&a), from("127.0.0.2"), Need::Daemon)
                .await
                .is_err()
        );
    }
}
