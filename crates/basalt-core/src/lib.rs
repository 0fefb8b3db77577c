//! Basalt's domain types, shared by every crate: the LSF load indices and load
//! vectors, static host information, run-queue normalisation, and the product
//! version strings.
//!
//! Inputs: none (pure values). Outputs: types and pure functions. This crate
//! performs no I/O, starts no threads and depends on nothing async, so the
//! deterministic cores (`basalt-sched`, `basalt-lim-core`) can use it.

pub mod bounds;
pub mod clock;
pub mod job;
pub mod jobfile;
pub mod load;
pub mod rlimit;
pub mod version;

pub use load::{
    BUILTIN_INDICES, HostInfo, LoadIndex, LoadVector, effective_run_queue, normalized_run_queue,
};

/// Compare host names the way LSF does after canonicalisation: case-insensitive,
/// and a short name matches its fully qualified form (`hostA` == `hostA.example.org`).
pub fn same_host(a: &str, b: &str) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    // Only fall back to short-name comparison when at least one side is unqualified.
    fn short(s: &str) -> &str {
        s.split('.').next().unwrap_or(s)
    }
    (!a.contains('.') || !b.contains('.')) && short(a).eq_ignore_ascii_case(short(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_name_comparison() {
        assert!(same_host("hostA", "HOSTA"));
        assert!(same_host("hostA", "hostA.example.org"));
        assert!(!same_host("hostA.a.org", "hostA.b.org"));
        assert!(!same_host("hostA", "hostB"));
    }
}
