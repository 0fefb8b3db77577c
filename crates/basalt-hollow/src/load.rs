//! The load of a hollow host: a pattern instead of the machine ([`basalt_lim::LoadSource`]).

use basalt_core::{LoadIndex, LoadVector};

/// How a hollow host's load indices move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Nothing runs: run queues 0, CPU 0 %, lots of free memory.
    Idle,
    /// Fully loaded: run queues at the CPU count, CPU 100 %.
    Busy,
    /// A random walk between the two, its own per host (seeded by the host's name), so
    /// hosts differ and change at every sample.
    Walk,
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Pattern, String> {
        match s {
            "idle" => Ok(Pattern::Idle),
            "busy" => Ok(Pattern::Busy),
            "walk" => Ok(Pattern::Walk),
            other => Err(format!(
                "unknown load pattern {other:?} (idle, busy or walk)"
            )),
        }
    }
}

/// A hollow host's load source: its static sizes and its pattern.
#[derive(Debug, Clone)]
pub struct HollowLoad {
    pub pattern: Pattern,
    pub ncpus: u32,
    /// maxmem, maxswp, maxtmp in MB.
    pub mem_mb: u64,
    pub swp_mb: u64,
    pub tmp_mb: u64,
}

impl HollowLoad {
    /// A host of `ncpus` CPUs and 16 GB of memory.
    pub fn new(pattern: Pattern, ncpus: u32) -> HollowLoad {
        HollowLoad {
            pattern,
            ncpus: ncpus.max(1),
            mem_mb: 16_384,
            swp_mb: 4_096,
            tmp_mb: 65_536,
        }
    }

    /// The busy share (0 to 1) of `host` at `t` seconds.
    fn busy_share(&self, host: &str, t: f64) -> f64 {
        match self.pattern {
            Pattern::Idle => 0.0,
            Pattern::Busy => 1.0,
            Pattern::Walk => {
                // A walk of 5 s steps, each ±0.1, from the host's own seed: the value at
                // a step is a pure function of (host, step), so no state is kept.
                let seed = host.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                let steps = (t / 5.0).max(0.0) as u64;
                let mut v: f64 = (seed % 100) as f64 / 100.0;
                // The last 20 steps decide where it is (older ones are forgotten).
                for k in steps.saturating_sub(20)..=steps {
                    let step = if splitmix(seed ^ k) & 1 == 0 {
                        0.1
                    } else {
                        -0.1
                    };
                    v = (v + step).clamp(0.0, 1.0);
                }
                v
            }
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl basalt_lim::LoadSource for HollowLoad {
    fn static_sizes(&self, _host: &str) -> (u32, u64, u64, u64) {
        (self.ncpus, self.mem_mb, self.swp_mb, self.tmp_mb)
    }

    fn sample(&self, host: &str, t: f64) -> LoadVector {
        let busy = self.busy_share(host, t);
        let queue = busy * f64::from(self.ncpus);
        let mut v = LoadVector::default();
        v.set(LoadIndex::R15s, queue);
        v.set(LoadIndex::R1m, queue);
        v.set(LoadIndex::R15m, queue);
        v.set(LoadIndex::Ut, busy);
        v.set(LoadIndex::Pg, 0.0);
        v.set(LoadIndex::Io, busy * 1000.0);
        v.set(LoadIndex::Ls, 0.0);
        v.set(LoadIndex::It, if busy > 0.0 { 0.0 } else { 60.0 });
        v.set(LoadIndex::Tmp, self.tmp_mb as f64 * 0.9);
        v.set(LoadIndex::Swp, self.swp_mb as f64);
        v.set(LoadIndex::Mem, self.mem_mb as f64 * (1.0 - 0.75 * busy));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_lim::LoadSource;

    #[test]
    fn patterns_give_what_they_say() {
        let idle = HollowLoad::new(Pattern::Idle, 4);
        let v = idle.sample("h1", 10.0);
        assert_eq!(v.get(LoadIndex::R15s), Some(0.0));
        assert_eq!(v.get(LoadIndex::Mem), Some(16_384.0));
        let busy = HollowLoad::new(Pattern::Busy, 4);
        assert_eq!(busy.sample("h1", 10.0).get(LoadIndex::R1m), Some(4.0));
        assert_eq!(busy.static_sizes("h1"), (4, 16_384, 4_096, 65_536));
        assert_eq!("walk".parse::<Pattern>(), Ok(Pattern::Walk));
        assert!("lazy".parse::<Pattern>().is_err());
    }

    #[test]
    fn a_walk_differs_by_host_and_moves_but_repeats_for_the_same_time() {
        let w = HollowLoad::new(Pattern::Walk, 4);
        let at = |h: &str, t: f64| w.sample(h, t).get(LoadIndex::Ut).unwrap_or(-1.0);
        assert_eq!(at("h1", 100.0), at("h1", 100.0));
        let values: Vec<f64> = (0..50).map(|k| at("h1", f64::from(k) * 5.0)).collect();
        assert!(values.windows(2).any(|p| p[0] != p[1]), "{values:?}");
        assert!(values.iter().all(|v| (0.0..=1.0).contains(v)));
        let hosts: Vec<f64> = (0..20).map(|i| at(&format!("h{i}"), 100.0)).collect();
        assert!(hosts.windows(2).any(|p| p[0] != p[1]), "{hosts:?}");
    }
}
