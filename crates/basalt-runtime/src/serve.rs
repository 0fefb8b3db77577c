//! How every daemon serves gRPC: who may connect, how many, for how long, and the
//! authentication layer every request passes before a handler sees it
//! (docs/security.md, "Connections and requests").
//!
//! * **At accept** ([`Serving::accept`]): a connection from an address that is none of
//!   the cluster's hosts (nor, for mbatchd, another cluster's servers) is closed at once;
//!   so is one past [`ServeLimits::max_conns`] in all or [`ServeLimits::max_per_addr`]
//!   from its address. The cluster's own clients keep their room while one address
//!   holds all it may.
//! * **While open** ([`TrackedStream`]): a connection with no request under way is
//!   closed once it has been idle for [`ServeLimits::idle`], and one that has not had
//!   an authenticated request within [`ServeLimits::first_request`] of its opening (a
//!   half-open or preface-only connection, or one whose every request was refused) is
//!   closed then.
//! * **Per request** ([`AuthLayer`]): the credential is checked from the request's
//!   metadata before its body is read ([`basalt_auth::Verifier::check_headers`], the
//!   method's domain from [`basalt_auth::policy`]); then the body is read up to the
//!   method's limit, with the bytes in flight bounded per connection and in all
//!   ([`ServeLimits::max_request_bytes`]); then the credential's binding to that body
//!   and its nonce are checked ([`basalt_auth::Verifier::finish`]) and the handler gets
//!   the proven identity ([`basalt_auth::Verified`]).
//! * **Requests in flight** ([`Admission`], mbatchd's client service): before anything
//!   else, a request of the counted methods takes a place among a daemon-wide number,
//!   held until its answer has been sent (its response body dropped); one past that is
//!   answered at once with the daemon's "busy" status (mbatchd: `RESOURCE_EXHAUSTED`
//!   with the retry metadata). A flood of requests — each an HTTP/2 stream, a task, its
//!   credential's check and its answer held until the client reads it — thus holds a
//!   bounded amount of memory however many connections send it.

use basalt_auth::{PERMISSION_DENIED, Verifier};
use basalt_config::Config;
use bytes::Bytes;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::body::Body;
use tonic::codegen::http;
use tonic::metadata::MetadataMap;
use tonic::transport::server::{Connected, TcpConnectInfo};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Default [`ServeLimits::max_per_addr`].
pub const DEFAULT_MAX_PER_ADDR: usize = 1024;
/// Default [`ServeLimits::idle`].
pub const DEFAULT_IDLE: Duration = Duration::from_secs(120);
/// Default [`ServeLimits::first_request`].
pub const DEFAULT_FIRST_REQUEST: Duration = Duration::from_secs(10);
/// Default [`ServeLimits::max_request_bytes`].
pub const DEFAULT_REQUEST_BYTES: usize = 512 << 20;
/// File descriptors a daemon keeps for itself (its files, its own outgoing
/// connections, its jobs' pipes) out of its open-file limit.
const FD_RESERVE: u64 = 256;
/// How long a request waits for room among the bytes in flight before it is refused.
const BODY_WAIT: Duration = Duration::from_secs(10);
/// The largest header block a request may have (the credential is under 2 KiB, eauth
/// data under 17 KiB).
pub const MAX_HEADER_BYTES: u32 = 64 << 10;
/// Requests one connection may have under way at once.
pub const MAX_STREAMS: u32 = 1024;

/// What a daemon serves at most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections held at once (lsf.conf `BASALT_MAX_CONNS`; mbatchd: lsb.params
    /// `MAX_SBD_CONNS` when set; default: the open-file limit less a reserve).
    pub max_conns: usize,
    /// Connections held at once from one address (`BASALT_MAX_CONNS_PER_HOST`).
    pub max_per_addr: usize,
    /// A connection with nothing under way this long is closed
    /// (`BASALT_CONN_IDLE_TIMEOUT`).
    pub idle: Duration,
    /// A connection without an authenticated request this long after it opened is
    /// closed.
    pub first_request: Duration,
    /// Bytes of request bodies being read or not yet handled, in all
    /// (`BASALT_MAX_REQUEST_MEMORY`, MiB).
    pub max_request_bytes: usize,
    /// Bytes of request bodies in flight on one connection.
    pub max_conn_request_bytes: usize,
}

impl ServeLimits {
    /// The limits lsf.conf sets, with the defaults for the rest; the open-file limit is
    /// raised to its hard limit first, so that a site's `LimitNOFILE` is all usable.
    pub fn from_config(config: &Config) -> ServeLimits {
        let conf = &config.lsf_conf;
        let max_conns = conf
            .max_conns()
            .map_or_else(default_max_conns, |n| n as usize);
        ServeLimits {
            max_conns,
            max_per_addr: conf
                .max_conns_per_host()
                .map_or(DEFAULT_MAX_PER_ADDR, |n| n as usize),
            idle: conf
                .conn_idle_timeout()
                .map_or(DEFAULT_IDLE, Duration::from_secs),
            first_request: DEFAULT_FIRST_REQUEST,
            max_request_bytes: conf
                .max_request_memory_mb()
                .map_or(DEFAULT_REQUEST_BYTES, |m| {
                    (m as usize).saturating_mul(1 << 20)
                }),
            max_conn_request_bytes: basalt_auth::policy::BULK_MAX_BODY + (1 << 20),
        }
    }
}

/// The open-file limit (raised to the hard limit) less a reserve, at least 64.
fn default_max_conns() -> usize {
    let limit = raise_open_files(0).unwrap_or(1024);
    (limit.saturating_sub(FD_RESERVE).clamp(64, 1 << 24)) as usize
}

/// Raise this process's open-file limit: the soft limit to the hard one, and both to
/// `want` (within the kernel's `fs.nr_open`) when the process may raise its hard limit
/// (root with CAP_SYS_RESOURCE; a process that starts daemons raises it for them as
/// the packaged units' `LimitNOFILE` does). Returns the soft limit now (None: it cannot
/// be read); a failed raise is logged.
pub fn raise_open_files(want: u64) -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(hard);
    let target = want.min(nr_open);
    if target > hard && setrlimit(Resource::RLIMIT_NOFILE, target, target).is_ok() {
        return Some(target);
    }
    if soft < hard {
        if let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            tracing::warn!("cannot raise the open files limit from {soft} to {hard}: {e}");
            return Some(soft);
        }
        return Some(hard);
    }
    Some(soft)
}

/// One open connection's state, shared by its stream and its requests.
#[derive(Debug)]
struct ConnState {
    opened: Instant,
    /// Requests under way (a stream's response not finished).
    active: AtomicUsize,
    /// Authenticated requests so far.
    requests: AtomicU64,
    /// When the last authenticated request ended or began (ms since `opened`).
    last_ms: AtomicU64,
    /// Bytes of request bodies in flight on this connection.
    bytes: Arc<Semaphore>,
}

impl ConnState {
    fn touch(&self) {
        self.last_ms
            .store(self.opened.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// When this connection becomes closable, or None if it already is.
    fn deadline(&self, limits: &ServeLimits, now: Instant) -> Option<Instant> {
        if self.active.load(Ordering::Relaxed) > 0 {
            return Some(now + limits.idle);
        }
        let (from, limit) = if self.requests.load(Ordering::Relaxed) == 0 {
            (self.opened, limits.first_request)
        } else {
            (
                self.opened + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)),
                limits.idle,
            )
        };
        let at = from + limit;
        (at > now).then_some(at)
    }
}

#[derive(Debug, Default)]
struct Table {
    total: usize,
    per_addr: HashMap<IpAddr, usize>,
    by_peer: HashMap<SocketAddr, Arc<ConnState>>,
    refused: u64,
    warned: Option<Instant>,
}

#[derive(Debug)]
struct Shared {
    verifier: Verifier,
    limits: ServeLimits,
    allowed: Option<Allowed>,
    table: Mutex<Table>,
    budget: Arc<Semaphore>,
    admission: Option<Admission>,
}

/// A daemon-wide bound on the requests in flight of some methods ([`Serving::admitting`]).
#[derive(Debug, Clone)]
pub struct Admission {
    /// The methods counted: those whose path starts with this (`/package.Service/`).
    pub prefix: &'static str,
    /// The answer to a request that finds no room.
    pub busy: fn() -> tonic::Status,
    room: Arc<Semaphore>,
}

impl Admission {
    /// At most `bound` requests of the methods under `prefix` in flight; `busy` answers
    /// the rest.
    pub fn new(prefix: &'static str, bound: usize, busy: fn() -> tonic::Status) -> Admission {
        Admission {
            prefix,
            busy,
            room: Arc::new(Semaphore::new(bound.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// Requests that may still come in now.
    pub fn room(&self) -> usize {
        self.room.available_permits()
    }
}

impl Shared {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        match self.table.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn conn(&self, peer: Option<SocketAddr>) -> Option<Arc<ConnState>> {
        self.table().by_peer.get(&peer?).cloned()
    }
}

/// The addresses a daemon takes connections from: the cluster's hosts (one table
/// shared by the daemons of a process) and others (mbatchd: the remote clusters'
/// servers).
#[derive(Debug, Clone)]
pub struct Allowed {
    pub hosts: Arc<basalt_auth::HostTable>,
    pub extra: HashSet<IpAddr>,
}

impl Allowed {
    /// The cluster's hosts only.
    pub fn hosts(hosts: Arc<basalt_auth::HostTable>) -> Allowed {
        Allowed {
            hosts,
            extra: HashSet::new(),
        }
    }

    /// And `extra` too.
    pub fn with(mut self, extra: impl IntoIterator<Item = IpAddr>) -> Allowed {
        self.extra
            .extend(extra.into_iter().map(|ip| ip.to_canonical()));
        self
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.hosts.has_addr(ip) || self.extra.contains(&ip)
    }
}

/// A daemon's serving: its verifier, limits and open connections; cheap to clone.
#[derive(Debug, Clone)]
pub struct Serving {
    shared: Arc<Shared>,
}

/// A tonic server with the authentication layer in front of its services.
pub type AuthServer =
    tonic::transport::Server<tower::layer::util::Stack<AuthLayer, tower::layer::util::Identity>>;
/// Its router.
pub type AuthRouter = tonic::transport::server::Router<
    tower::layer::util::Stack<AuthLayer, tower::layer::util::Identity>,
>;

impl Serving {
    /// Serve with `verifier`'s checks within `limits`, taking connections only from
    /// `allowed` (the cluster's hosts, and for mbatchd the remote clusters' servers;
    /// others are closed at once), or from any address when None.
    pub fn new(verifier: Verifier, limits: ServeLimits, allowed: Option<Allowed>) -> Serving {
        Serving::admitting(verifier, limits, allowed, None)
    }

    /// [`Serving::new`], with requests of some methods bounded in number ([`Admission`]).
    pub fn admitting(
        verifier: Verifier,
        limits: ServeLimits,
        allowed: Option<Allowed>,
        admission: Option<Admission>,
    ) -> Serving {
        let budget = Arc::new(Semaphore::new(
            limits.max_request_bytes.min(Semaphore::MAX_PERMITS),
        ));
        Serving {
            shared: Arc::new(Shared {
                verifier,
                limits,
                allowed,
                table: Mutex::new(Table::default()),
                budget,
                admission,
            }),
        }
    }

    /// The verifier.
    pub fn verifier(&self) -> &Verifier {
        &self.shared.verifier
    }

    /// The limits.
    pub fn limits(&self) -> &ServeLimits {
        &self.shared.limits
    }

    /// How many connections are open now.
    pub fn open_connections(&self) -> usize {
        self.shared.table().total
    }

    /// The authentication layer for a service stack.
    pub fn layer(&self) -> AuthLayer {
        AuthLayer {
            shared: self.shared.clone(),
        }
    }

    /// A tonic server builder with the authentication layer and the HTTP/2 bounds
    /// (header size, requests per connection).
    pub fn builder(&self) -> AuthServer {
        tonic::transport::Server::builder()
            .http2_max_header_list_size(MAX_HEADER_BYTES)
            .max_concurrent_streams(MAX_STREAMS)
            .layer(self.layer())
    }

    /// Take `stream` as a connection of this daemon, or refuse it (None: it is dropped,
    /// which closes it) when its address is not allowed or the limits are reached.
    pub fn accept(&self, stream: tokio::net::TcpStream) -> Option<TrackedStream> {
        let peer = stream.peer_addr().ok()?;
        let ip = peer.ip().to_canonical();
        let limits = &self.shared.limits;
        let refuse = |t: &mut Table, why: String| {
            t.refused += 1;
            if t.warned
                .is_none_or(|w| w.elapsed() >= Duration::from_secs(10))
            {
                t.warned = Some(Instant::now());
                tracing::warn!(
                    peer = %peer,
                    refused = t.refused,
                    "connection refused: {why}"
                );
            }
        };
        if let Some(allowed) = &self.shared.allowed
            && !allowed.contains(ip)
        {
            refuse(
                &mut self.shared.table(),
                format!("{ip} is not a host of the cluster"),
            );
            return None;
        }
        let state = Arc::new(ConnState {
            opened: Instant::now(),
            active: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            last_ms: AtomicU64::new(0),
            bytes: Arc::new(Semaphore::new(
                limits.max_conn_request_bytes.min(Semaphore::MAX_PERMITS),
            )),
        });
        {
            let mut t = self.shared.table();
            if t.total >= limits.max_conns {
                let n = limits.max_conns;
                refuse(&mut t, format!("{n} connections open (BASALT_MAX_CONNS)"));
                return None;
            }
            let from = t.per_addr.get(&ip).copied().unwrap_or(0);
            if from >= limits.max_per_addr {
                let n = limits.max_per_addr;
                refuse(
                    &mut t,
                    format!("{n} connections open from {ip} (BASALT_MAX_CONNS_PER_HOST)"),
                );
                return None;
            }
            t.total += 1;
            *t.per_addr.entry(ip).or_insert(0) += 1;
            t.by_peer.insert(peer, state.clone());
        }
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().ok();
        let first = state
            .deadline(limits, Instant::now())
            .unwrap_or_else(Instant::now);
        Some(TrackedStream {
            io: stream,
            peer,
            local,
            state,
            shared: self.shared.clone(),
            timer: Box::pin(tokio::time::sleep_until(first.into())),
        })
    }

    /// Serve `router` (made with [`Serving::builder`]) on `listener` until `shutdown`
    /// resolves.
    pub async fn serve(
        &self,
        router: AuthRouter,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), tonic::transport::Error> {
        use tokio_stream::StreamExt;
        let this = self.clone();
        let incoming =
            tokio_stream::wrappers::TcpListenerStream::new(listener).filter_map(move |conn| {
                match conn {
                    Ok(c) => this.accept(c).map(Ok),
                    Err(e) => Some(Err(e)),
                }
            });
        router
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
    }
}

/// A connection of a daemon: counted while open, closed once idle ([`ServeLimits`]).
#[derive(Debug)]
pub struct TrackedStream {
    io: tokio::net::TcpStream,
    peer: SocketAddr,
    local: Option<SocketAddr>,
    state: Arc<ConnState>,
    shared: Arc<Shared>,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl TrackedStream {
    /// Has the idle timer run out? (Then the connection reads as closed.)
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        while self.timer.as_mut().poll(cx).is_ready() {
            match self.state.deadline(&self.shared.limits, Instant::now()) {
                Some(at) => self.timer.as_mut().reset(at.into()),
                None => return true,
            }
        }
        false
    }
}

impl Drop for TrackedStream {
    fn drop(&mut self) {
        let ip = self.peer.ip().to_canonical();
        let mut t = self.shared.table();
        if t.by_peer.remove(&self.peer).is_some() {
            t.total = t.total.saturating_sub(1);
            if let Some(n) = t.per_addr.get_mut(&ip) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    t.per_addr.remove(&ip);
                }
            }
        }
    }
}

impl AsyncRead for TrackedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.expired(cx) {
            tracing::debug!(peer = %self.peer, "idle connection closed");
            // As if the peer had closed it: the connection ends.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for TrackedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

impl Connected for TrackedStream {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        TcpConnectInfo {
            local_addr: self.local,
            remote_addr: Some(self.peer),
        }
    }
}

/// The authentication layer ([`Serving::layer`]).
#[derive(Debug, Clone)]
pub struct AuthLayer {
    shared: Arc<Shared>,
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = Authenticated<S>;

    fn layer(&self, inner: S) -> Authenticated<S> {
        Authenticated {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// A service behind the authentication layer.
#[derive(Debug, Clone)]
pub struct Authenticated<S> {
    inner: S,
    shared: Arc<Shared>,
}

/// A refusal, as the client sees it.
fn refusal(status: tonic::Status) -> http::Response<Body> {
    status.into_http()
}

/// What a refused caller is told: LSF's `User permission denied`; another cluster's
/// mbatchd also hears why (its administrator sees it in `bclusters`: a key that differs,
/// a cluster that is not a remote cluster here).
fn denial(need: basalt_auth::Need, e: &basalt_auth::AuthError) -> tonic::Status {
    if need == basalt_auth::Need::InterCluster {
        tonic::Status::unauthenticated(format!("{PERMISSION_DENIED}: {e}"))
    } else {
        tonic::Status::permission_denied(PERMISSION_DENIED)
    }
}

/// Marks a connection's request as under way until dropped (with the response's body).
#[derive(Debug)]
struct Active(Arc<ConnState>);

impl Active {
    fn new(state: Arc<ConnState>) -> Active {
        state.active.fetch_add(1, Ordering::Relaxed);
        state.touch();
        Active(state)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.touch();
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A body that holds something (a request's claim on the bytes in flight, a response's
/// mark that its request is under way) until it is dropped.
struct Holding<B, T> {
    inner: B,
    _held: T,
}

impl<B, T> http_body::Body for Holding<B, T>
where
    B: http_body::Body + Unpin,
    T: Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Why a body was not read.
enum BodyError {
    TooLarge(usize),
    Busy,
    Broken(String),
}

/// Read `body` whole, at most `max` bytes, taking each frame's bytes from the
/// connection's and the daemon's budgets (waiting up to [`BODY_WAIT`] for room).
async fn read_body(
    mut body: Body,
    max: usize,
    conn: Option<&Arc<Semaphore>>,
    all: &Arc<Semaphore>,
) -> Result<(Bytes, Vec<OwnedSemaphorePermit>), BodyError> {
    use http_body_util::BodyExt;
    let mut buf = bytes::BytesMut::new();
    let mut held = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if buf.len() + data.len() > max {
            return Err(BodyError::TooLarge(buf.len() + data.len()));
        }
        let n = u32::try_from(data.len()).map_err(|_| BodyError::TooLarge(data.len()))?;
        if n > 0 {
            for sem in conn.into_iter().chain(std::iter::once(all)) {
                let p = tokio::time::timeout(BODY_WAIT, sem.clone().acquire_many_owned(n))
                    .await
                    .map_err(|_| BodyError::Busy)?
                    .map_err(|_| BodyError::Busy)?;
                held.push(p);
            }
        }
        buf.extend_from_slice(&data);
    }
    Ok((buf.freeze(), held))
}

impl<S> tower::Service<http::Request<Body>> for Authenticated<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            let path = parts.uri.path().to_owned();
            // A place among the requests in flight first: one that finds none costs
            // nothing more (no credential check, no body read).
            let admitted = match &shared.admission {
                Some(a) if path.starts_with(a.prefix) => match a.room.clone().try_acquire_owned() {
                    Ok(p) => Some(p),
                    Err(_) => return Ok(refusal((a.busy)())),
                },
                _ => None,
            };
            let policy = basalt_auth::policy::method(&path);
            let peer = parts
                .extensions
                .get::<TcpConnectInfo>()
                .and_then(|i| i.remote_addr);
            let md = MetadataMap::from_headers(parts.headers.clone());
            let pending = match shared.verifier.check_headers(&md, peer, policy.need).await {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(peer = ?peer, method = %path, "request refused: {e}");
                    return Ok(refusal(denial(policy.need, &e)));
                }
            };
            let version = md
                .get(basalt_proto::PROTOCOL_METADATA)
                .and_then(|v| v.to_str().ok());
            if let Err(e) = basalt_proto::check_protocol_text(version) {
                tracing::warn!(peer = ?peer, user = %pending.who().user, "request refused: {e}");
                return Ok(refusal(tonic::Status::failed_precondition(e)));
            }
            let conn = shared.conn(peer);
            let (binding, body) = if policy.streaming {
                (basalt_auth::cred::binding(&path, None), body)
            } else {
                match read_body(
                    body,
                    policy.max_body,
                    conn.as_ref().map(|c| &c.bytes),
                    &shared.budget,
                )
                .await
                {
                    Ok((bytes, held)) => (
                        basalt_auth::cred::binding(&path, Some(&bytes)),
                        Body::new(Holding {
                            inner: http_body_util::Full::new(bytes),
                            _held: held,
                        }),
                    ),
                    Err(BodyError::TooLarge(n)) => {
                        tracing::warn!(
                            peer = ?peer,
                            user = %pending.who().user,
                            "request refused: {path} with a body of more than {n} bytes (at most {})",
                            policy.max_body
                        );
                        return Ok(refusal(tonic::Status::resource_exhausted(format!(
                            "request larger than the {} bytes {path} takes",
                            policy.max_body
                        ))));
                    }
                    Err(BodyError::Busy) => {
                        return Ok(refusal(tonic::Status::resource_exhausted(
                            "too many requests are being read; try again",
                        )));
                    }
                    Err(BodyError::Broken(e)) => {
                        return Ok(refusal(tonic::Status::cancelled(format!(
                            "request body: {e}"
                        ))));
                    }
                }
            };
            let verified =
                match shared
                    .verifier
                    .finish(pending, &binding, basalt_auth::cred::now_ms())
                {
                    Ok(v) => v,
                    Err(e) => {
                        tracing::warn!(peer = ?peer, method = %path, "request refused: {e}");
                        return Ok(refusal(denial(policy.need, &e)));
                    }
                };
            let active = conn.map(|c| {
                c.requests.fetch_add(1, Ordering::Relaxed);
                Active::new(c)
            });
            parts.extensions.insert(verified);
            let resp = inner.call(http::Request::from_parts(parts, body)).await?;
            Ok(match (active, admitted) {
                (None, None) => resp,
                // Both until the answer is sent.
                held => resp.map(|b| {
                    Body::new(Holding {
                        inner: b,
                        _held: held,
                    })
                }),
            })
        })
    }
}

#[cfg(test)]
mod tests;
