//! The bridge between the core's events and LSF's event-log records: lsb.events
//! (every state change), lsb.acct (JOB_FINISH), spooled job files and the
//! `#lsb.event.lock` lock, all through `basalt-eventlog`.

use basalt_core::job::{JobState, sub2};
use basalt_eventlog as el;
use basalt_eventlog as r;
use basalt_sched::{Effect, Event, Job, Sched, Submission, Usage};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// `JOB_FORCE` options (LSF's lsbatch.h): plain `brun`, and `brun -f`.
const RUNJOB_OPT_NORMAL: u32 = 0x01;
const RUNJOB_OPT_NOSTOP: u32 = 0x02;

#[derive(Debug, Error)]
pub enum JournalError {
    #[error(transparent)]
    Log(#[from] el::EventLogError),
    #[error(transparent)]
    Lock(#[from] el::LockError),
    #[error("another mbatchd holds {path}: {holder}")]
    Held { path: PathBuf, holder: String },
    #[error(
        "{path} is no longer this mbatchd's lock (another mbatchd took it over); \
         stopping without writing"
    )]
    LockLost { path: PathBuf },
    #[error("{path}: write probe failed: {source}")]
    Probe {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What was read back on open.
#[derive(Debug, Default)]
pub struct Replayed {
    pub events: Vec<Event>,
    pub torn_tail: Option<String>,
    /// Where the torn tail began (the file's length after the cut).
    pub torn_offset: Option<u64>,
    /// Records of types Basalt does not replay (kept in the file, skipped).
    pub skipped: usize,
}

/// How the journal writes and guards the log (lsb.params `BASALT_EVENT_*`).
#[derive(Debug, Clone)]
pub struct Options {
    pub sync: el::SyncPolicy,
    /// Heartbeat of `#lsb.event.lock`; a waiting mbatchd checks twice as often and takes
    /// a lock over after more than [`STALE_CHECKS`] checks without a heartbeat.
    pub lock_heartbeat: Duration,
    /// `LSB_LOCALDIR`: a second copy of lsb.events and lsb.acct on the master's local disk.
    pub local_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            sync: el::SyncPolicy::Fdatasync,
            lock_heartbeat: Duration::from_secs(1),
            local_dir: None,
        }
    }
}

impl Options {
    pub fn from_config(config: &basalt_config::Config) -> Options {
        let p = &config.batch.params;
        Options {
            sync: p.event_sync.parse().unwrap_or_default(),
            lock_heartbeat: Duration::from_secs(u64::from(p.event_lock_heartbeat_secs.max(1))),
            local_dir: config.local_logdir(),
        }
    }
}

/// More than this many checks half a heartbeat apart without a change of the lock file make
/// its owner stale (LSF: 4 checks of MBD_SLEEP_TIME/2).
pub const STALE_CHECKS: u32 = 4;

/// One copy of lsb.events + lsb.acct: the shared log directory, or the local duplicate.
#[derive(Debug)]
struct Copy {
    dir: PathBuf,
    logs: Option<(el::EventLog, el::AcctLog)>,
    /// Why this copy is out of date (a failed write or open); it is re-synchronised from
    /// a good copy before it is written again.
    broken: Option<String>,
}

/// lsb.events + lsb.acct (with an optional local duplicate) + the spool directory, held
/// under the lock.
#[derive(Debug)]
pub struct Journal {
    logdir: PathBuf,
    /// The shared copy first, then the `LSB_LOCALDIR` duplicate if configured.
    copies: Vec<Copy>,
    lock: el::EventLock,
    opts: Options,
    last_touch: Instant,
    /// Log directories holding job files written since the last commit, not yet synced.
    unsynced: Vec<PathBuf>,
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Take `logdir/#lsb.event.lock` for `me` (event-log.md §7): a free lock, or one naming
/// this host and a dead process, is taken at once. A lock held by someone else is checked
/// twice per heartbeat (LSF: every MBD_SLEEP_TIME/2); it is taken over only when its file
/// has not changed (no heartbeat) for more than [`STALE_CHECKS`] checks in a row, i.e.
/// for at least two and a half heartbeats. Gives up with [`JournalError::Held`]
/// after `wait`.
pub fn acquire_lock(
    logdir: &Path,
    me: &str,
    heartbeat: Duration,
    wait: Duration,
) -> Result<el::EventLock, JournalError> {
    std::fs::create_dir_all(logdir).map_err(|e| {
        JournalError::Log(el::EventLogError::Io {
            path: logdir.to_path_buf(),
            op: "create directory",
            source: e,
        })
    })?;
    let deadline = Instant::now() + wait;
    let mut last: Option<el::LockInfo> = None;
    let mut unchanged = 0u32;
    loop {
        match el::EventLock::acquire(logdir, me, pid_alive) {
            Ok(l) => return Ok(l),
            Err(el::LockError::Held { holder, .. }) => {
                match el::EventLock::inspect(logdir)? {
                    None => continue,
                    Some(info) => {
                        if last.as_ref() == Some(&info) {
                            unchanged += 1;
                        } else {
                            unchanged = 0;
                            last = Some(info.clone());
                        }
                        if unchanged > STALE_CHECKS {
                            tracing::warn!(
                                "{} names {} and has not changed for {unchanged} checks \
                                 {:?} apart: taking it over",
                                logdir.join(el::LOCK_FILE).display(),
                                info.holder,
                                heartbeat / 2
                            );
                            match el::EventLock::take_over(logdir, me, &info) {
                                Ok(l) => return Ok(l),
                                Err(el::LockError::Held { .. }) => {
                                    unchanged = 0;
                                    last = None;
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                }
                if Instant::now() >= deadline {
                    return Err(JournalError::Held {
                        path: logdir.join(el::LOCK_FILE),
                        holder,
                    });
                }
                std::thread::sleep(heartbeat / 2);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Take the lock (see [`acquire_lock`]; waiting up to ten heartbeats plus 5 s), open the
/// logs, and read lsb.events back as core events.
pub fn open(logdir: &Path, me: &str, opts: Options) -> Result<(Journal, Replayed), JournalError> {
    let wait = opts.lock_heartbeat * (2 * STALE_CHECKS + 2) + Duration::from_secs(5);
    let lock = acquire_lock(logdir, me, opts.lock_heartbeat, wait)?;
    let mut dirs = vec![logdir.to_path_buf()];
    dirs.extend(opts.local_dir.clone());
    let (copies, replayed) = open_copies(&dirs, &opts)?;
    Ok((
        Journal {
            logdir: logdir.to_path_buf(),
            copies,
            lock,
            opts,
            last_touch: Instant::now(),
            unsynced: Vec::new(),
        },
        replayed,
    ))
}

/// Read `logdir/lsb.events` as core events without taking the lock or changing anything
/// (a torn tail is skipped, not cut): what mbatchd would replay. For tools and benchmarks.
pub fn read_events(logdir: &Path) -> Result<Vec<Event>, JournalError> {
    let reader = el::read_events(&logdir.join(el::EVENTS_FILE))?.include_unknown(false);
    let mut out = Vec::new();
    for rec in reader {
        if let Some(ev) = from_record(&rec?) {
            out.push(ev);
        }
    }
    Ok(out)
}

/// Bring the copies in line (the newest intact one wins, see [`sync_copies`]), open each,
/// and replay from the first that opens.
fn open_copies(dirs: &[PathBuf], opts: &Options) -> Result<(Vec<Copy>, Replayed), JournalError> {
    if dirs.len() > 1 {
        sync_copies(&dirs[0], &dirs[1]);
    }
    let mut copies = Vec::new();
    let mut replayed = None;
    let mut first_err = None;
    for dir in dirs {
        match open_logs(dir, opts) {
            Ok((events, acct, r)) => {
                if replayed.is_none() {
                    replayed = Some(r);
                }
                copies.push(Copy {
                    dir: dir.clone(),
                    logs: Some((events, acct)),
                    broken: None,
                });
            }
            Err(e) => {
                // A damaged log is never skipped over: the administrator must recover it.
                if let JournalError::Log(el::EventLogError::Damaged { .. }) = e {
                    return Err(e);
                }
                tracing::error!("event log copy in {} is unusable: {e}", dir.display());
                copies.push(Copy {
                    dir: dir.clone(),
                    logs: None,
                    broken: Some(e.to_string()),
                });
                first_err.get_or_insert(e);
            }
        }
    }
    match (replayed, first_err) {
        (Some(r), _) => Ok((copies, r)),
        (None, Some(e)) => Err(e),
        (None, None) => Err(JournalError::Log(el::EventLogError::Io {
            path: PathBuf::new(),
            op: "open",
            source: std::io::Error::other("no event log directory"),
        })),
    }
}

/// The complete lines of a file's content (a torn tail left out).
fn complete(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &[],
    }
}

/// Does every complete line parse?
fn intact(bytes: &[u8]) -> bool {
    complete(bytes)
        .split(|&b| b == b'\n')
        .all(|l| l.is_empty() || el::parse_line(&String::from_utf8_lossy(l)).is_ok())
}

/// The event time of the last complete record (0 if none).
fn last_time(bytes: &[u8]) -> i64 {
    complete(bytes)
        .split(|&b| b == b'\n')
        .rev()
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .find_map(|l| {
            el::parse_line(&String::from_utf8_lossy(l))
                .ok()
                .flatten()
                .map(|r| r.time())
        })
        .unwrap_or(0)
}

/// Which of two copies of a file to keep: `true` for `a`. The intact one; else the one
/// the other is a prefix of (it has everything the other has, and more); else the one
/// whose last record is newer; else the longer.
fn prefer_first(a: &[u8], b: &[u8], check_records: bool) -> bool {
    if check_records {
        match (intact(a), intact(b)) {
            (true, false) => return true,
            (false, true) => return false,
            _ => {}
        }
    }
    let (ca, cb) = (complete(a), complete(b));
    if ca.starts_with(cb) {
        return true;
    }
    if cb.starts_with(ca) {
        return false;
    }
    let (ta, tb) = if check_records {
        (last_time(a), last_time(b))
    } else {
        (0, 0)
    };
    if ta != tb {
        return ta > tb;
    }
    ca.len() >= cb.len()
}

/// Make the shared and the local copy of lsb.events and lsb.acct equal, keeping the newer
/// intact one of each (LSF's duplicate event log: whichever side was written while the
/// other was unreachable wins). Problems are logged; a copy that cannot be read or written
/// is left as it is and marked broken when opened.
pub fn sync_copies(shared: &Path, local: &Path) {
    for (name, records) in [(el::EVENTS_FILE, true), (el::ACCT_FILE, false)] {
        let read = |dir: &Path| match std::fs::read(dir.join(name)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        };
        let (a, b) = match (read(shared), read(local)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) => {
                tracing::warn!("cannot read {}: {e}", shared.join(name).display());
                continue;
            }
            (_, Err(e)) => {
                tracing::warn!("cannot read {}: {e}", local.join(name).display());
                continue;
            }
        };
        let (from, to, bytes) = match (&a, &b) {
            (None, None) => continue,
            (Some(a), None) => (shared, local, a),
            (None, Some(b)) => (local, shared, b),
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => {
                if prefer_first(a, b, records) {
                    (shared, local, a)
                } else {
                    (local, shared, b)
                }
            }
        };
        match write_copy(to, name, bytes) {
            Ok(()) => tracing::info!(
                "{} brought up to date from {}",
                to.join(name).display(),
                from.join(name).display()
            ),
            Err(e) => tracing::warn!("cannot update {}: {e}", to.join(name).display()),
        }
    }
}

/// Replace `dir/name` with `bytes` crash-safely (temporary file, fsync, rename, fsync of
/// the directory).
fn write_copy(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{name}.sync.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut f, bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(name))?;
    std::fs::File::open(dir)?.sync_all()
}

/// Copy the job files of `from/info` that `to/info` lacks (spooled while `to` was
/// unusable). Problems are logged.
fn copy_job_files(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from.join(el::INFO_DIR)) else {
        return;
    };
    for entry in entries.flatten() {
        let target = to.join(el::INFO_DIR).join(entry.file_name());
        if target.exists() {
            continue;
        }
        let res = std::fs::create_dir_all(to.join(el::INFO_DIR))
            .and_then(|()| std::fs::read(entry.path()))
            .and_then(|b| {
                write_copy(
                    &to.join(el::INFO_DIR),
                    &entry.file_name().to_string_lossy(),
                    &b,
                )
            });
        if let Err(e) = res {
            tracing::warn!("cannot copy job file to {}: {e}", target.display());
        }
    }
}

fn open_logs(
    logdir: &Path,
    opts: &Options,
) -> Result<(el::EventLog, el::AcctLog, Replayed), JournalError> {
    // Records become core events as they are read: no list of a million records is held.
    let mut evs = Vec::new();
    let mut skipped = 0usize;
    let (mut events, replay) = el::EventLog::open_with(logdir, |rec| match from_record(&rec) {
        Some(ev) => evs.push(ev),
        None => skipped += 1,
    })?;
    let (mut acct, acct_torn) = el::AcctLog::open(logdir)?;
    events.set_sync(opts.sync);
    acct.set_sync(opts.sync);
    if let Some(t) = acct_torn {
        tracing::warn!(
            "{} ended with a torn record, cut off: {t:?}",
            logdir.join(el::ACCT_FILE).display()
        );
    }
    let out = Replayed {
        events: evs,
        torn_tail: replay.torn_tail,
        torn_offset: replay.torn_offset,
        skipped,
    };
    Ok((events, acct, out))
}

impl Journal {
    /// Make the `Log` and `Acct` effects of one loop iteration durable: one write and
    /// one fsync per file and copy. With a duplicate log, the iteration is durable when at
    /// least one copy took it; a copy that failed is marked broken and re-synchronised
    /// later ([`Journal::resync`]). Refuses (and writes nothing) once the lock is no
    /// longer ours.
    pub fn commit(&mut self, sched: &Sched, effects: &[Effect]) -> Result<(), JournalError> {
        let mut recs = Vec::new();
        let mut acct = Vec::new();
        for e in effects {
            match e {
                Effect::Log(ev) => recs.push(to_record(ev)),
                Effect::Acct(key) => {
                    if let Some(j) = sched.jobs().get(key) {
                        acct.push(finish_record(j));
                    }
                }
                _ => {}
            }
        }
        self.sync_spool()?;
        if recs.is_empty() && acct.is_empty() {
            return Ok(());
        }
        self.check_lock()?;
        let mut ok = false;
        let mut first_err = None;
        for copy in &mut self.copies {
            if copy.broken.is_some() {
                continue;
            }
            let Some((events, acct_log)) = copy.logs.as_mut() else {
                continue;
            };
            let res = (|| -> Result<(), el::EventLogError> {
                if !recs.is_empty() {
                    events.append(&recs)?;
                }
                if !acct.is_empty() {
                    acct_log.append(&acct)?;
                }
                Ok(())
            })();
            match res {
                Ok(()) => ok = true,
                Err(e) => {
                    tracing::error!("event log copy in {}: {e}", copy.dir.display());
                    copy.broken = Some(e.to_string());
                    first_err.get_or_insert(e);
                }
            }
        }
        match (ok, first_err) {
            (true, _) => Ok(()),
            (false, Some(e)) => Err(e.into()),
            (false, None) => Err(JournalError::Log(el::EventLogError::Io {
                path: self.logdir.clone(),
                op: "append",
                source: std::io::Error::other("no usable copy of the event log"),
            })),
        }
    }

    /// Fail with [`JournalError::LockLost`] when the lock file is provably no longer ours
    /// (another file is in its place, or it is gone). An unreadable lock directory (the
    /// shared file server is down) proves nothing and is only logged.
    pub fn check_lock(&self) -> Result<(), JournalError> {
        match self.lock.still_held() {
            Ok(true) => Ok(()),
            Ok(false) => Err(JournalError::LockLost {
                path: self.lock.path().to_path_buf(),
            }),
            Err(e) => {
                tracing::warn!("cannot check the event log lock: {e}");
                Ok(())
            }
        }
    }

    /// Refresh the lock's heartbeat when one is due.
    pub fn heartbeat(&mut self) -> Result<(), JournalError> {
        if self.last_touch.elapsed() >= self.opts.lock_heartbeat {
            self.last_touch = Instant::now();
            match self.lock.touch() {
                Ok(()) => {}
                Err(el::LockError::Lost { path }) => return Err(JournalError::LockLost { path }),
                Err(e) => tracing::warn!("cannot refresh the event log lock: {e}"),
            }
        }
        Ok(())
    }

    /// Re-read the logs from disk (after a failed append: the durable content is the truth
    /// and the in-memory state must be rebuilt from it). Cuts a torn tail like a start.
    pub fn reload(&mut self) -> Result<Replayed, JournalError> {
        self.check_lock()?;
        let dirs: Vec<PathBuf> = self.copies.iter().map(|c| c.dir.clone()).collect();
        let (copies, replayed) = open_copies(&dirs, &self.opts)?;
        self.copies = copies;
        Ok(replayed)
    }

    /// Switch lsb.events (event-log.md §6): the history moves to `lsb.events.1` (older
    /// files shift up), the new file holds `carried` (what rebuilds every job still in
    /// memory) before its header offset and `appended` (control state, LOG_SWITCH) after
    /// it; `lsb.events.index` is brought up to date. Done in the shared directory; a local
    /// duplicate gets a copy of the new file. Refused while a copy is out of date.
    pub fn switch(
        &mut self,
        time: i64,
        carried: &[Event],
        appended: &[Event],
    ) -> Result<el::SwitchReport, JournalError> {
        self.check_lock()?;
        if let Some(c) = self.copies.iter().find(|c| c.broken.is_some()) {
            return Err(el::EventLogError::Io {
                path: c.dir.join(el::EVENTS_FILE),
                op: "switch",
                source: std::io::Error::other(
                    "a copy of the event log is out of date; switch postponed",
                ),
            }
            .into());
        }
        let carried: Vec<el::Record> = carried.iter().map(to_record).collect();
        let appended: Vec<el::Record> = appended.iter().map(to_record).collect();
        let Some((events, _)) = self.copies.first_mut().and_then(|c| c.logs.as_mut()) else {
            return Err(el::EventLogError::Io {
                path: self.logdir.join(el::EVENTS_FILE),
                op: "switch",
                source: std::io::Error::other("the event log is not open"),
            }
            .into());
        };
        let report = events.switch(time, &carried, &appended)?;
        if let Err(e) = el::index::update_after_switch(&self.logdir) {
            tracing::warn!(
                "cannot update {}: {e}",
                self.logdir.join(el::index::INDEX_FILE).display()
            );
        }
        // The duplicate gets the new file as it is.
        for i in 1..self.copies.len() {
            let dir = self.copies[i].dir.clone();
            let res = std::fs::read(self.logdir.join(el::EVENTS_FILE))
                .and_then(|b| write_copy(&dir, el::EVENTS_FILE, &b))
                .map_err(|e| e.to_string())
                .and_then(|()| open_logs(&dir, &self.opts).map_err(|e| e.to_string()));
            match res {
                Ok((events, acct, _)) => self.copies[i].logs = Some((events, acct)),
                Err(e) => {
                    tracing::error!("event log copy in {}: {e}", dir.display());
                    self.copies[i].broken = Some(e);
                }
            }
        }
        Ok(report)
    }

    /// Is a copy of the log out of date?
    pub fn needs_resync(&self) -> bool {
        self.copies.iter().any(|c| c.broken.is_some())
    }

    /// Bring broken copies up to date from a good one and write to them again.
    pub fn resync(&mut self) -> Result<(), JournalError> {
        let Some(good) = self.copies.iter().position(|c| c.broken.is_none()) else {
            return Ok(());
        };
        let from = self.copies[good].dir.clone();
        for i in 0..self.copies.len() {
            if self.copies[i].broken.is_none() {
                continue;
            }
            let to = self.copies[i].dir.clone();
            for name in [el::EVENTS_FILE, el::ACCT_FILE] {
                let bytes = match std::fs::read(from.join(name)) {
                    Ok(b) => b,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(el::EventLogError::Io {
                            path: from.join(name),
                            op: "read",
                            source: e,
                        }
                        .into());
                    }
                };
                write_copy(&to, name, &bytes).map_err(|e| el::EventLogError::Io {
                    path: to.join(name),
                    op: "write",
                    source: e,
                })?;
            }
            copy_job_files(&from, &to);
            let (events, acct, _) = open_logs(&to, &self.opts)?;
            self.copies[i].logs = Some((events, acct));
            self.copies[i].broken = None;
            tracing::info!(
                "event log copy in {} re-synchronised from {}",
                to.display(),
                from.display()
            );
        }
        Ok(())
    }

    /// Can the log directory take writes again? Writes and fsyncs a 64 KiB probe file
    /// (removed afterwards).
    pub fn probe(&self) -> Result<(), JournalError> {
        let path = self.logdir.join(".basalt-write-probe");
        let res = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&path)?;
            std::io::Write::write_all(&mut f, &[b'\n'; 64 * 1024])?;
            f.sync_all()
        })();
        let _ = std::fs::remove_file(&path);
        res.map_err(|source| JournalError::Probe { path, source })
    }

    /// The log directory.
    pub fn logdir(&self) -> &Path {
        &self.logdir
    }

    /// Release the lock (clean stop).
    pub fn release(self) {
        if let Err(e) = self.lock.release() {
            tracing::warn!("releasing the event log lock: {e}");
        }
    }

    /// Spool a job file durably (before its JOB_NEW is acknowledged).
    pub fn spool(
        &mut self,
        submit_time: i64,
        job_id: u64,
        contents: &[u8],
    ) -> Result<(), JournalError> {
        // Into the shared directory; with a duplicate log, into the local one when the
        // shared one cannot take it (copied back by [`Journal::resync`]).
        let mut first_err = None;
        for copy in &self.copies {
            match el::spool_job_file_unsynced(&copy.dir, submit_time, job_id, contents) {
                Ok(_) => {
                    if !self.unsynced.contains(&copy.dir) {
                        self.unsynced.push(copy.dir.clone());
                    }
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!("cannot spool job {job_id} in {}: {e}", copy.dir.display());
                    first_err.get_or_insert(e);
                }
            }
        }
        Err(first_err
            .unwrap_or_else(|| el::EventLogError::Io {
                path: self.logdir.clone(),
                op: "spool",
                source: std::io::Error::other("no log directory"),
            })
            .into())
    }

    /// Make the job files spooled since the last commit durable — with one `syncfs` per
    /// file system instead of two fsyncs per file, so that a burst of submissions costs a
    /// couple of syncs, not one per job. Called by [`Journal::commit`] before the
    /// iteration's JOB_NEW records are appended.
    pub fn sync_spool(&mut self) -> Result<(), JournalError> {
        if self.unsynced.is_empty() {
            return Ok(());
        }
        let dirs = std::mem::take(&mut self.unsynced);
        if self.opts.sync == el::SyncPolicy::None {
            return Ok(());
        }
        for dir in dirs {
            let info = dir.join(el::INFO_DIR);
            let res = std::fs::File::open(&info)
                .and_then(|f| nix::unistd::syncfs(&f).map_err(std::io::Error::from));
            if let Err(e) = res {
                return Err(el::EventLogError::Io {
                    path: info,
                    op: "syncfs",
                    source: e,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Where a spooled job file is (the shared directory, else a copy that has it).
    pub fn job_file_path(&self, name: &str) -> PathBuf {
        self.copies
            .iter()
            .map(|c| c.dir.join(el::INFO_DIR).join(name))
            .find(|p| p.exists())
            .unwrap_or_else(|| self.logdir.join(el::INFO_DIR).join(name))
    }

    /// Forget a spooled job file (after JOB_CLEAN). Failures are only logged.
    pub fn remove_spooled(&mut self, name: &str) {
        for copy in &self.copies {
            if let Err(e) = el::remove_job_file(&copy.dir, name) {
                tracing::warn!("cannot remove spooled job file {name}: {e}");
            }
        }
    }
}

fn h(time: i64) -> r::Header {
    r::Header::new(time)
}

fn rusage_of(u: &Usage) -> r::Rusage {
    r::Rusage {
        utime: u.utime,
        stime: u.stime,
        maxrss: u.max_mem_kb as f64,
        ..Default::default()
    }
}

/// A core event as an lsb.events record.
pub fn to_record(ev: &Event) -> el::Record {
    match ev {
        Event::JobNew { time, job_id, sub } => {
            let s = sub;
            el::Record::JobNew(Box::new(r::JobNew {
                header: h(*time),
                job_id: *job_id,
                user_id: i64::from(s.uid),
                options: s.options,
                num_processors: i64::from(s.num_processors),
                submit_time: s.submit_time,
                begin_time: s.begin_time,
                term_time: s.term_time,
                sig_value: 0,
                chkpnt_period: 0,
                restart_pid: 0,
                user_name: s.user.clone(),
                rlimits: s.rlimits,
                host_spec: String::new(),
                host_factor: 1.0,
                umask: i64::from(s.umask),
                queue: s.queue.clone(),
                res_req: s.res_req.clone(),
                from_host: s.from_host.clone(),
                cwd: s.cwd.clone(),
                chkpnt_dir: String::new(),
                in_file: s.in_file.clone(),
                out_file: s.out_file.clone(),
                err_file: s.err_file.clone(),
                sub_home_dir: s.sub_home_dir.clone(),
                job_file: s.job_file.clone(),
                asked_hosts: s.asked_hosts.clone(),
                depend_cond: s.depend_cond.clone(),
                pre_exec_cmd: s.pre_exec.clone(),
                post_exec_cmd: String::new(),
                job_name: s.job_name.clone(),
                command: s.command.clone(),
                xf: Vec::new(),
                mail_user: s.mail_user.clone(),
                project_name: s.project.clone(),
                nios_port: 0,
                max_num_processors: i64::from(s.max_processors),
                sched_host_type: String::new(),
                login_shell: s.login_shell.clone(),
                options2: s.options2,
                idx: 0,
                in_file_spool: String::new(),
                command_spool: String::new(),
                job_spool_dir: String::new(),
                user_priority: -1,
                user_group: s.user_group.clone(),
                abs_run_limit: -1,
                job_group: String::new(),
                job_description: String::new(),
                priority: -1,
                specified_cwd: s.spec_cwd.clone(),
                is_script: s.options2 & sub2::JOB_CMD_SPOOL != 0,
                // Basalt fields after the mark: the submission token.
                basalt_extra: if s.submit_token.is_empty() {
                    Vec::new()
                } else {
                    vec![el::Field::str(s.submit_token.clone())]
                },
                foreign_tail: None,
            }))
        }
        Event::JobStart { time, key, hosts } => el::Record::JobStart(r::JobStart {
            header: h(*time),
            job_id: key.0,
            j_status: JobState::Run.code(),
            job_pid: 0,
            job_pgid: 0,
            host_factor: 1.0,
            exec_hosts: hosts.clone(),
            queue_pre_cmd: String::new(),
            queue_post_cmd: String::new(),
            j_flags: 0,
            idx: key.1,
            user_group: String::new(),
            effective_res_req: String::new(),
        }),
        Event::JobStartAccept {
            time,
            key,
            pid,
            pgid,
        } => el::Record::JobStartAccept(r::JobStartAccept {
            header: h(*time),
            job_id: key.0,
            job_pid: i64::from(*pid),
            job_pgid: i64::from(*pgid),
            idx: key.1,
            j_flags: 0,
        }),
        Event::JobExecute {
            time,
            key,
            exec_uid,
            exec_user,
            exec_home,
            exec_cwd,
            pid,
        } => el::Record::JobExecute(r::JobExecute {
            header: h(*time),
            job_id: key.0,
            exec_uid: i64::from(*exec_uid),
            job_pgid: i64::from(*pid),
            exec_cwd: exec_cwd.clone(),
            exec_home: exec_home.clone(),
            exec_username: exec_user.clone(),
            job_pid: i64::from(*pid),
            idx: key.1,
        }),
        Event::JobStatus {
            time,
            key,
            status,
            reasons,
            subreasons,
            cpu_time,
            end_time,
            usage,
            exit_status,
            term_reason,
        } => el::Record::JobStatus(r::JobStatus {
            header: h(*time),
            job_id: key.0,
            j_status: *status,
            reason: *reasons,
            subreasons: *subreasons,
            cpu_time: *cpu_time,
            end_time: *end_time,
            rusage: usage.as_ref().map(rusage_of),
            exit_status: *exit_status,
            idx: key.1,
            mem: usage.as_ref().map(|u| r::MemUsage {
                max_mem: u.max_mem_kb as i64,
                avg_mem: u.avg_mem_kb as i64,
            }),
            // Basalt's trailing field: survives replay (TERM_RUNLIMIT, TERM_MEMLIMIT...).
            term_reason: term_reason.clone(),
            basalt_extra: Vec::new(),
        }),
        Event::JobSignal {
            time,
            key,
            uid,
            user,
            signal,
        } => el::Record::JobSignal(r::JobSignal {
            header: h(*time),
            job_id: key.0,
            user_id: i64::from(*uid),
            run_count: 0,
            signal_symbol: signal.clone(),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobSwitch {
            time,
            key,
            uid,
            user,
            queue,
        } => el::Record::JobSwitch(r::JobSwitch {
            header: h(*time),
            user_id: i64::from(*uid),
            job_id: key.0,
            queue: queue.clone(),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobMove {
            time,
            key,
            uid,
            user,
            position,
            base,
        } => el::Record::JobMove(r::JobMove {
            header: h(*time),
            user_id: i64::from(*uid),
            job_id: key.0,
            position: i64::from(*position),
            base: i64::from(*base),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobForce {
            time,
            key,
            uid,
            user,
            hosts,
            no_stop,
        } => el::Record::JobForce(r::JobForce {
            header: h(*time),
            job_id: key.0,
            user_id: i64::from(*uid),
            idx: key.1,
            options: if *no_stop {
                RUNJOB_OPT_NOSTOP
            } else {
                RUNJOB_OPT_NORMAL
            },
            exec_hosts: hosts.clone(),
            user_name: user.clone(),
        }),
        Event::JobClean { time, key } => el::Record::JobClean(r::JobClean {
            header: h(*time),
            job_id: key.0,
            idx: key.1,
        }),
        Event::QueueCtrl {
            time,
            op,
            queue,
            uid,
            user,
            message,
        } => el::Record::QueueCtrl(r::QueueCtrl {
            header: h(*time),
            op_code: i64::from(*op),
            queue: queue.clone(),
            user_id: i64::from(*uid),
            user_name: user.clone(),
            message: message.clone(),
        }),
        Event::HostCtrl {
            time,
            op,
            host,
            uid,
            user,
            message,
        } => el::Record::HostCtrl(r::HostCtrl {
            header: h(*time),
            op_code: i64::from(*op),
            host: host.clone(),
            user_id: i64::from(*uid),
            user_name: user.clone(),
            message: message.clone(),
        }),
        Event::MbdStart {
            time,
            master,
            cluster,
            num_hosts,
            num_queues,
            epoch: _,
        } => el::Record::MbdStart(r::MbdStart {
            header: h(*time),
            master: master.clone(),
            cluster: cluster.clone(),
            num_hosts: i64::from(*num_hosts),
            num_queues: i64::from(*num_queues),
        }),
        Event::MbdDie {
            time,
            master,
            exit_code,
        } => el::Record::MbdDie(r::MbdDie {
            header: h(*time),
            master: master.clone(),
            num_remove_jobs: 0,
            exit_code: i64::from(*exit_code),
            message: String::new(),
        }),
        Event::LogSwitch { time, last_job_id } => el::Record::LogSwitch(r::LogSwitch {
            header: h(*time),
            last_job_id: *last_job_id,
        }),
    }
}

fn u32_of(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// An lsb.events record as a core event (None for records Basalt does not replay).
pub fn from_record(rec: &el::Record) -> Option<Event> {
    Some(match rec {
        el::Record::JobNew(n) => {
            let sub = Submission {
                user: n.user_name.clone(),
                uid: u32_of(n.user_id),
                options: n.options,
                options2: n.options2,
                num_processors: u32_of(n.num_processors),
                max_processors: u32_of(n.max_num_processors),
                submit_time: n.submit_time,
                begin_time: n.begin_time,
                term_time: n.term_time,
                rlimits: n.rlimits,
                umask: u32_of(n.umask),
                queue: n.queue.clone(),
                res_req: n.res_req.clone(),
                from_host: n.from_host.clone(),
                cwd: n.cwd.clone(),
                in_file: n.in_file.clone(),
                out_file: n.out_file.clone(),
                err_file: n.err_file.clone(),
                sub_home_dir: n.sub_home_dir.clone(),
                job_file: n.job_file.clone(),
                asked_hosts: n.asked_hosts.clone(),
                depend_cond: n.depend_cond.clone(),
                pre_exec: n.pre_exec_cmd.clone(),
                job_name: n.job_name.clone(),
                command: n.command.clone(),
                mail_user: n.mail_user.clone(),
                project: n.project_name.clone(),
                login_shell: n.login_shell.clone(),
                spec_cwd: n.specified_cwd.clone(),
                user_group: n.user_group.clone(),
                submit_token: n
                    .basalt_extra
                    .first()
                    .map(|f| f.text().to_owned())
                    .unwrap_or_default(),
            };
            Event::JobNew {
                time: n.header.time,
                job_id: n.job_id,
                sub: Box::new(sub),
            }
        }
        el::Record::JobStart(s) => Event::JobStart {
            time: s.header.time,
            key: (s.job_id, s.idx),
            hosts: s.exec_hosts.clone(),
        },
        el::Record::JobStartAccept(a) => Event::JobStartAccept {
            time: a.header.time,
            key: (a.job_id, a.idx),
            pid: u32_of(a.job_pid),
            pgid: u32_of(a.job_pgid),
        },
        el::Record::JobExecute(x) => Event::JobExecute {
            time: x.header.time,
            key: (x.job_id, x.idx),
            exec_uid: u32_of(x.exec_uid),
            exec_user: x.exec_username.clone(),
            exec_home: x.exec_home.clone(),
            exec_cwd: x.exec_cwd.clone(),
            pid: u32_of(x.job_pid),
        },
        el::Record::JobStatus(s) => Event::JobStatus {
            time: s.header.time,
            key: (s.job_id, s.idx),
            status: s.j_status,
            reasons: s.reason,
            subreasons: s.subreasons,
            cpu_time: s.cpu_time,
            end_time: s.end_time,
            usage: s.rusage.as_ref().map(|ru| Usage {
                utime: ru.utime.max(0.0),
                stime: ru.stime.max(0.0),
                max_mem_kb: s
                    .mem
                    .as_ref()
                    .map_or(ru.maxrss.max(0.0) as u64, |m| m.max_mem.max(0) as u64),
                avg_mem_kb: s.mem.as_ref().map_or(0, |m| m.avg_mem.max(0) as u64),
                ..Default::default()
            }),
            exit_status: s.exit_status,
            // "" for records without Basalt's tail: the core then derives TERM_OWNER /
            // TERM_ADMIN from the JOB_SIGNAL that ordered the kill.
            term_reason: s.term_reason.clone(),
        },
        el::Record::JobSignal(s) => Event::JobSignal {
            time: s.header.time,
            key: (s.job_id, s.idx),
            uid: u32_of(s.user_id),
            user: s.user_name.clone(),
            signal: s.signal_symbol.clone(),
        },
        el::Record::JobSwitch(s) => Event::JobSwitch {
            time: s.header.time,
            key: (s.job_id, s.idx),
            uid: u32_of(s.user_id),
            user: s.user_name.clone(),
            queue: s.queue.clone(),
        },
        el::Record::JobMove(m) => Event::JobMove {
            time: m.header.time,
            key: (m.job_id, m.idx),
            uid: u32_of(m.user_id),
            user: m.user_name.clone(),
            position: u32_of(m.position),
            base: u32_of(m.base),
        },
        el::Record::JobForce(f) => Event::JobForce {
            time: f.header.time,
            key: (f.job_id, f.idx),
            uid: u32_of(f.user_id),
            user: f.user_name.clone(),
            hosts: f.exec_hosts.clone(),
            no_stop: f.options & RUNJOB_OPT_NOSTOP != 0,
        },
        el::Record::JobClean(c) => Event::JobClean {
            time: c.header.time,
            key: (c.job_id, c.idx),
        },
        el::Record::QueueCtrl(q) => Event::QueueCtrl {
            time: q.header.time,
            op: u32_of(q.op_code),
            queue: q.queue.clone(),
            uid: u32_of(q.user_id),
            user: q.user_name.clone(),
            message: q.message.clone(),
        },
        el::Record::HostCtrl(c) => Event::HostCtrl {
            time: c.header.time,
            op: u32_of(c.op_code),
            host: c.host.clone(),
            uid: u32_of(c.user_id),
            user: c.user_name.clone(),
            message: c.message.clone(),
        },
        el::Record::MbdStart(m) => Event::MbdStart {
            time: m.header.time,
            master: m.master.clone(),
            cluster: m.cluster.clone(),
            num_hosts: u32_of(m.num_hosts),
            num_queues: u32_of(m.num_queues),
            epoch: 0,
        },
        el::Record::MbdDie(d) => Event::MbdDie {
            time: d.header.time,
            master: d.master.clone(),
            exit_code: i32::try_from(d.exit_code).unwrap_or(0),
        },
        el::Record::LogSwitch(l) => Event::LogSwitch {
            time: l.header.time,
            last_job_id: l.last_job_id,
        },
        _ => return None,
    })
}

/// The JOB_FINISH record of a finished job (lsb.acct).
pub fn finish_record(j: &Job) -> r::JobFinish {
    let s = &j.sub;
    let mut ru = rusage_of(&j.usage);
    if ru.utime == 0.0 && ru.stime == 0.0 && j.cpu_time > 0.0 {
        ru.utime = j.cpu_time;
    }
    r::JobFinish {
        header: h(j.end_time),
        job_id: j.id,
        user_id: i64::from(s.uid),
        options: s.options,
        num_processors: i64::from(s.num_processors),
        submit_time: s.submit_time,
        begin_time: s.begin_time,
        term_time: s.term_time,
        start_time: j.start_time,
        user_name: s.user.clone(),
        queue: j.queue.clone(),
        res_req: s.res_req.clone(),
        depend_cond: s.depend_cond.clone(),
        pre_exec_cmd: s.pre_exec.clone(),
        post_exec_cmd: String::new(),
        from_host: s.from_host.clone(),
        cwd: s.cwd.clone(),
        in_file: s.in_file.clone(),
        out_file: s.out_file.clone(),
        err_file: s.err_file.clone(),
        job_file: s.job_file.clone(),
        asked_hosts: s.asked_hosts.clone(),
        exec_hosts: j.hosts.clone(),
        j_status: j.state.code(),
        host_factor: 1.0,
        job_name: s.job_name.clone(),
        command: s.command.clone(),
        rusage: ru,
        mail_user: s.mail_user.clone(),
        project_name: s.project.clone(),
        exit_status: j.exit_status,
        max_num_processors: i64::from(s.max_processors),
        login_shell: s.login_shell.clone(),
        idx: j.idx,
        max_rmem: j.usage.max_mem_kb as i64,
        max_rswap: j.usage.swap_kb as i64,
        in_file_spool: String::new(),
        command_spool: String::new(),
        basalt_extra: Vec::new(),
        foreign_tail: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_intact_copy_wins() {
        let l1 = "\"JOB_CLEAN\" \"10.1\" 100 1 0\n";
        let l2 = "\"JOB_CLEAN\" \"10.1\" 200 2 0\n";
        let l3 = "\"JOB_CLEAN\" \"10.1\" 300 3 0\n";
        let bad = "\"JOB_CLEAN\" \"10.1\" 400 x 0\n";
        let cat = |v: &[&str]| v.concat().into_bytes();
        // A prefix loses to the copy that has everything it has.
        assert!(!prefer_first(&cat(&[l1]), &cat(&[l1, l2]), true));
        assert!(prefer_first(&cat(&[l1, l2]), &cat(&[l1]), true));
        // A torn tail does not count.
        assert!(!prefer_first(
            &cat(&[l1, "\"JOB_CL"]),
            &cat(&[l1, l2]),
            true
        ));
        // A damaged copy loses even when longer.
        assert!(!prefer_first(
            &cat(&[l1, l2, bad, l3]),
            &cat(&[l1, l2]),
            true
        ));
        // Diverged copies: the newer last record wins.
        assert!(!prefer_first(&cat(&[l1, l2]), &cat(&[l1, l3]), true));

        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(a.path().join(el::EVENTS_FILE), cat(&[l1])).unwrap();
        std::fs::write(b.path().join(el::EVENTS_FILE), cat(&[l1, l2])).unwrap();
        std::fs::write(b.path().join(el::ACCT_FILE), "x\n").unwrap();
        sync_copies(a.path(), b.path());
        assert_eq!(
            std::fs::read(a.path().join(el::EVENTS_FILE)).unwrap(),
            cat(&[l1, l2])
        );
        assert_eq!(std::fs::read(a.path().join(el::ACCT_FILE)).unwrap(), b"x\n");
    }

    #[test]
    fn a_silent_lock_is_taken_over_and_a_live_one_is_not() {
        let hb = Duration::from_millis(20);
        let dir = tempfile::tempdir().unwrap();
        let lock_file = dir.path().join(el::LOCK_FILE);

        // No heartbeat: taken over after more than STALE_CHECKS unchanged checks.
        std::fs::write(&lock_file, "otherhost:1").unwrap();
        let t = Instant::now();
        let lock = acquire_lock(dir.path(), "me", hb, Duration::from_secs(10)).unwrap();
        assert!(t.elapsed() >= hb / 2 * STALE_CHECKS, "{:?}", t.elapsed());
        assert!(lock.holder().starts_with("me:"), "{}", lock.holder());
        drop(lock);
        assert!(!lock_file.exists());

        // A heartbeat every 5 ms: never taken over.
        std::fs::write(&lock_file, "otherhost:2").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let beat = {
            let (stop, path) = (stop.clone(), lock_file.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
                        let _ = f.set_modified(std::time::SystemTime::now());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        let r = acquire_lock(dir.path(), "me", hb, Duration::from_millis(400));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = beat.join();
        match r {
            Err(JournalError::Held { holder, .. }) => assert_eq!(holder, "otherhost:2"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&lock_file).unwrap(), "otherhost:2");
    }

    /// Event → lsb.events line → event.
    fn through_the_log(ev: &Event) -> Event {
        let line = to_record(ev).to_line();
        let rec = el::parse_line(&line)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .unwrap_or_else(|| panic!("{line}: no record"));
        from_record(&rec).unwrap_or_else(|| panic!("{line}: not replayed"))
    }

    fn status(term_reason: &str, usage: Option<Usage>) -> Event {
        Event::JobStatus {
            time: 1_800_000_100,
            key: (42, 3),
            status: 32,
            reasons: 0,
            subreasons: 0,
            cpu_time: 1.5,
            end_time: 1_800_000_100,
            usage,
            exit_status: 33280,
            term_reason: term_reason.into(),
        }
    }

    #[test]
    fn term_reasons_survive_the_log() {
        let usage = Usage {
            utime: 1.0,
            stime: 0.5,
            max_mem_kb: 2048,
            avg_mem_kb: 1024,
            ..Default::default()
        };
        for ev in [
            status("TERM_RUNLIMIT", Some(usage.clone())),
            status("TERM_MEMLIMIT", Some(usage)),
            status("TERM_OWNER", None),
            status("", None),
        ] {
            assert_eq!(through_the_log(&ev), ev);
        }
    }

    /// brun and brun -f are told apart in the log (JOB_FORCE options, LSF's
    /// RUNJOB_OPT_NORMAL / RUNJOB_OPT_NOSTOP), so a replayed mbatchd knows which job load
    /// may suspend.
    #[test]
    fn brun_and_brun_f_survive_the_log() {
        for no_stop in [false, true] {
            let ev = Event::JobForce {
                time: 1_795_342_025,
                key: (6, 0),
                uid: 0,
                user: "root".into(),
                hosts: vec!["vm".into()],
                no_stop,
            };
            assert_eq!(through_the_log(&ev), ev);
        }
        let line = "\"JOB_FORCE\" \"22\" 1795342025 6 0 0 1 1  \"vm\" \"root\"\n";
        let rec = el::parse_line(line)
            .ok()
            .flatten()
            .expect("volclava's plain brun");
        assert!(matches!(
            from_record(&rec),
            Some(Event::JobForce { no_stop: false, .. })
        ));
    }

    #[test]
    fn an_array_is_one_job_new_and_elements_carry_their_index() {
        let sub = Submission {
            user: "alice".into(),
            uid: 1000,
            queue: "normal".into(),
            job_name: "arr[1-10]%2".into(),
            command: "echo $LSB_JOBINDEX".into(),
            out_file: "out.%J.%I".into(),
            depend_cond: "done(first) && ended(7[2])".into(),
            rlimits: [-1; 11],
            num_processors: 1,
            max_processors: 1,
            job_file: "1800000000.42".into(),
            ..Default::default()
        };
        let new = Event::JobNew {
            time: 1_800_000_000,
            job_id: 42,
            sub: Box::new(sub),
        };
        let line = to_record(&new).to_line();
        assert!(line.contains(r#""arr[1-10]%2""#), "{line}");
        assert_eq!(through_the_log(&new), new);
        let start = Event::JobStart {
            time: 1_800_000_001,
            key: (42, 7),
            hosts: vec!["hostA".into()],
        };
        assert_eq!(through_the_log(&start), start);
        let signal = Event::JobSignal {
            time: 1_800_000_002,
            key: (42, 7),
            uid: 1000,
            user: "alice".into(),
            signal: "KILL".into(),
        };
        assert_eq!(through_the_log(&signal), signal);
    }
}
