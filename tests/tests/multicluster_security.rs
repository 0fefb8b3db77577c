//! MultiCluster trust on real processes (issue 49, item 1): two clusters, `west` and
//! `east`, share one key file and no `BASALT_MC_KEY` (the documented fallback: each uses
//! its cluster key for MultiCluster too). East has no `LSF_ROOT_REX`.
//!
//! 1. A job of root's in west is forwarded to east and runs there as the user the
//!    clusters' lsb.users UserMap sections give: west exports root to `mcexp@east`,
//!    east imports `mcexp@west` as `mcimp` — who runs it, with mcimp's uid.
//! 2. An ordinary user of west (`mcuser`) takes a user credential from west's LIM (its
//!    credential socket, as any user process does) and sends east's mbatchd what only
//!    west's mbatchd may: `ForwardJob` with root's JOB_NEW, `ControlJob` RESUME of it
//!    and KILL of the job of step 1, `ClusterInfo`, `RemoteJobs`, the ticket relabelled
//!    inter-cluster; and east's command service a query. Each is refused by the
//!    authentication layer (a user credential is not an inter-cluster one, and its
//!    signature is the user domain's; nor is it east's); nothing happens in east.
//! 3. A genuine inter-cluster credential (west's mbatchd's) forwarding root's JOB_NEW:
//!    taken by the layer, refused by east's rules ("Root user's job submission
//!    rejected"), the reason in the forward's answer; no job in east. That credential
//!    is no user's of east's, and west's daemon credential (the same key file) is
//!    neither east's daemon's nor a cluster's.
//! 4. Every RPC of the API, at the daemon of west's hostA that serves it (lim, sbatchd,
//!    res, mbatchd), with a user ticket, a daemon credential and an inter-cluster
//!    credential wherever its service does not take that domain: refused, each one.
//!
//! Needs root (it creates the users with useradd); run as another user it says it is
//! skipped.

use anyhow::{Context, Result, anyhow, bail};
use basalt_auth::cred::{self, Ticket};
use basalt_auth::key::KeySource;
use basalt_auth::{Authenticator, Identity, Kind};
use basalt_proto::mbatchd as pb;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_proto::mbatchd::mbatchd_cluster_client::MbatchdClusterClient;
use basalt_proto::mbatchd::mbatchd_peer_client::MbatchdPeerClient;
use basalt_testkit::multicluster::McMember;
use basalt_testkit::{ProcessCluster, event_fields, output_text, wait_for};
use std::net::{IpAddr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tonic::metadata::BinaryMetadataValue;
use tonic::transport::{Channel, Endpoint};

const LONG: Duration = Duration::from_secs(60);

/// The environment variable that makes [`helper_fetches_a_user_ticket`] run: west's
/// LSF_ENVDIR.
const HELPER_ENVDIR: &str = "BASALT_TEST_TICKET_ENVDIR";

const WEST_QUEUES: &str = "
Begin Queue
QUEUE_NAME = send
PRIORITY = 30
SNDJOBS_TO = recv@east
End Queue
";

const EAST_QUEUES: &str = "
Begin Queue
QUEUE_NAME = recv
PRIORITY = 30
RCVJOBS_FROM = west
End Queue
";

const WEST_USERS: &str = "
Begin UserMap
LOCAL   REMOTE       DIRECTION
root    mcexp@east   export
End UserMap
";

const EAST_USERS: &str = "
Begin UserMap
LOCAL   REMOTE       DIRECTION
mcimp   mcexp@west   import
End UserMap
";

const CLUSTER_INFO: &str = "/basalt.mbatchd.v1.MbatchdCluster/ClusterInfo";
const REMOTE_JOBS: &str = "/basalt.mbatchd.v1.MbatchdCluster/RemoteJobs";
const FORWARD_JOB: &str = "/basalt.mbatchd.v1.MbatchdCluster/ForwardJob";
const CONTROL_JOB: &str = "/basalt.mbatchd.v1.MbatchdCluster/ControlJob";
const JOBS: &str = "/basalt.mbatchd.v1.Mbatchd/Jobs";
/// Why the MultiCluster service refuses a user's credential.
const USER_WHERE_MC: &str =
    "a user credential (of mcuser on host hostA) where inter-cluster is needed";
const SBD_HELLO: &str = "/basalt.mbatchd.v1.MbatchdPeer/SbdHello";

fn config(c: &ProcessCluster) -> Result<basalt_config::Config> {
    Ok(basalt_config::load(&c.envdir)
        .map_err(|e| anyhow!("{e}"))?
        .config)
}

fn events(c: &ProcessCluster) -> PathBuf {
    c.dir
        .path()
        .join(format!("work/{}/logdir/lsb.events", c.cluster))
}

/// The records of `kind` in a cluster's lsb.events, as fields.
fn records(c: &ProcessCluster, kind: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(events(c))
        .unwrap_or_default()
        .lines()
        .map(event_fields)
        .filter(|f| f.first().map(String::as_str) == Some(kind))
        .collect()
}

/// The lsb.events line of job `id`'s JOB_NEW.
fn job_new_line(c: &ProcessCluster, id: u64) -> Option<String> {
    std::fs::read_to_string(events(c))
        .ok()?
        .lines()
        .find(|l| {
            let f = event_fields(l);
            f.first().map(String::as_str) == Some("JOB_NEW")
                && f.get(3).and_then(|v| v.parse::<u64>().ok()) == Some(id)
        })
        .map(str::to_owned)
}

/// JOB_NEW's (uid, user name): fields 4 and 13.
fn owner(f: &[String]) -> (String, String) {
    (
        f.get(4).cloned().unwrap_or_default(),
        f.get(13).cloned().unwrap_or_default(),
    )
}

/// A test user (created when missing): (uid, gid).
fn test_user(name: &str) -> Result<(u32, u32)> {
    if nix::unistd::User::from_name(name)?.is_none() {
        let o = std::process::Command::new("useradd")
            .args(["-M", "-s", "/bin/sh", name])
            .output()?;
        if !o.status.success() && nix::unistd::User::from_name(name)?.is_none() {
            bail!("useradd {name}: {}", output_text(&o));
        }
    }
    let u = nix::unistd::User::from_name(name)?.ok_or_else(|| anyhow!("no user {name}"))?;
    Ok((u.uid.as_raw(), u.gid.as_raw()))
}

/// bjobs `-o stat` of one job in `c`.
fn stat(c: &ProcessCluster, id: u64) -> Option<String> {
    let out = c.stdout_ok(
        "bjobs",
        &[
            "-a",
            "-u",
            "all",
            "-noheader",
            "-o",
            "stat",
            &id.to_string(),
        ],
    )?;
    out.split_whitespace().next().map(str::to_owned)
}

fn wait_stat(c: &ProcessCluster, id: u64, want: &str) -> Result<()> {
    wait_for(
        &format!("job {id} to be {want} in cluster {}", c.cluster),
        LONG,
        || {
            let s = stat(c, id);
            ((s.as_deref() == Some(want)).then_some(()), format!("{s:?}"))
        },
    )
}

fn rt() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// A plain channel (no credentials of its own) to `addr`, leaving from `local`.
async fn raw_channel(addr: SocketAddr, local: IpAddr) -> Result<Channel> {
    Ok(Endpoint::from_shared(format!("http://{addr}"))?
        .local_address(Some(local))
        .timeout(Duration::from_secs(10))
        .connect()
        .await?)
}

/// `msg` framed as tonic sends it (no compression, a 5-byte header): what a seal binds.
fn framed<M: prost::Message>(msg: &M) -> Result<Vec<u8>> {
    let body = msg.encode_to_vec();
    let mut out = vec![0u8];
    out.extend_from_slice(&u32::try_from(body.len())?.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// `msg` with the credential `cred` and this build's protocol version.
fn with_cred<T>(msg: T, cred: &[u8]) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut().insert_bin(
        basalt_auth::CRED_METADATA,
        BinaryMetadataValue::from_bytes(cred),
    );
    if let Ok(v) = basalt_proto::protocol_text().parse() {
        r.metadata_mut().insert(basalt_proto::PROTOCOL_METADATA, v);
    }
    r
}

/// The request `msg` to `path` on `target`'s daemon sealed with a stolen `ticket`.
fn sealed_with<M: prost::Message + Clone>(
    ticket: &Ticket,
    target: &str,
    path: &str,
    msg: &M,
) -> Result<tonic::Request<M>> {
    let cred = ticket.seal(
        target,
        &cred::binding(path, Some(&framed(msg)?)),
        cred::now_ms(),
    )?;
    Ok(with_cred(msg.clone(), &cred))
}

/// The request `msg` to `path` on `target`'s daemon with `auth`'s credential.
fn sealed_by<M: prost::Message + Clone>(
    auth: &Authenticator,
    target: &str,
    path: &str,
    msg: &M,
) -> Result<tonic::Request<M>> {
    let cred = auth
        .towards(target)
        .credential_for(path, Some(&framed(msg)?))?
        .1;
    Ok(with_cred(msg.clone(), &cred))
}

/// Refused by the authentication layer: `User permission denied`.
fn denied<T: std::fmt::Debug>(what: &str, r: Result<T, tonic::Status>) -> Result<()> {
    match r {
        Err(s) if s.code() == tonic::Code::PermissionDenied => {
            if s.message() != basalt_auth::PERMISSION_DENIED {
                bail!("{what}: refused with {:?}", s.message());
            }
            Ok(())
        }
        other => bail!("{what}: not refused: {other:?}"),
    }
}

/// Refused by the authentication layer of the MultiCluster service, which tells the
/// other cluster why (the reason must contain `because`).
fn mc_refused<T: std::fmt::Debug>(
    what: &str,
    r: Result<T, tonic::Status>,
    because: &str,
) -> Result<()> {
    match r {
        Err(s)
            if matches!(
                s.code(),
                tonic::Code::PermissionDenied | tonic::Code::Unauthenticated
            ) && s.message().starts_with(basalt_auth::PERMISSION_DENIED) =>
        {
            if !s.message().contains(because) {
                bail!("{what}: refused for another reason: {:?}", s.message());
            }
            Ok(())
        }
        other => bail!("{what}: not refused: {other:?}"),
    }
}

/// The user ticket `user` gets from west's LIM: this test binary run as that user
/// ([`helper_fetches_a_user_ticket`]), which prints the ticket and its session key.
fn users_ticket(west: &ProcessCluster, user: (u32, u32)) -> Result<Ticket> {
    let exe = std::env::current_exe()?;
    let o = std::process::Command::new(&exe)
        .args([
            "helper_fetches_a_user_ticket",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENVDIR, &west.envdir)
        .env("HOME", "/")
        .current_dir("/")
        .uid(user.0)
        .gid(user.1)
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let line = String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.split_once("TICKET ").map(|(_, t)| t.to_owned()))
        .ok_or_else(|| anyhow!("no ticket from the helper: {}", output_text(&o)))?;
    let mut parts = line.split_whitespace().map(basalt_auth::key::unhex);
    let (Some(Some(t)), Some(Some(s))) = (parts.next(), parts.next()) else {
        bail!("unreadable ticket line {line:?}");
    };
    Ok(Ticket::from_parts(&t, &s)?)
}

/// `ticket` with its kind changed to `kind` (its signature and session key kept): what a
/// user can make of a ticket without the key.
fn relabel(ticket: &Ticket, kind: Kind) -> Result<Ticket> {
    use prost::Message as _;
    let (bytes, session) = ticket.to_parts();
    let mut signed = basalt_proto::common::SignedCredential::decode(&bytes[..])?;
    let mut cred = basalt_proto::common::Credential::decode(&signed.body[..])?;
    cred.kind = kind as i32;
    signed.body = cred.encode_to_vec();
    Ok(Ticket::from_parts(&signed.encode_to_vec(), &session)?)
}

/// Run by [`users_ticket`] as an ordinary user: fetch a user ticket from the credential
/// socket of hostA's LIM of the cluster at `$BASALT_TEST_TICKET_ENVDIR`, as every command
/// does, and print it.
#[test]
#[ignore = "a helper: users_ticket runs it as an ordinary user"]
fn helper_fetches_a_user_ticket() -> Result<()> {
    // Not run by [`users_ticket`] (`--include-ignored`): nothing to fetch for.
    let Some(envdir) = std::env::var_os(HELPER_ENVDIR) else {
        return Ok(());
    };
    let cfg = basalt_config::load(Path::new(&envdir))
        .map_err(|e| anyhow!("{e}"))?
        .config;
    let lim = basalt_runtime::lim_addr(&cfg, "hostA")?;
    let t = basalt_auth::socket::fetch(
        &basalt_auth::socket::name(lim),
        &[],
        Duration::from_secs(10),
    )?;
    let (ticket, session) = t.to_parts();
    println!(
        "TICKET {} {}",
        basalt_auth::key::hex(&ticket),
        basalt_auth::key::hex(&session)
    );
    Ok(())
}

/// Makes the credential of one request: (path, body; None for a stream) -> bytes.
type CredMaker<'a> = dyn Fn(&str, Option<&[u8]>) -> Result<Vec<u8>> + 'a;

/// A message with no fields: any request decodes from it, any reply into it.
#[derive(Clone, PartialEq, prost::Message)]
struct Empty {}

/// The domains of each service, as docs/security.md gives them (independent of
/// `basalt_auth::policy`, which the daemons apply): (user, daemon, inter-cluster).
fn domains(service: &str) -> Option<[bool; 3]> {
    Some(match service.rsplit('.').next()? {
        "Lim" => [true, true, false],
        "LimPeer" | "MbatchdPeer" | "SbatchdPeer" => [false, true, false],
        "Mbatchd" | "Sbatchd" | "Res" | "DaemonControl" => [true, false, false],
        "MbatchdCluster" => [false, false, true],
        _ => return None,
    })
}

/// Where `service` is served on `host` of `cfg`: the daemons that serve it.
fn serving(cfg: &basalt_config::Config, service: &str) -> Result<Vec<SocketAddr>> {
    let h = "hostA";
    Ok(match service.rsplit('.').next().unwrap_or("") {
        "Lim" | "LimPeer" => vec![basalt_runtime::lim_addr(cfg, h)?],
        "DaemonControl" => vec![
            basalt_runtime::lim_addr(cfg, h)?,
            basalt_runtime::sbd_addr(cfg, h)?,
        ],
        "Sbatchd" | "SbatchdPeer" => vec![basalt_runtime::sbd_addr(cfg, h)?],
        "Res" => vec![basalt_runtime::res_addr(cfg, h)?],
        _ => vec![basalt_runtime::mbd_addr(cfg, h)?],
    })
}

/// One raw call of `path` at `addr` from `local`, with the credential `cred` makes for
/// it (sealed for `path` and an empty body, or for a stream).
async fn raw_call(
    addr: SocketAddr,
    local: IpAddr,
    path: &str,
    cred: impl Fn(&str, Option<&[u8]>) -> Result<Vec<u8>>,
) -> Result<Result<(), tonic::Status>> {
    let body = framed(&Empty {})?;
    let streaming = basalt_auth::policy::method(path).streaming;
    let c = cred(path, (!streaming).then_some(&body[..]))?;
    let mut grpc = tonic::client::Grpc::new(raw_channel(addr, local).await?);
    grpc.ready()
        .await
        .map_err(|e| anyhow!("{addr} not ready: {e}"))?;
    let r = grpc
        .unary(
            with_cred(Empty {}, &c),
            path.parse::<tonic::codegen::http::uri::PathAndQuery>()?,
            tonic_prost::ProstCodec::<Empty, Empty>::default(),
        )
        .await;
    Ok(r.map(|_| ()))
}

/// Every RPC of the API at the daemons of `cfg`'s hostA that serve it, sent from
/// `local` with a credential of each domain it does not take: refused, every one. Each
/// credential is `(domain index, name, maker)`.
async fn every_endpoint_takes_only_its_domain(
    cfg: &basalt_config::Config,
    local: IpAddr,
    creds: &[(usize, &str, &CredMaker<'_>)],
) -> Result<usize> {
    let mut service = String::new();
    let mut refused = 0;
    for line in basalt_proto::API.lines() {
        if let Some(s) = line.strip_prefix("service ") {
            service = s.to_owned();
            continue;
        }
        let Some(rpc) = line.trim().strip_prefix("rpc ") else {
            continue;
        };
        let name = rpc.split('(').next().unwrap_or("");
        let path = format!("/{service}/{name}");
        let takes = domains(&service).ok_or_else(|| anyhow!("service {service}: no domain"))?;
        for addr in serving(cfg, &service)? {
            for (domain, what, cred) in creds {
                if takes[*domain] {
                    continue;
                }
                let r = raw_call(addr, local, &path, cred).await?;
                match r {
                    Err(s)
                        if matches!(
                            s.code(),
                            tonic::Code::PermissionDenied | tonic::Code::Unauthenticated
                        ) && s.message().starts_with(basalt_auth::PERMISSION_DENIED) =>
                    {
                        refused += 1;
                    }
                    other => bail!("{path} at {addr} with {what}: not refused: {other:?}"),
                }
            }
        }
    }
    Ok(refused)
}

#[test]
fn a_user_credential_cannot_speak_for_a_cluster_and_forwarded_users_follow_the_receivers_rules()
-> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        basalt_testkit::skip(
            "a_user_credential_cannot_speak_for_a_cluster_and_forwarded_users_follow_the_receivers_rules",
            "needs root (creates users)",
        );
        return Ok(());
    }
    let forger = test_user("mcuser")?;
    let mapped = test_user("mcimp")?;

    let west = McMember::new("west", 1)
        .no_mc_key()
        .queues(WEST_QUEUES)
        .users(WEST_USERS)
        .params("MBD_SLEEP_TIME = 1");
    let mut east = McMember::new("east", 1)
        .no_mc_key()
        .queues(EAST_QUEUES)
        .users(EAST_USERS)
        .params("MBD_SLEEP_TIME = 1");
    east.spec.root_rex = false;
    let mut cs = ProcessCluster::start_multicluster("mcsec", &[west, east])?;
    cs[0].start_daemon("res", "hostA")?;
    let (w, e) = (&cs[0], &cs[1]);
    let (wcfg, ecfg) = (config(w)?, config(e)?);
    assert_eq!(basalt_config::mc_key_path(&wcfg), None);
    assert_eq!(basalt_config::mc_key_path(&ecfg), None);
    assert!(!basalt_auth::root_rex(&ecfg) && basalt_auth::root_rex(&wcfg));
    assert_eq!(
        std::fs::read(basalt_auth::key_path(&wcfg))?,
        std::fs::read(basalt_auth::key_path(&ecfg))?,
        "the two clusters share one key"
    );
    wait_for("west's link to east", LONG, || {
        let out = w.stdout_ok("bclusters", &[]).unwrap_or_default();
        let ok = out.lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>() == ["send", "send", "recv", "east", "ok"]
        });
        (ok.then_some(()), out)
    })?;
    // Everyone may read the configuration and work in the job's directory.
    use std::os::unix::fs::PermissionsExt;
    for c in [w, e] {
        std::fs::set_permissions(c.dir.path(), std::fs::Permissions::from_mode(0o755))?;
    }
    let work = w.dir.path().join("work-users");
    std::fs::create_dir_all(&work)?;
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o1777))?;

    // Root's JOB_NEW in west (held there): what the forgers send.
    let held = w.bsub(
        &work,
        &["-H", "-q", "normal", "-o", "/dev/null", "sleep", "1"],
    )?;
    let root_job_new = job_new_line(w, held).context("the held job's JOB_NEW")?;
    assert_eq!(
        owner(&event_fields(&root_job_new)),
        ("0".to_owned(), "root".to_owned())
    );

    // 1. Root's job, forwarded, runs in east as mcimp (west's export, east's import).
    w.ok("badmin", &["hclose", "hostA"])?;
    let cmd = "while [ ! -f go ]; do sleep 0.1; done; id -u > mapped.uid";
    let fwd = w.bsub(&work, &["-q", "send", "-o", "/dev/null", cmd])?;
    wait_stat(w, fwd, "RUN")?;
    let news = records(e, "JOB_NEW");
    assert_eq!(news.len(), 1, "{news:?}");
    assert_eq!(
        owner(&news[0]),
        (mapped.0.to_string(), "mcimp".to_owned()),
        "east's user and uid, not the forwarded ones"
    );
    let remote: u64 = news[0]
        .get(3)
        .and_then(|v| v.parse().ok())
        .context("east's job id")?;

    let rt = rt()?;
    let mbd = basalt_runtime::mbd_addr(&ecfg, "hostA")?;
    let west_host = w.addrs[0];
    let forward = |src: u64| pb::McForwardRequest {
        job_id: src,
        idx: 0,
        attempt: 1,
        queue: "recv".into(),
        job_new: root_job_new.clone(),
        job_file: b"#!/bin/sh\nid\n".to_vec(),
    };
    let control = |src: u64, signal: &str| pb::McControlRequest {
        job_id: src,
        idx: 0,
        signal: signal.into(),
    };

    // 2. mcuser's own user credential, from west's LIM, sent from west's master host.
    let ticket = users_ticket(w, forger)?;
    let c = ticket.credential();
    assert_eq!(
        (c.uid, c.user.as_str(), c.cluster.as_str()),
        (forger.0, "mcuser", "west")
    );
    rt.block_on(async {
        let ch = raw_channel(mbd, west_host).await?;
        let mut mc = MbatchdClusterClient::new(ch.clone());
        let r = mc
            .forward_job(sealed_with(
                &ticket,
                "hostA",
                FORWARD_JOB,
                &forward(900_001),
            )?)
            .await;
        mc_refused(
            "ForwardJob of root's job with a user credential",
            r,
            USER_WHERE_MC,
        )?;
        let r = mc
            .control_job(sealed_with(
                &ticket,
                "hostA",
                CONTROL_JOB,
                &control(900_001, "RESUME"),
            )?)
            .await;
        mc_refused("ControlJob RESUME with a user credential", r, USER_WHERE_MC)?;
        let r = mc
            .control_job(sealed_with(
                &ticket,
                "hostA",
                CONTROL_JOB,
                &control(fwd, "KILL"),
            )?)
            .await;
        mc_refused(
            "ControlJob KILL of a forwarded job with a user credential",
            r,
            USER_WHERE_MC,
        )?;
        let r = mc
            .cluster_info(sealed_with(
                &ticket,
                "hostA",
                CLUSTER_INFO,
                &pb::McInfoRequest {},
            )?)
            .await;
        mc_refused("ClusterInfo with a user credential", r, USER_WHERE_MC)?;
        let r = mc
            .remote_jobs(sealed_with(
                &ticket,
                "hostA",
                REMOTE_JOBS,
                &pb::McJobsRequest {},
            )?)
            .await;
        mc_refused("RemoteJobs with a user credential", r, USER_WHERE_MC)?;
        // Nor does relabelling the ticket help: its signature is the user domain's.
        let relabelled = relabel(&ticket, Kind::InterCluster)?;
        let r = mc
            .forward_job(sealed_with(
                &relabelled,
                "hostA",
                FORWARD_JOB,
                &forward(900_001),
            )?)
            .await;
        mc_refused(
            "ForwardJob with a user ticket relabelled inter-cluster",
            r,
            "bad credential signature",
        )?;
        // Nor is west's user east's user.
        let jobs = pb::JobsRequest {
            user: "all".into(),
            states: u32::MAX,
            ..Default::default()
        };
        let r = MbatchdClient::new(ch)
            .jobs(sealed_with(&ticket, "hostA", JOBS, &jobs)?)
            .await;
        denied("east's Jobs with west's user credential", r)?;
        anyhow::Ok(())
    })?;
    assert_eq!(
        stat(e, remote).as_deref(),
        Some("RUN"),
        "the job KILL named"
    );

    // 3. West's mbatchd's own inter-cluster credential: the layer takes it; east's rules
    //    refuse root (no LSF_ROOT_REX), and the answer says so.
    let keys = Arc::new(KeySource::open(&basalt_auth::key_path(&wcfg), true)?);
    let mbatchd = Authenticator::with_key(
        keys,
        Identity {
            kind: Kind::InterCluster,
            uid: 0,
            gid: 0,
            user: "mbatchd".into(),
            host: "hostA".into(),
        },
        "west",
        Some(west_host),
    );
    rt.block_on(async {
        let mut mc = MbatchdClusterClient::new(raw_channel(mbd, west_host).await?);
        let info = mc
            .cluster_info(sealed_by(
                &mbatchd,
                "hostA",
                CLUSTER_INFO,
                &pb::McInfoRequest {},
            )?)
            .await
            .context("ClusterInfo with west's inter-cluster credential")?
            .into_inner();
        assert_eq!(
            info.queues
                .iter()
                .map(|q| q.name.as_str())
                .collect::<Vec<_>>(),
            ["recv"]
        );
        let r = mc
            .forward_job(sealed_by(
                &mbatchd,
                "hostA",
                FORWARD_JOB,
                &forward(900_002),
            )?)
            .await
            .context("ForwardJob with west's inter-cluster credential")?
            .into_inner();
        assert!(!r.accepted, "root's job accepted: {r:?}");
        assert!(
            r.reason.starts_with("Root user's job submission rejected")
                && r.reason.contains("LSF_ROOT_REX"),
            "{r:?}"
        );
        let r = mc
            .control_job(sealed_by(
                &mbatchd,
                "hostA",
                CONTROL_JOB,
                &control(900_002, "RESUME"),
            )?)
            .await?
            .into_inner();
        assert_eq!(r.error, "No matching job found");
        // Each credential only in its own domain and cluster: west's mbatchd is no user
        // of east's, west's daemons are neither east's daemons nor another cluster.
        let ch = raw_channel(mbd, west_host).await?;
        let jobs = pb::JobsRequest {
            user: "all".into(),
            states: u32::MAX,
            ..Default::default()
        };
        let r = MbatchdClient::new(ch.clone())
            .jobs(sealed_by(&mbatchd, "hostA", JOBS, &jobs)?)
            .await;
        denied("east's Jobs with west's inter-cluster credential", r)?;
        let daemon =
            basalt_runtime::daemon_auth(&wcfg, "hostA", basalt_runtime::cluster_keys(&wcfg)?);
        let hello = pb::SbdHelloRequest {
            host: "hostA".into(),
            ..Default::default()
        };
        let r = MbatchdPeerClient::new(ch.clone())
            .sbd_hello(sealed_by(&daemon, "hostA", SBD_HELLO, &hello)?)
            .await;
        denied("east's SbdHello with west's daemon credential", r)?;
        let r = MbatchdClusterClient::new(ch)
            .cluster_info(sealed_by(
                &daemon,
                "hostA",
                CLUSTER_INFO,
                &pb::McInfoRequest {},
            )?)
            .await;
        mc_refused(
            "ClusterInfo with west's daemon credential",
            r,
            "a daemon credential",
        )?;
        anyhow::Ok(())
    })?;

    // 4. Every endpoint of west's daemons (lim, sbatchd, res, mbatchd) takes only its
    //    domain: mcuser's ticket, hostA's daemon credential and east's mbatchd's
    //    inter-cluster credential, each sent from west's hostA where it is not taken.
    let west_keys = basalt_runtime::cluster_keys(&wcfg)?;
    let daemon = basalt_runtime::daemon_auth(&wcfg, "hostA", west_keys.clone());
    let east_mbatchd = Authenticator::with_key(
        west_keys,
        Identity {
            kind: Kind::InterCluster,
            uid: 0,
            gid: 0,
            user: "mbatchd".into(),
            host: "hostA".into(),
        },
        "east",
        Some(e.addrs[0]),
    );
    let by_user = |path: &str, body: Option<&[u8]>| -> Result<Vec<u8>> {
        Ok(ticket.seal("hostA", &cred::binding(path, body), cred::now_ms())?)
    };
    let by_daemon = |path: &str, body: Option<&[u8]>| -> Result<Vec<u8>> {
        Ok(daemon.towards("hostA").credential_for(path, body)?.1)
    };
    let by_cluster = |path: &str, body: Option<&[u8]>| -> Result<Vec<u8>> {
        Ok(east_mbatchd.towards("hostA").credential_for(path, body)?.1)
    };
    let refused = rt.block_on(async {
        // Each credential is good where it belongs (RES answers once it listens).
        let lim = basalt_runtime::lim_addr(&wcfg, "hostA")?;
        raw_call(lim, west_host, "/basalt.lim.v1.Lim/ClusterInfo", &by_user)
            .await?
            .context("lsid's request with mcuser's ticket")?;
        raw_call(lim, west_host, "/basalt.lim.v1.Lim/Hosts", &by_daemon)
            .await?
            .context("a host list for hostA's daemon")?;
        let wmbd = basalt_runtime::mbd_addr(&wcfg, "hostA")?;
        raw_call(wmbd, e.addrs[0], CLUSTER_INFO, &by_cluster)
            .await?
            .context("ClusterInfo of east's mbatchd")?;
        let res = basalt_runtime::res_addr(&wcfg, "hostA")?;
        let deadline = std::time::Instant::now() + LONG;
        while raw_channel(res, west_host).await.is_err() {
            if std::time::Instant::now() > deadline {
                bail!("west's RES does not listen at {res}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        every_endpoint_takes_only_its_domain(
            &wcfg,
            west_host,
            &[
                (0, "mcuser's ticket", &by_user),
                (1, "hostA's daemon credential", &by_daemon),
                (2, "east's inter-cluster credential", &by_cluster),
            ],
        )
        .await
    })?;
    assert!(refused >= 60, "only {refused} refusals");

    // East has the one job it was rightly sent, and no other.
    let news = records(e, "JOB_NEW");
    assert_eq!(news.len(), 1, "{news:?}");
    let ids = e
        .ok("bjobs", &["-a", "-u", "all", "-noheader", "-o", "id"])?
        .split_whitespace()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert_eq!(ids, [remote.to_string()]);

    // The mapped job ends, having run as mcimp.
    std::fs::write(work.join("go"), "")?;
    wait_stat(w, fwd, "DONE")?;
    assert_eq!(
        std::fs::read_to_string(work.join("mapped.uid"))?.trim(),
        mapped.0.to_string()
    );
    w.ok("bkill", &[&held.to_string()])?;
    Ok(())
}
