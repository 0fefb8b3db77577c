//! The journal's own tests: which copy wins, taking over a silent lock, syncing spooled job files.

use super::copies::prefer_first;
use super::*;

#[test]
fn the_newer_intact_copy_wins() {
    let l1 = "\"JOB_CLEAN\" \"10.1\" 100 1 0\n";
    let l2 = "\"JOB_CLEAN\" \"10.1\" 200 2 0\n";
    let l3 = "\"JOB_CLEAN\" \"10.1\" 300 3 0\n";
    let bad = "\"JOB_CLEAN\" \"10.1\" 400 x 0\n";
    let cat = |v: &[&str]| v.concat().into_bytes();
    // A prefix loses to the copy that has everything it has.
    assert!(!prefer_first(&cat(&[l1]), &cat(&[l1, l2]), true));
    assert!(prefer_first(&cat(&[l1, l2]), &cat(&[l1]), true));
    // A torn tail does not count.
    assert!(!prefer_first(
        &cat(&[l1, "\"JOB_CL"]),
        &cat(&[l1, l2]),
        true
    ));
    // A damaged copy loses even when longer.
    assert!(!prefer_first(
        &cat(&[l1, l2, bad, l3]),
        &cat(&[l1, l2]),
        true
    ));
    // Diverged copies: the newer last record wins.
    assert!(!prefer_first(&cat(&[l1, l2]), &cat(&[l1, l3]), true));

    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(a.path().join(el::EVENTS_FILE), cat(&[l1])).unwrap();
    std::fs::write(b.path().join(el::EVENTS_FILE), cat(&[l1, l2])).unwrap();
    std::fs::write(b.path().join(el::ACCT_FILE), "x\n").unwrap();
    sync_copies(a.path(), b.path());
    assert_eq!(
        std::fs::read(a.path().join(el::EVENTS_FILE)).unwrap(),
        cat(&[l1, l2])
    );
    assert_eq!(std::fs::read(a.path().join(el::ACCT_FILE)).unwrap(), b"x\n");
}

#[test]
fn a_silent_lock_is_taken_over_and_a_live_one_is_not() {
    let hb = Duration::from_millis(20);
    let dir = tempfile::tempdir().unwrap();
    let lock_file = dir.path().join(el::LOCK_FILE);

    // No heartbeat: taken over after more than STALE_CHECKS unchanged checks.
    std::fs::write(&lock_file, "otherhost:1").unwrap();
    let t = Instant::now();
    let lock = acquire_lock(dir.path(), "me", hb, Duration::from_secs(10)).unwrap();
    assert!(t.elapsed() >= hb / 2 * STALE_CHECKS, "{:?}", t.elapsed());
    assert!(lock.holder().starts_with("me:"), "{}", lock.holder());
    drop(lock);
    assert!(!lock_file.exists());

    // A heartbeat every 5 ms: never taken over.
    std::fs::write(&lock_file, "otherhost:2").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let beat = {
        let (stop, path) = (stop.clone(), lock_file.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
                    let _ = f.set_modified(std::time::SystemTime::now());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let r = acquire_lock(dir.path(), "me", hb, Duration::from_millis(400));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = beat.join();
    match r {
        Err(JournalError::Held { holder, .. }) => assert_eq!(holder, "otherhost:2"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&lock_file).unwrap(), "otherhost:2");
}

/// The job files of an iteration go to the sequential spool, durable with the commit
/// (one write, one fdatasync), and are read back from it for dispatch, also by the next
/// mbatchd; none is a file of its own in `info/` until its job is dispatched.
#[test]
fn job_files_go_to_the_sequential_spool_and_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = super::open(dir.path(), "me", Options::default()).unwrap();
    for id in 1..=20u64 {
        j.spool(100, id, format!("#! /bin/sh\necho {id}\n").as_bytes())
            .unwrap();
    }
    assert!(j.unsynced.is_empty() && j.unsynced_files.is_empty());
    // Readable in the iteration that spooled it (before the commit).
    assert_eq!(j.job_file("100.3").unwrap(), b"#! /bin/sh\necho 3\n");
    j.sync_spool().unwrap();
    assert!(!dir.path().join(el::INFO_DIR).join("100.3").exists());
    assert!(j.in_spool("100.3"));
    j.release();
    let (mut j, _) = super::open(dir.path(), "me", Options::default()).unwrap();
    assert_eq!(j.job_file("100.20").unwrap(), b"#! /bin/sh\necho 20\n");
    // The job of id 5 is no longer known: its job file goes.
    j.retain_spooled(|id| id != 5);
    assert!(j.job_file("100.5").is_err());
    assert_eq!(j.job_file("100.6").unwrap(), b"#! /bin/sh\necho 6\n");
}

/// A dispatched job's file gets a copy in `info/` for LSF tools; both go after
/// JOB_CLEAN, and a new command for the job (bmod) removes the out-of-date copy.
#[test]
fn a_dispatched_job_file_has_a_copy_in_info_until_the_job_is_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = super::open(dir.path(), "me", Options::default()).unwrap();
    j.spool(100, 1, b"v1").unwrap();
    j.sync_spool().unwrap();
    let info = dir.path().join(el::INFO_DIR).join("100.1");
    super::place_info_copy(dir.path(), "100.1", &j.job_file("100.1").unwrap());
    assert_eq!(std::fs::read(&info).unwrap(), b"v1");
    j.spool(100, 1, b"v2").unwrap();
    j.sync_spool().unwrap();
    assert!(!info.exists(), "the copy of the old command stayed");
    assert_eq!(j.job_file("100.1").unwrap(), b"v2");
    super::place_info_copy(dir.path(), "100.1", b"v2");
    j.remove_spooled("100.1");
    assert!(!info.exists());
    assert!(j.job_file("100.1").is_err());
}

/// Without the sequential spool (it could not be opened), job files go to `info/` and
/// are made durable before the commit: a few one by one (a vanished one is an error,
/// not a silent loss), many with one `syncfs`.
#[test]
fn spooled_job_files_are_synced_one_by_one_or_together() {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = super::open(dir.path(), "me", Options::default()).unwrap();
    j.jobs = None;
    // A few: one by one.
    for id in 1..=3u64 {
        j.spool(100, id, b"#! /bin/sh\ntrue\n").unwrap();
    }
    assert_eq!(j.unsynced_files.len(), 3);
    j.sync_spool().unwrap();
    assert!(j.unsynced.is_empty() && j.unsynced_files.is_empty());
    // One removed before its sync: the commit must not go on.
    j.spool(100, 4, b"x").unwrap();
    std::fs::remove_file(j.job_file_path(&el::job_file_name(100, 4))).unwrap();
    match j.sync_spool() {
        Err(e) => assert!(e.to_string().contains("fsync job file"), "{e}"),
        Ok(()) => panic!("a vanished job file was taken as synced"),
    }
    // Many: together (the list stops growing past the limit).
    for id in 10..10 + 3 * super::spool::PER_FILE_SYNC_MAX as u64 {
        j.spool(100, id, b"x").unwrap();
    }
    assert_eq!(j.unsynced_files.len(), super::spool::PER_FILE_SYNC_MAX + 1);
    j.sync_spool().unwrap();
    assert!(j.unsynced.is_empty() && j.unsynced_files.is_empty());
    for id in 10..10 + 3 * super::spool::PER_FILE_SYNC_MAX as u64 {
        let name = el::job_file_name(100, id);
        assert_eq!(std::fs::read(j.job_file_path(&name)).unwrap(), b"x");
    }
}

/// An iteration nothing waits on is written without a sync and synced by the next
/// durable commit (or by `sync`); one with an `Acct` effect is always synced.
#[test]
fn an_iteration_nothing_waits_on_is_synced_by_the_next() {
    use basalt_config::embedded::{DefaultCluster, DefaultHost};
    use basalt_sched::{Effect, Event, Sched, SchedConfig};
    let dir = tempfile::tempdir().unwrap();
    let hosts = vec![DefaultHost {
        name: "hostA".into(),
        address: None,
        server: true,
    }];
    let envdir = DefaultCluster::new("basalt", "root", hosts)
        .write(dir.path())
        .unwrap();
    let config = basalt_config::load(&envdir).unwrap().config;
    let mut sched = Sched::new(SchedConfig::from_config(&config), 0);
    let caller = basalt_sched::Caller {
        uid: 0,
        user: "root".into(),
        host: "hostA".into(),
    };
    let sub = basalt_sched::Submission {
        command: "true".into(),
        rlimits: [-1; 11].into(),
        ..Default::default()
    };
    let (id, _, _) = sched.submit(0, &caller, sub).unwrap();
    let job = sched.jobs()[&(id, 0)].clone();
    let logdir = dir.path().join("logdir");
    let (mut j, _) = super::open(&logdir, "me", Options::default()).unwrap();
    let log = |t: i64| {
        vec![Effect::Log(Event::MbdDie {
            time: t,
            master: "hostA".into(),
            exit_code: 0,
        })]
    };
    assert_eq!(j.unsynced_for(), None);
    j.commit_as(&log(1), false).unwrap();
    assert!(j.unsynced());
    assert!(
        j.unsynced_for().is_some(),
        "the wait is timed from the first unsynced write"
    );
    j.commit_as(&log(2), false).unwrap();
    assert!(j.unsynced());
    j.commit_as(&log(3), true).unwrap();
    assert!(
        !j.unsynced(),
        "the durable commit's fsync covers the earlier lines"
    );
    j.commit_as(&log(4), false).unwrap();
    j.commit_as(&[], true).unwrap();
    assert!(!j.unsynced(), "an empty durable commit syncs");
    j.commit_as(&log(5), false).unwrap();
    j.sync().unwrap();
    assert!(!j.unsynced());
    assert_eq!(j.unsynced_for(), None);
    // An iteration with accounting records is synced whatever it is asked: its replies
    // wait for it. Its lsb.acct records are written by commit_acct, not here.
    let mut with_acct = log(6);
    with_acct.push(Effect::Acct(job));
    j.commit_as(&with_acct, false).unwrap();
    assert!(!j.unsynced(), "an iteration with an Acct effect is synced");
    let acct = std::fs::read_to_string(logdir.join(el::ACCT_FILE)).unwrap_or_default();
    assert!(!acct.contains("JOB_FINISH"), "not by commit_as: {acct}");
    j.commit_acct(&with_acct).unwrap();
    let text = std::fs::read_to_string(logdir.join(el::EVENTS_FILE)).unwrap();
    assert_eq!(text.matches("\"MBD_DIE\"").count(), 6, "{text}");
    let acct = std::fs::read_to_string(logdir.join(el::ACCT_FILE)).unwrap_or_default();
    assert_eq!(acct.matches("JOB_FINISH").count(), 1, "{acct}");
}

/// Issue 29, item 5, "torn tail at every offset of the last record", through what
/// mbatchd runs at start (and after a failed write): `journal::open` cuts lsb.events
/// torn after any byte of its last record, replays every earlier record, reports the
/// cut, and the next commit appends after it.
#[test]
fn lsb_events_torn_at_every_offset_of_the_last_record_is_cut_at_open() {
    use basalt_sched::{Effect, Event};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(el::EVENTS_FILE);
    let die = |t: i64, master: &str| {
        vec![Effect::Log(Event::MbdDie {
            time: t,
            master: master.into(),
            exit_code: 0,
        })]
    };
    let (mut j, _) = super::open(dir.path(), "me", Options::default()).unwrap();
    j.commit_as(&die(1, "hostA"), true).unwrap();
    j.commit_as(&die(2, "hostB"), true).unwrap();
    let good = std::fs::metadata(&path).unwrap().len();
    // Multi-byte characters: some cuts fall inside one.
    j.commit_as(&die(3, "hôte-日本-with-a-long-name"), true)
        .unwrap();
    j.release();
    let whole = std::fs::read(&path).unwrap();
    let full = whole.len() as u64;
    assert!(full - good > 30);
    for at in good..full {
        std::fs::write(&path, &whole[..at as usize]).unwrap();
        let (mut j, replayed) = super::open(dir.path(), "me", Options::default())
            .unwrap_or_else(|e| panic!("cut at {at} of {good}..{full}: {e}"));
        let times: Vec<i64> = replayed
            .events
            .iter()
            .map(|e| match e {
                Event::MbdDie { time, .. } => *time,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(times, [1, 2], "cut at {at}");
        assert_eq!(replayed.torn_tail.is_some(), at > good, "cut at {at}");
        if at > good {
            assert_eq!(replayed.torn_offset, Some(good), "cut at {at}");
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good, "cut at {at}");
        j.commit_as(&die(4, "hostC"), true).unwrap();
        j.release();
        let (j, replayed) = super::open(dir.path(), "me", Options::default()).unwrap();
        assert_eq!(replayed.torn_tail, None, "cut at {at}");
        assert_eq!(replayed.events.len(), 3, "cut at {at}");
        assert!(
            matches!(&replayed.events[2], Event::MbdDie { time: 4, .. }),
            "cut at {at}"
        );
        j.release();
    }
}
