//! A bundle of configuration files (`==> lsf.conf <==` …) loaded by `basalt_config::load`
//! and `load_lim` (see `basalt_fuzz::config`).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One directory for the whole run, on tmpfs when there is one.
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
            .prefix("basalt-fuzz-config-")
            .tempdir_in(base)
            .expect("cannot create a temporary directory");
        d.keep()
    })
}

fuzz_target!(|data: &[u8]| {
    basalt_fuzz::config::check_bundle(dir(), data);
});
