//! A channel whose every request carries its own credential: [`AuthService`] wraps a
//! transport (tonic's `Channel`), reads each unary request's body (small: one message)
//! and puts into the request a credential sealed for exactly that method, body and
//! target host ([`crate::Authenticator::credential_for`]). A client-streaming request's
//! credential is bound to its method alone; its body goes on as it comes.

use crate::{Authenticator, PERMISSION_DENIED};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
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
}

impl<S> AuthService<S> {
    /// Requests through `inner` carry `auth`'s credentials (make `auth` with
    /// [`Authenticator::towards`] the host `inner` reaches).
    pub fn new(inner: S, auth: Authenticator) -> AuthService<S> {
        AuthService { inner, auth }
    }

    /// The authenticator.
    pub fn authenticator(&self) -> &Authenticator {
        &self.auth
    }
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
            let mut md = MetadataMap::from_headers(std::mem::take(&mut parts.headers));
            // Getting a ticket may ask the LIM's socket (a local round trip).
            let stamped = auth.stamp(&mut md, &path, bytes.as_deref());
            parts.headers = md.into_headers();
            if let Err(e) = stamped {
                return Ok(
                    tonic::Status::unauthenticated(format!("{PERMISSION_DENIED}: {e}")).into_http(),
                );
            }
            inner
                .call(http::Request::from_parts(parts, body))
                .await
                .map_err(Into::into)
        })
    }
}
