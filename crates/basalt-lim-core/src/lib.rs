//! LIM's deterministic core: master election, host status and the cluster
//! load table.
//!
//! Inputs are the LIM's observations with the current time (milliseconds on a
//! monotonic clock) as a parameter: timer ticks, heartbeats and announcements
//! from other LIMs, replies to what this LIM sent, probe results and the local
//! load samples. Outputs are [`Effect`]s the runtime performs (send a
//! heartbeat, announce mastership, probe hosts) and the state the master
//! serves to `lsload`/`lshosts`/`lsid`. No I/O, no async, no clock of its own.
//!
//! # Election (daemon-behaviour.md §1)
//!
//! A host's *rank* is its position among the master candidates in the order of
//! the `Host` section of `lsf.cluster.<cluster>` (0 = first). Rules:
//!
//! * At start a candidate probes every lower-ranked candidate; if none answers
//!   it becomes master at once (rank 0 has nobody to probe, so it declares
//!   itself master immediately). A host that is not a candidate probes all
//!   candidates to find the master.
//! * The master announces itself to every other server host each exchange
//!   interval (`EXINTERVAL`); slaves send it their load each interval.
//! * A slave of rank `r` that has not heard its master for
//!   `MASTER_INACTIVITY_LIMIT + RETRY_LIMIT × (r − 1)` intervals probes every
//!   lower-ranked candidate with an application-level request (answered by the
//!   LIM's core, so a hung LIM whose socket still accepts connections does not
//!   block failover) and takes over, with a new epoch, only if none answers.
//!   If a lower-ranked host is alive but not master, the slave waits for it.
//! * An announcement from a lower rank than the receiver wins (a master gives
//!   in), unless the receiver's current master is lower still and fresh. An
//!   announcement from a higher rank is refused, and a candidate never follows
//!   a master ranked above itself: it probes and takes over instead. So when a
//!   lower-ranked host comes back it becomes master again.
//! * Epochs only grow: a new master takes `max(seen) + 1`, and a master that
//!   learns of a higher epoch moves past it.

use std::collections::{BTreeMap, BTreeSet};

use basalt_core::{HostInfo, LoadIndex, LoadVector};

/// Election and status timing, from the `Parameters` section of the cluster file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// `EXINTERVAL`: heartbeat and announcement period, milliseconds.
    pub exinterval_ms: u64,
    /// `MASTER_INACTIVITY_LIMIT`: intervals of master silence before rank 1 takes over.
    pub master_inactivity_limit: u32,
    /// `HOST_INACTIVITY_LIMIT`: intervals of silence before the master marks a host unavailable.
    pub host_inactivity_limit: u32,
    /// `RETRY_LIMIT`: extra intervals per rank step (staggers the takeovers).
    pub retry_limit: u32,
    /// `PROBE_TIMEOUT`: how long a probe may take, milliseconds.
    pub probe_timeout_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            exinterval_ms: 1000,
            master_inactivity_limit: 2,
            host_inactivity_limit: 5,
            retry_limit: 2,
            probe_timeout_ms: 2000,
        }
    }
}

/// One host of the cluster file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct HostEntry {
    pub name: String,
    /// Runs a LIM (server column).
    pub server: bool,
    /// May become master (server, in `LSF_MASTER_LIST` when set, not `LIM_COMPUTE_ONLY`).
    pub candidate: bool,
    /// Load-index thresholds above (below, for decreasing indices) which the host is busy.
    pub busy_thresholds: BTreeMap<String, f64>,
}

/// What the core needs to know about the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// The host this LIM plays.
    pub me: String,
    pub hosts: Vec<HostEntry>,
    pub timing: Timing,
    /// External indices where a smaller value means more loaded (INCREASING = N).
    pub decreasing_externals: BTreeSet<String>,
}

/// Why a core cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// This host is not in the cluster file.
    UnknownHost(String),
    /// A host appears twice.
    DuplicateHost(String),
    /// No host may become master.
    NoCandidate,
    /// A timing value is zero.
    BadTiming(&'static str),
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreError::UnknownHost(h) => write!(f, "host <{h}> is not in the cluster file"),
            CoreError::DuplicateHost(h) => write!(f, "host <{h}> is listed twice"),
            CoreError::NoCandidate => write!(f, "no host in the cluster may become master"),
            CoreError::BadTiming(what) => write!(f, "{what} must be greater than zero"),
        }
    }
}

impl std::error::Error for CoreError {}

/// A host's status in the master's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HostStatus {
    /// Reporting, no threshold exceeded.
    Ok,
    /// Reporting, at least one busy threshold exceeded.
    Busy,
    /// Silent for `HOST_INACTIVITY_LIMIT` intervals (or never heard).
    Unavail,
    /// Not heard yet, master too young to tell.
    Unknown,
}

/// A host as the master sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostView {
    pub name: String,
    pub info: Option<HostInfo>,
    pub load: Option<LoadVector>,
    pub status: HostStatus,
    /// The indices whose busy threshold is exceeded.
    pub busy: Vec<String>,
    /// When the host's load last arrived (ms, core clock).
    pub last_heard_ms: Option<u64>,
}

/// Answer to a heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// The receiver is master and took the load.
    pub accepted: bool,
    /// Who the receiver believes is master.
    pub master: Option<String>,
    pub epoch: u64,
}

/// Answer to an announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnounceReply {
    /// The receiver now follows the announcer.
    pub accepted: bool,
    /// Who the receiver follows after the announcement.
    pub master: Option<String>,
    /// The highest epoch the receiver knows.
    pub epoch: u64,
}

/// Answer to a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReply {
    pub host: String,
    pub is_master: bool,
    pub master: Option<String>,
    pub epoch: u64,
}

/// What the runtime must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this host's load to the master; report the reply with
    /// [`LimCore::on_heartbeat_reply`] or [`LimCore::on_heartbeat_failed`].
    SendHeartbeat {
        to: String,
        load: Box<LoadVector>,
        info: Box<HostInfo>,
    },
    /// Announce mastership to these hosts; report each reply with
    /// [`LimCore::on_announce_reply`] (a failed send needs no report).
    Announce { to: Vec<String>, epoch: u64 },
    /// Probe these hosts, each with `PROBE_TIMEOUT`; report all results together
    /// with [`LimCore::on_probe_results`].
    Probe { hosts: Vec<String> },
    /// The master (as this LIM sees it) changed.
    MasterChanged {
        master: Option<String>,
        epoch: u64,
        me_is_master: bool,
    },
    /// A host's status changed in the master's table.
    HostStatusChanged { host: String, status: HostStatus },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Master,
    Slave,
}

#[derive(Debug, Clone)]
struct Host {
    entry: HostEntry,
    /// Rank among candidates.
    rank: Option<usize>,
    view: HostView,
}

/// The election state machine and host table of one LIM.
#[derive(Debug, Clone)]
pub struct LimCore {
    me: usize,
    hosts: Vec<Host>,
    timing: Timing,
    decreasing_externals: BTreeSet<String>,
    role: Role,
    master: Option<usize>,
    epoch: u64,
    max_epoch: u64,
    /// When this LIM last heard from (or about) its master; the takeover timer runs from here.
    last_contact: u64,
    /// When this LIM last heard from its master itself (announcement or
    /// accepted heartbeat): whether the master is "fresh".
    master_heard: u64,
    became_master: u64,
    last_heartbeat: Option<u64>,
    last_announce: Option<u64>,
    probing_since: Option<u64>,
    local_load: LoadVector,
    local_info: Option<HostInfo>,
    started: bool,
}

impl LimCore {
    /// Build the core for `config.me`.
    pub fn new(config: CoreConfig) -> Result<LimCore, CoreError> {
        let t = config.timing;
        if t.exinterval_ms == 0 {
            return Err(CoreError::BadTiming("EXINTERVAL"));
        }
        if t.probe_timeout_ms == 0 {
            return Err(CoreError::BadTiming("PROBE_TIMEOUT"));
        }
        if t.host_inactivity_limit == 0 {
            return Err(CoreError::BadTiming("HOST_INACTIVITY_LIMIT"));
        }
        if t.master_inactivity_limit == 0 {
            return Err(CoreError::BadTiming("MASTER_INACTIVITY_LIMIT"));
        }
        let mut hosts: Vec<Host> = Vec::with_capacity(config.hosts.len());
        let mut rank = 0;
        for entry in config.hosts {
            if hosts
                .iter()
                .any(|h| basalt_core::same_host(&h.entry.name, &entry.name))
            {
                return Err(CoreError::DuplicateHost(entry.name));
            }
            let r = if entry.candidate && entry.server {
                rank += 1;
                Some(rank - 1)
            } else {
                None
            };
            hosts.push(Host {
                view: HostView {
                    name: entry.name.clone(),
                    info: None,
                    load: None,
                    status: HostStatus::Unknown,
                    busy: Vec::new(),
                    last_heard_ms: None,
                },
                entry,
                rank: r,
            });
        }
        if rank == 0 {
            return Err(CoreError::NoCandidate);
        }
        let me = hosts
            .iter()
            .position(|h| basalt_core::same_host(&h.entry.name, &config.me))
            .ok_or(CoreError::UnknownHost(config.me))?;
        Ok(LimCore {
            me,
            hosts,
            timing: t,
            decreasing_externals: config.decreasing_externals,
            role: Role::Slave,
            master: None,
            epoch: 0,
            max_epoch: 0,
            last_contact: 0,
            master_heard: 0,
            became_master: 0,
            last_heartbeat: None,
            last_announce: None,
            probing_since: None,
            local_load: LoadVector::default(),
            local_info: None,
            started: false,
        })
    }

    // ----- queries -------------------------------------------------------

    /// This LIM's host name.
    pub fn me(&self) -> &str {
        &self.hosts[self.me].entry.name
    }

    /// Whether this LIM is the master.
    pub fn is_master(&self) -> bool {
        self.role == Role::Master
    }

    /// The master as this LIM sees it.
    pub fn master(&self) -> Option<&str> {
        self.master.map(|i| self.hosts[i].entry.name.as_str())
    }

    /// The current master's epoch (0 = no master known yet).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// This host's rank among master candidates (None = never master).
    pub fn rank(&self) -> Option<usize> {
        self.hosts[self.me].rank
    }

    /// The host table in cluster-file order (meaningful on the master).
    pub fn hosts(&self) -> impl Iterator<Item = &HostView> {
        self.hosts.iter().map(|h| &h.view)
    }

    /// One host of the table.
    pub fn host(&self, name: &str) -> Option<&HostView> {
        self.index(name).map(|i| &self.hosts[i].view)
    }

    /// A host's busy thresholds from the cluster file.
    pub fn busy_thresholds(&self, name: &str) -> Option<&BTreeMap<String, f64>> {
        self.index(name)
            .map(|i| &self.hosts[i].entry.busy_thresholds)
    }

    /// The timing in force.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    // ----- inputs ----------------------------------------------------------

    /// The LIM starts: candidates look for a lower-ranked live host and take
    /// over when there is none; other hosts look for the master.
    pub fn start(&mut self, now: u64) -> Vec<Effect> {
        self.started = true;
        self.last_contact = now;
        let mut fx = Vec::new();
        self.start_probe(now, &mut fx);
        fx
    }

    /// Timer: heartbeats, announcements, takeover and host-status checks.
    pub fn tick(&mut self, now: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.started {
            return fx;
        }
        let ex = self.timing.exinterval_ms;
        if let Some(since) = self.probing_since {
            // The runtime reports every probe; this only guards against a lost report.
            if now.saturating_sub(since) > self.timing.probe_timeout_ms + 2 * ex {
                self.probing_since = None;
            }
        }
        match self.role {
            Role::Master => {
                if self
                    .last_announce
                    .is_none_or(|t| now.saturating_sub(t) >= ex)
                {
                    self.announce(now, &mut fx);
                }
                self.refresh_all(now, &mut fx);
            }
            Role::Slave => {
                if let Some(m) = self.master
                    && m != self.me
                    && self
                        .last_heartbeat
                        .is_none_or(|t| now.saturating_sub(t) >= ex)
                {
                    self.heartbeat(now, m, &mut fx);
                }
                if self.probing_since.is_none() && self.takeover_due(now) {
                    self.start_probe(now, &mut fx);
                }
            }
        }
        fx
    }

    /// A heartbeat (load report) from `from`.
    pub fn on_heartbeat(
        &mut self,
        now: u64,
        from: &str,
        load: LoadVector,
        info: HostInfo,
    ) -> (HeartbeatReply, Vec<Effect>) {
        let mut fx = Vec::new();
        let accepted = match (self.role, self.index(from)) {
            (Role::Master, Some(i)) if i != self.me => {
                let h = &mut self.hosts[i];
                h.view.load = Some(load);
                h.view.info = Some(info);
                h.view.last_heard_ms = Some(now);
                self.refresh(i, now, &mut fx);
                true
            }
            _ => false,
        };
        (
            HeartbeatReply {
                accepted,
                master: self.master().map(str::to_owned),
                epoch: self.epoch,
            },
            fx,
        )
    }

    /// `from` announces that it is master for `epoch`.
    pub fn on_announce(
        &mut self,
        now: u64,
        from: &str,
        epoch: u64,
    ) -> (AnnounceReply, Vec<Effect>) {
        let mut fx = Vec::new();
        let accepted = self.consider_master(now, from, epoch, &mut fx);
        (
            AnnounceReply {
                accepted,
                master: self.master().map(str::to_owned),
                epoch: self.max_epoch,
            },
            fx,
        )
    }

    /// `from` asks whether this LIM is alive and whom it follows.
    pub fn on_probe(&mut self, _now: u64, _from: &str) -> ProbeReply {
        ProbeReply {
            host: self.me().to_owned(),
            is_master: self.is_master(),
            master: self.master().map(str::to_owned),
            epoch: self.epoch,
        }
    }

    /// The master answered our heartbeat.
    pub fn on_heartbeat_reply(&mut self, now: u64, reply: HeartbeatReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.max_epoch = self.max_epoch.max(reply.epoch);
        if self.role != Role::Slave {
            return fx;
        }
        if reply.accepted {
            self.last_contact = now;
            self.master_heard = now;
            return fx;
        }
        // The host we report to is no longer master: follow whom it names, if
        // that host may lead us.
        if let Some(m) = reply.master.as_deref()
            && let Some(i) = self.index(m)
            && Some(i) != self.master
            && i != self.me
            && self.outranks_me(i)
        {
            self.set_master(now, Some(i), reply.epoch, &mut fx);
        }
        fx
    }

    /// Our heartbeat to the master could not be delivered.
    pub fn on_heartbeat_failed(&mut self, _now: u64) -> Vec<Effect> {
        // The takeover timer decides; a single lost heartbeat changes nothing.
        Vec::new()
    }

    /// `to` answered our announcement.
    pub fn on_announce_reply(&mut self, now: u64, to: &str, reply: AnnounceReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.max_epoch = self.max_epoch.max(reply.epoch);
        if self.role != Role::Master {
            return fx;
        }
        if reply.accepted {
            if reply.epoch > self.epoch {
                // Someone saw a later term than ours: move past it.
                self.epoch = self.max_epoch + 1;
                self.max_epoch = self.epoch;
                fx.push(self.master_changed());
            }
            if let Some(i) = self.index(to) {
                // An answer proves the host is alive even before its load arrives.
                if self.hosts[i].view.last_heard_ms.is_none() {
                    self.refresh(i, now, &mut fx);
                }
            }
            return fx;
        }
        // Refused: the host follows a lower-ranked master that it heard recently.
        if let Some(m) = reply.master.as_deref()
            && let Some(i) = self.index(m)
            && i != self.me
            && self.outranks_me(i)
        {
            self.give_in(now, i, reply.epoch, &mut fx);
        }
        fx
    }

    /// Results of the probe requested by [`Effect::Probe`] (`None` = no answer).
    pub fn on_probe_results(
        &mut self,
        now: u64,
        results: Vec<(String, Option<ProbeReply>)>,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.probing_since = None;
        if self.role == Role::Master {
            return fx;
        }
        let mut alive = false;
        let mut best_master: Option<(usize, u64)> = None;
        for (host, reply) in results {
            let Some(reply) = reply else { continue };
            let Some(i) = self.index(&host) else { continue };
            if i == self.me {
                continue;
            }
            alive = true;
            self.max_epoch = self.max_epoch.max(reply.epoch);
            if reply.is_master
                && self.outranks_me(i)
                && best_master.is_none_or(|(b, _)| self.hosts[i].rank < self.hosts[b].rank)
            {
                best_master = Some((i, reply.epoch));
            }
        }
        if let Some((i, epoch)) = best_master {
            self.set_master(now, Some(i), epoch, &mut fx);
            self.last_contact = now;
        } else if alive || self.rank().is_none() {
            // A better-placed host lives but is not master yet (it will take
            // over itself), or we may never lead: wait and look again later.
            self.last_contact = now;
        } else {
            self.become_master(now, &mut fx);
        }
        fx
    }

    /// This host's own load and static information (the sampler's output).
    pub fn set_local(&mut self, now: u64, load: LoadVector, info: HostInfo) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.local_load = load.clone();
        self.local_info = Some(info.clone());
        let me = self.me;
        let h = &mut self.hosts[me];
        h.view.load = Some(load);
        h.view.info = Some(info);
        h.view.last_heard_ms = Some(now);
        if self.role == Role::Master {
            self.refresh(me, now, &mut fx);
        }
        fx
    }

    // ----- election internals --------------------------------------------

    fn index(&self, name: &str) -> Option<usize> {
        self.hosts
            .iter()
            .position(|h| basalt_core::same_host(&h.entry.name, name))
    }

    /// Whether host `i` may be this host's master: it is a candidate ranked
    /// before us (anyone who is a candidate, when we are not).
    fn outranks_me(&self, i: usize) -> bool {
        match (self.hosts[i].rank, self.rank()) {
            (Some(r), Some(mine)) => r < mine,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// How long a slave of our rank waits for a silent master.
    fn takeover_after(&self) -> u64 {
        let t = self.timing;
        let intervals = match self.rank() {
            Some(r) => {
                u64::from(t.master_inactivity_limit)
                    + u64::from(t.retry_limit) * (r.saturating_sub(1) as u64)
            }
            None => u64::from(t.master_inactivity_limit),
        };
        intervals * t.exinterval_ms
    }

    fn takeover_due(&self, now: u64) -> bool {
        // A candidate never follows a master ranked after itself.
        if let Some(m) = self.master
            && self.rank().is_some()
            && !self.outranks_me(m)
        {
            return true;
        }
        now.saturating_sub(self.last_contact) >= self.takeover_after()
    }

    /// Probe the hosts that would lead before us (all candidates when we are
    /// not one); with nobody to probe, decide at once.
    fn start_probe(&mut self, now: u64, fx: &mut Vec<Effect>) {
        let targets: Vec<String> = self
            .hosts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.me && self.outranks_me(*i))
            .map(|(_, h)| h.entry.name.clone())
            .collect();
        if targets.is_empty() {
            fx.extend(self.on_probe_results(now, Vec::new()));
        } else {
            self.probing_since = Some(now);
            fx.push(Effect::Probe { hosts: targets });
        }
    }

    /// Decide on an announcement from `from`; returns whether we follow it now.
    fn consider_master(&mut self, now: u64, from: &str, epoch: u64, fx: &mut Vec<Effect>) -> bool {
        let Some(i) = self.index(from) else {
            return false;
        };
        if i == self.me || self.hosts[i].rank.is_none() {
            return false;
        }
        self.max_epoch = self.max_epoch.max(epoch);
        if Some(i) == self.master {
            self.last_contact = now;
            self.master_heard = now;
            if epoch != self.epoch {
                self.epoch = epoch;
                fx.push(self.master_changed());
            }
            return true;
        }
        if !self.outranks_me(i) {
            // A host ranked after us claims mastership: refuse it; unless we
            // are master already, find out whether we should lead instead.
            if self.role == Role::Slave && self.probing_since.is_none() {
                self.start_probe(now, fx);
            }
            return false;
        }
        // The announcer ranks before us. Keep a current master that ranks
        // before it and was heard recently; otherwise follow the announcer.
        if let Some(m) = self.master
            && m != self.me
            && self.hosts[m].rank < self.hosts[i].rank
            && now.saturating_sub(self.master_heard) < self.takeover_after()
        {
            return false;
        }
        if self.role == Role::Master {
            self.give_in(now, i, epoch, fx);
        } else {
            self.set_master(now, Some(i), epoch, fx);
            self.last_contact = now;
        }
        true
    }

    fn give_in(&mut self, now: u64, to: usize, epoch: u64, fx: &mut Vec<Effect>) {
        self.role = Role::Slave;
        self.last_announce = None;
        self.set_master(now, Some(to), epoch, fx);
        self.last_contact = now;
    }

    fn become_master(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.role = Role::Master;
        self.epoch = self.max_epoch + 1;
        self.max_epoch = self.epoch;
        self.master = Some(self.me);
        self.became_master = now;
        // Whatever we knew of other hosts as a slave is stale: start afresh.
        for (i, h) in self.hosts.iter_mut().enumerate() {
            if i != self.me {
                h.view.load = None;
                h.view.last_heard_ms = None;
                h.view.busy.clear();
                h.view.status = HostStatus::Unknown;
            }
        }
        fx.push(self.master_changed());
        self.announce(now, fx);
        self.refresh_all(now, fx);
    }

    fn set_master(&mut self, now: u64, master: Option<usize>, epoch: u64, fx: &mut Vec<Effect>) {
        let changed = master != self.master || epoch != self.epoch;
        let new_host = master != self.master;
        self.master = master;
        self.epoch = epoch;
        if new_host {
            self.master_heard = now;
        }
        if changed {
            fx.push(self.master_changed());
        }
        if new_host
            && let Some(m) = master
            && m != self.me
        {
            // Report to the new master at once so its table fills quickly.
            self.heartbeat(now, m, fx);
        }
    }

    fn master_changed(&self) -> Effect {
        Effect::MasterChanged {
            master: self.master().map(str::to_owned),
            epoch: self.epoch,
            me_is_master: self.is_master(),
        }
    }

    fn heartbeat(&mut self, now: u64, to: usize, fx: &mut Vec<Effect>) {
        let Some(info) = self.local_info.clone() else {
            // Nothing sampled yet: the first sample triggers nothing, the next tick sends.
            return;
        };
        self.last_heartbeat = Some(now);
        fx.push(Effect::SendHeartbeat {
            to: self.hosts[to].entry.name.clone(),
            load: Box::new(self.local_load.clone()),
            info: Box::new(info),
        });
    }

    fn announce(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.last_announce = Some(now);
        let to: Vec<String> = self
            .hosts
            .iter()
            .enumerate()
            .filter(|(i, h)| *i != self.me && h.entry.server)
            .map(|(_, h)| h.entry.name.clone())
            .collect();
        if !to.is_empty() {
            fx.push(Effect::Announce {
                to,
                epoch: self.epoch,
            });
        }
    }

    // ----- host status -------------------------------------------------

    fn refresh_all(&mut self, now: u64, fx: &mut Vec<Effect>) {
        for i in 0..self.hosts.len() {
            self.refresh(i, now, fx);
        }
    }

    /// Recompute host `i`'s status and busy list (master only).
    fn refresh(&mut self, i: usize, now: u64, fx: &mut Vec<Effect>) {
        let t = self.timing;
        let limit = u64::from(t.host_inactivity_limit) * t.exinterval_ms;
        let decreasing = &self.decreasing_externals;
        let me = self.me;
        let became_master = self.became_master;
        let h = &mut self.hosts[i];
        let (status, busy) = match h.view.last_heard_ms {
            Some(t) if i == me || now.saturating_sub(t) < limit => {
                let busy = match (&h.view.load, &h.view.info) {
                    (Some(load), info) => {
                        busy_indices(&h.entry.busy_thresholds, load, info.as_ref(), decreasing)
                    }
                    (None, _) => Vec::new(),
                };
                let status = if busy.is_empty() {
                    HostStatus::Ok
                } else {
                    HostStatus::Busy
                };
                (status, busy)
            }
            Some(_) => (HostStatus::Unavail, Vec::new()),
            None if !h.entry.server || now.saturating_sub(became_master) >= limit => {
                (HostStatus::Unavail, Vec::new())
            }
            None => (HostStatus::Unknown, Vec::new()),
        };
        h.view.busy = busy;
        if h.view.status != status {
            h.view.status = status;
            fx.push(Effect::HostStatusChanged {
                host: h.entry.name.clone(),
                status,
            });
        }
    }
}

/// The indices of `load` beyond their busy thresholds. Run-queue indices are
/// compared as effective run-queue lengths (daemon-behaviour.md §2).
pub fn busy_indices(
    thresholds: &BTreeMap<String, f64>,
    load: &LoadVector,
    info: Option<&HostInfo>,
    decreasing_externals: &BTreeSet<String>,
) -> Vec<String> {
    let mut busy = Vec::new();
    for (name, &threshold) in thresholds {
        let Some(value) = load.get_by_name(name) else {
            continue;
        };
        let (value, increasing) = match LoadIndex::from_name(name) {
            Some(ix) if ix.is_run_queue() => {
                let v = info.map_or(value, |i| {
                    basalt_core::effective_run_queue(value, i.ncpus, i.cpu_factor)
                });
                (v, true)
            }
            Some(ix) => (value, ix.increasing()),
            None => (value, !decreasing_externals.contains(name)),
        };
        let over = if increasing {
            value > threshold
        } else {
            value < threshold
        };
        if over {
            busy.push(name.clone());
        }
    }
    busy
}

#[cfg(test)]
mod sim;
