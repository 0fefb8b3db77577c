//! The LIM poller: host status and load from the master LIM (this host's) every second, for the
//! core's host table; and the master check, about seven times a second, which resigns when
//! the LIMs have elected another host.
//!
//! The master check asks the local LIM first (it has the final word when it answers:
//! it still sees this host as master in a partition); when it does not answer within
//! [`LOCAL_LIM_WAIT`] (stopped, hung), the other LIMs are asked. This mbatchd resigns
//! once another host has been named by [`RESIGN_CHECKS`] checks in a row spanning at
//! least [`RESIGN_AFTER`]. A merely slow local LIM does not make a healthy master resign:
//! as long as it keeps up its heartbeats the other LIMs still name this host, and only
//! their own election (MASTER_INACTIVITY_LIMIT missed heartbeats) makes them name another.

use crate::msg::Msg;
use basalt_config::Config;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::{debug, info};

/// What the LIM master says about one host.
#[derive(Debug, Clone)]
pub(crate) struct LimHost {
    pub(crate) name: String,
    pub(crate) ncpus: u32,
    pub(crate) cpu_factor: f64,
    pub(crate) ok: bool,
    /// Locked in LIM (`lsadmin limlock`: lockU).
    pub(crate) locked: bool,
    pub(crate) load: std::collections::BTreeMap<String, f64>,
    /// Its type, model, maximum memory, swap and /tmp and resources, once its LIM has
    /// reported them.
    pub(crate) statics: Option<basalt_sched::LimStatic>,
}

/// Ask the LIM master for host status and load every second, and run the master
/// check; returns once the check has sent [`Msg::Resign`] (or the owner is gone).
pub(crate) async fn lim_poller(
    config: Arc<Config>,
    me: String,
    tx: crate::inbox::Inbox,
    auth: basalt_runtime::Authenticator,
) {
    tokio::select! {
        _ = hosts_poller(config.clone(), me.clone(), tx.clone(), auth.clone()) => {}
        _ = master_check(config, me, tx, auth) => {}
    }
}

/// How often the master check runs.
pub(crate) const MASTER_CHECK: Duration = Duration::from_millis(150);
/// How long the local LIM may take to answer the master check before the other LIMs
/// are asked.
pub(crate) const LOCAL_LIM_WAIT: Duration = Duration::from_millis(100);
/// How long one of the other LIMs may take to answer the master check.
const REMOTE_LIM_WAIT: Duration = Duration::from_millis(500);
/// How many of the other LIMs the master check asks, one after the other.
const REMOTE_LIMS: usize = 3;
/// How many checks in a row must name another master before this mbatchd resigns...
pub(crate) const RESIGN_CHECKS: u32 = 2;
/// ... and over at least how long.
pub(crate) const RESIGN_AFTER: Duration = Duration::from_millis(150);

/// What the master checks have seen: the other host named master by every check since
/// `since`, and how many checks.
#[derive(Debug, Default)]
pub(crate) struct ResignCheck {
    other: Option<(String, Instant, u32)>,
}

impl ResignCheck {
    /// Record a check at `now` that found `named` as master (`None`: no LIM answered or
    /// none knows a master: proves nothing either way). Returns the host to resign to.
    pub(crate) fn observe(
        &mut self,
        me: &str,
        named: Option<&str>,
        now: Instant,
    ) -> Option<String> {
        let named = named?;
        if basalt_core::same_host(named, me) {
            self.other = None;
            return None;
        }
        match self.other.as_mut() {
            Some((m, _, n)) if basalt_core::same_host(m, named) => *n += 1,
            _ => self.other = Some((named.to_owned(), now, 1)),
        }
        let (m, since, n) = self.other.as_ref()?;
        (*n >= RESIGN_CHECKS && now.saturating_duration_since(*since) >= RESIGN_AFTER)
            .then(|| m.clone())
    }
}

/// A client of a LIM, as [`basalt_runtime::lim_channel`] makes it.
type Lim = basalt_proto::lim::lim_client::LimClient<basalt_runtime::AuthChannel>;

/// Who `lim` names as master: `Err` when it does not answer within `wait`, `Ok(None)`
/// when it knows no master.
async fn ask(lim: &mut Lim, wait: Duration) -> Result<Option<String>, ()> {
    let r = tokio::time::timeout(
        wait,
        lim.cluster_info(basalt_proto::lim::ClusterInfoRequest {}),
    )
    .await
    .map_err(|_| ())?
    .map_err(|_| ())?
    .into_inner();
    Ok((!r.master.is_empty()).then_some(r.master))
}

/// Who the LIM of `host` names as master (`None`: no answer within `wait`, or none).
async fn ask_master(
    config: &Config,
    host: &str,
    wait: Duration,
    auth: &basalt_runtime::Authenticator,
) -> Option<String> {
    let mut lim = basalt_runtime::lim_channel(config, host, wait, auth).ok()?;
    ask(&mut lim, wait).await.ok().flatten()
}

/// Every [`MASTER_CHECK`]: who is master, as the local LIM says, or when it does not
/// answer, as the first of the other LIMs that answers says; send [`Msg::Resign`] when
/// [`ResignCheck`] says so. The local LIM is asked on one kept connection (a new one
/// each check cost both daemons a connection, a handshake and a credential seven times
/// a second: most of an idle master's CPU); after a check it does not answer, on a new
/// one.
async fn master_check(
    config: Arc<Config>,
    me: String,
    tx: crate::inbox::Inbox,
    auth: basalt_runtime::Authenticator,
) {
    let others: Vec<String> = basalt_runtime::lim_contacts(&config)
        .filter(|h| !basalt_core::same_host(h, &me))
        .take(REMOTE_LIMS)
        .collect();
    let mut check = ResignCheck::default();
    let mut tick = tokio::time::interval(MASTER_CHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut local: Option<Lim> = None;
    loop {
        tick.tick().await;
        if local.is_none() {
            local = basalt_runtime::lim_channel(&config, &me, LOCAL_LIM_WAIT, &auth).ok();
        }
        let mut named = None;
        if let Some(lim) = local.as_mut() {
            match ask(lim, LOCAL_LIM_WAIT).await {
                Ok(n) => named = n,
                Err(()) => local = None,
            }
        }
        if named.is_none() {
            for h in &others {
                named = ask_master(&config, h, REMOTE_LIM_WAIT, &auth).await;
                if named.is_some() {
                    debug!("the local LIM does not answer; the LIM of {h} names {named:?}");
                    break;
                }
            }
        }
        if let Some(m) = check.observe(&me, named.as_deref(), Instant::now()) {
            info!("the LIMs have named {m} master for {RESIGN_CHECKS} checks in a row");
            let _ = tx.send(Msg::Resign(m));
            return;
        }
    }
}

/// Ask this host's LIM for host status and load every second (while it is the master:
/// this mbatchd serves only then, and the master LIM holds the table), for the core's
/// host table. The local LIM is asked directly: a lost or hung old master that the
/// other LIMs' file order puts first costs nothing.
async fn hosts_poller(
    config: Arc<Config>,
    me: String,
    tx: crate::inbox::Inbox,
    auth: basalt_runtime::Authenticator,
) {
    let wait = Duration::from_secs(2);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut local = None;
    // The (table, version) of the master LIM's table last seen: the next poll asks
    // only for the hosts changed since (a tenth of them at 10,000 hosts, which report
    // every 10 s), not for every host each second.
    let mut seen = Delta::default();
    loop {
        tick.tick().await;
        if local.is_none() {
            local = match basalt_runtime::lim_channel(&config, &me, wait, &auth) {
                Ok(c) => Some(c),
                Err(e) => {
                    debug!("cannot address the local LIM: {e}");
                    continue;
                }
            };
        }
        let Some(client) = local.as_mut() else {
            continue;
        };
        let reply = match tokio::time::timeout(wait, client.hosts(seen.request())).await {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(e)) => {
                debug!("the local LIM does not answer: {e}");
                continue;
            }
            Err(_) => {
                debug!("the local LIM does not answer within {wait:?}");
                continue;
            }
        };
        if !reply.is_master {
            seen = Delta::default();
            continue;
        }
        seen.saw(&reply);
        let hosts = reply.hosts.into_iter().filter_map(lim_host).collect();
        if tx.send(Msg::Lim(hosts)).is_err() {
            return;
        }
    }
}

/// What the poller has seen of the master LIM's table: its id and version.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Delta {
    table: u64,
    version: u64,
}

impl Delta {
    /// The next poll: every host when nothing was seen yet, else those changed since.
    fn request(&self) -> basalt_proto::lim::HostsRequest {
        basalt_proto::lim::HostsRequest {
            hosts: Vec::new(),
            since_version: self.version,
            since_table: self.table,
        }
    }

    /// A reply came: a LIM that does not keep versions (0) is asked for every host
    /// each time.
    fn saw(&mut self, reply: &basalt_proto::lim::HostsReply) {
        *self = Delta {
            table: reply.table,
            version: reply.version,
        };
    }
}

/// One host of the master LIM's table for the core. A host the LIM has not heard from
/// yet (`UNKNOWN`: the master took over less than `HOST_INACTIVITY_LIMIT` intervals
/// ago) is left out: that says nothing about the host, so what mbatchd knew of it
/// stands (a new mbatchd's hosts start with the LIM status unknown), rather than its
/// running jobs showing UNKWN until its LIM reports to the new master.
fn lim_host(h: basalt_proto::lim::HostRecord) -> Option<LimHost> {
    use basalt_proto::lim::HostStatus;
    let info = h.info?;
    let locked = h.status == HostStatus::LockedUser as i32;
    let ok = match HostStatus::try_from(h.status) {
        Ok(HostStatus::Unknown) => return None,
        Ok(
            HostStatus::Ok | HostStatus::Busy | HostStatus::LockedUser | HostStatus::LockedWindow,
        ) => true,
        _ => false,
    };
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
        locked,
        load: h.load.into_iter().map(|l| (l.name, l.value)).collect(),
        statics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_master_named_twice_over_the_span_makes_this_one_resign() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut c = ResignCheck::default();
        assert_eq!(c.observe("hostA", Some("hostB"), at(0)), None);
        // No answer proves nothing and does not break the run.
        assert_eq!(c.observe("hostA", None, at(100)), None);
        // Two checks, but too close together.
        let mut quick = ResignCheck::default();
        assert_eq!(quick.observe("hostA", Some("hostB"), at(0)), None);
        assert_eq!(quick.observe("hostA", Some("hostB"), at(50)), None);
        assert_eq!(
            c.observe("hostA", Some("hostB"), at(250)).as_deref(),
            Some("hostB")
        );
    }

    /// A new master LIM has not heard from a host yet (UNKNOWN): the host is left out,
    /// so that its running jobs do not show UNKWN until its LIM reports (issue 49, item
    /// 10); UNAVAIL and the other statuses are passed on.
    #[test]
    fn a_host_the_new_master_lim_has_not_heard_yet_is_left_out() {
        use basalt_proto::lim::{HostRecord, HostStatus};
        let record = |status: HostStatus| HostRecord {
            info: Some(basalt_proto::common::HostInfo {
                name: "hostC".into(),
                ncpus: 4,
                ..Default::default()
            }),
            has_info: true,
            status: status as i32,
            ..Default::default()
        };
        assert!(lim_host(record(HostStatus::Unknown)).is_none());
        let ok = |s| lim_host(record(s)).map(|h| (h.name, h.ok, h.ncpus));
        assert_eq!(ok(HostStatus::Ok), Some(("hostC".into(), true, 4)));
        assert_eq!(ok(HostStatus::Busy), Some(("hostC".into(), true, 4)));
        assert_eq!(ok(HostStatus::Unavail), Some(("hostC".into(), false, 4)));
        assert_eq!(
            ok(HostStatus::Unspecified),
            Some(("hostC".into(), false, 4))
        );
    }

    /// Issue 51: the first poll asks for every host, the next ones for the hosts changed
    /// since the table and version the last reply named (an older LIM names none: every
    /// host again).
    #[test]
    fn the_poll_asks_for_the_hosts_changed_since_the_last_reply() {
        let mut d = Delta::default();
        assert_eq!(d.request().since_version, 0);
        d.saw(&basalt_proto::lim::HostsReply {
            is_master: true,
            table: 7,
            version: 42,
            ..Default::default()
        });
        let r = d.request();
        assert_eq!((r.since_table, r.since_version), (7, 42));
        d.saw(&basalt_proto::lim::HostsReply {
            is_master: true,
            ..Default::default()
        });
        assert_eq!(d.request().since_version, 0);
    }

    #[test]
    fn this_host_named_or_a_different_other_starts_again() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut c = ResignCheck::default();
        assert_eq!(c.observe("hostA", Some("hostB"), at(0)), None);
        // The local LIM answers again and names this host: nothing to resign for.
        assert_eq!(c.observe("hostA", Some("hostA"), at(250)), None);
        assert_eq!(c.observe("hostA", Some("hostB"), at(500)), None);
        // Another host yet: the run restarts with it.
        assert_eq!(c.observe("hostA", Some("hostC"), at(750)), None);
        assert_eq!(
            c.observe("hostA", Some("hostC"), at(1000)).as_deref(),
            Some("hostC")
        );
    }
}
