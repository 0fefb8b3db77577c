//! The job supervisor: one small process per job, so a job's exit status is never
//! lost and its processes survive an sbatchd restart (systemd `KillMode=process`).
//!
//! sbatchd starts it as `sbatchd --job-supervisor <state root>/<jobId>.<idx>.<attempt>`
//! (its own executable, re-executed). It is single-threaded and synchronous. It:
//! 1. leaves sbatchd's session (`setsid`), becomes a child subreaper, opens the
//!    job database (`<state root>/jobs.db`, [`crate::db`]), records its pid, start
//!    time and boot id in the job's row, and reads the job spec and launch
//!    information from it (a job that already has events is never started again);
//! 2. resolves the execution user (before forking: NSS lookups, `getgrouplist`) and
//!    forks the job's top process, which takes its own session and process group,
//!    applies rlimits/nice, switches to the user (`setgroups`, `setgid`, `setuid`,
//!    when the supervisor is root), sets the umask, copies the job file to
//!    `~/.lsbatch/` (or `/tmp/.lsbatch.<uid>/`), picks the working directory
//!    (falling back to `/tmp` like OpenLava), opens stdin/stdout/stderr, and execs
//!    `/bin/sh <job file>` with the job environment ([`crate::env`]);
//! 3. serves commands on the `ctl` socket (kill sequence, stop, resume, signal),
//!    samples the job's processes from `/proc`, enforces the run limit (and the
//!    memory and CPU limits of the whole job), and reaps every child;
//! 4. when the top process exits: kills what is left of the job, appends LSF's job
//!    report to the `-o` file and the `TERM_*` line to the `-e` file (in a child
//!    running as the user, so root-squashed homes work), removes the job file, and
//!    records the final `finished` event before exiting (retried every second
//!    while the database refuses it: the end of a job is never dropped).
//!
//! Every event is committed to the database first (the final one with
//! `synchronous=FULL`, so the job's end is on disk before sbatchd can report it;
//! see [`crate::db`]); a newline on stdout only wakes sbatchd
//! up (non-blocking: a full or broken pipe is ignored). The database connection is
//! never used in a forked child (the job's process execs, the report helper only
//! writes files), and SQLite opens its files close-on-exec, so jobs do not inherit
//! them.

use crate::db::{self, JobDb};
use crate::env::{EnvContext, host_file_text, job_env};
use crate::mail;
use crate::paths;
use crate::report::{self, ReportInput};
use crate::state::{self, Event, EventKind, Launch};
use crate::sys;
use crate::usage::{self, Tracker};
use basalt_core::job::status as jstat;
use basalt_proto::sbatchd::JobSpec;
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus};
use nix::unistd::{Gid, Pid, Uid};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::io::{BufRead, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The hidden command-line flag that selects supervisor mode.
pub const FLAG: &str = "--job-supervisor";

/// How long the finishing helper (report, cleanup) may take before it is killed.
const FINISH_HELPER_LIMIT: Duration = Duration::from_secs(60);

/// Limit indices in `JobSpec.rlimits` (LSF_RLIMIT order).
pub mod limit {
    pub const CPU: usize = 0;
    pub const FSIZE: usize = 1;
    pub const DATA: usize = 2;
    pub const STACK: usize = 3;
    pub const CORE: usize = 4;
    pub const RSS: usize = 5;
    pub const NOFILE: usize = 6;
    pub const OPEN_MAX: usize = 7;
    pub const SWAP: usize = 8;
    pub const RUN: usize = 9;
    pub const PROCESS: usize = 10;
}

/// A limit value from the spec: `None` when unlimited. Negative means unlimited;
/// so does 0, except for the core-file limit where 0 means "no core files".
pub fn limit_value(spec: &JobSpec, i: usize) -> Option<u64> {
    let v = *spec.rlimits.get(i)?;
    if v < 0 || (v == 0 && i != limit::CORE) {
        None
    } else {
        Some(v as u64)
    }
}

/// Who the job runs as.
#[derive(Debug, Clone)]
struct Identity {
    /// Switch to the user (the supervisor is root).
    switch: bool,
    uid: Uid,
    gid: Gid,
    groups: Vec<Gid>,
    name: String,
    home: String,
    shell: String,
    group_name: Option<String>,
}

fn resolve_identity(spec: &JobSpec, launch: &Launch) -> Result<Identity, String> {
    let host = launch.host.as_str();
    let root = nix::unistd::geteuid().is_root();
    let user = if root {
        match nix::unistd::User::from_name(&spec.user) {
            Ok(Some(u)) => u,
            Ok(None) => {
                return Err(format!(
                    "User <{}> does not exist on host <{host}>",
                    spec.user
                ));
            }
            Err(e) => return Err(format!("cannot look up user <{}>: {e}", spec.user)),
        }
    } else {
        match nix::unistd::User::from_uid(nix::unistd::getuid()) {
            Ok(Some(u)) => u,
            _ => {
                return Err(format!(
                    "cannot look up the daemon's own user (uid {})",
                    nix::unistd::getuid()
                ));
            }
        }
    };
    // Never a job as root by accident: mbatchd refuses root's submissions without
    // LSF_ROOT_REX, and this host checks again (a user named in the job whose account
    // here is uid 0 is refused too).
    if root && user.uid.is_root() && launch.refuse_root {
        return Err(format!(
            "User <{}> is root on host <{host}> and LSF_ROOT_REX is not set: root's jobs are not run",
            spec.user
        ));
    }
    let groups = if root {
        CString::new(user.name.clone())
            .ok()
            .and_then(|n| nix::unistd::getgrouplist(&n, user.gid).ok())
            .unwrap_or_else(|| vec![user.gid])
    } else {
        Vec::new()
    };
    let group_name = nix::unistd::Group::from_gid(user.gid)
        .ok()
        .flatten()
        .map(|g| g.name);
    Ok(Identity {
        switch: root,
        uid: user.uid,
        gid: user.gid,
        groups,
        name: user.name,
        home: user.dir.to_string_lossy().into_owned(),
        shell: user.shell.to_string_lossy().into_owned(),
        group_name,
    })
}

/// What the job's top process tells the supervisor through the start pipe.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ChildInfo {
    job_file: String,
    cwd: String,
    out_path: String,
    err_path: String,
    /// The output goes to the spool file (`<job file>.out`), removed at the end.
    spool: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum ChildMsg {
    Ready(ChildInfo),
    Failed(String),
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn raw_status(ws: WaitStatus) -> Option<(Pid, i32)> {
    match ws {
        WaitStatus::Exited(pid, code) => Some((pid, (code & 0xff) << 8)),
        WaitStatus::Signaled(pid, sig, core) => {
            Some((pid, sig as i32 | if core { 0x80 } else { 0 }))
        }
        _ => None,
    }
}

/// Entry point of supervisor mode; returns the process exit code. `dir` is the
/// job's directory under the state root: its name is the job's key and the job
/// database is `jobs.db` beside it.
pub fn main(dir: &Path) -> i32 {
    let _ = nix::unistd::setsid();
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let _ = sys::set_disposition(Signal::SIGPIPE, SigHandler::SigIgn);
    let _ = sys::set_disposition(Signal::SIGHUP, SigHandler::SigIgn);
    // sbatchd is woken through stdout; never block on it.
    if let Ok(flags) = nix::fcntl::fcntl(std::io::stdout(), nix::fcntl::FcntlArg::F_GETFL) {
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        let _ = nix::fcntl::fcntl(std::io::stdout(), nix::fcntl::FcntlArg::F_SETFL(flags));
    }
    let Some(key) = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(paths::parse_state_dir_name)
    else {
        tracing::error!(
            "job supervisor: {} is not a job directory (<jobId>.<idx>.<attempt>)",
            dir.display()
        );
        return 1;
    };
    let db_path = dir
        .parent()
        .map_or_else(|| PathBuf::from(db::DB_FILE), |p| p.join(db::DB_FILE));
    let mut jobs = match JobDb::open(&db_path, false) {
        Ok(d) => d,
        Err(e) => {
            tracing::error!("job supervisor {}: {e}", dir.display());
            return 1;
        }
    };
    if let Some(me) = state::SupervisorId::of(std::process::id())
        && let Err(e) = jobs.set_supervisor(key, &me)
    {
        tracing::error!("job supervisor {}: {e}", dir.display());
        return 1;
    }
    let mut sup = match Supervisor::open(dir, key, jobs).map_err(|e| *e) {
        Ok(s) => s,
        Err((msg, None)) => {
            tracing::error!("job supervisor {}: {msg}", dir.display());
            return 1;
        }
        Err((msg, Some(mut jobs))) => {
            tracing::error!("job supervisor {}: {msg}", dir.display());
            let mut ev = Event {
                kind: EventKind::StartFailed,
                time: now_secs(),
                message: msg,
                ..Default::default()
            };
            record_final(&mut jobs, key, &mut ev, dir);
            wake();
            return 1;
        }
    };
    sup.run()
}

/// Write a final event, retrying while the database refuses (busy, disk full):
/// the job's end must be on record before the supervisor goes.
fn record_final(jobs: &mut JobDb, key: db::Key, ev: &mut Event, dir: &Path) {
    let mut tries: u32 = 0;
    loop {
        match jobs.append_event(key, ev) {
            Ok(_) => return,
            Err(db::DbError::Finished { .. }) => {
                tracing::warn!(
                    "job supervisor {}: the job's end was already recorded (by sbatchd)",
                    dir.display()
                );
                return;
            }
            Err(db::DbError::NoJob { .. }) => {
                tracing::error!(
                    "job supervisor {}: the job left the job table; its end is not recorded",
                    dir.display()
                );
                return;
            }
            Err(e) => {
                if tries.is_multiple_of(60) {
                    tracing::error!(
                        "job supervisor {}: cannot record the job's end ({e}); retrying every second",
                        dir.display()
                    );
                }
                tries = tries.saturating_add(1);
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

/// Tell sbatchd (if it listens) that the job has new events.
fn wake() {
    let mut out = std::io::stdout();
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// How long a job may run on after SIGUSR2 at its termination time (`bsub -t`) before it
/// is killed: LSF's ten minutes.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(600);

/// Where a job is with its termination time.
#[derive(Debug, Default)]
struct Deadline {
    /// SIGUSR2 was sent.
    signalled: bool,
}

/// A `JOB_CONTROLS` action: a signal, or a command.
#[derive(Debug, Clone, PartialEq)]
enum Control {
    Signal(Signal),
    Command(String),
}

impl Control {
    /// `SIGTSTP`, `TSTP` or a number is a signal; anything else a command.
    fn parse(v: &str) -> Control {
        let single = !v.contains(char::is_whitespace);
        match basalt_core::job::signal_number(v)
            .filter(|_| single)
            .and_then(|n| Signal::try_from(n).ok())
        {
            Some(sig) => Control::Signal(sig),
            None => Control::Command(v.to_owned()),
        }
    }
}

struct Supervisor {
    dir: PathBuf,
    key: db::Key,
    spec: JobSpec,
    launch: Launch,
    jobs: JobDb,
    start_time: i64,
    /// The job's top process (= its pgid and sid).
    job: Option<Pid>,
    main_status: Option<i32>,
    helper: Option<Pid>,
    helper_status: Option<i32>,
    stopped: bool,
    /// Running time before the current RUN period, and when that period began.
    run_accum: Duration,
    running_since: Option<Instant>,
    kill_deadline: Option<Instant>,
    term_reason: Option<String>,
    /// bsub -t: SIGUSR2 at the termination time, the kill sequence (TERM_DEADLINE) at
    /// [`DEADLINE_GRACE`] after it.
    deadline: Deadline,
    tracker: Tracker,
    next_sample: Instant,
    sample_every: Duration,
}

impl Supervisor {
    /// Read the job from the database. Errors come with the database when an event
    /// can still be recorded.
    fn open(
        dir: &Path,
        key: db::Key,
        jobs: JobDb,
    ) -> Result<Supervisor, Box<(String, Option<JobDb>)>> {
        let stored = match jobs.job(key) {
            Ok(Some(j)) => j,
            Ok(None) => {
                return Err(Box::new((
                    "the job is not in the job table".to_owned(),
                    None,
                )));
            }
            Err(e @ db::DbError::Corrupt { .. }) => {
                return Err(Box::new((e.to_string(), Some(jobs))));
            }
            Err(e) => return Err(Box::new((e.to_string(), None))),
        };
        if !stored.events.is_empty() || stored.last_seq > 0 {
            // Started before (or declared dead by sbatchd): never run a job twice.
            return Err(Box::new((
                "the job already has a history; not starting it again".to_owned(),
                None,
            )));
        }
        let sample_every = Duration::from_millis(stored.launch.sample_ms.max(100));
        Ok(Supervisor {
            dir: dir.to_path_buf(),
            key,
            spec: stored.spec,
            launch: stored.launch,
            jobs,
            start_time: now_secs(),
            job: None,
            main_status: None,
            helper: None,
            helper_status: None,
            stopped: false,
            run_accum: Duration::ZERO,
            running_since: None,
            kill_deadline: None,
            term_reason: None,
            deadline: Deadline::default(),
            tracker: Tracker::default(),
            next_sample: Instant::now() + sample_every.min(Duration::from_millis(500)),
            sample_every,
        })
    }

    /// Record events (one transaction; a final event fsynced) and wake sbatchd. A
    /// final event is retried until it is on record.
    fn emit_all(&mut self, mut events: Vec<Event>) {
        let now = now_secs();
        for e in &mut events {
            if e.time == 0 {
                e.time = now;
            }
        }
        if let [one] = events.as_mut_slice()
            && one.kind.is_final()
        {
            record_final(&mut self.jobs, self.key, one, &self.dir);
        } else {
            match self.jobs.append_events(self.key, &mut events) {
                Ok(_) => {}
                Err(err @ (db::DbError::Finished { .. } | db::DbError::NoJob { .. })) => {
                    // sbatchd gave this job up (it thought this supervisor dead):
                    // the job must not run on unrecorded.
                    tracing::error!(
                        "job supervisor {}: {err}; killing the job",
                        self.dir.display()
                    );
                    self.start_kill(0, "-");
                }
                Err(err) => tracing::error!("job supervisor {}: {err}", self.dir.display()),
            }
        }
        wake();
    }

    fn emit(&mut self, e: Event) {
        self.emit_all(vec![e]);
    }

    fn start_failed(&mut self, message: String) -> i32 {
        self.emit(Event {
            kind: EventKind::StartFailed,
            message,
            ..Default::default()
        });
        1
    }

    fn run(&mut self) -> i32 {
        let ident = match resolve_identity(&self.spec, &self.launch) {
            Ok(i) => i,
            Err(msg) => return self.start_failed(msg),
        };
        // SIGCHLD arrives through a signalfd; block it before the fork so no exit
        // is missed. The child unblocks it.
        let mut chld = SigSet::empty();
        chld.add(Signal::SIGCHLD);
        if let Err(e) = nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None) {
            return self.start_failed(format!("sigprocmask: {e}"));
        }
        let sigfd =
            match SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC) {
                Ok(f) => f,
                Err(e) => return self.start_failed(format!("signalfd: {e}")),
            };
        let ctl_path = self.dir.join(state::CTL_SOCKET);
        let _ = std::fs::remove_file(&ctl_path);
        let listener = match UnixListener::bind(&ctl_path) {
            Ok(l) => l,
            Err(e) => {
                return self.start_failed(format!(
                    "cannot bind the control socket {}: {e}",
                    ctl_path.display()
                ));
            }
        };
        let _ = listener.set_nonblocking(true);
        let (rfd, wfd) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
            Ok(p) => p,
            Err(e) => return self.start_failed(format!("pipe: {e}")),
        };
        let pid = match sys::fork() {
            Ok(nix::unistd::ForkResult::Child) => {
                drop(rfd);
                drop(listener);
                drop(sigfd);
                child_main(&self.spec, &self.launch, &ident, wfd);
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => child,
            Err(e) => return self.start_failed(format!("fork: {e}")),
        };
        drop(wfd);
        let msg = read_child_msgs(rfd);
        match msg {
            Some(ChildMsg::Ready(info)) => {
                self.job = Some(pid);
                self.start_time = now_secs();
                self.running_since = Some(Instant::now());
                let started = Event {
                    kind: EventKind::Started,
                    pid: pid.as_raw() as u32,
                    pgid: pid.as_raw() as u32,
                    state: jstat::RUN,
                    ..Default::default()
                };
                let executing = Event {
                    kind: EventKind::Executing,
                    pid: pid.as_raw() as u32,
                    pgid: pid.as_raw() as u32,
                    state: jstat::RUN,
                    exec_uid: ident.uid.as_raw(),
                    exec_user: ident.name.clone(),
                    exec_home: ident.home.clone(),
                    exec_cwd: info.cwd.clone(),
                    out_path: info.out_path.clone(),
                    ..Default::default()
                };
                self.emit_all(vec![started, executing]);
                self.supervise(&sigfd, &listener);
                drop(listener);
                let _ = std::fs::remove_file(&ctl_path);
                self.finish(&sigfd, &ident, &info);
                0
            }
            other => {
                self.wait_for(&sigfd, pid, Duration::from_secs(10));
                let message = match other {
                    Some(ChildMsg::Failed(m)) => m,
                    _ => "the job's process ended before it could run the job file".to_owned(),
                };
                drop(listener);
                let _ = std::fs::remove_file(&ctl_path);
                self.start_failed(message)
            }
        }
    }

    /// Reap every exited child; remember the top process's and the helper's status.
    fn reap(&mut self) {
        loop {
            match nix::sys::wait::waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
                Err(Errno::EINTR) => continue,
                Err(_) => return,
                Ok(ws) => {
                    if let Some((pid, raw)) = raw_status(ws) {
                        if Some(pid) == self.job && self.main_status.is_none() {
                            self.main_status = Some(raw);
                        } else if Some(pid) == self.helper {
                            self.helper_status = Some(raw);
                        }
                    }
                }
            }
        }
    }

    /// Wait (reaping) until `pid` has exited or `limit` passed.
    fn wait_for(&mut self, sigfd: &SignalFd, pid: Pid, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            match nix::sys::wait::waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {}
                Ok(ws) => {
                    if raw_status(ws).is_some() {
                        if Some(pid) == self.helper {
                            self.helper_status = raw_status(ws).map(|(_, r)| r);
                        }
                        return true;
                    }
                }
                Err(Errno::EINTR) => continue,
                Err(_) => return true,
            }
            self.reap();
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let ms = left.as_millis().min(200) as u16;
            let mut fds = [PollFd::new(sigfd.as_fd(), PollFlags::POLLIN)];
            let _ = nix::poll::poll(&mut fds, PollTimeout::from(ms));
            while let Ok(Some(_)) = sigfd.read_signal() {}
        }
    }

    fn pgid(&self) -> Option<Pid> {
        self.job
    }

    fn signal_group(&self, sig: Signal) {
        if let Some(g) = self.pgid() {
            let _ = nix::sys::signal::killpg(g, sig);
        }
    }

    fn run_time(&self) -> Duration {
        self.run_accum + self.running_since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// The kill sequence: SIGINT and SIGTERM now (SIGCONT too if stopped, so they
    /// are acted on), SIGKILL after `interval` seconds. A repeated kill keeps the
    /// earlier deadline unless the new one is sooner.
    fn start_kill(&mut self, interval: u32, reason: &str) {
        if self.term_reason.is_none() && !reason.is_empty() && reason != "-" {
            self.term_reason = Some(reason.to_owned());
        }
        let deadline = Instant::now() + Duration::from_secs(u64::from(interval));
        match self.kill_deadline {
            Some(d) if d <= deadline => return,
            Some(_) => {
                self.kill_deadline = Some(deadline);
            }
            None => {
                if self.stopped {
                    self.signal_group(Signal::SIGCONT);
                }
                match self.job_control("TERMINATE") {
                    Some(c) => self.run_control(&c, 0, 0),
                    None => {
                        self.signal_group(Signal::SIGINT);
                        self.signal_group(Signal::SIGTERM);
                    }
                }
                self.kill_deadline = Some(deadline);
            }
        }
        if interval == 0 {
            self.signal_group(Signal::SIGKILL);
        }
    }

    /// The queue's `JOB_CONTROLS` action for `SUSPEND`, `RESUME` or `TERMINATE`.
    fn job_control(&self, action: &str) -> Option<Control> {
        let v = self.spec.job_controls.get(action)?.trim();
        if v.is_empty() {
            return None;
        }
        Some(Control::parse(v))
    }

    /// Carry out a `JOB_CONTROLS` action: a signal to the job's process group, or a
    /// command run with `/bin/sh -c` as the job's user, with LSF's `LSB_JOBPGIDS`,
    /// `LSB_JOBPIDS`, `LSB_JOBID`, `LSB_SUSP_REASONS` and `LSB_SUSP_SUBREASONS`. The
    /// command runs in the background (reaped with the supervisor's other children).
    fn run_control(&mut self, c: &Control, reasons: u32, subreasons: u32) {
        match c {
            Control::Signal(sig) => self.signal_group(*sig),
            Control::Command(cmd) => {
                use std::os::unix::process::CommandExt;
                let pgid = self.pgid().map_or(0, |p| p.as_raw());
                let pids = self
                    .tracker
                    .last
                    .pids
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut command = std::process::Command::new("/bin/sh");
                command
                    .arg("-c")
                    .arg(cmd)
                    .env("LSB_JOBPGIDS", pgid.to_string())
                    .env(
                        "LSB_JOBPIDS",
                        if pids.is_empty() {
                            pgid.to_string()
                        } else {
                            pids
                        },
                    )
                    .env("LSB_JOBID", self.key.0.to_string())
                    .env("LSB_JOBINDEX", self.key.1.to_string())
                    .env("LSB_SUSP_REASONS", reasons.to_string())
                    .env("LSB_SUSP_SUBREASONS", subreasons.to_string())
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                match resolve_identity(&self.spec, &self.launch) {
                    Ok(ident) => {
                        if ident.switch {
                            command.uid(ident.uid.as_raw()).gid(ident.gid.as_raw());
                        }
                        if !ident.home.is_empty() {
                            command.current_dir(&ident.home).env("HOME", &ident.home);
                        }
                        command.env("USER", &ident.name);
                    }
                    Err(e) => {
                        tracing::warn!("job control `{cmd}`: {e}; not run");
                        return;
                    }
                }
                if let Err(e) = command.spawn() {
                    tracing::warn!("job control `{cmd}`: {e}");
                }
            }
        }
    }

    fn stop(&mut self, state: u32, reasons: u32, subreasons: u32) {
        match self.job_control("SUSPEND") {
            Some(c) => self.run_control(&c, reasons, subreasons),
            None => self.signal_group(Signal::SIGSTOP),
        }
        if let Some(s) = self.running_since.take() {
            self.run_accum += s.elapsed();
        }
        self.stopped = true;
        let state = if state == 0 { jstat::USUSP } else { state };
        let reasons = if reasons == 0 && state == jstat::USUSP {
            basalt_core::job::susp::USER_STOP
        } else {
            reasons
        };
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
            kind: EventKind::State,
            pid,
            pgid: pid,
            state,
            reasons,
            subreasons,
            ..Default::default()
        });
    }

    fn resume(&mut self) {
        match self.job_control("RESUME") {
            Some(c) => self.run_control(&c, 0, 0),
            None => self.signal_group(Signal::SIGCONT),
        }
        if self.running_since.is_none() {
            self.running_since = Some(Instant::now());
        }
        self.stopped = false;
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
            kind: EventKind::State,
            pid,
            pgid: pid,
            state: jstat::RUN,
            ..Default::default()
        });
    }

    /// One control command; returns the reply line.
    fn command(&mut self, line: &str) -> String {
        let mut it = line.split_whitespace();
        let verb = it.next().unwrap_or("");
        let mut num =
            |default: u32| -> u32 { it.next().and_then(|v| v.parse().ok()).unwrap_or(default) };
        match verb {
            "PING" => "OK\n".to_owned(),
            "KILL" => {
                let interval = num(10);
                let reason = line.split_whitespace().nth(2).unwrap_or("-").to_owned();
                self.start_kill(interval, &reason);
                "OK\n".to_owned()
            }
            "STOP" => {
                let state = num(jstat::USUSP);
                let reasons = num(0);
                let subreasons = num(0);
                self.stop(state, reasons, subreasons);
                "OK\n".to_owned()
            }
            "RESUME" => {
                self.resume();
                "OK\n".to_owned()
            }
            "REASON" => {
                // Still suspended, for another reason (sbatchd's load policy).
                let state = num(jstat::SSUSP);
                let reasons = num(0);
                let subreasons = num(0);
                if self.stopped {
                    let pid = self.job.map_or(0, |p| p.as_raw() as u32);
                    self.emit(Event {
                        kind: EventKind::State,
                        pid,
                        pgid: pid,
                        state,
                        reasons,
                        subreasons,
                        ..Default::default()
                    });
                }
                "OK\n".to_owned()
            }
            "SIG" => {
                let n = num(0) as i32;
                match Signal::try_from(n) {
                    Ok(Signal::SIGSTOP) | Ok(Signal::SIGTSTP) => {
                        self.stop(jstat::USUSP, basalt_core::job::susp::USER_STOP, 0);
                        "OK\n".to_owned()
                    }
                    Ok(Signal::SIGCONT) => {
                        self.resume();
                        "OK\n".to_owned()
                    }
                    Ok(sig) => {
                        self.signal_group(sig);
                        "OK\n".to_owned()
                    }
                    Err(_) => format!("ERR invalid signal {n}\n"),
                }
            }
            _ => format!("ERR unknown command {verb}\n"),
        }
    }

    fn serve_one(&mut self, stream: UnixStream) {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let mut line = String::new();
        let mut reader = std::io::BufReader::new((&stream).take(1024));
        if reader.read_line(&mut line).is_err() || line.is_empty() {
            return;
        }
        let reply = self.command(line.trim());
        let _ = (&stream).write_all(reply.as_bytes());
    }

    fn sample(&mut self) {
        let Some(sid) = self.job else { return };
        let mut s = usage::sample_session(sid.as_raw());
        if let Ok(ru) = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        {
            s.utime += tv_secs(ru.user_time());
            s.stime += tv_secs(ru.system_time());
        }
        self.tracker.add(s);
        let pid = sid.as_raw() as u32;
        if self.tracker.worth_reporting() && self.main_status.is_none() {
            self.tracker.mark_reported();
            let t = &self.tracker;
            let e = Event {
                kind: EventKind::Rusage,
                pid,
                pgid: pid,
                state: if self.stopped { 0 } else { jstat::RUN },
                utime: t.last.utime,
                stime: t.last.stime,
                mem_kb: t.last.mem_kb,
                swap_kb: t.last.swap_kb,
                max_mem_kb: t.max_mem_kb,
                avg_mem_kb: t.avg_mem_kb(),
                pids: t.last.pids.clone(),
                ..Default::default()
            };
            self.emit(e);
        }
        // Whole-job limits sbatchd enforces.
        if self.kill_deadline.is_none() {
            let ti = self.launch.terminate_interval;
            if self.launch.enforce_memlimit
                && let Some(lim) = limit_value(&self.spec, limit::RSS)
                && self.tracker.last.mem_kb > lim
            {
                self.start_kill(ti, "TERM_MEMLIMIT");
            } else if let Some(lim) = limit_value(&self.spec, limit::CPU)
                && self.tracker.last.utime + self.tracker.last.stime > lim as f64
            {
                self.start_kill(ti, "TERM_CPULIMIT");
            }
        }
    }

    /// bsub -t: at the termination time the job gets SIGUSR2; if it still runs
    /// [`DEADLINE_GRACE`] later, the kill sequence ends it (TERM_DEADLINE). Returns when
    /// this should be looked at next.
    fn check_deadline(&mut self, now_epoch: i64, now: Instant) -> Option<Instant> {
        let term = self.spec.term_time;
        if term <= 0 || self.kill_deadline.is_some() {
            return None;
        }
        let at =
            |epoch: i64| now + Duration::from_secs(epoch.saturating_sub(now_epoch).max(0) as u64);
        if now_epoch < term {
            return Some(at(term));
        }
        if !self.deadline.signalled {
            self.deadline.signalled = true;
            if self.term_reason.is_none() {
                self.term_reason = Some("TERM_DEADLINE".to_owned());
            }
            self.signal_group(Signal::SIGUSR2);
        }
        let kill_at = term.saturating_add(DEADLINE_GRACE.as_secs() as i64);
        if now_epoch >= kill_at {
            let ti = self.launch.terminate_interval;
            self.start_kill(ti, "TERM_DEADLINE");
            return None;
        }
        Some(at(kill_at))
    }

    /// The loop while the job's top process runs.
    fn supervise(&mut self, sigfd: &SignalFd, listener: &UnixListener) {
        let run_limit = limit_value(&self.spec, limit::RUN).map(Duration::from_secs);
        loop {
            self.reap();
            if self.main_status.is_some() {
                return;
            }
            let now = Instant::now();
            let deadline_next = self.check_deadline(now_secs(), now);
            if let Some(d) = self.kill_deadline
                && now >= d
            {
                self.signal_group(Signal::SIGKILL);
                // Keep killing newcomers every second until the job is gone.
                self.kill_deadline = Some(now + Duration::from_secs(1));
            }
            if let Some(lim) = run_limit
                && self.kill_deadline.is_none()
                && self.run_time() >= lim
            {
                let ti = self.launch.terminate_interval;
                self.start_kill(ti, "TERM_RUNLIMIT");
            }
            if now >= self.next_sample {
                self.sample();
                self.next_sample = Instant::now() + self.sample_every;
            }
            let mut wake_at = self.next_sample;
            if let Some(d) = self.kill_deadline {
                wake_at = wake_at.min(d);
            }
            if let Some(d) = deadline_next {
                wake_at = wake_at.min(d);
            }
            if let Some(lim) = run_limit
                && self.running_since.is_some()
            {
                let left = lim.saturating_sub(self.run_time());
                wake_at = wake_at.min(Instant::now() + left);
            }
            let ms = wake_at
                .saturating_duration_since(Instant::now())
                .as_millis()
                .clamp(1, 60_000) as u16;
            let (sig_ready, conn_ready) = {
                let mut fds = [
                    PollFd::new(sigfd.as_fd(), PollFlags::POLLIN),
                    PollFd::new(listener.as_fd(), PollFlags::POLLIN),
                ];
                let _ = nix::poll::poll(&mut fds, PollTimeout::from(ms));
                (fds[0].any().unwrap_or(false), fds[1].any().unwrap_or(false))
            };
            if sig_ready {
                while let Ok(Some(_)) = sigfd.read_signal() {}
            }
            if conn_ready {
                while let Ok((stream, _)) = listener.accept() {
                    self.serve_one(stream);
                }
            }
        }
    }

    /// Kill whatever is left of the job: its process group, its session, and any
    /// other process reparented to us.
    fn kill_leftovers(&mut self, sigfd: &SignalFd) {
        let Some(g) = self.job else { return };
        let _ = nix::sys::signal::killpg(g, Signal::SIGKILL);
        for pid in usage::sample_session(g.as_raw()).pids {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        for pid in own_children() {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        // Reap them (bounded).
        let end = Instant::now() + Duration::from_secs(2);
        while Instant::now() < end {
            self.reap();
            if own_children().is_empty() {
                break;
            }
            let mut fds = [PollFd::new(sigfd.as_fd(), PollFlags::POLLIN)];
            let _ = nix::poll::poll(&mut fds, PollTimeout::from(50u16));
            while let Ok(Some(_)) = sigfd.read_signal() {}
        }
    }

    fn finish(&mut self, sigfd: &SignalFd, ident: &Identity, info: &ChildInfo) {
        let status = self.main_status.unwrap_or(0);
        let end_time = now_secs();
        self.kill_leftovers(sigfd);
        let ru = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok();
        let utime = ru.as_ref().map_or(0.0, |r| tv_secs(r.user_time()));
        let stime = ru.as_ref().map_or(0.0, |r| tv_secs(r.system_time()));
        let maxrss_kb = ru.as_ref().map_or(0, |r| r.max_rss().max(0) as u64);
        let max_mem_kb = self.tracker.max_mem_kb.max(maxrss_kb);
        let avg_mem_kb = match self.tracker.avg_mem_kb() {
            0 => max_mem_kb,
            a => a,
        };
        if self.term_reason.is_none()
            && limit_value(&self.spec, limit::CPU).is_some()
            && (status & 0x7f == Signal::SIGXCPU as i32
                || report::exit_code(status) == 128 + Signal::SIGXCPU as i32)
        {
            self.term_reason = Some("TERM_CPULIMIT".to_owned());
        }
        let term_reason = self.term_reason.clone().unwrap_or_default();
        let spec = &self.spec;
        let input = ReportInput {
            job_id: spec.job_id,
            idx: spec.idx,
            is_array: spec.is_array,
            job_name: paths::element_name(&spec.job_name, spec.is_array, spec.idx, &spec.command),
            cluster: self.launch.cluster.clone(),
            sender: self.launch.sender.clone(),
            user: ident.name.clone(),
            from_host: spec.from_host.clone(),
            exec_hosts: if spec.exec_hosts.is_empty() {
                vec![self.launch.host.clone()]
            } else {
                spec.exec_hosts.clone()
            },
            queue: spec.queue.clone(),
            submit_time: if spec.submit_time > 0 {
                spec.submit_time
            } else {
                self.start_time
            },
            start_time: self.start_time,
            end_time,
            home: ident.home.clone(),
            cwd: info.cwd.clone(),
            command: spec.command.clone(),
            exit_status: status,
            term_reason: term_reason.clone(),
            cpu_secs: utime + stime,
            max_mem_kb,
            avg_mem_kb,
            max_swap_kb: self.tracker.max_swap_kb,
            max_procs: self.tracker.max_procs,
            max_threads: self.tracker.max_threads,
        };
        let text = report::job_report(&input);
        self.run_finish_helper(sigfd, ident, info, &text, &term_reason);
        let pid = self.job.map_or(0, |p| p.as_raw() as u32);
        self.emit(Event {
            kind: EventKind::Finished,
            time: end_time,
            pid,
            pgid: pid,
            state: if status == 0 && term_reason.is_empty() {
                jstat::DONE
            } else {
                jstat::EXIT
            },
            exit_status: status,
            utime,
            stime,
            mem_kb: 0,
            max_mem_kb,
            avg_mem_kb,
            swap_kb: self.tracker.max_swap_kb,
            term_reason,
            ..Default::default()
        });
    }

    /// Append the report, write the TERM line to the error file, remove the job
    /// file and its companions — as the user, in a child we wait for (bounded).
    fn run_finish_helper(
        &mut self,
        sigfd: &SignalFd,
        ident: &Identity,
        info: &ChildInfo,
        text: &str,
        term_reason: &str,
    ) {
        match sys::fork() {
            Ok(nix::unistd::ForkResult::Child) => {
                let mail = Mail {
                    prog: self.launch.mail_prog.clone(),
                    to: mail::recipient(
                        &self.spec.mail_user,
                        self.launch.mail_to.as_deref(),
                        &ident.name,
                    ),
                };
                let code = match finish_as_user(ident, info, text, term_reason, &mail) {
                    Ok(()) => 0,
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "sbatchd job supervisor: {e}");
                        1
                    }
                };
                sys::exit_now(code);
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => {
                self.helper = Some(child);
                if !self.wait_for(sigfd, child, FINISH_HELPER_LIMIT) {
                    tracing::warn!(
                        "job {}: writing the job report took longer than {:?}; abandoned",
                        self.spec.job_id,
                        FINISH_HELPER_LIMIT
                    );
                    let _ = nix::sys::signal::kill(child, Signal::SIGKILL);
                    self.wait_for(sigfd, child, Duration::from_secs(2));
                }
            }
            Err(e) => tracing::error!("job {}: fork for the job report: {e}", self.spec.job_id),
        }
    }
}

fn tv_secs(tv: nix::sys::time::TimeVal) -> f64 {
    tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6
}

/// Direct children of this process (from `/proc/self/task/*/children`).
fn own_children() -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

fn read_child_msgs(rfd: OwnedFd) -> Option<ChildMsg> {
    let mut f = std::fs::File::from(rfd);
    let mut buf = String::new();
    let _ = f.read_to_string(&mut buf);
    let mut last = None;
    for line in buf.lines() {
        if let Ok(m) = serde_json::from_str::<ChildMsg>(line) {
            match m {
                ChildMsg::Failed(_) => return Some(m),
                ChildMsg::Ready(_) => last = Some(m),
            }
        }
    }
    last
}

fn switch_identity(ident: &Identity) -> Result<(), String> {
    if !ident.switch {
        return Ok(());
    }
    nix::unistd::setgroups(&ident.groups).map_err(|e| format!("setgroups: {e}"))?;
    nix::unistd::setgid(ident.gid).map_err(|e| format!("setgid({}): {e}", ident.gid))?;
    nix::unistd::setuid(ident.uid).map_err(|e| format!("setuid({}): {e}", ident.uid))?;
    Ok(())
}

/// The job's top process, after fork. Never returns.
fn child_main(spec: &JobSpec, launch: &Launch, ident: &Identity, wfd: OwnedFd) -> ! {
    let mut pipe = std::fs::File::from(wfd);
    let err = match child_setup(spec, launch, ident, &mut pipe) {
        Ok(never) => match never {},
        Err(e) => e,
    };
    if let Ok(line) = serde_json::to_string(&ChildMsg::Failed(err)) {
        let _ = writeln!(pipe, "{line}");
    }
    sys::exit_now(127)
}

enum Never {}

fn child_setup(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    pipe: &mut std::fs::File,
) -> Result<Never, String> {
    nix::unistd::setsid().map_err(|e| format!("setsid: {e}"))?;
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
    let _ = sys::set_disposition(Signal::SIGPIPE, SigHandler::SigDfl);
    let _ = sys::set_disposition(Signal::SIGHUP, SigHandler::SigIgn);
    apply_rlimits(spec, launch);
    if spec.nice != 0
        && let Err(e) = sys::set_nice(spec.nice)
    {
        tracing::debug!("nice {}: {e}", spec.nice);
    }
    switch_identity(ident)?;
    let umask = if spec.umask == 0 {
        0o022
    } else {
        spec.umask & 0o777
    };
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(umask as _));

    let job_file = place_job_file(&ident.home, ident.uid, &spec.job_file_name, &spec.job_file)?;
    let job_file_s = job_file.to_string_lossy().into_owned();
    let host_file = PathBuf::from(format!("{job_file_s}.hostfile"));
    let hosts = if spec.exec_hosts.is_empty() {
        vec![launch.host.clone()]
    } else {
        spec.exec_hosts.clone()
    };
    std::fs::write(&host_file, host_file_text(&hosts))
        .map_err(|e| format!("cannot write {}: {e}", host_file.display()))?;

    let mut notes = Vec::new();
    let want = paths::job_cwd(
        &spec.spec_cwd,
        &spec.sub_cwd,
        &ident.home,
        spec.job_id,
        spec.idx,
    );
    let cwd = match std::env::set_current_dir(&want) {
        Ok(()) => want,
        Err(e) => {
            notes.push(format!(
                "Unable to change to the working directory <{}>: {e}; the job runs in </tmp>.",
                want.display()
            ));
            let tmp = PathBuf::from("/tmp");
            std::env::set_current_dir(&tmp).map_err(|e| format!("chdir /tmp: {e}"))?;
            tmp
        }
    };

    // stdin
    let stdin = if spec.in_file.is_empty() {
        None
    } else {
        let p = paths::substitute(&spec.in_file, spec.job_id, spec.idx);
        match std::fs::File::open(&p) {
            Ok(f) => Some(f),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the input file <{p}>: {e}; using /dev/null."
                ));
                None
            }
        }
    };
    let stdin = match stdin {
        Some(f) => f,
        None => std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?,
    };
    // stdout
    let spool_path = format!("{job_file_s}.out");
    let mut given_out = None;
    let mut given_err = None;
    let (stdout, out_path, spool) = if spec.out_file.is_empty() {
        let f = open_output(&spool_path, true)
            .map_err(|e| format!("cannot open the spool file {spool_path}: {e}"))?;
        (f, spool_path.clone(), true)
    } else {
        let p = output_path(&spec.out_file, spec, "out");
        given_out = Some(p.clone());
        match open_output(&p, spec.out_overwrite) {
            Ok(f) => (f, p, false),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the output file <{p}>: {e}; the output is in <{spool_path}>."
                ));
                let f = open_output(&spool_path, true)
                    .map_err(|e| format!("cannot open the spool file {spool_path}: {e}"))?;
                (f, spool_path.clone(), false)
            }
        }
    };
    // stderr
    let (stderr, err_path) = if spec.err_file.is_empty() {
        (
            stdout.try_clone().map_err(|e| format!("dup: {e}"))?,
            out_path.clone(),
        )
    } else {
        let p = output_path(&spec.err_file, spec, "err");
        given_err = Some(p.clone());
        match open_output(&p, spec.err_overwrite) {
            Ok(f) => (f, p),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the error file <{p}>: {e}; errors go to the output file."
                ));
                (
                    stdout.try_clone().map_err(|e| format!("dup: {e}"))?,
                    out_path.clone(),
                )
            }
        }
    };
    nix::unistd::dup2_stdin(&stdin).map_err(|e| format!("dup2: {e}"))?;
    nix::unistd::dup2_stdout(&stdout).map_err(|e| format!("dup2: {e}"))?;
    nix::unistd::dup2_stderr(&stderr).map_err(|e| format!("dup2: {e}"))?;
    drop((stdin, stdout, stderr));
    for n in &notes {
        let _ = writeln!(std::io::stderr(), "{n}");
    }

    let ctx = EnvContext {
        cluster: launch.cluster.clone(),
        exec_user: ident.name.clone(),
        home: ident.home.clone(),
        shell: ident.shell.clone(),
        group: ident.group_name.clone(),
        job_file: job_file_s.clone(),
        host_file: host_file.to_string_lossy().into_owned(),
        pid: std::process::id(),
        out_file: given_out,
        err_file: given_err,
        envdir: launch.envdir.clone(),
        bindir: launch.bindir.clone(),
        serverdir: launch.serverdir.clone(),
        libdir: launch.libdir.clone(),
    };
    let env: Vec<CString> = job_env(spec, &ctx)
        .into_iter()
        .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok())
        .collect();
    // The supervisor (report, bpeek) does not run in the job's directory: give it
    // absolute paths. The job itself sees the paths as given (LSB_OUTPUTFILE).
    let absolute = |p: String| {
        if Path::new(&p).is_absolute() {
            p
        } else {
            cwd.join(&p).to_string_lossy().into_owned()
        }
    };
    let info = ChildInfo {
        job_file: job_file_s.clone(),
        cwd: cwd.to_string_lossy().into_owned(),
        out_path: absolute(out_path),
        err_path: absolute(err_path),
        spool,
    };
    let line = serde_json::to_string(&ChildMsg::Ready(info)).map_err(|e| e.to_string())?;
    writeln!(pipe, "{line}").map_err(|e| format!("start pipe: {e}"))?;
    let sh = c"/bin/sh";
    let file = CString::new(job_file_s).map_err(|_| "job file path contains NUL".to_owned())?;
    let e = nix::unistd::execve(sh, &[sh, file.as_c_str()], &env);
    Err(format!(
        "cannot execute /bin/sh: {}",
        e.err().map_or_else(String::new, |e| e.to_string())
    ))
}

/// The `-o`/`-e` path after `%J`/`%I` substitution; a directory gets LSF's
/// `<jobId>.out` (`<jobId>_<idx>.out` for array elements) inside it.
fn output_path(given: &str, spec: &JobSpec, ext: &str) -> String {
    let p = paths::substitute(given, spec.job_id, spec.idx);
    if p.ends_with('/') || Path::new(&p).is_dir() {
        let name = if spec.is_array || spec.idx != 0 {
            format!("{}_{}.{ext}", spec.job_id, spec.idx)
        } else {
            format!("{}.{ext}", spec.job_id)
        };
        Path::new(&p).join(name).to_string_lossy().into_owned()
    } else {
        p
    }
}

fn open_output(path: &str, overwrite: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).mode(0o666);
    if overwrite {
        o.write(true).truncate(true);
    } else {
        o.append(true);
    }
    o.open(path)
}

/// A directory only `uid` may use: created 0700, or existing, a real directory
/// (not a symlink) owned by `uid` when `strict`.
fn private_dir(dir: &Path, uid: Uid, strict: bool) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let md = if strict {
        std::fs::symlink_metadata(dir)?
    } else {
        std::fs::metadata(dir)?
    };
    if !md.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    if strict && md.uid() != uid.as_raw() {
        return Err(std::io::Error::other(format!(
            "owned by uid {}, not {}",
            md.uid(),
            uid
        )));
    }
    Ok(())
}

/// Copy the job file to `~/.lsbatch/<name>` (or `/tmp/.lsbatch.<uid>/<name>` when
/// the home is not usable), mode 0700, never overwriting another job's file: a
/// taken name gets a `.1`, `.2`, ... suffix.
fn place_job_file(home: &str, uid: Uid, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let name = if name.is_empty() || name.contains('/') {
        format!("{}.job", std::process::id())
    } else {
        name.to_owned()
    };
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    if !home.is_empty() && home != "/" {
        dirs.push((Path::new(home).join(".lsbatch"), false));
    }
    dirs.push((PathBuf::from(format!("/tmp/.lsbatch.{uid}")), true));
    let mut errors = Vec::new();
    for (dir, strict) in dirs {
        if let Err(e) = private_dir(&dir, uid, strict) {
            errors.push(format!("{}: {e}", dir.display()));
            continue;
        }
        for n in 0..1000u32 {
            let path = if n == 0 {
                dir.join(&name)
            } else {
                dir.join(format!("{name}.{n}"))
            };
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(bytes)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    errors.push(format!("{}: {e}", path.display()));
                    break;
                }
            }
        }
    }
    Err(format!("cannot create the job file: {}", errors.join("; ")))
}

fn apply_rlimits(spec: &JobSpec, launch: &Launch) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let kb = |i: usize| limit_value(spec, i).map(|v| v.saturating_mul(1024));
    let count = |i: usize| limit_value(spec, i);
    let mut set: Vec<(Resource, u64, bool)> = Vec::new();
    if let Some(v) = count(limit::CPU) {
        set.push((Resource::RLIMIT_CPU, v, false));
    }
    for (i, r) in [
        (limit::FSIZE, Resource::RLIMIT_FSIZE),
        (limit::DATA, Resource::RLIMIT_DATA),
        (limit::STACK, Resource::RLIMIT_STACK),
        (limit::CORE, Resource::RLIMIT_CORE),
        (limit::SWAP, Resource::RLIMIT_AS),
    ] {
        if let Some(v) = kb(i) {
            set.push((r, v, true));
        }
    }
    if !launch.enforce_memlimit
        && let Some(v) = kb(limit::RSS)
    {
        set.push((Resource::RLIMIT_RSS, v, true));
    }
    if let Some(v) = count(limit::NOFILE).or_else(|| count(limit::OPEN_MAX)) {
        set.push((Resource::RLIMIT_NOFILE, v, true));
    }
    for (r, v, hard_too) in set {
        let (_, hard) = getrlimit(r).unwrap_or((libc::RLIM_INFINITY, libc::RLIM_INFINITY));
        let soft = v.min(hard);
        let new_hard = if hard_too { soft } else { hard };
        if let Err(e) = setrlimit(r, soft, new_hard) {
            let _ = writeln!(std::io::stderr(), "setrlimit {r:?}: {e}");
        }
    }
}

/// Where the output of a job without `-o` goes.
struct Mail {
    prog: Option<String>,
    to: String,
}

/// The finishing work, in a child running as the job's user.
fn finish_as_user(
    ident: &Identity,
    info: &ChildInfo,
    text: &str,
    term_reason: &str,
    mail: &Mail,
) -> Result<(), String> {
    switch_identity(ident)?;
    let mut problems = Vec::new();
    // No -o: the output is mailed (LSF); without a working mail program it is kept in
    // the spool file, with the report, where the user can read it.
    let mailed = info.spool
        && match &mail.prog {
            Some(prog) => match mail::send(prog, &mail.to, text, Path::new(&info.out_path)) {
                Ok(()) => true,
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "mailing the output to {}: {e}; it is kept in {}",
                        mail.to,
                        info.out_path
                    );
                    false
                }
            },
            None => false,
        };
    let keep_output = !mailed;
    if keep_output && !info.out_path.is_empty() {
        match std::fs::OpenOptions::new()
            .append(true)
            .open(&info.out_path)
        {
            Ok(mut f) => {
                if let Err(e) = f.write_all(text.as_bytes()) {
                    problems.push(format!("{}: {e}", info.out_path));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", info.out_path)),
        }
    }
    if let Some(line) = report::term_reason_line(term_reason)
        && !info.err_path.is_empty()
        && info.err_path != info.out_path
    {
        match std::fs::OpenOptions::new()
            .append(true)
            .open(&info.err_path)
        {
            Ok(mut f) => {
                let _ = writeln!(f, "{line}");
            }
            Err(e) => problems.push(format!("{}: {e}", info.err_path)),
        }
    }
    let jf = &info.job_file;
    let mut remove = vec![jf.clone(), format!("{jf}.shell"), format!("{jf}.hostfile")];
    if mailed {
        remove.push(info.out_path.clone());
    }
    for p in remove {
        let _ = std::fs::remove_file(p);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "cannot write the job report: {}",
            problems.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_controls_are_signals_or_commands() {
        assert_eq!(Control::parse("SIGTSTP"), Control::Signal(Signal::SIGTSTP));
        assert_eq!(Control::parse("usr2"), Control::Signal(Signal::SIGUSR2));
        assert_eq!(Control::parse("9"), Control::Signal(Signal::SIGKILL));
        assert_eq!(
            Control::parse("kill -STOP -$LSB_JOBPGIDS"),
            Control::Command("kill -STOP -$LSB_JOBPGIDS".into())
        );
        assert_eq!(
            Control::parse("/usr/local/bin/stopper"),
            Control::Command("/usr/local/bin/stopper".into())
        );
    }

    #[test]
    fn limits() {
        let spec = JobSpec {
            rlimits: vec![-1, 0, 100, -1, 0, 2048, -1, -1, -1, 60],
            ..Default::default()
        };
        assert_eq!(limit_value(&spec, limit::CPU), None);
        assert_eq!(limit_value(&spec, limit::FSIZE), None);
        assert_eq!(limit_value(&spec, limit::DATA), Some(100));
        assert_eq!(limit_value(&spec, limit::CORE), Some(0));
        assert_eq!(limit_value(&spec, limit::RSS), Some(2048));
        assert_eq!(limit_value(&spec, limit::RUN), Some(60));
        assert_eq!(limit_value(&spec, limit::PROCESS), None);
    }

    #[test]
    fn output_paths() {
        let spec = JobSpec {
            job_id: 9,
            idx: 2,
            is_array: true,
            ..Default::default()
        };
        assert_eq!(output_path("o.%J.%I", &spec, "out"), "o.9.2");
        assert_eq!(output_path("/tmp/", &spec, "out"), "/tmp/9_2.out");
        let plain = JobSpec {
            job_id: 9,
            ..Default::default()
        };
        assert_eq!(output_path("/tmp", &plain, "err"), "/tmp/9.err");
    }

    #[test]
    fn job_file_names_never_collide() {
        let d = tempfile::tempdir().expect("tempdir");
        let home = d.path().to_string_lossy().into_owned();
        let me = nix::unistd::geteuid();
        let a = place_job_file(&home, me, "100.5", b"a").expect("first");
        let b = place_job_file(&home, me, "100.5", b"b").expect("second");
        assert_eq!(a, d.path().join(".lsbatch/100.5"));
        assert_eq!(b, d.path().join(".lsbatch/100.5.1"));
        assert_eq!(std::fs::read(&b).expect("read"), b"b");
        let md = std::fs::metadata(d.path().join(".lsbatch")).expect("md");
        assert_eq!(md.mode() & 0o777, 0o700);
    }

    #[test]
    fn child_messages() {
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).expect("pipe");
        {
            let mut f = std::fs::File::from(w);
            let ready = serde_json::to_string(&ChildMsg::Ready(ChildInfo::default())).expect("j");
            let failed = serde_json::to_string(&ChildMsg::Failed("boom".into())).expect("j");
            writeln!(f, "{ready}\n{failed}").expect("write");
        }
        match read_child_msgs(r) {
            Some(ChildMsg::Failed(m)) => assert_eq!(m, "boom"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
