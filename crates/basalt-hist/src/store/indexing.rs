//! Indexing new lines of a log file: parsing them in batches and writing their rows.

use super::*;

/// What the parsing thread found on one line, for the inserting thread.
pub(super) enum Item {
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
pub(super) struct Progress {
    pub(super) done: u64,
    pub(super) lines: u64,
    pub(super) hdr_off: Option<u64>,
    pub(super) hdr_len: Option<u64>,
    pub(super) aligned: Option<bool>,
    pub(super) tail: Option<Vec<u8>>,
    pub(super) more: bool,
}

/// Lines handed over at a time.
pub(super) const BATCH: usize = 2048;

/// Read and parse complete lines of `file` from `p.done` on (at most
/// [`LINES_PER_COMMIT`]), sending what is to be indexed in batches.
pub(super) fn parse_lines(
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
pub(super) fn index_lines(
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
