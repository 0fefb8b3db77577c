//! The job supervisor: one small process per job, so a job's exit status is never
//! lost and its processes survive an sbatchd restart (systemd `KillMode=process`).
//!
//! The supervisor pool ([`pool`]) forks it for the job directory
//! `<state root>/<jobId>.<idx>.<attempt>`, with sbatchd's wake-up pipe as its stdout.
//! It is single-threaded and synchronous. It:
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
//!
//! The pieces: [`launch`] (the job's top process: identity, set-up, exec), [`files`]
//! (the job file and output paths), [`limits`] (the spec's limits and rlimits),
//! [`control`] (the `ctl` commands, `JOB_CONTROLS`, the kill sequence, `bsub -t`),
//! [`watch`] (the loop while the job runs: reaping, sampling, limits), [`finish`]
//! (the job report and the final event), [`env`] (the job's environment),
//! [`report`] (LSF's job report text) and [`usage`] (samples from `/proc`).

mod control;
pub mod env;
mod files;
mod finish;
mod launch;
mod limits;
pub mod pool;
pub mod report;
#[cfg(test)]
mod tests;
pub mod usage;
mod watch;

pub use limits::{limit, limit_value};

use self::control::Deadline;
use self::launch::{ChildMsg, child_main, read_child_msgs, resolve_identity};
use self::usage::Tracker;
use crate::db::{self, JobDb};
use crate::paths;
use crate::state::{self, Event, EventKind, Launch};
use crate::sys;
use crate::sys::Disposition;
use basalt_core::job::status as jstat;
use basalt_proto::sbatchd::JobSpec;
use basalt_runtime::time::now_secs;
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The hidden command-line flag that selects supervisor mode.
pub const FLAG: &str = "--job-supervisor";

/// How long the finishing helper (report, cleanup) may take before it is killed.
const FINISH_HELPER_LIMIT: Duration = Duration::from_secs(60);

fn raw_status(ws: WaitStatus) -> Option<(Pid, i32)> {
    match ws {
        WaitStatus::Exited(pid, code) => Some((pid, (code & 0xff) << 8)),
        WaitStatus::Signaled(pid, sig, core) => {
            Some((pid, sig as i32 | if core { 0x80 } else { 0 }))
        }
        _ => None,
    }
}

/// The supervisor of one job, in a child the pool forked; returns the process exit
/// code. `dir` is the
/// job's directory under the state root: its name is the job's key and the job
/// database is `jobs.db` beside it.
///
/// # Safety
///
/// The calling process must be single-threaded, and stay so: supervisor mode forks
/// (the job's top process, the report helper) and runs ordinary code in the child,
/// which is sound only when no other thread exists. The pool calls this in a child
/// of its single thread (sbatchd's `main` starts the pool before anything else: no
/// async runtime, no thread); the supervisor itself never starts a thread.
#[allow(unsafe_code)]
pub(crate) unsafe fn main(dir: &Path) -> i32 {
    let born = Instant::now();
    let _ = nix::unistd::setsid();
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let _ = sys::set_disposition(Signal::SIGPIPE, Disposition::Ignore);
    let _ = sys::set_disposition(Signal::SIGHUP, Disposition::Ignore);
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
    let mut sup = match Supervisor::open(dir, key, jobs, born).map_err(|e| *e) {
        Ok(mut s) => {
            s.steps.mark("open");
            s
        }
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
    /// How long each step of this job took (logged at its end).
    steps: Steps,
}

/// The time each step of a supervisor's work took, logged (debug) when the job ends:
/// `open` (database, job row), `identity` (user look-up), `launch` (fork to the job's
/// exec), `record_start`, `run` (the job itself), `leftovers`, `report` (the helper
/// writing LSF's job report) and `final` (the fsynced end).
#[derive(Debug)]
struct Steps {
    last: Instant,
    done: Vec<(&'static str, Duration)>,
}

impl Steps {
    fn new(since: Instant) -> Steps {
        Steps {
            last: since,
            done: Vec::with_capacity(8),
        }
    }

    /// The step `name` ends now.
    fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.done.push((name, now.duration_since(self.last)));
        self.last = now;
    }

    fn log(&self, job: db::Key) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            let text: Vec<String> = self
                .done
                .iter()
                .map(|(n, d)| format!("{n} {}", d.as_micros()))
                .collect();
            tracing::debug!(
                job = job.0,
                idx = job.1,
                "supervisor steps (µs): {}",
                text.join(", ")
            );
        }
    }
}

impl Supervisor {
    /// Read the job from the database. Errors come with the database when an event
    /// can still be recorded. `born` is when the supervisor began (its steps' start).
    fn open(
        dir: &Path,
        key: db::Key,
        jobs: JobDb,
        born: Instant,
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
            steps: Steps::new(born),
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
        self.steps.mark("identity");
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
        // SAFETY: supervisor mode is single-threaded: `main`'s caller guarantees it
        // (see its # Safety) and the supervisor starts no thread.
        #[allow(unsafe_code)]
        let forked = unsafe { sys::fork() };
        let pid = match forked {
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
        self.steps.mark("launch");
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
                self.steps.mark("record_start");
                self.supervise(&sigfd, &listener);
                drop(listener);
                let _ = std::fs::remove_file(&ctl_path);
                self.finish(&sigfd, &ident, &info);
                self.steps.log(self.key);
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
}
