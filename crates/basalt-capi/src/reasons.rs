//! Texts for programs that print jobs as `bjobs` does: `lsb_jobid2str` (`103`,
//! `103[4]`), `lsb_pendreason` (the pending reasons of a `jobInfoEnt`'s `reasonTb`, one
//! line each, host-level reasons counted: ` Not specified in job submission: 2
//! hosts;`) and `lsb_suspreason` (the suspending reason of `reasons`/`subreasons`).
//! Each returns library-owned text, valid until the same function is called again.
//!
//! `reasonTb` as `lsb_readjobinfo` fills it: one entry per reason, and per host for a
//! host-level reason, the code in the low 16 bits. A load-index or reservation reason
//! names its index from `ld` when given (LSF's `loadIndexLog`), else as mbatchd named it
//! when the job was read.

use crate::ffi;
use basalt_proto::mbatchd::{JobInfo, PendReason};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;

static JOBID: Mutex<Option<CString>> = Mutex::new(None);
static PEND: Mutex<Option<CString>> = Mutex::new(None);
static SUSP: Mutex<Option<CString>> = Mutex::new(None);
/// The index or resource a load / reservation reason code names, as mbatchd said.
static DETAILS: Mutex<Option<HashMap<u32, String>>> = Mutex::new(None);

fn put(slot: &Mutex<Option<CString>>, text: &str) -> *mut libc::c_char {
    match slot.lock() {
        Ok(mut g) => g.insert(crate::mem::cstring(text)).as_ptr() as *mut libc::c_char,
        Err(_) => std::ptr::null_mut(),
    }
}

/// `reasonTb` of a job, remembering what its load reasons name.
pub fn reason_table(j: &JobInfo) -> Vec<i32> {
    let mut out = Vec::new();
    for r in &j.pend_reasons {
        if !r.detail.is_empty()
            && let Ok(mut g) = DETAILS.lock()
        {
            g.get_or_insert_default().insert(r.code, r.detail.clone());
        }
        let code = (r.code & 0xffff) as i32;
        let n = if basalt_core::job::pend_reason_is_host(r.code) {
            (r.num_hosts as usize).max(r.hosts.len()).max(1)
        } else {
            1
        };
        out.extend(std::iter::repeat_n(code, n));
    }
    out
}

/// `char *lsb_jobid2str(LS_LONG_INT jobId)`.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_jobid2str(job_id: i64) -> *mut libc::c_char {
    let r = crate::jobinfo::job_ref(job_id);
    let text = if r.has_idx {
        format!("{}[{}]", r.job_id, r.idx)
    } else {
        r.job_id.to_string()
    };
    put(&JOBID, &text)
}

/// The name `ld` gives a load or reservation code, if any.
///
/// # Safety
/// `ld` is NULL or a valid `loadIndexLog`.
unsafe fn ld_name(ld: *const ffi::loadIndexLog, code: u32) -> Option<String> {
    use basalt_core::job::pend::{LOAD_BASE, RESERVE_BASE, RESERVE_END};
    // SAFETY: the caller's promise.
    let ld = unsafe { ld.as_ref() }?;
    let i = if (RESERVE_BASE..RESERVE_END).contains(&code) {
        code - RESERVE_BASE
    } else {
        code.checked_sub(LOAD_BASE)
            .filter(|_| code < RESERVE_BASE)?
    } as usize;
    if ld.name.is_null() || i >= ld.nIdx.max(0) as usize {
        return None;
    }
    // SAFETY: nIdx names.
    unsafe { crate::mem::opt_str(*ld.name.add(i)) }
}

/// `char *lsb_pendreason(int numReasons, int *rsTb, struct jobInfoHead *jInfoH,
/// struct loadIndexLog *ld, int clusterId)`: the pending reasons, one line each.
///
/// # Safety
/// `rs` has `n` entries; `ld` is NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_pendreason(
    n: libc::c_int,
    rs: *const libc::c_int,
    _head: *const ffi::jobInfoHead,
    ld: *const ffi::loadIndexLog,
    _cluster: libc::c_int,
) -> *mut libc::c_char {
    let codes: &[i32] = if rs.is_null() || n <= 0 {
        &[]
    } else {
        // SAFETY: n entries.
        unsafe { std::slice::from_raw_parts(rs, n as usize) }
    };
    // Group: each code once, in order, host-level ones counted.
    let mut reasons: Vec<PendReason> = Vec::new();
    for c in codes {
        let code = (*c as u32) & 0xffff;
        match reasons.iter_mut().find(|r| r.code == code) {
            Some(r) => r.num_hosts += 1,
            None => {
                // SAFETY: the caller's promise on ld.
                let detail = unsafe { ld_name(ld, code) }
                    .or_else(|| {
                        DETAILS
                            .lock()
                            .ok()
                            .and_then(|g| g.as_ref().and_then(|m| m.get(&code).cloned()))
                    })
                    .unwrap_or_default();
                reasons.push(PendReason {
                    code,
                    hosts: Vec::new(),
                    detail,
                    num_hosts: u32::from(basalt_core::job::pend_reason_is_host(code)),
                });
            }
        }
    }
    let job = JobInfo {
        pend_reasons: reasons,
        ..Default::default()
    };
    put(
        &PEND,
        &basalt_cli::batch::bjobs::pend_reason_lines(&job, false),
    )
}

/// `char *lsb_suspreason(int reasons, int subreasons, struct loadIndexLog *ld)`: the
/// suspending reason, one line.
///
/// # Safety
/// `ld` is NULL or valid (not needed: the texts name the built-in indices).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_suspreason(
    reasons: libc::c_int,
    subreasons: libc::c_int,
    _ld: *const ffi::loadIndexLog,
) -> *mut libc::c_char {
    let text = format!(
        "{}\n",
        basalt_core::job::susp_reason_text(reasons as u32, subreasons as u32)
    );
    put(&SUSP, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: *mut libc::c_char) -> String {
        // SAFETY: a string this module returned.
        unsafe { crate::mem::opt_str(p) }.unwrap_or_default()
    }

    #[test]
    fn job_ids_are_written_as_bjobs_writes_them() {
        assert_eq!(text(lsb_jobid2str(103)), "103");
        assert_eq!(text(lsb_jobid2str((4i64 << 32) | 103)), "103[4]");
    }

    #[test]
    fn host_level_reasons_are_counted_and_others_listed_once() {
        use basalt_core::job::pend;
        let j = JobInfo {
            pend_reasons: vec![
                PendReason {
                    code: pend::LOAD_BASE + 1,
                    num_hosts: 2,
                    ..Default::default()
                },
                PendReason {
                    code: 1322,
                    num_hosts: 3,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let tb = reason_table(&j);
        assert_eq!(tb.len(), 5, "{tb:?}");
        // SAFETY: tb has tb.len() entries; no ld.
        let t = text(unsafe {
            lsb_pendreason(
                tb.len() as i32,
                tb.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        });
        assert_eq!(
            t,
            basalt_cli::batch::bjobs::pend_reason_lines(&j, false),
            "the same lines bjobs -p prints"
        );
        assert!(t.contains(": 2 hosts;") && t.contains(": 3 hosts;"), "{t}");
    }

    #[test]
    fn a_load_reason_takes_its_index_name_from_ld() {
        let name = crate::mem::cstring("gpu_util");
        let mut names = vec![std::ptr::null_mut::<libc::c_char>(); 12];
        names[11] = name.as_ptr() as *mut libc::c_char;
        let ld = ffi::loadIndexLog {
            nIdx: 12,
            name: names.as_mut_ptr(),
        };
        let tb = [(basalt_core::job::pend::LOAD_BASE + 11) as i32];
        // SAFETY: one entry; ld valid.
        let t = text(unsafe { lsb_pendreason(1, tb.as_ptr(), std::ptr::null(), &ld, 0) });
        assert!(t.contains("(gpu_util)"), "{t}");
    }

    #[test]
    fn the_suspending_reason_is_the_bjobs_text() {
        use basalt_core::job::susp::USER_STOP;
        // SAFETY: no ld.
        let t = text(unsafe { lsb_suspreason(USER_STOP as i32, 0, std::ptr::null()) });
        assert_eq!(t, " The job was suspended by user;\n");
    }
}
