//! The credential socket: a Linux abstract Unix socket per LIM, named after the LIM's
//! address (so each host of a one-machine test cluster, and each network namespace, has
//! its own). A client connects and reads one line; the LIM asks the kernel who the client
//! is (SO_PEERCRED), issues a user ticket for that uid/gid and the LIM's host, and
//! answers `OK <ticket hex> <session key hex>` or `ERR <reason>`. The client seals each
//! of its requests with the session key ([`crate::cred`]) and asks again after a minute.
//!
//! Nothing the client sends is trusted, so the client sends nothing. Another process
//! taking the name first could only hand out credentials it can get itself, and the
//! client checks the server's uid (root, itself, or the key file's owner) anyway.
//!
//! Beside it, the master socket ([`master_name`]): the LIM answers `MASTER <host>` (the
//! master it knows) or `NONE`, so that a command finds the master with one local round
//! trip instead of a gRPC call (a TCP and HTTP/2 connection) to a LIM. The client checks
//! the server's uid the same way; the answer only picks which cluster host's mbatchd
//! to call, at the address the cluster file gives.

use crate::cred::{self, Ticket};
use crate::key::{KeySource, hex, unhex};
use crate::{AuthError, Identity, Kind};
use std::io::Read;
use std::net::SocketAddr as IpSocketAddr;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// The abstract socket name of the LIM listening on `lim`.
pub fn name(lim: IpSocketAddr) -> String {
    format!("basalt-auth@{lim}")
}

/// The abstract name of the master socket of the LIM whose credential socket is `cred`
/// (`basalt-master@<addr>` beside `basalt-auth@<addr>`).
pub fn master_name(cred: &str) -> String {
    format!(
        "basalt-master@{}",
        cred.strip_prefix("basalt-auth@").unwrap_or(cred)
    )
}

/// The abstract name of the master *watch* socket beside the credential socket `cred`
/// (`basalt-master-watch@<addr>`): a local daemon learns of a new master there the moment
/// its LIM does, instead of asking again and again ([`serve_master_watch`]).
pub fn master_watch_name(cred: &str) -> String {
    format!(
        "basalt-master-watch@{}",
        cred.strip_prefix("basalt-auth@").unwrap_or(cred)
    )
}

/// How long the master watch socket holds a request whose master has not changed (the
/// client then asks again).
pub const MASTER_WATCH_MAX: Duration = Duration::from_secs(30);

/// The line a master socket answers: `MASTER <name>` or `NONE`.
fn master_line(m: Option<&str>) -> String {
    match m {
        Some(m) if !m.is_empty() && !m.contains(char::is_whitespace) => format!("MASTER {m}\n"),
        _ => "NONE\n".to_owned(),
    }
}

/// Serve the master watch socket until `shutdown` resolves: a client writes `WAIT
/// <master>` (`WAIT -` for none) and gets `MASTER <name>` / `NONE` once the master
/// `current` holds differs from the one it named — at once if it already does — or after
/// `max_wait` with the same master (the client asks again: that is its keep-alive).
pub async fn serve_master_watch(
    listener: tokio::net::UnixListener,
    current: tokio::sync::watch::Receiver<Option<String>>,
    max_wait: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    tokio::pin!(shutdown);
    loop {
        let conn = tokio::select! {
            _ = &mut shutdown => return,
            c = listener.accept() => c,
        };
        let Ok((stream, _)) = conn else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let mut current = current.clone();
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut line = String::new();
            let mut read = tokio::io::BufReader::new(read.take(256));
            let asked = tokio::time::timeout(Duration::from_secs(2), read.read_line(&mut line))
                .await
                .is_ok_and(|r| r.is_ok());
            let Some(known) = line.trim().strip_prefix("WAIT ").filter(|_| asked) else {
                let _ = write.write_all(b"ERR expected WAIT <master>\n").await;
                return;
            };
            let known = (known != "-").then(|| known.to_owned());
            let _ = tokio::time::timeout(max_wait, current.wait_for(|m| *m != known)).await;
            let now = current.borrow().clone();
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                write.write_all(master_line(now.as_deref()).as_bytes()),
            )
            .await;
        });
    }
}

/// Wait on the master watch socket `name` until its LIM's master is not `known` (or the
/// server's own limit passed): the master it names then (`None`: none). Its server must
/// run as root, as us or as one of `trusted`; `limit` bounds the whole wait.
pub async fn watch_master(
    name: &str,
    trusted: &[u32],
    known: Option<&str>,
    limit: Duration,
) -> Result<Option<String>, AuthError> {
    use tokio::io::AsyncReadExt;
    let bad = |reason: String| AuthError::Socket {
        name: name.to_owned(),
        reason,
    };
    let std = connect(name, Duration::from_secs(1)).map_err(|e| bad(e.to_string()))?;
    let peer = nix::sys::socket::getsockopt(&std, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| bad(format!("SO_PEERCRED: {e}")))?;
    let me = nix::unistd::geteuid().as_raw();
    let server = peer.uid();
    if server != 0 && server != me && !trusted.contains(&server) {
        return Err(bad(format!(
            "served by uid {server}, which does not run this cluster"
        )));
    }
    std.set_nonblocking(true).map_err(|e| bad(e.to_string()))?;
    let mut s = tokio::net::UnixStream::from_std(std).map_err(|e| bad(e.to_string()))?;
    s.write_all(format!("WAIT {}\n", known.unwrap_or("-")).as_bytes())
        .await
        .map_err(|e| bad(e.to_string()))?;
    let mut buf = Vec::new();
    match tokio::time::timeout(limit, (&mut s).take(4096).read_to_end(&mut buf)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(bad(e.to_string())),
        Err(_) => return Err(bad("no answer in time".into())),
    }
    let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
    if let Some(m) = line.strip_prefix("MASTER ") {
        Ok(Some(m.trim().to_owned()))
    } else if line == "NONE" {
        Ok(None)
    } else {
        Err(bad(format!("unexpected answer {line:?}")))
    }
}

/// Answer master requests on `listener` with `answer()` (the master's name, or None when
/// the LIM knows none) until `shutdown` resolves.
pub async fn serve_master<F, Fut>(
    listener: tokio::net::UnixListener,
    answer: F,
    shutdown: impl std::future::Future<Output = ()>,
) where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<String>> + Send,
{
    answer_each(listener, shutdown, move |_| {
        let answer = answer.clone();
        async move { master_line(answer().await.as_deref()) }
    })
    .await;
}

/// Accept connections on `listener` until `shutdown` resolves, and write each one the
/// line `answer` makes from who is on the other end (SO_PEERCRED).
async fn answer_each<F, Fut>(
    listener: tokio::net::UnixListener,
    shutdown: impl std::future::Future<Output = ()>,
    answer: F,
) where
    F: Fn(std::io::Result<tokio::net::unix::UCred>) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = String> + Send,
{
    tokio::pin!(shutdown);
    loop {
        let conn = tokio::select! {
            _ = &mut shutdown => return,
            c = listener.accept() => c,
        };
        let Ok((mut stream, _)) = conn else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let answer = answer.clone();
        tokio::spawn(async move {
            let line = answer(stream.peer_cred()).await;
            let _ = tokio::time::timeout(Duration::from_secs(2), stream.write_all(line.as_bytes()))
                .await;
        });
    }
}

/// Ask the LIM behind the master socket `name` which host is the master (`None`: it
/// knows none). `trusted` as for [`fetch`].
pub fn fetch_master(
    name: &str,
    trusted: &[u32],
    timeout: Duration,
) -> Result<Option<String>, AuthError> {
    let line = read_line(name, trusted, timeout)?;
    if let Some(m) = line.strip_prefix("MASTER ") {
        Ok(Some(m.trim().to_owned()))
    } else if line == "NONE" {
        Ok(None)
    } else {
        Err(AuthError::Socket {
            name: name.to_owned(),
            reason: "no answer".into(),
        })
    }
}

/// What the LIM needs to mint: its keys, host, cluster and (for a personal cluster) the
/// only uid it serves.
#[derive(Debug, Clone)]
pub struct Minter {
    pub keys: Arc<KeySource>,
    pub host: String,
    pub cluster: String,
    /// `Some(uid)`: only this user gets credentials (daemons not running as root).
    pub owner_only: Option<u32>,
}

impl Minter {
    /// A user ticket for the process with this uid/gid, or why not.
    pub fn mint_for(&self, uid: u32, gid: u32) -> Result<Ticket, AuthError> {
        if let Some(owner) = self.owner_only
            && uid != owner
        {
            return Err(AuthError::Refused(format!(
                "this cluster runs as uid {owner} and serves only that user"
            )));
        }
        let user = crate::user_name(uid)
            .ok_or_else(|| AuthError::Refused(format!("uid {uid} has no user name")))?;
        let who = Identity {
            kind: Kind::User,
            uid,
            gid,
            user,
            host: self.host.clone(),
        };
        Ticket::issue(&self.keys.current(), &who, &self.cluster, cred::now_ms())
    }
}

/// Bind the abstract socket `name` (fails if another process holds it).
pub fn bind(name: &str) -> Result<tokio::net::UnixListener, AuthError> {
    let bad = |e: std::io::Error| AuthError::Socket {
        name: name.to_owned(),
        reason: e.to_string(),
    };
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).map_err(bad)?;
    let l = std::os::unix::net::UnixListener::bind_addr(&addr).map_err(bad)?;
    l.set_nonblocking(true).map_err(bad)?;
    tokio::net::UnixListener::from_std(l).map_err(bad)
}

/// Answer ticket requests on `listener` until `shutdown` resolves: `OK <ticket hex>
/// <session key hex>` minted for the caller, or `ERR <reason>`.
pub async fn serve(
    listener: tokio::net::UnixListener,
    minter: Minter,
    shutdown: impl std::future::Future<Output = ()>,
) {
    answer_each(listener, shutdown, move |peer| {
        let answer = match peer {
            Ok(c) => match minter.mint_for(c.uid(), c.gid()) {
                Ok(t) => {
                    let (ticket, session) = t.to_parts();
                    format!("OK {} {}\n", hex(&ticket), hex(&session))
                }
                Err(e) => {
                    tracing::warn!(uid = c.uid(), pid = ?c.pid(), "no credential: {e}");
                    format!("ERR {e}\n")
                }
            },
            Err(e) => format!("ERR cannot tell who is asking: {e}\n"),
        };
        std::future::ready(answer)
    })
    .await;
}

/// Ask the LIM behind `name` for a ticket. `trusted` lists the uids the server may run
/// as (root and our own uid are always trusted).
pub fn fetch(name: &str, trusted: &[u32], timeout: Duration) -> Result<Ticket, AuthError> {
    let line = read_line(name, trusted, timeout)?;
    let bad = |reason: &str| AuthError::Socket {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if let Some(rest) = line.strip_prefix("OK ") {
        let mut words = rest.split_whitespace();
        let (Some(t), Some(k), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad("garbled answer (a LIM older than protocol 3.0?)"));
        };
        let (Some(t), Some(k)) = (unhex(t), unhex(k)) else {
            return Err(bad("garbled answer"));
        };
        Ticket::from_parts(&t, &k)
    } else if let Some(e) = line.strip_prefix("ERR ") {
        Err(AuthError::NoCredential(e.to_owned()))
    } else {
        Err(bad("no answer"))
    }
}

/// Connect to the socket `name`, check that its server runs as root, as us or as one of
/// `trusted`, and read its one-line answer (without the line end).
fn read_line(name: &str, trusted: &[u32], timeout: Duration) -> Result<String, AuthError> {
    let bad = |reason: String| AuthError::Socket {
        name: name.to_owned(),
        reason,
    };
    let s = connect(name, timeout).map_err(|e| bad(e.to_string()))?;
    let peer = nix::sys::socket::getsockopt(&s, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| bad(format!("SO_PEERCRED: {e}")))?;
    let me = nix::unistd::geteuid().as_raw();
    let server = peer.uid();
    if server != 0 && server != me && !trusted.contains(&server) {
        return Err(bad(format!(
            "served by uid {server}, which does not run this cluster"
        )));
    }
    s.set_read_timeout(Some(timeout))
        .map_err(|e| bad(e.to_string()))?;
    let mut buf = Vec::new();
    s.take(64 * 1024)
        .read_to_end(&mut buf)
        .map_err(|e| bad(e.to_string()))?;
    Ok(String::from_utf8_lossy(&buf).trim_end().to_owned())
}

/// Connect to the abstract socket `name`, waiting at most `timeout` (a stopped LIM's
/// full backlog would otherwise block the connect for ever).
fn connect(name: &str, timeout: Duration) -> std::io::Result<UnixStream> {
    use nix::sys::socket::{self as sock, AddressFamily, SockFlag, SockType, UnixAddr, sockopt};
    let fd = sock::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let tv = nix::sys::time::TimeVal::new(timeout.as_secs() as _, timeout.subsec_micros() as _);
    sock::setsockopt(&fd, sockopt::SendTimeout, &tv)?;
    sock::connect(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &UnixAddr::new_abstract(name.as_bytes())?,
    )?;
    Ok(UnixStream::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::KeyRing;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn the_socket_mints_for_the_caller_uid() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        std::fs::write(&p, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let keys = Arc::new(KeySource::open(&p, true).unwrap());
        let me = nix::unistd::geteuid().as_raw();
        let name = format!("basalt-auth-test-{}-{:?}", std::process::id(), p);
        let l = bind(&name).unwrap();
        // A second bind of the same name fails: nobody can take a live LIM's socket.
        assert!(bind(&name).is_err());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let minter = Minter {
            keys: keys.clone(),
            host: "hostA".into(),
            cluster: "basalt".into(),
            owner_only: None,
        };
        let task = tokio::spawn(serve(l, minter, async move {
            let _ = rx.await;
        }));
        let n2 = name.clone();
        let t = tokio::task::spawn_blocking(move || fetch(&n2, &[], Duration::from_secs(2)))
            .await
            .unwrap()
            .unwrap();
        // The ticket and its session key seal requests that open with the key.
        let ring = KeyRing::load(&p, true).unwrap();
        let mut nonces = std::collections::BTreeSet::new();
        for i in 0..3u8 {
            let sealed = t
                .seal("hostB", &cred::binding("/p", Some(&[i])), cred::now_ms())
                .unwrap();
            let o = cred::open(&ring, &sealed, &[Kind::User]).unwrap();
            assert_eq!(o.ticket.uid, me);
            assert_eq!(o.ticket.gid, nix::unistd::getegid().as_raw());
            assert_eq!(o.ticket.host, "hostA");
            assert_eq!(o.kind, Kind::User);
            assert_eq!(Some(o.ticket.user), crate::user_name(me));
            assert!(nonces.insert(o.seal.nonce), "a seal's nonce twice");
        }
        let _ = tx.send(());
        task.await.unwrap();
        // Nobody listening: a clear error.
        assert!(fetch(&name, &[], Duration::from_secs(1)).is_err());
    }

    #[tokio::test]
    async fn the_master_socket_names_the_master_or_none() {
        assert_eq!(
            master_name(&name("127.0.0.9:7869".parse().unwrap())),
            "basalt-master@127.0.0.9:7869"
        );
        let base = format!("basalt-master-test-{}", std::process::id());
        for (suffix, known, want) in [
            ("a", Some("hostB".to_owned()), Some("hostB".to_owned())),
            ("b", None, None),
            // A name no host can have is answered as none.
            ("c", Some("two words".to_owned()), None),
        ] {
            let n = format!("{base}-{suffix}");
            let l = bind(&n).unwrap();
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(serve_master(
                l,
                move || {
                    let known = known.clone();
                    async move { known }
                },
                async move {
                    let _ = rx.await;
                },
            ));
            let n2 = n.clone();
            let got =
                tokio::task::spawn_blocking(move || fetch_master(&n2, &[], Duration::from_secs(2)))
                    .await
                    .unwrap()
                    .unwrap();
            assert_eq!(got, want, "{suffix}");
            let _ = tx.send(());
            task.await.unwrap();
            // Nobody listening: an error, not a master.
            assert!(fetch_master(&n, &[], Duration::from_secs(1)).is_err());
        }
    }

    #[test]
    fn a_personal_cluster_mints_only_for_its_owner() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        std::fs::write(&p, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let m = Minter {
            keys: Arc::new(KeySource::open(&p, true).unwrap()),
            host: "h".into(),
            cluster: "c".into(),
            owner_only: Some(me),
        };
        assert!(m.mint_for(me, 0).is_ok());
        let e = m.mint_for(me + 1, 0).unwrap_err().to_string();
        assert!(e.contains("serves only"), "{e}");
    }
}
