//! What a test cluster looks like ([`ClusterSpec`]) and writing its configuration
//! (the embedded defaults, test timings, ELIMs, an owner) under a test directory.

use crate::subnet::Subnet;
use anyhow::{Context, Result, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost, ExtraResource, MultiCluster};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// What cluster to build.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    /// The cluster name (default `basalt`): `lsf.cluster.<cluster>`,
    /// `lsbatch/<cluster>/configdir`.
    pub cluster: String,
    pub hosts: usize,
    pub exinterval_secs: f64,
    pub master_inactivity_limit: u32,
    /// `RETRY_LIMIT` (default 2, the embedded file's): the extra intervals of master
    /// silence each rank step past the first waits before taking over itself.
    pub retry_limit: u32,
    pub probe_timeout_secs: f64,
    pub sample_interval_secs: f64,
    pub extra_resources: Vec<ExtraResource>,
    /// ELIM executables to put in LSF_SERVERDIR: (file name, script text).
    pub elims: Vec<(String, String)>,
    /// Write `LSF_ROOT_REX=all` when the tests run as root (default: yes, since the
    /// tests submit as whoever runs them).
    pub root_rex: bool,
    /// Run the daemons (and [`ProcessCluster::command`]) as this (uid, gid) instead of
    /// the test's user: a personal cluster of that user, who is also its administrator
    /// and owns every file. Needs root.
    pub daemon_user: Option<(u32, u32)>,
    /// Lines appended to lsf.conf.
    pub lsf_conf_extra: String,
    /// ResourceMap rows of lsf.cluster: (RESOURCENAME, LOCATION).
    pub resource_map: Vec<(String, String)>,
    /// Environment variables of every daemon and command of a [`ProcessCluster`] (a
    /// library preloaded into them, say).
    pub env: Vec<(String, String)>,
    /// Hollow hosts (`basalt-hollow`: their real LIM and sbatchd in shared processes,
    /// with a simulated load) after the `hosts` real ones, named [`hollow_name`]; the
    /// real hosts are then the master candidates (LSF_MASTER_LIST).
    pub hollow: usize,
    /// How many `basalt-hollow` processes share them (default
    /// [`crate::HOLLOW_PROCESSES`]).
    pub hollow_processes: usize,
}

impl ClusterSpec {
    /// `n` hosts with test timings: heartbeats every 200 ms, samples every 250 ms.
    pub fn new(n: usize) -> ClusterSpec {
        ClusterSpec {
            cluster: "basalt".to_owned(),
            hosts: n,
            exinterval_secs: 0.2,
            master_inactivity_limit: 3,
            retry_limit: 2,
            probe_timeout_secs: 1.0,
            sample_interval_secs: 0.25,
            extra_resources: Vec::new(),
            elims: Vec::new(),
            root_rex: true,
            daemon_user: None,
            lsf_conf_extra: String::new(),
            resource_map: Vec::new(),
            env: Vec::new(),
            hollow: 0,
            hollow_processes: crate::process::HOLLOW_PROCESSES,
        }
    }

    /// Add `n` hollow hosts ([`ClusterSpec::hollow`]).
    pub fn with_hollow(mut self, n: usize) -> ClusterSpec {
        self.hollow = n;
        self
    }

    /// Add a static Numeric shared resource (a licence count): lsf.shared defines it
    /// without an INTERVAL, and a ResourceMap row places it (`location` such as
    /// `(2@[all])`).
    pub fn shared_resource(mut self, name: &str, location: &str) -> ClusterSpec {
        self.extra_resources.push(ExtraResource {
            name: name.to_owned(),
            kind: "Numeric".to_owned(),
            interval: None,
            increasing: None,
            description: format!("shared {name}"),
        });
        self.resource_map
            .push((name.to_owned(), location.to_owned()));
        self
    }

    /// Add a Numeric resource to lsf.shared (for ELIM indices).
    pub fn numeric_resource(mut self, name: &str, increasing: bool) -> ClusterSpec {
        self.extra_resources.push(ExtraResource {
            name: name.to_owned(),
            kind: "Numeric".to_owned(),
            interval: Some(1),
            increasing: Some(increasing),
            description: format!("test index {name}"),
        });
        self
    }

    /// Name the cluster `name` (instead of `basalt`).
    pub fn named(mut self, name: &str) -> ClusterSpec {
        self.cluster = name.to_owned();
        self
    }

    /// Install an ELIM script (made executable) in LSF_SERVERDIR.
    pub fn elim(mut self, file: &str, script: &str) -> ClusterSpec {
        self.elims.push((file.to_owned(), script.to_owned()));
        self
    }
}

/// Host names of a test cluster: hostA, hostB, ...
pub fn host_name(i: usize) -> String {
    format!("host{}", (b'A' + (i % 26) as u8) as char)
}

/// Name of hollow host `i` (from 0): hv00001, hv00002, ...
pub fn hollow_name(i: usize) -> String {
    format!("hv{:05}", i + 1)
}

/// Write the configuration of `spec` on `subnet` under `top`; returns LSF_ENVDIR.
pub fn write_config(spec: &ClusterSpec, subnet: Subnet, top: &Path) -> Result<PathBuf> {
    let addrs: Vec<IpAddr> = (0..spec.hosts).map(|i| subnet.host(i)).collect();
    write_config_at(spec, &addrs, top)
}

/// Write the configuration of `spec` with host `i` at `addrs[i]` under `top`;
/// returns LSF_ENVDIR.
pub fn write_config_at(spec: &ClusterSpec, addrs: &[IpAddr], top: &Path) -> Result<PathBuf> {
    write_config_mc(spec, addrs, top, None)
}

/// The MultiCluster part of a member's configuration ([`write_config_mc`]).
#[derive(Debug, Clone)]
pub(crate) struct McWrite {
    /// The Cluster section and the RemoteClusters ([`MultiCluster::key`] is the name
    /// the key file is written under, in LSF_ENVDIR; empty: the key text is the cluster
    /// key, `basalt.key`).
    pub mc: MultiCluster,
    /// The key file's text.
    pub key_text: String,
}

/// The DefaultCluster `spec` renders with host `i` at `addrs[i]`.
pub(crate) fn default_cluster(spec: &ClusterSpec, addrs: &[IpAddr]) -> DefaultCluster {
    let hosts = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| DefaultHost {
            name: if i < spec.hosts {
                host_name(i)
            } else {
                hollow_name(i - spec.hosts)
            },
            address: Some(*a),
            server: true,
        })
        .collect();
    DefaultCluster::new(&spec.cluster, "", hosts)
}

/// `lsbatch/<cluster>/configdir` of the test cluster in `top`.
pub(crate) fn batch_dir(top: &Path, cluster: &str) -> PathBuf {
    top.join("conf/lsbatch").join(cluster).join("configdir")
}

/// Append `text` to the file `path`.
pub(crate) fn append_file(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("appending to {}", path.display()))
}

/// Append `lsb_params` lines to lsb.params of cluster `cluster` in `top` (before
/// `End Parameters`).
pub(crate) fn add_lsb_params(top: &Path, cluster: &str, lsb_params: &str) -> Result<()> {
    if lsb_params.is_empty() {
        return Ok(());
    }
    let params = batch_dir(top, cluster).join("lsb.params");
    let text = std::fs::read_to_string(&params)?;
    let text = text.replace(
        "End Parameters",
        &format!("{}\nEnd Parameters", lsb_params.trim_end()),
    );
    std::fs::write(&params, text)?;
    Ok(())
}

/// Write a key file (mode 0600) with `text`, replacing one that is there.
pub(crate) fn write_key_file(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing the key {}", path.display()))
}

/// [`write_config_at`], with the MultiCluster part `mc` when given (written before the
/// files are handed to [`ClusterSpec::daemon_user`]).
pub(crate) fn write_config_mc(
    spec: &ClusterSpec,
    addrs: &[IpAddr],
    top: &Path,
    mc: Option<&McWrite>,
) -> Result<PathBuf> {
    if addrs.len() != spec.hosts + spec.hollow {
        bail!(
            "{} addresses for {} hosts and {} hollow hosts",
            addrs.len(),
            spec.hosts,
            spec.hollow
        );
    }
    let owner = spec
        .daemon_user
        .map_or_else(nix::unistd::getuid, |(u, _)| nix::unistd::Uid::from_raw(u));
    let user = nix::unistd::User::from_uid(owner)
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| "root".into());
    let mut dc = default_cluster(spec, addrs);
    dc.admin = user;
    dc.multicluster = mc.map(|m| m.mc.clone());
    // Tests run as root in CI and submit as root.
    dc.root_rex = nix::unistd::geteuid().is_root() && spec.root_rex;
    dc.exinterval_secs = spec.exinterval_secs;
    dc.master_inactivity_limit = spec.master_inactivity_limit;
    dc.probe_timeout_secs = spec.probe_timeout_secs;
    dc.sample_interval_secs = spec.sample_interval_secs;
    dc.extra_resources = spec.extra_resources.clone();
    let envdir = dc.write(top)?;
    link_commands(&top.join("bin"));
    if let Some(m) = mc {
        // No BASALT_MC_KEY: the key text is the cluster key (replacing the one written).
        let file = if m.mc.key.is_empty() {
            "basalt.key"
        } else {
            m.mc.key.as_str()
        };
        write_key_file(&envdir.join(file), &m.key_text)?;
    }
    if spec.hollow > 0 {
        // Only the real hosts may become master.
        let real: Vec<String> = (0..spec.hosts).map(host_name).collect();
        append_file(
            &envdir.join("lsf.conf"),
            &format!("LSF_MASTER_LIST=\"{}\"\n", real.join(" ")),
        )?;
    }
    if !spec.lsf_conf_extra.is_empty() {
        append_file(&envdir.join("lsf.conf"), &spec.lsf_conf_extra)?;
    }
    if spec.retry_limit != 2 {
        // The embedded file says `RETRY_LIMIT = 2`: put the spec's value in its place.
        let path = envdir.join(format!("lsf.cluster.{}", spec.cluster));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if !text.contains("\nRETRY_LIMIT = 2\n") {
            bail!(
                "{} has no `RETRY_LIMIT = 2` line to replace",
                path.display()
            );
        }
        let text = text.replacen(
            "\nRETRY_LIMIT = 2\n",
            &format!("\nRETRY_LIMIT = {}\n", spec.retry_limit),
            1,
        );
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if !spec.resource_map.is_empty() {
        let mut text = String::from("\nBegin ResourceMap\nRESOURCENAME  LOCATION\n");
        for (name, location) in &spec.resource_map {
            text.push_str(&format!("{name}  {location}\n"));
        }
        text.push_str("End ResourceMap\n");
        append_file(&envdir.join(format!("lsf.cluster.{}", spec.cluster)), &text)?;
    }
    for (file, script) in &spec.elims {
        use std::os::unix::fs::PermissionsExt;
        let path = top.join("serverdir").join(file);
        std::fs::write(&path, script)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    if let Some((uid, gid)) = spec.daemon_user {
        // The cluster's files belong to its owner; everyone may read the configuration
        // (the key stays 0600).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(top, std::fs::Permissions::from_mode(0o755))?;
        chown_tree(top, uid, gid)?;
    }
    Ok(envdir)
}

fn chown_tree(path: &Path, uid: u32, gid: u32) -> Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .with_context(|| format!("chown {}", path.display()))?;
    if std::fs::symlink_metadata(path)?.is_dir() {
        for e in std::fs::read_dir(path)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// LSF_BINDIR of a test cluster: links to the build's programs (jobs call the commands
/// from there, as `bsub -f` calls lsrcp). Nothing when the binaries are not built.
fn link_commands(bin: &Path) {
    let Ok(built) = crate::process::bin_dir() else {
        return;
    };
    let _ = std::fs::create_dir_all(bin);
    let Ok(entries) = std::fs::read_dir(&built) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if basalt_config::is_executable(&path) && path.extension().is_none() {
            let _ = std::os::unix::fs::symlink(&path, bin.join(e.file_name()));
        }
    }
}
