use super::*;
use crate::Authenticator;
use crate::cred::binding;
use std::os::unix::fs::PermissionsExt;
use tonic::metadata::BinaryMetadataValue;

const KEY: &str = "00112233445566778899aabbccddeeff\n";
const PATH: &str = "/basalt.mbatchd.v1.Mbatchd/Jobs";

fn keys(dir: &std::path::Path, text: &str) -> Arc<KeySource> {
    let p = dir.join(format!("k{}", text.len()));
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    Arc::new(KeySource::open(&p, true).unwrap())
}

fn hosts() -> Arc<crate::HostTable> {
    Arc::new(crate::HostTable::new(vec![
        ("hostA".into(), "127.0.0.1".parse().unwrap()),
        ("hostB".into(), "127.0.0.2".parse().unwrap()),
    ]))
}

fn who(kind: Kind, uid: u32, user: &str, host: &str) -> Identity {
    Identity {
        kind,
        uid,
        gid: uid,
        user: user.into(),
        host: host.into(),
    }
}

/// The metadata of one request to `PATH` with `body`, towards hostA.
fn md_for(a: &Authenticator, body: &[u8]) -> MetadataMap {
    let mut m = MetadataMap::new();
    a.towards("hostA").stamp(&mut m, PATH, Some(body)).unwrap();
    m
}

fn md(a: &Authenticator) -> MetadataMap {
    md_for(a, b"body")
}

fn from(ip: &str) -> Option<SocketAddr> {
    Some(SocketAddr::new(ip.parse().unwrap(), 40000))
}

/// Both steps, as the layer makes them, for a request to `PATH` with `body`.
fn check(
    v: &Verifier,
    m: &MetadataMap,
    peer: &str,
    need: Need,
    body: &[u8],
    now: u64,
) -> Result<Identity, AuthError> {
    let p = v.check_credential(m, from(peer), need, now)?;
    Ok(v.finish(p, &binding(PATH, Some(body)), now)?.identity)
}

fn verifier(k: &Arc<KeySource>) -> Verifier {
    Verifier::new(k.clone(), "basalt", "hostA", hosts(), None, None)
}

#[test]
fn a_signed_credential_is_accepted_once_from_its_host() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let v = verifier(&k);
    let a = Authenticator::with_key(k, who(Kind::User, 1001, "alice", "hostB"), "basalt", None);
    let now = cred::now_ms();
    let m = md(&a);
    let id = check(&v, &m, "127.0.0.2", Need::User, b"body", now).unwrap();
    assert_eq!(
        (id.uid, id.user.as_str(), id.host.as_str()),
        (1001, "alice", "hostB")
    );
    // The same credential again: a replay.
    let e = check(&v, &m, "127.0.0.2", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("replayed"), "{e}");
    // From another address than its host's.
    let e = check(&v, &md(&a), "127.0.0.1", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("sent from 127.0.0.1"), "{e}");
    // From a non-cluster address.
    let e = check(&v, &md(&a), "127.0.0.99", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("sent from"), "{e}");
    // A user credential where a daemon is needed.
    let e = check(&v, &md(&a), "127.0.0.2", Need::Daemon, b"body", now).unwrap_err();
    assert!(e.to_string().contains("a user credential"), "{e}");
    // Stale (older than the seal's life) and from the far future.
    let ttl = crate::SEAL_TTL.as_millis() as u64;
    let e = check(
        &v,
        &md(&a),
        "127.0.0.2",
        Need::User,
        b"body",
        now + ttl + 5_000,
    )
    .unwrap_err();
    assert!(e.to_string().contains("stale request seal"), "{e}");
    let e = check(
        &v,
        &md(&a),
        "127.0.0.2",
        Need::User,
        b"body",
        now - ttl - 5_000,
    )
    .unwrap_err();
    assert!(e.to_string().contains("stale request seal"), "{e}");
}

/// Issue 49, item 2: a credential authorises the one request it was sealed for — its
/// method, its body, its target host — and nothing else.
#[test]
fn a_credential_is_bound_to_its_method_body_and_target() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let v = verifier(&k);
    let a = Authenticator::with_key(k, who(Kind::User, 1001, "alice", "hostB"), "basalt", None);
    let now = cred::now_ms();
    // Another body.
    let m = md_for(&a, b"bkill 12");
    let p = v
        .check_credential(&m, from("127.0.0.2"), Need::User, now)
        .unwrap();
    let e = v
        .finish(p, &binding(PATH, Some(b"bkill 13")), now)
        .unwrap_err();
    assert!(e.to_string().contains("sealed for another request"), "{e}");
    // Another method.
    let p = v
        .check_credential(&m, from("127.0.0.2"), Need::User, now)
        .unwrap();
    let e = v
        .finish(
            p,
            &binding("/basalt.mbatchd.v1.Mbatchd/Signal", Some(b"bkill 12")),
            now,
        )
        .unwrap_err();
    assert!(e.to_string().contains("sealed for another request"), "{e}");
    // Refused for its binding, it was not taken as used: the right request still goes.
    assert!(check(&v, &m, "127.0.0.2", Need::User, b"bkill 12", now).is_ok());
    // Another target: a credential for hostB's daemon sent to hostA's.
    let mut m = MetadataMap::new();
    a.towards("hostB").stamp(&mut m, PATH, Some(b"x")).unwrap();
    let e = check(&v, &m, "127.0.0.2", Need::User, b"x", now).unwrap_err();
    assert!(e.to_string().contains("for host \"hostB\""), "{e}");
}

/// Issue 49, item 2: "each credential is accepted once" holds across a restart: a
/// verifier made anew on the same directory refuses what the first one accepted.
#[test]
fn a_credential_accepted_before_a_restart_is_refused_after_it() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let dir = d.path().join("replay");
    let a = Authenticator::with_key(
        k.clone(),
        who(Kind::User, 1001, "alice", "hostB"),
        "basalt",
        None,
    );
    let m = md(&a);
    let now = cred::now_ms();
    let first = verifier(&k).remember_in(&dir).unwrap();
    assert!(check(&first, &m, "127.0.0.2", Need::User, b"body", now).is_ok());
    std::mem::forget(first);
    let restarted = verifier(&k).remember_in(&dir).unwrap();
    let e = check(&restarted, &m, "127.0.0.2", Need::User, b"body", now + 5).unwrap_err();
    assert!(e.to_string().contains("replayed"), "{e}");
    // A verifier that keeps nothing (the unfixed behaviour) takes it again.
    assert!(check(&verifier(&k), &m, "127.0.0.2", Need::User, b"body", now + 5).is_ok());
}

#[test]
fn forged_foreign_and_missing_credentials_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let v = verifier(&k);
    let now = cred::now_ms();
    // No credential at all (a hand-made request claiming root in its body).
    let e = v
        .check_credential(&MetadataMap::new(), from("127.0.0.1"), Need::User, now)
        .unwrap_err();
    assert!(e.to_string().contains("no credential"), "{e}");
    // Signed with another key.
    let other = keys(d.path(), "ffeeddccbbaa99887766554433221100ff\n");
    let a = Authenticator::with_key(other, who(Kind::User, 0, "root", "hostA"), "basalt", None);
    let e = check(&v, &md(&a), "127.0.0.1", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("key"), "{e}");
    // Garbage.
    let mut m = MetadataMap::new();
    m.insert_bin(
        CRED_METADATA,
        BinaryMetadataValue::from_bytes(b"\x01\x02garbage"),
    );
    assert!(
        v.check_credential(&m, from("127.0.0.1"), Need::User, now)
            .is_err()
    );
    // Another cluster's credential.
    let a = Authenticator::with_key(k.clone(), who(Kind::User, 5, "u", "hostA"), "other", None);
    let e = check(&v, &md(&a), "127.0.0.1", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("cluster"), "{e}");
    // A host that is not in the cluster.
    let a = Authenticator::with_key(k, who(Kind::Daemon, 0, "root", "intruder"), "basalt", None);
    let e = check(&v, &md(&a), "127.0.0.1", Need::Daemon, b"body", now).unwrap_err();
    assert!(e.to_string().contains("not in the cluster"), "{e}");
}

/// Issue 49, item 1: with one key file for the cluster and for MultiCluster (no
/// `BASALT_MC_KEY`), a user's credential is still never an inter-cluster one, nor a
/// daemon's; an inter-cluster credential is never a user's or a daemon's.
#[test]
fn each_need_accepts_only_its_domain() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let remotes = [("west".to_owned(), vec![])].into_iter().collect();
    let v = Verifier::new(k.clone(), "east", "hostA", hosts(), None, None).with_inter_cluster(
        InterClusterTrust {
            keys: k.clone(),
            remotes,
        },
    );
    let now = cred::now_ms();
    // A user of the west cluster (same key, same host names) with a credential of its
    // LIM: as inter-cluster, as daemon, refused.
    let user = Authenticator::with_key(
        k.clone(),
        who(Kind::User, 1001, "mallory", "hostB"),
        "west",
        None,
    );
    for need in [Need::InterCluster, Need::Daemon] {
        let e = check(&v, &md(&user), "127.0.0.2", need, b"body", now).unwrap_err();
        assert!(e.to_string().contains("a user credential"), "{need:?}: {e}");
    }
    // West's mbatchd, with an inter-cluster credential: accepted as such, naming west.
    let mc = Authenticator::with_key(
        k.clone(),
        who(Kind::InterCluster, 0, "mbatchd", "hostB"),
        "west",
        None,
    );
    let p = v
        .check_credential(&md(&mc), from("127.0.0.2"), Need::InterCluster, now)
        .unwrap();
    let got = v.finish(p, &binding(PATH, Some(b"body")), now).unwrap();
    assert_eq!(got.cluster, "west");
    assert_eq!(got.identity.kind, Kind::InterCluster);
    // ... and refused everywhere else.
    for need in [Need::User, Need::Daemon, Need::UserOrDaemon] {
        let e = check(&v, &md(&mc), "127.0.0.2", need, b"body", now).unwrap_err();
        assert!(
            e.to_string().contains("an inter-cluster credential"),
            "{need:?}: {e}"
        );
    }
    // A daemon's credential: refused as a user's and as another cluster's.
    let daemon = Authenticator::with_key(
        k.clone(),
        who(Kind::Daemon, 0, "root", "hostB"),
        "east",
        None,
    );
    for need in [Need::User, Need::InterCluster] {
        assert!(check(&v, &md(&daemon), "127.0.0.2", need, b"body", now).is_err());
    }
    assert!(
        check(
            &v,
            &md(&daemon),
            "127.0.0.2",
            Need::UserOrDaemon,
            b"body",
            now
        )
        .is_ok()
    );
    // A cluster that is not a remote cluster, or without MultiCluster at all.
    let north = Authenticator::with_key(
        k.clone(),
        who(Kind::InterCluster, 0, "mbatchd", "hostB"),
        "north",
        None,
    );
    let e = check(
        &v,
        &md(&north),
        "127.0.0.2",
        Need::InterCluster,
        b"body",
        now,
    )
    .unwrap_err();
    assert!(e.to_string().contains("not a remote cluster"), "{e}");
    let plain = verifier(&k);
    let e = check(
        &plain,
        &md(&mc),
        "127.0.0.2",
        Need::InterCluster,
        b"body",
        now,
    )
    .unwrap_err();
    assert!(e.to_string().contains("no RemoteClusters"), "{e}");
}

#[test]
fn a_personal_cluster_accepts_only_its_owner() {
    let d = tempfile::tempdir().unwrap();
    let k = keys(d.path(), KEY);
    let v = Verifier::new(k.clone(), "basalt", "hostA", hosts(), Some(1001), None);
    let now = cred::now_ms();
    let owner = Authenticator::with_key(
        k.clone(),
        who(Kind::User, 1001, "o", "hostA"),
        "basalt",
        None,
    );
    assert!(check(&v, &md(&owner), "127.0.0.1", Need::User, b"body", now).is_ok());
    let other = Authenticator::with_key(k, who(Kind::User, 1002, "x", "hostA"), "basalt", None);
    let e = check(&v, &md(&other), "127.0.0.1", Need::User, b"body", now).unwrap_err();
    assert!(e.to_string().contains("personal cluster"), "{e}");
}

#[tokio::test]
async fn eauth_vouches_for_users_from_cluster_hosts_only() {
    let d = tempfile::tempdir().unwrap();
    let prog = d.path().join("eauth");
    std::fs::write(
        &prog,
        "#!/bin/sh\nif [ \"$1\" = -c ]; then printf 'ok-%s' \"$2\"; exit 0; fi\n\
         while read uid gid user addr port len data; do\n\
         if [ \"$data\" = ok-hostA ] && [ \"$addr\" = 127.0.0.2 ]; then echo 1; else echo 0; fi\ndone\n",
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    let k = keys(d.path(), KEY);
    let v = Verifier::new(
        k,
        "basalt",
        "hostA",
        hosts(),
        None,
        Some(EauthServer::new(prog.clone(), None)),
    );
    let a = Authenticator::eauth(prog, None);
    let id = v
        .check_headers(&md(&a), from("127.0.0.2"), Need::User)
        .await
        .unwrap();
    let id = v.finish(id, &binding(PATH, Some(b"")), 0).unwrap().identity;
    assert_eq!(id.host, "hostB");
    assert_eq!(id.uid, nix::unistd::getuid().as_raw());
    // eauth says no (wrong target in the data).
    let b = Authenticator::eauth(d.path().join("eauth"), None);
    let mut m = MetadataMap::new();
    b.towards("hostB").stamp(&mut m, PATH, Some(b"")).unwrap();
    assert!(
        v.check_headers(&m, from("127.0.0.2"), Need::User)
            .await
            .is_err()
    );
    // Not from a cluster host.
    let e = v
        .check_headers(&md(&a), from("127.0.0.9"), Need::User)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not a cluster host"), "{e}");
    // eauth never vouches for daemons.
    assert!(
        v.check_headers(&md(&a), from("127.0.0.2"), Need::Daemon)
            .await
            .is_err()
    );
}

/// A request that did not pass the authentication layer carries no [`Verified`]: the
/// handler refuses it (a service served without the layer fails closed).
#[tokio::test]
async fn a_request_the_layer_did_not_check_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let v = verifier(&keys(d.path(), KEY));
    let r = Request::new(());
    let e = v.verify(&r, Need::User).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
    let mut r = Request::new(());
    r.extensions_mut().insert(Verified {
        identity: who(Kind::User, 5, "u", "hostA"),
        cluster: String::new(),
    });
    assert_eq!(v.verify(&r, Need::User).await.unwrap().user, "u");
    let e = v.verify(&r, Need::Daemon).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
}
