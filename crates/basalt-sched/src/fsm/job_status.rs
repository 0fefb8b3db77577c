//! JOB_STATUS: a job's new state and what comes with it (see [`Sched::on_event`](super)).

use super::{is_rerun, new_job_reasons};
use crate::{Event, Job, Millis, Sched, Str};
use basalt_core::job::{JobState, pend, status, susp};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Sched {
    /// JOB_STATUS: a new state, with what an end, a requeue or a suspension brings.
    pub(super) fn apply_job_status(&mut self, ev: &Event) {
        let Event::JobStatus {
            time,
            key,
            status: st,
            reasons,
            subreasons,
            cpu_time,
            end_time,
            usage,
            exit_status,
            term_reason,
        } = ev
        else {
            return;
        };
        // (Only an end feeds the fairshare history.)
        let keep_fs = *st & (status::DONE | status::EXIT) != 0 && self.fs_history_kept();
        let Some(j) = self.jobs.get_mut(key) else {
            return;
        };
        let Some(new) = JobState::from_code(*st) else {
            return;
        };
        let post = *st & (status::PDONE | status::PERR);
        if post != 0 && j.state.is_finished() {
            // The post-execution status of a job that has ended.
            j.requeues.get_or_insert_with(Default::default).post_bits = post;
            return;
        }
        self.counts.apply(j, false);
        // (A preempted job bstopped and bresumed is still the same preemption.)
        let was_preempted = matches!(j.state, JobState::Ssusp | JobState::Ususp)
            && j.reasons & susp::MBD_PREEMPT != 0;
        j.reasons = *reasons;
        j.subreasons = *subreasons;
        if new.is_finished() {
            j.end_time = if *end_time > 0 { *end_time } else { *time };
            j.exit_status = *exit_status;
            j.cpu_time = *cpu_time;
            if let Some(u) = usage {
                j.usage = Some(Box::new(u.clone()));
            }
            let natural = new == JobState::Done && *exit_status == 0 && !j.kill_as_done;
            j.term_reason = if !term_reason.is_empty() {
                Str::from(term_reason)
            } else if natural {
                Str::EMPTY
            } else {
                j.kill_ordered.clone().unwrap_or_default()
            };
            j.pend_reasons = Arc::default();
        } else if new.is_pending() {
            let retry = (self.cfg.mbd_sleep_time_secs, self.cfg.requeue_delay_secs);
            to_pending(
                j,
                new,
                (*time, *reasons, *subreasons),
                retry,
                &mut self.next_retry,
            );
        }
        if new == JobState::Run {
            j.resume_sent = false;
        }
        // Preempted (seed 002): counted once per suspension, for MAX_JOB_PREEMPT.
        if new == JobState::Ssusp && *reasons & susp::MBD_PREEMPT != 0 && !was_preempted {
            j.preempt_count += 1;
        }
        if *reasons & susp::MBD_PREEMPT == 0 {
            j.preempted_by = None;
        }
        let rerun = is_rerun(j.state, new, *reasons);
        // Fairshare: a started job's end adds its CPU and run time to its user's
        // history in its queue.
        let fs_end = (new.is_finished() && !j.state.is_finished() && j.start_time > 0 && keep_fs)
            .then(|| {
                (
                    j.queue.clone(),
                    j.sub.user.clone(),
                    j.hosts.first().cloned(),
                    j.end_time.saturating_mul(1000),
                    (
                        j.cpu_time,
                        (j.end_time - j.start_time).max(0) as f64,
                        j.slots(),
                    ),
                )
            });
        let was_ssusp = j.state == JobState::Ssusp;
        j.state = new;
        self.counts.apply(j, true);
        // Since when the system has suspended it (automatic migration, MIG).
        if new == JobState::Ssusp {
            if !was_ssusp {
                self.ssusp_since.insert(*key, *time);
            }
        } else if was_ssusp {
            self.ssusp_since.remove(key);
        }
        if let Some((queue, user, host, at, used)) = fs_end {
            self.fs_account_finish((&queue, &user, host.as_deref()), at, used);
        }
        if rerun {
            // A rerun goes before the jobs pending in its queue.
            self.apply_move(*key, 1, 1);
        }
    }
}

/// A job back to pending (requeued, its dispatch failed, a failed pre-execution command,
/// MultiCluster's return, `brequeue` of a finished job), `(time, reasons, subreasons)`
/// from its JOB_STATUS: what its last run leaves, the retry it waits for (`retry`:
/// MBD_SLEEP_TIME and BASALT_REQUEUE_DELAY, seconds; `next_retry` the earliest of all).
fn to_pending(
    j: &mut Job,
    new: JobState,
    (time, reasons, subreasons): (i64, u32, u32),
    retry: (u32, u32),
    next_retry: &mut Millis,
) {
    if let Some(r) = j.requeues.as_mut() {
        r.requeue_to = 0;
        r.requeue_reason = 0;
    }
    if j.state.is_finished() {
        // brequeue of a finished job: it runs again from the start.
        j.hosts.clear();
        j.pid = 0;
        j.pgid = 0;
        j.start_time = 0;
        j.end_time = 0;
        j.exit_status = 0;
        j.cpu_time = 0.0;
        j.usage = None;
        j.term_reason = Str::EMPTY;
        j.kill_ordered = None;
        j.kill_as_done = false;
    }
    if j.state.is_started() {
        // A failed pre-execution command or a requeue by exit value:
        // counted (their limits), the host excluded (EXCLUDE(...)) and the
        // next try delayed by a scheduling interval (pre-execution).
        if reasons == pend::PRE_EXEC || reasons == pend::RESTART_FILE {
            let r = j.requeues.get_or_insert_with(Default::default);
            if reasons == pend::PRE_EXEC {
                r.pre_exec_failures += 1;
            }
            r.not_before = time * 1000 + i64::from(retry.0) * 1000;
            r.wait_reason = pend::PRE_EXEC;
            if *next_retry == 0 || r.not_before < *next_retry {
                *next_retry = r.not_before;
            }
        } else if reasons == pend::REQUEUED && subreasons & crate::sbd::REQUEUE_BY_VALUE != 0 {
            let r = j.requeues.get_or_insert_with(Default::default);
            r.by_exit_value += 1;
            if subreasons & crate::sbd::REQUEUE_EXCLUDE != 0
                && let Some(h) = j.hosts.first()
                && !r.excluded.contains(h)
            {
                r.excluded.push(h.clone());
            }
            // Not dispatched again before BASALT_REQUEUE_DELAY (from the
            // logged time: a replay waits the same).
            r.not_before = time * 1000 + i64::from(retry.1) * 1000;
            r.wait_reason = pend::REQUEUED;
            if *next_retry == 0 || r.not_before < *next_retry {
                *next_retry = r.not_before;
            }
        }
        // Requeued (dispatch failed or rerun): back to pending.
        j.hosts.clear();
        j.pid = 0;
        j.pgid = 0;
        j.start_time = 0;
    }
    if new == JobState::Pend && j.pend_reasons.is_empty() {
        j.pend_reasons = new_job_reasons();
    }
    // MultiCluster: back from the remote cluster (counted when it could
    // not start there); a PSUSP job bresume'd gets its tries again.
    if let Some(m) = j.mc.as_mut() {
        if reasons == crate::mc::PEND_MC_RETURNED && new == JobState::Pend {
            m.fwd_cluster = Str::EMPTY;
            m.fwd_queue = Str::EMPTY;
            m.remote_id = 0;
            if crate::mc::counted(subreasons) {
                m.returns += 1;
            }
            j.pend_reasons = Arc::new(BTreeMap::from([(crate::mc::PEND_MC_RETURNED, Vec::new())]));
        } else if j.state == JobState::Psusp && new == JobState::Pend {
            m.returns = 0;
        }
    }
}
