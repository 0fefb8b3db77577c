//! Job histories from `lsb.events` records: one [`JobHistory`] per job or array element,
//! its current state, and the seconds it spent in each state ([`StateTimes`]).
//!
//! Each record leaves the job in a state: `JOB_NEW` and `JOB_REQUEUE` in PEND,
//! `JOB_START` in its `jStatus` (RUN), `JOB_STATUS` in its `jStatus`; the other records
//! (signals, switches, moves, `bmod`'s `JOB_MODIFY2`, the pid and execution reports)
//! leave it unchanged. The time between two records counts for the state in force
//! (RUN|WAIT and PROV count as PEND, unknown codes as UNKWN). A finished job (DONE, or
//! EXIT other than a zombie) stops the clock at its last record; time it then spends
//! finished counts as PEND only if it later runs or pends again (requeue, rerun). An
//! unfinished job is accounted up to now.

use basalt_core::job::{exit_reason, status, sub};
use basalt_eventlog::{JobNew, Record};
use std::collections::HashMap;

/// Seconds in each state, as bhist reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StateTimes {
    pub pend: i64,
    pub psusp: i64,
    pub run: i64,
    pub ususp: i64,
    pub ssusp: i64,
    pub unkwn: i64,
}

impl StateTimes {
    /// The sum of all states.
    pub fn total(&self) -> i64 {
        self.pend + self.psusp + self.run + self.ususp + self.ssusp + self.unkwn
    }
}

/// The state bits without the post-execution bits.
pub fn base_state(j_status: u32) -> u32 {
    j_status & !(status::PDONE | status::PERR)
}

/// A zombie: EXIT while the execution host could not be reached.
fn is_zombie(state: u32, reasons: u32) -> bool {
    state & status::EXIT != 0 && reasons & (exit_reason::ZOMBIE | exit_reason::KILL_ZOMBIE) != 0
}

/// DONE, or EXIT other than a zombie: the clock stops.
pub fn is_final(state: u32, reasons: u32) -> bool {
    base_state(state) & (status::DONE | status::EXIT) != 0 && !is_zombie(state, reasons)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bucket {
    Pend,
    Psusp,
    Run,
    Ususp,
    Ssusp,
    Unkwn,
    Finished,
}

fn bucket(state: u32, reasons: u32) -> Bucket {
    let s = base_state(state);
    if s & (status::UNKWN | status::RUNKWN) != 0 || is_zombie(s, reasons) {
        return Bucket::Unkwn;
    }
    if s & (status::WAIT | status::PROV) != 0 {
        return Bucket::Pend;
    }
    match s {
        status::PEND => Bucket::Pend,
        status::PSUSP => Bucket::Psusp,
        status::RUN => Bucket::Run,
        status::USUSP => Bucket::Ususp,
        status::SSUSP => Bucket::Ssusp,
        status::DONE | status::EXIT => Bucket::Finished,
        _ => Bucket::Unkwn,
    }
}

/// The (state, reasons) a record leaves its job in; `None` when it does not change it.
pub fn state_change(rec: &Record) -> Option<(u32, u32)> {
    match rec {
        Record::JobNew(_) | Record::JobRequeue(_) => Some((status::PEND, 0)),
        Record::JobStart(s) | Record::PreExecStart(s) => {
            let st = base_state(s.j_status);
            Some((if st == 0 { status::RUN } else { st }, 0))
        }
        Record::JobStatus(s) => {
            let st = base_state(s.j_status);
            (st != 0).then_some((st, s.reason))
        }
        _ => None,
    }
}

/// Does `bhist` show or account this record as part of a job's history?
pub fn is_history_record(rec: &Record) -> bool {
    matches!(
        rec,
        Record::JobNew(_)
            | Record::JobModify(_)
            | Record::JobModify2(_)
            | Record::JobStart(_)
            | Record::PreExecStart(_)
            | Record::JobStartAccept(_)
            | Record::JobExecute(_)
            | Record::JobStatus(_)
            | Record::JobSignal(_)
            | Record::JobSwitch(_)
            | Record::JobMove(_)
            | Record::JobRequeue(_)
            | Record::JobForce(_)
            | Record::Mig(_)
            | Record::Chkpnt(_)
            | Record::JobSigact(_)
            | Record::JobForward(_)
            | Record::JobAccept(_)
    )
}

/// One job (or array element) and its history records, oldest first.
#[derive(Debug, Clone)]
pub struct JobHistory {
    pub job_id: u64,
    /// Array index (0 for an ordinary job).
    pub idx: u32,
    /// The submission (the latest `JOB_NEW` / `JOB_MODIFY`).
    pub sub: Box<JobNew>,
    /// The queue the job is in now (after `bswitch`).
    pub queue: String,
    /// The hosts of the latest dispatch.
    pub exec_hosts: Vec<String>,
    /// `JOB_NEW` first, then every history record in log order.
    pub records: Vec<Record>,
    /// Submission order of the job (array elements share their job's).
    seq: usize,
    /// An array job whose elements have records of their own (then it is not shown).
    has_elements: bool,
}

impl JobHistory {
    fn new(n: Box<JobNew>, seq: usize) -> JobHistory {
        JobHistory {
            job_id: n.job_id,
            idx: n.idx,
            queue: n.queue.clone(),
            exec_hosts: Vec::new(),
            records: vec![Record::JobNew(n.clone())],
            sub: n,
            seq,
            has_elements: false,
        }
    }

    fn push(&mut self, rec: Record) {
        match &rec {
            Record::JobModify(n) => {
                self.queue = n.queue.clone();
                self.sub = n.clone();
            }
            Record::JobModify2(m) => {
                // What the -q, -J and -P selections and the job header go by (the
                // submission line keeps the values of JOB_NEW).
                if m.options & sub::QUEUE != 0 && !m.queue.is_empty() {
                    self.queue = m.queue.clone();
                }
                if m.options & sub::JOB_NAME != 0 {
                    // `-J "%k"` of an array changes its limit, not its name (as
                    // mbatchd applies it: basalt_sched::Modify::apply_to).
                    let limit = match basalt_sched::array::limit_change(&m.job_name) {
                        Some(Ok(k)) => basalt_sched::array::with_limit(&self.sub.job_name, k),
                        _ => None,
                    };
                    self.sub.job_name = limit.unwrap_or_else(|| m.job_name.clone());
                    self.sub.options |= sub::JOB_NAME;
                } else if m.del_options & sub::JOB_NAME != 0 {
                    self.sub.job_name.clear();
                    self.sub.options &= !sub::JOB_NAME;
                }
                if m.options & sub::PROJECT_NAME != 0 {
                    self.sub.project_name = m.project_name.clone();
                }
            }
            Record::JobSwitch(s) => self.queue = s.queue.clone(),
            Record::JobStart(s) => self.exec_hosts = s.exec_hosts.clone(),
            _ => {}
        }
        self.records.push(rec);
    }

    /// The current state and its reasons (PEND right after submission).
    pub fn state(&self) -> (u32, u32) {
        self.records
            .iter()
            .rev()
            .find_map(state_change)
            .unwrap_or((status::PEND, 0))
    }

    /// DONE or EXIT now (zombies included, as LSF's filters count them).
    pub fn is_finished(&self) -> bool {
        base_state(self.state().0) & (status::DONE | status::EXIT) != 0
    }

    /// The time in each state, and the time the summary is "by": the last record of a
    /// finished job, else `now`.
    pub fn state_times(&self, now: i64) -> (StateTimes, i64) {
        let mut t = StateTimes::default();
        let mut cur: Option<(i64, u32, u32)> = None;
        let mut finished_gap = 0;
        for rec in &self.records {
            let time = rec.time();
            let change = state_change(rec);
            let Some((t0, st, rs)) = cur else {
                if let Some((st, rs)) = change {
                    cur = Some((time, st, rs));
                }
                continue;
            };
            let dt = (time - t0).max(0);
            match bucket(st, rs) {
                Bucket::Finished => finished_gap += dt,
                b => add(&mut t, b, dt),
            }
            let (st, rs) = change.unwrap_or((st, rs));
            if bucket(st, rs) != Bucket::Finished && finished_gap > 0 {
                t.pend += finished_gap;
                finished_gap = 0;
            }
            cur = Some((time, st, rs));
        }
        match cur {
            Some((last, st, rs)) if bucket(st, rs) == Bucket::Finished => (t, last),
            Some((t0, st, rs)) => {
                add(&mut t, bucket(st, rs), (now - t0).max(0));
                (t, now.max(t0))
            }
            None => (t, now),
        }
    }
}

fn add(t: &mut StateTimes, b: Bucket, dt: i64) {
    match b {
        Bucket::Pend => t.pend += dt,
        Bucket::Psusp => t.psusp += dt,
        Bucket::Run => t.run += dt,
        Bucket::Ususp => t.ususp += dt,
        Bucket::Ssusp => t.ssusp += dt,
        Bucket::Unkwn => t.unkwn += dt,
        Bucket::Finished => {}
    }
}

/// Build the histories of every job in `records` (log order), in submission order.
///
/// A record for array element `idx > 0` creates the element's history from its job's
/// (submission and records so far) the first time it is seen; a record with `idx = 0`
/// for an array job applies to the job and to every element. An array job is shown as
/// its elements once it has any. Records of jobs whose `JOB_NEW` was not read are
/// skipped; a `JOB_NEW` for an id already in use starts a new history only when the old
/// job has finished (job ids wrap at `MAX_JOBID`).
pub fn build(records: impl IntoIterator<Item = Record>) -> Vec<JobHistory> {
    let mut jobs: Vec<JobHistory> = Vec::new();
    let mut index: HashMap<(u64, u32), usize> = HashMap::new();
    let mut elements: HashMap<u64, Vec<u32>> = HashMap::new();
    let mut seq = 0;
    for rec in records {
        if !is_history_record(&rec) {
            continue;
        }
        let (Some(id), Some(idx)) = (rec.job_id(), rec.idx()) else {
            continue;
        };
        if let Record::JobNew(n) = &rec {
            if let Some(&i) = index.get(&(id, 0)) {
                if !jobs[i].is_finished() {
                    continue;
                }
                for e in elements.remove(&id).unwrap_or_default() {
                    index.remove(&(id, e));
                }
            }
            let mut n = n.clone();
            n.idx = 0;
            seq += 1;
            jobs.push(JobHistory::new(n, seq));
            index.insert((id, 0), jobs.len() - 1);
            continue;
        }
        if idx == 0 {
            let Some(&i) = index.get(&(id, 0)) else {
                continue;
            };
            for e in elements.get(&id).into_iter().flatten() {
                if let Some(&j) = index.get(&(id, *e)) {
                    jobs[j].push(rec.clone());
                }
            }
            jobs[i].push(rec);
            continue;
        }
        let i = match index.get(&(id, idx)) {
            Some(&i) => i,
            None => {
                let Some(&p) = index.get(&(id, 0)) else {
                    continue;
                };
                jobs[p].has_elements = true;
                let mut el = jobs[p].clone();
                el.idx = idx;
                el.has_elements = false;
                jobs.push(el);
                let i = jobs.len() - 1;
                index.insert((id, idx), i);
                elements.entry(id).or_default().push(idx);
                i
            }
        };
        jobs[i].push(rec);
    }
    let mut jobs: Vec<JobHistory> = jobs.into_iter().filter(|j| !j.has_elements).collect();
    jobs.sort_by_key(|j| (j.seq, j.idx));
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_eventlog::parse_line;

    fn rec(line: &str) -> Record {
        match parse_line(line) {
            Ok(Some(r)) => r,
            other => panic!("cannot parse {line}: {other:?}"),
        }
    }

    fn job_new(id: u64, t: i64, name: &str) -> String {
        format!(
            "\"JOB_NEW\" \"40\" {t} {id} 0 33554434 1 {t} 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"{t}.{id}\" 0 \"\" \"\" \"{name}\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1"
        )
    }

    fn status(id: u64, t: i64, st: u32, reason: u32, idx: u32) -> String {
        format!("\"JOB_STATUS\" \"40\" {t} {id} {st} {reason} 0 0.0000 0 0 0 {idx}")
    }

    fn start(id: u64, t: i64, idx: u32) -> String {
        format!("\"JOB_START\" \"40\" {t} {id} 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 {idx} \"\"")
    }

    #[test]
    fn done_job_times_stop_at_the_finish() {
        let recs = vec![
            rec(&job_new(101, 1000, "")),
            rec(&start(101, 1005, 0)),
            rec("\"JOB_START_ACCEPT\" \"40\" 1005 101 25592 25592 0 2097152"),
            rec(&status(101, 1035, 64, 0, 0)),
            rec(&status(101, 1040, 192, 0, 0)),
        ];
        let jobs = build(recs);
        assert_eq!(jobs.len(), 1);
        let (t, by) = jobs[0].state_times(5000);
        assert_eq!(
            t,
            StateTimes {
                pend: 5,
                run: 30,
                ..Default::default()
            }
        );
        assert_eq!(t.total(), 35);
        assert_eq!(by, 1040);
        assert!(jobs[0].is_finished());
        assert_eq!(jobs[0].exec_hosts, vec!["vm".to_string()]);
    }

    #[test]
    fn suspensions_and_unfinished_jobs_count_up_to_now() {
        let recs = vec![
            rec(&job_new(104, 1000, "")),
            rec(&start(104, 1010, 0)),
            rec(&status(104, 1020, 16, 0x10002, 0)),
            rec("\"JOB_SIGNAL\" \"40\" 1025 104 0 1 \"STOP\" 0 \"root\""),
            rec(&status(104, 1030, 8, 0x401, 0)),
            rec(&status(104, 1033, 4, 0x10001, 0)),
        ];
        let jobs = build(recs);
        let (t, by) = jobs[0].state_times(1100);
        assert_eq!(
            t,
            StateTimes {
                pend: 10,
                run: 10 + 67,
                ususp: 10,
                ssusp: 3,
                ..Default::default()
            }
        );
        assert_eq!(by, 1100);
        assert!(!jobs[0].is_finished());
        assert_eq!(jobs[0].state(), (4, 0x10001));
    }

    #[test]
    fn requeued_job_counts_the_finished_gap_as_pending() {
        let recs = vec![
            rec(&job_new(6, 1000, "")),
            rec(&start(6, 1000, 0)),
            rec(&status(6, 1010, 32, 0x20, 0)),
            rec(&status(6, 1015, 1, 23, 0)),
            rec(&start(6, 1020, 0)),
            rec(&status(6, 1030, 64, 0, 0)),
        ];
        let (t, by) = build(recs)[0].state_times(9999);
        assert_eq!(
            t,
            StateTimes {
                pend: 10,
                run: 20,
                ..Default::default()
            }
        );
        assert_eq!(by, 1030);
    }

    #[test]
    fn pending_psusp_unknown_and_zombie() {
        let recs = vec![
            rec(&job_new(7, 1000, "")),
            rec(&status(7, 1010, 2, 0x2, 0)),
            rec(&status(7, 1020, 1, 0, 0)),
            rec(&start(7, 1030, 0)),
            rec(&status(7, 1040, 0x10000, 0, 0)),
            rec(&status(7, 1050, 32, 0x2, 0)),
        ];
        let jobs = build(recs);
        let (t, by) = jobs[0].state_times(1060);
        assert_eq!(
            t,
            StateTimes {
                pend: 20,
                psusp: 10,
                run: 10,
                unkwn: 20,
                ..Default::default()
            }
        );
        assert_eq!(by, 1060);
        // A zombie counts as finished for the -d/-a filters.
        assert!(jobs[0].is_finished());
    }

    #[test]
    fn array_elements_get_their_own_histories() {
        let recs = vec![
            rec(&job_new(9, 1000, "arr[1-2]")),
            rec(&job_new(10, 1001, "")),
            rec(&start(9, 1005, 2)),
            rec("\"JOB_SWITCH\" \"40\" 1006 0 9 \"lowq\" 0 \"root\""),
            rec(&start(9, 1007, 1)),
            rec(&status(9, 1010, 64, 0, 2)),
            // Records of a job that was never submitted in these files are skipped.
            rec(&status(55, 1010, 64, 0, 0)),
        ];
        let jobs = build(recs);
        let keys: Vec<(u64, u32)> = jobs.iter().map(|j| (j.job_id, j.idx)).collect();
        assert_eq!(keys, vec![(9, 1), (9, 2), (10, 0)]);
        // The switch (idx 0) reached element 2 (which existed) and element 1 was created
        // after it from the job's history.
        assert_eq!(jobs[0].queue, "lowq");
        assert_eq!(jobs[1].queue, "lowq");
        assert!(jobs[1].is_finished());
        assert!(!jobs[0].is_finished());
        assert_eq!(jobs[1].records.len(), 4);
    }

    #[test]
    fn a_reused_job_id_starts_a_new_history_only_after_the_old_job_finished() {
        let recs = vec![
            rec(&job_new(5, 1000, "first")),
            rec(&job_new(5, 1001, "dup")),
            rec(&status(5, 1002, 32, 0, 0)),
            rec(&job_new(5, 2000, "second")),
        ];
        let jobs = build(recs);
        let names: Vec<&str> = jobs.iter().map(|j| j.sub.job_name.as_str()).collect();
        assert_eq!(names, vec!["first", "second"]);
    }
}
