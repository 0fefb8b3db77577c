//! What LIMs say to each other and what the core asks of its runtime: the replies to
//! heartbeats, announcements and probes, and the [`Effect`]s.

use basalt_core::{HostInfo, LoadVector};

use crate::HostStatus;

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
    /// How long ago the replier last took an announcement from its master (0 when it
    /// is the master; `None` when it follows none or is an older LIM that does not
    /// say).
    pub master_heard_ago_ms: Option<u64>,
}

/// What the runtime must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this host's load to the master; report the reply with
    /// [`LimCore::on_heartbeat_reply`] or [`LimCore::on_heartbeat_failed`].
    ///
    /// [`LimCore::on_heartbeat_reply`]: crate::LimCore::on_heartbeat_reply
    /// [`LimCore::on_heartbeat_failed`]: crate::LimCore::on_heartbeat_failed
    SendHeartbeat {
        to: String,
        load: Box<LoadVector>,
        info: Box<HostInfo>,
        /// This host is locked (`lsadmin limlock`).
        locked: bool,
    },
    /// Announce mastership to these hosts; report each reply with
    /// [`LimCore::on_announce_reply`] (a failed send needs no report).
    ///
    /// [`LimCore::on_announce_reply`]: crate::LimCore::on_announce_reply
    Announce { to: Vec<String>, epoch: u64 },
    /// Probe these hosts, each with `PROBE_TIMEOUT`; report all results together
    /// with [`LimCore::on_probe_results`], passing `id` back (results of an
    /// earlier probe are ignored).
    ///
    /// [`LimCore::on_probe_results`]: crate::LimCore::on_probe_results
    Probe { id: u64, hosts: Vec<String> },
    /// This LIM did not run for `silent_ms` (stopped or starved): it forgot its
    /// master and catches up before deciding anything.
    CatchingUp { silent_ms: u64 },
    /// This LIM, which can never be master, did not run for `silent_ms`: it keeps its
    /// master, or waits for the answers to its probe (see [`crate::LimCore::wake`]).
    Stalled { silent_ms: u64 },
    /// The master (as this LIM sees it) changed.
    MasterChanged {
        master: Option<String>,
        epoch: u64,
        me_is_master: bool,
    },
    /// A host's status changed in the master's table.
    HostStatusChanged { host: String, status: HostStatus },
}
