//! The job resource limits in LSF's `LSF_RLIMIT_*` order: the one table of their
//! positions in a job's `rlimits` (bsub's options, the submission, the event log's
//! `rLimits[]`, the queue limits, sbatchd's enforcement). Values are `-1` when
//! unlimited; CPU and RUN in seconds, sizes in KB, PROCESS a count.

pub const CPU: usize = 0;
pub const FSIZE: usize = 1;
pub const DATA: usize = 2;
pub const STACK: usize = 3;
pub const CORE: usize = 4;
pub const RSS: usize = 5;
pub const NOFILE: usize = 6;
pub const OPEN_MAX: usize = 7;
/// VMEM.
pub const SWAP: usize = 8;
pub const RUN: usize = 9;
pub const PROCESS: usize = 10;
/// Number of limits in a job's `rlimits`.
pub const COUNT: usize = 11;
