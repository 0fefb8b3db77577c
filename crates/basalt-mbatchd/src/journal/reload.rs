//! Opening the journal and reading lsb.events back as core events: at start, for tools,
//! and again after a failed write (the durable content is the truth).

use super::copies::open_copies;
use super::lock::acquire_lock_seen;
use super::{Journal, JournalError, Options, Replayed, STALE_CHECKS, from_record};
use basalt_eventlog as el;
use basalt_sched::Event;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Take the lock (see [`acquire_lock_seen`], with sbatchd's observation of it when it
/// handed one over; waiting up to ten heartbeats plus 5 s), open the
/// logs, and read lsb.events back as core events.
pub fn open(logdir: &Path, me: &str, opts: Options) -> Result<(Journal, Replayed), JournalError> {
    let wait = opts.lock_heartbeat * (2 * STALE_CHECKS + 2) + Duration::from_secs(5);
    let lock = acquire_lock_seen(
        logdir,
        me,
        opts.lock_heartbeat,
        wait,
        opts.lock_seen.as_ref(),
    )?;
    let mut dirs = vec![logdir.to_path_buf()];
    dirs.extend(opts.local_dir.clone());
    let (copies, replayed) = open_copies(&dirs, &opts)?;
    let jobs = super::spool::open_spool(logdir);
    Ok((
        Journal {
            logdir: logdir.to_path_buf(),
            copies,
            lock,
            opts,
            last_touch: Instant::now(),
            unsynced: Vec::new(),
            unsynced_files: Vec::new(),
            deferred_since: None,
            acct_pending: Vec::new(),
            jobs,
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

pub(super) fn open_logs(
    logdir: &Path,
    opts: &Options,
) -> Result<(el::EventLog, el::AcctLog, Replayed), JournalError> {
    // Records become core events as they are read: no list of a million records is held.
    let mut evs = Vec::new();
    let (mut skipped, mut carried) = (0usize, 0usize);
    let (mut events, replay) =
        el::EventLog::open_with_carried(logdir, |rec, before_header| match from_record(&rec) {
            Some(ev) => {
                evs.push(ev);
                carried += usize::from(before_header);
            }
            None => skipped += 1,
        })?;
    if replay.carried == 0 {
        // The header's offset turned out not to be on a line boundary: nothing carried.
        carried = 0;
    }
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
        carried,
        torn_tail: replay.torn_tail,
        torn_offset: replay.torn_offset,
        skipped,
    };
    Ok((events, acct, out))
}

impl Journal {
    /// Re-read the logs from disk (after a failed append: the durable content is the truth
    /// and the in-memory state must be rebuilt from it). Cuts a torn tail like a start.
    pub fn reload(&mut self) -> Result<Replayed, JournalError> {
        self.check_lock()?;
        let dirs: Vec<PathBuf> = self.copies.iter().map(|c| c.dir.clone()).collect();
        let (copies, replayed) = open_copies(&dirs, &self.opts)?;
        self.copies = copies;
        // What reached the spool's disk is the truth too (a failed sync may have left
        // records in the index that are not there).
        self.reopen_spool();
        Ok(replayed)
    }
}
