//! Unit tests of the owner's pure helpers.

use super::to_report;
use crate::state::{Event, EventKind};
use basalt_core::job::status as jstat;
use basalt_proto::mbatchd::{JobRef, ReportKind};

#[test]
fn events_become_reports() {
    let ev = Event {
        seq: 7,
        kind: EventKind::Finished,
        time: 1_700_000_000,
        pid: 42,
        pgid: 42,
        state: jstat::EXIT,
        exit_status: 768,
        utime: 1.5,
        max_mem_kb: 2048,
        term_reason: "TERM_OWNER".into(),
        ..Default::default()
    };
    let r = to_report("hostA", (12, 3, 2), &ev);
    assert_eq!(r.kind, ReportKind::Finished as i32);
    assert_eq!(r.seq, 7);
    assert_eq!(r.attempt, 2);
    assert_eq!(r.host, "hostA");
    assert_eq!(
        r.id,
        Some(JobRef {
            job_id: 12,
            idx: 3,
            has_idx: true
        })
    );
    assert_eq!(r.exit_status, 768);
    assert_eq!(r.term_reason, "TERM_OWNER");
    let plain = to_report(
        "hostA",
        (12, 0, 1),
        &Event {
            kind: EventKind::StartFailed,
            message: "no user".into(),
            ..Default::default()
        },
    );
    assert_eq!(plain.kind, ReportKind::StartFailed as i32);
    assert_eq!(plain.message, "no user");
    assert!(plain.id.is_some_and(|i| !i.has_idx));
}

#[test]
fn checkpoint_and_restart_events_become_their_reports() {
    let ok = to_report(
        "hostA",
        (5, 0, 1),
        &Event {
            kind: EventKind::Chkpnt,
            pid: 77,
            chkpnt_ok: true,
            ..Default::default()
        },
    );
    assert_eq!(ok.kind, ReportKind::Chkpnt as i32);
    assert!(ok.chkpnt_ok && !ok.restart_failed);
    assert_eq!((ok.pid, ok.message.as_str()), (77, ""));
    let failed = to_report(
        "hostA",
        (5, 0, 1),
        &Event {
            kind: EventKind::StartFailed,
            message: "erestart.x exited with status 1".into(),
            restart_failed: true,
            ..Default::default()
        },
    );
    assert_eq!(failed.kind, ReportKind::StartFailed as i32);
    assert!(failed.restart_failed && !failed.chkpnt_ok);
    // Both survive the events' JSON (the job table, the wake-up line).
    for kind in [EventKind::Chkpnt, EventKind::StartFailed] {
        let ev = Event {
            kind,
            chkpnt_ok: true,
            restart_failed: true,
            ..Default::default()
        };
        let back: Event =
            serde_json::from_str(&serde_json::to_string(&ev).expect("json")).expect("back");
        assert_eq!(back, ev);
    }
}
