//! The RES's two processes: the listener and the worker.
//!
//! `res` (the process systemd starts and stops) only takes connections: it hands each
//! one, as a file descriptor over a local socket, to its worker — `res --worker`, a
//! process it starts at its first connection — which serves the requests, runs the
//! tasks and relays their streams. When `res` stops or restarts, its worker sees the
//! local socket close: it takes no more connections and keeps serving those it has
//! until their tasks have ended, then exits, while the new `res` (and its new worker)
//! serves new requests. That is LSF's `lsadmin resrestart`: "it keeps running until
//! all remote tasks exit; another RES is started to serve the new queries".
//!
//! `lsadmin resshutdown` / `resrestart` come to the worker (it serves the RES port's
//! requests, DaemonControl among them): it passes them on to the listening RES with a
//! signal — SIGTERM to stop, SIGUSR1 to restart in place (same pid) — when that RES
//! said it takes them (`--front-pid`, [`WorkerCommand::front_pid`]).

use crate::service::ResService;
use basalt_proto::res::res_server::ResServer;
use basalt_runtime::control::ControlService;
use basalt_runtime::serve::Serving;
use nix::sys::signal::Signal;
use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::server::TcpConnectInfo;
use tracing::{Instrument, debug, info, warn};

/// How long a worker whose connections have all closed waits for its tasks' ends (a
/// task whose client went away is killed) before it kills what is left and exits.
const WIND_DOWN: Duration = Duration::from_secs(10);
/// How long the tasks of a worker asked to stop have after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long a stopping worker still lets its clients read their tasks' last statuses.
const LAST_WORDS: Duration = Duration::from_secs(2);
/// How long a worker with nothing to serve stays (unless its command says otherwise).
pub const IDLE_EXIT: Duration = Duration::from_secs(60);
/// HTTP/2 pings on an idle connection, and how long an answer may take: a client
/// whose host died is noticed (and its tasks killed) within a minute.
const KEEPALIVE: Duration = Duration::from_secs(30);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How the listening RES starts its worker: `exe args...` with its end of the local
/// socket the connections come on as standard input.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub exe: PathBuf,
    pub args: Vec<OsString>,
    /// The configuration directory, also given to the worker as `LSF_ENVDIR`.
    pub envdir: PathBuf,
    /// Where the worker's log (its standard error) goes, appended; `None`: the
    /// listening RES's standard error.
    pub log: Option<PathBuf>,
    /// How long the worker stays with nothing to serve, when not [`IDLE_EXIT`]
    /// (`--idle-exit-ms`; tests).
    pub idle_exit: Option<Duration>,
    /// The listening RES's pid when it takes `lsadmin resshutdown`/`resrestart` from its
    /// worker (SIGTERM / SIGUSR1; `--front-pid`): the worker then serves DaemonControl.
    /// None (a RES inside a test process): the worker refuses them.
    pub front_pid: Option<u32>,
}

impl WorkerCommand {
    /// `exe --worker -H host -d envdir` (the `res` binary's worker mode).
    pub fn new(exe: PathBuf, host: &str, envdir: &Path) -> WorkerCommand {
        WorkerCommand {
            exe,
            args: vec![
                "--worker".into(),
                "-H".into(),
                host.into(),
                "-d".into(),
                envdir.as_os_str().to_owned(),
            ],
            envdir: envdir.to_owned(),
            log: None,
            idle_exit: None,
            front_pid: None,
        }
    }

    /// Start a worker. It leads its own process group, so that a signal to the
    /// listening RES's group (Ctrl-C in its terminal) leaves it alone.
    fn spawn(&self) -> std::io::Result<Worker> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.args(&self.args);
        if let Some(idle) = self.idle_exit {
            cmd.arg(format!("--idle-exit-ms={}", idle.as_millis()));
        }
        if let Some(pid) = self.front_pid {
            cmd.arg(format!("--front-pid={pid}"));
        }
        cmd.env("LSF_ENVDIR", &self.envdir)
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .process_group(0);
        if let Some(log) = &self.log {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)?;
            cmd.stderr(file);
        }
        let mut child = cmd.spawn()?;
        let pid = child.id();
        info!(?pid, "worker started");
        // Reaped in the background; a worker outliving this RES is reaped by init.
        tokio::spawn(async move {
            match child.wait().await {
                Ok(s) if s.success() => info!(?pid, "worker ended"),
                Ok(s) => warn!(?pid, "worker ended: {s}"),
                Err(e) => warn!(?pid, "waiting for the worker: {e}"),
            }
        });
        Ok(Worker { channel: ours })
    }
}

/// The listening RES's end of its worker's socket.
#[derive(Debug)]
struct Worker {
    channel: OwnedFd,
}

/// What the listening RES hands connections to: its worker, started at the first
/// connection and again if it died.
#[derive(Debug)]
pub(crate) struct Handoff {
    cmd: WorkerCommand,
    worker: Option<Worker>,
}

impl Handoff {
    pub(crate) fn new(cmd: WorkerCommand) -> Handoff {
        Handoff { cmd, worker: None }
    }

    /// Give `conn` to the worker (a dead one is replaced once); on failure the
    /// connection is closed and the error logged.
    pub(crate) fn hand(&mut self, conn: &std::net::TcpStream, peer: std::net::SocketAddr) {
        for attempt in 0..2 {
            let worker = match self.worker.take() {
                Some(w) => w,
                None => match self.cmd.spawn() {
                    Ok(w) => w,
                    Err(e) => {
                        warn!(
                            %peer,
                            "cannot start the RES worker ({}): {e}; the connection is closed",
                            self.cmd.exe.display()
                        );
                        return;
                    }
                },
            };
            match crate::sys::send_fd(worker.channel.as_fd(), conn.as_fd()) {
                Ok(()) => {
                    self.worker = Some(worker);
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    // It takes no more now (hung or overloaded): refuse rather than
                    // hold up every other connection.
                    warn!(%peer, "the RES worker takes no more connections now; this one is closed");
                    self.worker = Some(worker);
                    return;
                }
                // Retired (idle) or dead: the next one takes it.
                Err(e) if attempt == 0 => info!("the RES worker is gone ({e}); starting another"),
                Err(e) => warn!(%peer, "handing the connection to the worker: {e}"),
            }
        }
    }
}

/// Serve the requests of one connection with `service` until the connection closes;
/// when `stop` resolves first, the client has [`LAST_WORDS`] more to read.
pub async fn serve_connection(
    service: Arc<ResService>,
    control: Option<ControlService>,
    serving: &Serving,
    conn: tokio::net::TcpStream,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), hyper::Error> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    use tonic::transport::server::Connected;
    // Not from a cluster host, or past the connection limits: closed now.
    let Some(conn) = serving.accept(conn) else {
        return Ok(());
    };
    // What tonic's own server tells a request of its connection: the verifier
    // checks the peer's address.
    let info: TcpConnectInfo = conn.connect_info();
    let svc = tower::ServiceBuilder::new()
        .map_request(
            move |mut req: tonic::codegen::http::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(info.clone());
                req.map(tonic::body::Body::new)
            },
        )
        .layer(serving.layer())
        .service({
            let routes = tonic::service::Routes::new(ResServer::from_arc(service));
            match control {
                Some(c) => routes.add_service(c.server()),
                None => routes,
            }
        });
    let mut builder = hyper::server::conn::http2::Builder::new(InSpan(tracing::Span::current()));
    builder
        .timer(TokioTimer::new())
        .keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT);
    let connection = builder.serve_connection(TokioIo::new(conn), TowerToHyperService::new(svc));
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        r = &mut connection => r,
        () = stop => tokio::time::timeout(LAST_WORDS, &mut connection)
            .await
            .unwrap_or(Ok(())),
    }
    // The connection goes here: every relay still running sees its client gone (a
    // task is killed, an attached job ended through its supervisor).
}

/// Runs hyper's tasks of a connection (its requests) on tokio in the connection's
/// span (host, peer), so that what a request logs says where it comes from.
#[derive(Clone)]
struct InSpan(tracing::Span);

impl<F> hyper::rt::Executor<F> for InSpan
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(fut.instrument(self.0.clone()));
    }
}

/// The worker: serve the connections that come on `channel` (from the listening RES)
/// with `service`; when the channel closes, serve those it has until they close and
/// their tasks have ended. A worker with nothing to serve for `idle_exit` exits (the
/// RES starts another at its next connection). When `stop` resolves, the tasks get
/// SIGTERM (SIGKILL after [`STOP_GRACE`]) and their statuses still go to their clients.
pub async fn serve_worker(
    service: Arc<ResService>,
    control: Option<ControlService>,
    serving: Serving,
    channel: OwnedFd,
    idle_exit: Duration,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let live = service.live();
    // A SOCK_SEQPACKET socket: tokio's UnixStream only registers it and waits for its
    // readiness; every read is recvmsg (one connection per message).
    let channel = tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(channel))?;
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let mut conns = tokio::task::JoinSet::new();
    let serve = |conns: &mut tokio::task::JoinSet<()>, conn: tokio::net::TcpStream| {
        let mut stopped = stopped.clone();
        let service = service.clone();
        let control = control.clone();
        let serving = serving.clone();
        let peer = conn.peer_addr().ok();
        let span = tracing::info_span!("conn", ?peer);
        conns.spawn(
            async move {
                let stop = async move {
                    let _ = stopped.wait_for(|s| *s).await;
                };
                // A client that goes without a goodbye (its process killed) ends here.
                if let Err(e) = serve_connection(service, control, &serving, conn, stop).await {
                    debug!("connection: {e}");
                }
            }
            .instrument(span),
        );
    };
    let mut stop = std::pin::pin!(stop);
    let mut asked_to_stop = false;
    loop {
        let idle = conns.is_empty() && live.is_empty();
        tokio::select! {
            c = next_connection(&channel) => match c {
                Ok(Some(conn)) => serve(&mut conns, conn),
                Ok(None) => {
                    info!(
                        connections = conns.len(),
                        tasks = live.len(),
                        "the listening RES is gone: serving what runs until it ends"
                    );
                    break;
                }
                Err(e) => {
                    warn!("the listening RES's socket: {e}");
                    break;
                }
            },
            Some(_) = conns.join_next() => {}
            () = tokio::time::sleep(idle_exit), if idle => {
                // The RES's next handover fails (it starts another worker); what it
                // handed over before that is still served here.
                use std::os::fd::AsRawFd;
                let _ = nix::sys::socket::shutdown(
                    channel.as_raw_fd(),
                    nix::sys::socket::Shutdown::Read,
                );
                while let Ok(Some(conn)) = next_now(&channel) {
                    serve(&mut conns, conn);
                }
                info!(connections = conns.len(), "idle: the worker retires");
                break;
            }
            () = &mut stop => {
                asked_to_stop = true;
                break;
            }
        }
    }
    drop(channel);
    if !asked_to_stop {
        let all_closed = async { while conns.join_next().await.is_some() {} };
        tokio::select! {
            () = all_closed => {}
            () = &mut stop => asked_to_stop = true,
        }
    }
    if asked_to_stop {
        info!(tasks = live.len(), "stopping: ending the tasks");
        live.signal_all(Signal::SIGTERM);
        if tokio::time::timeout(STOP_GRACE, live.idle()).await.is_err() {
            live.signal_all(Signal::SIGKILL);
        }
        let _ = stopping.send(true);
        while conns.join_next().await.is_some() {}
    }
    if tokio::time::timeout(WIND_DOWN, live.idle()).await.is_err() {
        warn!(
            served = live.len(),
            "every connection is closed and tasks still run; killing them"
        );
        live.signal_all(Signal::SIGKILL);
    }
    Ok(())
}

/// A connection already waiting on `channel`, without waiting for one.
fn next_now(channel: &tokio::net::UnixStream) -> std::io::Result<Option<tokio::net::TcpStream>> {
    use std::os::fd::AsRawFd;
    let (_, mut fds) = channel.try_io(tokio::io::Interest::READABLE, || {
        crate::sys::recv_with_fds(channel.as_raw_fd(), 1)
    })?;
    fds.pop().map(into_tcp).transpose()
}

fn into_tcp(fd: OwnedFd) -> std::io::Result<tokio::net::TcpStream> {
    let conn = std::net::TcpStream::from(fd);
    conn.set_nonblocking(true)?;
    tokio::net::TcpStream::from_std(conn)
}

/// The next connection the listening RES hands over; `None` when it is gone.
async fn next_connection(
    channel: &tokio::net::UnixStream,
) -> std::io::Result<Option<tokio::net::TcpStream>> {
    use std::os::fd::AsRawFd;
    loop {
        channel.readable().await?;
        let got = channel.try_io(tokio::io::Interest::READABLE, || {
            crate::sys::recv_with_fds(channel.as_raw_fd(), 1)
        });
        match got {
            Ok((bytes, mut fds)) => {
                if bytes.is_empty() && fds.is_empty() {
                    return Ok(None);
                }
                let Some(fd) = fds.pop() else { continue };
                return into_tcp(fd).map(Some);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn pair() -> (OwnedFd, OwnedFd) {
        socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .expect("socketpair")
    }

    /// A retiring worker shuts its socket for reading: a connection handed over before
    /// is still there for it, one handed over after fails (the RES starts another).
    #[test]
    fn a_retired_worker_still_gets_what_came_before_and_refuses_what_comes_after() {
        let (ours, theirs) = pair();
        let file = std::fs::File::open("/dev/null").expect("open");
        crate::sys::send_fd(ours.as_fd(), file.as_fd()).expect("first handover");
        nix::sys::socket::shutdown(theirs.as_raw_fd(), nix::sys::socket::Shutdown::Read)
            .expect("shutdown");
        let e = crate::sys::send_fd(ours.as_fd(), file.as_fd()).expect_err("after retiring");
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE), "{e}");
        let (bytes, fds) = crate::sys::recv_with_fds(theirs.as_raw_fd(), 1).expect("recv");
        assert_eq!((bytes.len(), fds.len()), (1, 1));
    }

    /// The RES gone, its worker reads the end of its socket.
    #[test]
    fn the_res_gone_its_worker_reads_the_end() {
        let (ours, theirs) = pair();
        drop(ours);
        let (bytes, fds) = crate::sys::recv_with_fds(theirs.as_raw_fd(), 1).expect("recv");
        assert!(bytes.is_empty() && fds.is_empty());
    }
}
