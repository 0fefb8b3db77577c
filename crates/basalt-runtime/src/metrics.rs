//! The daemons' Prometheus endpoint: `GET /metrics` over HTTP/1.1 (hyper, the HTTP
//! stack tonic already brings), answered with the OpenMetrics text format
//! (`prometheus-client`), which Prometheus scrapes natively.
//!
//! Each daemon keeps its own [`Registry`] of counters, gauges and histograms, and gives
//! [`start`] a function that renders it on each scrape (after refreshing the gauges it
//! only reads when asked, such as mbatchd's job counts, which come from its owner
//! thread). The port is a Basalt lsf.conf keyword per daemon
//! (`BASALT_MBD_METRICS_PORT`, `BASALT_LIM_METRICS_PORT`, `BASALT_SBD_METRICS_PORT`);
//! unset or 0: no endpoint.

pub use prometheus_client;
use prometheus_client::encoding::text::encode as encode_text;
pub use prometheus_client::registry::Registry;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// The content type of the answer (OpenMetrics text, which Prometheus asks for first).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The buckets of a latency histogram, in seconds: 50 µs doubling to about 1.6 s
/// (16 buckets, then +Inf).
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(0.000_05, 2.0, 16)
}

/// The text exposition of `registry` (ends with `# EOF`).
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail; an encoding error would be a bug in a metric.
    if let Err(e) = encode_text(&mut out, registry) {
        tracing::error!("encoding the metrics: {e}");
    }
    out
}

/// Start the endpoint of `daemon` on `ip:port` when `port` is given: bind, then serve
/// until the returned task is aborted (or dropped with its runtime). A port that cannot
/// be bound is logged as an error and the daemon goes on without metrics.
pub async fn start<F, Fut>(
    daemon: &str,
    ip: IpAddr,
    port: Option<u16>,
    render: F,
) -> Option<tokio::task::JoinHandle<()>>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = String> + Send + 'static,
{
    let port = port?;
    let addr = SocketAddr::new(ip, port);
    match TcpListener::bind(addr).await {
        Ok(listener) => {
            tracing::info!("{daemon} metrics on http://{addr}/metrics");
            Some(tokio::spawn(serve(listener, render)))
        }
        Err(e) => {
            tracing::error!("{daemon}: cannot serve metrics on {addr}: {e}; going on without");
            None
        }
    }
}

/// Serve `GET /metrics` on `listener` (each connection on its own task, all of them
/// ended when this future is dropped or aborted).
pub async fn serve<F, Fut>(listener: TcpListener, render: F)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = String> + Send + 'static,
{
    let render = Arc::new(render);
    let mut conns = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            // Reap finished connections as they end.
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
        };
        let (stream, _) = match accepted {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("metrics endpoint: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let render = render.clone();
        conns.spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let render = render.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&req, &*render).await) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!("metrics endpoint: connection: {e}");
            }
        });
    }
}

async fn answer<F, Fut>(req: &Request<Incoming>, render: &F) -> Response<String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = String>,
{
    let reply = |status: StatusCode, ctype: &str, body: String| {
        let mut r = Response::new(body);
        *r.status_mut() = status;
        if let Ok(v) = hyper::header::HeaderValue::from_str(ctype) {
            r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
        }
        r
    };
    let text = "text/plain; charset=utf-8";
    if req.uri().path() != "/metrics" {
        return reply(
            StatusCode::NOT_FOUND,
            text,
            "not found: try /metrics\n".into(),
        );
    }
    match *req.method() {
        Method::GET => reply(StatusCode::OK, CONTENT_TYPE, render().await),
        Method::HEAD => reply(StatusCode::OK, CONTENT_TYPE, String::new()),
        _ => {
            let mut r = reply(
                StatusCode::METHOD_NOT_ALLOWED,
                text,
                "only GET /metrics\n".into(),
            );
            r.headers_mut().insert(
                hyper::header::ALLOW,
                hyper::header::HeaderValue::from_static("GET, HEAD"),
            );
            r
        }
    }
}

/// `GET path` on `addr` with a plain HTTP/1.0 request: (status code, body). For tests
/// and simple probes; blocking, with a 10 s timeout.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let timeout = std::time::Duration::from_secs(10);
    let mut s = std::net::TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut raw = String::new();
    s.read_to_string(&mut raw)?;
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not an HTTP answer");
    let (head, body) = raw.split_once("\r\n\r\n").ok_or_else(bad)?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(bad)?;
    Ok((code, body.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn get_metrics_is_answered_and_other_paths_are_not() {
        let mut registry = Registry::with_prefix("basalt_test");
        let hits: Counter = Counter::default();
        registry.register("hits", "Hits", hits.clone());
        let registry = Arc::new(registry);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let r = registry.clone();
        let server = tokio::spawn(serve(listener, move || {
            let r = r.clone();
            hits.inc();
            async move { encode(&r) }
        }));
        let (code, body) = tokio::task::spawn_blocking(move || http_get(addr, "/metrics"))
            .await
            .expect("join")
            .expect("get");
        assert_eq!(code, 200);
        assert!(body.contains("# TYPE basalt_test_hits counter"), "{body}");
        assert!(body.contains("basalt_test_hits_total 1"), "{body}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        let (code, _) = tokio::task::spawn_blocking(move || http_get(addr, "/other"))
            .await
            .expect("join")
            .expect("get");
        assert_eq!(code, 404);
        server.abort();
    }
}
