//! Strings in and out of C, and the memory behind what the library returns.
//!
//! LSF's rule: what a call returns (a `jobInfoEnt`, a host list, a message) lives in
//! library-owned storage that stays valid until the next call of the same kind. An
//! [`Arena`] owns everything one returned value points to; the caller's slot for that
//! kind (a `static`) keeps it until it is replaced.

use libc::{c_char, c_int};
use std::ffi::{CStr, CString};

/// A C string argument: `None` for NULL; not UTF-8 is taken lossily.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub unsafe fn opt_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller promises a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// [`opt_str`], with "" also `None` (LSF treats an empty name as not given).
///
/// # Safety
/// As [`opt_str`].
pub unsafe fn given(p: *const c_char) -> Option<String> {
    // SAFETY: passed on.
    unsafe { opt_str(p) }.filter(|s| !s.is_empty())
}

/// A C array of `n` strings (`char **`), NULLs skipped.
///
/// # Safety
/// `p` is NULL or points to `n` pointers, each NULL or a NUL-terminated string.
pub unsafe fn str_array(p: *const *mut c_char, n: c_int) -> Vec<String> {
    if p.is_null() || n <= 0 {
        return Vec::new();
    }
    (0..n as usize)
        // SAFETY: within the caller's `n` elements.
        .filter_map(|i| unsafe { opt_str(*p.add(i)) })
        .collect()
}

/// A NULL-terminated C array of strings (`argv`, `envp`).
///
/// # Safety
/// `p` is NULL or points to pointers ending with a NULL one.
pub unsafe fn null_terminated(p: *const *mut c_char) -> Vec<String> {
    let mut out = Vec::new();
    if p.is_null() {
        return out;
    }
    let mut i = 0;
    loop {
        // SAFETY: the array ends with a NULL pointer, which stops the loop.
        let s = unsafe { *p.add(i) };
        if s.is_null() {
            return out;
        }
        // SAFETY: a non-NULL element is a string.
        out.push(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned());
        i += 1;
    }
}

/// A C string for `s` (a NUL inside is cut there: C could not see past it anyway).
pub fn cstring(s: &str) -> CString {
    let cut = s.find('\0').map_or(s, |i| &s[..i]);
    CString::new(cut).unwrap_or_default()
}

/// Copy `s` into a fixed C array (`char hostName[64]`), cut to fit with its NUL.
pub fn fill(dst: &mut [c_char], s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(&bytes[..n]) {
        *d = *b as c_char;
    }
    if let Some(z) = dst.get_mut(n) {
        *z = 0;
    }
}

/// Owns the strings and arrays one returned value points to.
#[derive(Default)]
pub struct Arena {
    strings: Vec<CString>,
    ptr_arrays: Vec<Vec<*mut c_char>>,
    ints: Vec<Vec<c_int>>,
    floats: Vec<Vec<f32>>,
    longs: Vec<Vec<i64>>,
    others: Vec<Box<dyn std::any::Any>>,
}

// SAFETY: the raw pointers point into the arena's own heap blocks, which move with it;
// nothing else holds them mutably. Slots holding arenas are behind a Mutex.
unsafe impl Send for Arena {}

impl Arena {
    /// A C string owned by the arena.
    pub fn s(&mut self, s: &str) -> *mut c_char {
        let c = cstring(s);
        let p = c.as_ptr() as *mut c_char;
        self.strings.push(c);
        p
    }

    /// [`Arena::s`], NULL for "".
    pub fn s_or_null(&mut self, s: &str) -> *mut c_char {
        if s.is_empty() {
            std::ptr::null_mut()
        } else {
            self.s(s)
        }
    }

    /// A `char **` of the strings (followed by a NULL, which C callers may rely on).
    pub fn strv<S: AsRef<str>>(&mut self, items: &[S]) -> *mut *mut c_char {
        let mut v: Vec<*mut c_char> = items.iter().map(|x| self.s(x.as_ref())).collect();
        v.push(std::ptr::null_mut());
        let p = v.as_mut_ptr();
        self.ptr_arrays.push(v);
        p
    }

    /// An `int *` of the values (NULL when empty).
    pub fn ints(&mut self, v: Vec<c_int>) -> *mut c_int {
        if v.is_empty() {
            return std::ptr::null_mut();
        }
        let mut v = v;
        let p = v.as_mut_ptr();
        self.ints.push(v);
        p
    }

    /// A `float *` of the values (NULL when empty).
    pub fn floats(&mut self, v: Vec<f32>) -> *mut f32 {
        if v.is_empty() {
            return std::ptr::null_mut();
        }
        let mut v = v;
        let p = v.as_mut_ptr();
        self.floats.push(v);
        p
    }

    /// Keep `v`'s heap block alive with the arena (a pointer into it was handed out).
    pub fn keep<T: 'static>(&mut self, v: Vec<T>) {
        self.others.push(Box::new(v));
    }

    /// A `LS_LONG_INT *` of the values (NULL when empty).
    pub fn longs(&mut self, v: Vec<i64>) -> *mut i64 {
        if v.is_empty() {
            return std::ptr::null_mut();
        }
        let mut v = v;
        let p = v.as_mut_ptr();
        self.longs.push(v);
        p
    }
}

/// A returned value and the arena it points into, kept until the next call of its kind.
pub struct Held<T> {
    pub value: Box<T>,
    pub arena: Arena,
}

// SAFETY: as for Arena: `value` points only into `arena` (or to static data).
unsafe impl<T> Send for Held<T> {}

/// Zeroed C structure (all its fields are integers, floats or pointers: zero is their
/// "unset" — NULL, 0).
pub fn zeroed<T: ZeroOk>() -> Box<T> {
    // SAFETY: T: ZeroOk promises all-zero bytes are a valid T.
    Box::new(unsafe { std::mem::zeroed() })
}

/// Structures made of integers, floats, pointers and arrays of them only.
///
/// # Safety
/// An all-zero bit pattern must be a valid value of the type.
pub unsafe trait ZeroOk {}

macro_rules! zero_ok {
    ($($t:ident),*) => { $(
        // SAFETY: integers, floats, raw pointers and arrays of them only.
        unsafe impl ZeroOk for crate::ffi::$t {}
    )* };
}
zero_ok!(
    hostInfo,
    hostLoad,
    resItem,
    lsInfo,
    submit,
    submitReply,
    jRusage,
    jobInfoEnt,
    jobInfoHead
);
