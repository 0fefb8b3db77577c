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
//! A host's *rank* is its position among the master candidates: the order of
//! `LSF_MASTER_LIST` when it is set ([`CoreConfig::master_order`]), else the
//! order of the `Host` section of `lsf.cluster.<cluster>` (0 = first). Every
//! master term has an *epoch*; epochs only grow. Rules:
//!
//! * **Catching up.** A LIM that starts, or that notices it has not run for
//!   `MASTER_INACTIVITY_LIMIT` intervals (stopped, hung, starved: the gap
//!   between two of its own inputs), knows nothing it can trust: it forgets its
//!   master (a master stops being one), answers as "master unknown", and probes
//!   every other server host. The newest term the answers name (highest epoch,
//!   then lowest rank) is followed; if the answers say this host is still master
//!   for the epoch it held, it resumes; if nobody names a master, a candidate
//!   with no live lower-ranked host becomes master (rank 0 at a cold boot).
//! * The master announces itself with its epoch to every other server host each
//!   exchange interval (`EXINTERVAL`); slaves send it their load each interval.
//! * **Stale announcements.** An announcement whose epoch is below the highest
//!   epoch the receiver knows is refused (the reply names the receiver's master
//!   and epoch), whatever the announcer's rank. A master refused with a later
//!   epoch steps down and follows the master the reply names; a master whose
//!   own followers know a later epoch moves past it.
//! * **Takeover.** A slave of rank `r` that has not heard its master for
//!   `MASTER_INACTIVITY_LIMIT + RETRY_LIMIT × (r − 1)` intervals probes every
//!   lower-ranked candidate with an application-level request (answered by the
//!   LIM's core with a deadline of `PROBE_TIMEOUT`, so a hung LIM whose socket
//!   still accepts connections does not block failover) and takes over with
//!   epoch `max(seen) + 1` only if none answers. If a lower-ranked host is alive
//!   but not master, the slave waits for it. The same probe goes to every other
//!   server host as a *witness*: one that heard the silent master itself later
//!   than this LIM's latest news of it (by over half an interval) shows the
//!   master lives and only this link is down — a partial partition — and the
//!   slave keeps following instead of starting a second master that would flap
//!   with the first. A dead or hung master was last heard by everyone at about
//!   the same time, so stale news never holds a takeover up for more than a round.
//! * **Conflicts.** A master gives in to an announcement with a later epoch, or
//!   with its own epoch from a lower rank. A slave follows an announcement with
//!   a later epoch than its master's, unless its master ranks before the
//!   announcer and was heard within the takeover limit (then the reply names
//!   that master and its epoch, and the announcer gives in unless that epoch is
//!   older than its own: that is the master it took over from after a probe
//!   went unanswered).
//! * **Handover.** A candidate that follows a master ranked after it (it came
//!   back, or a partition healed) takes over only once it is in sync: it has
//!   followed that master at the newest epoch for `MASTER_INACTIVITY_LIMIT`
//!   intervals and heard it within the last two. It then probes the hosts
//!   ranked before it like any takeover, takes epoch `max(seen) + 1` and
//!   announces; the old master gives in to the later epoch. So the lowest-ranked
//!   live host ends up master, without a stale term ever winning.

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
    /// The election order of the candidates (`LSF_MASTER_LIST`); empty = file
    /// order. Candidates it leaves out rank after those it names, in file order.
    pub master_order: Vec<String>,
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
    /// How long ago the replier last heard its master itself (0 when it is the
    /// master; `None` when it follows none or is an older LIM that does not say).
    pub master_heard_ago_ms: Option<u64>,
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
    /// with [`LimCore::on_probe_results`], passing `id` back (results of an
    /// earlier probe are ignored).
    Probe { id: u64, hosts: Vec<String> },
    /// This LIM did not run for `silent_ms` (stopped or starved): it forgot its
    /// master and catches up before deciding anything.
    CatchingUp { silent_ms: u64 },
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
    /// Started or resumed after a stall: master unknown, probing everyone.
    Syncing,
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
    /// The latest time a third host's probe answer shows our master was heard
    /// (later than `master_heard` only while our own link to it is down).
    master_news: u64,
    became_master: u64,
    last_heartbeat: Option<u64>,
    last_announce: Option<u64>,
    probing_since: Option<u64>,
    /// Id of the probe whose results are awaited.
    probe_id: u64,
    /// When this LIM last took an input: a long gap means it was stopped.
    last_input: Option<u64>,
    /// The epoch this LIM was master for when it stalled (resumed if nobody moved on).
    resume_epoch: Option<u64>,
    /// When this LIM started following its current master (handover hold).
    following_since: u64,
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
        let ordered = |name: &str| {
            config
                .master_order
                .iter()
                .position(|m| basalt_core::same_host(m, name))
        };
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
        // LSF_MASTER_LIST order first, then the other candidates in file order.
        let mut order: Vec<usize> = (0..hosts.len())
            .filter(|&i| hosts[i].rank.is_some())
            .collect();
        order.sort_by_key(|&i| (ordered(&hosts[i].entry.name).unwrap_or(usize::MAX), i));
        for (r, i) in order.into_iter().enumerate() {
            hosts[i].rank = Some(r);
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
            role: Role::Syncing,
            master: None,
            epoch: 0,
            max_epoch: 0,
            last_contact: 0,
            master_heard: 0,
            master_news: 0,
            became_master: 0,
            last_heartbeat: None,
            last_announce: None,
            probing_since: None,
            probe_id: 0,
            last_input: None,
            resume_epoch: None,
            following_since: 0,
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

    /// The LIM starts: it catches up first (probes every other server host to
    /// learn the master and its epoch), then follows or takes over.
    pub fn start(&mut self, now: u64) -> Vec<Effect> {
        self.started = true;
        self.last_contact = now;
        self.last_input = Some(now);
        self.role = Role::Syncing;
        let mut fx = Vec::new();
        self.start_probe(now, &mut fx);
        fx
    }

    /// Any input at `now` (the daemon calls this before serving a query): if
    /// this LIM has not run for `MASTER_INACTIVITY_LIMIT` intervals it forgets
    /// its master and catches up.
    pub fn wake(&mut self, now: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        fx
    }

    /// Timer: heartbeats, announcements, takeover and host-status checks.
    pub fn tick(&mut self, now: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.started {
            return fx;
        }
        self.observe(now, &mut fx);
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
            Role::Syncing => {
                if self.probing_since.is_none() {
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
        self.observe(now, &mut fx);
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
                epoch: self.reported_epoch(),
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
        self.observe(now, &mut fx);
        let accepted = self.consider_master(now, from, epoch, &mut fx);
        (
            AnnounceReply {
                accepted,
                master: self.master().map(str::to_owned),
                // Accepted: the latest term we know (the master moves past it);
                // refused: the term of the master we name.
                epoch: if accepted {
                    self.max_epoch
                } else {
                    self.reported_epoch()
                },
            },
            fx,
        )
    }

    /// `from` asks whether this LIM is alive and whom it follows. A LIM that
    /// is catching up answers "master unknown" with the highest epoch it knows.
    pub fn on_probe(&mut self, now: u64, _from: &str) -> (ProbeReply, Vec<Effect>) {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        (
            ProbeReply {
                host: self.me().to_owned(),
                is_master: self.is_master(),
                master: self.master().map(str::to_owned),
                epoch: self.reported_epoch(),
                master_heard_ago_ms: match self.role {
                    Role::Master => Some(0),
                    Role::Slave if self.master.is_some() => {
                        Some(now.saturating_sub(self.master_heard))
                    }
                    _ => None,
                },
            },
            fx,
        )
    }

    /// The master answered our heartbeat.
    pub fn on_heartbeat_reply(&mut self, now: u64, reply: HeartbeatReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if self.role != Role::Slave {
            self.max_epoch = self.max_epoch.max(reply.epoch);
            return fx;
        }
        if reply.accepted {
            if reply.epoch >= self.max_epoch {
                self.last_contact = now;
                self.master_heard = now;
                self.epoch = reply.epoch;
            }
            self.max_epoch = self.max_epoch.max(reply.epoch);
            return fx;
        }
        // The host we report to is no longer master: follow whom it names if
        // that is the newest term we know (we catch up; a handover may follow).
        if reply.epoch >= self.max_epoch
            && let Some(m) = reply.master.as_deref()
            && let Some(i) = self.index(m)
            && Some(i) != self.master
            && i != self.me
            && self.hosts[i].rank.is_some()
        {
            self.max_epoch = reply.epoch;
            self.set_master(now, Some(i), reply.epoch, &mut fx);
            self.last_contact = now;
        }
        self.max_epoch = self.max_epoch.max(reply.epoch);
        fx
    }

    /// Our heartbeat to the master could not be delivered.
    pub fn on_heartbeat_failed(&mut self, now: u64) -> Vec<Effect> {
        // The takeover timer decides; a single lost heartbeat changes nothing.
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        fx
    }

    /// `to` answered our announcement.
    pub fn on_announce_reply(&mut self, now: u64, to: &str, reply: AnnounceReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        self.max_epoch = self.max_epoch.max(reply.epoch);
        if self.role != Role::Master {
            return fx;
        }
        let named = reply.master.as_deref().and_then(|m| self.index(m));
        if reply.accepted || named == Some(self.me) {
            if reply.epoch > self.epoch {
                // A follower saw a later term than ours: move past it.
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
        match named {
            // Our term is stale: follow the newer master and catch up.
            Some(i) if reply.epoch > self.epoch && self.hosts[i].rank.is_some() => {
                self.give_in(now, i, reply.epoch, &mut fx);
            }
            // The host follows a lower-ranked master it heard recently, at our
            // term or a later one. (An older term named there is the master we
            // took over from because it did not answer our probe: the host
            // follows us once that master has been silent for its limit.)
            Some(i) if self.outranks_me(i) && reply.epoch >= self.epoch => {
                self.give_in(now, i, reply.epoch, &mut fx);
            }
            // A later term exists but the host cannot say whose: find out.
            None if reply.epoch > self.epoch => self.catch_up(now, &mut fx),
            _ => {}
        }
        fx
    }

    /// Results of the probe requested by [`Effect::Probe`] `id` (`None` = no answer).
    pub fn on_probe_results(
        &mut self,
        now: u64,
        id: u64,
        results: Vec<(String, Option<ProbeReply>)>,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if id != self.probe_id {
            return fx;
        }
        let started = self.probing_since.take().unwrap_or(now);
        if self.role == Role::Master {
            return fx;
        }
        let syncing = self.role == Role::Syncing;
        let mut alive_before = false;
        // The newest term any answer names: (master, epoch).
        let mut newest: Option<(usize, u64)> = None;
        for (host, reply) in &results {
            let Some(reply) = reply else { continue };
            let Some(i) = self.index(host) else { continue };
            if i == self.me {
                continue;
            }
            self.max_epoch = self.max_epoch.max(reply.epoch);
            if self.outranks_me(i) {
                alive_before = true;
            }
            let claim = if reply.is_master {
                Some(i)
            } else {
                reply.master.as_deref().and_then(|m| self.index(m))
            };
            // Word of our own silent master from a third host counts only when that
            // host heard it later than our latest news of it (by over half an
            // interval; its answer came after `started`, so `started - ago` is the
            // earliest it can have heard it): then the master lives and only our
            // link to it is down (a partial partition), and taking over would make
            // two masters flap. Otherwise it is the same stale news we have — a
            // dead master was last heard by everyone at about the same time.
            let claim = match claim {
                Some(m)
                    if !syncing && !reply.is_master && Some(m) == self.master && m != self.me =>
                {
                    let known = self.master_heard.max(self.master_news);
                    let heard = reply
                        .master_heard_ago_ms
                        .map(|ago| started.saturating_sub(ago))
                        .filter(|&t| t > known + self.timing.exinterval_ms / 2);
                    if let Some(t) = heard {
                        self.master_news = t;
                    }
                    heard.map(|_| m)
                }
                c => c,
            };
            if let Some(m) = claim
                && self.hosts[m].rank.is_some()
                && newest.is_none_or(|(b, e)| {
                    reply.epoch > e || (reply.epoch == e && self.hosts[m].rank < self.hosts[b].rank)
                })
            {
                newest = Some((m, reply.epoch));
            }
        }
        if let Some((m, e)) = newest
            && e >= self.max_epoch
        {
            if m == self.me {
                if syncing && self.resume_epoch == Some(e) {
                    // Nobody moved on while we were away: resume the term.
                    self.resume(now, e, &mut fx);
                    return fx;
                }
            } else if syncing
                || self.outranks_me(m)
                || e > self.epoch
                || self.master.is_none()
                || self.master.is_some_and(|c| !self.outranks_me(c) && c != m)
            {
                self.role = Role::Slave;
                self.resume_epoch = None;
                self.set_master(now, Some(m), e, &mut fx);
                self.last_contact = now;
                return fx;
            }
        }
        self.resume_epoch = None;
        if alive_before || self.rank().is_none() {
            // A better-placed host lives (it leads or will take over itself),
            // or we may never lead: wait and look again later.
            if syncing {
                self.role = Role::Slave;
            }
            self.last_contact = now;
        } else {
            self.become_master(now, &mut fx);
        }
        fx
    }

    /// This host's own load and static information (the sampler's output).
    pub fn set_local(&mut self, now: u64, load: LoadVector, info: HostInfo) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
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

    /// The epoch this LIM reports: its master's, or (catching up) the highest it knows.
    fn reported_epoch(&self) -> u64 {
        if self.role == Role::Syncing {
            self.max_epoch
        } else {
            self.epoch
        }
    }

    /// How long without input means this LIM was stopped: the time after
    /// which the others may have elected someone else.
    fn stall_after(&self) -> u64 {
        u64::from(self.timing.master_inactivity_limit) * self.timing.exinterval_ms
    }

    /// Note an input at `now`; after a stall, forget the master and catch up.
    fn observe(&mut self, now: u64, fx: &mut Vec<Effect>) {
        if !self.started {
            return;
        }
        let last = self.last_input.unwrap_or(now);
        self.last_input = Some(last.max(now));
        let silent = now.saturating_sub(last);
        if silent >= self.stall_after() {
            fx.push(Effect::CatchingUp { silent_ms: silent });
            self.catch_up(now, fx);
        }
    }

    /// Forget the master (stepping down if we are it) and probe every other
    /// server host to learn the current term.
    fn catch_up(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.resume_epoch = match self.role {
            Role::Master => Some(self.epoch),
            Role::Syncing => self.resume_epoch,
            Role::Slave => None,
        };
        self.role = Role::Syncing;
        self.last_announce = None;
        self.last_contact = now;
        if self.master.is_some() {
            self.master = None;
            fx.push(self.master_changed());
        }
        self.start_probe(now, fx);
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
        let silent = now.saturating_sub(self.last_contact) >= self.takeover_after();
        // A candidate following a master ranked after itself takes over once in sync.
        if let Some(m) = self.master
            && m != self.me
            && self.rank().is_some()
            && !self.outranks_me(m)
        {
            let ex = self.timing.exinterval_ms;
            let in_sync = self.epoch >= self.max_epoch
                && self.master_heard > self.following_since
                && now.saturating_sub(self.following_since) >= self.stall_after()
                && now.saturating_sub(self.master_heard) <= 2 * ex;
            return silent || in_sync;
        }
        silent
    }

    /// Probe every other server host: those that would lead before us decide
    /// whether we may, the others witness whether our silent master still lives
    /// (catching up, all answers count); with nobody to probe, decide at once.
    fn start_probe(&mut self, now: u64, fx: &mut Vec<Effect>) {
        let targets: Vec<String> = self
            .hosts
            .iter()
            .enumerate()
            .filter(|(i, h)| *i != self.me && (h.entry.server || self.outranks_me(*i)))
            .map(|(_, h)| h.entry.name.clone())
            .collect();
        self.probe_id += 1;
        let id = self.probe_id;
        if targets.is_empty() {
            fx.extend(self.on_probe_results(now, id, Vec::new()));
        } else {
            self.probing_since = Some(now);
            fx.push(Effect::Probe { id, hosts: targets });
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
        if self.role == Role::Slave && Some(i) == self.master {
            // Our master (the reply tells it of any later epoch we know).
            self.last_contact = now;
            self.master_heard = now;
            if epoch != self.epoch {
                self.epoch = epoch;
                fx.push(self.master_changed());
            }
            self.max_epoch = self.max_epoch.max(epoch);
            return true;
        }
        if epoch < self.max_epoch {
            // A stale term, whoever announces it.
            return false;
        }
        self.max_epoch = epoch;
        match self.role {
            Role::Master => {
                if epoch > self.epoch || (epoch == self.epoch && self.outranks_me(i)) {
                    self.give_in(now, i, epoch, fx);
                    true
                } else {
                    false
                }
            }
            Role::Syncing => {
                // The newest term we know of: that is catching up.
                self.give_in(now, i, epoch, fx);
                true
            }
            Role::Slave => {
                // Keep a current master that ranks before the announcer and
                // was heard recently; otherwise follow a later term, or the
                // same term from a better-ranked host.
                if let Some(m) = self.master
                    && m != self.me
                    && self.hosts[m].rank < self.hosts[i].rank
                    && now.saturating_sub(self.master_heard) < self.takeover_after()
                {
                    return false;
                }
                let better = match self.master {
                    None => true,
                    Some(m) => {
                        epoch > self.epoch
                            || self.hosts[i].rank < self.hosts[m].rank
                            || now.saturating_sub(self.master_heard) >= self.takeover_after()
                    }
                };
                if better {
                    self.set_master(now, Some(i), epoch, fx);
                    self.last_contact = now;
                }
                better
            }
        }
    }

    fn give_in(&mut self, now: u64, to: usize, epoch: u64, fx: &mut Vec<Effect>) {
        self.role = Role::Slave;
        self.resume_epoch = None;
        self.last_announce = None;
        self.max_epoch = self.max_epoch.max(epoch);
        self.set_master(now, Some(to), epoch, fx);
        self.last_contact = now;
    }

    /// Take the master role back for `epoch` after a stall nobody acted on.
    fn resume(&mut self, now: u64, epoch: u64, fx: &mut Vec<Effect>) {
        self.forget_probe();
        self.role = Role::Master;
        self.resume_epoch = None;
        self.epoch = epoch;
        self.master = Some(self.me);
        fx.push(self.master_changed());
        self.announce(now, fx);
        self.refresh_all(now, fx);
    }

    /// Ignore the results of the probe in flight.
    fn forget_probe(&mut self) {
        self.probe_id += 1;
        self.probing_since = None;
    }

    fn become_master(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.forget_probe();
        self.role = Role::Master;
        self.resume_epoch = None;
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
        if changed {
            self.following_since = now;
        }
        if new_host {
            // A probe sent under the previous master decides nothing now.
            self.forget_probe();
        }
        if new_host {
            self.master_heard = now;
            self.master_news = now;
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
