//! The service other clusters' mbatchds call (MultiCluster job forwarding): each request
//! has passed the authentication layer with an inter-cluster credential (the MultiCluster
//! key, [`super::McTrust`]) and is handed to the owner.

use super::{Incoming, job_to_pb, queue_to_pb};
use crate::msg::Msg;
use crate::service::MbatchdService;
use basalt_auth::Need;
use basalt_proto::mbatchd as pb;
use pb::mbatchd_cluster_server::MbatchdCluster;
use tonic::{Request, Response, Status};

impl MbatchdService {
    /// The cluster a MultiCluster request comes from, or its refusal.
    fn mc_caller<T>(&self, request: &Request<T>) -> Result<String, Status> {
        if self.mc_trust().is_none() {
            return Err(Status::failed_precondition(
                "MultiCluster is not configured in this cluster (no RemoteClusters)",
            ));
        }
        Ok(self.auth().verified(request, Need::InterCluster)?.cluster)
    }
}

#[tonic::async_trait]
impl MbatchdCluster for MbatchdService {
    async fn cluster_info(
        &self,
        request: Request<pb::McInfoRequest>,
    ) -> Result<Response<pb::McInfoReply>, Status> {
        let cluster = self.mc_caller(&request)?;
        let queues = self
            .owner()
            .ask(|reply| Msg::McIn {
                cluster,
                req: Incoming::Info { reply },
            })
            .await?;
        Ok(Response::new(pb::McInfoReply {
            cluster: String::new(),
            queues: queues.iter().map(queue_to_pb).collect(),
        }))
    }

    async fn forward_job(
        &self,
        request: Request<pb::McForwardRequest>,
    ) -> Result<Response<pb::McForwardReply>, Status> {
        let cluster = self.mc_caller(&request)?;
        let r = request.into_inner();
        let out = self
            .owner()
            .ask(|reply| Msg::McIn {
                cluster,
                req: Incoming::Forward {
                    src: (r.job_id, r.idx),
                    attempt: r.attempt,
                    queue: r.queue,
                    job_new: r.job_new,
                    job_file: r.job_file,
                    reply,
                },
            })
            .await?;
        Ok(Response::new(match out {
            Ok(id) => pb::McForwardReply {
                accepted: true,
                remote_job_id: id,
                reason: String::new(),
            },
            Err(reason) => pb::McForwardReply {
                accepted: false,
                remote_job_id: 0,
                reason,
            },
        }))
    }

    async fn remote_jobs(
        &self,
        request: Request<pb::McJobsRequest>,
    ) -> Result<Response<pb::McJobsReply>, Status> {
        let cluster = self.mc_caller(&request)?;
        let jobs = self
            .owner()
            .ask(|reply| Msg::McIn {
                cluster,
                req: Incoming::Jobs { reply },
            })
            .await?;
        Ok(Response::new(pb::McJobsReply {
            jobs: jobs.iter().map(job_to_pb).collect(),
        }))
    }

    async fn control_job(
        &self,
        request: Request<pb::McControlRequest>,
    ) -> Result<Response<pb::McControlReply>, Status> {
        let cluster = self.mc_caller(&request)?;
        let r = request.into_inner();
        let error = self
            .owner()
            .ask(|reply| Msg::McIn {
                cluster,
                req: Incoming::Control {
                    src: (r.job_id, r.idx),
                    signal: r.signal,
                    reply,
                },
            })
            .await?;
        Ok(Response::new(pb::McControlReply { error }))
    }
}
