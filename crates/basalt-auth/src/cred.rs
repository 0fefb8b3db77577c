//! Tickets, request seals and opening them (protocol 3.0). Pure apart from the random
//! nonces: time is an argument.
//!
//! A credential has two parts:
//! * the **ticket** (`Credential`): who (kind, uid, gid, user, host, cluster), when, and a
//!   nonce, signed with the key of its **domain** (user, daemon, inter-cluster: each
//!   derived from the key file with its own label, [`crate::key::Key::domain`]), so a
//!   ticket of one domain never verifies as another's;
//! * the **seal** (`RequestSeal`) of one request: when, a nonce, the target host and the
//!   **binding** (SHA-256 of the method's path and the request body), signed with the
//!   ticket's **session key** `HMAC(domain key, "session" || ticket mac)`.
//!
//! A user's LIM hands the user a ticket and its session key over the credential socket
//! (only that user's process gets them); the user then seals each request itself. A copy
//! of a request taken off the wire is good for that same request to that same host only,
//! for [`crate::SEAL_TTL`], and once (the receiver's [`crate::replay`] cache, kept across
//! restarts).

use crate::key::{Key, KeyRing};
use crate::{AuthError, Identity};
use basalt_proto::common::{Credential, RequestSeal, SignedCredential, credential::Kind};
use hmac::{Hmac, Mac};
use prost::Message;
use sha2::{Digest, Sha256};

/// The largest credential accepted (bytes of the encoded SignedCredential).
pub const MAX_CRED_BYTES: usize = 2048;

/// The length of a seal's nonce.
pub const NONCE_BYTES: usize = 16;

type HmacSha256 = Hmac<Sha256>;

fn mac_with(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length; the error exists for fixed-size-key MACs.
    let mut m = <HmacSha256 as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    for p in parts {
        m.update(p);
    }
    m
}

/// 16 random bytes.
pub fn nonce() -> Result<Vec<u8>, AuthError> {
    let mut b = vec![0u8; NONCE_BYTES];
    getrandom::fill(&mut b).map_err(|e| AuthError::Random(e.to_string()))?;
    Ok(b)
}

/// Wall-clock milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What a request's credential is bound to: SHA-256 of the gRPC path, then a zero byte
/// and the body as sent (gRPC framing included), or — `body: None`, a client-streaming
/// method, whose messages come later — a one byte.
pub fn binding(path: &str, body: Option<&[u8]>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(path.as_bytes());
    match body {
        Some(b) => {
            h.update([0u8]);
            h.update(b);
        }
        None => h.update([1u8]),
    }
    h.finalize().into()
}

fn session_key(domain: &[u8; 32], ticket_mac: &[u8]) -> [u8; 32] {
    mac_with(domain, &[b"session", ticket_mac])
        .finalize()
        .into_bytes()
        .into()
}

/// A ticket with its session key: what seals requests. Made by whoever holds the key
/// ([`Ticket::issue`]: daemons, the LIM for its users, key owners) or received from a
/// LIM ([`Ticket::from_parts`]).
#[derive(Clone)]
pub struct Ticket {
    cred: Credential,
    /// The SignedCredential without a seal.
    signed: SignedCredential,
    session: [u8; 32],
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the session key.
        f.debug_struct("Ticket").field("cred", &self.cred).finish()
    }
}

impl Ticket {
    /// A fresh ticket for `who` of `cluster`, signed with the ring's signing key in the
    /// domain of `who.kind`.
    pub fn issue(
        ring: &KeyRing,
        who: &Identity,
        cluster: &str,
        now_ms: u64,
    ) -> Result<Ticket, AuthError> {
        let cred = Credential {
            kind: who.kind as i32,
            uid: who.uid,
            gid: who.gid,
            user: who.user.clone(),
            host: who.host.clone(),
            cluster: cluster.to_owned(),
            issued_ms: now_ms,
            nonce: nonce()?,
        };
        Ticket::sign(ring.signing(), cred)
    }

    fn sign(key: &Key, cred: Credential) -> Result<Ticket, AuthError> {
        let kind = Kind::try_from(cred.kind).unwrap_or(Kind::Unspecified);
        let domain = key.domain(kind).ok_or_else(|| {
            AuthError::Refused("a credential of unspecified kind cannot be signed".into())
        })?;
        let body = cred.encode_to_vec();
        let mac = mac_with(domain, &[&body]).finalize().into_bytes().to_vec();
        let session = session_key(domain, &mac);
        Ok(Ticket {
            cred,
            signed: SignedCredential {
                body,
                key_id: key.id.to_vec(),
                mac,
                seal: Vec::new(),
                seal_mac: Vec::new(),
            },
            session,
        })
    }

    /// A ticket received as `ticket` (the encoded SignedCredential the LIM answered) with
    /// its `session` key; not verified (the receiver of each request does that).
    pub fn from_parts(ticket: &[u8], session: &[u8]) -> Result<Ticket, AuthError> {
        let signed = SignedCredential::decode(ticket)
            .map_err(|_| AuthError::NoCredential("unreadable ticket".into()))?;
        let cred = Credential::decode(&signed.body[..])
            .map_err(|_| AuthError::NoCredential("unreadable ticket".into()))?;
        let session: [u8; 32] = session
            .try_into()
            .map_err(|_| AuthError::NoCredential("session key of the wrong length".into()))?;
        Ok(Ticket {
            cred,
            signed,
            session,
        })
    }

    /// What a LIM hands its user: the encoded ticket and its session key.
    pub fn to_parts(&self) -> (Vec<u8>, [u8; 32]) {
        (self.signed.encode_to_vec(), self.session)
    }

    /// The ticket's contents.
    pub fn credential(&self) -> &Credential {
        &self.cred
    }

    /// The credential of one request to `target` bound to `binding` ([`binding`]),
    /// sealed at `now_ms`: the bytes of the `basalt-cred-bin` metadata entry.
    pub fn seal(
        &self,
        target: &str,
        binding: &[u8; 32],
        now_ms: u64,
    ) -> Result<Vec<u8>, AuthError> {
        let seal = RequestSeal {
            issued_ms: now_ms,
            nonce: nonce()?,
            target: target.to_owned(),
            binding: binding.to_vec(),
        }
        .encode_to_vec();
        let seal_mac = mac_with(&self.session, &[&seal])
            .finalize()
            .into_bytes()
            .to_vec();
        let mut signed = self.signed.clone();
        signed.seal = seal;
        signed.seal_mac = seal_mac;
        Ok(signed.encode_to_vec())
    }
}

/// A credential whose signatures are good: the ticket and the seal of its request (not
/// yet checked for time, place, target, binding or replay: [`crate::Verifier`] does).
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    pub ticket: Credential,
    pub kind: Kind,
    pub seal: RequestSeal,
}

/// Check the signatures of sealed bytes whose ticket must be of one of the kinds
/// `accept`, and return what they say. The kind is checked before any key is used: a
/// ticket of another domain is refused as such.
pub fn open(ring: &KeyRing, bytes: &[u8], accept: &[Kind]) -> Result<Opened, AuthError> {
    if bytes.len() > MAX_CRED_BYTES {
        return Err(AuthError::Refused("credential too large".into()));
    }
    let s = SignedCredential::decode(bytes)
        .map_err(|_| AuthError::Refused("malformed credential".into()))?;
    let ticket = Credential::decode(&s.body[..])
        .map_err(|_| AuthError::Refused("malformed credential body".into()))?;
    let kind = match Kind::try_from(ticket.kind) {
        Ok(Kind::Unspecified) => {
            return Err(AuthError::Refused(
                "credential of unspecified kind (neither user, daemon nor inter-cluster)".into(),
            ));
        }
        Ok(k) => k,
        Err(_) => {
            return Err(AuthError::Refused(format!(
                "credential of unknown kind {}",
                ticket.kind
            )));
        }
    };
    if !accept.contains(&kind) {
        return Err(AuthError::Refused(format!(
            "{} {} credential (of {} on host {}) where {} is needed",
            if kind == Kind::InterCluster {
                "an"
            } else {
                "a"
            },
            kind_name(kind),
            ticket.user,
            ticket.host,
            accept
                .iter()
                .map(|k| kind_name(*k))
                .collect::<Vec<_>>()
                .join(" or ")
        )));
    }
    let key = ring.find(&s.key_id).ok_or_else(|| {
        AuthError::Refused("credential signed with a key this host does not have".into())
    })?;
    let domain = key
        .domain(kind)
        .ok_or_else(|| AuthError::Refused("credential of no domain".into()))?;
    mac_with(domain, &[&s.body])
        .verify_slice(&s.mac)
        .map_err(|_| AuthError::Refused("bad credential signature".into()))?;
    if s.seal.is_empty() {
        return Err(AuthError::Refused(
            "credential without a request seal (a client older than protocol 3.0?)".into(),
        ));
    }
    let session = session_key(domain, &s.mac);
    mac_with(&session, &[&s.seal])
        .verify_slice(&s.seal_mac)
        .map_err(|_| AuthError::Refused("bad request seal".into()))?;
    let seal = RequestSeal::decode(&s.seal[..])
        .map_err(|_| AuthError::Refused("malformed request seal".into()))?;
    Ok(Opened { ticket, kind, seal })
}

/// The ticket inside sealed bytes or a ticket, without checking anything (a client
/// reading which host its LIM named; a log line naming who claims to ask).
pub fn peek(bytes: &[u8]) -> Option<Credential> {
    let s = SignedCredential::decode(bytes).ok()?;
    Credential::decode(&s.body[..]).ok()
}

/// A kind's name in messages.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::User => "user",
        Kind::Daemon => "daemon",
        Kind::InterCluster => "inter-cluster",
        Kind::Unspecified => "unspecified",
    }
}

/// The identity a ticket names.
pub fn identity(c: &Credential, kind: Kind) -> Identity {
    Identity {
        kind,
        uid: c.uid,
        gid: c.gid,
        user: c.user.clone(),
        host: c.host.clone(),
    }
}

/// Is `issued_ms` within `ttl_ms` of `now_ms` (either side, for clock skew)?
pub fn fresh(issued_ms: u64, now_ms: u64, ttl_ms: u64) -> bool {
    issued_ms.abs_diff(now_ms) <= ttl_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(k: &str) -> KeyRing {
        KeyRing::parse(k).unwrap()
    }

    fn alice() -> Identity {
        Identity {
            kind: Kind::User,
            uid: 1001,
            gid: 100,
            user: "alice".into(),
            host: "hostA".into(),
        }
    }

    const ALL: [Kind; 3] = [Kind::User, Kind::Daemon, Kind::InterCluster];

    #[test]
    fn sealed_credentials_open_only_with_the_key_and_untouched() {
        let r = ring("00112233445566778899aabbccddeeff");
        let t = Ticket::issue(&r, &alice(), "basalt", 1000).unwrap();
        let bind = binding("/basalt.mbatchd.v1.Mbatchd/Submit", Some(b"body"));
        let b = t.seal("hostB", &bind, 1001).unwrap();
        let back = open(&r, &b, &ALL).unwrap();
        assert_eq!(&back.ticket, t.credential());
        assert_eq!(back.kind, Kind::User);
        assert_eq!(identity(&back.ticket, back.kind), alice());
        assert_eq!(back.seal.target, "hostB");
        assert_eq!(back.seal.binding, bind.to_vec());
        assert_eq!(back.seal.issued_ms, 1001);
        // Another key: refused.
        let other = ring("ffeeddccbbaa99887766554433221100");
        assert!(open(&other, &b, &ALL).is_err());
        // Any flipped bit: refused.
        for i in 0..b.len() {
            let mut t = b.clone();
            t[i] ^= 0x01;
            if let Ok(c2) = open(&r, &t, &ALL) {
                panic!("byte {i} changed and still opened: {c2:?}");
            }
        }
        // A body re-signed claiming root without the key: refused.
        let mut s = SignedCredential::decode(&b[..]).unwrap();
        let mut forged = t.credential().clone();
        forged.uid = 0;
        forged.user = "root".into();
        s.body = forged.encode_to_vec();
        assert!(open(&r, &s.encode_to_vec(), &ALL).is_err());
        assert!(open(&r, &[0u8; 3000], &ALL).is_err());
        assert!(open(&r, b"garbage", &ALL).is_err());
    }

    /// A seal made with another ticket's session key, or a seal moved from one ticket to
    /// another, does not open: only the ticket's holder seals for it.
    #[test]
    fn a_seal_belongs_to_its_ticket() {
        let r = ring("00112233445566778899aabbccddeeff");
        let t1 = Ticket::issue(&r, &alice(), "basalt", 1000).unwrap();
        let mut bob = alice();
        bob.uid = 1002;
        bob.user = "bob".into();
        let t2 = Ticket::issue(&r, &bob, "basalt", 1000).unwrap();
        let bind = binding("/p", Some(b""));
        let s1 = SignedCredential::decode(&t1.seal("h", &bind, 5).unwrap()[..]).unwrap();
        let mut s2 = SignedCredential::decode(&t2.seal("h", &bind, 5).unwrap()[..]).unwrap();
        s2.seal = s1.seal.clone();
        s2.seal_mac = s1.seal_mac.clone();
        let e = open(&r, &s2.encode_to_vec(), &ALL).unwrap_err();
        assert!(e.to_string().contains("bad request seal"), "{e}");
        // A ticket without a seal (a 2.0 credential): refused.
        let (bare, _) = t1.to_parts();
        let e = open(&r, &bare, &ALL).unwrap_err();
        assert!(e.to_string().contains("without a request seal"), "{e}");
        // The parts a LIM hands out seal the same way.
        let (tb, sk) = t1.to_parts();
        let again = Ticket::from_parts(&tb, &sk).unwrap();
        assert!(open(&r, &again.seal("h", &bind, 6).unwrap(), &ALL).is_ok());
        assert!(Ticket::from_parts(&tb, &sk[..5]).is_err());
    }

    /// The domains: a user ticket never passes for a daemon's or another cluster's, even
    /// where one key file signs them all (issue 49, item 1: a user's credential sent as
    /// the inter-cluster credential).
    #[test]
    fn a_ticket_of_one_domain_never_opens_as_another() {
        let r = ring("00112233445566778899aabbccddeeff");
        let bind = binding("/p", Some(b""));
        let user = Ticket::issue(&r, &alice(), "west", 1).unwrap();
        let sealed = user.seal("h", &bind, 1).unwrap();
        for need in [
            &[Kind::Daemon][..],
            &[Kind::InterCluster],
            &[Kind::Daemon, Kind::InterCluster],
        ] {
            let e = open(&r, &sealed, need).unwrap_err().to_string();
            assert!(e.contains("a user credential"), "{e}");
        }
        // Relabelled as inter-cluster (the kind is in the signed body): the signature
        // fails, since the inter-cluster domain has its own key.
        let mut s = SignedCredential::decode(&sealed[..]).unwrap();
        let mut c = user.credential().clone();
        c.kind = Kind::InterCluster as i32;
        s.body = c.encode_to_vec();
        let e = open(&r, &s.encode_to_vec(), &[Kind::InterCluster])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad credential signature"), "{e}");
        // The same body and mac checked against each domain key directly: only the
        // user domain's verifies.
        let key = r.signing();
        let ok: Vec<Kind> = crate::key::DOMAINS
            .iter()
            .filter(|(k, _)| {
                mac_with(key.domain(*k).unwrap(), &[&user.signed.body])
                    .verify_slice(&user.signed.mac)
                    .is_ok()
            })
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(ok, vec![Kind::User]);
        // An unspecified kind is never signed, nor opened.
        let mut nobody = alice();
        nobody.kind = Kind::Unspecified;
        assert!(Ticket::issue(&r, &nobody, "west", 1).is_err());
        let mut s = SignedCredential::decode(&sealed[..]).unwrap();
        let mut c = user.credential().clone();
        c.kind = 0;
        s.body = c.encode_to_vec();
        let e = open(&r, &s.encode_to_vec(), &ALL).unwrap_err().to_string();
        assert!(e.contains("unspecified kind"), "{e}");
        c.kind = 7;
        s.body = c.encode_to_vec();
        let e = open(&r, &s.encode_to_vec(), &ALL).unwrap_err().to_string();
        assert!(e.contains("unknown kind 7"), "{e}");
    }

    #[test]
    fn rotated_ring_verifies_old_and_new() {
        let old = ring("00112233445566778899aabbccddeeff");
        let both = ring("ffeeddccbbaa99887766554433221100\n00112233445566778899aabbccddeeff");
        let bind = binding("/p", None);
        let t = Ticket::issue(&old, &alice(), "basalt", 5).unwrap();
        assert!(open(&both, &t.seal("h", &bind, 5).unwrap(), &ALL).is_ok());
        let t = Ticket::issue(&both, &alice(), "basalt", 5).unwrap();
        assert!(open(&old, &t.seal("h", &bind, 5).unwrap(), &ALL).is_err());
    }

    #[test]
    fn bindings_differ_by_path_body_and_streaming() {
        let a = binding("/s/M", Some(b"x"));
        assert_ne!(a, binding("/s/N", Some(b"x")));
        assert_ne!(a, binding("/s/M", Some(b"y")));
        assert_ne!(binding("/s/M", Some(b"")), binding("/s/M", None));
        assert_eq!(a, binding("/s/M", Some(b"x")));
    }

    #[test]
    fn freshness_window_both_sides() {
        assert!(fresh(10_000, 10_000, 300_000));
        assert!(fresh(10_000, 310_000, 300_000));
        assert!(!fresh(10_000, 310_001, 300_000));
        assert!(fresh(310_000, 10_000, 300_000));
        assert!(!fresh(310_001, 10_000, 300_000));
    }
}
