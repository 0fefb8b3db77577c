//! `bhist` and `bacct`: job history and accounting read straight from the event log
//! files, as LSF's commands do (cli-output.md §8, cli-contract.md rows 29/30).
//!
//! * [`history`] turns `lsb.events` records into one [`history::JobHistory`] per job (or
//!   array element) and computes the time spent in each state.
//! * [`bhist`] formats histories: the default summary table, `-l`/`-b` long formats.
//! * [`bacct`] formats `lsb.acct` `JOB_FINISH` records: the summary and `-l`.
//! * [`store`] is the history index (SQLite: job id, user, queue, finish time → file
//!   and byte offset), [`fast`] reads through it, giving the same records and warnings
//!   as reading the files line by line.
//! * [`bevents`] is the operator's tool: verify, dump and replay the event log.
//!
//! This crate (the commands' library; the binaries are `src/bin/{bhist,bacct,bevents}.rs`)
//! holds what they share: which files and which parts of them are read
//! ([`plan`], [`Part`]), how (line by line: [`read_plan`], [`read_event_records`],
//! [`read_finish_records`]; or through the indexes: [`read_history`], which also uses
//! `lsb.events.index` to leave out old files that hold none of the jobs asked for), and
//! the text pieces of the long formats (job header, submission line, dispatch line)
//! built on the same wrapping and time formats as `bjobs -l` ([`basalt_cli::batch::text`],
//! [`basalt_cli::batch::timefmt`]). The output never depends on whether an index was used.
//!
//! Inputs: `LSF_ENVDIR` (to find `LSB_SHAREDIR/<cluster>/logdir`), argv, the log files,
//! `BASALT_HIST_INDEX` ([`store`]). Outputs: stdout (the report), stderr (`No matching
//! job found`, unreadable lines), LSF's exit codes (0, or 255 when nothing matched); the
//! history index database (a cache).

pub mod bacct;
pub mod bevents;
pub mod bhist;
pub mod fast;
pub mod history;
pub mod store;

use basalt_cli::batch::bjobs::display_command;
use basalt_cli::batch::text::{host_words, wrap};
use basalt_cli::batch::timefmt::{self, ToTm};
use basalt_core::job::{sub, sub2};
use basalt_eventlog::{EventLogError, JobFinish, JobNew, Record};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, BufRead as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What both commands print when no job matched (on stderr, exit 255).
pub const NO_MATCH: &str = "No matching job found";

/// A line of 78 dashes: the separator between jobs.
pub fn dashes() -> String {
    "-".repeat(78)
}

/// How times and host lists are shown.
#[derive(Debug, Clone, Copy)]
pub struct Fx {
    /// Seconds -> broken-down time (local for the commands, UTC in tests).
    pub tm: ToTm,
    /// Now: unfinished jobs are accounted up to this time.
    pub now: i64,
    /// Group repeated hosts as `N*host` (`LSB_SHORT_HOSTLIST`, on unless set to N).
    pub short_hosts: bool,
}

impl Fx {
    /// `Sun Nov 22 09:25:35`.
    pub fn event_time(&self, t: i64) -> String {
        timefmt::event(&(self.tm)(t))
    }

    /// `Nov 22 09:25`.
    pub fn table_time(&self, t: i64) -> String {
        timefmt::table(&(self.tm)(t))
    }
}

mod files;
mod ids;
mod text;

pub use files::*;
pub use ids::*;
pub use text::*;

#[cfg(test)]
mod tests;
