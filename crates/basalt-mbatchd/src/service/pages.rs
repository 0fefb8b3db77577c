//! `JobsPages`: a job listing sent in pages as the owner thread makes them, so that the
//! first lines of a million jobs go at once and the owner is held a page at a time.

use crate::msg::Msg;
use crate::owner::Owner;
use basalt_proto::mbatchd as pb;
use tonic::Status;

/// How many jobs one message of `JobsPages` holds: the first lines of a listing come
/// after this many jobs' views are made and sent (a few milliseconds), and the owner
/// thread is held that long per page, not for the whole listing.
const JOBS_PAGE: usize = 2_000;

/// Send a `JobsPages` listing: `keys` in pages of [`JOBS_PAGE`], each as the jobs are
/// when it is made (the first also with `not_found`, and sent even when empty), until
/// the reader goes away.
pub(super) async fn send_pages(
    owner: Owner,
    keys: Vec<basalt_sched::JobKey>,
    not_found: Vec<(u64, Option<u32>)>,
    reason_hosts: bool,
    tx: tokio::sync::mpsc::Sender<Result<pb::JobsReply, Status>>,
) {
    let mut not_found = Some(not_found);
    let mut total = Some(keys.len() as u64);
    let mut pages = keys.chunks(JOBS_PAGE);
    loop {
        let page = pages.next();
        if page.is_none() && not_found.is_none() {
            return;
        }
        let keys = page.unwrap_or_default().to_vec();
        let mut view = match owner.ask(|reply| Msg::JobsPage { keys, reply }).await {
            Ok(v) => v,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        view.not_found = not_found.take().unwrap_or_default();
        let mut reply = basalt_wire::jobs_reply(&view, reason_hosts);
        reply.total = total.take();
        if tx.send(Ok(reply)).await.is_err() {
            return;
        }
    }
}
