//! The cluster key: a small text file of hex keys, readable only by its owner (root, or
//! the user who runs a personal cluster). The first key signs; every key verifies, so a
//! key can be rotated without stopping the cluster (docs/security.md).

use crate::{AuthError, Kind};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shortest key accepted: 16 bytes (32 hex digits). Generated keys have 32 bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// One key and its id (the first 4 bytes of its SHA-256), with the keys of its
/// credential domains derived from it.
#[derive(Clone)]
pub struct Key {
    pub(crate) id: [u8; 4],
    /// HMAC-SHA256(key, label) for each domain of [`DOMAINS`]: a credential of one
    /// domain is signed with its own key, so no credential can pass for another domain's,
    /// even where two domains share a key file (a cluster key that is also the
    /// MultiCluster key).
    domains: [[u8; 32]; 3],
}

/// The credential domains and their labels, in the order of [`Key`]'s derived keys.
pub(crate) const DOMAINS: [(Kind, &[u8]); 3] = [
    (Kind::User, b"basalt credential 3.0: user"),
    (Kind::Daemon, b"basalt credential 3.0: daemon"),
    (Kind::InterCluster, b"basalt credential 3.0: inter-cluster"),
];

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        write!(f, "Key({})", hex(&self.id))
    }
}

impl Key {
    fn new(bytes: Vec<u8>) -> Key {
        let d = Sha256::digest(&bytes);
        let derive = |label: &[u8]| -> [u8; 32] {
            // HMAC takes keys of any length.
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(&bytes)
                .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
            m.update(label);
            m.finalize().into_bytes().into()
        };
        let domains = DOMAINS.map(|(_, label)| derive(label));
        Key {
            id: [d[0], d[1], d[2], d[3]],
            domains,
        }
    }

    /// The key of credentials of `kind` (None for an unspecified kind, which no key
    /// signs).
    pub(crate) fn domain(&self, kind: Kind) -> Option<&[u8; 32]> {
        DOMAINS
            .iter()
            .position(|(k, _)| *k == kind)
            .map(|i| &self.domains[i])
    }

    /// The key's id as hex (safe to log).
    pub fn id_hex(&self) -> String {
        hex(&self.id)
    }
}

/// The keys of a key file, signing key first.
#[derive(Debug, Clone)]
pub struct KeyRing {
    keys: Vec<Key>,
}

impl KeyRing {
    /// Parse a key file: one hex key per line; blank lines and `#` comments ignored.
    pub fn parse(text: &str) -> Result<KeyRing, String> {
        let mut keys = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bytes = unhex(line).ok_or_else(|| format!("line {}: not a hex key", n + 1))?;
            if bytes.len() < MIN_KEY_BYTES {
                return Err(format!(
                    "line {}: key too short ({} bytes, at least {MIN_KEY_BYTES})",
                    n + 1,
                    bytes.len()
                ));
            }
            keys.push(Key::new(bytes));
        }
        if keys.is_empty() {
            return Err("no key in the file".into());
        }
        Ok(KeyRing { keys })
    }

    /// Read and parse `path`. With `strict`, the file must be a regular file owned by
    /// this process's user (or root) that no group or other user can read or write.
    pub fn load(path: &Path, strict: bool) -> Result<KeyRing, AuthError> {
        let bad = |reason: String| AuthError::Key {
            path: path.to_path_buf(),
            reason,
        };
        let md = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if strict {
            check_permissions(&md).map_err(bad)?;
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        KeyRing::parse(&text).map_err(bad)
    }

    /// The key that signs.
    pub fn signing(&self) -> &Key {
        &self.keys[0]
    }

    /// The key with this id.
    pub fn find(&self, id: &[u8]) -> Option<&Key> {
        self.keys.iter().find(|k| k.id[..] == *id)
    }

    /// How many keys verify.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Never true: a ring has at least one key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

fn check_permissions(md: &std::fs::Metadata) -> Result<(), String> {
    if !md.is_file() {
        return Err("not a regular file".into());
    }
    let me = nix::unistd::geteuid().as_raw();
    if md.uid() != me && md.uid() != 0 {
        return Err(format!(
            "owned by uid {}, not by this user (uid {me}) or root",
            md.uid()
        ));
    }
    if md.mode() & 0o077 != 0 {
        return Err(format!(
            "mode {:o} lets other users read or change it; run chmod 600 on it",
            md.mode() & 0o777
        ));
    }
    Ok(())
}

/// 32 random bytes as a key-file line.
pub fn generate() -> Result<String, AuthError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| AuthError::Random(e.to_string()))?;
    Ok(format!("{}\n", hex(&b)))
}

/// Create a new key file at `path` (mode 0600); fails if the file exists.
pub fn create_key_file(path: &Path) -> Result<(), AuthError> {
    use std::io::Write;
    let line = generate()?;
    let bad = |e: std::io::Error| AuthError::Key {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(bad)?;
    f.write_all(
        format!("# Basalt cluster key: keep it secret (docs/security.md)\n{line}").as_bytes(),
    )
    .map_err(bad)?;
    f.sync_all().map_err(bad)
}

/// A key file, re-read when it changes (checked at most once a second), so a rotated
/// key takes effect without restarting the daemons. A file that becomes unreadable or
/// invalid keeps the last good ring (and says so in the log).
#[derive(Debug)]
pub struct KeySource {
    path: PathBuf,
    strict: bool,
    state: Mutex<SourceState>,
}

#[derive(Debug)]
struct SourceState {
    stamp: (u64, u64, i64, i64),
    ring: Arc<KeyRing>,
    checked: Instant,
}

fn stamp(path: &Path) -> Option<(u64, u64, i64, i64)> {
    let md = std::fs::metadata(path).ok()?;
    Some((md.ino(), md.size(), md.mtime(), md.mtime_nsec()))
}

impl KeySource {
    /// Load `path` now (an error if it cannot be used).
    pub fn open(path: &Path, strict: bool) -> Result<KeySource, AuthError> {
        let st = stamp(path).unwrap_or_default();
        let ring = KeyRing::load(path, strict)?;
        Ok(KeySource {
            path: path.to_path_buf(),
            strict,
            state: Mutex::new(SourceState {
                stamp: st,
                ring: Arc::new(ring),
                checked: Instant::now(),
            }),
        })
    }

    /// The key file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current ring.
    pub fn current(&self) -> Arc<KeyRing> {
        let mut st = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if st.checked.elapsed() >= Duration::from_secs(1) {
            st.checked = Instant::now();
            if let Some(now) = stamp(&self.path)
                && now != st.stamp
            {
                match KeyRing::load(&self.path, self.strict) {
                    Ok(r) => {
                        tracing::info!(
                            path = %self.path.display(),
                            keys = r.len(),
                            signing = %r.signing().id_hex(),
                            "cluster key file changed; reloaded"
                        );
                        st.ring = Arc::new(r);
                        st.stamp = now;
                    }
                    Err(e) => {
                        tracing::error!("{e}; keeping the keys read before");
                        st.stamp = now;
                    }
                }
            }
        }
        st.ring.clone()
    }
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

/// Bytes from hex (either case); None for anything else.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let d = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.chunks(2)
        .map(|p| Some(d(p[0])? << 4 | d(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn parse_skips_comments_and_checks_length() {
        let k1 = "00112233445566778899aabbccddeeff";
        let r = KeyRing::parse(&format!("# c\n\n{k1}  # first\n{}\n", k1.to_uppercase())).unwrap();
        assert_eq!(r.len(), 2);
        let d = Sha256::digest(unhex(k1).unwrap());
        assert_eq!(r.signing().id[..], d[..4]);
        assert!(r.find(&r.signing().id).is_some());
        assert!(r.find(&[0, 0, 0, 0]).is_none() || r.signing().id == [0, 0, 0, 0]);
        assert!(KeyRing::parse("0011").unwrap_err().contains("too short"));
        assert!(KeyRing::parse("zz").unwrap_err().contains("not a hex key"));
        assert!(
            KeyRing::parse("# nothing\n")
                .unwrap_err()
                .contains("no key")
        );
    }

    #[test]
    fn created_key_file_is_private_and_loads() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("basalt.key");
        create_key_file(&p).unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.mode() & 0o777, 0o600);
        let r = KeyRing::load(&p, true).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
        assert_eq!(unhex(line.trim()).unwrap().len(), 32);
        assert!(create_key_file(&p).is_err(), "never overwrites a key");
        // Readable by others: refused when strict.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = KeyRing::load(&p, true).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        assert!(KeyRing::load(&p, false).is_ok());
        // Debug never shows the key.
        let shown = format!("{r:?}");
        assert!(!shown.contains(line.trim()));
        for d in &r.signing().domains {
            assert!(!shown.contains(&hex(d)));
        }
    }

    #[test]
    fn source_reloads_a_rotated_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        std::fs::write(&p, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let s = KeySource::open(&p, true).unwrap();
        let first = s.current().signing().id;
        std::fs::write(
            &p,
            "ffeeddccbbaa99887766554433221100ff\n00112233445566778899aabbccddeeff\n",
        )
        .unwrap();
        {
            let mut st = s.state.lock().unwrap();
            st.checked = Instant::now() - Duration::from_secs(2);
        }
        let r = s.current();
        assert_eq!(r.len(), 2);
        assert_ne!(r.signing().id, first);
        assert!(r.find(&first).is_some(), "the old key still verifies");
        // A broken file keeps the last good ring.
        std::fs::write(&p, "garbage\n").unwrap();
        {
            let mut st = s.state.lock().unwrap();
            st.checked = Instant::now() - Duration::from_secs(2);
        }
        assert_eq!(s.current().len(), 2);
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(&[0, 15, 16, 255]), "000f10ff");
        assert_eq!(unhex("000F10ff").unwrap(), vec![0, 15, 16, 255]);
        assert!(unhex("abc").is_none());
    }
}
