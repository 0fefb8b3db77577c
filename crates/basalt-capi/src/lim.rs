//! The LIM's information: `ls_info`, `ls_gethostinfo`, `ls_load`, `ls_loadofhosts`
//! (in progress).

/// This module's C structures, for the layout test.
pub fn layouts() -> Vec<crate::ffi::Layout> {
    Vec::new()
}
