//! The select and order parts of resource requirements in a scheduling pass (issue 20):
//! a queue's `RES_REQ` and a job's `-R` (`select[...]` sections and text outside any
//! section, LSF's old syntax) each keep the hosts whose values satisfy them, and the
//! job's `order[]` (else its queue's) ranks the hosts left ([`Selects::order_key`]). A host the queue's
//! select refuses gives the job "Queue's resource requirements not satisfied", one the
//! job's refuses "Job's resource requirements not satisfied"; a requirement no host
//! satisfies leaves the job pending with those reasons. A select part that does not
//! parse against this configuration (a resource lsf.shared no longer defines, say, after
//! a replay) satisfies no host. The values are the host's load indices as LIM last gave
//! them (run-queue lengths effective), `ncpus` and `cpuf`, and its name, type, model
//! and resources from the cluster file ([`crate::Host::statics`]).

use crate::{Host, Queue, Sched};
use basalt_config::select::{HostValues, NameKind, Select};
use basalt_core::job::pend;
use std::collections::BTreeMap;

/// A host's RESOURCES into `v`: a name alone is a boolean, `name=value` a numeric or
/// string value by the resource's kind (a value of an unknown resource is left out).
pub(crate) fn apply_resources(
    v: &mut HostValues,
    resources: &[String],
    kinds: &BTreeMap<String, NameKind>,
) {
    for r in resources {
        let (name, value) = match r.split_once('=') {
            Some((n, val)) => (n.trim(), Some(val.trim())),
            None => (r.trim(), None),
        };
        if name.is_empty() {
            continue;
        }
        match (kinds.get(name), value) {
            (Some(NameKind::Numeric), Some(val)) => {
                if let Ok(n) = val.parse::<f64>() {
                    v.numbers.insert(name.to_owned(), n);
                }
            }
            (Some(NameKind::String), Some(val)) => {
                v.strings.insert(name.to_owned(), val.to_owned());
            }
            (_, None) if !v.booleans.iter().any(|b| b == name) => {
                v.booleans.push(name.to_owned());
            }
            _ => {}
        }
    }
}

/// One select part: parsed, or not parseable (then no host satisfies it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Sel(Select),
    Bad,
}

impl Part {
    fn holds(&self, h: &HostValues) -> bool {
        match self {
            Part::Sel(s) => s.matches(h, None),
            Part::Bad => false,
        }
    }
}

/// How many `order[]` items decide between hosts (more are ignored).
pub(crate) const ORDER_KEYS: usize = 3;

/// The select parts a job is placed with and its `order[]` (None when neither the
/// queue nor the job has any).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selects {
    pub(crate) queue: Option<Part>,
    pub(crate) job: Option<Part>,
    /// The job's `order[]`, else its queue's: each name with true when a smaller value
    /// is better (an increasing index such as `r15s`, or a decreasing one reversed).
    pub(crate) order: Vec<(String, bool)>,
}

impl Selects {
    /// The pending reason a host of these values gives the job, if either part refuses
    /// it.
    pub(crate) fn refuses(&self, values: &HostValues) -> Option<u32> {
        if self.queue.as_ref().is_some_and(|p| !p.holds(values)) {
            return Some(pend::QUEUE_RES_REQ);
        }
        if self.job.as_ref().is_some_and(|p| !p.holds(values)) {
            return Some(pend::RES_REQ);
        }
        None
    }

    /// Where a host of these values comes in the job's `order[]`: smaller first; a host
    /// without a value of an item comes after those with one.
    pub(crate) fn order_key(&self, values: &HostValues) -> [i64; ORDER_KEYS] {
        let mut key = [0i64; ORDER_KEYS];
        for (slot, (name, smaller_better)) in key.iter_mut().zip(&self.order) {
            let canon = basalt_config::select::canonical(name);
            *slot = match values.numbers.get(&canon) {
                Some(v) if v.is_finite() => {
                    let scaled = (v * 1000.0).round() as i64;
                    if *smaller_better { scaled } else { -scaled }
                }
                _ => i64::MAX,
            };
        }
        key
    }
}

/// What a select expression sees of `h` now.
pub(crate) fn values_of(h: &Host) -> HostValues {
    let mut v = h.statics.clone();
    v.strings
        .entry("hname".to_owned())
        .or_insert_with(|| h.name.clone());
    for (name, value) in &h.load {
        let x = Sched::load_value(h, name).unwrap_or(*value);
        v.numbers.insert(name.clone(), x);
    }
    if h.ncpus > 0 {
        v.numbers.insert("ncpus".into(), f64::from(h.ncpus));
    }
    v.numbers.insert("cpuf".into(), h.cpu_factor);
    v
}

/// What a host's LIM says of it that does not change: its type and model, its
/// maximum memory, swap and /tmp (MB) and its resources.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LimStatic {
    pub host_type: String,
    pub model: String,
    pub max_mem_mb: u64,
    pub max_swp_mb: u64,
    pub max_tmp_mb: u64,
    pub resources: Vec<String>,
}

impl Sched {
    /// LIM's static information of a host, for resource requirements: it replaces what
    /// the cluster file let the core assume (type, model) and adds what only the host
    /// knows (maxmem, maxswp, maxtmp). A change makes a full pass due.
    pub fn lim_static(&mut self, host: &str, info: &LimStatic) {
        let Some(i) = self.host_idx(host) else {
            return;
        };
        let mut v = HostValues {
            name: self.hosts[i].name.clone(),
            booleans: vec!["server".to_owned()],
            ..Default::default()
        };
        v.strings.insert("hname".into(), self.hosts[i].name.clone());
        if !info.host_type.is_empty() {
            v.strings.insert("type".into(), info.host_type.clone());
        }
        if !info.model.is_empty() {
            v.strings.insert("model".into(), info.model.clone());
        }
        for (name, mb) in [
            ("maxmem", info.max_mem_mb),
            ("maxswp", info.max_swp_mb),
            ("maxtmp", info.max_tmp_mb),
        ] {
            if mb > 0 {
                v.numbers.insert(name.into(), mb as f64);
            }
        }
        apply_resources(&mut v, &info.resources, &self.cfg.res_kinds);
        if self.hosts[i].statics != v {
            self.hosts[i].statics = v;
            if self.counts.any_pending() {
                self.dirty = true;
                self.full_due = true;
            }
        }
    }

    /// Parse one requirement's select part with this configuration's resource kinds:
    /// None when it has none.
    pub(crate) fn select_part(&self, res_req: &str) -> Option<Part> {
        if res_req.trim().is_empty() {
            return None;
        }
        match Select::parse_with(res_req, self.cfg.res_kinds.clone()) {
            Ok(s) if s.is_empty() => None,
            Ok(s) => Some(Part::Sel(s)),
            Err(_) => Some(Part::Bad),
        }
    }

    /// The select parts and order of a job of queue `q` asking `res_req`.
    pub(crate) fn selects(&self, q: &Queue, res_req: &str) -> Option<Selects> {
        let queue = self.select_part(&q.res_req);
        let job = self.select_part(res_req);
        let order = basalt_config::resreq::order_keys(res_req)
            .ok()
            .flatten()
            .or_else(|| basalt_config::resreq::order_keys(&q.res_req).ok().flatten())
            .unwrap_or_default()
            .into_iter()
            .map(|(name, reversed)| {
                let smaller_better = self.smaller_is_better(&name) != reversed;
                (name, smaller_better)
            })
            .collect::<Vec<_>>();
        (queue.is_some() || job.is_some() || !order.is_empty()).then_some(Selects {
            queue,
            job,
            order,
        })
    }

    /// Is a smaller value of `name` the better host? Yes for the load indices that grow
    /// with the load (`r15s`, `ut`, `pg`, ...) and numeric resources lsf.shared marks
    /// INCREASING; no for free memory, swap, /tmp, idle time, the static sizes (`maxmem`,
    /// `ncpus`, `cpuf`, ...) and other resources.
    fn smaller_is_better(&self, name: &str) -> bool {
        let canon = basalt_config::select::canonical(name);
        match basalt_core::LoadIndex::from_name(&canon) {
            Some(i) => i.increasing(),
            None => self.cfg.res_increasing.contains(&canon),
        }
    }

    /// Is `res_req` usable with this configuration? (A submission whose select part
    /// does not parse, or whose `order[]` is not a list of names, is refused: "Bad
    /// resource requirement syntax".)
    pub(crate) fn select_ok(&self, res_req: &str) -> bool {
        !matches!(self.select_part(res_req), Some(Part::Bad))
            && basalt_config::resreq::order_keys(res_req).is_ok()
    }
}
