//! sbatchd's job reports as the peer service takes them: checked (bounds, the reporting
//! host's identity; the protocol version was checked once, from the call's metadata, by
//! the server layer), handed to the owner thread in batches, and answered with
//! the owner's acknowledgements — per call (`ReportJob`, `ReportJobs`) or on the
//! long-lived `ReportStream`.

use crate::msg::Msg;
use crate::owner::Owner;
use basalt_proto::mbatchd as pb;
use basalt_sched::Ack;
use tonic::{Status, Streaming};

/// The most reports one `ReportJobs` call may carry.
const MAX_REPORTS: usize = 1024;

/// The most answers of a report stream waiting to be sent (then its batches wait).
pub(super) const REPORT_STREAM_DEPTH: usize = 64;

/// Check the reports of one batch from `host` and hand them all to the owner before any
/// answer is awaited: it applies them in order, in one iteration (one commit) when they
/// arrive together. Every report is checked before any is applied: one refused refuses
/// the batch.
pub(super) fn send_reports(
    owner: &Owner,
    host: &str,
    reports: &[pb::JobReport],
) -> Result<Vec<AnswerRx>, Status> {
    if reports.len() > MAX_REPORTS {
        return Err(Status::invalid_argument(format!(
            "{} reports in one call (at most {MAX_REPORTS})",
            reports.len()
        )));
    }
    let mut checked = Vec::with_capacity(reports.len());
    for req in reports {
        if !basalt_core::same_host(&req.host, host) {
            tracing::warn!(%host, claimed = %req.host, "sbatchd reports for another host");
            return Err(Status::permission_denied(basalt_auth::PERMISSION_DENIED));
        }
        checked.push(checked_report(req)?);
    }
    checked
        .into_iter()
        .map(|report| {
            owner.send(|reply| Msg::Report {
                report: Some(report),
                reply,
            })
        })
        .collect()
}

/// The acknowledgements of a batch handed over by [`send_reports`], in its order.
pub(super) async fn answer_reports(
    owner: &Owner,
    answers: Vec<AnswerRx>,
) -> Result<pb::ReportAcks, Status> {
    let mut batch = StreamBatch::new(answers);
    batch.take_acks(owner).await?;
    Ok(pb::ReportAcks { acks: batch.acks })
}

/// A batch of reports handed to the owner: its answers, the acknowledgements taken from
/// them so far (none when the batch was refused).
struct StreamBatch {
    answers: Vec<AnswerRx>,
    acks: Vec<pb::ReportAck>,
}

impl StreamBatch {
    fn new(answers: Vec<AnswerRx>) -> StreamBatch {
        StreamBatch {
            acks: Vec::with_capacity(answers.len()),
            answers,
        }
    }

    /// Wait for the answers not taken yet, in order. Cancellation-safe: each is kept as
    /// soon as it is taken.
    async fn take_acks(&mut self, owner: &Owner) -> Result<(), Status> {
        while self.acks.len() < self.answers.len() {
            let (ack, epoch) = owner.answer(&mut self.answers[self.acks.len()]).await?;
            self.acks.push(report_ack(ack, epoch));
        }
        Ok(())
    }
}

type AnswerRx = tokio::sync::oneshot::Receiver<(Option<Ack>, u64)>;

/// Serve one sbatchd's report stream: each batch is handed to the owner as soon as it
/// comes (so batches that arrive together share a commit) and answered in the order
/// they came. A refused batch is answered with no acknowledgement (the sbatchd sends it
/// again); the stream ends when the sbatchd closes it, it breaks, or the owner cannot
/// take or answer a batch (mbatchd stopping, the event log unwritable: the error ends
/// the stream).
pub(super) async fn serve_report_stream(
    owner: Owner,
    host: String,
    mut inbound: Streaming<pb::JobReports>,
    out: tokio::sync::mpsc::Sender<Result<pb::ReportAcks, Status>>,
) {
    let mut waiting = std::collections::VecDeque::new();
    let mut open = true;
    while open || !waiting.is_empty() {
        tokio::select! {
            biased;
            answered = next_answer(&owner, &mut waiting), if !waiting.is_empty() => {
                let stop = answered.is_err();
                if out.send(answered).await.is_err() || stop {
                    return;
                }
            }
            batch = inbound.message(), if open => match batch {
                Ok(Some(batch)) => match send_reports(&owner, &host, &batch.reports) {
                    Ok(answers) => waiting.push_back(StreamBatch::new(answers)),
                    // This mbatchd is stopping (a restart, `badmin reconfig`): the stream
                    // ends, so the sbatchd sends its reports to the next one instead of
                    // again and again on a connection that outlives this one.
                    Err(e) if e.code() == tonic::Code::Unavailable => {
                        tracing::info!(%host, "report stream ended: {}", e.message());
                        let _ = out.send(Err(e)).await;
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(%host, "report stream: batch refused: {}", e.message());
                        waiting.push_back(StreamBatch::new(Vec::new()));
                    }
                },
                Ok(None) => open = false,
                Err(e) => {
                    tracing::debug!(%host, "report stream ended: {e}");
                    return;
                }
            },
        }
    }
}

/// The acknowledgements of the oldest batch of a report stream (cancellation-safe, see
/// [`StreamBatch::take_acks`]).
async fn next_answer(
    owner: &Owner,
    waiting: &mut std::collections::VecDeque<StreamBatch>,
) -> Result<pb::ReportAcks, Status> {
    if let Some(batch) = waiting.front_mut() {
        batch.take_acks(owner).await?;
    }
    let acks = waiting.pop_front().map(|b| b.acks).unwrap_or_default();
    Ok(pb::ReportAcks { acks })
}

/// A report as the core takes it. One without a job or of unspecified (or unknown) kind
/// is refused, not acknowledged as if it had been applied.
pub(super) fn checked_report(req: &pb::JobReport) -> Result<basalt_sched::Report, Status> {
    basalt_wire::report(req).ok_or_else(|| {
        Status::invalid_argument(format!(
            "job report without a job id or of unspecified kind {}",
            req.kind
        ))
    })
}

pub(super) fn report_ack(ack: Option<Ack>, epoch: u64) -> pb::ReportAck {
    let kind = match ack {
        Some(Ack::Ok) | None => pb::AckKind::Ok,
        Some(Ack::NoJob) => pb::AckKind::NoJob,
        Some(Ack::StopJob) => pb::AckKind::StopJob,
    };
    pb::ReportAck {
        kind: kind as i32,
        epoch,
    }
}
