//! lsb.acct after a crash: the replay at start (and after a failed write) rebuilds the
//! `JOB_FINISH` records lsb.acct lacks, from the events it replays.
//!
//! Why a rebuild rather than one commit for both files: an iteration's events reach
//! lsb.events (fsync) before its accounting records reach lsb.acct (a second fsync);
//! no order of two files is atomic. Written the other way round, a crash in between
//! would leave a record of an end lsb.events does not have, and sbatchd's repeated
//! report would end the job again with a second record. So lsb.events is the truth and
//! lsb.acct follows it: a crash between the two fsyncs leaves lsb.acct short by the ends
//! of the last iteration(s), and nothing else.
//!
//! Which ends are due comes from the replay itself ([`Sched::replay_ends`], the rule
//! live uses to ask for a record), over the events after the current file's header
//! offset: the ends before it (carried over by a log switch) have their records, as a
//! switch is made only once the accounting records before it are written. The records
//! are appended in the order of the ends, so lsb.acct holds the ends due up to some
//! point and lacks the rest; [`el::AcctMatch`] finds that point by comparing lsb.acct's
//! last records with the ends due. Each missing record is the job as its end left it: a
//! job changed after its end in the part replayed (requeued, cleaned) is kept as it was
//! before the change. The rebuilt records go to lsb.acct before anything else is
//! written there ([`Journal::commit_acct`] writes what is still pending first), so a
//! restart finds them in order, and a second restart rebuilds nothing.

use super::{Journal, JournalError, Replayed, finish_record};
use basalt_eventlog as el;
use basalt_records::end_key;
use basalt_sched::{Event, Job, JobKey, Sched};
use std::collections::BTreeMap;

/// The ends due after the last one lsb.acct is known to hold.
#[derive(Debug)]
struct Ends {
    matcher: el::AcctMatch,
    /// Those ends, in order.
    after: Vec<(JobKey, el::EndKey)>,
    /// Jobs changed after one of those ends, as the end left them.
    kept: BTreeMap<(JobKey, el::EndKey), Box<Job>>,
}

impl Ends {
    fn new(matcher: el::AcctMatch) -> Ends {
        Ends {
            matcher,
            after: Vec::new(),
            kept: BTreeMap::new(),
        }
    }

    /// `ev` is about to be applied: a job it changes after its end (a requeue, a clean;
    /// not a post-execution status, which no record shows) is kept as it was.
    fn before(&mut self, sched: &Sched, ev: &Event) {
        let key = match ev {
            Event::JobStatus { key, status, .. }
                if status & (basalt_core::job::status::PDONE | basalt_core::job::status::PERR)
                    == 0 =>
            {
                key
            }
            Event::JobClean { key, .. } => key,
            _ => return,
        };
        if let Some(j) = sched.jobs().get(key)
            && j.state.is_finished()
            && !self.after.is_empty()
        {
            self.kept.insert((*key, end_key(j)), j.clone());
        }
    }

    /// An end due, as the replay met it.
    fn push(&mut self, j: &Job) {
        let end = end_key(j);
        if self.matcher.push(end) {
            self.after.clear();
            self.kept.clear();
            return;
        }
        self.after.push((j.key(), end));
    }

    /// The records lsb.acct lacks, in order.
    fn missing(mut self, sched: &Sched) -> Vec<el::JobFinish> {
        let mut out = Vec::with_capacity(self.after.len());
        for (key, end) in std::mem::take(&mut self.after) {
            let rec = match self.kept.remove(&(key, end)) {
                Some(j) => Some(finish_record(&j)),
                None => sched
                    .jobs()
                    .get(&key)
                    .filter(|j| end_key(j) == end)
                    .map(|j| finish_record(j)),
            };
            match rec {
                Some(r) => out.push(r),
                None => tracing::error!(
                    "cannot rebuild the lsb.acct record of job {}[{}] ended at {}: the job \
                     changed after its end in a way the replay did not keep",
                    key.0,
                    key.1,
                    end.4
                ),
            }
        }
        out
    }
}

impl Journal {
    /// Apply what was read back on open (or reload) to `sched`, and append to lsb.acct
    /// the `JOB_FINISH` records of the ends it replays that lsb.acct lacks (see the
    /// module's documentation). How many records were rebuilt. When lsb.acct's last
    /// records cannot be read, nothing is rebuilt (the replay is done all the same);
    /// when the rebuilt records cannot be written, they wait for the next commit
    /// ([`Journal::commit_acct`] writes them first) and the error is returned.
    pub fn restore(
        &mut self,
        sched: &mut Sched,
        replayed: &Replayed,
    ) -> Result<usize, JournalError> {
        let (carried, new) = replayed
            .events
            .split_at(replayed.carried.min(replayed.events.len()));
        sched.replay(carried);
        let dir = self
            .copies
            .iter()
            .find(|c| c.broken.is_none() && c.logs.is_some())
            .map(|c| c.dir.clone());
        let matcher = match dir.as_deref().map(el::AcctMatch::read) {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                tracing::error!(
                    "cannot read back the end of lsb.acct ({e}): no accounting record is \
                     rebuilt from lsb.events"
                );
                sched.replay(new);
                return Ok(0);
            }
            None => {
                sched.replay(new);
                return Ok(0);
            }
        };
        let mut ends = Ends::new(matcher);
        for ev in new {
            ends.before(sched, ev);
            sched.replay_ends(std::iter::once(ev), |j| ends.push(j));
        }
        let missing = ends.missing(sched);
        let n = missing.len();
        if n == 0 {
            return Ok(0);
        }
        tracing::warn!(
            "lsb.acct lacks the JOB_FINISH records of {n} job end(s) lsb.events has (a stop \
             between the two files' writes): rebuilding them ({})",
            missing
                .iter()
                .take(10)
                .map(|r| format!("{}[{}]", r.job_id, r.idx))
                .collect::<Vec<_>>()
                .join(" ")
        );
        self.acct_pending = missing;
        self.commit_acct(&[])?;
        Ok(n)
    }
}
