//! Resource usage of a running job, sampled from `/proc`: every process of the
//! job's session (the job leader calls `setsid`, so session id = pgid = its pid).

/// One sample of a job's processes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub pids: Vec<u32>,
    pub mem_kb: u64,
    pub swap_kb: u64,
    /// CPU seconds of the live processes, including their reaped children.
    pub utime: f64,
    pub stime: f64,
    pub threads: u32,
}

/// Sample every live process whose session is `sid`.
pub fn sample_session(sid: i32) -> Sample {
    let mut s = Sample::default();
    let Ok(all) = procfs::process::all_processes() else {
        return s;
    };
    let tps = procfs::ticks_per_second().max(1) as f64;
    let page_kb = procfs::page_size() / 1024;
    for p in all.flatten() {
        let Ok(stat) = p.stat() else { continue };
        if stat.session != sid || stat.state == 'Z' {
            continue;
        }
        s.pids.push(stat.pid as u32);
        s.mem_kb += stat.rss * page_kb;
        s.utime += (stat.utime as f64 + stat.cutime.max(0) as f64) / tps;
        s.stime += (stat.stime as f64 + stat.cstime.max(0) as f64) / tps;
        s.threads += u32::try_from(stat.num_threads.max(0)).unwrap_or(0);
        if let Ok(status) = p.status() {
            s.swap_kb += status.vmswap.unwrap_or(0);
        }
    }
    s.pids.sort_unstable();
    s
}

/// Running totals over a job's life.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    pub last: Sample,
    pub max_mem_kb: u64,
    pub max_swap_kb: u64,
    pub max_procs: u32,
    pub max_threads: u32,
    mem_sum: u128,
    samples: u64,
    /// What was last reported, to throttle RUSAGE reports.
    reported: Option<Sample>,
}

impl Tracker {
    pub fn add(&mut self, s: Sample) {
        self.max_mem_kb = self.max_mem_kb.max(s.mem_kb);
        self.max_swap_kb = self.max_swap_kb.max(s.swap_kb);
        self.max_procs = self.max_procs.max(s.pids.len() as u32);
        self.max_threads = self.max_threads.max(s.threads);
        if !s.pids.is_empty() {
            self.mem_sum += u128::from(s.mem_kb);
            self.samples += 1;
        }
        self.last = s;
    }

    pub fn avg_mem_kb(&self) -> u64 {
        if self.samples == 0 {
            0
        } else {
            u64::try_from(self.mem_sum / u128::from(self.samples)).unwrap_or(u64::MAX)
        }
    }

    /// Has usage changed enough since the last report to report it again? Memory
    /// by 10 % (and 512 KB), CPU by a second (or 10 %), or the set of processes.
    pub fn worth_reporting(&self) -> bool {
        let Some(r) = &self.reported else {
            return !self.last.pids.is_empty();
        };
        let s = &self.last;
        let mem_delta = s.mem_kb.abs_diff(r.mem_kb);
        let cpu = s.utime + s.stime;
        let rcpu = r.utime + r.stime;
        s.pids != r.pids
            || (mem_delta * 10 > r.mem_kb && mem_delta > 512)
            || cpu - rcpu >= 1.0_f64.max(rcpu * 0.1)
    }

    pub fn mark_reported(&mut self) {
        self.reported = Some(self.last.clone());
    }
}

/// The usage of the job's tasks run through RES, as `blaunch` recorded it in the job's
/// `LSB_ACCT_FILE` (`path`): user and system CPU seconds and the tasks' largest resident
/// sets added up, KB. Only a regular file of the job's user (`uid`) counts (opened
/// without following a link: it is in `/tmp`), at most 1 MB of it.
pub(super) fn remote_tasks(path: &str, uid: u32) -> (f64, f64, u64) {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return (0.0, 0.0, 0);
    };
    match f.metadata() {
        Ok(m) if m.is_file() && m.uid() == uid => {}
        _ => return (0.0, 0.0, 0),
    }
    let mut text = String::new();
    if f.take(1 << 20).read_to_string(&mut text).is_err() {
        return (0.0, 0.0, 0);
    }
    basalt_core::job::task_usage::sum(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_session_is_visible() {
        let sid = nix::unistd::getsid(None).expect("getsid").as_raw();
        let s = sample_session(sid);
        assert!(s.pids.contains(&std::process::id()), "{s:?}");
        assert!(s.mem_kb > 0);
    }

    #[test]
    fn throttling() {
        let mut t = Tracker::default();
        assert!(!t.worth_reporting());
        t.add(Sample {
            pids: vec![1],
            mem_kb: 10_000,
            ..Default::default()
        });
        assert!(t.worth_reporting());
        t.mark_reported();
        t.add(Sample {
            pids: vec![1],
            mem_kb: 10_500,
            utime: 0.5,
            ..Default::default()
        });
        assert!(!t.worth_reporting());
        t.add(Sample {
            pids: vec![1],
            mem_kb: 12_000,
            utime: 0.5,
            ..Default::default()
        });
        assert!(t.worth_reporting());
        t.mark_reported();
        t.add(Sample {
            pids: vec![1, 2],
            mem_kb: 12_000,
            utime: 0.5,
            ..Default::default()
        });
        assert!(t.worth_reporting());
        assert_eq!(t.max_mem_kb, 12_000);
        assert_eq!(t.max_procs, 2);
        assert_eq!(t.avg_mem_kb(), (10_000 + 10_500 + 12_000 + 12_000) / 4);
    }
}
