//! Output of the LIM-level commands: `lsid`, `lsload`, `lshosts`,
//! `lsclusters`, `lsinfo` (cli-output.md §6).

use crate::lim_res::{self, HostValues, SharedInstance, SharedKind};
use crate::numfmt::{fit, left_cut, mem_mb, right, right_cut};
use basalt_config::{Config, ResourceKind};
use basalt_core::{LoadIndex, effective_run_queue, normalized_run_queue};
use basalt_proto::lim::{ClusterInfoReply, HostRecord, HostStatus, HostsReply};
use serde_json::{Map, Value, json};

mod host_values;
mod lsclusters;
mod lshosts;
mod lshosts_long;
mod lsid;
mod lsinfo;
mod lsload;

pub use host_values::*;
pub use lsclusters::*;
pub use lshosts::*;
pub use lshosts_long::*;
pub use lsid::*;
pub use lsinfo::*;
pub use lsload::*;

#[cfg(test)]
mod tests;
