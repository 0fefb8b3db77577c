//! mbatchd supervision (daemon-behaviour.md §1): on the master host sbatchd runs
//! `mbatchd -H <host> -d <envdir>` and restarts it when it exits — at once after
//! exit 202 (`MASTER_RECONFIG`, `badmin mbdrestart`), otherwise after 1, 2, 4, ...
//! seconds, capped at 30 s and reset once an mbatchd ran for a minute. When another
//! host becomes master (or sbatchd stops) its mbatchd gets SIGTERM, then SIGKILL
//! after 10 s. mbatchd's stdout and stderr are sbatchd's own (the same log).

use crate::Shared;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tracing::{info, warn};

/// Exit code of an mbatchd asked to restart (`badmin mbdrestart`).
pub const MASTER_RECONFIG: i32 = 202;
/// Exit code of an mbatchd that found it is no longer on the master host.
pub const MASTER_RESIGN: i32 = 201;

const MAX_BACKOFF: Duration = Duration::from_secs(30);
const STABLE_RUN: Duration = Duration::from_secs(60);

/// The delay before the next start after `failures` consecutive quick exits.
pub fn backoff(exit_code: Option<i32>, failures: u32) -> Duration {
    if exit_code == Some(MASTER_RECONFIG) {
        return Duration::ZERO;
    }
    let secs = 1u64 << failures.saturating_sub(1).min(6);
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

/// Where the mbatchd executable is: given, else next to our own executable, else
/// in `LSF_SERVERDIR`, else `mbatchd` on the PATH.
pub fn mbatchd_path(shared: &Shared, given: Option<PathBuf>) -> PathBuf {
    if let Some(p) = given {
        return p;
    }
    if let Some(p) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("mbatchd")))
        .filter(|p| p.is_file())
    {
        return p;
    }
    if let Some(d) = shared.config.lsf_conf.get("LSF_SERVERDIR") {
        let p = shared.config.resolve_path(d).join("mbatchd");
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("mbatchd")
}

async fn terminate(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        warn!("mbatchd did not stop within 10 s of SIGTERM; killing it");
        let _ = child.kill().await;
    }
}

fn spawn(exe: &Path, shared: &Shared) -> std::io::Result<tokio::process::Child> {
    tokio::process::Command::new(exe)
        .arg("-H")
        .arg(&shared.host)
        .arg("-d")
        .arg(&shared.config.envdir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(false)
        .spawn()
}

/// Does something already serve the mbatchd port of `host` (an mbatchd left by an
/// earlier sbatchd that was killed)? Then starting another would only fail.
async fn port_busy(shared: &Shared) -> bool {
    let Ok(addr) = basalt_runtime::mbd_addr(&shared.config, &shared.host) else {
        return false;
    };
    matches!(
        tokio::time::timeout(
            Duration::from_millis(300),
            tokio::net::TcpStream::connect(addr)
        )
        .await,
        Ok(Ok(_))
    )
}

/// Run until `stop`: keep an mbatchd running while this host is the master.
pub async fn supervise(
    shared: Arc<Shared>,
    given: Option<PathBuf>,
    mut master: watch::Receiver<Option<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let exe = mbatchd_path(&shared, given);
    let mut child: Option<(tokio::process::Child, Instant)> = None;
    let mut failures: u32 = 0;
    let mut not_before = Instant::now();
    let mut foreign = false;
    loop {
        let known = master.borrow_and_update().clone();
        let is_master = known
            .as_deref()
            .is_some_and(|m| basalt_core::same_host(m, &shared.host));
        let mut start = is_master && child.is_none() && Instant::now() >= not_before;
        if start && port_busy(&shared).await {
            if !foreign {
                info!(
                    "an mbatchd this sbatchd did not start serves this host's mbatchd port; not starting another while it runs"
                );
            }
            foreign = true;
            start = false;
        } else if start {
            foreign = false;
        }
        if start {
            match spawn(&exe, &shared) {
                Ok(c) => {
                    let pid = c.id().unwrap_or(0);
                    info!("this host is master: started {} (pid {pid})", exe.display());
                    shared.mbatchd_pid.store(pid, Ordering::SeqCst);
                    child = Some((c, Instant::now()));
                }
                Err(e) => {
                    failures += 1;
                    let wait = backoff(None, failures);
                    warn!("cannot start {}: {e}; retrying in {wait:?}", exe.display());
                    not_before = Instant::now() + wait;
                }
            }
        }
        if known.is_some()
            && !is_master
            && let Some((mut c, _)) = child.take()
        {
            info!(
                "{} is master now: stopping this host's mbatchd",
                known.as_deref().unwrap_or("")
            );
            terminate(&mut c).await;
            shared.mbatchd_pid.store(0, Ordering::SeqCst);
        }
        let wait_start = not_before.saturating_duration_since(Instant::now());
        let tick = if child.is_none() && is_master {
            wait_start.max(Duration::from_millis(50))
        } else {
            Duration::from_secs(1)
        };
        tokio::select! {
            status = async {
                match child.as_mut() {
                    Some((c, _)) => c.wait().await,
                    None => std::future::pending().await,
                }
            } => {
                let ran = child.take().map_or(Duration::ZERO, |(_, t)| t.elapsed());
                shared.mbatchd_pid.store(0, Ordering::SeqCst);
                let code = status.as_ref().ok().and_then(|s| s.code());
                if ran >= STABLE_RUN {
                    failures = 0;
                }
                if code == Some(MASTER_RECONFIG) {
                    failures = 0;
                } else {
                    failures += 1;
                }
                let wait = backoff(code, failures);
                match status {
                    Ok(s) => info!("mbatchd exited ({s}); restarting in {wait:?} if still master"),
                    Err(e) => warn!("waiting for mbatchd: {e}"),
                }
                not_before = Instant::now() + wait;
            }
            r = master.changed() => {
                if r.is_err() {
                    tokio::time::sleep(tick).await;
                }
            }
            _ = tokio::time::sleep(tick) => {}
            _ = crate::stopped(&mut stop) => {
                if let Some((mut c, _)) = child.take() {
                    info!("stopping mbatchd");
                    terminate(&mut c).await;
                    shared.mbatchd_pid.store(0, Ordering::SeqCst);
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_backoff() {
        assert_eq!(backoff(Some(MASTER_RECONFIG), 5), Duration::ZERO);
        assert_eq!(backoff(Some(1), 1), Duration::from_secs(1));
        assert_eq!(backoff(Some(1), 2), Duration::from_secs(2));
        assert_eq!(backoff(Some(MASTER_RESIGN), 3), Duration::from_secs(4));
        assert_eq!(backoff(None, 20), Duration::from_secs(30));
    }
}
