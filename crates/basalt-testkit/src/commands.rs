//! [`Commands`]: running the command binaries (bsub, bjobs, ...) against a test
//! cluster, whether its daemons are processes or tasks of the test.

use crate::text::output_text;
use anyhow::{Context, Result, anyhow, bail};
use std::path::Path;
use std::process::{Command, Output};

/// A cluster the real commands can be run against.
pub trait Commands {
    /// A command from the build, with this cluster's LSF_ENVDIR.
    fn command(&self, name: &str) -> Command;

    /// Run a command to completion.
    fn run(&self, name: &str, args: &[&str]) -> Result<Output> {
        self.command(name)
            .args(args)
            .output()
            .with_context(|| format!("running {name}"))
    }

    /// Run a command and return its stdout when it exits 0.
    fn stdout_ok(&self, name: &str, args: &[&str]) -> Option<String> {
        self.run(name, args)
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Run bsub with `args` from `cwd`; the job id. Fails unless bsub exits 0 and prints
    /// exactly one `Job <N> is submitted to ...` line.
    fn bsub(&self, cwd: &Path, args: &[&str]) -> Result<u64> {
        let o = self
            .command("bsub")
            .args(args)
            .current_dir(cwd)
            .output()
            .context("running bsub")?;
        if !o.status.success() {
            bail!("bsub {args:?} failed: {}", output_text(&o));
        }
        let out = String::from_utf8_lossy(&o.stdout);
        let line = out.lines().next().unwrap_or("");
        if out.lines().count() != 1 || !line.contains("is submitted to") {
            bail!(
                "bsub printed more or other than one line: {}",
                output_text(&o)
            );
        }
        line.strip_prefix("Job <")
            .and_then(|r| r.split('>').next())
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| anyhow!("no job id in {line:?}"))
    }

    /// Run a command that must succeed; its stdout.
    fn ok(&self, cmd: &str, args: &[&str]) -> Result<String> {
        let o = self.run(cmd, args)?;
        if !o.status.success() {
            bail!("{cmd} {args:?} failed: {}", output_text(&o));
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }
}
