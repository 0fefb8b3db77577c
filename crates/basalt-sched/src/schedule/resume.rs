//! Resuming bresume'd jobs (SSUSP with SUSP_USER_RESUME) when their host's load allows.

use crate::{Job, JobKey, Millis, SbdAction, Sched};
use basalt_core::job::{JobState, susp};

impl Sched {
    /// bresume'd jobs (SSUSP with SUSP_USER_RESUME) are resumed when their host's load
    /// is within the queue's and the host's loadSched thresholds — or, when the queue
    /// has a RESUME_COND, when that holds: highest queue priority first, then the
    /// oldest; at most one per host per SBD_SLEEP_TIME.
    pub(crate) fn resume_pass(&mut self, now: Millis) {
        // Only a system-suspended (SSUSP) job can wait for a resume; the counters say
        // whether there is one without a walk over every job (finished ones included).
        if !self.counts.any_ssusp() {
            return;
        }
        let mut cands: Vec<(u32, i64, JobKey, u32, String, crate::Str)> = self
            .jobs
            .values()
            .filter(|j| self.waits_for_resume(j))
            .filter_map(|j| {
                let prio = self.queue(&j.queue).map_or(0, |q| q.priority);
                j.hosts.first().map(|h| {
                    (
                        u32::MAX - prio,
                        j.start_time,
                        j.key(),
                        j.attempt,
                        h.clone(),
                        j.queue.clone(),
                    )
                })
            })
            .collect();
        cands.sort();
        let period = i64::from(self.cfg.sbd_sleep_time_secs.max(1)) * 1000;
        for (_, _, key, attempt, host, queue) in cands {
            let ok = match (
                self.queue(&queue),
                self.hosts.iter().find(|h| h.name == host),
            ) {
                (Some(q), Some(h)) => {
                    let load_allows = match &q.resume_cond {
                        Some(c) => c.holds(&|n| Self::load_value(h, n)),
                        None => self.load_ok(q, h).is_ok(),
                    };
                    load_allows
                        && !h.sbd_failed
                        && (h.last_resume == 0 || now - h.last_resume >= period)
                }
                _ => false,
            };
            if ok {
                if let Some(j) = self.jobs.get_mut(&key) {
                    j.resume_sent = true;
                }
                if let Some(h) = self.host_mut(&host) {
                    h.last_resume = now;
                }
                self.order_sbd(key, attempt, host, SbdAction::Resume);
            }
        }
    }

    /// A bresume'd job waiting for its host's load (SSUSP with SUSP_USER_RESUME)?
    pub(crate) fn waits_for_resume(&self, j: &Job) -> bool {
        j.state == JobState::Ssusp && j.reasons & susp::USER_RESUME != 0 && !j.resume_sent
    }
}
