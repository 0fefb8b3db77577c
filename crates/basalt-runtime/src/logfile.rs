//! The daemons' log file in `LSF_LOGDIR` (`<daemon>.log.<host>`, LSF's names), reopened
//! on SIGHUP so that logrotate (or an administrator's `mv`) can rotate it: after the
//! signal, lines go to a new file at the same path.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
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

    /// Reopen the file on every SIGHUP, on a thread of its own (the daemons' runtime
    /// may not exist yet). Installing the handler means SIGHUP no longer ends the
    /// process.
    pub fn reopen_on_sighup(&self) -> io::Result<()> {
        let me = self.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        // Register the handler now, so a SIGHUP right after start-up is not fatal.
        let mut hup = {
            let _g = rt.enter();
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?
        };
        std::thread::Builder::new()
            .name("log-reopen".into())
            .spawn(move || {
                rt.block_on(async move {
                    while hup.recv().await.is_some() {
                        match me.reopen() {
                            Ok(()) => tracing::info!("SIGHUP: reopened {}", me.path().display()),
                            Err(e) => tracing::error!(
                                "SIGHUP: cannot reopen {}: {e}; still writing the old file",
                                me.path().display()
                            ),
                        }
                    }
                });
            })?;
        Ok(())
    }
}

/// One line's writer (each write takes the file's lock).
#[derive(Debug)]
pub struct LogFileWriter<'a>(&'a LogFile);

impl Write for LogFileWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // A whole formatted line under one lock.
        self.0.lock().write_all(buf)
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
}
