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

/// A key under which names of the same host ([`same_host`]) meet: the lower-case short
/// name. Two names with equal keys may still differ (`a.x.org`, `a.y.org`): a table
/// looks a name up by its key, then compares with [`same_host`].
pub fn host_key(name: &str) -> String {
    name.split('.').next().unwrap_or(name).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_same_host_share_a_key() {
        for (a, b) in [("hostA", "HOSTA"), ("hostA", "hostA.example.org")] {
            assert!(same_host(a, b));
            assert_eq!(host_key(a), host_key(b));
        }
        assert_ne!(host_key("hostA"), host_key("hostB"));
    }

    #[test]
    fn host_name_comparison() {
        assert!(same_host("hostA", "HOSTA"));
        assert!(same_host("hostA", "hostA.example.org"));
        assert!(!same_host("hostA.a.org", "hostA.b.org"));
        assert!(!same_host("hostA", "hostB"));
    }
}
