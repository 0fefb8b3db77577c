//! Unit tests of the history index.

use super::*;

#[test]
fn cache_names_are_stable_and_safe() {
    let a = fnv64(b"/var/lsf/work/basalt/logdir");
    assert_eq!(a, fnv64(b"/var/lsf/work/basalt/logdir"));
    assert_ne!(a, fnv64(b"/var/lsf/work/other/logdir"));
    // The FNV-1a test vector.
    assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
}

#[test]
fn local_filesystems_are_not_network_ones() {
    assert!(!on_network_fs(Path::new("/proc")));
    assert!(!on_network_fs(Path::new("/proc/self/does/not/exist")));
}
