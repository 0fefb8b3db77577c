//! `rusage[]` alternatives (LSF 10.1's `rusage[mem=20000 || mem=10000:swp=10000]`): a
//! pending job is placed with the first alternative its host has enough for (after what
//! other jobs reserve there, and within the lsb.resources limits), and reserves that
//! one for as long as it runs. A job on several hosts uses one alternative on all of
//! them: the first that fits on every host chosen. The alternative is logged in the
//! JOB_START's `effectiveResReq` (`rusage[mem=10000MB:swp=10000MB]`, only for a job
//! with alternatives) and found again on replay ([`Sched::rusage_alt_of`]), so a
//! restarted mbatchd keeps reserving it.

use super::allocate::allocate;
use super::fit::{Cand, Shape};
use super::select::Reserve;
use crate::{Job, Queue, Sched};
use basalt_config::resreq::{Rusage, rusage_alternatives, rusage_of};
use basalt_core::job::pend;

/// How many alternatives a pass considers (a host's fitting ones are a bit set).
pub(crate) const MAX_ALTS: usize = 64;

impl Sched {
    /// What a job of queue `q` asking `res_req` reserves: each alternative of its
    /// `rusage[]` merged with its queue's (the job's amount wins per resource, the
    /// queue's other resources are kept, the queue's duration and decay apply when the
    /// job gives none). When only the queue's `RES_REQ` has alternatives, each of them
    /// merged with the job's `rusage[]`; when both have, the job's, each merged with the
    /// queue's first. Empty when nothing is reserved (or neither parses); an alternative
    /// may reserve nothing when another does.
    pub(crate) fn reservations(&self, q: &Queue, res_req: &str) -> Vec<Reserve> {
        let unit = self.cfg.unit_mb;
        let job = rusage_alternatives(res_req, unit)
            .ok()
            .flatten()
            .unwrap_or_default();
        let queue = rusage_alternatives(&q.res_req, unit)
            .ok()
            .flatten()
            .unwrap_or_default();
        let alts: Vec<Reserve> = if job.len() > 1 || queue.is_empty() {
            job.iter()
                .map(|j| self.merged(Some(j), queue.first()))
                .collect()
        } else {
            queue
                .iter()
                .map(|qr| self.merged(job.first(), Some(qr)))
                .collect()
        };
        if alts.iter().all(|r| r.amounts.is_empty()) {
            return Vec::new();
        }
        alts
    }

    /// One alternative: the job's `rusage[]` over its queue's.
    fn merged(&self, job: Option<&Rusage>, queue: Option<&Rusage>) -> Reserve {
        let empty = Rusage::default();
        let job = job.unwrap_or(&empty);
        let queue = queue.unwrap_or(&empty);
        let mut amounts: Vec<(String, f64)> = job.amounts.clone();
        for (n, v) in &queue.amounts {
            if !amounts.iter().any(|(m, _)| m == n) {
                amounts.push((n.clone(), *v));
            }
        }
        let job_timed = job.duration_min.is_some();
        let duration_min = job.duration_min.or(queue.duration_min);
        let decay = if job_timed {
            job.decay
        } else {
            queue.decay || job.decay
        };
        let amounts: Vec<(String, f64, bool)> = amounts
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(n, v)| {
                let canon = basalt_config::select::canonical(&n);
                let larger_better = !self.smaller_is_better(&canon);
                (canon, v, larger_better)
            })
            .collect();
        let lack = amounts
            .iter()
            .map(|(name, _, _)| self.reserve_reason(name))
            .collect();
        Reserve {
            amounts,
            lack,
            duration_ms: duration_min.map(|m| (m * 60_000.0) as i64),
            decay,
        }
    }

    /// The pending reason of a host that has not enough of `name` (canonical) for a
    /// job's `rusage[]`: LSF's PEND_HOST_JOB_RUSAGE + the resource's index in the
    /// cluster's resource table — the built-in load indices, then lsf.shared's resources
    /// in their order ([`crate::SchedConfig::res_table`]) — "Job requirements for
    /// reserving resource (name) not satisfied"; a resource outside the table (or past
    /// LSF's range of these reasons) gives the job's resource requirements. Worked out
    /// once per requirement a pass reads, not per host or job.
    pub(crate) fn reserve_reason(&self, name: &str) -> u32 {
        let builtin = basalt_core::BUILTIN_INDICES.len();
        let index = basalt_core::BUILTIN_INDICES
            .iter()
            .position(|i| i.name() == name)
            .or_else(|| {
                self.cfg
                    .res_table
                    .iter()
                    .position(|r| r == name)
                    .map(|p| builtin + p)
            });
        index
            .and_then(|i| u32::try_from(i).ok())
            .map(|i| pend::RESERVE_BASE + i)
            .filter(|c| *c < pend::RESERVE_END)
            .unwrap_or(pend::RES_REQ)
    }

    /// Which of `j`'s alternatives a JOB_START's `effectiveResReq` names: the one that
    /// reserves the same (0 when the text is empty — a job without alternatives, a log
    /// written before they were kept — has no `rusage[]`, or matches none of them).
    pub(crate) fn rusage_alt_of(&self, j: &Job, effective: &str) -> u32 {
        if effective.trim().is_empty() {
            return 0;
        }
        let Some(q) = self.queue(&j.queue) else {
            return 0;
        };
        let alts = self.reservations(q, &self.job_res_req(&j.sub));
        if alts.len() < 2 {
            return 0;
        }
        let Ok(Some(r)) = rusage_of(effective, self.cfg.unit_mb) else {
            return 0;
        };
        let got = self.merged(Some(&r), None);
        alts.iter()
            .take(MAX_ALTS)
            .position(|a| a.same(&got))
            .map_or(0, |p| p as u32)
    }

    /// The `effectiveResReq` of a started job's JOB_START: the alternative it reserves,
    /// empty when it has no alternatives.
    pub(crate) fn effective_rusage(&self, j: &Job) -> String {
        if let Some(used) = &j.used_req {
            return used.to_string();
        }
        let Some(q) = self.queue(&j.queue) else {
            return String::new();
        };
        let alts = self.reservations(q, &self.job_res_req(&j.sub));
        effective_text(&alts, j.rusage_alt as usize)
    }
}

/// The `effectiveResReq` of a job started with alternative `alt` of `alts`: empty unless
/// there are several.
pub(crate) fn effective_text(alts: &[Reserve], alt: usize) -> String {
    if alts.len() < 2 {
        return String::new();
    }
    alts.get(alt).map(Reserve::effective).unwrap_or_default()
}

impl Reserve {
    /// As an `rusage[]` section that reads back the same whatever `LSF_UNIT_FOR_LIMITS`
    /// is (sizes in MB, the duration in minutes).
    pub(crate) fn effective(&self) -> String {
        let mut items: Vec<String> = self
            .amounts
            .iter()
            .map(|(n, a, _)| {
                if matches!(n.as_str(), "mem" | "swp" | "tmp") {
                    format!("{n}={a}MB")
                } else {
                    format!("{n}={a}")
                }
            })
            .collect();
        if let Some(ms) = self.duration_ms {
            items.push(format!("duration={}", ms as f64 / 60_000.0));
        }
        if self.decay {
            items.push("decay=1".to_owned());
        }
        format!("rusage[{}]", items.join(":"))
    }

    /// Does `other` reserve the same (amounts to a relative 1e-9, duration to a
    /// millisecond)?
    fn same(&self, other: &Reserve) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
        self.decay == other.decay
            && match (self.duration_ms, other.duration_ms) {
                (None, None) => true,
                (Some(a), Some(b)) => (a - b).abs() <= 1,
                _ => false,
            }
            && self.amounts.len() == other.amounts.len()
            && self.amounts.iter().all(|(n, a, _)| {
                other
                    .amounts
                    .iter()
                    .any(|(m, b, _)| m == n && close(*a, *b))
            })
    }
}

/// Hosts for a job of `(need, most, span)` among `shape`'s candidates, and the
/// alternative of its `n_alts` it reserves (0 for a job without alternatives). With
/// `same` (same[]: a host's values of the resources named), the hosts share them.
pub(crate) fn place(
    shape: &Shape,
    n_alts: usize,
    n: (u32, u32, Option<super::allocate::Tile<'_>>),
    same: Option<&dyn Fn(usize) -> Vec<String>>,
) -> Option<(Vec<usize>, usize)> {
    let alloc = pick(shape.cands.iter().map(|c| &c.0), n, same)?;
    if n_alts < 2 {
        return Some((alloc, 0));
    }
    choose_alt(&shape.cands, &shape.cur, alloc, n_alts, n, same)
}

/// [`allocate`], or with `same` [`super::allocate::allocate_same`].
fn pick<'a>(
    cands: impl Iterator<Item = &'a Cand> + Clone,
    (need, most, span): (u32, u32, Option<super::allocate::Tile<'_>>),
    same: Option<&dyn Fn(usize) -> Vec<String>>,
) -> Option<Vec<usize>> {
    match same {
        None => allocate(cands, need, most, span),
        Some(key) => super::allocate::allocate_same(cands, need, most, span, key),
    }
}

/// The alternative a job placed on `alloc` (host indices, one per slot) reserves: the
/// first that fits on every host of it (`cur[i]`'s bit set). When none does, the job is
/// placed again among the hosts each alternative fits, in order; None when no
/// alternative has hosts enough.
fn choose_alt(
    cands: &super::cands::Cands,
    cur: &[Option<Cand>],
    alloc: Vec<usize>,
    n_alts: usize,
    n: (u32, u32, Option<super::allocate::Tile<'_>>),
    same: Option<&dyn Fn(usize) -> Vec<String>>,
) -> Option<(Vec<usize>, usize)> {
    let all = alloc.iter().fold(u64::MAX, |m, &i| {
        m & cur.get(i).copied().flatten().map_or(0, |c| c.6)
    });
    if all != 0 {
        return Some((alloc, all.trailing_zeros() as usize));
    }
    (0..n_alts.min(MAX_ALTS)).find_map(|a| {
        let with = cands
            .iter()
            .map(|c| &c.0)
            .filter(move |c| c.6 >> a & 1 == 1);
        pick(with, n, same).map(|alloc| (alloc, a))
    })
}

/// Which of a job's alternatives `reason` (the pending reason of the limits that are
/// not host-scoped) lets it have: bit `a` for alternative `a` (all bits when it gives
/// none for a job without alternatives), and the first reason given (0 when none).
pub(crate) fn within<'a>(
    alts: &'a [Reserve],
    mut reason: impl FnMut(Option<&'a Reserve>) -> Option<u32>,
) -> (u64, u32) {
    if alts.is_empty() {
        return match reason(None) {
            None => (u64::MAX, 0),
            Some(code) => (0, code),
        };
    }
    let (mut ok, mut first) = (0u64, None);
    for (a, r) in alts.iter().take(MAX_ALTS).enumerate() {
        match reason(Some(r)) {
            None => ok |= 1 << a,
            Some(code) => {
                first.get_or_insert(code);
            }
        }
    }
    (ok, first.unwrap_or(0))
}
