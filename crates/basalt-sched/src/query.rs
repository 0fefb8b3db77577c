//! Read-only views for the query commands (bjobs, bhosts, bqueues): filters, listing
//! order, positions, slot counts, host status.

use crate::{ClosedReason, Host, HostStatus, Job, JobQuery, LimStatus, Queue, Sched, limits};
use basalt_core::job::JobState;
use std::collections::{BTreeSet, HashMap};

impl Sched {
    /// The state a user sees: UNKWN for started jobs on hosts that cannot be reached.
    pub fn shown_state(&self, j: &Job) -> JobState {
        if j.state.is_started()
            && let Some(h) = j.hosts.first()
            && let Some(host) = self
                .host_idx(h)
                .map(|i| &self.hosts[i])
                .filter(|x| &x.name == h)
            && matches!(
                self.host_status(host),
                HostStatus::Unreach | HostStatus::Unavail
            )
        {
            return JobState::Unkwn;
        }
        j.state
    }

    /// Jobs matching a query, in job-id order, and the explicit ids that matched nothing.
    pub fn query(&self, q: &JobQuery) -> (Vec<&Job>, Vec<(u64, Option<u32>)>) {
        let mut out = Vec::new();
        let mut not_found = Vec::new();
        let matches = |j: &Job, explicit: bool| -> bool {
            if let Some(u) = &q.user
                && &j.sub.user != u
            {
                return false;
            }
            if let Some(qn) = &q.queue
                && &j.queue != qn
            {
                return false;
            }
            if let Some(h) = &q.host
                && !j.hosts.iter().any(|x| basalt_core::same_host(x, h))
            {
                return false;
            }
            if let Some(p) = &q.job_name
                && !wildcard(p, &j.display_name())
                && !wildcard(p, &j.sub.job_name)
                && !(j.is_element() && wildcard(p, j.array_name()))
            {
                return false;
            }
            let st = self.shown_state(j);
            if q.states == 0 {
                explicit || !st.is_finished()
            } else {
                q.states & st.code() != 0
            }
        };
        if q.ids.is_empty() {
            for j in self.jobs.values().map(|j| &**j) {
                if matches(j, false) {
                    out.push(j);
                }
            }
        } else {
            let mut seen = BTreeSet::new();
            for (id, idx) in &q.ids {
                let mut any = false;
                for j in self
                    .jobs
                    .range((*id, 0)..=(*id, u32::MAX))
                    .map(|(_, j)| &**j)
                    .filter(|j| idx.is_none_or(|i| j.idx == i))
                {
                    any = true;
                    if matches(j, true) && seen.insert(j.key()) {
                        out.push(j);
                    }
                }
                if !any {
                    not_found.push((*id, *idx));
                }
            }
        }
        self.listing_order(&mut out);
        (out, not_found)
    }

    /// LSF's bjobs order: started jobs, then pending jobs in the order they are considered
    /// for dispatch (queue priority, highest first, then queue name, then the position that
    /// submission, bswitch, btop and bbot give), then finished jobs; by job id within the
    /// started and the finished.
    pub fn listing_order(&self, jobs: &mut [&Job]) {
        let mut by_name: Vec<&Queue> = self.queues.iter().collect();
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        let qrank: HashMap<&str, (u32, usize)> = by_name
            .iter()
            .enumerate()
            .map(|(r, q)| (q.name.as_str(), (u32::MAX - q.priority, r)))
            .collect();
        jobs.sort_by_cached_key(|j| {
            if j.state.is_pending() {
                let (prio, name) = qrank
                    .get(j.queue.as_str())
                    .copied()
                    .unwrap_or((u32::MAX, usize::MAX));
                (1u8, prio, name, j.order, j.key())
            } else if j.state.is_finished() {
                (2, 0, 0, 0, j.key())
            } else {
                (0, 0, 0, 0, j.key())
            }
        });
    }

    /// The limits a job runs with: its own (`bsub -W -c -M ...`), else its queue's default,
    /// else its queue's maximum (lsb.queues `RUNLIMIT = [default] max` and the like).
    pub fn effective_rlimits(&self, j: &Job) -> [i64; 11] {
        // The job's own, else its application profile's, else its queue's.
        let own = match self.app_of(&j.sub) {
            Some(a) => limits::effective(&j.sub.rlimits, &a.rlimits),
            None => *j.sub.rlimits,
        };
        match self.queue(&j.queue) {
            Some(q) => limits::effective(&own, &q.rlimits),
            None => own,
        }
    }

    /// The application profile of a submission (`bsub -app`), if lsb.applications has it.
    pub fn app_of(&self, sub: &crate::Submission) -> Option<&crate::AppProfile> {
        match sub.app() {
            "" => None,
            name => self.cfg.apps.get(name),
        }
    }

    /// The resource requirement a job is placed with: its `-R`, else its application
    /// profile's RES_REQ (the queue's RES_REQ is merged in by the pass).
    pub fn job_res_req(&self, sub: &crate::Submission) -> crate::Str {
        if !sub.res_req.is_empty() {
            return sub.res_req.clone();
        }
        self.app_of(sub)
            .filter(|a| !a.res_req.is_empty())
            .map_or(crate::Str::EMPTY, |a| crate::Str::from(a.res_req.as_str()))
    }

    /// Position (1-based) of a pending job in its queue.
    pub fn position(&self, j: &Job) -> u32 {
        if !j.state.is_pending() {
            return 0;
        }
        // The pending jobs of its queue with a lower order.
        let below = self
            .counts
            .pending
            .get(j.queue.as_str())
            .map_or(0, |set| set.rank(&(j.order, (0, 0))));
        1 + below as u32
    }

    /// Slots used on a host by started jobs.
    pub fn used_slots(&self, host: &str) -> u32 {
        self.counts.hosts.get(host).map_or(0, |t| t.used)
    }

    /// Slots of a host neither used by started jobs nor reserved by pending ones (None:
    /// it has no slot limit).
    pub fn free_slots(&self, h: &Host) -> Option<u32> {
        h.max_slots()
            .map(|max| max.saturating_sub(self.used_slots(&h.name) + h.rsv_slots))
    }

    /// (njobs, run, ssusp, ususp) slots on a host.
    pub fn host_counts(&self, host: &str) -> (u32, u32, u32, u32) {
        self.counts
            .hosts
            .get(host)
            .map_or((0, 0, 0, 0), |t| (t.used, t.run, t.ssusp, t.ususp))
    }

    /// (njobs, pend, run, ssusp, ususp) slots of a queue.
    pub fn queue_counts(&self, queue: &str) -> (u32, u32, u32, u32, u32) {
        self.counts.queues.get(queue).map_or((0, 0, 0, 0, 0), |t| {
            (t.njobs, t.pend, t.run, t.ssusp, t.ususp)
        })
    }

    /// bhosts status of a host.
    pub fn host_status(&self, h: &Host) -> HostStatus {
        if h.lim == LimStatus::Unavail {
            return HostStatus::Unavail;
        }
        if h.sbd_failed {
            return HostStatus::Unreach;
        }
        if h.closed_adm {
            return HostStatus::Closed(ClosedReason::Adm);
        }
        if h.lim == LimStatus::Unknown {
            return HostStatus::Closed(ClosedReason::Lim);
        }
        if self.counts.hosts.get(&h.name).is_some_and(|t| t.excl > 0) {
            return HostStatus::Closed(ClosedReason::Excl);
        }
        if h.lim_locked {
            return HostStatus::Closed(ClosedReason::Lock);
        }
        if !self.window_open(h.dispatch_window.as_ref()) {
            return HostStatus::Closed(ClosedReason::Wind);
        }
        // Full: every slot used, or reserved for a pending parallel job (bhosts counts
        // those in NJOBS too).
        if self.free_slots(h) == Some(0) {
            return HostStatus::Closed(ClosedReason::Full);
        }
        if Self::beyond_sched(h, &h.load_sched).is_some() {
            return HostStatus::Closed(ClosedReason::Busy);
        }
        HostStatus::Ok
    }
}

/// `*` wildcard match.
pub fn wildcard(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(pos) => rest = &rest[pos + p.len()..],
                None => return false,
            }
        }
    }
    true
}
