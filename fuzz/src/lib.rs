//! The checks run by the cargo-fuzz targets of `fuzz/` (`fuzz_targets/*.rs`, nightly
//! only). Each module is self-contained (it names only `std` and the Basalt crate it
//! checks), so that a stable test in the crate that owns the parser includes the same
//! file with `#[path]` and runs exactly the same entry points over the seeds, the
//! regressions and deterministic mutations of them:
//!
//! | module | targets | stable test |
//! |---|---|---|
//! | [`eventlog`] | `eventlog_line`, `eventlog_file` | `crates/basalt-eventlog/tests/reader_fuzz.rs` |
//! | [`config`] | `config_files` | `crates/basalt-config/tests/config_fuzz.rs` |
//! | [`resreq`] | `resreq` | `crates/basalt-cli/tests/resreq_fuzz.rs` |
//! | `bsub` (feature `cli`) | `bsub_script` | `crates/basalt-cli/tests/bsub_fuzz.rs` |
//! | `mbatchd` (feature `daemon`) | `mbatchd_requests` | `crates/basalt-mbatchd/tests/hostile_requests.rs` |
//!
//! [`mutate`] is the stable tests' fixed-seed mutator (libFuzzer has its own).
//!
//! **Inputs**: arbitrary bytes. **Outputs**: nothing; a check panics (an assertion) when
//! the code under test panics or breaks one of the properties its module lists. Errors
//! returned by the parsers are expected and fine.

#[cfg(feature = "cli")]
pub mod bsub;
pub mod config;
#[cfg(feature = "daemon")]
pub mod mbatchd;
pub mod eventlog;
pub mod mutate;
pub mod resreq;

pub use eventlog::{check_files, check_line};

/// bsub's `-R` merging, which lives in basalt-config (the stable test names
/// `basalt_cli::batch::resreq`, its re-export, instead).
use basalt_config::resreq as cli_resreq;
