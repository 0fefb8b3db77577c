//! The embedded default configuration: a complete LSF configuration set for a
//! cluster of N hosts, rendered from the templates in `config/default/`.
//!
//! `cargo xtask up` writes it for a personal cluster and the test harness
//! writes it for every test cluster, so both run on exactly the same files.
//!
//! Layout under `top` (everything is written inside it, nothing outside):
//!
//! ```text
//! top/conf/lsf.conf lsf.shared lsf.cluster.<cluster>      (LSF_ENVDIR = LSF_CONFDIR)
//! top/conf/basalt.key                                     (the cluster key, mode 0600)
//! top/conf/lsbatch/<cluster>/configdir/lsb.params lsb.queues lsb.hosts
//! top/work/<cluster>/logdir/                              (LSB_SHAREDIR)
//! top/serverdir/  top/log/  top/bin/                      (LSF_SERVERDIR, LSF_LOGDIR, LSF_BINDIR)
//! ```

use std::fmt::Write as _;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

const LSF_CONF: &str = include_str!("../../../config/default/lsf.conf.in");
const LSF_SHARED: &str = include_str!("../../../config/default/lsf.shared.in");
const LSF_CLUSTER: &str = include_str!("../../../config/default/lsf.cluster.in");
const LSB_PARAMS: &str = include_str!("../../../config/default/lsbatch/lsb.params.in");
const LSB_QUEUES: &str = include_str!("../../../config/default/lsbatch/lsb.queues.in");
const LSB_HOSTS: &str = include_str!("../../../config/default/lsbatch/lsb.hosts.in");

/// One host of the default cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultHost {
    pub name: String,
    /// Written to the Basalt `ADDRESS` column (None = resolve the name).
    pub address: Option<IpAddr>,
    pub server: bool,
}

/// An extra resource for lsf.shared (tests define ELIM indices this way).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraResource {
    pub name: String,
    /// `Numeric`, `Boolean` or `String`.
    pub kind: String,
    pub interval: Option<u32>,
    pub increasing: Option<bool>,
    pub description: String,
}

/// A cluster of a MultiCluster set as lsf.shared's Cluster section lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct McCluster {
    /// `ClusterName`.
    pub name: String,
    /// Its master candidates (`Servers`) with their addresses (Basalt's `ADDRESSES`;
    /// `None` is written `-`: resolve the name), the first tried first.
    pub servers: Vec<(String, Option<IpAddr>)>,
}

/// The MultiCluster (job forwarding) part of a cluster's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiCluster {
    /// Every cluster of the set, this one too (added from
    /// [`DefaultCluster::mc_cluster`] when missing). lsf.shared's Cluster section lists
    /// them with this cluster first (the loader takes the first `ClusterName` for its
    /// own), and lsf.cluster's RemoteClusters section names every other one with
    /// `RECV_FROM = Y`.
    pub clusters: Vec<McCluster>,
    /// lsf.conf `BASALT_MC_KEY`: the key file every cluster of the set holds identical
    /// (relative to `LSF_ENVDIR` unless absolute). Only the keyword is written: the
    /// file is the caller's to put there (mode 0600, [`write_new_key`]). Empty: not
    /// written, and each cluster uses its own cluster key (`basalt.key`), which the
    /// clusters must then hold identical.
    pub key: String,
    /// lsf.conf `BASALT_MC_POLL_MS` (None: not written, mbatchd's default).
    pub poll_ms: Option<u64>,
}

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultCluster {
    pub cluster: String,
    pub admin: String,
    pub hosts: Vec<DefaultHost>,
    pub lim_port: u16,
    pub res_port: u16,
    pub mbd_port: u16,
    pub sbd_port: u16,
    /// EXINTERVAL, seconds.
    pub exinterval_secs: f64,
    pub master_inactivity_limit: u32,
    pub probe_timeout_secs: f64,
    /// ELIM_POLL_INTERVAL (also the built-in sampling interval), seconds.
    pub sample_interval_secs: f64,
    pub extra_resources: Vec<ExtraResource>,
    /// Write `LSF_ROOT_REX=all` (root may submit and run jobs). Off by default, as in
    /// LSF; a cluster whose daemons and users are all root needs it.
    pub root_rex: bool,
    /// MultiCluster links to other clusters (None: a cluster of its own, lsf.shared
    /// lists only its name).
    pub multicluster: Option<MultiCluster>,
}

impl DefaultCluster {
    /// LSF's default ports and Basalt's default timings for `hosts`.
    pub fn new(cluster: &str, admin: &str, hosts: Vec<DefaultHost>) -> DefaultCluster {
        DefaultCluster {
            cluster: cluster.to_owned(),
            admin: admin.to_owned(),
            hosts,
            lim_port: 7869,
            res_port: 6878,
            mbd_port: 6881,
            sbd_port: 6882,
            exinterval_secs: 1.0,
            master_inactivity_limit: 2,
            probe_timeout_secs: 2.0,
            sample_interval_secs: 5.0,
            extra_resources: Vec::new(),
            root_rex: false,
            multicluster: None,
        }
    }

    /// This cluster as the other clusters of a MultiCluster set list it: its first host
    /// (the first master candidate) and that host's address.
    pub fn mc_cluster(&self) -> McCluster {
        McCluster {
            name: self.cluster.clone(),
            servers: self
                .hosts
                .first()
                .map(|h| (h.name.clone(), h.address))
                .into_iter()
                .collect(),
        }
    }

    /// The directory that will hold lsf.conf (`LSF_ENVDIR`).
    pub fn envdir(top: &Path) -> PathBuf {
        top.join("conf")
    }

    /// Render every file as (path relative to `top`, contents).
    pub fn render(&self, top: &Path) -> Vec<(PathBuf, String)> {
        let confdir = Self::envdir(top);
        let mut rows = String::new();
        for h in &self.hosts {
            let addr = h
                .address
                .map(|a| a.to_string())
                .unwrap_or_else(|| "()".to_owned());
            let _ = writeln!(
                rows,
                "{:<10} generic  linux  {}       {:<11} (cs)",
                h.name,
                if h.server { 1 } else { 0 },
                addr
            );
        }
        let mut extra = String::new();
        for r in &self.extra_resources {
            let _ = writeln!(
                extra,
                "{:<13} {:<8} {:<9} {:<11} ({})",
                r.name,
                r.kind,
                r.interval
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "()".into()),
                match r.increasing {
                    Some(true) => "Y",
                    Some(false) => "N",
                    None => "()",
                },
                r.description
            );
        }
        let root_rex = if self.root_rex {
            "LSF_ROOT_REX=all"
        } else {
            "# LSF_ROOT_REX=all"
        };
        let subst = |t: &str| {
            t.replace("@CONFDIR@", &confdir.display().to_string())
                .replace("@ROOT_REX@", root_rex)
                .replace("@TOP@", &top.display().to_string())
                .replace("@CLUSTER@", &self.cluster)
                .replace("@ADMIN@", &self.admin)
                .replace("@LIM_PORT@", &self.lim_port.to_string())
                .replace("@RES_PORT@", &self.res_port.to_string())
                .replace("@MBD_PORT@", &self.mbd_port.to_string())
                .replace("@SBD_PORT@", &self.sbd_port.to_string())
                .replace("@EXINTERVAL@", &self.exinterval_secs.to_string())
                .replace(
                    "@MASTER_INACTIVITY_LIMIT@",
                    &self.master_inactivity_limit.to_string(),
                )
                .replace("@PROBE_TIMEOUT@", &self.probe_timeout_secs.to_string())
                .replace("@SAMPLE_INTERVAL@", &self.sample_interval_secs.to_string())
                .replace("@HOST_ROWS@", &rows)
                .replace("@EXTRA_RESOURCES@", &extra)
        };
        let batch = PathBuf::from("conf/lsbatch")
            .join(&self.cluster)
            .join("configdir");
        let (mut lsf_conf, mut lsf_shared, mut lsf_cluster) =
            (subst(LSF_CONF), subst(LSF_SHARED), subst(LSF_CLUSTER));
        if let Some(mc) = &self.multicluster {
            self.render_multicluster(mc, &mut lsf_conf, &mut lsf_shared, &mut lsf_cluster);
        }
        vec![
            (PathBuf::from("conf/lsf.conf"), lsf_conf),
            (PathBuf::from("conf/lsf.shared"), lsf_shared),
            (
                PathBuf::from(format!("conf/lsf.cluster.{}", self.cluster)),
                lsf_cluster,
            ),
            (batch.join("lsb.params"), subst(LSB_PARAMS)),
            (batch.join("lsb.queues"), subst(LSB_QUEUES)),
            (batch.join("lsb.hosts"), subst(LSB_HOSTS)),
        ]
    }

    /// The MultiCluster additions: the full Cluster section of lsf.shared (this cluster
    /// first), a RemoteClusters section in lsf.cluster, the keywords in lsf.conf.
    fn render_multicluster(
        &self,
        mc: &MultiCluster,
        lsf_conf: &mut String,
        lsf_shared: &mut String,
        lsf_cluster: &mut String,
    ) {
        let mut clusters: Vec<McCluster> = mc
            .clusters
            .iter()
            .filter(|c| c.name == self.cluster)
            .cloned()
            .collect();
        if clusters.is_empty() {
            clusters.push(self.mc_cluster());
        }
        clusters.truncate(1);
        clusters.extend(
            mc.clusters
                .iter()
                .filter(|c| c.name != self.cluster)
                .cloned(),
        );
        let list = |words: Vec<String>| {
            if words.is_empty() {
                "-".to_owned()
            } else {
                format!("({})", words.join(" "))
            }
        };
        let mut section = String::from("ClusterName  Servers          ADDRESSES\n");
        for c in &clusters {
            let servers = list(c.servers.iter().map(|(h, _)| h.clone()).collect());
            let addrs = list(
                c.servers
                    .iter()
                    .map(|(_, a)| a.map_or_else(|| "-".to_owned(), |a| a.to_string()))
                    .collect(),
            );
            let _ = writeln!(section, "{:<12} {servers:<16} {addrs}", c.name);
        }
        // Replace the rows of the template's Cluster section.
        let begin = "Begin Cluster\n";
        if let (Some(b), Some(e)) = (lsf_shared.find(begin), lsf_shared.find("End Cluster")) {
            lsf_shared.replace_range(b + begin.len()..e, &section);
        }
        let mut remote = String::from(
            "\n# MultiCluster: the clusters this one forwards jobs to and takes jobs from.\n\
             Begin RemoteClusters\nCLUSTERNAME  RECV_FROM\n",
        );
        for c in &clusters[1..] {
            let _ = writeln!(remote, "{:<12} Y", c.name);
        }
        remote.push_str("End RemoteClusters\n");
        lsf_cluster.push_str(&remote);
        if !mc.key.is_empty() {
            let _ = write!(
                lsf_conf,
                "# MultiCluster: the key every cluster of the set holds identical (mode 0600).\n\
                 BASALT_MC_KEY={}\n",
                mc.key
            );
        }
        if let Some(ms) = mc.poll_ms {
            let _ = writeln!(lsf_conf, "BASALT_MC_POLL_MS={ms}");
        }
    }

    /// Write the configuration and create the working directories under `top`.
    /// Returns `LSF_ENVDIR`.
    pub fn write(&self, top: &Path) -> io::Result<PathBuf> {
        for (rel, text) in self.render(top) {
            let path = top.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text)?;
        }
        for d in [
            PathBuf::from("work").join(&self.cluster).join("logdir"),
            PathBuf::from("serverdir"),
            PathBuf::from("log"),
            PathBuf::from("bin"),
        ] {
            std::fs::create_dir_all(top.join(d))?;
        }
        let key = Self::envdir(top).join("basalt.key");
        if !key.exists() {
            write_new_key(&key)?;
        }
        Ok(Self::envdir(top))
    }
}

/// Create a cluster key file (32 random bytes in hex, mode 0600), as
/// `basalt-auth` reads it. An existing key is never overwritten.
pub fn write_new_key(path: &Path) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| io::Error::other(e.to_string()))?;
    let mut line = String::with_capacity(80);
    for x in b {
        let _ = write!(line, "{x:02x}");
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(
        format!("# Basalt cluster key: keep it secret (docs/security.md)\n{line}\n").as_bytes(),
    )?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, addr: &str) -> DefaultHost {
        DefaultHost {
            name: name.to_owned(),
            address: addr.parse().ok(),
            server: true,
        }
    }

    #[test]
    fn a_cluster_of_its_own_lists_only_its_name() {
        let dc = DefaultCluster::new("solo", "admin", vec![host("hostA", "127.0.0.1")]);
        let files = dc.render(Path::new("/top"));
        let shared = &files[1].1;
        assert!(shared.contains("Begin Cluster\nClusterName\nsolo\nEnd Cluster\n"));
        assert!(!files[2].1.contains("RemoteClusters"));
        assert!(!files[0].1.contains("BASALT_MC"));
    }

    #[test]
    fn multicluster_sections_list_this_cluster_first() {
        let mut east = DefaultCluster::new(
            "east",
            "admin",
            vec![host("hostA", "127.0.20.1"), host("hostB", "127.0.20.2")],
        );
        let west = DefaultCluster::new("west", "admin", vec![host("hostA", "127.0.10.1")]);
        east.multicluster = Some(MultiCluster {
            clusters: vec![west.mc_cluster(), east.mc_cluster()],
            key: "mc.key".to_owned(),
            poll_ms: Some(200),
        });
        let files = east.render(Path::new("/top"));
        let shared = &files[1].1;
        let section: Vec<Vec<&str>> = shared
            .split("Begin Cluster\n")
            .nth(1)
            .and_then(|s| s.split("End Cluster").next())
            .unwrap_or_default()
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            section,
            vec![
                vec!["ClusterName", "Servers", "ADDRESSES"],
                vec!["east", "(hostA)", "(127.0.20.1)"],
                vec!["west", "(hostA)", "(127.0.10.1)"],
            ]
        );
        assert_eq!(files[2].0, PathBuf::from("conf/lsf.cluster.east"));
        assert!(
            files[2].1.ends_with(
                "Begin RemoteClusters\nCLUSTERNAME  RECV_FROM\nwest         Y\nEnd RemoteClusters\n"
            ),
            "{}",
            files[2].1
        );
        assert!(
            files[0]
                .1
                .contains("\nBASALT_MC_KEY=mc.key\nBASALT_MC_POLL_MS=200\n")
        );

        // It loads as cluster east.
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let envdir = east.write(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let loaded = crate::load(&envdir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.config.cluster_name, "east");
        assert_eq!(loaded.config.shared.clusters, vec!["east", "west"]);
    }
}
