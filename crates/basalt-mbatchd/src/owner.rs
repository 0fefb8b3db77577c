//! The owner thread: the one task that holds the core (`basalt-sched`) and the journal
//! (DESIGN.md rule 4), and the handle ([`Owner`]) the gRPC side reaches it with.
//!
//! Each iteration takes every waiting message, applies them ([`crate::handlers`]), runs
//! a scheduling pass when something changed, appends the resulting events to lsb.events
//! with one fsync, and only then carries out dispatches and signals
//! ([`crate::dispatch`]); then it appends the accounting records (lsb.acct, one more
//! fsync) and only then answers the requests. While the log cannot be written it
//! answers queries only, and rolls back to the durable state.

use crate::inbox::{Inbox, InboxRx, Refused};
use crate::msg::{Msg, Reply};
use crate::tasks::Spawned;
use crate::{MbdError, journal, local_week_minute, now_ms};
use basalt_config::Config;
use basalt_sched::{Effect, Event, Sched, SchedConfig};
use journal::Journal;
use std::sync::Arc;
use std::sync::mpsc as stdmpsc;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
use tracing::{debug, error, info, warn};

/// Whether mbatchd can write its event log. While it cannot, the owner answers queries
/// and refuses everything that would need a new event.
#[derive(Debug, Default)]
pub(crate) struct Health {
    degraded: std::sync::Mutex<Option<String>>,
}

impl Health {
    fn set(&self, reason: Option<String>) {
        *self
            .degraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = reason;
    }

    /// Why new work is refused, if it is.
    pub(crate) fn reason(&self) -> Option<String> {
        self.degraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// A handle gRPC handlers use to reach the owner.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    pub(crate) tx: Inbox,
    pub(crate) health: Arc<Health>,
    /// Report streams and listings in pages ([`crate::tasks`]: aborted at exit).
    pub(crate) streams: Spawned,
}

impl Owner {
    /// Send a request to the owner and wait for its answer. A client's request that
    /// finds the inbox full is answered "busy" at once ([`crate::inbox::busy`]). A
    /// request the owner drops unanswered was refused because the event log cannot be
    /// written (`RESOURCE_EXHAUSTED` with the reason), or mbatchd is stopping
    /// (`UNAVAILABLE`).
    pub(crate) async fn ask<T>(
        &self,
        make: impl FnOnce(Reply<T>) -> Msg,
    ) -> Result<T, tonic::Status> {
        let rx = self.send(make)?;
        self.answer(rx).await
    }

    /// Send a message without waiting for its answer (see [`Owner::answer`]); a
    /// client's request is refused "busy" when the inbox is full.
    pub(crate) fn send<T>(
        &self,
        make: impl FnOnce(Reply<T>) -> Msg,
    ) -> Result<oneshot::Receiver<T>, tonic::Status> {
        let (tx, rx) = oneshot::channel();
        match self.tx.request(make(tx)) {
            Ok(()) => Ok(rx),
            Err(Refused::Full) => Err(crate::inbox::busy()),
            Err(Refused::Gone) => Err(tonic::Status::unavailable("mbatchd is shutting down")),
        }
    }

    /// The answer to a message sent with [`Owner::send`] (the receiver, or a mutable
    /// reference to it: awaiting that is cancellation-safe).
    pub(crate) async fn answer<T>(
        &self,
        rx: impl std::future::Future<Output = Result<T, oneshot::error::RecvError>>,
    ) -> Result<T, tonic::Status> {
        rx.await.map_err(|_| match self.health.reason() {
            Some(r) => {
                // The log is probed every second: bsub tries again that soon, so that
                // it is answered within a second or two of the disk taking writes.
                let mut s = tonic::Status::resource_exhausted(r);
                s.metadata_mut().insert(
                    basalt_proto::RETRY_SECS_METADATA,
                    tonic::metadata::MetadataValue::from_static("1"),
                );
                s
            }
            None => tonic::Status::unavailable("mbatchd is shutting down"),
        })
    }
}

/// The owner thread's state.
pub(crate) struct OwnerState {
    pub(crate) config: Arc<Config>,
    /// This mbatchd's credentials towards sbatchds.
    pub(crate) auth: basalt_runtime::Authenticator,
    pub(crate) me: String,
    pub(crate) sched: Sched,
    pub(crate) journal: Journal,
    pub(crate) tx: Inbox,
    pub(crate) rt: tokio::runtime::Handle,
    /// Dispatches and signals under way ([`crate::tasks`]: waited for at exit).
    pub(crate) orders: Spawned,
    pub(crate) started: SystemTime,
    /// `badmin showstatus`: the most hosts, CPUs and slots available since this start.
    pub(crate) peaks: basalt_sched::Peaks,
    /// Shared with the gRPC side: set while the event log cannot be written.
    pub(crate) health: Arc<Health>,
    /// Results from sbatchds (dispatch answers) that arrived or were rolled back while the
    /// log could not be written; fed back once it can.
    pub(crate) backlog: Vec<Msg>,
    /// Copies of this iteration's dispatch answers, in case its commit fails.
    pub(crate) this_iteration: Vec<Msg>,
    /// Job files spooled in this iteration (removed again if its commit fails).
    pub(crate) spooled: Vec<String>,
    /// A write that failed during this iteration (a job file): the commit must not happen.
    pub(crate) write_failure: Option<journal::JournalError>,
    pub(crate) last_probe: std::time::Instant,
    /// This term's epoch (its MBD_START may have been rolled back with a failed write).
    pub(crate) term_epoch: u64,
    /// After a failed log switch: not before this.
    pub(crate) switch_retry: Option<std::time::Instant>,
    /// The members egroup gave the `(!)` user groups at start.
    pub(crate) egroups: std::collections::BTreeMap<String, Vec<String>>,
    /// The hosts egroup gave the `(!)` host groups.
    pub(crate) host_egroups: std::collections::BTreeMap<String, Vec<String>>,
    /// See [`RunOptions::config_problem`] ("" = none).
    pub(crate) config_problem: String,
    /// The sbatchd clients dispatches reuse while their connection is proven alive.
    pub(crate) peers: crate::dispatch::Peers,
    /// MultiCluster: the links to the remote clusters (senders and their states).
    pub(crate) mc_links: crate::mc::Links,
    /// The histograms and counters of `GET /metrics`.
    pub(crate) metrics: crate::metrics::MbdMetrics,
}

pub(crate) type Deferred = Box<dyn FnOnce() + Send>;

/// How long events written without a sync may wait for the next commit's sync before
/// the owner syncs them itself.
const UNSYNCED_WAIT: Duration = Duration::from_millis(20);

pub(crate) fn defer<T: Send + 'static>(reply: Reply<T>, value: T) -> Deferred {
    Box::new(move || {
        let _ = reply.send(value);
    })
}

impl OwnerState {
    pub(crate) fn run(&mut self, rx: InboxRx) -> MbdError {
        // A first pass, so the replayed pending jobs show their reasons (a dependency
        // that can never be met, an array's limit) from the first query on. Make it and
        // MBD_START durable before serving anybody.
        self.sched.set_week_minute(local_week_minute(now_ms()));
        self.sched.schedule(now_ms());
        let effects = self.sched.take_effects();
        match self.journal.commit(&effects) {
            Ok(()) => self.carry_out(effects),
            Err(e) => {
                if let Some(fatal) = self.write_failed(e) {
                    return fatal;
                }
            }
        }
        let tick = Duration::from_millis(500);
        // Ticks are timed on the monotonic clock (a wall clock stepped back must not
        // stop them), and a stepped wall clock is told to the core before its next tick
        // so that the step is not taken for a silence of every sbatchd.
        let mono = std::time::Instant::now();
        let mono_ms = || i64::try_from(mono.elapsed().as_millis()).unwrap_or(i64::MAX);
        let mut last_tick = std::time::Instant::now();
        let mut jumps = basalt_core::clock::JumpWatch::new();
        jumps.observe(now_ms(), mono_ms());
        loop {
            // Events written without a sync are synced when nothing else comes soon.
            let wait = if self.journal.unsynced() {
                UNSYNCED_WAIT
            } else {
                tick
            };
            let first = match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(stdmpsc::RecvTimeoutError::Timeout) => None,
                Err(stdmpsc::RecvTimeoutError::Disconnected) => return MbdError::OwnerGone,
            };
            let idle = first.is_none();
            let mut deferred: Vec<Deferred> = Vec::new();
            let mut exit: Option<MbdError> = None;
            let batch = first
                .into_iter()
                .chain(rx.try_iter().take(crate::inbox::TAKE_PER_ITERATION));
            for msg in batch {
                let msg = if self.health.reason().is_some() {
                    match self.while_degraded(msg) {
                        Some(m) => m,
                        None => continue,
                    }
                } else {
                    msg
                };
                if let Msg::DispatchDone {
                    key,
                    attempt,
                    host,
                    result,
                } = &msg
                {
                    self.this_iteration.push(Msg::DispatchDone {
                        key: *key,
                        attempt: *attempt,
                        host: host.clone(),
                        result: result.clone(),
                    });
                }
                match self.handle(msg, &mut deferred) {
                    Ok(()) => {}
                    Err(e) => {
                        exit = Some(e);
                        break;
                    }
                }
            }
            if let Err(e) = self.journal.heartbeat() {
                error!("{e}");
                return e.into();
            }
            if self.health.reason().is_none()
                && self.journal.needs_resync()
                && self.last_probe.elapsed() >= Duration::from_secs(1)
            {
                self.last_probe = std::time::Instant::now();
                if let Err(e) = self.journal.resync() {
                    debug!("a copy of the event log is still out of date: {e}");
                }
            }
            if self.health.reason().is_some() {
                // Only queries were answered; nothing to commit. Is there room again?
                for d in deferred {
                    d();
                }
                if let Some(e) = exit {
                    return e;
                }
                if self.last_probe.elapsed() >= Duration::from_secs(1) {
                    self.last_probe = std::time::Instant::now();
                    match self.journal.probe() {
                        Ok(()) => self.writable_again(),
                        Err(e) => debug!("event log still not writable: {e}"),
                    }
                }
                continue;
            }
            let now = now_ms();
            if last_tick.elapsed() >= tick {
                last_tick = std::time::Instant::now();
                if let Some(by) = jumps.observe(now, mono_ms()) {
                    warn!(
                        "the wall clock was stepped by {:+.1} s: sbatchd silences are \
                         measured again from now",
                        by as f64 / 1000.0
                    );
                    self.sched.wall_clock_jumped(now);
                }
                self.sched.set_week_minute(local_week_minute(now));
                self.sched.tick(now);
            }
            if self.sched.needs_pass() {
                let pass = std::time::Instant::now();
                self.sched.schedule(now);
                self.metrics
                    .sched_pass
                    .observe(pass.elapsed().as_secs_f64());
            }
            let effects = self.sched.take_effects();
            // Log before acknowledge: an iteration with a reply to give, an order to send
            // or a job file to remove is synced. One whose events nothing waits on (a
            // dispatch's answer: JOB_START_ACCEPT) is written now and synced by the next
            // one, or within UNSYNCED_WAIT anyway (however busy the loop is with
            // iterations that need no sync).
            let durable = idle
                || self
                    .journal
                    .unsynced_for()
                    .is_some_and(|d| d >= UNSYNCED_WAIT)
                || exit.is_some()
                || !deferred.is_empty()
                || effects.iter().any(|e| !matches!(e, Effect::Log(_)));
            let appended = effects
                .iter()
                .filter(|e| matches!(e, Effect::Log(_)))
                .count() as u64;
            let commit_started = std::time::Instant::now();
            let committed = match self.write_failure.take() {
                Some(e) => Err(e),
                None => self.journal.commit_as(&effects, durable),
            };
            match committed {
                Ok(()) => {
                    if appended > 0 {
                        self.metrics
                            .commit_latency
                            .observe(commit_started.elapsed().as_secs_f64());
                        self.metrics.events_appended.inc_by(appended);
                    }
                    // lsb.events has the iteration: its job files and dispatch answers
                    // are on record.
                    self.this_iteration.clear();
                    self.spooled.clear();
                    // Orders to hosts depend on lsb.events only: they go out before
                    // the accounting records are synced (a slot freed by a job's end
                    // is refilled one fsync sooner); replies wait for lsb.acct too.
                    let (orders, rest): (Vec<Effect>, Vec<Effect>) =
                        effects.into_iter().partition(|e| {
                            matches!(e, Effect::Dispatch { .. } | Effect::Signal { .. })
                        });
                    self.carry_out(orders);
                    match self.journal.commit_acct(&rest) {
                        Ok(()) => {
                            for d in deferred {
                                d();
                            }
                            self.carry_out(rest);
                            self.maybe_switch();
                        }
                        Err(e) => {
                            // lsb.events has the iteration (the orders sent stand; the
                            // state is read back from it), but its replies are dropped:
                            // what they acknowledge is not all on record.
                            drop(rest);
                            if let Some(fatal) = self.write_failed(e) {
                                return fatal;
                            }
                            drop(deferred);
                        }
                    }
                }
                Err(e) => {
                    // Nothing of this iteration is acknowledged: its replies are dropped
                    // (the callers hear why) and its effects are forgotten.
                    drop(effects);
                    if let Some(fatal) = self.write_failed(e) {
                        return fatal;
                    }
                    drop(deferred);
                }
            }
            if let Some(e) = exit {
                if self.health.reason().is_none()
                    && let MbdError::Resign(_) | MbdError::Reconfig(_) | MbdError::Stopped = e
                {
                    let die = Event::MbdDie {
                        time: basalt_sched::secs(now_ms()),
                        master: self.me.clone(),
                        exit_code: e.exit_code(),
                    };
                    let _ = self.journal.commit(&[Effect::Log(die)]);
                }
                return e;
            }
        }
    }

    /// A message that arrived while the log cannot be written: queries, LIM updates and
    /// stop requests are handled, and so is a resent submission whose job is logged;
    /// dispatch answers wait in the backlog; everything that would need a new event is
    /// refused (its reply dropped, so the caller hears why).
    fn while_degraded(&mut self, msg: Msg) -> Option<Msg> {
        match msg {
            Msg::Jobs { .. }
            | Msg::JobKeys { .. }
            | Msg::JobsPage { .. }
            | Msg::Queues { .. }
            | Msg::Hosts { .. }
            | Msg::Params { .. }
            | Msg::Limits { .. }
            | Msg::Users { .. }
            | Msg::Apps { .. }
            | Msg::Slots { .. }
            | Msg::HostPartitions { .. }
            | Msg::Clusters { .. }
            | Msg::Metrics { .. }
            | Msg::McIn {
                req: crate::mc::Incoming::Info { .. } | crate::mc::Incoming::Jobs { .. },
                ..
            }
            | Msg::Lim(_)
            | Msg::Resign(_)
            | Msg::Shutdown => Some(msg),
            Msg::DispatchDone { .. } => {
                self.backlog.push(msg);
                None
            }
            // A resent submission whose job is in the log (the core was rolled back to
            // it) is answered with that job: it needs no new event.
            Msg::Submit {
                ref caller,
                ref sub,
                ..
            } if self
                .sched
                .known_submission(&caller.user, &sub.submit_token)
                .is_some() =>
            {
                Some(msg)
            }
            Msg::Submit { .. }
            | Msg::Signal { .. }
            | Msg::Switch { .. }
            | Msg::Modify { .. }
            | Msg::Move { .. }
            | Msg::Force { .. }
            | Msg::QueueCtl { .. }
            | Msg::HostCtl { .. }
            | Msg::Reconfig { .. }
            | Msg::Hello { .. }
            | Msg::McIn { .. }
            | Msg::McLink { .. }
            | Msg::Report { .. } => None,
        }
    }

    /// An append (or a job file) could not be written. Stop acknowledging new work, and
    /// roll the in-memory state back to what the log holds (the appender has cut its file
    /// back, so the durable content is exactly the acknowledged state). Returns the error
    /// to stop with when mbatchd cannot go on at all (the lock is lost, or the log cannot
    /// even be re-read).
    fn write_failed(&mut self, e: journal::JournalError) -> Option<MbdError> {
        if let journal::JournalError::LockLost { .. } = e {
            error!("{e}");
            return Some(e.into());
        }
        let reason = format!(
            "Cannot write the event log ({e}). mbatchd accepts no new work until it can \
             write again; queries still work"
        );
        error!("{reason}");
        self.health.set(Some(reason));
        for name in self.spooled.drain(..) {
            self.journal.remove_spooled(&name);
        }
        let now = now_ms();
        let replayed = match self.journal.reload() {
            Ok(r) => r,
            Err(e2) => {
                error!("cannot re-read the event log after a failed write: {e2}");
                return Some(e2.into());
            }
        };
        let mut sched = Sched::new(
            SchedConfig::from_config_dynamic(&self.config, &self.egroups, &self.host_egroups),
            now,
        );
        // (Records a failed lsb.acct write left out are rebuilt, or wait for the next
        // commit.)
        if let Err(e) = self.journal.restore(&mut sched, &replayed) {
            warn!("accounting records wait to be written: {e}");
        }
        sched.set_started_at(self.sched.started_at());
        sched.all_sbd_seen(now);
        info!(
            events = replayed.events.len(),
            jobs = sched.jobs().len(),
            "rolled back to the durable state of the event log"
        );
        self.sched = sched;
        self.backlog.append(&mut self.this_iteration);
        self.last_probe = std::time::Instant::now();
        None
    }

    /// Switch lsb.events once `MAX_JOB_NUM` finished jobs have been cleaned since the last
    /// switch (LSF's rule), so that a restart replays the live jobs, not the history.
    /// Called right after a commit, when no event is waiting. A failed switch changes
    /// nothing and is tried again a minute later.
    fn maybe_switch(&mut self) {
        if !self.sched.switch_due()
            || self
                .switch_retry
                .is_some_and(|t| t > std::time::Instant::now())
        {
            return;
        }
        let now = now_ms();
        let started = std::time::Instant::now();
        let co = self.sched.carry_over(now);
        match self
            .journal
            .switch(basalt_sched::secs(now), &co.carried, &co.appended)
        {
            Ok(r) => {
                self.sched.replay(&co.appended);
                self.switch_retry = None;
                info!(
                    carried = co.carried.len(),
                    archived_bytes = r.archived_bytes,
                    "switched lsb.events in {:?} ({} jobs in memory)",
                    started.elapsed(),
                    self.sched.jobs().len()
                );
            }
            Err(journal::JournalError::LockLost { .. }) => {
                // The next commit or heartbeat stops mbatchd.
                self.switch_retry = Some(std::time::Instant::now() + Duration::from_secs(60));
            }
            Err(e) => {
                warn!("cannot switch lsb.events: {e}; trying again in a minute");
                self.switch_retry = Some(std::time::Instant::now() + Duration::from_secs(60));
            }
        }
    }

    /// The probe succeeded: accept work again, and feed back what waited.
    fn writable_again(&mut self) {
        info!("the event log can be written again; accepting new work");
        self.health.set(None);
        let now = now_ms();
        self.sched.all_sbd_seen(now);
        if self.sched.epoch() < self.term_epoch {
            // This term's MBD_START never reached the disk: log it now.
            self.sched.start(now, &self.me);
            self.term_epoch = self.sched.epoch();
        }
        for m in self.backlog.drain(..) {
            let _ = self.tx.send(m);
        }
    }
}
