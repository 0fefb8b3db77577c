//! The execution cluster's side of a forward (Phase III): taking other clusters' jobs
//! into receive-jobs queues, reporting them back, what the receive-jobs queues can take,
//! and giving back those not started within MAX_RSCHED_TIME.

use super::{
    McAccounts, RETURN_NOT_STARTED, RETURN_START_FAILED, RemoteJob, RemoteQueue, TERM_MC_INITFAIL,
    TERM_MC_RETURN,
};
use crate::{Caller, Event, JobKey, Millis, SchedError, Str, Submission, secs};
use basalt_core::job::{JobState, status};

impl crate::Sched {
    /// Phase III: take a job `cluster` forwarded (its job `src`, forward `attempt`) into
    /// the receive-jobs queue `sub.queue` — or say why not. A repeated forward gets the
    /// job the first one created: (id, whether it is new).
    ///
    /// It is submitted as the local user this cluster's rules give ([`Sched::mc_owner`]),
    /// with that user's uid here.
    pub fn mc_accept(
        &mut self,
        now: Millis,
        cluster: &str,
        src: JobKey,
        attempt: u32,
        accounts: &McAccounts,
        mut sub: Submission,
    ) -> Result<(u64, bool), SchedError> {
        let token = super::forwarded_token(cluster, src, attempt);
        if let Some(id) = self.forwarded_submission(cluster, &token) {
            return Ok((id, false));
        }
        let caller = self.mc_owner(cluster, &sub, accounts)?;
        let queue = sub.queue.to_string();
        if self.queue(&queue).is_none() {
            return Err(SchedError::NoQueue);
        }
        if !self.cfg.mc.receives(&queue, cluster) {
            return Err(SchedError::McNotReceiving);
        }
        let limit = self.cfg.mc.recv.get(&queue).and_then(|(_, n)| *n);
        if let Some(n) = limit
            && self.mc_pending_in(&queue) >= n
        {
            return Err(SchedError::McBacklog);
        }
        // What only the submission cluster knows does not travel: its hosts, its jobs.
        sub.asked_hosts.clear();
        sub.depend_cond = Str::EMPTY;
        sub.submit_token = token.into();
        if crate::array::parse(&sub.job_name).is_some() {
            return Err(SchedError::BadJobName);
        }
        let (id, _, _) = self.submit_any_token(now, &caller, sub)?;
        self.emit(Event::JobAccept {
            time: secs(now),
            key: (id, 0),
            cluster: cluster.to_owned(),
            src,
            attempt,
        });
        Ok((id, true))
    }

    /// Who a job `cluster` forwarded (`sub`, as the submission cluster sent it) runs as
    /// here: the first of [`McConfig::import_candidates`](super::McConfig::import_candidates)
    /// that exists in this cluster's password database, with its uid there (never the
    /// forwarded record's). Refused: no such user here; a user whose uid here is 0
    /// without LSF_ROOT_REX (whatever its name); in a personal cluster, anyone but its
    /// owner.
    pub fn mc_owner(
        &self,
        cluster: &str,
        sub: &Submission,
        accounts: &McAccounts,
    ) -> Result<Caller, SchedError> {
        let candidates = self.cfg.mc.import_candidates(cluster, &sub.user);
        let found = candidates.iter().find_map(|name| {
            accounts
                .found
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, uid)| *uid)
                .map(|uid| (name, uid))
        });
        let Some((user, uid)) = found else {
            return Err(SchedError::McNoUser {
                user: sub.user.to_string(),
                cluster: cluster.to_owned(),
                tried: candidates.join(" "),
            });
        };
        if uid == 0 && !accounts.root_rex {
            return Err(SchedError::McRoot { user: user.clone() });
        }
        if let Some(owner) = &accounts.only
            && owner != user
        {
            return Err(SchedError::McNotOwner {
                owner: owner.clone(),
            });
        }
        Ok(Caller {
            uid,
            user: user.clone(),
            host: sub.from_host.to_string(),
        })
    }

    /// MultiCluster jobs pending in `queue`.
    pub fn mc_pending_in(&self, queue: &str) -> u32 {
        self.counts.pending.get(queue).map_or(0, |p| {
            p.iter()
                .filter(|(_, k)| {
                    self.jobs.get(k).is_some_and(|j| {
                        j.state.is_pending()
                            && j.mc.as_ref().is_some_and(|m| !m.src_cluster.is_empty())
                    })
                })
                .count() as u32
        })
    }

    /// The job here that `cluster` forwarded as its `src` (the latest forward).
    pub fn mc_job_from(&self, cluster: &str, src: JobKey) -> Option<JobKey> {
        self.jobs
            .iter()
            .filter(|(_, j)| {
                j.mc.as_ref()
                    .is_some_and(|m| m.src_cluster == *cluster && (m.src_id, m.src_idx) == src)
            })
            .max_by_key(|(_, j)| j.mc.as_ref().map_or(0, |m| m.src_attempt))
            .map(|(k, _)| *k)
    }

    /// The jobs `cluster` forwarded here, as we report them to it.
    pub fn mc_jobs_for(&self, cluster: &str) -> Vec<RemoteJob> {
        self.jobs
            .iter()
            .filter_map(|(k, j)| {
                let m = j.mc.as_deref()?;
                if m.src_cluster != *cluster {
                    return None;
                }
                let returned = match j.term_reason.as_str() {
                    TERM_MC_RETURN if j.state.is_finished() => RETURN_NOT_STARTED,
                    TERM_MC_INITFAIL if j.state.is_finished() => RETURN_START_FAILED,
                    _ => 0,
                };
                Some(RemoteJob {
                    src: (m.src_id, m.src_idx),
                    attempt: m.src_attempt,
                    remote_id: k.0,
                    state: j.state.code(),
                    reasons: j.reasons,
                    subreasons: j.subreasons,
                    hosts: j.hosts.clone(),
                    start_time: j.start_time,
                    end_time: j.end_time,
                    exit_status: j.exit_status,
                    cpu_time: j.cpu_time,
                    term_reason: j.term_reason.to_string(),
                    returned,
                    usage: j.usage.as_deref().cloned(),
                })
            })
            .collect()
    }

    /// Our receive-jobs queues that take jobs from `cluster`, with their capacity.
    pub fn mc_info_for(&self, cluster: &str) -> Vec<RemoteQueue> {
        let free = self.free_slots_by_host();
        self.queues
            .iter()
            .filter(|q| self.cfg.mc.receives(&q.name, cluster))
            .map(|q| {
                let hosts: Vec<usize> = (0..self.hosts.len())
                    .filter(|&i| q.uses_host(&self.hosts[i].name))
                    .collect();
                let mut kinds: Vec<(String, Vec<String>)> = hosts
                    .iter()
                    .map(|&i| {
                        let h = &self.hosts[i];
                        let ty = h.statics.strings.get("type").cloned().unwrap_or_default();
                        let mut res = h.statics.booleans.clone();
                        res.sort();
                        (ty, res)
                    })
                    .collect();
                kinds.sort();
                kinds.dedup();
                let preemptable = self.preemptable_slots_of(q);
                let pending_slots = self.counts.pending.get(q.name.as_str()).map_or(0, |p| {
                    p.iter()
                        .filter_map(|(_, k)| self.jobs.get(k))
                        .map(|j| j.slots())
                        .sum()
                });
                RemoteQueue {
                    name: q.name.clone(),
                    priority: q.priority,
                    impt_jobbklg: self.cfg.mc.recv.get(&q.name).and_then(|(_, n)| *n),
                    mc_pending: self.mc_pending_in(&q.name),
                    free_slots: hosts.iter().map(|&i| free[i]).sum(),
                    preemptable_slots: preemptable,
                    pending_slots,
                    hosts: kinds,
                }
            })
            .collect()
    }

    /// Execution side, on every tick: MultiCluster jobs not started within
    /// MAX_RSCHED_TIME go back to their submission cluster.
    pub(crate) fn mc_tick(&mut self, now: Millis) {
        let Some(limit) = self.cfg.mc.max_rsched_ms else {
            return;
        };
        if self.cfg.mc.recv.is_empty() {
            return;
        }
        let late: Vec<JobKey> = self
            .cfg
            .mc
            .recv
            .keys()
            .filter_map(|q| self.counts.pending.get(q.as_str()))
            .flat_map(|p| p.iter().map(|(_, k)| *k))
            .filter(|k| {
                self.jobs.get(k).is_some_and(|j| {
                    j.state == JobState::Pend
                        && j.mc.as_ref().is_some_and(|m| {
                            !m.src_cluster.is_empty() && m.accepted_at * 1000 + limit <= now
                        })
                })
            })
            .collect();
        let t = secs(now);
        for key in late {
            self.mc_give_back(t, key, TERM_MC_RETURN);
        }
    }

    /// End a MultiCluster job here so that its submission cluster takes it back (no
    /// lsb.acct record: it did not run here).
    pub(crate) fn mc_give_back(&mut self, t: i64, key: JobKey, term: &str) {
        self.emit(Event::JobStatus {
            time: t,
            key,
            status: status::EXIT,
            reasons: 0,
            subreasons: 0,
            cpu_time: 0.0,
            end_time: t,
            usage: None,
            exit_status: 0,
            term_reason: term.to_owned(),
        });
    }

    /// Free slots of each host (0 for a host that takes no job now; 1 for one without a
    /// slot limit that does).
    fn free_slots_by_host(&self) -> Vec<u32> {
        self.hosts
            .iter()
            .map(|h| {
                if self.host_status(h) != crate::HostStatus::Ok {
                    return 0;
                }
                self.free_slots(h).unwrap_or(1)
            })
            .collect()
    }

    /// Slots held by running jobs of the queues `q` may preempt.
    fn preemptable_slots_of(&self, q: &crate::Queue) -> u32 {
        self.counts
            .started
            .iter()
            .filter_map(|k| self.jobs.get(k))
            .filter(|j| j.state == JobState::Run)
            .filter(|j| {
                self.queue(&j.queue)
                    .is_some_and(|lo| crate::schedule::preempt::preempts(q, lo).is_some())
            })
            .map(|j| j.slots())
            .sum()
    }

    /// A job that came from another cluster?
    pub(crate) fn came_from_remote(&self, key: JobKey) -> bool {
        self.jobs
            .get(&key)
            .and_then(|j| j.mc.as_ref())
            .is_some_and(|m| !m.src_cluster.is_empty())
    }
}
