//! The checkpoint method programs, `echkpnt.<method>` and `erestart.<method>` (LSF's
//! echkpnt/erestart interface): where they are found ([`find`]: `LSB_ECHKPNT_METHOD_DIR`
//! when set, else `LSF_SERVERDIR`; `default` is built in when no program of that name
//! exists), their arguments and environment, and one of them running ([`Program`]).
//!
//! A program is started by a thread of the supervisor's ([`super::start_worker`]) that
//! takes the job's file-system identity and a working directory of its own (the job's),
//! may do some work as the user first (a restart moves the checkpoint directory), and
//! starts the program through [`crate::spawn`] (its own session, the job's user). The
//! loop learns its pid from the thread, reaps it with the supervisor's other children
//! and kills its session when it outlives the timeout. Its standard error is kept in
//! memory (the last line goes into the failure message), or its output goes to
//! `<chkpnt_dir>/<program>.out` and `.err` with `LSB_ECHKPNT_KEEP_OUTPUT=Y`.

use super::env::{DEFAULT_PATH, chkpnt_env};
use super::finish::take_fs_identity;
use super::launch::Identity;
use crate::spawn::{self, Become, Plan, SpawnError};
use crate::state::Launch;
use basalt_proto::sbatchd::JobSpec;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// How long a checkpoint or a restart may take when `BASALT_CHKPNT_TIMEOUT` is not set.
pub(super) const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// How much of a program's standard error is read for its failure message.
const CAPTURE_MAX: u64 = 4096;

/// The stack of the thread that starts a program.
const STACK: usize = 256 * 1024;

/// The checkpoint and restart timeout in force (`BASALT_CHKPNT_TIMEOUT`).
pub(super) fn timeout_secs(launch: &Launch) -> u64 {
    if launch.chkpnt_timeout_secs == 0 {
        DEFAULT_TIMEOUT_SECS
    } else {
        launch.chkpnt_timeout_secs
    }
}

/// What a method name stands for on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Method {
    /// The executable found.
    Program(PathBuf),
    /// `default`, with no program of that name: Basalt's built-in method.
    Builtin,
    /// Neither: why (the failure message).
    Missing(String),
}

/// The directory the method programs are looked for in: `LSB_ECHKPNT_METHOD_DIR`, else
/// `LSF_SERVERDIR`.
pub(super) fn method_dir(launch: &Launch) -> Option<&str> {
    fn set(d: &Option<String>) -> Option<&str> {
        d.as_deref().filter(|d| !d.trim().is_empty())
    }
    set(&launch.echkpnt_method_dir).or_else(|| set(&launch.serverdir))
}

/// Find `<kind>.<method>` (`kind` is `echkpnt` or `erestart`).
pub(super) fn find(kind: &str, method: &str, launch: &Launch) -> Method {
    let name = format!("{kind}.{method}");
    if method.is_empty() || method.contains('/') || method.starts_with('.') {
        return Method::Missing(format!("{name}: not a method name"));
    }
    let dir = method_dir(launch);
    if let Some(d) = dir {
        let p = Path::new(d).join(&name);
        if basalt_config::is_executable(&p) {
            return Method::Program(p);
        }
    }
    if method == "default" {
        return Method::Builtin;
    }
    Method::Missing(match dir {
        Some(d) => format!("{name}: not found in {d}"),
        None => {
            format!("{name}: not found (neither LSB_ECHKPNT_METHOD_DIR nor LSF_SERVERDIR is set)")
        }
    })
}

/// `echkpnt.<method> [-f] [-k] -d <chkpnt_dir> <pgid>`.
pub(super) fn echkpnt_argv(
    program: &Path,
    force: bool,
    kill: bool,
    dir: &str,
    pgid: i32,
) -> Vec<String> {
    let mut argv = vec![program.to_string_lossy().into_owned()];
    if force {
        argv.push("-f".to_owned());
    }
    if kill {
        argv.push("-k".to_owned());
    }
    argv.extend(["-d".to_owned(), dir.to_owned(), pgid.to_string()]);
    argv
}

/// `erestart.<method> [-f] <chkpnt_dir>`.
pub(super) fn erestart_argv(program: &Path, force: bool, dir: &str) -> Vec<String> {
    let mut argv = vec![program.to_string_lossy().into_owned()];
    if force {
        argv.push("-f".to_owned());
    }
    argv.push(dir.to_owned());
    argv
}

/// The environment of a method program: the user's `HOME USER LOGNAME PATH`, the job's
/// `LSB_JOBID`/`LSB_JOBINDEX`, its checkpoint variables ([`chkpnt_env`]: for a restart
/// also `LSB_RESTART=Y`), `LSB_ECHKPNT_METHOD_DIR` and `LSF_SERVERDIR` when set, and
/// `LSB_CHKPNT_MIG=Y` for a migration's checkpoint.
pub(super) fn method_env(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    migrate: bool,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: &str| env.push((k.to_owned(), v.to_owned()));
    set("HOME", &ident.home);
    set("USER", &ident.name);
    set("LOGNAME", &ident.name);
    match launch.bindir.as_deref().filter(|b| !b.is_empty()) {
        Some(b) => set("PATH", &format!("{DEFAULT_PATH}:{b}")),
        None => set("PATH", DEFAULT_PATH),
    }
    set("LSB_JOBID", &spec.job_id.to_string());
    set("LSB_JOBINDEX", &spec.idx.to_string());
    set("LSF_ENVDIR", &launch.envdir);
    for (k, v) in [
        ("LSB_ECHKPNT_METHOD_DIR", &launch.echkpnt_method_dir),
        ("LSF_SERVERDIR", &launch.serverdir),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            set(k, v);
        }
    }
    if migrate {
        set("LSB_CHKPNT_MIG", "Y");
    }
    env.extend(chkpnt_env(spec));
    env
}

/// Where a program's output goes.
#[derive(Debug, Clone)]
pub(super) enum Output {
    /// To these files (appended; `LSB_ECHKPNT_KEEP_OUTPUT=Y`).
    Keep { out: PathBuf, err: PathBuf },
    /// Standard output to `/dev/null`, standard error kept in memory for the message.
    Capture,
}

/// A program to run, as the thread that starts it sees it.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) argv: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    /// Its working directory (`/tmp` when it cannot be used).
    pub(super) cwd: PathBuf,
    pub(super) output: Output,
    pub(super) umask: u32,
}

/// What the starting thread hands back.
enum Started {
    /// Nothing was to run: done, successfully (a built-in restart).
    Nothing,
    /// The program's process; `failed`: it failed before its `exec` (and exits 127).
    Process {
        pid: Pid,
        capture: Option<File>,
        failed: Option<String>,
    },
}

/// How a [`Program`] stands.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Poll {
    /// Still at it: look again by then (or when woken).
    Pending(Instant),
    /// It ended: success, or why it failed.
    Done(Result<(), String>),
}

/// A method program being started or running, with its deadline.
#[derive(Debug)]
pub(super) struct Program {
    /// `echkpnt.<method>` or `erestart.<method>`, for messages.
    name: String,
    rx: Option<Receiver<Result<Started, String>>>,
    pid: Option<Pid>,
    status: Option<i32>,
    capture: Option<File>,
    failed: Option<String>,
    /// Its standard error file when the output is kept.
    kept_err: Option<PathBuf>,
    until: Instant,
    timeout_secs: u64,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Started::Nothing => f.write_str("Nothing"),
            Started::Process { pid, .. } => write!(f, "Process({pid})"),
        }
    }
}

impl Program {
    /// Start a thread that takes `ident`'s file-system identity and runs `work` as the
    /// user; the program `work` returns (if any) is then started.
    pub(super) fn start(
        name: String,
        timeout_secs: u64,
        ident: &Identity,
        notify: Option<Arc<OwnedFd>>,
        kept_err: Option<PathBuf>,
        work: impl FnOnce() -> Result<Option<Run>, String> + Send + 'static,
    ) -> Result<Program, String> {
        let ident = ident.clone();
        let thread_name = name.clone();
        let rx = super::start_worker("sbd-method", STACK, notify, move || {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_FS)
                .map_err(|e| format!("unshare(CLONE_FS): {e}"))?;
            take_fs_identity(&ident)?;
            match work()? {
                None => Ok(Started::Nothing),
                Some(run) => spawn_run(&thread_name, &run, &ident),
            }
        })
        .map_err(|e| format!("{name}: cannot start the thread that runs it: {e}"))?;
        Ok(Program {
            name,
            rx: Some(rx),
            pid: None,
            status: None,
            capture: None,
            failed: None,
            kept_err,
            until: Instant::now() + Duration::from_secs(timeout_secs),
            timeout_secs,
        })
    }

    /// The program's pid (0 while unknown or when nothing ran).
    pub(super) fn pid(&self) -> u32 {
        self.pid.map_or(0, |p| p.as_raw() as u32)
    }

    /// Kill its session (when it has started).
    pub(super) fn kill(&self) {
        if let Some(pid) = self.pid {
            let _ = nix::sys::signal::killpg(pid, Signal::SIGKILL);
        }
    }

    /// Is `pid` this program's process?
    pub(super) fn owns(&self, pid: Pid) -> bool {
        self.pid == Some(pid)
    }

    /// Does a process of it exist that the loop does not know yet (the thread that
    /// starts it has not answered)? Its end must then be kept for it.
    pub(super) fn starting(&self) -> bool {
        self.rx.is_some()
    }

    /// Its process ended with wait status `raw`.
    pub(super) fn reaped(&mut self, raw: i32) {
        self.status = Some(raw);
    }

    /// Where it is; once `Done`, the caller drops it. At the deadline its session is
    /// killed and it has failed.
    pub(super) fn poll(&mut self, now: Instant) -> Poll {
        if let Some(rx) = &self.rx {
            match rx.try_recv() {
                Err(TryRecvError::Empty) if now < self.until => return Poll::Pending(self.until),
                Err(TryRecvError::Empty) => {
                    self.rx = None;
                    return Poll::Done(Err(self.too_long()));
                }
                Err(TryRecvError::Disconnected) => {
                    self.rx = None;
                    return Poll::Done(Err(format!(
                        "{}: the thread starting it ended without starting it",
                        self.name
                    )));
                }
                Ok(Err(message)) => {
                    self.rx = None;
                    return Poll::Done(Err(message));
                }
                Ok(Ok(Started::Nothing)) => {
                    self.rx = None;
                    return Poll::Done(Ok(()));
                }
                Ok(Ok(Started::Process {
                    pid,
                    capture,
                    failed,
                })) => {
                    self.rx = None;
                    self.pid = Some(pid);
                    self.capture = capture;
                    self.failed = failed;
                }
            }
        }
        let Some(pid) = self.pid else {
            return Poll::Done(Err(format!("{}: not started", self.name)));
        };
        if let Some(raw) = self.status {
            return Poll::Done(self.outcome(raw));
        }
        if now >= self.until {
            let _ = nix::sys::signal::killpg(pid, Signal::SIGKILL);
            return Poll::Done(Err(self.too_long()));
        }
        Poll::Pending(self.until)
    }

    fn too_long(&self) -> String {
        format!(
            "{} did not finish within {} s",
            self.name, self.timeout_secs
        )
    }

    /// What wait status `raw` means: success (exit 0) or the failure message.
    fn outcome(&mut self, raw: i32) -> Result<(), String> {
        if let Some(f) = self.failed.take() {
            return Err(f);
        }
        let mut message = if libc::WIFEXITED(raw) {
            match libc::WEXITSTATUS(raw) {
                0 => return Ok(()),
                n => format!("{} exited with status {n}", self.name),
            }
        } else if libc::WIFSIGNALED(raw) {
            format!("{} was killed by signal {}", self.name, libc::WTERMSIG(raw))
        } else {
            format!("{} ended with wait status {raw}", self.name)
        };
        if let Some(line) = self.capture.as_ref().and_then(last_line) {
            message.push_str(": ");
            message.push_str(&line);
        } else if let Some(p) = &self.kept_err {
            message.push_str(&format!(" (its errors are in {})", p.display()));
        }
        Err(message)
    }
}

/// The last non-empty line of the end (at most [`CAPTURE_MAX`] bytes) of `f`.
pub(super) fn last_line(f: &File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let len = f.metadata().ok()?.len();
    let from = len.saturating_sub(CAPTURE_MAX);
    let mut buf = vec![0u8; usize::try_from(len - from).ok()?];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], from + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return None,
        }
    }
    buf.truncate(got);
    String::from_utf8_lossy(&buf)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// A file in memory (`memfd_create`) for a program's standard error.
fn memory_file() -> Result<File, String> {
    // SAFETY: a NUL-terminated name and integer flags; the descriptor returned (when
    // not negative) is new and owned by nothing else.
    #[allow(unsafe_code)]
    let fd = unsafe { libc::memfd_create(c"basalt-method-err".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", nix::errno::Errno::last()));
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    #[allow(unsafe_code)]
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// In the starting thread (the user's file-system identity taken): the working
/// directory, the umask, the standard streams, then the program itself.
fn spawn_run(name: &str, run: &Run, ident: &Identity) -> Result<Started, String> {
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(
        (run.umask & 0o777) as _,
    ));
    if std::env::set_current_dir(&run.cwd).is_err() {
        std::env::set_current_dir("/tmp").map_err(|e| format!("{name}: chdir /tmp: {e}"))?;
    }
    let null_in = File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    let (out, err, capture) = match &run.output {
        Output::Keep { out, err } => {
            let open = |p: &Path| {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(p)
                    .map_err(|e| format!("{name}: cannot open {}: {e}", p.display()))
            };
            (open(out)?, open(err)?, None)
        }
        Output::Capture => {
            let null_out = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .map_err(|e| format!("/dev/null: {e}"))?;
            let mem = memory_file().map_err(|e| format!("{name}: {e}"))?;
            let keep = mem.try_clone().map_err(|e| format!("{name}: dup: {e}"))?;
            (null_out, mem, Some(keep))
        }
    };
    let cstrings = |v: Vec<String>| -> Result<Vec<CString>, String> {
        v.into_iter()
            .map(|s| CString::new(s).map_err(|_| format!("{name}: an argument contains NUL")))
            .collect()
    };
    let argv = cstrings(run.argv.clone())?;
    let env = cstrings(run.env.iter().map(|(k, v)| format!("{k}={v}")).collect())?;
    let Some(program) = argv.first().cloned() else {
        return Err(format!("{name}: nothing to run"));
    };
    let mut plan = Plan {
        argv,
        env,
        pid_var: None,
        stdio: [null_in.as_raw_fd(), out.as_raw_fd(), err.as_raw_fd()],
        ctty: None,
        notes: Vec::new(),
        rlimits: Vec::new(),
        nice: 0,
        become_user: ident.switch.then(|| Become {
            groups: ident.groups.iter().map(|g| g.as_raw()).collect(),
            gid: ident.gid.as_raw(),
            uid: ident.uid.as_raw(),
        }),
    };
    let outcome = spawn::spawn(&mut plan);
    drop((null_in, out, err));
    match outcome {
        Ok(pid) => Ok(Started::Process {
            pid,
            capture,
            failed: None,
        }),
        Err(SpawnError::NoChild(e)) => Err(format!("{name}: clone: {e}")),
        Err(SpawnError::Child { pid, step, errno }) => Ok(Started::Process {
            pid,
            capture,
            failed: Some(format!(
                "{name}: {}: {errno}",
                step.describe(&program, plan.become_user.as_ref())
            )),
        }),
    }
}

/// Where a method program's output goes: kept in `<dir>/<program>.out` / `.err` with
/// `LSB_ECHKPNT_KEEP_OUTPUT`, else captured (its standard error gives a failure's
/// reason); the kept standard error's path, to read that reason from.
pub(super) fn output_for(keep: bool, dir: &str, program: &str) -> (Output, Option<PathBuf>) {
    if !keep {
        return (Output::Capture, None);
    }
    let err = Path::new(dir).join(format!("{program}.err"));
    let out = Path::new(dir).join(format!("{program}.out"));
    (
        Output::Keep {
            out,
            err: err.clone(),
        },
        Some(err),
    )
}
