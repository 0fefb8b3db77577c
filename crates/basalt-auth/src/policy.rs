//! Who may call each gRPC method, and how large its request may be — what a daemon's
//! authentication layer checks before it reads a byte of a request's body.
//!
//! Each daemon serves a client service and a peer service on one port
//! (basalt-proto's rule); the service decides the credential domain:
//!
//! | service | domain |
//! |---|---|
//! | `Lim` (cluster and host information) | user or daemon (commands; sbatchd and mbatchd ask it too) |
//! | `LimPeer`, `MbatchdPeer`, `SbatchdPeer` | daemon |
//! | `Mbatchd`, `Sbatchd`, `Res`, `DaemonControl` | user |
//! | `MbatchdCluster` (MultiCluster) | inter-cluster |
//!
//! Bodies: [`DEFAULT_MAX_BODY`] unless a method carries job files or many jobs
//! ([`method`]); a client-streaming method's messages are bounded one by one by the
//! service's message limit instead.

use crate::Need;

/// What a method asks of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodPolicy {
    /// The credential domains it accepts.
    pub need: Need,
    /// The largest request body it reads (bytes, gRPC framing included).
    pub max_body: usize,
    /// A client-streaming method: the body is not read up front.
    pub streaming: bool,
}

/// The body limit of an ordinary request: a query naming up to 100,000 jobs fits.
pub const DEFAULT_MAX_BODY: usize = 4 << 20;
/// A request that carries a job (the job file of up to 4 MiB and an environment of up
/// to 2 MiB: basalt_core::bounds) or a job's modification.
pub const JOB_MAX_BODY: usize = 16 << 20;
/// What a daemon sends in bulk: a start order with its job file, an sbatchd's hello or
/// reports with all its jobs.
pub const BULK_MAX_BODY: usize = 64 << 20;
/// A method no service has (answered `unimplemented` once the caller is proven).
pub const UNKNOWN_MAX_BODY: usize = 64 << 10;

/// The policy of the method at gRPC `path` (`/package.Service/Method`).
pub fn method(path: &str) -> MethodPolicy {
    let (service, name) = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .unwrap_or(("", ""));
    let need = match service {
        "basalt.lim.v1.Lim" => Some(Need::UserOrDaemon),
        "basalt.lim.v1.LimPeer"
        | "basalt.mbatchd.v1.MbatchdPeer"
        | "basalt.sbatchd.v1.SbatchdPeer" => Some(Need::Daemon),
        "basalt.mbatchd.v1.Mbatchd"
        | "basalt.sbatchd.v1.Sbatchd"
        | "basalt.res.v1.Res"
        | "basalt.common.v1.DaemonControl" => Some(Need::User),
        "basalt.mbatchd.v1.MbatchdCluster" => Some(Need::InterCluster),
        _ => None,
    };
    let Some(need) = need else {
        // An unknown service: whoever is of the cluster gets `unimplemented`.
        return MethodPolicy {
            need: Need::UserOrDaemon,
            max_body: UNKNOWN_MAX_BODY,
            streaming: false,
        };
    };
    let max_body = match (service, name) {
        ("basalt.mbatchd.v1.Mbatchd", "Submit" | "Modify")
        | ("basalt.mbatchd.v1.MbatchdCluster", "ForwardJob")
        | ("basalt.mbatchd.v1.MbatchdPeer", "ReportJob") => JOB_MAX_BODY,
        ("basalt.sbatchd.v1.SbatchdPeer", "StartJob")
        | ("basalt.mbatchd.v1.MbatchdPeer", "SbdHello" | "ReportJobs") => BULK_MAX_BODY,
        _ => DEFAULT_MAX_BODY,
    };
    MethodPolicy {
        need,
        max_body,
        streaming: crate::channel::is_client_streaming(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method of every service has a domain; the peer services are daemons' only,
    /// the MultiCluster service another cluster's only (issue 49, item 1: "each
    /// endpoint accepts only its domain").
    #[test]
    fn every_method_has_its_domain_and_body_limit() {
        let api = basalt_proto::API;
        let mut service = "";
        let mut seen = 0;
        for line in api.lines() {
            if let Some(s) = line.strip_prefix("service ") {
                service = s;
                continue;
            }
            let Some(rpc) = line.trim().strip_prefix("rpc ") else {
                continue;
            };
            let name = rpc.split('(').next().unwrap_or("");
            let path = format!("/{service}/{name}");
            let p = method(&path);
            let want = match service.rsplit('.').next().unwrap_or("") {
                "LimPeer" | "MbatchdPeer" | "SbatchdPeer" => Need::Daemon,
                "MbatchdCluster" => Need::InterCluster,
                "Lim" => Need::UserOrDaemon,
                "Mbatchd" | "Sbatchd" | "Res" | "DaemonControl" => Need::User,
                other => panic!("service {other} has no domain in the policy"),
            };
            assert_eq!(p.need, want, "{path}");
            // (Client streaming: the request is a stream; a reply stream alone is not.)
            let client_streaming = rpc.starts_with(&format!("{name}(stream "));
            assert_eq!(p.streaming, client_streaming, "{path}");
            assert!(p.max_body >= DEFAULT_MAX_BODY, "{path}");
            seen += 1;
        }
        assert!(seen >= 40, "only {seen} methods listed");
        assert_eq!(
            method("/basalt.mbatchd.v1.Mbatchd/Submit").max_body,
            JOB_MAX_BODY
        );
        assert_eq!(
            method("/basalt.sbatchd.v1.SbatchdPeer/StartJob").max_body,
            BULK_MAX_BODY
        );
        assert_eq!(method("/x.Y/Z").max_body, UNKNOWN_MAX_BODY);
        assert_eq!(method("garbage").max_body, UNKNOWN_MAX_BODY);
    }
}
