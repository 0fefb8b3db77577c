//! The owner task: holds the job table in memory (the job database, [`crate::db`],
//! is its durable copy). gRPC handlers, event watchers and reporters send it
//! messages; it answers and spawns the work that does I/O (launching supervisors,
//! database calls on the database thread, control-socket calls, reports), so it
//! never waits on the filesystem, SQLite or the network itself.

use crate::Shared;
use crate::db::{DbError, DbHandle, StoredJob};
use crate::mbd::{self, Client};
use crate::state::{self, Event, EventKind, SupervisorId};
use basalt_core::job::status as jstat;
use basalt_proto::mbatchd::{AckKind, JobRef, JobReport, ReportKind, SbdJob};
use basalt_proto::sbatchd::{
    JobSpec, PeekRequest, SignalAction, SignalJobRequest, StatusJob, StatusReply,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;
use tracing::{Instrument, debug, info, warn};

pub use crate::db::Key;

/// How long an adopted job may go without a recorded supervisor before it is
/// taken for dead (sbatchd was killed between starting the supervisor and the
/// supervisor recording itself).
const UNRECORDED_GRACE: Duration = Duration::from_secs(10);

/// How a StartJob was answered: (pid, pgid), or why it could not start.
type StartAnswer = Result<(u32, u32), String>;

/// What a peek should read.
#[derive(Debug, Clone)]
pub struct PeekTarget {
    pub path: String,
}

/// Messages the owner serves.
#[derive(Debug)]
pub enum Msg {
    Start {
        epoch: u64,
        spec: Box<JobSpec>,
        reply: oneshot::Sender<Result<(u32, u32), Status>>,
    },
    Signal {
        req: SignalJobRequest,
        reply: oneshot::Sender<Result<bool, Status>>,
    },
    Peek {
        req: PeekRequest,
        reply: oneshot::Sender<Result<PeekTarget, Status>>,
    },
    Status {
        reply: oneshot::Sender<StatusReply>,
    },
    /// The jobs to list in an SbdHello.
    HelloJobs {
        reply: oneshot::Sender<Vec<SbdJob>>,
    },
    /// mbatchd answered a hello: its epoch, its bkill grace, and the jobs it
    /// believes run on this host.
    Hello {
        epoch: u64,
        terminate_interval: u32,
        jobs: Vec<SbdJob>,
    },
    /// New events of a job, in order.
    Events {
        key: Key,
        events: Vec<Event>,
    },
    /// The job's watcher ended: the final event was seen (`final_seen`) or the
    /// supervisor is gone without one.
    WatcherDone {
        key: Key,
        final_seen: bool,
    },
    /// Recording the end of a job whose supervisor is gone did not work out.
    EndNotRecorded {
        key: Key,
    },
    /// mbatchd acknowledged a report.
    Acked {
        key: Key,
        seq: u64,
        kind: ReportKind,
        ack: AckKind,
        epoch: u64,
    },
    /// The load policy asks for the jobs it decides about.
    PolicyJobs {
        reply: oneshot::Sender<Vec<basalt_susp_core::JobView>>,
    },
    /// The load policy's decisions.
    PolicyActions {
        actions: Vec<basalt_susp_core::Action>,
    },
    Shutdown,
}

struct Job {
    spec: Arc<JobSpec>,
    /// The job's directory (its supervisor's control socket).
    dir: PathBuf,
    pid: u32,
    pgid: u32,
    /// LSF state code; 0 while starting.
    state: u32,
    /// Suspending reasons and subreasons of the newest state change.
    reasons: u32,
    subreasons: u32,
    /// When the job started (ms since the epoch; 0 = not known).
    start_ms: i64,
    exec_uid: Option<u32>,
    out_path: String,
    last_seq: u64,
    /// The newest event mbatchd acknowledged (reports up to it are not resent).
    acked_seq: u64,
    /// The job's processes belong to this boot (false for a job found after a
    /// reboot: its pgid may name someone else's processes now).
    this_boot: bool,
    /// Recording the end of a job whose supervisor is gone is under way.
    ending: bool,
    /// Consecutive hellos whose answer did not list this running job.
    unlisted: u32,
    /// The newest usage sample, for a probe report.
    last_usage: Option<Event>,
    final_seen: bool,
    final_acked: bool,
    watcher_done: bool,
    start_error: Option<String>,
    waiters: Vec<oneshot::Sender<Result<(u32, u32), Status>>>,
    /// The reporter's queue; None once mbatchd said NO_JOB.
    reports: Option<mpsc::UnboundedSender<JobReport>>,
}

impl Job {
    fn running(&self) -> bool {
        !self.final_seen
    }
}

/// The owner of the job table.
pub struct Owner {
    shared: Arc<Shared>,
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    client: watch::Receiver<Option<Client>>,
    jobs: BTreeMap<Key, Job>,
    /// Recently removed jobs, so a repeated StartJob is answered, not re-run.
    recent: BTreeMap<Key, (StartAnswer, Instant)>,
}

const RECENT_KEEP: Duration = Duration::from_secs(600);

impl Owner {
    pub fn new(
        shared: Arc<Shared>,
        db: DbHandle,
        tx: mpsc::Sender<Msg>,
        client: watch::Receiver<Option<Client>>,
    ) -> Owner {
        Owner {
            shared,
            db,
            tx,
            client,
            jobs: BTreeMap::new(),
            recent: BTreeMap::new(),
        }
    }

    pub async fn run(mut self, mut rx: mpsc::Receiver<Msg>, found: Vec<StoredJob>) {
        for f in found {
            self.adopt(f);
        }
        while let Some(msg) = rx.recv().await {
            match msg {
                Msg::Shutdown => break,
                m => self.handle(m),
            }
        }
    }

    fn check_epoch(&self, epoch: u64) -> Result<(), Status> {
        let newest = self.shared.epoch();
        if epoch < newest {
            return Err(Status::failed_precondition(format!(
                "stale epoch {epoch}: this sbatchd has seen epoch {newest}"
            )));
        }
        self.shared.epoch.fetch_max(epoch, Ordering::SeqCst);
        Ok(())
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Start { epoch, spec, reply } => {
                if let Err(s) = self.check_epoch(epoch) {
                    let _ = reply.send(Err(s));
                    return;
                }
                self.start(*spec, reply);
            }
            Msg::Signal { req, reply } => {
                if let Err(s) = self.check_epoch(req.epoch) {
                    let _ = reply.send(Err(s));
                    return;
                }
                self.signal(req, reply);
            }
            Msg::Peek { req, reply } => {
                let _ = reply.send(self.peek(&req));
            }
            Msg::Status { reply } => {
                let pid = self.shared.mbatchd_pid.load(Ordering::SeqCst);
                let _ = reply.send(StatusReply {
                    host: self.shared.host.clone(),
                    epoch: self.shared.epoch(),
                    jobs: self
                        .jobs
                        .iter()
                        .map(|(k, j)| StatusJob {
                            job_id: k.0,
                            idx: k.1,
                            attempt: k.2,
                            state: j.state,
                            pid: j.pid,
                            pgid: j.pgid,
                        })
                        .collect(),
                    supervising_mbatchd: pid != 0,
                    mbatchd_pid: pid,
                });
            }
            Msg::HelloJobs { reply } => {
                let jobs = self
                    .jobs
                    .iter()
                    .filter(|(_, j)| !j.final_acked && j.reports.is_some())
                    .map(|(k, j)| SbdJob {
                        id: Some(job_ref(k.0, k.1)),
                        attempt: k.2,
                        state: j.state,
                        pid: j.pid,
                        pgid: j.pgid,
                    })
                    .collect();
                let _ = reply.send(jobs);
            }
            Msg::Hello {
                epoch,
                terminate_interval,
                jobs,
            } => {
                self.reconcile(&jobs);
                self.shared.epoch.fetch_max(epoch, Ordering::SeqCst);
                if terminate_interval > 0 {
                    self.shared
                        .terminate_interval
                        .store(terminate_interval, Ordering::SeqCst);
                }
            }
            Msg::PolicyJobs { reply } => {
                let _ = reply.send(self.policy_jobs());
            }
            Msg::PolicyActions { actions } => self.policy_actions(actions),
            Msg::Events { key, events } => self.events(key, events),
            Msg::WatcherDone { key, final_seen } => self.watcher_done(key, final_seen),
            Msg::EndNotRecorded { key } => {
                if let Some(job) = self.jobs.get_mut(&key) {
                    job.ending = false;
                }
            }
            Msg::Acked {
                key,
                seq,
                kind,
                ack,
                epoch,
            } => {
                self.shared.epoch.fetch_max(epoch, Ordering::SeqCst);
                self.acked(key, seq, kind, ack);
            }
            Msg::Shutdown => {}
        }
    }

    fn new_job(&mut self, key: Key, spec: Arc<JobSpec>, dir: PathBuf) -> &mut Job {
        let (rtx, rrx) = mpsc::unbounded_channel();
        tokio::spawn(
            mbd::reporter(
                self.shared.clone(),
                key,
                rrx,
                self.tx.clone(),
                self.client.clone(),
            )
            .in_current_span(),
        );
        self.jobs.entry(key).or_insert(Job {
            spec,
            dir,
            pid: 0,
            pgid: 0,
            state: 0,
            reasons: 0,
            subreasons: 0,
            start_ms: 0,
            exec_uid: None,
            out_path: String::new(),
            last_seq: 0,
            acked_seq: 0,
            this_boot: true,
            ending: false,
            unlisted: 0,
            last_usage: None,
            final_seen: false,
            final_acked: false,
            watcher_done: false,
            start_error: None,
            waiters: Vec::new(),
            reports: Some(rtx),
        })
    }

    fn start(&mut self, spec: JobSpec, reply: oneshot::Sender<Result<(u32, u32), Status>>) {
        let key = (spec.job_id, spec.idx, spec.attempt);
        if let Some(job) = self.jobs.get_mut(&key) {
            if let Some(e) = &job.start_error {
                let _ = reply.send(Err(Status::aborted(e.clone())));
            } else if job.pid != 0 {
                let _ = reply.send(Ok((job.pid, job.pgid)));
            } else {
                job.waiters.push(reply);
            }
            return;
        }
        if let Some((answer, _)) = self.recent.get(&key) {
            let _ = reply.send(answer.clone().map_err(Status::aborted));
            return;
        }
        // A newer attempt replaces an older copy still running here.
        let stale: Vec<Key> = self
            .jobs
            .iter()
            .filter(|(k, j)| k.0 == key.0 && k.1 == key.1 && k.2 < key.2 && j.running())
            .map(|(k, _)| *k)
            .collect();
        for k in stale {
            info!(
                "job {}[{}]: attempt {} replaces attempt {}; killing the old one",
                k.0, k.1, key.2, k.2
            );
            self.send_ctl(k, "KILL 0 -".to_owned(), None);
        }
        info!(
            "job {} idx {} attempt {}: starting as user {}",
            key.0, key.1, key.2, spec.user
        );
        let dir = state::job_dir(&self.shared.state_root, key);
        let job_file = spec.job_file.clone();
        let mut light = spec;
        light.job_file = Vec::new();
        let full = Arc::new(JobSpec {
            job_file,
            ..light.clone()
        });
        let job = self.new_job(key, Arc::new(light), dir.clone());
        job.waiters.push(reply);
        let shared = self.shared.clone();
        let tx = self.tx.clone();
        let db = self.db.clone();
        tokio::spawn(launch(shared, db, tx, key, full, dir).in_current_span());
    }

    /// Take over a job found in the database when sbatchd starts: resend what
    /// mbatchd has not acknowledged, and follow the supervisor if it still runs.
    fn adopt(&mut self, f: StoredJob) {
        let key = f.key;
        let final_seq = f.events.iter().find(|e| e.kind.is_final()).map(|e| e.seq);
        let alive = f.supervisor.as_ref().is_some_and(SupervisorId::alive);
        // Of this boot: its supervisor's boot id says so, or (none recorded) the row
        // was written after the machine booted.
        let this_boot = match &f.supervisor {
            Some(s) => s.boot == state::boot_id(),
            None => procfs::boot_time_secs()
                .ok()
                .and_then(|b| i64::try_from(b).ok())
                .is_none_or(|booted| f.created >= booted),
        };
        info!(
            "job {} idx {} attempt {}: re-adopted ({}; {} event(s), {} acknowledged{})",
            key.0,
            key.1,
            key.2,
            if final_seq.is_some() {
                "finished"
            } else if alive {
                "supervisor alive"
            } else if f.supervisor.is_none() {
                "supervisor not recorded"
            } else {
                "supervisor gone"
            },
            f.last_seq,
            f.acked_seq,
            if f.abandoned {
                "; mbatchd does not know it"
            } else {
                ""
            }
        );
        let mut light = f.spec;
        light.job_file = Vec::new();
        let dir = state::job_dir(&self.shared.state_root, key);
        let job = self.new_job(key, Arc::new(light), dir);
        job.acked_seq = f.acked_seq;
        job.this_boot = this_boot;
        job.final_acked = final_seq.is_some_and(|s| s <= f.acked_seq);
        if f.abandoned {
            job.reports = None;
        }
        self.events(key, f.events);
        if let Some(job) = self.jobs.get_mut(&key)
            && job.last_seq < f.last_seq
        {
            // Pruned (acknowledged usage) events keep their numbers.
            job.last_seq = f.last_seq;
        }
        if final_seq.is_some() {
            self.watcher_done(key, true);
        } else if alive || (f.supervisor.is_none() && this_boot) {
            let tx = self.tx.clone();
            let db = self.db.clone();
            let last = f.last_seq;
            tokio::spawn(
                watch_events(db, tx, key, None, Adopted::Known(f.supervisor), last)
                    .in_current_span(),
            );
        } else {
            self.watcher_done(key, false);
        }
    }

    fn events(&mut self, key: Key, events: Vec<Event>) {
        let host = self.shared.host.clone();
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        for ev in events {
            if ev.seq <= job.last_seq {
                continue;
            }
            job.last_seq = ev.seq;
            match ev.kind {
                EventKind::Started => {
                    job.pid = ev.pid;
                    job.pgid = ev.pgid;
                    job.state = jstat::RUN;
                    job.start_ms = ev.time.saturating_mul(1000);
                    for w in job.waiters.drain(..) {
                        let _ = w.send(Ok((ev.pid, ev.pgid)));
                    }
                }
                EventKind::Executing => {
                    job.out_path = ev.out_path.clone();
                    job.exec_uid = Some(ev.exec_uid);
                    if job.pid == 0 {
                        job.pid = ev.pid;
                        job.pgid = ev.pgid;
                    }
                }
                EventKind::Rusage => job.last_usage = Some(ev.clone()),
                EventKind::State => {
                    job.state = ev.state;
                    job.reasons = ev.reasons;
                    job.subreasons = ev.subreasons;
                }
                EventKind::Finished => {
                    job.state = ev.state;
                    job.final_seen = true;
                    info!(
                        "job {} idx {} attempt {}: finished, wait status {}{}",
                        key.0,
                        key.1,
                        key.2,
                        ev.exit_status,
                        if ev.term_reason.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", ev.term_reason)
                        }
                    );
                }
                EventKind::StartFailed => {
                    job.final_seen = true;
                    job.state = jstat::EXIT;
                    warn!(
                        "job {} idx {} attempt {}: could not start: {}",
                        key.0, key.1, key.2, ev.message
                    );
                    job.start_error = Some(ev.message.clone());
                    for w in job.waiters.drain(..) {
                        let _ = w.send(Err(Status::aborted(ev.message.clone())));
                    }
                }
            }
            if ev.seq > job.acked_seq
                && let Some(r) = &job.reports
            {
                let _ = r.send(to_report(&host, key, &ev));
            }
        }
    }

    /// Compare the jobs mbatchd believes run here with ours. A job we run that two
    /// answers in a row do not list (mbatchd removed or requeued it while it could
    /// not reach us, or lost it) and that reports nothing new gets a probe: its
    /// newest acknowledged report again (a usage report, which changes nothing
    /// mbatchd has logged). mbatchd answers NO_JOB or STOP_JOB for a job that must
    /// not run here, and the usual handling kills it; a job it does run is answered
    /// OK and left alone. Jobs mbatchd acknowledged nothing of yet are not asked
    /// about (their start may be in flight).
    fn reconcile(&mut self, theirs: &[SbdJob]) {
        let listed: std::collections::BTreeSet<Key> = theirs
            .iter()
            .filter_map(|j| j.id.as_ref().map(|id| (id.job_id, id.idx, j.attempt)))
            .collect();
        let host = self.shared.host.clone();
        for (key, job) in self.jobs.iter_mut() {
            let askable = !job.final_seen && job.acked_seq > 0 && job.reports.is_some();
            if !askable || listed.contains(key) {
                job.unlisted = 0;
                continue;
            }
            job.unlisted += 1;
            if job.unlisted < 2 {
                continue;
            }
            job.unlisted = 0;
            info!(
                "job {} idx {} attempt {}: mbatchd does not list it as running here; asking about it",
                key.0, key.1, key.2
            );
            let probe = Event {
                seq: job.acked_seq,
                kind: EventKind::Rusage,
                time: now_secs(),
                pid: job.pid,
                pgid: job.pgid,
                state: job.state,
                ..job.last_usage.clone().unwrap_or_default()
            };
            if let Some(r) = &job.reports {
                let _ = r.send(to_report(&host, *key, &probe));
            }
        }
    }

    fn watcher_done(&mut self, key: Key, final_seen: bool) {
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        job.watcher_done = true;
        if !final_seen && !job.final_seen && !job.ending {
            // The supervisor is gone without a final word: kill what may be left of
            // the job (when its processes are of this boot) and record it as killed.
            job.ending = true;
            let ev = if job.pid != 0 {
                if job.this_boot && job.pgid > 1 {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(job.pgid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                warn!(
                    "job {} idx {} attempt {}: its supervisor died; job killed",
                    key.0, key.1, key.2
                );
                Event {
                    kind: EventKind::Finished,
                    time: now_secs(),
                    pid: job.pid,
                    pgid: job.pgid,
                    state: jstat::EXIT,
                    exit_status: nix::sys::signal::Signal::SIGKILL as i32,
                    message: "the job's supervisor died".to_owned(),
                    ..Default::default()
                }
            } else {
                Event {
                    kind: EventKind::StartFailed,
                    time: now_secs(),
                    message: "the job's supervisor ended before the job started".to_owned(),
                    ..Default::default()
                }
            };
            let (db, tx, last) = (self.db.clone(), self.tx.clone(), job.last_seq);
            let reboot = !job.this_boot;
            tokio::spawn(record_end(db, tx, key, ev, last, reboot).in_current_span());
        }
        self.maybe_remove(key);
    }

    fn acked(&mut self, key: Key, seq: u64, kind: ReportKind, ack: AckKind) {
        let Some(job) = self.jobs.get_mut(&key) else {
            return;
        };
        if ack != AckKind::NoJob && seq > job.acked_seq {
            job.acked_seq = seq;
            self.db
                .send("recording an acknowledgement", move |db| db.ack(key, seq));
        }
        match ack {
            AckKind::Ok => {
                if matches!(kind, ReportKind::Finished | ReportKind::StartFailed) {
                    job.final_acked = true;
                }
            }
            AckKind::NoJob => {
                info!(
                    "job {} idx {} attempt {}: mbatchd does not know it; no more reports{}",
                    key.0,
                    key.1,
                    key.2,
                    if job.running() { ", killing it" } else { "" }
                );
                job.reports = None;
                self.db.send("recording NO_JOB", move |db| db.abandon(key));
                if job.running() {
                    self.send_ctl(key, "KILL 0 -".to_owned(), None);
                }
            }
            AckKind::StopJob => {
                if matches!(kind, ReportKind::Finished | ReportKind::StartFailed) {
                    job.final_acked = true;
                }
                if job.running() {
                    info!(
                        "job {} idx {} attempt {}: mbatchd says stop it; killing it",
                        key.0, key.1, key.2
                    );
                    let ti = self.shared.terminate_interval.load(Ordering::SeqCst);
                    self.send_ctl(key, format!("KILL {ti} -"), None);
                }
            }
        }
        self.maybe_remove(key);
    }

    /// Drop a job whose story is over: the final report acknowledged (or reporting
    /// abandoned after NO_JOB) and its supervisor gone. Its row, events and
    /// directory go too.
    fn maybe_remove(&mut self, key: Key) {
        let Some(job) = self.jobs.get(&key) else {
            return;
        };
        let done = job.final_seen && job.watcher_done && (job.final_acked || job.reports.is_none());
        if !done {
            return;
        }
        if let Some(job) = self.jobs.remove(&key) {
            let now = Instant::now();
            self.recent
                .retain(|_, (_, t)| now.duration_since(*t) < RECENT_KEEP);
            let answer = match job.start_error {
                Some(e) => Err(e),
                None => Ok((job.pid, job.pgid)),
            };
            self.recent.insert(key, (answer, now));
            let dir = job.dir;
            self.db.send("forgetting a finished job", move |db| {
                db.remove(key)?;
                if let Err(e) = std::fs::remove_dir_all(&dir)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    warn!("cannot remove {}: {e}", dir.display());
                }
                Ok(())
            });
            debug!("job {} idx {} attempt {}: forgotten", key.0, key.1, key.2);
        }
    }

    fn find(&self, job_id: u64, idx: u32, attempt: u32) -> Option<Key> {
        if attempt != 0 {
            let k = (job_id, idx, attempt);
            return self.jobs.contains_key(&k).then_some(k);
        }
        self.jobs
            .range((job_id, idx, 0)..=(job_id, idx, u32::MAX))
            .next_back()
            .map(|(k, _)| *k)
    }

    fn signal(&mut self, req: SignalJobRequest, reply: oneshot::Sender<Result<bool, Status>>) {
        let Some(key) = self.find(req.job_id, req.idx, req.attempt) else {
            let _ = reply.send(Ok(false));
            return;
        };
        let Some(job) = self.jobs.get(&key) else {
            let _ = reply.send(Ok(false));
            return;
        };
        if !job.running() {
            let _ = reply.send(Ok(false));
            return;
        }
        let action = SignalAction::try_from(req.action).unwrap_or(SignalAction::Kill);
        let cmd = match action {
            SignalAction::Kill => {
                let ti = if req.terminate_interval > 0 {
                    req.terminate_interval
                } else {
                    self.shared.terminate_interval.load(Ordering::SeqCst)
                };
                let reason = if req.term_reason.trim().is_empty() {
                    "-".to_owned()
                } else {
                    req.term_reason
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join("_")
                };
                format!("KILL {ti} {reason}")
            }
            SignalAction::Stop => format!("STOP {} {} 0", req.stop_state, req.reasons),
            SignalAction::Resume => "RESUME".to_owned(),
            SignalAction::Signal => match basalt_core::job::signal_number(&req.signal) {
                Some(n) => format!("SIG {n}"),
                None => {
                    let _ = reply.send(Err(Status::invalid_argument(format!(
                        "{}: Unknown signal",
                        req.signal
                    ))));
                    return;
                }
            },
        };
        info!("job {} idx {} attempt {}: {cmd}", key.0, key.1, key.2);
        self.send_ctl(key, cmd, Some(reply));
    }

    /// Send a command to the job's supervisor (in a task); answer `reply` with found.
    fn send_ctl(
        &self,
        key: Key,
        cmd: String,
        reply: Option<oneshot::Sender<Result<bool, Status>>>,
    ) {
        let Some(job) = self.jobs.get(&key) else {
            if let Some(r) = reply {
                let _ = r.send(Ok(false));
            }
            return;
        };
        let dir = job.dir.clone();
        tokio::spawn(
            async move {
                match ctl_call(&dir, &cmd).await {
                    Ok(answer) if answer.starts_with("OK") => {}
                    Ok(answer) => {
                        warn!("job {}: supervisor refused {cmd}: {}", key.0, answer.trim())
                    }
                    Err(e) => warn!("job {}: supervisor did not take {cmd}: {e}", key.0),
                }
                if let Some(r) = reply {
                    let _ = r.send(Ok(true));
                }
            }
            .in_current_span(),
        );
    }

    /// The jobs the load policy decides about: started, not finished, not ending.
    fn policy_jobs(&self) -> Vec<basalt_susp_core::JobView> {
        use basalt_susp_core::JobState as P;
        self.jobs
            .iter()
            .filter(|(_, j)| j.running() && !j.ending && j.pid != 0 && j.reports.is_some())
            .filter_map(|(k, j)| {
                let state = match j.state {
                    jstat::RUN => P::Run,
                    jstat::SSUSP => P::Ssusp {
                        reasons: j.reasons,
                        subreasons: j.subreasons,
                    },
                    jstat::USUSP => P::Ususp,
                    _ => return None,
                };
                Some(basalt_susp_core::JobView {
                    key: *k,
                    queue: j.spec.queue.clone(),
                    start_time: j.start_ms,
                    state,
                    forced: j.spec.forced,
                })
            })
            .collect()
    }

    /// Carry out the load policy's decisions through the jobs' supervisors. The
    /// state is taken at once (the supervisor's event confirms it) so the next
    /// pass does not act on the same job twice. A decision made on a state that
    /// changed meanwhile (bstop, bresume, the job ended) is dropped.
    fn policy_actions(&mut self, actions: Vec<basalt_susp_core::Action>) {
        use basalt_susp_core::Action;
        for a in actions {
            let key = match &a {
                Action::Suspend { key, .. }
                | Action::Resume { key }
                | Action::Terminate { key, .. }
                | Action::Reason { key, .. } => *key,
            };
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let still = j.running()
                && match &a {
                    Action::Suspend { .. } => j.state == jstat::RUN,
                    Action::Resume { .. } | Action::Reason { .. } => {
                        j.state == jstat::SSUSP
                            && j.reasons & basalt_core::job::susp::USER_STOP == 0
                    }
                    Action::Terminate { .. } => matches!(j.state, jstat::RUN | jstat::SSUSP),
                };
            if !still {
                continue;
            }
            let (key, cmd) = match a {
                Action::Suspend {
                    key,
                    reasons,
                    subreasons,
                } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.state = jstat::SSUSP;
                        j.reasons = reasons;
                        j.subreasons = subreasons;
                    }
                    info!(
                        "job {} idx {} attempt {}: suspending ({})",
                        key.0,
                        key.1,
                        key.2,
                        basalt_core::job::susp_reason_text(reasons, subreasons).trim()
                    );
                    (key, format!("STOP {} {reasons} {subreasons}", jstat::SSUSP))
                }
                Action::Resume { key } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.state = jstat::RUN;
                        j.reasons = 0;
                        j.subreasons = 0;
                    }
                    info!("job {} idx {} attempt {}: resuming", key.0, key.1, key.2);
                    (key, "RESUME".to_owned())
                }
                Action::Terminate { key, term_reason } => {
                    let ti = self.shared.terminate_interval.load(Ordering::SeqCst);
                    info!(
                        "job {} idx {} attempt {}: terminating ({term_reason})",
                        key.0, key.1, key.2
                    );
                    (key, format!("KILL {ti} {term_reason}"))
                }
                Action::Reason {
                    key,
                    reasons,
                    subreasons,
                } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.reasons = reasons;
                        j.subreasons = subreasons;
                    }
                    (
                        key,
                        format!("REASON {} {reasons} {subreasons}", jstat::SSUSP),
                    )
                }
            };
            self.send_ctl(key, cmd, None);
        }
    }

    fn peek(&self, req: &PeekRequest) -> Result<PeekTarget, Status> {
        let key = self
            .find(req.job_id, req.idx, 0)
            .ok_or_else(|| Status::not_found("No matching job found"))?;
        let job = self
            .jobs
            .get(&key)
            .ok_or_else(|| Status::not_found("No matching job found"))?;
        let allowed = req.uid == 0 || req.uid == job.spec.uid || Some(req.uid) == job.exec_uid;
        if !allowed {
            return Err(Status::permission_denied("User permission denied"));
        }
        Ok(PeekTarget {
            path: job.out_path.clone(),
        })
    }
}

fn job_ref(job_id: u64, idx: u32) -> JobRef {
    JobRef {
        job_id,
        idx,
        has_idx: idx != 0,
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The report for one event (the epoch is filled in when it is sent).
pub fn to_report(host: &str, key: Key, ev: &Event) -> JobReport {
    let kind = match ev.kind {
        EventKind::Started => ReportKind::Started,
        EventKind::Executing => ReportKind::Executing,
        EventKind::Rusage => ReportKind::Rusage,
        EventKind::State => ReportKind::State,
        EventKind::Finished => ReportKind::Finished,
        EventKind::StartFailed => ReportKind::StartFailed,
    };
    JobReport {
        protocol: Some(basalt_proto::PROTOCOL),
        host: host.to_owned(),
        epoch: 0,
        id: Some(job_ref(key.0, key.1)),
        attempt: key.2,
        seq: ev.seq,
        kind: kind as i32,
        pid: ev.pid,
        pgid: ev.pgid,
        state: ev.state,
        reasons: ev.reasons,
        subreasons: ev.subreasons,
        exit_status: ev.exit_status,
        utime: ev.utime,
        stime: ev.stime,
        mem_kb: ev.mem_kb,
        swap_kb: ev.swap_kb,
        max_mem_kb: ev.max_mem_kb,
        avg_mem_kb: ev.avg_mem_kb,
        pids: ev.pids.clone(),
        exec_uid: ev.exec_uid,
        exec_user: ev.exec_user.clone(),
        exec_home: ev.exec_home.clone(),
        exec_cwd: ev.exec_cwd.clone(),
        message: ev.message.clone(),
        time: ev.time,
        term_reason: ev.term_reason.clone(),
    }
}

/// Record the job and create its directory, start the job's supervisor, then
/// follow its events.
async fn launch(
    shared: Arc<Shared>,
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    key: Key,
    spec: Arc<JobSpec>,
    dir: PathBuf,
) {
    let mut launch = shared.launch.clone();
    launch.terminate_interval = shared.terminate_interval.load(Ordering::SeqCst);
    let prep_dir = dir.clone();
    let prepared = db
        .call(move |db| {
            prepare_dir(&prep_dir).map_err(|e| {
                format!(
                    "cannot prepare the job's directory {}: {e}",
                    prep_dir.display()
                )
            })?;
            db.insert_job(key, &spec, &launch, now_secs())
                .map_err(|e| format!("cannot record the job: {e}"))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r);
    let child = match prepared {
        Err(e) => Err(e),
        Ok(()) => tokio::process::Command::new(&shared.supervisor_exe)
            .arg(crate::supervisor::FLAG)
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .env_clear()
            .env("PATH", crate::env::DEFAULT_PATH)
            .envs(std::env::vars_os().filter(|(k, _)| k == "BASALT_LOG" || k == "TZ"))
            .kill_on_drop(false)
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the job supervisor {}: {e}",
                    shared.supervisor_exe.display()
                )
            }),
    };
    match child {
        Ok(child) => watch_events(db, tx, key, Some(child), Adopted::No, 0).await,
        Err(message) => {
            warn!("job {}: {message}", key.0);
            let ev = Event {
                kind: EventKind::StartFailed,
                time: now_secs(),
                message,
                ..Default::default()
            };
            // When the job could not even be recorded, the event exists only in
            // memory: it is still reported (mbatchd logs it), just not durably.
            let recorded = db
                .call({
                    let mut ev = ev.clone();
                    move |db| db.append_event(key, &mut ev).map(|_| ev)
                })
                .await;
            let ev = match recorded {
                Ok(Ok(ev)) => ev,
                _ => Event { seq: 1, ..ev },
            };
            let _ = tx
                .send(Msg::Events {
                    key,
                    events: vec![ev],
                })
                .await;
            let _ = tx
                .send(Msg::WatcherDone {
                    key,
                    final_seen: true,
                })
                .await;
        }
    }
}

/// The job's directory, for its control socket (a leftover is replaced).
fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Record the end of a job whose supervisor is gone without one (numbered past
/// any lost number when the job is of an earlier boot), then hand the owner
/// whatever the job's history now ends with (the supervisor's own final event,
/// when it got there first).
async fn record_end(
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    key: Key,
    ev: Event,
    last_seq: u64,
    reboot: bool,
) {
    let result = db
        .call(move |db| {
            let mut ev = ev;
            let recorded = if reboot {
                db.append_after_reboot(key, &mut ev)
            } else {
                db.append_event(key, &mut ev)
            };
            match recorded {
                Ok(_) => Ok(vec![ev]),
                Err(DbError::Finished { .. }) => db.events_after(key, last_seq),
                Err(e) => Err(e),
            }
        })
        .await
        .and_then(|r| r);
    match result {
        Ok(events) => {
            let _ = tx.send(Msg::Events { key, events }).await;
        }
        Err(e) => {
            warn!(
                "job {} idx {} attempt {}: cannot record its end: {e}; trying again when sbatchd restarts",
                key.0, key.1, key.2
            );
            let _ = tx.send(Msg::EndNotRecorded { key }).await;
        }
    }
}

/// What a watcher knows about a supervisor it did not start.
#[derive(Debug, Clone)]
enum Adopted {
    /// sbatchd started it (its stdout is the wake-up pipe).
    No,
    /// Found in the job table: its recorded identity, if it had recorded one.
    Known(Option<SupervisorId>),
}

/// Follow a job's events in the database until its final event (or its
/// supervisor's end). With a child, its stdout newlines say when to read; an
/// adopted supervisor (no pipe) is polled, and its liveness checked by pid, start
/// time and boot. One not recorded yet gets [`UNRECORDED_GRACE`] to show up.
async fn watch_events(
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    key: Key,
    mut child: Option<tokio::process::Child>,
    adopted: Adopted,
    mut last: u64,
) {
    let mut lines = child
        .as_mut()
        .and_then(|c| c.stdout.take())
        .map(|o| BufReader::new(o).lines());
    let mut sup = match &adopted {
        Adopted::No => None,
        Adopted::Known(s) => s.clone(),
    };
    let since = Instant::now();
    let mut final_seen = false;
    loop {
        let mut ended = false;
        match lines.as_mut() {
            Some(l) => {
                tokio::select! {
                    r = l.next_line() => {
                        if !matches!(r, Ok(Some(_))) {
                            ended = true;
                        }
                    }
                    _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                }
            }
            None => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if sup.is_none() {
                    sup = db
                        .call(move |db| db.supervisor(key))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .flatten();
                }
                ended = match &sup {
                    Some(s) => !s.alive(),
                    None => since.elapsed() >= UNRECORDED_GRACE,
                };
            }
        }
        let read = db.call(move |db| db.events_after(key, last)).await;
        match read {
            Ok(Ok(events)) => {
                if let Some(e) = events.last() {
                    last = e.seq;
                }
                if !events.is_empty() {
                    final_seen = events.iter().any(|e| e.kind.is_final());
                    if tx.send(Msg::Events { key, events }).await.is_err() {
                        return;
                    }
                }
            }
            Ok(Err(e)) => warn!("job {}: reading its events: {e}", key.0),
            Err(_) => return,
        }
        if final_seen || ended {
            break;
        }
    }
    if let Some(mut c) = child {
        // The supervisor exits right after its final event.
        if tokio::time::timeout(Duration::from_secs(30), c.wait())
            .await
            .is_err()
        {
            warn!(
                "job {}: supervisor still running 30 s after its final event",
                key.0
            );
        }
    }
    let _ = tx.send(Msg::WatcherDone { key, final_seen }).await;
}

/// One command to a supervisor's control socket; returns its reply line.
pub async fn ctl_call(dir: &Path, cmd: &str) -> Result<String, String> {
    let path = dir.join(state::CTL_SOCKET);
    let call = async {
        let mut s = tokio::net::UnixStream::connect(&path)
            .await
            .map_err(|e| format!("connect {}: {e}", path.display()))?;
        s.write_all(format!("{cmd}\n").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        BufReader::new(s)
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(line)
    };
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .map_err(|_| "timed out".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_become_reports() {
        let ev = Event {
            seq: 7,
            kind: EventKind::Finished,
            time: 1_700_000_000,
            pid: 42,
            pgid: 42,
            state: jstat::EXIT,
            exit_status: 768,
            utime: 1.5,
            max_mem_kb: 2048,
            term_reason: "TERM_OWNER".into(),
            ..Default::default()
        };
        let r = to_report("hostA", (12, 3, 2), &ev);
        assert_eq!(r.kind, ReportKind::Finished as i32);
        assert_eq!(r.seq, 7);
        assert_eq!(r.attempt, 2);
        assert_eq!(r.host, "hostA");
        assert_eq!(
            r.id,
            Some(JobRef {
                job_id: 12,
                idx: 3,
                has_idx: true
            })
        );
        assert_eq!(r.exit_status, 768);
        assert_eq!(r.term_reason, "TERM_OWNER");
        assert_eq!(r.protocol, Some(basalt_proto::PROTOCOL));
        let plain = to_report(
            "hostA",
            (12, 0, 1),
            &Event {
                kind: EventKind::StartFailed,
                message: "no user".into(),
                ..Default::default()
            },
        );
        assert_eq!(plain.kind, ReportKind::StartFailed as i32);
        assert_eq!(plain.message, "no user");
        assert!(plain.id.is_some_and(|i| !i.has_idx));
    }
}
