//! The parts of the query views the core does not hold: bparams' answer is the
//! configuration mbatchd runs with, taken on the owner thread as a domain value
//! ([`ParamsView`]); the gRPC service turns it into the wire reply (`basalt-wire`).

use basalt_config::Config;
use basalt_sched::{ParamsView, Peaks, Sched};
use std::time::SystemTime;

pub(crate) fn params_view(
    c: &Config,
    s: &Sched,
    started: SystemTime,
    config_problem: &str,
    peaks: &mut Peaks,
) -> ParamsView {
    let status = s.status_view();
    peaks.see(clients(c), &status);
    ParamsView {
        params: c.batch.params.clone(),
        lsf_conf: c.lsf_conf.clone(),
        sharedir: c.sharedir(),
        confdir: c.confdir.clone(),
        envdir: c.envdir.clone(),
        default_queue: s.config().default_queue.clone(),
        started_at: started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
        config_problem: config_problem.to_owned(),
        pid: std::process::id(),
        status,
        peaks: *peaks,
    }
}

/// The client hosts of lsf.cluster (no batch server), for `badmin showstatus`.
pub(crate) fn clients(c: &Config) -> u32 {
    c.cluster.hosts.iter().filter(|h| !h.server).count() as u32
}
