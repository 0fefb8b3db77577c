//! The nonces of the request seals a daemon has accepted, each kept until its seal can
//! no longer be fresh, so that each credential is accepted once — also across the
//! daemon's restarts: a daemon given a directory ([`ReplayCache::persistent`]) appends
//! every nonce it accepts to a file there before it acts on the request, and a
//! restarted daemon (or a second process of the same daemon, a RES worker) reads them
//! back.
//!
//! Layout: one file per minute of expiry, `seen.<minute>`, of fixed 24-byte records (the
//! expiry in milliseconds, little-endian, then the 16-byte nonce). A nonce always goes to
//! the file of its expiry's minute (its expiry is its seal's time plus the seal's life,
//! the same each time it is seen), so a check reads only that file's new records.
//! Appends are single `write` calls under an exclusive `flock` of the file: a kill -9
//! right after one loses nothing (the kernel has it), and processes sharing the
//! directory see each other's. Files whose minute has passed are deleted.

use crate::AuthError;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The most nonces remembered; past this, new credentials are refused until old ones
/// expire (failing closed rather than forgetting a nonce that could be replayed).
pub const MAX_REMEMBERED: usize = 1_000_000;

/// The length of a nonce the cache takes.
const NONCE: usize = crate::cred::NONCE_BYTES;
/// The length of a record of a journal file.
const RECORD: usize = 8 + NONCE;
/// The span of expiries one journal file holds.
const FILE_SPAN_MS: u64 = 60_000;

/// Nonces seen, each kept until the credential that carried it can no longer be fresh.
#[derive(Debug, Default)]
pub struct ReplayCache {
    seen: HashMap<[u8; NONCE], u64>,
    by_expiry: BTreeSet<(u64, [u8; NONCE])>,
    journal: Option<Journal>,
}

/// The files of a persistent cache.
#[derive(Debug)]
struct Journal {
    dir: PathBuf,
    /// Open files by minute, with how far this process has read each.
    files: BTreeMap<u64, (File, u64)>,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> AuthError {
    AuthError::Replay(format!("{what} {}: {e}", path.display()))
}

impl ReplayCache {
    /// A cache kept in `dir` (created, mode 0700): what earlier processes accepted and
    /// whose seals are still fresh at `now_ms` is remembered from the start.
    pub fn persistent(dir: &Path, now_ms: u64) -> Result<ReplayCache, AuthError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| io_err("cannot create", dir, e))?;
        let mut cache = ReplayCache {
            journal: Some(Journal {
                dir: dir.to_path_buf(),
                files: BTreeMap::new(),
            }),
            ..ReplayCache::default()
        };
        let entries = std::fs::read_dir(dir).map_err(|e| io_err("cannot read", dir, e))?;
        let mut minutes = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(minute) = name
                .to_str()
                .and_then(|n| n.strip_prefix("seen."))
                .and_then(|m| m.parse::<u64>().ok())
            else {
                continue;
            };
            minutes.push(minute);
        }
        minutes.sort_unstable();
        for minute in minutes {
            if (minute + 1) * FILE_SPAN_MS < now_ms {
                let _ = std::fs::remove_file(dir.join(format!("seen.{minute}")));
                continue;
            }
            cache.catch_up(minute)?;
        }
        cache.prune(now_ms);
        Ok(cache)
    }

    /// Is this cache kept on disk?
    pub fn is_persistent(&self) -> bool {
        self.journal.is_some()
    }

    fn prune(&mut self, now_ms: u64) {
        while let Some((exp, n)) = self.by_expiry.first().copied() {
            if exp >= now_ms {
                break;
            }
            self.by_expiry.pop_first();
            self.seen.remove(&n);
        }
        if let Some(j) = self.journal.as_mut() {
            let old: Vec<u64> = j
                .files
                .keys()
                .copied()
                .filter(|m| (m + 1) * FILE_SPAN_MS < now_ms)
                .collect();
            for m in old {
                j.files.remove(&m);
                let _ = std::fs::remove_file(j.dir.join(format!("seen.{m}")));
            }
        }
    }

    fn remember(&mut self, nonce: [u8; NONCE], expires_ms: u64) {
        if self.seen.insert(nonce, expires_ms).is_none() {
            self.by_expiry.insert((expires_ms, nonce));
        }
    }

    /// Open (or create) the file of `minute`, lock it, read what others appended since
    /// this process last read it, and return it locked.
    fn catch_up(&mut self, minute: u64) -> Result<Option<&mut File>, AuthError> {
        let Some(j) = self.journal.as_mut() else {
            return Ok(None);
        };
        let path = j.dir.join(format!("seen.{minute}"));
        let (f, pos) = match j.files.entry(minute) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .append(true)
                    .create(true)
                    .mode(0o600)
                    .open(&path)
                    .map_err(|e| io_err("cannot open", &path, e))?;
                e.insert((f, 0))
            }
        };
        f.lock().map_err(|e| io_err("cannot lock", &path, e))?;
        let mut end = f
            .metadata()
            .map_err(|e| io_err("cannot read", &path, e))?
            .len();
        if !end.is_multiple_of(RECORD as u64) {
            // A record cut short (a crash in the middle of a write, which a single small
            // append does not do, or a damaged file): pad it to a whole (expired, zero)
            // record so that the records appended after it stay aligned.
            end = end.div_ceil(RECORD as u64) * RECORD as u64;
            f.set_len(end)
                .map_err(|e| io_err("cannot repair", &path, e))?;
        }
        let mut fresh = Vec::new();
        if end > *pos {
            f.seek(SeekFrom::Start(*pos))
                .and_then(|_| {
                    (&mut *f)
                        .take(end - *pos)
                        .read_to_end(&mut fresh)
                        .map(|_| ())
                })
                .map_err(|e| io_err("cannot read", &path, e))?;
            *pos += fresh.len() as u64;
        }
        for r in fresh.chunks_exact(RECORD) {
            let mut exp = [0u8; 8];
            exp.copy_from_slice(&r[..8]);
            let mut n = [0u8; NONCE];
            n.copy_from_slice(&r[8..]);
            let (seen, by_expiry) = (&mut self.seen, &mut self.by_expiry);
            let exp = u64::from_le_bytes(exp);
            if seen.insert(n, exp).is_none() {
                by_expiry.insert((exp, n));
            }
        }
        let j = self.journal.as_mut();
        Ok(j.and_then(|j| j.files.get_mut(&minute)).map(|(f, _)| f))
    }

    /// Record `nonce` (remembered until `expires_ms`); an error if it was seen before —
    /// by this process or, for a persistent cache, by any process of the directory — or
    /// if it cannot be remembered (the cache is full of unexpired nonces, or its file
    /// cannot be written: refusing is safer than forgetting).
    pub fn admit(&mut self, nonce: &[u8], expires_ms: u64, now_ms: u64) -> Result<(), AuthError> {
        self.prune(now_ms);
        let Ok(n) = <[u8; NONCE]>::try_from(nonce) else {
            return Err(AuthError::Refused(format!(
                "credential with a nonce of {} bytes, not {NONCE}",
                nonce.len()
            )));
        };
        if self.seen.contains_key(&n) {
            return Err(AuthError::Refused("credential replayed".into()));
        }
        if self.seen.len() >= MAX_REMEMBERED {
            return Err(AuthError::Refused(
                "too many credentials in flight; try again".into(),
            ));
        }
        if self.journal.is_none() {
            self.remember(n, expires_ms);
            return Ok(());
        }
        let minute = expires_ms / FILE_SPAN_MS;
        let outcome = (|| {
            self.catch_up(minute)?;
            if self.seen.contains_key(&n) {
                return Err(AuthError::Refused("credential replayed".into()));
            }
            let mut rec = [0u8; RECORD];
            rec[..8].copy_from_slice(&expires_ms.to_le_bytes());
            rec[8..].copy_from_slice(&n);
            let Some(j) = self.journal.as_mut() else {
                return Ok(());
            };
            let path = j.dir.join(format!("seen.{minute}"));
            if let Some((f, pos)) = j.files.get_mut(&minute) {
                f.write_all(&rec)
                    .map_err(|e| io_err("cannot write", &path, e))?;
                *pos += RECORD as u64;
            }
            self.remember(n, expires_ms);
            Ok(())
        })();
        if let Some((f, _)) = self.journal.as_mut().and_then(|j| j.files.get_mut(&minute)) {
            let _ = f.unlock();
        }
        outcome
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
    use crate::cred::nonce;

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

    /// Issue 49, item 2: a credential accepted before a restart (kill -9: nothing is
    /// flushed or closed) is refused after it, until its seal expires.
    #[test]
    fn a_nonce_accepted_before_a_restart_is_refused_after_it() {
        let d = tempfile::tempdir().unwrap();
        let now = 1_000_000_000;
        let n = nonce().unwrap();
        let m = nonce().unwrap();
        {
            let mut rc = ReplayCache::persistent(d.path(), now).unwrap();
            rc.admit(&n, now + 30_000, now).unwrap();
            rc.admit(&m, now + 90_000, now).unwrap();
            // Dropped without anything more: what a kill -9 leaves.
            std::mem::forget(rc);
        }
        let mut rc = ReplayCache::persistent(d.path(), now + 10).unwrap();
        assert_eq!(rc.len(), 2);
        let e = rc.admit(&n, now + 30_000, now + 10).unwrap_err();
        assert!(e.to_string().contains("replayed"), "{e}");
        assert!(rc.admit(&m, now + 90_000, now + 20).is_err());
        // A new one is fine, and so is the old one once it has expired (its seal is
        // stale by then anyway): the files of past minutes are deleted.
        assert!(rc.admit(&nonce().unwrap(), now + 30_000, now + 30).is_ok());
        let later = now + 200_000;
        let mut rc = ReplayCache::persistent(d.path(), later).unwrap();
        assert_eq!(rc.len(), 0);
        assert!(rc.admit(&n, later + 30_000, later).is_ok());
        let files = std::fs::read_dir(d.path()).unwrap().count();
        assert_eq!(files, 1, "only the current minute's file is left");
    }

    /// Two processes of one daemon (RES workers) share the directory: what one accepted,
    /// the other refuses.
    #[test]
    fn caches_sharing_a_directory_see_each_others_nonces() {
        let d = tempfile::tempdir().unwrap();
        let now = 2_000_000_000;
        let mut a = ReplayCache::persistent(d.path(), now).unwrap();
        let mut b = ReplayCache::persistent(d.path(), now).unwrap();
        let n = nonce().unwrap();
        a.admit(&n, now + 30_000, now).unwrap();
        let e = b.admit(&n, now + 30_000, now + 1).unwrap_err();
        assert!(e.to_string().contains("replayed"), "{e}");
        let m = nonce().unwrap();
        b.admit(&m, now + 30_000, now + 2).unwrap();
        assert!(a.admit(&m, now + 30_000, now + 3).is_err());
    }

    /// A record cut short at the end of a file (a damaged file) is padded to a whole
    /// expired record; the records before it are kept, and those after it stay aligned.
    #[test]
    fn a_torn_record_is_skipped() {
        let d = tempfile::tempdir().unwrap();
        let now = 3_000_000_000;
        let n = nonce().unwrap();
        {
            let mut rc = ReplayCache::persistent(d.path(), now).unwrap();
            rc.admit(&n, now + 1_000, now).unwrap();
        }
        let f = d
            .path()
            .join(format!("seen.{}", (now + 1_000) / FILE_SPAN_MS));
        let mut bytes = std::fs::read(&f).unwrap();
        bytes.extend_from_slice(&[7u8; 5]);
        std::fs::write(&f, bytes).unwrap();
        let mut rc = ReplayCache::persistent(d.path(), now).unwrap();
        assert!(rc.admit(&n, now + 1_000, now).is_err());
        let m = nonce().unwrap();
        rc.admit(&m, now + 1_000, now).unwrap();
        let mut again = ReplayCache::persistent(d.path(), now).unwrap();
        assert!(again.admit(&n, now + 1_000, now).is_err());
        assert!(again.admit(&m, now + 1_000, now).is_err());
    }
}
