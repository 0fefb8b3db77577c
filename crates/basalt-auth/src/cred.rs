//! Minting, sealing and opening credentials, and the replay cache. Pure apart from the
//! random nonce: time is an argument.

use crate::key::{Key, KeyRing};
use crate::{AuthError, Identity};
use basalt_proto::common::{Credential, SignedCredential, credential::Kind};
use hmac::{Hmac, Mac};
use prost::Message;
use sha2::Sha256;
use std::collections::{BTreeSet, HashMap};

/// The largest credential accepted (bytes of the encoded SignedCredential).
pub const MAX_CRED_BYTES: usize = 1024;

/// The most nonces remembered; past this, new credentials are refused until old ones
/// expire (failing closed rather than forgetting a nonce that could be replayed).
pub const MAX_REMEMBERED: usize = 1_000_000;

type HmacSha256 = Hmac<Sha256>;

fn hmac_for(key: &Key) -> Result<HmacSha256, AuthError> {
    // HMAC takes keys of any length; the error exists for fixed-size-key MACs.
    HmacSha256::new_from_slice(&key.bytes).map_err(|e| AuthError::Refused(format!("key: {e}")))
}

/// 16 random bytes.
pub fn nonce() -> Result<Vec<u8>, AuthError> {
    let mut b = vec![0u8; 16];
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

/// A fresh credential for `who`, issued at `now_ms`.
pub fn mint(who: &Identity, cluster: &str, now_ms: u64) -> Result<Credential, AuthError> {
    Ok(Credential {
        kind: who.kind as i32,
        uid: who.uid,
        gid: who.gid,
        user: who.user.clone(),
        host: who.host.clone(),
        cluster: cluster.to_owned(),
        issued_ms: now_ms,
        nonce: nonce()?,
    })
}

/// Sign `c` with the ring's signing key: the bytes to send.
pub fn seal(ring: &KeyRing, c: &Credential) -> Result<Vec<u8>, AuthError> {
    let body = c.encode_to_vec();
    let key = ring.signing();
    let mut m = hmac_for(key)?;
    m.update(&body);
    Ok(SignedCredential {
        mac: m.finalize().into_bytes().to_vec(),
        key_id: key.id.to_vec(),
        body,
    }
    .encode_to_vec())
}

/// Check the signature of sealed bytes and return the credential inside.
pub fn open(ring: &KeyRing, bytes: &[u8]) -> Result<Credential, AuthError> {
    if bytes.len() > MAX_CRED_BYTES {
        return Err(AuthError::Refused("credential too large".into()));
    }
    let s = SignedCredential::decode(bytes)
        .map_err(|_| AuthError::Refused("malformed credential".into()))?;
    let key = ring.find(&s.key_id).ok_or_else(|| {
        AuthError::Refused("credential signed with a key this host does not have".into())
    })?;
    let mut m = hmac_for(key)?;
    m.update(&s.body);
    m.verify_slice(&s.mac)
        .map_err(|_| AuthError::Refused("bad credential signature".into()))?;
    Credential::decode(&s.body[..])
        .map_err(|_| AuthError::Refused("malformed credential body".into()))
}

/// The credential inside sealed bytes, without checking the signature (a client reading
/// which host its LIM named).
pub fn peek(bytes: &[u8]) -> Option<Credential> {
    let s = SignedCredential::decode(bytes).ok()?;
    Credential::decode(&s.body[..]).ok()
}

/// The identity a credential names; a credential of unspecified (or unknown) kind names
/// nobody and is refused.
pub fn identity(c: &Credential) -> Result<Identity, AuthError> {
    let kind = match Kind::try_from(c.kind) {
        Ok(k @ (Kind::User | Kind::Daemon)) => k,
        Ok(Kind::Unspecified) => {
            return Err(AuthError::Refused(
                "credential of unspecified kind (neither user nor daemon)".into(),
            ));
        }
        Err(_) => {
            return Err(AuthError::Refused(format!(
                "credential of unknown kind {}",
                c.kind
            )));
        }
    };
    Ok(Identity {
        kind,
        uid: c.uid,
        gid: c.gid,
        user: c.user.clone(),
        host: c.host.clone(),
    })
}

/// Is `issued_ms` within `ttl_ms` of `now_ms` (either side, for clock skew)?
pub fn fresh(issued_ms: u64, now_ms: u64, ttl_ms: u64) -> bool {
    issued_ms.abs_diff(now_ms) <= ttl_ms
}

/// Nonces seen, each kept until the credential that carried it can no longer be fresh.
#[derive(Debug, Default)]
pub struct ReplayCache {
    seen: HashMap<Vec<u8>, u64>,
    by_expiry: BTreeSet<(u64, Vec<u8>)>,
}

impl ReplayCache {
    /// Record `nonce` (valid until `expires_ms`); false if it was seen before or the
    /// cache is full of unexpired nonces.
    pub fn admit(&mut self, nonce: &[u8], expires_ms: u64, now_ms: u64) -> Result<(), AuthError> {
        while let Some((exp, n)) = self.by_expiry.first().cloned() {
            if exp >= now_ms {
                break;
            }
            self.by_expiry.pop_first();
            self.seen.remove(&n);
        }
        if nonce.len() < 8 {
            return Err(AuthError::Refused("credential without a nonce".into()));
        }
        if self.seen.contains_key(nonce) {
            return Err(AuthError::Refused("credential replayed".into()));
        }
        if self.seen.len() >= MAX_REMEMBERED {
            return Err(AuthError::Refused(
                "too many credentials in flight; try again".into(),
            ));
        }
        self.seen.insert(nonce.to_vec(), expires_ms);
        self.by_expiry.insert((expires_ms, nonce.to_vec()));
        Ok(())
    }

    /// How many nonces are remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
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

    #[test]
    fn sealed_credentials_open_only_with_the_key_and_untouched() {
        let r = ring("00112233445566778899aabbccddeeff");
        let c = mint(&alice(), "basalt", 1000).unwrap();
        let b = seal(&r, &c).unwrap();
        let back = open(&r, &b).unwrap();
        assert_eq!(back, c);
        assert_eq!(identity(&back).unwrap(), alice());
        // Another key: refused.
        let other = ring("ffeeddccbbaa99887766554433221100");
        assert!(open(&other, &b).is_err());
        // Any flipped bit: refused.
        for i in 0..b.len() {
            let mut t = b.clone();
            t[i] ^= 0x01;
            if let Ok(c2) = open(&r, &t) {
                panic!("byte {i} changed and still opened: {c2:?}");
            }
        }
        // A body re-signed claiming root without the key: refused.
        let mut s = SignedCredential::decode(&b[..]).unwrap();
        let mut forged = c.clone();
        forged.uid = 0;
        forged.user = "root".into();
        s.body = forged.encode_to_vec();
        assert!(open(&r, &s.encode_to_vec()).is_err());
        assert!(open(&r, &[0u8; 2000]).is_err());
        assert!(open(&r, b"garbage").is_err());
    }

    #[test]
    fn rotated_ring_verifies_old_and_new() {
        let old = ring("00112233445566778899aabbccddeeff");
        let both = ring("ffeeddccbbaa99887766554433221100\n00112233445566778899aabbccddeeff");
        let c = mint(&alice(), "basalt", 5).unwrap();
        assert!(open(&both, &seal(&old, &c).unwrap()).is_ok());
        assert!(open(&old, &seal(&both, &c).unwrap()).is_err());
    }

    #[test]
    fn freshness_window_both_sides() {
        assert!(fresh(10_000, 10_000, 300_000));
        assert!(fresh(10_000, 310_000, 300_000));
        assert!(!fresh(10_000, 310_001, 300_000));
        assert!(fresh(310_000, 10_000, 300_000));
        assert!(!fresh(310_001, 10_000, 300_000));
    }

    #[test]
    fn replay_cache_admits_once_and_forgets_after_expiry() {
        let mut rc = ReplayCache::default();
        let n = nonce().unwrap();
        rc.admit(&n, 2000, 1000).unwrap();
        assert!(
            rc.admit(&n, 2000, 1500)
                .unwrap_err()
                .to_string()
                .contains("replayed")
        );
        let m = nonce().unwrap();
        rc.admit(&m, 5000, 1500).unwrap();
        assert_eq!(rc.len(), 2);
        // After the first expiry only the second is remembered.
        assert!(rc.admit(&nonce().unwrap(), 9000, 2001).is_ok());
        assert_eq!(rc.len(), 2);
        assert!(rc.admit(&m, 5000, 2002).is_err());
        assert!(rc.admit(b"short", 5000, 2002).is_err());
    }
}
