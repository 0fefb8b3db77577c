//! The cluster's hosts and their addresses, as the daemons check requests against
//! them: a name found by its address and an address by its name without a scan, one
//! table shared by every daemon of a process ([`HostTable`] behind an `Arc`).

use std::collections::HashMap;
use std::net::IpAddr;

/// Every cluster host and its address (canonical: an IPv4-mapped IPv6 address is its
/// IPv4 one). The first host listed at an address is the one named for it.
#[derive(Debug, Default)]
pub struct HostTable {
    hosts: Vec<(String, IpAddr)>,
    by_ip: HashMap<IpAddr, usize>,
    /// By lower-cased name.
    by_name: HashMap<String, usize>,
}

impl HostTable {
    pub fn new(hosts: Vec<(String, IpAddr)>) -> HostTable {
        let hosts: Vec<(String, IpAddr)> = hosts
            .into_iter()
            .map(|(h, a)| (h, a.to_canonical()))
            .collect();
        let mut by_ip = HashMap::with_capacity(hosts.len());
        let mut by_name = HashMap::with_capacity(hosts.len());
        for (i, (h, a)) in hosts.iter().enumerate() {
            by_ip.entry(*a).or_insert(i);
            by_name.entry(h.to_ascii_lowercase()).or_insert(i);
        }
        HostTable {
            hosts,
            by_ip,
            by_name,
        }
    }

    /// The address of `host` (names compare without case).
    pub fn addr_of(&self, host: &str) -> Option<IpAddr> {
        let i = match self.by_name.get(host) {
            Some(i) => *i,
            None => *self.by_name.get(&host.to_ascii_lowercase())?,
        };
        Some(self.hosts[i].1)
    }

    /// The host at `ip`.
    pub fn host_at(&self, ip: IpAddr) -> Option<&str> {
        self.by_ip
            .get(&ip.to_canonical())
            .map(|&i| self.hosts[i].0.as_str())
    }

    /// Whether a cluster host has address `ip`.
    pub fn has_addr(&self, ip: IpAddr) -> bool {
        self.by_ip.contains_key(&ip.to_canonical())
    }

    /// The hosts and addresses in the order given.
    pub fn iter(&self) -> impl Iterator<Item = &(String, IpAddr)> {
        self.hosts.iter()
    }

    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_addresses_are_found_both_ways() {
        let t = HostTable::new(vec![
            ("hostA".into(), "127.0.0.1".parse().expect("ip")),
            ("hostB".into(), "::ffff:127.0.0.2".parse().expect("ip")),
            ("alias".into(), "127.0.0.1".parse().expect("ip")),
        ]);
        assert_eq!(t.addr_of("HOSTA"), Some("127.0.0.1".parse().expect("ip")));
        assert_eq!(t.addr_of("hostB"), Some("127.0.0.2".parse().expect("ip")));
        assert_eq!(t.addr_of("hostC"), None);
        assert_eq!(t.host_at("127.0.0.1".parse().expect("ip")), Some("hostA"));
        assert_eq!(
            t.host_at("::ffff:127.0.0.2".parse().expect("ip")),
            Some("hostB")
        );
        assert!(t.has_addr("127.0.0.2".parse().expect("ip")));
        assert!(!t.has_addr("127.0.0.3".parse().expect("ip")));
        assert_eq!(t.len(), 3);
    }
}
