//! The TCP connector of every channel that leaves from the host's own address.
//!
//! A daemon's connections leave from its host's address (so that the receiver sees
//! which host calls), which means a `bind` before the `connect`. A plain `bind` to port
//! 0 makes the kernel pick an ephemeral port that no other socket of that address holds
//! — a search over every socket bound to it, for each new connection. mbatchd makes a
//! connection for each dispatch to a host it has not heard from within the reuse
//! window; at 1,000 hosts that search was 17 % of the machine during a drain (`perf`:
//! `inet_bhash2_conflict`, `inet_bind2_bucket_find` under `bind`). With
//! `IP_BIND_ADDRESS_NO_PORT` the port is chosen by `connect` instead, where only the
//! four-tuple (both addresses, both ports) has to be new.
//!
//! The connect timeout is applied here, so that its expiry is a connect error (tonic
//! wraps every error of a connector in `tonic::ConnectError`, which tells a caller the
//! request was never sent), as with tonic's own connector.

use hyper_util::rt::TokioIo;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpSocket, TcpStream};

/// Connects to one address from one local address, with a deadline; see the module.
#[derive(Clone, Debug)]
pub struct FromAddress {
    to: SocketAddr,
    from: IpAddr,
    timeout: Duration,
}

impl FromAddress {
    /// Connections to `to`, leaving from `from`, each given `timeout` to connect.
    pub fn new(to: SocketAddr, from: IpAddr, timeout: Duration) -> FromAddress {
        FromAddress { to, from, timeout }
    }

    /// One connection (the URI of the request is the channel's own: `to`).
    pub async fn connect(self) -> io::Result<TcpStream> {
        let socket = match self.to {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        if self.from.is_ipv4() {
            // Best effort: a kernel without it only picks the port the slow way.
            let _ = nix::sys::socket::setsockopt(
                &socket,
                nix::sys::socket::sockopt::IpBindAddressNoPort,
                &true,
            );
        }
        socket.set_nodelay(true)?;
        socket.bind(SocketAddr::new(self.from, 0))?;
        match tokio::time::timeout(self.timeout, socket.connect(self.to)).await {
            Ok(stream) => stream,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connect to {} timed out after {:?}", self.to, self.timeout),
            )),
        }
    }
}

impl tower::Service<tonic::transport::Uri> for FromAddress {
    type Response = TokioIo<TcpStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<TokioIo<TcpStream>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: tonic::transport::Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.connect().await.map(TokioIo::new) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_leaves_from_the_given_address() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let to = listener.local_addr().expect("addr");
        let from: IpAddr = "127.0.0.9".parse().expect("ip");
        let connecting = FromAddress::new(to, from, Duration::from_secs(5)).connect();
        let (accepted, stream) = tokio::join!(listener.accept(), connecting);
        let (_, peer) = accepted.expect("accept");
        let stream = stream.expect("connect");
        assert_eq!(peer.ip(), from);
        assert_eq!(stream.local_addr().expect("local").ip(), from);
        assert!(stream.nodelay().expect("nodelay"));
    }

    #[tokio::test]
    async fn the_port_is_left_to_connect() {
        // The kernel is told to choose the port at connect (no search at bind).
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let to = l.local_addr().expect("addr");
        let from: IpAddr = "127.0.0.9".parse().expect("ip");
        let connecting = FromAddress::new(to, from, Duration::from_secs(5)).connect();
        let (acc, s) = tokio::join!(l.accept(), connecting);
        acc.expect("accept");
        let s = s.expect("connect");
        let no_port =
            nix::sys::socket::getsockopt(&s, nix::sys::socket::sockopt::IpBindAddressNoPort)
                .expect("getsockopt");
        assert!(no_port);
    }

    #[tokio::test]
    async fn a_refused_connect_is_an_io_error_of_its_kind() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let to = l.local_addr().expect("addr");
        drop(l);
        let e = FromAddress::new(to, "127.0.0.1".parse().expect("ip"), Duration::from_secs(5))
            .connect()
            .await
            .expect_err("nothing listens");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
    }
}
