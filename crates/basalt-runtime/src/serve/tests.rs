//! The serving bounds and the authentication layer against a small LIM-like service on
//! loopback addresses: hostA (the server) on 127.0.0.1, hostB (the client) on 127.0.0.2.

use super::*;
use basalt_auth::key::KeySource;
use basalt_auth::{Authenticator, Identity, Kind, Need};
use basalt_proto::lim::{self as pb, lim_client::LimClient, lim_peer_server, lim_server};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicUsize;
use tokio::io::AsyncReadExt;

#[derive(Clone)]
struct Fake {
    verifier: Verifier,
}

#[tonic::async_trait]
impl lim_server::Lim for Fake {
    async fn cluster_info(
        &self,
        request: tonic::Request<pb::ClusterInfoRequest>,
    ) -> Result<tonic::Response<pb::ClusterInfoReply>, tonic::Status> {
        let who = self.verifier.verify(&request, Need::UserOrDaemon).await?;
        Ok(tonic::Response::new(pb::ClusterInfoReply {
            cluster: who.user,
            ..Default::default()
        }))
    }

    async fn hosts(
        &self,
        request: tonic::Request<pb::HostsRequest>,
    ) -> Result<tonic::Response<pb::HostsReply>, tonic::Status> {
        self.verifier.verify(&request, Need::UserOrDaemon).await?;
        if request.get_ref().hosts.iter().any(|h| h == "slow") {
            tokio::time::sleep(Duration::from_millis(800)).await;
        }
        Ok(tonic::Response::new(pb::HostsReply::default()))
    }
}

/// What LIMs ask each other, answered with what the request said (so a test sees how the
/// daemon decoded it).
#[tonic::async_trait]
impl lim_peer_server::LimPeer for Fake {
    async fn heartbeat(
        &self,
        request: tonic::Request<pb::HeartbeatRequest>,
    ) -> Result<tonic::Response<pb::HeartbeatReply>, tonic::Status> {
        self.verifier.verify(&request, Need::Daemon).await?;
        let r = request.into_inner();
        Ok(tonic::Response::new(pb::HeartbeatReply {
            accepted: r.locked && r.info.is_some_and(|i| i.name == r.host),
            master: r.host,
            epoch: r.load.len() as u64,
        }))
    }

    async fn announce(
        &self,
        request: tonic::Request<pb::AnnounceRequest>,
    ) -> Result<tonic::Response<pb::AnnounceReply>, tonic::Status> {
        self.verifier.verify(&request, Need::Daemon).await?;
        let r = request.into_inner();
        Ok(tonic::Response::new(pb::AnnounceReply {
            accepted: true,
            master: r.master,
            epoch: r.epoch,
        }))
    }

    async fn probe(
        &self,
        request: tonic::Request<pb::ProbeRequest>,
    ) -> Result<tonic::Response<pb::ProbeReply>, tonic::Status> {
        self.verifier.verify(&request, Need::Daemon).await?;
        Ok(tonic::Response::new(pb::ProbeReply {
            host: request.into_inner().from,
            ..Default::default()
        }))
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    keys: Arc<KeySource>,
    addr: SocketAddr,
    serving: Serving,
}

fn hosts() -> Vec<(String, IpAddr)> {
    vec![
        ("hostA".into(), "127.0.0.1".parse().unwrap()),
        ("hostB".into(), "127.0.0.2".parse().unwrap()),
        ("hostC".into(), "127.0.0.3".parse().unwrap()),
    ]
}

fn limits() -> ServeLimits {
    ServeLimits {
        max_conns: 1000,
        max_per_addr: 1000,
        idle: Duration::from_secs(60),
        first_request: Duration::from_secs(60),
        max_request_bytes: 64 << 20,
        max_conn_request_bytes: 64 << 20,
    }
}

async fn start(limits: ServeLimits) -> Setup {
    start_admitting(limits, None).await
}

async fn start_admitting(limits: ServeLimits, admission: Option<Admission>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("key");
    basalt_auth::key::create_key_file(&p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let keys = Arc::new(KeySource::open(&p, true).unwrap());
    let table = Arc::new(basalt_auth::HostTable::new(hosts()));
    let verifier = Verifier::new(keys.clone(), "c", "hostA", table.clone(), None, None);
    let serving = Serving::admitting(
        verifier.clone(),
        limits,
        Some(Allowed::hosts(table)),
        admission,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = serving
        .builder()
        .add_service(
            lim_server::LimServer::new(Fake {
                verifier: verifier.clone(),
            })
            .max_decoding_message_size(crate::MAX_MESSAGE_BYTES),
        )
        .add_service(lim_peer_server::LimPeerServer::new(Fake { verifier }));
    let s = serving.clone();
    tokio::spawn(async move { s.serve(router, listener, std::future::pending()).await });
    Setup {
        _dir: dir,
        keys,
        addr,
        serving,
    }
}

impl Setup {
    fn auth(&self, host: &str, ip: &str) -> Authenticator {
        Authenticator::with_key(
            self.keys.clone(),
            Identity {
                kind: Kind::User,
                uid: 1001,
                gid: 1001,
                user: "alice".into(),
                host: host.into(),
            },
            "c",
            Some(ip.parse().unwrap()),
        )
    }

    /// A client from `ip` (as `host`) on a connection of its own.
    fn client(&self, host: &str, ip: &str) -> LimClient<crate::AuthChannel> {
        let auth = self.auth(host, ip);
        LimClient::new(
            crate::auth_channel(self.addr, "hostA", Duration::from_secs(5), &auth).unwrap(),
        )
    }

    /// A raw TCP connection from `ip`.
    async fn raw(&self, ip: &str) -> tokio::net::TcpStream {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind(SocketAddr::new(ip.parse().unwrap(), 0)).unwrap();
        s.connect(self.addr).await.unwrap()
    }
}

/// Wait (at most `within`) until `f` holds.
async fn until(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f()
}

/// A body of `total` bytes in 64 KiB pieces, counting what the transport took.
fn counted_body(total: usize, taken: Arc<AtomicUsize>) -> Body {
    let piece = Bytes::from(vec![0u8; 64 << 10]);
    let n = total / piece.len();
    let frames = (0..n).map(move |i| {
        if i == 0 {
            // A gRPC frame header announcing one huge message.
            let mut b = bytes::BytesMut::new();
            b.extend_from_slice(&[0]);
            b.extend_from_slice(&((total - 5) as u32).to_be_bytes());
            b.extend_from_slice(&piece[5..]);
            taken.fetch_add(b.len(), Ordering::Relaxed);
            Ok::<_, std::convert::Infallible>(http_body::Frame::data(b.freeze()))
        } else {
            taken.fetch_add(piece.len(), Ordering::Relaxed);
            Ok(http_body::Frame::data(piece.clone()))
        }
    });
    Body::new(http_body_util::StreamBody::new(tokio_stream::iter(frames)))
}

/// Send `body` to `path` with `headers` on a plain channel from `ip`; the grpc-status
/// (of a refusal, or in the trailers of an answer).
async fn raw_request(
    s: &Setup,
    ip: &str,
    path: &str,
    headers: Option<MetadataMap>,
    body: Body,
) -> Option<i32> {
    use tower::ServiceExt;
    let ch = crate::channel(s.addr, Duration::from_secs(20), Some(ip.parse().unwrap())).unwrap();
    let mut req = http::Request::builder()
        .method("POST")
        .uri(format!("http://{}{path}", s.addr))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(body)
        .unwrap();
    if let Some(md) = headers {
        for (k, v) in md.into_headers() {
            if let Some(k) = k {
                req.headers_mut().insert(k, v);
            }
        }
    }
    let resp = tokio::time::timeout(Duration::from_secs(20), ch.oneshot(req))
        .await
        .ok()?
        .ok()?;
    let status = |h: &http::HeaderMap| {
        h.get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    };
    if let Some(code) = status(resp.headers()) {
        return Some(code);
    }
    // Answered: the status comes in the trailers, after the reply.
    use http_body_util::BodyExt;
    let body = tokio::time::timeout(Duration::from_secs(20), resp.into_body().collect())
        .await
        .ok()?
        .ok()?;
    body.trailers().and_then(status)
}

/// Issue 49, item 6: a request without a credential is refused from its metadata,
/// before its body is read — eight 60 MB bodies cost the daemon nothing (the unfixed
/// daemon read each whole before the handler looked at the credential).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_request_body_is_not_read() {
    let s = start(limits()).await;
    let taken = Arc::new(AtomicUsize::new(0));
    for _ in 0..8 {
        let body = counted_body(60 << 20, taken.clone());
        let code = raw_request(&s, "127.0.0.2", "/basalt.lim.v1.Lim/Hosts", None, body).await;
        assert_eq!(code, Some(tonic::Code::PermissionDenied as i32));
    }
    let t = taken.load(Ordering::Relaxed);
    assert!(
        t < 8 * (4 << 20),
        "{t} bytes of unauthenticated bodies were taken"
    );
}

/// Issue 49, item 6: an authenticated request larger than its method takes is refused
/// once the limit is passed (not read to its end, not decoded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_larger_than_the_method_takes_is_refused_early() {
    let s = start(limits()).await;
    let mut c = s.client("hostB", "127.0.0.2");
    // Within the limit: served.
    let ok = c
        .hosts(pb::HostsRequest {
            hosts: vec!["x".repeat(1 << 20)],
            ..Default::default()
        })
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    // 6 MiB of host names to a method that takes 4: refused as too large.
    let e = c
        .hosts(pb::HostsRequest {
            hosts: vec!["x".repeat(6 << 20)],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("4194304 bytes"), "{e:?}");
    // With a forged credential (sealed for another body): refused after reading at most
    // the limit.
    let auth = s.auth("hostB", "127.0.0.2").towards("hostA");
    let mut md = MetadataMap::new();
    auth.stamp(&mut md, "/basalt.lim.v1.Lim/Hosts", Some(b"other"))
        .unwrap();
    let taken = Arc::new(AtomicUsize::new(0));
    let code = raw_request(
        &s,
        "127.0.0.2",
        "/basalt.lim.v1.Lim/Hosts",
        Some(md),
        counted_body(60 << 20, taken.clone()),
    )
    .await;
    assert_eq!(code, Some(tonic::Code::ResourceExhausted as i32));
    assert!(taken.load(Ordering::Relaxed) < 16 << 20);
}

/// Issue 49, item 7: connections from one address beyond its share are closed at once,
/// and the cluster's other hosts are still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_bounded_per_address_and_in_all() {
    let mut l = limits();
    l.max_per_addr = 5;
    l.max_conns = 8;
    let s = start(l).await;
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(s.raw("127.0.0.2").await);
    }
    assert!(until(Duration::from_secs(5), || s.serving.open_connections() == 5).await);
    // The sixth from the same address: closed without a byte.
    let mut extra = s.raw("127.0.0.2").await;
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf))
        .await
        .expect("closed at once")
        .unwrap_or(0);
    assert_eq!(n, 0);
    // Another host is served meanwhile.
    let r = s
        .client("hostC", "127.0.0.3")
        .cluster_info(pb::ClusterInfoRequest {})
        .await;
    assert!(r.is_ok(), "{r:?}");
    // Up to 8 in all: 5 + 1 (hostC's, closed once idle or kept) + 2 more from hostA.
    let mut more = Vec::new();
    for _ in 0..3 {
        more.push(s.raw("127.0.0.1").await);
    }
    assert!(until(Duration::from_secs(5), || s.serving.open_connections() <= 8).await);
    // An address outside the cluster: closed at once.
    let mut outsider = s.raw("127.0.0.77").await;
    let n = tokio::time::timeout(Duration::from_secs(5), outsider.read(&mut buf))
        .await
        .expect("closed at once")
        .unwrap_or(0);
    assert_eq!(n, 0);
    // When the holder lets go, its room comes back.
    drop(held);
    assert!(until(Duration::from_secs(5), || s.serving.open_connections() <= 4).await);
    let r = s
        .client("hostB", "127.0.0.2")
        .cluster_info(pb::ClusterInfoRequest {})
        .await;
    assert!(r.is_ok(), "{r:?}");
    drop(more);
}

/// Issue 49, item 7: a connection that never sends a request (or only the HTTP/2
/// preface) is closed after the first-request timeout; one whose requests are done is
/// closed after the idle timeout, but not while a request is under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_open_connections_are_closed() {
    let mut l = limits();
    l.first_request = Duration::from_millis(300);
    l.idle = Duration::from_millis(400);
    let s = start(l).await;
    // A silent connection, and one that sends the preface and stops.
    let silent = s.raw("127.0.0.2").await;
    let mut preface = s.raw("127.0.0.2").await;
    tokio::io::AsyncWriteExt::write_all(&mut preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    // The server speaks first (its SETTINGS); closed is when the reads end.
    let read_to_end = |mut c: tokio::net::TcpStream| async move {
        let mut buf = vec![0u8; 4096];
        loop {
            match c.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read_to_end(silent))
        .await
        .expect("a silent connection is closed");
    tokio::time::timeout(Duration::from_secs(5), read_to_end(preface))
        .await
        .expect("a preface-only connection is closed");
    assert!(until(Duration::from_secs(5), || s.serving.open_connections() == 0).await);
    // A request that takes longer than the idle timeout keeps its connection; once it
    // is answered, the connection is closed after the idle timeout.
    let mut c = s.client("hostB", "127.0.0.2");
    let r = c
        .hosts(pb::HostsRequest {
            hosts: vec!["slow".into()],
            ..Default::default()
        })
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(s.serving.open_connections(), 1);
    assert!(until(Duration::from_secs(5), || s.serving.open_connections() == 0).await);
    // The client connects again on its next request.
    let r = c.cluster_info(pb::ClusterInfoRequest {}).await;
    assert!(r.is_ok(), "{r:?}");
}

/// A gRPC message body: the five-byte frame header, then `msg` encoded.
fn framed(msg: &impl prost::Message) -> Bytes {
    let encoded = msg.encode_to_vec();
    let mut b = bytes::BytesMut::new();
    b.extend_from_slice(&[0]);
    b.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    b.extend_from_slice(&encoded);
    b.freeze()
}

/// Issue 53, item 6: the protocol version is checked once, in the layer, from the
/// request's metadata: a request with a good credential but a version outside
/// `PROTOCOL_MIN..=PROTOCOL` (or none) is refused before its handler runs; the same
/// request with this build's version is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_an_incompatible_protocol_version_is_refused() {
    let s = start(limits()).await;
    let path = "/basalt.lim.v1.Lim/ClusterInfo";
    let body = framed(&pb::ClusterInfoRequest {});
    let auth = s.auth("hostB", "127.0.0.2").towards("hostA");
    let too_new = format!(
        "{}.{}",
        basalt_proto::PROTOCOL.major + 1,
        basalt_proto::PROTOCOL.minor
    );
    let versions = [
        Some(basalt_proto::protocol_text()),
        Some("2.0".to_owned()),
        Some(too_new),
        Some("garbage".to_owned()),
        None,
    ];
    let mut codes = Vec::new();
    for version in versions {
        let mut md = MetadataMap::new();
        auth.stamp(&mut md, path, Some(&body)).unwrap();
        match &version {
            Some(v) => {
                md.insert(basalt_proto::PROTOCOL_METADATA, v.parse().unwrap());
            }
            None => {
                md.remove(basalt_proto::PROTOCOL_METADATA);
            }
        }
        let code = raw_request(
            &s,
            "127.0.0.2",
            path,
            Some(md),
            Body::new(http_body_util::Full::new(body.clone())),
        )
        .await;
        codes.push((version, code));
    }
    let refused = Some(tonic::Code::FailedPrecondition as i32);
    let want: Vec<Option<i32>> = vec![Some(0), refused, refused, refused, refused];
    assert_eq!(
        codes.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
        want,
        "{codes:?}"
    );
}

/// The body of the LIM peer requests of a protocol 3.0 peer from before issue 53: the
/// sender's protocol version also in field 1 (since reserved).
#[derive(Clone, PartialEq, prost::Message)]
struct OldProbeRequest {
    #[prost(message, optional, tag = "1")]
    protocol: Option<basalt_proto::common::ProtocolVersion>,
    #[prost(string, tag = "2")]
    from: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct OldAnnounceRequest {
    #[prost(message, optional, tag = "1")]
    protocol: Option<basalt_proto::common::ProtocolVersion>,
    #[prost(string, tag = "2")]
    master: String,
    #[prost(uint64, tag = "3")]
    epoch: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct OldHeartbeatRequest {
    #[prost(message, optional, tag = "1")]
    protocol: Option<basalt_proto::common::ProtocolVersion>,
    #[prost(string, tag = "2")]
    host: String,
    #[prost(message, optional, tag = "3")]
    info: Option<basalt_proto::common::HostInfo>,
    #[prost(message, repeated, tag = "4")]
    load: Vec<basalt_proto::common::LoadValue>,
    #[prost(bool, tag = "5")]
    locked: bool,
}

/// One unary call of `path` with a hand-made request message, through an authenticated
/// channel (the credential seals the bytes sent).
async fn old_call<Req, Rep>(
    ch: crate::AuthChannel,
    path: &'static str,
    req: Req,
) -> Result<Rep, tonic::Status>
where
    Req: prost::Message + Send + Sync + 'static,
    Rep: prost::Message + Default + Send + Sync + 'static,
{
    let mut grpc = tonic::client::Grpc::new(ch);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let codec = tonic_prost::ProstCodec::<Req, Rep>::default();
    grpc.unary(
        tonic::Request::new(req),
        http::uri::PathAndQuery::from_static(path),
        codec,
    )
    .await
    .map(tonic::Response::into_inner)
}

/// Issue 53, item 6: a peer that still sends the protocol version in the body (field 1,
/// now reserved) is served, and the rest of its request is read as it meant it: the
/// decoder skips the unknown field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_sends_the_old_body_protocol_field_is_served() {
    let s = start(limits()).await;
    let auth = Authenticator::with_key(
        s.keys.clone(),
        basalt_auth::daemon_identity("hostB"),
        "c",
        Some("127.0.0.2".parse().unwrap()),
    );
    let ch = || crate::auth_channel(s.addr, "hostA", Duration::from_secs(5), &auth).unwrap();
    let old = Some(basalt_proto::PROTOCOL);
    let probe: pb::ProbeReply = old_call(
        ch(),
        "/basalt.lim.v1.LimPeer/Probe",
        OldProbeRequest {
            protocol: old,
            from: "hostB".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(probe.host, "hostB");
    let announce: pb::AnnounceReply = old_call(
        ch(),
        "/basalt.lim.v1.LimPeer/Announce",
        OldAnnounceRequest {
            protocol: old,
            master: "hostB".into(),
            epoch: 7,
        },
    )
    .await
    .unwrap();
    assert_eq!((announce.master.as_str(), announce.epoch), ("hostB", 7));
    let heartbeat: pb::HeartbeatReply = old_call(
        ch(),
        "/basalt.lim.v1.LimPeer/Heartbeat",
        OldHeartbeatRequest {
            protocol: old,
            host: "hostB".into(),
            info: Some(basalt_proto::common::HostInfo {
                name: "hostB".into(),
                ..Default::default()
            }),
            load: vec![basalt_proto::common::LoadValue {
                name: "r1m".into(),
                value: 0.5,
            }],
            locked: true,
        },
    )
    .await
    .unwrap();
    assert_eq!(
        (
            heartbeat.accepted,
            heartbeat.master.as_str(),
            heartbeat.epoch
        ),
        (true, "hostB", 1)
    );
}

fn busy() -> tonic::Status {
    tonic::Status::resource_exhausted("busy")
}

/// Issue 53 item 5: with room for one request of the counted methods in flight, a second
/// one while the first is under way is answered "busy" at once (its credential never
/// checked: this one's is not even valid); the place comes back when the first one's
/// answer has been sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_the_admission_bound_are_answered_busy_at_once() {
    let admission = Admission::new("/basalt.lim.v1.Lim/", 1, busy);
    let s = start_admitting(limits(), Some(admission.clone())).await;
    let mut slow = s.client("hostB", "127.0.0.2");
    let first = tokio::spawn(async move {
        slow.hosts(pb::HostsRequest {
            hosts: vec!["slow".into()],
            ..Default::default()
        })
        .await
    });
    assert!(
        until(Duration::from_secs(10), || admission.room() == 0).await,
        "the slow request never took its place"
    );
    // Without a credential: refused for room before anything else.
    let code = raw_request(
        &s,
        "127.0.0.2",
        "/basalt.lim.v1.Lim/Hosts",
        None,
        Body::empty(),
    )
    .await;
    assert_eq!(code, Some(tonic::Code::ResourceExhausted as i32));
    let mut other = s.client("hostC", "127.0.0.3");
    let busy = other
        .cluster_info(pb::ClusterInfoRequest::default())
        .await
        .expect_err("no room");
    assert_eq!(busy.code(), tonic::Code::ResourceExhausted);
    assert!(first.await.unwrap().is_ok());
    assert!(until(Duration::from_secs(10), || admission.room() == 1).await);
    assert!(
        other
            .cluster_info(pb::ClusterInfoRequest::default())
            .await
            .is_ok()
    );
}

fn busy_marked() -> tonic::Status {
    let mut s = tonic::Status::resource_exhausted("busy");
    let md = s.metadata_mut();
    md.insert(basalt_proto::RETRY_SECS_METADATA, "1".parse().unwrap());
    md.insert(basalt_proto::BUSY_METADATA, "1".parse().unwrap());
    s
}

/// Issue 53 item 5: a client made `retrying_when_busy` (the commands', the C API's)
/// sends a request the daemon was too busy for again, freshly sealed, and is served
/// once there is room; one that is not hears "busy".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_retrying_when_busy_is_served_once_there_is_room() {
    let admission = Admission::new("/basalt.lim.v1.Lim/", 1, busy_marked);
    let s = start_admitting(limits(), Some(admission.clone())).await;
    let mut slow = s.client("hostB", "127.0.0.2");
    let first = tokio::spawn(async move {
        slow.hosts(pb::HostsRequest {
            hosts: vec!["slow".into()],
            ..Default::default()
        })
        .await
    });
    assert!(until(Duration::from_secs(10), || admission.room() == 0).await);
    let mut plain = s.client("hostC", "127.0.0.3");
    let busy = plain
        .cluster_info(pb::ClusterInfoRequest::default())
        .await
        .expect_err("no room");
    assert_eq!(busy.code(), tonic::Code::ResourceExhausted);
    let auth = s.auth("hostC", "127.0.0.3");
    let mut patient = LimClient::new(
        crate::auth_channel(s.addr, "hostA", Duration::from_secs(5), &auth)
            .unwrap()
            .retrying_when_busy(Duration::from_secs(30)),
    );
    let r = patient
        .cluster_info(pb::ClusterInfoRequest::default())
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(first.await.unwrap().is_ok());
}
