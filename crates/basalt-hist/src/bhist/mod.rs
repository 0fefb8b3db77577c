//! `bhist`: the history of jobs, read from `lsb.events` (cli-output.md §8).
//!
//! * default: `Summary of time in seconds spent in various states:` and one row per job
//!   (`%-7.7s %-7.7s %-9.9s %-8.0f…%-10.0f`, the job name cut to 8 with `*`; `-w`
//!   whole);
//! * `-l` (and `-b`, without the submission details): per job a header, one line per
//!   history record (`bmod`'s changes: `Parameters of Job are changed:` and one indented
//!   line per change), and `Summary of time in seconds spent in various states by  <time>`;
//!   jobs separated by 78 dashes.
//!
//! Jobs: the caller's unfinished ones by default; `-a` all, `-d` finished, `-e` exited,
//! `-p` pending, `-r` running, `-s` suspended; `-u user|all`, `-q`, `-m`, `-J`, `-P`;
//! job ids select those jobs whatever their owner and state. Files: `lsb.events` by
//! default, every `lsb.events.N` too when job ids are given, `-n N` the newest N
//! (0 = all), `-f file` one file.

use super::history::{self, JobHistory, StateTimes, base_state};
use super::{EventSource, Fx, Header, IdSel, NO_MATCH, Want, dashes, dispatch_text, event_line};
use basalt_cli::batch::opts::{Item, Spec};
use basalt_cli::batch::text::{star_cut, wildcard_match};
use basalt_core::job::{exit_reason, pend_reason_text, status, susp, susp_reason_text};
use basalt_eventlog::Record;
use std::fmt::Write as _;
use std::process::ExitCode;

/// bhist's usage text.
pub const USAGE: &str = "Usage: bhist [-h] [-V] [-l | -b | -w] [-a] [-d] [-e] [-p] [-r] [-s]
             [-f logfile_name | -n num_logfiles]
             [-q queue_name] [-m host_name] [-J job_name] [-P project_name]
             [-u user_name | -u all] [job_ID | \"job_ID[index]\" ...]
";

const SPEC: Spec = Spec {
    flags: &["h", "V", "a", "d", "e", "p", "r", "s", "l", "b", "w"],
    valued: &["u", "q", "m", "J", "P", "n", "f"],
};

/// The header of the default table.
pub const TABLE_HEADER: &str =
    "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL";

mod cmd;
mod long;
mod modify;
mod select;
mod table;

pub use cmd::*;
pub use long::*;
pub use modify::*;
pub use select::*;
pub use table::*;

#[cfg(test)]
mod tests;
