//! The job's limits from its spec: which are set, and the rlimits its top process
//! applies before it runs the job ([`rlimits`], applied by [`crate::spawn`]).

use crate::spawn::Rlimit;
use crate::state::Launch;
use basalt_proto::sbatchd::JobSpec;

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

/// The rlimits of the job's top process from its spec: each soft value capped by the
/// hard limit in force, the hard limit lowered too except for the CPU limit (whose
/// SIGXCPU at the soft limit lets the job end itself).
pub(super) fn rlimits(spec: &JobSpec, launch: &Launch) -> Vec<Rlimit> {
    use nix::sys::resource::{Resource, getrlimit};
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
    if (!launch.enforce_memlimit || launch.os_memlimit_too)
        && let Some(v) = kb(limit::RSS)
    {
        set.push((Resource::RLIMIT_RSS, v, true));
    }
    if let Some(v) = count(limit::NOFILE).or_else(|| count(limit::OPEN_MAX)) {
        set.push((Resource::RLIMIT_NOFILE, v, true));
    }
    set.into_iter()
        .map(|(r, v, hard_too)| {
            let (_, hard) = getrlimit(r).unwrap_or((libc::RLIM_INFINITY, libc::RLIM_INFINITY));
            let soft = v.min(hard);
            Rlimit {
                resource: r as libc::__rlimit_resource_t,
                soft,
                hard: if hard_too { soft } else { hard },
                name: resource_name(r),
            }
        })
        .collect()
}

/// How a refused limit is named on the job's standard error.
fn resource_name(r: nix::sys::resource::Resource) -> &'static str {
    use nix::sys::resource::Resource;
    match r {
        Resource::RLIMIT_CPU => "RLIMIT_CPU",
        Resource::RLIMIT_FSIZE => "RLIMIT_FSIZE",
        Resource::RLIMIT_DATA => "RLIMIT_DATA",
        Resource::RLIMIT_STACK => "RLIMIT_STACK",
        Resource::RLIMIT_CORE => "RLIMIT_CORE",
        Resource::RLIMIT_AS => "RLIMIT_AS",
        Resource::RLIMIT_RSS => "RLIMIT_RSS",
        Resource::RLIMIT_NOFILE => "RLIMIT_NOFILE",
        _ => "a resource limit",
    }
}

impl super::Supervisor {
    /// bmod of the running job: its limits from now on. The run, CPU and memory limits
    /// are watched against the spec; the CPU limit of the job's top process (its SIGXCPU)
    /// moves too.
    pub(super) fn set_limits(&mut self, l: [i64; limit::COUNT]) {
        let old_cpu = limit_value(&self.spec, limit::CPU);
        self.spec.rlimits = l.to_vec();
        let new_cpu = limit_value(&self.spec, limit::CPU);
        if old_cpu != new_cpu
            && let Some(pid) = self.job
            && let Err(e) = crate::sys::set_cpu_soft_limit(pid, new_cpu)
        {
            tracing::warn!("job process {pid}: cannot move its CPU limit: {e}");
        }
    }
}
