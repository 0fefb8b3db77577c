//! `cargo xtask up --clusters west,east`: linked MultiCluster clusters side by side on
//! this machine.
//!
//! Layout under `<dir>` (default `.basalt/`):
//!
//! ```text
//! dir/clusters          the clusters' names, one a line (how `down` and `status` find them)
//! dir/mc.key            the MultiCluster key (mode 0600), copied to every cluster
//! dir/<name>/           one cluster, laid out as a single `up` lays out dir/
//!                       (conf/ with mc.key, work/, bin/, log/, run/, serverdir/)
//! ```
//!
//! Cluster `k` (0-based, in the order given) has `--hosts` hosts hostA, hostB, ... on
//! 127.0.(10(k+1)).1, .2, ... (127.0.10.x, 127.0.20.x, ...), all on the same ports.
//! Every cluster's lsf.shared lists every cluster (itself first; Servers its first host,
//! ADDRESSES that host's address), its lsf.cluster names the others in RemoteClusters,
//! its lsf.conf sets `BASALT_MC_KEY=mc.key`, and its lsb.queues has, besides the
//! default queues, `send` (`SNDJOBS_TO = recv@<every other cluster>`) and `recv`
//! (`RCVJOBS_FROM = allclusters`, `IMPT_JOBBKLG = 50`).

use crate::down::stop;
use crate::{
    build_binaries, current_user, down_command, kept_hosts, letters, link_binaries, shell_word,
    start_daemons, validate, wait_up,
};
use anyhow::{Context, Result, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost, McCluster, MultiCluster};
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

/// The file under `<dir>` naming the clusters of `up --clusters`.
const MEMBERS_FILE: &str = "clusters";
/// The MultiCluster key: `<dir>/mc.key`, copied as `conf/mc.key` into every cluster.
const KEY_FILE: &str = "mc.key";
/// At most this many clusters (cluster k lives on 127.0.(10(k+1)).x).
const MAX_CLUSTERS: usize = 25;
/// Names a cluster may not have: the directories and files of `<dir>` itself.
const RESERVED: &[&str] = &[
    "bin",
    "conf",
    "log",
    "run",
    "serverdir",
    "work",
    MEMBERS_FILE,
    KEY_FILE,
];

/// The clusters `up --clusters` started from `top` (none for a single cluster).
pub(crate) fn members(top: &Path) -> Vec<String> {
    std::fs::read_to_string(top.join(MEMBERS_FILE))
        .map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Every directory daemons of `top` may be recorded in: `top` itself, then each
/// cluster's `<top>/<name>`.
pub(crate) fn all_tops(top: &Path) -> Vec<PathBuf> {
    std::iter::once(top.to_path_buf())
        .chain(members(top).iter().map(|m| top.join(m)))
        .collect()
}

/// Two or more distinct names that can be cluster names and directory names.
fn check_names(names: &[String]) -> Result<()> {
    if names.len() < 2 {
        bail!("--clusters needs two or more names, e.g. --clusters west,east");
    }
    if names.len() > MAX_CLUSTERS {
        bail!("--clusters takes at most {MAX_CLUSTERS} names");
    }
    for (i, n) in names.iter().enumerate() {
        let ok = !n.is_empty()
            && !n.starts_with('-')
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            bail!("`{n}` is not a cluster name (letters, digits, `_` and `-`)");
        }
        if RESERVED.contains(&n.as_str()) {
            bail!("`{n}` cannot be a cluster name here: <dir>/{n} is taken");
        }
        if names[..i].contains(n) {
            bail!("cluster `{n}` is named twice");
        }
    }
    Ok(())
}

/// The hosts of cluster `k`: hostA, hostB, ... on 127.0.(10(k+1)).1, .2, ...
fn member_hosts(k: usize, n: usize) -> Result<Vec<DefaultHost>> {
    if n == 0 || n > 250 {
        bail!("--hosts must be between 1 and 250");
    }
    let net = u8::try_from(10 * (k + 1)).context("too many clusters")?;
    Ok((0..n)
        .map(|i| DefaultHost {
            name: format!("host{}", letters(i)),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, net, (i + 1) as u8))),
            server: true,
        })
        .collect())
}

/// The queues cluster `me` gets besides the default ones: `send`, forwarding to the
/// `recv` queue of every other cluster, and `recv`, taking jobs from every cluster.
fn mc_queues(me: &str, names: &[String]) -> String {
    let others: Vec<&String> = names.iter().filter(|n| *n != me).collect();
    let to: Vec<String> = others.iter().map(|n| format!("recv@{n}")).collect();
    let mut t = String::from(
        "\n# MultiCluster (cargo xtask up --clusters): jobs submitted to `send` are forwarded\n\
         # to the `recv` queue of the other clusters; `recv` takes jobs from every cluster.\n",
    );
    let _ = write!(
        t,
        "Begin Queue\n\
         QUEUE_NAME   = send\n\
         PRIORITY     = 30\n\
         SNDJOBS_TO   = {}\n\
         DESCRIPTION  = Forwards jobs to the recv queue of {}.\n\
         End Queue\n\
         \n\
         Begin Queue\n\
         QUEUE_NAME   = recv\n\
         PRIORITY     = 30\n\
         RCVJOBS_FROM = allclusters\n\
         IMPT_JOBBKLG = 50\n\
         DESCRIPTION  = Takes jobs forwarded from the other clusters.\n\
         End Queue\n",
        to.join(" "),
        others
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    t
}

/// Copy the key file `from` to `to` (mode 0600), replacing what is there.
fn copy_key(from: &Path, to: &Path) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let text = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    let _ = std::fs::remove_file(to);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .and_then(|mut f| f.write_all(&text))
        .with_context(|| format!("writing {}", to.display()))
}

/// One cluster of the set, configured.
#[derive(Debug)]
pub(crate) struct Member {
    pub name: String,
    /// `<dir>/<name>`.
    pub top: PathBuf,
    pub envdir: PathBuf,
    pub hosts: Vec<String>,
}

/// Write (or, with `keep_config`, keep) the configuration of every cluster of `names`
/// under `top`, with `n` hosts each, and the member list and the shared key; validate
/// each configuration.
pub(crate) fn configure(
    names: &[String],
    n: usize,
    top: &Path,
    keep_config: bool,
    ports: crate::ports::Ports,
) -> Result<Vec<Member>> {
    check_names(names)?;
    let mut specs = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let mut spec = DefaultCluster::new(name, &current_user(), member_hosts(k, n)?);
        ports.apply(&mut spec);
        // Run as root, the cluster's only user is root: let it run jobs.
        spec.root_rex = nix::unistd::geteuid().is_root();
        specs.push(spec);
    }
    let rows: Vec<McCluster> = specs.iter().map(DefaultCluster::mc_cluster).collect();
    std::fs::create_dir_all(top)?;
    std::fs::write(
        top.join(MEMBERS_FILE),
        format!(
            "# The clusters of `cargo xtask up --clusters` (read by down and status).\n{}\n",
            names.join("\n")
        ),
    )?;
    let key = top.join(KEY_FILE);
    if !key.exists() {
        basalt_config::embedded::write_new_key(&key)
            .with_context(|| format!("creating the MultiCluster key {}", key.display()))?;
    }
    let mut members = Vec::new();
    for mut spec in specs {
        let mtop = top.join(&spec.cluster);
        let envdir = DefaultCluster::envdir(&mtop);
        let hosts = if keep_config && envdir.join("lsf.conf").exists() {
            kept_hosts(&envdir)?
        } else {
            spec.multicluster = Some(MultiCluster {
                clusters: rows.clone(),
                key: KEY_FILE.to_owned(),
                poll_ms: None,
            });
            spec.write(&mtop)
                .with_context(|| format!("writing the configuration into {}", mtop.display()))?;
            let queues = mtop
                .join("conf/lsbatch")
                .join(&spec.cluster)
                .join("configdir/lsb.queues");
            let mut text = std::fs::read_to_string(&queues)
                .with_context(|| format!("reading {}", queues.display()))?;
            text.push_str(&mc_queues(&spec.cluster, names));
            std::fs::write(&queues, text)?;
            spec.hosts.iter().map(|h| h.name.clone()).collect()
        };
        let member_key = envdir.join(KEY_FILE);
        if !keep_config || !member_key.exists() {
            copy_key(&key, &member_key)?;
        }
        members.push(Member {
            name: spec.cluster.clone(),
            top: mtop,
            envdir,
            hosts,
        });
    }
    // Validate before starting anything: nothing starts with a half-read config.
    for m in &members {
        validate(&m.envdir)?;
    }
    Ok(members)
}

/// `cargo xtask up --clusters a,b,...`.
pub(crate) fn up(
    names: &[String],
    n: usize,
    top: PathBuf,
    build: crate::Build,
    keep_config: bool,
    ports: crate::ports::Ports,
) -> Result<()> {
    check_names(names)?;
    let mut tops = all_tops(&top);
    tops.extend(names.iter().map(|m| top.join(m)));
    if let Some(d) = crate::down::find(&tops).first() {
        bail!(
            "a cluster is already running from {}: {} (stop it with `{}`)",
            top.display(),
            d.describe(false),
            down_command(&top)
        );
    }
    let target = build_binaries(build)?;
    let members = configure(names, n, &top, keep_config, ports)?;
    for m in &members {
        let loaded = validate(&m.envdir)?;
        crate::ports::check_cluster(&loaded).with_context(|| format!("cluster {}", m.name))?;
    }

    let mut bins = Vec::new();
    for m in &members {
        bins.push(link_binaries(&m.top, &target)?);
    }
    let all: Vec<PathBuf> = members.iter().map(|m| m.top.clone()).collect();
    for m in &members {
        if let Err(e) = start_daemons(&m.top, &m.envdir, &m.hosts) {
            stop(&all);
            return Err(e);
        }
    }
    let mut masters = Vec::new();
    for m in &members {
        match wait_up(&m.top, &m.envdir, m.hosts.len()) {
            Ok(master) => masters.push(master),
            Err(e) => {
                let e = crate::ports::explain_timeout(&m.top, e);
                let n = stop(&all).len();
                println!("Stopped {n} daemon(s).");
                return Err(e.context(format!("cluster {}", m.name)));
            }
        }
    }

    println!(
        "{} linked Basalt clusters are up (MultiCluster; key {}):",
        members.len(),
        top.join(KEY_FILE).display()
    );
    for ((m, bin), master) in members.iter().zip(&bins).zip(&masters) {
        let others: Vec<&str> = names
            .iter()
            .filter(|o| **o != m.name)
            .map(String::as_str)
            .collect();
        println!();
        println!(
            "Cluster <{}>: {} host(s) ({}), master {}. Use it from a shell with:",
            m.name,
            m.hosts.len(),
            m.hosts.join(" "),
            master
        );
        let envdir = shell_word(&m.envdir.to_string_lossy());
        println!(
            "  export LSF_ENVDIR={envdir} PATH={}:$PATH",
            shell_word(&bin.to_string_lossy())
        );
        println!(
            "or run one command in it, e.g. a job its queue `send` forwards to {}:",
            {
                let to: Vec<String> = others.iter().map(|o| format!("recv@{o}")).collect();
                to.join(" ")
            }
        );
        println!(
            "  LSF_ENVDIR={envdir} {} -q send sleep 60",
            shell_word(&bin.join("bsub").to_string_lossy())
        );
    }
    println!();
    println!(
        "Logs are in {}/<cluster>/log. Stop them all with:",
        top.display()
    );
    println!("  {}", down_command(&top));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn must<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    struct Scratch(PathBuf);
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("xtask-mc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        Scratch(d)
    }

    #[test]
    fn names_are_checked() {
        assert!(check_names(&names(&["west", "east"])).is_ok());
        assert!(check_names(&names(&["a-1", "b_2", "C"])).is_ok());
        for bad in [
            vec!["west"],
            vec!["west", "west"],
            vec!["west", ""],
            vec!["west", "e/st"],
            vec!["west", "-x"],
            vec!["west", "conf"],
            vec!["west", "run"],
        ] {
            assert!(check_names(&names(&bad)).is_err(), "{bad:?}");
        }
        let many: Vec<String> = (0..26).map(|i| format!("c{i}")).collect();
        assert!(check_names(&many).is_err());
        assert!(check_names(&many[..25]).is_ok());
    }

    #[test]
    fn each_cluster_has_a_subnet_of_its_own() {
        let west = must(member_hosts(0, 2));
        let east = must(member_hosts(1, 2));
        let addr = |h: &DefaultHost| h.address.map(|a| a.to_string()).unwrap_or_default();
        assert_eq!(
            west.iter()
                .map(|h| (h.name.as_str(), addr(h)))
                .collect::<Vec<_>>(),
            vec![
                ("hostA", "127.0.10.1".into()),
                ("hostB", "127.0.10.2".into())
            ]
        );
        assert_eq!(addr(&east[1]), "127.0.20.2");
        assert_eq!(addr(&must(member_hosts(24, 1))[0]), "127.0.250.1");
        assert!(member_hosts(0, 0).is_err());
    }

    /// The configuration `up --clusters west,east,north --hosts 2` writes: linked, with
    /// one key, the send and receive queues, and each cluster loading as itself.
    #[test]
    fn linked_configuration() {
        let d = scratch("config");
        let set = names(&["west", "east", "north"]);
        let members = must(configure(
            &set,
            2,
            &d.0,
            false,
            must(crate::ports::Ports::plan(None)),
        ));
        assert_eq!(members.len(), 3);
        assert_eq!(super::members(&d.0), set);
        assert_eq!(
            all_tops(&d.0),
            vec![
                d.0.clone(),
                d.0.join("west"),
                d.0.join("east"),
                d.0.join("north")
            ]
        );
        let key = must(std::fs::read_to_string(d.0.join(KEY_FILE)));
        for (m, name) in members.iter().zip(&set) {
            assert_eq!(&m.name, name);
            assert_eq!(m.envdir, d.0.join(name).join("conf"));
            assert_eq!(m.hosts, vec!["hostA", "hostB"]);
            // The shared key, 0600.
            let mk = m.envdir.join(KEY_FILE);
            assert_eq!(must(std::fs::read_to_string(&mk)), key);
            let mode = must(std::fs::metadata(&mk)).permissions().mode();
            assert_eq!(mode & 0o777, 0o600);

            let loaded = must(validate(&m.envdir));
            let c = &loaded.config;
            assert_eq!(&c.cluster_name, name);
            let mut others: Vec<&String> = set.iter().filter(|n| *n != name).collect();
            let mut listed: Vec<&String> = c.shared.clusters.iter().collect();
            assert_eq!(listed.remove(0), name);
            assert_eq!(listed, others);
            // Every cluster's row: its first host at its first address.
            for (k, other) in set.iter().enumerate() {
                let row = c.shared.cluster(other).unwrap_or_else(|| panic!("{other}"));
                assert_eq!(row.servers, vec!["hostA"]);
                let want: IpAddr = must(format!("127.0.{}.1", 10 * (k + 1)).parse());
                assert_eq!(row.addresses, vec![Some(want)]);
            }
            let remote: Vec<&String> = c.cluster.remote_clusters.iter().map(|r| &r.name).collect();
            assert_eq!(remote, others);
            assert!(c.cluster.remote_clusters.iter().all(|r| r.recv_from));
            assert_eq!(basalt_config::mc_key_path(c), Some(m.envdir.join(KEY_FILE)));
            // This cluster's hosts on its own subnet.
            let k = set.iter().position(|n| n == name).unwrap_or(0);
            let ips: Vec<String> = c
                .cluster
                .hosts
                .iter()
                .map(|h| h.address.map(|a| a.to_string()).unwrap_or_default())
                .collect();
            assert_eq!(
                ips,
                vec![
                    format!("127.0.{}.1", 10 * (k + 1)),
                    format!("127.0.{}.2", 10 * (k + 1))
                ]
            );
            // The default queues, and send / recv.
            let send = c
                .batch
                .queue("send")
                .unwrap_or_else(|| panic!("{name}: send"));
            assert_eq!(send.priority, 30);
            others.sort();
            let mut to: Vec<(String, String)> = send.snd_jobs_to.clone();
            to.sort();
            assert_eq!(
                to,
                others
                    .iter()
                    .map(|o| ("recv".to_owned(), (*o).clone()))
                    .collect::<Vec<_>>()
            );
            let recv = c
                .batch
                .queue("recv")
                .unwrap_or_else(|| panic!("{name}: recv"));
            assert_eq!(recv.priority, 30);
            assert!(recv.receives_from("anyone"));
            assert_eq!(recv.impt_jobbklg, Some(50));
            assert!(c.batch.queue("normal").is_some());
            let warnings: Vec<String> = loaded
                .warnings
                .iter()
                .filter(|w| !w.not_applied)
                .map(ToString::to_string)
                .collect();
            assert!(warnings.is_empty(), "{name}: {warnings:#?}");
        }

        // Again with --keep-config: nothing is rewritten, the key stays.
        let queues = d.0.join("east/conf/lsbatch/east/configdir/lsb.queues");
        let edited = must(std::fs::read_to_string(&queues)) + "\n# edited\n";
        must(std::fs::write(&queues, &edited));
        let again = must(configure(
            &set,
            2,
            &d.0,
            true,
            must(crate::ports::Ports::plan(None)),
        ));
        assert_eq!(again[1].hosts, vec!["hostA", "hostB"]);
        assert_eq!(must(std::fs::read_to_string(&queues)), edited);
        assert_eq!(must(std::fs::read_to_string(d.0.join(KEY_FILE))), key);
    }

    #[test]
    fn queues_forward_to_every_other_cluster() {
        let q = mc_queues("east", &names(&["west", "east", "north"]));
        assert!(q.contains("SNDJOBS_TO   = recv@west recv@north\n"), "{q}");
        assert!(
            q.contains("RCVJOBS_FROM = allclusters\nIMPT_JOBBKLG = 50\n"),
            "{q}"
        );
        assert_eq!(q.matches("PRIORITY     = 30\n").count(), 2);
    }
}
