//! The `basalt.sbatchd.v1.Sbatchd` (commands) and `SbatchdPeer` (mbatchd's orders) gRPC
//! services: translate requests into owner messages and wait for the answer. File reads (bpeek) run in `spawn_blocking`
//! with a deadline.

use crate::owner::Msg;
use basalt_proto::sbatchd::{
    self as pb, sbatchd_peer_server::SbatchdPeer, sbatchd_server::Sbatchd,
};
use basalt_runtime::{Need, Verifier};
use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::{Request, Response, Status, Streaming};

/// The sbatchd gRPC service.
#[derive(Debug, Clone)]
pub struct SbdService {
    tx: mpsc::Sender<Msg>,
    auth: Verifier,
    /// sbatchd is stopping: long-lived streams end (else the server's graceful stop
    /// would wait for mbatchd to close them).
    stop: tokio::sync::watch::Receiver<bool>,
}

impl SbdService {
    pub fn new(
        tx: mpsc::Sender<Msg>,
        auth: Verifier,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> SbdService {
        SbdService { tx, auth, stop }
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Msg) -> Result<T, Status> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(make(tx))
            .await
            .map_err(|_| Status::unavailable("sbatchd is shutting down"))?;
        rx.await
            .map_err(|_| Status::unavailable("sbatchd is shutting down"))
    }
}

impl SbdService {
    /// Carry out one start order (StartJob, StartStream): (pid, pgid), or why not.
    async fn start(&self, r: pb::StartJobRequest) -> Result<(u32, u32), Status> {
        let spec = r
            .job
            .ok_or_else(|| Status::invalid_argument("StartJob without a job"))?;
        self.ask(|reply| Msg::Start {
            epoch: r.epoch,
            spec: Box::new(spec),
            reply,
        })
        .await?
    }
}

/// The last `tail` bytes of a file (all of it when `tail` is 0).
pub fn read_tail(path: &str, tail: u64) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if tail > 0 && len > tail {
        f.seek(SeekFrom::Start(len - tail))?;
    }
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// What mbatchd orders (daemon credentials only).
#[tonic::async_trait]
impl SbatchdPeer for SbdService {
    async fn start_job(
        &self,
        request: Request<pb::StartJobRequest>,
    ) -> Result<Response<pb::StartJobReply>, Status> {
        // Only a cluster daemon (mbatchd) starts jobs; the epoch fences old masters.
        self.auth.verify(&request, Need::Daemon).await?;
        let (pid, pgid) = self.start(request.into_inner()).await?;
        Ok(Response::new(pb::StartJobReply {
            pid,
            pgid,
            ..Default::default()
        }))
    }

    type StartStreamStream = UnboundedReceiverStream<Result<pb::StartJobReply, Status>>;

    async fn start_stream(
        &self,
        request: Request<Streaming<pb::StartJobRequest>>,
    ) -> Result<Response<Self::StartStreamStream>, Status> {
        self.auth.verify(&request, Need::Daemon).await?;
        let mut inbound = request.into_inner();
        let (tx, rx) = mpsc::unbounded_channel();
        let me = self.clone();
        let mut stop = self.stop.clone();
        tokio::spawn(async move {
            // Each order answered as soon as its job has started (or was refused): a
            // slow start holds up no other. sbatchd stopping ends the stream (mbatchd
            // sends the next orders to the next sbatchd).
            loop {
                let r = tokio::select! {
                    m = inbound.message() => match m {
                        Ok(Some(r)) => r,
                        _ => break,
                    },
                    _ = stop.wait_for(|s| *s) => break,
                };
                let (me, tx) = (me.clone(), tx.clone());
                tokio::spawn(async move {
                    let tag = r.tag;
                    let reply = match me.start(r).await {
                        Ok((pid, pgid)) => pb::StartJobReply {
                            pid,
                            pgid,
                            tag,
                            ..Default::default()
                        },
                        Err(s) => pb::StartJobReply {
                            tag,
                            code: s.code() as i32,
                            message: s.message().to_owned(),
                            ..Default::default()
                        },
                    };
                    let _ = tx.send(Ok(reply));
                });
            }
        });
        Ok(Response::new(UnboundedReceiverStream::new(rx)))
    }

    async fn signal_job(
        &self,
        request: Request<pb::SignalJobRequest>,
    ) -> Result<Response<pb::SignalJobReply>, Status> {
        self.auth.verify(&request, Need::Daemon).await?;
        let r = request.into_inner();
        match pb::SignalAction::try_from(r.action) {
            Ok(pb::SignalAction::Unspecified) => {
                return Err(Status::invalid_argument(
                    "signal order without an action (kill, stop, resume or signal)",
                ));
            }
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "signal order of unknown action {}",
                    r.action
                )));
            }
            Ok(_) => {}
        }
        let found = self.ask(|reply| Msg::Signal { req: r, reply }).await??;
        Ok(Response::new(pb::SignalJobReply { found }))
    }
}

/// What commands ask.
#[tonic::async_trait]
impl Sbatchd for SbdService {
    async fn peek(
        &self,
        request: Request<pb::PeekRequest>,
    ) -> Result<Response<pb::PeekReply>, Status> {
        let who = self.auth.verify(&request, Need::User).await?;
        let r = request.into_inner();
        let tail = r.tail_bytes;
        // Only the owner (or root) may peek: the uid is the proven one.
        let target = self
            .ask(|reply| Msg::Peek {
                job_id: r.job_id,
                idx: r.idx,
                uid: who.uid,
                reply,
            })
            .await??;
        if target.path.is_empty() {
            return Ok(Response::new(pb::PeekReply::default()));
        }
        let path = target.path.clone();
        let read = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::task::spawn_blocking(move || read_tail(&path, tail)),
        )
        .await
        .map_err(|_| Status::unavailable(format!("reading {} timed out", target.path)))?
        .map_err(|e| Status::internal(e.to_string()))?;
        let output = match read {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Status::unavailable(format!(
                    "cannot read {}: {e}",
                    target.path
                )));
            }
        };
        Ok(Response::new(pb::PeekReply {
            output,
            path: target.path,
        }))
    }

    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusReply>, Status> {
        self.auth.verify(&request, Need::User).await?;
        let reply = self.ask(|reply| Msg::Status { reply }).await?;
        Ok(Response::new(reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("f");
        std::fs::write(&p, b"hello world").expect("write");
        let p = p.to_string_lossy().into_owned();
        assert_eq!(read_tail(&p, 0).expect("all"), b"hello world");
        assert_eq!(read_tail(&p, 5).expect("tail"), b"world");
        assert_eq!(read_tail(&p, 100).expect("more"), b"hello world");
    }
}
