//! Hollow jobs: the job runner of a hollow host ([`crate::JobRunner::Hollow`]), for
//! scale tests that run many hosts — each the real sbatchd — in one process, as
//! Kubernetes' kubemark does with hollow nodes.
//!
//! A hollow job runs no process: it is one tokio task (no thread, no fork, no
//! file descriptor, nothing on disk but its rows in the job table) that records in the
//! job table the events a job supervisor records for a job ([`crate::supervisor`]) and
//! hands them to the owner ([`crate::runner::Wake::Events`]), so that everything after
//! — StartJob's answer, the reports to mbatchd, requeue, kill, the job's removal — is
//! the code of a real host. Its pid (also its pgid) is a fake one from [`FIRST_PID`] up,
//! unique in the process and beyond any pid Linux gives, so that a signal sbatchd sends
//! a job's process group (a job whose runner is gone is killed, [`crate::owner`])
//! reaches no process.
//!
//! What it does ([`plan`]): it "runs" for the time its command says — `sleep N` (GNU
//! sleep's suffixes `s m h d`, several arguments added), also in a list `sleep N; exit
//! M`, with `exit M`, `true`, `false` or `:` —, else for its run limit (`bsub -W`) if it
//! has one, else not at all; then it exits with the status its command asks for (`exit
//! M`: M; `false`: 1; otherwise 0). A command of any other form runs for the run limit (or
//! 0 s) and exits 0. Its run time counts on the monotonic clock and stops while the job
//! is suspended, as the supervisor's does. Its events:
//!
//! * at the start, `started` and `executing` (the submitting user, home and working
//!   directory as the spec has them: no user is looked up);
//! * one `rusage` sample (no CPU, no memory, its one pid) `sample_ms` after the start,
//!   as a real job's first sample, and none after (a sleeping job's usage does not
//!   change);
//! * at the end, `finished` with the wait status (`exit M`: `M << 8`), state DONE
//!   for status 0 without a term reason, else EXIT, and no usage;
//! * a run limit shorter than the command's time kills it at the limit
//!   (`TERM_RUNLIMIT`), the termination time of `bsub -t` sends it SIGUSR2
//!   (`TERM_DEADLINE`).
//!
//! Control commands (the protocol of the supervisor's control socket, from the same
//! owner code): a kill ends the job at once as killed by the kill sequence's first
//! signal, SIGINT (or the queue's `JOB_CONTROLS` TERMINATE signal), with the kill's term
//! reason — SIGKILL follows after the terminate interval when that signal does not end
//! it; `STOP` and `RESUME` pause and resume its run time and record the state change
//! (suspending reasons as the supervisor records them); `SIG n` acts as signal `n`'s
//! default action would on a process (SIGSTOP/SIGTSTP and SIGCONT as bstop and
//! bresume, SIGCHLD/SIGURG/SIGWINCH nothing, SIGTTIN/SIGTTOU stop without a state
//! change, any other ends the job killed by it); `REASON` as the supervisor; `LIMITS`
//! takes the new run limit; `CHKPNT` records a failed checkpoint.
//!
//! Not simulated, and named in a warning when a job asks for it: pre- and
//! post-execution commands, job starters, `eexec`, file transfer (`-f`), interactive
//! jobs, checkpoint directories and restarts, `JOB_CONTROLS` commands (the default
//! action is taken instead). No output is written (no `-o` file, no job report, no
//! mail) and no user is looked up. A hollow job ends with its sbatchd: when sbatchd
//! stops, its hollow jobs stop without recording anything more, and a later sbatchd on
//! the same state root records them killed, as after a host crash.

use crate::db::{DbError, DbHandle, Key};
use crate::state::{Event, EventKind, Launch};
use crate::supervisor::{limit, limit_value};
use basalt_core::job::status as jstat;
use basalt_proto::sbatchd::JobSpec;
use basalt_runtime::time::Clock;
use nix::sys::signal::Signal;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::{error, warn};

/// The first fake pid: past `PID_MAX_LIMIT` (2^22), the largest pid Linux can give.
pub const FIRST_PID: u32 = 1 << 30;

// PID_MAX_LIMIT on 64-bit Linux is 2^22: no real process has a fake pid.
const _: () = assert!(FIRST_PID > 1 << 22);

/// How many fake pids are given before they start again from [`FIRST_PID`].
const PIDS: u32 = (i32::MAX as u32) - FIRST_PID;

static PIDS_GIVEN: AtomicU32 = AtomicU32::new(0);

/// A fake pid, unique among the last 2^30 given in this process.
fn fake_pid() -> u32 {
    FIRST_PID + PIDS_GIVEN.fetch_add(1, Ordering::Relaxed) % PIDS
}

/// How long a hollow job runs and how it ends ([`plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Its run time, when its command says it (else it runs for its run limit).
    pub run: Option<Duration>,
    /// Its exit code.
    pub exit_code: u8,
}

impl Plan {
    /// The run time with run limit `limit`: the command's time, else the limit, else 0.
    pub fn run_time(&self, limit: Option<Duration>) -> Duration {
        self.run.or(limit).unwrap_or(Duration::ZERO)
    }
}

/// What a hollow job with `command` does (see the module's documentation). A command
/// of another form than those understood runs for the run limit and exits 0.
pub fn plan(command: &str) -> Plan {
    parse_command(command).unwrap_or(Plan {
        run: None,
        exit_code: 0,
    })
}

/// The commands a hollow job understands: a list (`;` or newlines) of `sleep N...`,
/// `exit [M]`, `true`, `:` and `false`. None for anything else.
fn parse_command(command: &str) -> Option<Plan> {
    let mut run: Option<Duration> = None;
    let mut status: u8 = 0;
    for part in command.split([';', '\n']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some((&verb, args)) = words.split_first() else {
            continue;
        };
        match verb {
            "sleep" if !args.is_empty() => {
                let mut t = run.unwrap_or(Duration::ZERO);
                for a in args {
                    t = t.checked_add(sleep_arg(a)?)?;
                }
                run = Some(t);
                status = 0;
            }
            "true" | ":" if args.is_empty() => status = 0,
            "false" if args.is_empty() => status = 1,
            "exit" if args.len() <= 1 => {
                if let Some(a) = args.first() {
                    // The shell's `exit` keeps the low 8 bits.
                    status = (a.parse::<i64>().ok()? & 0xff) as u8;
                }
                return Some(Plan {
                    run,
                    exit_code: status,
                });
            }
            _ => return None,
        }
    }
    Some(Plan {
        run,
        exit_code: status,
    })
}

/// One argument of GNU sleep: a number of seconds, with `s`, `m`, `h` or `d`.
fn sleep_arg(a: &str) -> Option<Duration> {
    let (num, unit) = match a.char_indices().last()? {
        (i, 's') => (&a[..i], 1.0),
        (i, 'm') => (&a[..i], 60.0),
        (i, 'h') => (&a[..i], 3600.0),
        (i, 'd') => (&a[..i], 86400.0),
        _ => (a, 1.0),
    };
    if !num.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let secs = num.parse::<f64>().ok()? * unit;
    Duration::try_from_secs_f64(secs).ok()
}

/// What a signal does to a process that keeps its default action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Dies,
    Stops,
    Continues,
    Nothing,
}

fn fate(sig: Signal) -> Fate {
    match sig {
        Signal::SIGCHLD | Signal::SIGURG | Signal::SIGWINCH => Fate::Nothing,
        Signal::SIGCONT => Fate::Continues,
        Signal::SIGSTOP | Signal::SIGTSTP | Signal::SIGTTIN | Signal::SIGTTOU => Fate::Stops,
        _ => Fate::Dies,
    }
}

/// A queue's `JOB_CONTROLS` action for a hollow job: its signal, or a command (not run).
#[derive(Debug, Clone, PartialEq)]
enum Control {
    Signal(Signal),
    Command,
}

fn job_control(spec: &JobSpec, action: &str) -> Option<Control> {
    let v = spec.job_controls.get(action)?.trim();
    if v.is_empty() {
        return None;
    }
    let single = !v.contains(char::is_whitespace);
    Some(
        match basalt_core::job::signal_number(v)
            .filter(|_| single)
            .and_then(|n| Signal::try_from(n).ok())
        {
            Some(sig) => Control::Signal(sig),
            None => Control::Command,
        },
    )
}

/// What a spec asks for that a hollow job does not do.
fn not_simulated(spec: &JobSpec) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut check = |set: bool, what: &'static str| {
        if set {
            v.push(what);
        }
    };
    check(
        !spec.pre_exec.is_empty() || !spec.queue_pre_cmd.is_empty(),
        "pre-execution commands",
    );
    check(
        !spec.post_exec.is_empty() || !spec.queue_post_cmd.is_empty(),
        "post-execution commands",
    );
    check(!spec.job_starter.is_empty(), "the job starter");
    check(!spec.eexec_input.is_empty(), "eexec");
    check(!spec.files.is_empty(), "file transfer (-f)");
    check(spec.interactive != 0, "an interactive job's streams");
    check(
        !spec.chkpnt_dir.is_empty() || spec.restart,
        "checkpoint and restart",
    );
    check(
        ["SUSPEND", "RESUME", "TERMINATE"]
            .iter()
            .any(|a| job_control(spec, a) == Some(Control::Command)),
        "JOB_CONTROLS commands (the default actions are taken)",
    );
    v
}

/// One control command for a hollow job, and where its reply line goes.
#[derive(Debug)]
struct Order {
    cmd: String,
    reply: oneshot::Sender<String>,
}

/// The hollow runner of one sbatchd ([`crate::runner::Runner::Hollow`]).
#[derive(Debug, Clone)]
pub struct Hollow {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The runtime the jobs' tasks run on (jobs are handed over on the job database's
    /// thread).
    rt: tokio::runtime::Handle,
    clock: Arc<dyn Clock>,
    /// The running jobs' order queues.
    jobs: Mutex<HashMap<Key, mpsc::UnboundedSender<Order>>>,
    /// Turned true when sbatchd stops: every job's task ends.
    stop: watch::Sender<bool>,
}

impl Hollow {
    /// A hollow runner whose jobs run as tasks of `rt`, their events timed by `clock`.
    pub fn new(rt: tokio::runtime::Handle, clock: Arc<dyn Clock>) -> Hollow {
        Hollow {
            inner: Arc::new(Inner {
                rt,
                clock,
                jobs: Mutex::new(HashMap::new()),
                stop: watch::channel(false).0,
            }),
        }
    }

    /// How many hollow jobs run now.
    pub fn running(&self) -> usize {
        self.inner.jobs.lock().map_or(0, |j| j.len())
    }

    /// Start job `key` (just recorded in the job table `db` reaches); its recorded
    /// events come on the returned channel, closed after the final one.
    pub(crate) fn start(
        &self,
        key: Key,
        spec: Arc<JobSpec>,
        launch: &Launch,
        db: DbHandle,
    ) -> mpsc::UnboundedReceiver<Vec<Event>> {
        let (wake, events) = mpsc::unbounded_channel();
        let (otx, orders) = mpsc::unbounded_channel();
        let skipped = not_simulated(&spec);
        if !skipped.is_empty() {
            warn!(
                "hollow host: job {} idx {}: not simulated: {}",
                key.0,
                key.1,
                skipped.join(", ")
            );
        }
        let now = Instant::now();
        let term_at = (spec.term_time > 0).then(|| {
            let left = spec.term_time.saturating_sub(self.inner.clock.now_secs());
            now + Duration::from_secs(u64::try_from(left).unwrap_or(0))
        });
        let job = Job {
            key,
            pid: fake_pid(),
            plan: plan(&spec.command),
            run_limit: limit_value(&spec, limit::RUN).map(Duration::from_secs),
            terminate: job_control(&spec, "TERMINATE"),
            suspend: job_control(&spec, "SUSPEND"),
            resume: job_control(&spec, "RESUME"),
            terminate_interval: launch.terminate_interval,
            user: spec.user.clone(),
            uid: spec.uid,
            home: spec.sub_home.clone(),
            cwd: if spec.spec_cwd.is_empty() {
                spec.sub_cwd.clone()
            } else {
                spec.spec_cwd.clone()
            },
            ran: Duration::ZERO,
            since: None,
            stopped: false,
            sample_at: Some(now + Duration::from_millis(launch.sample_ms.max(100))),
            term_at,
            kill_at: None,
            term_reason: None,
            db,
            wake,
            clock: self.inner.clock.clone(),
        };
        if let Ok(mut jobs) = self.inner.jobs.lock() {
            jobs.insert(key, otx);
        }
        let done = Gone {
            inner: self.inner.clone(),
            key,
        };
        let stop = self.inner.stop.subscribe();
        self.inner.rt.spawn(async move {
            let _done = done;
            job.run(orders, stop).await;
        });
        events
    }

    /// One control command for job `key`; its reply line.
    pub(crate) async fn control(&self, key: Key, cmd: &str) -> Result<String, String> {
        let tx = self
            .inner
            .jobs
            .lock()
            .ok()
            .and_then(|j| j.get(&key).cloned())
            .ok_or_else(|| format!("hollow job {} idx {} is not running", key.0, key.1))?;
        let (reply, rx) = oneshot::channel();
        tx.send(Order {
            cmd: cmd.to_owned(),
            reply,
        })
        .map_err(|_| "the hollow job has ended".to_owned())?;
        tokio::time::timeout(Duration::from_secs(5), rx)
            .await
            .map_err(|_| "timed out".to_owned())?
            .map_err(|_| "the hollow job has ended".to_owned())
    }

    /// End every job's task (sbatchd stops).
    pub(crate) fn stop(&self) {
        self.inner.stop.send_replace(true);
    }
}

/// Takes a job's order queue out of the runner when its task ends.
struct Gone {
    inner: Arc<Inner>,
    key: Key,
}

impl Drop for Gone {
    fn drop(&mut self) {
        if let Ok(mut jobs) = self.inner.jobs.lock() {
            jobs.remove(&self.key);
        }
    }
}

/// How a hollow job ends: its wait status (the term reason is the job's).
#[derive(Debug, Clone, PartialEq)]
struct End {
    status: i32,
}

/// One hollow job (its task's state; what it needs of its spec, not the spec).
struct Job {
    key: Key,
    pid: u32,
    plan: Plan,
    run_limit: Option<Duration>,
    terminate: Option<Control>,
    suspend: Option<Control>,
    resume: Option<Control>,
    /// Seconds between the kill's first signal and SIGKILL, for the limits' kills.
    terminate_interval: u32,
    user: String,
    uid: u32,
    home: String,
    cwd: String,
    /// Run time before the current RUN period, and when that began (None: stopped, or
    /// not started yet).
    ran: Duration,
    since: Option<Instant>,
    /// Suspended by a STOP (the state recorded).
    stopped: bool,
    /// When its usage sample is due (None once taken).
    sample_at: Option<Instant>,
    /// bsub -t: when it gets SIGUSR2 (None once sent).
    term_at: Option<Instant>,
    /// SIGKILL of the kill sequence.
    kill_at: Option<Instant>,
    term_reason: Option<String>,
    db: DbHandle,
    wake: mpsc::UnboundedSender<Vec<Event>>,
    clock: Arc<dyn Clock>,
}

impl Job {
    async fn run(
        mut self,
        mut orders: mpsc::UnboundedReceiver<Order>,
        mut stop: watch::Receiver<bool>,
    ) {
        // It runs from now: its start time read before its run time starts, so a job
        // of N seconds ends N seconds or more after the time its events give.
        let start = self.clock.now_secs();
        self.since = Some(Instant::now());
        let started = Event {
            kind: EventKind::Started,
            time: start,
            pid: self.pid,
            pgid: self.pid,
            state: jstat::RUN,
            ..Default::default()
        };
        let executing = Event {
            kind: EventKind::Executing,
            pid: self.pid,
            pgid: self.pid,
            state: jstat::RUN,
            exec_uid: self.uid,
            exec_user: self.user.clone(),
            exec_home: self.home.clone(),
            exec_cwd: self.cwd.clone(),
            time: start,
            ..Default::default()
        };
        if !self.record(vec![started, executing]).await {
            return;
        }
        loop {
            let now = Instant::now();
            let (events, end) = self.due(now);
            if !events.is_empty() && !self.record(events).await {
                return;
            }
            if let Some(end) = end {
                self.finish(end, &mut stop).await;
                return;
            }
            let next = self.next_due(now);
            let order = tokio::select! {
                _ = stop.wait_for(|s| *s) => return,
                _ = sleep_until(next) => continue,
                o = orders.recv() => match o {
                    Some(o) => o,
                    None => return,
                },
            };
            let (reply, events, end) = self.command(&order.cmd);
            let _ = order.reply.send(reply);
            if !events.is_empty() && !self.record(events).await {
                return;
            }
            if let Some(end) = end {
                self.finish(end, &mut stop).await;
                return;
            }
        }
    }

    fn run_time(&self, now: Instant) -> Duration {
        self.ran
            + self
                .since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }

    /// The run limit kills it: it is shorter than the time the command takes.
    fn limit_kills(&self) -> Option<Duration> {
        let run = self.plan.run?;
        self.run_limit.filter(|l| *l < run)
    }

    /// When its run time reaches `t`, if it runs.
    fn when_run(&self, now: Instant, t: Duration) -> Option<Instant> {
        self.since?;
        Some(now + t.saturating_sub(self.run_time(now)))
    }

    fn next_due(&self, now: Instant) -> Option<Instant> {
        [
            self.when_run(now, self.plan.run_time(self.run_limit)),
            self.limit_kills()
                .filter(|_| self.kill_at.is_none())
                .and_then(|l| self.when_run(now, l)),
            self.sample_at,
            self.term_at,
            self.kill_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// What is due at `now`: events to record, and the job's end.
    fn due(&mut self, now: Instant) -> (Vec<Event>, Option<End>) {
        let mut events = Vec::new();
        if self.sample_at.is_some_and(|t| now >= t) {
            self.sample_at = None;
            events.push(Event {
                kind: EventKind::Rusage,
                pid: self.pid,
                pgid: self.pid,
                state: if self.stopped { 0 } else { jstat::RUN },
                pids: vec![self.pid],
                ..Default::default()
            });
        }
        if self.kill_at.is_some_and(|t| now >= t) {
            return (events, Some(self.killed_by(Signal::SIGKILL)));
        }
        if let Some(t) = self.term_at
            && now >= t
        {
            self.term_at = None;
            self.term_reason
                .get_or_insert_with(|| "TERM_DEADLINE".to_owned());
            if let Some(end) = self.deliver(Signal::SIGUSR2) {
                return (events, Some(end));
            }
        }
        let run = self.run_time(now);
        if let Some(l) = self.limit_kills()
            && self.kill_at.is_none()
            && run >= l
            && let Some(end) = self.start_kill(self.terminate_interval, "TERM_RUNLIMIT")
        {
            return (events, Some(end));
        }
        if self.since.is_some() && run >= self.plan.run_time(self.run_limit) {
            return (
                events,
                Some(End {
                    status: i32::from(self.plan.exit_code) << 8,
                }),
            );
        }
        (events, None)
    }

    fn killed_by(&self, sig: Signal) -> End {
        End { status: sig as i32 }
    }

    fn pause(&mut self) {
        if let Some(s) = self.since.take() {
            self.ran += Instant::now().saturating_duration_since(s);
        }
    }

    fn unpause(&mut self) {
        self.since.get_or_insert_with(Instant::now);
    }

    /// Signal `sig` reaches the job, which keeps the default actions.
    fn deliver(&mut self, sig: Signal) -> Option<End> {
        match fate(sig) {
            Fate::Dies => return Some(self.killed_by(sig)),
            Fate::Stops => self.pause(),
            Fate::Continues => self.unpause(),
            Fate::Nothing => {}
        }
        None
    }

    /// The kill sequence: the TERMINATE signal (SIGINT) now, SIGKILL after `interval`
    /// seconds; a repeated kill keeps the earlier deadline unless the new one is sooner.
    fn start_kill(&mut self, interval: u32, reason: &str) -> Option<End> {
        if self.term_reason.is_none() && !reason.is_empty() && reason != "-" {
            self.term_reason = Some(reason.to_owned());
        }
        let deadline = Instant::now() + Duration::from_secs(u64::from(interval));
        match self.kill_at {
            Some(d) if d <= deadline => return None,
            Some(_) => self.kill_at = Some(deadline),
            None => {
                if self.stopped {
                    self.unpause();
                }
                let sig = match &self.terminate {
                    Some(Control::Signal(s)) => *s,
                    _ => Signal::SIGINT,
                };
                if let Some(end) = self.deliver(sig) {
                    return Some(end);
                }
                self.kill_at = Some(deadline);
            }
        }
        (interval == 0).then(|| self.killed_by(Signal::SIGKILL))
    }

    fn state_event(&self, state: u32, reasons: u32, subreasons: u32) -> Event {
        Event {
            kind: EventKind::State,
            pid: self.pid,
            pgid: self.pid,
            state,
            reasons,
            subreasons,
            ..Default::default()
        }
    }

    fn stop(&mut self, state: u32, reasons: u32, subreasons: u32) -> (Vec<Event>, Option<End>) {
        let end = match &self.suspend {
            Some(Control::Signal(s)) if fate(*s) == Fate::Dies => Some(self.killed_by(*s)),
            _ => None,
        };
        self.pause();
        self.stopped = true;
        let state = if state == 0 { jstat::USUSP } else { state };
        let reasons = if reasons == 0 && state == jstat::USUSP {
            basalt_core::job::susp::USER_STOP
        } else {
            reasons
        };
        (vec![self.state_event(state, reasons, subreasons)], end)
    }

    fn resume(&mut self) -> (Vec<Event>, Option<End>) {
        let end = match &self.resume {
            Some(Control::Signal(s)) if fate(*s) == Fate::Dies => Some(self.killed_by(*s)),
            _ => None,
        };
        self.unpause();
        self.stopped = false;
        (vec![self.state_event(jstat::RUN, 0, 0)], end)
    }

    /// One control command: its reply line, the events it makes, and the job's end.
    fn command(&mut self, line: &str) -> (String, Vec<Event>, Option<End>) {
        let ok = || "OK\n".to_owned();
        let mut it = line.split_whitespace();
        let verb = it.next().unwrap_or("");
        let mut num =
            |default: u32| -> u32 { it.next().and_then(|v| v.parse().ok()).unwrap_or(default) };
        match verb {
            "PING" => (ok(), Vec::new(), None),
            "KILL" => {
                let interval = num(10);
                let reason = line.split_whitespace().nth(2).unwrap_or("-");
                let end = self.start_kill(interval, reason);
                (ok(), Vec::new(), end)
            }
            "STOP" => {
                let (state, reasons, subreasons) = (num(jstat::USUSP), num(0), num(0));
                let (events, end) = self.stop(state, reasons, subreasons);
                (ok(), events, end)
            }
            "RESUME" => {
                let (events, end) = self.resume();
                (ok(), events, end)
            }
            "REASON" => {
                let (state, reasons, subreasons) = (num(jstat::SSUSP), num(0), num(0));
                let events = if self.stopped {
                    vec![self.state_event(state, reasons, subreasons)]
                } else {
                    Vec::new()
                };
                (ok(), events, None)
            }
            "LIMITS" => {
                let values: Vec<i64> = line
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if values.len() != limit::COUNT {
                    return ("ERR LIMITS takes 11 numbers\n".to_owned(), Vec::new(), None);
                }
                let spec = JobSpec {
                    rlimits: values,
                    ..Default::default()
                };
                self.run_limit = limit_value(&spec, limit::RUN).map(Duration::from_secs);
                (ok(), Vec::new(), None)
            }
            "CHKPNT" => (
                ok(),
                vec![Event {
                    kind: EventKind::Chkpnt,
                    pid: self.pid,
                    chkpnt_ok: false,
                    message: "a hollow host takes no checkpoint".to_owned(),
                    ..Default::default()
                }],
                None,
            ),
            "SIG" => {
                let n = num(0) as i32;
                match Signal::try_from(n) {
                    Ok(Signal::SIGSTOP) | Ok(Signal::SIGTSTP) => {
                        let (events, end) =
                            self.stop(jstat::USUSP, basalt_core::job::susp::USER_STOP, 0);
                        (ok(), events, end)
                    }
                    Ok(Signal::SIGCONT) => {
                        let (events, end) = self.resume();
                        (ok(), events, end)
                    }
                    Ok(sig) => {
                        let end = self.deliver(sig);
                        (ok(), Vec::new(), end)
                    }
                    Err(_) => (format!("ERR invalid signal {n}\n"), Vec::new(), None),
                }
            }
            _ => (format!("ERR unknown command {verb}\n"), Vec::new(), None),
        }
    }

    /// Record `events` (numbered by the job table) and hand them to the owner. False
    /// when the job must not go on: the table refuses it (sbatchd gave it up) or is gone.
    async fn record(&self, events: Vec<Event>) -> bool {
        let now = self.clock.now_secs();
        let key = self.key;
        let mut events = events;
        for e in &mut events {
            if e.time == 0 {
                e.time = now;
            }
        }
        let recorded = self
            .db
            .call(move |db| db.append_events_then_sync(key, &mut events).map(|_| events))
            .await;
        match recorded {
            Ok(Ok(events)) => {
                let _ = self.wake.send(events);
                true
            }
            Ok(Err(e @ (DbError::Finished { .. } | DbError::NoJob { .. }))) => {
                error!("hollow job {} idx {}: {e}; ending it", key.0, key.1);
                false
            }
            Ok(Err(e)) => {
                error!("hollow job {} idx {}: {e}", key.0, key.1);
                true
            }
            Err(_) => false,
        }
    }

    /// Record the job's end (retried every second while the job table refuses it, as
    /// the supervisor does), hand it to the owner, and sync the table.
    async fn finish(&self, end: End, stop: &mut watch::Receiver<bool>) {
        let term_reason = self.term_reason.clone().unwrap_or_default();
        let ev = Event {
            kind: EventKind::Finished,
            time: self.clock.now_secs(),
            pid: self.pid,
            pgid: self.pid,
            state: if end.status == 0 && term_reason.is_empty() {
                jstat::DONE
            } else {
                jstat::EXIT
            },
            exit_status: end.status,
            term_reason,
            ..Default::default()
        };
        let key = self.key;
        let mut tries: u32 = 0;
        loop {
            let mut events = vec![ev.clone()];
            let recorded = self
                .db
                .call(move |db| db.append_events_then_sync(key, &mut events).map(|_| events))
                .await;
            match recorded {
                Ok(Ok(events)) => {
                    let _ = self.wake.send(events);
                    self.db.send("syncing the job table", |db| db.sync_log());
                    return;
                }
                Ok(Err(e @ (DbError::Finished { .. } | DbError::NoJob { .. }))) => {
                    warn!(
                        "hollow job {} idx {}: its end is not recorded: {e}",
                        key.0, key.1
                    );
                    return;
                }
                Ok(Err(e)) => {
                    if tries.is_multiple_of(60) {
                        error!(
                            "hollow job {} idx {}: cannot record its end ({e}); retrying every second",
                            key.0, key.1
                        );
                    }
                    tries = tries.saturating_add(1);
                }
                Err(_) => return,
            }
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Option<Duration> {
        Some(Duration::from_secs(s))
    }

    #[test]
    fn the_command_says_how_long_a_hollow_job_runs_and_how_it_ends() {
        let p = |run, exit_code| Plan { run, exit_code };
        assert_eq!(plan("sleep 1"), p(secs(1), 0));
        assert_eq!(plan("  sleep   100 "), p(secs(100), 0));
        assert_eq!(plan("sleep 1; exit 3"), p(secs(1), 3));
        assert_eq!(plan("sleep 2;exit 300"), p(secs(2), 44));
        assert_eq!(plan("exit 3"), p(None, 3));
        assert_eq!(plan("exit"), p(None, 0));
        assert_eq!(plan("false; exit"), p(None, 1));
        assert_eq!(plan("true"), p(None, 0));
        assert_eq!(plan("false"), p(None, 1));
        assert_eq!(plan(":"), p(None, 0));
        assert_eq!(plan("sleep 5; false"), p(secs(5), 1));
        assert_eq!(plan("false; sleep 5"), p(secs(5), 0));
        // GNU sleep: fractions, suffixes, several arguments added up.
        assert_eq!(plan("sleep 0.5"), p(Some(Duration::from_millis(500)), 0));
        assert_eq!(
            plan("sleep 2m 1h 1d 3s"),
            p(secs(120 + 3600 + 86400 + 3), 0)
        );
        assert_eq!(plan("sleep 1\nsleep 2\nexit 7"), p(secs(3), 7));
        // What follows exit never runs.
        assert_eq!(plan("exit 2; sleep 10"), p(None, 2));
        // Anything else: the run limit's time (or none), exit 0.
        for other in [
            "",
            "hostname",
            "sleep",
            "sleep x",
            "sleep -1",
            "sleep 1; hostname",
            "exit 1 2",
            "exit x",
            "true 1",
            "sleep 1 && exit 3",
            "sleep inf",
        ] {
            assert_eq!(plan(other), p(None, 0), "{other:?}");
        }
        // The run time: the command's, else the run limit, else none.
        assert_eq!(plan("sleep 5").run_time(secs(60)), Duration::from_secs(5));
        assert_eq!(plan("exit 3").run_time(secs(60)), Duration::from_secs(60));
        assert_eq!(plan("hostname").run_time(None), Duration::ZERO);
    }

    /// A hollow runner on a job table in `dir`, with job `id` (`command`, run limit
    /// `run_limit` seconds, `JOB_CONTROLS` `controls`) recorded and started; its events'
    /// channel.
    struct Bench {
        _dir: tempfile::TempDir,
        db: DbHandle,
        hollow: Hollow,
    }

    impl Bench {
        fn new() -> Bench {
            let dir = tempfile::tempdir().expect("tempdir");
            let jobs = crate::db::JobDb::open(&dir.path().join("jobs.db"), true).expect("db");
            let rt = tokio::runtime::Handle::current();
            Bench {
                db: DbHandle::spawn_pooled(jobs, &rt),
                hollow: Hollow::new(rt, Arc::new(basalt_runtime::time::SystemClock)),
                _dir: dir,
            }
        }

        async fn start(
            &self,
            id: u64,
            command: &str,
            run_limit: i64,
            controls: &[(&str, &str)],
        ) -> mpsc::UnboundedReceiver<Vec<Event>> {
            let mut rlimits = vec![-1; limit::COUNT];
            rlimits[limit::RUN] = run_limit;
            let spec = JobSpec {
                job_id: id,
                attempt: 1,
                user: "alice".into(),
                uid: 1000,
                command: command.into(),
                rlimits,
                job_controls: controls
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                ..Default::default()
            };
            let launch = Launch {
                sample_ms: 3000,
                terminate_interval: 2,
                ..Default::default()
            };
            let key = (id, 0, 1);
            let (s, l) = (spec.clone(), launch.clone());
            self.db
                .call(move |db| db.insert_job(key, &s, &l, 0, None))
                .await
                .expect("db")
                .expect("insert");
            self.hollow
                .start(key, Arc::new(spec), &launch, self.db.clone())
        }
    }

    /// The next batch of events, and how long (virtual time) it took to come.
    async fn next(rx: &mut mpsc::UnboundedReceiver<Vec<Event>>) -> (Vec<Event>, Duration) {
        let t = Instant::now();
        let evs = rx.recv().await.expect("events");
        (evs, t.elapsed())
    }

    fn kinds(evs: &[Event]) -> Vec<EventKind> {
        evs.iter().map(|e| e.kind).collect()
    }

    /// bstop and bresume pause and resume a hollow job's run time; its events are those
    /// a supervisor records, numbered and in the job table; it ends with its command's
    /// status after its run time, and its channel closes.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_hollow_job_runs_its_time_with_stops_and_ends_with_its_status() {
        let b = Bench::new();
        let mut rx = b.start(1, "sleep 10; exit 4", -1, &[]).await;
        let (evs, _) = next(&mut rx).await;
        assert_eq!(kinds(&evs), [EventKind::Started, EventKind::Executing]);
        assert_eq!(evs.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
        let pid = evs[0].pid;
        assert!(pid >= FIRST_PID && evs[0].pgid == pid, "{evs:?}");
        assert_eq!(
            (evs[1].exec_user.as_str(), evs[1].exec_uid),
            ("alice", 1000)
        );

        tokio::time::sleep(Duration::from_secs(2)).await;
        let key = (1, 0, 1);
        assert_eq!(
            b.hollow.control(key, "STOP 0 0 0").await.as_deref(),
            Ok("OK\n")
        );
        let (evs, _) = next(&mut rx).await;
        assert_eq!(kinds(&evs), [EventKind::State]);
        assert_eq!(
            (evs[0].state, evs[0].reasons),
            (jstat::USUSP, basalt_core::job::susp::USER_STOP)
        );
        // Stopped for 100 s: its usage sample comes (at 3 s), its end does not.
        let (evs, _) = next(&mut rx).await;
        assert_eq!((kinds(&evs), evs[0].state), (vec![EventKind::Rusage], 0));
        tokio::time::sleep(Duration::from_secs(100)).await;
        assert!(rx.try_recv().is_err(), "nothing while stopped");
        assert_eq!(b.hollow.control(key, "RESUME").await.as_deref(), Ok("OK\n"));
        let (evs, _) = next(&mut rx).await;
        assert_eq!(
            (kinds(&evs), evs[0].state),
            (vec![EventKind::State], jstat::RUN)
        );
        // 8 s of its 10 left.
        let (evs, took) = next(&mut rx).await;
        assert_eq!(kinds(&evs), [EventKind::Finished]);
        assert_eq!(took, Duration::from_secs(8));
        let end = &evs[0];
        assert_eq!(
            (end.state, end.exit_status, end.pid),
            (jstat::EXIT, 4 << 8, pid)
        );
        assert!(end.term_reason.is_empty());
        assert!(
            rx.recv().await.is_none(),
            "the channel closes after the end"
        );
        assert_eq!(b.hollow.running(), 0);
        assert!(b.hollow.control(key, "PING").await.is_err());
        // All on record, numbered as handed over.
        let stored =
            b.db.call(move |db| db.events_after(key, 0))
                .await
                .expect("db")
                .expect("events");
        assert_eq!(
            kinds(&stored),
            [
                EventKind::Started,
                EventKind::Executing,
                EventKind::State,
                EventKind::Rusage,
                EventKind::State,
                EventKind::Finished
            ]
        );
        assert_eq!(stored.last().map(|e| e.seq), Some(6));
    }

    /// A kill ends a hollow job at once, killed by SIGINT (or the queue's TERMINATE
    /// signal) with the kill's reason; a signal acts as its default action; a run limit
    /// shorter than the command's time kills it (TERM_RUNLIMIT); without a time in its
    /// command a job runs for its run limit and ends with its status.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn kills_signals_and_run_limits_end_hollow_jobs_as_real_ones() {
        let b = Bench::new();
        let end_of = |evs: Vec<Event>| {
            assert_eq!(kinds(&evs), [EventKind::Finished], "{evs:?}");
            let e = &evs[0];
            (e.state, e.exit_status, e.term_reason.clone())
        };
        let exit = (jstat::EXIT, libc::SIGINT, "TERM_OWNER".to_owned());

        let mut killed = b.start(2, "sleep 100", -1, &[]).await;
        next(&mut killed).await;
        b.hollow
            .control((2, 0, 1), "KILL 2 TERM_OWNER")
            .await
            .expect("kill");
        let (evs, took) = next(&mut killed).await;
        assert_eq!((end_of(evs), took), (exit.clone(), Duration::ZERO));

        // Stopped, then killed: it ends as well.
        let mut stopped = b.start(3, "sleep 100", -1, &[]).await;
        next(&mut stopped).await;
        b.hollow.control((3, 0, 1), "SIG 19").await.expect("stop");
        next(&mut stopped).await;
        b.hollow
            .control((3, 0, 1), "KILL 2 TERM_OWNER")
            .await
            .expect("kill");
        assert_eq!(end_of(next(&mut stopped).await.0), exit);

        // The queue's TERMINATE signal, and a signal ignored by default.
        let mut usr1 = b
            .start(4, "sleep 100", -1, &[("TERMINATE", "SIGUSR1")])
            .await;
        next(&mut usr1).await;
        b.hollow.control((4, 0, 1), "SIG 28").await.expect("winch");
        b.hollow
            .control((4, 0, 1), "KILL 0 TERM_ADMIN")
            .await
            .expect("kill");
        assert_eq!(
            end_of(next(&mut usr1).await.0),
            (jstat::EXIT, libc::SIGUSR1, "TERM_ADMIN".to_owned())
        );
        // A TERMINATE signal that does not end it: SIGKILL after the interval.
        let mut tstp = b
            .start(5, "sleep 100", -1, &[("TERMINATE", "SIGCHLD")])
            .await;
        next(&mut tstp).await;
        b.hollow
            .control((5, 0, 1), "KILL 7 TERM_OWNER")
            .await
            .expect("kill");
        let (evs, t1) = next(&mut tstp).await;
        assert_eq!(kinds(&evs), [EventKind::Rusage], "its sample at 3 s");
        let (evs, t2) = next(&mut tstp).await;
        assert_eq!(
            end_of(evs),
            (jstat::EXIT, libc::SIGKILL, "TERM_OWNER".to_owned())
        );
        assert_eq!(t1 + t2, Duration::from_secs(7));

        // bkill -s TERM.
        let mut term = b.start(6, "sleep 100", -1, &[]).await;
        next(&mut term).await;
        b.hollow.control((6, 0, 1), "SIG 15").await.expect("sig");
        assert_eq!(
            end_of(next(&mut term).await.0),
            (jstat::EXIT, libc::SIGTERM, String::new())
        );

        // Run limit 5 s, command 100 s: killed at 5 s (its usage sample at 3 s first).
        let mut limited = b.start(7, "sleep 100", 5, &[]).await;
        next(&mut limited).await;
        assert_eq!(kinds(&next(&mut limited).await.0), [EventKind::Rusage]);
        let (evs, took) = next(&mut limited).await;
        assert_eq!(
            end_of(evs),
            (jstat::EXIT, libc::SIGINT, "TERM_RUNLIMIT".to_owned())
        );
        assert_eq!(took, Duration::from_secs(2));

        // No time in the command: its run limit, then its own status.
        let mut w = b.start(8, "exit 3", 7, &[]).await;
        let (_, t0) = next(&mut w).await;
        assert_eq!(kinds(&next(&mut w).await.0), [EventKind::Rusage]);
        let (evs, took) = next(&mut w).await;
        assert_eq!(end_of(evs), (jstat::EXIT, 3 << 8, String::new()));
        assert_eq!(t0 + took, Duration::from_secs(4));
        let mut at_once = b.start(9, "true", -1, &[]).await;
        next(&mut at_once).await;
        assert_eq!(
            end_of(next(&mut at_once).await.0),
            (jstat::DONE, 0, String::new())
        );

        // sbatchd stops: the jobs' tasks end, recording nothing more.
        let mut left = b.start(10, "sleep 100", -1, &[]).await;
        next(&mut left).await;
        b.hollow.stop();
        assert!(left.recv().await.is_none());
        assert_eq!(b.hollow.running(), 0);
    }

    #[test]
    fn what_a_hollow_job_does_not_do_is_named() {
        let plain = JobSpec {
            command: "sleep 1".into(),
            job_controls: [("SUSPEND".to_owned(), "SIGTSTP".to_owned())].into(),
            ..Default::default()
        };
        assert!(not_simulated(&plain).is_empty());
        let hooks = JobSpec {
            pre_exec: "true".into(),
            job_controls: [("TERMINATE".to_owned(), "/bin/kill-it".to_owned())].into(),
            ..plain
        };
        assert_eq!(
            not_simulated(&hooks),
            [
                "pre-execution commands",
                "JOB_CONTROLS commands (the default actions are taken)"
            ]
        );
    }

    #[test]
    fn signals_act_as_their_default_action_on_a_process() {
        assert_eq!(fate(Signal::SIGINT), Fate::Dies);
        assert_eq!(fate(Signal::SIGKILL), Fate::Dies);
        assert_eq!(fate(Signal::SIGUSR2), Fate::Dies);
        assert_eq!(fate(Signal::SIGTSTP), Fate::Stops);
        assert_eq!(fate(Signal::SIGCONT), Fate::Continues);
        assert_eq!(fate(Signal::SIGWINCH), Fate::Nothing);
    }

    #[test]
    fn fake_pids_are_unique_and_no_real_process_has_them() {
        let a = fake_pid();
        let b = fake_pid();
        assert_ne!(a, b);
        for p in [a, b] {
            assert!(p >= FIRST_PID && p <= i32::MAX as u32, "{p}");
        }
    }
}
