//! Where the index database lives ([`cache_path`]: beside the log, or a local cache when
//! the log is on a network file system), damaged databases, and small helpers.

use super::*;

/// FNV-1a, 64 bits: a stable name for a log directory's cache file.
pub(super) fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The per-user cache file for `logdir`.
pub fn cache_path(logdir: &Path) -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    if !base.is_absolute() {
        return None;
    }
    let text = logdir.to_string_lossy();
    let mut name: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let keep = name.len().saturating_sub(60);
    name.drain(..keep);
    let name = name.trim_matches('_').to_owned();
    Some(
        base.join("basalt")
            .join("hist")
            .join(format!("{name}-{:016x}.sqlite", fnv64(text.as_bytes()))),
    )
}

/// Network filesystems (statfs magic numbers): SQLite's locking and its WAL shared
/// memory are not safe there when several hosts open the same database, so the index is
/// never put on one (LSB_SHAREDIR is often NFS).
pub(super) const NETWORK_FS: [i64; 14] = [
    0x6969,      // NFS
    0x517B,      // SMB
    0xFF53_4D42, // CIFS
    0xFE53_4D42, // SMB2
    0x5346_414F, // AFS
    0x7375_7245, // Coda
    0x564C,      // NCP
    0x6573_5546, // FUSE (sshfs, glusterfs, ...)
    0x0BD0_0BD0, // Lustre
    0x4750_4653, // GPFS
    0x00C3_6400, // Ceph
    0x0102_1997, // 9p
    0x7461_636F, // OCFS2
    0x0116_1970, // GFS2
];

/// Is `dir` (or its nearest existing ancestor) on a network filesystem?
pub fn on_network_fs(dir: &Path) -> bool {
    let mut d = Some(dir);
    while let Some(p) = d {
        if let Ok(st) = nix::sys::statfs::statfs(p) {
            #[allow(clippy::useless_conversion)] // fs_type_t is narrower on some targets
            let t = i64::from(st.filesystem_type().0);
            return NETWORK_FS.contains(&t);
        }
        d = p.parent();
    }
    false
}

/// Where to try the database, in order.
pub(super) fn candidates(logdir: &Path) -> Vec<PathBuf> {
    match std::env::var(INDEX_ENV).ok().as_deref().map(str::trim) {
        Some("off" | "0" | "no" | "none") => Vec::new(),
        Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
        _ => {
            let mut out = Vec::new();
            if logdir.is_dir() {
                out.push(logdir.join(DB_FILE));
            }
            out.extend(cache_path(logdir));
            out.retain(|p| !p.parent().is_some_and(on_network_fs));
            out
        }
    }
}

pub(super) fn is_damaged(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

pub(super) fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

pub(super) fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// Read `path`'s first bytes (at most [`HEAD_LEN`]).
pub(super) fn read_head(file: &File, path: &Path) -> Result<Vec<u8>, StoreError> {
    let mut buf = vec![0u8; HEAD_LEN];
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(path, e)),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// A file's row in `files`.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) id: i64,
    pub(super) kind: i64,
    pub(super) head: Vec<u8>,
    pub(super) done: u64,
    pub(super) lines: u64,
    pub(super) hdr_off: Option<u64>,
    pub(super) hdr_len: Option<u64>,
    pub(super) aligned: Option<bool>,
    pub(super) min_job: Option<u64>,
    pub(super) max_job: Option<u64>,
}
