//! mbatchd supervision (daemon-behaviour.md §1): on the master host sbatchd runs
//! `mbatchd -H <host> -d <envdir>` and restarts it when it exits.
//!
//! How soon depends on whether the mbatchd that exited had served:
//! * An mbatchd reports once it holds the `#lsb.event.lock` lock, has replayed
//!   lsb.events and listens on its port: it sends `READY=1\nMAINPID=<pid>` (the
//!   `sd_notify` datagram format) to the socket named by [`NOTIFY_ENV`], which sbatchd
//!   binds (an abstract Unix socket of its own) and passes to every mbatchd it starts.
//!   A report counts only when its `MAINPID` is the current child's pid.
//! * An mbatchd that had served and then died — killed (kill -9, the OOM killer), a
//!   crash, or any exit but a resignation — is restarted **at once**: its successor
//!   takes the lock over without waiting (the holder named this host and a dead pid,
//!   see `basalt-mbatchd`'s journal) and serves again within about a second.
//! * After exit 202 (`MASTER_RECONFIG`, `badmin mbdrestart`) the restart is immediate too.
//! * Anything else is a start-up failure (configuration errors, exit 205; the lock held
//!   by an mbatchd on another host, exit 203; a crash before serving) and is retried
//!   after 1, 2, 4, ... seconds, capped at 30 s; the count is reset by an mbatchd that
//!   served or ran for a minute, so a crash loop at start-up cannot spin.
//!
//! On a master candidate, sbatchd watches the event-log lock while another host is
//! master (`lockwatch`) and hands what it saw to the mbatchd it starts when this host is
//! elected (`BASALT_MBD_LOCK_SEEN`), so that the staleness proof of a dead master's lock
//! has mostly run by then.
//!
//! Every exit is logged with its status and the reason for the delay chosen. When
//! another host becomes master (or sbatchd stops) its mbatchd gets SIGTERM, then
//! SIGKILL after 10 s. mbatchd's stdout and stderr are sbatchd's own (the same log).

use crate::Shared;
use crate::lockwatch::{self, LockWatch};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tracing::{info, warn};

/// Exit code of an mbatchd asked to restart (`badmin mbdrestart`).
pub const MASTER_RECONFIG: i32 = 202;
/// Exit code of an mbatchd that found it is no longer on the master host.
pub const MASTER_RESIGN: i32 = 201;
/// The environment variable naming the socket an mbatchd reports `READY=1` on (an
/// abstract socket when it starts with `@`, as `NOTIFY_SOCKET`).
pub const NOTIFY_ENV: &str = "BASALT_MBD_NOTIFY_SOCKET";

const MAX_BACKOFF: Duration = Duration::from_secs(30);
const STABLE_RUN: Duration = Duration::from_secs(60);

/// The delay before the next start after `failures` consecutive start-up failures.
pub fn backoff(exit_code: Option<i32>, failures: u32) -> Duration {
    if exit_code == Some(MASTER_RECONFIG) {
        return Duration::ZERO;
    }
    let secs = 1u64 << failures.saturating_sub(1).min(6);
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

/// How an mbatchd ended, as far as the restart decision goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// It had reported `READY=1` (lock taken, log replayed, port bound).
    pub served: bool,
    /// How long it ran.
    pub ran: Duration,
}

impl Exit {
    fn from_status(status: &std::process::ExitStatus, served: bool, ran: Duration) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        Exit {
            code: status.code(),
            signal: status.signal(),
            served,
            ran,
        }
    }

    fn how(&self) -> String {
        match (self.code, self.signal) {
            (_, Some(s)) => {
                let name = nix::sys::signal::Signal::try_from(s)
                    .map_or_else(|_| format!("signal {s}"), |sig| sig.as_str().to_owned());
                format!("was killed by {name}")
            }
            (Some(c), _) => format!("exited with code {c}{}", code_meaning(c)),
            (None, None) => "ended".to_owned(),
        }
    }
}

fn code_meaning(code: i32) -> &'static str {
    match code {
        MASTER_RESIGN => " (resigned: this host is no longer master)",
        MASTER_RECONFIG => " (restart requested)",
        203 => " (fatal error, e.g. the event log lock held by an mbatchd elsewhere)",
        205 => " (configuration errors)",
        _ => "",
    }
}

/// What to do after an mbatchd ended: the delay before the next start, the new count
/// of consecutive start-up failures, and why (for the log).
pub fn after_exit(exit: &Exit, failures: u32) -> (Duration, u32, String) {
    if exit.code == Some(MASTER_RECONFIG) {
        return (
            Duration::ZERO,
            0,
            "restart requested: restarting at once".into(),
        );
    }
    if exit.served && exit.code != Some(MASTER_RESIGN) {
        return (
            Duration::ZERO,
            0,
            "it had taken the event log lock and served: restarting at once".into(),
        );
    }
    let failures = if exit.served || exit.ran >= STABLE_RUN {
        1
    } else {
        failures.saturating_add(1)
    };
    let wait = backoff(exit.code, failures);
    let why = if exit.served {
        format!("it resigned; restarting in {wait:?} if still master")
    } else {
        format!(
            "it never served (start-up failure {failures} in a row): restarting in \
             {wait:?} if still master"
        )
    };
    (wait, failures, why)
}

/// The pid in a `READY=1` report (`READY=1\nMAINPID=<pid>`), if it is one.
pub fn ready_pid(msg: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(msg).ok()?;
    let mut ready = false;
    let mut pid = None;
    for line in text.lines() {
        match line.trim().split_once('=') {
            Some(("READY", "1")) => ready = true,
            Some(("MAINPID", p)) => pid = p.trim().parse().ok(),
            _ => {}
        }
    }
    pid.filter(|_| ready)
}

/// The socket mbatchds report on: an abstract Unix datagram socket unique to this
/// sbatchd, and its name as [`NOTIFY_ENV`] gives it (`@...`).
fn notify_socket() -> std::io::Result<(tokio::net::UnixDatagram, String)> {
    use std::os::linux::net::SocketAddrExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!("basalt-sbatchd-{}-{nanos}-mbd", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let sock = std::os::unix::net::UnixDatagram::bind_addr(&addr)?;
    sock.set_nonblocking(true)?;
    Ok((
        tokio::net::UnixDatagram::from_std(sock)?,
        format!("@{name}"),
    ))
}

/// Does a waiting report say that `pid` serves? Reads every report queued.
fn drain_reports(sock: Option<&tokio::net::UnixDatagram>, pid: u32) -> bool {
    let Some(sock) = sock else { return false };
    let mut buf = [0u8; 512];
    let mut served = false;
    while let Ok(n) = sock.try_recv(&mut buf) {
        served |= ready_pid(&buf[..n]) == Some(pid);
    }
    served
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

fn spawn(
    exe: &Path,
    shared: &Shared,
    notify: Option<&str>,
    lock_seen: Option<&str>,
) -> std::io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("-H")
        .arg(&shared.host)
        .arg("-d")
        .arg(&shared.config.envdir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(false);
    match notify {
        Some(name) => cmd.env(NOTIFY_ENV, name),
        None => cmd.env_remove(NOTIFY_ENV),
    };
    match lock_seen {
        Some(seen) => cmd.env(lockwatch::LOCK_SEEN_ENV, seen),
        None => cmd.env_remove(lockwatch::LOCK_SEEN_ENV),
    };
    cmd.spawn()
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

/// A task aborted when this is dropped (the lock watcher ends with `supervise`).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The mbatchd this sbatchd runs.
struct Running {
    child: tokio::process::Child,
    pid: u32,
    since: Instant,
    /// It reported `READY=1`.
    served: bool,
}

/// Run until `stop`: keep an mbatchd running while this host is the master.
pub async fn supervise(
    shared: Arc<Shared>,
    given: Option<PathBuf>,
    mut master: watch::Receiver<Option<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let exe = mbatchd_path(&shared, given);
    let (mut notify, mut notify_name) = match notify_socket() {
        Ok((s, n)) => (Some(s), Some(n)),
        Err(e) => {
            warn!(
                "cannot open the socket mbatchd reports on ({e}); every mbatchd exit is \
                 then restarted with the start-up back-off"
            );
            (None, None)
        }
    };
    // What this host saw of the event-log lock while it was not master (lockwatch.rs).
    let lock_watch = lockwatch::watches(&shared).then(|| {
        let w = Arc::new(Mutex::new(LockWatch::new(lockwatch::heartbeat(&shared))));
        let task = tokio::spawn(lockwatch::run(
            shared.clone(),
            w.clone(),
            master.clone(),
            stop.clone(),
        ));
        (w, AbortOnDrop(task))
    });
    let mut child: Option<Running> = None;
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
            // Reports of earlier mbatchds are stale.
            drain_reports(notify.as_ref(), 0);
            let seen = lock_watch.as_ref().and_then(|(w, _)| {
                w.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .handover(Instant::now())
            });
            match spawn(&exe, &shared, notify_name.as_deref(), seen.as_deref()) {
                Ok(c) => {
                    let pid = c.id().unwrap_or(0);
                    info!(
                        "this host is master: started {} (pid {pid}){}",
                        exe.display(),
                        seen.as_deref()
                            .map(|s| format!("; event log lock as seen here: {s}"))
                            .unwrap_or_default()
                    );
                    shared.mbatchd_pid.store(pid, Ordering::SeqCst);
                    child = Some(Running {
                        child: c,
                        pid,
                        since: Instant::now(),
                        served: false,
                    });
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
            && let Some(mut r) = child.take()
        {
            info!(
                "{} is master now: stopping this host's mbatchd",
                known.as_deref().unwrap_or("")
            );
            terminate(&mut r.child).await;
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
                    Some(r) => r.child.wait().await,
                    None => std::future::pending().await,
                }
            } => {
                let Some(r) = child.take() else { continue };
                shared.mbatchd_pid.store(0, Ordering::SeqCst);
                match status {
                    Ok(s) => {
                        // A report sent just before the end may still be queued.
                        let served = r.served || drain_reports(notify.as_ref(), r.pid);
                        let exit = Exit::from_status(&s, served, r.since.elapsed());
                        let (wait, f, why) = after_exit(&exit, failures);
                        failures = f;
                        let line = format!(
                            "mbatchd (pid {}) {} after {:.1?}: {why}",
                            r.pid,
                            exit.how(),
                            exit.ran
                        );
                        if served || exit.code == Some(MASTER_RECONFIG) {
                            info!("{line}");
                        } else {
                            warn!("{line}");
                        }
                        not_before = Instant::now() + wait;
                    }
                    Err(e) => {
                        failures += 1;
                        let wait = backoff(None, failures);
                        warn!("waiting for mbatchd (pid {}): {e}; restarting in {wait:?}", r.pid);
                        not_before = Instant::now() + wait;
                    }
                }
            }
            got = async {
                let mut buf = [0u8; 512];
                match notify.as_ref() {
                    Some(s) => s.recv(&mut buf).await.map(|n| ready_pid(&buf[..n])),
                    None => std::future::pending().await,
                }
            } => match got {
                Ok(Some(pid)) => {
                    if let Some(r) = child.as_mut()
                        && pid == r.pid
                        && !r.served
                    {
                        r.served = true;
                        failures = 0;
                        info!(
                            "mbatchd (pid {pid}) serves ({:.1?} after its start)",
                            r.since.elapsed()
                        );
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    // Not seen in practice; do not spin on a broken socket.
                    warn!(
                        "reading the socket mbatchd reports on: {e}; closing it (mbatchds \
                         started from now on are restarted with the start-up back-off)"
                    );
                    notify = None;
                    notify_name = None;
                }
            },
            r = master.changed() => {
                if r.is_err() {
                    tokio::time::sleep(tick).await;
                }
            }
            _ = tokio::time::sleep(tick) => {}
            _ = crate::stopped(&mut stop) => {
                if let Some(mut r) = child.take() {
                    info!("stopping mbatchd");
                    terminate(&mut r.child).await;
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

    fn exit(code: Option<i32>, signal: Option<i32>, served: bool, ran: u64) -> Exit {
        Exit {
            code,
            signal,
            served,
            ran: Duration::from_secs(ran),
        }
    }

    #[test]
    fn restart_backoff() {
        assert_eq!(backoff(Some(MASTER_RECONFIG), 5), Duration::ZERO);
        assert_eq!(backoff(Some(1), 1), Duration::from_secs(1));
        assert_eq!(backoff(Some(1), 2), Duration::from_secs(2));
        assert_eq!(backoff(Some(MASTER_RESIGN), 3), Duration::from_secs(4));
        assert_eq!(backoff(None, 20), Duration::from_secs(30));
    }

    #[test]
    fn a_served_mbatchd_that_dies_is_restarted_at_once_every_time() {
        // kill -9 right after serving, many times in a row: never a back-off.
        let mut failures = 0;
        for _ in 0..50 {
            let (wait, f, why) = after_exit(&exit(None, Some(9), true, 0), failures);
            assert_eq!(wait, Duration::ZERO, "{why}");
            failures = f;
        }
        assert_eq!(failures, 0);
        // A crash (abort) or a fatal exit after serving: at once too.
        assert_eq!(
            after_exit(&exit(None, Some(6), true, 3), 4).0,
            Duration::ZERO
        );
        assert_eq!(
            after_exit(&exit(Some(203), None, true, 3), 4).0,
            Duration::ZERO
        );
        // A requested restart: at once, served or not.
        assert_eq!(
            after_exit(&exit(Some(MASTER_RECONFIG), None, false, 0), 6),
            (
                Duration::ZERO,
                0,
                "restart requested: restarting at once".into()
            )
        );
    }

    #[test]
    fn start_up_failures_back_off_and_the_reason_says_so() {
        let mut failures = 0;
        let mut waits = Vec::new();
        for _ in 0..7 {
            // Configuration errors (205), then the lock held elsewhere (203), a crash.
            let (wait, f, why) = after_exit(&exit(Some(205), None, false, 0), failures);
            assert!(why.contains("never served"), "{why}");
            failures = f;
            waits.push(wait.as_secs());
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(
            after_exit(&exit(Some(203), None, false, 12), 1).0,
            Duration::from_secs(2)
        );
        assert_eq!(
            after_exit(&exit(None, Some(11), false, 0), 2).0,
            Duration::from_secs(4)
        );
        // A minute's run resets the count; so does having served (then resigned).
        assert_eq!(
            after_exit(&exit(Some(203), None, false, 61), 5).0,
            Duration::from_secs(1)
        );
        let (wait, f, why) = after_exit(&exit(Some(MASTER_RESIGN), None, true, 2), 5);
        assert_eq!((wait, f), (Duration::from_secs(1), 1));
        assert!(why.contains("resigned"), "{why}");
    }

    #[test]
    fn ready_reports() {
        assert_eq!(ready_pid(b"READY=1\nMAINPID=42\n"), Some(42));
        assert_eq!(ready_pid(b"MAINPID=42\nREADY=1"), Some(42));
        assert_eq!(ready_pid(b"STATUS=replaying\nMAINPID=42\n"), None);
        assert_eq!(ready_pid(b"READY=1\n"), None);
        assert_eq!(ready_pid(b"READY=1\nMAINPID=x\n"), None);
        assert_eq!(ready_pid(&[0xff, 0xfe]), None);
    }

    #[tokio::test]
    async fn a_report_reaches_the_socket_named_in_the_environment() {
        let (sock, name) = notify_socket().unwrap();
        let abstract_name = name.strip_prefix('@').unwrap();
        let to = {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name).unwrap()
        };
        let tx = std::os::unix::net::UnixDatagram::unbound().unwrap();
        tx.send_to_addr(b"READY=1\nMAINPID=7\n", &to).unwrap();
        tx.send_to_addr(b"READY=1\nMAINPID=8\n", &to).unwrap();
        let mut buf = [0u8; 64];
        let n = sock.recv(&mut buf).await.unwrap();
        assert_eq!(ready_pid(&buf[..n]), Some(7));
        assert!(drain_reports(Some(&sock), 8));
        assert!(!drain_reports(Some(&sock), 8));
    }
}
