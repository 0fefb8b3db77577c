//! Issue 29, item 5, "torn tail at every offset of the last record": a crash can stop a
//! write after any byte. For lsb.events, lsb.acct and the job-file spool, the file is
//! cut at every offset inside its last record; opening it again must keep every earlier
//! record, drop the torn one (and say so), and leave a file that takes appends and reads
//! back clean.

use std::fs;
use std::path::{Path, PathBuf};

use basalt_eventlog::*;

fn new_job(job_id: u64, name: &str) -> Record {
    JobNew {
        header: Header::new(1_795_339_535),
        job_id,
        user_id: 1000,
        user_name: "alice".into(),
        queue: "normal".into(),
        from_host: "vm".into(),
        cwd: "/home/alice/a dir with \"quotes\"".into(),
        job_file: job_file_name(1_795_339_535, job_id),
        job_name: name.into(),
        command: "sleep 30; echo 'ça marche' > out".into(),
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
        command: "sleep 30; echo 'ça marche'".into(),
        ..JobFinish::default()
    }
}

fn cut(path: &Path, len: u64) {
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn lsb_events_torn_at_every_offset_of_the_last_record_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(EVENTS_FILE);
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    // The last record has multi-byte characters: some cuts fall inside one.
    let earlier = vec![new_job(101, "a"), new_job(102, "b")];
    log.append(&earlier).unwrap();
    let good = log.size();
    log.append(&[new_job(103, "日本語の名前 é")]).unwrap();
    let full = log.size();
    drop(log);
    let whole = fs::read(&path).unwrap();
    assert_eq!(whole.len() as u64, full);
    assert!(full - good > 100, "a long last record");

    for at in good..full {
        fs::write(&path, &whole).unwrap();
        cut(&path, at);
        let (mut log, replay) = EventLog::open(dir.path())
            .unwrap_or_else(|e| panic!("cut at {at} of {good}..{full}: {e}"));
        assert_eq!(replay.records, earlier, "cut at {at}");
        if at == good {
            assert_eq!(replay.torn_tail, None, "nothing of the record was written");
        } else {
            assert!(
                replay.torn_tail.is_some(),
                "cut at {at}: torn tail reported"
            );
            assert_eq!(replay.torn_offset, Some(good), "cut at {at}");
        }
        assert_eq!(log.size(), good, "cut at {at}");
        assert_eq!(fs::metadata(&path).unwrap().len(), good, "cut at {at}");
        // The file goes on: appending after the cut, read back whole.
        log.append(&[new_job(104, "after")]).unwrap();
        drop(log);
        let (_log, replay) = EventLog::open(dir.path()).unwrap();
        assert_eq!(replay.torn_tail, None, "cut at {at}");
        let ids: Vec<_> = replay.records.iter().map(Record::job_id).collect();
        assert_eq!(ids, [Some(101), Some(102), Some(104)], "cut at {at}");
    }
}

#[test]
fn lsb_acct_torn_at_every_offset_of_the_last_record_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ACCT_FILE);
    let (mut acct, _) = AcctLog::open(dir.path()).unwrap();
    acct.append(&[finish(101), finish(102)]).unwrap();
    let good = acct.size();
    acct.append(&[finish(103)]).unwrap();
    let full = acct.size();
    drop(acct);
    let whole = fs::read(&path).unwrap();
    for at in good..full {
        fs::write(&path, &whole).unwrap();
        cut(&path, at);
        let (mut acct, torn) = AcctLog::open(dir.path())
            .unwrap_or_else(|e| panic!("cut at {at} of {good}..{full}: {e}"));
        assert_eq!(torn.is_some(), at > good, "cut at {at}");
        assert_eq!(acct.size(), good, "cut at {at}");
        acct.append(&[finish(104)]).unwrap();
        drop(acct);
        let read: Vec<u64> = read_acct(&path)
            .unwrap()
            .map(|r| r.unwrap().job_id)
            .collect();
        assert_eq!(read, [101, 102, 104], "cut at {at}");
    }
}

/// The spool's only segment.
fn segment(logdir: &Path) -> PathBuf {
    let mut segs: Vec<PathBuf> = fs::read_dir(logdir.join(SPOOL_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(segs.len(), 1, "{segs:?}");
    segs.remove(0)
}

#[test]
fn job_spool_torn_at_every_offset_of_the_last_record_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, _) = JobSpool::open(dir.path()).unwrap();
    s.append("100.1", b"#! /bin/sh\necho kept\n").unwrap();
    s.sync().unwrap();
    let seg = segment(dir.path());
    let before = fs::read(&seg).unwrap();
    let body = b"#! /bin/sh\necho torn by the crash\n";
    s.append("100.2", body).unwrap();
    s.sync().unwrap();
    drop(s);
    let whole = fs::read(&seg).unwrap();
    // The second record starts where the files first differ (its magic is not zero):
    // header (14 bytes), name, body.
    let start = before.iter().zip(&whole).position(|(a, b)| a != b).unwrap();
    let end = start + 14 + "100.2".len() + body.len();
    assert_eq!(&whole[start..start + 4], b"BJF1");
    assert!(
        whole[end..].iter().all(|&b| b == 0),
        "room after the records"
    );

    for at in start..end {
        // Two ways a write is torn: the file ends inside the record (set_len), or the
        // record's end never reached the room written ahead (zeros in its place).
        for zeros in [false, true] {
            let mut bytes = whole.clone();
            if zeros {
                bytes[at..end].fill(0);
            } else {
                bytes.truncate(at);
            }
            fs::write(&seg, &bytes).unwrap();
            let what = format!("cut at {at} of {start}..{end}, zeros {zeros}");
            let (mut s, found) =
                JobSpool::open(dir.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(found, ["100.1"], "{what}");
            assert_eq!(
                s.read("100.1").unwrap().as_deref(),
                Some(&b"#! /bin/sh\necho kept\n"[..]),
                "{what}"
            );
            assert_eq!(s.read("100.2").unwrap(), None, "{what}");
            s.append("100.3", b"after").unwrap();
            s.sync().unwrap();
            drop(s);
            let (s, found) = JobSpool::open(dir.path()).unwrap();
            assert_eq!(found, ["100.1", "100.3"], "{what}");
            assert_eq!(s.read("100.3").unwrap().as_deref(), Some(&b"after"[..]));
            drop(s);
            // Back to one segment holding the two records for the next cut.
            fs::remove_dir_all(dir.path().join(SPOOL_DIR)).unwrap();
            fs::create_dir_all(dir.path().join(SPOOL_DIR)).unwrap();
        }
    }
}
