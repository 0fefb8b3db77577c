//! Accounting: which logged event ends a job with a `JOB_FINISH` record in lsb.acct, and
//! the job as that event left it — one rule, applied live (an [`Effect::Acct`] next to
//! the event's `Log`) and on replay ([`Sched::replay_ends`]), so that mbatchd can tell
//! after a crash which records of the events it replays lsb.acct lacks, and rebuild
//! exactly those.
//!
//! The rule: a JOB_STATUS to DONE or EXIT (without the post-execution bits) of a job in
//! memory that had not ended, except a MultiCluster job handed back to the cluster it
//! came from ([`TERM_MC_RETURN`], [`TERM_MC_INITFAIL`]: it did not run here). A job
//! requeued after its end (`brequeue -d`/`-e`) gets a record for each end.

use crate::mc::{TERM_MC_INITFAIL, TERM_MC_RETURN};
use crate::{Effect, Event, Job, JobKey, Sched};
use basalt_core::job::{JobState, status};

impl Sched {
    /// The job `ev` ends with an accounting record, judged before `ev` is applied.
    pub fn acct_due(&self, ev: &Event) -> Option<JobKey> {
        let Event::JobStatus {
            key,
            status: st,
            term_reason,
            ..
        } = ev
        else {
            return None;
        };
        if *st & (status::PDONE | status::PERR) != 0 {
            return None;
        }
        if !matches!(
            JobState::from_code(*st),
            Some(JobState::Done | JobState::Exit)
        ) {
            return None;
        }
        if term_reason == TERM_MC_RETURN || term_reason == TERM_MC_INITFAIL {
            return None;
        }
        let j = self.jobs.get(key)?;
        (!j.state.is_finished()).then_some(*key)
    }

    /// Log and apply `ev` live, with the job's accounting record when it ends one
    /// ([`Sched::acct_due`]): the job as `ev` left it, so that what the record says does
    /// not depend on what else the same loop iteration did to the job.
    pub(crate) fn emit_with_acct(&mut self, ev: Event) {
        let due = self.acct_due(&ev);
        self.on_event(&ev);
        self.effects.push(Effect::Log(ev));
        if let Some(j) = due.and_then(|k| self.jobs.get(&k)) {
            self.effects.push(Effect::Acct(j.clone()));
        }
    }

    /// [`Sched::replay`] that also hands `ended` each job an event ends with an
    /// accounting record, as that event left it (in log order): what lsb.acct must hold
    /// for these events, judged by the same rule as live.
    pub fn replay_ends<'a, I>(&mut self, events: I, mut ended: impl FnMut(&Job))
    where
        I: IntoIterator<Item = &'a Event>,
    {
        for ev in events {
            let due = self.acct_due(ev);
            self.replay(std::iter::once(ev));
            if let Some(j) = due.and_then(|k| self.jobs.get(&k)) {
                ended(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::{T0, alice, cfg, cmd, report_next, up};
    use crate::*;
    use basalt_core::job::JobState;

    /// What a record depends on: the job, its state and times.
    type End = (JobKey, JobState, i64, i64);

    fn end(j: &Job) -> End {
        (j.key(), j.state, j.start_time, j.end_time)
    }

    fn done(exit_status: i32) -> ReportKind {
        ReportKind::Finished {
            exit_status,
            usage: Usage::default(),
            term_reason: String::new(),
            post_exec: None,
        }
    }

    /// The ends a live core asks records for are those a replay of its log names, with
    /// the same job: a job that ends, a pending job killed, a job requeued after its end
    /// (in the same batch as the end: the record is still the job as its end left it)
    /// that ends again; a post-execution status and a second kill add none.
    #[test]
    fn live_and_replay_name_the_same_ends_with_the_same_job() {
        let mut s = up();
        for i in 0..5 {
            s.submit(T0, &alice(), cmd(&format!("j{i}")))
                .expect("submit");
        }
        s.schedule(T0);
        let (mut log, mut live) = (Vec::new(), Vec::<End>::new());
        let take = |s: &mut Sched, log: &mut Vec<Event>, live: &mut Vec<End>| {
            for e in s.take_effects() {
                match e {
                    Effect::Log(ev) => log.push(ev),
                    Effect::Acct(j) => live.push(end(&j)),
                    _ => {}
                }
            }
        };
        take(&mut s, &mut log, &mut live);
        assert_eq!(s.jobs[&(5, 0)].state, JobState::Pend, "4 slots, 5 jobs");
        report_next(&mut s, T0 + 1000, (1, 0), done(0));
        report_next(
            &mut s,
            T0 + 1500,
            (1, 0),
            ReportKind::PostExec { status: 0 },
        );
        s.kill(T0 + 2000, &alice(), (5, 0), false, false)
            .expect("kill");
        assert!(s.kill(T0 + 2100, &alice(), (5, 0), false, false).is_err());
        take(&mut s, &mut log, &mut live);
        // Job 2 ends and is requeued in the same batch.
        report_next(&mut s, T0 + 3000, (2, 0), done(0));
        let states = RequeueStates {
            done: true,
            exit: false,
            running: false,
        };
        s.requeue(T0 + 3000, &alice(), (2, 0), states, false)
            .expect("requeue");
        assert_eq!(s.jobs[&(2, 0)].state, JobState::Pend);
        take(&mut s, &mut log, &mut live);
        s.schedule(T0 + 4000);
        take(&mut s, &mut log, &mut live);
        report_next(&mut s, T0 + 9000, (2, 0), done(256));
        take(&mut s, &mut log, &mut live);

        let keys: Vec<JobKey> = live.iter().map(|e| e.0).collect();
        assert_eq!(keys, [(1, 0), (5, 0), (2, 0), (2, 0)]);
        let (first, second) = (live[2], live[3]);
        assert_eq!(first.1, JobState::Done, "the record of the first end");
        assert!(first.3 > 0 && second.3 > first.3, "{first:?} {second:?}");
        assert_eq!(second.1, JobState::Exit);

        let mut r = Sched::new(cfg(), T0);
        let mut replayed = Vec::new();
        r.replay_ends(&log, |j| replayed.push(end(j)));
        assert_eq!(replayed, live);
    }
}
