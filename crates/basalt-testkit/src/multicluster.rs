//! MultiCluster test sets: several linked clusters of real daemon processes
//! ([`ProcessCluster::start_multicluster`]), each on a fresh loopback /24 of its own and
//! in a directory of its own, their configurations naming each other (lsf.shared's
//! Cluster section with every member, lsf.cluster's RemoteClusters, a shared
//! MultiCluster key).
//!
//! Host names repeat across members (every member has a hostA): they are different
//! clusters, and nothing here or in the daemons keys state by host name across
//! clusters (processes are found by their `LSF_ENVDIR`, credential sockets are named
//! after addresses).

use crate::config::{
    ClusterSpec, McWrite, add_lsb_params, append_file, batch_dir, default_cluster, write_config_mc,
};
use crate::dirs::TestDir;
use crate::process::ProcessCluster;
use crate::subnet::{Subnet, fresh_subnet};
use anyhow::{Context, Result, bail};
use basalt_config::embedded::{McCluster, MultiCluster};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The key file every member's lsf.conf names (`BASALT_MC_KEY`), in its LSF_ENVDIR.
pub const MC_KEY_FILE: &str = "mc.key";

/// How often mbatchd polls the other clusters in a test set (`BASALT_MC_POLL_MS`).
pub const MC_POLL_MS: u64 = 200;

/// One cluster of a MultiCluster test set.
#[derive(Debug, Clone)]
pub struct McMember {
    /// The cluster's name (it overrides `spec.cluster`).
    pub cluster: String,
    pub spec: ClusterSpec,
    /// Lines added to lsb.params (before `End Parameters`).
    pub lsb_params: String,
    /// Text appended to lsb.queues (queue sections).
    pub lsb_queues: String,
    /// lsb.users (written when not empty; none by default).
    pub lsb_users: String,
    /// None = the key shared by all members; Some(seed) = a key of its own (to test a
    /// cluster that does not trust the others). Members with the same seed share that
    /// key.
    pub own_mc_key: Option<u8>,
    /// No `BASALT_MC_KEY`: the member's cluster key (`basalt.key`) is its MultiCluster key
    /// (the documented fallback), written with the key text it would otherwise hold as
    /// `mc.key` — so members that do this share one cluster key file.
    pub no_mc_key: bool,
}

impl McMember {
    /// Cluster `cluster` of `hosts` hosts with test timings ([`ClusterSpec::new`]), the
    /// default batch files and the shared key.
    pub fn new(cluster: &str, hosts: usize) -> McMember {
        McMember {
            cluster: cluster.to_owned(),
            spec: ClusterSpec::new(hosts).named(cluster),
            lsb_params: String::new(),
            lsb_queues: String::new(),
            lsb_users: String::new(),
            own_mc_key: None,
            no_mc_key: false,
        }
    }

    /// Append queue sections to lsb.queues.
    pub fn queues(mut self, sections: &str) -> McMember {
        self.lsb_queues.push_str(sections);
        self
    }

    /// Append sections (a UserMap, say) to lsb.users.
    pub fn users(mut self, sections: &str) -> McMember {
        self.lsb_users.push_str(sections);
        self
    }

    /// Add lsb.params lines.
    pub fn params(mut self, lines: &str) -> McMember {
        self.lsb_params.push_str(lines);
        self.lsb_params.push('\n');
        self
    }

    /// Hold a MultiCluster key of its own, made from `seed`, instead of the shared one.
    pub fn own_key(mut self, seed: u8) -> McMember {
        self.own_mc_key = Some(seed);
        self
    }

    /// Write no `BASALT_MC_KEY`: the cluster key is the MultiCluster key (and holds the
    /// set's shared key, or [`McMember::own_key`]'s).
    pub fn no_mc_key(mut self) -> McMember {
        self.no_mc_key = true;
        self
    }

    /// Its spec, named after it.
    fn spec(&self) -> ClusterSpec {
        let mut spec = self.spec.clone();
        spec.cluster.clone_from(&self.cluster);
        spec
    }
}

/// A key-file text (as `basalt-auth` reads it) for 32 bytes.
fn key_text(bytes: &[u8; 32]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("# Basalt MultiCluster key (test)\n{hex}\n")
}

/// 32 random bytes.
fn random_key() -> Result<[u8; 32]> {
    use std::io::Read as _;
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom for the MultiCluster key")?;
    Ok(b)
}

/// The key of its own a member with `seed` holds: the same for the same seed, unlike
/// any other seed's.
fn seeded_key(seed: u8) -> [u8; 32] {
    let mut b = [0u8; 32];
    let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ u64::from(seed).wrapping_mul(0x1000_0000_01b3);
    for v in &mut b {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *v = (x >> 24) as u8;
    }
    b
}

/// The Cluster-section rows of the set: member `k` with its first host at `addrs[k][0]`.
fn set_rows(members: &[McMember], addrs: &[Vec<IpAddr>]) -> Vec<McCluster> {
    members
        .iter()
        .zip(addrs)
        .map(|(m, a)| default_cluster(&m.spec(), a).mc_cluster())
        .collect()
}

/// Write the configuration of every member of a MultiCluster set: member `k` with host
/// `i` at `addrs[k][i]` under `tops[k]`, its lsf.shared listing every member (itself
/// first, `Servers` its first host, `ADDRESSES` that host's address), its lsf.cluster a
/// RemoteClusters section naming every other member, the MultiCluster key
/// ([`MC_KEY_FILE`], mode 0600; [`McMember::own_mc_key`]) and `BASALT_MC_KEY` (or, for
/// [`McMember::no_mc_key`], that key text as its cluster key and no `BASALT_MC_KEY`),
/// `BASALT_MC_POLL_MS` ([`MC_POLL_MS`]) in lsf.conf, its lsb_params, lsb_queues and
/// lsb_users.
/// Returns every member's LSF_ENVDIR.
pub fn write_multicluster_at(
    members: &[McMember],
    addrs: &[Vec<IpAddr>],
    tops: &[&Path],
) -> Result<Vec<PathBuf>> {
    if members.len() < 2 {
        bail!("a MultiCluster set needs at least two clusters");
    }
    if addrs.len() != members.len() || tops.len() != members.len() {
        bail!(
            "{} clusters, {} address lists, {} directories",
            members.len(),
            addrs.len(),
            tops.len()
        );
    }
    for (i, m) in members.iter().enumerate() {
        if m.cluster.is_empty() || m.spec.hosts == 0 {
            bail!("cluster {i}: a MultiCluster member needs a name and a host");
        }
        if members[..i].iter().any(|o| o.cluster == m.cluster) {
            bail!("cluster {} is named twice", m.cluster);
        }
    }
    let rows = set_rows(members, addrs);
    let shared = key_text(&random_key()?);
    let mut envdirs = Vec::new();
    for ((m, a), top) in members.iter().zip(addrs).zip(tops) {
        let spec = m.spec();
        let mc = McWrite {
            mc: MultiCluster {
                clusters: rows.clone(),
                // Empty: no BASALT_MC_KEY, the key text goes into the cluster key.
                key: if m.no_mc_key {
                    String::new()
                } else {
                    MC_KEY_FILE.to_owned()
                },
                poll_ms: Some(MC_POLL_MS),
            },
            key_text: m
                .own_mc_key
                .map_or_else(|| shared.clone(), |seed| key_text(&seeded_key(seed))),
        };
        let envdir = write_config_mc(&spec, a, top, Some(&mc))?;
        add_lsb_params(top, &spec.cluster, &m.lsb_params)?;
        if !m.lsb_queues.is_empty() {
            append_file(
                &batch_dir(top, &spec.cluster).join("lsb.queues"),
                &m.lsb_queues,
            )?;
        }
        if !m.lsb_users.is_empty() {
            let path = batch_dir(top, &spec.cluster).join("lsb.users");
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            text.push_str(&m.lsb_users);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        envdirs.push(envdir);
    }
    Ok(envdirs)
}

/// `n` fresh loopback /24s, all different.
fn fresh_subnets(n: usize) -> Vec<Subnet> {
    let mut out: Vec<Subnet> = Vec::new();
    while out.len() < n {
        let s = fresh_subnet(7869);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl ProcessCluster {
    /// Start a MultiCluster set of linked clusters as processes: each member on a fresh
    /// loopback /24 and in a test directory of its own (`<name>-<cluster>`), configured
    /// by [`write_multicluster_at`], then started as [`ProcessCluster::start_batch`]
    /// starts a cluster (LIMs, then sbatchd, which starts mbatchd), waiting until each
    /// member's mbatchd answers `bhosts` with every host ok. The clusters in the order of
    /// `members`; each one's [`ProcessCluster::command`] (`run`, `bsub`, ...) talks to
    /// that cluster (its own LSF_ENVDIR).
    pub fn start_multicluster(name: &str, members: &[McMember]) -> Result<Vec<ProcessCluster>> {
        let subnets = fresh_subnets(members.len());
        let addrs: Vec<Vec<IpAddr>> = members
            .iter()
            .zip(&subnets)
            .map(|(m, s)| (0..m.spec.hosts).map(|i| s.host(i)).collect())
            .collect();
        let dirs = members
            .iter()
            .map(|m| TestDir::new(&format!("{name}-{}", m.cluster)))
            .collect::<Result<Vec<_>>>()?;
        let tops: Vec<&Path> = dirs.iter().map(TestDir::path).collect();
        let envdirs = write_multicluster_at(members, &addrs, &tops)?;
        let mut clusters = Vec::new();
        for (((m, dir), envdir), a) in members.iter().zip(dirs).zip(envdirs).zip(addrs) {
            clusters.push(ProcessCluster::unstarted(dir, envdir, &m.spec(), a, None)?);
        }
        // Every member's LIMs, then every member's batch daemons: they come up side by
        // side.
        for c in &mut clusters {
            c.start_lims()?;
        }
        for c in &clusters {
            c.wait_master(&c.hosts[0], Duration::from_secs(30))
                .with_context(|| format!("cluster {}", c.cluster))?;
        }
        for c in &mut clusters {
            c.start_sbatchds()?;
        }
        for c in &clusters {
            c.wait_bhosts_ok()?;
        }
        Ok(clusters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn must<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    fn addrs(a: u8, n: usize) -> Vec<IpAddr> {
        let s = Subnet { a, b: 7 };
        (0..n).map(|i| s.host(i)).collect()
    }

    fn read(p: &Path) -> String {
        must(std::fs::read_to_string(p))
    }

    /// Three linked clusters: west sends to east's and north's `recv`; north holds a key
    /// of its own.
    fn write_three() -> (Vec<TestDir>, Vec<PathBuf>) {
        let members = vec![
            McMember::new("west", 2)
                .queues(
                    "\nBegin Queue\nQUEUE_NAME = send\nPRIORITY = 30\n\
                     SNDJOBS_TO = recv@east recv@north\nEnd Queue\n",
                )
                .params("MAX_RSCHED_TIME = 10"),
            McMember::new("east", 1).queues(
                "\nBegin Queue\nQUEUE_NAME = recv\nPRIORITY = 30\n\
                 RCVJOBS_FROM = west\nIMPT_JOBBKLG = 20\nEnd Queue\n",
            ),
            McMember::new("north", 1).own_key(7).queues(
                "\nBegin Queue\nQUEUE_NAME = recv\nPRIORITY = 30\n\
                 RCVJOBS_FROM = allclusters\nEnd Queue\n",
            ),
        ];
        let dirs: Vec<TestDir> = ["west", "east", "north"]
            .iter()
            .map(|n| must(TestDir::new(&format!("mc-config-{n}"))))
            .collect();
        let tops: Vec<&Path> = dirs.iter().map(TestDir::path).collect();
        let envdirs = must(write_multicluster_at(
            &members,
            &[addrs(201, 2), addrs(202, 1), addrs(203, 1)],
            &tops,
        ));
        (dirs, envdirs)
    }

    #[test]
    fn members_are_written_linked() {
        let (dirs, envdirs) = write_three();
        // Each lsf.shared lists every member, itself first.
        let rows = |e: &Path| -> Vec<String> {
            let t = read(&e.join("lsf.shared"));
            t.split("Begin Cluster\n")
                .nth(1)
                .and_then(|s| s.split("End Cluster").next())
                .unwrap_or_default()
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        assert_eq!(
            rows(&envdirs[1]),
            vec![
                "ClusterName Servers ADDRESSES",
                "east (hostA) (127.202.7.1)",
                "west (hostA) (127.201.7.1)",
                "north (hostA) (127.203.7.1)",
            ]
        );
        assert_eq!(rows(&envdirs[0])[1], "west (hostA) (127.201.7.1)");
        // RemoteClusters: every other member.
        let west = read(&envdirs[0].join("lsf.cluster.west"));
        assert!(
            west.contains("Begin RemoteClusters\nCLUSTERNAME  RECV_FROM\neast         Y\nnorth        Y\nEnd RemoteClusters\n"),
            "{west}"
        );
        // lsf.conf names the key; the key is 0600, shared by west and east, north's own.
        for e in &envdirs {
            let conf = read(&e.join("lsf.conf"));
            assert!(
                conf.contains("\nBASALT_MC_KEY=mc.key\nBASALT_MC_POLL_MS=200\n"),
                "{conf}"
            );
            let md = must(std::fs::metadata(e.join(MC_KEY_FILE)));
            assert_eq!(md.permissions().mode() & 0o777, 0o600);
        }
        let key = |i: usize| read(&envdirs[i].join(MC_KEY_FILE));
        assert_eq!(key(0), key(1));
        assert_ne!(key(0), key(2));
        assert_eq!(key(2), key_text(&seeded_key(7)));
        assert_ne!(seeded_key(7), seeded_key(8));
        // The batch files of each cluster under its own name.
        let queues = read(&batch_dir(dirs[0].path(), "west").join("lsb.queues"));
        assert!(queues.contains("SNDJOBS_TO = recv@east recv@north"));
        let params = read(&batch_dir(dirs[0].path(), "west").join("lsb.params"));
        assert!(params.contains("MAX_RSCHED_TIME = 10\nEnd Parameters"));
        assert!(dirs[1].path().join("work/east/logdir").is_dir());
    }

    /// Every member's configuration loads as that cluster, with no warning but the
    /// read-but-not-applied ones.
    #[test]
    fn members_configurations_load() {
        let (_dirs, envdirs) = write_three();
        for (e, name) in envdirs.iter().zip(["west", "east", "north"]) {
            let loaded = basalt_config::load(e)
                .unwrap_or_else(|err| panic!("cluster {name}: configuration errors:\n{err}"));
            let c = &loaded.config;
            assert_eq!(c.cluster_name, name);
            assert_eq!(c.shared.clusters.len(), 3);
            assert_eq!(c.shared.clusters[0], name);
            let warnings: Vec<String> = loaded
                .warnings
                .iter()
                .filter(|w| !w.not_applied)
                .map(ToString::to_string)
                .collect();
            assert!(warnings.is_empty(), "cluster {name}: {warnings:#?}");
            assert_eq!(
                basalt_config::mc_key_path(c),
                Some(e.join(MC_KEY_FILE)),
                "cluster {name}"
            );
            assert_eq!(c.lsf_conf.mc_poll_ms(), MC_POLL_MS);
        }
    }

    /// Members without BASALT_MC_KEY hold the shared key as their cluster key.
    #[test]
    fn members_without_an_mc_key_share_their_cluster_key() {
        let members = [
            McMember::new("west", 1).no_mc_key(),
            McMember::new("east", 1).no_mc_key(),
            McMember::new("north", 1),
        ];
        let dirs: Vec<TestDir> = ["west", "east", "north"]
            .iter()
            .map(|n| must(TestDir::new(&format!("mc-config-nokey-{n}"))))
            .collect();
        let tops: Vec<&Path> = dirs.iter().map(TestDir::path).collect();
        let envdirs = must(write_multicluster_at(
            &members,
            &[addrs(206, 1), addrs(207, 1), addrs(208, 1)],
            &tops,
        ));
        let cluster_key = |i: usize| read(&envdirs[i].join("basalt.key"));
        assert_eq!(cluster_key(0), cluster_key(1));
        assert_eq!(cluster_key(0), read(&envdirs[2].join(MC_KEY_FILE)));
        assert_ne!(cluster_key(0), cluster_key(2));
        for (i, e) in envdirs.iter().enumerate() {
            let loaded = basalt_config::load(e).unwrap_or_else(|err| panic!("{err}"));
            let key = basalt_config::mc_key_path(&loaded.config);
            if i < 2 {
                assert_eq!(key, None, "member {i}");
                assert!(!e.join(MC_KEY_FILE).exists());
                let md = must(std::fs::metadata(e.join("basalt.key")));
                assert_eq!(md.permissions().mode() & 0o777, 0o600);
            } else {
                assert_eq!(key, Some(e.join(MC_KEY_FILE)));
            }
        }
    }

    #[test]
    fn a_set_needs_two_distinct_clusters() {
        let d = must(TestDir::new("mc-config-bad"));
        let one = [McMember::new("west", 1)];
        assert!(write_multicluster_at(&one, &[addrs(204, 1)], &[d.path()]).is_err());
        let twice = [McMember::new("west", 1), McMember::new("west", 1)];
        assert!(
            write_multicluster_at(
                &twice,
                &[addrs(204, 1), addrs(205, 1)],
                &[d.path(), d.path()]
            )
            .is_err()
        );
    }
}
