//! lsb.events / lsb.acct files: fresh header, group commit, replay, torn tail, damaged
//! records, the read-only readers and the history file list.

use std::fs;
use std::path::Path;

use basalt_eventlog::*;

fn clean(job_id: u64, time: i64) -> Record {
    JobClean {
        header: Header::new(time),
        job_id,
        idx: 0,
    }
    .into()
}

fn new_job(job_id: u64, name: &str) -> Record {
    JobNew {
        header: Header::new(1_795_339_535),
        job_id,
        user_id: 1000,
        user_name: "alice".into(),
        queue: "normal".into(),
        from_host: "vm".into(),
        cwd: "/home/alice".into(),
        job_file: job_file_name(1_795_339_535, job_id),
        job_name: name.into(),
        command: "sleep 30".into(),
        project_name: "default".into(),
        ..JobNew::default()
    }
    .into()
}

fn finish(job_id: u64) -> JobFinish {
    JobFinish {
        header: Header::new(1_795_339_600),
        job_id,
        user_name: "alice".into(),
        queue: "normal".into(),
        exec_hosts: vec!["vm".into()],
        j_status: 64,
        command: "sleep 30".into(),
        ..JobFinish::default()
    }
}

fn events(logdir: &Path) -> std::path::PathBuf {
    logdir.join(EVENTS_FILE)
}

#[test]
fn fresh_file_has_the_volclava_header() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().join("work/logdir");
    let (log, replay) = EventLog::open(&logdir).unwrap();
    assert!(replay.fresh);
    assert!(replay.records.is_empty());
    assert_eq!(replay.torn_tail, None);
    assert_eq!(replay.header_offset, 80);
    let content = fs::read(events(&logdir)).unwrap();
    assert_eq!(content.len(), 80);
    assert_eq!(&content[..4], b"#80 ");
    assert_eq!(content[79], b'\n');
    assert!(content[3..79].iter().all(|&b| b == b' '));
    assert_eq!(log.size(), 80);
    assert_eq!(log.header_offset(), 80);
    drop(log);
    // Reopening an existing file does not write a second header.
    let (log, replay) = EventLog::open(&logdir).unwrap();
    assert!(!replay.fresh);
    assert_eq!(replay.header_offset, 80);
    assert_eq!(log.size(), 80);
}

/// Records nothing waits on are written without a sync; the next synced append (or an
/// explicit sync) makes them durable with its one fsync, and they replay in order.
#[test]
fn deferred_append_is_synced_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    log.append_deferred(&[clean(1, 5)]).unwrap();
    assert!(log.unsynced());
    let s = log.stats();
    assert_eq!((s.appends, s.syncs, s.records), (1, 0, 1));
    log.append(&[clean(2, 6)]).unwrap();
    assert!(!log.unsynced(), "the synced append covers the deferred one");
    assert_eq!(log.stats().syncs, 1);
    log.append_deferred(&[clean(3, 7)]).unwrap();
    log.sync().unwrap();
    log.sync().unwrap();
    assert!(!log.unsynced());
    assert_eq!(
        log.stats().syncs,
        2,
        "a sync with nothing unsynced does nothing"
    );
    drop(log);
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.records, vec![clean(1, 5), clean(2, 6), clean(3, 7)]);
}

#[test]
fn group_append_is_one_fsync_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    let batch = vec![
        new_job(101, "a"),
        new_job(102, "b \"quoted\""),
        clean(100, 5),
    ];
    log.append(&batch).unwrap();
    let s = log.stats();
    assert_eq!((s.appends, s.syncs, s.records), (1, 1, 3));
    log.append(&[clean(101, 6)]).unwrap();
    log.append(&[]).unwrap();
    let s = log.stats();
    assert_eq!(
        (s.appends, s.syncs, s.records),
        (2, 2, 4),
        "an empty batch does not sync"
    );
    let size = log.size();
    drop(log);
    assert_eq!(fs::metadata(events(dir.path())).unwrap().len(), size);

    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    let mut expected = batch;
    expected.push(clean(101, 6));
    assert_eq!(replay.records, expected);
    assert_eq!(replay.torn_tail, None);
}

#[test]
fn torn_tail_is_cut_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    log.append(&[new_job(101, "a"), clean(100, 5)]).unwrap();
    let good = log.size();
    drop(log);
    // A crash in the middle of writing the next record.
    let partial = new_job(102, "b").to_line();
    let partial = &partial[..partial.len() / 2];
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(events(dir.path()))
        .unwrap();
    std::io::Write::write_all(&mut f, partial.as_bytes()).unwrap();
    drop(f);

    // Readers tolerate it without touching the file.
    let mut reader = read_events(&events(dir.path())).unwrap();
    let read: Vec<Record> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(read.len(), 2);
    assert_eq!(reader.torn_tail(), Some(partial));
    assert_eq!(
        fs::metadata(events(dir.path())).unwrap().len(),
        good + partial.len() as u64
    );

    // The writer cuts it.
    let (mut log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.torn_tail.as_deref(), Some(partial));
    assert_eq!(replay.torn_offset, Some(good));
    assert_eq!(replay.records.len(), 2);
    assert_eq!(log.size(), good);
    assert_eq!(fs::metadata(events(dir.path())).unwrap().len(), good);
    // Appending after the cut gives a clean file.
    log.append(&[new_job(102, "b")]).unwrap();
    drop(log);
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.torn_tail, None);
    assert_eq!(replay.records.len(), 3);
    assert_eq!(replay.records[2].job_id(), Some(102));
}

#[test]
fn a_torn_header_is_replaced_by_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(events(dir.path()), "#80      ").unwrap();
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.torn_tail.as_deref(), Some("#80      "));
    assert!(replay.fresh);
    assert_eq!(
        fs::read_to_string(events(dir.path())).unwrap(),
        fresh_header()
    );
}

#[test]
fn damaged_record_stops_open_with_path_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    log.append(&[new_job(101, "a"), clean(100, 5), clean(101, 6)])
        .unwrap();
    drop(log);
    let path = events(dir.path());
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // Damage line 3 (the first JOB_CLEAN); good records follow it.
    lines[2] = r#""JOB_CLEAN" "10.1" 5 garbage 0"#.into();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let before = fs::read(&path).unwrap();

    let err = EventLog::open(dir.path()).unwrap_err();
    match &err {
        EventLogError::Damaged {
            path: p,
            line,
            offset,
            message,
        } => {
            assert_eq!(*offset, (lines[0].len() + lines[1].len() + 2) as u64);
            assert_eq!(p, &path);
            assert_eq!(*line, 3);
            assert!(message.contains("jobId"), "{message}");
        }
        other => panic!("{other}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:3: damaged event record", path.display())),
        "{text}"
    );
    assert!(text.contains("mbatchd --recover"), "{text}");
    assert!(text.contains("edit line 3"), "{text}");
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "a damaged file is not modified"
    );

    // Readers report the damaged line and go on.
    let items: Vec<_> = read_events(&path).unwrap().collect();
    assert_eq!(items.len(), 3);
    assert!(matches!(
        items[1],
        Err(EventLogError::Damaged { line: 3, .. })
    ));
    assert!(items[2].is_ok());
}

#[test]
fn damaged_last_complete_line_is_an_error_too() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    log.append(&[clean(100, 5)]).unwrap();
    drop(log);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(events(dir.path()))
        .unwrap();
    std::io::Write::write_all(&mut f, b"\"JOB_CLEAN\" \"10.1\"\n").unwrap();
    drop(f);
    let err = EventLog::open(dir.path()).unwrap_err();
    assert!(
        matches!(err, EventLogError::Damaged { line: 3, .. }),
        "{err}"
    );
}

#[test]
fn unknown_types_are_kept_by_replay_and_skipped_by_readers() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    let unknown = Record::Unknown {
        kind: "JOB_ATTR_SET".into(),
        header: Header::new(3),
        fields: vec![Field::int(101), Field::int(0)],
    };
    log.append(&[clean(100, 2), unknown.clone(), clean(101, 4)])
        .unwrap();
    drop(log);
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.records[1], unknown);
    let known: Vec<_> = read_events(&events(dir.path()))
        .unwrap()
        .map(|r| r.unwrap().kind().to_owned())
        .collect();
    assert_eq!(known, ["JOB_CLEAN", "JOB_CLEAN"]);
    let all = EventReader::open(&events(dir.path()))
        .unwrap()
        .include_unknown(true)
        .count();
    assert_eq!(all, 3);
}

#[test]
fn open_with_streams_records() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    let batch: Vec<Record> = (1..=100).map(|i| clean(i, i as i64)).collect();
    log.append(&batch).unwrap();
    drop(log);
    let mut ids = Vec::new();
    let (_log, info) = EventLog::open_with(dir.path(), |r| ids.push(r.job_id().unwrap())).unwrap();
    assert_eq!(info.records, 100);
    assert_eq!(ids, (1..=100).collect::<Vec<u64>>());
}

#[test]
fn skip_carried_over_starts_at_the_header_offset() {
    let dir = tempfile::tempdir().unwrap();
    let carried = clean(1, 1).to_line() + "\n" + &clean(2, 2).to_line() + "\n";
    let header = format!("#{:<37}\n", 39 + carried.len());
    assert_eq!(header.len(), 39);
    let text = header + &carried + &clean(3, 3).to_line() + "\n";
    let path = events(dir.path());
    fs::write(&path, text).unwrap();

    let all: Vec<_> = read_events(&path)
        .unwrap()
        .map(|r| r.unwrap().job_id())
        .collect();
    assert_eq!(all, [Some(1), Some(2), Some(3)]);
    let new: Vec<_> = read_events(&path)
        .unwrap()
        .skip_carried_over()
        .unwrap()
        .map(|r| r.unwrap().job_id())
        .collect();
    assert_eq!(new, [Some(3)]);
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(replay.header_offset, 39 + carried.len() as u64);
    assert_eq!(
        replay.records.len(),
        3,
        "replay reads the carried-over records too"
    );
    let mut flags = Vec::new();
    let (_log, info) =
        EventLog::open_with_carried(dir.path(), |r, carried| flags.push((r.job_id(), carried)))
            .unwrap();
    assert_eq!(
        flags,
        [(Some(1), true), (Some(2), true), (Some(3), false)],
        "open_with_carried tells the carried-over records"
    );
    assert_eq!(info.carried, 2);
}

#[test]
fn history_files_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    assert!(event_files(&dir.path().join("missing")).unwrap().is_empty());
    for name in [
        "lsb.events.10",
        "lsb.events.2",
        "lsb.events",
        "lsb.events.1",
        "lsb.events.index",
        "lsb.events.tmp",
        "lsb.eventsX",
        "lsb.acct",
        "lsb.acct.1",
        "#lsb.event.lock",
    ] {
        fs::write(dir.path().join(name), "").unwrap();
    }
    let names: Vec<String> = event_files(dir.path())
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "lsb.events",
            "lsb.events.1",
            "lsb.events.2",
            "lsb.events.10"
        ]
    );
    let names: Vec<String> = acct_files(dir.path())
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["lsb.acct", "lsb.acct.1"]);
}

#[test]
fn acct_log_has_no_header_and_cuts_its_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (mut acct, torn) = AcctLog::open(dir.path()).unwrap();
    assert_eq!(torn, None);
    assert_eq!(acct.size(), 0);
    acct.append(&[finish(101), finish(102)]).unwrap();
    assert_eq!(acct.stats().syncs, 1);
    let good = acct.size();
    drop(acct);
    let path = dir.path().join(ACCT_FILE);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("\"JOB_FINISH\" \"10.1\" "),
        "no header line: {text}"
    );
    assert_eq!(text.lines().count(), 2);

    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut f, b"\"JOB_FINISH\" \"10.1\" 17956").unwrap();
    drop(f);
    let jobs: Vec<u64> = read_acct(&path)
        .unwrap()
        .map(|r| r.unwrap().job_id)
        .collect();
    assert_eq!(jobs, [101, 102], "the reader skips the torn tail");

    let (mut acct, torn) = AcctLog::open(dir.path()).unwrap();
    assert_eq!(torn.as_deref(), Some("\"JOB_FINISH\" \"10.1\" 17956"));
    assert_eq!(acct.size(), good);
    acct.append(&[finish(103)]).unwrap();
    drop(acct);
    let read: Vec<JobFinish> = read_acct(&path).unwrap().map(Result::unwrap).collect();
    assert_eq!(read, vec![finish(101), finish(102), finish(103)]);
}

/// The last records of the accounting files, read backwards: across the 64 KiB blocks
/// it reads, from `lsb.acct` on into `lsb.acct.1` when it holds fewer, a torn last
/// line left out.
#[test]
fn acct_tail_reads_the_last_records_backwards_across_files() {
    let dir = tempfile::tempdir().unwrap();
    assert!(acct_tail(dir.path(), 5).unwrap().is_empty(), "no file");
    let (mut acct, _) = AcctLog::open(dir.path()).unwrap();
    acct.append(&(1..=1500).map(finish).collect::<Vec<_>>())
        .unwrap();
    drop(acct);
    fs::rename(
        dir.path().join(ACCT_FILE),
        dir.path().join(format!("{ACCT_FILE}.1")),
    )
    .unwrap();
    let (mut acct, _) = AcctLog::open(dir.path()).unwrap();
    acct.append(&(1501..=2000).map(finish).collect::<Vec<_>>())
        .unwrap();
    drop(acct);
    assert!(fs::metadata(dir.path().join(ACCT_FILE)).unwrap().len() > 64 * 1024);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(ACCT_FILE))
        .unwrap();
    std::io::Write::write_all(&mut f, b"\"JOB_FINISH\" \"10.1\" 17956").unwrap();
    drop(f);
    let ids = |n: usize| -> Vec<u64> {
        acct_tail(dir.path(), n)
            .unwrap()
            .iter()
            .map(|f| f.job_id)
            .collect()
    };
    assert!(ids(0).is_empty());
    assert_eq!(ids(3), [1998, 1999, 2000]);
    assert_eq!(ids(1000), (1001..=2000).collect::<Vec<_>>());
    assert_eq!(ids(5000), (1..=2000).collect::<Vec<_>>());
    // A damaged line in the part read is an error naming the file.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(ACCT_FILE))
        .unwrap();
    std::io::Write::write_all(&mut f, b"\n\"JOB_FINISH\" \"10.1\" x\n").unwrap();
    drop(f);
    let e = acct_tail(dir.path(), 2).unwrap_err().to_string();
    assert!(
        e.contains("lsb.acct") && e.contains("damaged record"),
        "{e}"
    );
}

/// How many of the ends due (in order) lsb.acct holds, given its last records.
fn held(due: &[EndKey], tail: &[EndKey]) -> usize {
    let mut m = AcctMatch::new(tail.to_vec());
    let mut held = 0;
    for (i, k) in due.iter().enumerate() {
        if m.push(*k) {
            held = i + 1;
        }
    }
    held
}

/// Which of the ends due lsb.acct already holds: the longest start of them its last
/// records end with (they are written in order), also when a job ends twice; only the
/// last `AcctMatch::TAIL` records are compared.
#[test]
fn acct_holds_the_longest_start_of_the_ends_due() {
    let k = |id: u64| finish(id).end_key();
    let (a, b, c, x, y) = (k(1), k(2), k(3), k(8), k(9));
    assert_eq!(held(&[a, b, c], &[]), 0);
    assert_eq!(held(&[a, b, c], &[x, y]), 0);
    assert_eq!(held(&[a, b, c], &[x, a]), 1);
    assert_eq!(held(&[a, b, c], &[x, a, b]), 2);
    assert_eq!(held(&[a, b, c], &[a, b, c]), 3);
    assert_eq!(held(&[], &[a, b]), 0);
    // A job requeued after its end and ended again at the same second.
    assert_eq!(held(&[a, b, a], &[x, a]), 1);
    assert_eq!(held(&[a, b, a], &[a, b, a]), 3);
    assert_eq!(held(&[a, a], &[y, a]), 1);
    assert_eq!(held(&[a, a], &[a, a]), 2);
    // Long runs: compared over the last TAIL records.
    let due: Vec<EndKey> = (1..=1000).map(k).collect();
    let tail: Vec<EndKey> = (1..=990).map(k).collect();
    assert_eq!(held(&due, &tail), 990);
    assert_eq!(held(&due, &due), 1000);
    assert_eq!(held(&due, &due[..1]), 1);
}

#[test]
fn acct_log_that_is_one_partial_line_is_emptied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ACCT_FILE);
    fs::write(&path, "\"JOB_FIN").unwrap();
    let (acct, torn) = AcctLog::open(dir.path()).unwrap();
    assert_eq!(torn.as_deref(), Some("\"JOB_FIN"));
    assert_eq!(acct.size(), 0);
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn switch_archives_history_and_carries_live_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    // Jobs 1 and 2 finished and were cleaned; job 3 is still alive.
    log.append(&[new_job(1, "one"), new_job(2, "two"), new_job(3, "three")])
        .unwrap();
    log.append(&[clean(1, 10), clean(2, 11)]).unwrap();
    let history_len = log.size() - 80;

    let switch_rec = || -> Record {
        LogSwitch {
            header: Header::new(100),
            last_job_id: 3,
            fairshare: vec![],
        }
        .into()
    };
    let report = log
        .switch(100, &[new_job(3, "three")], &[switch_rec()])
        .unwrap();
    assert_eq!(report.archived_bytes, history_len);
    assert_eq!(report.rotated, 0);
    let carried_len = new_job(3, "three").to_line().len() as u64 + 1;
    assert_eq!(report.header_offset, 39 + carried_len);
    assert_eq!(log.header_offset(), report.header_offset);

    // Appends go to the new file.
    log.append(&[new_job(4, "four")]).unwrap();
    drop(log);

    let current = events(dir.path());
    let text = fs::read_to_string(&current).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(first.len(), 38);
    assert_eq!(parse_header(first), Some(report.header_offset));
    let one = dir.path().join("lsb.events.1");
    let archived = fs::read_to_string(&one).unwrap();
    assert!(archived.starts_with("#100 "), "{archived}");
    assert_eq!(archived.lines().next().unwrap().len(), 38);
    assert!(!dir.path().join("lsb.events.0").exists());
    assert!(!dir.path().join("lsb.events.tmp").exists());

    // Replay reads only the current file: the live job, the switch record, the new job.
    let (mut log, replay) = EventLog::open(dir.path()).unwrap();
    let ids: Vec<_> = replay
        .records
        .iter()
        .map(|r| (r.kind().to_owned(), r.job_id()))
        .collect();
    assert_eq!(
        ids,
        [
            ("JOB_NEW".to_owned(), Some(3)),
            ("LOG_SWITCH".to_owned(), None),
            ("JOB_NEW".to_owned(), Some(4)),
        ]
    );
    assert_eq!(replay.header_offset, report.header_offset);

    // A second switch rotates .1 to .2.
    log.append(&[clean(3, 20)]).unwrap();
    let report = log
        .switch(200, &[new_job(4, "four")], &[switch_rec()])
        .unwrap();
    assert_eq!(report.rotated, 1);
    drop(log);
    let files: Vec<String> = event_files(dir.path())
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["lsb.events", "lsb.events.1", "lsb.events.2"]);

    // History over all files, reading the current one from its offset, has every record
    // exactly once.
    let mut history: Vec<(String, Option<u64>)> = Vec::new();
    for (i, f) in event_files(dir.path()).unwrap().iter().enumerate() {
        let mut reader = read_events(f).unwrap();
        if i == 0 {
            reader = reader.skip_carried_over().unwrap();
        }
        for r in reader {
            let r = r.unwrap();
            history.push((r.kind().to_owned(), r.job_id()));
        }
    }
    history.sort();
    let news = history.iter().filter(|(k, _)| k == "JOB_NEW").count();
    let cleans = history.iter().filter(|(k, _)| k == "JOB_CLEAN").count();
    assert_eq!((news, cleans), (4, 3), "{history:?}");
}

#[test]
fn openlava4_bare_header_offset_is_ignored() {
    // OpenLava 4 writes a bare "#80": the offset does not fall on a line boundary.
    let dir = tempfile::tempdir().unwrap();
    let path = events(dir.path());
    let text = String::from("#80\n")
        + &clean(1, 1).to_line()
        + "\n"
        + &clean(2, 2).to_line()
        + "\n"
        + &clean(3, 3).to_line()
        + "\n";
    fs::write(&path, &text).unwrap();
    let ids: Vec<_> = read_events(&path)
        .unwrap()
        .skip_carried_over()
        .unwrap()
        .map(|r| r.unwrap().job_id().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3], "nothing is carried over");
    let (_log, replay) = EventLog::open(dir.path()).unwrap();
    assert_eq!(
        replay.header_offset, 4,
        "the events begin after the header line"
    );
    drop(_log);
    let (_log, info) = EventLog::open_with_carried(dir.path(), |_, _| {}).unwrap();
    assert_eq!(info.carried, 0, "nothing is carried over");
}
