//! [`Store`]'s methods: opening (schema, version, damage), bringing files up to date,
//! and the queries by job id, user and finish time.

use super::*;

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

    pub(super) fn try_open(path: &Path, logdir: &Path) -> Result<Store, StoreError> {
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
    pub(super) fn check_schema(&mut self, logdir: &Path) -> Result<(), StoreError> {
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

    pub(super) fn row_by_identity(
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

    pub(super) fn delete_file(conn: &Connection, id: i64) -> Result<(), rusqlite::Error> {
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
    pub(super) fn refresh_file(
        &mut self,
        kind: Kind,
        path: &Path,
    ) -> Result<Option<FileState>, StoreError> {
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
                input: super::super::bacct::AcctInput {
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
