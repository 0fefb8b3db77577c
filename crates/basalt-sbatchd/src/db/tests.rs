//! Unit tests of the job database.

use super::*;
use basalt_core::job::status as jstat;

fn spec(job_id: u64) -> JobSpec {
    JobSpec {
        job_id,
        attempt: 1,
        user: "u".into(),
        job_file: b"#!/bin/sh\ntrue\n".to_vec(),
        ..Default::default()
    }
}

#[test]
fn schema_is_created_versioned_and_in_wal_mode() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join(DB_FILE);
    assert!(JobDb::open(&p, false).is_err(), "no file without create");
    let db = JobDb::open(&p, true).expect("open");
    assert_eq!(db.schema_version().expect("version"), SCHEMA_VERSION);
    let mode: String = db
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("mode");
    assert_eq!(mode, "wal");
    drop(db);
    // Opening again changes nothing.
    let db = JobDb::open(&p, false).expect("reopen");
    assert_eq!(db.schema_version().expect("version"), SCHEMA_VERSION);
    // A newer schema is refused.
    db.conn
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .expect("bump");
    drop(db);
    match JobDb::open(&p, false) {
        Err(DbError::TooNew { found, .. }) => assert_eq!(found, SCHEMA_VERSION + 1),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn jobs_events_acks_and_removal() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join(DB_FILE);
    let mut a = JobDb::open(&p, true).expect("open");
    // A second connection, like a supervisor's.
    let mut b = JobDb::open(&p, false).expect("open b");
    let key = (7, 0, 1);
    let launch = Launch {
        host: "hostA".into(),
        sample_ms: 300,
        ..Default::default()
    };
    a.insert_job(key, &spec(7), &launch, 100, None)
        .expect("insert");
    let me = SupervisorId::of(std::process::id()).expect("own id");
    b.set_supervisor(key, &me).expect("sup");
    assert_eq!(a.supervisor(key).expect("read"), Some(me.clone()));
    assert!(b.set_supervisor((8, 0, 1), &me).is_err(), "unknown job");

    let mut first = [
        Event {
            kind: EventKind::Started,
            pid: 42,
            pgid: 42,
            state: jstat::RUN,
            ..Default::default()
        },
        Event {
            kind: EventKind::Executing,
            pid: 42,
            pgid: 42,
            state: jstat::RUN,
            out_path: "/tmp/o".into(),
            ..Default::default()
        },
    ];
    assert_eq!(b.append_events(key, &mut first).expect("append"), 2);
    assert_eq!((first[0].seq, first[1].seq), (1, 2));
    let mut usage = Event {
        kind: EventKind::Rusage,
        mem_kb: 10,
        ..Default::default()
    };
    assert_eq!(b.append_event(key, &mut usage).expect("usage"), 3);
    let got = a.events_after(key, 1).expect("read");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].out_path, "/tmp/o");
    assert_eq!(got[1].seq, 3);

    // Acknowledged usage is pruned, but its number is never given again.
    a.ack_many(&[(key, 3)]).expect("ack");
    a.ack_many(&[(key, 2)])
        .expect("an older ack changes nothing");
    let mut stop = Event {
        kind: EventKind::State,
        state: jstat::USUSP,
        ..Default::default()
    };
    assert_eq!(a.append_event(key, &mut stop).expect("state"), 4);
    let all = a.load_all().expect("load");
    assert_eq!(all.len(), 1);
    let j = &all[0];
    assert_eq!(j.key, key);
    assert_eq!(j.spec, spec(7));
    assert_eq!(j.launch.host, "hostA");
    assert_eq!((j.pid, j.pgid, j.state), (42, 42, jstat::USUSP));
    assert_eq!((j.last_seq, j.acked_seq), (4, 3));
    assert!(!j.abandoned);
    assert_eq!(
        j.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![1, 2, 4]
    );
    a.abandon(key).expect("abandon");
    assert!(a.job(key).expect("job").is_some_and(|j| j.abandoned));

    // Replacing a leftover of the same key starts its history afresh.
    a.insert_job(key, &spec(7), &launch, 200, None)
        .expect("again");
    let j = a.job(key).expect("job").expect("there");
    assert_eq!((j.last_seq, j.events.len(), j.created), (0, 0, 200));
    assert_eq!(j.supervisor, None);

    a.remove_many(&[key]).expect("remove");
    assert!(a.job(key).expect("job").is_none());
    assert!(a.load_all().expect("load").is_empty());
    assert!(b.append_event(key, &mut stop).is_err(), "no job, no event");

    // One end per job: whoever records it first (supervisor or sbatchd) wins.
    a.insert_job(key, &spec(7), &launch, 300, None)
        .expect("insert");
    let mut end = Event {
        kind: EventKind::Finished,
        state: jstat::EXIT,
        exit_status: 9,
        ..Default::default()
    };
    assert_eq!(b.append_event(key, &mut end).expect("end"), 1);
    let mut other = Event {
        kind: EventKind::StartFailed,
        ..Default::default()
    };
    assert!(matches!(
        a.append_event(key, &mut other),
        Err(DbError::Finished { .. })
    ));
    let j = a.job(key).expect("job").expect("there");
    assert_eq!((j.state, j.last_seq, j.events.len()), (jstat::EXIT, 1, 1));

    // The end of a job of an earlier boot jumps past any number lost with it. (Its
    // supervisor recorded with it, as sbatchd does when it knows which takes the job.)
    let me = SupervisorId::of(std::process::id()).expect("own id");
    a.insert_job(key, &spec(7), &launch, 400, Some(&me))
        .expect("insert");
    assert_eq!(a.supervisor(key).expect("supervisor"), Some(me));
    let mut first = Event {
        kind: EventKind::Started,
        ..Default::default()
    };
    a.append_event(key, &mut first).expect("started");
    let mut end = Event {
        kind: EventKind::Finished,
        ..Default::default()
    };
    let seq = a.append_after_reboot(key, &mut end).expect("end");
    assert_eq!(seq, 1 + REBOOT_SEQ_GAP);
    assert_eq!(end.seq, seq);
}

/// Acknowledgements of several jobs are recorded in one call; each only raises its
/// job's number, and a job without a row is passed over.
#[test]
fn acknowledgements_of_several_jobs_in_one_call() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut db = JobDb::open(&d.path().join(DB_FILE), true).expect("open");
    let launch = Launch {
        host: "hostA".into(),
        ..Default::default()
    };
    let (a, b) = ((1, 0, 1), (2, 0, 1));
    for k in [a, b] {
        db.insert_job(k, &spec(k.0), &launch, 100, None)
            .expect("insert");
        let mut evs = [
            Event {
                kind: EventKind::Started,
                ..Default::default()
            },
            Event {
                kind: EventKind::Executing,
                ..Default::default()
            },
        ];
        db.append_events(k, &mut evs).expect("append");
    }
    db.ack_many(&[(a, 2), (b, 1), ((9, 0, 1), 5)])
        .expect("acks");
    db.ack_many(&[(a, 1)])
        .expect("an older ack changes nothing");
    db.ack_many(&[]).expect("nothing to record");
    let acked = |k| db.job(k).expect("job").map(|j| j.acked_seq);
    assert_eq!((acked(a), acked(b)), (Some(2), Some(1)));
}

/// Forgotten jobs are removed together, rows and events, in one call; a job not
/// named stays, one already gone is no error.
#[test]
fn several_jobs_removed_in_one_call() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut db = JobDb::open(&d.path().join(DB_FILE), true).expect("open");
    let launch = Launch {
        host: "hostA".into(),
        ..Default::default()
    };
    let (a, b, c) = ((1, 0, 1), (2, 0, 1), (3, 0, 1));
    for k in [a, b, c] {
        db.insert_job(k, &spec(k.0), &launch, 100, None)
            .expect("insert");
        let mut evs = [Event {
            kind: EventKind::Started,
            ..Default::default()
        }];
        db.append_events(k, &mut evs).expect("append");
    }
    db.remove_many(&[a, c, (9, 0, 1)]).expect("remove");
    db.remove_many(&[]).expect("nothing to remove");
    let left: Vec<_> = db
        .load_all()
        .expect("load")
        .into_iter()
        .map(|j| (j.key, j.events.len()))
        .collect();
    assert_eq!(left, vec![(b, 1)]);
}

/// The supervisor's final event: committed without waiting for the disk (the
/// connection stays at NORMAL), readable by another connection at once, refused a
/// second time, then made durable by one sync of the write-ahead log; a failed
/// transaction (the refused final) leaves nothing open behind it.
#[test]
fn a_final_event_committed_then_synced() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join(DB_FILE);
    let mut sbd = JobDb::open(&p, true).expect("open");
    let mut sup = JobDb::open(&p, false).expect("open supervisor");
    let key = (9, 0, 1);
    sbd.insert_job(key, &spec(9), &Launch::default(), 100, None)
        .expect("insert");
    let mut end = vec![Event {
        kind: EventKind::Finished,
        state: jstat::DONE,
        time: 101,
        ..Default::default()
    }];
    assert_eq!(
        sup.append_events_then_sync(key, &mut end).expect("append"),
        1
    );
    assert!(!sup.full, "no FULL commit on this path");
    let seen = sbd.events_after(key, 0).expect("read");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].kind, EventKind::Finished);
    assert!(matches!(
        sup.append_events_then_sync(key, &mut end),
        Err(DbError::Finished { .. })
    ));
    sup.sync_log().expect("sync");
    sup.sync_log().expect("sync again (the log kept open)");
    // Nothing left open: both connections can still write.
    sup.set_supervisor(key, &SupervisorId::of(std::process::id()).expect("id"))
        .expect("write after a refused transaction");
    sbd.remove_many(&[key]).expect("remove");
}
