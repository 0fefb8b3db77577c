//! sbatchd's handle on the job database: one owner of the connection runs the calls in
//! order — a thread of its own ([`DbHandle::spawn`]), or, on a hollow host
//! ([`crate::hollow`]), tokio's blocking pool one batch of calls at a time
//! ([`DbHandle::spawn_pooled`]), so that ten thousand hollow hosts in one process do
//! not keep ten thousand threads.

use super::{DbError, JobDb};
use tokio::sync::mpsc;

/// The most calls [`DbHandle::spawn_pooled`] runs in one turn on the blocking pool.
const POOLED_BATCH: usize = 64;

/// sbatchd's access to the database: one owner of the connection runs the calls in
/// the order they were made, so the owner task never blocks on SQLite and
/// fire-and-forget writes (acknowledgements, removals) stay ordered.
#[derive(Debug, Clone)]
pub struct DbHandle {
    tx: mpsc::UnboundedSender<Call>,
}

type Call = Box<dyn FnOnce(&mut JobDb) + Send>;

impl DbHandle {
    /// Start the database thread on an open connection.
    pub fn spawn(mut db: JobDb) -> Result<DbHandle, DbError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Call>();
        std::thread::Builder::new()
            .name("sbatchd-db".into())
            .spawn(move || {
                while let Some(call) = rx.blocking_recv() {
                    call(&mut db);
                }
                db.checkpoint();
            })
            .map_err(|e| DbError::Thread(e.to_string()))?;
        Ok(DbHandle { tx })
    }

    /// Run the calls on tokio's blocking pool instead of a thread of their own: a task
    /// of `rt` takes the calls waiting (up to 64) and runs them in order
    /// in one `spawn_blocking`, then the next ones; one batch at a time, so the calls
    /// keep their order as on the thread. The connection is checkpointed when the last
    /// handle is gone (as the thread does), and lost with its runtime.
    pub fn spawn_pooled(db: JobDb, rt: &tokio::runtime::Handle) -> DbHandle {
        let (tx, mut rx) = mpsc::unbounded_channel::<Call>();
        rt.spawn(async move {
            let mut db = db;
            while let Some(first) = rx.recv().await {
                let mut calls = Vec::with_capacity(4);
                calls.push(first);
                while calls.len() < POOLED_BATCH {
                    match rx.try_recv() {
                        Ok(c) => calls.push(c),
                        Err(_) => break,
                    }
                }
                let turn = tokio::task::spawn_blocking(move || {
                    for call in calls {
                        call(&mut db);
                    }
                    db
                });
                match turn.await {
                    Ok(back) => db = back,
                    Err(e) => {
                        // A call panicked: the connection went with it. Later calls are
                        // answered `Closed`.
                        tracing::error!("job database: a call failed: {e}");
                        return;
                    }
                }
            }
            let _ = tokio::task::spawn_blocking(move || db.checkpoint()).await;
        });
        DbHandle { tx }
    }

    /// Run `f` on the database thread and wait for its answer.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut JobDb) -> R + Send + 'static,
    ) -> Result<R, DbError> {
        self.ask(f)?.answer().await
    }

    /// Hand `f` to the database thread now (it runs while the caller goes on);
    /// [`Asked::answer`] waits for its answer.
    pub fn ask<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut JobDb) -> R + Send + 'static,
    ) -> Result<Asked<R>, DbError> {
        let (otx, orx) = tokio::sync::oneshot::channel();
        self.tx
            .send(Box::new(move |db: &mut JobDb| {
                let _ = otx.send(f(db));
            }))
            .map_err(|_| DbError::Closed)?;
        Ok(Asked(orx))
    }

    /// Run `f` on the database thread without waiting; a failure is logged.
    pub fn send(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut JobDb) -> Result<(), DbError> + Send + 'static,
    ) {
        let sent = self.tx.send(Box::new(move |db: &mut JobDb| {
            if let Err(e) = f(db) {
                tracing::warn!("{what}: {e}");
            }
        }));
        if sent.is_err() {
            tracing::warn!("{what}: the job database thread is gone");
        }
    }
}

/// A call handed to the database thread ([`DbHandle::ask`]).
#[derive(Debug)]
pub struct Asked<R>(tokio::sync::oneshot::Receiver<R>);

impl<R> Asked<R> {
    /// The call's answer.
    pub async fn answer(self) -> Result<R, DbError> {
        self.0.await.map_err(|_| DbError::Closed)
    }
}
