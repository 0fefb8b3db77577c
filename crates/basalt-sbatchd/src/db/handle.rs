//! sbatchd's handle on the job database: one thread owns the connection and runs
//! the calls in order.

use super::{DbError, JobDb};

/// sbatchd's access to the database: one thread owns the connection and runs the
/// calls in the order they were made, so the owner task never blocks on SQLite and
/// fire-and-forget writes (acknowledgements, removals) stay ordered.
#[derive(Debug, Clone)]
pub struct DbHandle {
    tx: std::sync::mpsc::Sender<Call>,
}

type Call = Box<dyn FnOnce(&mut JobDb) + Send>;

impl DbHandle {
    /// Start the database thread on an open connection.
    pub fn spawn(mut db: JobDb) -> Result<DbHandle, DbError> {
        let (tx, rx) = std::sync::mpsc::channel::<Call>();
        std::thread::Builder::new()
            .name("sbatchd-db".into())
            .spawn(move || {
                while let Ok(call) = rx.recv() {
                    call(&mut db);
                }
                db.checkpoint();
            })
            .map_err(|e| DbError::Thread(e.to_string()))?;
        Ok(DbHandle { tx })
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
