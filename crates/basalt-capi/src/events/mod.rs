//! `lsb_geteventrec` and `lsb_geteventrecbyline`: the records of `lsb.events` and
//! `lsb.acct` as LSF's `struct eventRec`.
//!
//! Inputs: a C `FILE *` the caller opened on an event or accounting file (read with
//! libc's `getline` on that stream, never reopened by path), or one line of text.
//! Outputs: the record as LSF's `eventRec` (its `EVENT_*` type, version, time and the
//! union member of that type: `jobNewLog`, `jobStartLog`, `jobFinishLog`, ...), in
//! library-owned memory valid until the next call of the same function, and
//! `lsberrno`. Lines are parsed by `basalt-eventlog`, the reader `bhist`, `bacct` and
//! mbatchd's replay use ([`convert`] maps its records to LSF's structures).
//!
//! Every record type Basalt writes is represented: JOB_NEW, JOB_MODIFY, JOB_MODIFY2,
//! JOB_START, PRE_EXEC_START, JOB_START_ACCEPT, JOB_EXECUTE, JOB_STATUS, JOB_SIGNAL,
//! JOB_SWITCH, JOB_MOVE, JOB_REQUEUE, JOB_CLEAN, JOB_FORCE, MIG, CHKPNT, JOB_SIGACT,
//! JOB_FORWARD, JOB_ACCEPT, QUEUE_CTRL, HOST_CTRL, MBD_START, MBD_DIE, LOAD_INDEX,
//! LOG_SWITCH and (lsb.acct) JOB_FINISH; OpenLava's and volclava's records of these
//! types too.
//!
//! `lsb_geteventrec` (LSF's behaviour, with these choices):
//! * `*lineNum` is incremented for every line read, comment (`#`) and blank lines
//!   included, so it is the line number of the record returned, or of the line that
//!   failed.
//! * End of file: NULL, `LSBE_EOF`. An incomplete last line (no newline yet: a writer
//!   is in the middle of it, or crashed there) is not consumed: the stream is put back
//!   at its start and the call ends as at end of file, so a reader following a growing
//!   file gets the line whole on a later call (when the stream cannot seek, the partial
//!   line is read as it is).
//! * A line that is not a valid record: NULL, `LSBE_EVENT_FORMAT` (`lsb_sysmsg` names
//!   the line and field). A well-formed record of a type this library has no structure
//!   for (`UNFULFILL`, `JOB_MSG`, `SBD_JOB_STATUS`, a newer LSF's types): NULL,
//!   `LSBE_UNKNOWN_EVENT`, as LSF's library does for a type it does not know. Either way
//!   the line is consumed: the next call goes on with the next line.
//!
//! Not represented (no field of LSF's structures holds them): Basalt's `-cwd` value in
//! JOB_NEW/JOB_MODIFY2, the remote queue of JOB_FORWARD, the failure message of CHKPNT,
//! the fairshare history of LOG_SWITCH; `jobFinishLog.exitInfo` is `TERM_UNKNOWN` (the
//! termination reason is in the job's last JOB_STATUS, `jobStatusLog.exitInfo`).
//! `lsb_puteventrec` is not provided.

pub mod convert;
mod jobs;
pub mod structs;
#[cfg(test)]
mod tests;

use crate::consts::*;
use crate::errno::Fail;
use crate::mem::Held;
use libc::{c_char, c_int};
use std::sync::Mutex;
pub use structs::eventRec;

/// This module's C structures, for the layout test.
pub fn layouts() -> Vec<crate::ffi::Layout> {
    structs::layouts()
}

/// The record `lsb_geteventrec` returned last (LSF: one per process).
static RECORD: Mutex<Option<Held<eventRec>>> = Mutex::new(None);
/// What the strings of the last `lsb_geteventrecbyline` record point into.
static BY_LINE: Mutex<Option<Held<eventRec>>> = Mutex::new(None);

/// One line read from the stream, without its newline.
enum Line {
    Text(Vec<u8>),
    /// End of file (or an incomplete last line put back).
    End,
}

/// Read the next line of `fp` with `getline`.
///
/// # Safety
/// `fp` is an open `FILE *`.
unsafe fn read_line(fp: *mut libc::FILE) -> Result<Line, Fail> {
    let mut buf: *mut c_char = std::ptr::null_mut();
    let mut cap: libc::size_t = 0;
    // SAFETY: the caller's stream; getline allocates `buf`, freed below.
    let n = unsafe { libc::getline(&mut buf, &mut cap, fp) };
    let bytes = if n > 0 && !buf.is_null() {
        // SAFETY: getline stored n bytes at buf.
        unsafe { std::slice::from_raw_parts(buf as *const u8, n as usize) }.to_vec()
    } else {
        Vec::new()
    };
    // SAFETY: allocated by getline (or NULL).
    unsafe { libc::free(buf.cast()) };
    if n < 0 {
        // SAFETY: the caller's stream.
        if unsafe { libc::ferror(fp) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Fail::batch(LSBE_SYS_CALL, format!("reading the log: {e}")));
        }
        return Ok(Line::End);
    }
    match bytes.strip_suffix(b"\n") {
        Some(line) => Ok(Line::Text(line.to_vec())),
        None => {
            // SAFETY: the caller's stream; back to where the partial line began.
            let back = unsafe { libc::fseek(fp, -(n as libc::c_long), libc::SEEK_CUR) };
            if back == 0 {
                Ok(Line::End)
            } else {
                Ok(Line::Text(bytes))
            }
        }
    }
}

/// Parse one line: `Ok(None)` for a comment or blank line.
fn parse(line: &[u8]) -> Result<Option<Held<eventRec>>, Fail> {
    let text = String::from_utf8_lossy(line);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    match basalt_eventlog::parse_line(text) {
        Ok(None) => Ok(None),
        Ok(Some(rec)) => convert::event_rec(&rec).map(Some),
        Err(e) => Err(Fail::batch(LSBE_EVENT_FORMAT, e.to_string())),
    }
}

/// # Safety
/// `fp` is NULL or an open `FILE *`; `line_num` is NULL or points to an int.
unsafe fn next(fp: *mut libc::FILE, line_num: *mut c_int) -> Result<*mut eventRec, Fail> {
    let mut slot = RECORD
        .lock()
        .map_err(|_| Fail::batch(LSBE_SYS_CALL, "event record lock poisoned"))?;
    // The previous record is the caller's until this call (LSF frees it here).
    *slot = None;
    if fp.is_null() {
        return Err(Fail::batch(LSBE_BAD_ARG, "log_fp is NULL"));
    }
    // SAFETY: the caller's promise.
    let mut count = unsafe { line_num.as_mut() };
    loop {
        // SAFETY: the caller's stream.
        let line = match unsafe { read_line(fp) }? {
            Line::Text(l) => l,
            Line::End => return Err(Fail::batch(LSBE_EOF, "")),
        };
        let at = count.as_deref_mut().map(|n| {
            *n = n.saturating_add(1);
            *n
        });
        let place = |f: Fail| match (f, at) {
            (Fail::Batch(c, d), Some(n)) => Fail::batch(c, format!("line {n}: {d}")),
            (f, _) => f,
        };
        if let Some(held) = parse(&line).map_err(place)? {
            let held = slot.insert(held);
            return Ok(&mut *held.value as *mut eventRec);
        }
    }
}

/// `struct eventRec *lsb_geteventrec(FILE *log_fp, int *lineNum)`: the next record of
/// an open `lsb.events` or `lsb.acct` (see the module docs), or NULL with `lsberrno`.
///
/// # Safety
/// `log_fp` is NULL or an open `FILE *`; `lineNum` is NULL or points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_geteventrec(
    log_fp: *mut libc::FILE,
    line_num: *mut c_int,
) -> *mut eventRec {
    // SAFETY: passed on.
    let r = unsafe { next(log_fp, line_num) };
    crate::session::finish(r, std::ptr::null_mut())
}

/// # Safety
/// `line` is NULL or a NUL-terminated string; `out` is NULL or points to an eventRec.
unsafe fn by_line(line: *const c_char, out: *mut eventRec) -> Result<(), Fail> {
    let mut slot = BY_LINE
        .lock()
        .map_err(|_| Fail::batch(LSBE_SYS_CALL, "event record lock poisoned"))?;
    if line.is_null() || out.is_null() {
        return Err(Fail::batch(LSBE_BAD_ARG, "line or logRec is NULL"));
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::ffi::CStr::from_ptr(line) }.to_bytes();
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let held = parse(bytes)?
        .ok_or_else(|| Fail::batch(LSBE_EVENT_FORMAT, "a comment or blank line holds no record"))?;
    // SAFETY: `out` points to an eventRec (the caller's); the bytes copied are a
    // complete eventRec whose pointers stay valid while `slot` keeps the arena.
    unsafe { std::ptr::copy_nonoverlapping(&*held.value as *const eventRec, out, 1) };
    *slot = Some(held);
    Ok(())
}

/// `int lsb_geteventrecbyline(char *line, struct eventRec *logRec)`: one line of
/// `lsb.events`/`lsb.acct` into `*logRec`; its strings stay valid until the next call.
/// 0, or -1 with `lsberrno` (`LSBE_EVENT_FORMAT` for a comment line too, as LSF).
///
/// # Safety
/// `line` is NULL or a NUL-terminated string; `logRec` is NULL or points to an
/// eventRec.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_geteventrecbyline(line: *mut c_char, log_rec: *mut eventRec) -> c_int {
    // SAFETY: passed on.
    let r = unsafe { by_line(line, log_rec) };
    crate::session::finish(r.map(|()| 0), -1)
}
