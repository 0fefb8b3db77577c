//! Basalt's reader for LSF's own configuration files: the parser, the typed
//! model and the validation of `lsf.conf`, `lsf.shared`,
//! `lsf.cluster.<cluster>` and the batch files `lsb.params`, `lsb.queues`,
//! `lsb.hosts`, `lsb.users`, `lsb.resources` and `lsb.applications`.
//!
//! Owns: the file formats (sections, rows, continuation lines, comments), the
//! location rules (`LSF_ENVDIR` → `LSF_CONFDIR` → `LSB_CONFDIR/<cluster>/configdir`,
//! with OpenLava's flat `LSB_CONFDIR` layout as a fallback), LSF time windows
//! ([`timewindow`]) and the embedded default configuration ([`embedded`]).
//!
//! Inputs: a directory holding `lsf.conf` (`LSF_ENVDIR`) and the files it
//! points at; nothing else (no environment variables, no network).
//! Outputs: a [`Config`] plus [`Warning`]s (unknown keywords, ignored
//! sections, keywords read but not applied yet: [`not_applied`], names the files
//! give each other that mean nothing: `batch::names`), or every error found in
//! every file at once as [`ConfigErrors`], with the warnings of the same load;
//! each names `file:line`. A queue's USERS are judged against the system's users
//! only by [`load_with_users`] (the caller asks the user database).

pub mod batch;
pub mod cluster;
pub mod compound;
pub mod cond;
pub mod embedded;
pub mod error;
mod lexer;
pub mod lsf_conf;
pub mod not_applied;
pub mod resource_map;
pub mod resreq;
pub mod select;
pub mod shared;
pub mod snapshot;
pub mod timewindow;

use std::path::{Component, Path, PathBuf};

pub use batch::{
    Application, Batch, BatchHost, BatchParams, BatchUser, Group, Limit, McScheduleEnhance, Mxj,
    Queue, Threshold,
};
pub use cluster::{ClusterFile, ClusterHost, LimParams, RemoteCluster};
pub use error::{ConfigError, ConfigErrors, Warning};
pub use lsf_conf::LsfConf;
pub use shared::{HostModel, ResourceDef, ResourceKind, Shared, SharedCluster};
pub use timewindow::{TimeWindow, TimeWindowError};

use error::Diag;

/// A loaded configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `LSF_ENVDIR`: where lsf.conf is.
    pub envdir: PathBuf,
    pub lsf_conf: LsfConf,
    /// `LSF_CONFDIR` (default: `envdir`).
    pub confdir: PathBuf,
    /// The first ClusterName in lsf.shared.
    pub cluster_name: String,
    pub shared: Shared,
    pub cluster: ClusterFile,
    /// The lsb.* files (empty after [`load_lim`]).
    pub batch: Batch,
    /// What the daemons derive from this configuration, computed once per loaded
    /// configuration and shared ([`Config::derived`]).
    pub derived: Derived,
}

/// Values derived from a configuration (e.g. the cluster's host address table), each
/// computed once and shared by everything that holds the same `Config` — in a process
/// that runs many hosts (the hollow hosts of the scale harness) one copy, not one per
/// daemon. A clone starts empty, since a clone may be changed; a configuration changed
/// in place after a value was derived keeps the stale value (load a new one instead).
#[derive(Default)]
pub struct Derived(
    std::sync::Mutex<
        std::collections::HashMap<
            std::any::TypeId,
            std::sync::Arc<dyn std::any::Any + Send + Sync>,
        >,
    >,
);

impl Clone for Derived {
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

impl Config {
    /// The value of type `T` derived from this configuration by `make`, computed at
    /// the first call and shared after (see [`Derived`]).
    pub fn derived<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce(&Config) -> T,
    ) -> std::sync::Arc<T> {
        let key = std::any::TypeId::of::<T>();
        let found = {
            let map = self.derived.0.lock().unwrap_or_else(|p| p.into_inner());
            map.get(&key).cloned()
        };
        if let Some(v) = found.and_then(|v| v.downcast::<T>().ok()) {
            return v;
        }
        // Computed outside the lock (it may derive other values); two first callers
        // may both compute, and the first stored is kept.
        let v = std::sync::Arc::new(make(self));
        let mut map = self.derived.0.lock().unwrap_or_else(|p| p.into_inner());
        let stored = map.entry(key).or_insert_with(|| v.clone()).clone();
        stored.downcast::<T>().unwrap_or(v)
    }

    /// The host type of `host` as LIM reports it: the cluster file's TYPE, else the
    /// first type lsf.shared defines, else `LINUX`.
    pub fn host_type_of(&self, host: &str) -> String {
        self.type_of(self.cluster_host(host))
    }

    /// [`Config::host_type_of`] for a host row already found (`None`: not in the
    /// cluster file) — no scan of the hosts, which at 10,000 hosts made a loop over
    /// them quadratic.
    pub fn type_of(&self, host: Option<&cluster::ClusterHost>) -> String {
        host.and_then(|h| h.host_type.clone())
            .or_else(|| self.shared.host_types.first().cloned())
            .unwrap_or_else(|| "LINUX".to_owned())
    }

    /// The host model of `host` as LIM reports it when it runs on architecture `arch`
    /// (`std::env::consts::ARCH`): the cluster file's MODEL, else the lsf.shared model
    /// whose ARCHITECTURE names `arch`, else `UNKNOWN_AUTO_DETECT`.
    pub fn host_model_of(&self, host: &str, arch: &str) -> String {
        self.model_of(self.cluster_host(host), arch)
    }

    /// [`Config::host_model_of`] for a host row already found (`None`: not in the
    /// cluster file).
    pub fn model_of(&self, host: Option<&cluster::ClusterHost>, arch: &str) -> String {
        host.and_then(|h| h.model.clone())
            .or_else(|| {
                self.shared
                    .host_models
                    .iter()
                    .find(|m| {
                        m.architecture.as_deref().is_some_and(|a| {
                            a.split_whitespace().any(|a| a.eq_ignore_ascii_case(arch))
                        })
                    })
                    .map(|m| m.name.clone())
            })
            .unwrap_or_else(|| "UNKNOWN_AUTO_DETECT".to_owned())
    }

    /// The cluster file's row of `host` (by [`basalt_core::same_host`]), if any.
    fn cluster_host(&self, host: &str) -> Option<&cluster::ClusterHost> {
        self.cluster
            .hosts
            .iter()
            .find(|h| basalt_core::same_host(&h.name, host))
    }

    /// An absolute path stays as it is; a relative one is joined to `envdir`.
    pub fn resolve_path(&self, p: &str) -> PathBuf {
        resolve(&self.envdir, p)
    }

    /// `LSF_SERVERDIR` (default `envdir/serverdir`): where eauth, egroup and ELIMs live.
    pub fn serverdir(&self) -> PathBuf {
        self.lsf_conf
            .get("LSF_SERVERDIR")
            .filter(|v| !v.trim().is_empty())
            .map(|d| self.resolve_path(d.trim()))
            .unwrap_or_else(|| self.envdir.join("serverdir"))
    }

    /// `LSB_CONFDIR` (default `LSF_CONFDIR/lsbatch`).
    pub fn lsb_confdir(&self) -> PathBuf {
        lsb_confdir(&self.envdir, &self.lsf_conf, &self.confdir)
    }

    /// Where the lsb.* files are: `LSB_CONFDIR/<cluster>/configdir`, or
    /// `LSB_CONFDIR` itself for OpenLava's flat layout (that directory does
    /// not exist but `LSB_CONFDIR/lsb.params` does).
    pub fn batch_confdir(&self) -> PathBuf {
        batch_dir(&self.lsb_confdir(), &self.cluster_name)
    }

    /// `LSB_SHAREDIR`; when unset, `work` next to `LSF_ENVDIR` (the layout
    /// of the embedded configuration).
    pub fn sharedir(&self) -> PathBuf {
        match self.lsf_conf.get("LSB_SHAREDIR").filter(|v| !v.is_empty()) {
            Some(d) => self.resolve_path(d),
            None => self
                .envdir
                .parent()
                .map_or_else(|| self.envdir.join("work"), |p| p.join("work")),
        }
    }

    /// `LSB_SHAREDIR/<cluster>/logdir`: lsb.events and lsb.acct.
    pub fn logdir(&self) -> PathBuf {
        self.sharedir().join(&self.cluster_name).join("logdir")
    }

    /// `LSB_LOCALDIR`: a directory on the master's local disk holding a second copy of
    /// lsb.events and lsb.acct (LSF's duplicate event logging); `None` when unset.
    pub fn local_logdir(&self) -> Option<PathBuf> {
        self.lsf_conf
            .get("LSB_LOCALDIR")
            .filter(|v| !v.trim().is_empty())
            .map(|d| self.resolve_path(d.trim()))
    }
}

/// Where the MultiCluster key is: lsf.conf `BASALT_MC_KEY`, relative to `LSF_ENVDIR`
/// unless absolute (like `BASALT_CLUSTER_KEY`); `None` when unset.
pub fn mc_key_path(config: &Config) -> Option<PathBuf> {
    config.lsf_conf.mc_key().map(|p| config.resolve_path(&p))
}

/// A configuration that loaded without errors, and what was ignored on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Warning>,
    /// Every file read, with its text: what [`snapshot::Snapshot::of`] keeps.
    pub sources: Vec<(PathBuf, String)>,
}

/// Is `p` a regular file someone may execute? (The programs of `LSF_SERVERDIR` a daemon
/// or command runs when they are there: eexec, esub.) One `stat`.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Load lsf.conf, lsf.shared, lsf.cluster.<cluster> and every lsb.* file. A queue's
/// USERS are not judged (no user database is asked): see [`load_with_users`].
pub fn load(envdir: &Path) -> Result<Loaded, ConfigErrors> {
    load_impl(envdir, true, None, None)
}

/// [`load`], judging the names of a queue's USERS too: `user_known` tells whether a name
/// is a user of the system (mbatchd and `badmin ckconfig` ask the password database). A
/// name that is no user, no user group of lsb.users and not `all` is a warning and is
/// dropped; a queue left with no valid user is ignored with a warning, as LSF does.
pub fn load_with_users(
    envdir: &Path,
    user_known: &dyn Fn(&str) -> bool,
) -> Result<Loaded, ConfigErrors> {
    load_impl(envdir, true, None, Some(user_known))
}

/// Load only what LIM and the `ls*` commands need: lsf.conf, lsf.shared and
/// lsf.cluster.<cluster>. `batch` is left at its default.
pub fn load_lim(envdir: &Path) -> Result<Loaded, ConfigErrors> {
    load_impl(envdir, false, None, None)
}

/// Join `p` to `base` unless it is absolute; `.` components are dropped.
fn resolve(base: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

fn lsb_confdir(envdir: &Path, conf: &LsfConf, confdir: &Path) -> PathBuf {
    match conf.get("LSB_CONFDIR").filter(|v| !v.is_empty()) {
        Some(d) => resolve(envdir, d),
        None => confdir.join("lsbatch"),
    }
}

fn batch_dir(lsb_confdir: &Path, cluster: &str) -> PathBuf {
    batch_dir_in(lsb_confdir, cluster, None)
}

/// [`batch_dir`], looking into a snapshot instead of the disk when one is given.
fn batch_dir_in(lsb_confdir: &Path, cluster: &str, snap: Option<&snapshot::Snapshot>) -> PathBuf {
    let ibm = lsb_confdir.join(cluster).join("configdir");
    let (ibm_exists, flat_params) = match snap {
        Some(s) => (
            s.files.keys().any(|p| p.starts_with(&ibm)),
            s.files.contains_key(&lsb_confdir.join("lsb.params")),
        ),
        None => (ibm.is_dir(), lsb_confdir.join("lsb.params").is_file()),
    };
    if !ibm_exists && flat_params {
        lsb_confdir.to_path_buf()
    } else {
        ibm
    }
}

/// Read a file. A missing optional file is `None` without a message; any
/// other failure is reported.
pub(crate) fn read_file(diag: &mut Diag, path: &Path, required: bool) -> Option<String> {
    let read = match &diag.source {
        Some(s) => s.files.get(path).cloned().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not in the configuration snapshot",
            )
        }),
        None => std::fs::read_to_string(path),
    };
    match read {
        Ok(t) => {
            diag.read.push((path.to_path_buf(), t.clone()));
            Some(t)
        }
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            diag.file(path).err(0, format!("cannot read: {e}"));
            None
        }
    }
}

pub(crate) fn load_impl(
    envdir: &Path,
    with_batch: bool,
    source: Option<std::sync::Arc<snapshot::Snapshot>>,
    user_known: Option<&dyn Fn(&str) -> bool>,
) -> Result<Loaded, ConfigErrors> {
    let mut diag = Diag {
        source,
        ..Diag::default()
    };
    // The warnings go with the errors: one load (one `badmin ckconfig`) reports all.
    let fail = |diag: Diag| Err(ConfigErrors(diag.errors, diag.warnings));

    let conf_path = envdir.join("lsf.conf");
    let Some(text) = read_file(&mut diag, &conf_path, true) else {
        return fail(diag);
    };
    let lsf_conf = lsf_conf::parse(&mut diag.file(&conf_path), &text);
    let confdir = match lsf_conf.get("LSF_CONFDIR").filter(|v| !v.is_empty()) {
        Some(d) => resolve(envdir, d),
        None => envdir.to_path_buf(),
    };

    let shared_path = confdir.join("lsf.shared");
    let Some(text) = read_file(&mut diag, &shared_path, true) else {
        return fail(diag);
    };
    let shared = shared::parse(&mut diag.file(&shared_path), &text);
    let Some(cluster_name) = shared.clusters.first().cloned() else {
        return fail(diag);
    };

    let cluster_path = confdir.join(format!("lsf.cluster.{cluster_name}"));
    let cluster = match read_file(&mut diag, &cluster_path, true) {
        Some(text) => cluster::parse(&mut diag.file(&cluster_path), &text, &cluster_name, &shared),
        None => ClusterFile {
            name: cluster_name.clone(),
            ..ClusterFile::default()
        },
    };

    let batch = if with_batch {
        let dir = batch_dir_in(
            &lsb_confdir(envdir, &lsf_conf, &confdir),
            &cluster_name,
            diag.source.as_deref(),
        );
        batch::load(&mut diag, &dir, &shared, &cluster, user_known)
    } else {
        Batch::default()
    };

    if !diag.errors.is_empty() {
        return fail(diag);
    }
    Ok(Loaded {
        config: Config {
            envdir: envdir.to_path_buf(),
            lsf_conf,
            confdir,
            cluster_name,
            shared,
            cluster,
            batch,
            derived: Derived::default(),
        },
        warnings: diag.warnings,
        sources: diag.read,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::{DefaultCluster, DefaultHost};

    /// Issue 51: a value derived from a configuration is computed once and shared by
    /// every holder of it; a clone (which may be changed) computes its own.
    #[test]
    fn a_derived_value_is_computed_once_and_a_clone_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        DefaultCluster::new("basalt", "me", default_hosts(1))
            .write(dir.path())
            .unwrap();
        let config = load(&DefaultCluster::envdir(dir.path())).unwrap().config;
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let make = |c: &Config| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            c.cluster.hosts.len()
        };
        let a = config.derived(make);
        let b = config.derived(make);
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        let mut other = config.clone();
        other.cluster.hosts.clear();
        assert_eq!(*other.derived(make), 0);
        assert_eq!(*config.derived(make), 1);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    /// Server hosts host1 .. host`n` on 127.0.0.1 .. 127.0.0.`n`.
    fn default_hosts(n: u8) -> Vec<DefaultHost> {
        (1..=n)
            .map(|i| DefaultHost {
                name: format!("host{i}"),
                address: Some(std::net::IpAddr::from([127, 0, 0, i])),
                server: true,
            })
            .collect()
    }

    /// Issue 51: the type and model of a host row found already are those of its name
    /// (mbatchd takes them for every host of the cluster file: by name, a scan of the
    /// hosts per host, 4 s of its start at 10,000 hosts).
    #[test]
    fn type_and_model_of_a_row_are_those_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        DefaultCluster::new("basalt", "me", default_hosts(2))
            .write(dir.path())
            .unwrap();
        let mut config = load(&DefaultCluster::envdir(dir.path())).unwrap().config;
        config.cluster.hosts[1].host_type = Some("SPARC".into());
        config.cluster.hosts[1].model = Some("Ultra".into());
        for h in &config.cluster.hosts {
            assert_eq!(config.type_of(Some(h)), config.host_type_of(&h.name));
            assert_eq!(
                config.model_of(Some(h), "x86_64"),
                config.host_model_of(&h.name, "x86_64")
            );
        }
        assert_eq!(config.host_type_of("HOST2"), "SPARC");
        assert_eq!(config.host_model_of("host2", "x86_64"), "Ultra");
        assert_eq!(config.type_of(None), config.host_type_of("elsewhere"));
        assert_eq!(
            config.model_of(None, "x86_64"),
            config.host_model_of("elsewhere", "x86_64")
        );
    }

    #[test]
    fn embedded_default_loads_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        DefaultCluster::new("basalt", "me", default_hosts(3))
            .write(top)
            .unwrap();
        let loaded = load(&DefaultCluster::envdir(top)).unwrap_or_else(|e| panic!("{e}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let c = &loaded.config;
        assert_eq!(c.cluster_name, "basalt");
        assert_eq!(c.cluster.admins, vec!["me"]);
        assert_eq!(c.cluster.hosts.len(), 3);
        assert_eq!(
            c.cluster.hosts[2].address,
            Some("127.0.0.3".parse().unwrap())
        );
        assert_eq!(c.cluster.params.exinterval_secs, 1.0);
        assert_eq!(c.lsf_conf.lim_port(), 7869);
        assert_eq!(c.confdir, DefaultCluster::envdir(top));
        assert_eq!(c.batch_confdir(), top.join("conf/lsbatch/basalt/configdir"));
        assert_eq!(c.sharedir(), top.join("work"));
        assert_eq!(c.logdir(), top.join("work/basalt/logdir"));
        assert!(c.logdir().is_dir());
        assert_eq!(c.batch.params.default_queue, vec!["normal"]);
        assert_eq!(c.batch.params.job_accept_interval, 0);
        assert_eq!(c.batch.queues.len(), 3);
        assert_eq!(c.batch.hosts[0].mxj, Some(Mxj::Ncpus));

        let lim = load_lim(&DefaultCluster::envdir(top)).unwrap();
        assert!(lim.config.batch.queues.is_empty());
        assert_eq!(lim.config.cluster.hosts.len(), 3);
    }

    #[test]
    fn resolve_paths() {
        assert_eq!(resolve(Path::new("/a/b"), "."), PathBuf::from("/a/b"));
        assert_eq!(resolve(Path::new("/a/b"), "./c"), PathBuf::from("/a/b/c"));
        assert_eq!(resolve(Path::new("/a/b"), "/x"), PathBuf::from("/x"));
    }

    #[test]
    fn missing_lsf_conf_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = load(dir.path()).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert!(
            err.to_string()
                .starts_with(&dir.path().join("lsf.conf").display().to_string())
        );
    }
}
