//! The job's limits from its spec: which are set, and the rlimits its top process
//! applies before it runs the job.

use crate::state::Launch;
use basalt_proto::sbatchd::JobSpec;
use std::io::Write;

/// Limit indices in `JobSpec.rlimits` (LSF_RLIMIT order).
pub use basalt_core::rlimit as limit;

/// A limit value from the spec: `None` when unlimited. Negative means unlimited;
/// so does 0, except for the core-file limit where 0 means "no core files".
pub fn limit_value(spec: &JobSpec, i: usize) -> Option<u64> {
    let v = *spec.rlimits.get(i)?;
    if v < 0 || (v == 0 && i != limit::CORE) {
        None
    } else {
        Some(v as u64)
    }
}

pub(super) fn apply_rlimits(spec: &JobSpec, launch: &Launch) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let kb = |i: usize| limit_value(spec, i).map(|v| v.saturating_mul(1024));
    let count = |i: usize| limit_value(spec, i);
    let mut set: Vec<(Resource, u64, bool)> = Vec::new();
    if let Some(v) = count(limit::CPU) {
        set.push((Resource::RLIMIT_CPU, v, false));
    }
    for (i, r) in [
        (limit::FSIZE, Resource::RLIMIT_FSIZE),
        (limit::DATA, Resource::RLIMIT_DATA),
        (limit::STACK, Resource::RLIMIT_STACK),
        (limit::CORE, Resource::RLIMIT_CORE),
        (limit::SWAP, Resource::RLIMIT_AS),
    ] {
        if let Some(v) = kb(i) {
            set.push((r, v, true));
        }
    }
    if !launch.enforce_memlimit
        && let Some(v) = kb(limit::RSS)
    {
        set.push((Resource::RLIMIT_RSS, v, true));
    }
    if let Some(v) = count(limit::NOFILE).or_else(|| count(limit::OPEN_MAX)) {
        set.push((Resource::RLIMIT_NOFILE, v, true));
    }
    for (r, v, hard_too) in set {
        let (_, hard) = getrlimit(r).unwrap_or((libc::RLIM_INFINITY, libc::RLIM_INFINITY));
        let soft = v.min(hard);
        let new_hard = if hard_too { soft } else { hard };
        if let Err(e) = setrlimit(r, soft, new_hard) {
            let _ = writeln!(std::io::stderr(), "setrlimit {r:?}: {e}");
        }
    }
}
