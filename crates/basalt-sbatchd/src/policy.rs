//! Load-based suspension and resumption (daemon-behaviour.md §3.2): every
//! `SBD_SLEEP_TIME` this task takes the host's load from the master LIM, asks the
//! owner for the jobs running here, lets the pure core ([`basalt_susp_core`])
//! decide, and hands the resulting actions to the owner, which signals the jobs'
//! supervisors (`STOP`/`RESUME`/`KILL`/`REASON` on their control sockets). The
//! supervisors record the new state (SSUSP with reason bits and the index as
//! subreason, or RUN) and sbatchd reports it to mbatchd like any other state change.

use crate::Shared;
use crate::owner::Msg;
use basalt_runtime::time::local_week_minute;
use basalt_susp_core::{HostLoad, Policy};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{debug, info, warn};

/// The host's load and static information from the master LIM (None: no answer;
/// a load with `available = false`: LIM has no load for this host).
async fn fetch_load(shared: &Shared, master: &str) -> Option<(HostLoad, String, String)> {
    let timeout = Duration::from_secs(2);
    let mut lim =
        basalt_runtime::lim_channel(&shared.config, master, timeout, &shared.auth).ok()?;
    let reply = tokio::time::timeout(
        timeout,
        lim.hosts(basalt_proto::lim::HostsRequest {
            hosts: vec![shared.host.clone()],
            ..Default::default()
        }),
    )
    .await
    .ok()?
    .ok()?
    .into_inner();
    if !reply.is_master {
        return None;
    }
    let rec = reply.hosts.into_iter().find(|h| {
        h.info
            .as_ref()
            .is_some_and(|i| basalt_core::same_host(&i.name, &shared.host))
    })?;
    let info = rec.info.clone().unwrap_or_default();
    use basalt_proto::lim::HostStatus as S;
    let status_ok = matches!(
        S::try_from(rec.status),
        Ok(S::Ok | S::Busy | S::LockedUser | S::LockedWindow)
    );
    let lock = match S::try_from(rec.status) {
        Ok(S::LockedUser) => basalt_susp_core::HostLock::User,
        Ok(S::LockedWindow) => basalt_susp_core::HostLock::Master,
        _ => basalt_susp_core::HostLock::None,
    };
    let load = HostLoad {
        available: status_ok && !rec.load.is_empty(),
        lock,
        ncpus: if rec.has_info { info.ncpus } else { 0 },
        cpu_factor: info.cpu_factor,
        values: rec.load.into_iter().map(|l| (l.name, l.value)).collect(),
    };
    Some((load, info.model, info.host_type))
}

/// The load policy of `config` for `host` (of this model and type) and how often it is
/// applied (SBD_SLEEP_TIME).
fn load_policy(
    config: &basalt_config::Config,
    host: &str,
    model: &str,
    ty: &str,
) -> (Policy, Duration) {
    let (policy, errors) = Policy::from_config(config, host, model, ty);
    for e in &errors {
        warn!("lsb.queues: condition ignored: {e}");
    }
    let period = Duration::from_millis(policy.params.sleep_ms.max(1000) as u64);
    info!(
        "load policy: checking every {} s (SBD_SLEEP_TIME)",
        period.as_secs()
    );
    (policy, period)
}

/// The policy loop; ends when `stop` turns true.
pub async fn run(
    shared: Arc<Shared>,
    owner: mpsc::Sender<Msg>,
    master: watch::Receiver<Option<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut live = shared.live.subscribe();
    let mut config = live.borrow_and_update().clone();
    let (mut policy, mut period) = load_policy(&config, &shared.host, "", "");
    let mut host_row: Option<(String, String)> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = crate::stopped(&mut stop) => return,
        }
        // `badmin reconfig`: the new thresholds and SBD_SLEEP_TIME from now on.
        if live.has_changed().unwrap_or(false) {
            config = live.borrow_and_update().clone();
            let (model, ty) = host_row.clone().unwrap_or_default();
            (policy, period) = load_policy(&config, &shared.host, &model, &ty);
        }
        let (tx, rx) = oneshot::channel();
        if owner.send(Msg::PolicyJobs { reply: tx }).await.is_err() {
            return;
        }
        let Ok(jobs) = rx.await else { return };
        if jobs.is_empty() {
            continue;
        }
        // Only a host with jobs asks the master LIM for its load.
        let m = master.borrow().clone();
        let load = match m {
            Some(m) => fetch_load(&shared, &m).await,
            None => None,
        };
        let load = match load {
            Some((l, model, ty)) => {
                // lsb.hosts rows may name the host's model or type.
                if host_row.as_ref() != Some(&(model.clone(), ty.clone())) {
                    let (p, _) = Policy::from_config(&config, &shared.host, &model, &ty);
                    policy.host = p.host;
                    host_row = Some((model, ty));
                }
                l
            }
            None => {
                debug!("no load for this host from the master LIM");
                HostLoad::default()
            }
        };
        let now = shared.clock.now_ms();
        let actions = policy.decide(now, local_week_minute(now / 1000), &load, &jobs);
        if !actions.is_empty() && owner.send(Msg::PolicyActions { actions }).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minute_of_week_is_in_range() {
        use basalt_runtime::time::{localtime, utc_week_minute};
        // Known instants (checked with `date -u`): the epoch was Thursday 00:00,
        // 1,700,000,000 is Tuesday 22:13, 1,699,747,200 is Sunday 00:00 and the minute
        // before it Saturday 23:59, the week's last.
        assert_eq!(utc_week_minute(0), 4 * 1440);
        assert_eq!(utc_week_minute(1_700_000_000), 2 * 1440 + 22 * 60 + 13);
        assert_eq!(utc_week_minute(1_699_747_200), 0);
        assert_eq!(utc_week_minute(1_699_747_200 - 60), 7 * 1440 - 1);
        assert_eq!(utc_week_minute(-60), 3 * 1440 + 23 * 60 + 59);
        // The local minute is the UTC one of the instant shifted by the zone's offset.
        for t in [
            0,
            1_700_000_000,
            1_699_747_200,
            basalt_runtime::time::now_secs(),
        ] {
            let off = localtime(t).map_or(0, |tm| tm.gmtoff);
            assert_eq!(local_week_minute(t), utc_week_minute(t + off), "at {t}");
            assert!(local_week_minute(t) < 7 * 1440);
        }
    }
}
