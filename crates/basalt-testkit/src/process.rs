//! [`ProcessCluster`]: the real daemon binaries as child processes (kill -9,
//! restarts, network namespaces, real output), and cleaning up what they leave.

use crate::commands::Commands;
use crate::config::{
    ClusterSpec, add_lsb_params, batch_dir, host_name, write_config, write_config_at,
};
use crate::dirs::TestDir;
use crate::netns;
use crate::subnet::fresh_subnet;
use crate::wait::wait_for;
use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where the built binaries are: `$BASALT_BIN_DIR`, else the cargo profile
/// directory the running test binary lives under (target/<profile>/deps/..).
pub fn bin_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("BASALT_BIN_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe()?;
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    if !dir.join("lim").exists() {
        bail!(
            "the Basalt binaries are not built in {} (run `cargo test --workspace`, or `cargo build --workspace --bins` first)",
            dir.display()
        );
    }
    Ok(dir)
}

/// A cluster of real daemon processes (`lim`, and with [`ProcessCluster::start_batch`]
/// `sbatchd` on every host, which starts `mbatchd` on the master).
#[derive(Debug)]
pub struct ProcessCluster {
    /// The cluster's name ([`ClusterSpec::cluster`]).
    pub cluster: String,
    pub dir: TestDir,
    pub envdir: PathBuf,
    pub bin: PathBuf,
    pub hosts: Vec<String>,
    /// Its hollow hosts ([`ClusterSpec::hollow`]), run by
    /// [`ClusterSpec::hollow_processes`] `basalt-hollow` processes (daemon
    /// `basalt-hollow`, host `group<k>`: [`ProcessCluster::hollow_group`]).
    pub hollow: Vec<String>,
    hollow_processes: usize,
    /// Host `i`'s address.
    pub addrs: Vec<IpAddr>,
    /// (daemon, host) -> process.
    children: BTreeMap<(String, String), Child>,
    /// The network-namespace lab the hosts live in ([`ProcessCluster::start_batch_netns`]);
    /// dropped after the processes.
    net: Option<netns::NetLab>,
    /// Daemons and [`ProcessCluster::command`] run as this (uid, gid)
    /// ([`ClusterSpec::daemon_user`]).
    pub run_as: Option<(u32, u32)>,
    /// Hosts [`cut`](ProcessCluster::cut) off the network now.
    cut_hosts: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// [`ClusterSpec::env`]: set for every daemon and command.
    env: Vec<(String, String)>,
}

/// How many `basalt-hollow` processes share a cluster's hollow hosts (one a CPU).
pub const HOLLOW_PROCESSES: usize = 2;

impl ProcessCluster {
    /// Write the configuration and start every host's LIM.
    pub fn start(name: &str, spec: &ClusterSpec) -> Result<ProcessCluster> {
        let dir = TestDir::new(name)?;
        let subnet = fresh_subnet(7869);
        let envdir = write_config(spec, subnet, dir.path())?;
        let addrs = (0..spec.hosts).map(|i| subnet.host(i)).collect();
        let mut c = Self::unstarted(dir, envdir, spec, addrs, None)?;
        c.start_lims()?;
        Ok(c)
    }

    /// The cluster of `spec` whose configuration is written in `dir`, with nothing
    /// started yet.
    pub(crate) fn unstarted(
        dir: TestDir,
        envdir: PathBuf,
        spec: &ClusterSpec,
        addrs: Vec<IpAddr>,
        net: Option<netns::NetLab>,
    ) -> Result<ProcessCluster> {
        Ok(ProcessCluster {
            cluster: spec.cluster.clone(),
            envdir,
            bin: bin_dir()?,
            hosts: (0..spec.hosts).map(host_name).collect(),
            hollow: (0..spec.hollow).map(crate::config::hollow_name).collect(),
            hollow_processes: spec.hollow_processes.max(1),
            addrs,
            children: BTreeMap::new(),
            net,
            run_as: spec.daemon_user,
            cut_hosts: Default::default(),
            env: spec.env.clone(),
            dir,
        })
    }

    /// Start every host's LIM.
    pub(crate) fn start_lims(&mut self) -> Result<()> {
        for h in self.hosts.clone() {
            self.start_lim(&h)?;
        }
        Ok(())
    }

    /// Start sbatchd on every host (the master's starts mbatchd).
    pub(crate) fn start_sbatchds(&mut self) -> Result<()> {
        for h in self.hosts.clone() {
            self.start_daemon("sbatchd", &h)?;
        }
        Ok(())
    }

    /// Wait until mbatchd answers `bhosts` with every host `ok` (hollow ones too).
    pub fn wait_bhosts_ok(&self) -> Result<()> {
        let n = self.hosts.len() + self.hollow.len();
        wait_for(
            &format!(
                "mbatchd of cluster {} to serve bhosts with every host ok",
                self.cluster
            ),
            Duration::from_secs(60),
            || {
                let out = self.run("bhosts", &[]);
                let text = out
                    .as_ref()
                    .map(|o| {
                        format!(
                            "{}{}",
                            String::from_utf8_lossy(&o.stdout),
                            String::from_utf8_lossy(&o.stderr)
                        )
                    })
                    .unwrap_or_default();
                let ok = text
                    .lines()
                    .filter(|l| l.split_whitespace().nth(1) == Some("ok"))
                    .count();
                ((ok == n).then_some(()), text)
            },
        )
    }

    /// Like [`ProcessCluster::start`], then start sbatchd on every host, append
    /// `lsb_params` lines to lsb.params first, and wait until mbatchd answers `bhosts`
    /// with every host.
    pub fn start_batch(name: &str, spec: &ClusterSpec, lsb_params: &str) -> Result<ProcessCluster> {
        let subnet = fresh_subnet(7869);
        let mut addrs: Vec<IpAddr> = (0..spec.hosts).map(|i| subnet.host(i)).collect();
        // Hollow hosts: on /24s of their own, 254 a subnet.
        let mut left = spec.hollow;
        while left > 0 {
            let s = fresh_subnet(7869);
            let n = left.min(254);
            addrs.extend((0..n).map(|i| s.host(i)));
            left -= n;
        }
        Self::start_batch_on(name, spec, lsb_params, addrs, None)
    }

    /// Like [`ProcessCluster::start_batch`], with every host in its own network
    /// namespace ([`netns::NetLab`]): daemons run inside their host's namespace,
    /// [`ProcessCluster::command`] runs in the namespace of the first host that is not
    /// [`cut`](ProcessCluster::cut) (a user logged in there: it reaches every host not
    /// cut, and gets its credentials from that host's LIM — the root namespace is no
    /// cluster host, so its requests would be refused), [`ProcessCluster::command_on`]
    /// inside a given host's.
    pub fn start_batch_netns(
        name: &str,
        spec: &ClusterSpec,
        lsb_params: &str,
    ) -> Result<ProcessCluster> {
        let lab = netns::NetLab::new(spec.hosts)?;
        let addrs = lab.addrs();
        Self::start_batch_on(name, spec, lsb_params, addrs, Some(lab))
    }

    fn start_batch_on(
        name: &str,
        spec: &ClusterSpec,
        lsb_params: &str,
        addrs: Vec<IpAddr>,
        net: Option<netns::NetLab>,
    ) -> Result<ProcessCluster> {
        let dir = TestDir::new(name)?;
        let envdir = write_config_at(spec, &addrs, dir.path())?;
        add_lsb_params(dir.path(), &spec.cluster, lsb_params)?;
        let mut c = Self::unstarted(dir, envdir, spec, addrs, net)?;
        c.start_lims()?;
        c.wait_master(&host_name(0), Duration::from_secs(30))?;
        c.start_sbatchds()?;
        c.start_hollow()?;
        if let Err(e) = c.wait_bhosts_ok() {
            c.dir.keep();
            return Err(e);
        }
        Ok(c)
    }

    /// The hollow hosts `basalt-hollow` process `group<k>` runs.
    pub fn hollow_group(&self, k: usize) -> &[String] {
        let per = self.hollow.len().div_ceil(self.hollow_processes).max(1);
        self.hollow.chunks(per).nth(k).unwrap_or(&[])
    }

    /// Start the hollow hosts: `basalt-hollow` processes, each running a share of them
    /// (idle load, 4 CPUs each).
    pub fn start_hollow(&mut self) -> Result<()> {
        if self.hollow.is_empty() {
            return Ok(());
        }
        let per = self.hollow.len().div_ceil(self.hollow_processes).max(1);
        for (k, share) in self.hollow.clone().chunks(per).enumerate() {
            let group = format!("group{k}");
            let list = self.dir.path().join(format!("hollow.{group}"));
            std::fs::write(&list, share.join("\n"))?;
            let log_path = self
                .dir
                .path()
                .join("log")
                .join(format!("basalt-hollow.{group}.log"));
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)?;
            let mut cmd = Command::new(self.bin.join("basalt-hollow"));
            self.as_owner(&mut cmd);
            let child = cmd
                .arg("--hosts-file")
                .arg(&list)
                .env("LSF_ENVDIR", &self.envdir)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .with_context(|| format!("starting basalt-hollow {group}"))?;
            self.children
                .insert(("basalt-hollow".to_owned(), group), child);
        }
        Ok(())
    }

    /// Start (or restart) `daemon` for `host`, logging to `<dir>/log/<daemon>.<host>.log`.
    pub fn start_daemon(&mut self, daemon: &str, host: &str) -> Result<()> {
        let log_path = self
            .dir
            .path()
            .join("log")
            .join(format!("{daemon}.{host}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)?;
        let mut cmd = self.in_host_ns(host, &self.bin.join(daemon))?;
        self.as_owner(&mut cmd);
        let child = cmd
            .args(["-H", host])
            .env("LSF_ENVDIR", &self.envdir)
            .env("BASALT_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {daemon} for {host}"))?;
        self.children
            .insert((daemon.to_owned(), host.to_owned()), child);
        Ok(())
    }

    /// Start (or restart) the LIM of `host`.
    pub fn start_lim(&mut self, host: &str) -> Result<()> {
        self.start_daemon("lim", host)
    }

    /// kill -9 `daemon` of `host` (one this harness started) and reap it.
    pub fn kill9_daemon(&mut self, daemon: &str, host: &str) -> Result<()> {
        let mut child = self
            .children
            .remove(&(daemon.to_owned(), host.to_owned()))
            .ok_or_else(|| anyhow!("no {daemon} running for {host}"))?;
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    /// kill -9 the LIM of `host` and reap it.
    pub fn kill9(&mut self, host: &str) -> Result<()> {
        self.kill9_daemon("lim", host)
    }

    /// Pids of running processes of binary `name` started from this cluster's bin
    /// directory with `-H host` and this cluster's `LSF_ENVDIR`.
    pub fn pids_of(&self, name: &str, host: &str) -> Vec<i32> {
        let exe = self.bin.join(name);
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
                continue;
            };
            let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            let first = args
                .first()
                .map(|a| String::from_utf8_lossy(a).into_owned());
            let is_bin = first.is_some_and(|f| Path::new(&f) == exe);
            let has_host = args
                .windows(2)
                .any(|w| w[0] == b"-H" && w[1] == host.as_bytes());
            let zombie = std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            let ours = std::fs::read(e.path().join("environ")).is_ok_and(|env| {
                let needle = format!("LSF_ENVDIR={}", self.envdir.display());
                env.split(|b| *b == 0).any(|v| v == needle.as_bytes())
            });
            if is_bin && has_host && !zombie && ours {
                out.push(pid);
            }
        }
        out
    }

    /// kill -9 every process of `name` for `host` (e.g. the mbatchd sbatchd started).
    pub fn kill9_pids_of(&self, name: &str, host: &str) -> usize {
        self.signal_pids_of(name, host, nix::sys::signal::Signal::SIGKILL)
    }

    /// Send `sig` (SIGSTOP, SIGCONT, SIGKILL...) to every `name` process of `host`
    /// ([`ProcessCluster::pids_of`]); how many there were.
    pub fn signal_pids_of(&self, name: &str, host: &str, sig: nix::sys::signal::Signal) -> usize {
        let pids = self.pids_of(name, host);
        for p in &pids {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*p), sig);
        }
        pids.len()
    }

    /// A command running `program` in `host`'s network namespace (`ip netns exec`,
    /// which execs it: the child's pid is the program's), or plainly without a lab.
    fn in_host_ns(&self, host: &str, program: &Path) -> Result<Command> {
        let Some(lab) = &self.net else {
            return Ok(Command::new(program));
        };
        let i = self
            .hosts
            .iter()
            .position(|h| h == host)
            .ok_or_else(|| anyhow!("no host {host} in this cluster"))?;
        let mut c = Command::new("ip");
        c.args(["netns", "exec", lab.ns(i)]).arg(program);
        Ok(c)
    }

    /// Disconnect `host` from the network (network-namespace clusters only).
    pub fn cut(&self, host: &str) -> Result<()> {
        let (lab, i) = self.lab_host(host)?;
        lab.cut(i)?;
        self.cut_hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(host.to_owned());
        Ok(())
    }

    /// Reconnect `host` (network-namespace clusters only).
    pub fn heal(&self, host: &str) -> Result<()> {
        let (lab, i) = self.lab_host(host)?;
        lab.heal(i)?;
        self.cut_hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(host);
        Ok(())
    }

    /// Cut only the link between hosts `a` and `b` (network-namespace clusters only).
    pub fn cut_link(&self, a: &str, b: &str) -> Result<()> {
        let (lab, i) = self.lab_host(a)?;
        let (_, j) = self.lab_host(b)?;
        lab.cut_link(i, j)
    }

    /// Restore the link between hosts `a` and `b`.
    pub fn heal_link(&self, a: &str, b: &str) -> Result<()> {
        let (lab, i) = self.lab_host(a)?;
        let (_, j) = self.lab_host(b)?;
        lab.heal_link(i, j)
    }

    fn lab_host(&self, host: &str) -> Result<(&netns::NetLab, usize)> {
        let lab = self
            .net
            .as_ref()
            .ok_or_else(|| anyhow!("not a network-namespace cluster"))?;
        let i = self
            .hosts
            .iter()
            .position(|h| h == host)
            .ok_or_else(|| anyhow!("no host {host} in this cluster"))?;
        Ok((lab, i))
    }

    /// Run `c` as the cluster's owner when it is not the test's user.
    fn as_owner(&self, c: &mut Command) {
        use std::os::unix::process::CommandExt;
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some((uid, gid)) = self.run_as {
            c.uid(uid).gid(gid).env("HOME", self.dir.path());
        }
    }

    /// A command from the build run inside `host`'s network namespace (as a user
    /// logged in on that host), with this cluster's LSF_ENVDIR.
    pub fn command_on(&self, host: &str, name: &str) -> Result<Command> {
        let mut c = self.in_host_ns(host, &self.bin.join(name))?;
        self.as_owner(&mut c);
        c.env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_HOST")
            .env_remove("LSF_SERVER_HOSTS");
        Ok(c)
    }

    /// Run a command to completion inside `host`'s network namespace.
    pub fn run_on(&self, host: &str, name: &str, args: &[&str]) -> Result<Output> {
        self.command_on(host, name)?
            .args(args)
            .output()
            .with_context(|| format!("running {name} on {host}"))
    }

    /// A command from the build, with this cluster's LSF_ENVDIR.
    pub fn command(&self, name: &str) -> Command {
        if self.net.is_some() {
            let cut = self
                .cut_hosts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let host = self
                .hosts
                .iter()
                .find(|h| !cut.contains(*h))
                .unwrap_or(&self.hosts[0])
                .clone();
            if let Ok(c) = self.command_on(&host, name) {
                return c;
            }
        }
        let mut c = Command::new(self.bin.join(name));
        self.as_owner(&mut c);
        c.env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_HOST")
            .env_remove("LSF_SERVER_HOSTS");
        c
    }

    /// This cluster's `lsbatch/<cluster>/configdir` (lsb.params, lsb.queues, ...).
    pub fn batch_dir(&self) -> PathBuf {
        batch_dir(self.dir.path(), &self.cluster)
    }

    /// Append `text` to this cluster's lsb file `file` (`lsb.queues`, `lsb.hosts`, ...);
    /// `badmin reconfig` makes mbatchd read it.
    pub fn append_batch_file(&self, file: &str, text: &str) -> Result<()> {
        let path = self.batch_dir().join(file);
        let mut all = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        all.push_str(text);
        std::fs::write(&path, all).with_context(|| path.display().to_string())?;
        Ok(())
    }

    /// Run a command to completion.
    pub fn run(&self, name: &str, args: &[&str]) -> Result<Output> {
        Commands::run(self, name, args)
    }

    /// Run a command and return its stdout when it exits 0.
    pub fn stdout_ok(&self, name: &str, args: &[&str]) -> Option<String> {
        Commands::stdout_ok(self, name, args)
    }

    /// Run bsub with `args` from `cwd`; the job id. Fails unless bsub exits 0 and prints
    /// exactly one `Job <N> is submitted to ...` line.
    pub fn bsub(&self, cwd: &Path, args: &[&str]) -> Result<u64> {
        Commands::bsub(self, cwd, args)
    }

    /// Run a command that must succeed; its stdout.
    pub fn ok(&self, cmd: &str, args: &[&str]) -> Result<String> {
        Commands::ok(self, cmd, args)
    }

    /// The master named by `lsid`, if any.
    pub fn lsid_master(&self) -> Option<String> {
        self.stdout_ok("lsid", &[])?
            .lines()
            .find_map(|l| l.strip_prefix("My master name is ").map(str::to_owned))
    }

    /// Wait until `lsid` names `host` as master.
    pub fn wait_master(&self, host: &str, deadline: Duration) -> Result<()> {
        wait_for(&format!("lsid to name {host} as master"), deadline, || {
            let m = self.lsid_master();
            ((m.as_deref() == Some(host)).then_some(()), format!("{m:?}"))
        })
    }
}

/// Kill every process whose environment carries `LSF_ENVDIR=<envdir>` (jobs, job
/// supervisors, mbatchd): what a test cluster leaves behind when it is torn down.
pub fn kill_leftovers(envdir: &Path) -> usize {
    let needle = format!("LSF_ENVDIR={}", envdir.display());
    let me = std::process::id() as i32;
    let mut n = 0;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            n += 1;
        }
    }
    n
}

/// Wait for `child` until `deadline`: its exit status, or `None` after killing it — its
/// whole process group when it leads one (spawned with `process_group(0)`), so that
/// what it started goes too.
pub fn wait_child(
    child: &mut Child,
    deadline: Duration,
) -> Result<Option<std::process::ExitStatus>> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if Instant::now() > end {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            if nix::unistd::getpgid(Some(pid)) == Ok(pid) {
                let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Commands for ProcessCluster {
    fn command(&self, name: &str) -> Command {
        ProcessCluster::command(self, name)
    }
}

impl Drop for ProcessCluster {
    fn drop(&mut self) {
        // sbatchd first, politely (it stops its mbatchd), then everything.
        for ((daemon, _), child) in self.children.iter_mut() {
            if daemon == "sbatchd" {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
        }
        let end = Instant::now() + Duration::from_secs(3);
        for ((daemon, _), child) in self.children.iter_mut() {
            if daemon == "sbatchd" {
                while Instant::now() < end && matches!(child.try_wait(), Ok(None)) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        for (_, mut child) in std::mem::take(&mut self.children) {
            let _ = child.kill();
            let _ = child.wait();
        }
        kill_leftovers(&self.envdir);
    }
}
