//! Project automation, run as `cargo xtask <command>`.
//!
//! * `up [--hosts N]` — build the daemons and commands, write the embedded
//!   default configuration into a local directory (`.basalt/` in the
//!   workspace unless `--dir` says otherwise; nothing is written outside it),
//!   start every host's daemons in the background and print the line to paste
//!   into a shell. One host is this machine under its own name on 127.0.0.1;
//!   N hosts are hostA, hostB, ... on 127.0.0.1, 127.0.0.2, ...
//!   `--subnet 127.X.Y` puts the hosts on a loopback /24 of their own instead (hostA,
//!   hostB, ... on 127.X.Y.1, .2, ..., also for one host), and `--lim-port P` moves all
//!   four ports (LIM P, RES P+1, mbatchd P+2, sbatchd P+3; see [`ports`]): two clusters
//!   on one machine differ in one or the other. Every port is checked free on every
//!   host address before anything starts.
//!   `up --clusters west,east` starts linked MultiCluster clusters side by side instead,
//!   each in `<dir>/<name>`; see [`multi`].
//! * `down [--keep-jobs]` — end the cluster's jobs (see [`jobs`]; `--keep-jobs` leaves
//!   them running, as LSF does), then stop every daemon of the cluster, however it was
//!   started (SIGTERM, then SIGKILL after 10 s; see [`down`]), naming each.
//! * `status` — which of them are running.
//! * `bench [--quick] [--only NAME]... [--runs N] [--no-build] [--vs PEER]...` — measure
//!   the performance goals of DESIGN.md on the release build, and side by side with Slurm
//!   or HyperQueue; see [`bench`].
//! * `scale [--hollow N,N] [--quick] [--pending N] [--jobs N] [--phases P,P]
//!   [--lim-port P] [--no-build]` — site scale with hollow hosts (issue 51): clusters of
//!   2 real and N hollow hosts, idle figures and a workload; see [`scale`].
//! * `install --prefix DIR [--destdir D] [--sysconfdir D] [--localstatedir D] [--no-build]
//!   [--debug] [--link] [--strict-help]` — daemons in sbin/, commands in bin/, systemd
//!   units, a configuration template; see [`install`].
//! * `deb [--no-build] [--debug] [--out DIR]` — that installation for `/usr` as a Debian
//!   package, built with `dpkg-deb`; see [`deb`].

use anyhow::{Context, Result, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost};
use clap::{Parser, Subcommand};
use down::{pid_dir, stop};
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod bench;
mod capi;
mod deb;
mod down;
mod hollow;
mod install;
mod jobs;
mod multi;
mod ports;
mod scale;
mod wait;

use hollow::start_hollow;
pub(crate) use hollow::{HOLLOW, HollowHosts, apart_groups, hollow_groups, hollow_hosts};
use wait::{wait_master, wait_up};

/// The daemons `up` starts on every host, in start order.
const DAEMONS: &[&str] = &["lim", "res", "sbatchd"];
/// Daemons started by other daemons (mbatchd by the master host's sbatchd): linked, not started.
const SUPERVISED: &[&str] = &["mbatchd"];
/// The commands linked into `<dir>/bin`.
const COMMANDS: &[&str] = &[
    "lsid",
    "lsload",
    "lshosts",
    "lsclusters",
    "lsinfo",
    "lsrun",
    "lsgrun",
    "lsrcp",
    "lsplace",
    "blaunch",
    "bsub",
    "bjobs",
    "bkill",
    "brequeue",
    "bmig",
    "bchkpnt",
    "brestart",
    "bstop",
    "bresume",
    "bqueues",
    "bhosts",
    "bswitch",
    "bmod",
    "btop",
    "bbot",
    "brun",
    "bpeek",
    "bparams",
    "blimits",
    "bresources",
    "bslots",
    "bhpart",
    "busers",
    "bapp",
    "bmgroup",
    "bugroup",
    "bclusters",
    "badmin",
    "bhist",
    "bacct",
    "bevents",
    "lsadmin",
];

#[derive(Parser, Debug)]
#[command(name = "cargo xtask", about = "Basalt project automation")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Build, configure and start a local cluster.
    Up {
        /// Number of hosts (1 = this machine; N > 1 = hostA.. on loopback addresses).
        #[arg(long, default_value_t = 1)]
        hosts: usize,
        /// Directory for configuration, state and logs (default: <workspace>/.basalt).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Cluster name.
        #[arg(long, default_value = "basalt")]
        cluster: String,
        /// Start two or more linked MultiCluster clusters instead of one, each with
        /// --hosts hosts in <dir>/<name> on a loopback subnet of its own (127.0.10.x,
        /// 127.0.20.x, ...), with queues `send` (forwarding to the others' `recv`) and
        /// `recv`.
        #[arg(
            long,
            value_delimiter = ',',
            value_name = "NAME,NAME",
            conflicts_with = "cluster"
        )]
        clusters: Vec<String>,
        /// Build and run release binaries.
        #[arg(long)]
        release: bool,
        /// Keep an existing configuration in --dir instead of writing the default.
        #[arg(long)]
        keep_config: bool,
        /// Move the cluster's ports: LIM P (LSF_LIM_PORT), RES P+1, mbatchd P+2, sbatchd
        /// P+3. Without it (or with LSF's 7869), LSF's defaults 7869, 6878, 6881, 6882.
        #[arg(long, value_name = "P")]
        lim_port: Option<u16>,
        /// Put the hosts on a loopback /24 of their own: hostA, hostB, ... at
        /// 127.X.Y.1, .2, ... (also for --hosts 1), so that clusters on one machine do
        /// not share addresses.
        #[arg(long, value_name = "127.X.Y", value_parser = ports::parse_subnet, conflicts_with = "clusters")]
        subnet: Option<[u8; 3]>,
        /// Use the binaries already built (target/debug, or target/release with
        /// --release) instead of running cargo build.
        #[arg(long)]
        no_build: bool,
        /// Also run N hollow hosts (the scale harness, docs/performance.md): hv00001,
        /// hv00002, ... on 127.200.x.y, each its real LIM and sbatchd with a simulated
        /// load, in two `basalt-hollow` processes; the --hosts real hosts become the
        /// master candidates (LSF_MASTER_LIST).
        #[arg(long, value_name = "N", default_value_t = 0, conflicts_with_all = ["clusters", "keep_config"])]
        hollow: usize,
    },
    /// End the cluster's jobs and stop the daemons started by `up`.
    Down {
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Leave the jobs running (LSF's behaviour when its daemons stop).
        #[arg(long)]
        keep_jobs: bool,
    },
    /// Show which daemons of the cluster started by `up` are running.
    Status {
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Measure the performance goals of DESIGN.md (release build); results in
    /// target/bench/results.{json,md}.
    Bench {
        /// Reduced sizes, for a quick check.
        #[arg(long)]
        quick: bool,
        /// Run only this measure (repeatable): replay, sched, submit, bsub, latency,
        /// drain, memory, idle, failover; or slurm, hyperqueue: that peer's side of `--vs`.
        #[arg(long, value_name = "NAME")]
        only: Vec<String>,
        /// Runs per measure (default: each measure's own, 2 to 5).
        #[arg(long)]
        runs: Option<usize>,
        /// Use the release binaries already built.
        #[arg(long)]
        no_build: bool,
        /// Also run the comparable measures against another scheduler on this machine
        /// (repeatable): `slurm` (needs root and `xtask/slurm/slurm-setup.sh` run once) or
        /// `hyperqueue` (installed from PyPI into target/hq-venv by the bench).
        #[arg(long, value_name = "PEER", value_parser = ["slurm", "hyperqueue"])]
        vs: Vec<String>,
    },
    /// Site scale with hollow hosts (issue 51, docs/performance.md): for each size, `up
    /// --hosts 2 --hollow N --release`, the time until every host is ok, then the phases:
    /// idle (CPU and RSS of the master LIM, mbatchd and the hollow processes,
    /// lsload/lshosts/bhosts), throughput (--jobs jobs of 1 s, each once in lsb.acct),
    /// hostloss (a tenth of the hollow hosts lost at once), pending (--pending jobs in an
    /// inactive queue: submission, mbatchd RSS, bjobs -u all, bqueues, bsub), reconfig,
    /// mbdkill (mbatchd kill -9) and failover (kill -9 of hostA's daemons); results in
    /// target/bench/scale.{json,md}.
    Scale {
        /// The sizes (default 100,1000,10000; --quick: 100,1000).
        #[arg(long, value_delimiter = ',', value_name = "N,N")]
        hollow: Vec<usize>,
        /// Smaller defaults: sizes 100,1000, --pending 100000, --jobs 20000.
        #[arg(long)]
        quick: bool,
        /// Use the release binaries already built.
        #[arg(long)]
        no_build: bool,
        /// Seconds of the idle measure.
        #[arg(long, default_value_t = 20)]
        idle_secs: u64,
        /// Jobs left pending (arrays of 1,000; default 1000000, --quick 100000).
        #[arg(long, value_name = "N")]
        pending: Option<usize>,
        /// Jobs of `sleep 1` in the throughput phase (arrays of 1,000; default 100000,
        /// --quick 20000).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Run only these phases (default all): idle, throughput, hostloss, pending,
        /// reconfig, mbdkill, failover. They run in that order whatever the order given.
        #[arg(long, value_delimiter = ',', value_name = "PHASE,PHASE")]
        phases: Vec<String>,
        /// Move the clusters' ports as `up --lim-port P` does (LIM P, RES P+1, mbatchd
        /// P+2, sbatchd P+3), away from another cluster on the same addresses.
        #[arg(long, value_name = "P")]
        lim_port: Option<u16>,
    },
    /// Install release binaries, systemd units and a configuration template under a
    /// prefix (see docs/admin-guide.md, Installation).
    Install(install::Opts),
    /// Build a Debian package (basalt_<version>_<arch>.deb) of the installation for
    /// /usr with dpkg-deb (see docs/admin-guide.md, Installation).
    Deb(deb::Opts),
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The command that stops the cluster of `top`: `cargo xtask down`, with `--dir` unless
/// `top` is the default directory.
fn down_command(top: &Path) -> String {
    let default = workspace_root().join(".basalt");
    let is_default = default.canonicalize().is_ok_and(|d| d == top);
    if is_default {
        "cargo xtask down".to_owned()
    } else {
        format!(
            "cargo xtask down --dir {}",
            shell_word(&top.to_string_lossy())
        )
    }
}

/// `s` as one shell word (quoted only when it needs to be).
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn default_dir(dir: Option<PathBuf>) -> Result<PathBuf> {
    let dir = dir.unwrap_or_else(|| workspace_root().join(".basalt"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    dir.canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Up {
            hosts,
            dir,
            clusters,
            release,
            keep_config,
            lim_port,
            no_build,
            ..
        } if !clusters.is_empty() => multi::up(
            &clusters,
            hosts,
            default_dir(dir)?,
            Build { release, no_build },
            keep_config,
            ports::Ports::plan(lim_port)?,
        ),
        Cmd::Up {
            hosts,
            dir,
            cluster,
            release,
            keep_config,
            lim_port,
            subnet,
            no_build,
            hollow,
            ..
        } => {
            let top = default_dir(dir)?;
            let kept = keep_config && DefaultCluster::envdir(&top).join("lsf.conf").exists();
            if kept && (subnet.is_some() || lim_port.is_some()) {
                eprintln!(
                    "note: --keep-config: the kept configuration's addresses and ports apply, not --subnet/--lim-port"
                );
            }
            up(
                host_names(hosts, subnet)?,
                HollowHosts {
                    hosts: hollow_hosts(hollow)?,
                    apart: 0,
                },
                top,
                &cluster,
                Build { release, no_build },
                keep_config,
                ports::Ports::plan(lim_port)?,
            )
        }
        Cmd::Down { dir, keep_jobs } => down::down(&default_dir(dir)?, keep_jobs),
        Cmd::Scale {
            hollow,
            quick,
            no_build,
            idle_secs,
            pending,
            jobs,
            phases,
            lim_port,
        } => scale::scale(
            &workspace_root(),
            &scale::Opts {
                hollow,
                quick,
                no_build,
                idle_secs,
                pending,
                jobs,
                phases,
                lim_port,
            },
        ),
        Cmd::Install(opts) => install::install(&workspace_root(), &opts),
        Cmd::Deb(opts) => deb::deb(&workspace_root(), &opts).map(|_| ()),
        Cmd::Status { dir } => down::status(&default_dir(dir)?),
        Cmd::Bench {
            quick,
            only,
            runs,
            no_build,
            vs,
        } => bench::bench(
            &workspace_root(),
            &bench::Opts {
                quick,
                only,
                runs,
                no_build,
                vs,
            },
        ),
    }
}

/// The hosts of `up --hosts n [--subnet S]`.
pub(crate) fn host_names(n: usize, subnet: Option<[u8; 3]>) -> Result<Vec<DefaultHost>> {
    if n == 0 || n > 250 {
        bail!("--hosts must be between 1 and 250");
    }
    if let Some(net) = subnet {
        return Ok((0..n)
            .map(|i| DefaultHost {
                name: format!("host{}", letters(i)),
                address: Some(ports::subnet_host(net, i)),
                server: true,
            })
            .collect());
    }
    if n == 1 {
        let name = nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .map(|h| h.split('.').next().unwrap_or("").to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "hostA".to_owned());
        return Ok(vec![DefaultHost {
            name,
            address: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            server: true,
        }]);
    }
    Ok((0..n)
        .map(|i| DefaultHost {
            name: format!("host{}", letters(i)),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, (i + 1) as u8))),
            server: true,
        })
        .collect())
}

/// 0 -> A, 25 -> Z, 26 -> AA, ...
fn letters(mut i: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (i % 26) as u8);
        if i < 26 {
            break;
        }
        i = i / 26 - 1;
    }
    s.reverse();
    String::from_utf8_lossy(&s).into_owned()
}

/// The user running the xtask (its passwd name, else $USER, else root).
pub(crate) fn current_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "root".to_owned())
}

/// How `up` gets its binaries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Build {
    pub release: bool,
    /// Use those already built.
    pub no_build: bool,
}

/// Start a cluster: `host_list` (real hosts) and `hollow` (hollow hosts, the last
/// `apart` of them in `basalt-hollow` processes of their own, see [`hollow_groups`]) in
/// `top`.
pub(crate) fn up(
    host_list: Vec<DefaultHost>,
    hollow: HollowHosts,
    top: PathBuf,
    cluster: &str,
    build: Build,
    keep_config: bool,
    ports: ports::Ports,
) -> Result<()> {
    // The daemons inherit this process's open-file limit: raise it (as root, the hard
    // limit too, within `fs.nr_open`) as the packaged units do with `LimitNOFILE`, so
    // that a master LIM and mbatchd of thousands of hosts (a connection from and to
    // each) do not run out.
    let _ = basalt_runtime::serve::raise_open_files(1 << 20);
    let HollowHosts {
        hosts: hollow,
        apart: hollow_apart,
    } = hollow;
    if let Some(d) = down::find(std::slice::from_ref(&top)).first() {
        bail!(
            "a cluster is already running from {}: {} (stop it with `{}`)",
            top.display(),
            d.describe(false),
            down_command(&top)
        );
    }
    let target = build_binaries(build)?;

    let envdir = DefaultCluster::envdir(&top);
    let config_exists = envdir.join("lsf.conf").exists();
    let hosts = if keep_config && config_exists {
        kept_hosts(&envdir)?
    } else {
        let real: Vec<String> = host_list.iter().map(|h| h.name.clone()).collect();
        let mut all = host_list;
        all.extend(hollow.iter().cloned());
        let mut spec = DefaultCluster::new(cluster, &current_user(), all);
        ports.apply(&mut spec);
        // Run as root, the cluster's only user is root: let it run jobs.
        spec.root_rex = nix::unistd::geteuid().is_root();
        spec.write(&top)
            .with_context(|| format!("writing the configuration into {}", top.display()))?;
        if !hollow.is_empty() {
            // Only the real hosts may become master.
            use std::io::Write as _;
            std::fs::OpenOptions::new()
                .append(true)
                .open(envdir.join("lsf.conf"))
                .and_then(|mut f| {
                    writeln!(
                        f,
                        "# Hollow hosts are never master: the real hosts are the candidates."
                    )?;
                    writeln!(f, "LSF_MASTER_LIST=\"{}\"", real.join(" "))
                })
                .context("adding LSF_MASTER_LIST to lsf.conf")?;
        }
        real
    };
    let hollow: Vec<String> = hollow.into_iter().map(|h| h.name).collect();
    // Validate before starting anything: nothing starts with a half-read config, or
    // on a port another program (another cluster) holds.
    let loaded = validate(&envdir)?;
    ports::check_cluster(&loaded)?;

    let bin = link_binaries(&top, &target)?;
    start_daemons(&top, &envdir, &hosts)?;
    if !hollow.is_empty()
        && let Some(first) = hosts.first()
        && let Err(e) = wait_master(&top, &envdir, first)
    {
        let n = stop(std::slice::from_ref(&top)).len();
        println!("Stopped {n} daemon(s).");
        return Err(e);
    }
    start_hollow(&top, &envdir, &hollow, hollow_apart)?;
    let master = match wait_up(&top, &envdir, hosts.len() + hollow.len()) {
        Ok(m) => m,
        Err(e) => {
            let e = ports::explain_timeout(&top, e);
            // Only this cluster's daemons (not those of `up --clusters` in the same dir).
            let n = stop(std::slice::from_ref(&top)).len();
            println!("Stopped {n} daemon(s).");
            return Err(e);
        }
    };

    println!(
        "Basalt cluster <{}> is up: {} host(s) ({}), master {}.",
        cluster,
        hosts.len(),
        hosts.join(" "),
        master
    );
    if !hollow.is_empty() {
        println!(
            "And {} hollow host(s) ({} ... {}), run by {} basalt-hollow processes.",
            hollow.len(),
            hollow[0],
            hollow[hollow.len() - 1],
            hollow_groups(&hollow, hollow_apart).len()
        );
    }
    println!("Use it from a shell with:");
    println!(
        "  export LSF_ENVDIR={} PATH={}:$PATH",
        envdir.display(),
        bin.display()
    );
    println!("Logs are in {}. Stop it with:", top.join("log").display());
    println!("  {}", down_command(&top));
    Ok(())
}

/// The directory cargo puts the binaries of `profile` in.
pub(crate) fn target_dir(profile: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
        .join(profile)
}

/// Build the daemons and commands (release or debug; with `no_build` only check they
/// are there); the directory they are in.
pub(crate) fn build_binaries(build: Build) -> Result<PathBuf> {
    let release = build.release;
    let profile = if release { "release" } else { "debug" };
    if build.no_build {
        let dir = target_dir(profile);
        let missing: Vec<&str> = DAEMONS
            .iter()
            .chain(SUPERVISED)
            .chain(COMMANDS)
            .copied()
            .filter(|n| !dir.join(n).is_file())
            .chain(capi::built_library(&dir).is_none().then_some(capi::LIBRARY))
            .collect();
        if !missing.is_empty() {
            bail!(
                "--no-build: {} not built in {} (build them, or drop --no-build)",
                missing.join(" "),
                dir.display()
            );
        }
        return Ok(dir);
    }
    eprintln!("Building the daemons and commands ({profile})...");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(workspace_root()).args([
        "build",
        "--bins",
        "-p",
        "basalt-lim",
        "-p",
        "basalt-res",
        "-p",
        "basalt-sbatchd",
        "-p",
        "basalt-mbatchd",
        "-p",
        "basalt-cli",
        "-p",
        "basalt-hist",
        "-p",
        "basalt-hollow",
    ]);
    if release {
        build.arg("--release");
    }
    let st = build.status().context("running cargo build")?;
    if !st.success() {
        bail!("cargo build failed");
    }
    // LSF's C API (libbat.so): a library, which `--bins` above does not build.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut lib = Command::new(cargo);
    lib.current_dir(workspace_root())
        .args(["build", "--lib", "-p", "basalt-capi"]);
    if release {
        lib.arg("--release");
    }
    let st = lib.status().context("running cargo build -p basalt-capi")?;
    if !st.success() {
        bail!("cargo build -p basalt-capi failed");
    }
    Ok(target_dir(profile))
}

/// The hosts of the configuration kept in `envdir` (`--keep-config`); a configuration
/// from before authentication gets its cluster key.
fn kept_hosts(envdir: &Path) -> Result<Vec<String>> {
    let loaded = basalt_config::load_lim(envdir).map_err(|e| {
        anyhow::anyhow!("the configuration in {} is invalid:\n{e}", envdir.display())
    })?;
    // A configuration from before authentication has no cluster key: make one.
    let key = basalt_auth::key_path(&loaded.config);
    if !key.exists() {
        basalt_config::embedded::write_new_key(&key)
            .with_context(|| format!("creating the cluster key {}", key.display()))?;
        println!("created the cluster key {}", key.display());
    }
    Ok(loaded
        .config
        .cluster
        .hosts
        .iter()
        .map(|h| h.name.clone())
        .collect())
}

/// Load the whole configuration in `envdir`, or say why it is invalid.
fn validate(envdir: &Path) -> Result<basalt_config::Loaded> {
    basalt_config::load(envdir)
        .map_err(|e| anyhow::anyhow!("the configuration in {} is invalid:\n{e}", envdir.display()))
}

/// Link the built binaries of `target` into `<top>/bin` and its C API library into
/// `<top>/lib` (headers in `<top>/include/lsf`), and make `run/` and `log/`; the bin
/// directory.
fn link_binaries(top: &Path, target: &Path) -> Result<PathBuf> {
    let bin = top.join("bin");
    std::fs::create_dir_all(&bin)?;
    for name in DAEMONS
        .iter()
        .chain(SUPERVISED)
        .chain(COMMANDS)
        .chain(std::iter::once(&HOLLOW))
    {
        let link = bin.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target.join(name), &link)
            .with_context(|| format!("linking {}", link.display()))?;
    }
    capi::place_library(target, &top.join("lib"), capi::Place::Symlink)?;
    capi::place_headers(&top.join("include"))?;
    std::fs::create_dir_all(pid_dir(top))?;
    std::fs::create_dir_all(top.join("log"))?;
    Ok(bin)
}

/// Start every host's daemons of the cluster in `top` in the background, recording
/// their pids in `<top>/run`.
fn start_daemons(top: &Path, envdir: &Path, hosts: &[String]) -> Result<()> {
    let bin = top.join("bin");
    for host in hosts {
        for daemon in DAEMONS {
            let mut cmd = Command::new(bin.join(daemon));
            cmd.args(["-H", host]);
            spawn_logged(top, envdir, &format!("{daemon}.{host}"), cmd)
                .with_context(|| format!("starting {daemon} for {host}"))?;
        }
    }
    Ok(())
}

/// Start `cmd` in the background in a process group of its own, with `LSF_ENVDIR` set
/// and its output appended to `<top>/log/<name>.log`; its pid in `<top>/run/<name>.pid`
/// (where `down` finds it).
pub(crate) fn spawn_logged(top: &Path, envdir: &Path, name: &str, mut cmd: Command) -> Result<()> {
    let log_path = top.join("log").join(format!("{name}.log"));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    let child = cmd
        .env("LSF_ENVDIR", envdir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()?;
    std::fs::write(
        pid_dir(top).join(format!("{name}.pid")),
        child.id().to_string(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_letters() {
        assert_eq!(letters(0), "A");
        assert_eq!(letters(2), "C");
        assert_eq!(letters(25), "Z");
        assert_eq!(letters(26), "AA");
    }

    /// Issue 30 item 13: `cargo xtask up --dir X` prints the matching `down --dir X`.
    #[test]
    fn up_with_a_directory_prints_the_matching_down() {
        let tmp = std::env::temp_dir().join(format!("basalt xtask {}", std::process::id()));
        assert_eq!(
            down_command(&tmp),
            format!("cargo xtask down --dir '{}'", tmp.display())
        );
        assert_eq!(
            down_command(Path::new("/tmp/xup")),
            "cargo xtask down --dir /tmp/xup"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        if let Ok(d) = default_dir(None) {
            assert_eq!(down_command(&d), "cargo xtask down");
        }
    }
}
