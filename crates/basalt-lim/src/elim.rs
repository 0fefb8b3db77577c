//! External load indices from ELIM executables, with LSF's protocol.
//!
//! Every executable file in `LSF_SERVERDIR` named `elim` or `elim.<anything>` is
//! started by LIM and kept running (restarted after it exits, at most
//! `LSF_ELIM_RESTARTS` times when that is set). An ELIM writes lines of the form
//!
//! ```text
//! N name1 value1 name2 value2 ... nameN valueN
//! ```
//!
//! on its stdout whenever it has new values. A name is an external index defined
//! as a `Numeric` resource in `lsf.shared`, or a built-in index name, in which case
//! the ELIM's value overrides the sampled one. The values of an ELIM are dropped
//! when it exits. ELIMs get `ELIMARGS` (lsf.cluster Parameters) as arguments and
//! `LSF_ENVDIR`, `LSF_SERVERDIR`, `LSF_HOSTNAME` and `BASALT_HOST` (the host this
//! LIM plays) in their environment.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tracing::{info, warn};

/// A malformed ELIM output line.
#[derive(Debug, Error, PartialEq)]
pub enum ElimLineError {
    #[error("empty line")]
    Empty,
    #[error("first field <{0}> is not a count")]
    BadCount(String),
    #[error("count {count} announced but {pairs} name/value pairs given")]
    CountMismatch { count: usize, pairs: usize },
}

/// One value written by an ELIM; `value` is None for a non-numeric value
/// (a string resource, or `-`), which load indices cannot use.
#[derive(Debug, Clone, PartialEq)]
pub struct ElimValue {
    pub name: String,
    pub value: Option<f64>,
}

/// Parse one `N name value ...` line.
pub fn parse_line(line: &str) -> Result<Vec<ElimValue>, ElimLineError> {
    let mut words = line.split_whitespace();
    let first = words.next().ok_or(ElimLineError::Empty)?;
    let count: usize = first
        .parse()
        .map_err(|_| ElimLineError::BadCount(first.to_owned()))?;
    let rest: Vec<&str> = words.collect();
    if rest.len() != count * 2 {
        return Err(ElimLineError::CountMismatch {
            count,
            pairs: rest.len() / 2,
        });
    }
    Ok(rest
        .chunks_exact(2)
        .map(|p| ElimValue {
            name: p[0].to_owned(),
            value: p[1].parse::<f64>().ok().filter(|v| v.is_finite()),
        })
        .collect())
}

/// What an ELIM task tells its LIM.
#[derive(Debug, Clone, PartialEq)]
pub enum ElimEvent {
    Values {
        elim: String,
        values: Vec<ElimValue>,
    },
    Exited {
        elim: String,
    },
}

/// The ELIM executables in `serverdir`, sorted by name.
pub fn discover(serverdir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(entries) = std::fs::read_dir(serverdir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            (name == "elim" || name.starts_with("elim.")) && !name.ends_with('~')
        })
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// How to run ELIMs.
#[derive(Debug, Clone)]
pub struct ElimSettings {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Restarts allowed after the first start (None = unlimited).
    pub max_restarts: Option<u32>,
}

/// Run one ELIM for as long as the returned task lives (the child is killed
/// when the task is dropped or aborted), reporting its lines on `tx`.
pub fn spawn(
    path: PathBuf,
    settings: ElimSettings,
    tx: mpsc::Sender<ElimEvent>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut restarts = 0u32;
        loop {
            let child = tokio::process::Command::new(&path)
                .args(&settings.args)
                .envs(settings.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn();
            match child {
                Ok(mut child) => {
                    info!(elim = %name, pid = child.id(), "started ELIM");
                    if let Some(out) = child.stdout.take() {
                        let mut lines = BufReader::new(out).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            if line.trim().is_empty() {
                                continue;
                            }
                            match parse_line(&line) {
                                Ok(values) => {
                                    let ev = ElimEvent::Values {
                                        elim: name.clone(),
                                        values,
                                    };
                                    if tx.send(ev).await.is_err() {
                                        return;
                                    }
                                }
                                Err(e) => warn!(elim = %name, %line, "ignoring ELIM output: {e}"),
                            }
                        }
                    }
                    let status = child.wait().await;
                    warn!(elim = %name, ?status, "ELIM exited");
                }
                Err(e) => warn!(elim = %name, "cannot start ELIM: {e}"),
            }
            if tx
                .send(ElimEvent::Exited { elim: name.clone() })
                .await
                .is_err()
            {
                return;
            }
            if settings.max_restarts.is_some_and(|max| restarts >= max) {
                warn!(elim = %name, "ELIM restart limit reached; not restarting");
                return;
            }
            restarts += 1;
            let backoff = Duration::from_secs(u64::from(restarts.min(30)));
            tokio::time::sleep(backoff).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lsf_lines() {
        let v = parse_line("2 gpu_util 42.5 r1m 3").unwrap_or_default();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].name, "gpu_util");
        assert_eq!(v[0].value, Some(42.5));
        assert_eq!(v[1].value, Some(3.0));
        assert_eq!(
            parse_line("1 os linux").map(|v| v[0].value),
            Ok(None),
            "string values are kept as non-numeric"
        );
        assert_eq!(parse_line("0"), Ok(vec![]));
    }

    #[test]
    fn rejects_malformed_lines() {
        assert_eq!(parse_line("  "), Err(ElimLineError::Empty));
        assert_eq!(
            parse_line("x a 1"),
            Err(ElimLineError::BadCount("x".into()))
        );
        assert_eq!(
            parse_line("2 a 1"),
            Err(ElimLineError::CountMismatch { count: 2, pairs: 1 })
        );
    }
}
