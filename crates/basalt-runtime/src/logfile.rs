//! The daemons' log file in `LSF_LOGDIR` (`<daemon>.log.<host>`, LSF's names), reopened
//! after SIGHUP so that logrotate (or an administrator's `mv`) can rotate it: from the
//! first line logged after the signal, lines go to a new file at the same path.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A log file that can be reopened at its path (cheap to clone: shared).
#[derive(Debug, Clone)]
pub struct LogFile {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    file: Mutex<File>,
    /// [`LogFile::reopen_on_sighup`] was called.
    follows_sighup: AtomicBool,
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl LogFile {
    /// Open (create, append to) `path`.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<LogFile> {
        let path = path.into();
        let file = open_append(&path)?;
        Ok(LogFile {
            inner: Arc::new(Inner {
                path,
                file: Mutex::new(file),
                follows_sighup: AtomicBool::new(false),
            }),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Open the path again (a rotated file is left to its new name); on an error the
    /// old file is kept.
    pub fn reopen(&self) -> io::Result<()> {
        let new = open_append(&self.inner.path)?;
        *self.lock() = new;
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, File> {
        self.inner
            .file
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Reopen the file after each SIGHUP: the signal only sets a flag (no thread, no
    /// runtime needed), and the next line logged reopens the file first and notes it
    /// there. Installing the handler means SIGHUP no longer ends the process.
    pub fn reopen_on_sighup(&self) -> io::Result<()> {
        use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
        let action = SigAction::new(
            SigHandler::Handler(on_sighup),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe; no
        // other handler for SIGHUP is replaced (the daemons install none).
        #[allow(unsafe_code)]
        unsafe { sigaction(Signal::SIGHUP, &action) }.map_err(io::Error::from)?;
        self.inner.follows_sighup.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The file to write the next line to: reopened first when a SIGHUP came.
    fn current(&self) -> MutexGuard<'_, File> {
        let mut file = self.lock();
        if self.inner.follows_sighup.load(Ordering::Relaxed) && HANGUP.swap(false, Ordering::AcqRel)
        {
            match open_append(&self.inner.path) {
                Ok(new) => {
                    *file = new;
                    let _ = writeln!(file, "SIGHUP: reopened {}", self.inner.path.display());
                }
                Err(e) => {
                    let _ = writeln!(
                        file,
                        "SIGHUP: cannot reopen {}: {e}; still writing this file",
                        self.inner.path.display()
                    );
                }
            }
        }
        file
    }
}

/// Set by SIGHUP, taken by the next line logged.
static HANGUP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sighup(_: libc::c_int) {
    HANGUP.store(true, Ordering::Release);
}

/// One line's writer (each write takes the file's lock).
#[derive(Debug)]
pub struct LogFileWriter<'a>(&'a LogFile);

impl Write for LogFileWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.current().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // A whole formatted line under one lock.
        self.0.current().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogFile {
    type Writer = LogFileWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LogFileWriter(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsf_log_mask_maps_to_tracing_levels() {
        for (mask, level) in [
            ("LOG_ERR", "error"),
            ("LOG_CRIT", "error"),
            ("LOG_WARNING", "warn"),
            ("LOG_NOTICE", "warn"),
            ("LOG_INFO", "info"),
            ("LOG_DEBUG", "debug"),
            ("LOG_DEBUG2", "trace"),
        ] {
            assert_eq!(crate::log_mask_level(mask), level, "{mask}");
        }
    }

    #[test]
    fn a_rotated_file_is_left_and_a_new_one_written_after_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("lim.log.hostA");
        let f = LogFile::open(&path).expect("open");
        let mut w = tracing_subscriber::fmt::MakeWriter::make_writer(&f);
        w.write_all(b"one\n").expect("write");
        let rotated = dir.path().join("lim.log.hostA.1");
        std::fs::rename(&path, &rotated).expect("rename");
        w.write_all(b"two\n").expect("write");
        f.reopen().expect("reopen");
        let mut w = tracing_subscriber::fmt::MakeWriter::make_writer(&f);
        w.write_all(b"three\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(&rotated).expect("read"),
            "one\ntwo\n"
        );
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "three\n");
    }

    #[test]
    fn after_a_hangup_the_next_line_goes_to_a_new_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sbatchd.log.hostB");
        let f = LogFile::open(&path).expect("open");
        f.inner.follows_sighup.store(true, Ordering::Relaxed);
        let rotated = dir.path().join("old");
        tracing_subscriber::fmt::MakeWriter::make_writer(&f)
            .write_all(b"before\n")
            .expect("write");
        std::fs::rename(&path, &rotated).expect("rename");
        HANGUP.store(true, Ordering::Release);
        tracing_subscriber::fmt::MakeWriter::make_writer(&f)
            .write_all(b"after\n")
            .expect("write");
        assert_eq!(std::fs::read_to_string(&rotated).expect("read"), "before\n");
        let new = std::fs::read_to_string(&path).expect("read");
        assert!(
            new.starts_with("SIGHUP: reopened") && new.ends_with("after\n"),
            "{new}"
        );
    }
}
