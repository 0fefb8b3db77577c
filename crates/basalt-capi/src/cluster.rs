//! `lsb_init` and the base library's cluster calls: `ls_getclustername`,
//! `ls_getmastername`, `ls_getmyhostname`/`ls_gethostname`, `ls_gethosttype`,
//! `ls_gethostmodel`, `ls_gethostfactor`, `ls_isclustername`, `ls_readconfenv`.
//! Returned strings are the library's, valid until the same call is made again.

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::mem::{cstring, given};
use crate::session::{block_on, config, finish};
use std::ffi::CString;
use std::sync::Mutex;

/// A returned string's storage, one per function.
struct Slot(Mutex<Option<CString>>);

impl Slot {
    const fn new() -> Slot {
        Slot(Mutex::new(None))
    }

    fn put(&self, s: &str) -> *mut libc::c_char {
        match self.0.lock() {
            Ok(mut g) => g.insert(cstring(s)).as_ptr() as *mut libc::c_char,
            Err(_) => std::ptr::null_mut(),
        }
    }
}

static CLUSTER: Slot = Slot::new();
static MASTER: Slot = Slot::new();
static MYHOST: Slot = Slot::new();
static HOSTTYPE: Slot = Slot::new();
static HOSTMODEL: Slot = Slot::new();
static FACTOR: Mutex<f32> = Mutex::new(0.0);

/// `int lsb_init(char *appName)`: read the configuration (`LSF_ENVDIR/lsf.conf` and
/// the cluster file). No daemon needs to run. 0, or -1 (`LSBE_LSLIB`, `lserrno` saying
/// what could not be read).
///
/// # Safety
/// `app` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_init(_app: *const libc::c_char) -> libc::c_int {
    finish(crate::session::init().map(|_| 0), -1)
}

fn string_call(slot: &Slot, r: Result<String, Fail>) -> *mut libc::c_char {
    let r = r.map(|s| slot.put(&s));
    match r {
        Ok(p) => {
            crate::errno::set_base(LSE_NO_ERR, "");
            p
        }
        Err(f) => {
            f.record();
            std::ptr::null_mut()
        }
    }
}

/// `char *ls_getclustername(void)`.
#[unsafe(no_mangle)]
pub extern "C" fn ls_getclustername() -> *mut libc::c_char {
    string_call(&CLUSTER, config().map(|c| c.cluster_name.clone()))
}

/// `char *ls_getmastername(void)`: the master host, as the master LIM says (NULL with
/// `LSE_MASTR_UNKNW` when no LIM answers).
#[unsafe(no_mangle)]
pub extern "C" fn ls_getmastername() -> *mut libc::c_char {
    let r = config().and_then(|c| {
        let auth = basalt_cli::auth(&c);
        let timeout = crate::session::connect_timeout(&c);
        block_on(basalt_runtime::find_master_name(&c, timeout, &auth))?
            .map_err(|e| Fail::base(LSE_MASTR_UNKNW, e.to_string()))
    });
    string_call(&MASTER, r)
}

/// `char *ls_getmyhostname(void)`: this host's name as the cluster knows it.
#[unsafe(no_mangle)]
pub extern "C" fn ls_getmyhostname() -> *mut libc::c_char {
    string_call(&MYHOST, config().map(|c| basalt_cli::batch::local_host(&c)))
}

/// `char *ls_gethostname(void)`: as `ls_getmyhostname`.
#[unsafe(no_mangle)]
pub extern "C" fn ls_gethostname() -> *mut libc::c_char {
    ls_getmyhostname()
}

/// What the base library says of a host: its type, model and CPU factor, from the
/// cluster file's row; NULL names this host, which may be a client outside the cluster
/// file (then the cluster's defaults, as its LIM would report them). A named host the
/// cluster does not know is `LSE_BAD_HOST`.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn host_facts(name: *const libc::c_char) -> Result<(String, String, f32), Fail> {
    let c = config()?;
    // SAFETY: the caller's promise.
    let row = match unsafe { given(name) } {
        Some(n) => Some(
            c.cluster
                .host(&n)
                .ok_or_else(|| Fail::base(LSE_BAD_HOST, n.clone()))?,
        ),
        None => c.cluster.host(&basalt_cli::batch::local_host(&c)),
    };
    let host_type = c.type_of(row);
    let model = c.model_of(row, std::env::consts::ARCH);
    let factor = c.shared.cpu_factor(&model).unwrap_or(1.0) as f32;
    Ok((host_type, model, factor))
}

/// `char *ls_gethosttype(char *hostname)` (NULL: this host).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_gethosttype(name: *const libc::c_char) -> *mut libc::c_char {
    // SAFETY: passed on.
    string_call(&HOSTTYPE, unsafe { host_facts(name) }.map(|f| f.0))
}

/// `char *ls_gethostmodel(char *hostname)` (NULL: this host).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_gethostmodel(name: *const libc::c_char) -> *mut libc::c_char {
    // SAFETY: passed on.
    string_call(&HOSTMODEL, unsafe { host_facts(name) }.map(|f| f.1))
}

/// `float *ls_gethostfactor(char *hostname)`: the CPU factor of the host's model
/// (lsf.shared's HostModel table; 1.0 for a model it does not list).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_gethostfactor(name: *const libc::c_char) -> *mut f32 {
    // SAFETY: passed on.
    let r = unsafe { host_facts(name) }.map(|f| f.2);
    match (r, FACTOR.lock()) {
        (Ok(f), Ok(mut g)) => {
            *g = f;
            crate::errno::set_base(LSE_NO_ERR, "");
            &mut *g as *mut f32
        }
        (Err(f), _) => {
            f.record();
            std::ptr::null_mut()
        }
        (Ok(_), Err(_)) => std::ptr::null_mut(),
    }
}

/// `int ls_isclustername(char *name)`: 1 when `name` is this cluster's name.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_isclustername(name: *const libc::c_char) -> libc::c_int {
    // SAFETY: the caller's promise.
    let name = unsafe { given(name) };
    match config() {
        Ok(c) => i32::from(name.is_some_and(|n| n == c.cluster_name)),
        Err(f) => {
            f.record();
            0
        }
    }
}

/// `int ls_readconfenv(struct config_param *paramList, char *confPath)`: for each
/// parameter (the list ends with a NULL `paramName`), its value in `confPath/lsf.conf`
/// (NULL: `LSF_ENVDIR`, else `/etc`) as a `malloc`'ed string the caller frees; a
/// parameter the file does not set keeps its `paramValue`. 0, or -1 (`LSE_LSFCONF`:
/// the file cannot be read; `LSE_CONF_SYNTAX`: a malformed line).
///
/// # Safety
/// `params` points to an array ending with a NULL `paramName`; `path` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_readconfenv(
    params: *mut ffi::config_param,
    path: *const libc::c_char,
) -> libc::c_int {
    // SAFETY: the caller's promise.
    let dir = unsafe { given(path) }
        .map(std::path::PathBuf::from)
        .unwrap_or_else(basalt_runtime::envdir);
    let file = dir.join("lsf.conf");
    let r = std::fs::read_to_string(&file)
        .map_err(|e| Fail::base(LSE_LSFCONF, format!("{}: {e}", file.display())))
        .and_then(|text| {
            basalt_config::lsf_conf::parse_file(&file, &text)
                .map_err(|e| Fail::base(LSE_CONF_SYNTAX, e.to_string()))
        });
    let conf = match r {
        Ok(c) => c,
        Err(f) => {
            f.record();
            return -1;
        }
    };
    if params.is_null() {
        crate::errno::set_base(LSE_NO_ERR, "");
        return 0;
    }
    let mut i = 0;
    loop {
        // SAFETY: the array ends with a NULL paramName, which stops the loop.
        let p = unsafe { &mut *params.add(i) };
        // SAFETY: paramName is NULL or a string.
        let Some(name) = (unsafe { crate::mem::opt_str(p.paramName) }) else {
            break;
        };
        if let Some(v) = conf.get(&name) {
            let c = cstring(v);
            // SAFETY: strdup of a valid C string; the caller owns the copy.
            p.paramValue = unsafe { libc::strdup(c.as_ptr()) };
        }
        i += 1;
    }
    crate::errno::set_base(LSE_NO_ERR, "");
    0
}
