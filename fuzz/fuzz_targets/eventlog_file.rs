//! Whole files: the bytes as `lsb.events` and `lsb.acct`, opened by `EventLog::open`,
//! `EventReader`, `read_acct` and `AcctLog::open` (see `basalt_fuzz::check_files`).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One directory for the whole run, on tmpfs when there is one (the appenders fsync).
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let d = tempfile::Builder::new()
            .prefix("basalt-fuzz-eventlog-")
            .tempdir_in(base)
            .expect("cannot create a temporary directory");
        d.keep()
    })
}

fuzz_target!(|data: &[u8]| {
    basalt_fuzz::check_files(dir(), data);
});
