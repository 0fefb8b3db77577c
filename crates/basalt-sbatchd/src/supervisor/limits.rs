//! The job's limits from its spec: which are set, and the rlimits its top process
//! applies before it runs the job ([`rlimits`], applied by [`crate::spawn`]).

use crate::spawn::Rlimit;
use crate::state::Launch;
use basalt_proto::sbatchd::JobSpec;
use std::time::{Duration, Instant};

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

/// The job's run time, which `RUNLIMIT` limits: the time it spent in the RUN state
/// (not suspended), on the monotonic clock. A stepped wall clock (an hour forward or
/// back) changes no run time, so it kills no job by its run limit and lets none run
/// an hour too long.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RunClock {
    /// Run time before the current RUN period.
    before: Duration,
    /// When the current RUN period began.
    since: Option<Instant>,
}

impl RunClock {
    /// The job runs (from its start, or resumed) from `now`.
    pub(super) fn start(&mut self, now: Instant) {
        self.since.get_or_insert(now);
    }

    /// The job stops running (suspended) at `now`.
    pub(super) fn stop(&mut self, now: Instant) {
        if let Some(s) = self.since.take() {
            self.before += now.saturating_duration_since(s);
        }
    }

    /// Is a RUN period going on?
    pub(super) fn running(&self) -> bool {
        self.since.is_some()
    }

    /// The run time at `now`.
    pub(super) fn run_time(&self, now: Instant) -> Duration {
        self.before
            + self
                .since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
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

#[cfg(test)]
mod tests {
    use super::RunClock;
    use basalt_runtime::time::{Clock, ManualClock};
    use std::time::{Duration, Instant};

    /// Issue 29, item 5, "clock jumps of ±1 h ... no kills by run limit": a job with a
    /// RUNLIMIT of 60 s, 30 s into its run, across a wall-clock step of an hour forward
    /// and then of an hour back. Its run time follows the monotonic clock only; by
    /// differences of wall-clock times it would be an hour past its limit (killed), then
    /// an hour short of it.
    #[test]
    fn a_wall_clock_step_of_an_hour_either_way_kills_no_job_by_its_run_limit() {
        let limit = Duration::from_secs(60);
        let wall = ManualClock::new(1_795_339_535_000);
        let t0 = Instant::now();
        let started_wall = wall.now_secs();
        let mut rc = RunClock::default();
        rc.start(t0);

        wall.advance_ms(30_000);
        let t = t0 + Duration::from_secs(30);
        assert_eq!(rc.run_time(t), Duration::from_secs(30));

        // An hour forward: no time passes for the job.
        wall.advance_ms(3_600_000);
        assert!(
            wall.now_secs() - started_wall > 3600,
            "by the wall clock: killed"
        );
        assert_eq!(rc.run_time(t), Duration::from_secs(30));
        assert!(rc.run_time(t) < limit);

        // Suspended 10 s, resumed, then an hour back.
        rc.stop(t + Duration::from_secs(5));
        rc.start(t + Duration::from_secs(15));
        wall.advance_ms(15_000 - 3_600_000);
        let t = t + Duration::from_secs(15);
        assert_eq!(rc.run_time(t), Duration::from_secs(35));
        assert!(wall.now_secs() - started_wall < 60);

        // The limit is reached when 60 s of running have passed on the monotonic clock,
        // whatever the wall clock says.
        assert!(rc.run_time(t + Duration::from_secs(24)) < limit);
        assert!(rc.run_time(t + Duration::from_secs(25)) >= limit);
        assert!(rc.running());
    }
}
