//! Requests of peers from before issue 53 still carry their protocol version in field 1
//! of the body (`basalt.common.v1.ProtocolVersion protocol = 1`, now `reserved`): each
//! request message that had it decodes such a body as the sender meant the rest of it,
//! the old field skipped unread. The version that counts is the one in the request's
//! metadata (`basalt-protocol`), checked once by the server layer.

use basalt_proto::{PROTOCOL, common, lim, mbatchd, res, sbatchd};
use prost::Message;

/// What an old peer put first in each of these requests.
#[derive(Clone, PartialEq, prost::Message)]
struct OldField1 {
    #[prost(message, optional, tag = "1")]
    protocol: Option<common::ProtocolVersion>,
}

/// `msg` as an old peer encoded it: field 1 set, then the fields the message still has (a
/// protobuf body is its fields in any order, so the concatenation is one message).
fn with_old_field(msg: &impl Message) -> Vec<u8> {
    let mut body = OldField1 {
        protocol: Some(PROTOCOL),
    }
    .encode_to_vec();
    assert!(!body.is_empty());
    msg.encode(&mut body).expect("encode into a Vec");
    body
}

/// `msg` sent with the old field decodes to `msg`.
fn decodes_as_meant<M: Message + Default + PartialEq + std::fmt::Debug>(msg: M) {
    let body = with_old_field(&msg);
    assert!(
        body.len() > msg.encoded_len(),
        "the old field is on the wire"
    );
    let decoded = M::decode(body.as_slice()).expect("a body with the old field decodes");
    assert_eq!(decoded, msg);
    assert_eq!(
        decoded.encode_to_vec(),
        msg.encode_to_vec(),
        "nothing of it is kept"
    );
}

#[test]
fn every_request_that_carried_the_protocol_decodes_an_old_body() {
    let job = Some(mbatchd::JobRef {
        job_id: 42,
        idx: 3,
        has_idx: true,
    });
    decodes_as_meant(lim::HeartbeatRequest {
        host: "hostB".into(),
        info: Some(common::HostInfo {
            name: "hostB".into(),
            ..Default::default()
        }),
        load: vec![common::LoadValue {
            name: "r1m".into(),
            value: 0.5,
        }],
        locked: true,
    });
    decodes_as_meant(lim::AnnounceRequest {
        master: "hostA".into(),
        epoch: 7,
    });
    decodes_as_meant(lim::ProbeRequest {
        from: "hostB".into(),
    });
    decodes_as_meant(mbatchd::SubmitRequest {
        job: Some(mbatchd::JobSubmission {
            command: "sleep 10".into(),
            queue: "normal".into(),
            ..Default::default()
        }),
        submit_token: "t-1".into(),
    });
    decodes_as_meant(mbatchd::ModifyRequest {
        job,
        values: Some(mbatchd::JobSubmission {
            job_name: "renamed".into(),
            ..Default::default()
        }),
        set: vec!["J".into()],
        reset: vec!["q".into()],
    });
    decodes_as_meant(mbatchd::SbdHelloRequest {
        host: "hostB".into(),
        restarted: true,
        jobs: vec![mbatchd::SbdJob {
            id: job,
            attempt: 2,
            state: 4,
            pid: 100,
            pgid: 100,
        }],
    });
    decodes_as_meant(mbatchd::JobReport {
        host: "hostB".into(),
        epoch: 5,
        id: job,
        attempt: 2,
        seq: 9,
        kind: mbatchd::ReportKind::Finished as i32,
        exit_status: 768,
        ..Default::default()
    });
    decodes_as_meant(res::AttachJob {
        job_id: 42,
        idx: 3,
        rows: 24,
        cols: 80,
    });
    decodes_as_meant(res::TaskStart {
        argv: vec!["hostname".into()],
        env: vec!["PATH=/bin".into()],
        ..Default::default()
    });
    decodes_as_meant(sbatchd::StartJobRequest {
        epoch: 5,
        job: Some(sbatchd::JobSpec {
            job_id: 42,
            command: "true".into(),
            ..Default::default()
        }),
        tag: 11,
    });
    decodes_as_meant(sbatchd::SignalJobRequest {
        epoch: 5,
        job_id: 42,
        idx: 3,
        attempt: 2,
        action: sbatchd::SignalAction::Kill as i32,
        term_reason: "TERM_OWNER".into(),
        ..Default::default()
    });
}
