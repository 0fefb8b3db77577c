//! Daemon control through the daemons (`lsadmin limstartup/limshutdown/limrestart/
//! reconfig`, `lsadmin resstartup/...`, `badmin hstartup/hshutdown/hrestart/reconfig`).
//!
//! lim and sbatchd each serve [`ControlService`] (the `DaemonControl` gRPC service)
//! on their own port, to the cluster's administrators only. What it does:
//! * **SHUTDOWN** and **RESTART** of the daemon asked: it tells its [`Control`] handle,
//!   which ends the daemon's serving loop like SIGTERM does. A restart checks the
//!   configuration files first (a file that does not load is reported with file and line,
//!   and the daemon goes on), and the daemon's `main` then replaces the process image
//!   with a fresh one ([`Control::finish`]): the same pid, so systemd and `cargo xtask
//!   down` still know it.
//! * **RECONFIG**: the daemon's own reload hook (sbatchd re-reads lsb.* without a
//!   restart); a daemon without one refuses it.
//! * **LOCK** / **UNLOCK** (`lsadmin limlock [-l seconds]` / `limunlock`): the LIM's
//!   lock hook ([`ControlService::with_lock`]) locks or unlocks its host; a daemon
//!   without one refuses them.
//! * **STARTUP** of another daemon of the same host (the asked one is running, the
//!   other is not): `systemctl start basalt-<daemon>` when systemd runs the machine and
//!   knows the unit, otherwise the daemon's binary, found beside the asking daemon's own
//!   (or in `LSF_SERVERDIR`), started in a session of its own with the same host and
//!   `LSF_ENVDIR`.
//!
//! Inputs: the request and its credential, the configuration. Outputs: the reply, the
//! handle's action, a started process.

use basalt_auth::{Authenticator, Need, Verifier};
use basalt_config::Config;
use basalt_proto::common::{self as pb, ControlOp, Daemon, daemon_control_server::DaemonControl};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::watch;
use tonic::{Request, Response, Status};
use tracing::{info, warn};

/// What a daemon was asked to do with itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Shutdown,
    Restart,
}

/// A daemon's stop/restart switch: the control service sets it, the daemon's serving
/// loop ends when it is set, `main` restarts the process when it says so.
#[derive(Debug, Clone)]
pub struct Control {
    tx: Arc<watch::Sender<Option<Action>>>,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            tx: Arc::new(watch::channel(None).0),
        }
    }
}

static PROCESS: OnceLock<Control> = OnceLock::new();

impl Control {
    /// The process's own handle, for a daemon `main` (one daemon per process).
    pub fn for_process() -> Control {
        PROCESS.get_or_init(Control::default).clone()
    }

    /// The handle a daemon's `run` uses: the process's when its `main` made one, else a
    /// handle of its own (in-process test clusters run several daemons in one process).
    pub fn current() -> Control {
        PROCESS.get().cloned().unwrap_or_default()
    }

    pub fn request(&self, action: Action) {
        self.tx.send_replace(Some(action));
    }

    pub fn action(&self) -> Option<Action> {
        *self.tx.borrow()
    }

    /// Resolves once an action was requested.
    pub async fn requested(&self) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// `shutdown`, or an action requested of this handle, whichever comes first.
    pub fn or_shutdown(
        &self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let me = self.clone();
        async move {
            tokio::select! {
                _ = shutdown => {}
                _ = me.requested() => {}
            }
        }
    }

    /// For `main` once the daemon stopped: when a restart was asked, replace this
    /// process with a fresh start of the same program and arguments (returns only if
    /// that failed, with why).
    pub fn finish(&self) -> Option<std::io::Error> {
        if self.action() != Some(Action::Restart) {
            return None;
        }
        info!("restarting in place");
        Some(reexec())
    }
}

/// exec(2) this program again with its arguments: argv[0] stays as it was (so the
/// process shows the same command line), the image is /proc/self/exe's.
fn reexec() -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from(&argv0));
    std::process::Command::new(exe)
        .arg0(argv0)
        .args(args)
        .exec()
}

/// The daemon's name as LSF's commands say it.
pub fn daemon_name(d: Daemon) -> &'static str {
    match d {
        Daemon::Lim => "lim",
        Daemon::Res => "res",
        Daemon::Sbatchd => "sbatchd",
        Daemon::Unspecified => "?",
    }
}

/// A daemon's own configuration check before a restart: Ok, or the errors (file:line).
pub type CheckFn = Arc<dyn Fn(&Path) -> Result<(), String> + Send + Sync>;
/// A daemon's reload of its configuration (RECONFIG): what changed, or why not.
pub type ReloadFn = Arc<dyn Fn() -> Result<String, String> + Send + Sync>;
/// A LIM's lock of its host: `Some(seconds)` locks it (0: until unlocked), `None`
/// unlocks it; Ok, or LSF's reason (`Host is already locked`, `Host is not locked`).
pub type LockFn = Arc<dyn Fn(Option<u32>) -> Result<(), String> + Send + Sync>;

/// The `DaemonControl` service of one daemon.
#[derive(Clone)]
pub struct ControlService {
    me: Daemon,
    host: String,
    config: Arc<Config>,
    verifier: Verifier,
    control: Control,
    check: CheckFn,
    reload: Option<ReloadFn>,
    lock: Option<LockFn>,
}

impl std::fmt::Debug for ControlService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlService")
            .field("me", &self.me)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// The configuration check of lim and res: lsf.conf, lsf.shared, lsf.cluster.
pub fn check_lim_files(envdir: &Path) -> Result<(), String> {
    basalt_config::load_lim(envdir)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The configuration check of sbatchd: every file, lsb.* included.
pub fn check_all_files(envdir: &Path) -> Result<(), String> {
    basalt_config::load(envdir)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl ControlService {
    pub fn new(
        me: Daemon,
        host: &str,
        config: Arc<Config>,
        verifier: Verifier,
        control: Control,
        check: CheckFn,
    ) -> ControlService {
        ControlService {
            me,
            host: host.to_owned(),
            config,
            verifier,
            control,
            check,
            reload: None,
            lock: None,
        }
    }

    /// With a LOCK / UNLOCK hook (the LIM's).
    pub fn with_lock(mut self, lock: LockFn) -> ControlService {
        self.lock = Some(lock);
        self
    }

    /// With a RECONFIG hook.
    pub fn with_reload(mut self, reload: ReloadFn) -> ControlService {
        self.reload = Some(reload);
        self
    }

    /// The tonic server, ready for a router.
    pub fn server(self) -> pb::daemon_control_server::DaemonControlServer<ControlService> {
        pb::daemon_control_server::DaemonControlServer::new(self)
    }

    /// Root, the uid this daemon runs as (a personal cluster's owner), or one of
    /// lsf.cluster's administrators.
    fn is_admin(&self, uid: u32, user: &str) -> bool {
        uid == 0
            || uid == nix::unistd::geteuid().as_raw()
            || self.config.cluster.admins.iter().any(|a| a == user)
    }

    fn reply(&self, ok: bool, message: impl Into<String>) -> Response<pb::ControlReply> {
        Response::new(pb::ControlReply {
            ok,
            message: message.into(),
            host: self.host.clone(),
        })
    }

    /// Set the action a moment from now, so that the reply leaves before the daemon
    /// stops serving.
    fn request_soon(&self, action: Action) {
        let control = self.control.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            control.request(action);
        });
    }

    /// Carry out `op` on `daemon` (the caller is checked already); `lock_seconds`: how
    /// long a LOCK holds (0 = until UNLOCK).
    pub fn perform(
        &self,
        daemon: Daemon,
        op: ControlOp,
        lock_seconds: u32,
    ) -> Result<String, String> {
        let me = daemon_name(self.me);
        const UNKNOWN: &str = "no daemon or no operation given (or one this daemon does not know)";
        if daemon == Daemon::Unspecified {
            return Err(UNKNOWN.into());
        }
        match (op, daemon == self.me) {
            (ControlOp::Unspecified, _) => Err(UNKNOWN.into()),
            (ControlOp::Startup, true) => Err(format!("{me} is running already")),
            (ControlOp::Startup, false) => start_daemon(&self.config, &self.host, daemon),
            (_, false) => Err(format!(
                "{me} does not {} {}: ask it of {} itself",
                op_word(op),
                daemon_name(daemon),
                daemon_name(daemon)
            )),
            (ControlOp::Shutdown, true) => {
                info!("shutdown asked through DaemonControl");
                self.request_soon(Action::Shutdown);
                Ok(format!("{me} on {} is shutting down", self.host))
            }
            (ControlOp::Restart, true) => {
                (self.check)(&self.config.envdir).map_err(|e| {
                    format!("the configuration files do not load; {me} goes on as it is:\n{e}")
                })?;
                info!("restart asked through DaemonControl");
                self.request_soon(Action::Restart);
                Ok(format!("{me} on {} is restarting", self.host))
            }
            (ControlOp::Reconfig, true) => match &self.reload {
                Some(reload) => reload(),
                None => Err(format!("{me} re-reads its configuration only at a restart")),
            },
            (ControlOp::Lock | ControlOp::Unlock, true) => {
                let Some(lock) = &self.lock else {
                    return Err(format!("{me} has no host lock: ask the host's LIM"));
                };
                if op == ControlOp::Unlock {
                    lock(None)?;
                    return Ok("Host is unlocked".into());
                }
                lock(Some(lock_seconds))?;
                Ok(if lock_seconds == 0 {
                    "Host is locked".into()
                } else {
                    format!("Host is locked for {lock_seconds} seconds")
                })
            }
        }
    }
}

fn op_word(op: ControlOp) -> &'static str {
    match op {
        ControlOp::Startup => "start",
        ControlOp::Shutdown => "shut down",
        ControlOp::Restart => "restart",
        ControlOp::Reconfig => "reconfigure",
        ControlOp::Lock => "lock",
        ControlOp::Unlock => "unlock",
        ControlOp::Unspecified => "?",
    }
}

#[tonic::async_trait]
impl DaemonControl for ControlService {
    async fn control(
        &self,
        request: Request<pb::ControlRequest>,
    ) -> Result<Response<pb::ControlReply>, Status> {
        let who = self.verifier.verify(&request, Need::User).await?;
        let req = request.into_inner();
        let daemon = Daemon::try_from(req.daemon).unwrap_or(Daemon::Unspecified);
        let op = ControlOp::try_from(req.op).unwrap_or(ControlOp::Unspecified);
        if !self.is_admin(who.uid, &who.user) {
            warn!(user = %who.user, "daemon control refused: not an administrator");
            return Ok(self.reply(
                false,
                format!(
                    "User permission denied: {} is not a cluster administrator",
                    who.user
                ),
            ));
        }
        info!(user = %who.user, from = %who.host, ?daemon, ?op, "daemon control");
        let service = self.clone();
        // A start waits for systemctl or a fork: not on the async workers.
        let seconds = req.lock_seconds;
        let result = tokio::task::spawn_blocking(move || service.perform(daemon, op, seconds))
            .await
            .unwrap_or_else(|e| Err(format!("the request failed: {e}")));
        Ok(match result {
            Ok(m) => self.reply(true, m),
            Err(m) => self.reply(false, m),
        })
    }
}

/// Start `daemon` on this host (see the module docs).
fn start_daemon(config: &Config, host: &str, daemon: Daemon) -> Result<String, String> {
    let name = daemon_name(daemon);
    let unit = format!("basalt-{name}.service");
    if Path::new("/run/systemd/system").is_dir() && systemd_knows(&unit) {
        let out = std::process::Command::new("systemctl")
            .args(["start", &unit])
            .output()
            .map_err(|e| format!("systemctl start {unit}: {e}"))?;
        return if out.status.success() {
            Ok(format!("systemctl start {unit}"))
        } else {
            Err(format!(
                "systemctl start {unit} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        };
    }
    let exe = daemon_binary(config, name).ok_or_else(|| {
        format!("cannot find the {name} program beside this daemon's own or in LSF_SERVERDIR")
    })?;
    spawn_detached(&exe, host, &config.envdir)?;
    Ok(format!("started {}", exe.display()))
}

fn systemd_knows(unit: &str) -> bool {
    std::process::Command::new("systemctl")
        .args(["cat", unit])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `name` beside this program (as it was started: argv[0]'s directory, so a
/// symlinked bin directory stays the one used), else in LSF_SERVERDIR.
fn daemon_binary(config: &Config, name: &str) -> Option<PathBuf> {
    let argv0 = std::env::args_os().next().map(PathBuf::from);
    let beside = argv0
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::current_exe().ok())
        .and_then(|p| p.parent().map(|d| d.join(name)));
    let serverdir = config
        .lsf_conf
        .get("LSF_SERVERDIR")
        .map(|d| config.resolve_path(d).join(name));
    [beside, serverdir]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
}

/// Start `exe -H host` in a session of its own, its output where this daemon's goes.
fn spawn_detached(exe: &Path, host: &str, envdir: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["-H", host])
        .env("LSF_ENVDIR", envdir)
        .stdin(std::process::Stdio::null())
        .process_group(0);
    let child = cmd
        .spawn()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    // Reap it in the background (it runs on; only its exit status is collected).
    let pid = child.id();
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    info!(pid, "started {}", exe.display());
    Ok(())
}

/// The port `daemon` of `host` listens on.
fn daemon_addr(
    config: &Config,
    host: &str,
    daemon: Daemon,
) -> Result<std::net::SocketAddr, String> {
    match daemon {
        Daemon::Lim => crate::lim_addr(config, host),
        Daemon::Sbatchd => crate::sbd_addr(config, host),
        Daemon::Res => crate::res_addr(config, host),
        Daemon::Unspecified => return Err("no daemon given".into()),
    }
    .map_err(|e| e.to_string())
}

/// Does something listen on `daemon`'s port of `host`?
pub async fn answers(config: &Config, host: &str, daemon: Daemon, timeout: Duration) -> bool {
    let Ok(addr) = daemon_addr(config, host, daemon) else {
        return false;
    };
    matches!(
        tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// Ask the daemon `at` of `host` to perform `op` on `daemon`: what it said, or why not.
pub async fn ask(
    config: &Config,
    host: &str,
    at: Daemon,
    daemon: Daemon,
    op: ControlOp,
    auth: &Authenticator,
    timeout: Duration,
) -> Result<String, String> {
    let req = pb::ControlRequest {
        daemon: daemon as i32,
        op: op as i32,
        lock_seconds: 0,
    };
    send(config, host, at, req, auth, timeout).await
}

/// `lsadmin limlock [-l seconds]` (`Some(seconds)`, 0 = until unlocked) or `limunlock`
/// (`None`) of `host`, asked of its LIM: what it said (`Host is locked`), or why not.
pub async fn lock(
    config: &Config,
    host: &str,
    seconds: Option<u32>,
    auth: &Authenticator,
) -> Result<String, String> {
    let req = pb::ControlRequest {
        daemon: Daemon::Lim as i32,
        op: if seconds.is_some() {
            ControlOp::Lock
        } else {
            ControlOp::Unlock
        } as i32,
        lock_seconds: seconds.unwrap_or(0),
    };
    send(config, host, Daemon::Lim, req, auth, Duration::from_secs(5)).await
}

/// Send `req` to the daemon `at` of `host`.
async fn send(
    config: &Config,
    host: &str,
    at: Daemon,
    req: pb::ControlRequest,
    auth: &Authenticator,
    timeout: Duration,
) -> Result<String, String> {
    let addr = daemon_addr(config, host, at)?;
    let channel = crate::auth_channel(addr, host, timeout, auth).map_err(|e| e.to_string())?;
    let mut client = pb::daemon_control_client::DaemonControlClient::new(channel);
    match client.control(req).await {
        Ok(r) => {
            let r = r.into_inner();
            if r.ok { Ok(r.message) } else { Err(r.message) }
        }
        Err(s) if s.code() == tonic::Code::Unavailable => Err(format!(
            "{} on {host} does not answer at {addr}",
            daemon_name(at)
        )),
        Err(s) if s.code() == tonic::Code::Unimplemented => Err(format!(
            "{} on {host} does not take control requests (an older version?)",
            daemon_name(at)
        )),
        Err(s) if s.message().is_empty() => Err(format!("{:?}", s.code())),
        Err(s) => Err(s.message().to_owned()),
    }
}

/// Which running daemons of a host can start `daemon` (in the order they are asked).
fn starters(daemon: Daemon) -> &'static [Daemon] {
    match daemon {
        Daemon::Lim => &[Daemon::Sbatchd],
        Daemon::Sbatchd | Daemon::Res => &[Daemon::Lim, Daemon::Sbatchd],
        Daemon::Unspecified => &[],
    }
}

/// `op` on `daemon` of `host`, asked of the right daemon: the daemon itself, or for a
/// STARTUP another daemon of the host, after which this waits (up to 15 s) until the
/// started one answers. Ok: a note to print after `done` (empty for none).
pub async fn request(
    config: &Config,
    host: &str,
    daemon: Daemon,
    op: ControlOp,
    auth: &Authenticator,
) -> Result<String, String> {
    let timeout = Duration::from_secs(5);
    if op != ControlOp::Startup {
        return ask(config, host, daemon, daemon, op, auth, timeout)
            .await
            .map(|_| String::new());
    }
    let name = daemon_name(daemon);
    if answers(config, host, daemon, Duration::from_secs(2)).await {
        return Ok(format!("{name} is running already"));
    }
    let mut why = Vec::new();
    for &at in starters(daemon) {
        match ask(config, host, at, daemon, op, auth, timeout).await {
            Ok(_) => {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
                while tokio::time::Instant::now() < deadline {
                    if answers(config, host, daemon, Duration::from_secs(1)).await {
                        return Ok(String::new());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                return Err(format!(
                    "{name} was started but does not answer after 15 s (see its log)"
                ));
            }
            Err(e) => why.push(e),
        }
    }
    Err(format!(
        "no daemon of {host} could start {name} ({})",
        why.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_action_ends_the_shutdown_future_and_says_which() {
        let c = Control::default();
        assert_eq!(c.action(), None);
        let fut = c.or_shutdown(std::future::pending());
        let c2 = c.clone();
        tokio::spawn(async move { c2.request(Action::Restart) });
        tokio::time::timeout(std::time::Duration::from_secs(5), fut)
            .await
            .expect("the action ends the future");
        assert_eq!(c.action(), Some(Action::Restart));
        // A shutdown is not a restart: finish does nothing.
        let s = Control::default();
        s.request(Action::Shutdown);
        assert!(s.finish().is_none());
    }

    #[test]
    fn daemon_names_are_lsf_s() {
        assert_eq!(daemon_name(Daemon::Lim), "lim");
        assert_eq!(daemon_name(Daemon::Res), "res");
        assert_eq!(daemon_name(Daemon::Sbatchd), "sbatchd");
    }
}
