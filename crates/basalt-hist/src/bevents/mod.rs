//! `bevents`: the operator's tool for the event log, working on the files alone (no
//! daemon is asked, nothing is written).
//!
//! * `bevents verify [--json] [LOGFILE ... | -d LOGDIR]`: checks the header line, that
//!   every record parses, and whether the file ends with an incomplete record (a torn
//!   write); each damaged record is reported with its file, line and byte offset. With
//!   `-d` (or the configuration's log directory) every `lsb.events*` and `lsb.acct*`
//!   file is checked, and `lsb.events.index` against them. Exit 0 when clean, 1 when a
//!   problem was found.
//! * `bevents json [--type T,...] [--job ID,...] [LOGFILE ... | -d LOGDIR]`: the records
//!   as JSON lines (file, line, offset, type, version, time, job id, array index, and the
//!   record's fields in order), oldest file first; the records a log switch carried over
//!   into `lsb.events` are marked `"carried": true`.
//! * `bevents replay [-l] [--json] [--until TIME] [-d LOGDIR]`: applies the records
//!   through the same path mbatchd uses on start ([`basalt_records::from_record`]
//!   and [`basalt_sched::Sched::replay`]) and prints the resulting state: jobs per state
//!   and per queue, the next job id, the epoch, closed queues and hosts, and with `-l` one
//!   line per job. Without `--until` it reads the current `lsb.events` as mbatchd does;
//!   with `--until TIME` it stops at the first record after TIME, reading the older files
//!   too when TIME is before the last log switch. TIME is seconds since the epoch or
//!   `[[yyyy/]mm/dd/]HH:MM` (local time; the latest such moment not in the future).
//!
//! The scheduler's configuration comes from the cluster's when `LSF_ENVDIR` is set, else
//! from Basalt's embedded default configuration with every queue and host the log names.
//!
//! Inputs: argv, `LSF_ENVDIR`, the log files. Outputs: stdout (the report), stderr
//! (problems), exit codes 0 (clean), 1 (problems found), 255 (usage or I/O errors).

use basalt_cli::batch::timefmt;
use basalt_eventlog::{Field, Record};
use basalt_sched::{Sched, SchedConfig};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// bevents' usage text.
pub const USAGE: &str = "Usage: bevents [-h] [-V]
       bevents verify [--json] [LOGFILE ... | -d LOGDIR]
       bevents json [--type TYPE[,TYPE...]] [--job ID[,ID...]] [LOGFILE ... | -d LOGDIR]
       bevents replay [-l] [--json] [--until TIME] [-d LOGDIR]
  TIME: seconds since the epoch, or [[yyyy/]mm/dd/]HH:MM
";

/// Exit code: problems found.
const PROBLEMS: u8 = 1;

mod args;
mod cmd;
mod dump;
mod lines;
mod replay;
mod summary;
mod verify;

pub use args::*;
pub use cmd::*;
pub use dump::*;
pub use lines::*;
pub use replay::*;
pub use summary::*;
pub use verify::*;

#[cfg(test)]
mod tests;
