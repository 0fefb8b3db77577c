//! `#lsb.event.lock`: O_EXCL creation, takeover of a dead pid on the same host, refusal
//! of a live one, heartbeat, takeover after the caller's waiting policy, release.

use std::fs;
use std::time::{Duration, SystemTime};

use basalt_eventlog::{EventLock, LOCK_FILE, LockError};

const HOST: &str = "vm";

fn never_alive(_: u32) -> bool {
    false
}

fn always_alive(_: u32) -> bool {
    true
}

fn set_mtime_back(path: &std::path::Path, secs: u64) {
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn acquire_writes_host_and_pid_and_release_removes() {
    let dir = tempfile::tempdir().unwrap();
    let lock = EventLock::acquire(dir.path(), HOST, always_alive).unwrap();
    let path = dir.path().join(LOCK_FILE);
    let expected = format!("{HOST}:{}", std::process::id());
    assert_eq!(fs::read_to_string(&path).unwrap(), expected);
    assert_eq!(lock.holder(), expected);
    assert!(lock.still_held().unwrap());

    // The same process cannot take it twice, although the pid is its own.
    let err = EventLock::acquire(dir.path(), HOST, never_alive).unwrap_err();
    assert!(
        matches!(&err, LockError::Held { holder, .. } if *holder == expected),
        "{err}"
    );

    lock.release().unwrap();
    assert!(!path.exists());
    // Dropping releases too.
    {
        let _lock = EventLock::acquire(dir.path(), HOST, always_alive).unwrap();
        assert!(path.exists());
    }
    assert!(!path.exists());
}

#[test]
fn dead_pid_on_this_host_is_taken_over_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOCK_FILE);
    fs::write(&path, "vm.example.org:999999").unwrap();
    let seen = std::cell::Cell::new(None);
    let lock = EventLock::acquire(dir.path(), HOST, |pid| {
        seen.set(Some(pid));
        false
    })
    .unwrap();
    assert_eq!(seen.get(), Some(999_999), "the pid was checked");
    assert_eq!(fs::read_to_string(&path).unwrap(), lock.holder());
    // No stale copies are left behind.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [LOCK_FILE]);
}

#[test]
fn a_previous_incarnation_with_our_pid_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOCK_FILE);
    fs::write(&path, format!("{HOST}:{}", std::process::id())).unwrap();
    // Our own pid is always alive; the lock is still recognised as not ours.
    let lock = EventLock::acquire(dir.path(), HOST, always_alive).unwrap();
    assert!(lock.still_held().unwrap());
}

#[test]
fn live_pid_or_other_host_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOCK_FILE);
    fs::write(&path, "vm:4242").unwrap();
    set_mtime_back(&path, 30);
    let err = EventLock::acquire(dir.path(), HOST, always_alive).unwrap_err();
    match &err {
        LockError::Held { holder, age, info } => {
            assert_eq!(holder, "vm:4242");
            assert!(*age >= Duration::from_secs(29), "{age:?}");
            assert_eq!(info.host.as_deref(), Some("vm"));
            assert_eq!(info.pid, Some(4242));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("vm:4242"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "vm:4242", "untouched");

    // A pid on another host cannot be checked from here: refused even if "dead" locally.
    fs::write(&path, "otherhost:4242").unwrap();
    let err = EventLock::acquire(dir.path(), HOST, never_alive).unwrap_err();
    assert!(matches!(err, LockError::Held { .. }), "{err}");
    // So is content that is not host:pid.
    fs::write(&path, "").unwrap();
    let err = EventLock::acquire(dir.path(), HOST, never_alive).unwrap_err();
    assert!(matches!(err, LockError::Held { .. }), "{err}");
}

#[test]
fn heartbeat_advances_mtime() {
    let dir = tempfile::tempdir().unwrap();
    let mut lock = EventLock::acquire(dir.path(), HOST, always_alive).unwrap();
    set_mtime_back(lock.path(), 100);
    assert!(lock.mtime_age().unwrap() >= Duration::from_secs(99));
    lock.touch().unwrap();
    assert!(lock.mtime_age().unwrap() < Duration::from_secs(5));
    assert_eq!(
        fs::read_to_string(lock.path()).unwrap(),
        lock.holder(),
        "content kept"
    );
}

#[test]
fn take_over_after_the_waiting_policy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOCK_FILE);
    fs::write(&path, "otherhost:77").unwrap();
    set_mtime_back(&path, 600);
    let stale = EventLock::inspect(dir.path()).unwrap().unwrap();
    assert_eq!(stale.holder, "otherhost:77");
    assert!(stale.age() >= Duration::from_secs(599));

    // The holder beats after our observation: the takeover must fail.
    set_mtime_back(&path, 1);
    let err = EventLock::take_over(dir.path(), HOST, &stale).unwrap_err();
    assert!(
        matches!(&err, LockError::Held { holder, .. } if holder == "otherhost:77"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "otherhost:77");

    // Observed again and still unchanged: the takeover succeeds.
    let stale = EventLock::inspect(dir.path()).unwrap().unwrap();
    let lock = EventLock::take_over(dir.path(), HOST, &stale).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), lock.holder());
    drop(lock);

    // A vanished lock file can be taken with any observation.
    assert!(EventLock::inspect(dir.path()).unwrap().is_none());
    let lock = EventLock::take_over(dir.path(), HOST, &stale).unwrap();
    assert!(lock.still_held().unwrap());
}

#[test]
fn a_removed_lock_is_reported_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut lock = EventLock::acquire(dir.path(), HOST, always_alive).unwrap();
    fs::remove_file(lock.path()).unwrap();
    fs::write(lock.path(), "intruder:1").unwrap();
    assert!(!lock.still_held().unwrap());
    assert!(matches!(lock.touch(), Err(LockError::Lost { .. })));
    let path = lock.path().to_owned();
    lock.release().unwrap();
    assert_eq!(
        fs::read_to_string(path).unwrap(),
        "intruder:1",
        "not ours: not removed"
    );
}
