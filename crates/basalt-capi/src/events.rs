//! `lsb_geteventrec`: records of `lsb.events` / `lsb.acct` as LSF's `struct eventRec`
//! (in progress).

/// This module's C structures, for the layout test.
pub fn layouts() -> Vec<crate::ffi::Layout> {
    Vec::new()
}
