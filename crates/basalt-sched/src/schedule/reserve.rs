//! How much of each resource a job's `rusage[]` holds: per task, per host or once per
//! job ([`Methods`]: lsb.resources ReservationUsage, RESOURCE_RESERVE_PER_SLOT), for
//! started jobs ([`reserved_total`]) and pending ones ([`pending_amounts`]).

use super::select;
use std::collections::BTreeMap;

impl crate::Sched {
    /// Each shared resource instance's value now: configured, or for a dynamic one the
    /// value the ELIM of one of its hosts reports (the first of its hosts, in the
    /// ResourceMap's order, whose LIM answers and reports the index), as `lsload -s`
    /// shows it. None when no host reports it.
    pub(crate) fn shared_values(&self) -> Vec<Option<f64>> {
        self.cfg
            .shared
            .iter()
            .map(|r| {
                r.value.or_else(|| {
                    r.hosts.iter().find_map(|name| {
                        let h = &self.hosts[self.host_idx(name)?];
                        if h.lim != crate::LimStatus::Ok {
                            return None;
                        }
                        h.load.get(&r.name).copied()
                    })
                })
            })
            .collect()
    }
}

/// What a started job's reservation `r` holds in all (`share` of it, by its duration and
/// decay), each resource by its [`Methods`]: per task, per host or once.
pub(super) fn reserved_total(
    r: &select::Reserve,
    share: f64,
    hosts: &[String],
    methods: Methods<'_>,
) -> Vec<(String, f64)> {
    use basalt_config::batch::ReserveMethod as M;
    let tasks = hosts.len().max(1) as f64;
    let mut distinct: Vec<&String> = hosts.iter().collect();
    distinct.sort();
    distinct.dedup();
    let per_host = distinct.len().max(1) as f64;
    r.amounts
        .iter()
        .map(|(n, a, _)| {
            let times = match methods.of(n) {
                M::PerTask => tasks,
                M::PerHost => per_host,
                M::PerJob => 1.0,
            };
            (n.clone(), a * share * times)
        })
        .collect()
}

/// Add `more` (amounts by resource) into `into`, summing a resource both name (a
/// compound job's terms reserve apart, its limits count them together).
pub(super) fn add_amounts(into: &mut Vec<(String, f64)>, more: Vec<(String, f64)>) {
    for (name, x) in more {
        match into.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => e.1 += x,
            None => into.push((name, x)),
        }
    }
}

/// What a pending job of `need` slots would reserve (once, or once per slot).
pub(super) fn pending_amounts(
    r: Option<&select::Reserve>,
    need: u32,
    methods: Methods<'_>,
) -> Vec<(String, f64)> {
    let Some(r) = r else {
        return Vec::new();
    };
    r.amounts
        .iter()
        .map(|(n, a, _)| {
            let times = match methods.of(n) {
                basalt_config::batch::ReserveMethod::PerTask => f64::from(need.max(1)),
                _ => 1.0,
            };
            (n.clone(), a * times)
        })
        .collect()
}

/// How each resource a job asks for in `rusage[]` is reserved: its ReservationUsage
/// METHOD (lsb.resources), else per task with `RESOURCE_RESERVE_PER_SLOT`, else per
/// host (LSF's default).
#[derive(Clone, Copy)]
pub(crate) struct Methods<'a> {
    per_slot: bool,
    by_resource: &'a BTreeMap<String, basalt_config::batch::ReserveMethod>,
}

impl Methods<'_> {
    pub(crate) fn of(&self, name: &str) -> basalt_config::batch::ReserveMethod {
        match self.by_resource.get(name) {
            Some(m) => *m,
            None if self.per_slot => basalt_config::batch::ReserveMethod::PerTask,
            None => basalt_config::batch::ReserveMethod::PerHost,
        }
    }
}

impl crate::SchedConfig {
    pub(crate) fn methods(&self) -> Methods<'_> {
        Methods {
            per_slot: self.reserve_per_slot,
            by_resource: &self.reserve_methods,
        }
    }
}
