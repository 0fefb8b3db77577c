//! MultiCluster job forwarding (seed 004), mbatchd's side: the links to the other
//! clusters' mbatchds (`link`: finding their master, polling their receive-jobs queues
//! and the jobs forwarded there, carrying forwards and job controls), the service other
//! clusters call (`serve`: ClusterInfo, ForwardJob, RemoteJobs, ControlJob), and the
//! key both clusters trust (`trust`). The decisions (which queue, when a job returns)
//! are the core's (`basalt_sched::mc`).

use crate::owner::OwnerState;
use basalt_proto::mbatchd as pb;

impl OwnerState {
    /// bclusters: the links and the send/receive queue pairs.
    pub(crate) fn clusters_reply(&self) -> pb::ClustersReply {
        pb::ClustersReply {
            cluster: self.config.cluster.name.clone(),
            links: Vec::new(),
            queues: Vec::new(),
        }
    }
}
