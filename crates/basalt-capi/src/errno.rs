//! `lsberrno` and `lserrno`: the calling thread's last error (the headers make them
//! `(*lsb_errno())` and `(*ls_errno())`, so each thread has its own, as LSF's
//! thread-safe calls do), also copied to the exported ints `lsberrno`/`lserrno` for
//! programs that look a symbol up (`ctypes.c_int.in_dll`); `lsb_sysmsg`, `ls_sysmsg`,
//! `lsb_perror`, `ls_perror` with LSF's texts (`errtab`).

#![allow(non_upper_case_globals)]

use crate::consts::*;
use crate::errtab;
use libc::{c_char, c_int};
use std::cell::{Cell, RefCell};
use std::ffi::CString;
use std::sync::atomic::{AtomicI32, Ordering};

/// The last batch-library error of any thread (for `dlsym`/`ctypes` users).
#[unsafe(no_mangle)]
pub static lsberrno: AtomicI32 = AtomicI32::new(0);
/// The last base-library error of any thread.
#[unsafe(no_mangle)]
pub static lserrno: AtomicI32 = AtomicI32::new(0);

thread_local! {
    static LSB: Cell<c_int> = const { Cell::new(0) };
    static LS: Cell<c_int> = const { Cell::new(0) };
    /// What Basalt said beyond the code (mbatchd's reason), per domain.
    static LSB_DETAIL: RefCell<String> = const { RefCell::new(String::new()) };
    static LS_DETAIL: RefCell<String> = const { RefCell::new(String::new()) };
    static LSB_MSG: RefCell<CString> = RefCell::new(CString::default());
    static LS_MSG: RefCell<CString> = RefCell::new(CString::default());
}

/// Why a call failed: an `LSBE_*` code (batch) or an `LSE_*` code (base), and Basalt's
/// own words when they say more than LSF's text for the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    Batch(i32, String),
    Base(i32, String),
}

impl Fail {
    pub fn batch(code: i32, detail: impl Into<String>) -> Fail {
        Fail::Batch(code, detail.into())
    }

    pub fn base(code: i32, detail: impl Into<String>) -> Fail {
        Fail::Base(code, detail.into())
    }

    /// Record it as the thread's error. A base error seen by a batch call is also
    /// `LSBE_LSLIB` ("Failed in an LSF library call"), as LSF reports it.
    pub fn record(&self) {
        match self {
            Fail::Batch(c, d) => set_batch(*c, d),
            Fail::Base(c, d) => {
                set_base(*c, d);
                set_batch(LSBE_LSLIB, "");
            }
        }
    }

    /// A mbatchd refusal: its text is LSF's message for the code (matched in the
    /// table), or one of Basalt's words for one, else the gRPC code decides.
    pub fn from_status(s: &tonic::Status) -> Fail {
        let text = s.message().trim().trim_end_matches('.');
        if let Some(e) = errtab::LSBE.iter().find(|e| e.message == text) {
            return Fail::batch(e.value, "");
        }
        if let Some((_, code)) = ALIASES.iter().find(|(m, _)| text.starts_with(m)) {
            return Fail::batch(*code, text);
        }
        use tonic::Code;
        let code = match s.code() {
            Code::PermissionDenied | Code::Unauthenticated => LSBE_PERMISSION,
            Code::NotFound => LSBE_NO_JOB,
            Code::InvalidArgument | Code::OutOfRange => LSBE_BAD_ARG,
            Code::DeadlineExceeded => LSBE_CONN_TIMEOUT,
            Code::Unavailable => LSBE_CONN_REFUSED,
            Code::Unimplemented => LSBE_PROTOCOL,
            _ => LSBE_MBATCHD,
        };
        Fail::batch(code, text)
    }
}

/// Basalt's refusal texts that differ from LSF's message for the same code.
const ALIASES: &[(&str, i32)] = &[
    ("Queue does not exist", LSBE_BAD_QUEUE),
    ("Queue has been closed", LSBE_QUEUE_CLOSED),
    (
        "Bad host name, host group name or cluster name",
        LSBE_BAD_HOST,
    ),
    ("User permission denied", LSBE_PERMISSION),
    ("No matching job found", LSBE_NO_JOB),
    ("Job has already finished", LSBE_JOB_FINISH),
    ("Job has already started", LSBE_JOB_STARTED),
    ("Job has not started yet", LSBE_NOT_STARTED),
    ("Pending job threshold reached", LSBE_PJOB_LIMIT),
    ("User's pending job threshold reached", LSBE_PJOB_LIMIT),
    ("Bad resource requirement syntax", LSBE_BAD_RESREQ),
    ("Bad job dependency", LSBE_DEPEND_SYNTAX),
    ("Request aborted by esub", LSBE_ESUB_ABORT),
];

pub fn set_batch(code: i32, detail: &str) {
    LSB.with(|c| c.set(code));
    LSB_DETAIL.with(|d| detail.clone_into(&mut d.borrow_mut()));
    lsberrno.store(code, Ordering::Relaxed);
}

pub fn set_base(code: i32, detail: &str) {
    LS.with(|c| c.set(code));
    LS_DETAIL.with(|d| detail.clone_into(&mut d.borrow_mut()));
    lserrno.store(code, Ordering::Relaxed);
}

/// Clear both (a call that succeeds leaves `LSBE_NO_ERROR`).
pub fn clear() {
    set_batch(LSBE_NO_ERROR, "");
}

/// The message for a code and detail: LSF's text, then Basalt's words when they add.
fn text(message: Option<&str>, what: &str, code: i32, detail: &str) -> String {
    let base = message.map_or_else(|| format!("Unknown {what} error {code}"), str::to_owned);
    if detail.is_empty() || detail == base {
        base
    } else {
        format!("{base}: {detail}")
    }
}

/// `lsb_sysmsg()`'s text for the thread's `lsberrno`.
pub fn batch_text() -> String {
    let code = LSB.with(Cell::get);
    let detail = LSB_DETAIL.with(|d| d.borrow().clone());
    let mut t = text(errtab::lsbe_message(code), "batch", code, &detail);
    if code == LSBE_LSLIB && detail.is_empty() {
        t = format!("{t}: {}", base_text());
    }
    t
}

/// `ls_sysmsg()`'s text for the thread's `lserrno`.
pub fn base_text() -> String {
    let code = LS.with(Cell::get);
    let detail = LS_DETAIL.with(|d| d.borrow().clone());
    text(errtab::lse_message(code), "LSF", code, &detail)
}

/// `int *lsb_errno(void)`: the calling thread's `lsberrno`.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_errno() -> *mut c_int {
    LSB.with(|c| c.as_ptr())
}

/// `int *ls_errno(void)`: the calling thread's `lserrno`.
#[unsafe(no_mangle)]
pub extern "C" fn ls_errno() -> *mut c_int {
    LS.with(|c| c.as_ptr())
}

/// `char *lsb_sysmsg(void)`: valid until the thread's next `lsb_sysmsg`.
#[unsafe(no_mangle)]
pub extern "C" fn lsb_sysmsg() -> *mut c_char {
    let t = crate::mem::cstring(&batch_text());
    LSB_MSG.with(|m| {
        *m.borrow_mut() = t;
        m.borrow().as_ptr() as *mut c_char
    })
}

/// `char *ls_sysmsg(void)`: valid until the thread's next `ls_sysmsg`.
#[unsafe(no_mangle)]
pub extern "C" fn ls_sysmsg() -> *mut c_char {
    let t = crate::mem::cstring(&base_text());
    LS_MSG.with(|m| {
        *m.borrow_mut() = t;
        m.borrow().as_ptr() as *mut c_char
    })
}

fn perror(usr: *const c_char, msg: String) {
    // SAFETY: LSF's contract: usrMsg is NULL or a string.
    let line = match unsafe { crate::mem::given(usr) } {
        Some(u) => format!("{u}: {msg}\n"),
        None => format!("{msg}\n"),
    };
    use std::io::Write;
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// `void lsb_perror(char *usrMsg)`: `usrMsg: message` on stderr.
///
/// # Safety
/// `usr` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_perror(usr: *const c_char) {
    perror(usr, batch_text());
}

/// `void ls_perror(char *usrMsg)`.
///
/// # Safety
/// `usr` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_perror(usr: *const c_char) {
    perror(usr, base_text());
}
