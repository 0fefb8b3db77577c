//! The owner task: holds the job table in memory (the job database, [`crate::db`],
//! is its durable copy). gRPC handlers, event watchers and reporters send it
//! messages; it answers and spawns the work that does I/O (launching supervisors,
//! database calls on the database thread, control-socket calls, reports), so it
//! never waits on the filesystem, SQLite or the network itself.
//!
//! The pieces: [`jobs`] (a job's life in the table: start, adoption, events, acks,
//! removal, reconciliation with mbatchd), [`control`] (signals, the load policy's
//! decisions, peek, the supervisors' control sockets) and [`tasks`] (the spawned
//! work: launching a supervisor, following its events, recording a lost job's end).

mod control;
mod jobs;
mod tasks;
#[cfg(test)]
mod tests;

pub use control::ctl_call;

use crate::Shared;
use crate::db::{DbHandle, StoredJob};
use crate::mbd::{self, Client};
use crate::state::{Event, EventKind};
use basalt_proto::mbatchd::{AckKind, JobRef, JobReport, ReportKind, SbdJob};
use basalt_proto::sbatchd::{JobSpec, SignalJobRequest, StatusJob, StatusReply};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;
use tracing::Instrument;

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
    /// bpeek of job `job_id[idx]` by `uid`, the identity the credential proved.
    Peek {
        job_id: u64,
        idx: u32,
        uid: u32,
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
    /// The job's control socket (served by its supervisor).
    ctl: PathBuf,
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
    /// Its end was reported before its post-execution commands ran (an `ended`
    /// event, JOB_INCLUDE_POSTPROC=N): it no longer runs; their status comes last.
    post_after_end: bool,
    final_acked: bool,
    watcher_done: bool,
    start_error: Option<String>,
    waiters: Vec<oneshot::Sender<Result<(u32, u32), Status>>>,
    /// The reporter's queue; None once mbatchd said NO_JOB.
    reports: Option<mpsc::UnboundedSender<JobReport>>,
}

impl Job {
    fn running(&self) -> bool {
        !self.final_seen && !self.post_after_end
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
    /// The keys of `recent` in the order they came, so the old ones are dropped from the
    /// front (a walk over all of `recent` at every job's end was O(jobs) per job: 600 s of
    /// a fast drain is a hundred thousand entries).
    recent_order: std::collections::VecDeque<(Instant, Key)>,
    /// Acknowledgements not yet on record, written together every [`ACK_FLUSH`]: one
    /// lost in a crash only makes the restarted sbatchd send its events again, which
    /// mbatchd recognises by their sequence numbers.
    pending_acks: BTreeMap<Key, u64>,
    /// Jobs forgotten (mbatchd acknowledged their end) whose rows and control sockets
    /// are not removed yet: removed together with the acknowledgements, every
    /// [`ACK_FLUSH`] (or once [`REMOVE_BATCH`] wait), in one transaction. A row left
    /// by a crash is a finished job the next sbatchd reports again; mbatchd knows it.
    pending_removals: Vec<(Key, PathBuf)>,
}

/// The most forgotten jobs whose removal waits for the next flush.
const REMOVE_BATCH: usize = 256;

const RECENT_KEEP: Duration = Duration::from_secs(600);

/// How often the acknowledgements mbatchd gave are written to the job table.
const ACK_FLUSH: Duration = Duration::from_secs(1);

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
            recent_order: std::collections::VecDeque::new(),
            pending_acks: BTreeMap::new(),
            pending_removals: Vec::new(),
        }
    }

    pub async fn run(mut self, mut rx: mpsc::Receiver<Msg>, found: Vec<StoredJob>) {
        for f in found {
            self.adopt(f);
        }
        let mut flush = tokio::time::interval(ACK_FLUSH);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    None | Some(Msg::Shutdown) => break,
                    Some(m) => self.handle(m),
                },
                _ = flush.tick() => self.flush_acks(),
            }
        }
        self.flush_acks();
    }

    /// Write the acknowledgements gathered since the last flush, in one transaction,
    /// and remove the jobs forgotten since, in another.
    fn flush_acks(&mut self) {
        self.flush_removals();
        if self.pending_acks.is_empty() {
            return;
        }
        let acks: Vec<(Key, u64)> = std::mem::take(&mut self.pending_acks).into_iter().collect();
        self.db.send("recording acknowledgements", move |db| {
            db.ack_many(&acks)?;
            for (k, seq) in &acks {
                tracing::debug!(
                    "job {} idx {} attempt {}: acknowledgement {seq} recorded",
                    k.0,
                    k.1,
                    k.2
                );
            }
            Ok(())
        });
    }

    /// Remove the rows of the jobs forgotten since the last flush (one transaction) and
    /// what is left of their control sockets.
    fn flush_removals(&mut self) {
        if self.pending_removals.is_empty() {
            return;
        }
        let gone = std::mem::take(&mut self.pending_removals);
        self.db.send("forgetting finished jobs", move |db| {
            let keys: Vec<Key> = gone.iter().map(|(k, _)| *k).collect();
            db.remove_many(&keys)?;
            for (key, ctl) in &gone {
                jobs::remove_ctl(ctl);
                tracing::debug!("job {} idx {} attempt {}: removed", key.0, key.1, key.2);
            }
            Ok(())
        });
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
            Msg::Peek {
                job_id,
                idx,
                uid,
                reply,
            } => {
                let _ = reply.send(self.peek(job_id, idx, uid));
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

    fn new_job(&mut self, key: Key, spec: Arc<JobSpec>, ctl: PathBuf) -> &mut Job {
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
            ctl,
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
            post_after_end: false,
            final_acked: false,
            watcher_done: false,
            start_error: None,
            waiters: Vec::new(),
            reports: Some(rtx),
        })
    }

    pub(super) fn find(&self, job_id: u64, idx: u32, attempt: u32) -> Option<Key> {
        if attempt != 0 {
            let k = (job_id, idx, attempt);
            return self.jobs.contains_key(&k).then_some(k);
        }
        self.jobs
            .range((job_id, idx, 0)..=(job_id, idx, u32::MAX))
            .next_back()
            .map(|(k, _)| *k)
    }
}

fn job_ref(job_id: u64, idx: u32) -> JobRef {
    JobRef {
        job_id,
        idx,
        has_idx: idx != 0,
    }
}

/// The report for one event (the epoch is filled in when it is sent).
pub fn to_report(host: &str, key: Key, ev: &Event) -> JobReport {
    let kind = match ev.kind {
        EventKind::Started => ReportKind::Started,
        EventKind::Executing => ReportKind::Executing,
        EventKind::Rusage => ReportKind::Rusage,
        EventKind::State => ReportKind::State,
        EventKind::Finished | EventKind::Ended => ReportKind::Finished,
        EventKind::StartFailed => ReportKind::StartFailed,
        EventKind::PostExec => ReportKind::PostExec,
        EventKind::Chkpnt => ReportKind::Chkpnt,
    };
    JobReport {
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
        pre_exec_failed: ev.pre_exec_failed,
        has_post_exec: ev.post_exec.is_some(),
        post_exec_status: ev.post_exec.unwrap_or(0),
        chkpnt_ok: ev.chkpnt_ok,
        restart_failed: ev.restart_failed,
    }
}
