//! The JOB_* events other than JOB_STATUS, each applied by its own function (see
//! [`Sched::on_event`](super)).

use super::{TokenEntry, elements_of, new_job_reasons, token_scope};
use crate::depend::Expr;
use crate::{Event, GONE_KEEP_SECS, Gone, Job, JobKey, Sched, Str, depend};
use basalt_core::job::{JobState, pend, status, sub2, susp};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Sched {
    /// JOB_NEW: the job (each element of an array), its token, its dependency.
    pub(super) fn apply_job_new(&mut self, ev: &Event) {
        let Event::JobNew { time, job_id, sub } = ev else {
            return;
        };
        let _ = time;
        self.last_job_id = self.last_job_id.max(*job_id);
        self.next_seq += 1;
        // A reused id: what was remembered of the old job no longer applies.
        let old: Vec<JobKey> = self
            .gone
            .range((*job_id, 0)..=(*job_id, u32::MAX))
            .map(|(k, _)| *k)
            .collect();
        for k in old {
            self.gone.remove(&k);
        }
        let hold = sub.options2 & sub2::HOLD != 0;
        let shared = Arc::new(self.interned(sub));
        if !shared.submit_token.is_empty() {
            self.tokens.insert(
                (token_scope(&shared), shared.submit_token.clone()),
                TokenEntry {
                    id: *job_id,
                    queue: shared.queue.clone(),
                    default_queue: shared.options & basalt_core::job::sub::QUEUE == 0,
                },
            );
        }
        let dep = match depend::parse(&sub.depend_cond) {
            Ok(e) => e.map(Arc::new),
            // Accepted by another product or an older Basalt: never satisfied.
            Err(_) => Some(Arc::new(Expr::Invalid)),
        };
        // A queue the configuration no longer has: lost_and_found.
        let queue = self.queue_or_lost(&shared.queue);
        let (indices, limit) = elements_of(&sub.job_name);
        for idx in indices {
            self.next_order += 1;
            let job = Job {
                id: *job_id,
                idx,
                sub: shared.clone(),
                seq: self.next_seq,
                array_limit: limit,
                dep: dep.clone(),
                state: if hold {
                    JobState::Psusp
                } else {
                    JobState::Pend
                },
                queue: queue.clone(),
                order: self.next_order,
                hosts: Vec::new(),
                start_time: 0,
                end_time: 0,
                pid: 0,
                pgid: 0,
                exec_uid: 0,
                exec_user: Str::EMPTY,
                exec_home: Str::EMPTY,
                exec_cwd: Str::EMPTY,
                reasons: if hold { susp::USER_STOP } else { 0 },
                subreasons: 0,
                exit_status: 0,
                cpu_time: 0.0,
                term_reason: Str::EMPTY,
                attempt: 0,
                rusage_alt: 0,
                used_req: None,
                kill_as_done: false,
                kill_ordered: None,
                usage: None,
                pend_reasons: new_job_reasons(),
                last_seq: 0,
                resume_sent: false,
                forced: false,
                no_stop: false,
                pending_action: None,
                requeues: None,
                preempt_count: 0,
                preempted_by: None,
                mc: None,
                chk: None,
            };
            self.counts.apply(&job, true);
            if !hold && !self.replaying {
                self.fresh.insert((*job_id, idx));
            }
            if let Some(old) = self.jobs.insert((*job_id, idx), Box::new(job)) {
                self.counts.apply(&old, false);
            }
        }
    }

    /// JOB_START: the job runs on its hosts (its attempt counted, what it reserves).
    pub(super) fn apply_job_start(&mut self, ev: &Event) {
        let Event::JobStart {
            time,
            key,
            hosts,
            effective_res_req,
        } = ev
        else {
            return;
        };
        // The alternative of its rusage[] it reserves (only a job with several
        // logs one).
        // A compound or alternative requirement logs the one it uses.
        let multi = self
            .jobs
            .get(key)
            .is_some_and(|j| basalt_config::compound::is_multi(&self.job_res_req(&j.sub)));
        let alt = match self.jobs.get(key) {
            Some(j) if !multi && !effective_res_req.is_empty() => {
                self.rusage_alt_of(j, effective_res_req)
            }
            _ => 0,
        };
        let used_req =
            (multi && !effective_res_req.is_empty()).then(|| Box::from(effective_res_req.as_str()));
        if let Some(j) = self.jobs.get_mut(key) {
            self.counts.apply(j, false);
            j.state = JobState::Run;
            j.hosts = hosts.clone();
            j.rusage_alt = alt;
            j.used_req = used_req;
            j.start_time = *time;
            j.attempt += 1;
            j.pid = 0;
            j.pgid = 0;
            j.reasons = 0;
            j.subreasons = 0;
            j.last_seq = 0;
            j.resume_sent = false;
            j.kill_ordered = None;
            j.pending_action = None;
            j.pend_reasons = Arc::default();
            // An order to an earlier attempt is answered by nobody.
            if let Some(c) = j.chk.as_mut() {
                c.in_flight = None;
            }
            self.counts.apply(j, true);
        }
        self.follow_periodic(*key);
    }

    /// JOB_EXECUTE: who and where the job runs as.
    pub(super) fn apply_job_execute(&mut self, ev: &Event) {
        let Event::JobExecute {
            key,
            exec_uid,
            exec_user,
            exec_home,
            exec_cwd,
            pid,
            ..
        } = ev
        else {
            return;
        };
        if let Some(j) = self.jobs.get_mut(key) {
            j.exec_uid = *exec_uid;
            j.exec_user = self.strs.intern_text(exec_user);
            j.exec_home = self.strs.intern_text(exec_home);
            j.exec_cwd = self.strs.intern_text(exec_cwd);
            if *pid != 0 {
                j.pid = *pid;
            }
        }
    }

    /// JOB_SIGNAL: what a kill, a resume or a requeue asked leaves on the job.
    pub(super) fn apply_job_signal(&mut self, ev: &Event) {
        let Event::JobSignal {
            key, signal, user, ..
        } = ev
        else {
            return;
        };
        if let Some(j) = self.jobs.get_mut(key) {
            match signal.as_str() {
                "KILL" | "KILL_DONE" | "KILL_REMOVE" => {
                    if signal == "KILL_DONE" {
                        j.kill_as_done = true;
                    }
                    let term = if *user == j.sub.user {
                        "TERM_OWNER"
                    } else {
                        "TERM_ADMIN"
                    };
                    j.kill_ordered.get_or_insert_with(|| term.into());
                }
                // Killed for a higher-priority job (TERMINATE_WHEN = PREEMPT).
                "KILL_PREEMPT" => {
                    j.kill_ordered.get_or_insert_with(|| "TERM_PREEMPT".into());
                }
                "RESUME" => j.resume_sent = false,
                "REQUEUE_PEND" | "REQUEUE_PSUSP" if j.state.is_started() => {
                    j.requeues.get_or_insert_with(Default::default).requeue_to =
                        if signal == "REQUEUE_PSUSP" {
                            status::PSUSP
                        } else {
                            status::PEND
                        };
                }
                _ => {}
            }
        }
    }

    /// JOB_SWITCH: the job to the end of its new queue.
    pub(super) fn apply_job_switch(&mut self, ev: &Event) {
        let Event::JobSwitch { key, queue, .. } = ev else {
            return;
        };
        self.next_order += 1;
        let order = self.next_order;
        let queue = self.queue_or_lost(queue);
        if let Some(j) = self.jobs.get_mut(key) {
            self.counts.apply(j, false);
            j.queue = queue;
            j.order = order;
            if j.state.is_pending() {
                j.pend_reasons = Arc::new(BTreeMap::from([(pend::SWITCHED, Vec::new())]));
            }
            self.counts.apply(j, true);
        }
    }

    /// JOB_MIGRATE: back to pending once killed, with its new candidate hosts.
    pub(super) fn apply_job_migrate(&mut self, ev: &Event) {
        let Event::JobMigrate { key, hosts, .. } = ev else {
            return;
        };
        // Back to PEND once sbatchd has killed it (as brequeue; a checkpointable
        // job after its checkpoint), with its new candidate hosts.
        if let Some(j) = self.jobs.get_mut(key)
            && j.state.is_started()
        {
            let r = j.requeues.get_or_insert_with(Default::default);
            r.requeue_to = status::PEND;
            r.requeue_reason = pend::MIG;
        }
        if !hosts.is_empty() {
            let m = crate::Modify {
                hosts: crate::modify::Change::Set(hosts.clone()),
                ..Default::default()
            };
            self.apply_modify(*key, &m);
        }
    }

    /// JOB_CLEAN: the job forgotten but for what dependencies need of it.
    pub(super) fn apply_job_clean(&mut self, ev: &Event) {
        let Event::JobClean { time, key } = ev else {
            return;
        };
        if let Some(j) = self.jobs.remove(key) {
            self.counts.apply(&j, false);
            self.num_remove_jobs += 1;
            self.gone.insert(
                *key,
                Gone {
                    user: j.sub.user.to_string(),
                    job_name: j.sub.job_name.to_string(),
                    seq: j.seq,
                    state: j.state,
                    exit_status: j.exit_status,
                    cleaned: *time,
                },
            );
            self.gone_order.push_back((*time, *key));
        }
        // Forget what is older than GONE_KEEP_SECS (decided by event times, so
        // replay forgets the same).
        while let Some(&(t, k)) = self.gone_order.front() {
            if t >= *time - GONE_KEEP_SECS {
                break;
            }
            self.gone_order.pop_front();
            if self.gone.get(&k).is_some_and(|g| g.cleaned == t) {
                self.gone.remove(&k);
            }
        }
    }
}
