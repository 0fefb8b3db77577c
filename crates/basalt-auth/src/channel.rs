//! A channel whose every request carries its own credential: [`AuthService`] wraps a
//! transport (tonic's `Channel`), reads each unary request's body (small: one message)
//! and puts into the request a credential sealed for exactly that method, body and
//! target host ([`crate::Authenticator::credential_for`]). A client-streaming request's
//! credential is bound to its method alone; its body goes on as it comes.
//!
//! Made with [`AuthService::retrying_when_busy`], it also sends a unary request again,
//! freshly sealed, when the daemon answers that it had no room for it
//! ([`basalt_proto::BUSY_METADATA`]: nothing of it was done), after the pause the answer
//! names ([`basalt_proto::RETRY_SECS_METADATA`]), until a deadline; then the caller gets
//! the busy answer.

use crate::{Authenticator, PERMISSION_DENIED};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tonic::body::Body;
use tonic::codegen::http;
use tonic::metadata::MetadataMap;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Is `path` a client-streaming method (its body is not one message)?
pub fn is_client_streaming(path: &str) -> bool {
    basalt_proto::CLIENT_STREAMING.contains(&path)
}

/// A transport `S` whose requests carry `auth`'s credentials; cheap to clone.
#[derive(Debug, Clone)]
pub struct AuthService<S> {
    inner: S,
    auth: Authenticator,
    busy_retry: Option<Duration>,
}

impl<S> AuthService<S> {
    /// Requests through `inner` carry `auth`'s credentials (make `auth` with
    /// [`Authenticator::towards`] the host `inner` reaches).
    pub fn new(inner: S, auth: Authenticator) -> AuthService<S> {
        AuthService {
            inner,
            auth,
            busy_retry: None,
        }
    }

    /// Send a unary request again while the daemon answers "busy", for at most `within`.
    pub fn retrying_when_busy(mut self, within: Duration) -> AuthService<S> {
        self.busy_retry = Some(within);
        self
    }

    /// The authenticator.
    pub fn authenticator(&self) -> &Authenticator {
        &self.auth
    }
}

/// The longest pause between two tries of a request the daemon was too busy for.
const MAX_BUSY_PAUSE: Duration = Duration::from_secs(5);

/// The pause a "busy" answer asks for, or None when `resp` is not one.
pub fn busy_pause(resp: &http::Response<Body>) -> Option<Duration> {
    let h = resp.headers();
    let code = h.get("grpc-status")?.to_str().ok()?;
    if code != (tonic::Code::ResourceExhausted as i32).to_string()
        || !h.contains_key(basalt_proto::BUSY_METADATA)
    {
        return None;
    }
    let secs = h
        .get(basalt_proto::RETRY_SECS_METADATA)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Some(Duration::from_secs(secs).min(MAX_BUSY_PAUSE))
}

/// Read a whole body (a unary request: one message, already encoded).
pub(crate) async fn collect(body: Body) -> Result<Bytes, BoxError> {
    use http_body_util::BodyExt;
    let collected = body
        .collect()
        .await
        .map_err(|e| -> BoxError { Box::new(e) })?;
    Ok(collected.to_bytes())
}

impl<S> tower::Service<http::Request<Body>> for AuthService<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        // The service that was made ready goes with this request; its clone stays.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        let busy_retry = self.busy_retry;
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            let path = parts.uri.path().to_owned();
            let (body, bytes) = if is_client_streaming(&path) {
                (body, None)
            } else {
                let bytes = collect(body).await?;
                (
                    Body::new(http_body_util::Full::new(bytes.clone())),
                    Some(bytes),
                )
            };
            let unsealed = parts.headers.clone();
            let mut md = MetadataMap::from_headers(std::mem::take(&mut parts.headers));
            // Getting a ticket may ask the LIM's socket (a local round trip).
            let stamped = auth.stamp(&mut md, &path, bytes.as_deref());
            parts.headers = md.into_headers();
            if let Err(e) = stamped {
                return Ok(
                    tonic::Status::unauthenticated(format!("{PERMISSION_DENIED}: {e}")).into_http(),
                );
            }
            let (method, uri, version) = (parts.method.clone(), parts.uri.clone(), parts.version);
            let mut resp = inner
                .call(http::Request::from_parts(parts, body))
                .await
                .map_err(Into::into)?;
            // A unary request the daemon had no room for: again, with a new seal (each
            // is accepted once), until the deadline.
            let (Some(within), Some(bytes)) = (busy_retry, bytes) else {
                return Ok(resp);
            };
            let deadline = Instant::now() + within;
            while let Some(pause) = busy_pause(&resp) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left < pause {
                    break;
                }
                tokio::time::sleep(pause).await;
                let mut md = MetadataMap::from_headers(unsealed.clone());
                if auth.stamp(&mut md, &path, Some(&bytes)).is_err() {
                    break;
                }
                let mut req =
                    http::Request::new(Body::new(http_body_util::Full::new(bytes.clone())));
                *req.method_mut() = method.clone();
                *req.uri_mut() = uri.clone();
                *req.version_mut() = version;
                *req.headers_mut() = md.into_headers();
                use tower::ServiceExt;
                resp = inner
                    .ready()
                    .await
                    .map_err(Into::into)?
                    .call(req)
                    .await
                    .map_err(Into::into)?;
            }
            Ok(resp)
        })
    }
}
