//! Who is asking (docs/security.md), on real daemons: requests without a valid
//! credential, with a replayed or forged one, or from an address outside the cluster are
//! refused; malformed and oversized requests are refused without stopping the service;
//! jobs run as their user with that user's groups; root runs jobs only with
//! LSF_ROOT_REX; a personal cluster serves only its owner; `LSF_AUTH=eauth` decides.
//!
//! The tests that need other users (created here with useradd/groupadd) need root; run
//! as another user they say they are skipped.

use anyhow::{Context, Result, anyhow, bail};
use basalt_auth::key::KeySource;
use basalt_auth::{Authenticator, Identity, Kind};
use basalt_proto::mbatchd as pb;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_testkit::{ClusterSpec, ProcessCluster, output_text, wait_for};
use std::error::Error as _;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tonic::metadata::BinaryMetadataValue;
use tonic::transport::{Channel, Endpoint};

const DEADLINE: Duration = Duration::from_secs(60);

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn config(c: &ProcessCluster) -> Result<basalt_config::Config> {
    Ok(basalt_config::load(&c.envdir)
        .map_err(|e| anyhow!("{e}"))?
        .config)
}

/// An address on hostA's loopback subnet that is no cluster host's.
fn outsider(c: &ProcessCluster) -> Result<IpAddr> {
    match c.addrs[0] {
        IpAddr::V4(a) => {
            let o = a.octets();
            Ok(IpAddr::V4(std::net::Ipv4Addr::new(o[0], o[1], o[2], 200)))
        }
        IpAddr::V6(_) => bail!("IPv6 test addresses"),
    }
}

fn rt() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// A plain channel (no credentials) to `addr`, leaving from `local`.
async fn raw_channel(addr: SocketAddr, local: Option<IpAddr>) -> Result<Channel> {
    Ok(Endpoint::from_shared(format!("http://{addr}"))?
        .local_address(local)
        .timeout(Duration::from_secs(10))
        .connect()
        .await?)
}

fn jobs_req() -> pb::JobsRequest {
    pb::JobsRequest {
        user: "all".into(),
        states: u32::MAX,
        ..Default::default()
    }
}

fn with_cred<T>(msg: T, cred: &[u8]) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut().insert_bin(
        basalt_auth::CRED_METADATA,
        BinaryMetadataValue::from_bytes(cred),
    );
    // As the Authenticator stamps it: without it a valid credential meets FailedPrecondition.
    if let Ok(v) = basalt_proto::protocol_text().parse() {
        r.metadata_mut().insert(basalt_proto::PROTOCOL_METADATA, v);
    }
    r
}

/// The credential of `auth` for one request of `msg` to `path` on `target`'s daemon:
/// sealed for exactly that body (as tonic will frame it: no compression, a 5-byte
/// header).
fn sealed<M: prost::Message>(
    auth: &Authenticator,
    target: &str,
    path: &str,
    msg: &M,
) -> Result<Vec<u8>> {
    let body = msg.encode_to_vec();
    let mut framed = vec![0u8];
    framed.extend_from_slice(&u32::try_from(body.len())?.to_be_bytes());
    framed.extend_from_slice(&body);
    Ok(auth.towards(target).credential_for(path, Some(&framed))?.1)
}

/// The credential of `auth` for a client-streaming request to `path` on `target`.
fn sealed_stream(auth: &Authenticator, target: &str, path: &str) -> Result<Vec<u8>> {
    Ok(auth.towards(target).credential_for(path, None)?.1)
}

const JOBS: &str = "/basalt.mbatchd.v1.Mbatchd/Jobs";

fn denied<T: std::fmt::Debug>(what: &str, r: Result<T, tonic::Status>) -> Result<()> {
    match r {
        Err(s) if s.code() == tonic::Code::PermissionDenied => {
            if s.message() != "User permission denied" {
                bail!("{what}: refused with {:?}", s.message());
            }
            Ok(())
        }
        other => bail!("{what}: not refused: {other:?}"),
    }
}

/// Refused, or — a connection from an address outside the cluster — closed before the
/// request is read (issue 49, item 7).
fn closed_or_denied<T: std::fmt::Debug>(what: &str, r: Result<T, tonic::Status>) -> Result<()> {
    match r {
        Err(s)
            if matches!(
                s.code(),
                tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
            ) && s.source().is_some() =>
        {
            Ok(())
        }
        other => denied(what, other),
    }
}

/// A private key file that is not the cluster's.
fn foreign_keys(dir: &Path) -> Result<Arc<KeySource>> {
    let p = dir.join("foreign.key");
    basalt_auth::key::create_key_file(&p)?;
    Ok(Arc::new(KeySource::open(&p, true)?))
}

#[test]
fn requests_without_a_valid_credential_are_refused() -> Result<()> {
    let c = ProcessCluster::start_batch("sec-cred", &ClusterSpec::new(2), "")?;
    let cfg = config(&c)?;
    let rt = rt()?;
    let mbd = basalt_runtime::mbd_addr(&cfg, "hostA")?;
    let host_a = c.addrs[0];
    let keys = basalt_runtime::cluster_keys(&cfg)?;
    let me = nix::unistd::getuid().as_raw();
    let user = basalt_auth::user_name(me).unwrap_or_default();
    rt.block_on(async {
        // A hand-made request claiming to be root, without a credential.
        let mut plain = MbatchdClient::new(raw_channel(mbd, Some(host_a)).await?);
        denied("Jobs without a credential", plain.jobs(jobs_req()).await)?;
        denied(
            "bkill of everything claiming root, without a credential",
            plain
                .signal(pb::SignalRequest {
                    user: "all".into(),
                    kind: pb::SignalKind::Kill as i32,
                    ..Default::default()
                })
                .await,
        )?;
        // Signed with a key that is not the cluster's.
        let forged = Authenticator::with_key(
            foreign_keys(c.dir.path())?,
            Identity {
                kind: Kind::User,
                uid: 0,
                gid: 0,
                user: "root".into(),
                host: "hostA".into(),
            },
            &cfg.cluster_name,
            Some(host_a),
        );
        let b = sealed(&forged, "hostA", JOBS, &jobs_req())?;
        denied(
            "a credential signed with another key",
            plain.jobs(with_cred(jobs_req(), &b)).await,
        )?;

        // A real credential from hostA's LIM (the credential socket): accepted once,
        // refused when replayed.
        let auth = basalt_runtime::user_auth(&cfg);
        assert_eq!(
            auth.host(),
            Some("hostA"),
            "{:?}",
            auth.unavailable_reason()
        );
        let cred = sealed(&auth, "hostA", JOBS, &jobs_req())?;
        let seen = basalt_auth::cred::peek(&cred).ok_or_else(|| anyhow!("unreadable"))?;
        assert_eq!((seen.uid, seen.user.as_str()), (me, user.as_str()));
        let r = plain.jobs(with_cred(jobs_req(), &cred)).await;
        assert!(r.is_ok(), "a fresh credential was refused: {r:?}");
        denied(
            "a replayed credential",
            plain.jobs(with_cred(jobs_req(), &cred)).await,
        )?;
        // A submission that claims hostB is the credential's user's, from hostA.
        let submit = pb::SubmitRequest {
            job: Some(pb::JobSubmission {
                command: "true".into(),
                cwd: "/tmp".into(),
                from_host: "hostB".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cred = sealed(&auth, "hostA", "/basalt.mbatchd.v1.Mbatchd/Submit", &submit)?;
        // Sealed for another request (a credential taken off one request and put on
        // another): refused.
        denied(
            "a credential sealed for another request",
            plain.jobs(with_cred(jobs_req(), &cred)).await,
        )?;
        let id = plain
            .submit(with_cred(submit, &cred))
            .await
            .context("submission with a credential")?
            .into_inner()
            .job_id;
        let cred = sealed(&auth, "hostA", JOBS, &jobs_req())?;
        let jobs = plain
            .jobs(with_cred(jobs_req(), &cred))
            .await?
            .into_inner()
            .jobs;
        let job = jobs
            .iter()
            .find(|j| j.job_id == id)
            .ok_or_else(|| anyhow!("job {id} not listed"))?;
        assert_eq!(
            (job.user.as_str(), job.uid, job.from_host.as_str()),
            (user.as_str(), me, "hostA"),
            "the proven user and host, not the claimed ones"
        );

        // A valid, fresh credential of hostA sent from an address outside the cluster.
        let outside = outsider(&c)?;
        let mut from_outside = MbatchdClient::new(raw_channel(mbd, Some(outside)).await?);
        let cred = sealed(&auth, "hostA", JOBS, &jobs_req())?;
        closed_or_denied(
            "a credential of hostA from a non-cluster address",
            from_outside.jobs(with_cred(jobs_req(), &cred)).await,
        )?;
        // A credential (signed with the real key) naming a host not in the cluster.
        let intruder = Authenticator::with_key(
            keys.clone(),
            basalt_auth::daemon_identity("intruder"),
            &cfg.cluster_name,
            None,
        );
        let b = sealed(&intruder, "hostA", JOBS, &jobs_req())?;
        closed_or_denied(
            "a credential of a host outside the cluster",
            from_outside.jobs(with_cred(jobs_req(), &b)).await,
        )?;
        // The LIM refuses heartbeats from outside and anything without a credential.
        let lim = basalt_runtime::lim_addr(&cfg, "hostA")?;
        let mut lim_out = basalt_proto::lim::lim_peer_client::LimPeerClient::new(
            raw_channel(lim, Some(outside)).await?,
        );
        let hostb = basalt_runtime::daemon_auth(&cfg, "hostB", keys.clone());
        let beat = basalt_proto::lim::HeartbeatRequest {
            host: "hostB".into(),
            ..Default::default()
        };
        const HEARTBEAT: &str = "/basalt.lim.v1.LimPeer/Heartbeat";
        let b = sealed(&hostb, "hostA", HEARTBEAT, &beat)?;
        closed_or_denied(
            "a heartbeat claiming hostB from a non-cluster address",
            lim_out.heartbeat(with_cred(beat.clone(), &b)).await,
        )?;
        let plain_lim = raw_channel(lim, Some(host_a)).await?;
        let mut lim_plain = basalt_proto::lim::lim_client::LimClient::new(plain_lim.clone());
        let mut lim_plain_peer = basalt_proto::lim::lim_peer_client::LimPeerClient::new(plain_lim);
        denied(
            "lsid without a credential",
            lim_plain
                .cluster_info(basalt_proto::lim::ClusterInfoRequest {})
                .await,
        )?;
        // hostA's daemons may not speak for hostB.
        let hosta = basalt_runtime::daemon_auth(&cfg, "hostA", keys.clone());
        let b = sealed(&hosta, "hostA", HEARTBEAT, &beat)?;
        denied(
            "a heartbeat claiming hostB signed as hostA",
            lim_plain_peer.heartbeat(with_cred(beat, &b)).await,
        )?;
        // sbatchd starts jobs only for daemons: a user's credential is refused.
        let sbd = basalt_runtime::sbd_addr(&cfg, "hostA")?;
        let mut sb = basalt_proto::sbatchd::sbatchd_peer_client::SbatchdPeerClient::new(
            raw_channel(sbd, Some(host_a)).await?,
        );
        let start = basalt_proto::sbatchd::StartJobRequest {
            epoch: u64::MAX,
            job: Some(Default::default()),
            tag: 0,
        };
        let cred = sealed(
            &auth,
            "hostA",
            "/basalt.sbatchd.v1.SbatchdPeer/StartJob",
            &start,
        )?;
        denied(
            "StartJob with a user's credential",
            sb.start_job(with_cred(start, &cred)).await,
        )?;
        // Nor does it open a start stream for a user (the credential is checked once,
        // when the stream opens).
        let cred = sealed_stream(&auth, "hostA", "/basalt.sbatchd.v1.SbatchdPeer/StartStream")?;
        denied(
            "StartStream with a user's credential",
            sb.start_stream(with_cred(
                tokio_stream::iter(vec![basalt_proto::sbatchd::StartJobRequest {
                    epoch: u64::MAX,
                    job: Some(Default::default()),
                    tag: 1,
                }]),
                &cred,
            ))
            .await,
        )?;
        // mbatchd takes job reports only from daemons, on a stream too.
        let mbd = basalt_runtime::mbd_addr(&cfg, "hostA")?;
        let mut peer = basalt_proto::mbatchd::mbatchd_peer_client::MbatchdPeerClient::new(
            raw_channel(mbd, Some(host_a)).await?,
        );
        let cred = sealed_stream(
            &auth,
            "hostA",
            "/basalt.mbatchd.v1.MbatchdPeer/ReportStream",
        )?;
        denied(
            "ReportStream with a user's credential",
            peer.report_stream(with_cred(
                tokio_stream::iter(vec![basalt_proto::mbatchd::JobReports::default()]),
                &cred,
            ))
            .await,
        )?;
        anyhow::Ok(())
    })?;
    // The commands still work: they carry fresh credentials.
    c.ok("bjobs", &["-u", "all"])?;
    Ok(())
}

/// Issue 49, item 2: a credential mbatchd accepted is refused by the mbatchd that
/// replaces it after a kill -9 (sbatchd starts one at once), as by the first; a fresh one
/// is served.
#[test]
fn a_used_credential_is_refused_after_a_kill_9_of_mbatchd() -> Result<()> {
    let c = ProcessCluster::start_batch("sec-replay", &ClusterSpec::new(1), "")?;
    let cfg = config(&c)?;
    let rt = rt()?;
    let mbd = basalt_runtime::mbd_addr(&cfg, "hostA")?;
    let host_a = c.addrs[0];
    let auth = basalt_runtime::user_auth(&cfg);
    let cred = sealed(&auth, "hostA", JOBS, &jobs_req())?;
    rt.block_on(async {
        let mut plain = MbatchdClient::new(raw_channel(mbd, Some(host_a)).await?);
        let r = plain.jobs(with_cred(jobs_req(), &cred)).await;
        assert!(r.is_ok(), "a fresh credential was refused: {r:?}");
        denied(
            "a replayed credential",
            plain.jobs(with_cred(jobs_req(), &cred)).await,
        )
    })?;
    let before = c.pids_of("mbatchd", "hostA");
    assert_eq!(c.kill9_pids_of("mbatchd", "hostA"), before.len());
    wait_for("a new mbatchd to serve", DEADLINE, || {
        let now = c.pids_of("mbatchd", "hostA");
        let serving = !now.is_empty()
            && now.iter().all(|p| !before.contains(p))
            && c.run("bjobs", &["-u", "all"])
                .is_ok_and(|o| o.status.success());
        (serving.then_some(()), format!("{now:?} after {before:?}"))
    })?;
    rt.block_on(async {
        let mut plain = MbatchdClient::new(raw_channel(mbd, Some(host_a)).await?);
        denied(
            "a credential used before the kill -9",
            plain.jobs(with_cred(jobs_req(), &cred)).await,
        )?;
        let fresh = sealed(&auth, "hostA", JOBS, &jobs_req())?;
        let r = plain.jobs(with_cred(jobs_req(), &fresh)).await;
        assert!(r.is_ok(), "a fresh credential was refused: {r:?}");
        anyhow::Ok(())
    })?;
    Ok(())
}

/// Resident memory of `pid` in KiB.
fn rss_kb(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Issue 49, items 6 and 7, on the real mbatchd: unauthenticated 60 MB request bodies are
/// refused without being read (the unfixed mbatchd grew from 10 to 517 MB on eight of
/// them), idle connections from one address beyond its share are closed at once, and the
/// cluster's other hosts are served meanwhile.
#[test]
fn hostile_bodies_and_connections_leave_mbatchd_serving() -> Result<()> {
    let spec = ClusterSpec {
        lsf_conf_extra: "BASALT_MAX_CONNS_PER_HOST=16\n".into(),
        ..ClusterSpec::new(2)
    };
    let c = ProcessCluster::start_batch("sec-hostile", &spec, "")?;
    let cfg = config(&c)?;
    let mbd = basalt_runtime::mbd_addr(&cfg, "hostA")?;
    let (host_a, host_b) = (c.addrs[0], c.addrs[1]);
    let pid = *c
        .pids_of("mbatchd", "hostA")
        .first()
        .ok_or_else(|| anyhow!("no mbatchd"))?;
    let before = rss_kb(pid).ok_or_else(|| anyhow!("no RSS of {pid}"))?;
    // The most mbatchd holds while the requests are under way.
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(before));
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(r) = rss_kb(pid) {
                    peak.fetch_max(r, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        use tower::ServiceExt;
        // Eight requests at once without a credential, each announcing and sending 60 MB.
        let mut sent = Vec::new();
        for _ in 0..8 {
            let ch = raw_channel(mbd, Some(host_a)).await?;
            let chunk = bytes::Bytes::from(vec![0u8; 1 << 20]);
            let mut first = vec![0u8];
            first.extend_from_slice(&((60u32 << 20) - 5).to_be_bytes());
            first.extend_from_slice(&chunk[5..]);
            let frames = std::iter::once(bytes::Bytes::from(first))
                .chain(std::iter::repeat_n(chunk, 59))
                .map(|b| Ok::<_, std::convert::Infallible>(http_body::Frame::data(b)));
            let body =
                tonic::body::Body::new(http_body_util::StreamBody::new(tokio_stream::iter(frames)));
            let req = tonic::codegen::http::Request::builder()
                .method("POST")
                .uri(format!("http://{mbd}{JOBS}"))
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .body(body)?;
            sent.push(tokio::spawn(tokio::time::timeout(
                Duration::from_secs(60),
                ch.oneshot(req),
            )));
        }
        for s in sent {
            let resp = s.await?.context("an unauthenticated request took 60 s")??;
            let code = resp
                .headers()
                .get("grpc-status")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            assert_eq!(code.as_deref(), Some("7"), "{resp:?}");
        }
        // 64 idle connections from hostB's address: at most 16 (its share, counting
        // hostB's own sbatchd's) are kept; the rest are closed at once.
        let mut kept = 0;
        let mut held = Vec::new();
        for _ in 0..64 {
            use tokio::io::AsyncReadExt;
            let s = tokio::net::TcpSocket::new_v4()?;
            s.bind(SocketAddr::new(host_b, 0))?;
            let mut conn = s.connect(mbd).await?;
            let mut buf = [0u8; 64];
            // A kept connection hears the server's HTTP/2 settings; a refused one ends.
            match tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {
                    kept += 1;
                    held.push(conn);
                }
                _ => {}
            }
        }
        assert!((1..=16).contains(&kept), "{kept} of 64 connections kept");
        anyhow::Ok(held)
    });
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = sampler.join();
    let held = result?;
    // hostA's commands are served while hostB's share is held.
    c.ok("bjobs", &["-u", "all"])?;
    drop(held);
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        peak < before + 100 * 1024,
        "mbatchd grew from {before} to {peak} KiB"
    );
    Ok(())
}

/// Any message as raw bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct Raw {
    #[prost(bytes = "vec", tag = "2")]
    first: Vec<u8>,
    #[prost(bytes = "vec", tag = "999")]
    padding: Vec<u8>,
}

#[test]
fn malformed_and_oversized_requests_are_refused_and_service_goes_on() -> Result<()> {
    let c = ProcessCluster::start_batch("sec-malformed", &ClusterSpec::new(1), "")?;
    let cfg = config(&c)?;
    let auth = basalt_runtime::user_auth(&cfg);
    let mbd = basalt_runtime::mbd_addr(&cfg, "hostA")?;
    let rt = rt()?;
    rt.block_on(async {
        let ch = raw_channel(mbd, auth.local_addr()).await?;
        let path =
            tonic::codegen::http::uri::PathAndQuery::from_static("/basalt.mbatchd.v1.Mbatchd/Jobs");
        for (what, raw, code) in [
            (
                "malformed",
                // Field 2 (ids) holding bytes that are no JobRef message.
                Raw {
                    first: vec![0xff; 16],
                    padding: Vec::new(),
                },
                tonic::Code::Internal,
            ),
            (
                "oversized",
                Raw {
                    first: Vec::new(),
                    padding: vec![0; basalt_runtime::MAX_MESSAGE_BYTES + 1024],
                },
                tonic::Code::OutOfRange,
            ),
        ] {
            let mut g = tonic::client::Grpc::new(ch.clone()).max_encoding_message_size(usize::MAX);
            g.ready().await?;
            let cred = sealed(&auth, "hostA", JOBS, &raw)?;
            let r: Result<tonic::Response<Raw>, _> = g
                .unary(
                    with_cred(raw, &cred),
                    path.clone(),
                    tonic_prost::ProstCodec::default(),
                )
                .await;
            match r {
                Err(s) if s.code() == code || s.code() == tonic::Code::ResourceExhausted => {
                    eprintln!("{what}: {:?} {}", s.code(), s.message())
                }
                other => bail!("{what} request: {other:?}"),
            }
        }
        anyhow::Ok(())
    })?;
    // mbatchd still serves.
    c.ok("bjobs", &["-u", "all"])?;
    c.ok("bqueues", &[])?;
    Ok(())
}

/// A test user (created when missing) in the supplementary group `group`.
fn test_user(name: &str, group: Option<&str>) -> Result<(u32, u32)> {
    if let Some(g) = group {
        let _ = std::process::Command::new("groupadd").arg(g).output();
    }
    if nix::unistd::User::from_name(name)?.is_none() {
        let mut cmd = std::process::Command::new("useradd");
        cmd.args(["-M", "-s", "/bin/sh"]);
        if let Some(g) = group {
            cmd.args(["-G", g]);
        }
        let o = cmd.arg(name).output()?;
        if !o.status.success() && nix::unistd::User::from_name(name)?.is_none() {
            bail!("useradd {name}: {}", output_text(&o));
        }
    } else if let Some(g) = group {
        let _ = std::process::Command::new("usermod")
            .args(["-a", "-G", g, name])
            .output();
    }
    let u = nix::unistd::User::from_name(name)?.ok_or_else(|| anyhow!("no user {name}"))?;
    Ok((u.uid.as_raw(), u.gid.as_raw()))
}

fn work_dir(c: &ProcessCluster) -> Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let w = c.dir.path().join("work-users");
    std::fs::create_dir_all(&w)?;
    std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o1777))?;
    std::fs::set_permissions(c.dir.path(), std::fs::Permissions::from_mode(0o755))?;
    Ok(w)
}

fn as_user(
    c: &ProcessCluster,
    u: (u32, u32),
    cwd: &Path,
    cmd: &str,
    args: &[&str],
) -> Result<std::process::Output> {
    Ok(c.command(cmd)
        .args(args)
        .current_dir(cwd)
        .uid(u.0)
        .gid(u.1)
        .env("HOME", cwd)
        .output()?)
}

fn job_id(o: &std::process::Output) -> Result<u64> {
    String::from_utf8_lossy(&o.stdout)
        .split(['<', '>'])
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("no job id: {}", output_text(o)))
}

fn stat_of(c: &ProcessCluster, id: u64) -> Option<String> {
    let out = c
        .ok("bjobs", &["-a", "-noheader", "-o", "stat", &id.to_string()])
        .ok()?;
    out.split_whitespace().next().map(str::to_owned)
}

#[test]
fn jobs_run_as_their_user_and_only_owners_or_admins_control_them() -> Result<()> {
    if !is_root() {
        basalt_testkit::skip(
            "jobs_run_as_their_user_and_only_owners_or_admins_control_them",
            "creating test users and switching to them needs root",
        );
        return Ok(());
    }
    let a = test_user("basalt-sa", Some("basalt-sgrp"))?;
    let b = test_user("basalt-sb", None)?;
    let mut spec = ClusterSpec::new(1);
    spec.root_rex = false;
    let c = ProcessCluster::start_batch("sec-users", &spec, "")?;
    let work = work_dir(&c)?;

    // A's job runs with A's uid, primary gid and supplementary groups.
    let o = as_user(
        &c,
        a,
        &work,
        "bsub",
        &["-o", "ids.%J", "id -u; id -g; id -G; sleep 60"],
    )?;
    assert!(o.status.success(), "{}", output_text(&o));
    let id = job_id(&o)?;
    wait_for("A's job to run", DEADLINE, || {
        let s = stat_of(&c, id);
        (
            (s.as_deref() == Some("RUN")).then_some(()),
            format!("{s:?}"),
        )
    })?;
    // The three ids are written before the job is killed (under load, a job killed as
    // soon as it shows RUN may not have run `id -G` yet).
    wait_for("A's job to print its ids", DEADLINE, || {
        let t = std::fs::read_to_string(work.join(format!("ids.{id}"))).unwrap_or_default();
        let n = t.lines().filter(|l| !l.trim().is_empty()).count();
        ((n >= 3).then_some(()), format!("{t:?}"))
    })?;
    // B may not kill it; A may.
    let o = as_user(&c, b, &work, "bkill", &[&id.to_string()])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("Job <{id}>: User permission denied")),
        "{}",
        output_text(&o)
    );
    let o = as_user(&c, a, &work, "bkill", &[&id.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let out = wait_for("A's job output", DEADLINE, || {
        let t = std::fs::read_to_string(work.join(format!("ids.{id}"))).ok();
        (
            t.clone().filter(|t| t.contains("Sender: LSF System")),
            format!("{t:?}"),
        )
    })?;
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(a.0))?
        .ok_or_else(|| anyhow!("no user"))?;
    let name = std::ffi::CString::new(user.name.clone())?;
    let mut want: Vec<u32> = nix::unistd::getgrouplist(&name, user.gid)?
        .into_iter()
        .map(|g| g.as_raw())
        .collect();
    want.sort_unstable();
    want.dedup();
    let grp = nix::unistd::Group::from_name("basalt-sgrp")?
        .ok_or_else(|| anyhow!("no group basalt-sgrp"))?;
    assert!(want.contains(&grp.gid.as_raw()), "{want:?}");
    let mut lines = out.lines().filter(|l| !l.is_empty());
    let uid_line = lines
        .find(|l| l.trim() == a.0.to_string())
        .ok_or_else(|| anyhow!("no uid line in {out}"))?;
    assert_eq!(uid_line.trim(), a.0.to_string());
    assert_eq!(
        lines.next().map(str::trim),
        Some(a.1.to_string().as_str()),
        "{out}"
    );
    let mut got: Vec<u32> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|g| g.parse().ok())
        .collect();
    got.sort_unstable();
    assert_eq!(got, want, "supplementary groups of the job: {out}");

    // Root may not submit without LSF_ROOT_REX.
    let o = c.command("bsub").arg("true").current_dir(&work).output()?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        output_text(&o).contains("User permission denied"),
        "{}",
        output_text(&o)
    );
    Ok(())
}

#[test]
fn a_personal_cluster_serves_only_its_owner() -> Result<()> {
    if !is_root() {
        basalt_testkit::skip(
            "a_personal_cluster_serves_only_its_owner",
            "running daemons as another user needs root",
        );
        return Ok(());
    }
    let owner = test_user("basalt-so", None)?;
    let other = test_user("basalt-sb", None)?;
    let mut spec = ClusterSpec::new(1);
    spec.daemon_user = Some(owner);
    let c = ProcessCluster::start_batch("sec-personal", &spec, "")?;
    let work = work_dir(&c)?;
    // The owner (the cluster's commands run as the owner) submits and sees the job.
    let id = c.bsub(&work, &["-o", "/dev/null", "id -u"])?;
    wait_for("the owner's job to finish", DEADLINE, || {
        let s = stat_of(&c, id);
        (
            (s.as_deref() == Some("DONE")).then_some(()),
            format!("{s:?}"),
        )
    })?;
    c.ok("lsid", &[])?;
    // Another user, and root, are refused by every daemon.
    for (who, u) in [("another user", other), ("root", (0, 0))] {
        for (cmd, args) in [
            ("bsub", vec!["true"]),
            ("bjobs", vec!["-u", "all"]),
            ("lsid", vec![]),
        ] {
            let o = as_user(&c, u, &work, cmd, &args)?;
            assert!(
                !o.status.success(),
                "{who}: {cmd} worked: {}",
                output_text(&o)
            );
            assert!(
                output_text(&o).contains("User permission denied"),
                "{who}: {cmd}: {}",
                output_text(&o)
            );
        }
    }
    Ok(())
}

#[test]
fn eauth_decides_who_may_ask() -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut spec = ClusterSpec::new(1);
    // eauth -c prints a token naming the caller's uid; eauth -s accepts exactly that,
    // and logs each request line so the test can see LSF's protocol was spoken.
    let script = r#"#!/bin/sh
if [ "$1" = "-c" ]; then
  if [ -n "$EAUTH_LIE" ]; then printf 'tok-%s' "$EAUTH_LIE"; else printf 'tok-%s' "$(id -u)"; fi
  exit 0
fi
while read uid gid user addr port len data; do
  echo "$uid $gid $user $addr $port $len $data" >> "$(dirname "$0")/eauth.log"
  if [ "$data" = "tok-$uid" ]; then echo 1; else echo 0; fi
done
"#;
    spec = spec.elim("eauth", script);
    spec.lsf_conf_extra = "LSF_AUTH=eauth\n".into();
    let c = ProcessCluster::start_batch("sec-eauth", &spec, "")?;
    let p = c.dir.path().join("serverdir/eauth");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    let work = work_dir(&c)?;
    let id = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    wait_for("the job to finish", DEADLINE, || {
        let s = stat_of(&c, id);
        (
            (s.as_deref() == Some("DONE")).then_some(()),
            format!("{s:?}"),
        )
    })?;
    let log = std::fs::read_to_string(c.dir.path().join("serverdir/eauth.log"))
        .context("eauth -s wrote no log")?;
    let me = nix::unistd::getuid().as_raw();
    assert!(
        log.lines()
            .any(|l| l.starts_with(&format!("{me} ")) && l.ends_with(&format!("tok-{me}"))),
        "{log}"
    );
    // A client whose eauth -c vouches for someone else is refused.
    let o = c
        .command("bjobs")
        .args(["-u", "all"])
        .env("EAUTH_LIE", "12345")
        .output()?;
    assert!(!o.status.success(), "{}", output_text(&o));
    assert!(
        output_text(&o).contains("User permission denied"),
        "{}",
        output_text(&o)
    );
    Ok(())
}
