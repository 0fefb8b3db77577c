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

/// Positions in a submission's `rlimits` (LSF_RLIMIT order).
pub use basalt_core::rlimit as idx;

/// The limits' values, read by basalt-config (which refuses a configuration whose
/// values do not parse).
pub use basalt_config::batch::rlimits::{QueueLimit, QueueLimits, parse};

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
    use std::collections::BTreeMap;

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
