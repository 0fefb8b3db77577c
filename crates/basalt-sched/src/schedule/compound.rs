//! Compound (`2*{select[bigmem]} + 2*{select[fs]}`) and alternative
//! (`{select[bigmem]} || {select[fs]}`) resource requirements in a pass;
//! [`basalt_config::compound`] reads their structure.
//!
//! A job asking one is placed part by part on a copy of the pass's state, all or
//! nothing: each term's slots on hosts its simple requirement (with its queue's RES_REQ)
//! selects, with the term's own `span[]`, `same[]`, `order[]` and `rusage[]`; a later
//! term sees what the earlier ones took. Alternatives are tried heaviest first (`@w`,
//! then as written) and the first that places the job is used. The requirement used is
//! the JOB_START's `effectiveResReq` (each term's slots written out, `2*{...} + 3*{...}`),
//! kept on the job while it runs and read back on replay: what a running job reserves
//! never changes with what is free later.
//!
//! Such a job does not preempt, backfill or reserve slots (SLOT_RESERVE): it starts when
//! every part fits at once (docs/admin-guide.md says so).

use super::fit::{JobFit, PassState, Shape, StaticWhy};
use super::{allocate, alts, asked, select};
use crate::{Millis, Sched, SchedError, Submission};
use basalt_config::compound::{self, Form};
use basalt_core::job::pend;
use std::collections::BTreeMap;

/// One way to place a job: its parts as (simple requirement, slots).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Way {
    pub(crate) parts: Vec<(String, u32)>,
    /// A compound requirement (its text names each term's slots); else one simple
    /// alternative.
    pub(crate) compound: bool,
}

impl Way {
    /// The requirement it uses, as logged and shown: `2*{select[a]} + 3*{select[b]}`,
    /// or a simple alternative's own text.
    pub(crate) fn text(&self) -> String {
        if !self.compound {
            return self.parts.first().map(|p| p.0.clone()).unwrap_or_default();
        }
        self.parts
            .iter()
            .map(|(s, n)| format!("{n}*{{{s}}}"))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// A compound's slots for a job of `need`: the sum of its multipliers when every term
/// has one, else `need`.
fn total(terms: &[compound::Term], need: u32) -> u32 {
    match compound::fixed_total(terms) {
        Ok(n) => u32::try_from(n).unwrap_or(u32::MAX),
        Err(_) => need.max(1),
    }
}

/// The ways a job of `need` slots asking `rr` can be placed, in the order they are
/// tried; empty when `rr` is simple or does not read.
pub(crate) fn ways(rr: &str, need: u32) -> Vec<Way> {
    let Ok(f) = compound::form(rr) else {
        return Vec::new();
    };
    if f == Form::Simple {
        return Vec::new();
    }
    compound::by_preference(&f)
        .into_iter()
        .filter_map(|(_, a)| {
            if !a.compound {
                let t = a.terms.into_iter().next()?;
                return Some(Way {
                    parts: vec![(t.simple, need.max(1))],
                    compound: false,
                });
            }
            let counts = compound::counts(&a.terms, total(&a.terms, need))?;
            Some(Way {
                parts: a
                    .terms
                    .into_iter()
                    .zip(counts)
                    .map(|(t, n)| (t.simple, n))
                    .collect(),
                compound: true,
            })
        })
        .collect()
}

/// A started job's parts: its used requirement's terms over its `slots` host entries
/// (in the order it was placed), as (simple requirement, first entry, slots). None when
/// the requirement used is simple (a simple alternative) or does not add up.
pub(crate) fn used_parts(used: &str, slots: usize) -> Option<Vec<(String, usize, usize)>> {
    let Ok(Form::Compound(terms)) = compound::form(used) else {
        return None;
    };
    let counts = compound::counts(&terms, u32::try_from(slots).ok()?)?;
    let mut at = 0usize;
    Some(
        terms
            .into_iter()
            .zip(counts)
            .map(|(t, n)| {
                let first = at;
                at += n as usize;
                (t.simple, first, n as usize)
            })
            .collect(),
    )
}

/// What placing a job in parts found.
pub(crate) enum Placed {
    /// Its hosts (a host index per slot, part after part), the requirement used, the
    /// pass's state with its slots taken and its reservations made, and what each part
    /// reserves on its hosts.
    Yes {
        alloc: Vec<usize>,
        used: String,
        st: Box<PassState>,
        reserves: Vec<(Vec<usize>, select::Reserve)>,
    },
    /// Why not: pending reasons with the hosts each applies to.
    No(BTreeMap<u32, Vec<String>>),
}

/// The job being placed, as [`Sched::place_multi`] reads it.
pub(crate) struct MultiJob<'a> {
    pub(crate) qi: usize,
    pub(crate) sub: &'a Submission,
    pub(crate) exclusive: bool,
    pub(crate) excluded: &'a [String],
    /// What the limits that are not per host let it have ([`JobFit::within`]).
    pub(crate) within: (u64, u32),
    /// Hosts of several types: its default `type==local` can matter.
    pub(crate) mixed_types: bool,
}

impl Sched {
    /// Check a submission's compound or alternative requirement: each term a usable
    /// simple requirement without `rusage[]` alternatives (`||`), each way's slots
    /// adding up. A compound whose every term has its multiplier asks for their sum:
    /// `-n` is set to it (a different `-n` is refused).
    pub(crate) fn check_multi(&self, s: &mut Submission) -> Result<(), SchedError> {
        let f = compound::form(&s.res_req).map_err(|_| SchedError::BadResReq)?;
        let alts: Vec<compound::Alternative> = match &f {
            Form::Simple => return Ok(()),
            Form::Compound(terms) => {
                if let Ok(sum) = compound::fixed_total(terms) {
                    let sum = u32::try_from(sum).map_err(|_| SchedError::BadResReq)?;
                    let given = s.num_processors > 1 || s.max_processors > 1;
                    if given && (s.num_processors != sum || s.max_processors.max(sum) != sum) {
                        return Err(SchedError::BadArgument(format!(
                            "The number of processors (-n) does not match the compound resource requirement's {sum}"
                        )));
                    }
                    s.num_processors = sum;
                    s.max_processors = sum;
                }
                vec![compound::Alternative {
                    terms: terms.clone(),
                    compound: true,
                    weight: None,
                }]
            }
            Form::Alternatives(a) => a.clone(),
        };
        if s.max_processors > s.num_processors.max(1) {
            return Err(SchedError::BadArgument(
                "A range of processors (-n min,max) cannot be used with a compound or alternative resource requirement"
                    .into(),
            ));
        }
        for a in &alts {
            for t in &a.terms {
                if !self.select_ok(&t.simple) {
                    return Err(SchedError::BadResReq);
                }
                let r = basalt_config::resreq::rusage_alternatives(&t.simple, self.cfg.unit_mb)
                    .map_err(|_| SchedError::BadResReq)?;
                if r.is_some_and(|r| r.len() > 1) {
                    return Err(SchedError::BadArgument(
                        "Alternative rusage (||) cannot be used in a compound or alternative resource requirement"
                            .into(),
                    ));
                }
            }
            if a.compound && compound::counts(&a.terms, total(&a.terms, s.num_processors)).is_none()
            {
                return Err(SchedError::BadArgument(format!(
                    "The compound resource requirement {} leaves its last term no slots of the {} asked (-n)",
                    compound::render(&a.terms),
                    s.num_processors.max(1)
                )));
            }
        }
        Ok(())
    }

    /// Place a job of a compound or alternative requirement: the first of `ways` whose
    /// every part fits, tried on a copy of `st`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn place_multi(
        &self,
        now: Millis,
        accept_ms: i64,
        job: &MultiJob<'_>,
        ways: &[Way],
        st: &PassState,
        statics: &[StaticWhy],
        track: (bool, bool),
        shared_of: &dyn Fn(usize, &str) -> Option<usize>,
    ) -> Placed {
        let q = &self.queues[job.qi];
        let sub = job.sub;
        let mut why: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        'ways: for way in ways {
            let mut trial = st.clone();
            let mut alloc: Vec<usize> = Vec::new();
            let mut reserves = Vec::new();
            for (simple, n) in &way.parts {
                let sel = self.selects(q, simple);
                let (local_host, default_local) =
                    self.local_host_of(sel.as_ref(), &sub.from_host, job.mixed_types);
                let span = sel
                    .as_ref()
                    .and_then(|s| s.span.clone())
                    .filter(|s| *s != allocate::Span::Free);
                let tile_of = |i: usize| span.as_ref().and_then(|s| self.tile_on(s, i));
                let tile = allocate::Tile::of(span.as_ref(), &tile_of);
                let fit = JobFit {
                    queue: q,
                    sub,
                    exclusive: job.exclusive,
                    most: *n,
                    sel: sel.as_ref(),
                    excluded: job.excluded,
                    asked: asked::Asked::of(&sub.asked_hosts),
                    within: job.within,
                    local: self.local_values(local_host),
                    default_type: self.local_type(local_host, default_local),
                };
                let mut shape = Shape::default();
                self.fill_shape(now, accept_ms, &fit, &trial, statics, &mut shape);
                let same: &[String] = sel.as_ref().map_or(&[], |s| &s.same);
                let same_values = |i: usize| allocate::values_for_same(&self.hosts[i], same);
                let same_key: Option<&dyn Fn(usize) -> Vec<String>> =
                    (!same.is_empty()).then_some(&same_values);
                let rs: &[select::Reserve] = sel.as_ref().map_or(&[], |s| &s.reserve);
                let Some((part, alt)) = alts::place(&shape, rs.len(), (*n, *n, tile), same_key)
                else {
                    for (code, hosts) in self.shape_reasons(&shape, span.is_some()) {
                        why.entry(code).or_default().extend(hosts);
                    }
                    continue 'ways;
                };
                for &i in &part {
                    trial.take(i, &q.name, &sub.user, track.0, track.1);
                    if job.exclusive {
                        trial.excl[i] = true;
                    }
                }
                if let Some(r) = rs.get(alt) {
                    trial.reserve(part.iter().copied(), r, 1.0, self.cfg.methods(), shared_of);
                    reserves.push((part.clone(), r.clone()));
                }
                alloc.extend(part);
            }
            return Placed::Yes {
                alloc,
                used: way.text(),
                st: Box::new(trial),
                reserves,
            };
        }
        for hosts in why.values_mut() {
            hosts.sort_unstable();
            hosts.dedup();
        }
        if why.is_empty() {
            why.insert(pend::RES_REQ, Vec::new());
        }
        Placed::No(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ways_in_the_order_tried_with_each_terms_slots() {
        let w = ways("2*{select[bigmem]} + 2*{select[fs]}", 4);
        assert_eq!(
            w,
            vec![Way {
                parts: vec![("select[bigmem]".into(), 2), ("select[fs]".into(), 2)],
                compound: true
            }]
        );
        assert_eq!(w[0].text(), "2*{select[bigmem]} + 2*{select[fs]}");
        // The last term takes what -n leaves.
        let w = ways("1*{select[a]} + {select[b]}", 5);
        assert_eq!(
            w[0].parts,
            vec![("select[a]".into(), 1), ("select[b]".into(), 4)]
        );
        assert_eq!(w[0].text(), "1*{select[a]} + 4*{select[b]}");
        // Alternatives: heaviest first; a simple one takes -n and is used as written.
        let w = ways("{select[a]} || {2*{select[b]} + {select[c]}}@2", 3);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].text(), "2*{select[b]} + 1*{select[c]}");
        assert_eq!(w[1].text(), "select[a]");
        assert_eq!(w[1].parts, vec![("select[a]".into(), 3)]);
        assert!(ways("select[a]", 1).is_empty());
        assert!(ways("2*{a", 1).is_empty());
    }

    #[test]
    fn a_used_requirement_splits_the_hosts_by_term() {
        assert_eq!(
            used_parts("2*{select[a]} + 3*{select[b]}", 5),
            Some(vec![("select[a]".into(), 0, 2), ("select[b]".into(), 2, 3)])
        );
        assert_eq!(used_parts("2*{select[a]} + 3*{select[b]}", 4), None);
        assert_eq!(used_parts("select[a]", 4), None);
    }
}
