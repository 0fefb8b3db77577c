//! Daemons and commands a test runs on its own schedule, without borrowing the
//! [`crate::ProcessCluster`] (from other threads, or while the cluster's daemons change):
//! [`CommandsAt`] runs the commands with the cluster's `LSF_ENVDIR` from a directory;
//! [`HostDaemons`] runs one host's sbatchd (started with `--no-mbatchd`) and an mbatchd
//! the test starts, kills with SIGKILL, stops and continues itself.

use crate::Commands;
use anyhow::{Context, Result, anyhow, bail};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The commands of a cluster, run from `cwd`, without what the caller's environment
/// could add (a host, an mbatchd address, retry bounds, a submission token).
#[derive(Debug, Clone)]
pub struct CommandsAt {
    pub bin: PathBuf,
    pub envdir: PathBuf,
    pub cwd: PathBuf,
}

impl CommandsAt {
    pub fn new(c: &crate::ProcessCluster, cwd: PathBuf) -> CommandsAt {
        CommandsAt {
            bin: c.bin.clone(),
            envdir: c.envdir.clone(),
            cwd,
        }
    }
}

impl Commands for CommandsAt {
    fn command(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_HOST")
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("BASALT_MBD_ADDR")
            .env_remove("LSB_NTRIES")
            .env_remove("BASALT_SUBMIT_TOKEN")
            .env_remove("BASALT_CMD_TIMEOUT")
            .current_dir(&self.cwd)
            .stdin(Stdio::null());
        c
    }
}

/// One host's sbatchd and mbatchd, run by the test (logs in the cluster's log
/// directory); killed when dropped (a stopped mbatchd is continued first).
pub struct HostDaemons {
    pub bin: PathBuf,
    pub envdir: PathBuf,
    pub logdir: PathBuf,
    pub host: String,
    pub mbatchd: Option<Child>,
    pub sbatchd: Option<Child>,
}

impl HostDaemons {
    pub fn new(c: &crate::ProcessCluster, host: &str) -> HostDaemons {
        HostDaemons {
            bin: c.bin.clone(),
            envdir: c.envdir.clone(),
            logdir: c.dir.path().join("log"),
            host: host.to_owned(),
            mbatchd: None,
            sbatchd: None,
        }
    }

    /// Start `daemon` for this host with `extra` arguments, its output appended to
    /// `<daemon>.<host>.log`.
    pub fn spawn(&self, daemon: &str, extra: &[&str]) -> Result<Child> {
        let log_path = self.logdir.join(format!("{daemon}.{}.log", self.host));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        Command::new(self.bin.join(daemon))
            .args(["-H", &self.host])
            .args(extra)
            .env("LSF_ENVDIR", &self.envdir)
            .env("BASALT_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {daemon} for {}", self.host))
    }

    /// sbatchd, told not to start mbatchd (the test does).
    pub fn start_sbatchd(&mut self) -> Result<()> {
        if self.sbatchd.is_some() {
            bail!("sbatchd already runs");
        }
        self.sbatchd = Some(self.spawn("sbatchd", &["--no-mbatchd"])?);
        Ok(())
    }

    pub fn start_mbatchd(&mut self) -> Result<()> {
        if self.mbatchd.is_some() {
            bail!("mbatchd already runs");
        }
        self.mbatchd = Some(self.spawn("mbatchd", &[])?);
        Ok(())
    }

    /// SIGKILL mbatchd and reap it. Fails if it had already exited by itself.
    pub fn kill9_mbatchd(&mut self) -> Result<()> {
        let mut child = self
            .mbatchd
            .take()
            .ok_or_else(|| anyhow!("no mbatchd to kill"))?;
        if let Some(status) = child.try_wait()? {
            bail!("mbatchd had exited by itself before the kill: {status}");
        }
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    /// Send `sig` (SIGSTOP, SIGCONT...) to the mbatchd this test started.
    pub fn signal_mbatchd(&self, sig: nix::sys::signal::Signal) -> Result<()> {
        let child = self.mbatchd.as_ref().ok_or_else(|| anyhow!("no mbatchd"))?;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id())?);
        nix::sys::signal::kill(pid, sig)?;
        Ok(())
    }
}

impl Drop for HostDaemons {
    fn drop(&mut self) {
        if self.mbatchd.is_some() {
            let _ = self.signal_mbatchd(nix::sys::signal::Signal::SIGCONT);
        }
        for mut c in [self.mbatchd.take(), self.sbatchd.take()]
            .into_iter()
            .flatten()
        {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
