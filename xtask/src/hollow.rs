//! Hollow hosts for `cargo xtask up --hollow N` and `cargo xtask scale` (issue 51): their
//! names and addresses, how they are shared among `basalt-hollow` processes, and
//! starting those processes.

use crate::down::pid_dir;
use anyhow::{Context, Result, bail};
use basalt_config::embedded::DefaultHost;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::Command;

/// The hollow hosts' program (`up --hollow N`, issue 51): linked, started only then.
pub(crate) const HOLLOW: &str = "basalt-hollow";
/// How many `basalt-hollow` processes share the hollow hosts at least (one a CPU).
const HOLLOW_PROCESSES: usize = 2;
/// At most this many hollow hosts in one process: each holds 15 descriptors when
/// settled and more while it starts (its probes), `basalt-hollow` wants 24 each, and a
/// process here may open 20,000 (this machine's hard limit, which root cannot raise).
const HOLLOW_PER_PROCESS: usize = 600;
/// Hollow hosts the machine starts a second, shared by the processes: 10,000 in 40 s.
const HOLLOW_START_RATE: usize = 250;

/// The hollow hosts of `up --hollow n`: hv00001, ... at 127.200.0.1, 127.200.0.2, ...
/// (254 a /24, then 127.200.1.x, ..., 127.201.0.x).
pub(crate) fn hollow_hosts(n: usize) -> Result<Vec<DefaultHost>> {
    if n > 100_000 {
        bail!("--hollow must be at most 100000");
    }
    Ok((0..n)
        .map(|i| {
            let (net, host) = (i / 254, i % 254);
            DefaultHost {
                name: format!("hv{:05}", i + 1),
                address: Some(IpAddr::V4(Ipv4Addr::new(
                    127,
                    200 + (net / 256) as u8,
                    (net % 256) as u8,
                    host as u8 + 1,
                ))),
                server: true,
            }
        })
        .collect())
}

/// The hollow hosts `up` starts: the last `apart` in processes of their own.
pub(crate) struct HollowHosts {
    pub(crate) hosts: Vec<DefaultHost>,
    pub(crate) apart: usize,
}

/// How the hollow hosts are shared among `basalt-hollow` processes: the first
/// `hollow.len() - apart` evenly over [`HOLLOW_PROCESSES`] processes, or as many more
/// as keep each within [`HOLLOW_PER_PROCESS`], then the last
/// `apart` in processes of their own ([`apart_groups`] of them: `cargo xtask scale`
/// kills them together to lose those hosts at once). Group `k` is process `group<k>`.
pub(crate) fn hollow_groups(hollow: &[String], apart: usize) -> Vec<&[String]> {
    let apart = apart.min(hollow.len());
    let (shared, own) = hollow.split_at(hollow.len() - apart);
    let mut groups: Vec<&[String]> = Vec::new();
    if !shared.is_empty() {
        let processes = HOLLOW_PROCESSES.max(shared.len().div_ceil(HOLLOW_PER_PROCESS));
        groups.extend(shared.chunks(shared.len().div_ceil(processes)));
    }
    groups.extend(own.chunks(HOLLOW_PER_PROCESS));
    groups
}

/// How many of the last [`hollow_groups`] hold the `apart` hosts.
pub(crate) fn apart_groups(hollow: usize, apart: usize) -> usize {
    apart.min(hollow).div_ceil(HOLLOW_PER_PROCESS)
}

/// Start the hollow hosts of the cluster in `top`: one `basalt-hollow` process for each
/// of their [`hollow_groups`] (the last `apart` hosts apart), its hosts in
/// `<top>/run/hollow.group<k>.hosts`, its pid in `<top>/run/basalt-hollow.group<k>.pid`.
pub(crate) fn start_hollow(
    top: &Path,
    envdir: &Path,
    hollow: &[String],
    apart: usize,
) -> Result<()> {
    let bin = top.join("bin");
    let groups = hollow_groups(hollow, apart);
    let processes = groups.len().max(1);
    for (k, share) in groups.into_iter().enumerate() {
        let list = pid_dir(top).join(format!("hollow.group{k}.hosts"));
        std::fs::write(&list, share.join("\n"))?;
        // At a lower priority than the real daemons: the hollow hosts stand for other
        // machines, each with CPUs of its own; here they share the master's, which
        // must not starve (a master LIM that does not run for MASTER_INACTIVITY_LIMIT
        // intervals steps down, and the candidates would flap).
        let mut cmd = Command::new("nice");
        cmd.arg("-n")
            .arg("19")
            .arg(bin.join(HOLLOW))
            .arg("--hosts-file")
            .arg(&list)
            .arg("--start-rate")
            .arg(HOLLOW_START_RATE.div_ceil(processes).to_string());
        crate::spawn_logged(top, envdir, &format!("{HOLLOW}.group{k}"), cmd)
            .with_context(|| format!("starting {HOLLOW} for {} hosts", share.len()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hollow_hosts_are_shared_evenly_with_a_group_apart() {
        let h: Vec<String> = (1..=11).map(|i| format!("hv{i:05}")).collect();
        let sizes =
            |apart| -> Vec<usize> { hollow_groups(&h, apart).iter().map(|g| g.len()).collect() };
        assert_eq!(sizes(0), vec![6, 5]);
        assert_eq!(sizes(1), vec![5, 5, 1]);
        assert_eq!(sizes(3), vec![4, 4, 3]);
        assert_eq!(sizes(11), vec![11]);
        assert_eq!(sizes(20), vec![11]);
        // The group apart is the last hosts.
        assert_eq!(hollow_groups(&h, 3)[2], &h[8..]);
        assert!(hollow_groups(&[], 0).is_empty());
        // 10,000 hosts, 1,000 apart: 9,000 in 15 processes of 600, and the 1,000 apart
        // in 2 of their own.
        let many: Vec<String> = (1..=10_000).map(|i| format!("hv{i:05}")).collect();
        let groups = hollow_groups(&many, 1000);
        assert_eq!(groups.len(), 17);
        assert!(groups[..15].iter().all(|g| g.len() == HOLLOW_PER_PROCESS));
        assert_eq!(apart_groups(10_000, 1000), 2);
        assert_eq!(groups[15].len() + groups[16].len(), 1000);
        assert_eq!(groups[16].last(), many.last());
        assert_eq!(apart_groups(11, 3), 1);
        assert_eq!(apart_groups(11, 0), 0);
        assert_eq!(
            hollow_groups(&h[..1], 0)
                .iter()
                .map(|g| g.len())
                .collect::<Vec<_>>(),
            vec![1]
        );
    }
}
