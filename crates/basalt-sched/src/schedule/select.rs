//! The select and order parts of resource requirements in a scheduling pass (issue 20):
//! a queue's `RES_REQ` and a job's `-R` (`select[...]` sections and text outside any
//! section, LSF's old syntax) each keep the hosts whose values satisfy them, and the
//! job's `order[]` (else its queue's) ranks the hosts left ([`Selects::order_key`]). A host the queue's
//! select refuses gives the job "Queue's resource requirements not satisfied", one the
//! job's refuses "Job's resource requirements not satisfied"; a requirement no host
//! satisfies leaves the job pending with those reasons; a host without enough left of
//! what the job reserves (`rusage[]`) gives "Job requirements for reserving resource
//! (name) not satisfied" ([`Reserve::lacks`]). A select part that does not
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
    /// Does a host of values `h` satisfy it? `local` is the submission host's values
    /// (for `type==local`).
    pub(crate) fn holds(&self, h: &HostValues, local: Option<&HostValues>) -> bool {
        match self {
            Part::Sel(s) => s.matches(h, local),
            Part::Bad => false,
        }
    }

    fn sel(&self) -> Option<&Select> {
        match self {
            Part::Sel(s) => Some(s),
            Part::Bad => None,
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
    /// The job's `order[]`, else its queue's: each canonical name with true when a
    /// smaller value is better (an increasing index such as `r15s`, or a decreasing one reversed).
    pub(crate) order: Vec<(String, bool)>,
    /// What the job reserves on its host (its `rusage[]` merged with its queue's): the
    /// `||` alternatives in order, one without them, none when it reserves nothing.
    pub(crate) reserve: Vec<Reserve>,
    /// `same[]`: the job's and its queue's resources all its hosts share.
    pub(crate) same: Vec<String>,
    /// `span[]`: the job's, else its queue's ([`crate::span_of`]).
    pub(crate) span: Option<super::allocate::Span>,
    /// A select part compares with `local` (the submission host's type or model).
    pub(crate) uses_local: bool,
    /// A select part names `type` or another string or Boolean resource: no default
    /// `type==local` ([`Select::names_string_or_boolean`]).
    pub(crate) names_type: bool,
}

/// A job's reservation: per resource, the amount; for how long; decaying or not.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reserve {
    /// (canonical name, amount, a larger value is the better host).
    pub(crate) amounts: Vec<(String, f64, bool)>,
    /// For each of `amounts`, the pending reason of a host that has not enough of it
    /// ([`Sched::reserve_reason`]).
    pub(crate) lack: Vec<u32>,
    pub(crate) duration_ms: Option<i64>,
    pub(crate) decay: bool,
}

impl Reserve {
    /// The pending reason a host of these values (what others reserved taken off) gives
    /// a job reserving this when it has not enough: "Job requirements for reserving
    /// resource (<name>) not satisfied" for a resource of the cluster's resource table
    /// ([`Reserve::lack`]), else the job's resource requirements.
    pub(crate) fn lacks(&self, values: &HostValues) -> Option<u32> {
        for (k, (name, amount, larger_better)) in self.amounts.iter().enumerate() {
            if *amount <= 0.0 || !*larger_better {
                continue;
            }
            let enough = values.numbers.get(name).is_some_and(|v| *v >= *amount);
            if !enough {
                return Some(self.lack.get(k).copied().unwrap_or(pend::RES_REQ));
            }
        }
        None
    }

    /// The share of the amounts reserved `run_ms` after the job started: 1 without a
    /// duration, 0 once it has passed, decreasing linearly with `decay=1`.
    pub(crate) fn share(&self, run_ms: i64) -> f64 {
        match self.duration_ms {
            None => 1.0,
            Some(d) if run_ms >= d => 0.0,
            Some(d) if self.decay && d > 0 => 1.0 - run_ms.max(0) as f64 / d as f64,
            Some(_) => 1.0,
        }
    }
}

/// Take what is reserved on a host from its values: less of what is better larger
/// (free memory, swap, /tmp, a licence count), more of what is better smaller.
pub(crate) fn apply_reserved(values: &mut HostValues, reserved: &BTreeMap<String, (f64, bool)>) {
    for (name, (amount, larger_better)) in reserved {
        if let Some(v) = values.numbers.get_mut(name) {
            if *larger_better {
                *v -= amount;
            } else {
                *v += amount;
            }
        }
    }
}

impl Selects {
    /// The pending reason a host of these values gives the job, if either part refuses
    /// it.
    pub(crate) fn refuses(&self, values: &HostValues, local: Option<&HostValues>) -> Option<u32> {
        if self.queue.as_ref().is_some_and(|p| !p.holds(values, local)) {
            return Some(pend::QUEUE_RES_REQ);
        }
        if self.job.as_ref().is_some_and(|p| !p.holds(values, local)) {
            return Some(pend::RES_REQ);
        }
        None
    }

    /// Which of the job's reservation alternatives a host of these values (what others
    /// reserved taken off) has enough for: bit `a` for alternative `a` (the first 64;
    /// bit 0 when the job reserves nothing). When none: the first alternative's reason
    /// ([`Reserve::lacks`]).
    pub(crate) fn reserve_fits(&self, values: &HostValues) -> Result<u64, u32> {
        let mut fits = 0u64;
        let mut why = None;
        for (a, r) in self.reserve.iter().take(super::alts::MAX_ALTS).enumerate() {
            match r.lacks(values) {
                None => fits |= 1 << a,
                Some(code) => {
                    why.get_or_insert(code);
                }
            }
        }
        match why {
            None if self.reserve.is_empty() => Ok(1),
            Some(code) if fits == 0 => Err(code),
            _ => Ok(fits),
        }
    }

    /// Where a host of these values comes in the job's `order[]`: smaller first; a host
    /// without a value of an item comes after those with one.
    pub(crate) fn order_key(&self, values: &HostValues) -> [i64; ORDER_KEYS] {
        let mut key = [0i64; ORDER_KEYS];
        for (slot, (name, smaller_better)) in key.iter_mut().zip(&self.order) {
            *slot = match values.numbers.get(name) {
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
    v.strings.insert("hname".to_owned(), h.name.clone());
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

impl LimStatic {
    /// What select expressions see of host `name` from this information (a server host:
    /// the boolean `server`; `hname` is added by [`values_of`]); resources by `kinds`.
    pub(crate) fn values(&self, name: &str, kinds: &BTreeMap<String, NameKind>) -> HostValues {
        let mut v = HostValues {
            name: name.to_owned(),
            booleans: vec!["server".to_owned()],
            ..Default::default()
        };
        if !self.host_type.is_empty() {
            v.strings.insert("type".into(), self.host_type.clone());
        }
        if !self.model.is_empty() {
            v.strings.insert("model".into(), self.model.clone());
        }
        for (n, mb) in [
            ("maxmem", self.max_mem_mb),
            ("maxswp", self.max_swp_mb),
            ("maxtmp", self.max_tmp_mb),
        ] {
            if mb > 0 {
                v.numbers.insert(n.into(), mb as f64);
            }
        }
        apply_resources(&mut v, &self.resources, kinds);
        v
    }
}

impl Sched {
    /// LIM's static information of a host, for resource requirements: it replaces what
    /// the cluster file let the core assume (type, model) and adds what only the host
    /// knows (maxmem, maxswp, maxtmp). A change makes a full pass due.
    pub fn lim_static(&mut self, host: &str, info: &LimStatic) {
        let Some(i) = self.host_idx(host) else {
            return;
        };
        if self.hosts[i].lim_static.as_ref() == Some(info) {
            return;
        }
        self.hosts[i].lim_static = Some(info.clone());
        let v = info.values(&self.hosts[i].name, &self.cfg.res_kinds);
        if self.hosts[i].statics != v {
            self.host_types.change(
                self.hosts[i]
                    .statics
                    .strings
                    .get("type")
                    .map(String::as_str),
                v.strings.get("type").map(String::as_str),
            );
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
                let canon = basalt_config::select::canonical(&name);
                let smaller_better = self.smaller_is_better(&canon) != reversed;
                (canon, smaller_better)
            })
            .collect::<Vec<_>>();
        let reserve = self.reservations(q, res_req);
        let same: Vec<String> = super::allocate::same_of(res_req)
            .into_iter()
            .chain(super::allocate::same_of(&q.res_req))
            .collect();
        let span = crate::span_of(res_req).or_else(|| crate::span_of(&q.res_req));
        let parts = || queue.iter().chain(job.iter()).filter_map(Part::sel);
        let uses_local = parts().any(Select::uses_local);
        let names_type = parts().any(Select::names_string_or_boolean);
        (queue.is_some()
            || job.is_some()
            || !order.is_empty()
            || !reserve.is_empty()
            || !same.is_empty()
            || span.is_some())
        .then_some(Selects {
            queue,
            job,
            order,
            reserve,
            same,
            span,
            uses_local,
            names_type,
        })
    }

    /// Is a smaller value of `name` the better host? Yes for the load indices that grow
    /// with the load (`r15s`, `ut`, `pg`, ...) and numeric resources lsf.shared marks
    /// INCREASING; no for free memory, swap, /tmp, idle time, the static sizes (`maxmem`,
    /// `ncpus`, `cpuf`, ...) and other resources.
    pub(crate) fn smaller_is_better(&self, name: &str) -> bool {
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
            && basalt_config::resreq::rusage_alternatives(res_req, self.cfg.unit_mb).is_ok()
    }
}
