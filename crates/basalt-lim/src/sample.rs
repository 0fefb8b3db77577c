//! Sampling the 11 built-in load indices and the static host information from
//! the real machine (`/proc` through the `procfs` crate, `statvfs`, utmp).
//!
//! Reading ([`read_raw`]) is separated from the arithmetic ([`Smoother`]) so the
//! smoothing and rate computations are unit-tested on fixed readings.
//!
//! | index | source |
//! |---|---|
//! | r15s | procs_running of /proc/stat (minus the sampler), exponentially averaged over 15 s |
//! | r1m, r15m | /proc/loadavg (the kernel's 1- and 15-minute run-queue averages) |
//! | ut | busy share of CPU time between samples (/proc/stat), averaged over 1 minute |
//! | pg | pages swapped in + out per second (/proc/vmstat pswpin, pswpout), averaged over 1 minute |
//! | io | KB read + written per second on whole disks (/proc/diskstats), averaged over 1 minute |
//! | ls | login sessions (USER_PROCESS records of utmp) |
//! | it | minutes since the last keystroke on any login terminal; system uptime when nobody is logged in |
//! | tmp | free MB in /tmp (statvfs) |
//! | swp | free swap MB (/proc/meminfo SwapFree) |
//! | mem | available memory MB (/proc/meminfo MemAvailable) |

use basalt_core::{LoadIndex, LoadVector};
use procfs::prelude::*;
use std::path::Path;

/// One raw reading of the machine. Every field may be missing (a file that
/// cannot be read makes its indices unknown, never the whole sample).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSample {
    /// Monotonic time of the reading, in seconds.
    pub t: f64,
    pub procs_running: Option<u32>,
    pub load_1m: Option<f64>,
    pub load_15m: Option<f64>,
    /// (busy, total) CPU ticks since boot.
    pub cpu_ticks: Option<(u64, u64)>,
    /// pswpin + pswpout since boot.
    pub swap_pages: Option<u64>,
    /// Sectors read + written on whole disks since boot.
    pub disk_sectors: Option<u64>,
    pub login_sessions: Option<u32>,
    pub idle_minutes: Option<f64>,
    pub tmp_free_mb: Option<f64>,
    pub swp_free_mb: Option<f64>,
    pub mem_avail_mb: Option<f64>,
}

/// Turns successive raw readings into a load vector: rates from deltas,
/// exponential averages with LSF's time constants.
#[derive(Debug, Default)]
pub struct Smoother {
    prev: Option<RawSample>,
    r15s: Option<f64>,
    ut: Option<f64>,
    pg: Option<f64>,
    io: Option<f64>,
}

/// Exponential average of `old` towards `new` over `dt` seconds with time constant `tau`.
fn ewma(old: Option<f64>, new: f64, dt: f64, tau: f64) -> f64 {
    match old {
        None => new,
        Some(old) => {
            let k = (-dt / tau).exp();
            old * k + new * (1.0 - k)
        }
    }
}

impl Smoother {
    pub fn update(&mut self, raw: &RawSample) -> LoadVector {
        let mut v = LoadVector::default();
        let dt = self
            .prev
            .as_ref()
            .map(|p| raw.t - p.t)
            .filter(|dt| *dt > 0.0);

        if let Some(running) = raw.procs_running {
            // The sampling thread itself is running while it reads /proc/stat.
            let q = f64::from(running.saturating_sub(1));
            self.r15s = Some(ewma(self.r15s, q, dt.unwrap_or(0.0), 15.0));
        }
        if let Some(dt) = dt
            && let Some(prev) = self.prev.as_ref()
        {
            if let (Some((b0, t0)), Some((b1, t1))) = (prev.cpu_ticks, raw.cpu_ticks)
                && t1 > t0
            {
                let busy = b1.saturating_sub(b0) as f64 / (t1 - t0) as f64;
                self.ut = Some(ewma(self.ut, busy.clamp(0.0, 1.0), dt, 60.0));
            }
            if let (Some(p0), Some(p1)) = (prev.swap_pages, raw.swap_pages) {
                let rate = p1.saturating_sub(p0) as f64 / dt;
                self.pg = Some(ewma(self.pg, rate, dt, 60.0));
            }
            if let (Some(s0), Some(s1)) = (prev.disk_sectors, raw.disk_sectors) {
                let kb = s1.saturating_sub(s0) as f64 * 512.0 / 1024.0 / dt;
                self.io = Some(ewma(self.io, kb, dt, 60.0));
            }
        }
        let set = |v: &mut LoadVector, i: LoadIndex, x: Option<f64>| {
            if let Some(x) = x.filter(|x| x.is_finite()) {
                v.set(i, x.max(0.0));
            }
        };
        set(&mut v, LoadIndex::R15s, self.r15s);
        set(&mut v, LoadIndex::R1m, raw.load_1m);
        set(&mut v, LoadIndex::R15m, raw.load_15m);
        set(&mut v, LoadIndex::Ut, self.ut);
        set(&mut v, LoadIndex::Pg, self.pg);
        set(&mut v, LoadIndex::Io, self.io);
        set(&mut v, LoadIndex::Ls, raw.login_sessions.map(f64::from));
        set(&mut v, LoadIndex::It, raw.idle_minutes);
        set(&mut v, LoadIndex::Tmp, raw.tmp_free_mb);
        set(&mut v, LoadIndex::Swp, raw.swp_free_mb);
        set(&mut v, LoadIndex::Mem, raw.mem_avail_mb);
        self.prev = Some(raw.clone());
        v
    }
}

const MB: f64 = 1024.0 * 1024.0;

/// Read the machine once. `t` is the caller's monotonic time in seconds.
/// Blocking (reads /proc, statvfs on /tmp): call it off the async loop.
pub fn read_raw(t: f64) -> RawSample {
    let mut raw = RawSample {
        t,
        ..RawSample::default()
    };
    if let Ok(stat) = procfs::KernelStats::current() {
        raw.procs_running = stat.procs_running;
        let c = &stat.total;
        let busy = c.user
            + c.nice
            + c.system
            + c.irq.unwrap_or(0)
            + c.softirq.unwrap_or(0)
            + c.steal.unwrap_or(0);
        let total = busy + c.idle + c.iowait.unwrap_or(0);
        raw.cpu_ticks = Some((busy, total));
    }
    if let Ok(la) = procfs::LoadAverage::current() {
        raw.load_1m = Some(f64::from(la.one));
        raw.load_15m = Some(f64::from(la.fifteen));
    }
    if let Ok(vm) = procfs::vmstat() {
        let get = |k: &str| vm.get(k).copied().unwrap_or(0).max(0) as u64;
        raw.swap_pages = Some(get("pswpin") + get("pswpout"));
    }
    if let Ok(disks) = procfs::diskstats() {
        let sectors = disks
            .iter()
            .filter(|d| is_whole_disk(&d.name))
            .map(|d| d.sectors_read + d.sectors_written)
            .sum();
        raw.disk_sectors = Some(sectors);
    }
    if let Ok(mi) = procfs::Meminfo::current() {
        raw.swp_free_mb = Some(mi.swap_free as f64 / MB);
        let avail = mi.mem_available.unwrap_or(mi.mem_free + mi.cached);
        raw.mem_avail_mb = Some(avail as f64 / MB);
    }
    if let Ok(vfs) = nix::sys::statvfs::statvfs("/tmp") {
        let free = vfs.blocks_available() as f64 * vfs.fragment_size() as f64;
        raw.tmp_free_mb = Some(free / MB);
    }
    let sessions = crate::utmp::login_sessions(Path::new("/var/run/utmp"));
    raw.login_sessions = Some(sessions.len() as u32);
    raw.idle_minutes = crate::utmp::idle_minutes(&sessions)
        .or_else(|| procfs::Uptime::current().ok().map(|u| u.uptime / 60.0));
    raw
}

/// Whole disks only (partitions would count the same I/O twice): a device
/// with an entry under /sys/block that is not a loop or RAM device.
fn is_whole_disk(name: &str) -> bool {
    !name.starts_with("loop")
        && !name.starts_with("ram")
        && !name.starts_with("zram")
        && Path::new("/sys/block").join(name).exists()
}

/// Static machine information: (ncpus, maxmem MB, maxswp MB, maxtmp MB).
pub fn read_static() -> (u32, u64, u64, u64) {
    let ncpus = nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN)
        .ok()
        .flatten()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let (mem, swp) = procfs::Meminfo::current()
        .map(|mi| {
            (
                (mi.mem_total as f64 / MB) as u64,
                (mi.swap_total as f64 / MB) as u64,
            )
        })
        .unwrap_or((0, 0));
    let tmp = nix::sys::statvfs::statvfs("/tmp")
        .map(|v| (v.blocks() as f64 * v.fragment_size() as f64 / MB) as u64)
        .unwrap_or(0);
    (ncpus, mem, swp, tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(t: f64, running: u32, busy: u64, total: u64) -> RawSample {
        RawSample {
            t,
            procs_running: Some(running),
            load_1m: Some(0.5),
            load_15m: Some(0.25),
            cpu_ticks: Some((busy, total)),
            swap_pages: Some(100),
            disk_sectors: Some(2048),
            login_sessions: Some(2),
            idle_minutes: Some(3.0),
            tmp_free_mb: Some(1000.0),
            swp_free_mb: Some(0.0),
            mem_avail_mb: Some(2048.0),
        }
    }

    #[test]
    fn first_sample_has_no_rates() {
        let mut s = Smoother::default();
        let v = s.update(&raw(0.0, 3, 0, 100));
        assert_eq!(v.get(LoadIndex::R15s), Some(2.0));
        assert_eq!(v.get(LoadIndex::Ut), None);
        assert_eq!(v.get(LoadIndex::Io), None);
        assert_eq!(v.get(LoadIndex::R1m), Some(0.5));
        assert_eq!(v.get(LoadIndex::Mem), Some(2048.0));
        assert_eq!(v.get(LoadIndex::Ls), Some(2.0));
    }

    #[test]
    fn rates_from_deltas() {
        let mut s = Smoother::default();
        s.update(&raw(0.0, 1, 0, 100));
        let mut r = raw(5.0, 1, 50, 200);
        r.disk_sectors = Some(2048 + 10 * 2 * 5); // 10 KB/s for 5 s
        r.swap_pages = Some(100 + 20); // 4 pages/s
        let v = s.update(&r);
        assert!((v.get(LoadIndex::Ut).unwrap_or(-1.0) - 0.5).abs() < 1e-9);
        assert!((v.get(LoadIndex::Io).unwrap_or(-1.0) - 10.0).abs() < 1e-9);
        assert!((v.get(LoadIndex::Pg).unwrap_or(-1.0) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn r15s_moves_towards_run_queue() {
        let mut s = Smoother::default();
        s.update(&raw(0.0, 1, 0, 100));
        let mut last = 0.0;
        for k in 1..=6 {
            let v = s.update(&raw(f64::from(k) * 5.0, 3, 0, 100));
            let r = v.get(LoadIndex::R15s).unwrap_or(-1.0);
            assert!(r > last && r < 2.0, "step {k}: {r}");
            last = r;
        }
        assert!(last > 1.7);
    }

    #[test]
    fn real_machine_reading_is_sane() {
        let v = Smoother::default().update(&read_raw(0.0));
        let mem = v.get(LoadIndex::Mem).unwrap_or(-1.0);
        assert!(mem > 0.0, "mem {mem}");
        assert!(v.get(LoadIndex::R1m).is_some());
        let (ncpus, maxmem, _, _) = read_static();
        assert!(ncpus >= 1 && maxmem > 0);
    }
}
