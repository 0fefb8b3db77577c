//! Loopback /24s of our own: every test cluster lives on a fresh `127.a.b.0/24`, so
//! tests run in parallel (threads or processes) with the same ports.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU32, Ordering};

/// A loopback /24 of our own: host `i` lives at `127.a.b.(i+1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subnet {
    pub a: u8,
    pub b: u8,
}

impl Subnet {
    pub fn host(&self, i: usize) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, self.a, self.b, (i + 1).min(254) as u8))
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A /24 under 127/8 that no other test (thread or process) is using: picked
/// from the process id, a counter and the clock, and checked by binding it.
/// `127.0.x.x` is never used, so a personal cluster on 127.0.0.x is safe.
pub fn fresh_subnet(port: u16) -> Subnet {
    let seed = std::process::id()
        .wrapping_mul(2_654_435_761)
        .wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(40_503))
        .wrapping_add(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0),
        );
    let mut x = seed;
    loop {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let a = 1 + (x >> 16) % 254;
        let b = (x >> 8) % 256;
        let subnet = Subnet {
            a: a as u8,
            b: b as u8,
        };
        // Claim it: if the first host's port can be bound, nobody uses this /24.
        if std::net::TcpListener::bind((subnet.host(0), port)).is_ok() {
            return subnet;
        }
    }
}
