//! The owner thread's inbox: one channel, two ways in.
//!
//! * **Requests from clients** (`b*` commands, the C API, anything on the `Mbatchd`
//!   service, whose requests in flight are bounded too: [`crate::admit`]) come in
//!   through [`Inbox::request`]: at most [`CLIENT_BOUND`] of them wait
//!   in the channel at once. One past that is not queued: its caller is answered at once
//!   with `RESOURCE_EXHAUSTED` "mbatchd is busy; try again" and the retry metadata
//!   ([`busy`]), which bsub, the other commands and the C API honour by sending it again.
//!   Nothing is dropped unanswered, and a flood of requests cannot grow mbatchd's memory
//!   past the bound.
//! * **Internal messages** come in through [`Inbox::send`] and are never refused for
//!   room: a dispatch's outcome (the sbatchd may have started the job), a report or hello
//!   from an sbatchd (it must be acknowledged), a LIM update, a MultiCluster link's news
//!   or a request of another cluster's mbatchd, a scrape of `/metrics`, a resignation, a
//!   shutdown, the next page of a job listing under way. Their number is bounded by what sends them, not by clients: one dispatch
//!   task per order the owner gave, one poller, one link per remote cluster, the reports
//!   of each sbatchd's jobs, one hello per host per interval, one page request per
//!   listing under way.
//!
//! Which way a [`Msg`] takes is [`Msg::is_client_request`]'s answer (an exhaustive match: a
//! new message must be classified). The bound counts the client messages in the
//! channel: a permit travels with each and is returned when the owner takes it.

use crate::msg::Msg;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc as stdmpsc;
use std::time::Duration;

/// The most client requests waiting in the owner's channel at once.
///
/// Less than the owner takes in one iteration ([`TAKE_PER_ITERATION`]): a full inbox is
/// emptied by one iteration. Half the requests that may be in flight at once
/// ([`crate::admit::IN_FLIGHT_BOUND`]): the inbox fills only when the owner falls
/// behind (a stalled disk, a long pass) while clients keep sending. The bench's 64
/// concurrent clients (`cargo xtask bench --quick`) and its drain never come near it.
/// Measurements: [`crate::admit`].
pub(crate) const CLIENT_BOUND: usize = 1024;

/// The most messages the owner applies in one iteration (one commit).
pub(crate) const TAKE_PER_ITERATION: usize = 4096;

/// How long a caller told "busy" waits before it sends again (the owner empties a full
/// inbox in one iteration: well within a second unless it is stalled).
pub(crate) const BUSY_RETRY_SECS: &str = "1";

/// The answer to a client request that finds the inbox full.
pub(crate) fn busy() -> tonic::Status {
    let mut s =
        tonic::Status::resource_exhausted("mbatchd is busy (too many requests waiting); try again");
    s.metadata_mut().insert(
        basalt_proto::RETRY_SECS_METADATA,
        tonic::metadata::MetadataValue::from_static(BUSY_RETRY_SECS),
    );
    s.metadata_mut().insert(
        basalt_proto::BUSY_METADATA,
        tonic::metadata::MetadataValue::from_static("1"),
    );
    s
}

/// Why a message was not put in the inbox.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// [`CLIENT_BOUND`] client requests are waiting already.
    Full,
    /// The owner thread has stopped.
    Gone,
}

/// A message and, for a client's, its place among the [`CLIENT_BOUND`].
#[derive(Debug)]
pub(crate) struct Entry {
    msg: Msg,
    _permit: Option<Permit>,
}

/// One of the places of client requests; given back when dropped (the owner took the
/// message, or it was never sent).
#[derive(Debug)]
struct Permit(Arc<AtomicUsize>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The sending side (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct Inbox {
    tx: stdmpsc::Sender<Entry>,
    waiting: Arc<AtomicUsize>,
    bound: usize,
}

/// The owner's receiving side.
#[derive(Debug)]
pub(crate) struct InboxRx {
    rx: stdmpsc::Receiver<Entry>,
}

/// A new inbox with room for `bound` client requests.
pub(crate) fn inbox(bound: usize) -> (Inbox, InboxRx) {
    let (tx, rx) = stdmpsc::channel();
    (
        Inbox {
            tx,
            waiting: Arc::new(AtomicUsize::new(0)),
            bound,
        },
        InboxRx { rx },
    )
}

impl Inbox {
    /// Put a message in the inbox the way its kind goes ([`Msg::is_client_request`]): a
    /// client's is refused when the inbox is [`Refused::Full`]; any other is always
    /// taken while the owner runs.
    pub(crate) fn request(&self, msg: Msg) -> Result<(), Refused> {
        if !msg.is_client_request() {
            return self.send(msg).map_err(|_| Refused::Gone);
        }
        // The place is taken before the message goes in, and given back when the
        // owner takes it: never more than `bound` in the channel.
        let permit = Permit(self.waiting.clone());
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.bound {
            return Err(Refused::Full);
        }
        self.tx
            .send(Entry {
                msg,
                _permit: Some(permit),
            })
            .map_err(|_| Refused::Gone)
    }

    /// An internal message: never refused for room (see the module's doc for why their
    /// number is bounded anyway). Fails only when the owner has stopped.
    pub(crate) fn send(&self, msg: Msg) -> Result<(), Refused> {
        self.tx
            .send(Entry { msg, _permit: None })
            .map_err(|_| Refused::Gone)
    }

    /// Client requests waiting now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

impl InboxRx {
    /// The next message, waiting at most `wait`.
    pub(crate) fn recv_timeout(&self, wait: Duration) -> Result<Msg, stdmpsc::RecvTimeoutError> {
        self.rx.recv_timeout(wait).map(|e| e.msg)
    }

    /// The messages waiting now, without blocking.
    pub(crate) fn try_iter(&self) -> impl Iterator<Item = Msg> + '_ {
        self.rx.try_iter().map(|e| e.msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    fn query() -> (Msg, oneshot::Receiver<basalt_sched::ParamsView>) {
        let (reply, rx) = oneshot::channel();
        (Msg::Params { reply }, rx)
    }

    /// Issue 53 item 5: one client request past the bound is refused at once (nothing
    /// queued, nothing dropped silently), and its caller hears "busy" with the retry
    /// metadata; the place is free again once the owner takes a message.
    #[test]
    fn a_full_inbox_refuses_a_client_request_with_a_retry() {
        let (inbox, rx) = inbox(3);
        for _ in 0..3 {
            assert_eq!(inbox.request(query().0), Ok(()));
        }
        assert_eq!(inbox.waiting(), 3);
        assert_eq!(inbox.request(query().0), Err(Refused::Full));
        assert_eq!(inbox.waiting(), 3, "a refused request holds no place");
        let s = busy();
        assert_eq!(s.code(), tonic::Code::ResourceExhausted);
        assert_eq!(
            s.metadata()
                .get(basalt_proto::RETRY_SECS_METADATA)
                .and_then(|v| v.to_str().ok()),
            Some(BUSY_RETRY_SECS)
        );
        // The owner takes one: there is room for one more, and one only.
        assert!(rx.recv_timeout(Duration::from_millis(10)).is_ok());
        assert_eq!(inbox.waiting(), 2);
        assert_eq!(inbox.request(query().0), Ok(()));
        assert_eq!(inbox.request(query().0), Err(Refused::Full));
        assert_eq!(rx.try_iter().count(), 3);
        assert_eq!(inbox.waiting(), 0);
        drop(rx);
        assert_eq!(inbox.request(query().0), Err(Refused::Gone));
        assert_eq!(
            inbox.waiting(),
            0,
            "a message to a stopped owner holds no place"
        );
    }

    /// Issue 53 item 5: internal messages are taken however full the inbox is with client
    /// requests, and in the order sent — none is dropped.
    #[test]
    fn internal_messages_are_never_refused_for_room() {
        let (inbox, rx) = inbox(2);
        assert_eq!(inbox.request(query().0), Ok(()));
        assert_eq!(inbox.request(query().0), Ok(()));
        assert_eq!(inbox.request(query().0), Err(Refused::Full));
        let n = 10_000;
        for i in 0..n {
            let msg = match i % 3 {
                0 => Msg::Lim(Vec::new()),
                1 => Msg::DispatchDone {
                    key: (i, 0),
                    attempt: 1,
                    host: "h".into(),
                    result: Ok((1, 1)),
                },
                _ => {
                    let (reply, _rx) = oneshot::channel();
                    // Through `request` too: a report is not a client's request.
                    let report = Msg::Report {
                        report: None,
                        reply,
                    };
                    assert!(!report.is_client_request());
                    assert_eq!(inbox.request(report), Ok(()));
                    continue;
                }
            };
            assert_eq!(inbox.send(msg), Ok(()));
        }
        assert_eq!(inbox.send(Msg::Shutdown), Ok(()));
        let got: Vec<Msg> = rx.try_iter().collect();
        assert_eq!(got.len(), 2 + n as usize + 1);
        let dispatches: Vec<u64> = got
            .iter()
            .filter_map(|m| match m {
                Msg::DispatchDone { key, .. } => Some(key.0),
                _ => None,
            })
            .collect();
        assert_eq!(
            dispatches,
            (0..n).filter(|i| i % 3 == 1).collect::<Vec<_>>()
        );
        assert!(matches!(got.last(), Some(Msg::Shutdown)));
    }
}
