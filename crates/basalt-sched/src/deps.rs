//! `-w` dependency conditions evaluated against the live jobs and the remembered cleaned
//! ones.

use crate::depend::{IdxSel, Member, Target, Tri};
use crate::{Job, JobKey, Sched, array, depend, wildcard};
use basalt_core::job::{self as jobv, JobState};
use std::collections::BTreeSet;

impl Sched {
    /// The state of a job's `-w` condition now (None: the job has none).
    pub fn dependency(&self, j: &Job) -> Option<Tri> {
        let e = j.dep.as_ref()?;
        Some(depend::eval(e, &mut |t| self.dep_members(j, t)))
    }

    /// The jobs a dependency target of `j` names: by id any job (but not `j`'s own array),
    /// by name the submitter's own jobs submitted before `j`; cleaned jobs count with the
    /// final state they had.
    pub(crate) fn dep_members(&self, j: &Job, t: &Target) -> Vec<Member> {
        let mut out = Vec::new();
        self.dep_matches(j, t, &mut |_, m, _| out.push(m));
        out
    }

    /// The cleaned jobs that a dependency of an unfinished job in memory still names: what
    /// a log switch must carry of the remembered cleaned jobs (the others are not carried,
    /// so lsb.events does not grow with every job cleaned in the last week).
    pub fn gone_needed(&self) -> BTreeSet<JobKey> {
        let mut out = BTreeSet::new();
        for j in self.jobs.values() {
            if j.state.is_finished() {
                continue;
            }
            let Some(dep) = &j.dep else {
                continue;
            };
            dep.for_each_target(&mut |t| {
                self.dep_matches(j, t, &mut |key, _, gone| {
                    if gone {
                        out.insert(key);
                    }
                });
            });
        }
        out
    }

    /// Does dependency target `t` of a condition `user` gives now (a submission, bmod -w
    /// of job `own`) name a job in memory: by id any job but `own` (`id[i]`: that
    /// element), by name one of `user`'s own jobs (`name[i]`: its element i)? Remembered
    /// cleaned jobs do not count: LSF no longer finds them.
    pub(crate) fn dep_target_found(&self, user: &str, own: Option<u64>, t: &Target) -> bool {
        let sel_ok = |sel: IdxSel, idx: u32| match sel {
            IdxSel::All | IdxSel::Same => true,
            IdxSel::One(i) => idx == i,
        };
        match t {
            Target::Id(id, sel) => {
                Some(*id) != own
                    && self
                        .jobs
                        .range((*id, 0)..=(*id, u32::MAX))
                        .any(|(k, _)| sel_ok(*sel, k.1))
            }
            Target::Name(pat, sel) => self.jobs.values().any(|o| {
                Some(o.id) != own
                    && o.sub.user == user
                    && sel_ok(*sel, o.idx)
                    && if o.sub.job_name.is_empty() {
                        wildcard(pat, &o.sub.command)
                    } else {
                        let base = array::base_name(&o.sub.job_name);
                        wildcard(pat, base) || wildcard(pat, &o.sub.job_name)
                    }
            }),
        }
    }

    /// Each job a dependency target of `j` names: its key, state, and whether it is a
    /// remembered cleaned job.
    pub(crate) fn dep_matches(
        &self,
        j: &Job,
        t: &Target,
        found: &mut dyn FnMut(JobKey, Member, bool),
    ) {
        let sel_ok = |sel: IdxSel, idx: u32| match sel {
            IdxSel::All => true,
            IdxSel::One(i) => idx == i,
            IdxSel::Same => j.idx == 0 || idx == j.idx,
        };
        let member = |state: JobState, exit_status: i32| Member {
            state,
            exit_code: jobv::wait_status_parts(exit_status).0,
        };
        match t {
            Target::Id(id, sel) => {
                if *id == j.id {
                    return;
                }
                let range = (*id, 0)..=(*id, u32::MAX);
                for o in self.jobs.range(range.clone()).map(|(_, o)| o) {
                    if sel_ok(*sel, o.idx) {
                        found(o.key(), member(o.state, o.exit_status), false);
                    }
                }
                for (k, g) in self.gone.range(range) {
                    if !self.jobs.contains_key(k) && sel_ok(*sel, k.1) {
                        found(*k, member(g.state, g.exit_status), true);
                    }
                }
            }
            Target::Name(pat, sel) => {
                let named = |name: &str, command: &str| {
                    let base = array::base_name(name);
                    if name.is_empty() {
                        wildcard(pat, command)
                    } else {
                        wildcard(pat, base) || wildcard(pat, name)
                    }
                };
                for o in self.jobs.values() {
                    if o.id != j.id
                        && o.seq < j.seq
                        && o.sub.user == j.sub.user
                        && sel_ok(*sel, o.idx)
                        && named(&o.sub.job_name, &o.sub.command)
                    {
                        found(o.key(), member(o.state, o.exit_status), false);
                    }
                }
                for (k, g) in &self.gone {
                    if k.0 != j.id
                        && g.seq < j.seq
                        && g.user == j.sub.user
                        && !self.jobs.contains_key(k)
                        && sel_ok(*sel, k.1)
                        && named(&g.job_name, "")
                    {
                        found(*k, member(g.state, g.exit_status), true);
                    }
                }
            }
        }
    }
}
