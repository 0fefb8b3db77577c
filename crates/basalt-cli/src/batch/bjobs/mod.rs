//! `bjobs`: job listings — default and `-w` tables (cli-output.md §3.1–3.2), pending
//! and suspending reasons (`-p`, `-s`, §3.3), the long format (`-l`, §3.4), custom
//! columns (`-o`, cli-contract.md §4.3), JSON (`-json`, §4.4), the job-array summary
//! (`-A`, §3.1) and the job-slot summary (`-sum`, LSF 10.1); messages and exit codes of
//! cli-contract.md §6.
//!
//! Repeated execution hosts are shown as `N*host` (LSF 10's short host lists, which
//! clients expect) unless lsf.conf sets `LSB_SHORT_HOSTLIST=0`/`N`; then every slot's
//! host is listed (one per line in the default table). `LSB_BJOBS_FORMAT` supplies a
//! default `-o`; `LSB_BJOBS_CONSISTENT_EXIT_CODE=Y` makes "no job" exit 255.
//!
//! MultiCluster (LSF's job forwarding model): a job forwarded to another cluster runs on
//! hosts shown as `host@cluster`; `-l` says where and when it was forwarded, its job ID
//! there and how often it came back without starting. A job forwarded here from another
//! cluster shows its submission host as `host@cluster` and, with `-l`, its cluster and
//! job ID there. `-o` has LSF's `forward_cluster forward_time srcjobid dstjobid
//! source_cluster`; `-sum` counts forwarded pending jobs as `FWD_PEND`.

use super::opts::{Item, Spec};
use super::text::{col, host_words, star_cut, wrap};
use super::timefmt::{self, ToTm};
use super::{job_id_str, job_ref_str, state_name, state_of};
use basalt_core::job::{
    JobState, pend_reason_is_host, pend_reason_text, status, sub, sub2, susp_reason_text,
};
use basalt_proto::mbatchd::{
    BatchHostInfo, HostsRequest, JobInfo, JobRef, JobsRequest, PendReason, QueueInfo, QueuesRequest,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;

/// bjobs's usage text.
pub const USAGE: &str = "Usage: bjobs [-h] [-V] [-w | -l] [-A] [-a] [-d] [-p] [-r] [-s] [-sum]
             [-u user_name | -u all] [-q queue_name] [-m host_name] [-J job_name]
             [-o \"field[:[-]width] ... [delimiter='c']\"] [-noheader] [-json]
             [job_ID | \"job_ID[index]\" ...]
";

const SPEC: Spec = Spec {
    flags: &[
        "h", "V", "A", "a", "d", "p", "r", "s", "l", "w", "noheader", "json", "sum",
    ],
    valued: &["u", "q", "m", "J", "o"],
};

/// The header of the default and `-w` tables.
pub const HEADER: &str =
    "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME";

/// What to show and how.
#[derive(Debug, Clone, Copy)]
pub struct Fx {
    /// Seconds -> broken-down time (local for the command, UTC in tests).
    pub tm: ToTm,
    /// Group repeated hosts as `N*host`.
    pub short_hosts: bool,
    /// Now, for run times.
    pub now: i64,
}

fn is_pending(j: &JobInfo) -> bool {
    state_of(j).is_some_and(JobState::is_pending)
}

fn is_finished(j: &JobInfo) -> bool {
    state_of(j).is_some_and(JobState::is_finished)
}

fn is_suspended(j: &JobInfo) -> bool {
    matches!(
        state_of(j),
        Some(JobState::Ssusp | JobState::Ususp | JobState::Psusp)
    )
}

/// The host a job was submitted from; `host@cluster` for a job forwarded here from
/// another cluster.
pub fn from_host_name(j: &JobInfo) -> String {
    if j.source_cluster.is_empty() {
        j.from_host.clone()
    } else {
        format!("{}@{}", j.from_host, j.source_cluster)
    }
}

/// Is `host` one of another cluster's (`host@cluster`, a forwarded job's)?
pub fn is_remote_host(host: &str) -> bool {
    host.contains('@')
}

fn table_time(t: i64, fx: &Fx) -> String {
    if t > 0 {
        timefmt::table(&(fx.tm)(t))
    } else {
        String::new()
    }
}

fn event_time(t: i64, fx: &Fx) -> String {
    timefmt::event(&(fx.tm)(t))
}

/// A spooled script's command as one line: its lines joined by `;`.
pub fn display_command(cmd: &str) -> String {
    basalt_core::job::one_line_command(cmd)
}

mod args;
mod array;
mod cmd;
mod custom;
mod json_sum;
mod long;
mod table;

pub use args::*;
pub use array::*;
pub use cmd::*;
pub use custom::*;
pub use json_sum::*;
pub use long::*;
pub use table::*;

#[cfg(test)]
mod tests;
