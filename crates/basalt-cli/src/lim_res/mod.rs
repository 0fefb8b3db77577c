//! Resource requirements and shared resources for the host commands.
//!
//! * `lsload -R res_req` and `lshosts -R res_req` keep the hosts whose values satisfy the
//!   select part of `res_req` ([`Select`]): `select[...]` sections and text outside any
//!   section, ANDed, in LSF's expression language (daemon-behaviour.md §7), parsed and
//!   decided by `basalt_config::select` (shared with the scheduler). Run-queue lengths
//!   are compared as effective values, as LSF schedules on them. `order[]`, `rusage[]`
//!   and the other sections are accepted and do not filter.
//! * `lsload -s`, `lshosts -s` and `bhosts -s` list the shared resources of the
//!   ResourceMap section of `lsf.cluster.<cluster>` ([`shared_instances`]) in LSF's
//!   layouts ([`shared_table`], [`batch_shared_table`]).

use basalt_config::ResourceKind;

mod shared;

pub use basalt_config::select::*;
pub use shared::*;

#[cfg(test)]
pub(crate) mod tests;
