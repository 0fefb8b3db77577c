//! The messages the owner thread serves and the answers it sends back.
//!
//! Requests from clients carry domain values (`basalt-sched`, `basalt-core`) and the
//! caller proven by the credential, never a caller the request named: the gRPC service
//! ([`crate::service`]) checks and translates each request, and turns the domain answers
//! back into wire replies. The query answers (jobs, queues, hosts, params) are domain
//! snapshots the owner takes from the core's state (`basalt_sched::views`); the service
//! builds their wire replies (`basalt-wire`), off the owner thread.

use crate::dispatch::DispatchError;
use crate::lim_poller::LimHost;
use basalt_sched::{
    Ack, Caller, HostJob, HostsView, JobKey, JobQuery, JobsView, ParamsView, QueuesView, Report,
    SchedError, Submission,
};
use tokio::sync::oneshot;

pub(crate) type Reply<T> = oneshot::Sender<T>;

/// Job ids as a request names them: a job (`123`, every element of an array) or an
/// element (`123[4]`).
pub(crate) type JobIds = Vec<(u64, Option<u32>)>;

/// One job's answer to a job-control request: the detail (bswitch: the new queue,
/// btop/bbot: the new position) or why it was refused.
pub(crate) type JobOutcome = (JobKey, Result<String, SchedError>);

/// One queue's or host's answer to `badmin q*`/`h*`.
pub(crate) type CtlOutcome = (String, Result<(), SchedError>);

/// An accepted submission.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Submitted {
    pub(crate) job_id: u64,
    pub(crate) queue: String,
    pub(crate) default_queue: bool,
}

/// What `bkill`, `bstop`, `bresume` and `bkill -s` ask for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JobSignal {
    /// `bkill` (`-r`: remove without waiting for sbatchd; `-d`: record as DONE).
    Kill {
        remove: bool,
        as_done: bool,
    },
    Stop,
    Resume,
    /// `bkill -s SIG`: the signal's name without SIG, or its number.
    Signal(String),
    /// `brequeue`.
    Requeue {
        states: basalt_sched::RequeueStates,
        hold: bool,
    },
    /// `bmig [-f] [-m hosts]`.
    Migrate {
        hosts: Vec<String>,
        force: bool,
    },
    /// `bchkpnt [-f] [-k] [-p period]` (period in seconds).
    Chkpnt {
        kill: bool,
        force: bool,
        period: Option<i64>,
    },
}

/// What the owner tells an sbatchd that says hello.
#[derive(Debug, Clone)]
pub(crate) struct HelloAnswer {
    pub(crate) epoch: u64,
    /// The jobs mbatchd believes run on that host.
    pub(crate) jobs: Vec<HostJob>,
    pub(crate) sbd_sleep_time: u32,
    pub(crate) job_terminate_interval: u32,
    pub(crate) hello_interval: u32,
}

/// Requests and results the owner thread serves.
#[derive(Debug)]
pub(crate) enum Msg {
    Submit {
        caller: Caller,
        sub: Box<Submission>,
        env: Vec<String>,
        is_script: bool,
        /// `bsub -app` ("" = none): checked against lsb.applications, not kept.
        app: String,
        reply: Reply<Result<Submitted, SchedError>>,
    },
    Jobs {
        query: JobQuery,
        reply: Reply<JobsView>,
    },
    /// The keys a query finds, in listing order, and the ids it did not find (a
    /// listing in pages: `JobsPages`).
    JobKeys {
        query: JobQuery,
        reply: Reply<JobKeys>,
    },
    /// One page of such a listing.
    JobsPage {
        keys: Vec<basalt_sched::JobKey>,
        reply: Reply<JobsView>,
    },
    Signal {
        caller: Caller,
        /// Without job 0; see `all`.
        ids: JobIds,
        /// Job 0 was named: every job this query finds, after `ids`.
        all: Option<JobQuery>,
        signal: JobSignal,
        reply: Reply<Vec<JobOutcome>>,
    },
    Switch {
        caller: Caller,
        ids: JobIds,
        queue: String,
        reply: Reply<Vec<JobOutcome>>,
    },
    /// bmod of a job, an element, or (no index) an array's elements.
    Modify {
        caller: Caller,
        id: (u64, Option<u32>),
        change: Box<basalt_sched::Modify>,
        reply: Reply<JobOutcome>,
    },
    Move {
        caller: Caller,
        ids: JobIds,
        /// 1-based; 0 = 1.
        position: u32,
        from_bottom: bool,
        reply: Reply<Vec<JobOutcome>>,
    },
    Force {
        caller: Caller,
        ids: JobIds,
        hosts: Vec<String>,
        /// `brun -f`.
        force: bool,
        reply: Reply<Vec<JobOutcome>>,
    },
    Queues {
        /// Empty: all queues.
        names: Vec<String>,
        reply: Reply<QueuesView>,
    },
    Hosts {
        /// Empty: all hosts.
        names: Vec<String>,
        reply: Reply<HostsView>,
    },
    Params {
        reply: Reply<ParamsView>,
    },
    Limits {
        reply: Reply<(Vec<basalt_sched::views::LimitRow>, usize)>,
    },
    Apps {
        names: Vec<String>,
        reply: Reply<(Vec<basalt_sched::views::AppRow>, Vec<String>)>,
    },
    /// MultiCluster: news from the link to a remote cluster.
    McLink {
        cluster: String,
        news: crate::mc::LinkNews,
    },
    /// MultiCluster: a verified request of another cluster's mbatchd.
    McIn {
        cluster: String,
        req: crate::mc::Incoming,
    },
    /// bclusters.
    Clusters {
        reply: Reply<basalt_proto::mbatchd::ClustersReply>,
    },
    /// A scrape of `GET /metrics`: the core's counters.
    Metrics {
        reply: Reply<crate::metrics::Snapshot>,
    },
    /// bhpart.
    HostPartitions {
        names: Vec<String>,
        reply: Reply<(Vec<basalt_sched::fairshare::PartitionView>, Vec<String>)>,
    },
    /// bslots.
    Slots {
        res_req: String,
        reply: Reply<Result<Vec<basalt_sched::views::SlotWindow>, basalt_sched::SchedError>>,
    },
    Users {
        names: Vec<String>,
        all: bool,
        reply: Reply<Vec<basalt_sched::views::UserRow>>,
    },
    QueueCtl {
        caller: Caller,
        op: u32,
        queues: Vec<String>,
        message: String,
        reply: Reply<Vec<CtlOutcome>>,
    },
    HostCtl {
        caller: Caller,
        op: u32,
        hosts: Vec<String>,
        message: String,
        reply: Reply<Vec<CtlOutcome>>,
    },
    Reconfig {
        caller: Caller,
        /// `badmin mbdrestart` rather than `badmin reconfig`.
        restart: bool,
        reply: Reply<Result<(), SchedError>>,
    },
    Hello {
        /// The host the sbatchd names (the service checked it is the one its credential
        /// proved).
        host: String,
        jobs: Vec<HostJob>,
        reply: Reply<HelloAnswer>,
    },
    Report {
        /// None: a report of a kind this mbatchd does not know (acknowledged, ignored).
        report: Option<Report>,
        /// The core's answer (None for an ignored report) and the term's epoch.
        reply: Reply<(Option<Ack>, u64)>,
    },
    DispatchDone {
        key: JobKey,
        attempt: u32,
        host: String,
        result: Result<(u32, u32), DispatchError>,
    },
    Lim(Vec<LimHost>),
    Resign(String),
    /// Stop cleanly (SIGTERM): log MBD_DIE, release the lock.
    Shutdown,
}

/// The keys of the jobs a query finds, in listing order, and the ids it did not find.
pub(crate) type JobKeys = (Vec<basalt_sched::JobKey>, Vec<(u64, Option<u32>)>);

impl Msg {
    /// Whether this is a client's request, which waits for a place in the owner's
    /// inbox or is answered "busy" ([`crate::inbox`]); every other message is taken
    /// always: what sbatchds report and say (hello), dispatch outcomes, the LIM, the
    /// MultiCluster links and the other clusters' requests (each link waits for its
    /// answer), `/metrics` scrapes, stops, the pages of a listing under way.
    pub(crate) fn is_client_request(&self) -> bool {
        match self {
            Msg::Submit { .. }
            | Msg::Jobs { .. }
            | Msg::JobKeys { .. }
            | Msg::Signal { .. }
            | Msg::Switch { .. }
            | Msg::Modify { .. }
            | Msg::Move { .. }
            | Msg::Force { .. }
            | Msg::Queues { .. }
            | Msg::Hosts { .. }
            | Msg::Params { .. }
            | Msg::Limits { .. }
            | Msg::Apps { .. }
            | Msg::Clusters { .. }
            | Msg::HostPartitions { .. }
            | Msg::Slots { .. }
            | Msg::Users { .. }
            | Msg::QueueCtl { .. }
            | Msg::HostCtl { .. }
            | Msg::Reconfig { .. } => true,
            // The next page of a listing under way (its first request, `JobKeys`, took a
            // place): a listing is not cut off half-way; one page at a time per listing.
            Msg::JobsPage { .. }
            | Msg::McLink { .. }
            | Msg::McIn { .. }
            | Msg::Metrics { .. }
            | Msg::Hello { .. }
            | Msg::Report { .. }
            | Msg::DispatchDone { .. }
            | Msg::Lim(_)
            | Msg::Resign(_)
            | Msg::Shutdown => false,
        }
    }
}
