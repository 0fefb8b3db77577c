//! The clusters the measures run on: release daemons on loopback addresses of their own,
//! plus the probes (`lsb.events` line counter, RSS and CPU time of a process).

use super::*;

/// A Basalt cluster of release daemons (lim and sbatchd on every host, and the mbatchd the
/// master's sbatchd starts), hosts hostA, hostB, ... on loopback addresses of their own,
/// with Basalt's default timings and log level. Stopped and removed on drop.
pub struct Cluster {
    pub top: PathBuf,
    pub envdir: PathBuf,
    pub bin: PathBuf,
    /// The first host (the master at start).
    pub host: String,
    pub hosts: Vec<String>,
    /// (daemon, host, process).
    children: Vec<(String, String, Child)>,
}

/// A 127.a.b.0/24 whose .1 LIM port nobody has bound.
pub(super) fn free_loopback(port: u16) -> Result<(u8, u8)> {
    let mut x = u64::from(std::process::id())
        ^ SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    for _ in 0..1000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = 1 + (x % 254) as u8;
        let b = ((x >> 8) % 256) as u8;
        let addr = Ipv4Addr::new(127, a, b, 1);
        if std::net::TcpListener::bind((addr, port)).is_ok() {
            return Ok((a, b));
        }
    }
    bail!("no free loopback address found")
}

/// Poll `ok` every 20 ms until it holds; an error naming `what` after `limit`.
pub(crate) fn wait_until(what: &str, limit: Duration, ok: impl FnMut() -> bool) -> Result<()> {
    wait_every(what, limit, Duration::from_millis(20), ok)
}

/// Poll `ok` every `every` until it holds; an error naming `what` after `limit`.
pub(crate) fn wait_every(
    what: &str,
    limit: Duration,
    every: Duration,
    mut ok: impl FnMut() -> bool,
) -> Result<()> {
    let end = Instant::now() + limit;
    loop {
        if ok() {
            return Ok(());
        }
        if Instant::now() > end {
            bail!("timed out after {limit:?} waiting for {what}");
        }
        std::thread::sleep(every);
    }
}

/// Where a cluster's files go before its daemons start: `top` and the configuration
/// (LSF_ENVDIR); lsb.* are in `top/conf/lsbatch/bench/configdir`.
pub struct Prepared<'a> {
    pub top: &'a Path,
    pub config: &'a basalt_config::Config,
}

impl Prepared<'_> {
    /// Replace `old` by `new` in a file of the batch configuration directory.
    pub fn edit_lsb(&self, file: &str, old: &str, new: &str) -> Result<()> {
        let path = self.top.join("conf/lsbatch/bench/configdir").join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if !text.contains(old) {
            bail!("{} has no {old:?}", path.display());
        }
        std::fs::write(&path, text.replacen(old, new, 1))?;
        Ok(())
    }
}

impl Cluster {
    /// One host, the embedded default configuration.
    pub fn start(ctx: &Ctx, name: &str) -> Result<Cluster> {
        Cluster::start_with(ctx, name, 1, |_| Ok(()))
    }

    /// `n` hosts; `prepare` may change the configuration or write files (an lsb.events to
    /// replay) before any daemon starts. Returns once mbatchd answers `bhosts` with every
    /// host ok.
    pub fn start_with(
        ctx: &Ctx,
        name: &str,
        n: usize,
        prepare: impl FnOnce(&Prepared) -> Result<()>,
    ) -> Result<Cluster> {
        for b in ["lim", "res", "sbatchd", "mbatchd", "bsub", "bhosts", "lsid"] {
            if !ctx.bin.join(b).exists() {
                bail!("{} is not built", ctx.bin.join(b).display());
            }
        }
        let top = ctx.work.join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        std::fs::create_dir_all(top.join("log"))?;
        let (a, b) = free_loopback(7869)?;
        let user = crate::current_user();
        let hosts: Vec<String> = (0..n)
            .map(|i| format!("host{}", (b'A' + (i % 26) as u8) as char))
            .collect();
        let mut spec = DefaultCluster::new(
            "bench",
            &user,
            hosts
                .iter()
                .enumerate()
                .map(|(i, h)| DefaultHost {
                    name: h.clone(),
                    address: Some(IpAddr::V4(Ipv4Addr::new(127, a, b, 1 + i as u8))),
                    server: true,
                })
                .collect(),
        );
        spec.root_rex = nix::unistd::geteuid().is_root();
        let envdir = spec
            .write(&top)
            .with_context(|| format!("writing a configuration in {}", top.display()))?;
        let config = basalt_config::load(&envdir)
            .map(|l| l.config)
            .map_err(|e| anyhow!("{e}"))?;
        prepare(&Prepared {
            top: &top,
            config: &config,
        })?;
        let mut c = Cluster {
            top,
            envdir,
            bin: ctx.bin.clone(),
            host: hosts[0].clone(),
            hosts,
            children: Vec::new(),
        };
        for h in c.hosts.clone() {
            c.spawn("lim", &h)?;
            c.spawn("res", &h)?;
        }
        let master = format!("My master name is {}", c.host);
        wait_until("LIM to elect a master", Duration::from_secs(30), || {
            c.output("lsid", &[])
                .is_some_and(|o| o.lines().any(|l| l.trim() == master))
        })?;
        for h in c.hosts.clone() {
            c.spawn("sbatchd", &h)?;
        }
        c.wait_serving(Duration::from_secs(300))?;
        Ok(c)
    }

    /// Wait until mbatchd answers `bhosts` with every host of the cluster ok.
    pub fn wait_serving(&self, limit: Duration) -> Result<()> {
        wait_until("mbatchd to answer bhosts", limit, || self.serving())
    }

    /// Whether mbatchd answers `bhosts` with every host that still runs an sbatchd ok.
    pub fn serving(&self) -> bool {
        let live: Vec<&String> = self
            .hosts
            .iter()
            .filter(|h| {
                self.children
                    .iter()
                    .any(|(d, ch, _)| d == "sbatchd" && ch == *h)
            })
            .collect();
        self.output("bhosts", &[]).is_some_and(|o| {
            live.iter().all(|h| {
                o.lines()
                    .any(|l| l.split_whitespace().take(2).eq([h.as_str(), "ok"]))
            })
        })
    }

    pub(super) fn spawn(&mut self, daemon: &str, host: &str) -> Result<()> {
        let log = std::fs::File::create(self.top.join("log").join(format!("{daemon}.{host}.log")))?;
        let child = Command::new(self.bin.join(daemon))
            .args(["-H", host])
            .env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_LOG")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {daemon} for {host}"))?;
        self.children
            .push((daemon.to_owned(), host.to_owned(), child));
        Ok(())
    }

    /// kill -9 a host's lim and sbatchd (the harness's children) and its mbatchd.
    pub fn kill_host(&mut self, host: &str) {
        use nix::sys::signal::{Signal, kill};
        for (_, _, c) in self.children.iter_mut().filter(|(_, h, _)| h == host) {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.retain(|(_, h, _)| h != host);
        for pid in self.pids_of_host("mbatchd", host) {
            let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    /// Pid of the harness's `daemon` for `host`.
    pub fn daemon_pid(&self, daemon: &str, host: &str) -> Option<i32> {
        self.children
            .iter()
            .find(|(d, h, _)| d == daemon && h == host)
            .map(|(_, _, c)| c.id() as i32)
    }

    /// A command of the cluster, acting from its first host.
    pub fn command(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.env("LSF_ENVDIR", &self.envdir)
            .env("BASALT_HOST", &self.host)
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("BASALT_MBD_ADDR");
        c
    }

    pub(super) fn output(&self, name: &str, args: &[&str]) -> Option<String> {
        self.command(name)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    pub fn config(&self) -> Result<basalt_config::Config> {
        basalt_config::load(&self.envdir)
            .map(|l| l.config)
            .map_err(|e| anyhow!("{e}"))
    }

    /// Pids of processes with this cluster's LSF_ENVDIR running `bin/<name>`.
    pub fn pids_of(&self, name: &str) -> Vec<i32> {
        self.pids_where(name, |_| true)
    }

    /// Like [`Cluster::pids_of`], for the processes started with `-H host`.
    pub fn pids_of_host(&self, name: &str, host: &str) -> Vec<i32> {
        self.pids_where(name, |args| {
            args.windows(2)
                .any(|w| w[0] == b"-H" && w[1] == host.as_bytes())
        })
    }

    pub(super) fn pids_where(&self, name: &str, args_ok: impl Fn(&[&[u8]]) -> bool) -> Vec<i32> {
        let exe = self.bin.join(name);
        let exe = exe.canonicalize().unwrap_or(exe);
        let needle = format!("LSF_ENVDIR={}", self.envdir.display());
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let is_bin = std::fs::read_link(e.path().join("exe")).is_ok_and(|p| p == exe);
            if !is_bin {
                continue;
            }
            let ours = std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()));
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            if ours && args_ok(&args) {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        // sbatchd stops its mbatchd on SIGTERM; then everything else.
        for (_, _, c) in self.children.iter().rev() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGTERM);
        }
        let end = Instant::now() + Duration::from_secs(5);
        for (_, _, c) in &mut self.children {
            while Instant::now() < end && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        for pid in self.pids_of("mbatchd") {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&self.top);
    }
}

/// Counts the lines of a growing file that start with a prefix, reading only what was
/// appended since the last call (lsb.acct's JOB_FINISH records while a drain runs).
pub struct LineCounter {
    path: PathBuf,
    prefix: &'static [u8],
    offset: u64,
    partial: Vec<u8>,
    count: usize,
}

impl LineCounter {
    pub fn new(path: PathBuf, prefix: &'static [u8]) -> LineCounter {
        LineCounter {
            path,
            prefix,
            offset: 0,
            partial: Vec::new(),
            count: 0,
        }
    }

    /// Matching complete lines so far.
    pub fn poll(&mut self) -> Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(self.count),
            Err(e) => return Err(e).with_context(|| format!("opening {}", self.path.display())),
        };
        f.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        if let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') {
            let done: Vec<u8> = self.partial.drain(..=end).collect();
            self.count += done
                .split(|&b| b == b'\n')
                .filter(|l| l.starts_with(self.prefix))
                .count();
        }
        Ok(self.count)
    }
}

/// Resident set size of a process, KiB.
pub fn rss_kib(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// User + system CPU time of a process, seconds.
pub fn cpu_secs(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    Some((utime + stime) / hz)
}
