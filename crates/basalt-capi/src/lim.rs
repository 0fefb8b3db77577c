//! The LIM's information: `ls_info` (the resource table, host types and models of
//! lsf.shared), `ls_gethostinfo` (each host's static facts, as `lshosts`), `ls_load`
//! and `ls_loadofhosts` (each host's status and load indices, as `lsload`), asked of
//! the master LIM the way those commands ask it, with their `-R` selection.
//!
//! Load indices (`hostLoad.li[]`, `hostInfo.busyThreshold[]`) are in `ls_info`'s
//! order: the 11 built-in ones (`R15S` ... `MEM`), then the cluster's external dynamic
//! numeric resources (ELIM indices) in lsf.shared's order; a value a host does not
//! report is `INFINIT_LOAD`. Options with an effect: `OK_ONLY` (hosts whose status is
//! ok), `NORMALIZE` / `EFFECTIVE` (normalized / effective run queues), `EXACT` (fewer
//! hosts than `*numhosts` asked is `LSE_NO_HOST`). `LOCALITY`, `DFT_FROMTYPE`,
//! `IGNORE_RES` and `LOCAL_ONLY` change nothing here (no host order is promised;
//! RES's state does not select hosts); `ALL_CLUSTERS` answers for this cluster.

#![allow(non_snake_case)]

use crate::consts::*;
use crate::errno::Fail;
use crate::ffi;
use crate::mem::{Arena, Held, fill, given, str_array, zeroed};
use basalt_config::Config;
use basalt_config::shared::ResourceKind;
use basalt_core::LoadIndex;
use basalt_proto::lim::{HostRecord, HostStatus, HostsReply, HostsRequest};
use std::sync::Mutex;

/// This module's C structures, for the layout test (they are declared with the rest
/// of `lsf.h`'s in `ffi`).
pub fn layouts() -> Vec<crate::ffi::Layout> {
    Vec::new()
}

const INFINIT_LOAD: f32 = 0x7fff_ffff as f32;

/// The load indices in `ls_info`'s order: built-ins, then external dynamic numerics.
fn index_names(config: &Config) -> Vec<String> {
    let mut v: Vec<String> = basalt_core::BUILTIN_INDICES
        .iter()
        .map(|i| i.name().to_owned())
        .collect();
    v.extend(external_indices(config));
    v
}

fn external_indices(config: &Config) -> Vec<String> {
    config
        .shared
        .resources
        .iter()
        .filter(|r| r.kind == ResourceKind::Numeric && r.interval.is_some())
        .map(|r| r.name.clone())
        .collect()
}

/// The master LIM's host table (all hosts, or `hosts`).
fn query(config: &Config, hosts: Vec<String>) -> Result<HostsReply, Fail> {
    let timeout = crate::session::connect_timeout(config);
    crate::session::block_on(async {
        let auth = basalt_cli::auth(config);
        let mut m = basalt_runtime::find_master(config, timeout, &auth)
            .await
            .map_err(|e| Fail::base(LSE_MASTR_UNKNW, e.to_string()))?;
        m.client
            .hosts(HostsRequest {
                hosts,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner())
            .map_err(|s| Fail::base(LSE_MSG_SYS, s.message().to_owned()))
    })?
}

/// The hosts the call asks for: `hostlist` (checked against the cluster), selected by
/// `resreq` (LSF's select syntax), `OK_ONLY`, and at most `*numhosts` (0: all; with
/// `EXACT`, fewer is an error).
fn hosts_for(
    config: &Config,
    names: Vec<String>,
    resreq: Option<String>,
    wanted: i32,
    options: i32,
) -> Result<HostsReply, Fail> {
    for h in &names {
        if basalt_runtime::canonical_host(config, h).is_none() {
            return Err(Fail::base(LSE_BAD_HOST, h.clone()));
        }
    }
    let mut reply = query(config, names)?;
    if let Some(r) = resreq {
        let externals = basalt_cli::lim_cmds::external_indices(&reply);
        let select = basalt_cli::lim_res::Select::parse(&r, config, &externals)
            .map_err(|_| Fail::base(LSE_BAD_EXP, r.clone()))?;
        let local = basalt_cli::batch::local_host(config);
        basalt_cli::lim_cmds::retain_selected(config, &mut reply, &select, &local);
    }
    if options & OK_ONLY != 0 {
        reply
            .hosts
            .retain(|h| HostStatus::try_from(h.status).ok() == Some(HostStatus::Ok));
    }
    if wanted > 0 {
        let wanted = wanted as usize;
        if reply.hosts.len() < wanted && options & EXACT != 0 {
            return Err(Fail::base(LSE_NO_HOST, ""));
        }
        reply.hosts.truncate(wanted);
    }
    if reply.hosts.is_empty() {
        return Err(Fail::base(LSE_NO_HOST, ""));
    }
    Ok(reply)
}

/// LSF's status word of a host record (`status[0]`).
fn status_word(h: &HostRecord) -> i32 {
    match HostStatus::try_from(h.status).unwrap_or(HostStatus::Unspecified) {
        HostStatus::Ok => 0,
        HostStatus::Busy => LIM_BUSY,
        HostStatus::LockedUser => LIM_LOCKEDU,
        HostStatus::LockedWindow => LIM_LOCKEDW,
        HostStatus::Unavail | HostStatus::Unknown | HostStatus::Unspecified => LIM_UNAVAIL,
    }
}

/// One `hostLoad`: status word, then a busy bit per index in the words after it.
fn host_load(
    config: &Config,
    h: &HostRecord,
    indices: &[String],
    options: i32,
    a: &mut Arena,
) -> ffi::hostLoad {
    let f = basalt_cli::lim_cmds::facts(config, h);
    let mut out = ffi::hostLoad {
        hostName: [0; ffi::MAXHOSTNAMELEN],
        status: std::ptr::null_mut(),
        li: std::ptr::null_mut(),
    };
    fill(&mut out.hostName, &f.name);
    let mut status = vec![0i32; 1 + indices.len().div_ceil(32)];
    status[0] = status_word(h);
    for (i, name) in indices.iter().enumerate() {
        if h.busy.iter().any(|b| b == name) {
            status[1 + i / 32] |= 1 << (i % 32);
        }
    }
    let unavail = basalt_cli::lim_cmds::is_unavail(h);
    let (ncpus, cpuf) = (f.ncpus.unwrap_or(1), f.cpuf);
    let li: Vec<f32> = indices
        .iter()
        .map(|name| {
            let v = (!unavail)
                .then(|| h.load.iter().find(|l| &l.name == name).map(|l| l.value))
                .flatten();
            match (v, LoadIndex::from_name(name)) {
                (None, _) => INFINIT_LOAD,
                (Some(x), Some(i)) if i.is_run_queue() && options & EFFECTIVE != 0 => {
                    basalt_core::effective_run_queue(x, ncpus, cpuf) as f32
                }
                (Some(x), Some(i)) if i.is_run_queue() && options & NORMALIZE != 0 => {
                    basalt_core::normalized_run_queue(x, ncpus, cpuf) as f32
                }
                (Some(x), _) => x as f32,
            }
        })
        .collect();
    out.status = a.ints(status);
    out.li = a.floats(li);
    out
}

static LOAD: Mutex<Option<Held<Vec<ffi::hostLoad>>>> = Mutex::new(None);
static HOSTINFO: Mutex<Option<Held<Vec<ffi::hostInfo>>>> = Mutex::new(None);
static INFO: Mutex<Option<Held<ffi::lsInfo>>> = Mutex::new(None);

/// Keep `v` in `slot` and return a pointer to its first element (`*n` its length).
fn hand_out<T>(
    slot: &Mutex<Option<Held<Vec<T>>>>,
    held: Held<Vec<T>>,
    n: *mut libc::c_int,
) -> *mut T {
    let len = held.value.len();
    match slot.lock() {
        Ok(mut g) => {
            let h = g.insert(held);
            // SAFETY: the caller's `numhosts` points to an int.
            if let Some(n) = unsafe { n.as_mut() } {
                *n = len as i32;
            }
            h.value.as_mut_ptr()
        }
        Err(_) => std::ptr::null_mut(),
    }
}

fn load_call(
    resreq: *const libc::c_char,
    numhosts: *mut libc::c_int,
    options: i32,
    hostlist: Vec<String>,
) -> *mut ffi::hostLoad {
    // SAFETY: the caller's promise on resreq and numhosts.
    let (resreq, wanted) = unsafe { (given(resreq), numhosts.as_ref().copied().unwrap_or(0)) };
    let r = crate::session::config().and_then(|config| {
        let reply = hosts_for(&config, hostlist, resreq, wanted, options)?;
        let indices = index_names(&config);
        let mut a = Arena::default();
        let v: Vec<ffi::hostLoad> = reply
            .hosts
            .iter()
            .map(|h| host_load(&config, h, &indices, options, &mut a))
            .collect();
        Ok(Held {
            value: Box::new(v),
            arena: a,
        })
    });
    match r {
        Ok(held) => {
            crate::errno::set_base(LSE_NO_ERR, "");
            hand_out(&LOAD, held, numhosts)
        }
        Err(f) => {
            f.record();
            std::ptr::null_mut()
        }
    }
}

/// `struct hostLoad *ls_load(char *resreq, int *numhosts, int options, char
/// *fromhost)`: the load of the hosts `resreq` selects (`*numhosts` in: how many, 0
/// all; out: how many returned); library-owned until the next `ls_load` or
/// `ls_loadofhosts`. NULL with `lserrno` (`LSE_BAD_EXP`, `LSE_NO_HOST`, ...).
///
/// # Safety
/// `resreq` and `fromhost` are NULL or strings; `numhosts` NULL or an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_load(
    resreq: *const libc::c_char,
    numhosts: *mut libc::c_int,
    options: libc::c_int,
    _fromhost: *const libc::c_char,
) -> *mut ffi::hostLoad {
    load_call(resreq, numhosts, options, Vec::new())
}

/// `struct hostLoad *ls_loadofhosts(char *resreq, int *numhosts, int options, char
/// *fromhost, char **hostlist, int listsize)`: as `ls_load`, among `hostlist`.
///
/// # Safety
/// As `ls_load`; `hostlist` NULL or `listsize` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_loadofhosts(
    resreq: *const libc::c_char,
    numhosts: *mut libc::c_int,
    options: libc::c_int,
    _fromhost: *const libc::c_char,
    hostlist: *const *mut libc::c_char,
    listsize: libc::c_int,
) -> *mut ffi::hostLoad {
    // SAFETY: the caller's promise.
    let hosts = unsafe { str_array(hostlist, listsize) };
    load_call(resreq, numhosts, options, hosts)
}

/// `struct hostInfo *ls_gethostinfo(char *resReq, int *numhosts, char **hostlist, int
/// listsize, int options)`: each selected host's static facts; library-owned until the
/// next call.
///
/// # Safety
/// `resreq` NULL or a string; `numhosts` NULL or an int; `hostlist` NULL or `listsize`
/// strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ls_gethostinfo(
    resreq: *const libc::c_char,
    numhosts: *mut libc::c_int,
    hostlist: *const *mut libc::c_char,
    listsize: libc::c_int,
    options: libc::c_int,
) -> *mut ffi::hostInfo {
    // SAFETY: the caller's promise.
    let (resreq, hosts, wanted) = unsafe {
        (
            given(resreq),
            str_array(hostlist, listsize),
            numhosts.as_ref().copied().unwrap_or(0),
        )
    };
    let r = crate::session::config().and_then(|config| {
        let reply = hosts_for(&config, hosts, resreq, wanted, options & !OK_ONLY)?;
        let indices = index_names(&config);
        let mut a = Arena::default();
        let v: Vec<ffi::hostInfo> = reply
            .hosts
            .iter()
            .map(|h| host_info(&config, h, &indices, &mut a))
            .collect();
        Ok(Held {
            value: Box::new(v),
            arena: a,
        })
    });
    match r {
        Ok(held) => {
            crate::errno::set_base(LSE_NO_ERR, "");
            hand_out(&HOSTINFO, held, numhosts)
        }
        Err(f) => {
            f.record();
            std::ptr::null_mut()
        }
    }
}

fn host_info(config: &Config, h: &HostRecord, indices: &[String], a: &mut Arena) -> ffi::hostInfo {
    let f = basalt_cli::lim_cmds::facts(config, h);
    let mut e = *zeroed::<ffi::hostInfo>();
    fill(&mut e.hostName, &f.name);
    e.hostType = a.s(&f.host_type);
    e.hostModel = a.s(&f.model);
    e.cpuFactor = f.cpuf as f32;
    let mb = |v: Option<u64>| v.map_or(0, |x| x.min(i32::MAX as u64) as i32);
    e.maxCpus = f.ncpus.unwrap_or(0) as i32;
    e.maxMem = mb(f.maxmem);
    e.maxSwap = mb(f.maxswp);
    e.maxTmp = mb(f.maxtmp);
    e.nRes = f.resources.len() as i32;
    e.resources = a.strv(&f.resources);
    let row = config.cluster.host(&f.name);
    let window = row
        .and_then(|r| r.run_window.as_ref())
        .map_or_else(|| "-".to_owned(), |w| w.to_string());
    e.windows = a.s(&window);
    e.numIndx = indices.len() as i32;
    let thresholds: Vec<f32> = indices
        .iter()
        .map(|name| {
            let set = h
                .thresholds
                .iter()
                .find(|t| &t.name == name)
                .map(|t| t.value as f32);
            let increasing = LoadIndex::from_name(name).is_none_or(|i| i.increasing());
            set.unwrap_or(if increasing {
                INFINIT_LOAD
            } else {
                -INFINIT_LOAD
            })
        })
        .collect();
    e.busyThreshold = a.floats(thresholds);
    e.isServer = i8::from(f.server) as libc::c_char;
    e.licensed = 1;
    e.cores = e.maxCpus;
    e.pprocs = e.maxCpus;
    e.cores_per_proc = 1;
    e.threads_per_core = 1;
    if let Some(addr) = row.and_then(|r| r.address) {
        e.hostAddr = a.s(&addr.to_string());
    }
    e
}

/// `struct lsInfo *ls_info(void)`: the resource table (load indices first, then the
/// built-in static resources and lsf.shared's others), host types and models;
/// library-owned until the next call. From the configuration (no daemon asked).
#[unsafe(no_mangle)]
pub extern "C" fn ls_info() -> *mut ffi::lsInfo {
    let r = crate::session::config().map(|c| lsinfo(&c));
    match (r, INFO.lock()) {
        (Ok(held), Ok(mut g)) => {
            crate::errno::set_base(LSE_NO_ERR, "");
            &mut *g.insert(held).value as *mut ffi::lsInfo
        }
        (Err(f), _) => {
            f.record();
            std::ptr::null_mut()
        }
        (Ok(_), Err(_)) => std::ptr::null_mut(),
    }
}

fn lsinfo(config: &Config) -> Held<ffi::lsInfo> {
    let mut info = zeroed::<ffi::lsInfo>();
    let externals = external_indices(config);
    let rows = basalt_cli::lim_cmds::info_resources(config);
    // Load indices first (built-ins, then the external ones), then the rest in
    // lsinfo's order.
    let builtin_count = basalt_core::BUILTIN_INDICES.len();
    let mut ordered: Vec<&(String, String, String, String)> =
        rows[..builtin_count].iter().collect();
    ordered.extend(rows.iter().filter(|r| externals.contains(&r.0)));
    ordered.extend(
        rows[builtin_count..]
            .iter()
            .filter(|r| !externals.contains(&r.0)),
    );
    let items: Vec<ffi::resItem> = ordered
        .iter()
        .enumerate()
        .map(|(i, (name, kind, order, des))| {
            let mut it = ffi::resItem {
                name: [0; ffi::MAXLSFNAMELEN],
                des: [0; ffi::MAXRESDESLEN],
                valueType: match kind.as_str() {
                    "Boolean" => 0,
                    "Numeric" => 1,
                    _ => 2,
                },
                orderType: match order.as_str() {
                    "Inc" => 0,
                    "Dec" => 1,
                    _ => 2,
                },
                flags: 0,
                interval: 0,
            };
            fill(&mut it.name, name);
            fill(&mut it.des, des);
            if let Some(l) = LoadIndex::from_name(name).filter(|_| i < builtin_count) {
                it.flags = RESF_BUILTIN | RESF_DYNAMIC | RESF_GLOBAL;
                it.interval = l.sample_interval_secs() as i32;
            } else if let Some(r) = config.shared.resource(name) {
                it.flags = RESF_GLOBAL;
                if let Some(iv) = r.interval {
                    it.flags |= RESF_DYNAMIC;
                    it.interval = iv as i32;
                }
            } else {
                // LSF's built-in static resources (type, model, ncpus, ...).
                it.flags = RESF_BUILTIN | RESF_GLOBAL;
            }
            it
        })
        .collect();
    let mut a = Arena::default();
    info.nRes = items.len() as i32;
    let mut items = items;
    info.resTable = items.as_mut_ptr();
    a.keep(items);
    let types = &config.shared.host_types;
    info.nTypes = types.len().min(ffi::MAXTYPES) as i32;
    for (slot, t) in info.hostTypes.iter_mut().zip(types) {
        fill(slot, t);
    }
    let models = &config.shared.host_models;
    info.nModels = models.len().min(ffi::MAXMODELS) as i32;
    for (i, m) in models.iter().take(ffi::MAXMODELS).enumerate() {
        fill(&mut info.hostModels[i], &m.name);
        fill(
            &mut info.hostArchs[i],
            m.architecture.as_deref().unwrap_or(""),
        );
        info.cpuFactor[i] = m.cpu_factor as f32;
    }
    info.numIndx = (builtin_count + externals.len()) as i32;
    info.numUsrIndx = externals.len() as i32;
    Held {
        value: info,
        arena: a,
    }
}
