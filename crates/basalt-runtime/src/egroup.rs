//! Running LSF's `egroup` program: a group whose GROUP_MEMBER is `(!)` gets its members
//! from `LSF_SERVERDIR/egroup -u <group>` (a user group of lsb.users) or
//! `LSF_SERVERDIR/egroup -m <group>` (a host group of lsb.hosts), which writes them to its
//! standard output separated by blanks.
//!
//! Shared by mbatchd (which asks about the `(!)` user groups when it starts) and the
//! `bugroup` / `bmgroup` commands (which show the members the program gives).

use basalt_config::Config;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one egroup call may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Longest output read from one call (a group of a million users fits).
const MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// Which kind of group egroup is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A user group: `egroup -u <group>`.
    User,
    /// A host group: `egroup -m <group>`.
    Host,
}

impl Kind {
    /// The option naming the kind of group.
    pub fn flag(self) -> &'static str {
        match self {
            Kind::User => "-u",
            Kind::Host => "-m",
        }
    }
}

/// `LSF_SERVERDIR/egroup`.
pub fn program(config: &Config) -> PathBuf {
    config.serverdir().join("egroup")
}

/// One `egroup -u|-m <group>` call (run with `LSF_ENVDIR=envdir`, standard input and
/// error closed, killed after `timeout`): its members, sorted and without duplicates, or
/// why there are none.
pub async fn call(
    prog: &Path,
    envdir: &Path,
    kind: Kind,
    group: &str,
    timeout: Duration,
) -> Result<Vec<String>, String> {
    use tokio::io::AsyncReadExt;
    let mut cmd = tokio::process::Command::new(prog);
    cmd.arg(kind.flag())
        .arg(group)
        .env("LSF_ENVDIR", envdir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = spawn_when_not_busy(&mut cmd)
        .await
        .map_err(|e| format!("cannot run {}: {e}", prog.display()))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| "no standard output".to_owned())?;
    let work = async {
        let mut buf = Vec::new();
        (&mut stdout)
            .take(MAX_OUTPUT as u64 + 1)
            .read_to_end(&mut buf)
            .await
            .map_err(|e| format!("reading its output: {e}"))?;
        let status = child
            .wait()
            .await
            .map_err(|e| format!("waiting for it: {e}"))?;
        Ok::<_, String>((buf, status))
    };
    let (buf, status) = match tokio::time::timeout(timeout, work).await {
        Ok(r) => r?,
        Err(_) => return Err(format!("no answer within {} s", timeout.as_secs_f64())),
    };
    if !status.success() {
        return Err(format!("{} exited with {status}", prog.display()));
    }
    if buf.len() > MAX_OUTPUT {
        return Err(format!("its output is longer than {MAX_OUTPUT} bytes"));
    }
    let text = String::from_utf8(buf).map_err(|_| "its output is not text".to_owned())?;
    let mut members: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    members.sort();
    members.dedup();
    Ok(members)
}

/// Spawns `cmd`, trying again for up to a second while the program is "Text file busy"
/// (ETXTBSY): the program is being written — an administrator copying a new egroup in,
/// or a process that forked while the file was open for writing and has not yet exec'd.
async fn spawn_when_not_busy(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("egroup");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write egroup");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    /// Host groups are asked about with `-m`, user groups with `-u`; the answer is the
    /// blank-separated words of the output, sorted, without duplicates.
    #[test]
    fn egroup_is_asked_with_m_for_host_groups_and_u_for_user_groups() {
        let dir = tempfile::tempdir().expect("tempdir");
        let prog = script(
            dir.path(),
            "[ \"$1\" = -m ] && [ \"$2\" = hg ] && echo 'hostB hostA\nhostB' && exit 0\n\
             [ \"$1\" = -u ] && [ \"$2\" = ug ] && echo \"$LSF_ENVDIR\" && exit 0\nexit 1",
        );
        let hosts = block_on(call(&prog, dir.path(), Kind::Host, "hg", TIMEOUT));
        assert_eq!(hosts, Ok(vec!["hostA".to_owned(), "hostB".to_owned()]));
        let users = block_on(call(&prog, Path::new("/env"), Kind::User, "ug", TIMEOUT));
        assert_eq!(users, Ok(vec!["/env".to_owned()]));
        assert!(block_on(call(&prog, dir.path(), Kind::User, "hg", TIMEOUT)).is_err());
    }

    /// A missing, failing or hung egroup is an error, and a hung one is given up in time.
    #[test]
    fn a_missing_failing_or_hung_egroup_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("nothing");
        assert!(block_on(call(&missing, dir.path(), Kind::User, "g", TIMEOUT)).is_err());
        let prog = script(dir.path(), "echo alice; exit 3");
        assert!(block_on(call(&prog, dir.path(), Kind::User, "g", TIMEOUT)).is_err());
        let prog = script(dir.path(), "sleep 30");
        let t = std::time::Instant::now();
        let r = block_on(call(
            &prog,
            dir.path(),
            Kind::Host,
            "g",
            Duration::from_millis(300),
        ));
        assert!(r.is_err(), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
