//! What a pass knows of the started jobs and hosts before it places anything: which
//! started jobs it visits one by one (the others' slots come from the counters), the
//! host index and whether hosts differ in type (kept in `Sched`), and, in tests, the
//! check that the counters' slots are those of the started jobs.

use super::{FastMap, fast_map};
use crate::{JobKey, Sched};
#[cfg(test)]
use basalt_core::job::{JobState, sub, susp};
use std::collections::BTreeMap;

impl Sched {
    /// The started jobs a pass visits one by one: all of them (`all`), else those that
    /// hold more than host and queue slots ([`crate::counts::Counts::is_special`]) and
    /// every started job of a queue with a per-user job limit (UJOB_LIMIT: its users'
    /// slots are counted) or a RES_REQ (its jobs may reserve resources).
    pub(super) fn started_to_visit(&self, all: bool) -> Vec<&JobKey> {
        if all {
            return self.counts.started.iter().collect();
        }
        let whole: Vec<&str> = self
            .queues
            .iter()
            .filter(|q| q.ujob_limit.is_some() || !q.res_req.is_empty())
            .map(|q| q.name.as_str())
            .collect();
        let mut out: Vec<&JobKey> = whole
            .iter()
            .filter_map(|q| self.counts.started_in.get(*q))
            .flatten()
            .collect();
        out.extend(self.counts.special.iter().filter(|k| {
            self.jobs
                .get(k)
                .is_some_and(|j| !whole.contains(&j.queue.as_ref()))
        }));
        out
    }
}

/// Each host's index by its name, exactly as the hosts are named (what a pass looks
/// started jobs' hosts up in).
pub(crate) fn pass_index(hosts: &[crate::Host]) -> FastMap<String, usize> {
    let mut m = fast_map();
    for (i, h) in hosts.iter().enumerate() {
        m.entry(h.name.clone()).or_insert(i);
    }
    m
}

/// How many hosts are of each type (a host with no type is not counted), kept as LIM's
/// static information changes a host's type: whether the hosts are of more than one
/// type (a job's default `type==local` can then leave some out) is then one look, not a
/// scan of every host for each host whose static information changed — 10,000 × 10,000
/// comparisons, half of a restarted mbatchd's first seconds at 10,000 hosts.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostTypes(BTreeMap<String, usize>);

impl HostTypes {
    pub(crate) fn of(hosts: &[crate::Host]) -> HostTypes {
        let mut t = HostTypes::default();
        for h in hosts {
            t.change(None, h.statics.strings.get("type").map(String::as_str));
        }
        t
    }

    /// A host's type changed from `old` to `new`.
    pub(crate) fn change(&mut self, old: Option<&str>, new: Option<&str>) {
        if old == new {
            return;
        }
        if let Some(o) = old
            && let Some(n) = self.0.get_mut(o)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.0.remove(o);
            }
        }
        if let Some(n) = new {
            *self.0.entry(n.to_owned()).or_insert(0) += 1;
        }
    }

    /// Whether the hosts are of more than one type.
    pub(crate) fn mixed(&self) -> bool {
        self.0.len() > 1
    }
}

#[cfg(test)]
impl Sched {
    /// The slots and exclusive hosts a pass took from the counters equal those counted
    /// over every started job (every scheduling test checks it at every pass).
    pub(super) fn check_counted_slots(
        &self,
        used: &[u32],
        excl: &[bool],
        q_used: &BTreeMap<String, u32>,
    ) {
        let nh = self.hosts.len();
        let (mut u, mut x, mut q) = (vec![0u32; nh], vec![false; nh], BTreeMap::new());
        for key in &self.counts.started {
            let Some(j) = self.jobs.get(key) else {
                continue;
            };
            let preempted = matches!(j.state, JobState::Ssusp | JobState::Ususp)
                && j.reasons & susp::MBD_PREEMPT != 0;
            for h in &j.hosts {
                let Some(&i) = self.pass_index.get(h.as_str()) else {
                    continue;
                };
                if !preempted {
                    u[i] += 1;
                    x[i] |= j.sub.options & sub::EXCLUSIVE != 0;
                }
            }
            *q.entry(j.queue.to_string()).or_insert(0u32) += j.slots();
        }
        assert_eq!(used, &u[..], "slots used by host: counters vs started jobs");
        assert_eq!(excl, &x[..], "exclusive hosts: counters vs started jobs");
        assert_eq!(q_used, &q, "slots used by queue: counters vs started jobs");
    }
}
