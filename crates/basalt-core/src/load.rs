//! LSF load indices and static host information.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The 11 built-in LSF load indices, in LSF's order (the order `lsload -l` prints them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LoadIndex {
    R15s,
    R1m,
    R15m,
    Ut,
    Pg,
    Io,
    Ls,
    It,
    Tmp,
    Swp,
    Mem,
}

/// All built-in indices in LSF order.
pub const BUILTIN_INDICES: [LoadIndex; 11] = [
    LoadIndex::R15s,
    LoadIndex::R1m,
    LoadIndex::R15m,
    LoadIndex::Ut,
    LoadIndex::Pg,
    LoadIndex::Io,
    LoadIndex::Ls,
    LoadIndex::It,
    LoadIndex::Tmp,
    LoadIndex::Swp,
    LoadIndex::Mem,
];

impl LoadIndex {
    /// Position in [`BUILTIN_INDICES`] (LSF's index number).
    pub fn position(self) -> usize {
        self as usize
    }

    /// The LSF name (`r15s`, `mem`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LoadIndex::R15s => "r15s",
            LoadIndex::R1m => "r1m",
            LoadIndex::R15m => "r15m",
            LoadIndex::Ut => "ut",
            LoadIndex::Pg => "pg",
            LoadIndex::Io => "io",
            LoadIndex::Ls => "ls",
            LoadIndex::It => "it",
            LoadIndex::Tmp => "tmp",
            LoadIndex::Swp => "swp",
            LoadIndex::Mem => "mem",
        }
    }

    /// Parse an LSF index name (case-insensitive). LSF also accepts `swap` for `swp`.
    pub fn from_name(name: &str) -> Option<LoadIndex> {
        let lower = name.to_ascii_lowercase();
        BUILTIN_INDICES
            .iter()
            .copied()
            .find(|i| i.name() == lower)
            .or(if lower == "swap" {
                Some(LoadIndex::Swp)
            } else {
                None
            })
    }

    /// True when a larger value means a more loaded host (r15s, r1m, r15m, ut,
    /// pg, io, ls); false for it, tmp, swp and mem, where less means busier.
    pub fn increasing(self) -> bool {
        !matches!(
            self,
            LoadIndex::It | LoadIndex::Tmp | LoadIndex::Swp | LoadIndex::Mem
        )
    }

    /// True for the three run-queue indices, which LSF normalises.
    pub fn is_run_queue(self) -> bool {
        matches!(self, LoadIndex::R15s | LoadIndex::R1m | LoadIndex::R15m)
    }

    /// LSF's description of the index (as `lsinfo` prints it).
    pub fn description(self) -> &'static str {
        match self {
            LoadIndex::R15s => "15-second CPU run queue length",
            LoadIndex::R1m => "1-minute CPU run queue length (alias: cpu)",
            LoadIndex::R15m => "15-minute CPU run queue length",
            LoadIndex::Ut => "1-minute CPU utilization (0.0 to 1.0)",
            LoadIndex::Pg => "Paging rate (pages/second)",
            LoadIndex::Io => "Disk IO rate (Kbytes/second)",
            LoadIndex::Ls => "Number of login sessions (alias: login)",
            LoadIndex::It => "Idle time (minutes) (alias: idle)",
            LoadIndex::Tmp => "Disk space in /tmp (Mbytes)",
            LoadIndex::Swp => "Available swap space (Mbytes) (alias: swap)",
            LoadIndex::Mem => "Available memory (Mbytes)",
        }
    }

    /// The unit `lsinfo` shows in its INTERVAL/unit columns.
    pub fn sample_interval_secs(self) -> u32 {
        match self {
            LoadIndex::R15s => 15,
            LoadIndex::R1m | LoadIndex::Ut | LoadIndex::Pg | LoadIndex::Io => 15,
            LoadIndex::R15m => 15,
            LoadIndex::Ls | LoadIndex::It => 30,
            LoadIndex::Tmp | LoadIndex::Swp | LoadIndex::Mem => 15,
        }
    }
}

impl fmt::Display for LoadIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One host's load: the built-in indices (each may be unknown) plus external
/// indices reported by ELIMs, keyed by resource name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadVector {
    pub builtin: [Option<f64>; 11],
    pub external: BTreeMap<String, f64>,
}

impl LoadVector {
    pub fn get(&self, index: LoadIndex) -> Option<f64> {
        self.builtin[index.position()]
    }

    pub fn set(&mut self, index: LoadIndex, value: f64) {
        self.builtin[index.position()] = Some(value);
    }

    /// Look an index up by name: a built-in name or an external resource.
    pub fn get_by_name(&self, name: &str) -> Option<f64> {
        match LoadIndex::from_name(name) {
            Some(i) => self.get(i),
            None => self.external.get(name).copied(),
        }
    }

    /// Apply values reported by an ELIM: built-in names override the sampled
    /// value, other names become external indices.
    pub fn apply_overrides<'a>(&mut self, values: impl IntoIterator<Item = (&'a str, f64)>) {
        for (name, value) in values {
            match LoadIndex::from_name(name) {
                Some(i) => self.set(i, value),
                None => {
                    self.external.insert(name.to_owned(), value);
                }
            }
        }
    }
}

/// Static information about a host, as `lshosts` shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub name: String,
    pub host_type: String,
    pub model: String,
    pub cpu_factor: f64,
    pub ncpus: u32,
    /// Total memory in MB (0 = unknown).
    pub max_mem_mb: u64,
    /// Total swap in MB (0 = none/unknown).
    pub max_swp_mb: u64,
    /// Size of /tmp in MB (0 = unknown).
    pub max_tmp_mb: u64,
    pub server: bool,
    pub resources: Vec<String>,
}

/// LSF's normalised run-queue length (`lsload -N`), from
/// `openlava:lsf/lim/lim.load.c normalizeRq`.
pub fn normalized_run_queue(raw: f64, ncpus: u32, cpu_factor: f64) -> f64 {
    let cpuf = if cpu_factor > 0.0 { cpu_factor } else { 1.0 };
    if ncpus < 1 {
        return ((raw + 1.0) / cpuf).max(0.0);
    }
    let n = f64::from(ncpus);
    let q = (raw / n).floor();
    let k1 = (raw - n * q) / n;
    let slope = 1.0 - 1.0 / n;
    let k2 = k1.min(0.9).min(slope);
    let f = if (1.0 - k2).abs() < f64::EPSILON {
        0.0
    } else {
        slope.min(0.9) * (1.0 - k1) / (1.0 - k2)
    };
    ((f * q + (1.0 - f) * raw / n + 1.0) / cpuf).max(0.0)
}

/// LSF's effective run-queue length (`lsload -E`): the normalised value
/// scaled back by the CPU factor, minus the one added for the running process.
/// For one CPU it equals the raw value.
pub fn effective_run_queue(raw: f64, ncpus: u32, cpu_factor: f64) -> f64 {
    let cpuf = if cpu_factor > 0.0 { cpu_factor } else { 1.0 };
    (normalized_run_queue(raw, ncpus, cpu_factor) * cpuf - 1.0).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for i in BUILTIN_INDICES {
            assert_eq!(LoadIndex::from_name(i.name()), Some(i));
        }
        assert_eq!(LoadIndex::from_name("SWAP"), Some(LoadIndex::Swp));
        assert_eq!(LoadIndex::from_name("gpu"), None);
    }

    #[test]
    fn one_cpu_effective_equals_raw() {
        for raw in [0.0, 0.5, 1.0, 2.7] {
            let e = effective_run_queue(raw, 1, 1.0);
            assert!((e - raw).abs() < 1e-9, "raw {raw} gave {e}");
        }
    }

    #[test]
    fn two_busy_loops_on_two_cpus_are_about_one() {
        // daemon-behaviour.md §2: raw ≈ 2.1 on 2 CPUs gives effective ≈ 1.0.
        let e = effective_run_queue(2.1, 2, 1.0);
        assert!((0.9..=1.2).contains(&e), "effective {e}");
    }

    #[test]
    fn overrides_replace_builtins_and_add_externals() {
        let mut v = LoadVector::default();
        v.set(LoadIndex::R1m, 0.1);
        v.apply_overrides([("r1m", 7.5), ("gpu_util", 42.0)]);
        assert_eq!(v.get(LoadIndex::R1m), Some(7.5));
        assert_eq!(v.get_by_name("gpu_util"), Some(42.0));
    }
}
