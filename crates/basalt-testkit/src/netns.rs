//! The network-namespace tier: real partitions on one machine.
//!
//! A [`NetLab`] gives every host of a test cluster its own network namespace
//! (`ip netns`), joined to a bridge in the root namespace by a veth pair, on a
//! fresh `198.18.x.0/24` (the benchmarking range, never routed). The bridge has
//! the `.254` address, so commands run in the root namespace reach every host
//! that is connected. [`NetLab::cut`] takes a host's veth down at the bridge: its
//! packets are dropped both ways, open TCP connections stall (no reset), exactly
//! like a pulled cable; [`NetLab::heal`] puts it back. [`NetLab::cut_link`] cuts
//! only the link between two hosts (a partial partition: a blackhole route in each
//! of the two namespaces). The file system stays
//! shared, as LSF's shared log directory is.
//!
//! Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and iproute2. Tests of this tier run
//! only with `BASALT_TEST_NETNS=1` ([`enabled`]); everything is removed on drop.

use anyhow::{Context, Result, bail};
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The environment variable that turns the tier on.
pub const ENV: &str = "BASALT_TEST_NETNS";

/// Whether the network-namespace tests should run (`BASALT_TEST_NETNS=1`).
pub fn enabled() -> bool {
    std::env::var(ENV).is_ok_and(|v| v == "1")
}

static LABS: AtomicU32 = AtomicU32::new(0);

/// One host's namespace and its link to the bridge.
#[derive(Debug)]
struct Member {
    ns: String,
    root_veth: String,
    addr: Ipv4Addr,
}

/// Namespaces, veth pairs and a bridge for one test cluster.
#[derive(Debug)]
pub struct NetLab {
    bridge: String,
    members: Vec<Member>,
}

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .with_context(|| format!("running ip {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

impl NetLab {
    /// Namespaces for `n` hosts (at most 200), each with `lo` up and one address.
    pub fn new(n: usize) -> Result<NetLab> {
        if n == 0 || n > 200 {
            bail!("a network lab has 1 to 200 hosts, not {n}");
        }
        // Unique per process and lab: interface names are at most 15 bytes.
        let id = (std::process::id() & 0xffff) * 16 + (LABS.fetch_add(1, Ordering::Relaxed) % 16);
        let tag = format!("{id:x}");
        let third = (id % 250) as u8;
        let mut lab = NetLab {
            bridge: format!("bbr{tag}"),
            members: Vec::new(),
        };
        ip(&["link", "add", &lab.bridge, "type", "bridge"])?;
        ip(&[
            "addr",
            "add",
            &format!("198.18.{third}.254/24"),
            "dev",
            &lab.bridge,
        ])?;
        ip(&["link", "set", &lab.bridge, "up"])?;
        for i in 0..n {
            let m = Member {
                ns: format!("basalt-{tag}-{i}"),
                root_veth: format!("bv{tag}x{i}"),
                addr: Ipv4Addr::new(198, 18, third, (i + 1) as u8),
            };
            let peer = format!("bp{tag}x{i}");
            ip(&["netns", "add", &m.ns])?;
            // Pushed now so that drop removes what exists even if a later step fails.
            lab.members.push(m);
            let m = &lab.members[i];
            ip(&[
                "link",
                "add",
                &m.root_veth,
                "type",
                "veth",
                "peer",
                "name",
                &peer,
            ])?;
            ip(&["link", "set", &peer, "netns", &m.ns])?;
            ip(&["link", "set", &m.root_veth, "master", &lab.bridge])?;
            ip(&["link", "set", &m.root_veth, "up"])?;
            let inside = |args: &[&str]| {
                let mut a = vec!["netns", "exec", m.ns.as_str(), "ip"];
                a.extend_from_slice(args);
                ip(&a)
            };
            inside(&["link", "set", "lo", "up"])?;
            inside(&["addr", "add", &format!("{}/24", m.addr), "dev", &peer])?;
            inside(&["link", "set", &peer, "up"])?;
        }
        Ok(lab)
    }

    /// Host `i`'s address.
    pub fn addr(&self, i: usize) -> IpAddr {
        IpAddr::V4(self.members[i].addr)
    }

    /// Every host's address, in order.
    pub fn addrs(&self) -> Vec<IpAddr> {
        self.members.iter().map(|m| IpAddr::V4(m.addr)).collect()
    }

    /// Host `i`'s namespace name (for `ip netns exec`).
    pub fn ns(&self, i: usize) -> &str {
        &self.members[i].ns
    }

    /// Disconnect host `i` from the bridge: nothing gets in or out any more.
    pub fn cut(&self, i: usize) -> Result<()> {
        ip(&["link", "set", &self.members[i].root_veth, "down"])
    }

    /// Connect host `i` to the bridge again.
    pub fn heal(&self, i: usize) -> Result<()> {
        ip(&["link", "set", &self.members[i].root_veth, "up"])
    }

    /// Cut only the link between hosts `i` and `j` (both still reach everyone
    /// else): a blackhole route to the other in each namespace.
    pub fn cut_link(&self, i: usize, j: usize) -> Result<()> {
        self.route_between(i, j, "add")
    }

    /// Restore the link between hosts `i` and `j`.
    pub fn heal_link(&self, i: usize, j: usize) -> Result<()> {
        self.route_between(i, j, "delete")
    }

    fn route_between(&self, i: usize, j: usize, op: &str) -> Result<()> {
        for (from, to) in [(i, j), (j, i)] {
            let target = format!("{}/32", self.members[to].addr);
            ip(&[
                "netns",
                "exec",
                &self.members[from].ns,
                "ip",
                "route",
                op,
                "blackhole",
                &target,
            ])?;
        }
        Ok(())
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth pair inside it, and with it the
        // root-side end.
        for m in &self.members {
            let _ = ip(&["netns", "delete", &m.ns]);
            let _ = ip(&["link", "delete", &m.root_veth]);
        }
        let _ = ip(&["link", "delete", &self.bridge]);
    }
}
