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
//!   A host that can never be master and follows one keeps it after a stall (it
//!   decides nothing; its next report, or the refusal naming a new master, tells it
//!   the rest).
//! * The master announces itself with its epoch to every other server host each
//!   exchange interval (`EXINTERVAL`); slaves send it their load each interval.
//!   **Large clusters**: past the master's budget of load reports
//!   ([`CoreConfig::load_reports_per_sec`]), the hosts that can never be master
//!   report every [`LimCore::report_interval_ms`] (a multiple of `EXINTERVAL`) and
//!   hear the announcement every [`FAR_ANNOUNCE_REPORTS`] of those, spread over the
//!   ticks; the candidates and their probes' witnesses keep `EXINTERVAL`, so
//!   elections and failover keep their timing, and a new master announces to every
//!   host at once.
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
//!   server host as a *witness*: one that took an announcement from the silent
//!   master later than this LIM's latest news of it (by over half an interval)
//!   shows the master lives and only this link is down — a partial partition —
//!   and the slave keeps following instead of starting a second master that
//!   would flap with the first. A dead or hung master's last announcement
//!   reached everyone at the same time (announcements go to every host at once;
//!   heartbeat replies, whose phase differs from host to host, are not
//!   compared), so stale news does not hold a takeover up.
//! * **Conflicts.** A master gives in to an announcement with a later epoch, or
//!   with its own epoch from a lower rank. A slave follows an announcement with
//!   a later epoch than its master's, unless its master ranks before the
//!   announcer and was heard within the takeover limit (then the reply names
//!   that master and its epoch, and the announcer gives in unless that epoch is
//!   older than its own: that is the master it took over from after a probe
//!   went unanswered). That exception does not hold when the master has not
//!   been heard (by us, nor by any witness we asked) since the announcer's last
//!   probe asked us about it: the announcer took over because that probe found
//!   the master silent — not answering it, and no witness, us included, with
//!   later news — so every host it asked follows the new master at its first
//!   announcement rather than after its own, longer, limit (the takeover sends
//!   nothing more: the probe and the announcement to every host were there
//!   already).
//! * **Handover.** A candidate that follows a master ranked after it (it came
//!   back, or a partition healed) takes over only once it is in sync: it has
//!   followed that master at the newest epoch for `MASTER_INACTIVITY_LIMIT`
//!   intervals and heard it within the last two. It then probes the hosts
//!   ranked before it like any takeover, takes epoch `max(seen) + 1` and
//!   announces; the old master gives in to the later epoch. So the lowest-ranked
//!   live host ends up master, without a stale term ever winning.
//!
//! # Layout
//!
//! This file holds the configuration ([`CoreConfig`], [`Timing`]), the state
//! ([`LimCore`]), its construction and its queries. `inputs` has the inputs,
//! `election` the election internals, `hosts` the master's host table and busy
//! thresholds, `lock` this host's `lsadmin limlock`, `messages` the replies and
//! [`Effect`]s; `sim` (tests only) is a simulated network of cores.

mod election;
pub use election::MAX_WITNESSES;
mod hosts;
mod inputs;
mod lock;
mod messages;

pub use hosts::{HostStatus, HostView, busy_indices};
pub use lock::LockError;
pub use messages::{AnnounceReply, Effect, HeartbeatReply, ProbeReply};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use basalt_core::{HostInfo, LoadVector};

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
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// The host this LIM plays.
    pub me: String,
    /// The cluster's hosts, shared by every core of a process ([`CoreHosts`]).
    pub hosts: Arc<CoreHosts>,
    /// Whether this host may be master where the table says it is a candidate
    /// (false with `LIM_COMPUTE_ONLY`: it then never leads, whatever the others think).
    pub me_candidate: bool,
    pub timing: Timing,
    /// External indices where a smaller value means more loaded (INCREASING = N).
    pub decreasing_externals: BTreeSet<String>,
    /// How many load reports a second the master takes from the hosts that can never
    /// be master ([`DEFAULT_LOAD_REPORTS_PER_SEC`]); past that, those hosts report
    /// (and are announced to) less often: see [`LimCore::report_interval_ms`].
    pub load_reports_per_sec: u64,
}

/// The cluster's hosts as the election sees them — the same in every LIM of the
/// cluster, so built once and shared by every core of a process (one LIM per host
/// on a real host; thousands in a hollow-host process, where a table per core would
/// cost hosts² memory).
#[derive(Debug)]
pub struct CoreHosts {
    entries: Vec<HostEntry>,
    /// Rank among candidates (None: never master).
    rank: Vec<Option<usize>>,
    /// A candidate, or a witness of one (a probe of a candidate asks it whether the
    /// master lives): announced to every `EXINTERVAL` whatever the cluster's size.
    near: Vec<bool>,
    /// Host indices by [`basalt_core::host_key`]: a name is found without a scan.
    by_key: HashMap<String, Vec<usize>>,
    /// Server hosts that can never be master.
    far: u64,
}

impl CoreHosts {
    /// The hosts in file order; `master_order`: the election order of the candidates
    /// (`LSF_MASTER_LIST`); empty = file order. Candidates it leaves out rank after
    /// those it names, in file order.
    pub fn new(entries: Vec<HostEntry>, master_order: &[String]) -> Result<CoreHosts, CoreError> {
        let n = entries.len();
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::with_capacity(n);
        for (k, entry) in entries.iter().enumerate() {
            let same = by_key
                .entry(basalt_core::host_key(&entry.name))
                .or_default();
            if same
                .iter()
                .any(|&i| basalt_core::same_host(&entries[i].name, &entry.name))
            {
                return Err(CoreError::DuplicateHost(entry.name.clone()));
            }
            same.push(k);
        }
        let ordered = |name: &str| {
            master_order
                .iter()
                .position(|m| basalt_core::same_host(m, name))
        };
        // LSF_MASTER_LIST order first, then the other candidates in file order.
        let mut order: Vec<usize> = (0..n)
            .filter(|&i| entries[i].candidate && entries[i].server)
            .collect();
        if order.is_empty() {
            return Err(CoreError::NoCandidate);
        }
        order.sort_by_key(|&i| (ordered(&entries[i].name).unwrap_or(usize::MAX), i));
        let mut rank = vec![None; n];
        for (r, i) in order.into_iter().enumerate() {
            rank[i] = Some(r);
        }
        // The candidates and the witnesses of their probes.
        let mut near = vec![false; n];
        for c in (0..n).filter(|&c| rank[c].is_some()) {
            near[c] = true;
            for i in witnesses(&entries, &rank, c) {
                near[i] = true;
            }
        }
        let far = (0..n)
            .filter(|&i| rank[i].is_none() && entries[i].server)
            .count() as u64;
        Ok(CoreHosts {
            entries,
            rank,
            near,
            by_key,
            far,
        })
    }

    /// The witnesses a probe of candidate `c` asks (see [`witnesses`]).
    pub(crate) fn witnesses_of(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        witnesses(&self.entries, &self.rank, c)
    }

    /// The index of host `name`.
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.by_key
            .get(&basalt_core::host_key(name))?
            .iter()
            .copied()
            .find(|&i| basalt_core::same_host(&self.entries[i].name, name))
    }

    /// The hosts in file order.
    pub fn entries(&self) -> &[HostEntry] {
        &self.entries
    }

    /// How many hosts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The witnesses of a probe by candidate `c`: the first [`MAX_WITNESSES`] server hosts
/// after it in file order (wrapping) that can never be master — so the probes of a
/// cold boot spread over the cluster instead of every host asking every other one.
fn witnesses<'a>(
    entries: &'a [HostEntry],
    rank: &'a [Option<usize>],
    c: usize,
) -> impl Iterator<Item = usize> + 'a {
    let n = entries.len();
    (1..n)
        .map(move |k| (c + k) % n)
        .filter(move |&i| rank[i].is_none() && entries[i].server)
        .take(MAX_WITNESSES)
}

/// The master LIM's budget of load reports a second from hosts that can never be
/// master: 1,000 (a tenth of a core for the reports and their replies on this
/// project's reference machine). Clusters of up to `EXINTERVAL` × 1,000 such hosts
/// report every `EXINTERVAL` as always; a larger one stretches their interval.
pub const DEFAULT_LOAD_REPORTS_PER_SEC: u64 = 1000;

/// A host that reports less often than every `EXINTERVAL` hears the master's
/// announcement once per this many of its report intervals (LSF announces to every
/// host about once a minute); its heartbeat replies name the master in between.
pub const FAR_ANNOUNCE_REPORTS: u64 = 6;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Master,
    Slave,
    /// Started or resumed after a stall: master unknown, probing everyone.
    Syncing,
}

/// A host in the master's table.
#[derive(Debug, Clone)]
struct Seen {
    view: HostView,
    /// Its last heartbeat said it is locked (`lsadmin limlock`).
    locked: bool,
    /// The table's version when its record last changed ([`LimCore::changed_since`]).
    changed: u64,
}

/// The election state machine and host table of one LIM.
#[derive(Debug, Clone)]
pub struct LimCore {
    me: usize,
    /// Whether this host may lead where the table says it is a candidate.
    me_candidate: bool,
    hosts: Arc<CoreHosts>,
    /// The master's table, by host index: empty until this LIM first leads (a LIM
    /// that never leads holds nothing per host).
    seen: Vec<Seen>,
    /// When each host that probed us last did (our clock): the answer told it how long
    /// ago we had heard our master, for its takeover decision.
    probed_me_at: HashMap<usize, u64>,
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
    /// When this LIM last took an announcement from its master. The master
    /// announces to every host at once, so a master that died or hung was last
    /// announced at the same time everywhere — unlike heartbeat replies, whose
    /// phase differs from host to host: this is what takeover probes compare.
    master_announced: u64,
    /// The latest time a third host's probe answer shows our master announced
    /// (later than `master_announced` only while our own link to it is down).
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
    /// This host's lock (`lsadmin limlock`).
    lock: lock::Lock,
    /// How often a host that can never be master reports its load (and the master
    /// announces to it, times [`FAR_ANNOUNCE_REPORTS`]), milliseconds: a multiple
    /// of `EXINTERVAL`.
    report_ms: u64,
    /// Announcements sent, for spreading those to the far hosts over the ticks.
    announce_round: u64,
    /// The master table's version: bumped by every change of a host's record.
    version: u64,
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
        let hosts = config.hosts;
        let me = hosts
            .index(&config.me)
            .ok_or(CoreError::UnknownHost(config.me))?;
        let others_lead = hosts
            .rank
            .iter()
            .enumerate()
            .any(|(i, r)| i != me && r.is_some());
        if !config.me_candidate && !others_lead {
            return Err(CoreError::NoCandidate);
        }
        let far = hosts.far;
        let per_interval =
            (config.load_reports_per_sec.saturating_mul(t.exinterval_ms) / 1000).max(1);
        let report_ms = far.div_ceil(per_interval).max(1) * t.exinterval_ms;
        Ok(LimCore {
            me,
            me_candidate: config.me_candidate,
            hosts,
            seen: Vec::new(),
            probed_me_at: HashMap::new(),
            timing: t,
            decreasing_externals: config.decreasing_externals,
            role: Role::Syncing,
            master: None,
            epoch: 0,
            max_epoch: 0,
            last_contact: 0,
            master_heard: 0,
            master_announced: 0,
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
            lock: lock::Lock::Unlocked,
            report_ms,
            announce_round: 0,
            version: 0,
        })
    }

    // ----- queries -------------------------------------------------------

    /// This LIM's host name.
    pub fn me(&self) -> &str {
        &self.hosts.entries[self.me].name
    }

    /// Whether this LIM is the master.
    pub fn is_master(&self) -> bool {
        self.role == Role::Master
    }

    /// The master as this LIM sees it.
    pub fn master(&self) -> Option<&str> {
        self.master.map(|i| self.hosts.entries[i].name.as_str())
    }

    /// The current master's epoch (0 = no master known yet).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// This host's rank among master candidates (None = never master).
    pub fn rank(&self) -> Option<usize> {
        self.rank_of(self.me)
    }

    /// The host table in cluster-file order: a LIM that has led at some time
    /// (meaningful on the master); empty on one that never has.
    pub fn hosts(&self) -> impl Iterator<Item = &HostView> {
        self.seen.iter().map(|h| &h.view)
    }

    /// The master table's version: it grows with every change of a host's record
    /// (load, information, status, busy indices, lock), within one term
    /// ([`LimCore::epoch`] names the table: a new term's table starts afresh).
    pub fn table_version(&self) -> u64 {
        self.version
    }

    /// The hosts of the table whose record changed after `version` (of this term's
    /// table), in file order: what a poller that saw that version needs.
    pub fn changed_since(&self, version: u64) -> impl Iterator<Item = &HostView> {
        self.seen
            .iter()
            .filter(move |h| h.changed > version)
            .map(|h| &h.view)
    }

    /// One host of the table (see [`LimCore::hosts`]).
    pub fn host(&self, name: &str) -> Option<&HostView> {
        self.index(name)
            .and_then(|i| self.seen.get(i))
            .map(|h| &h.view)
    }

    /// A host's busy thresholds from the cluster file.
    pub fn busy_thresholds(&self, name: &str) -> Option<&BTreeMap<String, f64>> {
        self.index(name)
            .map(|i| &self.hosts.entries[i].busy_thresholds)
    }

    /// The timing in force.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// How often a host that can never be master reports its load to the master,
    /// milliseconds: `EXINTERVAL`, or in a cluster with more such hosts than the
    /// master takes reports in an interval ([`CoreConfig::load_reports_per_sec`]),
    /// the multiple of `EXINTERVAL` that keeps their reports within that budget
    /// (10 s for 10,000 hosts and `EXINTERVAL = 1`). Master candidates always report
    /// every `EXINTERVAL` and the master announces to them (and to their probes'
    /// witnesses) every `EXINTERVAL`, so failover keeps its timing; the other hosts
    /// hear the master's announcement every [`FAR_ANNOUNCE_REPORTS`] report intervals,
    /// spread over the ticks, and at once when a new master takes over. The master
    /// marks such a host unavailable after two missed reports
    /// ([`LimCore::host_inactivity_ms`]).
    pub fn report_interval_ms(&self) -> u64 {
        self.report_ms
    }

    /// How often the runtime should call [`LimCore::tick`], milliseconds: a quarter of
    /// this host's report interval (`EXINTERVAL` for a candidate; a host that reports
    /// less often has nothing to do in between, and ten thousand of them in one
    /// hollow-host process would wake four times a second for nothing).
    pub fn tick_interval_ms(&self) -> u64 {
        (self.my_report_ms() / 4).max(5)
    }

    /// Whether this LIM talks to host `name` every `EXINTERVAL` (so that a runtime
    /// keeps a connection to it): in a cluster within the master's report budget,
    /// every host; else a master candidate, and for the master also the candidates'
    /// witnesses — not the hosts it announces to only every few report intervals.
    pub fn keeps_contact(&self, name: &str) -> bool {
        if self.report_ms == self.timing.exinterval_ms {
            return true;
        }
        self.index(name)
            .is_some_and(|i| self.rank_of(i).is_some() || (self.is_master() && self.hosts.near[i]))
    }

    /// How long host `name` may stay silent before the master marks it unavailable:
    /// `HOST_INACTIVITY_LIMIT` intervals, or for a host that reports less often
    /// ([`LimCore::report_interval_ms`]), two of its report intervals and one
    /// `EXINTERVAL` if that is longer.
    pub fn host_inactivity_ms(&self, name: &str) -> Option<u64> {
        self.index(name).map(|i| self.inactivity_limit(i))
    }
}

#[cfg(test)]
mod sim;
