//! Preemption settings (seed 002, "Preemptive scheduling"): lsb.queues `PREEMPTION`
//! ([`Preemption`]), lsb.params `PREEMPT_FOR` ([`PreemptFor`]), and the run-time guards
//! `NO_PREEMPT_RUN_TIME` / `NO_PREEMPT_FINISH_TIME` ([`NoPreemptTime`]) of lsb.params,
//! lsb.queues and lsb.applications. Which queue may preempt which is decided from these
//! and the queues' priorities by the scheduler.

/// A queue's `PREEMPTION`, in its three forms (they may be combined):
/// `PREEMPTIVE` (any lower-priority queue), `PREEMPTIVE[q1+p1 q2 ...]` (those queues, a
/// higher preference level preempted first) and `PREEMPTABLE` / `PREEMPTABLE[q1 q2]` (by
/// any higher-priority queue, or by those).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preemption {
    /// None: not preemptive; an empty list: preempts any lower-priority queue; else the
    /// queues it preempts, each with its preference level (0 when not given).
    pub preemptive: Option<Vec<(String, u32)>>,
    /// None: not preemptable; an empty list: by any higher-priority queue; else by those.
    pub preemptable: Option<Vec<String>>,
}

impl Preemption {
    /// Parse `PREEMPTIVE[...] PREEMPTABLE[...]` (keywords in any case, lists optional).
    pub fn parse(v: &str) -> Result<Preemption, String> {
        let mut p = Preemption::default();
        let mut rest = v.trim();
        if rest.is_empty() {
            return Err("PREEMPTION needs PREEMPTIVE or PREEMPTABLE".into());
        }
        while !rest.is_empty() {
            let end = rest
                .find(|c: char| c == '[' || c.is_whitespace())
                .unwrap_or(rest.len());
            let word = rest[..end].to_ascii_uppercase();
            rest = rest[end..].trim_start();
            let names: Vec<String> = if let Some(after) = rest.strip_prefix('[') {
                let close = after
                    .find(']')
                    .ok_or_else(|| format!("unclosed `[` after {word}"))?;
                let body = &after[..close];
                rest = after[close + 1..].trim_start();
                body.split_whitespace().map(str::to_owned).collect()
            } else {
                Vec::new()
            };
            match word.as_str() {
                "PREEMPTIVE" => {
                    if p.preemptive.is_some() {
                        return Err("PREEMPTIVE given twice".into());
                    }
                    let mut list = Vec::new();
                    for n in names {
                        let (name, level) = match n.split_once('+') {
                            Some((q, l)) => (
                                q.to_owned(),
                                l.parse::<u32>().map_err(|_| {
                                    format!("PREEMPTIVE[{n}]: the preference level after + must be a non-negative integer")
                                })?,
                            ),
                            None => (n, 0),
                        };
                        if name.is_empty() {
                            return Err("PREEMPTIVE[+n] names no queue".into());
                        }
                        list.push((name, level));
                    }
                    p.preemptive = Some(list);
                }
                "PREEMPTABLE" => {
                    if p.preemptable.is_some() {
                        return Err("PREEMPTABLE given twice".into());
                    }
                    if let Some(n) = names.iter().find(|n| n.contains('+')) {
                        return Err(format!(
                            "PREEMPTABLE[{n}]: preference levels are for PREEMPTIVE lists"
                        ));
                    }
                    p.preemptable = Some(names);
                }
                _ => {
                    return Err(format!(
                        "unknown word `{word}` (expected PREEMPTIVE[...] or PREEMPTABLE[...])"
                    ));
                }
            }
        }
        Ok(p)
    }

    /// Neither preemptive nor preemptable.
    pub fn is_none(&self) -> bool {
        self.preemptive.is_none() && self.preemptable.is_none()
    }

    /// The queues this one names (to check that they exist).
    pub fn named(&self) -> impl Iterator<Item = &str> {
        self.preemptive
            .iter()
            .flatten()
            .map(|(q, _)| q.as_str())
            .chain(self.preemptable.iter().flatten().map(String::as_str))
    }
}

/// lsb.params `PREEMPT_FOR`: which slot limits count only running jobs (suspended jobs
/// ignored), and how victims are chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PreemptFor {
    /// A user group's total slot limit (lsb.users MAX_JOBS of a group).
    pub group_max: bool,
    /// A user group's per-processor limit (lsb.users JL/P of a group).
    pub group_jlp: bool,
    /// A user's per-processor limit (lsb.users JL/P).
    pub user_jlp: bool,
    /// A user's per-host limit (lsb.hosts JL/U).
    pub host_jlu: bool,
    /// Preempt only as many parallel jobs as the preempting job needs.
    pub mini_job: bool,
    /// Preempt the jobs that have run the shortest time first.
    pub least_run_time: bool,
    /// Preempt as few jobs as possible (the largest first).
    pub optimal_mini_job: bool,
}

impl PreemptFor {
    /// `GROUP_MAX GROUP_JLP USER_JLP HOST_JLU MINI_JOB LEAST_RUN_TIME OPTIMAL_MINI_JOB`
    /// in any order and case.
    pub fn parse(v: &str) -> Result<PreemptFor, String> {
        let mut p = PreemptFor::default();
        for w in v.split_whitespace() {
            let slot = match w.to_ascii_uppercase().as_str() {
                "GROUP_MAX" => &mut p.group_max,
                "GROUP_JLP" => &mut p.group_jlp,
                "USER_JLP" => &mut p.user_jlp,
                "HOST_JLU" => &mut p.host_jlu,
                "MINI_JOB" => &mut p.mini_job,
                "LEAST_RUN_TIME" => &mut p.least_run_time,
                "OPTIMAL_MINI_JOB" => &mut p.optimal_mini_job,
                _ => {
                    return Err(format!(
                        "unknown keyword `{w}` (expected GROUP_MAX, GROUP_JLP, USER_JLP, HOST_JLU, MINI_JOB, LEAST_RUN_TIME or OPTIMAL_MINI_JOB)"
                    ));
                }
            };
            *slot = true;
        }
        Ok(p)
    }
}

/// `NO_PREEMPT_RUN_TIME` / `NO_PREEMPT_FINISH_TIME`: minutes, or a percentage of the
/// job's run limit (`50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoPreemptTime {
    Minutes(u32),
    Percent(f64),
}

impl NoPreemptTime {
    pub fn parse(v: &str) -> Result<NoPreemptTime, String> {
        let v = v.trim();
        if let Some(p) = v.strip_suffix('%') {
            let x: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("`{v}` is not minutes or a percentage"))?;
            if !(0.0..=100.0).contains(&x) {
                return Err(format!("`{v}`: a percentage is from 0 to 100"));
            }
            return Ok(NoPreemptTime::Percent(x));
        }
        v.parse::<u32>()
            .map(NoPreemptTime::Minutes)
            .map_err(|_| format!("`{v}` is not minutes or a percentage"))
    }

    /// The time in milliseconds, for a job whose run limit is `run_limit_ms` (a
    /// percentage of no run limit is no time: the guard does not apply).
    pub fn millis(self, run_limit_ms: Option<i64>) -> Option<i64> {
        match self {
            NoPreemptTime::Minutes(m) => Some(i64::from(m) * 60_000),
            NoPreemptTime::Percent(p) => run_limit_ms.map(|l| (l as f64 * p / 100.0) as i64),
        }
    }
}

/// As written: minutes, or `n%`.
impl std::fmt::Display for NoPreemptTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoPreemptTime::Minutes(m) => write!(f, "{m}"),
            NoPreemptTime::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemption_forms() {
        let p = Preemption::parse("PREEMPTIVE").unwrap_or_default();
        assert_eq!(p.preemptive, Some(vec![]));
        assert_eq!(p.preemptable, None);
        let p = Preemption::parse("preemptive[low+2 normal]").unwrap_or_default();
        assert_eq!(
            p.preemptive,
            Some(vec![("low".into(), 2), ("normal".into(), 0)])
        );
        let p = Preemption::parse("PREEMPTABLE[high urgent] PREEMPTIVE[idle]").unwrap_or_default();
        assert_eq!(p.preemptable, Some(vec!["high".into(), "urgent".into()]));
        assert_eq!(p.preemptive, Some(vec![("idle".into(), 0)]));
        assert!(Preemption::parse("PREEMPTIVE[low").is_err());
        assert!(Preemption::parse("SOMETIMES").is_err());
        assert!(Preemption::parse("PREEMPTIVE[low+x]").is_err());
        assert!(Preemption::parse("PREEMPTABLE[high+1]").is_err());
        assert!(Preemption::parse("PREEMPTIVE PREEMPTIVE").is_err());
    }

    #[test]
    fn preempt_for_keywords() {
        let p = PreemptFor::parse("GROUP_MAX host_jlu MINI_JOB").unwrap_or_default();
        assert!(p.group_max && p.host_jlu && p.mini_job);
        assert!(!p.user_jlp && !p.group_jlp && !p.least_run_time && !p.optimal_mini_job);
        assert!(PreemptFor::parse("HOST_JLU EVERYTHING").is_err());
    }

    #[test]
    fn no_preempt_times() {
        assert_eq!(NoPreemptTime::parse("30"), Ok(NoPreemptTime::Minutes(30)));
        assert_eq!(
            NoPreemptTime::parse("50%"),
            Ok(NoPreemptTime::Percent(50.0))
        );
        assert!(NoPreemptTime::parse("150%").is_err());
        assert!(NoPreemptTime::parse("soon").is_err());
        assert_eq!(NoPreemptTime::Minutes(2).millis(None), Some(120_000));
        assert_eq!(
            NoPreemptTime::Percent(50.0).millis(Some(600_000)),
            Some(300_000)
        );
        assert_eq!(NoPreemptTime::Percent(50.0).millis(None), None);
        assert_eq!(NoPreemptTime::Percent(12.5).to_string(), "12.5%");
        assert_eq!(NoPreemptTime::Minutes(30).to_string(), "30");
    }
}
