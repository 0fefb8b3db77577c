//! Test directories: removed when the test passes, kept (and their path printed)
//! when it fails.

use anyhow::Result;
use std::path::{Path, PathBuf};

/// A test directory: removed on success, kept and printed on failure.
#[derive(Debug)]
pub struct TestDir {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl TestDir {
    pub fn new(prefix: &str) -> Result<TestDir> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("basalt-{prefix}-"))
            .tempdir()?;
        let path = dir.path().to_path_buf();
        Ok(TestDir {
            dir: Some(dir),
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keep the directory (and print its path) now: a cluster that failed to start.
    pub fn keep(&mut self) {
        if let Some(dir) = self.dir.take() {
            let kept = dir.keep();
            eprintln!("test state kept in {}", kept.display());
        }
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(dir) = self.dir.take()
        {
            let kept = dir.keep();
            eprintln!("test state kept in {}", kept.display());
        }
    }
}
