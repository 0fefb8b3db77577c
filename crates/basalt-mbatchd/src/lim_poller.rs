//! The LIM poller: host status and load from the master LIM every second, for the
//! core's host table; and the resignation when another host has become master.

use crate::msg::Msg;
use basalt_config::Config;
use std::sync::Arc;
use std::sync::mpsc as stdmpsc;
use std::time::Duration;
use tracing::debug;

/// What the LIM master says about one host.
#[derive(Debug, Clone)]
pub(crate) struct LimHost {
    pub(crate) name: String,
    pub(crate) ncpus: u32,
    pub(crate) cpu_factor: f64,
    pub(crate) ok: bool,
    pub(crate) load: std::collections::BTreeMap<String, f64>,
    /// Its type, model, maximum memory, swap and /tmp and resources, once its LIM has
    /// reported them.
    pub(crate) statics: Option<basalt_sched::LimStatic>,
}

/// Ask the LIM master for host status and load every second; resign when another host
/// has been master for three polls in a row.
pub(crate) async fn lim_poller(
    config: Arc<Config>,
    me: String,
    tx: stdmpsc::Sender<Msg>,
    auth: basalt_runtime::Authenticator,
) {
    let mut not_master = 0u32;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let m = match basalt_runtime::find_master(&config, Duration::from_secs(2), &auth).await {
            Ok(m) => m,
            Err(e) => {
                debug!("no LIM answers: {e}");
                continue;
            }
        };
        if !basalt_core::same_host(&m.master, &me) {
            not_master += 1;
            if not_master >= 3 {
                let _ = tx.send(Msg::Resign(m.master.clone()));
                return;
            }
            continue;
        }
        not_master = 0;
        let mut client = m.client;
        let Ok(reply) = client
            .hosts(basalt_proto::lim::HostsRequest { hosts: vec![] })
            .await
        else {
            continue;
        };
        let hosts = reply
            .into_inner()
            .hosts
            .into_iter()
            .filter_map(|h| {
                let info = h.info?;
                let ok = matches!(
                    basalt_proto::lim::HostStatus::try_from(h.status),
                    Ok(basalt_proto::lim::HostStatus::Ok
                        | basalt_proto::lim::HostStatus::Busy
                        | basalt_proto::lim::HostStatus::LockedUser
                        | basalt_proto::lim::HostStatus::LockedWindow)
                );
                let statics = h.has_info.then(|| basalt_sched::LimStatic {
                    host_type: info.host_type.clone(),
                    model: info.model.clone(),
                    max_mem_mb: info.max_mem_mb,
                    max_swp_mb: info.max_swp_mb,
                    max_tmp_mb: info.max_tmp_mb,
                    resources: info.resources.clone(),
                });
                Some(LimHost {
                    name: info.name.clone(),
                    ncpus: if h.has_info { info.ncpus } else { 0 },
                    cpu_factor: info.cpu_factor,
                    ok,
                    load: h.load.into_iter().map(|l| (l.name, l.value)).collect(),
                    statics,
                })
            })
            .collect();
        if tx.send(Msg::Lim(hosts)).is_err() {
            return;
        }
    }
}
