//! `badmin showstatus`: what mbatchd counts now — its available hosts, CPUs and job
//! slots, its batch hosts by status, its jobs by state, its users.

use crate::{HostStatus, Sched};
use basalt_core::job::JobState;
use std::collections::BTreeSet;

/// What [`Sched::status_view`] counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusView {
    /// Batch hosts available now (LIM and sbatchd answer: not `unavail` nor `unreach`).
    pub servers: u32,
    /// Their CPUs (as LIM counts them).
    pub cpus: u32,
    /// Their job slots: each host's `MXJ`, its CPUs where it sets no limit.
    pub slots: u32,
    /// Batch hosts by bhosts status.
    pub hosts_ok: u32,
    pub hosts_closed: u32,
    pub hosts_unreach: u32,
    pub hosts_unavail: u32,
    /// The jobs mbatchd holds (finished ones until `CLEAN_PERIOD`) by state: running
    /// (RUN, and UNKWN: running as far as anyone knows), suspended (SSUSP, USUSP),
    /// pending (PEND, PSUSP, WAIT), finished (DONE, EXIT); ZOMBI counts as running.
    pub jobs_run: u32,
    pub jobs_susp: u32,
    pub jobs_pend: u32,
    pub jobs_finished: u32,
    /// Users known: those with jobs here and those lsb.users names.
    pub users: u32,
    /// User groups of lsb.users.
    pub user_groups: u32,
    /// Users with unfinished jobs.
    pub active_users: u32,
}

impl Sched {
    /// What `badmin showstatus` shows of the core now.
    pub fn status_view(&self) -> StatusView {
        let mut v = self.status_hosts();
        self.status_jobs(&mut v);
        v
    }

    /// The hosts' part of [`Sched::status_view`] (O(hosts): what the peaks follow each
    /// second, without a walk over every job).
    pub fn status_hosts(&self) -> StatusView {
        let mut v = StatusView::default();
        for h in &self.hosts {
            let status = self.host_status(h);
            match status {
                HostStatus::Ok => v.hosts_ok += 1,
                HostStatus::Closed(_) => v.hosts_closed += 1,
                HostStatus::Unreach => v.hosts_unreach += 1,
                HostStatus::Unavail => v.hosts_unavail += 1,
            }
            if matches!(status, HostStatus::Ok | HostStatus::Closed(_)) {
                v.servers += 1;
                v.cpus += h.ncpus;
                v.slots += h.max_slots().unwrap_or(h.ncpus);
            }
        }
        v
    }

    /// The jobs' and users' part of [`Sched::status_view`].
    fn status_jobs(&self, v: &mut StatusView) {
        let mut users: BTreeSet<&str> = BTreeSet::new();
        let mut active: BTreeSet<&str> = BTreeSet::new();
        for j in self.jobs.values() {
            users.insert(&j.sub.user);
            match self.shown_state(j) {
                JobState::Run | JobState::Unkwn | JobState::Zombi => v.jobs_run += 1,
                JobState::Ssusp | JobState::Ususp => v.jobs_susp += 1,
                JobState::Done | JobState::Exit => v.jobs_finished += 1,
                JobState::Pend | JobState::Psusp | JobState::Wait => v.jobs_pend += 1,
            }
            if !j.state.is_finished() {
                active.insert(&j.sub.user);
            }
        }
        for name in self.cfg.user_rows.keys() {
            if name != "default" && !self.cfg.user_groups.contains_key(name) {
                users.insert(name);
            }
        }
        v.users = users.len() as u32;
        v.active_users = active.len() as u32;
        v.user_groups = self.cfg.user_groups.len() as u32;
    }
}

#[cfg(test)]
mod tests {
    use crate::StatusView;
    use crate::tests::{T0, alice, cmd, up};

    /// Issue 50 item 10: `badmin showstatus` counts the available hosts, their CPUs and
    /// slots, the hosts by status and the jobs by state.
    #[test]
    fn status_counts_hosts_jobs_and_users() {
        let mut s = up();
        let n = s.hosts.len() as u32;
        s.submit(T0, &alice(), cmd("a")).expect("submit");
        s.submit(T0, &alice(), cmd("b")).expect("submit");
        s.schedule(T0);
        s.dispatch_accepted(T0, (1, 0), 1, 100, 100);
        s.take_effects();
        let name = s.hosts[0].name.clone();
        s.host_ctl(T0, &crate::tests::admin(), 2, &name, "")
            .expect("close");
        let v = s.status_view();
        // Every host up with 2 CPUs, MXJ = ! (its CPUs).
        assert_eq!((v.servers, v.cpus, v.slots), (n, 2 * n, 2 * n), "{v:?}");
        assert_eq!(
            (v.hosts_ok + v.hosts_closed, v.hosts_closed),
            (n, 1),
            "{v:?}"
        );
        assert_eq!(v.jobs_run + v.jobs_pend, 2, "{v:?}");
        assert!(v.jobs_run >= 1, "{v:?}");
        assert_eq!((v.users, v.active_users), (1, 1), "{v:?}");
        assert_ne!(v, StatusView::default());
    }
}
