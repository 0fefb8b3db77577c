//! Dev-only harness for cluster tests.
//!
//! Every test cluster gets a fresh `127.a.b.0/24` ([`fresh_subnet`]) so tests
//! run in parallel (threads or processes) with the same ports, and a fresh
//! directory holding the embedded default configuration
//! (`basalt_config::embedded`), per-host logs and state. The directory is
//! removed when the test passes and kept (its path printed) when it fails.
//!
//! Two modes:
//! * [`ProcessCluster`] runs the real binaries (`lim`, `sbatchd`, which starts
//!   `mbatchd`, the commands) as child processes: for kill -9, SIGSTOP, restarts of a
//!   process, network namespaces.
//! * [`InProcessCluster`] runs each host's daemons as tasks in the test's own
//!   tokio runtime, bound to the host's loopback address: LIMs, and with the `batch`
//!   feature sbatchd on every host and mbatchd on the master
//!   (`InProcessCluster::start_batch`; `InProcessBatch` for a plain `#[test]`). Jobs
//!   still run under real job supervisors (the built `sbatchd --job-supervisor`).
//!
//! Either is driven with the real commands through [`Commands`]; [`jobs`] has the
//! shared job-table helpers. Every wait has a deadline: [`wait_for`] polls a
//! condition until it holds or fails with what it was waiting for; [`holds_for`]
//! checks that one keeps holding. A test that skips itself says so with [`skip`].
//!
//! Modules: `acct` (lsb.acct's finishes, the exactly-once check), `subnet` (loopback /24s), `dirs` (test directories), `config` (cluster
//! spec and configuration files), `wait`, `commands`, `jobs`, `text` (output and
//! event-log fields), `process` ([`ProcessCluster`]), `inprocess` (its LIMs),
//! `batch` (its sbatchd and mbatchd), `netns` (network-namespace labs),
//! `multicluster` (linked clusters: [`ProcessCluster::start_multicluster`], [`McMember`]),
//! `selfrun` (daemons and commands a test runs on its own schedule: [`HostDaemons`],
//! [`CommandsAt`]).

pub mod acct;
#[cfg(feature = "batch")]
mod batch;
pub mod capi;
mod commands;
mod config;
mod dirs;
mod inprocess;
pub mod jobs;
pub mod multicluster;
pub mod netns;
mod process;
pub mod procs;
mod selfrun;
mod subnet;
mod text;
mod wait;

#[cfg(feature = "batch")]
pub use batch::{InProcessBatch, InProcessCommands};
pub use commands::Commands;
pub use config::{ClusterSpec, hollow_name, host_name, write_config, write_config_at};
pub use dirs::TestDir;
pub use inprocess::InProcessCluster;
pub use jobs::{is_root, skip, work_dir};
pub use multicluster::{MC_KEY_FILE, MC_POLL_MS, McMember, write_multicluster_at};
pub use process::{HOLLOW_PROCESSES, ProcessCluster, bin_dir, kill_leftovers, wait_child};
pub use selfrun::{CommandsAt, HostDaemons};
pub use subnet::{Subnet, fresh_subnet};
pub use text::{event_fields, output_text};
pub use wait::{holds_for, wait_for, wait_for_async};
