//! Batch information and administration: `lsb_queueinfo`, `lsb_hostinfo`,
//! `lsb_hostinfo_ex`, `lsb_hostgrpinfo`, `lsb_usergrpinfo`, `lsb_userinfo`,
//! `lsb_appInfo`, `lsb_parameterinfo`, `lsb_reconfig`, `lsb_hostcontrol`,
//! `lsb_queuecontrol` (in progress).

/// This module's C structures, for the layout test.
pub fn layouts() -> Vec<crate::ffi::Layout> {
    Vec::new()
}
