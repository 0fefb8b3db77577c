//! Work the owner spawns so it never waits on I/O itself: launching a job's
//! supervisor, following its events in the job database, and recording the end of
//! a job whose supervisor is gone.

use super::{Key, Msg, UNRECORDED_GRACE};
use crate::Shared;
use crate::db::{Asked, DbError, DbHandle};
use crate::runner::{HandOver, Wake};
use crate::state::{Event, EventKind, SupervisorId};
use basalt_proto::sbatchd::JobSpec;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tracing::warn;

/// What [`record_and_hand_over`] gives back: the hand-over to the supervisor, once the
/// job is recorded.
pub(super) type Recorded = Result<Asked<Result<HandOver, String>>, DbError>;

/// Ask the database's thread to record the job and hand it to the supervisor's thread
/// as soon as it is on record (one hand-over between threads less than coming back
/// here first). Asked at once, by the owner, so that nothing it does next delays the
/// job; [`launch`] waits for the outcome.
pub(super) fn record_and_hand_over(
    shared: &Shared,
    db: &DbHandle,
    key: Key,
    spec: Arc<JobSpec>,
) -> Recorded {
    let mut launch = shared.launch();
    launch.terminate_interval = shared.terminate_interval.load(Ordering::SeqCst);
    let clock = shared.clock.clone();
    // The supervisor the job goes to, recorded with it (it then need not record itself).
    let supervisor = shared.runner.current();
    let runner = shared.runner.clone();
    let handle = db.clone();
    db.ask(move |db| {
        let created = clock.now_secs();
        db.insert_job(key, &spec, &launch, created, supervisor.as_ref())
            .map_err(|e| format!("cannot record the job: {e}"))?;
        runner.hand_over(key, created, supervisor.as_ref(), &launch, spec, &handle)
    })
}

/// Wait for the job's record and hand-over ([`record_and_hand_over`]), then follow its
/// events.
pub(super) async fn launch(
    shared: Arc<Shared>,
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    key: Key,
    recorded: Recorded,
) {
    let prepared = match recorded {
        Ok(asked) => asked.answer().await,
        Err(e) => Err(e),
    }
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    let wake = match prepared {
        Err(e) => Err(e),
        Ok(asked) => match asked.answer().await {
            Ok(Wake::Pipe(fd)) => tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
                .map(|p| Wakes::Pipe(BufReader::new(p).lines()))
                .map_err(|e| format!("the supervisor's wake-up pipe: {e}")),
            Ok(Wake::Events(rx)) => Ok(Wakes::Events(rx)),
            Err(e) => Err(format!("cannot start the job supervisor: {e}")),
        },
    };
    match wake {
        Ok(wake) => watch_events(db, tx, key, Some(wake), Adopted::No, 0).await,
        Err(message) => {
            warn!("job {}: {message}", key.0);
            let ev = Event {
                kind: EventKind::StartFailed,
                time: shared.clock.now_secs(),
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

/// Record the end of a job whose supervisor is gone without one (numbered past
/// any lost number when the job is of an earlier boot), then hand the owner
/// whatever the job's history now ends with (the supervisor's own final event,
/// when it got there first).
pub(super) async fn record_end(
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
pub(super) enum Adopted {
    /// sbatchd started it (its stdout is the wake-up pipe).
    No,
    /// Found in the job table: its recorded identity, if it had recorded one.
    Known(Option<SupervisorId>),
}

/// Where a watcher hears from what runs its job ([`crate::runner::Wake`]).
pub(super) enum Wakes {
    /// The lines of a supervisor's wake-up pipe.
    Pipe(tokio::io::Lines<BufReader<tokio::net::unix::pipe::Receiver>>),
    /// Batches of recorded events (a hollow job's).
    Events(mpsc::UnboundedReceiver<Vec<Event>>),
}

impl Wakes {
    /// The next wake-up: `Some(Some(events))` brought the events that follow `last`,
    /// `Some(None)` says to read the job table, `None` is the end (of file).
    async fn next(&mut self, last: u64) -> Option<Option<Vec<Event>>> {
        match self {
            Wakes::Pipe(lines) => match lines.next_line().await {
                Ok(Some(line)) => Some(crate::state::parse_wake_line(&line, last)),
                _ => None,
            },
            Wakes::Events(rx) => rx
                .recv()
                .await
                .map(|events| crate::state::following(events, last)),
        }
    }
}

/// Follow a job's events in the database until its final event (or its
/// supervisor's end). With the wake-up pipe of a supervisor sbatchd started (or a
/// hollow job's channel), its
/// lines bring the events (or, a plain newline or a gap in their numbers, say when
/// to read the table; so does a quiet 2 s) and its end of file that the supervisor
/// is gone; an
/// adopted supervisor (no pipe) is polled, and its liveness checked by pid, start
/// time and boot. One not recorded yet gets [`UNRECORDED_GRACE`] to show up.
pub(super) async fn watch_events(
    db: DbHandle,
    tx: mpsc::Sender<Msg>,
    key: Key,
    wake: Option<Wakes>,
    adopted: Adopted,
    mut last: u64,
) {
    let mut lines = wake;
    let mut sup = match &adopted {
        Adopted::No => None,
        Adopted::Known(s) => s.clone(),
    };
    let since = Instant::now();
    let mut final_seen = false;
    let mut ended = false;
    loop {
        // Events a wake-up line brought (then the job table is not read).
        let mut brought = None;
        match lines.as_mut() {
            Some(l) => {
                tokio::select! {
                    r = l.next(last) => match r {
                        Some(events) => brought = events,
                        None => ended = true,
                    },
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
        let read = match brought {
            Some(events) => Ok(Ok(events)),
            None => db.call(move |db| db.events_after(key, last)).await,
        };
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
    if let Some(l) = lines.as_mut()
        && !ended
    {
        // The supervisor exits right after its final event: its end of the pipe closes.
        let gone = async { while l.next(last).await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(30), gone)
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
