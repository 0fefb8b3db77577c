//! The ports and addresses of a cluster `up` starts: the port plan of `--lim-port`, the
//! loopback subnet of `--subnet`, the check that every port is free before anything
//! starts, and the "Address already in use" diagnosis after a start that timed out.
//!
//! Port plan: without `--lim-port` (or with LSF's own 7869) the four daemons use LSF's
//! default ports (LIM 7869, RES 6878, mbatchd 6881, sbatchd 6882). `--lim-port P` moves
//! all four together to consecutive ports: LIM P, RES P+1, mbatchd P+2, sbatchd P+3, so
//! two clusters on the same addresses need `--lim-port` values at least 4 apart.

use anyhow::{Result, bail};
use basalt_config::embedded::DefaultCluster;
use basalt_config::lsf_conf::LsfConf;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs};
use std::path::Path;

/// LSF's default LIM port.
pub(crate) const LSF_LIM_PORT: u16 = 7869;

/// The four TCP ports of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ports {
    pub lim: u16,
    pub res: u16,
    pub mbd: u16,
    pub sbd: u16,
}

impl Ports {
    /// The ports for `--lim-port` (see the module documentation).
    pub(crate) fn plan(lim_port: Option<u16>) -> Result<Ports> {
        match lim_port {
            None | Some(LSF_LIM_PORT) => Ok(Ports {
                lim: LSF_LIM_PORT,
                res: 6878,
                mbd: 6881,
                sbd: 6882,
            }),
            Some(p) if p == 0 || p > u16::MAX - 3 => {
                bail!(
                    "--lim-port {p}: the cluster uses ports P to P+3 (LIM, RES, mbatchd, sbatchd); choose P between 1 and {}",
                    u16::MAX - 3
                )
            }
            Some(p) => Ok(Ports {
                lim: p,
                res: p + 1,
                mbd: p + 2,
                sbd: p + 3,
            }),
        }
    }

    /// The ports an lsf.conf names (LSF's defaults for those it does not).
    pub(crate) fn of(conf: &LsfConf) -> Ports {
        Ports {
            lim: conf.lim_port(),
            res: conf.res_port(),
            mbd: conf.mbd_port(),
            sbd: conf.sbd_port(),
        }
    }

    /// Write them into the configuration to render.
    pub(crate) fn apply(&self, spec: &mut DefaultCluster) {
        spec.lim_port = self.lim;
        spec.res_port = self.res;
        spec.mbd_port = self.mbd;
        spec.sbd_port = self.sbd;
    }

    /// (port, daemon) in start order.
    pub(crate) fn named(&self) -> [(u16, &'static str); 4] {
        [
            (self.lim, "lim"),
            (self.res, "res"),
            (self.mbd, "mbatchd"),
            (self.sbd, "sbatchd"),
        ]
    }
}

/// `--subnet 127.0.5` (or `127.0.5.0`, `127.0.5.0/24`): the first three octets of a
/// loopback /24 whose .1, .2, ... are the cluster's hosts.
pub(crate) fn parse_subnet(s: &str) -> Result<[u8; 3], String> {
    let t = s.trim().trim_end_matches("/24");
    let t = t
        .strip_suffix(".0")
        .filter(|p| p.matches('.').count() == 2)
        .unwrap_or(t);
    let parts: Vec<&str> = t.split('.').collect();
    let octets: Vec<u8> = parts.iter().filter_map(|p| p.parse().ok()).collect();
    match octets[..] {
        [127, b, c] if parts.len() == 3 => Ok([127, b, c]),
        [_, _, _] if parts.len() == 3 => Err(format!(
            "{s}: not a loopback subnet; use 127.X.Y (hosts at 127.X.Y.1, .2, ...)"
        )),
        _ => Err(format!(
            "{s}: expected a loopback /24 as three octets, e.g. 127.0.5 (hosts at 127.0.5.1, .2, ...)"
        )),
    }
}

/// Host `i` (0-based) of `subnet`.
pub(crate) fn subnet_host(subnet: [u8; 3], i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(
        subnet[0],
        subnet[1],
        subnet[2],
        (i + 1) as u8,
    ))
}

/// What `up` says about a port that is taken.
pub(crate) fn busy_message(port: u16, daemon: &str, addr: IpAddr) -> String {
    format!(
        "port {port} ({daemon}) on {addr} is already in use (by another cluster? stop it with cargo xtask down, or choose --lim-port/--subnet)"
    )
}

/// Check that every port of `ports` is free on every address of `addrs` by binding a
/// listener to it (and dropping it at once). Every problem at once, one per line.
pub(crate) fn check_free(addrs: &[IpAddr], ports: &Ports) -> Result<()> {
    let mut problems = Vec::new();
    for addr in addrs {
        for (port, daemon) in ports.named() {
            match TcpListener::bind(SocketAddr::new(*addr, port)) {
                Ok(l) => drop(l),
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                    problems.push(busy_message(port, daemon, *addr))
                }
                Err(e) => problems.push(format!(
                    "port {port} ({daemon}) on {addr} cannot be bound: {e}"
                )),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        // A cluster of 10,000 hosts left running would be 20,000 lines.
        let n = problems.len();
        if n > MAX_LISTED {
            problems.truncate(MAX_LISTED);
            problems.push(format!("... and {} more", n - MAX_LISTED));
        }
        bail!("nothing started:\n  {}", problems.join("\n  "))
    }
}

/// Ports in use listed one by one; past that, their number.
const MAX_LISTED: usize = 20;

/// The addresses of the hosts of a loaded configuration: the ADDRESS column, else the
/// name resolved (a name that does not resolve is left to the daemons to report).
pub(crate) fn host_addrs(config: &basalt_config::Config) -> Vec<IpAddr> {
    let mut out: Vec<IpAddr> = Vec::new();
    for h in &config.cluster.hosts {
        let addr = h.address.or_else(|| {
            (h.name.as_str(), 0)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .map(|a| a.ip())
        });
        if let Some(a) = addr.filter(|a| !out.contains(a)) {
            out.push(a);
        }
    }
    out
}

/// Check the ports of the cluster whose configuration is `loaded` (see [`check_free`]).
pub(crate) fn check_cluster(loaded: &basalt_config::Loaded) -> Result<()> {
    check_free(
        &host_addrs(&loaded.config),
        &Ports::of(&loaded.config.lsf_conf),
    )
}

/// After a start that timed out: the daemon log lines of `<top>/log` saying a port was
/// taken ("Address already in use"), as a message, or None.
pub(crate) fn address_in_use(top: &Path) -> Option<String> {
    let mut hits = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(top.join("log"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let Ok(text) = std::fs::read(&path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        if let Some(line) = text
            .lines()
            .rev()
            .find(|l| l.contains("Address already in use") || l.contains("AddrInUse"))
        {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            hits.push(format!("{name}: {}", line.trim()));
        }
    }
    (!hits.is_empty()).then(|| {
        format!(
            "a daemon could not bind its port: it is already in use (by another cluster? stop it with cargo xtask down, or choose --lim-port/--subnet):\n  {}",
            hits.join("\n  ")
        )
    })
}

/// `err` from waiting for the cluster of `top`, with the "Address already in use" of its
/// logs in front when there is one.
pub(crate) fn explain_timeout(top: &Path, err: anyhow::Error) -> anyhow::Error {
    match address_in_use(top) {
        Some(msg) => err.context(msg),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_plan() {
        let lsf = Ports::plan(None).unwrap();
        assert_eq!(
            lsf.named(),
            [
                (7869, "lim"),
                (6878, "res"),
                (6881, "mbatchd"),
                (6882, "sbatchd")
            ]
        );
        assert_eq!(Ports::plan(Some(7869)).unwrap(), lsf);
        let moved = Ports::plan(Some(17869)).unwrap();
        assert_eq!(
            moved,
            Ports {
                lim: 17869,
                res: 17870,
                mbd: 17871,
                sbd: 17872
            }
        );
        // All four move: no port of a moved cluster is one of the default cluster's.
        for (p, _) in moved.named() {
            assert!(lsf.named().iter().all(|(q, _)| *q != p));
        }
        assert!(Ports::plan(Some(65533)).is_err());
        assert!(Ports::plan(Some(65532)).is_ok());
        assert!(Ports::plan(Some(0)).is_err());

        let mut spec = DefaultCluster::new("c", "me", Vec::new());
        moved.apply(&mut spec);
        assert_eq!(
            (spec.lim_port, spec.res_port, spec.mbd_port, spec.sbd_port),
            (17869, 17870, 17871, 17872)
        );
    }

    #[test]
    fn subnets() {
        assert_eq!(parse_subnet("127.0.5"), Ok([127, 0, 5]));
        assert_eq!(parse_subnet("127.0.5.0"), Ok([127, 0, 5]));
        assert_eq!(parse_subnet("127.3.5.0/24"), Ok([127, 3, 5]));
        assert!(
            parse_subnet("10.0.5")
                .unwrap_err()
                .contains("not a loopback")
        );
        assert!(parse_subnet("127.0").is_err());
        assert!(parse_subnet("127.0.300").is_err());
        assert_eq!(subnet_host([127, 0, 5], 0).to_string(), "127.0.5.1");
        assert_eq!(subnet_host([127, 0, 5], 2).to_string(), "127.0.5.3");
    }

    #[test]
    fn a_taken_port_is_reported_as_such() {
        assert_eq!(
            busy_message(6881, "mbatchd", IpAddr::V4(Ipv4Addr::LOCALHOST)),
            "port 6881 (mbatchd) on 127.0.0.1 is already in use (by another cluster? stop it with cargo xtask down, or choose --lim-port/--subnet)"
        );
        // A real listener on the RES port of a plan; the others are free.
        let addr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
        let taken = TcpListener::bind((addr, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        let plan = Ports {
            lim: port - 1,
            res: port,
            mbd: port + 1,
            sbd: port + 2,
        };
        let err = check_free(&[addr], &plan).unwrap_err().to_string();
        assert!(
            err.contains(&busy_message(port, "res", addr)),
            "unexpected message: {err}"
        );
        assert!(err.starts_with("nothing started"), "{err}");
        drop(taken);
    }

    #[test]
    fn address_in_use_is_found_in_the_logs() {
        let top = std::env::temp_dir().join(format!("xtask-ports-{}", std::process::id()));
        std::fs::create_dir_all(top.join("log")).unwrap();
        assert_eq!(address_in_use(&top), None);
        std::fs::write(top.join("log/sbatchd.hostA.log"), "starting\nok\n").unwrap();
        assert_eq!(address_in_use(&top), None);
        std::fs::write(
            top.join("log/mbatchd.hostA.log"),
            "ERROR binding 127.0.0.1:6881: Address already in use (os error 98)\n",
        )
        .unwrap();
        let msg = address_in_use(&top).unwrap();
        assert!(msg.contains("already in use"), "{msg}");
        assert!(
            msg.contains("mbatchd.hostA.log: ERROR binding 127.0.0.1:6881"),
            "{msg}"
        );
        let _ = std::fs::remove_dir_all(&top);
    }
}
