//! The job supervisor: one long-lived process (one loop) that follows many jobs,
//! so a job's exit status is never lost and its processes survive an sbatchd restart
//! (systemd `KillMode=process`), without a process of its own per job.
//!
//! sbatchd starts it at its first job as `sbatchd --job-supervisor <state root>` and
//! hands it each job over a socket ([`pool`]): the job's name `<jobId>.<idx>.<attempt>`
//! and the write end of the job's wake-up pipe.
//! The process ([`runner`]) left sbatchd's session and is a child subreaper; it opens
//! the job database (`<state root>/jobs.db`, [`crate::db`]) once. For each job it:
//! 1. takes the job spec and launch information from sbatchd's request (sbatchd sends
//!    the job it has just recorded along with its name when it fits one request,
//!    [`crate::state::HandedJob`]; else they are read from the job's row, and a job that
//!    already has events is never started again), and records itself as the job's
//!    supervisor (pid, start time, boot id) in the row unless sbatchd recorded it;
//! 2. resolves the execution user (NSS lookups, `getgrouplist`), binds the job's
//!    control socket (`<state root>/ctl/<jobId>.<idx>.<attempt>`) and starts a
//!    launcher thread ([`launch`]), so a slow file system holds up no other job. The
//!    thread takes the user's file-system identity and a working directory and umask
//!    of its own, sets the umask, copies the job file to `~/.lsbatch/` (or
//!    `/tmp/.lsbatch.<uid>/`), writes the host file, picks the working directory
//!    (falling back to `/tmp` like OpenLava), opens stdin/stdout/stderr and builds the
//!    job environment ([`crate::env`]); then it starts the job's top process sharing
//!    the supervisor's memory ([`crate::spawn`]: `clone(CLONE_VM | CLONE_VFORK)`,
//!    nothing copied), which takes its own session and process group, applies
//!    rlimits/nice, switches to the user (`setgroups`, `setgid`, `setuid`, when the
//!    supervisor is root), redirects its standard streams and execs
//!    `/bin/sh <job file>`; the outcome comes back to the loop over a channel;
//!    A job with pre-execution commands (the queue's PRE_EXEC, then `bsub -E`) first
//!    runs each of them the same way (`/bin/sh -c <command>`; the queue's in `/tmp` with
//!    its streams on `/dev/null`, as PRE_POST_EXEC_USER when set), its process standing
//!    for the job meanwhile (killable through the control socket: a kill then ends the
//!    job without running it, its status exit code 130, `KILLED_WAIT_STATUS`, whatever
//!    the command's; a process launched after a kill came gets the kill's first signals
//!    as it starts); one that fails ends the job's story here with a `finished` event
//!    marked `pre_exec_failed` (mbatchd requeues the job), after its files are removed;
//! 3. serves commands on the job's control socket (kill sequence, stop, resume,
//!    signal, limits, checkpoint), samples the job's processes from `/proc`, enforces the run limit (and
//!    the memory and CPU limits of the whole job), and reaps its processes (each
//!    child's resource usage goes to the job whose process or session it was);
//! 4. when the top process exits: kills what is left of the job (its process group;
//!    its session only when a child of the supervisor is still in it), appends LSF's
//!    job report to the `-o` file and the `TERM_*` line to the `-e` file (as the user,
//!    so root-squashed homes work, bounded in time: in a thread of the supervisor's
//!    that takes the user's file-system identity, or, when the output is mailed, in a
//!    child process running as the user), removes the job file, and records the final `finished` event (retried every second while
//!    the database refuses it: the end of a job is never dropped); then it closes the
//!    job's wake-up pipe. The queue's POST_EXEC, when set, runs before the report (with
//!    `LSB_JOBEXIT_STAT`), and its wait status goes with the `finished` event.
//!
//! Every event is committed to the database first (the final one then fsynced
//! right after sbatchd is woken, so the disk and sbatchd's report proceed
//! together; see [`crate::db`]); then a line on the job's wake-up pipe wakes sbatchd up,
//! carrying the events just committed when they fit one atomic pipe write
//! ([`crate::state::wake_line`]; sbatchd then need not read them back), else a plain
//! newline (non-blocking: a full or broken pipe is ignored). The database connection is
//! never used in a forked child (the job's process execs, the mail helper only
//! writes files and closes every inherited descriptor first) nor by a report writer, and SQLite opens its
//! files close-on-exec, so jobs do not inherit them.
//!
//! When sbatchd closes the socket (it stopped, died, or found no job for a while) the
//! supervisor takes no new job and exits once the jobs it follows have ended; the
//! next sbatchd starts a new one. A supervisor killed with its jobs still running
//! leaves them without a supervisor: sbatchd sees the end of their wake-up pipes,
//! kills them and records their end (as for a host crash).
//!
//! The pieces: [`runner`] (the process's loop: requests, reaping, timers, the
//! database), [`launch`] (the job's top process: identity, set-up, exec), [`files`]
//! (the job file and output paths), [`limits`] (the spec's limits and rlimits),
//! [`control`] (the `ctl` commands, `JOB_CONTROLS`, the kill sequence, `bsub -t`),
//! [`watch`] (a running job's timers: sampling, limits; its leftovers), [`finish`]
//! (the job report and the final event), [`env`] (the job's environment),
//! [`report`] (LSF's job report text), [`usage`] (samples from `/proc`), [`hooks`]
//! (pre- and post-execution commands), [`chkpnt`] (checkpointing a running job:
//! `echkpnt.<method>` or the built-in `default` method, the kill after it), [`restart`]
//! (a job restarted from its checkpoint: `erestart.<method>` before it) and [`method`]
//! (finding and running the method programs as the job's user, with a timeout).
//!
//! Checkpointing (a job whose spec has a `chkpnt_dir`): the launcher creates the
//! checkpoint directory (0700, as the user) and copies the job file there
//! (`LSB_CHKFILENAME`); a `CHKPNT` command runs one checkpoint at a time without
//! holding up the loop (a method program is started by a thread and reaped with the
//! other children; the built-in method's `chkpnt.done` is looked for every 100 ms), and
//! its outcome is a `chkpnt` event (a CHKPNT report). lsf.conf, through the launch
//! information: `LSB_ECHKPNT_METHOD_DIR`, `LSB_ECHKPNT_KEEP_OUTPUT`,
//! `BASALT_CHKPNT_TIMEOUT` (60 s) and `BASALT_CHKPNT_SIGNAL` (WINCH).

mod chkpnt;
mod control;
pub mod env;
mod files;
mod finish;
mod hooks;
mod interactive;
mod launch;
mod limits;
mod method;
pub mod pool;
pub mod report;
mod restart;
mod runner;
#[cfg(test)]
mod tests;
pub mod usage;
mod watch;

pub use limits::{limit, limit_value};

use self::control::Deadline;
use self::launch::{ChildInfo, Hook, Identity, IdentityCache, Launched};
use self::usage::Tracker;
use crate::db;
use crate::state::{Event, EventKind, Launch};
use basalt_core::job::status as jstat;
use basalt_proto::sbatchd::JobSpec;
use basalt_runtime::time::now_secs;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The hidden command-line flag that selects supervisor mode.
pub const FLAG: &str = "--job-supervisor";

/// How long writing the report (and the cleanup) may take before it is abandoned (a
/// mail helper is killed).
const FINISH_HELPER_LIMIT: Duration = Duration::from_secs(60);

/// How long a top process that failed to start the job may take to exit.
const FAILED_START_LIMIT: Duration = Duration::from_secs(10);

/// How long the leftovers of a job may take to die after SIGKILL.
const LEFTOVERS_LIMIT: Duration = Duration::from_secs(2);

/// How long a job may run on after SIGUSR2 at its termination time (`bsub -t`) before it
/// is killed: LSF's ten minutes.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(600);

/// Resource usage of a job's processes that were reaped (the top process with the
/// descendants it waited for, orphans of its session, `JOB_CONTROLS` commands).
#[derive(Debug, Default, Clone, Copy)]
struct Reaped {
    utime: f64,
    stime: f64,
    max_rss_kb: u64,
}

impl Reaped {
    fn add(&mut self, ru: &libc::rusage) {
        let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        self.utime += secs(ru.ru_utime);
        self.stime += secs(ru.ru_stime);
        self.max_rss_kb = self
            .max_rss_kb
            .max(u64::try_from(ru.ru_maxrss).unwrap_or(0));
    }
}

/// Where a job is in its supervisor's hands.
enum Phase {
    /// A launcher thread sets the job up and starts its top process; its outcome
    /// comes on this channel ([`launch`]).
    Launching {
        rx: std::sync::mpsc::Receiver<launch::Launched>,
    },
    /// The start failed: the top process is given [`FAILED_START_LIMIT`] to exit
    /// before the `start_failed` event.
    Failing { until: Instant, message: String },
    /// The job runs.
    Running,
    /// A pre- or post-execution command runs (its process is `job` meanwhile).
    Hook,
    /// Restarting from the checkpoint: erestart runs ([`restart`]).
    Restarting,
    /// The top process ended; what is left of the job was killed and is being reaped.
    Leftovers { until: Instant },
    /// The job report is being written (by a thread, or by a helper process when the
    /// output is mailed); the final event follows.
    Reporting {
        until: Instant,
        finished: Box<Event>,
    },
    /// The final event is in the outbox (or on record).
    Ending,
}

/// One job followed by the supervisor process.
struct Supervisor {
    /// `<state root>/<jobId>.<idx>.<attempt>`: names the job in messages.
    dir: PathBuf,
    /// The job's control socket ([`crate::state::ctl_socket`]).
    ctl: PathBuf,
    key: db::Key,
    spec: JobSpec,
    launch: Launch,
    /// The write end of the job's wake-up pipe (sbatchd reads it); closed when the
    /// job's end is on record.
    wake: OwnedFd,
    phase: Phase,
    /// Events to record at the end of this turn of the loop.
    outbox: Vec<Event>,
    /// When a final event the database refused is to be tried again.
    retry_at: Option<Instant>,
    retries: u32,
    /// The final event is on record: the job leaves the supervisor.
    done: bool,
    ident: Option<Identity>,
    info: Option<ChildInfo>,
    listener: Option<UnixListener>,
    start_time: i64,
    /// The job's top process (= its pgid and sid).
    job: Option<Pid>,
    main_status: Option<i32>,
    helper: Option<Pid>,
    helper_status: Option<i32>,
    /// The report written by a thread of the supervisor's (see [`finish`]): its
    /// outcome comes here; the thread wakes the loop through [`Supervisor::notify`].
    writer: Option<std::sync::mpsc::Receiver<Result<(), String>>>,
    /// The write end of the runner's "a report was written" pipe.
    notify: Option<std::sync::Arc<OwnedFd>>,
    /// `JOB_CONTROLS` commands started for this job, not reaped yet.
    commands: Vec<Pid>,
    reaped: Reaped,
    stopped: bool,
    /// The job's run time (RUNLIMIT), on the monotonic clock.
    run_clock: limits::RunClock,
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
    /// Its pre-execution commands (the queue's PRE_EXEC, then `bsub -E`) and
    /// post-execution commands (the queue's POST_EXEC), and where it is with them.
    pre: Vec<Hook>,
    post: Vec<Hook>,
    at: At,
    /// The `started` event was emitted (at the first pre-execution command or the job).
    started_sent: bool,
    /// The job's `finished` event while its post-execution commands run.
    held_end: Option<Box<Event>>,
    /// The worst wait status of its post-execution commands.
    post_status: Option<i32>,
    /// JOB_INCLUDE_POSTPROC=N with post-execution commands: the job's end is reported
    /// (an `ended` event) before they run, their status after them (`post_exec`).
    post_after_end: bool,
    /// JOB_POSTPROC_TIMEOUT: when the post-execution commands are killed, and whether
    /// they were.
    post_deadline: Option<Instant>,
    post_timed_out: bool,
    /// An interactive job's ends of its streams until its user attaches
    /// ([`interactive`]), and whether that happened.
    io: Option<interactive::JobIo>,
    io_handed: bool,
    /// The checkpoint under way ([`chkpnt`]) and the restart ([`restart`]).
    chkpnt: Option<Box<chkpnt::Chkpnt>>,
    restart: Option<method::Program>,
}

/// Which of its processes a job is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Pre(usize),
    /// erestart, before a restarted job ([`restart`]).
    Restart,
    Job,
    Post(usize),
}

/// The time each step of a job took, logged (debug) when the job ends: `open` (the
/// job's row), `identity` (user look-up), `launch` (fork to the job's exec),
/// `record_start`, `run` (the job itself), `leftovers`, `report` (the writer of
/// LSF's job report) and `final` (the fsynced end).
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
    /// A job read from its row, not started yet. `born` is when its request came.
    fn new(
        dir: PathBuf,
        ctl: PathBuf,
        stored: db::StoredJob,
        wake: OwnedFd,
        born: Instant,
    ) -> Supervisor {
        let sample_every = Duration::from_millis(stored.launch.sample_ms.max(100));
        Supervisor {
            dir,
            ctl,
            key: stored.key,
            spec: stored.spec,
            launch: stored.launch,
            wake,
            phase: Phase::Running,
            outbox: Vec::new(),
            retry_at: None,
            retries: 0,
            done: false,
            ident: None,
            info: None,
            listener: None,
            start_time: now_secs(),
            job: None,
            main_status: None,
            helper: None,
            helper_status: None,
            writer: None,
            notify: None,
            commands: Vec::new(),
            reaped: Reaped::default(),
            stopped: false,
            run_clock: limits::RunClock::default(),
            kill_deadline: None,
            term_reason: None,
            deadline: Deadline::default(),
            tracker: Tracker::default(),
            next_sample: Instant::now() + sample_every.min(Duration::from_millis(500)),
            sample_every,
            steps: Steps::new(born),
            pre: Vec::new(),
            post: Vec::new(),
            at: At::Job,
            started_sent: false,
            held_end: None,
            post_status: None,
            post_after_end: false,
            post_deadline: None,
            post_timed_out: false,
            io: None,
            io_handed: false,
            chkpnt: None,
            restart: None,
        }
    }

    /// Queue events for this turn's commit (each stamped with the time if it has none).
    fn emit_all(&mut self, mut events: Vec<Event>) {
        let now = now_secs();
        for e in &mut events {
            if e.time == 0 {
                e.time = now;
            }
        }
        self.outbox.append(&mut events);
    }

    fn emit(&mut self, e: Event) {
        self.emit_all(vec![e]);
    }

    /// Wake sbatchd: this job has new events on record (read them from the job table).
    fn wake(&self) {
        let _ = nix::unistd::write(&self.wake, b"\n");
    }

    /// Wake sbatchd with the events just recorded on the line itself
    /// ([`crate::state::wake_line`]), so that it need not read them back from the job
    /// table; a plain wake-up when they do not fit one atomic pipe write.
    fn wake_with(&self, events: &[Event]) {
        match crate::state::wake_line(events) {
            Some(line) => {
                let _ = nix::unistd::write(&self.wake, line.as_bytes());
            }
            None => self.wake(),
        }
    }

    /// The job could not be started: its `start_failed` event ends it.
    fn start_failed(&mut self, message: String) {
        tracing::warn!(job = self.key.0, idx = self.key.1, "{message}");
        self.close_ctl();
        self.emit(Event {
            kind: EventKind::StartFailed,
            message,
            ..Default::default()
        });
        self.phase = Phase::Ending;
    }

    /// Start the job: look the user up, bind the `ctl` socket, and start the thread
    /// that sets the job up and starts its top process (a slow file system holds up
    /// that job only).
    fn begin(&mut self, users: &mut IdentityCache) {
        let ident = match users.resolve(&self.spec, &self.launch) {
            Ok(i) => i,
            Err(msg) => return self.start_failed(msg),
        };
        self.steps.mark("identity");
        let ctl_path = self.ctl.clone();
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
        if let Err(msg) = self.plan_hooks() {
            return self.start_failed(msg);
        }
        self.ident = Some(ident);
        self.listener = Some(listener);
        self.at = if self.pre.is_empty() {
            self.main_step()
        } else {
            At::Pre(0)
        };
        self.launch_step();
    }

    /// Take the launcher's outcome if it came: the job runs, or its start failed.
    /// Returns false while the launcher is still at work.
    fn poll_launch(&mut self) -> bool {
        let Phase::Launching { rx } = &self.phase else {
            return true;
        };
        let outcome = match rx.try_recv() {
            Ok(o) => o,
            Err(std::sync::mpsc::TryRecvError::Empty) => return false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Launched::Failed("the thread starting the job ended without starting it".to_owned())
            }
        };
        self.steps.mark("launch");
        if self.at != At::Job {
            match outcome {
                Launched::Running { pid, info, .. } => {
                    self.job = Some(pid);
                    if matches!(self.at, At::Pre(_)) {
                        self.info = Some(info);
                        if !self.started_sent {
                            // The job's processes exist from its first pre-execution
                            // command (LSF's JOB_START_ACCEPT); JOB_EXECUTE follows
                            // when the job itself runs.
                            self.started_sent = true;
                            let pid = pid.as_raw() as u32;
                            self.emit(Event {
                                kind: EventKind::Started,
                                pid,
                                pgid: pid,
                                state: jstat::RUN,
                                ..Default::default()
                            });
                        }
                    }
                    self.phase = Phase::Hook;
                    if matches!(self.at, At::Pre(_)) {
                        self.kill_newcomer();
                    }
                }
                Launched::ChildFailed { pid, message } => {
                    // Its status (127) comes when it is reaped.
                    tracing::warn!(
                        job = self.key.0,
                        "pre- or post-execution command: {message}"
                    );
                    self.job = Some(pid);
                    self.phase = Phase::Hook;
                }
                Launched::Failed(message) if matches!(self.at, At::Post(_)) => {
                    tracing::warn!(job = self.key.0, "post-execution command: {message}");
                    self.post_status = Some(127 << 8);
                    self.end_after_post();
                }
                Launched::Failed(message) => self.start_failed(message),
            }
            return true;
        }
        match outcome {
            Launched::Running { pid, info, io } => {
                self.job = Some(pid);
                self.io = io;
                let pid = pid.as_raw() as u32;
                self.start_time = now_secs();
                self.run_clock.start(Instant::now());
                let ident = self.ident.as_ref();
                let started = Event {
                    kind: EventKind::Started,
                    pid,
                    pgid: pid,
                    state: jstat::RUN,
                    ..Default::default()
                };
                let executing = Event {
                    kind: EventKind::Executing,
                    pid,
                    pgid: pid,
                    state: jstat::RUN,
                    exec_uid: ident.map_or(0, |i| i.uid.as_raw()),
                    exec_user: ident.map(|i| i.name.clone()).unwrap_or_default(),
                    exec_home: ident.map(|i| i.home.clone()).unwrap_or_default(),
                    exec_cwd: info.cwd.clone(),
                    out_path: info.out_path.clone(),
                    ..Default::default()
                };
                self.info = Some(info);
                self.phase = Phase::Running;
                if std::mem::replace(&mut self.started_sent, true) {
                    self.emit(executing);
                } else {
                    self.emit_all(vec![started, executing]);
                }
                self.kill_newcomer();
            }
            Launched::ChildFailed { pid, message } => {
                // The top process exited (127); its status comes when it is reaped.
                self.job = Some(pid);
                self.close_ctl();
                self.phase = Phase::Failing {
                    until: Instant::now() + FAILED_START_LIMIT,
                    message,
                };
            }
            Launched::Failed(message) => self.start_failed(message),
        }
        true
    }

    /// A child of the supervisor that was this job's ended (`raw` is its wait status).
    fn on_reaped(&mut self, pid: Pid, raw: i32, ru: &libc::rusage) {
        if self.chkpnt_reaped(pid, raw) || self.restart_reaped(pid, raw) {
            return;
        }
        if Some(pid) == self.helper {
            self.helper_status = Some(raw);
            return;
        }
        self.reaped.add(ru);
        if Some(pid) == self.job && self.main_status.is_none() {
            self.main_status = Some(raw);
        }
        self.commands.retain(|c| *c != pid);
    }

    /// Does this job's top process lead session `sid` (an orphan of the job is in it)?
    fn leads(&self, sid: Option<i32>) -> bool {
        self.job.is_some_and(|p| Some(p.as_raw()) == sid)
    }

    /// Is `pid` a process this job started (its top process, its helper, a command)?
    fn owns_pid(&self, pid: Pid) -> bool {
        Some(pid) == self.job
            || Some(pid) == self.helper
            || self.commands.contains(&pid)
            || self.chkpnt_owns(Some(pid))
            || self.restart_owns(Some(pid))
    }

    /// May a child of this job's end before the job knows its pid (a launcher's or a
    /// method program's thread has not answered yet)? Such ends are kept for it.
    fn expects_children(&self) -> bool {
        matches!(self.phase, Phase::Launching { .. })
            || self.chkpnt_owns(None)
            || self.restart_owns(None)
    }

    /// Move the job on as far as it can go now; returns when it wants to be looked at
    /// again (None: only on an event).
    fn tick(&mut self, now: Instant) -> Option<Instant> {
        loop {
            match &self.phase {
                Phase::Launching { .. } => {
                    if !self.poll_launch() {
                        return None;
                    }
                }
                Phase::Ending => return None,
                Phase::Restarting => {
                    if let Some(t) = self.restart_tick(now) {
                        return Some(t);
                    }
                }
                Phase::Failing { until, .. } => {
                    if self.main_status.is_none() && now < *until {
                        return Some(*until);
                    }
                    let message = match std::mem::replace(&mut self.phase, Phase::Ending) {
                        Phase::Failing { message, .. } => message,
                        _ => String::new(),
                    };
                    self.start_failed(message);
                    return None;
                }
                Phase::Running => {
                    if self.main_status.is_none() {
                        return self.running_tick(now);
                    }
                    // An interactive job that ended before its user attached: its
                    // output waits in its pipes for the attach (or the deadline) —
                    // unless it was killed (bkill, a limit): its end is recorded now.
                    let killed = self.kill_deadline.is_some() || self.term_reason.is_some();
                    if !killed && let Some(by) = self.check_attach(now) {
                        return Some(by);
                    }
                    self.io = None;
                    self.close_ctl();
                    self.steps.mark("run");
                    // Nothing left (the usual case): no second look.
                    let until = if self.kill_leftovers() {
                        now + LEFTOVERS_LIMIT
                    } else {
                        now
                    };
                    self.phase = Phase::Leftovers { until };
                }
                Phase::Hook => {
                    let Some(status) = self.main_status else {
                        return self.hook_tick(now);
                    };
                    if let Some(g) = self.job {
                        // What the command left behind goes with it.
                        let _ = nix::sys::signal::killpg(g, Signal::SIGKILL);
                    }
                    self.hook_ended(status, now);
                    if matches!(self.phase, Phase::Hook) {
                        return None;
                    }
                }
                Phase::Leftovers { until } => {
                    let until = *until;
                    if now < until && self.leftovers_remain() {
                        return Some((now + Duration::from_millis(50)).min(until));
                    }
                    // A checkpoint under way ends before the job's end is recorded.
                    if let Some(t) = self.chkpnt_at_end(now) {
                        return Some(t);
                    }
                    self.steps.mark("leftovers");
                    let finished = self.finished_event();
                    if self.post.is_empty() || self.post_after_end {
                        // (With JOB_INCLUDE_POSTPROC=N the post-execution commands
                        // run once the end is on record: see `Phase::Reporting`.)
                        self.start_report(&finished);
                        self.phase = Phase::Reporting {
                            until: now + FINISH_HELPER_LIMIT,
                            finished: Box::new(finished),
                        };
                    } else {
                        // The queue's POST_EXEC runs before the job's end is reported
                        // (its slot stays taken meanwhile, as with LSF's
                        // JOB_INCLUDE_POSTPROC = Y).
                        self.held_end = Some(Box::new(finished));
                        self.at = At::Post(0);
                        self.job = None;
                        self.main_status = None;
                        self.launch_step();
                    }
                }
                Phase::Reporting { until, .. } => {
                    let until = *until;
                    if let Some(rx) = &self.writer {
                        match rx.try_recv() {
                            Err(std::sync::mpsc::TryRecvError::Empty) if now < until => {
                                return Some(until);
                            }
                            Err(std::sync::mpsc::TryRecvError::Empty) => tracing::warn!(
                                "job {}: writing the job report took longer than {:?}; abandoned",
                                self.spec.job_id,
                                FINISH_HELPER_LIMIT
                            ),
                            Ok(Err(e)) => {
                                tracing::warn!("job {}: {e}", self.spec.job_id);
                            }
                            Ok(Ok(())) | Err(std::sync::mpsc::TryRecvError::Disconnected) => {}
                        }
                        self.writer = None;
                    }
                    if let Some(h) = self.helper
                        && self.helper_status.is_none()
                    {
                        if now < until {
                            return Some(until);
                        }
                        tracing::warn!(
                            "job {}: writing the job report took longer than {:?}; abandoned",
                            self.spec.job_id,
                            FINISH_HELPER_LIMIT
                        );
                        let _ = nix::sys::signal::kill(h, Signal::SIGKILL);
                    }
                    self.steps.mark("report");
                    if let Phase::Reporting { finished, .. } =
                        std::mem::replace(&mut self.phase, Phase::Ending)
                    {
                        if self.post_after_end && self.held_end.is_none() {
                            self.post_after_report(finished);
                            continue;
                        }
                        self.emit(*finished);
                    }
                    return None;
                }
            }
        }
    }

    /// Stop serving the `ctl` socket (the job's top process is gone or never ran).
    fn close_ctl(&mut self) {
        if self.listener.take().is_some() {
            let _ = std::fs::remove_file(&self.ctl);
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
        self.run_clock.run_time(Instant::now())
    }
}

/// Start a thread of the supervisor's (a launcher, a report writer) that runs `work`;
/// its outcome comes on the returned channel, then a byte on `notify` (the runner's
/// wake-up pipe, non-blocking: a full pipe already wakes the loop) wakes the loop, which
/// looks for the outcome when woken. Such a thread must take no lock a forked child of
/// the supervisor's takes: no logging, no environment, no standard streams.
fn start_worker<T: Send + 'static>(
    name: &str,
    stack: usize,
    notify: Option<std::sync::Arc<OwnedFd>>,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::sync::mpsc::Receiver<T>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(stack)
        .spawn(move || {
            let _ = tx.send(work());
            if let Some(fd) = notify {
                let _ = nix::unistd::write(fd.as_ref(), b"w");
            }
        })?;
    Ok(rx)
}

/// A job leaving the supervisor takes its `ctl` socket with it.
impl Drop for Supervisor {
    fn drop(&mut self) {
        self.close_ctl();
    }
}
