//! `bevents replay`: which files and offsets a replay reads ([`ReplayPlan`]) and feeding
//! their records to a fresh scheduler core ([`replay`]), counting what happened.

use super::*;

/// Which files a replay reads, and from where in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPlan {
    /// (file, skip the records before the header's offset).
    pub files: Vec<(PathBuf, bool)>,
    /// The history of the older files is replayed (the time is before the last switch).
    pub history: bool,
}

/// The files to replay for `until`: the current `lsb.events` alone (as mbatchd does)
/// unless `until` is before the last log switch (the `#<time>` header of
/// `lsb.events.1`); then every old file, oldest first, and the records new to the
/// current file.
pub fn replay_plan(logdir: &Path, until: Option<i64>) -> Result<ReplayPlan, String> {
    let current = logdir.join(basalt_eventlog::EVENTS_FILE);
    let olds = basalt_eventlog::index::old_event_files(logdir).map_err(|e| e.to_string())?;
    let last_switch = match olds.iter().find(|(n, _)| *n == 1) {
        Some((_, p)) => Some(basalt_eventlog::index::header_time(p).map_err(|e| e.to_string())?),
        None => None,
    };
    match (until, last_switch) {
        (Some(t), Some(sw)) if t < sw => {
            let mut files: Vec<(PathBuf, bool)> =
                olds.into_iter().map(|(_, p)| (p, false)).collect();
            files.push((current, true));
            Ok(ReplayPlan {
                files,
                history: true,
            })
        }
        _ => Ok(ReplayPlan {
            files: vec![(current, false)],
            history: false,
        }),
    }
}

/// The state after a replay.
#[derive(Debug)]
pub struct Replayed {
    pub sched: Sched,
    pub files: Vec<PathBuf>,
    /// Records applied.
    pub applied: usize,
    /// Records read but not replayed (types mbatchd does not replay).
    pub skipped: usize,
    /// Damaged lines met (skipped), and a torn tail.
    pub problems: Vec<String>,
    /// Time of the last record applied.
    pub last_time: Option<i64>,
    /// Records naming a job whose JOB_NEW was not seen (its history starts in a file that
    /// is no longer there).
    pub orphans: usize,
    pub until: Option<i64>,
}

/// Replay `plan` into a fresh core configured with `cfg`, stopping before the first
/// record after `until`.
pub fn replay(cfg: SchedConfig, plan: &ReplayPlan, until: Option<i64>) -> io::Result<Replayed> {
    let mut sched = Sched::new(cfg, 0);
    let files: Vec<PathBuf> = plan.files.iter().map(|(p, _)| p.clone()).collect();
    let mut r = Tally::default();
    let mut known: BTreeSet<u64> = BTreeSet::new();
    let mut stopped = false;
    for (path, skip_carried) in &plan.files {
        if stopped {
            break;
        }
        let mut header: Option<u64> = None;
        let res = for_each_line(path, |l| {
            if stopped {
                return Ok(());
            }
            if !l.complete {
                r.problems.push(format!(
                    "{}:{}: offset {}: incomplete last line ignored",
                    path.display(),
                    l.number,
                    l.offset
                ));
                return Ok(());
            }
            if l.number == 1
                && let Some(h) = basalt_eventlog::parse_header(&l.text)
            {
                header = Some(h);
                return Ok(());
            }
            if *skip_carried && header.is_some_and(|h| l.offset < h) {
                return Ok(());
            }
            match basalt_eventlog::parse_line(&l.text) {
                Ok(None) => {}
                Ok(Some(rec)) => {
                    if until.is_some_and(|t| rec.time() > t) {
                        stopped = true;
                        return Ok(());
                    }
                    if let Some(id) = rec.job_id() {
                        if matches!(rec, Record::JobNew(_)) {
                            known.insert(id);
                        } else if !known.contains(&id) && plan.history {
                            r.orphans += 1;
                        }
                    }
                    match basalt_records::from_record(&rec) {
                        Some(ev) => {
                            sched.replay([&ev]);
                            r.applied += 1;
                            r.last_time = Some(rec.time());
                        }
                        None => r.skipped += 1,
                    }
                }
                Err(e) => r.problems.push(format!(
                    "{}:{}: offset {}: damaged record skipped: {e}",
                    path.display(),
                    l.number,
                    l.offset
                )),
            }
            Ok(())
        });
        match res {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && files.len() == 1 => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
    // The replay path's effects (none are carried out here) are dropped.
    let _ = sched.take_effects();
    Ok(Replayed {
        sched,
        files,
        applied: r.applied,
        skipped: r.skipped,
        problems: r.problems,
        last_time: r.last_time,
        orphans: r.orphans,
        until,
    })
}

#[derive(Default)]
pub(super) struct Tally {
    pub(super) applied: usize,
    pub(super) skipped: usize,
    pub(super) problems: Vec<String>,
    pub(super) last_time: Option<i64>,
    pub(super) orphans: usize,
}

/// The next job id mbatchd would give (after the highest seen, wrapping at MAX_JOBID,
/// skipping ids still in use).
pub fn next_job_id(s: &Sched) -> u64 {
    let max = u64::from(s.config().max_jobid.max(1));
    let mut id = s.last_job_id() % max + 1;
    let mut tries = 0;
    while s.jobs().keys().any(|(j, _)| *j == id) && tries < max {
        id = id % max + 1;
        tries += 1;
    }
    id
}

pub(super) const STATES: [&str; 10] = [
    "PEND", "PSUSP", "RUN", "SSUSP", "USUSP", "WAIT", "UNKWN", "ZOMBI", "DONE", "EXIT",
];

pub(super) fn state_index(name: &str) -> usize {
    STATES.iter().position(|s| *s == name).unwrap_or(0)
}

pub(super) fn job_id_text(id: u64, idx: u32) -> String {
    super::super::job_id_text(id, idx)
}
