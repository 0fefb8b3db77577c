//! The tasks mbatchd spawns per job and per stream, tracked so that its exit deals with
//! each on purpose instead of leaving them to the runtime's drop.
//!
//! Two sets ([`Spawned`]), and what the exit ([`crate::serve`]) does with each:
//! * **orders** — a dispatch (`StartJob` or an order on a start stream) or a signal to
//!   an sbatchd. Each carries out an effect already durable in lsb.events; the exit
//!   *waits* for them up to [`ORDERS_GRACE`] (an order on its way reaches its sbatchd,
//!   so the next mbatchd finds the job where the log says), then aborts what is left (an
//!   order cut off is one the next mbatchd settles with the sbatchd's hello, as after a
//!   crash).
//! * **streams** — an sbatchd's report stream, a job listing sent in pages, a start
//!   stream to an sbatchd. Nothing is owed on them that a successor would not redo: an
//!   sbatchd sends its unacknowledged reports again, a `bjobs` reader sees its stream
//!   end. The exit *aborts* them at once (the server's graceful stop would otherwise wait
//!   for the long-lived ones).
//!
//! Not in a set, and why: the LIM poller, the MultiCluster links and the `/metrics`
//! server are one task each, held by their handles and aborted at exit (`lib.rs`); a
//! start stream to an sbatchd (`dispatch.rs`) ends with the last handle to it — the
//! orders on it (tracked) and the owner's kept clients (freed with the owner's state).
//!
//! A tracked task is dropped at its next poll once its set is aborted; the set counts
//! its live tasks and wakes whoever waits when the last ends.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// How long mbatchd's exit waits for orders under way.
pub(crate) const ORDERS_GRACE: Duration = Duration::from_secs(2);

/// A set of tracked tasks (cheap to clone: clones share the set).
#[derive(Debug, Clone)]
pub(crate) struct Spawned {
    inner: Arc<Inner>,
    stop: watch::Receiver<bool>,
}

#[derive(Debug)]
struct Inner {
    live: AtomicUsize,
    idle: Notify,
    stop: watch::Sender<bool>,
}

/// Counts a task out of its set when it ends (however: finished, aborted, panicked).
struct Live(Arc<Inner>);

impl Drop for Live {
    fn drop(&mut self) {
        if self.0.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Default for Spawned {
    fn default() -> Spawned {
        let (stop, rx) = watch::channel(false);
        Spawned {
            inner: Arc::new(Inner {
                live: AtomicUsize::new(0),
                idle: Notify::new(),
                stop,
            }),
            stop: rx,
        }
    }
}

impl Spawned {
    /// Spawn `fut` on `rt` in this set. Once the set is aborted it is dropped at its
    /// next poll (or not started).
    pub(crate) fn spawn_on<F>(&self, rt: &tokio::runtime::Handle, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.inner.live.fetch_add(1, Ordering::AcqRel);
        let live = Live(self.inner.clone());
        let mut stop = self.stop.clone();
        rt.spawn(async move {
            let _live = live;
            tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => {}
                () = fut => {}
            }
        });
    }

    /// [`Spawned::spawn_on`] the current runtime.
    pub(crate) fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.spawn_on(&tokio::runtime::Handle::current(), fut);
    }

    /// Tasks of this set not ended yet.
    pub(crate) fn live(&self) -> usize {
        self.inner.live.load(Ordering::Acquire)
    }

    /// Wait until every task of the set has ended, at most `deadline`; how many are
    /// still running then.
    pub(crate) async fn wait(&self, deadline: Duration) -> usize {
        let all_ended = async {
            loop {
                let idle = self.inner.idle.notified();
                tokio::pin!(idle);
                // Registered before looking, so an end between the two is not missed.
                idle.as_mut().enable();
                if self.live() == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(deadline, all_ended).await;
        self.live()
    }

    /// End every task of the set at its next poll, and any spawned later at once.
    pub(crate) fn abort(&self) {
        self.inner.stop.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waiting returns once the tasks end; aborting ends those that would never end.
    #[tokio::test]
    async fn waits_for_its_tasks_or_ends_them() {
        let set = Spawned::default();
        let (go, went) = tokio::sync::oneshot::channel::<()>();
        set.spawn(async move {
            let _ = went.await;
        });
        assert_eq!(set.live(), 1);
        assert_eq!(set.wait(Duration::from_millis(20)).await, 1);
        let _ = go.send(());
        assert_eq!(set.wait(Duration::from_secs(30)).await, 0);

        // Two tasks that never end on their own: aborted, both end.
        let (held_tx, held_rx) = tokio::sync::mpsc::channel::<()>(1);
        for _ in 0..2 {
            let held = held_tx.clone();
            set.spawn(async move {
                let _held = held;
                std::future::pending::<()>().await;
            });
        }
        drop(held_tx);
        assert_eq!(set.live(), 2);
        set.abort();
        assert_eq!(set.wait(Duration::from_secs(30)).await, 0);
        // Their futures were dropped (the senders they held with them).
        let mut held_rx = held_rx;
        assert_eq!(held_rx.recv().await, None);
        // One spawned after the abort does not run.
        let (ran_tx, mut ran_rx) = tokio::sync::mpsc::channel::<()>(1);
        set.spawn(async move {
            let _ = ran_tx.send(()).await;
        });
        assert_eq!(set.wait(Duration::from_secs(30)).await, 0);
        assert_eq!(ran_rx.recv().await, None);
    }
}
