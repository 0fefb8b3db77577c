//! Queue resource limits (lsb.queues `CPULIMIT RUNLIMIT MEMLIMIT SWAPLIMIT PROCESSLIMIT
//! FILELIMIT DATALIMIT STACKLIMIT CORELIMIT`), each `[default] maximum`.
//!
//! A job's own limit (bsub `-c -W -M -v -p -F -D -S -C`) may not exceed the queue's
//! maximum: the submission (or bswitch) is refused with LSF's `Cannot exceed queue's hard
//! limit(s)`. A job without a limit of its own gets the queue's default, or else its
//! maximum, when it is dispatched; sbatchd enforces the result like a job-level limit.
//!
//! Values: CPULIMIT and RUNLIMIT in minutes or `hour:minute` (a `/host_spec` suffix is
//! accepted; the limit is not normalised by CPU factor), the sizes in
//! `LSF_UNIT_FOR_LIMITS` (KB by default; a `K M G T P E` suffix names another unit),
//! PROCESSLIMIT a count.

use std::collections::BTreeMap;

/// Positions in a submission's `rlimits` (LSF_RLIMIT order).
pub use basalt_core::rlimit as idx;

/// One queue limit: `[default] maximum`, in the job's units (seconds, KB or a count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimit {
    pub default: Option<i64>,
    pub max: i64,
}

/// A queue's limits by LSF_RLIMIT position.
pub type QueueLimits = [Option<QueueLimit>; 11];

#[derive(Clone, Copy)]
enum Kind {
    Minutes,
    Size,
    Count,
}

/// The keywords, their positions and kinds.
const KEYS: &[(&str, usize, Kind)] = &[
    ("CPULIMIT", idx::CPU, Kind::Minutes),
    ("RUNLIMIT", idx::RUN, Kind::Minutes),
    ("MEMLIMIT", idx::RSS, Kind::Size),
    ("SWAPLIMIT", idx::SWAP, Kind::Size),
    ("FILELIMIT", idx::FSIZE, Kind::Size),
    ("DATALIMIT", idx::DATA, Kind::Size),
    ("STACKLIMIT", idx::STACK, Kind::Size),
    ("CORELIMIT", idx::CORE, Kind::Size),
    ("PROCESSLIMIT", idx::PROCESS, Kind::Count),
];

/// KB in one `unit` (`KB`, `MB`, ... or the letter alone).
fn unit_kb(unit: &str) -> Option<f64> {
    let u = unit.trim().to_ascii_uppercase();
    let u = u.strip_suffix('B').unwrap_or(&u);
    Some(match u {
        "K" | "" => 1.0,
        "M" => 1024.0,
        "G" => 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0,
        "P" => 1024.0_f64.powi(4),
        "E" => 1024.0_f64.powi(5),
        _ => return None,
    })
}

fn value(v: &str, kind: Kind, unit: f64) -> Option<i64> {
    let v = v.trim();
    match kind {
        Kind::Minutes => {
            let v = v.split('/').next().unwrap_or(v).trim();
            let minutes = match v.split_once(':') {
                Some((h, m)) => {
                    h.trim().parse::<i64>().ok()? * 60 + m.trim().parse::<i64>().ok()?
                }
                None => v.parse::<f64>().ok().filter(|x| x.is_finite())? as i64,
            };
            (minutes > 0).then_some(minutes.saturating_mul(60))
        }
        Kind::Size => {
            let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
            let (num, suffix) = v.split_at(split);
            let per = if suffix.is_empty() {
                unit
            } else {
                unit_kb(suffix)?
            };
            let n: f64 = num.trim().parse().ok().filter(|x: &f64| x.is_finite())?;
            (n >= 0.0).then(|| (n * per).min(i64::MAX as f64) as i64)
        }
        Kind::Count => v.parse::<i64>().ok().filter(|n| *n > 0),
    }
}

/// Parse a queue's limit keywords (`settings`, upper-case keys as lsb.queues gives them);
/// `unit` is `LSF_UNIT_FOR_LIMITS`. Returns the limits and the keywords whose value could
/// not be read (those are not applied).
pub fn parse(settings: &BTreeMap<String, String>, unit: &str) -> (QueueLimits, Vec<String>) {
    let unit = unit_kb(unit).unwrap_or(1.0);
    let mut out: QueueLimits = [None; 11];
    let mut bad = Vec::new();
    for (key, i, kind) in KEYS {
        let Some(text) = settings.get(*key) else {
            continue;
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let parsed: Option<Vec<i64>> = words.iter().map(|w| value(w, *kind, unit)).collect();
        match (parsed.as_deref(), words.len()) {
            (Some([max]), 1) => {
                out[*i] = Some(QueueLimit {
                    default: None,
                    max: *max,
                });
            }
            (Some([default, max]), 2) if default <= max => {
                out[*i] = Some(QueueLimit {
                    default: Some(*default),
                    max: *max,
                });
            }
            _ => bad.push((*key).to_owned()),
        }
    }
    (out, bad)
}

/// A job's own limit: `None` when it set none (negative; 0 too except for the core size).
fn own(job: &[i64; 11], i: usize) -> Option<i64> {
    let v = job[i];
    (v > 0 || (v == 0 && i == idx::CORE)).then_some(v)
}

/// Does a job's own limit exceed the queue's maximum?
pub fn exceeds(job: &[i64; 11], q: &QueueLimits) -> bool {
    (0..11).any(|i| matches!((own(job, i), q[i]), (Some(v), Some(l)) if v > l.max))
}

/// The limits a job runs with: its own, else the queue's default, else the queue's maximum.
pub fn effective(job: &[i64; 11], q: &QueueLimits) -> [i64; 11] {
    let mut out = *job;
    for i in 0..11 {
        if own(job, i).is_none()
            && let Some(l) = q[i]
        {
            out[i] = l.default.unwrap_or(l.max);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn queue_limits_are_read_in_lsfs_units() {
        let (l, bad) = parse(
            &settings(&[
                ("RUNLIMIT", "10 1:30"),
                ("CPULIMIT", "5/hostA"),
                ("MEMLIMIT", "100 2G"),
                ("FILELIMIT", "4"),
                ("PROCESSLIMIT", "8"),
                ("STACKLIMIT", "nonsense"),
                ("DATALIMIT", "20 10"),
            ]),
            "MB",
        );
        assert_eq!(
            l[idx::RUN],
            Some(QueueLimit {
                default: Some(600),
                max: 5400
            })
        );
        assert_eq!(
            l[idx::CPU],
            Some(QueueLimit {
                default: None,
                max: 300
            })
        );
        assert_eq!(
            l[idx::RSS],
            Some(QueueLimit {
                default: Some(100 * 1024),
                max: 2 * 1024 * 1024
            })
        );
        assert_eq!(l[idx::FSIZE].map(|x| x.max), Some(4 * 1024));
        assert_eq!(l[idx::PROCESS].map(|x| x.max), Some(8));
        assert_eq!(bad, vec!["DATALIMIT".to_string(), "STACKLIMIT".to_string()]);
    }

    #[test]
    fn a_job_gets_the_queue_default_or_maximum_and_may_not_exceed_it() {
        let (q, _) = parse(
            &settings(&[("RUNLIMIT", "10 60"), ("MEMLIMIT", "1000")]),
            "KB",
        );
        let mut job = [-1i64; 11];
        assert!(!exceeds(&job, &q));
        let e = effective(&job, &q);
        assert_eq!((e[idx::RUN], e[idx::RSS]), (600, 1000));
        job[idx::RUN] = 3600;
        assert!(!exceeds(&job, &q), "equal to the maximum is fine");
        assert_eq!(effective(&job, &q)[idx::RUN], 3600);
        job[idx::RUN] = 3660;
        assert!(exceeds(&job, &q));
        job[idx::RUN] = -1;
        job[idx::RSS] = 2000;
        assert!(exceeds(&job, &q));
    }
}
