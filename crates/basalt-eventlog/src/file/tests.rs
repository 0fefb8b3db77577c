//! Tests of the appender's rollback and of the header and sync helpers.

use super::*;

/// A sink that accepts `room` bytes and then fails, optionally also failing truncation.
struct Flaky {
    data: Vec<u8>,
    room: usize,
    fail_sync: bool,
    fail_truncate: bool,
    syncs: usize,
}

impl Sink for Flaky {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let n = buf.len().min(self.room.saturating_sub(self.data.len()));
        self.data.extend_from_slice(&buf[..n]);
        if n < buf.len() {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        Ok(())
    }
    fn sync_data(&mut self) -> io::Result<()> {
        if self.fail_sync {
            return Err(io::Error::other("EIO"));
        }
        self.syncs += 1;
        Ok(())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if self.fail_truncate {
            return Err(io::Error::other("EROFS"));
        }
        self.data.truncate(len as usize);
        Ok(())
    }
}

fn flaky(room: usize) -> Appender<Flaky> {
    Appender::new(
        PathBuf::from("/x/lsb.events"),
        Flaky {
            data: Vec::new(),
            room,
            fail_sync: false,
            fail_truncate: false,
            syncs: 0,
        },
        0,
    )
}

#[test]
fn failed_write_is_cut_back() {
    let mut a = flaky(30);
    a.append(b"line one\nline two\n", 2).unwrap();
    assert_eq!(a.sink.syncs, 1);
    let e = a.append(b"line three\nline four\n", 2).unwrap_err();
    assert!(matches!(e, EventLogError::Io { op: "write", .. }), "{e}");
    assert_eq!(a.sink.data, b"line one\nline two\n");
    assert_eq!(a.len, 18);
    // Still usable.
    a.sink.room = 1000;
    a.append(b"line five\n", 1).unwrap();
    assert_eq!(a.sink.data, b"line one\nline two\nline five\n");
    assert_eq!(a.stats.records, 3);
    assert_eq!(a.stats.syncs, 2);
}

#[test]
fn failed_sync_is_cut_back() {
    let mut a = flaky(1000);
    a.append(b"a\n", 1).unwrap();
    a.sink.fail_sync = true;
    let e = a.append(b"b\n", 1).unwrap_err();
    assert!(
        matches!(
            e,
            EventLogError::Io {
                op: "fdatasync",
                ..
            }
        ),
        "{e}"
    );
    // The cut back itself needs a sync, which fails here too: the appender is poisoned.
    assert!(a.broken.is_some());
    a.sink.fail_sync = false;
    let e = a.append(b"c\n", 1).unwrap_err();
    assert!(matches!(e, EventLogError::Poisoned { .. }), "{e}");
}

#[test]
fn failed_cut_back_poisons() {
    let mut a = flaky(3);
    a.sink.fail_truncate = true;
    assert!(a.append(b"abcdef\n", 1).is_err());
    let e = a.append(b"x\n", 1).unwrap_err();
    assert!(e.to_string().contains("restart mbatchd"), "{e}");
}

#[test]
fn sync_policies() {
    let mut a = flaky(1000);
    a.sync = SyncPolicy::None;
    a.append(b"a\n", 1).unwrap();
    assert_eq!((a.sink.syncs, a.stats.syncs), (0, 0));
    a.sync = SyncPolicy::Fsync;
    a.append(b"b\n", 1).unwrap();
    assert_eq!((a.sink.syncs, a.stats.syncs), (1, 1));
    assert_eq!("FSYNC".parse::<SyncPolicy>(), Ok(SyncPolicy::Fsync));
    assert_eq!("none".parse::<SyncPolicy>(), Ok(SyncPolicy::None));
    assert_eq!("".parse::<SyncPolicy>().ok(), None);
    assert!("sometimes".parse::<SyncPolicy>().is_err());
}

#[test]
fn header_format() {
    let h = fresh_header();
    assert_eq!(h.len(), 80);
    assert!(h.starts_with("#80 "));
    assert!(h.ends_with(" \n"));
    assert_eq!(parse_header(&h), Some(80));
    assert_eq!(
        parse_header("#168                                  "),
        Some(168)
    );
    assert_eq!(parse_header("#80\n"), Some(80));
    assert_eq!(parse_header("# comment"), None);
    assert_eq!(parse_header("\"JOB_NEW\""), None);
}
