//! The history index: an SQLite database that maps job ids, users, queues and finish
//! times to the byte offsets of their records in `lsb.acct` and the event files, so that
//! `bhist` and `bacct` read only the lines they need.
//!
//! The text files stay the truth; the database is a cache that can be thrown away at any
//! time. Each indexed file is known by its identity — device, inode and its first bytes
//! (an event file's header line names the switch that archived it) — not by its name, so
//! a log switch that renames `lsb.events.N` to `.N+1` costs nothing, and a replaced or
//! truncated file is indexed again from the start. For each file the index remembers how
//! far it has been read (the end of the last complete line) and continues from there
//! (files only grow: `lsb.acct` and `lsb.events` are append-only, switched files never
//! change). Damaged lines are remembered with their line numbers so that the commands can
//! report them as a full read would.
//!
//! Where the database lives ([`Store::open`]): `basalt-hist.sqlite` in the log directory
//! when the user running the command can write there (a personal cluster, the
//! administrator), else a per-user cache (`$XDG_CACHE_HOME/basalt/hist/` or
//! `~/.cache/basalt/hist/`), else nowhere: the commands then read the files as before.
//! Neither place is used when it is on a network filesystem (NFS, SMB, Lustre, GPFS, ...):
//! SQLite cannot share a database safely between hosts. `BASALT_HIST_INDEX=off` turns
//! the index off, `BASALT_HIST_INDEX=<file>` puts it at `<file>` (the administrator's
//! choice, even on a network filesystem). A database that is damaged, of another schema or of another log directory is
//! rebuilt from the text files.

use basalt_eventlog::{EventLogError, Record};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database's name in the log directory.
pub const DB_FILE: &str = "basalt-hist.sqlite";
/// The environment variable that turns the index off (`off`) or places it.
pub const INDEX_ENV: &str = "BASALT_HIST_INDEX";
/// Version of the schema below; another version is dropped and rebuilt.
const SCHEMA_VERSION: i64 = 2;
/// Bytes of a file's beginning kept to recognise it.
const HEAD_LEN: usize = 256;
/// Lines indexed per transaction (progress survives an interrupted build).
const LINES_PER_COMMIT: usize = 200_000;
/// How long to wait for another process that is updating the index.
const BUSY_WAIT: Duration = Duration::from_secs(30);

const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    head BLOB NOT NULL,
    done INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    hdr_off INTEGER,
    hdr_len INTEGER,
    aligned INTEGER,
    min_job INTEGER,
    max_job INTEGER,
    UNIQUE (dev, ino)
);
CREATE TABLE bad (
    file INTEGER NOT NULL, off INTEGER NOT NULL, line INTEGER NOT NULL,
    PRIMARY KEY (file, off)
) WITHOUT ROWID;
CREATE TABLE ev (
    job INTEGER NOT NULL, file INTEGER NOT NULL, off INTEGER NOT NULL,
    PRIMARY KEY (job, file, off)
) WITHOUT ROWID;
CREATE TABLE ev_jobs (
    file INTEGER NOT NULL, job INTEGER NOT NULL,
    PRIMARY KEY (file, job)
) WITHOUT ROWID;
CREATE TABLE ev_user (
    file INTEGER NOT NULL, user TEXT NOT NULL, job INTEGER NOT NULL,
    PRIMARY KEY (file, user, job)
) WITHOUT ROWID;
CREATE TABLE acct (
    file INTEGER NOT NULL,
    off INTEGER NOT NULL,
    job INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    user TEXT NOT NULL,
    queue TEXT NOT NULL,
    project TEXT NOT NULL,
    end_time INTEGER NOT NULL,
    submit INTEGER NOT NULL,
    start INTEGER NOT NULL,
    status INTEGER NOT NULL,
    cpu REAL NOT NULL,
    maxrss REAL NOT NULL,
    max_rmem INTEGER NOT NULL,
    max_rswap INTEGER NOT NULL,
    PRIMARY KEY (file, off)
) WITHOUT ROWID;
CREATE INDEX acct_job ON acct (job);
CREATE INDEX acct_user ON acct (user, file, off);
CREATE INDEX acct_queue ON acct (queue, file, off);
CREATE INDEX acct_end ON acct (end_time);
";

const TABLES: [&str; 7] = ["meta", "files", "bad", "ev", "ev_jobs", "ev_user", "acct"];

/// Why the index could not be used (the commands then read the files).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("history index: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("history index: {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A line the index points at is not what it says (the file was changed in place).
    #[error("history index: {} changed under the index", path.display())]
    Stale { path: PathBuf },
    #[error("history index: {0}")]
    Log(#[from] EventLogError),
}

fn io_err(path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The two kinds of files indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `lsb.acct`, `lsb.acct.N`: `JOB_FINISH` records.
    Acct = 1,
    /// `lsb.events`, `lsb.events.N`.
    Events = 2,
}

/// What the index knows about a file after [`Store::refresh`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// The file's row.
    pub id: i64,
    pub path: PathBuf,
    /// The end of the last complete line (everything before it is indexed).
    pub done: u64,
    /// The bytes after `done` (an incomplete last line), if any.
    pub tail: Option<Vec<u8>>,
    /// The `#<offset>` header line of an event file: (offset, length of the line).
    pub header: Option<(u64, u64)>,
    /// Whether a complete line starts exactly at the header's offset (`None`: the file
    /// ends before the offset, or exactly at it).
    pub aligned: Option<bool>,
}

impl FileState {
    /// Is the header's offset on a line boundary (so that the records before it are the
    /// carried-over ones)?
    pub fn offset_on_boundary(&self) -> bool {
        match (self.header, self.aligned) {
            (Some(_), Some(a)) => a,
            (Some((off, _)), None) => off == self.done,
            (None, _) => false,
        }
    }
}

/// The accounting figures of one indexed `JOB_FINISH` record.
#[derive(Debug, Clone, PartialEq)]
pub struct AcctRow {
    pub off: u64,
    pub job_id: u64,
    pub idx: u32,
    pub input: super::bacct::AcctInput,
}

/// Which `JOB_FINISH` records to return (all conditions must hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcctQuery {
    /// These job ids (any array index).
    pub jobs: Option<BTreeSet<u64>>,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub project: Option<String>,
}

/// An open history index.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// FNV-1a, 64 bits: a stable name for a log directory's cache file.
fn fnv64(bytes: &[u8]) -> u64 {
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
const NETWORK_FS: [i64; 14] = [
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
fn candidates(logdir: &Path) -> Vec<PathBuf> {
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

fn is_damaged(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// Read `path`'s first bytes (at most [`HEAD_LEN`]).
fn read_head(file: &File, path: &Path) -> Result<Vec<u8>, StoreError> {
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
struct Row {
    id: i64,
    kind: i64,
    head: Vec<u8>,
    done: u64,
    lines: u64,
    hdr_off: Option<u64>,
    hdr_len: Option<u64>,
    aligned: Option<bool>,
    min_job: Option<u64>,
    max_job: Option<u64>,
}

impl Store {
    /// Open (creating or rebuilding as needed) the index of `logdir`, or `None` when no
    /// place for it can be used.
    pub fn open(logdir: &Path) -> Option<Store> {
        let logdir_key = logdir
            .canonicalize()
            .unwrap_or_else(|_| logdir.to_path_buf());
        for path in candidates(logdir) {
            if let Ok(s) = Store::open_at(&path, &logdir_key) {
                return Some(s);
            }
        }
        None
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Open the database at `path` for `logdir`, rebuilding it once if it is damaged.
    pub fn open_at(path: &Path, logdir: &Path) -> Result<Store, StoreError> {
        match Store::try_open(path, logdir) {
            Err(StoreError::Sql(e)) if is_damaged(&e) => {
                remove_db(path);
                Store::try_open(path, logdir)
            }
            other => other,
        }
    }

    fn try_open(path: &Path, logdir: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_WAIT)?;
        // A cache: WAL for readers that never wait, NORMAL durability (a crash may lose
        // the last updates, which are then redone from the text files).
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.pragma_update(None, "cache_size", -65_536)?;
        conn.pragma_update(None, "mmap_size", 1_i64 << 30)?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
        };
        store.check_schema(logdir)?;
        Ok(store)
    }

    /// Create the tables, or drop and recreate them when they are of another schema
    /// version or another log directory. Also proves that the database is writable.
    fn check_schema(&mut self, logdir: &Path) -> Result<(), StoreError> {
        let key = logdir.to_string_lossy().into_owned();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let owner: Option<String> = if version == SCHEMA_VERSION {
            tx.query_row("SELECT value FROM meta WHERE key = 'logdir'", [], |r| {
                r.get(0)
            })
            .optional()?
        } else {
            None
        };
        if version != SCHEMA_VERSION || owner.as_deref() != Some(key.as_str()) {
            for t in TABLES {
                tx.execute_batch(&format!("DROP TABLE IF EXISTS {t};"))?;
            }
            tx.execute_batch(SCHEMA)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('logdir', ?1)",
                params![key],
            )?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        tx.commit()?;
        Ok(())
    }

    fn row_by_identity(
        conn: &Connection,
        dev: u64,
        ino: u64,
    ) -> Result<Option<Row>, rusqlite::Error> {
        conn.query_row(
            "SELECT id, kind, head, done, lines, hdr_off, hdr_len, aligned, min_job, max_job
             FROM files WHERE dev = ?1 AND ino = ?2",
            params![i(dev), i(ino)],
            |r| {
                Ok(Row {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    head: r.get(2)?,
                    done: u(r.get(3)?),
                    lines: u(r.get(4)?),
                    hdr_off: r.get::<_, Option<i64>>(5)?.map(u),
                    hdr_len: r.get::<_, Option<i64>>(6)?.map(u),
                    aligned: r.get::<_, Option<i64>>(7)?.map(|v| v != 0),
                    min_job: r.get::<_, Option<i64>>(8)?.map(u),
                    max_job: r.get::<_, Option<i64>>(9)?.map(u),
                })
            },
        )
        .optional()
    }

    fn delete_file(conn: &Connection, id: i64) -> Result<(), rusqlite::Error> {
        // `ev` is keyed by job first: find the file's rows through its jobs.
        conn.execute(
            "DELETE FROM ev WHERE job IN (SELECT job FROM ev_jobs WHERE file = ?1) AND file = ?1",
            params![id],
        )?;
        conn.execute("DELETE FROM ev_jobs WHERE file = ?1", params![id])?;
        conn.execute("DELETE FROM ev_user WHERE file = ?1", params![id])?;
        conn.execute("DELETE FROM acct WHERE file = ?1", params![id])?;
        conn.execute("DELETE FROM bad WHERE file = ?1", params![id])?;
        conn.execute("DELETE FROM files WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Forget everything about the file `id` (it will be indexed again from the start).
    pub fn forget(&mut self, id: i64) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Store::delete_file(&tx, id)?;
        tx.commit()?;
        Ok(())
    }

    /// Bring the index of `wanted` up to date. `all` lists every file of `kind` present in
    /// the log directory: rows of files of that kind that are no longer among them are
    /// dropped. Files of `wanted` that do not exist are left out of the result.
    pub fn refresh(
        &mut self,
        kind: Kind,
        all: &[PathBuf],
        wanted: &[PathBuf],
    ) -> Result<HashMap<PathBuf, FileState>, StoreError> {
        // Identities of the files present now.
        let mut present: Vec<(u64, u64)> = Vec::with_capacity(all.len());
        for p in all.iter().chain(wanted) {
            match std::fs::metadata(p) {
                Ok(m) => present.push((m.dev(), m.ino())),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(p, e)),
            }
        }
        {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let gone: Vec<i64> = {
                let mut st = tx.prepare("SELECT id, dev, ino FROM files WHERE kind = ?1")?;
                let rows = st.query_map(params![kind as i64], |r| {
                    Ok((r.get::<_, i64>(0)?, u(r.get(1)?), u(r.get(2)?)))
                })?;
                let mut gone = Vec::new();
                for row in rows {
                    let (id, dev, ino) = row?;
                    if !present.contains(&(dev, ino)) {
                        gone.push(id);
                    }
                }
                gone
            };
            for id in gone {
                Store::delete_file(&tx, id)?;
            }
            tx.commit()?;
        }
        let mut out = HashMap::new();
        for p in wanted {
            if out.contains_key(p) {
                continue;
            }
            if let Some(st) = self.refresh_file(kind, p)? {
                out.insert(p.clone(), st);
            }
        }
        Ok(out)
    }

    /// Index the part of `path` not indexed yet; `None` when the file does not exist.
    fn refresh_file(&mut self, kind: Kind, path: &Path) -> Result<Option<FileState>, StoreError> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path, e)),
        };
        let meta = file.metadata().map_err(|e| io_err(path, e))?;
        let (dev, ino) = (meta.dev(), meta.ino());
        let head = read_head(&file, path)?;
        let mut tail: Option<Vec<u8>> = None;
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut row = match Store::row_by_identity(&tx, dev, ino)? {
                Some(r)
                    if r.kind == kind as i64
                        && head.len() >= r.head.len()
                        && head[..r.head.len()] == r.head[..] =>
                {
                    r
                }
                other => {
                    if let Some(r) = other {
                        Store::delete_file(&tx, r.id)?;
                    }
                    tx.execute(
                        "INSERT INTO files (kind, dev, ino, head, done, lines) VALUES (?1, ?2, ?3, ?4, 0, 0)",
                        params![kind as i64, i(dev), i(ino), head],
                    )?;
                    Row {
                        id: tx.last_insert_rowid(),
                        kind: kind as i64,
                        head: head.clone(),
                        done: 0,
                        lines: 0,
                        hdr_off: None,
                        hdr_len: None,
                        aligned: None,
                        min_job: None,
                        max_job: None,
                    }
                }
            };
            let size = file.metadata().map_err(|e| io_err(path, e))?.len();
            if size < row.done {
                // Shorter than what was indexed: not the same file any more.
                Store::delete_file(&tx, row.id)?;
                tx.commit()?;
                continue;
            }
            let more = index_lines(&tx, kind, &file, path, &mut row, size, &mut tail)?;
            tx.execute(
                "UPDATE files SET done = ?2, lines = ?3, hdr_off = ?4, hdr_len = ?5, aligned = ?6,
                 min_job = ?7, max_job = ?8 WHERE id = ?1",
                params![
                    row.id,
                    i(row.done),
                    i(row.lines),
                    row.hdr_off.map(i),
                    row.hdr_len.map(i),
                    row.aligned.map(i64::from),
                    row.min_job.map(i),
                    row.max_job.map(i)
                ],
            )?;
            tx.commit()?;
            if more {
                continue;
            }
            return Ok(Some(FileState {
                id: row.id,
                path: path.to_owned(),
                done: row.done,
                tail,
                header: row.hdr_off.zip(row.hdr_len),
                aligned: row.aligned,
            }));
        }
    }

    /// The ids of the jobs that a `JOB_NEW` or `JOB_MODIFY` in one of `files` gives to
    /// `user`.
    pub fn jobs_of_user(&self, files: &[i64], user: &str) -> Result<BTreeSet<u64>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT job FROM ev_user WHERE file = ?1 AND user = ?2")?;
        let mut out = BTreeSet::new();
        for f in files {
            let rows = st.query_map(params![f, user], |r| r.get::<_, i64>(0))?;
            for j in rows {
                out.insert(u(j?));
            }
        }
        Ok(out)
    }

    /// The offsets of every record of `jobs` in `files`, per file, ascending.
    pub fn event_offsets(
        &self,
        jobs: &BTreeSet<u64>,
        files: &[i64],
    ) -> Result<HashMap<i64, Vec<u64>>, StoreError> {
        let mut out: HashMap<i64, Vec<u64>> = files.iter().map(|f| (*f, Vec::new())).collect();
        let mut st = self
            .conn
            .prepare_cached("SELECT file, off FROM ev WHERE job = ?1")?;
        for j in jobs {
            let rows = st.query_map(params![i(*j)], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?;
            for row in rows {
                let (f, off) = row?;
                if let Some(v) = out.get_mut(&f) {
                    v.push(u(off));
                }
            }
        }
        for v in out.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        Ok(out)
    }

    /// The damaged lines of a file: (offset, 1-based line number), ascending.
    pub fn bad_lines(&self, file: i64) -> Result<Vec<(u64, u64)>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT off, line FROM bad WHERE file = ?1 ORDER BY off")?;
        let rows = st.query_map(params![file], |r| {
            Ok((u(r.get::<_, i64>(0)?), u(r.get::<_, i64>(1)?)))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The `JOB_FINISH` records of a file that match `q`, in file order.
    pub fn acct_rows(&self, file: i64, q: &AcctQuery) -> Result<Vec<AcctRow>, StoreError> {
        // Without statistics SQLite prefers the primary key (file, off), which reads the
        // whole file's rows: name the selective index.
        let index = if q.jobs.is_some() {
            " INDEXED BY acct_job"
        } else if q.user.is_some() {
            " INDEXED BY acct_user"
        } else if q.queue.is_some() {
            " INDEXED BY acct_queue"
        } else {
            ""
        };
        let mut sql = format!(
            "SELECT off, job, idx, status, submit, start, end_time, cpu, maxrss, max_rmem, max_rswap
             FROM acct{index} WHERE file = ?1"
        );
        let mut args: Vec<rusqlite::types::Value> = vec![file.into()];
        for (col, v) in [
            ("user", &q.user),
            ("queue", &q.queue),
            ("project", &q.project),
        ] {
            if let Some(v) = v {
                args.push(v.clone().into());
                sql.push_str(&format!(" AND {col} = ?{}", args.len()));
            }
        }
        if q.jobs.is_some() {
            args.push(0i64.into());
            sql.push_str(&format!(" AND job = ?{}", args.len()));
        }
        sql.push_str(" ORDER BY off");
        let mut st = self.conn.prepare_cached(&sql)?;
        let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<AcctRow> {
            Ok(AcctRow {
                off: u(r.get(0)?),
                job_id: u(r.get(1)?),
                idx: u32::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                input: super::bacct::AcctInput {
                    j_status: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                    submit_time: r.get(4)?,
                    start_time: r.get(5)?,
                    end_time: r.get(6)?,
                    cpu: r.get(7)?,
                    maxrss: r.get(8)?,
                    max_rmem: r.get(9)?,
                    max_rswap: r.get(10)?,
                },
            })
        };
        let mut out = Vec::new();
        match &q.jobs {
            None => {
                let rows = st.query_map(rusqlite::params_from_iter(args.iter()), map)?;
                for r in rows {
                    out.push(r?);
                }
            }
            Some(jobs) => {
                for j in jobs {
                    if let Some(last) = args.last_mut() {
                        *last = i(*j).into();
                    }
                    let rows = st.query_map(rusqlite::params_from_iter(args.iter()), map)?;
                    for r in rows {
                        out.push(r?);
                    }
                }
                out.sort_by_key(|r| r.off);
            }
        }
        Ok(out)
    }
}

/// What the parsing thread found on one line, for the inserting thread.
enum Item {
    Acct {
        off: u64,
        f: Box<basalt_eventlog::JobFinish>,
    },
    Event {
        off: u64,
        job: u64,
        /// The owner, for JOB_NEW and JOB_MODIFY.
        user: Option<String>,
    },
    Bad {
        off: u64,
        line: u64,
    },
}

/// Where the parsing thread stopped.
struct Progress {
    done: u64,
    lines: u64,
    hdr_off: Option<u64>,
    hdr_len: Option<u64>,
    aligned: Option<bool>,
    tail: Option<Vec<u8>>,
    more: bool,
}

/// Lines handed over at a time.
const BATCH: usize = 2048;

/// Read and parse complete lines of `file` from `p.done` on (at most
/// [`LINES_PER_COMMIT`]), sending what is to be indexed in batches.
fn parse_lines(
    kind: Kind,
    file: &File,
    path: &Path,
    size: u64,
    mut p: Progress,
    send: &std::sync::mpsc::SyncSender<Vec<Item>>,
) -> Result<Progress, StoreError> {
    let mut reader = BufReader::with_capacity(1 << 20, file);
    reader
        .seek(SeekFrom::Start(p.done))
        .map_err(|e| io_err(path, e))?;
    let mut reader = reader.take(size - p.done);
    let mut buf = Vec::with_capacity(4096);
    let mut batch = Vec::with_capacity(BATCH);
    let mut n_lines = 0usize;
    p.more = false;
    p.tail = None;
    loop {
        if n_lines >= LINES_PER_COMMIT {
            p.more = true;
            break;
        }
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') {
            p.tail = Some(buf.clone());
            break;
        }
        n_lines += 1;
        let off = p.done;
        p.done += n as u64;
        p.lines += 1;
        let text = String::from_utf8_lossy(&buf);
        if kind == Kind::Events {
            if p.lines == 1 {
                if let Some(o) = basalt_eventlog::parse_header(&text) {
                    p.hdr_off = Some(o);
                    p.hdr_len = Some(n as u64);
                    if o <= n as u64 {
                        p.aligned = Some(o == n as u64);
                    }
                }
            } else if let (Some(o), None) = (p.hdr_off, p.aligned) {
                if off == o {
                    p.aligned = Some(true);
                } else if off < o && off + n as u64 > o {
                    p.aligned = Some(false);
                }
            }
        }
        let item = match basalt_eventlog::parse_line(&text) {
            Ok(Some(rec)) => match (kind, rec) {
                (Kind::Acct, Record::JobFinish(f)) => Some(Item::Acct { off, f }),
                (Kind::Acct, _) => None,
                (Kind::Events, rec) => rec.job_id().map(|job| Item::Event {
                    off,
                    job,
                    user: match &rec {
                        Record::JobNew(n) | Record::JobModify(n) => Some(n.user_name.clone()),
                        _ => None,
                    },
                }),
            },
            Ok(None) => None,
            Err(_) => Some(Item::Bad { off, line: p.lines }),
        };
        if let Some(item) = item {
            batch.push(item);
            if batch.len() >= BATCH {
                if send.send(std::mem::take(&mut batch)).is_err() {
                    // The inserting side gave up (an SQL error); it reports why.
                    return Ok(p);
                }
                batch.reserve(BATCH);
            }
        }
    }
    if !batch.is_empty() {
        let _ = send.send(batch);
    }
    Ok(p)
}

/// Index complete lines of `file` from `row.done` on (at most [`LINES_PER_COMMIT`]):
/// one thread reads and parses, this one inserts. Returns whether there is more to do;
/// sets `tail` to the bytes after the last complete line when the end of the file was
/// reached.
fn index_lines(
    tx: &Connection,
    kind: Kind,
    file: &File,
    path: &Path,
    row: &mut Row,
    size: u64,
    tail: &mut Option<Vec<u8>>,
) -> Result<bool, StoreError> {
    let mut ev =
        tx.prepare_cached("INSERT OR IGNORE INTO ev (job, file, off) VALUES (?1, ?2, ?3)")?;
    let mut ev_user =
        tx.prepare_cached("INSERT OR IGNORE INTO ev_user (file, user, job) VALUES (?1, ?2, ?3)")?;
    let mut bad =
        tx.prepare_cached("INSERT OR IGNORE INTO bad (file, off, line) VALUES (?1, ?2, ?3)")?;
    let mut ev_jobs =
        tx.prepare_cached("INSERT OR IGNORE INTO ev_jobs (file, job) VALUES (?1, ?2)")?;
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut acct = tx.prepare_cached(
        "INSERT OR REPLACE INTO acct (file, off, job, idx, user, queue, project, end_time, submit,
         start, status, cpu, maxrss, max_rmem, max_rswap)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    let start = Progress {
        done: row.done,
        lines: row.lines,
        hdr_off: row.hdr_off,
        hdr_len: row.hdr_len,
        aligned: row.aligned,
        tail: None,
        more: false,
    };
    let id = row.id;
    let (min_job, max_job) = (&mut row.min_job, &mut row.max_job);
    let (inserted, parsed) = std::thread::scope(|scope| {
        let (send, recv) = std::sync::mpsc::sync_channel::<Vec<Item>>(8);
        let parser = scope.spawn(move || parse_lines(kind, file, path, size, start, &send));
        let inserted = (|| -> Result<(), StoreError> {
            for batch in recv.iter() {
                for item in batch {
                    match item {
                        Item::Acct { off, f } => {
                            acct.execute(params![
                                id,
                                i(off),
                                i(f.job_id),
                                i64::from(f.idx),
                                f.user_name,
                                f.queue,
                                f.project_name,
                                f.header.time,
                                f.submit_time,
                                f.start_time,
                                i64::from(f.j_status),
                                f.rusage.cpu_time(),
                                f.rusage.maxrss,
                                f.max_rmem,
                                f.max_rswap
                            ])?;
                        }
                        Item::Event { off, job, user } => {
                            ev.execute(params![i(job), id, i(off)])?;
                            if seen.insert(job) {
                                ev_jobs.execute(params![id, i(job)])?;
                            }
                            *min_job = Some(min_job.map_or(job, |m| m.min(job)));
                            *max_job = Some(max_job.map_or(job, |m| m.max(job)));
                            if let Some(u) = user {
                                ev_user.execute(params![id, u, i(job)])?;
                            }
                        }
                        Item::Bad { off, line } => {
                            bad.execute(params![id, i(off), i(line)])?;
                        }
                    }
                }
            }
            Ok(())
        })();
        // Dropping the receiver (on an error) stops the parser at its next send.
        drop(recv);
        let parsed = parser.join();
        (inserted, parsed)
    });
    inserted?;
    let p = match parsed {
        Ok(p) => p?,
        Err(_) => {
            return Err(io_err(
                path,
                io::Error::other("the thread reading the file panicked"),
            ));
        }
    };
    row.done = p.done;
    row.lines = p.lines;
    row.hdr_off = p.hdr_off;
    row.hdr_len = p.hdr_len;
    row.aligned = p.aligned;
    *tail = p.tail;
    Ok(p.more)
}

/// Reads lines at given offsets of one file, mostly forwards.
pub struct LineReader {
    path: PathBuf,
    reader: BufReader<File>,
    pos: u64,
}

impl LineReader {
    pub fn open(path: &Path) -> Result<LineReader, StoreError> {
        let f = File::open(path).map_err(|e| io_err(path, e))?;
        Ok(LineReader {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 16, f),
            pos: 0,
        })
    }

    fn seek(&mut self, to: u64) -> Result<(), StoreError> {
        if to >= self.pos && to - self.pos < (1 << 16) {
            self.reader
                .seek_relative(i64::try_from(to - self.pos).unwrap_or(0))
                .map_err(|e| io_err(&self.path, e))?;
        } else {
            self.reader
                .seek(SeekFrom::Start(to))
                .map_err(|e| io_err(&self.path, e))?;
        }
        self.pos = to;
        Ok(())
    }

    /// The complete line that starts at `off` (with its newline). A line that does not
    /// start right after a newline, or that has none at its end, is a [`StoreError::Stale`].
    pub fn line_at(&mut self, off: u64, out: &mut Vec<u8>) -> Result<(), StoreError> {
        out.clear();
        if off > 0 {
            self.seek(off - 1)?;
            let n = self
                .reader
                .read_until(b'\n', out)
                .map_err(|e| io_err(&self.path, e))?;
            self.pos += n as u64;
            if n != 1 || out.first() != Some(&b'\n') {
                return Err(StoreError::Stale {
                    path: self.path.clone(),
                });
            }
            out.clear();
        } else {
            self.seek(0)?;
        }
        let n = self
            .reader
            .read_until(b'\n', out)
            .map_err(|e| io_err(&self.path, e))?;
        self.pos += n as u64;
        if out.last() != Some(&b'\n') {
            return Err(StoreError::Stale {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_are_stable_and_safe() {
        let a = fnv64(b"/var/lsf/work/basalt/logdir");
        assert_eq!(a, fnv64(b"/var/lsf/work/basalt/logdir"));
        assert_ne!(a, fnv64(b"/var/lsf/work/other/logdir"));
        // The FNV-1a test vector.
        assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn local_filesystems_are_not_network_ones() {
        assert!(!on_network_fs(Path::new("/proc")));
        assert!(!on_network_fs(Path::new("/proc/self/does/not/exist")));
    }
}
