//! sbatchd's hellos (every `BASALT_SBD_HELLO_INTERVAL`, and after a restart of either
//! daemon) and their reconciliation: what mbatchd believes runs on the host against what
//! its sbatchd has, kills sent again, copies mbatchd gave up on ordered killed.

use crate::{
    Effect, HostJob, JobKey, Millis, SbdAction, Sched, Str, TERM_HOST_LOST, secs, state_change,
};
use basalt_core::job::{JobState, pend, status};
use std::collections::BTreeSet;

impl Sched {
    /// sbatchd said hello. Returns the jobs mbatchd believes run there. Every unfinished
    /// copy sbatchd lists of a job mbatchd gave up on (requeued, rerun, ended as lost,
    /// or cleaned since) or of an older attempt is ordered killed.
    pub fn sbd_hello(&mut self, now: Millis, host: &str, jobs: &[HostJob]) -> Vec<HostJob> {
        let Some(name) = self.host_name(host) else {
            return Vec::new();
        };
        let mut back = false;
        if let Some(h) = self.host_mut(&name) {
            back = h.sbd_failed;
            h.sbd_seen = now;
            h.sbd_failed = false;
        }
        if back {
            self.dirty = true;
            self.full_due = true;
        }
        self.reconcile(now, &name, jobs);
        // Kills that may not have arrived (the host was unreachable) are sent again;
        // sbatchd ignores a kill already in progress.
        let resend: Vec<Effect> = self
            .started_on(&name)
            .filter_map(|j| {
                j.kill_ordered.as_ref().map(|term| Effect::Signal {
                    key: j.key(),
                    attempt: j.attempt,
                    host: name.clone(),
                    action: SbdAction::Kill {
                        term_reason: term.to_string(),
                    },
                })
            })
            .collect();
        self.effects.extend(resend);
        self.resend_checkpoints(&name);
        // Copies mbatchd gave up on (the host was lost: the job was requeued, rerun or
        // ended EXIT) or that an older attempt left behind must go. A copy of a job that
        // ended otherwise (bkill -r while the host was away) is answered StopJob when
        // sbatchd asks about it.
        let stale: Vec<Effect> = jobs
            .iter()
            .filter(|h| JobState::from_code(h.state).is_none_or(|st| !st.is_finished()))
            .filter(|h| match self.jobs.get(&h.key) {
                Some(j) => {
                    j.attempt != h.attempt
                        || j.state.is_pending()
                        || (j.state.is_finished() && j.term_reason == TERM_HOST_LOST)
                }
                None => self.gone.contains_key(&h.key),
            })
            .map(|h| Effect::Signal {
                key: h.key,
                attempt: h.attempt,
                host: name.clone(),
                action: SbdAction::Kill {
                    term_reason: TERM_HOST_LOST.to_string(),
                },
            })
            .collect();
        self.effects.extend(stale);
        self.started_on(&name)
            .map(|j| HostJob {
                key: j.key(),
                attempt: j.attempt,
                state: j.state.code(),
                pid: j.pid,
                pgid: j.pgid,
            })
            .collect()
    }

    /// The started jobs whose first execution host is `host` (where its sbatchd runs
    /// them), from the counters: O(those jobs), not O(every job) — a hello comes from
    /// every host every few seconds, with a million jobs in the table.
    pub(crate) fn started_on<'a>(&'a self, host: &str) -> impl Iterator<Item = &'a crate::Job> {
        self.counts
            .started_on
            .get(host)
            .into_iter()
            .flatten()
            .filter_map(|k| self.jobs.get(k))
            .map(|j| &**j)
            .filter(|j| j.state.is_started())
    }

    /// Compare what mbatchd believes runs on `host` with what its sbatchd says it has.
    ///
    /// * A job dispatched by an earlier mbatchd term whose dispatch sbatchd never accepted
    ///   (mbatchd died between logging JOB_START and sending it) and that sbatchd does not
    ///   have was never started: it goes back to PEND (or ends, if a kill was ordered).
    ///   A dispatch of this term still in flight is left alone.
    /// * An accepted job that sbatchd leaves out of two hellos in a row is lost (sbatchd
    ///   lost its state): it ends as EXIT, killed by signal 9.
    pub(crate) fn reconcile(&mut self, now: Millis, host: &str, listed: &[HostJob]) {
        let listed: BTreeSet<(JobKey, u32)> = listed.iter().map(|h| (h.key, h.attempt)).collect();
        let ours: Vec<(JobKey, u32, bool, Option<Str>)> = self
            .started_on(host)
            .map(|j| (j.key(), j.attempt, j.pid == 0, j.kill_ordered.clone()))
            .collect();
        let t = secs(now);
        for (key, attempt, unaccepted, kill) in ours {
            if listed.contains(&(key, attempt)) {
                self.missing.remove(&key);
                continue;
            }
            if unaccepted && self.in_flight.contains(&(key, attempt)) {
                continue;
            }
            // Missing from two hellos in a row: one hello may have been built just before
            // a dispatch arrived.
            let n = self.missing.entry(key).or_insert(0);
            *n += 1;
            if *n < 2 {
                continue;
            }
            self.missing.remove(&key);
            if unaccepted {
                match kill {
                    Some(term) => self.finish(
                        t,
                        key,
                        status::EXIT,
                        0,
                        basalt_core::job::KILLED_WAIT_STATUS,
                        None,
                        term.to_string(),
                    ),
                    None => self.emit(state_change(t, key, status::PEND, pend::SBD_UNREACH, 0)),
                }
                continue;
            }
            self.finish(t, key, status::EXIT, 0, 9, None, String::new());
        }
    }
}
