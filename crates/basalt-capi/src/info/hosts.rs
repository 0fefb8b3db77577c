//! `lsb_hostinfo`, `lsb_hostinfo_ex`: the batch hosts as `bhosts -l` shows them
//! (mbatchd's `Hosts`), as LSF's `struct hostInfoEnt`; `lsb_hostinfo_ex`'s resource
//! requirement selects among them as `lsload -R` does (the master LIM's load and each
//! host's static resources), the least loaded first.

use super::*;
use crate::mem::given;
use crate::session::{block_on, connect_timeout, finish, with_mbatchd};
use basalt_proto::mbatchd::{BatchHostInfo, HostsRequest};

static HOSTS: Slot<hostInfoEnt> = Slot::new();
static HOSTS_EX: Slot<hostInfoEnt> = Slot::new();

/// `struct hostInfoEnt *lsb_hostinfo(char **hosts, int *numHosts)`: the hosts named
/// (host names, host groups; `*numHosts` 0: all; `hosts` NULL and `*numHosts` 1: this
/// host).
///
/// # Safety
/// `numHosts` points to an int; `hosts` is NULL or has `*numHosts` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_hostinfo(
    hosts: *mut *mut c_char,
    num: *mut c_int,
) -> *mut hostInfoEnt {
    // SAFETY: passed on.
    unsafe { answer(&HOSTS, hosts, num, None) }
}

/// `struct hostInfoEnt *lsb_hostinfo_ex(char **hosts, int *numHosts, char *resReq, int
/// options)`: as [`lsb_hostinfo`], only the hosts that satisfy `resReq` (NULL or "":
/// every one), the least loaded first. `options` is reserved by LSF: 0.
///
/// # Safety
/// As [`lsb_hostinfo`]; `resReq` is NULL or a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_hostinfo_ex(
    hosts: *mut *mut c_char,
    num: *mut c_int,
    res_req: *mut c_char,
    options: c_int,
) -> *mut hostInfoEnt {
    if options != 0 {
        let f = bad_arg(format!(
            "lsb_hostinfo_ex options must be 0, not {options:#x}"
        ));
        return finish(Err(f), std::ptr::null_mut());
    }
    // SAFETY: the caller's promise.
    let res_req = unsafe { given(res_req) };
    // SAFETY: passed on.
    unsafe { answer(&HOSTS_EX, hosts, num, res_req) }
}

/// # Safety
/// As [`lsb_hostinfo`].
unsafe fn answer(
    slot: &Slot<hostInfoEnt>,
    hosts: *mut *mut c_char,
    num: *mut c_int,
    res_req: Option<String>,
) -> *mut hostInfoEnt {
    // SAFETY: passed on.
    let r = unsafe { query(hosts, num, res_req) }.map(|(items, arena)| {
        // SAFETY: the caller's promise.
        unsafe { set_count(num, items.len()) };
        slot.put(items, arena)
    });
    finish(r, std::ptr::null_mut())
}

/// # Safety
/// As [`lsb_hostinfo`].
unsafe fn query(
    hosts: *mut *mut c_char,
    num: *mut c_int,
    res_req: Option<String>,
) -> Result<(Vec<hostInfoEnt>, Arena), Fail> {
    // SAFETY: the caller's promise.
    let want = unsafe { asked(hosts, num) }?;
    let config = crate::session::config()?;
    let names = match &want {
        Asked::All => Vec::new(),
        Asked::Own => vec![basalt_cli::batch::local_host(&config)],
        Asked::Names(n) => n.clone(),
    };
    let reply = with_mbatchd(|mut c, _| async move {
        c.hosts(HostsRequest { hosts: names })
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| Fail::from_status(&s))
    })?;
    match &want {
        Asked::Names(n) => {
            if let Some((i, name)) = first_unknown(n, &reply.not_found) {
                // SAFETY: the caller's promise.
                unsafe { set_count(num, i) };
                return Err(Fail::batch(LSBE_BAD_HOST, name));
            }
        }
        Asked::Own if !reply.not_found.is_empty() || reply.hosts.is_empty() => {
            return Err(Fail::batch(
                LSBE_BAD_HOST,
                format!(
                    "{}: not a batch host",
                    basalt_cli::batch::local_host(&config)
                ),
            ));
        }
        _ => {}
    }
    let mut shown: Vec<&BatchHostInfo> = reply.hosts.iter().collect();
    if let Some(r) = res_req.as_deref() {
        let order = selected(&config, r)?;
        shown.retain(|h| order.iter().any(|s| basalt_core::same_host(s, &h.name)));
        shown.sort_by_key(|h| {
            order
                .iter()
                .position(|s| basalt_core::same_host(s, &h.name))
                .unwrap_or(usize::MAX)
        });
        if shown.is_empty() {
            return Err(Fail::batch(LSBE_NO_ENOUGH_HOST, ""));
        }
    }
    let idx = index_names(shown.iter().flat_map(|h| {
        h.load
            .iter()
            .map(|l| &l.name)
            .chain(h.load_sched.keys())
            .chain(h.load_stop.keys())
    }));
    let mut a = Arena::default();
    let items = shown
        .iter()
        .map(|h| entry(h, &idx, Some(&config), &mut a))
        .collect();
    Ok((items, a))
}

/// The hosts (as the LIM names them) that satisfy `res_req`'s select part, the least
/// loaded first (r15s, then r1m, then pg).
fn selected(config: &basalt_config::Config, res_req: &str) -> Result<Vec<String>, Fail> {
    let auth = basalt_cli::auth(config);
    let timeout = connect_timeout(config);
    let mut reply = block_on(async {
        let mut m = basalt_runtime::find_master(config, timeout, &auth)
            .await
            .map_err(|e| Fail::base(LSE_MASTR_UNKNW, e.to_string()))?;
        m.client
            .hosts(basalt_proto::lim::HostsRequest::default())
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| Fail::base(LSE_MASTR_UNKNW, s.message().to_owned()))
    })??;
    let externals = basalt_cli::lim_cmds::external_indices(&reply);
    let select = basalt_cli::lim_res::Select::parse(res_req, config, &externals)
        .map_err(|_| Fail::batch(LSBE_BAD_RESREQ, res_req.to_owned()))?;
    let local = basalt_cli::batch::local_host(config);
    basalt_cli::lim_cmds::retain_selected(config, &mut reply, &select, &local);
    let load = |h: &basalt_proto::lim::HostRecord, name: &str| {
        h.load
            .iter()
            .find(|l| l.name == name)
            .map_or(f64::MAX, |l| l.value)
    };
    reply.hosts.sort_by(|a, b| {
        ["r15s", "r1m", "pg"]
            .iter()
            .map(|n| load(a, n).total_cmp(&load(b, n)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(reply
        .hosts
        .iter()
        .filter_map(|h| h.info.as_ref().map(|i| i.name.clone()))
        .collect())
}

/// LSF's status bits for bhosts' status (`ok`, `unavail`, `unreach`, `closed_Adm`, ...).
fn status_bits(h: &BatchHostInfo) -> c_int {
    match h.long_status.as_str() {
        "ok" => HOST_STAT_OK,
        "unavail" => HOST_STAT_UNAVAIL,
        "unreach" => HOST_STAT_UNREACH,
        "closed_Adm" => HOST_STAT_DISABLED,
        "closed_Excl" => HOST_STAT_EXCLUSIVE,
        "closed_Full" => HOST_STAT_FULL,
        "closed_LIM" => HOST_STAT_NO_LIM,
        "closed_Busy" => HOST_STAT_BUSY,
        "closed_Wind" => HOST_STAT_WIND,
        "closed_Lock" => HOST_STAT_LOCKED,
        // A closed host whose reason this library does not know yet: closed by the
        // administrator is LSF's generic closed state.
        _ if h.status == "closed" => HOST_STAT_DISABLED,
        _ if h.status == "unavail" => HOST_STAT_UNAVAIL,
        _ if h.status == "unreach" => HOST_STAT_UNREACH,
        _ => HOST_STAT_OK,
    }
}

/// Bit i set where load index i is beyond `thresholds[i]` (LSF's busySched /
/// busyStop), in ints of 32 bits.
fn busy_bits(names: &[String], load: &[f32], thresholds: &[f32]) -> Vec<c_int> {
    let mut bits = vec![0 as c_int; names.len() / 32 + 1];
    for (i, n) in names.iter().enumerate() {
        let (l, t) = (load[i], thresholds[i]);
        if l.abs() >= INFINIT_LOAD || t.abs() >= INFINIT_LOAD {
            continue;
        }
        let beyond = if increasing(n, None) { l > t } else { l < t };
        if beyond {
            bits[i / 32] |= 1 << (i % 32);
        }
    }
    bits
}

/// A batch host as LSF's entry; `idx` names the load indices of its vectors.
fn entry(
    h: &BatchHostInfo,
    idx: &[String],
    config: Option<&basalt_config::Config>,
    a: &mut Arena,
) -> hostInfoEnt {
    let mut e = zero::<hostInfoEnt>();
    let load: Vec<f32> = idx
        .iter()
        .map(|n| {
            h.load
                .iter()
                .find(|l| &l.name == n)
                .map_or(INFINIT_LOAD, |l| l.value as f32)
        })
        .collect();
    let sched = thresholds(idx, |n| h.load_sched.get(n), config);
    let stop = thresholds(idx, |n| h.load_stop.get(n), config);
    e.host = a.s(&h.name);
    e.hStatus = status_bits(h);
    e.busySched = a.ints(busy_bits(idx, &load, &sched));
    e.busyStop = a.ints(busy_bits(idx, &load, &stop));
    e.cpuFactor = h.cpu_factor as f32;
    e.nIdx = int(idx.len());
    e.realLoad = a.floats(load.clone());
    e.load = a.floats(load);
    e.loadSched = a.floats(sched);
    e.loadStop = a.floats(stop);
    e.windows = a.s(&h.dispatch_window);
    e.userJobLimit = limit_int(h.jl_u);
    e.maxJobs = limit_int(h.max);
    e.numJobs = int(h.njobs);
    e.numRUN = int(h.run);
    e.numSSUSP = int(h.ssusp);
    e.numUSUSP = int(h.ususp);
    e.mig = INFINIT_INT;
    e.numRESERVE = int(h.rsv);
    e.hCtrlMsg = a.s(&h.message);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_proto::common::LoadValue;
    use std::ffi::CStr;

    fn host(long: &str) -> BatchHostInfo {
        BatchHostInfo {
            name: "hostA".into(),
            status: long.split('_').next().unwrap_or(long).into(),
            long_status: long.into(),
            jl_u: -1,
            max: 4,
            njobs: 3,
            run: 2,
            rsv: 1,
            cpu_factor: 2.5,
            message: "maintenance".into(),
            load: vec![
                LoadValue {
                    name: "r1m".into(),
                    value: 0.8,
                },
                LoadValue {
                    name: "mem".into(),
                    value: 100.0,
                },
                LoadValue {
                    name: "gpu".into(),
                    value: 1.0,
                },
            ],
            load_sched: [("r1m".to_owned(), 0.5), ("mem".to_owned(), 50.0)].into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_host_becomes_lsfs_entry() {
        let h = host("closed_Adm");
        let idx = index_names(h.load.iter().map(|l| &l.name));
        let mut a = Arena::default();
        let e = entry(&h, &idx, None, &mut a);
        // SAFETY: the arena's strings and nIdx-long vectors.
        unsafe {
            assert_eq!(CStr::from_ptr(e.host).to_str(), Ok("hostA"));
            assert_eq!(CStr::from_ptr(e.hCtrlMsg).to_str(), Ok("maintenance"));
            assert_eq!(e.nIdx, 12);
            let load = std::slice::from_raw_parts(e.load, 12);
            assert_eq!(load[R1M as usize], 0.8);
            assert_eq!(load[11], 1.0, "the external index after the built-in ones");
            assert_eq!(load[R15S as usize], INFINIT_LOAD);
            let sched = std::slice::from_raw_parts(e.loadSched, 12);
            assert_eq!(sched[R1M as usize], 0.5);
            assert_eq!(sched[MEM as usize], 50.0);
            // r1m 0.8 > 0.5: busy on r1m; mem 100 is above its 50 floor: not busy.
            assert_eq!(*e.busySched, HOST_BUSY_R1M);
            assert_eq!(*e.busyStop, 0);
        }
        assert_eq!(e.hStatus, HOST_STAT_DISABLED);
        assert_eq!((e.userJobLimit, e.maxJobs), (INFINIT_INT, 4));
        assert_eq!((e.numJobs, e.numRUN, e.numRESERVE), (3, 2, 1));
        assert_eq!(e.cpuFactor, 2.5);
    }

    #[test]
    fn bhosts_statuses_become_lsfs_bits() {
        for (long, bits) in [
            ("ok", HOST_STAT_OK),
            ("unavail", HOST_STAT_UNAVAIL),
            ("unreach", HOST_STAT_UNREACH),
            ("closed_Full", HOST_STAT_FULL),
            ("closed_Excl", HOST_STAT_EXCLUSIVE),
            ("closed_Busy", HOST_STAT_BUSY),
            ("closed_Wind", HOST_STAT_WIND),
            ("closed_LIM", HOST_STAT_NO_LIM),
            ("closed_Lock", HOST_STAT_LOCKED),
        ] {
            assert_eq!(status_bits(&host(long)), bits, "{long}");
        }
    }
}
