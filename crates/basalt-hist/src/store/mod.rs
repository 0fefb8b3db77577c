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

mod db;
mod indexing;
mod location;
mod reader;
mod types;

use indexing::*;
pub use location::*;
pub use reader::*;
pub use types::*;

#[cfg(test)]
mod tests;
