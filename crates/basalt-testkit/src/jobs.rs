//! Jobs as the tests see them through the commands: the job table from `bjobs
//! -json`, waits for a job state, the submitted job id, and a work directory every
//! test user can write.

use crate::commands::Commands;
use crate::text::output_text;
use crate::wait::wait_for;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One job as `bjobs -o "jobid stat exit_code exec_host queue"` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub stat: String,
    pub exit_code: String,
    pub exec_host: String,
    pub queue: String,
}

/// The records of `bjobs -a -u all -json -o <fields>` (none when bjobs prints nothing,
/// as when it knows no job).
pub fn bjobs_records(c: &impl Commands, fields: &str) -> Result<Vec<serde_json::Value>> {
    let o = c.run("bjobs", &["-a", "-u", "all", "-json", "-o", fields])?;
    let out = String::from_utf8_lossy(&o.stdout);
    if out.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("bjobs -json: {}", output_text(&o)))?;
    Ok(v["RECORDS"].as_array().cloned().unwrap_or_default())
}

/// A string field of a `bjobs -json` record ("" when absent).
pub fn field(r: &serde_json::Value, k: &str) -> String {
    r[k].as_str().unwrap_or("").to_string()
}

/// Every job bjobs knows (all users, finished ones too), from its JSON output.
pub fn jobs(c: &impl Commands) -> Result<BTreeMap<u64, Row>> {
    let mut m = BTreeMap::new();
    for r in bjobs_records(c, "jobid stat exit_code exec_host queue")? {
        let Ok(id) = field(&r, "JOBID").parse::<u64>() else {
            continue;
        };
        m.insert(
            id,
            Row {
                stat: field(&r, "STAT"),
                exit_code: field(&r, "EXIT_CODE"),
                exec_host: field(&r, "EXEC_HOST"),
                queue: field(&r, "QUEUE"),
            },
        );
    }
    Ok(m)
}

/// Wait until bjobs shows job `id` in state `stat`.
pub fn wait_state(c: &impl Commands, id: u64, stat: &str, deadline: Duration) -> Result<Row> {
    wait_for(&format!("job {id} to be {stat}"), deadline, || {
        match jobs(c) {
            Ok(m) => {
                let r = m.get(&id).cloned();
                (r.clone().filter(|r| r.stat == stat), format!("{r:?}"))
            }
            Err(e) => (None, e.to_string()),
        }
    })
}

/// Wait until every job of `ids` is DONE or EXIT; the job table then.
pub fn wait_finished(
    c: &impl Commands,
    ids: &[u64],
    deadline: Duration,
) -> Result<BTreeMap<u64, Row>> {
    wait_for("every job to finish", deadline, || match jobs(c) {
        Ok(m) => {
            let left: Vec<_> = ids
                .iter()
                .filter(|id| {
                    !m.get(id)
                        .is_some_and(|r| r.stat == "DONE" || r.stat == "EXIT")
                })
                .collect();
            if left.is_empty() {
                (Some(m), String::new())
            } else {
                let sample: Vec<_> = left.iter().take(5).map(|id| (id, m.get(id))).collect();
                (None, format!("{} unfinished, e.g. {sample:?}", left.len()))
            }
        }
        Err(e) => (None, e.to_string()),
    })
}

/// The job id in bsub's `Job <N> is submitted to ...`.
pub fn job_id(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Job <"))
        .and_then(|r| r.split('>').next())
        .and_then(|n| n.parse().ok())
}

/// `<top>/work-area`, a directory every test user can write (mode 1777), with every
/// directory above it made traversable.
pub fn work_dir(top: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let d = top.join("work-area");
    std::fs::create_dir_all(&d)?;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777))?;
    let mut p = top.to_path_buf();
    // Let other users traverse to it.
    loop {
        if let Ok(m) = std::fs::metadata(&p) {
            let mode = m.permissions().mode();
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode | 0o711));
        }
        if !p.pop() || p.as_os_str().is_empty() || p == Path::new("/") {
            break;
        }
    }
    Ok(d)
}

/// Is the test running as root (may create users, run jobs as others)?
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Say on the test's output that `test` is skipped, and why. Written to the process's
/// stderr directly, not through `eprintln!`, which libtest captures and shows only for
/// failing tests: a skipped test passes, and its line must still be seen.
pub fn skip(test: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {why}");
}

/// A pseudo-terminal of `rows` x `cols` for a command under test (its standard streams
/// the slave, the test driving the master): (master, slave), both close-on-exec.
pub fn test_pty(rows: u16, cols: u16) -> Result<(std::fs::File, std::fs::File)> {
    let ws = nix::pty::Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = nix::pty::openpty(&ws, None)?;
    for fd in [&pty.master, &pty.slave] {
        nix::fcntl::fcntl(
            fd,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )?;
    }
    Ok((
        std::fs::File::from(pty.master),
        std::fs::File::from(pty.slave),
    ))
}

/// Everything the master of a test's pseudo-terminal gives until its slave is closed
/// everywhere.
pub fn read_pty(mut master: std::fs::File) -> String {
    use std::io::Read;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// A user of this machine for a test: (uid, gid), created with `useradd` when missing
/// (root only; None when it cannot be).
pub fn test_user(name: &str) -> Option<(u32, u32)> {
    let find = || {
        nix::unistd::User::from_name(name)
            .ok()
            .flatten()
            .map(|u| (u.uid.as_raw(), u.gid.as_raw()))
    };
    if let Some(u) = find() {
        return Some(u);
    }
    let _ = std::process::Command::new("useradd")
        .args(["-M", "-s", "/bin/sh", name])
        .output();
    find()
}
